/*
 * repo_table.c - tables: CREATE TABLE text parsed, checked and stored,
 * truncated, renamed (also from and to scratch files, one change each,
 * settled at open after a crash) and removed; resolved files' size.
 */
#define _GNU_SOURCE
#include "repo_int.h"

/* ---- tables ---- */

/*
 * The whole tree of stored table `t` of `env_id`: its text merged with its
 * LIKE source as stored at write time.  *out freed with ddl_table_free().
 */
static int table_tree(struct repo *r, const struct catalog_table *t,
		      struct ddl_table **out, struct cmfs_err *err)
{
	struct catalog_table_def d;
	struct ddl_table *tree = NULL, *src = NULL;
	int rc = catalog_table_def(r->cat, t->id, &d, err);

	if (rc)
		return rc;
	rc = ddl_parse(&tree, d.ddl, strlen(d.ddl), err);
	if (!rc && d.like_ddl)
		rc = ddl_parse(&src, d.like_ddl, strlen(d.like_ddl), err);
	if (!rc && src)
		rc = ddl_merge_like(tree, src, err);
	ddl_table_free(src);
	catalog_table_def_release(&d);
	if (rc) {
		ddl_table_free(tree);
		return rc;
	}
	*out = tree;
	return 0;
}

/*
 * Fill `d` with the options of `t`: the merged WITH clause, each key once
 * with the value Flink takes, the last one written (the text keeps them
 * all).  Resolution and export read these.
 */
static int def_options(struct catalog_table_def *d, const struct ddl_table *t)
{
	size_t i, n = ddl_option_count(t);

	d->keys = calloc(n ? n : 1, sizeof(char *));
	d->values = calloc(n ? n : 1, sizeof(char *));
	if (!d->keys || !d->values)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *k, *v;

		ddl_option(t, i, &k, &v);
		if (ddl_option_get(t, k) != v)
			continue; /* written again further on */
		d->keys[d->nopts] = strdup(k);
		d->values[d->nopts] = strdup(v);
		d->nopts++;
		if (!d->keys[d->nopts - 1] || !d->values[d->nopts - 1])
			return -ENOMEM;
	}
	return 0;
}

/*
 * Write table `name` of `env` from `text`; with `from`, a rename: table
 * `from` is dropped in the same transaction, and the line says rename.
 */
static int table_put(struct repo *r, const struct repo_who *who,
		     const char *env, const char *name, const char *text,
		     size_t len, const char *from, struct cmfs_err *err)
{
	const struct config *cfg = repo_config(r);
	struct catalog_table_def d;
	struct catalog_table old, srct;
	struct catalog_env e;
	struct ddl_table *t = NULL, *src = NULL;
	struct buf like = BUF_INIT((size_t)1 << 24);
	struct event ev;
	const char *like_name;
	uint64_t n;
	int rc;

	memset(&d, 0, sizeof(d));
	store_reserve_take(r->store);
	event_init(&ev, clock_now_ns(), who->uid, env,
		   from ? "rename" : "table-write");
	event_add(&ev, "table", from ? from : name);
	if (from)
		event_add(&ev, "to", name);
	if (len > cfg->limits.ddl_size) {
		rc = cmfs_err_set(err, -EFBIG,
				  "%s.sql: %zu bytes is over the DDL size "
				  "limit of %llu", name, len,
				  (unsigned long long)cfg->limits.ddl_size);
		goto refused;
	}
	if ((rc = ddl_parse(&t, text, len, err)) ||
	    (rc = ddl_check_name(t, env, name, err)))
		goto refused;
	if ((rc = begin(r, err)))
		goto refused;
	rc = env_get(r, env, &e, err);
	like_name = t ? ddl_like_source(t) : NULL;
	if (!rc && like_name) {
		rc = catalog_table_get(r->cat, e.id, like_name, &srct, err);
		if (rc == -ENOENT)
			rc = cmfs_err_set(err, -EINVAL,
					  "%s: LIKE source %s is not a table "
					  "of environment %s", name, like_name,
					  env);
		if (!rc)
			rc = table_tree(r, &srct, &src, err);
		if (!rc)
			rc = ddl_merge_like(t, src, err);
		if (!rc)
			rc = ddl_format(&like, src);
		if (!rc)
			event_add(&ev, "like", like_name);
	}
	if (!rc && catalog_table_get(r->cat, e.id, name, &old, NULL) == -ENOENT) {
		rc = catalog_table_count(r->cat, e.id, &n, err);
		if (!rc && n >= cfg->limits.tables_per_env)
			rc = cmfs_err_set(err, -EDQUOT,
					  "%s: environment %s holds %llu "
					  "tables, the limit", name, env,
					  (unsigned long long)n);
	}
	if (!rc) {
		d.ddl = strndup(text, len);
		d.like_ddl = like_name ? buf_take(&like, NULL) : NULL;
		rc = d.ddl && (!like_name || d.like_ddl) ? def_options(&d, t)
							 : -ENOMEM;
	}
	if (!rc)
		rc = catalog_table_put(r->cat, e.id, name, &d, clock_now_ns(),
				       who->uid, NULL, err);
	if (!rc && from) {
		struct catalog_table ft;

		rc = catalog_table_get(r->cat, e.id, from, &ft, err);
		if (!rc)
			rc = catalog_table_del(r->cat, ft.id, err);
	}
	if (!rc) {
		const char *conn = ddl_option_get(t, "connector");

		event_add(&ev, "connector", conn ? conn : "");
		record(r, &ev, env, 0, NULL);
	}
	rc = end(r, rc, err);
refused:
	if (rc) {
		record(r, &ev, rc == -ENOENT ? NULL : env, rc, err);
		table_refusal(r, env, name, cmfs_err_msg(err));
	}
	catalog_table_def_release(&d);
	ddl_table_free(t);
	ddl_table_free(src);
	buf_release(&like);
	event_release(&ev);
	return rc;
}

int repo_table_truncate(struct repo *r, const struct repo_who *who,
			const char *env, const char *file, uint64_t size)
{
	char msg[CMFS_ERR_MSG];

	if (!size) {
		repo_refused(r, who, env, "table-write", file, -EINVAL,
			     "truncating a table to nothing is not a CREATE "
			     "TABLE statement: rm it to drop it");
		return -EINVAL;
	}
	snprintf(msg, sizeof(msg), "%s: not possible here", file);
	repo_refused(r, who, env, "truncate", file, -EPERM, msg);
	return -EPERM;
}

int repo_label_writable(struct repo *r, const struct repo_who *who,
			const char *env, const char *object,
			const char *xattr)
{
	if (strncmp(xattr, NAME_XATTR_USER, strlen(NAME_XATTR_USER)))
		return -ENOTSUP;
	if (strncmp(xattr, NAME_XATTR_CMFS, strlen(NAME_XATTR_CMFS)))
		return 0;
	if (who)
		repo_refused(r, who, env && *env ? env : NULL, "label",
			     object, -EPERM,
			     "user.cmfs.* attributes are computed by cmfs "
			     "and cannot be set");
	return -EPERM;
}

int repo_table_write(struct repo *r, const struct repo_who *who,
		     const char *env, const char *name, const char *text,
		     size_t len, struct cmfs_err *err)
{
	return table_put(r, who, env, name, text, len, NULL, err);
}

int repo_table_rename(struct repo *r, const struct repo_who *who,
		      const char *env, const char *from, const char *to,
		      const char *text, size_t len, struct cmfs_err *err)
{
	return table_put(r, who, env, to, text, len, from, err);
}

/* The text of scratch file `scratch` staged for table `table`, into `out`
 * (capped at max_ddl_size by the caller's buffer). */
static int staged_text(struct repo *r, const char *env, const char *table,
		       const char *scratch, struct buf *out)
{
	char chunk[65536];
	ssize_t n;
	int fd, rc = store_scratch_staged_open(r->store, env, 't', table,
					       scratch, O_RDONLY, &fd);

	if (rc)
		return rc;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if ((rc = buf_add(out, chunk, (size_t)n)))
			break;
	if (n < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int repo_table_from_scratch(struct repo *r, const struct repo_who *who,
			    const char *env, const char *scratch,
			    const char *name, struct cmfs_err *err)
{
	struct buf b = BUF_INIT(repo_config(r)->limits.ddl_size);
	int rc = store_scratch_stage(r->store, env, 't', scratch, name);

	if (rc)
		return rc;
	rc = staged_text(r, env, name, scratch, &b);
	if (!rc)
		rc = table_put(r, who, env, name, buf_str(&b), b.len, NULL,
			       err);
	/* Committed: the scratch file goes; else it is back as it was. */
	store_scratch_unstage(r->store, env, 't', name, scratch, rc != 0);
	buf_release(&b);
	return rc;
}

/*
 * Table `table` dropped, its text left as scratch file `scratch`: the text
 * is staged first as if the scratch file were on its way onto the table
 * (settle_staged() then keeps the table and drops it), the table is
 * dropped, and the staged file becomes the scratch file (after a crash,
 * settle_staged() finds the table gone and puts it there).
 */
static int table_to_scratch(struct repo *r, const struct repo_who *who,
			    const char *env, const char *table,
			    const char *scratch, struct cmfs_err *err)
{
	struct buf b = BUF_INIT(repo_config(r)->limits.ddl_size);
	int fd = -1, rc = repo_table_text(r, env, table, &b, err);

	if (!rc)
		rc = store_scratch_staged_open(r->store, env, 't', table,
					       scratch,
					       O_WRONLY | O_CREAT | O_TRUNC,
					       &fd);
	if (!rc && write(fd, buf_str(&b), b.len) != (ssize_t)b.len)
		rc = -EIO;
	if (fd >= 0)
		close(fd);
	buf_release(&b);
	if (rc)
		goto out;
	rc = repo_table_remove(r, who, env, table, err);
out:
	if (fd >= 0)
		store_scratch_unstage(r->store, env, 't', table, scratch, !rc);
	return rc;
}

int repo_table_move(struct repo *r, const struct repo_who *who,
		    const char *env, const char *from, const char *to,
		    struct cmfs_err *err)
{
	struct buf b = BUF_INIT(repo_config(r)->limits.ddl_size);
	char tf[130], tt[130];
	int ff = name_table_file(tf, from), ft = name_table_file(tt, to);
	int rc;

	if (!ff && !ft)
		return store_scratch_rename(r->store, env, 't', from, to);
	if (!ff)
		return repo_table_from_scratch(r, who, env, from, tt, err);
	if (!ft)
		return table_to_scratch(r, who, env, tf, to, err);
	/* One change, one line: written and dropped together. */
	rc = repo_table_text(r, env, tf, &b, err);
	if (!rc)
		rc = repo_table_rename(r, who, env, tf, tt, buf_str(&b), b.len,
				       err);
	buf_release(&b);
	return rc;
}

/* Context of settle_staged(): the environment whose files it settles. */
struct settle {
	struct repo *r;
	const char *env;
};

/*
 * A scratch file that a crash left staged for table `table`: the rename
 * happened if the table holds its text (it goes), else it did not (it is
 * put back).  Texts that were equal before make both the same state.
 */
static int settle_staged(void *arg, const char *table, const char *scratch)
{
	struct settle *x = arg;
	struct repo *r = x->r;
	struct buf b = BUF_INIT((size_t)1 << 24), cur = BUF_INIT((size_t)1 << 24);
	int done;

	done = !staged_text(r, x->env, table, scratch, &b) &&
	       !repo_table_text(r, x->env, table, &cur, NULL) &&
	       b.len == cur.len && !memcmp(buf_str(&b), buf_str(&cur), b.len);
	store_scratch_unstage(r->store, x->env, 't', table, scratch, !done);
	repo_log(r, LOG_NOTICE,
		 "env %s: the rename of scratch file %s onto table %s.sql "
		 "was cut short: %s", x->env, scratch, table,
		 done ? "it was committed, the scratch file is removed"
		      : "it was not committed, the scratch file is back");
	buf_release(&b);
	buf_release(&cur);
	return 0;
}

/*
 * A scratch file that a crash left staged for artifact `name` (rsync's
 * temp file renamed into place): the commit happened if the artifact's
 * latest version has its bytes (it goes), else not (it is put back).
 */
int settle_staged_art(void *arg, const char *name, const char *scratch)
{
	struct settle *x = arg;
	struct repo *r = x->r;
	struct catalog_version v;
	char sha[STORE_SHA_HEX];
	struct stat st;
	int fd, done = 0;

	if (!store_scratch_staged_open(r->store, x->env, 'a', name, scratch,
				       O_RDONLY, &fd)) {
		done = !fstat(fd, &st) &&
		       !store_hash_fd(sha, fd, (uint64_t)st.st_size, NULL) &&
		       !repo_art_latest(r, x->env, name, &v) &&
		       !strcmp(v.sha256, sha);
		close(fd);
	}
	store_scratch_unstage(r->store, x->env, 'a', name, scratch, !done);
	repo_log(r, LOG_NOTICE,
		 "env %s: the rename of scratch file %s onto artifact %s "
		 "was cut short: %s", x->env, scratch, name,
		 done ? "it was committed, the scratch file is removed"
		      : "it was not committed, the scratch file is back");
	return 0;
}

static int settle_env(void *arg, const struct catalog_env *e)
{
	struct settle x = { arg, e->name };

	store_scratch_staged(x.r->store, e->name, 't', settle_staged, &x);
	store_scratch_staged(x.r->store, e->name, 'a', settle_staged_art, &x);
	return 0;
}

/* Settle the renames of scratch files onto tables and artifacts that a
 * crash cut. */
void settle_renames(struct repo *r)
{
	catalog_env_list(r->cat, settle_env, r, NULL);
}

int repo_table_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_table t;
	struct event ev;
	int rc;

	room_to_free(r);
	event_init(&ev, clock_now_ns(), who->uid, env, "table-drop");
	event_add(&ev, "table", name);
	rc = begin(r, err);
	if (rc)
		goto out;
	rc = env_get(r, env, &e, err);
	if (!rc)
		rc = catalog_table_get(r->cat, e.id, name, &t, err);
	if (!rc)
		rc = catalog_table_del(r->cat, t.id, err);
	if (!rc)
		record(r, &ev, env, 0, NULL);
	rc = end(r, rc, err);
out:
	if (rc && rc != -ENOENT)
		record(r, &ev, env, rc, err);
	event_release(&ev);
	return rc;
}

uint64_t repo_resolved_size(struct repo *r, const char *env,
			    const char *name, int sql)
{
	static const struct repo_who nobody = { 0, 0, 0, 0, NULL };
	struct buf b = BUF_INIT((size_t)1 << 24);
	uint64_t size = 0;

	if (!repo_resolve(r, &nobody, env, name, sql, 0, &b, NULL))
		size = b.len;
	buf_release(&b);
	return size;
}

int repo_resolved_computed(struct repo *r, const char *env, const char *name,
			   int sql, const char *attr, struct buf *out,
			   struct cmfs_err *err)
{
	static const struct repo_who nobody = { 0, 0, 0, 0, NULL };
	struct buf tmp = BUF_INIT((size_t)1 << 24);
	int rc;

	if (!strcmp(attr, "refused-classes")) {
		rc = repo_refused_classes(r, env, name, out, err);
		/* The other refusals are user.cmfs.error's to tell. */
		return rc == -ENOENT && !err->msg[0] ? rc : 0;
	}
	if (strcmp(attr, "error"))
		return -ENODATA;
	/* Empty when the table resolves; else why not. */
	rc = repo_resolve(r, &nobody, env, name, sql, 0, &tmp, err);
	buf_release(&tmp);
	if (rc == -ENOENT && !err->msg[0])
		return rc;
	return rc ? buf_adds(out, cmfs_err_msg(err)) : 0;
}
