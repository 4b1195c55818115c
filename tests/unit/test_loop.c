/*
 * test_loop.c - the request loop (core/loop.c) over a pipe: each byte
 * written is a request, its letter what processing it does.
 *
 *   q  quick: nothing
 *   s  slow: sleeps SLOW_MS
 *   p  waits (up to two seconds) until another p has begun
 */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

#define SLOW_MS 300
#define MAXREQ 512

struct done {
	char op;
	pthread_t thread;
	uint64_t begin, end; /* ns, CLOCK_MONOTONIC */
};

struct fake {
	int rd, wr;	    /* the pipe: requests */
	int fail;	    /* receive returns this once the pipe is empty */
	int exited;	    /* atomic */
	pthread_mutex_t mu; /* guards the fields below */
	pthread_cond_t cond;
	struct done done[MAXREQ];
	size_t n;     /* requests begun */
	size_t ended; /* requests ended */
	int ps;	      /* p requests begun */
	struct loop_ops ops;
	unsigned max, takeover_us;
	pthread_t loop;
	int rc; /* loop_run's */
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *buf_new(void *arg)
{
	(void)arg;
	return calloc(1, 1);
}

static void buf_free(void *arg, void *buf)
{
	(void)arg;
	free(buf);
}

static int receive(void *arg, void *buf)
{
	struct fake *f = arg;
	ssize_t n = read(f->rd, buf, 1);

	if (n == 0 && f->fail)
		return f->fail;
	return n < 0 ? -errno : (int)n;
}

static int pending(void *arg)
{
	struct fake *f = arg;
	struct pollfd p = {f->rd, POLLIN, 0};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void process(void *arg, void *buf)
{
	struct fake *f = arg;
	char op = *(char *)buf;
	struct timespec t;
	size_t i;

	pthread_mutex_lock(&f->mu);
	i = f->n++;
	f->done[i].op = op;
	f->done[i].thread = pthread_self();
	f->done[i].begin = now_ns();
	pthread_cond_broadcast(&f->cond);
	if (op == 'p') {
		f->ps++;
		pthread_cond_broadcast(&f->cond);
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 2;
		while (f->ps < 2 &&
		       pthread_cond_timedwait(&f->cond, &f->mu, &t) == 0)
			;
	}
	pthread_mutex_unlock(&f->mu);
	if (op == 's')
		usleep(SLOW_MS * 1000);
	pthread_mutex_lock(&f->mu);
	f->done[i].end = now_ns();
	f->ended++;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->mu);
}

static int exited(void *arg)
{
	struct fake *f = arg;

	return __atomic_load_n(&f->exited, __ATOMIC_ACQUIRE);
}

static void *run(void *arg)
{
	struct fake *f = arg;

	f->rc = loop_run(&f->ops, f, f->max, f->takeover_us);
	return NULL;
}

static void fake_start(struct fake *f, unsigned max, unsigned takeover_us)
{
	int p[2];

	memset(f, 0, sizeof(*f));
	T_CHECK(pipe(p) == 0);
	f->rd = p[0];
	f->wr = p[1];
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cond, NULL);
	f->ops = (struct loop_ops){buf_new, buf_free, receive,
				   pending, process,  exited};
	f->max = max;
	f->takeover_us = takeover_us;
	T_CHECK(pthread_create(&f->loop, NULL, run, f) == 0);
}

/* Send request `op`. */
static void req(struct fake *f, char op)
{
	T_CHECK(write(f->wr, &op, 1) == 1);
}

/* Wait until `n` requests have ended (ten seconds at most). */
static void wait_ended(struct fake *f, size_t n)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 10;
	pthread_mutex_lock(&f->mu);
	while (f->ended < n &&
	       pthread_cond_timedwait(&f->cond, &f->mu, &t) == 0)
		;
	pthread_mutex_unlock(&f->mu);
}

/* Wait until `n` requests have begun (ten seconds at most). */
static void wait_begun(struct fake *f, size_t n)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 10;
	pthread_mutex_lock(&f->mu);
	while (f->n < n && pthread_cond_timedwait(&f->cond, &f->mu, &t) == 0)
		;
	pthread_mutex_unlock(&f->mu);
}

/* End of requests: the loop ends; its return. */
static int fake_end(struct fake *f)
{
	close(f->wr);
	pthread_join(f->loop, NULL);
	close(f->rd);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->mu);
	return f->rc;
}

/* Requests one at a time stay on the thread that read the first. */
static void test_one_thread(void)
{
	static struct fake f;
	size_t i, same = 0;

	fake_start(&f, 10, 100000);
	for (i = 0; i < 200; i++) {
		req(&f, 'q');
		wait_ended(&f, i + 1);
	}
	T_INTEQ(f.ended, 200);
	for (i = 0; i < f.n; i++)
		same += pthread_equal(f.done[i].thread, f.done[0].thread) != 0;
	/* (a machine busy enough to stall one 100 ms may move a few) */
	T_CHECK(same >= 195);
	T_INTEQ(fake_end(&f), 0);
}

/* A slow request hands the reading on: quick ones go by it. */
static void test_slow(void)
{
	static struct fake f;
	size_t i;

	fake_start(&f, 10, 20000);
	req(&f, 's');
	wait_begun(&f, 1);
	for (i = 0; i < 5; i++) {
		req(&f, 'q');
		wait_ended(&f, i + 1);
	}
	wait_ended(&f, 6);
	T_INTEQ(f.n, 6);
	T_CHECK(f.done[0].op == 's');
	for (i = 1; i < 6; i++) {
		T_CHECK(f.done[i].end < f.done[0].end);
		T_CHECK(!pthread_equal(f.done[i].thread, f.done[0].thread));
	}
	T_INTEQ(fake_end(&f), 0);
}

/*
 * Two p requests sent at once, the loop's takeover at `takeover_us`: each
 * waits for the other to begin, so both end soon only if a second thread
 * read the second while the first waited.
 */
static void two_waiting(struct fake *f, unsigned takeover_us)
{
	fake_start(f, 10, takeover_us);
	T_CHECK(write(f->wr, "pp", 2) == 2);
	wait_ended(f, 2);
	T_INTEQ(f->ps, 2);
	T_CHECK(f->done[1].begin < f->done[0].end);
	T_CHECK(f->done[0].end - f->done[0].begin < 1000000000u);
	T_CHECK(!pthread_equal(f->done[0].thread, f->done[1].thread));
}

/*
 * A request that waits for the next one (as a FUSE request may wait for
 * an interrupt): the next is read by another thread within takeover_us.
 */
static void test_waits_for_next(void)
{
	static struct fake f;

	two_waiting(&f, 20000);
	T_INTEQ(fake_end(&f), 0);
}

/*
 * Requests waiting while the reader processes one (clients in parallel)
 * are read by another thread at the watchdog's next look (takeover_us /
 * 2), before the request has run takeover_us.
 */
static void test_backlog(void)
{
	static struct fake f;

	two_waiting(&f, 400000);
	T_CHECK(f.done[1].begin - f.done[0].begin < 380000000u);
	T_INTEQ(fake_end(&f), 0);
}

/* No more threads than max: a third request waits for one of two. */
static void test_max_threads(void)
{
	static struct fake f;
	uint64_t first_end;

	fake_start(&f, 2, 10000);
	T_CHECK(write(f.wr, "ssq", 3) == 3);
	wait_ended(&f, 3);
	T_INTEQ(f.n, 3);
	T_CHECK(f.done[0].op == 's' && f.done[1].op == 's');
	T_CHECK(f.done[1].begin < f.done[0].end);
	first_end =
		f.done[0].end < f.done[1].end ? f.done[0].end : f.done[1].end;
	T_CHECK(f.done[2].begin >= first_end);
	T_INTEQ(fake_end(&f), 0);
}

/* A failed receive ends the loop with its error. */
static void test_error(void)
{
	static struct fake f;

	fake_start(&f, 4, 10000);
	f.fail = -EIO;
	req(&f, 'q');
	wait_ended(&f, 1);
	T_INTEQ(fake_end(&f), -EIO);
	T_INTEQ(f.n, 1);
}

/*
 * The session told to end (a signal) while the reader is blocked in
 * receive: the loop sees it within a second, cancels the reader, ends.
 */
static void test_exited(void)
{
	static struct fake f;
	uint64_t t0;

	fake_start(&f, 4, 10000);
	req(&f, 'q');
	wait_ended(&f, 1);
	t0 = now_ns();
	__atomic_store_n(&f.exited, 1, __ATOMIC_RELEASE);
	pthread_join(f.loop, NULL);
	T_INTEQ(f.rc, 0);
	T_CHECK(now_ns() - t0 < 3000000000u);
	/* No thread of the loop is left to read: a request sent now stays
	 * in the pipe. */
	req(&f, 'q');
	usleep(50000);
	{
		char c = 0;
		struct pollfd p = {f.rd, POLLIN, 0};

		T_INTEQ(poll(&p, 1, 0), 1);
		T_INTEQ(read(f.rd, &c, 1), 1);
		T_CHECK(c == 'q');
	}
	T_INTEQ(f.n, 1);
	close(f.wr);
	close(f.rd);
}

int main(void)
{
	T_RUN(test_one_thread);
	T_RUN(test_slow);
	T_RUN(test_waits_for_next);
	T_RUN(test_backlog);
	T_RUN(test_max_threads);
	T_RUN(test_error);
	T_RUN(test_exited);
	return T_DONE();
}
