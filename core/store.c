/*
 * store.c - blobs, staging and scratch files on the local file system.
 *
 * Layout under the store directory:
 *   blobs/<first two hex digits>/<sha256>   immutable content
 *   staging/                                named staging files (fallback
 *                                           where O_TMPFILE is missing),
 *                                           retired blobs not yet unlinked
 *   scratch/<env>/{a,t}/<name>              editors' and rsync's temp files
 *   scratch/<env>/{a,t}-to/<target>/<name>  a scratch file being renamed
 *                                           onto <target> (repo commits it)
 *   lock                                    flock(2)ed by the one process
 *                                           that may change the store
 *   reserve                                 space held back for deletes
 * Every path is opened relative to a directory fd held from store_open(),
 * so a name is never re-resolved through the mount's own tree.
 */
#define _GNU_SOURCE
#include "store.h"
#include "thread.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define IO_CHUNK (1 << 20)

struct store {
	char *path;		/* absolute store directory */
	int root_fd;
	int blobs_fd;
	int staging_fd;
	int scratch_fd;
	int lock_fd;		/* <store>/lock, flock()ed; -1: not held */
	int reserved;		/* <store>/reserve holds its blocks (atomic) */
	int no_tmpfile;		/* the file system refused O_TMPFILE */
	unsigned long retired;	/* blobs retired: their names' counter */
	int new_dir;		/* a blob directory made since the last
				 * store_blobs_sync() (atomic) */
	uint64_t cache_max;	/* store_cache_max(); 0: no bound */
	pthread_mutex_t trim_lock; /* one store_blob_trim() at a time */
};

struct store_hash {
	EVP_MD_CTX *ctx;
};

/*
 * SHA-256 as OpenSSL 3 implements it, fetched once for the process:
 * EVP_sha256() names it without an implementation, and each digest begun
 * with it fetches one from the providers again (a lookup under a lock:
 * most of what beginning and ending a small upload's hash cost).
 */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

/* The digest to begin a hash with: the fetched one, else EVP_sha256(). */
static const EVP_MD *sha256(void)
{
	pthread_once(&sha256_once, sha256_fetch);
	return sha256_md ? sha256_md : EVP_sha256();
}

/* A digest's 32 bytes as 64 lower-case hex digits and a NUL. */
static void to_hex(char hex[STORE_SHA_HEX], const unsigned char md[32])
{
	static const char digit[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		hex[2 * i] = digit[md[i] >> 4];
		hex[2 * i + 1] = digit[md[i] & 15];
	}
	hex[64] = '\0';
}

/* mkdirat that accepts an existing directory. */
static int ensure_dir(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static int open_dir(int dirfd, const char *name, int *out)
{
	int rc = ensure_dir(dirfd, name);

	if (rc)
		return rc;
	*out = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return *out < 0 ? -errno : 0;
}

/* mkdir -p for the store path itself. */
static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path), i;

	if (n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		tmp[i] = path[i];
	}
	return 0;
}

#define EXPORT_LOCK "export.lock"
#define RETIRED_PREFIX "freed-"

/* 1 while a `cmfs export` holds the store's blobs (store_export_hold). */
static int export_busy_at(int root_fd)
{
	int fd = openat(root_fd, EXPORT_LOCK, O_RDONLY | O_CLOEXEC), busy;

	if (fd < 0)
		return 0; /* never made: no export ever held it */
	busy = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

/*
 * Remove the named staging files that a crash left behind, and retired
 * blobs nobody reaped; not the retired ones while an export may read
 * them.
 */
static void sweep_staging(int root_fd, int fd)
{
	int dfd = dup(fd), keep = export_busy_at(root_fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    !(keep && !strncmp(e->d_name, RETIRED_PREFIX,
				       strlen(RETIRED_PREFIX))))
			unlinkat(fd, e->d_name, 0);
	closedir(d);
}

int store_export_hold(struct store *s, int *out)
{
	int fd = openat(s->root_fd, EXPORT_LOCK, O_RDWR | O_CREAT | O_CLOEXEC,
			0600);

	*out = -1;
	if (fd < 0)
		fd = openat(s->root_fd, EXPORT_LOCK, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_SH))
		if (errno != EINTR) {
			int e = errno;

			close(fd);
			return -e;
		}
	*out = fd;
	return 0;
}

int store_export_busy(struct store *s)
{
	return export_busy_at(s->root_fd);
}

int store_blob_open_retired(struct store *s, const char *sha, int *out)
{
	char prefix[STORE_RETIRED];
	int dfd = openat(s->staging_fd, ".",
			 O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	    fd = -1;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;
	size_t n;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return -ENOENT;
	}
	n = (size_t)snprintf(prefix, sizeof(prefix), RETIRED_PREFIX "%.64s-",
			     sha);
	while (fd < 0 && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, n))
			fd = openat(s->staging_fd, e->d_name,
				    O_RDONLY | O_CLOEXEC);
	closedir(d);
	if (fd < 0)
		return -ENOENT;
	*out = fd;
	return 0;
}

int store_open(struct store **out, const char *path, struct cmfs_err *err)
{
	struct store *s;
	char real[PATH_MAX];
	int rc;

	*out = NULL;
	rc = mkdir_p(path);
	if (rc)
		return cmfs_err_set(err, rc, "store %s: %s", path,
				    strerror(-rc));
	if (!realpath(path, real))
		return cmfs_err_set(err, -errno, "store %s: %s", path,
				    strerror(errno));
	s = calloc(1, sizeof(*s));
	if (!s)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	s->blobs_fd = s->staging_fd = s->scratch_fd = s->lock_fd = -1;
	s->path = strdup(real);
	pthread_mutex_init(&s->trim_lock, NULL);
	s->root_fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!s->path || s->root_fd < 0) {
		rc = s->path ? -errno : -ENOMEM;
		goto fail;
	}
	if ((rc = open_dir(s->root_fd, "blobs", &s->blobs_fd)) ||
	    (rc = open_dir(s->root_fd, "staging", &s->staging_fd)) ||
	    (rc = open_dir(s->root_fd, "scratch", &s->scratch_fd)))
		goto fail;
	*out = s;
	return 0;
fail:
	store_close(s);
	return cmfs_err_set(err, rc, "store %s: %s", real, strerror(-rc));
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->root_fd >= 0)
		close(s->root_fd);
	if (s->blobs_fd >= 0)
		close(s->blobs_fd);
	if (s->staging_fd >= 0)
		close(s->staging_fd);
	if (s->scratch_fd >= 0)
		close(s->scratch_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* drops the flock */
	pthread_mutex_destroy(&s->trim_lock);
	free(s->path);
	free(s);
}

const char *store_path(const struct store *s)
{
	return s->path;
}

void store_ident(const struct store *s, char *buf, size_t n)
{
	char host[256];

	if (gethostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	snprintf(buf, n, "%s:%s", host, s->path);
}

/* ---- one writer: the lock ---- */

int store_lock(struct store *s, struct cmfs_err *err)
{
	char pid[32];
	int fd, n;

	if (s->lock_fd >= 0)
		return 0;
	fd = openat(s->root_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return cmfs_err_set(err, -errno, "store %s: lock: %s", s->path,
				    strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		n = (int)pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		close(fd);
		if (e != EWOULDBLOCK)
			return cmfs_err_set(err, -e, "store %s: lock: %s",
					    s->path, strerror(e));
		return cmfs_err_set(err, -EBUSY,
				    "store %s is in use by another cmfs "
				    "(pid %s): one store, one daemon; unmount "
				    "it first", s->path, pid[0] ? pid : "?");
	}
	/* For the message above, in whoever comes second. */
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) < 0)
		(void)0; /* the lock holds without its note */
	s->lock_fd = fd;
	/* Named staging files are in flight only while a holder lives. */
	sweep_staging(s->root_fd, s->staging_fd);
	return 0;
}

/* ---- room for deletes: the reserve ---- */

/*
 * Bytes the reserve holds: 1/64 of the file system, from 1 MiB to
 * 16 MiB.  A delete writes a few catalog pages and one events line; the
 * catalog's log may have to grow by its pages once after a remount.
 */
static uint64_t reserve_size(const struct statvfs *v)
{
	uint64_t fs = (uint64_t)v->f_blocks * v->f_frsize, r = fs / 64;

	if (r < (1u << 20))
		r = 1u << 20;
	if (r > (16u << 20))
		r = 16u << 20;
	return r;
}

int store_reserve_take(struct store *s)
{
	struct statvfs v;
	uint64_t size, avail;
	int fd, rc = 0;

	if (__atomic_load_n(&s->reserved, __ATOMIC_ACQUIRE))
		return 0;
	if (fstatvfs(s->root_fd, &v))
		return -errno;
	size = reserve_size(&v);
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	if (avail < size + size / 2)
		return -ENOSPC; /* not yet: taking it would fill the disk */
	fd = openat(s->root_fd, "reserve", O_WRONLY | O_CREAT | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	/* Blocks, not a hole: fallocate(2), never a sparse ftruncate. */
	if ((rc = posix_fallocate(fd, 0, (off_t)size))) {
		unlinkat(s->root_fd, "reserve", 0);
		rc = -rc;
	} else {
		__atomic_store_n(&s->reserved, 1, __ATOMIC_RELEASE);
	}
	close(fd);
	return rc;
}

int store_reserve_release(struct store *s, int always)
{
	struct statvfs v;

	if (!always && !fstatvfs(s->root_fd, &v) &&
	    (uint64_t)v.f_bavail * v.f_frsize >= reserve_size(&v))
		return 0;
	if (unlinkat(s->root_fd, "reserve", 0))
		return 0;
	__atomic_store_n(&s->reserved, 0, __ATOMIC_RELEASE);
	return 1;
}

int store_hash_new(struct store_hash **out)
{
	struct store_hash *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || !EVP_DigestInit_ex(h->ctx, sha256(), NULL)) {
		store_hash_free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

void store_hash_update(struct store_hash *h, const void *data, size_t len)
{
	EVP_DigestUpdate(h->ctx, data, len);
}

void store_hash_final(struct store_hash *h, char hex[STORE_SHA_HEX])
{
	unsigned char md[32];
	unsigned int n = 0;

	EVP_DigestFinal_ex(h->ctx, md, &n);
	to_hex(hex, md);
	EVP_DigestInit_ex(h->ctx, sha256(), NULL);
}

void store_hash_free(struct store_hash *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

/* Bytes of writeback the hasher starts at a time. */
#define PIPE_WRITEBACK ((uint64_t)8 << 20)

struct store_pipe {
	struct thread_worker w;	/* woken: the writer fed bytes, or stop */
	pthread_cond_t done;	/* the hasher caught up */
	int fd;
	struct store_hash *h;
	uint64_t hashed;	/* [0, hashed) are in h */
	uint64_t fed;		/* [0, fed) are written */
	uint64_t flushed;	/* writeback started up to here */
	int writeback;		/* start it as the bytes are hashed */
	int failed;		/* -errno of a read */
};

static void *pipe_thread(void *arg)
{
	struct store_pipe *p = arg;
	char *b = malloc(IO_CHUNK);

	pthread_mutex_lock(&p->w.lock);
	if (!b)
		p->failed = -ENOMEM;
	while (!p->w.stop && !p->failed) {
		uint64_t off = p->hashed, want = p->fed - p->hashed;
		ssize_t n;
		int e;

		if (!want) {
			pthread_cond_broadcast(&p->done);
			thread_worker_wait(&p->w, THREAD_FOREVER);
			continue;
		}
		pthread_mutex_unlock(&p->w.lock);
		if (want > IO_CHUNK)
			want = IO_CHUNK;
		n = pread(p->fd, b, (size_t)want, (off_t)off);
		e = n < 0 ? -errno : -EIO;
		if (n > 0)
			store_hash_update(p->h, b, (size_t)n);
		if (p->writeback && n > 0 &&
		    off + (uint64_t)n >= p->flushed + PIPE_WRITEBACK) {
			sync_file_range(p->fd, (off_t)p->flushed,
					(off_t)(off + (uint64_t)n - p->flushed),
					SYNC_FILE_RANGE_WRITE);
			p->flushed = off + (uint64_t)n;
		}
		pthread_mutex_lock(&p->w.lock);
		if (n <= 0)
			p->failed = e;
		else
			p->hashed += (uint64_t)n;
	}
	pthread_cond_broadcast(&p->done);
	pthread_mutex_unlock(&p->w.lock);
	free(b);
	return NULL;
}

int store_pipe_new(struct store_pipe **out, int fd, struct store_hash *h,
		   uint64_t from, int writeback)
{
	struct store_pipe *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	thread_worker_init(&p->w);
	pthread_cond_init(&p->done, NULL);
	p->fd = fd;
	p->h = h;
	p->hashed = p->fed = p->flushed = from;
	p->writeback = writeback;
	pthread_mutex_lock(&p->w.lock);
	rc = thread_worker_start(&p->w, pipe_thread, p);
	pthread_mutex_unlock(&p->w.lock);
	if (rc) {
		pthread_cond_destroy(&p->done);
		thread_worker_release(&p->w);
		free(p);
		return -EAGAIN;
	}
	*out = p;
	return 0;
}

void store_pipe_feed(struct store_pipe *p, uint64_t upto)
{
	pthread_mutex_lock(&p->w.lock);
	if (upto > p->fed) {
		p->fed = upto;
		thread_worker_wake(&p->w);
	}
	pthread_mutex_unlock(&p->w.lock);
}

int store_pipe_final(struct store_pipe *p, uint64_t upto,
		     char hex[STORE_SHA_HEX])
{
	int rc;

	store_pipe_feed(p, upto);
	pthread_mutex_lock(&p->w.lock);
	while (!p->failed && p->hashed < p->fed)
		pthread_cond_wait(&p->done, &p->w.lock);
	rc = p->failed ? p->failed : p->hashed == upto ? 0 : -EIO;
	if (!rc)
		store_hash_final(p->h, hex);
	pthread_mutex_unlock(&p->w.lock);
	return rc;
}

void store_pipe_free(struct store_pipe *p)
{
	if (!p)
		return;
	thread_worker_stop(&p->w);
	pthread_cond_destroy(&p->done);
	thread_worker_release(&p->w);
	store_hash_free(p->h);
	free(p);
}

ssize_t store_pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done,
			  off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int store_pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(fd, (const char *)buf + done, len - done,
			   off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

void store_hash_mem(char hex[STORE_SHA_HEX], const void *data, size_t len)
{
	unsigned char md[32];

	EVP_Digest(data, len, md, NULL, sha256(), NULL);
	to_hex(hex, md);
}

int store_hash_fd(char hex[STORE_SHA_HEX], int fd, uint64_t size,
		  struct cmfs_err *err)
{
	struct store_hash *h;
	char *b = malloc(IO_CHUNK);
	uint64_t off = 0;
	int rc = store_hash_new(&h);

	if (rc || !b) {
		free(b);
		store_hash_free(h);
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	}
	while (off < size) {
		size_t want = size - off < IO_CHUNK ? size - off : IO_CHUNK;
		ssize_t n = pread(fd, b, want, (off_t)off);

		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			cmfs_err_set(err, rc, "reading staged bytes: %s",
				     n < 0 ? strerror(errno) : "short file");
			goto out;
		}
		store_hash_update(h, b, (size_t)n);
		off += (uint64_t)n;
	}
	store_hash_final(h, hex);
out:
	free(b);
	store_hash_free(h);
	return rc;
}

int store_stage(struct store *s, int *out, struct cmfs_err *err)
{
	static unsigned long counter;
	char name[64];
	int fd = -1;

	if (!__atomic_load_n(&s->no_tmpfile, __ATOMIC_RELAXED)) {
		fd = openat(s->staging_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC,
			    0600);
		if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR ||
			       errno == EINVAL))
			__atomic_store_n(&s->no_tmpfile, 1, __ATOMIC_RELAXED);
	}
	if (fd < 0 && __atomic_load_n(&s->no_tmpfile, __ATOMIC_RELAXED)) {
		snprintf(name, sizeof(name), "stage-%ld-%lu", (long)getpid(),
			 __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
		fd = openat(s->staging_fd, name,
			    O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return cmfs_err_set(err, -errno, "staging file: %s",
				    strerror(errno));
	*out = fd;
	return 0;
}

/* "ab/abcdef..." for blob `sha` into `out` (at least 68 bytes). */
static void blob_rel(char *out, size_t n, const char *sha)
{
	snprintf(out, n, "%.2s/%s", sha, sha);
}

int store_blob_open(struct store *s, const char *sha, int *out,
		    struct cmfs_err *err)
{
	char rel[80];
	int fd;

	blob_rel(rel, sizeof(rel), sha);
	fd = openat(s->blobs_fd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cmfs_err_set(err, -errno, "blob %s: %s", sha,
				    strerror(errno));
	*out = fd;
	return 0;
}

int store_blob_exists(struct store *s, const char *sha)
{
	char rel[80];

	blob_rel(rel, sizeof(rel), sha);
	return !faccessat(s->blobs_fd, rel, F_OK, 0);
}

int store_copy_fd(int src, int dst, uint64_t size, struct cmfs_err *err)
{
	off_t in_off = 0, out_off = 0;
	char b[65536];
	ssize_t n;

	while ((uint64_t)in_off < size) {
		n = copy_file_range(src, &in_off, dst, &out_off,
				    (size_t)(size - (uint64_t)in_off), 0);
		if (n < 0 && (errno == EXDEV || errno == ENOSYS ||
			      errno == EOPNOTSUPP || errno == EINVAL)) {
			/* No in-kernel copy here: read and write. */
			n = pread(src, b, sizeof(b), in_off);
			if (n > 0 && pwrite(dst, b, (size_t)n, out_off) != n)
				n = -1;
			if (n > 0) {
				in_off += n;
				out_off += n;
			}
		}
		if (n <= 0)
			return cmfs_err_set(err, n < 0 ? -errno : -EIO,
					    "copying: %s",
					    n < 0 ? strerror(errno)
						  : "file shrank");
	}
	return 0;
}

/* Copy `size` bytes of `fd` to a new file linked in blobs/ as `rel`. */
static int link_copy(struct store *s, int fd, const char *rel, uint64_t size,
		     struct cmfs_err *err)
{
	int tmp, rc = store_stage(s, &tmp, err);
	char proc[64];

	if (rc)
		return rc;
	rc = store_copy_fd(fd, tmp, size, err);
	if (!rc && fsync(tmp))
		rc = cmfs_err_set(err, -errno, "staging: %s", strerror(errno));
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tmp);
	if (!rc && linkat(AT_FDCWD, proc, s->blobs_fd, rel, AT_SYMLINK_FOLLOW) &&
	    errno != EEXIST)
		rc = cmfs_err_set(err, -errno, "blob %s: %s", rel,
				  strerror(errno));
	close(tmp);
	return rc;
}

int store_blob_commit(struct store *s, int fd, const char *sha, uint64_t size,
		      int durable, struct cmfs_err *err)
{
	char rel[80], proc[64], dir[3];
	struct stat st;
	int dfd, rc = 0;

	/* The staging file holds the blob's bytes and no more: cut what a
	 * writer left past them.  Only then: a truncate to the same size
	 * still journals new times on ext4 (50 us of a small upload). */
	if ((fstat(fd, &st) || st.st_size != (off_t)size) &&
	    ftruncate(fd, (off_t)size))
		return cmfs_err_set(err, -errno, "staging file: %s",
				    strerror(errno));
	/* durable: the bytes are on disk before the blob has a name. */
	if (durable && fsync(fd))
		return cmfs_err_set(err, -errno, "staging file: %s",
				    strerror(errno));
	memcpy(dir, sha, 2);
	dir[2] = '\0';
	/* The blob's directory is opened only to be synced. */
	if (durable && (rc = open_dir(s->blobs_fd, dir, &dfd)))
		return cmfs_err_set(err, rc, "blob directory %s: %s", dir,
				    strerror(-rc));
	blob_rel(rel, sizeof(rel), sha);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rc = linkat(AT_FDCWD, proc, s->blobs_fd, rel, AT_SYMLINK_FOLLOW) ? errno
									 : 0;
	if (rc == ENOENT && !durable) {
		/* Made at the first blob it holds. */
		if ((rc = ensure_dir(s->blobs_fd, dir)))
			return cmfs_err_set(err, rc, "blob directory %s: %s",
					    dir, strerror(-rc));
		__atomic_store_n(&s->new_dir, 1, __ATOMIC_RELEASE);
		rc = linkat(AT_FDCWD, proc, s->blobs_fd, rel, AT_SYMLINK_FOLLOW)
			     ? errno
			     : 0;
	}
	if (rc == ENOENT) {
		/* An anonymous file links once: after a refused commit freed
		 * its blob, a retry copies the bytes instead. */
		rc = link_copy(s, fd, rel, size, err);
	} else if (rc && rc != EEXIST) {
		rc = cmfs_err_set(err, -rc, "blob %s: %s", sha, strerror(rc));
	} else {
		rc = 0;
	}
	/*
	 * durable: the name must be on disk before the catalog refers to
	 * it.  On a journalling file system the catalog's own fsync would
	 * carry it, but ext4 without a journal (as on these machines) does
	 * not, so the directory is synced here.  Otherwise the caller's
	 * store_sync() writes both, and a power loss before it is the
	 * caller's to detect (repo_sync.c: unsynced blobs).
	 */
	if (durable) {
		if (!rc && fsync(dfd))
			rc = cmfs_err_set(err, -errno, "blob directory %s: %s",
					  dir, strerror(errno));
		close(dfd);
	}
	return rc;
}

int store_sync(struct store *s)
{
	return syncfs(s->root_fd) ? -errno : 0;
}

/* fsync(2) of `name` under `dirfd`: 0, -errno, or 0 when it is missing. */
static int sync_at(int dirfd, const char *name, int flags)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | flags), rc = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fsync(fd))
		rc = -errno;
	close(fd);
	return rc;
}

int store_blobs_sync(struct store *s, char (*shas)[STORE_SHA_HEX], size_t n)
{
	unsigned char dirs[256 / 8] = {0};
	char rel[80], dir[3];
	unsigned d;
	size_t i;
	int rc = 0, e;

	/* Directories go after their blobs: a blob is named once its bytes
	 * are there. */
	for (i = 0; i < n; i++) {
		blob_rel(rel, sizeof(rel), shas[i]);
		if ((e = sync_at(s->blobs_fd, rel, 0)) && !rc)
			rc = e;
	}
	for (i = 0; i < n; i++) {
		if (sscanf(shas[i], "%2x", &d) != 1 ||
		    dirs[d / 8] & (1u << d % 8))
			continue;
		dirs[d / 8] |= (unsigned char)(1u << d % 8);
		memcpy(dir, shas[i], 2);
		dir[2] = '\0';
		if ((e = sync_at(s->blobs_fd, dir, O_DIRECTORY)) && !rc)
			rc = e;
	}
	if (__atomic_exchange_n(&s->new_dir, 0, __ATOMIC_ACQ_REL) &&
	    fsync(s->blobs_fd)) {
		__atomic_store_n(&s->new_dir, 1, __ATOMIC_RELEASE);
		if (!rc)
			rc = -errno;
	}
	return rc;
}

int store_blob_unlink(struct store *s, const char *sha)
{
	char rel[80];

	blob_rel(rel, sizeof(rel), sha);
	if (unlinkat(s->blobs_fd, rel, 0) && errno != ENOENT)
		return -errno;
	return 0;
}

void store_blob_retire(struct store *s, const char *sha,
		       char name[STORE_RETIRED])
{
	unsigned long n = __atomic_add_fetch(&s->retired, 1, __ATOMIC_RELAXED);
	char rel[80];

	blob_rel(rel, sizeof(rel), sha);
	snprintf(name, STORE_RETIRED, RETIRED_PREFIX "%.64s-%lu", sha, n);
	if (!renameat(s->blobs_fd, rel, s->staging_fd, name))
		return;
	if (errno != ENOENT)
		unlinkat(s->blobs_fd, rel, 0);
	name[0] = '\0';
}

void store_reap(struct store *s, const char *name)
{
	unlinkat(s->staging_fd, name, 0);
}

/* Open directory `name` under `dirfd` as a DIR stream. */
static DIR *opendir_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d)
		close(fd);
	return d;
}

int store_blob_walk(struct store *s,
		    int (*fn)(void *arg, const char *sha, uint64_t size),
		    void *arg)
{
	DIR *top = opendir_at(s->blobs_fd, "."), *sub;
	struct dirent *e, *f;
	struct stat st;
	int rc = 0;

	if (!top)
		return -errno;
	while (!rc && (e = readdir(top))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) != 2)
			continue;
		sub = opendir_at(s->blobs_fd, e->d_name);
		if (!sub)
			continue;
		while (!rc && (f = readdir(sub))) {
			if (f->d_name[0] == '.')
				continue;
			if (fstatat(dirfd(sub), f->d_name, &st, 0))
				continue;
			rc = fn(arg, f->d_name, (uint64_t)st.st_size);
		}
		closedir(sub);
	}
	closedir(top);
	return rc;
}

/* "<env>/<dir>/<name>" relative to scratch/. */
static int scratch_rel(char *out, size_t n, const char *env, char dir,
		       const char *name)
{
	int len = snprintf(out, n, "%s/%c/%s", env, dir, name);

	return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

int store_scratch_open(struct store *s, const char *env, char dir,
		       const char *name, int flags, mode_t mode, int *out)
{
	char rel[PATH_MAX], sub[80];
	int fd, rc = scratch_rel(rel, sizeof(rel), env, dir, name);

	if (rc)
		return rc;
	if (flags & O_CREAT) {
		snprintf(sub, sizeof(sub), "%s/%c", env, dir);
		if ((rc = ensure_dir(s->scratch_fd, env)) ||
		    (rc = ensure_dir(s->scratch_fd, sub)))
			return rc;
	}
	fd = openat(s->scratch_fd, rel, flags | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	*out = fd;
	return 0;
}

int store_scratch_stat(struct store *s, const char *env, char dir,
		       const char *name, struct stat *st)
{
	char rel[PATH_MAX];
	int rc = scratch_rel(rel, sizeof(rel), env, dir, name);

	if (rc)
		return rc;
	return fstatat(s->scratch_fd, rel, st, AT_SYMLINK_NOFOLLOW) ? -errno
								    : 0;
}

int store_scratch_unlink(struct store *s, const char *env, char dir,
			 const char *name)
{
	char rel[PATH_MAX];
	int rc = scratch_rel(rel, sizeof(rel), env, dir, name);

	if (rc)
		return rc;
	return unlinkat(s->scratch_fd, rel, 0) ? -errno : 0;
}

int store_scratch_rename(struct store *s, const char *env, char dir,
			 const char *from, const char *to)
{
	char a[PATH_MAX], b[PATH_MAX];
	int rc;

	if ((rc = scratch_rel(a, sizeof(a), env, dir, from)) ||
	    (rc = scratch_rel(b, sizeof(b), env, dir, to)))
		return rc;
	return renameat(s->scratch_fd, a, s->scratch_fd, b) ? -errno : 0;
}

int store_scratch_truncate(struct store *s, const char *env, char dir,
			   const char *name, off_t size)
{
	int fd, rc = store_scratch_open(s, env, dir, name, O_WRONLY, 0, &fd);

	if (rc)
		return rc;
	rc = ftruncate(fd, size) ? -errno : 0;
	close(fd);
	return rc;
}

int store_scratch_list(struct store *s, const char *env, char dir,
		       int (*fn)(void *arg, const char *name), void *arg)
{
	char sub[80];
	DIR *d;
	struct dirent *e;
	int rc = 0;

	snprintf(sub, sizeof(sub), "%s/%c", env, dir);
	d = opendir_at(s->scratch_fd, sub);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!rc && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rc = fn(arg, e->d_name);
	closedir(d);
	return rc;
}

/* Remove everything in directory `rel` under `dirfd`, then `rel` itself. */
static int remove_tree(int at, const char *rel)
{
	DIR *d = opendir_at(at, rel);
	struct dirent *e;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) && errno == EISDIR)
			remove_tree(dirfd(d), e->d_name);
	}
	closedir(d);
	return unlinkat(at, rel, AT_REMOVEDIR) && errno != ENOENT ? -errno : 0;
}

int store_scratch_drop_env(struct store *s, const char *env)
{
	return remove_tree(s->scratch_fd, env);
}

/* "<env>/<dir>-to/<target>/<name>" (name NULL: without it) relative to
 * scratch/. */
static int staged_rel(char *out, size_t n, const char *env, char dir,
		      const char *target, const char *name)
{
	int len = name ? snprintf(out, n, "%s/%c-to/%s/%s", env, dir, target,
				  name)
		       : snprintf(out, n, "%s/%c-to/%s", env, dir, target);

	return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

int store_scratch_stage(struct store *s, const char *env, char dir,
			const char *name, const char *target)
{
	char from[PATH_MAX], to[PATH_MAX], sub[PATH_MAX];
	int rc;

	if ((rc = scratch_rel(from, sizeof(from), env, dir, name)) ||
	    (rc = staged_rel(to, sizeof(to), env, dir, target, name)))
		return rc;
	/* Only a scratch file that is there gets a staging directory. */
	if (faccessat(s->scratch_fd, from, F_OK, AT_SYMLINK_NOFOLLOW))
		return -errno;
	snprintf(sub, sizeof(sub), "%s/%c-to", env, dir);
	if ((rc = ensure_dir(s->scratch_fd, sub)) ||
	    (rc = staged_rel(sub, sizeof(sub), env, dir, target, NULL)) ||
	    (rc = ensure_dir(s->scratch_fd, sub)))
		return rc;
	return renameat(s->scratch_fd, from, s->scratch_fd, to) ? -errno : 0;
}

int store_scratch_staged_open(struct store *s, const char *env, char dir,
			      const char *target, const char *name,
			      int flags, int *out)
{
	char rel[PATH_MAX], sub[PATH_MAX];
	int fd, rc = staged_rel(rel, sizeof(rel), env, dir, target, name);

	if (rc)
		return rc;
	if (flags & O_CREAT) {
		snprintf(sub, sizeof(sub), "%s/%c-to", env, dir);
		if ((rc = ensure_dir(s->scratch_fd, env)) ||
		    (rc = ensure_dir(s->scratch_fd, sub)) ||
		    (rc = staged_rel(sub, sizeof(sub), env, dir, target,
				     NULL)) ||
		    (rc = ensure_dir(s->scratch_fd, sub)))
			return rc;
	}
	/* A staged file is made as a scratch file of tables/ is (0644). */
	fd = openat(s->scratch_fd, rel, flags | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	*out = fd;
	return 0;
}

int store_scratch_unstage(struct store *s, const char *env, char dir,
			  const char *target, const char *name, int restore)
{
	char staged[PATH_MAX], sub[PATH_MAX], back[PATH_MAX];
	int rc;

	if ((rc = staged_rel(staged, sizeof(staged), env, dir, target,
			     name)) ||
	    (rc = staged_rel(sub, sizeof(sub), env, dir, target, NULL)) ||
	    (rc = scratch_rel(back, sizeof(back), env, dir, name)))
		return rc;
	if (restore) {
		char tdir[80];

		snprintf(tdir, sizeof(tdir), "%s/%c", env, dir);
		rc = ensure_dir(s->scratch_fd, tdir);
		if (!rc && renameat(s->scratch_fd, staged, s->scratch_fd, back))
			rc = -errno;
	}
	else
		rc = unlinkat(s->scratch_fd, staged, 0) ? -errno : 0;
	/* Gone once its last staged file is: another may still be there. */
	unlinkat(s->scratch_fd, sub, AT_REMOVEDIR);
	return rc;
}

int store_scratch_staged(struct store *s, const char *env, char dir,
			 int (*fn)(void *arg, const char *target,
				   const char *name),
			 void *arg)
{
	char sub[PATH_MAX];
	DIR *top, *d;
	struct dirent *t, *e;
	int rc = 0;

	snprintf(sub, sizeof(sub), "%s/%c-to", env, dir);
	top = opendir_at(s->scratch_fd, sub);
	if (!top)
		return errno == ENOENT ? 0 : -errno;
	while (!rc && (t = readdir(top))) {
		if (!strcmp(t->d_name, ".") || !strcmp(t->d_name, ".."))
			continue;
		d = opendir_at(dirfd(top), t->d_name);
		if (!d)
			continue;
		while (!rc && (e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				rc = fn(arg, t->d_name, e->d_name);
		closedir(d);
	}
	closedir(top);
	return rc;
}

void store_cache_max(struct store *s, uint64_t max)
{
	s->cache_max = max;
}

void store_blob_used(int fd)
{
	const struct timespec t[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };

	if (futimens(fd, t) || flock(fd, LOCK_SH | LOCK_NB))
		(void)0; /* a copy used less recently than it was, at worst */
}

struct cached {
	char sha[STORE_SHA_HEX];
	uint64_t size;
	struct timespec used;
};

struct census {
	struct store *s;
	struct cached *v;
	size_t n, cap;
	uint64_t total;
};

static int census_add(void *arg, const char *sha, uint64_t size)
{
	struct census *c = arg;
	char rel[80];
	struct stat st;

	if (strlen(sha) != STORE_SHA_HEX - 1)
		return 0;
	blob_rel(rel, sizeof(rel), sha);
	if (fstatat(c->s->blobs_fd, rel, &st, 0))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct cached *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	memcpy(c->v[c->n].sha, sha, STORE_SHA_HEX);
	c->v[c->n].size = size;
	c->v[c->n].used = st.st_atim;
	c->n++;
	c->total += size;
	return 0;
}

static int by_use(const void *a, const void *b)
{
	const struct timespec *x = &((const struct cached *)a)->used,
			      *y = &((const struct cached *)b)->used;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

/*
 * Blobs out, least recently used first, until the rest fit: each only
 * while no one holds it (an exclusive flock(2) that fails: someone has it
 * open), and unlinked while that lock is held, so an open that comes
 * after finds the name gone and fetches the blob again.
 */
int store_blob_trim(struct store *s, uint64_t *freed)
{
	struct census c = { s, NULL, 0, 0, 0 };
	char rel[80];
	size_t i;
	int fd, rc;

	if (freed)
		*freed = 0;
	if (!s->cache_max)
		return 0;
	pthread_mutex_lock(&s->trim_lock);
	rc = store_blob_walk(s, census_add, &c);
	if (!rc && c.total > s->cache_max)
		qsort(c.v, c.n, sizeof(*c.v), by_use);
	for (i = 0; !rc && i < c.n && c.total > s->cache_max; i++) {
		blob_rel(rel, sizeof(rel), c.v[i].sha);
		fd = openat(s->blobs_fd, rel, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB) &&
		    !unlinkat(s->blobs_fd, rel, 0)) {
			c.total -= c.v[i].size;
			if (freed)
				*freed += c.v[i].size;
		}
		close(fd);
	}
	pthread_mutex_unlock(&s->trim_lock);
	free(c.v);
	return rc;
}
