/*
 * turn.c - whose turn it is to read the requests (turn.h).
 *
 * State, under turn.lock:
 *   holder   the number of the turn (0: free); the thread whose `mine`
 *            equals it reads, or processes what it read
 *   busy     the holder processes a request (not in read(2))
 *   seq      requests read so far: the watcher compares it tick to tick
 *   watching the watcher ticks; it sleeps without a limit once no
 *            request has come for IDLE_TICKS, and the next request wakes
 *            it: one wake-up per quiet spell, not one per request
 * The turn passes on (holder = 0, one waiting thread woken) only from the
 * watcher, or by a thread that takes it from a busy holder while
 * requests wait; a holder that comes back to turn_read() and finds its
 * number gone waits like any other thread.
 */
#define _GNU_SOURCE
#include "turn.h"
#include "thread.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Ticks without a new request after which the watcher sleeps. */
#define IDLE_TICKS 100

struct turn {
	int fd;
	pthread_mutex_t lock;
	sem_t parked;	     /* threads waiting for the turn sleep here */
	unsigned nparked;    /* ... and have not been posted yet */
	pthread_cond_t tick; /* the watcher's sleep (CLOCK_MONOTONIC) */
	pthread_t watcher;
	uint64_t holder;
	uint64_t seq;
	int busy;
	int watching;
	int stop;
};

/* Numbers of turns, unique in the process (atomic); and the one this
 * thread holds or held last. */
static uint64_t numbers;
static _Thread_local uint64_t mine;

/* 1 if a request waits to be read from `fd`. */
static int pending(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Wake one thread that waits for the turn, if one does (t->lock held). */
static void wake_one(struct turn *t)
{
	if (t->nparked) {
		t->nparked--;
		sem_post(&t->parked);
	}
}

/*
 * Wait until this thread may take the turn (t->lock held): it is free,
 * or its holder processes a request while another waits.  The waits are
 * cancellation points that hold no lock (libfuse cancels the threads
 * that wait at the session's end): a semaphore, not a condition, whose
 * cancellation would leave the lock taken or need a cleanup handler.
 */
static void wait_turn(struct turn *t)
{
	int p;

	while (t->holder) {
		if (t->busy) {
			pthread_mutex_unlock(&t->lock);
			p = pending(t->fd);
			pthread_mutex_lock(&t->lock);
			if (!t->holder || (p && t->busy))
				break;
		}
		t->nparked++;
		pthread_mutex_unlock(&t->lock);
		while (sem_wait(&t->parked) && errno == EINTR)
			;
		pthread_mutex_lock(&t->lock);
	}
}

ssize_t turn_read(struct turn *t, int fd, void *buf, size_t len)
{
	ssize_t n;
	int err;

	pthread_mutex_lock(&t->lock);
	if (!mine || t->holder != mine) {
		wait_turn(t);
		mine = __atomic_add_fetch(&numbers, 1, __ATOMIC_RELAXED);
		t->holder = mine;
	}
	t->busy = 0;
	pthread_mutex_unlock(&t->lock);
	n = read(fd, buf, len);
	err = errno;
	pthread_mutex_lock(&t->lock);
	if (n > 0 && t->holder == mine) {
		t->busy = 1;
		t->seq++;
		if (!t->watching) {
			t->watching = 1;
			pthread_cond_signal(&t->tick);
		}
	}
	pthread_mutex_unlock(&t->lock);
	errno = err;
	return n;
}

/*
 * The watcher: each tick while requests come, pass the turn on if its
 * holder has processed one request since the last tick, or requests
 * wait while it processes.
 */
static void *watch(void *arg)
{
	struct turn *t = arg;
	struct timespec at;
	uint64_t seen = 0;
	unsigned quiet = 0;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		if (!t->watching) {
			pthread_cond_wait(&t->tick, &t->lock);
			quiet = 0;
			continue;
		}
		thread_deadline(&at, TURN_TICK_NS);
		pthread_cond_timedwait(&t->tick, &t->lock, &at);
		if (t->stop)
			break;
		if (t->holder && t->busy && (t->seq == seen || pending(t->fd))) {
			t->holder = 0;
			t->busy = 0;
			wake_one(t);
		}
		if (t->seq != seen) {
			seen = t->seq;
			quiet = 0;
		} else if (++quiet >= IDLE_TICKS && !t->busy) {
			t->watching = 0;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int turn_start(struct turn **out, int fd)
{
	struct turn *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->fd = fd;
	pthread_mutex_init(&t->lock, NULL);
	sem_init(&t->parked, 0, 0);
	thread_cond_init(&t->tick);
	if (thread_start(&t->watcher, watch, t)) {
		pthread_cond_destroy(&t->tick);
		sem_destroy(&t->parked);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return -EAGAIN;
	}
	*out = t;
	return 0;
}

void turn_stop(struct turn *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_signal(&t->tick);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->watcher, NULL);
	pthread_cond_destroy(&t->tick);
	sem_destroy(&t->parked);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
