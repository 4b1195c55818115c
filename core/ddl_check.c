/*
 * ddl_check.c - the checks Flink makes on a whole table once it is read
 * (ddl_check_refs(), ddl_int.h): the columns each clause names exist, key
 * columns are physical, the watermark's column is an event-time column.
 *
 * These run on a parsed table without LIKE, and on a merged one (after a
 * merge there is no source text, so no position), as Flink's schema
 * resolution requires.
 */
#include "ddl_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* "line:col: message" when a parser is at hand, else just the message. */
static int refs_fail(struct ddl_parser *p, size_t off, struct cmfs_err *err,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refs_fail(struct ddl_parser *p, size_t off, struct cmfs_err *err,
		     const char *fmt, ...)
{
	char msg[CMFS_ERR_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p)
		return ddl_error_at(p, off, -EINVAL, "%s", msg);
	return cmfs_err_set(err, -EINVAL, "%s", msg);
}

/*
 * A rowtime's type: 'T' for TIMESTAMP(p), 'L' for TIMESTAMP_LTZ(p), with
 * p <= 3 as Flink wants; 0 for anything else (a bare TIMESTAMP is
 * TIMESTAMP(6)).
 */
static int rowtime_kind(const char *type)
{
	const char *s;
	int kind;

	/* canonical text makes this a string test: TIMESTAMP(3) NOT NULL */
	if (!strncmp(type, "TIMESTAMP_LTZ(", 14)) {
		s = type + 14;
		kind = 'L';
	} else if (!strncmp(type, "TIMESTAMP(", 10)) {
		s = type + 10;
		kind = 'T';
	} else {
		return 0;
	}
	return s[0] >= '0' && s[0] <= '3' && s[1] == ')' &&
			       (s[2] == '\0' || !strcmp(s + 2, " NOT NULL"))
		       ? kind
		       : 0;
}

/* What to say about a type that cannot be a rowtime's: the fix. */
static const char *rowtime_fix(const char *type)
{
	if (!strcmp(type, "TIMESTAMP") || !strcmp(type, "TIMESTAMP NOT NULL"))
		return " (TIMESTAMP alone means TIMESTAMP(6): write "
		       "TIMESTAMP(3))";
	if (!strcmp(type, "TIMESTAMP_LTZ") ||
	    !strcmp(type, "TIMESTAMP_LTZ NOT NULL"))
		return " (TIMESTAMP_LTZ alone means TIMESTAMP_LTZ(6): write "
		       "TIMESTAMP_LTZ(3))";
	return "";
}

/* Flink compares names exactly: say so when only the case differs. */
const char *ddl_case_hint(const struct ddl_table *t, const char *name,
			  char *out, size_t size)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < t->ncols; i++)
		if (!strcasecmp(t->cols[i].name, name)) {
			snprintf(out, size,
				 " (names are case-sensitive: `%.60s` exists)",
				 t->cols[i].name);
			break;
		}
	return out;
}

/*
 * The watermark, as Flink's schema resolver checks it: its column exists
 * and is an event-time column (TIMESTAMP(p) or TIMESTAMP_LTZ(p), p <= 3,
 * not PROCTIME()); its expression names existing columns and built-in
 * functions, and gives the rowtime's kind of timestamp.
 */
static int check_watermark(const struct ddl_table *t, struct ddl_parser *p,
			   struct cmfs_err *err)
{
	struct cmfs_err why = CMFS_ERR_INIT;
	const struct ddl_column *c = ddl_find_column(t, t->wm_col);
	char hint[128], rt[128], et[128];
	int kind = 0;

	if (!c)
		return refs_fail(p, t->wm_off, err,
				 "watermark column `%s` is not a column of "
				 "the table%s",
				 t->wm_col,
				 ddl_case_hint(t, t->wm_col, hint, sizeof(hint)));
	/* a computed rowtime has its expression's type, when it can be
	 * told (its expression was checked with the columns) */
	snprintf(rt, sizeof(rt), "%s", c->type ? c->type : "");
	if (!c->type &&
	    ddl_expr_check(t, c->expr, 1, rt, sizeof(rt), &why))
		rt[0] = '\0';
	if (!strcmp(rt, "PROCTIME"))
		return refs_fail(p, t->wm_off, err,
				 "watermark column `%s` is PROCTIME(), a "
				 "processing-time attribute: a watermark "
				 "needs an event-time column",
				 t->wm_col);
	if (rt[0] && !(kind = rowtime_kind(rt)))
		return refs_fail(p, t->wm_off, err,
				 "watermark column `%s` is %s: a rowtime "
				 "column must be TIMESTAMP(p) or "
				 "TIMESTAMP_LTZ(p) with p <= 3%s",
				 t->wm_col, rt, rowtime_fix(rt));
	if (ddl_expr_check(t, t->wm_expr, 0, et, sizeof(et), &why))
		return refs_fail(p, t->wm_off, err, "watermark on `%s`: %s",
				 t->wm_col, cmfs_err_msg(&why));
	if (!et[0])
		return 0; /* a type only Flink can tell */
	if (!rowtime_kind(et) || (kind && rowtime_kind(et) != kind))
		return refs_fail(p, t->wm_off, err,
				 "the watermark expression on `%s` is %s: it "
				 "must be %s(p) with p <= 3, as its "
				 "column%s",
				 t->wm_col, !strcmp(et, "PROCTIME") ? "PROCTIME()" : et,
				 kind == 'L' ? "TIMESTAMP_LTZ" : "TIMESTAMP",
				 rowtime_fix(et));
	return 0;
}

/* The columns `keys` names (a `what` at `off`) exist and are physical,
 * else the refusal says `rule`. */
static int physical_keys(const struct ddl_table *t, struct ddl_parser *p,
			 struct cmfs_err *err, const struct ddl_strv *keys,
			 size_t off, const char *what, const char *rule)
{
	const struct ddl_column *c;
	char hint[128];
	size_t i;

	for (i = 0; i < keys->n; i++) {
		c = ddl_find_column(t, keys->v[i]);
		if (!c)
			return refs_fail(p, off, err,
					 "%s `%s` is not a column of the "
					 "table%s",
					 what, keys->v[i],
					 ddl_case_hint(t, keys->v[i], hint,
						       sizeof(hint)));
		if (c->kind != DDL_COL_PHYSICAL)
			return refs_fail(p, off, err,
					 "%s `%s` is a %s column: %s", what,
					 keys->v[i],
					 c->kind == DDL_COL_COMPUTED
						 ? "computed"
						 : "metadata",
					 rule);
	}
	return 0;
}

/*
 * In Flink's order: the columns (computed ones over physical and
 * metadata columns and built-in functions), the primary key (on physical
 * columns only), the watermark, then partition and bucket keys.  The
 * first problem found is reported.
 */
int ddl_check_refs(const struct ddl_table *t, struct ddl_parser *p,
		   struct cmfs_err *err)
{
	struct cmfs_err why = CMFS_ERR_INIT;
	const struct ddl_column *c;
	char hint[128], ty[8];
	size_t i;
	int rc;

	for (i = 0; i < t->ncols; i++) {
		c = &t->cols[i];
		if (c->kind != DDL_COL_COMPUTED)
			continue;
		rc = ddl_expr_check(t, c->expr, 1, ty, sizeof(ty), &why);
		if (rc == -ENOMEM)
			return cmfs_err_set(err, rc, "out of memory");
		if (rc)
			return refs_fail(p, c->off, err,
					 "computed column `%s`: %s", c->name,
					 cmfs_err_msg(&why));
	}
	if ((rc = physical_keys(t, p, err, &t->pk, t->pk_off,
				"primary key column",
				"a primary key must be on physical columns")))
		return rc;
	if (t->wm_col && (rc = check_watermark(t, p, err)))
		return rc;
	/* Flink partitions by what the connector stores */
	if ((rc = physical_keys(t, p, err, &t->parts, t->part_off,
				"partition column",
				"partition keys must be physical columns")))
		return rc;
	for (i = 0; i < t->dist_cols.n; i++)
		if (!ddl_find_column(t, t->dist_cols.v[i]))
			return refs_fail(p, t->dist_off, err,
					 "bucket key column `%s` is not a "
					 "column of the table%s",
					 t->dist_cols.v[i],
					 ddl_case_hint(t, t->dist_cols.v[i], hint,
						   sizeof(hint)));
	return 0;
}
