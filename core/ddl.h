/*
 * ddl.h - the Flink SQL CREATE TABLE parser.
 *
 * A table file (tables/<t>.sql) holds exactly one Flink SQL CREATE TABLE
 * statement.  ddl_parse() reads it with a hand-written lexer and
 * recursive-descent parser into a tree that keeps the name, the columns
 * (physical, computed, metadata), the primary key, the watermark, the
 * table comment, PARTITIONED BY, DISTRIBUTED BY/INTO, USING CONNECTION
 * (Flink 2.x), the WITH options in order (a key written twice kept
 * twice: the last value is the one Flink takes) and the LIKE clause.  The
 * column list may be left out (CREATE TABLE t WITH (...)), as Flink
 * allows.  Expressions are checked for syntax and kept
 * as their source text; types are kept as canonical text (keywords upper
 * case, synonyms folded: INTEGER -> INT, ROW(...) -> ROW<...>,
 * TIMESTAMP(3) WITH LOCAL TIME ZONE -> TIMESTAMP_LTZ(3), identifiers
 * back-quoted as written).
 *
 * What Flink itself refuses is refused here, with the reason: CTAS and
 * RTAS (-EOPNOTSUPP, "not supported in the environment catalog"), a
 * PRIMARY KEY without NOT ENFORCED, two primary keys or watermarks,
 * duplicate columns, key/watermark/partition/bucket columns that do not
 * exist, TEMPORARY tables, a second statement, and
 * anything that is not CREATE TABLE; also a watermark on a column that is
 * not TIMESTAMP(p)/TIMESTAMP_LTZ(p) with p <= 3, out-of-range precisions,
 * UNIQUE constraints, and text that is not UTF-8 or holds a NUL byte.
 * Expressions are checked as Flink's schema resolver checks them: the
 * columns they name exist (a computed column may use physical and
 * metadata columns only), the functions they call are Flink's built-in
 * ones, a computed rowtime is an event-time timestamp (not PROCTIME())
 * and a watermark expression is of its rowtime's kind of timestamp
 * (TIMESTAMP(p) or TIMESTAMP_LTZ(p), p <= 3) when its type can be told.
 * A name that differs from a column's only in case is pointed out.
 * Syntax errors read "line:col: expected X, found Y" (1-based; columns
 * count characters).
 *
 * Limits: more than 1 MiB of text, more than 1024 options or 4096 columns
 * -> -EFBIG; types or expressions nested deeper than 64 -> -EINVAL.
 *
 * Names follow Flink's lexical rules: an unquoted name is made of
 * Calcite's letters and digits ('$' is a letter; an emoji or '€' needs
 * back-quotes), is not a reserved word (`default`.t, `user`: back-quoted)
 * and has at most 256 characters; fields of a ROW are unique; a partition
 * key is a physical column; OVERWRITING ALL does not exist; a column list
 * of bare names is a CTAS.
 *
 * Lenient where Flink is strict and it does not matter here: LIKE options
 * may be separated by commas (as Flink's documentation writes them) as
 * well as by blanks (as its parser wants).
 *
 * Threads: a table is a plain value; distinct tables may be used from
 * distinct threads, one table from one thread at a time.
 */
#ifndef CMFS_DDL_H
#define CMFS_DDL_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

struct ddl_table; /* opaque */

/*
 * Parse one CREATE TABLE statement of `len` bytes (need not be
 * NUL-terminated; comments and one trailing ';' allowed).  On success
 * *out is the tree, owned by the caller (ddl_table_free); on failure
 * *out is NULL and `err` says why.  -EINVAL (bad DDL), -EOPNOTSUPP (CTAS,
 * RTAS), -EFBIG (a limit), -ENOMEM.
 *
 * A table with a LIKE clause is checked only as far as it can be alone:
 * whether its key, watermark, partition and bucket columns exist is known
 * only after ddl_merge_like().
 */
int ddl_parse(struct ddl_table **out, const char *sql, size_t len,
	      struct cmfs_err *err);

/* Free a tree; NULL is a no-op. */
void ddl_table_free(struct ddl_table *t);

/*
 * Name checks for a table stored as file `<file_name>.sql` in environment
 * `env`.  The name may be `t`, `default`.`t` or `_env_<env>`.`default`.`t`
 * (CMF names the catalog of environment <env> `_env_<env>`, its database
 * `default`); any other qualifier -> -EINVAL ("qualified name ...: only
 * the environment catalog `_env_<env>`.`default` is allowed").  The table
 * name must equal `file_name` exactly (case-sensitive), else -EINVAL
 * naming both.  The same qualifier rule applies to the LIKE source.
 */
int ddl_check_name(const struct ddl_table *t, const char *env,
		   const char *file_name, struct cmfs_err *err);

/* The last part of the table's name.  Valid while `t` lives. */
const char *ddl_table_name(const struct ddl_table *t);

/* The last part of the LIKE source's name, or NULL without LIKE. */
const char *ddl_like_source(const struct ddl_table *t);

/* WITH options, in the order written (after a merge: the merged ones,
 * the source's first).  Keys and values are unquoted ('' -> ') and valid
 * while `t` lives and is not merged again. */
size_t ddl_option_count(const struct ddl_table *t);
void ddl_option(const struct ddl_table *t, size_t i, const char **key,
		const char **value);
/* The value of option `key` (exact, case-sensitive match; the last one
 * when written twice), or NULL. */
const char *ddl_option_get(const struct ddl_table *t, const char *key);

/* Column access, for callers that need the schema. */
size_t ddl_column_count(const struct ddl_table *t);
/* Name and canonical type of column i; *type is NULL for a computed
 * column.  Valid while `t` lives and is not merged again. */
void ddl_column(const struct ddl_table *t, size_t i, const char **name,
		const char **type);

/*
 * Merge the LIKE source `src` into `t` as Flink does.  Like options:
 * { INCLUDING | EXCLUDING } { ALL | CONSTRAINTS | DISTRIBUTION |
 * PARTITIONS } and { INCLUDING | EXCLUDING | OVERWRITING } { GENERATED |
 * METADATA | OPTIONS | WATERMARKS } (no OVERWRITING ALL, as in Flink's
 * grammar); default INCLUDING ALL OVERWRITING OPTIONS.
 *
 * Physical columns of `src` always come first and may not be redefined;
 * computed and metadata columns may be replaced only under OVERWRITING
 * GENERATED / METADATA; INCLUDING fails on an option key, a watermark, a
 * primary key, partitions or a distribution defined in both; EXCLUDING
 * drops the source's.  The comment stays t's.  The caller finds `src` by
 * ddl_like_source() and passes the source table as stored (itself already
 * merged); `src` may be `t` itself.
 *
 * On success t holds the merged columns, key, watermark, partitions,
 * distribution and options, needs `src` no more, and is marked merged (a
 * second merge is -EINVAL).  On failure t is unchanged.  -EINVAL with the
 * reason, -EFBIG (limits), -ENOMEM.
 */
int ddl_merge_like(struct ddl_table *t, const struct ddl_table *src,
		   struct cmfs_err *err);

/*
 * Append a canonical, deterministic dump of the tree to `out`, one item
 * per line: table, if-not-exists, each column (kind, type, metadata key,
 * virtual, comment, expression), primary key, watermark, comment,
 * partitions, distribution, options in order, LIKE source and options.
 * Control characters in names and strings are escaped (\n, \t, \xNN).
 * 0, -EFBIG or -ENOMEM (from `out`).
 */
int ddl_dump(struct buf *out, const struct ddl_table *t);

/*
 * Append the tree as one canonical CREATE TABLE statement (ending in ";\n")
 * that ddl_parse() reads back to the same tree.  A merged table is written
 * without its LIKE clause, as the whole table it now is.  0 or -errno.
 */
int ddl_format(struct buf *out, const struct ddl_table *t);

#endif
