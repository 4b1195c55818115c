/*
 * options.h - the table options a factory declares, read from its bytecode.
 *
 * Flink checks a table's WITH options against what the factory's
 * requiredOptions(), optionalOptions() and forwardOptions() return, but
 * only when a job is submitted.  This module finds those sets without
 * running the code, so resolution can check them first (resolve.h).
 *
 * How.  Each of the three methods is interpreted over a symbolic stack:
 * collections built with new HashSet/add/addAll, Set.of, Arrays.asList,
 * Stream.of(...).collect, Collections.* and the same method of a
 * superclass (super.optionalOptions()) give a set of options; a branch, a
 * loop, or a set handed to or taken from any other code makes the set
 * "unknown": what the bytecode shows is kept, but nothing may be refused
 * on it.  An option is a static field of type ConfigOption, resolved
 * through the putstatic that sets it in its class's static initializer
 * (ConfigOptions.key("k").intType().defaultValue(3).withFallbackKeys(..)
 * chains, aliases of other fields), across the JAR's classes, and for
 * Flink's own holders (FactoryUtil, LookupOptions ...) through a table of
 * their constants.  enumType(E)'s values are E's constants as toString()
 * shows them (the name, or a String the constructor stores and toString
 * returns), the form Flink matches case-insensitively.
 *
 * Pure: no I/O, no global state; reentrant.
 */
#ifndef CMFS_OPTIONS_H
#define CMFS_OPTIONS_H

#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "reach.h"

/* One option a factory declares. */
struct options_option {
	char *key;
	char *type;	  /* "string", "int", "long", "boolean", "double",
			   * "float", "duration", "memory", "enum", "map",
			   * "char" (built-in formats' one-character
			   * strings), or "?" when the bytecode does not
			   * show it */
	int list;	  /* asList(): a ;-separated list of the type */
	char *values;	  /* enum: its constants, comma-separated; NULL =
			   * not known (any value passes) */
	char *defval;	  /* the default as text; NULL = none */
	char *deprecated; /* deprecated keys, comma-separated, or NULL */
	char *fallback;	  /* fallback keys, comma-separated, or NULL */
	int required;	  /* from requiredOptions(), else optional */
	int forward;	  /* also in forwardOptions() */
};

/* Which sets the bytecode does not show whole. */
enum {
	OPTIONS_UNKNOWN_REQUIRED = 1,
	OPTIONS_UNKNOWN_OPTIONAL = 2,
	OPTIONS_UNKNOWN_PREFIXES = 4, /* validateExcept's argument */
	/* A connector whose code calls none of FactoryUtil's checks
	 * (helper.validate(), validateExcept(), validateFactoryOptions()):
	 * Flink checks none of its options, and neither does cmfs. */
	OPTIONS_UNVALIDATED = 8
};

/* The options of one factory. */
struct options_set {
	struct options_option *v; /* sorted by key, unique */
	size_t n;
	unsigned unknown; /* OPTIONS_UNKNOWN_* */
	/* Key prefixes the factory lets through unchecked (the strings it
	 * gives FactoryUtil's helper.validateExcept: Kafka's
	 * "properties."), comma-separated, or NULL. */
	char *prefixes;
};

/*
 * Read the options of factory class `factory` (internal name), whose
 * classes and their superclasses `lookup` gives (as for reach_run).
 * 0 and *out (release with options_set_release; zeroed on entry), with
 * what cannot be read marked unknown; -ENOMEM; or what `lookup`
 * returned.  Bytecode that does not decode is not an error here: its set
 * is unknown.
 */
int options_read(struct options_set *out, const char *factory,
		 reach_lookup_fn lookup, void *ctx, struct cmfs_err *err);

/* Free what a set holds (not the struct); a zeroed one is ok. */
void options_set_release(struct options_set *s);

/* A deep copy of `src` into *dst: 0 or -ENOMEM (dst zeroed then). */
int options_set_copy(struct options_set *dst, const struct options_set *src);

/* Append option o (copied) to s, unsorted: 0 or -ENOMEM. */
int options_set_add(struct options_set *s, const struct options_option *o);

/* 1 if comma-separated `list` (NULL: empty) holds the n bytes at s,
 * compared as bytes or (nocase) ASCII case-insensitively; else 0. */
int options_list_has(const char *list, const char *s, size_t n, int nocase);

/* Sort s by key, as options_find needs (options_set_add does not). */
void options_set_sort(struct options_set *s);

/* The option with this key in s (sorted), or NULL. */
const struct options_option *options_find(const struct options_set *s,
					  const char *key);

/*
 * The type as one word for people: "int", "list<string>",
 * "enum(a|b|c)" (values known).  0 and *out (caller frees) or -ENOMEM.
 */
int options_type_text(char **out, const struct options_option *o);

/*
 * Does `value` parse as o's type, by Flink's rules?  boolean: true or
 * false, any case; int/long: a decimal within range; double/float: a
 * number; duration: a number and an optional unit (ns, us, ms, s, min,
 * h, d, and their long forms); memory: a number and an optional unit (b,
 * k/kb/kibibytes, m/mb, g/gb, t/tb); enum: one of the values, any case;
 * char: one character, or a Java escape of one (\t, \u0009);
 * list: each ;-separated element so.  1 yes, 0 no; string, map and
 * unknown types always pass.
 */
int options_value_ok(const struct options_option *o, const char *value);

/* A format a table names, for options_check. */
struct options_format {
	const char *option; /* "format", "key.format" or "value.format" */
	const char *id;	    /* its value: the format's identifier */
	/* From its JAR; NULL: built in, so Flink 1.20's declarations
	 * (format_builtin.h) where cmfs has them, else not known. */
	const struct options_set *set;
};

/*
 * The prefix of format `id`'s options when option `option` names it, as
 * Flink's FactoryUtil makes it: "format" -> "<id>.", "value.format" ->
 * "value.<id>.", "key.format" -> "key.<id>.".  Into out[cap], truncated.
 */
void options_format_prefix(char *out, size_t cap, const char *option,
			   const char *id);

/*
 * Check table `table`'s options (n keys and values) as Flink's
 * FactoryUtil would when the job is submitted: each required option of
 * the connector (`conn`, identifier `connector`) and of the formats
 * (`fmts`, their options under their prefixes) is set; each value parses
 * as its option's type (options_value_ok); each key is an option of the
 * connector, of a format under its prefix, or under a prefix the
 * connector lets through.  A format without a set is looked up in
 * format_builtin_options().  Unknown sets refuse nothing; `conn` NULL (a
 * built-in connector) checks nothing.  0, or -EINVAL with the key, what
 * is expected and the nearest known key ("did you mean '...'?") in err.
 */
int options_check(const char *table, const char *connector,
		  const struct options_set *conn,
		  const struct options_format *fmts, size_t nfmts,
		  char *const *keys, char *const *values, size_t n,
		  struct cmfs_err *err);

/*
 * One line per option of factory `factory` (its identifier) appended to b,
 * tab-separated: identifier, "required" or "optional", key, type (as
 * options_type_text), default ("-" = none); then a "# ..." line for each
 * set the bytecode does not show whole.  0, or -ENOMEM/-EFBIG from b.
 */
int options_format(struct buf *b, const char *factory,
		   const struct options_set *s);

#endif
