/*
 * test_json.c - unit tests of json_rows() (core/json.h): rows as SQLite's
 * json_array() writes them come back byte for byte, for every control
 * character, quotes, backslashes and characters beyond the BMP; anything
 * else is refused, and a callback can stop the walk.
 */
#include "t.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"

static size_t width_now; /* of the rows being joined */

/* Rows joined as "a|b|-;" ("-" for null) into a buf. */
static int join(void *arg, char **f)
{
	struct buf *b = arg;
	size_t i;

	for (i = 0; i < width_now; i++)
		buf_printf(b, "%s%s", i ? "|" : "", f[i] ? f[i] : "-");
	return buf_adds(b, ";");
}

/* json_rows of width 2 or 3 into a string (or "ERR <errno>"). */
static const char *rows(const char *text, size_t width)
{
	static struct buf b = BUF_INIT(1 << 20);
	int rc;

	buf_reset(&b);
	width_now = width;
	rc = json_rows(text, width, join, &b);
	if (rc) {
		buf_reset(&b);
		buf_printf(&b, "ERR %d", -rc);
	}
	return buf_str(&b);
}

static int stop_at(void *arg, char **f)
{
	(void)f;
	return --*(int *)arg ? 0 : -ECANCELED;
}

static void test_valid(void)
{
	T_STREQ(rows("[]", 3), "");
	T_STREQ(rows(" [ ] ", 3), "");
	T_STREQ(rows("[[\"connector\",\"kafka\",\"com.x.K\"]]", 3),
		"connector|kafka|com.x.K;");
	T_STREQ(rows("[[\"format\",null,\"a.B\"],[\"other\",\"i\",\"c\"]]", 3),
		"format|-|a.B;other|i|c;");
	T_STREQ(rows(" [ [ \"k\" , \"v\" ] ,\n[\"a\",\"\"] ] ", 2), "k|v;a|;");
	T_STREQ(rows("[[\"q\\\"b\\\\s\\/\",\"\\b\\f\\n\\r\\t\"]]", 2),
		"q\"b\\s/|\b\f\n\r\t;");
	T_STREQ(rows("[[\"\\u00e9\\u20AC\",\"\\ud83d\\ude00\"]]", 2),
		"\xc3\xa9\xe2\x82\xac|\xf0\x9f\x98\x80;");
	T_STREQ(rows("[[\"\xe2\x82\xac raw\",\"x\"]]", 2),
		"\xe2\x82\xac raw|x;");
}

static void test_invalid(void)
{
	static const char *const bad[] = {
		"",
		"{}",
		"[",
		"[[\"a\",\"b\"]",
		"[[\"a\",\"b\"]]x",
		"[[\"a\",\"b\"],]",
		"[[\"a\"]]",		 /* too narrow */
		"[[\"a\",\"b\",\"c\"]]", /* too wide */
		"[\"a\",\"b\"]",	 /* not rows */
		"[[\"a\",1]]",
		"[[\"a\",nul]]",
		"[[\"a\",\"b]]",       /* unterminated */
		"[[\"a\",\"b\x01\"]]", /* a raw control */
		"[[\"a\",\"\\x\"]]",
		"[[\"a\",\"\\u12\"]]",
		"[[\"a\",\"\\u12g4\"]]",
		"[[\"a\",\"\\ud83d\"]]",	/* a high surrogate alone */
		"[[\"a\",\"\\ude00\"]]",	/* a low one alone */
		"[[\"a\",\"\\ud83d\\u0041\"]]", /* high, then no low */
		"[[\"a\",\"\\u0000\"]]",	/* NUL */
		"[[\"a\",\"b\"][\"c\",\"d\"]]",
		NULL,
	};
	int i, n;

	for (i = 0; bad[i]; i++) {
		const char *got = rows(bad[i], 2);

		if (strcmp(got, "ERR 22"))
			fprintf(stderr, "  accepted: %s\n", bad[i]);
		T_STREQ(got, "ERR 22");
	}
	T_INTEQ(json_rows("[]", 0, join, NULL), -EINVAL);
	T_INTEQ(json_rows("[]", JSON_MAX_WIDTH + 1, join, NULL), -EINVAL);
	/* The callback's answer stops the walk. */
	n = 2;
	T_INTEQ(json_rows("[[\"a\",\"b\"],[\"c\",\"d\"],[\"e\",\"f\"]]", 2,
			  stop_at, &n),
		-ECANCELED);
	T_INTEQ(n, 0);
}

/* What SQLite writes, read back: every byte 1..255 in some value. */
static void test_sqlite_written(void)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	char all[300], *p = all;
	struct buf want = BUF_INIT(4096);
	int c;

	for (c = 1; c < 128; c++)
		*p++ = (char)c;
	memcpy(p, "\xc3\xa9\xf0\x9f\x98\x80\xe2\x82\xac", 9);
	p[9] = '\0';
	T_INTEQ(sqlite3_open(":memory:", &db), SQLITE_OK);
	T_INTEQ(sqlite3_prepare_v2(db,
				   "SELECT json_array(json_array(?1, ?2, ?1),"
				   " json_array('x', NULL, ?2))",
				   -1, &s, NULL),
		SQLITE_OK);
	sqlite3_bind_text(s, 1, all, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, "com.example.\"Quoted\"\\Factory", -1,
			  SQLITE_STATIC);
	T_INTEQ(sqlite3_step(s), SQLITE_ROW);
	buf_printf(&want,
		   "%s|com.example.\"Quoted\"\\Factory|%s;"
		   "x|-|com.example.\"Quoted\"\\Factory;",
		   all, all);
	T_STREQ(rows((const char *)sqlite3_column_text(s, 0), 3),
		buf_str(&want));
	sqlite3_finalize(s);
	sqlite3_close(db);
	buf_release(&want);
}

static const char *cell(const void *arg, size_t i, size_t j)
{
	return ((const char *const *)arg)[i * 3 + j];
}

/* What json_rows_write writes, json_rows reads back as it was. */
static void test_written(void)
{
	static const char *const in[] = {
		"connector", NULL, "a\"b\\c",
		"\t\n\x01\x1f", "\xe2\x82\xac \xf0\x9f\x98\x80", "",
	};
	struct buf b = BUF_INIT(1 << 20);

	T_INTEQ(json_rows_write(&b, 2, 3, cell, in), 0);
	T_STREQ(rows(buf_str(&b), 3),
		"connector|-|a\"b\\c;\t\n\x01\x1f|\xe2\x82\xac "
		"\xf0\x9f\x98\x80|;");
	buf_reset(&b);
	T_INTEQ(json_rows_write(&b, 0, 3, cell, in), 0);
	T_STREQ(buf_str(&b), "[]");
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_valid);
	T_RUN(test_invalid);
	T_RUN(test_sqlite_written);
	T_RUN(test_written);
	return T_DONE();
}
