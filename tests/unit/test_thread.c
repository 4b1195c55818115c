/*
 * test_thread.c - core/thread.c: threads start with every signal blocked,
 * deadlines carry into seconds, and timed waits run on CLOCK_MONOTONIC.
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

int main(void)
{
	T_RUN(test_start);
	T_RUN(test_deadline);
	T_RUN(test_cond);
	return T_DONE();
}
