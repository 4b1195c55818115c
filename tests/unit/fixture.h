/*
 * fixture.h - helpers the unit tests share: a fresh temp dir, a repo over
 * a store in it (and its log), the events log of an environment, an upload
 * in one write, and reading a fixture file.
 *
 * Built once into fixture.o and linked into every unit binary.  Nothing
 * here checks anything: the T_* counters of t.h are per binary, so the
 * checks stay in the tests.  A setup step that fails prints why and exits
 * 2, as a test's own setup did.
 */
#ifndef CMFS_FIXTURE_H
#define CMFS_FIXTURE_H

#include <stddef.h>

#include "buf.h"
#include "catalog.h"
#include "config.h"
#include "err.h"
#include "repo.h"
#include "store.h"

#define FIXTURE_MNT "/mnt/cmfs" /* the mount point tests give a repo */

/* A repo whose store lives in a fresh temp dir. */
struct fixture {
	char tmp[64];	   /* the mkdtemp dir, removed by fixture_close */
	char store[128];   /* <tmp>/store */
	struct config cfg; /* the defaults, store_path = store */
	const char *mnt;   /* borrowed: where the repo is mounted */
	struct repo *r;
	struct buf log; /* the daemon's log lines (if log.cap) */
};

/* mkdtemp "/tmp/cmfs-test-<name>-XXXXXX" into `out` (n bytes), or exit 2. */
void fixture_tmpdir(char *out, size_t n, const char *name);

/*
 * Fill `f`: a temp dir named after `name`, the default config with the
 * store in it and `prefix` (may be NULL) as sql.jar_path_prefix, and the
 * repo opened at `mnt` (borrowed: it must outlive `f`).  With `log_cap`
 * > 0 the daemon's log lines go to f->log (capped at log_cap); with 0
 * there is no log.  Release with fixture_close().
 */
void fixture_open(struct fixture *f, const char *name, const char *prefix,
		  const char *mnt, size_t log_cap);

/* A repo_open() log callback: appends each line and a newline to the
 * struct buf `arg`. */
void fixture_log(void *arg, int level, const char *line);

/* Close f's repo (if open) and open it again: the same store, mount
 * point and log. */
void fixture_reopen(struct fixture *f);

/* Close the repo (if open), free the config and log, remove the temp dir. */
void fixture_close(struct fixture *f);

/*
 * Upload `len` bytes `data` as `name` of `env` in one write at offset 0,
 * as `who`; the new version into *v (may be NULL).  0 or -errno, the
 * reason in `err`.
 */
int fixture_upload(struct fixture *f, const struct repo_who *who,
		   const char *env, const char *name, const void *data,
		   size_t len, struct catalog_version *v, struct cmfs_err *err);

/* The whole events log of `env` (a static buffer, valid until the next
 * call of fixture_events or fixture_last_event). */
const char *fixture_events(struct fixture *f, const char *env);

/* The last line of the events log of `env`, without its newline (a
 * static buffer, valid until the next call). */
const char *fixture_last_event(struct fixture *f, const char *env);

/* The bytes of file `path` (malloc'd, NUL-terminated; the length into
 * *len), or NULL after a "FAIL: <why>" line on stderr: a missing fixture
 * (run from outside tests/, or not built) fails the binary's tests. */
char *fixture_read(const char *path, size_t *len, const char *why);

/* fixture_read() of tests/fixtures/jars/<name> (run with cwd = tests/). */
char *fixture_jar(const char *name, size_t *len, const char *why);

/* This process's count `field` of /proc/self/io ("syscr": read calls,
 * "syscw": write calls), or -1 where there is none. */
long long fixture_io(const char *field);

/* SHA-256 of `len` bytes `data`, streamed in one update, into `hex`. */
void fixture_sha(char hex[STORE_SHA_HEX], const void *data, size_t len);

#endif
