/*
 * json.h - the one JSON shape the catalog keeps in its rows: an array of
 * rows, each an array of `width` strings or nulls, as SQLite's
 * json_array() writes them (a JAR's factories, a table's options).
 */
#ifndef CMFS_JSON_H
#define CMFS_JSON_H

#include <stddef.h>

/*
 * Call fn(arg, fields) for each row of `text`, in order; fields[i] is the
 * i-th string decoded (UTF-8, NUL-terminated), or NULL for null, valid
 * only during the call.  0; -EINVAL when `text` is not such an array
 * (nothing is called for rows after the fault); -ENOMEM; or what fn
 * returned, when not 0 (the walk stops).  At most JSON_MAX_WIDTH fields.
 */
#define JSON_MAX_WIDTH 4
int json_rows(const char *text, size_t width,
	      int (*fn)(void *arg, char **fields), void *arg);

#endif
