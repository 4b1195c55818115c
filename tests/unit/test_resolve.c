/*
 * test_resolve.c - unit tests of resolution (core/resolve.h, and
 * repo_resolve / repo_used_by of core/repo.h) without FUSE: every rule of
 * DESIGN.md, "Resolution", and the errno of each refusal ("Errors").
 *
 * Each test opens a repo whose store lives in a fresh mkdtemp directory,
 * uploads fixture JARs (tests/fixtures/jars/, run with cwd = tests/),
 * labels them, writes tables, and resolves them both directly
 * (resolve_table + resolve_render) and through repo_resolve().  A test
 * that needs a fixture and does not find it fails (fixture_read()).
 */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "catalog.h"
#include "config.h"
#include "ddl.h"
#include "err.h"
#include "repo.h"
#include "resolve.h"

#include "fixture.h"

#define TYPE "cmf.confluent.io/sql-artifact-type"
#define IDENT "cmf.confluent.io/sql-artifact-identifier"
#define MNT "/mnt/cmfs"
#define MONGO_DDL_FILE "ddl/valid/004-mongodb-orders.sql"
#define MONGO_V2_FILE "integ/data/mongodb-v2.jar"

/* ---- helpers --------------------------------------------------------------- */

static const struct repo_who who = { 1000, 1000, 4242, 0, NULL };

static char last_msg[CMFS_ERR_MSG];	/* the message of the last call */

/* Open a repo in a fresh temp dir; `prefix` (may be NULL) is the
 * configured jar_path_prefix, `mnt` the mount point given to repo_open. */
static void setup_with(struct fixture *x, const char *prefix, const char *mnt)
{
	fixture_open(x, "resolve", prefix, mnt, 1 << 24);
}

static void setup(struct fixture *x)
{
	setup_with(x, NULL, MNT);
}

/* A second configuration over the same store (for repo_set_config). */
static void config_like(struct config *c, const struct fixture *x,
			const char *allowlist_extra, const char *prefix)
{
	struct buf b = BUF_INIT(4096);

	if (config_defaults(c))
		exit(2);
	free(c->store_path);
	c->store_path = strdup(x->store);
	if (allowlist_extra) {
		buf_printf(&b, "%s,%s", c->sql.class_allowlist,
			   allowlist_extra);
		free(c->sql.class_allowlist);
		c->sql.class_allowlist = buf_take(&b, NULL);
	}
	if (prefix)
		c->sql.jar_path_prefix = strdup(prefix);
	if (!c->store_path || !c->sql.class_allowlist ||
	    (prefix && !c->sql.jar_path_prefix))
		exit(2);
}

static void keep_msg(const struct cmfs_err *err)
{
	snprintf(last_msg, sizeof(last_msg), "%s", cmfs_err_msg(err));
}

static int mkenv(struct fixture *x, const char *env)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = repo_env_create(x->r, &who, env, &err);

	keep_msg(&err);
	return rc;
}

/* Upload `len` bytes as `name` in one write at offset 0. */
static int upload(struct fixture *x, const char *env, const char *name,
		  const void *data, size_t len, struct catalog_version *v)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = fixture_upload(x, &who, env, name, data, len, v, &err);

	keep_msg(&err);
	return rc;
}

static int set_label(struct fixture *x, const char *env, const char *name,
		     const char *key, const char *value)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = repo_label_set(x->r, &who, env, name, key, value,
				strlen(value), &err);

	keep_msg(&err);
	return rc;
}

/* Set both sql-artifact labels. */
static int label2(struct fixture *x, const char *env, const char *name,
		  const char *type, const char *id)
{
	int rc = set_label(x, env, name, TYPE, type);

	return rc ? rc : set_label(x, env, name, IDENT, id);
}

static int table_write(struct fixture *x, const char *env, const char *name,
		       const char *text)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = repo_table_write(x->r, &who, env, name, text, strlen(text),
				  &err);

	keep_msg(&err);
	return rc;
}

/* Upload fixture `file` as `name` and label it; 0 or -errno (or 1: no
 * fixture, a failure fixture_read() counted). */
static int put_jar(struct fixture *x, const char *env, const char *file,
		   const char *name, const char *type, const char *id)
{
	size_t len = 0;
	char *data = fixture_jar(file, &len, name);
	int rc;

	if (!data)
		return 1;
	rc = upload(x, env, name, data, len, NULL);
	free(data);
	if (!rc && type)
		rc = label2(x, env, name, type, id);
	if (rc)
		fprintf(stderr, "  put_jar %s: %d %s\n", name, rc, last_msg);
	return rc;
}

/* repo_resolve into a static buffer (the text, or "" on error); the errno
 * goes to *rc, the message to last_msg. */
static const char *resolved(struct fixture *x, const char *env,
			    const char *table, int sql, int *rc)
{
	static char s[65536];
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(1 << 20);

	*rc = repo_resolve(x->r, &who, env, table, sql, 1, &b, &err);
	keep_msg(&err);
	snprintf(s, sizeof(s), "%s", *rc ? "" : buf_str(&b));
	buf_release(&b);
	return s;
}

/* resolve_table (and, when it succeeds, resolve_render of the .jars or
 * .sql under `prefix`, stamped `now`) into `out`; 0 or -errno. */
static int direct(struct fixture *x, const char *env, const char *table,
		  struct resolution *res, int sql, const char *prefix,
		  int64_t now, struct buf *out)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog *c = repo_catalog(x->r);
	struct catalog_env e;
	int rc = catalog_env_get(c, env, &e, &err);

	if (!rc)
		rc = resolve_table(res, c, repo_config(x->r), &e, table, &err);
	if (!rc && out)
		rc = resolve_render(out, res, c, &e, prefix, sql, now, &err);
	keep_msg(&err);
	return rc;
}

/* repo_used_by into a static buffer. */
static const char *used_by(struct fixture *x, const char *env, const char *name)
{
	static char s[4096];
	struct buf b = BUF_INIT(1 << 20);
	int rc = repo_used_by(x->r, env, name, &b);

	snprintf(s, sizeof(s), "%s", rc ? "(error)" : buf_str(&b));
	buf_release(&b);
	return s;
}

/* `text` with trailing blanks trimmed and ";\n" made sure of: what the
 * resolver's .sql holds for one statement ending in ';' or not (no
 * trailing -- comment). */
static void statement(struct buf *out, const char *text)
{
	size_t n = strlen(text);

	while (n && strchr(" \t\r\n", text[n - 1]))
		n--;
	buf_add(out, text, n);
	buf_adds(out, n && text[n - 1] == ';' ? "\n" : ";\n");
}

/* The part of a rendered .sql from its first ADD JAR (or, without one,
 * from the first line that is not a comment): static buffer. */
static const char *after_comments(const char *sql)
{
	static char s[65536];
	const char *p = sql;

	while (!strncmp(p, "-- ", 3)) {
		const char *nl = strchr(p, '\n');

		if (!nl)
			break;
		p = nl + 1;
	}
	snprintf(s, sizeof(s), "%s", p);
	return s;
}

/* 1 if the rendered .sql begins with only comment lines before `rest`. */
static int only_comments_before(const char *sql, const char *rest)
{
	return strlen(sql) >= strlen(rest) &&
	       !strcmp(after_comments(sql), rest) && !strncmp(sql, "-- ", 3);
}

/*
 * 1 if `s` holds exactly `n` statements, each ended by a ';' outside
 * strings, quoted identifiers and comments, with nothing but blanks and
 * comments after the last: what sql-client.sh -i needs.
 */
static int terminated(const char *s, int n)
{
	int semis = 0, tokens = 0;
	const char *p = s;

	while (*p) {
		if (p[0] == '-' && p[1] == '-') {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");

			if (!e)
				return 0;
			p = e + 2;
		} else if (*p == '\'' || *p == '`' || *p == '"') {
			char q = *p++;

			for (; *p; p++)
				if (*p == q) {
					if (p[1] != q)
						break;
					p++;
				}
			if (!*p)
				return 0;
			p++;
			tokens++;
		} else if (*p == ';') {
			if (!tokens)
				return 0;	/* an empty statement */
			semis++;
			tokens = 0;
			p++;
		} else {
			if (!strchr(" \t\r\n", *p))
				tokens++;
			p++;
		}
	}
	return semis == n && !tokens;
}

/* ---- the MongoDB example (DESIGN.md) --------------------------------------- */

static void test_mongodb_example(void)
{
	struct fixture x;
	struct resolution res;
	struct buf b = BUF_INIT(1 << 20), want = BUF_INIT(1 << 20);
	struct ddl_table *t = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	char *ddl;
	const char *sql, *add, *v;
	size_t dlen = 0;
	int rc;

	ddl = fixture_read(MONGO_DDL_FILE, &dlen, "the MongoDB example");
	setup(&x);
	T_INTEQ(mkenv(&x, "prod"), 0);
	if (!ddl || put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
			    "connector", "mongodb"))
		goto out;
	T_INTEQ(table_write(&x, "prod", "orders", ddl), 0);

	/* Directly. */
	T_INTEQ(direct(&x, "prod", "orders", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b), MNT "/envs/prod/versions/mongodb-connector.jar/"
			     "1.jar\n");
	T_STREQ(res.table, "orders");
	T_INTEQ(res.njars, 1);
	T_STREQ(res.jars[0].name, "mongodb-connector.jar");
	T_INTEQ(res.jars[0].version, 1);
	T_STREQ(res.jars[0].kind, "connector");
	T_STREQ(res.jars[0].identifier, "mongodb");
	T_INTEQ(res.nbuiltin, 0);
	T_INTEQ(resolve_uses(&res, "mongodb-connector.jar"), 1);
	T_INTEQ(resolve_uses(&res, "other.jar"), 0);

	/* The .sql: a comment, ADD JAR, the DDL ending with ';'. */
	buf_reset(&b);
	T_INTEQ(direct(&x, "prod", "orders", &res, 1, MNT, 0, &b), 0);
	buf_adds(&want, "ADD JAR '" MNT "/envs/prod/versions/"
			"mongodb-connector.jar/1.jar';\n");
	statement(&want, ddl);
	sql = buf_str(&b);
	T_CHECK(only_comments_before(sql, buf_str(&want)));
	if (!only_comments_before(sql, buf_str(&want)))
		fprintf(stderr, "  got:\n%s\n  want after comments:\n%s\n",
			sql, buf_str(&want));
	T_CONTAINS(sql, "-- cmfs: table orders of environment prod");
	T_CONTAINS(sql, "_env_prod.default");
	T_CONTAINS(sql, "1970-01-01T00:00:00Z");
	T_CONTAINS(sql, "mongodb-connector.jar version 1");
	T_INTEQ(sql[b.len - 1], '\n');
	T_INTEQ(sql[b.len - 2], ';');
	T_CHECK(terminated(after_comments(sql), 2));	/* ADD JAR + DDL */
	/* The DDL in it parses back. */
	add = strstr(sql, "ADD JAR");
	if (add && strchr(add, '\n')) {
		const char *d = strchr(add, '\n') + 1;

		rc = ddl_parse(&t, d, strlen(d), &err);
		T_INTEQ(rc, 0);
		if (rc)
			fprintf(stderr, "  ddl_parse: %s\n", cmfs_err_msg(&err));
		if (t) {
			T_STREQ(ddl_table_name(t), "orders");
			v = ddl_option_get(t, "connector");
			T_STREQ(v, "mongodb");
			v = ddl_option_get(t, "collection");
			T_STREQ(v, "orders");
		}
		ddl_table_free(t);
	} else {
		T_CHECK(add != NULL);
	}

	/* Through the repo, with the mount point as prefix. */
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		MNT "/envs/prod/versions/mongodb-connector.jar/1.jar\n");
	T_INTEQ(rc, 0);
	T_CONTAINS(fixture_last_event(&x, "prod"),
		   "action=resolve table=orders");
	T_CONTAINS(fixture_last_event(&x, "prod"),
		   "jar=mongodb-connector.jar@1");
	T_CONTAINS(fixture_last_event(&x, "prod"), "result=ok");
	sql = resolved(&x, "prod", "orders", 1, &rc);
	T_INTEQ(rc, 0);
	T_CHECK(only_comments_before(sql, buf_str(&want)));
	/* A missing table. */
	T_ERRNO(direct(&x, "prod", "nope", &res, 0, MNT, 0, &b), ENOENT);
	T_STREQ(resolved(&x, "prod", "nope", 0, &rc), "");
	T_ERRNO(rc, ENOENT);
	T_STREQ(resolved(&x, "nope", "orders", 0, &rc), "");
	T_ERRNO(rc, ENOENT);
out:
	free(ddl);
	buf_release(&b);
	buf_release(&want);
	fixture_close(&x);
}

/* ---- rule 3: latest version ------------------------------------------------ */

static void test_latest_version(void)
{
	struct fixture x;
	struct resolution res;
	struct catalog_version v;
	struct buf b = BUF_INIT(1 << 20);
	char *v2;
	size_t len = 0;
	int rc;

	v2 = fixture_read(MONGO_V2_FILE, &len, "latest version");
	setup(&x);
	T_INTEQ(mkenv(&x, "prod"), 0);
	if (!v2 || put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
			   "connector", "mongodb"))
		goto out;
	T_INTEQ(table_write(&x, "prod", "orders",
			    "CREATE TABLE orders (id STRING) WITH ("
			    "'connector' = 'mongodb')"), 0);
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		MNT "/envs/prod/versions/mongodb-connector.jar/1.jar\n");
	T_INTEQ(upload(&x, "prod", "mongodb-connector.jar", v2, len, &v), 0);
	T_INTEQ(v.n, 2);
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		MNT "/envs/prod/versions/mongodb-connector.jar/2.jar\n");
	T_INTEQ(rc, 0);
	T_CONTAINS(resolved(&x, "prod", "orders", 1, &rc),
		   "ADD JAR '" MNT "/envs/prod/versions/mongodb-connector.jar/"
		   "2.jar';\n");
	T_INTEQ(direct(&x, "prod", "orders", &res, 0, MNT, 0, &b), 0);
	T_INTEQ(res.jars[0].version, 2);
	/* Removing version 2 pins version 1 again. */
	T_INTEQ(repo_ver_remove(x.r, &who, "prod", "mongodb-connector.jar", 2,
				NULL), 0);
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		MNT "/envs/prod/versions/mongodb-connector.jar/1.jar\n");
out:
	free(v2);
	buf_release(&b);
	fixture_close(&x);
}

/* ---- the .sql: each statement ends with exactly one ';' ------------------ */

static void test_statement_end(void)
{
	struct fixture x;
	struct ddl_table *t = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	static const struct {
		const char *name, *text;
	} c[] = {
		{ "e_plain", "CREATE TABLE e_plain (a INT) WITH ("
			     "'connector' = 'datagen')" },
		{ "e_semi", "CREATE TABLE e_semi (a INT) WITH ("
			    "'connector' = 'datagen');\n" },
		{ "e_blockc", "CREATE TABLE e_blockc (a INT) WITH ("
			      "'connector' = 'datagen') /* c */\n" },
		{ "e_dash_ml", "CREATE TABLE e_dash_ml (a INT) WITH (\n"
			       "'connector' = 'datagen') -- c\n" },
		{ "e_dash_str", "CREATE TABLE e_dash_str (a INT) WITH (\n"
				"'connector' = 'datagen', 'x' = 'a--b')" },
		{ "e_semi_dash_1", "CREATE TABLE e_semi_dash_1 (a INT) WITH ("
				   "'connector' = 'datagen'); -- c\n" },
		/* One line ending in a -- comment, no ';'. */
		{ "e_dash_1", "CREATE TABLE e_dash_1 (a INT) WITH ("
			      "'connector' = 'datagen') -- c\n" },
		/* ';' then comments on lines of their own (095). */
		{ "e_semi_then", "CREATE TABLE e_semi_then (a INT) WITH ("
				 "'connector' = 'datagen');\n"
				 "-- nothing else follows\n"
				 "/* really nothing */\n" },
		{ "e_semi_dash_ml", "CREATE TABLE e_semi_dash_ml (a INT) WITH ("
				    "'connector' = 'datagen');\n-- c\n" },
	};
	size_t i;
	int rc;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *sql, *tail;
		int ok;

		T_INTEQ(table_write(&x, "dev", c[i].name, c[i].text), 0);
		sql = resolved(&x, "dev", c[i].name, 1, &rc);
		T_INTEQ(rc, 0);
		tail = after_comments(sql);
		T_CHECK(!strncmp(tail, "CREATE TABLE ", 13));
		ok = terminated(tail, 1);
		T_CHECK(ok);
		rc = ddl_parse(&t, tail, strlen(tail), &err);
		T_INTEQ(rc, 0);
		if (!ok || rc)
			fprintf(stderr, "  %s: .sql statement:\n%s  (%s)\n",
				c[i].name, tail, cmfs_err_msg(&err));
		cmfs_err_clear(&err);
		ddl_table_free(t);
		t = NULL;
	}
	fixture_close(&x);
}

/* ---- the allowlist, many classes ------------------------------------------- */

static void test_allowlist_many(void)
{
	struct fixture x;
	struct config narrow;
	struct resolution res;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	if (put_jar(&x, "dev", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb"))
		goto out;
	T_INTEQ(table_write(&x, "dev", "t",
			    "CREATE TABLE t (id INT) WITH ("
			    "'connector' = 'mongodb')"), 0);
	T_INTEQ(direct(&x, "dev", "t", &res, 0, MNT, 0, NULL), 0);
	/* Only Flink's own classes allowed: the 16 java.* ones that
	 * compiling loads refused (reach.h; 18 by the class-level walk). */
	config_like(&narrow, &x, NULL, NULL);
	free(narrow.sql.class_allowlist);
	narrow.sql.class_allowlist = strdup("org.apache.flink.*");
	repo_set_config(x.r, &narrow);
	T_ERRNO(direct(&x, "dev", "t", &res, 0, MNT, 0, NULL), EPERM);
	T_CONTAINS(last_msg, "mongodb-connector.jar");
	T_CONTAINS(last_msg, "16 classes");
	T_CONTAINS(last_msg, "java.lang.Object");
	/* An empty allowlist allows nothing. */
	free(narrow.sql.class_allowlist);
	narrow.sql.class_allowlist = strdup("");
	T_ERRNO(direct(&x, "dev", "t", &res, 0, MNT, 0, NULL), EPERM);
	T_CONTAINS(last_msg, "23 classes");
	repo_set_config(x.r, &x.cfg);
	config_release(&narrow);
out:
	fixture_close(&x);
}

/* ---- rules 2 and 3: ambiguity and built-ins ------------------------------- */

static void test_ambiguous(void)
{
	struct fixture x;
	struct resolution res;
	int rc;

	setup(&x);
	T_INTEQ(mkenv(&x, "prod"), 0);
	if (put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb") ||
	    put_jar(&x, "prod", "mongodb.jar", "mongo-copy.jar", "connector",
		    "mongodb"))
		goto out;
	T_INTEQ(table_write(&x, "prod", "orders",
			    "CREATE TABLE orders (id STRING) WITH ("
			    "'connector' = 'mongodb')"), 0);
	T_ERRNO(direct(&x, "prod", "orders", &res, 0, MNT, 0, NULL), ENOTUNIQ);
	T_CONTAINS(last_msg, "connector 'mongodb' is ambiguous");
	T_CONTAINS(last_msg, "mongo-copy.jar");
	T_CONTAINS(last_msg, "mongodb-connector.jar");
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc), "");
	T_ERRNO(rc, ENOTUNIQ);
	T_CONTAINS(last_msg, "mongo-copy.jar, mongodb-connector.jar");
	T_CONTAINS(fixture_last_event(&x, "prod"),
		   "action=resolve table=orders");
	T_CONTAINS(fixture_last_event(&x, "prod"), "errno=ENOTUNIQ");
	T_STREQ(resolved(&x, "prod", "orders", 1, &rc), "");
	T_ERRNO(rc, ENOTUNIQ);
	/* Neither is "used by" an ambiguous table. */
	T_STREQ(used_by(&x, "prod", "mongodb-connector.jar"), "");
	T_STREQ(used_by(&x, "prod", "mongo-copy.jar"), "");

	/* Removing the type label of one settles it. */
	T_INTEQ(repo_label_remove(x.r, &who, "prod", "mongo-copy.jar", TYPE,
				  NULL), 0);
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		MNT "/envs/prod/versions/mongodb-connector.jar/1.jar\n");
	T_INTEQ(rc, 0);

	/* Same for a format artifact. */
	if (put_jar(&x, "prod", "fmt-jsonish.jar", "a-json-ish.jar", "format",
		    "json-ish") ||
	    put_jar(&x, "prod", "fmt-jsonish.jar", "b-json-ish.jar", "format",
		    "json-ish"))
		goto out;
	T_INTEQ(table_write(&x, "prod", "fo",
			    "CREATE TABLE fo (id STRING) WITH ("
			    "'connector' = 'mongodb', 'format' = 'json-ish')"),
		0);
	T_ERRNO(direct(&x, "prod", "fo", &res, 0, MNT, 0, NULL), ENOTUNIQ);
	T_CONTAINS(last_msg, "format 'json-ish' is ambiguous");
	T_CONTAINS(last_msg, "a-json-ish.jar, b-json-ish.jar");
out:
	fixture_close(&x);
}

static void test_builtin(void)
{
	struct fixture x;
	struct resolution res;
	struct buf b = BUF_INIT(1 << 20), want = BUF_INIT(1 << 20);
	const char *gen = "CREATE TABLE gen (id INT) WITH ("
			  "'connector' = 'datagen', 'rows-per-second' = '5')";
	const char *fs = "CREATE TABLE files (id INT) WITH ("
			 "'connector' = 'filesystem', 'path' = '/data', "
			 "'format' = 'json');\n";
	const char *sql;
	int rc;

	setup(&x);
	T_INTEQ(mkenv(&x, "prod"), 0);
	T_INTEQ(table_write(&x, "prod", "gen", gen), 0);
	T_INTEQ(table_write(&x, "prod", "files", fs), 0);

	/* A built-in connector and format need no JAR. */
	T_INTEQ(direct(&x, "prod", "gen", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b), "");
	T_INTEQ(res.njars, 0);
	T_INTEQ(res.nbuiltin, 1);
	T_STREQ(res.builtin[0], "datagen");
	T_STREQ(resolved(&x, "prod", "gen", 0, &rc), "");
	T_INTEQ(rc, 0);
	sql = resolved(&x, "prod", "gen", 1, &rc);
	T_INTEQ(rc, 0);
	statement(&want, gen);
	T_CHECK(only_comments_before(sql, buf_str(&want)));
	T_CHECK(strstr(sql, "ADD JAR") == NULL);
	T_CONTAINS(sql, "datagen");

	buf_reset(&b);
	T_INTEQ(direct(&x, "prod", "files", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b), "");
	T_INTEQ(res.njars, 0);
	T_INTEQ(res.nbuiltin, 2);
	T_STREQ(res.builtin[0], "filesystem");
	T_STREQ(res.builtin[1], "json");
	buf_reset(&want);
	statement(&want, fs);
	sql = resolved(&x, "prod", "files", 1, &rc);
	T_INTEQ(rc, 0);
	T_CHECK(only_comments_before(sql, buf_str(&want)));

	/* A built-in claimed by an artifact: its identifiers are unknown, so
	 * the label is accepted, and the identifier becomes ambiguous. */
	if (put_jar(&x, "prod", "runtime-id.jar", "rt.jar", "format", "json"))
		goto out;
	T_ERRNO(direct(&x, "prod", "files", &res, 0, MNT, 0, NULL), ENOTUNIQ);
	T_CONTAINS(last_msg, "format 'json' is ambiguous");
	T_CONTAINS(last_msg, "built into the cluster");
	T_CONTAINS(last_msg, "rt.jar");
	T_STREQ(resolved(&x, "prod", "files", 0, &rc), "");
	T_ERRNO(rc, ENOTUNIQ);
	T_CONTAINS(fixture_last_event(&x, "prod"), "errno=ENOTUNIQ");
	/* The table that does not name json is unaffected. */
	T_INTEQ(direct(&x, "prod", "gen", &res, 0, MNT, 0, NULL), 0);
	/* A built-in connector claimed by an artifact (a connector of
	 * unknown identifier): ambiguous too. */
	if (put_jar(&x, "prod", "const-id.jar", "my-datagen.jar", "connector",
		    "datagen"))
		goto out;
	T_ERRNO(direct(&x, "prod", "gen", &res, 0, MNT, 0, NULL), ENOTUNIQ);
	T_CONTAINS(last_msg, "connector 'datagen' is ambiguous");
	T_CONTAINS(last_msg, "built into the cluster");
	T_CONTAINS(last_msg, "my-datagen.jar");
	T_STREQ(resolved(&x, "prod", "gen", 1, &rc), "");
	T_ERRNO(rc, ENOTUNIQ);
out:
	buf_release(&b);
	buf_release(&want);
	fixture_close(&x);
}

/* ---- rule 3: none; no connector -------------------------------------------- */

static void test_missing(void)
{
	struct fixture x;
	struct resolution res;
	int rc;

	setup(&x);
	T_INTEQ(mkenv(&x, "prod"), 0);
	T_INTEQ(mkenv(&x, "empty"), 0);
	T_INTEQ(table_write(&x, "prod", "k",
			    "CREATE TABLE k (id INT) WITH ("
			    "'connector' = 'kafka-nope', 'topic' = 't')"), 0);
	T_INTEQ(table_write(&x, "empty", "k",
			    "CREATE TABLE k (id INT) WITH ("
			    "'connector' = 'kafka-nope')"), 0);
	/* Nothing at all. */
	T_ERRNO(direct(&x, "empty", "k", &res, 0, MNT, 0, NULL), ENOPKG);
	T_CONTAINS(last_msg, "'kafka-nope'");
	T_CONTAINS(last_msg, "connector identifiers here: none");
	T_STREQ(resolved(&x, "empty", "k", 0, &rc), "");
	T_ERRNO(rc, ENOPKG);
	T_CONTAINS(fixture_last_event(&x, "empty"), "errno=ENOPKG");

	if (put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb") ||
	    put_jar(&x, "prod", "fmt-jsonish.jar", "json-ish.jar", "format",
		    "json-ish"))
		goto out;
	/* The connector identifiers that do exist are listed. */
	T_ERRNO(direct(&x, "prod", "k", &res, 0, MNT, 0, NULL), ENOPKG);
	T_CONTAINS(last_msg, "no connector artifact has identifier "
			     "'kafka-nope'");
	T_CONTAINS(last_msg, "mongodb (mongodb-connector.jar)");
	T_CHECK(strstr(last_msg, "json-ish") == NULL);
	T_STREQ(resolved(&x, "prod", "k", 0, &rc), "");
	T_ERRNO(rc, ENOPKG);
	T_CONTAINS(last_msg, "mongodb (mongodb-connector.jar)");
	T_CONTAINS(fixture_last_event(&x, "prod"), "action=resolve table=k");
	T_CONTAINS(fixture_last_event(&x, "prod"), "errno=ENOPKG");
	/* Same for a format: the format identifiers, not the connectors. */
	T_INTEQ(table_write(&x, "prod", "f",
			    "CREATE TABLE f (id INT) WITH ("
			    "'connector' = 'mongodb', 'value.format' = "
			    "'yaml-ish')"), 0);
	T_ERRNO(direct(&x, "prod", "f", &res, 0, MNT, 0, NULL), ENOPKG);
	T_CONTAINS(last_msg, "no format artifact has identifier 'yaml-ish'");
	T_CONTAINS(last_msg, "json-ish (json-ish.jar)");
	T_CHECK(strstr(last_msg, "mongodb") == NULL);

	/* A table without a connector option. */
	T_INTEQ(table_write(&x, "prod", "noconn",
			    "CREATE TABLE noconn (id INT)"), 0);
	T_ERRNO(direct(&x, "prod", "noconn", &res, 0, MNT, 0, NULL), EINVAL);
	T_CONTAINS(last_msg, "noconn");
	T_CONTAINS(last_msg, "no 'connector' option");
	T_INTEQ(table_write(&x, "prod", "noconn2",
			    "CREATE TABLE noconn2 (id INT) WITH ("
			    "'format' = 'json-ish')"), 0);
	T_ERRNO(direct(&x, "prod", "noconn2", &res, 0, MNT, 0, NULL), EINVAL);
	T_STREQ(resolved(&x, "prod", "noconn", 0, &rc), "");
	T_ERRNO(rc, EINVAL);
	T_CONTAINS(fixture_last_event(&x, "prod"), "errno=EINVAL");
out:
	fixture_close(&x);
}

/* ---- rules 1 and 4: formats ------------------------------------------------ */

static void test_formats(void)
{
	struct fixture x;
	struct resolution res;
	struct buf b = BUF_INIT(1 << 20);
	const char *mj = MNT "/envs/dev/versions/mongodb-connector.jar/1.jar\n";
	const char *fj = MNT "/envs/dev/versions/json-ish.jar/1.jar\n";
	const char *bj = MNT "/envs/dev/versions/bundle.jar/1.jar\n";
	char want[1024];
	const char *sql;
	int rc;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	if (put_jar(&x, "dev", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb") ||
	    put_jar(&x, "dev", "fmt-jsonish.jar", "json-ish.jar", "format",
		    "json-ish") ||
	    put_jar(&x, "dev", "bundle.jar", "bundle.jar", "connector",
		    "kafka-ish"))
		goto out;

	/* key.format and value.format naming one format artifact: once,
	 * after the connector. */
	T_INTEQ(table_write(&x, "dev", "kv",
			    "CREATE TABLE kv (id INT) WITH ("
			    "'connector' = 'mongodb', "
			    "'key.format' = 'json-ish', "
			    "'value.format' = 'json-ish')"), 0);
	snprintf(want, sizeof(want), "%s%s", mj, fj);
	T_INTEQ(direct(&x, "dev", "kv", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b), want);
	T_INTEQ(res.njars, 2);
	T_STREQ(res.jars[0].kind, "connector");
	T_STREQ(res.jars[1].kind, "format");
	T_STREQ(res.jars[1].identifier, "json-ish");
	T_STREQ(resolved(&x, "dev", "kv", 0, &rc), want);
	sql = resolved(&x, "dev", "kv", 1, &rc);
	T_CONTAINS(sql, "ADD JAR '" MNT "/envs/dev/versions/"
			"mongodb-connector.jar/1.jar';\n"
			"ADD JAR '" MNT "/envs/dev/versions/json-ish.jar/"
			"1.jar';\nCREATE TABLE kv");

	/* Connector first, whatever the order of the options. */
	T_INTEQ(table_write(&x, "dev", "order1",
			    "CREATE TABLE order1 (id INT) WITH ("
			    "'value.format' = 'json-ish', "
			    "'connector' = 'mongodb')"), 0);
	buf_reset(&b);
	T_INTEQ(direct(&x, "dev", "order1", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b), want);
	T_STREQ(resolved(&x, "dev", "order1", 0, &rc), want);
	T_INTEQ(table_write(&x, "dev", "order2",
			    "CREATE TABLE order2 (id INT) WITH ("
			    "'format' = 'json-ish', "
			    "'connector' = 'mongodb')"), 0);
	T_STREQ(resolved(&x, "dev", "order2", 0, &rc), want);

	/* A format bundled in the table's own connector JAR: no extra JAR. */
	T_INTEQ(table_write(&x, "dev", "bun",
			    "CREATE TABLE bun (id INT) WITH ("
			    "'connector' = 'kafka-ish', "
			    "'value.format' = 'avro-ish')"), 0);
	buf_reset(&b);
	T_INTEQ(direct(&x, "dev", "bun", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b), bj);
	T_INTEQ(res.njars, 1);
	T_INTEQ(res.nbuiltin, 1);
	T_CONTAINS(res.builtin[0], "avro-ish");
	T_CONTAINS(res.builtin[0], "bundle.jar");
	T_STREQ(resolved(&x, "dev", "bun", 0, &rc), bj);
	T_INTEQ(rc, 0);
	/* ... and with another format artifact beside it. */
	T_INTEQ(table_write(&x, "dev", "bun2",
			    "CREATE TABLE bun2 (id INT) WITH ("
			    "'connector' = 'kafka-ish', "
			    "'key.format' = 'json-ish', "
			    "'value.format' = 'avro-ish')"), 0);
	snprintf(want, sizeof(want), "%s%s", bj, fj);
	T_STREQ(resolved(&x, "dev", "bun2", 0, &rc), want);
	T_INTEQ(rc, 0);

	/* Bundled in the connector's JAR and carried by a format artifact
	 * too: two factories with one identifier to Flink (DESIGN.md,
	 * Resolution step 4). */
	if (put_jar(&x, "dev", "bundle.jar", "avro-fmt.jar", "format",
		    "avro-ish"))
		goto out;
	T_ERRNO(direct(&x, "dev", "bun", &res, 0, MNT, 0, NULL), ENOTUNIQ);
	T_CONTAINS(last_msg, "format 'avro-ish' is ambiguous");
	T_CONTAINS(last_msg, "bundle.jar");
	T_CONTAINS(last_msg, "avro-fmt.jar");
	T_STREQ(resolved(&x, "dev", "bun", 0, &rc), "");
	T_ERRNO(rc, ENOTUNIQ);
	/* ... the artifact removed, the bundled one serves again. */
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "avro-fmt.jar", NULL), 0);
	T_STREQ(resolved(&x, "dev", "bun", 0, &rc), bj);
	T_INTEQ(rc, 0);

	/* Bundled only in another connector's JAR: an error that says so. */
	T_INTEQ(table_write(&x, "dev", "other",
			    "CREATE TABLE other (id INT) WITH ("
			    "'connector' = 'mongodb', "
			    "'value.format' = 'avro-ish')"), 0);
	T_ERRNO(direct(&x, "dev", "other", &res, 0, MNT, 0, NULL), ENOPKG);
	T_CONTAINS(last_msg, "'avro-ish'");
	T_CONTAINS(last_msg, "bundle.jar");
	T_CONTAINS(last_msg, "upload it as a format artifact");
	T_STREQ(resolved(&x, "dev", "other", 0, &rc), "");
	T_ERRNO(rc, ENOPKG);
	T_CONTAINS(last_msg, "bundle.jar");
	/* ... also with a built-in connector. */
	T_INTEQ(table_write(&x, "dev", "other2",
			    "CREATE TABLE other2 (id INT) WITH ("
			    "'connector' = 'filesystem', 'path' = '/d', "
			    "'format' = 'avro-ish')"), 0);
	T_ERRNO(direct(&x, "dev", "other2", &res, 0, MNT, 0, NULL), ENOPKG);
	T_CONTAINS(last_msg, "bundle.jar");
	T_CONTAINS(last_msg, "upload it as a format artifact");

	/* Other *.format keys are the connector's own options (DESIGN.md,
	 * Resolution step 1): a built-in format's name there needs
	 * nothing ... */
	T_INTEQ(table_write(&x, "dev", "orc",
			    "CREATE TABLE orc (id INT) WITH ("
			    "'connector' = 'mongodb', "
			    "'file.format' = 'csv')"), 0);
	buf_reset(&b);
	T_INTEQ(direct(&x, "dev", "orc", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b), mj);
	T_INTEQ(res.nbuiltin, 0);
	/* ... an unknown one is left to the connector ... */
	T_INTEQ(table_write(&x, "dev", "unk",
			    "CREATE TABLE unk (id INT) WITH ("
			    "'connector' = 'mongodb', "
			    "'file.format' = 'something-unknown')"), 0);
	buf_reset(&b);
	T_INTEQ(direct(&x, "dev", "unk", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b), mj);
	T_INTEQ(res.njars, 1);
	T_INTEQ(res.nbuiltin, 0);
	T_STREQ(resolved(&x, "dev", "unk", 0, &rc), mj);
	T_INTEQ(rc, 0);
	/* ... and a format artifact with that identifier is not pulled in
	 * (StarRocks' 'sink.properties.format' = 'json'). */
	T_INTEQ(table_write(&x, "dev", "fa",
			    "CREATE TABLE fa (id INT) WITH ("
			    "'connector' = 'mongodb', "
			    "'sink.file.format' = 'json-ish')"), 0);
	T_STREQ(resolved(&x, "dev", "fa", 0, &rc), mj);
	T_INTEQ(rc, 0);
	/* A key merely containing "format" is no format key. */
	T_INTEQ(table_write(&x, "dev", "nf",
			    "CREATE TABLE nf (id INT) WITH ("
			    "'connector' = 'mongodb', "
			    "'formatx' = 'json-ish', "
			    "'format.x' = 'json-ish')"), 0);
	T_STREQ(resolved(&x, "dev", "nf", 0, &rc), mj);
	T_INTEQ(rc, 0);
out:
	buf_release(&b);
	fixture_close(&x);
}

/* ---- rule 5: not a JAR, no factory ---------------------------------------- */

static void test_not_jar(void)
{
	struct fixture x;
	struct resolution res;
	struct catalog_env e;
	struct catalog_artifact a;
	struct catalog *c;
	char *mongo, *plain;
	size_t mlen = 0, plen = 0;
	int rc;

	mongo = fixture_jar("mongodb.jar", &mlen, "a non-JAR name");
	plain = fixture_read("integ/data/plain-v1.jar", &plen,
			     "a zip without factories");
	setup(&x);
	c = repo_catalog(x.r);
	T_INTEQ(mkenv(&x, "dev"), 0);
	if (!mongo)
		goto out;
	/* Stored, labels stored, but refused by resolution. */
	T_INTEQ(upload(&x, "dev", "legacy-connector.zip", mongo, mlen, NULL),
		0);
	T_INTEQ(label2(&x, "dev", "legacy-connector.zip", "connector",
		       "legacy"), 0);
	T_INTEQ(table_write(&x, "dev", "t",
			    "CREATE TABLE t (id INT) WITH ("
			    "'connector' = 'legacy')"), 0);
	T_ERRNO(direct(&x, "dev", "t", &res, 0, MNT, 0, NULL), ENOEXEC);
	T_CONTAINS(last_msg, "legacy-connector.zip");
	T_CONTAINS(last_msg, ".jar");
	T_STREQ(resolved(&x, "dev", "t", 0, &rc), "");
	T_ERRNO(rc, ENOEXEC);
	T_CONTAINS(fixture_last_event(&x, "dev"), "errno=ENOEXEC");
	/* A format artifact, too. */
	T_INTEQ(upload(&x, "dev", "fmt.txt", "not a jar", 9, NULL), 0);
	T_INTEQ(label2(&x, "dev", "fmt.txt", "format", "txt-ish"), 0);
	T_INTEQ(table_write(&x, "dev", "t2",
			    "CREATE TABLE t2 (id INT) WITH ("
			    "'connector' = 'datagen', "
			    "'format' = 'txt-ish')"), 0);
	T_ERRNO(direct(&x, "dev", "t2", &res, 0, MNT, 0, NULL), ENOEXEC);
	T_CONTAINS(last_msg, "fmt.txt");

	/* A *.jar without a factory service file: its labels are refused at
	 * set time; set behind the repo's back, resolution refuses it. */
	if (!plain)
		goto out;
	T_INTEQ(upload(&x, "dev", "plain.jar", plain, plen, NULL), 0);
	T_ERRNO(set_label(&x, "dev", "plain.jar", TYPE, "connector"), EINVAL);
	T_INTEQ(catalog_env_get(c, "dev", &e, NULL), 0);
	T_INTEQ(catalog_art_get(c, e.id, "plain.jar", &a, NULL), 0);
	T_INTEQ(catalog_label_set(c, a.id, TYPE, "connector", NULL), 0);
	T_INTEQ(catalog_label_set(c, a.id, IDENT, "plain", NULL), 0);
	T_INTEQ(table_write(&x, "dev", "p",
			    "CREATE TABLE p (id INT) WITH ("
			    "'connector' = 'plain')"), 0);
	T_ERRNO(direct(&x, "dev", "p", &res, 0, MNT, 0, NULL), ENOEXEC);
	T_CONTAINS(last_msg, "plain.jar");
	T_CONTAINS(last_msg, "not a factory JAR");
out:
	free(mongo);
	free(plain);
	fixture_close(&x);
}

/* ---- rule 6: the class allowlist ------------------------------------------- */

static void test_allowlist(void)
{
	struct fixture x;
	struct config wide, half;
	struct resolution res;
	const char *gj = MNT "/envs/dev/versions/guava-ish.jar/1.jar\n";
	int rc;

	setup(&x);
	config_like(&wide, &x, "com.google.common.*,okhttp3.*", NULL);
	config_like(&half, &x, "com.google.common.*", NULL);
	T_INTEQ(mkenv(&x, "dev"), 0);
	if (put_jar(&x, "dev", "guava-ref.jar", "guava-ish.jar", "connector",
		    "guava-ish"))
		goto out;
	T_INTEQ(table_write(&x, "dev", "g",
			    "CREATE TABLE g (id INT) WITH ("
			    "'connector' = 'guava-ish')"), 0);
	T_ERRNO(direct(&x, "dev", "g", &res, 0, MNT, 0, NULL), EPERM);
	T_CONTAINS(last_msg, "guava-ish.jar");
	T_CONTAINS(last_msg, "com.google.common.collect.ImmutableList");
	T_CONTAINS(last_msg, "okhttp3.OkHttpClient");
	T_CONTAINS(last_msg, "class_allowlist");
	T_STREQ(resolved(&x, "dev", "g", 0, &rc), "");
	T_ERRNO(rc, EPERM);
	T_CONTAINS(last_msg, "okhttp3.OkHttpClient");
	T_CONTAINS(fixture_last_event(&x, "dev"), "errno=EPERM");
	T_STREQ(used_by(&x, "dev", "guava-ish.jar"), "");

	/* Half widened: only the other one is named. */
	repo_set_config(x.r, &half);
	T_ERRNO(direct(&x, "dev", "g", &res, 0, MNT, 0, NULL), EPERM);
	T_CONTAINS(last_msg, "okhttp3.OkHttpClient");
	T_CHECK(strstr(last_msg, "com.google.common") == NULL);

	/* Widened: it resolves. */
	repo_set_config(x.r, &wide);
	T_INTEQ(direct(&x, "dev", "g", &res, 0, MNT, 0, NULL), 0);
	T_STREQ(resolved(&x, "dev", "g", 0, &rc), gj);
	T_INTEQ(rc, 0);
	T_STREQ(used_by(&x, "dev", "guava-ish.jar"), "g");

	/* And back. */
	repo_set_config(x.r, &x.cfg);
	T_STREQ(resolved(&x, "dev", "g", 0, &rc), "");
	T_ERRNO(rc, EPERM);
out:
	repo_set_config(x.r, &x.cfg);
	config_release(&wide);
	config_release(&half);
	fixture_close(&x);
}

/* ---- LIKE ------------------------------------------------------------------ */

static void test_like(void)
{
	struct fixture x;
	struct resolution res;
	struct buf b = BUF_INIT(1 << 20), want = BUF_INIT(1 << 20);
	struct ddl_table *src = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	const char *copy = "CREATE TABLE orders_copy WITH ("
			   "'collection' = 'orders_copy') LIKE orders";
	const char *mj = MNT "/envs/prod/versions/mongodb-connector.jar/1.jar\n";
	const char *sql, *a, *o;
	char *ddl;
	size_t dlen = 0;
	int rc;

	ddl = fixture_read(MONGO_DDL_FILE, &dlen, "LIKE");
	setup(&x);
	T_INTEQ(mkenv(&x, "prod"), 0);
	if (!ddl || put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
			    "connector", "mongodb"))
		goto out;
	T_INTEQ(table_write(&x, "prod", "orders", ddl), 0);
	T_INTEQ(table_write(&x, "prod", "orders_copy", copy), 0);

	T_INTEQ(direct(&x, "prod", "orders_copy", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b), mj);
	T_STREQ(res.jars[0].identifier, "mongodb");
	T_STREQ(resolved(&x, "prod", "orders_copy", 0, &rc), mj);
	T_INTEQ(rc, 0);

	/* The .sql: ADD JAR, the source's DDL (as merged at write time, one
	 * whole statement), then the table's own. */
	sql = resolved(&x, "prod", "orders_copy", 1, &rc);
	T_INTEQ(rc, 0);
	a = strstr(sql, "CREATE TABLE orders (");
	if (!a)
		a = strstr(sql, "CREATE TABLE `orders`");
	o = strstr(sql, "CREATE TABLE orders_copy");
	T_CHECK(a != NULL);
	T_CHECK(o != NULL);
	T_CHECK(a && o && a < o);
	T_CHECK(strstr(sql, "ADD JAR") && a && strstr(sql, "ADD JAR") < a);
	rc = ddl_parse(&src, ddl, dlen, &err);
	T_INTEQ(rc, 0);
	if (!rc) {
		buf_adds(&want, "ADD JAR '" MNT "/envs/prod/versions/"
				"mongodb-connector.jar/1.jar';\n");
		ddl_format(&want, src);
		statement(&want, copy);
		T_CHECK(only_comments_before(sql, buf_str(&want)));
		if (!only_comments_before(sql, buf_str(&want)))
			fprintf(stderr, "  got:\n%s\n  want after comments:"
					"\n%s\n", sql, buf_str(&want));
	}
	T_CHECK(terminated(after_comments(sql), 3));
	ddl_table_free(src);
	src = NULL;
	/* The source's statement parses back to orders on the connector. */
	if (a && o && a < o) {
		rc = ddl_parse(&src, a, (size_t)(o - a), &err);
		T_INTEQ(rc, 0);
		if (src) {
			T_STREQ(ddl_table_name(src), "orders");
			T_STREQ(ddl_option_get(src, "connector"), "mongodb");
		}
		ddl_table_free(src);
	}

	/* The merge stays when the source goes. */
	T_INTEQ(repo_table_remove(x.r, &who, "prod", "orders", NULL), 0);
	T_STREQ(resolved(&x, "prod", "orders_copy", 0, &rc), mj);
	T_INTEQ(rc, 0);
	T_CONTAINS(resolved(&x, "prod", "orders_copy", 1, &rc),
		   "CREATE TABLE orders_copy");
out:
	free(ddl);
	buf_release(&b);
	buf_release(&want);
	fixture_close(&x);
}

/* ---- deletion and used-by -------------------------------------------------- */

static void test_delete_used_by(void)
{
	struct fixture x;
	struct resolution res;
	int rc;

	setup(&x);
	T_INTEQ(mkenv(&x, "prod"), 0);
	if (put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb") ||
	    put_jar(&x, "prod", "fmt-jsonish.jar", "json-ish.jar", "format",
		    "json-ish"))
		goto out;
	T_INTEQ(table_write(&x, "prod", "orders",
			    "CREATE TABLE orders (id INT) WITH ("
			    "'connector' = 'mongodb')"), 0);
	T_INTEQ(table_write(&x, "prod", "archive",
			    "CREATE TABLE archive (id INT) WITH ("
			    "'connector' = 'mongodb', "
			    "'value.format' = 'json-ish')"), 0);
	T_INTEQ(table_write(&x, "prod", "gen",
			    "CREATE TABLE gen (id INT) WITH ("
			    "'connector' = 'datagen')"), 0);

	T_STREQ(used_by(&x, "prod", "mongodb-connector.jar"),
		"archive\norders");
	T_STREQ(used_by(&x, "prod", "json-ish.jar"), "archive");
	T_STREQ(used_by(&x, "prod", "nothing.jar"), "");

	T_INTEQ(repo_art_remove(x.r, &who, "prod", "mongodb-connector.jar",
				NULL), 0);
	T_ERRNO(direct(&x, "prod", "orders", &res, 0, MNT, 0, NULL), ENOPKG);
	T_CONTAINS(last_msg, "'mongodb'");
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc), "");
	T_ERRNO(rc, ENOPKG);
	T_ERRNO(direct(&x, "prod", "archive", &res, 0, MNT, 0, NULL), ENOPKG);
	T_STREQ(used_by(&x, "prod", "mongodb-connector.jar"), "");
	/* The format artifact is used by no table that resolves now. */
	T_STREQ(used_by(&x, "prod", "json-ish.jar"), "");
	T_INTEQ(direct(&x, "prod", "gen", &res, 0, MNT, 0, NULL), 0);

	/* Uploaded again: a new artifact, version 1, used again. */
	if (put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb"))
		goto out;
	T_STREQ(used_by(&x, "prod", "mongodb-connector.jar"),
		"archive\norders");
out:
	fixture_close(&x);
}

/* ---- jar_path_prefix ------------------------------------------------------- */

static void test_prefix(void)
{
	struct fixture x;
	struct config other;
	int rc;
	const char *t = "CREATE TABLE orders (id INT) WITH ("
			"'connector' = 'mongodb')";

	/* Configured: used instead of the mount point. */
	setup_with(&x, "/opt/flink/usrlib", "/mnt/elsewhere");
	T_INTEQ(mkenv(&x, "prod"), 0);
	if (put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb"))
		goto out1;
	T_INTEQ(table_write(&x, "prod", "orders", t), 0);
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		"/opt/flink/usrlib/envs/prod/versions/mongodb-connector.jar/"
		"1.jar\n");
	T_INTEQ(rc, 0);
	T_CONTAINS(resolved(&x, "prod", "orders", 1, &rc),
		   "\nADD JAR '/opt/flink/usrlib/envs/prod/versions/"
		   "mongodb-connector.jar/1.jar';\n");
	T_CHECK(strstr(resolved(&x, "prod", "orders", 1, &rc),
		       "/mnt/elsewhere") == NULL);
	/* A new configuration without it (SIGHUP): the mount point. */
	config_like(&other, &x, NULL, NULL);
	repo_set_config(x.r, &other);
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		"/mnt/elsewhere/envs/prod/versions/mongodb-connector.jar/"
		"1.jar\n");
	repo_set_config(x.r, &x.cfg);
	config_release(&other);
out1:
	fixture_close(&x);

	/* Not configured: the mount point given to repo_open. */
	setup_with(&x, NULL, "/srv/cmfs");
	T_INTEQ(mkenv(&x, "prod"), 0);
	if (put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb"))
		goto out2;
	T_INTEQ(table_write(&x, "prod", "orders", t), 0);
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		"/srv/cmfs/envs/prod/versions/mongodb-connector.jar/1.jar\n");
	T_INTEQ(rc, 0);
	T_CONTAINS(resolved(&x, "prod", "orders", 1, &rc),
		   "\nADD JAR '/srv/cmfs/envs/prod/versions/"
		   "mongodb-connector.jar/1.jar';\n");
	/* Configured later (SIGHUP): the prefix wins. */
	config_like(&other, &x, NULL, "/opt/jars");
	repo_set_config(x.r, &other);
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		"/opt/jars/envs/prod/versions/mongodb-connector.jar/1.jar\n");
	repo_set_config(x.r, &x.cfg);
	config_release(&other);
out2:
	fixture_close(&x);
}

/* ---- an indexed look-up among many artifacts ------------------------------ */

static void test_many_artifacts(void)
{
	struct fixture x;
	struct resolution res;
	struct buf b = BUF_INIT(1 << 20);
	char name[32], body[32];
	int i, rc = 0, bad = 0;
	uint64_t n = 0;
	struct catalog_env e;

	setup(&x);
	T_INTEQ(mkenv(&x, "prod"), 0);
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "x%d.txt", i);
		snprintf(body, sizeof(body), "x %d\n", i);
		if (upload(&x, "prod", name, body, strlen(body), NULL))
			bad++;
	}
	T_INTEQ(bad, 0);
	/* A few unrelated labels, so label look-ups have rows to skip. */
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "x%d.txt", i);
		if (set_label(&x, "prod", name, "team", "data"))
			bad++;
	}
	T_INTEQ(bad, 0);
	if (put_jar(&x, "prod", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb"))
		goto out;
	T_INTEQ(catalog_env_get(repo_catalog(x.r), "prod", &e, NULL), 0);
	T_INTEQ(catalog_art_count(repo_catalog(x.r), e.id, &n, NULL), 0);
	T_INTEQ((long long)n, 2001);
	T_INTEQ(table_write(&x, "prod", "orders",
			    "CREATE TABLE orders (id INT) WITH ("
			    "'connector' = 'mongodb')"), 0);
	T_INTEQ(direct(&x, "prod", "orders", &res, 0, MNT, 0, &b), 0);
	T_STREQ(buf_str(&b),
		MNT "/envs/prod/versions/mongodb-connector.jar/1.jar\n");
	T_INTEQ(res.njars, 1);
	T_STREQ(resolved(&x, "prod", "orders", 0, &rc),
		MNT "/envs/prod/versions/mongodb-connector.jar/1.jar\n");
	T_INTEQ(rc, 0);
	T_STREQ(used_by(&x, "prod", "mongodb-connector.jar"), "orders");
	T_STREQ(used_by(&x, "prod", "x7.txt"), "");
	/* The missing-identifier message lists only labelled artifacts. */
	T_INTEQ(table_write(&x, "prod", "k",
			    "CREATE TABLE k (id INT) WITH ("
			    "'connector' = 'kafka-nope')"), 0);
	T_ERRNO(direct(&x, "prod", "k", &res, 0, MNT, 0, NULL), ENOPKG);
	T_CONTAINS(last_msg, "(connector identifiers here: mongodb "
			     "(mongodb-connector.jar))");
	T_CHECK(strstr(last_msg, ".txt") == NULL);
out:
	buf_release(&b);
	fixture_close(&x);
}

/* ---- the cache of resolutions and the queue of read events ---------------- */

/* Position of the last `needle` in `hay`, or -1. */
static long last_pos(const char *hay, const char *needle)
{
	const char *p, *last = NULL;

	for (p = hay; (p = strstr(p, needle)); p++)
		last = p;
	return last ? (long)(last - hay) : -1;
}

static void test_cache(void)
{
	struct fixture x;
	struct catalog *c;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct resolve_cache *rc_;
	struct resolution res, got;
	const char *all;
	uint64_t g0, n0 = 0, n1 = 0;
	int rc, code;

	/* resolve_cache on its own: a hit only under the same generation,
	 * configuration, environment and table; failing disks not kept. */
	rc_ = resolve_cache_new();
	T_CHECK(rc_ != NULL);
	memset(&res, 0, sizeof(res));
	res.njars = 1;
	snprintf(res.jars[0].name, sizeof(res.jars[0].name), "a.jar");
	res.jars[0].version = 3;
	res.nbuiltin = 1;
	snprintf(res.builtin[0], sizeof(res.builtin[0]), "json");
	resolve_cache_put(rc_, 7, &x, 1, "t", &res, 0, NULL);
	T_INTEQ(resolve_cache_get(rc_, 7, &x, 1, "t", &got, &code, &err), 1);
	T_INTEQ(code, 0);
	T_INTEQ(got.njars, 1);
	T_STREQ(got.jars[0].name, "a.jar");
	T_INTEQ(got.jars[0].version, 3);
	T_STREQ(got.builtin[0], "json");
	T_STREQ(got.table, "t");
	T_INTEQ(resolve_cache_get(rc_, 8, &x, 1, "t", &got, &code, &err), 0);
	T_INTEQ(resolve_cache_get(rc_, 7, &res, 1, "t", &got, &code, &err), 0);
	T_INTEQ(resolve_cache_get(rc_, 7, &x, 2, "t", &got, &code, &err), 0);
	T_INTEQ(resolve_cache_get(rc_, 7, &x, 1, "u", &got, &code, &err), 0);
	cmfs_err_set(&err, -ENOPKG, "no connector artifact has identifier x");
	resolve_cache_put(rc_, 9, &x, 1, "t", NULL, -ENOPKG, &err);
	cmfs_err_clear(&err);
	T_INTEQ(resolve_cache_get(rc_, 9, &x, 1, "t", &got, &code, &err), 1);
	T_ERRNO(code, ENOPKG);
	T_STREQ(cmfs_err_msg(&err), "no connector artifact has identifier x");
	cmfs_err_clear(&err);
	cmfs_err_set(&err, -EIO, "disk I/O error");
	resolve_cache_put(rc_, 10, &x, 1, "t", NULL, -EIO, &err);
	T_INTEQ(resolve_cache_get(rc_, 10, &x, 1, "t", &got, &code, &err), 0);
	/* Emptied before a configuration is freed (its address may come
	 * back as another's). */
	resolve_cache_put(rc_, 11, &x, 1, "t", &res, 0, NULL);
	T_INTEQ(resolve_cache_get(rc_, 11, &x, 1, "t", &got, &code, &err), 1);
	resolve_cache_clear(rc_);
	T_INTEQ(resolve_cache_get(rc_, 11, &x, 1, "t", &got, &code, &err), 0);
	resolve_cache_free(rc_);

	/* Through the repo: every change makes a new generation, and what
	 * was resolved before it is not served after it. */
	setup(&x);
	c = repo_catalog(x.r);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(table_write(&x, "dev", "orders",
			    "CREATE TABLE orders (id STRING) WITH ("
			    "'connector' = 'mongodb')"), 0);
	T_STREQ(resolved(&x, "dev", "orders", 0, &rc), "");
	T_ERRNO(rc, ENOPKG);
	T_STREQ(resolved(&x, "dev", "orders", 0, &rc), "");
	T_ERRNO(rc, ENOPKG);
	T_CONTAINS(last_msg, "no connector artifact has identifier 'mongodb'");
	g0 = catalog_generation(c);
	repo_events_size(x.r, "dev", &n0);
	T_CHECK(catalog_generation(c) == g0);	/* events are not rows */
	if (put_jar(&x, "dev", "mongodb.jar", "mongodb-connector.jar",
		    "connector", "mongodb"))
		goto out;
	T_CHECK(catalog_generation(c) > g0);
	T_STREQ(resolved(&x, "dev", "orders", 0, &rc),
		MNT "/envs/dev/versions/mongodb-connector.jar/1.jar\n");
	T_INTEQ(rc, 0);
	/* A label change alone is a change too. */
	T_INTEQ(repo_label_remove(x.r, &who, "dev", "mongodb-connector.jar",
				  IDENT, NULL), 0);
	T_STREQ(resolved(&x, "dev", "orders", 0, &rc), "");
	T_ERRNO(rc, ENOPKG);

	/* Each read has its line, in order with the changes around it, and
	 * events grows by them. */
	repo_events_size(x.r, "dev", &n1);
	T_CHECK(n1 > n0);
	all = fixture_events(&x, "dev");
	T_CHECK(last_pos(all, "action=resolve table=orders jar=mongodb-"
			      "connector.jar@1 result=ok") >= 0);
	T_CHECK(last_pos(all, "action=resolve table=orders jar=mongodb-"
			      "connector.jar@1 result=ok") <
		last_pos(all, "action=unlabel artifact=mongodb-connector.jar"));
	T_CHECK(last_pos(all, "action=unlabel artifact=mongodb-connector.jar") <
		last_pos(all, "action=resolve table=orders result=refused "
			      "errno=ENOPKG"));

	/* A line still queued at close is written by it. */
	T_INTEQ(set_label(&x, "dev", "mongodb-connector.jar", IDENT,
			  "mongodb"), 0);
	T_CONTAINS(resolved(&x, "dev", "orders", 1, &rc), "ADD JAR '");
	T_INTEQ(rc, 0);
	repo_close(x.r);
	x.r = NULL;
	if (repo_open(&x.r, &x.cfg, MNT, fixture_log, &x.log, &err)) {
		T_CHECK(!"reopen");
		goto out;
	}
	all = fixture_last_event(&x, "dev");
	T_CONTAINS(all, "action=resolve table=orders jar=mongodb-connector."
			"jar@1 result=ok");
out:
	fixture_close(&x);
}

int main(void)
{
	T_RUN(test_mongodb_example);
	T_RUN(test_latest_version);
	T_RUN(test_ambiguous);
	T_RUN(test_builtin);
	T_RUN(test_missing);
	T_RUN(test_formats);
	T_RUN(test_not_jar);
	T_RUN(test_allowlist);
	T_RUN(test_like);
	T_RUN(test_delete_used_by);
	T_RUN(test_prefix);
	T_RUN(test_many_artifacts);
	T_RUN(test_statement_end);
	T_RUN(test_allowlist_many);
	T_RUN(test_cache);
	return T_DONE();
}
