/*
 * test_ddl.c - unit tests of the CREATE TABLE parser (core/ddl.h).
 *
 * Most cases are data, in tests/ddl/ (see tests/ddl/README): statements
 * that must parse, each with its expected dump; statements that must be
 * refused, each with its errno and a fragment of the message; and LIKE
 * pairs with the expected merged dump or refusal.  Every valid statement
 * is also formatted back to SQL and parsed again, which must give the
 * same dump.  The functions at the end test what data files cannot say
 * well: limits, the name rule, accessors, the ownership of merged data.
 *
 * Runs with the current directory at tests/.  DDL_REGEN=1 in the
 * environment rewrites the expected dumps from the parser's output (to be
 * reviewed with git diff, never trusted blindly).
 */
#include "t.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ddl.h"
#include "err.h"

#define CASES "ddl"

static int regen;

/* ---- helpers ---------------------------------------------------------------
 */

/* Write `text` to `path` (DDL_REGEN only). */
static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* qsort() order of names: cases run in file-name order. */
static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in `dir` ending in `suffix`, but not in `not_suffix`. */
static size_t list(const char *dir, const char *suffix, const char *not_suffix,
		   char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL, **nv;
	size_t n = 0, len, sl = strlen(suffix);

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len <= sl || strcmp(e->d_name + len - sl, suffix))
			continue;
		if (not_suffix && len > strlen(not_suffix) &&
		    !strcmp(e->d_name + len - strlen(not_suffix), not_suffix))
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_names);
	*out = v;
	return n;
}

/* Free what list() returned. */
static void free_list(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The errno named in a .err file. */
static int errno_of(const char *name)
{
	if (!strcmp(name, "EINVAL"))
		return EINVAL;
	if (!strcmp(name, "EOPNOTSUPP"))
		return EOPNOTSUPP;
	if (!strcmp(name, "EFBIG"))
		return EFBIG;
	return -1;
}

/* Check rc/err against a .err file: "ENAME: message fragment". */
static void check_err(const char *name, const char *expect, int rc,
		      const struct cmfs_err *err)
{
	char ename[32];
	const char *colon = strchr(expect, ':'), *frag;
	char fragment[512];
	size_t n;

	if (!colon || (size_t)(colon - expect) >= sizeof(ename)) {
		fprintf(stderr, "%s: bad .err file\n", name);
		T_CHECK(0);
		return;
	}
	memcpy(ename, expect, (size_t)(colon - expect));
	ename[colon - expect] = '\0';
	frag = colon + 1;
	while (*frag == ' ')
		frag++;
	n = strcspn(frag, "\n");
	if (n >= sizeof(fragment))
		n = sizeof(fragment) - 1;
	memcpy(fragment, frag, n);
	fragment[n] = '\0';
	if (rc != -errno_of(ename) || !strstr(err->msg, fragment))
		fprintf(stderr, "%s: got rc %d \"%s\", want %s \"%s\"\n", name,
			rc, err->msg, ename, fragment);
	T_INTEQ(rc, -errno_of(ename));
	T_CONTAINS(err->msg, fragment);
}

/* Dump of `t` as a fresh string (caller frees). */
static char *dump(const struct ddl_table *t)
{
	struct buf b = BUF_INIT(64 * 1024 * 1024);

	if (ddl_dump(&b, t)) {
		buf_release(&b);
		return NULL;
	}
	return buf_take(&b, NULL);
}

/* Drop the lines starting with `prefix` (in place). */
static void drop_lines(char *s, const char *prefix)
{
	char *r = s, *w = s, *nl;
	size_t n;

	while (*r) {
		nl = strchr(r, '\n');
		n = nl ? (size_t)(nl - r) + 1 : strlen(r);
		if (strncmp(r, prefix, strlen(prefix))) {
			memmove(w, r, n);
			w += n;
		}
		r += n;
	}
	*w = '\0';
}

/*
 * Format `t`, parse the text again and compare the dumps (without the
 * like: line when `t` is merged: its formatted text has no LIKE).
 */
static void round_trip(const char *name, const struct ddl_table *t, int merged)
{
	struct buf sql = BUF_INIT(64 * 1024 * 1024);
	struct cmfs_err err = CMFS_ERR_INIT;
	struct ddl_table *again = NULL;
	char *d1 = dump(t), *d2 = NULL;
	int rc;

	T_INTEQ(ddl_format(&sql, t), 0);
	rc = ddl_parse(&again, buf_str(&sql), sql.len, &err);
	if (rc)
		fprintf(stderr, "%s: formatted text does not parse: %s\n%s",
			name, err.msg, buf_str(&sql));
	T_INTEQ(rc, 0);
	if (!rc) {
		d2 = dump(again);
		if (merged)
			drop_lines(d1, "like: ");
		if (d1 && d2 && strcmp(d1, d2))
			fprintf(stderr, "%s: round trip differs:\n%s---\n%s",
				name, d1, d2);
		T_STREQ(d2, d1);
	}
	ddl_table_free(again);
	free(d1);
	free(d2);
	buf_release(&sql);
}

/* Compare `got` with the file `path` (or rewrite it under DDL_REGEN). */
static void expect_file(const char *name, const char *path, const char *got)
{
	char *want;

	if (regen) {
		spit(path, got);
		return;
	}
	want = t_slurp(path, NULL);
	if (!want)
		fprintf(stderr, "%s: missing %s\n", name, path);
	else if (strcmp(want, got))
		fprintf(stderr, "%s: dump differs from %s:\n%s", name, path,
			got);
	T_STREQ(got, want);
	free(want);
}

/* ---- the data-driven cases --------------------------------------------------
 */

static int nvalid, ninvalid, nlike;

/* tests/ddl/valid/NNN-x.sql must parse to the dump in NNN-x.out. */
static void test_valid(void)
{
	char **names, path[512], *sql, *got;
	struct cmfs_err err;
	struct ddl_table *t;
	size_t n, i, len;
	int rc;

	n = list(CASES "/valid", ".sql", NULL, &names);
	T_CHECK(n >= 90);
	for (i = 0; i < n; i++) {
		cmfs_err_clear(&err);
		snprintf(path, sizeof(path), CASES "/valid/%s", names[i]);
		sql = t_slurp(path, &len);
		T_CHECK(sql != NULL);
		if (!sql)
			continue;
		rc = ddl_parse(&t, sql, len, &err);
		if (rc)
			fprintf(stderr, "%s: %s\n", names[i], err.msg);
		T_INTEQ(rc, 0);
		if (!rc) {
			got = dump(t);
			snprintf(path + strlen(path) - 4, 5, ".out");
			expect_file(names[i], path, got ? got : "");
			round_trip(names[i], t, 0);
			free(got);
			ddl_table_free(t);
		}
		free(sql);
		nvalid++;
	}
	free_list(names, n);
}

/* tests/ddl/invalid/NNN-x.sql must fail as NNN-x.err says. */
static void test_invalid(void)
{
	char **names, path[512], *sql, *expect;
	struct cmfs_err err;
	struct ddl_table *t;
	size_t n, i, len;
	int rc;

	n = list(CASES "/invalid", ".sql", NULL, &names);
	T_CHECK(n >= 50);
	for (i = 0; i < n; i++) {
		cmfs_err_clear(&err);
		snprintf(path, sizeof(path), CASES "/invalid/%s", names[i]);
		sql = t_slurp(path, &len);
		snprintf(path + strlen(path) - 4, 5, ".err");
		expect = t_slurp(path, NULL);
		T_CHECK(sql && expect);
		if (sql && expect) {
			t = (struct ddl_table *)&t; /* must become NULL */
			rc = ddl_parse(&t, sql, len, &err);
			T_CHECK(t == NULL);
			check_err(names[i], expect, rc, &err);
			if (!rc)
				ddl_table_free(t);
		}
		free(sql);
		free(expect);
		ninvalid++;
	}
	free_list(names, n);
}

/*
 * tests/ddl/like/NNN-x.src.sql is the source, NNN-x.sql the derived
 * table; NNN-x.out is the merged dump, or NNN-x.err the refusal.
 */
static void test_like(void)
{
	char **names, path[512], *src_sql, *sql, *expect, *got;
	struct ddl_table *src, *t;
	struct cmfs_err err;
	size_t n, i, len, slen;
	int rc;

	n = list(CASES "/like", ".sql", ".src.sql", &names);
	T_CHECK(n >= 15);
	for (i = 0; i < n; i++) {
		cmfs_err_clear(&err);
		snprintf(path, sizeof(path), CASES "/like/%s", names[i]);
		sql = t_slurp(path, &len);
		snprintf(path + strlen(path) - 4, 9, ".src.sql");
		src_sql = t_slurp(path, &slen);
		T_CHECK(sql && src_sql);
		src = t = NULL;
		if (sql && src_sql) {
			T_INTEQ(ddl_parse(&src, src_sql, slen, &err), 0);
			T_INTEQ(ddl_parse(&t, sql, len, &err), 0);
			if (err.code)
				fprintf(stderr, "%s: %s\n", names[i], err.msg);
		}
		if (src && t) {
			T_STREQ(ddl_like_source(t), ddl_table_name(src));
			rc = ddl_merge_like(t, src, &err);
			/* the merged table must not need its source */
			ddl_table_free(src);
			src = NULL;
			snprintf(path + strlen(path) - 8, 9, ".err");
			expect = t_slurp(path, NULL);
			if (expect) {
				check_err(names[i], expect, rc, &err);
			} else {
				if (rc)
					fprintf(stderr, "%s: %s\n", names[i],
						err.msg);
				T_INTEQ(rc, 0);
				got = dump(t);
				snprintf(path + strlen(path) - 4, 5, ".out");
				expect_file(names[i], path, got ? got : "");
				round_trip(names[i], t, 1);
				free(got);
			}
			free(expect);
		}
		ddl_table_free(src);
		ddl_table_free(t);
		free(sql);
		free(src_sql);
		nlike++;
	}
	free_list(names, n);
}

/* ---- limits
 * ------------------------------------------------------------------- */

/* Parse a C string; the errno (0 on success), `err` filled. */
static int parse_str(const char *sql, struct cmfs_err *err)
{
	struct ddl_table *t;
	int rc;

	cmfs_err_clear(err);
	rc = ddl_parse(&t, sql, strlen(sql), err);
	ddl_table_free(t);
	return rc;
}

/*
 * 1 MiB of text is the limit: a statement padded to exactly that size
 * with a comment parses, one byte more is -EFBIG before any parsing.
 */
static void test_size_limit(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	const char *head = "CREATE TABLE t (a INT) -- ";
	size_t n = 1024 * 1024;
	char *big = malloc(n + 2);

	T_CHECK(big != NULL);
	if (!big)
		return;
	/* exactly 1 MiB: accepted (a long comment) */
	memset(big, 'x', n + 1);
	memcpy(big, head, strlen(head));
	big[n] = '\0';
	T_INTEQ(parse_str(big, &err), 0);
	/* one byte more: refused before parsing */
	big[n] = 'x';
	big[n + 1] = '\0';
	T_ERRNO(parse_str(big, &err), EFBIG);
	T_CONTAINS(err.msg, "limit");
	free(big);
}

/* ARRAY<ARRAY<...INT...>> with `levels` type levels in all. */
static char *nested_type(int levels)
{
	struct buf b = BUF_INIT(1 << 20);
	int i;

	buf_adds(&b, "CREATE TABLE t (a ");
	for (i = 1; i < levels; i++)
		buf_adds(&b, "ARRAY<");
	buf_adds(&b, "INT");
	for (i = 1; i < levels; i++)
		buf_addc(&b, '>');
	buf_adds(&b, ")");
	return buf_take(&b, NULL);
}

/* b AS (((...a...))) with `levels` expression levels in all. */
static char *nested_expr(int levels, const char *open, const char *close)
{
	struct buf b = BUF_INIT(1 << 20);
	int i;

	buf_adds(&b, "CREATE TABLE t (a INT, b AS ");
	for (i = 1; i < levels; i++)
		buf_adds(&b, open);
	buf_adds(&b, "a");
	for (i = 1; i < levels; i++)
		buf_adds(&b, close);
	buf_adds(&b, ")");
	return buf_take(&b, NULL);
}

/*
 * 64 levels of types or expressions parse, 65 do not; and far deeper
 * input (100000 levels) fails the same clean way instead of exhausting
 * the stack, for every construct that recurses: parentheses, calls,
 * signs, NOT, CAST, CASE and subscripts.
 */
static void test_depth_limit(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	char *s;

	s = nested_type(64);
	T_INTEQ(parse_str(s, &err), 0);
	free(s);
	s = nested_type(65);
	T_ERRNO(parse_str(s, &err), EINVAL);
	T_CONTAINS(err.msg, "nested deeper than 64");
	free(s);
	s = nested_type(100000); /* no stack overflow */
	T_ERRNO(parse_str(s, &err), EINVAL);
	free(s);

	s = nested_expr(64, "(", ")");
	T_INTEQ(parse_str(s, &err), 0);
	free(s);
	s = nested_expr(65, "(", ")");
	T_ERRNO(parse_str(s, &err), EINVAL);
	T_CONTAINS(err.msg, "nested deeper than 64");
	free(s);
	s = nested_expr(200000, "(", ")");
	T_ERRNO(parse_str(s, &err), EINVAL);
	free(s);
	s = nested_expr(200000, "f(", ")");
	T_ERRNO(parse_str(s, &err), EINVAL);
	free(s);
	s = nested_expr(200000, "-", "");
	T_ERRNO(parse_str(s, &err), EINVAL);
	free(s);
	s = nested_expr(200000, "NOT ", "");
	T_ERRNO(parse_str(s, &err), EINVAL);
	free(s);
	s = nested_expr(100000, "CAST(", " AS INT)");
	T_ERRNO(parse_str(s, &err), EINVAL);
	free(s);
	s = nested_expr(100000, "CASE WHEN ", " THEN 1 END");
	T_ERRNO(parse_str(s, &err), EINVAL);
	free(s);
	s = nested_expr(100000, "x[", "]");
	T_ERRNO(parse_str(s, &err), EINVAL);
	free(s);
}

/* A long flat expression is a loop, not recursion: accepted. */
static void test_flat_expression(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(2 << 20);
	int i;

	buf_adds(&b, "CREATE TABLE t (a INT, b AS a");
	for (i = 0; i < 100000; i++)
		buf_adds(&b, i % 2 ? " + a" : " * a");
	buf_adds(&b, ")");
	T_INTEQ(parse_str(buf_str(&b), &err), 0);
	buf_release(&b);
}

/* A statement with `nopts` options (and `ncols` columns). */
static char *wide(int ncols, int nopts)
{
	struct buf b = BUF_INIT(4 << 20);
	int i;

	buf_adds(&b, "CREATE TABLE t (");
	for (i = 0; i < ncols; i++)
		buf_printf(&b, "%sc%d INT", i ? ", " : "", i);
	buf_adds(&b, ") WITH (");
	for (i = 0; i < nopts; i++)
		buf_printf(&b, "%s'k%d' = 'v'", i ? ", " : "", i);
	buf_adds(&b, ")");
	return buf_take(&b, NULL);
}

/*
 * 1024 options and 4096 columns are the limits: at the limit the table
 * parses, one more is -EFBIG with a message naming the limit.
 */
static void test_count_limits(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	char *s;

	s = wide(1, 1024);
	T_INTEQ(parse_str(s, &err), 0);
	free(s);
	s = wide(1, 1025);
	T_ERRNO(parse_str(s, &err), EFBIG);
	T_CONTAINS(err.msg, "more than 1024 options");
	free(s);
	s = wide(4096, 1);
	T_INTEQ(parse_str(s, &err), 0);
	free(s);
	s = wide(4097, 1);
	T_ERRNO(parse_str(s, &err), EFBIG);
	T_CONTAINS(err.msg, "more than 4096 columns");
	free(s);
}

/* Merging may not grow a table past the limits either. */
/*
 * A merge that would pass the option limit fails with -EFBIG and leaves
 * the derived table as it was.
 */
static void test_merge_limits(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct ddl_table *src, *t;
	struct buf b = BUF_INIT(1 << 20);
	char *s = wide(1, 1000);
	int i;

	T_INTEQ(ddl_parse(&src, s, strlen(s), &err), 0);
	buf_adds(&b, "CREATE TABLE d WITH (");
	for (i = 0; i < 100; i++)
		buf_printf(&b, "%s'x%d' = 'v'", i ? ", " : "", i);
	buf_adds(&b, ") LIKE t");
	T_INTEQ(ddl_parse(&t, buf_str(&b), b.len, &err), 0);
	T_ERRNO(ddl_merge_like(t, src, &err), EFBIG);
	T_CONTAINS(err.msg, "more than 1024 options");
	T_INTEQ((long long)ddl_option_count(t), 100);
	ddl_table_free(src);
	ddl_table_free(t);
	buf_release(&b);
	free(s);
}

/* ---- positions, names, accessors
 * ----------------------------------------------- */

/*
 * Exact messages for a few errors: lines and columns are 1-based and
 * columns count characters (UTF-8 sequences count once).
 */
static void test_positions(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;

	/* columns count characters, not bytes: "ünï" is 3 */
	T_ERRNO(parse_str("CREATE TABLE t (\n  `ünï` INT,\n  b FOO\n)", &err),
		EINVAL);
	T_STREQ(err.msg, "3:5: expected a data type, found \"FOO\"");
	T_ERRNO(parse_str("CREATE TABLE t (`ä` INT, x BAR)", &err), EINVAL);
	T_STREQ(err.msg, "1:28: expected a data type, found \"BAR\"");
	T_ERRNO(parse_str("CREATE TABLE t (a INT)\nWITH ('a' = 'b'", &err),
		EINVAL);
	T_STREQ(err.msg, "2:16: expected ')', found end of input");
	/* a byte-order mark is skipped, and not counted */
	T_INTEQ(parse_str("\xef\xbb\xbf"
			  "CREATE TABLE t (a INT)",
			  &err),
		0);
	/* NULL err is allowed */
	T_ERRNO(ddl_parse(&(struct ddl_table *){NULL}, "x", 1, NULL), EINVAL);
	ddl_table_free(NULL);
}

/*
 * The name rule of the environment catalog (env "prod"): plain names,
 * `default`.t and `_env_prod`.`default`.t are accepted, other qualifiers
 * refused, and the table name must be the file's, case and all.  The
 * LIKE source follows the same qualifier rule.
 */
static void test_check_name(void)
{
	static const struct {
		const char *sql, *file;
		int rc;
		const char *msg;
	} cases[] = {
		{"CREATE TABLE orders (a INT)", "orders", 0, NULL},
		{"CREATE TABLE `default`.orders (a INT)", "orders", 0, NULL},
		{"CREATE TABLE `_env_prod`.`default`.`orders` (a INT)",
		 "orders", 0, NULL},
		{"CREATE TABLE _env_prod.`default`.orders (a INT)", "orders", 0,
		 NULL},
		{"CREATE TABLE orders (a INT)", "Orders", -EINVAL,
		 "table name `orders` does not match the file name "
		 "`Orders.sql`"},
		{"CREATE TABLE `_env_dev`.`default`.orders (a INT)", "orders",
		 -EINVAL,
		 "qualified name `_env_dev`.`default`.`orders`: only "
		 "the environment catalog `_env_prod`.`default` is allowed"},
		{"CREATE TABLE `_env_prod`.db.orders (a INT)", "orders",
		 -EINVAL, "only the environment catalog"},
		{"CREATE TABLE db.orders (a INT)", "orders", -EINVAL,
		 "qualified name `db`.`orders`"},
		{"CREATE TABLE `DEFAULT`.orders (a INT)", "orders", -EINVAL,
		 "only the environment catalog"},
		{"CREATE TABLE `_env_prod`.orders (a INT)", "orders", -EINVAL,
		 "only the environment catalog"},
		{"CREATE TABLE o LIKE `default`.src", "o", 0, NULL},
		{"CREATE TABLE o LIKE `_env_prod`.`default`.src", "o", 0, NULL},
		{"CREATE TABLE o LIKE cat.db.src", "o", -EINVAL,
		 "LIKE source: qualified name `cat`.`db`.`src`"},
		{"CREATE TABLE o LIKE hive.src", "o", -EINVAL,
		 "LIKE source: qualified name"},
	};
	struct cmfs_err err;
	struct ddl_table *t;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cmfs_err_clear(&err);
		T_INTEQ(ddl_parse(&t, cases[i].sql, strlen(cases[i].sql), &err),
			0);
		if (!t)
			continue;
		T_INTEQ(ddl_check_name(t, "prod", cases[i].file, &err),
			cases[i].rc);
		if (cases[i].msg)
			T_CONTAINS(err.msg, cases[i].msg);
		ddl_table_free(t);
	}
}

/*
 * What other modules read: the last name part, options in order and
 * unquoted (with '' undone), exact-match lookup, columns and types.
 */
static void test_accessors(void)
{
	const char *sql = "CREATE TABLE `c`.`d`.`My Table` (\n"
			  "  id BIGINT, v AS id + 1\n"
			  ") WITH ('connector' = 'kafka', 'it''s' = "
			  "'a''b', 'empty' = '', 'connector' = 'x')";
	struct cmfs_err err = CMFS_ERR_INIT;
	const char *k, *v;
	struct ddl_table *t;

	T_INTEQ(ddl_parse(&t, sql, strlen(sql), &err), 0);
	if (!t)
		return;
	T_STREQ(ddl_table_name(t), "My Table");
	T_CHECK(ddl_like_source(t) == NULL);
	T_INTEQ((long long)ddl_option_count(t), 4);
	ddl_option(t, 1, &k, &v);
	T_STREQ(k, "it's");
	T_STREQ(v, "a'b");
	/* a key written twice: the last value, as Flink takes it */
	T_STREQ(ddl_option_get(t, "connector"), "x");
	T_STREQ(ddl_option_get(t, "empty"), "");
	T_CHECK(ddl_option_get(t, "Connector") == NULL);
	T_CHECK(ddl_option_get(t, "format") == NULL);
	T_INTEQ((long long)ddl_column_count(t), 2);
	ddl_column(t, 0, &k, &v);
	T_STREQ(k, "id");
	T_STREQ(v, "BIGINT");
	ddl_column(t, 1, &k, &v);
	T_STREQ(k, "v");
	T_CHECK(v == NULL);
	ddl_table_free(t);
}

/* ---- merging
 * ------------------------------------------------------------------- */

/* Parse a statement that must be valid; NULL (and a failure) if not. */
static struct ddl_table *parse_ok(const char *sql)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct ddl_table *t = NULL;

	if (ddl_parse(&t, sql, strlen(sql), &err))
		fprintf(stderr, "parse_ok: %s\n", err.msg);
	T_CHECK(t != NULL);
	return t;
}

/*
 * The contract of ddl_merge_like() beyond the data files: only a table
 * with LIKE can be merged, a failed merge changes nothing, a good one
 * sets the merged options and columns, and a second merge is refused.
 */
static void test_merge_rules(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct ddl_table *src, *t, *plain;
	char *before, *after;

	src = parse_ok("CREATE TABLE s (a INT, ts TIMESTAMP(3)) WITH "
		       "('connector' = 'kafka', 'topic' = 'x')");
	plain = parse_ok("CREATE TABLE p (a INT)");
	t = parse_ok("CREATE TABLE d (a INT) WITH ('topic' = 'y') LIKE s");
	if (!src || !plain || !t)
		goto out;
	/* no LIKE clause to merge */
	T_ERRNO(ddl_merge_like(plain, src, &err), EINVAL);
	T_CONTAINS(err.msg, "has no LIKE clause");
	/* a failed merge leaves the table as it was */
	before = dump(t);
	cmfs_err_clear(&err);
	T_ERRNO(ddl_merge_like(t, src, &err), EINVAL);
	T_CONTAINS(err.msg, "column `a` is already defined");
	after = dump(t);
	T_STREQ(after, before);
	T_STREQ(ddl_option_get(t, "topic"), "y");
	T_CHECK(ddl_option_get(t, "connector") == NULL);
	free(before);
	free(after);
	ddl_table_free(t);
	/* a good merge, then a second merge is refused */
	t = parse_ok("CREATE TABLE d (WATERMARK FOR ts AS ts) WITH "
		     "('topic' = 'y') LIKE s");
	if (!t)
		goto out;
	cmfs_err_clear(&err);
	T_INTEQ(ddl_merge_like(t, src, &err), 0);
	T_STREQ(ddl_option_get(t, "topic"), "y");
	T_STREQ(ddl_option_get(t, "connector"), "kafka");
	T_INTEQ((long long)ddl_option_count(t), 2);
	T_INTEQ((long long)ddl_column_count(t), 2);
	T_ERRNO(ddl_merge_like(t, src, &err), EINVAL);
	T_CONTAINS(err.msg, "already merged");
out:
	ddl_table_free(src);
	ddl_table_free(plain);
	ddl_table_free(t);
}

/* Merging a table with itself reads and writes one object: still sound. */
static void test_merge_self(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct ddl_table *t;
	char *d;

	t = parse_ok("CREATE TABLE t (c AS 1 + 1, m INT METADATA) "
		     "WITH ('a' = 'b') LIKE t (OVERWRITING GENERATED, "
		     "OVERWRITING METADATA)");
	if (!t)
		return;
	T_INTEQ(ddl_merge_like(t, t, &err), 0);
	d = dump(t);
	T_STREQ(d, "table: `t`\n"
		   "column: `c` computed AS 1 + 1\n"
		   "column: `m` metadata INT\n"
		   "option: 'a' = 'b'\n"
		   "like: `t` (OVERWRITING GENERATED OVERWRITING METADATA) "
		   "merged\n");
	free(d);
	ddl_table_free(t);
	/* without OVERWRITING the self-merge is a conflict */
	t = parse_ok("CREATE TABLE t (a INT) LIKE t");
	if (!t)
		return;
	cmfs_err_clear(&err);
	T_ERRNO(ddl_merge_like(t, t, &err), EINVAL);
	ddl_table_free(t);
}

/*
 * The data cases first (their counts are printed), then the C cases.
 * The last line is the harness's "N passed, N failed".
 */
int main(void)
{
	regen = getenv("DDL_REGEN") != NULL;
	T_RUN(test_valid);
	T_RUN(test_invalid);
	T_RUN(test_like);
	T_RUN(test_size_limit);
	T_RUN(test_depth_limit);
	T_RUN(test_flat_expression);
	T_RUN(test_count_limits);
	T_RUN(test_merge_limits);
	T_RUN(test_positions);
	T_RUN(test_check_name);
	T_RUN(test_accessors);
	T_RUN(test_merge_rules);
	T_RUN(test_merge_self);
	printf("ddl cases: %d valid, %d invalid, %d like\n", nvalid, ninvalid,
	       nlike);
	return T_DONE();
}
