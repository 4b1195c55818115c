/*
 * walvfs.c - a VFS shim that hands SQLite's WAL frames to the kernel in one
 * write per commit.
 *
 * SQLite appends a commit to the WAL frame by frame, each frame in two
 * writes (its 24-byte header, then the page): an upload's transaction of
 * ten or so pages was twenty pwrite() calls, most of the commit's time on
 * a VM where a system call costs microseconds.  Here, appends to a WAL file
 * gather in a buffer and go to the file in one write when anything needs
 * them there:
 *
 *   - at the end of a commit: the last frame of a commit says so (its
 *     header holds the database's size in pages, zero in every other
 *     frame), and the write of its page sends all that was gathered,
 *     inside that xWrite(): a failure (a full disk) fails the commit, as
 *     a failed frame would, before SQLite publishes it;
 *   - before anything else of the WAL file: a read (a checkpoint, a page
 *     spilled and needed again), a sync, a size, a truncation, a close;
 *   - when a write is not the next append (SQLite rewrites a frame, or
 *     starts the log again): what was gathered goes first, then that write
 *     goes through as it came;
 *   - in the database file's xShmBarrier(), which SQLite calls between the
 *     two copies of the wal-index header that publishes a commit (a
 *     reader takes the header only when both agree): should a commit ever
 *     not be marked as above, its frames are still in the file before any
 *     reader, in this process or another, can look for them.  A failure
 *     there cannot be returned; it stays, and fails every later use of the
 *     WAL.
 *
 * So the file holds the same bytes wherever SQLite or another connection
 * could look, and a commit is in the kernel's hands before sqlite3_step()
 * returns, as without the shim; durability is still the syncs', which go
 * through the shim after the buffer.  Everything else is passed to the VFS
 * underneath (the default, "unix").
 */
#include "walvfs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define WALVFS_NAME "cmfs-wal"
/* Bytes gathered at most: two dozen pages.  The unix VFS writes at most
 * 128 KiB - 1 in one call (it masks the length to 17 bits). */
#define GATHER (96u << 10)

struct wfile {
	sqlite3_file base;  /* methods: db_methods or wal_methods */
	sqlite3_file *real; /* the underlying VFS's file */
	struct wfile *wal;  /* a database file: its WAL, once open */
	struct wfile *db;   /* a WAL file: its database file */
	pthread_mutex_t mu; /* a WAL file: the buffer */
	unsigned char *buf; /* gathered appends */
	size_t len;	    /* bytes in buf */
	sqlite3_int64 off;  /* the file offset of buf[0] */
	int commit_next;    /* the next write ends a commit */
	int failed;	    /* a write in a barrier failed: this */
	char *name;	    /* a database file: its name as opened */
};

static sqlite3_vfs *under; /* the VFS underneath */
static sqlite3_io_methods db_methods, wal_methods;

/* The databases open through the shim, for their WAL files to find. */
static pthread_mutex_t dbs_mu = PTHREAD_MUTEX_INITIALIZER;
static struct wfile **dbs;
static size_t ndbs, adbs;

static struct wfile *wf(sqlite3_file *f)
{
	return (struct wfile *)f;
}

/* Write what is gathered (caller holds w->mu).  On failure the frames
 * are dropped: SQLite fails the transaction they belong to. */
static int drain(struct wfile *w)
{
	int rc;

	if (w->failed)
		return w->failed;
	if (!w->len)
		return SQLITE_OK;
	rc = w->real->pMethods->xWrite(w->real, w->buf, (int)w->len, w->off);
	w->len = 0;
	return rc;
}

/* A WAL frame header's second field: the database size after a commit,
 * in pages; 0 in a frame that does not end one (big-endian, walformat). */
static unsigned commit_size(const unsigned char *h)
{
	return (unsigned)h[4] << 24 | (unsigned)h[5] << 16 |
	       (unsigned)h[6] << 8 | h[7];
}

static int flush(struct wfile *w)
{
	int rc;

	pthread_mutex_lock(&w->mu);
	rc = drain(w);
	pthread_mutex_unlock(&w->mu);
	return rc;
}

/* ---- the WAL file ---- */

static int wal_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 at)
{
	struct wfile *w = wf(f);
	int rc = SQLITE_OK;

	pthread_mutex_lock(&w->mu);
	rc = w->failed;
	/* Not the next append, or more than the buffer holds: what is
	 * gathered goes first, in order, and then this as it came. */
	if (rc == SQLITE_OK && w->len && at != w->off + (sqlite3_int64)w->len)
		rc = drain(w);
	if (rc == SQLITE_OK && w->len + (size_t)n > GATHER)
		rc = drain(w);
	if (rc == SQLITE_OK && w->buf && (size_t)n <= GATHER) {
		if (!w->len)
			w->off = at;
		memcpy(w->buf + w->len, p, (size_t)n);
		w->len += (size_t)n;
	} else if (rc == SQLITE_OK) {
		rc = w->real->pMethods->xWrite(w->real, p, n, at);
	}
	/* The page after a commit frame's header ends the commit. */
	if (rc == SQLITE_OK && w->commit_next)
		rc = drain(w);
	w->commit_next =
		rc == SQLITE_OK && !w->commit_next && n == 24 && commit_size(p);
	pthread_mutex_unlock(&w->mu);
	return rc;
}

static int wal_read(sqlite3_file *f, void *p, int n, sqlite3_int64 at)
{
	struct wfile *w = wf(f);
	int rc = flush(w);

	return rc ? rc : w->real->pMethods->xRead(w->real, p, n, at);
}

static int wal_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct wfile *w = wf(f);
	int rc = flush(w);

	return rc ? rc : w->real->pMethods->xTruncate(w->real, size);
}

static int wal_sync(sqlite3_file *f, int flags)
{
	struct wfile *w = wf(f);
	int rc = flush(w);

	return rc ? rc : w->real->pMethods->xSync(w->real, flags);
}

static int wal_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct wfile *w = wf(f);
	int rc = flush(w);

	return rc ? rc : w->real->pMethods->xFileSize(w->real, size);
}

/* ---- both ---- */

static int any_close(sqlite3_file *f)
{
	struct wfile *w = wf(f);
	size_t i;
	int rc = SQLITE_OK, rc2;

	pthread_mutex_lock(&dbs_mu);
	if (w->db) {
		if (w->db->wal == w)
			w->db->wal = NULL;
	} else {
		for (i = 0; i < ndbs; i++)
			if (dbs[i] == w)
				dbs[i] = dbs[--ndbs];
		if (w->wal)
			w->wal->db = NULL;
	}
	pthread_mutex_unlock(&dbs_mu);
	if (w->buf)
		rc = flush(w);
	rc2 = w->real->pMethods->xClose(w->real);
	pthread_mutex_destroy(&w->mu);
	free(w->buf);
	free(w->name);
	sqlite3_free(w->real);
	return rc ? rc : rc2;
}

#define PASS(f) (wf(f)->real)

static int any_read(sqlite3_file *f, void *p, int n, sqlite3_int64 at)
{
	return PASS(f)->pMethods->xRead(PASS(f), p, n, at);
}

static int any_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 at)
{
	return PASS(f)->pMethods->xWrite(PASS(f), p, n, at);
}

static int any_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return PASS(f)->pMethods->xTruncate(PASS(f), size);
}

static int any_sync(sqlite3_file *f, int flags)
{
	return PASS(f)->pMethods->xSync(PASS(f), flags);
}

static int any_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return PASS(f)->pMethods->xFileSize(PASS(f), size);
}

static int any_lock(sqlite3_file *f, int lock)
{
	return PASS(f)->pMethods->xLock(PASS(f), lock);
}

static int any_unlock(sqlite3_file *f, int lock)
{
	return PASS(f)->pMethods->xUnlock(PASS(f), lock);
}

static int any_reserved(sqlite3_file *f, int *out)
{
	return PASS(f)->pMethods->xCheckReservedLock(PASS(f), out);
}

static int any_control(sqlite3_file *f, int op, void *arg)
{
	return PASS(f)->pMethods->xFileControl(PASS(f), op, arg);
}

static int any_sector(sqlite3_file *f)
{
	return PASS(f)->pMethods->xSectorSize(PASS(f));
}

static int any_device(sqlite3_file *f)
{
	return PASS(f)->pMethods->xDeviceCharacteristics(PASS(f));
}

static int any_shm_map(sqlite3_file *f, int pg, int pgsz, int extend,
		       void volatile **p)
{
	return PASS(f)->pMethods->xShmMap(PASS(f), pg, pgsz, extend, p);
}

static int any_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return PASS(f)->pMethods->xShmLock(PASS(f), off, n, flags);
}

/*
 * The database file's barrier: the commit's frames go to the WAL file
 * here, before the wal-index header that publishes them is complete.
 */
static void db_barrier(sqlite3_file *f)
{
	struct wfile *w = wf(f), *wal;

	pthread_mutex_lock(&dbs_mu);
	wal = w->wal;
	if (wal) {
		pthread_mutex_lock(&wal->mu);
		if (drain(wal) != SQLITE_OK && !wal->failed)
			wal->failed = SQLITE_IOERR_WRITE;
		pthread_mutex_unlock(&wal->mu);
	}
	pthread_mutex_unlock(&dbs_mu);
	PASS(f)->pMethods->xShmBarrier(PASS(f));
}

static int any_shm_unmap(sqlite3_file *f, int del)
{
	return PASS(f)->pMethods->xShmUnmap(PASS(f), del);
}

static int any_fetch(sqlite3_file *f, sqlite3_int64 at, int n, void **p)
{
	return PASS(f)->pMethods->xFetch(PASS(f), at, n, p);
}

static int any_unfetch(sqlite3_file *f, sqlite3_int64 at, void *p)
{
	return PASS(f)->pMethods->xUnfetch(PASS(f), at, p);
}

/* ---- the VFS ---- */

/* The methods a file of ours shows: the underlying file's, trimmed to
 * what it has (its iVersion), with ours where we step in. */
static void methods_for(sqlite3_io_methods *m, const sqlite3_io_methods *u,
			int wal)
{
	*m = (sqlite3_io_methods){
		.iVersion = u->iVersion,
		.xClose = any_close,
		.xRead = wal ? wal_read : any_read,
		.xWrite = wal ? wal_write : any_write,
		.xTruncate = wal ? wal_truncate : any_truncate,
		.xSync = wal ? wal_sync : any_sync,
		.xFileSize = wal ? wal_size : any_size,
		.xLock = any_lock,
		.xUnlock = any_unlock,
		.xCheckReservedLock = any_reserved,
		.xFileControl = any_control,
		.xSectorSize = any_sector,
		.xDeviceCharacteristics = any_device,
	};
	if (u->iVersion >= 2) {
		m->xShmMap = any_shm_map;
		m->xShmLock = any_shm_lock;
		m->xShmBarrier = db_barrier;
		m->xShmUnmap = any_shm_unmap;
	}
	if (u->iVersion >= 3) {
		m->xFetch = any_fetch;
		m->xUnfetch = any_unfetch;
	}
}

/* 1 if `wal` names the WAL file of database `db` ("<db>-wal"). */
static int wal_of(const char *wal, const char *db)
{
	size_t n = strlen(db);

	return !strncmp(wal, db, n) && !strcmp(wal + n, "-wal");
}

/* Remember database file w, for its WAL to find: 0 or SQLITE_NOMEM. */
static int db_add(struct wfile *w)
{
	if (ndbs == adbs) {
		size_t a = adbs ? adbs * 2 : 8;
		struct wfile **v = realloc(dbs, a * sizeof(*v));

		if (!v)
			return SQLITE_NOMEM;
		dbs = v;
		adbs = a;
	}
	dbs[ndbs++] = w;
	return SQLITE_OK;
}

static int vfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f,
		    int flags, int *out)
{
	struct wfile *w = wf(f);
	int wal = (flags & SQLITE_OPEN_WAL) != 0;
	int db = (flags & SQLITE_OPEN_MAIN_DB) != 0 && name;
	sqlite3_io_methods *m = wal ? &wal_methods : &db_methods;
	size_t i;
	int rc;

	(void)vfs;
	memset(w, 0, sizeof(*w));
	w->real = sqlite3_malloc(under->szOsFile);
	if (!w->real)
		return SQLITE_NOMEM;
	memset(w->real, 0, (size_t)under->szOsFile);
	if (db && !(w->name = strdup(name))) {
		sqlite3_free(w->real);
		return SQLITE_NOMEM;
	}
	rc = under->xOpen(under, name, w->real, flags, out);
	if (rc != SQLITE_OK || !w->real->pMethods) {
		free(w->name);
		sqlite3_free(w->real);
		return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
	}
	pthread_mutex_init(&w->mu, NULL);
	/* GATHER bytes, or none: then every write goes straight through. */
	if (wal)
		w->buf = malloc(GATHER);
	pthread_mutex_lock(&dbs_mu);
	/* Both tables are filled once, from the first file of each kind:
	 * the underlying VFS gives all its files the same methods. */
	if (!m->xClose)
		methods_for(m, w->real->pMethods, wal);
	if (db)
		rc = db_add(w);
	for (i = 0; wal && name && i < ndbs; i++)
		if (!dbs[i]->wal && wal_of(name, dbs[i]->name)) {
			dbs[i]->wal = w;
			w->db = dbs[i];
			break;
		}
	pthread_mutex_unlock(&dbs_mu);
	w->base.pMethods = m;
	if (rc != SQLITE_OK) {
		any_close(f);
		w->base.pMethods = NULL;
	}
	return rc;
}

static sqlite3_vfs vfs;
static int registered = SQLITE_ERROR;

static void register_once(void)
{
	under = sqlite3_vfs_find(NULL);
	if (!under)
		return;
	/* All of the default's, its open apart. */
	vfs = *under;
	vfs.zName = WALVFS_NAME;
	vfs.szOsFile = (int)sizeof(struct wfile);
	vfs.xOpen = vfs_open;
	vfs.pNext = NULL;
	registered = sqlite3_vfs_register(&vfs, 0);
}

const char *walvfs_name(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_once);
	return registered == SQLITE_OK ? WALVFS_NAME : NULL;
}
