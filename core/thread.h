/*
 * thread.h - the pieces the daemon's helper threads share: starting one
 * with every signal blocked, timed waits on CLOCK_MONOTONIC (a clock that
 * a change of the wall time does not move), and a worker: one background
 * thread with its lock, its condition and its stop.
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

/*
 * A background thread, started when first needed (the daemon forks after
 * it opens the repository, and a thread does not survive a fork), woken
 * when there is work, and stopped and joined once.  `lock` guards
 * `running`, `stop` and whatever the owner queues for the thread; the
 * thread holds it while it looks and waits, and drops it while it works.
 * The thread's loop ends when it sees `stop`.
 */
struct thread_worker {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* timed waits on CLOCK_MONOTONIC */
	pthread_t thread;
	int running; /* started and not yet joined */
	int stop;    /* asked to stop: no new start */
};

/* For thread_worker_wait(): no time limit. */
#define THREAD_FOREVER UINT64_MAX

/* Set up w's lock and condition; no thread runs. */
void thread_worker_init(struct thread_worker *w);

/*
 * With w->lock held: start fn(arg) (thread_start) unless it runs.  0 when
 * it runs; -EAGAIN when it was stopped or no thread could start (the
 * caller then does the work itself).
 */
int thread_worker_start(struct thread_worker *w, void *(*fn)(void *),
			void *arg);

/* With w->lock held: wake the thread from its wait. */
void thread_worker_wake(struct thread_worker *w);

/*
 * With w->lock held, on the thread: wait for a wake, at most `ns`
 * nanoseconds (THREAD_FOREVER: without limit), or until the absolute
 * CLOCK_MONOTONIC time `*t`.  0 when woken (wakes may be spurious: look
 * again), ETIMEDOUT when the time came.
 */
int thread_worker_wait(struct thread_worker *w, uint64_t ns);
int thread_worker_wait_until(struct thread_worker *w, const struct timespec *t);

/*
 * Without w->lock: set `stop` and wake the thread, without waiting for it
 * (thread_worker_stop() joins it later).  No thread starts afterwards.
 */
void thread_worker_quit(struct thread_worker *w);

/*
 * Without w->lock: thread_worker_quit(), then join the thread if it runs.
 * Afterwards no thread runs and none starts; a second call does nothing.
 */
void thread_worker_stop(struct thread_worker *w);

/* On the thread, without w->lock (while it works): `stop` was set. */
int thread_worker_stopping(struct thread_worker *w);

/* After thread_worker_stop(): free the lock and the condition. */
void thread_worker_release(struct thread_worker *w);

#endif
