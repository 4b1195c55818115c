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

void thread_worker_init(struct thread_worker *w)
{
	pthread_mutex_init(&w->lock, NULL);
	thread_cond_init(&w->wake);
	w->running = w->stop = 0;
}

int thread_worker_start(struct thread_worker *w, void *(*fn)(void *), void *arg)
{
	if (w->running)
		return 0;
	if (w->stop || thread_start(&w->thread, fn, arg))
		return -EAGAIN;
	w->running = 1;
	return 0;
}

void thread_worker_wake(struct thread_worker *w)
{
	pthread_cond_signal(&w->wake);
}

int thread_worker_wait(struct thread_worker *w, uint64_t ns)
{
	struct timespec t;

	if (ns == THREAD_FOREVER)
		return pthread_cond_wait(&w->wake, &w->lock);
	thread_deadline(&t, ns);
	return thread_worker_wait_until(w, &t);
}

int thread_worker_wait_until(struct thread_worker *w, const struct timespec *t)
{
	return pthread_cond_timedwait(&w->wake, &w->lock, t) == ETIMEDOUT
		       ? ETIMEDOUT
		       : 0;
}

/* `stop` is stored atomically (and under the lock) so that a thread at
 * work may poll it without the lock (thread_worker_stopping). */
void thread_worker_quit(struct thread_worker *w)
{
	pthread_mutex_lock(&w->lock);
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

void thread_worker_stop(struct thread_worker *w)
{
	int running;

	thread_worker_quit(w);
	pthread_mutex_lock(&w->lock);
	running = w->running;
	w->running = 0;
	pthread_mutex_unlock(&w->lock);
	if (running)
		pthread_join(w->thread, NULL);
}

int thread_worker_stopping(struct thread_worker *w)
{
	return __atomic_load_n(&w->stop, __ATOMIC_ACQUIRE);
}

void thread_worker_release(struct thread_worker *w)
{
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
}
