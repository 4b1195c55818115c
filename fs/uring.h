/*
 * uring.h - FUSE requests over io_uring (Linux 6.14 and later), one ring
 * per CPU: a request is answered on the CPU its caller runs on.
 *
 * Contract: used by backing.c alone (backing.h is the seam).  Started
 * once INIT's reply asked for io_uring; each request that comes through
 * a ring goes to libfuse's fuse_session_process_buf() as if read from
 * /dev/fuse, and its reply comes back through uring_reply().  Until
 * every CPU has an entry, and for what the kernel never sends through a
 * ring, /dev/fuse serves.  Kept while Debian's libfuse lacks io_uring
 * (3.18): the only road to lower per-request latency here.  See uring.c.
 */
#ifndef CMFS_FS_URING_H
#define CMFS_FS_URING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct cmfs;
struct uring;

/*
 * INIT's reply has gone to the kernel, asking for io_uring: register the
 * rings' entries (max_payload: the largest request or reply the kernel
 * will pass, from the reply's max_write and max_pages).  Until every CPU
 * has an entry the kernel keeps using /dev/fuse; a failure is logged and
 * leaves it so.  0, or -errno when nothing could be started.
 */
int uring_start(struct cmfs *c, size_t max_payload);

/*
 * A reply written by libfuse: if it answers a request that came through a
 * ring, hand it to that ring and return its length (or -errno); else
 * return 0 and the caller writes it to /dev/fuse.
 */
ssize_t uring_reply(struct cmfs *c, const struct iovec *iov, int count);

/* After the unmount: stop and join the rings' threads, log what they
 * served.  Safe when uring_start() never ran. */
void uring_stop(struct cmfs *c);

#endif
