/*
 * mktime.c - the process's mktime(): the C library's, once per distinct
 * time (core/localtime.h says why: libzip's thousands of conversions of
 * one JAR's few entry times).
 *
 * Defined in the executable, it comes before the C library's in symbol
 * lookup, so libzip's calls (through its PLT) land here; the C library's
 * own conversions call its internal code and are unchanged.
 */
#include "localtime.h"

time_t mktime(struct tm *tm)
{
	return mktime_memo(tm);
}
