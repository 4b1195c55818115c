/*
 * uring.c - FUSE requests over io_uring (Linux 6.14 and later).
 *
 * Through /dev/fuse a request wakes whichever daemon thread waits in
 * read(), on whatever CPU the scheduler picks, and the reply then wakes
 * the caller where it slept.  The two often run on different CPUs, and
 * waking a halted one (an IPI; on a VM, a trip through the host) costs
 * more than cmfs's whole work for a small request such as a label
 * (bench/findings.md).  Over io_uring the kernel queues a
 * request on the ring of the CPU its caller runs on.  Here each CPU has
 * entries of its own, each an io_uring served by a thread bound to that
 * CPU, so caller and daemon take turns on one CPU; a slow request (a large
 * upload's commit) holds one entry, not the CPU's ring.  The request
 * loop's threads (-o max_threads) are shared out among the online CPUs,
 * one entry each at least and ENTRIES_MAX at most: 4 on a 2-CPU machine
 * by default, 1 on a 64-CPU one.
 *
 * libfuse 3.14 predates the protocol (7.42), so this file speaks it
 * beside libfuse: backing.c asks for it in INIT's reply when the kernel
 * offers it (the fuse module's enable_uring parameter) and [mount]
 * io_uring = auto, then calls uring_start().  A request that arrives in a
 * ring is laid out as /dev/fuse would have delivered it (the headers
 * copied just before the payload, which stays where the kernel put it)
 * and handed to fuse_session_process_buf(); its reply comes back through
 * backing.c's writev hook to uring_reply(), which puts it in the entry
 * and commits it, fetching the next request in the same call.
 *
 * /dev/fuse stays in use: for INIT, for every request until each CPU has
 * an entry, and for FORGET and INTERRUPT, which the kernel never sends
 * through a ring; notifications (unique 0) are written to it.  So the
 * request loop of main.c runs as before and just sees less traffic.  A
 * ring that cannot be set up leaves the mount on /dev/fuse, and says why
 * in the log.
 */
#define _GNU_SOURCE
#include "uring.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cmfs.h"
#include "kproto.h"
#include "tsan.h"

/* Requests a CPU's callers can have in the daemon at once, at most; a
 * CPU that is possible but not online gets one entry, as the kernel wants
 * every possible CPU's queue to have one before it uses any. */
#define ENTRIES_MAX 4
/* Room before the payload for a request's headers (40 + at most 128). */
#define SLACK 256
/* user_data of the SQEs: the entry's FUSE command, the stop signal. */
#define TAG_FUSE 1
#define TAG_STOP 2
/* A REGISTER before the kernel has taken INIT's reply is refused with
 * EAGAIN: tried again this often, this far apart. */
#define REGISTER_TRIES 200
#define REGISTER_PAUSE_NS 5000000

struct ent {
	struct uring *u;
	unsigned qid;
	pthread_t thread;
	int thread_ok;
	struct io_uring ring;
	int ring_ok;
	pthread_mutex_t lock; /* the ring's submission side, and `unique` */
	struct k_uring_header hdr;
	unsigned char *buf; /* SLACK bytes, then the payload */
	struct iovec iov[2];
	uint64_t unique; /* the request being answered; 0: none */
	uint64_t served; /* requests handed to libfuse */
};

struct uring {
	struct cmfs *c;
	int fd;		/* the session's /dev/fuse */
	int stopfd;	/* an eventfd: written once, every thread stops */
	size_t payload; /* bytes of each entry's payload buffer */
	size_t buflen;	/* SLACK + payload, rounded to pages */
	unsigned nqueues, nonline, nent;
	unsigned per; /* entries of each online CPU */
	struct ent *ent;
	unsigned registered; /* entries the kernel took (atomic) */
	int failed;	     /* an entry failed (atomic): logged once */
};

/* The entry whose request this thread is processing. */
static _Thread_local struct ent *current;

static void say_failed(struct uring *u, struct ent *e, const char *what,
		       int err)
{
	if (__atomic_exchange_n(&u->failed, 1, __ATOMIC_RELAXED))
		return;
	repo_log(u->c->repo, LOG_WARNING,
		 "io_uring: %s (CPU %u): %s; requests that cannot go "
		 "through a ring go through /dev/fuse",
		 what, e->qid, strerror(err));
}

/* Fill `sqe` (128 bytes) with the FUSE command `op` of entry `e`. */
static void prep_cmd(struct ent *e, struct io_uring_sqe *sqe, uint32_t op,
		     uint64_t commit_id)
{
	struct k_uring_cmd_req req = {.commit_id = commit_id,
				      .qid = (uint16_t)e->qid};

	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = e->u->fd;
	sqe->cmd_op = op;
	sqe->user_data = TAG_FUSE;
	if (op == K_URING_CMD_REGISTER) {
		sqe->addr = (uintptr_t)e->iov;
		sqe->len = 2;
	}
	memcpy(sqe->cmd, &req, sizeof(req));
}

/* Queue the FUSE command and submit it, with e->lock held. */
static int submit_cmd(struct ent *e, uint32_t op, uint64_t commit_id)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
	int rc;

	if (!sqe)
		return -EBUSY;
	prep_cmd(e, sqe, op, commit_id);
	rc = io_uring_submit(&e->ring);
	return rc == 1 ? 0 : rc < 0 ? rc : -EIO;
}

/* Copy `n` bytes of `iov` from byte `skip` on to `to`. */
static void gather(unsigned char *to, const struct iovec *iov, int count,
		   size_t skip, size_t n)
{
	int i;

	for (i = 0; i < count && n; i++) {
		size_t len = iov[i].iov_len, k;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		k = len - skip < n ? len - skip : n;
		memmove(to, (const unsigned char *)iov[i].iov_base + skip, k);
		to += k;
		n -= k;
		skip = 0;
	}
}

/*
 * Put the reply `iov` in the entry and commit it (e->lock held): its
 * out header in the header buffer, the rest in the payload.  The length,
 * or -errno.
 */
static ssize_t commit(struct ent *e, const struct iovec *iov, int count)
{
	struct k_out_header oh = {0};
	size_t total = 0;
	uint64_t id = e->unique;
	int i, rc;

	for (i = 0; i < count; i++)
		total += iov[i].iov_len;
	gather((unsigned char *)&oh, iov, count, 0, sizeof(oh));
	if (total - sizeof(oh) > e->u->payload) {
		/* More than the kernel would take: say so to the caller. */
		oh.len = sizeof(oh);
		oh.error = -EIO;
		total = sizeof(oh);
	}
	memcpy(e->hdr.in_out, &oh, sizeof(oh));
	gather(e->buf + SLACK, iov, count, sizeof(oh), total - sizeof(oh));
	e->hdr.ent.payload_sz = (uint32_t)(total - sizeof(oh));
	e->unique = 0;
	rc = submit_cmd(e, K_URING_CMD_COMMIT_AND_FETCH, id);
	return rc ? rc : (ssize_t)total;
}

/* Commit the reply if entry `e` waits for request `unique`: the length,
 * -errno, or 0 when it does not. */
static ssize_t commit_if(struct ent *e, uint64_t unique,
			 const struct iovec *iov, int count)
{
	ssize_t rc = 0;

	pthread_mutex_lock(&e->lock);
	if (e->unique == unique)
		rc = commit(e, iov, count);
	pthread_mutex_unlock(&e->lock);
	return rc;
}

ssize_t uring_reply(struct cmfs *c, const struct iovec *iov, int count)
{
	struct uring *u = __atomic_load_n(&c->uring, __ATOMIC_ACQUIRE);
	struct k_out_header oh = {0};
	ssize_t rc = 0;
	unsigned i;

	if (!u)
		return 0;
	gather((unsigned char *)&oh, iov, count, 0, sizeof(oh));
	if (!oh.unique)
		return 0; /* a notification (or no header): /dev/fuse */
	if (current)
		rc = commit_if(current, oh.unique, iov, count);
	/* Else answered from another thread than the one it came to, or
	 * not through a ring at all. */
	for (i = 0; !rc && i < u->nent; i++)
		rc = commit_if(&u->ent[i], oh.unique, iov, count);
	return rc;
}

/*
 * A request is in the entry: lay it out as /dev/fuse delivers one (the
 * in header, the first argument, the rest) and process it.
 */
static void serve(struct ent *e)
{
	struct k_in_header h;
	struct k_uring_ent_in_out io;
	unsigned char *payload = e->buf + SLACK, *start;
	struct fuse_buf fb;
	size_t first;

	memcpy(&h, e->hdr.in_out, sizeof(h));
	memcpy(&io, &e->hdr.ent, sizeof(io));
	if (h.len < sizeof(h) + (size_t)io.payload_sz ||
	    io.payload_sz > e->u->payload ||
	    (first = h.len - sizeof(h) - io.payload_sz) >
		    sizeof(e->hdr.op_in)) {
		struct k_out_header oh = {sizeof(oh), -EIO, h.unique};
		struct iovec iov = {&oh, sizeof(oh)};

		pthread_mutex_lock(&e->lock);
		e->unique = io.commit_id;
		commit(e, &iov, 1);
		pthread_mutex_unlock(&e->lock);
		return;
	}
	start = payload - first - sizeof(h);
	memcpy(start + sizeof(h), e->hdr.op_in, first);
	memcpy(start, &h, sizeof(h));
	pthread_mutex_lock(&e->lock);
	e->unique = io.commit_id;
	pthread_mutex_unlock(&e->lock);
	memset(&fb, 0, sizeof(fb));
	fb.mem = start;
	fb.size = h.len;
	current = e;
	tsan_request(e->u->c);
	fuse_session_process_buf(e->u->c->se, &fb);
	current = NULL;
	e->served++;
}

/* Give the kernel the entry's buffers; EAGAIN (INIT's reply not taken
 * yet) is tried again. */
static int register_ent(struct ent *e)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = {0, REGISTER_PAUSE_NS};
	struct timespec pause = {0, REGISTER_PAUSE_NS};
	int rc, tries;

	for (tries = 0; tries < REGISTER_TRIES; tries++) {
		pthread_mutex_lock(&e->lock);
		rc = submit_cmd(e, K_URING_CMD_REGISTER, 0);
		pthread_mutex_unlock(&e->lock);
		if (rc)
			return rc;
		/* No completion soon: the entry waits for a request. */
		rc = io_uring_wait_cqe_timeout(&e->ring, &cqe, &ts);
		if (rc == -ETIME)
			return 0;
		if (rc)
			return rc;
		if (cqe->user_data != TAG_FUSE || cqe->res >= 0)
			return 0; /* a request already, or the stop: the
				   * loop takes it */
		rc = cqe->res;
		io_uring_cqe_seen(&e->ring, cqe);
		if (rc != -EAGAIN)
			return rc;
		nanosleep(&pause, NULL);
	}
	return -EAGAIN;
}

static void *ent_thread(void *arg)
{
	struct ent *e = arg;
	struct uring *u = e->u;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	cpu_set_t cpus;
	sigset_t all;
	uint64_t tag;
	int rc, res;

	/* Signals go to the threads that wait for them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* Where the requests of this CPU come from; an offline CPU's
	 * entries run anywhere. */
	CPU_ZERO(&cpus);
	CPU_SET(e->qid, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);

	pthread_mutex_lock(&e->lock);
	sqe = io_uring_get_sqe(&e->ring);
	if (sqe) {
		io_uring_prep_poll_add(sqe, u->stopfd, POLLIN);
		sqe->user_data = TAG_STOP;
	}
	rc = sqe ? io_uring_submit(&e->ring) : -EBUSY;
	pthread_mutex_unlock(&e->lock);
	rc = rc == 1 ? register_ent(e) : rc < 0 ? rc : -EIO;
	if (rc) {
		say_failed(u, e, "registering an entry", -rc);
		return NULL;
	}
	if (__atomic_add_fetch(&u->registered, 1, __ATOMIC_RELAXED) == u->nent)
		repo_log(u->c->repo, LOG_INFO,
			 "io_uring: on: %u CPUs, %u entries each, requests "
			 "answered on their caller's CPU",
			 u->nonline, u->per);
	for (;;) {
		rc = io_uring_wait_cqe(&e->ring, &cqe);
		if (rc == -EINTR)
			continue;
		if (rc)
			break;
		tag = cqe->user_data;
		res = cqe->res;
		io_uring_cqe_seen(&e->ring, cqe);
		if (tag == TAG_STOP)
			return NULL;
		if (res < 0) {
			rc = res;
			break;
		}
		serve(e);
	}
	/* The connection's end tears the entries down: not a failure. */
	if (rc != -ENOTCONN && rc != -ECONNABORTED && rc != -ECANCELED)
		say_failed(u, e, "an entry stopped", -rc);
	return NULL;
}

/*
 * Read a CPU list of /sys/devices/system/cpu ("0-3,8") into `set`: the
 * number of the highest CPU + 1, or 0 when it cannot be read.
 */
static unsigned cpu_list(const char *name, cpu_set_t *set)
{
	char path[64], line[512], *p;
	unsigned top = 0, lo, hi, cpu;
	FILE *f;

	CPU_ZERO(set);
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s", name);
	if (!(f = fopen(path, "re")))
		return 0;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	while (p && *p >= '0' && *p <= '9') {
		lo = hi = (unsigned)strtoul(p, &p, 10);
		if (*p == '-')
			hi = (unsigned)strtoul(p + 1, &p, 10);
		for (cpu = lo; cpu <= hi && cpu < CPU_SETSIZE; cpu++)
			CPU_SET(cpu, set);
		if (hi < CPU_SETSIZE && hi + 1 > top)
			top = hi + 1;
		p = *p == ',' ? p + 1 : NULL;
	}
	return top;
}

/*
 * Lay out u->ent: the kernel keeps a queue for every possible CPU,
 * numbered by CPU; u->per entries for each online one (the loop's threads
 * shared out, 1 to ENTRIES_MAX), one for each other.  The number of
 * entries.
 */
static unsigned layout(struct uring *u, unsigned *qids, unsigned max)
{
	cpu_set_t possible, online;
	unsigned q, k, n = 0;

	u->nqueues = cpu_list("possible", &possible);
	if (!u->nqueues || !cpu_list("online", &online)) {
		u->nqueues =
			(unsigned)(get_nprocs_conf() > 0 ? get_nprocs_conf()
							 : 1);
		CPU_ZERO(&possible);
		for (q = 0; q < u->nqueues && q < CPU_SETSIZE; q++)
			CPU_SET(q, &possible);
		online = possible;
	}
	u->nonline = 0;
	for (q = 0; q < u->nqueues; q++)
		u->nonline += CPU_ISSET(q, &online) != 0;
	u->per = u->c->max_threads && u->nonline
			 ? (u->c->max_threads + u->nonline - 1) / u->nonline
			 : ENTRIES_MAX;
	if (u->per > ENTRIES_MAX)
		u->per = ENTRIES_MAX;
	for (q = 0; q < u->nqueues; q++) {
		unsigned per = CPU_ISSET(q, &online) ? u->per : 1;

		for (k = 0; k < per && n < max; k++)
			qids[n++] = q;
	}
	return n;
}

static int ent_init(struct uring *u, struct ent *e, unsigned qid)
{
	int rc;

	e->u = u;
	e->qid = qid;
	pthread_mutex_init(&e->lock, NULL);
	e->buf = mmap(NULL, u->buflen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->buf == MAP_FAILED) {
		e->buf = NULL;
		return -ENOMEM;
	}
	e->iov[0].iov_base = &e->hdr;
	e->iov[0].iov_len = sizeof(e->hdr);
	e->iov[1].iov_base = e->buf + SLACK;
	e->iov[1].iov_len = u->payload;
	/* Two SQEs in flight at most: the stop's poll and the command. */
	rc = io_uring_queue_init(4, &e->ring, IORING_SETUP_SQE128);
	if (rc)
		return rc;
	e->ring_ok = 1;
	return 0;
}

static void ent_free(struct ent *e)
{
	if (!e->u)
		return; /* never set up */
	if (e->ring_ok)
		io_uring_queue_exit(&e->ring);
	if (e->buf)
		munmap(e->buf, e->u->buflen);
	pthread_mutex_destroy(&e->lock);
}

static void free_all(struct uring *u)
{
	unsigned i;

	for (i = 0; i < u->nent; i++)
		ent_free(&u->ent[i]);
	if (u->stopfd >= 0)
		close(u->stopfd);
	free(u->ent);
	free(u);
}

int uring_start(struct cmfs *c, size_t max_payload)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uring *u = calloc(1, sizeof(*u));
	unsigned i, max, *qids;
	int rc = 0;

	if (!u)
		return -ENOMEM;
	u->c = c;
	u->fd = c->backing.fd;
	u->stopfd = eventfd(0, EFD_CLOEXEC);
	u->payload = max_payload < K_FUSE_MIN_READ_BUFFER
			     ? K_FUSE_MIN_READ_BUFFER
			     : max_payload;
	u->buflen =
		(SLACK + u->payload + (size_t)page - 1) & ~((size_t)page - 1);
	max = (unsigned)CPU_SETSIZE * ENTRIES_MAX;
	qids = calloc(max, sizeof(*qids));
	u->nent = qids ? layout(u, qids, max) : 0;
	u->ent = u->nent ? calloc(u->nent, sizeof(*u->ent)) : NULL;
	if (u->stopfd < 0 || !u->ent) {
		rc = u->stopfd < 0 ? -errno : -ENOMEM;
		u->nent = 0;
	}
	for (i = 0; !rc && i < u->nent; i++)
		rc = ent_init(u, &u->ent[i], qids[i]);
	free(qids);
	if (rc) {
		repo_log(c->repo, LOG_WARNING,
			 "io_uring: off: setting up the rings: %s",
			 strerror(-rc));
		free_all(u);
		return rc;
	}
	/* Published before any request can come through a ring. */
	__atomic_store_n(&c->uring, u, __ATOMIC_RELEASE);
	for (i = 0; i < u->nent; i++) {
		struct ent *e = &u->ent[i];

		e->thread_ok = !pthread_create(&e->thread, NULL, ent_thread, e);
		if (!e->thread_ok)
			say_failed(u, e, "starting a thread", EAGAIN);
	}
	return 0;
}

void uring_stop(struct cmfs *c)
{
	struct uring *u = __atomic_load_n(&c->uring, __ATOMIC_ACQUIRE);
	uint64_t one = 1, served = 0;
	unsigned i;

	if (!u)
		return;
	if (write(u->stopfd, &one, sizeof(one)) != sizeof(one))
		repo_log(c->repo, LOG_WARNING, "io_uring: stopping: %s",
			 strerror(errno));
	for (i = 0; i < u->nent; i++) {
		if (u->ent[i].thread_ok)
			pthread_join(u->ent[i].thread, NULL);
		served += u->ent[i].served;
	}
	repo_log(c->repo, LOG_INFO, "io_uring: %llu requests served",
		 (unsigned long long)served);
	__atomic_store_n(&c->uring, NULL, __ATOMIC_RELEASE);
	free_all(u);
}
