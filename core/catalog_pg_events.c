/*
 * catalog_pg_events.c - the PostgreSQL catalog's events: each
 * environment's log as rows of (offset, line), appended under the
 * environment's advisory lock so that hosts appending at once get
 * consecutive offsets, read by offset, and trimmed from the front.
 */
#include "catalog_pg_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/*
 * A line goes at the end of its environment's log.  Hosts appending to
 * one log at once take turns by a lock on its name, held to the end of
 * the transaction: each reads the end of the log after the last one's
 * commit, so no two lines get one offset.
 */
int pg_event_add(void *impl, size_t n, const char *const *envs,
		 const char *const *lines, struct cmfs_err *err)
{
	struct pg *g = impl;
	size_t i;
	int rc;

	if ((rc = pg_txn_begin(g, err)))
		return rc;
	for (i = 0; !rc && i < n; i++) {
		struct par e = { 0 }, p = { 0 };
		size_t len = strlen(lines[i]);

		p_str(&e, envs[i]);
		p_str(&p, envs[i]);
		p_int(&p, (int64_t)len);
		p_bin(&p, lines[i], len);
		rc = pg_run(g,
			    "SELECT pg_advisory_xact_lock(" EVENTS_LOCK ","
			    " hashtext($1))",
			    &e, NULL, err);
		if (!rc)
			rc = pg_run(
				g,
				"INSERT INTO events(env, off, len, line)"
				" VALUES($1, COALESCE((SELECT off + len FROM"
				" events WHERE env = $1 ORDER BY off DESC"
				" LIMIT 1), 0), $2, $3)",
				&p, NULL, err);
	}
	return pg_end(g, rc, err);
}

int pg_event_size(void *impl, const char *env, uint64_t *out,
		  struct cmfs_err *err)
{
	struct par p = { 0 };

	p_str(&p, env);
	return pg_scalar_u(impl,
			   "SELECT COALESCE((SELECT off + len FROM events"
			   " WHERE env = $1 ORDER BY off DESC LIMIT 1) -"
			   " (SELECT off FROM events WHERE env = $1"
			   " ORDER BY off LIMIT 1), 0)",
			   &p, out, err);
}

int pg_event_read(void *impl, const char *env, uint64_t off, size_t size,
		  struct buf *out, struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 }, q = { 0 };
	PGresult *res = NULL;
	int64_t base = 0;
	int rc, i;

	p_str(&p, env);
	lock(g);
	rc = pg_scalar(g,
		       "SELECT COALESCE((SELECT off FROM events WHERE env = $1"
		       " ORDER BY off LIMIT 1), 0)",
		       &p, &base, err);
	if (rc)
		goto out;
	off += (uint64_t)base;
	p_str(&q, env);
	p_int(&q, (int64_t)off);
	p_int(&q, (int64_t)off + (int64_t)size);
	rc = pg_run(
		g,
		"SELECT off, line FROM events WHERE env = $1 AND"
		" off >= COALESCE((SELECT max(off) FROM events"
		" WHERE env = $1 AND off <= $2), 0) AND off < $3 ORDER BY off",
		&q, &res, err);
	for (i = 0; !rc && size && i < PQntuples(res); i++) {
		uint64_t at = (uint64_t)col_int(res, i, 0);
		size_t len, skip, take;
		char *line = pg_col_bytes(res, i, 1, &len);

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

int pg_event_envs(void *impl, int (*fn)(void *arg, const char *env), void *arg,
		  struct cmfs_err *err)
{
	PGresult *res;
	int rc = pg_run_locked(impl,
			       "SELECT DISTINCT env FROM events ORDER BY env",
			       NULL, &res, err),
	    i;

	for (i = 0; !rc && i < PQntuples(res); i++)
		rc = fn(arg, PQgetvalue(res, i, 0));
	PQclear(res);
	return rc;
}

int pg_event_trim(void *impl, const char *env, uint64_t max_rows,
		  const char *before, uint64_t *removed, struct cmfs_err *err)
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
		rc = pg_run_count(g,
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
		rc = pg_scalar(g, "SELECT count(*) FROM events WHERE env = $1",
			       &p, &n, err);
		if (!rc && (uint64_t)n > max_rows) {
			p_int(&p, n - (int64_t)max_rows);
			rc = pg_run_count(
				g,
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
