/*
 * kcache.c - what the kernel caches of the tree, and when it must
 * forget it: the invalidation queue and its thread, changes made on other
 * hosts, and resolved files kept in the page cache (cmfs_settle()).
 */
#define _GNU_SOURCE
#include "ops_int.h"
#include "clock.h"

/* ---- Invalidation ---- */

/* Queue an invalidation: of `name` in `parent`, or (parent 0) of `ino`. */
static void inval_queue(struct cmfs *c, uint64_t parent, uint64_t ino,
			const char *name)
{
	struct inval *v = calloc(1, sizeof(*v));

	if (!v)
		return;
	v->parent = parent;
	v->ino = ino;
	if (name)
		snprintf(v->name, sizeof(v->name), "%s", name);
	pthread_mutex_lock(&c->q.lock);
	if (c->qtail)
		c->qtail->next = v;
	else
		c->qhead = v;
	c->qtail = v;
	thread_worker_wake(&c->q);
	pthread_mutex_unlock(&c->q.lock);
}

static void *inval_thread(void *arg)
{
	struct cmfs *c = arg;
	struct inval *v;
	int stop;

	pthread_mutex_lock(&c->q.lock);
	for (;;) {
		while (!c->qhead && !c->q.stop)
			thread_worker_wait(&c->q, THREAD_FOREVER);
		if (!c->qhead)
			break;
		v = c->qhead;
		c->qhead = v->next;
		if (!c->qhead)
			c->qtail = NULL;
		/* Shutting down: the kernel forgets everything anyway. */
		stop = c->q.stop;
		pthread_mutex_unlock(&c->q.lock);
		if (!stop && c->se && v->parent)
			fuse_lowlevel_notify_inval_entry(c->se, v->parent,
							 v->name,
							 strlen(v->name));
		else if (!stop && c->se && v->ino)
			fuse_lowlevel_notify_inval_inode(c->se, v->ino, 0, 0);
		free(v);
		pthread_mutex_lock(&c->q.lock);
	}
	pthread_mutex_unlock(&c->q.lock);
	return NULL;
}

int cmfs_inval_start(struct cmfs *c)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc;

	thread_worker_init(&c->q);
	pthread_mutex_init(&c->slock, NULL);
	c->epoch = 1;
	repo_settled(c->repo, repo_generation(c->repo),
		     (int64_t)c->started.tv_sec * 1000000000 +
			     c->started.tv_nsec);
	pthread_mutex_lock(&c->q.lock);
	rc = thread_worker_start(&c->q, inval_thread, c);
	pthread_mutex_unlock(&c->q.lock);
	if (!rc && repo_watch(c->repo, elsewhere, c, &err))
		repo_log(c->repo, LOG_ERR,
			 "changes made on other hosts will show late here: %s",
			 cmfs_err_msg(&err));
	return rc;
}

void cmfs_inval_quiesce(struct cmfs *c)
{
	repo_unwatch(c->repo);
	thread_worker_quit(&c->q);
	/* A ring's thread may still be answering a request, and its reply
	 * settling (cmfs_settle()), when the unmount closes /dev/fuse: it
	 * must not write a notification to that descriptor, which another
	 * file may have taken by then. */
	pthread_mutex_lock(&c->slock);
	c->quiet = 1;
	pthread_mutex_unlock(&c->slock);
}

void cmfs_inval_stop(struct cmfs *c)
{
	thread_worker_stop(&c->q);
	pthread_mutex_destroy(&c->slock);
	free(c->told);
	c->told = NULL;
	c->ntold = c->ctold = 0;
}

/*
 * The node of a directory of `env` (kind `k` among its children), if the
 * kernel knows it; no reference taken.
 */
static struct node *env_dir(struct cmfs *c, const char *env, const char *dir)
{
	struct node *n = path_find(c->paths, path_root(c->paths), "envs");

	if (n)
		n = path_find(c->paths, n, env);
	if (n && dir)
		n = path_find(c->paths, n, dir);
	return n;
}

/*
 * Artifact `name` of `env` has a new latest version, or is gone: the
 * kernel's attributes and pages of artifacts/<name> are stale.
 * `replaced`: the name names other bytes (or none), not the same bytes
 * moved there; a node of it that readers have open then keeps standing
 * for what they read (Identity): it leaves the name (path_detach()), and
 * the kernel is told to forget the name's entry, so that the next look-up
 * of it gets a new inode.
 *
 * Other entries are not invalidated: a notification that waits on a
 * directory lock cannot be interrupted, and if the daemon is killed then,
 * the kernel never lets the connection go.  Names in versions/ and
 * tables/resolved/ carry short cache times instead (entry_timeout_of()).
 * An artifact replaced while it is read has no other way to a new inode
 * but its entry's cache time, so it takes that risk, in the one case
 * where a reader would otherwise be cut short or see another version's
 * attributes.
 */
void inval_artifact(struct cmfs *c, const char *env, const char *name,
			   int replaced)
{
	struct node *arts = env_dir(c, env, "artifacts");
	struct node *n = NULL;
	uint64_t ino = 0;
	int detached = 0;

	if (!arts)
		return;
	path_lock(c->paths);
	n = path_find_locked(c->paths, arts, name);
	if (n && replaced && n->kind == N_ART && n->nopen) {
		path_detach(c->paths, n);
		detached = 1;
	}
	if (n)
		ino = path_ino(n);
	path_unlock(c->paths);
	if (ino)
		inval_queue(c, 0, ino, NULL);
	if (detached)
		inval_queue(c, path_ino(arts), 0, name);
}

/*
 * Artifact `name` of `env` is gone (removed, or moved away or onto): its
 * versions/<name> and the versions under it, whose numbers never name
 * anything again, may still be in the kernel's cache, which drops such
 * entries only when it looks the name up or lists it again, or runs short
 * of memory.  The node leaves the name (path_detach()), so that the next
 * look-up or listing of versions/<name> answers with a new inode: the
 * kernel then drops the old one and all under it, and forgets them.
 * Without that, a mount whose artifacts come and go holds every version
 * name it ever showed.  No entry invalidation: see inval_artifact().
 */
void forget_versions(struct cmfs *c, const char *env, const char *name)
{
	struct node *vers = env_dir(c, env, "versions");
	struct node *n;

	if (!vers)
		return;
	path_lock(c->paths);
	n = path_find_locked(c->paths, vers, name);
	if (n && n->kind == N_VDIR)
		path_detach(c->paths, n);
	path_unlock(c->paths);
}

/* A name the kernel holds, forgotten: its entry and its inode. */
static void forget_node(void *arg, struct node *n)
{
	struct cmfs *c = arg;

	if (n->parent && (n->kind == N_ENV || n->kind == N_ART ||
			  n->kind == N_TABLE)) {
		inval_queue(c, path_ino(n->parent), 0, n->name);
		inval_queue(c, 0, path_ino(n), NULL);
	}
}

/*
 * The catalog changed on another host (catalog_watch(), on its thread):
 * what the kernel keeps of the name is stale.  An artifact, table or
 * environment may be new (a negative entry), gone, or other bytes: its
 * entry and inode are invalidated, and resolved files settled as after
 * a change here.  env NULL, changes missed while the catalog's
 * connection was lost: every such name the kernel holds.
 */
void elsewhere(void *arg, const char *env, const char *name, int kind)
{
	struct cmfs *c = arg;
	struct node *dir;

	if (!env) {
		repo_log(c->repo, LOG_WARNING,
			 "catalog: changes from other hosts were missed while "
			 "the connection was lost: every name invalidated");
		path_walk(c->paths, forget_node, c);
	} else if (kind == 'e') {
		dir = path_find(c->paths, path_root(c->paths), "envs");
		if (dir)
			inval_queue(c, path_ino(dir), 0, env);
	} else if (kind == 'a' && (dir = env_dir(c, env, "artifacts"))) {
		inval_artifact(c, env, name, 0);
		inval_queue(c, path_ino(dir), 0, name);
	} else if (kind == 't' && (dir = env_dir(c, env, "tables"))) {
		char sql[160];

		snprintf(sql, sizeof(sql), "%s.sql", name);
		inval_queue(c, path_ino(dir), 0, sql);
	}
	cmfs_settle(c, 1);
}

/* ---- Resolved files in the page cache ---- */

/*
 * A job reads its table's resolved/<t>.jars at every start.  Read around
 * the page cache, that is OPEN, a READ, and a READ that finds the end;
 * kept there with its size, OPEN alone.  What the kernel keeps must never
 * be read after the change that made it stale has returned, and each open
 * reads one snapshot, whole, whatever changes meanwhile.
 *
 * Attributes (the size) are kept for attr_timeout.  A resolved file whose
 * attributes are about to be resolved goes on c->told first, and before
 * any reply goes out after the catalog changed (a new generation: every
 * reply passes backing.c's writev hook), cmfs_settle() makes the kernel
 * drop the attributes of all of them: a stat after the change asks again.
 * The kernel also ignores the attributes in the reply of any request sent
 * before that.  So the attributes it may hold as valid were resolved since
 * the last settle, on the node's epoch: `sizes` says which sizes those
 * were.  Attributes only: dropping pages waits for page locks, which a
 * READ queued behind this very thread may hold.
 *
 * Pages: node.cache holds the bytes they may hold.  The kernel has one
 * size and one page cache for every handle of the file, so one snapshot at
 * a time reads through them, and only where the kernel cannot hold
 * another size for it: an open of other bytes while handles read them,
 * or after a size of other bytes was told this epoch, reads around them
 * (direct I/O), as every open did before; while handles read through
 * them, attributes tell their size (not kept).  An open of the same bytes
 * keeps the pages (keep_cache), any other drops them.  The kernel drops
 * them too when it takes a new size or modification time (the time
 * changes with every change: repo_resolved_stat()).  A handle that reads
 * around them can still fill them, through a map: after one, the next
 * open drops them (`other`).  One mapped while another reads through the
 * pages can show that one its bytes: a map of a resolved file while the
 * catalog changes under a reader of it, which nothing does.
 *
 * The .sql beside it says when it was resolved, to the second: it is
 * always read around the page cache.  Where callers may see different
 * modes of it (a rule limits who reads its environment, and others than
 * the owner call), the kernel keeps no attributes, and none of this
 * applies.
 */

enum { SIZES_NONE, SIZES_ONE, SIZES_MANY };

/*
 * 1 if callers may differ in what they see of `n`'s environment: others
 * than the owner call, and a rule limits who reads there.
 */
int readers_limited(struct cmfs *c, const struct node *n)
{
	return shared(c) && repo_reads_limited(c->repo, n->env);
}

/*
 * 1 if the kernel may keep what it is told of resolved file `n`: all
 * callers see the same modes (only the owner calls, or no rule limits
 * who reads `n`'s environment: its mode is 0444 for all).
 */
static int pages_allowed(struct cmfs *c, const struct node *n)
{
	return cfg_of(c)->mount.attr_timeout > 0 && !readers_limited(c, n);
}

/* Put inode `ino` on c->told (table lock held).  0: out of memory. */
static int told_add(struct cmfs *c, uint64_t ino)
{
	if (c->ntold == c->ctold) {
		size_t cap = c->ctold ? 2 * c->ctold : 64;
		uint64_t *t = realloc(c->told, cap * sizeof(*t));

		if (!t)
			return 0;
		c->told = t;
		c->ctold = cap;
	}
	c->told[c->ntold++] = ino;
	return 1;
}

/*
 * Resolved file `n` is about to be resolved for its attributes: on
 * c->told first, so that a change after the resolution read the
 * generation is settled.  0: the kernel may not keep them (nothing is
 * kept here, or out of memory).
 */
int cache_tell(struct cmfs *c, struct node *n)
{
	struct node_cache *nc;
	int ok;

	if (n->kind != N_RJARS || !pages_allowed(c, n))
		return 0;
	path_lock(c->paths);
	if (!n->cache)
		n->cache = calloc(1, sizeof(*n->cache));
	nc = n->cache;
	if (nc && nc->epoch != c->epoch && told_add(c, path_ino(n))) {
		nc->epoch = c->epoch;
		nc->sizes = SIZES_NONE;
	}
	ok = nc && nc->epoch == c->epoch;
	path_unlock(c->paths);
	return ok;
}

/*
 * Resolved file `n` resolved to *size bytes, about to be told; `told`:
 * cache_tell() said yes.  While handles read pages of bytes of another
 * size, *size becomes theirs.  Returns how long the kernel may keep it.
 * (A size the kernel takes that is not its own drops the pages there.)
 */
double cache_sized(struct cmfs *c, struct node *n, int told,
			  uint64_t *size)
{
	struct node_cache *nc;
	double keep = told ? cfg_of(c)->mount.attr_timeout : 0;

	path_lock(c->paths);
	nc = n->cache;
	if (nc && nc->data && nc->len != *size && nc->npaged) {
		*size = nc->len;
		keep = 0;
	}
	/* Failed, nothing to read, or settled since cache_tell(). */
	if (!*size || (keep && nc->epoch != c->epoch))
		keep = 0;
	/* Sizes not kept are not the kernel's for long: a read past them
	 * asks again. */
	if (keep) {
		if (nc->sizes == SIZES_NONE)
			nc->size = *size;
		nc->sizes = nc->sizes == SIZES_NONE || nc->size == *size
				    ? SIZES_ONE
				    : SIZES_MANY;
	}
	path_unlock(c->paths);
	return keep;
}

void cmfs_settle(struct cmfs *c, int force)
{
	uint64_t gen, *inos;
	size_t n, i;

	if (!c->repo || !c->se)
		return;
	gen = repo_generation(c->repo);
	if (!force && repo_settled_gen(c->repo) >= gen)
		return;
	pthread_mutex_lock(&c->slock);
	gen = repo_generation(c->repo);
	if (!c->quiet && (force || repo_settled_gen(c->repo) < gen)) {
		/* Told after this: resolved under `gen` or later. */
		path_lock(c->paths);
		inos = c->told;
		n = c->ntold;
		c->told = NULL;
		c->ntold = c->ctold = 0;
		c->epoch++;
		path_unlock(c->paths);
		for (i = 0; i < n; i++)
			fuse_lowlevel_notify_inval_inode(c->se, inos[i], -1, 0);
		free(inos);
		repo_settled(c->repo, gen, clock_now_ns());
	}
	pthread_mutex_unlock(&c->slock);
}

/* 1 if the kernel may hold as valid a size of resolved file `nc` other
 * than `len` (table lock held). */
static int other_size_kept(const struct cmfs *c, const struct node_cache *nc,
			   size_t len)
{
	return nc->epoch == c->epoch &&
	       (nc->sizes == SIZES_MANY ||
		(nc->sizes == SIZES_ONE && nc->size != len));
}

/*
 * Handle `f`, a snapshot of resolved file `n`: 1 if it reads through the
 * page cache (*keep: what is there may stay), 0 if around it.
 */
int cache_open(struct cmfs *c, struct node *n, struct fh *f, int *keep)
{
	struct node_cache *nc;
	int same, paged = 0;

	*keep = 0;
	path_lock(c->paths);
	nc = n->kind == N_RJARS && pages_allowed(c, n) ? n->cache : NULL;
	same = nc && nc->data && nc->len == f->data.len &&
	       (!nc->len || !memcmp(nc->data, f->data.data, nc->len));
	if (nc && !nc->ndirect && (same || !nc->npaged) &&
	    !other_size_kept(c, nc, f->data.len)) {
		*keep = same && !nc->other;
		paged = same;
		if (!same) {
			char *d = malloc(f->data.len ? f->data.len : 1);

			if (d) {
				/* (no bytes: no buffer to copy from) */
				if (f->data.len)
					memcpy(d, f->data.data, f->data.len);
				free(nc->data);
				nc->data = d;
				nc->len = f->data.len;
				paged = 1;
			}
		}
		if (paged && !*keep)
			nc->other = 0; /* the open drops the pages */
	}
	if (paged)
		nc->npaged++;
	else if (n->cache)
		n->cache->ndirect++;
	f->paged = paged ? 1 : n->cache ? -1 : 0;
	path_unlock(c->paths);
	return paged;
}

/* Handle `f` is gone (table lock held). */
void cache_close(struct fh *f)
{
	struct node_cache *nc = f->node->cache;

	if (f->paged > 0)
		nc->npaged--;
	else if (f->paged < 0 && !--nc->ndirect)
		nc->other = 1; /* a private map of it may have filled pages */
}

/*
 * How long the kernel may keep a name found in a directory of kind `k`:
 * names in versions/ and resolved/ come and go with writes under other
 * names, so they are kept at most a second, and their absence not at all.
 */
double entry_timeout_of(struct cmfs *c, enum node_kind k, int found)
{
	const struct config *cfg = cfg_of(c);
	double t =
		found ? cfg->mount.entry_timeout : cfg->mount.negative_timeout;

	if (k == N_VERS || k == N_VDIR || k == N_RESOLVED)
		return found && t > 1 ? 1 : found ? t : 0;
	return t;
}

struct fh *fh_of(struct fuse_file_info *fi)
{
	return fi ? (struct fh *)(uintptr_t)fi->fh : NULL;
}
