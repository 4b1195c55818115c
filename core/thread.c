/*
 * thread.c - see thread.h.
 */
#define _GNU_SOURCE /* pthread_attr_setaffinity_np() */
#include "thread.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

int thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	sigset_t all, old;
	cpu_set_t cpus;
	int rc;

	/* The CPUs of the main thread (its tid is the pid), not those of
	 * the thread starting this one, which may be bound to one CPU (a
	 * ring's thread, fs/uring.c): a helper is there to use another. */
	pthread_attr_init(&attr);
	if (!sched_getaffinity(getpid(), sizeof(cpus), &cpus))
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
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
