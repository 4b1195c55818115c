/*
 * repo_int.h - what the repo*.c files share: struct repo and its
 * threads' state, an upload's state, and the functions one calls in
 * another.  Not for use outside core/repo*.c; each function's contract is
 * at its definition.
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

extern _Thread_local int in_txn;

int begin(struct repo *r, struct cmfs_err *err);

int end(struct repo *r, int rc, struct cmfs_err *err);

void room_to_free(struct repo *r);

int blob_list_add(struct blob_list *l, const char *sha);

int env_get(struct repo *r, const char *name, struct catalog_env *out,
		   struct cmfs_err *err);

int art_get(struct repo *r, const char *env, const char *name,
		   struct catalog_env *e, struct catalog_artifact *a,
		   struct cmfs_err *err);

int ver_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, int64_t n,
		      const char *action, const char *reason,
		      struct cmfs_err *err);

extern _Thread_local struct buf txn_log;

void log_lines(struct repo *r, const char *lines, int rc);

void later_init(struct repo *r);

void later_arm(struct repo *r);

void later_stop(struct repo *r);

void gate_emit(void *arg, const char *env, const char *line, int rc);

void record(struct repo *r, struct event *e, const char *env, int rc,
		   const struct cmfs_err *err);

void record_later(struct repo *r, struct event *e, const char *env,
			 int rc, const struct cmfs_err *err);

void retain(struct repo *r, int64_t now);

void table_refusal(struct repo *r, const char *env, const char *name,
			  const char *msg);

void reaper_init(struct repo *r);

void staged(struct repo *r);

void unstage(struct repo_upload *u);

void reaper_stop(struct repo *r);

void unlink_unused(struct repo *r, char (*shas)[STORE_SHA_HEX],
			  size_t n);

void sync_init(struct repo *r);

void sync_later(struct repo *r);

void sync_stop(struct repo *r);

void recover(struct repo *r);

void label_free(struct label *l);

int label_check(const struct config *cfg, const char *key,
		       const char *value, size_t len, struct cmfs_err *err);

int check_labels(struct repo *r, const char *name, int64_t art_id,
			const struct label *pending,
			const struct jar_report *rep, struct cmfs_err *err);

int commit_fd(struct repo *r, const struct repo_who *who,
		     const char *env, const char *name, int fd, const void *mem,
		     uint64_t size, const char *sha,
		     const struct label *pending, struct jar_report **early,
		     const char *action, struct catalog_version *out,
		     struct cmfs_err *err);

int fits_inline(const struct repo *r, uint64_t size);

int hold(struct repo_upload *u, uint64_t need);

int ready(struct repo_upload *u, uint64_t end);

int label_push(struct label **list, const char *key,
		      const char *value);

int art_find(struct repo *r, const char *env, const char *name,
		    struct catalog_artifact *a);

int settle_staged_art(void *arg, const char *name, const char *scratch);

void settle_renames(struct repo *r);

#endif
