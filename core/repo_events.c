/*
 * repo_events.c - the `events` trail and the daemon's log: the line of
 * each change and refusal, the queue of reads' lines, retention.
 *
 * A refusal appends its own line after the rollback; so does a change whose
 * commit failed (a full disk): its line says result=refused with that
 * errno.
 * Both lines also go to the daemon's log, a change's only once
 * its commit succeeded (end()).  A read's line (a resolution) waits in a
 * short queue (struct later) that goes into the catalog within LATER_MS,
 * before any change or refusal (so lines keep their order) and before
 * `events` is read: a job start does not pay for a catalog write.
 *
 * The trail is bounded, since anyone may be refused as often as a loop
 * allows.  Refusals pass a gate (events.h) that counts repeats and
 * rate-limits each uid, writing the counts; a resolution whose result did
 * not change since its line is not written again (seen_before()); and
 * retention ([events] max_rows, max_age) removes the oldest lines, on the
 * later thread, with a line that says how many.
 */
#define _GNU_SOURCE
#include "repo_int.h"
/* ---- the events log ---- */

/* Lines of changes in them, for the daemon's log once they commit. */
_Thread_local struct buf txn_log = BUF_INIT((size_t)1 << 20);

void repo_log(struct repo *r, int level, const char *fmt, ...)
{
	char line[CMFS_ERR_MSG + 1024]; /* a message and its context */
	va_list ap;

	if (!r->log || level > repo_config(r)->log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	r->log(r->log_arg, level, line);
}

/* The `n` bytes of an events line (ending in a newline) into the log. */
static void log_event_n(struct repo *r, const char *line, size_t n, int rc)
{
	int level = rc ? LOG_NOTICE : LOG_INFO;
	char *copy;

	if (!r->log || level > repo_config(r)->log_level)
		return;
	copy = strndup(line, n ? n - 1 : 0);
	if (copy)
		r->log(r->log_arg, level, copy);
	free(copy);
}

/* An events line (ending in a newline) into the daemon's log. */
static void log_event(struct repo *r, const char *line, int rc)
{
	log_event_n(r, line, strlen(line), rc);
}

/* Each line of `lines` (each ending in a newline) into the daemon's log. */
void log_lines(struct repo *r, const char *lines, int rc)
{
	const char *p, *e;

	for (p = lines; (e = strchr(p, '\n')) != NULL; p = e + 1)
		log_event_n(r, p, (size_t)(e - p) + 1, rc);
}

/*
 * Write the queued lines into the catalog, in one transaction.  The caller
 * holds later.flush, and is in no transaction of its own.  Lines that
 * cannot be written are logged and dropped (the daemon log has them).
 */
static void later_write(struct repo *r)
{
	struct later *q = &r->later;
	struct later_line *head, *l, *next;
	const char **envs, **lines;
	struct cmfs_err err = CMFS_ERR_INIT;
	size_t n, i;

	pthread_mutex_lock(&q->w.lock);
	head = q->head;
	n = q->n;
	q->head = NULL;
	q->tail = &q->head;
	q->n = 0;
	pthread_mutex_unlock(&q->w.lock);
	if (!n)
		return;
	envs = malloc(n * sizeof(*envs));
	lines = malloc(n * sizeof(*lines));
	for (i = 0, l = head; envs && lines && l; l = l->next, i++) {
		envs[i] = l->env;
		lines[i] = l->line;
	}
	if (!envs || !lines)
		cmfs_err_set(&err, -ENOMEM, "out of memory");
	else if (!catalog_event_add_many(r->cat, n, envs, lines, &err))
		sync_later(r); /* the checkpoint that keeps the log short */
	if (err.code)
		repo_log(r, LOG_ERR, "events: %zu lines of reads lost: %s", n,
			 cmfs_err_msg(&err));
	free(envs);
	free(lines);
	for (l = head; l; l = next) {
		next = l->next;
		free(l);
	}
}

void repo_flush_events(struct repo *r)
{
	if (in_txn)
		return;
	pthread_mutex_lock(&r->later.flush);
	later_write(r);
	pthread_mutex_unlock(&r->later.flush);
}

/* The number of lines between retention passes. */
static unsigned trim_every(const struct repo *r)
{
	uint64_t rows = repo_config(r)->events.max_rows / 10;

	return rows < 1 ? 1 : rows > TRIM_EVERY ? TRIM_EVERY : (unsigned)rows;
}

/*
 * The thread of what waits: queued lines of reads, written LATER_MS
 * after the first came; counts of the refusal gate, written when their
 * window closes; retention, after trim_every() lines or TRIM_MS.
 */
static void *later_thread(void *arg)
{
	struct repo *r = arg;
	struct later *q = &r->later;
	int64_t now, due, wait;

	pthread_mutex_lock(&q->w.lock);
	while (!q->w.stop) {
		q->kick = 0;
		pthread_mutex_unlock(&q->w.lock);
		now = clock_now_ns();
		due = r->gate ? events_gate_due(r->gate) : 0;
		if (due && due <= now) {
			events_gate_tick(r->gate, now, 0, gate_emit, r);
			due = events_gate_due(r->gate);
		}
		if (now >= q->trim_at ||
		    __atomic_load_n(&r->added, __ATOMIC_RELAXED) >=
			    trim_every(r)) {
			retain(r, now);
			q->trim_at = now + (int64_t)TRIM_MS * 1000000;
		}
		pthread_mutex_lock(&q->w.lock);
		if (q->w.stop)
			break;
		if (q->n && now - q->since >= (int64_t)LATER_MS * 1000000) {
			pthread_mutex_unlock(&q->w.lock);
			repo_flush_events(r);
			pthread_mutex_lock(&q->w.lock);
			continue;
		}
		wait = q->trim_at - now;
		if (q->n && q->since + (int64_t)LATER_MS * 1000000 - now < wait)
			wait = q->since + (int64_t)LATER_MS * 1000000 - now;
		if (due && due - now < wait)
			wait = due - now;
		if (q->kick)
			continue;
		thread_worker_wait(&q->w, wait > 0 ? (uint64_t)wait : 0);
	}
	pthread_mutex_unlock(&q->w.lock);
	return NULL;
}

void later_init(struct repo *r)
{
	struct later *q = &r->later;

	thread_worker_init(&q->w);
	pthread_mutex_init(&q->flush, NULL);
	q->tail = &q->head;
	q->trim_at = clock_now_ns() + (int64_t)TRIM_MS * 1000000;
	q->ready = 1;
}

/*
 * Start the queue's thread, with q->w.lock held.  0 when it runs.  Like the
 * other helper threads, it starts when first needed, never in repo_open:
 * the daemon forks after that (fuse_daemonize), and a thread does not
 * survive a fork.
 */
static int later_spawn(struct repo *r)
{
	struct later *q = &r->later;

	return thread_worker_start(&q->w, later_thread, r);
}

/* Start the thread if it is not running, and have it look again. */
void later_arm(struct repo *r)
{
	struct later *q = &r->later;

	pthread_mutex_lock(&q->w.lock);
	if (!later_spawn(r)) {
		q->kick = 1;
		thread_worker_wake(&q->w);
	}
	pthread_mutex_unlock(&q->w.lock);
}

/* Stop the thread and write what is left. */
void later_stop(struct repo *r)
{
	struct later *q = &r->later;

	if (!q->ready)
		return;
	thread_worker_stop(&q->w);
	if (r->cat)
		repo_flush_events(r);
	pthread_mutex_destroy(&q->flush);
	thread_worker_release(&q->w);
}

/* ---- the events trail ---- */

/* Append `line` to the events of `env`: in the caller's transaction, or
 * after the queued lines of reads. */
static void store_line(struct repo *r, const char *env, const char *line)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;

	if (!in_txn) {
		/* After the reads' lines waiting before it. */
		pthread_mutex_lock(&r->later.flush);
		later_write(r);
	}
	if (catalog_event_add(r->cat, env, line, &e2))
		repo_log(r, LOG_ERR, "events of %s: %s", env,
			 cmfs_err_msg(&e2));
	else if (__atomic_add_fetch(&r->added, 1, __ATOMIC_RELAXED) ==
		 trim_every(r))
		later_arm(r);
	if (!in_txn) {
		pthread_mutex_unlock(&r->later.flush);
		/* A line alone (a refusal) is a commit too: with sync =
		 * batch only the syncing thread checkpoints, and a flood of
		 * lines without changes would grow the catalog's log for
		 * good. */
		sync_later(r);
	}
}

/* A line of the refusal gate: the end of a run, or a count. */
void gate_emit(void *arg, const char *env, const char *line, int rc)
{
	struct repo *r = arg;

	log_event(r, line, rc);
	if (env)
		store_line(r, env, line);
}

/*
 * Finish event `e` with `rc`, store it in the events of `env` (NULL: the
 * daemon's log only) and log it.  Called inside a catalog transaction,
 * the line is part of it: a change and its line commit together, and the
 * daemon's log has it once the commit succeeded (end()).  When the commit
 * fails, the caller records `e` again with the error: its line then says
 * result=refused, in events and in the log.  A refusal passes the gate
 * first (events.h): a repeat, or one past the uid's rate, is counted.
 */
void record(struct repo *r, struct event *e, const char *env, int rc,
		   const struct cmfs_err *err)
{
	const char *reason = err ? cmfs_err_msg(err) : NULL;
	const char *line = event_finish(e, rc, reason);
	int armed = 0;

	if (!line) {
		repo_log(r, LOG_ERR, "events: a line of uid %u was too long "
			 "or memory ran out", e->uid);
		return;
	}
	if (rc && !in_txn && r->gate &&
	    !events_gate_pass(r->gate, clock_now_ns(), e->uid, env, e, rc,
			      reason, gate_emit, r, &armed)) {
		if (armed)
			later_arm(r);
		return;
	}
	if (!rc && in_txn) {
		if (buf_adds(&txn_log, line))
			log_event(r, line, rc); /* no room: now */
	} else {
		log_event(r, line, rc);
	}
	if (env)
		store_line(r, env, line);
}

/*
 * Finish event `e` of a read, log it, and queue its line for the events
 * of `env`: a reader need not wait for a catalog write.
 */
void record_later(struct repo *r, struct event *e, const char *env,
			 int rc, const struct cmfs_err *err)
{
	const char *line = event_finish(e, rc, err ? cmfs_err_msg(err) : NULL);
	struct later *q = &r->later;
	struct later_line *l;
	size_t n;

	if (!line)
		return;
	n = strlen(line);
	log_event(r, line, rc);
	if (!(l = malloc(sizeof(*l) + n + 1))) {
		store_line(r, env, line); /* no queue: now */
		return;
	}
	l->next = NULL;
	snprintf(l->env, sizeof(l->env), "%s", env);
	memcpy(l->line, line, n + 1);
	pthread_mutex_lock(&q->w.lock);
	if (later_spawn(r)) {
		pthread_mutex_unlock(&q->w.lock);
		free(l);
		store_line(r, env, line); /* no thread: now */
		return;
	}
	*q->tail = l;
	q->tail = &l->next;
	if (q->n++ == 0) {
		q->since = clock_now_ns();
		thread_worker_wake(&q->w);
	}
	n = q->n;
	pthread_mutex_unlock(&q->w.lock);
	if (n >= LATER_MAX)
		repo_flush_events(r);
}

/* The names of environments with events (catalog_event_envs). */
static int keep_env(void *arg, const char *env)
{
	char name[64];

	snprintf(name, sizeof(name), "%s", env);
	return vec_push(arg, name);
}

/*
 * Retention ([events] max_rows, max_age): remove the oldest lines of each
 * environment's events, in a transaction that appends a line saying how
 * many went and why.  Each environment keeps max_rows lines with that
 * line.  Runs at open and on the later thread, never in a change's
 * transaction: a change does not wait for it.
 */
void retain(struct repo *r, int64_t now)
{
	const struct config *cfg = repo_config(r);
	uint64_t rows = cfg->events.max_rows, age = cfg->events.max_age;
	struct vec envs = VEC_INIT(64);
	struct cmfs_err err = CMFS_ERR_INIT;
	char before[40] = "";
	size_t i, n;

	__atomic_store_n(&r->added, 0, __ATOMIC_RELAXED);
	if (!rows && !age)
		return;
	if (age) {
		time_t t = (time_t)(now / 1000000000 - (int64_t)age);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(before, sizeof(before), "%Y-%m-%dT%H:%M:%S", &tm);
		n = strlen(before);
		snprintf(before + n, sizeof(before) - n, ".%03dZ",
			 (int)(now / 1000000 % 1000));
	}
	if (catalog_event_envs(r->cat, keep_env, &envs, &err)) {
		repo_log(r, LOG_ERR, "events retention: %s",
			 cmfs_err_msg(&err));
		goto out;
	}
	for (i = 0; i < envs.n; i++) {
		const char *env = (const char *)envs.v + i * 64;
		struct event ev;
		uint64_t removed = 0;
		const char *line = NULL;
		int rc;

		cmfs_err_clear(&err);
		if ((rc = begin(r, &err)))
			break;
		rc = catalog_event_trim(r->cat, env, rows ? rows - 1 : 0,
					age ? before : NULL, &removed, &err);
		event_init(&ev, now, (uint32_t)geteuid(), env, "retention");
		event_add(&ev, "object", "events");
		event_addf(&ev, "removed", "%llu", (unsigned long long)removed);
		event_addf(&ev, "max_rows", "%llu", (unsigned long long)rows);
		event_addf(&ev, "max_age", "%llus", (unsigned long long)age);
		event_add(&ev, "reason", "the oldest lines are removed first");
		if (!rc && removed && (line = event_finish(&ev, 0, NULL)))
			rc = catalog_event_add(r->cat, env, line, &err);
		rc = end(r, rc, &err);
		if (rc)
			repo_log(r, LOG_ERR, "events of %s: retention: %s", env,
				 cmfs_err_msg(&err));
		else if (line)
			log_event(r, line, 0);
		event_release(&ev);
	}
out:
	vec_release(&envs);
}

/* ---- refusals ---- */

/*
 * Keep why the last write of table `name` was refused (`msg`) on its row
 * of the catalog: what user.cmfs.error of tables/<name>.sql says, across
 * remounts, until a good write (catalog_table_put clears it in the same
 * statement), a rename onto it or its removal (the row goes).  A table
 * not (yet) in the catalog keeps nothing.  Its own transaction, after the
 * refused one rolled back; a failure here is not the caller's (the
 * refusal is in events anyway).
 */
void table_refusal(struct repo *r, const char *env, const char *name,
			  const char *msg)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct catalog_table t;

	if (!catalog_env_get(r->cat, env, &e, &err) &&
	    !catalog_table_get(r->cat, e.id, name, &t, &err))
		catalog_table_refusal_set(r->cat, t.id, msg, &err);
}

int repo_table_error(struct repo *r, const char *env, const char *name,
		     struct buf *out)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct catalog_table t;
	int rc = catalog_env_get(r->cat, env, &e, &err);

	if (!rc)
		rc = catalog_table_get(r->cat, e.id, name, &t, &err);
	if (!rc)
		rc = catalog_table_refusal_get(r->cat, t.id, out, &err);
	/* no table, or a catalog that failed: no reason to tell */
	return rc == -ENOMEM ? rc : 0;
}

void repo_refused(struct repo *r, const struct repo_who *who, const char *env,
		  const char *action, const char *object, int rc,
		  const char *reason)
{
	struct event e;
	struct cmfs_err err = CMFS_ERR_INIT;

	/* a table write refused before its text could be read */
	if (object && !strcmp(action, "table-write"))
		table_refusal(r, env, object, reason ? reason : "");

	cmfs_err_set(&err, rc, "%s", reason ? reason : "");
	event_init(&e, clock_now_ns(), who->uid, env, action);
	if (object)
		event_add(&e, "object", object);
	record(r, &e, env, rc, &err);
	event_release(&e);
}

/* ---- reading the events trail ---- */

/* Counts of the gate whose window closed: a reader sees them at once. */
static void gate_tick(struct repo *r)
{
	int64_t now = clock_now_ns(), due = events_gate_due(r->gate);

	if (due && due <= now)
		events_gate_tick(r->gate, now, 0, gate_emit, r);
}

int repo_events_size(struct repo *r, const char *env, uint64_t *out)
{
	gate_tick(r);
	repo_flush_events(r);
	return catalog_event_size(r->cat, env, out, NULL);
}

int repo_events_read(struct repo *r, const char *env, uint64_t off,
		     size_t size, struct buf *out)
{
	repo_flush_events(r);
	return catalog_event_read(r->cat, env, off, size, out, NULL);
}
