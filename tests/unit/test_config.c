/*
 * test_config.c - unit tests of the configuration (core/config.h): the
 * embedded default, an ini that overrides every key, each kind of bad line
 * ("file:line: reason", -EINVAL), a failed load leaving the config as it
 * was, sizes and identifier lists.
 *
 * Each test that writes an ini does so in a fresh mkdtemp directory.
 * Rules name "root" / uid 0 / "@root", which exist on every Linux system,
 * and names that exist nowhere.
 */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "err.h"

#include "fixture.h"

/* ---- helpers --------------------------------------------------------------- */

static char tmp[64];

static void mktemp_dir(void)
{
	fixture_tmpdir(tmp, sizeof(tmp), "config");
}

static void rm_temp_dir(void)
{
	t_rmtree(tmp);
}

/* Write `text` to <tmp>/<name>; the path goes to `path` (256 bytes). */
static void write_ini(char *path, const char *name, const char *text)
{
	FILE *f;

	snprintf(path, 256, "%s/%s", tmp, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

/* Load `text` over the defaults: the rc, the message in `msg`. */
static int load_text(const char *text, char *path, char *msg, size_t n)
{
	struct config c;
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc;

	write_ini(path, "bad.ini", text);
	if (config_defaults(&c))
		return -ENOMEM;
	rc = config_load(&c, path, &err);
	snprintf(msg, n, "%s", cmfs_err_msg(&err));
	config_release(&c);
	return rc;
}

/*
 * Check that `text` fails at `line` with a message that is exactly
 * "<file>:<line>: ..." and holds `reason`.
 */
static void expect_bad(const char *text, int line, const char *reason,
		       int at)
{
	char path[256], msg[512], prefix[300];
	int rc = load_text(text, path, msg, sizeof(msg));

	snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	if (rc != -EINVAL || strncmp(msg, prefix, strlen(prefix)) ||
	    !strstr(msg, reason))
		fprintf(stderr, "%s:%d: (case above) got %d \"%s\"\n",
			__FILE__, at, rc, msg);
	T_ERRNO(rc, EINVAL);
	T_CHECK(strncmp(msg, prefix, strlen(prefix)) == 0);
	T_CONTAINS(msg, reason);
}
#define BAD(text, line, reason) expect_bad(text, line, reason, __LINE__)

/* ---- defaults -------------------------------------------------------------- */

/* The same patterns, in any order, blanks and empty ones aside. */
static int same_list(const char *a, const char *b)
{
	char *x = strdup(a), *save = NULL, *t;
	size_t na = 0, nb = 0;
	int ok = x != NULL;

	for (t = x ? strtok_r(x, ", \t", &save) : NULL; t && ok;
	     t = strtok_r(NULL, ", \t", &save)) {
		na++;
		ok = config_list_has(b, t);
	}
	free(x);
	x = strdup(b);
	for (t = x ? strtok_r(x, ", \t", &save) : NULL; t;
	     t = strtok_r(NULL, ", \t", &save))
		nb++;
	free(x);
	return ok && na == nb;
}

/* cmfs.ini.example states the defaults of [sql] as they are. */
static void test_example_is_defaults(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct config d, c;

	T_INTEQ(config_defaults(&d), 0);
	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(config_load(&c, "../cmfs.ini.example", &err), 0);
	T_STREQ(err.msg, "");
	T_CHECK(same_list(c.sql.class_allowlist, d.sql.class_allowlist));
	T_CHECK(same_list(c.sql.builtin_connectors, d.sql.builtin_connectors));
	T_CHECK(same_list(c.sql.builtin_formats, d.sql.builtin_formats));
	T_CHECK(!memcmp(&c.events, &d.events, sizeof(c.events)));
	config_release(&c);
	config_release(&d);
}

static void test_defaults(void)
{
	struct config c;
	int r;

	T_INTEQ(config_defaults(&c), 0);
	T_CHECK(c.file == NULL);
	T_STREQ(c.store_path, "./cmfs-data");
	T_INTEQ(c.sync, CONFIG_SYNC_BATCH);
	T_INTEQ(c.inline_max, 64 << 10);
	T_INTEQ(c.cache_max, 0);
	T_INTEQ(c.mount.passthrough, 1);
	T_INTEQ(c.mount.io_uring, 1);
	T_CHECK(c.sql.builtin_connectors && *c.sql.builtin_connectors);
	T_CHECK(c.sql.builtin_formats && *c.sql.builtin_formats);
	T_CHECK(config_list_has(c.sql.builtin_connectors, "datagen"));
	T_CHECK(config_list_has(c.sql.builtin_connectors, "filesystem"));
	T_CHECK(config_list_has(c.sql.builtin_formats, "json"));
	T_CHECK(config_list_has(c.sql.builtin_formats, "csv"));
	T_CHECK(!config_list_has(c.sql.builtin_connectors, "kafka"));
	T_CHECK(config_list_has(c.sql.class_allowlist, "java.*"));
	T_CHECK(config_list_has(c.sql.class_allowlist, "org.apache.flink.*"));
	/* Issue 29: the whole JDK and what a stock Flink 1.20 lib/ holds;
	 * its formats, and not avro, parquet, orc (not in lib/). */
	T_CHECK(config_list_has(c.sql.class_allowlist, "org.ietf.jgss.*"));
	T_CHECK(config_list_has(c.sql.class_allowlist, "com.sun.*"));
	T_CHECK(config_list_has(c.sql.class_allowlist, "org.xml.sax.*"));
	T_CHECK(config_list_has(c.sql.class_allowlist, "org.slf4j.*"));
	T_CHECK(config_list_has(c.sql.class_allowlist, "net.jpountz.*"));
	T_CHECK(!config_list_has(c.sql.class_allowlist,
				 "com.fasterxml.jackson.*"));
	T_CHECK(!config_list_has(c.sql.class_allowlist, "org.apache.kafka.*"));
	T_CHECK(config_list_has(c.sql.builtin_formats, "raw"));
	T_CHECK(config_list_has(c.sql.builtin_formats, "ogg-json"));
	T_CHECK(!config_list_has(c.sql.builtin_formats, "avro"));
	T_CHECK(!config_list_has(c.sql.builtin_formats, "parquet"));
	T_CHECK(!config_list_has(c.sql.builtin_formats, "orc"));
	T_CHECK(c.sql.jar_path_prefix == NULL);
	T_INTEQ(c.limits.artifact_size, 4ULL << 30);
	T_INTEQ(c.limits.store_size, 0);
	T_CHECK(c.limits.artifacts_per_env > 0);
	T_CHECK(c.limits.tables_per_env > 0);
	T_INTEQ(c.limits.ddl_size, 1 << 20);
	T_INTEQ(c.limits.labels, 64);
	T_INTEQ(c.limits.xattr_size, 4096);
	T_CHECK(c.limits.scratch_size > 0);
	T_CHECK(c.mount.entry_timeout > 0);
	T_CHECK(c.mount.attr_timeout > 0);
	T_CHECK(c.mount.negative_timeout >= 0);
	T_INTEQ(c.log_level, LOG_INFO);
	T_INTEQ(c.nscopes, 0);
	T_CHECK(config_scope_global(&c) == NULL);
	T_CHECK(config_scope_env(&c, "prod") == NULL);
	config_release(&c);
	T_CHECK(c.store_path == NULL);
	T_CHECK(c.sql.builtin_connectors == NULL);

	T_STREQ(config_right_name(CONFIG_READ), "read");
	T_STREQ(config_right_name(CONFIG_UPLOAD), "upload");
	T_STREQ(config_right_name(CONFIG_WRITE_TABLES), "write_tables");
	T_STREQ(config_right_name(CONFIG_ADMIN), "admin");
	r = CONFIG_NRIGHTS;
	T_STREQ(config_right_name((enum config_right)r), "?");
	r = -1;
	T_STREQ(config_right_name((enum config_right)r), "?");
}

/* ---- a good file ----------------------------------------------------------- */

/* 1 if rule list `w` is exactly the `n` entries given. */
static int who_is(const struct config_who *w, size_t n, const char *a,
		  const char *b)
{
	if (!w->set || w->n != n)
		return 0;
	if (n > 0 && strcmp(w->v[0], a))
		return 0;
	if (n > 1 && strcmp(w->v[1], b))
		return 0;
	return 1;
}

static void test_load_all(void)
{
	struct config c;
	struct cmfs_err err = CMFS_ERR_INIT;
	const struct config_scope *g, *p, *q;
	char path[256], store[300], text[2048];
	int rc;

	mktemp_dir();
	snprintf(store, sizeof(store), "%s/store", tmp);
	snprintf(text, sizeof(text),
		 "; a comment\n"
		 "# another\n"
		 "[store]\n"
		 "path = %s\n"
		 "sync = close\n"
		 "inline_max = 0\n"
		 "cache_max = 2G\n"
		 "\n"
		 "[limits]\n"
		 "max_artifact_size = 10M\n"
		 "max_store_size = 1G\n"
		 "max_artifacts_per_env = 5\n"
		 "max_tables_per_env = 7\n"
		 "max_ddl_size = 64K\n"
		 "max_labels = 3\n"
		 "max_xattr_size = 100\n"
		 "max_scratch_size = 2T\n"
		 "[sql]\n"
		 "builtin_connectors = datagen, print\n"
		 "builtin_formats = csv\n"
		 "class_allowlist = java.*, com.acme.*\n"
		 "jar_path_prefix = /opt/flink/jars\n"
		 "[mount]\n"
		 "entry_timeout = 1.5\n"
		 "attr_timeout = 0\n"
		 "negative_timeout = 86400\n"
		 "passthrough = off\n"
		 "io_uring = off\n"
		 "[log]\n"
		 "level = debug\n"
		 "[access]\n"
		 "read = *\n"
		 "upload = root, 0\n"
		 "write_tables = @root\n"
		 "admin =\n"
		 "[env.prod]\n"
		 "read = root 0\n"
		 "admin = @root\n"
		 "[env.dev-1]\n"
		 "upload = *\n",
		 store);
	write_ini(path, "good.ini", text);
	T_INTEQ(config_defaults(&c), 0);
	rc = config_load(&c, path, &err);
	T_INTEQ(rc, 0);
	T_STREQ(cmfs_err_msg(&err), "");
	T_STREQ(c.file, path);
	T_STREQ(c.store_path, store);
	T_INTEQ(c.sync, CONFIG_SYNC_CLOSE);
	T_INTEQ(c.inline_max, 0);
	T_INTEQ(c.cache_max, 2ULL << 30);
	T_INTEQ(c.mount.passthrough, 0);
	T_INTEQ(c.mount.io_uring, 0);
	T_INTEQ(c.limits.artifact_size, 10ULL << 20);
	T_INTEQ(c.limits.store_size, 1ULL << 30);
	T_INTEQ(c.limits.artifacts_per_env, 5);
	T_INTEQ(c.limits.tables_per_env, 7);
	T_INTEQ(c.limits.ddl_size, 64 << 10);
	T_INTEQ(c.limits.labels, 3);
	T_INTEQ(c.limits.xattr_size, 100);
	T_INTEQ(c.limits.scratch_size, 2ULL << 40);
	T_STREQ(c.sql.builtin_connectors, "datagen, print");
	T_STREQ(c.sql.builtin_formats, "csv");
	T_STREQ(c.sql.class_allowlist, "java.*, com.acme.*");
	T_STREQ(c.sql.jar_path_prefix, "/opt/flink/jars");
	T_CHECK(c.mount.entry_timeout == 1.5);
	T_CHECK(c.mount.attr_timeout == 0);
	T_CHECK(c.mount.negative_timeout == 86400);
	T_INTEQ(c.log_level, LOG_DEBUG);
	T_INTEQ(c.nscopes, 3);

	g = config_scope_global(&c);
	T_CHECK(g != NULL);
	if (g) {
		T_CHECK(g->env == NULL);
		T_CHECK(who_is(&g->who[CONFIG_READ], 1, "*", NULL));
		T_CHECK(who_is(&g->who[CONFIG_UPLOAD], 2, "root", "0"));
		T_CHECK(who_is(&g->who[CONFIG_WRITE_TABLES], 1, "@root",
			       NULL));
		/* Given empty: set, no entries. */
		T_CHECK(who_is(&g->who[CONFIG_ADMIN], 0, NULL, NULL));
	}
	p = config_scope_env(&c, "prod");
	T_CHECK(p != NULL);
	if (p) {
		T_STREQ(p->env, "prod");
		T_CHECK(who_is(&p->who[CONFIG_READ], 2, "root", "0"));
		T_CHECK(who_is(&p->who[CONFIG_ADMIN], 1, "@root", NULL));
		/* Not given: not set. */
		T_CHECK(!p->who[CONFIG_UPLOAD].set);
		T_INTEQ(p->who[CONFIG_UPLOAD].n, 0);
		T_CHECK(!p->who[CONFIG_WRITE_TABLES].set);
	}
	q = config_scope_env(&c, "dev-1");
	T_CHECK(q != NULL && q != p);
	if (q)
		T_CHECK(who_is(&q->who[CONFIG_UPLOAD], 1, "*", NULL));
	T_CHECK(config_scope_env(&c, "staging") == NULL);
	T_CHECK(config_scope_env(&c, "pro") == NULL);

	/* A second file over the first: later values replace, the rest
	 * stays; a rule list given again replaces the old one. */
	write_ini(path, "second.ini",
		  "[limits]\nmax_labels = 9\n[access]\nupload = 0\n");
	rc = config_load(&c, path, &err);
	T_INTEQ(rc, 0);
	T_STREQ(c.file, path);
	T_INTEQ(c.limits.labels, 9);
	T_INTEQ(c.limits.xattr_size, 100);
	T_STREQ(c.store_path, store);
	T_INTEQ(c.nscopes, 3);
	g = config_scope_global(&c);
	T_CHECK(g && who_is(&g->who[CONFIG_UPLOAD], 1, "0", NULL));
	T_CHECK(g && who_is(&g->who[CONFIG_READ], 1, "*", NULL));
	config_release(&c);

	/* The log levels by name. */
	{
		static const char *const names[] = { "error", "warning",
						     "notice", "info" };
		static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE,
					    LOG_INFO };
		size_t i;

		for (i = 0; i < 4; i++) {
			snprintf(text, sizeof(text), "[log]\nlevel = %s\n",
				 names[i]);
			write_ini(path, "log.ini", text);
			config_defaults(&c);
			T_INTEQ(config_load(&c, path, NULL), 0);
			T_INTEQ(c.log_level, prio[i]);
			config_release(&c);
		}
	}
	rm_temp_dir();
}

/* An empty file, and a file of comments only, change nothing but `file`. */
static void test_load_empty(void)
{
	struct config c;
	char path[256];

	mktemp_dir();
	write_ini(path, "empty.ini", "");
	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(config_load(&c, path, NULL), 0);
	T_STREQ(c.file, path);
	T_STREQ(c.store_path, "./cmfs-data");
	T_INTEQ(c.nscopes, 0);
	config_release(&c);
	write_ini(path, "comments.ini", "; nothing\n# here\n\n");
	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(config_load(&c, path, NULL), 0);
	T_INTEQ(c.limits.labels, 64);
	config_release(&c);
	rm_temp_dir();
}

/* A long value (a big allowlist) is read whole, not cut at inih's line
 * buffer. */
static void test_load_long_line(void)
{
	struct config c;
	struct cmfs_err err = CMFS_ERR_INIT;
	char val[2048];
	char path[256], text[2300];
	size_t n = 0;
	int i, rc;

	mktemp_dir();
	for (i = 0; i < 40; i++)
		n += (size_t)snprintf(val + n, sizeof(val) - n,
				      "%scom.example.vendor%02d.*",
				      i ? "," : "", i);
	snprintf(text, sizeof(text), "[sql]\nclass_allowlist = %s\n", val);
	write_ini(path, "long.ini", text);
	T_INTEQ(config_defaults(&c), 0);
	/* inih's line buffer is fixed: a long line is refused, clearly. */
	rc = config_load(&c, path, &err);
	T_ERRNO(rc, EINVAL);
	T_CONTAINS(cmfs_err_msg(&err), "long.ini:2: line longer than");
	T_CONTAINS(cmfs_err_msg(&err), "continue a list on indented lines");
	/* The same list continued on indented lines is one value. */
	n = (size_t)snprintf(text, sizeof(text), "[sql]\nclass_allowlist =");
	for (i = 0; i < 40; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "%s  com.example.vendor%02d.*%s\n",
				      i ? "" : "", i, i < 39 ? "," : "");
	write_ini(path, "cont.ini", text);
	cmfs_err_clear(&err);
	rc = config_load(&c, path, &err);
	T_INTEQ(rc, 0);
	if (rc)
		fprintf(stderr, "  continued: %s\n", cmfs_err_msg(&err));
	T_CHECK(config_list_has(c.sql.class_allowlist,
				"com.example.vendor00.*"));
	T_CHECK(config_list_has(c.sql.class_allowlist,
				"com.example.vendor39.*"));
	T_CHECK(!config_list_has(c.sql.class_allowlist, "java.*"));
	config_release(&c);
	rm_temp_dir();
}

/* ---- bad files ------------------------------------------------------------- */

static void test_bad_lines(void)
{
	mktemp_dir();
	/* Unknown section (reported at its own line). */
	BAD("[store]\npath = /x\n[acess]\nread = *\n", 3,
	    "unknown section [acess]");
	/* An unknown section with no keys is still an unknown section. */
	BAD("[store]\npath = /x\n[acess]\n", 3, "unknown section [acess]");
	/* Unknown keys, in each section. */
	BAD("[store]\nfoo = 1\n", 2, "unknown key 'foo' in [store]");
	BAD("\n\n[limits]\nmax_size = 1\n", 4,
	    "unknown key 'max_size' in [limits]");
	BAD("[sql]\nbuiltins = x\n", 2, "unknown key 'builtins' in [sql]");
	BAD("[mount]\ntimeout = 1\n", 2, "unknown key 'timeout' in [mount]");
	BAD("[log]\nfile = /x\n", 2, "unknown key 'file' in [log]");
	BAD("[access]\nwrite = *\n", 2, "unknown key 'write'");
	BAD("[env.prod]\ndelete = *\n", 2, "unknown key 'delete'");
	/* A key before any section. */
	BAD("path = /x\n", 1, "unknown section []");
	/* Bad sizes. */
	BAD("[limits]\nmax_artifact_size = 12X\n", 2,
	    "max_artifact_size: '12X' is not a size");
	BAD("[limits]\nmax_labels = -1\n", 2, "max_labels: '-1' is not a size");
	BAD("[limits]\nmax_store_size = 1.5G\n", 2, "is not a size");
	BAD("[limits]\nmax_ddl_size =\n", 2, "max_ddl_size: '' is not a size");
	BAD("[limits]\nmax_xattr_size = 99999999999999999999\n", 2,
	    "is not a size");
	/* Bad timeouts. */
	BAD("[mount]\nentry_timeout = -1\n", 2,
	    "entry_timeout: '-1' is not a number of seconds");
	BAD("[mount]\nattr_timeout = soon\n", 2,
	    "attr_timeout: 'soon' is not a number of seconds");
	BAD("[mount]\nnegative_timeout = 86401\n", 2,
	    "negative_timeout: '86401' is not a number of seconds");
	BAD("[mount]\nentry_timeout = 5s\n", 2, "is not a number of seconds");
	BAD("[mount]\nentry_timeout = nan\n", 2, "is not a number of seconds");
	BAD("[mount]\nattr_timeout = inf\n", 2, "is not a number of seconds");
	/* Bad environment section names, at the section line. */
	BAD("[env.Prod]\nread = *\n", 1, "'Prod' is not an environment name");
	BAD("[env.-x]\nread = *\n", 1, "'-x' is not an environment name");
	BAD("[env.]\nread = *\n", 1, "'' is not an environment name");
	BAD("[env.a_b]\nread = *\n", 1, "'a_b' is not an environment name");
	/* Rules naming what does not exist. */
	BAD("[access]\nread = root, nosuchuser-cmfs-test\n", 2,
	    "'nosuchuser-cmfs-test' is not *, a uid, a user name or an "
	    "existing @group");
	BAD("[env.prod]\nadmin = @nosuchgroup-cmfs-test\n", 2,
	    "'@nosuchgroup-cmfs-test'");
	BAD("[access]\nupload = @\n", 2, "'@'");
	BAD("[access]\nupload = 12abc\n", 2, "'12abc'");
	/* Other bad values. */
	BAD("[log]\nlevel = verbose\n", 2, "level: 'verbose' is not error");
	BAD("[sql]\njar_path_prefix = jars/\n", 2,
	    "jar_path_prefix: 'jars/' is not an absolute path");
	BAD("[store]\npath =\n", 2, "path: empty");
	BAD("[store]\nsync = always\n", 2,
	    "sync: 'always' is neither batch nor close");
	BAD("[store]\ncache_max = lots\n", 2,
	    "cache_max: 'lots' is not a size");
	BAD("[store]\ninline_max = 2M\n", 2,
	    "inline_max: '2M' is not a size up to 1M");
	BAD("[store]\ninline_max = lots\n", 2, "inline_max: 'lots'");
	BAD("[mount]\npassthrough = on\n", 2,
	    "passthrough: 'on' is neither auto nor off");
	BAD("[mount]\nio_uring = yes\n", 2,
	    "io_uring: 'yes' is neither auto nor off");
	/* Not a key = value line at all. */
	BAD("[store]\njust words\n", 2, "not a key = value line");
	BAD("[store\npath = /x\n", 1, "not a key = value line");
	/* The first error is the one reported, with its own reason. */
	BAD("[store]\nfoo = 1\n[limits]\nmax_labels = x\n", 2,
	    "unknown key 'foo'");
	BAD("[store]\nno equals sign here\n[store]\nfoo = 1\n", 2,
	    "not a key = value line");
	rm_temp_dir();
}

static void test_missing_file(void)
{
	struct config c;
	struct cmfs_err err = CMFS_ERR_INIT;
	char path[256];

	mktemp_dir();
	snprintf(path, sizeof(path), "%s/nope.ini", tmp);
	T_INTEQ(config_defaults(&c), 0);
	T_ERRNO(config_load(&c, path, &err), ENOENT);
	T_CONTAINS(cmfs_err_msg(&err), path);
	T_CHECK(c.file == NULL);
	T_STREQ(c.store_path, "./cmfs-data");
	config_release(&c);
	rm_temp_dir();
}

/* A failed load leaves every field as it was: same values, same rules. */
static void test_failed_load_unchanged(void)
{
	struct config c;
	struct cmfs_err err = CMFS_ERR_INIT;
	const struct config_scope *g;
	char path[256], good[256];
	char *store, *conn;

	mktemp_dir();
	write_ini(good, "good.ini",
		  "[store]\npath = /srv/cmfs\n[limits]\nmax_labels = 5\n"
		  "[access]\nread = root\n[env.prod]\nupload = 0\n");
	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(config_load(&c, good, NULL), 0);
	store = c.store_path;
	conn = c.sql.builtin_connectors;
	/* Valid overrides first, then a bad line: none may stick. */
	write_ini(path, "bad.ini",
		  "[store]\npath = /elsewhere\n[limits]\nmax_labels = 7\n"
		  "max_xattr_size = 1\n[sql]\nbuiltin_connectors = x\n"
		  "[access]\nread = *\nadmin = 0\n[env.new]\nread = *\n"
		  "[mount]\nattr_timeout = never\n");
	T_ERRNO(config_load(&c, path, &err), EINVAL);
	T_CONTAINS(cmfs_err_msg(&err), ":14: attr_timeout");
	T_STREQ(c.file, good);
	T_CHECK(c.store_path == store);
	T_STREQ(c.store_path, "/srv/cmfs");
	T_CHECK(c.sql.builtin_connectors == conn);
	T_INTEQ(c.limits.labels, 5);
	T_INTEQ(c.limits.xattr_size, 4096);
	T_INTEQ(c.nscopes, 2);
	T_CHECK(config_scope_env(&c, "new") == NULL);
	g = config_scope_global(&c);
	T_CHECK(g && g->who[CONFIG_READ].n == 1 &&
		!strcmp(g->who[CONFIG_READ].v[0], "root"));
	T_CHECK(g && !g->who[CONFIG_ADMIN].set);
	T_CHECK(config_scope_env(&c, "prod") != NULL);
	/* The config is still whole: a good load over it works. */
	cmfs_err_clear(&err);
	write_ini(path, "again.ini", "[limits]\nmax_labels = 8\n");
	T_INTEQ(config_load(&c, path, &err), 0);
	T_INTEQ(c.limits.labels, 8);
	T_STREQ(c.store_path, "/srv/cmfs");
	T_INTEQ(c.nscopes, 2);
	config_release(&c);
	rm_temp_dir();
}

/* ---- sizes and lists ------------------------------------------------------- */

static void test_parse_size(void)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "0", 0 },
		{ "1", 1 },
		{ "4096", 4096 },
		{ "1K", 1024 },
		{ "1k", 1024 },
		{ "3M", 3ULL << 20 },
		{ "3m", 3ULL << 20 },
		{ "2G", 2ULL << 30 },
		{ "1T", 1ULL << 40 },
		{ "1KB", 1024 },
		{ "1Ki", 1024 },
		{ "5MiB", 5ULL << 20 },
		{ "0G", 0 },
		{ "16777215T", 16777215ULL << 40 },
		{ "18446744073709551615", UINT64_MAX },
	};
	static const char *const bad[] = {
		"", "-1", "+1", "K", "1X", "1.5", "1.5G", "1 K", "1KK",
		"0x10", "1B", "1iB", "1KiBx", "16777216T",
		"18446744073709551616", "99999999999999999999",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		T_INTEQ(config_parse_size(&v, good[i].s), 0);
		if (v != good[i].v)
			fprintf(stderr, "  size '%s'\n", good[i].s);
		T_CHECK(v == good[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		if (config_parse_size(&v, bad[i]) != -EINVAL)
			fprintf(stderr, "  size '%s' accepted\n", bad[i]);
		T_ERRNO(config_parse_size(&v, bad[i]), EINVAL);
		T_INTEQ(v, 12345);	/* untouched on failure */
	}
}

/* [events]: the defaults, good values, and each bad one refused. */
static void test_events(void)
{
	static const struct {
		const char *s;
		uint64_t v;
	} durations[] = {
		{ "0", 0 },	    { "1", 1 },		{ "45s", 45 },
		{ "30m", 1800 },    { "12h", 43200 },	{ "90d", 7776000 },
		{ "36500d", 36500ULL * 86400 },
	};
	static const char *const bad_durations[] = {
		"", "d", "-1", "1x", "1dd", "1 d", "1.5h", "1M",
		"18446744073709551615d", "99999999999999999999",
	};
	struct config c;
	struct cmfs_err err = CMFS_ERR_INIT;
	char path[256];
	uint64_t v;
	size_t i;

	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(c.events.max_rows, 100000);
	T_INTEQ(c.events.max_age, 90 * 86400);
	config_release(&c);

	for (i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		v = 12345;
		T_INTEQ(config_parse_duration(&v, durations[i].s), 0);
		T_INTEQ(v, durations[i].v);
	}
	for (i = 0; i < sizeof(bad_durations) / sizeof(bad_durations[0]);
	     i++) {
		v = 12345;
		T_ERRNO(config_parse_duration(&v, bad_durations[i]), EINVAL);
		T_INTEQ(v, 12345);
	}

	mktemp_dir();
	write_ini(path, "ev.ini", "[events]\nmax_rows = 500\nmax_age = 7d\n");
	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(config_load(&c, path, &err), 0);
	T_INTEQ(c.events.max_rows, 500);
	T_INTEQ(c.events.max_age, 7 * 86400);
	config_release(&c);
	/* 0 keeps everything, by rows or by age. */
	write_ini(path, "ev0.ini", "[events]\nmax_rows = 0\nmax_age = 0\n");
	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(config_load(&c, path, &err), 0);
	T_INTEQ(c.events.max_rows, 0);
	T_INTEQ(c.events.max_age, 0);
	config_release(&c);

	BAD("[events]\nmax_lines = 5\n", 2,
	    "unknown key 'max_lines' in [events]");
	BAD("[events]\nmax_rows = 9\n", 2, "max_rows: '9' is not 0");
	BAD("[events]\nmax_rows = -1\n", 2, "max_rows: '-1'");
	BAD("[events]\nmax_rows = 1e5\n", 2, "max_rows: '1e5'");
	BAD("[events]\nmax_rows = 100K\n", 2, "max_rows: '100K'");
	BAD("[events]\nmax_rows = 1000000001\n", 2, "max_rows: '1000000001'");
	BAD("[events]\nmax_rows =\n", 2, "max_rows: ''");
	BAD("[events]\nmax_age = 90 days\n", 2, "max_age: '90 days'");
	BAD("[events]\nmax_age = 36501d\n", 2, "max_age: '36501d' is not 0");
	BAD("[events]\nmax_age = -5s\n", 2, "max_age: '-5s'");
	BAD("[event]\nmax_rows = 10\n", 1, "unknown section [event]");
	rm_temp_dir();
}

/* [events]' gate of refusal lines: defaults, values, and what is refused. */
static void test_events_gate(void)
{
	struct config c;
	struct cmfs_err err = CMFS_ERR_INIT;
	char path[256];

	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(c.events.repeat_window, 10);
	T_INTEQ(c.events.uid_rate, 1);
	T_INTEQ(c.events.uid_burst, 60);
	T_INTEQ(c.events.all_rate, 30);
	T_INTEQ(c.events.all_burst, 300);
	config_release(&c);

	mktemp_dir();
	write_ini(path, "gate.ini",
		  "[events]\nrepeat_window = 2m\nuid_rate = 5\n"
		  "uid_burst = 100\nall_rate = 1000000\nall_burst = 1\n");
	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(config_load(&c, path, &err), 0);
	T_INTEQ(c.events.repeat_window, 120);
	T_INTEQ(c.events.uid_rate, 5);
	T_INTEQ(c.events.uid_burst, 100);
	T_INTEQ(c.events.all_rate, 1000000);
	T_INTEQ(c.events.all_burst, 1);
	/* The others keep their defaults. */
	T_INTEQ(c.events.max_rows, 100000);
	config_release(&c);

	BAD("[events]\nrepeat_window = 0\n", 2,
	    "repeat_window: '0' is not a duration from 1s to 1d");
	BAD("[events]\nrepeat_window = 2d\n", 2, "repeat_window: '2d'");
	BAD("[events]\nrepeat_window = 10 s\n", 2, "repeat_window: '10 s'");
	BAD("[events]\nuid_rate = 0\n", 2,
	    "uid_rate: '0' is not a count of lines from 1 to 1000000");
	BAD("[events]\nuid_burst = -1\n", 2, "uid_burst: '-1'");
	BAD("[events]\nall_rate = 1.5\n", 2, "all_rate: '1.5'");
	BAD("[events]\nall_burst = 1000001\n", 2, "all_burst: '1000001'");
	BAD("[events]\nall_burst =\n", 2, "all_burst: ''");
	rm_temp_dir();
}

static void test_catalog_url(void)
{
	static const struct {
		const char *url, *safe;
	} safe[] = {
		{ "postgresql://cmfs:s3cret@db.example:5432/cmfs",
		  "postgresql://cmfs:***@db.example:5432/cmfs" },
		{ "postgresql://cmfs@db/cmfs?password=s3cret&sslmode=require",
		  "postgresql://cmfs@db/cmfs?password=***&sslmode=require" },
		{ "postgresql://u:p@h/d?sslmode=require&password=x",
		  "postgresql://u:***@h/d?sslmode=require&password=***" },
		{ "postgresql:///cmfs?host=/run/postgresql",
		  "postgresql:///cmfs?host=/run/postgresql" },
		/* No user information: a colon of a port is not a password. */
		{ "postgres://db:5432/cmfs", "postgres://db:5432/cmfs" },
	};
	struct config c;
	struct cmfs_err err = CMFS_ERR_INIT;
	char path[256], msg[256], out[128];
	size_t i;

	T_INTEQ(config_defaults(&c), 0);
	T_CHECK(c.catalog_url == NULL); /* SQLite in [store] path */
	config_release(&c);
	mktemp_dir();
	write_ini(path, "pg.ini",
		  "[catalog]\nurl = postgresql://cmfs@db.example/cmfs\n");
	T_INTEQ(config_defaults(&c), 0);
	T_INTEQ(config_load(&c, path, &err), 0);
	T_STREQ(c.catalog_url, "postgresql://cmfs@db.example/cmfs");
	config_release(&c);
	T_ERRNO(load_text("[catalog]\nurl = mysql://db/cmfs\n", path, msg,
			  sizeof(msg)),
		EINVAL);
	T_CONTAINS(msg, "not a postgresql:// connection URI");
	T_ERRNO(load_text("[catalog]\nhost = db\n", path, msg, sizeof(msg)),
		EINVAL);
	T_CONTAINS(msg, "unknown key 'host' in [catalog]");
	rm_temp_dir();
	for (i = 0; i < sizeof(safe) / sizeof(safe[0]); i++) {
		config_url_safe(out, sizeof(out), safe[i].url);
		T_STREQ(out, safe[i].safe);
	}
	/* Cut short, still a string, still without the password. */
	config_url_safe(out, 20, safe[0].url);
	T_STREQ(out, "postgresql://cmfs:*");
}

static void test_list_has(void)
{
	T_INTEQ(config_list_has("a,b,c", "a"), 1);
	T_INTEQ(config_list_has("a,b,c", "b"), 1);
	T_INTEQ(config_list_has("a,b,c", "c"), 1);
	T_INTEQ(config_list_has("a,b,c", "d"), 0);
	T_INTEQ(config_list_has(" a , b\t,\tc ", "b"), 1);
	T_INTEQ(config_list_has(" a , b\t,\tc ", "c"), 1);
	T_INTEQ(config_list_has("kafka,json", "kafk"), 0);
	T_INTEQ(config_list_has("kafka,json", "kafkaa"), 0);
	T_INTEQ(config_list_has("kafka,json", "afka"), 0);
	T_INTEQ(config_list_has("kafka,json", "kafka,json"), 0);
	T_INTEQ(config_list_has("json", "JSON"), 0);
	T_INTEQ(config_list_has("a,,b,", "b"), 1);
	T_INTEQ(config_list_has("a,,b,", ""), 0);
	T_INTEQ(config_list_has("", "a"), 0);
	T_INTEQ(config_list_has(NULL, "a"), 0);
	T_INTEQ(config_list_has(",,,", "a"), 0);
	T_INTEQ(config_list_has("debezium-json,canal-json", "canal-json"), 1);
	T_INTEQ(config_list_has("java.*,javax.*", "java.*"), 1);
	T_INTEQ(config_list_has("java.*,javax.*", "java.lang.String"), 0);
}

int main(void)
{
	T_RUN(test_defaults);
	T_RUN(test_example_is_defaults);
	T_RUN(test_load_all);
	T_RUN(test_load_empty);
	T_RUN(test_load_long_line);
	T_RUN(test_bad_lines);
	T_RUN(test_missing_file);
	T_RUN(test_failed_load_unchanged);
	T_RUN(test_parse_size);
	T_RUN(test_list_has);
	T_RUN(test_events);
	T_RUN(test_events_gate);
	T_RUN(test_catalog_url);
	return T_DONE();
}
