/*
 * catalog_sqlite_int.h - what the files of the SQLite catalog backend
 * share; nothing outside them includes it (catalog.h is the API).
 *
 *   catalog_sqlite.c         the operations of catalog_sqlite_backend, each
 *                            a statement of sql[] run through sq_run() or
 *                            sq_each(), and the filter of artifact names
 *   catalog_sqlite_stmt.c    the statement helper: statements prepared once
 *                            and kept, parameters bound by a signature,
 *                            results read as a mode says, SQLite's result
 *                            codes turned into errnos (here and nowhere
 *                            else)
 *   catalog_sqlite_schema.c  the schema and its migrations, one step a
 *                            version
 *   catalog_sqlite_conn.c    the connection: open, close, transactions,
 *                            durability (sync mode, checkpoints, syncs)
 *
 * Threads: one connection guarded by a recursive mutex (struct sq's lock).
 * A transaction holds it from sq_begin() to sq_end(), so the calls a
 * thread makes inside it are serialised with everybody else's; every
 * helper below that runs a statement takes it itself.
 */
#ifndef CMFS_CATALOG_SQLITE_INT_H
#define CMFS_CATALOG_SQLITE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* The prepared statements, by index into sql[] (catalog_sqlite.c). */
enum {
	S_ENV_ADD,
	S_ENV_GET,
	S_ENV_DEL,
	S_ENV_LIST,
	S_ENV_BUSY,
	S_ENV_RECOUNT,
	S_ART_GET,
	S_ART_ADD,
	S_ART_COUNTED,
	S_ART_RETIRED,
	S_ART_NAMES,
	S_ART_DEL,
	S_ART_RENAME,
	S_ART_COUNT,
	S_ART_LIST,
	S_ART_BY_LABEL,
	S_ART_TAKEN,
	S_ART_LOW,
	S_ART_RETIRE,
	S_ART_SHIFT,
	S_ART_UNSIGN,
	S_ART_NEXT_ADD,
	S_ART_NEXT_MAX,
	S_ART_UNRETIRE,
	S_ART_NEXT_SET,
	S_VER_NEXT,
	S_VER_BUMP,
	S_VER_ADD,
	S_VER_GET,
	S_VER_DEL,
	S_VER_LIST,
	S_VER_NEXT_ABOVE,
	S_BLOB_REFS,
	S_BLOB_TOTAL,
	S_LABEL_SET,
	S_LABEL_DEL,
	S_LABEL_GET,
	S_LABEL_LIST,
	S_INSP_PUT,
	S_INSP_ADD,
	S_INSP_LINK,
	S_INSP_UNLINKED,
	S_INSP_RELINK,
	S_FACT_DEL,
	S_FACT_PUT,
	S_FACT_GET,
	S_INSP_GET,
	S_INSP_GET_ID,
	S_OPT_DEL,
	S_OPT_PUT,
	S_OPT_GET,
	S_OPT_MARK,
	S_TABLE_GET,
	S_TABLE_DEF,
	S_TABLE_PUT,
	S_TABLE_REFUSAL_SET,
	S_TABLE_REFUSAL_GET,
	S_TABLE_OPTS_DEL,
	S_TABLE_OPT_ADD,
	S_TABLE_OPT_GET,
	S_TABLE_DEL,
	S_TABLE_COUNT,
	S_TABLE_LIST,
	S_EVENT_END,
	S_EVENT_ADD,
	S_EVENT_ENV_ADD,
	S_EVENT_SIZE,
	S_EVENT_READ,
	S_EVENT_BASE,
	S_EVENT_ENVS,
	S_EVENT_OLD,
	S_EVENT_COUNT,
	S_EVENT_CUT,
	S_UNSYNCED_ADD,
	S_UNSYNCED_MARK,
	S_UNSYNCED_CLEAR,
	S_UNSYNCED_LIST,
	S_LOOSE_ADD,
	S_LOOSE_DEL,
	S_LOOSE_LIST,
	S_INSP_STALE,
	S_VER_BY_SHA,
	S_INLINE_PUT,
	S_INLINE_GET,
	S_INLINE_DEL,
	S_INLINE_LIST,
	S_RETIRED_LIST,
	S_RETIRED_HELD,
	S_RETIRED_PUT,
	S_USER_VERSION,
	S_BEGIN,
	S_BEGIN_READ,
	S_COMMIT,
	S_ROLLBACK,
	S_SYNC_NORMAL,
	S_SYNC_FULL,
	S_COUNT
};

/* The text of each statement, indexed by S_*. */
extern const char *const sq_sql[S_COUNT];

/*
 * Names that may be artifacts (catalog_sqlite.c says why): a Bloom filter
 * over (environment, name) of every artifact row the connection has seen
 * or made.
 */
struct names {
	uint64_t *bits;
	size_t nbits; /* a power of 2; 0 until built */
	size_t n;     /* names added */
	int off;      /* not kept on this connection, or could not be */
};

/* One connection to a catalog file. */
struct sq {
	sqlite3 *db;
	pthread_mutex_t lock; /* guards db, stmts, depth and names */
	sqlite3_stmt *stmts[S_COUNT];
	int depth; /* sq_begin() nesting of the owner */
	int full;  /* commits wait for the disk (synchronous=FULL) */
	struct names names;
	int sync_fd[2]; /* the log and the file, for sq_sync(): -1 */
	sqlite3 *ckpt;	/* sq_checkpoint()'s own connection, or NULL */
	int ckpt_off;	/* it could not be opened: none */
};

/* ---- the statement helper (catalog_sqlite_stmt.c) ---- */

/* Take / give back the connection's recursive lock (see the top). */
void sq_lock(struct sq *q);
void sq_unlock(struct sq *q);

/* SQLite result code `src` as an errno, with SQLite's message in err:
 * SQLITE_FULL -ENOSPC, a UNIQUE or primary key violation -EEXIST, another
 * constraint -EINVAL, SQLITE_NOMEM -ENOMEM, busy or locked -EAGAIN,
 * read-only -EROFS, the rest -EIO. */
int sq_fail(struct sq *q, int src, struct cmfs_err *err);

/* sq_fail() of the connection's last extended result code. */
int sq_fail_last(struct sq *q, struct cmfs_err *err);

/*
 * A row reader: copies what it needs of the current row of `s` into `out`
 * (sqlite3_column_* values live until the next step).  0, or a non-zero
 * value that ends the statement and is returned (-ENOMEM with err unset:
 * the helper names it).
 */
typedef int (*sq_row_fn)(void *out, sqlite3_stmt *s);

/* What sq_run() makes of a statement's result. */
enum sq_mode {
	SQ_EXEC,   /* rows, if any, are not read; out, if not NULL, a
		    * uint64_t: the rows changed */
	SQ_CHANGE, /* as SQ_EXEC; -ENOENT when it changed no row */
	SQ_INSERT, /* as SQ_EXEC; out an int64_t: the new row's number */
	SQ_ONE,	   /* the first row to row(out, s); -ENOENT if none */
	SQ_SCALAR  /* the first column of the one row, out a uint64_t */
};

/*
 * Statement `id` with its parameters bound in order by `sig`, a character
 * each: 'i' an int64_t (cast every argument that is not one), 't' a
 * const char * text (NULL binds NULL), 'b' a const void * and a size_t,
 * a blob (never NULL: an empty one for no bytes).  Run under the lock as
 * `mode` says.  0 or -errno.  Arguments are borrowed for the call.
 */
int sq_run(struct sq *q, int id, enum sq_mode mode, sq_row_fn row, void *out,
	   struct cmfs_err *err, const char *sig, ...);

/*
 * Each row of statement `id` (parameters as sq_run()'s) read by row into
 * `tmp`, then fn(arg, tmp) when fn is not NULL.  A non-zero return of
 * either stops the walk and is returned.  0 or -errno.
 */
int sq_each(struct sq *q, int id, sq_row_fn row, void *tmp,
	    int (*fn)(void *arg, const void *row), void *arg,
	    struct cmfs_err *err, const char *sig, ...);

/* Row readers of a single column 0: an int64_t, and a copy of a text as a
 * char * the caller frees (NULL for a NULL). */
int sq_rd_int64(void *out, sqlite3_stmt *s);
int sq_rd_strdup(void *out, sqlite3_stmt *s);

/* Column `i` of `s` as text, NULL for a NULL; valid until the next step. */
const char *sq_col(sqlite3_stmt *s, int i);

/* Finalize every kept statement (before the connection is closed). */
void sq_stmts_free(struct sq *q);

/* ---- the schema (catalog_sqlite_schema.c) ---- */

/* The version this cmfs writes (PRAGMA user_version). */
#define SQ_SCHEMA_VERSION 16

/* Events' row numbers (schema 14): an environment name's number (below
 * 2^23) shifted by this many bits, plus the line's offset, which the table
 * keeps below 2^40 (a line past it is refused). */
#define SQ_EV_SHIFT_STR "40"
#define SQ_EV_MAX_STR "1099511627775"

/* Each environment's counts of artifacts and tables, from the rows
 * (schema 2; fsck --repair). */
#define SQ_RECOUNT                                                           \
	"UPDATE envs SET"                                                     \
	" nart = (SELECT count(*) FROM artifacts WHERE env_id = envs.id),"    \
	" ntab = (SELECT count(*) FROM tables WHERE env_id = envs.id)"

/* The file's schema version into *out (0: a new or foreign file). */
int sq_schema_version(struct sq *q, int *out, struct cmfs_err *err);

/* Bring the file up to SQ_SCHEMA_VERSION in one transaction; -EPROTO for
 * a newer one. */
int sq_migrate(struct sq *q, struct cmfs_err *err);

/* ---- the connection (catalog_sqlite_conn.c) ---- */

/*
 * The backend's entries of the same names in struct catalog_backend, each
 * with the contract of its catalog_*() in catalog.h (*impl: a struct sq,
 * freed by sq_close()).  sq_open() creates and migrates the file;
 * sq_open_existing() never creates one, and with `rdonly` never writes.
 */
int sq_open(void **impl, const char *uri, struct cmfs_err *err);
int sq_open_existing(void **impl, const char *uri, int rdonly,
		     struct cmfs_err *err);
void sq_close(void *impl);
int sq_begin(void *impl, struct cmfs_err *err);
int sq_begin_read(void *impl, struct cmfs_err *err);
int sq_end(void *impl, int rc, struct cmfs_err *err);
int sq_check(void *impl, char **out, struct cmfs_err *err);
int sq_set_sync(void *impl, int full, struct cmfs_err *err);
int sq_checkpoint(void *impl, struct cmfs_err *err);
int sq_sync(void *impl, struct cmfs_err *err);

#endif
