/*
 * export.h - `cmfs export` and `cmfs import`: a store as a plain
 * directory of CMF-style files, for backups and for moving between hosts.
 *
 * The directory (format 1):
 *
 *   <dir>/export.json                              kind Export: the format,
 *                                                  the cmfs version, the
 *                                                  environments
 *   <dir>/envs/<env>/environment.json              kind Environment
 *   <dir>/envs/<env>/artifacts/<name>/<n>/artifact.json   kind Artifact
 *   <dir>/envs/<env>/artifacts/<name>/<n>/<name>   the bytes of version n
 *   <dir>/envs/<env>/tables/<t>.sql                the text as written
 *   <dir>/envs/<env>/tables/<t>.json               kind Table: the merged
 *                                                  options, the LIKE
 *                                                  source's text
 *   <dir>/envs/<env>/events                        the audit trail
 *   <dir>/envs/<env>/next-versions                 "<name> <next>" a line:
 *                                                  the number the next
 *                                                  version of a name no
 *                                                  artifact holds now
 *                                                  gets (after rm or a
 *                                                  rename; absent when
 *                                                  there is none)
 *
 * artifact.json is what CMF's artifact API takes (apiVersion
 * cmf.confluent.io/v1, kind Artifact, metadata.name and labels, spec {}),
 * with the version in `status` (version, size, checksum.sha256), its time
 * in metadata.creationTimestamp (RFC 3339, ns) and what CMF has no field
 * for in metadata.annotations ("cmfs/uid": who uploaded it,
 * "cmfs/next-version": the number the artifact's next version gets, as
 * numbers of deleted versions are never reused).  Labels belong to the
 * artifact: every version's file carries them; import takes the latest's.
 * Each pair (artifact.json, bytes) is what `curl -F artifact=@... -F
 * file=@...` uploads to CMF.
 *
 * export_load() of an export_dump() reproduces the catalog: the same
 * environments (creation time, uid), artifacts, version numbers (and next
 * number, also of names no artifact holds now), bytes, times and uids, labels,
 * tables (text, merged options, LIKE text, time, uid) and events.  Inspections
 * are recomputed from the bytes.  Scratch files (editors' temp files) are not
 * exported; nor are the events of environments that no longer exist, nor
 * why a table's last write was refused (user.cmfs.error of the table:
 * an imported table starts with none; events keep the refusal).
 *
 * export.c writes the directory, import.c reads it; both through jansson.
 * JSON files are indented by two, keys in the order above.  The reader
 * takes UTF-8, integers only, no duplicate keys, no unknown keys, with
 * depth and size caps; a syntax error says "file:line:col: reason", a
 * schema error "file: reason" naming the key.  Every value present is checked
 * against the bytes (size, SHA-256) and the naming rules.  Besides the
 * keys written, import accepts artifact.json files as CMF users write
 * them: status, creationTimestamp and annotations may be missing (the
 * size and SHA-256 are then computed, the time is now, the uid 0).
 */
#ifndef CMFS_EXPORT_H
#define CMFS_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

/* The apiVersion of CMF's resources, and of cmfs's own (Table, Export). */
#define EXPORT_API_CMF "cmf.confluent.io/v1"
#define EXPORT_API_CMFS "cmfs/v1"
#define EXPORT_FORMAT 1

/* One version of an artifact, as artifact.json describes it. */
struct export_artifact {
	char name[254];
	int64_t version; /* 0 = not given (status missing) */
	int64_t next;	 /* 0 = not given */
	uint64_t size;	 /* with version */
	char sha256[65]; /* with version */
	int64_t mtime;	 /* ns since the epoch; -1 = not given */
	uint32_t uid;
	size_t nlabels; /* labels in key order, owned: */
	char **keys;	/* label keys (without "user.") */
	char **values;
};

/* Free what `a` owns; `a` is left empty. */
void export_artifact_release(struct export_artifact *a);

/* Append artifact.json for `a` (the full form, with status). */
int export_artifact_json(struct buf *out, const struct export_artifact *a);

/*
 * Parse artifact.json text.  0 and *out filled (release it), or -EINVAL
 * with "line:col: reason" for a syntax error, the reason alone for a
 * schema error (-EFBIG past a cap, -ENOMEM).
 */
int export_artifact_parse(struct export_artifact *out, const char *text,
			  size_t len, struct cmfs_err *err);

/* What a dump or load moved. */
struct export_stats {
	size_t envs;
	size_t artifacts;
	size_t versions;
	size_t tables;
	size_t events;	/* lines */
	uint64_t bytes; /* of versions */
};

/*
 * Write the store in directory `store` (which must hold a catalog; a
 * mounted store is read through one snapshot) to `dir`, which must not
 * exist or be empty.  Each version's bytes are checked against their
 * SHA-256 on the way.  On failure what was written is removed.  `out`
 * may be NULL.  -ENOENT (no store), -EEXIST/-ENOTEMPTY (dir), -EIO (a
 * corrupt blob: run cmfs fsck), -ENOSPC ...
 */
int export_dump(const char *store, const char *dir, struct export_stats *out,
		struct cmfs_err *err);

/*
 * Read export `dir` into the store in directory `store` (created when
 * missing).  The store must not be in use (mounted): -EBUSY; and none of
 * the environments may exist there already: -EEXIST.  Everything is
 * checked before anything is committed, in one catalog transaction: on
 * failure the store is as it was.  -EINVAL (with file:line:col) for a
 * directory that is not a valid export.  Blobs of at most `inline_max`
 * bytes go into the catalog, as an upload's would ([store] inline_max;
 * 0: every blob is a file).
 */
int export_load(const char *dir, const char *store, uint64_t inline_max,
		struct export_stats *out, struct cmfs_err *err);

/*
 * The same with the catalog at `catalog` (a catalog URI, [catalog] url)
 * instead of the store's catalog.db; NULL: the store's.  An import into
 * a database binds it to the store (catalog_bind_store) and refuses a
 * store that has a catalog.db of its own (-EEXIST), and a database in use
 * by a mount (-EBUSY).
 */
int export_dump_from(const char *store, const char *catalog, const char *dir,
		     struct export_stats *out, struct cmfs_err *err);
int export_load_into(const char *dir, const char *store, const char *catalog,
		     uint64_t inline_max, struct export_stats *out,
		     struct cmfs_err *err);

#endif
