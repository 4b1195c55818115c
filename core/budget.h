/*
 * budget.h - a budget of bytes that concurrent work shares: memory that
 * inspections may hold at once.
 *
 * budget_take() waits until `n` more bytes fit under the cap, or until
 * nothing else holds any (a single piece of work bigger than the cap runs
 * alone rather than never); budget_try() does not wait.  budget_give()
 * hands bytes back and, when the last holder leaves after the bytes held
 * at once reached BUDGET_TRIM_FROM, gives the freed heap back to the
 * system (malloc_trim), so that a burst of big inspections does not leave
 * the daemon at its peak.  Below that, what the work freed stays in the
 * heap for the next: trimming it would cost a walk of every arena and a
 * page fault for each page used again.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef CMFS_BUDGET_H
#define CMFS_BUDGET_H

#include <pthread.h>
#include <stdint.h>

/* The bytes held at once from which the heap is trimmed once all is
 * given back: a few small inspections' worth (JAR_COST_MIN each). */
#define BUDGET_TRIM_FROM (8u << 20)

struct budget {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	uint64_t cap;
	uint64_t used;	/* guarded by lock */
	uint64_t peak;	/* the most used at once since nothing was (lock) */
	uint64_t trims; /* heap trims so far (lock) */
};

/* An empty budget of `cap` bytes; budget_release() when no one waits. */
void budget_init(struct budget *b, uint64_t cap);
void budget_release(struct budget *b);

/* Takes `n` bytes, waiting as the file's head says; budget_give() them. */
void budget_take(struct budget *b, uint64_t n);
/* 1 when the bytes were taken, 0 when they would have to wait. */
int budget_try(struct budget *b, uint64_t n);
void budget_give(struct budget *b, uint64_t n);

#endif
