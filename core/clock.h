/*
 * clock.h - the wall-clock time as cmfs stamps it.
 */
#ifndef CMFS_CLOCK_H
#define CMFS_CLOCK_H

#include <stdint.h>

/*
 * The current time on CLOCK_REALTIME in ns since the epoch: what versions,
 * events, exports and fsck's repairs are stamped with.  It moves with the
 * wall time, so never use it to measure an interval (thread.h's deadlines
 * run on CLOCK_MONOTONIC).
 */
int64_t clock_now_ns(void);

#endif
