/*
 * fuzz_json.c - libFuzzer target: any text, read as rows by json_rows()
 * (the first byte picks the width, 1 to 4).  Whatever it accepts, SQLite
 * must accept as JSON too and find the same strings and nulls in the
 * same places (json_each and ->>); a difference aborts.  Seeds:
 * tests/fuzz/corpus/json/.
 */
#include "json.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sqlite3 *db;
static sqlite3_stmt *rows, *valid;

struct check {
	size_t width, n;
	int differs;
};

/* Row c->n of the text bound to `rows` must be `f`. */
static int compare(void *arg, char **f)
{
	struct check *c = arg;
	size_t i;

	if (sqlite3_step(rows) != SQLITE_ROW) {
		c->differs = 1;
		return 1;
	}
	for (i = 0; i < c->width; i++) {
		const char *s = (const char *)sqlite3_column_text(rows, (int)i);

		if (sqlite3_column_type(rows, (int)i) == SQLITE_NULL
			    ? f[i] != NULL
			    : !f[i] || strcmp(s, f[i]))
			c->differs = 1;
	}
	/* As many elements as fields: none past the width. */
	if (sqlite3_column_int(rows, 4) != (int)c->width)
		c->differs = 1;
	c->n++;
	return c->differs;
}

static int nothing(void *arg, char **f)
{
	(void)arg;
	(void)f;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct check c = { 0, 0, 0 };
	char *text;
	int rc;

	if (size < 1)
		return 0;
	if (!db &&
	    (sqlite3_open(":memory:", &db) ||
	     sqlite3_prepare_v2(db,
				"SELECT value ->> 0, value ->> 1, value ->> 2,"
				" value ->> 3, json_array_length(value)"
				" FROM json_each(?) ORDER BY key",
				-1, &rows, NULL) ||
	     sqlite3_prepare_v2(db, "SELECT json_valid(?)", -1, &valid, NULL)))
		abort();
	c.width = (size_t)data[0] % JSON_MAX_WIDTH + 1;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	/* Only a text it takes whole is compared, row by row. */
	rc = json_rows(text, c.width, nothing, NULL);
	sqlite3_bind_text(rows, 1, text, -1, SQLITE_STATIC);
	if (!rc && !(rc = json_rows(text, c.width, compare, &c))) {
		/* Accepted: valid JSON, and no row of SQLite's left over. */
		sqlite3_bind_text(valid, 1, text, -1, SQLITE_STATIC);
		if (sqlite3_step(valid) != SQLITE_ROW ||
		    !sqlite3_column_int(valid, 0) ||
		    sqlite3_step(rows) != SQLITE_DONE)
			c.differs = 1;
		sqlite3_reset(valid);
	}
	sqlite3_reset(rows);
	if (c.differs || (rc && rc != -EINVAL && rc != -ENOMEM)) {
		fprintf(stderr, "json_rows and SQLite differ on: %s\n", text);
		abort();
	}
	free(text);
	return 0;
}
