/*
 * reinspect.h - inspections that an older inspector made, made again
 * after a mount.
 *
 * A blob's stored inspection decides what resolution says of it, and
 * one that an older inspector made (below JAR_INSPECTOR, jar.h) may
 * refuse what the current one accepts: a fat connector under class-level
 * reach.  reinspect_start() inspects those blobs again on a thread of the
 * lowest priority, one at a time within the inspections' memory budget,
 * each recorded in a transaction of its own (which ends the resolutions
 * cached under the old one); until its turn, a blob keeps the inspection
 * it has.  What was done is said in the log.
 *
 * Thread safety: start and stop from the thread that owns the catalog's
 * opening and closing; the thread only uses thread-safe catalog, store and
 * budget calls.
 */
#ifndef CMFS_REINSPECT_H
#define CMFS_REINSPECT_H

#include "budget.h"
#include "catalog.h"
#include "store.h"

struct reinspect;

typedef void (*reinspect_log_fn)(void *arg, int level, const char *line);

/*
 * Look for such blobs now; when there are, start the thread and set *out
 * (else NULL).  0, or -errno when the look-up failed (nothing started).
 */
int reinspect_start(struct reinspect **out, struct catalog *cat,
		    struct store *st, struct budget *budget,
		    reinspect_log_fn log, void *log_arg,
		    struct cmfs_err *err);

/*
 * Inspect the blob open on `fd` (closed here) as the current inspector
 * does, within the default limits and, when `budget` is not NULL, within
 * that memory budget; then record the inspection for `sha` (64 hex).
 * 0; or -errno: when the inspector failed (-EINVAL: not a valid archive),
 * its reason is in `refused` and nothing is recorded; when recording
 * failed, the reason is in `err` and `refused` stays unset.  Shared by
 * the thread above and fsck's repair, so both inspect alike.
 */
int reinspect_blob(struct catalog *cat, struct budget *budget,
		   const char *sha, int fd, struct cmfs_err *refused,
		   struct cmfs_err *err);

/* Stop after the blob being inspected, and wait for that.  NULL: no-op. */
void reinspect_stop(struct reinspect *ri);

#endif
