/*
 * repo_upload.c - uploads: an artifact's bytes written, inspected, their
 * labels checked against what the JAR offers, and committed as a new
 * version.
 *
 * Small uploads: bytes that fit in [store] inline_max (64 KiB by default)
 * are held in memory while written (hold(), HELD_MAX for all uploads
 * together) and commit as an inline blob, a row of the catalog written in
 * the version's own transaction (blob.h): no staging file and no blob file
 * are made: making a file (its inode, its link, its directory entry)
 * costs more than all the rest of a small upload.  An upload that
 * outgrows the limit, or finds the memory taken, is written to a staging
 * file.
 */
#define _GNU_SOURCE
#include "repo_int.h"

/* ---- labels and what a JAR offers ---- */

void label_free(struct label *l)
{
	while (l) {
		struct label *next = l->next;

		free(l->env);
		free(l->file);
		free(l->key);
		free(l->value);
		free(l);
		l = next;
	}
}

/*
 * Check that the factories of `rep` offer a factory of kind `type` (may be
 * NULL) with identifier `ident` (may be NULL; an unknown identifier
 * matches).  -EINVAL naming what the JAR does offer.
 */
static int check_offer(const char *art, const struct jar_report *rep,
		       const char *type, const char *ident,
		       struct cmfs_err *err)
{
	struct shortlist offers = SHORTLIST_INIT(800);
	size_t i;
	int rc;

	if (!type && !ident)
		return 0;
	for (i = 0; i < rep->nfactories; i++) {
		const struct jar_factory *f = &rep->factories[i];

		if (type && strcmp(jar_kind_name(f->kind), type))
			continue;
		if (ident && f->identifier && strcmp(f->identifier, ident))
			continue;
		return 0;
	}
	for (i = 0; i < rep->nfactories; i++)
		shortlist_add(&offers, "%s '%s'",
			      jar_kind_name(rep->factories[i].kind),
			      rep->factories[i].identifier
				      ? rep->factories[i].identifier
				      : "unknown");
	if (!rep->nfactories)
		rc = cmfs_err_set(err, -EINVAL,
				  "%s offers no factory (%s); no %s factory "
				  "'%s'", art,
				  rep->error ? rep->error : "none listed",
				  type ? type : "", ident ? ident : "");
	else
		rc = cmfs_err_set(err, -EINVAL,
				  "%s offers %s; no %s factory '%s'", art,
				  shortlist_str(&offers, ""),
				  type ? type : "any", ident ? ident : "");
	shortlist_release(&offers);
	return rc;
}

/* Syntax and value rules of one label. */
int label_check(const struct config *cfg, const char *key,
		       const char *value, size_t len, struct cmfs_err *err)
{
	int rc = name_label_key_check(key, err);

	if (rc)
		return rc;
	if (len > cfg->limits.xattr_size)
		return cmfs_err_set(err, -EFBIG,
				    "label %s: value of %zu bytes is over the "
				    "limit of %llu", key, len,
				    (unsigned long long)cfg->limits.xattr_size);
	if ((rc = name_label_value_check(key, value, len, err)))
		return rc;
	if (!strcmp(key, NAME_LABEL_TYPE) && strcmp(value, "connector") &&
	    strcmp(value, "format"))
		return cmfs_err_set(err, -EINVAL,
				    "label %s takes connector or format, not "
				    "'%.64s'", key, value);
	return 0;
}

/* The value label `key` will have after `pending`: 1 if it is changed. */
static int label_pending(const struct label *pending, const char *key,
			 const char **out)
{
	const struct label *l;
	int found = 0;

	for (l = pending; l; l = l->next)
		if (!strcmp(l->key, key)) {
			*out = l->value;
			found = 1;
		}
	return found;
}

/* What the checks of a label change need of an artifact's labels now. */
struct labels_now {
	const struct label *pending;
	uint64_t kept;	    /* labels that `pending` leaves as they are */
	char *type, *ident; /* the sql-artifact labels' values, or NULL */
};

/* catalog_label_list callback: one label the artifact carries now. */
static int label_seen(void *arg, const char *key, const char *value)
{
	struct labels_now *s = arg;
	const char *v;
	char **slot = !strcmp(key, NAME_LABEL_TYPE)    ? &s->type
		      : !strcmp(key, NAME_LABEL_IDENT) ? &s->ident
						       : NULL;

	if (!label_pending(s->pending, key, &v))
		s->kept++;
	return slot && !(*slot = strdup(value)) ? -ENOMEM : 0;
}

/*
 * Check the labels that artifact `art_id` (0: new) will carry after
 * `pending`: no more of them than [limits] labels, and sql-artifact labels
 * that inspection `rep` (NULL: not a JAR, no check) bears out.  One pass
 * over the labels it carries now: a label's commit reads no more.
 */
int check_labels(struct repo *r, const char *name, int64_t art_id,
			const struct label *pending,
			const struct jar_report *rep, struct cmfs_err *err)
{
	struct labels_now s = {.pending = pending};
	const struct label *l, *later;
	const char *t, *i;
	uint64_t n;
	int rc = 0;

	if (art_id) {
		rc = catalog_label_list(r->cat, art_id, label_seen, &s, err);
		if (rc == -ENOMEM)
			rc = cmfs_err_set(err, rc, "out of memory");
		if (rc)
			goto out;
	}
	/* Each key that `pending` names ends as its last change says. */
	for (n = s.kept, l = pending; l; l = l->next) {
		for (later = l->next; later; later = later->next)
			if (!strcmp(later->key, l->key))
				break;
		n += !later && l->value;
	}
	if (n > repo_config(r)->limits.labels) {
		rc = cmfs_err_set(
			err, -EDQUOT,
			"%s: %llu labels is over the limit of %llu", name,
			(unsigned long long)n,
			(unsigned long long)repo_config(r)->limits.labels);
		goto out;
	}
	t = s.type;
	i = s.ident;
	label_pending(pending, NAME_LABEL_TYPE, &t);
	label_pending(pending, NAME_LABEL_IDENT, &i);
	if (rep)
		rc = check_offer(name, rep, t, i, err);
out:
	free(s.type);
	free(s.ident);
	return rc;
}

/* Apply `pending` to artifact `art_id`; adds "labels=..." to the event. */
static int apply_labels(struct repo *r, int64_t art_id,
			const struct label *pending, struct event *ev,
			struct cmfs_err *err)
{
	const struct label *l;
	int rc = 0;

	for (l = pending; l && !rc; l = l->next) {
		if (l->value)
			rc = catalog_label_set(r->cat, art_id, l->key,
					       l->value, err);
		else if ((rc = catalog_label_del(r->cat, art_id, l->key,
						 err)) == -ENODATA)
			rc = 0;
		if (!rc)
			event_add(ev, l->value ? "label" : "unlabel",
				  l->key);
	}
	return rc;
}

/*
 * The inspection of blob `sha`, staged in `fd`: the catalog's, or made
 * now (*fresh).  Held at `mem` (size bytes, a small JAR): always made now,
 * which costs less than asking the catalog first (a read transaction of
 * its own); the commit puts it over a row there may be.
 */
static int inspect(struct repo *r, const char *name, const char *sha, int fd,
		   const void *mem, uint64_t size, struct jar_report **out,
		   int *fresh, struct cmfs_err *err)
{
	struct jar_limits lim;
	struct cmfs_err e2 = CMFS_ERR_INIT;
	uint64_t cost;
	int rc;

	*fresh = 0;
	if (!mem && !catalog_insp_get(r->cat, sha, out, NULL))
		return 0;
	jar_limits_default(&lim);
	cost = mem ? jar_cost_mem(mem, (size_t)size) : jar_cost_fd(fd);
	budget_take(&r->insp, cost);
	rc = mem ? jar_inspect_mem(out, mem, (size_t)size, &lim, &e2)
		 : jar_inspect_fd(out, fd, &lim, &e2);
	budget_give(&r->insp, cost);
	if (rc == -EINVAL)
		return cmfs_err_set(err, rc,
				    "%s is not a valid JAR (zip archive): %s",
				    name, cmfs_err_msg(&e2));
	if (rc)
		return cmfs_err_set(err, rc, "%s: %s", name,
				    cmfs_err_msg(&e2));
	*fresh = 1;
	return 0;
}

/*
 * Before blob `sha` is linked into the store: unless a version refers to
 * it already, list it as loose, so that a crash before its version
 * commits leaves a blob the next mount knows it may free.  Under gc_lock.
 */
static int loose_first(struct repo *r, const char *sha, struct cmfs_err *err)
{
	uint64_t refs;
	int rc = catalog_blob_refs(r->cat, sha, &refs, err);

	if (!rc && !refs)
		rc = catalog_loose_add(r->cat, sha, err);
	return rc;
}

/*
 * The commit of every upload: bytes [0, size) with SHA-256 `sha`, held
 * at `mem` (an inline blob, in this transaction) or in staging file `fd`
 * (a blob file, linked before it), become the next version of `name` in
 * `env`, with label changes `pending`.  *early (NULL or empty: none), an
 * inspection of those bytes made before, is taken instead of one made
 * here.  *out gets the latest version afterwards.
 */
int commit_fd(struct repo *r, const struct repo_who *who,
		     const char *env, const char *name, int fd, const void *mem,
		     uint64_t size, const char *sha,
		     const struct label *pending, struct jar_report **early,
		     const char *action, struct catalog_version *out,
		     struct cmfs_err *err)
{
	const struct config *cfg = repo_config(r);
	struct jar_report *rep = NULL;
	struct catalog_env e;
	struct catalog_artifact a;
	struct catalog_version v;
	struct event ev;
	uint64_t n, total;
	int64_t art_id = 0;
	void *held = NULL;
	int rc, fresh = 0, same = 0, put_inline;

	event_init(&ev, clock_now_ns(), who->uid, env, action);
	event_add(&ev, "artifact", name);
	/*
	 * A blob lives in one place.  Bytes small enough to be inline are,
	 * whether they were held in memory or, when the memory for uploads
	 * was taken (HELD_MAX: some 256 small uploads at once) or they came
	 * from a scratch file, written to a file: with both kinds at once
	 * the same bytes ended up both a file and a row.
	 */
	if (!mem && fd >= 0 && fits_inline(r, size)) {
		held = malloc(size ? (size_t)size : 1);
		if (held && store_pread_full(fd, held, (size_t)size, 0) ==
				    (ssize_t)size)
			mem = held;
	}
	rc = name_artifact_check(name, err);
	if (!rc && size > cfg->limits.artifact_size)
		rc = cmfs_err_set(err, -EFBIG,
				  "%s: %llu bytes is over the artifact size "
				  "limit of %llu", name,
				  (unsigned long long)size,
				  (unsigned long long)cfg->limits.artifact_size);
	if (!rc && name_is_jar(name) && early && *early) {
		rep = *early; /* of these very bytes */
		*early = NULL;
		fresh = 1;
	} else if (!rc && name_is_jar(name)) {
		rc = inspect(r, name, sha, fd, mem, size, &rep, &fresh, err);
	}
	if (rc)
		goto refused;

	store_reserve_take(r->store);
	pthread_mutex_lock(&r->gc_lock);
	if (!mem)
		rc = loose_first(r, sha, err);
	if (!rc && !mem)
		rc = store_blob_commit(r->store, fd, sha, size, !r->batch, err);
	if (!rc)
		rc = begin(r, err);
	if (rc) {
		pthread_mutex_unlock(&r->gc_lock);
		goto refused;
	}
	rc = env_get(r, env, &e, err);
	if (!rc) {
		rc = catalog_art_get(r->cat, e.id, name, &a, err);
		if (rc == -ENOENT) {
			rc = catalog_art_count(r->cat, e.id, &n, err);
			if (!rc && n >= cfg->limits.artifacts_per_env)
				rc = cmfs_err_set(
					err, -EDQUOT,
					"%s: environment %s holds %llu "
					"artifacts, the limit", name, env,
					(unsigned long long)n);
		} else if (!rc) {
			art_id = a.id;
			same = !strcmp(a.latest.sha256, sha);
		}
	}
	if (!rc && !same && cfg->limits.store_size &&
	    !catalog_blob_refs(r->cat, sha, &n, err) && !n &&
	    !(rc = catalog_blob_total(r->cat, &total, err)) &&
	    total + size > cfg->limits.store_size)
		rc = cmfs_err_set(err, -EDQUOT,
				  "%s: the store holds %llu bytes; %llu more "
				  "is over its limit of %llu",
				  name, (unsigned long long)total,
				  (unsigned long long)size,
				  (unsigned long long)cfg->limits.store_size);
	if (!rc)
		rc = check_labels(r, name, art_id, pending, rep, err);
	if (!rc && !art_id)
		rc = catalog_art_add(r->cat, e.id, name, &art_id, err);
	/* The inspection first: the version names its row as it goes in
	 * (after, the row would be written twice). */
	if (!rc && fresh)
		rc = catalog_insp_put(r->cat, sha, rep, err);
	/* ... and bytes already a file (stored before inline blobs, or
	 * with another inline_max) stay that file. */
	put_inline = !rc && !same && mem &&
		     (catalog_keeps_blobs(r->cat) ||
		      !store_blob_exists(r->store, sha));
	if (put_inline)
		rc = catalog_inline_put(r->cat, sha, mem, (size_t)size, err);
	/* A catalog that keeps blobs has the bytes before the version. */
	if (!rc && !same && !mem && catalog_keeps_blobs(r->cat))
		rc = catalog_blob_put(r->cat, sha, fd, size, err);
	if (!rc && same)
		v = a.latest;
	else if (!rc)
		rc = catalog_ver_add(r->cat, art_id, sha, size, clock_now_ns(),
				     who->uid, &v, err);
	if (!rc && !same && !mem && r->batch)
		rc = catalog_unsynced_add(r->cat, sha, err);
	if (!rc)
		rc = apply_labels(r, art_id, pending, &ev, err);
	if (!rc) {
		event_addf(&ev, "version", "%lld", (long long)v.n);
		event_addf(&ev, "size", "%llu", (unsigned long long)size);
		event_add(&ev, "sha256", sha);
		if (same)
			event_add(&ev, "unchanged", "yes");
		if (rep && rep->error)
			event_add(&ev, "inspection", rep->error);
		record(r, &ev, env, 0, NULL);
	}
	rc = end(r, rc, err);
	if (rc && !mem) {
		/* The blob may be one nothing refers to now. */
		uint64_t refs;

		if (!catalog_blob_refs(r->cat, sha, &refs, NULL) && !refs)
			store_blob_unlink(r->store, sha);
	}
	pthread_mutex_unlock(&r->gc_lock);
	if (!rc && !mem && catalog_keeps_blobs(r->cat))
		store_blob_trim(r->store, NULL); /* a new copy here */
	if (!rc && out)
		*out = v;
refused:
	if (rc)
		record(r, &ev, rc == -ENOENT ? NULL : env, rc, err);
	jar_report_free(rep);
	event_release(&ev);
	free(held);
	return rc;
}

/* ---- uploads ---- */

int repo_upload_begin(struct repo_upload **out, struct repo *r,
		      const char *env, const char *name, int truncate,
		      struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct repo_upload *u;
	int rc;

	*out = NULL;
	u = calloc(1, sizeof(*u));
	if (!u || store_hash_new(&u->hash)) {
		free(u);
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	}
	u->r = r;
	u->fd = -1;
	snprintf(u->env, sizeof(u->env), "%s", env);
	snprintf(u->name, sizeof(u->name), "%s", name);
	rc = env_get(r, env, &e, err);
	if (!rc && !truncate &&
	    !catalog_art_get(r->cat, e.id, name, &a, NULL)) {
		memcpy(u->base, a.latest.sha256, STORE_SHA_HEX);
		u->size = a.latest.size;
		u->hash_broken = 1; /* the copied bytes are not hashed */
	}
	if (rc) {
		repo_upload_free(u);
		return rc;
	}
	if (truncate)
		u->dirty = 1; /* O_TRUNC alone makes an empty version */
	*out = u;
	return 0;
}

/* A blob of `size` bytes is to be inline ([store] inline_max; 0: none). */
int fits_inline(const struct repo *r, uint64_t size)
{
	uint64_t max = repo_config(r)->inline_max;

	return max && size <= max;
}

/* Give back the memory an upload held its bytes in. */
static void let_go(struct repo_upload *u)
{
	if (!u->mem)
		return;
	__atomic_sub_fetch(&u->r->held, u->cap, __ATOMIC_RELAXED);
	free(u->mem);
	u->mem = NULL;
	u->cap = 0;
}

/*
 * Room in memory for the upload's first `need` bytes, the new ones zero:
 * 0, or -ENOSPC when they are not to be held in memory (over [store]
 * inline_max, or over HELD_MAX with what other uploads hold).
 */
int hold(struct repo_upload *u, uint64_t need)
{
	uint64_t max = repo_config(u->r)->inline_max;
	size_t cap;
	unsigned char *p;

	if (need <= u->cap && u->mem)
		return 0;
	if (!fits_inline(u->r, need))
		return -ENOSPC;
	/* Whole pages, doubling, never past inline_max. */
	cap = u->cap ? 2 * u->cap : 4096;
	while (cap < need)
		cap *= 2;
	if (cap > max)
		cap = (size_t)max;
	if (__atomic_add_fetch(&u->r->held, cap - u->cap, __ATOMIC_RELAXED) >
	    HELD_MAX) {
		__atomic_sub_fetch(&u->r->held, cap - u->cap, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	p = realloc(u->mem, cap ? cap : 1);
	if (!p) {
		__atomic_sub_fetch(&u->r->held, cap - u->cap, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	memset(p + u->cap, 0, cap - u->cap);
	u->mem = p;
	u->cap = cap;
	return 0;
}

/* Give the upload a staging file holding its bytes (from base or mem). */
static int stage(struct repo_upload *u)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	ssize_t n;
	int src, rc;

	if (u->fd >= 0)
		return 0;
	rc = store_stage(u->r->store, &u->fd, &err);
	if (!rc && u->base[0]) {
		rc = blob_open(u->r->store, u->r->cat, u->base, u->size, &src,
			       &err);
		/* The version it copies has lost its bytes: damage. */
		if (rc == -ENOENT)
			rc = -EIO;
		if (!rc) {
			rc = store_copy_fd(src, u->fd, u->size, &err);
			close(src);
		}
	} else if (!rc && u->size &&
		   (n = pwrite(u->fd, u->mem, u->size, 0)) !=
			   (ssize_t)u->size) {
		rc = n < 0 ? -errno : -EIO;
		cmfs_err_set(&err, rc, "staging file: %s", strerror(-rc));
	}
	if (rc) {
		repo_log(u->r, LOG_ERR, "upload of %s: %s", u->name,
			 cmfs_err_msg(&err));
		if (u->fd >= 0)
			close(u->fd);
		u->fd = -1;
		return rc;
	}
	u->base[0] = '\0';
	let_go(u);
	staged(u->r);
	return 0;
}

/*
 * Make the upload's bytes ready to be read or changed up to offset `end`:
 * in memory while they fit (a version it started from read in), else in
 * the staging file.
 */
int ready(struct repo_upload *u, uint64_t end)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	uint64_t need = end > u->size ? end : u->size;
	int rc;

	if (u->fd >= 0)
		return 0;
	if (hold(u, need))
		return stage(u);
	if (u->base[0]) {
		rc = blob_read(u->r->store, u->r->cat, u->base, u->size, u->mem,
			       &err);
		if (rc) {
			repo_log(u->r, LOG_ERR, "upload of %s: %s", u->name,
				 cmfs_err_msg(&err));
			return rc == -ENOENT ? -EIO : rc;
		}
		u->base[0] = '\0';
	}
	return 0;
}

/* The bytes change: an inspection made of them before is of no use. */
static void drop_early(struct repo_upload *u)
{
	jar_report_free(u->early);
	u->early = NULL;
}

/*
 * 1 when `len` bytes at `p` end as a zip archive does: an end of central
 * directory record whose comment runs exactly to the end, and that the
 * last write, bytes [from, to), wrote part of (a file written a few bytes
 * at a time is searched a few bytes at a time).  Only a hint: the
 * inspection judges.
 */
static int ends_like_zip(const unsigned char *p, uint64_t len, uint64_t from,
			 uint64_t to)
{
	uint64_t i, lo = len > 22 + 0xffff ? len - 22 - 0xffff : 0;
	uint64_t hi = len - 22; /* the last place a record can start */

	if (len < 22 || !to)
		return 0;
	if (from > 21 && from - 21 > lo)
		lo = from - 21;
	if (to - 1 < hi)
		hi = to - 1;
	for (i = hi + 1; i-- > lo;)
		if (p[i] == 'P' && p[i + 1] == 'K' && p[i + 2] == 5 &&
		    p[i + 3] == 6 &&
		    (uint64_t)(p[i + 20] | p[i + 21] << 8) == len - i - 22)
			return 1;
	return 0;
}

/*
 * A small upload is one write (cp), and its close comes only after that
 * write's reply: the client wakes, reads the end of its input, and
 * closes.  Inspecting the bytes in that gap, instead of at the commit,
 * takes the inspection out of the close's wait: the request loop reads
 * the close as soon as this is done.
 */
int repo_upload_inspect_early(struct repo_upload *u)
{
	struct jar_limits lim;
	struct jar_report *rep = NULL;
	struct cmfs_err e2 = CMFS_ERR_INIT;
	uint64_t cost;

	if (u->early || !u->mem || u->fd >= 0 || u->failed || !u->dirty ||
	    !name_is_jar(u->name) ||
	    !ends_like_zip(u->mem, u->size, u->wrote_from, u->wrote_to))
		return u->early != NULL;
	/* Early only when the inspections' memory allows it now. */
	cost = jar_cost_mem(u->mem, (size_t)u->size);
	if (!budget_try(&u->r->insp, cost))
		return 0;
	jar_limits_default(&lim);
	if (!jar_inspect_mem(&rep, u->mem, (size_t)u->size, &lim, &e2))
		u->early = rep;
	else
		jar_report_free(rep); /* the commit tries again, says why */
	budget_give(&u->r->insp, cost);
	cmfs_err_clear(&e2);
	return u->early != NULL;
}

ssize_t repo_upload_write(struct repo_upload *u, const void *data,
			  size_t size, off_t off)
{
	uint64_t end = (uint64_t)off + size;
	ssize_t n;
	int rc;

	if (off < 0)
		return -EINVAL;
	drop_early(u);
	if (end > repo_config(u->r)->limits.artifact_size)
		return u->failed = -EFBIG;
	if ((rc = ready(u, end)))
		return u->failed = rc;
	if (u->fd < 0) {
		memcpy(u->mem + off, data, size);
		n = (ssize_t)size;
	} else if ((n = pwrite(u->fd, data, size, off)) < 0) {
		return u->failed = -errno;
	}
	if ((uint64_t)off == u->hashed && !u->hash_broken) {
		u->hashed += (uint64_t)n;
		if (u->pipe) {
			store_pipe_feed(u->pipe, u->hashed);
		} else {
			store_hash_update(u->hash, data, (size_t)n);
			/*
			 * A big upload: hash aside.  With sync = close its
			 * writeback starts there too (the commit's fsync
			 * waits for it); with batch, the sync after the
			 * commit writes it: started during the upload, it
			 * would only take the CPU that cp and the hash
			 * want.
			 */
			if (u->hashed >= PIPE_FROM && u->fd >= 0 &&
			    !store_pipe_new(&u->pipe, u->fd, u->hash, u->hashed,
					    !u->r->batch))
				u->hash = NULL;
		}
	} else if ((uint64_t)off < u->hashed || (uint64_t)off > u->hashed) {
		u->hash_broken = 1;
	}
	if ((uint64_t)off + (uint64_t)n > u->size)
		__atomic_store_n(&u->size, (uint64_t)off + (uint64_t)n,
				 __ATOMIC_RELAXED);
	u->wrote_from = (uint64_t)off;
	u->wrote_to = (uint64_t)off + (uint64_t)n;
	__atomic_store_n(&u->dirty, 1, __ATOMIC_RELAXED);
	return n;
}

ssize_t repo_upload_read(struct repo_upload *u, void *data, size_t size,
			 off_t off)
{
	ssize_t n;
	int rc;

	if ((rc = ready(u, 0)))
		return rc;
	if ((uint64_t)off >= u->size)
		return 0;
	if (size > u->size - (uint64_t)off)
		size = (size_t)(u->size - (uint64_t)off);
	if (u->fd < 0) {
		memcpy(data, u->mem + off, size);
		return (ssize_t)size;
	}
	n = pread(u->fd, data, size, off);
	return n < 0 ? -errno : n;
}

int repo_upload_truncate(struct repo_upload *u, off_t size)
{
	int rc;

	if (size < 0)
		return -EINVAL;
	if ((uint64_t)size > repo_config(u->r)->limits.artifact_size)
		return -EFBIG;
	if ((uint64_t)size == u->size && (u->fd >= 0 || u->mem))
		return 0;
	drop_early(u);
	if ((rc = ready(u, (uint64_t)size)))
		return rc;
	if (u->fd < 0 && (uint64_t)size < u->size)
		/* What a later extension shows must be zeros again. */
		memset(u->mem + size, 0, (size_t)(u->size - (uint64_t)size));
	else if (u->fd >= 0 && ftruncate(u->fd, size))
		return -errno;
	if ((uint64_t)size < u->hashed || (uint64_t)size > u->size)
		u->hash_broken = 1;
	__atomic_store_n(&u->size, (uint64_t)size, __ATOMIC_RELAXED);
	__atomic_store_n(&u->dirty, 1, __ATOMIC_RELAXED);
	return 0;
}

uint64_t repo_upload_size(const struct repo_upload *u)
{
	return __atomic_load_n(&u->size, __ATOMIC_RELAXED);
}

int repo_upload_doomed(const struct repo_upload *u)
{
	return u->dirty && !u->size && name_is_jar(u->name) ? -EINVAL : 0;
}

int repo_upload_dirty(const struct repo_upload *u)
{
	return __atomic_load_n(&u->dirty, __ATOMIC_RELAXED);
}

/* Append a label change to a list (value NULL = remove). */
int label_push(struct label **list, const char *key,
		      const char *value)
{
	struct label *l = calloc(1, sizeof(*l)), **tail;

	if (!l)
		return -ENOMEM;
	l->key = strdup(key);
	l->value = value ? strdup(value) : NULL;
	if (!l->key || (value && !l->value)) {
		label_free(l);
		return -ENOMEM;
	}
	for (tail = list; *tail; tail = &(*tail)->next)
		;
	*tail = l;
	return 0;
}

int repo_upload_label(struct repo_upload *u, const char *key,
		      const char *value, struct cmfs_err *err)
{
	int rc = 0;

	if (value)
		rc = label_check(repo_config(u->r), key, value, strlen(value),
				 err);
	if (!rc && label_push(&u->pending, key, value))
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
	if (!rc)
		__atomic_store_n(&u->dirty, 1, __ATOMIC_RELAXED);
	return rc;
}

int repo_upload_label_get(const struct repo_upload *u, const char *key,
			  const char **out)
{
	return label_pending(u->pending, key, out);
}

/* Look up artifact `name` of `env` outside a transaction. */
int art_find(struct repo *r, const char *env, const char *name,
		    struct catalog_artifact *a)
{
	struct catalog_env e;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	return rc ? rc : catalog_art_get(r->cat, e.id, name, a, NULL);
}

/*
 * A large JAR's close: the thread hashing it aside (the pipe) is still
 * behind the last write, and the inspection, the longer of the two,
 * would wait for the hash only to look its result up by SHA-256.  Inspect the staged bytes now, while the hash
 * ends, unless the artifact's latest version has this very size: then
 * they are likely the same bytes (cp of the same JAR again), and the
 * look-up after the hash spares the inspection.  The report, or NULL
 * (the commit inspects again and says why).
 */
static struct jar_report *inspect_while_hashing(struct repo_upload *u)
{
	struct jar_limits lim;
	struct jar_report *rep = NULL;
	struct catalog_artifact a;
	struct cmfs_err e2 = CMFS_ERR_INIT;
	uint64_t cost;

	if (!u->pipe || u->fd < 0 || !name_is_jar(u->name))
		return NULL;
	if (!art_find(u->r, u->env, u->name, &a) && a.latest.size == u->size)
		return NULL;
	cost = jar_cost_fd(u->fd);
	if (!budget_try(&u->r->insp, cost))
		return NULL; /* the commit inspects, when memory allows */
	jar_limits_default(&lim);
	if (jar_inspect_fd(&rep, u->fd, &lim, &e2)) {
		jar_report_free(rep);
		rep = NULL;
	}
	budget_give(&u->r->insp, cost);
	cmfs_err_clear(&e2);
	return rep;
}

/* The refusal of upload `u` before its commit, written to events. */
static void upload_refused(struct repo_upload *u, const struct repo_who *who,
			   int rc, const struct cmfs_err *err)
{
	struct event ev;

	event_init(&ev, clock_now_ns(), who->uid, u->env, "upload");
	event_add(&ev, "artifact", u->name);
	record(u->r, &ev, u->env, rc, err);
	event_release(&ev);
}

int repo_upload_commit(struct repo_upload *u, const struct repo_who *who,
		       struct catalog_version *out, struct cmfs_err *err)
{
	char sha[STORE_SHA_HEX];
	struct jar_report *ahead = NULL;
	int rc;

	if (!u->dirty) {
		/* Nothing new: *out is the latest as it stands. */
		struct catalog_artifact a;

		if (out && !art_find(u->r, u->env, u->name, &a))
			*out = a.latest;
		return 0;
	}
	if (u->failed) {
		/* Bytes are missing: committing the rest would make a
		 * version nobody wrote. */
		rc = cmfs_err_set(err, u->failed,
				  "%s: a write failed (%s), so nothing was "
				  "committed", u->name, strerror(-u->failed));
		upload_refused(u, who, rc, err);
		return rc;
	}
	if ((rc = ready(u, 0))) {
		rc = cmfs_err_set(err, rc, "%s: staging failed: %s",
				  u->name, strerror(-rc));
		upload_refused(u, who, rc, err);
		return rc;
	}
	if (!u->hash_broken && u->hashed == u->size && u->pipe) {
		ahead = inspect_while_hashing(u);
		rc = store_pipe_final(u->pipe, u->size, sha);
	} else if (!u->hash_broken && u->hashed == u->size) {
		store_hash_final(u->hash, sha);
	} else if (u->fd < 0) {
		store_hash_mem(sha, u->mem, (size_t)u->size);
	} else {
		rc = -EAGAIN;
	}
	store_pipe_free(u->pipe);
	u->pipe = NULL;
	if (rc && (rc = store_hash_fd(sha, u->fd, u->size, err))) {
		jar_report_free(ahead);
		return rc;
	}
	rc = commit_fd(u->r, who, u->env, u->name, u->fd,
		       u->fd < 0 ? u->mem : NULL, u->size, sha, u->pending,
		       u->fd < 0 ? &u->early : &ahead, "upload", out, err);
	jar_report_free(ahead);
	if (rc) {
		/* The hash was consumed: recompute at the next commit. */
		u->hash_broken = 1;
		return rc;
	}
	/* The staging file may now be the blob: never write it again.  A
	 * later write starts from the version just made. */
	if (u->fd >= 0)
		unstage(u);
	let_go(u);
	memcpy(u->base, sha, STORE_SHA_HEX);
	u->hash_broken = 1;
	__atomic_store_n(&u->dirty, 0, __ATOMIC_RELAXED);
	label_free(u->pending);
	u->pending = NULL;
	return 0;
}

void repo_upload_free(struct repo_upload *u)
{
	if (!u)
		return;
	drop_early(u);
	store_pipe_free(u->pipe);
	if (u->fd >= 0)
		unstage(u);
	let_go(u);
	store_hash_free(u->hash);
	label_free(u->pending);
	free(u);
}
