/*
 * test_localtime.c - mktime_memo() answers as the C library's mktime()
 * does, remembered or not, in a time zone with summer time.
 */
#define _DEFAULT_SOURCE /* timelocal(), setenv() */
#include "t.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "localtime.h"

/* tm fields as mktime() reads them. */
static struct tm at(int y, int mon, int d, int h, int min, int s, int dst)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = min;
	tm.tm_sec = s;
	tm.tm_isdst = dst;
	return tm;
}

/* mktime_memo(in) and the library on a copy agree, result and fields. */
static int agrees(struct tm in)
{
	struct tm a = in, b = in;
	time_t ta = mktime_memo(&a), tb = timelocal(&b);

	return ta == tb && a.tm_sec == b.tm_sec && a.tm_min == b.tm_min &&
	       a.tm_hour == b.tm_hour && a.tm_mday == b.tm_mday &&
	       a.tm_mon == b.tm_mon && a.tm_year == b.tm_year &&
	       a.tm_wday == b.tm_wday && a.tm_yday == b.tm_yday &&
	       a.tm_isdst == b.tm_isdst;
}

static void test_same_answers(void)
{
	/* Central Europe: the hour 02:00-03:00 of 29 March 2026 does not
	 * exist, that of 25 October 2026 comes twice. */
	const struct tm v[] = {
		at(2024, 1, 1, 0, 0, 0, -1),
		at(2024, 1, 1, 0, 0, 0, -1),
		at(2026, 3, 29, 2, 30, 0, -1),
		at(2026, 3, 29, 2, 30, 0, 0),
		at(2026, 3, 29, 2, 30, 0, 1),
		at(2026, 10, 25, 2, 30, 0, -1),
		at(2026, 10, 25, 2, 30, 0, 0),
		at(2026, 10, 25, 2, 30, 0, 1),
		at(2026, 10, 25, 2, 30, 0, -1),
		at(1980, 1, 1, 0, 0, 0, -1),
		at(2107, 12, 31, 23, 59, 58, -1),
		/* out of range fields, as a DOS time can hold them */
		at(2024, 13, 32, 24, 60, 62, -1),
		at(2024, 0, 0, 0, 0, 0, -1),
		at(2024, 2, 30, 31, 63, 63, -1),
	};
	size_t i, k;

	for (k = 0; k < 3; k++) /* asked again: remembered answers */
		for (i = 0; i < sizeof(v) / sizeof(*v); i++) {
			T_CHECK(agrees(v[i]));
			T_CHECK(agrees(v[i]));
		}
	/* Alternating between two times never answers with the other. */
	for (i = 0; i < 10; i++)
		T_CHECK(agrees(v[(i & 1) ? 2 : 9]));
}

/*
 * A second before the epoch is a time whose answer is -1, which is not
 * remembered (it may be a failure): asked again, and after another time,
 * the same answer.
 */
static void test_minus_one(void)
{
	struct tm before = at(1970, 1, 1, 0, 59, 59, -1), t;
	int k;

	for (k = 0; k < 2; k++) {
		t = before;
		T_INTEQ(mktime_memo(&t), -1);
		T_INTEQ(t.tm_year, 70);
		T_CHECK(agrees(before));
		T_CHECK(agrees(at(2024, 6, 1, 12, 0, 0, -1)));
	}
}

int main(void)
{
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	T_RUN(test_same_answers);
	T_RUN(test_minus_one);
	return T_DONE();
}
