/*
 * catalog_pg.c - the PostgreSQL backend of the catalog, on libpq: its
 * operations on environments, artifacts, versions, labels and tables, and
 * the table of them all (catalog_pg_backend).
 *
 * The same rows as the SQLite backend (catalog_sqlite.c), in a schema of
 * its own (catalog_pg_schema.c).  Across connections (other hosts)
 * PostgreSQL's row locks order writers: a version's number comes from one
 * UPDATE of its artifact's row (ver_add), so two hosts adding versions to
 * one artifact at once get consecutive numbers.
 *
 * Text columns compare and sort bytewise (COLLATE "C"), as SQLite's do.
 * Label values and event lines are bytea: bytes, as the interface says.
 * Table options are rows of a child table, as in the SQLite backend.
 */
#include "catalog_pg_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog_rows.h"

/* The columns of an artifact row with its latest version. */
#define ART_COLS                                                             \
	"a.id, a.env_id, a.name, v.n, v.sha256, v.size, v.mtime, v.uid,"     \
	" (SELECT count(*) FROM versions WHERE artifact_id = a.id), v.insp"
#define ART_LATEST                                                           \
	" JOIN versions v ON v.artifact_id = a.id AND v.n ="                 \
	" (SELECT max(n) FROM versions WHERE artifact_id = a.id)"
#define VER_COLS "artifact_id, n, sha256, size, mtime, uid, insp"

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

static int pg_env_add(void *impl, const char *name, uint32_t uid, int64_t now,
		      struct catalog_env *out, struct cmfs_err *err)
{
	struct par p = { 0 };
	int64_t id;
	int rc;

	p_str(&p, name);
	p_int(&p, now);
	p_int(&p, uid);
	rc = pg_scalar(impl,
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
	return pg_one(impl,
		      "SELECT id, name, ctime, uid FROM envs WHERE name = $1",
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
	rc = pg_scalar(
		g,
		"SELECT (EXISTS(SELECT 1 FROM artifacts WHERE env_id = $1)"
		" OR EXISTS(SELECT 1 FROM tables WHERE env_id = $1))::int",
		&p, &busy, err);
	if (!rc && busy)
		rc = -ENOTEMPTY;
	if (!rc)
		rc = pg_run(g, "DELETE FROM envs WHERE id = $1", &p, NULL, err);
	unlock(g);
	return rc;
}

static int pg_env_list(void *impl,
		       int (*fn)(void *arg, const struct catalog_env *e),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_env e;

	return pg_walk(
		impl, "SELECT id, name, ctime, uid FROM envs ORDER BY name",
		NULL, rd_env, &e, (int (*)(void *, const void *))fn, arg, err);
}

static int pg_art_get(void *impl, int64_t env_id, const char *name,
		      struct catalog_artifact *out, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, env_id);
	p_str(&p, name);
	return pg_one(impl,
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
	return pg_scalar(impl,
			 "INSERT INTO artifacts(env_id, name) VALUES($1, $2)"
			 " RETURNING id",
			 &p, out, err);
}

static int pg_art_del(void *impl, int64_t art_id, struct cmfs_err *err)
{
	return pg_exec_id(impl, "DELETE FROM artifacts WHERE id = $1", art_id,
			  err);
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
	if ((rc = pg_txn_begin(g, err)))
		return rc;
	rc = pg_scalar(g,
		       "SELECT r.next_n FROM retired r JOIN envs e ON"
		       " e.name = r.env JOIN artifacts a ON a.env_id = e.id"
		       " WHERE a.id = $1 AND r.name = $2"
		       " AND r.holder IS DISTINCT FROM a.id",
		       &p, &taken, err);
	if (!rc)
		rc = pg_scalar(g,
			       "SELECT min(n) FROM versions WHERE"
			       " artifact_id = $1",
			       &a, &low, err);
	if (!rc)
		rc = pg_run(g,
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
		rc = pg_scalar(g,
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
		rc = pg_run(g,
			    "UPDATE versions SET n = -(n + $2)"
			    " WHERE artifact_id = $1",
			    &q, NULL, err);
	if (!rc && shift)
		rc = pg_run(g,
			    "UPDATE versions SET n = -n WHERE"
			    " artifact_id = $1 AND n < 0",
			    &a, NULL, err);
	if (!rc)
		rc = pg_run(g,
			    "UPDATE artifacts SET next_n = next_n + $2"
			    " WHERE id = $1",
			    &q, NULL, err);
	q.n = 1;
	p_int(&q, taken);
	if (!rc)
		rc = pg_run(g,
			    "UPDATE artifacts SET next_n = greatest(next_n, $2)"
			    " WHERE id = $1",
			    &q, NULL, err);
	if (!rc) {
		struct par d = { 0 };

		p_int(&d, env_id);
		p_str(&d, name);
		rc = pg_run(g,
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
	return pg_scalar_id(impl, "SELECT nart FROM envs WHERE id = $1", env_id,
			    out, err);
}

static int pg_art_list(void *impl, int64_t env_id,
		       int (*fn)(void *arg, const struct catalog_artifact *a),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_artifact a;

	return pg_walk_id(impl,
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
	return pg_walk(impl,
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
	rc = pg_scalar(impl,
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
	return pg_one(impl,
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
	rc = pg_run_count(
		impl, "DELETE FROM versions WHERE artifact_id = $1 AND n = $2",
		&p, &k, err);
	return !rc && !k ? -ENOENT : rc;
}

static int pg_ver_list(void *impl, int64_t art_id,
		       int (*fn)(void *arg, const struct catalog_version *v),
		       void *arg, struct cmfs_err *err)
{
	struct catalog_version v;

	return pg_walk_id(impl,
			  "SELECT " VER_COLS
			  " FROM versions WHERE artifact_id = $1"
			  " ORDER BY n",
			  art_id, rd_ver, &v, (int (*)(void *, const void *))fn,
			  arg, err);
}

static int pg_ver_by_sha(void *impl, const char *sha256,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_str(&p, sha256);
	return pg_walk_text(
		impl,
		"SELECT e.name, a.name, v.n FROM versions v"
		" JOIN artifacts a ON a.id = v.artifact_id"
		" JOIN envs e ON e.id = a.env_id WHERE v.sha256 = $1"
		" ORDER BY e.name, a.name, v.n",
		&p, 3, fn, arg, err);
}

static int pg_env_recount(void *impl, struct cmfs_err *err)
{
	return pg_run_locked(impl, PG_RECOUNT, NULL, NULL, err);
}

/* The latest versions' blobs of the artifacts of env $3 whose label $1
 * has value $2. */
#define LABELLED_SHAS                                                        \
	"SELECT v.sha256 FROM labels l"                                       \
	" JOIN artifacts a ON a.id = l.artifact_id" ART_LATEST               \
	" WHERE l.key = $1 AND l.value = $2 AND a.env_id = $3"
#define LABELLED_INSPS                                                       \
	"SELECT id FROM inspections WHERE sha256 IN (" LABELLED_SHAS ")"

/*
 * One round trip (a pipeline of four statements, one snapshot): the
 * artifacts carrying the label, each with its label key2, and the
 * inspections of their latest versions with their factories and options
 * (pg_insp_get's statements, for every such blob at once).  A resolution
 * would otherwise ask for each apart.
 */
static int pg_art_by_label_with(
	void *impl, int64_t env_id, const char *key, const char *value,
	const char *key2,
	int (*fn)(void *arg, const struct catalog_artifact *a,
		  const char *value2, const struct jar_report *latest),
	void *arg, struct cmfs_err *err)
{
	static const char *const sql[4] = {
		"SELECT " ART_COLS ", t.value FROM labels l"
		" JOIN artifacts a ON a.id = l.artifact_id" ART_LATEST
		" LEFT JOIN labels t ON t.artifact_id = a.id AND t.key = $4"
		" WHERE l.key = $1 AND l.value = $2 AND a.env_id = $3"
		" ORDER BY a.name",
		"SELECT error, external, id, options_read, sha256"
		" FROM inspections WHERE sha256 IN (" LABELLED_SHAS ")"
		" ORDER BY id",
		"SELECT kind, identifier, class, insp FROM insp_factories"
		" WHERE insp IN (" LABELLED_INSPS ") ORDER BY insp, seq",
		"SELECT factory, role, key, type, list, vals, defval,"
		" deprecated, fallback, forward, insp FROM factory_options"
		" WHERE insp IN (" LABELLED_INSPS ")"
		" ORDER BY insp, factory, role, key",
	};
	struct pg *g = impl;
	struct par p = { 0 }, p4;
	const struct par *const ps[4] = { &p4, &p, &p, &p };
	struct catalog_artifact a;
	struct jar_report **reps = NULL;
	PGresult *res[4];
	int rc, i, k, nrep;

	p_str(&p, key);
	p_bin(&p, value, strlen(value));
	p_int(&p, env_id);
	p4 = p;
	p_str(&p4, key2);
	/* p4's number was copied with it: point at its own copy. */
	p4.v[2] = p4.num[2];
	lock(g);
	rc = pg_run_n(g, 4, sql, ps, res, err);
	unlock(g);
	if (rc)
		return rc;
	rc = pg_insp_many(res + 1, &reps, err);
	nrep = PQntuples(res[1]);
	for (i = 0; !rc && i < PQntuples(res[0]); i++) {
		const struct jar_report *latest = NULL;
		char *value2 = NULL;

		row_artifact(&a, res[0], i);
		for (k = 0; k < nrep && !latest; k++)
			if (!strcmp(PQgetvalue(res[1], k, 4), a.latest.sha256))
				latest = reps[k];
		if (!PQgetisnull(res[0], i, 10) &&
		    !(value2 = pg_col_bytes(res[0], i, 10, NULL))) {
			rc = cmfs_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		rc = fn(arg, &a, value2, latest);
		free(value2);
	}
	for (k = 0; reps && k < nrep; k++)
		jar_report_free(reps[k]);
	free(reps);
	for (k = 0; k < 4; k++)
		PQclear(res[k]);
	return rc;
}

static int pg_label_set(void *impl, int64_t art_id, const char *key,
			const char *value, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, art_id);
	p_str(&p, key);
	p_bin(&p, value, strlen(value));
	return pg_run_locked(impl,
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
	rc = pg_run_count(
		impl, "DELETE FROM labels WHERE artifact_id = $1 AND key = $2",
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
	rc = pg_run_locked(impl,
			   "SELECT value FROM labels WHERE artifact_id = $1"
			   " AND key = $2",
			   &p, &res, err);
	if (!rc && PQntuples(res) == 0)
		rc = -ENODATA;
	if (!rc && !(*out = pg_col_bytes(res, 0, 0, NULL)))
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
	rc = pg_run_locked(
		impl,
		"SELECT key, value FROM labels WHERE artifact_id = $1"
		" ORDER BY key",
		&p, &res, err);
	for (i = 0; !rc && i < PQntuples(res); i++) {
		char *v = pg_col_bytes(res, i, 1, NULL);

		rc = v ? fn(arg, PQgetvalue(res, i, 0), v) : -ENOMEM;
		free(v);
	}
	PQclear(res);
	return rc;
}

static int pg_table_get(void *impl, int64_t env_id, const char *name,
			struct catalog_table *out, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, env_id);
	p_str(&p, name);
	return pg_one(impl,
		      "SELECT id, env_id, name, size, mtime, uid FROM tables"
		      " WHERE env_id = $1 AND name = $2",
		      &p, rd_table, out, err);
}

/* A table's definition from its row (res[0]: ddl, like_ddl from column
 * `col`; none: -ENOENT) and options (res[1]: key, value) into *out,
 * released on an error. */
static int read_def(PGresult *const *res, int col,
		    struct catalog_table_def *out, struct cmfs_err *err)
{
	int rc = 0, i;

	if (PQntuples(res[0]) == 0)
		return -ENOENT;
	if (catalog_rows_def(out, PQgetvalue(res[0], 0, col),
			     PQgetisnull(res[0], 0, col + 1)
				     ? NULL
				     : PQgetvalue(res[0], 0, col + 1)))
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; !rc && i < PQntuples(res[1]); i++)
		if ((rc = catalog_rows_option_add(out, PQgetvalue(res[1], i, 0),
						  PQgetvalue(res[1], i, 1))))
			cmfs_err_set(err, rc, "out of memory");
	if (rc)
		catalog_table_def_release(out);
	return rc;
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
	int rc;

	p_int(&p, id);
	lock(g);
	rc = pg_run_n(g, 2, sql, ps, res, err);
	unlock(g);
	if (!rc)
		rc = read_def(res, 0, out, err);
	PQclear(res[0]);
	PQclear(res[1]);
	return rc;
}

/* The row with its definition, and the options: one round trip (one
 * snapshot), two statements (each one costs the server an executor's
 * start and a result). */
static int pg_table_get_def(void *impl, int64_t env_id, const char *name,
			    struct catalog_table *out,
			    struct catalog_table_def *def,
			    struct cmfs_err *err)
{
	static const char *const sql[2] = {
		"SELECT id, env_id, name, size, mtime, uid, ddl, like_ddl"
		" FROM tables WHERE env_id = $1 AND name = $2",
		"SELECT key, value FROM tab_options WHERE table_id ="
		" (SELECT id FROM tables WHERE env_id = $1 AND name = $2)"
		" ORDER BY seq",
	};
	struct pg *g = impl;
	struct par p = { 0 };
	const struct par *const ps[2] = { &p, &p };
	PGresult *res[2];
	int rc;

	p_int(&p, env_id);
	p_str(&p, name);
	lock(g);
	rc = pg_run_n(g, 2, sql, ps, res, err);
	unlock(g);
	if (!rc)
		rc = read_def(res, 6, def, err);
	if (!rc)
		row_table(out, res[0], 0);
	PQclear(res[0]);
	PQclear(res[1]);
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
	if ((rc = pg_txn_begin(g, err)))
		return rc;
	rc = pg_scalar(g,
		       "INSERT INTO tables(env_id, name, ddl, like_ddl, size,"
		       " mtime, uid) VALUES($1, $2, $3, $4, $5, $6, $7)"
		       " ON CONFLICT(env_id, name) DO UPDATE SET"
		       " ddl = $3, like_ddl = $4, size = $5, mtime = $6,"
		       " uid = $7, refusal = NULL RETURNING id",
		       &p, &id, err);
	if (!rc)
		rc = pg_exec_id(g,
				"DELETE FROM tab_options WHERE table_id = $1",
				id, err);
	for (i = 0; !rc && i < def->nopts; i++) {
		struct par o = { 0 };

		p_int(&o, id);
		p_int(&o, (int64_t)i);
		p_str(&o, def->keys[i]);
		p_str(&o, def->values[i]);
		rc = pg_run(g,
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
	return pg_exec_id(impl, "DELETE FROM tables WHERE id = $1", id, err);
}

static int pg_table_refusal_set(void *impl, int64_t id, const char *text,
				struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, id);
	p_str(&p, text);
	return pg_run_locked(impl,
			     "UPDATE tables SET refusal = $2 WHERE id = $1", &p,
			     NULL, err);
}

static int pg_table_refusal_get(void *impl, int64_t id, struct buf *out,
				struct cmfs_err *err)
{
	struct par p = { 0 };
	PGresult *res;
	int rc;

	p_int(&p, id);
	rc = pg_run_locked(impl, "SELECT refusal FROM tables WHERE id = $1", &p,
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
	return pg_scalar_id(impl, "SELECT ntab FROM envs WHERE id = $1", env_id,
			    out, err);
}

static int pg_table_list(void *impl, int64_t env_id,
			 int (*fn)(void *arg, const struct catalog_table *t),
			 void *arg, struct cmfs_err *err)
{
	struct catalog_table t;

	return pg_walk_id(
		impl,
		"SELECT id, env_id, name, size, mtime, uid FROM tables"
		" WHERE env_id = $1 ORDER BY name",
		env_id, rd_table, &t, (int (*)(void *, const void *))fn, arg,
		err);
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
	if ((rc = pg_txn_begin(g, err)))
		return rc;
	rc = pg_run(g,
		    "INSERT INTO versions(" VER_COLS ") VALUES($1, $2, $3, $4,"
		    " $5, $6, (SELECT id FROM inspections WHERE sha256 = $3))",
		    &p, NULL, err);
	if (!rc)
		rc = pg_run_count(g,
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
	rc = pg_run_locked(impl, "SELECT next_n FROM artifacts WHERE id = $1",
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
	rc = pg_run_count(impl,
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
	rc = pg_run_locked(impl,
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
	if ((rc = pg_txn_begin(g, err)))
		return rc;
	rc = pg_scalar(g,
		       "SELECT count(*) FROM artifacts a JOIN envs e ON"
		       " e.id = a.env_id WHERE e.name = $1 AND a.name = $2",
		       &p, &held, err);
	if (!rc && held)
		rc = cmfs_err_set(err, -EEXIST,
				  "%s: an artifact of %s holds the name", name,
				  env);
	p_int(&p, next);
	if (!rc)
		rc = pg_run(g,
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
	if ((rc = pg_txn_begin(g, err)))
		return rc;
	rc = pg_scalar(g,
		       "SELECT count(*) FROM versions v WHERE NOT EXISTS(SELECT"
		       " 1 FROM blobs b WHERE b.sha256 = v.sha256) AND NOT"
		       " EXISTS(SELECT 1 FROM inline_blobs i WHERE"
		       " i.sha256 = v.sha256)",
		       NULL, &lacking, err);
	if (!rc && lacking &&
	    !(rc = pg_run(g, "SELECT id FROM cmfs_store", NULL, &res, err))) {
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
	.art_by_label_with = pg_art_by_label_with,
	.table_get_def = pg_table_get_def,
};
