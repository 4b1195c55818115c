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

void budget_take(struct budget *b, uint64_t n)
{
	pthread_mutex_lock(&b->lock);
	while (!fits(b, n))
		pthread_cond_wait(&b->freed, &b->lock);
	b->used += n;
	pthread_mutex_unlock(&b->lock);
}

int budget_try(struct budget *b, uint64_t n)
{
	int ok;

	pthread_mutex_lock(&b->lock);
	ok = fits(b, n);
	if (ok)
		b->used += n;
	pthread_mutex_unlock(&b->lock);
	return ok;
}

void budget_give(struct budget *b, uint64_t n)
{
	int last;

	pthread_mutex_lock(&b->lock);
	b->used -= n < b->used ? n : b->used;
	last = !b->used;
	pthread_cond_broadcast(&b->freed);
	pthread_mutex_unlock(&b->lock);
	/* Freed arenas stay with the process until trimmed. */
	if (last)
		malloc_trim(0);
}
