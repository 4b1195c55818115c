/*
 * test_store.c - unit tests of the blob store (core/store.h): SHA-256
 * against known vectors, streaming versus store_hash_fd, staging and
 * commit, dedup of the same content, open/copy/unlink/walk of blobs, the
 * sweep of stale named staging files, scratch files (open, stat, rename,
 * truncate, list, drop_env), and reopening a store.  Each test works in a
 * fresh mkdtemp directory.
 */
#define _GNU_SOURCE
#include "t.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "store.h"

#include "fixture.h"

#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA_HELLO "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
#define SHA_448 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
#define SHA_MILLION_A "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

/* ---- helpers --------------------------------------------------------------- */

static char tmp[64];
static char spath[128];	/* <tmp>/store */

static void mktemp_dir(void)
{
	fixture_tmpdir(tmp, sizeof(tmp), "store");
	snprintf(spath, sizeof(spath), "%s/store", tmp);
}

static void rm_temp_dir(void)
{
	t_rmtree(tmp);
}

static struct store *open_store(void)
{
	struct store *s = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = store_open(&s, spath, &err);

	T_INTEQ(rc, 0);
	if (rc) {
		fprintf(stderr, "  store_open: %s\n", cmfs_err_msg(&err));
		exit(2);
	}
	return s;
}

/* 1 if <store>/<rel> exists. */
static int exists(const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", spath, rel);
	return stat(p, &st) == 0;
}

/* Number of entries (not . or ..) in <store>/<rel>, or -1. */
static int count_dir(const char *rel)
{
	char p[512];
	int n = 0;
	DIR *d;
	struct dirent *e;

	snprintf(p, sizeof(p), "%s/%s", spath, rel);
	d = opendir(p);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* The whole content of fd (from offset 0) into `out`, NUL-terminated. */
static ssize_t read_all(int fd, char *out, size_t n)
{
	ssize_t got = pread(fd, out, n - 1, 0);

	out[got > 0 ? got : 0] = '\0';
	return got;
}

/* Stage `len` bytes and commit them as their blob; the sha into `hex`. */
static int put_blob(struct store *s, const char *data, size_t len,
		    char hex[STORE_SHA_HEX])
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int fd, rc;

	fixture_sha(hex, data, len);
	rc = store_stage(s, &fd, &err);
	if (rc)
		return rc;
	if (pwrite(fd, data, len, 0) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	rc = store_blob_commit(s, fd, hex, len, 1, &err);
	close(fd);
	return rc;
}

/* ---- hashing --------------------------------------------------------------- */

static void test_hash_vectors(void)
{
	struct store_hash *h = NULL;
	char hex[STORE_SHA_HEX];
	static char million[1000000];
	size_t i;

	T_INTEQ(store_hash_new(&h), 0);
	T_CHECK(h != NULL);
	store_hash_final(h, hex);
	T_STREQ(hex, SHA_EMPTY);
	T_INTEQ(strlen(hex), 64);
	/* The hash is reusable after final. */
	store_hash_update(h, "abc", 3);
	store_hash_final(h, hex);
	T_STREQ(hex, SHA_ABC);
	store_hash_update(h, "a", 1);
	store_hash_update(h, "", 0);
	store_hash_update(h, "bc", 2);
	store_hash_final(h, hex);
	T_STREQ(hex, SHA_ABC);
	store_hash_update(h, "hello", 5);
	store_hash_final(h, hex);
	T_STREQ(hex, SHA_HELLO);
	store_hash_update(h,
			  "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
			  56);
	store_hash_final(h, hex);
	T_STREQ(hex, SHA_448);
	/* One million 'a', in uneven pieces. */
	memset(million, 'a', sizeof(million));
	for (i = 0; i < sizeof(million);) {
		size_t n = (i % 7919) + 1;

		if (n > sizeof(million) - i)
			n = sizeof(million) - i;
		store_hash_update(h, million + i, n);
		i += n;
	}
	store_hash_final(h, hex);
	T_STREQ(hex, SHA_MILLION_A);
	store_hash_free(h);
	store_hash_free(NULL);
}

static void test_hash_fd(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	char hex[STORE_SHA_HEX], want[STORE_SHA_HEX], path[128];
	size_t big = (3u << 20) + 7, i;
	unsigned char *data = malloc(big);
	int fd;

	mktemp_dir();
	snprintf(path, sizeof(path), "%s/f", tmp);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	T_CHECK(fd >= 0 && data != NULL);
	if (fd < 0 || !data)
		goto out;
	/* Empty file, size 0. */
	T_INTEQ(store_hash_fd(hex, fd, 0, &err), 0);
	T_STREQ(hex, SHA_EMPTY);
	T_INTEQ(pwrite(fd, "abc", 3, 0), 3);
	T_INTEQ(store_hash_fd(hex, fd, 3, &err), 0);
	T_STREQ(hex, SHA_ABC);
	/* A prefix only. */
	T_INTEQ(store_hash_fd(hex, fd, 2, &err), 0);
	fixture_sha(want, "ab", 2);
	T_STREQ(hex, want);
	/* Asking for more than the file holds: -EIO, "short file". */
	T_ERRNO(store_hash_fd(hex, fd, 4, &err), EIO);
	T_CONTAINS(err.msg, "short file");
	cmfs_err_clear(&err);
	/* Several read chunks (1 MiB each) agree with streaming. */
	for (i = 0; i < big; i++)
		data[i] = (unsigned char)(i * 2654435761u >> 13);
	T_CHECK(pwrite(fd, data, big, 0) == (ssize_t)big);
	fixture_sha(want, data, big);
	T_INTEQ(store_hash_fd(hex, fd, big, &err), 0);
	T_STREQ(hex, want);
	fixture_sha(want, data, 1u << 20);
	T_INTEQ(store_hash_fd(hex, fd, 1u << 20, &err), 0);
	T_STREQ(hex, want);
	close(fd);
	/* A bad fd: an error, not a hash. */
	T_CHECK(store_hash_fd(hex, fd, 10, &err) < 0);
out:
	free(data);
	rm_temp_dir();
}

/* ---- blobs ----------------------------------------------------------------- */

static void test_open_layout(void)
{
	struct store *s;
	struct cmfs_err err = CMFS_ERR_INIT;
	char real[4096], deep[256], file[256];

	mktemp_dir();
	s = open_store();
	T_CHECK(exists("blobs"));
	T_CHECK(exists("staging"));
	T_CHECK(exists("scratch"));
	T_CHECK(realpath(spath, real) != NULL);
	T_STREQ(store_path(s), real);
	T_CHECK(store_path(s)[0] == '/');
	store_close(s);
	store_close(NULL);

	/* A nested path is created whole; a relative path becomes absolute. */
	snprintf(deep, sizeof(deep), "%s/a/b/c", tmp);
	T_INTEQ(store_open(&s, deep, &err), 0);
	T_CHECK(s && store_path(s)[0] == '/');
	store_close(s);

	/* A path that is a file: an error, *out NULL. */
	snprintf(file, sizeof(file), "%s/plain", tmp);
	close(open(file, O_CREAT | O_WRONLY, 0600));
	s = (struct store *)1;
	T_ERRNO(store_open(&s, file, &err), ENOTDIR);
	T_CHECK(s == NULL);
	T_CONTAINS(err.msg, "plain");
	rm_temp_dir();
}

static void test_commit_open(void)
{
	struct store *s;
	struct cmfs_err err = CMFS_ERR_INIT;
	char hex[STORE_SHA_HEX], got[64], rel[128];
	struct stat st;
	int fd, bfd;

	mktemp_dir();
	s = open_store();
	T_INTEQ(store_stage(s, &fd, &err), 0);
	T_CHECK(fd >= 0);
	/* Write more than is committed: the commit cuts to `size`. */
	T_INTEQ(pwrite(fd, "hello world", 11, 0), 11);
	T_INTEQ(store_blob_commit(s, fd, SHA_HELLO, 5, 1, &err), 0);
	close(fd);
	snprintf(rel, sizeof(rel), "blobs/2c/%s", SHA_HELLO);
	T_CHECK(exists(rel));
	T_INTEQ(store_blob_open(s, SHA_HELLO, &bfd, &err), 0);
	T_INTEQ(read_all(bfd, got, sizeof(got)), 5);
	T_STREQ(got, "hello");
	T_INTEQ(fstat(bfd, &st), 0);
	T_INTEQ(st.st_size, 5);
	/* Read-only. */
	T_CHECK(write(bfd, "x", 1) < 0);
	close(bfd);
	/* The staging dir holds nothing once the file is closed. */
	T_INTEQ(count_dir("staging"), 0);

	/* A missing blob. */
	bfd = -7;
	T_ERRNO(store_blob_open(s, SHA_ABC, &bfd, &err), ENOENT);
	T_INTEQ(bfd, -7);
	T_CONTAINS(err.msg, SHA_ABC);

	/* The empty blob. */
	T_INTEQ(put_blob(s, "", 0, hex), 0);
	T_STREQ(hex, SHA_EMPTY);
	T_INTEQ(store_blob_open(s, SHA_EMPTY, &bfd, &err), 0);
	T_INTEQ(read_all(bfd, got, sizeof(got)), 0);
	close(bfd);
	store_close(s);
	rm_temp_dir();
}

static int count_blob(void *arg, const char *sha, uint64_t size)
{
	int *n = arg;

	(void)sha;
	(void)size;
	(*n)++;
	return 0;
}

static void test_dedup(void)
{
	struct store *s;
	struct cmfs_err err = CMFS_ERR_INIT;
	char hex[STORE_SHA_HEX], hex2[STORE_SHA_HEX], got[64];
	int n = 0, bfd, fd;

	mktemp_dir();
	s = open_store();
	T_INTEQ(put_blob(s, "abc", 3, hex), 0);
	T_STREQ(hex, SHA_ABC);
	T_INTEQ(put_blob(s, "abc", 3, hex2), 0);
	T_STREQ(hex2, SHA_ABC);
	T_INTEQ(store_blob_walk(s, count_blob, &n), 0);
	T_INTEQ(n, 1);
	T_INTEQ(count_dir("blobs/ba"), 1);
	/* The kept blob is the first one, whole. */
	T_INTEQ(store_blob_open(s, SHA_ABC, &bfd, &err), 0);
	T_INTEQ(read_all(bfd, got, sizeof(got)), 3);
	T_STREQ(got, "abc");
	/* A second commit of the same name keeps the existing bytes (the
	 * store trusts the name; the staging file is not linked). */
	T_INTEQ(store_stage(s, &fd, &err), 0);
	T_INTEQ(pwrite(fd, "abc", 3, 0), 3);
	T_INTEQ(store_blob_commit(s, fd, SHA_ABC, 3, 0, &err), 0);
	close(fd);
	T_INTEQ(store_sync(s), 0);
	T_INTEQ(read_all(bfd, got, sizeof(got)), 3);
	T_STREQ(got, "abc");
	close(bfd);
	store_close(s);
	rm_temp_dir();
}

static void test_copy_unlink(void)
{
	struct store *s;
	struct cmfs_err err = CMFS_ERR_INIT;
	char hex[STORE_SHA_HEX], got[4096];
	static char data[3000];
	int fd, fd2, bfd;
	size_t i;

	mktemp_dir();
	s = open_store();
	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)('A' + i % 50);
	T_INTEQ(put_blob(s, data, sizeof(data), hex), 0);
	/* Copy-on-write into a new staging file. */
	T_INTEQ(store_stage(s, &fd, &err), 0);
	T_INTEQ(store_blob_open(s, hex, &bfd, &err), 0);
	T_INTEQ(store_copy_fd(bfd, fd, sizeof(data), &err), 0);
	close(bfd);
	T_INTEQ(read_all(fd, got, sizeof(got)), (ssize_t)sizeof(data));
	T_CHECK(memcmp(got, data, sizeof(data)) == 0);
	/* Opening a missing blob. */
	T_ERRNO(store_blob_open(s, SHA_ABC, &bfd, &err), ENOENT);
	cmfs_err_clear(&err);
	/* store_pread_full reads at an offset, and short only at the end. */
	memset(got, 0, sizeof(got));
	T_INTEQ(store_pread_full(fd, got, 100, 50), 100);
	T_CHECK(memcmp(got, data + 50, 100) == 0);
	T_INTEQ(store_pread_full(fd, got, sizeof(got), 2900),
		(ssize_t)sizeof(data) - 2900);
	T_INTEQ(store_pread_full(-1, got, 1, 0), -EBADF);
	/* store_copy_fd copies a prefix. */
	T_INTEQ(store_stage(s, &fd2, &err), 0);
	T_INTEQ(store_copy_fd(fd, fd2, 100, &err), 0);
	T_INTEQ(read_all(fd2, got, sizeof(got)), 100);
	T_CHECK(memcmp(got, data, 100) == 0);
	/* Asking for more than the source holds fails. */
	T_CHECK(store_copy_fd(fd2, fd, 200, &err) < 0);
	close(fd);
	close(fd2);

	/* Unlink: gone; unlinking again is fine. */
	T_INTEQ(store_blob_unlink(s, hex), 0);
	T_ERRNO(store_blob_open(s, hex, &bfd, NULL), ENOENT);
	T_INTEQ(store_blob_unlink(s, hex), 0);
	T_INTEQ(store_blob_unlink(s, SHA_ABC), 0);
	store_close(s);
	rm_temp_dir();
}

struct walked {
	int n;
	char sha[4][STORE_SHA_HEX];
	uint64_t size[4];
};

static int collect_blob(void *arg, const char *sha, uint64_t size)
{
	struct walked *w = arg;

	if (w->n < 4) {
		snprintf(w->sha[w->n], STORE_SHA_HEX, "%s", sha);
		w->size[w->n] = size;
	}
	w->n++;
	return 0;
}

static int stop_walk(void *arg, const char *sha, uint64_t size)
{
	(void)sha;
	(void)size;
	(*(int *)arg)++;
	return 42;
}

static void test_walk(void)
{
	struct store *s;
	struct walked w;
	char h1[STORE_SHA_HEX], h2[STORE_SHA_HEX], junk[256];
	int i, n = 0;

	mktemp_dir();
	s = open_store();
	memset(&w, 0, sizeof(w));
	T_INTEQ(store_blob_walk(s, collect_blob, &w), 0);
	T_INTEQ(w.n, 0);
	T_INTEQ(put_blob(s, "abc", 3, h1), 0);
	T_INTEQ(put_blob(s, "hello", 5, h2), 0);
	/* Not blobs: a dot file and a directory with a long name. */
	snprintf(junk, sizeof(junk), "%s/blobs/.tmp", spath);
	close(open(junk, O_CREAT | O_WRONLY, 0600));
	snprintf(junk, sizeof(junk), "%s/blobs/abc", spath);
	mkdir(junk, 0700);
	T_INTEQ(store_blob_walk(s, collect_blob, &w), 0);
	T_INTEQ(w.n, 2);
	for (i = 0; i < 2 && i < w.n; i++) {
		if (!strcmp(w.sha[i], SHA_ABC))
			T_INTEQ(w.size[i], 3);
		else if (!strcmp(w.sha[i], SHA_HELLO))
			T_INTEQ(w.size[i], 5);
		else
			T_CHECK(!"unexpected blob in walk");
	}
	T_CHECK(w.n == 2 && strcmp(w.sha[0], w.sha[1]) != 0);
	/* A non-zero return stops the walk and is returned. */
	T_INTEQ(store_blob_walk(s, stop_walk, &n), 42);
	T_INTEQ(n, 1);
	store_close(s);
	rm_temp_dir();
}

/* One holder of the lock at a time, named to the second; free on close. */
static void test_lock(void)
{
	struct store *a, *b;
	struct cmfs_err err = CMFS_ERR_INIT;
	char pid[32];

	mktemp_dir();
	a = open_store();
	b = open_store();
	T_INTEQ(store_lock(a, NULL), 0);
	T_INTEQ(store_lock(a, NULL), 0); /* held already */
	T_ERRNO(store_lock(b, &err), EBUSY);
	snprintf(pid, sizeof(pid), "pid %ld", (long)getpid());
	T_CONTAINS(err.msg, pid);
	store_close(a);
	T_INTEQ(store_lock(b, NULL), 0);
	store_close(b);
	rm_temp_dir();
}

/* Blocks of <store>/reserve, in bytes; -1 when there is none. */
static long long reserve_bytes(void)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/reserve", spath);
	return stat(p, &st) ? -1 : (long long)st.st_blocks * 512;
}

/*
 * The reserve holds real blocks; on a file system with room it is kept
 * (release without `always` does nothing), and taken again after a
 * release.
 */
static void test_reserve(void)
{
	struct store *s;

	mktemp_dir();
	s = open_store();
	T_INTEQ(reserve_bytes(), -1);
	T_INTEQ(store_reserve_take(s), 0);
	T_CHECK(reserve_bytes() >= 1 << 20);
	T_INTEQ(store_reserve_take(s), 0);
	T_INTEQ(store_reserve_release(s, 0), 0);
	T_CHECK(reserve_bytes() >= 1 << 20);
	T_INTEQ(store_reserve_release(s, 1), 1);
	T_INTEQ(reserve_bytes(), -1);
	T_INTEQ(store_reserve_release(s, 1), 0);
	T_INTEQ(store_reserve_take(s), 0);
	T_CHECK(reserve_bytes() >= 1 << 20);
	store_close(s);
	rm_temp_dir();
}

/* Named staging files left by a crash are swept at open; blobs stay. */
static void test_sweep_staging(void)
{
	struct store *s;
	char hex[STORE_SHA_HEX], p[256];

	mktemp_dir();
	s = open_store();
	T_INTEQ(put_blob(s, "abc", 3, hex), 0);
	store_close(s);
	snprintf(p, sizeof(p), "%s/staging/stage-123-1", spath);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	snprintf(p, sizeof(p), "%s/staging/stage-123-2", spath);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	T_INTEQ(count_dir("staging"), 2);
	s = open_store();
	/* A reader (export) leaves them: they may be a mount's. */
	T_INTEQ(count_dir("staging"), 2);
	T_INTEQ(store_lock(s, NULL), 0);
	T_INTEQ(count_dir("staging"), 0);
	/* Reopened: the blob is still there, whole. */
	{
		int bfd;
		char got[16];

		T_INTEQ(store_blob_open(s, SHA_ABC, &bfd, NULL), 0);
		T_INTEQ(read_all(bfd, got, sizeof(got)), 3);
		T_STREQ(got, "abc");
		close(bfd);
	}
	store_close(s);
	rm_temp_dir();
}

/* ---- scratch --------------------------------------------------------------- */

struct names {
	int n;
	char v[8][64];
};

static int collect_name(void *arg, const char *name)
{
	struct names *l = arg;

	if (l->n < 8)
		snprintf(l->v[l->n], 64, "%s", name);
	l->n++;
	return 0;
}

static int has_name(const struct names *l, const char *name)
{
	int i;

	for (i = 0; i < l->n && i < 8; i++)
		if (!strcmp(l->v[i], name))
			return 1;
	return 0;
}

static void test_scratch(void)
{
	struct store *s;
	struct stat st;
	struct names l;
	char got[64], p[256], longname[5000];
	int fd;

	mktemp_dir();
	s = open_store();
	/* Nothing there yet: no entries, not an error. */
	memset(&l, 0, sizeof(l));
	T_INTEQ(store_scratch_list(s, "dev", 'a', collect_name, &l), 0);
	T_INTEQ(l.n, 0);
	T_ERRNO(store_scratch_open(s, "dev", 'a', ".x", O_RDONLY, 0, &fd),
		ENOENT);
	T_ERRNO(store_scratch_stat(s, "dev", 'a', ".x", &st), ENOENT);

	/* Create, write, stat. */
	T_INTEQ(store_scratch_open(s, "dev", 'a', ".x.jar.tmp",
				   O_CREAT | O_RDWR | O_EXCL, 0600, &fd), 0);
	T_INTEQ(pwrite(fd, "scratch!", 8, 0), 8);
	close(fd);
	T_INTEQ(store_scratch_stat(s, "dev", 'a', ".x.jar.tmp", &st), 0);
	T_INTEQ(st.st_size, 8);
	T_CHECK(S_ISREG(st.st_mode));
	T_ERRNO(store_scratch_open(s, "dev", 'a', ".x.jar.tmp",
				   O_CREAT | O_RDWR | O_EXCL, 0600, &fd),
		EEXIST);
	/* The directories are separate: 'a' and 't', env by env. */
	T_ERRNO(store_scratch_stat(s, "dev", 't', ".x.jar.tmp", &st), ENOENT);
	T_ERRNO(store_scratch_stat(s, "prod", 'a', ".x.jar.tmp", &st), ENOENT);
	T_INTEQ(store_scratch_open(s, "dev", 't', "4913",
				   O_CREAT | O_WRONLY, 0600, &fd), 0);
	close(fd);
	T_INTEQ(store_scratch_open(s, "prod", 'a', ".p",
				   O_CREAT | O_WRONLY, 0600, &fd), 0);
	close(fd);
	/* The descriptor is close-on-exec. */
	T_INTEQ(store_scratch_open(s, "dev", 'a', ".x.jar.tmp", O_RDONLY, 0,
				   &fd), 0);
	T_CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	T_INTEQ(read_all(fd, got, sizeof(got)), 8);
	T_STREQ(got, "scratch!");
	close(fd);

	/* Truncate. */
	T_INTEQ(store_scratch_truncate(s, "dev", 'a', ".x.jar.tmp", 3), 0);
	T_INTEQ(store_scratch_stat(s, "dev", 'a', ".x.jar.tmp", &st), 0);
	T_INTEQ(st.st_size, 3);
	T_ERRNO(store_scratch_truncate(s, "dev", 'a', ".none", 3), ENOENT);

	/* Rename, onto a new name and over an existing one. */
	T_INTEQ(store_scratch_rename(s, "dev", 'a', ".x.jar.tmp", ".y"), 0);
	T_ERRNO(store_scratch_stat(s, "dev", 'a', ".x.jar.tmp", &st), ENOENT);
	T_INTEQ(store_scratch_stat(s, "dev", 'a', ".y", &st), 0);
	T_INTEQ(st.st_size, 3);
	T_INTEQ(store_scratch_open(s, "dev", 'a', ".z", O_CREAT | O_WRONLY,
				   0600, &fd), 0);
	close(fd);
	T_INTEQ(store_scratch_rename(s, "dev", 'a', ".y", ".z"), 0);
	T_INTEQ(store_scratch_stat(s, "dev", 'a', ".z", &st), 0);
	T_INTEQ(st.st_size, 3);
	T_ERRNO(store_scratch_rename(s, "dev", 'a', ".gone", ".w"), ENOENT);

	/* List. */
	T_INTEQ(store_scratch_open(s, "dev", 'a', ".w", O_CREAT | O_WRONLY,
				   0600, &fd), 0);
	close(fd);
	memset(&l, 0, sizeof(l));
	T_INTEQ(store_scratch_list(s, "dev", 'a', collect_name, &l), 0);
	T_INTEQ(l.n, 2);
	T_CHECK(has_name(&l, ".z"));
	T_CHECK(has_name(&l, ".w"));
	memset(&l, 0, sizeof(l));
	T_INTEQ(store_scratch_list(s, "dev", 't', collect_name, &l), 0);
	T_INTEQ(l.n, 1);
	T_CHECK(has_name(&l, "4913"));

	/* Unlink. */
	T_INTEQ(store_scratch_unlink(s, "dev", 'a', ".w"), 0);
	T_ERRNO(store_scratch_unlink(s, "dev", 'a', ".w"), ENOENT);

	/* A symlink planted in the scratch dir is not followed. */
	snprintf(p, sizeof(p), "%s/scratch/dev/a/.link", spath);
	T_INTEQ(symlink("/etc/passwd", p), 0);
	T_ERRNO(store_scratch_open(s, "dev", 'a', ".link", O_RDONLY, 0, &fd),
		ELOOP);
	T_INTEQ(store_scratch_stat(s, "dev", 'a', ".link", &st), 0);
	T_CHECK(S_ISLNK(st.st_mode));

	/* A name too long for a path. */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[0] = '.';
	longname[sizeof(longname) - 1] = '\0';
	T_ERRNO(store_scratch_open(s, "dev", 'a', longname,
				   O_CREAT | O_WRONLY, 0600, &fd),
		ENAMETOOLONG);
	T_ERRNO(store_scratch_stat(s, "dev", 'a', longname, &st),
		ENAMETOOLONG);

	/* Drop one environment: all of it goes, the other stays. */
	T_INTEQ(store_scratch_drop_env(s, "dev"), 0);
	snprintf(p, sizeof(p), "scratch/dev");
	T_CHECK(!exists(p));
	memset(&l, 0, sizeof(l));
	T_INTEQ(store_scratch_list(s, "dev", 'a', collect_name, &l), 0);
	T_INTEQ(l.n, 0);
	T_INTEQ(store_scratch_stat(s, "prod", 'a', ".p", &st), 0);
	T_INTEQ(store_scratch_drop_env(s, "dev"), 0);	/* again: fine */
	T_INTEQ(store_scratch_drop_env(s, "never"), 0);
	store_close(s);

	/* Reopened, the scratch files are still there. */
	s = open_store();
	T_INTEQ(store_scratch_stat(s, "prod", 'a', ".p", &st), 0);
	store_close(s);
	rm_temp_dir();
}

/* A scratch directory with a subdirectory inside is dropped whole. */
static void test_drop_nested(void)
{
	struct store *s;
	char p[256];
	int fd;

	mktemp_dir();
	s = open_store();
	T_INTEQ(store_scratch_open(s, "e1", 't', "f", O_CREAT | O_WRONLY,
				   0600, &fd), 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/scratch/e1/t/sub", spath);
	T_INTEQ(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/scratch/e1/t/sub/inner", spath);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	T_INTEQ(store_scratch_drop_env(s, "e1"), 0);
	T_CHECK(!exists("scratch/e1"));
	store_close(s);
	rm_temp_dir();
}

/* Blob `hex` open, marked used now (a little after the one before). */
static int used_now(struct store *s, const char *hex)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int fd = -1;

	usleep(20000);
	if (store_blob_open(s, hex, &fd, &err))
		return -1;
	store_blob_used(fd);
	return fd;
}

/* cache_max: least recently used out first, never one held open. */
static void test_trim(void)
{
	struct store *s;
	char a[STORE_SHA_HEX], b[STORE_SHA_HEX], c[STORE_SHA_HEX];
	char big[3][4000];
	uint64_t freed = 99;
	int fa, fb, fc;

	mktemp_dir();
	s = open_store();
	memset(big[0], 'a', sizeof(big[0]));
	memset(big[1], 'b', sizeof(big[1]));
	memset(big[2], 'c', sizeof(big[2]));
	T_INTEQ(put_blob(s, big[0], sizeof(big[0]), a), 0);
	T_INTEQ(put_blob(s, big[1], sizeof(big[1]), b), 0);
	T_INTEQ(put_blob(s, big[2], sizeof(big[2]), c), 0);
	/* No bound: nothing goes. */
	T_INTEQ(store_blob_trim(s, &freed), 0);
	T_INTEQ(freed, 0);
	store_cache_max(s, 9000);
	/* Used b, then a, then c: b is the least recently used. */
	fb = used_now(s, b);
	fa = used_now(s, a);
	fc = used_now(s, c);
	close(fb);
	close(fc);
	T_INTEQ(store_blob_trim(s, &freed), 0);
	T_INTEQ(freed, 4000);
	T_CHECK(!store_blob_exists(s, b));
	T_CHECK(store_blob_exists(s, a) && store_blob_exists(s, c));
	/* Under the bound: nothing more goes. */
	T_INTEQ(store_blob_trim(s, &freed), 0);
	T_INTEQ(freed, 0);
	/* a, least recently used but open, stays; c goes instead. */
	store_cache_max(s, 4000);
	T_INTEQ(store_blob_trim(s, &freed), 0);
	T_CHECK(store_blob_exists(s, a));
	T_CHECK(!store_blob_exists(s, c));
	close(fa);
	/* Closed, it may go. */
	store_cache_max(s, 1);
	T_INTEQ(store_blob_trim(s, &freed), 0);
	T_CHECK(!store_blob_exists(s, a));
	T_INTEQ(freed, 4000);
	store_close(s);
	rm_temp_dir();
}

int main(void)
{
	T_RUN(test_hash_vectors);
	T_RUN(test_hash_fd);
	T_RUN(test_open_layout);
	T_RUN(test_commit_open);
	T_RUN(test_dedup);
	T_RUN(test_copy_unlink);
	T_RUN(test_walk);
	T_RUN(test_sweep_staging);
	T_RUN(test_lock);
	T_RUN(test_reserve);
	T_RUN(test_scratch);
	T_RUN(test_drop_nested);
	T_RUN(test_trim);
	return T_DONE();
}
