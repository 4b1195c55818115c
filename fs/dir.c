/*
 * dir.c - directories: mkdir and rmdir of environments, and listings
 * (opendir, readdir, readdirplus), each a snapshot taken at opendir.
 */
#define _GNU_SOURCE
#include "ops_int.h"

/* ---- Directories ---- */

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
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

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
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

void op_opendir(fuse_req_t req, fuse_ino_t ino,
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

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
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
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
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

void op_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	(void)ino;
	fh_free(cm(req), fh_of(fi));
	fuse_reply_err(req, 0);
}
