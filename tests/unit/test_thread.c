/*
 * test_thread.c - core/thread.c: threads start with every signal blocked,
 * deadlines carry into seconds, timed waits run on CLOCK_MONOTONIC, and a
 * worker starts once, is woken, times out, and stops and joins.
 */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "thread.h"

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

static void *mask_of(void *arg)
{
	pthread_sigmask(SIG_BLOCK, NULL, arg);
	return NULL;
}

/* The new thread blocks every signal; the caller's mask is as before. */
static void test_start(void)
{
	sigset_t in, before, after;
	pthread_t t;

	sigemptyset(&in);
	pthread_sigmask(SIG_BLOCK, NULL, &before);
	T_INTEQ(thread_start(&t, mask_of, &in), 0);
	pthread_join(t, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	T_CHECK(sigismember(&in, SIGTERM) == 1);
	T_CHECK(sigismember(&in, SIGINT) == 1);
	T_CHECK(sigismember(&in, SIGHUP) == 1);
	T_CHECK(sigismember(&after, SIGTERM) == sigismember(&before, SIGTERM));
}

/* Deadlines are normalized (tv_nsec < 1e9) and as far as asked. */
static void test_deadline(void)
{
	struct timespec now, t;
	uint64_t d;

	clock_gettime(CLOCK_MONOTONIC, &now);
	thread_deadline(&t, 2500000000u);
	T_CHECK(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L);
	d = ns_of(&t) - ns_of(&now);
	T_CHECK(d >= 2500000000u && d < 3500000000u);
	thread_deadline(&t, 999999999u);
	T_CHECK(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L);
}

/* A timed wait against a monotonic deadline times out at it. */
static void test_cond(void)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c;
	struct timespec t0, t, t1;
	int rc;

	thread_cond_init(&c);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	thread_deadline(&t, 50000000u);
	pthread_mutex_lock(&mu);
	do
		rc = pthread_cond_timedwait(&c, &mu, &t);
	while (rc == 0);
	pthread_mutex_unlock(&mu);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	T_INTEQ(rc, ETIMEDOUT);
	T_CHECK(ns_of(&t1) - ns_of(&t0) >= 50000000u);
	T_CHECK(ns_of(&t1) - ns_of(&t0) < 5000000000u);
	pthread_cond_destroy(&c);
}

/* A worker that counts wakes until it is stopped. */
struct counter {
	struct thread_worker w;
	int queued;    /* w.lock: work the test gave */
	int done;      /* w.lock: work the thread did */
	int timeouts;  /* w.lock: waits that timed out */
	uint64_t wait; /* each wait's limit */
};

static void *count(void *arg)
{
	struct counter *k = arg;

	pthread_mutex_lock(&k->w.lock);
	while (!k->w.stop) {
		if (k->done < k->queued) {
			k->done++;
			continue;
		}
		if (thread_worker_wait(&k->w, k->wait) == ETIMEDOUT)
			k->timeouts++;
	}
	pthread_mutex_unlock(&k->w.lock);
	return NULL;
}

/* Spin (with the lock dropped) until `done` reaches n, or ~5 s pass. */
static int done_reaches(struct counter *k, int n)
{
	struct timespec pause = {0, 1000000};
	int i, d = 0;

	for (i = 0; i < 5000; i++) {
		pthread_mutex_lock(&k->w.lock);
		d = k->done;
		pthread_mutex_unlock(&k->w.lock);
		if (d >= n)
			return 1;
		nanosleep(&pause, NULL);
	}
	return 0;
}

/* Started once, woken for each piece of work, stopped and joined. */
static void test_worker(void)
{
	struct counter k = {.wait = THREAD_FOREVER};

	thread_worker_init(&k.w);
	T_INTEQ(k.w.running, 0);
	pthread_mutex_lock(&k.w.lock);
	T_INTEQ(thread_worker_start(&k.w, count, &k), 0);
	T_INTEQ(k.w.running, 1);
	/* a second start finds it running */
	T_INTEQ(thread_worker_start(&k.w, count, &k), 0);
	k.queued = 3;
	thread_worker_wake(&k.w);
	pthread_mutex_unlock(&k.w.lock);
	T_CHECK(done_reaches(&k, 3));
	pthread_mutex_lock(&k.w.lock);
	k.queued = 4;
	thread_worker_wake(&k.w);
	pthread_mutex_unlock(&k.w.lock);
	T_CHECK(done_reaches(&k, 4));
	thread_worker_stop(&k.w);
	T_INTEQ(k.w.running, 0);
	T_INTEQ(k.w.stop, 1);
	T_INTEQ(thread_worker_stopping(&k.w), 1);
	T_INTEQ(k.timeouts, 0);
	/* stopped: no new start, and a second stop does nothing */
	pthread_mutex_lock(&k.w.lock);
	T_ERRNO(thread_worker_start(&k.w, count, &k), EAGAIN);
	pthread_mutex_unlock(&k.w.lock);
	thread_worker_stop(&k.w);
	T_INTEQ(k.w.running, 0);
	thread_worker_release(&k.w);
}

/* A timed wait returns ETIMEDOUT, again and again, until the stop. */
static void test_worker_timeout(void)
{
	struct counter k = {.wait = 2000000};
	struct timespec pause = {0, 50000000};
	int n;

	thread_worker_init(&k.w);
	pthread_mutex_lock(&k.w.lock);
	T_INTEQ(thread_worker_start(&k.w, count, &k), 0);
	pthread_mutex_unlock(&k.w.lock);
	nanosleep(&pause, NULL);
	thread_worker_stop(&k.w);
	pthread_mutex_lock(&k.w.lock);
	n = k.timeouts;
	pthread_mutex_unlock(&k.w.lock);
	T_CHECK(n >= 2);
	T_INTEQ(k.done, 0);
	thread_worker_release(&k.w);
}

/* wait_until an absolute monotonic time that has passed: ETIMEDOUT. */
static void test_worker_until(void)
{
	struct thread_worker w;
	struct timespec t;

	thread_worker_init(&w);
	clock_gettime(CLOCK_MONOTONIC, &t);
	pthread_mutex_lock(&w.lock);
	T_INTEQ(thread_worker_wait_until(&w, &t), ETIMEDOUT);
	T_INTEQ(thread_worker_wait(&w, 0), ETIMEDOUT);
	pthread_mutex_unlock(&w.lock);
	/* never started: stop joins nothing */
	thread_worker_stop(&w);
	T_INTEQ(w.running, 0);
	thread_worker_release(&w);
}

/* quit tells the thread without waiting; stop then joins it. */
static void test_worker_quit(void)
{
	struct counter k = {.wait = THREAD_FOREVER};

	thread_worker_init(&k.w);
	pthread_mutex_lock(&k.w.lock);
	T_INTEQ(thread_worker_start(&k.w, count, &k), 0);
	pthread_mutex_unlock(&k.w.lock);
	thread_worker_quit(&k.w);
	T_INTEQ(thread_worker_stopping(&k.w), 1);
	pthread_mutex_lock(&k.w.lock);
	T_INTEQ(k.w.running, 1);
	T_INTEQ(thread_worker_start(&k.w, count, &k), 0);
	pthread_mutex_unlock(&k.w.lock);
	thread_worker_stop(&k.w);
	T_INTEQ(k.w.running, 0);
	thread_worker_release(&k.w);
}

int main(void)
{
	T_RUN(test_start);
	T_RUN(test_deadline);
	T_RUN(test_cond);
	T_RUN(test_worker);
	T_RUN(test_worker_timeout);
	T_RUN(test_worker_until);
	T_RUN(test_worker_quit);
	return T_DONE();
}
