/*
 * hash.c - see hash.h.  Linear probing in a table at most half full keeps
 * probe runs short and each look-up on one or two cache lines; removal
 * shifts the run back (no tombstones), so a table that churns (the
 * inode table, the refusal gate) never fills with dead slots.
 */
#include "hash.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* The hashes' seed: one per process. */
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
 * dozens of bytes, and the inspector hashes every one of them.
 */
static uint64_t mix(const char *s, size_t n, uint64_t salt)
{
	const uint64_t k = 0x9fb21c651e98df25ull;
	uint64_t h = (seed ^ ((uint64_t)n * k)) + salt * k, w;

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

uint64_t hash_bytes(const void *k, size_t n, uint64_t salt)
{
	pthread_once(&seed_once, seed_init);
	return mix(k, n, salt);
}

/* The slot holding `k`, or the empty slot where it would go. */
static struct hash_slot *slot(const struct hash *m, const char *k, size_t n,
			      uint64_t h)
{
	uint32_t tag = (uint32_t)(h >> 32);
	size_t i = (size_t)h & (m->cap - 1);

	for (;; i = (i + 1) & (m->cap - 1)) {
		struct hash_slot *s = &m->v[i];

		if (!s->key ||
		    (s->tag == tag && s->len == n && !memcmp(s->key, k, n)))
			return s;
	}
}

/* The home slot of the key in `s`: where its probe run starts. */
static size_t home(const struct hash *m, const struct hash_slot *s)
{
	return (size_t)mix(s->key, s->len, 0) & (m->cap - 1);
}

/* Move every key to a new table of `cap` slots (a power of two, over
 * twice the keys): a hash each. */
static int rehash(struct hash *m, size_t cap)
{
	struct hash_slot *old = m->v;
	size_t ocap = m->cap, i;

	pthread_once(&seed_once, seed_init);
	m->v = calloc(cap, sizeof(*m->v));
	if (!m->v) {
		m->v = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (i = 0; i < ocap; i++)
		if (old[i].key)
			*slot(m, old[i].key, old[i].len,
			      mix(old[i].key, old[i].len, 0)) = old[i];
	free(old);
	return 0;
}

/*
 * Re-placing every key on growth costs a hash each: an archive's entry
 * count is known before its names go in, and doubling 64 slots up to
 * 20,000 entries would re-place every key ten times.
 */
int hash_reserve(struct hash *m, size_t n)
{
	size_t cap = 64;

	while (cap < n * 2 && cap < SIZE_MAX / 4 / sizeof(*m->v))
		cap *= 2;
	return cap <= m->cap ? 0 : rehash(m, cap);
}

int hash_shrink(struct hash *m)
{
	size_t cap = 64;

	if (m->cap <= 64 || m->n * 8 >= m->cap)
		return 0;
	while (cap < m->n * 4)
		cap *= 2;
	return rehash(m, cap);
}

struct hash_slot *hash_place(struct hash *m, const void *k, size_t n)
{
	struct hash_slot *s;
	uint64_t h;

	/* Doubled (from 64 slots) before it is more than half full. */
	if (n > UINT32_MAX ||
	    ((m->n + 1) * 2 > m->cap && hash_reserve(m, m->cap ? m->cap : 32)))
		return NULL;
	h = mix(k, n, 0);
	s = slot(m, k, n, h);
	if (!s->key) {
		s->len = (uint32_t)n;
		s->tag = (uint32_t)(h >> 32);
	}
	return s;
}

int hash_put(struct hash *m, const void *k, size_t n, uintptr_t val)
{
	struct hash_slot *s = hash_place(m, k, n);

	if (!s)
		return -ENOMEM;
	if (s->key)
		return 1;
	s->key = k;
	s->val = val;
	m->n++;
	return 0;
}

int hash_get(const struct hash *m, const void *k, size_t n, uintptr_t *val)
{
	struct hash_slot *s;

	if (!m->cap)
		return 0;
	s = slot(m, k, n, mix(k, n, 0));
	if (!s->key)
		return 0;
	if (val)
		*val = s->val;
	return 1;
}

/*
 * Empty the slot, then move back each key of the run after it that may
 * sit there (its home is not between the hole and itself, cyclically),
 * so that every key stays reachable from its home without a gap.
 */
int hash_del(struct hash *m, const void *k, size_t n)
{
	struct hash_slot *s;
	size_t hole, i, h, mask = m->cap - 1;

	if (!m->cap)
		return 0;
	s = slot(m, k, n, mix(k, n, 0));
	if (!s->key)
		return 0;
	hole = (size_t)(s - m->v);
	for (i = (hole + 1) & mask; m->v[i].key; i = (i + 1) & mask) {
		h = home(m, &m->v[i]);
		if (((i - h) & mask) >= ((i - hole) & mask)) {
			m->v[hole] = m->v[i];
			hole = i;
		}
	}
	memset(&m->v[hole], 0, sizeof(m->v[hole]));
	m->n--;
	return 1;
}

void hash_release(struct hash *m)
{
	free(m->v);
	m->v = NULL;
	m->cap = m->n = 0;
}
