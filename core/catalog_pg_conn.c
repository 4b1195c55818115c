/*
 * catalog_pg_conn.c - the PostgreSQL catalog's connection: open (with the
 * schema created or migrated), close, session settings, reconnection and
 * transactions.
 *
 * One connection guarded by a recursive mutex, held from catalog_begin()
 * to catalog_end() as in the SQLite backend, so a transaction belongs to
 * the thread that began it.  A connection lost between transactions is
 * made again before the next statement (pg_revive); one lost inside a
 * transaction fails it.  Commits are durable on the server: the sync
 * mode, checkpoints and syncs of the SQLite backend are nothing here.
 */
#include "catalog_pg_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/*
 * The connection's session settings, made again with the connection:
 * notices (a trigger's, CREATE IF NOT EXISTS's) are not errors, and a
 * read-only open stays read only.
 */
void pg_session(struct pg *g)
{
	PGresult *res = PQexec(g->conn, "SET client_min_messages = warning");

	PQclear(res);
	if (g->rdonly) {
		res = PQexec(g->conn, "SET default_transaction_read_only = on");
		PQclear(res);
	}
}

/* A connection lost between transactions is made again. */
void pg_revive(struct pg *g)
{
	if ((g->broken || PQstatus(g->conn) != CONNECTION_OK) && !g->depth) {
		pg_stmts_clear(g);
		PQreset(g->conn);
		g->broken = PQstatus(g->conn) != CONNECTION_OK;
		if (!g->broken)
			pg_session(g);
		__atomic_store_n(&g->pid, PQbackendPID(g->conn),
				 __ATOMIC_RELAXED);
	}
}

void pg_close(void *impl)
{
	struct pg *g = impl;

	if (!g)
		return;
	pg_unwatch(g);
	PQfinish(g->conn);
	pg_stmts_clear(g);
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
PGconn *pg_dial(const char *uri)
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
	g->conn = pg_dial(uri);
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
	pg_session(g);
	g->pid = PQbackendPID(g->conn);
	snprintf(g->uri, sizeof(g->uri), "%s", uri);
	*out = g;
	return 0;
}

/*
 * A mount's (and cmfs import's) open: the schema created or migrated.
 * Any number of hosts mount one database at once.
 */
int pg_open(void **impl, const char *uri, struct cmfs_err *err)
{
	struct pg *g;
	int rc = connect_to(&g, uri, err);

	if (rc)
		return rc;
	if ((rc = pg_migrate(g, err))) {
		pg_close(g);
		return rc;
	}
	*impl = g;
	return 0;
}

/* Only a database that holds a cmfs schema; `rdonly`: every transaction
 * of this connection is read only, and the schema is not migrated. */
int pg_open_existing(void **impl, const char *uri, int rdonly,
		     struct cmfs_err *err)
{
	struct pg *g;
	int64_t version = 0;
	int rc = connect_to(&g, uri, err);

	if (rc)
		return rc;
	rc = pg_scalar(g,
		       "SELECT (to_regclass('cmfs_schema') IS NOT NULL)::int",
		       NULL, &version, err);
	if (!rc && version)
		rc = pg_scalar(
			g, "SELECT COALESCE(max(version), 0) FROM cmfs_schema",
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
		rc = pg_run(g, "SET default_transaction_read_only = on", NULL,
			    NULL, err);
	}
	if (!rc && !rdonly)
		rc = pg_migrate(g, err);
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
		rc = pg_run(g, sql, NULL, NULL, err);
	if (rc) {
		unlock(g);
		return rc;
	}
	g->depth++;
	return 0;
}

int pg_begin(void *impl, struct cmfs_err *err)
{
	return begin_as(impl, "BEGIN", err);
}

/* One snapshot for the whole transaction (SQLite's read transaction). */
int pg_begin_read(void *impl, struct cmfs_err *err)
{
	return begin_as(impl,
			"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
			err);
}

int pg_end(void *impl, int rc, struct cmfs_err *err)
{
	struct pg *g = impl;

	if (--g->depth == 0) {
		if (rc == 0)
			rc = pg_run(g, "COMMIT", NULL, NULL, err);
		if (rc)
			pg_run(g, "ROLLBACK", NULL, NULL, NULL);
	}
	unlock(g);
	return rc;
}

/* A statement inside a transaction of its own, unless one is open. */
int pg_txn_begin(struct pg *g, struct cmfs_err *err)
{
	return pg_begin(g, err);
}

/* What PostgreSQL can check from here: the connection, the schema's
 * version and the counters the triggers keep. */
int pg_check(void *impl, char **out, struct cmfs_err *err)
{
	struct pg *g = impl;
	int64_t bad = 0;
	int rc;

	rc = pg_scalar(g,
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

/*
 * Durability is the server's: every commit returns once PostgreSQL has
 * it on disk (its synchronous_commit), so there is nothing to set,
 * checkpoint or sync from here.
 */
int pg_set_sync(void *impl, int full, struct cmfs_err *err)
{
	(void)impl;
	(void)full;
	(void)err;
	return 0;
}

int pg_nothing(void *impl, struct cmfs_err *err)
{
	(void)impl;
	(void)err;
	return 0;
}
