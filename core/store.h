/*
 * store.h - the blob store: content-addressed files under <store>/blobs,
 * staging files for uploads in flight, and scratch files (the temp files of
 * editors and rsync) under <store>/scratch.
 *
 * A blob is named by the SHA-256 of its bytes and never changes once in
 * place.  An upload's bytes go to an anonymous staging file (O_TMPFILE where
 * the file system has it, else a named file in <store>/staging that the
 * next start removes); store_blob_commit() fsyncs it and links it into
 * place before the catalog transaction that refers to it commits.  So a
 * crash leaves at worst a blob that nothing refers to, which the start-up
 * sweep (or `cmfs fsck --repair`) frees; never a referenced blob that is
 * missing or partial.
 *
 * Thread safety: a struct store is read-only after store_open(); every
 * function may be called from any thread.
 */
#ifndef CMFS_STORE_H
#define CMFS_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "err.h"

#define STORE_SHA_HEX 65	/* 64 hex digits and a NUL */

struct store;

/*
 * Open (creating as needed) the store directory `path`, and remove stale
 * named staging files left by a crash.  *out is freed with store_close().
 */
int store_open(struct store **out, const char *path, struct cmfs_err *err);
void store_close(struct store *s);

/* The store directory, absolute.  Valid while the store is open. */
const char *store_path(const struct store *s);

/*
 * The store as a catalog kept elsewhere knows it (catalog_bind_store):
 * "host:/path", this host's name and the store's path, into buf (n
 * bytes, cut short if need be).
 */
void store_ident(const struct store *s, char *buf, size_t n);

/*
 * Become the one process that changes the store: flock(2) <store>/lock
 * for as long as the store is open, then remove the named staging files a
 * crash left.  -EBUSY, naming the holder's pid, while another process
 * (a mount, fsck --repair, import) holds it.  Readers (export, fsck
 * without --repair) do not lock.
 */
int store_lock(struct store *s, struct cmfs_err *err);

/*
 * The reserve: a file of real blocks (fallocate(2)) that keeps a little
 * room in the store's file system, so that on a full disk a delete can
 * still commit and free space.  take() allocates it when it is missing
 * and the file system has 1.5 times its size free (-ENOSPC otherwise, and it
 * stays missing); release() gives its blocks back when the file system
 * has less than its size free, or `always`: 1 when it released them.
 * Size: 1/64 of the file system, from 1 MiB to 16 MiB.  Any thread.
 */
int store_reserve_take(struct store *s);
int store_reserve_release(struct store *s, int always);

/* A streaming SHA-256 (OpenSSL EVP). */
struct store_hash;
int store_hash_new(struct store_hash **out);
void store_hash_update(struct store_hash *h, const void *data, size_t len);
/* Write 64 hex digits and a NUL into `hex`; the hash can be reused. */
void store_hash_final(struct store_hash *h, char hex[STORE_SHA_HEX]);
void store_hash_free(struct store_hash *h);

/*
 * A SHA-256 of a file being written in order, computed on a thread of its
 * own: while the writer waits for its next bytes, the hasher reads the last
 * ones back (from the page cache) and hashes them, and, with `writeback`,
 * starts their writeback to disk, so that an fsync at commit has little
 * left to do.  `h` holds the hash of [0, from) already; the pipe owns it
 * from now on.
 */
struct store_pipe;
int store_pipe_new(struct store_pipe **out, int fd, struct store_hash *h,
		   uint64_t from, int writeback);
/* Bytes [0, upto) of the file are written: hash them. */
void store_pipe_feed(struct store_pipe *p, uint64_t upto);
/*
 * Wait for the hash of [0, upto) and write it into `hex`: 0, or -errno
 * when a read failed (then hash the file again).
 */
int store_pipe_final(struct store_pipe *p, uint64_t upto,
		     char hex[STORE_SHA_HEX]);
/* Stop the thread (at once, if it is still hashing) and free all. */
void store_pipe_free(struct store_pipe *p);

/* Up to `len` bytes of `fd` at `off` into buf, short only at its end
 * (EINTR is retried): how many, or -errno. */
ssize_t store_pread_full(int fd, void *buf, size_t len, off_t off);

/* All `len` bytes of buf to `fd` at `off` (EINTR is retried): 0 or
 * -errno. */
int store_pwrite_full(int fd, const void *buf, size_t len, off_t off);

/* SHA-256 of `len` bytes at `data`. */
void store_hash_mem(char hex[STORE_SHA_HEX], const void *data, size_t len);

/* SHA-256 of the first `size` bytes of `fd`, read with pread. */
int store_hash_fd(char hex[STORE_SHA_HEX], int fd, uint64_t size,
		  struct cmfs_err *err);

/*
 * A new, empty staging file open O_RDWR.  The caller closes it (and, for a
 * named one, nothing else: stale names are swept at the next start).
 */
int store_stage(struct store *s, int *out, struct cmfs_err *err);

/* Copy the first `size` bytes of `src` to `dst` (copy_file_range). */
int store_copy_fd(int src, int dst, uint64_t size, struct cmfs_err *err);

/*
 * Make the first `size` bytes of staging file `fd` the blob `sha`: fsync,
 * then link into blobs/ (an existing blob of that name is the same bytes
 * and is kept), then fsync the directory.  Without `durable`, neither
 * fsync: the caller makes the blob durable later with store_sync() and
 * must be ready to find it missing or torn after a power loss.  `fd`
 * stays open; it must not be written afterwards, since it may now be the
 * blob itself.
 */
int store_blob_commit(struct store *s, int fd, const char *sha, uint64_t size,
		      int durable, struct cmfs_err *err);

/*
 * Write everything written so far to the store's file system to disk
 * (syncfs(2): blobs, their directories and the catalog alike).  0 or
 * -errno (a writeback error since the last call is reported once).
 */
int store_sync(struct store *s);

/*
 * Write blobs shas[0..n) to disk with their names: each blob's bytes, its
 * directory, and blobs/ when a directory was made since the last call;
 * a blob missing now (freed since) is skipped.  Where a few blobs are new,
 * this is store_sync() without the rest of the file system: an upload in
 * progress keeps its bytes in the page cache.  0 or the first -errno.
 */
int store_blobs_sync(struct store *s, char (*shas)[STORE_SHA_HEX], size_t n);

/* Open blob `sha` read-only.  -ENOENT when it is missing. */
int store_blob_open(struct store *s, const char *sha, int *out,
		    struct cmfs_err *err);

/* 1 if blob `sha` is a file of the store now. */
int store_blob_exists(struct store *s, const char *sha);

/* Remove blob `sha`; a missing blob is not an error. */
int store_blob_unlink(struct store *s, const char *sha);

#define STORE_RETIRED 96 /* a retired blob's name: "freed-<sha>-<n>" */

/*
 * Take blob `sha` out of the store now and leave its unlink for later
 * (store_reap): it is renamed into staging/, which the next store_open()
 * sweeps should nobody reap it first.  Unlinking a big blob drops its
 * pages from the cache and frees its blocks, work that the caller, who
 * holds the lock uploads commit under, need not wait for.  `name` gets the name to
 * reap, or "" when there is nothing to reap (no such blob, or the rename
 * failed and the blob was unlinked here).
 */
void store_blob_retire(struct store *s, const char *sha,
		       char name[STORE_RETIRED]);

/* Unlink retired blob `name` (from store_blob_retire). */
void store_reap(struct store *s, const char *name);

/*
 * Exports in progress.  `cmfs export` reads blobs that a mount may free
 * meanwhile (the export reads one snapshot of the catalog, the mount goes
 * on deleting): store_export_hold() takes a shared lock on
 * <store>/export.lock (flock(2)) for as long as *out stays open, before
 * the export's snapshot begins; while any export holds it,
 * store_export_busy() says 1, and the mount leaves retired blobs in
 * staging/ instead of unlinking them (nor does a store_open() sweep
 * them), where store_blob_open_retired() finds blob `sha` (-ENOENT).
 */
int store_export_hold(struct store *s, int *out);
int store_export_busy(struct store *s);
int store_blob_open_retired(struct store *s, const char *sha, int *out);

/*
 * Call `fn` for every blob in the store with its name and size; a non-zero
 * return from `fn` stops the walk and is returned.
 */
int store_blob_walk(struct store *s,
		    int (*fn)(void *arg, const char *sha, uint64_t size),
		    void *arg);

/*
 * The copies of a host whose catalog keeps blobs (catalog_keeps_blobs()):
 * every blob file is one, which may go and be fetched again.
 * store_cache_max() bounds them to `max` bytes (0: no bound), before any
 * other thread uses the store.  store_blob_used(): blob file `fd` (from
 * store_blob_open) is being read: its access time set to now (what trim
 * orders by, whatever the file system's atime options) and a shared
 * flock(2) taken on it, which lasts while the file stays open (by the
 * caller, or by the kernel's passthrough).  store_blob_trim(): while the
 * blobs add up to more than the bound, remove the least recently used,
 * never one that is held so; *freed (may be NULL) gets how many bytes
 * went.  0 or -errno.
 */
void store_cache_max(struct store *s, uint64_t max);
void store_blob_used(int fd);
int store_blob_trim(struct store *s, uint64_t *freed);

/* Scratch files: `dir` is 'a' (artifacts/) or 't' (tables/). */

/* openat(2) of a scratch file, O_CLOEXEC added; -errno. */
int store_scratch_open(struct store *s, const char *env, char dir,
		       const char *name, int flags, mode_t mode, int *out);
int store_scratch_stat(struct store *s, const char *env, char dir,
		       const char *name, struct stat *st);
int store_scratch_unlink(struct store *s, const char *env, char dir,
			 const char *name);
int store_scratch_rename(struct store *s, const char *env, char dir,
			 const char *from, const char *to);
/* Truncate a scratch file to `size`. */
int store_scratch_truncate(struct store *s, const char *env, char dir,
			   const char *name, off_t size);
/* List the scratch names of one directory; `fn` as in store_blob_walk. */
int store_scratch_list(struct store *s, const char *env, char dir,
		       int (*fn)(void *arg, const char *name), void *arg);
/* Remove an environment's scratch directories and all they hold. */
int store_scratch_drop_env(struct store *s, const char *env);

/*
 * A scratch file of directory `dir` on its way to becoming `target` (a
 * table of tables/, an artifact of artifacts/) in one step of repo's:
 * moved to scratch/<env>/<dir>-to/<target>/<name>, out of the listing, so
 * that a crash before it is settled leaves it where repo_open() finds it.
 * -ENOENT when scratch file `name` is not there.
 */
int store_scratch_stage(struct store *s, const char *env, char dir,
			const char *name, const char *target);
/* Open a staged file (flags as openat(2); O_CREAT makes it, 0644, with
 * its directories); -errno. */
int store_scratch_staged_open(struct store *s, const char *env, char dir,
			      const char *target, const char *name,
			      int flags, int *out);
/* Settle a staged file: back to scratch file `name` (restore) or removed. */
int store_scratch_unstage(struct store *s, const char *env, char dir,
			  const char *target, const char *name, int restore);
/* Each staged file of `env`'s `dir`: fn(arg, target, name); non-zero
 * stops. */
int store_scratch_staged(struct store *s, const char *env, char dir,
			 int (*fn)(void *arg, const char *target,
				   const char *name),
			 void *arg);

#endif
