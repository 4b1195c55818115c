/*
 * test_fsck.c - unit tests of core/fsck.h: a clean store, and stores
 * damaged on purpose (a flipped byte in a blob, a deleted blob, an orphan
 * blob, a missing inspection, a version row with the wrong size, a
 * truncated or emptied catalog), each with the verdict, the exit code,
 * what --repair does (and that it never deletes a good version or a blob
 * while the catalog is damaged), the events line of a repair, and a store
 * held open by another process (checked read-only, nothing repaired).
 *
 * Each test builds its store through repo.h in a fresh mkdtemp directory,
 * closes the repo, damages the files, and runs fsck_run().  JAR fixtures
 * come from tests/fixtures/jars/ (run with cwd = tests/).
 */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
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
#include "fsck.h"
#include "repo.h"
#include "store.h"

#include "fixture.h"

#define TYPE "cmf.confluent.io/sql-artifact-type"
#define IDENT "cmf.confluent.io/sql-artifact-identifier"
#define FIXTURES "fixtures/jars/"

static const struct repo_who who = {1000, 1000, 4242, 0, NULL};

/* A repo whose blobs are all files (the tests below damage files); the
 * inline blobs of the catalog have test_inline. */
static void setup(struct fixture *x)
{
	fixture_open(x, "fsck", NULL, FIXTURE_MNT, 0);
	x->cfg.inline_max = 0;
}

/* Close the repo, so the store is offline. */
static void offline(struct fixture *x)
{
	repo_close(x->r);
	x->r = NULL;
}

static int upload(struct fixture *x, const char *env, const char *name,
		  const void *data, size_t len, struct catalog_version *v)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = fixture_upload(x, &who, env, name, data, len, v, &err);

	if (rc)
		fprintf(stderr, "upload %s: %s\n", name, cmfs_err_msg(&err));
	return rc;
}

static int ups(struct fixture *x, const char *env, const char *name,
	       const char *text, struct catalog_version *v)
{
	return upload(x, env, name, text, strlen(text), v);
}

/* The path of blob `sha` into `out`. */
static void blob_path(char *out, size_t n, const struct fixture *x,
		      const char *sha)
{
	snprintf(out, n, "%s/blobs/%.2s/%s", x->store, sha, sha);
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Run one SQL statement on the store's catalog (to damage it). */
static void sql(const struct fixture *x, const char *stmt)
{
	char db[256];
	sqlite3 *h = NULL;

	snprintf(db, sizeof(db), "%s/catalog.db", x->store);
	if (sqlite3_open(db, &h) || sqlite3_exec(h, stmt, NULL, NULL, NULL))
		fprintf(stderr, "sql %s: %s\n", stmt, sqlite3_errmsg(h));
	sqlite3_close(h);
}

/* One integer from the catalog. */
static long long sql_int(const struct fixture *x, const char *stmt)
{
	char db[256];
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	long long v = -1;

	snprintf(db, sizeof(db), "%s/catalog.db", x->store);
	if (!sqlite3_open(db, &h) &&
	    !sqlite3_prepare_v2(h, stmt, -1, &s, NULL) &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return v;
}

/* Run fsck; the report (or NULL on error) and the message. */
static struct fsck_report *run(const struct fixture *x, int repair, int *rc,
			       char *msg)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct fsck_report *r = NULL;

	*rc = fsck_run(&r, x->store, repair, &err);
	if (msg)
		snprintf(msg, CMFS_ERR_MSG, "%s", cmfs_err_msg(&err));
	return r;
}

/* fsck's exit code for a run (with --repair or not); the report goes. */
static int exit_of(const struct fixture *x, int repair)
{
	int rc, code;
	struct fsck_report *r = run(x, repair, &rc, NULL);

	code = r ? fsck_exit_code(r) : -1;
	fsck_report_free(r);
	return code;
}

/* The formatted report. */
static char *text(const struct fsck_report *r)
{
	struct buf b = BUF_INIT(1 << 20);

	fsck_report_format(&b, r);
	return buf_take(&b, NULL);
}

/* The first problem of `kind`, or NULL. */
static const struct fsck_problem *find(const struct fsck_report *r,
				       enum fsck_kind kind)
{
	size_t i;

	for (i = 0; r && i < r->nproblems; i++)
		if (r->problems[i].kind == kind)
			return &r->problems[i];
	return NULL;
}

/* A store with a labelled JAR in two versions, a text file, a table. */
static void populate(struct fixture *x, struct catalog_version *v1,
		     struct catalog_version *v2, struct catalog_version *txt)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	char *jar1, *jar2;
	size_t n1 = 0, n2 = 0;
	const char *ddl = "CREATE TABLE orders (id INT) WITH "
			  "('connector' = 'mongodb')";

	jar1 = t_slurp(FIXTURES "mongodb.jar", &n1);
	jar2 = t_slurp("integ/data/mongodb-v2.jar", &n2);
	T_CHECK(jar1 && jar2);
	T_INTEQ(repo_env_create(x->r, &who, "prod", &err), 0);
	T_INTEQ(upload(x, "prod", "mongodb-connector.jar", jar1, n1, v1), 0);
	T_INTEQ(repo_label_set(x->r, &who, "prod", "mongodb-connector.jar",
			       TYPE, "connector", 9, &err),
		0);
	T_INTEQ(repo_label_set(x->r, &who, "prod", "mongodb-connector.jar",
			       IDENT, "mongodb", 7, &err),
		0);
	T_INTEQ(upload(x, "prod", "mongodb-connector.jar", jar2, n2, v2), 0);
	T_INTEQ(ups(x, "prod", "notes.txt", "hello\n", txt), 0);
	T_INTEQ(repo_table_write(x->r, &who, "prod", "orders", ddl, strlen(ddl),
				 &err),
		0);
	free(jar1);
	free(jar2);
}

/* A fresh store, populated, its repo closed: what fsck is run on. */
static void stored(struct fixture *x, struct catalog_version *v1,
		   struct catalog_version *v2, struct catalog_version *txt)
{
	setup(x);
	populate(x, v1, v2, txt);
	offline(x);
}

/* ---- tests ----------------------------------------------------------------
 */

static void test_clean(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	struct fsck_report *r;
	char *s;
	int rc;

	stored(&x, &v1, &v2, &t);
	r = run(&x, 0, &rc, NULL);
	T_INTEQ(rc, 0);
	T_CHECK(r != NULL);
	if (r) {
		T_INTEQ(r->nproblems, 0);
		T_INTEQ(r->nenvs, 1);
		T_INTEQ(r->nartifacts, 2);
		T_INTEQ(r->nversions, 3);
		T_INTEQ(r->nblobs, 3);
		T_INTEQ(r->busy, 0);
		T_INTEQ(fsck_exit_code(r), FSCK_EXIT_OK);
		s = text(r);
		T_CONTAINS(s, "1 environments, 2 artifacts, 3 versions, "
			      "3 blobs");
		T_CONTAINS(s, ": clean");
		free(s);
	}
	fsck_report_free(r);
	/* --repair on a clean store changes nothing. */
	r = run(&x, 1, &rc, NULL);
	T_INTEQ(rc, 0);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_OK);
	fsck_report_free(r);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions"), 3);
	fixture_close(&x);
}

/* A store with nothing in it yet (and no blob at all) is clean. */
static void test_empty(void)
{
	struct fixture x;
	struct fsck_report *r;
	int rc;

	setup(&x);
	offline(&x);
	r = run(&x, 1, &rc, NULL);
	T_INTEQ(rc, 0);
	T_INTEQ(r ? r->nblobs + r->nversions + r->nproblems : 99, 0);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_OK);
	fsck_report_free(r);
	fixture_close(&x);
}

static void test_not_a_store(void)
{
	struct fixture x;
	struct fsck_report *r;
	char msg[CMFS_ERR_MSG], path[100];
	int rc;

	setup(&x);
	offline(&x);
	snprintf(path, sizeof(path), "%s/none", x.tmp);
	free(x.cfg.store_path);
	x.cfg.store_path = NULL;
	snprintf(x.store, sizeof(x.store), "%s", path);
	r = run(&x, 0, &rc, msg);
	T_ERRNO(rc, ENOENT);
	T_CHECK(r == NULL);
	T_CHECK(!exists(path)); /* never created */
	/* An empty directory is not a store either. */
	mkdir(path, 0700);
	r = run(&x, 1, &rc, msg);
	T_ERRNO(rc, ENOENT);
	T_CONTAINS(msg, "not a cmfs store");
	T_CHECK(r == NULL);
	fixture_close(&x);
}

static void test_flipped_byte(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	const struct fsck_problem *p;
	struct fsck_report *r;
	char path[256], *s;
	int fd, rc;

	stored(&x, &v1, &v2, &t);
	blob_path(path, sizeof(path), &x, v2.sha256);
	fd = open(path, O_WRONLY);
	T_CHECK(fd >= 0 && pwrite(fd, "X", 1, 100) == 1);
	close(fd);

	r = run(&x, 0, &rc, NULL);
	T_INTEQ(rc, 0);
	p = find(r, FSCK_BLOB_CORRUPT);
	T_CHECK(p != NULL);
	if (p) {
		T_STREQ(p->env, "prod");
		T_STREQ(p->artifact, "mongodb-connector.jar");
		T_INTEQ(p->version, 2);
		T_STREQ(p->sha256, v2.sha256);
		T_CONTAINS(p->what, "is corrupt: its bytes hash to");
		T_INTEQ(p->fixed, 0);
	}
	T_INTEQ(r ? r->nproblems : 0, 1);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	s = r ? text(r) : NULL;
	T_CONTAINS(s, "env prod, artifact mongodb-connector.jar, version 2");
	T_CONTAINS(s, "cmfs fsck --repair");
	free(s);
	fsck_report_free(r);
	T_CHECK(exists(path)); /* a check alone changes nothing */

	r = run(&x, 1, &rc, NULL);
	T_INTEQ(rc, 0);
	p = find(r, FSCK_BLOB_CORRUPT);
	T_CHECK(p && p->fixed);
	T_CONTAINS(p ? p->done : NULL,
		   "removed version 2; "
		   "mongodb-connector.jar is now at version 1");
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_CORRECTED);
	fsck_report_free(r);
	/* Version 1 and its labels stay; the corrupt blob is gone; the
	 * number 2 is never given again. */
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions v JOIN artifacts"
			    " a ON a.id = v.artifact_id WHERE a.name ="
			    " 'mongodb-connector.jar'"),
		1);
	T_INTEQ(sql_int(&x, "SELECT max(n) FROM versions v JOIN artifacts a"
			    " ON a.id = v.artifact_id WHERE a.name ="
			    " 'mongodb-connector.jar'"),
		1);
	T_INTEQ(sql_int(&x, "SELECT next_n FROM artifacts WHERE name ="
			    " 'mongodb-connector.jar'"),
		3);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM labels"), 2);
	T_CHECK(!exists(path));
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM events WHERE"
			    " CAST(line AS TEXT) LIKE"
			    " '%action=fsck-repair artifact="
			    "mongodb-connector.jar version=2 %latest=1"
			    " result=ok%'"),
		1);
	T_INTEQ(exit_of(&x, 0), FSCK_EXIT_OK);
	fixture_close(&x);
}

static void test_deleted_blob(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	const struct fsck_problem *p;
	struct fsck_report *r;
	char path[256];
	int rc;

	stored(&x, &v1, &v2, &t);
	blob_path(path, sizeof(path), &x, t.sha256);
	T_INTEQ(unlink(path), 0);
	r = run(&x, 0, &rc, NULL);
	p = find(r, FSCK_BLOB_MISSING);
	T_CHECK(p != NULL);
	if (p) {
		T_STREQ(p->artifact, "notes.txt");
		T_INTEQ(p->version, 1);
		T_CONTAINS(p->what, "is missing");
	}
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	fsck_report_free(r);
	r = run(&x, 1, &rc, NULL);
	p = find(r, FSCK_BLOB_MISSING);
	T_CONTAINS(p ? p->done : NULL, "removed version 1 and notes.txt");
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_CORRECTED);
	fsck_report_free(r);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM artifacts WHERE name ="
			    " 'notes.txt'"),
		0);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions"), 2);
	/* Its number is not reused: notes.txt goes on at 2. */
	fixture_reopen(&x);
	{
		struct catalog_version v;

		T_INTEQ(ups(&x, "prod", "notes.txt", "again\n", &v), 0);
		T_INTEQ(v.n, 2);
	}
	fixture_close(&x);
}

/* List `sha` as loose in x's catalog, as an upload does before it links
 * a blob: with no repo open. */
static void mark_loose(const struct fixture *x, const char *sha)
{
	struct catalog *c = NULL;
	char db[256];

	snprintf(db, sizeof(db), "%s/catalog.db", x->store);
	T_INTEQ(catalog_open(&c, db, NULL), 0);
	T_INTEQ(c ? catalog_loose_add(c, sha, NULL) : -1, 0);
	catalog_close(c);
}

static void test_orphan(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	const struct fsck_problem *p;
	struct fsck_report *r;
	char dir[256], path[256], good[256];
	/* SHA-256 of "orphan\n" */
	const char *sha = "2b2d2fa0c84d999ef6544e65d0488c82b9c11c4a08b7bf29"
			  "25d130b366a3795b";
	FILE *f;
	int rc;

	stored(&x, &v1, &v2, &t);
	snprintf(dir, sizeof(dir), "%s/blobs/2b", x.store);
	mkdir(dir, 0700);
	blob_path(path, sizeof(path), &x, sha);
	f = fopen(path, "w");
	T_CHECK(f && fputs("orphan\n", f) >= 0);
	if (f)
		fclose(f);
	/* Not known to the catalog: a problem, kept by a mount. */
	r = run(&x, 0, &rc, NULL);
	p = find(r, FSCK_ORPHAN);
	T_CONTAINS(p ? p->what : NULL, "(7 bytes) is not known to the "
				       "catalog");
	T_CHECK(p && !p->harmless);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	fsck_report_free(r);
	/* Listed as loose: what an upload interrupted after its link
	 * leaves. */
	mark_loose(&x, sha);
	r = run(&x, 0, &rc, NULL);
	p = find(r, FSCK_ORPHAN);
	T_CHECK(p != NULL);
	T_STREQ(p ? p->sha256 : NULL, sha);
	T_CONTAINS(p ? p->what : NULL, "(7 bytes) is an orphan");
	/* An intact file nothing refers to is what an interrupted upload
	 * leaves, and the next mount sweeps: named so, not a problem. */
	T_CONTAINS(p ? p->what : NULL, "left from an interrupted upload; "
				       "the next mount removes it");
	T_CHECK(p && p->harmless);
	T_INTEQ(r ? r->nproblems : 0, 1);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_OK);
	{
		struct buf b = BUF_INIT(1 << 16);

		T_INTEQ(r ? fsck_report_format(&b, r) : -1, 0);
		T_CONTAINS(buf_str(&b), "interrupted upload");
		T_CONTAINS(buf_str(&b), "): clean\n");
		buf_release(&b);
	}
	fsck_report_free(r);
	/* --repair removes it; still nothing was wrong. */
	r = run(&x, 1, &rc, NULL);
	p = find(r, FSCK_ORPHAN);
	T_CHECK(p && p->fixed);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_OK);
	fsck_report_free(r);
	T_CHECK(!exists(path));
	blob_path(good, sizeof(good), &x, v1.sha256);
	T_CHECK(exists(good));
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions"), 3);
	fixture_close(&x);
}

/* Only the broken one of three versions goes. */
static void test_good_versions_stay(void)
{
	struct fixture x;
	struct catalog_version a, b, c;
	struct fsck_report *r;
	char path[256];
	int rc;

	setup(&x);
	T_INTEQ(repo_env_create(x.r, &who, "dev", NULL), 0);
	T_INTEQ(ups(&x, "dev", "lib.txt", "one", &a), 0);
	T_INTEQ(ups(&x, "dev", "lib.txt", "two", &b), 0);
	T_INTEQ(ups(&x, "dev", "lib.txt", "three", &c), 0);
	offline(&x);
	blob_path(path, sizeof(path), &x, b.sha256);
	T_INTEQ(unlink(path), 0);
	r = run(&x, 1, &rc, NULL);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_CORRECTED);
	T_CONTAINS(r && r->nproblems ? r->problems[0].done : NULL,
		   "removed version 2; lib.txt is now at version 3");
	fsck_report_free(r);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions WHERE n IN"
			    " (1, 3)"),
		2);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions"), 2);
	fixture_close(&x);
}

static void test_inspection(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	const struct fsck_problem *p;
	struct fsck_report *r;
	int rc;

	stored(&x, &v1, &v2, &t);
	sql(&x, "PRAGMA foreign_keys = ON; DELETE FROM inspections");
	r = run(&x, 0, &rc, NULL);
	T_INTEQ(r ? r->nproblems : 0, 2);
	p = find(r, FSCK_INSPECTION);
	T_CONTAINS(p ? p->what : NULL, "no inspection is recorded");
	fsck_report_free(r);
	T_INTEQ(exit_of(&x, 1), FSCK_EXIT_CORRECTED);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM inspections"), 2);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM insp_factories"
			    " WHERE identifier = 'mongodb'"),
		2);

	/* Factories that no longer read back: damaged, and recomputed. */
	sql(&x, "UPDATE insp_factories SET class = x'00'");
	r = run(&x, 0, &rc, NULL);
	p = find(r, FSCK_INSPECTION);
	T_CONTAINS(p ? p->what : NULL, "is damaged");
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	fsck_report_free(r);
	T_INTEQ(exit_of(&x, 1), FSCK_EXIT_CORRECTED);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM insp_factories"
			    " WHERE identifier = 'mongodb'"),
		2);
	T_INTEQ(exit_of(&x, 0), FSCK_EXIT_OK);
	fixture_close(&x);
}

static void test_size_row(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	const struct fsck_problem *p;
	struct fsck_report *r;
	int rc;

	stored(&x, &v1, &v2, &t);
	sql(&x, "UPDATE versions SET size = size + 1 WHERE size = 6");
	r = run(&x, 1, &rc, NULL);
	p = find(r, FSCK_SIZE);
	T_CHECK(p != NULL);
	T_CONTAINS(p ? p->what : NULL, "the catalog says 7 bytes");
	T_CONTAINS(p ? p->done : NULL, "restore the store from a backup");
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	fsck_report_free(r);
	/* The intact blob's version is kept. */
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions"), 3);
	fixture_close(&x);
}

/*
 * An environment's kept counts (what max_artifacts_per_env and
 * max_tables_per_env are checked against) that drifted from its rows: a
 * hand-edited catalog.  Reported; --repair sets them from the rows.
 */
static void test_counts(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	const struct fsck_problem *p;
	struct fsck_report *r;
	int rc;

	stored(&x, &v1, &v2, &t);
	sql(&x, "UPDATE envs SET nart = 7, ntab = 0");
	r = run(&x, 0, &rc, NULL);
	p = find(r, FSCK_COUNT);
	T_CHECK(p != NULL);
	T_STREQ(p ? p->env : NULL, "prod");
	T_CONTAINS(p ? p->what : NULL, "counts 7 artifacts and 0 tables; it "
		   "holds 2 and 1");
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	fsck_report_free(r);
	T_INTEQ(sql_int(&x, "SELECT nart FROM envs"), 7);
	r = run(&x, 1, &rc, NULL);
	p = find(r, FSCK_COUNT);
	T_CHECK(p && p->fixed);
	T_CONTAINS(p ? p->done : NULL, "counts set from the rows");
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_CORRECTED);
	fsck_report_free(r);
	T_INTEQ(sql_int(&x, "SELECT nart FROM envs"), 2);
	T_INTEQ(sql_int(&x, "SELECT ntab FROM envs"), 1);
	T_INTEQ(exit_of(&x, 0), FSCK_EXIT_OK);
	fixture_close(&x);
}

/* Versions that name no inspection row, or another blob's: named, and
 * --repair points each at its blob's. */
static void test_insp_links(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	const struct fsck_problem *p;
	struct fsck_report *r;
	int rc, n;

	stored(&x, &v1, &v2, &t);
	n = sql_int(&x, "SELECT count(*) FROM versions WHERE insp > 0");
	T_CHECK(n >= 2); /* the JAR's versions */
	sql(&x, "UPDATE versions SET insp = NULL WHERE n = 1;"
		"UPDATE versions SET insp = 999 WHERE n = 2");
	r = run(&x, 0, &rc, NULL);
	p = find(r, FSCK_INSP_LINK);
	T_CHECK(p != NULL);
	T_CONTAINS(p ? p->what : NULL, "versions do not name their blob's "
		   "inspection");
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	fsck_report_free(r);
	r = run(&x, 1, &rc, NULL);
	p = find(r, FSCK_INSP_LINK);
	T_CHECK(p && p->fixed);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_CORRECTED);
	fsck_report_free(r);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions WHERE insp > 0"),
		n);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions WHERE insp IS NOT"
			" (SELECT id FROM inspections i"
			" WHERE i.sha256 = versions.sha256)"),
		0);
	T_INTEQ(exit_of(&x, 0), FSCK_EXIT_OK);
	fixture_close(&x);
}

/*
 * After a crash with sync = batch the catalog lists the blobs that were
 * not yet synced; fsck checks every blob anyway, says how many were
 * listed, and --repair clears the list (a mount would check them again).
 */
static void test_unsynced_list(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	struct fsck_report *r;
	char q[200], *s;
	int rc;

	stored(&x, &v1, &v2, &t);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM unsynced"), 0);
	snprintf(q, sizeof(q), "INSERT INTO unsynced(sha256) VALUES('%s')",
		 v2.sha256);
	sql(&x, q);
	r = run(&x, 0, &rc, NULL);
	T_INTEQ(r ? r->nunsynced : 0, 1);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_OK);
	s = r ? text(r) : NULL;
	T_CONTAINS(s, "1 blobs were listed as not yet synced");
	T_CONTAINS(s, "the next mount checks them again");
	free(s);
	fsck_report_free(r);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM unsynced"), 1);
	r = run(&x, 1, &rc, NULL);
	s = r ? text(r) : NULL;
	T_CONTAINS(s, "the list is cleared");
	free(s);
	fsck_report_free(r);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM unsynced"), 0);
	fixture_close(&x);
}

/* A damaged catalog: reported; nothing, not even an orphan, is touched. */
static void test_truncated_catalog(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	const struct fsck_problem *p;
	struct fsck_report *r;
	char db[256], path[256];
	struct stat st;
	int rc;

	stored(&x, &v1, &v2, &t);
	snprintf(db, sizeof(db), "%s/catalog.db", x.store);
	T_INTEQ(stat(db, &st), 0);
	T_INTEQ(truncate(db, st.st_size / 2), 0);
	r = run(&x, 1, &rc, NULL);
	T_INTEQ(rc, 0);
	p = find(r, FSCK_CATALOG);
	T_CHECK(p != NULL);
	T_CONTAINS(p ? p->what : NULL, "malformed");
	T_CONTAINS(p ? p->done : NULL, "not repairable");
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	T_INTEQ(r ? r->nblobs : 0, 3);
	fsck_report_free(r);
	blob_path(path, sizeof(path), &x, v1.sha256);
	T_CHECK(exists(path));

	/* An emptied catalog has no schema: not a store to sweep. */
	T_INTEQ(truncate(db, 0), 0);
	r = run(&x, 1, &rc, NULL);
	p = find(r, FSCK_CATALOG);
	T_CONTAINS(p ? p->what : NULL, "no cmfs schema");
	T_CHECK(find(r, FSCK_ORPHAN) == NULL);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	fsck_report_free(r);
	T_CHECK(exists(path));
	T_INTEQ(stat(db, &st), 0);
	T_INTEQ(st.st_size, 0); /* fsck did not create a schema */

	/* A missing catalog with blobs left. */
	T_INTEQ(unlink(db), 0);
	r = run(&x, 1, &rc, NULL);
	T_INTEQ(rc, 0);
	p = find(r, FSCK_CATALOG);
	T_CONTAINS(p ? p->what : NULL, "catalog.db is missing");
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	fsck_report_free(r);
	T_CHECK(exists(path));
	T_CHECK(!exists(db));
	fixture_close(&x);
}

/* Another process holds the catalog open: read-only, no repair. */
static void test_busy(void)
{
	struct fixture x;
	struct catalog_version v1, v2, t;
	struct fsck_report *r;
	char db[256], path[256], *s;
	int pipefd[2], rc;
	pid_t child;

	stored(&x, &v1, &v2, &t);
	blob_path(path, sizeof(path), &x, t.sha256);
	T_INTEQ(unlink(path), 0);
	snprintf(db, sizeof(db), "%s/catalog.db", x.store);
	T_INTEQ(pipe(pipefd), 0);
	child = fork();
	if (child == 0) {
		int fd = open(db, O_RDONLY);
		char c;

		close(pipefd[1]);
		if (fd >= 0)
			(void)!read(pipefd[0], &c, 1); /* until closed */
		_exit(0);
	}
	close(pipefd[0]);
	/* Wait until the child has the file open. */
	for (rc = 0; rc < 200 && fsck_store_busy(x.store) != child; rc++)
		usleep(10000);
	T_INTEQ(fsck_store_busy(x.store), child);
	r = run(&x, 1, &rc, NULL);
	T_INTEQ(rc, 0);
	T_INTEQ(r ? r->busy : 0, child);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_UNCORRECTED);
	T_CONTAINS(r && r->nproblems ? r->problems[0].done : NULL,
		   "not repaired: the store is in use by pid");
	s = r ? text(r) : NULL;
	T_CONTAINS(s, "checked read-only");
	free(s);
	fsck_report_free(r);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions"), 3);
	close(pipefd[1]);
	waitpid(child, NULL, 0);
	T_INTEQ(fsck_store_busy(x.store), 0);
	T_INTEQ(exit_of(&x, 1), FSCK_EXIT_CORRECTED);
	fixture_close(&x);
}

/* The n-th problem of `kind` (from 0), or NULL. */
static const struct fsck_problem *find_nth(const struct fsck_report *r,
					   enum fsck_kind kind, int n)
{
	size_t i;

	for (i = 0; r && i < r->nproblems; i++)
		if (r->problems[i].kind == kind && n-- == 0)
			return &r->problems[i];
	return NULL;
}

/* Blob `sha` as a file of the store holding `text`: 0 or -1. */
static int put_file(const struct fixture *x, const char *sha, const char *text)
{
	char dir[256], path[256];
	FILE *f;
	int ok;

	snprintf(dir, sizeof(dir), "%s/blobs/%.2s", x->store, sha);
	mkdir(dir, 0700);
	blob_path(path, sizeof(path), x, sha);
	if (!(f = fopen(path, "w")))
		return -1;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/*
 * Inline blobs (rows of the catalog): hashed like files; a corrupt row
 * takes its version; an orphan row goes; a blob kept twice (a file from
 * before, and the row) keeps one copy, the intact one.
 */
static void test_inline(void)
{
	struct fixture x;
	struct catalog_version a, b, c;
	const struct fsck_problem *p;
	struct fsck_report *r;
	char q[512], path[256], zed[STORE_SHA_HEX];
	int rc;

	fixture_open(&x, "fsck", NULL, FIXTURE_MNT, 0);
	T_INTEQ(repo_env_create(x.r, &who, "prod", NULL), 0);
	T_INTEQ(ups(&x, "prod", "a.txt", "alpha\n", &a), 0);
	T_INTEQ(ups(&x, "prod", "b.txt", "beta\n", &b), 0);
	T_INTEQ(ups(&x, "prod", "c.txt", "gamma\n", &c), 0);
	offline(&x);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM inline_blobs"), 3);
	r = run(&x, 0, &rc, NULL);
	T_INTEQ(r ? (int)r->nproblems : -1, 0);
	T_INTEQ(r ? r->nblobs : 0, 3);
	T_INTEQ(r ? (long long)r->blob_bytes : 0, 17);
	fsck_report_free(r);

	/* Damage: a.txt's row has other bytes; a row nothing refers to; b's
	 * blob also as a file (intact); c's as a file, its row corrupt. */
	snprintf(q, sizeof(q),
		 "UPDATE inline_blobs SET bytes = X'00' WHERE sha256 = '%s'",
		 a.sha256);
	sql(&x, q);
	fixture_sha(zed, "zed", 3);
	snprintf(q, sizeof(q),
		 "INSERT INTO inline_blobs(sha256, bytes) VALUES('%s', 'zed')",
		 zed);
	sql(&x, q);
	snprintf(q, sizeof(q),
		 "UPDATE inline_blobs SET bytes = 'gamma?' WHERE sha256 = '%s'",
		 c.sha256);
	sql(&x, q);
	T_INTEQ(put_file(&x, b.sha256, "beta\n"), 0);
	T_INTEQ(put_file(&x, c.sha256, "gamma\n"), 0);

	r = run(&x, 0, &rc, NULL);
	p = find(r, FSCK_BLOB_CORRUPT);
	T_CHECK(p != NULL);
	T_STREQ(p ? p->artifact : NULL, "a.txt");
	T_CONTAINS(p ? p->what : NULL, "is corrupt: its bytes hash to");
	p = find_nth(r, FSCK_BLOB_CORRUPT, 1);
	T_STREQ(p ? p->sha256 : NULL, c.sha256);
	T_INTEQ(p ? (int)p->version : -1, 0);
	T_CONTAINS(p ? p->what : NULL, "second copy in the catalog, corrupt");
	p = find_nth(r, FSCK_ORPHAN, 0);
	if (p && strcmp(p->sha256, b.sha256))
		p = find_nth(r, FSCK_ORPHAN, 1);
	T_STREQ(p ? p->sha256 : NULL, b.sha256);
	T_CONTAINS(p ? p->what : NULL, "second copy in the store");
	p = find_nth(r, FSCK_ORPHAN, 0);
	if (p && strcmp(p->sha256, zed))
		p = find_nth(r, FSCK_ORPHAN, 1);
	T_STREQ(p ? p->sha256 : NULL, zed);
	T_CONTAINS(p ? p->what : NULL, "(3 bytes) is an orphan");
	T_INTEQ(r ? (int)r->nproblems : -1, 4);
	fsck_report_free(r);

	r = run(&x, 1, &rc, NULL);
	T_INTEQ(r ? fsck_exit_code(r) : -1, FSCK_EXIT_CORRECTED);
	fsck_report_free(r);
	/* a.txt is gone with its row; zed's row is gone; b keeps its row
	 * and loses the file; c keeps its file and loses the row. */
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM versions"), 2);
	T_INTEQ(sql_int(&x, "SELECT count(*) FROM artifacts WHERE name ="
			    " 'a.txt'"),
		0);
	snprintf(q, sizeof(q),
		 "SELECT count(*) FROM inline_blobs WHERE sha256 IN"
		 " ('%s', '%s', '%s')",
		 a.sha256, zed, c.sha256);
	T_INTEQ(sql_int(&x, q), 0);
	snprintf(q, sizeof(q),
		 "SELECT count(*) FROM inline_blobs WHERE sha256 = '%s'",
		 b.sha256);
	T_INTEQ(sql_int(&x, q), 1);
	blob_path(path, sizeof(path), &x, b.sha256);
	T_CHECK(!exists(path));
	blob_path(path, sizeof(path), &x, c.sha256);
	T_CHECK(exists(path));
	T_INTEQ(exit_of(&x, 0), FSCK_EXIT_OK);
	fixture_close(&x);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	T_RUN(test_clean);
	T_RUN(test_empty);
	T_RUN(test_not_a_store);
	T_RUN(test_flipped_byte);
	T_RUN(test_deleted_blob);
	T_RUN(test_orphan);
	T_RUN(test_good_versions_stay);
	T_RUN(test_inspection);
	T_RUN(test_size_row);
	T_RUN(test_counts);
	T_RUN(test_insp_links);
	T_RUN(test_unsynced_list);
	T_RUN(test_truncated_catalog);
	T_RUN(test_busy);
	T_RUN(test_inline);
	return T_DONE();
}
