/*
 * txn.c - what a catalog transaction costs SQLite alone: N transactions
 * of the given statements on a copy of a catalog, with the pragmas of a
 * mount's connection (WAL, synchronous = NORMAL as with sync = batch,
 * 8 MiB of pages) and no file system, request or cmfs code around them.
 * As on a mount, where the sync thread checkpoints, the log is
 * checkpointed every 1,000 frames outside the time measured.
 *
 *   txn SRC COPY N SQL...   copy database SRC to COPY (SQLite's online
 *                           backup: safe beside a mount), then run each
 *                           SQL once a transaction on COPY, ?1 bound to
 *                           the transaction's number (1..N)
 *
 * Prints one line: "n=<N> us=<mean wall> cpu_us=<mean CPU> per
 * transaction".  Exits 1 on the first failed statement, naming it.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int frames; /* in the log, after the last commit */

static int wal_hook(void *arg, sqlite3 *db, const char *name, int n)
{
	(void)arg;
	(void)db;
	(void)name;
	frames = n;
	return SQLITE_OK;
}

/* Run `s` to its end with ?1 = i (statements without ?1 take none). */
static int run(sqlite3_stmt *s, long i)
{
	int rc;

	if (sqlite3_bind_parameter_count(s) > 0)
		sqlite3_bind_int64(s, 1, i);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		;
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int main(int argc, char **argv)
{
	sqlite3 *src = NULL, *db = NULL;
	sqlite3_backup *b;
	sqlite3_stmt **st, *begin, *commit;
	int nst = argc - 4, k;
	long n, i;
	double w = 0, c = 0, w0, c0;

	if (argc < 5 || (n = atol(argv[3])) <= 0) {
		fprintf(stderr, "usage: txn SRC COPY N SQL...\n");
		return 2;
	}
	if (sqlite3_open_v2(argv[1], &src, SQLITE_OPEN_READONLY, NULL) ||
	    sqlite3_open(argv[2], &db) ||
	    !(b = sqlite3_backup_init(db, "main", src, "main")) ||
	    sqlite3_backup_step(b, -1) != SQLITE_DONE ||
	    sqlite3_backup_finish(b)) {
		fprintf(stderr, "txn: %s to %s: %s\n", argv[1], argv[2],
			sqlite3_errmsg(db ? db : src));
		return 1;
	}
	sqlite3_close(src);
	st = calloc((size_t)nst, sizeof(*st));
	if (!st ||
	    sqlite3_exec(db,
			 "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
			 "PRAGMA cache_size = -8192; PRAGMA foreign_keys = ON;"
			 "PRAGMA wal_autocheckpoint = 0;",
			 NULL, NULL, NULL) ||
	    sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL) ||
	    sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL)) {
		fprintf(stderr, "txn: %s: %s\n", argv[2], sqlite3_errmsg(db));
		return 1;
	}
	for (k = 0; k < nst; k++)
		if (sqlite3_prepare_v2(db, argv[4 + k], -1, &st[k], NULL)) {
			fprintf(stderr, "txn: %s: %s\n", argv[4 + k],
				sqlite3_errmsg(db));
			return 1;
		}
	sqlite3_wal_hook(db, wal_hook, NULL);
	for (i = 1; i <= n; i++) {
		if (frames >= 1000) {
			sqlite3_wal_checkpoint_v2(db, NULL,
						  SQLITE_CHECKPOINT_RESTART,
						  NULL, NULL);
			frames = 0;
		}
		w0 = now_us(CLOCK_MONOTONIC);
		c0 = now_us(CLOCK_PROCESS_CPUTIME_ID);
		if (run(begin, i))
			goto fail;
		for (k = 0; k < nst; k++)
			if (run(st[k], i)) {
				fprintf(stderr, "txn: %s: %s\n", argv[4 + k],
					sqlite3_errmsg(db));
				return 1;
			}
		if (run(commit, i))
			goto fail;
		w += now_us(CLOCK_MONOTONIC) - w0;
		c += now_us(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	printf("n=%ld us=%.1f cpu_us=%.1f\n", n, w / (double)n,
	       c / (double)n);
	return 0;
fail:
	fprintf(stderr, "txn: %s\n", sqlite3_errmsg(db));
	return 1;
}
