/*
 * fuzz_ddl.c - libFuzzer target for the CREATE TABLE parser.
 *
 * Input without a NUL byte is one statement: parse it, dump it, format it
 * and parse the formatted text again (the dumps must agree, or the target
 * aborts), then merge the table with itself and dump the result.  Input
 * with a NUL byte is two statements: the LIKE source before it and the
 * derived table after it, merged and dumped.  Every path frees what it
 * made, so LeakSanitizer checks the ownership rules too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ddl.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BIG (64 * 1024 * 1024)

/* The dump of `t` as a string (caller frees), or NULL. */
static char *dump(const struct ddl_table *t)
{
	struct buf b = BUF_INIT(BIG);

	if (ddl_dump(&b, t)) {
		buf_release(&b);
		return NULL;
	}
	return buf_take(&b, NULL);
}

/*
 * ddl_format() must give text that parses back to the same dump (when it
 * fits the input limit: canonical text can be longer than the input).
 */
static void round_trip(const struct ddl_table *t)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf sql = BUF_INIT(BIG);
	struct ddl_table *again = NULL;
	char *d1 = NULL, *d2 = NULL, *k;

	if (ddl_format(&sql, t) || sql.len > 1024 * 1024)
		goto out;
	if (ddl_parse(&again, buf_str(&sql), sql.len, &err)) {
		fprintf(stderr, "formatted text does not parse: %s\n%s\n",
			err.msg, buf_str(&sql));
		abort();
	}
	d1 = dump(t);
	d2 = dump(again);
	/* a merged table is formatted without LIKE: its last line goes */
	if (d1 && (k = strstr(d1, "\nlike: ")) && strstr(k, " merged\n"))
		k[1] = '\0';
	if (d1 && d2 && strcmp(d1, d2)) {
		fprintf(stderr, "round trip differs:\n%s---\n%s", d1, d2);
		abort();
	}
out:
	free(d1);
	free(d2);
	ddl_table_free(again);
	buf_release(&sql);
}

/* Two statements split at the first NUL: source, then derived. */
static void two(const char *s, size_t size, size_t at)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct ddl_table *src = NULL, *t = NULL;
	char *d;

	if (ddl_parse(&src, s, at, &err))
		return;
	cmfs_err_clear(&err);
	if (!ddl_parse(&t, s + at + 1, size - at - 1, &err)) {
		cmfs_err_clear(&err);
		ddl_check_name(t, "prod", "t", &err);
		cmfs_err_clear(&err);
		if (!ddl_merge_like(t, src, &err)) {
			ddl_table_free(src); /* t must not need it */
			src = NULL;
			round_trip(t);
		}
		d = dump(t);
		free(d);
	}
	ddl_table_free(src);
	ddl_table_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *nul = memchr(s, '\0', size);
	struct cmfs_err err = CMFS_ERR_INIT;
	struct ddl_table *t = NULL;
	const char *k, *v;
	char *d;
	size_t i;

	if (nul) {
		two(s, size, (size_t)(nul - s));
		return 0;
	}
	if (ddl_parse(&t, s, size, &err))
		return 0;
	d = dump(t);
	free(d);
	for (i = 0; i < ddl_option_count(t); i++) {
		const char *k2, *last;
		size_t j;

		ddl_option(t, i, &k, &v);
		/* A repeated key: the last value wins, as in Flink. */
		for (j = i, last = v; j < ddl_option_count(t); j++) {
			ddl_option(t, j, &k2, &v);
			if (!strcmp(k, k2))
				last = v;
		}
		if (ddl_option_get(t, k) != last)
			abort();
	}
	round_trip(t);
	cmfs_err_clear(&err);
	ddl_check_name(t, "prod", ddl_table_name(t), &err);
	cmfs_err_clear(&err);
	if (!ddl_merge_like(t, t, &err))
		round_trip(t);
	d = dump(t);
	free(d);
	ddl_table_free(t);
	return 0;
}
