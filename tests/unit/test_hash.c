/*
 * test_hash.c - core/hash.c: keys found after puts, growth and reserve;
 * put keeps the first value; removal leaves every other key reachable
 * (against a plain array as the model); the salt is part of the hash.
 */
#include "t.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

#define N 5000

static char keys[N][16];

static void fill_keys(void)
{
	int i;

	for (i = 0; i < N; i++)
		snprintf(keys[i], sizeof(keys[i]), "k%d", i * 7919);
}

/* Puts, gets, a repeated put, growth from empty and misses. */
static void test_put_get(void)
{
	struct hash m = HASH_INIT;
	uintptr_t v = 0;
	int i, found = 0, miss = 0;

	T_INTEQ(hash_get(&m, "x", 1, &v), 0);
	T_INTEQ(hash_del(&m, "x", 1), 0);
	for (i = 0; i < N; i++)
		if (hash_put(&m, keys[i], strlen(keys[i]), (uintptr_t)i))
			break;
	T_INTEQ(i, N);
	T_INTEQ(m.n, N);
	T_CHECK(m.cap >= 2 * m.n);
	T_CHECK((m.cap & (m.cap - 1)) == 0);
	for (i = 0; i < N; i++)
		if (hash_get(&m, keys[i], strlen(keys[i]), &v) &&
		    v == (uintptr_t)i)
			found++;
	T_INTEQ(found, N);
	/* a second put keeps the first value */
	T_INTEQ(hash_put(&m, keys[3], strlen(keys[3]), 99), 1);
	T_INTEQ(hash_get(&m, keys[3], strlen(keys[3]), &v), 1);
	T_INTEQ(v, 3);
	T_INTEQ(m.n, N);
	/* a key and its bytes with one more (its NUL) are two keys */
	for (i = 0; i < N; i++)
		miss += hash_get(&m, keys[i], strlen(keys[i]) + 1, NULL);
	T_INTEQ(miss, 0);
	T_INTEQ(hash_get(&m, "nope", 4, NULL), 0);
	/* the empty key is a key */
	T_INTEQ(hash_put(&m, "", 0, 7), 0);
	T_INTEQ(hash_get(&m, "", 0, &v), 1);
	T_INTEQ(v, 7);
	hash_release(&m);
	T_CHECK(m.v == NULL && m.cap == 0 && m.n == 0);
}

/* reserve sizes the table once; place fills a slot the caller owns. */
static void test_reserve_place(void)
{
	struct hash m = HASH_INIT;
	struct hash_slot *s;
	size_t cap;
	int i;

	T_INTEQ(hash_reserve(&m, N), 0);
	cap = m.cap;
	T_CHECK(cap >= 2 * N);
	for (i = 0; i < N; i++) {
		s = hash_place(&m, keys[i], strlen(keys[i]));
		if (!s || s->key)
			break;
		s->key = keys[i];
		s->val = (uintptr_t)i + 1;
		m.n++;
	}
	T_INTEQ(i, N);
	T_INTEQ(m.cap, cap);
	s = hash_place(&m, keys[42], strlen(keys[42]));
	T_CHECK(s && s->key == keys[42] && s->val == 43);
	/* a smaller reserve keeps the table */
	T_INTEQ(hash_reserve(&m, 10), 0);
	T_INTEQ(m.cap, cap);
	hash_release(&m);
}

/* Removals in a churning table, checked against a model. */
static void test_del(void)
{
	struct hash m = HASH_INIT;
	static char in[N];
	uintptr_t v;
	unsigned r = 12345;
	int i, k, bad = 0, n = 0;

	for (i = 0; i < 20 * N; i++) {
		r = r * 1103515245u + 12345u;
		k = (int)((r >> 8) % N);
		if (in[k]) {
			if (hash_del(&m, keys[k], strlen(keys[k])) != 1)
				bad++;
			in[k] = 0;
			n--;
		} else {
			if (hash_put(&m, keys[k], strlen(keys[k]),
				     (uintptr_t)k))
				bad++;
			in[k] = 1;
			n++;
		}
	}
	T_INTEQ(bad, 0);
	T_INTEQ(m.n, n);
	for (k = 0; k < N; k++) {
		int got = hash_get(&m, keys[k], strlen(keys[k]), &v);

		if (got != in[k] || (got && v != (uintptr_t)k))
			bad++;
	}
	T_INTEQ(bad, 0);
	T_INTEQ(hash_del(&m, "absent", 6), 0);
	for (k = 0; k < N; k++)
		if (in[k])
			hash_del(&m, keys[k], strlen(keys[k]));
	T_INTEQ(m.n, 0);
	for (i = 0; i < (int)m.cap; i++)
		if (m.v[i].key)
			bad++;
	T_INTEQ(bad, 0);
	hash_release(&m);
}

/* shrink gives slots back under an eighth full, and every key stays. */
static void test_shrink(void)
{
	struct hash m = HASH_INIT;
	uintptr_t v;
	size_t peak;
	int i, bad = 0;

	for (i = 0; i < N; i++)
		hash_put(&m, keys[i], strlen(keys[i]), (uintptr_t)i);
	peak = m.cap;
	T_INTEQ(hash_shrink(&m), 0);
	T_INTEQ(m.cap, peak); /* over an eighth full: kept */
	for (i = 0; i < N - N / 16; i++)
		hash_del(&m, keys[i], strlen(keys[i]));
	T_INTEQ(hash_shrink(&m), 0);
	T_CHECK(m.cap < peak / 4);
	T_CHECK(m.cap >= 4 * m.n && m.cap >= 64);
	T_CHECK((m.cap & (m.cap - 1)) == 0);
	for (i = 0; i < N; i++) {
		int got = hash_get(&m, keys[i], strlen(keys[i]), &v);

		if (got != (i >= N - N / 16) || (got && v != (uintptr_t)i))
			bad++;
	}
	T_INTEQ(bad, 0);
	for (i = N - N / 16; i < N; i++)
		hash_del(&m, keys[i], strlen(keys[i]));
	T_INTEQ(hash_shrink(&m), 0);
	T_INTEQ(m.cap, 64);
	T_INTEQ(hash_put(&m, "again", 5, 1), 0);
	T_INTEQ(hash_get(&m, "again", 5, &v), 1);
	hash_release(&m);
}

/* The hash is stable in a process, and the salt changes it. */
static void test_bytes(void)
{
	T_CHECK(hash_bytes("abc", 3, 0) == hash_bytes("abc", 3, 0));
	T_CHECK(hash_bytes("abc", 3, 1) != hash_bytes("abc", 3, 0));
	T_CHECK(hash_bytes("abc", 3, 0) != hash_bytes("abd", 3, 0));
	T_CHECK(hash_bytes("abcdefghij", 10, 5) !=
		hash_bytes("abcdefghik", 10, 5));
	T_CHECK(hash_bytes("", 0, 0) != hash_bytes("\0", 1, 0));
}

int main(void)
{
	fill_keys();
	T_RUN(test_put_get);
	T_RUN(test_reserve_place);
	T_RUN(test_del);
	T_RUN(test_shrink);
	T_RUN(test_bytes);
	return T_DONE();
}
