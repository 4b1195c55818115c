/*
 * export.c - `cmfs export`: the store as a directory of CMF-style JSON
 * files and plain bytes (the format is in export.h; import.c reads it
 * back).
 *
 * Export reads the catalog through one read snapshot, so a mounted store
 * can be exported while it serves; the bytes of each version are copied
 * and hashed on the way, so a backup never silently holds a corrupt blob.
 * The marker export.json is written last: a directory without it is an
 * export that did not finish, and import refuses it.
 *
 * Each JSON file is built as a jansson value and dumped indented by two
 * into a buffer, then written and synced: one small document at a time
 * (a version, a table, an environment), while the bytes of versions go
 * from file to file, so memory stays that of the largest document.
 */
#define _GNU_SOURCE
#include "export.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blob.h"
#include "catalog.h"
#include "clock.h"
#include "export_int.h"
#include "store.h"
#include "utf8.h"

/* ---- JSON writing ------------------------------------------------------- */

/* Whether `s` is UTF-8 throughout: jansson takes nothing else. */
static int is_utf8(const char *s)
{
	size_t i = 0, n = strlen(s);

	while (i < n)
		if (utf8_next((const unsigned char *)s, n, &i) < 0)
			return 0;
	return 1;
}

/* o[key] = v (consumed).  0, or -ENOMEM (v NULL: making it failed). */
static int put(json_t *o, const char *key, json_t *v)
{
	if (!v)
		return -ENOMEM;
	return json_object_set_new(o, key, v) ? -ENOMEM : 0;
}

/* o[key] = the string `s`.  -EINVAL for a key or text not UTF-8. */
static int put_str(json_t *o, const char *key, const char *s)
{
	if (!is_utf8(key) || !is_utf8(s))
		return -EINVAL;
	return put(o, key, json_string(s));
}

/* o[key] = `ns` (since the epoch) as 2026-11-30T06:30:00.123456789Z. */
static int put_time(json_t *o, const char *key, int64_t ns)
{
	int64_t sec = ns / 1000000000, frac = ns % 1000000000;
	time_t t;
	struct tm tm;
	char s[32];

	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	t = (time_t)sec;
	if (!gmtime_r(&t, &tm) ||
	    !strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm))
		return -EINVAL;
	return put(o, key, json_sprintf("%s.%09lldZ", s, (long long)frac));
}

/*
 * doc["metadata"]: name (when given), creationTimestamp, labels (n of
 * them) and annotations (NULL-terminated key, value pairs).
 */
static int put_metadata(json_t *doc, const char *name, int64_t ns,
			size_t nlabels, char *const *keys, char *const *values,
			const char *const *ann)
{
	json_t *m, *l, *a;
	size_t i;
	int rc = put(doc, "metadata", m = json_object());

	if (!rc && name)
		rc = put_str(m, "name", name);
	if (!rc)
		rc = put_time(m, "creationTimestamp", ns);
	if (!rc && nlabels && !(rc = put(m, "labels", l = json_object())))
		for (i = 0; !rc && i < nlabels; i++)
			rc = put_str(l, keys[i], values[i]);
	if (!rc && ann && ann[0] &&
	    !(rc = put(m, "annotations", a = json_object())))
		for (i = 0; !rc && ann[i]; i += 2)
			rc = put_str(a, ann[i], ann[i + 1]);
	return rc;
}

/* A document of `kind`: its apiVersion and kind.  NULL: out of memory. */
static json_t *doc_new(const char *api, const char *kind)
{
	return json_pack("{s:s,s:s}", "apiVersion", api, "kind", kind);
}

/*
 * Append `doc` (consumed) as the files hold it: indented by two, keys in
 * the order they were set, a newline at the end.  `rc`, an error met
 * while building it, wins.
 */
static int doc_text(struct buf *b, json_t *doc, int rc)
{
	if (!rc)
		rc = doc ? buf_add_json(b, doc, JSON_INDENT(2)) : -ENOMEM;
	if (!rc)
		rc = buf_addc(b, '\n');
	json_decref(doc);
	return rc;
}

int export_artifact_json(struct buf *out, const struct export_artifact *a)
{
	char uid[16], next[24];
	const char *ann[] = {ANN_UID, uid, ANN_NEXT, next, NULL};
	json_t *doc = doc_new(EXPORT_API_CMF, "Artifact");
	int rc;

	snprintf(uid, sizeof(uid), "%u", a->uid);
	snprintf(next, sizeof(next), "%lld", (long long)a->next);
	if (!a->next)
		ann[2] = NULL;
	rc = put_metadata(doc, a->name, a->mtime, a->nlabels, a->keys,
			  a->values, ann);
	if (!rc)
		rc = put(doc, "spec", json_object());
	if (!rc)
		rc = put(doc, "status",
			 json_pack("{s:I,s:I,s:{s:s}}", "version",
				   (json_int_t)a->version, "size",
				   (json_int_t)a->size, "checksum", "sha256",
				   a->sha256));
	return doc_text(out, doc, rc);
}

void export_artifact_release(struct export_artifact *a)
{
	size_t i;

	for (i = 0; i < a->nlabels; i++) {
		free(a->keys[i]);
		free(a->values[i]);
	}
	free(a->keys);
	free(a->values);
	memset(a, 0, sizeof(*a));
}


/* ---- files -------------------------------------------------------------- */

const char *export_bytes_name(const char *name)
{
	return strcmp(name, "artifact.json") ? name : "artifact.json.data";
}

/* Write `len` bytes to new file `path` (mode 0600) and fsync it. */
static int write_file(const char *path, const void *data, size_t len,
		      struct cmfs_err *err)
{
	const char *p = data;
	int fd, rc = 0;
	ssize_t n;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return cmfs_err_set(err, -errno, "%s: %s", path,
				    strerror(errno));
	while (!rc && len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = -(n < 0 ? errno : EIO);
		else {
			p += n;
			len -= (size_t)n;
		}
	}
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (rc)
		return cmfs_err_set(err, rc, "%s: %s", path, strerror(-rc));
	return 0;
}

int export_path(char *out, struct cmfs_err *err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		return cmfs_err_set(err, -ENAMETOOLONG, "path too long");
	return 0;
}

static int make_dir(const char *path, struct cmfs_err *err)
{
	if (mkdir(path, 0700))
		return cmfs_err_set(err, -errno, "%s: %s", path,
				    strerror(errno));
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Remove what is under `dir` and, with `self`, `dir` itself. */
static void rm_tree(const char *dir, int self)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (!self)
		mkdir(dir, 0700);
}

/* ---- dump --------------------------------------------------------------- */

static int add_env(void *arg, const struct catalog_env *e)
{
	return vec_push(arg, e);
}

static int add_art(void *arg, const struct catalog_artifact *a)
{
	return vec_push(arg, a);
}

static int add_ver(void *arg, const struct catalog_version *v)
{
	return vec_push(arg, v);
}

static int add_table(void *arg, const struct catalog_table *t)
{
	return vec_push(arg, t);
}

/* Labels of one artifact, in key order, as an export_artifact has them. */
static int add_label(void *arg, const char *key, const char *value)
{
	struct export_artifact *a = arg;
	char **k = realloc(a->keys, (a->nlabels + 1) * sizeof(char *));
	char **v;

	if (!k)
		return -ENOMEM;
	a->keys = k;
	v = realloc(a->values, (a->nlabels + 1) * sizeof(char *));
	if (!v)
		return -ENOMEM;
	a->values = v;
	a->keys[a->nlabels] = strdup(key);
	a->values[a->nlabels] = strdup(value);
	a->nlabels++;
	return a->keys[a->nlabels - 1] && a->values[a->nlabels - 1] ? 0
								    : -ENOMEM;
}

/* The state of one dump. */
struct dump {
	struct store *store;
	struct catalog *cat;
	struct export_stats st;
	struct buf b; /* scratch for JSON text */
};

/* Copy blob `v` to new file `path`, checking its bytes on the way. */
static int dump_blob(struct dump *d, const struct catalog_version *v,
		     const char *path, struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	char hex[STORE_SHA_HEX];
	int src, dst, rc;

	rc = blob_open(d->store, d->cat, v->sha256, v->size, &src, &e2);
	/* Freed by a mount since the snapshot began: retired, and kept
	 * while this export holds the store (store_export_hold). */
	if (rc == -ENOENT &&
	    !store_blob_open_retired(d->store, v->sha256, &src))
		rc = 0;
	if (rc == -ENOENT)
		return cmfs_err_set(err, -EIO,
				    "blob %s is missing: run cmfs fsck",
				    v->sha256);
	if (rc)
		return cmfs_err_set(err, rc, "%s", cmfs_err_msg(&e2));
	dst = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (dst < 0) {
		rc = cmfs_err_set(err, -errno, "%s: %s", path, strerror(errno));
		close(src);
		return rc;
	}
	rc = store_copy_fd(src, dst, v->size, err);
	if (!rc)
		rc = store_hash_fd(hex, dst, v->size, err);
	if (!rc && strcmp(hex, v->sha256))
		rc = cmfs_err_set(err, -EIO,
				  "blob %s is corrupt (its bytes hash to %s): "
				  "run cmfs fsck",
				  v->sha256, hex);
	if (!rc && fsync(dst))
		rc = cmfs_err_set(err, -errno, "%s: %s", path, strerror(errno));
	close(dst);
	close(src);
	if (!rc)
		d->st.bytes += v->size;
	return rc;
}

/* One artifact: a directory per version with artifact.json and bytes. */
static int dump_artifact(struct dump *d, const char *adir,
			 const struct catalog_artifact *art,
			 struct cmfs_err *err)
{
	struct vec vers = VEC_INIT(sizeof(struct catalog_version));
	struct export_artifact a;
	char path[PATH_MAX];
	size_t i;
	int rc;

	memset(&a, 0, sizeof(a));
	snprintf(a.name, sizeof(a.name), "%s", art->name);
	rc = catalog_ver_list(d->cat, art->id, add_ver, &vers, err);
	if (!rc)
		rc = catalog_label_list(d->cat, art->id, add_label, &a, err);
	if (!rc)
		rc = catalog_art_next_get(d->cat, art->id, &a.next, err);
	if (rc == -ENOMEM)
		cmfs_err_set(err, rc, "out of memory");
	if (!rc)
		rc = export_path(path, err, "%s/%s", adir, art->name);
	if (!rc)
		rc = make_dir(path, err);
	for (i = 0; !rc && i < vers.n; i++) {
		const struct catalog_version *v =
			(const struct catalog_version *)vers.v + i;

		a.version = v->n;
		a.size = v->size;
		memcpy(a.sha256, v->sha256, sizeof(a.sha256));
		a.mtime = v->mtime;
		a.uid = v->uid;
		buf_reset(&d->b);
		if ((rc = export_path(path, err, "%s/%s/%lld", adir, art->name,
				   (long long)v->n)) ||
		    (rc = make_dir(path, err)))
			break;
		if ((rc = export_artifact_json(&d->b, &a))) {
			cmfs_err_set(err, rc, "%s: cannot write its JSON",
				     art->name);
			break;
		}
		if ((rc = export_path(path, err, "%s/%s/%lld/artifact.json", adir,
				   art->name, (long long)v->n)) ||
		    (rc = write_file(path, d->b.data, d->b.len, err)) ||
		    (rc = export_path(path, err, "%s/%s/%lld/%s", adir, art->name,
				   (long long)v->n, export_bytes_name(art->name))) ||
		    (rc = dump_blob(d, v, path, err)))
			break;
		d->st.versions++;
	}
	d->st.artifacts++;
	export_artifact_release(&a);
	vec_release(&vers);
	return rc;
}

/* Append the JSON of a table: its options and LIKE text. */
static int table_json(struct buf *b, const struct catalog_table *t,
		      const struct catalog_table_def *def)
{
	char uid[16];
	const char *ann[] = {ANN_UID, uid, NULL};
	json_t *doc = doc_new(EXPORT_API_CMFS, "Table"), *spec, *opts;
	size_t i;
	int rc;

	snprintf(uid, sizeof(uid), "%u", t->uid);
	rc = put_metadata(doc, t->name, t->mtime, 0, NULL, NULL, ann);
	if (!rc && !(rc = put(doc, "spec", spec = json_object())))
		rc = put(spec, "options", opts = json_object());
	for (i = 0; !rc && i < def->nopts; i++)
		rc = put_str(opts, def->keys[i], def->values[i]);
	if (!rc && def->like_ddl)
		rc = put_str(spec, "like", def->like_ddl);
	return doc_text(b, doc, rc);
}

static int dump_table(struct dump *d, const char *tdir,
		      const struct catalog_table *t, struct cmfs_err *err)
{
	struct catalog_table_def def;
	char path[PATH_MAX];
	int rc;

	memset(&def, 0, sizeof(def));
	rc = catalog_table_def(d->cat, t->id, &def, err);
	if (rc)
		return rc;
	buf_reset(&d->b);
	if ((rc = table_json(&d->b, t, &def)))
		cmfs_err_set(err, rc, "table %s: cannot write its JSON",
			     t->name);
	if (!rc && !(rc = export_path(path, err, "%s/%s.sql", tdir, t->name)))
		rc = write_file(path, def.ddl, strlen(def.ddl), err);
	if (!rc && !(rc = export_path(path, err, "%s/%s.json", tdir, t->name)))
		rc = write_file(path, d->b.data, d->b.len, err);
	catalog_table_def_release(&def);
	if (!rc)
		d->st.tables++;
	return rc;
}

/* Count the lines of `b`. */
static size_t count_lines(const struct buf *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->len; i++)
		n += b->data[i] == '\n';
	return n;
}

/* catalog_retired_list callback: "<name> <next>\n" into a buf. */
static int add_retired(void *arg, const char *name, int64_t next)
{
	return buf_printf(arg, "%s %lld\n", name, (long long)next);
}

static int dump_env(struct dump *d, const char *dir,
		    const struct catalog_env *e, struct cmfs_err *err)
{
	struct vec arts = VEC_INIT(sizeof(struct catalog_artifact));
	struct vec tabs = VEC_INIT(sizeof(struct catalog_table));
	struct buf ev = BUF_INIT(EVENTS_MAX);
	char edir[PATH_MAX], sub[PATH_MAX], uid[16];
	const char *ann[] = {ANN_UID, uid, NULL};
	json_t *doc;
	uint64_t size = 0;
	size_t i;
	int rc;

	snprintf(uid, sizeof(uid), "%u", e->uid);
	if ((rc = export_path(edir, err, "%s/envs/%s", dir, e->name)) ||
	    (rc = make_dir(edir, err)))
		return rc;
	buf_reset(&d->b);
	doc = doc_new(EXPORT_API_CMF, "Environment");
	rc = put_metadata(doc, e->name, e->ctime, 0, NULL, NULL, ann);
	if (!rc)
		rc = put(doc, "spec", json_object());
	if ((rc = doc_text(&d->b, doc, rc)))
		return cmfs_err_set(err, rc, "environment %s: cannot write its "
				    "JSON", e->name);
	if ((rc = export_path(sub, err, "%s/environment.json", edir)) ||
	    (rc = write_file(sub, d->b.data, d->b.len, err)))
		return rc;
	rc = export_path(sub, err, "%s/artifacts", edir);
	if (!rc)
		rc = make_dir(sub, err);
	if (!rc)
		rc = catalog_art_list(d->cat, e->id, add_art, &arts, err);
	for (i = 0; !rc && i < arts.n; i++)
		rc = dump_artifact(d, sub,
				   (const struct catalog_artifact *)arts.v + i,
				   err);
	/* The numbers of names no artifact holds now (export.h). */
	buf_reset(&d->b);
	if (!rc)
		rc = catalog_retired_list(d->cat, e->name, add_retired, &d->b,
					  err);
	if (!rc && d->b.len &&
	    !(rc = export_path(sub, err, "%s/next-versions", edir)))
		rc = write_file(sub, d->b.data, d->b.len, err);
	if (!rc && !(rc = export_path(sub, err, "%s/tables", edir)))
		rc = make_dir(sub, err);
	if (!rc)
		rc = catalog_table_list(d->cat, e->id, add_table, &tabs, err);
	for (i = 0; !rc && i < tabs.n; i++)
		rc = dump_table(d, sub,
				(const struct catalog_table *)tabs.v + i, err);
	if (!rc)
		rc = catalog_event_size(d->cat, e->name, &size, err);
	if (!rc && size > EVENTS_MAX)
		rc = cmfs_err_set(err, -EFBIG, "events of %s: %llu bytes",
				  e->name, (unsigned long long)size);
	if (!rc && size)
		rc = catalog_event_read(d->cat, e->name, 0, (size_t)size, &ev,
					err);
	if (!rc && size && !(rc = export_path(sub, err, "%s/events", edir)))
		rc = write_file(sub, ev.data, ev.len, err);
	if (rc == -ENOMEM)
		cmfs_err_set(err, rc, "out of memory");
	d->st.events += count_lines(&ev);
	d->st.envs++;
	buf_release(&ev);
	vec_release(&arts);
	vec_release(&tabs);
	return rc;
}

/* export.json: the marker, written last. */
static int dump_marker(struct dump *d, const char *dir, const struct vec *envs,
		       struct cmfs_err *err)
{
	json_t *doc = doc_new(EXPORT_API_CMFS, "Export"), *list;
	char path[PATH_MAX];
	size_t i;
	int rc;

	buf_reset(&d->b);
	rc = put_metadata(doc, NULL, clock_now_ns(), 0, NULL, NULL, NULL);
	if (!rc)
		rc = put(doc, "spec",
			 json_pack("{s:i,s:s,s:[]}", "format", EXPORT_FORMAT,
				   "cmfsVersion", CMFS_VERSION,
				   "environments"));
	list = json_object_get(json_object_get(doc, "spec"), "environments");
	for (i = 0; !rc && i < envs->n; i++)
		rc = json_array_append_new(
			     list, json_string(((const struct catalog_env *)
							envs->v)[i].name))
			     ? -ENOMEM
			     : 0;
	if ((rc = doc_text(&d->b, doc, rc)))
		return cmfs_err_set(err, rc, "export.json: cannot write it");
	if ((rc = export_path(path, err, "%s/export.json", dir)))
		return rc;
	return write_file(path, d->b.data, d->b.len, err);
}

/* `dir` must be new or an empty directory; 1 in *made when created. */
static int prepare_dir(const char *dir, int *made, struct cmfs_err *err)
{
	struct dirent *e;
	DIR *d;
	int rc = 0;

	*made = 0;
	if (!mkdir(dir, 0700)) {
		*made = 1;
		return 0;
	}
	if (errno != EEXIST)
		return cmfs_err_set(err, -errno, "%s: %s", dir,
				    strerror(errno));
	d = opendir(dir);
	if (!d)
		return cmfs_err_set(err, -errno, "%s: %s", dir,
				    strerror(errno));
	while (!rc && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rc = cmfs_err_set(err, -ENOTEMPTY,
					  "%s: not empty; export into a new "
					  "directory",
					  dir);
	closedir(d);
	return rc;
}

/* Open the store `path` as it is: it must exist with a catalog, its
 * catalog.db or the one at `catalog` (a catalog URI). */
static int open_existing(const char *path, const char *catalog, int rdonly,
			 struct store **store, struct catalog **cat,
			 struct cmfs_err *err)
{
	char db[PATH_MAX];
	struct stat st;
	int rc;

	*store = NULL;
	*cat = NULL;
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return cmfs_err_set(err, -ENOENT, "store %s: no such directory",
				    path);
	if ((rc = export_path(db, err, "%s/catalog.db", path)))
		return rc;
	if (!catalog && access(db, F_OK))
		return cmfs_err_set(err, -ENOENT,
				    "store %s: no catalog.db: not a cmfs store",
				    path);
	if ((rc = store_open(store, path, err)))
		return rc;
	rc = catalog_open_existing(cat, catalog ? catalog : db, rdonly, err);
	if (rc) {
		store_close(*store);
		*store = NULL;
	}
	return rc;
}

int export_dump(const char *store, const char *dir, struct export_stats *out,
		struct cmfs_err *err)
{
	return export_dump_from(store, NULL, dir, out, err);
}

int export_dump_from(const char *store, const char *catalog, const char *dir,
		     struct export_stats *out, struct cmfs_err *err)
{
	struct vec envs = VEC_INIT(sizeof(struct catalog_env));
	struct dump d;
	char path[PATH_MAX];
	size_t i;
	int rc, made = 0, snap = 0, hold = -1;

	memset(&d, 0, sizeof(d));
	buf_init(&d.b, (size_t)64 << 20);
	rc = open_existing(store, catalog, 1, &d.store, &d.cat, err);
	if (!rc)
		rc = prepare_dir(dir, &made, err);
	if (rc)
		goto out;
	/* Before the snapshot: a blob it refers to that a mount frees from
	 * now on stays (retired) until this export is done.  A store this
	 * cannot lock (read-only to us) has no mount freeing blobs. */
	(void)store_export_hold(d.store, &hold);
	rc = catalog_begin_read(d.cat, err);
	snap = !rc;
	if (!rc)
		rc = catalog_env_list(d.cat, add_env, &envs, err);
	if (!rc && !(rc = export_path(path, err, "%s/envs", dir)))
		rc = make_dir(path, err);
	for (i = 0; !rc && i < envs.n; i++)
		rc = dump_env(&d, dir, (const struct catalog_env *)envs.v + i,
			      err);
	if (snap)
		catalog_end(d.cat, 0, NULL);
	if (!rc)
		rc = dump_marker(&d, dir, &envs, err);
	if (rc == -ENOMEM)
		cmfs_err_set(err, rc, "out of memory");
	if (rc)
		rm_tree(dir, made);
	else if (out)
		*out = d.st;
out:
	catalog_close(d.cat);
	if (hold >= 0)
		close(hold);
	store_close(d.store);
	buf_release(&d.b);
	vec_release(&envs);
	return rc;
}
