/*
 * events.h - building the logfmt lines of the audit trail, and the gate
 * that keeps refusals from growing it without bound.
 *
 *   time=2026-11-30T06:30:00.123Z uid=0 env=prod action=upload
 *   artifact=x.jar version=3 sha256=... result=ok
 *
 * A line is built in a struct event, then stored by the caller (repo.c
 * puts it in the catalog and hands it to the daemon's log).  Values are
 * quoted when they hold a space, '=', '"', a control character or a byte
 * that is not printable UTF-8; '"' and '\' are escaped, control
 * characters written as \n, \t or \xNN, and so is every byte of a
 * sequence that is not valid UTF-8 or that is a C1 control, a line or
 * paragraph separator or a bidirectional override (U+0080-U+009F,
 * U+2028-U+202E, U+2066-U+2069): a name a user chose cannot forge a line,
 * a key, or text that displays as something else.
 */
#ifndef CMFS_EVENTS_H
#define CMFS_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct event {
	struct buf line;
	size_t time_len;	/* bytes of "time=..." at the start */
	size_t body;		/* bytes before " result=", once finished */
	uint32_t uid;		/* as given to event_init() */
	int failed;		/* an append ran out of memory */
};

/*
 * What env= says of an event outside any environment (`env` NULL: a
 * refusal at the root or in envs/ itself); such a line goes to the daemon
 * log only.  No environment can be named so (name_env_check()).
 */
#define EVENTS_NO_ENV "-"

/* Start a line with time, uid, env (EVENTS_NO_ENV when NULL) and action:
 * every line has all four. */
void event_init(struct event *e, int64_t now_ns, uint32_t uid,
		const char *env, const char *action);
void event_add(struct event *e, const char *key, const char *value);
void event_addf(struct event *e, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * End the line with result=ok (rc == 0) or result=refused errno=E...
 * reason="..." and a newline.  Returns the line, valid until
 * event_release(), or NULL when memory ran out.  Finishing again replaces
 * the result (a change whose commit failed becomes its refusal): a line
 * never holds two results.
 */
const char *event_finish(struct event *e, int rc, const char *reason);
void event_release(struct event *e);

/*
 * The line without its time and result: "uid=... env=... action=...
 * k=v ...", `*len` bytes (not NUL-terminated) of a finished event.  Two
 * refusals with the same key and errno are the same refusal.
 */
const char *event_key(const struct event *e, size_t *len);

/* "EINVAL" for EINVAL (a positive errno); "E<n>" for unknown numbers. */
const char *events_errno_name(int e);

/*
 * The gate of refusal lines (struct events_gate).  A refusal with the same
 * key, errno and reason as a run its uid has open in its environment (a
 * refusal that says something new is written), within `window_ns` of the
 * first of that run, is counted, not written; the run ends in one line
 * "... repeated=N in=Ts" (with the first line's fields and reason) when
 * its window closes, or when a fifth kind of refusal needs its place (a
 * uid has four runs open at most: loops that interleave, as a kernel
 * that looks a name up again between two opens, stay apart).  Every
 * line a (uid, environment) writes takes a token of its bucket (`rate` a
 * second, at most `burst`) and one of the bucket of all uids together
 * (`all_rate`, `all_burst`); a refusal without tokens is counted, and the
 * count written as one "action=rate-limit ... suppressed=N" line once a
 * window after the first such refusal.  At most `max_whos` (uid,
 * environment) pairs are kept; the one used least recently is dropped and
 * what it had counted goes to its environment's count of "others", itself
 * written once a window without a token.  Nothing is dropped uncounted.
 *
 * Lines go out through an events_emit_fn, called with the gate's lock
 * held (it must not call into the gate); `env` is NULL for refusals
 * outside an environment (the daemon log only).  Times are the caller's
 * (nanoseconds of CLOCK_REALTIME in repo.c; any clock in tests).  All
 * functions may be called from any thread.
 */
struct events_gate;

struct events_gate_conf {
	int64_t window_ns;
	double rate, burst;
	double all_rate, all_burst;
	size_t max_whos;
};

typedef void events_emit_fn(void *arg, const char *env, const char *line,
			    int rc);

/* NULL when memory ran out.  Free with events_gate_free() (NULL: no-op). */
struct events_gate *events_gate_new(const struct events_gate_conf *conf);
void events_gate_free(struct events_gate *g);

/*
 * The refusal `e` (finished with rc < 0 and `reason`) of `uid` in `env`
 * (NULL: none), at `now`.  Emits what must come before it (the end of the
 * uid's previous run).  1: write `e` now; 0: it was counted.  `*armed` is
 * set to 1 when a count began that a later events_gate_tick() must write
 * (the caller's timer should look at events_gate_due()).
 */
int events_gate_pass(struct events_gate *g, int64_t now, uint32_t uid,
		     const char *env, const struct event *e, int rc,
		     const char *reason, events_emit_fn *emit, void *arg,
		     int *armed);

/*
 * Write the counts whose window closed by `now` (all of them, `all`: at
 * unmount), and forget (uid, environment) pairs with nothing pending.
 */
void events_gate_tick(struct events_gate *g, int64_t now, int all,
		      events_emit_fn *emit, void *arg);

/* The earliest time a tick has a count to write, or 0: none. */
int64_t events_gate_due(struct events_gate *g);

/* (uid, environment) pairs the gate holds now: for tests. */
size_t events_gate_whos(struct events_gate *g);

#endif
