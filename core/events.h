/*
 * events.h - building the logfmt lines of the audit trail.
 *
 *   time=2026-11-30T06:30:00.123Z uid=0 env=prod action=upload
 *   artifact=x.jar version=3 sha256=... result=ok
 *
 * A line is built in a struct event, then stored by the caller (repo.c
 * puts it in the catalog and hands it to the daemon's log).  Values are
 * quoted when they hold a space, '=', '"' or a control character; '"' and
 * '\' are escaped, control characters written as \n, \t or \xNN.
 */
#ifndef CMFS_EVENTS_H
#define CMFS_EVENTS_H

#include <stdint.h>

#include "buf.h"

struct event {
	struct buf line;
	int failed;		/* an append ran out of memory */
};

/* Start a line with time, uid, env and action. */
void event_init(struct event *e, int64_t now_ns, uint32_t uid,
		const char *env, const char *action);
void event_add(struct event *e, const char *key, const char *value);
void event_addf(struct event *e, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * End the line with result=ok (rc == 0) or result=refused errno=E...
 * reason="..." and a newline.  Returns the line, valid until
 * event_release(), or NULL when memory ran out.
 */
const char *event_finish(struct event *e, int rc, const char *reason);
void event_release(struct event *e);

/* "EINVAL" for EINVAL (a positive errno); "E<n>" for unknown numbers. */
const char *events_errno_name(int e);

#endif
