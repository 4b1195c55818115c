/*
 * catalog_pg_schema.c - the PostgreSQL catalog's schema and its
 * migrations, one step a version.
 *
 * Its version is in cmfs_schema, created on the first open and migrated
 * there, under an advisory lock so that hosts opening at once create it
 * once.  Triggers keep what SQLite's keep: each environment's counts,
 * retired names, loose and inline blobs; and (schema 5) notify the other
 * hosts of every change (catalog_pg_watch.c).
 */
#include "catalog_pg_int.h"

#include <errno.h>

#include "jar.h"

/* The first schema: the SQLite backend's version 10, in PostgreSQL. */
static const char *const schema_v1[] = {
	"CREATE TABLE envs(id bigserial PRIMARY KEY,"
	" name text COLLATE \"C\" NOT NULL UNIQUE, ctime bigint NOT NULL,"
	" uid bigint NOT NULL, nart bigint NOT NULL DEFAULT 0,"
	" ntab bigint NOT NULL DEFAULT 0)",
	"CREATE TABLE artifacts(id bigserial PRIMARY KEY,"
	" env_id bigint NOT NULL REFERENCES envs(id),"
	" name text COLLATE \"C\" NOT NULL,"
	" next_n bigint NOT NULL DEFAULT 1, UNIQUE(env_id, name))",
	"CREATE TABLE versions(artifact_id bigint NOT NULL"
	" REFERENCES artifacts(id) ON DELETE CASCADE, n bigint NOT NULL,"
	" sha256 text COLLATE \"C\" NOT NULL, size bigint NOT NULL,"
	" mtime bigint NOT NULL, uid bigint NOT NULL, insp bigint,"
	" PRIMARY KEY(artifact_id, n))",
	"CREATE INDEX versions_sha ON versions(sha256)",
	"CREATE TABLE labels(artifact_id bigint NOT NULL"
	" REFERENCES artifacts(id) ON DELETE CASCADE,"
	" key text COLLATE \"C\" NOT NULL, value bytea NOT NULL,"
	" PRIMARY KEY(artifact_id, key))",
	"CREATE INDEX labels_kv ON labels(key, value)",
	"CREATE TABLE inspections(id bigserial PRIMARY KEY,"
	" sha256 text COLLATE \"C\" NOT NULL UNIQUE, error text,"
	" external text NOT NULL, factories text NOT NULL DEFAULT '[]',"
	" inspector integer NOT NULL)",
	"CREATE TABLE tables(id bigserial PRIMARY KEY,"
	" env_id bigint NOT NULL REFERENCES envs(id),"
	" name text COLLATE \"C\" NOT NULL, ddl text NOT NULL, like_ddl text,"
	" size bigint NOT NULL, mtime bigint NOT NULL, uid bigint NOT NULL,"
	" options text NOT NULL DEFAULT '[]', UNIQUE(env_id, name))",
	"CREATE TABLE events(env text COLLATE \"C\" NOT NULL,"
	" off bigint NOT NULL, len bigint NOT NULL, line bytea NOT NULL,"
	" PRIMARY KEY(env, off))",
	"CREATE TABLE unsynced(seq bigserial PRIMARY KEY,"
	" sha256 text NOT NULL)",
	"CREATE TABLE loose(sha256 text COLLATE \"C\" PRIMARY KEY)",
	"CREATE TABLE inline_blobs(id bigserial PRIMARY KEY,"
	" sha256 text COLLATE \"C\" NOT NULL UNIQUE, bytes bytea NOT NULL)",
	"CREATE TABLE retired(env text COLLATE \"C\" NOT NULL,"
	" name text COLLATE \"C\" NOT NULL, next_n bigint NOT NULL,"
	" holder bigint, PRIMARY KEY(env, name))",
	"CREATE INDEX retired_holder ON retired(holder)"
	" WHERE holder IS NOT NULL",
	/* The store that holds the blob files (catalog_bind_store). */
	"CREATE TABLE cmfs_store(id text NOT NULL)",
	/* Each environment's counts of artifacts and tables. */
	"CREATE FUNCTION cmfs_count() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN IF TG_TABLE_NAME = 'artifacts' THEN"
	"  IF TG_OP = 'INSERT' THEN"
	"   UPDATE envs SET nart = nart + 1 WHERE id = NEW.env_id;"
	"  ELSE UPDATE envs SET nart = nart - 1 WHERE id = OLD.env_id; END IF;"
	" ELSE IF TG_OP = 'INSERT' THEN"
	"   UPDATE envs SET ntab = ntab + 1 WHERE id = NEW.env_id;"
	"  ELSE UPDATE envs SET ntab = ntab - 1 WHERE id = OLD.env_id; END IF;"
	" END IF; RETURN NULL; END $$",
	"CREATE TRIGGER art_count AFTER INSERT OR DELETE ON artifacts"
	" FOR EACH ROW EXECUTE FUNCTION cmfs_count()",
	"CREATE TRIGGER tab_count AFTER INSERT OR DELETE ON tables"
	" FOR EACH ROW EXECUTE FUNCTION cmfs_count()",
	/* A name's next number stays with the name when its artifact goes
	 * (the SQLite backend's schema 8 says why). */
	"CREATE FUNCTION cmfs_retire() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN UPDATE retired SET holder = NULL WHERE holder = OLD.id;"
	" INSERT INTO retired(env, name, next_n, holder)"
	"  SELECT e.name, OLD.name, greatest(OLD.next_n, COALESCE((SELECT"
	"  r.next_n FROM retired r WHERE r.env = e.name AND"
	"  r.name = OLD.name), 1)), NULL FROM envs e WHERE e.id = OLD.env_id"
	"  ON CONFLICT(env, name) DO UPDATE SET next_n = excluded.next_n,"
	"  holder = NULL;"
	" RETURN NULL; END $$",
	"CREATE TRIGGER art_retire AFTER DELETE ON artifacts"
	" FOR EACH ROW EXECUTE FUNCTION cmfs_retire()",
	"CREATE FUNCTION cmfs_reuse() RETURNS trigger LANGUAGE plpgsql AS $$"
	" DECLARE en text; rn bigint; BEGIN"
	" SELECT name INTO en FROM envs WHERE id = NEW.env_id;"
	" DELETE FROM retired WHERE env = en AND name = NEW.name"
	"  RETURNING next_n INTO rn;"
	" IF rn IS NOT NULL THEN NEW.next_n := greatest(NEW.next_n, rn);"
	" END IF; RETURN NEW; END $$",
	"CREATE TRIGGER art_reuse BEFORE INSERT ON artifacts"
	" FOR EACH ROW EXECUTE FUNCTION cmfs_reuse()",
	/* The last version of a blob gone: its inline row goes, and it is
	 * loose; a version that takes a blob takes it out of loose. */
	"CREATE FUNCTION cmfs_ver_del() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN IF NOT EXISTS (SELECT 1 FROM versions"
	"  WHERE sha256 = OLD.sha256) THEN"
	"  DELETE FROM inline_blobs WHERE sha256 = OLD.sha256;"
	"  INSERT INTO loose(sha256) VALUES(OLD.sha256)"
	"  ON CONFLICT DO NOTHING; END IF;"
	" RETURN NULL; END $$",
	"CREATE TRIGGER ver_del AFTER DELETE ON versions"
	" FOR EACH ROW EXECUTE FUNCTION cmfs_ver_del()",
	"CREATE FUNCTION cmfs_ver_add() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN DELETE FROM loose WHERE sha256 = NEW.sha256;"
	" RETURN NULL; END $$",
	"CREATE TRIGGER ver_add AFTER INSERT ON versions"
	" FOR EACH ROW EXECUTE FUNCTION cmfs_ver_add()",
	NULL
};

/* Version 2: why a table's last write was refused (SQLite's v12). */
static const char *const schema_v2[] = {
	"ALTER TABLE tables ADD COLUMN refusal text", NULL};

/*
 * Version 4: factories and table options leave their JSON columns for
 * rows of child tables, and factories' declared options are kept (SQLite's
 * v11 and v13).  Inspections from before know no options: marked as made
 * by the inspector before this one, so the mount makes them again
 * (reinspect.h); so are those whose factories do not read.
 */
static const char *const schema_v4[] = {
	"CREATE TABLE insp_factories(insp bigint NOT NULL"
	" REFERENCES inspections(id) ON DELETE CASCADE, seq integer NOT NULL,"
	" kind text COLLATE \"C\" NOT NULL, identifier text COLLATE \"C\","
	" class text COLLATE \"C\" NOT NULL, PRIMARY KEY(insp, seq))",
	"UPDATE inspections SET inspector = LEAST(inspector, "
	CMFS_STR(JAR_INSPECTOR) " - 1)",
	"UPDATE inspections i SET inspector = 0 WHERE EXISTS(SELECT 1 FROM"
	" json_array_elements(i.factories::json) f(e) WHERE f.e->>0 IS NULL"
	" OR f.e->>2 IS NULL)",
	"INSERT INTO insp_factories SELECT i.id, f.ord - 1, f.e->>0,"
	" f.e->>1, f.e->>2 FROM inspections i, json_array_elements("
	"i.factories::json) WITH ORDINALITY f(e, ord) WHERE i.inspector <> 0",
	"ALTER TABLE inspections DROP COLUMN factories",
	"CREATE TABLE factory_options(insp bigint NOT NULL"
	" REFERENCES inspections(id) ON DELETE CASCADE,"
	" factory integer NOT NULL, role text COLLATE \"C\" NOT NULL,"
	" key text COLLATE \"C\" NOT NULL, type text,"
	" list integer NOT NULL DEFAULT 0, vals text, defval text,"
	" deprecated text, fallback text, forward integer NOT NULL DEFAULT 0,"
	" PRIMARY KEY(insp, factory, role, key))",
	"ALTER TABLE inspections ADD COLUMN options_read integer NOT NULL"
	" DEFAULT 0",
	"CREATE TABLE tab_options(table_id bigint NOT NULL"
	" REFERENCES tables(id) ON DELETE CASCADE, seq integer NOT NULL,"
	" key text COLLATE \"C\" NOT NULL, value text NOT NULL,"
	" PRIMARY KEY(table_id, seq))",
	"INSERT INTO tab_options SELECT t.id, o.ord - 1, o.e->>0, o.e->>1"
	" FROM tables t, json_array_elements(t.options::json)"
	" WITH ORDINALITY o(e, ord)"
	" WHERE o.e->>0 IS NOT NULL AND o.e->>1 IS NOT NULL",
	"ALTER TABLE tables DROP COLUMN options",
	NULL};

/*
 * Version 5: blobs in the database, so that every host reads them.  A
 * blob is a row of `blobs` and its bytes rows of `blob_chunks`, CHUNK_SIZE
 * each: ordinary rows, so a blob comes and goes in the transaction of the
 * version that first refers to it and of the deletion that drops the last
 * (a large object would need its own unlink beside, and vacuumlo after a
 * crash), and each read or write of a chunk is a bounded piece of memory
 * on both ends.  JARs are compressed already: the chunks are stored
 * without TOAST's compression (EXTERNAL).  Freed as inline blobs are
 * (schema 1): by the trigger on versions, under the blob's lock (see
 * pg_blob_put for why).
 */
static const char *const schema_v5[] = {
	"CREATE TABLE blobs(sha256 text COLLATE \"C\" PRIMARY KEY,"
	" size bigint NOT NULL)",
	"CREATE TABLE blob_chunks(sha256 text COLLATE \"C\" NOT NULL"
	" REFERENCES blobs(sha256) ON DELETE CASCADE, seq integer NOT NULL,"
	" bytes bytea NOT NULL, PRIMARY KEY(sha256, seq))",
	"ALTER TABLE blob_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL",
	"CREATE OR REPLACE FUNCTION cmfs_ver_del() RETURNS trigger"
	" LANGUAGE plpgsql AS $$"
	" BEGIN PERFORM pg_advisory_xact_lock(" BLOB_LOCK ","
	"  hashtext(OLD.sha256));"
	" IF NOT EXISTS (SELECT 1 FROM versions"
	"  WHERE sha256 = OLD.sha256) THEN"
	"  DELETE FROM inline_blobs WHERE sha256 = OLD.sha256;"
	"  DELETE FROM blobs WHERE sha256 = OLD.sha256;"
	"  INSERT INTO loose(sha256) VALUES(OLD.sha256)"
	"  ON CONFLICT DO NOTHING; END IF;"
	" RETURN NULL; END $$",
	/* Every commit tells the other hosts what it changed (pg_watch):
	 * a notification on channel cmfs, "<kind><env>/<name>", sent when
	 * the transaction commits (PostgreSQL folds repeats within one).
	 * A version or label of an artifact being deleted names nothing:
	 * the artifact's own row does. */
	"CREATE FUNCTION cmfs_notify() RETURNS trigger LANGUAGE plpgsql AS $$"
	" DECLARE r record; en text; nm text; k text := 'a'; BEGIN"
	" IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;"
	" IF TG_TABLE_NAME = 'envs' THEN en := r.name; nm := ''; k := 'e';"
	" ELSIF TG_TABLE_NAME IN ('artifacts', 'tables') THEN"
	"  SELECT name INTO en FROM envs WHERE id = r.env_id; nm := r.name;"
	"  IF TG_TABLE_NAME = 'tables' THEN k := 't'; END IF;"
	"  IF TG_OP = 'UPDATE' AND OLD.name <> NEW.name AND en IS NOT NULL"
	"  THEN PERFORM pg_notify('cmfs', k || en || '/' || OLD.name);"
	"  END IF;"
	" ELSE SELECT e.name, a.name INTO en, nm FROM artifacts a"
	"  JOIN envs e ON e.id = a.env_id WHERE a.id = r.artifact_id;"
	" END IF;"
	" IF en IS NOT NULL THEN"
	"  PERFORM pg_notify('cmfs', k || en || '/' || nm); END IF;"
	" RETURN NULL; END $$",
	/* (not its updates: the counts, which artifacts and tables tell) */
	"CREATE TRIGGER envs_notify AFTER INSERT OR DELETE ON envs"
	" FOR EACH ROW EXECUTE FUNCTION cmfs_notify()",
	"CREATE TRIGGER art_notify AFTER INSERT OR UPDATE OR DELETE"
	" ON artifacts FOR EACH ROW EXECUTE FUNCTION cmfs_notify()",
	"CREATE TRIGGER ver_notify AFTER INSERT OR UPDATE OR DELETE"
	" ON versions FOR EACH ROW EXECUTE FUNCTION cmfs_notify()",
	"CREATE TRIGGER label_notify AFTER INSERT OR UPDATE OR DELETE"
	" ON labels FOR EACH ROW EXECUTE FUNCTION cmfs_notify()",
	"CREATE TRIGGER tab_notify AFTER INSERT OR UPDATE OR DELETE"
	" ON tables FOR EACH ROW EXECUTE FUNCTION cmfs_notify()",
	NULL};

/*
 * The steps of the schema, in order: each brings a catalog older than
 * `to` up to it (there was never a version 3).  The last `to` is
 * PG_SCHEMA_VERSION.
 */
static const struct {
	int to;
	const char *const *sql;
} migrations[] = {
	{ 1, schema_v1 }, { 2, schema_v2 }, { 4, schema_v4 }, { 5, schema_v5 },
};

int pg_migrate(struct pg *g, struct cmfs_err *err)
{
	PGresult *res;
	int64_t version = 0;
	size_t m;
	int rc, i;

	if ((rc = pg_run(g, "BEGIN", NULL, NULL, err)))
		return rc;
	rc = pg_run(g, "SELECT pg_advisory_xact_lock(" SCHEMA_LOCK ")", NULL,
		    NULL, err);
	if (!rc)
		rc = pg_run(g,
			    "CREATE TABLE IF NOT EXISTS cmfs_schema("
			    "version integer NOT NULL)",
			    NULL, NULL, err);
	if (!rc && !(rc = pg_run(g, "SELECT version FROM cmfs_schema", NULL,
				 &res, err))) {
		if (PQntuples(res) > 0)
			version = col_int(res, 0, 0);
		PQclear(res);
	}
	if (!rc && version > PG_SCHEMA_VERSION)
		rc = cmfs_err_set(err, -EPROTO,
				  "catalog %s: schema %d is newer than this "
				  "cmfs (%d): upgrade cmfs",
				  g->where, (int)version, PG_SCHEMA_VERSION);
	for (m = 0; m < sizeof(migrations) / sizeof(migrations[0]); m++)
		for (i = 0; !rc && version < migrations[m].to &&
			    migrations[m].sql[i];
		     i++)
			rc = pg_run(g, migrations[m].sql[i], NULL, NULL, err);
	if (!rc && version < PG_SCHEMA_VERSION) {
		struct par p = { 0 };

		p_int(&p, PG_SCHEMA_VERSION);
		rc = pg_run(g, "DELETE FROM cmfs_schema", NULL, NULL, err);
		if (!rc)
			rc = pg_run(g, "INSERT INTO cmfs_schema VALUES($1)", &p,
				    NULL, err);
	}
	if (!rc)
		return pg_run(g, "COMMIT", NULL, NULL, err);
	pg_run(g, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
