/*
 * xattr.c - extended attributes: labels (user.*) of artifacts, versions
 * and scratch files, and the computed attributes (user.cmfs.*).  The
 * handlers map them onto repo's labels; the rules are repo's.
 */
#define _GNU_SOURCE
#include "ops_int.h"

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

void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
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

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
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

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
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

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
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
