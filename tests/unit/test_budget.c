/*
 * test_budget.c - unit tests of the inspections' shared memory budget
 * (core/budget.h) and of the estimate it is fed (core/jar_cost.h).
 */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include <zip.h>

#include "budget.h"
#include "jar_cost.h"

#include "fixture.h"

/* take and try within the cap; try refuses past it; one piece bigger
 * than the cap fits when nothing else is held. */
static void test_cap(void)
{
	struct budget b;

	budget_init(&b, 100);
	T_CHECK(budget_try(&b, 60));
	T_CHECK(budget_try(&b, 40));
	T_CHECK(!budget_try(&b, 1));
	budget_give(&b, 40);
	T_CHECK(!budget_try(&b, 41));
	T_CHECK(budget_try(&b, 40));
	budget_give(&b, 100);
	T_INTEQ(b.used, 0);
	T_CHECK(budget_try(&b, 1000)); /* alone: runs */
	T_CHECK(!budget_try(&b, 1));
	budget_give(&b, 1000);
	T_CHECK(budget_try(&b, UINT64_MAX));
	budget_give(&b, UINT64_MAX);
	budget_release(&b);
}

/*
 * The heap is trimmed once all is given back after BUDGET_TRIM_FROM was
 * held at once, and not after small work alone: a small upload's
 * inspection (JAR_COST_MIN) must not cost a trim each.
 */
static void test_trim(void)
{
	struct budget b;
	int i;

	budget_init(&b, 1ull << 30);
	for (i = 0; i < 4; i++) {
		T_CHECK(budget_try(&b, JAR_COST_MIN));
		budget_give(&b, JAR_COST_MIN);
	}
	T_INTEQ(b.trims, 0);
	/* Held together, then given back one at a time: one trim, at
	 * the last. */
	for (i = 0; i < 8; i++)
		budget_take(&b, JAR_COST_MIN);
	budget_give(&b, 7 * JAR_COST_MIN);
	T_INTEQ(b.trims, 0);
	budget_give(&b, JAR_COST_MIN);
	T_INTEQ(b.trims, 1);
	/* The peak counts from the last time nothing was held. */
	budget_take(&b, JAR_COST_MIN);
	budget_give(&b, JAR_COST_MIN);
	T_INTEQ(b.trims, 1);
	budget_take(&b, BUDGET_TRIM_FROM);
	budget_give(&b, BUDGET_TRIM_FROM);
	T_INTEQ(b.trims, 2);
	budget_release(&b);
}

struct worker {
	struct budget *b;
	uint64_t n;
	int *inside, *most;
	pthread_mutex_t *lock;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < 200; i++) {
		budget_take(w->b, w->n);
		pthread_mutex_lock(w->lock);
		if (++*w->inside > *w->most)
			*w->most = *w->inside;
		pthread_mutex_unlock(w->lock);
		usleep(10);
		pthread_mutex_lock(w->lock);
		--*w->inside;
		pthread_mutex_unlock(w->lock);
		budget_give(w->b, w->n);
	}
	return NULL;
}

/* Eight threads taking 40 of 100: never more than two hold at once, and
 * every one gets through (no lost wake-up). */
static void test_threads(void)
{
	struct budget b;
	pthread_t t[8];
	struct worker w[8];
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int inside = 0, most = 0, i;

	budget_init(&b, 100);
	for (i = 0; i < 8; i++) {
		w[i] = (struct worker){ &b, 40, &inside, &most, &lock };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	T_CHECK(most >= 1 && most <= 2);
	T_INTEQ(b.used, 0);
	budget_release(&b);
}

/* Write an archive of `n` entries (ZIP64 past 65,535) into `path`. */
static int make_zip(const char *path, int n)
{
	zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, NULL);
	char name[32];
	int i;

	if (!z)
		return -1;
	for (i = 0; i < n; i++) {
		zip_source_t *s = zip_source_buffer(z, "", 0, 0);

		snprintf(name, sizeof(name), "c/%x.class", i);
		if (!s || zip_file_add(z, name, s, 0) < 0) {
			zip_source_free(s);
			zip_discard(z);
			return -1;
		}
	}
	return zip_close(z) ? -1 : 0;
}

static uint64_t cost_of_file(const char *path, uint64_t *mem)
{
	size_t len;
	char *data = fixture_read(path, &len, "an archive just written");
	int fd = open(path, O_RDONLY);
	uint64_t c = fd >= 0 ? jar_cost_fd(fd) : 0;

	*mem = data ? jar_cost_mem(data, len) : 0;
	if (fd >= 0)
		close(fd);
	free(data);
	return c;
}

/*
 * The estimate grows with the central directory, ZIP64 included, agrees
 * for a file and its bytes, and is the minimum for what is no archive.
 */
static void test_cost(void)
{
	char dir[64], p[128];
	uint64_t small, big, mem;

	fixture_tmpdir(dir, sizeof(dir), "budget");
	snprintf(p, sizeof(p), "%s/a.zip", dir);
	T_INTEQ(make_zip(p, 10), 0);
	small = cost_of_file(p, &mem);
	T_INTEQ(small, JAR_COST_MIN);
	T_INTEQ(mem, small);
	T_INTEQ(make_zip(p, 70000), 0);
	big = cost_of_file(p, &mem);
	/* 70,000 central entries of 50-odd bytes, 7 bytes held each. */
	T_CHECK(big > 70000ull * 50 * 7 && big < 70000ull * 80 * 7);
	T_INTEQ(mem, big);
	T_INTEQ(jar_cost_mem("not a zip", 9), JAR_COST_MIN);
	T_INTEQ(jar_cost_mem("", 0), JAR_COST_MIN);
	/* An end record that points its ZIP64 record past the end. */
	{
		unsigned char b[22 + 20] = "PK\6\7";

		memset(b + 4, 0xff, 16);
		memcpy(b + 20, "PK\5\6", 4);
		memset(b + 20 + 12, 0xff, 4);
		T_INTEQ(jar_cost_mem(b, sizeof(b)), JAR_COST_MIN);
	}
	t_rmtree(dir);
}

int main(void)
{
	T_RUN(test_cap);
	T_RUN(test_trim);
	T_RUN(test_threads);
	T_RUN(test_cost);
	return T_DONE();
}
