/*
 * resolve.h - resolution: the JAR set a table needs, by CMF's rules
 * (DESIGN.md, "Resolution"), against the artifacts of its environment as
 * they are now.
 *
 * 1. The identifiers: `connector`, `format`, `key.format`, `value.format`
 *    (any other `*.format` option is the connector's own).
 * 2. A built-in needs no artifact, unless an artifact claims it too
 *    (-ENOTUNIQ).
 * 3. Otherwise exactly one artifact with that type and identifier label:
 *    none -ENOPKG, several -ENOTUNIQ.  Its latest version, pinned.
 * 4. A format without a format artifact is served by the table's own
 *    connector JAR when that bundles it; bundled only in another
 *    connector's JAR: -ENOPKG saying so; bundled there and carried by a
 *    format artifact as well: -ENOTUNIQ naming both.
 * 5. A match that is not a *.jar, or has no factory: -ENOEXEC.
 * 6. External classes that Flink loads while it compiles the table,
 *    outside the class allowlist: -EPERM naming them (the first few and
 *    how many more: resolve_refused() lists them all).
 * A table without a connector option: -EINVAL.
 */
#ifndef CMFS_RESOLVE_H
#define CMFS_RESOLVE_H

#include <stdint.h>

#include "buf.h"
#include "catalog.h"
#include "config.h"
#include "err.h"

#define RESOLVE_MAX_JARS 16

struct resolve_jar {
	char name[254];		/* artifact name */
	int64_t version;	/* pinned version */
	char kind[12];		/* "connector" or "format" */
	char identifier[128];	/* what it was matched for */
};

struct resolution {
	char table[129];
	size_t njars;		/* connector first, no duplicates */
	struct resolve_jar jars[RESOLVE_MAX_JARS];
	size_t nbuiltin;	/* identifiers served by the cluster */
	char builtin[RESOLVE_MAX_JARS][128];
};

/*
 * Resolve table `table` of environment `env` now.  `out` is filled on
 * success.  Errors as above, with the reason (and the fix) in `err`.
 */
int resolve_table(struct resolution *out, struct catalog *cat,
		  const struct config *cfg, const struct catalog_env *env,
		  const char *table, struct cmfs_err *err);

/*
 * Every class outside the class allowlist that compiling table `table`
 * loads, one "<artifact> <class>\n" line each, over every JAR it matches:
 * the whole list that an -EPERM shortens.  Nothing when there is none.
 * Other refusals as resolve_table().
 */
int resolve_refused(struct buf *out, struct catalog *cat,
		    const struct config *cfg, const struct catalog_env *env,
		    const char *table, struct cmfs_err *err);

/*
 * The contents of resolved/<t>.jars (sql == 0): one absolute path per
 * line, under `prefix`; or of resolved/<t>.sql (sql == 1): a comment,
 * ADD JAR per JAR, then the LIKE sources' DDL and the table's.  `now` is
 * the time stamped in the comment (ns).
 */
int resolve_render(struct buf *out, const struct resolution *res,
		   struct catalog *cat, const struct catalog_env *env,
		   const char *prefix, int sql, int64_t now,
		   struct cmfs_err *err);

/* 1 if artifact `name` is one of the JARs of `res`. */
int resolve_uses(const struct resolution *res, const char *name);

/*
 * Resolutions already made, with their outcome (the JAR set, or the errno
 * and the reason), each good for as long as the catalog generation and
 * the configuration it was made under are the current ones: a job start
 * reads resolved/<t>.jars once for its size and once for its bytes, and
 * a fleet of jobs reads the same tables.  A fixed number of slots, so its
 * memory is bounded (a few hundred bytes a slot).  Thread-safe.
 */
struct resolve_cache;

/* An empty cache, or NULL on ENOMEM; resolve_cache_free(NULL) is a no-op. */
struct resolve_cache *resolve_cache_new(void);
void resolve_cache_free(struct resolve_cache *rc);

/*
 * 1 when table `table` of environment `env_id` was resolved under `gen`
 * and `cfg`: *res, *code (0 or -errno) and `err` are filled as
 * resolve_table() would.  0 when not cached.
 */
int resolve_cache_get(struct resolve_cache *rc, uint64_t gen,
		      const void *cfg, int64_t env_id, const char *table,
		      struct resolution *res, int *code, struct cmfs_err *err);

/*
 * Empty the cache: before a configuration it may hold outcomes for is
 * freed (a later one could get its address).
 */
void resolve_cache_clear(struct resolve_cache *rc);

/* Keep the outcome of resolve_table(): `res` when code == 0, else `err`. */
void resolve_cache_put(struct resolve_cache *rc, uint64_t gen,
		       const void *cfg, int64_t env_id, const char *table,
		       const struct resolution *res, int code,
		       const struct cmfs_err *err);

#endif
