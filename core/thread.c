/*
 * thread.c - see thread.h.
 */
#include "thread.h"

#include <errno.h>
#include <signal.h>

int thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc ? -EAGAIN : 0;
}

void thread_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

void thread_deadline(struct timespec *t, uint64_t ns)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	ns += (uint64_t)t->tv_nsec;
	t->tv_sec += (time_t)(ns / 1000000000u);
	t->tv_nsec = (long)(ns % 1000000000u);
}
