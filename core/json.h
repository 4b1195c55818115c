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

/*
 * Write `n` rows of `width` fields as the array json_rows() reads:
 * field(arg, i, j) is row i's j-th string (UTF-8; NULL: null).  Appended
 * to b (a struct buf); 0 or -ENOMEM.
 */
struct buf;
int json_rows_write(struct buf *b, size_t n, size_t width,
		    const char *(*field)(const void *arg, size_t i, size_t j),
		    const void *arg);

/*
 * The pieces of a JSON string both readers share (this one and export's
 * of export.json).  json_unicode: the escape at *p, just after its "\u"
 * (`end` bounds the text), as a code point in *cp, a UTF-16 surrogate
 * pair taken whole; *p moved past it.  0, or why not (nothing moved).
 * json_utf8: code point `cp` as UTF-8 into s; its length.
 */
enum { JSON_BAD_HEX = 1, JSON_LONE_SURROGATE, JSON_NUL };
int json_unicode(const char **p, const char *end, unsigned *cp);
size_t json_utf8(char s[4], unsigned long cp);

#endif
