/*
 * test_walvfs.c - unit tests of the WAL-gathering VFS (core/walvfs.c): a
 * commit made through it is in the file for another connection (the
 * default VFS, as `cmfs export` reads) the moment sqlite3_step() returns;
 * a process killed right after its commits loses none of them; a
 * transaction too big for the page cache, rolled back, leaves the WAL to
 * the next commits; checkpoints read what was gathered; a commit whose
 * frames cannot be written (a full disk) fails and leaves the database as
 * it was; and a commit is one write where it was two per page.
 */
#include "fixture.h"
#include "t.h"

#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "walvfs.h"

static char dir[] = "/tmp/test_walvfs.XXXXXX";
static char path[256];

/* A fresh database, opened through the shim (or the default VFS). */
static sqlite3 *open_db(int shim)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
				 shim ? walvfs_name() : NULL);

	T_INTEQ(rc, SQLITE_OK);
	return db;
}

static int exec(sqlite3 *db, const char *sql)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	if (rc)
		fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
	return rc;
}

static long long count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	long long n = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

static void fresh(void)
{
	char p[300];

	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
	unlink(path);
}

/* Each commit visible to a reader on another connection at once. */
static void test_visible(void)
{
	sqlite3 *w, *r;
	char sql[128];
	int i;

	fresh();
	T_CHECK(walvfs_name() != NULL);
	w = open_db(1);
	T_INTEQ(exec(w, "PRAGMA journal_mode = WAL;"
			"PRAGMA synchronous = NORMAL;"
			"PRAGMA wal_autocheckpoint = 0;"
			"CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);"
			"CREATE INDEX t_v ON t(v)"),
		0);
	r = open_db(0);
	for (i = 1; i <= 200; i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO t VALUES(%d, hex(randomblob(300)))", i);
		T_INTEQ(exec(w, sql), 0);
		/* The reader's own file descriptor: the bytes must be in
		 * the file, not in the writer's buffer. */
		T_INTEQ(count(r, "SELECT count(*) FROM t"), i);
	}
	T_INTEQ(count(r, "PRAGMA integrity_check = 1") == -1, 0);
	sqlite3_close(r);
	sqlite3_close(w);
}

/*
 * A child commits and is killed without closing anything: every commit
 * that returned is there for the next opener.
 */
static void test_killed(void)
{
	pid_t pid;
	int st = 0, i;

	fresh();
	pid = fork();
	if (pid == 0) {
		sqlite3 *w = open_db(1);
		char sql[128];

		exec(w, "PRAGMA journal_mode = WAL;"
			"PRAGMA synchronous = OFF;"
			"CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)");
		for (i = 1; i <= 300; i++) {
			snprintf(sql, sizeof(sql),
				 "INSERT INTO t VALUES(%d, "
				 "hex(randomblob(500)))",
				 i);
			if (exec(w, sql))
				_exit(1);
		}
		kill(getpid(), SIGKILL);
		_exit(2);
	}
	T_CHECK(pid > 0);
	waitpid(pid, &st, 0);
	T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	{
		sqlite3 *r = open_db(0);

		T_INTEQ(count(r, "SELECT count(*) FROM t"), 300);
		T_INTEQ(count(r, "SELECT max(k) FROM t"), 300);
		sqlite3_close(r);
	}
}

/*
 * A transaction bigger than the page cache spills frames to the WAL
 * before it ends; rolled back, the next commits write over them, not
 * after them: the gathered appends and the writes that go through must
 * land where SQLite put them.  Then a checkpoint reads the WAL back.
 */
static void test_spill_and_checkpoint(void)
{
	sqlite3 *w, *r;
	char sql[128];
	int i;

	fresh();
	w = open_db(1);
	T_INTEQ(exec(w, "PRAGMA journal_mode = WAL;"
			"PRAGMA synchronous = NORMAL;"
			"PRAGMA wal_autocheckpoint = 0;"
			"PRAGMA cache_size = 20;"
			"CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"
			"INSERT INTO t VALUES(0, randomblob(100))"),
		0);
	T_INTEQ(exec(w, "BEGIN;"
			"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
			"SELECT i + 1 FROM n WHERE i < 3000) "
			"INSERT INTO t SELECT i, randomblob(900) FROM n;"
			"ROLLBACK"),
		0);
	for (i = 1; i <= 50; i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO t VALUES(%d, randomblob(3000))", i);
		T_INTEQ(exec(w, sql), 0);
	}
	r = open_db(0);
	T_INTEQ(count(r, "SELECT count(*) FROM t"), 51);
	T_INTEQ(exec(w, "PRAGMA wal_checkpoint(TRUNCATE)"), 0);
	T_INTEQ(count(r, "SELECT count(*) FROM t"), 51);
	T_INTEQ(count(w, "SELECT count(*) FROM t WHERE length(v) = 3000"), 50);
	sqlite3_close(r);
	sqlite3_close(w);
	/* What the checkpoint wrote, read by a fresh connection with no
	 * WAL left to lean on. */
	r = open_db(0);
	T_INTEQ(count(r, "SELECT count(*) FROM t"), 51);
	T_STREQ(sqlite3_errmsg(r), "not an error");
	sqlite3_close(r);
}

/*
 * The WAL may not grow past a limit (RLIMIT_FSIZE, as a full disk): the
 * commit whose frames do not fit fails, and a reader finds the database
 * intact, with every commit that succeeded and nothing of the others.
 */
static void test_full(void)
{
	int fds[2], st = 0, ok = -1;
	pid_t pid;

	fresh();
	T_INTEQ(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		sqlite3 *w = open_db(1);
		struct rlimit rl;
		struct stat sb;
		char sql[128], wal[300];
		int i, n = 0;

		signal(SIGXFSZ, SIG_IGN);
		exec(w, "PRAGMA journal_mode = WAL;"
			"PRAGMA synchronous = NORMAL;"
			"PRAGMA wal_autocheckpoint = 0;"
			"CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"
			"CREATE INDEX t_v ON t(v)");
		snprintf(wal, sizeof(wal), "%s-wal", path);
		if (stat(wal, &sb))
			_exit(3);
		rl.rlim_cur = rl.rlim_max = (rlim_t)sb.st_size + 200000;
		setrlimit(RLIMIT_FSIZE, &rl);
		for (i = 1; i <= 200; i++) {
			snprintf(sql, sizeof(sql),
				 "INSERT INTO t VALUES(%d, randomblob(3000))",
				 i);
			if (sqlite3_exec(w, sql, NULL, NULL, NULL))
				break;
			n++;
		}
		/* One more try after the failure, which fails too. */
		if (write(fds[1], &n, sizeof(n)) != sizeof(n))
			_exit(4);
		_exit(i <= 200 ? 0 : 5);
	}
	close(fds[1]);
	T_INTEQ(read(fds[0], &ok, sizeof(ok)), (long)sizeof(ok));
	close(fds[0]);
	waitpid(pid, &st, 0);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	T_CHECK(ok > 5 && ok < 200);
	{
		sqlite3 *r = open_db(0);
		sqlite3_stmt *q = NULL;

		T_INTEQ(sqlite3_prepare_v2(r, "PRAGMA integrity_check", -1, &q,
					   NULL),
			SQLITE_OK);
		T_INTEQ(sqlite3_step(q), SQLITE_ROW);
		T_STREQ((const char *)sqlite3_column_text(q, 0), "ok");
		sqlite3_finalize(q);
		T_INTEQ(count(r, "SELECT count(*) FROM t"), ok);
		T_INTEQ(count(r, "SELECT max(k) FROM t"), ok);
		sqlite3_close(r);
	}
}

/* 100 commits of a dozen pages each: write calls per commit. */
static double per_commit(int shim)
{
	sqlite3 *w;
	char sql[256];
	long long before, after;
	int i;

	fresh();
	w = open_db(shim);
	exec(w, "PRAGMA journal_mode = WAL;"
		"PRAGMA synchronous = NORMAL;"
		"PRAGMA wal_autocheckpoint = 0;"
		"CREATE TABLE a(k INTEGER PRIMARY KEY, v TEXT);"
		"CREATE TABLE b(k INTEGER PRIMARY KEY, v TEXT);"
		"CREATE TABLE c(k INTEGER PRIMARY KEY, v TEXT);"
		"CREATE INDEX a_v ON a(v); CREATE INDEX b_v ON b(v);"
		"CREATE INDEX c_v ON c(v)");
	before = fixture_io("syscw");
	for (i = 0; i < 100; i++) {
		snprintf(sql, sizeof(sql),
			 "BEGIN; INSERT INTO a VALUES(%d, hex(randomblob(40)));"
			 "INSERT INTO b VALUES(%d, hex(randomblob(40)));"
			 "INSERT INTO c VALUES(%d, hex(randomblob(40)));"
			 "COMMIT",
			 i, i, i);
		exec(w, sql);
	}
	after = fixture_io("syscw");
	sqlite3_close(w);
	return before < 0 ? -1 : (double)(after - before) / 100;
}

/* The point of it: one write a commit, where there were two a page. */
static void test_one_write(void)
{
	double with = per_commit(1), without = per_commit(0);

	if (with < 0) {
		fprintf(stderr, "  (no /proc/self/io: not counted)\n");
		return;
	}
	T_CHECK(without >= 8);
	T_CHECK(with <= 1.5);
	if (with > 1.5 || without < 8)
		fprintf(stderr, "  writes a commit: %.1f with, %.1f without\n",
			with, without);
}

int main(void)
{
	T_CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/db", dir);
	T_RUN(test_visible);
	T_RUN(test_killed);
	T_RUN(test_spill_and_checkpoint);
	T_RUN(test_full);
	T_RUN(test_one_write);
	fresh();
	rmdir(dir);
	return T_DONE();
}
