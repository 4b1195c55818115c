/*
 * repo.h - the store as its users act on it: environments, uploads,
 * versions, labels, scratch files, tables and the audit trail.
 *
 * This is the one interface fs/ calls.  Each function that changes
 * something takes the caller (struct repo_who), applies the rules of
 * DESIGN.md, changes the catalog in one transaction, and writes one line to
 * the environment's `events` and to the daemon's log, whether it succeeded
 * or was refused.  A refused change leaves everything as it was.
 *
 * Thread safety: every function may be called from any thread.  A struct
 * repo_upload belongs to one open file; its callers serialise its use,
 * except repo_upload_size() and repo_upload_dirty(), which anyone may call
 * meanwhile (each reads one value atomically: current, or just before).
 */
#ifndef CMFS_REPO_H
#define CMFS_REPO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include "buf.h"
#include "catalog.h"
#include "config.h"
#include "err.h"

struct repo;
struct repo_upload;

/*
 * Who is calling: from the FUSE request context.  The supplementary
 * groups are read only by access rules that name groups: a caller may
 * leave them out (ngroups 0) when the configuration has no rules.
 */
struct repo_who {
	uint32_t uid;
	uint32_t gid;
	pid_t pid;
	size_t ngroups;
	const gid_t *groups;	/* borrowed for the call */
};

/* Where a change happens: what decides the right it needs. */
enum repo_area {
	REPO_AREA_ENVS,		/* envs/ and an environment's own entries */
	REPO_AREA_ARTIFACTS,	/* artifacts/, an artifact, its scratch files */
	REPO_AREA_TABLES,	/* tables/, a table, its scratch files */
	REPO_AREA_FIXED,	/* versions/, resolved/, events: never change */
	REPO_AREA_ROOT,		/* the mount's root: no rule applies */
};

/*
 * The daemon's log: `level` is a syslog priority, `line` one line without
 * its newline.  Called from any thread.
 */
typedef void (*repo_log_fn)(void *arg, int level, const char *line);

/*
 * The mount serves requests (after the daemon's fork): start the work
 * that runs beside them, the inspections made again of blobs that an
 * older inspector judged (reinspect.h).  Its failure is only logged.
 */
void repo_background(struct repo *r);

/*
 * Open the store of `cfg` (which must outlive the repo).  `mountpoint`
 * (absolute, may be NULL) is the default jar_path_prefix.  Removes stale
 * staging, takes back the versions whose bytes a power loss kept from the
 * disk (sync = batch; each with an events line, action=recover), and
 * frees blobs that no version refers to (what a crash leaves).
 */
int repo_open(struct repo **out, const struct config *cfg,
	      const char *mountpoint, repo_log_fn log, void *log_arg,
	      struct cmfs_err *err);
void repo_close(struct repo *r);

/*
 * Replace the configuration (SIGHUP).  `cfg` must outlive every request
 * that read it with repo_config(); call repo_config_retire() before
 * freeing a configuration that was replaced.
 */
void repo_set_config(struct repo *r, const struct config *cfg);
void repo_config_retire(struct repo *r);
const struct config *repo_config(const struct repo *r);

/* The catalog, for tests and tools (fs/ reads through the calls below). */
struct catalog *repo_catalog(struct repo *r);

/*
 * Reads of the tree, with no policy (the caller checked the read right):
 * 0, or -ENOENT when the environment or the object is not there.
 */
/* A number that grows with every change of the catalog (catalog.h). */
uint64_t repo_generation(struct repo *r);
/*
 * Changes other hosts commit to a shared catalog: fn runs on a thread of
 * the catalog's for each (catalog_watch(); 0 and nothing to do where no
 * other host can write).  repo_unwatch() stops it before the mount goes.
 */
int repo_watch(struct repo *r, catalog_watch_fn fn, void *arg,
	       struct cmfs_err *err);
void repo_unwatch(struct repo *r);
/* Environment `env`'s row (its creation time for the tree's dates). */
int repo_env_get(struct repo *r, const char *env, struct catalog_env *out);
/* The latest version of artifact `name`. */
int repo_art_latest(struct repo *r, const char *env, const char *name,
		    struct catalog_version *out);
/* Version `n` of artifact `name`. */
int repo_ver_get(struct repo *r, const char *env, const char *name,
		 int64_t n, struct catalog_version *out);
/* Table `name`'s row: size, time and owner of its text. */
int repo_table_get(struct repo *r, const char *env, const char *name,
		   struct catalog_table *out);
/*
 * Listings, in name (or number) order: `fn` gets each name; a non-zero
 * return stops the walk and is returned.  Environments; the artifacts of
 * `env` (those with a version); the version numbers of artifact `name`;
 * the tables of `env`.
 */
int repo_env_list(struct repo *r, int (*fn)(void *arg, const char *name),
		  void *arg);
int repo_art_list(struct repo *r, const char *env,
		  int (*fn)(void *arg, const char *name), void *arg);
int repo_ver_list(struct repo *r, const char *env, const char *name,
		  int (*fn)(void *arg, int64_t n), void *arg);
int repo_table_list(struct repo *r, const char *env,
		    int (*fn)(void *arg, const char *name), void *arg);
/* The blob store, for scratch files (plain storage, no policy). */
struct store *repo_store(struct repo *r);
/*
 * Version v's bytes open for reading in *out: its blob's file, or a
 * sealed memory file with the bytes of an inline blob (blob.h).  -EIO,
 * with a line in the daemon's log, when the blob is missing.
 */
int repo_blob_open(struct repo *r, const struct catalog_version *v, int *out,
		   struct cmfs_err *err);

/* Write a line to the daemon's log. */
void repo_log(struct repo *r, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Record a refusal that happened before any repo call (a bad name at
 * lookup or create): one events line with `action` and `object`.
 */
void repo_refused(struct repo *r, const struct repo_who *who, const char *env,
		  const char *action, const char *object, int rc,
		  const char *reason);

/*
 * Access (access.h, DESIGN.md): the mounting user is the uid that opened
 * the repo.  `env` NULL or "" is outside any environment (envs/ itself).
 */
/* The right a change in `area` needs: upload, write_tables or admin. */
enum config_right repo_change_right(enum repo_area area);
/* What an operation does to an object: decides, with its area, the right
 * it needs. */
enum repo_op {
	REPO_OP_READ,	/* look up, list, open to read, stat, read labels */
	REPO_OP_CHANGE,	/* create, write, truncate; mkdir in envs/ */
	REPO_OP_REMOVE,	/* unlink, rename away; rmdir in envs/ */
	REPO_OP_LABEL,	/* set or remove a label */
};
/*
 * The right `op` needs on an object of `area`: read to read, upload to
 * label, admin to remove or rename an artifact or a version (`versioned`:
 * its history goes with it), else repo_change_right(area).
 */
enum config_right repo_right(enum repo_area area, enum repo_op op,
			     int versioned);
/*
 * 1 when access rules are configured, so that a caller's supplementary
 * groups may decide (struct repo_who.groups); 0: they need not be read.
 */
int repo_rules_need_groups(struct repo *r);
/* 1 if `who` holds `right` in `env` under the configuration in force. */
int repo_may(struct repo *r, const struct repo_who *who, const char *env,
	     enum config_right right);
/*
 * 0 if `who` holds `right` in `env`; else -EACCES, refused with the
 * message "uid <uid> may not <action> here (<right> right)" (repo_refused:
 * events, or the daemon's log outside an environment).
 */
int repo_authorise(struct repo *r, const struct repo_who *who,
		   const char *env, enum config_right right,
		   const char *action, const char *object);

/*
 * The rules of changes that cannot happen, each refused with one events
 * line (or the daemon's log outside an environment, `env` NULL or "").
 */
/*
 * A change (`action`) of `name` in directory `path` (name NULL: of `path`
 * itself) where nothing changes: -EROFS in REPO_AREA_FIXED ("read-only:
 * versions, resolved files and events cannot be changed"), else -EPERM
 * ("not possible here").
 */
int repo_refuse_change(struct repo *r, const struct repo_who *who,
		       const char *env, enum repo_area area, const char *path,
		       const char *name, const char *action);
/*
 * access(2) with W_OK of a node of `area` (`dir`: a directory): -EROFS
 * for a file that never changes, -EACCES without the right to change it,
 * else 0.  Not an event: access(2) only asks.
 */
int repo_may_change(struct repo *r, const struct repo_who *who,
		    const char *env, enum repo_area area, int dir);
/*
 * 1 when a rule limits who reads in `env` (the environment's or the
 * global one): then what a name holds is its readers' alone to see.
 */
int repo_reads_limited(struct repo *r, const char *env);
/*
 * A scratch file `name` growing to `size` bytes by `action` (write,
 * truncate): 0 within [limits] max_scratch_size, else -EFBIG, refused.
 */
int repo_scratch_fits(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, const char *action,
		      uint64_t size);
/*
 * truncate(2) by name of artifact `name` to `size` bytes with no upload of
 * it open: a whole upload at once (empty for 0, else the latest version's
 * bytes cut or padded with zeros), committed as a new version, or refused
 * with the reason as repo_upload_truncate_refused() and
 * repo_upload_commit() give it.
 */
int repo_art_truncate(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, uint64_t size,
		      struct cmfs_err *err);
/* The most bytes a table's text may have ([limits] max_ddl_size): what a
 * writer's buffer holds. */
size_t repo_table_text_cap(struct repo *r);
/*
 * A truncation of the upload of `name` to `size` failed with `rc` (from
 * repo_upload_truncate()): refused with the reason (-EFBIG: over
 * max_artifact_size).  Returns rc.
 */
int repo_upload_truncate_refused(struct repo *r, const struct repo_who *who,
				 const char *env, const char *name,
				 uint64_t size, int rc);
/*
 * create(2) of `name` in `area` where the tree has no place for it: a bad
 * artifact name (name_artifact_check()'s reason) or a name in tables/
 * that is neither <table>.sql nor a scratch name; -EINVAL, refused.
 */
int repo_create_refused(struct repo *r, const struct repo_who *who,
			const char *env, enum repo_area area,
			const char *name);
/* rename(2) onto `name`, which names nothing here: -EINVAL, refused. */
int repo_rename_refused(struct repo *r, const struct repo_who *who,
			const char *env, const char *name);
/* link(2), symlink(2) or a special file as `name`: -EPERM, refused. */
int repo_link_refused(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name);
/*
 * A table's text of `len` bytes, closed before any write: -EINVAL when
 * committing it is sure to be refused (empty: no CREATE TABLE), else 0.
 * Records nothing: the commit will.
 */
int repo_table_doomed(size_t len);
/*
 * A write of table `name`'s text failed with `rc` (over max_ddl_size):
 * nothing is committed; refused at the close.  Returns rc.
 */
int repo_table_write_failed(struct repo *r, const struct repo_who *who,
			    const char *env, const char *name, int rc);

/* Environments. */
int repo_env_create(struct repo *r, const struct repo_who *who,
		    const char *name, struct cmfs_err *err);
/* -ENOTEMPTY while it holds artifacts or tables; scratch files go with it. */
int repo_env_remove(struct repo *r, const struct repo_who *who,
		    const char *name, struct cmfs_err *err);

/* Remove an artifact with all its versions and labels. */
int repo_art_remove(struct repo *r, const struct repo_who *who,
		    const char *env, const char *name, struct cmfs_err *err);
/* Remove version `n`; the last one takes the artifact with it. */
int repo_ver_remove(struct repo *r, const struct repo_who *who,
		    const char *env, const char *name, int64_t n,
		    struct cmfs_err *err);
/* Rename artifact `from` to `to`, replacing an artifact named `to`. */
int repo_art_rename(struct repo *r, const struct repo_who *who,
		    const char *env, const char *from, const char *to,
		    struct cmfs_err *err);
/*
 * rename(2) inside artifacts/, by what the names are: scratch to scratch
 * moves the file with its labels, scratch to artifact commits it
 * (repo_scratch_commit), artifact to artifact is repo_art_rename(), and
 * artifact to scratch is refused (-EPERM): an artifact cannot become one.
 */
int repo_art_move(struct repo *r, const struct repo_who *who,
		  const char *env, const char *from, const char *to,
		  struct cmfs_err *err);

/*
 * Uploads.  repo_upload_begin() stages an upload of artifact `name`:
 * empty when `truncate`, else a copy of the latest version
 * (copy-on-write).  Writes go to the staging file; repo_upload_commit()
 * makes them a version.  Free with repo_upload_free() (uncommitted bytes
 * are dropped).
 */
int repo_upload_begin(struct repo_upload **out, struct repo *r,
		      const char *env, const char *name, int truncate,
		      struct cmfs_err *err);
/* Bytes written, or -errno (-EFBIG past the size limit). */
ssize_t repo_upload_write(struct repo_upload *u, const void *data,
			  size_t size, off_t off);
ssize_t repo_upload_read(struct repo_upload *u, void *data, size_t size,
			 off_t off);
int repo_upload_truncate(struct repo_upload *u, off_t size);
uint64_t repo_upload_size(const struct repo_upload *u);
/*
 * -EINVAL when committing `u` now is sure to be refused (an empty upload
 * of a *.jar), else 0.  Records nothing: the commit will.  cp of an
 * empty file closes without a write, so flush() says it early.
 */
int repo_upload_doomed(const struct repo_upload *u);
/* 1 when there are bytes or labels not yet committed. */
int repo_upload_dirty(const struct repo_upload *u);
/*
 * Set (value != NULL) or remove a label as part of the upload: applied,
 * and checked against the new bytes, at commit.
 */
int repo_upload_label(struct repo_upload *u, const char *key,
		      const char *value, struct cmfs_err *err);
/* The pending value of label `key`: 1 and *out, 0 when not pending. */
int repo_upload_label_get(const struct repo_upload *u, const char *key,
			  const char **out);
/*
 * Commit: a new version unless the bytes equal the latest version's
 * (then none).  *out (may be NULL) gets the version that is now latest.
 * -EINVAL for a *.jar that is not a zip archive, or labels that the new
 * bytes do not offer; -EFBIG/-EDQUOT for limits; -ENOSPC.  On failure the
 * upload stays staged and dirty; nothing in the catalog changed.
 */
int repo_upload_commit(struct repo_upload *u, const struct repo_who *who,
		       struct catalog_version *out, struct cmfs_err *err);
/*
 * After a write has been answered: when the bytes are held in memory and
 * end like a whole zip archive, inspect them now, for the commit to take
 * (the next write or truncation drops what this found).  Cheap when they
 * do not; a JAR this cannot inspect is left to the commit, which refuses
 * it and says why.  1 when an inspection of the bytes as they are is
 * held, else 0.
 */
int repo_upload_inspect_early(struct repo_upload *u);
void repo_upload_free(struct repo_upload *u);

/*
 * Commit scratch file `scratch` of artifacts/ as an upload of `name`
 * (rsync's temp file renamed into place), with the labels set on it.
 * On success the scratch file is gone; refused, it stays.  A crash in the
 * middle leaves one or the other, never both names: it is staged out of
 * artifacts/ first, and repo_open() settles what it finds staged by the
 * catalog (the artifact's latest version has its bytes: it goes; else it
 * is put back).
 */
int repo_scratch_commit(struct repo *r, const struct repo_who *who,
			const char *env, const char *scratch,
			const char *name, struct catalog_version *out,
			struct cmfs_err *err);

/*
 * Scratch files (editors' and rsync's temp files), plain storage: `dir`
 * is 'a' (artifacts/) or 't' (tables/), as store.h has them.  0 or -errno.
 */
int repo_scratch_open(struct repo *r, const char *env, char dir,
		      const char *name, int flags, mode_t mode, int *out);
int repo_scratch_stat(struct repo *r, const char *env, char dir,
		      const char *name, struct stat *st);
int repo_scratch_truncate(struct repo *r, const char *env, char dir,
			  const char *name, off_t size);
/* Each scratch name of `dir` of `env`; `fn` non-zero stops. */
int repo_scratch_list(struct repo *r, const char *env, char dir,
		      int (*fn)(void *arg, const char *name), void *arg);
/* rm of a scratch file: the file, and the labels set on it. */
int repo_scratch_remove(struct repo *r, const char *env, char dir,
			const char *name);
/* statvfs(3) of the file system that holds the store. */
int repo_statfs(struct repo *r, struct statvfs *out);

/* Labels on a scratch file of artifacts/, kept in memory. */
int repo_scratch_label_set(struct repo *r, const char *env,
			   const char *scratch, const char *key,
			   const char *value, struct cmfs_err *err);
int repo_scratch_label_del(struct repo *r, const char *env,
			   const char *scratch, const char *key);
/* Append the value to `out`; -ENODATA when not set. */
int repo_scratch_label_get(struct repo *r, const char *env,
			   const char *scratch, const char *key,
			   struct buf *out);
/* Append each key, NUL-terminated, to `out`. */
int repo_scratch_label_list(struct repo *r, const char *env,
			    const char *scratch, struct buf *out);
/* Forget (to == NULL) or move the labels of a scratch file. */
void repo_scratch_label_move(struct repo *r, const char *env,
			     const char *from, const char *to);

/*
 * Whether extended attribute `xattr` (its full name) is a label a caller
 * may set or remove: -ENOTSUP outside user.*, -EPERM for user.cmfs.*
 * (computed by cmfs; with `who`, refused with an events line against
 * `object` of `env`, "" for none), else 0.
 */
int repo_label_writable(struct repo *r, const struct repo_who *who,
			const char *env, const char *object,
			const char *xattr);
/*
 * Labels of artifact `name`: `key` is the label key (the xattr name
 * without "user.").  Setting checks the syntax, the limits and, for the
 * sql-artifact labels, what the latest version's factories offer.
 */
int repo_label_set(struct repo *r, const struct repo_who *who,
		   const char *env, const char *name, const char *key,
		   const char *value, size_t len, struct cmfs_err *err);
int repo_label_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, const char *key,
		      struct cmfs_err *err);

/* Append the value of label `key` of artifact `name`; -ENODATA. */
int repo_label_get(struct repo *r, const char *env, const char *name,
		   const char *key, struct buf *out);
/* Append "user.<key>\0" for each label of artifact `name`. */
int repo_label_list(struct repo *r, const char *env, const char *name,
		    struct buf *out);

/*
 * Tables.  repo_table_write() parses `text` (the whole file) and, when it
 * is one valid CREATE TABLE for `name`, stores it as written, with its
 * LIKE source merged; -EINVAL/-EOPNOTSUPP/-EFBIG with the reason
 * otherwise, and the previous definition stays.
 */
/*
 * truncate(2) by name of table file `file` (<table>.sql) to `size`
 * bytes, with no open file: refused with an events line, -EINVAL for 0
 * (that drops no table: rm does), -EPERM for any other size.
 */
int repo_table_truncate(struct repo *r, const struct repo_who *who,
			const char *env, const char *file, uint64_t size);
int repo_table_write(struct repo *r, const struct repo_who *who,
		     const char *env, const char *name, const char *text,
		     size_t len, struct cmfs_err *err);
/*
 * rename(2) of table `from` onto table `to`: `text` (from's, as read by
 * the caller) written as `to` and `from` dropped, in one transaction with
 * one events line (action=rename table=from to=to), refused or done.
 */
int repo_table_rename(struct repo *r, const struct repo_who *who,
		      const char *env, const char *from, const char *to,
		      const char *text, size_t len, struct cmfs_err *err);
int repo_table_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, struct cmfs_err *err);
/*
 * rename(2) inside tables/, by what the names are (<table>.sql or a
 * scratch name, as name.h says): scratch to scratch moves the file,
 * scratch to table is repo_table_from_scratch(), table to table is
 * repo_table_rename() of its text, and table to scratch drops the table
 * and leaves its text as the scratch file, in one step as well (a crash
 * leaves the table or the scratch file, never both).
 */
int repo_table_move(struct repo *r, const struct repo_who *who,
		    const char *env, const char *from, const char *to,
		    struct cmfs_err *err);
/*
 * rename(2) of scratch file `scratch` of tables/ onto table `name` (sed
 * -i, vim's write): its text written as table `name` (one events line,
 * action=table-write) and the scratch file gone; refused, both stay as
 * they were.  A crash in the middle leaves one or the other, never both
 * names: the scratch file is staged out of tables/ first
 * (store_scratch_stage()), and repo_open() settles what it finds staged
 * by the catalog: the table holds its text (the commit happened) and it
 * goes, or it is put back.
 */
int repo_table_from_scratch(struct repo *r, const struct repo_who *who,
			    const char *env, const char *scratch,
			    const char *name, struct cmfs_err *err);
/*
 * Why the last write of table `name` (file, rename or restore) was
 * refused, appended to `out`; nothing once a write succeeded or the table
 * was removed.  Kept on the table's row of the catalog, so a remount
 * keeps it; a table not in the catalog keeps none (events keeps every
 * refusal).  0 or -ENOMEM.
 */
int repo_table_error(struct repo *r, const char *env, const char *name,
		     struct buf *out);
/* Append the text of table `name` as written; -ENOENT. */
int repo_table_text(struct repo *r, const char *env, const char *name,
		    struct buf *out, struct cmfs_err *err);

/*
 * Resolve table `name` of `env` now and render resolved/<name>.jars
 * (sql == 0) or .sql (sql == 1) into `out`.  `record`: write the
 * resolution (or its refusal) to events; a stat or an error read does
 * not.  Errors as in resolve.h.
 */
int repo_resolve(struct repo *r, const struct repo_who *who, const char *env,
		 const char *name, int sql, int record, struct buf *out,
		 struct cmfs_err *err);

/*
 * The size of resolved/<name>.jars (sql == 0) or .sql (sql == 1) now:
 * what a read would return, 0 when resolution fails (the reason is in
 * user.cmfs.error; without table `name` too).  Not an event.
 */
uint64_t repo_resolved_size(struct repo *r, const char *env,
			    const char *name, int sql);
/*
 * The mode of a file (dir 0) or directory (dir 1) of `area`: what never
 * changes (REPO_AREA_FIXED) has no write bits, 0444 or 0555; the rest
 * 0644 or 0755.  The caller takes away what its caller may not do.
 */
mode_t repo_mode(enum repo_area area, int dir);
/*
 * The attributes of version `v`'s file into `st`: in `area` (artifacts/
 * for the latest, REPO_AREA_FIXED for versions/) its mode, its size,
 * uploader and commit time, and its blocks.  Inode and links are the
 * caller's.
 */
void repo_ver_stat(const struct catalog_version *v, enum repo_area area,
		   struct stat *st);
/* The same of table `name`'s file (its text as written); -ENOENT. */
int repo_table_stat(struct repo *r, const char *env, const char *name,
		    struct stat *st);
/*
 * The mount settled generation `gen` of the catalog at `ns` (ns since
 * 1970): the kernel keeps nothing of resolved files from before it.  What
 * resolved files' times count from (repo_resolved_stat()).
 */
void repo_settled(struct repo *r, uint64_t gen, int64_t ns);
/* The generation settled last. */
uint64_t repo_settled_gen(struct repo *r);
/*
 * The attributes of resolved/<name>.jars (sql == 0) or .sql (sql == 1)
 * into `st`: a regular file, 0444, one link, its size now
 * (repo_resolved_size()) and its times: when the last change of the
 * catalog was settled, or now while one is not (a .sql: now, for it says
 * when it was resolved).  Owner and inode are the caller's.  -ENOENT
 * without table `name`.  Not an event.
 */
int repo_resolved_stat(struct repo *r, const char *env, const char *name,
		       int sql, struct stat *st);
/*
 * user.cmfs.refused-classes of resolved/<name>.*: every class outside the
 * class allowlist that compiling table `name` loads, "<artifact> <class>"
 * a line (resolve_refused()); empty when there is none.  Not an event.
 */
int repo_refused_classes(struct repo *r, const char *env, const char *name,
			 struct buf *out, struct cmfs_err *err);
/*
 * A computed attribute (the part after "user.cmfs.") of resolved/<name>
 * .jars (sql == 0) or .sql (sql == 1), appended to `out`:
 * "refused-classes" (repo_refused_classes(); empty when resolution fails
 * for another reason, which "error" tells) and "error" (empty when the
 * table resolves, else why not).  -ENOENT without table `name`, -ENODATA
 * for another attribute.  Not an event.
 */
int repo_resolved_computed(struct repo *r, const char *env, const char *name,
			   int sql, const char *attr, struct buf *out,
			   struct cmfs_err *err);
/*
 * The tables of `env` that resolve to artifact `name` now, one per line,
 * appended to `out` (user.cmfs.used-by).
 */
int repo_used_by(struct repo *r, const char *env, const char *name,
		 struct buf *out);

/*
 * A computed attribute (the part after "user.cmfs.": version, sha256,
 * factories, options, error, used-by) of artifact `name` at version `n` (0 = the
 * latest), appended to `out`.  -ENODATA for an unknown name.
 */
int repo_computed(struct repo *r, const char *env, const char *name,
		  int64_t n, const char *attr, struct buf *out,
		  struct cmfs_err *err);
/* The same of version `v` of artifact `name` as given (an inode's pinned
 * version, which the catalog may no longer hold). */
int repo_computed_ver(struct repo *r, const char *env, const char *name,
		      const struct catalog_version *v, const char *attr,
		      struct buf *out, struct cmfs_err *err);

/*
 * The audit trail of `env`.  Lines of reads (resolutions) reach the
 * catalog shortly after the read (a queue); these two write them first.
 */
int repo_events_size(struct repo *r, const char *env, uint64_t *out);
int repo_events_read(struct repo *r, const char *env, uint64_t off,
		     size_t size, struct buf *out);

/*
 * Make every change committed so far durable now (fsync(2) of a file
 * under the mount).  With sync = close they are already: 0.  -errno when
 * the store's file system reports a write error.
 */
int repo_sync(struct repo *r);

/* Write the queued lines of reads now (at unmount, before a fork...). */
void repo_flush_events(struct repo *r);

#endif
