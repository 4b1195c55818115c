/*
 * tsan.h - the ordering of the FUSE channel, told to ThreadSanitizer.
 *
 * The kernel sends a request only after the replies it depends on: a
 * RELEASE after the reply to every READ of the handle, a FORGET after the
 * reply that handed out the reference, a WRITE after the reply to the
 * OPEN that made its handle.  ThreadSanitizer learns that order from
 * read(2) and writev(2) on /dev/fuse, as for any file descriptor, but not
 * from splice(2) nor from the io_uring rings' shared memory (uring.c):
 * there, a handle freed at its RELEASE or a node at its FORGET looked
 * unordered against the request that used it before replying.
 *
 * So every reply, however it goes, calls tsan_reply() before the kernel
 * can see it, and every request, however it comes, tsan_request() before
 * libfuse processes it, on the mount's struct cmfs: the channel then
 * orders requests as /dev/fuse does in ThreadSanitizer's eyes, whichever
 * way they travel.  Requests that run at the same time stay unordered, so
 * races between them are still reported.  Outside a ThreadSanitizer build
 * both are nothing.
 */
#ifndef CMFS_FS_TSAN_H
#define CMFS_FS_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define CMFS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CMFS_TSAN 1
#endif
#endif

#ifdef CMFS_TSAN
#include <sanitizer/tsan_interface.h>

static inline void tsan_reply(void *chan)
{
	__tsan_release(chan);
}

static inline void tsan_request(void *chan)
{
	__tsan_acquire(chan);
}
#else
static inline void tsan_reply(void *chan)
{
	(void)chan;
}

static inline void tsan_request(void *chan)
{
	(void)chan;
}
#endif

#endif
