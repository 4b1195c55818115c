/*
 * catalog_sqlite_conn.c - the SQLite catalog's connection: open, close,
 * transactions and durability.
 *
 * One database file in WAL mode with foreign keys on, one connection
 * guarded by a recursive mutex.  A mount's connection (sq_open) creates
 * and migrates the file; the tools' (sq_open_existing) never create one,
 * and a read-only one neither migrates nor writes.  Commits wait for the
 * disk (synchronous = FULL) unless the store syncs in batches
 * (sq_set_sync): then the sync thread makes them durable (sq_sync) and
 * copies the log into the file (sq_checkpoint), outside the commits.
 */
#include "catalog_sqlite_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"

void sq_close(void *impl)
{
	struct sq *q = impl;
	int i;

	if (!q)
		return;
	sq_stmts_free(q);
	sqlite3_close(q->ckpt);
	sqlite3_close(q->db);
	/* Only now: a close drops the process's POSIX locks on the file. */
	for (i = 0; i < 2; i++)
		if (q->sync_fd[i] >= 0)
			close(q->sync_fd[i]);
	pthread_mutex_destroy(&q->lock);
	free(q->names.bits);
	free(q);
}

/*
 * A new struct sq on the file `uri`, opened with `flags`: 0 and *out, or
 * -errno (-ENOENT: it cannot be opened; `existing` says so in the tools'
 * words).
 */
static int connect(struct sq **out, const char *uri, int flags, int existing,
		   struct cmfs_err *err)
{
	pthread_mutexattr_t a;
	struct sq *q;
	int rc;

	q = calloc(1, sizeof(*q));
	if (!q)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	q->full = 1;
	q->sync_fd[0] = q->sync_fd[1] = -1;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&q->lock, &a);
	pthread_mutexattr_destroy(&a);
	rc = sqlite3_open_v2(uri, &q->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc) {
		rc = cmfs_err_set(err, rc == SQLITE_CANTOPEN ? -ENOENT : -EIO,
				  "catalog %s: %s", uri,
				  existing && rc == SQLITE_CANTOPEN
					  ? "cannot open it"
				  : q->db ? sqlite3_errmsg(q->db)
					  : "cannot open");
		sq_close(q);
		return rc;
	}
	sqlite3_busy_timeout(q->db, 10000);
	sqlite3_extended_result_codes(q->db, 1);
	*out = q;
	return 0;
}

/* The most of its log a mount keeps, and reads back (warm_log()), once
 * it starts over: a log grown past it in a burst (a long export holding
 * off checkpoints) goes back to this size. */
#define LOG_KEPT 67108864 /* 64 MiB */
#define STR(x) STR_(x)
#define STR_(x) #x

/*
 * A mount's connection keeps up to 8 MiB of catalog pages (SQLite's
 * default is 2 MiB): a cold resolution over a large catalog reads its
 * index pages from the cache rather than the disk.  More is RSS the
 * daemon's budget needs for the nodes of the names the kernel holds.
 */
int sq_open(void **impl, const char *uri, struct cmfs_err *err)
{
	static const char *const pragmas =
		"PRAGMA journal_mode = WAL;"
		"PRAGMA synchronous = FULL;"
		"PRAGMA cache_size = -8192;"
		"PRAGMA journal_size_limit = " STR(LOG_KEPT) ";"
		"PRAGMA foreign_keys = ON;";
	struct sq *q;
	int rc;

	if ((rc = connect(&q, uri, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			  0, err)))
		return rc;
	if (sqlite3_exec(q->db, pragmas, NULL, NULL, NULL))
		rc = sq_fail(q, sqlite3_errcode(q->db), err);
	else
		rc = sq_migrate(q, err);
	if (rc) {
		sq_close(q);
		return rc;
	}
	*impl = q;
	return 0;
}

/*
 * Open an existing catalog: no file is created, and a read-only one is
 * neither migrated nor written (SQLite may still create the -shm file of
 * a WAL database, which is not a change to the catalog).
 */
int sq_open_existing(void **impl, const char *uri, int rdonly,
		     struct cmfs_err *err)
{
	static const char *const pragmas_rw =
		"PRAGMA journal_mode = WAL;"
		"PRAGMA synchronous = FULL;"
		"PRAGMA foreign_keys = ON;";
	static const char *const pragmas_ro =
		"PRAGMA foreign_keys = ON;"
		"PRAGMA query_only = ON;";
	struct sq *q;
	int rc, version = 0;

	if ((rc = connect(&q, uri,
			  rdonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE,
			  1, err)))
		return rc;
	/* Not the store's writer: a mount may add artifacts beside it. */
	q->names.off = 1;
	if ((rc = sq_schema_version(q, &version, err)))
		goto bad;
	if (version == 0 || version > SQ_SCHEMA_VERSION ||
	    (rdonly && version < SQ_SCHEMA_VERSION)) {
		rc = cmfs_err_set(err, -EPROTO,
				  version == 0
					  ? "catalog %s: no cmfs schema (an "
					    "empty or foreign database)"
				  : version > SQ_SCHEMA_VERSION
					  ? "catalog %s: schema %d is newer "
					    "than this cmfs"
					  : "catalog %s: schema %d is older "
					    "than this cmfs; mount it once",
				  uri, version);
		goto bad;
	}
	if (sqlite3_exec(q->db, rdonly ? pragmas_ro : pragmas_rw, NULL, NULL,
			 NULL)) {
		rc = sq_fail_last(q, err);
		goto bad;
	}
	if (!rdonly && (rc = sq_migrate(q, err)))
		goto bad;
	*impl = q;
	return 0;
bad:
	sq_close(q);
	return rc;
}

/* Open a transaction with statement `id` unless the owner holds one: the
 * lock stays taken until sq_end(). */
static int begin(struct sq *q, int id, struct cmfs_err *err)
{
	int rc = 0;

	sq_lock(q);
	if (q->depth++ == 0)
		rc = sq_run(q, id, SQ_EXEC, NULL, NULL, err, "");
	if (rc) {
		q->depth--;
		sq_unlock(q);
	}
	return rc;
}

int sq_begin(void *impl, struct cmfs_err *err)
{
	return begin(impl, S_BEGIN, err);
}

/* A deferred BEGIN: the snapshot starts at the first read. */
int sq_begin_read(void *impl, struct cmfs_err *err)
{
	return begin(impl, S_BEGIN_READ, err);
}

int sq_end(void *impl, int rc, struct cmfs_err *err)
{
	struct sq *q = impl;

	if (--q->depth == 0) {
		if (rc == 0)
			rc = sq_run(q, S_COMMIT, SQ_EXEC, NULL, NULL, err, "");
		if (rc)
			sq_run(q, S_ROLLBACK, SQ_EXEC, NULL, NULL, NULL, "");
	}
	sq_unlock(q);
	return rc;
}

int sq_check(void *impl, char **out, struct cmfs_err *err)
{
	struct sq *q = impl;
	struct buf b = BUF_INIT(1 << 20);
	sqlite3_stmt *s;
	int rc;

	sq_lock(q);
	rc = sqlite3_prepare_v2(q->db, "PRAGMA integrity_check", -1, &s, NULL);
	if (rc) {
		rc = sq_fail(q, rc, err);
		goto out;
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (b.len)
			buf_addc(&b, '\n');
		buf_adds(&b, sq_col(s, 0));
	}
	sqlite3_finalize(s);
	*out = buf_take(&b, NULL);
	rc = *out ? 0 : -ENOMEM;
out:
	sq_unlock(q);
	buf_release(&b);
	return rc;
}

/*
 * Without full sync, commits leave checkpoints (copying the log's pages
 * into the file) to sq_checkpoint, which the syncing thread calls: SQLite
 * would otherwise run one inside a commit now and then, two fsyncs and up
 * to 1,000 page writes that the upload's close() waited for.
 */
int sq_set_sync(void *impl, int full, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc;

	sq_lock(q);
	rc = sq_run(q, full ? S_SYNC_FULL : S_SYNC_NORMAL, SQ_EXEC, NULL, NULL,
		    err, "");
	if (!rc && sqlite3_wal_autocheckpoint(q->db, full ? 1000 : 0))
		rc = sq_fail_last(q, err);
	if (!rc)
		q->full = full;
	sq_unlock(q);
	return rc;
}

/* The checkpointing connection: the same file, syncs as a checkpoint
 * needs them (the log before, the file after), never waiting for a lock. */
static void open_ckpt(struct sq *q)
{
	const char *db = sqlite3_db_filename(q->db, "main");

	if (!db || !*db ||
	    sqlite3_open_v2(db, &q->ckpt,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) ||
	    sqlite3_exec(q->ckpt,
			 "PRAGMA synchronous = NORMAL;"
			 "PRAGMA wal_autocheckpoint = 0;",
			 NULL, NULL, NULL)) {
		sqlite3_close(q->ckpt);
		q->ckpt = NULL;
		q->ckpt_off = 1;
	}
}

/*
 * The log's pages back in the page cache, read ahead in the background.
 * Commits overwrite the log from its start once a checkpoint has copied
 * it all, frame by frame, and a frame (24 bytes of header, then a page)
 * never lines up with the kernel's pages: a write into a page the cache
 * has dropped (memory pressure, drop_caches) first waits for the disk to
 * read that page back.  The kernel reads ahead at most its read-ahead
 * window per call, hence the steps.
 */
static void warm_log(int fd)
{
	const off_t step = 128 * 1024;
	struct stat st;
	off_t off;

	if (fd < 0 || fstat(fd, &st))
		return;
	for (off = 0; off < st.st_size && off < LOG_KEPT; off += step)
		posix_fadvise(fd, off, step, POSIX_FADV_WILLNEED);
}

/*
 * A checkpoint: the log's pages copied into the file, in two passes.
 * The first, from a connection of its own and without the lock, does the
 * bulk beside commits, so that statements do not wait for its syncs and
 * copying.  It cannot finish the job: commits go on appending to the log,
 * and the log starts over only once all of it is in the file (alone, it
 * never catches up with a stream of uploads and the log grows without
 * end).  The second pass holds the connection's lock, so no commit
 * appends meanwhile, and copies what came during the first: the next
 * commit starts the log over, into pages warm_log() has read back.  Only
 * the sync thread calls this (sq_sync() counts on it).
 */
int sq_checkpoint(void *impl, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc;

	if (!q->ckpt && !q->ckpt_off)
		open_ckpt(q);
	/* Busy (another process checkpoints) or failed: the second pass
	 * does it all. */
	if (q->ckpt)
		sqlite3_wal_checkpoint_v2(
			q->ckpt, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	sq_lock(q);
	rc = sqlite3_wal_checkpoint_v2(q->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
				       NULL, NULL);
	rc = rc ? sq_fail(q, rc, err) : 0;
	sq_unlock(q);
	warm_log(q->sync_fd[0]);
	return rc;
}

/* xSync of SQLite's own handle of a file of the catalog (`op`: the
 * database's or its log's pointer), if it is open: 0 or an SQLite code. */
static int sync_file(struct sq *q, int op)
{
	sqlite3_file *f = NULL;
	int rc = sqlite3_file_control(q->db, "main", op, &f);

	if (rc || !f || !f->pMethods)
		return rc == SQLITE_NOTFOUND ? SQLITE_OK : rc;
	return f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
}

/* Descriptors of our own for the log and the file, kept open (a close
 * would drop the locks SQLite holds on them: POSIX locks go with any
 * close of the file in the process). */
static void open_sync_fds(struct sq *q)
{
	const char *db = sqlite3_db_filename(q->db, "main");
	char wal[4096];

	if (!db || !*db ||
	    (size_t)snprintf(wal, sizeof(wal), "%s-wal", db) >= sizeof(wal))
		return;
	q->sync_fd[0] = open(wal, O_RDONLY | O_CLOEXEC);
	q->sync_fd[1] = open(db, O_RDONLY | O_CLOEXEC);
}

/*
 * The log first (commits are in it), then the file (a checkpoint may
 * have written it).  The first time through SQLite's own handles, under
 * the connection's lock: that sync also syncs the directory of a file new
 * since its last.  After it, with descriptors of our own and without the
 * lock, so that requests needing the catalog do not wait for the two
 * fdatasyncs; nothing the lock guards is touched.  Without it a commit
 * can append to the log meanwhile (its sync may or may not take those in:
 * they came after this sync began), but no checkpoint can run (this
 * thread runs them, after the sync), so no commit made before it moves
 * out of the log unsynced.
 */
int sq_sync(void *impl, struct cmfs_err *err)
{
	struct sq *q = impl;
	int rc;

	if (q->sync_fd[0] >= 0 && q->sync_fd[1] >= 0) {
		if (fdatasync(q->sync_fd[0]) || fdatasync(q->sync_fd[1]))
			return cmfs_err_set(err, -errno, "catalog: sync: %s",
					    strerror(errno));
		return 0;
	}
	sq_lock(q);
	rc = sync_file(q, SQLITE_FCNTL_JOURNAL_POINTER);
	if (!rc)
		rc = sync_file(q, SQLITE_FCNTL_FILE_POINTER);
	rc = rc ? sq_fail(q, rc, err) : 0;
	if (!rc && q->sync_fd[0] < 0 && q->sync_fd[1] < 0)
		open_sync_fds(q);
	sq_unlock(q);
	return rc;
}
