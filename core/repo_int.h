/*
 * repo_int.h - what the repo*.c files share: struct repo and its
 * threads' state, an upload's state, and the functions one calls in
 * another.  Not for use outside core/repo*.c.  Each prototype says what
 * it does; its definition says how.  Functions run on any FUSE thread
 * unless they name their own (the later, sync and reaper threads).
 */
#ifndef CMFS_REPO_INT_H
#define CMFS_REPO_INT_H

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

struct repo_upload {
	struct repo *r;
	char env[64];
	char name[254];
	int fd;			/* staging file, -1 until needed */
	char base[STORE_SHA_HEX]; /* blob to copy when staging, "" = empty */
	/*
	 * `size` and `dirty` are written by the upload's user alone, but
	 * read by anyone through repo_upload_size() and repo_upload_dirty()
	 * (fs/: a stat or a label while the upload is written): each is
	 * stored and read atomically, every other field is the user's.
	 */
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

/* Blob names: of an artifact's versions before deleting it, ... */
struct blob_list {
	char (*sha)[STORE_SHA_HEX];
	size_t n;
};


/* The last result of a resolution whose line was written (repo_resolve). */
struct seen {
	char key[200];		/* env/table.jars or .sql; "" = free */
	char digest[STORE_SHA_HEX];
};

/* This thread's depth of nested begin() (0: outside a transaction). */
extern _Thread_local int in_txn;

/*
 * Begins (or nests) this thread's catalog transaction, after writing the
 * read lines queued before it.  0 or -errno of the catalog; end() follows.
 */
int begin(struct repo *r, struct cmfs_err *err);

/*
 * Ends this thread's transaction level with `rc`: commits at the outermost
 * on 0, else rolls back.  Returns `rc`, or the commit's -errno (-EIO,
 * -ENOSPC); the change's log lines go out only once committed.
 */
int end(struct repo *r, int rc, struct cmfs_err *err);

/*
 * Before a change that frees space (or takes none): on a full disk, gives
 * back the reserve's blocks so that its transaction can commit.
 */
void room_to_free(struct repo *r);

/* Appends a copy of `sha` to `l` (the caller frees l->sha): 0 or -ENOMEM. */
int blob_list_add(struct blob_list *l, const char *sha);

/*
 * Environment `name` into *out: 0, -ENOENT ("does not exist" in `err`) or
 * -errno of the catalog.
 */
int env_get(struct repo *r, const char *name, struct catalog_env *out,
		   struct cmfs_err *err);

/*
 * Environment `env` into *e and its artifact `name` into *a, inside a
 * transaction: 0, -ENOENT with a message, or -errno of the catalog.
 */
int art_get(struct repo *r, const char *env, const char *name,
		   struct catalog_env *e, struct catalog_artifact *a,
		   struct cmfs_err *err);

/*
 * Removes version `n` of artifact `name` in `env` (the artifact with its
 * last one) for `who`, recorded as `action` with `reason` (or NULL); the
 * caller has authorised it.  0, -ENOENT or -errno of the catalog.
 */
int ver_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, int64_t n,
		      const char *action, const char *reason,
		      struct cmfs_err *err);

/* This thread's log lines of its open transaction, written by end(). */
extern _Thread_local struct buf txn_log;

/*
 * Writes each newline-ended line of `lines` to the daemon's log with
 * result `rc`.
 */
void log_lines(struct repo *r, const char *lines, int rc);

/* Sets up the queue of read events (struct later); no thread yet. */
void later_init(struct repo *r);

/* Starts the later thread if it is not running and has it look again. */
void later_arm(struct repo *r);

/* Stops the later thread and writes the lines still queued. */
void later_stop(struct repo *r);

/*
 * events_gate's callback: writes a line of the refusal gate (the end of a
 * run, or a count) to the events of `env`.
 */
void gate_emit(void *arg, const char *env, const char *line, int rc);

/*
 * Finishes event `e` with `rc` (and `err`'s message) and stores it in the
 * events of `env` (NULL: the daemon's log only).  Inside a transaction the
 * line commits with the change; refusals pass the gate (events.h).
 */
void record(struct repo *r, struct event *e, const char *env, int rc,
		   const struct cmfs_err *err);

/*
 * Finishes event `e` of a read and logs it; its line is queued for the
 * events of `env` (the later thread writes it), so a reader never waits.
 */
void record_later(struct repo *r, struct event *e, const char *env,
			 int rc, const struct cmfs_err *err);

/*
 * Applies [events] max_rows and max_age to each environment's events, in
 * its own transaction; never inside a change's.  `now`: clock_now_ns().
 */
void retain(struct repo *r, int64_t now);

/*
 * Keeps why the last write of table `name` in `env` was refused (`msg`) on
 * its row (user.cmfs.error), in its own transaction; failures are ignored.
 */
void table_refusal(struct repo *r, const char *env, const char *name,
			  const char *msg);

/* Sets up the reaper (struct reaper); its thread starts when first needed. */
void reaper_init(struct repo *r);

/* An upload's staging file is open (r->staged counts it; atomic). */
void staged(struct repo *r);

/* Closes upload `u`'s staging file; the last one wakes the reaper. */
void unstage(struct repo_upload *u);

/* Stops the reaper's thread and unlinks the blobs still queued. */
void reaper_stop(struct repo *r);

/*
 * Frees the blobs in `shas` that no version refers to now: out of the
 * store under gc_lock, unlinked later by the reaper.
 */
void unlink_unused(struct repo *r, char (*shas)[STORE_SHA_HEX],
			  size_t n);

/*
 * Sets up the syncer of [store] sync = batch; its thread starts when first
 * needed (after the daemon's fork).
 */
void sync_init(struct repo *r);

/* A change was committed: has it on disk within SYNC_MS (sync = batch). */
void sync_later(struct repo *r);

/* Stops the syncer's thread and syncs what is left. */
void sync_stop(struct repo *r);

/*
 * At open: checks each blob still listed as unsynced and takes back every
 * version whose blob does not hold its bytes, recorded in events.
 */
void recover(struct repo *r);

/* Frees list `l` and every label on it; NULL is a no-op. */
void label_free(struct label *l);

/*
 * 0 if label `key` = `value` (`len` bytes) passes the syntax and value
 * rules of `cfg`, else -EINVAL with the reason in `err`.
 */
int label_check(const struct config *cfg, const char *key,
		       const char *value, size_t len, struct cmfs_err *err);

/*
 * Checks the labels artifact `art_id` (0: new) will carry after `pending`:
 * at most [limits] labels, sql-artifact labels borne out by inspection
 * `rep` (NULL: no check).  0, -EINVAL, -EDQUOT or -errno of the catalog.
 */
int check_labels(struct repo *r, const char *name, int64_t art_id,
			const struct label *pending,
			const struct jar_report *rep, struct cmfs_err *err);

/*
 * The commit of every upload: bytes [0, size) with SHA-256 `sha`, at `mem`
 * (inline blob) or in staging file `fd`, become the next version of `name`
 * in `env` with label changes `pending`.  *early (taken, may be NULL) is an
 * inspection made before.  *out: the latest version.  0 or the refusal's
 * -errno (DESIGN.md's table); nothing changes on failure.
 */
int commit_fd(struct repo *r, const struct repo_who *who,
		     const char *env, const char *name, int fd, const void *mem,
		     uint64_t size, const char *sha,
		     const struct label *pending, struct jar_report **early,
		     const char *action, struct catalog_version *out,
		     struct cmfs_err *err);

/*
 * 1 if a blob of `size` bytes is stored inline ([store] inline_max; 0:
 * never), else 0.
 */
int fits_inline(const struct repo *r, uint64_t size);

/*
 * Room in memory for upload `u`'s first `need` bytes, the new ones zero: 0,
 * -ENOSPC when they are not to be held in memory (over inline_max, or over
 * HELD_MAX with the other uploads), or -ENOMEM.
 */
int hold(struct repo_upload *u, uint64_t need);

/*
 * Makes upload `u`'s bytes up to offset `end` ready to be read or changed:
 * in memory while they fit, else in the staging file.  0 or -errno.
 */
int ready(struct repo_upload *u, uint64_t end);

/*
 * Appends a copy of label change `key` = `value` (NULL: remove) to `list`,
 * which the caller frees with label_free().  0 or -ENOMEM.
 */
int label_push(struct label **list, const char *key,
		      const char *value);

/*
 * Artifact `name` of `env` into *a, outside a transaction and with no
 * message: 0, -ENOENT or -errno of the catalog.
 */
int art_find(struct repo *r, const char *env, const char *name,
		    struct catalog_artifact *a);

/*
 * store_scratch_staged()'s callback at open (`arg`: struct settle): a
 * scratch file that a crash left staged for artifact `name` goes if its
 * commit happened, else is put back.  Always 0 (go on).
 */
int settle_staged_art(void *arg, const char *name, const char *scratch);

/*
 * At open: settles the renames of scratch files onto tables and artifacts
 * that a crash cut.
 */
void settle_renames(struct repo *r);

#endif
