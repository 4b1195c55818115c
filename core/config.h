/*
 * config.h - cmfs.ini: the store location, limits, SQL resolution settings,
 * mount tuning and access rules.
 *
 * config_defaults() fills the embedded default (a store in ./cmfs-data,
 * the built-ins of a stock Flink distribution, its class allowlist).
 * config_load() reads an ini file over it.  An unknown section or key, or a
 * value that does not parse, stops the load with "file:line: reason".
 * The struct is plain data: fields may be read directly.
 */
#ifndef CMFS_CONFIG_H
#define CMFS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* The four rights of the access rules. */
enum config_right {
	CONFIG_READ,
	CONFIG_UPLOAD,
	CONFIG_WRITE_TABLES,
	CONFIG_ADMIN,
	CONFIG_NRIGHTS
};

/*
 * One rule list: who holds a right.  Each entry is "*", a decimal uid,
 * a user name, or "@group"; names are checked to exist at load time.
 * `set` tells an empty list given in the ini from one not given at all.
 */
struct config_who {
	int set;
	size_t n;
	char **v;
};

/* The rules of one scope: [access] or [env.<name>]. */
struct config_scope {
	char *env;	/* NULL for [access] */
	struct config_who who[CONFIG_NRIGHTS];
};

struct config_limits {
	uint64_t artifact_size;		/* bytes of one version */
	uint64_t store_size;		/* bytes of all blobs, 0 = no limit */
	uint64_t artifacts_per_env;
	uint64_t tables_per_env;
	uint64_t ddl_size;		/* bytes of one table's text */
	uint64_t labels;		/* labels on one artifact */
	uint64_t xattr_size;		/* bytes of one xattr value */
	uint64_t scratch_size;		/* bytes of one scratch file */
};

struct config_sql {
	char *builtin_connectors;	/* comma-separated identifiers */
	char *builtin_formats;
	char *class_allowlist;		/* comma-separated, trailing * */
	char *jar_path_prefix;		/* NULL = the mount point */
	int check_options;		/* 1 (on, the default) or 0 (off):
					 * resolution checks a table's
					 * options against its factories' */
};

struct config_mount {
	double entry_timeout;		/* seconds */
	double attr_timeout;
	double negative_timeout;
	int passthrough;		/* versions' reads to the kernel (the
					 * default), or 0: through the daemon */
	int io_uring;			/* requests over io_uring where the
					 * kernel offers it (the default), or
					 * 0: through /dev/fuse only */
};

/*
 * [events]: how much of each environment's audit trail is kept.  The
 * oldest lines go first, with a line that says how many went.
 */
#define CONFIG_EVENTS_ROWS 100000		/* the default max_rows */
#define CONFIG_EVENTS_AGE (90 * 86400)		/* the default max_age */
#define CONFIG_EVENTS_ROWS_MAX 1000000000ULL
#define CONFIG_EVENTS_AGE_MAX (36500ULL * 86400)

/*
 * And how many refusal lines are written (the gate of events.h): a run of
 * one refusal is counted for repeat_window; a uid writes uid_rate lines a
 * second in an environment (uid_burst at once: a person's mistakes are all
 * written), all uids together all_rate (all_burst at once).  At ~300 bytes
 * a line in the catalog, the defaults let a flood from any number of uids
 * grow it by at most ~540 KB a minute.
 */
#define CONFIG_EVENTS_WINDOW 10		/* s: the default repeat_window */
#define CONFIG_EVENTS_WINDOW_MAX 86400
#define CONFIG_EVENTS_UID_RATE 1
#define CONFIG_EVENTS_UID_BURST 60
#define CONFIG_EVENTS_ALL_RATE 30
#define CONFIG_EVENTS_ALL_BURST 300
#define CONFIG_EVENTS_LINES_MAX 1000000	/* any rate or burst at most */

struct config_events {
	uint64_t max_rows;	/* lines of one environment, 0 = no limit */
	uint64_t max_age;	/* seconds a line is kept, 0 = no limit */
	uint64_t repeat_window;	/* seconds, 1 .. CONFIG_EVENTS_WINDOW_MAX */
	uint64_t uid_rate;	/* lines a second, 1 .. CONFIG_EVENTS_LINES_MAX */
	uint64_t uid_burst;	/* the same */
	uint64_t all_rate;	/* the same */
	uint64_t all_burst;	/* the same */
};

/* [store] sync: when a commit is on disk (see repo_sync.c). */
enum config_sync {
	CONFIG_SYNC_BATCH,	/* within SYNC_MS of the commit, at fsync(2) */
	CONFIG_SYNC_CLOSE	/* before the close that commits returns */
};

/* [store] inline_max at most: blobs kept in the catalog (blob.h). */
#define CONFIG_INLINE_LIMIT ((uint64_t)1 << 20)

struct config {
	char *file;			/* NULL for the embedded default */
	char *store_path;
	/*
	 * [catalog] url: a libpq connection URI (postgresql://...) of the
	 * catalog, NULL for SQLite in store_path (the default).  May hold a
	 * password: never logged (config_url_safe()).
	 */
	char *catalog_url;
	enum config_sync sync;
	uint64_t inline_max; /* bytes: blobs this small are inline */
	uint64_t cache_max;  /* bytes of blob copies ([catalog] url); 0: any */
	struct config_limits limits;
	struct config_sql sql;
	struct config_mount mount;
	struct config_events events;
	int log_level;			/* LOG_ERR .. LOG_DEBUG (syslog.h) */
	size_t nscopes;
	struct config_scope *scopes;	/* [access] first when given */
};

/*
 * `url` with any password in it replaced by "***", into dst (n bytes),
 * for logs and messages.
 */
void config_url_safe(char *dst, size_t n, const char *url);

/* Fill `c` with the embedded default.  Free with config_release(). */
int config_defaults(struct config *c);

/*
 * Read `file` over the values already in `c` (normally the defaults).
 * -EINVAL with "file:line: reason" for a bad line, -ENOENT/-EACCES when
 * the file cannot be read.  On failure `c` is unchanged.
 */
int config_load(struct config *c, const char *file, struct cmfs_err *err);

/* Frees what `c` owns (config_defaults(), config_load()). */
void config_release(struct config *c);

/* The scope of [env.<env>], or NULL. */
const struct config_scope *config_scope_env(const struct config *c,
					    const char *env);
/* The scope of [access], or NULL. */
const struct config_scope *config_scope_global(const struct config *c);

/* Name of a right as it appears in the ini ("read", "upload", ...). */
const char *config_right_name(enum config_right r);

/*
 * Parse a size: digits with an optional K, M, G or T suffix (powers of
 * 1024).  0 or -EINVAL.
 */
int config_parse_size(uint64_t *out, const char *s);

/*
 * Parse a duration: digits with an optional s, m, h or d suffix (seconds
 * without one).  0 or -EINVAL.
 */
int config_parse_duration(uint64_t *out, const char *s);

/* 1 if `id` is one of the comma-separated identifiers in `list`. */
int config_list_has(const char *list, const char *id);

#endif
