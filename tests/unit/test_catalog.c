/*
 * test_catalog.c - unit tests of the catalog (core/catalog.h) over its
 * SQLite backend: schema creation and migration, environments, artifacts
 * and versions (numbers never reused), blob references, labels,
 * inspections, tables with ordered options, the events log read at any
 * offset and size, transactions that roll back, and the integrity check.
 * Each test opens a catalog file in a fresh mkdtemp directory.
 */
#define _GNU_SOURCE
#include "t.h"

/* A factory's options, none: an initializer of struct options_set. */
#define NO_OPTIONS { NULL, 0, 0, NULL }

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "catalog.h"
#include "catalog_memo.h"
#include "err.h"
#include "jar.h"

#include "fixture.h"

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define SHA_ONE                                                                \
	"1111111111111111111111111111111111111111111111111111111111111111"
#define SHA_D "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define SHA_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

/* ---- helpers --------------------------------------------------------------- */

static char tmp[64];
static char dbpath[128];

static void mktemp_dir(void)
{
	fixture_tmpdir(tmp, sizeof(tmp), "catalog");
	snprintf(dbpath, sizeof(dbpath), "%s/catalog.db", tmp);
}

static void rm_temp_dir(void)
{
	t_rmtree(tmp);
}

/* A fresh temp dir and a catalog in it. */
static struct catalog *setup(void)
{
	struct catalog *c = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;

	mktemp_dir();
	if (catalog_open(&c, dbpath, &err)) {
		fprintf(stderr, "catalog_open: %s\n", cmfs_err_msg(&err));
		exit(2);
	}
	return c;
}

static void teardown(struct catalog *c)
{
	catalog_close(c);
	rm_temp_dir();
}

/* The first column of query `q`'s first row, read with SQLite directly;
 * -1 when there is none. */
static long long query_int(const char *q)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	long long v = -1;

	if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL))
		return -1;
	if (!sqlite3_prepare_v2(db, q, -1, &s, NULL)) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return v;
}

/* PRAGMA `what` of the file. */
static long long pragma_int(const char *what)
{
	char q[128];

	snprintf(q, sizeof(q), "PRAGMA %s", what);
	return query_int(q);
}

/* The journal mode of the file, as text ("wal"), into `out`. */
static void journal_mode(char *out, size_t n)
{
	sqlite3 *db;
	sqlite3_stmt *s;

	snprintf(out, n, "?");
	if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL))
		return;
	if (!sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL)) {
		if (sqlite3_step(s) == SQLITE_ROW)
			snprintf(out, n, "%s", sqlite3_column_text(s, 0));
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
}

static int exec_sql(const char *q)
{
	sqlite3 *db;
	int rc;

	if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL))
		return -1;
	rc = sqlite3_exec(db, q, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

/* An environment, made or die. */
static int64_t env(struct catalog *c, const char *name)
{
	struct catalog_env e;

	if (catalog_env_add(c, name, 0, 1, &e, NULL)) {
		fprintf(stderr, "env_add %s failed\n", name);
		exit(2);
	}
	return e.id;
}

/* An artifact with one version of blob `sha`, made or die. */
static int64_t art(struct catalog *c, int64_t env_id, const char *name,
		   const char *sha, uint64_t size)
{
	int64_t id;

	if (catalog_art_add(c, env_id, name, &id, NULL) ||
	    catalog_ver_add(c, id, sha, size, 100, 0, NULL, NULL)) {
		fprintf(stderr, "artifact %s failed\n", name);
		exit(2);
	}
	return id;
}

/* Collectors for the list functions: names joined with ','. */
static int cat_env(void *arg, const struct catalog_env *e)
{
	return buf_printf(arg, "%s,", e->name);
}

static int cat_art(void *arg, const struct catalog_artifact *a)
{
	return buf_printf(arg, "%s:%lld/%lld,", a->name, (long long)a->latest.n,
			  (long long)a->nversions);
}

static int cat_ver(void *arg, const struct catalog_version *v)
{
	return buf_printf(arg, "%lld,", (long long)v->n);
}

static int cat_label(void *arg, const char *key, const char *value)
{
	return buf_printf(arg, "%s=%s,", key, value);
}

static int cat_table(void *arg, const struct catalog_table *t)
{
	return buf_printf(arg, "%s,", t->name);
}

static int stop_at_first(void *arg, const struct catalog_env *e)
{
	(void)e;
	(*(int *)arg)++;
	return -ECANCELED;
}

/* ---- open and migrate ------------------------------------------------------ */

/* A version-10 catalog made as version 9 had it: no inspector stamp. */
#define V10_TO_V9                                                              \
	"ALTER TABLE inspections DROP COLUMN inspector;"                       \
	"PRAGMA user_version = 9;"

/* A version-8 catalog made as version 7 had it: no retired names. */
#define V8_TO_V7                                                               \
	"DROP TRIGGER art_retire;"                                             \
	"DROP TRIGGER art_reuse;"                                              \
	"DROP INDEX retired_holder;"                                           \
	"DROP TABLE retired;"                                                  \
	"PRAGMA user_version = 7;"

/* A version-16 catalog made as version 15 had it: the triggers on INSERT
 * into artifacts and versions. */
#define V16_TO_V15                                                             \
	"CREATE TRIGGER art_add AFTER INSERT ON artifacts BEGIN"               \
	" UPDATE envs SET nart = nart + 1 WHERE id = NEW.env_id; END;"         \
	"CREATE TRIGGER art_reuse AFTER INSERT ON artifacts"                   \
	" WHEN EXISTS(SELECT 1 FROM retired WHERE name = NEW.name AND env ="   \
	" (SELECT name FROM envs WHERE id = NEW.env_id)) BEGIN"                \
	" UPDATE artifacts SET next_n = max(next_n, (SELECT next_n"            \
	" FROM retired WHERE name = NEW.name AND env ="                        \
	" (SELECT name FROM envs WHERE id = NEW.env_id)))"                     \
	" WHERE id = NEW.id;"                                                  \
	" DELETE FROM retired WHERE name = NEW.name AND env ="                 \
	" (SELECT name FROM envs WHERE id = NEW.env_id); END;"                 \
	"CREATE TRIGGER loose_taken AFTER INSERT ON versions"                  \
	" BEGIN DELETE FROM loose WHERE sha256 = NEW.sha256; END;"             \
	"PRAGMA user_version = 15;"
/* A version-15 catalog made as version 14 had it: the unknown sets as
 * factory_options rows of role 'unknown', one a set. */
#define V15_TO_V14                                                             \
	"INSERT INTO factory_options(insp, factory, role, key)"                \
	" SELECT f.insp, f.seq, 'unknown', u.value FROM insp_factories f,"     \
	" json_each('[\"' || replace(f.unknown, ',', '\",\"') || '\"]') u"     \
	" WHERE f.unknown IS NOT NULL;"                                        \
	"ALTER TABLE insp_factories DROP COLUMN unknown;"                      \
	"PRAGMA user_version = 14;"
/* A version-7 catalog made as version 6 had it: events in a rowid table
 * with an index on (env, off), lines and all. */
/* A version-14 catalog made as version 13 had it: events keyed by (env,
 * off) in one WITHOUT ROWID table, lines and all. */
#define V14_TO_V13                                                             \
	"CREATE TABLE events_v13(env TEXT NOT NULL, off INTEGER NOT NULL,"     \
	" len INTEGER NOT NULL, line BLOB NOT NULL, PRIMARY KEY(env, off))"    \
	" WITHOUT ROWID;"                                                      \
	"INSERT INTO events_v13 SELECT env, off, len, line FROM events;"       \
	"DROP TABLE events;"                                                   \
	"ALTER TABLE events_v13 RENAME TO events;"                             \
	"DROP TABLE event_envs;"                                               \
	"PRAGMA user_version = 13;"
/* A version-13 catalog made as version 12 had it: factories and table
 * options as JSON arrays in their rows' columns, rows and all. */
#define V13_TO_V12                                                             \
	"ALTER TABLE inspections ADD COLUMN factories TEXT NOT NULL"           \
	" DEFAULT '[]';"                                                       \
	"UPDATE inspections SET factories = (SELECT"                           \
	" json_group_array(json_array(kind, identifier, class)) FROM"          \
	" (SELECT kind, identifier, class FROM insp_factories f"                \
	" WHERE f.insp = inspections.id ORDER BY seq));"                       \
	"DROP TABLE insp_factories;"                                           \
	"ALTER TABLE tables ADD COLUMN options TEXT NOT NULL DEFAULT '[]';"    \
	"UPDATE tables SET options = (SELECT"                                  \
	" json_group_array(json_array(key, value)) FROM"                       \
	" (SELECT key, value FROM tab_options o"                               \
	" WHERE o.table_id = tables.id ORDER BY seq));"                        \
	"DROP TABLE tab_options;"                                              \
	"PRAGMA user_version = 12;"
/* A version-12 catalog made as version 11 had it: no refusals. */
#define V12_TO_V11                                                             \
	"ALTER TABLE tables DROP COLUMN refusal; PRAGMA user_version = 11;"
/* A version-11 catalog made as version 10 had it: no options rows. */
#define V11_TO_V10                                                             \
	"DROP TABLE factory_options;"                                          \
	"ALTER TABLE inspections DROP COLUMN options_read;"                    \
	"PRAGMA user_version = 10;"
#define V9_TO_V8                                                               \
	"DROP TRIGGER loose_free; DROP TRIGGER loose_taken;"                   \
	"DROP TABLE loose; PRAGMA user_version = 8;"
#define V7_TO_V6                                                               \
	"CREATE TABLE events_v6(id INTEGER PRIMARY KEY, env TEXT NOT NULL,"    \
	" off INTEGER NOT NULL, len INTEGER NOT NULL, line BLOB NOT NULL);"    \
	"INSERT INTO events_v6(env, off, len, line) SELECT env, off, len,"     \
	" line FROM events ORDER BY env DESC, off;"                            \
	"DROP TABLE events;"                                                   \
	"ALTER TABLE events_v6 RENAME TO events;"                              \
	"CREATE UNIQUE INDEX events_env_off ON events(env, off);"              \
	"PRAGMA user_version = 6;"

/* A version-6 catalog made as version 5 had it (no inline blob yet). */
#define V6_TO_V5                                                               \
	"DROP TRIGGER inline_free;"                                            \
	"DROP TABLE inline_blobs;"                                             \
	"PRAGMA user_version = 5;"

/* A version-5 catalog made as version 4 had it, rows and all. */
#define V5_TO_V4                                                              \
	"CREATE TABLE inspections_v4(sha256 TEXT PRIMARY KEY, error TEXT,"    \
	" external TEXT NOT NULL, factories TEXT NOT NULL DEFAULT '[]')"      \
	" WITHOUT ROWID;"                                                     \
	"INSERT INTO inspections_v4 SELECT sha256, error, external, factories" \
	" FROM inspections;"                                                  \
	"DROP TABLE inspections;"                                             \
	"ALTER TABLE inspections_v4 RENAME TO inspections;"                   \
	"ALTER TABLE versions DROP COLUMN insp;"                              \
	"PRAGMA user_version = 4;"

/* A version-4 catalog made as version 3 had it, rows and all (after
 * V5_TO_V4). */
#define V4_TO_V3                                                              \
	"CREATE TABLE factories(sha256 TEXT NOT NULL"                         \
	" REFERENCES inspections(sha256) ON DELETE CASCADE,"                  \
	" seq INTEGER NOT NULL, kind TEXT NOT NULL, identifier TEXT,"         \
	" class TEXT NOT NULL, PRIMARY KEY(sha256, seq)) WITHOUT ROWID;"      \
	"INSERT INTO factories SELECT i.sha256, f.key, f.value ->> 0,"        \
	" f.value ->> 1, f.value ->> 2"                                      \
	" FROM inspections i, json_each(i.factories) f;"                      \
	"ALTER TABLE inspections DROP COLUMN factories;"                      \
	"CREATE TABLE table_options(table_id INTEGER NOT NULL"                \
	" REFERENCES tables(id) ON DELETE CASCADE, seq INTEGER NOT NULL,"     \
	" key TEXT NOT NULL, value TEXT NOT NULL,"                            \
	" PRIMARY KEY(table_id, seq)) WITHOUT ROWID;"                         \
	"INSERT INTO table_options SELECT t.id, o.key, o.value ->> 0,"        \
	" o.value ->> 1 FROM tables t, json_each(t.options) o;"               \
	"ALTER TABLE tables DROP COLUMN options;"                             \
	"PRAGMA user_version = 3"

static int env_name(void *arg, const char *env);

static void test_open(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	char *check = NULL;

	T_INTEQ(pragma_int("user_version"), 16);
	T_INTEQ(catalog_check(c, &check, &err), 0);
	T_STREQ(check, "ok");
	free(check);
	T_INTEQ(catalog_env_add(c, "prod", 5, 77, NULL, &err), 0);
	catalog_close(c);

	/* Reopen the existing file: same data, same version. */
	c = NULL;
	T_INTEQ(catalog_open(&c, dbpath, &err), 0);
	T_INTEQ(catalog_env_get(c, "prod", &e, &err), 0);
	T_STREQ(e.name, "prod");
	T_INTEQ(e.uid, 5);
	T_INTEQ(e.ctime, 77);
	catalog_close(c);
	T_INTEQ(pragma_int("user_version"), 16);
	{
		char mode[16];

		journal_mode(mode, sizeof(mode));
		T_STREQ(mode, "wal");
	}

	/* The "sqlite:" form of the URI. */
	{
		char uri[160];

		snprintf(uri, sizeof(uri), "sqlite:%s", dbpath);
		c = NULL;
		T_INTEQ(catalog_open(&c, uri, &err), 0);
		T_INTEQ(c ? catalog_env_get(c, "prod", &e, &err) : -1, 0);
		catalog_close(c);
	}

	/* Version 1 (no counts in envs) is brought up to 2, counts made. */
	{
		int64_t a1 = 0, a2 = 0;
		struct catalog_table_def d;
		struct catalog_table t;
		uint64_t n = 9;

		memset(&d, 0, sizeof(d));
		d.ddl = (char *)"CREATE TABLE t (a INT)";
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(c ? catalog_env_get(c, "prod", &e, &err) : -1, 0);
		T_INTEQ(catalog_art_add(c, e.id, "a.jar", &a1, &err), 0);
		T_INTEQ(catalog_art_add(c, e.id, "b.jar", &a2, &err), 0);
		T_INTEQ(catalog_table_put(c, e.id, "t", &d, 1, 0, NULL, &err),
			0);
		catalog_close(c);
		T_INTEQ(exec_sql(V16_TO_V15 V15_TO_V14 V14_TO_V13 V13_TO_V12 V12_TO_V11 V11_TO_V10 V10_TO_V9 V9_TO_V8 V8_TO_V7 V7_TO_V6
					 V6_TO_V5 V5_TO_V4 V4_TO_V3),
			0);
		T_INTEQ(exec_sql("DROP TRIGGER art_add; DROP TRIGGER art_del;"
				 "DROP TRIGGER tab_add; DROP TRIGGER tab_del;"
				 "ALTER TABLE envs DROP COLUMN nart;"
				 "ALTER TABLE envs DROP COLUMN ntab;"
				 "DROP TABLE unsynced;"
				 "PRAGMA user_version = 1"), 0);
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		T_INTEQ(catalog_art_count(c, e.id, &n, &err), 0);
		T_INTEQ(n, 2);
		T_INTEQ(catalog_table_count(c, e.id, &n, &err), 0);
		T_INTEQ(n, 1);
		T_INTEQ(catalog_art_del(c, a1, &err), 0);
		T_INTEQ(catalog_art_count(c, e.id, &n, &err), 0);
		T_INTEQ(n, 1);
		T_INTEQ(catalog_table_get(c, e.id, "t", &t, &err), 0);
		T_INTEQ(catalog_table_del(c, t.id, &err), 0);
		T_INTEQ(catalog_table_count(c, e.id, &n, &err), 0);
		T_INTEQ(n, 0);
		T_INTEQ(catalog_art_count(c, e.id + 100, &n, &err), 0);
		T_INTEQ(n, 0);	/* no such environment: none */
		catalog_close(c);
	}

	/* Version 2 gets the list of unsynced blobs. */
	{
		int64_t mark = -1;

		T_INTEQ(exec_sql(V16_TO_V15 V15_TO_V14 V14_TO_V13 V13_TO_V12 V12_TO_V11 V11_TO_V10 V10_TO_V9 V9_TO_V8 V8_TO_V7 V7_TO_V6
					 V6_TO_V5 V5_TO_V4 V4_TO_V3),
			0);
		T_INTEQ(exec_sql("DROP TABLE unsynced;"
				 "PRAGMA user_version = 2"), 0);
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		T_INTEQ(c ? catalog_unsynced_mark(c, &mark, &err) : -1, 0);
		T_INTEQ(mark, 0);
		catalog_close(c);
	}

	/* Version 3 keeps factories and options in tables of their own:
	 * brought into their rows, in order, values intact. */
	{
		struct jar_factory f[2] = {
			{ (char *)"com.x.A", JAR_KIND_CONNECTOR, (char *)"a",
			  NO_OPTIONS },
			{ (char *)"com.x.B", JAR_KIND_FORMAT, NULL, NO_OPTIONS },
		};
		char *keys[3] = { (char *)"connector", (char *)"b",
				  (char *)"a" };
		char *values[3] = { (char *)"a", (char *)"2 \"q\"",
				    (char *)"1" };
		struct catalog_table_def d, got;
		struct catalog_table t;
		struct jar_report in, *out = NULL;

		memset(&in, 0, sizeof(in));
		in.nfactories = 2;
		in.factories = f;
		memset(&d, 0, sizeof(d));
		d.ddl = (char *)"CREATE TABLE m (a INT)";
		d.nopts = 3;
		d.keys = keys;
		d.values = values;
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(c ? catalog_insp_put(c, SHA_A, &in, &err) : -1, 0);
		T_INTEQ(c ? catalog_table_put(c, e.id, "m", &d, 1, 0, &t, &err)
			  : -1,
			0);
		catalog_close(c);
		T_INTEQ(exec_sql(V16_TO_V15 V15_TO_V14 V14_TO_V13 V13_TO_V12 V12_TO_V11 V11_TO_V10 V10_TO_V9 V9_TO_V8 V8_TO_V7 V7_TO_V6
					 V6_TO_V5 V5_TO_V4 V4_TO_V3),
			0);
		T_INTEQ(pragma_int("user_version"), 3);
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		T_INTEQ(exec_sql("SELECT * FROM factories"), 1);
		T_INTEQ(c ? catalog_insp_get(c, SHA_A, &out, &err) : -1, 0);
		T_INTEQ(out ? out->nfactories : 0, 2);
		if (out && out->nfactories == 2) {
			T_STREQ(out->factories[0].cls, "com.x.A");
			T_STREQ(out->factories[0].identifier, "a");
			T_INTEQ(out->factories[1].kind, JAR_KIND_FORMAT);
			T_CHECK(out->factories[1].identifier == NULL);
			/* Inspected before options were kept: none known,
			 * nothing to check them by. */
			T_INTEQ(out->factories[0].options.unknown,
				OPTIONS_UNKNOWN_REQUIRED |
					OPTIONS_UNKNOWN_OPTIONAL |
					OPTIONS_UNKNOWN_PREFIXES);
		}
		jar_report_free(out);
		memset(&got, 0, sizeof(got));
		T_INTEQ(c ? catalog_table_def(c, t.id, &got, &err) : -1, 0);
		T_INTEQ(got.nopts, 3);
		if (got.nopts == 3) {
			T_STREQ(got.keys[1], "b");
			T_STREQ(got.values[1], "2 \"q\"");
			T_STREQ(got.keys[2], "a");
		}
		catalog_table_def_release(&got);
		catalog_close(c);
	}

	/* Version 4 kept inspections by blob only: each becomes a row of
	 * its own that the versions of its blob name, rows intact. */
	{
		struct jar_factory f = { (char *)"com.x.K", JAR_KIND_CONNECTOR,
					 (char *)"k", NO_OPTIONS };
		const char *ext[1] = { "org/ext/E" };
		struct jar_report in, *out = NULL;
		struct catalog_artifact a;
		int64_t k, u;

		memset(&in, 0, sizeof(in));
		in.nfactories = 1;
		in.factories = &f;
		in.nexternal = 1;
		in.external = (char **)ext;
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(c ? catalog_insp_put(c, SHA_B, &in, &err) : -1, 0);
		k = c ? art(c, e.id, "k.jar", SHA_B, 3) : 0;
		u = c ? art(c, e.id, "u.txt", SHA_C, 3) : 0;
		catalog_close(c);
		T_INTEQ(exec_sql(V16_TO_V15 V15_TO_V14 V14_TO_V13 V13_TO_V12 V12_TO_V11 V11_TO_V10 V10_TO_V9 V9_TO_V8 V8_TO_V7 V7_TO_V6 V6_TO_V5
				 V5_TO_V4),
			0);
		T_INTEQ(pragma_int("user_version"), 4);
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		/* Every version of an inspected blob names its row. */
		T_INTEQ(query_int("SELECT count(*) FROM versions v"
				  " WHERE v.insp IS NOT (SELECT id FROM"
				  " inspections i WHERE i.sha256 = v.sha256)"),
			0);
		T_INTEQ(query_int("SELECT count(*) FROM versions"
				  " WHERE insp IS NOT NULL"),
			1);
		T_INTEQ(c ? catalog_art_get(c, e.id, "k.jar", &a, &err) : -1, 0);
		T_CHECK(a.id == k && a.latest.insp > 0);
		T_INTEQ(c ? catalog_insp_of(c, &a.latest, &out, &err) : -1, 0);
		T_INTEQ(out ? out->nfactories : 0, 1);
		T_INTEQ(out ? out->nexternal : 0, 1);
		if (out && out->nfactories == 1 && out->nexternal == 1) {
			T_STREQ(out->factories[0].cls, "com.x.K");
			T_STREQ(out->factories[0].identifier, "k");
			T_STREQ(out->external[0], "org/ext/E");
		}
		jar_report_free(out);
		out = NULL;
		T_INTEQ(c ? catalog_art_get(c, e.id, "u.txt", &a, &err) : -1, 0);
		T_CHECK(a.id == u && a.latest.insp == 0);
		T_ERRNO(c ? catalog_insp_of(c, &a.latest, &out, &err) : -1,
			ENOENT);
		catalog_close(c);
	}

	/* Version 6 kept events in a rowid table and an index on (env,
	 * off): one B-tree now, every line kept, read back in order. */
	{
		struct buf b = BUF_INIT(1 << 16);

		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(c ? catalog_event_add(c, "prod", "one\n", &err) : -1,
			0);
		T_INTEQ(c ? catalog_event_add(c, "dev", "x\n", &err) : -1, 0);
		T_INTEQ(c ? catalog_event_add(c, "prod", "two\n", &err) : -1,
			0);
		catalog_close(c);
		T_INTEQ(exec_sql(V16_TO_V15 V15_TO_V14 V14_TO_V13 V13_TO_V12 V12_TO_V11 V11_TO_V10 V10_TO_V9 V9_TO_V8 V8_TO_V7 V7_TO_V6), 0);
		T_INTEQ(query_int("SELECT count(*) FROM sqlite_schema"
				  " WHERE name = 'events_env_off'"),
			1);
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		T_INTEQ(query_int("SELECT count(*) FROM sqlite_schema"
				  " WHERE tbl_name = 'events'"),
			1);
		T_INTEQ(c ? catalog_event_read(c, "prod", 0, 100, &b, &err)
			  : -1,
			0);
		T_CHECK(b.len >= 8 &&
			!strcmp(buf_str(&b) + b.len - 8, "one\ntwo\n"));
		buf_reset(&b);
		T_INTEQ(c ? catalog_event_add(c, "prod", "three\n", &err) : -1,
			0);
		T_INTEQ(c ? catalog_event_read(c, "prod", 0, 100, &b, &err)
			  : -1,
			0);
		T_CHECK(b.len >= 14 &&
			!strcmp(buf_str(&b) + b.len - 14, "one\ntwo\nthree\n"));
		catalog_close(c);
		buf_release(&b);
	}

	/* Version 7 gets retired names: a store of before numbers on. */
	{
		int64_t id = 0;
		struct catalog_version v;

		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(c ? catalog_env_get(c, "prod", &e, &err) : -1, 0);
		T_INTEQ(catalog_art_add(c, e.id, "m.jar", &id, &err), 0);
		T_INTEQ(catalog_ver_add(c, id, SHA_A, 1, 1, 0, &v, &err), 0);
		catalog_close(c);
		T_INTEQ(exec_sql(V16_TO_V15 V15_TO_V14 V14_TO_V13 V13_TO_V12 V12_TO_V11 V11_TO_V10 V10_TO_V9 V9_TO_V8 V8_TO_V7), 0);
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		T_INTEQ(c ? catalog_art_del(c, id, &err) : -1, 0);
		T_INTEQ(c ? catalog_art_add(c, e.id, "m.jar", &id, &err) : -1,
			0);
		T_INTEQ(c ? catalog_ver_add(c, id, SHA_B, 1, 1, 0, &v, &err)
			  : -1,
			0);
		T_INTEQ(v.n, 2);
		catalog_close(c);
	}

	/* Version 12 kept factories and table options as JSON in their
	 * rows: brought into rows of their own, in order, values intact;
	 * factories that no longer read leave their inspection to be made
	 * again. */
	{
		struct jar_factory f[2] = {
			{ (char *)"com.y.A", JAR_KIND_CONNECTOR, (char *)"ya",
			  NO_OPTIONS },
			{ (char *)"com.y.B", JAR_KIND_FORMAT, NULL, NO_OPTIONS },
		};
		char *keys[2] = { (char *)"connector", (char *)"k" };
		char *values[2] = { (char *)"ya", (char *)"v \"w\"" };
		struct catalog_table_def d, got;
		struct catalog_table t;
		struct jar_report in, *out = NULL;

		memset(&in, 0, sizeof(in));
		in.nfactories = 2;
		in.factories = f;
		memset(&d, 0, sizeof(d));
		d.ddl = (char *)"CREATE TABLE y (a INT)";
		d.nopts = 2;
		d.keys = keys;
		d.values = values;
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(c ? catalog_env_get(c, "prod", &e, &err) : -1, 0);
		T_INTEQ(c ? catalog_insp_put(c, SHA_A, &in, &err) : -1, 0);
		T_INTEQ(c ? catalog_insp_put(c, SHA_C, &in, &err) : -1, 0);
		T_INTEQ(c ? catalog_table_put(c, e.id, "y", &d, 1, 0, &t, &err)
			  : -1,
			0);
		catalog_close(c);
		T_INTEQ(exec_sql(V16_TO_V15 V15_TO_V14 V14_TO_V13 V13_TO_V12), 0);
		T_INTEQ(query_int("SELECT count(*) FROM inspections WHERE"
				  " json_array_length(factories) = 2"),
			2);
		T_INTEQ(exec_sql("UPDATE inspections SET factories = '[{'"
				 " WHERE sha256 = '" SHA_C "'"),
			0);
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		T_INTEQ(c ? catalog_insp_get(c, SHA_A, &out, &err) : -1, 0);
		T_INTEQ(out ? out->nfactories : 0, 2);
		if (out && out->nfactories == 2) {
			T_STREQ(out->factories[0].cls, "com.y.A");
			T_STREQ(out->factories[0].identifier, "ya");
			T_INTEQ(out->factories[1].kind, JAR_KIND_FORMAT);
			T_CHECK(out->factories[1].identifier == NULL);
		}
		jar_report_free(out);
		T_INTEQ(query_int("SELECT inspector FROM inspections"
				  " WHERE sha256 = '" SHA_C "'"),
			0);
		memset(&got, 0, sizeof(got));
		T_INTEQ(c ? catalog_table_def(c, t.id, &got, &err) : -1, 0);
		T_INTEQ(got.nopts, 2);
		if (got.nopts == 2) {
			T_STREQ(got.keys[0], "connector");
			T_STREQ(got.keys[1], "k");
			T_STREQ(got.values[1], "v \"w\"");
		}
		catalog_table_def_release(&got);
		/* Put again: the rows are replaced, not added to. */
		T_INTEQ(c ? catalog_insp_put(c, SHA_A, &in, &err) : -1, 0);
		T_INTEQ(c ? catalog_table_put(c, e.id, "y", &d, 1, 0, &t, &err)
			  : -1,
			0);
		T_INTEQ(query_int("SELECT count(*) FROM insp_factories f,"
				  " inspections i WHERE f.insp = i.id AND"
				  " i.sha256 = '" SHA_A "'"),
			2);
		T_INTEQ(query_int("SELECT count(*) FROM tab_options"
				  " WHERE table_id = (SELECT id FROM tables"
				  " WHERE name = 'y')"),
			2);
		catalog_close(c);
	}

	/* Version 13 kept events keyed by (env, off): version 14 numbers
	 * each name and keys each line by its name's number and offset,
	 * every line kept, each log read back whole, and new lines go after
	 * the old ones. */
	{
		struct buf b = BUF_INIT(1 << 16);
		uint64_t n = 0, removed = 0;
		char names[256] = "";

		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(c ? catalog_event_add(c, "m1", "a1\n", &err) : -1, 0);
		T_INTEQ(c ? catalog_event_add(c, "m0", "b1\n", &err) : -1, 0);
		T_INTEQ(c ? catalog_event_add(c, "m1", "a22\n", &err) : -1, 0);
		T_INTEQ(c ? catalog_event_add(c, "-", "c1\n", &err) : -1, 0);
		catalog_close(c);
		T_INTEQ(exec_sql(V16_TO_V15 V15_TO_V14 V14_TO_V13), 0);
		T_INTEQ(query_int("SELECT count(*) FROM sqlite_schema"
				  " WHERE name = 'event_envs'"),
			0);
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		T_INTEQ(query_int("SELECT count(DISTINCT k) FROM event_envs"
				  " WHERE name IN ('m0', 'm1', '-')"),
			3);
		T_INTEQ(query_int("SELECT count(*) FROM events e JOIN"
				  " event_envs k ON k.name = e.env WHERE"
				  " e.id <> (k.k << 40) + e.off"),
			0);
		T_INTEQ(c ? catalog_event_read(c, "m1", 0, 100, &b, &err)
			  : -1,
			0);
		T_STREQ(buf_str(&b), "a1\na22\n");
		buf_reset(&b);
		T_INTEQ(c ? catalog_event_add(c, "m1", "a333\n", &err) : -1,
			0);
		T_INTEQ(c ? catalog_event_add(c, "m9", "d1\n", &err) : -1, 0);
		T_INTEQ(c ? catalog_event_read(c, "m1", 4, 100, &b, &err)
			  : -1,
			0);
		T_STREQ(buf_str(&b), "22\na333\n");
		buf_reset(&b);
		T_INTEQ(c ? catalog_event_size(c, "m1", &n, &err) : -1, 0);
		T_INTEQ(n, 12);
		T_INTEQ(c ? catalog_event_read(c, "m0", 0, 100, &b, &err)
			  : -1,
			0);
		T_STREQ(buf_str(&b), "b1\n");
		buf_reset(&b);
		T_INTEQ(c ? catalog_event_read(c, "m9", 0, 100, &b, &err)
			  : -1,
			0);
		T_STREQ(buf_str(&b), "d1\n");
		buf_reset(&b);
		T_INTEQ(c ? catalog_event_envs(c, env_name, names, &err) : -1,
			0);
		T_STREQ(names, "- dev m0 m1 m9 prod ");
		/* Retention keeps the newest lines, offsets and all. */
		T_INTEQ(c ? catalog_event_trim(c, "m1", 2, NULL, &removed,
					       &err)
			  : -1,
			0);
		T_INTEQ(removed, 1);
		T_INTEQ(c ? catalog_event_read(c, "m1", 0, 100, &b, &err)
			  : -1,
			0);
		T_STREQ(buf_str(&b), "a22\na333\n");
		catalog_close(c);
		buf_release(&b);
	}

	/* Version 14 kept the sets the bytecode does not show whole as
	 * factory_options rows of role 'unknown': version 15 keeps them in
	 * the factory's row, read back as they were, and no such row is
	 * left. */
	{
		struct jar_factory f[2] = {
			{ (char *)"com.z.A", JAR_KIND_CONNECTOR, (char *)"za",
			  NO_OPTIONS },
			{ (char *)"com.z.B", JAR_KIND_FORMAT, NULL, NO_OPTIONS },
		};
		const unsigned u0 = OPTIONS_UNKNOWN_REQUIRED |
				    OPTIONS_UNKNOWN_PREFIXES |
				    OPTIONS_UNVALIDATED;
		struct jar_report in, *out = NULL;

		memset(&in, 0, sizeof(in));
		f[0].options.unknown = u0;
		in.nfactories = 2;
		in.factories = f;
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(c ? catalog_insp_put(c, SHA_D, &in, &err) : -1, 0);
		catalog_close(c);
		T_INTEQ(query_int("SELECT unknown = 'required,prefixes,"
				  "validation' FROM insp_factories"
				  " WHERE class = 'com.z.A'"),
			1);
		T_INTEQ(exec_sql(V16_TO_V15 V15_TO_V14), 0);
		T_INTEQ(query_int("SELECT count(*) FROM factory_options"
				  " WHERE role = 'unknown' AND factory = 0"),
			3);
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		T_INTEQ(query_int("SELECT count(*) FROM factory_options"
				  " WHERE role = 'unknown'"),
			0);
		T_INTEQ(query_int("SELECT count(*) FROM insp_factories"
				  " WHERE class = 'com.z.B' AND unknown IS NULL"),
			1);
		T_INTEQ(c ? catalog_insp_get(c, SHA_D, &out, &err) : -1, 0);
		T_INTEQ(out ? out->nfactories : 0, 2);
		if (out && out->nfactories == 2) {
			T_INTEQ(out->factories[0].options.unknown, u0);
			T_INTEQ(out->factories[1].options.unknown, 0);
		}
		jar_report_free(out);
		catalog_close(c);
	}

	/* Version 15 counted artifacts, took names' numbers back and
	 * unmarked loose blobs by triggers on INSERT: version 16 drops
	 * them, and the catalog's statements do the same. */
	{
		int64_t id = 0;
		uint64_t before = 0, after = 0;
		struct catalog_version v;

		T_INTEQ(exec_sql(V16_TO_V15), 0);
		T_INTEQ(query_int("SELECT count(*) FROM sqlite_schema WHERE"
				  " type = 'trigger' AND name IN ('art_add',"
				  " 'art_reuse', 'loose_taken')"),
			3);
		c = NULL;
		T_INTEQ(catalog_open(&c, dbpath, &err), 0);
		T_INTEQ(pragma_int("user_version"), 16);
		T_INTEQ(query_int("SELECT count(*) FROM sqlite_schema WHERE"
				  " type = 'trigger' AND name IN ('art_add',"
				  " 'art_reuse', 'loose_taken')"),
			0);
		T_INTEQ(c ? catalog_env_get(c, "prod", &e, &err) : -1, 0);
		T_INTEQ(c ? catalog_art_count(c, e.id, &before, &err) : -1, 0);
		T_INTEQ(c ? catalog_art_add(c, e.id, "v16.jar", &id, &err) : -1,
			0);
		T_INTEQ(c ? catalog_art_count(c, e.id, &after, &err) : -1, 0);
		T_INTEQ(after, before + 1);
		T_INTEQ(exec_sql("INSERT INTO loose(sha256) VALUES('" SHA_B
				 "')"),
			0);
		T_INTEQ(c ? catalog_ver_add(c, id, SHA_B, 1, 1, 0, &v, &err)
			  : -1,
			0);
		T_INTEQ(query_int("SELECT count(*) FROM loose WHERE sha256 = '"
				  SHA_B "'"),
			0);
		/* Gone and back: the name's numbers go on. */
		T_INTEQ(c ? catalog_art_del(c, id, &err) : -1, 0);
		T_INTEQ(c ? catalog_art_add(c, e.id, "v16.jar", &id, &err) : -1,
			0);
		T_INTEQ(c ? catalog_ver_add(c, id, SHA_B, 1, 1, 0, &v, &err)
			  : -1,
			0);
		T_INTEQ(v.n, 2);
		T_INTEQ(query_int("SELECT count(*) FROM retired WHERE"
				  " name = 'v16.jar'"),
			0);
		T_INTEQ(c ? catalog_art_count(c, e.id, &after, &err) : -1, 0);
		T_INTEQ(after, before + 1);
		catalog_close(c);
	}

	/* A newer schema than this cmfs: refused, *out NULL. */
	T_INTEQ(exec_sql("PRAGMA user_version = 17"), 0);
	c = (struct catalog *)1;
	T_ERRNO(catalog_open(&c, dbpath, &err), EPROTO);
	T_CHECK(c == NULL);
	T_CONTAINS(err.msg, "newer");
	cmfs_err_clear(&err);

	/* A file that cannot be opened. */
	{
		char bad[160];

		snprintf(bad, sizeof(bad), "%s/no/such/dir/c.db", tmp);
		c = (struct catalog *)1;
		T_CHECK(catalog_open(&c, bad, &err) < 0);
		T_CHECK(c == NULL);
	}
	catalog_close(NULL);
	rm_temp_dir();
}

/* ---- environments ---------------------------------------------------------- */

static void test_env(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e, e2;
	struct catalog_table_def d = { (char *)"CREATE TABLE t (a INT)", NULL,
				       0, NULL, NULL };
	struct buf b = BUF_INIT(4096);
	int64_t a;
	int n = 0;

	T_INTEQ(catalog_env_add(c, "prod", 1000, 123456789, &e, &err), 0);
	T_CHECK(e.id > 0);
	T_STREQ(e.name, "prod");
	T_INTEQ(e.uid, 1000);
	T_INTEQ(e.ctime, 123456789);
	T_INTEQ(catalog_env_get(c, "prod", &e2, &err), 0);
	T_INTEQ(e2.id, e.id);
	T_STREQ(e2.name, "prod");
	T_INTEQ(e2.uid, 1000);
	T_INTEQ(e2.ctime, 123456789);
	T_ERRNO(catalog_env_add(c, "prod", 0, 1, NULL, &err), EEXIST);
	cmfs_err_clear(&err);
	T_ERRNO(catalog_env_get(c, "Prod", &e2, &err), ENOENT);
	T_ERRNO(catalog_env_get(c, "nope", &e2, &err), ENOENT);
	T_INTEQ(catalog_env_add(c, "dev", 0, 1, NULL, &err), 0);
	T_INTEQ(catalog_env_add(c, "alpha", 0, 1, NULL, &err), 0);
	T_INTEQ(catalog_env_list(c, cat_env, &b, &err), 0);
	T_STREQ(buf_str(&b), "alpha,dev,prod,");
	T_ERRNO(catalog_env_list(c, stop_at_first, &n, &err), ECANCELED);
	T_INTEQ(n, 1);

	/* -ENOTEMPTY while it holds an artifact ... */
	a = art(c, e.id, "x.jar", SHA_A, 1);
	T_ERRNO(catalog_env_del(c, e.id, &err), ENOTEMPTY);
	T_INTEQ(catalog_env_get(c, "prod", &e2, &err), 0);
	/* ... even one without versions ... */
	T_INTEQ(catalog_ver_del(c, a, 1, &err), 0);
	T_ERRNO(catalog_env_del(c, e.id, &err), ENOTEMPTY);
	T_INTEQ(catalog_art_del(c, a, &err), 0);
	/* ... or a table. */
	T_INTEQ(catalog_table_put(c, e.id, "t", &d, 1, 0, NULL, &err), 0);
	T_ERRNO(catalog_env_del(c, e.id, &err), ENOTEMPTY);
	{
		struct catalog_table t;

		T_INTEQ(catalog_table_get(c, e.id, "t", &t, &err), 0);
		T_INTEQ(catalog_table_del(c, t.id, &err), 0);
	}
	T_INTEQ(catalog_env_del(c, e.id, &err), 0);
	T_ERRNO(catalog_env_get(c, "prod", &e2, &err), ENOENT);
	buf_reset(&b);
	T_INTEQ(catalog_env_list(c, cat_env, &b, &err), 0);
	T_STREQ(buf_str(&b), "alpha,dev,");
	/* The name is free again. */
	T_INTEQ(catalog_env_add(c, "prod", 0, 2, &e2, &err), 0);

	/* Rows are kept per thread while environments do not change: a
	 * new row under an old name is read anew, an added one rolled back
	 * is gone, and a row edited behind the catalog's back stays as read
	 * until an environment comes or goes. */
	{
		struct catalog_env e3;
		int rc;

		T_INTEQ(catalog_env_get(c, "prod", &e3, &err), 0);
		T_INTEQ(e3.id, e2.id);
		T_INTEQ(e3.ctime, 2);
		T_CHECK(e3.id != e.id);
		T_INTEQ(exec_sql("UPDATE envs SET ctime = 3 WHERE name = 'prod'"),
			0);
		T_INTEQ(catalog_env_get(c, "prod", &e3, &err), 0);
		T_INTEQ(e3.ctime, 2);
		T_INTEQ(catalog_begin(c, &err), 0);
		rc = catalog_env_add(c, "gone", 0, 4, NULL, &err);
		T_INTEQ(catalog_env_get(c, "gone", &e3, &err), 0);
		T_INTEQ(catalog_end(c, rc ? rc : -ECANCELED, &err), -ECANCELED);
		T_ERRNO(catalog_env_get(c, "gone", &e3, &err), ENOENT);
		/* Also when the add was in a nested transaction that ended
		 * before the outer one rolled back. */
		T_INTEQ(catalog_begin(c, &err), 0);
		T_INTEQ(catalog_begin(c, &err), 0);
		rc = catalog_env_add(c, "gone", 0, 4, NULL, &err);
		T_INTEQ(catalog_end(c, rc, &err), 0);
		T_INTEQ(catalog_env_get(c, "gone", &e3, &err), 0);
		T_INTEQ(catalog_end(c, -ECANCELED, &err), -ECANCELED);
		T_ERRNO(catalog_env_get(c, "gone", &e3, &err), ENOENT);
		T_INTEQ(catalog_env_get(c, "prod", &e3, &err), 0);
		T_INTEQ(e3.ctime, 3);
	}
	buf_release(&b);
	teardown(c);
}

/* ---- artifacts and versions ------------------------------------------------ */

static void test_artifacts(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_artifact a;
	struct catalog_version v;
	struct buf b = BUF_INIT(4096);
	int64_t e = env(c, "prod"), e2 = env(c, "dev"), id, id2;
	uint64_t n;

	T_INTEQ(catalog_art_add(c, e, "x.jar", &id, &err), 0);
	T_CHECK(id > 0);
	T_ERRNO(catalog_art_add(c, e, "x.jar", &id2, &err), EEXIST);
	cmfs_err_clear(&err);
	/* The same name in another environment is another artifact. */
	T_INTEQ(catalog_art_add(c, e2, "x.jar", &id2, &err), 0);
	T_CHECK(id2 != id);
	/* Without versions it is not visible to get or list. */
	T_ERRNO(catalog_art_get(c, e, "x.jar", &a, &err), ENOENT);
	T_INTEQ(catalog_art_list(c, e, cat_art, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	T_INTEQ(catalog_art_count(c, e, &n, &err), 0);
	T_INTEQ(n, 1);

	T_INTEQ(catalog_ver_add(c, id, SHA_A, 10, 1000, 42, &v, &err), 0);
	T_INTEQ(v.n, 1);
	T_INTEQ(v.artifact_id, id);
	T_STREQ(v.sha256, SHA_A);
	T_INTEQ(v.size, 10);
	T_INTEQ(v.mtime, 1000);
	T_INTEQ(v.uid, 42);
	T_INTEQ(catalog_ver_add(c, id, SHA_B, 20, 2000, 43, &v, &err), 0);
	T_INTEQ(v.n, 2);
	T_INTEQ(catalog_art_get(c, e, "x.jar", &a, &err), 0);
	T_INTEQ(a.id, id);
	T_INTEQ(a.env_id, e);
	T_STREQ(a.name, "x.jar");
	T_INTEQ(a.nversions, 2);
	T_INTEQ(a.latest.n, 2);
	T_INTEQ(a.latest.artifact_id, id);
	T_STREQ(a.latest.sha256, SHA_B);
	T_INTEQ(a.latest.size, 20);
	T_INTEQ(a.latest.mtime, 2000);
	T_INTEQ(a.latest.uid, 43);
	T_INTEQ(catalog_ver_get(c, id, 1, &v, &err), 0);
	T_STREQ(v.sha256, SHA_A);
	T_INTEQ(v.size, 10);
	T_ERRNO(catalog_ver_get(c, id, 3, &v, &err), ENOENT);

	/* Delete the latest: numbers are never reused. */
	T_INTEQ(catalog_ver_del(c, id, 2, &err), 0);
	T_ERRNO(catalog_ver_del(c, id, 2, &err), ENOENT);
	T_INTEQ(catalog_art_get(c, e, "x.jar", &a, &err), 0);
	T_INTEQ(a.latest.n, 1);
	T_INTEQ(a.nversions, 1);
	T_INTEQ(catalog_ver_add(c, id, SHA_C, 30, 3000, 0, &v, &err), 0);
	T_INTEQ(v.n, 3);
	T_INTEQ(catalog_ver_add(c, id, SHA_C, 30, 3001, 0, &v, &err), 0);
	T_INTEQ(v.n, 4);
	T_INTEQ(catalog_ver_list(c, id, cat_ver, &b, &err), 0);
	T_STREQ(buf_str(&b), "1,3,4,");
	/* Delete all versions, then add: still the next number. */
	T_INTEQ(catalog_ver_del(c, id, 1, &err), 0);
	T_INTEQ(catalog_ver_del(c, id, 3, &err), 0);
	T_INTEQ(catalog_ver_del(c, id, 4, &err), 0);
	T_ERRNO(catalog_art_get(c, e, "x.jar", &a, &err), ENOENT);
	T_INTEQ(catalog_ver_add(c, id, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 5);
	/* A version of an artifact that does not exist. */
	cmfs_err_clear(&err);
	T_ERRNO(catalog_ver_add(c, 999999, SHA_A, 1, 1, 0, &v, &err), ENOENT);
	cmfs_err_clear(&err);

	/* List: name order, this environment only, counts right. */
	art(c, e, "b.txt", SHA_A, 1);
	art(c, e, "A.jar", SHA_B, 1);
	art(c, e2, "other.jar", SHA_B, 1);
	buf_reset(&b);
	T_INTEQ(catalog_art_list(c, e, cat_art, &b, &err), 0);
	T_STREQ(buf_str(&b), "A.jar:1/1,b.txt:1/1,x.jar:5/1,");
	T_INTEQ(catalog_art_count(c, e, &n, &err), 0);
	T_INTEQ(n, 3);

	/* Rename; onto a taken name: -EEXIST. */
	T_INTEQ(catalog_art_rename(c, id, "y.jar", &err), 0);
	T_ERRNO(catalog_art_get(c, e, "x.jar", &a, &err), ENOENT);
	T_INTEQ(catalog_art_get(c, e, "y.jar", &a, &err), 0);
	T_INTEQ(a.id, id);
	T_INTEQ(a.latest.n, 5);
	T_ERRNO(catalog_art_rename(c, id, "b.txt", &err), EEXIST);
	cmfs_err_clear(&err);
	T_INTEQ(catalog_art_get(c, e, "y.jar", &a, &err), 0);

	/* Delete with versions and labels. */
	T_INTEQ(catalog_label_set(c, id, "k", "v", &err), 0);
	T_INTEQ(catalog_art_del(c, id, &err), 0);
	T_ERRNO(catalog_art_get(c, e, "y.jar", &a, &err), ENOENT);
	buf_reset(&b);
	T_INTEQ(catalog_ver_list(c, id, cat_ver, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	buf_reset(&b);
	T_INTEQ(catalog_label_list(c, id, cat_label, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	T_INTEQ(catalog_art_count(c, e, &n, &err), 0);
	T_INTEQ(n, 2);
	buf_release(&b);
	teardown(c);
}

/* retired_list collector: "name=next," */
static int cat_retired(void *arg, const char *name, int64_t next)
{
	return buf_printf(arg, "%s=%lld,", name, (long long)next);
}

/*
 * Version numbers belong to a name in an environment: after rm, a last
 * version removed, or a rename away, the name goes on counting; a rename
 * onto a name that had numbers moves the versions above them.
 */
static void test_numbering(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_artifact a;
	struct catalog_version v;
	struct buf b = BUF_INIT(4096);
	int64_t e = env(c, "prod"), e2 = env(c, "dev"), id, id2;

	/* 1, 2, rm, 3. */
	T_INTEQ(catalog_art_add(c, e, "reuse.jar", &id, &err), 0);
	T_INTEQ(catalog_ver_add(c, id, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(catalog_ver_add(c, id, SHA_B, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 2);
	T_INTEQ(catalog_art_del(c, id, &err), 0);
	T_INTEQ(catalog_retired_list(c, "prod", cat_retired, &b, &err), 0);
	T_STREQ(buf_str(&b), "reuse.jar=3,");
	T_INTEQ(catalog_art_add(c, e, "reuse.jar", &id, &err), 0);
	T_INTEQ(catalog_ver_add(c, id, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 3);
	/* Taken again: no longer retired. */
	buf_reset(&b);
	T_INTEQ(catalog_retired_list(c, "prod", cat_retired, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	/* Another environment's name is another name. */
	T_INTEQ(catalog_art_add(c, e2, "reuse.jar", &id2, &err), 0);
	T_INTEQ(catalog_ver_add(c, id2, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 1);
	/* Deleted twice: the larger number stays. */
	T_INTEQ(catalog_art_del(c, id, &err), 0);
	T_INTEQ(catalog_art_add(c, e, "reuse.jar", &id, &err), 0);
	T_INTEQ(catalog_art_del(c, id, &err), 0);
	T_INTEQ(catalog_art_add(c, e, "reuse.jar", &id, &err), 0);
	T_INTEQ(catalog_ver_add(c, id, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 4);

	/* Rename k.jar (1, 2) to k2.jar: k.jar goes on at 3. */
	T_INTEQ(catalog_art_add(c, e, "k.jar", &id, &err), 0);
	T_INTEQ(catalog_ver_add(c, id, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(catalog_ver_add(c, id, SHA_B, 1, 1, 0, &v, &err), 0);
	T_INTEQ(catalog_art_rename(c, id, "k2.jar", &err), 0);
	T_INTEQ(catalog_art_get(c, e, "k2.jar", &a, &err), 0);
	T_INTEQ(a.latest.n, 2);
	T_INTEQ(catalog_art_add(c, e, "k.jar", &id2, &err), 0);
	T_INTEQ(catalog_ver_add(c, id2, SHA_C, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 3);
	/* And back, onto a name that had 1..3: its versions move above. */
	T_INTEQ(catalog_art_del(c, id2, &err), 0);
	T_INTEQ(catalog_art_rename(c, id, "k.jar", &err), 0);
	buf_reset(&b);
	T_INTEQ(catalog_ver_list(c, id, cat_ver, &b, &err), 0);
	T_STREQ(buf_str(&b), "4,5,");
	T_INTEQ(catalog_ver_get(c, id, 4, &v, &err), 0);
	T_STREQ(v.sha256, SHA_A);
	T_INTEQ(catalog_ver_get(c, id, 5, &v, &err), 0);
	T_STREQ(v.sha256, SHA_B);
	T_INTEQ(catalog_ver_add(c, id, SHA_C, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 6);
	/* k2.jar had 1, 2: it goes on at 3. */
	buf_reset(&b);
	T_INTEQ(catalog_retired_list(c, "prod", cat_retired, &b, &err), 0);
	T_STREQ(buf_str(&b), "k2.jar=3,");
	/* Back and forth: an artifact returning to a name it left keeps
	 * its numbers (they named its bytes there), new ones included. */
	T_INTEQ(catalog_art_rename(c, id, "k3.jar", &err), 0);
	T_INTEQ(catalog_ver_add(c, id, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 7);
	T_INTEQ(catalog_art_rename(c, id, "k.jar", &err), 0);
	buf_reset(&b);
	T_INTEQ(catalog_ver_list(c, id, cat_ver, &b, &err), 0);
	T_STREQ(buf_str(&b), "4,5,6,7,");
	/* Not once it is gone and another takes its row number: k3.jar's
	 * holder was id; deleted, the name's numbers are plain retired. */
	T_INTEQ(catalog_art_rename(c, id, "k3.jar", &err), 0);
	T_INTEQ(catalog_art_del(c, id, &err), 0);
	T_INTEQ(catalog_art_add(c, e, "fresh.jar", &id2, &err), 0);
	T_INTEQ(catalog_ver_add(c, id2, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 1);
	T_INTEQ(catalog_art_rename(c, id2, "k.jar", &err), 0);
	buf_reset(&b);
	T_INTEQ(catalog_ver_list(c, id2, cat_ver, &b, &err), 0);
	T_STREQ(buf_str(&b), "8,");
	T_INTEQ(catalog_art_del(c, id2, &err), 0);

	/* put: the larger number; refused on a name an artifact holds. */
	T_INTEQ(catalog_retired_put(c, "prod", "k2.jar", 2, &err), 0);
	T_INTEQ(catalog_retired_put(c, "prod", "old.jar", 7, &err), 0);
	T_ERRNO(catalog_retired_put(c, "prod", "reuse.jar", 9, &err), EEXIST);
	cmfs_err_clear(&err);
	buf_reset(&b);
	T_INTEQ(catalog_retired_list(c, "prod", cat_retired, &b, &err), 0);
	T_STREQ(buf_str(&b),
		"fresh.jar=2,k.jar=9,k2.jar=3,k3.jar=8,old.jar=7,");
	T_INTEQ(catalog_art_add(c, e, "old.jar", &id, &err), 0);
	T_INTEQ(catalog_ver_add(c, id, SHA_A, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 7);
	/* An import's versions and next number into a name with retired
	 * numbers (an environment removed and made again): never lower. */
	T_INTEQ(catalog_retired_put(c, "prod", "imp.jar", 9, &err), 0);
	T_INTEQ(catalog_art_add(c, e, "imp.jar", &id, &err), 0);
	v.artifact_id = id;
	v.n = 1;
	T_INTEQ(catalog_ver_put(c, &v, &err), 0);
	T_INTEQ(catalog_art_next_set(c, id, 3, &err), 0);
	T_ERRNO(catalog_art_next_set(c, id, 1, &err), EINVAL);
	cmfs_err_clear(&err);
	T_INTEQ(catalog_ver_add(c, id, SHA_B, 1, 1, 0, &v, &err), 0);
	T_INTEQ(v.n, 9);
	buf_release(&b);
	teardown(c);
}

static void test_blob_refs(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	int64_t e = env(c, "prod"), a, b2;
	uint64_t n = 99;

	T_INTEQ(catalog_blob_refs(c, SHA_A, &n, &err), 0);
	T_INTEQ(n, 0);
	T_INTEQ(catalog_blob_total(c, &n, &err), 0);
	T_INTEQ(n, 0);
	a = art(c, e, "a.jar", SHA_A, 10);
	b2 = art(c, e, "b.jar", SHA_A, 10);
	T_INTEQ(catalog_ver_add(c, a, SHA_B, 5, 1, 0, NULL, &err), 0);
	T_INTEQ(catalog_ver_add(c, a, SHA_A, 10, 1, 0, NULL, &err), 0);
	T_INTEQ(catalog_blob_refs(c, SHA_A, &n, &err), 0);
	T_INTEQ(n, 3);
	T_INTEQ(catalog_blob_refs(c, SHA_B, &n, &err), 0);
	T_INTEQ(n, 1);
	T_INTEQ(catalog_blob_refs(c, SHA_C, &n, &err), 0);
	T_INTEQ(n, 0);
	/* Distinct blobs: 10 + 5. */
	T_INTEQ(catalog_blob_total(c, &n, &err), 0);
	T_INTEQ(n, 15);
	T_INTEQ(catalog_art_del(c, b2, &err), 0);
	T_INTEQ(catalog_blob_refs(c, SHA_A, &n, &err), 0);
	T_INTEQ(n, 2);
	T_INTEQ(catalog_ver_del(c, a, 2, &err), 0);
	T_INTEQ(catalog_blob_refs(c, SHA_B, &n, &err), 0);
	T_INTEQ(n, 0);
	T_INTEQ(catalog_blob_total(c, &n, &err), 0);
	T_INTEQ(n, 10);
	teardown(c);
}

static int cat_row2(void *arg, const char *const *row)
{
	return buf_printf(arg, "%.4s:%s,", row[0], row[1]);
}

/*
 * Inline blobs: put (once per sha), get (a copy; -ENOENT when not
 * inline), list, delete; a row goes with the last version that refers to
 * its blob, by ver_del or by an artifact's cascade, and only then.
 */
static void test_inline(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(4096);
	int64_t e = env(c, "prod"), a, a2;
	void *data = NULL;
	size_t len = 9;

	T_ERRNO(catalog_inline_get(c, SHA_A, &data, &len, &err), ENOENT);
	T_CHECK(data == NULL && len == 0);
	T_INTEQ(catalog_inline_put(c, SHA_A, "bytes\0a", 7, &err), 0);
	/* Again, other bytes: the row stays as it was (same sha, same
	 * bytes, in use). */
	T_INTEQ(catalog_inline_put(c, SHA_A, "other", 5, &err), 0);
	T_INTEQ(catalog_inline_get(c, SHA_A, &data, &len, &err), 0);
	T_INTEQ(len, 7);
	T_CHECK(data && !memcmp(data, "bytes\0a", 7));
	free(data);
	/* An empty blob is a row too. */
	T_INTEQ(catalog_inline_put(c, SHA_B, "", 0, &err), 0);
	T_INTEQ(catalog_inline_get(c, SHA_B, &data, &len, &err), 0);
	T_CHECK(data != NULL && len == 0);
	free(data);
	T_INTEQ(catalog_inline_list(c, cat_row2, &b, &err), 0);
	T_CONTAINS(buf_str(&b), ":7,");
	T_CONTAINS(buf_str(&b), ":0,");
	T_INTEQ(catalog_inline_del(c, SHA_B, &err), 0);
	T_ERRNO(catalog_inline_del(c, SHA_B, &err), ENOENT);

	/* Two artifacts refer to SHA_A; the row goes with the last. */
	a = art(c, e, "a.txt", SHA_A, 7);
	a2 = art(c, e, "b.txt", SHA_A, 7);
	T_INTEQ(catalog_ver_add(c, a, SHA_C, 3, 1, 0, NULL, &err), 0);
	T_INTEQ(catalog_inline_put(c, SHA_C, "ccc", 3, &err), 0);
	T_INTEQ(catalog_ver_del(c, a, 1, &err), 0);
	T_INTEQ(query_int("SELECT count(*) FROM inline_blobs"), 2);
	T_INTEQ(catalog_art_del(c, a2, &err), 0); /* the cascade */
	T_ERRNO(catalog_inline_get(c, SHA_A, &data, &len, &err), ENOENT);
	T_INTEQ(query_int("SELECT count(*) FROM inline_blobs"), 1);
	/* Rolled back: the row is back with its version. */
	T_INTEQ(catalog_begin(c, &err), 0);
	T_INTEQ(catalog_art_del(c, a, &err), 0);
	T_INTEQ(catalog_end(c, -EIO, NULL), -EIO);
	T_INTEQ(catalog_inline_get(c, SHA_C, &data, &len, &err), 0);
	free(data);
	T_INTEQ(catalog_art_del(c, a, &err), 0);
	T_INTEQ(query_int("SELECT count(*) FROM inline_blobs"), 0);
	buf_release(&b);
	teardown(c);
}

/*
 * The filter of artifact names (catalog_sqlite.c, struct names): a name
 * that is not there is -ENOENT without a statement, and every name that
 * is there is found: past the filter's first size (8,192 names), after a
 * rename, after a rolled-back insert, in another environment with the
 * same name; a read-only connection opened beside sees what the writer
 * adds after it opened.
 */
static void test_names(void)
{
	struct catalog *c = setup(), *ro = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_artifact a;
	int64_t e = env(c, "prod"), e2 = env(c, "dev"), id;
	char name[32];
	int i, found = 0, absent = 0;

	T_ERRNO(catalog_art_get(c, e, "none.jar", &a, &err), ENOENT);
	T_INTEQ(catalog_open_existing(&ro, dbpath, 1, &err), 0);
	T_INTEQ(catalog_begin(c, &err), 0);
	for (i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "a%05d.jar", i);
		id = art(c, e, name, SHA_A, 1);
	}
	T_INTEQ(catalog_end(c, 0, &err), 0);
	for (i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "a%05d.jar", i);
		found += catalog_art_get(c, e, name, &a, NULL) != -ENOENT;
		absent += catalog_art_get(c, e2, name, &a, NULL) == -ENOENT;
	}
	T_INTEQ(found, 10000);
	T_INTEQ(absent, 10000);
	T_INTEQ(catalog_art_rename(c, id, "renamed.jar", &err), 0);
	T_ERRNO(catalog_art_get(c, e, "a09999.jar", &a, &err), ENOENT);
	T_INTEQ(catalog_art_get(c, e, "renamed.jar", &a, &err), 0);
	T_INTEQ(a.id, id);
	T_INTEQ(catalog_begin(c, &err), 0);
	art(c, e2, "gone.jar", SHA_A, 1);
	T_INTEQ(catalog_end(c, -EIO, NULL), -EIO);
	T_ERRNO(catalog_art_get(c, e2, "gone.jar", &a, &err), ENOENT);
	id = art(c, e2, "a00001.jar", SHA_A, 1);
	T_INTEQ(catalog_art_get(c, e2, "a00001.jar", &a, &err), 0);
	T_INTEQ(a.id, id);
	/* The read-only connection opened before the names came. */
	T_INTEQ(ro ? catalog_art_get(ro, e, "a00042.jar", &a, &err) : -1, 0);
	T_INTEQ(ro ? catalog_art_get(ro, e2, "a00001.jar", &a, &err) : -1, 0);
	catalog_close(ro);
	teardown(c);
}

/* Collect row[0..ncol) of each row as "a/b/c,". */
static int cat_row1(void *arg, const char *const *row)
{
	return buf_printf(arg, "%s,", row[0]);
}

static int cat_row3(void *arg, const char *const *row)
{
	return buf_printf(arg, "%s/%s/%s,", row[0], row[1], row[2]);
}

/*
 * Resolution looks up artifacts by label for every identifier: the plan
 * must search the (key, value) index and reach each artifact by its key,
 * never scan an environment's artifacts (12.5 ms against 0.65 ms at 20k
 * artifacts when it did).  Checked on a catalog with rows in it, as
 * SQLite plans without statistics (cmfs never runs ANALYZE).
 */
static void test_label_plan(void)
{
	struct catalog *c = setup();
	struct buf b = BUF_INIT(1 << 16);
	char q[1024];
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int64_t e = env(c, "prod"), a;
	int i;

	for (i = 0; i < 50; i++) {
		char name[32];

		snprintf(name, sizeof(name), "a%02d.jar", i);
		a = art(c, e, name, SHA_A, 10);
		T_INTEQ(catalog_label_set(c, a, "k", i % 2 ? "x" : "y", NULL),
			0);
	}
	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s",
		 catalog_sqlite_by_label_sql());
	T_INTEQ(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL), 0);
	T_INTEQ(sqlite3_prepare_v2(db, q, -1, &s, NULL), 0);
	while (s && sqlite3_step(s) == SQLITE_ROW)
		buf_printf(&b, "%s\n", (const char *)sqlite3_column_text(s, 3));
	sqlite3_finalize(s);
	sqlite3_close(db);
	T_CONTAINS(b.data, "INDEX labels_kv (key=? AND value=?)");
	T_CONTAINS(b.data, "SEARCH a USING INTEGER PRIMARY KEY (rowid=?)");
	T_CHECK(!b.data || !strstr(b.data, "SCAN a"));
	T_CHECK(!b.data || !strstr(b.data, "SCAN l"));
	buf_release(&b);
	teardown(c);
}

static void test_unsynced(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	int64_t e = env(c, "prod"), d = env(c, "dev"), a, mark = -1;
	struct buf b = BUF_INIT(1 << 16);

	/* Versions by blob: environment, artifact, number. */
	a = art(c, e, "a.jar", SHA_A, 10);
	art(c, d, "b.jar", SHA_A, 10);
	T_INTEQ(catalog_ver_add(c, a, SHA_B, 5, 1, 0, NULL, &err), 0);
	T_INTEQ(catalog_ver_add(c, a, SHA_A, 10, 1, 0, NULL, &err), 0);
	T_INTEQ(catalog_ver_by_sha(c, SHA_A, cat_row3, &b, &err), 0);
	T_STREQ(b.data, "dev/b.jar/1,prod/a.jar/1,prod/a.jar/3,");
	buf_reset(&b);
	T_INTEQ(catalog_ver_by_sha(c, SHA_C, cat_row3, &b, &err), 0);
	T_INTEQ(b.len, 0);

	/* The unsynced list: numbered rows, listed once per blob. */
	T_INTEQ(catalog_unsynced_mark(c, &mark, &err), 0);
	T_INTEQ(mark, 0);
	T_INTEQ(catalog_unsynced_add(c, SHA_A, &err), 0);
	T_INTEQ(catalog_unsynced_add(c, SHA_B, &err), 0);
	T_INTEQ(catalog_unsynced_mark(c, &mark, &err), 0);
	T_INTEQ(mark, 2);
	/* One added after the mark (during a sync) stays when it clears. */
	T_INTEQ(catalog_unsynced_add(c, SHA_A, &err), 0);
	buf_reset(&b);
	T_INTEQ(catalog_unsynced_list(c, cat_row1, &b, &err), 0);
	T_CONTAINS(b.data, SHA_A ",");
	T_CONTAINS(b.data, SHA_B ",");
	T_INTEQ(b.len, 2 * 65);
	T_INTEQ(catalog_unsynced_clear(c, mark, &err), 0);
	buf_reset(&b);
	T_INTEQ(catalog_unsynced_list(c, cat_row1, &b, &err), 0);
	T_STREQ(b.data, SHA_A ",");
	T_INTEQ(catalog_unsynced_mark(c, &mark, &err), 0);
	T_INTEQ(mark, 3);
	T_INTEQ(catalog_unsynced_clear(c, mark, &err), 0);
	T_INTEQ(catalog_unsynced_mark(c, &mark, &err), 0);
	T_INTEQ(mark, 0);

	/* Commits that do not wait for the disk are commits all the same. */
	T_INTEQ(catalog_set_sync(c, 0, &err), 0);
	T_INTEQ(catalog_unsynced_add(c, SHA_C, &err), 0);
	T_INTEQ(catalog_set_sync(c, 1, &err), 0);
	catalog_close(c);
	c = NULL;
	T_INTEQ(catalog_open(&c, dbpath, &err), 0);
	buf_reset(&b);
	T_INTEQ(c ? catalog_unsynced_list(c, cat_row1, &b, &err) : -1, 0);
	T_STREQ(b.data, SHA_C ",");
	teardown(c);
	buf_release(&b);
}

/* The catalog file's size in pages. */
static long file_pages(void)
{
	struct stat st;

	return stat(dbpath, &st) ? -1 : (long)(st.st_size / 4096);
}

/* The unsynced rows, as another connection sees them (the catalog's
 * log and file together). */
#define UNSYNCED_ROWS query_int("SELECT count(*) FROM unsynced")

/*
 * Without full sync, commits never checkpoint (the file keeps its size,
 * however long the log grows) and catalog_checkpoint() copies the log in
 * beside them; with full sync, SQLite's own checkpoints are back.
 */
static void test_checkpoint(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	long before, i;
	char sha[65];

	T_INTEQ(catalog_set_sync(c, 0, &err), 0);
	T_INTEQ(catalog_checkpoint(c, &err), 0);
	before = file_pages();
	T_CHECK(before > 0);
	/* Some 1,500 log pages: past SQLite's 1,000 of a checkpoint. */
	for (i = 0; i < 1500; i++) {
		snprintf(sha, sizeof(sha), "%064lx", i);
		T_INTEQ(catalog_unsynced_add(c, sha, &err), 0);
	}
	T_INTEQ(file_pages(), before);
	T_INTEQ(UNSYNCED_ROWS, 1500);
	T_INTEQ(catalog_checkpoint(c, &err), 0);
	T_CHECK(file_pages() > before);
	/* Commits go on after it, and the rows are there for all. */
	T_INTEQ(catalog_unsynced_add(c, SHA_A, &err), 0);
	T_INTEQ(UNSYNCED_ROWS, 1501);

	/* Full sync: SQLite checkpoints inside the commits again. */
	T_INTEQ(catalog_set_sync(c, 1, &err), 0);
	before = file_pages();
	for (i = 0; i < 1500; i++) {
		snprintf(sha, sizeof(sha), "%064lx", 5000 + i);
		T_INTEQ(catalog_unsynced_add(c, sha, &err), 0);
	}
	T_CHECK(file_pages() > before);
	teardown(c);
}

/* A stream of commits on one thread, until it has made `n`. */
struct stream {
	struct catalog *c;
	int n, failed;
	volatile int done;
};

static void *commit_stream(void *arg)
{
	struct stream *w = arg;
	char sha[65];
	int i;

	for (i = 0; i < w->n; i++) {
		snprintf(sha, sizeof(sha), "%064x", 100000 + i);
		if (catalog_unsynced_add(w->c, sha, NULL))
			w->failed++;
		/* A mount's commits come a request apart: without a gap this
		 * thread takes the lock back before the checkpoint gets it. */
		usleep(20);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Checkpoints taken while another thread commits without pause keep the
 * log short: each lets the next commit start it over.  (Taken beside the
 * commits, from a connection of their own, they never caught up, and the
 * log grew with every commit.)
 */
static void test_checkpoint_stream(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct stream w = { c, 4000, 0, 0 };
	char wal[160];
	struct stat st;
	pthread_t t;
	int n = 0;

	T_INTEQ(catalog_set_sync(c, 0, &err), 0);
	T_INTEQ(pthread_create(&t, NULL, commit_stream, &w), 0);
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE)) {
		T_INTEQ(catalog_checkpoint(c, &err), 0);
		n++;
		usleep(500);
	}
	pthread_join(t, NULL);
	T_INTEQ(w.failed, 0);
	T_CHECK(n > 1);
	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	/*
	 * 4,000 commits write some 16 MiB of log, all of which a log that
	 * never starts over keeps (17 MB, the old way).  The log is as long
	 * as the most commits between two checkpoints: under half of them
	 * even when this thread is kept off the CPU for a while (a loaded
	 * machine saw 4.6 MB once).
	 */
	T_INTEQ(stat(wal, &st), 0);
	if (st.st_size >= 4 << 20)
		fprintf(stderr, "  log of %lld bytes after %d checkpoints\n",
			(long long)st.st_size, n);
	T_CHECK(st.st_size < 8 << 20);
	T_INTEQ(UNSYNCED_ROWS, 4000);
	teardown(c);
}

/* How many of the catalog log's pages are in the page cache (*total:
 * its pages); after drop, none (those of them that are clean). */
static long log_resident(long *total, int drop)
{
	char wal[160];
	unsigned char *vec;
	struct stat st;
	long n = 0, i;
	void *map;
	int fd;

	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	fd = open(wal, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (drop)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	*total = (long)((st.st_size + 4095) / 4096);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	vec = malloc((size_t)*total);
	if (map != MAP_FAILED && vec &&
	    !mincore(map, (size_t)st.st_size, vec))
		for (i = 0; i < *total; i++)
			n += vec[i] & 1;
	else
		n = -1;
	free(vec);
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	close(fd);
	return n;
}

/*
 * A checkpoint reads the log back into the page cache: the commits after
 * it overwrite the log from its start, and each frame's write into a
 * page the cache had dropped would wait for the disk to read it first.
 */
static void test_checkpoint_warms_log(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	long total = 0, in = -1;
	char sha[65];
	int i;

	T_INTEQ(catalog_set_sync(c, 0, &err), 0);
	for (i = 0; i < 1500; i++) {
		snprintf(sha, sizeof(sha), "%064x", 200000 + i);
		T_INTEQ(catalog_unsynced_add(c, sha, &err), 0);
	}
	T_INTEQ(catalog_sync(c, &err), 0);
	T_INTEQ(catalog_checkpoint(c, &err), 0);
	/* The log is all in the file and on disk: its pages can go (not on
	 * tmpfs, where they are the file). */
	in = log_resident(&total, 1);
	T_CHECK(total > 1000);
	if (in >= total / 10) {
		fprintf(stderr, "  the log's file system keeps its pages: "
				"not measured\n");
		teardown(c);
		return;
	}
	/* A commit starts the log over; the checkpoint after it warms it. */
	T_INTEQ(catalog_unsynced_add(c, SHA_A, &err), 0);
	T_INTEQ(catalog_sync(c, &err), 0);
	T_INTEQ(catalog_checkpoint(c, &err), 0);
	/* Read ahead in the background: give the disk a few seconds. */
	for (i = 0; i < 500 && (in = log_resident(&total, 0)) < total; i++)
		usleep(10000);
	T_INTEQ(in, total);
	teardown(c);
}

/*
 * A log grown past 64 MiB while a reader held checkpoints off (an export
 * of a mounted store) goes back to 64 MiB once it starts over: a burst
 * does not keep its disk space, nor its pages read back, for good.
 */
static void test_log_kept(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	static char blob[64 << 10];
	char wal[160], sha[65];
	sqlite3 *reader = NULL;
	struct stat st;
	int i;

	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	T_INTEQ(catalog_set_sync(c, 0, &err), 0);
	T_INTEQ(sqlite3_open_v2(dbpath, &reader, SQLITE_OPEN_READONLY, NULL),
		0);
	T_INTEQ(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM envs;",
			     NULL, NULL, NULL),
		0);
	for (i = 0; i < 1100; i++) {
		memset(blob, i, sizeof(blob));
		snprintf(sha, sizeof(sha), "%064x", 300000 + i);
		T_INTEQ(catalog_inline_put(c, sha, blob, sizeof(blob), &err),
			0);
		if (i % 100 == 99)
			T_INTEQ(catalog_checkpoint(c, &err), 0);
	}
	T_INTEQ(stat(wal, &st), 0);
	T_CHECK(st.st_size > 64 << 20);
	sqlite3_exec(reader, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(reader);
	T_INTEQ(catalog_checkpoint(c, &err), 0);
	T_INTEQ(catalog_unsynced_add(c, SHA_A, &err), 0);
	T_INTEQ(stat(wal, &st), 0);
	T_CHECK(st.st_size <= 64 << 20);
	teardown(c);
}

/* ---- labels ---------------------------------------------------------------- */

static void test_labels(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(4096);
	int64_t e = env(c, "prod"), e2 = env(c, "dev"), x, y, z, w, bare;
	char *v = NULL;
	const char *T = "cmf.confluent.io/sql-artifact-type";
	const char *I = "cmf.confluent.io/sql-artifact-identifier";

	x = art(c, e, "x.jar", SHA_A, 1);
	y = art(c, e, "y.jar", SHA_B, 1);
	z = art(c, e, "a-z.jar", SHA_C, 1);
	w = art(c, e2, "w.jar", SHA_C, 1);
	T_INTEQ(catalog_art_add(c, e, "bare.jar", &bare, &err), 0);

	T_ERRNO(catalog_label_get(c, x, T, &v, &err), ENODATA);
	T_CHECK(v == NULL);
	T_INTEQ(catalog_label_set(c, x, T, "connector", &err), 0);
	T_INTEQ(catalog_label_get(c, x, T, &v, &err), 0);
	T_STREQ(v, "connector");
	free(v);
	v = NULL;
	/* Set again: replaced. */
	T_INTEQ(catalog_label_set(c, x, T, "format", &err), 0);
	T_INTEQ(catalog_label_get(c, x, T, &v, &err), 0);
	T_STREQ(v, "format");
	free(v);
	v = NULL;
	/* An empty value is a value. */
	T_INTEQ(catalog_label_set(c, x, "empty", "", &err), 0);
	T_INTEQ(catalog_label_get(c, x, "empty", &v, &err), 0);
	T_STREQ(v, "");
	free(v);
	v = NULL;
	T_INTEQ(catalog_label_set(c, x, I, "kafka", &err), 0);
	T_INTEQ(catalog_label_set(c, x, "app", "web", &err), 0);
	/* Key order. */
	T_INTEQ(catalog_label_list(c, x, cat_label, &b, &err), 0);
	T_STREQ(buf_str(&b), "app=web,cmf.confluent.io/sql-artifact-identifier="
			     "kafka,cmf.confluent.io/sql-artifact-type=format,"
			     "empty=,");
	/* Labels belong to one artifact. */
	T_ERRNO(catalog_label_get(c, y, T, &v, &err), ENODATA);
	/* Delete; deleting what is not set: -ENODATA. */
	T_INTEQ(catalog_label_del(c, x, "app", &err), 0);
	T_ERRNO(catalog_label_del(c, x, "app", &err), ENODATA);
	T_ERRNO(catalog_label_get(c, x, "app", &v, &err), ENODATA);
	T_ERRNO(catalog_label_del(c, y, "never", &err), ENODATA);

	/* By label: name order, the environment's only, versions only. */
	T_INTEQ(catalog_label_set(c, y, T, "format", &err), 0);
	T_INTEQ(catalog_label_set(c, z, T, "format", &err), 0);
	T_INTEQ(catalog_label_set(c, w, T, "format", &err), 0);
	T_INTEQ(catalog_label_set(c, bare, T, "format", &err), 0);
	buf_reset(&b);
	T_INTEQ(catalog_art_by_label(c, e, T, "format", cat_art, &b, &err), 0);
	T_STREQ(buf_str(&b), "a-z.jar:1/1,x.jar:1/1,y.jar:1/1,");
	buf_reset(&b);
	T_INTEQ(catalog_art_by_label(c, e2, T, "format", cat_art, &b, &err),
		0);
	T_STREQ(buf_str(&b), "w.jar:1/1,");
	buf_reset(&b);
	T_INTEQ(catalog_art_by_label(c, e, T, "connector", cat_art, &b, &err),
		0);
	T_STREQ(buf_str(&b), "");
	buf_reset(&b);
	T_INTEQ(catalog_art_by_label(c, e, I, "kafka", cat_art, &b, &err), 0);
	T_STREQ(buf_str(&b), "x.jar:1/1,");
	buf_release(&b);
	teardown(c);
}

/* ---- the memo -------------------------------------------------------------- */

/* 1 when m answers `key` under `gen` with rc 0 and the string `want`. */
static int memo_has(struct catalog_memo *m, uint64_t gen, const char *key,
		    const char *want)
{
	void *v = NULL;
	size_t n = 0;
	int rc = -1, hit;

	hit = catalog_memo_get(m, gen, key, strlen(key), &rc, &v, &n);
	hit = hit && !rc && n == strlen(want) && (!n || !memcmp(v, want, n));
	free(v);
	return hit;
}

/* Keep `val` as the answer to `key` under `gen`. */
static void memo_keep(struct catalog_memo *m, uint64_t gen, const char *key,
		      const char *val)
{
	catalog_memo_put(m, gen, key, strlen(key), 0, val, strlen(val));
}

/* Answers of the same size, a budget that holds three: a fourth drops
 * the least recently used (a hit counts as a use), and answering a key
 * again replaces its answer without charging it twice. */
static void test_memo_lru(void)
{
	struct catalog_memo m;
	char val[1000];
	size_t one;

	memset(val, 'x', sizeof(val) - 1);
	val[sizeof(val) - 1] = '\0';
	catalog_memo_init(&m, CATALOG_MEMO_BYTES);
	memo_keep(&m, 1, "a", val);
	one = catalog_memo_bytes(&m);
	T_CHECK(one > sizeof(val));
	catalog_memo_release(&m);

	catalog_memo_init(&m, 3 * one + one / 2);
	memo_keep(&m, 1, "a", val);
	memo_keep(&m, 1, "b", val);
	memo_keep(&m, 1, "c", val);
	T_INTEQ(catalog_memo_bytes(&m), 3 * one);
	T_CHECK(memo_has(&m, 1, "a", val)); /* a: used after b */
	memo_keep(&m, 1, "d", val);
	T_INTEQ(catalog_memo_bytes(&m), 3 * one);
	T_CHECK(!memo_has(&m, 1, "b", val));
	T_CHECK(memo_has(&m, 1, "c", val));
	T_CHECK(memo_has(&m, 1, "a", val));
	T_CHECK(memo_has(&m, 1, "d", val));
	/* Order now d, a, c (most recent first): c goes next. */
	memo_keep(&m, 1, "a", val);
	T_INTEQ(catalog_memo_bytes(&m), 3 * one);
	memo_keep(&m, 1, "e", val);
	T_CHECK(!memo_has(&m, 1, "c", val));
	T_CHECK(memo_has(&m, 1, "d", val));
	T_CHECK(memo_has(&m, 1, "a", val));
	T_CHECK(memo_has(&m, 1, "e", val));
	/* A smaller answer in place of one: its own size charged. */
	memo_keep(&m, 1, "a", "short");
	T_CHECK(memo_has(&m, 1, "a", "short"));
	T_CHECK(catalog_memo_bytes(&m) < 3 * one);
	catalog_memo_release(&m);
}

/* Kept answers, bytes and reports, serve only the generation they were
 * read under: a newer one drops them all, an older one is not kept. */
static void test_memo_generation(void)
{
	struct catalog_memo m;
	char obj[] = "java.lang.Object", str[] = "java.lang.String";
	char *ext[] = {obj, str};
	struct jar_report r, *out = NULL;
	int rc = 0;
	void *v = NULL;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.nexternal = 2;
	r.external = ext;
	catalog_memo_init(&m, CATALOG_MEMO_BYTES);
	memo_keep(&m, 5, "t1", "row");
	catalog_memo_put(&m, 5, "l1", 2, -ENODATA, NULL, 0);
	catalog_memo_put_report(&m, 5, "i1", 2, &r);
	T_CHECK(memo_has(&m, 5, "t1", "row"));
	T_INTEQ(catalog_memo_get(&m, 5, "l1", 2, &rc, &v, &n), 1);
	T_ERRNO(rc, ENODATA);
	T_CHECK(v == NULL);
	T_INTEQ(catalog_memo_get_report(&m, 5, "i1", 2, &out), 1);
	T_INTEQ(out ? (long long)out->nexternal : -1, 2);
	T_STREQ(out && out->nexternal == 2 ? out->external[1] : NULL,
		"java.lang.String");
	jar_report_free(out);
	out = NULL;
	/* A report is not a byte answer, nor the other way round. */
	T_INTEQ(catalog_memo_get(&m, 5, "i1", 2, &rc, &v, &n), 0);
	T_INTEQ(catalog_memo_get_report(&m, 5, "t1", 2, &out), 0);

	/* The generation moved on: nothing kept answers. */
	T_CHECK(!memo_has(&m, 6, "t1", "row"));
	T_INTEQ(catalog_memo_get(&m, 6, "l1", 2, &rc, &v, &n), 0);
	T_INTEQ(catalog_memo_get_report(&m, 6, "i1", 2, &out), 0);
	/* An answer of the newer one drops all the older ones. */
	memo_keep(&m, 6, "t2", "row2");
	T_CHECK(memo_has(&m, 6, "t2", "row2"));
	T_CHECK(!memo_has(&m, 5, "t1", "row"));
	T_INTEQ(catalog_memo_get_report(&m, 5, "i1", 2, &out), 0);
	memo_keep(&m, 1, "x", "y");
	T_CHECK(catalog_memo_bytes(&m) > 0);
	memo_keep(&m, 7, "x", "y");
	T_CHECK(memo_has(&m, 7, "x", "y"));
	memo_keep(&m, 6, "t2", "row2");
	T_CHECK(!memo_has(&m, 6, "t2", "row2"));
	T_CHECK(!memo_has(&m, 7, "t2", "row2"));
	catalog_memo_release(&m);
}

/* An answer larger than the whole budget is not kept, and drops none of
 * what is. */
static void test_memo_oversize(void)
{
	struct catalog_memo m;
	char big[3000], name[40];
	char *ext[100];
	struct jar_report r, *out = NULL;
	size_t i, kept;

	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	catalog_memo_init(&m, 2000);
	memo_keep(&m, 1, "small", "v");
	kept = catalog_memo_bytes(&m);
	T_CHECK(kept > 0 && kept < 2000);
	memo_keep(&m, 1, "big", big);
	T_CHECK(!memo_has(&m, 1, "big", big));
	T_CHECK(memo_has(&m, 1, "small", "v"));
	T_INTEQ(catalog_memo_bytes(&m), kept);

	/* A report: charged its strings, 100 of them over the budget. */
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "com.example.Class%zu", i);
		ext[i] = strdup(name);
	}
	r.external = ext;
	r.nexternal = 100;
	T_CHECK(jar_report_size(&r) > 2000);
	catalog_memo_put_report(&m, 1, "i", 1, &r);
	T_INTEQ(catalog_memo_get_report(&m, 1, "i", 1, &out), 0);
	T_CHECK(out == NULL);
	T_INTEQ(catalog_memo_bytes(&m), kept);
	/* Two of them fit. */
	r.nexternal = 2;
	catalog_memo_put_report(&m, 1, "i", 1, &r);
	T_INTEQ(catalog_memo_get_report(&m, 1, "i", 1, &out), 1);
	T_CHECK(catalog_memo_bytes(&m) > kept);
	jar_report_free(out);
	for (i = 0; i < 100; i++)
		free(ext[i]);
	catalog_memo_release(&m);
}

/* memo_hammer()'s: the memo, the failures seen. */
struct hammer {
	struct catalog_memo *m;
	int bad;
};

/* Put and get 64 keys, each answered by its own name, under generations
 * that move on now and then: a hit must be the key's own answer. */
static void *memo_hammer(void *arg)
{
	struct hammer *h = arg;
	char key[16];
	unsigned i;

	for (i = 0; i < 20000; i++) {
		uint64_t gen = i / 5000;

		snprintf(key, sizeof(key), "k%u", (i * 7919) % 64);
		if (i % 3) {
			memo_keep(h->m, gen, key, key);
		} else {
			void *v = NULL;
			size_t n = 0;
			int rc = -1;

			/* A miss is fine; a hit with another answer is not. */
			if (catalog_memo_get(h->m, gen, key, strlen(key), &rc,
					     &v, &n) &&
			    (rc || n != strlen(key) || memcmp(v, key, n)))
				h->bad++;
			free(v);
		}
	}
	return NULL;
}

/* Threads share a memo (its lock): answers stay their keys', and the
 * total stays within the budget. */
static void test_memo_threads(void)
{
	struct catalog_memo m;
	struct hammer h[4];
	pthread_t t[4];
	int i, bad = 0;

	catalog_memo_init(&m, 2000);
	for (i = 0; i < 4; i++) {
		h[i].m = &m;
		h[i].bad = 0;
		T_INTEQ(pthread_create(&t[i], NULL, memo_hammer, &h[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		bad += h[i].bad;
	}
	T_INTEQ(bad, 0);
	T_CHECK(catalog_memo_bytes(&m) > 0 && catalog_memo_bytes(&m) <= 2000);
	catalog_memo_release(&m);
}

/* Through the catalog: a label's value is read once while nothing
 * changes (a write behind the catalog's back is not seen), and again
 * after any change through it. */
static void test_memo_catalog(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	int64_t e = env(c, "prod"), x, y;
	char *v = NULL;

	x = art(c, e, "x.jar", SHA_A, 1);
	y = art(c, e, "y.jar", SHA_B, 1);
	T_INTEQ(catalog_label_set(c, x, "k", "one", &err), 0);
	T_INTEQ(catalog_label_get(c, x, "k", &v, &err), 0);
	T_STREQ(v, "one");
	free(v);
	v = NULL;
	T_INTEQ(exec_sql("UPDATE labels SET value = 'two' WHERE key = 'k'"),
		0);
	T_INTEQ(catalog_label_get(c, x, "k", &v, &err), 0);
	T_STREQ(v, "one");
	free(v);
	v = NULL;
	T_INTEQ(catalog_label_set(c, y, "other", "z", &err), 0);
	T_INTEQ(catalog_label_get(c, x, "k", &v, &err), 0);
	T_STREQ(v, "two");
	free(v);
	teardown(c);
}

/* ---- inspections ----------------------------------------------------------- */

/* Collector of catalog_insp_stale(): "sha:size," each. */
static int cat_stale(void *arg, const char *const *row)
{
	return buf_printf(arg, "%.4s:%s,", row[0], row[1]);
}

/* Inspections an older inspector made: listed while a version refers to
 * their blob, until they are put again (stamped with JAR_INSPECTOR). */
static void test_stale_inspections(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct jar_report in;
	struct buf b = BUF_INIT(1024);

	memset(&in, 0, sizeof(in));
	T_INTEQ(catalog_env_add(c, "prod", 0, 1, &e, &err), 0);
	art(c, e.id, "a.jar", SHA_A, 11);
	T_INTEQ(catalog_insp_put(c, SHA_A, &in, &err), 0);
	T_INTEQ(catalog_insp_put(c, SHA_B, &in, &err), 0);
	T_INTEQ(catalog_insp_stale(c, cat_stale, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	catalog_close(c);
	/* As a mount of the version before it leaves them. */
	T_INTEQ(exec_sql("UPDATE inspections SET inspector = 1"), 0);
	c = NULL;
	T_INTEQ(catalog_open(&c, dbpath, &err), 0);
	/* SHA_B: no version refers to it, so it is not worth the work. */
	T_INTEQ(c ? catalog_insp_stale(c, cat_stale, &b, &err) : -1, 0);
	T_STREQ(buf_str(&b), "aaaa:11,");
	buf_reset(&b);
	T_INTEQ(c ? catalog_insp_put(c, SHA_A, &in, &err) : -1, 0);
	T_INTEQ(c ? catalog_insp_stale(c, cat_stale, &b, &err) : -1, 0);
	T_STREQ(buf_str(&b), "");
	T_INTEQ(query_int("SELECT inspector FROM inspections WHERE sha256 = '"
			  SHA_A "'"), JAR_INSPECTOR);
	buf_release(&b);
	catalog_close(c);
}

static void test_inspections(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct jar_factory f[3] = {
		{ (char *)"com.example.mongodb.MongoFactory",
		  JAR_KIND_CONNECTOR, (char *)"mongodb", NO_OPTIONS },
		{ (char *)"com.example.fmt.BsonFormatFactory", JAR_KIND_FORMAT,
		  NULL, NO_OPTIONS },
		/* Stored as JSON: quotes, escapes, controls, non-ASCII. */
		{ (char *)"com.example.cat.Catalog$Factory", JAR_KIND_OTHER,
		  (char *)"m\"c\\a\tt\n\xe2\x82\xac", NO_OPTIONS },
	};
	char *ext[3] = { (char *)"java.lang.String",
			 (char *)"org.apache.flink.table.factories.Factory",
			 (char *)"org.bson.Document$Inner" };
	struct jar_report in, *out = NULL;

	memset(&in, 0, sizeof(in));
	in.nentries = 12;
	in.nfactories = 3;
	in.factories = f;
	in.nexternal = 3;
	in.external = ext;

	T_ERRNO(catalog_insp_get(c, SHA_A, &out, &err), ENOENT);
	T_CHECK(out == NULL);
	T_INTEQ(catalog_insp_put(c, SHA_A, &in, &err), 0);
	T_INTEQ(catalog_insp_get(c, SHA_A, &out, &err), 0);
	T_CHECK(out != NULL);
	if (out) {
		T_CHECK(out->error == NULL);
		T_INTEQ(out->nfactories, 3);
		T_INTEQ(out->nexternal, 3);
	}
	if (out && out->nfactories == 3) {
		T_STREQ(out->factories[0].cls,
			"com.example.mongodb.MongoFactory");
		T_INTEQ(out->factories[0].kind, JAR_KIND_CONNECTOR);
		T_STREQ(out->factories[0].identifier, "mongodb");
		T_STREQ(out->factories[1].cls,
			"com.example.fmt.BsonFormatFactory");
		T_INTEQ(out->factories[1].kind, JAR_KIND_FORMAT);
		T_CHECK(out->factories[1].identifier == NULL);
		T_STREQ(out->factories[2].cls,
			"com.example.cat.Catalog$Factory");
		T_INTEQ(out->factories[2].kind, JAR_KIND_OTHER);
		T_STREQ(out->factories[2].identifier,
			"m\"c\\a\tt\n\xe2\x82\xac");
	}
	if (out && out->nexternal == 3) {
		T_STREQ(out->external[0], "java.lang.String");
		T_STREQ(out->external[1],
			"org.apache.flink.table.factories.Factory");
		T_STREQ(out->external[2], "org.bson.Document$Inner");
	}
	jar_report_free(out);
	out = NULL;

	/* The options, rows of their own: read back sorted, each field;
	 * put again, replaced. */
	{
		struct options_option o[3];
		struct options_set *got;

		memset(o, 0, sizeof(o));
		o[0].key = (char *)"url";
		o[0].type = (char *)"string";
		o[0].required = 1;
		o[1].key = (char *)"mode";
		o[1].type = (char *)"enum";
		o[1].values = (char *)"a-b,c";
		o[1].defval = (char *)"a-b";
		o[1].deprecated = (char *)"old-mode";
		o[1].fallback = (char *)"m";
		o[1].forward = 1;
		o[2].key = (char *)"tags";
		o[2].type = (char *)"string";
		o[2].list = 1;
		f[0].options.v = o;
		f[0].options.n = 3;
		f[0].options.prefixes = (char *)"properties.,extra.";
		f[1].options.unknown = OPTIONS_UNKNOWN_OPTIONAL;
		memset(&in, 0, sizeof(in));
		in.nfactories = 3;
		in.factories = f;
		T_INTEQ(catalog_insp_put(c, SHA_D, &in, &err), 0);
		T_INTEQ(catalog_insp_get(c, SHA_D, &out, &err), 0);
		got = out && out->nfactories == 3 ? &out->factories[0].options
						  : NULL;
		T_CHECK(got && got->n == 3 && !got->unknown);
		if (got && got->n == 3) {
			T_STREQ(got->v[0].key, "mode");
			T_STREQ(got->v[0].type, "enum");
			T_STREQ(got->v[0].values, "a-b,c");
			T_STREQ(got->v[0].defval, "a-b");
			T_STREQ(got->v[0].deprecated, "old-mode");
			T_STREQ(got->v[0].fallback, "m");
			T_CHECK(got->v[0].forward && !got->v[0].required);
			T_STREQ(got->v[1].key, "tags");
			T_CHECK(got->v[1].list && !got->v[1].defval);
			T_STREQ(got->v[2].key, "url");
			T_CHECK(got->v[2].required);
			T_CHECK(options_find(got, "url") == &got->v[2]);
			T_STREQ(got->prefixes, "extra.,properties.");
		}
		if (out && out->nfactories == 3) {
			T_INTEQ(out->factories[1].options.unknown,
				OPTIONS_UNKNOWN_OPTIONAL);
			T_INTEQ(out->factories[2].options.n, 0);
		}
		jar_report_free(out);
		out = NULL;
		f[0].options.n = 1;
		f[0].options.prefixes = NULL;
		f[1].options.unknown = 0;
		T_INTEQ(catalog_insp_put(c, SHA_D, &in, &err), 0);
		T_INTEQ(catalog_insp_get(c, SHA_D, &out, &err), 0);
		T_CHECK(out && out->factories[0].options.n == 1 &&
			!out->factories[0].options.prefixes &&
			!out->factories[1].options.unknown);
		jar_report_free(out);
		out = NULL;
		/* What a label check reads: the factories, in order, with
		 * their options unread and marked unknown. */
		{
			struct catalog_version v;

			memset(&v, 0, sizeof(v));
			snprintf(v.sha256, sizeof(v.sha256), "%s", SHA_D);
			T_INTEQ(catalog_insp_offers(c, &v, &out, &err), 0);
			T_INTEQ(out ? out->nfactories : 0, 3);
			if (out && out->nfactories == 3) {
				T_STREQ(out->factories[0].cls, f[0].cls);
				T_STREQ(out->factories[2].cls, f[2].cls);
				T_INTEQ(out->factories[0].options.n, 0);
				T_INTEQ(out->factories[0].options.unknown,
					OPTIONS_UNKNOWN_REQUIRED |
						OPTIONS_UNKNOWN_OPTIONAL |
						OPTIONS_UNKNOWN_PREFIXES);
			}
			jar_report_free(out);
			out = NULL;
			T_INTEQ(catalog_insp_of(c, &v, &out, &err), 0);
			T_CHECK(out && out->nfactories == 3 &&
				out->factories[0].options.n == 1);
			jar_report_free(out);
			out = NULL;
		}
		memset(&f[0].options, 0, sizeof(f[0].options));
		memset(&f[1].options, 0, sizeof(f[1].options));
	}

	/* An error report: no factories, no externals. */
	memset(&in, 0, sizeof(in));
	in.error = (char *)"no META-INF/services/...Factory in the JAR";
	in.code = -ENOEXEC;
	T_INTEQ(catalog_insp_put(c, SHA_B, &in, &err), 0);
	T_INTEQ(catalog_insp_get(c, SHA_B, &out, &err), 0);
	if (out) {
		T_STREQ(out->error,
			"no META-INF/services/...Factory in the JAR");
		T_INTEQ(out->nfactories, 0);
		T_INTEQ(out->nexternal, 0);
		T_CHECK(out->external == NULL || out->nexternal == 0);
	}
	jar_report_free(out);
	out = NULL;

	/* One factory, escapes in both its strings: written with the row
	 * in one statement, read back the same. */
	memset(&in, 0, sizeof(in));
	in.nfactories = 1;
	in.factories = &f[2];
	f[2].cls = (char *)"a.B$\"\\\x01\xf0\x9f\x98\x80";
	T_INTEQ(catalog_insp_put(c, SHA_ONE, &in, &err), 0);
	T_INTEQ(catalog_insp_get(c, SHA_ONE, &out, &err), 0);
	if (out && out->nfactories == 1) {
		T_STREQ(out->factories[0].cls, "a.B$\"\\\x01\xf0\x9f\x98\x80");
		T_STREQ(out->factories[0].identifier,
			"m\"c\\a\tt\n\xe2\x82\xac");
		T_INTEQ(out->factories[0].kind, JAR_KIND_OTHER);
	} else {
		T_CHECK(0);
	}
	jar_report_free(out);
	out = NULL;
	f[2].cls = (char *)"com.example.cat.Catalog$Factory";

	/* Put again for the same blob: the new report replaces the old. */
	memset(&in, 0, sizeof(in));
	in.nfactories = 1;
	in.factories = &f[1];
	in.nexternal = 1;
	in.external = &ext[0];
	cmfs_err_clear(&err);
	T_INTEQ(catalog_insp_put(c, SHA_A, &in, &err), 0);
	if (err.code)
		fprintf(stderr, "  re-put: %s\n", err.msg);
	T_INTEQ(catalog_insp_get(c, SHA_A, &out, &err), 0);
	if (out) {
		T_INTEQ(out->nfactories, 1);
		T_INTEQ(out->nexternal, 1);
		if (out->nfactories == 1)
			T_STREQ(out->factories[0].cls,
				"com.example.fmt.BsonFormatFactory");
	}
	jar_report_free(out);
	out = NULL;

	/* Versions name their blob's row: added before the inspection or
	 * after it, and the same row after a put again. */
	{
		int64_t e = env(c, "prod"), before, after;
		struct catalog_artifact a;
		long long row_a;

		before = art(c, e, "before.jar", SHA_C, 1);
		row_a = query_int("SELECT id FROM inspections"
				  " WHERE sha256 = '" SHA_A "'");
		after = art(c, e, "after.jar", SHA_A, 1);
		T_INTEQ(catalog_art_get(c, e, "after.jar", &a, &err), 0);
		T_INTEQ(a.id, after);
		T_INTEQ(a.latest.insp, row_a);
		T_INTEQ(catalog_art_get(c, e, "before.jar", &a, &err), 0);
		T_INTEQ(a.id, before);
		T_INTEQ(a.latest.insp, 0);
		T_INTEQ(catalog_insp_put(c, SHA_C, &in, &err), 0);
		T_INTEQ(catalog_art_get(c, e, "before.jar", &a, &err), 0);
		T_CHECK(a.latest.insp > 0 && a.latest.insp != row_a);
		T_INTEQ(catalog_insp_put(c, SHA_A, &in, &err), 0);
		T_INTEQ(query_int("SELECT id FROM inspections"
				  " WHERE sha256 = '" SHA_A "'"),
			row_a);
		/* A row that no longer holds the blob (fsck made it anew):
		 * found by the blob all the same. */
		T_INTEQ(catalog_art_get(c, e, "after.jar", &a, &err), 0);
		a.latest.insp = row_a + 100;
		T_INTEQ(catalog_insp_of(c, &a.latest, &out, &err), 0);
		T_INTEQ(out ? out->nfactories : 0, 1);
		jar_report_free(out);
		out = NULL;
		a.latest.insp = query_int("SELECT id FROM inspections"
					  " WHERE sha256 = '" SHA_B "'");
		T_INTEQ(catalog_insp_of(c, &a.latest, &out, &err), 0);
		T_CHECK(out && !out->error); /* SHA_A's, not SHA_B's */
		jar_report_free(out);
	}
	/* Factories edited into something else: an error, not a guess. */
	T_INTEQ(exec_sql("UPDATE insp_factories SET class = x'00' WHERE"
			 " insp = (SELECT id FROM inspections WHERE"
			 " sha256 = '" SHA_A "')"),
		0);
	out = NULL;
	T_ERRNO(catalog_insp_get(c, SHA_A, &out, &err), EIO);
	T_CHECK(out == NULL);
	T_CONTAINS(err.msg, "factories recorded for blob " SHA_A
		   " are damaged");
	cmfs_err_clear(&err);
	teardown(c);
}

/* ---- tables ---------------------------------------------------------------- */

static void test_tables(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	char *keys[3] = { (char *)"connector", (char *)"zeta",
			  (char *)"alpha" };
	/* Stored as JSON: quotes, escapes and controls come back whole. */
	char *vals[3] = { (char *)"datagen", (char *)"it's \\\n\"\t",
			  (char *)"" };
	const char *ddl = "CREATE TABLE t (a INT) WITH ('connector' = "
			  "'datagen', 'zeta' = 'it''s', 'alpha' = '');";
	struct catalog_table_def d = { (char *)ddl, NULL, 3, keys, vals };
	struct catalog_table_def got;
	struct catalog_table t, t2;
	struct buf b = BUF_INIT(4096);
	int64_t e = env(c, "prod"), e2 = env(c, "dev");
	uint64_t n;

	T_ERRNO(catalog_table_get(c, e, "t", &t, &err), ENOENT);
	T_INTEQ(catalog_table_put(c, e, "t", &d, 5000, 1000, &t, &err), 0);
	T_CHECK(t.id > 0);
	T_INTEQ(t.env_id, e);
	T_STREQ(t.name, "t");
	T_INTEQ(t.size, strlen(ddl));
	T_INTEQ(t.mtime, 5000);
	T_INTEQ(t.uid, 1000);
	T_INTEQ(catalog_table_get(c, e, "t", &t2, &err), 0);
	T_INTEQ(t2.id, t.id);
	T_INTEQ(t2.size, strlen(ddl));
	T_INTEQ(t2.mtime, 5000);
	T_INTEQ(t2.uid, 1000);
	T_ERRNO(catalog_table_get(c, e2, "t", &t2, &err), ENOENT);
	T_ERRNO(catalog_table_get(c, e, "T", &t2, &err), ENOENT);

	memset(&got, 0, sizeof(got));
	T_INTEQ(catalog_table_def(c, t.id, &got, &err), 0);
	T_STREQ(got.ddl, ddl);
	T_CHECK(got.like_ddl == NULL);
	T_INTEQ(got.nopts, 3);
	if (got.nopts == 3) {
		T_STREQ(got.keys[0], "connector");
		T_STREQ(got.values[0], "datagen");
		T_STREQ(got.keys[1], "zeta");
		T_STREQ(got.values[1], "it's \\\n\"\t");
		T_STREQ(got.keys[2], "alpha");
		T_STREQ(got.values[2], "");
	}
	catalog_table_def_release(&got);
	T_CHECK(got.ddl == NULL && got.nopts == 0);

	/* Options edited into something else: an error, and the good
	 * ones come back when they are put back. */
	T_INTEQ(exec_sql("UPDATE tab_options SET value = x'00'"), 0);
	T_ERRNO(catalog_table_def(c, t.id, &got, &err), EIO);
	T_CHECK(got.ddl == NULL && got.nopts == 0);
	T_CONTAINS(err.msg, "options recorded for table");
	cmfs_err_clear(&err);
	T_INTEQ(catalog_table_put(c, e, "t", &d, 5000, 1000, &t, &err), 0);
	T_INTEQ(catalog_table_def(c, t.id, &got, &err), 0);
	T_INTEQ(got.nopts, 3);
	catalog_table_def_release(&got);

	/* Replace: same id, new text, the options replaced whole. */
	d.ddl = (char *)"CREATE TABLE t (b INT) WITH ('connector' = 'print')";
	d.like_ddl = (char *)"CREATE TABLE base (x INT);\n";
	d.nopts = 1;
	vals[0] = (char *)"print";
	T_INTEQ(catalog_table_put(c, e, "t", &d, 6000, 7, NULL, &err), 0);
	T_INTEQ(catalog_table_get(c, e, "t", &t2, &err), 0);
	T_INTEQ(t2.id, t.id);
	T_INTEQ(t2.size, strlen(d.ddl));
	T_INTEQ(t2.mtime, 6000);
	T_INTEQ(t2.uid, 7);
	T_INTEQ(catalog_table_def(c, t.id, &got, &err), 0);
	T_STREQ(got.ddl, d.ddl);
	T_STREQ(got.like_ddl, "CREATE TABLE base (x INT);\n");
	T_INTEQ(got.nopts, 1);
	if (got.nopts == 1) {
		T_STREQ(got.keys[0], "connector");
		T_STREQ(got.values[0], "print");
	}
	catalog_table_def_release(&got);

	/* No options at all. */
	d.nopts = 0;
	d.like_ddl = NULL;
	d.ddl = (char *)"CREATE TABLE a (x INT)";
	T_INTEQ(catalog_table_put(c, e, "a", &d, 1, 0, &t2, &err), 0);
	T_INTEQ(catalog_table_def(c, t2.id, &got, &err), 0);
	T_INTEQ(got.nopts, 0);
	T_CHECK(got.like_ddl == NULL);
	catalog_table_def_release(&got);
	T_INTEQ(catalog_table_put(c, e, "m", &d, 1, 0, NULL, &err), 0);
	T_INTEQ(catalog_table_put(c, e2, "zz", &d, 1, 0, NULL, &err), 0);

	/* List, count. */
	T_INTEQ(catalog_table_list(c, e, cat_table, &b, &err), 0);
	T_STREQ(buf_str(&b), "a,m,t,");
	T_INTEQ(catalog_table_count(c, e, &n, &err), 0);
	T_INTEQ(n, 3);
	T_INTEQ(catalog_table_count(c, e2, &n, &err), 0);
	T_INTEQ(n, 1);

	/* Delete. */
	T_INTEQ(catalog_table_del(c, t.id, &err), 0);
	T_ERRNO(catalog_table_get(c, e, "t", &t2, &err), ENOENT);
	T_ERRNO(catalog_table_def(c, t.id, &got, &err), ENOENT);
	buf_reset(&b);
	T_INTEQ(catalog_table_list(c, e, cat_table, &b, &err), 0);
	T_STREQ(buf_str(&b), "a,m,");
	T_INTEQ(catalog_table_count(c, e, &n, &err), 0);
	T_INTEQ(n, 2);
	buf_release(&b);
	teardown(c);
}

/* ---- events ---------------------------------------------------------------- */

static void test_events(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(1 << 16);
	static const char *const lines[] = {
		"l1\n", "line two\n", "3\n", "a much longer fourth line, "
		"with spaces and = signs\n", "5\n",
	};
	char all[256] = "";
	size_t i, total, off, size;
	uint64_t n;
	int bad = 0;

	T_INTEQ(catalog_event_size(c, "prod", &n, &err), 0);
	T_INTEQ(n, 0);
	T_INTEQ(catalog_event_read(c, "prod", 0, 100, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		T_INTEQ(catalog_event_add(c, "prod", lines[i], &err), 0);
		strcat(all, lines[i]);
	}
	total = strlen(all);
	T_INTEQ(catalog_event_add(c, "dev", "other env\n", &err), 0);
	T_INTEQ(catalog_event_size(c, "prod", &n, &err), 0);
	T_INTEQ(n, total);
	T_INTEQ(catalog_event_size(c, "dev", &n, &err), 0);
	T_INTEQ(n, 10);

	buf_reset(&b);
	T_INTEQ(catalog_event_read(c, "prod", 0, total, &b, &err), 0);
	T_STREQ(buf_str(&b), all);
	buf_reset(&b);
	T_INTEQ(catalog_event_read(c, "prod", 1, 4, &b, &err), 0);
	T_STREQ(buf_str(&b), "1\nli");
	buf_reset(&b);
	T_INTEQ(catalog_event_read(c, "prod", 3, 9, &b, &err), 0);
	T_STREQ(buf_str(&b), "line two\n");
	buf_reset(&b);
	T_INTEQ(catalog_event_read(c, "prod", total - 1, 10, &b, &err), 0);
	T_STREQ(buf_str(&b), "\n");
	buf_reset(&b);
	T_INTEQ(catalog_event_read(c, "prod", total, 10, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	T_INTEQ(catalog_event_read(c, "prod", total + 100, 10, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	T_INTEQ(catalog_event_read(c, "prod", 2, 0, &b, &err), 0);
	T_STREQ(buf_str(&b), "");
	T_INTEQ(catalog_event_read(c, "nope", 0, 10, &b, &err), 0);
	T_STREQ(buf_str(&b), "");

	/* Every offset and size, against the concatenation. */
	for (off = 0; off <= total + 1; off++) {
		const char *want = all + (off < total ? off : total);

		for (size = 0; size <= total + 2; size++) {
			size_t want_len = off >= total ? 0
				: (size < total - off ? size : total - off);
			int rc;

			buf_reset(&b);
			rc = catalog_event_read(c, "prod", off, size, &b, &err);
			if (!rc && b.len == want_len &&
			    !memcmp(buf_str(&b), want, want_len))
				continue;
			if (!bad)
				fprintf(stderr, "  read(%zu, %zu) = \"%s\"\n",
					off, size, buf_str(&b));
			bad++;
		}
	}
	T_INTEQ(bad, 0);
	/* Appended to what the buffer already holds. */
	buf_reset(&b);
	buf_adds(&b, ">>");
	T_INTEQ(catalog_event_read(c, "dev", 0, 100, &b, &err), 0);
	T_STREQ(buf_str(&b), ">>other env\n");
	/* A full buffer: the error, not a short read passed off as whole. */
	{
		struct buf small = BUF_INIT(5);

		T_ERRNO(catalog_event_read(c, "prod", 0, total, &small, &err),
			EFBIG);
		buf_release(&small);
	}
	/* The log outlives its environment: it is kept by name. */
	catalog_close(c);
	c = NULL;
	T_INTEQ(catalog_open(&c, dbpath, &err), 0);
	T_INTEQ(catalog_event_size(c, "prod", &n, &err), 0);
	T_INTEQ(n, total);
	buf_release(&b);
	teardown(c);
}

/* The names catalog_event_envs() gives, joined by spaces, into arg. */
static int env_name(void *arg, const char *env)
{
	strcat(arg, env);
	strcat(arg, " ");
	return 0;
}

/* Retention: the oldest lines go, by age then by count; offsets count
 * from the oldest line kept. */
static void test_event_trim(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(1 << 16);
	char line[128], names[128] = "", all[1024] = "";
	uint64_t n, removed;
	int i;

	/* Ten lines a day apart in prod, one in dev and one in old. */
	for (i = 0; i < 10; i++) {
		snprintf(line, sizeof(line),
			 "time=2026-11-%02dT12:00:00.000Z uid=0 n=%d\n", i + 1,
			 i);
		T_INTEQ(catalog_event_add(c, "prod", line, &err), 0);
	}
	T_INTEQ(catalog_event_add(c, "dev",
				  "time=2026-11-01T00:00:00.000Z uid=0\n",
				  &err), 0);
	T_INTEQ(catalog_event_add(c, "old",
				  "time=2020-01-01T00:00:00.000Z uid=0\n",
				  &err), 0);
	T_INTEQ(catalog_event_envs(c, env_name, names, &err), 0);
	T_STREQ(names, "dev old prod ");

	/* Nothing older than 2026-11-01: nothing goes. */
	T_INTEQ(catalog_event_trim(c, "prod", 0, "2026-11-01T00:00:00.000Z",
				   &removed, &err), 0);
	T_INTEQ(removed, 0);
	/* Older than the 4th at noon: three go; the 4th itself stays. */
	T_INTEQ(catalog_event_trim(c, "prod", 0, "2026-11-04T12:00:00.000Z",
				   &removed, &err), 0);
	T_INTEQ(removed, 3);
	T_INTEQ(catalog_event_read(c, "prod", 0, 1000, &b, &err), 0);
	T_CHECK(strncmp(buf_str(&b),
			"time=2026-11-04T12:00:00.000Z uid=0 n=3\n", 40) == 0);
	/* The size and the offsets count from the oldest line kept. */
	T_INTEQ(catalog_event_size(c, "prod", &n, &err), 0);
	T_INTEQ(n, b.len);
	snprintf(all, sizeof(all), "%s", buf_str(&b));
	buf_reset(&b);
	T_INTEQ(catalog_event_read(c, "prod", 40, 40, &b, &err), 0);
	T_STREQ(buf_str(&b), "time=2026-11-05T12:00:00.000Z uid=0 n=4\n");
	buf_reset(&b);
	T_INTEQ(catalog_event_read(c, "prod", 45, 3, &b, &err), 0);
	T_STREQ(buf_str(&b), "202");
	/* By count: the newest 4 stay. */
	T_INTEQ(catalog_event_trim(c, "prod", 4, NULL, &removed, &err), 0);
	T_INTEQ(removed, 3);
	T_INTEQ(catalog_event_trim(c, "prod", 4, NULL, &removed, &err), 0);
	T_INTEQ(removed, 0);
	buf_reset(&b);
	T_INTEQ(catalog_event_read(c, "prod", 0, 1000, &b, &err), 0);
	T_STREQ(buf_str(&b), all + 3 * 40);
	T_INTEQ(catalog_event_size(c, "prod", &n, &err), 0);
	T_INTEQ(n, 4 * 40);
	/* Lines added after keep their place at the end. */
	T_INTEQ(catalog_event_add(c, "prod",
				  "time=2026-11-11T00:00:00.000Z x\n", &err),
		0);
	T_INTEQ(catalog_event_size(c, "prod", &n, &err), 0);
	T_INTEQ(n, 4 * 40 + 32);
	/* Every line older: all go; then the log is empty. */
	T_INTEQ(catalog_event_trim(c, "old", 10, "2021-01-01T00:00:00.000Z",
				   &removed, &err), 0);
	T_INTEQ(removed, 1);
	T_INTEQ(catalog_event_size(c, "old", &n, &err), 0);
	T_INTEQ(n, 0);
	names[0] = '\0';
	T_INTEQ(catalog_event_envs(c, env_name, names, &err), 0);
	T_STREQ(names, "dev prod ");
	/* dev was not touched. */
	T_INTEQ(catalog_event_size(c, "dev", &n, &err), 0);
	T_INTEQ(n, 36);
	buf_release(&b);
	teardown(c);
}

/* ---- transactions ---------------------------------------------------------- */

static void test_transactions(void)
{
	struct catalog *c = setup();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	uint64_t n;
	int64_t eid, a;
	int rc;
	char *check = NULL;

	/* A failing op inside: everything before it is rolled back. */
	T_INTEQ(catalog_begin(c, &err), 0);
	rc = catalog_env_add(c, "t1", 0, 1, &e, &err);
	T_INTEQ(rc, 0);
	eid = e.id;
	if (!rc)
		rc = catalog_art_add(c, eid, "x.jar", &a, &err);
	if (!rc)
		rc = catalog_event_add(c, "t1", "created\n", &err);
	if (!rc)
		rc = catalog_env_add(c, "t1", 0, 1, NULL, &err);
	T_ERRNO(rc, EEXIST);
	T_ERRNO(catalog_end(c, rc, &err), EEXIST);
	T_ERRNO(catalog_env_get(c, "t1", &e, &err), ENOENT);
	T_INTEQ(catalog_event_size(c, "t1", &n, &err), 0);
	T_INTEQ(n, 0);

	/* A succeeding one commits. */
	cmfs_err_clear(&err);
	T_INTEQ(catalog_begin(c, &err), 0);
	rc = catalog_env_add(c, "t2", 0, 1, NULL, &err);
	if (!rc)
		rc = catalog_event_add(c, "t2", "created\n", &err);
	T_INTEQ(catalog_end(c, rc, &err), 0);
	T_INTEQ(catalog_env_get(c, "t2", &e, &err), 0);
	T_INTEQ(catalog_event_size(c, "t2", &n, &err), 0);
	T_INTEQ(n, 8);

	/* Nested: the outer end decides; a failure rolls back the inner's
	 * work too. */
	T_INTEQ(catalog_begin(c, &err), 0);
	T_INTEQ(catalog_env_add(c, "t3", 0, 1, NULL, &err), 0);
	T_INTEQ(catalog_begin(c, &err), 0);
	T_INTEQ(catalog_env_add(c, "t4", 0, 1, NULL, &err), 0);
	T_INTEQ(catalog_end(c, 0, &err), 0);
	T_ERRNO(catalog_end(c, -EIO, &err), EIO);
	T_ERRNO(catalog_env_get(c, "t3", &e, &err), ENOENT);
	T_ERRNO(catalog_env_get(c, "t4", &e, &err), ENOENT);

	/* A refusal by the caller (not the catalog) rolls back as well. */
	T_INTEQ(catalog_begin(c, &err), 0);
	T_INTEQ(catalog_env_add(c, "t5", 0, 1, NULL, &err), 0);
	T_ERRNO(catalog_end(c, -EDQUOT, &err), EDQUOT);
	T_ERRNO(catalog_env_get(c, "t5", &e, &err), ENOENT);

	/* Table puts (a transaction of their own) nest inside one. */
	T_INTEQ(catalog_env_get(c, "t2", &e, &err), 0);
	{
		struct catalog_table_def d = { (char *)"CREATE TABLE t (a INT)",
					       NULL, 0, NULL, NULL };
		struct catalog_table t;

		T_INTEQ(catalog_begin(c, &err), 0);
		T_INTEQ(catalog_table_put(c, e.id, "t", &d, 1, 0, NULL, &err),
			0);
		T_ERRNO(catalog_end(c, -EINVAL, &err), EINVAL);
		T_ERRNO(catalog_table_get(c, e.id, "t", &t, &err), ENOENT);
	}
	/* The catalog still works, and is sound. */
	T_INTEQ(catalog_env_add(c, "t6", 0, 1, NULL, &err), 0);
	T_INTEQ(catalog_check(c, &check, &err), 0);
	T_STREQ(check, "ok");
	free(check);
	teardown(c);
}

/* ---- threads --------------------------------------------------------------- */

struct holder {
	struct catalog *c;
	pthread_mutex_t m;
	pthread_cond_t cv;
	int began;
};

/* Hold a transaction that adds "held", then roll it back. */
static void *hold_txn(void *arg)
{
	struct holder *h = arg;
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	catalog_begin(h->c, NULL);
	catalog_env_add(h->c, "held", 0, 1, NULL, NULL);
	pthread_mutex_lock(&h->m);
	h->began = 1;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->m);
	nanosleep(&ts, NULL);
	catalog_end(h->c, -EIO, NULL);
	return NULL;
}

/* Another thread never sees a transaction's uncommitted rows: it waits
 * for the transaction to end. */
static void test_threads(void)
{
	struct catalog *c = setup();
	struct catalog_env e;
	struct holder h;
	pthread_t t;

	memset(&h, 0, sizeof(h));
	h.c = c;
	pthread_mutex_init(&h.m, NULL);
	pthread_cond_init(&h.cv, NULL);
	T_INTEQ(pthread_create(&t, NULL, hold_txn, &h), 0);
	pthread_mutex_lock(&h.m);
	while (!h.began)
		pthread_cond_wait(&h.cv, &h.m);
	pthread_mutex_unlock(&h.m);
	T_ERRNO(catalog_env_get(c, "held", &e, NULL), ENOENT);
	T_INTEQ(catalog_env_add(c, "held", 0, 2, &e, NULL), 0);
	pthread_join(t, NULL);
	T_INTEQ(catalog_env_get(c, "held", &e, NULL), 0);
	T_INTEQ(e.ctime, 2);
	pthread_cond_destroy(&h.cv);
	pthread_mutex_destroy(&h.m);
	teardown(c);
}

int main(void)
{
	T_RUN(test_open);
	T_RUN(test_env);
	T_RUN(test_artifacts);
	T_RUN(test_numbering);
	T_RUN(test_blob_refs);
	T_RUN(test_inline);
	T_RUN(test_names);
	T_RUN(test_unsynced);
	T_RUN(test_checkpoint);
	T_RUN(test_checkpoint_stream);
	T_RUN(test_checkpoint_warms_log);
	T_RUN(test_log_kept);
	T_RUN(test_label_plan);
	T_RUN(test_labels);
	T_RUN(test_memo_lru);
	T_RUN(test_memo_generation);
	T_RUN(test_memo_oversize);
	T_RUN(test_memo_threads);
	T_RUN(test_memo_catalog);
	T_RUN(test_inspections);
	T_RUN(test_stale_inspections);
	T_RUN(test_tables);
	T_RUN(test_events);
	T_RUN(test_event_trim);
	T_RUN(test_transactions);
	T_RUN(test_threads);
	return T_DONE();
}
