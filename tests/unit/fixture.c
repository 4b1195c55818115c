/*
 * fixture.c - the unit tests' shared setup (see fixture.h): the temp dir
 * and repo that test_repo, test_resolve, test_fsck and test_export each
 * built alike, the events readers of test_repo and test_resolve, and the
 * reading of fixture files.  The checks stay in the tests.
 */
#define _GNU_SOURCE
#include "fixture.h"

#include "t.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

void fixture_tmpdir(char *out, size_t n, const char *name)
{
	snprintf(out, n, "/tmp/cmfs-test-%s-XXXXXX", name);
	if (!mkdtemp(out)) {
		perror("mkdtemp");
		exit(2);
	}
}

void fixture_log(void *arg, int level, const char *line)
{
	struct buf *b = arg;

	(void)level;
	buf_adds(b, line);
	buf_addc(b, '\n');
}

/* Open f->r over f->cfg at f->mnt, logging to f->log if it has a cap. */
static void open_repo(struct fixture *f)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int logging = f->log.cap > 0;

	if (repo_open(&f->r, &f->cfg, f->mnt, logging ? fixture_log : NULL,
		      logging ? &f->log : NULL, &err)) {
		fprintf(stderr, "repo_open: %s\n", cmfs_err_msg(&err));
		exit(2);
	}
}

void fixture_open(struct fixture *f, const char *name, const char *prefix,
		  const char *mnt, size_t log_cap)
{
	memset(f, 0, sizeof(*f));
	fixture_tmpdir(f->tmp, sizeof(f->tmp), name);
	snprintf(f->store, sizeof(f->store), "%s/store", f->tmp);
	f->mnt = mnt;
	buf_init(&f->log, log_cap);
	if (config_defaults(&f->cfg))
		exit(2);
	free(f->cfg.store_path);
	f->cfg.store_path = strdup(f->store);
	if (prefix)
		f->cfg.sql.jar_path_prefix = strdup(prefix);
	if (!f->cfg.store_path || (prefix && !f->cfg.sql.jar_path_prefix))
		exit(2);
	open_repo(f);
}

void fixture_reopen(struct fixture *f)
{
	repo_close(f->r);
	f->r = NULL;
	open_repo(f);
}

void fixture_close(struct fixture *f)
{
	repo_close(f->r);
	config_release(&f->cfg);
	buf_release(&f->log);
	t_rmtree(f->tmp);
}

int fixture_upload(struct fixture *f, const struct repo_who *who,
		   const char *env, const char *name, const void *data,
		   size_t len, struct catalog_version *v, struct cmfs_err *err)
{
	struct repo_upload *u = NULL;
	int rc = repo_upload_begin(&u, f->r, env, name, 1, err);

	if (!rc && len && repo_upload_write(u, data, len, 0) != (ssize_t)len)
		rc = -EIO;
	if (!rc)
		rc = repo_upload_commit(u, who, v, err);
	repo_upload_free(u);
	return rc;
}

const char *fixture_events(struct fixture *f, const char *env)
{
	static char *s;
	struct buf b = BUF_INIT(1 << 24);
	uint64_t n = 0;

	free(s);
	repo_events_size(f->r, env, &n);
	repo_events_read(f->r, env, 0, (size_t)n, &b);
	s = buf_take(&b, NULL);
	return s;
}

const char *fixture_last_event(struct fixture *f, const char *env)
{
	static char line[4096];
	const char *all = fixture_events(f, env), *p;
	size_t n = strlen(all);

	line[0] = '\0';
	if (!n)
		return line;
	if (all[n - 1] == '\n')
		n--;
	for (p = all + n; p > all && p[-1] != '\n'; p--)
		;
	snprintf(line, sizeof(line), "%.*s", (int)(all + n - p), p);
	return line;
}

int t_pass, t_fail;

char *fixture_read(const char *path, size_t *len, const char *why)
{
	char *b = t_slurp(path, len);

	if (!b) {
		t_fail++;
		fprintf(stderr,
			"FAIL: %s: no %s (run from tests/ with the "
			"fixtures built)\n",
			why, path);
	}
	return b;
}

char *fixture_jar(const char *name, size_t *len, const char *why)
{
	char path[256];

	snprintf(path, sizeof(path), "fixtures/jars/%s", name);
	return fixture_read(path, len, why);
}

long long fixture_io(const char *field)
{
	FILE *f = fopen("/proc/self/io", "r");
	size_t n = strlen(field);
	char line[128];
	long long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

void fixture_sha(char hex[STORE_SHA_HEX], const void *data, size_t len)
{
	struct store_hash *h = NULL;

	if (store_hash_new(&h))
		exit(2);
	store_hash_update(h, data, len);
	store_hash_final(h, hex);
	store_hash_free(h);
}
