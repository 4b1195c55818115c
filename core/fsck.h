/*
 * fsck.h - check a store against its catalog (`cmfs fsck`), and repair
 * what can be repaired without losing a good version.
 *
 * What is checked, in this order:
 *   - the catalog: it opens, holds a cmfs schema, and passes SQLite's
 *     integrity check (catalog_check);
 *   - every blob, a file of the store or a row of the catalog (an inline
 *     blob, blob.h): its bytes hash (SHA-256) to its name;
 *   - every version: its blob is there, has the recorded size and is
 *     intact; a *.jar version's blob has its inspection recorded;
 *   - every blob: some version refers to it (else it is an orphan; an
 *     intact blob file that nothing refers to is what an upload
 *     interrupted between its link and its commit leaves: named as
 *     that, harmless, since the next mount removes it);
 *   - every environment: the counts of artifacts and tables it keeps
 *     (what the limits are checked against) are those of its rows.
 * Each problem names the environment, artifact and version behind it.
 *
 * Repair (`--repair`), only when the catalog itself is sound and no other
 * process has the store open (a mount):
 *   - a version whose blob is missing, or whose blob's bytes do not match
 *     its SHA-256, is deleted from the catalog (the bytes are gone; a
 *     version that cannot be read is worse than none, since resolution
 *     would hand it to Flink).  Its number is never reused.  The artifact
 *     goes with its last version.  Each deletion is written to the
 *     environment's `events` (action=fsck-repair) and to the report,
 *     saying which version is now the latest.  A good version is never
 *     deleted;
 *   - orphan blobs, and corrupt blobs that no version refers to any more,
 *     are removed; so is the second copy of a blob kept both as a file
 *     and inline (a corrupt row first, so that the intact file serves);
 *   - a missing inspection is recomputed from the blob;
 *   - wrong counts are set from the rows;
 *   - the list of blobs not yet synced (what a mount with sync = batch
 *     checks after a crash) is cleared: every blob was just checked.
 * A damaged catalog and a version row whose size disagrees with its
 * intact blob are reported and left alone: restore from `cmfs export`.
 *
 * On a store that a mount has open, fsck only reads (the catalog through
 * a read snapshot) and repairs nothing; an orphan it sees there may be an
 * upload in flight.
 *
 * Core never prints: fsck_run() returns a report that the caller formats.
 * Thread safety: none needed; one run is one call.
 */
#ifndef CMFS_FSCK_H
#define CMFS_FSCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "err.h"

/* Exit codes, as e2fsck(8) has them. */
#define FSCK_EXIT_OK 0		/* no problem found */
#define FSCK_EXIT_CORRECTED 1	/* problems found, all repaired */
#define FSCK_EXIT_UNCORRECTED 4 /* problems left as they are */
#define FSCK_EXIT_ERROR 8	/* fsck itself could not run */
#define FSCK_EXIT_USAGE 16	/* bad command line */

enum fsck_kind {
	FSCK_CATALOG,	   /* catalog unreadable or fails its check */
	FSCK_BLOB_MISSING, /* a version's blob is not in the store */
	FSCK_BLOB_CORRUPT, /* a version's blob has other bytes */
	FSCK_SIZE,	   /* a version row's size is not its blob's */
	FSCK_INSPECTION,   /* a *.jar version has no inspection (or a
			    * damaged one) */
	FSCK_ORPHAN,	   /* a blob that no version refers to */
	FSCK_COUNT,	   /* an environment's counts are not its rows' */
	FSCK_INSP_LINK,	   /* versions do not name their blob's inspection */
};

struct fsck_problem {
	enum fsck_kind kind;
	char env[64];	    /* "" when not about a version */
	char artifact[254]; /* "" when not about a version */
	int64_t version;    /* 0 when not about a version */
	char sha256[65];    /* the blob, "" for FSCK_CATALOG */
	char what[256];	    /* what is wrong, one line */
	char done[256];	    /* what repair did, or why it did not */
	int fixed;	    /* 1 when repaired */
	int harmless;	    /* 1: named, but nothing is wrong (a blob an
			     * interrupted upload left, which the next
			     * mount removes): the exit code ignores it */
};

struct fsck_report {
	size_t nproblems;
	struct fsck_problem *problems;
	size_t nenvs; /* what was checked */
	size_t nartifacts;
	size_t nversions;
	size_t nblobs;
	uint64_t blob_bytes;
	size_t nunsynced; /* blobs the catalog lists as not yet synced
			   * (sync = batch: the store was not closed
			   * cleanly); checked like every blob */
	int unsynced_cleared; /* repair cleared that list */
	pid_t busy;	/* a process holding the catalog open, -1 one
			 * holding the store's lock, or 0 */
	int repair;	/* repair was asked for */
	char note[256]; /* why nothing was repaired, or "" */
};

/*
 * Check the store in directory `store` (which must exist; it is never
 * created) and, with `repair`, repair it.  0 and *out (free with
 * fsck_report_free) whatever was found; -errno when the check could not
 * run at all (no such directory, not a store, permissions, out of
 * memory): that is FSCK_EXIT_ERROR.
 */
int fsck_run(struct fsck_report **out, const char *store, int repair,
	     struct cmfs_err *err);

/*
 * The same for the catalog at `url` (PostgreSQL's, catalog.h) with the
 * store `store` of this host (NULL url: fsck_run()).  Where the catalog
 * keeps blobs, those are the blobs checked (fetched into a staging file
 * of the store and hashed), not the store's files, which are one host's
 * copies of them; a blob row no version refers to is reported, and left.
 */
int fsck_run_url(struct fsck_report **out, const char *store,
		 const char *url, int repair, struct cmfs_err *err);

/* Frees a report of fsck_run*(); NULL is a no-op. */
void fsck_report_free(struct fsck_report *r);

/* FSCK_EXIT_OK, _CORRECTED or _UNCORRECTED for a report (harmless
 * findings count for none). */
int fsck_exit_code(const struct fsck_report *r);

/*
 * Append the report for people: one line per problem ("env prod,
 * artifact x.jar, version 3: blob <sha> is missing; repaired: ..."),
 * then a summary line.  0 or -ENOMEM/-EFBIG from `out`.
 */
int fsck_report_format(struct buf *out, const struct fsck_report *r);

/*
 * The pid of another process that has the store's catalog open (a
 * mounted cmfs), found through /proc; 0 when there is none.
 */
pid_t fsck_store_busy(const char *store);

#endif
