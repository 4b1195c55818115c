/*
 * catalog_pg_stmt.c - the PostgreSQL catalog's statement helper: each
 * statement prepared once per connection and kept by its text, run with
 * its parameters as text or bytes, alone or several in one round trip
 * (libpq's pipeline), and its rows read into the catalog's structs.
 *
 * SQLSTATEs become errnos here and nowhere else: unique violation
 * -EEXIST, other constraint or data errors -EINVAL, disk full -ENOSPC,
 * out of memory -ENOMEM, serialization failure or deadlock -EAGAIN, the
 * rest (a lost connection among them) -EIO.
 */
#include "catalog_pg_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The errno of a failed result (its SQLSTATE), with its message. */
int pg_fail(struct pg *g, const PGresult *res, struct cmfs_err *err)
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
 * A failure of the connection, not of the statement: libpq's own (no
 * SQLSTATE: the server closed the connection), a connection exception
 * (class 08) or the server shutting down (57P01..57P03).  libpq may still
 * call such a connection good until it next writes to it.
 */
int pg_lost(const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE)
				: NULL;

	return !state || !strncmp(state, "08", 2) ||
	       !strncmp(state, "57P0", 4);
}

/* Forget the prepared statements: they died with the connection. */
void pg_stmts_clear(struct pg *g)
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

/*
 * Run `sql` with parameters `p` (may be NULL).  Rows, if wanted, in *out
 * (the caller's to PQclear).  A connection lost between transactions is
 * made again before the statement;
 * one lost inside a transaction fails it (-EIO), and the transaction with
 * it.  The rows in text (binary 0) or binary (1) format.
 */
int pg_run_as(struct pg *g, const char *sql, const struct par *p, int binary,
	      PGresult **out, struct cmfs_err *err)
{
	PGresult *res;
	ExecStatusType st;
	char name[24];
	int rc;

	if (out)
		*out = NULL;
	pg_revive(g);
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
		rc = pg_fail(g, res, err);
		g->broken |= pg_lost(res);
		PQclear(res);
		return rc;
	}
	if (out)
		*out = res;
	else
		PQclear(res);
	return 0;
}

int pg_run(struct pg *g, const char *sql, const struct par *p, PGresult **out,
	   struct cmfs_err *err)
{
	return pg_run_as(g, sql, p, 0, out, err);
}

/* pg_run() under the lock. */
int pg_run_locked(struct pg *g, const char *sql, const struct par *p,
		  PGresult **out, struct cmfs_err *err)
{
	int rc;

	lock(g);
	rc = pg_run(g, sql, p, out, err);
	unlock(g);
	return rc;
}

/*
 * The n statements sql[i] with parameters p[i], sent in one round trip
 * (libpq's pipeline) where pg_run() would take n; the rows of each in
 * out[i] (the caller's to PQclear), or all NULL and an error.  Outside a
 * transaction one implicit transaction holds them all: they read one
 * snapshot, as one statement does.
 */
int pg_run_n(struct pg *g, int n, const char *const *sql,
	     const struct par *const *p, PGresult **out, struct cmfs_err *err)
{
	char name[RUN_MAX][24];
	PGresult *res = NULL;
	int rc = 0, i, sent = 0;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	pg_revive(g);
	for (i = 0; i < n && !rc; i++)
		rc = prepared(g, sql[i], name[i], &res);
	if (rc < 0) {
		rc = pg_fail(g, res, err);
		g->broken |= pg_lost(res);
		PQclear(res);
		return rc;
	}
	if (rc > 0 || !PQenterPipelineMode(g->conn)) {
		/* No room for the names, or no pipeline: one at a time. */
		for (i = 0, rc = 0; i < n && !rc; i++)
			rc = pg_run(g, sql[i], p[i], &out[i], err);
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
			rc = pg_fail(g, out[i], err);
			g->broken |= pg_lost(out[i]);
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
int pg_run_count(struct pg *g, const char *sql, const struct par *p, int64_t *n,
		 struct cmfs_err *err)
{
	PGresult *res;
	int rc = pg_run_locked(g, sql, p, &res, err);

	*n = rc ? 0 : changes(res);
	PQclear(res);
	return rc;
}

/* A bytea column (text format: hex) as a NUL-terminated copy. */
char *pg_col_bytes(PGresult *res, int row, int col, size_t *len)
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
int pg_scalar(struct pg *g, const char *sql, const struct par *p, int64_t *out,
	      struct cmfs_err *err)
{
	PGresult *res;
	int rc = pg_run_locked(g, sql, p, &res, err);

	*out = 0;
	if (!rc && PQntuples(res) > 0)
		*out = col_int(res, 0, 0);
	PQclear(res);
	return rc;
}

int pg_scalar_u(struct pg *g, const char *sql, const struct par *p,
		uint64_t *out, struct cmfs_err *err)
{
	int64_t v;
	int rc = pg_scalar(g, sql, p, &v, err);

	*out = (uint64_t)v;
	return rc;
}

/* At most one row of `sql`, read with `row` into out; -ENOENT if none. */
int pg_one(struct pg *g, const char *sql, const struct par *p,
	   void (*row)(void *out, PGresult *res, int r), void *out,
	   struct cmfs_err *err)
{
	PGresult *res;
	int rc = pg_run_locked(g, sql, p, &res, err);

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
int pg_walk(struct pg *g, const char *sql, const struct par *p,
	    void (*row)(void *out, PGresult *res, int r), void *tmp,
	    int (*fn)(void *arg, const void *row), void *arg,
	    struct cmfs_err *err)
{
	PGresult *res;
	int rc = pg_run_locked(g, sql, p, &res, err), i;

	for (i = 0; !rc && i < PQntuples(res); i++) {
		row(tmp, res, i);
		rc = fn(arg, tmp);
	}
	PQclear(res);
	return rc;
}

/* A row of text columns, for pg_walk_text(). */
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

int pg_walk_text(struct pg *g, const char *sql, const struct par *p, int ncol,
		 int (*fn)(void *arg, const char *const *row), void *arg,
		 struct cmfs_err *err)
{
	struct text_row t = { ncol, { NULL }, fn, arg };

	return pg_walk(g, sql, p, rd_text, &t, call_text, NULL, err);
}

/* Statements whose one parameter is a row's id. */
int pg_exec_id(struct pg *g, const char *sql, int64_t id, struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, id);
	return pg_run_locked(g, sql, &p, NULL, err);
}

int pg_scalar_id(struct pg *g, const char *sql, int64_t id, uint64_t *out,
		 struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, id);
	return pg_scalar_u(g, sql, &p, out, err);
}

int pg_walk_id(struct pg *g, const char *sql, int64_t id,
	       void (*row)(void *out, PGresult *res, int r), void *tmp,
	       int (*fn)(void *arg, const void *row), void *arg,
	       struct cmfs_err *err)
{
	struct par p = { 0 };

	p_int(&p, id);
	return pg_walk(g, sql, &p, row, tmp, fn, arg, err);
}
