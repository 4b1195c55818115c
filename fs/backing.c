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
 * page cache (kcache.c) without refusing mmap to a writer.  And for FUSE
 * over io_uring (7.42, uring.c): once INIT's reply has asked for it, the
 * rings are set up, and every reply passes uring.c first, which keeps
 * those that answer a request that came through a ring.
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
#include "kproto.h"
#include "uring.h"

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
		b->uring_offered = (in->flags & K_FUSE_INIT_EXT) &&
				   (in->flags2 & K_FUSE_OVER_IO_URING_HI);
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
	if (backing_uring_wanted(c)) {
		o->flags |= K_FUSE_INIT_EXT;
		o->flags2 |= K_FUSE_OVER_IO_URING_HI;
		b->uring_asked = 1;
	} else {
		repo_log(c->repo, LOG_INFO, "io_uring: off: %s",
			 b->uring_want < 0 ? "-s (one thread)"
			 : !b->uring_want
				 ? "[mount] io_uring = off"
				 : "the kernel does not offer it (Linux "
				   "6.14 or later, with /sys/module/"
				   "fuse/parameters/enable_uring = Y)");
	}
	__atomic_store_n(&b->init_answered, 1, __ATOMIC_RELEASE);
	repo_log(c->repo, LOG_INFO, "uploads: %s",
		 b->dio_mmap_offered
			 ? "direct I/O: written to cmfs, not through FUSE's "
			   "page cache"
			 : "through FUSE's page cache (direct I/O with a "
			   "shared mmap needs Linux 6.6 or later)");
}

/* The largest request or reply the kernel will pass, from INIT's reply
 * (its fuse_conn's max_write and max_pages): a ring entry's payload. */
static size_t max_payload(const struct k_init_out *o)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = (o->flags & K_FUSE_MAX_PAGES) && o->max_pages
			       ? o->max_pages
			       : 32; /* FUSE_DEFAULT_MAX_PAGES_PER_REQ */

	return o->max_write > pages * page ? o->max_write : pages * page;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct cmfs *c = userdata;
	struct backing *b = &c->backing;
	struct k_out_header *h = iov[0].iov_base;
	struct k_init_out *init = NULL;
	ssize_t n;

	/* A reply (not a notification): nothing stale is read after it. */
	if (h->unique)
		cmfs_settle(c, 0);
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
			init = iov[1].iov_base;
			ask(c, b, init);
		}
	}
	n = uring_reply(c, iov, count);
	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	if (n)
		return n;
	n = writev(fd, iov, count);
	/* The kernel has taken INIT's reply: the rings can register. */
	if (init && n > 0 && b->uring_asked)
		uring_start(c, max_payload(init));
	return n;
}

static ssize_t io_splice(int fdin, off_t *offin, int fdout, off_t *offout,
			 size_t len, unsigned int flags, void *userdata)
{
	(void)userdata;
	return splice(fdin, offin, fdout, offout, len, flags);
}

void backing_attach(struct cmfs *c, int want, int uring)
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
	b->uring_want = uring;
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

int backing_uring_wanted(const struct cmfs *c)
{
	return c->backing.uring_want > 0 && c->backing.uring_offered;
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

void backing_detach(struct cmfs *c)
{
	uring_stop(c);
}
