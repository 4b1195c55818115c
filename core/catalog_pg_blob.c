/*
 * catalog_pg_blob.c - the PostgreSQL catalog's blobs: their bytes in the
 * database (inline rows for small ones, CHUNK_SIZE chunks for the rest),
 * their references, and the lists a store keeps of them (unsynced,
 * loose).
 *
 * Every host reads a blob from here and caches it in its own store; a
 * blob comes and goes with the transaction of the version that first
 * refers to it and of the deletion that drops the last (schema 5).
 */
#include "catalog_pg_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

int pg_blob_refs(void *impl, const char *sha256, uint64_t *out,
		 struct cmfs_err *err)
{
	struct par p = { 0 };

	p_str(&p, sha256);
	return pg_scalar_u(impl,
			   "SELECT count(*) FROM versions WHERE sha256 = $1",
			   &p, out, err);
}

int pg_blob_total(void *impl, uint64_t *out, struct cmfs_err *err)
{
	return pg_scalar_u(impl,
			   "SELECT COALESCE(sum(size), 0) FROM (SELECT DISTINCT"
			   " sha256, size FROM versions) d",
			   NULL, out, err);
}

/* Statement `sql` with one parameter, a sha256; *n rows changed. */
static int run_sha(struct pg *g, const char *sql, const char *sha256,
		   int64_t *n, struct cmfs_err *err)
{
	struct par p = { 0 };
	int64_t k;

	p_str(&p, sha256);
	return pg_run_count(g, sql, &p, n ? n : &k, err);
}

int pg_unsynced_add(void *impl, const char *sha256, struct cmfs_err *err)
{
	return run_sha(impl, "INSERT INTO unsynced(sha256) VALUES($1)", sha256,
		       NULL, err);
}

int pg_unsynced_mark(void *impl, int64_t *out, struct cmfs_err *err)
{
	return pg_scalar(impl, "SELECT COALESCE(max(seq), 0) FROM unsynced",
			 NULL, out, err);
}

int pg_unsynced_clear(void *impl, int64_t upto, struct cmfs_err *err)
{
	return pg_exec_id(impl, "DELETE FROM unsynced WHERE seq <= $1", upto,
			  err);
}

int pg_unsynced_list(void *impl, int (*fn)(void *arg, const char *const *row),
		     void *arg, struct cmfs_err *err)
{
	return pg_walk_text(impl, "SELECT DISTINCT sha256 FROM unsynced", NULL,
			    1, fn, arg, err);
}

int pg_loose_add(void *impl, const char *sha256, struct cmfs_err *err)
{
	return run_sha(impl,
		       "INSERT INTO loose(sha256) VALUES($1)"
		       " ON CONFLICT DO NOTHING",
		       sha256, NULL, err);
}

int pg_loose_del(void *impl, const char *sha256, struct cmfs_err *err)
{
	return run_sha(impl, "DELETE FROM loose WHERE sha256 = $1", sha256,
		       NULL, err);
}

int pg_loose_list(void *impl, int (*fn)(void *arg, const char *const *row),
		  void *arg, struct cmfs_err *err)
{
	return pg_walk_text(impl, "SELECT sha256 FROM loose", NULL, 1, fn, arg,
			    err);
}

int pg_inline_put(void *impl, const char *sha256, const void *data, size_t len,
		  struct cmfs_err *err)
{
	struct par p = { 0 };

	p_str(&p, sha256);
	p_bin(&p, data, len);
	return pg_run_locked(impl,
			     "INSERT INTO inline_blobs(sha256, bytes)"
			     " VALUES($1, $2) ON CONFLICT(sha256) DO NOTHING",
			     &p, NULL, err);
}

int pg_inline_get(void *impl, const char *sha256, void **out, size_t *len,
		  struct cmfs_err *err)
{
	struct par p = { 0 };
	PGresult *res;
	int rc;

	*out = NULL;
	*len = 0;
	p_str(&p, sha256);
	rc = pg_run_locked(impl,
			   "SELECT bytes FROM inline_blobs WHERE sha256 = $1",
			   &p, &res, err);
	if (!rc && PQntuples(res) == 0)
		rc = -ENOENT;
	/* col_bytes gives one byte more: an empty blob is not a NULL. */
	if (!rc && !(*out = pg_col_bytes(res, 0, 0, len)))
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
	PQclear(res);
	return rc;
}

int pg_inline_del(void *impl, const char *sha256, struct cmfs_err *err)
{
	int64_t n = 0;
	int rc = run_sha(impl, "DELETE FROM inline_blobs WHERE sha256 = $1",
			 sha256, &n, err);

	return !rc && !n ? -ENOENT : rc;
}

int pg_inline_list(void *impl, int (*fn)(void *arg, const char *const *row),
		   void *arg, struct cmfs_err *err)
{
	return pg_walk_text(impl,
			    "SELECT sha256, length(bytes) FROM inline_blobs"
			    " ORDER BY sha256",
			    NULL, 2, fn, arg, err);
}

/*
 * The blob's lock first, then whether the blob is here: a deletion that
 * frees it (cmfs_ver_del) takes the same lock before it looks for
 * versions, so either it freed the blob before (and committed: the
 * SELECT, a statement of its own, sees the row gone and the bytes go in
 * again) or it waits for this transaction and then sees its version.
 * Without the lock, each side's snapshot could miss the other's row.
 */
int pg_blob_put(void *impl, const char *sha256, int fd, uint64_t size,
		struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 };
	char *chunk = NULL;
	uint64_t off = 0;
	int64_t have = 0;
	ssize_t n;
	int rc, seq;

	if ((rc = pg_txn_begin(g, err)))
		return rc;
	p_str(&p, sha256);
	rc = pg_run(g,
		    "SELECT pg_advisory_xact_lock(" BLOB_LOCK ", hashtext($1))",
		    &p, NULL, err);
	if (!rc)
		rc = pg_scalar(g,
			       "SELECT count(*) FROM blobs WHERE sha256 = $1",
			       &p, &have, err);
	if (rc || have)
		return pg_end(g, rc, err);
	p_int(&p, (int64_t)size);
	rc = pg_run(g, "INSERT INTO blobs(sha256, size) VALUES($1, $2)", &p,
		    NULL, err);
	if (!rc && !(chunk = malloc(CHUNK_SIZE)))
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
	for (seq = 0; !rc && (off < size || seq == 0); seq++) {
		size_t want = size - off < CHUNK_SIZE ? (size_t)(size - off)
						      : CHUNK_SIZE;
		struct par q = { 0 };

		n = store_pread_full(fd, chunk, want, (off_t)off);
		if (n != (ssize_t)want) {
			rc = cmfs_err_set(err, n < 0 ? (int)n : -EIO,
					  "blob %s: cannot read its bytes: %s",
					  sha256,
					  strerror(n < 0 ? (int)-n : EIO));
			break;
		}
		p_str(&q, sha256);
		p_int(&q, seq);
		p_bin(&q, chunk, want);
		rc = pg_run(g,
			    "INSERT INTO blob_chunks(sha256, seq, bytes)"
			    " VALUES($1, $2, $3)",
			    &q, NULL, err);
		off += want;
	}
	free(chunk);
	return pg_end(g, rc, err);
}

/* Chunk by chunk, each a statement of its own: memory for one chunk. */
int pg_blob_get(void *impl, const char *sha256, int fd, uint64_t *size,
		struct cmfs_err *err)
{
	struct pg *g = impl;
	struct par p = { 0 };
	PGresult *res;
	int64_t want = 0, seq, nchunks = 0;
	uint64_t off = 0;
	int rc;

	*size = 0;
	p_str(&p, sha256);
	if ((rc = pg_begin_read(g, err)))
		return rc;
	rc = pg_run(g,
		    "SELECT size, (SELECT count(*) FROM blob_chunks WHERE"
		    " sha256 = $1) FROM blobs WHERE sha256 = $1",
		    &p, &res, err);
	if (!rc && PQntuples(res) == 0)
		rc = -ENOENT;
	if (!rc) {
		want = col_int(res, 0, 0);
		nchunks = col_int(res, 0, 1);
	}
	PQclear(res);
	for (seq = 0; !rc && seq < nchunks; seq++) {
		struct par q = { 0 };
		const char *b;
		int len;

		p_str(&q, sha256);
		p_int(&q, seq);
		rc = pg_run_as(g,
			       "SELECT bytes FROM blob_chunks WHERE sha256 = $1"
			       " AND seq = $2::int",
			       &q, 1, &res, err);
		if (!rc && PQntuples(res) != 1)
			rc = cmfs_err_set(err, -EIO,
					  "blob %s: chunk %" PRId64
					  " is missing in the catalog",
					  sha256, seq);
		if (!rc) {
			b = PQgetvalue(res, 0, 0);
			len = PQgetlength(res, 0, 0);
			int e = store_pwrite_full(fd, b, (size_t)len,
						  (off_t)off);

			if (e)
				rc = cmfs_err_set(err, e,
						  "blob %s: cannot write its "
						  "copy: %s",
						  sha256, strerror(-e));
			off += (uint64_t)len;
		}
		PQclear(res);
	}
	if (!rc && off != (uint64_t)want)
		rc = cmfs_err_set(err, -EIO,
				  "blob %s: %llu bytes in the catalog, %lld "
				  "expected",
				  sha256, (unsigned long long)off,
				  (long long)want);
	*size = off;
	return pg_end(g, rc, err);
}

int pg_blob_list(void *impl, int (*fn)(void *arg, const char *const *row),
		 void *arg, struct cmfs_err *err)
{
	return pg_walk_text(impl,
			    "SELECT sha256, size FROM blobs ORDER BY sha256",
			    NULL, 2, fn, arg, err);
}
