/*
 * ops.c - the FUSE low-level operations: each handler maps an inode and
 * a name onto a core call and replies.  This file holds access, lookup,
 * attributes, names (unlink, rename, link), statfs, the session's init
 * and the operations table; kcache.c, dir.c, file.c and xattr.c hold
 * the rest (ops_int.h).  No
 * policy lives here: names, limits, labels and commits are repo's; fs/
 * knows only the shape of the tree (path.c) and what the kernel expects
 * of a file system.
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
#include "ops_int.h"

struct cmfs *cm(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

struct repo_who who_of(fuse_req_t req)
{
	const struct fuse_ctx *x = fuse_req_ctx(req);
	struct repo_who w = { x->uid, x->gid, x->pid, 0, NULL };

	return w;
}

struct node *nd(fuse_req_t req, fuse_ino_t ino)
{
	return path_node(cm(req)->paths, ino);
}

/* The configuration in force: SIGHUP swaps it (main.c, reload). */
const struct config *cfg_of(struct cmfs *c)
{
	return __atomic_load_n(&c->cfg, __ATOMIC_ACQUIRE);
}

/* 1 where callers see different modes: the kernel keeps no attributes. */
int shared(struct cmfs *c)
{
	return __atomic_load_n(&c->shared, __ATOMIC_RELAXED);
}

/* ---- Access ---- */

/* The area of a node of kind `k`: what decides the right its change needs. */
enum repo_area area_of(enum node_kind k)
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
enum config_right right_of(enum node_kind k, enum repo_op op)
{
	return repo_right(area_of(k), op, k == N_ART || k == N_VER);
}

/*
 * The caller of `req`, with its supplementary groups in `groups` (64 of
 * them) when access rules could need them: reading them costs a read of
 * /proc.
 */
struct repo_who caller(fuse_req_t req, gid_t *groups)
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
int holds(fuse_req_t req, const char *env, enum config_right right)
{
	gid_t groups[64];
	struct repo_who w = caller(req, groups);

	return repo_may(cm(req)->repo, &w, env, right);
}

/*
 * 0 if the caller holds `right` in `env`, else -EACCES, written to events
 * (or the daemon log outside an environment) with the caller's uid.
 */
int gate(fuse_req_t req, const char *env, enum config_right right,
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
void fit_mode(fuse_req_t req, const struct node *n, struct stat *st)
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
int ver_of(struct cmfs *c, struct node *n, struct catalog_version *out,
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
int art_gone(struct cmfs *c, const struct node *n,
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
int art_replaced(struct cmfs *c, const struct node *n)
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
int art_reads(struct node *n, const struct catalog_version *v)
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
int being_written(struct cmfs *c, const struct node *n)
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

/*
 * 1 if writer f holds bytes or labels not committed yet: what the file
 * shows until its close.  Exact under f->lock; without it (live_writer())
 * a hint that the caller checks again under the lock, so the flags are
 * read atomically.
 */
int writes(const struct fh *f)
{
	/* A writer whose commit was refused shows nothing: the file is
	 * what the catalog says, though the handle is not released yet. */
	return !__atomic_load_n(&f->refused, __ATOMIC_RELAXED) &&
	       ((f->kind == FH_UPLOAD && repo_upload_dirty(f->up)) ||
		(f->kind == FH_TEXT &&
		 __atomic_load_n(&f->dirty, __ATOMIC_RELAXED)));
}

/*
 * The newest writer of `n` whose bytes are not committed, or NULL.  It is
 * the caller's until fh_put(): another client's close may release it
 * meanwhile, and the last user then frees it.  What it holds may be
 * committed meanwhile too: writes() under f->lock says.
 */
struct fh *live_writer(struct cmfs *c, struct node *n)
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
		if (f->kind == FH_UPLOAD &&
		    !__atomic_load_n(&f->refused, __ATOMIC_RELAXED))
			break;
	if (f)
		f->users++;
	path_unlock(c->paths);
	return f;
}

/* Done with a writer that live_writer() gave; NULL is ok. */
void fh_put(struct cmfs *c, struct fh *f)
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
int env_row(struct cmfs *c, const char *env, struct catalog_env *e)
{
	return repo_env_get(c->repo, env, e);
}

/* The attributes of `n`, and how long the kernel may keep them (*keep,
 * unless NULL). */
int attr_of(struct cmfs *c, struct node *n, struct stat *st,
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
	 * gets a new mapping for its buffer at every file, page faults that
	 * weigh on every small upload.  A directory's is what glibc sizes
	 * its getdents() buffer by: a large one makes malloc map and unmap
	 * a buffer at each READDIR.
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
		path_lock(c->paths);
		rc = n->placeholder != NULL; /* made by mknod: empty */
		path_unlock(c->paths);
		if (rc)
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
			/* A write may be growing the text: its lock. */
			pthread_mutex_lock(&w->lock);
			st->st_size = (off_t)w->data.len;
			pthread_mutex_unlock(&w->lock);
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
void reply_entry(fuse_req_t req, struct node *n,
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

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
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

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	path_forget(cm(req)->paths, nd(req, ino), nlookup);
	fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		path_forget(cm(req)->paths, nd(req, forgets[i].ino),
			    forgets[i].nlookup);
	fuse_reply_none(req);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino,
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
int read_only(fuse_req_t req, struct node *n, const char *action,
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

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
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
			__atomic_store_n(&f->dirty, 1, __ATOMIC_RELAXED);
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

/* ---- Names: unlink, rename, link ---- */

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
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
		if (!rc) {
			inval_artifact(c, p->env, name, 1);
			forget_versions(c, p->env, name);
		}
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
	if (kf != N_ASCRATCH) {
		/* The bytes move with the name: its node goes on standing
		 * for them (path_rename()).  Both names' versions are
		 * others now. */
		inval_artifact(c, p->env, from, 0);
		forget_versions(c, p->env, from);
		forget_versions(c, p->env, to);
	}
	inval_artifact(c, p->env, to, 1);
	return 0;
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
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

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct repo_who w = who_of(req);
	struct node *p = nd(req, newparent);

	(void)ino;
	fuse_reply_err(req, -repo_link_refused(cm(req)->repo, &w, p->env,
					       newname));
}

void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	(void)link;
	op_link(req, 0, parent, name);
}

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
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
