/*
 * fsck.c - `cmfs fsck`: the store checked against its catalog, and
 * repaired where that loses nothing good.  See fsck.h for what is checked
 * and what a repair does.
 *
 * A run has three phases.  Gather: open the catalog (only if it exists;
 * read-only unless repairing), run its integrity check, copy every
 * version row into memory under one read snapshot, and list the blobs.
 * Judge: hash every blob, then match versions and blobs both ways.
 * Repair: one catalog transaction deletes the broken versions (and
 * artifacts left with none) and records each deletion in `events`; after
 * it commits, blobs that nothing refers to are unlinked, and missing
 * inspections are put back, each in a transaction of its own.  Blobs
 * are unlinked only after the catalog says, in the same process, that no
 * version refers to them.
 *
 * Only catalog.h and store.h are used to reach the store, so a second
 * catalog backend is checked by the same code.
 */
#define _GNU_SOURCE
#include "fsck.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blob.h"
#include "catalog.h"
#include "clock.h"
#include "events.h"
#include "jar.h"
#include "name.h"
#include "reinspect.h"
#include "store.h"

/* Lines of a failed integrity check that are reported one by one. */
#define MAX_CHECK_LINES 10

/* Where a copy of a blob is. */
enum { IN_STORE, IN_ROW, IN_DB };

/* A blob as found in the store: a file, or a row of the catalog. */
struct blob {
	char sha[STORE_SHA_HEX];
	uint64_t size;
	int inline_;   /* IN_ROW, an inline blob (blob.h), or IN_DB, a blob
			* the catalog keeps (catalog_keeps_blobs()): bytes
			* in the catalog; IN_STORE (0): a file */
	int corrupt;   /* its bytes do not hash to its name */
	char why[128]; /* with corrupt: what they hash to, or why
			* they could not be read */
	size_t refs;   /* versions (in memory) that refer to it */
};

/* A version as the catalog has it, with where it lives. */
struct ver {
	char env[64];
	char artifact[254];
	struct catalog_version v;
	int bad; /* its blob is missing or corrupt */
};

/* The state of one run. */
struct run {
	struct fsck_report *r;
	struct store *store;
	struct catalog *cat;
	int cat_ok; /* opened and passed the integrity check */
	struct ver *vers;
	size_t nvers, avers;
	struct blob *blobs;
	size_t nblobs, ablobs;
	/* While listing: the environment and artifact being walked. */
	const char *env;
	const char *artifact;
};

/* Append a problem; its strings start empty.  NULL when out of memory. */
static struct fsck_problem *problem(struct run *x, enum fsck_kind kind)
{
	struct fsck_report *r = x->r;
	struct fsck_problem *p;

	p = realloc(r->problems, (r->nproblems + 1) * sizeof(*p));
	if (!p)
		return NULL;
	r->problems = p;
	p = &r->problems[r->nproblems++];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	return p;
}

/* A problem about version `v`. */
static struct fsck_problem *ver_problem(struct run *x, enum fsck_kind kind,
					const struct ver *v)
{
	struct fsck_problem *p = problem(x, kind);

	if (!p)
		return NULL;
	snprintf(p->env, sizeof(p->env), "%s", v->env);
	snprintf(p->artifact, sizeof(p->artifact), "%s", v->artifact);
	p->version = v->v.n;
	snprintf(p->sha256, sizeof(p->sha256), "%s", v->v.sha256);
	return p;
}

/* ---- gather ------------------------------------------------------------- */

/* Array `arr` (*alloc elements of `size` bytes) with room for element
 * n: itself, or grown by doubling when full; NULL when out of memory
 * (`arr` is left as it was). */
static void *room(void *arr, size_t *alloc, size_t n, size_t size)
{
	size_t a = *alloc ? 2 * *alloc : 64;
	void *p;

	if (n < *alloc)
		return arr;
	if ((p = realloc(arr, a * size)))
		*alloc = a;
	return p;
}

static int add_version(void *arg, const struct catalog_version *v)
{
	struct run *x = arg;
	struct ver *n;

	if (!(n = room(x->vers, &x->avers, x->nvers, sizeof(*n))))
		return -ENOMEM;
	x->vers = n;
	n = &x->vers[x->nvers++];
	memset(n, 0, sizeof(*n));
	snprintf(n->env, sizeof(n->env), "%s", x->env);
	snprintf(n->artifact, sizeof(n->artifact), "%s", x->artifact);
	n->v = *v;
	return 0;
}

/* An artifact: its id and name, listed before its versions are read. */
struct art {
	int64_t id;
	char name[254];
};

static int add_env(void *arg, const struct catalog_env *e)
{
	return vec_push(arg, e);
}

static int add_art(void *arg, const struct catalog_artifact *a)
{
	struct art t;

	memset(&t, 0, sizeof(t));
	t.id = a->id;
	snprintf(t.name, sizeof(t.name), "%s", a->name);
	return vec_push(arg, &t);
}

static int count_table(void *arg, const struct catalog_table *t)
{
	(void)t;
	++*(size_t *)arg;
	return 0;
}

/* Environment e's kept counts against its rows (arts: its artifacts). */
static int check_counts(struct run *x, const struct catalog_env *e,
			size_t arts, struct cmfs_err *err)
{
	struct fsck_problem *p;
	uint64_t na = 0, nt = 0;
	size_t tables = 0;
	int rc;

	if ((rc = catalog_art_count(x->cat, e->id, &na, err)) ||
	    (rc = catalog_table_count(x->cat, e->id, &nt, err)) ||
	    (rc = catalog_table_list(x->cat, e->id, count_table, &tables,
				     err)))
		return rc;
	if (na == arts && nt == tables)
		return 0;
	if (!(p = problem(x, FSCK_COUNT)))
		return -ENOMEM;
	snprintf(p->env, sizeof(p->env), "%s", e->name);
	snprintf(p->what, sizeof(p->what),
		 "environment %s counts %llu artifacts and %llu tables; it "
		 "holds %zu and %zu (the limits are checked against the "
		 "counts)", e->name, (unsigned long long)na,
		 (unsigned long long)nt, arts, tables);
	return 0;
}

/* Versions that do not name their blob's inspection row. */
static int check_insp_links(struct run *x, struct cmfs_err *err)
{
	struct fsck_problem *p;
	uint64_t n = 0;
	int rc = catalog_insp_links(x->cat, 0, &n, err);

	if (rc || !n)
		return rc;
	if (!(p = problem(x, FSCK_INSP_LINK)))
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	snprintf(p->what, sizeof(p->what),
		 "%llu versions do not name their blob's inspection (each "
		 "resolution looks it up by the blob instead)",
		 (unsigned long long)n);
	return 0;
}

/* A copy of blob `sha` found in the store: a file, or (inline_) a row. */
static int add_copy(struct run *x, const char *sha, uint64_t size, int inline_)
{
	struct blob *b;
	size_t i;

	/* Only names of 64 lower-case hex digits are blobs. */
	for (i = 0; sha[i]; i++)
		if (!strchr("0123456789abcdef", sha[i]))
			return 0;
	if (i != 64)
		return 0;
	if (!(b = room(x->blobs, &x->ablobs, x->nblobs, sizeof(*b))))
		return -ENOMEM;
	x->blobs = b;
	b = &x->blobs[x->nblobs++];
	memset(b, 0, sizeof(*b));
	memcpy(b->sha, sha, 65);
	b->size = size;
	b->inline_ = inline_;
	return 0;
}

static int add_blob(void *arg, const char *sha, uint64_t size)
{
	return add_copy(arg, sha, size, 0);
}

/* An inline blob: row[0] its sha256, row[1] its size. */
static int add_inline(void *arg, const char *const *row)
{
	return add_copy(arg, row[0], strtoull(row[1], NULL, 10), IN_ROW);
}

/* A blob the catalog keeps, the same way. */
static int add_kept(void *arg, const char *const *row)
{
	return add_copy(arg, row[0], strtoull(row[1], NULL, 10), IN_DB);
}

static int count_row(void *arg, const char *const *row)
{
	(void)row;
	++*(size_t *)arg;
	return 0;
}

/* Every version of every artifact of every environment, into x->vers. */
static int gather_versions(struct run *x, struct cmfs_err *err)
{
	struct vec envs = VEC_INIT(sizeof(struct catalog_env));
	struct vec arts = VEC_INIT(sizeof(struct art));
	size_t i, j;
	int rc;

	rc = catalog_begin_read(x->cat, err);
	if (rc)
		return rc;
	rc = catalog_env_list(x->cat, add_env, &envs, err);
	for (i = 0; !rc && i < envs.n; i++) {
		const struct catalog_env *e =
			(const struct catalog_env *)envs.v + i;

		arts.n = 0;
		rc = catalog_art_list(x->cat, e->id, add_art, &arts, err);
		x->env = e->name;
		for (j = 0; !rc && j < arts.n; j++) {
			const struct art *a = (const struct art *)arts.v + j;

			x->artifact = a->name;
			rc = catalog_ver_list(x->cat, a->id, add_version, x,
					      err);
		}
		x->r->nartifacts += arts.n;
		if (!rc)
			rc = check_counts(x, e, arts.n, err);
	}
	/* In the same snapshot: a mounted store's inline blobs come with
	 * the versions that refer to them. */
	if (!rc)
		rc = catalog_inline_list(x->cat, add_inline, x, err);
	if (!rc)
		rc = catalog_blob_list(x->cat, add_kept, x, err);
	x->r->nenvs = envs.n;
	x->r->nversions = x->nvers;
	catalog_end(x->cat, 0, NULL);
	vec_release(&envs);
	vec_release(&arts);
	if (rc == -ENOMEM)
		return cmfs_err_set(err, rc, "out of memory");
	return rc;
}

static int cmp_blob(const void *a, const void *b)
{
	return strcmp(((const struct blob *)a)->sha,
		      ((const struct blob *)b)->sha);
}

/*
 * The copy of blob `sha` that serves its versions.  A blob can have two:
 * a file from before it was stored inline and the catalog's row.  Readers
 * take the row; a corrupt one is passed over for an intact file (repair
 * then deletes the row, judge_orphans()).
 */
static struct blob *find_blob(struct run *x, const char *sha)
{
	struct blob key, *b, *end = x->blobs + x->nblobs, *pick = NULL;

	snprintf(key.sha, sizeof(key.sha), "%s", sha);
	if (!x->nblobs || !(b = bsearch(&key, x->blobs, x->nblobs,
					sizeof(*x->blobs), cmp_blob)))
		return NULL;
	while (b > x->blobs && !strcmp(b[-1].sha, sha))
		b--;
	for (; b < end && !strcmp(b->sha, sha); b++)
		if (!pick || (pick->corrupt && !b->corrupt) ||
		    (!b->corrupt && b->inline_))
			pick = b;
	return pick;
}

/* Another copy of blob `b` serves its versions. */
static int other_serves(struct run *x, const struct blob *b)
{
	const struct blob *f = find_blob(x, b->sha);

	return f && f != b && f->refs;
}

/*
 * Open the catalog and run its integrity check.  A catalog that cannot be
 * used is a problem, not an error of the run: the blobs are still checked.
 */
static int open_catalog(struct run *x, const char *store, const char *url,
			int rdonly, struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct fsck_problem *p;
	char db[PATH_MAX], *res = NULL, *line, *save = NULL;
	size_t n = 0;
	int rc;

	if ((size_t)snprintf(db, sizeof(db), "%s/catalog.db", store) >=
	    sizeof(db))
		return cmfs_err_set(err, -ENAMETOOLONG, "%s: path too long",
				    store);
	if (url)
		snprintf(db, sizeof(db), "%s", url);
	rc = catalog_open_existing(&x->cat, db, rdonly, &e2);
	if (!rc)
		rc = catalog_check(x->cat, &res, &e2);
	if (!rc && !strcmp(res, "ok")) {
		x->cat_ok = 1;
		free(res);
		return 0;
	}
	if (rc == -ENOMEM) {
		free(res);
		return cmfs_err_set(err, rc, "out of memory");
	}
	if (rc) {
		if (!(p = problem(x, FSCK_CATALOG)))
			return cmfs_err_set(err, -ENOMEM, "out of memory");
		snprintf(p->what, sizeof(p->what), "%s", cmfs_err_msg(&e2));
		catalog_close(x->cat);
		x->cat = NULL;
		return 0;
	}
	/* The check found damage: one problem per line, up to a cap. */
	for (line = strtok_r(res, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		if (n > MAX_CHECK_LINES)
			continue;
		if (!(p = problem(x, FSCK_CATALOG)))
			break;
		if (n == MAX_CHECK_LINES)
			snprintf(p->what, sizeof(p->what),
				 "catalog integrity check: more lines follow "
				 "(sqlite3 %.150s 'PRAGMA integrity_check')",
				 db);
		else
			snprintf(p->what, sizeof(p->what),
				 "catalog integrity check: %s", line);
	}
	if (!n && (p = problem(x, FSCK_CATALOG)))
		snprintf(p->what, sizeof(p->what),
			 "catalog integrity check failed without a report");
	free(res);
	return 0;
}

/* ---- judge -------------------------------------------------------------- */

/* Blob copy `b` open for reading: its file, a memory file of its row,
 * or a staging file holding the catalog's bytes of it. */
static int open_copy(struct run *x, const struct blob *b, int *fd,
		     struct cmfs_err *err)
{
	uint64_t size;
	int rc;

	if (b->inline_ == IN_ROW)
		return blob_open_inline(x->cat, b->sha, fd, err);
	if (b->inline_ == IN_STORE)
		return store_blob_open(x->store, b->sha, fd, err);
	if ((rc = store_stage(x->store, fd, err)))
		return rc;
	if ((rc = catalog_blob_get(x->cat, b->sha, *fd, &size, err)))
		close(*fd);
	return rc;
}

/* Hash blob `b`; mark it corrupt when its bytes are not its name. */
static int hash_blob(struct run *x, struct blob *b)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	char hex[STORE_SHA_HEX];
	struct stat st;
	int fd, rc;

	rc = open_copy(x, b, &fd, &e2);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		b->corrupt = 1;
		snprintf(b->why, sizeof(b->why), "cannot be opened: %s",
			 strerror(-rc));
		return 0;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
	} else {
		b->size = (uint64_t)st.st_size;
		rc = store_hash_fd(hex, fd, b->size, &e2);
	}
	close(fd);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		b->corrupt = 1;
		snprintf(b->why, sizeof(b->why), "cannot be read: %s",
			 strerror(-rc));
	} else if (strcmp(hex, b->sha)) {
		b->corrupt = 1;
		snprintf(b->why, sizeof(b->why), "its bytes hash to %s", hex);
	}
	x->r->blob_bytes += b->size;
	return 0;
}

/* Match versions to blobs; record the problems of versions. */
static int judge_versions(struct run *x)
{
	struct jar_report *rep;
	struct fsck_problem *p;
	struct blob *b;
	size_t i;
	int rc;

	for (i = 0; i < x->nvers; i++) {
		struct ver *v = &x->vers[i];

		b = find_blob(x, v->v.sha256);
		if (b)
			b->refs++;
		if (!b || b->corrupt) {
			v->bad = 1;
			p = ver_problem(
				x, b ? FSCK_BLOB_CORRUPT : FSCK_BLOB_MISSING,
				v);
			if (!p)
				return -ENOMEM;
			if (b)
				snprintf(p->what, sizeof(p->what),
					 "blob %.64s is corrupt: %s", b->sha,
					 b->why);
			else
				snprintf(p->what, sizeof(p->what),
					 "blob %.64s is missing", v->v.sha256);
			continue;
		}
		if (b->size != v->v.size) {
			if (!(p = ver_problem(x, FSCK_SIZE, v)))
				return -ENOMEM;
			snprintf(p->what, sizeof(p->what),
				 "the catalog says %llu bytes, blob %.64s "
				 "(intact) has %llu",
				 (unsigned long long)v->v.size, b->sha,
				 (unsigned long long)b->size);
		}
		if (!x->cat_ok || !name_is_jar(v->artifact))
			continue;
		rep = NULL;
		rc = catalog_insp_get(x->cat, v->v.sha256, &rep, NULL);
		jar_report_free(rep);
		/* -EIO: recorded, but its factories do not read back. */
		if (rc == -ENOENT || rc == -EIO) {
			if (!(p = ver_problem(x, FSCK_INSPECTION, v)))
				return -ENOMEM;
			snprintf(p->what, sizeof(p->what),
				 rc == -ENOENT
					 ? "no inspection is recorded for blob "
					   "%.64s"
					 : "the inspection recorded for blob "
					   "%.64s is damaged",
				 v->v.sha256);
		}
	}
	return 0;
}

/* The catalog's loose blobs (catalog.h), as one string of sha256s. */
static int add_loose(void *arg, const char *const *row)
{
	return buf_adds(arg, row[0]) || buf_addc(arg, ' ') ? -ENOMEM : 0;
}

/* Blobs that no version refers to. */
static int judge_orphans(struct run *x)
{
	struct fsck_problem *p;
	struct buf loose;
	size_t i;

	if (!x->cat)
		return 0; /* without a catalog nothing is an orphan */
	buf_init(&loose, 4u << 20);
	if (catalog_loose_list(x->cat, add_loose, &loose, NULL))
		buf_reset(&loose); /* then none is known to be loose */
	for (i = 0; i < x->nblobs; i++) {
		struct blob *b = &x->blobs[i];

		if (b->refs)
			continue;
		if (other_serves(x, b)) {
			/* A second copy: a corrupt row must go for the file
			 * to serve; an intact one is only space. */
			if (!(p = problem(x, b->corrupt ? FSCK_BLOB_CORRUPT
							: FSCK_ORPHAN)))
				goto oom;
			memcpy(p->sha256, b->sha, sizeof(p->sha256));
			snprintf(p->what, sizeof(p->what),
				 "blob %.64s has a second copy in the %s%s%s",
				 b->sha, b->inline_ ? "catalog" : "store",
				 b->corrupt ? ", corrupt: " : "",
				 b->corrupt ? b->why : "");
			continue;
		}
		if (!(p = problem(x, FSCK_ORPHAN)))
			goto oom;
		memcpy(p->sha256, b->sha, sizeof(p->sha256));
		/* An intact file: an upload links its blob before the
		 * transaction that refers to it, so a crash (or a refusal
		 * the daemon could not clean up) between the two leaves
		 * exactly this, which every mount's start sweeps. */
		p->harmless = !b->inline_ && !b->corrupt &&
			      strstr(buf_str(&loose), b->sha);
		if (p->harmless)
			snprintf(p->what, sizeof(p->what),
				 "blob %.64s (%llu bytes) is an orphan: no "
				 "version refers to it; %s",
				 b->sha, (unsigned long long)b->size,
				 x->r->busy ? "it may be an upload in flight"
					    : "left from an interrupted "
					      "upload; the next mount removes "
					      "it");
		else if (!b->inline_ && !b->corrupt)
			snprintf(p->what, sizeof(p->what),
				 "blob %.64s (%llu bytes) is not known to the "
				 "catalog: a mount keeps it (another store's? "
				 "--repair removes it)",
				 b->sha, (unsigned long long)b->size);
		else
			snprintf(p->what, sizeof(p->what),
				 "blob %.64s (%llu bytes) is an orphan: no "
				 "version refers to it%s%s%s",
				 b->sha, (unsigned long long)b->size,
				 b->corrupt ? " (and " : "",
				 b->corrupt ? b->why : "",
				 b->corrupt ? ")" : "");
		if (x->r->busy)
			snprintf(p->done, sizeof(p->done),
				 "it may be an upload in flight: the store "
				 "is in use");
	}
	buf_release(&loose);
	return 0;
oom:
	buf_release(&loose);
	return -ENOMEM;
}

/* ---- repair ------------------------------------------------------------- */

/* The latest good version of the artifact of x->vers[i] (0 = none). */
static int64_t latest_good(const struct run *x, size_t i)
{
	const struct ver *v = &x->vers[i];
	int64_t n = 0;
	size_t j;

	for (j = 0; j < x->nvers; j++) {
		const struct ver *w = &x->vers[j];

		if (w->v.artifact_id == v->v.artifact_id && !w->bad &&
		    w->v.n > n)
			n = w->v.n;
	}
	return n;
}

/* The missing-or-corrupt problem recorded for version `v`. */
static struct fsck_problem *problem_of(struct run *x, const struct ver *v)
{
	size_t i;

	for (i = 0; i < x->r->nproblems; i++) {
		struct fsck_problem *p = &x->r->problems[i];

		if ((p->kind == FSCK_BLOB_MISSING ||
		     p->kind == FSCK_BLOB_CORRUPT) &&
		    !strcmp(p->env, v->env) &&
		    !strcmp(p->artifact, v->artifact) && p->version == v->v.n)
			return p;
	}
	return NULL;
}

/* Delete broken version x->vers[i], with its events line. */
static int drop_version(struct run *x, size_t i, struct cmfs_err *err)
{
	const struct ver *v = &x->vers[i];
	struct fsck_problem *p = problem_of(x, v);
	int64_t good = latest_good(x, i);
	struct event ev;
	const char *line;
	int rc;

	rc = catalog_ver_del(x->cat, v->v.artifact_id, v->v.n, err);
	if (!rc && !good)
		rc = catalog_art_del(x->cat, v->v.artifact_id, err);
	if (rc)
		return rc;
	event_init(&ev, clock_now_ns(), (uint32_t)getuid(), v->env, "fsck-repair");
	event_add(&ev, "artifact", v->artifact);
	event_addf(&ev, "version", "%lld", (long long)v->v.n);
	event_add(&ev, "sha256", v->v.sha256);
	event_add(&ev, "removed", "version");
	if (p)
		event_add(&ev, "reason", p->what);
	if (good)
		event_addf(&ev, "latest", "%lld", (long long)good);
	line = event_finish(&ev, 0, NULL);
	rc = line ? catalog_event_add(x->cat, v->env, line, err)
		  : cmfs_err_set(err, -ENOMEM, "out of memory");
	event_release(&ev);
	if (rc || !p)
		return rc;
	p->fixed = 1;
	if (good)
		snprintf(p->done, sizeof(p->done),
			 "removed version %lld; %.150s is now at version "
			 "%lld",
			 (long long)v->v.n, v->artifact, (long long)good);
	else
		snprintf(p->done, sizeof(p->done),
			 "removed version %lld and %.150s, which has no "
			 "good version left",
			 (long long)v->v.n, v->artifact);
	return 0;
}

/* Inspect the blob of problem `p` again and record it. */
static int reinspect(struct run *x, struct fsck_problem *p,
		     struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct jar_report *rep = NULL;
	struct blob *b;
	int fd, rc;

	if (!catalog_insp_get(x->cat, p->sha256, &rep, NULL)) {
		/* Another version with the same bytes came first. */
		jar_report_free(rep);
		p->fixed = 1;
		snprintf(p->done, sizeof(p->done), "inspection recomputed");
		return 0;
	}
	if (!(b = find_blob(x, p->sha256)))
		return cmfs_err_set(err, -ENOENT, "blob %.64s is missing",
				    p->sha256);
	if ((rc = open_copy(x, b, &fd, err)))
		return rc;
	rc = reinspect_blob(x->cat, NULL, p->sha256, fd, &e2, err);
	if (rc == -EINVAL && e2.code) {
		snprintf(p->done, sizeof(p->done),
			 "not repaired: not a valid zip archive: %s",
			 cmfs_err_msg(&e2));
		return 0;
	}
	if (e2.code)
		return cmfs_err_set(err, rc, "inspecting %.64s: %s", p->sha256,
				    cmfs_err_msg(&e2));
	if (!rc) {
		p->fixed = 1;
		snprintf(p->done, sizeof(p->done), "inspection recomputed");
	}
	return rc;
}

/* Unlink the blobs that no version refers to now. */
static void free_blobs(struct run *x)
{
	struct fsck_problem *p;
	uint64_t refs;
	size_t i, j;
	int rc;

	for (i = 0; i < x->nblobs; i++) {
		struct blob *b = &x->blobs[i];

		if (b->refs && !b->corrupt)
			continue;
		/* A second copy goes whatever the catalog says; a blob, once
		 * no version refers to it. */
		if (!(!b->refs && other_serves(x, b)) &&
		    (catalog_blob_refs(x->cat, b->sha, &refs, NULL) || refs))
			continue;
		/* (a blob the catalog keeps goes with its last version) */
		rc = b->inline_ == IN_ROW
			     ? catalog_inline_del(x->cat, b->sha, NULL)
		     : b->inline_ == IN_DB
			     ? -ENOTSUP
			     : store_blob_unlink(x->store, b->sha);
		/* A row may have gone with its last version already (the
		 * catalog's trigger). */
		if (rc && rc != -ENOENT)
			continue;
		for (j = 0; j < x->r->nproblems; j++) {
			p = &x->r->problems[j];
			if ((p->kind != FSCK_ORPHAN &&
			     (p->kind != FSCK_BLOB_CORRUPT || p->version)) ||
			    strcmp(p->sha256, b->sha))
				continue;
			p->fixed = 1;
			snprintf(p->done, sizeof(p->done), "removed");
		}
	}
}

static int repair(struct run *x, struct cmfs_err *err)
{
	size_t i;
	int rc;

	rc = catalog_begin(x->cat, err);
	if (rc)
		return rc;
	for (i = 0; !rc && i < x->nvers; i++)
		if (x->vers[i].bad)
			rc = drop_version(x, i, err);
	for (i = 0; !rc && i < x->r->nproblems; i++) {
		struct fsck_problem *p = &x->r->problems[i];

		if (p->kind == FSCK_COUNT) {
			rc = catalog_env_recount(x->cat, err);
			snprintf(p->done, sizeof(p->done),
				 "counts set from the rows");
		} else if (p->kind == FSCK_INSP_LINK) {
			uint64_t n;

			rc = catalog_insp_links(x->cat, 1, &n, err);
			snprintf(p->done, sizeof(p->done),
				 "each names its blob's inspection");
		} else {
			continue;
		}
		p->fixed = !rc;
	}
	rc = catalog_end(x->cat, rc, err);
	if (rc) {
		/* Rolled back: nothing in the catalog changed. */
		for (i = 0; i < x->r->nproblems; i++) {
			x->r->problems[i].fixed = 0;
			x->r->problems[i].done[0] = '\0';
		}
		return rc;
	}
	free_blobs(x);
	/*
	 * Each inspection goes in with a transaction of its own (that of
	 * catalog_insp_put), so one that cannot be recorded is rolled back
	 * whole and the others still are.
	 */
	for (i = 0; i < x->r->nproblems; i++) {
		struct fsck_problem *p = &x->r->problems[i];
		struct cmfs_err e2 = CMFS_ERR_INIT;

		if (p->kind != FSCK_INSPECTION)
			continue;
		rc = reinspect(x, p, &e2);
		if (rc == -ENOMEM)
			return cmfs_err_set(err, rc, "out of memory");
		if (rc)
			snprintf(p->done, sizeof(p->done),
				 "not repaired: %.200s", cmfs_err_msg(&e2));
	}
	return 0;
}

/* Fill in why problems that repair does not touch were left. */
static void explain(struct run *x)
{
	size_t i;

	for (i = 0; i < x->r->nproblems; i++) {
		struct fsck_problem *p = &x->r->problems[i];

		if (p->fixed || p->done[0])
			continue;
		if (p->kind == FSCK_CATALOG || p->kind == FSCK_SIZE)
			snprintf(p->done, sizeof(p->done),
				 "not repairable here: restore the store "
				 "from a backup (cmfs export/import)");
		else if (x->r->repair && x->r->note[0])
			snprintf(p->done, sizeof(p->done),
				 "not repaired: %.200s", x->r->note);
	}
}

/* ---- the run ------------------------------------------------------------ */

int fsck_run(struct fsck_report **out, const char *store, int repair_it,
	     struct cmfs_err *err)
{
	return fsck_run_url(out, store, NULL, repair_it, err);
}

int fsck_run_url(struct fsck_report **out, const char *store,
		 const char *url, int repair_it, struct cmfs_err *err)
{
	struct run x;
	struct stat st;
	char db[PATH_MAX];
	int64_t unsynced = 0;
	size_t i;
	int rc, have_db;

	*out = NULL;
	memset(&x, 0, sizeof(x));
	if (stat(store, &st))
		return cmfs_err_set(err, -errno, "store %s: %s", store,
				    strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cmfs_err_set(err, -ENOTDIR, "store %s: not a directory",
				    store);
	snprintf(db, sizeof(db), "%s/catalog.db", store);
	have_db = url || access(db, F_OK) == 0;
	snprintf(db, sizeof(db), "%s/blobs", store);
	if (!have_db && access(db, F_OK))
		return cmfs_err_set(err, -ENOENT,
				    "store %s: not a cmfs store (no "
				    "catalog.db, no blobs/)",
				    store);
	x.r = calloc(1, sizeof(*x.r));
	if (!x.r)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	x.r->repair = repair_it;
	x.r->busy = fsck_store_busy(store);
	if (repair_it && x.r->busy)
		snprintf(x.r->note, sizeof(x.r->note),
			 "the store is in use by pid %ld (a mount?): "
			 "unmount it first",
			 (long)x.r->busy);
	if ((rc = store_open(&x.store, store, err)))
		goto out;
	if (repair_it && !x.r->busy) {
		struct cmfs_err e2 = CMFS_ERR_INIT;

		/* One writer; on a full disk, room for the repair's commit. */
		if (store_lock(x.store, &e2)) {
			x.r->busy = -1;
			snprintf(x.r->note, sizeof(x.r->note), "%s",
				 cmfs_err_msg(&e2));
		} else {
			store_reserve_release(x.store, 0);
		}
	}
	if (!have_db) {
		struct fsck_problem *p = problem(&x, FSCK_CATALOG);

		if (!p) {
			rc = cmfs_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		snprintf(p->what, sizeof(p->what),
			 "catalog %s/catalog.db is missing", store);
	} else if ((rc = open_catalog(&x, store_path(x.store), url,
				      !repair_it || x.r->busy, err))) {
		goto out;
	}
	if (x.cat && x.cat_ok &&
	    ((rc = gather_versions(&x, err)) ||
	     (rc = check_insp_links(&x, err))))
		goto out;
	/* A mount lists blobs while they wait for their sync: only a store
	 * nobody holds says something by listing any. */
	if (x.cat && x.cat_ok && !x.r->busy &&
	    ((rc = catalog_unsynced_mark(x.cat, &unsynced, err)) ||
	     (unsynced && (rc = catalog_unsynced_list(x.cat, count_row,
						       &x.r->nunsynced, err)))))
		goto out;
	/* Where the catalog keeps blobs, the store's files are this host's
	 * copies of them, each checked as it was fetched: not the store of
	 * record, and not checked here. */
	if (!(x.cat && catalog_keeps_blobs(x.cat)) &&
	    (rc = store_blob_walk(x.store, add_blob, &x))) {
		rc = cmfs_err_set(err, rc, "store %s: listing blobs: %s", store,
				  strerror(-rc));
		goto out;
	}
	if (x.nblobs)
		qsort(x.blobs, x.nblobs, sizeof(*x.blobs), cmp_blob);
	x.r->nblobs = x.nblobs;
	for (i = 0; i < x.nblobs; i++)
		if ((rc = hash_blob(&x, &x.blobs[i])))
			break;
	if (!rc && (!x.cat_ok || !(rc = judge_versions(&x))))
		rc = x.cat_ok ? judge_orphans(&x) : 0;
	if (rc) {
		rc = cmfs_err_set(err, rc, "out of memory");
		goto out;
	}
	if (!x.cat_ok) {
		if (repair_it && !x.r->note[0])
			snprintf(x.r->note, sizeof(x.r->note),
				 "the catalog is damaged, so nothing else is "
				 "touched");
		/* A corrupt blob is still worth naming without a catalog. */
		for (i = 0; i < x.nblobs; i++) {
			struct fsck_problem *p;

			if (!x.blobs[i].corrupt)
				continue;
			if (!(p = problem(&x, FSCK_BLOB_CORRUPT))) {
				rc = cmfs_err_set(err, -ENOMEM,
						  "out of memory");
				goto out;
			}
			memcpy(p->sha256, x.blobs[i].sha, sizeof(p->sha256));
			snprintf(p->what, sizeof(p->what),
				 "blob %.64s is corrupt: %s", x.blobs[i].sha,
				 x.blobs[i].why);
		}
	} else if (repair_it && !x.r->busy) {
		if (x.r->nproblems && (rc = repair(&x, err)))
			goto out;
		/* Every blob was just hashed, and the versions of a bad one
		 * dropped: what the list is for is done. */
		if (unsynced && !catalog_unsynced_clear(x.cat, unsynced, err))
			x.r->unsynced_cleared = 1;
	}
	explain(&x);
out:
	if (repair_it && !x.r->busy)
		store_reserve_take(x.store);
	catalog_close(x.cat);
	store_close(x.store);
	free(x.vers);
	free(x.blobs);
	if (rc) {
		fsck_report_free(x.r);
		return rc;
	}
	*out = x.r;
	return 0;
}

void fsck_report_free(struct fsck_report *r)
{
	if (!r)
		return;
	free(r->problems);
	free(r);
}

int fsck_exit_code(const struct fsck_report *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nproblems; i++) {
		if (r->problems[i].harmless)
			continue;
		if (!r->problems[i].fixed)
			return FSCK_EXIT_UNCORRECTED;
		n++;
	}
	return n ? FSCK_EXIT_CORRECTED : FSCK_EXIT_OK;
}

int fsck_report_format(struct buf *out, const struct fsck_report *r)
{
	size_t i, fixed = 0, harmless = 0;
	int rc = 0;

	if (r->busy > 0)
		rc = buf_printf(out,
				"the store is in use by pid %ld (a mount?): "
				"checked read-only\n",
				(long)r->busy);
	else if (r->busy)
		rc = buf_printf(out, "the store is locked by another cmfs: "
				     "checked read-only\n");
	for (i = 0; !rc && i < r->nproblems; i++) {
		const struct fsck_problem *p = &r->problems[i];

		harmless += p->harmless != 0;
		fixed += p->fixed != 0 && !p->harmless;
		if (p->version)
			rc = buf_printf(
				out,
				"env %s, artifact %s, version %lld: ", p->env,
				p->artifact, (long long)p->version);
		if (!rc)
			rc = buf_printf(out, "%s%s%s%s\n", p->what,
					p->done[0] ? "; " : "",
					p->fixed ? "repaired: " : "", p->done);
	}
	if (!rc && r->nunsynced)
		rc = buf_printf(out,
				"%zu blobs were listed as not yet synced (the "
				"store was not closed cleanly): checked with "
				"the others%s\n",
				r->nunsynced,
				r->unsynced_cleared
					? "; the list is cleared"
					: "; the next mount checks them again");
	if (!rc)
		rc = buf_printf(out,
				"%zu environments, %zu artifacts, %zu "
				"versions, %zu blobs (%llu bytes): ",
				r->nenvs, r->nartifacts, r->nversions,
				r->nblobs, (unsigned long long)r->blob_bytes);
	if (!rc && r->nproblems == harmless)
		rc = buf_adds(out, "clean\n");
	else if (!rc)
		rc = buf_printf(out, "%zu problems, %zu repaired%s\n",
				r->nproblems - harmless, fixed,
				!r->repair && fixed < r->nproblems - harmless
					? " (cmfs fsck --repair repairs what "
					  "it can)"
					: "");
	return rc;
}

/* 1 if /proc/<pid>/fd of process `pid` holds `path` open. */
static int holds(const char *pid, const char *path)
{
	char dir[300], link[PATH_MAX], target[PATH_MAX];
	struct dirent *e;
	DIR *d;
	ssize_t n;
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found = !strcmp(target, path);
	}
	closedir(d);
	return found;
}

pid_t fsck_store_busy(const char *store)
{
	char real[PATH_MAX], db[PATH_MAX + 16], self[32];
	struct dirent *e;
	pid_t pid = 0;
	DIR *d;

	if (!realpath(store, real))
		return 0;
	snprintf(db, sizeof(db), "%s/catalog.db", real);
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	d = opendir("/proc");
	if (!d)
		return 0;
	while (!pid && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    !strcmp(e->d_name, self))
			continue;
		if (holds(e->d_name, db))
			pid = (pid_t)strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	return pid;
}
