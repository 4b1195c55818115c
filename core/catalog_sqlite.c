/*
 * catalog_sqlite.c - the operations of the SQLite catalog backend.
 *
 * Each operation is a statement of sq_sql[] (below) run through the
 * statement helper (catalog_sqlite_stmt.c): sq_run() binds its parameters
 * by a signature and reads its result, sq_each() walks its rows.  An
 * operation of several statements holds the connection's lock across
 * them, or a transaction where they must commit together.  The schema is
 * in catalog_sqlite_schema.c, the connection and its durability in
 * catalog_sqlite_conn.c; catalog_sqlite_int.h is what they share.
 */
#include "catalog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog_rows.h"
#include "catalog_sqlite_int.h"
#include "hash.h"
#include "jar.h"

#define CMFS_STR_(x) #x
#define CMFS_STR(x) CMFS_STR_(x)

/* A version's columns but its artifact (ver_at()), and a version row's. */
#define VER_FIELDS "v.n, v.sha256, v.size, v.mtime, v.uid, v.insp"
#define VER_COLS "v.artifact_id, " VER_FIELDS
/* The columns of an artifact row with its latest version (rd_art()). */
#define ART_COLS                                                             \
	"a.id, a.env_id, a.name,"                                            \
	" (SELECT count(*) FROM versions WHERE artifact_id = a.id), " VER_FIELDS
#define ART_LATEST                                                           \
	" JOIN versions v ON v.artifact_id = a.id AND v.n ="                 \
	" (SELECT max(n) FROM versions WHERE artifact_id = a.id)"
/*
 * The rows of environment name ?1's events (schema 14): row numbers from
 * its number k << EV_SHIFT on, each line's number that plus its offset.
 * No number (no line yet): NULL, and no row.
 */
#define EV_SHIFT SQ_EV_SHIFT_STR
#define EV_MAX SQ_EV_MAX_STR
#define EV_LO "(SELECT k << " EV_SHIFT " FROM event_envs WHERE name = ?1)"
#define EV_RANGE                                                             \
	" id BETWEEN " EV_LO " AND " EV_LO " + " EV_MAX

/* The inspection row a version's blob has (NULL: none). */
#define INSP_OF_VERSION                                                       \
	"(SELECT id FROM inspections i WHERE i.sha256 = versions.sha256)"

const char *const sq_sql[S_COUNT] = {
	[S_ENV_ADD] = "INSERT INTO envs(name, ctime, uid) VALUES(?, ?, ?)",
	[S_ENV_GET] = "SELECT id, name, ctime, uid FROM envs WHERE name = ?",
	[S_ENV_DEL] = "DELETE FROM envs WHERE id = ?",
	[S_ENV_LIST] = "SELECT id, name, ctime, uid FROM envs ORDER BY name",
	[S_ENV_BUSY] =
		"SELECT EXISTS(SELECT 1 FROM artifacts WHERE env_id = ?1)"
		" OR EXISTS(SELECT 1 FROM tables WHERE env_id = ?1)",
	[S_ENV_RECOUNT] = SQ_RECOUNT,
	/* One artifact: its versions walked from the highest number, the
	 * first taken (ART_LATEST's max(n) would seek them once more). */
	[S_ART_GET] = "SELECT " ART_COLS " FROM artifacts a"
		      " JOIN versions v ON v.artifact_id = a.id"
		      " WHERE a.env_id = ? AND a.name = ?"
		      " ORDER BY v.n DESC LIMIT 1",
	[S_ART_ADD] = "INSERT INTO artifacts(env_id, name) VALUES(?, ?)",
	/* What the art_add and art_reuse triggers did before schema 16:
	 * the environment's count, ... */
	[S_ART_COUNTED] = "UPDATE envs SET nart = nart + 1 WHERE id = ?1",
	/* ... and the next number a name's earlier artifact left behind
	 * (S_ART_NEXT_MAX and S_ART_UNRETIRE take it back). */
	[S_ART_RETIRED] = "SELECT next_n FROM retired WHERE name = ?2"
			  " AND env = (SELECT name FROM envs WHERE id = ?1)",
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
	/* A rename (sq_art_rename): the new name's next number when another
	 * artifact left it, ... */
	[S_ART_TAKEN] = "SELECT r.next_n FROM retired r JOIN envs e ON"
			" e.name = r.env JOIN artifacts a ON a.env_id = e.id"
			" WHERE a.id = ?1 AND r.name = ?2"
			" AND r.holder IS NOT a.id",
	/* ... the artifact's lowest number ... */
	[S_ART_LOW] = "SELECT min(n) FROM versions WHERE artifact_id = ?1",
	/* ... the old name's next number retired, held by the artifact ... */
	[S_ART_RETIRE] = "INSERT OR REPLACE INTO retired(env, name, next_n,"
			 " holder) SELECT e.name, a.name, max(a.next_n,"
			 " COALESCE((SELECT next_n FROM retired r"
			 " WHERE r.env = e.name AND r.name = a.name), 1)),"
			 " a.id FROM artifacts a JOIN envs e"
			 " ON e.id = a.env_id WHERE a.id = ?1",
	/* ... its versions moved up by ?2, through negative numbers (the
	 * key is (artifact, n)) ... */
	[S_ART_SHIFT] = "UPDATE versions SET n = -(n + ?2)"
			" WHERE artifact_id = ?1",
	[S_ART_UNSIGN] = "UPDATE versions SET n = -n WHERE artifact_id = ?1"
			 " AND n < 0",
	[S_ART_NEXT_ADD] = "UPDATE artifacts SET next_n = next_n + ?2"
			   " WHERE id = ?1",
	[S_ART_NEXT_MAX] = "UPDATE artifacts SET next_n = max(next_n, ?2)"
			   " WHERE id = ?1",
	/* ... and the new name's retired row taken back. */
	[S_ART_UNRETIRE] = "DELETE FROM retired WHERE name = ?2 AND env ="
			   " (SELECT name FROM envs WHERE id = ?1)",
	[S_ART_NEXT_SET] = "UPDATE artifacts SET next_n = max(next_n, ?2)"
			   " WHERE id = ?1 AND ?2 > COALESCE((SELECT max(n)"
			   " FROM versions WHERE artifact_id = ?1), 0)",
	[S_VER_NEXT] = "SELECT next_n FROM artifacts WHERE id = ?",
	[S_VER_BUMP] = "UPDATE artifacts SET next_n = next_n + 1 WHERE id = ?",
	[S_VER_ADD] =
		"INSERT INTO versions(artifact_id, n, sha256, size, mtime,"
		" uid, insp) VALUES(?1, ?2, ?3, ?4, ?5, ?6,"
		" (SELECT id FROM inspections WHERE sha256 = ?3))",
	[S_VER_GET] = "SELECT " VER_COLS " FROM versions v"
		      " WHERE artifact_id = ? AND n = ?",
	[S_VER_DEL] = "DELETE FROM versions WHERE artifact_id = ? AND n = ?",
	[S_VER_LIST] = "SELECT " VER_COLS " FROM versions v"
		       " WHERE artifact_id = ? ORDER BY n",
	[S_VER_NEXT_ABOVE] = "UPDATE artifacts SET next_n = max(next_n,"
			     " ?2 + 1) WHERE id = ?1",
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
	/* A new row holds its options rows (put_options()) from the start. */
	[S_INSP_ADD] = "INSERT INTO inspections(sha256, error, external,"
		       " inspector, options_read) VALUES(?1, ?2, ?3, "
		       CMFS_STR(JAR_INSPECTOR) ", 1)",
	[S_INSP_LINK] = "UPDATE versions SET insp = ?2 WHERE sha256 = ?1"
			" AND insp IS NOT ?2",
	/* A version whose inspection is not its blob's (a blob with none is
	 * fsck's FSCK_INSPECTION, and putting one back links its versions:
	 * not counted twice). */
	[S_INSP_UNLINKED] = "SELECT count(*) FROM versions WHERE"
			    " insp IS NOT " INSP_OF_VERSION
			    " AND " INSP_OF_VERSION " IS NOT NULL",
	[S_INSP_RELINK] = "UPDATE versions SET insp = " INSP_OF_VERSION
			  " WHERE insp IS NOT " INSP_OF_VERSION,
	[S_FACT_DEL] = "DELETE FROM insp_factories WHERE insp = ?1",
	[S_FACT_PUT] = "INSERT INTO insp_factories(insp, seq, kind,"
		       " identifier, class, unknown)"
		       " VALUES(?1, ?5, ?2, ?3, ?4, ?6)",
	[S_FACT_GET] = "SELECT kind, identifier, class, unknown"
		       " FROM insp_factories WHERE insp = ?1 ORDER BY seq",
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
	/* Where the next line of name ?1 goes: its rows' first number and
	 * the offset after its last line.  No row: the name has no number
	 * yet (S_EVENT_ENV_ADD). */
	[S_EVENT_END] = "SELECT e.k << " EV_SHIFT ", COALESCE((SELECT off + len"
			" FROM events WHERE id BETWEEN e.k << " EV_SHIFT
			" AND (e.k << " EV_SHIFT ") + " EV_MAX
			" ORDER BY id DESC LIMIT 1), 0)"
			" FROM event_envs e WHERE e.name = ?1",
	[S_EVENT_ADD] = "INSERT INTO events(id, env, off, len, line)"
			" VALUES(?1 + ?2, ?3, ?2, ?4, ?5)",
	/* The next number for a name never seen: numbers are never reused. */
	[S_EVENT_ENV_ADD] = "INSERT OR IGNORE INTO event_envs(name, k)"
			    " SELECT ?1, COALESCE(max(k), 0) + 1"
			    " FROM event_envs",
	/* An environment's log starts at its oldest line kept: offsets are
	 * relative to it (the lines retention removed are gone). */
	[S_EVENT_SIZE] = "SELECT COALESCE((SELECT off + len FROM events"
			 " WHERE" EV_RANGE " ORDER BY id DESC LIMIT 1) -"
			 " (SELECT off FROM events WHERE" EV_RANGE
			 " ORDER BY id LIMIT 1), 0)",
	[S_EVENT_READ] = "SELECT off, line FROM events WHERE" EV_RANGE
			 " AND id >= COALESCE((SELECT max(id) FROM events"
			 " WHERE" EV_RANGE " AND id <= " EV_LO " + ?2), 0)"
			 " ORDER BY id",
	[S_EVENT_BASE] = "SELECT COALESCE((SELECT off FROM events"
			 " WHERE" EV_RANGE " ORDER BY id LIMIT 1), 0)",
	/* Each name with lines, in name order. */
	[S_EVENT_ENVS] = "SELECT name FROM event_envs e WHERE EXISTS(SELECT 1"
			 " FROM events WHERE id BETWEEN e.k << " EV_SHIFT
			 " AND (e.k << " EV_SHIFT ") + " EV_MAX ")"
			 " ORDER BY name",
	/* Lines older than ?2 (a time value, compared as text: every line
	 * starts "time=YYYY-MM-DDTHH:MM:SS.mmmZ"), from the oldest on. */
	[S_EVENT_OLD] = "DELETE FROM events WHERE" EV_RANGE " AND id <"
			" COALESCE((SELECT id FROM events WHERE" EV_RANGE
			" AND CAST(substr(line, 6, 24) AS TEXT) >= ?2"
			" ORDER BY id LIMIT 1),"
			" (SELECT max(id) + 1 FROM events WHERE" EV_RANGE "))",
	[S_EVENT_COUNT] = "SELECT count(*) FROM events WHERE" EV_RANGE,
	/* The oldest ?2 lines. */
	[S_EVENT_CUT] = "DELETE FROM events WHERE" EV_RANGE " AND id <"
			" (SELECT id FROM events WHERE" EV_RANGE
			" ORDER BY id LIMIT 1 OFFSET ?2)",
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
	[S_RETIRED_LIST] = "SELECT name, next_n FROM retired WHERE env = ?"
			   " ORDER BY name",
	[S_RETIRED_HELD] = "SELECT count(*) FROM artifacts a JOIN envs e ON"
			   " e.id = a.env_id WHERE e.name = ?1 AND a.name = ?2",
	[S_RETIRED_PUT] = "INSERT INTO retired(env, name, next_n)"
			  " VALUES(?1, ?2, ?3) ON CONFLICT(env, name) DO"
			  " UPDATE SET next_n = max(next_n, excluded.next_n)",
	[S_USER_VERSION] = "PRAGMA user_version",
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_BEGIN_READ] = "BEGIN",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_SYNC_NORMAL] = "PRAGMA synchronous = NORMAL",
	[S_SYNC_FULL] = "PRAGMA synchronous = FULL",
};

const char *catalog_sqlite_by_label_sql(void)
{
	return sq_sql[S_ART_BY_LABEL];
}

/* ---- row readers (sq_row_fn) ---- */

/* Copy column `i` into a fixed array of `n` bytes. */
static void col_str(char *dst, size_t n, sqlite3_stmt *s, int i)
{
	const char *v = sq_col(s, i);

	snprintf(dst, n, "%s", v ? v : "");
}

/* Column i of s when it holds text, else NULL (NULL, or edited into a
 * number or bytes). */
static const char *text_col(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_TEXT ? sq_col(s, i) : NULL;
}

static int rd_env(void *o, sqlite3_stmt *s)
{
	struct catalog_env *e = o;

	e->id = sqlite3_column_int64(s, 0);
	col_str(e->name, sizeof(e->name), s, 1);
	e->ctime = sqlite3_column_int64(s, 2);
	e->uid = (uint32_t)sqlite3_column_int64(s, 3);
	return 0;
}

/* The VER_FIELDS from column i on. */
static void ver_at(struct catalog_version *v, sqlite3_stmt *s, int i)
{
	v->n = sqlite3_column_int64(s, i);
	col_str(v->sha256, sizeof(v->sha256), s, i + 1);
	v->size = (uint64_t)sqlite3_column_int64(s, i + 2);
	v->mtime = sqlite3_column_int64(s, i + 3);
	v->uid = (uint32_t)sqlite3_column_int64(s, i + 4);
	v->insp = sqlite3_column_int64(s, i + 5);
}

static int rd_ver(void *o, sqlite3_stmt *s)
{
	struct catalog_version *v = o;

	v->artifact_id = sqlite3_column_int64(s, 0);
	ver_at(v, s, 1);
	return 0;
}

/* An ART_COLS row. */
static int rd_art(void *o, sqlite3_stmt *s)
{
	struct catalog_artifact *a = o;

	a->id = sqlite3_column_int64(s, 0);
	a->env_id = sqlite3_column_int64(s, 1);
	col_str(a->name, sizeof(a->name), s, 2);
	a->nversions = sqlite3_column_int64(s, 3);
	a->latest.artifact_id = a->id;
	ver_at(&a->latest, s, 4);
	return 0;
}

static int rd_table(void *o, sqlite3_stmt *s)
{
	struct catalog_table *t = o;

	t->id = sqlite3_column_int64(s, 0);
	t->env_id = sqlite3_column_int64(s, 1);
	col_str(t->name, sizeof(t->name), s, 2);
	t->size = (uint64_t)sqlite3_column_int64(s, 3);
	t->mtime = sqlite3_column_int64(s, 4);
	t->uid = (uint32_t)sqlite3_column_int64(s, 5);
	return 0;
}

/* Column 0 into a char[256] (a name handed to a callback). */
static int rd_name256(void *o, sqlite3_stmt *s)
{
	col_str(o, 256, s, 0);
	return 0;
}

/* A row of up to four text columns handed to fn (catalog.h's row lists). */
struct text_row {
	int ncol;
	int (*fn)(void *arg, const char *const *row);
	void *arg;
};

static int rd_text(void *o, sqlite3_stmt *s)
{
	const struct text_row *t = o;
	const char *v[4] = {NULL};
	int i;

	for (i = 0; i < t->ncol; i++)
		v[i] = sq_col(s, i);
	return t->fn(t->arg, v);
}

/* A walk's typed callback as sq_each() calls it. */
#define EACH_FN(fn) ((int (*)(void *, const void *))(fn))

/* Each row of statement `id`, which takes no parameter, as text columns. */
static int list_text(struct sq *q, int id, int ncol,
		     int (*fn)(void *arg, const char *const *row), void *arg,
		     struct cmfs_err *err)
{
	struct text_row t = {ncol, fn, arg};

	return sq_each(q, id, rd_text, &t, NULL, NULL, err, "");
}

/* ---- environments ---- */

static int sq_env_add(void *impl, const char *name, uint32_t uid, int64_t now,
		      struct catalog_env *out, struct cmfs_err *err)
{
	int64_t id;
	int rc = sq_run(impl, S_ENV_ADD, SQ_INSERT, NULL, &id, err, "tii",
			name, now, (int64_t)uid);

	if (!rc && out) {
		memset(out, 0, sizeof(*out));
		out->id = id;
		snprintf(out->name, sizeof(out->name), "%s", name);
		out->ctime = now;
		out->uid = uid;
	}
	return rc;
}

static int sq_env_get(void *impl, const char *name, struct catalog_env *out,
		      struct cmfs_err *err)
{
	return sq_run(impl, S_ENV_GET, SQ_ONE, rd_env, out, err, "t", name);
}

static int sq_env_del(void *impl, int64_t env_id, struct cmfs_err *err)
{
	struct sq *q = impl;
	uint64_t busy = 0;
	int rc;

	sq_lock(q);
	rc = sq_run(q, S_ENV_BUSY, SQ_SCALAR, NULL, &busy, err, "i", env_id);
	if (!rc && busy)
		rc = -ENOTEMPTY;
	if (!rc)
		rc = sq_run(q, S_ENV_DEL, SQ_EXEC, NULL, NULL, err, "i",
			    env_id);
	sq_unlock(q);
	return rc;
}

static int sq_env_list(void *impl,
		       int (*fn)(void *arg, const struct catalog_env *e),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_env e;

	return sq_each(impl, S_ENV_LIST, rd_env, &e, EACH_FN(fn), arg, err, "");
}

static int sq_env_recount(void *impl, struct cmfs_err *err)
{
	return sq_run(impl, S_ENV_RECOUNT, SQ_EXEC, NULL, NULL, err, "");
}

/* ---- names (struct names) ---- */

/*
 * Names that may be artifacts: a Bloom filter over (environment, name) of
 * every artifact row this connection has seen or made, so that looking up
 * a name that is not there (each new upload's stat, and its O_EXCL open)
 * costs no statement: outside a transaction one is a read transaction of
 * its own, which costs more than the rest of the reply.  Built at the
 * first look-up from the artifacts table, grown (rebuilt) as rows come;
 * bits are never taken away, so a deleted or rolled-back name only sends
 * its look-ups to SQLite.  Kept by the connections catalog_open() makes, a
 * mount's: a store's only writer while it is mounted (import and fsck
 * --repair refuse a store in use).
 */

/* A 64-bit hash of (env_id, name): both halves are used (double hashing). */
static uint64_t name_hash(int64_t env_id, const char *name)
{
	return hash_bytes(name, strlen(name), (uint64_t)env_id);
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

/* A row of S_ART_NAMES into the filter. */
static int rd_name(void *f, sqlite3_stmt *s)
{
	names_set(f, sqlite3_column_int64(s, 0), sq_col(s, 1));
	return 0;
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

	while (nbits < 16 * want)
		nbits *= 2;
	free(f->bits);
	f->n = 0;
	f->nbits = nbits;
	f->bits = calloc(nbits / 64, sizeof(uint64_t));
	if (!f->bits ||
	    sq_each(q, S_ART_NAMES, rd_name, f, NULL, NULL, NULL, ""))
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

/* ---- artifacts ---- */

static int sq_art_get(void *impl, int64_t env_id, const char *name,
		      struct catalog_artifact *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc = -ENOENT;

	sq_lock(q);
	if (names_check(q, env_id, name))
		rc = sq_run(q, S_ART_GET, SQ_ONE, rd_art, out, err, "it",
			    env_id, name);
	sq_unlock(q);
	return rc;
}

/*
 * A new artifact row, the environment's count, and the name's next
 * number when an artifact left the name before (schema v8).  Statements
 * of their own rather than triggers (schema v16): an INSERT that fires a
 * trigger makes SQLite keep a statement journal (a copy of each page the
 * statement touches, to undo it alone), and these run at every new
 * upload.  One transaction, the caller's when it holds one.
 */
static int sq_art_add(void *impl, int64_t env_id, const char *name,
		      int64_t *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	int64_t id = 0, next = 0;
	int rc;

	if ((rc = sq_begin(q, err)))
		return rc;
	rc = sq_run(q, S_ART_ADD, SQ_INSERT, NULL, &id, err, "it", env_id,
		    name);
	if (!rc)
		rc = sq_run(q, S_ART_COUNTED, SQ_EXEC, NULL, NULL, err, "i",
			    env_id);
	if (!rc) {
		rc = sq_run(q, S_ART_RETIRED, SQ_ONE, sq_rd_int64, &next, NULL,
			    "it", env_id, name);
		if (rc == -ENOENT) { /* a name no artifact left */
			rc = 0;
		} else if (!rc) {
			rc = sq_run(q, S_ART_NEXT_MAX, SQ_EXEC, NULL, NULL, err,
				    "ii", id, next);
			if (!rc)
				rc = sq_run(q, S_ART_UNRETIRE, SQ_EXEC, NULL,
					    NULL, err, "it", env_id, name);
		} else {
			rc = sq_fail_last(q, err);
		}
	}
	if (!rc)
		names_add(q, env_id, name);
	if (!rc && out)
		*out = id;
	return sq_end(q, rc, err);
}

static int sq_art_del(void *impl, int64_t art_id, struct cmfs_err *err)
{
	return sq_run(impl, S_ART_DEL, SQ_EXEC, NULL, NULL, err, "i", art_id);
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
	int64_t env_id = 0, taken = 0, low = 0, shift;
	int rc;

	if ((rc = sq_begin(q, err)))
		return rc;
	/* No row (the name had no numbers) or NULL (no versions): 0. */
	rc = sq_run(q, S_ART_TAKEN, SQ_ONE, sq_rd_int64, &taken, err, "it",
		    art_id, name);
	if (rc == -ENOENT)
		rc = 0;
	if (!rc)
		rc = sq_run(q, S_ART_LOW, SQ_ONE, sq_rd_int64, &low, err, "i",
			    art_id);
	if (!rc)
		rc = sq_run(q, S_ART_RETIRE, SQ_EXEC, NULL, NULL, err, "i",
			    art_id);
	/* The row's environment comes back: the new name joins the filter
	 * (the old one stays in it, as a deleted name does: a look-up of
	 * it asks SQLite, which says no).  No row: no such artifact. */
	if (!rc)
		rc = sq_run(q, S_ART_RENAME, SQ_ONE, sq_rd_int64, &env_id, err,
			    "ti", name, art_id);
	if (rc == -ENOENT)
		rc = 0;
	if (rc || !env_id)
		return sq_end(q, rc, err);
	names_add(q, env_id, name);
	shift = low && taken > low ? taken - low : 0;
	if (shift)
		rc = sq_run(q, S_ART_SHIFT, SQ_EXEC, NULL, NULL, err, "ii",
			    art_id, shift);
	if (!rc && shift)
		rc = sq_run(q, S_ART_UNSIGN, SQ_EXEC, NULL, NULL, err, "i",
			    art_id);
	if (!rc)
		rc = sq_run(q, S_ART_NEXT_ADD, SQ_EXEC, NULL, NULL, err, "ii",
			    art_id, shift);
	if (!rc)
		rc = sq_run(q, S_ART_NEXT_MAX, SQ_EXEC, NULL, NULL, err, "ii",
			    art_id, taken);
	if (!rc)
		rc = sq_run(q, S_ART_UNRETIRE, SQ_EXEC, NULL, NULL, err, "it",
			    env_id, name);
	return sq_end(q, rc, err);
}

static int sq_art_count(void *impl, int64_t env_id, uint64_t *out,
			struct cmfs_err *err)
{
	return sq_run(impl, S_ART_COUNT, SQ_SCALAR, NULL, out, err, "i",
		      env_id);
}

static int sq_art_list(void *impl, int64_t env_id,
		       int (*fn)(void *arg, const struct catalog_artifact *a),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_artifact a;

	return sq_each(impl, S_ART_LIST, rd_art, &a, EACH_FN(fn), arg, err,
		       "i", env_id);
}

static int sq_art_by_label(void *impl, int64_t env_id, const char *key,
			   const char *value,
			   int (*fn)(void *arg,
				     const struct catalog_artifact *a),
			   void *arg, struct cmfs_err *err)
{
	struct catalog_artifact a;

	return sq_each(impl, S_ART_BY_LABEL, rd_art, &a, EACH_FN(fn), arg, err,
		       "tti", key, value, env_id);
}

static int sq_art_next_get(void *impl, int64_t art_id, int64_t *out,
			   struct cmfs_err *err)
{
	return sq_run(impl, S_VER_NEXT, SQ_ONE, sq_rd_int64, out, err, "i",
		      art_id);
}

static int sq_art_next_set(void *impl, int64_t art_id, int64_t n,
			   struct cmfs_err *err)
{
	int rc = sq_run(impl, S_ART_NEXT_SET, SQ_CHANGE, NULL, NULL, err, "ii",
			art_id, n);

	return rc != -ENOENT ? rc
			     : cmfs_err_set(err, -EINVAL,
					    "artifact %lld: next version %lld "
					    "is not above its versions",
					    (long long)art_id, (long long)n);
}

/* ---- versions ---- */

static int sq_ver_add(void *impl, int64_t art_id, const char *sha256,
		      uint64_t size, int64_t mtime, uint32_t uid,
		      struct catalog_version *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	int64_t n = 0;
	int rc;

	if ((rc = sq_begin(q, err)))
		return rc;
	rc = sq_run(q, S_VER_NEXT, SQ_ONE, sq_rd_int64, &n, err, "i", art_id);
	if (!rc)
		rc = sq_run(q, S_VER_BUMP, SQ_EXEC, NULL, NULL, err, "i",
			    art_id);
	if (!rc)
		rc = sq_run(q, S_VER_ADD, SQ_EXEC, NULL, NULL, err, "iitiii",
			    art_id, n, sha256, (int64_t)size, mtime,
			    (int64_t)uid);
	/* The blob is referred to: no longer loose (the loose_taken
	 * trigger's work before schema 16, sq_art_add() says why). */
	if (!rc)
		rc = sq_run(q, S_LOOSE_DEL, SQ_EXEC, NULL, NULL, err, "t",
			    sha256);
	rc = sq_end(q, rc, err);
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

/* A version as it was (import, fsck): its number kept, the artifact's
 * next number moved above it. */
static int sq_ver_put(void *impl, const struct catalog_version *v,
		      struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc;

	if ((rc = sq_begin(q, err)))
		return rc;
	rc = sq_run(q, S_VER_ADD, SQ_EXEC, NULL, NULL, err, "iitiii",
		    v->artifact_id, v->n, v->sha256, (int64_t)v->size,
		    v->mtime, (int64_t)v->uid);
	if (!rc)
		rc = sq_run(q, S_LOOSE_DEL, SQ_EXEC, NULL, NULL, err, "t",
			    v->sha256);
	if (!rc)
		rc = sq_run(q, S_VER_NEXT_ABOVE, SQ_CHANGE, NULL, NULL, err,
			    "ii", v->artifact_id, v->n);
	if (rc == -ENOENT)
		rc = cmfs_err_set(err, -ENOENT, "artifact %lld: none",
				  (long long)v->artifact_id);
	return sq_end(q, rc, err);
}

static int sq_ver_get(void *impl, int64_t art_id, int64_t n,
		      struct catalog_version *out, struct cmfs_err *err)
{
	return sq_run(impl, S_VER_GET, SQ_ONE, rd_ver, out, err, "ii", art_id,
		      n);
}

static int sq_ver_del(void *impl, int64_t art_id, int64_t n,
		      struct cmfs_err *err)
{
	return sq_run(impl, S_VER_DEL, SQ_CHANGE, NULL, NULL, err, "ii",
		      art_id, n);
}

static int sq_ver_list(void *impl, int64_t art_id,
		       int (*fn)(void *arg, const struct catalog_version *v),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_version v;

	return sq_each(impl, S_VER_LIST, rd_ver, &v, EACH_FN(fn), arg, err,
		       "i", art_id);
}

static int sq_ver_by_sha(void *impl, const char *sha256,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	struct text_row t = {3, fn, arg};

	return sq_each(impl, S_VER_BY_SHA, rd_text, &t, NULL, NULL, err, "t",
		       sha256);
}

static int sq_blob_refs(void *impl, const char *sha256, uint64_t *out,
			struct cmfs_err *err)
{
	return sq_run(impl, S_BLOB_REFS, SQ_SCALAR, NULL, out, err, "t",
		      sha256);
}

static int sq_blob_total(void *impl, uint64_t *out, struct cmfs_err *err)
{
	return sq_run(impl, S_BLOB_TOTAL, SQ_SCALAR, NULL, out, err, "");
}

/* ---- labels ---- */

static int sq_label_set(void *impl, int64_t art_id, const char *key,
			const char *value, struct cmfs_err *err)
{
	return sq_run(impl, S_LABEL_SET, SQ_EXEC, NULL, NULL, err, "itt",
		      art_id, key, value);
}

static int sq_label_del(void *impl, int64_t art_id, const char *key,
			struct cmfs_err *err)
{
	int rc = sq_run(impl, S_LABEL_DEL, SQ_CHANGE, NULL, NULL, err, "it",
			art_id, key);

	return rc == -ENOENT ? -ENODATA : rc;
}

static int sq_label_get(void *impl, int64_t art_id, const char *key,
			char **out, struct cmfs_err *err)
{
	int rc = sq_run(impl, S_LABEL_GET, SQ_ONE, sq_rd_strdup, out, err,
			"it", art_id, key);

	return rc == -ENOENT ? -ENODATA : rc;
}

/* A label row handed to catalog_label_list()'s callback. */
struct label_cb {
	int (*fn)(void *arg, const char *key, const char *value);
	void *arg;
};

static int rd_label(void *o, sqlite3_stmt *s)
{
	const struct label_cb *c = o;

	return c->fn(c->arg, sq_col(s, 0), sq_col(s, 1));
}

static int sq_label_list(void *impl, int64_t art_id,
			 int (*fn)(void *arg, const char *key,
				   const char *value),
			 void *arg, struct cmfs_err *err)
{
	struct label_cb c = {fn, arg};

	return sq_each(impl, S_LABEL_LIST, rd_label, &c, NULL, NULL, err, "i",
		       art_id);
}

/* ---- inspections ---- */

/* Where put_option writes: the catalog, the inspection's row, the error. */
struct opt_dst {
	struct sq *q;
	int64_t insp;
	struct cmfs_err *err;
};

/*
 * One row of factory_options; o NULL for a 'prefix' or 'unknown' row.
 * The unknown sets are not rows here: the factory's row holds them
 * (schema v15).
 */
static int put_option(void *arg, size_t factory, const char *role,
		      const char *key, const struct options_option *o)
{
	static const struct options_option none;
	struct opt_dst *d = arg;

	if (!strcmp(role, "unknown"))
		return 0;
	if (!o)
		o = &none;
	return sq_run(d->q, S_OPT_PUT, SQ_EXEC, NULL, NULL, d->err,
		      "iitttitttti", d->insp, (int64_t)factory, role, key,
		      o->type, (int64_t)o->list, o->values, o->defval,
		      o->deprecated, o->fallback, (int64_t)o->forward);
}

/*
 * The options of r's factories as rows of inspection `insp` (the rows of
 * an inspection put again replaced: `fresh` 0, and then marked as read; a
 * new row is so from its INSERT, in the same transaction).
 */
static int put_options(struct sq *q, int64_t insp, const struct jar_report *r,
		       int fresh, struct cmfs_err *err)
{
	struct opt_dst d = {q, insp, err};
	int rc = 0;

	if (!fresh)
		rc = sq_run(q, S_OPT_DEL, SQ_EXEC, NULL, NULL, err, "i", insp);
	if (!rc)
		rc = catalog_rows_options_each(r, put_option, &d);
	if (!rc && !fresh)
		rc = sq_run(q, S_OPT_MARK, SQ_EXEC, NULL, NULL, err, "i", insp);
	return rc;
}

/*
 * The inspection's row: a blob not inspected before takes a plain INSERT
 * (an upload's usual case, cheaper than the upsert with RETURNING); a row
 * already there, the upsert, which keeps its number (versions name it),
 * and its factories dropped.  *fresh says which.
 */
static int put_insp(struct sq *q, const char *sha256, const char *error,
		    const char *ext, int64_t *id, int *fresh,
		    struct cmfs_err *err)
{
	int rc = sq_run(q, S_INSP_ADD, SQ_INSERT, NULL, id, NULL, "ttt",
			sha256, error, ext);

	*fresh = !rc;
	if (rc == -EEXIST)
		rc = sq_run(q, S_INSP_PUT, SQ_ONE, sq_rd_int64, id, err, "ttt",
			    sha256, error, ext);
	else if (rc)
		return sq_fail_last(q, err);
	if (!rc && !*fresh)
		rc = sq_run(q, S_FACT_DEL, SQ_EXEC, NULL, NULL, err, "i", *id);
	return rc;
}

static int sq_insp_put(void *impl, const char *sha256,
		       const struct jar_report *r, struct cmfs_err *err)
{
	struct sq *q = impl;
	struct buf ext = BUF_INIT((size_t)1 << 30);
	const struct jar_factory *f;
	char unknown[64];
	int64_t id = 0;
	size_t i;
	int rc = 0, fresh = 0;

	for (i = 0; !rc && i < r->nexternal; i++)
		rc = buf_printf(&ext, "%s\n", r->external[i]);
	if (rc)
		return cmfs_err_set(err, rc, "out of memory");
	if ((rc = sq_begin(q, err)))
		goto out;
	rc = put_insp(q, sha256, r->error, buf_str(&ext), &id, &fresh, err);
	/* Versions of this blob added before it was inspected. */
	if (!rc)
		rc = sq_run(q, S_INSP_LINK, SQ_EXEC, NULL, NULL, err, "ti",
			    sha256, id);
	for (i = 0; !rc && i < r->nfactories; i++) {
		f = &r->factories[i];
		catalog_rows_unknown_list(f->options.unknown, unknown,
					  sizeof(unknown));
		rc = sq_run(q, S_FACT_PUT, SQ_EXEC, NULL, NULL, err, "itttit",
			    id, jar_kind_name(f->kind), f->identifier, f->cls,
			    (int64_t)i, unknown[0] ? unknown : NULL);
	}
	if (!rc)
		rc = put_options(q, id, r, fresh, err);
	rc = sq_end(q, rc, err);
out:
	buf_release(&ext);
	return rc;
}

/* A row of S_OPT_GET into the report (rd_insp's). */
static int rd_option(void *r, sqlite3_stmt *s)
{
	struct options_option v;

	memset(&v, 0, sizeof(v));
	v.type = (char *)sq_col(s, 3);
	v.list = sqlite3_column_int(s, 4);
	v.values = (char *)sq_col(s, 5);
	v.defval = (char *)sq_col(s, 6);
	v.deprecated = (char *)sq_col(s, 7);
	v.fallback = (char *)sq_col(s, 8);
	v.forward = sqlite3_column_int(s, 9);
	return catalog_rows_option_read(r, sqlite3_column_int64(s, 0),
					sq_col(s, 1), sq_col(s, 2), &v);
}

/* A row of S_FACT_GET into the report. */
static int rd_factory(void *r, sqlite3_stmt *s)
{
	return catalog_rows_factory_add(r, text_col(s, 0), text_col(s, 1),
					text_col(s, 2));
}

/* The same with the factory's unknown sets, when its options are read. */
static int rd_factory_sets(void *o, sqlite3_stmt *s)
{
	struct jar_report *r = o;
	int rc = rd_factory(r, s);

	return rc ? rc
		  : catalog_rows_unknown_read(r, (int64_t)r->nfactories - 1,
					      text_col(s, 3));
}

/* What rd_insp() reads of an inspection's row besides the report. */
struct insp_row {
	struct jar_report *r;
	int64_t id;
	int options_read;
	char sha256[65];
};

static int rd_insp(void *o, sqlite3_stmt *s)
{
	struct insp_row *i = o;
	const char *e = sq_col(s, 0);

	col_str(i->sha256, sizeof(i->sha256), s, 2);
	i->id = sqlite3_column_int64(s, 3);
	i->options_read = sqlite3_column_int(s, 4);
	if (e && !(i->r->error = strdup(e)))
		return -ENOMEM;
	return catalog_rows_external(i->r, sq_col(s, 1));
}

/*
 * The factories and options rows of inspection i into its report; an
 * inspection older than the option rows (options_read 0) makes every set
 * unknown.
 */
static int read_children(struct sq *q, struct insp_row *i,
			 struct cmfs_err *err)
{
	int rc = sq_each(q, S_FACT_GET,
			 i->options_read ? rd_factory_sets : rd_factory, i->r,
			 NULL, NULL, err, "i", i->id);

	if (rc == -EINVAL)
		return cmfs_err_set(err, -EIO,
				    "catalog: the factories recorded for blob "
				    "%.64s are damaged (cmfs fsck --repair "
				    "recomputes them)",
				    i->sha256);
	if (rc)
		return rc;
	if (!i->options_read) {
		catalog_rows_options_unknown(i->r);
		return 0;
	}
	rc = sq_each(q, S_OPT_GET, rd_option, i->r, NULL, NULL, err, "i",
		     i->id);
	/* Rows come by role and key; a set is searched sorted by key. */
	if (!rc)
		catalog_rows_options_sort(i->r);
	return rc;
}

/*
 * By the row a version names (id), when it still holds that blob's
 * inspection; else by the blob.  Without `options`, the factories only.
 */
static int sq_insp_get(void *impl, const char *sha256, int64_t id,
		       int options, struct jar_report **out,
		       struct cmfs_err *err)
{
	struct sq *q = impl;
	struct insp_row i = {0};
	int rc = -ENOENT;

	if (!(i.r = calloc(1, sizeof(*i.r))))
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	sq_lock(q);
	if (id > 0)
		rc = sq_run(q, S_INSP_GET_ID, SQ_ONE, rd_insp, &i, err, "it",
			    id, sha256);
	if (rc == -ENOENT)
		rc = sq_run(q, S_INSP_GET, SQ_ONE, rd_insp, &i, err, "t",
			    sha256);
	/* Without its options the report says it does not know them. */
	if (!options)
		i.options_read = 0;
	if (!rc)
		rc = read_children(q, &i, err);
	sq_unlock(q);
	if (rc) {
		jar_report_free(i.r);
		return rc;
	}
	*out = i.r;
	return 0;
}

static int sq_insp_links(void *impl, int relink, uint64_t *out,
			 struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc;

	sq_lock(q);
	rc = sq_run(q, S_INSP_UNLINKED, SQ_SCALAR, NULL, out, err, "");
	if (!rc && relink && *out)
		rc = sq_run(q, S_INSP_RELINK, SQ_EXEC, NULL, NULL, err, "");
	sq_unlock(q);
	return rc;
}

static int sq_insp_stale(void *impl,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	return list_text(impl, S_INSP_STALE, 2, fn, arg, err);
}

/* ---- tables ---- */

static int sq_table_get(void *impl, int64_t env_id, const char *name,
			struct catalog_table *out, struct cmfs_err *err)
{
	return sq_run(impl, S_TABLE_GET, SQ_ONE, rd_table, out, err, "it",
		      env_id, name);
}

static int rd_def(void *def, sqlite3_stmt *s)
{
	return catalog_rows_def(def, sq_col(s, 0), sq_col(s, 1)) ? -ENOMEM
								 : 0;
}

static int rd_tab_option(void *def, sqlite3_stmt *s)
{
	return catalog_rows_option_add(def, text_col(s, 0), text_col(s, 1));
}

static int sq_table_def(void *impl, int64_t id, struct catalog_table_def *out,
			struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc;

	sq_lock(q);
	rc = sq_run(q, S_TABLE_DEF, SQ_ONE, rd_def, out, err, "i", id);
	if (!rc)
		rc = sq_each(q, S_TABLE_OPT_GET, rd_tab_option, out, NULL,
			     NULL, err, "i", id);
	if (rc == -EINVAL)
		rc = cmfs_err_set(err, -EIO,
				  "catalog: the options recorded for table "
				  "%lld are damaged",
				  (long long)id);
	if (rc && rc != -ENOENT)
		catalog_table_def_release(out);
	sq_unlock(q);
	return rc;
}

static int sq_table_put(void *impl, int64_t env_id, const char *name,
			const struct catalog_table_def *def, int64_t mtime,
			uint32_t uid, struct catalog_table *out,
			struct cmfs_err *err)
{
	struct sq *q = impl;
	int64_t id = 0;
	size_t i, len = strlen(def->ddl);
	int rc;

	if ((rc = sq_begin(q, err)))
		return rc;
	rc = sq_run(q, S_TABLE_PUT, SQ_ONE, sq_rd_int64, &id, err, "ittt"
		    "iii", env_id, name, def->ddl, def->like_ddl, (int64_t)len,
		    mtime, (int64_t)uid);
	if (!rc)
		rc = sq_run(q, S_TABLE_OPTS_DEL, SQ_EXEC, NULL, NULL, err, "i",
			    id);
	for (i = 0; !rc && i < def->nopts; i++)
		rc = sq_run(q, S_TABLE_OPT_ADD, SQ_EXEC, NULL, NULL, err,
			    "itti", id, def->keys[i], def->values[i],
			    (int64_t)i);
	rc = sq_end(q, rc, err);
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

static int sq_table_refusal_set(void *impl, int64_t id, const char *text,
				struct cmfs_err *err)
{
	return sq_run(impl, S_TABLE_REFUSAL_SET, SQ_EXEC, NULL, NULL, err,
		      "it", id, text);
}

/* The refusal's text appended to a struct buf; NULL: none. */
static int rd_refusal(void *out, sqlite3_stmt *s)
{
	return sqlite3_column_type(s, 0) == SQLITE_NULL
		       ? 0
		       : buf_adds(out, sq_col(s, 0));
}

static int sq_table_refusal_get(void *impl, int64_t id, struct buf *out,
				struct cmfs_err *err)
{
	return sq_run(impl, S_TABLE_REFUSAL_GET, SQ_ONE, rd_refusal, out, err,
		      "i", id);
}

static int sq_table_del(void *impl, int64_t id, struct cmfs_err *err)
{
	return sq_run(impl, S_TABLE_DEL, SQ_EXEC, NULL, NULL, err, "i", id);
}

static int sq_table_count(void *impl, int64_t env_id, uint64_t *out,
			  struct cmfs_err *err)
{
	return sq_run(impl, S_TABLE_COUNT, SQ_SCALAR, NULL, out, err, "i",
		      env_id);
}

static int sq_table_list(void *impl, int64_t env_id,
			 int (*fn)(void *arg, const struct catalog_table *t),
			 void *arg, struct cmfs_err *err)
{
	struct catalog_table t;

	return sq_each(impl, S_TABLE_LIST, rd_table, &t, EACH_FN(fn), arg, err,
		       "i", env_id);
}

/* ---- events ---- */

/* S_EVENT_END's row: the first row number, and the next offset. */
static int rd_event_end(void *o, sqlite3_stmt *s)
{
	int64_t *at = o;

	at[0] = sqlite3_column_int64(s, 0);
	at[1] = sqlite3_column_int64(s, 1);
	return 0;
}

/* Line `line` at the end of the events of `env`, in the caller's
 * transaction; the name's number is made at its first line. */
static int event_add(struct sq *q, const char *env, const char *line,
		     struct cmfs_err *err)
{
	int64_t at[2], len = (int64_t)strlen(line);
	int rc = sq_run(q, S_EVENT_END, SQ_ONE, rd_event_end, at, err, "t",
			env);

	if (rc == -ENOENT) {
		rc = sq_run(q, S_EVENT_ENV_ADD, SQ_EXEC, NULL, NULL, err, "t",
			    env);
		if (!rc)
			rc = sq_run(q, S_EVENT_END, SQ_ONE, rd_event_end, at,
				    err, "t", env);
	}
	if (!rc)
		rc = sq_run(q, S_EVENT_ADD, SQ_EXEC, NULL, NULL, err, "iitib",
			    at[0], at[1], env, len, line, (size_t)len);
	return rc;
}

/*
 * Lines on their own record reads or refusals: nothing changed, so they
 * need not wait for a disk flush.  They become durable with the next
 * change's commit, which syncs the whole WAL.  Lines in a transaction
 * commit, durably, with its change.
 */
static int sq_event_add(void *impl, size_t n, const char *const *envs,
			const char *const *lines, struct cmfs_err *err)
{
	struct sq *q = impl;
	int own = 0, rc = 0;
	size_t i;

	sq_lock(q);
	if (!q->depth) {
		if (q->full)
			sq_run(q, S_SYNC_NORMAL, SQ_EXEC, NULL, NULL, NULL, "");
		/* A line is statements that read, then write: together. */
		own = !(rc = sq_run(q, S_BEGIN, SQ_EXEC, NULL, NULL, err, ""));
	}
	for (i = 0; !rc && i < n; i++)
		rc = event_add(q, envs[i], lines[i], err);
	if (own) {
		if (!rc)
			rc = sq_run(q, S_COMMIT, SQ_EXEC, NULL, NULL, err, "");
		if (rc)
			sq_run(q, S_ROLLBACK, SQ_EXEC, NULL, NULL, NULL, "");
	}
	if (!q->depth && q->full)
		sq_run(q, S_SYNC_FULL, SQ_EXEC, NULL, NULL, NULL, "");
	sq_unlock(q);
	return rc;
}

static int sq_event_size(void *impl, const char *env, uint64_t *out,
			 struct cmfs_err *err)
{
	return sq_run(impl, S_EVENT_SIZE, SQ_SCALAR, NULL, out, err, "t", env);
}

/* What is left to read of an environment's log (sq_event_read). */
struct event_read {
	struct buf *out;
	uint64_t off;
	size_t size;
};

/* A line into the read: the part from `off` on, up to `size` bytes; 1
 * once there is nothing more to read. */
static int rd_event(void *o, sqlite3_stmt *s)
{
	struct event_read *e = o;
	uint64_t at = (uint64_t)sqlite3_column_int64(s, 0);
	const char *line = sqlite3_column_blob(s, 1);
	size_t len = (size_t)sqlite3_column_bytes(s, 1), skip, take;
	int rc;

	if (!e->size)
		return 1;
	if (at + len <= e->off)
		return 0;
	skip = e->off > at ? (size_t)(e->off - at) : 0;
	take = len - skip < e->size ? len - skip : e->size;
	if ((rc = buf_add(e->out, line + skip, take)))
		return rc;
	e->size -= take;
	e->off += take;
	return 0;
}

static int sq_event_read(void *impl, const char *env, uint64_t off,
			 size_t size, struct buf *out, struct cmfs_err *err)
{
	struct sq *q = impl;
	struct event_read e = {out, off, size};
	uint64_t base = 0;
	int rc;

	sq_lock(q);
	rc = sq_run(q, S_EVENT_BASE, SQ_SCALAR, NULL, &base, err, "t", env);
	e.off += base;
	if (!rc)
		rc = sq_each(q, S_EVENT_READ, rd_event, &e, NULL, NULL, err,
			     "ti", env, (int64_t)e.off);
	sq_unlock(q);
	return rc == 1 ? 0 : rc;
}

static int sq_event_envs(void *impl, int (*fn)(void *arg, const char *env),
			 void *arg, struct cmfs_err *err)
{
	char name[256];

	return sq_each(impl, S_EVENT_ENVS, rd_name256, name, EACH_FN(fn), arg,
		       err, "");
}

static int sq_event_trim(void *impl, const char *env, uint64_t max_rows,
			 const char *before, uint64_t *removed,
			 struct cmfs_err *err)
{
	struct sq *q = impl;
	uint64_t n = 0, cut = 0;
	int rc = 0;

	sq_lock(q);
	if (before)
		rc = sq_run(q, S_EVENT_OLD, SQ_EXEC, NULL, &cut, err, "tt", env,
			    before);
	*removed = cut;
	cut = 0;
	if (!rc && max_rows)
		rc = sq_run(q, S_EVENT_COUNT, SQ_SCALAR, NULL, &n, err, "t",
			    env);
	if (!rc && n > max_rows && max_rows)
		rc = sq_run(q, S_EVENT_CUT, SQ_EXEC, NULL, &cut, err, "ti", env,
			    (int64_t)(n - max_rows));
	*removed += cut;
	sq_unlock(q);
	return rc;
}

/* ---- blobs: unsynced, loose, inline ---- */

static int sq_unsynced_add(void *impl, const char *sha256, struct cmfs_err *err)
{
	return sq_run(impl, S_UNSYNCED_ADD, SQ_EXEC, NULL, NULL, err, "t",
		      sha256);
}

static int sq_unsynced_mark(void *impl, int64_t *out, struct cmfs_err *err)
{
	uint64_t v = 0;
	int rc = sq_run(impl, S_UNSYNCED_MARK, SQ_SCALAR, NULL, &v, err, "");

	*out = (int64_t)v;
	return rc;
}

static int sq_unsynced_clear(void *impl, int64_t upto, struct cmfs_err *err)
{
	return sq_run(impl, S_UNSYNCED_CLEAR, SQ_EXEC, NULL, NULL, err, "i",
		      upto);
}

static int sq_unsynced_list(void *impl,
			    int (*fn)(void *arg, const char *const *row),
			    void *arg, struct cmfs_err *err)
{
	return list_text(impl, S_UNSYNCED_LIST, 1, fn, arg, err);
}

static int sq_loose_add(void *impl, const char *sha256, struct cmfs_err *err)
{
	return sq_run(impl, S_LOOSE_ADD, SQ_EXEC, NULL, NULL, err, "t", sha256);
}

static int sq_loose_del(void *impl, const char *sha256, struct cmfs_err *err)
{
	return sq_run(impl, S_LOOSE_DEL, SQ_EXEC, NULL, NULL, err, "t", sha256);
}

static int sq_loose_list(void *impl,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	return list_text(impl, S_LOOSE_LIST, 1, fn, arg, err);
}

static int sq_inline_put(void *impl, const char *sha256, const void *data,
			 size_t len, struct cmfs_err *err)
{
	return sq_run(impl, S_INLINE_PUT, SQ_EXEC, NULL, NULL, err, "tb",
		      sha256, data, len);
}

/* Where rd_blob() copies a blob: a malloc'd copy and its length. */
struct blob_out {
	void **data;
	size_t *len;
};

static int rd_blob(void *o, sqlite3_stmt *s)
{
	const struct blob_out *b = o;
	const void *v = sqlite3_column_blob(s, 0);
	size_t n = (size_t)sqlite3_column_bytes(s, 0);

	/* One byte more: an empty blob is not a NULL. */
	if (!(*b->data = malloc(n + 1)))
		return -ENOMEM;
	if (n)
		memcpy(*b->data, v, n);
	*b->len = n;
	return 0;
}

static int sq_inline_get(void *impl, const char *sha256, void **out,
			 size_t *len, struct cmfs_err *err)
{
	struct blob_out b = {out, len};

	*out = NULL;
	*len = 0;
	return sq_run(impl, S_INLINE_GET, SQ_ONE, rd_blob, &b, err, "t",
		      sha256);
}

static int sq_inline_del(void *impl, const char *sha256, struct cmfs_err *err)
{
	return sq_run(impl, S_INLINE_DEL, SQ_CHANGE, NULL, NULL, err, "t",
		      sha256);
}

static int sq_inline_list(void *impl,
			  int (*fn)(void *arg, const char *const *row),
			  void *arg, struct cmfs_err *err)
{
	return list_text(impl, S_INLINE_LIST, 2, fn, arg, err);
}

/* ---- retired names ---- */

/* A retired row handed to catalog_retired_list()'s callback. */
struct retired_cb {
	int (*fn)(void *arg, const char *name, int64_t next);
	void *arg;
};

static int rd_retired(void *o, sqlite3_stmt *s)
{
	const struct retired_cb *c = o;
	char name[256];

	col_str(name, sizeof(name), s, 0);
	return c->fn(c->arg, name, sqlite3_column_int64(s, 1));
}

static int sq_retired_list(void *impl, const char *env,
			   int (*fn)(void *arg, const char *name, int64_t next),
			   void *arg, struct cmfs_err *err)
{
	struct retired_cb c = {fn, arg};

	return sq_each(impl, S_RETIRED_LIST, rd_retired, &c, NULL, NULL, err,
		       "t", env);
}

static int sq_retired_put(void *impl, const char *env, const char *name,
			  int64_t next, struct cmfs_err *err)
{
	struct sq *q = impl;
	uint64_t held = 0;
	int rc;

	if ((rc = sq_begin(q, err)))
		return rc;
	rc = sq_run(q, S_RETIRED_HELD, SQ_SCALAR, NULL, &held, err, "tt", env,
		    name);
	if (!rc && held)
		rc = cmfs_err_set(err, -EEXIST,
				  "%s: an artifact of %s holds the name", name,
				  env);
	if (!rc)
		rc = sq_run(q, S_RETIRED_PUT, SQ_EXEC, NULL, NULL, err, "tti",
			    env, name, next);
	return sq_end(q, rc, err);
}

/* sq_art_by_label_with()'s walk: each artifact's label key2 by its own
 * statement, and no inspection (a file has no round trips to save). */
struct art_with {
	void *impl;
	const char *key2;
	int (*fn)(void *arg, const struct catalog_artifact *a,
		  const char *value2, const struct jar_report *latest);
	void *arg;
};

static int art_with_row(void *arg, const struct catalog_artifact *a)
{
	struct art_with *w = arg;
	char *v = NULL;
	int rc = sq_label_get(w->impl, a->id, w->key2, &v, NULL);

	if (rc && rc != -ENODATA)
		return rc;
	rc = w->fn(w->arg, a, v, NULL);
	free(v);
	return rc;
}

static int sq_art_by_label_with(
	void *impl, int64_t env_id, const char *key, const char *value,
	const char *key2,
	int (*fn)(void *arg, const struct catalog_artifact *a,
		  const char *value2, const struct jar_report *latest),
	void *arg, struct cmfs_err *err)
{
	struct art_with w = { impl, key2, fn, arg };

	return sq_art_by_label(impl, env_id, key, value, art_with_row, &w,
			       err);
}

/* Its two statements in turn (a file has no round trips to save). */
static int sq_table_get_def(void *impl, int64_t env_id, const char *name,
			    struct catalog_table *out,
			    struct catalog_table_def *def,
			    struct cmfs_err *err)
{
	int rc = sq_table_get(impl, env_id, name, out, err);

	return rc ? rc : sq_table_def(impl, out->id, def, err);
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
	.art_by_label_with = sq_art_by_label_with,
	.table_get_def = sq_table_get_def,
};
