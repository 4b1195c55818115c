/*
 * catalog.h - the catalog: environments, artifacts, versions, labels,
 * inspections, tables and events, behind one interface.
 *
 * Every function here dispatches to a backend (struct catalog_backend):
 * SQLite (catalog_sqlite*.c, WAL mode, foreign keys, schema version with
 * migrations), the default, or PostgreSQL (catalog_pg.c, on libpq), a
 * database server that several hosts are to mount.  Both implement the
 * same table of functions; every rule is the caller's (repo.c).
 *
 * Transactions: catalog_begin() starts a write transaction that belongs to
 * the calling thread until catalog_end(); calls made in between by that
 * thread are part of it.  A call outside a transaction is its own
 * transaction.  Other threads wait while one holds a transaction.
 *
 * Rows are plain structs filled by the callee; strings in them are owned
 * by the row (fixed arrays) unless a comment says otherwise.  A walk's
 * callback returns 0 to go on, or a negative errno, which stops the walk
 * and is returned.  Errors:
 * -ENOENT (no such row), -EEXIST, -ENOTEMPTY, -ENOSPC (disk full), -EIO.
 */
#ifndef CMFS_CATALOG_H
#define CMFS_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct catalog;
struct jar_report;

struct catalog_env {
	int64_t id;
	char name[64];
	int64_t ctime;		/* ns since the epoch */
	uint32_t uid;
};

struct catalog_version {
	int64_t artifact_id;
	int64_t n;		/* 1, 2, ... per artifact, never reused */
	char sha256[65];
	uint64_t size;
	int64_t mtime;		/* ns, the upload's commit time */
	uint32_t uid;		/* who uploaded it */
	int64_t insp;		/* its inspection's row, 0 = none known */
};

struct catalog_artifact {
	int64_t id;
	int64_t env_id;
	char name[254];
	int64_t nversions;
	struct catalog_version latest;
};

struct catalog_table {
	int64_t id;
	int64_t env_id;
	char name[129];
	uint64_t size;		/* bytes of the text as written */
	int64_t mtime;		/* ns */
	uint32_t uid;
};

/*
 * A table's stored definition.  `ddl` is the text as written; `like_ddl`
 * the text of its LIKE sources at write time (NULL without LIKE); `opts`
 * the merged WITH options, key/value pairs in order.  Owned by the struct:
 * free with catalog_table_def_release().
 */
struct catalog_table_def {
	char *ddl;
	char *like_ddl;
	size_t nopts;
	char **keys;
	char **values;
};

/* Frees what `d` owns and zeroes it; a zeroed struct is a no-op. */
void catalog_table_def_release(struct catalog_table_def *d);

/*
 * Open the catalog at `uri`: a file path (SQLite), "sqlite:<path>", or a
 * libpq connection URI "postgresql://..." (PostgreSQL).  Creates and
 * migrates the schema.  A PostgreSQL catalog is open to any number of
 * such handles, across hosts.  Free with catalog_close().
 */
int catalog_open(struct catalog **out, const char *uri, struct cmfs_err *err);
void catalog_close(struct catalog *c);

/* Start a write transaction (see above); 0 or -errno. */
int catalog_begin(struct catalog *c, struct cmfs_err *err);
/* Commit when rc == 0, else roll back.  Returns rc, or the commit's error. */
int catalog_end(struct catalog *c, int rc, struct cmfs_err *err);

/*
 * A number that grows with every change made through this handle (rows of
 * environments, artifacts, versions, labels, inspections, tables; not
 * events), and with each change made elsewhere that a watch is told of
 * (catalog_watch).  What was computed from the catalog while it read g is
 * still true while it reads g: the key of the caches above the catalog,
 * and of the answers catalog_table_get, catalog_table_def,
 * catalog_label_get, catalog_art_by_label and catalog_insp_of keep
 * themselves (catalog.c).
 */
uint64_t catalog_generation(struct catalog *c);

/* SQLite's integrity check (or the backend's); "ok" when it passes.
 * *out is the caller's to free. */
int catalog_check(struct catalog *c, char **out, struct cmfs_err *err);

/* Environments. */
int catalog_env_add(struct catalog *c, const char *name, uint32_t uid,
		    int64_t now, struct catalog_env *out, struct cmfs_err *err);
int catalog_env_get(struct catalog *c, const char *name,
		    struct catalog_env *out, struct cmfs_err *err);
/* -ENOTEMPTY while the environment holds artifacts or tables. */
int catalog_env_del(struct catalog *c, int64_t env_id, struct cmfs_err *err);
int catalog_env_list(struct catalog *c,
		     int (*fn)(void *arg, const struct catalog_env *e),
		     void *arg, struct cmfs_err *err);

/* Artifacts: `out` includes the latest version. */
int catalog_art_get(struct catalog *c, int64_t env_id, const char *name,
		    struct catalog_artifact *out, struct cmfs_err *err);
/* A new artifact without versions; *out its id.  -EEXIST: name taken. */
int catalog_art_add(struct catalog *c, int64_t env_id, const char *name,
		    int64_t *out, struct cmfs_err *err);
/* Delete an artifact with its versions and labels. */
int catalog_art_del(struct catalog *c, int64_t art_id, struct cmfs_err *err);
/* Artifact `art_id` takes `name` in its environment: -EEXIST if taken. */
int catalog_art_rename(struct catalog *c, int64_t art_id, const char *name,
		       struct cmfs_err *err);
/* How many artifacts environment `env_id` holds, into *out. */
int catalog_art_count(struct catalog *c, int64_t env_id, uint64_t *out,
		      struct cmfs_err *err);
/* In name order; artifacts without versions are skipped. */
int catalog_art_list(struct catalog *c, int64_t env_id,
		     int (*fn)(void *arg, const struct catalog_artifact *a),
		     void *arg, struct cmfs_err *err);
/* Artifacts of `env_id` whose label `key` has value `value`, name order. */
int catalog_art_by_label(struct catalog *c, int64_t env_id, const char *key,
			 const char *value,
			 int (*fn)(void *arg, const struct catalog_artifact *a),
			 void *arg, struct cmfs_err *err);
/*
 * catalog_art_by_label(), the value of each artifact's label `key2` read
 * with it (one round trip where the backend can) and kept as
 * catalog_label_get()'s answer while the generation stands, so that the
 * caller's catalog_label_get(a->id, key2) asks nothing more; so is the
 * inspection of each one's latest version where the backend reads it
 * too (catalog_insp_of).
 */
int catalog_art_by_label_with(struct catalog *c, int64_t env_id,
			      const char *key, const char *value,
			      const char *key2,
			      int (*fn)(void *arg,
					const struct catalog_artifact *a),
			      void *arg, struct cmfs_err *err);

/*
 * Versions.  add: the artifact's next number (never one used before),
 * its row into *out (NULL: not wanted); get: version `n`, -ENOENT if
 * none; del: -ENOENT if none; list: in number order.
 */
int catalog_ver_add(struct catalog *c, int64_t art_id, const char *sha256,
		    uint64_t size, int64_t mtime, uint32_t uid,
		    struct catalog_version *out, struct cmfs_err *err);
int catalog_ver_get(struct catalog *c, int64_t art_id, int64_t n,
		    struct catalog_version *out, struct cmfs_err *err);
int catalog_ver_del(struct catalog *c, int64_t art_id, int64_t n,
		    struct cmfs_err *err);
int catalog_ver_list(struct catalog *c, int64_t art_id,
		     int (*fn)(void *arg, const struct catalog_version *v),
		     void *arg, struct cmfs_err *err);
/* How many versions (in any artifact) refer to blob `sha256`. */
int catalog_blob_refs(struct catalog *c, const char *sha256, uint64_t *out,
		      struct cmfs_err *err);
/* Sum of the sizes of distinct blobs. */
int catalog_blob_total(struct catalog *c, uint64_t *out,
		       struct cmfs_err *err);
/*
 * Each environment name, artifact name and version number (as text, in
 * row[0..2]) of the versions that refer to blob `sha256`.
 */
int catalog_ver_by_sha(struct catalog *c, const char *sha256,
		       int (*fn)(void *arg, const char *const *row), void *arg,
		       struct cmfs_err *err);

/*
 * Durability.  A catalog opens with every commit waiting for the disk;
 * catalog_set_sync(c, 0) lets commits return before (the caller then
 * syncs the file system itself: store_sync()).  Either way a commit is
 * whole or absent after a crash.
 *
 * The unsynced blobs: those whose bytes may not be on disk yet.  Added in
 * the transaction of the version that refers to one, so that the row is
 * on disk whenever that version is; catalog_unsynced_mark() gives the
 * newest row's number before a sync, catalog_unsynced_clear() drops the
 * rows up to it after.  unsynced_list gives each distinct sha in row[0].
 */
int catalog_set_sync(struct catalog *c, int full, struct cmfs_err *err);
/*
 * Copy what the catalog's log holds into its file, beside commits (never
 * blocking one).  With catalog_set_sync(c, 0), commits leave this to the
 * caller, who calls it after its syncs.
 */
int catalog_checkpoint(struct catalog *c, struct cmfs_err *err);
/*
 * Every transaction committed so far on disk, and nothing else of the
 * file system: the catalog's own files (its log, its file) synced, where
 * a syncfs() would also write out what others have in flight.  0 or
 * -errno.
 */
int catalog_sync(struct catalog *c, struct cmfs_err *err);
int catalog_unsynced_add(struct catalog *c, const char *sha256,
			 struct cmfs_err *err);
int catalog_unsynced_mark(struct catalog *c, int64_t *out,
			  struct cmfs_err *err);
int catalog_unsynced_clear(struct catalog *c, int64_t upto,
			   struct cmfs_err *err);
int catalog_unsynced_list(struct catalog *c,
			  int (*fn)(void *arg, const char *const *row),
			  void *arg, struct cmfs_err *err);

/*
 * The loose blobs: blob files that may have no version referring to them,
 * the only ones a mount may free.  add before a new blob file is linked
 * into the store (in a transaction of its own, so that the row is there
 * whenever the file may be); the catalog adds one itself when the last
 * version of a blob goes, and drops it when a version takes the blob.
 * list gives each sha256 in row[0]; del drops a row (none: not an error).
 */
int catalog_loose_add(struct catalog *c, const char *sha256,
		      struct cmfs_err *err);
int catalog_loose_del(struct catalog *c, const char *sha256,
		      struct cmfs_err *err);
int catalog_loose_list(struct catalog *c,
		       int (*fn)(void *arg, const char *const *row),
		       void *arg, struct cmfs_err *err);

/*
 * Inline blobs: the bytes of a small blob kept in the catalog itself, by
 * sha256, instead of in a file of the store (repo_upload.c says when and
 * why).
 * A row goes in the transaction that drops the last version referring to
 * its blob.  put does nothing when the row is there; get gives a copy,
 * *out the caller's to free (*len bytes), or -ENOENT when the blob is not
 * inline; list gives each row's sha256 and size (as text) in row[0..1],
 * by sha256.
 */
int catalog_inline_put(struct catalog *c, const char *sha256, const void *data,
		       size_t len, struct cmfs_err *err);
int catalog_inline_get(struct catalog *c, const char *sha256, void **out,
		       size_t *len, struct cmfs_err *err);
/* -ENOENT when there is no such row. */
int catalog_inline_del(struct catalog *c, const char *sha256,
		       struct cmfs_err *err);
int catalog_inline_list(struct catalog *c,
			int (*fn)(void *arg, const char *const *row), void *arg,
			struct cmfs_err *err);

/*
 * Blobs kept in the database, for a catalog that several hosts mount
 * (PostgreSQL): there every blob that is not inline is also bytes of the
 * catalog, which each host copies into its store when it first reads it
 * (blob_open).  catalog_keeps_blobs() is 1 for such a catalog, 0 where
 * blobs are files of the store only (SQLite).
 *
 * put: the first `size` bytes of `fd` become blob `sha256` unless the
 * catalog has it; part of the caller's transaction, the one whose version
 * first refers to it, and no other host frees the blob before that
 * transaction ends.  The catalog frees a blob in the transaction that
 * drops the last version referring to it, as it does an inline blob.
 * get: the blob's bytes written into `fd` from offset 0, *size of them;
 * -ENOENT when the catalog does not have it.  Either: -ENOTSUP where the
 * catalog keeps no blobs.
 */
int catalog_keeps_blobs(struct catalog *c);
int catalog_blob_put(struct catalog *c, const char *sha256, int fd,
		     uint64_t size, struct cmfs_err *err);
int catalog_blob_get(struct catalog *c, const char *sha256, int fd,
		     uint64_t *size, struct cmfs_err *err);
/* Each blob the catalog keeps: row[0] its sha256, row[1] its size (as
 * text), by sha256 (none where it keeps none). */
int catalog_blob_list(struct catalog *c,
		      int (*fn)(void *arg, const char *const *row), void *arg,
		      struct cmfs_err *err);

/*
 * Changes committed elsewhere: through other handles, on other hosts, of
 * a catalog that several hosts mount (PostgreSQL; elsewhere there is
 * nothing to watch: 0, and fn is never called).  From a thread of the
 * catalog's own, fn(arg, env, name, kind) for each such change, within a
 * second of its commit: kind 'a', artifact `name` of environment `env`
 * (it, its versions or labels); 't', table `name`; 'e', environment
 * `env` itself (name ""); and fn(arg, NULL, NULL, 0) when changes may
 * have been missed (the watch lost its connection and made it again):
 * anything may have changed.  catalog_generation() has grown before each
 * call.  Changes made through this handle are not reported.  One watch
 * per handle; catalog_unwatch() (or catalog_close()) stops it, and fn is
 * not called once it returns.
 */
typedef void (*catalog_watch_fn)(void *arg, const char *env, const char *name,
				 int kind);
int catalog_watch(struct catalog *c, catalog_watch_fn fn, void *arg,
		  struct cmfs_err *err);
void catalog_unwatch(struct catalog *c);

/* Labels: key without the "user." prefix, value as bytes. */
int catalog_label_set(struct catalog *c, int64_t art_id, const char *key,
		      const char *value, struct cmfs_err *err);
/* -ENODATA when the label is not set. */
int catalog_label_del(struct catalog *c, int64_t art_id, const char *key,
		      struct cmfs_err *err);
/* *out is the caller's to free; -ENODATA when not set. */
int catalog_label_get(struct catalog *c, int64_t art_id, const char *key,
		      char **out, struct cmfs_err *err);
/* In key order. */
int catalog_label_list(struct catalog *c, int64_t art_id,
		       int (*fn)(void *arg, const char *key, const char *value),
		       void *arg, struct cmfs_err *err);

/* Inspections, cached by blob: what jar_inspect() found. */
int catalog_insp_put(struct catalog *c, const char *sha256,
		     const struct jar_report *r, struct cmfs_err *err);
/*
 * The blobs, referred to by a version, whose inspection an older inspector
 * made (below JAR_INSPECTOR): row[0] the sha256, row[1] a version's size.
 */
int catalog_insp_stale(struct catalog *c,
		       int (*fn)(void *arg, const char *const *row),
		       void *arg, struct cmfs_err *err);
/* *out freed with jar_report_free(); -ENOENT when not inspected. */
int catalog_insp_get(struct catalog *c, const char *sha256,
		     struct jar_report **out, struct cmfs_err *err);
/* The same for version v's blob: by the row v names (a resolution's
 * look-up, one page where the catalog is not in memory); answered from
 * what catalog_art_by_label_with() read while the generation stands. */
int catalog_insp_of(struct catalog *c, const struct catalog_version *v,
		    struct jar_report **out, struct cmfs_err *err);
/* The same for what a label check reads, the factories: their option
 * sets may be left unread, every one marked unknown. */
int catalog_insp_offers(struct catalog *c, const struct catalog_version *v,
			struct jar_report **out, struct cmfs_err *err);

/* Tables.  catalog_table_get reads the definition with the row where
 * the backend can (table_get_def), for the catalog_table_def that follows
 * in the same generation. */
int catalog_table_get(struct catalog *c, int64_t env_id, const char *name,
		      struct catalog_table *out, struct cmfs_err *err);
/* The stored definition of table `id`. */
int catalog_table_def(struct catalog *c, int64_t id,
		      struct catalog_table_def *out, struct cmfs_err *err);
/* Create or replace table `name`. */
int catalog_table_put(struct catalog *c, int64_t env_id, const char *name,
		      const struct catalog_table_def *def, int64_t mtime,
		      uint32_t uid, struct catalog_table *out,
		      struct cmfs_err *err);
int catalog_table_del(struct catalog *c, int64_t id, struct cmfs_err *err);
/*
 * Why the last write of table `id` was refused: `text`, or NULL for none.
 * catalog_table_put clears it in its own statement; the row's removal
 * takes it.  A transaction of its own or part of the caller's.
 */
int catalog_table_refusal_set(struct catalog *c, int64_t id, const char *text,
			      struct cmfs_err *err);
/* Append table `id`'s refusal to `out` (nothing when none); -ENOENT. */
struct buf;
int catalog_table_refusal_get(struct catalog *c, int64_t id, struct buf *out,
			      struct cmfs_err *err);
int catalog_table_count(struct catalog *c, int64_t env_id, uint64_t *out,
			struct cmfs_err *err);
/*
 * Set every environment's counts of artifacts and tables (what
 * catalog_art_count and catalog_table_count return, kept by the catalog
 * as rows come and go) from the rows themselves: for cmfs fsck --repair.
 */
int catalog_env_recount(struct catalog *c, struct cmfs_err *err);
/*
 * Versions of inspected blobs that do not name their blob's inspection
 * row (*out of them; resolution then finds it by the blob, more slowly);
 * with `relink`, every version is made to name its blob's (or none): for
 * cmfs fsck.
 */
int catalog_insp_links(struct catalog *c, int relink, uint64_t *out,
		       struct cmfs_err *err);
/* In name order. */
int catalog_table_list(struct catalog *c, int64_t env_id,
		       int (*fn)(void *arg, const struct catalog_table *t),
		       void *arg, struct cmfs_err *err);

/*
 * Events: each environment's log is the concatenation of its lines (each
 * ending in '\n').  Kept by environment name, so the trail outlives an
 * environment that is removed.
 */
int catalog_event_add(struct catalog *c, const char *env, const char *line,
		      struct cmfs_err *err);
/*
 * Append `n` lines, line i to the log of envs[i], in one transaction of
 * their own (inside a transaction: part of it).  Lines that record no
 * change (reads, refusals) are not worth a disk flush of their own: they
 * become durable with the next change's commit.
 */
int catalog_event_add_many(struct catalog *c, size_t n,
			   const char *const *envs, const char *const *lines,
			   struct cmfs_err *err);
int catalog_event_size(struct catalog *c, const char *env, uint64_t *out,
		       struct cmfs_err *err);
/* Append to `out` (a struct buf) the bytes [off, off + size) of the log. */
struct buf;
int catalog_event_read(struct catalog *c, const char *env, uint64_t off,
		       size_t size, struct buf *out, struct cmfs_err *err);

/*
 * Retention.  The log of an environment starts at its oldest line kept:
 * offsets of catalog_event_size() and catalog_event_read() count from
 * there.  catalog_event_envs() calls fn(arg, env) for each environment
 * that has lines (removed ones too), in name order; a non-zero return
 * stops it and is returned.  catalog_event_trim() removes the oldest lines
 * of `env`: those whose time is before `before` (a time value as lines
 * hold it, "2026-11-30T06:30:00.000Z"; NULL: none), then all but the
 * newest `max_rows` (0: no limit); *removed gets how many went.
 */
int catalog_event_envs(struct catalog *c,
		       int (*fn)(void *arg, const char *env), void *arg,
		       struct cmfs_err *err);
int catalog_event_trim(struct catalog *c, const char *env, uint64_t max_rows,
		       const char *before, uint64_t *removed,
		       struct cmfs_err *err);

/*
 * Additions for the tools beside a mount (cmfs fsck, export, import).
 */

/*
 * Open the catalog at `uri` only if it exists and holds a cmfs schema:
 * never creates a file.  `rdonly`: read only (SQLite opens the file
 * without write access; the schema is not migrated).  -ENOENT when the
 * file is missing, -EPROTO when it holds no cmfs schema (an empty file,
 * another database) or one this cmfs cannot use, -EIO when SQLite cannot
 * read it (not a database, malformed).  Free with catalog_close().
 */
int catalog_open_existing(struct catalog **out, const char *uri, int rdonly,
			  struct cmfs_err *err);

/*
 * Start a read transaction: the calling thread sees one snapshot of the
 * catalog until catalog_end() (whose rc is then only a status), while
 * other connections go on writing.  Same ownership rules as
 * catalog_begin().
 */
int catalog_begin_read(struct catalog *c, struct cmfs_err *err);

/*
 * Insert version v->n of artifact v->artifact_id exactly as given (sha256,
 * size, mtime, uid), and raise the artifact's next version number above
 * it.  -EEXIST when that number is taken.
 */
int catalog_ver_put(struct catalog *c, const struct catalog_version *v,
		    struct cmfs_err *err);

/*
 * The number the next version of artifact `art_id` will get (numbers of
 * deleted versions are never reused, so it may be above latest + 1).
 */
int catalog_art_next_get(struct catalog *c, int64_t art_id, int64_t *out,
			 struct cmfs_err *err);
/*
 * Raise it to `n` (a larger number, which the name's retired numbers may
 * have given the artifact, stays); -EINVAL unless `n` is above every
 * version the artifact has.
 */
int catalog_art_next_set(struct catalog *c, int64_t art_id, int64_t n,
			 struct cmfs_err *err);

/*
 * Retired names: an artifact name of environment `env` that no artifact
 * holds now, with the number its next version will get if one takes the
 * name again (version numbers of a name are never reused, whatever
 * artifact holds it: rm, then a new upload, goes on counting).  list
 * calls `fn` for each, in name order; put records one (an export's,
 * cmfs import), keeping the larger number; -EEXIST while an artifact
 * holds the name.
 */
int catalog_retired_list(struct catalog *c, const char *env,
			 int (*fn)(void *arg, const char *name, int64_t next),
			 void *arg, struct cmfs_err *err);
int catalog_retired_put(struct catalog *c, const char *env, const char *name,
			int64_t next, struct cmfs_err *err);

/*
 * The store whose files hold the blobs of this catalog's versions (those
 * not inline): `id` (its host's name and its path) recorded at the first
 * call; a call with another id is refused (-EXDEV, the message names the
 * store recorded), so that a catalog whose blobs are one store's files is
 * not mounted from another.  A catalog kept inside its store (SQLite)
 * has nothing to check: 0.  A catalog that keeps blobs (PostgreSQL)
 * accepts any store once it has every version's bytes; until then only
 * the store recorded, with 1: that store's blobs are to be put in the
 * catalog (catalog_blob_put).
 */
int catalog_bind_store(struct catalog *c, const char *id,
		       struct cmfs_err *err);

/*
 * For tests: the SQL text of the SQLite backend's statement that finds an
 * environment's artifacts by label (what resolution runs for every
 * identifier), so that a test can pin its query plan to the label index.
 */
const char *catalog_sqlite_by_label_sql(void);

/*
 * The backend table.  Each entry has the signature of the public function
 * of the same name, with `void *impl` in place of `struct catalog *`.
 */
struct catalog_backend {
	const char *name;
	int (*open)(void **impl, const char *uri, struct cmfs_err *err);
	void (*close)(void *impl);
	int (*begin)(void *impl, struct cmfs_err *err);
	int (*end)(void *impl, int rc, struct cmfs_err *err);
	int (*check)(void *impl, char **out, struct cmfs_err *err);
	int (*env_add)(void *impl, const char *name, uint32_t uid, int64_t now,
		       struct catalog_env *out, struct cmfs_err *err);
	int (*env_get)(void *impl, const char *name, struct catalog_env *out,
		       struct cmfs_err *err);
	int (*env_del)(void *impl, int64_t env_id, struct cmfs_err *err);
	int (*env_list)(void *impl,
			int (*fn)(void *arg, const struct catalog_env *e),
			void *arg, struct cmfs_err *err);
	int (*art_get)(void *impl, int64_t env_id, const char *name,
		       struct catalog_artifact *out, struct cmfs_err *err);
	int (*art_add)(void *impl, int64_t env_id, const char *name,
		       int64_t *out, struct cmfs_err *err);
	int (*art_del)(void *impl, int64_t art_id, struct cmfs_err *err);
	int (*art_rename)(void *impl, int64_t art_id, const char *name,
			  struct cmfs_err *err);
	int (*art_count)(void *impl, int64_t env_id, uint64_t *out,
			 struct cmfs_err *err);
	int (*art_list)(void *impl, int64_t env_id,
			int (*fn)(void *arg, const struct catalog_artifact *a),
			void *arg, struct cmfs_err *err);
	int (*art_by_label)(void *impl, int64_t env_id, const char *key,
			    const char *value,
			    int (*fn)(void *arg,
				      const struct catalog_artifact *a),
			    void *arg, struct cmfs_err *err);
	int (*ver_add)(void *impl, int64_t art_id, const char *sha256,
		       uint64_t size, int64_t mtime, uint32_t uid,
		       struct catalog_version *out, struct cmfs_err *err);
	int (*ver_get)(void *impl, int64_t art_id, int64_t n,
		       struct catalog_version *out, struct cmfs_err *err);
	int (*ver_del)(void *impl, int64_t art_id, int64_t n,
		       struct cmfs_err *err);
	int (*ver_list)(void *impl, int64_t art_id,
			int (*fn)(void *arg, const struct catalog_version *v),
			void *arg, struct cmfs_err *err);
	int (*blob_refs)(void *impl, const char *sha256, uint64_t *out,
			 struct cmfs_err *err);
	int (*blob_total)(void *impl, uint64_t *out, struct cmfs_err *err);
	int (*set_sync)(void *impl, int full, struct cmfs_err *err);
	int (*checkpoint)(void *impl, struct cmfs_err *err);
	int (*sync)(void *impl, struct cmfs_err *err);
	int (*env_recount)(void *impl, struct cmfs_err *err);
	int (*insp_links)(void *impl, int relink, uint64_t *out,
			  struct cmfs_err *err);
	int (*unsynced_add)(void *impl, const char *sha256,
			    struct cmfs_err *err);
	int (*unsynced_mark)(void *impl, int64_t *out, struct cmfs_err *err);
	int (*unsynced_clear)(void *impl, int64_t upto, struct cmfs_err *err);
	int (*unsynced_list)(void *impl,
			     int (*fn)(void *arg, const char *const *row),
			     void *arg, struct cmfs_err *err);
	int (*loose_add)(void *impl, const char *sha256, struct cmfs_err *err);
	int (*loose_del)(void *impl, const char *sha256, struct cmfs_err *err);
	int (*loose_list)(void *impl,
			  int (*fn)(void *arg, const char *const *row),
			  void *arg, struct cmfs_err *err);
	int (*insp_stale)(void *impl,
			  int (*fn)(void *arg, const char *const *row),
			  void *arg, struct cmfs_err *err);
	int (*ver_by_sha)(void *impl, const char *sha256,
			  int (*fn)(void *arg, const char *const *row),
			  void *arg, struct cmfs_err *err);
	int (*inline_put)(void *impl, const char *sha256, const void *data,
			  size_t len, struct cmfs_err *err);
	int (*inline_get)(void *impl, const char *sha256, void **out,
			  size_t *len, struct cmfs_err *err);
	int (*inline_del)(void *impl, const char *sha256, struct cmfs_err *err);
	int (*inline_list)(void *impl,
			   int (*fn)(void *arg, const char *const *row),
			   void *arg, struct cmfs_err *err);
	int (*label_set)(void *impl, int64_t art_id, const char *key,
			 const char *value, struct cmfs_err *err);
	int (*label_del)(void *impl, int64_t art_id, const char *key,
			 struct cmfs_err *err);
	int (*label_get)(void *impl, int64_t art_id, const char *key,
			 char **out, struct cmfs_err *err);
	int (*label_list)(void *impl, int64_t art_id,
			  int (*fn)(void *arg, const char *key,
				    const char *value),
			  void *arg, struct cmfs_err *err);
	int (*insp_put)(void *impl, const char *sha256,
			const struct jar_report *r, struct cmfs_err *err);
	/* options 0: the factories' option sets may be left unknown */
	int (*insp_get)(void *impl, const char *sha256, int64_t id,
			int options, struct jar_report **out,
			struct cmfs_err *err);
	int (*table_get)(void *impl, int64_t env_id, const char *name,
			 struct catalog_table *out, struct cmfs_err *err);
	int (*table_def)(void *impl, int64_t id, struct catalog_table_def *out,
			 struct cmfs_err *err);
	int (*table_put)(void *impl, int64_t env_id, const char *name,
			 const struct catalog_table_def *def, int64_t mtime,
			 uint32_t uid, struct catalog_table *out,
			 struct cmfs_err *err);
	int (*table_del)(void *impl, int64_t id, struct cmfs_err *err);
	int (*table_refusal_set)(void *impl, int64_t id, const char *text,
				 struct cmfs_err *err);
	int (*table_refusal_get)(void *impl, int64_t id, struct buf *out,
				 struct cmfs_err *err);
	int (*table_count)(void *impl, int64_t env_id, uint64_t *out,
			   struct cmfs_err *err);
	int (*table_list)(void *impl, int64_t env_id,
			  int (*fn)(void *arg, const struct catalog_table *t),
			  void *arg, struct cmfs_err *err);
	int (*event_add)(void *impl, size_t n, const char *const *envs,
			 const char *const *lines, struct cmfs_err *err);
	int (*event_size)(void *impl, const char *env, uint64_t *out,
			  struct cmfs_err *err);
	int (*event_read)(void *impl, const char *env, uint64_t off,
			  size_t size, struct buf *out, struct cmfs_err *err);
	int (*event_envs)(void *impl, int (*fn)(void *arg, const char *env),
			  void *arg, struct cmfs_err *err);
	int (*event_trim)(void *impl, const char *env, uint64_t max_rows,
			  const char *before, uint64_t *removed,
			  struct cmfs_err *err);
	int (*open_existing)(void **impl, const char *uri, int rdonly,
			     struct cmfs_err *err);
	int (*begin_read)(void *impl, struct cmfs_err *err);
	int (*ver_put)(void *impl, const struct catalog_version *v,
		       struct cmfs_err *err);
	int (*art_next_get)(void *impl, int64_t art_id, int64_t *out,
			    struct cmfs_err *err);
	int (*retired_list)(void *impl, const char *env,
			    int (*fn)(void *arg, const char *name,
				      int64_t next),
			    void *arg, struct cmfs_err *err);
	int (*retired_put)(void *impl, const char *env, const char *name,
			   int64_t next, struct cmfs_err *err);
	int (*art_next_set)(void *impl, int64_t art_id, int64_t n,
			    struct cmfs_err *err);
	/* NULL: the catalog lives in its store (nothing to check). */
	int (*bind_store)(void *impl, const char *id, struct cmfs_err *err);
	/* NULL: the catalog keeps no blobs (catalog_keeps_blobs). */
	int (*blob_put)(void *impl, const char *sha256, int fd, uint64_t size,
			struct cmfs_err *err);
	int (*blob_get)(void *impl, const char *sha256, int fd,
			uint64_t *size, struct cmfs_err *err);
	int (*blob_list)(void *impl,
			 int (*fn)(void *arg, const char *const *row),
			 void *arg, struct cmfs_err *err);
	/* NULL: nothing to watch (catalog_watch). */
	int (*watch)(void *impl, catalog_watch_fn fn, void *arg,
		     struct cmfs_err *err);
	void (*unwatch)(void *impl);
	/* art_by_label() with each artifact's label key2 (value2 NULL: the
	 * artifact has none) and, where the backend reads it in the same
	 * round trip, the inspection of its latest version (NULL: not read,
	 * or none); both borrowed for the call. */
	int (*art_by_label_with)(void *impl, int64_t env_id, const char *key,
				 const char *value, const char *key2,
				 int (*fn)(void *arg,
					   const struct catalog_artifact *a,
					   const char *value2,
					   const struct jar_report *latest),
				 void *arg, struct cmfs_err *err);
	/* table_get() and table_def() of that table in one call (one round
	 * trip where it counts); *def the caller's to release on success. */
	int (*table_get_def)(void *impl, int64_t env_id, const char *name,
			     struct catalog_table *out,
			     struct catalog_table_def *def,
			     struct cmfs_err *err);
};

extern const struct catalog_backend catalog_sqlite_backend;
/* PostgreSQL (catalog_pg.c), for a "postgresql://" or "postgres://" URI. */
extern const struct catalog_backend catalog_pg_backend;

#endif
