/*
 * catalog_memo.h - the answers a catalog keeps while its generation
 * stands (catalog.c): byte strings (a table's row, the artifacts that
 * carry a label, a label's value) and JAR reports (a blob's inspection),
 * each under a key of bytes.  Bounded in bytes: each entry is charged
 * what it takes on the heap, and the least recently used are dropped
 * first when the total passes the budget.  Every entry kept is of one
 * generation: an answer read under an older one is not kept, and one of
 * a newer one drops all the others first.  Internal to the catalog (and
 * its unit tests).  Thread-safe: each memo has its own mutex.
 */
#ifndef CMFS_CATALOG_MEMO_H
#define CMFS_CATALOG_MEMO_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "hash.h"

struct jar_report;

/*
 * The budget of a catalog's memo.  A resolution keeps, per connector, its
 * look-up (the artifacts carrying its identifier, 400 bytes a row), their
 * type labels and the inspection of each one's latest version (0.4-4 KiB
 * for the fixtures' factory JARs: a report names only the classes Flink
 * loads to compile a statement); and per table its row (176 bytes); each
 * with its key and ~100 bytes of bookkeeping.  4 MiB holds a thousand
 * connectors and as many tables, and is a small part of a daemon's 64 MiB
 * RSS target.  Nothing is kept past a change, so it fills only while
 * nothing changes.
 */
#define CATALOG_MEMO_BYTES ((size_t)4 << 20)

struct memo_entry;

/* Fields are catalog_memo.c's; embedded in its owner. */
struct catalog_memo {
	pthread_mutex_t lock;		/* guards all below */
	size_t budget;			/* bytes */
	size_t bytes;			/* charged to the entries kept */
	uint64_t gen;			/* every entry's generation */
	struct hash keys;		/* key -> struct memo_entry * */
	TAILQ_HEAD(memo_lru, memo_entry) lru; /* most recently used first */
};

/* An empty memo that keeps at most `budget` bytes. */
void catalog_memo_init(struct catalog_memo *m, size_t budget);

/* Free all it keeps (not the struct). */
void catalog_memo_release(struct catalog_memo *m);

/*
 * Keep (rc, a copy of the `vlen` bytes at `val`) as the answer to the
 * `klen` bytes at `key`, read under generation `gen`, in place of any
 * answer kept before.  Not kept (silently): an answer of an older
 * generation than the memo's, one larger than the budget, or when memory
 * runs out; a cache may always forget.
 */
void catalog_memo_put(struct catalog_memo *m, uint64_t gen, const void *key,
		      size_t klen, int rc, const void *val, size_t vlen);

/*
 * 1 and the answer kept for `key` under generation `gen`: *rc, *vlen and
 * *val (a copy, the caller's to free; NULL when *vlen is 0); else 0
 * (also when a copy cannot be made).  A hit makes it the most recently
 * used.
 */
int catalog_memo_get(struct catalog_memo *m, uint64_t gen, const void *key,
		     size_t klen, int *rc, void **val, size_t *vlen);

/* catalog_memo_put for a report: a deep copy of `r` is kept. */
void catalog_memo_put_report(struct catalog_memo *m, uint64_t gen,
			     const void *key, size_t klen,
			     const struct jar_report *r);

/* catalog_memo_get for a report: 1 and a deep copy in *out (free with
 * jar_report_free), else 0. */
int catalog_memo_get_report(struct catalog_memo *m, uint64_t gen,
			    const void *key, size_t klen,
			    struct jar_report **out);

/* The bytes charged to what `m` keeps now. */
size_t catalog_memo_bytes(struct catalog_memo *m);

#endif
