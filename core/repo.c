/*
 * repo.c - the rules of DESIGN.md over the catalog and the blob store.
 *
 * Every change follows one pattern: check names and limits, then one
 * catalog transaction that makes the change and appends its `events` line,
 * then (for deletions) free the blobs nothing refers to any more.  A
 * refusal appends its own line after the rollback; so does a change whose
 * commit failed (a full disk): its line says result=refused with that
 * errno.  Both lines also go to the daemon's log, a change's only once
 * its commit succeeded (end()).  A read's line (a resolution) waits in a
 * short queue (struct later) that goes into the catalog within LATER_MS,
 * before any change or refusal (so lines keep their order) and before
 * `events` is read: a job start does not pay for a catalog write.
 *
 * The trail is bounded (issue 34: a user without rights wrote 44,464
 * lines in 5 s).  Refusals pass a gate (events.h) that counts repeats and
 * rate-limits each uid, writing the counts; a resolution whose result did
 * not change since its line is not written again (seen_before()); and
 * retention ([events] max_rows, max_age) removes the oldest lines, on the
 * later thread, with a line that says how many.
 *
 * Small uploads: bytes that fit in [store] inline_max (64 KiB by default)
 * are held in memory while written (hold(), HELD_MAX for all uploads
 * together) and commit as an inline blob, a row of the catalog written in
 * the version's own transaction (blob.h): no staging file and no blob file
 * are made.  On ext4 here, making a file cost more than all the rest of a
 * small upload (O_TMPFILE and linkat ~150-300 us against ~10 us for the
 * row).  An upload that outgrows the limit, or finds the memory taken, is
 * written to a staging file.
 *
 * Blob lifetime: an upload links its blob into the store before the
 * transaction that refers to it commits, and a deletion unlinks a blob
 * after the transaction that dropped the last reference.  gc_lock is held
 * across both, so a deletion never frees a blob that an upload is about to
 * refer to.  An inline blob comes and goes with the rows that refer to it,
 * in their transactions (the catalog's trigger drops it with the last).
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
 * REAP_WAIT_MS: the unlink of a 256 MiB blob is ~90 ms of CPU that an
 * upload beside it, or the rm that freed it, would otherwise share or
 * wait for.
 */
#define _GNU_SOURCE /* SCHED_IDLE, gettid() */
#include "repo.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "blob.h"
#include "budget.h"
#include "clock.h"
#include "ddl.h"
#include "events.h"
#include "jar.h"
#include "jar_cost.h"
#include "name.h"
#include "reinspect.h"
#include "resolve.h"
#include "shortlist.h"
#include "store.h"
#include "thread.h"

#define PIPE_FROM ((uint64_t)4 << 20) /* an upload this big hashes aside */
/* Bytes all uploads together hold in memory (see hold()). */
#define HELD_MAX ((size_t)16 << 20)
#define LATER_MS 50   /* the longest a read's event line waits */
#define LATER_MAX 512 /* lines that make the reader write them at once */
#define SYNC_MS 250   /* sync = batch: the longest a change waits for disk */
#define SYNC_RETRY_MS 5000 /* after a failed sync: not a log line per try */
#define REAP_WAIT_MS 10000 /* the longest an unlink waits for uploads */
#define SYNC_FEW 8	   /* blobs a sync writes one by one; more: syncfs() */
/* (uid, environment) pairs the gate of refusal lines keeps (events.h);
 * its rates are [events]' (config.h). */
#define GATE_WHOS 1024
#define SEEN_SLOTS 4096 /* resolutions whose last result is remembered */
#define TRIM_EVERY 1000 /* lines between two retention passes, at most */
#define TRIM_MS (3600 * 1000) /* and an hour */
/* Retired blobs wait for an export this long between looks. */
#define EXPORT_WAIT_MS 1000

/* Event lines of reads not yet in the catalog, oldest first. */
struct later {
	struct thread_worker w; /* w.lock guards the list */
	pthread_mutex_t flush; /* held while lines go in: keeps the order */
	int ready; /* set up (later_init): the above are live */
	int kick;	/* wake up and look again (later_arm) */
	size_t n;
	int64_t since;	/* when the first of the n lines came */
	int64_t trim_at; /* the next retention pass, by time */
	struct later_line *head, **tail;
};

struct later_line {
	struct later_line *next;
	char env[64]; /* as struct repo_upload's */
	char line[];
};

/* sync = batch: the thread that syncs the store, and what waits for it. */
struct syncer {
	struct thread_worker w;	/* w.lock guards the fields below */
	pthread_mutex_t run;	/* held through one sync: one at a time */
	int ready;
	int dirty;		/* a change since the last sync began */
	int quiet;		/* no thread yet (repo_open runs before a fork) */
	char (*freed)[STORE_SHA_HEX]; /* to unlink after the next sync */
	size_t nfreed, afreed;
};

/* Retired blobs to unlink, on a thread that runs only when a CPU is idle. */
struct reaper {
	struct thread_worker w; /* w.lock guards the fields below */
	int ready;
	char (*names)[STORE_RETIRED]; /* from store_blob_retire */
	size_t n, a;
	struct timespec since; /* when the first of names[] came */
};

/* A label of a scratch file, or a label change pending in an upload. */
struct label {
	struct label *next;
	char *env;		/* scratch labels only */
	char *file;		/* scratch labels only */
	char *key;
	char *value;		/* NULL: remove (pending changes only) */
};

/*
 * Memory all inspections may hold at once (jar_cost.h): a JAR of 200,000
 * entries holds some 80 MiB while it is inspected, and sixteen of them
 * uploaded at once must not take the daemon past 256 MiB.  One bigger
 * than this runs alone.
 */
#define INSPECT_BUDGET (96u << 20)

struct repo {
	const struct config *cfg;	/* swapped whole on SIGHUP */
	uid_t owner;			/* the mounting user (access.h) */
	uint64_t settled;		/* (atomic) repo_settled(): the */
	int64_t changed;		/* generation settled last, when */
	char *mountpoint;
	struct store *store;
	struct catalog *cat;
	repo_log_fn log;
	void *log_arg;
	pthread_mutex_t gc_lock;	/* blob link/commit vs. unlink */
	pthread_mutex_t scratch_lock;	/* guards scratch */
	struct label *scratch;
	struct resolve_cache *resolved;	/* NULL: none, resolve each time */
	struct later later;
	int batch;			/* [store] sync = batch, at open */
	struct syncer sync;
	struct reaper reaper;
	struct reinspect *reinspect; /* after repo_background(), or NULL */
	unsigned staged; /* uploads being written (atomic) */
	size_t held;	 /* bytes of uploads held in memory (atomic) */
	struct budget insp; /* memory the inspections hold at once */
	struct events_gate *gate; /* counts repeated refusals; NULL: none */
	unsigned added;	/* lines since the last retention (atomic) */
	pthread_mutex_t seen_lock; /* guards seen */
	struct seen *seen; /* SEEN_SLOTS of them, or NULL */
};

/* The last result of a resolution whose line was written (repo_resolve). */
struct seen {
	char key[200];		/* env/table.jars or .sql; "" = free */
	char digest[STORE_SHA_HEX];
};

/* This thread's catalog transactions open through begin(). */
static _Thread_local int in_txn;
/* Lines of changes in them, for the daemon's log once they commit. */
static _Thread_local struct buf txn_log = BUF_INIT((size_t)1 << 20);

struct repo_upload {
	struct repo *r;
	char env[64];
	char name[254];
	int fd;			/* staging file, -1 until needed */
	char base[STORE_SHA_HEX]; /* blob to copy when staging, "" = empty */
	uint64_t size;
	struct store_hash *hash; /* over [0, hashed) of the staged bytes */
	struct store_pipe *pipe; /* or, past PIPE_FROM, hashing on a thread */
	uint64_t hashed;
	int hash_broken;	/* a write out of order: hash at commit */
	int dirty;
	int failed;		/* a write failed: -errno; no commit */
	struct label *pending;	/* label changes for the commit */
	unsigned char *mem;	/* or the bytes, held in memory (size) */
	size_t cap;		/* bytes allocated at mem (counted in held) */
	struct jar_report *early; /* the inspection of mem as it is, or NULL
				   * (repo_upload_inspect_early) */
	uint64_t wrote_from, wrote_to; /* the last write's bytes */
};

int64_t repo_now(void)
{
	return clock_now_ns();
}

void repo_log(struct repo *r, int level, const char *fmt, ...)
{
	char line[CMFS_ERR_MSG + 1024]; /* a message and its context */
	va_list ap;

	if (!r->log || level > repo_config(r)->log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	r->log(r->log_arg, level, line);
}

/* The `n` bytes of an events line (ending in a newline) into the log. */
static void log_event_n(struct repo *r, const char *line, size_t n, int rc)
{
	int level = rc ? LOG_NOTICE : LOG_INFO;
	char *copy;

	if (!r->log || level > repo_config(r)->log_level)
		return;
	copy = strndup(line, n ? n - 1 : 0);
	if (copy)
		r->log(r->log_arg, level, copy);
	free(copy);
}

/* An events line (ending in a newline) into the daemon's log. */
static void log_event(struct repo *r, const char *line, int rc)
{
	log_event_n(r, line, strlen(line), rc);
}

/* Each line of `lines` (each ending in a newline) into the daemon's log. */
static void log_lines(struct repo *r, const char *lines, int rc)
{
	const char *p, *e;

	for (p = lines; (e = strchr(p, '\n')) != NULL; p = e + 1)
		log_event_n(r, p, (size_t)(e - p) + 1, rc);
}

static void sync_later(struct repo *r);

/*
 * Write the queued lines into the catalog, in one transaction.  The caller
 * holds later.flush, and is in no transaction of its own.  Lines that
 * cannot be written are logged and dropped (the daemon log has them).
 */
static void later_write(struct repo *r)
{
	struct later *q = &r->later;
	struct later_line *head, *l, *next;
	const char **envs, **lines;
	struct cmfs_err err = CMFS_ERR_INIT;
	size_t n, i;

	pthread_mutex_lock(&q->w.lock);
	head = q->head;
	n = q->n;
	q->head = NULL;
	q->tail = &q->head;
	q->n = 0;
	pthread_mutex_unlock(&q->w.lock);
	if (!n)
		return;
	envs = malloc(n * sizeof(*envs));
	lines = malloc(n * sizeof(*lines));
	for (i = 0, l = head; envs && lines && l; l = l->next, i++) {
		envs[i] = l->env;
		lines[i] = l->line;
	}
	if (!envs || !lines)
		cmfs_err_set(&err, -ENOMEM, "out of memory");
	else if (!catalog_event_add_many(r->cat, n, envs, lines, &err))
		sync_later(r); /* the checkpoint that keeps the log short */
	if (err.code)
		repo_log(r, LOG_ERR, "events: %zu lines of reads lost: %s", n,
			 cmfs_err_msg(&err));
	free(envs);
	free(lines);
	for (l = head; l; l = next) {
		next = l->next;
		free(l);
	}
}

void repo_flush_events(struct repo *r)
{
	if (in_txn)
		return;
	pthread_mutex_lock(&r->later.flush);
	later_write(r);
	pthread_mutex_unlock(&r->later.flush);
}

static void gate_emit(void *arg, const char *env, const char *line, int rc);
static void retain(struct repo *r, int64_t now);

/* The number of lines between retention passes. */
static unsigned trim_every(const struct repo *r)
{
	uint64_t rows = repo_config(r)->events.max_rows / 10;

	return rows < 1 ? 1 : rows > TRIM_EVERY ? TRIM_EVERY : (unsigned)rows;
}

/*
 * The thread of what waits: queued lines of reads, written LATER_MS
 * after the first came; counts of the refusal gate, written when their
 * window closes; retention, after trim_every() lines or TRIM_MS.
 */
static void *later_thread(void *arg)
{
	struct repo *r = arg;
	struct later *q = &r->later;
	int64_t now, due, wait;

	pthread_mutex_lock(&q->w.lock);
	while (!q->w.stop) {
		q->kick = 0;
		pthread_mutex_unlock(&q->w.lock);
		now = repo_now();
		due = r->gate ? events_gate_due(r->gate) : 0;
		if (due && due <= now) {
			events_gate_tick(r->gate, now, 0, gate_emit, r);
			due = events_gate_due(r->gate);
		}
		if (now >= q->trim_at ||
		    __atomic_load_n(&r->added, __ATOMIC_RELAXED) >=
			    trim_every(r)) {
			retain(r, now);
			q->trim_at = now + (int64_t)TRIM_MS * 1000000;
		}
		pthread_mutex_lock(&q->w.lock);
		if (q->w.stop)
			break;
		if (q->n && now - q->since >= (int64_t)LATER_MS * 1000000) {
			pthread_mutex_unlock(&q->w.lock);
			repo_flush_events(r);
			pthread_mutex_lock(&q->w.lock);
			continue;
		}
		wait = q->trim_at - now;
		if (q->n && q->since + (int64_t)LATER_MS * 1000000 - now < wait)
			wait = q->since + (int64_t)LATER_MS * 1000000 - now;
		if (due && due - now < wait)
			wait = due - now;
		if (q->kick)
			continue;
		thread_worker_wait(&q->w, wait > 0 ? (uint64_t)wait : 0);
	}
	pthread_mutex_unlock(&q->w.lock);
	return NULL;
}

static void later_init(struct repo *r)
{
	struct later *q = &r->later;

	thread_worker_init(&q->w);
	pthread_mutex_init(&q->flush, NULL);
	q->tail = &q->head;
	q->trim_at = repo_now() + (int64_t)TRIM_MS * 1000000;
	q->ready = 1;
}

/*
 * Start the queue's thread, with q->w.lock held.  0 when it runs.  Like the
 * other helper threads, it starts when first needed, never in repo_open:
 * the daemon forks after that (fuse_daemonize), and a thread does not
 * survive a fork.
 */
static int later_spawn(struct repo *r)
{
	struct later *q = &r->later;

	return thread_worker_start(&q->w, later_thread, r);
}

/* Start the thread if it is not running, and have it look again. */
static void later_arm(struct repo *r)
{
	struct later *q = &r->later;

	pthread_mutex_lock(&q->w.lock);
	if (!later_spawn(r)) {
		q->kick = 1;
		thread_worker_wake(&q->w);
	}
	pthread_mutex_unlock(&q->w.lock);
}

/* Stop the thread and write what is left. */
static void later_stop(struct repo *r)
{
	struct later *q = &r->later;

	if (!q->ready)
		return;
	thread_worker_stop(&q->w);
	if (r->cat)
		repo_flush_events(r);
	pthread_mutex_destroy(&q->flush);
	thread_worker_release(&q->w);
}

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

static void reaper_init(struct repo *r)
{
	struct reaper *q = &r->reaper;

	thread_worker_init(&q->w);
	q->ready = 1;
}

/* An upload's staging file is open: its bytes are being written. */
static void staged(struct repo *r)
{
	__atomic_add_fetch(&r->staged, 1, __ATOMIC_RELEASE);
}

/* Close upload u's staging file; with the last one, wake the reaper. */
static void unstage(struct repo_upload *u)
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
static void reaper_stop(struct repo *r)
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
static void unlink_unused(struct repo *r, char (*shas)[STORE_SHA_HEX],
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
 * by one, then the catalog's files, when there are SYNC_FEW or fewer
 * (after a big upload, a syncfs() would also write out the next one,
 * being written: 60-100 ms of its time here); else one syncfs().
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

static void sync_init(struct repo *r)
{
	struct syncer *y = &r->sync;

	thread_worker_init(&y->w);
	pthread_mutex_init(&y->run, NULL);
	y->quiet = 1;
	y->ready = 1;
}

/* A change was committed: have it synced within SYNC_MS. */
static void sync_later(struct repo *r)
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
static void sync_stop(struct repo *r)
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

/*
 * A catalog transaction of this thread.  The reads' lines queued before
 * it go in first, so the events keep the order things happened in.
 */
static int begin(struct repo *r, struct cmfs_err *err)
{
	int rc;

	repo_flush_events(r);
	rc = catalog_begin(r->cat, err);
	if (!rc)
		in_txn++;
	return rc;
}

/*
 * End this thread's transaction with `rc`.  The lines of what it changed
 * go to the daemon's log only once the outermost commit succeeded: a
 * change rolled back (a full disk, an I/O error) is logged by its caller
 * as the refusal it became, never as done.
 */
static int end(struct repo *r, int rc, struct cmfs_err *err)
{
	in_txn--;
	rc = catalog_end(r->cat, rc, err);
	if (in_txn)
		return rc;
	if (!rc) {
		if (txn_log.len)
			log_lines(r, buf_str(&txn_log), 0);
		sync_later(r);
	}
	buf_release(&txn_log);
	return rc;
}

/* Append `line` to the events of `env`: in the caller's transaction, or
 * after the queued lines of reads. */
static void store_line(struct repo *r, const char *env, const char *line)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;

	if (!in_txn) {
		/* After the reads' lines waiting before it. */
		pthread_mutex_lock(&r->later.flush);
		later_write(r);
	}
	if (catalog_event_add(r->cat, env, line, &e2))
		repo_log(r, LOG_ERR, "events of %s: %s", env,
			 cmfs_err_msg(&e2));
	else if (__atomic_add_fetch(&r->added, 1, __ATOMIC_RELAXED) ==
		 trim_every(r))
		later_arm(r);
	if (!in_txn) {
		pthread_mutex_unlock(&r->later.flush);
		/* A line alone (a refusal) is a commit too: with sync =
		 * batch only the syncing thread checkpoints, and a flood of
		 * lines without changes would grow the catalog's log for
		 * good. */
		sync_later(r);
	}
}

/* A line of the refusal gate: the end of a run, or a count. */
static void gate_emit(void *arg, const char *env, const char *line, int rc)
{
	struct repo *r = arg;

	log_event(r, line, rc);
	if (env)
		store_line(r, env, line);
}

/*
 * Finish event `e` with `rc`, store it in the events of `env` (NULL: the
 * daemon's log only) and log it.  Called inside a catalog transaction,
 * the line is part of it: a change and its line commit together, and the
 * daemon's log has it once the commit succeeded (end()).  When the commit
 * fails, the caller records `e` again with the error: its line then says
 * result=refused, in events and in the log.  A refusal passes the gate
 * first (events.h): a repeat, or one past the uid's rate, is counted.
 */
static void record(struct repo *r, struct event *e, const char *env, int rc,
		   const struct cmfs_err *err)
{
	const char *reason = err ? cmfs_err_msg(err) : NULL;
	const char *line = event_finish(e, rc, reason);
	int armed = 0;

	if (!line) {
		repo_log(r, LOG_ERR, "events: a line of uid %u was too long "
			 "or memory ran out", e->uid);
		return;
	}
	if (rc && !in_txn && r->gate &&
	    !events_gate_pass(r->gate, repo_now(), e->uid, env, e, rc,
			      reason, gate_emit, r, &armed)) {
		if (armed)
			later_arm(r);
		return;
	}
	if (!rc && in_txn) {
		if (buf_adds(&txn_log, line))
			log_event(r, line, rc); /* no room: now */
	} else {
		log_event(r, line, rc);
	}
	if (env)
		store_line(r, env, line);
}

/*
 * Finish event `e` of a read, log it, and queue its line for the events
 * of `env`: a reader need not wait for a catalog write.
 */
static void record_later(struct repo *r, struct event *e, const char *env,
			 int rc, const struct cmfs_err *err)
{
	const char *line = event_finish(e, rc, err ? cmfs_err_msg(err) : NULL);
	struct later *q = &r->later;
	struct later_line *l;
	size_t n;

	if (!line)
		return;
	n = strlen(line);
	log_event(r, line, rc);
	if (!(l = malloc(sizeof(*l) + n + 1))) {
		store_line(r, env, line); /* no queue: now */
		return;
	}
	l->next = NULL;
	snprintf(l->env, sizeof(l->env), "%s", env);
	memcpy(l->line, line, n + 1);
	pthread_mutex_lock(&q->w.lock);
	if (later_spawn(r)) {
		pthread_mutex_unlock(&q->w.lock);
		free(l);
		store_line(r, env, line); /* no thread: now */
		return;
	}
	*q->tail = l;
	q->tail = &l->next;
	if (q->n++ == 0) {
		q->since = repo_now();
		thread_worker_wake(&q->w);
	}
	n = q->n;
	pthread_mutex_unlock(&q->w.lock);
	if (n >= LATER_MAX)
		repo_flush_events(r);
}

/* The names of environments with events (catalog_event_envs). */
static int keep_env(void *arg, const char *env)
{
	char name[64];

	snprintf(name, sizeof(name), "%s", env);
	return vec_push(arg, name);
}

/*
 * Retention ([events] max_rows, max_age): remove the oldest lines of each
 * environment's events, in a transaction that appends a line saying how
 * many went and why.  Each environment keeps max_rows lines with that
 * line.  Runs at open and on the later thread, never in a change's
 * transaction: a change does not wait for it.
 */
static void retain(struct repo *r, int64_t now)
{
	const struct config *cfg = repo_config(r);
	uint64_t rows = cfg->events.max_rows, age = cfg->events.max_age;
	struct vec envs = VEC_INIT(64);
	struct cmfs_err err = CMFS_ERR_INIT;
	char before[40] = "";
	size_t i, n;

	__atomic_store_n(&r->added, 0, __ATOMIC_RELAXED);
	if (!rows && !age)
		return;
	if (age) {
		time_t t = (time_t)(now / 1000000000 - (int64_t)age);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(before, sizeof(before), "%Y-%m-%dT%H:%M:%S", &tm);
		n = strlen(before);
		snprintf(before + n, sizeof(before) - n, ".%03dZ",
			 (int)(now / 1000000 % 1000));
	}
	if (catalog_event_envs(r->cat, keep_env, &envs, &err)) {
		repo_log(r, LOG_ERR, "events retention: %s",
			 cmfs_err_msg(&err));
		goto out;
	}
	for (i = 0; i < envs.n; i++) {
		const char *env = (const char *)envs.v + i * 64;
		struct event ev;
		uint64_t removed = 0;
		const char *line = NULL;
		int rc;

		cmfs_err_clear(&err);
		if ((rc = begin(r, &err)))
			break;
		rc = catalog_event_trim(r->cat, env, rows ? rows - 1 : 0,
					age ? before : NULL, &removed, &err);
		event_init(&ev, now, (uint32_t)geteuid(), env, "retention");
		event_add(&ev, "object", "events");
		event_addf(&ev, "removed", "%llu", (unsigned long long)removed);
		event_addf(&ev, "max_rows", "%llu", (unsigned long long)rows);
		event_addf(&ev, "max_age", "%llus", (unsigned long long)age);
		event_add(&ev, "reason", "the oldest lines are removed first");
		if (!rc && removed && (line = event_finish(&ev, 0, NULL)))
			rc = catalog_event_add(r->cat, env, line, &err);
		rc = end(r, rc, &err);
		if (rc)
			repo_log(r, LOG_ERR, "events of %s: retention: %s", env,
				 cmfs_err_msg(&err));
		else if (line)
			log_event(r, line, 0);
		event_release(&ev);
	}
out:
	vec_release(&envs);
}

/*
 * Keep why the last write of table `name` was refused (`msg`) on its row
 * of the catalog: what user.cmfs.error of tables/<name>.sql says, across
 * remounts, until a good write (catalog_table_put clears it in the same
 * statement), a rename onto it or its removal (the row goes).  A table
 * not (yet) in the catalog keeps nothing.  Its own transaction, after the
 * refused one rolled back; a failure here is not the caller's (the
 * refusal is in events anyway).
 */
static void table_refusal(struct repo *r, const char *env, const char *name,
			  const char *msg)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct catalog_table t;

	if (!catalog_env_get(r->cat, env, &e, &err) &&
	    !catalog_table_get(r->cat, e.id, name, &t, &err))
		catalog_table_refusal_set(r->cat, t.id, msg, &err);
}

int repo_table_error(struct repo *r, const char *env, const char *name,
		     struct buf *out)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct catalog_table t;
	int rc = catalog_env_get(r->cat, env, &e, &err);

	if (!rc)
		rc = catalog_table_get(r->cat, e.id, name, &t, &err);
	if (!rc)
		rc = catalog_table_refusal_get(r->cat, t.id, out, &err);
	/* no table, or a catalog that failed: no reason to tell */
	return rc == -ENOMEM ? rc : 0;
}

void repo_refused(struct repo *r, const struct repo_who *who, const char *env,
		  const char *action, const char *object, int rc,
		  const char *reason)
{
	struct event e;
	struct cmfs_err err = CMFS_ERR_INIT;

	/* a table write refused before its text could be read */
	if (object && !strcmp(action, "table-write"))
		table_refusal(r, env, object, reason ? reason : "");

	cmfs_err_set(&err, rc, "%s", reason ? reason : "");
	event_init(&e, repo_now(), who->uid, env, action);
	if (object)
		event_add(&e, "object", object);
	record(r, &e, env, rc, &err);
	event_release(&e);
}

enum config_right repo_change_right(enum repo_area area)
{
	switch (area) {
	case REPO_AREA_ARTIFACTS:
		return CONFIG_UPLOAD;
	case REPO_AREA_TABLES:
		return CONFIG_WRITE_TABLES;
	default:
		return CONFIG_ADMIN;
	}
}

enum config_right repo_right(enum repo_area area, enum repo_op op,
			     int versioned)
{
	switch (op) {
	case REPO_OP_READ:
		return CONFIG_READ;
	case REPO_OP_LABEL:
		return CONFIG_UPLOAD;
	case REPO_OP_REMOVE:
		if (versioned)
			return CONFIG_ADMIN;
		break;
	case REPO_OP_CHANGE:
		break;
	}
	return repo_change_right(area);
}

int repo_rules_need_groups(struct repo *r)
{
	return repo_config(r)->nscopes != 0;
}

int repo_may(struct repo *r, const struct repo_who *who, const char *env,
	     enum config_right right)
{
	struct access_who w = { who->uid, who->gid, who->ngroups,
				who->groups };

	return access_allowed(repo_config(r), r->owner,
			      env && *env ? env : NULL, &w, right);
}

int repo_authorise(struct repo *r, const struct repo_who *who,
		   const char *env, enum config_right right,
		   const char *action, const char *object)
{
	char msg[CMFS_ERR_MSG];

	if (repo_may(r, who, env, right))
		return 0;
	snprintf(msg, sizeof(msg), "uid %u may not %s here (%s right)",
		 (unsigned)who->uid, action, config_right_name(right));
	repo_refused(r, who, env && *env ? env : NULL, action, object,
		     -EACCES, msg);
	return -EACCES;
}

int repo_refuse_change(struct repo *r, const struct repo_who *who,
		       const char *env, enum repo_area area, const char *path,
		       const char *name, const char *action)
{
	char msg[CMFS_ERR_MSG];
	int rc = area == REPO_AREA_FIXED ? -EROFS : -EPERM;

	snprintf(msg, sizeof(msg), "%s%s%s: %s", path, name ? "/" : "",
		 name ? name : "",
		 rc == -EROFS ? "read-only: versions, resolved files and "
				"events cannot be changed"
			      : "not possible here");
	repo_refused(r, who, env && *env ? env : NULL, action,
		     name ? name : path, rc, msg);
	return rc;
}

int repo_may_change(struct repo *r, const struct repo_who *who,
		    const char *env, enum repo_area area, int dir)
{
	if (area == REPO_AREA_ROOT)
		return 0;
	if (area == REPO_AREA_FIXED && !dir)
		return -EROFS;
	return repo_may(r, who, env, repo_change_right(area)) ? 0 : -EACCES;
}

int repo_reads_limited(struct repo *r, const char *env)
{
	const struct config *cfg = repo_config(r);
	const struct config_scope *e = config_scope_env(cfg, env);
	const struct config_scope *g = config_scope_global(cfg);

	return (e && e->who[CONFIG_READ].set) || (g && g->who[CONFIG_READ].set);
}

/* The refusal of `size` bytes for `name`, over `limit` (the ini key
 * `key`): -EFBIG. */
static int too_big(struct repo *r, const struct repo_who *who,
		   const char *env, const char *name, const char *action,
		   uint64_t size, uint64_t limit, const char *key)
{
	char msg[CMFS_ERR_MSG];

	snprintf(msg, sizeof(msg),
		 "%s: %llu bytes is over the limit of %llu ([limits] %s)",
		 name, (unsigned long long)size, (unsigned long long)limit,
		 key);
	repo_refused(r, who, env && *env ? env : NULL, action, name, -EFBIG,
		     msg);
	return -EFBIG;
}

int repo_scratch_fits(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, const char *action,
		      uint64_t size)
{
	uint64_t limit = repo_config(r)->limits.scratch_size;

	return size > limit ? too_big(r, who, env, name, action, size, limit,
				      "max_scratch_size")
			    : 0;
}

int repo_upload_truncate_refused(struct repo *r, const struct repo_who *who,
				 const char *env, const char *name,
				 uint64_t size, int rc)
{
	char msg[CMFS_ERR_MSG];

	if (rc == -EFBIG)
		return too_big(r, who, env, name, "truncate", size,
			       repo_config(r)->limits.artifact_size,
			       "max_artifact_size");
	snprintf(msg, sizeof(msg), "%s: truncating to %llu bytes failed: %s",
		 name, (unsigned long long)size, strerror(-rc));
	repo_refused(r, who, env, "truncate", name, rc, msg);
	return rc;
}

int repo_art_truncate(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, uint64_t size,
		      struct cmfs_err *err)
{
	struct repo_upload *u;
	int rc = repo_upload_begin(&u, r, env, name, size == 0, err);

	if (rc)
		return rc;
	rc = repo_upload_truncate(u, (off_t)size);
	if (rc)
		repo_upload_truncate_refused(r, who, env, name, size, rc);
	else
		rc = repo_upload_commit(u, who, NULL, err);
	repo_upload_free(u);
	return rc;
}

size_t repo_table_text_cap(struct repo *r)
{
	return repo_config(r)->limits.ddl_size;
}

int repo_create_refused(struct repo *r, const struct repo_who *who,
			const char *env, enum repo_area area,
			const char *name)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc;

	if (area == REPO_AREA_ARTIFACTS)
		rc = name_artifact_check(name, &err);
	else
		rc = cmfs_err_set(&err, -EINVAL,
				  "%.200s: not a table file (<table>.sql) "
				  "nor a scratch name", name);
	if (!rc)
		rc = cmfs_err_set(&err, -EINVAL, "%.200s: bad name", name);
	repo_refused(r, who, env, "create", name, rc, cmfs_err_msg(&err));
	return rc;
}

int repo_rename_refused(struct repo *r, const struct repo_who *who,
			const char *env, const char *name)
{
	repo_refused(r, who, env, "rename", name, -EINVAL,
		     "not a valid name here");
	return -EINVAL;
}

int repo_link_refused(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name)
{
	repo_refused(r, who, env && *env ? env : NULL, "link", name, -EPERM,
		     "links are not supported");
	return -EPERM;
}

int repo_table_doomed(size_t len)
{
	return len ? 0 : -EINVAL;
}

int repo_table_write_failed(struct repo *r, const struct repo_who *who,
			    const char *env, const char *name, int rc)
{
	repo_refused(r, who, env, "table-write", name, rc,
		     "a write failed (over max_ddl_size), so nothing was "
		     "committed");
	return rc;
}

/*
 * Free the blobs in `shas` (n of them) that no version refers to now.
 * With sync = batch, after the next sync: until then the deletion that
 * freed them may not be on disk, and a power loss would bring back
 * versions that refer to them.
 */
static void free_blobs(struct repo *r, char (*shas)[STORE_SHA_HEX], size_t n)
{
	struct syncer *y = &r->sync;
	size_t i;

	if (!r->batch) {
		unlink_unused(r, shas, n);
		return;
	}
	pthread_mutex_lock(&y->w.lock);
	for (i = 0; i < n; i++) {
		if (y->nfreed == y->afreed) {
			size_t a = y->afreed ? 2 * y->afreed : 16;
			char(*p)[STORE_SHA_HEX] =
				realloc(y->freed, a * sizeof(*p));

			if (!p)
				break; /* an orphan: swept at the next mount */
			y->freed = p;
			y->afreed = a;
		}
		memcpy(y->freed[y->nfreed++], shas[i], STORE_SHA_HEX);
	}
	pthread_mutex_unlock(&y->w.lock);
}

/*
 * Before a change that frees space (or takes none): on a full disk, give
 * the reserve's blocks back so that its transaction can commit.  The next
 * change that takes space takes the reserve again once there is room.
 */
static void room_to_free(struct repo *r)
{
	if (store_reserve_release(r->store, 0))
		repo_log(r, LOG_WARNING,
			 "store %s is full: its reserve is released so that "
			 "deletes can commit", store_path(r->store));
}

/* Blob names: of an artifact's versions before deleting it, ... */
struct blob_list {
	char (*sha)[STORE_SHA_HEX];
	size_t n;
};

static int blob_list_add(struct blob_list *l, const char *sha)
{
	char(*p)[STORE_SHA_HEX] = realloc(l->sha, (l->n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	l->sha = p;
	snprintf(l->sha[l->n++], STORE_SHA_HEX, "%s", sha);
	return 0;
}

/*
 * Start-up: free the loose blobs that no version refers to (what a crash
 * between a blob's link and its version's commit, or between a delete's
 * commit and its unlink, leaves), and drop their rows.
 */
static int sweep_loose(void *arg, const char *const *row)
{
	struct blob_list *l = arg;

	return strlen(row[0]) == STORE_SHA_HEX - 1 ? blob_list_add(l, row[0])
						   : 0;
}

/* What the blob files of the store are to the catalog. */
struct blob_census {
	struct repo *r;
	uint64_t known;		/* referred to by a version */
	uint64_t unknown;	/* neither referred to nor loose: kept */
	char first[STORE_SHA_HEX];
};

static int count_blob(void *arg, const char *sha, uint64_t size)
{
	struct blob_census *c = arg;
	uint64_t refs;

	(void)size;
	if (catalog_blob_refs(c->r->cat, sha, &refs, NULL) || refs) {
		c->known++;
		return 0;
	}
	/* A copy of a blob that another host freed since. */
	if (catalog_keeps_blobs(c->r->cat)) {
		store_blob_unlink(c->r->store, sha);
		return 0;
	}
	if (!c->unknown++)
		snprintf(c->first, sizeof(c->first), "%s", sha);
	return 0;
}

static int first_blob(void *arg, const char *sha, uint64_t size)
{
	(void)arg;
	(void)sha;
	(void)size;
	return 1;
}

/*
 * Refuse a store whose blobs no catalog knows: a new catalog beside them
 * would show an empty store and, were they swept, lose them all.
 * `db` missing or empty is refused before SQLite creates it.
 */
static int check_catalog_file(struct repo *r, const char *db,
			      struct cmfs_err *err)
{
	struct stat st;

	if (!stat(db, &st) && st.st_size > 0)
		return 0;
	if (store_blob_walk(r->store, first_blob, NULL) != 1)
		return 0; /* a new store */
	return cmfs_err_set(err, -EUCLEAN,
			    "store %s: catalog.db is %s but blobs/ holds "
			    "blobs: not mounted, a new catalog would know "
			    "none; restore catalog.db or fix [store] path "
			    "(cmfs fsck lists the blobs)",
			    store_path(r->store),
			    stat(db, &st) ? "missing" : "empty");
}

struct give_arg {
	struct repo *r;
	uint64_t n;		/* blobs a version refers to */
	struct cmfs_err err;
};

/* A blob of the store that a version refers to, into the catalog. */
static int give_blob(void *arg, const char *sha, uint64_t size)
{
	struct give_arg *g = arg;
	uint64_t refs;
	int fd, rc = catalog_blob_refs(g->r->cat, sha, &refs, &g->err);

	if (rc || !refs)
		return rc;
	if ((rc = store_blob_open(g->r->store, sha, &fd, &g->err)))
		return rc;
	rc = catalog_blob_put(g->r->cat, sha, fd, size, &g->err);
	close(fd);
	g->n += !rc;
	return rc;
}

/*
 * The store's own catalog.db, or the database of [catalog] url.  A store
 * that has a catalog.db of its own is not mounted on a database: the
 * database would know none of its artifacts.
 */
static int open_catalog(struct repo *r, const char *db, struct cmfs_err *err)
{
	char id[4096];
	struct stat st;
	int rc;

	if (!r->cfg->catalog_url) {
		if ((rc = check_catalog_file(r, db, err)))
			return rc;
		return catalog_open(&r->cat, db, err);
	}
	if (!stat(db, &st))
		return cmfs_err_set(err, -EEXIST,
				    "store %s has a catalog of its own "
				    "(catalog.db) and [catalog] url is set: "
				    "not mounted, the database would know "
				    "none of its artifacts; give the database "
				    "a store of its own",
				    store_path(r->store));
	if ((rc = catalog_open(&r->cat, r->cfg->catalog_url, err)))
		return rc;
	store_ident(r->store, id, sizeof(id));
	rc = catalog_bind_store(r->cat, id, err);
	if (rc > 0) {
		struct give_arg g = { r, 0, CMFS_ERR_INIT };

		rc = store_blob_walk(r->store, give_blob, &g);
		if (rc)
			return cmfs_err_set(err, rc, "%s", cmfs_err_msg(&g.err));
		repo_log(r, LOG_NOTICE,
			 "put the blobs of store %s in the catalog (%llu "
			 "checked)",
			 store_path(r->store), (unsigned long long)g.n);
	}
	return rc;
}

static int sweep(struct repo *r, struct cmfs_err *err)
{
	struct blob_list loose = { NULL, 0 };
	struct blob_census c = { r, 0, 0, "" };
	uint64_t refs, total;
	size_t i;
	int rc;

	rc = catalog_loose_list(r->cat, sweep_loose, &loose, NULL);
	for (i = 0; !rc && i < loose.n; i++) {
		if (catalog_blob_refs(r->cat, loose.sha[i], &refs, NULL))
			continue;
		if (!refs && !store_blob_unlink(r->store, loose.sha[i]))
			repo_log(r, LOG_NOTICE, "freed orphan blob %s",
				 loose.sha[i]);
		catalog_loose_del(r->cat, loose.sha[i], NULL);
	}
	free(loose.sha);
	store_blob_walk(r->store, count_blob, &c);
	/* A catalog that knows bytes of its own is this store's. */
	if (c.unknown && !c.known &&
	    !catalog_blob_total(r->cat, &total, NULL) && !total)
		return cmfs_err_set(err, -EUCLEAN,
				    "store %s: its catalog knows none of its "
				    "%llu blobs: not mounted; restore the "
				    "store's catalog.db or fix [store] path "
				    "(cmfs fsck lists the blobs)",
				    store_path(r->store),
				    (unsigned long long)c.unknown);
	if (c.unknown)
		repo_log(r, LOG_WARNING,
			 "%llu blobs (%s first) are not known to the catalog: "
			 "kept; cmfs fsck names them",
			 (unsigned long long)c.unknown, c.first);
	return 0;
}

static void recover(struct repo *r);
static void settle_renames(struct repo *r);

/* The gate of refusal lines, as [events] sets it (read at mount). */
static struct events_gate_conf gate_conf(const struct config *cfg)
{
	struct events_gate_conf g;

	g.window_ns = (int64_t)cfg->events.repeat_window * 1000000000;
	g.rate = (double)cfg->events.uid_rate;
	g.burst = (double)cfg->events.uid_burst;
	g.all_rate = (double)cfg->events.all_rate;
	g.all_burst = (double)cfg->events.all_burst;
	g.max_whos = GATE_WHOS;
	return g;
}

int repo_open(struct repo **out, const struct config *cfg,
	      const char *mountpoint, repo_log_fn log, void *log_arg,
	      struct cmfs_err *err)
{
	struct events_gate_conf gc = gate_conf(cfg);
	struct repo *r;
	char db[4096];
	int rc;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	r->cfg = cfg;
	r->owner = getuid();
	r->log = log;
	r->log_arg = log_arg;
	pthread_mutex_init(&r->gc_lock, NULL);
	pthread_mutex_init(&r->scratch_lock, NULL);
	budget_init(&r->insp, INSPECT_BUDGET);
	pthread_mutex_init(&r->seen_lock, NULL);
	if ((mountpoint && !(r->mountpoint = strdup(mountpoint))) ||
	    !(r->resolved = resolve_cache_new()) ||
	    !(r->gate = events_gate_new(&gc)) ||
	    !(r->seen = calloc(SEEN_SLOTS, sizeof(*r->seen)))) {
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = store_open(&r->store, cfg->store_path, err)) ||
	    (rc = store_lock(r->store, err)))
		goto fail;
	if ((size_t)snprintf(db, sizeof(db), "%s/catalog.db",
			     store_path(r->store)) >= sizeof(db)) {
		rc = cmfs_err_set(err, -ENAMETOOLONG, "store path too long");
		goto fail;
	}
	later_init(r);
	sync_init(r);
	reaper_init(r);
	r->batch = cfg->sync == CONFIG_SYNC_BATCH;
	/* On a full disk, the reserve's room lets the catalog open. */
	store_reserve_release(r->store, 0);
	if ((rc = open_catalog(r, db, err)))
		goto fail;
	/* A catalog that keeps blobs has every commit's bytes once it
	 * returns: this host's files are copies, each synced as it is
	 * linked, and nothing is left for a recovery to check. */
	if (catalog_keeps_blobs(r->cat)) {
		r->batch = 0;
		store_cache_max(r->store, cfg->cache_max);
	}
	if ((rc = catalog_set_sync(r->cat, !r->batch, err)))
		goto fail;
	recover(r);
	settle_renames(r);
	retain(r, repo_now());
	if ((rc = sweep(r, err)))
		goto fail;
	if (store_reserve_take(r->store))
		repo_log(r, LOG_WARNING,
			 "store %s: too full to keep its reserve for deletes; "
			 "taken when there is room",
			 store_path(r->store));
	r->sync.quiet = 0; /* from here on, a thread may sync */
	*out = r;
	return 0;
fail:
	repo_close(r);
	return rc;
}

/* A line of the re-inspections, into the daemon's log. */
static void reinspect_log(void *arg, int level, const char *line)
{
	repo_log(arg, level, "%s", line);
}

void repo_background(struct repo *r)
{
	struct cmfs_err err = CMFS_ERR_INIT;

	if (reinspect_start(&r->reinspect, r->cat, r->store, &r->insp,
			    reinspect_log, r, &err))
		repo_log(r, LOG_WARNING,
			 "blobs inspected by an older cmfs are not inspected "
			 "again: %s", cmfs_err_msg(&err));
}

void repo_close(struct repo *r)
{
	struct label *l, *next;

	if (!r)
		return;
	reinspect_stop(r->reinspect);
	if (r->gate && r->cat) /* every count still open, written */
		events_gate_tick(r->gate, repo_now(), 1, gate_emit, r);
	later_stop(r);
	sync_stop(r);
	reaper_stop(r);
	/* The next mount may find the disk full: the reserve lets it open.
	 * (A repo with a catalog holds the store's lock.) */
	if (r->cat)
		store_reserve_take(r->store);
	catalog_close(r->cat);
	store_close(r->store);
	resolve_cache_free(r->resolved);
	for (l = r->scratch; l; l = next) {
		next = l->next;
		free(l->env);
		free(l->file);
		free(l->key);
		free(l->value);
		free(l);
	}
	events_gate_free(r->gate);
	free(r->seen);
	pthread_mutex_destroy(&r->gc_lock);
	pthread_mutex_destroy(&r->scratch_lock);
	budget_release(&r->insp);
	pthread_mutex_destroy(&r->seen_lock);
	free(r->mountpoint);
	free(r);
}

void repo_set_config(struct repo *r, const struct config *cfg)
{
	__atomic_store_n(&r->cfg, cfg, __ATOMIC_RELEASE);
}

/* Resolutions are cached by configuration address: forget them all. */
void repo_config_retire(struct repo *r)
{
	resolve_cache_clear(r->resolved);
}

const struct config *repo_config(const struct repo *r)
{
	return __atomic_load_n(&r->cfg, __ATOMIC_ACQUIRE);
}

struct catalog *repo_catalog(struct repo *r)
{
	return r->cat;
}

uint64_t repo_generation(struct repo *r)
{
	return catalog_generation(r->cat);
}

int repo_watch(struct repo *r, catalog_watch_fn fn, void *arg,
	       struct cmfs_err *err)
{
	return catalog_watch(r->cat, fn, arg, err);
}

void repo_unwatch(struct repo *r)
{
	catalog_unwatch(r->cat);
}

int repo_env_get(struct repo *r, const char *env, struct catalog_env *out)
{
	return catalog_env_get(r->cat, env, out, NULL);
}

int repo_art_latest(struct repo *r, const char *env, const char *name,
		    struct catalog_version *out)
{
	struct catalog_env e;
	struct catalog_artifact a;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	if (!rc)
		rc = catalog_art_get(r->cat, e.id, name, &a, NULL);
	if (!rc)
		*out = a.latest;
	return rc;
}

int repo_ver_get(struct repo *r, const char *env, const char *name,
		 int64_t n, struct catalog_version *out)
{
	struct catalog_env e;
	struct catalog_artifact a;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	if (!rc)
		rc = catalog_art_get(r->cat, e.id, name, &a, NULL);
	return rc ? rc : catalog_ver_get(r->cat, a.id, n, out, NULL);
}

int repo_table_get(struct repo *r, const char *env, const char *name,
		   struct catalog_table *out)
{
	struct catalog_env e;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	return rc ? rc : catalog_table_get(r->cat, e.id, name, out, NULL);
}

/* A listing's callback and its argument, for the catalog's rows. */
struct list_names {
	int (*fn)(void *arg, const char *name);
	int (*num)(void *arg, int64_t n);
	void *arg;
};

static int list_env_row(void *arg, const struct catalog_env *e)
{
	struct list_names *l = arg;

	return l->fn(l->arg, e->name);
}

static int list_art_row(void *arg, const struct catalog_artifact *a)
{
	struct list_names *l = arg;

	return l->fn(l->arg, a->name);
}

static int list_ver_row(void *arg, const struct catalog_version *v)
{
	struct list_names *l = arg;

	return l->num(l->arg, v->n);
}

static int list_table_row(void *arg, const struct catalog_table *t)
{
	struct list_names *l = arg;

	return l->fn(l->arg, t->name);
}

int repo_env_list(struct repo *r, int (*fn)(void *arg, const char *name),
		  void *arg)
{
	struct list_names l = { fn, NULL, arg };

	return catalog_env_list(r->cat, list_env_row, &l, NULL);
}

int repo_art_list(struct repo *r, const char *env,
		  int (*fn)(void *arg, const char *name), void *arg)
{
	struct list_names l = { fn, NULL, arg };
	struct catalog_env e;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	return rc ? rc : catalog_art_list(r->cat, e.id, list_art_row, &l, NULL);
}

int repo_ver_list(struct repo *r, const char *env, const char *name,
		  int (*fn)(void *arg, int64_t n), void *arg)
{
	struct list_names l = { NULL, fn, arg };
	struct catalog_env e;
	struct catalog_artifact a;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	if (!rc)
		rc = catalog_art_get(r->cat, e.id, name, &a, NULL);
	return rc ? rc : catalog_ver_list(r->cat, a.id, list_ver_row, &l, NULL);
}

int repo_table_list(struct repo *r, const char *env,
		    int (*fn)(void *arg, const char *name), void *arg)
{
	struct list_names l = { fn, NULL, arg };
	struct catalog_env e;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	return rc ? rc
		  : catalog_table_list(r->cat, e.id, list_table_row, &l, NULL);
}

struct store *repo_store(struct repo *r)
{
	return r->store;
}

int repo_blob_open(struct repo *r, const struct catalog_version *v, int *out,
		   struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	int rc = blob_open(r->store, r->cat, v->sha256, v->size, out, &e2);

	/* A version the catalog holds whose bytes are not there is damage,
	 * not a missing name: EIO, and the operator is told. */
	if (rc == -ENOENT) {
		repo_log(r, LOG_ERR,
			 "version %lld (artifact id %lld): blob %s is missing "
			 "from the store: run cmfs fsck",
			 (long long)v->n, (long long)v->artifact_id, v->sha256);
		return cmfs_err_set(err, -EIO,
				    "blob %s of version %lld is missing: run "
				    "cmfs fsck",
				    v->sha256, (long long)v->n);
	}
	return rc ? cmfs_err_set(err, rc, "%s", e2.msg) : 0;
}

/* Look up environment `name`, with a message when it is missing. */
static int env_get(struct repo *r, const char *name, struct catalog_env *out,
		   struct cmfs_err *err)
{
	int rc = catalog_env_get(r->cat, name, out, err);

	if (rc == -ENOENT)
		return cmfs_err_set(err, rc, "environment %s does not exist",
				    name);
	return rc;
}

int repo_env_create(struct repo *r, const struct repo_who *who,
		    const char *name, struct cmfs_err *err)
{
	struct event e;
	int rc;

	/* A bad name is no environment: the line says env=- and names it
	 * as its object. */
	rc = name_env_check(name, err);
	event_init(&e, repo_now(), who->uid, rc ? NULL : name, "mkdir");
	if (rc)
		event_add(&e, "object", name);
	if (!rc) {
		rc = begin(r, err);
		if (!rc) {
			struct cmfs_err e2 = CMFS_ERR_INIT;

			rc = catalog_env_add(r->cat, name, who->uid,
					     repo_now(), NULL, &e2);
			if (rc == -EEXIST)
				cmfs_err_set(err, rc,
					     "environment %s exists", name);
			else if (rc)
				cmfs_err_set(err, rc, "%s", e2.msg);
			if (!rc)
				record(r, &e, name, 0, NULL);
			rc = end(r, rc, err);
		}
	}
	/* A bad name has no events file to go to: the daemon log only. */
	if (rc)
		record(r, &e, rc == -EINVAL ? NULL : name, rc, err);
	event_release(&e);
	return rc;
}

int repo_env_remove(struct repo *r, const struct repo_who *who,
		    const char *name, struct cmfs_err *err)
{
	struct catalog_env env;
	struct event e;
	int rc;

	room_to_free(r);
	event_init(&e, repo_now(), who->uid, name, "rmdir");
	rc = begin(r, err);
	if (!rc) {
		rc = env_get(r, name, &env, err);
		if (!rc)
			rc = catalog_env_del(r->cat, env.id, err);
		if (rc == -ENOTEMPTY)
			cmfs_err_set(err, rc,
				     "environment %s holds artifacts or "
				     "tables: remove them first", name);
		if (!rc)
			record(r, &e, name, 0, NULL);
		rc = end(r, rc, err);
	}
	if (!rc) {
		store_scratch_drop_env(r->store, name);
		repo_scratch_label_move(r, name, NULL, NULL);
	} else if (rc != -ENOENT) {
		record(r, &e, name, rc, err);
	}
	event_release(&e);
	return rc;
}

static int collect_blob(void *arg, const struct catalog_version *v)
{
	return blob_list_add(arg, v->sha256);
}

/* Look up artifact `name` of `env` inside a transaction. */
static int art_get(struct repo *r, const char *env, const char *name,
		   struct catalog_env *e, struct catalog_artifact *a,
		   struct cmfs_err *err)
{
	int rc = env_get(r, env, e, err);

	if (rc)
		return rc;
	rc = catalog_art_get(r->cat, e->id, name, a, err);
	if (rc == -ENOENT)
		return cmfs_err_set(err, rc, "%s: no such artifact", name);
	return rc;
}

int repo_art_remove(struct repo *r, const struct repo_who *who,
		    const char *env, const char *name, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct blob_list blobs = { NULL, 0 };
	struct event ev;
	int rc;

	room_to_free(r);
	event_init(&ev, repo_now(), who->uid, env, "delete");
	event_add(&ev, "artifact", name);
	rc = begin(r, err);
	if (!rc) {
		rc = art_get(r, env, name, &e, &a, err);
		if (!rc)
			rc = catalog_ver_list(r->cat, a.id, collect_blob,
					      &blobs, err);
		if (!rc)
			rc = catalog_art_del(r->cat, a.id, err);
		if (!rc) {
			event_addf(&ev, "versions", "%lld",
				   (long long)a.nversions);
			record(r, &ev, env, 0, NULL);
		}
		rc = end(r, rc, err);
	}
	if (!rc)
		free_blobs(r, blobs.sha, blobs.n);
	else if (rc != -ENOENT)
		record(r, &ev, env, rc, err);
	free(blobs.sha);
	event_release(&ev);
	return rc;
}

/* Remove version `n` of `name`, as `action`, for `reason` (or NULL). */
static int ver_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, int64_t n,
		      const char *action, const char *reason,
		      struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct catalog_version v;
	struct event ev;
	int rc;

	room_to_free(r);
	event_init(&ev, repo_now(), who->uid, env, action);
	event_add(&ev, "artifact", name);
	event_addf(&ev, "version", "%lld", (long long)n);
	if (reason)
		event_add(&ev, "reason", reason);
	rc = begin(r, err);
	if (!rc) {
		rc = art_get(r, env, name, &e, &a, err);
		if (!rc)
			rc = catalog_ver_get(r->cat, a.id, n, &v, err);
		if (!rc)
			rc = a.nversions == 1
				     ? catalog_art_del(r->cat, a.id, err)
				     : catalog_ver_del(r->cat, a.id, n, err);
		if (!rc) {
			if (a.nversions == 1)
				event_add(&ev, "artifact-removed", "yes");
			record(r, &ev, env, 0, NULL);
		}
		rc = end(r, rc, err);
	}
	if (!rc)
		free_blobs(r, &v.sha256, 1);
	else if (rc != -ENOENT)
		record(r, &ev, env, rc, err);
	event_release(&ev);
	return rc;
}

int repo_ver_remove(struct repo *r, const struct repo_who *who,
		    const char *env, const char *name, int64_t n,
		    struct cmfs_err *err)
{
	return ver_remove(r, who, env, name, n, "delete-version", NULL, err);
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
static void recover(struct repo *r)
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

/* Check that every version of artifact `id` is a zip archive. */
static int all_zip(void *arg, const struct catalog_version *v)
{
	struct repo *r = arg;
	struct jar_report *rep = NULL;
	int rc = catalog_insp_of(r->cat, v, &rep, NULL);

	jar_report_free(rep);
	return rc ? -EINVAL : 0;
}

int repo_art_move(struct repo *r, const struct repo_who *who,
		  const char *env, const char *from, const char *to,
		  struct cmfs_err *err)
{
	static const char why[] = "an artifact cannot become a scratch "
				  "file: copy it";
	struct catalog_version v;
	int rc;

	if (name_artifact_scratch(from) && name_artifact_scratch(to)) {
		rc = store_scratch_rename(r->store, env, 'a', from, to);
		if (!rc)
			repo_scratch_label_move(r, env, from, to);
		return rc;
	}
	if (name_artifact_scratch(from))
		return repo_scratch_commit(r, who, env, from, to, &v, err);
	if (!name_artifact_scratch(to))
		return repo_art_rename(r, who, env, from, to, err);
	repo_refused(r, who, env, "rename", from, -EPERM, why);
	return cmfs_err_set(err, -EPERM, "%s", why);
}

int repo_art_rename(struct repo *r, const struct repo_who *who,
		    const char *env, const char *from, const char *to,
		    struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a, old;
	struct blob_list blobs = { NULL, 0 };
	struct event ev;
	int rc, replaced = 0;

	room_to_free(r);
	event_init(&ev, repo_now(), who->uid, env, "rename");
	event_add(&ev, "artifact", from);
	event_add(&ev, "to", to);
	rc = name_artifact_check(to, err);
	if (!rc)
		rc = begin(r, err);
	if (rc)
		goto out;
	rc = art_get(r, env, from, &e, &a, err);
	if (!rc && !strcmp(from, to)) {
		/* rename(2) onto itself does nothing. */
		rc = end(r, 0, err);
		event_release(&ev);
		return rc;
	}
	if (!rc && name_is_jar(to) &&
	    catalog_ver_list(r->cat, a.id, all_zip, r, NULL))
		rc = cmfs_err_set(err, -EINVAL,
				  "%s: not every version is a zip archive, so "
				  "it cannot be named %s", from, to);
	if (!rc && !catalog_art_get(r->cat, e.id, to, &old, NULL)) {
		rc = catalog_ver_list(r->cat, old.id, collect_blob, &blobs,
				      err);
		if (!rc)
			rc = catalog_art_del(r->cat, old.id, err);
		replaced = 1;
	}
	if (!rc)
		rc = catalog_art_rename(r->cat, a.id, to, err);
	if (!rc) {
		if (replaced)
			event_add(&ev, "replaced", "yes");
		record(r, &ev, env, 0, NULL);
	}
	rc = end(r, rc, err);
out:
	if (!rc)
		free_blobs(r, blobs.sha, blobs.n);
	else
		record(r, &ev, env, rc, err);
	free(blobs.sha);
	event_release(&ev);
	return rc;
}

/* ---- labels and what a JAR offers ---- */

static void label_free(struct label *l)
{
	while (l) {
		struct label *next = l->next;

		free(l->env);
		free(l->file);
		free(l->key);
		free(l->value);
		free(l);
		l = next;
	}
}

/*
 * Check that the factories of `rep` offer a factory of kind `type` (may be
 * NULL) with identifier `ident` (may be NULL; an unknown identifier
 * matches).  -EINVAL naming what the JAR does offer.
 */
static int check_offer(const char *art, const struct jar_report *rep,
		       const char *type, const char *ident,
		       struct cmfs_err *err)
{
	struct shortlist offers = SHORTLIST_INIT(800);
	size_t i;
	int rc;

	if (!type && !ident)
		return 0;
	for (i = 0; i < rep->nfactories; i++) {
		const struct jar_factory *f = &rep->factories[i];

		if (type && strcmp(jar_kind_name(f->kind), type))
			continue;
		if (ident && f->identifier && strcmp(f->identifier, ident))
			continue;
		return 0;
	}
	for (i = 0; i < rep->nfactories; i++)
		shortlist_add(&offers, "%s '%s'",
			      jar_kind_name(rep->factories[i].kind),
			      rep->factories[i].identifier
				      ? rep->factories[i].identifier
				      : "unknown");
	if (!rep->nfactories)
		rc = cmfs_err_set(err, -EINVAL,
				  "%s offers no factory (%s); no %s factory "
				  "'%s'", art,
				  rep->error ? rep->error : "none listed",
				  type ? type : "", ident ? ident : "");
	else
		rc = cmfs_err_set(err, -EINVAL,
				  "%s offers %s; no %s factory '%s'", art,
				  shortlist_str(&offers, ""),
				  type ? type : "any", ident ? ident : "");
	shortlist_release(&offers);
	return rc;
}

/* Syntax and value rules of one label. */
static int label_check(const struct config *cfg, const char *key,
		       const char *value, size_t len, struct cmfs_err *err)
{
	int rc = name_label_key_check(key, err);

	if (rc)
		return rc;
	if (len > cfg->limits.xattr_size)
		return cmfs_err_set(err, -EFBIG,
				    "label %s: value of %zu bytes is over the "
				    "limit of %llu", key, len,
				    (unsigned long long)cfg->limits.xattr_size);
	if ((rc = name_label_value_check(key, value, len, err)))
		return rc;
	if (!strcmp(key, NAME_LABEL_TYPE) && strcmp(value, "connector") &&
	    strcmp(value, "format"))
		return cmfs_err_set(err, -EINVAL,
				    "label %s takes connector or format, not "
				    "'%.64s'", key, value);
	return 0;
}

/* The value label `key` will have after `pending`: 1 if it is changed. */
static int label_pending(const struct label *pending, const char *key,
			 const char **out)
{
	const struct label *l;
	int found = 0;

	for (l = pending; l; l = l->next)
		if (!strcmp(l->key, key)) {
			*out = l->value;
			found = 1;
		}
	return found;
}

/* What the checks of a label change need of an artifact's labels now. */
struct labels_now {
	const struct label *pending;
	uint64_t kept;	    /* labels that `pending` leaves as they are */
	char *type, *ident; /* the sql-artifact labels' values, or NULL */
};

/* catalog_label_list callback: one label the artifact carries now. */
static int label_seen(void *arg, const char *key, const char *value)
{
	struct labels_now *s = arg;
	const char *v;
	char **slot = !strcmp(key, NAME_LABEL_TYPE)    ? &s->type
		      : !strcmp(key, NAME_LABEL_IDENT) ? &s->ident
						       : NULL;

	if (!label_pending(s->pending, key, &v))
		s->kept++;
	return slot && !(*slot = strdup(value)) ? -ENOMEM : 0;
}

/*
 * Check the labels that artifact `art_id` (0: new) will carry after
 * `pending`: no more of them than [limits] labels, and sql-artifact labels
 * that inspection `rep` (NULL: not a JAR, no check) bears out.  One pass
 * over the labels it carries now: a label's commit reads no more.
 */
static int check_labels(struct repo *r, const char *name, int64_t art_id,
			const struct label *pending,
			const struct jar_report *rep, struct cmfs_err *err)
{
	struct labels_now s = {.pending = pending};
	const struct label *l, *later;
	const char *t, *i;
	uint64_t n;
	int rc = 0;

	if (art_id) {
		rc = catalog_label_list(r->cat, art_id, label_seen, &s, err);
		if (rc == -ENOMEM)
			rc = cmfs_err_set(err, rc, "out of memory");
		if (rc)
			goto out;
	}
	/* Each key that `pending` names ends as its last change says. */
	for (n = s.kept, l = pending; l; l = l->next) {
		for (later = l->next; later; later = later->next)
			if (!strcmp(later->key, l->key))
				break;
		n += !later && l->value;
	}
	if (n > repo_config(r)->limits.labels) {
		rc = cmfs_err_set(
			err, -EDQUOT,
			"%s: %llu labels is over the limit of %llu", name,
			(unsigned long long)n,
			(unsigned long long)repo_config(r)->limits.labels);
		goto out;
	}
	t = s.type;
	i = s.ident;
	label_pending(pending, NAME_LABEL_TYPE, &t);
	label_pending(pending, NAME_LABEL_IDENT, &i);
	if (rep)
		rc = check_offer(name, rep, t, i, err);
out:
	free(s.type);
	free(s.ident);
	return rc;
}

/* Apply `pending` to artifact `art_id`; adds "labels=..." to the event. */
static int apply_labels(struct repo *r, int64_t art_id,
			const struct label *pending, struct event *ev,
			struct cmfs_err *err)
{
	const struct label *l;
	int rc = 0;

	for (l = pending; l && !rc; l = l->next) {
		if (l->value)
			rc = catalog_label_set(r->cat, art_id, l->key,
					       l->value, err);
		else if ((rc = catalog_label_del(r->cat, art_id, l->key,
						 err)) == -ENODATA)
			rc = 0;
		if (!rc)
			event_add(ev, l->value ? "label" : "unlabel",
				  l->key);
	}
	return rc;
}

/*
 * The inspection of blob `sha`, staged in `fd`: the catalog's, or made
 * now (*fresh).  Held at `mem` (size bytes, a small JAR): always made now,
 * which costs less than asking the catalog first (a read transaction of
 * its own); the commit puts it over a row there may be.
 */
static int inspect(struct repo *r, const char *name, const char *sha, int fd,
		   const void *mem, uint64_t size, struct jar_report **out,
		   int *fresh, struct cmfs_err *err)
{
	struct jar_limits lim;
	struct cmfs_err e2 = CMFS_ERR_INIT;
	uint64_t cost;
	int rc;

	*fresh = 0;
	if (!mem && !catalog_insp_get(r->cat, sha, out, NULL))
		return 0;
	jar_limits_default(&lim);
	cost = mem ? jar_cost_mem(mem, (size_t)size) : jar_cost_fd(fd);
	budget_take(&r->insp, cost);
	rc = mem ? jar_inspect_mem(out, mem, (size_t)size, &lim, &e2)
		 : jar_inspect_fd(out, fd, &lim, &e2);
	budget_give(&r->insp, cost);
	if (rc == -EINVAL)
		return cmfs_err_set(err, rc,
				    "%s is not a valid JAR (zip archive): %s",
				    name, cmfs_err_msg(&e2));
	if (rc)
		return cmfs_err_set(err, rc, "%s: %s", name,
				    cmfs_err_msg(&e2));
	*fresh = 1;
	return 0;
}

static int fits_inline(const struct repo *r, uint64_t size);

/*
 * Before blob `sha` is linked into the store: unless a version refers to
 * it already, list it as loose, so that a crash before its version
 * commits leaves a blob the next mount knows it may free.  Under gc_lock.
 */
static int loose_first(struct repo *r, const char *sha, struct cmfs_err *err)
{
	uint64_t refs;
	int rc = catalog_blob_refs(r->cat, sha, &refs, err);

	if (!rc && !refs)
		rc = catalog_loose_add(r->cat, sha, err);
	return rc;
}

/*
 * The commit of every upload: bytes [0, size) with SHA-256 `sha`, held
 * at `mem` (an inline blob, in this transaction) or in staging file `fd`
 * (a blob file, linked before it), become the next version of `name` in
 * `env`, with label changes `pending`.  *early (NULL or empty: none), an
 * inspection of those bytes made before, is taken instead of one made
 * here.  *out gets the latest version afterwards.
 */
static int commit_fd(struct repo *r, const struct repo_who *who,
		     const char *env, const char *name, int fd, const void *mem,
		     uint64_t size, const char *sha,
		     const struct label *pending, struct jar_report **early,
		     const char *action, struct catalog_version *out,
		     struct cmfs_err *err)
{
	const struct config *cfg = repo_config(r);
	struct jar_report *rep = NULL;
	struct catalog_env e;
	struct catalog_artifact a;
	struct catalog_version v;
	struct event ev;
	uint64_t n, total;
	int64_t art_id = 0;
	void *held = NULL;
	int rc, fresh = 0, same = 0, put_inline;

	event_init(&ev, repo_now(), who->uid, env, action);
	event_add(&ev, "artifact", name);
	/*
	 * A blob lives in one place.  Bytes small enough to be inline are,
	 * whether they were held in memory or, when the memory for uploads
	 * was taken (HELD_MAX: some 256 small uploads at once) or they came
	 * from a scratch file, written to a file: with both kinds at once
	 * the same bytes ended up both a file and a row.
	 */
	if (!mem && fd >= 0 && fits_inline(r, size)) {
		held = malloc(size ? (size_t)size : 1);
		if (held && store_pread_full(fd, held, (size_t)size, 0) ==
				    (ssize_t)size)
			mem = held;
	}
	rc = name_artifact_check(name, err);
	if (!rc && size > cfg->limits.artifact_size)
		rc = cmfs_err_set(err, -EFBIG,
				  "%s: %llu bytes is over the artifact size "
				  "limit of %llu", name,
				  (unsigned long long)size,
				  (unsigned long long)cfg->limits.artifact_size);
	if (!rc && name_is_jar(name) && early && *early) {
		rep = *early; /* of these very bytes */
		*early = NULL;
		fresh = 1;
	} else if (!rc && name_is_jar(name)) {
		rc = inspect(r, name, sha, fd, mem, size, &rep, &fresh, err);
	}
	if (rc)
		goto refused;

	store_reserve_take(r->store);
	pthread_mutex_lock(&r->gc_lock);
	if (!mem)
		rc = loose_first(r, sha, err);
	if (!rc && !mem)
		rc = store_blob_commit(r->store, fd, sha, size, !r->batch, err);
	if (!rc)
		rc = begin(r, err);
	if (rc) {
		pthread_mutex_unlock(&r->gc_lock);
		goto refused;
	}
	rc = env_get(r, env, &e, err);
	if (!rc) {
		rc = catalog_art_get(r->cat, e.id, name, &a, err);
		if (rc == -ENOENT) {
			rc = catalog_art_count(r->cat, e.id, &n, err);
			if (!rc && n >= cfg->limits.artifacts_per_env)
				rc = cmfs_err_set(
					err, -EDQUOT,
					"%s: environment %s holds %llu "
					"artifacts, the limit", name, env,
					(unsigned long long)n);
		} else if (!rc) {
			art_id = a.id;
			same = !strcmp(a.latest.sha256, sha);
		}
	}
	if (!rc && !same && cfg->limits.store_size &&
	    !catalog_blob_refs(r->cat, sha, &n, err) && !n &&
	    !(rc = catalog_blob_total(r->cat, &total, err)) &&
	    total + size > cfg->limits.store_size)
		rc = cmfs_err_set(err, -EDQUOT,
				  "%s: the store holds %llu bytes; %llu more "
				  "is over its limit of %llu",
				  name, (unsigned long long)total,
				  (unsigned long long)size,
				  (unsigned long long)cfg->limits.store_size);
	if (!rc)
		rc = check_labels(r, name, art_id, pending, rep, err);
	if (!rc && !art_id)
		rc = catalog_art_add(r->cat, e.id, name, &art_id, err);
	/* The inspection first: the version names its row as it goes in
	 * (after, the row would be written twice). */
	if (!rc && fresh)
		rc = catalog_insp_put(r->cat, sha, rep, err);
	/* ... and bytes already a file (stored before inline blobs, or
	 * with another inline_max) stay that file. */
	put_inline = !rc && !same && mem &&
		     (catalog_keeps_blobs(r->cat) ||
		      !store_blob_exists(r->store, sha));
	if (put_inline)
		rc = catalog_inline_put(r->cat, sha, mem, (size_t)size, err);
	/* A catalog that keeps blobs has the bytes before the version. */
	if (!rc && !same && !mem && catalog_keeps_blobs(r->cat))
		rc = catalog_blob_put(r->cat, sha, fd, size, err);
	if (!rc && same)
		v = a.latest;
	else if (!rc)
		rc = catalog_ver_add(r->cat, art_id, sha, size, repo_now(),
				     who->uid, &v, err);
	if (!rc && !same && !mem && r->batch)
		rc = catalog_unsynced_add(r->cat, sha, err);
	if (!rc)
		rc = apply_labels(r, art_id, pending, &ev, err);
	if (!rc) {
		event_addf(&ev, "version", "%lld", (long long)v.n);
		event_addf(&ev, "size", "%llu", (unsigned long long)size);
		event_add(&ev, "sha256", sha);
		if (same)
			event_add(&ev, "unchanged", "yes");
		if (rep && rep->error)
			event_add(&ev, "inspection", rep->error);
		record(r, &ev, env, 0, NULL);
	}
	rc = end(r, rc, err);
	if (rc && !mem) {
		/* The blob may be one nothing refers to now. */
		uint64_t refs;

		if (!catalog_blob_refs(r->cat, sha, &refs, NULL) && !refs)
			store_blob_unlink(r->store, sha);
	}
	pthread_mutex_unlock(&r->gc_lock);
	if (!rc && !mem && catalog_keeps_blobs(r->cat))
		store_blob_trim(r->store, NULL); /* a new copy here */
	if (!rc && out)
		*out = v;
refused:
	if (rc)
		record(r, &ev, rc == -ENOENT ? NULL : env, rc, err);
	jar_report_free(rep);
	event_release(&ev);
	free(held);
	return rc;
}

/* ---- uploads ---- */

int repo_upload_begin(struct repo_upload **out, struct repo *r,
		      const char *env, const char *name, int truncate,
		      struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct repo_upload *u;
	int rc;

	*out = NULL;
	u = calloc(1, sizeof(*u));
	if (!u || store_hash_new(&u->hash)) {
		free(u);
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	}
	u->r = r;
	u->fd = -1;
	snprintf(u->env, sizeof(u->env), "%s", env);
	snprintf(u->name, sizeof(u->name), "%s", name);
	rc = env_get(r, env, &e, err);
	if (!rc && !truncate &&
	    !catalog_art_get(r->cat, e.id, name, &a, NULL)) {
		memcpy(u->base, a.latest.sha256, STORE_SHA_HEX);
		u->size = a.latest.size;
		u->hash_broken = 1; /* the copied bytes are not hashed */
	}
	if (rc) {
		repo_upload_free(u);
		return rc;
	}
	if (truncate)
		u->dirty = 1; /* O_TRUNC alone makes an empty version */
	*out = u;
	return 0;
}

/* A blob of `size` bytes is to be inline ([store] inline_max; 0: none). */
static int fits_inline(const struct repo *r, uint64_t size)
{
	uint64_t max = repo_config(r)->inline_max;

	return max && size <= max;
}

/* Give back the memory an upload held its bytes in. */
static void let_go(struct repo_upload *u)
{
	if (!u->mem)
		return;
	__atomic_sub_fetch(&u->r->held, u->cap, __ATOMIC_RELAXED);
	free(u->mem);
	u->mem = NULL;
	u->cap = 0;
}

/*
 * Room in memory for the upload's first `need` bytes, the new ones zero:
 * 0, or -ENOSPC when they are not to be held in memory (over [store]
 * inline_max, or over HELD_MAX with what other uploads hold).
 */
static int hold(struct repo_upload *u, uint64_t need)
{
	uint64_t max = repo_config(u->r)->inline_max;
	size_t cap;
	unsigned char *p;

	if (need <= u->cap && u->mem)
		return 0;
	if (!fits_inline(u->r, need))
		return -ENOSPC;
	/* Whole pages, doubling, never past inline_max. */
	cap = u->cap ? 2 * u->cap : 4096;
	while (cap < need)
		cap *= 2;
	if (cap > max)
		cap = (size_t)max;
	if (__atomic_add_fetch(&u->r->held, cap - u->cap, __ATOMIC_RELAXED) >
	    HELD_MAX) {
		__atomic_sub_fetch(&u->r->held, cap - u->cap, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	p = realloc(u->mem, cap ? cap : 1);
	if (!p) {
		__atomic_sub_fetch(&u->r->held, cap - u->cap, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	memset(p + u->cap, 0, cap - u->cap);
	u->mem = p;
	u->cap = cap;
	return 0;
}

/* Give the upload a staging file holding its bytes (from base or mem). */
static int stage(struct repo_upload *u)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	ssize_t n;
	int src, rc;

	if (u->fd >= 0)
		return 0;
	rc = store_stage(u->r->store, &u->fd, &err);
	if (!rc && u->base[0]) {
		rc = blob_open(u->r->store, u->r->cat, u->base, u->size, &src,
			       &err);
		/* The version it copies has lost its bytes: damage. */
		if (rc == -ENOENT)
			rc = -EIO;
		if (!rc) {
			rc = store_copy_fd(src, u->fd, u->size, &err);
			close(src);
		}
	} else if (!rc && u->size &&
		   (n = pwrite(u->fd, u->mem, u->size, 0)) !=
			   (ssize_t)u->size) {
		rc = n < 0 ? -errno : -EIO;
		cmfs_err_set(&err, rc, "staging file: %s", strerror(-rc));
	}
	if (rc) {
		repo_log(u->r, LOG_ERR, "upload of %s: %s", u->name,
			 cmfs_err_msg(&err));
		if (u->fd >= 0)
			close(u->fd);
		u->fd = -1;
		return rc;
	}
	u->base[0] = '\0';
	let_go(u);
	staged(u->r);
	return 0;
}

/*
 * Make the upload's bytes ready to be read or changed up to offset `end`:
 * in memory while they fit (a version it started from read in), else in
 * the staging file.
 */
static int ready(struct repo_upload *u, uint64_t end)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	uint64_t need = end > u->size ? end : u->size;
	int rc;

	if (u->fd >= 0)
		return 0;
	if (hold(u, need))
		return stage(u);
	if (u->base[0]) {
		rc = blob_read(u->r->store, u->r->cat, u->base, u->size, u->mem,
			       &err);
		if (rc) {
			repo_log(u->r, LOG_ERR, "upload of %s: %s", u->name,
				 cmfs_err_msg(&err));
			return rc == -ENOENT ? -EIO : rc;
		}
		u->base[0] = '\0';
	}
	return 0;
}

/* The bytes change: an inspection made of them before is of no use. */
static void drop_early(struct repo_upload *u)
{
	jar_report_free(u->early);
	u->early = NULL;
}

/*
 * 1 when `len` bytes at `p` end as a zip archive does: an end of central
 * directory record whose comment runs exactly to the end, and that the
 * last write, bytes [from, to), wrote part of (a file written a few bytes
 * at a time is searched a few bytes at a time).  Only a hint: the
 * inspection judges.
 */
static int ends_like_zip(const unsigned char *p, uint64_t len, uint64_t from,
			 uint64_t to)
{
	uint64_t i, lo = len > 22 + 0xffff ? len - 22 - 0xffff : 0;
	uint64_t hi = len - 22; /* the last place a record can start */

	if (len < 22 || !to)
		return 0;
	if (from > 21 && from - 21 > lo)
		lo = from - 21;
	if (to - 1 < hi)
		hi = to - 1;
	for (i = hi + 1; i-- > lo;)
		if (p[i] == 'P' && p[i + 1] == 'K' && p[i + 2] == 5 &&
		    p[i + 3] == 6 &&
		    (uint64_t)(p[i + 20] | p[i + 21] << 8) == len - i - 22)
			return 1;
	return 0;
}

/*
 * A small upload is one write (cp), and its close comes some 20 us after
 * that write's reply: the client wakes, reads the end of its input, and
 * closes.  Inspecting the bytes in that time, instead of at the commit,
 * takes the inspection (~16 us of a small JAR) out of the close's wait:
 * the request loop reads the close as soon as this is done.
 */
int repo_upload_inspect_early(struct repo_upload *u)
{
	struct jar_limits lim;
	struct jar_report *rep = NULL;
	struct cmfs_err e2 = CMFS_ERR_INIT;
	uint64_t cost;

	if (u->early || !u->mem || u->fd >= 0 || u->failed || !u->dirty ||
	    !name_is_jar(u->name) ||
	    !ends_like_zip(u->mem, u->size, u->wrote_from, u->wrote_to))
		return u->early != NULL;
	/* Early only when the inspections' memory allows it now. */
	cost = jar_cost_mem(u->mem, (size_t)u->size);
	if (!budget_try(&u->r->insp, cost))
		return 0;
	jar_limits_default(&lim);
	if (!jar_inspect_mem(&rep, u->mem, (size_t)u->size, &lim, &e2))
		u->early = rep;
	else
		jar_report_free(rep); /* the commit tries again, says why */
	budget_give(&u->r->insp, cost);
	cmfs_err_clear(&e2);
	return u->early != NULL;
}

ssize_t repo_upload_write(struct repo_upload *u, const void *data,
			  size_t size, off_t off)
{
	uint64_t end = (uint64_t)off + size;
	ssize_t n;
	int rc;

	if (off < 0)
		return -EINVAL;
	drop_early(u);
	if (end > repo_config(u->r)->limits.artifact_size)
		return u->failed = -EFBIG;
	if ((rc = ready(u, end)))
		return u->failed = rc;
	if (u->fd < 0) {
		memcpy(u->mem + off, data, size);
		n = (ssize_t)size;
	} else if ((n = pwrite(u->fd, data, size, off)) < 0) {
		return u->failed = -errno;
	}
	if ((uint64_t)off == u->hashed && !u->hash_broken) {
		u->hashed += (uint64_t)n;
		if (u->pipe) {
			store_pipe_feed(u->pipe, u->hashed);
		} else {
			store_hash_update(u->hash, data, (size_t)n);
			/*
			 * A big upload: hash aside.  With sync = close its
			 * writeback starts there too (the commit's fsync
			 * waits for it); with batch, the sync after the
			 * commit writes it: started during the upload, it
			 * took the CPU cp and the hash wanted (256 MiB:
			 * 0.25-0.38 s against 0.22 s without).
			 */
			if (u->hashed >= PIPE_FROM && u->fd >= 0 &&
			    !store_pipe_new(&u->pipe, u->fd, u->hash, u->hashed,
					    !u->r->batch))
				u->hash = NULL;
		}
	} else if ((uint64_t)off < u->hashed || (uint64_t)off > u->hashed) {
		u->hash_broken = 1;
	}
	if ((uint64_t)off + (uint64_t)n > u->size)
		u->size = (uint64_t)off + (uint64_t)n;
	u->wrote_from = (uint64_t)off;
	u->wrote_to = (uint64_t)off + (uint64_t)n;
	u->dirty = 1;
	return n;
}

ssize_t repo_upload_read(struct repo_upload *u, void *data, size_t size,
			 off_t off)
{
	ssize_t n;
	int rc;

	if ((rc = ready(u, 0)))
		return rc;
	if ((uint64_t)off >= u->size)
		return 0;
	if (size > u->size - (uint64_t)off)
		size = (size_t)(u->size - (uint64_t)off);
	if (u->fd < 0) {
		memcpy(data, u->mem + off, size);
		return (ssize_t)size;
	}
	n = pread(u->fd, data, size, off);
	return n < 0 ? -errno : n;
}

int repo_upload_truncate(struct repo_upload *u, off_t size)
{
	int rc;

	if (size < 0)
		return -EINVAL;
	if ((uint64_t)size > repo_config(u->r)->limits.artifact_size)
		return -EFBIG;
	if ((uint64_t)size == u->size && (u->fd >= 0 || u->mem))
		return 0;
	drop_early(u);
	if ((rc = ready(u, (uint64_t)size)))
		return rc;
	if (u->fd < 0 && (uint64_t)size < u->size)
		/* What a later extension shows must be zeros again. */
		memset(u->mem + size, 0, (size_t)(u->size - (uint64_t)size));
	else if (u->fd >= 0 && ftruncate(u->fd, size))
		return -errno;
	if ((uint64_t)size < u->hashed || (uint64_t)size > u->size)
		u->hash_broken = 1;
	u->size = (uint64_t)size;
	u->dirty = 1;
	return 0;
}

uint64_t repo_upload_size(const struct repo_upload *u)
{
	return u->size;
}

int repo_upload_doomed(const struct repo_upload *u)
{
	return u->dirty && !u->size && name_is_jar(u->name) ? -EINVAL : 0;
}

int repo_upload_dirty(const struct repo_upload *u)
{
	return u->dirty;
}

/* Append a label change to a list (value NULL = remove). */
static int label_push(struct label **list, const char *key,
		      const char *value)
{
	struct label *l = calloc(1, sizeof(*l)), **tail;

	if (!l)
		return -ENOMEM;
	l->key = strdup(key);
	l->value = value ? strdup(value) : NULL;
	if (!l->key || (value && !l->value)) {
		label_free(l);
		return -ENOMEM;
	}
	for (tail = list; *tail; tail = &(*tail)->next)
		;
	*tail = l;
	return 0;
}

int repo_upload_label(struct repo_upload *u, const char *key,
		      const char *value, struct cmfs_err *err)
{
	int rc = 0;

	if (value)
		rc = label_check(repo_config(u->r), key, value, strlen(value),
				 err);
	if (!rc && label_push(&u->pending, key, value))
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
	if (!rc)
		u->dirty = 1;
	return rc;
}

int repo_upload_label_get(const struct repo_upload *u, const char *key,
			  const char **out)
{
	return label_pending(u->pending, key, out);
}

/* Look up artifact `name` of `env` outside a transaction. */
static int art_find(struct repo *r, const char *env, const char *name,
		    struct catalog_artifact *a)
{
	struct catalog_env e;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	return rc ? rc : catalog_art_get(r->cat, e.id, name, a, NULL);
}

/*
 * A large JAR's close: the thread hashing it aside (the pipe) is still
 * some tens of milliseconds behind the last write, while the inspection
 * (100 ms and more of a shaded JAR) waited for the hash only to look its
 * result up by SHA-256.  Inspect the staged bytes now, while the hash
 * ends, unless the artifact's latest version has this very size: then
 * they are likely the same bytes (cp of the same JAR again), and the
 * look-up after the hash spares the inspection.  The report, or NULL
 * (the commit inspects again and says why).
 */
static struct jar_report *inspect_while_hashing(struct repo_upload *u)
{
	struct jar_limits lim;
	struct jar_report *rep = NULL;
	struct catalog_artifact a;
	struct cmfs_err e2 = CMFS_ERR_INIT;
	uint64_t cost;

	if (!u->pipe || u->fd < 0 || !name_is_jar(u->name))
		return NULL;
	if (!art_find(u->r, u->env, u->name, &a) && a.latest.size == u->size)
		return NULL;
	cost = jar_cost_fd(u->fd);
	if (!budget_try(&u->r->insp, cost))
		return NULL; /* the commit inspects, when memory allows */
	jar_limits_default(&lim);
	if (jar_inspect_fd(&rep, u->fd, &lim, &e2)) {
		jar_report_free(rep);
		rep = NULL;
	}
	budget_give(&u->r->insp, cost);
	cmfs_err_clear(&e2);
	return rep;
}

/* The refusal of upload `u` before its commit, written to events. */
static void upload_refused(struct repo_upload *u, const struct repo_who *who,
			   int rc, const struct cmfs_err *err)
{
	struct event ev;

	event_init(&ev, repo_now(), who->uid, u->env, "upload");
	event_add(&ev, "artifact", u->name);
	record(u->r, &ev, u->env, rc, err);
	event_release(&ev);
}

int repo_upload_commit(struct repo_upload *u, const struct repo_who *who,
		       struct catalog_version *out, struct cmfs_err *err)
{
	char sha[STORE_SHA_HEX];
	struct jar_report *ahead = NULL;
	int rc;

	if (!u->dirty) {
		/* Nothing new: *out is the latest as it stands. */
		struct catalog_artifact a;

		if (out && !art_find(u->r, u->env, u->name, &a))
			*out = a.latest;
		return 0;
	}
	if (u->failed) {
		/* Bytes are missing: committing the rest would make a
		 * version nobody wrote. */
		rc = cmfs_err_set(err, u->failed,
				  "%s: a write failed (%s), so nothing was "
				  "committed", u->name, strerror(-u->failed));
		upload_refused(u, who, rc, err);
		return rc;
	}
	if ((rc = ready(u, 0))) {
		rc = cmfs_err_set(err, rc, "%s: staging failed: %s",
				  u->name, strerror(-rc));
		upload_refused(u, who, rc, err);
		return rc;
	}
	if (!u->hash_broken && u->hashed == u->size && u->pipe) {
		ahead = inspect_while_hashing(u);
		rc = store_pipe_final(u->pipe, u->size, sha);
	} else if (!u->hash_broken && u->hashed == u->size) {
		store_hash_final(u->hash, sha);
	} else if (u->fd < 0) {
		store_hash_mem(sha, u->mem, (size_t)u->size);
	} else {
		rc = -EAGAIN;
	}
	store_pipe_free(u->pipe);
	u->pipe = NULL;
	if (rc && (rc = store_hash_fd(sha, u->fd, u->size, err))) {
		jar_report_free(ahead);
		return rc;
	}
	rc = commit_fd(u->r, who, u->env, u->name, u->fd,
		       u->fd < 0 ? u->mem : NULL, u->size, sha, u->pending,
		       u->fd < 0 ? &u->early : &ahead, "upload", out, err);
	jar_report_free(ahead);
	if (rc) {
		/* The hash was consumed: recompute at the next commit. */
		u->hash_broken = 1;
		return rc;
	}
	/* The staging file may now be the blob: never write it again.  A
	 * later write starts from the version just made. */
	if (u->fd >= 0)
		unstage(u);
	let_go(u);
	memcpy(u->base, sha, STORE_SHA_HEX);
	u->hash_broken = 1;
	u->dirty = 0;
	label_free(u->pending);
	u->pending = NULL;
	return 0;
}

void repo_upload_free(struct repo_upload *u)
{
	if (!u)
		return;
	drop_early(u);
	store_pipe_free(u->pipe);
	if (u->fd >= 0)
		unstage(u);
	let_go(u);
	store_hash_free(u->hash);
	label_free(u->pending);
	free(u);
}

/* ---- scratch files ---- */

/* The scratch labels of (env, file), in order, as a pending list. */
static int scratch_pending(struct repo *r, const char *env, const char *file,
			   struct label **out)
{
	struct label *l;
	int rc = 0;

	*out = NULL;
	pthread_mutex_lock(&r->scratch_lock);
	for (l = r->scratch; l && !rc; l = l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, file))
			rc = label_push(out, l->key, l->value);
	pthread_mutex_unlock(&r->scratch_lock);
	return rc;
}

int repo_scratch_commit(struct repo *r, const struct repo_who *who,
			const char *env, const char *scratch,
			const char *name, struct catalog_version *out,
			struct cmfs_err *err)
{
	struct label *pending = NULL;
	char sha[STORE_SHA_HEX];
	struct stat st;
	unsigned char *mem = NULL;
	int src = -1, fd = -1, rc;

	/* Out of artifacts/ until it is settled: a crash in between leaves
	 * it where repo_open() finds it (settle_staged_art()). */
	rc = store_scratch_stage(r->store, env, 'a', scratch, name);
	if (rc)
		return cmfs_err_set(err, rc, "%s: %s", scratch, strerror(-rc));
	rc = store_scratch_staged_open(r->store, env, 'a', name, scratch,
				       O_RDONLY, &src);
	if (rc) {
		rc = cmfs_err_set(err, rc, "%s: %s", scratch, strerror(-rc));
		goto out;
	}
	if (fstat(src, &st)) {
		rc = cmfs_err_set(err, -errno, "%s: %s", scratch,
				  strerror(errno));
		goto out;
	}
	/* Copy (into memory, for an inline blob), so that a writer still
	 * holding the scratch file open can never change the blob. */
	if (fits_inline(r, (uint64_t)st.st_size)) {
		size_t len = (size_t)st.st_size;
		ssize_t n;

		if (!(mem = malloc(len ? len : 1))) {
			rc = cmfs_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		/* Short only if it shrank since its size was taken. */
		if ((n = store_pread_full(src, mem, len, 0)) < 0) {
			rc = cmfs_err_set(err, (int)n, "%s: %s", scratch,
					  strerror((int)-n));
			goto out;
		}
		st.st_size = (off_t)n;
		store_hash_mem(sha, mem, (size_t)n);
	} else if ((rc = store_stage(r->store, &fd, err)) ||
		   (rc = store_copy_fd(src, fd, (uint64_t)st.st_size, err)) ||
		   (rc = store_hash_fd(sha, fd, (uint64_t)st.st_size, err))) {
		goto out;
	}
	if ((rc = scratch_pending(r, env, scratch, &pending)))
		goto out;
	rc = commit_fd(r, who, env, name, fd, mem, (uint64_t)st.st_size, sha,
		       pending, NULL, "upload", out, err);
	if (!rc)
		repo_scratch_label_move(r, env, scratch, NULL);
out:
	/* Committed: the scratch file goes; else it is back as it was. */
	store_scratch_unstage(r->store, env, 'a', name, scratch, rc != 0);
	label_free(pending);
	free(mem);
	if (fd >= 0)
		close(fd);
	if (src >= 0)
		close(src);
	return rc;
}

int repo_scratch_open(struct repo *r, const char *env, char dir,
		      const char *name, int flags, mode_t mode, int *out)
{
	return store_scratch_open(r->store, env, dir, name, flags, mode, out);
}

int repo_scratch_stat(struct repo *r, const char *env, char dir,
		      const char *name, struct stat *st)
{
	return store_scratch_stat(r->store, env, dir, name, st);
}

int repo_scratch_truncate(struct repo *r, const char *env, char dir,
			  const char *name, off_t size)
{
	return store_scratch_truncate(r->store, env, dir, name, size);
}

int repo_scratch_list(struct repo *r, const char *env, char dir,
		      int (*fn)(void *arg, const char *name), void *arg)
{
	return store_scratch_list(r->store, env, dir, fn, arg);
}

int repo_scratch_remove(struct repo *r, const char *env, char dir,
			const char *name)
{
	int rc = store_scratch_unlink(r->store, env, dir, name);

	if (!rc && dir == 'a')
		repo_scratch_label_move(r, env, name, NULL);
	return rc;
}

int repo_statfs(struct repo *r, struct statvfs *out)
{
	return statvfs(store_path(r->store), out) ? -errno : 0;
}

int repo_scratch_label_set(struct repo *r, const char *env,
			   const char *scratch, const char *key,
			   const char *value, struct cmfs_err *err)
{
	struct label *l;
	int rc = label_check(repo_config(r), key, value, strlen(value), err);

	if (rc)
		return rc;
	pthread_mutex_lock(&r->scratch_lock);
	for (l = r->scratch; l; l = l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, scratch) &&
		    !strcmp(l->key, key))
			break;
	if (l) {
		char *v = strdup(value);

		if (v) {
			free(l->value);
			l->value = v;
		} else {
			rc = -ENOMEM;
		}
	} else if (!(l = calloc(1, sizeof(*l))) ||
		   !(l->env = strdup(env)) || !(l->file = strdup(scratch)) ||
		   !(l->key = strdup(key)) || !(l->value = strdup(value))) {
		label_free(l);
		rc = -ENOMEM;
	} else {
		l->next = r->scratch;
		r->scratch = l;
	}
	pthread_mutex_unlock(&r->scratch_lock);
	return rc ? cmfs_err_set(err, rc, "out of memory") : 0;
}

int repo_scratch_label_del(struct repo *r, const char *env,
			   const char *scratch, const char *key)
{
	struct label **p, *l;
	int rc = -ENODATA;

	pthread_mutex_lock(&r->scratch_lock);
	for (p = &r->scratch; (l = *p); p = &l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, scratch) &&
		    !strcmp(l->key, key)) {
			*p = l->next;
			l->next = NULL;
			label_free(l);
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&r->scratch_lock);
	return rc;
}

int repo_scratch_label_get(struct repo *r, const char *env,
			   const char *scratch, const char *key,
			   struct buf *out)
{
	struct label *l;
	int rc = -ENODATA;

	pthread_mutex_lock(&r->scratch_lock);
	for (l = r->scratch; l; l = l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, scratch) &&
		    !strcmp(l->key, key)) {
			rc = buf_adds(out, l->value);
			break;
		}
	pthread_mutex_unlock(&r->scratch_lock);
	return rc;
}

int repo_scratch_label_list(struct repo *r, const char *env,
			    const char *scratch, struct buf *out)
{
	struct label *l;
	int rc = 0;

	pthread_mutex_lock(&r->scratch_lock);
	for (l = r->scratch; l && !rc; l = l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, scratch))
			rc = buf_printf(out, "user.%s%c", l->key, '\0');
	pthread_mutex_unlock(&r->scratch_lock);
	return rc;
}

void repo_scratch_label_move(struct repo *r, const char *env,
			     const char *from, const char *to)
{
	struct label **p, *l;

	pthread_mutex_lock(&r->scratch_lock);
	for (p = &r->scratch; (l = *p);) {
		if (strcmp(l->env, env) || (from && strcmp(l->file, from))) {
			p = &l->next;
			continue;
		}
		if (to) {
			char *f = strdup(to);

			if (f) {
				free(l->file);
				l->file = f;
			}
			p = &l->next;
			continue;
		}
		*p = l->next;
		l->next = NULL;
		label_free(l);
	}
	pthread_mutex_unlock(&r->scratch_lock);
}

/* ---- labels of artifacts ---- */

int repo_label_set(struct repo *r, const struct repo_who *who,
		   const char *env, const char *name, const char *key,
		   const char *value, size_t len, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct jar_report *rep = NULL;
	struct label *pending = NULL;
	struct event ev;
	char *v = strndup(value, len);
	int rc;

	store_reserve_take(r->store);
	event_init(&ev, repo_now(), who->uid, env, "label");
	event_add(&ev, "artifact", name);
	event_add(&ev, "key", key);
	event_add(&ev, "value", v ? v : "");
	if (!v) {
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = strlen(v) != len ? cmfs_err_set(err, -EINVAL,
					     "label %s: value holds a "
					     "NUL byte",
					     key)
			      : label_check(repo_config(r), key, v, len, err);
	if (!rc)
		rc = label_push(&pending, key, v);
	if (!rc)
		rc = begin(r, err);
	if (rc)
		goto out;
	rc = art_get(r, env, name, &e, &a, err);
	if (!rc && name_is_jar(name) &&
	    catalog_insp_of(r->cat, &a.latest, &rep, err))
		rc = cmfs_err_set(err, -EIO, "%s: no inspection recorded",
				  name);
	if (!rc)
		rc = check_labels(r, name, a.id, pending, rep, err);
	if (!rc)
		rc = catalog_label_set(r->cat, a.id, key, v, err);
	if (!rc)
		record(r, &ev, env, 0, NULL);
	rc = end(r, rc, err);
out:
	if (rc && rc != -ENOENT)
		record(r, &ev, env, rc, err);
	jar_report_free(rep);
	label_free(pending);
	free(v);
	event_release(&ev);
	return rc;
}

int repo_label_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, const char *key,
		      struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct event ev;
	int rc;

	room_to_free(r);
	event_init(&ev, repo_now(), who->uid, env, "unlabel");
	event_add(&ev, "artifact", name);
	event_add(&ev, "key", key);
	rc = begin(r, err);
	if (rc)
		goto out;
	rc = art_get(r, env, name, &e, &a, err);
	if (!rc)
		rc = catalog_label_del(r->cat, a.id, key, err);
	if (!rc)
		record(r, &ev, env, 0, NULL);
	rc = end(r, rc, err);
out:
	if (rc && rc != -ENOENT && rc != -ENODATA)
		record(r, &ev, env, rc, err);
	event_release(&ev);
	return rc;
}

int repo_label_get(struct repo *r, const char *env, const char *name,
		   const char *key, struct buf *out)
{
	struct catalog_artifact a;
	char *v = NULL;
	int rc = art_find(r, env, name, &a);

	if (!rc)
		rc = catalog_label_get(r->cat, a.id, key, &v, NULL);
	if (!rc)
		rc = buf_adds(out, v);
	free(v);
	return rc;
}

/* catalog_label_list callback: "user.<key>\0" into a buf. */
static int list_label(void *arg, const char *key, const char *value)
{
	(void)value;
	return buf_printf(arg, "user.%s%c", key, '\0');
}

int repo_label_list(struct repo *r, const char *env, const char *name,
		    struct buf *out)
{
	struct catalog_artifact a;
	int rc = art_find(r, env, name, &a);

	return rc ? rc : catalog_label_list(r->cat, a.id, list_label, out, NULL);
}

int repo_computed(struct repo *r, const char *env, const char *name,
		  int64_t n, const char *attr, struct buf *out,
		  struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct catalog_version v;
	int rc;

	rc = env_get(r, env, &e, err);
	if (!rc)
		rc = catalog_art_get(r->cat, e.id, name, &a, err);
	if (rc)
		return rc;
	v = a.latest;
	if (n && (rc = catalog_ver_get(r->cat, a.id, n, &v, err)))
		return rc;
	return repo_computed_ver(r, env, name, &v, attr, out, err);
}

int repo_computed_ver(struct repo *r, const char *env, const char *name,
		      const struct catalog_version *v, const char *attr,
		      struct buf *out, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct jar_report *rep = NULL;
	size_t i;
	int rc;

	if (!strcmp(attr, "version"))
		return buf_printf(out, "%lld", (long long)v->n);
	if (!strcmp(attr, "sha256"))
		return buf_adds(out, v->sha256);
	if (!strcmp(attr, "used-by")) {
		/* Tables resolve to the latest version only. */
		if (env_get(r, env, &e, NULL) ||
		    catalog_art_get(r->cat, e.id, name, &a, NULL) ||
		    a.latest.n != v->n || strcmp(a.latest.sha256, v->sha256))
			return 0;
		return repo_used_by(r, env, name, out);
	}
	if (strcmp(attr, "factories") && strcmp(attr, "error") &&
	    strcmp(attr, "options"))
		return -ENODATA;
	if (!name_is_jar(name))
		return strcmp(attr, "error")
			       ? 0
			       : buf_printf(out, "%s is not a JAR: resolution "
						 "refuses it", name);
	if (catalog_insp_of(r->cat, v, &rep, err))
		return 0;
	if (!strcmp(attr, "error")) {
		rc = rep->error ? buf_adds(out, rep->error) : 0;
	} else if (!strcmp(attr, "options")) {
		/* One line per option, factory by factory (options.h). */
		for (i = 0, rc = 0; !rc && i < rep->nfactories; i++)
			rc = options_format(out,
					    rep->factories[i].identifier
						    ? rep->factories[i].identifier
						    : "unknown",
					    &rep->factories[i].options);
	} else {
		for (i = 0, rc = 0; !rc && i < rep->nfactories; i++)
			rc = buf_printf(out, "%s %s %s\n",
					jar_kind_name(rep->factories[i].kind),
					rep->factories[i].identifier
						? rep->factories[i].identifier
						: "unknown",
					rep->factories[i].cls);
	}
	jar_report_free(rep);
	return rc;
}

/* Counts of the gate whose window closed: a reader sees them at once. */
static void gate_tick(struct repo *r)
{
	int64_t now = repo_now(), due = events_gate_due(r->gate);

	if (due && due <= now)
		events_gate_tick(r->gate, now, 0, gate_emit, r);
}

int repo_events_size(struct repo *r, const char *env, uint64_t *out)
{
	gate_tick(r);
	repo_flush_events(r);
	return catalog_event_size(r->cat, env, out, NULL);
}

int repo_events_read(struct repo *r, const char *env, uint64_t off,
		     size_t size, struct buf *out)
{
	repo_flush_events(r);
	return catalog_event_read(r->cat, env, off, size, out, NULL);
}

/* ---- tables ---- */

/*
 * The whole tree of stored table `t` of `env_id`: its text merged with its
 * LIKE source as stored at write time.  *out freed with ddl_table_free().
 */
static int table_tree(struct repo *r, const struct catalog_table *t,
		      struct ddl_table **out, struct cmfs_err *err)
{
	struct catalog_table_def d;
	struct ddl_table *tree = NULL, *src = NULL;
	int rc = catalog_table_def(r->cat, t->id, &d, err);

	if (rc)
		return rc;
	rc = ddl_parse(&tree, d.ddl, strlen(d.ddl), err);
	if (!rc && d.like_ddl)
		rc = ddl_parse(&src, d.like_ddl, strlen(d.like_ddl), err);
	if (!rc && src)
		rc = ddl_merge_like(tree, src, err);
	ddl_table_free(src);
	catalog_table_def_release(&d);
	if (rc) {
		ddl_table_free(tree);
		return rc;
	}
	*out = tree;
	return 0;
}

/*
 * Fill `d` with the options of `t`: the merged WITH clause, each key once
 * with the value Flink takes, the last one written (the text keeps them
 * all).  Resolution and export read these.
 */
static int def_options(struct catalog_table_def *d, const struct ddl_table *t)
{
	size_t i, n = ddl_option_count(t);

	d->keys = calloc(n ? n : 1, sizeof(char *));
	d->values = calloc(n ? n : 1, sizeof(char *));
	if (!d->keys || !d->values)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *k, *v;

		ddl_option(t, i, &k, &v);
		if (ddl_option_get(t, k) != v)
			continue; /* written again further on */
		d->keys[d->nopts] = strdup(k);
		d->values[d->nopts] = strdup(v);
		d->nopts++;
		if (!d->keys[d->nopts - 1] || !d->values[d->nopts - 1])
			return -ENOMEM;
	}
	return 0;
}

/*
 * Write table `name` of `env` from `text`; with `from`, a rename: table
 * `from` is dropped in the same transaction, and the line says rename.
 */
static int table_put(struct repo *r, const struct repo_who *who,
		     const char *env, const char *name, const char *text,
		     size_t len, const char *from, struct cmfs_err *err)
{
	const struct config *cfg = repo_config(r);
	struct catalog_table_def d;
	struct catalog_table old, srct;
	struct catalog_env e;
	struct ddl_table *t = NULL, *src = NULL;
	struct buf like = BUF_INIT((size_t)1 << 24);
	struct event ev;
	const char *like_name;
	uint64_t n;
	int rc;

	memset(&d, 0, sizeof(d));
	store_reserve_take(r->store);
	event_init(&ev, repo_now(), who->uid, env,
		   from ? "rename" : "table-write");
	event_add(&ev, "table", from ? from : name);
	if (from)
		event_add(&ev, "to", name);
	if (len > cfg->limits.ddl_size) {
		rc = cmfs_err_set(err, -EFBIG,
				  "%s.sql: %zu bytes is over the DDL size "
				  "limit of %llu", name, len,
				  (unsigned long long)cfg->limits.ddl_size);
		goto refused;
	}
	if ((rc = ddl_parse(&t, text, len, err)) ||
	    (rc = ddl_check_name(t, env, name, err)))
		goto refused;
	if ((rc = begin(r, err)))
		goto refused;
	rc = env_get(r, env, &e, err);
	like_name = t ? ddl_like_source(t) : NULL;
	if (!rc && like_name) {
		rc = catalog_table_get(r->cat, e.id, like_name, &srct, err);
		if (rc == -ENOENT)
			rc = cmfs_err_set(err, -EINVAL,
					  "%s: LIKE source %s is not a table "
					  "of environment %s", name, like_name,
					  env);
		if (!rc)
			rc = table_tree(r, &srct, &src, err);
		if (!rc)
			rc = ddl_merge_like(t, src, err);
		if (!rc)
			rc = ddl_format(&like, src);
		if (!rc)
			event_add(&ev, "like", like_name);
	}
	if (!rc && catalog_table_get(r->cat, e.id, name, &old, NULL) == -ENOENT) {
		rc = catalog_table_count(r->cat, e.id, &n, err);
		if (!rc && n >= cfg->limits.tables_per_env)
			rc = cmfs_err_set(err, -EDQUOT,
					  "%s: environment %s holds %llu "
					  "tables, the limit", name, env,
					  (unsigned long long)n);
	}
	if (!rc) {
		d.ddl = strndup(text, len);
		d.like_ddl = like_name ? buf_take(&like, NULL) : NULL;
		rc = d.ddl && (!like_name || d.like_ddl) ? def_options(&d, t)
							 : -ENOMEM;
	}
	if (!rc)
		rc = catalog_table_put(r->cat, e.id, name, &d, repo_now(),
				       who->uid, NULL, err);
	if (!rc && from) {
		struct catalog_table ft;

		rc = catalog_table_get(r->cat, e.id, from, &ft, err);
		if (!rc)
			rc = catalog_table_del(r->cat, ft.id, err);
	}
	if (!rc) {
		const char *conn = ddl_option_get(t, "connector");

		event_add(&ev, "connector", conn ? conn : "");
		record(r, &ev, env, 0, NULL);
	}
	rc = end(r, rc, err);
refused:
	if (rc) {
		record(r, &ev, rc == -ENOENT ? NULL : env, rc, err);
		table_refusal(r, env, name, cmfs_err_msg(err));
	}
	catalog_table_def_release(&d);
	ddl_table_free(t);
	ddl_table_free(src);
	buf_release(&like);
	event_release(&ev);
	return rc;
}

int repo_table_truncate(struct repo *r, const struct repo_who *who,
			const char *env, const char *file, uint64_t size)
{
	char msg[CMFS_ERR_MSG];

	if (!size) {
		repo_refused(r, who, env, "table-write", file, -EINVAL,
			     "truncating a table to nothing is not a CREATE "
			     "TABLE statement: rm it to drop it");
		return -EINVAL;
	}
	snprintf(msg, sizeof(msg), "%s: not possible here", file);
	repo_refused(r, who, env, "truncate", file, -EPERM, msg);
	return -EPERM;
}

int repo_label_writable(struct repo *r, const struct repo_who *who,
			const char *env, const char *object,
			const char *xattr)
{
	if (strncmp(xattr, NAME_XATTR_USER, strlen(NAME_XATTR_USER)))
		return -ENOTSUP;
	if (strncmp(xattr, NAME_XATTR_CMFS, strlen(NAME_XATTR_CMFS)))
		return 0;
	if (who)
		repo_refused(r, who, env && *env ? env : NULL, "label",
			     object, -EPERM,
			     "user.cmfs.* attributes are computed by cmfs "
			     "and cannot be set");
	return -EPERM;
}

int repo_table_write(struct repo *r, const struct repo_who *who,
		     const char *env, const char *name, const char *text,
		     size_t len, struct cmfs_err *err)
{
	return table_put(r, who, env, name, text, len, NULL, err);
}

int repo_table_rename(struct repo *r, const struct repo_who *who,
		      const char *env, const char *from, const char *to,
		      const char *text, size_t len, struct cmfs_err *err)
{
	return table_put(r, who, env, to, text, len, from, err);
}

/* The text of scratch file `scratch` staged for table `table`, into `out`
 * (capped at max_ddl_size by the caller's buffer). */
static int staged_text(struct repo *r, const char *env, const char *table,
		       const char *scratch, struct buf *out)
{
	char chunk[65536];
	ssize_t n;
	int fd, rc = store_scratch_staged_open(r->store, env, 't', table,
					       scratch, O_RDONLY, &fd);

	if (rc)
		return rc;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if ((rc = buf_add(out, chunk, (size_t)n)))
			break;
	if (n < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int repo_table_from_scratch(struct repo *r, const struct repo_who *who,
			    const char *env, const char *scratch,
			    const char *name, struct cmfs_err *err)
{
	struct buf b = BUF_INIT(repo_config(r)->limits.ddl_size);
	int rc = store_scratch_stage(r->store, env, 't', scratch, name);

	if (rc)
		return rc;
	rc = staged_text(r, env, name, scratch, &b);
	if (!rc)
		rc = table_put(r, who, env, name, buf_str(&b), b.len, NULL,
			       err);
	/* Committed: the scratch file goes; else it is back as it was. */
	store_scratch_unstage(r->store, env, 't', name, scratch, rc != 0);
	buf_release(&b);
	return rc;
}

/*
 * Table `table` dropped, its text left as scratch file `scratch`: the text
 * is staged first as if the scratch file were on its way onto the table
 * (settle_staged() then keeps the table and drops it), the table is
 * dropped, and the staged file becomes the scratch file (after a crash,
 * settle_staged() finds the table gone and puts it there).
 */
static int table_to_scratch(struct repo *r, const struct repo_who *who,
			    const char *env, const char *table,
			    const char *scratch, struct cmfs_err *err)
{
	struct buf b = BUF_INIT(repo_config(r)->limits.ddl_size);
	int fd = -1, rc = repo_table_text(r, env, table, &b, err);

	if (!rc)
		rc = store_scratch_staged_open(r->store, env, 't', table,
					       scratch,
					       O_WRONLY | O_CREAT | O_TRUNC,
					       &fd);
	if (!rc && write(fd, buf_str(&b), b.len) != (ssize_t)b.len)
		rc = -EIO;
	if (fd >= 0)
		close(fd);
	buf_release(&b);
	if (rc)
		goto out;
	rc = repo_table_remove(r, who, env, table, err);
out:
	if (fd >= 0)
		store_scratch_unstage(r->store, env, 't', table, scratch, !rc);
	return rc;
}

int repo_table_move(struct repo *r, const struct repo_who *who,
		    const char *env, const char *from, const char *to,
		    struct cmfs_err *err)
{
	struct buf b = BUF_INIT(repo_config(r)->limits.ddl_size);
	char tf[130], tt[130];
	int ff = name_table_file(tf, from), ft = name_table_file(tt, to);
	int rc;

	if (!ff && !ft)
		return store_scratch_rename(r->store, env, 't', from, to);
	if (!ff)
		return repo_table_from_scratch(r, who, env, from, tt, err);
	if (!ft)
		return table_to_scratch(r, who, env, tf, to, err);
	/* One change, one line: written and dropped together. */
	rc = repo_table_text(r, env, tf, &b, err);
	if (!rc)
		rc = repo_table_rename(r, who, env, tf, tt, buf_str(&b), b.len,
				       err);
	buf_release(&b);
	return rc;
}

/* Context of settle_staged(): the environment whose files it settles. */
struct settle {
	struct repo *r;
	const char *env;
};

/*
 * A scratch file that a crash left staged for table `table`: the rename
 * happened if the table holds its text (it goes), else it did not (it is
 * put back).  Texts that were equal before make both the same state.
 */
static int settle_staged(void *arg, const char *table, const char *scratch)
{
	struct settle *x = arg;
	struct repo *r = x->r;
	struct buf b = BUF_INIT((size_t)1 << 24), cur = BUF_INIT((size_t)1 << 24);
	int done;

	done = !staged_text(r, x->env, table, scratch, &b) &&
	       !repo_table_text(r, x->env, table, &cur, NULL) &&
	       b.len == cur.len && !memcmp(buf_str(&b), buf_str(&cur), b.len);
	store_scratch_unstage(r->store, x->env, 't', table, scratch, !done);
	repo_log(r, LOG_NOTICE,
		 "env %s: the rename of scratch file %s onto table %s.sql "
		 "was cut short: %s", x->env, scratch, table,
		 done ? "it was committed, the scratch file is removed"
		      : "it was not committed, the scratch file is back");
	buf_release(&b);
	buf_release(&cur);
	return 0;
}

/*
 * A scratch file that a crash left staged for artifact `name` (rsync's
 * temp file renamed into place): the commit happened if the artifact's
 * latest version has its bytes (it goes), else not (it is put back).
 */
static int settle_staged_art(void *arg, const char *name, const char *scratch)
{
	struct settle *x = arg;
	struct repo *r = x->r;
	struct catalog_version v;
	char sha[STORE_SHA_HEX];
	struct stat st;
	int fd, done = 0;

	if (!store_scratch_staged_open(r->store, x->env, 'a', name, scratch,
				       O_RDONLY, &fd)) {
		done = !fstat(fd, &st) &&
		       !store_hash_fd(sha, fd, (uint64_t)st.st_size, NULL) &&
		       !repo_art_latest(r, x->env, name, &v) &&
		       !strcmp(v.sha256, sha);
		close(fd);
	}
	store_scratch_unstage(r->store, x->env, 'a', name, scratch, !done);
	repo_log(r, LOG_NOTICE,
		 "env %s: the rename of scratch file %s onto artifact %s "
		 "was cut short: %s", x->env, scratch, name,
		 done ? "it was committed, the scratch file is removed"
		      : "it was not committed, the scratch file is back");
	return 0;
}

static int settle_env(void *arg, const struct catalog_env *e)
{
	struct settle x = { arg, e->name };

	store_scratch_staged(x.r->store, e->name, 't', settle_staged, &x);
	store_scratch_staged(x.r->store, e->name, 'a', settle_staged_art, &x);
	return 0;
}

/* Settle the renames of scratch files onto tables and artifacts that a
 * crash cut. */
static void settle_renames(struct repo *r)
{
	catalog_env_list(r->cat, settle_env, r, NULL);
}

int repo_table_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_table t;
	struct event ev;
	int rc;

	room_to_free(r);
	event_init(&ev, repo_now(), who->uid, env, "table-drop");
	event_add(&ev, "table", name);
	rc = begin(r, err);
	if (rc)
		goto out;
	rc = env_get(r, env, &e, err);
	if (!rc)
		rc = catalog_table_get(r->cat, e.id, name, &t, err);
	if (!rc)
		rc = catalog_table_del(r->cat, t.id, err);
	if (!rc)
		record(r, &ev, env, 0, NULL);
	rc = end(r, rc, err);
out:
	if (rc && rc != -ENOENT)
		record(r, &ev, env, rc, err);
	event_release(&ev);
	return rc;
}

uint64_t repo_resolved_size(struct repo *r, const char *env,
			    const char *name, int sql)
{
	static const struct repo_who nobody = { 0, 0, 0, 0, NULL };
	struct buf b = BUF_INIT((size_t)1 << 24);
	uint64_t size = 0;

	if (!repo_resolve(r, &nobody, env, name, sql, 0, &b, NULL))
		size = b.len;
	buf_release(&b);
	return size;
}

int repo_resolved_computed(struct repo *r, const char *env, const char *name,
			   int sql, const char *attr, struct buf *out,
			   struct cmfs_err *err)
{
	static const struct repo_who nobody = { 0, 0, 0, 0, NULL };
	struct buf tmp = BUF_INIT((size_t)1 << 24);
	int rc;

	if (!strcmp(attr, "refused-classes")) {
		rc = repo_refused_classes(r, env, name, out, err);
		/* The other refusals are user.cmfs.error's to tell. */
		return rc == -ENOENT && !err->msg[0] ? rc : 0;
	}
	if (strcmp(attr, "error"))
		return -ENODATA;
	/* Empty when the table resolves; else why not. */
	rc = repo_resolve(r, &nobody, env, name, sql, 0, &tmp, err);
	buf_release(&tmp);
	if (rc == -ENOENT && !err->msg[0])
		return rc;
	return rc ? buf_adds(out, cmfs_err_msg(err)) : 0;
}

mode_t repo_mode(enum repo_area area, int dir)
{
	if (dir)
		return S_IFDIR | (area == REPO_AREA_FIXED ? 0555 : 0755);
	return S_IFREG | (area == REPO_AREA_FIXED ? 0444 : 0644);
}

/* st's three times, `ns` since 1970. */
static void stat_times(struct stat *st, int64_t ns)
{
	st->st_mtim.tv_sec = (time_t)(ns / 1000000000);
	st->st_mtim.tv_nsec = (long)(ns % 1000000000);
	st->st_ctim = st->st_atim = st->st_mtim;
}

void repo_ver_stat(const struct catalog_version *v, enum repo_area area,
		   struct stat *st)
{
	st->st_mode = repo_mode(area, 0);
	st->st_size = (off_t)v->size;
	st->st_uid = v->uid;
	stat_times(st, v->mtime);
	st->st_blocks = (st->st_size + 511) / 512;
}

int repo_table_stat(struct repo *r, const char *env, const char *name,
		    struct stat *st)
{
	struct catalog_table t;
	int rc = repo_table_get(r, env, name, &t);

	if (rc)
		return rc;
	st->st_mode = repo_mode(REPO_AREA_TABLES, 0);
	st->st_size = (off_t)t.size;
	st->st_uid = t.uid;
	stat_times(st, t.mtime);
	st->st_blocks = (st->st_size + 511) / 512;
	return 0;
}

void repo_settled(struct repo *r, uint64_t gen, int64_t ns)
{
	__atomic_store_n(&r->changed, ns, __ATOMIC_RELAXED);
	__atomic_store_n(&r->settled, gen, __ATOMIC_RELEASE);
}

uint64_t repo_settled_gen(struct repo *r)
{
	return __atomic_load_n(&r->settled, __ATOMIC_ACQUIRE);
}

/*
 * The modification time of a resolved file: when the catalog last
 * changed, as far as the mount settled it (now, if a change is not
 * settled yet).  Steady while nothing changes, so that the kernel keeps
 * the pages (it drops them when it sees a new time), and new after any
 * change that may have changed the bytes, for rsync and make.  A .sql
 * says when it was resolved: now.
 */
static int64_t resolved_mtime(struct repo *r, int sql)
{
	if (sql || catalog_generation(r->cat) > repo_settled_gen(r))
		return repo_now();
	return __atomic_load_n(&r->changed, __ATOMIC_RELAXED);
}

int repo_resolved_stat(struct repo *r, const char *env, const char *name,
		       int sql, struct stat *st)
{
	struct catalog_table t;
	int rc = repo_table_get(r, env, name, &t);

	if (rc)
		return rc;
	st->st_mode = repo_mode(REPO_AREA_FIXED, 0);
	st->st_nlink = 1;
	st->st_size = (off_t)repo_resolved_size(r, env, name, sql);
	st->st_blocks = (st->st_size + 511) / 512;
	stat_times(st, resolved_mtime(r, sql));
	return 0;
}

int repo_table_text(struct repo *r, const char *env, const char *name,
		    struct buf *out, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_table t;
	struct catalog_table_def d;
	int rc = catalog_env_get(r->cat, env, &e, err);

	if (!rc)
		rc = catalog_table_get(r->cat, e.id, name, &t, err);
	if (!rc)
		rc = catalog_table_def(r->cat, t.id, &d, err);
	if (rc)
		return rc;
	rc = buf_adds(out, d.ddl);
	catalog_table_def_release(&d);
	return rc;
}

/* ---- resolution ---- */

/* resolve_table() of `name`, or what it said under this generation. */
static int resolve_cached(struct repo *r, const struct config *cfg,
			  const struct catalog_env *e, const char *name,
			  struct resolution *res, struct cmfs_err *err)
{
	struct cmfs_err why = CMFS_ERR_INIT;
	uint64_t gen = catalog_generation(r->cat);
	int rc;

	if (resolve_cache_get(r->resolved, gen, cfg, e->id, name, res, &rc,
			      err))
		return rc;
	rc = resolve_table(res, r->cat, cfg, e, name, &why);
	resolve_cache_put(r->resolved, gen, cfg, e->id, name, res, rc, &why);
	return rc ? cmfs_err_set(err, rc, "%s", cmfs_err_msg(&why)) : 0;
}

/*
 * 1 if the resolution of `name` (its .sql when `sql`) in `env` gave the
 * same result as when its line was last written: the same bytes (those at
 * `from` in `out`, but for the time a .sql's first line holds) or the same
 * error.  Else 0, and this result is remembered.  The memory is a table
 * of SEEN_SLOTS: a table that lost its slot is written again, no more.
 */
static int seen_before(struct repo *r, const char *env, const char *name,
		       int sql, int rc, const struct cmfs_err *err,
		       const struct buf *out, size_t from)
{
	struct store_hash *h;
	struct seen *slot;
	char key[sizeof(slot->key)], digest[STORE_SHA_HEX];
	const char *p = out->data ? out->data + from : "";
	size_t n = out->len - from, i;
	uint64_t fnv = 1469598103934665603ull;
	int same;

	if ((size_t)snprintf(key, sizeof(key), "%s/%s.%s", env, name,
			     sql ? "sql" : "jars") >= sizeof(key))
		return 0;
	if (sql && !rc) {
		const char *nl = memchr(p, '\n', n);

		n -= nl ? (size_t)(nl + 1 - p) : n;
		p = nl ? nl + 1 : p + n;
	}
	if (store_hash_new(&h))
		return 0;
	store_hash_update(h, &rc, sizeof(rc));
	if (rc && err)
		store_hash_update(h, cmfs_err_msg(err),
				  strlen(cmfs_err_msg(err)));
	store_hash_update(h, p, n);
	store_hash_final(h, digest);
	store_hash_free(h);
	for (i = 0; key[i]; i++)
		fnv = (fnv ^ (unsigned char)key[i]) * 1099511628211ull;
	pthread_mutex_lock(&r->seen_lock);
	slot = &r->seen[fnv % SEEN_SLOTS];
	same = !strcmp(slot->key, key) && !strcmp(slot->digest, digest);
	memcpy(slot->key, key, sizeof(key));
	memcpy(slot->digest, digest, sizeof(digest));
	pthread_mutex_unlock(&r->seen_lock);
	return same;
}

int repo_resolve(struct repo *r, const struct repo_who *who, const char *env,
		 const char *name, int sql, int record_it, struct buf *out,
		 struct cmfs_err *err)
{
	const struct config *cfg = repo_config(r);
	struct resolution res;
	struct catalog_env e;
	struct event ev;
	size_t i, from = out->len;
	int rc;

	rc = env_get(r, env, &e, err);
	if (!rc)
		rc = resolve_cached(r, cfg, &e, name, &res, err);
	if (!rc)
		rc = resolve_render(out, &res, r->cat, &e,
				    cfg->sql.jar_path_prefix
					    ? cfg->sql.jar_path_prefix
					    : (r->mountpoint ? r->mountpoint
							     : ""),
				    sql, repo_now(), err);
	if (!record_it || rc == -ENOENT ||
	    seen_before(r, env, name, sql, rc, err, out, from))
		return rc;
	event_init(&ev, repo_now(), who->uid, env, "resolve");
	event_add(&ev, "table", name);
	for (i = 0; !rc && i < res.njars; i++)
		event_addf(&ev, "jar", "%s@%lld", res.jars[i].name,
			   (long long)res.jars[i].version);
	record_later(r, &ev, env, rc, err);
	event_release(&ev);
	return rc;
}

int repo_refused_classes(struct repo *r, const char *env, const char *name,
			 struct buf *out, struct cmfs_err *err)
{
	struct catalog_env e;
	int rc = env_get(r, env, &e, err);

	return rc ? rc
		  : resolve_refused(out, r->cat, repo_config(r), &e, name, err);
}

/* Context of used-by: the artifact looked for, and where names go. */
struct used_by {
	struct repo *r;
	const struct catalog_env *env;
	const char *name;
	struct buf *out;
};

static int table_uses(void *arg, const struct catalog_table *t)
{
	struct used_by *u = arg;
	struct resolution res;

	if (!resolve_cached(u->r, repo_config(u->r), u->env, t->name, &res,
			    NULL) &&
	    resolve_uses(&res, u->name))
		return buf_printf(u->out, "%s\n", t->name);
	return 0;
}

int repo_used_by(struct repo *r, const char *env, const char *name,
		 struct buf *out)
{
	struct catalog_env e;
	struct used_by u = { r, &e, name, out };
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	if (!rc)
		rc = catalog_table_list(r->cat, e.id, table_uses, &u, NULL);
	/* Lines between names, none after the last: one name reads as
	 * plain text in getfattr. */
	if (!rc && out->len && out->data[out->len - 1] == '\n')
		out->data[--out->len] = '\0';
	return rc;
}
