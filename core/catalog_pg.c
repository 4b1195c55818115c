/*
 * catalog_pg.c - the PostgreSQL backend of the catalog, on libpq.
 *
 * The same rows as the SQLite backend (catalog_sqlite.c), in a schema of
 * its own: its version in cmfs_schema, created on the first open and
 * migrated there, under an advisory lock so that hosts opening at once
 * create it once.  Triggers keep what SQLite's keep: each environment's
 * counts, retired names, loose and inline blobs.
 *
 * Concurrency: one connection guarded by a recursive mutex, held from
 * catalog_begin() to catalog_end() as in the SQLite backend, so a
 * transaction belongs to the thread that began it.  Across connections
 * (other hosts) PostgreSQL's row locks order writers: a version's number
 * comes from one UPDATE of its artifact's row (ver_add), so two hosts
 * adding versions to one artifact at once get consecutive numbers.
 *
 * Text columns compare and sort bytewise (COLLATE "C"), as SQLite's do.
 * Label values and event lines are bytea: bytes, as the interface says.
 * Factories, their declared options and table options are rows of child
 * tables, as in the SQLite backend.
 *
 * SQLSTATEs become errnos here and nowhere else: unique violation
 * -EEXIST, other constraint or data errors -EINVAL, disk full -ENOSPC,
 * out of memory -ENOMEM, serialization failure or deadlock -EAGAIN, the
 * rest (a lost connection among them) -EIO.
 */
#include "catalog.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "catalog_rows.h"
#include "config.h"
#include "hash.h"
#include "jar.h"
#include "store.h"
#include "thread.h"

#define PG_SCHEMA_VERSION 5

#define CMFS_STR_(x) #x
#define CMFS_STR(x) CMFS_STR_(x)

/* Seconds a connection may take before it fails (libpq's default: no
 * limit). */
#define CONNECT_TIMEOUT "5"

/* Any key: the lock under which the schema is created or migrated. */
#define SCHEMA_LOCK "7043712001"
/* The first key of each environment's events' lock (the second: a hash
 * of its name). */
#define EVENTS_LOCK "704371"
/* The first key of each blob's lock (the second: a hash of its sha256),
 * held by the transaction that stores it or may free it. */
#define BLOB_LOCK "704372"

/* The bytes of a blob kept in the database go in rows of this size. */
#define CHUNK_SIZE (1024 * 1024)

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

/* Each environment's counts, from the rows (fsck --repair). */
#define RECOUNT                                                               \
	"UPDATE envs SET"                                                     \
	" nart = (SELECT count(*) FROM artifacts WHERE env_id = envs.id),"    \
	" ntab = (SELECT count(*) FROM tables WHERE env_id = envs.id)"

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

/* The columns of an artifact row with its latest version. */
#define ART_COLS                                                             \
	"a.id, a.env_id, a.name, v.n, v.sha256, v.size, v.mtime, v.uid,"     \
	" (SELECT count(*) FROM versions WHERE artifact_id = a.id), v.insp"
#define ART_LATEST                                                           \
	" JOIN versions v ON v.artifact_id = a.id AND v.n ="                 \
	" (SELECT max(n) FROM versions WHERE artifact_id = a.id)"
#define VER_COLS "artifact_id, n, sha256, size, mtime, uid, insp"

struct watch;

struct pg {
	PGconn *conn;
	pthread_mutex_t lock; /* guards conn and depth */
	int depth;	      /* catalog_begin() nesting of the owner */
	int pid;	      /* the server process of conn (atomic) */
	struct watch *watch;  /* pg_watch's, or NULL */
	int broken;	      /* the connection was lost: made again before
			       * the next statement outside a transaction */
	int rdonly;	      /* every transaction read only (a session's
			       * setting: made again with the connection) */
	struct hash stmts;    /* SQL text -> its prepared statement's number
			       * on conn; cleared when conn is made again */
	char **sql;	      /* the keys of stmts, by number: owned */
	size_t nsql, capsql;
	char where[512];      /* the URI without its password */
	char uri[4096];	      /* the URI itself: the watch connects too */
};

/* The parameters of one statement, as text (or bytes: fmt 1). */
#define MAX_PARAMS 12
struct par {
	int n;
	const char *v[MAX_PARAMS];
	int len[MAX_PARAMS];
	int fmt[MAX_PARAMS];
	char num[MAX_PARAMS][24];
};

static void p_int(struct par *p, int64_t v)
{
	snprintf(p->num[p->n], sizeof(p->num[0]), "%" PRId64, v);
	p->v[p->n] = p->num[p->n];
	p->n++;
}

/* A text parameter; NULL is SQL's NULL. */
static void p_str(struct par *p, const char *s)
{
	p->v[p->n++] = s;
}

static void p_bin(struct par *p, const void *data, size_t len)
{
	p->v[p->n] = len ? data : "";
	p->len[p->n] = (int)len;
	p->fmt[p->n] = 1;
	p->n++;
}

static void lock(struct pg *g)
{
	pthread_mutex_lock(&g->lock);
}

static void unlock(struct pg *g)
{
	pthread_mutex_unlock(&g->lock);
}

/* The errno of a failed result (its SQLSTATE), with its message. */
static int fail(struct pg *g, const PGresult *res, struct cmfs_err *err)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE)
				: NULL;
	const char *msg = res ? PQresultErrorMessage(res) : "";
	char line[512];
	int code = -EIO;

	if (!msg || !*msg)
		msg = PQerrorMessage(g->conn);
	snprintf(line, sizeof(line), "%s", msg ? msg : "");
	line[strcspn(line, "\n")] = '\0';
	if (state && !strcmp(state, "23505"))
		code = -EEXIST;
	else if (state && (!strncmp(state, "23", 2) ||
			   !strncmp(state, "22", 2)))
		code = -EINVAL;
	else if (state && !strcmp(state, "53100"))
		code = -ENOSPC;
	else if (state && !strcmp(state, "53200"))
		code = -ENOMEM;
	else if (state && (!strcmp(state, "40001") || !strcmp(state, "40P01")))
		code = -EAGAIN;
	return cmfs_err_set(err, code, "catalog %s: %s", g->where, line);
}

/*
 * Run `sql` with parameters `p` (may be NULL).  Rows, if wanted, in *out
 * (the caller's to PQclear).  A connection lost between transactions is
 * made again before the statement;
 * one lost inside a transaction fails it (-EIO), and the transaction with
 * it.
 */
/*
 * A failure of the connection, not of the statement: libpq's own (no
 * SQLSTATE: the server closed the connection), a connection exception
 * (class 08) or the server shutting down (57P01..57P03).  libpq may still
 * call such a connection good until it next writes to it.
 */
static int lost(const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE)
				: NULL;

	return !state || !strncmp(state, "08", 2) ||
	       !strncmp(state, "57P0", 4);
}

/*
 * The connection's session settings, made again with the connection:
 * notices (a trigger's, CREATE IF NOT EXISTS's) are not errors, and a
 * read-only open stays read only.
 */
static void session(struct pg *g)
{
	PGresult *res = PQexec(g->conn, "SET client_min_messages = warning");

	PQclear(res);
	if (g->rdonly) {
		res = PQexec(g->conn, "SET default_transaction_read_only = on");
		PQclear(res);
	}
}

/* Forget the prepared statements: they died with the connection. */
static void stmts_clear(struct pg *g)
{
	size_t i;

	hash_release(&g->stmts);
	for (i = 0; i < g->nsql; i++)
		free(g->sql[i]);
	free(g->sql);
	g->sql = NULL;
	g->nsql = g->capsql = 0;
}

/*
 * The name of `sql`'s prepared statement on this connection in name[],
 * prepared now (parsed and planned once per connection, not once per
 * statement) when it is not yet.  1: no room to remember it (the caller
 * runs it unprepared); 0; or -1 with the failure in *res.
 */
static int prepared(struct pg *g, const char *sql, char name[24],
		    PGresult **res)
{
	size_t len = strlen(sql);
	uintptr_t id;
	char *key;

	*res = NULL;
	if (hash_get(&g->stmts, sql, len, &id)) {
		snprintf(name, 24, "cmfs%zu", (size_t)id);
		return 0;
	}
	if (g->nsql == g->capsql) {
		size_t cap = g->capsql ? 2 * g->capsql : 64;
		char **v = realloc(g->sql, cap * sizeof(*v));

		if (!v)
			return 1;
		g->sql = v;
		g->capsql = cap;
	}
	if (hash_reserve(&g->stmts, g->nsql + 1) || !(key = strdup(sql)))
		return 1;
	id = g->nsql;
	snprintf(name, 24, "cmfs%zu", (size_t)id);
	*res = PQprepare(g->conn, name, sql, 0, NULL);
	if (!*res || PQresultStatus(*res) != PGRES_COMMAND_OK) {
		free(key);
		return -1;
	}
	PQclear(*res);
	*res = NULL;
	/* Room was reserved: the key goes in. */
	hash_put(&g->stmts, key, len, id);
	g->sql[g->nsql++] = key;
	return 0;
}

/* A connection lost between transactions is made again. */
static void revive(struct pg *g)
{
	if ((g->broken || PQstatus(g->conn) != CONNECTION_OK) && !g->depth) {
		stmts_clear(g);
		PQreset(g->conn);
		g->broken = PQstatus(g->conn) != CONNECTION_OK;
		if (!g->broken)
			session(g);
		__atomic_store_n(&g->pid, PQbackendPID(g->conn),
				 __ATOMIC_RELAXED);
	}
}

/* run() with the rows in text (binary 0) or binary (1) format. */
static int run_as(struct pg *g, const char *sql, const struct par *p,
		  int binary, PGresult **out, struct cmfs_err *err)
{
	PGresult *res;
	ExecStatusType st;
	char name[24];
	int rc;

	if (out)
		*out = NULL;
	revive(g);
	rc = prepared(g, sql, name, &res);
	if (rc == 0)
		res = PQexecPrepared(g->conn, name, p ? p->n : 0,
				     p ? p->v : NULL, p ? p->len : NULL,
				     p ? p->fmt : NULL, binary);
	else if (rc == 1)
		res = PQexecParams(g->conn, sql, p ? p->n : 0, NULL,
				   p ? p->v : NULL, p ? p->len : NULL,
				   p ? p->fmt : NULL, binary);
	st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = fail(g, res, err);
		g->broken |= lost(res);
		PQclear(res);
		return rc;
	}
	if (out)
		*out = res;
	else
		PQclear(res);
	return 0;
}

static int run(struct pg *g, const char *sql, const struct par *p,
	       PGresult **out, struct cmfs_err *err)
{
	return run_as(g, sql, p, 0, out, err);
}

/* run() under the lock. */
static int run_locked(struct pg *g, const char *sql, const struct par *p,
		      PGresult **out, struct cmfs_err *err)
{
	int rc;

	lock(g);
	rc = run(g, sql, p, out, err);
	unlock(g);
	return rc;
}

/* The most statements run_n() sends at once. */
#define RUN_MAX 4

/*
 * The n statements sql[i] with parameters p[i], sent in one round trip
 * (libpq's pipeline) where run() would take n; the rows of each in
 * out[i] (the caller's to PQclear), or all NULL and an error.  Outside a
 * transaction one implicit transaction holds them all: they read one
 * snapshot, as one statement does.
 */
static int run_n(struct pg *g, int n, const char *const *sql,
		 const struct par *const *p, PGresult **out,
		 struct cmfs_err *err)
{
	char name[RUN_MAX][24];
	PGresult *res = NULL;
	int rc = 0, i, sent = 0;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	revive(g);
	for (i = 0; i < n && !rc; i++)
		rc = prepared(g, sql[i], name[i], &res);
	if (rc < 0) {
		rc = fail(g, res, err);
		g->broken |= lost(res);
		PQclear(res);
		return rc;
	}
	if (rc > 0 || !PQenterPipelineMode(g->conn)) {
		/* No room for the names, or no pipeline: one at a time. */
		for (i = 0, rc = 0; i < n && !rc; i++)
			rc = run(g, sql[i], p[i], &out[i], err);
		goto out;
	}
	for (i = 0; i < n; i++, sent++)
		if (!PQsendQueryPrepared(g->conn, name[i], p[i] ? p[i]->n : 0,
					 p[i] ? p[i]->v : NULL,
					 p[i] ? p[i]->len : NULL,
					 p[i] ? p[i]->fmt : NULL, 0))
			break;
	PQpipelineSync(g->conn);
	/* Each statement's one result, then the NULL that ends it; then the
	 * sync point's. */
	for (i = 0; i < sent; i++) {
		out[i] = PQgetResult(g->conn);
		if (out[i])
			PQclear(PQgetResult(g->conn));
	}
	while ((res = PQgetResult(g->conn)) &&
	       PQresultStatus(res) != PGRES_PIPELINE_SYNC)
		PQclear(res);
	PQclear(res);
	if (!PQexitPipelineMode(g->conn))
		g->broken = 1;
	for (i = 0; i < n && !rc; i++) {
		ExecStatusType st =
			out[i] ? PQresultStatus(out[i]) : PGRES_FATAL_ERROR;

		if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
			rc = fail(g, out[i], err);
			g->broken |= lost(out[i]);
		}
	}
out:
	if (rc)
		for (i = 0; i < n; i++) {
			PQclear(out[i]);
			out[i] = NULL;
		}
	return rc;
}

/* Rows the statement of `res` changed. */
static int64_t changes(PGresult *res)
{
	return strtoll(PQcmdTuples(res), NULL, 10);
}

/* Run `sql`; *n gets how many rows it changed. */
static int run_count(struct pg *g, const char *sql, const struct par *p,
		     int64_t *n, struct cmfs_err *err)
{
	PGresult *res;
	int rc = run_locked(g, sql, p, &res, err);

	*n = rc ? 0 : changes(res);
	PQclear(res);
	return rc;
}

static int64_t col_int(PGresult *res, int row, int col)
{
	return strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static void col_str(char *dst, size_t n, PGresult *res, int row, int col)
{
	snprintf(dst, n, "%s", PQgetvalue(res, row, col));
}

/* A bytea column (text format: hex) as a NUL-terminated copy. */
static char *col_bytes(PGresult *res, int row, int col, size_t *len)
{
	unsigned char *b;
	size_t n = 0;
	char *s;

	b = PQunescapeBytea((const unsigned char *)PQgetvalue(res, row, col),
			    &n);
	if (!b)
		return NULL;
	s = malloc(n + 1);
	if (s) {
		memcpy(s, b, n);
		s[n] = '\0';
	}
	PQfreemem(b);
	if (len)
		*len = n;
	return s;
}

/* One integer: the first column of the first row, 0 when there is none
 * or it is NULL. */
static int scalar(struct pg *g, const char *sql, const struct par *p,
		  int64_t *out, struct cmfs_err *err)
{
	PGresult *res;
	int rc = run_locked(g, sql, p, &res, err);

	*out = 0;
	if (!rc && PQntuples(res) > 0)
		*out = col_int(res, 0, 0);
	PQclear(res);
	return rc;
}

static int scalar_u(struct pg *g, const char *sql, const struct par *p,
		    uint64_t *out, struct cmfs_err *err)
{
	int64_t v;
	int rc = scalar(g, sql, p, &v, err);

	*out = (uint64_t)v;
	return rc;
}

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

static int migrate(struct pg *g, struct cmfs_err *err)
{
	PGresult *res;
	int64_t version = 0;
	size_t m;
	int rc, i;

	if ((rc = run(g, "BEGIN", NULL, NULL, err)))
		return rc;
	rc = run(g, "SELECT pg_advisory_xact_lock(" SCHEMA_LOCK ")", NULL,
		 NULL, err);
	if (!rc)
		rc = run(g,
			 "CREATE TABLE IF NOT EXISTS cmfs_schema("
			 "version integer NOT NULL)",
			 NULL, NULL, err);
	if (!rc && !(rc = run(g, "SELECT version FROM cmfs_schema", NULL,
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
			rc = run(g, migrations[m].sql[i], NULL, NULL, err);
	if (!rc && version < PG_SCHEMA_VERSION) {
		struct par p = { 0 };

		p_int(&p, PG_SCHEMA_VERSION);
		rc = run(g, "DELETE FROM cmfs_schema", NULL, NULL, err);
		if (!rc)
			rc = run(g, "INSERT INTO cmfs_schema VALUES($1)", &p,
				 NULL, err);
	}
	if (!rc)
		return run(g, "COMMIT", NULL, NULL, err);
	run(g, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static void pg_unwatch(void *impl);

static void pg_close(void *impl)
{
	struct pg *g = impl;

	if (!g)
		return;
	pg_unwatch(g);
	PQfinish(g->conn);
	stmts_clear(g);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/*
 * A new connection to `uri` (check its status).  TCP keepalives find a
 * server that went silent (a partition, a host that died) within some
 * 25 s, where the system's defaults take hours: the watch's connection
 * only reads, and would otherwise wait for notifications that never
 * come.  The URI's own parameters, after these, win.
 */
static PGconn *dial(const char *uri)
{
	const char *const keys[] = { "connect_timeout", "keepalives_idle",
				     "keepalives_interval",
				     "keepalives_count", "dbname", NULL };
	const char *const values[] = { CONNECT_TIMEOUT, "10", "5", "3", uri,
				       NULL };

	return PQconnectdbParams(keys, values, 1);
}

/* Connect to `uri`; the schema is the caller's business. */
static int connect_to(struct pg **out, const char *uri, struct cmfs_err *err)
{
	pthread_mutexattr_t a;
	struct pg *g;

	*out = NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	config_url_safe(g->where, sizeof(g->where), uri);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&g->lock, &a);
	pthread_mutexattr_destroy(&a);
	/* A server that does not answer fails the open (and each attempt to
	 * connect again) within seconds, not after the system's TCP timeout;
	 * the URI's own connect_timeout, after it, wins. */
	g->conn = dial(uri);
	if (!g->conn || PQstatus(g->conn) != CONNECTION_OK) {
		char line[512];

		snprintf(line, sizeof(line), "%s",
			 g->conn ? PQerrorMessage(g->conn) : "out of memory");
		line[strcspn(line, "\n")] = '\0';
		cmfs_err_set(err, -EIO, "catalog %s: cannot connect: %s",
			     g->where, line);
		pg_close(g);
		return -EIO;
	}
	session(g);
	g->pid = PQbackendPID(g->conn);
	snprintf(g->uri, sizeof(g->uri), "%s", uri);
	*out = g;
	return 0;
}

/*
 * A mount's (and cmfs import's) open: the schema created or migrated.
 * Any number of hosts mount one database at once.
 */
static int pg_open(void **impl, const char *uri, struct cmfs_err *err)
{
	struct pg *g;
	int rc = connect_to(&g, uri, err);

	if (rc)
		return rc;
	if ((rc = migrate(g, err))) {
		pg_close(g);
		return rc;
	}
	*impl = g;
	return 0;
}

/* Only a database that holds a cmfs schema; `rdonly`: every transaction
 * of this connection is read only, and the schema is not migrated. */
static int pg_open_existing(void **impl, const char *uri, int rdonly,
			    struct cmfs_err *err)
{
	struct pg *g;
	int64_t version = 0;
	int rc = connect_to(&g, uri, err);

	if (rc)
		return rc;
	rc = scalar(g, "SELECT (to_regclass('cmfs_schema') IS NOT NULL)::int",
		    NULL, &version, err);
	if (!rc && version)
		rc = scalar(g, "SELECT COALESCE(max(version), 0) FROM cmfs_schema",
			    NULL, &version, err);
	if (!rc && (version == 0 || version > PG_SCHEMA_VERSION))
		rc = cmfs_err_set(err, -EPROTO,
				  version == 0
					  ? "catalog %s: no cmfs schema (an "
					    "empty or foreign database)"
					  : "catalog %s: schema %d is newer "
					    "than this cmfs",
				  g->where, (int)version);
	if (!rc && rdonly) {
		g->rdonly = 1;
		rc = run(g, "SET default_transaction_read_only = on", NULL,
			 NULL, err);
	}
	if (!rc && !rdonly)
		rc = migrate(g, err);
	if (rc) {
		pg_close(g);
		return rc;
	}
	*impl = g;
	return 0;
}

static int begin_as(struct pg *g, const char *sql, struct cmfs_err *err)
{
	int rc = 0;

	lock(g);
	if (g->depth == 0)
		rc = run(g, sql, NULL, NULL, err);
	if (rc) {
		unlock(g);
		return rc;
	}
	g->depth++;
	return 0;
}

static int pg_begin(void *impl, struct cmfs_err *err)
{
	return begin_as(impl, "BEGIN", err);
}

/* One snapshot for the whole transaction (SQLite's read transaction). */
static int pg_begin_read(void *impl, struct cmfs_err *err)
{
	return begin_as(impl,
			"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
			err);
}

static int pg_end(void *impl, int rc, struct cmfs_err *err)
{
	struct pg *g = impl;

	if (--g->depth == 0) {
		if (rc == 0)
			rc = run(g, "COMMIT", NULL, NULL, err);
		if (rc)
			run(g, "ROLLBACK", NULL, NULL, NULL);
	}
	unlock(g);
	return rc;
}

/* A statement inside a transaction of its own, unless one is open. */
static int txn_begin(struct pg *g, struct cmfs_err *err)
{
	return pg_begin(g, err);
}

/* What PostgreSQL can check from here: the connection, the schema's
 * version and the counters the triggers keep. */
static int pg_check(void *impl, char **out, struct cmfs_err *err)
{
	struct pg *g = impl;
	int64_t bad = 0;
	int rc;

	rc = scalar(g,
		    "SELECT count(*) FROM envs WHERE"
		    " nart <> (SELECT count(*) FROM artifacts"
		    " WHERE env_id = envs.id) OR ntab <> (SELECT count(*)"
		    " FROM tables WHERE env_id = envs.id)",
		    NULL, &bad, err);
	if (rc)
		return rc;
	if (bad) {
		char line[128];

		snprintf(line, sizeof(line),
			 "%lld environments' counts differ from their rows",
			 (long long)bad);
		*out = strdup(line);
	} else {
		*out = strdup("ok");
	}
	return *out ? 0 : cmfs_err_set(err, -ENOMEM, "out of memory");
}

static void row_env(struct catalog_env *e, PGresult *res, int r)
{
	memset(e, 0, sizeof(*e));
	e->id = col_int(res, r, 0);
	col_str(e->name, sizeof(e->name), res, r, 1);
	e->ctime = col_int(res, r, 2);
	e->uid = (uint32_t)col_int(res, r, 3);
}

static void row_version(struct catalog_version *v, PGresult *res, int r,
			int i)
{
	v->artifact_id = col_int(res, r, i);
	v->n = col_int(res, r, i + 1);
	col_str(v->sha256, sizeof(v->sha256), res, r, i + 2);
	v->size = (uint64_t)col_int(res, r, i + 3);
	v->mtime = col_int(res, r, i + 4);
	v->uid = (uint32_t)col_int(res, r, i + 5);
	v->insp = col_int(res, r, i + 6);
}

static void row_artifact(struct catalog_artifact *a, PGresult *res, int r)
{
	memset(a, 0, sizeof(*a));
	a->id = col_int(res, r, 0);
	a->env_id = col_int(res, r, 1);
	col_str(a->name, sizeof(a->name), res, r, 2);
	a->latest.artifact_id = a->id;
	a->latest.n = col_int(res, r, 3);
	col_str(a->latest.sha256, sizeof(a->latest.sha256), res, r, 4);
	a->latest.size = (uint64_t)col_int(res, r, 5);
	a->latest.mtime = col_int(res, r, 6);
	a->latest.uid = (uint32_t)col_int(res, r, 7);
	a->nversions = col_int(res, r, 8);
	a->latest.insp = col_int(res, r, 9);
}

static void row_table(struct catalog_table *t, PGresult *res, int r)
{
	memset(t, 0, sizeof(*t));
	t->id = col_int(res, r, 0);
	t->env_id = col_int(res, r, 1);
	col_str(t->name, sizeof(t->name), res, r, 2);
	t->size = (uint64_t)col_int(res, r, 3);
	t->mtime = col_int(res, r, 4);
	t->uid = (uint32_t)col_int(res, r, 5);
}

/* Adapters so the row readers fit one callback type. */
static void rd_env(void *o, PGresult *res, int r) { row_env(o, res, r); }
static void rd_art(void *o, PGresult *res, int r) { row_artifact(o, res, r); }
static void rd_ver(void *o, PGresult *res, int r)
{
	row_version(o, res, r, 0);
}
static void rd_table(void *o, PGresult *res, int r) { row_table(o, res, r); }

/* At most one row of `sql`, read with `row` into out; -ENOENT if none. */
static int one(struct pg *g, const char *sql, const struct par *p,
	       void (*row)(void *out, PGresult *res, int r), void *out,
	       struct cmfs_err *err)
{
	PGresult *res;
	int rc = run_locked(g, sql, p, &res, err);

	if (!rc) {
		if (PQntuples(res) > 0)
			row(out, res, 0);
		else
			rc = -ENOENT;
	}
	PQclear(res);
	return rc;
}

/*
 * Each row of `sql`, read with `row` into `tmp` and passed to `fn`.  The
 * rows are all read before the first call (fn may call the catalog).
 */
static int walk(struct pg *g, const char *sql, const struct par *p,
		void (*row)(void *out, PGresult *res, int r), void *tmp,
		int (*fn)(void *arg, const void *row), void *arg,
		struct cmfs_err *err)
{
	PGresult *res;
	int rc = run_locked(g, sql, p, &res, err), i;

	for (i = 0; !rc && i < PQntuples(res); i++) {
		row(tmp, res, i);
		rc = fn(arg, tmp);
	}
	PQclear(res);
	return rc;
}

/* A row of text columns, for walk_text(). */
struct text_row {
	int ncol;
	const char *v[4];
	int (*fn)(void *arg, const char *const *row);
	void *arg;
};

static void rd_text(void *out, PGresult *res, int r)
{
	struct text_row *t = out;
	int i;

	for (i = 0; i < t->ncol; i++)
		t->v[i] = PQgetisnull(res, r, i) ? NULL
						 : PQgetvalue(res, r, i);
}

static int call_text(void *arg, const void *row)
{
	const struct text_row *t = row;

	(void)arg;
	return t->fn(t->arg, t->v);
}

static int walk_text(struct pg *g, const char *sql, const struct par *p,
		     int ncol, int (*fn)(void *arg, const char *const *row),
		     void *arg, struct cmfs_err *err)
{
	struct text_row t = { ncol, { NULL }, fn, arg };

	return walk(g, sql, p, rd_text, &t, call_text, NULL, err);
}

/* Statements whose one parameter is a row's id. */
static int exec_id(struct pg *g, const char *sql, int64_t id,
		   struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, id);
	return run_locked(g, sql, &p, NULL, err);
}

static int scalar_id(struct pg *g, const char *sql, int64_t id,
		     uint64_t *out, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, id);
	return scalar_u(g, sql, &p, out, err);
}

static int walk_id(struct pg *g, const char *sql, int64_t id,
		   void (*row)(void *out, PGresult *res, int r), void *tmp,
		   int (*fn)(void *arg, const void *row), void *arg,
		   struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, id);
	return walk(g, sql, &p, row, tmp, fn, arg, err);
}

static int pg_env_add(void *impl, const char *name, uint32_t uid, int64_t now,
		      struct catalog_env *out, struct cmfs_err *err)
{
	struct par p = { 0 };
	int64_t id;
	int rc;

	p_str(&p, name);
	p_int(&p, now);
	p_int(&p, uid);
	rc = scalar(impl,
		    "INSERT INTO envs(name, ctime, uid) VALUES($1, $2, $3)"
		    " RETURNING id",
		    &p, &id, err);
	if (!rc && out) {
		memset(out, 0, sizeof(*out));
		out->id = id;
		snprintf(out->name, sizeof(out->name), "%s", name);
		out->ctime = now;
		out->uid = uid;
	}
	return rc;
}

static int pg_env_get(void *impl, const char *name, struct catalog_env *out,
		      struct cmfs_err *err)
{
	struct par p = { 0 };

	p_str(&p, name);
	return one(impl, "SELECT id, name, ctime, uid FROM envs WHERE name = $1",
		   &p, rd_env, out, err);
}

static int pg_env_del(void *impl, int64_t env_id, struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 };
	int64_t busy = 0;
	int rc;

	p_int(&p, env_id);
	lock(g);
	rc = scalar(g,
		    "SELECT (EXISTS(SELECT 1 FROM artifacts WHERE env_id = $1)"
		    " OR EXISTS(SELECT 1 FROM tables WHERE env_id = $1))::int",
		    &p, &busy, err);
	if (!rc && busy)
		rc = -ENOTEMPTY;
	if (!rc)
		rc = run(g, "DELETE FROM envs WHERE id = $1", &p, NULL, err);
	unlock(g);
	return rc;
}

static int pg_env_list(void *impl,
		       int (*fn)(void *arg, const struct catalog_env *e),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_env e;

	return walk(impl, "SELECT id, name, ctime, uid FROM envs ORDER BY name",
		    NULL, rd_env, &e, (int (*)(void *, const void *))fn, arg,
		    err);
}

static int pg_art_get(void *impl, int64_t env_id, const char *name,
		      struct catalog_artifact *out, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, env_id);
	p_str(&p, name);
	return one(impl,
		   "SELECT " ART_COLS " FROM artifacts a" ART_LATEST
		   " WHERE a.env_id = $1 AND a.name = $2",
		   &p, rd_art, out, err);
}

static int pg_art_add(void *impl, int64_t env_id, const char *name,
		      int64_t *out, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, env_id);
	p_str(&p, name);
	return scalar(impl,
		      "INSERT INTO artifacts(env_id, name) VALUES($1, $2)"
		      " RETURNING id",
		      &p, out, err);
}

static int pg_art_del(void *impl, int64_t art_id, struct cmfs_err *err)
{
	return exec_id(impl, "DELETE FROM artifacts WHERE id = $1", art_id, err);
}

/*
 * Rename, keeping version numbers unique to their name: the SQLite
 * backend's sq_art_rename() says how, step by step; the same steps here.
 */
static int pg_art_rename(void *impl, int64_t art_id, const char *name,
			 struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par a = { 0 }, p = { 0 }, q = { 0 };
	int64_t env_id = 0, taken = 0, low = 0, shift;
	int rc;

	p_int(&a, art_id);
	p_int(&p, art_id);
	p_str(&p, name);
	if ((rc = txn_begin(g, err)))
		return rc;
	rc = scalar(g,
		    "SELECT r.next_n FROM retired r JOIN envs e ON"
		    " e.name = r.env JOIN artifacts a ON a.env_id = e.id"
		    " WHERE a.id = $1 AND r.name = $2"
		    " AND r.holder IS DISTINCT FROM a.id",
		    &p, &taken, err);
	if (!rc)
		rc = scalar(g,
			    "SELECT min(n) FROM versions WHERE"
			    " artifact_id = $1",
			    &a, &low, err);
	if (!rc)
		rc = run(g,
			 "INSERT INTO retired(env, name, next_n, holder)"
			 " SELECT e.name, a.name, greatest(a.next_n,"
			 " COALESCE((SELECT next_n FROM retired r WHERE"
			 " r.env = e.name AND r.name = a.name), 1)), a.id"
			 " FROM artifacts a JOIN envs e ON e.id = a.env_id"
			 " WHERE a.id = $1 ON CONFLICT(env, name) DO UPDATE"
			 " SET next_n = excluded.next_n,"
			 " holder = excluded.holder",
			 &a, NULL, err);
	if (!rc)
		rc = scalar(g,
			    "UPDATE artifacts SET name = $2 WHERE id = $1"
			    " RETURNING env_id",
			    &p, &env_id, err);
	if (rc || !env_id)
		goto end;
	shift = low && taken > low ? taken - low : 0;
	p_int(&q, art_id);
	p_int(&q, shift);
	/* Through negative numbers: the key is (artifact, n). */
	if (shift)
		rc = run(g,
			 "UPDATE versions SET n = -(n + $2)"
			 " WHERE artifact_id = $1",
			 &q, NULL, err);
	if (!rc && shift)
		rc = run(g,
			 "UPDATE versions SET n = -n WHERE"
			 " artifact_id = $1 AND n < 0",
			 &a, NULL, err);
	if (!rc)
		rc = run(g,
			 "UPDATE artifacts SET next_n = next_n + $2"
			 " WHERE id = $1",
			 &q, NULL, err);
	q.n = 1;
	p_int(&q, taken);
	if (!rc)
		rc = run(g,
			 "UPDATE artifacts SET next_n = greatest(next_n, $2)"
			 " WHERE id = $1",
			 &q, NULL, err);
	if (!rc) {
		struct par d = { 0 };

		p_int(&d, env_id);
		p_str(&d, name);
		rc = run(g,
			 "DELETE FROM retired WHERE name = $2 AND env ="
			 " (SELECT name FROM envs WHERE id = $1)",
			 &d, NULL, err);
	}
end:
	return pg_end(g, rc, err);
}

static int pg_art_count(void *impl, int64_t env_id, uint64_t *out,
			struct cmfs_err *err)
{
	return scalar_id(impl, "SELECT nart FROM envs WHERE id = $1", env_id,
			 out, err);
}

static int pg_art_list(void *impl, int64_t env_id,
		       int (*fn)(void *arg, const struct catalog_artifact *a),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_artifact a;

	return walk_id(impl,
		       "SELECT " ART_COLS " FROM artifacts a" ART_LATEST
		       " WHERE a.env_id = $1 ORDER BY a.name",
		       env_id, rd_art, &a, (int (*)(void *, const void *))fn,
		       arg, err);
}

static int pg_art_by_label(void *impl, int64_t env_id, const char *key,
			   const char *value,
			   int (*fn)(void *arg,
				     const struct catalog_artifact *a),
			   void *arg, struct cmfs_err *err)
{
	struct catalog_artifact a;
	struct par p = { 0 };

	p_str(&p, key);
	p_bin(&p, value, strlen(value));
	p_int(&p, env_id);
	return walk(impl,
		    "SELECT " ART_COLS " FROM labels l"
		    " JOIN artifacts a ON a.id = l.artifact_id" ART_LATEST
		    " WHERE l.key = $1 AND l.value = $2 AND a.env_id = $3"
		    " ORDER BY a.name",
		    &p, rd_art, &a, (int (*)(void *, const void *))fn, arg,
		    err);
}

/*
 * The number comes from the artifact's row, raised in the same statement
 * that inserts the version: the UPDATE locks the row until commit, so a
 * host adding a version to the same artifact meanwhile waits, then reads
 * the raised number.  No gap, no duplicate.
 */
static int pg_ver_add(void *impl, int64_t art_id, const char *sha256,
		      uint64_t size, int64_t mtime, uint32_t uid,
		      struct catalog_version *out, struct cmfs_err *err)
{
	struct par p = { 0 };
	int64_t n = 0;
	int rc;

	p_int(&p, art_id);
	p_str(&p, sha256);
	p_int(&p, (int64_t)size);
	p_int(&p, mtime);
	p_int(&p, uid);
	rc = scalar(impl,
		    "WITH a AS (UPDATE artifacts SET next_n = next_n + 1"
		    " WHERE id = $1 RETURNING next_n - 1 AS n)"
		    " INSERT INTO versions(" VER_COLS ")"
		    " SELECT $1, a.n, $2, $3, $4, $5, (SELECT id FROM"
		    " inspections WHERE sha256 = $2) FROM a RETURNING n",
		    &p, &n, err);
	if (!rc && !n)
		rc = -ENOENT;
	if (!rc && out) {
		out->artifact_id = art_id;
		out->n = n;
		snprintf(out->sha256, sizeof(out->sha256), "%s", sha256);
		out->size = size;
		out->mtime = mtime;
		out->uid = uid;
		out->insp = 0; /* looked up by the blob */
	}
	return rc;
}

static int pg_ver_get(void *impl, int64_t art_id, int64_t n,
		      struct catalog_version *out, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, art_id);
	p_int(&p, n);
	return one(impl,
		   "SELECT " VER_COLS " FROM versions WHERE artifact_id = $1"
		   " AND n = $2",
		   &p, rd_ver, out, err);
}

static int pg_ver_del(void *impl, int64_t art_id, int64_t n,
		      struct cmfs_err *err)
{
	struct par p = { 0 };
	int64_t k;
	int rc;

	p_int(&p, art_id);
	p_int(&p, n);
	rc = run_count(impl,
		       "DELETE FROM versions WHERE artifact_id = $1 AND n = $2",
		       &p, &k, err);
	return !rc && !k ? -ENOENT : rc;
}

static int pg_ver_list(void *impl, int64_t art_id,
		       int (*fn)(void *arg, const struct catalog_version *v),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_version v;

	return walk_id(impl,
		       "SELECT " VER_COLS " FROM versions WHERE artifact_id = $1"
		       " ORDER BY n",
		       art_id, rd_ver, &v, (int (*)(void *, const void *))fn,
		       arg, err);
}

static int pg_blob_refs(void *impl, const char *sha256, uint64_t *out,
			struct cmfs_err *err)
{
	struct par p = { 0 };

	p_str(&p, sha256);
	return scalar_u(impl, "SELECT count(*) FROM versions WHERE sha256 = $1",
			&p, out, err);
}

static int pg_blob_total(void *impl, uint64_t *out, struct cmfs_err *err)
{
	return scalar_u(impl,
			"SELECT COALESCE(sum(size), 0) FROM (SELECT DISTINCT"
			" sha256, size FROM versions) d",
			NULL, out, err);
}

static int pg_ver_by_sha(void *impl, const char *sha256,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_str(&p, sha256);
	return walk_text(impl,
			 "SELECT e.name, a.name, v.n FROM versions v"
			 " JOIN artifacts a ON a.id = v.artifact_id"
			 " JOIN envs e ON e.id = a.env_id WHERE v.sha256 = $1"
			 " ORDER BY e.name, a.name, v.n",
			 &p, 3, fn, arg, err);
}

/*
 * Durability is the server's: every commit returns once PostgreSQL has
 * it on disk (its synchronous_commit), so there is nothing to set,
 * checkpoint or sync from here.
 */
static int pg_set_sync(void *impl, int full, struct cmfs_err *err)
{
	(void)impl;
	(void)full;
	(void)err;
	return 0;
}

static int pg_nothing(void *impl, struct cmfs_err *err)
{
	(void)impl;
	(void)err;
	return 0;
}

static int pg_env_recount(void *impl, struct cmfs_err *err)
{
	return run_locked(impl, RECOUNT, NULL, NULL, err);
}

/* The inspection row a version's blob has (NULL: none). */
#define INSP_OF_VERSION                                                       \
	"(SELECT id FROM inspections i WHERE i.sha256 = versions.sha256)"

static int pg_insp_links(void *impl, int relink, uint64_t *out,
			 struct cmfs_err *err)
{
	struct pg *g = impl;
	int rc;

	lock(g);
	rc = scalar_u(g,
		      "SELECT count(*) FROM versions WHERE insp IS DISTINCT"
		      " FROM " INSP_OF_VERSION " AND " INSP_OF_VERSION
		      " IS NOT NULL",
		      NULL, out, err);
	if (!rc && relink && *out)
		rc = run(g,
			 "UPDATE versions SET insp = " INSP_OF_VERSION
			 " WHERE insp IS DISTINCT FROM " INSP_OF_VERSION,
			 NULL, NULL, err);
	unlock(g);
	return rc;
}

/* Statement `sql` with one parameter, a sha256; *n rows changed. */
static int run_sha(struct pg *g, const char *sql, const char *sha256,
		   int64_t *n, struct cmfs_err *err)
{
	struct par p = { 0 };
	int64_t k;

	p_str(&p, sha256);
	return run_count(g, sql, &p, n ? n : &k, err);
}

static int pg_unsynced_add(void *impl, const char *sha256,
			   struct cmfs_err *err)
{
	return run_sha(impl, "INSERT INTO unsynced(sha256) VALUES($1)", sha256,
		       NULL, err);
}

static int pg_unsynced_mark(void *impl, int64_t *out, struct cmfs_err *err)
{
	return scalar(impl, "SELECT COALESCE(max(seq), 0) FROM unsynced",
		      NULL, out, err);
}

static int pg_unsynced_clear(void *impl, int64_t upto, struct cmfs_err *err)
{
	return exec_id(impl, "DELETE FROM unsynced WHERE seq <= $1", upto, err);
}

static int pg_unsynced_list(void *impl,
			    int (*fn)(void *arg, const char *const *row),
			    void *arg, struct cmfs_err *err)
{
	return walk_text(impl, "SELECT DISTINCT sha256 FROM unsynced", NULL, 1,
			 fn, arg, err);
}

static int pg_loose_add(void *impl, const char *sha256, struct cmfs_err *err)
{
	return run_sha(impl,
		       "INSERT INTO loose(sha256) VALUES($1)"
		       " ON CONFLICT DO NOTHING",
		       sha256, NULL, err);
}

static int pg_loose_del(void *impl, const char *sha256, struct cmfs_err *err)
{
	return run_sha(impl, "DELETE FROM loose WHERE sha256 = $1", sha256,
		       NULL, err);
}

static int pg_loose_list(void *impl,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	return walk_text(impl, "SELECT sha256 FROM loose", NULL, 1, fn, arg,
			 err);
}

static int pg_insp_stale(void *impl,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, JAR_INSPECTOR);
	return walk_text(impl,
			 "SELECT i.sha256, s.size FROM inspections i,"
			 " LATERAL (SELECT size FROM versions v"
			 " WHERE v.sha256 = i.sha256 LIMIT 1) s"
			 " WHERE i.inspector < $1",
			 &p, 2, fn, arg, err);
}

static int pg_inline_put(void *impl, const char *sha256, const void *data,
			 size_t len, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_str(&p, sha256);
	p_bin(&p, data, len);
	return run_locked(impl,
			  "INSERT INTO inline_blobs(sha256, bytes)"
			  " VALUES($1, $2) ON CONFLICT(sha256) DO NOTHING",
			  &p, NULL, err);
}

static int pg_inline_get(void *impl, const char *sha256, void **out,
			 size_t *len, struct cmfs_err *err)
{
	struct par p = { 0 };
	PGresult *res;
	int rc;

	*out = NULL;
	*len = 0;
	p_str(&p, sha256);
	rc = run_locked(impl, "SELECT bytes FROM inline_blobs WHERE sha256 = $1",
			&p, &res, err);
	if (!rc && PQntuples(res) == 0)
		rc = -ENOENT;
	/* col_bytes gives one byte more: an empty blob is not a NULL. */
	if (!rc && !(*out = col_bytes(res, 0, 0, len)))
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
	PQclear(res);
	return rc;
}

static int pg_inline_del(void *impl, const char *sha256, struct cmfs_err *err)
{
	int64_t n = 0;
	int rc = run_sha(impl, "DELETE FROM inline_blobs WHERE sha256 = $1",
			 sha256, &n, err);

	return !rc && !n ? -ENOENT : rc;
}

static int pg_inline_list(void *impl,
			  int (*fn)(void *arg, const char *const *row),
			  void *arg, struct cmfs_err *err)
{
	return walk_text(impl,
			 "SELECT sha256, length(bytes) FROM inline_blobs"
			 " ORDER BY sha256",
			 NULL, 2, fn, arg, err);
}

/*
 * The blob's lock first, then whether the blob is here: a deletion that
 * frees it (cmfs_ver_del) takes the same lock before it looks for
 * versions, so either it freed the blob before (and committed: the
 * SELECT, a statement of its own, sees the row gone and the bytes go in
 * again) or it waits for this transaction and then sees its version.
 * Without the lock, each side's snapshot could miss the other's row.
 */
static int pg_blob_put(void *impl, const char *sha256, int fd, uint64_t size,
		       struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 };
	char *chunk = NULL;
	uint64_t off = 0;
	int64_t have = 0;
	ssize_t n;
	int rc, seq;

	if ((rc = txn_begin(g, err)))
		return rc;
	p_str(&p, sha256);
	rc = run(g, "SELECT pg_advisory_xact_lock(" BLOB_LOCK ", hashtext($1))",
		 &p, NULL, err);
	if (!rc)
		rc = scalar(g, "SELECT count(*) FROM blobs WHERE sha256 = $1",
			    &p, &have, err);
	if (rc || have)
		return pg_end(g, rc, err);
	p_int(&p, (int64_t)size);
	rc = run(g, "INSERT INTO blobs(sha256, size) VALUES($1, $2)", &p, NULL,
		 err);
	if (!rc && !(chunk = malloc(CHUNK_SIZE)))
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
	for (seq = 0; !rc && (off < size || seq == 0); seq++) {
		size_t want = size - off < CHUNK_SIZE ? (size_t)(size - off)
						      : CHUNK_SIZE;
		struct par q = { 0 };

		n = store_pread_full(fd, chunk, want, (off_t)off);
		if (n != (ssize_t)want) {
			rc = cmfs_err_set(err, n < 0 ? (int)n : -EIO,
					  "blob %s: cannot read its bytes: %s",
					  sha256,
					  strerror(n < 0 ? (int)-n : EIO));
			break;
		}
		p_str(&q, sha256);
		p_int(&q, seq);
		p_bin(&q, chunk, want);
		rc = run(g,
			 "INSERT INTO blob_chunks(sha256, seq, bytes)"
			 " VALUES($1, $2, $3)",
			 &q, NULL, err);
		off += want;
	}
	free(chunk);
	return pg_end(g, rc, err);
}

/* Chunk by chunk, each a statement of its own: memory for one chunk. */
static int pg_blob_get(void *impl, const char *sha256, int fd, uint64_t *size,
		       struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 };
	PGresult *res;
	int64_t want = 0, seq, nchunks = 0;
	uint64_t off = 0;
	int rc;

	*size = 0;
	p_str(&p, sha256);
	if ((rc = begin_as(g, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
			   err)))
		return rc;
	rc = run(g,
		 "SELECT size, (SELECT count(*) FROM blob_chunks WHERE"
		 " sha256 = $1) FROM blobs WHERE sha256 = $1",
		 &p, &res, err);
	if (!rc && PQntuples(res) == 0)
		rc = -ENOENT;
	if (!rc) {
		want = col_int(res, 0, 0);
		nchunks = col_int(res, 0, 1);
	}
	PQclear(res);
	for (seq = 0; !rc && seq < nchunks; seq++) {
		struct par q = { 0 };
		const char *b;
		int len;

		p_str(&q, sha256);
		p_int(&q, seq);
		rc = run_as(g,
			    "SELECT bytes FROM blob_chunks WHERE sha256 = $1"
			    " AND seq = $2::int",
			    &q, 1, &res, err);
		if (!rc && PQntuples(res) != 1)
			rc = cmfs_err_set(err, -EIO,
					  "blob %s: chunk %" PRId64
					  " is missing in the catalog",
					  sha256, seq);
		if (!rc) {
			b = PQgetvalue(res, 0, 0);
			len = PQgetlength(res, 0, 0);
			int e = store_pwrite_full(fd, b, (size_t)len,
						  (off_t)off);

			if (e)
				rc = cmfs_err_set(err, e,
						  "blob %s: cannot write its "
						  "copy: %s",
						  sha256, strerror(-e));
			off += (uint64_t)len;
		}
		PQclear(res);
	}
	if (!rc && off != (uint64_t)want)
		rc = cmfs_err_set(err, -EIO,
				  "blob %s: %llu bytes in the catalog, %lld "
				  "expected",
				  sha256, (unsigned long long)off,
				  (long long)want);
	*size = off;
	return pg_end(g, rc, err);
}

static int pg_blob_list(void *impl,
			int (*fn)(void *arg, const char *const *row),
			void *arg, struct cmfs_err *err)
{
	return walk_text(impl, "SELECT sha256, size FROM blobs ORDER BY sha256",
			 NULL, 2, fn, arg, err);
}

static int pg_label_set(void *impl, int64_t art_id, const char *key,
			const char *value, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, art_id);
	p_str(&p, key);
	p_bin(&p, value, strlen(value));
	return run_locked(impl,
			  "INSERT INTO labels(artifact_id, key, value)"
			  " VALUES($1, $2, $3) ON CONFLICT(artifact_id, key)"
			  " DO UPDATE SET value = excluded.value",
			  &p, NULL, err);
}

static int pg_label_del(void *impl, int64_t art_id, const char *key,
			struct cmfs_err *err)
{
	struct par p = { 0 };
	int64_t n;
	int rc;

	p_int(&p, art_id);
	p_str(&p, key);
	rc = run_count(impl,
		       "DELETE FROM labels WHERE artifact_id = $1 AND key = $2",
		       &p, &n, err);
	return !rc && !n ? -ENODATA : rc;
}

static int pg_label_get(void *impl, int64_t art_id, const char *key,
			char **out, struct cmfs_err *err)
{
	struct par p = { 0 };
	PGresult *res;
	int rc;

	p_int(&p, art_id);
	p_str(&p, key);
	rc = run_locked(impl,
			"SELECT value FROM labels WHERE artifact_id = $1"
			" AND key = $2",
			&p, &res, err);
	if (!rc && PQntuples(res) == 0)
		rc = -ENODATA;
	if (!rc && !(*out = col_bytes(res, 0, 0, NULL)))
		rc = -ENOMEM;
	PQclear(res);
	return rc;
}

static int pg_label_list(void *impl, int64_t art_id,
			 int (*fn)(void *arg, const char *key,
				   const char *value),
			 void *arg, struct cmfs_err *err)
{
	struct par p = { 0 };
	PGresult *res;
	int rc, i;

	p_int(&p, art_id);
	rc = run_locked(impl,
			"SELECT key, value FROM labels WHERE artifact_id = $1"
			" ORDER BY key",
			&p, &res, err);
	for (i = 0; !rc && i < PQntuples(res); i++) {
		char *v = col_bytes(res, i, 1, NULL);

		rc = v ? fn(arg, PQgetvalue(res, i, 0), v) : -ENOMEM;
		free(v);
	}
	PQclear(res);
	return rc;
}

/* Where put_option writes: the connection, the inspection's row, the
 * error. */
struct opt_dst {
	struct pg *g;
	int64_t insp;
	struct cmfs_err *err;
};

/* One row of factory_options; o NULL for a 'prefix' or 'unknown' row. */
static int put_option(void *arg, size_t factory, const char *role,
		      const char *key, const struct options_option *o)
{
	struct opt_dst *d = arg;
	struct par p = { 0 };

	p_int(&p, d->insp);
	p_int(&p, (int64_t)factory);
	p_str(&p, role);
	p_str(&p, key);
	p_str(&p, o ? o->type : NULL);
	p_int(&p, o ? o->list : 0);
	p_str(&p, o ? o->values : NULL);
	p_str(&p, o ? o->defval : NULL);
	p_str(&p, o ? o->deprecated : NULL);
	p_str(&p, o ? o->fallback : NULL);
	p_int(&p, o ? o->forward : 0);
	return run(d->g,
		   "INSERT INTO factory_options(insp, factory, role, key, type,"
		   " list, vals, defval, deprecated, fallback, forward)"
		   " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
		   " ON CONFLICT DO NOTHING",
		   &p, NULL, d->err);
}

/* A row keeps its number when it is put again (fsck): versions name it. */
static int pg_insp_put(void *impl, const char *sha256,
		       const struct jar_report *r, struct cmfs_err *err)
{
	struct pg *g = impl;
	struct buf ext = BUF_INIT((size_t)1 << 30);
	struct par p = { 0 }, q = { 0 };
	struct opt_dst d = { g, 0, err };
	int64_t id = 0;
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < r->nexternal; i++)
		rc = buf_printf(&ext, "%s\n", r->external[i]);
	if (rc) {
		rc = cmfs_err_set(err, rc, "out of memory");
		goto out;
	}
	p_str(&p, sha256);
	p_str(&p, r->error);
	p_str(&p, buf_str(&ext));
	p_int(&p, JAR_INSPECTOR);
	if ((rc = txn_begin(g, err)))
		goto out;
	rc = scalar(g,
		    "INSERT INTO inspections(sha256, error, external,"
		    " inspector, options_read) VALUES($1, $2, $3, $4, 1)"
		    " ON CONFLICT(sha256) DO UPDATE SET error = excluded.error,"
		    " external = excluded.external,"
		    " inspector = excluded.inspector, options_read = 1"
		    " RETURNING id",
		    &p, &id, err);
	if (!rc)
		rc = exec_id(g, "DELETE FROM insp_factories WHERE insp = $1",
			     id, err);
	if (!rc)
		rc = exec_id(g, "DELETE FROM factory_options WHERE insp = $1",
			     id, err);
	for (i = 0; !rc && i < r->nfactories; i++) {
		const struct jar_factory *f = &r->factories[i];
		struct par fp = { 0 };

		p_int(&fp, id);
		p_int(&fp, (int64_t)i);
		p_str(&fp, jar_kind_name(f->kind));
		p_str(&fp, f->identifier);
		p_str(&fp, f->cls);
		rc = run(g,
			 "INSERT INTO insp_factories(insp, seq, kind,"
			 " identifier, class) VALUES($1, $2, $3, $4, $5)",
			 &fp, NULL, err);
	}
	d.insp = id;
	if (!rc)
		rc = catalog_rows_options_each(r, put_option, &d);
	/* Versions of this blob added before it was inspected. */
	p_str(&q, sha256);
	p_int(&q, id);
	if (!rc)
		rc = run(g,
			 "UPDATE versions SET insp = $2 WHERE sha256 = $1"
			 " AND insp IS DISTINCT FROM $2",
			 &q, NULL, err);
	rc = pg_end(g, rc, err);
out:
	buf_release(&ext);
	return rc;
}

/* An inspection into r: res[0] its row (error, external, id,
 * options_read), res[1] its factories, res[2] their options. */
static int read_insp(PGresult *const *res, struct jar_report *r,
		     struct cmfs_err *err)
{
	PGresult *rows;
	int rc = 0, i;

	if (!PQgetisnull(res[0], 0, 0) &&
	    !(r->error = strdup(PQgetvalue(res[0], 0, 0))))
		rc = -ENOMEM;
	if (!rc)
		rc = catalog_rows_external(r, PQgetvalue(res[0], 0, 1));
	if (rc)
		return cmfs_err_set(err, rc, "out of memory");
	rows = res[1];
	for (i = 0; !rc && i < PQntuples(rows); i++)
		rc = catalog_rows_factory_add(
			r, PQgetvalue(rows, i, 0),
			PQgetisnull(rows, i, 1) ? NULL : PQgetvalue(rows, i, 1),
			PQgetvalue(rows, i, 2));
	if (rc)
		return cmfs_err_set(err, rc, "out of memory");
	if (!col_int(res[0], 0, 3)) {
		/* Inspected before options were kept: none is checked. */
		catalog_rows_options_unknown(r);
		return 0;
	}
	rows = res[2];
	for (i = 0; !rc && i < PQntuples(rows); i++) {
		struct options_option v;
		int c;

		memset(&v, 0, sizeof(v));
		for (c = 3; c < 10; c++)
			if (c != 4 && c != 9 && !PQgetisnull(rows, i, c))
				*(c == 3   ? &v.type
				  : c == 5 ? &v.values
				  : c == 6 ? &v.defval
				  : c == 7 ? &v.deprecated
					   : &v.fallback) =
					PQgetvalue(rows, i, c);
		v.list = (int)col_int(rows, i, 4);
		v.forward = (int)col_int(rows, i, 9);
		rc = catalog_rows_option_read(r, col_int(rows, i, 0),
					      PQgetvalue(rows, i, 1),
					      PQgetvalue(rows, i, 2), &v);
	}
	if (rc)
		return cmfs_err_set(err, rc, "out of memory");
	catalog_rows_options_sort(r);
	return 0;
}

/* By the blob (the row a version names, `id`, is found by it too). */
static int pg_insp_get(void *impl, const char *sha256, int64_t id,
		       int options, struct jar_report **out,
		       struct cmfs_err *err)
{
	/* The row, its factories and their options: one round trip. */
	static const char *const sql[3] = {
		"SELECT error, external, id, options_read FROM inspections"
		" WHERE sha256 = $1",
		"SELECT kind, identifier, class FROM insp_factories"
		" WHERE insp = (SELECT id FROM inspections WHERE sha256 = $1)"
		" ORDER BY seq",
		"SELECT factory, role, key, type, list, vals, defval,"
		" deprecated, fallback, forward FROM factory_options"
		" WHERE insp = (SELECT id FROM inspections WHERE sha256 = $1)"
		" ORDER BY factory, role, key",
	};
	struct pg *g = impl;
	struct par p = { 0 };
	const struct par *const ps[3] = { &p, &p, &p };
	struct jar_report *r = NULL;
	PGresult *res[3];
	int rc, i;

	(void)id; /* sha256 is the key: the row number adds nothing */
	(void)options; /* the options come in the same round trip */
	p_str(&p, sha256);
	lock(g);
	rc = run_n(g, 3, sql, ps, res, err);
	unlock(g);
	if (!rc && PQntuples(res[0]) == 0)
		rc = -ENOENT;
	if (!rc && !(r = calloc(1, sizeof(*r))))
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
	if (!rc)
		rc = read_insp(res, r, err);
	for (i = 0; i < 3; i++)
		PQclear(res[i]);
	if (rc) {
		jar_report_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int pg_table_get(void *impl, int64_t env_id, const char *name,
			struct catalog_table *out, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, env_id);
	p_str(&p, name);
	return one(impl,
		   "SELECT id, env_id, name, size, mtime, uid FROM tables"
		   " WHERE env_id = $1 AND name = $2",
		   &p, rd_table, out, err);
}

static int pg_table_def(void *impl, int64_t id, struct catalog_table_def *out,
			struct cmfs_err *err)
{
	static const char *const sql[2] = {
		"SELECT ddl, like_ddl FROM tables WHERE id = $1",
		"SELECT key, value FROM tab_options WHERE table_id = $1"
		" ORDER BY seq",
	};
	struct pg *g = impl;
	struct par p = { 0 };
	const struct par *const ps[2] = { &p, &p };
	PGresult *res[2];
	int rc, i;

	p_int(&p, id);
	lock(g);
	rc = run_n(g, 2, sql, ps, res, err);
	unlock(g);
	if (!rc && PQntuples(res[0]) == 0)
		rc = -ENOENT;
	if (!rc)
		rc = catalog_rows_def(out, PQgetvalue(res[0], 0, 0),
				      PQgetisnull(res[0], 0, 1)
					      ? NULL
					      : PQgetvalue(res[0], 0, 1))
			     ? cmfs_err_set(err, -ENOMEM, "out of memory")
			     : 0;
	for (i = 0; !rc && i < PQntuples(res[1]); i++)
		if ((rc = catalog_rows_option_add(out, PQgetvalue(res[1], i, 0),
						  PQgetvalue(res[1], i, 1))))
			cmfs_err_set(err, rc, "out of memory");
	PQclear(res[0]);
	PQclear(res[1]);
	if (rc && rc != -ENOENT)
		catalog_table_def_release(out);
	return rc;
}

static int pg_table_put(void *impl, int64_t env_id, const char *name,
			const struct catalog_table_def *def, int64_t mtime,
			uint32_t uid, struct catalog_table *out,
			struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 };
	size_t i, len = strlen(def->ddl);
	int64_t id = 0;
	int rc;

	p_int(&p, env_id);
	p_str(&p, name);
	p_str(&p, def->ddl);
	p_str(&p, def->like_ddl);
	p_int(&p, (int64_t)len);
	p_int(&p, mtime);
	p_int(&p, uid);
	if ((rc = txn_begin(g, err)))
		return rc;
	rc = scalar(g,
		    "INSERT INTO tables(env_id, name, ddl, like_ddl, size,"
		    " mtime, uid) VALUES($1, $2, $3, $4, $5, $6, $7)"
		    " ON CONFLICT(env_id, name) DO UPDATE SET"
		    " ddl = $3, like_ddl = $4, size = $5, mtime = $6,"
		    " uid = $7, refusal = NULL RETURNING id",
		    &p, &id, err);
	if (!rc)
		rc = exec_id(g, "DELETE FROM tab_options WHERE table_id = $1",
			     id, err);
	for (i = 0; !rc && i < def->nopts; i++) {
		struct par o = { 0 };

		p_int(&o, id);
		p_int(&o, (int64_t)i);
		p_str(&o, def->keys[i]);
		p_str(&o, def->values[i]);
		rc = run(g,
			 "INSERT INTO tab_options(table_id, seq, key, value)"
			 " VALUES($1, $2, $3, $4)",
			 &o, NULL, err);
	}
	rc = pg_end(g, rc, err);
	if (!rc && out) {
		out->id = id;
		out->env_id = env_id;
		snprintf(out->name, sizeof(out->name), "%s", name);
		out->size = len;
		out->mtime = mtime;
		out->uid = uid;
	}
	return rc;
}

static int pg_table_del(void *impl, int64_t id, struct cmfs_err *err)
{
	return exec_id(impl, "DELETE FROM tables WHERE id = $1", id, err);
}

static int pg_table_refusal_set(void *impl, int64_t id, const char *text,
				struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, id);
	p_str(&p, text);
	return run_locked(impl, "UPDATE tables SET refusal = $2 WHERE id = $1",
			  &p, NULL, err);
}

static int pg_table_refusal_get(void *impl, int64_t id, struct buf *out,
				struct cmfs_err *err)
{
	struct par p = { 0 };
	PGresult *res;
	int rc;

	p_int(&p, id);
	rc = run_locked(impl, "SELECT refusal FROM tables WHERE id = $1", &p,
			&res, err);
	if (!rc && PQntuples(res) == 0)
		rc = -ENOENT;
	if (!rc && !PQgetisnull(res, 0, 0))
		rc = buf_adds(out, PQgetvalue(res, 0, 0));
	PQclear(res);
	return rc;
}

static int pg_table_count(void *impl, int64_t env_id, uint64_t *out,
			  struct cmfs_err *err)
{
	return scalar_id(impl, "SELECT ntab FROM envs WHERE id = $1", env_id,
			 out, err);
}

static int pg_table_list(void *impl, int64_t env_id,
			 int (*fn)(void *arg, const struct catalog_table *t),
			 void *arg, struct cmfs_err *err)
{
	struct catalog_table t;

	return walk_id(impl,
		       "SELECT id, env_id, name, size, mtime, uid FROM tables"
		       " WHERE env_id = $1 ORDER BY name",
		       env_id, rd_table, &t, (int (*)(void *, const void *))fn,
		       arg, err);
}

/*
 * A line goes at the end of its environment's log.  Hosts appending to
 * one log at once take turns by a lock on its name, held to the end of
 * the transaction: each reads the end of the log after the last one's
 * commit, so no two lines get one offset.
 */
static int pg_event_add(void *impl, size_t n, const char *const *envs,
			const char *const *lines, struct cmfs_err *err)
{
	struct pg *g = impl;
	size_t i;
	int rc;

	if ((rc = txn_begin(g, err)))
		return rc;
	for (i = 0; !rc && i < n; i++) {
		struct par e = { 0 }, p = { 0 };
		size_t len = strlen(lines[i]);

		p_str(&e, envs[i]);
		p_str(&p, envs[i]);
		p_int(&p, (int64_t)len);
		p_bin(&p, lines[i], len);
		rc = run(g,
			 "SELECT pg_advisory_xact_lock(" EVENTS_LOCK ","
			 " hashtext($1))",
			 &e, NULL, err);
		if (!rc)
			rc = run(g,
				 "INSERT INTO events(env, off, len, line)"
				 " VALUES($1, COALESCE((SELECT off + len FROM"
				 " events WHERE env = $1 ORDER BY off DESC"
				 " LIMIT 1), 0), $2, $3)",
				 &p, NULL, err);
	}
	return pg_end(g, rc, err);
}

static int pg_event_size(void *impl, const char *env, uint64_t *out,
			 struct cmfs_err *err)
{
	struct par p = { 0 };

	p_str(&p, env);
	return scalar_u(impl,
			"SELECT COALESCE((SELECT off + len FROM events"
			" WHERE env = $1 ORDER BY off DESC LIMIT 1) -"
			" (SELECT off FROM events WHERE env = $1"
			" ORDER BY off LIMIT 1), 0)",
			&p, out, err);
}

static int pg_event_read(void *impl, const char *env, uint64_t off,
			 size_t size, struct buf *out, struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 }, q = { 0 };
	PGresult *res = NULL;
	int64_t base = 0;
	int rc, i;

	p_str(&p, env);
	lock(g);
	rc = scalar(g,
		    "SELECT COALESCE((SELECT off FROM events WHERE env = $1"
		    " ORDER BY off LIMIT 1), 0)",
		    &p, &base, err);
	if (rc)
		goto out;
	off += (uint64_t)base;
	p_str(&q, env);
	p_int(&q, (int64_t)off);
	p_int(&q, (int64_t)off + (int64_t)size);
	rc = run(g,
		 "SELECT off, line FROM events WHERE env = $1 AND"
		 " off >= COALESCE((SELECT max(off) FROM events"
		 " WHERE env = $1 AND off <= $2), 0) AND off < $3 ORDER BY off",
		 &q, &res, err);
	for (i = 0; !rc && size && i < PQntuples(res); i++) {
		uint64_t at = (uint64_t)col_int(res, i, 0);
		size_t len, skip, take;
		char *line = col_bytes(res, i, 1, &len);

		if (!line) {
			rc = cmfs_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		if (at + len > off) {
			skip = off > at ? (size_t)(off - at) : 0;
			take = len - skip < size ? len - skip : size;
			rc = buf_add(out, line + skip, take);
			size -= take;
			off += take;
		}
		free(line);
	}
	PQclear(res);
out:
	unlock(g);
	return rc;
}

static int pg_event_envs(void *impl, int (*fn)(void *arg, const char *env),
			 void *arg, struct cmfs_err *err)
{
	PGresult *res;
	int rc = run_locked(impl,
			    "SELECT DISTINCT env FROM events ORDER BY env",
			    NULL, &res, err),
	    i;

	for (i = 0; !rc && i < PQntuples(res); i++)
		rc = fn(arg, PQgetvalue(res, i, 0));
	PQclear(res);
	return rc;
}

static int pg_event_trim(void *impl, const char *env, uint64_t max_rows,
			 const char *before, uint64_t *removed,
			 struct cmfs_err *err)
{
	struct pg *g = impl;
	int64_t n = 0, k;
	int rc = 0;

	*removed = 0;
	lock(g);
	if (before) {
		struct par p = { 0 };

		p_str(&p, env);
		p_str(&p, before);
		/* Lines older than $2 (every line starts
		 * "time=YYYY-MM-DDTHH:MM:SS.mmmZ"), from the oldest on. */
		rc = run_count(g,
			       "DELETE FROM events WHERE env = $1 AND off <"
			       " COALESCE((SELECT off FROM events WHERE"
			       " env = $1 AND substr(line, 6, 24) >="
			       " convert_to($2, 'UTF8')"
			       " ORDER BY off LIMIT 1),"
			       " (SELECT max(off) + 1 FROM events"
			       " WHERE env = $1))",
			       &p, &k, err);
		*removed += (uint64_t)k;
	}
	if (!rc && max_rows) {
		struct par p = { 0 };

		p_str(&p, env);
		rc = scalar(g, "SELECT count(*) FROM events WHERE env = $1",
			    &p, &n, err);
		if (!rc && (uint64_t)n > max_rows) {
			p_int(&p, n - (int64_t)max_rows);
			rc = run_count(g,
				       "DELETE FROM events WHERE env = $1 AND"
				       " off < (SELECT off FROM events"
				       " WHERE env = $1 ORDER BY off LIMIT 1"
				       " OFFSET $2)",
				       &p, &k, err);
			*removed += (uint64_t)k;
		}
	}
	unlock(g);
	return rc;
}

static int pg_ver_put(void *impl, const struct catalog_version *v,
		      struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 }, q = { 0 };
	int64_t k = 0;
	int rc;

	p_int(&p, v->artifact_id);
	p_int(&p, v->n);
	p_str(&p, v->sha256);
	p_int(&p, (int64_t)v->size);
	p_int(&p, v->mtime);
	p_int(&p, v->uid);
	p_int(&q, v->artifact_id);
	p_int(&q, v->n);
	if ((rc = txn_begin(g, err)))
		return rc;
	rc = run(g,
		 "INSERT INTO versions(" VER_COLS ") VALUES($1, $2, $3, $4,"
		 " $5, $6, (SELECT id FROM inspections WHERE sha256 = $3))",
		 &p, NULL, err);
	if (!rc)
		rc = run_count(g,
			       "UPDATE artifacts SET next_n ="
			       " greatest(next_n, $2 + 1) WHERE id = $1",
			       &q, &k, err);
	if (!rc && !k)
		rc = cmfs_err_set(err, -ENOENT, "artifact %lld: none",
				  (long long)v->artifact_id);
	return pg_end(g, rc, err);
}

static int pg_art_next_get(void *impl, int64_t art_id, int64_t *out,
			   struct cmfs_err *err)
{
	struct par p = { 0 };
	PGresult *res;
	int rc;

	p_int(&p, art_id);
	rc = run_locked(impl, "SELECT next_n FROM artifacts WHERE id = $1",
			&p, &res, err);
	if (!rc && PQntuples(res) == 0)
		rc = -ENOENT;
	if (!rc)
		*out = col_int(res, 0, 0);
	PQclear(res);
	return rc;
}

static int pg_art_next_set(void *impl, int64_t art_id, int64_t n,
			   struct cmfs_err *err)
{
	struct par p = { 0 };
	int64_t k;
	int rc;

	p_int(&p, art_id);
	p_int(&p, n);
	rc = run_count(impl,
		       "UPDATE artifacts SET next_n = greatest(next_n, $2)"
		       " WHERE id = $1 AND $2 > COALESCE((SELECT max(n)"
		       " FROM versions WHERE artifact_id = $1), 0)",
		       &p, &k, err);
	if (!rc && !k)
		rc = cmfs_err_set(err, -EINVAL,
				  "artifact %lld: next version %lld is not "
				  "above its versions",
				  (long long)art_id, (long long)n);
	return rc;
}

static int pg_retired_list(void *impl, const char *env,
			   int (*fn)(void *arg, const char *name, int64_t next),
			   void *arg, struct cmfs_err *err)
{
	struct par p = { 0 };
	PGresult *res;
	int rc, i;

	p_str(&p, env);
	rc = run_locked(impl,
			"SELECT name, next_n FROM retired WHERE env = $1"
			" ORDER BY name",
			&p, &res, err);
	for (i = 0; !rc && i < PQntuples(res); i++)
		rc = fn(arg, PQgetvalue(res, i, 0), col_int(res, i, 1));
	PQclear(res);
	return rc;
}

static int pg_retired_put(void *impl, const char *env, const char *name,
			  int64_t next, struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 };
	int64_t held = 0;
	int rc;

	p_str(&p, env);
	p_str(&p, name);
	if ((rc = txn_begin(g, err)))
		return rc;
	rc = scalar(g,
		    "SELECT count(*) FROM artifacts a JOIN envs e ON"
		    " e.id = a.env_id WHERE e.name = $1 AND a.name = $2",
		    &p, &held, err);
	if (!rc && held)
		rc = cmfs_err_set(err, -EEXIST,
				  "%s: an artifact of %s holds the name", name,
				  env);
	p_int(&p, next);
	if (!rc)
		rc = run(g,
			 "INSERT INTO retired(env, name, next_n)"
			 " VALUES($1, $2, $3) ON CONFLICT(env, name) DO"
			 " UPDATE SET next_n = greatest(retired.next_n,"
			 " excluded.next_n)",
			 &p, NULL, err);
	return pg_end(g, rc, err);
}

/*
 * Blobs live in the database (schema 5): any store may hold a host's
 * copies.  A catalog from before, whose versions' bytes are files of the
 * one store it recorded, is mounted from that store only until every
 * such blob is in the database: 1 tells that store's mount to put them.
 */
static int pg_bind_store(void *impl, const char *id, struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 };
	PGresult *res;
	int64_t lacking = 0;
	int rc;

	p_str(&p, id);
	if ((rc = txn_begin(g, err)))
		return rc;
	rc = scalar(g,
		    "SELECT count(*) FROM versions v WHERE NOT EXISTS(SELECT"
		    " 1 FROM blobs b WHERE b.sha256 = v.sha256) AND NOT"
		    " EXISTS(SELECT 1 FROM inline_blobs i WHERE"
		    " i.sha256 = v.sha256)",
		    NULL, &lacking, err);
	if (!rc && lacking && !(rc = run(g, "SELECT id FROM cmfs_store", NULL,
					&res, err))) {
		if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), id))
			rc = cmfs_err_set(err, -EXDEV,
					  "catalog %s: the bytes of %lld "
					  "versions are in the store %s, not "
					  "this one: mount it from there once, "
					  "which puts them in the database",
					  g->where, (long long)lacking,
					  PQntuples(res) ? PQgetvalue(res, 0, 0)
							 : "?");
		PQclear(res);
	}
	rc = pg_end(g, rc, err);
	return rc ? rc : lacking > 0;
}

/*
 * The watch (catalog_watch): a connection of its own that listens on
 * channel cmfs (cmfs_notify() in schema 5), and a thread that waits on it
 * and on a pipe that stops it.  A notification from another server
 * process than that of g's connection is a change made elsewhere.  A
 * lost connection is made again every WATCH_RETRY_MS; notifications sent
 * meanwhile are lost, so everything is then reported changed.
 */
#define WATCH_RETRY_MS 250

struct watch {
	struct pg *g;
	catalog_watch_fn fn;
	void *arg;
	pthread_t thread;
	int stop[2];		/* a pipe: written to stop the thread */
	PGconn *conn;		/* listening, or NULL while lost */
};

static PGconn *watch_connect(struct pg *g)
{
	PGconn *conn = dial(g->uri);
	PGresult *res;
	int ok;

	if (!conn || PQstatus(conn) != CONNECTION_OK) {
		PQfinish(conn);
		return NULL;
	}
	res = PQexec(conn, "LISTEN cmfs");
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	PQclear(res);
	if (!ok) {
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

/* "<kind><env>/<name>" to the watcher, unless this handle sent it. */
static void watch_tell(struct watch *w, const PGnotify *n)
{
	char env[256];
	const char *slash = strchr(n->extra, '/');

	if (n->be_pid == __atomic_load_n(&w->g->pid, __ATOMIC_RELAXED) ||
	    !n->extra[0] || !slash || slash - n->extra - 1 >= (int)sizeof(env))
		return;
	memcpy(env, n->extra + 1, (size_t)(slash - n->extra - 1));
	env[slash - n->extra - 1] = '\0';
	w->fn(w->arg, env, slash + 1, n->extra[0]);
}

static void *watch_thread(void *arg)
{
	struct watch *w = arg;
	struct pollfd p[2];
	PGnotify *n;

	for (;;) {
		p[0].fd = w->conn ? PQsocket(w->conn) : -1;
		p[0].events = POLLIN;
		p[0].revents = 0;
		p[1].fd = w->stop[0];
		p[1].events = POLLIN;
		p[1].revents = 0;
		if (poll(p, 2, w->conn ? -1 : WATCH_RETRY_MS) < 0 &&
		    errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!w->conn) {
			if ((w->conn = watch_connect(w->g)))
				w->fn(w->arg, NULL, NULL, 0);
			continue;
		}
		if (!p[0].revents)
			continue;
		if (!PQconsumeInput(w->conn) ||
		    PQstatus(w->conn) != CONNECTION_OK) {
			PQfinish(w->conn);
			w->conn = NULL;
			continue;
		}
		while ((n = PQnotifies(w->conn))) {
			watch_tell(w, n);
			PQfreemem(n);
		}
	}
	return NULL;
}

static int pg_watch(void *impl, catalog_watch_fn fn, void *arg,
		    struct cmfs_err *err)
{
	struct pg *g = impl;
	struct watch *w = calloc(1, sizeof(*w));
	int rc;

	if (g->watch)
		return cmfs_err_set(err, -EBUSY, "catalog %s: watched already",
				    g->where);
	if (!w || pipe(w->stop)) {
		free(w);
		return cmfs_err_set(err, -ENOMEM, "catalog watch: %s",
				    strerror(errno));
	}
	w->g = g;
	w->fn = fn;
	w->arg = arg;
	if (!(w->conn = watch_connect(g))) {
		rc = cmfs_err_set(err, -EIO,
				  "catalog %s: cannot listen for changes",
				  g->where);
		goto fail;
	}
	if ((rc = thread_start(&w->thread, watch_thread, w))) {
		cmfs_err_set(err, rc, "catalog watch: %s", strerror(-rc));
		goto fail;
	}
	g->watch = w;
	return 0;
fail:
	PQfinish(w->conn);
	close(w->stop[0]);
	close(w->stop[1]);
	free(w);
	return rc;
}

static void pg_unwatch(void *impl)
{
	struct pg *g = impl;
	struct watch *w = g->watch;

	if (!w)
		return;
	if (write(w->stop[1], "x", 1) < 0)
		(void)0; /* a pipe of one byte never fills */
	pthread_join(w->thread, NULL);
	PQfinish(w->conn);
	close(w->stop[0]);
	close(w->stop[1]);
	free(w);
	g->watch = NULL;
}

const struct catalog_backend catalog_pg_backend = {
	.name = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.begin = pg_begin,
	.end = pg_end,
	.check = pg_check,
	.env_add = pg_env_add,
	.env_get = pg_env_get,
	.env_del = pg_env_del,
	.env_list = pg_env_list,
	.art_get = pg_art_get,
	.art_add = pg_art_add,
	.art_del = pg_art_del,
	.art_rename = pg_art_rename,
	.art_count = pg_art_count,
	.art_list = pg_art_list,
	.art_by_label = pg_art_by_label,
	.ver_add = pg_ver_add,
	.ver_get = pg_ver_get,
	.ver_del = pg_ver_del,
	.ver_list = pg_ver_list,
	.blob_refs = pg_blob_refs,
	.set_sync = pg_set_sync,
	.checkpoint = pg_nothing,
	.sync = pg_nothing,
	.env_recount = pg_env_recount,
	.insp_links = pg_insp_links,
	.unsynced_add = pg_unsynced_add,
	.unsynced_mark = pg_unsynced_mark,
	.unsynced_clear = pg_unsynced_clear,
	.unsynced_list = pg_unsynced_list,
	.loose_add = pg_loose_add,
	.loose_del = pg_loose_del,
	.loose_list = pg_loose_list,
	.insp_stale = pg_insp_stale,
	.ver_by_sha = pg_ver_by_sha,
	.inline_put = pg_inline_put,
	.inline_get = pg_inline_get,
	.inline_del = pg_inline_del,
	.inline_list = pg_inline_list,
	.blob_total = pg_blob_total,
	.label_set = pg_label_set,
	.label_del = pg_label_del,
	.label_get = pg_label_get,
	.label_list = pg_label_list,
	.insp_put = pg_insp_put,
	.insp_get = pg_insp_get,
	.table_get = pg_table_get,
	.table_def = pg_table_def,
	.table_put = pg_table_put,
	.table_del = pg_table_del,
	.table_refusal_set = pg_table_refusal_set,
	.table_refusal_get = pg_table_refusal_get,
	.table_count = pg_table_count,
	.table_list = pg_table_list,
	.event_add = pg_event_add,
	.event_size = pg_event_size,
	.event_read = pg_event_read,
	.event_envs = pg_event_envs,
	.event_trim = pg_event_trim,
	.open_existing = pg_open_existing,
	.begin_read = pg_begin_read,
	.ver_put = pg_ver_put,
	.art_next_get = pg_art_next_get,
	.art_next_set = pg_art_next_set,
	.bind_store = pg_bind_store,
	.blob_put = pg_blob_put,
	.blob_get = pg_blob_get,
	.blob_list = pg_blob_list,
	.watch = pg_watch,
	.unwatch = pg_unwatch,
	.retired_list = pg_retired_list,
	.retired_put = pg_retired_put,
};
