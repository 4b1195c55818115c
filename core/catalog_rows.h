/*
 * catalog_rows.h - what every catalog backend writes and reads back the
 * same way: an inspection's external classes (one a line of a text), its
 * factories and their declared options, a table's definition and its
 * options, one row at a time.
 */
#ifndef CMFS_CATALOG_ROWS_H
#define CMFS_CATALOG_ROWS_H

#include "catalog.h"
#include "err.h"
#include "jar.h"
#include "options.h"

#include <stddef.h>
#include <stdint.h>

/* The newline-terminated lines of `text` into r->external: 0 or -ENOMEM. */
int catalog_rows_external(struct jar_report *r, const char *text);

/*
 * One factory (kind, identifier or NULL, class) appended to r->factories;
 * a kind this build does not know reads as JAR_KIND_OTHER.  -EINVAL when
 * kind or class is NULL (a damaged row), -ENOMEM.
 */
int catalog_rows_factory_add(struct jar_report *r, const char *kind,
			     const char *identifier, const char *cls);

/*
 * One option (key, value) appended to d's.  -EINVAL when either is NULL
 * (a damaged row), -ENOMEM.
 */
int catalog_rows_option_add(struct catalog_table_def *d, const char *key,
			    const char *value);

/*
 * Mark every factory of `r` as declaring options the catalog does not
 * know (an inspection from before they were kept, or a backend that does
 * not keep them yet): resolution then refuses nothing on its options.
 */
void catalog_rows_options_unknown(struct jar_report *r);

/*
 * Each declared option of r's factories handed to fn(arg, the factory's
 * place, role, key, o) in the rows factory_options keeps: role
 * "required" or "optional" with the option (o), "unknown" with the set
 * the bytecode does not show whole ("required", "optional", "prefixes",
 * "validation"), "prefix" with a prefix validateExcept lets through (o
 * NULL for both).  The first error of fn stops the walk and is returned.
 */
int catalog_rows_options_each(const struct jar_report *r,
			      int (*fn)(void *arg, size_t factory,
					const char *role, const char *key,
					const struct options_option *o),
			      void *arg);

/*
 * One such row read back into r: o holds the option's fields other than
 * key and required (ignored for "unknown" and "prefix").  A row naming
 * no factory of r or no role is skipped.  0 or -ENOMEM.  Once all rows
 * are in, catalog_rows_options_sort(r).
 */
int catalog_rows_option_read(struct jar_report *r, int64_t factory,
			     const char *role, const char *key,
			     const struct options_option *o);

/*
 * The sets of `unknown` (OPTIONS_UNKNOWN_*) as the names the rows use,
 * comma-separated ("required,prefixes") into `out` (n bytes), or NULL
 * when there are none: a backend that keeps them in the factory's row
 * rather than as rows of their own.
 */
const char *catalog_rows_unknown_list(unsigned unknown, char *out, size_t n);

/*
 * Such a list read back into factory `factory` of r (as its "unknown"
 * rows would be); NULL is none.  0 or -ENOMEM.
 */
int catalog_rows_unknown_read(struct jar_report *r, int64_t factory,
			      const char *list);

/* Sort each factory's options by key, as resolution searches them. */
void catalog_rows_options_sort(struct jar_report *r);

/*
 * A table's definition from its columns, its text and its LIKE sources'
 * (NULL: none), into *out with no options yet (add them with
 * catalog_rows_option_add; free with catalog_table_def_release()).  0 or
 * -ENOMEM (*out released).
 */
int catalog_rows_def(struct catalog_table_def *out, const char *ddl,
		     const char *like);

#endif
