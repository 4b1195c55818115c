/*
 * events.c - logfmt lines for the audit trail.
 */
#include "events.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LINE_CAP (16 * 1024)

void event_init(struct event *e, int64_t now_ns, uint32_t uid,
		const char *env, const char *action)
{
	time_t secs = (time_t)(now_ns / 1000000000);
	struct tm tm;
	char t[40];

	buf_init(&e->line, LINE_CAP);
	e->failed = 0;
	gmtime_r(&secs, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	e->failed |= buf_printf(&e->line, "time=%s.%03dZ uid=%u", t,
				(int)(now_ns / 1000000 % 1000), uid) != 0;
	if (env)
		event_add(e, "env", env);
	event_add(e, "action", action);
}

/* 1 if `v` must be quoted to stay one logfmt value. */
static int needs_quotes(const char *v)
{
	if (!*v)
		return 1;
	for (; *v; v++)
		if ((unsigned char)*v <= ' ' || *v == '=' || *v == '"' ||
		    *v == '\\' || *v == 0x7f)
			return 1;
	return 0;
}

void event_add(struct event *e, const char *key, const char *value)
{
	struct buf *b = &e->line;
	const unsigned char *p;
	int rc;

	rc = buf_printf(b, " %s=", key);
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
		else
			rc = buf_addc(b, (char)*p);
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
