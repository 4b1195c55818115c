/*
 * test_turn.c - unit tests of the turn to read requests (core/turn.h),
 * over a pipe standing for the FUSE device: each request is one byte
 * naming its client and whether it is slow, and the serving threads
 * answer on the client's own pipe.
 */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "turn.h"

#define WORKERS 4
#define CLIENTS 2
#define SEQ 1000
#define SLOW_MS 100
#define PAR_MS 20
#define PAR_N 10

/* The queue, the answers, and who served what. */
struct bench {
	struct turn *t;
	int q[2];		/* requests: read end, write end */
	int ans[CLIENTS][2];	/* answers to each client */
	pthread_mutex_t lock;	/* guards the record below */
	int last;		/* the worker that served the last request */
	int switches;		/* requests served by another than the last */
	int served;
};

struct worker {
	struct bench *b;
	int id;
	pthread_t thread;
	unsigned char r; /* the request read: not on the stack of a
			  * thread that may be cancelled (a sanitizer's
			  * poison around it would stay) */
};

/* Request bytes: client in the low bit; 2: slow (SLOW_MS); 4: PAR_MS.
 * Not inlined into work(), which must keep nothing on its stack. */
__attribute__((noinline)) static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A serving thread, as libfuse's: read through the turn, process, answer. */
static void *work(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	unsigned char r;

	for (;;) {
		if (turn_read(b->t, b->q[0], &w->r, 1) != 1)
			return NULL;
		r = w->r;
		pthread_mutex_lock(&b->lock);
		b->switches += b->served && b->last != w->id;
		b->last = w->id;
		b->served++;
		pthread_mutex_unlock(&b->lock);
		if (r & 2)
			sleep_ms(SLOW_MS);
		if (r & 4)
			sleep_ms(PAR_MS);
		if (write(b->ans[r & 1][1], &w->r, 1) != 1)
			return NULL;
	}
}

/* Send request `r` and wait for its answer. */
static void ask(struct bench *b, unsigned char r)
{
	unsigned char a;

	if (write(b->q[1], &r, 1) != 1 || read(b->ans[r & 1][0], &a, 1) != 1)
		T_CHECK(!"a request answered");
}

static void bench_start(struct bench *b, struct worker *w)
{
	int i;

	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	T_INTEQ(pipe(b->q), 0);
	for (i = 0; i < CLIENTS; i++)
		T_INTEQ(pipe(b->ans[i]), 0);
	T_INTEQ(turn_start(&b->t, b->q[0]), 0);
	for (i = 0; i < WORKERS; i++) {
		w[i].b = b;
		w[i].id = i;
		pthread_create(&w[i].thread, NULL, work, &w[i]);
	}
}

/* End as libfuse does: the threads that wait are cancelled, all joined. */
static void bench_stop(struct bench *b, struct worker *w)
{
	int i;

	close(b->q[1]);
	for (i = 0; i < WORKERS; i++)
		pthread_cancel(w[i].thread);
	for (i = 0; i < WORKERS; i++)
		pthread_join(w[i].thread, NULL);
	turn_stop(b->t);
	close(b->q[0]);
	for (i = 0; i < CLIENTS; i++) {
		close(b->ans[i][0]);
		close(b->ans[i][1]);
	}
	pthread_mutex_destroy(&b->lock);
}

/*
 * One client's quick requests, one after another, stay with one thread
 * (the kernel would hand them to the four in turn): a few switches at
 * most, where a loaded machine holds a thread up for a tick.
 */
static void test_sequential(void)
{
	struct bench b;
	struct worker w[WORKERS];
	int i;

	bench_start(&b, w);
	for (i = 0; i < SEQ; i++)
		ask(&b, 0);
	pthread_mutex_lock(&b.lock);
	T_INTEQ(b.served, SEQ);
	T_CHECK(b.switches <= SEQ / 20);
	if (b.switches > SEQ / 20)
		fprintf(stderr, "  %d switches in %d requests\n", b.switches,
			SEQ);
	pthread_mutex_unlock(&b.lock);
	bench_stop(&b, w);
}

struct slow_client {
	struct bench *b;
	pthread_t thread;
};

static void *slow_client(void *arg)
{
	struct slow_client *s = arg;

	ask(s->b, 2);
	return NULL;
}

/* A slow request does not hold up another client's quick one. */
static void test_slow(void)
{
	struct bench b;
	struct worker w[WORKERS];
	struct slow_client s = { &b, 0 };
	uint64_t t0, took;

	bench_start(&b, w);
	ask(&b, 1); /* the threads have started */
	pthread_create(&s.thread, NULL, slow_client, &s);
	sleep_ms(10); /* the slow one is being processed */
	t0 = now_ms();
	ask(&b, 1);
	took = now_ms() - t0;
	T_CHECK(took < SLOW_MS / 2);
	if (took >= SLOW_MS / 2)
		fprintf(stderr, "  the quick request took %llu ms\n",
			(unsigned long long)took);
	pthread_join(s.thread, NULL);
	bench_stop(&b, w);
}

struct par_client {
	struct bench *b;
	unsigned char r;
	pthread_t thread;
};

static void *par_client(void *arg)
{
	struct par_client *p = arg;
	int i;

	for (i = 0; i < PAR_N; i++)
		ask(p->b, p->r);
	return NULL;
}

/* Two clients whose requests take a while are served at once. */
static void test_parallel(void)
{
	struct bench b;
	struct worker w[WORKERS];
	struct par_client p[CLIENTS];
	uint64_t t0, took;
	int i;

	bench_start(&b, w);
	t0 = now_ms();
	for (i = 0; i < CLIENTS; i++) {
		p[i] = (struct par_client){ &b, (unsigned char)(4 | i), 0 };
		pthread_create(&p[i].thread, NULL, par_client, &p[i]);
	}
	for (i = 0; i < CLIENTS; i++)
		pthread_join(p[i].thread, NULL);
	took = now_ms() - t0;
	/* One at a time would take CLIENTS * PAR_N * PAR_MS = 400 ms. */
	T_CHECK(took < (uint64_t)(CLIENTS * PAR_N * PAR_MS) * 3 / 4);
	if (took >= (uint64_t)(CLIENTS * PAR_N * PAR_MS) * 3 / 4)
		fprintf(stderr, "  %d requests of %d ms took %llu ms\n",
			CLIENTS * PAR_N, PAR_MS, (unsigned long long)took);
	bench_stop(&b, w);
}

/* The end of the queue ends the thread that holds the turn; the others
 * are cancelled in their wait without holding the lock (no hang). */
static void test_end(void)
{
	struct bench b;
	struct worker w[WORKERS];

	bench_start(&b, w);
	ask(&b, 0);
	bench_stop(&b, w);
	T_CHECK(turn_start(&b.t, -1) == 0);
	turn_stop(b.t);
	turn_stop(NULL);
}

int main(void)
{
	T_RUN(test_sequential);
	T_RUN(test_slow);
	T_RUN(test_parallel);
	T_RUN(test_end);
	return T_DONE();
}
