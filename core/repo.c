/*
 * repo.c - the rules of DESIGN.md over the catalog and the blob store:
 * opening and closing a store, a change's transaction, environments and
 * artifacts removed, moved and renamed, and the tree's reads and
 * attributes.  repo_int.h is what the repo_*.c files share; each holds
 * one part of the rules, named by its file.
 *
 * Every change follows one pattern: check names and limits, then one
 * catalog transaction that makes the change and appends its `events` line,
 * then (for deletions) free the blobs nothing refers to any more.  A
 * refusal appends its own line after the rollback; so does a change whose
 * commit failed (a full disk): its line says result=refused with that
 * errno.  Both lines also go to the daemon's log, a change's only once
 * its commit succeeded (end()).  A read's line (a resolution) waits in a
 * short queue (struct later) that goes into the catalog within LATER_MS,
 * before any change or refusal (so lines keep their order) and before
 * `events` is read: a job start does not pay for a catalog write.
 *
 * Blob lifetime: an upload links its blob into the store before the
 * transaction that refers to it commits, and a deletion unlinks a blob
 * after the transaction that dropped the last reference.  gc_lock is held
 * across both, so a deletion never frees a blob that an upload is about to
 * refer to.  An inline blob comes and goes with the rows that refer to it,
 * in their transactions (the catalog's trigger drops it with the last).
 */
#define _GNU_SOURCE /* SCHED_IDLE, gettid() */
#include "repo_int.h"

/* This thread's catalog transactions open through begin(). */
_Thread_local int in_txn;

/* ---- a change: begin and end ---- */

/*
 * A catalog transaction of this thread.  The reads' lines queued before
 * it go in first, so the events keep the order things happened in.
 */
int begin(struct repo *r, struct cmfs_err *err)
{
	int rc;

	repo_flush_events(r);
	rc = catalog_begin(r->cat, err);
	if (!rc)
		in_txn++;
	return rc;
}

/*
 * End this thread's transaction with `rc`.  The lines of what it changed
 * go to the daemon's log only once the outermost commit succeeded: a
 * change rolled back (a full disk, an I/O error) is logged by its caller
 * as the refusal it became, never as done.
 */
int end(struct repo *r, int rc, struct cmfs_err *err)
{
	in_txn--;
	rc = catalog_end(r->cat, rc, err);
	if (in_txn)
		return rc;
	if (!rc) {
		if (txn_log.len)
			log_lines(r, buf_str(&txn_log), 0);
		sync_later(r);
	}
	buf_release(&txn_log);
	return rc;
}

/* ---- opening and closing ---- */

/*
 * Free the blobs in `shas` (n of them) that no version refers to now.
 * With sync = batch, after the next sync: until then the deletion that
 * freed them may not be on disk, and a power loss would bring back
 * versions that refer to them.
 */
static void free_blobs(struct repo *r, char (*shas)[STORE_SHA_HEX], size_t n)
{
	struct syncer *y = &r->sync;
	size_t i;

	if (!r->batch) {
		unlink_unused(r, shas, n);
		return;
	}
	pthread_mutex_lock(&y->w.lock);
	for (i = 0; i < n; i++) {
		if (y->nfreed == y->afreed) {
			size_t a = y->afreed ? 2 * y->afreed : 16;
			char(*p)[STORE_SHA_HEX] =
				realloc(y->freed, a * sizeof(*p));

			if (!p)
				break; /* an orphan: swept at the next mount */
			y->freed = p;
			y->afreed = a;
		}
		memcpy(y->freed[y->nfreed++], shas[i], STORE_SHA_HEX);
	}
	pthread_mutex_unlock(&y->w.lock);
}

/*
 * Before a change that frees space (or takes none): on a full disk, give
 * the reserve's blocks back so that its transaction can commit.  The next
 * change that takes space takes the reserve again once there is room.
 */
void room_to_free(struct repo *r)
{
	if (store_reserve_release(r->store, 0))
		repo_log(r, LOG_WARNING,
			 "store %s is full: its reserve is released so that "
			 "deletes can commit", store_path(r->store));
}

int blob_list_add(struct blob_list *l, const char *sha)
{
	char(*p)[STORE_SHA_HEX] = realloc(l->sha, (l->n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	l->sha = p;
	snprintf(l->sha[l->n++], STORE_SHA_HEX, "%s", sha);
	return 0;
}

/*
 * Start-up: free the loose blobs that no version refers to (what a crash
 * between a blob's link and its version's commit, or between a delete's
 * commit and its unlink, leaves), and drop their rows.
 */
static int sweep_loose(void *arg, const char *const *row)
{
	struct blob_list *l = arg;

	return strlen(row[0]) == STORE_SHA_HEX - 1 ? blob_list_add(l, row[0])
						   : 0;
}

/* What the blob files of the store are to the catalog. */
struct blob_census {
	struct repo *r;
	uint64_t known;		/* referred to by a version */
	uint64_t unknown;	/* neither referred to nor loose: kept */
	char first[STORE_SHA_HEX];
};

static int count_blob(void *arg, const char *sha, uint64_t size)
{
	struct blob_census *c = arg;
	uint64_t refs;

	(void)size;
	if (catalog_blob_refs(c->r->cat, sha, &refs, NULL) || refs) {
		c->known++;
		return 0;
	}
	/* A copy of a blob that another host freed since. */
	if (catalog_keeps_blobs(c->r->cat)) {
		store_blob_unlink(c->r->store, sha);
		return 0;
	}
	if (!c->unknown++)
		snprintf(c->first, sizeof(c->first), "%s", sha);
	return 0;
}

static int first_blob(void *arg, const char *sha, uint64_t size)
{
	(void)arg;
	(void)sha;
	(void)size;
	return 1;
}

/*
 * Refuse a store whose blobs no catalog knows: a new catalog beside them
 * would show an empty store and, were they swept, lose them all.
 * `db` missing or empty is refused before SQLite creates it.
 */
static int check_catalog_file(struct repo *r, const char *db,
			      struct cmfs_err *err)
{
	struct stat st;

	if (!stat(db, &st) && st.st_size > 0)
		return 0;
	if (store_blob_walk(r->store, first_blob, NULL) != 1)
		return 0; /* a new store */
	return cmfs_err_set(err, -EUCLEAN,
			    "store %s: catalog.db is %s but blobs/ holds "
			    "blobs: not mounted, a new catalog would know "
			    "none; restore catalog.db or fix [store] path "
			    "(cmfs fsck lists the blobs)",
			    store_path(r->store),
			    stat(db, &st) ? "missing" : "empty");
}

struct give_arg {
	struct repo *r;
	uint64_t n;		/* blobs a version refers to */
	struct cmfs_err err;
};

/* A blob of the store that a version refers to, into the catalog. */
static int give_blob(void *arg, const char *sha, uint64_t size)
{
	struct give_arg *g = arg;
	uint64_t refs;
	int fd, rc = catalog_blob_refs(g->r->cat, sha, &refs, &g->err);

	if (rc || !refs)
		return rc;
	if ((rc = store_blob_open(g->r->store, sha, &fd, &g->err)))
		return rc;
	rc = catalog_blob_put(g->r->cat, sha, fd, size, &g->err);
	close(fd);
	g->n += !rc;
	return rc;
}

/*
 * The store's own catalog.db, or the database of [catalog] url.  A store
 * that has a catalog.db of its own is not mounted on a database: the
 * database would know none of its artifacts.
 */
static int open_catalog(struct repo *r, const char *db, struct cmfs_err *err)
{
	char id[4096];
	struct stat st;
	int rc;

	if (!r->cfg->catalog_url) {
		if ((rc = check_catalog_file(r, db, err)))
			return rc;
		return catalog_open(&r->cat, db, err);
	}
	if (!stat(db, &st))
		return cmfs_err_set(err, -EEXIST,
				    "store %s has a catalog of its own "
				    "(catalog.db) and [catalog] url is set: "
				    "not mounted, the database would know "
				    "none of its artifacts; give the database "
				    "a store of its own",
				    store_path(r->store));
	if ((rc = catalog_open(&r->cat, r->cfg->catalog_url, err)))
		return rc;
	store_ident(r->store, id, sizeof(id));
	rc = catalog_bind_store(r->cat, id, err);
	if (rc > 0) {
		struct give_arg g = { r, 0, CMFS_ERR_INIT };

		rc = store_blob_walk(r->store, give_blob, &g);
		if (rc)
			return cmfs_err_set(err, rc, "%s", cmfs_err_msg(&g.err));
		repo_log(r, LOG_NOTICE,
			 "put the blobs of store %s in the catalog (%llu "
			 "checked)",
			 store_path(r->store), (unsigned long long)g.n);
	}
	return rc;
}

static int sweep(struct repo *r, struct cmfs_err *err)
{
	struct blob_list loose = { NULL, 0 };
	struct blob_census c = { r, 0, 0, "" };
	uint64_t refs, total;
	size_t i;
	int rc;

	rc = catalog_loose_list(r->cat, sweep_loose, &loose, NULL);
	for (i = 0; !rc && i < loose.n; i++) {
		if (catalog_blob_refs(r->cat, loose.sha[i], &refs, NULL))
			continue;
		if (!refs && !store_blob_unlink(r->store, loose.sha[i]))
			repo_log(r, LOG_NOTICE, "freed orphan blob %s",
				 loose.sha[i]);
		catalog_loose_del(r->cat, loose.sha[i], NULL);
	}
	free(loose.sha);
	store_blob_walk(r->store, count_blob, &c);
	/* A catalog that knows bytes of its own is this store's. */
	if (c.unknown && !c.known &&
	    !catalog_blob_total(r->cat, &total, NULL) && !total)
		return cmfs_err_set(err, -EUCLEAN,
				    "store %s: its catalog knows none of its "
				    "%llu blobs: not mounted; restore the "
				    "store's catalog.db or fix [store] path "
				    "(cmfs fsck lists the blobs)",
				    store_path(r->store),
				    (unsigned long long)c.unknown);
	if (c.unknown)
		repo_log(r, LOG_WARNING,
			 "%llu blobs (%s first) are not known to the catalog: "
			 "kept; cmfs fsck names them",
			 (unsigned long long)c.unknown, c.first);
	return 0;
}

/* The gate of refusal lines, as [events] sets it (read at mount). */
static struct events_gate_conf gate_conf(const struct config *cfg)
{
	struct events_gate_conf g;

	g.window_ns = (int64_t)cfg->events.repeat_window * 1000000000;
	g.rate = (double)cfg->events.uid_rate;
	g.burst = (double)cfg->events.uid_burst;
	g.all_rate = (double)cfg->events.all_rate;
	g.all_burst = (double)cfg->events.all_burst;
	g.max_whos = GATE_WHOS;
	return g;
}

int repo_open(struct repo **out, const struct config *cfg,
	      const char *mountpoint, repo_log_fn log, void *log_arg,
	      struct cmfs_err *err)
{
	struct events_gate_conf gc = gate_conf(cfg);
	struct repo *r;
	char db[4096];
	int rc;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	r->cfg = cfg;
	r->owner = getuid();
	r->log = log;
	r->log_arg = log_arg;
	pthread_mutex_init(&r->gc_lock, NULL);
	pthread_mutex_init(&r->scratch_lock, NULL);
	budget_init(&r->insp, INSPECT_BUDGET);
	pthread_mutex_init(&r->seen_lock, NULL);
	if ((mountpoint && !(r->mountpoint = strdup(mountpoint))) ||
	    !(r->resolved = resolve_cache_new()) ||
	    !(r->gate = events_gate_new(&gc)) ||
	    !(r->seen = calloc(SEEN_SLOTS, sizeof(*r->seen)))) {
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = store_open(&r->store, cfg->store_path, err)) ||
	    (rc = store_lock(r->store, err)))
		goto fail;
	if ((size_t)snprintf(db, sizeof(db), "%s/catalog.db",
			     store_path(r->store)) >= sizeof(db)) {
		rc = cmfs_err_set(err, -ENAMETOOLONG, "store path too long");
		goto fail;
	}
	later_init(r);
	sync_init(r);
	reaper_init(r);
	r->batch = cfg->sync == CONFIG_SYNC_BATCH;
	/* On a full disk, the reserve's room lets the catalog open. */
	store_reserve_release(r->store, 0);
	if ((rc = open_catalog(r, db, err)))
		goto fail;
	/* A catalog that keeps blobs has every commit's bytes once it
	 * returns: this host's files are copies, each synced as it is
	 * linked, and nothing is left for a recovery to check. */
	if (catalog_keeps_blobs(r->cat)) {
		r->batch = 0;
		store_cache_max(r->store, cfg->cache_max);
	}
	if ((rc = catalog_set_sync(r->cat, !r->batch, err)))
		goto fail;
	recover(r);
	settle_renames(r);
	retain(r, clock_now_ns());
	if ((rc = sweep(r, err)))
		goto fail;
	if (store_reserve_take(r->store))
		repo_log(r, LOG_WARNING,
			 "store %s: too full to keep its reserve for deletes; "
			 "taken when there is room",
			 store_path(r->store));
	r->sync.quiet = 0; /* from here on, a thread may sync */
	*out = r;
	return 0;
fail:
	repo_close(r);
	return rc;
}

/* A line of the re-inspections, into the daemon's log. */
static void reinspect_log(void *arg, int level, const char *line)
{
	repo_log(arg, level, "%s", line);
}

void repo_background(struct repo *r)
{
	struct cmfs_err err = CMFS_ERR_INIT;

	if (reinspect_start(&r->reinspect, r->cat, r->store, &r->insp,
			    reinspect_log, r, &err))
		repo_log(r, LOG_WARNING,
			 "blobs inspected by an older cmfs are not inspected "
			 "again: %s", cmfs_err_msg(&err));
}

void repo_close(struct repo *r)
{
	struct label *l, *next;

	if (!r)
		return;
	reinspect_stop(r->reinspect);
	if (r->gate && r->cat) /* every count still open, written */
		events_gate_tick(r->gate, clock_now_ns(), 1, gate_emit, r);
	later_stop(r);
	sync_stop(r);
	reaper_stop(r);
	/* The next mount may find the disk full: the reserve lets it open.
	 * (A repo with a catalog holds the store's lock.) */
	if (r->cat)
		store_reserve_take(r->store);
	catalog_close(r->cat);
	store_close(r->store);
	resolve_cache_free(r->resolved);
	for (l = r->scratch; l; l = next) {
		next = l->next;
		free(l->env);
		free(l->file);
		free(l->key);
		free(l->value);
		free(l);
	}
	events_gate_free(r->gate);
	free(r->seen);
	pthread_mutex_destroy(&r->gc_lock);
	pthread_mutex_destroy(&r->scratch_lock);
	budget_release(&r->insp);
	pthread_mutex_destroy(&r->seen_lock);
	free(r->mountpoint);
	free(r);
}

void repo_set_config(struct repo *r, const struct config *cfg)
{
	__atomic_store_n(&r->cfg, cfg, __ATOMIC_RELEASE);
}

/* Resolutions are cached by configuration address: forget them all. */
void repo_config_retire(struct repo *r)
{
	resolve_cache_clear(r->resolved);
}

const struct config *repo_config(const struct repo *r)
{
	return __atomic_load_n(&r->cfg, __ATOMIC_ACQUIRE);
}

struct catalog *repo_catalog(struct repo *r)
{
	return r->cat;
}

uint64_t repo_generation(struct repo *r)
{
	return catalog_generation(r->cat);
}

int repo_watch(struct repo *r, catalog_watch_fn fn, void *arg,
	       struct cmfs_err *err)
{
	return catalog_watch(r->cat, fn, arg, err);
}

void repo_unwatch(struct repo *r)
{
	catalog_unwatch(r->cat);
}

int repo_env_get(struct repo *r, const char *env, struct catalog_env *out)
{
	return catalog_env_get(r->cat, env, out, NULL);
}

int repo_art_latest(struct repo *r, const char *env, const char *name,
		    struct catalog_version *out)
{
	struct catalog_env e;
	struct catalog_artifact a;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	if (!rc)
		rc = catalog_art_get(r->cat, e.id, name, &a, NULL);
	if (!rc)
		*out = a.latest;
	return rc;
}

int repo_ver_get(struct repo *r, const char *env, const char *name,
		 int64_t n, struct catalog_version *out)
{
	struct catalog_env e;
	struct catalog_artifact a;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	if (!rc)
		rc = catalog_art_get(r->cat, e.id, name, &a, NULL);
	if (!rc && a.latest.n == n) {
		/* The artifact's row holds it: one question less, and the
		 * one a catalog out of reach may still answer (catalog.c). */
		*out = a.latest;
		return 0;
	}
	return rc ? rc : catalog_ver_get(r->cat, a.id, n, out, NULL);
}

int repo_table_get(struct repo *r, const char *env, const char *name,
		   struct catalog_table *out)
{
	struct catalog_env e;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	return rc ? rc : catalog_table_get(r->cat, e.id, name, out, NULL);
}

/* A listing's callback and its argument, for the catalog's rows. */
struct list_names {
	int (*fn)(void *arg, const char *name);
	int (*num)(void *arg, int64_t n);
	void *arg;
};

static int list_env_row(void *arg, const struct catalog_env *e)
{
	struct list_names *l = arg;

	return l->fn(l->arg, e->name);
}

static int list_art_row(void *arg, const struct catalog_artifact *a)
{
	struct list_names *l = arg;

	return l->fn(l->arg, a->name);
}

static int list_ver_row(void *arg, const struct catalog_version *v)
{
	struct list_names *l = arg;

	return l->num(l->arg, v->n);
}

static int list_table_row(void *arg, const struct catalog_table *t)
{
	struct list_names *l = arg;

	return l->fn(l->arg, t->name);
}

int repo_env_list(struct repo *r, int (*fn)(void *arg, const char *name),
		  void *arg)
{
	struct list_names l = { fn, NULL, arg };

	return catalog_env_list(r->cat, list_env_row, &l, NULL);
}

int repo_art_list(struct repo *r, const char *env,
		  int (*fn)(void *arg, const char *name), void *arg)
{
	struct list_names l = { fn, NULL, arg };
	struct catalog_env e;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	return rc ? rc : catalog_art_list(r->cat, e.id, list_art_row, &l, NULL);
}

int repo_ver_list(struct repo *r, const char *env, const char *name,
		  int (*fn)(void *arg, int64_t n), void *arg)
{
	struct list_names l = { NULL, fn, arg };
	struct catalog_env e;
	struct catalog_artifact a;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	if (!rc)
		rc = catalog_art_get(r->cat, e.id, name, &a, NULL);
	return rc ? rc : catalog_ver_list(r->cat, a.id, list_ver_row, &l, NULL);
}

int repo_table_list(struct repo *r, const char *env,
		    int (*fn)(void *arg, const char *name), void *arg)
{
	struct list_names l = { fn, NULL, arg };
	struct catalog_env e;
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	return rc ? rc
		  : catalog_table_list(r->cat, e.id, list_table_row, &l, NULL);
}

struct store *repo_store(struct repo *r)
{
	return r->store;
}

int repo_blob_open(struct repo *r, const struct catalog_version *v, int *out,
		   struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	int rc = blob_open(r->store, r->cat, v->sha256, v->size, out, &e2);

	/* A version the catalog holds whose bytes are not there is damage,
	 * not a missing name: EIO, and the operator is told. */
	if (rc == -ENOENT) {
		repo_log(r, LOG_ERR,
			 "version %lld (artifact id %lld): blob %s is missing "
			 "from the store: run cmfs fsck",
			 (long long)v->n, (long long)v->artifact_id, v->sha256);
		return cmfs_err_set(err, -EIO,
				    "blob %s of version %lld is missing: run "
				    "cmfs fsck",
				    v->sha256, (long long)v->n);
	}
	return rc ? cmfs_err_set(err, rc, "%s", e2.msg) : 0;
}

/* Look up environment `name`, with a message when it is missing. */
int env_get(struct repo *r, const char *name, struct catalog_env *out,
		   struct cmfs_err *err)
{
	int rc = catalog_env_get(r->cat, name, out, err);

	if (rc == -ENOENT)
		return cmfs_err_set(err, rc, "environment %s does not exist",
				    name);
	return rc;
}

int repo_env_create(struct repo *r, const struct repo_who *who,
		    const char *name, struct cmfs_err *err)
{
	struct event e;
	int rc;

	/* A bad name is no environment: the line says env=- and names it
	 * as its object. */
	rc = name_env_check(name, err);
	event_init(&e, clock_now_ns(), who->uid, rc ? NULL : name, "mkdir");
	if (rc)
		event_add(&e, "object", name);
	if (!rc) {
		rc = begin(r, err);
		if (!rc) {
			struct cmfs_err e2 = CMFS_ERR_INIT;

			rc = catalog_env_add(r->cat, name, who->uid,
					     clock_now_ns(), NULL, &e2);
			if (rc == -EEXIST)
				cmfs_err_set(err, rc,
					     "environment %s exists", name);
			else if (rc)
				cmfs_err_set(err, rc, "%s", e2.msg);
			if (!rc)
				record(r, &e, name, 0, NULL);
			rc = end(r, rc, err);
		}
	}
	/* A bad name has no events file to go to: the daemon log only. */
	if (rc)
		record(r, &e, rc == -EINVAL ? NULL : name, rc, err);
	event_release(&e);
	return rc;
}

int repo_env_remove(struct repo *r, const struct repo_who *who,
		    const char *name, struct cmfs_err *err)
{
	struct catalog_env env;
	struct event e;
	int rc;

	room_to_free(r);
	event_init(&e, clock_now_ns(), who->uid, name, "rmdir");
	rc = begin(r, err);
	if (!rc) {
		rc = env_get(r, name, &env, err);
		if (!rc)
			rc = catalog_env_del(r->cat, env.id, err);
		if (rc == -ENOTEMPTY)
			cmfs_err_set(err, rc,
				     "environment %s holds artifacts or "
				     "tables: remove them first", name);
		if (!rc)
			record(r, &e, name, 0, NULL);
		rc = end(r, rc, err);
	}
	if (!rc) {
		store_scratch_drop_env(r->store, name);
		repo_scratch_label_move(r, name, NULL, NULL);
	} else if (rc != -ENOENT) {
		record(r, &e, name, rc, err);
	}
	event_release(&e);
	return rc;
}

static int collect_blob(void *arg, const struct catalog_version *v)
{
	return blob_list_add(arg, v->sha256);
}

/* Look up artifact `name` of `env` inside a transaction. */
int art_get(struct repo *r, const char *env, const char *name,
		   struct catalog_env *e, struct catalog_artifact *a,
		   struct cmfs_err *err)
{
	int rc = env_get(r, env, e, err);

	if (rc)
		return rc;
	rc = catalog_art_get(r->cat, e->id, name, a, err);
	if (rc == -ENOENT)
		return cmfs_err_set(err, rc, "%s: no such artifact", name);
	return rc;
}

int repo_art_remove(struct repo *r, const struct repo_who *who,
		    const char *env, const char *name, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct blob_list blobs = { NULL, 0 };
	struct event ev;
	int rc;

	room_to_free(r);
	event_init(&ev, clock_now_ns(), who->uid, env, "delete");
	event_add(&ev, "artifact", name);
	rc = begin(r, err);
	if (!rc) {
		rc = art_get(r, env, name, &e, &a, err);
		if (!rc)
			rc = catalog_ver_list(r->cat, a.id, collect_blob,
					      &blobs, err);
		if (!rc)
			rc = catalog_art_del(r->cat, a.id, err);
		if (!rc) {
			event_addf(&ev, "versions", "%lld",
				   (long long)a.nversions);
			record(r, &ev, env, 0, NULL);
		}
		rc = end(r, rc, err);
	}
	if (!rc)
		free_blobs(r, blobs.sha, blobs.n);
	else if (rc != -ENOENT)
		record(r, &ev, env, rc, err);
	free(blobs.sha);
	event_release(&ev);
	return rc;
}

/* Remove version `n` of `name`, as `action`, for `reason` (or NULL). */
int ver_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, int64_t n,
		      const char *action, const char *reason,
		      struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct catalog_version v;
	struct event ev;
	int rc;

	room_to_free(r);
	event_init(&ev, clock_now_ns(), who->uid, env, action);
	event_add(&ev, "artifact", name);
	event_addf(&ev, "version", "%lld", (long long)n);
	if (reason)
		event_add(&ev, "reason", reason);
	rc = begin(r, err);
	if (!rc) {
		rc = art_get(r, env, name, &e, &a, err);
		if (!rc)
			rc = catalog_ver_get(r->cat, a.id, n, &v, err);
		if (!rc)
			rc = a.nversions == 1
				     ? catalog_art_del(r->cat, a.id, err)
				     : catalog_ver_del(r->cat, a.id, n, err);
		if (!rc) {
			if (a.nversions == 1)
				event_add(&ev, "artifact-removed", "yes");
			record(r, &ev, env, 0, NULL);
		}
		rc = end(r, rc, err);
	}
	if (!rc)
		free_blobs(r, &v.sha256, 1);
	else if (rc != -ENOENT)
		record(r, &ev, env, rc, err);
	event_release(&ev);
	return rc;
}

int repo_ver_remove(struct repo *r, const struct repo_who *who,
		    const char *env, const char *name, int64_t n,
		    struct cmfs_err *err)
{
	return ver_remove(r, who, env, name, n, "delete-version", NULL, err);
}

/* ---- artifacts moved and renamed ---- */

/* Check that every version of artifact `id` is a zip archive. */
static int all_zip(void *arg, const struct catalog_version *v)
{
	struct repo *r = arg;
	struct jar_report *rep = NULL;
	int rc = catalog_insp_of(r->cat, v, &rep, NULL);

	jar_report_free(rep);
	return rc ? -EINVAL : 0;
}

int repo_art_move(struct repo *r, const struct repo_who *who,
		  const char *env, const char *from, const char *to,
		  struct cmfs_err *err)
{
	static const char why[] = "an artifact cannot become a scratch "
				  "file: copy it";
	struct catalog_version v;
	int rc;

	if (name_artifact_scratch(from) && name_artifact_scratch(to)) {
		rc = store_scratch_rename(r->store, env, 'a', from, to);
		if (!rc)
			repo_scratch_label_move(r, env, from, to);
		return rc;
	}
	if (name_artifact_scratch(from))
		return repo_scratch_commit(r, who, env, from, to, &v, err);
	if (!name_artifact_scratch(to))
		return repo_art_rename(r, who, env, from, to, err);
	repo_refused(r, who, env, "rename", from, -EPERM, why);
	return cmfs_err_set(err, -EPERM, "%s", why);
}

int repo_art_rename(struct repo *r, const struct repo_who *who,
		    const char *env, const char *from, const char *to,
		    struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a, old;
	struct blob_list blobs = { NULL, 0 };
	struct event ev;
	int rc, replaced = 0;

	room_to_free(r);
	event_init(&ev, clock_now_ns(), who->uid, env, "rename");
	event_add(&ev, "artifact", from);
	event_add(&ev, "to", to);
	rc = name_artifact_check(to, err);
	if (!rc)
		rc = begin(r, err);
	if (rc)
		goto out;
	rc = art_get(r, env, from, &e, &a, err);
	if (!rc && !strcmp(from, to)) {
		/* rename(2) onto itself does nothing. */
		rc = end(r, 0, err);
		event_release(&ev);
		return rc;
	}
	if (!rc && name_is_jar(to) &&
	    catalog_ver_list(r->cat, a.id, all_zip, r, NULL))
		rc = cmfs_err_set(err, -EINVAL,
				  "%s: not every version is a zip archive, so "
				  "it cannot be named %s", from, to);
	if (!rc && !catalog_art_get(r->cat, e.id, to, &old, NULL)) {
		rc = catalog_ver_list(r->cat, old.id, collect_blob, &blobs,
				      err);
		if (!rc)
			rc = catalog_art_del(r->cat, old.id, err);
		replaced = 1;
	}
	if (!rc)
		rc = catalog_art_rename(r->cat, a.id, to, err);
	if (!rc) {
		if (replaced)
			event_add(&ev, "replaced", "yes");
		record(r, &ev, env, 0, NULL);
	}
	rc = end(r, rc, err);
out:
	if (!rc)
		free_blobs(r, blobs.sha, blobs.n);
	else
		record(r, &ev, env, rc, err);
	free(blobs.sha);
	event_release(&ev);
	return rc;
}

/* ---- attributes ---- */

mode_t repo_mode(enum repo_area area, int dir)
{
	if (dir)
		return S_IFDIR | (area == REPO_AREA_FIXED ? 0555 : 0755);
	return S_IFREG | (area == REPO_AREA_FIXED ? 0444 : 0644);
}

/* st's three times, `ns` since 1970. */
static void stat_times(struct stat *st, int64_t ns)
{
	st->st_mtim.tv_sec = (time_t)(ns / 1000000000);
	st->st_mtim.tv_nsec = (long)(ns % 1000000000);
	st->st_ctim = st->st_atim = st->st_mtim;
}

void repo_ver_stat(const struct catalog_version *v, enum repo_area area,
		   struct stat *st)
{
	st->st_mode = repo_mode(area, 0);
	st->st_size = (off_t)v->size;
	st->st_uid = v->uid;
	stat_times(st, v->mtime);
	st->st_blocks = (st->st_size + 511) / 512;
}

int repo_table_stat(struct repo *r, const char *env, const char *name,
		    struct stat *st)
{
	struct catalog_table t;
	int rc = repo_table_get(r, env, name, &t);

	if (rc)
		return rc;
	st->st_mode = repo_mode(REPO_AREA_TABLES, 0);
	st->st_size = (off_t)t.size;
	st->st_uid = t.uid;
	stat_times(st, t.mtime);
	st->st_blocks = (st->st_size + 511) / 512;
	return 0;
}

void repo_settled(struct repo *r, uint64_t gen, int64_t ns)
{
	__atomic_store_n(&r->changed, ns, __ATOMIC_RELAXED);
	__atomic_store_n(&r->settled, gen, __ATOMIC_RELEASE);
}

uint64_t repo_settled_gen(struct repo *r)
{
	return __atomic_load_n(&r->settled, __ATOMIC_ACQUIRE);
}

/*
 * The modification time of a resolved file: when the catalog last
 * changed, as far as the mount settled it (now, if a change is not
 * settled yet).  Steady while nothing changes, so that the kernel keeps
 * the pages (it drops them when it sees a new time), and new after any
 * change that may have changed the bytes, for rsync and make.  A .sql
 * says when it was resolved: now.
 */
static int64_t resolved_mtime(struct repo *r, int sql)
{
	if (sql || catalog_generation(r->cat) > repo_settled_gen(r))
		return clock_now_ns();
	return __atomic_load_n(&r->changed, __ATOMIC_RELAXED);
}

int repo_resolved_stat(struct repo *r, const char *env, const char *name,
		       int sql, struct stat *st)
{
	struct catalog_table t;
	int rc = repo_table_get(r, env, name, &t);

	if (rc)
		return rc;
	st->st_mode = repo_mode(REPO_AREA_FIXED, 0);
	st->st_nlink = 1;
	st->st_size = (off_t)repo_resolved_size(r, env, name, sql);
	st->st_blocks = (st->st_size + 511) / 512;
	stat_times(st, resolved_mtime(r, sql));
	return 0;
}

int repo_table_text(struct repo *r, const char *env, const char *name,
		    struct buf *out, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_table t;
	struct catalog_table_def d;
	int rc = catalog_env_get(r->cat, env, &e, err);

	if (!rc)
		rc = catalog_table_get(r->cat, e.id, name, &t, err);
	if (!rc)
		rc = catalog_table_def(r->cat, t.id, &d, err);
	if (rc)
		return rc;
	rc = buf_adds(out, d.ddl);
	catalog_table_def_release(&d);
	return rc;
}
