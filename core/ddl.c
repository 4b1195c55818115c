/*
 * ddl.c - the CREATE TABLE statement: its parser, the name rule of the
 * environment catalog and accessors (the checks on a whole table:
 * ddl_check.c; the dump and the canonical formatter: ddl_format.c).
 *
 * The grammar is Flink's (1.20/2.x):
 *
 *   CREATE TABLE [IF NOT EXISTS] [cat.][db.]name
 *     [ ( element [, element]* ) ]
 *     [COMMENT 'text']
 *     [DISTRIBUTED BY [HASH | RANGE] (col, ...) [INTO n BUCKETS]
 *      | DISTRIBUTED INTO n BUCKETS]
 *     [PARTITIONED BY (col, ...)]
 *     [USING CONNECTION [cat.][db.]connection]
 *     [WITH ('key' = 'value', ...)]
 *     [LIKE [cat.][db.]source [(like option, ...)]]
 *
 *   element: name type [[CONSTRAINT c] PRIMARY KEY NOT ENFORCED]
 *                       [COMMENT 'text']
 *          | name type METADATA [FROM 'key'] [VIRTUAL] [COMMENT 'text']
 *          | name AS expression [COMMENT 'text']
 *          | WATERMARK FOR rowtime AS expression
 *          | [CONSTRAINT c] PRIMARY KEY (col, ...) NOT ENFORCED
 *
 * `... AS SELECT` (CTAS) and [CREATE OR] REPLACE TABLE (RTAS) are
 * recognised only to be refused with -EOPNOTSUPP.  Everything else that
 * does not fit is -EINVAL with "line:col: ..." naming what was expected.
 */
#include "ddl_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small helpers ---------------------------------------------------- */

/* Make room for one more element in an arena array of `size`-byte items. */
static int grow(struct ddl_arena *a, void **arr, size_t n, size_t *alloc,
		size_t size)
{
	size_t want;
	void *v;

	if (n < *alloc)
		return 0;
	want = *alloc ? *alloc * 2 : 8;
	v = ddl_arena_alloc(a, want * size);
	if (!v)
		return -ENOMEM;
	if (n)
		memcpy(v, *arr, n * size);
	*arr = v;
	*alloc = want;
	return 0;
}

/* Column names are case-sensitive in Flink: `ID` is not `id`. */
const struct ddl_column *ddl_find_column(const struct ddl_table *t,
					 const char *name)
{
	size_t i;

	for (i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name))
			return &t->cols[i];
	return NULL;
}

/* The keywords, for the dump and the formatter. */
const char *ddl_strategy_name(enum ddl_strategy s)
{
	switch (s) {
	case DDL_INCLUDING:
		return "INCLUDING";
	case DDL_EXCLUDING:
		return "EXCLUDING";
	case DDL_OVERWRITING:
		return "OVERWRITING";
	}
	return "?";
}

/* Indexed by enum ddl_feature; also the words the parser accepts. */
static const char *const feature_names[DDL_F_COUNT] = {
	[DDL_F_ALL] = "ALL",
	[DDL_F_CONSTRAINTS] = "CONSTRAINTS",
	[DDL_F_DISTRIBUTION] = "DISTRIBUTION",
	[DDL_F_GENERATED] = "GENERATED",
	[DDL_F_METADATA] = "METADATA",
	[DDL_F_OPTIONS] = "OPTIONS",
	[DDL_F_PARTITIONS] = "PARTITIONS",
	[DDL_F_WATERMARKS] = "WATERMARKS",
};

const char *ddl_feature_name(enum ddl_feature f)
{
	return f < DDL_F_COUNT ? feature_names[f] : "?";
}

/* "a, b, c" of back-quoted names into `out`, cut short if long. */
static void name_list(const struct ddl_strv *sv, char *out, size_t size)
{
	size_t i, k = 0;
	int n;

	out[0] = '\0';
	for (i = 0; i < sv->n && k < size; i++) {
		n = snprintf(out + k, size - k, "%s`%s`", i ? ", " : "",
			     sv->v[i]);
		if (n < 0 || (size_t)n >= size - k) {
			if (size > 4)
				strcpy(out + size - 4, "...");
			return;
		}
		k += (size_t)n;
	}
}

/* ---- the statement ---------------------------------------------------- */

/*
 * One function per construct, each starting at its first token and
 * leaving the parser on the token after it.  They return 0 or the
 * negative errno already recorded (first error wins), so a caller only
 * passes rc on.  Strings they keep are copied into the table's arena.
 */

/* An identifier (plain or back-quoted) at the current token, consumed. */
static int ident(struct ddl_parser *p, char **out, const char *what)
{
	int rc;

	if (p->cur.kind != TK_IDENT && p->cur.kind != TK_QIDENT)
		return ddl_expected(p, what);
	if ((rc = ddl_name_value(p, &p->cur, out)))
		return rc;
	return ddl_advance(p);
}

/* A 'string' at the current token, consumed. */
static int string(struct ddl_parser *p, char **out, const char *what)
{
	int rc;

	if (p->cur.kind != TK_STRING)
		return ddl_expected(p, what);
	if ((rc = ddl_string_value(p, &p->cur, out)))
		return rc;
	return ddl_advance(p);
}

/* [cat.][db.]name: at most three parts. */
static int compound_name(struct ddl_parser *p, char **parts, int *n,
			 const char *what)
{
	size_t off = p->cur.off;
	int rc;

	*n = 0;
	for (;;) {
		/* Flink's names have a catalog, a database and a table */
		if (*n == 3)
			return ddl_error_at(p, off, -EINVAL,
					    "%s has more than 3 parts: at "
					    "most catalog.database.table",
					    what);
		if ((rc = ident(p, &parts[*n], what)))
			return rc;
		(*n)++;
		if (!ddl_cur_punct(p, '.'))
			return 0;
		if ((rc = ddl_advance(p)))
			return rc;
	}
}

/* ( name [, name]* ) without repeats; `what` names the list. */
static int ident_list(struct ddl_parser *p, struct ddl_strv *sv,
		      const char *what)
{
	char *name;
	size_t off;
	int rc;

	if ((rc = ddl_expect_punct(p, '(')))
		return rc;
	for (;;) {
		off = p->cur.off;
		if ((rc = ident(p, &name, "a column name")))
			return rc;
		if (ddl_strv_find(sv, name) >= 0)
			return ddl_error_at(p, off, -EINVAL,
					    "column `%s` appears twice in %s",
					    name, what);
		if ((rc = ddl_strv_push(&p->t->arena, sv, name)))
			return rc;
		if (!ddl_cur_punct(p, ','))
			break;
		if ((rc = ddl_advance(p)))
			return rc;
	}
	return ddl_expect_punct(p, ')');
}

/*
 * A primary key, column-level (`column` set: "PRIMARY KEY NOT ENFORCED"
 * after its type) or table-level ("PRIMARY KEY (a, b) NOT ENFORCED"), with
 * an optional CONSTRAINT name in front.
 */
static int constraint(struct ddl_parser *p, const char *column)
{
	struct ddl_table *t = p->t;
	struct ddl_strv cols = {0};
	char *cname = NULL, list[96];
	size_t off;
	int rc, line, col;

	if (ddl_cur_kw(p, "CONSTRAINT")) {
		if ((rc = ddl_advance(p)) ||
		    (rc = ident(p, &cname, "a constraint name")))
			return rc;
	}
	off = p->cur.off;
	if (ddl_cur_kw(p, "UNIQUE"))
		return ddl_error_at(p, off, -EINVAL,
				    "UNIQUE constraints are not supported by "
				    "Flink: only PRIMARY KEY (...) NOT "
				    "ENFORCED");
	if ((rc = ddl_expect_kw(p, "PRIMARY")) ||
	    (rc = ddl_expect_kw(p, "KEY")))
		return rc;
	/* a column constraint names its column; a table one lists them */
	if (column) {
		rc = ddl_strv_push(&t->arena, &cols, (char *)column);
	} else {
		rc = ident_list(p, &cols, "the primary key");
	}
	if (rc)
		return rc;
	/*
	 * Flink's parser takes PRIMARY KEY with or without ENFORCED and
	 * its planner then refuses all but NOT ENFORCED: refused here, at
	 * write time, with the fix in the message.
	 */
	if (ddl_cur_kw(p, "NOT")) {
		if ((rc = ddl_advance(p)) ||
		    (rc = ddl_expect_kw(p, "ENFORCED")))
			return rc;
	} else {
		name_list(&cols, list, sizeof(list));
		return ddl_error_at(
			p, off, -EINVAL,
			"PRIMARY KEY %s%s%s lacks NOT ENFORCED: "
			"Flink does not support ENFORCED primary "
			"keys: write PRIMARY KEY (...) NOT ENFORCED",
			column ? "on column " : "(", list, column ? "" : ")");
	}
	if (t->has_pk) {
		ddl_linecol(p->src, p->len, t->pk_off, &line, &col);
		return ddl_error_at(p, off, -EINVAL,
				    "a table can have only one PRIMARY KEY "
				    "(another one is at %d:%d)",
				    line, col);
	}
	t->has_pk = 1;
	t->pk_name = cname;
	t->pk = cols;
	t->pk_off = off;
	return 0;
}

/* WATERMARK FOR rowtime AS expression */
static int watermark(struct ddl_parser *p)
{
	struct ddl_table *t = p->t;
	size_t off = p->cur.off, from, to;
	char *col, *expr;
	int rc, line, col_no;

	if ((rc = ddl_advance(p)) || (rc = ddl_expect_kw(p, "FOR")) ||
	    (rc = ident(p, &col, "a rowtime column name")))
		return rc;
	/* Flink's grammar reads a.b here, but resolves only a column */
	if (ddl_cur_punct(p, '.'))
		return ddl_error_at(p, p->cur.off, -EINVAL,
				    "the rowtime column of a WATERMARK must be "
				    "a top-level column, not a nested field");
	if ((rc = ddl_expect_kw(p, "AS")) ||
	    (rc = ddl_parse_expr(p, &from, &to)) ||
	    (rc = ddl_span_text(p, from, to, &expr)))
		return rc;
	if (t->wm_col) {
		ddl_linecol(p->src, p->len, t->wm_off, &line, &col_no);
		return ddl_error_at(p, off, -EINVAL,
				    "a table can have only one WATERMARK "
				    "(another one is at %d:%d)",
				    line, col_no);
	}
	t->wm_col = col;
	t->wm_expr = expr;
	t->wm_off = off;
	return 0;
}

/* Add a parsed column, refusing a second one of the same name. */
static int add_column(struct ddl_parser *p, const struct ddl_column *c)
{
	struct ddl_table *t = p->t;
	const struct ddl_column *old = ddl_find_column(t, c->name);
	int rc, line, col;

	if (old) {
		ddl_linecol(p->src, p->len, old->off, &line, &col);
		return ddl_error_at(p, c->off, -EINVAL,
				    "column `%s` is defined twice (first at "
				    "%d:%d)",
				    c->name, line, col);
	}
	/* a count limit is -EFBIG, as DESIGN.md wants for limits */
	if (t->ncols >= DDL_MAX_COLUMNS)
		return ddl_error_at(p, c->off, -EFBIG, "more than %d columns",
				    DDL_MAX_COLUMNS);
	rc = grow(&t->arena, (void **)&t->cols, t->ncols, &t->acols,
		  sizeof(*t->cols));
	if (rc)
		return rc;
	t->cols[t->ncols++] = *c;
	return 0;
}

/*
 * A physical, metadata or computed column.  After the name, AS means a
 * computed column; otherwise a type follows, and then METADATA makes it a
 * metadata column, or a constraint may follow a physical one.  COMMENT
 * may end each kind.
 */
static int column(struct ddl_parser *p)
{
	struct ddl_column c;
	size_t from, to;
	int rc = 0;

	memset(&c, 0, sizeof(c));
	c.off = p->cur.off;
	if ((rc = ident(p, &c.name,
			"a column, WATERMARK or PRIMARY KEY definition")))
		return rc;
	/* `(col1, col2) ... AS SELECT`: names without types, which only a
	 * CTAS writes; the end of the statement tells which it is */
	if (ddl_cur_punct(p, ',') || ddl_cur_punct(p, ')')) {
		if (!p->untyped) {
			p->untyped = c.name;
			p->untyped_off = c.off;
		}
		return 0;
	}
	if (ddl_cur_kw(p, "AS")) {
		c.kind = DDL_COL_COMPUTED;
		if ((rc = ddl_advance(p)) ||
		    (rc = ddl_parse_expr(p, &from, &to)) ||
		    (rc = ddl_span_text(p, from, to, &c.expr)))
			return rc;
	} else {
		if ((rc = ddl_parse_type(p, &c.type)))
			return rc;
		/* METADATA [FROM 'key'] [VIRTUAL]: no key means the name */
		if (ddl_cur_kw(p, "METADATA")) {
			c.kind = DDL_COL_METADATA;
			if ((rc = ddl_advance(p)))
				return rc;
			if (ddl_accept_kw(p, "FROM", &rc) &&
			    (rc || (rc = string(p, &c.meta_key,
						"a metadata key in quotes"))))
				return rc;
			if (rc)
				return rc;
			if (ddl_accept_kw(p, "VIRTUAL", &rc)) {
				if (rc)
					return rc;
				c.is_virtual = 1;
			}
		} else if (ddl_cur_kw(p, "PRIMARY") ||
			   ddl_cur_kw(p, "CONSTRAINT") ||
			   ddl_cur_kw(p, "UNIQUE")) {
			c.kind = DDL_COL_PHYSICAL;
			if ((rc = constraint(p, c.name)))
				return rc;
		}
	}
	if (ddl_accept_kw(p, "COMMENT", &rc) &&
	    (rc || (rc = string(p, &c.comment, "a comment in quotes"))))
		return rc;
	if (rc)
		return rc;
	return add_column(p, &c);
}

/*
 * ( element [, element]* ): columns, the watermark and table constraints,
 * in any order, as Flink's parser takes them.  WATERMARK and PRIMARY are
 * clauses only when FOR / KEY follow, so columns may still be named so.
 */
static int elements(struct ddl_parser *p)
{
	const struct ddl_tok *n;
	int rc;

	if ((rc = ddl_advance(p)))
		return rc;
	for (;;) {
		if ((rc = ddl_peek(p, &n)))
			return rc;
		if (ddl_cur_kw(p, "WATERMARK") && ddl_is_kw(p, n, "FOR"))
			rc = watermark(p);
		else if (ddl_cur_kw(p, "CONSTRAINT") ||
			 (ddl_cur_kw(p, "PRIMARY") && ddl_is_kw(p, n, "KEY")) ||
			 (ddl_cur_kw(p, "UNIQUE") && ddl_is_punct(p, n, '(')))
			rc = constraint(p, NULL);
		else
			rc = column(p);
		if (rc)
			return rc;
		/* no trailing comma: Flink's parser refuses `a INT,)` */
		if (ddl_cur_punct(p, ')'))
			return ddl_advance(p);
		if (!ddl_cur_punct(p, ','))
			return ddl_expected(p, "',' or ')'");
		if ((rc = ddl_advance(p)))
			return rc;
	}
}

/* INTO n BUCKETS */
static int buckets(struct ddl_parser *p)
{
	const char *s;
	size_t i;
	long n = 0;
	int rc;

	if ((rc = ddl_expect_kw(p, "INTO")))
		return rc;
	/* a positive whole number that fits an int, as Flink's Integer */
	s = p->src + p->cur.off;
	if (p->cur.kind != TK_NUMBER)
		return ddl_expected(p, "a number of buckets");
	for (i = 0; i < p->cur.len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return ddl_expected(p, "a whole number of buckets");
		n = n * 10 + (s[i] - '0');
		if (n > 2147483647L)
			return ddl_error_at(p, p->cur.off, -EINVAL,
					    "too many buckets");
	}
	if (n < 1)
		return ddl_error_at(p, p->cur.off, -EINVAL,
				    "the number of buckets must be positive");
	p->t->buckets = n;
	if ((rc = ddl_advance(p)))
		return rc;
	return ddl_expect_kw(p, "BUCKETS");
}

/* DISTRIBUTED BY [HASH | RANGE] (cols) [INTO n BUCKETS] | INTO n BUCKETS */
static int distributed(struct ddl_parser *p)
{
	struct ddl_table *t = p->t;
	int rc;

	t->has_dist = 1;
	t->dist_off = p->cur.off;
	if ((rc = ddl_advance(p)))
		return rc;
	if (!ddl_cur_kw(p, "BY"))
		return ddl_cur_kw(p, "INTO") ? buckets(p)
					     : ddl_expected(p, "BY or INTO");
	if ((rc = ddl_advance(p)))
		return rc;
	/* the algorithm is optional: without it the connector chooses */
	if (ddl_cur_kw(p, "HASH") || ddl_cur_kw(p, "RANGE")) {
		t->dist_kind = ddl_cur_kw(p, "HASH") ? "HASH" : "RANGE";
		if ((rc = ddl_advance(p)))
			return rc;
	}
	if ((rc = ident_list(p, &t->dist_cols, "DISTRIBUTED BY")))
		return rc;
	return ddl_cur_kw(p, "INTO") ? buckets(p) : 0;
}

/*
 * WITH ( 'key' = 'value' [, ...] ): both sides string literals, as Flink
 * requires; () is allowed.  A key given twice is kept twice, as written:
 * Flink takes the last value (with a warning in its log), and so does
 * every reader here (ddl_option_get()).
 */
static int with(struct ddl_parser *p)
{
	struct ddl_table *t = p->t;
	struct ddl_option o;
	int rc;

	t->has_with = 1;
	if ((rc = ddl_advance(p)) || (rc = ddl_expect_punct(p, '(')))
		return rc;
	if (ddl_cur_punct(p, ')'))
		return ddl_advance(p);
	for (;;) {
		o.off = p->cur.off;
		if ((rc = string(p, &o.key,
				 "an option key in quotes ('key' = "
				 "'value')")) ||
		    (rc = ddl_expect_punct(p, '=')) ||
		    (rc = string(p, &o.value, "an option value in quotes")))
			return rc;
		if (t->nopts >= DDL_MAX_OPTIONS)
			return ddl_error_at(p, o.off, -EFBIG,
					    "more than %d options",
					    DDL_MAX_OPTIONS);
		rc = grow(&t->arena, (void **)&t->opts, t->nopts, &t->aopts,
			  sizeof(*t->opts));
		if (rc)
			return rc;
		t->opts[t->nopts++] = o;
		if (!ddl_cur_punct(p, ','))
			break;
		if ((rc = ddl_advance(p)))
			return rc;
	}
	return ddl_expect_punct(p, ')');
}

/* One like option: strategy and feature; Flink's combinations only. */
static int like_option(struct ddl_parser *p)
{
	static const char *const strategies[] = {"INCLUDING", "EXCLUDING",
						 "OVERWRITING"};
	struct ddl_table *t = p->t;
	size_t off = p->cur.off;
	int s, f, i, rc;

	/* the index is the enum value: strategies[] follows its order */
	for (s = 0; s < 3; s++)
		if (ddl_cur_kw(p, strategies[s]))
			break;
	if (s == 3)
		return ddl_expected(p, "INCLUDING, EXCLUDING or OVERWRITING");
	if ((rc = ddl_advance(p)))
		return rc;
	for (f = 0; f < DDL_F_COUNT; f++)
		if (ddl_cur_kw(p, feature_names[f]))
			break;
	if (f == DDL_F_COUNT)
		return ddl_expected(p,
				    "ALL, CONSTRAINTS, DISTRIBUTION, "
				    "GENERATED, METADATA, OPTIONS, PARTITIONS "
				    "or WATERMARKS");
	/* a table has one key, one partitioning, one distribution:
	 * there is nothing to overwrite entry by entry; and ALL would
	 * overwrite them too, so Flink's grammar has no OVERWRITING ALL */
	if (s == DDL_OVERWRITING &&
	    (f == DDL_F_CONSTRAINTS || f == DDL_F_PARTITIONS ||
	     f == DDL_F_DISTRIBUTION || f == DDL_F_ALL))
		return ddl_error_at(p, off, -EINVAL,
				    "OVERWRITING %s is not allowed: %s; use "
				    "INCLUDING or EXCLUDING",
				    feature_names[f],
				    f == DDL_F_ALL
					    ? "only INCLUDING ALL and "
					      "EXCLUDING ALL exist"
					    : "a table has only one");
	/* each feature once (Flink: "can be declared only once"); this
	 * also bounds nlike_opts by DDL_F_COUNT, the array's size */
	for (i = 0; i < t->nlike_opts; i++)
		if (t->like_opts[i].feature == (enum ddl_feature)f)
			return ddl_error_at(p, off, -EINVAL,
					    "like option %s is given twice",
					    feature_names[f]);
	t->like_opts[t->nlike_opts].strategy = (enum ddl_strategy)s;
	t->like_opts[t->nlike_opts].feature = (enum ddl_feature)f;
	t->nlike_opts++;
	return ddl_advance(p);
}

/*
 * LIKE source [( option [option]* )].  Flink's parser separates the
 * options by blanks, its documentation by commas: both are read.  The
 * source is only named here; ddl_merge_like() does the rest.
 */
static int like(struct ddl_parser *p)
{
	struct ddl_table *t = p->t;
	int rc;

	t->has_like = 1;
	if ((rc = ddl_advance(p)))
		return rc;
	ddl_linecol(p->src, p->len, p->cur.off, &t->like_at[0], &t->like_at[1]);
	if ((rc = compound_name(p, t->like_name, &t->like_nparts,
				"the LIKE source table name")))
		return rc;
	if (!ddl_cur_punct(p, '('))
		return 0;
	if ((rc = ddl_advance(p)))
		return rc;
	for (;;) {
		if ((rc = like_option(p)))
			return rc;
		/* Flink's parser takes none, its documentation commas */
		if (ddl_accept_punct(p, ',', &rc)) {
			if (rc)
				return rc;
			continue;
		}
		if (ddl_cur_punct(p, ')'))
			return ddl_advance(p);
	}
}

/* The clauses after the column list, in the only order Flink takes. */
static const char *const clause_kw[] = {"COMMENT", "DISTRIBUTED", "PARTITIONED",
					"USING",   "WITH",	  "LIKE"};
static const char *const clause_name[] = {
	"COMMENT", "DISTRIBUTED BY", "PARTITIONED BY",
	"USING CONNECTION", "WITH", "LIKE"};
#define NCLAUSES 6

/* Parse clause k of clause_kw[], at its keyword. */
static int clause(struct ddl_parser *p, int k)
{
	struct ddl_table *t = p->t;
	int rc;

	switch (k) {
	case 0:
		if ((rc = ddl_advance(p)))
			return rc;
		return string(p, &t->comment, "a comment in quotes");
	case 1:
		return distributed(p);
	case 2:
		t->part_off = p->cur.off;
		if ((rc = ddl_advance(p)) || (rc = ddl_expect_kw(p, "BY")))
			return rc;
		return ident_list(p, &t->parts, "PARTITIONED BY");
	case 3:
		/* Flink 2.x (FLIP-529): the connection is only named here;
		 * the WITH options are read as usual */
		if ((rc = ddl_advance(p)) ||
		    (rc = ddl_expect_kw(p, "CONNECTION")))
			return rc;
		return compound_name(p, t->conn_name, &t->conn_nparts,
				     "the connection name");
	case 4:
		return with(p);
	default:
		return like(p);
	}
}

/* What may still come after clause `next`: for "expected ..." */
static void still_expected(int next, char *out, size_t size)
{
	size_t k = 0;
	int i, n;

	out[0] = '\0';
	for (i = next; i < NCLAUSES; i++) {
		n = snprintf(out + k, size - k, "%s, ", clause_name[i]);
		if (n < 0 || (size_t)n >= size - k)
			return;
		k += (size_t)n;
	}
	snprintf(out + k, size - k, "';' or end of input");
}

/* After the name: columns, clauses, the end; CTAS is refused here. */
static int statement_body(struct ddl_parser *p)
{
	char what[128];
	int next = 0, k, rc;

	/* the column list is optional: CREATE TABLE t LIKE s is enough */
	if (ddl_cur_punct(p, '(') && (rc = elements(p)))
		return rc;
	/* each clause at most once, in order: `next` is the first allowed */
	for (;;) {
		for (k = 0; k < NCLAUSES; k++)
			if (ddl_cur_kw(p, clause_kw[k]))
				break;
		if (k == NCLAUSES)
			break;
		/* a clause seen again, or one that belongs earlier */
		if (k < next)
			return ddl_error_at(p, p->cur.off, -EINVAL,
					    "%s is out of place: the clauses "
					    "after the columns are COMMENT, "
					    "DISTRIBUTED BY, PARTITIONED BY, "
					    "USING CONNECTION, WITH, LIKE, "
					    "each once and in this order",
					    clause_name[k]);
		if ((rc = clause(p, k)))
			return rc;
		next = k + 1;
	}
	/* AS here starts a query: CTAS, which CMF refuses */
	if (ddl_cur_kw(p, "AS"))
		return ddl_error_at(p, p->cur.off, -EOPNOTSUPP,
				    "CREATE TABLE ... AS SELECT (CTAS) is not "
				    "supported in the environment catalog: "
				    "declare the columns and use INSERT INTO");
	if (p->untyped)
		return ddl_error_at(p, p->untyped_off, -EINVAL,
				    "column `%s` has no type: give each "
				    "column its type (a list of bare names "
				    "belongs to CREATE TABLE ... AS SELECT)",
				    p->untyped);
	/* one ';' may end the statement; only comments may follow it */
	if (ddl_cur_punct(p, ';')) {
		if ((rc = ddl_advance(p)))
			return rc;
		if (ddl_cur_punct(p, ';'))
			return ddl_error_at(p, p->cur.off, -EINVAL,
					    "only one ';' may end the "
					    "statement");
		if (p->cur.kind != TK_EOF) {
			char found[96];

			ddl_tok_describe(p, &p->cur, found, sizeof(found));
			return ddl_error_at(p, p->cur.off, -EINVAL,
					    "a table file holds one statement, "
					    "found a second one starting with "
					    "%s",
					    found);
		}
	}
	/* anything else: name the clauses that could still come */
	if (p->cur.kind != TK_EOF) {
		still_expected(next, what, sizeof(what));
		return ddl_expected(p, what);
	}
	return 0;
}

/* Is the token after the current one REPLACE? */
static int next_is_replace(struct ddl_parser *p, int *rc)
{
	const struct ddl_tok *n;

	*rc = ddl_peek(p, &n);
	return !*rc && ddl_is_kw(p, n, "REPLACE");
}

/* CREATE TABLE [IF NOT EXISTS] name, and the refusals around it. */
static int statement(struct ddl_parser *p)
{
	struct ddl_table *t = p->t;
	const struct ddl_tok *n;
	char found[96];
	int rc = 0;

	/* REPLACE TABLE exists only as RTAS: refused at once */
	if (ddl_cur_kw(p, "REPLACE"))
		return ddl_error_at(p, p->cur.off, -EOPNOTSUPP,
				    "REPLACE TABLE ... AS SELECT (RTAS) is not "
				    "supported in the environment catalog");
	if (p->cur.kind == TK_EOF)
		return ddl_error_at(p, p->cur.off, -EINVAL,
				    "expected CREATE TABLE, found end of "
				    "input: the file holds no statement");
	if (!ddl_cur_kw(p, "CREATE"))
		return ddl_expected(p, "CREATE TABLE");
	if ((rc = ddl_advance(p)))
		return rc;
	if (ddl_cur_kw(p, "OR") && next_is_replace(p, &rc))
		return ddl_error_at(p, p->cur.off, -EOPNOTSUPP,
				    "CREATE OR REPLACE TABLE ... AS SELECT "
				    "(RTAS) is not supported in the "
				    "environment catalog");
	if (rc)
		return rc;
	/* a catalog stores permanent tables only */
	if (ddl_cur_kw(p, "TEMPORARY")) {
		if ((rc = ddl_peek(p, &n)))
			return rc;
		if (ddl_is_kw(p, n, "TABLE"))
			return ddl_error_at(p, p->cur.off, -EINVAL,
					    "CREATE TEMPORARY TABLE is not "
					    "supported: the environment "
					    "catalog stores permanent tables; "
					    "remove TEMPORARY");
	}
	/* CREATE VIEW, FUNCTION, CATALOG, ...: not for a table file */
	if (!ddl_cur_kw(p, "TABLE")) {
		if (p->cur.kind == TK_IDENT) {
			ddl_tok_describe(p, &p->cur, found, sizeof(found));
			return ddl_error_at(p, p->cur.off, -EINVAL,
					    "expected TABLE, found %s: a table "
					    "file holds one CREATE TABLE "
					    "statement",
					    found);
		}
		return ddl_expected(p, "TABLE");
	}
	if ((rc = ddl_advance(p)))
		return rc;
	if (ddl_cur_kw(p, "IF")) {
		if ((rc = ddl_advance(p)) || (rc = ddl_expect_kw(p, "NOT")) ||
		    (rc = ddl_expect_kw(p, "EXISTS")))
			return rc;
		t->if_not_exists = 1;
	}
	ddl_linecol(p->src, p->len, p->cur.off, &t->name_at[0], &t->name_at[1]);
	if ((rc = compound_name(p, t->name, &t->nparts, "a table name")) ||
	    (rc = statement_body(p)))
		return rc;
	/* CREATE TABLE t WITH (...) has no column list at all: Flink
	 * takes it (a catalog or format may supply the schema) */
	/*
	 * With LIKE, the key, watermark, partitions and buckets may name
	 * the source's columns: they are checked after the merge.
	 */
	if (t->has_like)
		return 0;
	return ddl_check_refs(t, p, p->err);
}

/* ---- public: parse, free, names, accessors ---------------------------- */

int ddl_parse(struct ddl_table **out, const char *sql, size_t len,
	      struct cmfs_err *err)
{
	struct ddl_parser p;
	struct ddl_table *t = NULL;
	int rc;

	*out = NULL;
	/* the size limit comes first: nothing is read past it */
	if (len > DDL_MAX_INPUT)
		return cmfs_err_set(err, -EFBIG,
				    "the statement is %zu bytes: more than the "
				    "limit of %d",
				    len, DDL_MAX_INPUT);
	if (!sql)
		sql = ""; /* (NULL, 0) is an empty file */
	/* the table itself is malloc'd; everything it holds is in its arena */
	t = calloc(1, sizeof(*t));
	if (!t)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	memset(&p, 0, sizeof(p));
	p.src = sql;
	p.len = len;
	p.t = t;
	p.err = err;
	/* one pass over the bytes first: the lexer may then trust them */
	rc = ddl_utf8_check(&p);
	if (!rc)
		rc = ddl_lex_init(&p, sql, len, t, err);
	if (!rc)
		rc = statement(&p);
	/* a half-built tree lives in its arena: one free undoes it all */
	if (rc) {
		if (rc == -ENOMEM)
			cmfs_err_set(err, rc, "out of memory");
		ddl_table_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* One arena, one struct: freeing is two calls whatever the table held. */
void ddl_table_free(struct ddl_table *t)
{
	if (!t)
		return;
	ddl_arena_release(&t->arena);
	free(t);
}

/* The qualifier rule of the environment catalog, for `what` at `at`. */
static int check_qualifier(char *const *parts, int n, const int *at,
			   const char *env, const char *what,
			   struct cmfs_err *err)
{
	struct buf b = BUF_INIT(4096);
	char cat[128];
	int i, rc;

	/* t, `default`.t, `_env_<env>`.`default`.t: compared exactly */
	snprintf(cat, sizeof(cat), "_env_%s", env);
	if (n == 1 || (n == 2 && !strcmp(parts[0], "default")) ||
	    (n == 3 && !strcmp(parts[0], cat) && !strcmp(parts[1], "default")))
		return 0;
	/* the name as written, quoted and escaped, for the message */
	for (i = 0; i < n; i++)
		if ((i && buf_addc(&b, '.')) || ddl_put_ident(&b, parts[i], 1))
			break;
	rc = cmfs_err_set(err, -EINVAL,
			  "%d:%d: %squalified name %.120s: only the "
			  "environment catalog `%s`.`default` is allowed",
			  at[0], at[1], what, buf_str(&b), cat);
	buf_release(&b);
	return rc;
}

int ddl_check_name(const struct ddl_table *t, const char *env,
		   const char *file_name, struct cmfs_err *err)
{
	const char *name = t->name[t->nparts - 1];
	int rc;

	/* the qualifiers first: a wrong catalog matters more than a name */
	rc = check_qualifier(t->name, t->nparts, t->name_at, env, "", err);
	if (!rc && t->has_like)
		rc = check_qualifier(t->like_name, t->like_nparts, t->like_at,
				     env, "LIKE source: ", err);
	if (rc)
		return rc;
	/* case-sensitive, as Flink's names are: Orders.sql holds Orders */
	if (strcmp(name, file_name))
		return cmfs_err_set(err, -EINVAL,
				    "%d:%d: table name `%.100s` does not match "
				    "the file name `%.100s.sql`",
				    t->name_at[0], t->name_at[1], name,
				    file_name);
	return 0;
}

/* Accessors: the tree stays opaque outside the module. */
const char *ddl_table_name(const struct ddl_table *t)
{
	return t->name[t->nparts - 1];
}

const char *ddl_like_source(const struct ddl_table *t)
{
	return t->has_like ? t->like_name[t->like_nparts - 1] : NULL;
}

/* Options in order; after a merge, the merged list. */
size_t ddl_option_count(const struct ddl_table *t)
{
	return t->nopts;
}

void ddl_option(const struct ddl_table *t, size_t i, const char **key,
		const char **value)
{
	*key = i < t->nopts ? t->opts[i].key : NULL;
	*value = i < t->nopts ? t->opts[i].value : NULL;
}

/* A key written twice has the last value, as in Flink. */
const char *ddl_option_get(const struct ddl_table *t, const char *key)
{
	size_t i;

	for (i = t->nopts; i > 0; i--)
		if (!strcmp(t->opts[i - 1].key, key))
			return t->opts[i - 1].value;
	return NULL;
}

/* All columns, physical, computed and metadata, in schema order. */
size_t ddl_column_count(const struct ddl_table *t)
{
	return t->ncols;
}

void ddl_column(const struct ddl_table *t, size_t i, const char **name,
		const char **type)
{
	*name = i < t->ncols ? t->cols[i].name : NULL;
	*type = i < t->ncols ? t->cols[i].type : NULL;
}
