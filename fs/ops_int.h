/*
 * ops_int.h - what fs/'s operation files share (ops.c, kcache.c,
 * dir.c, file.c, xattr.c): file handles, the node and request helpers,
 * and the functions one calls in another.  Each function's contract is at
 * its definition.
 */
#ifndef CMFS_OPS_INT_H
#define CMFS_OPS_INT_H

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

/*
 * An open file or directory.  Its open sets every field before the reply
 * hands it to the kernel; after that, the requests on it use the fields
 * that change under `lock`, but for those marked (paths lock) or atomic.
 * Requests on it may run at once (reads in parallel, a stat beside a
 * write); its RELEASE comes after their replies (fh_destroy()).
 */
struct fh {
	enum fh_kind kind;
	struct node *node;
	int fd;				/* FH_BLOB, FH_SCRATCH */
	int32_t backing;		/* FH_BLOB: the kernel reads fd */
	int counted;			/* in node.nreaders (backing.c) */
	struct repo_upload *up;		/* FH_UPLOAD */
	struct buf data;		/* FH_TEXT, FH_SNAP, FH_DIR */
	uint64_t size;			/* FH_EVENTS: the log's size at open */
	int dirty;			/* FH_TEXT: not yet committed (f->lock;
					 * stored atomically: writes() reads
					 * it without the lock) */
	int wrote;			/* bytes written since open */
	int refused;			/* the last commit was refused (as
					 * `dirty`) */
	int creator;			/* opened by the create of its node
					 * (paths lock) */
	int failed;			/* FH_TEXT: a write failed */
	int paged;			/* FH_SNAP of N_RJARS: 1 read through
					 * the page cache, -1 around it, as
					 * counted in node.cache (paths
					 * lock) */
	struct catalog_version ver;	/* FH_BLOB: the version it reads */
	int opened;			/* FH_BLOB: counted in node.nopen
					 * (paths lock) */
	struct repo_who who;		/* who opened it: the uploader */
	struct fh *wnext;		/* node's list of writers (paths
					 * lock) */
	unsigned users;			/* (paths lock) live_writer()'s
					 * callers holding it */
	int gone;			/* (paths lock) released: its last
					 * user frees it */
	pthread_mutex_t lock;		/* serialises use of this handle */
};

struct cmfs *cm(fuse_req_t req);

struct repo_who who_of(fuse_req_t req);

struct node *nd(fuse_req_t req, fuse_ino_t ino);

const struct config *cfg_of(struct cmfs *c);

int shared(struct cmfs *c);

enum repo_area area_of(enum node_kind k);

enum config_right right_of(enum node_kind k, enum repo_op op);

struct repo_who caller(fuse_req_t req, gid_t *groups);

int holds(fuse_req_t req, const char *env, enum config_right right);

int gate(fuse_req_t req, const char *env, enum config_right right,
		const char *action, const char *object);

void fit_mode(fuse_req_t req, const struct node *n, struct stat *st);

int ver_of(struct cmfs *c, struct node *n, struct catalog_version *out,
		  int *gone);

int art_gone(struct cmfs *c, const struct node *n,
		    struct catalog_version *out);

int art_replaced(struct cmfs *c, const struct node *n);

int art_reads(struct node *n, const struct catalog_version *v);

int being_written(struct cmfs *c, const struct node *n);

int writes(const struct fh *f);

struct fh *live_writer(struct cmfs *c, struct node *n);

void fh_put(struct cmfs *c, struct fh *f);

int env_row(struct cmfs *c, const char *env, struct catalog_env *e);

int attr_of(struct cmfs *c, struct node *n, struct stat *st,
		   double *keep);

void reply_entry(fuse_req_t req, struct node *n,
			const struct node *absent);

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);

void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets);

void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi);

int read_only(fuse_req_t req, struct node *n, const char *action,
		     const char *name);

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi);

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);

void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags);

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname);

void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name);

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev);

void inval_artifact(struct cmfs *c, const char *env, const char *name,
			   int replaced);

void elsewhere(void *arg, const char *env, const char *name, int kind);

int readers_limited(struct cmfs *c, const struct node *n);

int cache_tell(struct cmfs *c, struct node *n);

double cache_sized(struct cmfs *c, struct node *n, int told,
			  uint64_t *size);

int cache_open(struct cmfs *c, struct node *n, struct fh *f, int *keep);

void cache_close(struct fh *f);

double entry_timeout_of(struct cmfs *c, enum node_kind k, int found);

struct fh *fh_of(struct fuse_file_info *fi);

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode);

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);

struct fh *fh_new(enum fh_kind kind, struct node *n);

void fh_destroy(struct cmfs *c, struct fh *f);

void fh_free(struct cmfs *c, struct fh *f);

void fh_writer(struct cmfs *c, struct fh *f);

void op_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi);

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi);

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi);

void op_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi);

char dir_of(const struct node *n);

void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi);

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);

void op_write(fuse_req_t req, fuse_ino_t ino, const char *data,
		     size_t size, off_t off, struct fuse_file_info *fi);

int commit(fuse_req_t req, struct fh *f, int at_flush);

void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi);

void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi);

void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi);

#endif
