/*
 * catalog_pg_int.h - what the files of the PostgreSQL catalog backend
 * share; nothing outside them includes it (catalog.h is the API).
 *
 *   catalog_pg.c         the operations on environments, artifacts,
 *                        versions, labels and tables, and the table of
 *                        every operation (catalog_pg_backend)
 *   catalog_pg_stmt.c    the statement helper: statements prepared once
 *                        per connection, parameters, several statements
 *                        in one round trip, rows read, SQLSTATEs turned
 *                        into errnos (here and nowhere else)
 *   catalog_pg_conn.c    the connection: open, close, session settings,
 *                        reconnection, transactions
 *   catalog_pg_schema.c  the schema and its migrations, one step a version
 *   catalog_pg_blob.c    blobs in the database, inline and chunked, and
 *                        the store's lists of them (unsynced, loose)
 *   catalog_pg_insp.c    inspections, their factories and options
 *   catalog_pg_events.c  each environment's events
 *   catalog_pg_watch.c   LISTEN/NOTIFY: changes made by other hosts
 *
 * Threads: one connection guarded by a recursive mutex (struct pg's lock).
 * A transaction holds it from pg_begin() to pg_end(), so the calls a
 * thread makes inside it are serialised with everybody else's; every
 * helper below that runs a statement outside one takes it itself
 * (pg_run() and pg_run_n() excepted: their callers hold it).
 */
#ifndef CMFS_CATALOG_PG_INT_H
#define CMFS_CATALOG_PG_INT_H

#include <inttypes.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "catalog.h"
#include "err.h"
#include "hash.h"

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

/* Each environment's counts, from the rows (fsck --repair). */
#define PG_RECOUNT                                                            \
	"UPDATE envs SET"                                                     \
	" nart = (SELECT count(*) FROM artifacts WHERE env_id = envs.id),"    \
	" ntab = (SELECT count(*) FROM tables WHERE env_id = envs.id)"

/* The most statements pg_run_n() sends at once. */
#define RUN_MAX 4

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

static inline void p_int(struct par *p, int64_t v)
{
	snprintf(p->num[p->n], sizeof(p->num[0]), "%" PRId64, v);
	p->v[p->n] = p->num[p->n];
	p->n++;
}

/* A text parameter; NULL is SQL's NULL. */
static inline void p_str(struct par *p, const char *s)
{
	p->v[p->n++] = s;
}

/* A bytes parameter (binary format); `data` is borrowed. */
static inline void p_bin(struct par *p, const void *data, size_t len)
{
	p->v[p->n] = len ? data : "";
	p->len[p->n] = (int)len;
	p->fmt[p->n] = 1;
	p->n++;
}

static inline void lock(struct pg *g)
{
	pthread_mutex_lock(&g->lock);
}

static inline void unlock(struct pg *g)
{
	pthread_mutex_unlock(&g->lock);
}

/* Column `col` of row `row` as an integer (0 for NULL), or copied as
 * text into dst[n]. */
static inline int64_t col_int(PGresult *res, int row, int col)
{
	return strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static inline void col_str(char *dst, size_t n, PGresult *res, int row,
			   int col)
{
	snprintf(dst, n, "%s", PQgetvalue(res, row, col));
}

/* ---- the statement helper (catalog_pg_stmt.c) ---- */

/* The errno of a failed result `res` (may be NULL: the connection's
 * error) by its SQLSTATE, with its message in err. */
int pg_fail(struct pg *g, const PGresult *res, struct cmfs_err *err);

/* Whether `res` failed for the connection, not the statement. */
int pg_lost(const PGresult *res);

/* Forget the prepared statements (they die with the connection). */
void pg_stmts_clear(struct pg *g);

/*
 * Run `sql` with parameters `p` (may be NULL), the caller holding the
 * lock; rows in text (binary 0) or binary (1) format in *out if out is
 * not NULL (the caller's to PQclear).  0 or -errno (pg_fail()).
 */
int pg_run_as(struct pg *g, const char *sql, const struct par *p, int binary,
	      PGresult **out, struct cmfs_err *err);
int pg_run(struct pg *g, const char *sql, const struct par *p,
	   PGresult **out, struct cmfs_err *err);

/* pg_run() taking the lock itself. */
int pg_run_locked(struct pg *g, const char *sql, const struct par *p,
		  PGresult **out, struct cmfs_err *err);

/* The n (<= RUN_MAX) statements sql[i] with parameters p[i] in one round
 * trip, the caller holding the lock; rows in out[i] (the caller's to
 * PQclear), all NULL on an error. */
int pg_run_n(struct pg *g, int n, const char *const *sql,
	     const struct par *const *p, PGresult **out, struct cmfs_err *err);

/* Run `sql` (locked); *n: the rows it changed. */
int pg_run_count(struct pg *g, const char *sql, const struct par *p,
		 int64_t *n, struct cmfs_err *err);

/* A bytea column as a NUL-terminated copy the caller frees (NULL: out of
 * memory); *len, if len is not NULL, its length. */
char *pg_col_bytes(PGresult *res, int row, int col, size_t *len);

/* The first column of the first row as an integer (locked); 0 when there
 * is none or it is NULL. */
int pg_scalar(struct pg *g, const char *sql, const struct par *p,
	      int64_t *out, struct cmfs_err *err);
int pg_scalar_u(struct pg *g, const char *sql, const struct par *p,
		uint64_t *out, struct cmfs_err *err);

/* At most one row of `sql` (locked), read by row() into out; -ENOENT if
 * none. */
int pg_one(struct pg *g, const char *sql, const struct par *p,
	   void (*row)(void *out, PGresult *res, int r), void *out,
	   struct cmfs_err *err);

/* Each row of `sql` (locked) read by row() into tmp, then fn(arg, tmp);
 * all rows are read before the first call (fn may call the catalog).  A
 * non-zero return of fn stops the walk and is returned. */
int pg_walk(struct pg *g, const char *sql, const struct par *p,
	    void (*row)(void *out, PGresult *res, int r), void *tmp,
	    int (*fn)(void *arg, const void *row), void *arg,
	    struct cmfs_err *err);

/* pg_walk() of rows of `ncol` (<= 4) text columns, NULL for a NULL. */
int pg_walk_text(struct pg *g, const char *sql, const struct par *p, int ncol,
		 int (*fn)(void *arg, const char *const *row), void *arg,
		 struct cmfs_err *err);

/* pg_run_locked(), pg_scalar_u() and pg_walk() of statements whose one
 * parameter is a row's id. */
int pg_exec_id(struct pg *g, const char *sql, int64_t id,
	       struct cmfs_err *err);
int pg_scalar_id(struct pg *g, const char *sql, int64_t id, uint64_t *out,
		 struct cmfs_err *err);
int pg_walk_id(struct pg *g, const char *sql, int64_t id,
	       void (*row)(void *out, PGresult *res, int r), void *tmp,
	       int (*fn)(void *arg, const void *row), void *arg,
	       struct cmfs_err *err);

/* ---- the connection (catalog_pg_conn.c) ---- */

/* The session's settings, made again with each connection. */
void pg_session(struct pg *g);

/* A connection lost between transactions is made again (the caller holds
 * the lock); inside one it stays lost, and the transaction fails. */
void pg_revive(struct pg *g);

/* A new connection to `uri`, with timeouts and keepalives; the caller
 * checks its status and PQfinish()es it. */
PGconn *pg_dial(const char *uri);

/* A transaction of its own for what follows, unless one is open: as
 * pg_begin(), ended by pg_end(). */
int pg_txn_begin(struct pg *g, struct cmfs_err *err);

/* The catalog_backend operations of this file: contracts in catalog.h. */
int pg_open(void **impl, const char *uri, struct cmfs_err *err);
int pg_open_existing(void **impl, const char *uri, int rdonly,
		     struct cmfs_err *err);
void pg_close(void *impl);
int pg_begin(void *impl, struct cmfs_err *err);
int pg_begin_read(void *impl, struct cmfs_err *err);
int pg_end(void *impl, int rc, struct cmfs_err *err);
int pg_check(void *impl, char **out, struct cmfs_err *err);
int pg_set_sync(void *impl, int full, struct cmfs_err *err);
int pg_nothing(void *impl, struct cmfs_err *err);

/* ---- the schema (catalog_pg_schema.c) ---- */

/* Create the schema or bring it up to PG_SCHEMA_VERSION, in one
 * transaction under SCHEMA_LOCK; -EPROTO for a newer one. */
int pg_migrate(struct pg *g, struct cmfs_err *err);

/* ---- blobs (catalog_pg_blob.c): catalog_backend operations ---- */

int pg_blob_refs(void *impl, const char *sha256, uint64_t *out,
		 struct cmfs_err *err);
int pg_blob_total(void *impl, uint64_t *out, struct cmfs_err *err);
int pg_unsynced_add(void *impl, const char *sha256, struct cmfs_err *err);
int pg_unsynced_mark(void *impl, int64_t *out, struct cmfs_err *err);
int pg_unsynced_clear(void *impl, int64_t upto, struct cmfs_err *err);
int pg_unsynced_list(void *impl, int (*fn)(void *arg, const char *const *row),
		     void *arg, struct cmfs_err *err);
int pg_loose_add(void *impl, const char *sha256, struct cmfs_err *err);
int pg_loose_del(void *impl, const char *sha256, struct cmfs_err *err);
int pg_loose_list(void *impl, int (*fn)(void *arg, const char *const *row),
		  void *arg, struct cmfs_err *err);
int pg_inline_put(void *impl, const char *sha256, const void *data,
		  size_t len, struct cmfs_err *err);
int pg_inline_get(void *impl, const char *sha256, void **out, size_t *len,
		  struct cmfs_err *err);
int pg_inline_del(void *impl, const char *sha256, struct cmfs_err *err);
int pg_inline_list(void *impl, int (*fn)(void *arg, const char *const *row),
		   void *arg, struct cmfs_err *err);
int pg_blob_put(void *impl, const char *sha256, int fd, uint64_t size,
		struct cmfs_err *err);
int pg_blob_get(void *impl, const char *sha256, int fd, uint64_t *size,
		struct cmfs_err *err);
int pg_blob_list(void *impl, int (*fn)(void *arg, const char *const *row),
		 void *arg, struct cmfs_err *err);

/* ---- inspections (catalog_pg_insp.c): catalog_backend operations ---- */

int pg_insp_links(void *impl, int relink, uint64_t *out,
		  struct cmfs_err *err);
int pg_insp_stale(void *impl, int (*fn)(void *arg, const char *const *row),
		  void *arg, struct cmfs_err *err);
int pg_insp_put(void *impl, const char *sha256, const struct jar_report *r,
		struct cmfs_err *err);
int pg_insp_get(void *impl, const char *sha256, int64_t id, int options,
		struct jar_report **out, struct cmfs_err *err);

/*
 * The inspections of res[0] (rows: error, external, id, options_read,
 * ordered by id), their factories in res[1] and options in res[2] (the
 * columns of pg_insp_get's, then the inspection's id; ordered by it
 * first).  *out: a report for each row of res[0], in its order, the
 * caller's to free with the array.  0 or -ENOMEM.
 */
int pg_insp_many(PGresult *const *res, struct jar_report ***out,
		 struct cmfs_err *err);

/* ---- events (catalog_pg_events.c): catalog_backend operations ---- */

int pg_event_add(void *impl, size_t n, const char *const *envs,
		 const char *const *lines, struct cmfs_err *err);
int pg_event_size(void *impl, const char *env, uint64_t *out,
		  struct cmfs_err *err);
int pg_event_read(void *impl, const char *env, uint64_t off, size_t size,
		  struct buf *out, struct cmfs_err *err);
int pg_event_envs(void *impl, int (*fn)(void *arg, const char *env),
		  void *arg, struct cmfs_err *err);
int pg_event_trim(void *impl, const char *env, uint64_t max_rows,
		  const char *before, uint64_t *removed, struct cmfs_err *err);

/* ---- the watch (catalog_pg_watch.c): catalog_backend operations ---- */

int pg_watch(void *impl, catalog_watch_fn fn, void *arg,
	     struct cmfs_err *err);
void pg_unwatch(void *impl);

#endif
