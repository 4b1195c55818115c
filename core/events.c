/*
 * events.c - logfmt lines for the audit trail, and the gate that bounds
 * what refusals write to it.
 *
 * Anyone may be refused, as often as a loop allows: a user without rights
 * looping `cat events` writes a line per refusal.  A refusal that only
 * repeats the one before it tells nothing new but its count, so the gate
 * (struct events_gate, see events.h) counts repeats and writes the count
 * once a window; and a uid that is refused many different ways gets a
 * bucket of lines, the rest counted.  The counts are written: a rule that
 * costs the one who breaks it nothing is no rule, and an audit trail that
 * drops what it cannot afford without saying so would lie.
 */
#include "events.h"
#include "hash.h"
#include "utf8.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#define LINE_CAP (16 * 1024)
#define ENV_LEN 64 /* an environment name is 1-63 bytes (name.c) */
#define OTHERS_MAX 64 /* environments with their own "others" count */
#define RUNS 4 /* runs a uid has open in an environment at once */

/*
 * Append " time=...Z" for `now_ns` (without the space at the start).  The
 * date and time of the second are made once a second per thread (lines
 * come many a second; the calendar is most of a line's formatting).
 */
static int add_time(struct buf *b, int64_t now_ns)
{
	static _Thread_local time_t last = -1;
	static _Thread_local char sec[40];
	time_t secs = (time_t)(now_ns / 1000000000);
	int ms = (int)(now_ns / 1000000 % 1000);
	struct tm tm;
	char t[48];
	size_t n;

	if (now_ns < 0)
		last = -1; /* before 1970: not kept, as rare as it is odd */
	if (secs != last || now_ns < 0) {
		gmtime_r(&secs, &tm);
		strftime(sec, sizeof(sec), "time=%Y-%m-%dT%H:%M:%S", &tm);
		last = now_ns < 0 ? -1 : secs;
	}
	if (ms < 0)
		return buf_printf(b, "%s.%03dZ", sec, ms);
	n = strlen(sec);
	memcpy(t, sec, n);
	t[n] = '.';
	t[n + 1] = (char)('0' + ms / 100);
	t[n + 2] = (char)('0' + ms / 10 % 10);
	t[n + 3] = (char)('0' + ms % 10);
	t[n + 4] = 'Z';
	return buf_add(b, t, n + 5);
}

void event_init(struct event *e, int64_t now_ns, uint32_t uid,
		const char *env, const char *action)
{
	buf_init(&e->line, LINE_CAP);
	e->failed = add_time(&e->line, now_ns) != 0;
	e->time_len = e->line.len;
	e->body = 0;
	e->uid = uid;
	e->failed |= buf_printf(&e->line, " uid=%u", uid) != 0;
	/* Every line says where: "-" is no environment's name (name.c). */
	event_add(e, "env", env ? env : EVENTS_NO_ENV);
	event_add(e, "action", action);
}

/*
 * The bytes of the UTF-8 character at `p` (a byte >= 0x80) when it may be
 * written as it is; 0 when it must be escaped: not valid UTF-8 (a stray
 * or overlong byte, a surrogate, past U+10FFFF, cut short) or a character
 * that changes how the line displays (C1 controls, line and paragraph
 * separators, bidirectional marks and overrides).
 */
static size_t utf8_plain(const unsigned char *p)
{
	size_t n = 0;
	long c = utf8_next(p, 4, &n); /* stops at the NUL at the end */

	if (c < 0)
		return 0;
	if (c <= 0x9f || c == 0x61c || c == 0x200e || c == 0x200f ||
	    (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069))
		return 0;
	return n;
}

/* 1 if `v` must be quoted to stay one logfmt value. */
static int needs_quotes(const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	size_t n;

	if (!*p)
		return 1;
	for (; *p; p++) {
		if (*p <= ' ' || *p == '=' || *p == '"' || *p == '\\' ||
		    *p == 0x7f)
			return 1;
		if (*p >= 0x80) {
			if (!(n = utf8_plain(p)))
				return 1;
			p += n - 1;
		}
	}
	return 0;
}

void event_add(struct event *e, const char *key, const char *value)
{
	struct buf *b = &e->line;
	const unsigned char *p;
	size_t n;
	int rc;

	/* " key=": appended as it is, not formatted (a line has ten). */
	rc = buf_addc(b, ' ');
	rc |= buf_adds(b, key);
	rc |= buf_addc(b, '=');
	if (!needs_quotes(value)) {
		rc |= buf_adds(b, value);
		e->failed |= rc != 0;
		return;
	}
	rc |= buf_addc(b, '"');
	for (p = (const unsigned char *)value; *p && !rc; p++) {
		if (*p == '"' || *p == '\\')
			rc = buf_printf(b, "\\%c", *p);
		else if (*p == '\n')
			rc = buf_adds(b, "\\n");
		else if (*p == '\t')
			rc = buf_adds(b, "\\t");
		else if (*p < ' ' || *p == 0x7f)
			rc = buf_printf(b, "\\x%02x", *p);
		else if (*p < 0x80)
			rc = buf_addc(b, (char)*p);
		else if ((n = utf8_plain(p)) != 0)
			rc = buf_add(b, p, n), p += n - 1;
		else
			rc = buf_printf(b, "\\x%02x", *p);
	}
	rc |= buf_addc(b, '"');
	e->failed |= rc != 0;
}

void event_addf(struct event *e, const char *key, const char *fmt, ...)
{
	char v[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	event_add(e, key, v);
}

const char *event_finish(struct event *e, int rc, const char *reason)
{
	if (e->body) {
		/* Finished before: the new result replaces the old one. */
		e->line.len = e->body;
		if (e->line.data)
			e->line.data[e->body] = '\0';
	}
	e->body = e->line.len;
	if (rc == 0) {
		event_add(e, "result", "ok");
	} else {
		event_add(e, "result", "refused");
		event_add(e, "errno", events_errno_name(-rc));
		event_add(e, "reason", reason && *reason ? reason
							 : strerror(-rc));
	}
	e->failed |= buf_addc(&e->line, '\n') != 0;
	return e->failed ? NULL : buf_str(&e->line);
}

void event_release(struct event *e)
{
	buf_release(&e->line);
}

const char *event_key(const struct event *e, size_t *len)
{
	size_t end = e->body ? e->body : e->line.len;
	size_t from = e->time_len + 1 < end ? e->time_len + 1 : end;

	*len = end - from;
	return e->line.data ? e->line.data + from : "";
}

const char *events_errno_name(int e)
{
	static const struct {
		int e;
		const char *name;
	} names[] = {
		{ EPERM, "EPERM" },	    { ENOENT, "ENOENT" },
		{ EIO, "EIO" },		    { E2BIG, "E2BIG" },
		{ ENOEXEC, "ENOEXEC" },	    { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" },	    { EEXIST, "EEXIST" },
		{ EXDEV, "EXDEV" },	    { ENOTDIR, "ENOTDIR" },
		{ EISDIR, "EISDIR" },	    { EINVAL, "EINVAL" },
		{ EFBIG, "EFBIG" },	    { ENOSPC, "ENOSPC" },
		{ EROFS, "EROFS" },	    { EMLINK, "EMLINK" },
		{ ENAMETOOLONG, "ENAMETOOLONG" },
		{ ENOTEMPTY, "ENOTEMPTY" }, { ENODATA, "ENODATA" },
		{ ENOPKG, "ENOPKG" },	    { ENOTUNIQ, "ENOTUNIQ" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { EDQUOT, "EDQUOT" },
		{ EBUSY, "EBUSY" },	    { EAGAIN, "EAGAIN" },
		{ ERANGE, "ERANGE" },	    { EPROTO, "EPROTO" },
	};
	static _Thread_local char other[16];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	snprintf(other, sizeof(other), "E%d", e);
	return other;
}

/* ---- the gate ---- */

/* Refusals with key `key`, errno `rc` and `reason` since `first`. */
struct run {
	char *key;		/* NULL: no run */
	size_t klen;
	char *reason;
	int rc;
	int64_t first, last;
	uint64_t count;	/* repeats after the first, not written */
};

/* The gate's key of (uid, environment): the uid's bytes, whether there
 * is an environment, and its name. */
#define WHO_KEY (sizeof(uint32_t) + 1 + ENV_LEN)

/* What the gate knows of one uid in one environment. */
struct who {
	char key[WHO_KEY];	/* its key in the gate's table */
	size_t klen;
	TAILQ_ENTRY(who) lru; /* the gate's, least recently used first */
	uint32_t uid;
	int has_env;
	char env[ENV_LEN];
	double tokens;		/* the bucket, as of `filled` */
	int64_t filled;
	/* Interleaved loops (a kernel that looks a name up again between
	 * two opens) keep their runs apart. */
	struct run runs[RUNS];
	/* Refusals not written for want of a token, since `held_since`. */
	uint64_t held;
	int64_t held_since, held_last;
	int held_rc;
};

/* Counts of (uid, environment) pairs the gate no longer holds. */
struct others {
	int has_env;
	char env[ENV_LEN];
	uint32_t uid;		/* the last one counted */
	uint64_t held, uids;
	int64_t since, last;
	int rc;
};

struct events_gate {
	pthread_mutex_t lock;	/* guards everything below */
	struct events_gate_conf c;
	struct hash tab;	/* who->key -> who, room for max_whos */
	TAILQ_HEAD(whos, who) lru; /* least recently used first */
	size_t n;
	double tokens;		/* the bucket of all uids */
	int64_t filled;
	struct others others[OTHERS_MAX + 1];
	size_t nothers;
};

struct events_gate *events_gate_new(const struct events_gate_conf *conf)
{
	struct events_gate *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->c = *conf;
	TAILQ_INIT(&g->lru);
	if (!g->c.max_whos)
		g->c.max_whos = 1;
	if (hash_reserve(&g->tab, g->c.max_whos)) {
		free(g);
		return NULL;
	}
	g->tokens = g->c.all_burst;
	g->filled = INT64_MIN;
	pthread_mutex_init(&g->lock, NULL);
	return g;
}

static void run_clear(struct run *u)
{
	free(u->key);
	free(u->reason);
	memset(u, 0, sizeof(*u));
}

static void who_free(struct who *w)
{
	size_t i;

	for (i = 0; i < RUNS; i++)
		run_clear(&w->runs[i]);
	free(w);
}

void events_gate_free(struct events_gate *g)
{
	struct who *w;

	if (!g)
		return;
	while ((w = TAILQ_FIRST(&g->lru))) {
		TAILQ_REMOVE(&g->lru, w, lru);
		who_free(w);
	}
	hash_release(&g->tab);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/* Add what `rate` gives from `*filled` to `now`, up to `burst`. */
static void refill(double *tokens, int64_t *filled, double rate, double burst,
		   int64_t now)
{
	if (*filled != INT64_MIN && now > *filled)
		*tokens += rate * (double)(now - *filled) / 1e9;
	if (*filled == INT64_MIN || now > *filled)
		*filled = now;
	if (*tokens > burst)
		*tokens = burst;
}

/* 1 and a token of `w`'s bucket and of all uids' taken, or 0: none. */
static int take(struct events_gate *g, struct who *w, int64_t now)
{
	refill(&w->tokens, &w->filled, g->c.rate, g->c.burst, now);
	refill(&g->tokens, &g->filled, g->c.all_rate, g->c.all_burst, now);
	if (w->tokens < 1 || g->tokens < 1)
		return 0;
	w->tokens -= 1;
	g->tokens -= 1;
	return 1;
}

/* Whole seconds from `a` to `b`, rounded up. */
static long long secs(int64_t a, int64_t b)
{
	return b > a ? (long long)((b - a + 999999999) / 1000000000) : 0;
}

/* Emit a line built in `e` (finished with rc and reason). */
static void emit_event(struct event *e, int rc, const char *reason,
		       const char *env, events_emit_fn *emit, void *arg)
{
	const char *line = event_finish(e, rc, reason);

	if (line)
		emit(arg, env, line, rc);
	event_release(e);
}

/* The line that ends run `u` of `w`: key, repeated=N in=Ts, reason. */
static void emit_run(const struct who *w, const struct run *u, int64_t now,
		     events_emit_fn *emit, void *arg)
{
	struct event e;

	buf_init(&e.line, LINE_CAP);
	e.failed = add_time(&e.line, now) != 0;
	e.time_len = e.line.len;
	e.body = 0;
	e.uid = w->uid;
	e.failed |= buf_addc(&e.line, ' ') != 0;
	e.failed |= buf_add(&e.line, u->key, u->klen) != 0;
	event_addf(&e, "repeated", "%llu", (unsigned long long)u->count);
	event_addf(&e, "in", "%llds", secs(u->first, u->last));
	emit_event(&e, u->rc, u->reason, w->has_env ? w->env : NULL, emit,
		   arg);
}

/* The line of refusals of `w` that found no token. */
static void emit_held(struct events_gate *g, struct who *w,
		      events_emit_fn *emit, void *arg)
{
	struct event e;
	char why[200];

	event_init(&e, w->held_last, w->uid, w->has_env ? w->env : NULL,
		   "rate-limit");
	event_add(&e, "object", "refusals");
	event_addf(&e, "suppressed", "%llu", (unsigned long long)w->held);
	event_addf(&e, "in", "%llds", secs(w->held_since, w->held_last));
	snprintf(why, sizeof(why),
		 "%llu refusals of uid %u were counted, not written one by "
		 "one: over the limit of %g a second (the last: %s)",
		 (unsigned long long)w->held, w->uid, g->c.rate,
		 events_errno_name(-w->held_rc));
	emit_event(&e, w->held_rc, why, w->has_env ? w->env : NULL, emit,
		   arg);
	w->held = 0;
}

/* The slot of others' counts for the environment of `w`. */
static struct others *others_of(struct events_gate *g, const struct who *w)
{
	struct others *o;
	size_t i;

	for (i = 0; i < g->nothers; i++) {
		o = &g->others[i];
		if (o->has_env == w->has_env &&
		    (!w->has_env || !strcmp(o->env, w->env)))
			return o;
	}
	/* The last slot is kept for refusals outside an environment (and
	 * for the environments past OTHERS_MAX: the daemon log has them). */
	if (g->nothers < OTHERS_MAX || !w->has_env) {
		o = &g->others[g->nothers++];
		memset(o, 0, sizeof(*o));
		o->has_env = w->has_env;
		snprintf(o->env, sizeof(o->env), "%s", w->env);
		return o;
	}
	for (i = 0; i < g->nothers; i++)
		if (!g->others[i].has_env)
			return &g->others[i];
	o = &g->others[g->nothers++];
	memset(o, 0, sizeof(*o));
	return o;
}

/* Move `n` unwritten refusals of `w` (the last at `last`) to others. */
static void fold(struct events_gate *g, const struct who *w, uint64_t n,
		 int64_t since, int64_t last, int rc)
{
	struct others *o;

	if (!n)
		return;
	o = others_of(g, w);
	if (!o->held || since < o->since)
		o->since = since;
	if (last > o->last)
		o->last = last;
	o->held += n;
	o->uids++;
	o->uid = w->uid;
	o->rc = rc;
}

static void emit_others(struct events_gate *g, struct others *o,
			events_emit_fn *emit, void *arg)
{
	struct event e;
	char why[200];

	event_init(&e, o->last, o->uid, o->has_env ? o->env : NULL,
		   "rate-limit");
	event_add(&e, "object", "refusals");
	event_addf(&e, "suppressed", "%llu", (unsigned long long)o->held);
	event_addf(&e, "uids", "%llu", (unsigned long long)o->uids);
	event_addf(&e, "in", "%llds", secs(o->since, o->last));
	snprintf(why, sizeof(why),
		 "%llu refusals of %llu uid(s), the last %u, were counted, "
		 "not written one by one: over the limit of %g a second "
		 "of all uids together", (unsigned long long)o->held,
		 (unsigned long long)o->uids, o->uid, g->c.all_rate);
	emit_event(&e, o->rc, why, o->has_env ? o->env : NULL, emit, arg);
	o->held = o->uids = 0;
}

/* End run `u` of `w`: its count written (or held), its key forgotten. */
static void close_run(struct events_gate *g, struct who *w, struct run *u,
		      int64_t now, int force, events_emit_fn *emit, void *arg)
{
	if (!u->key)
		return;
	if (u->count && (force || take(g, w, now))) {
		emit_run(w, u, now, emit, arg);
	} else if (u->count) {
		if (!w->held || u->first < w->held_since)
			w->held_since = u->first;
		w->held += u->count;
		if (u->last > w->held_last)
			w->held_last = u->last;
		w->held_rc = u->rc;
	}
	run_clear(u);
}

/* Counts of the runs of `w` not written, and the span they cover. */
static uint64_t run_counts(const struct who *w, int64_t *since,
			   int64_t *last, int *rc)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < RUNS; i++) {
		const struct run *u = &w->runs[i];

		if (!u->key || !u->count)
			continue;
		if (u->first < *since)
			*since = u->first;
		if (u->last > *last)
			*last = u->last;
		*rc = u->rc;
		n += u->count;
	}
	return n;
}

/* 1 if `w` has a run open. */
static int has_runs(const struct who *w)
{
	size_t i;

	for (i = 0; i < RUNS; i++)
		if (w->runs[i].key)
			return 1;
	return 0;
}

/* Write the key of (uid, env) (env NULL: none) into k; its length. */
static size_t who_key(char k[WHO_KEY], uint32_t uid, const char *env)
{
	size_t n = env ? strnlen(env, ENV_LEN - 1) : 0;

	memcpy(k, &uid, sizeof(uid));
	k[sizeof(uid)] = env != NULL;
	if (n)
		memcpy(k + sizeof(uid) + 1, env, n);
	return sizeof(uid) + 1 + n;
}

/* Forget `w`, its counts moved to others (unless `quiet`: none left). */
static void drop(struct events_gate *g, struct who *w)
{
	int64_t since = w->held ? w->held_since : INT64_MAX;
	int64_t last = w->held ? w->held_last : INT64_MIN;
	int rc = w->held_rc;
	uint64_t n = run_counts(w, &since, &last, &rc);

	fold(g, w, w->held + n, since, last, rc);
	hash_del(&g->tab, w->key, w->klen);
	TAILQ_REMOVE(&g->lru, w, lru);
	g->n--;
	who_free(w);
}

/* The entry of (uid, env), made (and the oldest dropped) when missing. */
static struct who *who_get(struct events_gate *g, uint32_t uid,
			   const char *env, int64_t now)
{
	char k[WHO_KEY];
	size_t klen = who_key(k, uid, env);
	uintptr_t v;
	struct who *w;

	if (hash_get(&g->tab, k, klen, &v)) {
		w = (struct who *)v;
		TAILQ_REMOVE(&g->lru, w, lru);
		TAILQ_INSERT_TAIL(&g->lru, w, lru);
		return w;
	}
	if (g->n >= g->c.max_whos && !TAILQ_EMPTY(&g->lru))
		drop(g, TAILQ_FIRST(&g->lru));
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->uid = uid;
	w->has_env = !!env;
	snprintf(w->env, sizeof(w->env), "%s", env ? env : "");
	w->tokens = g->c.burst;
	w->filled = now;
	memcpy(w->key, k, klen);
	w->klen = klen;
	/* Room for max_whos was made at the start: this cannot fail. */
	hash_put(&g->tab, w->key, w->klen, (uintptr_t)w);
	TAILQ_INSERT_TAIL(&g->lru, w, lru);
	g->n++;
	return w;
}

int events_gate_pass(struct events_gate *g, int64_t now, uint32_t uid,
		     const char *env, const struct event *e, int rc,
		     const char *reason, events_emit_fn *emit, void *arg,
		     int *armed)
{
	struct who *w;
	struct run *u, *slot = NULL;
	const char *key;
	size_t klen, i;
	int write = 1;

	key = event_key(e, &klen);
	if (!reason)
		reason = "";
	pthread_mutex_lock(&g->lock);
	w = who_get(g, uid, env, now);
	if (!w)
		goto out; /* no memory to count it: write it */
	for (i = 0; i < RUNS; i++) {
		u = &w->runs[i];
		if (u->key && now - u->first >= g->c.window_ns)
			close_run(g, w, u, now, 0, emit, arg);
		if (!u->key) {
			slot = slot ? slot : u;
			continue;
		}
		if (u->klen == klen && !memcmp(u->key, key, klen) &&
		    u->rc == rc && !strcmp(u->reason, reason)) {
			if (u->count++ == 0)
				*armed = 1;
			u->last = now;
			write = 0;
			goto out;
		}
	}
	if (!slot) { /* all taken: the oldest run ends */
		slot = &w->runs[0];
		for (i = 1; i < RUNS; i++)
			if (w->runs[i].first < slot->first)
				slot = &w->runs[i];
		close_run(g, w, slot, now, 0, emit, arg);
	}
	slot->key = malloc(klen ? klen : 1);
	slot->reason = strdup(reason);
	if (slot->key && slot->reason) {
		memcpy(slot->key, key, klen);
		slot->klen = klen;
		slot->rc = rc;
		slot->first = slot->last = now;
	} else {
		run_clear(slot);
	}
	if (take(g, w, now))
		goto out;
	if (w->held++ == 0) {
		w->held_since = now;
		*armed = 1;
	}
	w->held_last = now;
	w->held_rc = rc;
	write = 0;
out:
	pthread_mutex_unlock(&g->lock);
	return write;
}

void events_gate_tick(struct events_gate *g, int64_t now, int all,
		      events_emit_fn *emit, void *arg)
{
	int64_t win = g->c.window_ns;
	struct who *w, *next;
	size_t i;

	pthread_mutex_lock(&g->lock);
	for (w = TAILQ_FIRST(&g->lru); w; w = next) {
		next = TAILQ_NEXT(w, lru);
		for (i = 0; i < RUNS; i++)
			if (w->runs[i].key &&
			    (all || now - w->runs[i].first >= win))
				close_run(g, w, &w->runs[i], now, all, emit,
					  arg);
		if (w->held && (all || now - w->held_since >= win)) {
			if (all || take(g, w, now)) {
				emit_held(g, w, emit, arg);
			} else {
				fold(g, w, w->held, w->held_since,
				     w->held_last, w->held_rc);
				w->held = 0;
			}
		}
		refill(&w->tokens, &w->filled, g->c.rate, g->c.burst, now);
		if (!has_runs(w) && !w->held && w->tokens >= g->c.burst)
			drop(g, w); /* nothing to remember */
	}
	for (i = 0; i < g->nothers; i++)
		if (g->others[i].held &&
		    (all || now - g->others[i].since >= win))
			emit_others(g, &g->others[i], emit, arg);
	pthread_mutex_unlock(&g->lock);
}

int64_t events_gate_due(struct events_gate *g)
{
	int64_t due = 0, t;
	struct who *w;
	size_t i;

#define EARLIER(x) (t = (x), due = !due || t < due ? t : due)
	pthread_mutex_lock(&g->lock);
	TAILQ_FOREACH(w, &g->lru, lru) {
		for (i = 0; i < RUNS; i++)
			if (w->runs[i].key && w->runs[i].count)
				EARLIER(w->runs[i].first + g->c.window_ns);
		if (w->held)
			EARLIER(w->held_since + g->c.window_ns);
	}
	for (i = 0; i < g->nothers; i++)
		if (g->others[i].held)
			EARLIER(g->others[i].since + g->c.window_ns);
	pthread_mutex_unlock(&g->lock);
#undef EARLIER
	return due;
}

size_t events_gate_whos(struct events_gate *g)
{
	size_t n;

	pthread_mutex_lock(&g->lock);
	n = g->n;
	pthread_mutex_unlock(&g->lock);
	return n;
}
