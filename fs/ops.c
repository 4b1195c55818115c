/*
 * ops.c - the FUSE low-level operations: each handler maps an inode and
 * a name onto a core call and replies.  No policy lives here: names,
 * limits, labels and commits are repo.c's; this file knows only the shape
 * of the tree (path.c) and what the kernel expects of a file system.
 *
 * File handles (struct fh) come in kinds:
 *   FH_BLOB     a committed version, read from its blob (page cache kept)
 *   FH_UPLOAD   an artifact opened for writing: a staged upload
 *   FH_SCRATCH  a scratch file: its backing file in the store
 *   FH_TEXT     a table opened for writing: the text, parsed at commit
 *   FH_SNAP     a snapshot taken at open (a table's text, a resolution)
 *   FH_DIR      a directory listing taken at opendir
 *   FH_EVENTS   the events log up to its size at open, read on demand
 * Commits happen at flush (so close() reports a refusal), at fsync, and at
 * release when no flush came.
 *
 * Caching: cmfs is the only writer of its tree, so the kernel may keep
 * names and attributes for long.  Where a change made through one name
 * shows at another, the affected names carry short cache times
 * (versions/ and resolved/, entry_timeout_of()), and an artifact whose
 * latest version changed has its inode invalidated from a thread of its
 * own, outside any request.  Entry invalidations wait on directory locks,
 * which a killed daemon can turn into a mount the kernel never releases:
 * only an artifact replaced while readers have it open has its entry
 * invalidated (inval_artifact()).
 */
#define _GNU_SOURCE
#include "cmfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <syslog.h>
#include <unistd.h>

#include "buf.h"
#include "name.h"

#define DIR_CAP ((size_t)1 << 30)

enum fh_kind {
	FH_BLOB, FH_UPLOAD, FH_SCRATCH, FH_TEXT, FH_SNAP, FH_DIR, FH_EVENTS
};

struct fh {
	enum fh_kind kind;
	struct node *node;
	int fd;				/* FH_BLOB, FH_SCRATCH */
	int32_t backing;		/* FH_BLOB: the kernel reads fd */
	int counted;			/* in node.nreaders (backing.c) */
	struct repo_upload *up;		/* FH_UPLOAD */
	struct buf data;		/* FH_TEXT, FH_SNAP, FH_DIR */
	uint64_t size;			/* FH_EVENTS: the log's size at open */
	int dirty;			/* FH_TEXT: not yet committed */
	int wrote;			/* bytes written since open */
	int refused;			/* the last commit was refused */
	int creator;			/* opened by the create of its node */
	int failed;			/* FH_TEXT: a write failed */
	int paged;			/* FH_SNAP of N_RJARS: 1 read through
					 * the page cache, -1 around it, as
					 * counted in node.cache */
	struct catalog_version ver;	/* FH_BLOB: the version it reads */
	int opened;			/* FH_BLOB: counted in node.nopen */
	struct repo_who who;		/* who opened it: the uploader */
	struct fh *wnext;		/* node's list of writers */
	unsigned users;			/* (paths lock) live_writer()'s
					 * callers holding it */
	int gone;			/* (paths lock) released: its last
					 * user frees it */
	pthread_mutex_t lock;		/* serialises use of this handle */
};

static struct cmfs *cm(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct repo_who who_of(fuse_req_t req)
{
	const struct fuse_ctx *x = fuse_req_ctx(req);
	struct repo_who w = { x->uid, x->gid, x->pid, 0, NULL };

	return w;
}

static struct node *nd(fuse_req_t req, fuse_ino_t ino)
{
	return path_node(cm(req)->paths, ino);
}

/* The configuration in force: SIGHUP swaps it (main.c, reload). */
static const struct config *cfg_of(struct cmfs *c)
{
	return __atomic_load_n(&c->cfg, __ATOMIC_ACQUIRE);
}

/* 1 where callers see different modes: the kernel keeps no attributes. */
static int shared(struct cmfs *c)
{
	return __atomic_load_n(&c->shared, __ATOMIC_RELAXED);
}

/* ---- Access ---- */

/* The area of a node of kind `k`: what decides the right its change needs. */
static enum repo_area area_of(enum node_kind k)
{
	switch (k) {
	case N_ARTS:
	case N_ART:
	case N_ASCRATCH:
		return REPO_AREA_ARTIFACTS;
	case N_TABLES:
	case N_TABLE:
	case N_TSCRATCH:
		return REPO_AREA_TABLES;
	case N_VERS:
	case N_VDIR:
	case N_VER:
	case N_RESOLVED:
	case N_RJARS:
	case N_RSQL:
	case N_EVENTS:
		return REPO_AREA_FIXED;
	case N_ROOT:
		return REPO_AREA_ROOT;
	default:
		return REPO_AREA_ENVS;
	}
}

/* The right operation `op` on a node of kind `k` needs. */
static enum config_right right_of(enum node_kind k, enum repo_op op)
{
	return repo_right(area_of(k), op, k == N_ART || k == N_VER);
}

/*
 * The caller of `req`, with its supplementary groups in `groups` (64 of
 * them) when access rules could need them: reading them costs a read of
 * /proc.
 */
static struct repo_who caller(fuse_req_t req, gid_t *groups)
{
	struct repo_who w = who_of(req);
	int n;

	if (repo_rules_need_groups(cm(req)->repo)) {
		n = fuse_req_getgroups(req, 64, groups);
		w.ngroups = n > 0 ? (size_t)(n > 64 ? 64 : n) : 0;
		w.groups = groups;
	}
	return w;
}

/* 1 if the caller of `req` holds `right` in `env` (NULL: none). */
static int holds(fuse_req_t req, const char *env, enum config_right right)
{
	gid_t groups[64];
	struct repo_who w = caller(req, groups);

	return repo_may(cm(req)->repo, &w, env, right);
}

/*
 * 0 if the caller holds `right` in `env`, else -EACCES, written to events
 * (or the daemon log outside an environment) with the caller's uid.
 */
static int gate(fuse_req_t req, const char *env, enum config_right right,
		const char *action, const char *object)
{
	gid_t groups[64];
	struct repo_who w = caller(req, groups);

	return repo_authorise(cm(req)->repo, &w, env, right, action, object);
}

/*
 * Modes that agree with what the caller may do: no write bits without
 * the right to change the node, no read bits without read.
 */
static void fit_mode(fuse_req_t req, const struct node *n, struct stat *st)
{
	if (n->kind == N_ROOT)
		return;
	if (!holds(req, n->kind == N_ENVS ? NULL : n->env,
		   right_of(n->kind, REPO_OP_CHANGE)))
		st->st_mode &= ~(mode_t)0222;
	if (!holds(req, n->kind == N_ENVS ? NULL : n->env,
		   right_of(n->kind, REPO_OP_READ)))
		st->st_mode &= ~(mode_t)0555;
}

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

static void elsewhere(void *arg, const char *env, const char *name,
		      int kind);

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
static void inval_artifact(struct cmfs *c, const char *env, const char *name,
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
static void elsewhere(void *arg, const char *env, const char *name, int kind)
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
static int readers_limited(struct cmfs *c, const struct node *n)
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
static int cache_tell(struct cmfs *c, struct node *n)
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
static double cache_sized(struct cmfs *c, struct node *n, int told,
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
	if (force || repo_settled_gen(c->repo) < gen) {
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
		repo_settled(c->repo, gen, repo_now());
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
static int cache_open(struct cmfs *c, struct node *n, struct fh *f, int *keep)
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
static void cache_close(struct fh *f)
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
static double entry_timeout_of(struct cmfs *c, enum node_kind k, int found)
{
	const struct config *cfg = cfg_of(c);
	double t =
		found ? cfg->mount.entry_timeout : cfg->mount.negative_timeout;

	if (k == N_VERS || k == N_VDIR || k == N_RESOLVED)
		return found && t > 1 ? 1 : found ? t : 0;
	return t;
}

static struct fh *fh_of(struct fuse_file_info *fi)
{
	return fi ? (struct fh *)(uintptr_t)fi->fh : NULL;
}

/* ---- Identity ---- */

/*
 * An inode of a version stands for that version's bytes for as long as
 * the kernel holds it: versions/<name>/<n><ext> pins its version at its
 * first look-up (node.pin), and its attributes, user.cmfs.* and reads
 * are that version's, through a rename of the artifact, a new upload or
 * the version's removal while a handle has it open (then with no links,
 * as an unlinked file's).  Numbers are never reused (catalog.h), so the
 * name names those bytes or nothing.
 *
 * artifacts/<name> is the latest version, whichever it is now; a handle
 * opened for reading reads the version it opened, whole.  The kernel
 * keeps one size per inode, and cuts reads through its page cache at it:
 * an upload's open and writes change it, as does the reply to any stat
 * of the name.  So readers of the latest read around the pages (direct
 * I/O), which the kernel does not cut at its size; and when the name
 * comes to name other bytes while readers have its inode open (an
 * upload's commit, a truncate, rm, a rename onto it), that inode stays
 * theirs: it leaves the name (node.replaced, inval_artifact()), shows the
 * version they read (node.read, with no link) and user.cmfs.* of it, and
 * the next look-up of the name gets a new inode.  A handle's own
 * GETATTR (lseek to the end) gets its version's attributes.
 */

/*
 * The version N_VER node `n` stands for (*out), pinned at the first call
 * (*gone: the catalog has it no more, but a handle holds it open).
 * -ENOENT when it is not there for this inode.
 */
static int ver_of(struct cmfs *c, struct node *n, struct catalog_version *out,
		  int *gone)
{
	struct catalog_version v;
	int rc = repo_ver_get(c->repo, n->env, n->obj, n->ver, &v);

	*gone = 0;
	path_lock(c->paths);
	if (!rc && n->pin && strcmp(n->pin->sha256, v.sha256))
		rc = -ENOENT; /* other bytes: not what this inode is */
	if (!rc && !n->pin && (n->pin = malloc(sizeof(*n->pin))))
		*n->pin = v;
	if (rc == -ENOENT && n->pin && n->nopen) {
		v = *n->pin;
		*gone = 1;
		rc = 0;
	}
	path_unlock(c->paths);
	if (!rc)
		*out = v;
	return rc;
}

/* 1 if attributes `st` are those of version `v` (its size and time). */
static int same_version(const struct stat *st, const struct catalog_version *v)
{
	return st->st_size == (off_t)v->size &&
	       st->st_mtim.tv_sec == (time_t)(v->mtime / 1000000000) &&
	       st->st_mtim.tv_nsec == (long)(v->mtime % 1000000000);
}

/*
 * Artifact node `n` is replaced, or not in the catalog: if readers still
 * have it open, the version they read into *out (and 1): what fstat(2)
 * of a removed file shows, with no link.  0 otherwise.
 */
static int art_gone(struct cmfs *c, const struct node *n,
		    struct catalog_version *out)
{
	int open;

	path_lock(c->paths);
	open = n->nopen && n->read;
	if (open)
		*out = *n->read;
	path_unlock(c->paths);
	return open;
}

/* 1 if artifact node `n` left its name (Identity). */
static int art_replaced(struct cmfs *c, const struct node *n)
{
	int r;

	path_lock(c->paths);
	r = n->replaced;
	path_unlock(c->paths);
	return r;
}

/*
 * A reader of artifact node `n` opened version `v` (table lock held, and
 * n->nopen counts it): what the node's readers read.  -ESTALE when it
 * left its name meanwhile, for other bytes than these: the open fails,
 * and the kernel looks the name up again.
 */
static int art_reads(struct node *n, const struct catalog_version *v)
{
	if (n->read && strcmp(n->read->sha256, v->sha256) && n->replaced)
		return -ESTALE;
	if (!n->read && !(n->read = malloc(sizeof(*n->read))))
		return -ENOMEM;
	*n->read = *v;
	return 0;
}

/* ---- Attributes ---- */

/* 1 if `n` has an upload open or a placeholder: it exists before its
 * first commit, and may yet vanish. */
static int being_written(struct cmfs *c, const struct node *n)
{
	int busy;

	path_lock(c->paths);
	busy = n->writer || n->placeholder;
	path_unlock(c->paths);
	return busy;
}

/* How long the kernel may keep the attributes of `n` (not N_RJARS:
 * attr_of() says). */
static double timeout_of(struct cmfs *c, const struct node *n)
{
	double t = cfg_of(c)->mount.attr_timeout;

	/* Computed files change without a write through their own name;
	 * a file being written may yet be refused and vanish. */
	if (n->kind == N_EVENTS || n->kind == N_RJARS || n->kind == N_RSQL ||
	    being_written(c, n))
		return 0;
	/* Modes follow the caller, but the kernel keeps one copy for all:
	 * where callers differ, it keeps none. */
	return shared(c) ? 0 : t;
}

static void set_time(struct stat *st, int64_t ns)
{
	st->st_mtim.tv_sec = (time_t)(ns / 1000000000);
	st->st_mtim.tv_nsec = (long)(ns % 1000000000);
	st->st_ctim = st->st_mtim;
	st->st_atim = st->st_mtim;
}

/* 1 if writer f holds bytes or labels not committed yet: what the file
 * shows until its close. */
static int writes(const struct fh *f)
{
	/* A writer whose commit was refused shows nothing: the file is
	 * what the catalog says, though the handle is not released yet. */
	return !f->refused &&
	       ((f->kind == FH_UPLOAD && repo_upload_dirty(f->up)) ||
		(f->kind == FH_TEXT && f->dirty));
}

/*
 * The newest writer of `n` whose bytes are not committed, or NULL.  It is
 * the caller's until fh_put(): another client's close may release it
 * meanwhile, and the last user then frees it.  What it holds may be
 * committed meanwhile too: writes() under f->lock says.
 */
static struct fh *live_writer(struct cmfs *c, struct node *n)
{
	struct fh *f;

	path_lock(c->paths);
	for (f = n->writer; f; f = f->wnext)
		if (writes(f))
			break;
	if (f)
		f->users++;
	path_unlock(c->paths);
	return f;
}

/*
 * The newest upload open on `n` whose last commit was not refused,
 * written or not, held as live_writer() holds it (fh_put()).
 */
static struct fh *open_upload(struct cmfs *c, struct node *n)
{
	struct fh *f;

	path_lock(c->paths);
	for (f = n->writer; f; f = f->wnext)
		if (f->kind == FH_UPLOAD && !f->refused)
			break;
	if (f)
		f->users++;
	path_unlock(c->paths);
	return f;
}

static void fh_destroy(struct cmfs *c, struct fh *f);

/* Done with a writer that live_writer() gave; NULL is ok. */
static void fh_put(struct cmfs *c, struct fh *f)
{
	int last;

	if (!f)
		return;
	path_lock(c->paths);
	last = --f->users == 0 && f->gone;
	path_unlock(c->paths);
	if (last)
		fh_destroy(c, f);
}

/* Environment `env`'s row, or -ENOENT (the catalog keeps the last one
 * each thread read: catalog_env_get). */
static int env_row(struct cmfs *c, const char *env, struct catalog_env *e)
{
	return repo_env_get(c->repo, env, e);
}

/* The attributes of `n`, and how long the kernel may keep them (*keep,
 * unless NULL). */
static int attr_of(struct cmfs *c, struct node *n, struct stat *st,
		   double *keep)
{
	struct catalog_env e;
	struct catalog_version v;
	struct catalog_table t;
	struct fh *w;
	uint64_t size;
	double kept;
	int told, gone, rc = 0;

	if (keep)
		*keep = timeout_of(c, n);
	memset(st, 0, sizeof(*st));
	st->st_ino = path_ino(n);
	st->st_uid = c->owner;
	st->st_gid = c->owner_gid;
	st->st_nlink = 1;
	st->st_mtim = st->st_ctim = st->st_atim = c->started;
	/*
	 * cp and cat move a file's st_blksize at a time: 256 KiB is 1,024
	 * WRITEs for 256 MiB (and, where uploads go through FUSE's page
	 * cache, as many security.capability look-ups).  Not 1 MiB: cp then
	 * gets a new mapping for its buffer at every file, two page faults
	 * of ~70 us each here, a quarter of a small upload's time (10,000
	 * small files: 20,314 faults in cp, against 316 at 256 KiB).  A
	 * directory's is what glibc sizes its getdents() buffer by: 1 MiB
	 * there made every READDIR a 1 MiB buffer, mapped and unmapped by
	 * malloc at each request (find took three times as long).
	 */
	st->st_blksize = path_is_dir(n->kind) ? 4096 : 256 << 10;
	if (n->kind >= N_ENV && n->kind != N_INVALID) {
		rc = env_row(c, n->env, &e);
		if (rc)
			return rc;
		set_time(st, e.ctime);
	}
	if (path_is_dir(n->kind)) {
		st->st_mode = repo_mode(area_of(n->kind), 1);
		st->st_nlink = 2;
	} else {
		st->st_mode = repo_mode(area_of(n->kind), 0);
	}
	switch (n->kind) {
	case N_ROOT:
	case N_ENV:
	case N_TABLES:
	case N_ARTS:
	case N_ENVS:
	case N_VERS:
	case N_RESOLVED:
		return 0;
	case N_VDIR:
		rc = repo_art_latest(c->repo, n->env, n->obj, &v);
		if (rc)
			return rc;
		st->st_uid = v.uid;
		set_time(st, v.mtime);
		return 0;
	case N_ART:
		if (n->placeholder)
			return 0;
		w = live_writer(c, n);
		if (w) {
			/* The writer sees its own bytes, as on a local disk
			 * (read without its lock: a write may be inspecting
			 * a large JAR under it). */
			st->st_size = (off_t)repo_upload_size(w->up);
			fh_put(c, w);
			return 0;
		}
		/* Replaced and read by nobody: a stat by name that came
		 * through it before the kernel forgot the entry looks the
		 * name up again (ESTALE). */
		rc = art_replaced(c, n)
			     ? -ESTALE
			     : repo_art_latest(c->repo, n->env, n->obj, &v);
		if ((rc == -ENOENT || rc == -ESTALE) && art_gone(c, n, &v)) {
			/* Replaced or removed while readers have it open:
			 * theirs, for good. */
			repo_ver_stat(&v, REPO_AREA_ARTIFACTS, st);
			st->st_nlink = 0;
			if (keep)
				*keep = 0;
			return 0;
		}
		/* An upload's handle, whose commit may have replaced it:
		 * the name's latest. */
		if (rc == -ESTALE && being_written(c, n))
			rc = repo_art_latest(c->repo, n->env, n->obj, &v);
		if (rc)
			return rc;
		repo_ver_stat(&v, REPO_AREA_ARTIFACTS, st);
		break;
	case N_VER:
		rc = ver_of(c, n, &v, &gone);
		if (rc)
			return rc;
		repo_ver_stat(&v, REPO_AREA_FIXED, st);
		if (gone)
			st->st_nlink = 0; /* removed, still open */
		return 0;
	case N_ASCRATCH:
	case N_TSCRATCH:
		rc = repo_scratch_stat(c->repo, n->env,
					n->kind == N_ASCRATCH ? 'a' : 't',
					n->obj, st);
		if (rc)
			return rc;
		st->st_uid = st->st_uid ? st->st_uid : c->owner;
		st->st_ino = path_ino(n);
		return 0;
	case N_TABLE:
		w = live_writer(c, n);
		if (w) {
			st->st_size = (off_t)w->data.len;
			fh_put(c, w);
			return 0;
		}
		rc = repo_table_stat(c->repo, n->env, n->obj, st);
		if (rc)
			return rc;
		break;
	case N_RJARS:
	case N_RSQL:
		rc = repo_table_get(c->repo, n->env, n->obj, &t);
		if (rc)
			return rc;
		told = cache_tell(c, n);
		rc = repo_resolved_stat(c->repo, n->env, n->obj,
					n->kind == N_RSQL, st);
		if (rc)
			return rc;
		/* While handles read pages of other bytes, their size. */
		size = (uint64_t)st->st_size;
		kept = n->kind == N_RJARS ? cache_sized(c, n, told, &size) : 0;
		if (keep)
			*keep = kept;
		st->st_size = (off_t)size;
		break;
	case N_EVENTS:
		if (repo_events_size(c->repo, n->env, &size) == 0)
			st->st_size = (off_t)size;
		st->st_mtim = st->st_ctim = st->st_atim = c->started;
		clock_gettime(CLOCK_REALTIME, &st->st_mtim);
		break;
	default:
		return -ENOENT;
	}
	st->st_blocks = (st->st_size + 511) / 512;
	return 0;
}

/* ---- Lookup and attributes ---- */

/* A negative entry the kernel may cache (see entry_timeout_of()). */
static void reply_noent(fuse_req_t req, const struct node *parent)
{
	struct cmfs *c = cm(req);
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	/* Not where a rule limits who reads: that a name is absent is the
	 * readers' to learn, and the kernel would tell anyone (a refused
	 * look-up is EACCES, whether the name is there or not). */
	if (parent->kind < N_ENV || !readers_limited(c, parent))
		e.entry_timeout = entry_timeout_of(c, parent->kind, 0);
	fuse_reply_entry(req, &e);
}

/*
 * Reply with `n`, whose reference is the kernel's now (forgotten if the
 * reply fails).  If `n` is not there: an error, or a negative entry in
 * `absent` (not NULL).
 */
static void reply_entry(fuse_req_t req, struct node *n,
			const struct node *absent)
{
	struct cmfs *c = cm(req);
	struct fuse_entry_param e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = attr_of(c, n, &e.attr, &e.attr_timeout);
	/* A name names what the catalog has: not what only a handle keeps
	 * (no link left, Identity). */
	if (!rc && (n->kind == N_VER || n->kind == N_ART) && !e.attr.st_nlink)
		rc = -ENOENT;
	if (rc) {
		path_forget(c->paths, n, 1);
		if (rc == -ENOENT && absent)
			reply_noent(req, absent);
		else
			fuse_reply_err(req, -rc);
		return;
	}
	fit_mode(req, n, &e.attr);
	e.ino = path_ino(n);
	e.generation = 1;
	e.entry_timeout = entry_timeout_of(c, n->parent->kind, 1);
	if (fuse_reply_entry(req, &e))
		path_forget(c->paths, n, 1);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cmfs *c = cm(req);
	struct node *p = nd(req, parent), *n;

	if (strlen(name) > 255) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	if (p->kind >= N_ENVS) {
		int rc = gate(req, p->kind == N_ENVS ? name : p->env,
			      right_of(p->kind, REPO_OP_READ), "read", name);

		if (rc) {
			fuse_reply_err(req, -rc);
			return;
		}
	}
	n = path_lookup(c->paths, p, name);
	if (!n) {
		reply_noent(req, p);
		return;
	}
	/* Not in the catalog while being written: not absent for good. */
	reply_entry(req, n, being_written(c, n) ? NULL : p);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	path_forget(cm(req)->paths, nd(req, ino), nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		path_forget(cm(req)->paths, nd(req, forgets[i].ino),
			    forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct cmfs *c = cm(req);
	struct node *n = nd(req, ino);
	struct stat st;
	double keep;
	int rc;

	/* What is in an environment is its readers' to see, as its
	 * listing is: a name the kernel still knows from another caller's
	 * look-up tells nothing to one who may not read.  (Only where a
	 * rule limits who reads: else everyone may, and the check would
	 * cost a read of /proc for the caller's groups.) */
	if (n->kind > N_ENV && n->kind != N_INVALID &&
	    readers_limited(c, n) &&
	    (rc = gate(req, n->env, right_of(n->kind, REPO_OP_READ), "stat",
		       n->name))) {
		fuse_reply_err(req, -rc);
		return;
	}
	rc = attr_of(c, n, &st, &keep);
	/* Through a handle that reads a version the latest is no more (a
	 * read past the size the kernel has): that version's, kept for no
	 * time (see Identity). */
	if (fh_of(fi) && fh_of(fi)->kind == FH_BLOB && n->kind == N_ART &&
	    (rc == -ENOENT || (!rc && !same_version(&st, &fh_of(fi)->ver)))) {
		const struct catalog_version *v = &fh_of(fi)->ver;

		if (rc) {
			memset(&st, 0, sizeof(st));
			st.st_ino = path_ino(n);
			st.st_gid = c->owner_gid;
			st.st_nlink = 1;
			st.st_blksize = 256 << 10;
			rc = 0;
		}
		repo_ver_stat(v, REPO_AREA_ARTIFACTS, &st);
		keep = 0;
	}
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	fit_mode(req, n, &st);
	fuse_reply_attr(req, &st, keep);
}

/* The refusal of a change in a place that cannot change. */
static int read_only(fuse_req_t req, struct node *n, const char *action,
		     const char *name)
{
	struct repo_who w = who_of(req);

	return repo_refuse_change(cm(req)->repo, &w, n->env,
				  area_of(n->kind), n->name, name, action);
}

/*
 * truncate(2) by name of artifact `n` while an upload of it is open (or
 * made by mknod): it applies to that upload, as truncate(2) of a file
 * that another process writes applies to the file it writes, so that
 * the writer's fstat and reads show it and its close commits it; a
 * version of its own would be replaced by that close.  0 or -errno when
 * it did; 1 when no upload is open.
 */
static int truncate_open(struct cmfs *c, struct node *n, off_t size)
{
	struct fh *f;
	int rc = 1;

	path_lock(c->paths);
	if (n->placeholder)
		rc = repo_upload_truncate(n->placeholder, size);
	path_unlock(c->paths);
	if (rc <= 0)
		return rc;
	f = open_upload(c, n);
	if (f) {
		pthread_mutex_lock(&f->lock);
		f->wrote = 1;
		rc = repo_upload_truncate(f->up, size);
		pthread_mutex_unlock(&f->lock);
	}
	fh_put(c, f);
	return rc;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct cmfs *c = cm(req);
	struct node *n = nd(req, ino);
	struct fh *f = fh_of(fi);
	struct repo_who w = who_of(req);
	struct cmfs_err err = CMFS_ERR_INIT;
	struct stat st;
	double keep;
	int rc = 0;

	if ((to_set & FUSE_SET_ATTR_SIZE) &&
	    (n->kind == N_ART || n->kind == N_ASCRATCH || n->kind == N_TABLE ||
	     n->kind == N_TSCRATCH))
		rc = gate(req, n->env, right_of(n->kind, REPO_OP_CHANGE),
			  "truncate",
			  n->name);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if ((n->kind == N_ASCRATCH || n->kind == N_TSCRATCH) &&
		    (rc = repo_scratch_fits(c->repo, &w, n->env, n->name,
					    "truncate",
					    (uint64_t)attr->st_size))) {
			/* Over max_scratch_size: refused. */
		} else if (n->kind == N_ASCRATCH || n->kind == N_TSCRATCH) {
			rc = f && f->fd >= 0
				     ? (ftruncate(f->fd, attr->st_size) ? -errno
									: 0)
				     : repo_scratch_truncate(
					       c->repo, n->env,
					       n->kind == N_ASCRATCH ? 'a'
								     : 't',
					       n->obj, attr->st_size);
		} else if (n->kind == N_ART && f && f->kind == FH_UPLOAD) {
			pthread_mutex_lock(&f->lock);
			f->wrote = 1;
			rc = repo_upload_truncate(f->up, attr->st_size);
			pthread_mutex_unlock(&f->lock);
			if (rc)
				repo_upload_truncate_refused(
					c->repo, &w, n->env, n->name,
					(uint64_t)attr->st_size, rc);
		} else if (n->kind == N_ART &&
			   (rc = truncate_open(c, n, attr->st_size)) <= 0) {
			/* Applied to the upload open on it (or failed). */
		} else if (n->kind == N_ART) {
			/* truncate(2) by name: a whole upload at once. */
			rc = repo_art_truncate(c->repo, &w, n->env, n->obj,
					       (uint64_t)attr->st_size, &err);
			if (!rc)
				inval_artifact(c, n->env, n->obj, 1);
		} else if (n->kind == N_TABLE && f && f->kind == FH_TEXT) {
			pthread_mutex_lock(&f->lock);
			if ((size_t)attr->st_size <= f->data.len) {
				f->data.len = (size_t)attr->st_size;
				if (f->data.data)
					f->data.data[f->data.len] = '\0';
			} else {
				while (!rc &&
				       f->data.len < (size_t)attr->st_size)
					rc = buf_addc(&f->data, '\0');
			}
			f->dirty = 1;
			f->wrote = 1;
			pthread_mutex_unlock(&f->lock);
		} else if (n->kind == N_TABLE) {
			rc = repo_table_truncate(c->repo, &w, n->env, n->name,
						 (uint64_t)attr->st_size);
		} else if (!path_is_dir(n->kind)) {
			rc = read_only(req, n, "truncate", NULL);
		} else {
			rc = -EISDIR;
		}
	}
	/* Times and modes of scratch files are theirs; elsewhere chmod,
	 * chown and utimens succeed and change nothing. */
	if (!rc && (n->kind == N_ASCRATCH || n->kind == N_TSCRATCH) &&
	    (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW |
		       FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW))) {
		struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
		int fd;

		if (to_set & FUSE_SET_ATTR_ATIME)
			ts[0] = attr->st_atim;
		if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			ts[0].tv_nsec = UTIME_NOW;
		if (to_set & FUSE_SET_ATTR_MTIME)
			ts[1] = attr->st_mtim;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			ts[1].tv_nsec = UTIME_NOW;
		if (!repo_scratch_open(c->repo, n->env,
					n->kind == N_ASCRATCH ? 'a' : 't',
					n->obj, O_RDONLY, 0, &fd)) {
			futimens(fd, ts);
			close(fd);
		}
	}
	if (!rc && (n->kind == N_ASCRATCH || n->kind == N_TSCRATCH) &&
	    (to_set & FUSE_SET_ATTR_MODE)) {
		int fd;

		if (!repo_scratch_open(c->repo, n->env,
					n->kind == N_ASCRATCH ? 'a' : 't',
					n->obj, O_RDONLY, 0, &fd)) {
			fchmod(fd, attr->st_mode & 07777);
			close(fd);
		}
	}
	if (!rc)
		rc = attr_of(c, n, &st, &keep);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	fit_mode(req, n, &st);
	fuse_reply_attr(req, &st, keep);
}

/* ---- Directories ---- */

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct cmfs *c = cm(req);
	struct node *p = nd(req, parent), *n;
	struct repo_who w = who_of(req);
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc;

	(void)mode;
	if (p->kind != N_ENVS) {
		fuse_reply_err(req, -read_only(req, p, "mkdir", name));
		return;
	}
	rc = gate(req, name, right_of(p->kind, REPO_OP_CHANGE), "mkdir", name);
	if (!rc)
		rc = repo_env_create(c->repo, &w, name, &err);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	n = path_lookup(c->paths, p, name);
	if (!n)
		fuse_reply_err(req, ENOMEM);
	else
		reply_entry(req, n, NULL);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cmfs *c = cm(req);
	struct node *p = nd(req, parent);
	struct repo_who w = who_of(req);
	struct cmfs_err err = CMFS_ERR_INIT;

	if (p->kind != N_ENVS) {
		fuse_reply_err(req, -read_only(req, p, "rmdir", name));
		return;
	}
	if (gate(req, name, right_of(p->kind, REPO_OP_REMOVE), "rmdir", name)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	fuse_reply_err(req, -repo_env_remove(c->repo, &w, name, &err));
}

/* Append one directory entry to a listing: type byte, name, NUL. */
static int list_add(struct buf *b, mode_t type, const char *name)
{
	int rc = buf_addc(b, (char)(type >> 12));

	return rc ? rc : buf_add(b, name, strlen(name) + 1);
}

static int list_dir_name(void *arg, const char *name)
{
	return list_add(arg, S_IFDIR, name);
}

static int list_file(void *arg, const char *name)
{
	return list_add(arg, S_IFREG, name);
}

/* Context for listing versions: the extension to give each number. */
struct ver_list {
	struct buf *b;
	const char *ext;
};

static int list_ver(void *arg, int64_t n)
{
	struct ver_list *l = arg;
	char name[300];

	snprintf(name, sizeof(name), "%lld%s", (long long)n, l->ext);
	return list_add(l->b, S_IFREG, name);
}

static int list_table(void *arg, const char *table)
{
	char name[140];

	snprintf(name, sizeof(name), "%s.sql", table);
	return list_add(arg, S_IFREG, name);
}

static int list_resolved(void *arg, const char *table)
{
	char name[140];
	int rc;

	snprintf(name, sizeof(name), "%s.jars", table);
	rc = list_add(arg, S_IFREG, name);
	snprintf(name, sizeof(name), "%s.sql", table);
	return rc ? rc : list_add(arg, S_IFREG, name);
}

/* The listing of directory `n`, taken whole at opendir. */
static int list_dir(struct cmfs *c, struct node *n, struct buf *b)
{
	struct catalog_env e;
	struct ver_list vl;
	int rc = 0;

	if ((rc = list_add(b, S_IFDIR, ".")) || (rc = list_add(b, S_IFDIR, "..")))
		return rc;
	if (n->kind >= N_ENV && (rc = env_row(c, n->env, &e)))
		return rc;
	switch (n->kind) {
	case N_ROOT:
		return list_add(b, S_IFDIR, "envs");
	case N_ENVS:
		return repo_env_list(c->repo, list_dir_name, b);
	case N_ENV:
		if ((rc = list_add(b, S_IFDIR, "artifacts")) ||
		    (rc = list_add(b, S_IFDIR, "versions")) ||
		    (rc = list_add(b, S_IFDIR, "tables")))
			return rc;
		return list_add(b, S_IFREG, "events");
	case N_ARTS:
		rc = repo_art_list(c->repo, n->env, list_file, b);
		return rc ? rc
			  : repo_scratch_list(c->repo, n->env,
					       'a', list_file, b);
	case N_VERS:
		return repo_art_list(c->repo, n->env, list_dir_name, b);
	case N_VDIR:
		vl.b = b;
		vl.ext = name_ext(n->obj);
		return repo_ver_list(c->repo, n->env, n->obj, list_ver, &vl);
	case N_TABLES:
		if ((rc = list_add(b, S_IFDIR, "resolved")) ||
		    (rc = repo_table_list(c->repo, n->env, list_table, b)))
			return rc;
		return repo_scratch_list(c->repo, n->env, 't',
					  list_file, b);
	case N_RESOLVED:
		return repo_table_list(c->repo, n->env, list_resolved, b);
	default:
		return -ENOTDIR;
	}
}

static struct fh *fh_new(enum fh_kind kind, struct node *n)
{
	struct fh *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->kind = kind;
	f->node = n;
	f->fd = -1;
	buf_init(&f->data, DIR_CAP);
	pthread_mutex_init(&f->lock, NULL);
	return f;
}

/*
 * Free `f`, which nobody else uses.  A request may still hold f->lock
 * after it has replied (a write inspects the upload after answering, a
 * read unlocks after its reply), and the kernel may send the RELEASE as
 * soon as that reply is in: the lock is waited for first.
 */
static void fh_destroy(struct cmfs *c, struct fh *f)
{
	pthread_mutex_lock(&f->lock);
	pthread_mutex_unlock(&f->lock);
	path_lock(c->paths);
	if (f->opened)
		f->node->nopen--;
	if (f->counted)
		backing_put_locked(c, f->node);
	if (f->paged)
		cache_close(f);
	path_release(c->paths, f->node);
	path_unlock(c->paths);
	if (f->fd >= 0)
		close(f->fd);
	repo_upload_free(f->up);
	buf_release(&f->data);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/*
 * The end of handle `f` (its RELEASE, or an open that failed): off its
 * node's writer list, so that no live_writer() finds it again, and freed
 * now or by the last caller of live_writer() that still holds it.
 */
static void fh_free(struct cmfs *c, struct fh *f)
{
	struct fh **p;
	int held;

	if (!f)
		return;
	path_lock(c->paths);
	for (p = &f->node->writer; *p; p = &(*p)->wnext)
		if (*p == f) {
			*p = f->wnext;
			break;
		}
	f->gone = 1;
	held = f->users != 0;
	path_unlock(c->paths);
	if (!held)
		fh_destroy(c, f);
}

/* Put `f` at the head of its node's writer list. */
static void fh_writer(struct cmfs *c, struct fh *f)
{
	path_lock(c->paths);
	f->wnext = f->node->writer;
	f->node->writer = f;
	path_unlock(c->paths);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct cmfs *c = cm(req);
	struct node *n = nd(req, ino);
	struct fh *f;
	int rc = n->kind == N_ROOT ? 0
				   : gate(req, n->kind == N_ENVS ? NULL : n->env,
					  right_of(n->kind, REPO_OP_READ), "list",
					  n->name);

	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	f = fh_new(FH_DIR, n);
	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rc = list_dir(c, n, &f->data);
	if (rc) {
		fh_free(c, f);
		fuse_reply_err(req, -rc);
		return;
	}
	fi->fh = (uintptr_t)f;
	fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fh *f = fh_of(fi);
	char *out = malloc(size), *p;
	size_t used = 0, at = 0;
	off_t i = 0;

	(void)ino;
	if (!out) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Entries are numbered from 1; `off` is the last one sent. */
	for (p = f->data.data; p && at < f->data.len; i++) {
		size_t len = strlen(p + 1);

		if (i >= off) {
			struct stat st;
			size_t n;

			memset(&st, 0, sizeof(st));
			st.st_mode = (mode_t)(unsigned char)p[0] << 12;
			/* readdir(3) skips entries whose d_ino is 0; the
			 * real number comes with the lookup. */
			st.st_ino = (ino_t)i + 2;
			n = fuse_add_direntry(req, out + used, size - used,
					      p + 1, &st, i + 1);
			if (n > size - used)
				break;
			used += n;
		}
		at += len + 2;
		p = f->data.data + at;
	}
	fuse_reply_buf(req, out, used);
	free(out);
}

/*
 * readdirplus: the listing with each entry's attributes, so that `ls -l`
 * costs one request per buffer instead of a lookup per name.  Every entry
 * handed over counts as a lookup; one that does not fit gives it back.
 */
static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	struct cmfs *c = cm(req);
	struct node *dir = nd(req, ino), *n;
	struct fh *f = fh_of(fi);
	struct fuse_entry_param e;
	char *out = malloc(size), *p;
	size_t used = 0, at = 0, len, sz;
	off_t i = 0;

	if (!out) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (p = f->data.data; p && at < f->data.len; i++) {
		len = strlen(p + 1);
		if (i >= off) {
			memset(&e, 0, sizeof(e));
			n = NULL;
			if (strcmp(p + 1, ".") && strcmp(p + 1, "..")) {
				n = path_lookup(c->paths, dir, p + 1);
				if (n &&
				    attr_of(c, n, &e.attr, &e.attr_timeout)) {
					/* Gone since opendir: skip it. */
					path_forget(c->paths, n, 1);
					n = NULL;
					goto next;
				}
			}
			if (n) {
				fit_mode(req, n, &e.attr);
				e.ino = path_ino(n);
				e.generation = 1;
				e.entry_timeout =
					entry_timeout_of(c, dir->kind, 1);
			} else {
				/* . and .. carry no entry (ino 0), but a
				 * number: readdir(3) skips an entry whose
				 * d_ino is 0, and ls -a showed neither. */
				e.attr.st_mode = S_IFDIR;
				e.attr.st_ino = path_ino(
					p[2] == '.' && dir->parent ? dir->parent
								   : dir);
			}
			sz = fuse_add_direntry_plus(req, out + used, size - used,
						    p + 1, &e, i + 1);
			if (sz > size - used) {
				if (n)
					path_forget(c->paths, n, 1);
				break;
			}
			used += sz;
		}
next:
		at += len + 2;
		p = f->data.data + at;
	}
	fuse_reply_buf(req, out, used);
	free(out);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	(void)ino;
	fh_free(cm(req), fh_of(fi));
	fuse_reply_err(req, 0);
}

/* ---- Files ---- */

static char dir_of(const struct node *n)
{
	return n->kind == N_ASCRATCH ? 'a' : 't';
}

/* Load the committed text of table `n` into `b`. */
static int table_text(struct cmfs *c, struct node *n, struct buf *b)
{
	struct cmfs_err err = CMFS_ERR_INIT;

	return repo_table_text(c->repo, n->env, n->obj, b, &err);
}

/*
 * Make the handle for opening node `n` with `flags`.  `created`: the file
 * is new (create), so an upload or a table starts empty.
 */
static int open_node(fuse_req_t req, struct node *n, int flags, int created,
		     mode_t mode, struct fuse_file_info *fi)
{
	struct cmfs *c = cm(req);
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_env e;
	struct catalog_version v;
	int acc = flags & O_ACCMODE, wr = acc != O_RDONLY;
	int trunc = created || (flags & O_TRUNC);
	struct fh *f = NULL;
	int rc = 0;

	if ((wr || (flags & O_TRUNC)) &&
	    (n->kind == N_ART || n->kind == N_ASCRATCH || n->kind == N_TABLE ||
	     n->kind == N_TSCRATCH))
		rc = gate(req, n->env, right_of(n->kind, REPO_OP_CHANGE),
			  created ? "create" : "write", n->name);
	else if (!wr)
		rc = gate(req, n->env, right_of(n->kind, REPO_OP_READ), "read",
			  n->name);
	if (rc)
		return rc;
	if (n->kind == N_ART && !created) {
		/* Another opener: its reads may leave pages of the
		 * latest in the kernel's cache.  A replaced node is no
		 * name's any more: the kernel looks the name up again
		 * (ESTALE) and opens what it names now (Identity). */
		path_lock(c->paths);
		n->solo = 0;
		rc = n->replaced ? -ESTALE : 0;
		path_unlock(c->paths);
		if (rc)
			return rc;
	}
	switch (n->kind) {
	case N_ART:
		if (wr || (flags & O_TRUNC)) {
			f = fh_new(FH_UPLOAD, n);
			if (f) {
				path_lock(c->paths);
				f->up = n->placeholder;
				n->placeholder = NULL;
				path_unlock(c->paths);
			}
			rc = !f	       ? -ENOMEM
			     : f->up ? 0
				     : repo_upload_begin(&f->up, c->repo,
							 n->env, n->obj, trunc,
							 &err);
			if (!rc)
				fh_writer(c, f);
			/*
			 * The bytes go to the daemon, not through FUSE's page
			 * cache: no copy into its small pages, and no
			 * security.capability look-up before each write
			 * (a GETXATTR request; direct writes leave the
			 * privileges to us, and an artifact has none).  Only
			 * when a writer can still map the file shared.
			 */
			fi->direct_io = backing_dio_mmap(c);
			break;
		}
		/* A read of the latest version. */
		__attribute__((fallthrough));
	case N_VER:
		if (wr || (flags & O_TRUNC)) {
			rc = read_only(req, n, "write", NULL);
			break;
		}
		f = fh_new(FH_BLOB, n);
		rc = f ? env_row(c, n->env, &e) : -ENOMEM;
		if (!rc && n->kind == N_ART) {
			/* Counted before the catalog is read: a commit
			 * meanwhile finds this reader (art_reads()). */
			f->opened = 1;
			path_lock(c->paths);
			n->nopen++;
			path_unlock(c->paths);
		}
		if (!rc && n->kind == N_VER) {
			int gone;

			rc = ver_of(c, n, &v, &gone);
		} else if (!rc) {
			rc = repo_art_latest(c->repo, n->env, n->obj, &v);
		}
		if (!rc)
			rc = repo_blob_open(c->repo, &v, &f->fd, &err);
		if (!rc) {
			/* The version this handle reads (Identity). */
			f->ver = v;
			path_lock(c->paths);
			if (!f->opened)
				n->nopen++;
			f->opened = 1;
			if (n->kind == N_ART)
				rc = art_reads(n, &v);
			path_unlock(c->paths);
		}
		/* A version never changes: the kernel may read its blob
		 * itself.  Not the latest: the kernel turns away any open
		 * beside one with a backing file, uploads too (backing.c). */
		if (!rc && n->kind == N_VER)
			f->backing = backing_get(c, n, f->fd, &f->counted);
		/* Pages of a version stay valid (a backing file has its
		 * own: the kernel refuses the flag with it); the latest is
		 * read around them (Identity). */
		fi->keep_cache = (!f || !f->backing) && n->kind == N_VER;
		fi->direct_io = n->kind == N_ART;
		break;
	case N_ASCRATCH:
	case N_TSCRATCH:
		f = fh_new(FH_SCRATCH, n);
		rc = f ? repo_scratch_open(c->repo, n->env,
					    dir_of(n), n->obj,
					    (flags & (O_ACCMODE | O_TRUNC |
						      O_APPEND)) |
						    (created ? O_CREAT : 0),
					    mode & 07777, &f->fd)
		       : -ENOMEM;
		break;
	case N_TABLE:
		if (wr || (flags & O_TRUNC)) {
			f = fh_new(FH_TEXT, n);
			if (!f) {
				rc = -ENOMEM;
				break;
			}
			buf_init(&f->data, repo_table_text_cap(c->repo));
			f->dirty = trunc;
			if (!trunc)
				rc = table_text(c, n, &f->data);
			if (!rc)
				fh_writer(c, f);
			break;
		}
		f = fh_new(FH_SNAP, n);
		rc = f ? table_text(c, n, &f->data) : -ENOMEM;
		break;
	case N_RJARS:
	case N_RSQL:
		if (wr || (flags & O_TRUNC)) {
			rc = read_only(req, n, "write", NULL);
			break;
		}
		/* One consistent snapshot per open. */
		f = fh_new(FH_SNAP, n);
		{
			struct repo_who w = who_of(req);

			rc = f ? repo_resolve(c->repo, &w, n->env, n->obj,
					      n->kind == N_RSQL, 1, &f->data,
					      &err)
			       : -ENOMEM;
		}
		if (!rc) {
			int keep;

			fi->direct_io = !cache_open(c, n, f, &keep);
			fi->keep_cache = keep;
		}
		break;
	case N_EVENTS:
		if (wr) {
			rc = read_only(req, n, "write", NULL);
			break;
		}
		/* The log as it is now, read a request at a time: a long
		 * log is not copied into memory at open. */
		f = fh_new(FH_EVENTS, n);
		rc = f ? repo_events_size(c->repo, n->env, &f->size) : -ENOMEM;
		fi->direct_io = 1;
		break;
	default:
		rc = path_is_dir(n->kind) ? -EISDIR : -ENOENT;
	}
	if (rc) {
		fh_free(c, f);
		return rc;
	}
	f->who = who_of(req);
	fi->fh = (uintptr_t)f;
	/* Only an upload or a table's text commits at a flush (commit()):
	 * the close of any other handle need not ask the daemon (a request
	 * less for each cat of a resolved file, each read of a version). */
	fi->noflush = f->kind != FH_UPLOAD && f->kind != FH_TEXT;
	return 0;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = nd(req, ino);
	int rc = open_node(req, n, fi->flags, 0, 0, fi);

	if (rc)
		fuse_reply_err(req, -rc);
	else if (backing_reply_open(req, fi, fh_of(fi)->backing))
		fh_free(cm(req), fh_of(fi));
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct cmfs *c = cm(req);
	struct node *p = nd(req, parent), *n;
	struct repo_who w = who_of(req);
	struct fuse_entry_param e;
	struct catalog_env env;
	int rc;

	if (p->kind != N_ARTS && p->kind != N_TABLES) {
		fuse_reply_err(req, -read_only(req, p, "create", name));
		return;
	}
	if (env_row(c, p->env, &env)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	rc = gate(req, p->env, right_of(p->kind, REPO_OP_CHANGE), "create",
		  name);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	n = path_lookup(c->paths, p, name);
	if (!n) {
		rc = repo_create_refused(c->repo, &w, p->env, area_of(p->kind),
					 name);
		fuse_reply_err(req, -rc);
		return;
	}
	rc = open_node(req, n, fi->flags, 1, mode, fi);
	if (rc) {
		path_forget(c->paths, n, 1);
		fuse_reply_err(req, -rc);
		return;
	}
	/* Its first reference: the kernel knew nothing of this name. */
	if (n->kind == N_ART) {
		path_lock(c->paths);
		n->solo = n->nlookup == 1;
		fh_of(fi)->creator = n->solo;
		path_unlock(c->paths);
	}
	memset(&e, 0, sizeof(e));
	e.entry_timeout = cfg_of(c)->mount.entry_timeout;
	rc = attr_of(c, n, &e.attr, &e.attr_timeout);
	if (rc == -ENOENT) {
		/* New and not yet committed: the writer's view.  Its name is
		 * not cached, since a refused commit leaves no file behind. */
		e.attr.st_mode = repo_mode(area_of(n->kind), 0);
		e.attr.st_nlink = 1;
		e.attr.st_uid = w.uid;
		e.attr.st_gid = w.gid;
		clock_gettime(CLOCK_REALTIME, &e.attr.st_mtim);
		e.attr_timeout = e.entry_timeout = 0;
		rc = 0;
	}
	/*
	 * A new name's inode is the creator's alone (n->solo): its
	 * attributes may be kept for the creator's fstat() (cp makes one
	 * before it writes: a request per upload).  Its writes drop the
	 * size and times the kernel keeps, and any look-up of the name
	 * (not cached) brings the committed ones.
	 */
	if (n->kind == N_ART && n->solo && !shared(c))
		e.attr_timeout = cfg_of(c)->mount.attr_timeout;
	e.ino = path_ino(n);
	e.attr.st_ino = e.ino;
	e.generation = 1;
	if (fuse_reply_create(req, &e, fi)) {
		fh_free(c, fh_of(fi));
		path_forget(c->paths, n, 1);
	}
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fh *f = fh_of(fi);
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
	char *b;
	ssize_t n;

	(void)ino;
	switch (f->kind) {
	case FH_BLOB:
	case FH_SCRATCH:
		/* Hand the kernel the fd: splice where it can. */
		bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		bv.buf[0].fd = f->fd;
		bv.buf[0].pos = off;
		fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
		return;
	case FH_UPLOAD:
		b = malloc(size);
		if (!b) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		pthread_mutex_lock(&f->lock);
		n = repo_upload_read(f->up, b, size, off);
		pthread_mutex_unlock(&f->lock);
		if (n < 0)
			fuse_reply_err(req, (int)-n);
		else
			fuse_reply_buf(req, b, (size_t)n);
		free(b);
		return;
	case FH_EVENTS:
		if ((uint64_t)off >= f->size) {
			fuse_reply_buf(req, NULL, 0);
			return;
		}
		if (size > f->size - (uint64_t)off)
			size = (size_t)(f->size - (uint64_t)off);
		{
			struct buf ev = BUF_INIT(size);
			int rc = repo_events_read(cm(req)->repo,
						  f->node->env, (uint64_t)off,
						  size, &ev);

			if (rc)
				fuse_reply_err(req, -rc);
			else
				fuse_reply_buf(req, ev.data, ev.len);
			buf_release(&ev);
		}
		return;
	case FH_TEXT:
	case FH_SNAP:
		pthread_mutex_lock(&f->lock);
		if ((size_t)off >= f->data.len)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_buf(req, f->data.data + off,
				       f->data.len - (size_t)off < size
					       ? f->data.len - (size_t)off
					       : size);
		pthread_mutex_unlock(&f->lock);
		return;
	default:
		fuse_reply_err(req, EBADF);
	}
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *data,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fh *f = fh_of(fi);
	ssize_t n = -EBADF;
	int rc;

	(void)ino;
	pthread_mutex_lock(&f->lock);
	f->wrote = 1;
	f->refused = 0;
	switch (f->kind) {
	case FH_UPLOAD:
		n = repo_upload_write(f->up, data, size, off);
		break;
	case FH_SCRATCH: {
		struct repo_who w = who_of(req);

		n = repo_scratch_fits(cm(req)->repo, &w, f->node->env,
				      f->node->name, "write",
				      (uint64_t)off + size);
		if (n)
			break;
		n = pwrite(f->fd, data, size, off);
		if (n < 0)
			n = -errno;
		break;
	}
	case FH_TEXT:
		if ((uint64_t)off + size > f->data.cap) {
			n = f->failed = -EFBIG;
			break;
		}
		rc = 0;
		while (!rc && f->data.len < (size_t)off)
			rc = buf_addc(&f->data, '\0');
		if (!rc && (size_t)off + size > f->data.len)
			rc = buf_add(&f->data, NULL, 0) ? -ENOMEM : 0;
		if (!rc && (size_t)off < f->data.len) {
			size_t keep = f->data.len - (size_t)off;

			if (keep > size)
				keep = size;
			memcpy(f->data.data + off, data, keep);
			rc = buf_add(&f->data, data + keep, size - keep);
		} else if (!rc) {
			rc = buf_add(&f->data, data, size);
		}
		n = rc ? rc : (ssize_t)size;
		f->dirty = 1;
		break;
	default:
		break;
	}
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
	/* Answered: the client goes on to its close while this inspects
	 * (the close's commit waits for the lock, and takes the result). */
	if (n > 0 && f->kind == FH_UPLOAD)
		(void)repo_upload_inspect_early(f->up);
	pthread_mutex_unlock(&f->lock);
}

/*
 * After an upload's commit through handle f: 1 when the kernel's cache of
 * the name holds only what f wrote (struct node.solo), so that nothing is
 * stale; the next commit through any handle invalidates as usual.  An
 * invalidation per upload was 7 % of 1,000 small uploads' time (a thread
 * woken, a notification, pages dropped that were right).
 */
static int solo_commit(struct cmfs *c, struct fh *f)
{
	struct node *n = f->node;
	int solo;

	path_lock(c->paths);
	solo = f->creator && n->solo;
	n->solo = 0;
	f->creator = 0;
	path_unlock(c->paths);
	return solo;
}

/*
 * Commit what a writable handle holds, if anything.  0 or -errno.
 * A flush before any write (the shell's `>` closes a dup of the new file
 * first) commits nothing: an empty first version would be noise, and for
 * a *.jar a refusal.  Such a handle commits at release instead.
 */
static int commit(fuse_req_t req, struct fh *f, int at_flush)
{
	struct cmfs *c = cm(req);
	struct repo_who w = f->who;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct catalog_version v;
	struct node *n = f->node;
	int rc = 0;

	pthread_mutex_lock(&f->lock);
	if (at_flush && !f->wrote) {
		/* Not committed here, but what is sure to be refused is
		 * said now: cp of an empty file closes without a write. */
		if (f->kind == FH_UPLOAD)
			rc = repo_upload_doomed(f->up);
		else if (f->kind == FH_TEXT && f->dirty)
			rc = repo_table_doomed(f->data.len);
		pthread_mutex_unlock(&f->lock);
		return rc;
	}
	if (f->kind == FH_UPLOAD && repo_upload_dirty(f->up)) {
		rc = repo_upload_commit(f->up, &w, &v, &err);
		if (!rc && !solo_commit(c, f))
			inval_artifact(c, n->env, n->obj, 1);
	} else if (f->kind == FH_TEXT && f->dirty && f->failed) {
		rc = repo_table_write_failed(c->repo, &w, n->env, n->obj,
					     f->failed);
	} else if (f->kind == FH_TEXT && f->dirty) {
		rc = repo_table_write(c->repo, &w, n->env, n->obj,
				      buf_str(&f->data), f->data.len, &err);
		if (!rc)
			f->dirty = 0;
	}
	f->refused = rc != 0;
	pthread_mutex_unlock(&f->lock);
	return rc;
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fuse_reply_err(req, -commit(req, fh_of(fi), 1));
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	struct fh *f = fh_of(fi);
	int rc = 0;

	(void)ino;
	if (f->kind == FH_SCRATCH)
		rc = (datasync ? fdatasync(f->fd) : fsync(f->fd)) ? -errno : 0;
	else if (!(rc = commit(req, f, 0)))
		rc = repo_sync(cm(req)->repo); /* sync = batch: now */
	fuse_reply_err(req, -rc);
}

/* fsync(2) of a directory (sync DIR): every change so far on disk. */
static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, -repo_sync(cm(req)->repo));
}

static void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fh *f = fh_of(fi);

	(void)ino;
	/* A handle that was never written commits here (see commit()).
	 * Bytes still dirty after a write were refused at a flush: they
	 * go, and the refusal is already in events. */
	if (!f->wrote)
		commit(req, f, 0);
	fh_free(cm(req), f);
	fuse_reply_err(req, 0);
}

/* ---- Names: unlink, rename, link ---- */

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cmfs *c = cm(req);
	struct node *p = nd(req, parent);
	struct repo_who w = who_of(req);
	struct cmfs_err err = CMFS_ERR_INIT;
	enum node_kind k = path_classify(p->kind, name);
	int64_t ver = k == N_VER ? path_version(p, name) : 0;
	char t[130];
	int rc;

	if (k == N_VER && !ver)
		k = N_INVALID; /* not a version's exact name */
	if (k == N_ART || k == N_VER || k == N_ASCRATCH || k == N_TSCRATCH ||
	    k == N_TABLE)
		rc = gate(req, p->env, right_of(k, REPO_OP_REMOVE), "delete",
			  name);
	else
		rc = 0;
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	switch (k) {
	case N_ART:
		rc = repo_art_remove(c->repo, &w, p->env, name, &err);
		if (!rc)
			inval_artifact(c, p->env, name, 1);
		break;
	case N_VER:
		rc = repo_ver_remove(c->repo, &w, p->env, p->obj, ver, &err);
		if (!rc)
			inval_artifact(c, p->env, p->obj, 1);
		break;
	case N_ASCRATCH:
	case N_TSCRATCH:
		rc = repo_scratch_remove(c->repo, p->env,
					 k == N_ASCRATCH ? 'a' : 't', name);
		break;
	case N_TABLE:
		name_table_file(t, name);
		rc = repo_table_remove(c->repo, &w, p->env, t, &err);
		break;
	case N_INVALID:
		rc = -ENOENT;
		break;
	default:
		rc = read_only(req, p, "unlink", name);
	}
	fuse_reply_err(req, -rc);
}

/* A rename inside tables/: the four cases of scratch and table names. */
static int rename_tables(fuse_req_t req, struct node *p, const char *from,
			 const char *to)
{
	struct repo_who w = who_of(req);
	struct cmfs_err err = CMFS_ERR_INIT;

	return repo_table_move(cm(req)->repo, &w, p->env, from, to, &err);
}

/* A rename inside artifacts/. */
static int rename_artifacts(fuse_req_t req, struct node *p, enum node_kind kf,
			    const char *from, enum node_kind kt,
			    const char *to)
{
	struct cmfs *c = cm(req);
	struct repo_who w = who_of(req);
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc;

	rc = repo_art_move(c->repo, &w, p->env, from, to, &err);
	if (rc || (kf == N_ASCRATCH && kt == N_ASCRATCH))
		return rc;
	if (kf != N_ASCRATCH)
		/* The bytes move with the name: its node goes on standing
		 * for them (path_rename()). */
		inval_artifact(c, p->env, from, 0);
	inval_artifact(c, p->env, to, 1);
	return 0;
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct cmfs *c = cm(req);
	struct node *p = nd(req, parent), *np = nd(req, newparent), *n;
	enum node_kind kf = path_classify(p->kind, name);
	enum node_kind kt = path_classify(np->kind, newname);
	struct stat st;
	int rc;

	if (flags & RENAME_EXCHANGE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (p != np) {
		/* mv falls back to copy and unlink. */
		fuse_reply_err(req, EXDEV);
		return;
	}
	if (kf == N_INVALID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (kt == N_INVALID) {
		struct repo_who w = who_of(req);

		fuse_reply_err(req, -repo_rename_refused(c->repo, &w, p->env,
							 newname));
		return;
	}
	if (flags & RENAME_NOREPLACE) {
		n = path_lookup(c->paths, np, newname);
		rc = n ? attr_of(c, n, &st, NULL) : -ENOENT;
		if (n)
			path_forget(c->paths, n, 1);
		if (!rc) {
			fuse_reply_err(req, EEXIST);
			return;
		}
	}
	rc = gate(req, p->env,
		  repo_right(area_of(p->kind), REPO_OP_REMOVE, kf == N_ART),
		  "rename", name);
	if (!rc && p->kind == N_ARTS)
		rc = rename_artifacts(req, p, kf, name, kt, newname);
	else if (!rc && p->kind == N_TABLES)
		rc = rename_tables(req, p, name, newname);
	else if (!rc)
		rc = read_only(req, p, "rename", name);
	if (!rc && (n = path_find(c->paths, p, name)))
		path_rename(c->paths, n, np, newname);
	fuse_reply_err(req, -rc);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct repo_who w = who_of(req);
	struct node *p = nd(req, newparent);

	(void)ino;
	fuse_reply_err(req, -repo_link_refused(cm(req)->repo, &w, p->env,
					       newname));
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	(void)link;
	op_link(req, 0, parent, name);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	struct cmfs *c = cm(req);
	struct node *p = nd(req, parent), *n;
	struct cmfs_err err = CMFS_ERR_INIT;
	enum node_kind k = path_classify(p->kind, name);
	struct repo_upload *u = NULL;
	struct stat st;
	int fd, rc;

	(void)rdev;
	if (!S_ISREG(mode) || (k != N_ART && k != N_ASCRATCH &&
			       k != N_TSCRATCH)) {
		op_link(req, 0, parent, name);
		return;
	}
	rc = gate(req, p->env, right_of(k, REPO_OP_CHANGE), "create", name);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	n = path_lookup(c->paths, p, name);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (!attr_of(c, n, &st, NULL) || being_written(c, n)) {
		path_forget(c->paths, n, 1);
		fuse_reply_err(req, EEXIST);
		return;
	}
	if (k == N_ART) {
		struct repo_who w = who_of(req);

		rc = repo_upload_begin(&u, c->repo, n->env, n->obj, 1, &err);
		if (!rc && !repo_upload_doomed(u)) {
			/* A file, made as an empty upload makes it (: >
			 * name): an empty version, now.  tar --xattrs then
			 * sets its labels and opens it to write its bytes,
			 * the next version. */
			rc = repo_upload_commit(u, &w, NULL, &err);
			repo_upload_free(u);
		} else if (!rc) {
			/*
			 * An empty upload sure to be refused (a *.jar is no
			 * zip archive): what tar --xattrs makes this way is
			 * an upload without bytes yet, for the first open to
			 * take over, with the labels set on it meanwhile; it
			 * is a file being written until then (and goes, as a
			 * refused upload does, if nothing writes it).
			 */
			path_lock(c->paths);
			n->placeholder = u;
			path_unlock(c->paths);
		}
	} else {
		rc = repo_scratch_open(c->repo, n->env, dir_of(n),
					n->obj, O_WRONLY | O_CREAT | O_EXCL,
					mode & 07777, &fd);
		if (!rc)
			close(fd);
	}
	if (rc) {
		path_forget(c->paths, n, 1);
		fuse_reply_err(req, -rc);
		return;
	}
	reply_entry(req, n, NULL);
}

/* ---- Extended attributes: labels and computed attributes ---- */

/* Reply to a getxattr/listxattr with `b`, following the size protocol. */
static void reply_xattr(fuse_req_t req, size_t size, const char *data,
			size_t len)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, data, len);
}

/* A computed attribute (after "user.cmfs.") of node `n`. */
static int node_computed(struct cmfs *c, struct node *n, const char *attr,
			      struct buf *b, struct cmfs_err *err)
{
	int rc;

	if (n->kind == N_VER) {
		/* The version this inode stands for (Identity). */
		struct catalog_version v;
		int gone;

		rc = ver_of(c, n, &v, &gone);
		return rc ? rc
			  : repo_computed_ver(c->repo, n->env, n->obj, &v, attr,
					      b, err);
	}
	if (n->kind == N_ART) {
		/* Left its name: what its readers read (Identity). */
		struct catalog_version v;

		if (art_replaced(c, n) && art_gone(c, n, &v))
			return repo_computed_ver(c->repo, n->env, n->obj, &v,
						 attr, b, err);
		/* Else an upload's own handle sees the latest (attr_of()). */
		if (art_replaced(c, n) && !being_written(c, n))
			return -ESTALE;
		return repo_computed(c->repo, n->env, n->obj, 0, attr, b, err);
	}
	if (n->kind == N_TABLE && !strcmp(attr, "error"))
		/* Why its last write was refused; empty since a good one. */
		return repo_table_error(c->repo, n->env, n->obj, b);
	if (n->kind == N_RJARS || n->kind == N_RSQL)
		return repo_resolved_computed(c->repo, n->env, n->obj,
					      n->kind == N_RSQL, attr, b, err);
	return -ENODATA;
}

/* 1 if node `n` can carry labels. */
static int labelled(const struct node *n)
{
	return n->kind == N_ART || n->kind == N_VER || n->kind == N_ASCRATCH;
}

/*
 * Label `key` = value (NULL: removed) of upload writer f (live_writer()),
 * if f still holds an upload not committed: then the label goes with its
 * bytes.  0 or -errno; 1 when it does not, and the label is the catalog's
 * to change (the commit may have come between the look-up and the lock).
 */
static int label_writer(struct fh *f, const char *key, const char *value,
			size_t size, struct cmfs_err *err)
{
	char *v = NULL;
	int rc = 1;

	if (!f || f->kind != FH_UPLOAD)
		return 1;
	if (value && !(v = strndup(value, size)))
		return -ENOMEM;
	pthread_mutex_lock(&f->lock);
	if (writes(f))
		rc = repo_upload_label(f->up, key, v, err);
	pthread_mutex_unlock(&f->lock);
	free(v);
	return rc;
}

/*
 * Label `key` of artifact or version node n into b: as the upload in
 * progress has it (before the artifact's first commit, or through its
 * writer), else as the catalog has it.  0 or -errno (-ENODATA: none).
 */
static int label_read(struct cmfs *c, struct node *n, const char *key,
		      struct buf *b)
{
	const char *pending = NULL;
	struct fh *f;
	int rc = 1;

	path_lock(c->paths);
	if (n->placeholder)
		rc = repo_upload_label_get(n->placeholder, key, &pending) &&
				     pending
			     ? buf_adds(b, pending)
			     : -ENODATA;
	path_unlock(c->paths);
	if (rc <= 0)
		return rc;
	f = n->kind == N_ART ? live_writer(c, n) : NULL;
	if (f && f->kind == FH_UPLOAD) {
		pthread_mutex_lock(&f->lock);
		if (writes(f) && repo_upload_label_get(f->up, key, &pending))
			rc = pending ? buf_adds(b, pending) : -ENODATA;
		pthread_mutex_unlock(&f->lock);
	}
	fh_put(c, f);
	return rc <= 0 ? rc : repo_label_get(c->repo, n->env, n->obj, key, b);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	struct cmfs *c = cm(req);
	struct node *n = nd(req, ino);
	struct repo_who w = who_of(req);
	struct cmfs_err err = CMFS_ERR_INIT;
	const char *key = name + strlen(NAME_XATTR_USER);
	struct buf cur = BUF_INIT(1 << 16);
	struct fh *f;
	char *v = NULL;
	int rc, exists;

	rc = repo_label_writable(c->repo, &w, n->env, n->name, name);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	if (!labelled(n) || n->kind == N_VER) {
		fuse_reply_err(req, n->kind == N_VER
					    ? -read_only(req, n, "label", NULL)
					    : ENOTSUP);
		return;
	}
	rc = gate(req, n->env, right_of(n->kind, REPO_OP_LABEL), "label",
		  n->name);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	if (flags & (XATTR_CREATE | XATTR_REPLACE)) {
		exists = n->kind == N_ASCRATCH
				 ? !repo_scratch_label_get(c->repo, n->env,
							   n->obj, key, &cur)
				 : !repo_label_get(c->repo, n->env, n->obj,
						   key, &cur);
		if ((flags & XATTR_CREATE) && exists) {
			fuse_reply_err(req, EEXIST);
			goto out;
		}
		if ((flags & XATTR_REPLACE) && !exists) {
			fuse_reply_err(req, ENODATA);
			goto out;
		}
	}
	if (n->kind == N_ASCRATCH) {
		v = strndup(value, size);
		rc = v ? repo_scratch_label_set(c->repo, n->env, n->obj, key,
						v, &err)
		       : -ENOMEM;
		fuse_reply_err(req, -rc);
		goto out;
	}
	/* During an upload the label goes with the new bytes (cp -a and
	 * tar set labels before they close). */
	path_lock(c->paths);
	if (n->placeholder) {
		v = strndup(value, size);
		rc = v ? repo_upload_label(n->placeholder, key, v, &err)
		       : -ENOMEM;
		path_unlock(c->paths);
		fuse_reply_err(req, -rc);
		goto out;
	}
	path_unlock(c->paths);
	f = live_writer(c, n);
	rc = label_writer(f, key, value, size, &err);
	fh_put(c, f);
	if (rc > 0)
		rc = repo_label_set(c->repo, &w, n->env, n->obj, key, value,
				    size, &err);
	else if (rc)
		repo_refused(c->repo, &w, n->env, "label", n->obj, rc,
			     cmfs_err_msg(&err));
	fuse_reply_err(req, -rc);
out:
	free(v);
	buf_release(&cur);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	struct cmfs *c = cm(req);
	struct node *n = nd(req, ino);
	struct cmfs_err err = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(1 << 24);
	int rc;

	/* security.*, system.*, trusted.*: nothing, without a look-up. */
	if (strncmp(name, NAME_XATTR_USER, strlen(NAME_XATTR_USER))) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	if (n->kind != N_ROOT &&
	    (rc = gate(req, n->kind == N_ENVS ? NULL : n->env,
		       right_of(n->kind, REPO_OP_READ), "read", n->name))) {
		fuse_reply_err(req, -rc);
		buf_release(&b);
		return;
	}
	if (!strncmp(name, NAME_XATTR_CMFS, strlen(NAME_XATTR_CMFS))) {
		rc = node_computed(c, n, name + strlen(NAME_XATTR_CMFS),
					&b, &err);
	} else if (n->kind == N_ASCRATCH) {
		rc = repo_scratch_label_get(c->repo, n->env, n->obj,
					    name + 5, &b);
	} else if (n->kind == N_ART || n->kind == N_VER) {
		rc = label_read(c, n, name + 5, &b);
	} else {
		rc = -ENODATA;
	}
	if (rc == -ENOENT)
		rc = -ENODATA;
	if (rc)
		fuse_reply_err(req, -rc);
	else
		reply_xattr(req, size, b.data, b.len);
	buf_release(&b);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct cmfs *c = cm(req);
	struct node *n = nd(req, ino);
	struct buf b = BUF_INIT(1 << 24);
	int rc = 0;

	/* Label names are the environment's readers' (as getxattr). */
	if (n->kind > N_ENV && n->kind != N_INVALID &&
	    readers_limited(c, n) &&
	    (rc = gate(req, n->env, right_of(n->kind, REPO_OP_READ), "read",
		       n->name))) {
		fuse_reply_err(req, -rc);
		buf_release(&b);
		return;
	}
	if (n->kind == N_ASCRATCH)
		rc = repo_scratch_label_list(c->repo, n->env, n->obj, &b);
	else if (n->kind == N_ART || n->kind == N_VER)
		rc = repo_label_list(c->repo, n->env, n->obj, &b);
	if (rc == -ENOENT)
		rc = 0;
	if (rc)
		fuse_reply_err(req, -rc);
	else
		reply_xattr(req, size, b.data, b.len);
	buf_release(&b);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct cmfs *c = cm(req);
	struct node *n = nd(req, ino);
	struct repo_who w = who_of(req);
	struct cmfs_err err = CMFS_ERR_INIT;
	struct fh *f;
	int rc;

	/* Removing user.cmfs.* is refused without an events line. */
	rc = repo_label_writable(c->repo, NULL, n->env, n->name, name);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	if (labelled(n) && n->kind != N_VER &&
	    (rc = gate(req, n->env, right_of(n->kind, REPO_OP_LABEL),
		       "unlabel", n->name))) {
		fuse_reply_err(req, -rc);
		return;
	}
	if (n->kind == N_ASCRATCH) {
		rc = repo_scratch_label_del(c->repo, n->env, n->obj, name + 5);
	} else if (n->kind == N_ART) {
		f = live_writer(c, n);
		rc = label_writer(f, name + 5, NULL, 0, &err);
		fh_put(c, f);
		if (rc > 0)
			rc = repo_label_remove(c->repo, &w, n->env, n->obj,
					       name + 5, &err);
	} else if (n->kind == N_VER) {
		rc = read_only(req, n, "unlabel", NULL);
	} else {
		rc = -ENODATA;
	}
	fuse_reply_err(req, -rc);
}

/*
 * access(2) (and chdir): what the rules allow this caller.  Without it
 * the kernel would answer yes to anyone, through a name it keeps from
 * another caller's look-up, saying more than a look-up would: read
 * (any mask) needs `read` in the environment, as a look-up does; W_OK
 * the right to change the node, and a file that never changes
 * (versions, resolved files, events) is EROFS.
 */
static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct node *n = nd(req, ino);
	int rc = 0;

	if (n->kind > N_ENV && n->kind != N_INVALID &&
	    readers_limited(cm(req), n))
		rc = gate(req, n->env, right_of(n->kind, REPO_OP_READ),
			  "access", n->name);
	if (!rc && (mask & W_OK)) {
		gid_t groups[64];
		struct repo_who w = caller(req, groups);

		rc = repo_may_change(cm(req)->repo, &w,
				     n->kind == N_ENVS ? NULL : n->env,
				     area_of(n->kind), path_is_dir(n->kind));
	}
	fuse_reply_err(req, -rc);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	(void)ino;
	/* The space is the store's. */
	if (repo_statfs(cm(req)->repo, &sv))
		memset(&sv, 0, sizeof(sv));
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	/* Big writes for uploads; splice where the kernel offers it, but
	 * not into a ring's buffers: a reply through a ring is written to
	 * memory, where a splice would only add a pipe to copy out of. */
	if ((conn->capable & FUSE_CAP_SPLICE_WRITE) &&
	    !backing_uring_wanted(userdata))
		conn->want |= FUSE_CAP_SPLICE_WRITE;
	if (conn->capable & FUSE_CAP_SPLICE_MOVE)
		conn->want |= FUSE_CAP_SPLICE_MOVE;
	conn->max_write = 1 << 20;
	/* ls -l gets attributes with the listing. */
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO)
		conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
	/* O_TRUNC comes with open, not as a separate truncate: an upload
	 * that truncates never copies the old bytes. */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
}

const struct fuse_lowlevel_ops cmfs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.mkdir = op_mkdir,
	.rmdir = op_rmdir,
	.mknod = op_mknod,
	.symlink = op_symlink,
	.link = op_link,
	.unlink = op_unlink,
	.rename = op_rename,
	.create = op_create,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.fsync = op_fsync,
	.release = op_release,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
	.statfs = op_statfs,
	.access = op_access,
};
