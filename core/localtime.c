/*
 * localtime.c - see localtime.h.
 */
#define _DEFAULT_SOURCE /* timelocal() */
#include "localtime.h"

struct memo {
	int have;
	struct tm in, out; /* the fields asked for, and the answer's */
	time_t t;
};

static _Thread_local struct memo last;

static int same_fields(const struct tm *a, const struct tm *b)
{
	return a->tm_sec == b->tm_sec && a->tm_min == b->tm_min &&
	       a->tm_hour == b->tm_hour && a->tm_mday == b->tm_mday &&
	       a->tm_mon == b->tm_mon && a->tm_year == b->tm_year &&
	       a->tm_isdst == b->tm_isdst;
}

time_t mktime_memo(struct tm *tm)
{
	struct memo *m = &last;

	if (m->have && same_fields(tm, &m->in)) {
		*tm = m->out;
		return m->t;
	}
	m->in = *tm;
	/* glibc's mktime() under its other name: timelocal() is an alias
	 * of the same code, so this calls no mktime() of ours. */
	m->t = timelocal(tm);
	m->out = *tm;
	m->have = m->t != (time_t)-1;
	return m->t;
}
