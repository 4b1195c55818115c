/*
 * ops_int.h - what fs/'s operation files share (ops.c, kcache.c,
 * dir.c, file.c, xattr.c): file handles, the node and request helpers,
 * and the functions one calls in another.  Each prototype says what it
 * does; its definition says how.  Handlers run on libfuse's (or the io_uring
 * rings') worker threads; a handle is used under its own lock.
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

/* The daemon's state behind `req` (its fuse_main user_data); never NULL. */
struct cmfs *cm(fuse_req_t req);

/* The uid, gid and pid of `req`'s caller, without supplementary groups. */
struct repo_who who_of(fuse_req_t req);

/* Node `ino` of the path table, or NULL if the kernel forgot it (path.h). */
struct node *nd(fuse_req_t req, fuse_ino_t ino);

/*
 * The configuration in force, swapped whole by SIGHUP (main.c, reload);
 * borrowed: valid while the daemon runs, as old ones are kept.
 */
const struct config *cfg_of(struct cmfs *c);

/*
 * 1 where callers see different modes, so that the kernel may keep no
 * attributes; any thread (an atomic load).
 */
int shared(struct cmfs *c);

/*
 * The repo area of a node of kind `k`, which decides the right a change
 * of it needs (repo_right()).
 */
enum repo_area area_of(enum node_kind k);

/* The right that operation `op` on a node of kind `k` needs (repo_right()). */
enum config_right right_of(enum node_kind k, enum repo_op op);

/*
 * `req`'s caller; its supplementary groups go into `groups` (64 slots,
 * the caller's) only when access rules could need them (a read of /proc).
 */
struct repo_who caller(fuse_req_t req, gid_t *groups);

/* 1 if `req`'s caller holds `right` in `env` (NULL: outside one), else 0. */
int holds(fuse_req_t req, const char *env, enum config_right right);

/*
 * 0 if `req`'s caller holds `right` in `env`, else -EACCES, recorded in
 * events (or the daemon log outside an environment) with `action` on
 * `object`.
 */
int gate(fuse_req_t req, const char *env, enum config_right right,
		const char *action, const char *object);

/*
 * Clears the mode bits of `st` that `req`'s caller may not use on `n`:
 * write bits without the right to change it, read bits without read.
 */
void fit_mode(fuse_req_t req, const struct node *n, struct stat *st);

/*
 * The version N_VER node `n` stands for, into *out, pinned at the first
 * call; *gone = 1 when the catalog no longer has it but a handle holds it
 * open.  0, -ENOENT (not there for this inode) or -errno of the catalog.
 */
int ver_of(struct cmfs *c, struct node *n, struct catalog_version *out,
		  int *gone);

/*
 * 1 if artifact node `n` was replaced or removed while readers hold it:
 * *out gets the version they read (what fstat(2) of a removed file shows).
 * 0 otherwise.
 */
int art_gone(struct cmfs *c, const struct node *n,
		    struct catalog_version *out);

/* 1 if artifact node `n` left its name (Identity), else 0. */
int art_replaced(struct cmfs *c, const struct node *n);

/*
 * Records that a reader of artifact node `n` opened version `v` (table
 * lock held, n->nopen counts it).  0, or -ESTALE when the node left its
 * name meanwhile for other bytes: the open fails and the kernel looks up
 * the name again.
 */
int art_reads(struct node *n, const struct catalog_version *v);

/*
 * 1 if `n` has an upload open or a placeholder (it exists before its
 * first commit and may yet vanish); takes the paths lock.
 */
int being_written(struct cmfs *c, const struct node *n);

/*
 * 1 if writer `f` holds bytes or labels not yet committed; caller holds
 * f->lock.
 */
int writes(const struct fh *f);

/*
 * The newest writer of `n` with uncommitted bytes, or NULL.  The caller
 * holds it until fh_put(), which frees it if it was released meanwhile;
 * writes() under f->lock says whether it still holds anything.
 */
struct fh *live_writer(struct cmfs *c, struct node *n);

/* Gives back a writer that live_writer() returned; NULL is a no-op. */
void fh_put(struct cmfs *c, struct fh *f);

/*
 * Environment `env`'s row into *e: 0, -ENOENT or -errno of the catalog
 * (the catalog keeps each thread's last read: catalog_env_get()).
 */
int env_row(struct cmfs *c, const char *env, struct catalog_env *e);

/*
 * The attributes of `n` into *st and, unless `keep` is NULL, how long the
 * kernel may keep them.  0 or -errno (-ENOENT when it is gone).
 */
int attr_of(struct cmfs *c, struct node *n, struct stat *st,
		   double *keep);

/*
 * Replies to a look-up with `n`, whose reference passes to the kernel
 * (forgotten again if the reply fails); `n` NULL: an error reply, or a
 * negative entry built from `absent` when that is not NULL.
 */
void reply_entry(fuse_req_t req, struct node *n,
			const struct node *absent);

/*
 * FUSE handler (fs_ops in ops.c): each op_* replies to `req` exactly once,
 * with the errno of the refusal (repo's, DESIGN.md's table) on failure.
 */
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);

/* FUSE handler: drops `nlookup` kernel references of `ino`; no reply. */
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);

/* FUSE handler: op_forget() for each of `forgets`; no reply. */
void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets);

/* FUSE handler: the attributes of `ino`, modes fitted to the caller. */
void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi);

/*
 * The refusal of a change named `action` on `name` in node `n`, a place
 * that cannot change: the -errno repo_refuse_change() gives, recorded.
 */
int read_only(fuse_req_t req, struct node *n, const char *action,
		     const char *name);

/* FUSE handler: truncate, chmod, utimens; only a truncate changes data. */
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi);

/* FUSE handler: removes an artifact, version, table or scratch file. */
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);

/*
 * FUSE handler: renames as repo allows; RENAME_NOREPLACE is honoured,
 * RENAME_EXCHANGE refused (EINVAL).
 */
void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags);

/* FUSE handler: links are refused (EPERM, DESIGN.md). */
void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname);

/* FUSE handler: refused as op_link(). */
void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name);

/*
 * FUSE handler: a regular file in artifacts/ or a scratch directory
 * becomes an empty upload placeholder; anything else is refused as a link.
 */
void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev);

/*
 * Artifact `name` of `env` has a new latest version or is gone: tells the
 * kernel its attributes and pages are stale.  `replaced` (other bytes, or
 * none): a node that readers hold leaves the name and its entry is
 * invalidated.  Any thread; takes the paths lock.
 */
void inval_artifact(struct cmfs *c, const char *env, const char *name,
			   int replaced);

/*
 * Artifact `name` of `env` is gone: versions/<name> leaves its node, so
 * that the kernel's next look-up of it drops what it keeps under the old
 * one.  Any thread; takes the paths lock.
 */
void forget_versions(struct cmfs *c, const char *env, const char *name);

/*
 * catalog_watch()'s callback (its thread): `name` of kind `kind` in `env`
 * changed on another host; its entry and inode are invalidated.  `env`
 * NULL: changes were missed, every such name the kernel holds.
 */
void elsewhere(void *arg, const char *env, const char *name, int kind);

/*
 * 1 if callers may differ in what they see of `n`'s environment: others
 * than the owner call, and a rule limits who reads there.
 */
int readers_limited(struct cmfs *c, const struct node *n);

/*
 * Resolved file `n` is about to be resolved for its attributes: 1 if the
 * kernel may keep them, 0 if not (nothing kept here, or out of memory).
 */
int cache_tell(struct cmfs *c, struct node *n);

/*
 * Resolved file `n` resolved to *size bytes (`told`: cache_tell() said
 * 1); *size becomes the size of pages handles still read.  Returns how
 * long the kernel may keep the attributes, in seconds.
 */
double cache_sized(struct cmfs *c, struct node *n, int told,
			  uint64_t *size);

/*
 * Handle `f`, a snapshot of resolved file `n`: 1 if it reads through the
 * page cache (*keep: the cached pages may stay), 0 if around it.
 */
int cache_open(struct cmfs *c, struct node *n, struct fh *f, int *keep);

/* Handle `f` of a resolved file is gone; the table lock is held. */
void cache_close(struct fh *f);

/*
 * Seconds the kernel may keep a name (`found`) or its absence in a
 * directory of kind `k`.
 */
double entry_timeout_of(struct cmfs *c, enum node_kind k, int found);

/* The handle in `fi` (fi->fh), or NULL when `fi` is NULL. */
struct fh *fh_of(struct fuse_file_info *fi);

/* FUSE handler: mkdir of an environment (repo_env_create), else refused. */
void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode);

/* FUSE handler: rmdir of an environment (repo_env_remove), else refused. */
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);

/* A new handle of `kind` on `n`, the caller's (fh_free()); NULL: ENOMEM. */
struct fh *fh_new(enum fh_kind kind, struct node *n);

/*
 * Frees `f`, which nobody else uses, after waiting for f->lock: a request
 * may still hold it after its reply.
 */
void fh_destroy(struct cmfs *c, struct fh *f);

/*
 * The end of handle `f` (its RELEASE, or a failed open): off its node's
 * writer list, freed now or by live_writer()'s last user (fh_put()).
 */
void fh_free(struct cmfs *c, struct fh *f);

/* Puts `f` at the head of its node's writer list; takes the paths lock. */
void fh_writer(struct cmfs *c, struct fh *f);

/* FUSE handler: a snapshot of the listing, read by op_readdir*(). */
void op_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi);

/* FUSE handler: entries of the opendir snapshot from offset `off`. */
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi);

/*
 * FUSE handler: op_readdir() with each entry's attributes; every entry
 * handed over counts as a look-up.
 */
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi);

/* FUSE handler: frees the opendir snapshot. */
void op_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi);

/* The scratch directory letter of `n`: 'a' (artifacts) or 't' (tables). */
char dir_of(const struct node *n);

/* FUSE handler: opens a version, an upload, a scratch or text file. */
void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

/* FUSE handler: creates an upload or scratch file and opens it. */
void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi);

/* FUSE handler: reads of any handle kind (blobs may be passed through). */
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);

/* FUSE handler: writes to an upload, scratch file or table text. */
void op_write(fuse_req_t req, fuse_ino_t ino, const char *data,
		     size_t size, off_t off, struct fuse_file_info *fi);

/*
 * Commits what writable handle `f` holds, if anything: 0 or -errno.  A
 * flush (`at_flush`) before any write commits nothing; release does.
 */
int commit(fuse_req_t req, struct fh *f, int at_flush);

/*
 * FUSE handler: commits the handle (commit()); the reply carries the
 * refusal, as close(2)'s result.
 */
void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

/* FUSE handler: commits the handle and syncs the store (a scratch file:
 * fsync(2) of it). */
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi);

/* FUSE handler: fsync(2) of a directory: every change so far on disk. */
void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi);

/* FUSE handler: a handle never written commits here (commit()); then it
 * is freed (fh_free()). */
void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi);

/* FUSE handler: sets a label (user.*) of an artifact, upload or scratch
 * file; the computed attributes (user.cmfs.*) are read-only. */
void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		 const char *value, size_t size, int flags);

/* FUSE handler: a label or a computed attribute, by the size protocol. */
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		 size_t size);

/* FUSE handler: the names of a node's labels and computed attributes. */
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);

/* FUSE handler: removes a label. */
void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
