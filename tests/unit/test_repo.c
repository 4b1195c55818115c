/*
 * test_repo.c - unit tests of the rules of DESIGN.md over catalog and store
 * (core/repo.h): environments, uploads (new version, idempotent, copy-on-
 * write, writes out of order), the *.jar-must-be-a-zip rule, limits,
 * version and artifact removal with blob freeing, renames, labels (syntax,
 * sql-artifact-type, the check against a real JAR's factories), scratch
 * files and their labels, tables (valid, invalid, CTAS, names, LIKE), the
 * events line each operation writes, reopening, and the sweep of orphan
 * blobs at open.
 *
 * Each test opens a repo whose store lives in a fresh mkdtemp directory.
 * The JAR fixtures come from tests/fixtures/jars/ (run with cwd = tests/);
 * a test that needs one and does not find it says so and skips that part.
 */
#define _GNU_SOURCE
#include "t.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "blob.h"
#include "buf.h"
#include "catalog.h"
#include "clock.h"
#include "config.h"
#include "err.h"
#include "repo.h"
#include "store.h"

#include "fixture.h"

#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_HELLO "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
#define TYPE "cmf.confluent.io/sql-artifact-type"
#define IDENT "cmf.confluent.io/sql-artifact-identifier"

/* ---- helpers --------------------------------------------------------------- */

static const struct repo_who who = { 1000, 1000, 4242, 0, NULL };

static char last_msg[CMFS_ERR_MSG];	/* the message of the last call */

static void setup(struct fixture *x)
{
	fixture_open(x, "repo", NULL, FIXTURE_MNT, 1 << 22);
}

/* setup() for a test of blob files: no blob is inline. */
static void setup_files(struct fixture *x)
{
	setup(x);
	x->cfg.inline_max = 0;
}

static void keep_msg(const struct cmfs_err *err)
{
	snprintf(last_msg, sizeof(last_msg), "%s", cmfs_err_msg(err));
}

static int mkenv(struct fixture *x, const char *env)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = repo_env_create(x->r, &who, env, &err);

	keep_msg(&err);
	return rc;
}

/* Upload `len` bytes as `name` in one write at offset 0. */
static int upload(struct fixture *x, const char *env, const char *name,
		  const void *data, size_t len, struct catalog_version *v)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = fixture_upload(x, &who, env, name, data, len, v, &err);

	keep_msg(&err);
	return rc;
}

static int ups(struct fixture *x, const char *env, const char *name,
	       const char *text)
{
	return upload(x, env, name, text, strlen(text), NULL);
}

/* Number of lines in the events log of `env`. */
static int event_lines(struct fixture *x, const char *env)
{
	const char *p;
	int n = 0;

	for (p = fixture_events(x, env); *p; p++)
		n += *p == '\n';
	return n;
}

/* Bytes over inline_max: their blob is a file of the store. */
#define BIG_SIZE (200 << 10)
static const char *big_bytes(void)
{
	static char b[BIG_SIZE];

	if (!b[0])
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (char)('a' + i * 7 % 26);
	return b;
}

/* Blob `sha` is a file of the store. */
static int blob_file(struct fixture *x, const char *sha)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/blobs/%.2s/%s", x->store, sha, sha);
	return stat(p, &st) == 0;
}

/* Blob `sha` is inline: a row of the catalog. */
static int blob_inline(struct fixture *x, const char *sha)
{
	void *data = NULL;
	size_t len;
	int rc = catalog_inline_get(repo_catalog(x->r), sha, &data, &len, NULL);

	free(data);
	return rc == 0;
}

static int blob_exists(struct fixture *x, const char *sha)
{
	return blob_file(x, sha) || blob_inline(x, sha);
}

/*
 * Whether blob `sha` is gone once freed blobs are unlinked: with sync =
 * batch (the default), after the sync that makes their deletion durable.
 */
static int freed(struct fixture *x, const char *sha)
{
	return repo_sync(x->r) == 0 && !blob_exists(x, sha);
}

static int count_one(void *arg, const char *sha, uint64_t size)
{
	(void)sha;
	(void)size;
	(*(int *)arg)++;
	return 0;
}

static int count_row(void *arg, const char *const *row)
{
	(void)row;
	(*(int *)arg)++;
	return 0;
}

/* Blobs in the store: files and inline rows. */
static int count_blobs(struct fixture *x)
{
	int n = 0;

	store_blob_walk(repo_store(x->r), count_one, &n);
	catalog_inline_list(repo_catalog(x->r), count_row, &n, NULL);
	return n;
}

/* 1 if blob `sha` holds exactly `len` bytes `data`. */
static int blob_is(struct fixture *x, const char *sha, const void *data,
		   size_t len)
{
	char *got = malloc(len + 1);
	int fd, ok;
	ssize_t n;

	if (!got || blob_open(repo_store(x->r), repo_catalog(x->r), sha, len,
			      &fd, NULL)) {
		free(got);
		return 0;
	}
	n = pread(fd, got, len + 1, 0);
	ok = n == (ssize_t)len && !memcmp(got, data, len);
	close(fd);
	free(got);
	return ok;
}

/* The artifact `name` of `env`, via the catalog; 0 or -errno. */
static int art(struct fixture *x, const char *env, const char *name,
	       struct catalog_artifact *a)
{
	struct catalog *c = repo_catalog(x->r);
	struct catalog_env e;
	int rc = catalog_env_get(c, env, &e, NULL);

	return rc ? rc : catalog_art_get(c, e.id, name, a, NULL);
}

static uint64_t art_count(struct fixture *x, const char *env)
{
	struct catalog *c = repo_catalog(x->r);
	struct catalog_env e;
	uint64_t n = 0;

	if (!catalog_env_get(c, env, &e, NULL))
		catalog_art_count(c, e.id, &n, NULL);
	return n;
}

static int cat_ver(void *arg, const struct catalog_version *v)
{
	return buf_printf(arg, "%lld,", (long long)v->n);
}

/* The version numbers of artifact `name`, "1,3," (static buffer). */
static const char *versions(struct fixture *x, const char *env,
			    const char *name)
{
	static char s[256];
	struct catalog_artifact a;
	struct buf b = BUF_INIT(256);

	s[0] = '\0';
	if (!art(x, env, name, &a)) {
		catalog_ver_list(repo_catalog(x->r), a.id, cat_ver, &b, NULL);
		snprintf(s, sizeof(s), "%s", buf_str(&b));
	}
	buf_release(&b);
	return s;
}

/* The value of label `key` of `name`, or "(none)" (static buffer). */
static const char *label(struct fixture *x, const char *env, const char *name,
			 const char *key)
{
	static char s[256];
	struct buf b = BUF_INIT(256);
	int rc = repo_label_get(x->r, env, name, key, &b);

	snprintf(s, sizeof(s), "%s", rc ? "(none)" : buf_str(&b));
	buf_release(&b);
	return s;
}

static int set_label(struct fixture *x, const char *env, const char *name,
		     const char *key, const char *value)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = repo_label_set(x->r, &who, env, name, key, value,
				strlen(value), &err);

	keep_msg(&err);
	return rc;
}

static int table_write(struct fixture *x, const char *env, const char *name,
		       const char *text)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = repo_table_write(x->r, &who, env, name, text, strlen(text),
				  &err);

	keep_msg(&err);
	return rc;
}

/* The text of table `name`, or "(none)" (static buffer). */
static const char *table_text(struct fixture *x, const char *env,
			      const char *name)
{
	static char s[4096];
	struct buf b = BUF_INIT(1 << 20);
	int rc = repo_table_text(x->r, env, name, &b, NULL);

	snprintf(s, sizeof(s), "%s", rc ? "(none)" : buf_str(&b));
	buf_release(&b);
	return s;
}

/* Write `text` to scratch file `name` of artifacts/ in `env`. */
static int scratch_file(struct fixture *x, const char *env, const char *name,
			const void *data, size_t len)
{
	int fd, rc = store_scratch_open(repo_store(x->r), env, 'a', name,
					O_CREAT | O_TRUNC | O_WRONLY, 0600,
					&fd);

	if (rc)
		return rc;
	if (pwrite(fd, data, len, 0) != (ssize_t)len)
		rc = -EIO;
	close(fd);
	return rc;
}

/* ---- environments ---------------------------------------------------------- */

static void test_env(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	static const char *const bad[] = {
		"Dev", "a_b", "", "-x", "x-", "a/b", "..", "a b",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	struct stat st;
	struct buf b = BUF_INIT(256);
	size_t i;
	int fd;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(catalog_env_get(repo_catalog(x.r), "dev", &e, NULL), 0);
	T_INTEQ(e.uid, 1000);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   " uid=1000 env=dev action=mkdir result=ok");
	T_ERRNO(mkenv(&x, "dev"), EEXIST);
	T_CONTAINS(last_msg, "environment dev exists");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=mkdir result=refused errno=EEXIST");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		T_ERRNO(mkenv(&x, bad[i]), EINVAL);
		T_ERRNO(catalog_env_get(repo_catalog(x.r), bad[i], &e, NULL),
			ENOENT);
	}
	T_CONTAINS(last_msg, "environment name");
	/* A bad name has no events file: it goes to the daemon's log, as
	 * the object of a line of no environment. */
	T_CONTAINS(buf_str(&x.log), " env=- action=mkdir object=Dev "
				    "result=refused errno=EINVAL");
	T_INTEQ(event_lines(&x, "Dev"), 0);

	/* Not empty: an artifact, then a table. */
	T_INTEQ(ups(&x, "dev", "a.txt", "a"), 0);
	T_ERRNO(repo_env_remove(x.r, &who, "dev", &err), ENOTEMPTY);
	T_CONTAINS(cmfs_err_msg(&err), "holds artifacts or tables");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=rmdir result=refused errno=ENOTEMPTY");
	T_INTEQ(catalog_env_get(repo_catalog(x.r), "dev", &e, NULL), 0);
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "a.txt", NULL), 0);
	T_INTEQ(table_write(&x, "dev", "t", "CREATE TABLE t (a INT)"), 0);
	cmfs_err_clear(&err);
	T_ERRNO(repo_env_remove(x.r, &who, "dev", &err), ENOTEMPTY);
	T_INTEQ(repo_table_remove(x.r, &who, "dev", "t", NULL), 0);

	/* Scratch files and their labels go with the environment. */
	T_INTEQ(store_scratch_open(repo_store(x.r), "dev", 'a', ".s",
				   O_CREAT | O_WRONLY, 0600, &fd), 0);
	close(fd);
	T_INTEQ(repo_scratch_label_set(x.r, "dev", ".s", "app", "x", NULL), 0);
	T_INTEQ(repo_env_remove(x.r, &who, "dev", NULL), 0);
	T_CONTAINS(fixture_last_event(&x, "dev"), "action=rmdir result=ok");
	T_ERRNO(catalog_env_get(repo_catalog(x.r), "dev", &e, NULL), ENOENT);
	T_ERRNO(store_scratch_stat(repo_store(x.r), "dev", 'a', ".s", &st),
		ENOENT);
	T_ERRNO(repo_env_remove(x.r, &who, "dev", NULL), ENOENT);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_ERRNO(repo_scratch_label_get(x.r, "dev", ".s", "app", &b), ENODATA);
	/* The events of the removed environment are still there. */
	T_CONTAINS(fixture_events(&x, "dev"), "action=rmdir result=ok");
	buf_release(&b);
	fixture_close(&x);
}

/* ---- uploads --------------------------------------------------------------- */

static void test_upload(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct catalog_artifact a;
	struct repo_upload *u = NULL;
	char sha[STORE_SHA_HEX], want[300], got[64];
	int lines;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);

	/* A new artifact: version 1. */
	memset(&v, 0, sizeof(v));
	T_INTEQ(upload(&x, "dev", "notes.txt", "hello", 5, &v), 0);
	T_INTEQ(v.n, 1);
	T_INTEQ(v.size, 5);
	T_STREQ(v.sha256, SHA_HELLO);
	T_INTEQ(v.uid, 1000);
	T_CHECK(v.mtime > 0);
	T_INTEQ(art(&x, "dev", "notes.txt", &a), 0);
	T_INTEQ(a.nversions, 1);
	T_STREQ(a.latest.sha256, SHA_HELLO);
	T_CHECK(blob_is(&x, SHA_HELLO, "hello", 5));
	snprintf(want, sizeof(want),
		 " uid=1000 env=dev action=upload artifact=notes.txt version=1 "
		 "size=5 sha256=%s result=ok", SHA_HELLO);
	T_CONTAINS(fixture_last_event(&x, "dev"), want);

	/* The same bytes again: no new version. */
	lines = event_lines(&x, "dev");
	memset(&v, 0, sizeof(v));
	T_INTEQ(upload(&x, "dev", "notes.txt", "hello", 5, &v), 0);
	T_INTEQ(v.n, 1);
	T_STREQ(v.sha256, SHA_HELLO);
	T_INTEQ(art(&x, "dev", "notes.txt", &a), 0);
	T_INTEQ(a.nversions, 1);
	T_INTEQ(event_lines(&x, "dev"), lines + 1);
	T_CONTAINS(fixture_last_event(&x, "dev"), "version=1");
	T_CONTAINS(fixture_last_event(&x, "dev"), "unchanged=yes result=ok");
	T_INTEQ(count_blobs(&x), 1);

	/* New bytes: version 2. */
	T_INTEQ(upload(&x, "dev", "notes.txt", "hello2", 6, &v), 0);
	T_INTEQ(v.n, 2);

	/* Copy-on-write: open without truncating, change one byte. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "notes.txt", 0, &err), 0);
	T_INTEQ(repo_upload_size(u), 6);
	T_INTEQ(repo_upload_dirty(u), 0);
	memset(got, 0, sizeof(got));
	T_INTEQ(repo_upload_read(u, got, sizeof(got), 0), 6);
	T_STREQ(got, "hello2");
	T_INTEQ(repo_upload_read(u, got, 10, 6), 0);
	T_INTEQ(repo_upload_write(u, "J", 1, 0), 1);
	T_INTEQ(repo_upload_dirty(u), 1);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	T_INTEQ(v.n, 3);
	T_INTEQ(v.size, 6);
	fixture_sha(sha, "Jello2", 6);
	T_STREQ(v.sha256, sha);
	T_CHECK(blob_is(&x, sha, "Jello2", 6));
	T_INTEQ(repo_upload_dirty(u), 0);
	/* The same open file goes on: an append after the commit. */
	T_INTEQ(repo_upload_write(u, "!!", 2, 6), 2);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	T_INTEQ(v.n, 4);
	fixture_sha(sha, "Jello2!!", 8);
	T_STREQ(v.sha256, sha);
	T_CHECK(blob_is(&x, sha, "Jello2!!", 8));
	repo_upload_free(u);
	u = NULL;

	/* Open and close without writing: nothing new; *out is the latest. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "notes.txt", 0, &err), 0);
	memset(&v, 0, sizeof(v));
	lines = event_lines(&x, "dev");
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	T_INTEQ(v.n, 4);
	T_STREQ(v.sha256, sha);
	T_INTEQ(event_lines(&x, "dev"), lines);
	repo_upload_free(u);
	u = NULL;
	T_INTEQ(art(&x, "dev", "notes.txt", &a), 0);
	T_INTEQ(a.nversions, 4);

	/* O_TRUNC alone: an empty version. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "notes.txt", 1, &err), 0);
	T_INTEQ(repo_upload_size(u), 0);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	T_INTEQ(v.n, 5);
	T_INTEQ(v.size, 0);
	T_STREQ(v.sha256, SHA_EMPTY);
	repo_upload_free(u);
	u = NULL;

	/* Dropped without a commit: nothing changes. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "notes.txt", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "dropped", 7, 0), 7);
	repo_upload_free(u);
	u = NULL;
	T_INTEQ(art(&x, "dev", "notes.txt", &a), 0);
	T_INTEQ(a.latest.n, 5);
	fixture_sha(sha, "dropped", 7);
	T_CHECK(freed(&x, sha));

	/* A missing environment. */
	u = (struct repo_upload *)1;
	T_ERRNO(repo_upload_begin(&u, x.r, "nope", "x.txt", 1, &err), ENOENT);
	T_CHECK(u == NULL);
	u = NULL;

	/* A bad artifact name is refused at commit, with an event. */
	cmfs_err_clear(&err);
	T_ERRNO(ups(&x, "dev", "bad name", "x"), EINVAL);
	T_CONTAINS(last_msg, "artifact name 'bad name'");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=upload artifact=\"bad name\"");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EINVAL");
	T_ERRNO(ups(&x, "dev", ".hidden", "x"), EINVAL);
	T_ERRNO(ups(&x, "dev", "a/b", "x"), EINVAL);
	T_INTEQ(art_count(&x, "dev"), 1);

	/* Negative offsets. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "n.txt", 1, &err), 0);
	T_ERRNO(repo_upload_write(u, "x", 1, -1), EINVAL);
	T_ERRNO(repo_upload_truncate(u, -1), EINVAL);
	repo_upload_free(u);
	fixture_close(&x);
}

/* Writes in any order, holes, truncation: the hash is of the bytes. */
static void test_upload_order(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct repo_upload *u = NULL;
	char sha[STORE_SHA_HEX];
	static char big[300000];
	char *huge;
	size_t i;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);

	/* Back to front. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "o.txt", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "world", 5, 6), 5);
	T_INTEQ(repo_upload_write(u, "hello ", 6, 0), 6);
	T_INTEQ(repo_upload_size(u), 11);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	fixture_sha(sha, "hello world", 11);
	T_STREQ(v.sha256, sha);
	T_INTEQ(v.size, 11);
	T_CHECK(blob_is(&x, sha, "hello world", 11));
	repo_upload_free(u);

	/* A hole. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "o.txt", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "x", 1, 3), 1);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	fixture_sha(sha, "\0\0\0x", 4);
	T_STREQ(v.sha256, sha);
	T_CHECK(blob_is(&x, sha, "\0\0\0x", 4));
	repo_upload_free(u);

	/* Overlapping rewrites. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "o.txt", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "abcdef", 6, 0), 6);
	T_INTEQ(repo_upload_write(u, "XY", 2, 2), 2);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	fixture_sha(sha, "abXYef", 6);
	T_STREQ(v.sha256, sha);
	repo_upload_free(u);

	/* Truncate down, then write on. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "o.txt", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "abcdef", 6, 0), 6);
	T_INTEQ(repo_upload_truncate(u, 3), 0);
	T_INTEQ(repo_upload_size(u), 3);
	T_INTEQ(repo_upload_write(u, "XY", 2, 3), 2);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	fixture_sha(sha, "abcXY", 5);
	T_STREQ(v.sha256, sha);
	T_CHECK(blob_is(&x, sha, "abcXY", 5));
	repo_upload_free(u);

	/* Truncate up: zeros. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "o.txt", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "ab", 2, 0), 2);
	T_INTEQ(repo_upload_truncate(u, 4), 0);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	fixture_sha(sha, "ab\0\0", 4);
	T_STREQ(v.sha256, sha);
	repo_upload_free(u);

	/* Copy-on-write, then truncate: the base bytes count. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "o.txt", 0, &err), 0);
	T_INTEQ(repo_upload_truncate(u, 1), 0);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	fixture_sha(sha, "a", 1);
	T_STREQ(v.sha256, sha);
	repo_upload_free(u);

	/* Many sequential writes (the streaming hash). */
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + i / 1000);
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "big.bin", 1, &err), 0);
	for (i = 0; i < sizeof(big); i += 65536) {
		size_t n = sizeof(big) - i < 65536 ? sizeof(big) - i : 65536;

		T_INTEQ(repo_upload_write(u, big + i, n, (off_t)i), (ssize_t)n);
	}
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	fixture_sha(sha, big, sizeof(big));
	T_STREQ(v.sha256, sha);
	T_INTEQ(v.size, sizeof(big));
	T_CHECK(blob_is(&x, sha, big, sizeof(big)));
	repo_upload_free(u);

	/* Past 4 MiB the hash moves to a thread of its own: a 9 MiB upload
	 * in order, one rewritten behind the hasher, one truncated. */
	huge = malloc(9 << 20);
	T_CHECK(huge != NULL);
	for (i = 0; huge && i < (9u << 20); i++)
		huge[i] = (char)(i * 13 + i / 4099);
	for (i = 0; huge && i < 3; i++) {
		size_t off, len = 9 << 20;
		char want[STORE_SHA_HEX];

		T_INTEQ(repo_upload_begin(&u, x.r, "dev", "huge.bin", 1, &err),
			0);
		for (off = 0; off < len; off += 1 << 20)
			T_INTEQ(repo_upload_write(u, huge + off, 1 << 20,
						  (off_t)off), 1 << 20);
		if (i == 1) {	/* behind the hasher: it must not count */
			T_INTEQ(repo_upload_write(u, "Z", 1, 5 << 20), 1);
		}
		if (i == 2) {
			T_INTEQ(repo_upload_truncate(u, 6 << 20), 0);
			len = 6 << 20;
		}
		T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
		if (i == 1) {
			char keep = huge[5 << 20];

			huge[5 << 20] = 'Z';
			fixture_sha(want, huge, len);
			huge[5 << 20] = keep;
		} else {
			fixture_sha(want, huge, len);
		}
		T_STREQ(v.sha256, want);
		T_INTEQ(v.size, len);
		repo_upload_free(u);
	}
	free(huge);

	/* The same, written twice over in order (rsync's rewrite). */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "big2.bin", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, big, 1000, 0), 1000);
	T_INTEQ(repo_upload_write(u, big, 1000, 0), 1000);
	T_INTEQ(repo_upload_write(u, big + 1000, 1000, 1000), 1000);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	fixture_sha(sha, big, 2000);
	T_STREQ(v.sha256, sha);
	repo_upload_free(u);
	fixture_close(&x);
}

/* ---- *.jar must be a zip --------------------------------------------------- */

static void test_jar_not_zip(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct catalog_artifact a;
	struct repo_upload *u = NULL;
	char sha[STORE_SHA_HEX];
	char *jar;
	size_t len;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "x.jar", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "not a zip", 9, 0), 9);
	T_ERRNO(repo_upload_commit(u, &who, &v, &err), EINVAL);
	T_CONTAINS(cmfs_err_msg(&err), "x.jar is not a valid JAR");
	/* Nothing changed: no artifact, no blob; the upload stays dirty. */
	T_ERRNO(art(&x, "dev", "x.jar", &a), ENOENT);
	T_INTEQ(art_count(&x, "dev"), 0);
	T_INTEQ(count_blobs(&x), 0);
	fixture_sha(sha, "not a zip", 9);
	T_CHECK(freed(&x, sha));
	T_INTEQ(repo_upload_dirty(u), 1);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=upload artifact=x.jar");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EINVAL");
	T_CONTAINS(fixture_last_event(&x, "dev"), "not a valid JAR");

	/* Fixed within the same open file: commits then. */
	jar = fixture_jar("mongodb.jar", &len, "retrying a refused JAR upload");
	if (jar) {
		cmfs_err_clear(&err);
		T_INTEQ(repo_upload_truncate(u, 0), 0);
		T_INTEQ(repo_upload_write(u, jar, len, 0), (ssize_t)len);
		T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
		T_INTEQ(v.n, 1);
		T_INTEQ(v.size, len);
	}
	repo_upload_free(u);
	u = NULL;

	/* An empty *.jar is no zip either. */
	T_ERRNO(upload(&x, "dev", "empty.jar", "", 0, NULL), EINVAL);
	T_ERRNO(art(&x, "dev", "empty.jar", &a), ENOENT);
	/* The same bytes under another name are stored as they are. */
	T_INTEQ(ups(&x, "dev", "x.txt", "not a zip"), 0);
	T_CHECK(blob_exists(&x, sha));

	/* Not a zip as a new version of a JAR: the old one stays latest. */
	if (jar) {
		int blobs = count_blobs(&x);

		T_ERRNO(ups(&x, "dev", "x.jar", "garbage, no zip"), EINVAL);
		T_INTEQ(art(&x, "dev", "x.jar", &a), 0);
		T_INTEQ(a.latest.n, 1);
		T_INTEQ(a.nversions, 1);
		T_INTEQ(count_blobs(&x), blobs);
		/* A zip cut short is refused too. */
		T_ERRNO(upload(&x, "dev", "x.jar", jar, len / 2, NULL),
			EINVAL);
		T_INTEQ(art(&x, "dev", "x.jar", &a), 0);
		T_INTEQ(a.nversions, 1);
		T_INTEQ(count_blobs(&x), blobs);
	}
	free(jar);
	fixture_close(&x);
}

/* ---- limits ---------------------------------------------------------------- */

static void test_limits(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct repo_upload *u = NULL;
	uint64_t total = 0;
	int rc;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(mkenv(&x, "prod"), 0);

	/* max_artifact_size: at write time; a failed write leaves nothing
	 * to commit (the bytes would not be what was written) ... */
	x.cfg.limits.artifact_size = 10;
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "s.bin", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "0123456789", 10, 0), 10);
	T_ERRNO(repo_upload_write(u, "A", 1, 10), EFBIG);
	T_ERRNO(repo_upload_write(u, "0123456789A", 11, 0), EFBIG);
	T_ERRNO(repo_upload_commit(u, &who, &v, &err), EFBIG);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=upload artifact=s.bin");
	T_CONTAINS(fixture_last_event(&x, "dev"), "result=refused errno=EFBIG");
	T_INTEQ(art_count(&x, "dev"), 0);
	T_INTEQ(count_blobs(&x), 0);
	repo_upload_free(u);
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "s.bin", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "0123456789", 10, 0), 10);
	T_ERRNO(repo_upload_truncate(u, 11), EFBIG);
	T_INTEQ(repo_upload_size(u), 10);
	repo_upload_free(u);
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "s.bin", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "0123456789", 10, 0), 10);
	cmfs_err_clear(&err);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	T_INTEQ(v.size, 10);
	repo_upload_free(u);
	u = NULL;
	/* ... and at the commit of a scratch file. */
	T_INTEQ(scratch_file(&x, "dev", ".big", "0123456789ABCDEF", 16), 0);
	T_ERRNO(repo_scratch_commit(x.r, &who, "dev", ".big", "big.bin", NULL,
				    &err), EFBIG);
	T_CONTAINS(cmfs_err_msg(&err), "over the artifact size limit");
	T_CONTAINS(fixture_last_event(&x, "dev"), "artifact=big.bin");
	T_CONTAINS(fixture_last_event(&x, "dev"), "result=refused errno=EFBIG");
	x.cfg.limits.artifact_size = 1 << 20;

	/* max_artifacts_per_env: new artifacts only, per environment. */
	x.cfg.limits.artifacts_per_env = 2;
	T_INTEQ(ups(&x, "dev", "b.txt", "b"), 0);
	T_ERRNO(ups(&x, "dev", "c.txt", "c"), EDQUOT);
	T_CONTAINS(last_msg, "c.txt");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EDQUOT");
	T_INTEQ(art_count(&x, "dev"), 2);
	T_INTEQ(ups(&x, "dev", "b.txt", "b2"), 0);
	T_INTEQ(ups(&x, "prod", "c.txt", "c"), 0);
	/* A refused commit leaves the upload staged: once the limit is
	 * raised, the same open file commits. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "c.txt", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "fresh", 5, 0), 5);
	T_ERRNO(repo_upload_commit(u, &who, &v, &err), EDQUOT);
	T_INTEQ(repo_upload_dirty(u), 1);
	x.cfg.limits.artifacts_per_env = 1000;
	cmfs_err_clear(&err);
	rc = repo_upload_commit(u, &who, &v, &err);
	T_INTEQ(rc, 0);
	if (rc)
		fprintf(stderr, "  retried commit: %s\n", err.msg);
	if (!rc) {
		T_INTEQ(v.n, 1);
		T_INTEQ(v.size, 5);
		T_CHECK(blob_is(&x, v.sha256, "fresh", 5));
	}
	repo_upload_free(u);
	u = NULL;
	repo_art_remove(x.r, &who, "dev", "c.txt", NULL);
	T_INTEQ(repo_sync(x.r), 0); /* its blob goes at the sync */

	/* max_store_size: distinct blobs; bytes already stored are free. */
	T_INTEQ(catalog_blob_total(repo_catalog(x.r), &total, NULL), 0);
	T_INTEQ(total, 10 + 1 + 2 + 1);
	x.cfg.limits.store_size = total + 5;
	T_ERRNO(ups(&x, "dev", "d.txt", "666666"), EDQUOT);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EDQUOT");
	T_INTEQ(count_blobs(&x), 4);
	T_INTEQ(ups(&x, "dev", "d.txt", "55555"), 0);
	T_ERRNO(ups(&x, "dev", "e.txt", "1"), EDQUOT);
	T_INTEQ(ups(&x, "dev", "e.txt", "0123456789"), 0);
	x.cfg.limits.store_size = 0;

	/* max_labels. */
	x.cfg.limits.labels = 1;
	T_INTEQ(set_label(&x, "dev", "b.txt", "one", "1"), 0);
	T_ERRNO(set_label(&x, "dev", "b.txt", "two", "2"), EDQUOT);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EDQUOT");
	T_STREQ(label(&x, "dev", "b.txt", "two"), "(none)");
	T_INTEQ(set_label(&x, "dev", "b.txt", "one", "11"), 0);
	T_STREQ(label(&x, "dev", "b.txt", "one"), "11");
	x.cfg.limits.labels = 64;

	/* max_xattr_size. */
	x.cfg.limits.xattr_size = 8;
	T_INTEQ(set_label(&x, "dev", "b.txt", "k", "12345678"), 0);
	T_ERRNO(set_label(&x, "dev", "b.txt", "k", "123456789"), EFBIG);
	T_STREQ(label(&x, "dev", "b.txt", "k"), "12345678");
	x.cfg.limits.xattr_size = 4096;

	/* max_ddl_size and max_tables_per_env. */
	x.cfg.limits.ddl_size = 30;
	T_ERRNO(table_write(&x, "dev", "t",
			    "CREATE TABLE t (a INT, b STRING, c BIGINT)"),
		EFBIG);
	T_CONTAINS(fixture_last_event(&x, "dev"), "result=refused errno=EFBIG");
	T_STREQ(table_text(&x, "dev", "t"), "(none)");
	x.cfg.limits.ddl_size = 1 << 20;
	x.cfg.limits.tables_per_env = 1;
	T_INTEQ(table_write(&x, "dev", "t", "CREATE TABLE t (a INT)"), 0);
	T_ERRNO(table_write(&x, "dev", "u", "CREATE TABLE u (a INT)"), EDQUOT);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EDQUOT");
	T_INTEQ(table_write(&x, "dev", "t", "CREATE TABLE t (b INT)"), 0);
	T_INTEQ(table_write(&x, "prod", "u", "CREATE TABLE u (a INT)"), 0);
	fixture_close(&x);
}

/* ---- removal --------------------------------------------------------------- */

static void test_remove(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct catalog_artifact a;
	char one[STORE_SHA_HEX], two[STORE_SHA_HEX], three[STORE_SHA_HEX],
		four[STORE_SHA_HEX];

	setup_files(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	fixture_sha(one, "one", 3);
	fixture_sha(two, "two", 3);
	fixture_sha(three, "three", 5);
	fixture_sha(four, "four", 4);
	T_INTEQ(ups(&x, "dev", "f.txt", "one"), 0);
	T_INTEQ(ups(&x, "dev", "f.txt", "two"), 0);
	T_INTEQ(ups(&x, "dev", "f.txt", "three"), 0);
	T_STREQ(versions(&x, "dev", "f.txt"), "1,2,3,");
	T_CHECK(blob_exists(&x, two));

	/* A middle version: its blob goes. */
	T_INTEQ(repo_ver_remove(x.r, &who, "dev", "f.txt", 2, &err), 0);
	T_STREQ(versions(&x, "dev", "f.txt"), "1,3,");
	/* Not before the deletion is on disk (sync = batch). */
	T_CHECK(blob_exists(&x, two));
	T_CHECK(freed(&x, two));
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=delete-version "
		   "artifact=f.txt version=2 result=ok");
	T_ERRNO(repo_ver_remove(x.r, &who, "dev", "f.txt", 2, &err), ENOENT);
	T_ERRNO(repo_ver_remove(x.r, &who, "dev", "g.txt", 1, &err), ENOENT);
	T_ERRNO(repo_ver_remove(x.r, &who, "nope", "f.txt", 1, &err), ENOENT);

	/* The latest: the one before becomes latest; numbers go on. */
	T_INTEQ(repo_ver_remove(x.r, &who, "dev", "f.txt", 3, &err), 0);
	T_INTEQ(art(&x, "dev", "f.txt", &a), 0);
	T_INTEQ(a.latest.n, 1);
	T_STREQ(a.latest.sha256, one);
	T_CHECK(freed(&x, three));
	T_INTEQ(upload(&x, "dev", "f.txt", "four", 4, &v), 0);
	T_INTEQ(v.n, 4);
	T_STREQ(versions(&x, "dev", "f.txt"), "1,4,");

	/* A blob two artifacts share stays while one refers to it. */
	T_INTEQ(ups(&x, "dev", "other.txt", "one"), 0);
	T_INTEQ(repo_ver_remove(x.r, &who, "dev", "f.txt", 1, &err), 0);
	T_CHECK(blob_exists(&x, one));
	T_CHECK(blob_is(&x, one, "one", 3));

	/* A blob two versions of one artifact share stays too. */
	T_INTEQ(ups(&x, "dev", "g.txt", "g-a"), 0);
	T_INTEQ(ups(&x, "dev", "g.txt", "g-b"), 0);
	T_INTEQ(ups(&x, "dev", "g.txt", "g-a"), 0);
	T_STREQ(versions(&x, "dev", "g.txt"), "1,2,3,");
	T_INTEQ(repo_ver_remove(x.r, &who, "dev", "g.txt", 1, &err), 0);
	{
		char ga[STORE_SHA_HEX];

		fixture_sha(ga, "g-a", 3);
		T_CHECK(blob_is(&x, ga, "g-a", 3));
		T_INTEQ(repo_art_remove(x.r, &who, "dev", "g.txt", &err), 0);
		T_CHECK(freed(&x, ga));
	}

	/* The last version takes the artifact with it. */
	T_INTEQ(repo_ver_remove(x.r, &who, "dev", "f.txt", 4, &err), 0);
	T_ERRNO(art(&x, "dev", "f.txt", &a), ENOENT);
	T_INTEQ(art_count(&x, "dev"), 1);
	T_CHECK(freed(&x, four));
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "artifact-removed=yes result=ok");

	/* Removing a whole artifact. */
	T_INTEQ(ups(&x, "dev", "other.txt", "two"), 0);
	T_INTEQ(set_label(&x, "dev", "other.txt", "app", "x"), 0);
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "other.txt", &err), 0);
	T_ERRNO(art(&x, "dev", "other.txt", &a), ENOENT);
	T_INTEQ(art_count(&x, "dev"), 0);
	T_CHECK(freed(&x, one));
	T_CHECK(freed(&x, two));
	T_INTEQ(count_blobs(&x), 0);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=delete artifact=other.txt versions=2 result=ok");
	T_ERRNO(repo_art_remove(x.r, &who, "dev", "other.txt", &err), ENOENT);
	/* A new artifact of the same name starts without labels, and its
	 * numbers go on where the name's stopped: a pinned versions/ path
	 * never names other bytes (issue 34). */
	T_INTEQ(ups(&x, "dev", "other.txt", "one"), 0);
	T_STREQ(versions(&x, "dev", "other.txt"), "3,");
	T_STREQ(label(&x, "dev", "other.txt", "app"), "(none)");
	fixture_close(&x);
}

/*
 * Version numbers of a name are never reused (issue 34): rm, the last
 * version removed, a rename away; a rename onto a name with numbers
 * moves the versions above them.  A version as given (an inode's pin)
 * keeps its computed attributes after it is gone; a version whose blob
 * is missing reads as EIO, with a line in the log.
 */
static void test_identity(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v1, v;
	struct buf b = BUF_INIT(4096);
	char path[256];
	int fd = -1;

	setup_files(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(upload(&x, "dev", "a.txt", "one", 3, &v1), 0);
	T_INTEQ(ups(&x, "dev", "a.txt", "two"), 0);
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "a.txt", &err), 0);
	T_INTEQ(ups(&x, "dev", "a.txt", "three"), 0);
	T_STREQ(versions(&x, "dev", "a.txt"), "3,");
	T_INTEQ(repo_ver_remove(x.r, &who, "dev", "a.txt", 3, &err), 0);
	T_INTEQ(ups(&x, "dev", "a.txt", "four"), 0);
	T_STREQ(versions(&x, "dev", "a.txt"), "4,");
	T_INTEQ(repo_art_rename(x.r, &who, "dev", "a.txt", "b.txt", &err), 0);
	T_INTEQ(ups(&x, "dev", "a.txt", "five"), 0);
	T_STREQ(versions(&x, "dev", "a.txt"), "5,");
	T_STREQ(versions(&x, "dev", "b.txt"), "4,");
	/* Back over a.txt (replaced): above a.txt's 5. */
	T_INTEQ(repo_art_rename(x.r, &who, "dev", "b.txt", "a.txt", &err), 0);
	T_STREQ(versions(&x, "dev", "a.txt"), "6,");
	T_INTEQ(repo_computed(x.r, "dev", "a.txt", 6, "version", &b, &err), 0);
	T_STREQ(buf_str(&b), "6");

	/* Version 1 is gone; as pinned, its attributes are its own. */
	buf_reset(&b);
	T_INTEQ(repo_computed_ver(x.r, "dev", "a.txt", &v1, "sha256", &b, &err),
		0);
	T_STREQ(buf_str(&b), v1.sha256);
	buf_reset(&b);
	T_INTEQ(repo_computed_ver(x.r, "dev", "a.txt", &v1, "version", &b,
				  &err),
		0);
	T_STREQ(buf_str(&b), "1");
	buf_reset(&b);
	T_INTEQ(repo_computed_ver(x.r, "dev", "a.txt", &v1, "used-by", &b,
				  &err),
		0);
	T_STREQ(buf_str(&b), "");

	/* A missing blob: EIO, and the log says which. */
	T_INTEQ(upload(&x, "dev", "lost.txt", "lost bytes", 10, &v), 0);
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", x.store, v.sha256,
		 v.sha256);
	T_INTEQ(unlink(path), 0);
	cmfs_err_clear(&err);
	T_ERRNO(repo_blob_open(x.r, &v, &fd, &err), EIO);
	T_CONTAINS(cmfs_err_msg(&err), "is missing");
	T_CONTAINS(buf_str(&x.log), v.sha256);
	T_CONTAINS(buf_str(&x.log), "missing from the store");
	/* ... and a copy-on-write upload from it: EIO, not ENOENT. */
	{
		struct repo_upload *u = NULL;

		T_INTEQ(repo_upload_begin(&u, x.r, "dev", "lost.txt", 0, &err),
			0);
		T_INTEQ(u ? repo_upload_write(u, "x", 1, 10) : 0, -EIO);
		repo_upload_free(u);
	}
	buf_release(&b);
	fixture_close(&x);
}

/* ---- rename ---------------------------------------------------------------- */

static void test_rename(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_artifact a;
	char cc[STORE_SHA_HEX], a2[STORE_SHA_HEX];
	char *jar;
	size_t len;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	fixture_sha(cc, "cc", 2);
	fixture_sha(a2, "a2", 2);
	T_INTEQ(ups(&x, "dev", "a.txt", "a1"), 0);
	T_INTEQ(ups(&x, "dev", "a.txt", "a2"), 0);
	T_INTEQ(set_label(&x, "dev", "a.txt", "app", "x"), 0);

	T_INTEQ(repo_art_rename(x.r, &who, "dev", "a.txt", "b.txt", &err), 0);
	T_ERRNO(art(&x, "dev", "a.txt", &a), ENOENT);
	T_INTEQ(art(&x, "dev", "b.txt", &a), 0);
	T_INTEQ(a.nversions, 2);
	T_INTEQ(a.latest.n, 2);
	T_STREQ(label(&x, "dev", "b.txt", "app"), "x");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=rename artifact=a.txt to=b.txt result=ok");

	/* Onto an existing artifact: it is replaced, its blobs freed. */
	T_INTEQ(ups(&x, "dev", "c.txt", "cc"), 0);
	T_INTEQ(repo_art_rename(x.r, &who, "dev", "b.txt", "c.txt", &err), 0);
	T_ERRNO(art(&x, "dev", "b.txt", &a), ENOENT);
	T_INTEQ(art(&x, "dev", "c.txt", &a), 0);
	T_INTEQ(a.nversions, 2);
	T_STREQ(a.latest.sha256, a2);
	T_CHECK(freed(&x, cc));
	T_CONTAINS(fixture_last_event(&x, "dev"), "replaced=yes result=ok");
	T_INTEQ(art_count(&x, "dev"), 1);

	/* Replacing an artifact that shares a blob keeps the blob. */
	T_INTEQ(ups(&x, "dev", "d.txt", "a2"), 0);
	T_INTEQ(repo_art_rename(x.r, &who, "dev", "d.txt", "e.txt", &err), 0);
	T_INTEQ(ups(&x, "dev", "f.txt", "f"), 0);
	T_INTEQ(repo_art_rename(x.r, &who, "dev", "f.txt", "e.txt", &err), 0);
	T_CHECK(blob_is(&x, a2, "a2", 2));
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "e.txt", &err), 0);
	T_CHECK(blob_is(&x, a2, "a2", 2));

	/* Refusals. */
	T_ERRNO(repo_art_rename(x.r, &who, "dev", "c.txt", "../x", &err),
		EINVAL);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EINVAL");
	T_ERRNO(repo_art_rename(x.r, &who, "dev", "c.txt", ".x", &err),
		EINVAL);
	T_ERRNO(repo_art_rename(x.r, &who, "dev", "zz.txt", "y.txt", &err),
		ENOENT);
	T_ERRNO(repo_art_rename(x.r, &who, "nope", "c.txt", "y.txt", &err),
		ENOENT);
	/* Bytes that are not a zip cannot be named *.jar. */
	cmfs_err_clear(&err);
	T_ERRNO(repo_art_rename(x.r, &who, "dev", "c.txt", "c.jar", &err),
		EINVAL);
	T_CONTAINS(cmfs_err_msg(&err), "zip");
	T_INTEQ(art(&x, "dev", "c.txt", &a), 0);
	T_ERRNO(art(&x, "dev", "c.jar", &a), ENOENT);

	/* Onto itself: nothing is lost. */
	T_INTEQ(repo_art_rename(x.r, &who, "dev", "c.txt", "c.txt", &err), 0);
	T_INTEQ(art(&x, "dev", "c.txt", &a), 0);
	T_INTEQ(a.nversions, 2);
	T_CHECK(blob_exists(&x, a2));
	T_STREQ(label(&x, "dev", "c.txt", "app"), "x");

	/* A JAR keeps its name rule. */
	jar = fixture_jar("mongodb.jar", &len, "renaming a JAR");
	if (jar) {
		T_INTEQ(upload(&x, "dev", "m.jar", jar, len, NULL), 0);
		T_INTEQ(repo_art_rename(x.r, &who, "dev", "m.jar", "n.jar",
					&err), 0);
		T_INTEQ(art(&x, "dev", "n.jar", &a), 0);
		T_INTEQ(repo_art_rename(x.r, &who, "dev", "n.jar", "n.bin",
					&err), 0);
		T_INTEQ(repo_art_rename(x.r, &who, "dev", "n.bin", "n.jar",
					&err), 0);
	}
	free(jar);
	fixture_close(&x);
}

/* ---- labels ---------------------------------------------------------------- */

static void test_labels(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(4096);

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(ups(&x, "dev", "t.txt", "text"), 0);

	T_INTEQ(set_label(&x, "dev", "t.txt", "app", "web"), 0);
	T_STREQ(label(&x, "dev", "t.txt", "app"), "web");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=label artifact=t.txt key=app "
		   "value=web result=ok");
	T_INTEQ(set_label(&x, "dev", "t.txt", "team/owner", ""), 0);
	T_STREQ(label(&x, "dev", "t.txt", "team/owner"), "");
	T_INTEQ(repo_label_list(x.r, "dev", "t.txt", &b), 0);
	T_INTEQ(b.len, sizeof("user.app\0user.team/owner\0") - 1);
	T_CHECK(!memcmp(b.data, "user.app\0user.team/owner\0", b.len));

	/* Syntax. */
	T_ERRNO(set_label(&x, "dev", "t.txt", "Bad.com/x", "v"), EINVAL);
	T_CONTAINS(last_msg, "label key 'Bad.com/x'");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EINVAL");
	T_ERRNO(set_label(&x, "dev", "t.txt", "app", "-x"), EINVAL);
	T_ERRNO(set_label(&x, "dev", "t.txt", "app", "a b"), EINVAL);
	T_STREQ(label(&x, "dev", "t.txt", "app"), "web");
	T_ERRNO(repo_label_set(x.r, &who, "dev", "t.txt", "app", "ab\0c", 4,
			       &err), EINVAL);
	T_STREQ(label(&x, "dev", "t.txt", "app"), "web");
	/* sql-artifact-type takes connector or format. */
	T_ERRNO(set_label(&x, "dev", "t.txt", TYPE, "source"), EINVAL);
	T_CONTAINS(last_msg, "takes connector or format");
	T_ERRNO(set_label(&x, "dev", "t.txt", TYPE, "Connector"), EINVAL);
	T_ERRNO(set_label(&x, "dev", "t.txt", TYPE, ""), EINVAL);
	/* On something that is not a JAR it is stored unchecked. */
	T_INTEQ(set_label(&x, "dev", "t.txt", TYPE, "connector"), 0);
	T_INTEQ(set_label(&x, "dev", "t.txt", IDENT, "anything"), 0);
	T_STREQ(label(&x, "dev", "t.txt", TYPE), "connector");

	/* Labels carry over to new versions. */
	T_INTEQ(ups(&x, "dev", "t.txt", "text v2"), 0);
	T_STREQ(label(&x, "dev", "t.txt", "app"), "web");
	T_STREQ(label(&x, "dev", "t.txt", TYPE), "connector");

	/* Missing artifact or environment. */
	T_ERRNO(set_label(&x, "dev", "none.txt", "app", "x"), ENOENT);
	T_ERRNO(set_label(&x, "nope", "t.txt", "app", "x"), ENOENT);
	buf_reset(&b);
	T_ERRNO(repo_label_get(x.r, "dev", "t.txt", "unset", &b), ENODATA);
	T_ERRNO(repo_label_get(x.r, "dev", "none.txt", "app", &b), ENOENT);

	/* Remove. */
	T_INTEQ(repo_label_remove(x.r, &who, "dev", "t.txt", "app", &err), 0);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=unlabel artifact=t.txt key=app result=ok");
	T_STREQ(label(&x, "dev", "t.txt", "app"), "(none)");
	T_ERRNO(repo_label_remove(x.r, &who, "dev", "t.txt", "app", &err),
		ENODATA);
	T_ERRNO(repo_label_remove(x.r, &who, "dev", "no.txt", "app", &err),
		ENOENT);

	/* Computed attributes of a non-JAR. */
	buf_reset(&b);
	T_INTEQ(repo_computed(x.r, "dev", "t.txt", 0, "version", &b, &err), 0);
	T_STREQ(buf_str(&b), "2");
	buf_reset(&b);
	T_INTEQ(repo_computed(x.r, "dev", "t.txt", 1, "version", &b, &err), 0);
	T_STREQ(buf_str(&b), "1");
	buf_reset(&b);
	T_INTEQ(repo_computed(x.r, "dev", "t.txt", 1, "sha256", &b, &err), 0);
	{
		char sha[STORE_SHA_HEX];

		fixture_sha(sha, "text", 4);
		T_STREQ(buf_str(&b), sha);
	}
	buf_reset(&b);
	T_INTEQ(repo_computed(x.r, "dev", "t.txt", 0, "error", &b, &err), 0);
	T_STREQ(buf_str(&b), "t.txt is not a JAR: resolution refuses it");
	buf_reset(&b);
	T_ERRNO(repo_computed(x.r, "dev", "t.txt", 0, "bogus", &b, &err),
		ENODATA);
	T_ERRNO(repo_computed(x.r, "dev", "t.txt", 9, "version", &b, &err),
		ENOENT);
	buf_release(&b);
	fixture_close(&x);
}

/* Labels checked against what a real JAR offers. */
static void test_labels_jar(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_artifact a;
	struct catalog_version v;
	struct repo_upload *u = NULL;
	struct buf b = BUF_INIT(4096);
	const char *pending = NULL;
	char *mongo, *fmt, *rt, *miss;
	size_t mlen = 0, flen = 0, rlen = 0, mslen = 0;
	int rc;

	mongo = fixture_jar("mongodb.jar", &mlen, "label checks against a JAR");
	fmt = fixture_jar("fmt-jsonish.jar", &flen,
			  "label checks against a JAR");
	rt = fixture_jar("runtime-id.jar", &rlen, "unknown identifiers");
	miss = fixture_jar("missing-class.jar", &mslen,
			   "a zip that is no "
			   "factory JAR");
	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	if (!mongo || !fmt)
		goto out;

	T_INTEQ(upload(&x, "dev", "mongodb-connector.jar", mongo, mlen, &v), 0);
	T_INTEQ(v.n, 1);
	buf_reset(&b);
	T_INTEQ(repo_computed(x.r, "dev", "mongodb-connector.jar", 0,
			      "factories", &b, &err), 0);
	T_STREQ(buf_str(&b), "connector mongodb "
			     "com.example.mongodb.MongoDynamicTableFactory\n");
	buf_reset(&b);
	T_INTEQ(repo_computed(x.r, "dev", "mongodb-connector.jar", 0, "error",
			      &b, &err), 0);
	T_STREQ(buf_str(&b), "");

	/* The type and identifier must be offered. */
	T_ERRNO(set_label(&x, "dev", "mongodb-connector.jar", TYPE, "format"),
		EINVAL);
	T_CONTAINS(last_msg, "connector 'mongodb'");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EINVAL");
	T_STREQ(label(&x, "dev", "mongodb-connector.jar", TYPE), "(none)");
	T_INTEQ(set_label(&x, "dev", "mongodb-connector.jar", TYPE,
			  "connector"), 0);
	T_ERRNO(set_label(&x, "dev", "mongodb-connector.jar", IDENT, "kafka"),
		EINVAL);
	T_CONTAINS(last_msg, "connector 'mongodb'");
	T_INTEQ(set_label(&x, "dev", "mongodb-connector.jar", IDENT,
			  "mongodb"), 0);
	T_STREQ(label(&x, "dev", "mongodb-connector.jar", IDENT), "mongodb");

	/* A new version must still offer what the labels say. */
	T_INTEQ(upload(&x, "dev", "mongodb-connector.jar", mongo, mlen, &v), 0);
	T_INTEQ(v.n, 1);
	T_ERRNO(upload(&x, "dev", "mongodb-connector.jar", fmt, flen, &v),
		EINVAL);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EINVAL");
	T_INTEQ(art(&x, "dev", "mongodb-connector.jar", &a), 0);
	T_INTEQ(a.nversions, 1);
	T_INTEQ(a.latest.n, 1);
	T_STREQ(label(&x, "dev", "mongodb-connector.jar", TYPE), "connector");

	/* Labels set with the upload are checked against its bytes. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "json-ish.jar", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, fmt, flen, 0), (ssize_t)flen);
	T_INTEQ(repo_upload_label(u, TYPE, "format", &err), 0);
	T_INTEQ(repo_upload_label(u, IDENT, "avro", &err), 0);
	T_INTEQ(repo_upload_label_get(u, IDENT, &pending), 1);
	T_STREQ(pending, "avro");
	T_INTEQ(repo_upload_label_get(u, "other", &pending), 0);
	T_ERRNO(repo_upload_label(u, TYPE, "sink", &err), EINVAL);
	cmfs_err_clear(&err);
	T_ERRNO(repo_upload_commit(u, &who, &v, &err), EINVAL);
	T_CONTAINS(cmfs_err_msg(&err), "format 'json-ish'");
	T_ERRNO(art(&x, "dev", "json-ish.jar", &a), ENOENT);
	/* Corrected within the same open file: commits then. */
	T_INTEQ(repo_upload_label(u, IDENT, "json-ish", &err), 0);
	cmfs_err_clear(&err);
	rc = repo_upload_commit(u, &who, &v, &err);
	T_INTEQ(rc, 0);
	if (rc)
		fprintf(stderr, "  retried commit: %s\n", err.msg);
	repo_upload_free(u);
	u = NULL;
	if (rc) {
		/* A fresh upload, to go on with the rest. */
		T_INTEQ(repo_upload_begin(&u, x.r, "dev", "json-ish.jar", 1,
					  &err), 0);
		repo_upload_write(u, fmt, flen, 0);
		repo_upload_label(u, TYPE, "format", &err);
		repo_upload_label(u, IDENT, "json-ish", &err);
		rc = repo_upload_commit(u, &who, &v, &err);
		T_INTEQ(rc, 0);
		repo_upload_free(u);
		u = NULL;
	}
	T_INTEQ(v.n, 1);
	T_STREQ(label(&x, "dev", "json-ish.jar", TYPE), "format");
	T_STREQ(label(&x, "dev", "json-ish.jar", IDENT), "json-ish");
	T_CONTAINS(fixture_last_event(&x, "dev"), "artifact=json-ish.jar");
	T_CONTAINS(fixture_last_event(&x, "dev"), "result=ok");
	/* Labels with the same bytes again: applied, no new version. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "json-ish.jar", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, fmt, flen, 0), (ssize_t)flen);
	T_INTEQ(repo_upload_label(u, "team", "data", &err), 0);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	T_INTEQ(v.n, 1);
	T_STREQ(label(&x, "dev", "json-ish.jar", "team"), "data");
	T_CONTAINS(fixture_last_event(&x, "dev"), "unchanged=yes");
	repo_upload_free(u);
	u = NULL;

	/* [limits] labels counts a key changed twice in one open file once,
	 * as its last change leaves it: here two labels, at the limit. */
	x.cfg.limits.labels = 2;
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "twice.jar", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, fmt, flen, 0), (ssize_t)flen);
	T_INTEQ(repo_upload_label(u, TYPE, "format", &err), 0);
	T_INTEQ(repo_upload_label(u, IDENT, "avro", &err), 0);
	T_INTEQ(repo_upload_label(u, IDENT, "json-ish", &err), 0);
	T_INTEQ(repo_upload_label(u, "team", "data", &err), 0);
	T_INTEQ(repo_upload_label(u, "team", NULL, &err), 0);
	rc = repo_upload_commit(u, &who, &v, &err);
	T_INTEQ(rc, 0);
	if (rc)
		fprintf(stderr, "  twice.jar: %s\n", err.msg);
	repo_upload_free(u);
	u = NULL;
	T_STREQ(label(&x, "dev", "twice.jar", IDENT), "json-ish");
	T_STREQ(label(&x, "dev", "twice.jar", "team"), "(none)");
	T_ERRNO(set_label(&x, "dev", "twice.jar", "team", "data"), EDQUOT);
	T_INTEQ(set_label(&x, "dev", "twice.jar", IDENT, "json-ish"), 0);
	x.cfg.limits.labels = 64;

	/* An unknown identifier of the right kind is accepted. */
	if (rt) {
		T_INTEQ(upload(&x, "dev", "rt.jar", rt, rlen, NULL), 0);
		T_INTEQ(set_label(&x, "dev", "rt.jar", TYPE, "format"), 0);
		T_INTEQ(set_label(&x, "dev", "rt.jar", IDENT, "whatever"), 0);
		T_ERRNO(set_label(&x, "dev", "rt.jar", TYPE, "connector"),
			EINVAL);
		T_STREQ(label(&x, "dev", "rt.jar", TYPE), "format");
	}
	/* A zip that is not a usable factory JAR is stored; its inspection
	 * error is recorded and shown. */
	if (miss) {
		T_INTEQ(upload(&x, "dev", "miss.jar", miss, mslen, &v), 0);
		T_INTEQ(v.n, 1);
		T_CONTAINS(fixture_last_event(&x, "dev"), "inspection=");
		T_CONTAINS(fixture_last_event(&x, "dev"), "AbsentFactory");
		buf_reset(&b);
		T_INTEQ(repo_computed(x.r, "dev", "miss.jar", 0, "error", &b,
				      &err), 0);
		T_CONTAINS(buf_str(&b), "AbsentFactory");
		T_ERRNO(set_label(&x, "dev", "miss.jar", IDENT, "absent"),
			EINVAL);
	}
out:
	free(mongo);
	free(fmt);
	free(rt);
	free(miss);
	buf_release(&b);
	fixture_close(&x);
}

/* ---- scratch files --------------------------------------------------------- */

static void test_scratch(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct catalog_artifact a;
	struct buf b = BUF_INIT(4096);
	struct stat st;
	char sha[STORE_SHA_HEX];

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);

	/* Labels on a scratch file, in memory. */
	T_INTEQ(repo_scratch_label_set(x.r, "dev", ".x.tmp", "app", "v1",
				       &err), 0);
	T_ERRNO(repo_scratch_label_set(x.r, "dev", ".x.tmp", "app", "-bad",
				       &err), EINVAL);
	T_ERRNO(repo_scratch_label_set(x.r, "dev", ".x.tmp", TYPE, "sink",
				       NULL), EINVAL);
	T_INTEQ(repo_scratch_label_get(x.r, "dev", ".x.tmp", "app", &b), 0);
	T_STREQ(buf_str(&b), "v1");
	T_INTEQ(repo_scratch_label_set(x.r, "dev", ".x.tmp", "app", "v2",
				       NULL), 0);
	T_INTEQ(repo_scratch_label_set(x.r, "dev", ".x.tmp", "k2", "w", NULL),
		0);
	T_INTEQ(repo_scratch_label_set(x.r, "dev", ".other", "k3", "z", NULL),
		0);
	buf_reset(&b);
	T_INTEQ(repo_scratch_label_get(x.r, "dev", ".x.tmp", "app", &b), 0);
	T_STREQ(buf_str(&b), "v2");
	buf_reset(&b);
	T_INTEQ(repo_scratch_label_list(x.r, "dev", ".x.tmp", &b), 0);
	T_INTEQ(b.len, 17);
	T_CHECK(b.len == 17 && (!memcmp(b.data, "user.app\0user.k2\0", 17) ||
				!memcmp(b.data, "user.k2\0user.app\0", 17)));
	buf_reset(&b);
	T_ERRNO(repo_scratch_label_get(x.r, "prod", ".x.tmp", "app", &b),
		ENODATA);
	/* Moved with a rename; forgotten with the file. */
	repo_scratch_label_move(x.r, "dev", ".x.tmp", ".y.tmp");
	T_ERRNO(repo_scratch_label_get(x.r, "dev", ".x.tmp", "app", &b),
		ENODATA);
	T_INTEQ(repo_scratch_label_get(x.r, "dev", ".y.tmp", "app", &b), 0);
	T_STREQ(buf_str(&b), "v2");
	T_INTEQ(repo_scratch_label_del(x.r, "dev", ".y.tmp", "app"), 0);
	T_ERRNO(repo_scratch_label_del(x.r, "dev", ".y.tmp", "app"), ENODATA);
	repo_scratch_label_move(x.r, "dev", ".y.tmp", NULL);
	buf_reset(&b);
	T_ERRNO(repo_scratch_label_get(x.r, "dev", ".y.tmp", "k2", &b),
		ENODATA);
	T_INTEQ(repo_scratch_label_get(x.r, "dev", ".other", "k3", &b), 0);

	/* A scratch file renamed into place is an upload, with its labels. */
	T_INTEQ(scratch_file(&x, "dev", ".up.tmp", "scratch bytes", 13), 0);
	T_INTEQ(repo_scratch_label_set(x.r, "dev", ".up.tmp", "app", "x",
				       NULL), 0);
	T_INTEQ(repo_scratch_commit(x.r, &who, "dev", ".up.tmp", "up.txt", &v,
				    &err), 0);
	T_INTEQ(v.n, 1);
	T_INTEQ(v.size, 13);
	fixture_sha(sha, "scratch bytes", 13);
	T_STREQ(v.sha256, sha);
	T_CHECK(blob_is(&x, sha, "scratch bytes", 13));
	T_STREQ(label(&x, "dev", "up.txt", "app"), "x");
	T_ERRNO(store_scratch_stat(repo_store(x.r), "dev", 'a', ".up.tmp", &st),
		ENOENT);
	buf_reset(&b);
	T_ERRNO(repo_scratch_label_get(x.r, "dev", ".up.tmp", "app", &b),
		ENODATA);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=upload artifact=up.txt");
	T_CONTAINS(fixture_last_event(&x, "dev"), "label=app");
	T_CONTAINS(fixture_last_event(&x, "dev"), "result=ok");

	/* Refused: the scratch file stays where it was. */
	T_INTEQ(scratch_file(&x, "dev", ".j.tmp", "no zip", 6), 0);
	T_ERRNO(repo_scratch_commit(x.r, &who, "dev", ".j.tmp", "j.jar", &v,
				    &err), EINVAL);
	T_INTEQ(store_scratch_stat(repo_store(x.r), "dev", 'a', ".j.tmp", &st),
		0);
	T_ERRNO(art(&x, "dev", "j.jar", &a), ENOENT);
	T_ERRNO(repo_scratch_commit(x.r, &who, "dev", ".none", "n.txt", &v,
				    &err), ENOENT);
	buf_release(&b);
	fixture_close(&x);
}

/* A refusal recorded before any repo call. */
static void test_refused(void)
{
	struct fixture x;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	repo_refused(x.r, &who, "dev", "create", "bad name", -EINVAL,
		     "artifact name 'bad name': use ...");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   " uid=1000 env=dev action=create object=\"bad name\" "
		   "result=refused errno=EINVAL reason=\"artifact name "
		   "'bad name': use ...\"");
	T_CONTAINS(buf_str(&x.log), "action=create object=\"bad name\"");
	fixture_close(&x);
}

/* Occurrences of `needle` in `hay`. */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* A loop of one refusal is one line, and its count once the window
 * closes (here: at close); the daemon's log says the same. */
static void test_refusals_coalesced(void)
{
	static const struct repo_who other = { 1001, 1001, 4243, 0, NULL };
	struct fixture x;
	int i;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	for (i = 0; i < 1000; i++)
		repo_refused(x.r, &who, "dev", "read", "events", -EACCES,
			     "uid 1000 may not read here (read right)");
	repo_refused(x.r, &other, "dev", "read", "events", -EACCES,
		     "uid 1001 may not read here (read right)");
	T_INTEQ(count_of(fixture_events(&x, "dev"),
			 "uid=1000 env=dev action=read object=events "
			 "result=refused errno=EACCES"), 1);
	T_INTEQ(count_of(fixture_events(&x, "dev"), "uid=1001 env=dev "),
		1);
	T_INTEQ(count_of(buf_str(&x.log), "uid=1000 env=dev action=read"), 1);
	fixture_reopen(&x);
	T_INTEQ(count_of(fixture_events(&x, "dev"),
			 "uid=1000 env=dev action=read object=events "
			 "repeated=999 in="), 1);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EACCES reason=\"uid 1000 may not "
		   "read here (read right)\"");
	T_INTEQ(count_of(buf_str(&x.log), "repeated=999"), 1);
	/* Different objects: the uid's burst, then counted. */
	for (i = 0; i < 100; i++) {
		char obj[16];

		snprintf(obj, sizeof(obj), "o%d", i);
		repo_refused(x.r, &who, "dev", "read", obj, -EACCES, "no");
	}
	fixture_reopen(&x);
	T_INTEQ(count_of(fixture_events(&x, "dev"), "action=read object=o"),
		60);
	T_CONTAINS(fixture_events(&x, "dev"),
		   "uid=1000 env=dev action=rate-limit object=refusals "
		   "suppressed=40 ");
	fixture_close(&x);
}

/* A resolution whose result did not change is written once. */
static void test_resolution_once(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(1 << 16);
	int i;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(table_write(&x, "dev", "t",
			    "CREATE TABLE t (a INT) "
			    "WITH ('connector' = 'kafka')"), 0);
	for (i = 0; i < 50; i++) {
		buf_reset(&b);
		cmfs_err_clear(&err);
		repo_resolve(x.r, &who, "dev", "t", 0, 1, &b, &err);
		buf_reset(&b);
		cmfs_err_clear(&err);
		repo_resolve(x.r, &who, "dev", "t", 1, 1, &b, &err);
	}
	/* One line for t.jars, one for t.sql. */
	T_INTEQ(count_of(fixture_events(&x, "dev"), "action=resolve table=t "),
		2);
	/* Its result changes: written again, once. */
	T_INTEQ(table_write(&x, "dev", "t",
			    "CREATE TABLE t (b INT) "
			    "WITH ('connector' = 'nope')"), 0);
	for (i = 0; i < 10; i++) {
		buf_reset(&b);
		cmfs_err_clear(&err);
		repo_resolve(x.r, &who, "dev", "t", 0, 1, &b, &err);
	}
	T_INTEQ(count_of(fixture_events(&x, "dev"), "action=resolve table=t "),
		3);
	buf_release(&b);
	fixture_close(&x);
}

/* [events] max_rows and max_age: the oldest go, a line says how many. */
static void test_retention(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	uint64_t n;
	int i;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	/* The trail of an environment removed long ago. */
	T_INTEQ(catalog_event_add(repo_catalog(x.r), "gone",
				  "time=2020-01-01T00:00:00.000Z uid=0 "
				  "env=gone action=old result=ok\n", &err), 0);
	for (i = 0; i < 40; i++) {
		char obj[16];

		snprintf(obj, sizeof(obj), "o%d", i);
		repo_refused(x.r, &who, "dev", "read", obj, -EACCES, "no");
	}
	/* By age (90 days by default): the line of 2020 goes at open. */
	fixture_reopen(&x);
	T_CHECK(strstr(fixture_events(&x, "gone"), "action=old") == NULL);
	T_CONTAINS(fixture_events(&x, "gone"),
		   "env=gone action=retention object=events removed=1 "
		   "max_rows=100000 max_age=7776000s");
	T_CHECK(strstr(fixture_events(&x, "dev"), "retention") == NULL);
	/* By rows: 41 lines (mkdir and 40), 9 kept and the line. */
	x.cfg.events.max_rows = 10;
	fixture_reopen(&x);
	T_INTEQ(catalog_event_size(repo_catalog(x.r), "dev", &n, &err), 0);
	T_INTEQ(count_of(fixture_events(&x, "dev"), "\n"), 10);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=retention object=events removed=32 max_rows=10 ");
	T_CHECK(strncmp(fixture_events(&x, "dev"), "time=", 5) == 0);
	T_INTEQ(strlen(fixture_events(&x, "dev")), n);
	/* The newest lines are the ones kept. */
	T_CONTAINS(fixture_events(&x, "dev"), "object=o39 ");
	T_CHECK(strstr(fixture_events(&x, "dev"), "object=o29 ") == NULL);
	/* 0 and 0: everything is kept. */
	x.cfg.events.max_rows = 0;
	x.cfg.events.max_age = 0;
	repo_refused(x.r, &who, "dev", "read", "p", -EACCES, "no");
	fixture_reopen(&x);
	T_INTEQ(count_of(fixture_events(&x, "dev"), "\n"), 11);
	fixture_close(&x);
}

/* A rename of one table onto another: one line. */
static void test_table_rename(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	const char *t1 = "CREATE TABLE t1 (a INT) WITH ('connector' = 'x')";
	int before;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(table_write(&x, "dev", "t1", t1), 0);
	T_INTEQ(table_write(&x, "dev", "t2",
			    "CREATE TABLE t2 (b INT) WITH ('connector' = 'x')"),
		0);
	before = count_of(fixture_events(&x, "dev"), "\n");
	T_ERRNO(repo_table_rename(x.r, &who, "dev", "t1", "t2", t1,
				  strlen(t1), &err), EINVAL);
	T_INTEQ(count_of(fixture_events(&x, "dev"), "\n"), before + 1);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=rename table=t1 to=t2 result=refused errno=EINVAL");
	T_STREQ(table_text(&x, "dev", "t1"), t1);
	fixture_close(&x);
}

/* ---- tables ---------------------------------------------------------------- */

struct opts {
	char s[1024];
};

static void table_opts(struct fixture *x, const char *env, const char *name,
		       struct opts *o, char *like, size_t likelen)
{
	struct catalog *c = repo_catalog(x->r);
	struct catalog_env e;
	struct catalog_table t;
	struct catalog_table_def d;
	size_t i, n = 0;

	o->s[0] = '\0';
	like[0] = '\0';
	if (catalog_env_get(c, env, &e, NULL) ||
	    catalog_table_get(c, e.id, name, &t, NULL) ||
	    catalog_table_def(c, t.id, &d, NULL))
		return;
	for (i = 0; i < d.nopts; i++)
		n += (size_t)snprintf(o->s + n, sizeof(o->s) - n, "%s=%s;",
				      d.keys[i], d.values[i]);
	snprintf(like, likelen, "%s", d.like_ddl ? d.like_ddl : "(null)");
	catalog_table_def_release(&d);
}

/*
 * The reason of a table's last refused write: kept on its catalog row, so
 * a reopen keeps it, until the next good write or the drop; a table not
 * in the catalog keeps none.  Keys written twice keep the last value in
 * the catalog's options (what resolution reads).
 */
static void test_table_refusals(void)
{
	struct fixture x;
	struct buf b = BUF_INIT(1 << 20);
	const char *good = "CREATE TABLE t (a INT) WITH ('connector' = 'x', "
			   "'connector' = 'y')";
	struct opts o;
	char like[64];

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(table_write(&x, "dev", "t", good), 0);
	table_opts(&x, "dev", "t", &o, like, sizeof(like));
	T_STREQ(o.s, "connector=y;");
	T_INTEQ(repo_table_error(x.r, "dev", "t", &b), 0);
	T_INTEQ((long long)b.len, 0);
	T_ERRNO(table_write(&x, "dev", "t", "CREATE TABLE t (a INT"), EINVAL);
	T_INTEQ(repo_table_error(x.r, "dev", "t", &b), 0);
	T_CONTAINS(buf_str(&b), "1:22: expected");
	buf_reset(&b);
	/* a remount keeps it: no good write came */
	fixture_reopen(&x);
	buf_reset(&b);
	T_INTEQ(repo_table_error(x.r, "dev", "t", &b), 0);
	T_CONTAINS(buf_str(&b), "1:22: expected");
	buf_reset(&b);
	T_INTEQ(table_write(&x, "dev", "t", good), 0);
	T_INTEQ(repo_table_error(x.r, "dev", "t", &b), 0);
	T_INTEQ((long long)b.len, 0);
	fixture_reopen(&x);
	T_INTEQ(repo_table_error(x.r, "dev", "t", &b), 0);
	T_INTEQ((long long)b.len, 0);
	/* a drop takes it; so does a table that never was */
	T_ERRNO(table_write(&x, "dev", "t", "CREATE TABLE t (a INT"), EINVAL);
	T_INTEQ(repo_table_remove(x.r, &who, "dev", "t", NULL), 0);
	T_INTEQ(table_write(&x, "dev", "t", good), 0);
	T_INTEQ(repo_table_error(x.r, "dev", "t", &b), 0);
	T_INTEQ((long long)b.len, 0);
	T_ERRNO(table_write(&x, "dev", "n", "CREATE TABLE n (a"), EINVAL);
	T_INTEQ(repo_table_error(x.r, "dev", "n", &b), 0);
	T_INTEQ((long long)b.len, 0);
	buf_release(&b);
	fixture_close(&x);
}

static void test_tables(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct opts o;
	char like[2048];
	const char *t1 = "-- the orders\n"
			 "CREATE TABLE t (\n"
			 "  id INT,\n"
			 "  name STRING\n"
			 ") WITH (\n"
			 "  'connector' = 'datagen',\n"
			 "  'rows-per-second' = '5'\n"
			 ");\n";
	const char *base = "CREATE TABLE base (id INT, ts TIMESTAMP(3)) WITH ("
			   "'connector' = 'kafka', 'topic' = 'a', "
			   "'format' = 'json')";
	const char *derived = "CREATE TABLE derived (extra STRING) WITH ("
			      "'topic' = 'b', 'scan.startup.mode' = "
			      "'earliest') LIKE base";

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);

	T_INTEQ(table_write(&x, "dev", "t", t1), 0);
	T_STREQ(table_text(&x, "dev", "t"), t1);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=table-write table=t connector=datagen result=ok");
	table_opts(&x, "dev", "t", &o, like, sizeof(like));
	T_STREQ(o.s, "connector=datagen;rows-per-second=5;");
	T_STREQ(like, "(null)");

	/* Invalid DDL: refused, the previous text stays. */
	T_ERRNO(table_write(&x, "dev", "t", "CREATE TABLE t (id INT"), EINVAL);
	T_CONTAINS(last_msg, "1:");
	T_STREQ(table_text(&x, "dev", "t"), t1);
	T_CONTAINS(fixture_last_event(&x, "dev"), "action=table-write table=t");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EINVAL");
	T_ERRNO(table_write(&x, "dev", "t", ""), EINVAL);
	T_ERRNO(table_write(&x, "dev", "t", "DROP TABLE t"), EINVAL);
	T_ERRNO(table_write(&x, "dev", "t",
			    "CREATE TABLE t (a INT); CREATE TABLE t (b INT);"),
		EINVAL);
	T_ERRNO(table_write(&x, "dev", "t",
			    "CREATE TABLE t (a INT, PRIMARY KEY (a))"),
		EINVAL);
	T_STREQ(table_text(&x, "dev", "t"), t1);

	/* CTAS and RTAS. */
	T_ERRNO(table_write(&x, "dev", "t", "CREATE TABLE t AS SELECT 1"),
		EOPNOTSUPP);
	T_CONTAINS(last_msg, "not supported in the environment catalog");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "result=refused errno=EOPNOTSUPP");
	T_ERRNO(table_write(&x, "dev", "t", "CREATE OR REPLACE TABLE t AS "
					   "SELECT * FROM src"), EOPNOTSUPP);
	T_STREQ(table_text(&x, "dev", "t"), t1);

	/* The name must be the file's; qualified only by its own catalog. */
	T_ERRNO(table_write(&x, "dev", "u", "CREATE TABLE t (a INT)"), EINVAL);
	T_STREQ(table_text(&x, "dev", "u"), "(none)");
	T_ERRNO(table_write(&x, "dev", "u", "CREATE TABLE U (a INT)"), EINVAL);
	T_INTEQ(table_write(&x, "dev", "q",
			    "CREATE TABLE `_env_dev`.`default`.q (a INT)"), 0);
	T_INTEQ(table_write(&x, "dev", "q2",
			    "CREATE TABLE `default`.q2 (a INT)"), 0);
	T_ERRNO(table_write(&x, "dev", "q3",
			    "CREATE TABLE `_env_prod`.`default`.q3 (a INT)"),
		EINVAL);
	T_ERRNO(table_write(&x, "dev", "q4",
			    "CREATE TABLE other.q4 (a INT)"), EINVAL);
	/* A missing environment. */
	T_ERRNO(table_write(&x, "nope", "t", "CREATE TABLE t (a INT)"),
		ENOENT);

	/* LIKE: the source must exist. */
	T_ERRNO(table_write(&x, "dev", "derived", derived), EINVAL);
	T_CONTAINS(last_msg, "LIKE source base");
	T_STREQ(table_text(&x, "dev", "derived"), "(none)");
	/* Merged at write time, the source's options first. */
	T_INTEQ(table_write(&x, "dev", "base", base), 0);
	T_INTEQ(table_write(&x, "dev", "derived", derived), 0);
	T_CONTAINS(fixture_last_event(&x, "dev"), "table=derived like=base");
	T_CONTAINS(fixture_last_event(&x, "dev"), "connector=kafka result=ok");
	T_STREQ(table_text(&x, "dev", "derived"), derived);
	table_opts(&x, "dev", "derived", &o, like, sizeof(like));
	T_STREQ(o.s, "connector=kafka;topic=b;format=json;"
		     "scan.startup.mode=earliest;");
	T_CONTAINS(like, "base");
	T_CONTAINS(like, "kafka");
	/* The merge stays when the source changes or goes. */
	T_INTEQ(table_write(&x, "dev", "base",
			    "CREATE TABLE base (id INT) WITH ('connector' = "
			    "'print')"), 0);
	T_INTEQ(repo_table_remove(x.r, &who, "dev", "base", &err), 0);
	table_opts(&x, "dev", "derived", &o, like, sizeof(like));
	T_STREQ(o.s, "connector=kafka;topic=b;format=json;"
		     "scan.startup.mode=earliest;");
	/* A LIKE clash is refused with the reason. */
	T_INTEQ(table_write(&x, "dev", "base", base), 0);
	T_ERRNO(table_write(&x, "dev", "clash",
			    "CREATE TABLE clash (id INT) LIKE base"), EINVAL);
	T_STREQ(table_text(&x, "dev", "clash"), "(none)");

	/* Drop. */
	T_INTEQ(repo_table_remove(x.r, &who, "dev", "t", &err), 0);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=table-drop table=t result=ok");
	T_STREQ(table_text(&x, "dev", "t"), "(none)");
	T_ERRNO(repo_table_remove(x.r, &who, "dev", "t", &err), ENOENT);
	/* Written again after the drop. */
	T_INTEQ(table_write(&x, "dev", "t", t1), 0);
	T_STREQ(table_text(&x, "dev", "t"), t1);
	fixture_close(&x);
}

/* ---- persistence ----------------------------------------------------------- */

/*
 * sync = batch (the default): a blob is listed as unsynced until a sync
 * has written it.  What a power loss before that sync leaves - the list,
 * and a blob torn or missing - is mended at the next open: the versions
 * of a bad blob are taken back, with a line in events.
 */
/*
 * Artifacts in the catalog's file itself, its log left aside (SQLite's
 * immutable=1): what a checkpoint has copied in.
 */
static int artifacts_in_file(struct fixture *x)
{
	char uri[400];
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int n = -1;

	snprintf(uri, sizeof(uri), "file:%s/catalog.db?immutable=1", x->store);
	if (!sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
			     NULL) &&
	    !sqlite3_prepare_v2(db, "SELECT count(*) FROM artifacts", -1, &s,
				NULL) &&
	    sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return n;
}

static void test_power_loss(void)
{
	struct fixture x;
	struct catalog *c = NULL;
	struct catalog_artifact a;
	struct cmfs_err err = CMFS_ERR_INIT;
	char two[STORE_SHA_HEX], gee[STORE_SHA_HEX], hh[STORE_SHA_HEX];
	char db[256], p[300];
	int64_t mark = -1;

	setup_files(&x);
	T_INTEQ(x.cfg.sync, CONFIG_SYNC_BATCH);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(ups(&x, "dev", "f.txt", "one"), 0);
	T_INTEQ(catalog_unsynced_mark(repo_catalog(x.r), &mark, &err), 0);
	T_CHECK(mark > 0);
	/* The commit left the log's checkpoint to the sync (the file may
	 * not hold even the tables yet: -1). */
	T_CHECK(artifacts_in_file(&x) < 1);
	T_INTEQ(repo_sync(x.r), 0);
	T_INTEQ(catalog_unsynced_mark(repo_catalog(x.r), &mark, &err), 0);
	T_INTEQ(mark, 0);
	T_INTEQ(artifacts_in_file(&x), 1);
	T_INTEQ(ups(&x, "dev", "f.txt", "two"), 0);
	T_INTEQ(ups(&x, "dev", "g.txt", "gee"), 0);
	T_INTEQ(ups(&x, "dev", "h.txt", "hh"), 0);
	/* A clean close syncs: nothing is left to check. */
	repo_close(x.r);
	x.r = NULL;
	snprintf(db, sizeof(db), "%s/catalog.db", x.store);
	T_INTEQ(catalog_open(&c, db, &err), 0);
	T_INTEQ(c ? catalog_unsynced_mark(c, &mark, &err) : -1, 0);
	T_INTEQ(mark, 0);

	/* A power loss instead: listed, one blob torn, one never written. */
	fixture_sha(two, "two", 3);
	fixture_sha(gee, "gee", 3);
	fixture_sha(hh, "hh", 2);
	T_INTEQ(c ? catalog_unsynced_add(c, two, &err) : -1, 0);
	T_INTEQ(c ? catalog_unsynced_add(c, gee, &err) : -1, 0);
	T_INTEQ(c ? catalog_unsynced_add(c, hh, &err) : -1, 0);
	catalog_close(c);
	snprintf(p, sizeof(p), "%s/blobs/%.2s/%s", x.store, two, two);
	T_INTEQ(truncate(p, 1), 0);
	snprintf(p, sizeof(p), "%s/blobs/%.2s/%s", x.store, gee, gee);
	T_INTEQ(unlink(p), 0);
	fixture_reopen(&x);

	/* f.txt is back at version 1, g.txt is gone, h.txt is intact. */
	T_STREQ(versions(&x, "dev", "f.txt"), "1,");
	T_ERRNO(art(&x, "dev", "g.txt", &a), ENOENT);
	T_STREQ(versions(&x, "dev", "h.txt"), "1,");
	T_CHECK(blob_is(&x, hh, "hh", 2));
	T_CONTAINS(fixture_events(&x, "dev"),
		   "action=recover artifact=f.txt version=2 reason=\"its bytes "
		   "are torn");
	T_CONTAINS(fixture_events(&x, "dev"),
		   "action=recover artifact=g.txt version=1 reason=\"its bytes "
		   "were lost");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "artifact-removed=yes result=ok");
	T_CONTAINS(x.log.data, "action=recover artifact=f.txt");
	/* The torn blob is freed; the list is empty; the next open is quiet. */
	T_CHECK(!blob_exists(&x, two));
	T_INTEQ(catalog_unsynced_mark(repo_catalog(x.r), &mark, &err), 0);
	T_INTEQ(mark, 0);
	/* Numbers are not reused: the next upload of f.txt is version 3. */
	T_INTEQ(ups(&x, "dev", "f.txt", "three"), 0);
	T_STREQ(versions(&x, "dev", "f.txt"), "1,3,");
	fixture_reopen(&x);
	T_STREQ(versions(&x, "dev", "f.txt"), "1,3,");
	T_STREQ(versions(&x, "dev", "h.txt"), "1,");
	fixture_close(&x);
}

/* sync = close: every commit is on disk before it returns; nothing is
 * listed, and freed blobs go at once. */
/*
 * Pages of the file at `path` the kernel holds dirty (not yet written),
 * read from /proc/self/pagemap and /proc/kpageflags (root only), or -1
 * where they cannot be read.
 */
static long dirty_pages(const char *path)
{
	long page = sysconf(_SC_PAGESIZE), n, i, dirty = 0;
	int fd = open(path, O_RDONLY), pm = -1, kf = -1;
	volatile const char *m = MAP_FAILED;
	struct stat st;
	uint64_t e, flags;

	if (fd < 0 || fstat(fd, &st) || !st.st_size)
		goto fail;
	n = (st.st_size + page - 1) / page;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	pm = open("/proc/self/pagemap", O_RDONLY);
	kf = open("/proc/kpageflags", O_RDONLY);
	if (m == MAP_FAILED || pm < 0 || kf < 0)
		goto fail;
	for (i = 0; i < n; i++) {
		(void)m[i * page]; /* mapped, so pagemap names its frame */
		if (pread(pm, &e, 8, (off_t)(((uintptr_t)m / page + i) * 8)) !=
			    8 ||
		    !(e >> 63) || !(e & ((1ull << 55) - 1)) ||
		    pread(kf, &flags, 8,
			  (off_t)((e & ((1ull << 55) - 1)) * 8)) != 8)
			goto fail;
		dirty += (flags >> 4) & 1; /* KPF_DIRTY */
	}
	munmap((void *)m, (size_t)st.st_size);
	close(pm);
	close(kf);
	close(fd);
	return dirty;
fail:
	if (m != MAP_FAILED)
		munmap((void *)m, (size_t)st.st_size);
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Dirty pages of blob `sha` (-1: not counted). */
static long blob_dirty(struct fixture *x, const char *sha)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/blobs/%.2s/%s", x->store, sha, sha);
	return dirty_pages(p);
}

/*
 * What a sync writes of the store: with no new blob since the last, the
 * catalog's files alone; with a few (SYNC_FEW in repo.c), those blobs and
 * the catalog; with more, the whole file system (syncfs).  A file someone
 * has in flight on the same file system (an upload's staging file) keeps
 * its dirty pages in the first two cases.
 */
static void test_sync_catalog_only(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	static char junk[1 << 20];
	char path[300], wal[300], name[32];
	int64_t mark = -1;
	long d;
	int fd, i;

	setup_files(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(repo_sync(x.r), 0);
	snprintf(path, sizeof(path), "%s/in-flight", x.store);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	T_CHECK(fd >= 0);
	memset(junk, 'j', sizeof(junk));
	T_CHECK(write(fd, junk, sizeof(junk)) == (ssize_t)sizeof(junk));
	close(fd);
	d = dirty_pages(path);
	if (d < 0) {
		fprintf(stderr, "  (no /proc/kpageflags: dirty pages not "
				"counted)\n");
	} else {
		T_CHECK(d > 0);
		/* A catalog change: an environment. */
		T_INTEQ(mkenv(&x, "qa"), 0);
		T_INTEQ(catalog_unsynced_mark(repo_catalog(x.r), &mark, &err),
			0);
		T_INTEQ(mark, 0);
		T_INTEQ(repo_sync(x.r), 0);
		/* (The kernel's own writeback may take some meanwhile.) */
		T_CHECK(dirty_pages(path) > 0);
		/* The catalog's log is written, by a sync that is not the
		 * first (those sync descriptors of their own). */
		snprintf(wal, sizeof(wal), "%s/catalog.db-wal", x.store);
		T_INTEQ(dirty_pages(wal), 0);
		T_INTEQ(mkenv(&x, "qa2"), 0);
		T_CHECK(dirty_pages(wal) > 0);
		T_INTEQ(repo_sync(x.r), 0);
		T_INTEQ(dirty_pages(wal), 0);
		/* A new blob: that blob. */
		junk[0] = '1';
		T_INTEQ(upload(&x, "dev", "f.txt", junk, 256 << 10, &v), 0);
		T_CHECK(blob_dirty(&x, v.sha256) > 0);
		T_INTEQ(repo_sync(x.r), 0);
		T_INTEQ(blob_dirty(&x, v.sha256), 0);
		T_CHECK(dirty_pages(path) > 0);
		T_INTEQ(catalog_unsynced_mark(repo_catalog(x.r), &mark, &err),
			0);
		T_INTEQ(mark, 0);
		/* Nine: the whole store. */
		for (i = 0; i < 9; i++) {
			snprintf(name, sizeof(name), "g%d.txt", i);
			T_INTEQ(ups(&x, "dev", name, name), 0);
		}
		T_INTEQ(repo_sync(x.r), 0);
		T_INTEQ(dirty_pages(path), 0);
		T_INTEQ(artifacts_in_file(&x), 10);
	}
	unlink(path);
	fixture_close(&x);
}

static void test_sync_close(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	char one[STORE_SHA_HEX];
	int64_t mark = -1;

	setup(&x);
	repo_close(x.r);
	x.r = NULL;
	x.cfg.sync = CONFIG_SYNC_CLOSE;
	fixture_reopen(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(ups(&x, "dev", "f.txt", "one"), 0);
	T_INTEQ(catalog_unsynced_mark(repo_catalog(x.r), &mark, &err), 0);
	T_INTEQ(mark, 0);
	fixture_sha(one, "one", 3);
	T_CHECK(blob_exists(&x, one));
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "f.txt", &err), 0);
	T_CHECK(!blob_exists(&x, one));
	T_INTEQ(repo_sync(x.r), 0);
	fixture_close(&x);
}

static void test_reopen(void)
{
	struct fixture x;
	struct catalog_artifact a;
	char sha[STORE_SHA_HEX];
	char *before;
	uint64_t n1 = 0, n2 = 0;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(ups(&x, "dev", "f.txt", "v1"), 0);
	T_INTEQ(ups(&x, "dev", "f.txt", "v2"), 0);
	T_INTEQ(set_label(&x, "dev", "f.txt", "app", "x"), 0);
	T_INTEQ(table_write(&x, "dev", "t", "CREATE TABLE t (a INT)"), 0);
	T_INTEQ(repo_events_size(x.r, "dev", &n1), 0);
	before = strdup(fixture_events(&x, "dev"));

	fixture_reopen(&x);
	T_INTEQ(art(&x, "dev", "f.txt", &a), 0);
	T_INTEQ(a.nversions, 2);
	T_INTEQ(a.latest.n, 2);
	fixture_sha(sha, "v2", 2);
	T_STREQ(a.latest.sha256, sha);
	T_CHECK(blob_is(&x, sha, "v2", 2));
	fixture_sha(sha, "v1", 2);
	T_CHECK(blob_is(&x, sha, "v1", 2));
	T_STREQ(label(&x, "dev", "f.txt", "app"), "x");
	T_STREQ(table_text(&x, "dev", "t"), "CREATE TABLE t (a INT)");
	T_INTEQ(repo_events_size(x.r, "dev", &n2), 0);
	T_INTEQ(n2, n1);
	T_STREQ(fixture_events(&x, "dev"), before ? before : "");
	/* And it goes on from there. */
	T_INTEQ(ups(&x, "dev", "f.txt", "v3"), 0);
	T_STREQ(versions(&x, "dev", "f.txt"), "1,2,3,");
	free(before);
	fixture_close(&x);
}

/* Write blob file `sha` by hand, its path into `p`. */
static void plant_blob(struct fixture *x, const char *sha, const char *data,
		       size_t len, char *p, size_t n)
{
	char dir[200];
	int fd;

	snprintf(dir, sizeof(dir), "%s/blobs/%.2s", x->store, sha);
	mkdir(dir, 0700);
	snprintf(p, n, "%s/%s", dir, sha);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	T_CHECK(fd >= 0);
	if (fd >= 0) {
		T_INTEQ(write(fd, data, len), (ssize_t)len);
		close(fd);
	}
}

/* Through the catalog file itself, with no repo open. */
static int loose_add(struct fixture *x, const char *sha)
{
	struct catalog *c = NULL;
	char db[200];
	int rc;

	snprintf(db, sizeof(db), "%s/catalog.db", x->store);
	rc = catalog_open(&c, db, NULL);
	if (!rc)
		rc = catalog_loose_add(c, sha, NULL);
	catalog_close(c);
	return rc;
}

/* Rows of the catalog's loose table. */
static int loose_rows(struct fixture *x)
{
	int n = 0;

	catalog_loose_list(repo_catalog(x->r), count_row, &n, NULL);
	return n;
}

/* A blob nothing refers to (what a crash between link and commit leaves)
 * is freed at open; referenced blobs and foreign files are not touched. */
static void test_orphan_sweep(void)
{
	struct fixture x;
	char keep[STORE_SHA_HEX], orphan[STORE_SHA_HEX], p[300];
	struct stat st;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(ups(&x, "dev", "keep.txt", "kept"), 0);
	fixture_sha(keep, "kept", 4);
	fixture_sha(orphan, "orphan bytes", 12);
	repo_close(x.r);
	x.r = NULL;

	/* As an upload lists its blob before linking it. */
	T_INTEQ(loose_add(&x, orphan), 0);
	plant_blob(&x, orphan, "orphan bytes", 12, p, sizeof(p));
	T_CHECK(stat(p, &st) == 0);

	fixture_reopen(&x);
	T_CHECK(stat(p, &st) != 0);
	T_CHECK(freed(&x, orphan));
	T_CHECK(blob_exists(&x, keep));
	T_CHECK(blob_is(&x, keep, "kept", 4));
	T_INTEQ(count_blobs(&x), 1);
	T_CONTAINS(buf_str(&x.log), "freed orphan blob");
	fixture_close(&x);
}

/*
 * A blob file the catalog neither refers to nor lists as loose may be
 * another catalog's: kept, and said so in the log.
 */
static void test_unknown_blob_kept(void)
{
	struct fixture x;
	char stray[STORE_SHA_HEX], p[300];
	struct stat st;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(ups(&x, "dev", "keep.txt", "kept"), 0);
	T_INTEQ(upload(&x, "dev", "big.bin", big_bytes(), BIG_SIZE, NULL), 0);
	fixture_sha(stray, "stray bytes", 11);
	repo_close(x.r);
	x.r = NULL;
	plant_blob(&x, stray, "stray bytes", 11, p, sizeof(p));
	fixture_reopen(&x);
	T_CHECK(stat(p, &st) == 0);
	T_CONTAINS(buf_str(&x.log), "not known to the catalog: kept");
	T_CHECK(!strstr(buf_str(&x.log), "freed orphan blob"));
	fixture_close(&x);
}

/*
 * A delete's commit lists the blob it leaves without a version: a crash
 * before its unlink (the file planted back here) is swept at the next
 * open, and the row with it.
 */
static void test_deleted_blob_swept(void)
{
	struct fixture x;
	char sha[STORE_SHA_HEX], p[300];
	struct stat st;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(ups(&x, "dev", "keep.txt", "kept"), 0);
	T_INTEQ(upload(&x, "dev", "big.bin", big_bytes(), BIG_SIZE, NULL), 0);
	fixture_sha(sha, big_bytes(), BIG_SIZE);
	T_CHECK(blob_file(&x, sha));
	T_INTEQ(loose_rows(&x), 0); /* the version took it */
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "big.bin", NULL), 0);
	T_INTEQ(loose_rows(&x), 1);
	T_CHECK(freed(&x, sha));
	repo_close(x.r);
	x.r = NULL;
	plant_blob(&x, sha, big_bytes(), BIG_SIZE, p, sizeof(p));
	fixture_reopen(&x);
	T_CHECK(stat(p, &st) != 0);
	T_INTEQ(loose_rows(&x), 0);
	T_CONTAINS(buf_str(&x.log), "freed orphan blob");
	fixture_close(&x);
}

/* repo_open() of x's store, as a second mount would: rc, message kept. */
static int open_again(struct fixture *x)
{
	struct repo *r = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc = repo_open(&r, &x->cfg, FIXTURE_MNT, NULL, NULL, &err);

	keep_msg(&err);
	repo_close(r);
	return rc;
}

/*
 * No mount frees blobs that no catalog knows: a missing or empty
 * catalog.db beside blobs, or a catalog that knows none of them, is
 * refused, and nothing is created or removed.  A second mount of a store
 * in use is refused too.
 */
static void test_refuse_unknown_store(void)
{
	struct fixture x;
	char sha[STORE_SHA_HEX], db[200], p[300];
	struct stat st;
	int fd;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(upload(&x, "dev", "big.bin", big_bytes(), BIG_SIZE, NULL), 0);
	fixture_sha(sha, big_bytes(), BIG_SIZE);
	snprintf(p, sizeof(p), "%s/blobs/%.2s/%s", x.store, sha, sha);

	T_ERRNO(open_again(&x), EBUSY);
	T_CONTAINS(last_msg, "in use by another cmfs");

	repo_close(x.r);
	x.r = NULL;
	snprintf(db, sizeof(db), "%s/catalog.db", x.store);
	T_INTEQ(unlink(db), 0);
	T_ERRNO(open_again(&x), EUCLEAN);
	T_CONTAINS(last_msg, "is missing");
	T_CHECK(stat(db, &st) != 0);	 /* not created */
	T_CHECK(stat(p, &st) == 0);	 /* not freed */

	fd = open(db, O_CREAT | O_WRONLY, 0600);
	T_CHECK(fd >= 0);
	close(fd);
	T_ERRNO(open_again(&x), EUCLEAN);
	T_CONTAINS(last_msg, "is empty");
	T_CHECK(stat(p, &st) == 0);

	/* A catalog of its own that knows nothing of the blob. */
	T_INTEQ(unlink(db), 0);
	{
		struct catalog *c = NULL;

		T_INTEQ(catalog_open(&c, db, NULL), 0);
		catalog_close(c);
	}
	T_ERRNO(open_again(&x), EUCLEAN);
	T_CONTAINS(last_msg, "knows none of its 1 blobs");
	T_CHECK(stat(p, &st) == 0);
	fixture_close(&x);
}

/* Files in the store's staging/ whose names begin "freed-". */
static int retired_files(struct fixture *x)
{
	char p[300];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(p, sizeof(p), "%s/staging", x->store);
	if (!(d = opendir(p)))
		return -1;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "freed-", 6);
	closedir(d);
	return n;
}

/* retired_files() once it is `want`, or after two seconds. */
static int retired_become(struct fixture *x, int want)
{
	int i, n = retired_files(x);

	for (i = 0; i < 200 && n != want; i++) {
		usleep(10000);
		n = retired_files(x);
	}
	return n;
}

/*
 * A freed blob leaves blobs/ at the sync that makes its deletion durable,
 * renamed aside; its unlink waits while an upload is being written, and
 * comes once none is.  One left behind by a stop is swept at the next
 * open.
 */
static void test_reaper(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct repo_upload *u = NULL;
	char sha[STORE_SHA_HEX], p[300];
	int fd;

	setup_files(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(ups(&x, "dev", "gone.txt", "to be freed"), 0);
	fixture_sha(sha, "to be freed", 11);
	T_INTEQ(repo_sync(x.r), 0);

	/* An upload being written: the unlink waits. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "busy.txt", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, "busy", 4, 0), 4);
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "gone.txt", NULL), 0);
	T_CHECK(freed(&x, sha));
	T_INTEQ(retired_files(&x), 1);
	usleep(200000);
	T_INTEQ(retired_files(&x), 1);
	/* Its commit ends the wait. */
	T_INTEQ(repo_upload_commit(u, &who, NULL, &err), 0);
	T_INTEQ(retired_become(&x, 0), 0);
	repo_upload_free(u);

	/* No upload: at once (the thread, soon). */
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "busy.txt", NULL), 0);
	fixture_sha(sha, "busy", 4);
	T_CHECK(freed(&x, sha));
	T_INTEQ(retired_become(&x, 0), 0);

	/* A stop between the rename and the unlink: swept at the open. */
	repo_close(x.r);
	x.r = NULL;
	snprintf(p, sizeof(p), "%s/staging/freed-%s-1", x.store, sha);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	T_CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	T_INTEQ(retired_files(&x), 1);
	fixture_reopen(&x);
	T_INTEQ(retired_files(&x), 0);
	fixture_close(&x);
}

/* ---- inline blobs
 * ------------------------------------------------------------ */

/* Version v's bytes through repo_blob_open(), as a reader gets them. */
static int version_is(struct fixture *x, const struct catalog_version *v,
		      const void *data, size_t len)
{
	char *got = malloc(len + 1);
	int fd, ok = 0;

	if (got && !repo_blob_open(x->r, v, &fd, NULL)) {
		ok = pread(fd, got, len + 1, 0) == (ssize_t)len &&
		     !memcmp(got, data, len);
		close(fd);
	}
	free(got);
	return ok;
}

/*
 * An inspection made right after a write (repo_upload_inspect_early) is
 * the commit's only while the bytes stay as they were.
 */
static void test_inspect_early(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct repo_upload *u = NULL;
	struct buf b = BUF_INIT(1 << 16);
	size_t len, clen, nlen;
	char *jar = fixture_jar("mongodb.jar", &len, "early inspection");
	char *com = fixture_jar("comment.jar", &clen, "early inspection");
	char *nz = fixture_jar("not-zip.jar", &nlen, "early inspection");

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	if (!jar || !com || !nz)
		goto out;

	/* Whole: inspected now; the commit records what that found. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "m.jar", 1, &err), 0);
	T_INTEQ(repo_upload_inspect_early(u), 0); /* no bytes yet */
	T_INTEQ(repo_upload_write(u, jar, len / 2, 0), (ssize_t)(len / 2));
	T_INTEQ(repo_upload_inspect_early(u), 0); /* half a zip */
	T_INTEQ(repo_upload_write(u, jar + len / 2, len - len / 2,
				  (off_t)(len / 2)),
		(ssize_t)(len - len / 2));
	T_INTEQ(repo_upload_inspect_early(u), 1);
	T_INTEQ(repo_upload_inspect_early(u), 1); /* kept, not redone */
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	repo_upload_free(u);
	T_INTEQ(repo_computed(x.r, "dev", "m.jar", 0, "factories", &b, &err),
		0);
	T_STREQ(buf_str(&b), "connector mongodb "
			     "com.example.mongodb.MongoDynamicTableFactory\n");

	/* Bytes changed after it: never used.  A write that breaks the
	 * archive, then a truncation that cuts it: both refused. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "s.jar", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, jar, len, 0), (ssize_t)len);
	T_INTEQ(repo_upload_inspect_early(u), 1);
	T_INTEQ(repo_upload_write(u, "XXXX", 4, 0), 4);
	T_ERRNO(repo_upload_commit(u, &who, &v, &err), EINVAL);
	T_CONTAINS(err.msg, "not a valid JAR");
	cmfs_err_clear(&err);
	T_INTEQ(repo_upload_write(u, jar, 4, 0), 4);
	T_INTEQ(repo_upload_inspect_early(u), 0); /* the end not written */
	T_INTEQ(repo_upload_write(u, jar, len, 0), (ssize_t)len);
	T_INTEQ(repo_upload_inspect_early(u), 1);
	T_INTEQ(repo_upload_truncate(u, (off_t)(len - 1)), 0);
	T_INTEQ(repo_upload_inspect_early(u), 0);
	T_ERRNO(repo_upload_commit(u, &who, &v, &err), EINVAL);
	cmfs_err_clear(&err);
	repo_upload_free(u);
	{
		struct catalog_artifact a;

		T_ERRNO(art(&x, "dev", "s.jar", &a), ENOENT);
	}

	/* Written a few bytes at a time (dd bs=7): found at the last. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "d.jar", 1, &err), 0);
	{
		size_t at, k, early = 0, short_writes = 0;

		for (at = 0; at < len; at += k) {
			k = len - at < 7 ? len - at : 7;
			if (repo_upload_write(u, jar + at, k, (off_t)at) !=
			    (ssize_t)k)
				short_writes++;
			early += (size_t)repo_upload_inspect_early(u);
		}
		T_INTEQ(short_writes, 0);
		T_INTEQ(early, 1);
	}
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	repo_upload_free(u);

	/* A comment after the directory: still the end of a zip. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "c.jar", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, com, clen, 0), (ssize_t)clen);
	T_INTEQ(repo_upload_inspect_early(u), 1);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	repo_upload_free(u);

	/* Not a JAR's name, or not a zip: left to the commit. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "m.zip", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, jar, len, 0), (ssize_t)len);
	T_INTEQ(repo_upload_inspect_early(u), 0);
	repo_upload_free(u);
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "n.jar", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, nz, nlen, 0), (ssize_t)nlen);
	T_INTEQ(repo_upload_inspect_early(u), 0);
	T_ERRNO(repo_upload_commit(u, &who, &v, &err), EINVAL);
	cmfs_err_clear(&err);
	repo_upload_free(u);

	/* Held in a staging file (over inline_max): not inspected early. */
	x.cfg.inline_max = 16;
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "f.jar", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, jar, len, 0), (ssize_t)len);
	T_INTEQ(repo_upload_inspect_early(u), 0);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	repo_upload_free(u);
out:
	buf_release(&b);
	free(jar);
	free(com);
	free(nz);
	fixture_close(&x);
}

/*
 * JAR `name` of the fixtures with a stored entry of `pad` bytes added (a
 * JAR past 4 MiB, whose hash is taken aside): malloc'd, or NULL.
 */
static char *padded_jar(struct fixture *x, const char *name, size_t pad,
			size_t *len)
{
	char path[256], *jar, *d = malloc(pad ? pad : 1);
	size_t n, i;
	zip_source_t *src = NULL;
	zip_t *za = NULL;
	FILE *f;
	int ze = 0, ok = 0;

	snprintf(path, sizeof(path), "%s/padded.jar", x->tmp);
	jar = fixture_jar(name, &n, "a JAR past 4 MiB");
	if (d && jar && (f = fopen(path, "wb"))) {
		ok = fwrite(jar, 1, n, f) == n;
		ok = !fclose(f) && ok;
	}
	free(jar);
	for (i = 0; d && i < pad; i++)
		d[i] = (char)(i * 31 + i / 4093);
	if (ok && (za = zip_open(path, 0, &ze)) &&
	    (src = zip_source_buffer(za, d, pad, 1))) {
		zip_int64_t idx = zip_file_add(za, "pad.bin", src, 0);

		d = NULL; /* the source's now, or freed below */
		ok = idx >= 0 &&
		     !zip_set_file_compression(za, (zip_uint64_t)idx,
					       ZIP_CM_STORE, 0);
		if (idx < 0)
			zip_source_free(src);
		ok = !zip_close(za) && ok;
		za = NULL;
	} else {
		ok = 0;
	}
	if (za)
		zip_discard(za);
	free(d);
	return ok ? fixture_read(path, len, "a JAR past 4 MiB") : NULL;
}

/* Upload `len` bytes as `name` in 1 MiB writes, in order, and commit. */
static int upload_in_order(struct fixture *x, const char *name,
			   const char *data, size_t len,
			   struct catalog_version *v, struct cmfs_err *err)
{
	struct repo_upload *u = NULL;
	size_t off, k;
	int rc = repo_upload_begin(&u, x->r, "dev", name, 1, err);

	for (off = 0; !rc && off < len; off += k) {
		k = len - off < (1 << 20) ? len - off : 1 << 20;
		if (repo_upload_write(u, data + off, k, (off_t)off) !=
		    (ssize_t)k)
			rc = -EIO;
	}
	if (!rc)
		rc = repo_upload_commit(u, &who, v, err);
	repo_upload_free(u);
	return rc;
}

/*
 * A JAR past 4 MiB, whose hash is taken on a thread of its own and whose
 * inspection runs beside the end of it (inspect_while_hashing): what the
 * commit records is the same as ever, new, again and under another name,
 * and a JAR that is not a zip is refused the same way.  (That the two
 * overlap is a matter of time: bench/ measures it, not this.)
 */
static void test_inspect_while_hashing(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct catalog_artifact a;
	struct buf b = BUF_INIT(1 << 16);
	const char *mongo = "connector mongodb "
			    "com.example.mongodb.MongoDynamicTableFactory\n";
	size_t len, i;
	char *jar, *junk, sha[STORE_SHA_HEX];

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	jar = padded_jar(&x, "mongodb.jar", 5 << 20, &len);
	junk = malloc(5 << 20);
	T_CHECK(jar != NULL && junk != NULL);
	if (!jar || !junk)
		goto out;
	for (i = 0; i < (5u << 20); i++)
		junk[i] = (char)(i * 7 + i / 1021);

	/* New: inspected while hashed. */
	T_INTEQ(upload_in_order(&x, "big.jar", jar, len, &v, &err), 0);
	fixture_sha(sha, jar, len);
	T_STREQ(v.sha256, sha);
	T_INTEQ(repo_computed(x.r, "dev", "big.jar", 0, "factories", &b, &err),
		0);
	T_STREQ(buf_str(&b), mongo);
	buf_reset(&b);

	/* The same bytes again under the same name (the same size: the
	 * hash first) and under another (inspected again): one version
	 * each, the same report. */
	T_INTEQ(upload_in_order(&x, "big.jar", jar, len, &v, &err), 0);
	T_INTEQ(v.n, 1);
	T_INTEQ(upload_in_order(&x, "copy.jar", jar, len, &v, &err), 0);
	T_INTEQ(repo_computed(x.r, "dev", "copy.jar", 0, "factories", &b, &err),
		0);
	T_STREQ(buf_str(&b), mongo);
	buf_reset(&b);

	/* Not a zip: refused, and the latest stays. */
	T_ERRNO(upload_in_order(&x, "big.jar", junk, 5 << 20, &v, &err),
		EINVAL);
	T_CONTAINS(err.msg, "not a valid JAR");
	cmfs_err_clear(&err);
	T_INTEQ(art(&x, "dev", "big.jar", &a), 0);
	T_STREQ(a.latest.sha256, sha);
	T_ERRNO(upload_in_order(&x, "junk.jar", junk, 5 << 20, &v, &err),
		EINVAL);
	cmfs_err_clear(&err);
	T_ERRNO(art(&x, "dev", "junk.jar", &a), ENOENT);
out:
	buf_release(&b);
	free(jar);
	free(junk);
	fixture_close(&x);
}

/*
 * Small uploads are held in memory and stored in the catalog: no staging
 * file, no blob file; bigger ones (or ones that outgrow [store]
 * inline_max while written) are files.  Readers get either.
 */
static void test_inline(void)
{
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v, w;
	struct repo_upload *u = NULL;
	char sha[STORE_SHA_HEX], sha2[STORE_SHA_HEX];
	static char big[100000];
	int fd;
	size_t i;

	setup(&x);
	T_INTEQ(x.cfg.inline_max, 64 << 10);
	T_INTEQ(mkenv(&x, "dev"), 0);
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);

	/* Small: a row, no file; read back through a sealed memory file. */
	T_INTEQ(upload(&x, "dev", "s.txt", "small", 5, &v), 0);
	T_CHECK(blob_inline(&x, v.sha256));
	T_CHECK(!blob_file(&x, v.sha256));
	T_INTEQ(count_blobs(&x), 1);
	T_CHECK(version_is(&x, &v, "small", 5));
	T_INTEQ(repo_blob_open(x.r, &v, &fd, &err), 0);
	T_CHECK(pwrite(fd, "X", 1, 0) < 0 && errno == EPERM);
	T_CHECK(ftruncate(fd, 1) < 0);
	close(fd);

	/* At inline_max: a row; one byte more: a file. */
	x.cfg.inline_max = 16;
	T_INTEQ(upload(&x, "dev", "b16", big, 16, &v), 0);
	T_CHECK(blob_inline(&x, v.sha256) && !blob_file(&x, v.sha256));
	T_INTEQ(upload(&x, "dev", "b17", big, 17, &v), 0);
	T_CHECK(!blob_inline(&x, v.sha256) && blob_file(&x, v.sha256));
	T_CHECK(version_is(&x, &v, big, 17));
	/* 0: every blob a file, an empty one too. */
	x.cfg.inline_max = 0;
	T_INTEQ(upload(&x, "dev", "empty", "", 0, &v), 0);
	T_STREQ(v.sha256, SHA_EMPTY);
	T_CHECK(!blob_inline(&x, SHA_EMPTY) && blob_file(&x, SHA_EMPTY));
	x.cfg.inline_max = 16;

	/* Outgrowing inline_max while written: the bytes so far go to a
	 * staging file, and the blob is a file. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "grow", 1, &err), 0);
	T_INTEQ(repo_upload_write(u, big, 10, 0), 10);
	T_INTEQ(repo_upload_write(u, big + 10, 20, 10), 20);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	repo_upload_free(u);
	fixture_sha(sha, big, 30);
	T_STREQ(v.sha256, sha);
	T_CHECK(blob_file(&x, sha) && blob_is(&x, sha, big, 30));

	/* Copy-on-write from an inline version: held in memory again... */
	x.cfg.inline_max = 64 << 10;
	T_INTEQ(ups(&x, "dev", "cow.txt", "hello world"), 0);
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "cow.txt", 0, &err), 0);
	T_INTEQ(repo_upload_size(u), 11);
	T_INTEQ(repo_upload_write(u, "J", 1, 0), 1);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	repo_upload_free(u);
	fixture_sha(sha, "Jello world", 11);
	T_STREQ(v.sha256, sha);
	T_CHECK(blob_inline(&x, sha) && version_is(&x, &v, "Jello world", 11));
	/* ...or, grown past inline_max, copied into a staging file. */
	x.cfg.inline_max = 12;
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "cow.txt", 0, &err), 0);
	T_INTEQ(repo_upload_write(u, "!!", 2, 11), 2);
	T_INTEQ(repo_upload_commit(u, &who, &v, &err), 0);
	repo_upload_free(u);
	fixture_sha(sha, "Jello world!!", 13);
	T_STREQ(v.sha256, sha);
	T_CHECK(blob_file(&x, sha) && version_is(&x, &v, "Jello world!!", 13));
	x.cfg.inline_max = 64 << 10;
	/* A read of the bytes being written, from memory. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "s.txt", 0, &err), 0);
	{
		char got[8] = "";

		T_INTEQ(repo_upload_read(u, got, sizeof(got), 1), 4);
		T_CHECK(!memcmp(got, "mall", 4));
	}
	repo_upload_free(u);

	/* The same bytes in two artifacts: one row; it goes with the last
	 * version that refers to it, in that transaction (no sync needed:
	 * a power loss keeps both or neither). */
	T_INTEQ(upload(&x, "dev", "one.txt", "shared", 6, &v), 0);
	T_INTEQ(upload(&x, "dev", "two.txt", "shared", 6, &w), 0);
	T_STREQ(v.sha256, w.sha256);
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "one.txt", &err), 0);
	T_CHECK(blob_inline(&x, v.sha256));
	T_INTEQ(upload(&x, "dev", "two.txt", "other", 5, NULL), 0);
	T_INTEQ(repo_ver_remove(x.r, &who, "dev", "two.txt", 1, &err), 0);
	T_CHECK(!blob_inline(&x, v.sha256));
	fixture_sha(sha2, "other", 5);
	T_CHECK(blob_inline(&x, sha2));
	T_INTEQ(repo_art_remove(x.r, &who, "dev", "two.txt", &err), 0);
	T_CHECK(!blob_inline(&x, sha2));

	/* A scratch file renamed into place: copied into memory, inline. */
	T_INTEQ(scratch_file(&x, "dev", ".up.tmp", "scratched", 9), 0);
	T_INTEQ(repo_scratch_commit(x.r, &who, "dev", ".up.tmp", "up.txt", &v,
				    &err),
		0);
	fixture_sha(sha, "scratched", 9);
	T_STREQ(v.sha256, sha);
	T_CHECK(blob_inline(&x, sha) && version_is(&x, &v, "scratched", 9));

	/* What is inline stays so across a reopen, and an unsynced row for
	 * it (which no commit writes) finds it intact. */
	T_INTEQ(catalog_unsynced_add(repo_catalog(x.r), sha, &err), 0);
	fixture_reopen(&x);
	T_STREQ(versions(&x, "dev", "up.txt"), "1,");
	T_CHECK(version_is(&x, &v, "scratched", 9));
	T_CHECK(strstr(fixture_events(&x, "dev"), "action=recover") == NULL);
	fixture_close(&x);
}

/*
 * Uploads held in memory together stay under HELD_MAX (16 MiB): past it,
 * an upload is written to a staging file; small enough to be inline, its
 * bytes still commit inline, so that a blob is never both a file and a
 * row (300 uploads of the same small bytes at once left both: issue 34).
 */
static void test_inline_budget(void)
{
	enum { N = 20, SZ = 1 << 20 };
	struct fixture x;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct repo_upload *u[N];
	struct catalog_version v;
	char name[32], sha[STORE_SHA_HEX];
	char *data = malloc(SZ);
	int i, files = 0, rows = 0;

	setup(&x);
	x.cfg.inline_max = SZ;
	T_INTEQ(mkenv(&x, "dev"), 0);
	for (i = 0; data && i < N; i++) {
		memset(data, 'a' + i, SZ);
		snprintf(name, sizeof(name), "f%02d", i);
		T_INTEQ(repo_upload_begin(&u[i], x.r, "dev", name, 1, &err), 0);
		T_INTEQ(repo_upload_write(u[i], data, SZ, 0), SZ);
	}
	for (i = 0; data && i < N; i++) {
		T_INTEQ(repo_upload_commit(u[i], &who, &v, &err), 0);
		repo_upload_free(u[i]);
		memset(data, 'a' + i, SZ);
		fixture_sha(sha, data, SZ);
		T_STREQ(v.sha256, sha);
		T_CHECK(version_is(&x, &v, data, SZ));
		files += blob_file(&x, sha);
		rows += blob_inline(&x, sha);
	}
	T_INTEQ(rows, N);
	T_INTEQ(files, 0);
	T_INTEQ(count_blobs(&x), N);

	/* The same bytes, 20 at once past the budget: one row. */
	for (i = 0; data && i < N; i++) {
		memset(data, 'z', SZ);
		snprintf(name, sizeof(name), "same%02d", i);
		T_INTEQ(repo_upload_begin(&u[i], x.r, "dev", name, 1, &err), 0);
		T_INTEQ(repo_upload_write(u[i], data, SZ, 0), SZ);
	}
	for (i = 0; data && i < N; i++) {
		T_INTEQ(repo_upload_commit(u[i], &who, &v, &err), 0);
		repo_upload_free(u[i]);
	}
	fixture_sha(sha, data, SZ);
	T_INTEQ(blob_inline(&x, sha), 1);
	T_INTEQ(blob_file(&x, sha), 0);

	/* Bytes already a file (stored with inline_max 0) stay the file:
	 * an inline upload of them adds no row. */
	x.cfg.inline_max = 0;
	T_INTEQ(ups(&x, "dev", "asfile.txt", "kept as a file"), 0);
	x.cfg.inline_max = SZ;
	T_INTEQ(ups(&x, "dev", "again.txt", "kept as a file"), 0);
	fixture_sha(sha, "kept as a file", 14);
	T_INTEQ(blob_file(&x, sha), 1);
	T_INTEQ(blob_inline(&x, sha), 0);
	T_STREQ(versions(&x, "dev", "again.txt"), "1,");
	free(data);
	fixture_close(&x);
}

/*
 * Access is decided in core from the caller alone (uid, gid, groups): the
 * default lets the mounting user do everything and others read; a rule
 * naming a group admits its members; a refusal is an events line.
 */
static void test_authorise(void)
{
	static const gid_t root_group[] = { 0 };
	const struct repo_who owner = { getuid(), getgid(), 4244, 0, NULL };
	const struct repo_who member = { 1002, 1002, 4245, 1, root_group };
	struct config rules;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct fixture x;
	char ini[160];
	FILE *f;

	setup(&x);
	T_INTEQ(repo_env_create(x.r, &owner, "dev", &err), 0);

	T_INTEQ(repo_change_right(REPO_AREA_ARTIFACTS), CONFIG_UPLOAD);
	T_INTEQ(repo_change_right(REPO_AREA_TABLES), CONFIG_WRITE_TABLES);
	T_INTEQ(repo_change_right(REPO_AREA_ENVS), CONFIG_ADMIN);

	/* The default: the mounting user holds every right, others read. */
	T_INTEQ(repo_may(x.r, &owner, "dev", CONFIG_ADMIN), 1);
	T_INTEQ(repo_may(x.r, &owner, NULL, CONFIG_ADMIN), 1);
	T_INTEQ(repo_may(x.r, &who, "dev", CONFIG_READ), 1);
	T_INTEQ(repo_may(x.r, &who, "dev", CONFIG_UPLOAD), 0);
	T_INTEQ(repo_may(x.r, &who, "", CONFIG_ADMIN), 0);
	T_INTEQ(repo_authorise(x.r, &owner, "dev", CONFIG_UPLOAD, "create",
			       "a.jar"), 0);
	T_ERRNO(repo_authorise(x.r, &who, "dev", CONFIG_UPLOAD, "create",
			       "a.jar"), EACCES);
	T_CONTAINS(fixture_last_event(&x, "dev"), "uid=1000");
	T_CONTAINS(fixture_last_event(&x, "dev"), "action=create");
	T_CONTAINS(fixture_last_event(&x, "dev"), "object=a.jar");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "uid 1000 may not create here (upload right)");

	/* [env.dev] upload = @root: a member by supplementary group only. */
	snprintf(ini, sizeof(ini), "%s/rules.ini", x.tmp);
	T_CHECK((f = fopen(ini, "w")) != NULL);
	if (!f) {
		fixture_close(&x);
		return;
	}
	fputs("[env.dev]\nupload = @root\n", f);
	fclose(f);
	T_INTEQ(config_defaults(&rules), 0);
	free(rules.store_path);
	rules.store_path = strdup(x.store);
	T_INTEQ(config_load(&rules, ini, &err), 0);
	repo_set_config(x.r, &rules);
	T_INTEQ(repo_may(x.r, &member, "dev", CONFIG_UPLOAD), 1);
	T_INTEQ(repo_may(x.r, &member, "dev", CONFIG_WRITE_TABLES), 0);
	T_INTEQ(repo_may(x.r, &member, "prod", CONFIG_UPLOAD), 0);
	T_INTEQ(repo_may(x.r, &who, "dev", CONFIG_UPLOAD), 0);
	repo_set_config(x.r, &x.cfg);
	repo_config_retire(x.r);
	config_release(&rules);
	fixture_close(&x);
}

/*
 * The refusals that need no FUSE: an empty *.jar is doomed before its
 * commit, an artifact does not become a scratch file, a table is not
 * truncated by name, user.cmfs.* is not written; each with its errno and
 * (where it writes one) its events line.
 */
static void test_policy_refusals(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_artifact a;
	struct repo_upload *u;
	struct fixture x;
	int lines;

	setup(&x);
	T_INTEQ(repo_env_create(x.r, &who, "dev", &err), 0);

	/* An empty upload of a *.jar is doomed; of another name it is not. */
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "e.jar", 1, &err), 0);
	T_ERRNO(repo_upload_doomed(u), EINVAL);
	T_INTEQ(repo_upload_truncate(u, 3), 0);
	T_INTEQ(repo_upload_doomed(u), 0);
	repo_upload_free(u);
	T_INTEQ(repo_upload_begin(&u, x.r, "dev", "e.txt", 1, &err), 0);
	T_INTEQ(repo_upload_truncate(u, 0), 0);
	T_INTEQ(repo_upload_doomed(u), 0);
	repo_upload_free(u);

	/* An artifact does not become a scratch file: it stays. */
	T_INTEQ(ups(&x, "dev", "a.txt", "one"), 0);
	T_ERRNO(repo_art_move(x.r, &who, "dev", "a.txt", ".a.txt.swp", &err),
		EPERM);
	T_INTEQ(art(&x, "dev", "a.txt", &a), 0);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=rename object=a.txt result=refused errno=EPERM");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "an artifact cannot become a scratch file: copy it");

	/* A table truncated by name: to nothing EINVAL, else EPERM. */
	T_ERRNO(repo_table_truncate(x.r, &who, "dev", "t.sql", 0), EINVAL);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=table-write object=t.sql result=refused errno=EINVAL");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "truncating a table to nothing");
	T_ERRNO(repo_table_truncate(x.r, &who, "dev", "t.sql", 5), EPERM);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=truncate object=t.sql result=refused errno=EPERM");
	T_CONTAINS(fixture_last_event(&x, "dev"), "t.sql: not possible here");

	/* user.cmfs.* is computed: refused, recorded only with a caller. */
	T_INTEQ(repo_label_writable(x.r, &who, "dev", "a.txt", "user.app"), 0);
	T_ERRNO(repo_label_writable(x.r, &who, "dev", "a.txt",
				    "trusted.app"), ENOTSUP);
	lines = event_lines(&x, "dev");
	T_ERRNO(repo_label_writable(x.r, NULL, "dev", "a.txt",
				    "user.cmfs.version"), EPERM);
	T_INTEQ(event_lines(&x, "dev"), lines);
	T_ERRNO(repo_label_writable(x.r, &who, "dev", "a.txt",
				    "user.cmfs.version"), EPERM);
	T_INTEQ(event_lines(&x, "dev"), lines + 1);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=label object=a.txt result=refused errno=EPERM");
	fixture_close(&x);
}

/*
 * The rules of changes that cannot happen, decided in core: read-only
 * places (EROFS) against places with nothing to change (EPERM), what
 * access(2) with W_OK answers, the scratch size limit, a truncation of an
 * upload refused, a create or rename onto a name the tree has no place
 * for, links, and a table's text that is empty or whose write failed:
 * each with its errno and, where it writes one, its events line.
 */
static void test_policy_rules(void)
{
	const struct repo_who owner = { getuid(), getgid(), 4244, 0, NULL };
	struct cmfs_err err = CMFS_ERR_INIT;
	struct fixture x;
	char big[40];
	int lines;

	setup(&x);
	T_INTEQ(repo_env_create(x.r, &owner, "dev", &err), 0);

	/* The right each operation needs. */
	T_INTEQ(repo_right(REPO_AREA_ARTIFACTS, REPO_OP_READ, 1), CONFIG_READ);
	T_INTEQ(repo_right(REPO_AREA_ARTIFACTS, REPO_OP_CHANGE, 1),
		CONFIG_UPLOAD);
	T_INTEQ(repo_right(REPO_AREA_ARTIFACTS, REPO_OP_REMOVE, 1),
		CONFIG_ADMIN);
	T_INTEQ(repo_right(REPO_AREA_ARTIFACTS, REPO_OP_REMOVE, 0),
		CONFIG_UPLOAD);
	T_INTEQ(repo_right(REPO_AREA_FIXED, REPO_OP_REMOVE, 1), CONFIG_ADMIN);
	T_INTEQ(repo_right(REPO_AREA_TABLES, REPO_OP_REMOVE, 0),
		CONFIG_WRITE_TABLES);
	T_INTEQ(repo_right(REPO_AREA_TABLES, REPO_OP_CHANGE, 0),
		CONFIG_WRITE_TABLES);
	T_INTEQ(repo_right(REPO_AREA_ARTIFACTS, REPO_OP_LABEL, 0),
		CONFIG_UPLOAD);
	T_INTEQ(repo_right(REPO_AREA_ENVS, REPO_OP_CHANGE, 0), CONFIG_ADMIN);
	T_INTEQ(repo_right(REPO_AREA_ENVS, REPO_OP_REMOVE, 0), CONFIG_ADMIN);
	T_INTEQ(repo_right(REPO_AREA_FIXED, REPO_OP_CHANGE, 0), CONFIG_ADMIN);

	T_ERRNO(repo_refuse_change(x.r, &who, "dev", REPO_AREA_FIXED,
				   "versions", "a.jar", "mkdir"), EROFS);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=mkdir object=a.jar result=refused errno=EROFS");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "versions/a.jar: read-only: versions, resolved files and "
		   "events cannot be changed");
	T_ERRNO(repo_refuse_change(x.r, &who, "dev", REPO_AREA_ENVS, "dev",
				   NULL, "truncate"), EPERM);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=truncate object=dev result=refused errno=EPERM");
	T_CONTAINS(fixture_last_event(&x, "dev"), "dev: not possible here");

	/* access(2) W_OK asks: no events line. */
	lines = event_lines(&x, "dev");
	T_ERRNO(repo_may_change(x.r, &owner, "dev", REPO_AREA_FIXED, 0),
		EROFS);
	T_INTEQ(repo_may_change(x.r, &owner, "dev", REPO_AREA_FIXED, 1), 0);
	T_ERRNO(repo_may_change(x.r, &who, "dev", REPO_AREA_FIXED, 1), EACCES);
	T_INTEQ(repo_may_change(x.r, &owner, "dev", REPO_AREA_ARTIFACTS, 0),
		0);
	T_ERRNO(repo_may_change(x.r, &who, "dev", REPO_AREA_TABLES, 0),
		EACCES);
	T_INTEQ(repo_may_change(x.r, &who, NULL, REPO_AREA_ROOT, 1), 0);
	T_INTEQ(event_lines(&x, "dev"), lines);
	T_INTEQ(repo_reads_limited(x.r, "dev"), 0);

	/* The scratch size limit. */
	T_INTEQ(repo_scratch_fits(x.r, &who, "dev", ".s", "write",
				  x.cfg.limits.scratch_size), 0);
	T_ERRNO(repo_scratch_fits(x.r, &who, "dev", ".s", "write",
				  x.cfg.limits.scratch_size + 1), EFBIG);
	snprintf(big, sizeof(big), "%llu bytes",
		 (unsigned long long)x.cfg.limits.scratch_size + 1);
	T_CONTAINS(fixture_last_event(&x, "dev"), big);
	T_CONTAINS(fixture_last_event(&x, "dev"), "([limits] max_scratch_size)");

	/* An upload's truncation refused: over the limit, or why. */
	T_ERRNO(repo_upload_truncate_refused(x.r, &who, "dev", "a.jar", 1 << 30,
					     -EFBIG), EFBIG);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=truncate object=a.jar result=refused errno=EFBIG");
	T_CONTAINS(fixture_last_event(&x, "dev"), "([limits] max_artifact_size)");
	T_ERRNO(repo_upload_truncate_refused(x.r, &who, "dev", "a.jar", 7,
					     -ENOSPC), ENOSPC);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "a.jar: truncating to 7 bytes failed");

	/* Names the tree has no place for. */
	T_ERRNO(repo_create_refused(x.r, &who, "dev", REPO_AREA_TABLES, "x/y"),
		EINVAL);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "not a table file (<table>.sql) nor a scratch name");
	T_ERRNO(repo_create_refused(x.r, &who, "dev", REPO_AREA_ARTIFACTS,
				    "-bad"), EINVAL);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=create object=-bad result=refused errno=EINVAL");
	T_ERRNO(repo_rename_refused(x.r, &who, "dev", "resolved"), EINVAL);
	T_CONTAINS(fixture_last_event(&x, "dev"), "not a valid name here");
	T_ERRNO(repo_link_refused(x.r, &who, "dev", "l"), EPERM);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=link object=l result=refused errno=EPERM");

	/* Groups are read only where rules could name them. */
	T_INTEQ(repo_rules_need_groups(x.r), 0);
	T_INTEQ(repo_table_text_cap(x.r), x.cfg.limits.ddl_size);

	/* truncate(2) by name: a whole upload at once. */
	T_INTEQ(ups(&x, "dev", "a.txt", "hello"), 0);
	T_INTEQ(repo_art_truncate(x.r, &owner, "dev", "a.txt", 2, &err), 0);
	T_STREQ(versions(&x, "dev", "a.txt"), "1,2,");
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=upload artifact=a.txt version=2 size=2");
	T_INTEQ(repo_art_truncate(x.r, &owner, "dev", "a.txt", 4, &err), 0);
	T_STREQ(versions(&x, "dev", "a.txt"), "1,2,3,");
	T_ERRNO(repo_art_truncate(x.r, &owner, "dev", "a.txt",
				  x.cfg.limits.artifact_size + 1, &err),
		EFBIG);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=truncate object=a.txt result=refused errno=EFBIG");
	T_ERRNO(repo_art_truncate(x.r, &owner, "dev", "e.jar", 0, &err),
		EINVAL);
	T_STREQ(versions(&x, "dev", "a.txt"), "1,2,3,");

	/* A table's text. */
	T_ERRNO(repo_table_doomed(0), EINVAL);
	T_INTEQ(repo_table_doomed(1), 0);
	T_ERRNO(repo_table_write_failed(x.r, &who, "dev", "t", -EFBIG), EFBIG);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=table-write object=t result=refused errno=EFBIG");
	T_CONTAINS(fixture_last_event(&x, "dev"), "over max_ddl_size");
	fixture_close(&x);
}

/*
 * A resolved file's size is computed in core: what a read returns, 0
 * when the table does not resolve or does not exist, and no events line.
 */
static void test_resolved_size(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(1 << 16);
	struct fixture x;
	int lines;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(table_write(&x, "dev", "t",
			    "CREATE TABLE t (a INT) "
			    "WITH ('connector' = 'datagen')"), 0);
	T_INTEQ(table_write(&x, "dev", "k",
			    "CREATE TABLE k (a INT) "
			    "WITH ('connector' = 'nope')"), 0);
	lines = event_lines(&x, "dev");
	T_INTEQ(repo_resolve(x.r, &who, "dev", "t", 1, 0, &b, &err), 0);
	T_CHECK(b.len > 0);
	T_INTEQ(repo_resolved_size(x.r, "dev", "t", 1), b.len);
	buf_reset(&b);
	T_INTEQ(repo_resolve(x.r, &who, "dev", "t", 0, 0, &b, &err), 0);
	T_INTEQ(repo_resolved_size(x.r, "dev", "t", 0), b.len);
	T_CHECK(repo_resolve(x.r, &who, "dev", "k", 0, 0, &b, &err) < 0);
	T_INTEQ(repo_resolved_size(x.r, "dev", "k", 0), 0);
	T_INTEQ(repo_resolved_size(x.r, "dev", "none", 1), 0);
	T_INTEQ(event_lines(&x, "dev"), lines);
	buf_release(&b);
	fixture_close(&x);
}

/*
 * A resolved file's other attributes are core's too: a regular file,
 * 0444, one link, its size; its time is when the mount settled the last
 * change, or now while a change is not settled (a .sql: always now).
 */
static void test_resolved_stat(void)
{
	struct buf b = BUF_INIT(1 << 16);
	struct cmfs_err err = CMFS_ERR_INIT;
	struct fixture x;
	struct stat st;
	int64_t before;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(table_write(&x, "dev", "t",
			    "CREATE TABLE t (a INT) "
			    "WITH ('connector' = 'datagen')"), 0);
	T_INTEQ(repo_resolve(x.r, &who, "dev", "t", 0, 0, &b, &err), 0);
	repo_settled(x.r, repo_generation(x.r), 1000000000LL * 42 + 7);
	T_INTEQ(repo_settled_gen(x.r), repo_generation(x.r));
	memset(&st, 0, sizeof(st));
	T_INTEQ(repo_resolved_stat(x.r, "dev", "t", 0, &st), 0);
	T_INTEQ(st.st_mode, S_IFREG | 0444);
	T_INTEQ(st.st_nlink, 1);
	T_INTEQ(st.st_size, b.len);
	T_INTEQ(st.st_blocks, (b.len + 511) / 512);
	T_INTEQ(st.st_mtim.tv_sec, 42);
	T_INTEQ(st.st_mtim.tv_nsec, 7);
	T_INTEQ(st.st_ctim.tv_sec, 42);
	/* A .sql says when it was resolved. */
	before = clock_now_ns();
	T_INTEQ(repo_resolved_stat(x.r, "dev", "t", 1, &st), 0);
	T_CHECK(st.st_mtim.tv_sec >= before / 1000000000);
	/* A change not settled yet: now. */
	T_INTEQ(table_write(&x, "dev", "u",
			    "CREATE TABLE u (a INT) "
			    "WITH ('connector' = 'datagen')"), 0);
	T_INTEQ(repo_resolved_stat(x.r, "dev", "t", 0, &st), 0);
	T_CHECK(st.st_mtim.tv_sec >= before / 1000000000);
	T_ERRNO(repo_resolved_stat(x.r, "dev", "none", 0, &st), ENOENT);
	buf_release(&b);
	fixture_close(&x);
}

/*
 * A resolved file's computed attributes are core's: user.cmfs.error is
 * empty when the table resolves and says why when it does not;
 * refused-classes is empty then (error tells); another attribute is
 * ENODATA.
 */
static void test_resolved_computed(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(1 << 16);
	struct fixture x;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(table_write(&x, "dev", "t",
			    "CREATE TABLE t (a INT) "
			    "WITH ('connector' = 'datagen')"), 0);
	T_INTEQ(table_write(&x, "dev", "k",
			    "CREATE TABLE k (a INT) "
			    "WITH ('connector' = 'nope')"), 0);
	T_INTEQ(repo_resolved_computed(x.r, "dev", "t", 0, "error", &b, &err),
		0);
	T_INTEQ(b.len, 0);
	T_INTEQ(repo_resolved_computed(x.r, "dev", "t", 1, "refused-classes",
				       &b, &err), 0);
	T_INTEQ(b.len, 0);
	T_INTEQ(repo_resolved_computed(x.r, "dev", "k", 0, "error", &b, &err),
		0);
	T_CHECK(b.len > 0);
	T_CONTAINS(buf_str(&b), "nope");
	buf_reset(&b);
	err = (struct cmfs_err)CMFS_ERR_INIT;
	T_INTEQ(repo_resolved_computed(x.r, "dev", "k", 0, "refused-classes",
				       &b, &err), 0);
	T_INTEQ(b.len, 0);
	/* No such table: error says so. */
	err = (struct cmfs_err)CMFS_ERR_INIT;
	buf_reset(&b);
	T_INTEQ(repo_resolved_computed(x.r, "dev", "none", 0, "error", &b,
				       &err), 0);
	T_CHECK(b.len > 0);
	T_ERRNO(repo_resolved_computed(x.r, "dev", "t", 0, "version", &b,
				       &err), ENODATA);
	buf_release(&b);
	fixture_close(&x);
}

/*
 * Scratch files through repo: rm takes the labels set on one with it;
 * statfs is the store's file system's.
 */
static void test_scratch_remove(void)
{
	struct buf b = BUF_INIT(4096);
	struct statvfs sv;
	struct stat st;
	struct fixture x;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(scratch_file(&x, "dev", ".x.tmp", "abc", 3), 0);
	T_INTEQ(repo_scratch_label_set(x.r, "dev", ".x.tmp", "app", "v1",
				       NULL), 0);
	T_INTEQ(repo_scratch_stat(x.r, "dev", 'a', ".x.tmp", &st), 0);
	T_INTEQ(st.st_size, 3);
	T_INTEQ(repo_scratch_truncate(x.r, "dev", 'a', ".x.tmp", 1), 0);
	T_INTEQ(repo_scratch_stat(x.r, "dev", 'a', ".x.tmp", &st), 0);
	T_INTEQ(st.st_size, 1);
	T_INTEQ(repo_scratch_remove(x.r, "dev", 'a', ".x.tmp"), 0);
	T_ERRNO(repo_scratch_stat(x.r, "dev", 'a', ".x.tmp", &st), ENOENT);
	T_ERRNO(repo_scratch_label_get(x.r, "dev", ".x.tmp", "app", &b),
		ENODATA);
	T_ERRNO(repo_scratch_remove(x.r, "dev", 't', "none"), ENOENT);
	T_INTEQ(repo_statfs(x.r, &sv), 0);
	T_CHECK(sv.f_bsize > 0);
	buf_release(&b);
	fixture_close(&x);
}

/*
 * The tree's modes and the attributes of versions and tables are core's:
 * what never changes has no write bits; a version's file shows its size,
 * uploader and commit time; a table's file its text's.
 */
static void test_stat(void)
{
	const char *text = "CREATE TABLE t (a INT) WITH ('connector' = 'datagen')";
	struct catalog_version v;
	struct fixture x;
	struct stat st;

	T_INTEQ(repo_mode(REPO_AREA_FIXED, 1), S_IFDIR | 0555);
	T_INTEQ(repo_mode(REPO_AREA_FIXED, 0), S_IFREG | 0444);
	T_INTEQ(repo_mode(REPO_AREA_ARTIFACTS, 0), S_IFREG | 0644);
	T_INTEQ(repo_mode(REPO_AREA_TABLES, 1), S_IFDIR | 0755);
	T_INTEQ(repo_mode(REPO_AREA_ROOT, 1), S_IFDIR | 0755);
	T_INTEQ(repo_mode(REPO_AREA_ENVS, 1), S_IFDIR | 0755);

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(upload(&x, "dev", "a.txt", "hello", 5, &v), 0);
	memset(&st, 0, sizeof(st));
	repo_ver_stat(&v, REPO_AREA_ARTIFACTS, &st);
	T_INTEQ(st.st_mode, S_IFREG | 0644);
	T_INTEQ(st.st_size, 5);
	T_INTEQ(st.st_uid, who.uid);
	T_INTEQ(st.st_mtim.tv_sec, v.mtime / 1000000000);
	T_INTEQ(st.st_mtim.tv_nsec, v.mtime % 1000000000);
	T_INTEQ(st.st_ctim.tv_sec, st.st_mtim.tv_sec);
	T_INTEQ(st.st_blocks, 1);
	repo_ver_stat(&v, REPO_AREA_FIXED, &st);
	T_INTEQ(st.st_mode, S_IFREG | 0444);

	T_INTEQ(table_write(&x, "dev", "t", text), 0);
	memset(&st, 0, sizeof(st));
	T_INTEQ(repo_table_stat(x.r, "dev", "t", &st), 0);
	T_INTEQ(st.st_mode, S_IFREG | 0644);
	T_INTEQ(st.st_size, strlen(text));
	T_INTEQ(st.st_uid, who.uid);
	T_CHECK(st.st_mtim.tv_sec > 0);
	T_ERRNO(repo_table_stat(x.r, "dev", "none", &st), ENOENT);
	fixture_close(&x);
}

/* Write `text` to scratch file `name` of tables/ in `env`. */
static int table_scratch(struct fixture *x, const char *env, const char *name,
			 const char *text)
{
	int fd, rc = store_scratch_open(repo_store(x->r), env, 't', name,
					O_CREAT | O_TRUNC | O_WRONLY, 0600,
					&fd);

	if (rc)
		return rc;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		rc = -EIO;
	close(fd);
	return rc;
}

/* 1 if scratch file `name` of tables/ in `env` is there. */
static int table_scratch_there(struct fixture *x, const char *env,
			       const char *name)
{
	struct stat st;

	return !store_scratch_stat(repo_store(x->r), env, 't', name, &st);
}

static int count_staged(void *arg, const char *table, const char *name)
{
	(void)table;
	(void)name;
	(*(int *)arg)++;
	return 0;
}

/* How many scratch files of `env` are staged for a table. */
static int staged(struct fixture *x, const char *env)
{
	int n = 0;

	store_scratch_staged(repo_store(x->r), env, 't', count_staged, &n);
	return n;
}

/*
 * A scratch file renamed onto a table (sed -i) is one change: the table
 * has its text and the scratch file is gone, or (refused) both are as they
 * were.  What a crash leaves between the steps, a staged scratch file, is
 * settled at the next open by what the catalog holds: the old state or
 * the new one, never both names.
 */
static void test_table_from_scratch(void)
{
	const char *old = "CREATE TABLE t (a INT) WITH ('connector' = 'datagen')";
	const char *new = "CREATE TABLE t (b INT) WITH ('connector' = 'datagen')";
	struct cmfs_err err = CMFS_ERR_INIT;
	struct fixture x;
	int lines;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(table_write(&x, "dev", "t", old), 0);
	T_INTEQ(table_scratch(&x, "dev", "sed1", new), 0);
	lines = event_lines(&x, "dev");
	T_INTEQ(repo_table_from_scratch(x.r, &who, "dev", "sed1", "t", &err), 0);
	T_STREQ(table_text(&x, "dev", "t"), new);
	T_CHECK(!table_scratch_there(&x, "dev", "sed1"));
	T_INTEQ(staged(&x, "dev"), 0);
	T_INTEQ(event_lines(&x, "dev"), lines + 1);
	T_CHECK(strstr(fixture_events(&x, "dev"),
		       "action=table-write table=t connector=datagen "
		       "result=ok") != NULL);

	/* Refused: the table keeps its text, the scratch file stays. */
	T_INTEQ(table_scratch(&x, "dev", "sed2", "CREATE TABLE t (a INT"), 0);
	T_INTEQ(repo_table_from_scratch(x.r, &who, "dev", "sed2", "t", &err),
		-EINVAL);
	T_STREQ(table_text(&x, "dev", "t"), new);
	T_CHECK(table_scratch_there(&x, "dev", "sed2"));
	T_INTEQ(staged(&x, "dev"), 0);
	/* No such scratch file: nothing happens. */
	err = (struct cmfs_err)CMFS_ERR_INIT;
	T_INTEQ(repo_table_from_scratch(x.r, &who, "dev", "none", "t", &err),
		-ENOENT);
	T_STREQ(table_text(&x, "dev", "t"), new);

	/* Cut after the staging, before the commit: back as it was. */
	T_INTEQ(table_scratch(&x, "dev", "sed3", old), 0);
	T_INTEQ(store_scratch_stage(repo_store(x.r), "dev", 't', "sed3", "t"), 0);
	T_CHECK(!table_scratch_there(&x, "dev", "sed3"));
	T_INTEQ(staged(&x, "dev"), 1);
	fixture_reopen(&x);
	T_STREQ(table_text(&x, "dev", "t"), new);
	T_CHECK(table_scratch_there(&x, "dev", "sed3"));
	T_INTEQ(staged(&x, "dev"), 0);
	T_CHECK(strstr(buf_str(&x.log), "scratch file sed3 onto table t.sql "
					"was cut short: it was not committed") !=
		NULL);

	/* Cut after the commit, before the scratch file went: it goes. */
	T_INTEQ(table_scratch(&x, "dev", "sed4", new), 0);
	T_INTEQ(store_scratch_stage(repo_store(x.r), "dev", 't', "sed4", "t"), 0);
	fixture_reopen(&x);
	T_STREQ(table_text(&x, "dev", "t"), new);
	T_CHECK(!table_scratch_there(&x, "dev", "sed4"));
	T_INTEQ(staged(&x, "dev"), 0);
	T_CHECK(strstr(buf_str(&x.log), "scratch file sed4 onto table t.sql "
					"was cut short: it was committed") !=
		NULL);
	fixture_close(&x);
}

/* The text of scratch file `name` of tables/ in `env`, or "(none)". */
static const char *scratch_text(struct fixture *x, const char *env,
				const char *name)
{
	static char s[4096];
	ssize_t n = -1;
	int fd;

	if (!store_scratch_open(repo_store(x->r), env, 't', name, O_RDONLY, 0,
				&fd)) {
		n = read(fd, s, sizeof(s) - 1);
		close(fd);
	}
	if (n < 0)
		snprintf(s, sizeof(s), "(none)");
	else
		s[n] = '\0';
	return s;
}

/*
 * rename(2) in tables/ by what the names are, each one step: scratch to
 * scratch, table to table, and a table to a scratch name (dropped, its
 * text left as the scratch file), which a crash cuts into the table or
 * the scratch file, never both.
 */
static void test_table_move(void)
{
	const char *text = "CREATE TABLE t (a INT) WITH ('connector' = 'datagen')";
	const char *u = "CREATE TABLE u (a INT) WITH ('connector' = 'datagen')";
	struct cmfs_err err = CMFS_ERR_INIT;
	struct fixture x;
	int fd;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(table_write(&x, "dev", "t", text), 0);
	T_INTEQ(table_scratch(&x, "dev", "a.tmp", "x"), 0);
	T_INTEQ(repo_table_move(x.r, &who, "dev", "a.tmp", "b.tmp", &err), 0);
	T_STREQ(scratch_text(&x, "dev", "b.tmp"), "x");
	T_CHECK(!table_scratch_there(&x, "dev", "a.tmp"));

	/* A table to a scratch name: dropped, its text left there. */
	T_INTEQ(repo_table_move(x.r, &who, "dev", "t.sql", "t.bak", &err), 0);
	T_STREQ(table_text(&x, "dev", "t"), "(none)");
	T_STREQ(scratch_text(&x, "dev", "t.bak"), text);
	T_INTEQ(staged(&x, "dev"), 0);
	T_CONTAINS(fixture_last_event(&x, "dev"),
		   "action=table-drop table=t result=ok");
	/* And back: the scratch file onto a table of the same name. */
	T_INTEQ(repo_table_move(x.r, &who, "dev", "t.bak", "t.sql", &err), 0);
	T_STREQ(table_text(&x, "dev", "t"), text);
	T_CHECK(!table_scratch_there(&x, "dev", "t.bak"));
	/* No such table: nothing happens. */
	T_ERRNO(repo_table_move(x.r, &who, "dev", "none.sql", "n.bak", &err),
		ENOENT);
	T_CHECK(!table_scratch_there(&x, "dev", "n.bak"));
	T_INTEQ(staged(&x, "dev"), 0);

	/* Cut after the text was staged, before the drop: the table
	 * stays, no scratch file. */
	T_INTEQ(store_scratch_staged_open(repo_store(x.r), "dev", 't', "t",
					  "t.bak", O_WRONLY | O_CREAT, &fd),
		0);
	T_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	fixture_reopen(&x);
	T_STREQ(table_text(&x, "dev", "t"), text);
	T_CHECK(!table_scratch_there(&x, "dev", "t.bak"));
	T_INTEQ(staged(&x, "dev"), 0);

	/* Cut after the drop: the scratch file, no table. */
	T_INTEQ(table_write(&x, "dev", "u", u), 0);
	T_INTEQ(store_scratch_staged_open(repo_store(x.r), "dev", 't', "u",
					  "u.bak", O_WRONLY | O_CREAT, &fd),
		0);
	T_CHECK(write(fd, u, strlen(u)) == (ssize_t)strlen(u));
	close(fd);
	T_INTEQ(repo_table_remove(x.r, &who, "dev", "u", &err), 0);
	fixture_reopen(&x);
	T_STREQ(table_text(&x, "dev", "u"), "(none)");
	T_STREQ(scratch_text(&x, "dev", "u.bak"), u);
	T_INTEQ(staged(&x, "dev"), 0);

	/* Table to table: one change. */
	T_INTEQ(repo_table_move(x.r, &who, "dev", "t.sql", "v.sql", &err),
		-EINVAL); /* its text names t, not v */
	T_STREQ(table_text(&x, "dev", "t"), text);
	fixture_close(&x);
}

/* How many scratch files of artifacts/ in `env` are staged. */
static int staged_art(struct fixture *x, const char *env)
{
	int n = 0;

	store_scratch_staged(repo_store(x->r), env, 'a', count_staged, &n);
	return n;
}

/*
 * A scratch file of artifacts/ renamed into place (rsync) is one change:
 * nothing stays staged after a commit or a refusal, and what a crash
 * leaves staged is settled at the next open: gone when the artifact's
 * latest version has its bytes, else back.
 */
static void test_scratch_commit_atomic(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct stat st;
	struct fixture x;

	setup(&x);
	T_INTEQ(mkenv(&x, "dev"), 0);
	T_INTEQ(scratch_file(&x, "dev", ".a.tmp", "bytes one", 9), 0);
	T_INTEQ(repo_scratch_commit(x.r, &who, "dev", ".a.tmp", "a.txt", &v,
				    &err), 0);
	T_INTEQ(staged_art(&x, "dev"), 0);
	T_ERRNO(store_scratch_stat(repo_store(x.r), "dev", 'a', ".a.tmp", &st),
		ENOENT);
	T_INTEQ(scratch_file(&x, "dev", ".j.tmp", "no zip", 6), 0);
	T_ERRNO(repo_scratch_commit(x.r, &who, "dev", ".j.tmp", "j.jar", &v,
				    &err), EINVAL);
	T_INTEQ(staged_art(&x, "dev"), 0);

	/* Cut before the commit: the scratch file is back. */
	T_INTEQ(scratch_file(&x, "dev", ".b.tmp", "bytes two", 9), 0);
	T_INTEQ(store_scratch_stage(repo_store(x.r), "dev", 'a', ".b.tmp",
				    "a.txt"), 0);
	T_ERRNO(store_scratch_stat(repo_store(x.r), "dev", 'a', ".b.tmp", &st),
		ENOENT);
	fixture_reopen(&x);
	T_INTEQ(store_scratch_stat(repo_store(x.r), "dev", 'a', ".b.tmp", &st),
		0);
	T_STREQ(versions(&x, "dev", "a.txt"), "1,");
	T_INTEQ(staged_art(&x, "dev"), 0);
	T_CONTAINS(buf_str(&x.log), "scratch file .b.tmp onto artifact a.txt "
				    "was cut short: it was not committed");

	/* Cut after the commit: the scratch file goes. */
	T_INTEQ(scratch_file(&x, "dev", ".c.tmp", "bytes one", 9), 0);
	T_INTEQ(store_scratch_stage(repo_store(x.r), "dev", 'a', ".c.tmp",
				    "a.txt"), 0);
	fixture_reopen(&x);
	T_ERRNO(store_scratch_stat(repo_store(x.r), "dev", 'a', ".c.tmp", &st),
		ENOENT);
	T_STREQ(versions(&x, "dev", "a.txt"), "1,");
	T_INTEQ(staged_art(&x, "dev"), 0);
	T_CONTAINS(buf_str(&x.log), "scratch file .c.tmp onto artifact a.txt "
				    "was cut short: it was committed");
	fixture_close(&x);
}

int main(void)
{
	T_RUN(test_scratch_commit_atomic);
	T_RUN(test_table_from_scratch);
	T_RUN(test_table_move);
	T_RUN(test_authorise);
	T_RUN(test_policy_refusals);
	T_RUN(test_policy_rules);
	T_RUN(test_resolved_size);
	T_RUN(test_resolved_stat);
	T_RUN(test_resolved_computed);
	T_RUN(test_scratch_remove);
	T_RUN(test_stat);
	T_RUN(test_env);
	T_RUN(test_upload);
	T_RUN(test_upload_order);
	T_RUN(test_jar_not_zip);
	T_RUN(test_limits);
	T_RUN(test_remove);
	T_RUN(test_rename);
	T_RUN(test_identity);
	T_RUN(test_labels);
	T_RUN(test_labels_jar);
	T_RUN(test_scratch);
	T_RUN(test_refused);
	T_RUN(test_refusals_coalesced);
	T_RUN(test_resolution_once);
	T_RUN(test_retention);
	T_RUN(test_table_rename);
	T_RUN(test_table_refusals);
	T_RUN(test_tables);
	T_RUN(test_reopen);
	T_RUN(test_power_loss);
	T_RUN(test_sync_catalog_only);
	T_RUN(test_sync_close);
	T_RUN(test_orphan_sweep);
	T_RUN(test_unknown_blob_kept);
	T_RUN(test_deleted_blob_swept);
	T_RUN(test_refuse_unknown_store);
	T_RUN(test_reaper);
	T_RUN(test_inline);
	T_RUN(test_inspect_early);
	T_RUN(test_inspect_while_hashing);
	T_RUN(test_inline_budget);
	return T_DONE();
}
