/*
 * test_export.c - unit tests of core/export.h: artifact.json written and
 * read back, the reader's refusals (jansson's syntax errors with
 * line:col, the schema's naming the key), the
 * minimal artifact.json a CMF user writes, and a dump of a store loaded
 * into a new one giving the same catalog, row for row: environments,
 * artifacts, version numbers (also past a deleted latest version), bytes,
 * labels, tables with their merged options and LIKE text, events.  Then
 * what load refuses, leaving the target as it was: an existing
 * environment, a directory that is not an export, tampered bytes, a file
 * that does not belong, a store in use.
 *
 * Stores are built through repo.h in fresh mkdtemp directories; JAR
 * fixtures come from tests/fixtures/jars/ (run with cwd = tests/).
 */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "catalog.h"
#include "config.h"
#include "err.h"
#include "export.h"
#include "fsck.h"
#include "repo.h"
#include "store.h"

#include "fixture.h"

#define TYPE "cmf.confluent.io/sql-artifact-type"
#define IDENT "cmf.confluent.io/sql-artifact-identifier"
#define SHA_HELLO                                                              \
	"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

static const struct repo_who who = {1000, 1000, 4242, 0, NULL};

/* ---- helpers ---------------------------------------------------------------
 */

struct ctx {
	struct fixture f; /* the source store */
	char store2[128]; /* the target store */
	char dir[128];	  /* the export */
};

static void setup(struct ctx *x)
{
	fixture_open(&x->f, "export", NULL, FIXTURE_MNT, 0);
	snprintf(x->store2, sizeof(x->store2), "%s/store2", x->f.tmp);
	snprintf(x->dir, sizeof(x->dir), "%s/export", x->f.tmp);
}

static void teardown(struct ctx *x)
{
	fixture_close(&x->f);
}

static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0)
		fprintf(stderr, "cannot write %s\n", path);
	if (f)
		fclose(f);
}

static int upload(struct ctx *x, const char *env, const char *name,
		  const void *data, size_t len)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = fixture_upload(&x->f, &who, env, name, data, len, NULL, &err);

	if (rc)
		fprintf(stderr, "upload %s: %s\n", name, cmfs_err_msg(&err));
	return rc;
}

static int table(struct ctx *x, const char *env, const char *name,
		 const char *ddl)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = repo_table_write(x->f.r, &who, env, name, ddl, strlen(ddl),
				  &err);

	if (rc)
		fprintf(stderr, "table %s: %s\n", name, cmfs_err_msg(&err));
	return rc;
}

/*
 * Every row of the catalog that import must reproduce, one per line, in
 * a stable order (malloc'd).  Read with sqlite3 directly, so this check
 * does not trust the code under test.
 */
static char *dump_rows(const char *store)
{
	static const char *const queries[] = {
		"SELECT 'env', name, ctime, uid FROM envs ORDER BY name",
		"SELECT 'art', e.name, a.name, next_n FROM artifacts a"
		" JOIN envs e ON e.id = a.env_id ORDER BY 2, 3",
		/* and whether each names its blob's inspection row */
		"SELECT 'ver', e.name, a.name, n, sha256, size, mtime, v.uid,"
		" v.insp IS (SELECT id FROM inspections i"
		" WHERE i.sha256 = v.sha256)"
		" FROM versions v JOIN artifacts a ON a.id = v.artifact_id"
		" JOIN envs e ON e.id = a.env_id ORDER BY 2, 3, 4",
		"SELECT 'label', e.name, a.name, key, value FROM labels l"
		" JOIN artifacts a ON a.id = l.artifact_id"
		" JOIN envs e ON e.id = a.env_id ORDER BY 2, 3, 4",
		"SELECT 'table', e.name, t.name, ddl, like_ddl, size, mtime,"
		" t.uid FROM tables t JOIN envs e ON e.id = t.env_id"
		" ORDER BY 2, 3",
		"SELECT 'opt', e.name, t.name, options FROM tables t"
		" JOIN envs e ON e.id = t.env_id ORDER BY 2, 3",
		"SELECT 'insp', sha256, error, external, factories"
		" FROM inspections ORDER BY sha256",
		"SELECT 'event', env, off, len, CAST(line AS TEXT) FROM events"
		" ORDER BY env, off",
		"SELECT 'retired', env, name, next_n FROM retired"
		" ORDER BY env, name",
		NULL};
	struct buf b = BUF_INIT((size_t)1 << 24);
	char db[256];
	sqlite3 *h = NULL;
	sqlite3_stmt *s;
	int i, c;

	snprintf(db, sizeof(db), "%s/catalog.db", store);
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL)) {
		sqlite3_close(h);
		return NULL;
	}
	for (i = 0; queries[i]; i++) {
		if (sqlite3_prepare_v2(h, queries[i], -1, &s, NULL))
			continue;
		while (sqlite3_step(s) == SQLITE_ROW) {
			for (c = 0; c < sqlite3_column_count(s); c++) {
				const char *v =
					(const char *)sqlite3_column_text(s, c);

				buf_printf(&b, "%s|", v ? v : "NULL");
			}
			buf_addc(&b, '\n');
		}
		sqlite3_finalize(s);
	}
	sqlite3_close(h);
	return buf_take(&b, NULL);
}

/*
 * The blobs in the catalog of `store`: how many rows, and how many whose
 * bytes do not hash to their name (or are not `size` bytes, as some version
 * says).  -1 without a catalog.
 */
static int inline_rows(const char *store, int *bad)
{
	char db[256], hex[STORE_SHA_HEX];
	sqlite3 *h = NULL;
	sqlite3_stmt *s;
	int n = 0;

	*bad = 0;
	snprintf(db, sizeof(db), "%s/catalog.db", store);
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) ||
	    sqlite3_prepare_v2(h,
			       "SELECT sha256, bytes, (SELECT max(size) FROM"
			       " versions v WHERE v.sha256 = i.sha256)"
			       " FROM inline_blobs i",
			       -1, &s, NULL)) {
		sqlite3_close(h);
		return -1;
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		size_t len = (size_t)sqlite3_column_bytes(s, 1);

		store_hash_mem(hex, sqlite3_column_blob(s, 1), len);
		*bad += strcmp(hex, (const char *)sqlite3_column_text(s, 0)) ||
			(sqlite3_int64)len != sqlite3_column_int64(s, 2);
		n++;
	}
	sqlite3_finalize(s);
	sqlite3_close(h);
	return n;
}

/* Files under <store>/blobs. */
static int blob_files(const char *store)
{
	char cmd[512];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "find %s/blobs -type f 2>/dev/null | wc -l",
		 store);
	if ((p = popen(cmd, "r"))) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

/* A store with two environments, labelled JARs, versions, tables, LIKE. */
static void populate(struct ctx *x)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	char *jar1, *jar2;
	size_t n1 = 0, n2 = 0;

	jar1 = t_slurp("fixtures/jars/mongodb.jar", &n1);
	jar2 = t_slurp("integ/data/mongodb-v2.jar", &n2);
	T_CHECK(jar1 && jar2);
	T_INTEQ(repo_env_create(x->f.r, &who, "prod", &err), 0);
	T_INTEQ(repo_env_create(x->f.r, &who, "empty", &err), 0);
	T_INTEQ(upload(x, "prod", "mongodb-connector.jar", jar1, n1), 0);
	T_INTEQ(repo_label_set(x->f.r, &who, "prod", "mongodb-connector.jar",
			       TYPE, "connector", 9, &err),
		0);
	T_INTEQ(repo_label_set(x->f.r, &who, "prod", "mongodb-connector.jar",
			       IDENT, "mongodb", 7, &err),
		0);
	T_INTEQ(upload(x, "prod", "mongodb-connector.jar", jar2, n2), 0);
	/* Three versions of a text file; the latest deleted: next is 4. */
	T_INTEQ(upload(x, "prod", "notes.txt", "one\n", 4), 0);
	T_INTEQ(upload(x, "prod", "notes.txt", "two\n", 4), 0);
	T_INTEQ(upload(x, "prod", "notes.txt", "three\n", 6), 0);
	T_INTEQ(repo_ver_remove(x->f.r, &who, "prod", "notes.txt", 3, &err), 0);
	/* Two versions, then rm: the name's next number is 3 (no
	 * artifact holds it; export keeps it in next-versions). */
	T_INTEQ(upload(x, "prod", "gone.txt", "g1\n", 3), 0);
	T_INTEQ(upload(x, "prod", "gone.txt", "g2\n", 3), 0);
	T_INTEQ(repo_art_remove(x->f.r, &who, "prod", "gone.txt", &err), 0);
	/* An artifact whose name is that of the metadata file. */
	T_INTEQ(upload(x, "prod", "artifact.json", "{}", 2), 0);
	T_INTEQ(upload(x, "prod", "empty.bin", "", 0), 0);
	T_INTEQ(table(x, "prod", "orders",
		      "-- the orders\nCREATE TABLE orders (\n  id INT,\n"
		      "  note STRING COMMENT 'caf\xc3\xa9 \"x\" \\\\'\n) WITH "
		      "('connector' = 'mongodb', 'uri' = 'a''b')"),
		0);
	T_INTEQ(table(x, "prod", "orders_eu",
		      "CREATE TABLE orders_eu (region STRING) WITH "
		      "('collection' = 'eu') LIKE orders"),
		0);
	free(jar1);
	free(jar2);
}

/* ---- tests -----------------------------------------------------------------
 */

static void test_artifact_json(void)
{
	struct export_artifact a, b;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf out = BUF_INIT(1 << 16);
	char k1[] = IDENT, k2[] = TYPE, v1[] = "mongodb", v2[] = "connector";
	char *k[] = {k1, k2}, *v[] = {v1, v2};

	memset(&a, 0, sizeof(a));
	snprintf(a.name, sizeof(a.name), "mongodb-connector.jar");
	a.version = 3;
	a.next = 5;
	a.size = 5;
	snprintf(a.sha256, sizeof(a.sha256), "%s", SHA_HELLO);
	a.mtime = INT64_C(1796019896123456789);
	a.uid = 1000;
	a.nlabels = 2;
	a.keys = k;
	a.values = v;
	T_INTEQ(export_artifact_json(&out, &a), 0);
	T_CONTAINS(buf_str(&out), "\"apiVersion\": \"cmf.confluent.io/v1\"");
	T_CONTAINS(buf_str(&out), "\"kind\": \"Artifact\"");
	T_CONTAINS(buf_str(&out), "\"creationTimestamp\": "
				  "\"2026-11-30T06:24:56.123456789Z\"");
	T_CONTAINS(buf_str(&out), "\"" TYPE "\": \"connector\"");
	T_CONTAINS(buf_str(&out), "\"version\": 3,");
	T_CONTAINS(buf_str(&out), "\"sha256\": \"" SHA_HELLO "\"");
	T_CONTAINS(buf_str(&out), "\"cmfs/next-version\": \"5\"");
	T_INTEQ(export_artifact_parse(&b, out.data, out.len, &err), 0);
	T_STREQ(b.name, "mongodb-connector.jar");
	T_INTEQ(b.version, 3);
	T_INTEQ(b.next, 5);
	T_INTEQ(b.size, 5);
	T_STREQ(b.sha256, SHA_HELLO);
	T_INTEQ(b.mtime, INT64_C(1796019896123456789));
	T_INTEQ(b.uid, 1000);
	T_INTEQ(b.nlabels, 2);
	T_STREQ(b.nlabels > 1 ? b.keys[1] : NULL, TYPE);
	T_STREQ(b.nlabels > 1 ? b.values[1] : NULL, "connector");
	export_artifact_release(&b);
	buf_release(&out);
}

/* What a CMF user writes (the seed's example) is accepted as it is. */
static void test_artifact_minimal(void)
{
	static const char seed[] =
		"{\n  \"apiVersion\": \"cmf.confluent.io/v1\",\n"
		"  \"kind\": \"Artifact\",\n  \"metadata\": {\n"
		"    \"name\": \"mongodb-connector.jar\",\n"
		"    \"labels\": {\n"
		"      \"cmf.confluent.io/sql-artifact-type\": \"connector\",\n"
		"      \"cmf.confluent.io/sql-artifact-identifier\": "
		"\"mongodb\"\n    }\n  },\n  \"spec\": {}\n}\n";
	struct export_artifact a;
	struct cmfs_err err = CMFS_ERR_INIT;

	T_INTEQ(export_artifact_parse(&a, seed, strlen(seed), &err), 0);
	T_STREQ(a.name, "mongodb-connector.jar");
	T_INTEQ(a.version, 0);
	T_INTEQ(a.mtime, -1);
	T_INTEQ(a.nlabels, 2);
	export_artifact_release(&a);
}

/* One refusal: the errno and words of the message. */
static void refused(const char *json, int code, const char *words)
{
	struct export_artifact a;
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = export_artifact_parse(&a, json, strlen(json), &err);

	T_ERRNO(rc, code);
	T_CONTAINS(cmfs_err_msg(&err), words);
	if (!rc)
		export_artifact_release(&a);
}

#define HEAD                                                                   \
	"{\"apiVersion\": \"cmf.confluent.io/v1\", \"kind\": \"Artifact\", "
#define META "\"metadata\": {\"name\": \"x.jar\"}"

static void test_artifact_strict(void)
{
	char deep[200];
	int i;

	refused(HEAD META ",}", EINVAL, "1:");
	refused(HEAD META ",}", EINVAL, "string or '}' expected");
	refused("{\"apiVersion\": \"cmf.confluent.io/v1\",\n  \"kind\": 1}",
		EINVAL, "\"kind\" must be a string, not an integer");
	refused(HEAD META ", \"spec\": {}, \"spec\": {}}", EINVAL,
		"1:107: duplicate object key near '\"spec\"'");
	refused(HEAD META ", \"extra\": 1}", EINVAL, "unknown key \"extra\"");
	refused(HEAD "\"metadata\": {\"name\": \"x.jar\", \"uid\": 1}}", EINVAL,
		"unknown key \"uid\" in metadata");
	refused(HEAD "\"metadata\": {}}", EINVAL, "lacks \"name\"");
	refused("{\"apiVersion\": \"v2\", \"kind\": \"Artifact\", " META "}",
		EINVAL, "apiVersion must be \"cmf.confluent.io/v1\"");
	refused("{\"apiVersion\": \"cmf.confluent.io/v1\", \"kind\": "
		"\"Job\", " META "}",
		EINVAL, "kind must be \"Artifact\"");
	refused(HEAD "\"metadata\": {\"name\": \".hidden\"}}", EINVAL,
		"metadata.name: artifact name '.hidden'");
	refused(HEAD "\"metadata\": {\"name\": \"x.jar\", \"labels\": "
		     "{\"cmf.confluent.io/sql-artifact-type\": \"-bad\"}}}",
		EINVAL, "value '-bad' must be");
	refused(HEAD META ", \"status\": {\"version\": 1.5, \"size\": 1, "
			  "\"checksum\": {\"sha256\": \"" SHA_HELLO "\"}}}",
		EINVAL, "only integers");
	refused(HEAD META ", \"status\": {\"version\": 0, \"size\": 1, "
			  "\"checksum\": {\"sha256\": \"" SHA_HELLO "\"}}}",
		EINVAL, "\"version\" must be at least 1");
	refused(HEAD META ", \"status\": {\"version\": 1, \"size\": 1, "
			  "\"checksum\": {\"sha256\": \"ABC\"}}}",
		EINVAL, "64 lower-case hex");
	refused(HEAD META ", \"status\": {\"version\": 1, \"size\": 1}}",
		EINVAL, "lacks \"checksum\"");
	refused(HEAD "\"metadata\": {\"name\": \"x.jar\", "
		     "\"creationTimestamp\": \"2026-02-30T00:00:00Z\"}}",
		EINVAL, "not RFC 3339");
	/* Past 2262: more nanoseconds since the epoch than an int64 holds. */
	refused(HEAD "\"metadata\": {\"name\": \"x.jar\", "
		     "\"creationTimestamp\": \"9999-01-01T00:00:00Z\"}}",
		EINVAL, "not RFC 3339");
	refused(HEAD "\"metadata\": {\"name\": \"x.jar\", \"annotations\": "
		     "{\"cmfs/uid\": \"-1\"}}}",
		EINVAL, "is not a uid");
	refused(HEAD "\"metadata\": {\"name\": \"x\\ud800.jar\"}}", EINVAL,
		"invalid Unicode '\\uD800'");
	refused(HEAD "\"metadata\": {\"name\": \"x\\q\"}}", EINVAL,
		"invalid escape near '\"x\\q'");
	refused(HEAD "\"metadata\": {\"name\": \"x\\u12\"}}", EINVAL,
		"invalid escape near '\"x\\u12\"'");
	refused(HEAD "\"metadata\": {\"name\": \"x\\u0000\"}}", EINVAL,
		"\\u0000");
	refused(HEAD "\"metadata\": {\"name\": \"x\ty\"}}", EINVAL,
		"control character");
	refused(HEAD "\"metadata\": {\"name\": \"\xff\"}}", EINVAL,
		"unable to decode byte 0xff");
	refused(HEAD META "} trailing", EINVAL,
		"end of file expected near 'trailing'");
	refused(HEAD META ", \"spec\": {\"x\": 1}}", EINVAL,
		"unknown key \"x\" in spec");
	refused("", EINVAL, "expected near end of file");
	refused(HEAD
		"\"metadata\": {\"name\": \"x.jar\", \"annotations\": "
		"{\"cmfs/next-version\": \"2\"}}, \"status\": {\"version\": 3, "
		"\"size\": 5, \"checksum\": {\"sha256\": \"" SHA_HELLO "\"}}}",
		EINVAL, "is not above version 3");
	for (i = 0; i < 40; i++)
		deep[i] = '[';
	deep[i] = '\0';
	refused(deep, EINVAL, "nested deeper than");
	{
		/* More values than a document may hold: refused before
		 * jansson builds them. */
		struct buf b = BUF_INIT(1 << 20);

		buf_addc(&b, '[');
		for (i = 0; i < 100001; i++)
			buf_adds(&b, "[],");
		buf_adds(&b, "[]]");
		refused(buf_str(&b), EFBIG, "1:");
		refused(buf_str(&b), EFBIG, "more values than 100000");
		buf_release(&b);
	}
	{
		/* An object with too many keys (each checked for a twin). */
		struct buf b = BUF_INIT(1 << 20);

		buf_adds(&b, HEAD "\"metadata\": {\"name\": \"x.jar\", "
				  "\"labels\": {");
		for (i = 0; i < 5000; i++)
			buf_printf(&b, "%s\"k%d\": \"v\"", i ? ", " : "", i);
		buf_adds(&b, "}}}");
		refused(buf_str(&b), EFBIG, "more than 4096 keys");
		buf_release(&b);
	}
}

static void test_roundtrip(void)
{
	struct ctx x;
	struct export_stats st;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct fsck_report *fr = NULL;
	char *a, *b, path[256], store3[160], *text;
	struct stat sb;
	int bad;

	setup(&x);
	populate(&x);
	/* Every blob is small: inline, in the catalog; the export reads
	 * them from there. */
	snprintf(path, sizeof(path), "test -z \"$(find %s/blobs -type f)\"",
		 x.f.store);
	T_INTEQ(system(path), 0);
	memset(&st, 0, sizeof(st));
	/* A mounted store (a repo holding it open) can be exported. */
	T_INTEQ(export_dump(x.f.store, x.dir, &st, &err), 0);
	T_INTEQ(st.envs, 2);
	T_INTEQ(st.artifacts, 4);
	T_INTEQ(st.versions, 6);
	T_INTEQ(st.tables, 2);
	T_CHECK(st.events > 10);
	repo_close(x.f.r);
	x.f.r = NULL;

	/* The files are where export.h says. */
	snprintf(path, sizeof(path),
		 "%s/envs/prod/artifacts/mongodb-connector.jar/2/"
		 "mongodb-connector.jar",
		 x.dir);
	T_INTEQ(stat(path, &sb), 0);
	T_INTEQ(sb.st_size, 6160);
	snprintf(path, sizeof(path),
		 "%s/envs/prod/artifacts/artifact.json/1/artifact.json.data",
		 x.dir);
	T_INTEQ(stat(path, &sb), 0);
	snprintf(path, sizeof(path), "%s/envs/prod/tables/orders.sql", x.dir);
	text = t_slurp(path, NULL);
	T_CONTAINS(text, "-- the orders\nCREATE TABLE orders");
	free(text);
	snprintf(path, sizeof(path),
		 "%s/envs/prod/artifacts/notes.txt/2/"
		 "artifact.json",
		 x.dir);
	text = t_slurp(path, NULL);
	T_CONTAINS(text, "\"cmfs/next-version\": \"4\"");
	free(text);
	snprintf(path, sizeof(path), "%s/envs/empty/environment.json", x.dir);
	T_INTEQ(stat(path, &sb), 0);
	snprintf(path, sizeof(path), "%s/envs/prod/next-versions", x.dir);
	text = t_slurp(path, NULL);
	T_STREQ(text, "gone.txt 3\n");
	free(text);
	snprintf(path, sizeof(path), "%s/envs/empty/next-versions", x.dir);
	T_CHECK(stat(path, &sb) != 0);

	memset(&st, 0, sizeof(st));
	T_INTEQ(export_load(x.dir, x.store2, 0, &st, &err), 0);
	T_STREQ(cmfs_err_msg(&err), "");
	T_INTEQ(st.versions, 6);
	a = dump_rows(x.f.store);
	b = dump_rows(x.store2);
	T_CHECK(a && b && strlen(a) > 1000);
	T_STREQ(b, a);
	T_CONTAINS(a, "ver|");
	T_CONTAINS(a, "|notes.txt|4|");
	T_CONTAINS(a, "retired|prod|gone.txt|3|");
	free(b);
	/* inline_max 0: every blob a file, none in the catalog. */
	T_INTEQ(inline_rows(x.store2, &bad), 0);
	T_CHECK(blob_files(x.store2) >= 5);

	/* With the default inline_max, as an upload: the small blobs go
	 * into the catalog, no file each; the same rows, and fsck finds
	 * every one where its version says. */
	snprintf(store3, sizeof(store3), "%s/store3", x.f.tmp);
	memset(&st, 0, sizeof(st));
	T_INTEQ(export_load(x.dir, store3, 64 << 10, &st, &err), 0);
	T_INTEQ(st.versions, 6);
	b = dump_rows(store3);
	T_STREQ(b, a);
	free(b);
	T_INTEQ(inline_rows(store3, &bad), blob_files(x.store2));
	T_INTEQ(bad, 0);
	T_INTEQ(blob_files(store3), 0);
	T_INTEQ(fsck_run(&fr, store3, 0, &err), 0);
	T_INTEQ(fr ? fsck_exit_code(fr) : -1, 0);
	fsck_report_free(fr);
	free(a);

	/* Loading again: the environments exist now. */
	cmfs_err_clear(&err);
	T_ERRNO(export_load(x.dir, x.store2, 0, NULL, &err), EEXIST);
	T_CONTAINS(cmfs_err_msg(&err), "exists in store");
	/* Exporting into a directory that is not empty. */
	cmfs_err_clear(&err);
	T_ERRNO(export_dump(x.f.store, x.dir, NULL, &err), ENOTEMPTY);
	cmfs_err_clear(&err);
	snprintf(path, sizeof(path), "%s/none", x.f.tmp);
	T_ERRNO(export_dump(path, x.dir, NULL, &err), ENOENT);
	teardown(&x);
}

/* Load a tampered copy, with every blob a file and with small ones in
 * the catalog: refused with the file named; target unchanged. */
static void load_refused(struct ctx *x, const char *words)
{
	static const uint64_t inline_max[] = {0, 64 << 10};
	struct cmfs_err err = CMFS_ERR_INIT;
	char *before, *after;
	char blobs[512];
	int i, bad;

	for (i = 0; i < 2; i++) {
		before = dump_rows(x->store2);
		cmfs_err_clear(&err);
		T_CHECK(export_load(x->dir, x->store2, inline_max[i], NULL,
				    &err) < 0);
		T_CONTAINS(cmfs_err_msg(&err), words);
		after = dump_rows(x->store2);
		/* (no catalog before the first load: the same as an empty
		 * one) */
		T_STREQ(after ? after : "", before ? before : "");
		free(before);
		free(after);
		/* No blob is left behind, in a file or the catalog. */
		snprintf(blobs, sizeof(blobs),
			 "rmdir %s/blobs/* 2>/dev/null; "
			 "test -z \"$(ls -A %s/blobs)\"",
			 x->store2, x->store2);
		T_INTEQ(system(blobs), 0);
		T_CHECK(inline_rows(x->store2, &bad) <= 0);
	}
}

static void test_load_refusals(void)
{
	struct ctx x;
	struct cmfs_err err = CMFS_ERR_INIT;
	char path[256], cmd[1024];
	int fd;

	setup(&x);
	populate(&x);
	T_INTEQ(export_dump(x.f.store, x.dir, NULL, &err), 0);
	repo_close(x.f.r);
	x.f.r = NULL;
	/* An empty target store, so nothing there is the load's. */
	T_INTEQ(mkdir(x.store2, 0700), 0);

	/* A byte changed in a version's bytes. */
	snprintf(path, sizeof(path),
		 "%s/envs/prod/artifacts/notes.txt/2/"
		 "notes.txt",
		 x.dir);
	spit(path, "TWO\n");
	load_refused(&x, "but artifact.json says 4 bytes");
	spit(path, "two\n");

	/* A file that does not belong. */
	snprintf(path, sizeof(path),
		 "%s/envs/prod/artifacts/notes.txt/2/"
		 "stray",
		 x.dir);
	spit(path, "x");
	load_refused(&x, "stray: unexpected");
	unlink(path);

	/* A broken artifact.json: the file and line:col are named. */
	snprintf(path, sizeof(path),
		 "%s/envs/prod/artifacts/notes.txt/1/"
		 "artifact.json",
		 x.dir);
	snprintf(cmd, sizeof(cmd),
		 "cp %s %s/bak && sed -i 's/\"spec\": {}/"
		 "\"spec\": {},,/' %s",
		 path, x.f.tmp, path);
	T_INTEQ(system(cmd), 0);
	load_refused(&x, "notes.txt/1/artifact.json:");
	load_refused(&x, "artifact.json:12:14: string or '}' expected");
	snprintf(cmd, sizeof(cmd), "mv %s/bak %s", x.f.tmp, path);
	T_INTEQ(system(cmd), 0);

	/* A table whose text no longer parses. */
	snprintf(path, sizeof(path), "%s/envs/prod/tables/orders_eu.sql",
		 x.dir);
	spit(path, "CREATE TABLE wrong (a INT)");
	load_refused(&x, "orders_eu.sql");
	spit(path, "CREATE TABLE orders_eu (region STRING) WITH "
		   "('collection' = 'eu') LIKE orders");

	/* A bad next-versions line; a name an artifact holds. */
	snprintf(path, sizeof(path), "%s/envs/prod/next-versions", x.dir);
	spit(path, "gone.txt 1\n");
	load_refused(&x, "next-versions:1: not");
	spit(path, "gone.txt 3\nnotes.txt 9\n");
	load_refused(&x, "next-versions:2: notes.txt: an artifact");
	spit(path, "gone.txt 3\n");

	/* An environment not listed, and the marker missing. */
	snprintf(path, sizeof(path), "%s/envs/extra", x.dir);
	T_INTEQ(mkdir(path, 0700), 0);
	load_refused(&x, "not listed in export.json");
	rmdir(path);
	snprintf(path, sizeof(path), "%s/export.json", x.dir);
	snprintf(cmd, sizeof(cmd), "mv %s %s/bak", path, x.f.tmp);
	T_INTEQ(system(cmd), 0);
	load_refused(&x, "not a cmfs export");
	snprintf(cmd, sizeof(cmd), "mv %s/bak %s", x.f.tmp, path);
	T_INTEQ(system(cmd), 0);

	/* A store in use (another process holds its catalog). */
	snprintf(path, sizeof(path), "%s/catalog.db", x.store2);
	fd = open(path, O_RDONLY);
	T_CHECK(fd >= 0);
	if (fd >= 0) {
		pid_t child = fork();
		int st = 0;

		if (child == 0) {
			struct cmfs_err e2 = CMFS_ERR_INIT;

			/* The child loads; the parent holds the file. */
			_exit(export_load(x.dir, x.store2, 0, NULL, &e2) ==
						      -EBUSY &&
					      strstr(cmfs_err_msg(&e2),
						     "in use by pid")
				      ? 0
				      : 1);
		}
		waitpid(child, &st, 0);
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		close(fd);
	}

	/* export.json as exports before jansson wrote it (the list on one
	 * line): still an export. */
	snprintf(path, sizeof(path), "%s/export.json", x.dir);
	spit(path, "{\n  \"apiVersion\": \"cmfs/v1\",\n"
		   "  \"kind\": \"Export\",\n  \"metadata\": {\n"
		   "    \"creationTimestamp\": "
		   "\"2026-11-30T06:24:56.123456789Z\"\n  },\n"
		   "  \"spec\": {\n    \"format\": 1,\n"
		   "    \"cmfsVersion\": \"0.1.0\",\n"
		   "    \"environments\": [\"empty\", \"prod\"]\n  }\n}\n");

	/* After all that, the untouched export still loads. */
	cmfs_err_clear(&err);
	T_INTEQ(export_load(x.dir, x.store2, 0, NULL, &err), 0);
	T_STREQ(cmfs_err_msg(&err), "");
	teardown(&x);
}

/*
 * A mount frees a blob while an export reads a snapshot that refers to
 * it: the blob stays (retired, out of blobs/) until the export lets the
 * store go, and the export finds it there; then the mount reaps it.
 */
static void test_export_hold(void)
{
	struct ctx x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct store *s = NULL;
	size_t len = 100000, i;
	char *big = malloc(len), *back = malloc(len);
	int hold = -1, fd = -1, tries;

	setup(&x);
	T_CHECK(big && back);
	if (!big || !back)
		goto out;
	for (i = 0; i < len; i++)
		big[i] = (char)(i * 7 + i / 251);
	T_INTEQ(repo_env_create(x.f.r, &who, "prod", &err), 0);
	T_INTEQ(fixture_upload(&x.f, &who, "prod", "big.bin", big, len, &v,
			       &err),
		0);
	T_INTEQ(store_open(&s, x.f.store, &err), 0);
	if (!s)
		goto out;
	T_INTEQ(store_export_busy(s), 0);
	T_INTEQ(store_export_hold(s, &hold), 0);
	T_INTEQ(store_export_busy(s), 1);
	T_INTEQ(repo_art_remove(x.f.r, &who, "prod", "big.bin", &err), 0);
	T_INTEQ(repo_sync(x.f.r), 0); /* sync = batch: freed after it */
	usleep(300 * 1000);	      /* the reaper's chance to err */
	T_ERRNO(store_blob_open(s, v.sha256, &fd, NULL), ENOENT);
	T_INTEQ(store_blob_open_retired(s, v.sha256, &fd), 0);
	if (fd >= 0) {
		T_INTEQ(pread(fd, back, len, 0), (ssize_t)len);
		T_CHECK(!memcmp(big, back, len));
		close(fd);
		fd = -1;
	}
	/* Let go: it is reaped within the reaper's next look. */
	close(hold);
	hold = -1;
	T_INTEQ(store_export_busy(s), 0);
	for (tries = 0; tries < 50; tries++) {
		if (store_blob_open_retired(s, v.sha256, &fd) == -ENOENT)
			break;
		close(fd);
		usleep(100 * 1000);
	}
	T_CHECK(tries < 50);
	/* A blob missing for good: the export fails, EIO, and says so. */
	T_INTEQ(fixture_upload(&x.f, &who, "prod", "big2.bin", big, len, &v,
			       &err),
		0);
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", x.f.store,
			 v.sha256, v.sha256);
		T_INTEQ(unlink(path), 0);
	}
	cmfs_err_clear(&err);
	T_ERRNO(export_dump(x.f.store, x.dir, NULL, &err), EIO);
	T_CONTAINS(cmfs_err_msg(&err), "is missing: run cmfs fsck");
out:
	if (hold >= 0)
		close(hold);
	store_close(s);
	free(big);
	free(back);
	teardown(&x);
}

int main(void)
{
	T_RUN(test_artifact_json);
	T_RUN(test_artifact_minimal);
	T_RUN(test_artifact_strict);
	T_RUN(test_roundtrip);
	T_RUN(test_load_refusals);
	T_RUN(test_export_hold);
	return T_DONE();
}
