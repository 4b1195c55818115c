/*
 * catalog_sqlite_schema.c - the SQLite catalog's schema and its migrations.
 *
 * The file carries its version in PRAGMA user_version.  migrations[v]
 * holds the statements that make version v + 1 of version v (version 0 is
 * an empty file); sq_migrate() runs the steps from the file's version up
 * in one transaction, so that a crash leaves the old version whole, and
 * refuses a file newer than this cmfs.  A step is never edited once
 * released: a new schema is a new step.  Why each step is as it is, with
 * the figures, is in bench/findings.md and the commits.
 */
#include "catalog_sqlite_int.h"

#include <errno.h>

#include "jar.h"

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

/*
 * Version 2: each environment counts its artifacts and tables, kept by
 * triggers in the transaction that adds or drops one: the limits are
 * checked at every new artifact and table, and a count(*) grows with the
 * rows.
 */
static const char *const schema_v2[] = {
	"ALTER TABLE envs ADD COLUMN nart INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE envs ADD COLUMN ntab INTEGER NOT NULL DEFAULT 0",
	SQ_RECOUNT,
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
 * Version 4: a JAR's factories move into its inspection's row, and a
 * table's options into the table's row, as JSON arrays ([kind,
 * identifier, class] and [key, value], in order).  Version 13 undoes it.
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
 * through an index, and each version names its inspection's row, so that
 * a resolution reads the inspection's leaf page by the row's number
 * rather than whole rows in the interior pages of a table keyed by
 * sha256.
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
 * Version 6: the bytes of small blobs live in the catalog (repo_upload.c says
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
 * in one B-tree (not a rowid table and an index: two B-trees written for
 * each line).  Lines are read by that key only.
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
 * Version 15 moves the 'unknown' rows into the factory's row.
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

/*
 * Version 14: events in a table keyed by row number, so that a new line,
 * appended after the last, fills the last leaf page and then starts a
 * new one, as SQLite does for row numbers that grow (a table keyed by
 * (env, off) splits its last leaves among their neighbours instead,
 * writing some three pages more every eight lines or so).  Each
 * environment name gets a number k in event_envs at its first line,
 * never reused; a line's row number is k << 40 plus its offset, so that
 * an environment's lines are one range of row numbers, in offset order.
 */
static const char *const schema_v14[] = {
	"CREATE TABLE event_envs(name TEXT PRIMARY KEY, k INTEGER NOT NULL)"
	" WITHOUT ROWID",
	"INSERT INTO event_envs(name, k) SELECT env, row_number() OVER"
	" (ORDER BY env) FROM (SELECT DISTINCT env FROM events)",
	"CREATE TABLE events_v14(id INTEGER PRIMARY KEY, env TEXT NOT NULL,"
	" off INTEGER NOT NULL CHECK(off BETWEEN 0 AND " SQ_EV_MAX_STR "),"
	" len INTEGER NOT NULL, line BLOB NOT NULL)",
	"INSERT INTO events_v14(id, env, off, len, line) SELECT"
	" (k.k << " SQ_EV_SHIFT_STR ") + e.off, e.env, e.off, e.len, e.line"
	" FROM events e JOIN event_envs k ON k.name = e.env ORDER BY 1",
	"DROP TABLE events",
	"ALTER TABLE events_v14 RENAME TO events",
	NULL};

/*
 * Version 15: the sets of a factory's options the bytecode does not show
 * whole ('required', 'optional', 'prefixes', 'validation') are a column
 * of the factory's row, comma-separated (NULL: none), no longer rows of
 * factory_options with role 'unknown': a new inspection whose factories
 * declare no option it can read then writes no factory_options page.
 */
static const char *const schema_v15[] = {
	"ALTER TABLE insp_factories ADD COLUMN unknown TEXT",
	"UPDATE insp_factories SET unknown = (SELECT group_concat(key, ',')"
	" FROM (SELECT key FROM factory_options o"
	" WHERE o.insp = insp_factories.insp"
	" AND o.factory = insp_factories.seq AND o.role = 'unknown'"
	" ORDER BY key))",
	"DELETE FROM factory_options WHERE role = 'unknown'",
	NULL};

/*
 * Version 16: the triggers that ran at every INSERT of an artifact or a
 * version (art_add: the environment's count; art_reuse: a name's next
 * number taken back from `retired`; loose_taken: the blob no longer
 * loose) become statements of the catalog's own (catalog_sqlite.c's
 * sq_art_add, sq_ver_add, sq_ver_put), in the same transactions: an
 * INSERT that fires a trigger runs with a statement journal, and these
 * ran at every upload.  The triggers on DELETE stay.
 */
static const char *const schema_v16[] = {"DROP TRIGGER art_add",
					 "DROP TRIGGER art_reuse",
					 "DROP TRIGGER loose_taken", NULL};

/* The steps from each version to the next: migrations[v] makes v + 1. */
static const char *const *const migrations[SQ_SCHEMA_VERSION] = {
	schema_v1,  schema_v2,	schema_v3,  schema_v4,	schema_v5,  schema_v6,
	schema_v7,  schema_v8,	schema_v9,  schema_v10, schema_v11, schema_v12,
	schema_v13, schema_v14, schema_v15, schema_v16,
};

int sq_schema_version(struct sq *q, int *out, struct cmfs_err *err)
{
	uint64_t v = 0;
	int rc = sq_run(q, S_USER_VERSION, SQ_SCALAR, NULL, &v, err, "");

	*out = (int)v;
	return rc;
}

int sq_migrate(struct sq *q, struct cmfs_err *err)
{
	int version, i, rc;

	if ((rc = sq_schema_version(q, &version, err)))
		return rc;
	if (version > SQ_SCHEMA_VERSION)
		return cmfs_err_set(err, -EPROTO,
				    "catalog schema %d is newer than this "
				    "cmfs (%d): upgrade cmfs", version,
				    SQ_SCHEMA_VERSION);
	if (version == SQ_SCHEMA_VERSION)
		return 0;
	if (sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, NULL))
		return sq_fail_last(q, err);
	for (; version < SQ_SCHEMA_VERSION; version++)
		for (i = 0; migrations[version][i]; i++)
			if (sqlite3_exec(q->db, migrations[version][i], NULL,
					 NULL, NULL))
				goto bad;
	if (sqlite3_exec(q->db,
			 "PRAGMA user_version = " CMFS_STR(SQ_SCHEMA_VERSION),
			 NULL, NULL, NULL) ||
	    sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL))
		goto bad;
	return 0;
bad:
	rc = sq_fail_last(q, err);
	sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
