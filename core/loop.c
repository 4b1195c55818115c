/*
 * loop.c - the request loop of loop.h: a reader that keeps its requests
 * while they are quick, and a watchdog that hands the reading on when one
 * is not, or when requests wait.
 *
 * State, all under loop.mu:
 *   reader    the worker that reads next (NULL: whoever comes first);
 *             it is either in receive() or processing what it read
 *   busy_since  per worker, when the request it processes began (0: it
 *             processes none)
 *   idle      workers waiting in `standby` for the reading to be free
 *   active    the watchdog looks every takeover_us / 2; it sleeps once
 *             no request has begun for IDLE_TICKS looks, and the first
 *             request after wakes it (one wake-up per quiet spell, not
 *             one per request)
 * The reader changes only while it processes.  Besides it, a worker that
 * lost the reading reads while requests wait (a backlog: clients in
 * parallel), and waits in `standby` once none does.
 */
#define _GNU_SOURCE /* sem_clockwait() */
#include "loop.h"
#include "thread.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define IDLE_TICKS 64 /* watchdog looks without a new request: it sleeps */

struct worker {
	struct loop *l;
	pthread_t thread;
	void *buf;
	uint64_t busy_since; /* ns on CLOCK_MONOTONIC; 0: not processing */
};

struct loop {
	const struct loop_ops *ops;
	void *arg;
	unsigned max, takeover_us;
	pthread_mutex_t mu;
	pthread_cond_t standby; /* idle workers wait here */
	pthread_cond_t watch;	/* the watchdog sleeps and ticks here */
	sem_t finish;		/* posted when the loop is to end */
	struct worker *w;	/* max of them; nthreads started */
	unsigned nthreads, idle;
	struct worker *reader;
	uint64_t started; /* requests begun, for the watchdog */
	int active;	  /* the watchdog is ticking */
	int stop, error;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* End the loop, with l->mu held: everyone is told. */
static void stop(struct loop *l, int error)
{
	if (!l->stop && error < 0)
		l->error = error;
	l->stop = 1;
	pthread_cond_broadcast(&l->standby);
	pthread_cond_broadcast(&l->watch);
	sem_post(&l->finish);
}

static void *work(void *arg);

/* A new worker, with l->mu held; it claims the reading if free. */
static int add_worker(struct loop *l)
{
	struct worker *w;

	if (l->nthreads == l->max)
		return -EAGAIN;
	w = &l->w[l->nthreads];
	w->l = l;
	w->busy_since = 0;
	if (!w->buf && !(w->buf = l->ops->buf_new(l->arg)))
		return -ENOMEM;
	if (thread_start(&w->thread, work, w))
		return -EAGAIN;
	l->nthreads++;
	return 0;
}

/*
 * A worker: read while it is the reader, or while requests wait; process
 * what it read; else wait in standby while another reads.
 */
static void *work(void *arg)
{
	struct worker *w = arg;
	struct loop *l = w->l;
	int rc;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		if (!l->reader)
			l->reader = w;
		if (l->reader != w && !l->ops->pending(l->arg)) {
			l->idle++;
			pthread_cond_wait(&l->standby, &l->mu);
			l->idle--;
			continue;
		}
		pthread_mutex_unlock(&l->mu);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		rc = l->ops->receive(l->arg, w->buf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		pthread_mutex_lock(&l->mu);
		if (rc == -EINTR || rc == -EAGAIN)
			continue;
		if (rc <= 0 || l->stop || l->ops->exited(l->arg)) {
			stop(l, rc);
			break;
		}
		w->busy_since = now_ns();
		l->started++;
		if (!l->active) {
			l->active = 1;
			pthread_cond_signal(&l->watch);
		}
		pthread_mutex_unlock(&l->mu);
		l->ops->process(l->arg, w->buf);
		pthread_mutex_lock(&l->mu);
		w->busy_since = 0;
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* The reader has processed one request for takeover_us, or requests
 * wait: free the reading for an idle worker, or a new one (l->mu held). */
static void hand_on(struct loop *l)
{
	l->reader = NULL;
	if (l->idle)
		pthread_cond_signal(&l->standby);
	else
		add_worker(l); /* none: the first to finish reads */
}

static void *watchdog(void *arg)
{
	struct loop *l = arg;
	struct worker *r;
	struct timespec t;
	uint64_t seen = 0, tick = (uint64_t)l->takeover_us * 500u;
	unsigned quiet = 0;

	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		if (!l->active) {
			pthread_cond_wait(&l->watch, &l->mu);
			quiet = 0;
			continue;
		}
		thread_deadline(&t, tick);
		pthread_cond_timedwait(&l->watch, &l->mu, &t);
		if (l->stop)
			break;
		r = l->reader;
		if (r && r->busy_since &&
		    (now_ns() - r->busy_since >= 2 * tick ||
		     l->ops->pending(l->arg)))
			hand_on(l);
		if (l->started != seen) {
			seen = l->started;
			quiet = 0;
		} else if (++quiet >= IDLE_TICKS && !(r && r->busy_since)) {
			l->active = 0;
		}
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int loop_run(const struct loop_ops *ops, void *arg, unsigned max_threads,
	     unsigned takeover_us)
{
	struct loop l = {0};
	struct timespec t;
	pthread_t dog;
	unsigned i;
	int rc = 0, watching = 0;

	l.ops = ops;
	l.arg = arg;
	l.max = max_threads ? max_threads : 1;
	l.takeover_us = takeover_us ? takeover_us : 1;
	if (!(l.w = calloc(l.max, sizeof(*l.w))))
		return -ENOMEM;
	pthread_mutex_init(&l.mu, NULL);
	pthread_cond_init(&l.standby, NULL);
	thread_cond_init(&l.watch);
	sem_init(&l.finish, 0, 0);
	pthread_mutex_lock(&l.mu);
	rc = add_worker(&l);
	if (!rc)
		watching = !thread_start(&dog, watchdog, &l);
	pthread_mutex_unlock(&l.mu);
	/* Here the signals that end a session arrive (the loop's threads
	 * block them): EINTR, or a look every second. */
	while (!rc) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec++;
		if (!sem_clockwait(&l.finish, CLOCK_MONOTONIC, &t) ||
		    ops->exited(arg))
			break;
	}
	pthread_mutex_lock(&l.mu);
	stop(&l, 0);
	pthread_mutex_unlock(&l.mu);
	/* A worker blocked in receive() is cancelled there; the others
	 * (cancellation disabled) finish what they process. */
	for (i = 0; i < l.nthreads; i++)
		pthread_cancel(l.w[i].thread);
	for (i = 0; i < l.nthreads; i++)
		pthread_join(l.w[i].thread, NULL);
	if (watching)
		pthread_join(dog, NULL);
	for (i = 0; i < l.max; i++)
		if (l.w[i].buf)
			ops->buf_free(arg, l.w[i].buf);
	if (!rc)
		rc = l.error;
	sem_destroy(&l.finish);
	pthread_cond_destroy(&l.watch);
	pthread_cond_destroy(&l.standby);
	pthread_mutex_destroy(&l.mu);
	free(l.w);
	return rc;
}
