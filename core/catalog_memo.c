/*
 * catalog_memo.c - see catalog_memo.h.  The tree's hash table maps each
 * key to its entry; a tail queue (<sys/queue.h>) orders the entries
 * from the most to the least recently used, and the last goes first when
 * the total passes the budget.  A key and its byte answer share one block; a
 * report is a deep copy of its own.
 *
 * A memo of direct-mapped slots forgot what a host asked for whenever
 * two questions met in a slot (a resolution asks several per table, so
 * they did), and a fixed number of inspection slots was either too few
 * for an environment's connectors or too many for their shaded JARs'
 * reports: bench/findings.md, "PostgreSQL first resolution".
 */
#include "catalog_memo.h"

#include <stdlib.h>
#include <string.h>

#include "jar.h"

struct memo_entry {
	TAILQ_ENTRY(memo_entry) lru;
	size_t size;			/* charged to the budget */
	int rc;
	struct jar_report *r; /* owned; NULL: the answer is the bytes */
	size_t vlen;	      /* bytes of the answer, after the key */
	size_t klen;
	unsigned char key[]; /* klen bytes of key, then vlen of answer */
};

void catalog_memo_init(struct catalog_memo *m, size_t budget)
{
	memset(m, 0, sizeof(*m));
	TAILQ_INIT(&m->lru);
	pthread_mutex_init(&m->lock, NULL);
	m->budget = budget;
}

static void entry_free(struct memo_entry *e)
{
	jar_report_free(e->r);
	free(e);
}

/* Forget e: out of the table and the list, its bytes given back. */
static void drop(struct catalog_memo *m, struct memo_entry *e)
{
	hash_del(&m->keys, e->key, e->klen);
	TAILQ_REMOVE(&m->lru, e, lru);
	m->bytes -= e->size;
	entry_free(e);
}

/* Forget everything (the table's slots too: they are charged to the
 * entries, and a new generation may keep fewer). */
static void clear(struct catalog_memo *m)
{
	struct memo_entry *e;

	while ((e = TAILQ_FIRST(&m->lru))) {
		TAILQ_REMOVE(&m->lru, e, lru);
		entry_free(e);
	}
	m->bytes = 0;
	hash_release(&m->keys);
}

void catalog_memo_release(struct catalog_memo *m)
{
	clear(m);
	pthread_mutex_destroy(&m->lock);
}

/*
 * A new entry for key (klen bytes) and answer (rc, vlen bytes at val),
 * charged its block (with the allocator's header) and the two slots of
 * the hash table, which is kept at most half full; or NULL (ENOMEM).
 */
static struct memo_entry *entry_new(const void *key, size_t klen, int rc,
				    const void *val, size_t vlen)
{
	struct memo_entry *e;

	if (klen > SIZE_MAX / 2 || vlen > SIZE_MAX / 2 - sizeof(*e) - klen)
		return NULL;
	e = malloc(sizeof(*e) + klen + vlen);
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->size = 16 + sizeof(*e) + klen + vlen + 2 * sizeof(struct hash_slot);
	e->rc = rc;
	e->klen = klen;
	e->vlen = vlen;
	memcpy(e->key, key, klen);
	if (vlen)
		memcpy(e->key + klen, val, vlen);
	return e;
}

/*
 * Keep e (taken), read under `gen`, in place of what key held: unless it
 * is of an older generation than the memo's or over the budget alone.  A
 * newer generation makes every entry kept stale, so they go first; then
 * the least recently used go until the total fits.
 */
static void keep(struct catalog_memo *m, uint64_t gen, struct memo_entry *e)
{
	struct hash_slot *s;

	pthread_mutex_lock(&m->lock);
	if (gen < m->gen || e->size > m->budget) {
		pthread_mutex_unlock(&m->lock);
		entry_free(e);
		return;
	}
	if (gen > m->gen) {
		clear(m);
		m->gen = gen;
	}
	s = hash_place(&m->keys, e->key, e->klen);
	if (!s) {
		pthread_mutex_unlock(&m->lock);
		entry_free(e);
		return;
	}
	if (s->key) {
		struct memo_entry *old = (struct memo_entry *)s->val;

		TAILQ_REMOVE(&m->lru, old, lru);
		m->bytes -= old->size;
		entry_free(old);
	} else {
		m->keys.n++;
	}
	s->key = (const char *)e->key;
	s->val = (uintptr_t)e;
	TAILQ_INSERT_HEAD(&m->lru, e, lru);
	m->bytes += e->size;
	while (m->bytes > m->budget) /* never e: it fits alone */
		drop(m, TAILQ_LAST(&m->lru, memo_lru));
	pthread_mutex_unlock(&m->lock);
}

/* The entry of key under `gen`, made the most recently used; or NULL.
 * The caller holds the lock. */
static struct memo_entry *find(struct catalog_memo *m, uint64_t gen,
			       const void *key, size_t klen)
{
	uintptr_t v;
	struct memo_entry *e;

	if (gen != m->gen || !hash_get(&m->keys, key, klen, &v))
		return NULL;
	e = (struct memo_entry *)v;
	if (e != TAILQ_FIRST(&m->lru)) {
		TAILQ_REMOVE(&m->lru, e, lru);
		TAILQ_INSERT_HEAD(&m->lru, e, lru);
	}
	return e;
}

void catalog_memo_put(struct catalog_memo *m, uint64_t gen, const void *key,
		      size_t klen, int rc, const void *val, size_t vlen)
{
	struct memo_entry *e = entry_new(key, klen, rc, val, vlen);

	if (e)
		keep(m, gen, e);
}

int catalog_memo_get(struct catalog_memo *m, uint64_t gen, const void *key,
		     size_t klen, int *rc, void **val, size_t *vlen)
{
	struct memo_entry *e;
	int hit;

	*val = NULL;
	pthread_mutex_lock(&m->lock);
	e = find(m, gen, key, klen);
	hit = e && !e->r && (!e->vlen || (*val = malloc(e->vlen)));
	if (hit) {
		if (e->vlen)
			memcpy(*val, e->key + e->klen, e->vlen);
		*vlen = e->vlen;
		*rc = e->rc;
	}
	pthread_mutex_unlock(&m->lock);
	return hit;
}

void catalog_memo_put_report(struct catalog_memo *m, uint64_t gen,
			     const void *key, size_t klen,
			     const struct jar_report *r)
{
	struct memo_entry *e = entry_new(key, klen, 0, NULL, 0);

	if (!e)
		return;
	if (jar_report_copy(&e->r, r)) {
		entry_free(e);
		return;
	}
	e->size += jar_report_size(e->r);
	keep(m, gen, e);
}

int catalog_memo_get_report(struct catalog_memo *m, uint64_t gen,
			    const void *key, size_t klen,
			    struct jar_report **out)
{
	struct memo_entry *e;
	int hit;

	pthread_mutex_lock(&m->lock);
	e = find(m, gen, key, klen);
	hit = e && e->r && !jar_report_copy(out, e->r);
	pthread_mutex_unlock(&m->lock);
	return hit;
}

size_t catalog_memo_bytes(struct catalog_memo *m)
{
	size_t n;

	pthread_mutex_lock(&m->lock);
	n = m->bytes;
	pthread_mutex_unlock(&m->lock);
	return n;
}
