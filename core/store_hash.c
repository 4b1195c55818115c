/*
 * store_hash.c - the SHA-256 that names a blob: over bytes in memory, a
 * file, or an upload as it is written (store.h has the contract).
 *
 * OpenSSL's EVP digest does the hashing.  A large upload hashes aside, on
 * a thread of its own (struct store_pipe), so that its close waits only
 * for the bytes written last; with [store] sync = close that thread also
 * starts the file's writeback as it goes, which the commit's fsync then
 * finds done.  Kept apart from store.c, which lays blobs and scratch
 * files out on disk: this only reads bytes and names them.
 */
#define _GNU_SOURCE /* sync_file_range */
#include "store.h"
#include "thread.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IO_CHUNK (1 << 20)

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
