/*
 * backing.h - the one seam between cmfs and what the kernel offers beyond
 * libfuse 3.14: reads of committed versions handed to the kernel (FUSE
 * passthrough, Linux 6.9 and later), shared mmap of direct-I/O files, and
 * requests over io_uring (Linux 6.14 and later, uring.h).
 *
 * ops.c and main.c use only this header.  Behind it, backing.c rewrites
 * INIT's reply and carries replies to the rings, uring.c serves the rings
 * and kproto.h spells out the protocol that Debian 12's headers lack.
 * When the distribution's libfuse has them (3.17 passthrough, 3.18
 * io_uring), those three files give way to libfuse's own calls behind the
 * same functions, and nothing above this header changes.  Every feature
 * is optional: the mount works, through /dev/fuse, without any of them.
 */
#ifndef CMFS_FS_BACKING_H
#define CMFS_FS_BACKING_H

#include <stdint.h>

#include <fuse_lowlevel.h>

struct cmfs;
struct node;

/* What this mount knows of passthrough; lives in struct cmfs. */
struct backing {
	int want;	      /* [mount] passthrough = auto, and root */
	const char *why;      /* why not, when not `want` */
	uint32_t depth;	      /* the stack depth asked for at INIT */
	int fd;		      /* the session's /dev/fuse */
	int init_seen;	      /* INIT was read (atomic) */
	int init_answered;    /* its reply went through ask() (atomic) */
	uint64_t init_unique; /* its unique */
	int offered;	      /* the kernel offered passthrough at INIT */
	int on;		      /* INIT's reply asked for it (atomic) */
	int refused;	      /* the kernel refused a backing file (atomic) */
	int dio_mmap_offered; /* ... offered FUSE_DIRECT_IO_ALLOW_MMAP */
	int dio_mmap;	      /* INIT's reply asked for it (atomic) */
	int uring_want;	      /* [mount] io_uring = auto: 1; off: 0; -s: -1 */
	int uring_offered;    /* the kernel offered FUSE over io_uring */
	int uring_asked;      /* INIT's reply asked for it */
};

/*
 * After fuse_session_mount(): route the session's device I/O through
 * backing.c, so that INIT asks for what the kernel offers and libfuse
 * 3.14 cannot ask for: passthrough, unless `want` is 0 or the daemon is
 * not root (the daemon log says which), shared mmap of direct-I/O files,
 * and requests over io_uring (uring.c) unless `uring` is 0 ([mount]
 * io_uring = off) or -1 (-s).  The mount works without any of them.
 */
void backing_attach(struct cmfs *c, int want, int uring);

/* After the unmount: stop what backing_attach() started (the rings'
 * threads, which log what they served).  Safe when it started nothing. */
void backing_detach(struct cmfs *c);

/* INIT's reply asked for shared mmap of direct-I/O files (Linux 6.6 and
 * later): an upload can be written with direct I/O and still be mapped
 * MAP_SHARED.  0 before INIT's reply. */
int backing_dio_mmap(const struct cmfs *c);

/* INIT's reply will ask for requests over io_uring: wanted ([mount]
 * io_uring = auto, not -s) and offered.  Known once INIT is read. */
int backing_uring_wanted(const struct cmfs *c);

/*
 * A reader opens node `n` (a version), whose blob is open as `fd`: the
 * backing id its open reply carries, or 0 when its reads go through the
 * daemon.  Sets *counted when the handle must be given back with
 * backing_put_locked() at its release.  Takes the path table's lock.
 */
int32_t backing_get(struct cmfs *c, struct node *n, int fd, int *counted);

/* A handle that backing_get() counted is released.  The path table's
 * lock is held by the caller. */
void backing_put_locked(struct cmfs *c, struct node *n);

/* fuse_reply_open(), carrying backing id `id` when it is not 0. */
int backing_reply_open(fuse_req_t req, const struct fuse_file_info *fi,
		       int32_t id);

#endif
