/*
 * reinspect.c - inspections that an older inspector made, made again
 * after a mount.
 */
#define _GNU_SOURCE /* SCHED_IDLE, gettid() */
#include "reinspect.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <syslog.h>
#include <unistd.h>

#include "blob.h"
#include "buf.h"
#include "jar.h"
#include "jar_cost.h"
#include "thread.h"

struct stale {
	char sha[65];
	uint64_t size;
};

struct reinspect {
	struct catalog *cat;
	struct store *st;
	struct budget *budget;
	reinspect_log_fn log;
	void *log_arg;
	struct thread_worker w;	/* the thread, and its stop */
	struct vec blobs;	/* struct stale */
};

static void say(struct reinspect *ri, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(struct reinspect *ri, int level, const char *fmt, ...)
{
	char line[CMFS_ERR_MSG + 256];
	va_list ap;

	if (!ri->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ri->log(ri->log_arg, level, line);
}

static int add_stale(void *arg, const char *const *row)
{
	struct vec *v = arg;
	struct stale s;

	if (!row[0] || !row[1] || strlen(row[0]) != 64)
		return 0;
	memcpy(s.sha, row[0], 65);
	s.size = strtoull(row[1], NULL, 10);
	return vec_push(v, &s);
}

int reinspect_blob(struct catalog *cat, struct budget *budget,
		   const char *sha, int fd, struct cmfs_err *refused,
		   struct cmfs_err *err)
{
	struct jar_report *rep = NULL;
	struct jar_limits lim;
	uint64_t cost = 0;
	int rc;

	jar_limits_default(&lim);
	if (budget) {
		cost = jar_cost_fd(fd);
		budget_take(budget, cost);
	}
	rc = jar_inspect_fd(&rep, fd, &lim, refused);
	if (budget)
		budget_give(budget, cost);
	close(fd);
	if (rc)
		return cmfs_err_set(refused, rc, "inspection failed");
	rc = catalog_insp_put(cat, sha, rep, err);
	jar_report_free(rep);
	return rc;
}

/* Inspect blob `s` again and record it.  0 or -errno, reason in err. */
static int redo(struct reinspect *ri, const struct stale *s,
		struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	int fd, rc;

	if ((rc = blob_open(ri->st, ri->cat, s->sha, s->size, &fd, &e2)))
		return cmfs_err_set(err, rc, "blob %s: %s", s->sha,
				    cmfs_err_msg(&e2));
	rc = reinspect_blob(ri->cat, ri->budget, s->sha, fd, &e2, err);
	if (e2.code)
		return cmfs_err_set(err, rc, "blob %s: %s", s->sha,
				    cmfs_err_msg(&e2));
	return rc;
}

static void *run(void *arg)
{
	struct reinspect *ri = arg;
	const struct stale *all = ri->blobs.v;
	struct sched_param idle = {0};
	size_t i, done = 0, failed = 0;

	/* Unprivileged threads may lower themselves; if not, nice 19. */
	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle))
		setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	for (i = 0; i < ri->blobs.n; i++) {
		struct cmfs_err e = CMFS_ERR_INIT;

		if (thread_worker_stopping(&ri->w))
			break;
		if (!redo(ri, &all[i], &e)) {
			done++;
			continue;
		}
		/* It keeps the inspection it has; fsck tells the rest. */
		failed++;
		say(ri, LOG_WARNING, "inspecting again: %s",
		    cmfs_err_msg(&e));
	}
	say(ri, LOG_NOTICE,
	    "inspected again with inspector %d: %zu of %zu blobs%s%s",
	    JAR_INSPECTOR, done, ri->blobs.n,
	    failed ? ", some failed (above)" : "",
	    i < ri->blobs.n ? ", stopped by the unmount (the next mount "
			      "goes on)" : "");
	return NULL;
}

int reinspect_start(struct reinspect **out, struct catalog *cat,
		    struct store *st, struct budget *budget,
		    reinspect_log_fn log, void *log_arg, struct cmfs_err *err)
{
	struct reinspect *ri;
	int rc;

	*out = NULL;
	ri = calloc(1, sizeof(*ri));
	if (!ri)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	*ri = (struct reinspect){ .cat = cat, .st = st, .budget = budget,
				  .log = log, .log_arg = log_arg,
				  .blobs = VEC_INIT(sizeof(struct stale)) };
	rc = catalog_insp_stale(cat, add_stale, &ri->blobs, err);
	if (rc || !ri->blobs.n) {
		vec_release(&ri->blobs);
		free(ri);
		return rc == -ENOMEM ? cmfs_err_set(err, rc, "out of memory")
				     : rc;
	}
	say(ri, LOG_NOTICE,
	    "%zu blobs were inspected by an older cmfs: inspecting them "
	    "again in the background (until then, resolution uses what "
	    "was found before)", ri->blobs.n);
	thread_worker_init(&ri->w);
	pthread_mutex_lock(&ri->w.lock);
	rc = thread_worker_start(&ri->w, run, ri);
	pthread_mutex_unlock(&ri->w.lock);
	if (rc) {
		thread_worker_release(&ri->w);
		vec_release(&ri->blobs);
		free(ri);
		return cmfs_err_set(err, rc, "no thread to inspect again");
	}
	*out = ri;
	return 0;
}

void reinspect_stop(struct reinspect *ri)
{
	if (!ri)
		return;
	thread_worker_stop(&ri->w);
	thread_worker_release(&ri->w);
	vec_release(&ri->blobs);
	free(ri);
}
