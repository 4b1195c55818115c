/*
 * thread.h - the pieces the daemon's helper threads share: starting one
 * with every signal blocked, and timed waits on CLOCK_MONOTONIC (a clock
 * that a change of the wall time does not move).
 */
#ifndef CMFS_THREAD_H
#define CMFS_THREAD_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/*
 * Start fn(arg) on a new thread that blocks every signal: signals (the
 * stop, SIGHUP's reload) are for the threads that wait for them.  It may
 * run on every CPU the main thread may, whatever CPU its creator is bound
 * to.  0, or -EAGAIN when no thread could start.
 */
int thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* A condition variable whose timed waits run on CLOCK_MONOTONIC. */
void thread_cond_init(pthread_cond_t *c);

/* *t = `ns` nanoseconds from now on CLOCK_MONOTONIC, for such a wait. */
void thread_deadline(struct timespec *t, uint64_t ns);

#endif
