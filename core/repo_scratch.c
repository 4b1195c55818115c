/*
 * repo_scratch.c - scratch files: editors' and tools' temporary files
 * beside artifacts and tables, their labels, and their rename onto an
 * artifact (one change, settled at open after a crash).
 */
#define _GNU_SOURCE
#include "repo_int.h"

/* ---- scratch files ---- */

/* The scratch labels of (env, file), in order, as a pending list. */
static int scratch_pending(struct repo *r, const char *env, const char *file,
			   struct label **out)
{
	struct label *l;
	int rc = 0;

	*out = NULL;
	pthread_mutex_lock(&r->scratch_lock);
	for (l = r->scratch; l && !rc; l = l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, file))
			rc = label_push(out, l->key, l->value);
	pthread_mutex_unlock(&r->scratch_lock);
	return rc;
}

int repo_scratch_commit(struct repo *r, const struct repo_who *who,
			const char *env, const char *scratch,
			const char *name, struct catalog_version *out,
			struct cmfs_err *err)
{
	struct label *pending = NULL;
	char sha[STORE_SHA_HEX];
	struct stat st;
	unsigned char *mem = NULL;
	int src = -1, fd = -1, rc;

	/* Out of artifacts/ until it is settled: a crash in between leaves
	 * it where repo_open() finds it (settle_staged_art()). */
	rc = store_scratch_stage(r->store, env, 'a', scratch, name);
	if (rc)
		return cmfs_err_set(err, rc, "%s: %s", scratch, strerror(-rc));
	rc = store_scratch_staged_open(r->store, env, 'a', name, scratch,
				       O_RDONLY, &src);
	if (rc) {
		rc = cmfs_err_set(err, rc, "%s: %s", scratch, strerror(-rc));
		goto out;
	}
	if (fstat(src, &st)) {
		rc = cmfs_err_set(err, -errno, "%s: %s", scratch,
				  strerror(errno));
		goto out;
	}
	/* Copy (into memory, for an inline blob), so that a writer still
	 * holding the scratch file open can never change the blob. */
	if (fits_inline(r, (uint64_t)st.st_size)) {
		size_t len = (size_t)st.st_size;
		ssize_t n;

		if (!(mem = malloc(len ? len : 1))) {
			rc = cmfs_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		/* Short only if it shrank since its size was taken. */
		if ((n = store_pread_full(src, mem, len, 0)) < 0) {
			rc = cmfs_err_set(err, (int)n, "%s: %s", scratch,
					  strerror((int)-n));
			goto out;
		}
		st.st_size = (off_t)n;
		store_hash_mem(sha, mem, (size_t)n);
	} else if ((rc = store_stage(r->store, &fd, err)) ||
		   (rc = store_copy_fd(src, fd, (uint64_t)st.st_size, err)) ||
		   (rc = store_hash_fd(sha, fd, (uint64_t)st.st_size, err))) {
		goto out;
	}
	if ((rc = scratch_pending(r, env, scratch, &pending)))
		goto out;
	rc = commit_fd(r, who, env, name, fd, mem, (uint64_t)st.st_size, sha,
		       pending, NULL, "upload", out, err);
	if (!rc)
		repo_scratch_label_move(r, env, scratch, NULL);
out:
	/* Committed: the scratch file goes; else it is back as it was. */
	store_scratch_unstage(r->store, env, 'a', name, scratch, rc != 0);
	label_free(pending);
	free(mem);
	if (fd >= 0)
		close(fd);
	if (src >= 0)
		close(src);
	return rc;
}

int repo_scratch_open(struct repo *r, const char *env, char dir,
		      const char *name, int flags, mode_t mode, int *out)
{
	return store_scratch_open(r->store, env, dir, name, flags, mode, out);
}

int repo_scratch_stat(struct repo *r, const char *env, char dir,
		      const char *name, struct stat *st)
{
	return store_scratch_stat(r->store, env, dir, name, st);
}

int repo_scratch_truncate(struct repo *r, const char *env, char dir,
			  const char *name, off_t size)
{
	return store_scratch_truncate(r->store, env, dir, name, size);
}

int repo_scratch_list(struct repo *r, const char *env, char dir,
		      int (*fn)(void *arg, const char *name), void *arg)
{
	return store_scratch_list(r->store, env, dir, fn, arg);
}

int repo_scratch_remove(struct repo *r, const char *env, char dir,
			const char *name)
{
	int rc = store_scratch_unlink(r->store, env, dir, name);

	if (!rc && dir == 'a')
		repo_scratch_label_move(r, env, name, NULL);
	return rc;
}

int repo_statfs(struct repo *r, struct statvfs *out)
{
	return statvfs(store_path(r->store), out) ? -errno : 0;
}

int repo_scratch_label_set(struct repo *r, const char *env,
			   const char *scratch, const char *key,
			   const char *value, struct cmfs_err *err)
{
	struct label *l;
	int rc = label_check(repo_config(r), key, value, strlen(value), err);

	if (rc)
		return rc;
	pthread_mutex_lock(&r->scratch_lock);
	for (l = r->scratch; l; l = l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, scratch) &&
		    !strcmp(l->key, key))
			break;
	if (l) {
		char *v = strdup(value);

		if (v) {
			free(l->value);
			l->value = v;
		} else {
			rc = -ENOMEM;
		}
	} else if (!(l = calloc(1, sizeof(*l))) ||
		   !(l->env = strdup(env)) || !(l->file = strdup(scratch)) ||
		   !(l->key = strdup(key)) || !(l->value = strdup(value))) {
		label_free(l);
		rc = -ENOMEM;
	} else {
		l->next = r->scratch;
		r->scratch = l;
	}
	pthread_mutex_unlock(&r->scratch_lock);
	return rc ? cmfs_err_set(err, rc, "out of memory") : 0;
}

int repo_scratch_label_del(struct repo *r, const char *env,
			   const char *scratch, const char *key)
{
	struct label **p, *l;
	int rc = -ENODATA;

	pthread_mutex_lock(&r->scratch_lock);
	for (p = &r->scratch; (l = *p); p = &l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, scratch) &&
		    !strcmp(l->key, key)) {
			*p = l->next;
			l->next = NULL;
			label_free(l);
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&r->scratch_lock);
	return rc;
}

int repo_scratch_label_get(struct repo *r, const char *env,
			   const char *scratch, const char *key,
			   struct buf *out)
{
	struct label *l;
	int rc = -ENODATA;

	pthread_mutex_lock(&r->scratch_lock);
	for (l = r->scratch; l; l = l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, scratch) &&
		    !strcmp(l->key, key)) {
			rc = buf_adds(out, l->value);
			break;
		}
	pthread_mutex_unlock(&r->scratch_lock);
	return rc;
}

int repo_scratch_label_list(struct repo *r, const char *env,
			    const char *scratch, struct buf *out)
{
	struct label *l;
	int rc = 0;

	pthread_mutex_lock(&r->scratch_lock);
	for (l = r->scratch; l && !rc; l = l->next)
		if (!strcmp(l->env, env) && !strcmp(l->file, scratch))
			rc = buf_printf(out, "user.%s%c", l->key, '\0');
	pthread_mutex_unlock(&r->scratch_lock);
	return rc;
}

void repo_scratch_label_move(struct repo *r, const char *env,
			     const char *from, const char *to)
{
	struct label **p, *l;

	pthread_mutex_lock(&r->scratch_lock);
	for (p = &r->scratch; (l = *p);) {
		if (strcmp(l->env, env) || (from && strcmp(l->file, from))) {
			p = &l->next;
			continue;
		}
		if (to) {
			char *f = strdup(to);

			if (f) {
				free(l->file);
				l->file = f;
			}
			p = &l->next;
			continue;
		}
		*p = l->next;
		l->next = NULL;
		label_free(l);
	}
	pthread_mutex_unlock(&r->scratch_lock);
}
