/*
 * catalog_pg_insp.c - the PostgreSQL catalog's inspections: a JAR's
 * report (catalog_insp_put/get), its factories and their declared options
 * as rows of child tables, and the links from versions to them.
 */
#include "catalog_pg_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog_rows.h"
#include "jar.h"
#include "options.h"

/* The inspection row a version's blob has (NULL: none). */
#define INSP_OF_VERSION                                                       \
	"(SELECT id FROM inspections i WHERE i.sha256 = versions.sha256)"

int pg_insp_links(void *impl, int relink, uint64_t *out, struct cmfs_err *err)
{
	struct pg *g = impl;
	int rc;

	lock(g);
	rc = pg_scalar_u(g,
			 "SELECT count(*) FROM versions WHERE insp IS DISTINCT"
			 " FROM " INSP_OF_VERSION " AND " INSP_OF_VERSION
			 " IS NOT NULL",
			 NULL, out, err);
	if (!rc && relink && *out)
		rc = pg_run(g,
			    "UPDATE versions SET insp = " INSP_OF_VERSION
			    " WHERE insp IS DISTINCT FROM " INSP_OF_VERSION,
			    NULL, NULL, err);
	unlock(g);
	return rc;
}

int pg_insp_stale(void *impl, int (*fn)(void *arg, const char *const *row),
		  void *arg, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, JAR_INSPECTOR);
	return pg_walk_text(impl,
			    "SELECT i.sha256, s.size FROM inspections i,"
			    " LATERAL (SELECT size FROM versions v"
			    " WHERE v.sha256 = i.sha256 LIMIT 1) s"
			    " WHERE i.inspector < $1",
			    &p, 2, fn, arg, err);
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
	return pg_run(
		d->g,
		"INSERT INTO factory_options(insp, factory, role, key, type,"
		" list, vals, defval, deprecated, fallback, forward)"
		" VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
		" ON CONFLICT DO NOTHING",
		&p, NULL, d->err);
}

/* A row keeps its number when it is put again (fsck): versions name it. */
int pg_insp_put(void *impl, const char *sha256, const struct jar_report *r,
		struct cmfs_err *err)
{
	struct pg *g = impl;
	struct buf ext = BUF_INIT((size_t)1 << 30);
	struct par p = { 0 }, q = { 0 }, sp = { 0 };
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
	if ((rc = pg_txn_begin(g, err)))
		goto out;
	rc = pg_scalar(
		g,
		"INSERT INTO inspections(sha256, error, external,"
		" inspector, options_read) VALUES($1, $2, $3, $4, 1)"
		" ON CONFLICT(sha256) DO UPDATE SET error = excluded.error,"
		" external = excluded.external,"
		" inspector = excluded.inspector, options_read = 1"
		" RETURNING id",
		&p, &id, err);
	if (!rc)
		rc = pg_exec_id(g, "DELETE FROM insp_factories WHERE insp = $1",
				id, err);
	if (!rc)
		rc = pg_exec_id(g,
				"DELETE FROM factory_options WHERE insp = $1",
				id, err);
	for (i = 0; !rc && i < r->nfactories; i++) {
		const struct jar_factory *f = &r->factories[i];
		struct par fp = { 0 };

		p_int(&fp, id);
		p_int(&fp, (int64_t)i);
		p_str(&fp, jar_kind_name(f->kind));
		p_str(&fp, f->identifier);
		p_str(&fp, f->cls);
		rc = pg_run(g,
			    "INSERT INTO insp_factories(insp, seq, kind,"
			    " identifier, class) VALUES($1, $2, $3, $4, $5)",
			    &fp, NULL, err);
	}
	d.insp = id;
	if (!rc)
		rc = catalog_rows_options_each(r, put_option, &d);
	/* Versions of this blob added before it was inspected. */
	p_str(&q, sha256);
	p_str(&sp, sha256);
	p_int(&q, id);
	if (!rc)
		rc = pg_run(g,
			    "UPDATE versions SET insp = $2 WHERE sha256 = $1"
			    " AND insp IS DISTINCT FROM $2",
			    &q, NULL, err);
	/* An inspection put again (re-inspection, fsck) keeps its row and
	 * changes no version: the artifacts of its blob are named to the
	 * other hosts here, whose kept inspections and resolutions must go
	 * (catalog_generation). */
	if (!rc)
		rc = pg_run(g,
			    "SELECT pg_notify('cmfs', 'a' || e.name || '/' ||"
			    " a.name) FROM versions v JOIN artifacts a"
			    " ON a.id = v.artifact_id JOIN envs e"
			    " ON e.id = a.env_id WHERE v.sha256 = $1",
			    &sp, NULL, err);
	rc = pg_end(g, rc, err);
out:
	buf_release(&ext);
	return rc;
}

/* An inspection into r: res[0] its row (error, external, id,
 * options_read), res[1] its factories, res[2] their options. */
static int read_insp_at(PGresult *const *res, int row, const int *from,
			const int *to, struct jar_report *r,
			struct cmfs_err *err)
{
	PGresult *rows;
	int rc = 0, i;

	if (!PQgetisnull(res[0], row, 0) &&
	    !(r->error = strdup(PQgetvalue(res[0], row, 0))))
		rc = -ENOMEM;
	if (!rc)
		rc = catalog_rows_external(r, PQgetvalue(res[0], row, 1));
	if (rc)
		return cmfs_err_set(err, rc, "out of memory");
	rows = res[1];
	for (i = from[1]; !rc && i < to[1]; i++)
		rc = catalog_rows_factory_add(
			r, PQgetvalue(rows, i, 0),
			PQgetisnull(rows, i, 1) ? NULL : PQgetvalue(rows, i, 1),
			PQgetvalue(rows, i, 2));
	if (rc)
		return cmfs_err_set(err, rc, "out of memory");
	if (!col_int(res[0], row, 3)) {
		/* Inspected before options were kept: none is checked. */
		catalog_rows_options_unknown(r);
		return 0;
	}
	rows = res[2];
	for (i = from[2]; !rc && i < to[2]; i++) {
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

/* The one inspection of res (pg_insp_get's statements). */
static int read_insp(PGresult *const *res, struct jar_report *r,
		     struct cmfs_err *err)
{
	const int from[3] = { 0, 0, 0 };
	const int to[3] = { 1, PQntuples(res[1]), PQntuples(res[2]) };

	return read_insp_at(res, 0, from, to, r, err);
}

int pg_insp_many(PGresult *const *res, struct jar_report ***out,
		 struct cmfs_err *err)
{
	int n = PQntuples(res[0]), i, k, from[3] = { 0, 0, 0 }, to[3];
	struct jar_report **v = calloc((size_t)n + 1, sizeof(*v));
	int rc = 0;

	*out = NULL;
	if (!v)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; !rc && i < n; i++) {
		const char *id = PQgetvalue(res[0], i, 2);

		/* Each inspection's factories and options: the rows after
		 * the last one's with its id (all are ordered by id). */
		for (k = 1; k < 3; k++) {
			int last = PQnfields(res[k]) - 1;

			to[k] = from[k];
			while (to[k] < PQntuples(res[k]) &&
			       !strcmp(PQgetvalue(res[k], to[k], last), id))
				to[k]++;
		}
		if (!(v[i] = calloc(1, sizeof(*v[i]))))
			rc = cmfs_err_set(err, -ENOMEM, "out of memory");
		else
			rc = read_insp_at(res, i, from, to, v[i], err);
		from[1] = to[1];
		from[2] = to[2];
	}
	if (rc) {
		for (i = 0; i < n; i++)
			jar_report_free(v[i]);
		free(v);
		return rc;
	}
	*out = v;
	return 0;
}

/* By the blob (the row a version names, `id`, is found by it too). */
int pg_insp_get(void *impl, const char *sha256, int64_t id, int options,
		struct jar_report **out, struct cmfs_err *err)
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
	rc = pg_run_n(g, 3, sql, ps, res, err);
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
