/*
 * hash.h - one hash table for the whole tree: byte-string keys, borrowed,
 * each to one uintptr_t value; open addressing with linear probes, kept at
 * most half full.  The hash (hash_bytes) is seeded once per process at
 * random, so that no input (an archive's names, a user's file names) can
 * be made to collide on purpose.  Not thread-safe: the owner locks.
 */
#ifndef CMFS_HASH_H
#define CMFS_HASH_H

#include <stddef.h>
#include <stdint.h>

struct hash_slot {
	const char *key; /* NULL: empty */
	uint32_t len;
	uint32_t tag; /* the key's hash, high half: most misses end here */
	uintptr_t val;
};

/* An empty table is all zeroes (HASH_INIT or calloc). */
struct hash {
	struct hash_slot *v;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

#define HASH_INIT {NULL, 0, 0}

/*
 * The 64-bit hash of `n` bytes at `k` with `salt` (an id that is part of
 * the key: a filter of (environment, name) pairs passes the environment),
 * under this process's seed.
 */
uint64_t hash_bytes(const void *k, size_t n, uint64_t salt);

/* Make room for `n` keys at once.  0 or -ENOMEM (the table is kept). */
int hash_reserve(struct hash *m, size_t n);

/*
 * Give room back once the table is under an eighth full: it becomes the
 * smallest that holds its keys at most a quarter full (64 slots at least),
 * so that a table emptied after a peak (the inode table after the kernel
 * forgot names) does not keep the peak's slots.  Never called by the
 * table itself: an owner that reserved room to make later puts safe
 * keeps it.  0 or -ENOMEM (the table is kept as it is).
 */
int hash_shrink(struct hash *m);

/*
 * The slot holding k, or the empty one where it goes, with its tag and
 * length set: one hash for a look-up that may become an insertion (the
 * caller that fills it sets key and val and counts it in m->n).  NULL: no
 * room (ENOMEM, or a key over 4 GiB).
 */
struct hash_slot *hash_place(struct hash *m, const void *k, size_t n);

/* Add k -> val unless k is there: 0 added, 1 already there (unchanged),
 * -ENOMEM.  The key's bytes must stay as they are while k is in m. */
int hash_put(struct hash *m, const void *k, size_t n, uintptr_t val);

/* 1 and *val (if non-NULL) when k is there, else 0. */
int hash_get(const struct hash *m, const void *k, size_t n, uintptr_t *val);

/* Remove k: 1 when it was there, else 0.  Other slots may move. */
int hash_del(struct hash *m, const void *k, size_t n);

/* Free the table; the keys stay their owners'. */
void hash_release(struct hash *m);

#endif
