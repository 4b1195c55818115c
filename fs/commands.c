/*
 * commands.c - `cmfs inspect`, `fsck`, `export` and `import`.
 */
#define _GNU_SOURCE
#include "commands.h"

#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "export.h"
#include "fsck.h"
#include "jar.h"

const char cmfs_usage[] =
	"usage: cmfs [-c cmfs.ini] <mountpoint> [options]\n"
	"       cmfs <cmfs.ini | store-dir> <mountpoint> [options]\n"
	"       cmfs inspect [--json] [-c cmfs.ini] FILE.jar\n"
	"       cmfs fsck [--repair] <store> | -c cmfs.ini\n"
	"       cmfs export <store> <dir>    | -c cmfs.ini <dir>\n"
	"       cmfs import <dir> <store>    | <dir> -c cmfs.ini\n"
	"\n"
	"cmfs is the artifact store and table catalog for Flink SQL custom\n"
	"connectors and formats, as a file system.\n"
	"\n"
	"options:\n"
	"    -c FILE            configuration (default: embedded, store in\n"
	"                       ./cmfs-data)\n"
	"    -f                 stay in the foreground, log to stderr\n"
	"    -d                 FUSE debug output (implies -f)\n"
	"    -s                 single-threaded\n"
	"    -o OPT[,OPT...]    mount options (allow_other, auto_unmount, ...)\n"
	"    -h, --help         this text\n"
	"    -V, --version      the version\n";

/* A usage error of command `cmd`: said, with the usage; 2. */
static int usage_error(const char *cmd, const char *what)
{
	fprintf(stderr, "cmfs %s: %s\n%s", cmd, what, cmfs_usage);
	return 2;
}

/*
 * getopt_long() over a command's arguments (argv[0] is the command),
 * with its own messages: the next option's letter, -1 after the last, or
 * '?' once a bad one was said.
 */
static int options(int argc, char **argv, const char *shorts,
		   const struct option *longs)
{
	char what[64];
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shorts, longs, NULL);
	if (c != '?' && c != ':')
		return c;
	if (optopt && strchr(shorts, optopt))
		snprintf(what, sizeof(what), "-%c needs a value", optopt);
	else if (optopt)
		snprintf(what, sizeof(what), "unknown option -%c", optopt);
	else
		snprintf(what, sizeof(what), "unknown option %.40s",
			 argv[optind - 1]);
	usage_error(argv[0], what);
	return '?';
}

/*
 * `cmfs inspect` is a process for one inspection, and all of its heap is
 * fresh: the ~20 MiB that libzip's entries and the walk's tables take of a
 * 20,000-class JAR.  So the heap starts ONE_SHOT_HEAP large (one brk, not
 * hundreds), every allocation below that comes from it, and none is given
 * back before exit.  Virtual memory; only what is touched is resident.
 * Not for the daemon, which reuses its heap.
 *
 * It asks for no transparent huge pages: a VM that reports free memory
 * to its host (virtio-balloon free page reporting) reports it in 2 MiB
 * blocks, so a huge page is nearly always one the host dropped, 512 host
 * faults at once, while 4 KiB pages come first from memory freed and not
 * reported yet.
 */
#define ONE_SHOT_HEAP ((size_t)32 << 20)

static void one_shot_heap(void)
{
	mallopt(M_MMAP_THRESHOLD, ONE_SHOT_HEAP);
	mallopt(M_TRIM_THRESHOLD, INT_MAX);
	mallopt(M_TOP_PAD, ONE_SHOT_HEAP);
}

static int cmd_inspect(int argc, char **argv)
{
	struct jar_limits lim;
	struct jar_report *r = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct config cfg;
	struct buf out = BUF_INIT((size_t)1 << 30);
	const char *file = NULL, *ini = NULL;
	int json = 0, i, rc;

	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "config", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 }
	};

	while ((i = options(argc, argv, "c:", longs)) != -1) {
		if (i == 'j')
			json = 1;
		else if (i == 'c')
			ini = optarg;
		else
			return 2;
	}
	if (optind != argc - 1) {
		fputs(cmfs_usage, stderr);
		return 2;
	}
	file = argv[optind];
	if (config_defaults(&cfg) ||
	    (ini && config_load(&cfg, ini, &err))) {
		fprintf(stderr, "cmfs: %s\n", cmfs_err_msg(&err));
		return 2;
	}
	jar_limits_default(&lim);
	rc = jar_inspect(&r, file, &lim, &err);
	if (rc) {
		if (!jar_failure_format(&out, file, cmfs_err_msg(&err), json))
			fputs(buf_str(&out), stdout);
		buf_release(&out);
		config_release(&cfg);
		return 1;
	}
	rc = jar_report_format(&out, r, cfg.sql.class_allowlist, json);
	fputs(buf_str(&out), stdout);
	rc = rc || r->error || !r->nfactories;
	for (i = 0; !rc && (size_t)i < r->nexternal; i++)
		rc = !jar_class_allowed(r->external[i],
					cfg.sql.class_allowlist);
	jar_report_free(r);
	buf_release(&out);
	config_release(&cfg);
	return rc ? 1 : 0;
}

/* The store directory of configuration file `ini` into *out (malloc'd;
 * NULL without an ini) and its inline_max, or the default's, into
 * *inline_max (when not NULL).  Its [catalog] url into *url (malloc'd,
 * NULL when none). */
static int store_of(const char *ini, char **out, uint64_t *inline_max,
		    char **url)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct config cfg;

	if (config_defaults(&cfg) || (ini && config_load(&cfg, ini, &err))) {
		fprintf(stderr, "cmfs: %s\n", cmfs_err_msg(&err));
		config_release(&cfg);
		return -1;
	}
	if ((*url = cfg.catalog_url))
		cfg.catalog_url = NULL;
	if (inline_max)
		*inline_max = cfg.inline_max;
	*out = ini ? strdup(cfg.store_path) : NULL;
	config_release(&cfg);
	return ini && !*out ? -1 : 0;
}

/*
 * cmfs fsck [--repair] <store> | -c cmfs.ini: exit codes as e2fsck's
 * (0 clean, 1 repaired, 4 left as is, 8 could not run, 16 usage).
 */
static int cmd_fsck(int argc, char **argv)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct fsck_report *r = NULL;
	struct buf out = BUF_INIT((size_t)1 << 30);
	const char *store = NULL, *ini = NULL;
	char *from_ini = NULL, *url = NULL;
	int repair = 0, i, rc;

	static const struct option longs[] = {
		{ "repair", no_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 }
	};

	while ((i = options(argc, argv, "c:", longs)) != -1) {
		if (i == 'r')
			repair = 1;
		else if (i == 'c')
			ini = optarg;
		else
			return FSCK_EXIT_USAGE;
	}
	if (optind < argc)
		store = argv[optind++];
	if (optind < argc || !store == !ini) {
		fputs(cmfs_usage, stderr);
		return FSCK_EXIT_USAGE;
	}
	if (ini && store_of(ini, &from_ini, NULL, &url))
		return FSCK_EXIT_ERROR;
	if (ini)
		store = from_ini;
	if (fsck_run_url(&r, store, url, repair, &err)) {
		fprintf(stderr, "cmfs fsck: %s\n", cmfs_err_msg(&err));
		free(from_ini);
		free(url);
		return FSCK_EXIT_ERROR;
	}
	printf("cmfs fsck %s%s\n", store, repair ? " --repair" : "");
	rc = fsck_report_format(&out, r);
	fputs(buf_str(&out), stdout);
	rc = rc ? FSCK_EXIT_ERROR : fsck_exit_code(r);
	fsck_report_free(r);
	buf_release(&out);
	free(from_ini);
	free(url);
	return rc;
}

/*
 * cmfs export <store> <dir>, cmfs import <dir> <store>; -c cmfs.ini
 * stands for the store.  Exit 0, 1 on failure, 2 for usage.
 */
static int cmd_transfer(int argc, char **argv, int import)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct export_stats st;
	const char *pos[2] = { NULL, NULL }, *ini = NULL, *store, *dir;
	char *from_ini = NULL, *url = NULL;
	uint64_t inline_max;
	int n = 0, i, rc;

	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 }
	};

	while ((i = options(argc, argv, "c:", longs)) != -1) {
		if (i != 'c' || ini)
			return i == 'c' ? usage_error(argv[0], "one -c") : 2;
		ini = optarg;
	}
	for (; optind < argc && n < 2; optind++)
		pos[n++] = argv[optind];
	if (optind < argc || n != (ini ? 1 : 2)) {
		fputs(cmfs_usage, stderr);
		return 2;
	}
	/* Without -c, the defaults: an import puts small blobs in the
	 * catalog as a mount with no ini would. */
	if (store_of(ini, &from_ini, &inline_max, &url))
		return 1;
	store = ini ? from_ini : pos[import ? 1 : 0];
	dir = pos[import || ini ? 0 : 1];
	memset(&st, 0, sizeof(st));
	rc = import ? export_load_into(dir, store, url, inline_max, &st, &err)
		    : export_dump_from(store, url, dir, &st, &err);
	if (rc)
		fprintf(stderr, "cmfs %s: %s\n", import ? "import" : "export",
			cmfs_err_msg(&err));
	else
		printf("%s %zu environments, %zu artifacts (%zu versions, "
		       "%llu bytes), %zu tables, %zu events lines %s %s\n",
		       import ? "imported" : "exported", st.envs,
		       st.artifacts, st.versions,
		       (unsigned long long)st.bytes, st.tables, st.events,
		       import ? "into" : "to", import ? store : dir);
	free(from_ini);
	free(url);
	return rc ? 1 : 0;
}


int cmfs_command(int argc, char **argv)
{
	if (!strcmp(argv[0], "inspect")) {
		one_shot_heap();
		return cmd_inspect(argc, argv);
	}
	if (!strcmp(argv[0], "fsck"))
		return cmd_fsck(argc, argv);
	if (!strcmp(argv[0], "export"))
		return cmd_transfer(argc, argv, 0);
	if (!strcmp(argv[0], "import"))
		return cmd_transfer(argc, argv, 1);
	return -1;
}
