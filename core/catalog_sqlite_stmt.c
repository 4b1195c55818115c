/*
 * catalog_sqlite_stmt.c - the SQLite backend's statement helper.
 *
 * Every statement of the backend is a text of sq_sql[], prepared the first
 * time it runs and kept on the connection (SQLITE_PREPARE_PERSISTENT),
 * reset and cleared after each use so that it holds no read lock.  A
 * catalog operation is one call: sq_run() binds the parameters a
 * signature names, steps the statement and reads its result as a mode
 * says; sq_each() walks its rows.  Both take the connection's lock, which
 * is recursive: an operation may hold it across several statements.
 *
 * SQLite result codes become errnos here and nowhere else (sq_fail()).
 */
#include "catalog_sqlite_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void sq_lock(struct sq *q)
{
	pthread_mutex_lock(&q->lock);
}

void sq_unlock(struct sq *q)
{
	pthread_mutex_unlock(&q->lock);
}

int sq_fail(struct sq *q, int src, struct cmfs_err *err)
{
	int code;

	switch (src & 0xff) {
	case SQLITE_FULL:
		code = -ENOSPC;
		break;
	case SQLITE_NOMEM:
		code = -ENOMEM;
		break;
	case SQLITE_CONSTRAINT:
		code = src == SQLITE_CONSTRAINT_UNIQUE ||
				       src == SQLITE_CONSTRAINT_PRIMARYKEY
			       ? -EEXIST
			       : -EINVAL;
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		code = -EAGAIN;
		break;
	case SQLITE_READONLY:
		code = -EROFS;
		break;
	default:
		code = -EIO;
	}
	return cmfs_err_set(err, code, "catalog: %s", sqlite3_errmsg(q->db));
}

int sq_fail_last(struct sq *q, struct cmfs_err *err)
{
	return sq_fail(q, sqlite3_extended_errcode(q->db), err);
}

void sq_stmts_free(struct sq *q)
{
	int i;

	for (i = 0; i < S_COUNT; i++) {
		sqlite3_finalize(q->stmts[i]);
		q->stmts[i] = NULL;
	}
}

/* The prepared statement `id` into *s; 0, or the error of preparing it. */
static int prep(struct sq *q, int id, sqlite3_stmt **s, struct cmfs_err *err)
{
	if (!q->stmts[id] &&
	    sqlite3_prepare_v3(q->db, sq_sql[id], -1,
			       SQLITE_PREPARE_PERSISTENT, &q->stmts[id], NULL))
		return sq_fail(q, sqlite3_errcode(q->db), err);
	*s = q->stmts[id];
	return 0;
}

/* Finish with a statement: reset it so it holds no read lock. */
static void done(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

/* Bind the parameters of `s` as `sig` says (sq_run()). */
static void bind(sqlite3_stmt *s, const char *sig, va_list ap)
{
	const void *p;
	size_t len;
	int i;

	for (i = 0; sig[i]; i++) {
		switch (sig[i]) {
		case 'i':
			sqlite3_bind_int64(s, i + 1, va_arg(ap, int64_t));
			break;
		case 't':
			p = va_arg(ap, const char *);
			if (p)
				sqlite3_bind_text(s, i + 1, p, -1,
						  SQLITE_STATIC);
			break;
		default: /* 'b' */
			p = va_arg(ap, const void *);
			len = va_arg(ap, size_t);
			sqlite3_bind_blob64(s, i + 1, len ? p : "", len,
					    SQLITE_STATIC);
		}
	}
}

/* A row reader's error: -ENOMEM named in err, the rest as they are. */
static int row_err(int rc, struct cmfs_err *err)
{
	return rc == -ENOMEM ? cmfs_err_set(err, rc, "out of memory") : rc;
}

/* Step `s` once and read its result as `mode` says; resets s. */
static int step(struct sq *q, sqlite3_stmt *s, enum sq_mode mode,
		sq_row_fn row, void *out, struct cmfs_err *err)
{
	int rc = sqlite3_step(s);

	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		rc = sq_fail_last(q, err);
	} else if (mode == SQ_ONE) {
		rc = rc == SQLITE_ROW ? row_err(row(out, s), err) : -ENOENT;
	} else if (mode == SQ_SCALAR && rc == SQLITE_DONE) {
		rc = sq_fail_last(q, err);
	} else if (mode == SQ_SCALAR) {
		*(uint64_t *)out = (uint64_t)sqlite3_column_int64(s, 0);
		rc = 0;
	} else {
		rc = 0;
	}
	done(s);
	if (rc || mode == SQ_ONE || mode == SQ_SCALAR)
		return rc;
	if (mode == SQ_CHANGE && sqlite3_changes(q->db) == 0)
		return -ENOENT;
	if (mode == SQ_INSERT)
		*(int64_t *)out = sqlite3_last_insert_rowid(q->db);
	else if (mode == SQ_EXEC && out)
		*(uint64_t *)out = (uint64_t)sqlite3_changes(q->db);
	return 0;
}

int sq_run(struct sq *q, int id, enum sq_mode mode, sq_row_fn row, void *out,
	   struct cmfs_err *err, const char *sig, ...)
{
	sqlite3_stmt *s;
	va_list ap;
	int rc;

	sq_lock(q);
	if (!(rc = prep(q, id, &s, err))) {
		va_start(ap, sig);
		bind(s, sig, ap);
		va_end(ap);
		rc = step(q, s, mode, row, out, err);
	}
	sq_unlock(q);
	return rc;
}

int sq_each(struct sq *q, int id, sq_row_fn row, void *tmp,
	    int (*fn)(void *arg, const void *row), void *arg,
	    struct cmfs_err *err, const char *sig, ...)
{
	sqlite3_stmt *s;
	va_list ap;
	int rc, stop = 0;

	sq_lock(q);
	if ((rc = prep(q, id, &s, err)))
		goto out;
	va_start(ap, sig);
	bind(s, sig, ap);
	va_end(ap);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if ((stop = row(tmp, s)) || (fn && (stop = fn(arg, tmp))))
			break;
	if (stop)
		rc = row_err(stop, err);
	else
		rc = rc == SQLITE_DONE ? 0 : sq_fail_last(q, err);
	done(s);
out:
	sq_unlock(q);
	return rc;
}

int sq_rd_int64(void *out, sqlite3_stmt *s)
{
	*(int64_t *)out = sqlite3_column_int64(s, 0);
	return 0;
}

int sq_rd_strdup(void *out, sqlite3_stmt *s)
{
	const char *v = sq_col(s, 0);

	*(char **)out = v ? strdup(v) : NULL;
	return v && !*(char **)out ? -ENOMEM : 0;
}

const char *sq_col(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}
