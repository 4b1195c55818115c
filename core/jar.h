/*
 * jar.h - inspect an uploaded JAR without running it.
 *
 * For every `*.jar` upload cmfs records what a Flink cluster would find in
 * it: the factory classes named in
 * META-INF/services/org.apache.flink.table.factories.Factory (read as
 * java.util.ServiceLoader reads it), each factory's kind (connector,
 * format, other) and the identifier its factoryIdentifier() returns when
 * the bytecode makes that a constant, the classes outside the JAR that
 * Flink loads while it compiles a statement (reach.h: method level, from
 * the planner's calls), which resolution checks against `[sql]
 * class_allowlist`, and the other classes outside it that the factories'
 * classes name, which only the job's run time needs.  See DESIGN.md,
 * "Artifacts" and "Resolution".
 *
 * The archive is judged by libzip (consistency checks on, read-only),
 * which also reads and inflates its entries; the class files are read
 * with our own reader (classfile.h).  Only the service file and the classes reached from the
 * factories are inflated, every inflate is counted against caps (struct
 * jar_limits), and no size declared in the archive is trusted.
 * Inspection is reentrant: no global state.
 *
 * The run-time set, precisely: breadth-first from the factory classes,
 * through every
 * class named in a reached class's constant pool (Class constants, array
 * types reduced to their element class) and in its descriptors
 * (NameAndType, MethodType, its own fields and methods), into the classes
 * the JAR holds (`a/b/C.class` at the root; `META-INF/...` entries, such as
 * a multi-release JAR's `META-INF/versions/N/`, are never base classes).
 * Every named class the JAR does not hold is external; those the
 * compile-time reach does not load are the run-time set.  Generic
 * signatures and annotations are not followed: the JVM loads neither to
 * link the code.
 */
#ifndef CMFS_JAR_H
#define CMFS_JAR_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "options.h"

/* The entry that lists the factories. */
#define JAR_SERVICE_FILE                                                       \
	"META-INF/services/org.apache.flink.table.factories.Factory"

/*
 * A factory's kind, from its supertypes (through the JAR's own classes,
 * then by name): connector = DynamicTableSourceFactory or
 * DynamicTableSinkFactory (or a known Flink base class implementing one,
 * such as AsyncDynamicTableSinkFactory); format = DeserializationFormat-,
 * SerializationFormat-, DecodingFormat-, EncodingFormat- or FormatFactory
 * (and the file-system bulk format factories); other = anything else
 * (catalog, module ...).  Connector wins when a class is both.
 */
enum jar_kind { JAR_KIND_CONNECTOR, JAR_KIND_FORMAT, JAR_KIND_OTHER };

struct jar_factory {
	char *cls; /* binary name, dots: "a.b.C$D" */
	enum jar_kind kind;
	char *identifier; /* factoryIdentifier()'s constant; NULL = unknown */
	/* The options it declares (options.h); empty and all unknown
	 * after an inspection error. */
	struct options_set options;
};

/*
 * The inspector's version: raised whenever what an inspection finds for
 * the same bytes changes (the reach rules, the report's contents).  The
 * catalog stamps each inspection with it, and a mount inspects again, in
 * the background, every blob whose inspection an older one made (repo.h),
 * so an upgrade's findings reach JARs uploaded before it.
 * 1: class-level reach; 2: method-level compile-time reach (reach.h);
 * 3: the options each factory declares (options.h).
 */
#define JAR_INSPECTOR 3

/*
 * Caps on one inspection.  Hitting one is an inspection error (report
 * code -EFBIG), never a crash or a hang.
 */
struct jar_limits {
	size_t max_entries;	 /* entries in the archive */
	uint64_t max_entry_size; /* inflated bytes of one class file */
	uint64_t max_inflated;	 /* inflated bytes in all */
	size_t max_classes;	 /* JAR classes reached (and so read) */
	unsigned max_depth; /* supertype depth; above 1024 counts as 1024 */
	size_t max_service_size; /* bytes of the service file */
};

struct jar_report {
	/*
	 * NULL, or one line: why the JAR is not a usable factory JAR (no
	 * service file, a syntax error in it, a missing or bad class file,
	 * a cap hit ...).
	 */
	char *error;
	/* With an error: -EFBIG when a cap was hit, else -ENOEXEC. */
	int code;
	/* Entries in the archive. */
	size_t nentries;
	/* The factories in service-file order; with an error, those found
	 * before it. */
	size_t nfactories;
	struct jar_factory *factories;
	/* The external classes Flink loads while it compiles a statement
	 * that uses the factories (reach.h): what resolution checks against
	 * the allowlist.  Sorted, unique, with dots ("java.lang.String");
	 * none after an error. */
	size_t nexternal;
	char **external;
	/* The other external classes the factories' classes name, through
	 * the JAR's classes: needed only when the job runs, on the task
	 * managers.  Information, never checked; sorted, dotted.  Not kept
	 * by the catalog (NULL in a report read back). */
	size_t nruntime;
	char **runtime;
};

/* Fill `lim` with the defaults (fit for a 100 MB shaded JAR). */
void jar_limits_default(struct jar_limits *lim);

/*
 * Inspect the archive at `path`.  -EINVAL (reason in err) when it is not a
 * valid zip archive at all: not a zip, truncated, prefixed (data before the
 * first entry), inconsistent (libzip's ZIP_CHECKCONS), duplicate entry
 * names: such an upload of a *.jar is refused.  -ENOENT or -EACCES when
 * `path` cannot be opened, -ENOMEM, or -EIO when the file cannot be read.
 * Otherwise 0 and *out (free with jar_report_free), where out->error says
 * what makes it unusable as a factory JAR, if anything.  `lim` NULL = the
 * defaults.
 */
int jar_inspect(struct jar_report **out, const char *path,
		const struct jar_limits *lim, struct cmfs_err *err);

/* Same, from an open fd, read with pread from offset 0; not closed. */
int jar_inspect_fd(struct jar_report **out, int fd,
		   const struct jar_limits *lim, struct cmfs_err *err);

/* Same, from `len` bytes in memory (borrowed for the call). */
int jar_inspect_mem(struct jar_report **out, const void *data, size_t len,
		    const struct jar_limits *lim, struct cmfs_err *err);

/* Free a report; NULL is ok. */
void jar_report_free(struct jar_report *r);

/* A deep copy of `r` in *out (the caller's to jar_report_free): 0 or
 * -ENOMEM (*out NULL then). */
int jar_report_copy(struct jar_report **out, const struct jar_report *r);

/* The heap bytes `r` takes (the struct, its arrays and strings, with
 * the allocator's per-block overhead): what a cache of reports charges
 * for one. */
size_t jar_report_size(const struct jar_report *r);

/* "connector", "format", "other" (static strings). */
const char *jar_kind_name(enum jar_kind k);

/* Parse a kind name as jar_kind_name() writes it: 0 or -EINVAL. */
int jar_kind_parse(enum jar_kind *out, const char *s);

/*
 * Parse a service file's bytes as java.util.ServiceLoader does: UTF-8,
 * lines end at \n, \r or \r\n, `#` starts a comment to the end of the line,
 * whitespace around a name is trimmed, blank lines are fine; a name must be
 * a Java identifier start followed by identifier parts and dots.  A BOM, a
 * space or tab inside a name, an illegal character or malformed UTF-8 is a
 * syntax error.  Duplicates are dropped, the first order kept.  (Non-ASCII
 * letters are judged by a small table of Latin-1 and punctuation ranges,
 * not by full Unicode categories.)
 * 0 and *out = a malloc'd NULL-terminated array of malloc'd names (free
 * with jar_names_free), *n = the count (0 for a file with no names); or
 * -EINVAL with "line N: reason"; or -ENOMEM.
 */
int jar_service_parse(char ***out, size_t *n, const char *data, size_t len,
		      struct cmfs_err *err);

/* Free an array from jar_service_parse(); NULL is ok. */
void jar_names_free(char **names);

/*
 * The report for `cmfs inspect`: human-readable (json = 0) or one JSON
 * object and a newline (json = 1), appended to `out`: archive validity,
 * the factories with kind and identifier, the external classes, the
 * error, each factory's options (key, required or optional, type,
 * default; which sets are unknown).  With an `allowlist` (see jar_class_allowed) each external class
 * gets an allowed/refused verdict and the report ends with the verdict:
 * "usable", or "refused" and why.  0, or -ENOMEM/-EFBIG from `out`.
 */
int jar_report_format(struct buf *out, const struct jar_report *r,
		      const char *allowlist, int json);

/*
 * The same for a JAR that could not be inspected (not a zip archive,
 * unreadable): "FILE: not usable: MSG" and a newline, or one JSON object
 * {"file":..., "valid_zip":false, "error":...} and a newline, its strings
 * escaped (JSON by jansson; a byte that is not UTF-8 becomes U+FFFD).  0, or -ENOMEM/-EFBIG from `out`.
 */
int jar_failure_format(struct buf *out, const char *file, const char *msg,
		       int json);

/*
 * 1 if `cls` (dots) matches one pattern of the comma-separated allowlist
 * (blanks around patterns ignored; `a.b.*` matches every name starting with
 * `a.b.`, a trailing `*` any suffix; other patterns match exactly), else
 * 0.  A NULL or empty allowlist allows nothing.
 */
int jar_class_allowed(const char *cls, const char *allowlist);

/* How many of the report's external classes the allowlist refuses. */
size_t jar_report_refused(const struct jar_report *r, const char *allowlist);

#endif
