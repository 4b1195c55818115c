/*
 * blob.c - a blob's bytes, wherever the store keeps them (blob.h).
 *
 * An inline blob is handed out as a memfd so that everything that reads
 * a blob through a file descriptor (reads through the mount, the kernel's
 * passthrough of versions/, fsck's hashing, export) needs no second path;
 * it is sealed against every change, as a blob's file is never written.
 */
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#include "blob.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int blob_memfd(const void *data, size_t len, int *out, struct cmfs_err *err)
{
	const char *p = data;
	size_t done = 0;
	ssize_t n;
	int fd = memfd_create("cmfs-blob", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return cmfs_err_set(err, -errno, "memory file: %s",
				    strerror(errno));
	while (done < len) {
		n = pwrite(fd, p + done, len - done, (off_t)done);
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			close(fd);
			return cmfs_err_set(err, -e, "memory file: %s",
					    strerror(e));
		}
		done += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
		int e = errno;

		close(fd);
		return cmfs_err_set(err, -e, "memory file: %s", strerror(e));
	}
	*out = fd;
	return 0;
}

/* Inline blob `sha`, if it is one: 0, -ENOENT, or another -errno. */
static int inline_get(struct catalog *c, const char *sha, uint64_t size,
		      void **data, size_t *len, struct cmfs_err *err)
{
	int rc;

	if (size > BLOB_INLINE_LIMIT)
		return -ENOENT;
	rc = catalog_inline_get(c, sha, data, len, err);
	if (!rc && *len != size) {
		free(*data);
		*data = NULL;
		rc = cmfs_err_set(err, -EIO,
				  "blob %s: %zu bytes in the catalog, %llu "
				  "expected",
				  sha, *len, (unsigned long long)size);
	}
	return rc;
}

/* Bytes `data` (len, malloc'd, freed here) as a sealed memory file. */
static int memfd_of(void *data, size_t len, int *out, struct cmfs_err *err)
{
	int rc = blob_memfd(data, len, out, err);

	free(data);
	return rc;
}

/*
 * Copy blob `sha` of `size` bytes from a catalog that keeps blobs into
 * the store: staged, checked against its SHA-256, synced and only then
 * linked into place, so that the store never holds a wrong copy under
 * the blob's name (another thread copying it at once links the same
 * bytes: the first stays).
 */
static int fetch(struct store *s, struct catalog *c, const char *sha,
		 uint64_t size, struct cmfs_err *err)
{
	char hex[STORE_SHA_HEX];
	uint64_t got = 0;
	int fd, rc = store_stage(s, &fd, err);

	if (rc)
		return rc;
	rc = catalog_blob_get(c, sha, fd, &got, err);
	if (!rc && got != size)
		rc = cmfs_err_set(err, -EIO,
				  "blob %s: %llu bytes in the catalog, %llu "
				  "expected", sha, (unsigned long long)got,
				  (unsigned long long)size);
	if (!rc)
		rc = store_hash_fd(hex, fd, size, err);
	if (!rc && strcmp(hex, sha))
		rc = cmfs_err_set(err, -EIO,
				  "blob %s: the catalog's bytes have SHA-256 "
				  "%s: not taken", sha, hex);
	if (!rc)
		rc = store_blob_commit(s, fd, sha, size, 1, err);
	close(fd);
	return rc;
}

/*
 * Blob `sha`'s file.  Where the catalog keeps blobs, the file is this
 * host's copy: fetched first when the store lacks it (then the copies
 * are trimmed to [store] cache_max, this one held open), and marked used.
 */
static int file_open(struct store *s, struct catalog *c, const char *sha,
		     uint64_t size, int *out, struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	int fetched = 0, rc = store_blob_open(s, sha, out, &e2);

	if (rc == -ENOENT && catalog_keeps_blobs(c)) {
		rc = fetch(s, c, sha, size, &e2);
		fetched = !rc;
		if (!rc)
			rc = store_blob_open(s, sha, out, &e2);
	}
	if (rc)
		return cmfs_err_set(err, rc, "%s", cmfs_err_msg(&e2));
	if (catalog_keeps_blobs(c))
		store_blob_used(*out);
	if (fetched)
		store_blob_trim(s, NULL);
	return 0;
}

int blob_open(struct store *s, struct catalog *c, const char *sha,
	      uint64_t size, int *out, struct cmfs_err *err)
{
	void *data;
	size_t len;
	int rc;

	/* A file of the store named by the hash is the blob: opened without
	 * asking the catalog, which may be a server out of reach. */
	if (store_blob_exists(s, sha))
		return file_open(s, c, sha, size, out, err);
	rc = inline_get(c, sha, size, &data, &len, err);

	if (rc == -ENOENT)
		return file_open(s, c, sha, size, out, err);
	return rc ? rc : memfd_of(data, len, out, err);
}

int blob_open_inline(struct catalog *c, const char *sha, int *out,
		     struct cmfs_err *err)
{
	void *data;
	size_t len;
	int rc = catalog_inline_get(c, sha, &data, &len, err);

	return rc ? rc : memfd_of(data, len, out, err);
}

int blob_intact(struct store *s, struct catalog *c, const char *sha)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	char hex[STORE_SHA_HEX];
	struct stat st;
	void *data;
	size_t len;
	int fd, rc = catalog_inline_get(c, sha, &data, &len, &err);

	if (!rc) {
		store_hash_mem(hex, data, len);
		free(data);
	} else if (rc == -ENOENT &&
		   !(rc = store_blob_open(s, sha, &fd, &err))) {
		rc = fstat(fd, &st) ? -errno
				    : store_hash_fd(hex, fd,
						    (uint64_t)st.st_size, &err);
		close(fd);
	}
	if (!rc && strcmp(hex, sha))
		rc = -EBADMSG;
	return rc;
}

int blob_read(struct store *s, struct catalog *c, const char *sha,
	      uint64_t size, void *buf, struct cmfs_err *err)
{
	ssize_t n;
	void *data;
	size_t len;
	int fd, rc = inline_get(c, sha, size, &data, &len, err);

	if (!rc) {
		memcpy(buf, data, len);
		free(data);
		return 0;
	}
	if (rc != -ENOENT || (rc = file_open(s, c, sha, size, &fd, err)))
		return rc;
	n = store_pread_full(fd, buf, (size_t)size, 0);
	if (n < 0)
		rc = cmfs_err_set(err, (int)n, "blob %s: %s", sha,
				  strerror((int)-n));
	else if ((uint64_t)n < size)
		rc = cmfs_err_set(err, -EIO,
				  "blob %s: shorter than the catalog says",
				  sha);
	close(fd);
	return rc;
}
