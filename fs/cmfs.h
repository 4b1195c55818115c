/*
 * cmfs.h - the state of one mount, shared by main.c and the
 * operations (ops_int.h).
 *
 * Everything lives in one struct cmfs, handed to libfuse as the session's
 * user data: there are no mutable globals.
 */
#ifndef CMFS_FS_CMFS_H
#define CMFS_FS_CMFS_H

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include "backing.h"
#include "config.h"
#include "path.h"
#include "repo.h"
#include "thread.h"

/* A pending kernel cache invalidation (see kcache.c). */
struct inval {
	struct inval *next;
	uint64_t parent;	/* 0: invalidate inode `ino`'s data */
	uint64_t ino;
	char name[256];
};

struct cmfs {
	struct config *cfg;		/* current configuration (SIGHUP
					 * swaps it; replaced ones wait in
					 * `old`, oldest first, until no
					 * request can hold them) */
	struct config *old[64];
	time_t old_at[64];		/* when each was replaced (monotonic) */
	size_t nold;
	struct repo *repo;
	struct paths *paths;
	struct fuse_session *se;
	char *mountpoint;		/* absolute */
	uid_t owner;			/* the user who mounted */
	int shared;			/* allow_other, or access rules */
	gid_t owner_gid;
	struct timespec started;	/* times of the fixed directories */
	struct backing backing;		/* kernel passthrough (backing.c) */
	struct uring *uring;		/* requests over io_uring (uring.c),
					 * or NULL (atomic) */
	unsigned max_threads;		/* the request loop's (-o
					 * max_threads): the rings share them
					 * out among the CPUs */

	struct thread_worker q;		/* q.lock guards the queue below */
	struct inval *qhead, *qtail;

	/*
	 * Resolved files whose attributes the kernel may keep (kcache.c,
	 * "Resolved files in the page cache").  `slock` serialises
	 * cmfs_settle() (the generation settled last is repo's,
	 * repo_settled()); the paths lock guards `epoch` (settles so far,
	 * + 1) and `told`, the inodes told since.
	 */
	pthread_mutex_t slock;
	uint64_t epoch;
	uint64_t *told;
	size_t ntold, ctold;
};

/* The operations table, from ops.c. */
extern const struct fuse_lowlevel_ops cmfs_ops;

/*
 * The invalidation thread (kcache.c): start it; quiesce it (no notification
 * starts after this) before unmounting; stop (join) it after.
 */
int cmfs_inval_start(struct cmfs *c);
void cmfs_inval_quiesce(struct cmfs *c);
void cmfs_inval_stop(struct cmfs *c);

/*
 * Before a reply goes out (backing.c's writev hook): if the catalog
 * changed since the last call, the kernel forgets the attributes it keeps
 * of resolved files, so that nothing the request changed is read stale
 * after it.  `force`: the rules changed (SIGHUP), whatever the catalog.
 */
void cmfs_settle(struct cmfs *c, int force);

#endif
