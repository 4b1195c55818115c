/*
 * test_catalog_pg.c - the PostgreSQL backend (catalog_pg.c) against a
 * real server: the one CMFS_TEST_PG_URL names (tests/integ/t_pg.sh
 * starts a private cluster and runs this with it).  Without it, nothing
 * runs.  Each test starts from an empty database.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buf.h"
#include "catalog.h"
#include "catalog_rows.h"
#include "jar.h"
#include "t.h"

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static const char *url;

/* Run `sql` on a connection of the test's own; the first column of its
 * first row as an integer, -1 when there is none. */
static long long pg_int(const char *sql)
{
	PGconn *conn = PQconnectdb(url);
	PGresult *res;
	long long v = -1;

	/* (DROP SCHEMA ... CASCADE's notices are not errors) */
	PQclear(PQexec(conn, "SET client_min_messages = warning"));
	res = PQexec(conn, sql);

	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0)
		v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	else if (PQresultStatus(res) != PGRES_COMMAND_OK &&
		 PQresultStatus(res) != PGRES_TUPLES_OK)
		fprintf(stderr, "%s: %s", sql, PQerrorMessage(conn));
	PQclear(res);
	PQfinish(conn);
	return v;
}

/* An empty database, and a catalog opened on it. */
static struct catalog *setup(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog *c = NULL;

	pg_int("DROP SCHEMA public CASCADE; CREATE SCHEMA public");
	if (catalog_open(&c, url, &err)) {
		fprintf(stderr, "catalog_open: %s\n", cmfs_err_msg(&err));
		exit(2);
	}
	return c;
}

static void test_open(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog *c, *d = NULL;
	char *check = NULL;

	pg_int("DROP SCHEMA public CASCADE; CREATE SCHEMA public");
	/* No schema yet: not a cmfs catalog. */
	T_ERRNO(catalog_open_existing(&d, url, 1, &err), EPROTO);
	T_CONTAINS(cmfs_err_msg(&err), "no cmfs schema");
	c = setup();
	T_INTEQ(pg_int("SELECT version FROM cmfs_schema"), 5);
	T_INTEQ(pg_int("SELECT count(*) FROM envs"), 0);
	/* A second mount beside the first (another host's). */
	T_INTEQ(catalog_open(&d, url, &err), 0);
	catalog_close(d);
	d = NULL;
	/* Beside it, a reader. */
	T_INTEQ(catalog_open_existing(&d, url, 1, &err), 0);
	catalog_close(d);
	d = NULL;
	T_INTEQ(catalog_check(c, &check, &err), 0);
	T_STREQ(check, "ok");
	free(check);
	catalog_close(c);
	/* Closed: the next mount opens it, schema as it was. */
	T_INTEQ(catalog_open(&d, url, &err), 0);
	catalog_close(d);
	/* A version-2 catalog (factories and table options as JSON in
	 * their rows, factories' options not kept) is brought up to 5:
	 * rows and their order kept; its inspections are made again. */
	{
		struct jar_factory f[2] = {
			{ (char *)"com.p.A", JAR_KIND_CONNECTOR, (char *)"pa",
			  { NULL, 0, 0, NULL } },
			{ (char *)"com.p.B", JAR_KIND_FORMAT, NULL,
			  { NULL, 0, 0, NULL } },
		};
		char *keys[2] = { (char *)"connector", (char *)"k" };
		char *values[2] = { (char *)"pa", (char *)"v \"w\"" };
		struct catalog_table_def def, got;
		struct catalog_table t;
		struct catalog_env e;
		struct jar_report in, *out = NULL;

		memset(&in, 0, sizeof(in));
		in.nfactories = 2;
		in.factories = f;
		memset(&def, 0, sizeof(def));
		def.ddl = (char *)"CREATE TABLE y (a INT)";
		def.nopts = 2;
		def.keys = keys;
		def.values = values;
		T_INTEQ(catalog_open(&d, url, &err), 0);
		T_INTEQ(catalog_env_add(d, "mig", 0, 1, &e, &err), 0);
		T_INTEQ(catalog_insp_put(d, SHA_B, &in, &err), 0);
		T_INTEQ(catalog_table_put(d, e.id, "y", &def, 1, 0, &t, &err),
			0);
		catalog_close(d);
		d = NULL;
		pg_int("ALTER TABLE inspections ADD COLUMN factories text"
		       " NOT NULL DEFAULT '[]';"
		       " UPDATE inspections i SET factories = COALESCE((SELECT"
		       " json_agg(json_build_array(kind, identifier, class)"
		       " ORDER BY seq)::text FROM insp_factories f"
		       " WHERE f.insp = i.id), '[]');"
		       " DROP TABLE insp_factories; DROP TABLE factory_options;"
		       " ALTER TABLE inspections DROP COLUMN options_read;"
		       " ALTER TABLE tables ADD COLUMN options text NOT NULL"
		       " DEFAULT '[]';"
		       " UPDATE tables t SET options = COALESCE((SELECT"
		       " json_agg(json_build_array(key, value) ORDER BY seq)"
		       "::text FROM tab_options o WHERE o.table_id = t.id),"
		       " '[]');"
		       " DROP TABLE tab_options;"
		       " DROP TABLE blob_chunks; DROP TABLE blobs;"
		       " DROP FUNCTION cmfs_notify() CASCADE;"
		       " UPDATE cmfs_schema SET version = 2");
		T_INTEQ(pg_int("SELECT count(*) FROM inspections"
			       " WHERE factories LIKE '%com.p.B%'"),
			1);
		T_INTEQ(catalog_open(&d, url, &err), 0);
		T_INTEQ(pg_int("SELECT version FROM cmfs_schema"), 5);
		T_INTEQ(d ? catalog_insp_get(d, SHA_B, &out, &err) : -1, 0);
		T_INTEQ(out ? out->nfactories : 0, 2);
		if (out && out->nfactories == 2) {
			T_STREQ(out->factories[0].cls, "com.p.A");
			T_STREQ(out->factories[0].identifier, "pa");
			T_INTEQ(out->factories[1].kind, JAR_KIND_FORMAT);
			T_CHECK(out->factories[1].identifier == NULL);
			T_CHECK(out->factories[0].options.unknown != 0);
		}
		jar_report_free(out);
		T_CHECK(pg_int("SELECT max(inspector) FROM inspections") <
			JAR_INSPECTOR);
		memset(&got, 0, sizeof(got));
		T_INTEQ(d ? catalog_table_def(d, t.id, &got, &err) : -1, 0);
		T_INTEQ(got.nopts, 2);
		if (got.nopts == 2) {
			T_STREQ(got.keys[0], "connector");
			T_STREQ(got.values[1], "v \"w\"");
		}
		catalog_table_def_release(&got);
		catalog_close(d);
		d = NULL;
	}
	/* A version-1 catalog (no refusals) is brought up to 2 (and on). */
	pg_int("ALTER TABLE tables DROP COLUMN refusal;"
	       " UPDATE cmfs_schema SET version = 1");
	pg_int("ALTER TABLE inspections ADD COLUMN factories text"
	       " NOT NULL DEFAULT '[]';"
	       " DROP TABLE insp_factories; DROP TABLE factory_options;"
	       " ALTER TABLE inspections DROP COLUMN options_read;"
	       " ALTER TABLE tables ADD COLUMN options text NOT NULL"
	       " DEFAULT '[]'; DROP TABLE tab_options;"
	       " DROP TABLE blob_chunks; DROP TABLE blobs;"
	       " DROP FUNCTION cmfs_notify() CASCADE;");
	T_INTEQ(catalog_open(&d, url, &err), 0);
	catalog_close(d);
	T_INTEQ(pg_int("SELECT version FROM cmfs_schema"), 5);
	T_INTEQ(pg_int("SELECT count(*) FROM information_schema.columns"
		       " WHERE table_name = 'tables' AND column_name = 'refusal'"),
		1);
	/* A password never reaches a message. */
	cmfs_err_clear(&err);
	T_CHECK(catalog_open(&d, "postgresql://cmfs:s3cret@127.0.0.1:1/x",
			     &err) < 0);
	T_CHECK(strstr(cmfs_err_msg(&err), "s3cret") == NULL);
	T_CONTAINS(cmfs_err_msg(&err), "cmfs:***@");
}

static int count_art(void *arg, const struct catalog_artifact *a)
{
	(void)a;
	++*(int *)arg;
	return 0;
}

static int collect_label(void *arg, const char *key, const char *value)
{
	struct buf *b = arg;

	return buf_printf(b, "%s=%s;", key, value);
}

static void test_rows(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct catalog_artifact a;
	struct catalog_version v;
	struct buf b = BUF_INIT(4096);
	int64_t art, art2, next;
	uint64_t n;
	char *val = NULL;
	int k = 0;

	T_INTEQ(catalog_env_add(c, "dev", 1000, 42, &e, &err), 0);
	T_ERRNO(catalog_env_add(c, "dev", 1000, 42, NULL, &err), EEXIST);
	T_INTEQ(catalog_env_get(c, "dev", &e, &err), 0);
	T_STREQ(e.name, "dev");
	T_INTEQ(e.uid, 1000);
	T_INTEQ(catalog_art_add(c, e.id, "x.jar", &art, &err), 0);
	T_ERRNO(catalog_art_add(c, e.id, "x.jar", &art2, &err), EEXIST);
	/* No version yet: not listed, not found with a latest. */
	T_ERRNO(catalog_art_get(c, e.id, "x.jar", &a, &err), ENOENT);
	T_INTEQ(catalog_ver_add(c, art, SHA_A, 10, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 1);
	T_INTEQ(catalog_ver_add(c, art, SHA_B, 20, 2, 0, &v, &err), 0);
	T_INTEQ(v.n, 2);
	T_INTEQ(catalog_art_get(c, e.id, "x.jar", &a, &err), 0);
	T_INTEQ(a.nversions, 2);
	T_INTEQ(a.latest.n, 2);
	T_STREQ(a.latest.sha256, SHA_B);
	T_INTEQ(a.latest.size, 20);
	T_INTEQ(catalog_art_count(c, e.id, &n, &err), 0);
	T_INTEQ(n, 1);
	T_ERRNO(catalog_env_del(c, e.id, &err), ENOTEMPTY);

	/* Labels: values are bytes, not text of any encoding. */
	T_INTEQ(catalog_label_set(c, art, "team", "data", &err), 0);
	T_INTEQ(catalog_label_set(c, art, "raw", "\xff\xfe", &err), 0);
	T_INTEQ(catalog_label_set(c, art, "team", "infra", &err), 0);
	T_INTEQ(catalog_label_get(c, art, "raw", &val, &err), 0);
	T_STREQ(val, "\xff\xfe");
	free(val);
	T_INTEQ(catalog_label_list(c, art, collect_label, &b, &err), 0);
	T_STREQ(buf_str(&b), "raw=\xff\xfe;team=infra;");
	T_INTEQ(catalog_art_by_label(c, e.id, "team", "infra", count_art, &k,
				     &err),
		0);
	T_INTEQ(k, 1);
	T_ERRNO(catalog_label_del(c, art, "nope", &err), ENODATA);
	T_INTEQ(catalog_label_del(c, art, "raw", &err), 0);
	T_ERRNO(catalog_label_get(c, art, "raw", &val, &err), ENODATA);

	/* The last version of a blob gone: the blob is loose; taken again:
	 * not loose. */
	T_INTEQ(catalog_ver_del(c, art, 1, &err), 0);
	T_ERRNO(catalog_ver_del(c, art, 1, &err), ENOENT);
	T_INTEQ(pg_int("SELECT count(*) FROM loose WHERE sha256 = '" SHA_A
		       "'"),
		1);
	T_INTEQ(catalog_blob_refs(c, SHA_A, &n, &err), 0);
	T_INTEQ(n, 0);

	/* A name's numbers outlive its artifact: rm, then a new upload,
	 * goes on counting. */
	T_INTEQ(catalog_art_del(c, art, &err), 0);
	T_INTEQ(catalog_art_count(c, e.id, &n, &err), 0);
	T_INTEQ(n, 0);
	T_INTEQ(catalog_art_add(c, e.id, "x.jar", &art2, &err), 0);
	T_INTEQ(catalog_art_next_get(c, art2, &next, &err), 0);
	T_INTEQ(next, 3);
	T_INTEQ(catalog_ver_add(c, art2, SHA_A, 10, 3, 0, &v, &err), 0);
	T_INTEQ(v.n, 3);
	T_INTEQ(pg_int("SELECT count(*) FROM loose"), 1); /* SHA_B's */
	T_INTEQ(pg_int("SELECT count(*) FROM retired"), 0);

	/* A rename leaves the old name's numbers behind. */
	T_INTEQ(catalog_art_rename(c, art2, "y.jar", &err), 0);
	T_ERRNO(catalog_art_get(c, e.id, "x.jar", &a, &err), ENOENT);
	T_INTEQ(catalog_art_get(c, e.id, "y.jar", &a, &err), 0);
	T_INTEQ(a.latest.n, 3);
	T_INTEQ(pg_int("SELECT next_n FROM retired WHERE name = 'x.jar'"), 4);
	T_INTEQ(catalog_art_add(c, e.id, "x.jar", &art, &err), 0);
	T_INTEQ(catalog_ver_add(c, art, SHA_B, 20, 4, 0, &v, &err), 0);
	T_INTEQ(v.n, 4);
	k = 0;
	T_INTEQ(catalog_art_list(c, e.id, count_art, &k, &err), 0);
	T_INTEQ(k, 2);
	buf_release(&b);
	catalog_close(c);
}

static void test_blobs_inline(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	void *data = NULL;
	size_t len = 99;

	T_INTEQ(catalog_inline_put(c, SHA_A, "\0bytes\xff", 7, &err), 0);
	T_INTEQ(catalog_inline_put(c, SHA_A, "other", 5, &err), 0);
	T_INTEQ(catalog_inline_put(c, SHA_B, "", 0, &err), 0);
	T_INTEQ(catalog_inline_get(c, SHA_A, &data, &len, &err), 0);
	T_INTEQ(len, 7);
	T_CHECK(data && !memcmp(data, "\0bytes\xff", 7));
	free(data);
	T_INTEQ(catalog_inline_get(c, SHA_B, &data, &len, &err), 0);
	T_INTEQ(len, 0);
	T_CHECK(data != NULL);
	free(data);
	T_INTEQ(catalog_inline_del(c, SHA_A, &err), 0);
	T_ERRNO(catalog_inline_del(c, SHA_A, &err), ENOENT);
	T_ERRNO(catalog_inline_get(c, SHA_A, &data, &len, &err), ENOENT);
	catalog_close(c);
}

/* A memory file holding `len` bytes of a pattern that starts at `seed`. */
static int pattern_fd(size_t len, int seed)
{
	int fd = memfd_create("t", MFD_CLOEXEC);
	unsigned char *b = malloc(len ? len : 1);
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 7 + (size_t)seed);
	if (fd < 0 || pwrite(fd, b, len, 0) != (ssize_t)len)
		abort();
	free(b);
	return fd;
}

/* Blobs kept in the database: put in the transaction of their first
 * version, in chunks, read back whole, freed with their last version. */
static void test_blobs_db(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct catalog_version v1, v2;
	int64_t a1 = 0, a2 = 0;
	size_t len = 2 * 1024 * 1024 + 12345;
	int src = pattern_fd(len, 3), dst = memfd_create("d", MFD_CLOEXEC);
	unsigned char *x = malloc(len), *y = malloc(len);
	uint64_t got = 0;

	T_INTEQ(catalog_keeps_blobs(c), 1);
	T_INTEQ(catalog_env_add(c, "b", 0, 1, &e, &err), 0);
	T_INTEQ(catalog_art_add(c, e.id, "x.jar", &a1, &err), 0);
	T_INTEQ(catalog_art_add(c, e.id, "y.jar", &a2, &err), 0);
	/* Rolled back with its version: no bytes stay. */
	T_INTEQ(catalog_begin(c, &err), 0);
	T_INTEQ(catalog_blob_put(c, SHA_A, src, len, &err), 0);
	catalog_end(c, -EIO, &err);
	T_INTEQ(pg_int("SELECT count(*) FROM blob_chunks"), 0);
	T_ERRNO(catalog_blob_get(c, SHA_A, dst, &got, &err), ENOENT);
	T_INTEQ(catalog_begin(c, &err), 0);
	T_INTEQ(catalog_blob_put(c, SHA_A, src, len, &err), 0);
	T_INTEQ(catalog_ver_add(c, a1, SHA_A, len, 1, 0, &v1, &err), 0);
	T_INTEQ(catalog_end(c, 0, &err), 0);
	T_INTEQ(pg_int("SELECT count(*) FROM blob_chunks"), 3);
	/* A second version of the same bytes: nothing more is stored. */
	T_INTEQ(catalog_begin(c, &err), 0);
	T_INTEQ(catalog_blob_put(c, SHA_A, src, len, &err), 0);
	T_INTEQ(catalog_ver_add(c, a2, SHA_A, len, 1, 0, &v2, &err), 0);
	T_INTEQ(catalog_end(c, 0, &err), 0);
	T_INTEQ(pg_int("SELECT count(*) FROM blob_chunks"), 3);
	T_INTEQ(catalog_blob_get(c, SHA_A, dst, &got, &err), 0);
	T_INTEQ(got, len);
	T_CHECK(pread(src, x, len, 0) == (ssize_t)len &&
		pread(dst, y, len, 0) == (ssize_t)len && !memcmp(x, y, len));
	/* Freed with the last version that refers to it, not before. */
	T_INTEQ(catalog_ver_del(c, a1, v1.n, &err), 0);
	T_INTEQ(pg_int("SELECT count(*) FROM blobs"), 1);
	T_INTEQ(catalog_art_del(c, a2, &err), 0);
	T_INTEQ(pg_int("SELECT count(*) FROM blobs"), 0);
	T_INTEQ(pg_int("SELECT count(*) FROM blob_chunks"), 0);
	T_ERRNO(catalog_blob_get(c, SHA_A, dst, &got, &err), ENOENT);
	free(x);
	free(y);
	close(src);
	close(dst);
	catalog_close(c);
}

static void test_tables_events(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct catalog_table t;
	struct catalog_table_def d = { 0 }, got = { 0 };
	char *keys[2] = { (char *)"connector", (char *)"q\"uo\\te\t" };
	char *values[2] = { (char *)"kafka", (char *)"\xe2\x82\xac" };
	struct buf b = BUF_INIT(4096), why = BUF_INIT(4096);
	const char *envs[2] = { "dev", "dev" };
	const char *lines[2] = { "time=2026-01-01T00:00:00.000Z a\n",
				 "time=2026-06-01T00:00:00.000Z b\n" };
	uint64_t n, removed;

	T_INTEQ(catalog_env_add(c, "dev", 0, 1, &e, &err), 0);
	d.ddl = (char *)"CREATE TABLE t (a INT) WITH ('connector'='kafka')";
	d.nopts = 2;
	d.keys = keys;
	d.values = values;
	T_INTEQ(catalog_table_put(c, e.id, "t", &d, 5, 7, &t, &err), 0);
	T_INTEQ(catalog_table_get(c, e.id, "t", &t, &err), 0);
	T_INTEQ(t.size, strlen(d.ddl));
	T_INTEQ(t.uid, 7);
	T_INTEQ(catalog_table_def(c, t.id, &got, &err), 0);
	T_STREQ(got.ddl, d.ddl);
	T_CHECK(got.like_ddl == NULL);
	T_INTEQ(got.nopts, 2);
	if (got.nopts == 2) {
		T_STREQ(got.keys[1], "q\"uo\\te\t");
		T_STREQ(got.values[1], "\xe2\x82\xac");
	}
	catalog_table_def_release(&got);
	/* Replaced in place: one row, its options those of the new text. */
	d.nopts = 1;
	d.like_ddl = (char *)"CREATE TABLE base (b INT)";
	T_INTEQ(catalog_table_refusal_set(c, t.id, "why", &err), 0);
	T_INTEQ(catalog_table_refusal_get(c, t.id, &why, &err), 0);
	T_STREQ(buf_str(&why), "why");
	buf_reset(&why);
	T_INTEQ(catalog_table_put(c, e.id, "t", &d, 6, 7, &t, &err), 0);
	/* a good write clears the refusal */
	T_INTEQ(catalog_table_refusal_get(c, t.id, &why, &err), 0);
	T_INTEQ((long long)why.len, 0);
	T_INTEQ(catalog_table_count(c, e.id, &n, &err), 0);
	T_INTEQ(n, 1);
	T_INTEQ(catalog_table_def(c, t.id, &got, &err), 0);
	T_INTEQ(got.nopts, 1);
	T_STREQ(got.like_ddl, "CREATE TABLE base (b INT)");
	catalog_table_def_release(&got);
	T_INTEQ(catalog_table_del(c, t.id, &err), 0);
	T_INTEQ(catalog_table_count(c, e.id, &n, &err), 0);
	T_INTEQ(n, 0);

	T_INTEQ(catalog_event_add_many(c, 2, envs, lines, &err), 0);
	T_INTEQ(catalog_event_size(c, "dev", &n, &err), 0);
	T_INTEQ(n, strlen(lines[0]) + strlen(lines[1]));
	T_INTEQ(catalog_event_read(c, "dev", 5, 1000, &b, &err), 0);
	T_CHECK(b.len == n - 5 && !memcmp(buf_str(&b), lines[0] + 5,
					  strlen(lines[0]) - 5));
	/* The older line goes: offsets count from the oldest kept. */
	T_INTEQ(catalog_event_trim(c, "dev", 0, "2026-03-01T00:00:00.000Z",
				   &removed, &err),
		0);
	T_INTEQ(removed, 1);
	buf_reset(&b);
	T_INTEQ(catalog_event_read(c, "dev", 0, 1000, &b, &err), 0);
	T_STREQ(buf_str(&b), lines[1]);
	buf_release(&b);
	buf_release(&why);
	catalog_close(c);
}

static void test_transactions(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;

	T_INTEQ(catalog_begin(c, &err), 0);
	T_INTEQ(catalog_env_add(c, "gone", 0, 1, &e, &err), 0);
	T_INTEQ(catalog_begin(c, &err), 0); /* nested: part of it */
	T_INTEQ(catalog_env_add(c, "gone2", 0, 1, &e, &err), 0);
	T_INTEQ(catalog_end(c, 0, &err), 0);
	T_INTEQ(catalog_end(c, -EIO, &err), -EIO);
	T_ERRNO(catalog_env_get(c, "gone", &e, &err), ENOENT);
	T_ERRNO(catalog_env_get(c, "gone2", &e, &err), ENOENT);
	T_INTEQ(catalog_begin(c, &err), 0);
	T_INTEQ(catalog_env_add(c, "kept", 0, 1, &e, &err), 0);
	T_INTEQ(catalog_end(c, 0, &err), 0);
	T_INTEQ(pg_int("SELECT count(*) FROM envs WHERE name = 'kept'"), 1);
	catalog_close(c);
}

/* Each of two connections (two hosts) adds versions to one artifact. */
struct adder {
	struct catalog *c;
	int64_t art;
	int n, failed;
};

#define ADDS 150

static void *add_versions(void *arg)
{
	struct adder *a = arg;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	int i, rc;

	for (i = 0; i < ADDS; i++) {
		rc = catalog_begin(a->c, &err);
		if (!rc)
			rc = catalog_ver_add(a->c, a->art, SHA_A, 1, i, 0, &v,
					     &err);
		rc = catalog_end(a->c, rc, &err);
		if (rc)
			a->failed++;
		else
			a->n++;
	}
	return NULL;
}

static void test_concurrent_numbers(void)
{
	struct catalog *c = setup(), *d = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct adder x = { 0 }, y = { 0 };
	pthread_t tx, ty;
	int64_t art;

	T_INTEQ(catalog_env_add(c, "dev", 0, 1, &e, &err), 0);
	T_INTEQ(catalog_art_add(c, e.id, "x.jar", &art, &err), 0);
	/* A second connection, as another host's would be. */
	T_INTEQ(catalog_open_existing(&d, url, 0, &err), 0);
	if (!d) {
		catalog_close(c);
		return;
	}
	x.c = c;
	y.c = d;
	x.art = y.art = art;
	pthread_create(&tx, NULL, add_versions, &x);
	pthread_create(&ty, NULL, add_versions, &y);
	pthread_join(tx, NULL);
	pthread_join(ty, NULL);
	T_INTEQ(x.failed + y.failed, 0);
	T_INTEQ(x.n + y.n, 2 * ADDS);
	/* 1 .. 2 * ADDS, each once. */
	T_INTEQ(pg_int("SELECT count(DISTINCT n) FROM versions"), 2 * ADDS);
	T_INTEQ(pg_int("SELECT min(n) FROM versions"), 1);
	T_INTEQ(pg_int("SELECT max(n) FROM versions"), 2 * ADDS);
	catalog_close(d);
	catalog_close(c);
}

/* Rows of two text columns as "a b;" into a buf. */
static int collect_rows(void *arg, const char *const *row)
{
	return buf_printf(arg, "%s %s;", row[0], row[1]);
}

static void test_inspections(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct jar_factory f[2] = {
		{ (char *)"com.example.M", JAR_KIND_CONNECTOR,
		  (char *)"m\"o\\n\n\xe2\x82\xac", { NULL, 0, 0, NULL } },
		{ (char *)"com.example.F", JAR_KIND_FORMAT, NULL,
		  { NULL, 0, 0, NULL } },
	};
	char *ext[2] = { (char *)"java.lang.String", (char *)"org.x.Y" };
	struct jar_report in, *out = NULL;
	struct buf b = BUF_INIT(4096);
	struct catalog_env e;
	struct catalog_artifact a;
	struct catalog_version v;
	int64_t art;
	long long id;

	memset(&in, 0, sizeof(in));
	in.nfactories = 2;
	in.factories = f;
	in.nexternal = 2;
	in.external = ext;
	T_INTEQ(catalog_env_add(c, "dev", 0, 1, &e, &err), 0);
	T_INTEQ(catalog_art_add(c, e.id, "m.jar", &art, &err), 0);
	/* A version added before its blob is inspected gets linked. */
	T_INTEQ(catalog_ver_add(c, art, SHA_A, 1, 1, 0, &v, &err), 0);
	T_ERRNO(catalog_insp_get(c, SHA_A, &out, &err), ENOENT);
	T_INTEQ(catalog_insp_put(c, SHA_A, &in, &err), 0);
	id = pg_int("SELECT id FROM inspections");
	T_INTEQ(pg_int("SELECT insp FROM versions"), id);
	T_INTEQ(catalog_art_get(c, e.id, "m.jar", &a, &err), 0);
	T_INTEQ(catalog_insp_of(c, &a.latest, &out, &err), 0);
	if (out && out->nfactories == 2 && out->nexternal == 2) {
		T_STREQ(out->factories[0].identifier, "m\"o\\n\n\xe2\x82\xac");
		T_INTEQ(out->factories[0].kind, JAR_KIND_CONNECTOR);
		T_CHECK(out->factories[1].identifier == NULL);
		T_STREQ(out->external[1], "org.x.Y");
	} else {
		T_CHECK(!"the report read back");
	}
	jar_report_free(out);
	/* Put again (fsck): the row keeps its number. */
	in.error = (char *)"bad";
	in.nfactories = 0;
	in.nexternal = 0;
	T_INTEQ(catalog_insp_put(c, SHA_A, &in, &err), 0);
	T_INTEQ(pg_int("SELECT id FROM inspections"), id);
	T_INTEQ(catalog_insp_get(c, SHA_A, &out, &err), 0);
	T_STREQ(out ? out->error : NULL, "bad");
	jar_report_free(out);
	/* Stamped with this inspector: none stale; an older one's is. */
	T_INTEQ(catalog_insp_stale(c, collect_rows, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	pg_int("UPDATE inspections SET inspector = 1");
	T_INTEQ(catalog_insp_stale(c, collect_rows, &b, &err), 0);
	T_STREQ(buf_str(&b), SHA_A " 1;");
	buf_release(&b);
	catalog_close(c);
}

/* What a watch was told, in order. */
struct told {
	pthread_mutex_t lock;
	char seen[1024];
};

static void on_change(void *arg, const char *env, const char *name, int kind)
{
	struct told *t = arg;
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = strlen(t->seen);
	snprintf(t->seen + n, sizeof(t->seen) - n, "%c:%s/%s;",
		 kind ? kind : '*', env ? env : "-", name ? name : "-");
	pthread_mutex_unlock(&t->lock);
}

/* 1 once `want` is among what `t` was told, within two seconds. */
static int told_within(struct told *t, const char *want)
{
	int i, found = 0;

	for (i = 0; i < 200 && !found; i++) {
		pthread_mutex_lock(&t->lock);
		found = strstr(t->seen, want) != NULL;
		pthread_mutex_unlock(&t->lock);
		if (!found)
			usleep(10000);
	}
	return found;
}

/* Changes through another handle are told; this handle's own are not. */
static void test_watch(void)
{
	struct catalog *c = setup(), *d = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct told t = { PTHREAD_MUTEX_INITIALIZER, "" };
	struct catalog_env e;
	struct catalog_version v;
	uint64_t gen;
	int64_t a = 0;

	T_INTEQ(catalog_watch(c, on_change, &t, &err), 0);
	T_INTEQ(catalog_open(&d, url, &err), 0);
	gen = catalog_generation(c);
	T_INTEQ(catalog_env_add(d, "w", 0, 1, &e, &err), 0);
	T_CHECK(told_within(&t, "e:w/;"));
	T_CHECK(catalog_generation(c) > gen);
	T_INTEQ(catalog_begin(d, &err), 0);
	T_INTEQ(catalog_art_add(d, e.id, "x.jar", &a, &err), 0);
	T_INTEQ(catalog_ver_add(d, a, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(catalog_label_set(d, a, "k", "v", &err), 0);
	T_INTEQ(catalog_end(d, 0, &err), 0);
	T_CHECK(told_within(&t, "a:w/x.jar;"));
	/* One transaction, one notice of each name. */
	usleep(100000);
	pthread_mutex_lock(&t.lock);
	T_STREQ(t.seen, "e:w/;a:w/x.jar;");
	pthread_mutex_unlock(&t.lock);
	/* A rename: both names. */
	T_INTEQ(catalog_art_rename(d, a, "y.jar", &err), 0);
	T_CHECK(told_within(&t, "a:w/x.jar;a:w/y.jar;"));
	/* This handle's own change: not told. */
	T_INTEQ(catalog_env_add(c, "mine", 0, 1, &e, &err), 0);
	T_INTEQ(catalog_env_add(d, "theirs", 0, 1, &e, &err), 0);
	T_CHECK(told_within(&t, "e:theirs/;"));
	T_CHECK(strstr(t.seen, "mine") == NULL);
	catalog_close(d);
	catalog_unwatch(c);
	catalog_close(c);
}

/* catalog_art_by_label_with() of one artifact's identifier label. */
static int keep_art(void *arg, const struct catalog_artifact *a)
{
	*(struct catalog_artifact *)arg = *a;
	return 0;
}

/*
 * What a resolution reads in one round trip (the artifacts of an
 * identifier with their type label and inspection, a table with its
 * definition) is kept while the generation stands: a re-inspection or a
 * label change on another host must still be seen here.
 */
static void test_kept_answers(void)
{
	struct catalog *c = setup(), *d = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct told t = { PTHREAD_MUTEX_INITIALIZER, "" };
	struct jar_factory f = { (char *)"com.example.Old", JAR_KIND_CONNECTOR,
				 (char *)"kx", { NULL, 0, 0, NULL } };
	struct jar_report in, *out = NULL;
	struct catalog_artifact a;
	struct catalog_env e;
	struct catalog_version v;
	struct catalog_table tab;
	struct catalog_table_def def, got;
	char *type = NULL;
	int64_t art = 0;

	memset(&in, 0, sizeof(in));
	memset(&a, 0, sizeof(a));
	memset(&def, 0, sizeof(def));
	in.nfactories = 1;
	in.factories = &f;
	T_INTEQ(catalog_watch(c, on_change, &t, &err), 0);
	T_INTEQ(catalog_open(&d, url, &err), 0);
	T_INTEQ(catalog_env_add(d, "k", 0, 1, &e, &err), 0);
	T_INTEQ(catalog_art_add(d, e.id, "k.jar", &art, &err), 0);
	T_INTEQ(catalog_ver_add(d, art, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(catalog_label_set(d, art, "ident", "kx", &err), 0);
	T_INTEQ(catalog_label_set(d, art, "type", "connector", &err), 0);
	T_INTEQ(catalog_insp_put(d, SHA_A, &in, &err), 0);
	T_CHECK(told_within(&t, "a:k/k.jar;"));
	usleep(100000);

	/* Read here with the type label and the inspection: kept. */
	T_INTEQ(catalog_art_by_label_with(c, e.id, "ident", "kx", "type",
					  keep_art, &a, &err), 0);
	T_INTEQ(a.id, art);
	T_INTEQ(catalog_label_get(c, art, "type", &type, &err), 0);
	T_STREQ(type, "connector");
	free(type);
	type = NULL;
	T_INTEQ(catalog_insp_of(c, &a.latest, &out, &err), 0);
	T_STREQ(out && out->nfactories ? out->factories[0].cls : NULL,
		"com.example.Old");
	jar_report_free(out);
	out = NULL;

	/* Inspected again on the other host: the same row, a new report. */
	pthread_mutex_lock(&t.lock);
	t.seen[0] = '\0';
	pthread_mutex_unlock(&t.lock);
	f.cls = (char *)"com.example.New";
	T_INTEQ(catalog_insp_put(d, SHA_A, &in, &err), 0);
	T_CHECK(told_within(&t, "a:k/k.jar;"));
	T_INTEQ(catalog_insp_of(c, &a.latest, &out, &err), 0);
	T_STREQ(out && out->nfactories ? out->factories[0].cls : NULL,
		"com.example.New");
	jar_report_free(out);

	/* A label changed there: seen here. */
	T_INTEQ(catalog_art_by_label_with(c, e.id, "ident", "kx", "type",
					  keep_art, &a, &err), 0);
	T_INTEQ(catalog_label_set(d, art, "type", "format", &err), 0);
	T_CHECK(told_within(&t, "a:k/k.jar;"));
	usleep(100000);
	T_INTEQ(catalog_label_get(c, art, "type", &type, &err), 0);
	T_STREQ(type, "format");
	free(type);

	/* A table's definition read with its row, then changed there. */
	T_INTEQ(catalog_rows_def(&def, "CREATE TABLE t (a INT)", NULL), 0);
	T_INTEQ(catalog_rows_option_add(&def, "connector", "kx"), 0);
	T_INTEQ(catalog_table_put(d, e.id, "t", &def, 1, 1, &tab, &err), 0);
	T_CHECK(told_within(&t, "t:k/t;"));
	usleep(100000);
	T_INTEQ(catalog_table_get(c, e.id, "t", &tab, &err), 0);
	catalog_table_def_release(&def);
	T_INTEQ(catalog_rows_def(&def, "CREATE TABLE t (b INT)", NULL), 0);
	T_INTEQ(catalog_rows_option_add(&def, "connector", "other"), 0);
	T_INTEQ(catalog_table_put(d, e.id, "t", &def, 2, 1, &tab, &err), 0);
	T_CHECK(told_within(&t, "t:k/t;"));
	usleep(100000);
	T_INTEQ(catalog_table_def(c, tab.id, &got, &err), 0);
	T_STREQ(got.ddl, "CREATE TABLE t (b INT)");
	T_STREQ(got.nopts ? got.values[0] : NULL, "other");
	catalog_table_def_release(&got);
	catalog_table_def_release(&def);
	catalog_close(d);
	catalog_unwatch(c);
	catalog_close(c);
}

int main(void)
{
	url = getenv("CMFS_TEST_PG_URL");
	if (!url || !*url) {
		fprintf(stderr, "test_catalog_pg: skipped: CMFS_TEST_PG_URL "
				"is not set (tests/integ/t_pg.sh sets it)\n");
		return T_DONE();
	}
	T_RUN(test_open);
	T_RUN(test_rows);
	T_RUN(test_blobs_inline);
	T_RUN(test_blobs_db);
	T_RUN(test_watch);
	T_RUN(test_tables_events);
	T_RUN(test_transactions);
	T_RUN(test_concurrent_numbers);
	T_RUN(test_inspections);
	T_RUN(test_kept_answers);
	return T_DONE();
}
