/*
 * main.c - the cmfs command: mount (the default; the commands that work
 * beside a mount are commands.h's).
 *
 *   cmfs [-c cmfs.ini] <mountpoint> [-f] [-d] [-s] [-o opts]
 *   cmfs <cmfs.ini | store-dir> <mountpoint> [-o opts]   (mount.fuse3)
 *
 * Mounting: read the configuration (embedded default without -c), open the
 * store, mount with the low-level API and serve with worker threads until
 * unmounted, SIGTERM or SIGINT.  A mount point left dead by a crash
 * (ENOTCONN) is unmounted first.
 *
 * mount(8) and fstab run `cmfs <source> <mountpoint> -o opts` through
 * mount.fuse3: a source that is a directory is the store (with the
 * embedded defaults), anything else is the configuration file, as with -c.
 *
 * The log: stderr in the foreground ("cmfs: <level>: line"), with syslog's
 * "<N>" priority prefix instead when stderr is systemd's journal stream,
 * and syslog (facility daemon) once detached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "cmfs.h"
#include "commands.h"

/* The daemon's log: stderr in the foreground, syslog when detached. */
struct logger {
	int foreground;
	int journal;		/* stderr is systemd's journal stream */
};

static const char *level_name(int level)
{
	switch (level) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return "error";
	case LOG_WARNING:
		return "warning";
	case LOG_NOTICE:
		return "notice";
	case LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

static void log_line(void *arg, int level, const char *line)
{
	struct logger *l = arg;

	if (l->journal)
		fprintf(stderr, "<%d>%s: %s\n", level, level_name(level),
			line);
	else if (l->foreground)
		fprintf(stderr, "cmfs: %s: %s\n", level_name(level), line);
	else
		syslog(level, "%s: %s", level_name(level), line);
}

/*
 * 1 if stderr is the journal stream systemd set up for this service
 * ($JOURNAL_STREAM is "<dev>:<ino>" of it): journald then takes the
 * "<N>" prefix as the line's priority.
 */
static int stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st))
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

/* A dead FUSE mount at `mnt` (the daemon was killed): unmount it. */
static void clear_dead_mount(const char *mnt)
{
	struct stat st;
	pid_t pid;

	if (stat(mnt, &st) == 0 || errno != ENOTCONN)
		return;
	fprintf(stderr, "cmfs: %s: a dead mount; unmounting it first\n", mnt);
	pid = fork();
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-uz", mnt, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/*
 * A replaced configuration is freed only this long after: a request reads
 * the configuration once and is done within seconds (an upload's commit,
 * the longest, is bounded by the inspector's limits).
 */
#define RETIRE_S 600

/* A key that only a mount reads, `changed` in the file: logged, and 1 so
 * that the caller keeps the value in force. */
static int mount_key(struct cmfs *c, int changed, const char *key)
{
	if (changed)
		repo_log(c->repo, LOG_WARNING,
			 "SIGHUP: %s changed; it takes effect at the next "
			 "mount",
			 key);
	return changed != 0;
}

/* A string key only a mount reads: *now (NULL: not set) becomes a copy
 * of `was` when they differ.  -ENOMEM, or 0. */
static int keep_str(struct cmfs *c, char **now, const char *was,
		    const char *key)
{
	char *copy;

	if (!mount_key(c, strcmp(*now ? *now : "", was ? was : ""), key))
		return 0;
	if (was && !(copy = strdup(was)))
		return -ENOMEM;
	free(*now);
	*now = was ? copy : NULL;
	return 0;
}

/*
 * SIGHUP: read the configuration file again.  A bad file keeps the rules
 * in force; the store cannot move under a mount.  The old configuration
 * stays allocated for RETIRE_S, since requests in flight may still read
 * it; up to 64 reloads in that time.
 */
static void reload(struct cmfs *c)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct config *n = calloc(1, sizeof(*n));
	struct timespec now;

	if (!c->cfg->file) {
		repo_log(c->repo, LOG_NOTICE,
			 "SIGHUP: no configuration file to reload");
		free(n);
		return;
	}
	if (!n || config_defaults(n) || config_load(n, c->cfg->file, &err)) {
		repo_log(c->repo, LOG_ERR,
			 "SIGHUP: %s; keeping the configuration in force",
			 n ? cmfs_err_msg(&err) : "out of memory");
		if (n)
			config_release(n);
		free(n);
		return;
	}
	/* What only a mount reads keeps the value in force. */
	if (keep_str(c, &n->store_path, c->cfg->store_path, "[store] path") ||
	    keep_str(c, &n->catalog_url, c->cfg->catalog_url,
		     "[catalog] url")) {
		repo_log(c->repo, LOG_ERR,
			 "SIGHUP: out of memory; keeping the configuration "
			 "in force");
		config_release(n);
		free(n);
		return;
	}
	if (mount_key(c, n->sync != c->cfg->sync, "[store] sync"))
		n->sync = c->cfg->sync;
	if (mount_key(c, n->mount.passthrough != c->cfg->mount.passthrough,
		      "[mount] passthrough"))
		n->mount.passthrough = c->cfg->mount.passthrough;
	if (mount_key(c, n->mount.io_uring != c->cfg->mount.io_uring,
		      "[mount] io_uring"))
		n->mount.io_uring = c->cfg->mount.io_uring;
	if (mount_key(c,
		      n->events.repeat_window != c->cfg->events.repeat_window ||
			      n->events.uid_rate != c->cfg->events.uid_rate ||
			      n->events.uid_burst != c->cfg->events.uid_burst ||
			      n->events.all_rate != c->cfg->events.all_rate ||
			      n->events.all_burst != c->cfg->events.all_burst,
		      "[events] repeat_window, uid_rate, uid_burst, all_rate "
		      "and all_burst")) {
		n->events.repeat_window = c->cfg->events.repeat_window;
		n->events.uid_rate = c->cfg->events.uid_rate;
		n->events.uid_burst = c->cfg->events.uid_burst;
		n->events.all_rate = c->cfg->events.all_rate;
		n->events.all_burst = c->cfg->events.all_burst;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (c->nold == sizeof(c->old) / sizeof(c->old[0])) {
		if (now.tv_sec - c->old_at[0] < RETIRE_S) {
			repo_log(c->repo, LOG_ERR,
				 "SIGHUP: %zu reloads within %d s; keeping "
				 "the configuration in force", c->nold,
				 RETIRE_S);
			config_release(n);
			free(n);
			return;
		}
		/* Replaced RETIRE_S ago: no request still reads it. */
		repo_config_retire(c->repo);
		config_release(c->old[0]);
		free(c->old[0]);
		c->nold--;
		memmove(c->old, c->old + 1, c->nold * sizeof(c->old[0]));
		memmove(c->old_at, c->old_at + 1,
			c->nold * sizeof(c->old_at[0]));
	}
	c->old_at[c->nold] = now.tv_sec;
	c->old[c->nold++] = c->cfg;
	if (n->nscopes)
		__atomic_store_n(&c->shared, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->cfg, n, __ATOMIC_RELEASE);
	repo_set_config(c->repo, n);
	cmfs_settle(c, 1); /* resolutions follow the rules */
	repo_log(c->repo, LOG_NOTICE, "SIGHUP: reloaded %s (%zu rule scopes)",
		 n->file, n->nscopes);
}

/* libfuse's default for -o max_threads, and the most we take. */
#define MAX_THREADS 10
#define MAX_THREADS_CAP 1000

/*
 * libfuse's multithreaded loop with the knobs of the command line:
 * -o max_threads, -o max_idle_threads (unset: libfuse's default, idle
 * threads stay) and -o clone_fd.  What fuse_session_loop_mt() returns,
 * or -ENOMEM.
 */
static int run_loop_mt(struct fuse_session *se,
		       const struct fuse_cmdline_opts *fo, unsigned max_threads)
{
	struct fuse_loop_config *lc = fuse_loop_cfg_create();
	int rc;

	if (!lc)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(lc, (unsigned)fo->clone_fd);
	fuse_loop_cfg_set_max_threads(lc, max_threads);
	/* Unset is UINT_MAX, which the setter would refuse with a warning. */
	if (fo->max_idle_threads <= MAX_THREADS_CAP)
		fuse_loop_cfg_set_idle_threads(lc, fo->max_idle_threads);
	rc = fuse_session_loop_mt(se, lc);
	fuse_loop_cfg_destroy(lc);
	return rc;
}

/* The thread that waits for SIGHUP (blocked in every other thread). */
static void *hup_thread(void *arg)
{
	struct cmfs *c = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (sig == SIGUSR2) /* cmfs_stop_hup(): time to go */
			break;
		reload(c);
	}
	return NULL;
}

/* Our own options, picked out before libfuse sees the rest. */
struct opts {
	char *config;		/* malloc'd (by fuse_opt or apply_source) */
	int help;
	int version;
	char *args[2];		/* the non-options: [source] mountpoint */
	int nargs;
};

static const struct fuse_opt opt_spec[] = {
	{ "-c %s", offsetof(struct opts, config), 0 },
	{ "--config=%s", offsetof(struct opts, config), 0 },
	{ "-h", offsetof(struct opts, help), 1 },
	{ "--help", offsetof(struct opts, help), 1 },
	{ "-V", offsetof(struct opts, version), 1 },
	{ "--version", offsetof(struct opts, version), 1 },
	FUSE_OPT_END
};

/*
 * Keep the first two non-options aside: `cmfs <source> <mountpoint>` is
 * how mount.fuse3 runs us.  A third is refused.
 */
static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct opts *o = data;

	(void)outargs;
	if (key != FUSE_OPT_KEY_NONOPT)
		return 1;
	if (o->nargs == 2) {
		fprintf(stderr, "cmfs: %s: one source and one mount point at "
			"most\n", arg);
		return -1;
	}
	o->args[o->nargs] = strdup(arg);
	return o->args[o->nargs++] ? 0 : -1;
}

/*
 * The source of `cmfs <source> <mountpoint>`: a directory is the store
 * (applied to `cfg` after the defaults), anything else the configuration
 * file.  0 or -1 with a message.
 */
static int apply_source(struct opts *o, struct fuse_args *args,
			const char **store)
{
	struct stat st;

	*store = NULL;
	if (o->nargs == 2) {
		if (!stat(o->args[0], &st) && S_ISDIR(st.st_mode)) {
			*store = o->args[0];
		} else if (o->config) {
			fprintf(stderr, "cmfs: %s: a source and -c %s; give "
				"one configuration\n", o->args[0], o->config);
			return -1;
		} else {
			o->config = o->args[0];
			o->args[0] = NULL;
		}
	}
	if (o->nargs && fuse_opt_add_arg(args, o->args[o->nargs - 1]))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts fo;
	struct cmfs_err err = CMFS_ERR_INIT;
	struct opts o = { NULL, 0, 0, { NULL, NULL }, 0 };
	struct logger lg = { 1, 0 };
	const char *source_store = NULL;
	struct config *cfg;
	struct cmfs c;
	char mnt[PATH_MAX];
	sigset_t hup;
	pthread_t hupt;
	int rc = 1, mounted = 0, inval = 0, hupped = 0, i;
	size_t k;

	/* libzip converts every entry's time with mktime(), which checks
	 * /etc/localtime on each call unless TZ says where it is. */
	setenv("TZ", ":/etc/localtime", 0);
	/*
	 * A daemon that runs for months: big buffers (FUSE's 1 MiB request
	 * buffer of each worker thread, a large inspection) are mapped and
	 * given back when freed, instead of staying in the heap once glibc
	 * raises its mmap threshold; and the workers share two arenas, not
	 * one each, that would each keep what they once freed.
	 */
	if (argc > 1 && (rc = cmfs_command(argc - 1, argv + 1)) >= 0)
		return rc;
	rc = 1;
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	mallopt(M_ARENA_MAX, 2);
	cfg = calloc(1, sizeof(*cfg));
	memset(&c, 0, sizeof(c));
	memset(&fo, 0, sizeof(fo));
	if (fuse_opt_parse(&args, &o, opt_spec, opt_proc) == -1 ||
	    apply_source(&o, &args, &source_store)) {
		free(o.args[0]);
		free(o.args[1]);
		free(o.config);
		fuse_opt_free_args(&args);
		free(cfg);
		return 2;
	}
	if (o.help || o.version) {
		if (o.help)
			fputs(cmfs_usage, stdout);
		else
			printf("cmfs %s (libfuse %s)\n", CMFS_VERSION,
			       fuse_pkgversion());
		free(o.args[0]);
		free(o.args[1]);
		free(o.config);
		fuse_opt_free_args(&args);
		free(cfg);
		return 0;
	}
	if (fuse_parse_cmdline(&args, &fo) != 0 || !fo.mountpoint) {
		fputs(cmfs_usage, stderr);
		free(fo.mountpoint);
		free(o.args[0]);
		free(o.args[1]);
		free(o.config);
		fuse_opt_free_args(&args);
		free(cfg);
		return 2;
	}
	if (!cfg || config_defaults(cfg) ||
	    (o.config && config_load(cfg, o.config, &err))) {
		fprintf(stderr, "cmfs: %s\n",
			cfg ? cmfs_err_msg(&err) : "out of memory");
		goto out_args;
	}
	if (source_store) {
		free(cfg->store_path);
		if (!(cfg->store_path = strdup(source_store))) {
			fprintf(stderr, "cmfs: out of memory\n");
			goto out_cfg;
		}
	}
	clear_dead_mount(fo.mountpoint);
	if (!realpath(fo.mountpoint, mnt)) {
		fprintf(stderr, "cmfs: %s: %s\n", fo.mountpoint,
			strerror(errno));
		goto out_cfg;
	}
	lg.foreground = fo.foreground;
	lg.journal = fo.foreground && stderr_is_journal();
	if (!lg.foreground)
		openlog("cmfs", LOG_PID, LOG_DAEMON);
	c.cfg = cfg;
	c.mountpoint = mnt;
	c.shared = cfg->nscopes > 0;
	for (i = 0; i < args.argc; i++)
		if (strstr(args.argv[i], "allow_other"))
			c.shared = 1;
	c.owner = getuid();
	c.owner_gid = getgid();
	clock_gettime(CLOCK_REALTIME, &c.started);
	if (path_new(&c.paths)) {
		fprintf(stderr, "cmfs: out of memory\n");
		goto out_cfg;
	}
	if (repo_open(&c.repo, cfg, mnt, log_line, &lg, &err)) {
		fprintf(stderr, "cmfs: %s\n", cmfs_err_msg(&err));
		goto out_paths;
	}
	if (cfg->catalog_url) {
		char safe[512];

		config_url_safe(safe, sizeof(safe), cfg->catalog_url);
		repo_log(c.repo, LOG_INFO, "catalog: PostgreSQL at %s", safe);
	}
	fuse_opt_add_arg(&args, "-osubtype=cmfs,fsname=cmfs");
	c.se = fuse_session_new(&args, &cmfs_ops, sizeof(cmfs_ops), &c);
	if (!c.se)
		goto out_repo;
	if (fuse_set_signal_handlers(c.se))
		goto out_session;
	if (fuse_session_mount(c.se, mnt))
		goto out_signals;
	mounted = 1;
	/* -s asks for one thread: the rings would be several. */
	backing_attach(&c, cfg->mount.passthrough,
		       fo.singlethread ? -1 : cfg->mount.io_uring);
	if (fuse_daemonize(fo.foreground))
		goto out_unmount;
	/* SIGHUP goes to its own thread: block it (and the stop signal)
	 * before any other thread starts, so they all inherit the mask. */
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	sigaddset(&hup, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &hup, NULL);
	if (cmfs_inval_start(&c))
		goto out_unmount;
	inval = 1;
	hupped = !pthread_create(&hupt, NULL, hup_thread, &c);
	repo_log(c.repo, LOG_NOTICE, "mounted %s (store %s)", mnt,
		 cfg->store_path);
	repo_background(c.repo);
	/* Set before the loop reads INIT, after which the rings start. */
	c.max_threads = fo.singlethread ? 1
			: fo.max_threads && fo.max_threads <= MAX_THREADS_CAP
				? fo.max_threads
				: MAX_THREADS;
	if (fo.singlethread)
		rc = fuse_session_loop(c.se);
	else
		rc = run_loop_mt(c.se, &fo, c.max_threads);
	/* The loop returns the signal that stopped it (libfuse 3): SIGTERM
	 * and SIGINT (systemctl stop, ^C) are a clean stop, as an unmount. */
	rc = rc == 0 || rc == SIGTERM || rc == SIGINT ? 0 : 1;
	repo_log(c.repo, LOG_NOTICE, "unmounted %s", mnt);
out_unmount:
	if (hupped) {
		pthread_kill(hupt, SIGUSR2);
		pthread_join(hupt, NULL);
	}
	/* Stop invalidating before the unmount, and join after it: a
	 * notification stuck on a directory lock whose holder waits for a
	 * reply is freed only when the unmount aborts the connection. */
	if (inval)
		cmfs_inval_quiesce(&c);
	if (mounted)
		fuse_session_unmount(c.se);
	/* After the unmount: no request can come through a ring now. */
	backing_detach(&c);
	if (inval)
		cmfs_inval_stop(&c);
out_signals:
	fuse_remove_signal_handlers(c.se);
out_session:
	fuse_session_destroy(c.se);
out_repo:
	repo_close(c.repo);
out_paths:
	path_free(c.paths);
out_cfg:
	for (k = 0; k < c.nold; k++) {
		config_release(c.old[k]);
		free(c.old[k]);
	}
	if (c.cfg)
		cfg = c.cfg;
	if (cfg)
		config_release(cfg);
	free(cfg);
out_args:
	free(fo.mountpoint);
	free(o.args[0]);
	free(o.args[1]);
	free(o.config);
	fuse_opt_free_args(&args);
	return rc;
}
