/*
 * budget.c - bytes shared by concurrent work, with a cap (budget.h).
 */
#define _GNU_SOURCE
#include "budget.h"

#include <malloc.h>

void budget_init(struct budget *b, uint64_t cap)
{
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->freed, NULL);
	b->cap = cap;
	b->used = 0;
	b->peak = 0;
	b->trims = 0;
}

void budget_release(struct budget *b)
{
	pthread_cond_destroy(&b->freed);
	pthread_mutex_destroy(&b->lock);
}

/* Whether `n` more bytes may be taken now.  Under lock. */
static int fits(const struct budget *b, uint64_t n)
{
	return !b->used || (n <= b->cap && b->used <= b->cap - n);
}

/* Hold `n` more bytes.  Under lock. */
static void take(struct budget *b, uint64_t n)
{
	b->used += n;
	if (b->used > b->peak)
		b->peak = b->used;
}

void budget_take(struct budget *b, uint64_t n)
{
	pthread_mutex_lock(&b->lock);
	while (!fits(b, n))
		pthread_cond_wait(&b->freed, &b->lock);
	take(b, n);
	pthread_mutex_unlock(&b->lock);
}

int budget_try(struct budget *b, uint64_t n)
{
	int ok;

	pthread_mutex_lock(&b->lock);
	ok = fits(b, n);
	if (ok)
		take(b, n);
	pthread_mutex_unlock(&b->lock);
	return ok;
}

void budget_give(struct budget *b, uint64_t n)
{
	int trim = 0;

	pthread_mutex_lock(&b->lock);
	b->used -= n < b->used ? n : b->used;
	if (!b->used) {
		trim = b->peak >= BUDGET_TRIM_FROM;
		b->trims += (uint64_t)trim;
		b->peak = 0;
	}
	pthread_cond_broadcast(&b->freed);
	pthread_mutex_unlock(&b->lock);
	/* Freed arenas stay with the process until trimmed. */
	if (trim)
		malloc_trim(0);
}
