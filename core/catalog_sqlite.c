/*
 * catalog_sqlite.c - the SQLite backend of the catalog.
 *
 * One database file in WAL mode with foreign keys on.  The schema carries
 * its version in PRAGMA user_version; migrate() brings an older file up to
 * date in one transaction, step by step, and refuses a newer one.
 *
 * Concurrency: one connection guarded by a recursive mutex.  A transaction
 * holds the mutex from catalog_begin() to catalog_end(), so the calls a
 * thread makes inside it are serialised with everybody else's.  Statements
 * are prepared once and kept (stmts[]), reset after each use.
 *
 * SQLite result codes become errnos here and nowhere else: SQLITE_FULL is
 * -ENOSPC, a UNIQUE violation -EEXIST, SQLITE_NOMEM -ENOMEM, the rest -EIO.
 */
#include "catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "catalog_rows.h"
#include "jar.h"

#define SCHEMA_VERSION 13
#define CMFS_STR_(x) #x
#define CMFS_STR(x) CMFS_STR_(x)

static const char *const schema_v1[] = {
	"CREATE TABLE envs(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
	" ctime INTEGER NOT NULL, uid INTEGER NOT NULL)",
	"CREATE TABLE artifacts(id INTEGER PRIMARY KEY,"
	" env_id INTEGER NOT NULL REFERENCES envs(id),"
	" name TEXT NOT NULL, next_n INTEGER NOT NULL DEFAULT 1,"
	" UNIQUE(env_id, name))",
	"CREATE TABLE versions(artifact_id INTEGER NOT NULL"
	" REFERENCES artifacts(id) ON DELETE CASCADE, n INTEGER NOT NULL,"
	" sha256 TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,"
	" uid INTEGER NOT NULL, PRIMARY KEY(artifact_id, n)) WITHOUT ROWID",
	"CREATE INDEX versions_sha ON versions(sha256)",
	"CREATE TABLE labels(artifact_id INTEGER NOT NULL"
	" REFERENCES artifacts(id) ON DELETE CASCADE, key TEXT NOT NULL,"
	" value TEXT NOT NULL, PRIMARY KEY(artifact_id, key)) WITHOUT ROWID",
	"CREATE INDEX labels_kv ON labels(key, value)",
	"CREATE TABLE inspections(sha256 TEXT PRIMARY KEY, error TEXT,"
	" external TEXT NOT NULL) WITHOUT ROWID",
	"CREATE TABLE factories(sha256 TEXT NOT NULL"
	" REFERENCES inspections(sha256) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL, kind TEXT NOT NULL, identifier TEXT,"
	" class TEXT NOT NULL, PRIMARY KEY(sha256, seq)) WITHOUT ROWID",
	"CREATE TABLE tables(id INTEGER PRIMARY KEY,"
	" env_id INTEGER NOT NULL REFERENCES envs(id), name TEXT NOT NULL,"
	" ddl TEXT NOT NULL, like_ddl TEXT, size INTEGER NOT NULL,"
	" mtime INTEGER NOT NULL, uid INTEGER NOT NULL, UNIQUE(env_id, name))",
	"CREATE TABLE table_options(table_id INTEGER NOT NULL"
	" REFERENCES tables(id) ON DELETE CASCADE, seq INTEGER NOT NULL,"
	" key TEXT NOT NULL, value TEXT NOT NULL,"
	" PRIMARY KEY(table_id, seq)) WITHOUT ROWID",
	"CREATE TABLE events(id INTEGER PRIMARY KEY, env TEXT NOT NULL,"
	" off INTEGER NOT NULL, len INTEGER NOT NULL, line BLOB NOT NULL)",
	"CREATE UNIQUE INDEX events_env_off ON events(env, off)",
	NULL
};

/* Each environment's counts, from the rows (schema 2, fsck --repair). */
#define RECOUNT                                                               \
	"UPDATE envs SET"                                                     \
	" nart = (SELECT count(*) FROM artifacts WHERE env_id = envs.id),"    \
	" ntab = (SELECT count(*) FROM tables WHERE env_id = envs.id)"

/*
 * Version 2: each environment counts its artifacts and tables, kept by
 * triggers in the transaction that adds or drops one.  The limits are
 * checked at every new artifact and table, and count(*) over 100,000 rows
 * took milliseconds each time.
 */
static const char *const schema_v2[] = {
	"ALTER TABLE envs ADD COLUMN nart INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE envs ADD COLUMN ntab INTEGER NOT NULL DEFAULT 0",
	RECOUNT,
	"CREATE TRIGGER art_add AFTER INSERT ON artifacts BEGIN"
	" UPDATE envs SET nart = nart + 1 WHERE id = NEW.env_id; END",
	"CREATE TRIGGER art_del AFTER DELETE ON artifacts BEGIN"
	" UPDATE envs SET nart = nart - 1 WHERE id = OLD.env_id; END",
	"CREATE TRIGGER tab_add AFTER INSERT ON tables BEGIN"
	" UPDATE envs SET ntab = ntab + 1 WHERE id = NEW.env_id; END",
	"CREATE TRIGGER tab_del AFTER DELETE ON tables BEGIN"
	" UPDATE envs SET ntab = ntab - 1 WHERE id = OLD.env_id; END",
	NULL
};

/*
 * Version 3: the blobs whose bytes may not be on disk yet ([store] sync =
 * batch), each added in the transaction of the version that refers to it
 * and dropped after the sync that wrote it.
 */
static const char *const schema_v3[] = {
	"CREATE TABLE unsynced(seq INTEGER PRIMARY KEY,"
	" sha256 TEXT NOT NULL)",
	NULL
};

/*
 * Version 4: a JAR's factories live in its inspection's row, and a
 * table's options in the table's row, as JSON arrays ([kind, identifier,
 * class] and [key, value], in order).  A resolution read each from a
 * table of its own: two more B-trees, two more random disk reads when
 * the catalog is not in memory (100,000 artifacts: about 5 reads a
 * resolution, each as long as reading a small file).  Version 13 puts
 * them back into tables of their own.
 */
static const char *const schema_v4[] = {
	"ALTER TABLE inspections ADD COLUMN factories TEXT NOT NULL"
	" DEFAULT '[]'",
	"UPDATE inspections SET factories = (SELECT"
	" json_group_array(json_array(kind, identifier, class)) FROM"
	" (SELECT kind, identifier, class FROM factories f"
	" WHERE f.sha256 = inspections.sha256 ORDER BY seq))",
	"DROP TABLE factories",
	"ALTER TABLE tables ADD COLUMN options TEXT NOT NULL DEFAULT '[]'",
	"UPDATE tables SET options = (SELECT"
	" json_group_array(json_array(key, value)) FROM"
	" (SELECT key, value FROM table_options o"
	" WHERE o.table_id = tables.id ORDER BY seq))",
	"DROP TABLE table_options",
	NULL
};

/*
 * Version 5: inspections are rows of a plain table, found by sha256
 * through an index, and each version names its inspection's row.  As a
 * WITHOUT ROWID table keyed by the 64-character sha256, inspections kept
 * whole rows (some 250 bytes: the external classes, the factories) in
 * their interior pages too: 16 to a page, five levels over 100,000 JARs,
 * and a resolution in a catalog not in memory read 1.8 of its pages (an
 * interior one and the leaf).  By the row's number it reads the leaf.
 */
static const char *const schema_v5[] = {
	"CREATE TABLE inspections_v5(id INTEGER PRIMARY KEY,"
	" sha256 TEXT NOT NULL UNIQUE, error TEXT, external TEXT NOT NULL,"
	" factories TEXT NOT NULL DEFAULT '[]')",
	"INSERT INTO inspections_v5(sha256, error, external, factories)"
	" SELECT sha256, error, external, factories FROM inspections"
	" ORDER BY sha256",
	"DROP TABLE inspections",
	"ALTER TABLE inspections_v5 RENAME TO inspections",
	"ALTER TABLE versions ADD COLUMN insp INTEGER",
	"UPDATE versions SET insp = (SELECT id FROM inspections i"
	" WHERE i.sha256 = versions.sha256)",
	NULL
};

/*
 * Version 6: the bytes of small blobs live in the catalog (repo.c says
 * why), a row of inline_blobs each, found by sha256.  A row goes in the
 * transaction that drops the last version referring to its blob; deleting
 * an artifact drops its versions by the cascade, which fires the trigger
 * too.
 */
static const char *const schema_v6[] = {
	"CREATE TABLE inline_blobs(id INTEGER PRIMARY KEY,"
	" sha256 TEXT NOT NULL UNIQUE, bytes BLOB NOT NULL)",
	"CREATE TRIGGER inline_free AFTER DELETE ON versions"
	" WHEN NOT EXISTS (SELECT 1 FROM versions WHERE sha256 = OLD.sha256)"
	" BEGIN DELETE FROM inline_blobs WHERE sha256 = OLD.sha256; END",
	NULL};

/*
 * Version 7: an environment's events are keyed by (env, off) themselves,
 * in one B-tree.  As a rowid table with a unique index on (env, off),
 * every line was written to two: every change's commit wrote two more
 * pages than it needed (a label's, four pages: two of them for its line).
 * Lines are read by that key only.
 */
static const char *const schema_v7[] = {
	"CREATE TABLE events_v7(env TEXT NOT NULL, off INTEGER NOT NULL,"
	" len INTEGER NOT NULL, line BLOB NOT NULL, PRIMARY KEY(env, off))"
	" WITHOUT ROWID",
	"INSERT INTO events_v7 SELECT env, off, len, line FROM events"
	" ORDER BY env, off",
	"DROP TABLE events",
	"ALTER TABLE events_v7 RENAME TO events",
	NULL};

/*
 * Version 8: version numbers belong to a name in an environment, not to
 * one artifact row.  A pinned path versions/<name>/<n><ext> must never
 * name other bytes than it did, so when an artifact leaves a name (rm,
 * its last version removed, renamed away) the name's next number stays
 * behind in `retired`, and an artifact that takes the name again starts
 * there.  Keyed by the environment's name: an environment's row number
 * may be reused after it is removed, its name's pinned paths not.
 * `holder`: the artifact that left the name by a rename and lives on
 * (NULL once it is deleted): it may come back without renumbering, since
 * the name's numbers below next_n that it has are the ones it had there.
 */
static const char *const schema_v8[] = {
	"CREATE TABLE retired(env TEXT NOT NULL, name TEXT NOT NULL,"
	" next_n INTEGER NOT NULL, holder INTEGER,"
	" PRIMARY KEY(env, name)) WITHOUT ROWID",
	"CREATE INDEX retired_holder ON retired(holder)"
	" WHERE holder IS NOT NULL",
	"CREATE TRIGGER art_retire AFTER DELETE ON artifacts BEGIN"
	" UPDATE retired SET holder = NULL WHERE holder = OLD.id;"
	" INSERT OR REPLACE INTO retired(env, name, next_n, holder)"
	" SELECT e.name, OLD.name, max(OLD.next_n, COALESCE((SELECT next_n"
	" FROM retired r WHERE r.env = e.name AND r.name = OLD.name), 1)),"
	" NULL FROM envs e WHERE e.id = OLD.env_id; END",
	/* (a new name costs one look-up: the WHEN) */
	"CREATE TRIGGER art_reuse AFTER INSERT ON artifacts"
	" WHEN EXISTS(SELECT 1 FROM retired WHERE name = NEW.name AND env ="
	" (SELECT name FROM envs WHERE id = NEW.env_id)) BEGIN"
	" UPDATE artifacts SET next_n = max(next_n, (SELECT next_n"
	" FROM retired WHERE name = NEW.name AND env ="
	" (SELECT name FROM envs WHERE id = NEW.env_id)))"
	" WHERE id = NEW.id;"
	" DELETE FROM retired WHERE name = NEW.name AND env ="
	" (SELECT name FROM envs WHERE id = NEW.env_id); END",
	NULL};

/*
 * Version 9: the loose blobs, the only blob files a mount may free.  A
 * row goes in before a new blob file is linked into the store (its own
 * transaction), and in the transaction that drops the last version
 * referring to a blob; the version that takes the blob drops it.  A blob
 * file that the catalog neither refers to nor lists here is kept: it may
 * belong to another catalog (a wrong path, a catalog restored from a
 * backup), and only fsck names it.
 */
static const char *const schema_v9[] = {
	"CREATE TABLE loose(sha256 TEXT PRIMARY KEY) WITHOUT ROWID",
	"CREATE TRIGGER loose_free AFTER DELETE ON versions"
	" WHEN NOT EXISTS (SELECT 1 FROM versions WHERE sha256 = OLD.sha256)"
	" BEGIN INSERT OR IGNORE INTO loose(sha256) VALUES(OLD.sha256); END",
	"CREATE TRIGGER loose_taken AFTER INSERT ON versions"
	" BEGIN DELETE FROM loose WHERE sha256 = NEW.sha256; END",
	NULL};

/*
 * Version 10: which inspector made each inspection (JAR_INSPECTOR).  Rows
 * from before it were made by inspector 1, whose reach was class-level.
 */
static const char *const schema_v10[] = {
	"ALTER TABLE inspections ADD COLUMN inspector INTEGER NOT NULL"
	" DEFAULT 1",
	NULL};

/*
 * Version 11: the options each factory declares (options.h), rows of a
 * child table of the inspection: role 'required' or 'optional' with the
 * option's key, type, ...; 'prefix' with a prefix validateExcept lets
 * through; 'unknown' with the set ('required', 'optional', 'prefixes')
 * the bytecode does not show whole, or 'validation' for a connector
 * that calls none of FactoryUtil's checks.  `factory` is the factory's
 * place in the inspection's factories.  An inspection made before
 * (options_read 0, inspector < 3) knows no options: resolution checks
 * none for it until the mount inspects the JAR again (reinspect.h).
 */
static const char *const schema_v11[] = {
	"CREATE TABLE factory_options(insp INTEGER NOT NULL"
	" REFERENCES inspections(id) ON DELETE CASCADE,"
	" factory INTEGER NOT NULL, role TEXT NOT NULL, key TEXT NOT NULL,"
	" type TEXT, list INTEGER NOT NULL DEFAULT 0, vals TEXT, defval TEXT,"
	" deprecated TEXT, fallback TEXT, forward INTEGER NOT NULL DEFAULT 0,"
	" PRIMARY KEY(insp, factory, role, key)) WITHOUT ROWID",
	"ALTER TABLE inspections ADD COLUMN options_read INTEGER NOT NULL"
	" DEFAULT 0",
	NULL};

/*
 * Version 12: why the last write of a table was refused (NULL: it was
 * not, or a later write succeeded); user.cmfs.error of the table.
 */
static const char *const schema_v12[] = {
	"ALTER TABLE tables ADD COLUMN refusal TEXT", NULL};

/*
 * Version 13: a JAR's factories and a table's options are rows of child
 * tables again, in order (seq), keyed by the inspection's and the table's
 * row, as a factory's options are (version 11): the catalog holds no JSON.
 * Factories that no longer read as JSON are left behind and their
 * inspection is marked as made by inspector 0, so that the mount makes
 * it again (reinspect.h); option rows that do not read are left behind.
 */
static const char *const schema_v13[] = {
	"CREATE TABLE insp_factories(insp INTEGER NOT NULL"
	" REFERENCES inspections(id) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL, kind TEXT NOT NULL, identifier TEXT,"
	" class TEXT NOT NULL, PRIMARY KEY(insp, seq)) WITHOUT ROWID",
	"UPDATE inspections SET inspector = 0 WHERE NOT json_valid(factories)"
	" OR json_type(factories) <> 'array'",
	"UPDATE inspections SET inspector = 0 WHERE inspector <> 0 AND"
	" EXISTS(SELECT 1 FROM json_each(CASE WHEN inspector <> 0 THEN"
	" factories ELSE '[]' END) f WHERE json_extract(f.value, '$[0]')"
	" IS NULL OR json_extract(f.value, '$[2]') IS NULL)",
	"INSERT INTO insp_factories SELECT i.id, f.key,"
	" json_extract(f.value, '$[0]'), json_extract(f.value, '$[1]'),"
	" json_extract(f.value, '$[2]') FROM inspections i,"
	" json_each(CASE WHEN i.inspector <> 0 THEN i.factories"
	" ELSE '[]' END) f",
	"ALTER TABLE inspections DROP COLUMN factories",
	"CREATE TABLE tab_options(table_id INTEGER NOT NULL"
	" REFERENCES tables(id) ON DELETE CASCADE, seq INTEGER NOT NULL,"
	" key TEXT NOT NULL, value TEXT NOT NULL,"
	" PRIMARY KEY(table_id, seq)) WITHOUT ROWID",
	"INSERT INTO tab_options SELECT t.id, o.key,"
	" json_extract(o.value, '$[0]'), json_extract(o.value, '$[1]')"
	" FROM tables t, json_each(CASE WHEN json_valid(t.options)"
	" AND json_type(t.options) = 'array' THEN t.options ELSE '[]' END) o"
	" WHERE json_extract(o.value, '$[0]') IS NOT NULL"
	" AND json_extract(o.value, '$[1]') IS NOT NULL",
	"ALTER TABLE tables DROP COLUMN options",
	NULL};

/* The steps from each version to the next: migrations[v] makes v + 1. */
static const char *const *const migrations[SCHEMA_VERSION] = {
	schema_v1, schema_v2, schema_v3, schema_v4, schema_v5,
	schema_v6, schema_v7, schema_v8, schema_v9, schema_v10,
	schema_v11, schema_v12, schema_v13,
};

/* The prepared statements, by index into sql[]. */
enum {
	S_ENV_ADD,
	S_ENV_GET,
	S_ENV_DEL,
	S_ENV_LIST,
	S_ENV_BUSY,
	S_ART_GET,
	S_ART_ADD,
	S_ART_NAMES,
	S_ART_DEL,
	S_ART_RENAME,
	S_ART_COUNT,
	S_ART_LIST,
	S_ART_BY_LABEL,
	S_VER_NEXT,
	S_VER_BUMP,
	S_VER_ADD,
	S_VER_GET,
	S_VER_DEL,
	S_VER_LIST,
	S_BLOB_REFS,
	S_BLOB_TOTAL,
	S_LABEL_SET,
	S_LABEL_DEL,
	S_LABEL_GET,
	S_LABEL_LIST,
	S_INSP_PUT,
	S_INSP_ADD,
	S_INSP_LINK,
	S_FACT_DEL,
	S_FACT_PUT,
	S_FACT_GET,
	S_INSP_GET,
	S_INSP_GET_ID,
	S_OPT_DEL,
	S_OPT_PUT,
	S_OPT_GET,
	S_OPT_MARK,
	S_TABLE_GET,
	S_TABLE_DEF,
	S_TABLE_PUT,
	S_TABLE_REFUSAL_SET,
	S_TABLE_REFUSAL_GET,
	S_TABLE_OPTS_DEL,
	S_TABLE_OPT_ADD,
	S_TABLE_OPT_GET,
	S_TABLE_DEL,
	S_TABLE_COUNT,
	S_TABLE_LIST,
	S_EVENT_ADD,
	S_EVENT_SIZE,
	S_EVENT_READ,
	S_EVENT_BASE,
	S_EVENT_ENVS,
	S_EVENT_OLD,
	S_EVENT_COUNT,
	S_EVENT_CUT,
	S_UNSYNCED_ADD,
	S_UNSYNCED_MARK,
	S_UNSYNCED_CLEAR,
	S_UNSYNCED_LIST,
	S_LOOSE_ADD,
	S_LOOSE_DEL,
	S_LOOSE_LIST,
	S_INSP_STALE,
	S_VER_BY_SHA,
	S_INLINE_PUT,
	S_INLINE_GET,
	S_INLINE_DEL,
	S_INLINE_LIST,
	S_BEGIN,
	S_COMMIT,
	S_ROLLBACK,
	S_SYNC_NORMAL,
	S_SYNC_FULL,
	S_COUNT
};

/* The columns of an artifact row with its latest version. */
#define ART_COLS                                                             \
	"a.id, a.env_id, a.name, v.n, v.sha256, v.size, v.mtime, v.uid,"     \
	" (SELECT count(*) FROM versions WHERE artifact_id = a.id), v.insp"
#define ART_LATEST                                                           \
	" JOIN versions v ON v.artifact_id = a.id AND v.n ="                 \
	" (SELECT max(n) FROM versions WHERE artifact_id = a.id)"

static const char *const sql[S_COUNT] = {
	[S_ENV_ADD] = "INSERT INTO envs(name, ctime, uid) VALUES(?, ?, ?)",
	[S_ENV_GET] = "SELECT id, name, ctime, uid FROM envs WHERE name = ?",
	[S_ENV_DEL] = "DELETE FROM envs WHERE id = ?",
	[S_ENV_LIST] = "SELECT id, name, ctime, uid FROM envs ORDER BY name",
	[S_ENV_BUSY] =
		"SELECT EXISTS(SELECT 1 FROM artifacts WHERE env_id = ?1)"
		" OR EXISTS(SELECT 1 FROM tables WHERE env_id = ?1)",
	[S_ART_GET] = "SELECT " ART_COLS " FROM artifacts a" ART_LATEST
		      " WHERE a.env_id = ? AND a.name = ?",
	[S_ART_ADD] = "INSERT INTO artifacts(env_id, name) VALUES(?, ?)",
	[S_ART_NAMES] = "SELECT env_id, name FROM artifacts",
	[S_ART_DEL] = "DELETE FROM artifacts WHERE id = ?",
	[S_ART_RENAME] = "UPDATE artifacts SET name = ? WHERE id = ?"
			 " RETURNING env_id",
	[S_ART_COUNT] = "SELECT COALESCE((SELECT nart FROM envs"
			" WHERE id = ?), 0)",
	[S_ART_LIST] = "SELECT " ART_COLS " FROM artifacts a" ART_LATEST
		       " WHERE a.env_id = ? ORDER BY a.name",
	/* CROSS JOIN keeps labels the outer loop: without it the planner
	 * walks every artifact of the environment (by the name order it is
	 * asked for) and probes each one's labels. */
	[S_ART_BY_LABEL] =
		"SELECT " ART_COLS " FROM labels l"
		" CROSS JOIN artifacts a ON a.id = l.artifact_id" ART_LATEST
		" WHERE l.key = ? AND l.value = ?"
		" AND a.env_id = ? ORDER BY a.name",
	[S_VER_NEXT] = "SELECT next_n FROM artifacts WHERE id = ?",
	[S_VER_BUMP] = "UPDATE artifacts SET next_n = next_n + 1 WHERE id = ?",
	[S_VER_ADD] =
		"INSERT INTO versions(artifact_id, n, sha256, size, mtime,"
		" uid, insp) VALUES(?1, ?2, ?3, ?4, ?5, ?6,"
		" (SELECT id FROM inspections WHERE sha256 = ?3))",
	[S_VER_GET] = "SELECT artifact_id, n, sha256, size, mtime, uid, insp"
		      " FROM versions WHERE artifact_id = ? AND n = ?",
	[S_VER_DEL] = "DELETE FROM versions WHERE artifact_id = ? AND n = ?",
	[S_VER_LIST] = "SELECT artifact_id, n, sha256, size, mtime, uid, insp"
		       " FROM versions WHERE artifact_id = ? ORDER BY n",
	[S_BLOB_REFS] = "SELECT count(*) FROM versions WHERE sha256 = ?",
	[S_BLOB_TOTAL] = "SELECT COALESCE(sum(size), 0) FROM (SELECT"
			 " DISTINCT sha256, size FROM versions)",
	[S_LABEL_SET] = "INSERT INTO labels(artifact_id, key, value)"
			" VALUES(?, ?, ?) ON CONFLICT(artifact_id, key)"
			" DO UPDATE SET value = excluded.value",
	[S_LABEL_DEL] = "DELETE FROM labels WHERE artifact_id = ? AND key = ?",
	[S_LABEL_GET] = "SELECT value FROM labels WHERE artifact_id = ?"
			" AND key = ?",
	[S_LABEL_LIST] = "SELECT key, value FROM labels WHERE artifact_id = ?"
			 " ORDER BY key",
	/* A row keeps its number when it is put again (fsck): versions
	 * name it. */
	[S_INSP_PUT] = "INSERT INTO inspections(sha256, error, external,"
		       " inspector) VALUES(?, ?, ?, " CMFS_STR(JAR_INSPECTOR)
		       ") ON CONFLICT(sha256) DO UPDATE SET"
		       " error = excluded.error, external = excluded.external,"
		       " inspector = excluded.inspector RETURNING id",
	[S_INSP_ADD] = "INSERT INTO inspections(sha256, error, external,"
		       " inspector) VALUES(?1, ?2, ?3, "
		       CMFS_STR(JAR_INSPECTOR) ")",
	[S_INSP_LINK] = "UPDATE versions SET insp = ?2 WHERE sha256 = ?1"
			" AND insp IS NOT ?2",
	[S_FACT_DEL] = "DELETE FROM insp_factories WHERE insp = ?1",
	[S_FACT_PUT] = "INSERT INTO insp_factories(insp, seq, kind,"
		       " identifier, class) VALUES(?1, ?5, ?2, ?3, ?4)",
	[S_FACT_GET] = "SELECT kind, identifier, class FROM insp_factories"
		       " WHERE insp = ?1 ORDER BY seq",
	[S_INSP_GET] = "SELECT error, external, sha256, id,"
		       " options_read FROM inspections WHERE sha256 = ?",
	[S_INSP_GET_ID] = "SELECT error, external, sha256, id,"
			  " options_read FROM inspections WHERE id = ?"
			  " AND sha256 = ?",
	[S_OPT_DEL] = "DELETE FROM factory_options WHERE insp = ?1",
	[S_OPT_PUT] = "INSERT OR IGNORE INTO factory_options(insp, factory,"
		      " role, key, type, list, vals, defval, deprecated,"
		      " fallback, forward) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7,"
		      " ?8, ?9, ?10, ?11)",
	[S_OPT_MARK] = "UPDATE inspections SET options_read = 1 WHERE id = ?1",
	[S_OPT_GET] = "SELECT factory, role, key, type, list, vals, defval,"
		      " deprecated, fallback, forward FROM factory_options"
		      " WHERE insp = ?1 ORDER BY factory, role, key",
	[S_TABLE_GET] = "SELECT id, env_id, name, size, mtime, uid FROM tables"
			" WHERE env_id = ? AND name = ?",
	[S_TABLE_DEF] = "SELECT ddl, like_ddl FROM tables WHERE id = ?",
	[S_TABLE_PUT] = "INSERT INTO tables(env_id, name, ddl, like_ddl, size,"
			" mtime, uid) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
			" ON CONFLICT(env_id, name) DO UPDATE SET"
			" ddl = ?3, like_ddl = ?4, size = ?5, mtime = ?6,"
			" uid = ?7, refusal = NULL RETURNING id",
	[S_TABLE_REFUSAL_SET] = "UPDATE tables SET refusal = ?2 WHERE id = ?1",
	[S_TABLE_REFUSAL_GET] = "SELECT refusal FROM tables WHERE id = ?",
	[S_TABLE_OPTS_DEL] = "DELETE FROM tab_options WHERE table_id = ?",
	[S_TABLE_OPT_ADD] = "INSERT INTO tab_options(table_id, seq, key,"
			    " value) VALUES(?1, ?4, ?2, ?3)",
	[S_TABLE_OPT_GET] = "SELECT key, value FROM tab_options"
			    " WHERE table_id = ?1 ORDER BY seq",
	[S_TABLE_DEL] = "DELETE FROM tables WHERE id = ?",
	[S_TABLE_COUNT] = "SELECT COALESCE((SELECT ntab FROM envs"
			  " WHERE id = ?), 0)",
	[S_TABLE_LIST] = "SELECT id, env_id, name, size, mtime, uid"
			 " FROM tables WHERE env_id = ? ORDER BY name",
	[S_EVENT_ADD] = "INSERT INTO events(env, off, len, line) VALUES(?1,"
			" COALESCE((SELECT off + len FROM events WHERE env = ?1"
			" ORDER BY off DESC LIMIT 1), 0), ?2, ?3)",
	/* An environment's log starts at its oldest line kept: offsets are
	 * relative to it (the lines retention removed are gone). */
	[S_EVENT_SIZE] = "SELECT COALESCE((SELECT off + len FROM events"
			 " WHERE env = ?1 ORDER BY off DESC LIMIT 1) -"
			 " (SELECT off FROM events WHERE env = ?1"
			 " ORDER BY off LIMIT 1), 0)",
	[S_EVENT_READ] = "SELECT off, line FROM events WHERE env = ?1 AND"
			 " off >= COALESCE((SELECT max(off) FROM events"
			 " WHERE env = ?1 AND off <= ?2), 0) ORDER BY off",
	[S_EVENT_BASE] = "SELECT COALESCE((SELECT off FROM events"
			 " WHERE env = ? ORDER BY off LIMIT 1), 0)",
	/* Each name once, a step of the key each (not a scan of lines). */
	[S_EVENT_ENVS] = "WITH RECURSIVE e(n) AS (SELECT min(env) FROM events"
			 " UNION ALL SELECT (SELECT min(env) FROM events"
			 " WHERE env > n) FROM e WHERE n IS NOT NULL)"
			 " SELECT n FROM e WHERE n IS NOT NULL",
	/* Lines older than ?2 (a time value, compared as text: every line
	 * starts "time=YYYY-MM-DDTHH:MM:SS.mmmZ"), from the oldest on. */
	[S_EVENT_OLD] = "DELETE FROM events WHERE env = ?1 AND off <"
			" COALESCE((SELECT off FROM events WHERE env = ?1 AND"
			" CAST(substr(line, 6, 24) AS TEXT) >= ?2"
			" ORDER BY off LIMIT 1),"
			" (SELECT max(off) + 1 FROM events WHERE env = ?1))",
	[S_EVENT_COUNT] = "SELECT count(*) FROM events WHERE env = ?",
	/* The oldest ?2 lines. */
	[S_EVENT_CUT] = "DELETE FROM events WHERE env = ?1 AND off <"
			" (SELECT off FROM events WHERE env = ?1"
			" ORDER BY off LIMIT 1 OFFSET ?2)",
	[S_UNSYNCED_ADD] = "INSERT INTO unsynced(sha256) VALUES(?)",
	[S_UNSYNCED_MARK] = "SELECT COALESCE(max(seq), 0) FROM unsynced",
	[S_UNSYNCED_CLEAR] = "DELETE FROM unsynced WHERE seq <= ?",
	[S_UNSYNCED_LIST] = "SELECT DISTINCT sha256 FROM unsynced",
	[S_LOOSE_ADD] = "INSERT OR IGNORE INTO loose(sha256) VALUES(?)",
	[S_LOOSE_DEL] = "DELETE FROM loose WHERE sha256 = ?",
	[S_LOOSE_LIST] = "SELECT sha256 FROM loose",
	[S_INSP_STALE] = "SELECT i.sha256, (SELECT size FROM versions v"
			 " WHERE v.sha256 = i.sha256 LIMIT 1) AS size"
			 " FROM inspections i WHERE i.inspector < "
			 CMFS_STR(JAR_INSPECTOR) " AND size IS NOT NULL",
	[S_VER_BY_SHA] = "SELECT e.name, a.name, v.n FROM versions v"
			 " JOIN artifacts a ON a.id = v.artifact_id"
			 " JOIN envs e ON e.id = a.env_id WHERE v.sha256 = ?"
			 " ORDER BY e.name, a.name, v.n",
	[S_INLINE_PUT] = "INSERT INTO inline_blobs(sha256, bytes) VALUES(?, ?)"
			 " ON CONFLICT(sha256) DO NOTHING",
	[S_INLINE_GET] = "SELECT bytes FROM inline_blobs WHERE sha256 = ?",
	[S_INLINE_DEL] = "DELETE FROM inline_blobs WHERE sha256 = ?",
	[S_INLINE_LIST] = "SELECT sha256, length(bytes) FROM inline_blobs"
			  " ORDER BY sha256",
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_SYNC_NORMAL] = "PRAGMA synchronous = NORMAL",
	[S_SYNC_FULL] = "PRAGMA synchronous = FULL",
};

const char *catalog_sqlite_by_label_sql(void)
{
	return sql[S_ART_BY_LABEL];
}

/*
 * Names that may be artifacts: a Bloom filter over (environment, name) of
 * every artifact row this connection has seen or made, so that looking up
 * a name that is not there (each new upload's stat, and its O_EXCL open)
 * costs no statement: outside a transaction one is a read transaction of
 * its own, four fcntl() locks of the log's index, ~35 us here against
 * ~15 us for the whole reply.  Built at the first look-up from the
 * artifacts table, grown (rebuilt) as rows come; bits are never taken
 * away, so a deleted or rolled-back name only sends its look-ups to SQLite.
 * Kept by the connections catalog_open() makes, a mount's: a store's only
 * writer while it is mounted (import and fsck --repair refuse a store in
 * use).
 */
struct names {
	uint64_t *bits;
	size_t nbits; /* a power of 2; 0 until built */
	size_t n;     /* names added */
	int off;      /* not kept on this connection, or could not be */
};

struct sq {
	sqlite3 *db;
	pthread_mutex_t lock; /* guards db, stmts, depth and names */
	sqlite3_stmt *stmts[S_COUNT];
	int depth; /* catalog_begin() nesting of the owner */
	int full;  /* commits wait for the disk (synchronous=FULL) */
	struct names names;
	int sync_fd[2]; /* the log and the file, for sq_sync(): -1 */
	sqlite3 *ckpt;	/* sq_checkpoint()'s own connection, or NULL */
	int ckpt_off;	/* it could not be opened: none */
};

/* Map a SQLite result code to an errno and record the message. */
static int fail(struct sq *q, int src, struct cmfs_err *err)
{
	int code;

	switch (src & 0xff) {
	case SQLITE_FULL:
		code = -ENOSPC;
		break;
	case SQLITE_NOMEM:
		code = -ENOMEM;
		break;
	case SQLITE_CONSTRAINT:
		code = src == SQLITE_CONSTRAINT_UNIQUE ||
				       src == SQLITE_CONSTRAINT_PRIMARYKEY
			       ? -EEXIST
			       : -EINVAL;
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		code = -EAGAIN;
		break;
	case SQLITE_READONLY:
		code = -EROFS;
		break;
	default:
		code = -EIO;
	}
	return cmfs_err_set(err, code, "catalog: %s", sqlite3_errmsg(q->db));
}

/* The prepared statement `id`, reset and with bindings cleared. */
static sqlite3_stmt *st(struct sq *q, int id)
{
	sqlite3_stmt *s = q->stmts[id];

	if (!s) {
		if (sqlite3_prepare_v3(q->db, sql[id], -1,
				       SQLITE_PREPARE_PERSISTENT, &s, NULL))
			return NULL;
		q->stmts[id] = s;
	}
	return s;
}

/* Finish with a statement: reset it so it holds no read lock. */
static void done(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

static void lock(struct sq *q)
{
	pthread_mutex_lock(&q->lock);
}

static void unlock(struct sq *q)
{
	pthread_mutex_unlock(&q->lock);
}

/* Run a statement that returns no rows.  0 or -errno. */
static int exec_stmt(struct sq *q, sqlite3_stmt *s, struct cmfs_err *err)
{
	int rc = sqlite3_step(s);

	done(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return fail(q, sqlite3_extended_errcode(q->db), err);
	return 0;
}

/* Run a statement returning one integer (count, sum).  0 or -errno. */
static int scalar(struct sq *q, sqlite3_stmt *s, uint64_t *out,
		  struct cmfs_err *err)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		*out = (uint64_t)sqlite3_column_int64(s, 0);
	done(s);
	if (rc != SQLITE_ROW)
		return fail(q, sqlite3_extended_errcode(q->db), err);
	return 0;
}

static int migrate(struct sq *q, struct cmfs_err *err)
{
	sqlite3_stmt *s;
	int version = 0, i, rc;

	if (sqlite3_prepare_v2(q->db, "PRAGMA user_version", -1, &s, NULL))
		return fail(q, sqlite3_errcode(q->db), err);
	if (sqlite3_step(s) == SQLITE_ROW)
		version = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (version > SCHEMA_VERSION)
		return cmfs_err_set(err, -EPROTO,
				    "catalog schema %d is newer than this "
				    "cmfs (%d): upgrade cmfs", version,
				    SCHEMA_VERSION);
	if (version == SCHEMA_VERSION)
		return 0;
	if (sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, NULL))
		return fail(q, sqlite3_errcode(q->db), err);
	for (; version < SCHEMA_VERSION; version++)
		for (i = 0; migrations[version][i]; i++)
			if (sqlite3_exec(q->db, migrations[version][i], NULL,
					 NULL, NULL))
				goto bad;
	if (sqlite3_exec(q->db, "PRAGMA user_version = " CMFS_STR(SCHEMA_VERSION),
			 NULL, NULL, NULL) ||
	    sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL))
		goto bad;
	return 0;
bad:
	rc = fail(q, sqlite3_extended_errcode(q->db), err);
	sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static void sq_close(void *impl)
{
	struct sq *q = impl;
	int i;

	if (!q)
		return;
	for (i = 0; i < S_COUNT; i++)
		sqlite3_finalize(q->stmts[i]);
	sqlite3_close(q->ckpt);
	sqlite3_close(q->db);
	/* Only now: a close drops the process's POSIX locks on the file. */
	for (i = 0; i < 2; i++)
		if (q->sync_fd[i] >= 0)
			close(q->sync_fd[i]);
	pthread_mutex_destroy(&q->lock);
	free(q->names.bits);
	free(q);
}

/*
 * The mount's connection keeps up to 16 MiB of catalog pages (SQLite's
 * default is 2 MiB).  After `drop_caches`, a resolution over 100,000
 * artifacts read its index pages from disk again: p50 523 -> 399 us (and
 * 537 -> 225 us over 1,000), for 14 MiB more RSS at that size.
 */
static int sq_open(void **impl, const char *uri, struct cmfs_err *err)
{
	static const char *const pragmas =
		"PRAGMA journal_mode = WAL;"
		"PRAGMA synchronous = FULL;"
		"PRAGMA cache_size = -16384;"
		"PRAGMA foreign_keys = ON;";
	pthread_mutexattr_t a;
	struct sq *q;
	int rc;

	q = calloc(1, sizeof(*q));
	if (!q)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	q->full = 1;
	q->sync_fd[0] = q->sync_fd[1] = -1;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&q->lock, &a);
	pthread_mutexattr_destroy(&a);
	rc = sqlite3_open_v2(uri, &q->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (rc) {
		rc = cmfs_err_set(err, rc == SQLITE_CANTOPEN ? -ENOENT : -EIO,
				  "catalog %s: %s", uri,
				  q->db ? sqlite3_errmsg(q->db)
					: "cannot open");
		goto bad;
	}
	sqlite3_busy_timeout(q->db, 10000);
	sqlite3_extended_result_codes(q->db, 1);
	if (sqlite3_exec(q->db, pragmas, NULL, NULL, NULL)) {
		rc = fail(q, sqlite3_errcode(q->db), err);
		goto bad;
	}
	if ((rc = migrate(q, err)))
		goto bad;
	*impl = q;
	return 0;
bad:
	sq_close(q);
	return rc;
}

static int sq_begin(void *impl, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc = 0;

	lock(q);
	if (q->depth++ == 0)
		rc = exec_stmt(q, st(q, S_BEGIN), err);
	if (rc) {
		q->depth--;
		unlock(q);
	}
	return rc;
}

static int sq_end(void *impl, int rc, struct cmfs_err *err)
{
	struct sq *q = impl;

	if (--q->depth == 0) {
		if (rc == 0)
			rc = exec_stmt(q, st(q, S_COMMIT), err);
		if (rc)
			exec_stmt(q, st(q, S_ROLLBACK), NULL);
	}
	unlock(q);
	return rc;
}

static int sq_check(void *impl, char **out, struct cmfs_err *err)
{
	struct sq *q = impl;
	struct buf b = BUF_INIT(1 << 20);
	sqlite3_stmt *s;
	int rc;

	lock(q);
	rc = sqlite3_prepare_v2(q->db, "PRAGMA integrity_check", -1, &s, NULL);
	if (rc) {
		rc = fail(q, rc, err);
		goto out;
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (b.len)
			buf_addc(&b, '\n');
		buf_adds(&b, (const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_finalize(s);
	*out = buf_take(&b, NULL);
	rc = *out ? 0 : -ENOMEM;
out:
	unlock(q);
	buf_release(&b);
	return rc;
}

/* Copy column `i` into a fixed array of `n` bytes. */
static void col_str(char *dst, size_t n, sqlite3_stmt *s, int i)
{
	const char *v = (const char *)sqlite3_column_text(s, i);

	snprintf(dst, n, "%s", v ? v : "");
}

static void row_env(struct catalog_env *e, sqlite3_stmt *s)
{
	e->id = sqlite3_column_int64(s, 0);
	col_str(e->name, sizeof(e->name), s, 1);
	e->ctime = sqlite3_column_int64(s, 2);
	e->uid = (uint32_t)sqlite3_column_int64(s, 3);
}

static void row_version(struct catalog_version *v, sqlite3_stmt *s, int i)
{
	v->artifact_id = sqlite3_column_int64(s, i);
	v->n = sqlite3_column_int64(s, i + 1);
	col_str(v->sha256, sizeof(v->sha256), s, i + 2);
	v->size = (uint64_t)sqlite3_column_int64(s, i + 3);
	v->mtime = sqlite3_column_int64(s, i + 4);
	v->uid = (uint32_t)sqlite3_column_int64(s, i + 5);
	v->insp = sqlite3_column_int64(s, i + 6);
}

/* An ART_COLS row. */
static void row_artifact(struct catalog_artifact *a, sqlite3_stmt *s)
{
	a->id = sqlite3_column_int64(s, 0);
	a->env_id = sqlite3_column_int64(s, 1);
	col_str(a->name, sizeof(a->name), s, 2);
	a->latest.artifact_id = a->id;
	a->latest.n = sqlite3_column_int64(s, 3);
	col_str(a->latest.sha256, sizeof(a->latest.sha256), s, 4);
	a->latest.size = (uint64_t)sqlite3_column_int64(s, 5);
	a->latest.mtime = sqlite3_column_int64(s, 6);
	a->latest.uid = (uint32_t)sqlite3_column_int64(s, 7);
	a->nversions = sqlite3_column_int64(s, 8);
	a->latest.insp = sqlite3_column_int64(s, 9);
}

static void row_table(struct catalog_table *t, sqlite3_stmt *s)
{
	t->id = sqlite3_column_int64(s, 0);
	t->env_id = sqlite3_column_int64(s, 1);
	col_str(t->name, sizeof(t->name), s, 2);
	t->size = (uint64_t)sqlite3_column_int64(s, 3);
	t->mtime = sqlite3_column_int64(s, 4);
	t->uid = (uint32_t)sqlite3_column_int64(s, 5);
}

/*
 * Step `s` expecting at most one row; call `row` on it.  -ENOENT when
 * there is none.  The statement is reset.
 */
static int one(struct sq *q, sqlite3_stmt *s,
	       void (*row)(void *out, sqlite3_stmt *s), void *out,
	       struct cmfs_err *err)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW) {
		row(out, s);
		rc = 0;
	} else if (rc == SQLITE_DONE) {
		rc = -ENOENT;
	} else {
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	}
	done(s);
	return rc;
}

/* Adapters so the row readers fit one()'s callback type. */
static void rd_env(void *o, sqlite3_stmt *s) { row_env(o, s); }
static void rd_art(void *o, sqlite3_stmt *s) { row_artifact(o, s); }
static void rd_ver(void *o, sqlite3_stmt *s) { row_version(o, s, 0); }
static void rd_table(void *o, sqlite3_stmt *s) { row_table(o, s); }

/* The prepared statement `id` into *s; 0, or the error of preparing it. */
static int prep(struct sq *q, int id, sqlite3_stmt **s, struct cmfs_err *err)
{
	*s = st(q, id);
	return *s ? 0 : fail(q, sqlite3_errcode(q->db), err);
}

/* What run() makes of a statement's result. */
enum run_mode {
	RUN_EXEC,   /* rows, if any, are not read */
	RUN_CHANGE, /* as RUN_EXEC; -ENOENT when it changed no row */
	RUN_ONE,    /* the first row to row(out, s); -ENOENT if none */
	RUN_SCALAR  /* the first column of the one row, *(uint64_t *)out */
};

/*
 * Most catalog operations in one call: statement `id` of sql[] with its
 * parameters bound in order by `sig`, a character each ('i' an int64_t,
 * 't' a const char * text, NULL binding NULL), run under the lock as
 * `mode` says.  0 or -errno.
 */
static int run(struct sq *q, int id, enum run_mode mode,
	       void (*row)(void *out, sqlite3_stmt *s), void *out,
	       struct cmfs_err *err, const char *sig, ...)
{
	sqlite3_stmt *s;
	va_list ap;
	int rc, i;

	lock(q);
	if ((rc = prep(q, id, &s, err)))
		goto out;
	va_start(ap, sig);
	for (i = 0; sig[i]; i++) {
		if (sig[i] == 'i') {
			sqlite3_bind_int64(s, i + 1, va_arg(ap, int64_t));
		} else {
			const char *t = va_arg(ap, const char *);

			if (t)
				sqlite3_bind_text(s, i + 1, t, -1,
						  SQLITE_STATIC);
		}
	}
	va_end(ap);
	rc = mode == RUN_ONE	  ? one(q, s, row, out, err)
	     : mode == RUN_SCALAR ? scalar(q, s, out, err)
				  : exec_stmt(q, s, err);
	if (!rc && mode == RUN_CHANGE && sqlite3_changes(q->db) == 0)
		rc = -ENOENT;
out:
	unlock(q);
	return rc;
}

static int sq_env_add(void *impl, const char *name, uint32_t uid, int64_t now,
		      struct catalog_env *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if ((rc = prep(q, S_ENV_ADD, &s, err)))
		goto out;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, now);
	sqlite3_bind_int64(s, 3, uid);
	rc = exec_stmt(q, s, err);
	if (!rc && out) {
		memset(out, 0, sizeof(*out));
		out->id = sqlite3_last_insert_rowid(q->db);
		snprintf(out->name, sizeof(out->name), "%s", name);
		out->ctime = now;
		out->uid = uid;
	}
out:
	unlock(q);
	return rc;
}

static int sq_env_get(void *impl, const char *name, struct catalog_env *out,
		      struct cmfs_err *err)
{
	return run(impl, S_ENV_GET, RUN_ONE, rd_env, out, err, "t", name);
}

static int sq_env_del(void *impl, int64_t env_id, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	uint64_t busy = 0;
	int rc;

	lock(q);
	if ((rc = prep(q, S_ENV_BUSY, &s, err)))
		goto out;
	sqlite3_bind_int64(s, 1, env_id);
	rc = scalar(q, s, &busy, err);
	if (!rc && busy)
		rc = -ENOTEMPTY;
	if (!rc) {
		if ((rc = prep(q, S_ENV_DEL, &s, err)))
			goto out;
		sqlite3_bind_int64(s, 1, env_id);
		rc = exec_stmt(q, s, err);
	}
out:
	unlock(q);
	return rc;
}

/*
 * Walk the rows of `s`, reading each with `row` into `tmp` and passing it
 * to `fn`.  A non-zero return of `fn` stops the walk and is returned.
 */
static int walk(struct sq *q, sqlite3_stmt *s,
		void (*row)(void *out, sqlite3_stmt *s), void *tmp,
		int (*fn)(void *arg, const void *row), void *arg,
		struct cmfs_err *err)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		row(tmp, s);
		if ((rc = fn(arg, tmp)))
			break;
	}
	if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	done(s);
	return rc;
}

/* walk() over the rows of statement `idx` for one id, its only
 * parameter, under the lock. */
static int walk_id(struct sq *q, int idx, int64_t id,
		   void (*row)(void *out, sqlite3_stmt *s), void *tmp,
		   int (*fn)(void *arg, const void *row), void *arg,
		   struct cmfs_err *err)
{
	sqlite3_stmt *s;
	int rc;

	lock(q);
	rc = prep(q, idx, &s, err);
	if (!rc) {
		sqlite3_bind_int64(s, 1, id);
		rc = walk(q, s, row, tmp, fn, arg, err);
	}
	unlock(q);
	return rc;
}

static int sq_env_list(void *impl,
		       int (*fn)(void *arg, const struct catalog_env *e),
		       void *arg, struct cmfs_err *err)
{
	struct sq *q = impl;
	struct catalog_env e;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if ((rc = prep(q, S_ENV_LIST, &s, err)))
		goto out;
	rc = walk(q, s, rd_env, &e, (int (*)(void *, const void *))fn, arg,
		  err);
out:
	unlock(q);
	return rc;
}

/* ---- names (struct names) ---- */

/* A 64-bit hash of (env_id, name): FNV-1a, then mixed (splitmix64). */
static uint64_t name_hash(int64_t env_id, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)env_id;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/* The filter's four bits of a name, by double hashing. */
#define NAME_BITS 4

static void names_set(struct names *f, int64_t env_id, const char *name)
{
	uint64_t h = name_hash(env_id, name), d = (h >> 32) | 1;
	size_t i, b;

	for (i = 0; i < NAME_BITS; i++, h += d) {
		b = (size_t)h & (f->nbits - 1);
		f->bits[b / 64] |= (uint64_t)1 << (b % 64);
	}
	f->n++;
}

static int names_may_have(const struct names *f, int64_t env_id,
			  const char *name)
{
	uint64_t h = name_hash(env_id, name), d = (h >> 32) | 1;
	size_t i, b;

	for (i = 0; i < NAME_BITS; i++, h += d) {
		b = (size_t)h & (f->nbits - 1);
		if (!(f->bits[b / 64] & ((uint64_t)1 << (b % 64))))
			return 0;
	}
	return 1;
}

/*
 * (Re)build the filter from the artifacts table with room for `want`
 * names, 16 bits each (about one look-up in 1,500 of a missing name goes
 * to SQLite).  On failure the filter is off for good: every look-up asks.
 */
static void names_build(struct sq *q, size_t want)
{
	struct names *f = &q->names;
	size_t nbits = (size_t)1 << 17;
	sqlite3_stmt *s = st(q, S_ART_NAMES);
	int rc;

	while (nbits < 16 * want)
		nbits *= 2;
	free(f->bits);
	f->n = 0;
	f->nbits = nbits;
	f->bits = calloc(nbits / 64, sizeof(uint64_t));
	if (!f->bits || !s) {
		f->off = 1;
		return;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		names_set(f, sqlite3_column_int64(s, 0),
			  (const char *)sqlite3_column_text(s, 1));
	done(s);
	if (rc != SQLITE_DONE)
		f->off = 1;
}

/* Name `name` of `env_id` is (or may be) an artifact now. */
static void names_add(struct sq *q, int64_t env_id, const char *name)
{
	struct names *f = &q->names;

	if (f->off || !f->nbits)
		return;
	if (16 * (f->n + 1) > f->nbits)
		names_build(q, 2 * (f->n + 1)); /* the new row is in there */
	else
		names_set(f, env_id, name);
}

/* 0 when `name` of `env_id` is surely no artifact. */
static int names_check(struct sq *q, int64_t env_id, const char *name)
{
	struct names *f = &q->names;

	if (!f->off && !f->nbits)
		names_build(q, 0);
	return f->off || names_may_have(f, env_id, name);
}

static int sq_art_get(void *impl, int64_t env_id, const char *name,
		      struct catalog_artifact *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if (!names_check(q, env_id, name)) {
		rc = -ENOENT;
		goto out;
	}
	if ((rc = prep(q, S_ART_GET, &s, err)))
		goto out;
	sqlite3_bind_int64(s, 1, env_id);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	rc = one(q, s, rd_art, out, err);
out:
	unlock(q);
	return rc;
}

static int sq_art_add(void *impl, int64_t env_id, const char *name,
		      int64_t *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if ((rc = prep(q, S_ART_ADD, &s, err)))
		goto out;
	sqlite3_bind_int64(s, 1, env_id);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	rc = exec_stmt(q, s, err);
	if (!rc) {
		*out = sqlite3_last_insert_rowid(q->db);
		names_add(q, env_id, name);
	}
out:
	unlock(q);
	return rc;
}

/* Run statement `id` with one integer parameter. */
static int exec_id(struct sq *q, int id, int64_t v, struct cmfs_err *err)
{
	return run(q, id, RUN_EXEC, NULL, NULL, err, "i", v);
}

/* Statement `id` with one integer parameter, returning one integer. */
static int scalar_id(struct sq *q, int id, int64_t v, uint64_t *out,
		     struct cmfs_err *err)
{
	return run(q, id, RUN_SCALAR, NULL, out, err, "i", v);
}

static int sq_art_del(void *impl, int64_t art_id, struct cmfs_err *err)
{
	return exec_id(impl, S_ART_DEL, art_id, err);
}

static int adhoc(struct sq *q, const char *text, sqlite3_stmt **s,
		 struct cmfs_err *err);

/* One integer from ad hoc statement `text` bound to (a, b): *out, 0 when
 * there is no row or it is NULL. */
static int adhoc_int(struct sq *q, const char *text, int64_t a, const char *b,
		     int64_t *out, struct cmfs_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc = adhoc(q, text, &s, err);

	*out = 0;
	if (rc)
		return rc;
	sqlite3_bind_int64(s, 1, a);
	if (b)
		sqlite3_bind_text(s, 2, b, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE
		     ? 0
		     : fail(q, sqlite3_extended_errcode(q->db), err);
	sqlite3_finalize(s);
	return rc;
}

/* Ad hoc statement `text` bound to (a, b, c), run for its effect. */
static int adhoc_run(struct sq *q, const char *text, int64_t a, int64_t b,
		     const char *c, struct cmfs_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc = adhoc(q, text, &s, err);

	if (rc)
		return rc;
	sqlite3_bind_int64(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
	if (c)
		sqlite3_bind_text(s, 3, c, -1, SQLITE_STATIC);
	rc = exec_stmt(q, s, err);
	sqlite3_finalize(s);
	return rc;
}

/*
 * Rename, keeping version numbers unique to their name (schema v8): the
 * old name's next number is retired, and when the new name had numbers
 * before (held by another artifact), the artifact's versions move above
 * them, in order, so that no pinned path of either name comes to name
 * other bytes.  An artifact renamed back onto a name it left keeps its
 * numbers: those below the name's next are the ones it had there.
 */
static int sq_art_rename(void *impl, int64_t art_id, const char *name,
			 struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int64_t env_id = 0, taken = 0, low = 0, shift;
	int rc;

	lock(q);
	if ((rc = sq_begin(q, err)))
		goto out;
	rc = adhoc_int(q,
		       "SELECT r.next_n FROM retired r JOIN envs e ON"
		       " e.name = r.env JOIN artifacts a ON a.env_id = e.id"
		       " WHERE a.id = ?1 AND r.name = ?2"
		       " AND r.holder IS NOT a.id",
		       art_id, name, &taken, err);
	if (!rc)
		rc = adhoc_int(q,
			       "SELECT min(n) FROM versions WHERE"
			       " artifact_id = ?1",
			       art_id, NULL, &low, err);
	/* The old name's numbers stay with the old name. */
	if (!rc)
		rc = adhoc_run(q,
			       "INSERT OR REPLACE INTO retired(env, name,"
			       " next_n, holder) SELECT e.name, a.name,"
			       " max(a.next_n, COALESCE((SELECT next_n"
			       " FROM retired r WHERE r.env = e.name AND"
			       " r.name = a.name), 1)), a.id FROM artifacts a"
			       " JOIN envs e ON e.id = a.env_id"
			       " WHERE a.id = ?1",
			       art_id, 0, NULL, err);
	if (rc)
		goto end;
	if ((rc = prep(q, S_ART_RENAME, &s, err)))
		goto end;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, art_id);
	/* The row's environment comes back: the new name joins the filter
	 * (the old one stays in it, as a deleted name does: a look-up of
	 * it asks SQLite, which says no). */
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		env_id = sqlite3_column_int64(s, 0);
	done(s);
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE
		     ? 0
		     : fail(q, sqlite3_extended_errcode(q->db), err);
	if (rc || !env_id)
		goto end;
	names_add(q, env_id, name);
	shift = low && taken > low ? taken - low : 0;
	/* Through negative numbers: the key is (artifact, n). */
	if (shift)
		rc = adhoc_run(q,
			       "UPDATE versions SET n = -(n + ?2)"
			       " WHERE artifact_id = ?1",
			       art_id, shift, NULL, err);
	if (!rc && shift)
		rc = adhoc_run(q,
			       "UPDATE versions SET n = -n WHERE"
			       " artifact_id = ?1 AND n < 0",
			       art_id, 0, NULL, err);
	if (!rc)
		rc = adhoc_run(q,
			       "UPDATE artifacts SET next_n = next_n + ?2"
			       " WHERE id = ?1",
			       art_id, shift, NULL, err);
	if (!rc)
		rc = adhoc_run(q,
			       "UPDATE artifacts SET next_n = max(next_n, ?2)"
			       " WHERE id = ?1",
			       art_id, taken, NULL, err);
	if (!rc)
		rc = adhoc_run(q,
			       "DELETE FROM retired WHERE name = ?3 AND env ="
			       " (SELECT name FROM envs WHERE id = ?1)",
			       env_id, 0, name, err);
end:
	rc = sq_end(q, rc, err);
out:
	unlock(q);
	return rc;
}

static int sq_art_count(void *impl, int64_t env_id, uint64_t *out,
			struct cmfs_err *err)
{
	return scalar_id(impl, S_ART_COUNT, env_id, out, err);
}

static int sq_art_list(void *impl, int64_t env_id,
		       int (*fn)(void *arg, const struct catalog_artifact *a),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_artifact a;

	return walk_id(impl, S_ART_LIST, env_id, rd_art, &a,
		       (int (*)(void *, const void *))fn, arg, err);
}

static int sq_art_by_label(void *impl, int64_t env_id, const char *key,
			   const char *value,
			   int (*fn)(void *arg,
				     const struct catalog_artifact *a),
			   void *arg, struct cmfs_err *err)
{
	struct sq *q = impl;
	struct catalog_artifact a;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if ((rc = prep(q, S_ART_BY_LABEL, &s, err)))
		goto out;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, env_id);
	rc = walk(q, s, rd_art, &a, (int (*)(void *, const void *))fn, arg,
		  err);
out:
	unlock(q);
	return rc;
}

static int sq_ver_add(void *impl, int64_t art_id, const char *sha256,
		      uint64_t size, int64_t mtime, uint32_t uid,
		      struct catalog_version *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	uint64_t n = 0;
	int rc;

	lock(q);
	if ((rc = prep(q, S_VER_NEXT, &s, err)))
		goto out;
	sqlite3_bind_int64(s, 1, art_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		n = (uint64_t)sqlite3_column_int64(s, 0);
	rc = rc == SQLITE_ROW	 ? 0
	     : rc == SQLITE_DONE ? -ENOENT
				 : fail(q, sqlite3_extended_errcode(q->db), err);
	done(s);
	if (!rc)
		rc = exec_id(q, S_VER_BUMP, art_id, err);
	if (rc)
		goto out;
	if ((rc = prep(q, S_VER_ADD, &s, err)))
		goto out;
	sqlite3_bind_int64(s, 1, art_id);
	sqlite3_bind_int64(s, 2, (int64_t)n);
	sqlite3_bind_text(s, 3, sha256, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, (int64_t)size);
	sqlite3_bind_int64(s, 5, mtime);
	sqlite3_bind_int64(s, 6, uid);
	rc = exec_stmt(q, s, err);
	if (!rc && out) {
		out->artifact_id = art_id;
		out->n = (int64_t)n;
		snprintf(out->sha256, sizeof(out->sha256), "%s", sha256);
		out->size = size;
		out->mtime = mtime;
		out->uid = uid;
		out->insp = 0; /* looked up by the blob */
	}
out:
	unlock(q);
	return rc;
}

static int sq_ver_get(void *impl, int64_t art_id, int64_t n,
		      struct catalog_version *out, struct cmfs_err *err)
{
	return run(impl, S_VER_GET, RUN_ONE, rd_ver, out, err, "ii", art_id,
		   n);
}

static int sq_ver_del(void *impl, int64_t art_id, int64_t n,
		      struct cmfs_err *err)
{
	return run(impl, S_VER_DEL, RUN_CHANGE, NULL, NULL, err, "ii", art_id,
		   n);
}

static int sq_ver_list(void *impl, int64_t art_id,
		       int (*fn)(void *arg, const struct catalog_version *v),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_version v;

	return walk_id(impl, S_VER_LIST, art_id, rd_ver, &v,
		       (int (*)(void *, const void *))fn, arg, err);
}

static int sq_blob_refs(void *impl, const char *sha256, uint64_t *out,
			struct cmfs_err *err)
{
	return run(impl, S_BLOB_REFS, RUN_SCALAR, NULL, out, err, "t", sha256);
}

static int sq_blob_total(void *impl, uint64_t *out, struct cmfs_err *err)
{
	return run(impl, S_BLOB_TOTAL, RUN_SCALAR, NULL, out, err, "");
}

/* Statement `id` bound to (art_id, key[, value]). */
static sqlite3_stmt *bind_label(struct sq *q, int id, int64_t art_id,
				const char *key, const char *value)
{
	sqlite3_stmt *s = st(q, id);

	if (!s)
		return NULL;
	sqlite3_bind_int64(s, 1, art_id);
	sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
	if (value)
		sqlite3_bind_text(s, 3, value, -1, SQLITE_STATIC);
	return s;
}

static int sq_label_set(void *impl, int64_t art_id, const char *key,
			const char *value, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	s = bind_label(q, S_LABEL_SET, art_id, key, value);
	rc = s ? exec_stmt(q, s, err) : fail(q, sqlite3_errcode(q->db), err);
	unlock(q);
	return rc;
}

static int sq_label_del(void *impl, int64_t art_id, const char *key,
			struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	s = bind_label(q, S_LABEL_DEL, art_id, key, NULL);
	rc = s ? exec_stmt(q, s, err) : fail(q, sqlite3_errcode(q->db), err);
	if (!rc && sqlite3_changes(q->db) == 0)
		rc = -ENODATA;
	unlock(q);
	return rc;
}

static int sq_label_get(void *impl, int64_t art_id, const char *key,
			char **out, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	s = bind_label(q, S_LABEL_GET, art_id, key, NULL);
	if (!s) {
		rc = fail(q, sqlite3_errcode(q->db), err);
		goto out;
	}
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*out = strdup((const char *)sqlite3_column_text(s, 0));
		rc = *out ? 0 : -ENOMEM;
	} else if (rc == SQLITE_DONE) {
		rc = -ENODATA;
	} else {
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	}
	done(s);
out:
	unlock(q);
	return rc;
}

static int sq_label_list(void *impl, int64_t art_id,
			 int (*fn)(void *arg, const char *key,
				   const char *value),
			 void *arg, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if ((rc = prep(q, S_LABEL_LIST, &s, err)))
		goto out;
	sqlite3_bind_int64(s, 1, art_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if ((rc = fn(arg, (const char *)sqlite3_column_text(s, 0),
			     (const char *)sqlite3_column_text(s, 1))))
			break;
	if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	done(s);
out:
	unlock(q);
	return rc;
}

/* Bind factory f's kind, identifier (or null) and class to parameters
 * at, at + 1, at + 2. */
static void bind_factory(sqlite3_stmt *s, int at, const struct jar_factory *f)
{
	sqlite3_bind_text(s, at, jar_kind_name(f->kind), -1, SQLITE_STATIC);
	if (f->identifier)
		sqlite3_bind_text(s, at + 1, f->identifier, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, at + 1);
	sqlite3_bind_text(s, at + 2, f->cls, -1, SQLITE_STATIC);
}

/* Where put_option writes: the catalog, the inspection's row, the error. */
struct opt_dst {
	struct sq *q;
	int64_t insp;
	struct cmfs_err *err;
};

/* One row of factory_options; o NULL for a 'prefix' or 'unknown' row. */
static int put_option(void *arg, size_t factory, const char *role,
		      const char *key, const struct options_option *o)
{
	struct opt_dst *d = arg;
	sqlite3_stmt *s;
	int rc = prep(d->q, S_OPT_PUT, &s, d->err);

	if (rc)
		return rc;
	sqlite3_bind_int64(s, 1, d->insp);
	sqlite3_bind_int64(s, 2, (int64_t)factory);
	sqlite3_bind_text(s, 3, role, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, key, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 6, 0);
	sqlite3_bind_int(s, 11, 0);
	if (o) {
		sqlite3_bind_text(s, 5, o->type, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 6, o->list);
		if (o->values)
			sqlite3_bind_text(s, 7, o->values, -1, SQLITE_STATIC);
		if (o->defval)
			sqlite3_bind_text(s, 8, o->defval, -1, SQLITE_STATIC);
		if (o->deprecated)
			sqlite3_bind_text(s, 9, o->deprecated, -1,
					  SQLITE_STATIC);
		if (o->fallback)
			sqlite3_bind_text(s, 10, o->fallback, -1,
					  SQLITE_STATIC);
		sqlite3_bind_int(s, 11, o->forward);
	}
	return exec_stmt(d->q, s, d->err);
}

/*
 * The options of r's factories as rows of inspection `insp` (the rows of
 * an inspection put again replaced: `fresh` 0), and the mark that they
 * were read.
 */
static int put_options(struct sq *q, int64_t insp, const struct jar_report *r,
		       int fresh, struct cmfs_err *err)
{
	struct opt_dst d = {q, insp, err};
	sqlite3_stmt *s;
	int rc = 0;

	if (!fresh && !(rc = prep(q, S_OPT_DEL, &s, err))) {
		sqlite3_bind_int64(s, 1, insp);
		rc = exec_stmt(q, s, err);
	}
	if (!rc)
		rc = catalog_rows_options_each(r, put_option, &d);
	if (!rc && !(rc = prep(q, S_OPT_MARK, &s, err))) {
		sqlite3_bind_int64(s, 1, insp);
		rc = exec_stmt(q, s, err);
	}
	return rc;
}

static int sq_insp_put(void *impl, const char *sha256,
		       const struct jar_report *r, struct cmfs_err *err)
{
	struct sq *q = impl;
	struct buf ext = BUF_INIT((size_t)1 << 30);
	sqlite3_stmt *s;
	uint64_t id = 0;
	size_t i;
	int rc = 0, step, xerr, fresh = 0;

	for (i = 0; !rc && i < r->nexternal; i++)
		rc = buf_printf(&ext, "%s\n", r->external[i]);
	if (rc)
		return cmfs_err_set(err, rc, "out of memory");
	lock(q);
	rc = sq_begin(q, err);
	if (rc)
		goto out;
	/*
	 * A blob not inspected before: a plain INSERT (an upload's usual
	 * case; the upsert with RETURNING was a tenth of an upload's
	 * commit).  A row already there: the upsert, its factories dropped.
	 */
	rc = prep(q, S_INSP_ADD, &s, err);
	if (!rc) {
		sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
		if (r->error)
			sqlite3_bind_text(s, 2, r->error, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, buf_str(&ext), -1, SQLITE_STATIC);
		step = sqlite3_step(s);
		xerr = step == SQLITE_DONE ? 0
					   : sqlite3_extended_errcode(q->db);
		done(s);
		if (step == SQLITE_DONE) {
			id = (uint64_t)sqlite3_last_insert_rowid(q->db);
			fresh = 1;
		} else if (xerr != SQLITE_CONSTRAINT_UNIQUE) {
			rc = fail(q, xerr, err);
		} else if (!(rc = prep(q, S_INSP_PUT, &s, err))) {
			sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
			if (r->error)
				sqlite3_bind_text(s, 2, r->error, -1,
						  SQLITE_STATIC);
			sqlite3_bind_text(s, 3, buf_str(&ext), -1,
					  SQLITE_STATIC);
			rc = scalar(q, s, &id, err);
			if (!rc)
				rc = exec_id(q, S_FACT_DEL, (int64_t)id, err);
		}
	}
	/* Versions of this blob added before it was inspected. */
	if (!rc && !(rc = prep(q, S_INSP_LINK, &s, err))) {
		sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (int64_t)id);
		rc = exec_stmt(q, s, err);
	}
	for (i = 0; !rc && i < r->nfactories; i++) {
		if ((rc = prep(q, S_FACT_PUT, &s, err)))
			break;
		sqlite3_bind_int64(s, 1, (int64_t)id);
		bind_factory(s, 2, &r->factories[i]);
		sqlite3_bind_int64(s, 5, (int64_t)i);
		rc = exec_stmt(q, s, err);
	}
	if (!rc)
		rc = put_options(q, (int64_t)id, r, fresh, err);
	rc = sq_end(q, rc, err);
out:
	unlock(q);
	buf_release(&ext);
	return rc;
}

static const char *col(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

/*
 * The options rows of inspection `insp` into r's factories; `read` 0 (an
 * inspection older than the rows) makes every set unknown.
 */
static int read_options(struct sq *q, int64_t insp, int read,
			struct jar_report *r, struct cmfs_err *err)
{
	sqlite3_stmt *s;
	int rc, step;

	if (!read) {
		catalog_rows_options_unknown(r);
		return 0;
	}
	rc = prep(q, S_OPT_GET, &s, err);
	if (rc)
		return rc;
	sqlite3_bind_int64(s, 1, insp);
	while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW) {
		struct options_option v;

		memset(&v, 0, sizeof(v));
		v.type = (char *)col(s, 3);
		v.list = sqlite3_column_int(s, 4);
		v.values = (char *)col(s, 5);
		v.defval = (char *)col(s, 6);
		v.deprecated = (char *)col(s, 7);
		v.fallback = (char *)col(s, 8);
		v.forward = sqlite3_column_int(s, 9);
		rc = catalog_rows_option_read(r, sqlite3_column_int64(s, 0),
					      col(s, 1), col(s, 2), &v);
	}
	if (!rc && step != SQLITE_DONE)
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	else if (rc)
		cmfs_err_set(err, rc, "out of memory");
	done(s);
	/* Rows come by role and key; a set is searched sorted by key. */
	if (!rc)
		catalog_rows_options_sort(r);
	return rc;
}

/* Column i of s when it holds text, else NULL (NULL, or edited into a
 * number or bytes). */
static const char *text_col(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_TEXT ? col(s, i) : NULL;
}

/*
 * Each row of prepared statement s handed to add(arg, its first three
 * text columns), in order; an error of add stops the walk.  -EINVAL (a
 * damaged row, err not set: the caller names it), -ENOMEM, or SQLite's
 * error.  Resets s.
 */
static int each_row(struct sq *q, sqlite3_stmt *s,
		    int (*add)(void *arg, const char *a, const char *b,
			       const char *c),
		    void *arg, struct cmfs_err *err)
{
	int rc = 0, step = SQLITE_DONE;

	while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW)
		rc = add(arg, text_col(s, 0), text_col(s, 1), text_col(s, 2));
	if (!rc && step != SQLITE_DONE)
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	else if (rc == -ENOMEM)
		rc = cmfs_err_set(err, rc, "out of memory");
	done(s);
	return rc;
}

static int add_factory(void *r, const char *kind, const char *identifier,
		       const char *cls)
{
	return catalog_rows_factory_add(r, kind, identifier, cls);
}

static int add_option(void *d, const char *key, const char *value,
		      const char *unused)
{
	(void)unused;
	return catalog_rows_option_add(d, key, value);
}

/* The factories rows of inspection `insp` (of blob sha256) into r. */
static int read_factories(struct sq *q, int64_t insp, const char *sha256,
			  struct jar_report *r, struct cmfs_err *err)
{
	sqlite3_stmt *s;
	int rc = prep(q, S_FACT_GET, &s, err);

	if (rc)
		return rc;
	sqlite3_bind_int64(s, 1, insp);
	rc = each_row(q, s, add_factory, r, err);
	return rc != -EINVAL ? rc
			     : cmfs_err_set(err, -EIO,
					    "catalog: the factories recorded "
					    "for blob %.64s are damaged (cmfs "
					    "fsck --repair recomputes them)",
					    sha256);
}

/* The row of S_INSP_GET or S_INSP_GET_ID into r; -ENOENT if none. */
static int read_insp(struct sq *q, sqlite3_stmt *s, struct jar_report *r,
		     struct cmfs_err *err)
{
	int rc = sqlite3_step(s), read = 0, found = 0;
	int64_t insp = 0;
	char sha[65];

	if (rc == SQLITE_ROW) {
		const char *e = (const char *)sqlite3_column_text(s, 0);

		rc = 0;
		if (e && !(r->error = strdup(e)))
			rc = -ENOMEM;
		if (!rc)
			rc = catalog_rows_external(
				r, (const char *)sqlite3_column_text(s, 1));
		if (rc)
			cmfs_err_set(err, rc, "out of memory");
		snprintf(sha, sizeof(sha), "%s", col(s, 2) ? col(s, 2) : "");
		insp = sqlite3_column_int64(s, 3);
		read = sqlite3_column_int(s, 4);
		found = 1;
	} else if (rc == SQLITE_DONE) {
		rc = -ENOENT;
	} else {
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	}
	done(s);
	if (!rc && found)
		rc = read_factories(q, insp, sha, r, err);
	if (!rc && found)
		rc = read_options(q, insp, read, r, err);
	return rc;
}

/*
 * By the row a version names (id), when it still holds that blob's
 * inspection; else by the blob.
 */
static int sq_insp_get(void *impl, const char *sha256, int64_t id,
		       struct jar_report **out, struct cmfs_err *err)
{
	struct sq *q = impl;
	struct jar_report *r;
	sqlite3_stmt *s;
	int rc = -ENOENT;

	r = calloc(1, sizeof(*r));
	if (!r)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	lock(q);
	if (id > 0 && !(rc = prep(q, S_INSP_GET_ID, &s, err))) {
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_text(s, 2, sha256, -1, SQLITE_STATIC);
		rc = read_insp(q, s, r, err);
	}
	if (rc == -ENOENT && !(rc = prep(q, S_INSP_GET, &s, err))) {
		sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
		rc = read_insp(q, s, r, err);
	}
	unlock(q);
	if (rc) {
		jar_report_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int sq_table_get(void *impl, int64_t env_id, const char *name,
			struct catalog_table *out, struct cmfs_err *err)
{
	return run(impl, S_TABLE_GET, RUN_ONE, rd_table, out, err, "it", env_id,
		   name);
}

static int sq_table_def(void *impl, int64_t id, struct catalog_table_def *out,
			struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if ((rc = prep(q, S_TABLE_DEF, &s, err)))
		goto out;
	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		rc = catalog_rows_def(out, col(s, 0), col(s, 1))
			     ? cmfs_err_set(err, -ENOMEM, "out of memory")
			     : 0;
	else
		rc = rc == SQLITE_DONE
			     ? -ENOENT
			     : fail(q, sqlite3_extended_errcode(q->db), err);
	done(s);
	if (!rc && !(rc = prep(q, S_TABLE_OPT_GET, &s, err))) {
		sqlite3_bind_int64(s, 1, id);
		rc = each_row(q, s, add_option, out, err);
		if (rc == -EINVAL)
			rc = cmfs_err_set(err, -EIO,
					  "catalog: the options recorded for "
					  "table %lld are damaged",
					  (long long)id);
	}
	if (rc && rc != -ENOENT)
		catalog_table_def_release(out);
out:
	unlock(q);
	return rc;
}

static int sq_table_put(void *impl, int64_t env_id, const char *name,
			const struct catalog_table_def *def, int64_t mtime,
			uint32_t uid, struct catalog_table *out,
			struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int64_t id = 0;
	size_t i, len = strlen(def->ddl);
	int rc;

	lock(q);
	rc = sq_begin(q, err);
	if (rc)
		goto out;
	rc = prep(q, S_TABLE_PUT, &s, err);
	if (!rc) {
		sqlite3_bind_int64(s, 1, env_id);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, def->ddl, (int)len, SQLITE_STATIC);
		if (def->like_ddl)
			sqlite3_bind_text(s, 4, def->like_ddl, -1,
					  SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, (int64_t)len);
		sqlite3_bind_int64(s, 6, mtime);
		sqlite3_bind_int64(s, 7, uid);
		if (sqlite3_step(s) == SQLITE_ROW)
			id = sqlite3_column_int64(s, 0);
		else
			rc = fail(q, sqlite3_extended_errcode(q->db), err);
		done(s);
	}
	if (!rc)
		rc = exec_id(q, S_TABLE_OPTS_DEL, id, err);
	for (i = 0; !rc && i < def->nopts; i++) {
		if ((rc = prep(q, S_TABLE_OPT_ADD, &s, err)))
			break;
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_text(s, 2, def->keys[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, def->values[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, (int64_t)i);
		rc = exec_stmt(q, s, err);
	}
	rc = sq_end(q, rc, err);
	if (!rc && out) {
		out->id = id;
		out->env_id = env_id;
		snprintf(out->name, sizeof(out->name), "%s", name);
		out->size = len;
		out->mtime = mtime;
		out->uid = uid;
	}
out:
	unlock(q);
	return rc;
}

static int sq_table_refusal_set(void *impl, int64_t id, const char *text,
				struct cmfs_err *err)
{
	return run(impl, S_TABLE_REFUSAL_SET, RUN_EXEC, NULL, NULL, err, "it",
		   id, text);
}

static int sq_table_refusal_get(void *impl, int64_t id, struct buf *out,
				struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if ((rc = prep(q, S_TABLE_REFUSAL_GET, &s, err)))
		goto out;
	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		rc = sqlite3_column_type(s, 0) == SQLITE_NULL
			     ? 0
			     : buf_adds(out,
					(const char *)sqlite3_column_text(s, 0));
	else
		rc = rc == SQLITE_DONE
			     ? -ENOENT
			     : fail(q, sqlite3_extended_errcode(q->db), err);
	done(s);
out:
	unlock(q);
	return rc;
}

static int sq_table_del(void *impl, int64_t id, struct cmfs_err *err)
{
	return exec_id(impl, S_TABLE_DEL, id, err);
}

static int sq_table_count(void *impl, int64_t env_id, uint64_t *out,
			  struct cmfs_err *err)
{
	return scalar_id(impl, S_TABLE_COUNT, env_id, out, err);
}

static int sq_table_list(void *impl, int64_t env_id,
			 int (*fn)(void *arg, const struct catalog_table *t),
			 void *arg, struct cmfs_err *err)
{
	struct catalog_table t;

	return walk_id(impl, S_TABLE_LIST, env_id, rd_table, &t,
		       (int (*)(void *, const void *))fn, arg, err);
}

static int sq_event_add(void *impl, size_t n, const char *const *envs,
			const char *const *lines, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int own = 0, rc;
	size_t i;

	lock(q);
	if ((rc = prep(q, S_EVENT_ADD, &s, err)))
		goto out;
	/*
	 * Lines on their own record reads or refusals: nothing changed, so
	 * they need not wait for a disk flush.  They become durable with the
	 * next change's commit, which syncs the whole WAL.  Lines in a
	 * transaction commit, durably, with its change.
	 */
	if (!q->depth) {
		if (q->full)
			exec_stmt(q, st(q, S_SYNC_NORMAL), NULL);
		own = n > 1 && !(rc = exec_stmt(q, st(q, S_BEGIN), err));
	}
	for (i = 0; !rc && i < n; i++) {
		size_t len = strlen(lines[i]);

		sqlite3_bind_text(s, 1, envs[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (int64_t)len);
		sqlite3_bind_blob(s, 3, lines[i], (int)len, SQLITE_STATIC);
		rc = exec_stmt(q, s, err);
	}
	if (own) {
		if (!rc)
			rc = exec_stmt(q, st(q, S_COMMIT), err);
		if (rc)
			exec_stmt(q, st(q, S_ROLLBACK), NULL);
	}
	if (!q->depth && q->full)
		exec_stmt(q, st(q, S_SYNC_FULL), NULL);
out:
	unlock(q);
	return rc;
}

static int sq_event_size(void *impl, const char *env, uint64_t *out,
			 struct cmfs_err *err)
{
	return run(impl, S_EVENT_SIZE, RUN_SCALAR, NULL, out, err, "t", env);
}

static int sq_event_read(void *impl, const char *env, uint64_t off,
			 size_t size, struct buf *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	uint64_t base;
	int rc;

	lock(q);
	if ((rc = prep(q, S_EVENT_BASE, &s, err)))
		goto out;
	sqlite3_bind_text(s, 1, env, -1, SQLITE_STATIC);
	if ((rc = scalar(q, s, &base, err)))
		goto out;
	off += base;
	if ((rc = prep(q, S_EVENT_READ, &s, err)))
		goto out;
	sqlite3_bind_text(s, 1, env, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (int64_t)off);
	while (size && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		uint64_t at = (uint64_t)sqlite3_column_int64(s, 0);
		const char *line = sqlite3_column_blob(s, 1);
		size_t len = (size_t)sqlite3_column_bytes(s, 1), skip, take;

		if (at + len <= off)
			continue;
		skip = off > at ? (size_t)(off - at) : 0;
		take = len - skip < size ? len - skip : size;
		if ((rc = buf_add(out, line + skip, take)))
			break;
		size -= take;
		off += take;
	}
	if (!size || rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	done(s);
out:
	unlock(q);
	return rc;
}

static int sq_event_envs(void *impl, int (*fn)(void *arg, const char *env),
			 void *arg, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if ((rc = prep(q, S_EVENT_ENVS, &s, err)))
		goto out;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *env = (const char *)sqlite3_column_text(s, 0);
		char copy[256];

		snprintf(copy, sizeof(copy), "%s", env ? env : "");
		if ((rc = fn(arg, copy)))
			break;
	}
	if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	done(s);
out:
	unlock(q);
	return rc;
}

static int sq_event_trim(void *impl, const char *env, uint64_t max_rows,
			 const char *before, uint64_t *removed,
			 struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	uint64_t n;
	int rc = 0;

	lock(q);
	*removed = 0;
	if (before) {
		if ((rc = prep(q, S_EVENT_OLD, &s, err)))
			goto out;
		sqlite3_bind_text(s, 1, env, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, before, -1, SQLITE_STATIC);
		if ((rc = exec_stmt(q, s, err)))
			goto out;
		*removed += (uint64_t)sqlite3_changes(q->db);
	}
	if (!max_rows)
		goto out;
	if ((rc = prep(q, S_EVENT_COUNT, &s, err)))
		goto out;
	sqlite3_bind_text(s, 1, env, -1, SQLITE_STATIC);
	if ((rc = scalar(q, s, &n, err)) || n <= max_rows)
		goto out;
	if ((rc = prep(q, S_EVENT_CUT, &s, err)))
		goto out;
	sqlite3_bind_text(s, 1, env, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (int64_t)(n - max_rows));
	if ((rc = exec_stmt(q, s, err)))
		goto out;
	*removed += (uint64_t)sqlite3_changes(q->db);
out:
	unlock(q);
	return rc;
}

static int sq_env_recount(void *impl, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc = 0;

	lock(q);
	if (sqlite3_exec(q->db, RECOUNT, NULL, NULL, NULL))
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	unlock(q);
	return rc;
}

/*
 * Without full sync, commits leave checkpoints (copying the log's pages
 * into the file) to sq_checkpoint, which the syncing thread calls: SQLite
 * would otherwise run one inside the commit that takes the log past 1,000
 * pages, every 70 or so uploads, with two fsyncs and up to 1,000 page
 * writes that the upload's close() waited for.
 */
static int sq_set_sync(void *impl, int full, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc;

	lock(q);
	rc = exec_stmt(q, st(q, full ? S_SYNC_FULL : S_SYNC_NORMAL), err);
	if (!rc && sqlite3_wal_autocheckpoint(q->db, full ? 1000 : 0))
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	if (!rc)
		q->full = full;
	unlock(q);
	return rc;
}

/* The checkpointing connection: the same file, syncs as a checkpoint
 * needs them (the log before, the file after), never waiting for a lock. */
static void open_ckpt(struct sq *q)
{
	const char *db = sqlite3_db_filename(q->db, "main");

	if (!db || !*db ||
	    sqlite3_open_v2(db, &q->ckpt,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) ||
	    sqlite3_exec(q->ckpt,
			 "PRAGMA synchronous = NORMAL;"
			 "PRAGMA wal_autocheckpoint = 0;",
			 NULL, NULL, NULL)) {
		sqlite3_close(q->ckpt);
		q->ckpt = NULL;
		q->ckpt_off = 1;
	}
}

/*
 * A checkpoint: the log's pages copied into the file, in two passes.
 * The first, from a connection of its own and without the lock, does the
 * bulk beside commits: its two syncs and its copying took ~25 ms here,
 * every 250 ms of a stream of uploads, and every statement waited for
 * them.  It cannot finish the job: commits go on appending to the log,
 * and the log starts over only once all of it is in the file (run like
 * this alone, checkpoints never caught up with a stream of uploads and
 * the log grew without end: 725 MB in 10,000).  The second pass holds the
 * connection's lock, so no commit appends meanwhile, and copies what came
 * during the first: the next commit starts the log over.  Only the sync
 * thread calls this (sq_sync() counts on it).
 */
static int sq_checkpoint(void *impl, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc;

	if (!q->ckpt && !q->ckpt_off)
		open_ckpt(q);
	/* Busy (another process checkpoints) or failed: the second pass
	 * does it all. */
	if (q->ckpt)
		sqlite3_wal_checkpoint_v2(
			q->ckpt, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	lock(q);
	rc = sqlite3_wal_checkpoint_v2(q->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
				       NULL, NULL);
	rc = rc ? fail(q, rc, err) : 0;
	unlock(q);
	return rc;
}

/* xSync of SQLite's own handle of a file of the catalog (`op`: the
 * database's or its log's pointer), if it is open: 0 or an SQLite code. */
static int sync_file(struct sq *q, int op)
{
	sqlite3_file *f = NULL;
	int rc = sqlite3_file_control(q->db, "main", op, &f);

	if (rc || !f || !f->pMethods)
		return rc == SQLITE_NOTFOUND ? SQLITE_OK : rc;
	return f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
}

/* Descriptors of our own for the log and the file, kept open (a close
 * would drop the locks SQLite holds on them: POSIX locks go with any
 * close of the file in the process). */
static void open_sync_fds(struct sq *q)
{
	const char *db = sqlite3_db_filename(q->db, "main");
	char wal[4096];

	if (!db || !*db ||
	    (size_t)snprintf(wal, sizeof(wal), "%s-wal", db) >= sizeof(wal))
		return;
	q->sync_fd[0] = open(wal, O_RDONLY | O_CLOEXEC);
	q->sync_fd[1] = open(db, O_RDONLY | O_CLOEXEC);
}

/*
 * The log first (commits are in it), then the file (a checkpoint may
 * have written it).  The first time through SQLite's own handles, under
 * the connection's lock: that sync also syncs the directory of a file new
 * since its last.  After it, with descriptors of our own and without the
 * lock: the two fdatasyncs take tens of milliseconds here, every request
 * that needs the catalog waited for them (a quarter of the time of 10,000
 * small uploads with their labels), and nothing the lock guards is
 * touched.  Without it a commit can append to the log meanwhile (its sync
 * may or may not take those in: they came after this sync began), but no
 * checkpoint can run (this thread runs them, after the sync), so no commit
 * made before it moves out of the log unsynced.
 */
static int sq_sync(void *impl, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc;

	if (q->sync_fd[0] >= 0 && q->sync_fd[1] >= 0) {
		if (fdatasync(q->sync_fd[0]) || fdatasync(q->sync_fd[1]))
			return cmfs_err_set(err, -errno, "catalog: sync: %s",
					    strerror(errno));
		return 0;
	}
	lock(q);
	rc = sync_file(q, SQLITE_FCNTL_JOURNAL_POINTER);
	if (!rc)
		rc = sync_file(q, SQLITE_FCNTL_FILE_POINTER);
	rc = rc ? fail(q, rc, err) : 0;
	if (!rc && q->sync_fd[0] < 0 && q->sync_fd[1] < 0)
		open_sync_fds(q);
	unlock(q);
	return rc;
}

/* Run statement `id` with one text parameter, a sha256, locked; *changes
 * gets the rows it changed (may be NULL). */
static int exec_sha(struct sq *q, int id, const char *sha256, int *changes,
		    struct cmfs_err *err)
{
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if (!(rc = prep(q, id, &s, err))) {
		sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
		rc = exec_stmt(q, s, err);
		if (!rc && changes)
			*changes = sqlite3_changes(q->db);
	}
	unlock(q);
	return rc;
}

static int sq_unsynced_add(void *impl, const char *sha256, struct cmfs_err *err)
{
	return exec_sha(impl, S_UNSYNCED_ADD, sha256, NULL, err);
}

static int sq_unsynced_mark(void *impl, int64_t *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	uint64_t v = 0;
	int rc;

	lock(q);
	if (!(rc = prep(q, S_UNSYNCED_MARK, &s, err)))
		rc = scalar(q, s, &v, err);
	*out = (int64_t)v;
	unlock(q);
	return rc;
}

static int sq_unsynced_clear(void *impl, int64_t upto, struct cmfs_err *err)
{
	return run(impl, S_UNSYNCED_CLEAR, RUN_EXEC, NULL, NULL, err, "i", upto);
}

/* A row of text columns, for walk_text(). */
struct text_row {
	int ncol;
	const char *v[4];
	int (*fn)(void *arg, const char *const *row);
	void *arg;
};

static void rd_text(void *out, sqlite3_stmt *s)
{
	struct text_row *t = out;
	int i;

	for (i = 0; i < t->ncol; i++)
		t->v[i] = (const char *)sqlite3_column_text(s, i);
}

static int call_text(void *arg, const void *row)
{
	const struct text_row *t = row;

	(void)arg;
	return t->fn(t->arg, t->v);
}

/* Call fn(arg, row) for each row of `s`, its text columns in row[]. */
static int walk_text(struct sq *q, sqlite3_stmt *s, int ncol,
		     int (*fn)(void *arg, const char *const *row), void *arg,
		     struct cmfs_err *err)
{
	struct text_row t = { ncol, { NULL }, fn, arg };

	return walk(q, s, rd_text, &t, call_text, NULL, err);
}

/* walk_text() over statement `id`, which takes no parameter, locked. */
static int list_text(struct sq *q, int id, int ncol,
		     int (*fn)(void *arg, const char *const *row), void *arg,
		     struct cmfs_err *err)
{
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if (!(rc = prep(q, id, &s, err)))
		rc = walk_text(q, s, ncol, fn, arg, err);
	unlock(q);
	return rc;
}

static int sq_unsynced_list(void *impl,
			    int (*fn)(void *arg, const char *const *row),
			    void *arg, struct cmfs_err *err)
{
	return list_text(impl, S_UNSYNCED_LIST, 1, fn, arg, err);
}

static int sq_loose_add(void *impl, const char *sha256, struct cmfs_err *err)
{
	return exec_sha(impl, S_LOOSE_ADD, sha256, NULL, err);
}

static int sq_loose_del(void *impl, const char *sha256, struct cmfs_err *err)
{
	return exec_sha(impl, S_LOOSE_DEL, sha256, NULL, err);
}

static int sq_loose_list(void *impl,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	return list_text(impl, S_LOOSE_LIST, 1, fn, arg, err);
}

static int sq_insp_stale(void *impl,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	return list_text(impl, S_INSP_STALE, 2, fn, arg, err);
}

static int sq_inline_put(void *impl, const char *sha256, const void *data,
			 size_t len, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if (!(rc = prep(q, S_INLINE_PUT, &s, err))) {
		sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
		sqlite3_bind_blob64(s, 2, len ? data : "", len, SQLITE_STATIC);
		rc = exec_stmt(q, s, err);
	}
	unlock(q);
	return rc;
}

static int sq_inline_get(void *impl, const char *sha256, void **out,
			 size_t *len, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*len = 0;
	lock(q);
	if ((rc = prep(q, S_INLINE_GET, &s, err)))
		goto out;
	sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const void *b = sqlite3_column_blob(s, 0);
		size_t n = (size_t)sqlite3_column_bytes(s, 0);

		/* One byte more: an empty blob is not a NULL. */
		if ((*out = malloc(n + 1))) {
			if (n)
				memcpy(*out, b, n);
			*len = n;
			rc = 0;
		} else {
			rc = cmfs_err_set(err, -ENOMEM, "out of memory");
		}
	} else if (rc == SQLITE_DONE) {
		rc = -ENOENT;
	} else {
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	}
	done(s);
out:
	unlock(q);
	return rc;
}

static int sq_inline_del(void *impl, const char *sha256, struct cmfs_err *err)
{
	int n = 0, rc = exec_sha(impl, S_INLINE_DEL, sha256, &n, err);

	return !rc && !n ? -ENOENT : rc;
}

static int sq_inline_list(void *impl,
			  int (*fn)(void *arg, const char *const *row),
			  void *arg, struct cmfs_err *err)
{
	return list_text(impl, S_INLINE_LIST, 2, fn, arg, err);
}

static int sq_ver_by_sha(void *impl, const char *sha256,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	if (!(rc = prep(q, S_VER_BY_SHA, &s, err))) {
		sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
		rc = walk_text(q, s, 3, fn, arg, err);
	}
	unlock(q);
	return rc;
}

/*
 * The functions below serve the tools beside a mount (cmfs fsck, export,
 * import).  Their statements are prepared when called, not kept: they run
 * a few times per command, never on a mount's hot path.
 */

/* Prepare `text` into *s; 0, or the error of preparing it. */
static int adhoc(struct sq *q, const char *text, sqlite3_stmt **s,
		 struct cmfs_err *err)
{
	if (sqlite3_prepare_v2(q->db, text, -1, s, NULL)) {
		*s = NULL;
		return fail(q, sqlite3_extended_errcode(q->db), err);
	}
	return 0;
}

/* The inspection row a version's blob has (NULL: none). */
#define INSP_OF_VERSION                                                       \
	"(SELECT id FROM inspections i WHERE i.sha256 = versions.sha256)"

static int sq_insp_links(void *impl, int relink, uint64_t *out,
			 struct cmfs_err *err)
{
	/* A blob with no inspection is fsck's FSCK_INSPECTION, and putting
	 * one back links its versions: not counted twice. */
	static const char count[] = "SELECT count(*) FROM versions WHERE"
				    " insp IS NOT " INSP_OF_VERSION
				    " AND " INSP_OF_VERSION " IS NOT NULL";
	static const char fix[] = "UPDATE versions SET insp = "
				  INSP_OF_VERSION " WHERE insp IS NOT "
				  INSP_OF_VERSION;
	struct sq *q = impl;
	sqlite3_stmt *s;
	int rc;

	lock(q);
	rc = adhoc(q, count, &s, err);
	if (!rc) {
		rc = scalar(q, s, out, err);
		sqlite3_finalize(s);
	}
	if (!rc && relink && *out && sqlite3_exec(q->db, fix, NULL, NULL, NULL))
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	unlock(q);
	return rc;
}

/*
 * Open an existing catalog: no file is created, and a read-only one is
 * neither migrated nor written (SQLite may still create the -shm file of
 * a WAL database, which is not a change to the catalog).
 */
static int sq_open_existing(void **impl, const char *uri, int rdonly,
			    struct cmfs_err *err)
{
	static const char *const pragmas_rw =
		"PRAGMA journal_mode = WAL;"
		"PRAGMA synchronous = FULL;"
		"PRAGMA foreign_keys = ON;";
	static const char *const pragmas_ro =
		"PRAGMA foreign_keys = ON;"
		"PRAGMA query_only = ON;";
	pthread_mutexattr_t a;
	sqlite3_stmt *s = NULL;
	struct sq *q;
	int rc, version = 0;

	q = calloc(1, sizeof(*q));
	if (!q)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	q->full = 1;
	q->sync_fd[0] = q->sync_fd[1] = -1;
	/* Not the store's writer: a mount may add artifacts beside it. */
	q->names.off = 1;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&q->lock, &a);
	pthread_mutexattr_destroy(&a);
	rc = sqlite3_open_v2(
		uri, &q->db,
		(rdonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
			SQLITE_OPEN_NOMUTEX,
		NULL);
	if (rc) {
		rc = cmfs_err_set(err, rc == SQLITE_CANTOPEN ? -ENOENT : -EIO,
				  "catalog %s: %s", uri,
				  rc == SQLITE_CANTOPEN ? "cannot open it"
				  : q->db ? sqlite3_errmsg(q->db)
					  : "cannot open");
		goto bad;
	}
	sqlite3_busy_timeout(q->db, 10000);
	sqlite3_extended_result_codes(q->db, 1);
	if ((rc = adhoc(q, "PRAGMA user_version", &s, err)))
		goto bad;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		version = sqlite3_column_int(s, 0);
	else
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	sqlite3_finalize(s);
	if (rc < 0)
		goto bad;
	if (version == 0 || version > SCHEMA_VERSION ||
	    (rdonly && version < SCHEMA_VERSION)) {
		rc = cmfs_err_set(err, -EPROTO,
				  version == 0
					  ? "catalog %s: no cmfs schema (an "
					    "empty or foreign database)"
				  : version > SCHEMA_VERSION
					  ? "catalog %s: schema %d is newer "
					    "than this cmfs"
					  : "catalog %s: schema %d is older "
					    "than this cmfs; mount it once",
				  uri, version);
		goto bad;
	}
	if (sqlite3_exec(q->db, rdonly ? pragmas_ro : pragmas_rw, NULL, NULL,
			 NULL)) {
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
		goto bad;
	}
	if (!rdonly && (rc = migrate(q, err)))
		goto bad;
	*impl = q;
	return 0;
bad:
	sq_close(q);
	return rc;
}

/* A deferred BEGIN: the snapshot starts at the first read. */
static int sq_begin_read(void *impl, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc = 0;

	lock(q);
	if (q->depth++ == 0 && sqlite3_exec(q->db, "BEGIN", NULL, NULL, NULL))
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	if (rc) {
		q->depth--;
		unlock(q);
	}
	return rc;
}

static int sq_ver_put(void *impl, const struct catalog_version *v,
		      struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s = NULL;
	int rc;

	lock(q);
	if ((rc = sq_begin(q, err)))
		goto out;
	rc = adhoc(q,
		   "INSERT INTO versions(artifact_id, n, sha256, size, mtime,"
		   " uid, insp) VALUES(?1, ?2, ?3, ?4, ?5, ?6,"
		   " (SELECT id FROM inspections WHERE sha256 = ?3))",
		   &s, err);
	if (!rc) {
		sqlite3_bind_int64(s, 1, v->artifact_id);
		sqlite3_bind_int64(s, 2, v->n);
		sqlite3_bind_text(s, 3, v->sha256, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, (int64_t)v->size);
		sqlite3_bind_int64(s, 5, v->mtime);
		sqlite3_bind_int64(s, 6, v->uid);
		rc = exec_stmt(q, s, err);
		sqlite3_finalize(s);
	}
	if (!rc)
		rc = adhoc(q,
			   "UPDATE artifacts SET next_n = max(next_n, ?2 + 1)"
			   " WHERE id = ?1",
			   &s, err);
	if (!rc) {
		sqlite3_bind_int64(s, 1, v->artifact_id);
		sqlite3_bind_int64(s, 2, v->n);
		rc = exec_stmt(q, s, err);
		sqlite3_finalize(s);
		if (!rc && sqlite3_changes(q->db) == 0)
			rc = cmfs_err_set(err, -ENOENT, "artifact %lld: none",
					  (long long)v->artifact_id);
	}
	rc = sq_end(q, rc, err);
out:
	unlock(q);
	return rc;
}

static int sq_art_next_get(void *impl, int64_t art_id, int64_t *out,
			   struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s = NULL;
	int rc;

	lock(q);
	rc = adhoc(q, "SELECT next_n FROM artifacts WHERE id = ?", &s, err);
	if (!rc) {
		sqlite3_bind_int64(s, 1, art_id);
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			*out = sqlite3_column_int64(s, 0);
			rc = 0;
		} else {
			rc = rc == SQLITE_DONE
				     ? -ENOENT
				     : fail(q, sqlite3_extended_errcode(q->db),
					    err);
		}
		sqlite3_finalize(s);
	}
	unlock(q);
	return rc;
}

static int sq_art_next_set(void *impl, int64_t art_id, int64_t n,
			   struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s = NULL;
	int rc;

	lock(q);
	rc = adhoc(q,
		   "UPDATE artifacts SET next_n = max(next_n, ?2)"
		   " WHERE id = ?1 AND ?2 >"
		   " COALESCE((SELECT max(n) FROM versions"
		   " WHERE artifact_id = ?1), 0)",
		   &s, err);
	if (!rc) {
		sqlite3_bind_int64(s, 1, art_id);
		sqlite3_bind_int64(s, 2, n);
		rc = exec_stmt(q, s, err);
		sqlite3_finalize(s);
		if (!rc && sqlite3_changes(q->db) == 0)
			rc = cmfs_err_set(err, -EINVAL,
					  "artifact %lld: next version %lld "
					  "is not above its versions",
					  (long long)art_id, (long long)n);
	}
	unlock(q);
	return rc;
}

static int sq_retired_list(void *impl, const char *env,
			   int (*fn)(void *arg, const char *name, int64_t next),
			   void *arg, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s = NULL;
	char name[256];
	int rc;

	lock(q);
	rc = adhoc(q,
		   "SELECT name, next_n FROM retired WHERE env = ?"
		   " ORDER BY name",
		   &s, err);
	if (rc)
		goto out;
	sqlite3_bind_text(s, 1, env, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		snprintf(name, sizeof(name), "%s",
			 (const char *)sqlite3_column_text(s, 0));
		if ((rc = fn(arg, name, sqlite3_column_int64(s, 1))))
			break;
	}
	if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = fail(q, sqlite3_extended_errcode(q->db), err);
	sqlite3_finalize(s);
out:
	unlock(q);
	return rc;
}

static int sq_retired_put(void *impl, const char *env, const char *name,
			  int64_t next, struct cmfs_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *s = NULL;
	int64_t held = 0;
	int rc;

	lock(q);
	if ((rc = sq_begin(q, err)))
		goto out;
	rc = adhoc(q,
		   "SELECT count(*) FROM artifacts a JOIN envs e ON"
		   " e.id = a.env_id WHERE e.name = ?1 AND a.name = ?2",
		   &s, err);
	if (!rc) {
		sqlite3_bind_text(s, 1, env, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW)
			held = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
		if (held)
			rc = cmfs_err_set(err, -EEXIST,
					  "%s: an artifact of %s holds the "
					  "name",
					  name, env);
	}
	if (!rc)
		rc = adhoc(q,
			   "INSERT INTO retired(env, name, next_n)"
			   " VALUES(?1, ?2, ?3) ON CONFLICT(env, name) DO"
			   " UPDATE SET next_n = max(next_n, excluded.next_n)",
			   &s, err);
	if (!rc) {
		sqlite3_bind_text(s, 1, env, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, next);
		rc = exec_stmt(q, s, err);
		sqlite3_finalize(s);
	}
	rc = sq_end(q, rc, err);
out:
	unlock(q);
	return rc;
}

const struct catalog_backend catalog_sqlite_backend = {
	.name = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.begin = sq_begin,
	.end = sq_end,
	.check = sq_check,
	.env_add = sq_env_add,
	.env_get = sq_env_get,
	.env_del = sq_env_del,
	.env_list = sq_env_list,
	.art_get = sq_art_get,
	.art_add = sq_art_add,
	.art_del = sq_art_del,
	.art_rename = sq_art_rename,
	.art_count = sq_art_count,
	.art_list = sq_art_list,
	.art_by_label = sq_art_by_label,
	.ver_add = sq_ver_add,
	.ver_get = sq_ver_get,
	.ver_del = sq_ver_del,
	.ver_list = sq_ver_list,
	.blob_refs = sq_blob_refs,
	.set_sync = sq_set_sync,
	.checkpoint = sq_checkpoint,
	.sync = sq_sync,
	.env_recount = sq_env_recount,
	.insp_links = sq_insp_links,
	.unsynced_add = sq_unsynced_add,
	.unsynced_mark = sq_unsynced_mark,
	.unsynced_clear = sq_unsynced_clear,
	.unsynced_list = sq_unsynced_list,
	.loose_add = sq_loose_add,
	.loose_del = sq_loose_del,
	.loose_list = sq_loose_list,
	.insp_stale = sq_insp_stale,
	.ver_by_sha = sq_ver_by_sha,
	.inline_put = sq_inline_put,
	.inline_get = sq_inline_get,
	.inline_del = sq_inline_del,
	.inline_list = sq_inline_list,
	.blob_total = sq_blob_total,
	.label_set = sq_label_set,
	.label_del = sq_label_del,
	.label_get = sq_label_get,
	.label_list = sq_label_list,
	.insp_put = sq_insp_put,
	.insp_get = sq_insp_get,
	.table_get = sq_table_get,
	.table_def = sq_table_def,
	.table_put = sq_table_put,
	.table_del = sq_table_del,
	.table_refusal_set = sq_table_refusal_set,
	.table_refusal_get = sq_table_refusal_get,
	.table_count = sq_table_count,
	.table_list = sq_table_list,
	.event_add = sq_event_add,
	.event_size = sq_event_size,
	.event_read = sq_event_read,
	.event_envs = sq_event_envs,
	.event_trim = sq_event_trim,
	.open_existing = sq_open_existing,
	.begin_read = sq_begin_read,
	.ver_put = sq_ver_put,
	.art_next_get = sq_art_next_get,
	.art_next_set = sq_art_next_set,
	.retired_list = sq_retired_list,
	.retired_put = sq_retired_put,
};
