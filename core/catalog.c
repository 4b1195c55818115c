/*
 * catalog.c - the catalog interface: picks a backend from the URI and
 * forwards each call to it.  Nothing here knows how rows are kept.
 */
#include "catalog.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_memo.h"
#include "hash.h"
#include "jar.h"

/* The longest key of a question (struct ask). */
#define MEMO_KEY 400
/* The most artifacts one kept catalog_art_by_label answer holds. */
#define MEMO_ARTS 16
/* Rows kept as last read (known()): how many. */
#define KNOWN_SLOTS 256
/* Table definitions read ahead (def_keep()): how many at once. */
#define DEF_SLOTS 32

/* A row kept as last read (known()). */
struct known {
	size_t klen; /* 0: empty */
	char key[MEMO_KEY];
	size_t vlen;
	void *val; /* owned */
};

struct catalog {
	const struct catalog_backend *be;
	void *impl;
	uint64_t gen;		/* bumped after every change: generation() */
	uint64_t env_gen;	/* bumped after a change to environments */
	int env_txn;		/* one is in the open transaction */
	int depth;		/* catalog_begin nesting (the backend's lock,
				 * held from the outermost begin, guards it) */
	catalog_watch_fn watch_fn; /* catalog_watch's */
	void *watch_arg;
	struct catalog_memo memo;	 /* memo_get(), insp_kept() */
	pthread_mutex_t memo_lock;	 /* guards known and defs */
	struct known known[KNOWN_SLOTS]; /* known() */
	struct def_memo {
		uint64_t gen; /* the generation read before the answer */
		int64_t id;   /* the table's; 0: empty */
		struct catalog_table_def d;
	} defs[DEF_SLOTS]; /* def_keep() */
};

/*
 * Environments' generations start apart for every catalog opened, so a
 * thread's cached row (catalog_env_get) is never taken for a row of
 * another catalog that has the same address later.
 */
static uint64_t env_gen_base;

/*
 * Count a change to the rows that resolution and listings read.  Bumped
 * after the backend call returns (and again when a transaction ends), so
 * a reader that read the generation before a change can never keep what
 * it computed under a generation that outlives the change.
 */
static int changed(struct catalog *c, int rc)
{
	__atomic_add_fetch(&c->gen, 1, __ATOMIC_RELEASE);
	return rc;
}

/* An environment was added or removed: rows cached before are stale,
 * and again when its transaction ends (it may have been rolled back). */
static int env_changed(struct catalog *c, int rc)
{
	__atomic_store_n(&c->env_txn, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->env_gen, 1, __ATOMIC_RELEASE);
	return changed(c, rc);
}

uint64_t catalog_generation(struct catalog *c)
{
	return __atomic_load_n(&c->gen, __ATOMIC_ACQUIRE);
}

void catalog_table_def_release(struct catalog_table_def *d)
{
	size_t i;

	free(d->ddl);
	free(d->like_ddl);
	for (i = 0; i < d->nopts; i++) {
		free(d->keys[i]);
		free(d->values[i]);
	}
	free(d->keys);
	free(d->values);
	memset(d, 0, sizeof(*d));
}

/*
 * Some reads a resolution makes, each a round trip on a server's catalog,
 * are asked again and again: a table's row by a look-up, an open and the
 * resolution; an artifact's labels and the artifacts carrying a label by
 * every table that names them.  Their answers are kept while the
 * generation (read before the answer) stands: nothing changed here, nor
 * elsewhere as far as notifications tell, since; as many as the memo's
 * budget in bytes holds (catalog_memo.h), so that a table naming a
 * connector asked for since the last change costs only its own row.  A
 * question's key: a tag, a number and two strings; its length 0 when it
 * is too long to keep.
 */
struct ask {
	uint64_t gen; /* read before the answer */
	size_t klen;
	char key[MEMO_KEY];
};

static void memo_ask(struct ask *q, struct catalog *c, char tag,
		     int64_t id, const char *a, const char *b)
{
	int n = snprintf(q->key, MEMO_KEY, "%c%lld%c%s%c%s", tag,
			 (long long)id, '\0', a, '\0', b);

	q->klen = n > 0 && n < MEMO_KEY ? (size_t)n : 0;
	q->gen = catalog_generation(c);
}

/* 1 and the answer kept for q (*val a copy, the caller's to free; NULL
 * when vlen is 0), else 0. */
static int memo_get(struct catalog *c, const struct ask *q, int *rc,
		    void **val, size_t *vlen)
{
	*val = NULL;
	return q->klen && catalog_memo_get(&c->memo, q->gen, q->key, q->klen,
					   rc, val, vlen);
}

static void memo_put(struct catalog *c, const struct ask *q, int rc,
		     const void *val, size_t vlen)
{
	if (q->klen)
		catalog_memo_put(&c->memo, q->gen, q->key, q->klen, rc, val,
				 vlen);
}

/*
 * A catalog on a server can be out of reach while the host still holds
 * what it read (its kernel's entries, its copies of blobs), and reads of
 * those must go on (issue 31).  The rows an open of an artifact or a
 * version reads (its environment, the artifact, the version) are kept as
 * last read, whatever the generation, and answer the same question when
 * the server does not (-EIO).  Only for a backend that other hosts share
 * (one with a watch): a local file's -EIO is a fault of the disk and
 * stays one.  `rc` and `out` (`size` bytes): the backend's answer to the
 * question (tag, id, name); returns the answer to give.
 */
static int known(struct catalog *c, char tag, int64_t id, const char *name,
		 int rc, void *out, size_t size)
{
	struct known *m;
	struct ask q;
	void *v;

	if (!c->be->watch || (rc && rc != -EIO))
		return rc;
	memo_ask(&q, c, tag, id, name, "");
	if (!q.klen)
		return rc;
	pthread_mutex_lock(&c->memo_lock);
	m = &c->known[hash_bytes(q.key, q.klen, 0) % KNOWN_SLOTS];
	if (!rc) {
		v = m->vlen == size ? m->val : realloc(m->val, size);
		if (v) {
			memcpy(v, out, size);
			m->val = v;
			m->vlen = size;
			m->klen = q.klen;
			memcpy(m->key, q.key, q.klen);
		}
	} else if (m->klen == q.klen && !memcmp(m->key, q.key, q.klen) &&
		   m->vlen == size) {
		memcpy(out, m->val, size);
		rc = 0;
	}
	pthread_mutex_unlock(&c->memo_lock);
	return rc;
}

/* Keep a copy of r, the inspection of blob `sha256` read under `gen`,
 * in the memo under the question ('i', 0, sha256). */
static void insp_keep(struct catalog *c, uint64_t gen, const char *sha256,
		      const struct jar_report *r)
{
	struct ask q;

	memo_ask(&q, c, 'i', 0, sha256, "");
	if (q.klen)
		catalog_memo_put_report(&c->memo, gen, q.key, q.klen, r);
}

/* 1 and a copy of the inspection of `sha256` kept under the generation
 * that stands, else 0. */
static int insp_kept(struct catalog *c, const char *sha256,
		     struct jar_report **out)
{
	struct ask q;

	memo_ask(&q, c, 'i', 0, sha256, "");
	return q.klen && catalog_memo_get_report(&c->memo, q.gen, q.key,
						 q.klen, out);
}

/* Keep table `id`'s definition *d (taken: *d is zeroed), read under
 * `gen`. */
static void def_keep(struct catalog *c, uint64_t gen, int64_t id,
		     struct catalog_table_def *d)
{
	struct def_memo *m = &c->defs[(uint64_t)id % DEF_SLOTS];

	pthread_mutex_lock(&c->memo_lock);
	catalog_table_def_release(&m->d);
	m->gen = gen;
	m->id = id;
	m->d = *d;
	pthread_mutex_unlock(&c->memo_lock);
	memset(d, 0, sizeof(*d));
}

/* 1 and table `id`'s definition kept under `gen`, taken (a look-up's
 * read ahead serves the one read that follows it), else 0. */
static int def_kept(struct catalog *c, uint64_t gen, int64_t id,
		    struct catalog_table_def *out)
{
	struct def_memo *m = &c->defs[(uint64_t)id % DEF_SLOTS];
	int hit;

	pthread_mutex_lock(&c->memo_lock);
	hit = m->id == id && m->gen == gen && m->d.ddl;
	if (hit) {
		*out = m->d;
		memset(&m->d, 0, sizeof(m->d));
		m->id = 0;
	}
	pthread_mutex_unlock(&c->memo_lock);
	return hit;
}

/* The backend of *uri: PostgreSQL for a libpq connection URI, else
 * SQLite (a "sqlite:" prefix taken off). */
static const struct catalog_backend *backend_of(const char **uri)
{
	if (!strncmp(*uri, "postgresql://", 13) ||
	    !strncmp(*uri, "postgres://", 11))
		return &catalog_pg_backend;
	if (!strncmp(*uri, "sqlite:", 7))
		*uri += 7;
	return &catalog_sqlite_backend;
}

int catalog_open(struct catalog **out, const char *uri, struct cmfs_err *err)
{
	struct catalog *c;
	int rc;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	c->be = backend_of(&uri);
	c->env_gen = __atomic_add_fetch(&env_gen_base, (uint64_t)1 << 32,
					__ATOMIC_RELAXED);
	rc = c->be->open(&c->impl, uri, err);
	if (rc) {
		free(c);
		return rc;
	}
	catalog_memo_init(&c->memo, CATALOG_MEMO_BYTES);
	pthread_mutex_init(&c->memo_lock, NULL);
	*out = c;
	return 0;
}

void catalog_close(struct catalog *c)
{
	size_t i;

	if (!c)
		return;
	catalog_unwatch(c);
	c->be->close(c->impl);
	catalog_memo_release(&c->memo);
	pthread_mutex_destroy(&c->memo_lock);
	for (i = 0; i < KNOWN_SLOTS; i++)
		free(c->known[i].val);
	for (i = 0; i < DEF_SLOTS; i++)
		catalog_table_def_release(&c->defs[i].d);
	free(c);
}

int catalog_begin(struct catalog *c, struct cmfs_err *err)
{
	int rc = c->be->begin(c->impl, err);

	if (!rc)
		c->depth++;
	return rc;
}

int catalog_end(struct catalog *c, int rc, struct cmfs_err *err)
{
	/* Only the outermost end commits or rolls back. */
	int outer = c->depth > 0 && --c->depth == 0;

	rc = changed(c, c->be->end(c->impl, rc, err));
	if (outer && __atomic_exchange_n(&c->env_txn, 0, __ATOMIC_RELAXED))
		__atomic_add_fetch(&c->env_gen, 1, __ATOMIC_RELEASE);
	return rc;
}

int catalog_check(struct catalog *c, char **out, struct cmfs_err *err)
{
	return c->be->check(c->impl, out, err);
}

int catalog_env_add(struct catalog *c, const char *name, uint32_t uid,
		    int64_t now, struct catalog_env *out, struct cmfs_err *err)
{
	return env_changed(c,
			   c->be->env_add(c->impl, name, uid, now, out, err));
}

/*
 * Every listing, attribute and upload looks its environment up, and the
 * rows change only when an environment comes or goes: each thread keeps
 * the last row it read while the environments' generation (read before
 * the row) stands.
 */
int catalog_env_get(struct catalog *c, const char *name,
		    struct catalog_env *out, struct cmfs_err *err)
{
	static _Thread_local struct {
		uint64_t gen;
		struct catalog_env e;
	} last;
	uint64_t gen = __atomic_load_n(&c->env_gen, __ATOMIC_ACQUIRE);
	int rc;

	if (last.gen == gen && !strcmp(last.e.name, name)) {
		*out = last.e;
		return 0;
	}
	rc = c->be->env_get(c->impl, name, out, err);
	if (!rc) {
		last.gen = gen;
		last.e = *out;
	}
	return known(c, 'E', 0, name, rc, out, sizeof(*out));
}

int catalog_env_del(struct catalog *c, int64_t env_id, struct cmfs_err *err)
{
	return env_changed(c, c->be->env_del(c->impl, env_id, err));
}

int catalog_env_list(struct catalog *c,
		     int (*fn)(void *arg, const struct catalog_env *e),
		     void *arg, struct cmfs_err *err)
{
	return c->be->env_list(c->impl, fn, arg, err);
}

int catalog_art_get(struct catalog *c, int64_t env_id, const char *name,
		    struct catalog_artifact *out, struct cmfs_err *err)
{
	int rc = c->be->art_get(c->impl, env_id, name, out, err);

	return known(c, 'A', env_id, name, rc, out, sizeof(*out));
}

int catalog_art_add(struct catalog *c, int64_t env_id, const char *name,
		    int64_t *out, struct cmfs_err *err)
{
	return changed(c, c->be->art_add(c->impl, env_id, name, out, err));
}

int catalog_art_del(struct catalog *c, int64_t art_id, struct cmfs_err *err)
{
	return changed(c, c->be->art_del(c->impl, art_id, err));
}

int catalog_art_rename(struct catalog *c, int64_t art_id, const char *name,
		       struct cmfs_err *err)
{
	return changed(c, c->be->art_rename(c->impl, art_id, name, err));
}

int catalog_art_count(struct catalog *c, int64_t env_id, uint64_t *out,
		      struct cmfs_err *err)
{
	return c->be->art_count(c->impl, env_id, out, err);
}

int catalog_art_list(struct catalog *c, int64_t env_id,
		     int (*fn)(void *arg, const struct catalog_artifact *a),
		     void *arg, struct cmfs_err *err)
{
	return c->be->art_list(c->impl, env_id, fn, arg, err);
}

/* catalog_art_by_label's rows on their way to the caller's fn, kept
 * when they are few. */
struct art_rows {
	int (*fn)(void *arg, const struct catalog_artifact *a);
	void *arg;
	size_t n;
	int stopped; /* fn stopped the walk, or rows were too many */
	struct catalog_artifact a[MEMO_ARTS];
};

static int art_row(void *arg, const struct catalog_artifact *a)
{
	struct art_rows *r = arg;
	int rc;

	if (r->n < MEMO_ARTS)
		r->a[r->n] = *a;
	else
		r->stopped = 1;
	r->n++;
	rc = r->fn(r->arg, a);
	if (rc)
		r->stopped = 1;
	return rc;
}

int catalog_art_by_label(struct catalog *c, int64_t env_id, const char *key,
			 const char *value,
			 int (*fn)(void *arg, const struct catalog_artifact *a),
			 void *arg, struct cmfs_err *err)
{
	struct ask q;
	struct art_rows *r;
	size_t vlen, i;
	void *v;
	int rc;

	memo_ask(&q, c, 'a', env_id, key, value);
	if (memo_get(c, &q, &rc, &v, &vlen)) {
		const struct catalog_artifact *a = v;

		for (i = 0; !rc && i < vlen / sizeof(*a); i++)
			rc = fn(arg, &a[i]);
		free(v);
		return rc;
	}
	if (!(r = malloc(sizeof(*r))))
		return c->be->art_by_label(c->impl, env_id, key, value, fn,
					   arg, err);
	r->fn = fn;
	r->arg = arg;
	r->n = 0;
	r->stopped = 0;
	rc = c->be->art_by_label(c->impl, env_id, key, value, art_row, r,
				 err);
	if (!rc && !r->stopped)
		memo_put(c, &q, 0, r->a, r->n * sizeof(r->a[0]));
	free(r);
	return rc;
}

/* catalog_art_by_label_with()'s walk: the rows as art_row() keeps them,
 * and each one's label key2 kept as catalog_label_get()'s answer under
 * the generation read before the query, and its latest version's
 * inspection, if the backend read it, as catalog_insp_of()'s. */
struct art_with {
	struct catalog *c;
	const char *key2;
	uint64_t gen;
	struct art_rows *r;
};

static int art_with_row(void *arg, const struct catalog_artifact *a,
			const char *value2, const struct jar_report *latest)
{
	struct art_with *w = arg;
	struct ask q;

	if (latest)
		insp_keep(w->c, w->gen, a->latest.sha256, latest);

	memo_ask(&q, w->c, 'l', a->id, w->key2, "");
	q.gen = w->gen;
	if (value2)
		memo_put(w->c, &q, 0, value2, strlen(value2) + 1);
	else
		memo_put(w->c, &q, -ENODATA, NULL, 0);
	return art_row(w->r, a);
}

int catalog_art_by_label_with(struct catalog *c, int64_t env_id,
			      const char *key, const char *value,
			      const char *key2,
			      int (*fn)(void *arg,
					const struct catalog_artifact *a),
			      void *arg, struct cmfs_err *err)
{
	struct art_with w;
	struct ask q;
	size_t vlen;
	void *v;
	int rc;

	memo_ask(&q, c, 'a', env_id, key, value);
	if (!c->be->art_by_label_with || memo_get(c, &q, &rc, &v, &vlen)) {
		if (c->be->art_by_label_with)
			free(v);
		return catalog_art_by_label(c, env_id, key, value, fn, arg,
					    err);
	}
	if (!(w.r = malloc(sizeof(*w.r))))
		return catalog_art_by_label(c, env_id, key, value, fn, arg,
					    err);
	w.c = c;
	w.key2 = key2;
	w.gen = q.gen;
	w.r->fn = fn;
	w.r->arg = arg;
	w.r->n = 0;
	w.r->stopped = 0;
	rc = c->be->art_by_label_with(c->impl, env_id, key, value, key2,
				      art_with_row, &w, err);
	if (!rc && !w.r->stopped)
		memo_put(c, &q, 0, w.r->a, w.r->n * sizeof(w.r->a[0]));
	free(w.r);
	return rc;
}

int catalog_ver_add(struct catalog *c, int64_t art_id, const char *sha256,
		    uint64_t size, int64_t mtime, uint32_t uid,
		    struct catalog_version *out, struct cmfs_err *err)
{
	return changed(c, c->be->ver_add(c->impl, art_id, sha256, size, mtime,
					 uid, out, err));
}

int catalog_ver_get(struct catalog *c, int64_t art_id, int64_t n,
		    struct catalog_version *out, struct cmfs_err *err)
{
	char num[24];
	int rc = c->be->ver_get(c->impl, art_id, n, out, err);

	if (!c->be->watch)
		return rc;
	snprintf(num, sizeof(num), "%lld", (long long)n);
	return known(c, 'V', art_id, num, rc, out, sizeof(*out));
}

int catalog_ver_del(struct catalog *c, int64_t art_id, int64_t n,
		    struct cmfs_err *err)
{
	return changed(c, c->be->ver_del(c->impl, art_id, n, err));
}

int catalog_ver_list(struct catalog *c, int64_t art_id,
		     int (*fn)(void *arg, const struct catalog_version *v),
		     void *arg, struct cmfs_err *err)
{
	return c->be->ver_list(c->impl, art_id, fn, arg, err);
}

int catalog_ver_by_sha(struct catalog *c, const char *sha256,
		       int (*fn)(void *arg, const char *const *row), void *arg,
		       struct cmfs_err *err)
{
	return c->be->ver_by_sha(c->impl, sha256, fn, arg, err);
}

int catalog_env_recount(struct catalog *c, struct cmfs_err *err)
{
	return changed(c, c->be->env_recount(c->impl, err));
}

int catalog_insp_links(struct catalog *c, int relink, uint64_t *out,
		       struct cmfs_err *err)
{
	int rc = c->be->insp_links(c->impl, relink, out, err);

	/* Relinked versions are rows resolution reads. */
	return relink ? changed(c, rc) : rc;
}

int catalog_set_sync(struct catalog *c, int full, struct cmfs_err *err)
{
	return c->be->set_sync(c->impl, full, err);
}

int catalog_checkpoint(struct catalog *c, struct cmfs_err *err)
{
	return c->be->checkpoint(c->impl, err);
}

int catalog_sync(struct catalog *c, struct cmfs_err *err)
{
	return c->be->sync(c->impl, err);
}

int catalog_inline_put(struct catalog *c, const char *sha256, const void *data,
		       size_t len, struct cmfs_err *err)
{
	return c->be->inline_put(c->impl, sha256, data, len, err);
}

int catalog_inline_get(struct catalog *c, const char *sha256, void **out,
		       size_t *len, struct cmfs_err *err)
{
	return c->be->inline_get(c->impl, sha256, out, len, err);
}

int catalog_inline_del(struct catalog *c, const char *sha256,
		       struct cmfs_err *err)
{
	return c->be->inline_del(c->impl, sha256, err);
}

int catalog_inline_list(struct catalog *c,
			int (*fn)(void *arg, const char *const *row), void *arg,
			struct cmfs_err *err)
{
	return c->be->inline_list(c->impl, fn, arg, err);
}

int catalog_unsynced_add(struct catalog *c, const char *sha256,
			 struct cmfs_err *err)
{
	return c->be->unsynced_add(c->impl, sha256, err);
}

int catalog_unsynced_mark(struct catalog *c, int64_t *out,
			  struct cmfs_err *err)
{
	return c->be->unsynced_mark(c->impl, out, err);
}

int catalog_unsynced_clear(struct catalog *c, int64_t upto,
			   struct cmfs_err *err)
{
	return c->be->unsynced_clear(c->impl, upto, err);
}

int catalog_unsynced_list(struct catalog *c,
			  int (*fn)(void *arg, const char *const *row),
			  void *arg, struct cmfs_err *err)
{
	return c->be->unsynced_list(c->impl, fn, arg, err);
}

int catalog_loose_add(struct catalog *c, const char *sha256,
		      struct cmfs_err *err)
{
	return c->be->loose_add(c->impl, sha256, err);
}

int catalog_loose_del(struct catalog *c, const char *sha256,
		      struct cmfs_err *err)
{
	return c->be->loose_del(c->impl, sha256, err);
}

int catalog_loose_list(struct catalog *c,
		       int (*fn)(void *arg, const char *const *row),
		       void *arg, struct cmfs_err *err)
{
	return c->be->loose_list(c->impl, fn, arg, err);
}

int catalog_blob_refs(struct catalog *c, const char *sha256, uint64_t *out,
		      struct cmfs_err *err)
{
	return c->be->blob_refs(c->impl, sha256, out, err);
}

int catalog_blob_total(struct catalog *c, uint64_t *out, struct cmfs_err *err)
{
	return c->be->blob_total(c->impl, out, err);
}

int catalog_label_set(struct catalog *c, int64_t art_id, const char *key,
		      const char *value, struct cmfs_err *err)
{
	return changed(c, c->be->label_set(c->impl, art_id, key, value, err));
}

int catalog_label_del(struct catalog *c, int64_t art_id, const char *key,
		      struct cmfs_err *err)
{
	return changed(c, c->be->label_del(c->impl, art_id, key, err));
}

int catalog_label_get(struct catalog *c, int64_t art_id, const char *key,
		      char **out, struct cmfs_err *err)
{
	struct ask q;
	size_t vlen;
	void *v;
	int rc;

	memo_ask(&q, c, 'l', art_id, key, "");
	if (memo_get(c, &q, &rc, &v, &vlen)) {
		if (rc)
			free(v);
		else
			*out = v;
		return rc;
	}
	rc = c->be->label_get(c->impl, art_id, key, out, err);
	if (!rc)
		memo_put(c, &q, 0, *out, strlen(*out) + 1);
	else if (rc == -ENODATA)
		memo_put(c, &q, rc, NULL, 0);
	return rc;
}

int catalog_label_list(struct catalog *c, int64_t art_id,
		       int (*fn)(void *arg, const char *key, const char *value),
		       void *arg, struct cmfs_err *err)
{
	return c->be->label_list(c->impl, art_id, fn, arg, err);
}

int catalog_insp_put(struct catalog *c, const char *sha256,
		     const struct jar_report *r, struct cmfs_err *err)
{
	return changed(c, c->be->insp_put(c->impl, sha256, r, err));
}

int catalog_insp_stale(struct catalog *c,
		       int (*fn)(void *arg, const char *const *row),
		       void *arg, struct cmfs_err *err)
{
	return c->be->insp_stale(c->impl, fn, arg, err);
}

int catalog_insp_get(struct catalog *c, const char *sha256,
		     struct jar_report **out, struct cmfs_err *err)
{
	return c->be->insp_get(c->impl, sha256, 0, 1, out, err);
}

int catalog_insp_of(struct catalog *c, const struct catalog_version *v,
		    struct jar_report **out, struct cmfs_err *err)
{
	if (insp_kept(c, v->sha256, out))
		return 0;
	return c->be->insp_get(c->impl, v->sha256, v->insp, 1, out, err);
}

/* A kept inspection is a whole one: it answers a label check too. */
int catalog_insp_offers(struct catalog *c, const struct catalog_version *v,
			struct jar_report **out, struct cmfs_err *err)
{
	if (insp_kept(c, v->sha256, out))
		return 0;
	return c->be->insp_get(c->impl, v->sha256, v->insp, 0, out, err);
}

int catalog_table_get(struct catalog *c, int64_t env_id, const char *name,
		      struct catalog_table *out, struct cmfs_err *err)
{
	struct ask q;
	size_t vlen;
	void *v;
	int rc;

	memo_ask(&q, c, 't', env_id, name, "");
	if (memo_get(c, &q, &rc, &v, &vlen)) {
		memcpy(out, v, sizeof(*out));
		free(v);
		return 0;
	}
	if (c->be->table_get_def) {
		/* The definition too, in the same round trip: a table is
		 * looked up to be read or resolved, which reads it. */
		struct catalog_table_def d;

		memset(&d, 0, sizeof(d));
		rc = c->be->table_get_def(c->impl, env_id, name, out, &d,
					  err);
		if (!rc)
			def_keep(c, q.gen, out->id, &d);
	} else {
		rc = c->be->table_get(c->impl, env_id, name, out, err);
	}
	if (!rc)
		memo_put(c, &q, 0, out, sizeof(*out));
	return rc;
}

int catalog_table_def(struct catalog *c, int64_t id,
		      struct catalog_table_def *out, struct cmfs_err *err)
{
	if (def_kept(c, catalog_generation(c), id, out))
		return 0;
	return c->be->table_def(c->impl, id, out, err);
}

int catalog_table_put(struct catalog *c, int64_t env_id, const char *name,
		      const struct catalog_table_def *def, int64_t mtime,
		      uint32_t uid, struct catalog_table *out,
		      struct cmfs_err *err)
{
	return changed(c, c->be->table_put(c->impl, env_id, name, def, mtime,
					   uid, out, err));
}

int catalog_table_del(struct catalog *c, int64_t id, struct cmfs_err *err)
{
	return changed(c, c->be->table_del(c->impl, id, err));
}

/* Not changed(): a refusal changes no resolution. */
int catalog_table_refusal_set(struct catalog *c, int64_t id, const char *text,
			      struct cmfs_err *err)
{
	return c->be->table_refusal_set(c->impl, id, text, err);
}

int catalog_table_refusal_get(struct catalog *c, int64_t id, struct buf *out,
			      struct cmfs_err *err)
{
	return c->be->table_refusal_get(c->impl, id, out, err);
}

int catalog_table_count(struct catalog *c, int64_t env_id, uint64_t *out,
			struct cmfs_err *err)
{
	return c->be->table_count(c->impl, env_id, out, err);
}

int catalog_table_list(struct catalog *c, int64_t env_id,
		       int (*fn)(void *arg, const struct catalog_table *t),
		       void *arg, struct cmfs_err *err)
{
	return c->be->table_list(c->impl, env_id, fn, arg, err);
}

int catalog_event_add(struct catalog *c, const char *env, const char *line,
		      struct cmfs_err *err)
{
	return c->be->event_add(c->impl, 1, &env, &line, err);
}

int catalog_event_add_many(struct catalog *c, size_t n,
			   const char *const *envs, const char *const *lines,
			   struct cmfs_err *err)
{
	return n ? c->be->event_add(c->impl, n, envs, lines, err) : 0;
}

int catalog_event_envs(struct catalog *c,
		       int (*fn)(void *arg, const char *env), void *arg,
		       struct cmfs_err *err)
{
	return c->be->event_envs(c->impl, fn, arg, err);
}

int catalog_event_trim(struct catalog *c, const char *env, uint64_t max_rows,
		       const char *before, uint64_t *removed,
		       struct cmfs_err *err)
{
	return c->be->event_trim(c->impl, env, max_rows, before, removed, err);
}

int catalog_event_size(struct catalog *c, const char *env, uint64_t *out,
		       struct cmfs_err *err)
{
	return c->be->event_size(c->impl, env, out, err);
}

int catalog_event_read(struct catalog *c, const char *env, uint64_t off,
		       size_t size, struct buf *out, struct cmfs_err *err)
{
	return c->be->event_read(c->impl, env, off, size, out, err);
}

int catalog_open_existing(struct catalog **out, const char *uri, int rdonly,
			  struct cmfs_err *err)
{
	struct catalog *c;
	int rc;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	c->be = backend_of(&uri);
	c->env_gen = __atomic_add_fetch(&env_gen_base, (uint64_t)1 << 32,
					__ATOMIC_RELAXED);
	rc = c->be->open_existing(&c->impl, uri, rdonly, err);
	if (rc) {
		free(c);
		return rc;
	}
	catalog_memo_init(&c->memo, CATALOG_MEMO_BYTES);
	pthread_mutex_init(&c->memo_lock, NULL);
	*out = c;
	return 0;
}

int catalog_begin_read(struct catalog *c, struct cmfs_err *err)
{
	int rc = c->be->begin_read(c->impl, err);

	if (!rc)
		c->depth++;
	return rc;
}

int catalog_ver_put(struct catalog *c, const struct catalog_version *v,
		    struct cmfs_err *err)
{
	return changed(c, c->be->ver_put(c->impl, v, err));
}

int catalog_art_next_get(struct catalog *c, int64_t art_id, int64_t *out,
			 struct cmfs_err *err)
{
	return c->be->art_next_get(c->impl, art_id, out, err);
}

int catalog_art_next_set(struct catalog *c, int64_t art_id, int64_t n,
			 struct cmfs_err *err)
{
	return changed(c, c->be->art_next_set(c->impl, art_id, n, err));
}

int catalog_retired_list(struct catalog *c, const char *env,
			 int (*fn)(void *arg, const char *name, int64_t next),
			 void *arg, struct cmfs_err *err)
{
	return c->be->retired_list(c->impl, env, fn, arg, err);
}

int catalog_retired_put(struct catalog *c, const char *env, const char *name,
			int64_t next, struct cmfs_err *err)
{
	return changed(c, c->be->retired_put(c->impl, env, name, next, err));
}

int catalog_bind_store(struct catalog *c, const char *id,
		       struct cmfs_err *err)
{
	return c->be->bind_store ? c->be->bind_store(c->impl, id, err) : 0;
}

int catalog_keeps_blobs(struct catalog *c)
{
	return c->be->blob_put != NULL;
}

int catalog_blob_put(struct catalog *c, const char *sha256, int fd,
		     uint64_t size, struct cmfs_err *err)
{
	if (!c->be->blob_put)
		return cmfs_err_set(err, -ENOTSUP, "the catalog keeps no blobs");
	return c->be->blob_put(c->impl, sha256, fd, size, err);
}

int catalog_blob_get(struct catalog *c, const char *sha256, int fd,
		     uint64_t *size, struct cmfs_err *err)
{
	if (!c->be->blob_get)
		return cmfs_err_set(err, -ENOTSUP, "the catalog keeps no blobs");
	return c->be->blob_get(c->impl, sha256, fd, size, err);
}

int catalog_blob_list(struct catalog *c,
		      int (*fn)(void *arg, const char *const *row), void *arg,
		      struct cmfs_err *err)
{
	return c->be->blob_list ? c->be->blob_list(c->impl, fn, arg, err) : 0;
}

/* A change elsewhere: what was computed before is stale (an environment
 * may have come or gone too), then the watcher is told. */
static void elsewhere(void *arg, const char *env, const char *name, int kind)
{
	struct catalog *c = arg;

	if (!env || kind == 'e')
		__atomic_add_fetch(&c->env_gen, 1, __ATOMIC_RELEASE);
	changed(c, 0);
	c->watch_fn(c->watch_arg, env, name, kind);
}

int catalog_watch(struct catalog *c, catalog_watch_fn fn, void *arg,
		  struct cmfs_err *err)
{
	if (!c->be->watch)
		return 0;
	c->watch_fn = fn;
	c->watch_arg = arg;
	return c->be->watch(c->impl, elsewhere, c, err);
}

void catalog_unwatch(struct catalog *c)
{
	if (c->be->unwatch)
		c->be->unwatch(c->impl);
}
