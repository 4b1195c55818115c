/*
 * localtime.h - mktime() once per distinct time.
 *
 * libzip converts each entry's DOS time with mktime(), twice with
 * ZIP_CHECKCONS (the central directory's, then the local header's), and a
 * JAR's entries nearly all carry one time (a build stamps them alike):
 * 40,000 conversions of the same few values for a 20,000-class JAR, ~4 %
 * of its inspection's instructions.  fs/mktime.c puts mktime_memo() in
 * mktime()'s place for the whole process.
 */
#ifndef CMFS_LOCALTIME_H
#define CMFS_LOCALTIME_H

#include <time.h>

/*
 * mktime(tm), from this thread's last call with the same fields when
 * there was one (the fields mktime() reads: seconds to year, and
 * tm_isdst; *tm gets the same normalised time back), else from the C
 * library.  The answer depends only on those fields and on the time
 * zone, which glibc loads once for a TZ that does not change (main()
 * sets TZ before any thread starts, and nothing sets it after).  A
 * failed conversion (-1) is not remembered.
 */
time_t mktime_memo(struct tm *tm);

#endif
