/*
 * file.c - files: open and create, read and write, and the commits at
 * flush, fsync and release, for each kind of file handle (ops_int.h).
 */
#define _GNU_SOURCE
#include "ops_int.h"

/* ---- Files ---- */

struct fh *fh_new(enum fh_kind kind, struct node *n)
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
void fh_destroy(struct cmfs *c, struct fh *f)
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
void fh_free(struct cmfs *c, struct fh *f)
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
void fh_writer(struct cmfs *c, struct fh *f)
{
	path_lock(c->paths);
	f->wnext = f->node->writer;
	f->node->writer = f;
	path_unlock(c->paths);
}


char dir_of(const struct node *n)
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

void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = nd(req, ino);
	int rc = open_node(req, n, fi->flags, 0, 0, fi);

	if (rc)
		fuse_reply_err(req, -rc);
	else if (backing_reply_open(req, fi, fh_of(fi)->backing))
		fh_free(cm(req), fh_of(fi));
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
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
	 * (not cached) brings the committed ones.  (n->solo as read above:
	 * another opener clears it under the paths lock.)
	 */
	if (n->kind == N_ART && fh_of(fi)->creator && !shared(c))
		e.attr_timeout = cfg_of(c)->mount.attr_timeout;
	e.ino = path_ino(n);
	e.attr.st_ino = e.ino;
	e.generation = 1;
	if (fuse_reply_create(req, &e, fi)) {
		fh_free(c, fh_of(fi));
		path_forget(c->paths, n, 1);
	}
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
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

void op_write(fuse_req_t req, fuse_ino_t ino, const char *data,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fh *f = fh_of(fi);
	ssize_t n = -EBADF;
	int rc;

	(void)ino;
	pthread_mutex_lock(&f->lock);
	f->wrote = 1;
	__atomic_store_n(&f->refused, 0, __ATOMIC_RELAXED);
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
		__atomic_store_n(&f->dirty, 1, __ATOMIC_RELAXED);
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
 * invalidation per upload would wake a thread, send a notification and
 * drop pages that were right.
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
int commit(fuse_req_t req, struct fh *f, int at_flush)
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
			__atomic_store_n(&f->dirty, 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&f->refused, rc != 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fuse_reply_err(req, -commit(req, fh_of(fi), 1));
}

void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
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
void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, -repo_sync(cm(req)->repo));
}

void op_release(fuse_req_t req, fuse_ino_t ino,
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
