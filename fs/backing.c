/*
 * backing.c - reads of committed versions handed to the kernel.
 *
 * A version's bytes never change, and they are one plain file in the
 * store.  Since Linux 6.9 a FUSE daemon can name such a file when it
 * answers an open (FOPEN_PASSTHROUGH): the kernel then reads and maps it
 * itself.  No READ request reaches the daemon, and the page cache is the
 * store file's own, so a warm read of a version costs what a read of the
 * store's file costs (FUSE's own cache holds small pages: about half the
 * speed on the machines we measured; bench/findings.md).
 *
 * libfuse 3.14 (Debian 12) predates the feature: it neither asks for it
 * at INIT nor has a field for a backing id in its open reply.  Both are
 * part of the kernel's protocol (7.40), so this file adds them itself,
 * through libfuse's custom I/O hooks, which see every request read and
 * every reply written:
 *   - the kernel's INIT request tells whether passthrough is offered;
 *   - the reply to it gets FUSE_PASSTHROUGH and a stack depth;
 *   - the reply to an open that this very thread is sending (set just
 *     before by backing_reply_open()) gets FOPEN_PASSTHROUGH and the id.
 * Everything else is read and written unchanged.
 *
 * The same hooks ask, at INIT, for FUSE_DIRECT_IO_ALLOW_MMAP (Linux 6.6,
 * protocol 7.39) when the kernel offers it: a file opened with direct
 * I/O may then be mapped MAP_SHARED too, which lets uploads skip FUSE's
 * page cache (ops.c) without refusing mmap to a writer.
 *
 * The kernel takes one backing file per inode, and beside it no open of
 * that inode that does not name the same file (such an open fails with
 * EIO, whatever its flags).  So a node registers its blob once
 * (FUSE_DEV_IOC_BACKING_OPEN) for as long as it has readers, counted in
 * node.nreaders under the path table's lock, and unregisters it when
 * the last is released; a node whose first reader went without keeps
 * going without until all are closed.  Only versions/<name>/<n> is read
 * this way: the latest, artifacts/<name>, is also opened for uploads,
 * and changes file with each of them.
 *
 * Registering a file takes CAP_SYS_ADMIN.  When the kernel does not
 * offer passthrough, or refuses a file, reads go through the daemon as
 * they did before, with the page cache kept (keep_cache).
 */
#define _GNU_SOURCE
#include "backing.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include "cmfs.h"

/* The kernel's protocol (include/uapi/linux/fuse.h), as far as it is
 * used here.  Debian 12's headers stop at 7.38: spelled out. */
enum {
	K_FUSE_INIT = 26,
	K_FUSE_INIT_EXT = 1 << 30,
	K_FUSE_PASSTHROUGH_HI = 1 << (37 - 32), /* in flags2 */
	K_FUSE_DIO_MMAP_HI = 1 << (36 - 32),	/* DIRECT_IO_ALLOW_MMAP */
	K_FOPEN_PASSTHROUGH = 1 << 7,
	K_MAX_STACK_DEPTH = 2, /* FILESYSTEM_MAX_STACK_DEPTH */
};

struct k_in_header {
	uint32_t len, opcode;
	uint64_t unique, nodeid;
	uint32_t uid, gid, pid;
	uint16_t total_extlen, padding;
};

struct k_init_in {
	uint32_t major, minor, max_readahead, flags, flags2;
};

struct k_out_header {
	uint32_t len;
	int32_t error;
	uint64_t unique;
};

struct k_init_out {
	uint32_t major, minor, max_readahead, flags;
	uint16_t max_background, congestion_threshold;
	uint32_t max_write, time_gran;
	uint16_t max_pages, map_alignment;
	uint32_t flags2, max_stack_depth;
	uint32_t unused[6];
};

struct k_open_out {
	uint64_t fh;
	uint32_t open_flags;
	int32_t backing_id;
};

struct k_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};

#define K_DEV_IOC_BACKING_OPEN _IOW(229, 1, struct k_backing_map)
#define K_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)

_Static_assert(sizeof(struct k_in_header) == 40, "fuse_in_header");
_Static_assert(sizeof(struct k_out_header) == 16, "fuse_out_header");
_Static_assert(offsetof(struct k_init_out, flags2) == 32, "fuse_init_out");
_Static_assert(sizeof(struct k_init_out) == 64, "fuse_init_out");
_Static_assert(sizeof(struct k_open_out) == 16, "fuse_open_out");

#define OVERLAYFS_MAGIC 0x794c7630

/* The open reply this thread is about to send (backing_reply_open). */
static _Thread_local struct {
	uint64_t fh;
	int32_t id;
} pending;

/* Say what this mount does, once: read by the kernel, or why not. */
static void decide(struct cmfs *c, const char *why)
{
	if (why)
		repo_log(c->repo, LOG_INFO,
			 "passthrough: off: %s; versions are read through "
			 "cmfs",
			 why);
	else
		repo_log(c->repo, LOG_INFO,
			 "passthrough: on: the kernel reads versions from "
			 "the store");
}

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	struct cmfs *c = userdata;
	struct backing *b = &c->backing;
	ssize_t n = read(fd, buf, len);
	const struct k_in_header *h = buf;
	const struct k_init_in *in = (const void *)(h + 1);

	/* INIT is the first request: no other is read before its reply. */
	if (!__atomic_load_n(&b->init_seen, __ATOMIC_RELAXED) &&
	    n >= (ssize_t)(sizeof(*h) + sizeof(*in)) &&
	    h->opcode == K_FUSE_INIT) {
		b->init_unique = h->unique;
		b->offered = (in->flags & K_FUSE_INIT_EXT) &&
			     (in->flags2 & K_FUSE_PASSTHROUGH_HI);
		b->dio_mmap_offered = (in->flags & K_FUSE_INIT_EXT) &&
				      (in->flags2 & K_FUSE_DIO_MMAP_HI);
		if (b->want)
			decide(c, b->offered ? NULL
					     : "the kernel does not offer it "
					       "(Linux 6.9 or later, "
					       "CONFIG_FUSE_PASSTHROUGH)");
		__atomic_store_n(&b->init_seen, 1, __ATOMIC_RELEASE);
	}
	return n;
}

/* The reply to INIT: ask for what was offered and is wanted. */
static void ask(struct cmfs *c, struct backing *b, struct k_init_out *o)
{
	if (b->dio_mmap_offered) {
		o->flags |= K_FUSE_INIT_EXT;
		o->flags2 |= K_FUSE_DIO_MMAP_HI;
		__atomic_store_n(&b->dio_mmap, 1, __ATOMIC_RELEASE);
	}
	if (b->want && b->offered) {
		o->flags |= K_FUSE_INIT_EXT;
		o->flags2 |= K_FUSE_PASSTHROUGH_HI;
		o->max_stack_depth = b->depth;
		__atomic_store_n(&b->on, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&b->init_answered, 1, __ATOMIC_RELEASE);
	repo_log(c->repo, LOG_INFO, "uploads: %s",
		 b->dio_mmap_offered
			 ? "direct I/O: written to cmfs, not through FUSE's "
			   "page cache"
			 : "through FUSE's page cache (direct I/O with a "
			   "shared mmap needs Linux 6.6 or later)");
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct cmfs *c = userdata;
	struct backing *b = &c->backing;
	struct k_out_header *h = iov[0].iov_base;

	if (count == 2 && iov[0].iov_len == sizeof(*h) && !h->error) {
		if (pending.id && iov[1].iov_len == sizeof(struct k_open_out)) {
			struct k_open_out *o = iov[1].iov_base;

			if (o->fh == pending.fh) {
				o->open_flags |= K_FOPEN_PASSTHROUGH;
				o->backing_id = pending.id;
			}
		} else if (!__atomic_load_n(&b->init_answered,
					    __ATOMIC_RELAXED) &&
			   __atomic_load_n(&b->init_seen, __ATOMIC_ACQUIRE) &&
			   h->unique == b->init_unique &&
			   iov[1].iov_len == sizeof(struct k_init_out)) {
			ask(c, b, iov[1].iov_base);
		}
	}
	return writev(fd, iov, count);
}

static ssize_t io_splice(int fdin, off_t *offin, int fdout, off_t *offout,
			 size_t len, unsigned int flags, void *userdata)
{
	(void)userdata;
	return splice(fdin, offin, fdout, offout, len, flags);
}

void backing_attach(struct cmfs *c, int want)
{
	static const struct fuse_custom_io io = {
		.read = io_read,
		.writev = io_writev,
		.splice_receive = io_splice,
		.splice_send = io_splice,
	};
	struct backing *b = &c->backing;
	struct statfs sf;
	int rc;

	memset(b, 0, sizeof(*b));
	b->fd = fuse_session_fd(c->se);
	/* Registering a backing file takes CAP_SYS_ADMIN: without it,
	 * asking would only deepen the mount's stack for nothing. */
	b->want = want && geteuid() == 0;
	if (!b->want)
		decide(c, !want ? "[mount] passthrough = off"
				: "the daemon does not run as root");
	/* The kernel refuses a backing file as deep as the depth asked
	 * for: a store on overlayfs (a container) needs 2, which leaves no
	 * room to stack on cmfs; anything else 1. */
	b->depth =
		!statfs(c->cfg->store_path, &sf) && sf.f_type == OVERLAYFS_MAGIC
			? K_MAX_STACK_DEPTH
			: 1;
	/* Without the hooks the session reads and writes as it would. */
	rc = fuse_session_custom_io(c->se, &io, b->fd);
	if (rc < 0 && b->want) {
		b->want = 0;
		decide(c, strerror(-rc));
	}
}

int backing_dio_mmap(const struct cmfs *c)
{
	return __atomic_load_n(&c->backing.dio_mmap, __ATOMIC_ACQUIRE);
}

int32_t backing_get(struct cmfs *c, struct node *n, int fd, int *counted)
{
	struct backing *b = &c->backing;
	struct k_backing_map map = {.fd = fd};
	int32_t id;
	int e = 0;

	*counted = 0;
	if (!__atomic_load_n(&b->on, __ATOMIC_ACQUIRE))
		return 0;
	path_lock(c->paths);
	/* The first reader decides for all that open beside it. */
	if (!n->nreaders && !__atomic_load_n(&b->refused, __ATOMIC_RELAXED)) {
		id = ioctl(b->fd, K_DEV_IOC_BACKING_OPEN, &map);
		if (id > 0)
			n->backing = id;
		else
			e = errno;
	}
	n->nreaders++;
	*counted = 1;
	id = n->backing;
	path_unlock(c->paths);
	/* Not a failure of the open: the daemon reads, as without. */
	if (e && !__atomic_exchange_n(&b->refused, 1, __ATOMIC_RELAXED))
		repo_log(c->repo, LOG_WARNING,
			 "passthrough: the kernel refused a backing file "
			 "(%s); versions are read through cmfs from now on",
			 strerror(e));
	return id;
}

void backing_put_locked(struct cmfs *c, struct node *n)
{
	if (--n->nreaders || !n->backing)
		return;
	/* The kernel keeps the file while its inode has it open. */
	if (ioctl(c->backing.fd, K_DEV_IOC_BACKING_CLOSE,
		  &(uint32_t){(uint32_t)n->backing}))
		repo_log(c->repo, LOG_WARNING,
			 "passthrough: closing backing id %d: %s",
			 (int)n->backing, strerror(errno));
	n->backing = 0;
}

int backing_reply_open(fuse_req_t req, const struct fuse_file_info *fi,
		       int32_t id)
{
	int rc;

	pending.fh = fi->fh;
	pending.id = id;
	rc = fuse_reply_open(req, fi);
	pending.id = 0;
	return rc;
}
