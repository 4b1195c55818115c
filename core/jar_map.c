/*
 * jar_map.c - a string-keyed hash table for the JAR inspector: open
 * addressing, keys borrowed.  The inspection keeps two: raw entry names
 * to their index, and class names to what the walk knows of them.
 */
#include "jar_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* The hashes' seed: one per process, so that no archive can be made to
 * collide its names on purpose (a probe run as long as the table). */
static uint64_t seed;
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void seed_init(void)
{
	uint64_t t;

	if (getentropy(&t, sizeof(t)))
		t = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^
		    (uint64_t)(uintptr_t)&t;
	seed = t | 1;
}

/*
 * Eight bytes at a time, each word folded in with a multiply, then the
 * bits mixed down (the finaliser of MurmurHash3): class names run to
 * dozens of bytes, and a byte at a time (FNV-1a) was 9 % of a shaded
 * JAR's inspection.
 */
static uint64_t hash(const char *s, size_t n)
{
	const uint64_t k = 0x9fb21c651e98df25ull;
	uint64_t h = seed ^ ((uint64_t)n * k), w;

	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (n) {
		w = 0;
		memcpy(&w, s, n);
		h = (h ^ w) * k;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* The slot holding `k`, or the empty slot where it would go. */
static struct slot *map_slot(const struct map *m, const char *k, size_t n,
			     uint64_t h)
{
	uint32_t tag = (uint32_t)(h >> 32);
	size_t i = (size_t)h & (m->cap - 1);

	for (;; i = (i + 1) & (m->cap - 1)) {
		struct slot *s = &m->v[i];

		if (!s->key ||
		    (s->tag == tag && s->len == n && !memcmp(s->key, k, n)))
			return s;
	}
}

/*
 * Make room for `n` keys at once: an archive's entry count is known
 * before its names go in, and doubling 64 slots up to 20,000 entries
 * re-places every key ten times.  0 or -ENOMEM (the table is kept).
 */
int jar_map_reserve(struct map *m, size_t n)
{
	struct slot *old = m->v;
	size_t ocap = m->cap, cap = 64, i;

	while (cap < n * 2 && cap < SIZE_MAX / 4 / sizeof(*m->v))
		cap *= 2;
	if (cap <= ocap)
		return 0;
	pthread_once(&seed_once, seed_init);
	m->v = calloc(cap, sizeof(*m->v));
	if (!m->v) {
		m->v = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (i = 0; i < ocap; i++)
		if (old[i].key)
			*map_slot(m, old[i].key, old[i].len,
				  hash(old[i].key, old[i].len)) = old[i];
	free(old);
	return 0;
}

/* Double the table (64 slots to start with): it stays at most half full,
 * so probe runs stay short.  On failure the old table is kept. */
static int map_grow(struct map *m)
{
	return jar_map_reserve(m, m->cap ? m->cap : 32);
}

/*
 * The slot holding k, or the empty one where it goes, with its tag and
 * length set (the caller that fills it sets key and val and counts it):
 * one hash for a look-up that may become an insertion.  NULL: no room
 * (ENOMEM, or a key over 4 GiB; names in a zip or a class file are at
 * most 65,535 bytes).
 */
struct slot *jar_map_place(struct map *m, const char *k, size_t n)
{
	struct slot *s;
	uint64_t h;

	if (n > UINT32_MAX || ((m->n + 1) * 2 > m->cap && map_grow(m)))
		return NULL;
	h = hash(k, n);
	s = map_slot(m, k, n, h);
	if (!s->key) {
		s->len = (uint32_t)n;
		s->tag = (uint32_t)(h >> 32);
	}
	return s;
}

/*
 * Add k -> val unless k is there: 0 added, 1 already there (unchanged),
 * -ENOMEM.  The key's bytes must outlive the map.
 */
int jar_map_put(struct map *m, const char *k, size_t n, uintptr_t val)
{
	struct slot *s = jar_map_place(m, k, n);

	if (!s)
		return -ENOMEM;
	if (s->key)
		return 1;
	s->key = k;
	s->val = val;
	m->n++;
	return 0;
}

/* 1 and *val (if non-NULL) when k is there, else 0. */
int jar_map_get(const struct map *m, const char *k, size_t n, uintptr_t *val)
{
	struct slot *s;

	if (!m->cap)
		return 0;
	s = map_slot(m, k, n, hash(k, n));
	if (!s->key)
		return 0;
	if (val)
		*val = s->val;
	return 1;
}

/* Free the table; the keys were borrowed and stay their owners'. */
void jar_map_release(struct map *m)
{
	free(m->v);
	m->v = NULL;
	m->cap = m->n = 0;
}
