/*
 * ddl_merge.c - CREATE TABLE ... LIKE: merging the source table into the
 * derived one, with Flink's rules (MergeTableLikeUtil in the planner).
 *
 * Each feature has a strategy: INCLUDING takes the source's and fails on
 * a conflict, EXCLUDING ignores the source's, OVERWRITING takes the
 * source's and lets the derived table's win a conflict.  The defaults are
 * INCLUDING for everything but OPTIONS (OVERWRITING); `{INCLUDING |
 * EXCLUDING | OVERWRITING} ALL` sets every feature first, and specific
 * options then override it.  Physical columns are always taken and can
 * never be redefined.
 *
 * The merged table is built beside the old one (new arrays in the
 * derived table's arena, the source's strings copied), checked, and only
 * then put in place, so a failed merge leaves the table as it was and a
 * successful one leaves nothing that points into the source.  This also
 * makes merging a table with itself safe.
 */
#include "ddl_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The strategy of each feature, from the defaults and the like options. */
static void strategies(const struct ddl_table *t,
		       enum ddl_strategy s[DDL_F_COUNT])
{
	int i, f;

	/* Flink's defaults: INCLUDING ALL OVERWRITING OPTIONS */
	for (f = 0; f < DDL_F_COUNT; f++)
		s[f] = DDL_INCLUDING;
	s[DDL_F_OPTIONS] = DDL_OVERWRITING;
	/* ALL first, wherever it was written, then the specific ones */
	for (i = 0; i < t->nlike_opts; i++) {
		if (t->like_opts[i].feature != DDL_F_ALL)
			continue;
		for (f = 0; f < DDL_F_COUNT; f++)
			s[f] = t->like_opts[i].strategy;
	}
	for (i = 0; i < t->nlike_opts; i++)
		s[t->like_opts[i].feature] = t->like_opts[i].strategy;
}

/* Copy a string into the arena; NULL stays NULL. */
static int dup(struct ddl_arena *a, char **dst, const char *s)
{
	*dst = NULL;
	if (!s)
		return 0;
	*dst = ddl_arena_strdup(a, s);
	return *dst ? 0 : -ENOMEM;
}

/* Copy a list of names, strings and all, into the arena. */
static int dup_strv(struct ddl_arena *a, struct ddl_strv *dst,
		    const struct ddl_strv *src)
{
	struct ddl_strv out = {0};
	char *s;
	size_t i;
	int rc;

	for (i = 0; i < src->n; i++) {
		if ((rc = dup(a, &s, src->v[i])) ||
		    (rc = ddl_strv_push(a, &out, s)))
			return rc;
	}
	*dst = out;
	return 0;
}

/* A deep copy of a column: nothing may point into the source. */
static int dup_column(struct ddl_arena *a, struct ddl_column *dst,
		      const struct ddl_column *c)
{
	int rc;

	memset(dst, 0, sizeof(*dst));
	dst->kind = c->kind;
	dst->is_virtual = c->is_virtual;
	if ((rc = dup(a, &dst->name, c->name)) ||
	    (rc = dup(a, &dst->type, c->type)) ||
	    (rc = dup(a, &dst->expr, c->expr)) ||
	    (rc = dup(a, &dst->meta_key, c->meta_key)))
		return rc;
	return dup(a, &dst->comment, c->comment);
}

/* Append a copy of `c` to the merged columns. */
static int push_column(struct ddl_arena *a, struct ddl_table *m,
		       const struct ddl_column *c, struct cmfs_err *err)
{
	struct ddl_column *v;
	size_t n;

	if (m->ncols >= DDL_MAX_COLUMNS)
		return cmfs_err_set(err, -EFBIG,
				    "the merged table has more than %d "
				    "columns",
				    DDL_MAX_COLUMNS);
	if (m->ncols == m->acols) {
		n = m->acols ? m->acols * 2 : 8;
		v = ddl_arena_alloc(a, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		if (m->ncols)
			memcpy(v, m->cols, m->ncols * sizeof(*v));
		m->cols = v;
		m->acols = n;
	}
	return dup_column(a, &m->cols[m->ncols++], c);
}

/* The columns: the source's (as the strategies allow), then t's. */
static int merge_columns(struct ddl_arena *a, struct ddl_table *m,
			 const struct ddl_table *t, const struct ddl_table *src,
			 const enum ddl_strategy *s, const char *from,
			 struct cmfs_err *err)
{
	const struct ddl_column *c, *old;
	enum ddl_strategy how;
	const char *kind;
	size_t i;
	int rc;

	m->cols = NULL;
	m->ncols = m->acols = 0;
	/* physical columns always; computed and metadata unless excluded */
	for (i = 0; i < src->ncols; i++) {
		c = &src->cols[i];
		if ((c->kind == DDL_COL_COMPUTED &&
		     s[DDL_F_GENERATED] == DDL_EXCLUDING) ||
		    (c->kind == DDL_COL_METADATA &&
		     s[DDL_F_METADATA] == DDL_EXCLUDING))
			continue;
		if ((rc = push_column(a, m, c, err)))
			return rc;
	}
	/* then t's own: new names are appended, known ones may replace */
	for (i = 0; i < t->ncols; i++) {
		c = &t->cols[i];
		old = ddl_find_column(m, c->name);
		if (!old) {
			if ((rc = push_column(a, m, c, err)))
				return rc;
			continue;
		}
		/* the physical schema can only grow, never change */
		if (c->kind == DDL_COL_PHYSICAL)
			return cmfs_err_set(err, -EINVAL,
					    "LIKE %s: column `%s` is already "
					    "defined in the source table",
					    from, c->name);
		kind = c->kind == DDL_COL_COMPUTED ? "computed" : "metadata";
		if (old->kind != c->kind)
			return cmfs_err_set(err, -EINVAL,
					    "LIKE %s: column `%s` is already "
					    "defined in the source table, and "
					    "a %s column can only replace a "
					    "%s column",
					    from, c->name, kind, kind);
		how = s[c->kind == DDL_COL_COMPUTED ? DDL_F_GENERATED
						    : DDL_F_METADATA];
		if (how != DDL_OVERWRITING)
			return cmfs_err_set(
				err, -EINVAL,
				"LIKE %s: %s column `%s` is also "
				"defined in the source table: "
				"specify OVERWRITING %s or "
				"EXCLUDING %s",
				from, kind, c->name,
				c->kind == DDL_COL_COMPUTED ? "GENERATED"
							    : "METADATA",
				c->kind == DDL_COL_COMPUTED ? "GENERATED"
							    : "METADATA");
		/* replaced where the source had it */
		rc = dup_column(a, &m->cols[old - m->cols], c);
		if (rc)
			return rc;
	}
	return 0;
}

/* At most one watermark: the source's, t's, or t's over the source's. */
static int merge_watermark(struct ddl_arena *a, struct ddl_table *m,
			   const struct ddl_table *t,
			   const struct ddl_table *src, enum ddl_strategy how,
			   const char *from, struct cmfs_err *err)
{
	const struct ddl_table *w = NULL;
	int rc;

	if (how != DDL_EXCLUDING && src->wm_col)
		w = src;
	/*
	 * Flink keys watermarks by column: t's may replace the source's on
	 * the same column under OVERWRITING; on another column the result
	 * would have two, which no strategy but EXCLUDING allows.
	 */
	if (t->wm_col) {
		if (w && strcmp(w->wm_col, t->wm_col))
			return cmfs_err_set(
				err, -EINVAL,
				"LIKE %s: the source table has a "
				"watermark on `%s` and this table "
				"one on `%s`, but a table can have only "
				"one: specify EXCLUDING WATERMARKS",
				from, w->wm_col, t->wm_col);
		if (w && how != DDL_OVERWRITING)
			return cmfs_err_set(err, -EINVAL,
					    "LIKE %s: the source table already "
					    "has a watermark on `%s`: specify "
					    "OVERWRITING WATERMARKS or "
					    "EXCLUDING WATERMARKS",
					    from, t->wm_col);
		w = t;
	}
	m->wm_col = m->wm_expr = NULL;
	m->wm_off = 0;
	if (!w)
		return 0;
	if ((rc = dup(a, &m->wm_col, w->wm_col)))
		return rc;
	return dup(a, &m->wm_expr, w->wm_expr);
}

/* The primary key: one at most, INCLUDING fails when both have one. */
static int merge_pk(struct ddl_arena *a, struct ddl_table *m,
		    const struct ddl_table *t, const struct ddl_table *src,
		    enum ddl_strategy how, const char *from,
		    struct cmfs_err *err)
{
	const struct ddl_table *k = NULL;
	int rc;

	/* OVERWRITING cannot come here (the parser refuses OVERWRITING
	 * CONSTRAINTS and OVERWRITING ALL); were it to, t's key wins */
	if (how != DDL_EXCLUDING && src->has_pk)
		k = src;
	if (t->has_pk) {
		if (k && how == DDL_INCLUDING)
			return cmfs_err_set(err, -EINVAL,
					    "LIKE %s: the source table already "
					    "has a primary key: specify "
					    "EXCLUDING CONSTRAINTS",
					    from);
		k = t;
	}
	m->has_pk = k != NULL;
	m->pk_name = NULL;
	m->pk.v = NULL;
	m->pk.n = m->pk.alloc = 0;
	m->pk_off = 0;
	if (!k)
		return 0;
	if ((rc = dup(a, &m->pk_name, k->pk_name)))
		return rc;
	return dup_strv(a, &m->pk, &k->pk);
}

/* PARTITIONED BY: t's, else the source's; INCLUDING fails on both. */
static int merge_partitions(struct ddl_arena *a, struct ddl_table *m,
			    const struct ddl_table *t,
			    const struct ddl_table *src, enum ddl_strategy how,
			    const char *from, struct cmfs_err *err)
{
	/* partitioning is one property: two of them cannot be merged */
	if (t->parts.n && src->parts.n && how == DDL_INCLUDING)
		return cmfs_err_set(err, -EINVAL,
				    "LIKE %s: the source table is already "
				    "partitioned: specify EXCLUDING PARTITIONS",
				    from);
	m->part_off = 0;
	if (t->parts.n || how == DDL_EXCLUDING)
		return dup_strv(a, &m->parts, &t->parts);
	return dup_strv(a, &m->parts, &src->parts);
}

/* DISTRIBUTED BY/INTO: t's, else the source's; INCLUDING fails on both. */
static int merge_distribution(struct ddl_arena *a, struct ddl_table *m,
			      const struct ddl_table *t,
			      const struct ddl_table *src,
			      enum ddl_strategy how, const char *from,
			      struct cmfs_err *err)
{
	const struct ddl_table *d = NULL;

	/* the same rule as partitions (Flink 1.20's DISTRIBUTION option) */
	if (t->has_dist && src->has_dist && how == DDL_INCLUDING)
		return cmfs_err_set(err, -EINVAL,
				    "LIKE %s: the source table already has a "
				    "distribution: specify EXCLUDING "
				    "DISTRIBUTION",
				    from);
	if (t->has_dist)
		d = t;
	else if (how != DDL_EXCLUDING && src->has_dist)
		d = src;
	m->has_dist = d != NULL;
	m->dist_kind = d ? d->dist_kind : NULL;
	m->buckets = d ? d->buckets : 0;
	m->dist_off = 0;
	m->dist_cols.v = NULL;
	m->dist_cols.n = m->dist_cols.alloc = 0;
	return d ? dup_strv(a, &m->dist_cols, &d->dist_cols) : 0;
}

/* Append one option to the merged list. */
static int push_option(struct ddl_arena *a, struct ddl_table *m,
		       const struct ddl_option *o, struct cmfs_err *err)
{
	struct ddl_option *v;
	size_t n;
	int rc;

	if (m->nopts >= DDL_MAX_OPTIONS)
		return cmfs_err_set(err, -EFBIG,
				    "the merged table has more than %d "
				    "options",
				    DDL_MAX_OPTIONS);
	if (m->nopts == m->aopts) {
		n = m->aopts ? m->aopts * 2 : 8;
		v = ddl_arena_alloc(a, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		if (m->nopts)
			memcpy(v, m->opts, m->nopts * sizeof(*v));
		m->opts = v;
		m->aopts = n;
	}
	v = &m->opts[m->nopts++];
	v->off = 0;
	if ((rc = dup(a, &v->key, o->key)))
		return rc;
	return dup(a, &v->value, o->value);
}

/* The options: the source's in order, then t's (replacing or added). */
static int merge_options(struct ddl_arena *a, struct ddl_table *m,
			 const struct ddl_table *t, const struct ddl_table *src,
			 enum ddl_strategy how, const char *from,
			 struct cmfs_err *err)
{
	size_t i, j, nsrc, hits;
	int rc;

	/* Flink keeps options in a hash map; the source's order first
	 * (then t's additions) makes the result deterministic */
	m->opts = NULL;
	m->nopts = m->aopts = 0;
	if (how != DDL_EXCLUDING)
		for (i = 0; i < src->nopts; i++)
			if ((rc = push_option(a, m, &src->opts[i], err)))
				return rc;
	/* a key t itself writes twice is kept twice (the last wins):
	 * only the source's keys are conflicts */
	nsrc = m->nopts;
	for (i = 0; i < t->nopts; i++) {
		/* a key in both: only OVERWRITING lets t's value win, over
		 * every copy of the key the source wrote */
		for (j = 0, hits = 0; j < nsrc; j++) {
			if (strcmp(m->opts[j].key, t->opts[i].key))
				continue;
			if (how != DDL_OVERWRITING)
				return cmfs_err_set(
					err, -EINVAL,
					"LIKE %s: option '%.60s' is also set "
					"in the source table (to '%.60s'): "
					"specify OVERWRITING OPTIONS or "
					"EXCLUDING OPTIONS",
					from, t->opts[i].key, m->opts[j].value);
			if ((rc = dup(a, &m->opts[j].value, t->opts[i].value)))
				return rc;
			hits++;
		}
		if (!hits && (rc = push_option(a, m, &t->opts[i], err)))
			return rc;
	}
	m->has_with = t->has_with || m->nopts;
	return 0;
}

/*
 * Build the merged table in `m`, a copy of t whose merged parts are
 * replaced one by one; then check it as a parsed table is checked, and
 * only then let t take it over.
 */
int ddl_merge_like(struct ddl_table *t, const struct ddl_table *src,
		   struct cmfs_err *err)
{
	enum ddl_strategy s[DDL_F_COUNT];
	struct ddl_arena *a = &t->arena;
	struct ddl_table m;
	struct ddl_arena keep;
	char from[128];
	int rc;

	if (!t->has_like)
		return cmfs_err_set(err, -EINVAL,
				    "table `%.100s` has no LIKE clause",
				    ddl_table_name(t));
	if (t->merged)
		return cmfs_err_set(err, -EINVAL,
				    "the LIKE clause of `%.100s` is already "
				    "merged",
				    ddl_table_name(t));
	snprintf(from, sizeof(from), "`%.100s`", ddl_like_source(t));
	strategies(t, s);
	/* names, comment, IF NOT EXISTS and the LIKE clause stay t's own,
	 * as Flink takes the derived table's comment and ignores the
	 * source's */
	m = *t;
	if ((rc = merge_columns(a, &m, t, src, s, from, err)) ||
	    (rc = merge_watermark(a, &m, t, src, s[DDL_F_WATERMARKS], from,
				  err)) ||
	    (rc = merge_pk(a, &m, t, src, s[DDL_F_CONSTRAINTS], from, err)) ||
	    (rc = merge_partitions(a, &m, t, src, s[DDL_F_PARTITIONS], from,
				   err)) ||
	    (rc = merge_distribution(a, &m, t, src, s[DDL_F_DISTRIBUTION], from,
				     err)) ||
	    (rc = merge_options(a, &m, t, src, s[DDL_F_OPTIONS], from, err)))
		goto out;
	if ((rc = ddl_check_refs(&m, NULL, err)))
		goto out;
	/* commit: m's arrays live in t's arena, which t keeps; the old
	 * arrays stay in the arena, unused, until the table is freed */
	keep = t->arena;
	*t = m;
	t->arena = keep;
	t->merged = 1;
out:
	if (rc == -ENOMEM) {
		cmfs_err_set(err, rc, "out of memory");
	} else if (rc && err) {
		/* the refusal is about the LIKE clause: say where it is */
		char msg[CMFS_ERR_MSG];

		snprintf(msg, sizeof(msg), "%s", cmfs_err_msg(err));
		cmfs_err_clear(err);
		cmfs_err_set(err, rc, "%d:%d: %s", t->like_at[0],
			     t->like_at[1], msg);
	}
	return rc;
}
