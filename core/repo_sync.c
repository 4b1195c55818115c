/*
 * repo_sync.c - durability and the freeing of blobs: [store] sync =
 * batch's syncer, the recovery after a power loss, and the reaper.
 *
 * Durability ([store] sync).  close: each commit fsyncs its blob, the
 * blob's directory and the catalog before it returns.  batch: a commit
 * returns once it is in the catalog, and a thread (struct syncer) makes
 * everything durable with one syncfs() of the store within SYNC_MS of the
 * first change, at fsync(2) and at unmount (with only the catalog's files
 * synced when no blob came since the last sync, and only those and the new
 * blobs when SYNC_FEW or fewer came).  What a power loss can then
 * leave is a catalog that refers to a blob file whose bytes never reached
 * the disk (an inline blob is whole or absent with its version), so each
 * such blob is listed in the catalog (unsynced) in the
 * transaction that refers to it, until a sync has written it; the next
 * open checks every blob still listed against its SHA-256 and takes back
 * the versions of one that fails, with an events line (recover()).  A
 * deletion's blobs are unlinked only after the sync that made the
 * deletion durable.
 *
 * A freed blob leaves the store at once, renamed aside under gc_lock
 * (store_blob_retire), and a thread of the lowest priority (struct reaper,
 * SCHED_IDLE) unlinks it once no upload is being written, or after
 * REAP_WAIT_MS: unlinking a large blob drops its pages from the cache and
 * frees its blocks, CPU work that an upload beside it, or the rm that
 * freed it, would otherwise share or wait for.
 */
#define _GNU_SOURCE /* SCHED_IDLE, gettid() */
#include "repo_int.h"

/* ---- the reaper ---- */

/*
 * Unlink what is queued, until asked to stop: once no upload is being
 * written (unstage() wakes it), or once the oldest has waited
 * REAP_WAIT_MS, uploads or not.
 */
static void *reaper_thread(void *arg)
{
	struct repo *r = arg;
	struct reaper *q = &r->reaper;
	struct sched_param idle = {0};
	char(*names)[STORE_RETIRED];
	struct timespec t;
	size_t n, i;

	/* Unprivileged threads may lower themselves; if not, nice 19. */
	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle))
		setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	pthread_mutex_lock(&q->w.lock);
	while (!q->w.stop) {
		if (!q->n) {
			thread_worker_wait(&q->w, THREAD_FOREVER);
			continue;
		}
		if (__atomic_load_n(&r->staged, __ATOMIC_ACQUIRE)) {
			t = q->since;
			t.tv_sec += REAP_WAIT_MS / 1000;
			if (thread_worker_wait_until(&q->w, &t) != ETIMEDOUT)
				continue;
		}
		/* An export may read them from its snapshot: later. */
		if (store_export_busy(r->store)) {
			thread_worker_wait(&q->w,
					   (uint64_t)EXPORT_WAIT_MS * 1000000u);
			continue;
		}
		names = q->names;
		n = q->n;
		q->names = NULL;
		q->n = q->a = 0;
		pthread_mutex_unlock(&q->w.lock);
		for (i = 0; i < n; i++)
			store_reap(r->store, names[i]);
		free(names);
		/* What a delete on a full disk released, back once there is
		 * room: it must be there at the next full disk or mount. */
		store_reserve_take(r->store);
		pthread_mutex_lock(&q->w.lock);
	}
	pthread_mutex_unlock(&q->w.lock);
	return NULL;
}

void reaper_init(struct repo *r)
{
	struct reaper *q = &r->reaper;

	thread_worker_init(&q->w);
	q->ready = 1;
}

/* An upload's staging file is open: its bytes are being written. */
void staged(struct repo *r)
{
	__atomic_add_fetch(&r->staged, 1, __ATOMIC_RELEASE);
}

/* Close upload u's staging file; with the last one, wake the reaper. */
void unstage(struct repo_upload *u)
{
	struct reaper *q = &u->r->reaper;

	close(u->fd);
	u->fd = -1;
	if (__atomic_sub_fetch(&u->r->staged, 1, __ATOMIC_ACQ_REL))
		return;
	pthread_mutex_lock(&q->w.lock);
	if (q->n)
		thread_worker_wake(&q->w);
	pthread_mutex_unlock(&q->w.lock);
}

/*
 * Queue retired blob `name` for the thread; where there is no thread (a
 * command before the daemon forks, or none could start) or no memory,
 * unlink it here.
 */
static void reap_later(struct repo *r, const char *name)
{
	struct reaper *q = &r->reaper;
	int now = 1;

	pthread_mutex_lock(&q->w.lock);
	if (!r->sync.quiet)
		thread_worker_start(&q->w, reaper_thread, r);
	if (q->w.running && q->n == q->a) {
		size_t a = q->a ? 2 * q->a : 8;
		char(*p)[STORE_RETIRED] = realloc(q->names, a * sizeof(*p));

		if (p) {
			q->names = p;
			q->a = a;
		}
	}
	if (q->w.running && q->n < q->a) {
		if (!q->n)
			clock_gettime(CLOCK_MONOTONIC, &q->since);
		memcpy(q->names[q->n++], name, STORE_RETIRED);
		thread_worker_wake(&q->w);
		now = 0;
	}
	pthread_mutex_unlock(&q->w.lock);
	/* (while an export holds the store, the next store_open sweeps it) */
	if (now && !store_export_busy(r->store))
		store_reap(r->store, name);
}

/* Stop the thread and unlink what is left. */
void reaper_stop(struct repo *r)
{
	struct reaper *q = &r->reaper;
	size_t i;

	if (!q->ready)
		return;
	thread_worker_stop(&q->w);
	for (i = 0; i < q->n && !store_export_busy(r->store); i++)
		store_reap(r->store, q->names[i]);
	free(q->names);
	thread_worker_release(&q->w);
}

/*
 * Free the blobs in `shas` that no version refers to now: out of the
 * store under gc_lock, unlinked by the reaper.
 */
void unlink_unused(struct repo *r, char (*shas)[STORE_SHA_HEX],
			  size_t n)
{
	char(*names)[STORE_RETIRED] = calloc(n ? n : 1, sizeof(*names));
	size_t i;
	uint64_t refs;

	pthread_mutex_lock(&r->gc_lock);
	for (i = 0; i < n; i++) {
		if (catalog_blob_refs(r->cat, shas[i], &refs, NULL) || refs)
			continue;
		if (names)
			store_blob_retire(r->store, shas[i], names[i]);
		else
			store_blob_unlink(r->store, shas[i]);
	}
	pthread_mutex_unlock(&r->gc_lock);
	for (i = 0; names && i < n; i++)
		if (names[i][0])
			reap_later(r, names[i]);
	free(names);
}

/* ---- sync = batch ---- */

/* Up to SYNC_FEW + 1 unsynced blobs into a sync_few. */
struct sync_few {
	char shas[SYNC_FEW + 1][STORE_SHA_HEX];
	size_t n;
};

static int few_add(void *arg, const char *const *row)
{
	struct sync_few *f = arg;

	if (strlen(row[0]) != STORE_SHA_HEX - 1)
		return 0;
	memcpy(f->shas[f->n++], row[0], STORE_SHA_HEX);
	return f->n > SYNC_FEW ? -E2BIG : 0; /* too many: stop */
}

/*
 * The store's part of a sync, and the catalog's: the unsynced blobs one
 * by one, then the catalog's files, when there are SYNC_FEW or fewer (a
 * syncfs() would also write out an upload still being written, which
 * then waits for it); else one syncfs().
 */
static int sync_blobs(struct repo *r, struct cmfs_err *err)
{
	struct sync_few *f = calloc(1, sizeof(*f));
	int rc;

	if (f && !catalog_unsynced_list(r->cat, few_add, f, NULL)) {
		if ((rc = store_blobs_sync(r->store, f->shas, f->n)))
			cmfs_err_set(err, rc, "sync of blobs: %s",
				     strerror(-rc));
		else
			rc = catalog_sync(r->cat, err);
	} else if ((rc = store_sync(r->store))) {
		cmfs_err_set(err, rc, "syncfs: %s", strerror(-rc));
	}
	free(f);
	return rc;
}

/*
 * One sync: every change committed before it starts is on disk when it
 * returns 0.  Then the unsynced rows it covered go, and the blobs freed
 * before it are unlinked.  On an error the blobs wait for the next sync.
 */
static int sync_now(struct repo *r)
{
	struct syncer *y = &r->sync;
	struct cmfs_err err = CMFS_ERR_INIT;
	char(*freed)[STORE_SHA_HEX];
	size_t nfreed, afreed;
	int64_t mark = 0;
	int rc;

	pthread_mutex_lock(&y->run);
	pthread_mutex_lock(&y->w.lock);
	if (!y->dirty && !y->nfreed) {
		/* No change since the last sync finished (run is ours). */
		pthread_mutex_unlock(&y->w.lock);
		pthread_mutex_unlock(&y->run);
		return 0;
	}
	y->dirty = 0;
	freed = y->freed;
	nfreed = y->nfreed;
	afreed = y->afreed;
	y->freed = NULL;
	y->nfreed = y->afreed = 0;
	pthread_mutex_unlock(&y->w.lock);

	rc = catalog_unsynced_mark(r->cat, &mark, &err);
	/* No blob came since the last sync: the catalog is all there is to
	 * write.  A syncfs() would also write out the uploads in progress,
	 * taking the disk and CPU from them. */
	if (!rc && !mark)
		rc = catalog_sync(r->cat, &err);
	else if (!rc)
		rc = sync_blobs(r, &err);
	if (!rc && mark && catalog_unsynced_clear(r->cat, mark, &err))
		repo_log(r, LOG_WARNING, "sync: %s (checked again at the "
			 "next mount)", cmfs_err_msg(&err));
	/* The commits left the catalog's checkpoints to this thread. */
	if (!rc && catalog_checkpoint(r->cat, &err))
		repo_log(r, LOG_WARNING, "sync: %s (tried again next time)",
			 cmfs_err_msg(&err));
	if (rc) {
		repo_log(r, LOG_ERR, "sync of the store failed: %s",
			 cmfs_err_msg(&err));
		pthread_mutex_lock(&y->w.lock);
		y->dirty = 1;
		if (!y->freed) {
			y->freed = freed;
			y->nfreed = nfreed;
			y->afreed = afreed;
			freed = NULL;
		}
		pthread_mutex_unlock(&y->w.lock);
	} else {
		unlink_unused(r, freed, nfreed);
	}
	free(freed);
	pthread_mutex_unlock(&y->run);
	return rc;
}

/* The thread: a sync SYNC_MS after the first change that follows one. */
static void *sync_thread(void *arg)
{
	struct repo *r = arg;
	struct syncer *y = &r->sync;
	struct timespec t;
	long ms = SYNC_MS;

	pthread_mutex_lock(&y->w.lock);
	while (!y->w.stop) {
		if (!y->dirty) {
			thread_worker_wait(&y->w, THREAD_FOREVER);
			continue;
		}
		thread_deadline(&t, (uint64_t)ms * 1000000u);
		while (!y->w.stop && !thread_worker_wait_until(&y->w, &t))
			;
		pthread_mutex_unlock(&y->w.lock);
		ms = sync_now(r) ? SYNC_RETRY_MS : SYNC_MS;
		pthread_mutex_lock(&y->w.lock);
	}
	pthread_mutex_unlock(&y->w.lock);
	return NULL;
}

void sync_init(struct repo *r)
{
	struct syncer *y = &r->sync;

	thread_worker_init(&y->w);
	pthread_mutex_init(&y->run, NULL);
	y->quiet = 1;
	y->ready = 1;
}

/* A change was committed: have it synced within SYNC_MS. */
void sync_later(struct repo *r)
{
	struct syncer *y = &r->sync;
	int now = 0;

	if (!r->batch)
		return;
	pthread_mutex_lock(&y->w.lock);
	if (!y->dirty) {
		y->dirty = 1;
		/* No thread: sync here. */
		if (!y->quiet && !y->w.stop &&
		    thread_worker_start(&y->w, sync_thread, r))
			now = 1;
		thread_worker_wake(&y->w);
	}
	pthread_mutex_unlock(&y->w.lock);
	if (now)
		sync_now(r);
}

/* Stop the thread and sync what is left. */
void sync_stop(struct repo *r)
{
	struct syncer *y = &r->sync;

	if (!y->ready)
		return;
	thread_worker_stop(&y->w);
	if (r->batch && r->cat && r->store)
		sync_now(r);
	free(y->freed);
	pthread_mutex_destroy(&y->run);
	thread_worker_release(&y->w);
}

int repo_sync(struct repo *r)
{
	return r->batch ? sync_now(r) : 0;
}

/* ---- after a power loss (sync = batch) ---- */

/* ... or listed as unsynced (catalog_unsynced_list). */
static int keep_sha(void *arg, const char *const *row)
{
	return blob_list_add(arg, row[0]);
}

/* The versions of a blob whose bytes a power loss kept from the disk. */
struct lost {
	struct lost_ver {
		char env[64];
		char art[254];
		int64_t n;
	} *v;
	size_t n;
};

static int keep_ver(void *arg, const char *const *row)
{
	struct lost *l = arg;
	struct lost_ver *p = realloc(l->v, (l->n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	l->v = p;
	p += l->n++;
	snprintf(p->env, sizeof(p->env), "%s", row[0]);
	snprintf(p->art, sizeof(p->art), "%s", row[1]);
	p->n = strtoll(row[2], NULL, 10);
	return 0;
}

/*
 * Check each blob still listed as unsynced (what a power loss before the
 * sync can leave torn or missing) and take back every version of one
 * that does not hold its bytes.  The store is as before those uploads,
 * and events says so.
 */
void recover(struct repo *r)
{
	static const struct repo_who system = { 0, 0, 0, 0, NULL };
	struct cmfs_err err = CMFS_ERR_INIT;
	struct blob_list shas = { NULL, 0 };
	struct lost vers;
	int64_t mark = 0;
	size_t i, j;
	int rc;

	if (catalog_unsynced_mark(r->cat, &mark, &err) || !mark ||
	    catalog_unsynced_list(r->cat, keep_sha, &shas, &err)) {
		if (err.code)
			repo_log(r, LOG_ERR, "recovery: %s", cmfs_err_msg(&err));
		return;
	}
	for (i = 0; i < shas.n; i++) {
		const char *sha = shas.sha[i];

		rc = blob_intact(r->store, r->cat, sha);
		if (!rc)
			continue;
		if (rc != -ENOENT && rc != -EBADMSG) {
			repo_log(r, LOG_ERR, "recovery: blob %s: %s; run "
				 "cmfs fsck", sha, strerror(-rc));
			continue;
		}
		vers.v = NULL;
		vers.n = 0;
		if (catalog_ver_by_sha(r->cat, sha, keep_ver, &vers, &err))
			repo_log(r, LOG_ERR, "recovery: %s",
				 cmfs_err_msg(&err));
		for (j = 0; j < vers.n; j++) {
			cmfs_err_clear(&err);
			ver_remove(r, &system, vers.v[j].env, vers.v[j].art,
				   vers.v[j].n, "recover",
				   rc == -ENOENT
					   ? "its bytes were lost: the "
					     "machine stopped before they "
					     "reached the disk"
					   : "its bytes are torn: the machine "
					     "stopped before they reached "
					     "the disk",
				   &err);
		}
		free(vers.v);
	}
	free(shas.sha);
	cmfs_err_clear(&err);
	if (catalog_unsynced_clear(r->cat, mark, &err))
		repo_log(r, LOG_ERR, "recovery: %s", cmfs_err_msg(&err));
	repo_sync(r);
}
