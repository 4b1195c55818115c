/*
 * clock.c - the wall-clock time as cmfs stamps it.
 */
#include "clock.h"

#include <time.h>

int64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
