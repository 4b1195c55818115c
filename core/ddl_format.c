/*
 * ddl_format.c - a parsed CREATE TABLE written out again: the dump and
 * the canonical formatter (ddl.h).
 *
 * The dump is for tests: one line per item, in a fixed order, so a diff
 * shows what changed.  The formatter writes SQL that parses back to the
 * same tree; both quote every name and escape every string.
 */
#include "ddl_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* `a`.`b`.`c` */
static int put_name(struct buf *b, char *const *parts, int n, int esc)
{
	int i, rc = 0;

	for (i = 0; i < n && !rc; i++) {
		if (i)
			rc = buf_addc(b, '.');
		if (!rc)
			rc = ddl_put_ident(b, parts[i], esc);
	}
	return rc;
}

/* `a`, `b` */
static int put_list(struct buf *b, const struct ddl_strv *sv, int esc)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < sv->n && !rc; i++) {
		if (i)
			rc = buf_adds(b, ", ");
		if (!rc)
			rc = ddl_put_ident(b, sv->v[i], esc);
	}
	return rc;
}

/* HASH(`a`) INTO 4 BUCKETS, (`a`), INTO 4 BUCKETS */
static int put_distribution(struct buf *b, const struct ddl_table *t, int esc)
{
	int rc = 0;

	if (t->dist_cols.n) {
		if (t->dist_kind)
			rc = buf_adds(b, t->dist_kind);
		if (!rc)
			rc = buf_addc(b, '(');
		if (!rc)
			rc = put_list(b, &t->dist_cols, esc);
		if (!rc)
			rc = buf_addc(b, ')');
		if (!rc && t->buckets)
			rc = buf_addc(b, ' ');
	}
	if (!rc && t->buckets)
		rc = buf_printf(b, "INTO %ld BUCKETS", t->buckets);
	return rc;
}

/* (INCLUDING ALL, OVERWRITING OPTIONS) or nothing */
static int put_like_opts(struct buf *b, const struct ddl_table *t)
{
	int i, rc = 0;

	if (!t->nlike_opts)
		return 0;
	rc = buf_adds(b, " (");
	for (i = 0; i < t->nlike_opts && !rc; i++)
		rc = buf_printf(b, "%s%s %s", i ? " " : "",
				ddl_strategy_name(t->like_opts[i].strategy),
				ddl_feature_name(t->like_opts[i].feature));
	return rc ? rc : buf_addc(b, ')');
}

/*
 * column: `name` kind [type] [from='key'] [virtual] [comment='..'] [AS
 * expr]: the expression, free text, comes last.
 */
static int dump_column(struct buf *b, const struct ddl_column *c)
{
	static const char *const kinds[] = {"physical", "computed", "metadata"};
	int rc;

	if ((rc = buf_adds(b, "column: ")) ||
	    (rc = ddl_put_ident(b, c->name, 1)) ||
	    (rc = buf_printf(b, " %s", kinds[c->kind])))
		return rc;
	if (c->type &&
	    ((rc = buf_addc(b, ' ')) || (rc = ddl_put_text(b, c->type, 1))))
		return rc;
	if (c->meta_key && ((rc = buf_adds(b, " from=")) ||
			    (rc = ddl_put_string(b, c->meta_key, 1))))
		return rc;
	if (c->is_virtual && (rc = buf_adds(b, " virtual")))
		return rc;
	if (c->comment && ((rc = buf_adds(b, " comment=")) ||
			   (rc = ddl_put_string(b, c->comment, 1))))
		return rc;
	if (c->expr &&
	    ((rc = buf_adds(b, " AS ")) || (rc = ddl_put_text(b, c->expr, 1))))
		return rc;
	return buf_addc(b, '\n');
}

/* Lines for absent features are left out, so most dumps are short. */
int ddl_dump(struct buf *b, const struct ddl_table *t)
{
	size_t i;
	int rc;

	if ((rc = buf_adds(b, "table: ")) ||
	    (rc = put_name(b, t->name, t->nparts, 1)) ||
	    (rc = buf_addc(b, '\n')))
		return rc;
	if (t->if_not_exists && (rc = buf_adds(b, "if-not-exists\n")))
		return rc;
	for (i = 0; i < t->ncols; i++)
		if ((rc = dump_column(b, &t->cols[i])))
			return rc;
	/* a column-level key is dumped like a table-level one */
	if (t->has_pk) {
		if ((rc = buf_adds(b, "primary-key: ")) ||
		    (rc = put_list(b, &t->pk, 1)))
			return rc;
		if (t->pk_name && ((rc = buf_adds(b, " constraint=")) ||
				   (rc = ddl_put_ident(b, t->pk_name, 1))))
			return rc;
		if ((rc = buf_addc(b, '\n')))
			return rc;
	}
	if (t->wm_col &&
	    ((rc = buf_adds(b, "watermark: ")) ||
	     (rc = ddl_put_ident(b, t->wm_col, 1)) ||
	     (rc = buf_adds(b, " AS ")) ||
	     (rc = ddl_put_text(b, t->wm_expr, 1)) || (rc = buf_addc(b, '\n'))))
		return rc;
	/* table-level items, in the order of the CREATE TABLE clauses */
	if (t->comment && ((rc = buf_adds(b, "comment: ")) ||
			   (rc = ddl_put_string(b, t->comment, 1)) ||
			   (rc = buf_addc(b, '\n'))))
		return rc;
	if (t->has_dist &&
	    ((rc = buf_adds(b, "distribution: ")) ||
	     (rc = put_distribution(b, t, 1)) || (rc = buf_addc(b, '\n'))))
		return rc;
	if (t->parts.n &&
	    ((rc = buf_adds(b, "partitioned-by: ")) ||
	     (rc = put_list(b, &t->parts, 1)) || (rc = buf_addc(b, '\n'))))
		return rc;
	if (t->conn_nparts &&
	    ((rc = buf_adds(b, "connection: ")) ||
	     (rc = put_name(b, t->conn_name, t->conn_nparts, 1)) ||
	     (rc = buf_addc(b, '\n'))))
		return rc;
	for (i = 0; i < t->nopts; i++)
		if ((rc = buf_adds(b, "option: ")) ||
		    (rc = ddl_put_string(b, t->opts[i].key, 1)) ||
		    (rc = buf_adds(b, " = ")) ||
		    (rc = ddl_put_string(b, t->opts[i].value, 1)) ||
		    (rc = buf_addc(b, '\n')))
			return rc;
	if (t->has_like &&
	    ((rc = buf_adds(b, "like: ")) ||
	     (rc = put_name(b, t->like_name, t->like_nparts, 1)) ||
	     (rc = put_like_opts(b, t)) ||
	     (t->merged && (rc = buf_adds(b, " merged"))) ||
	     (rc = buf_addc(b, '\n'))))
		return rc;
	return 0;
}

/* One element of the column list, as SQL. */
static int format_column(struct buf *b, const struct ddl_column *c)
{
	int rc;

	if ((rc = buf_adds(b, "  ")) || (rc = ddl_put_ident(b, c->name, 0)))
		return rc;
	if (c->kind == DDL_COL_COMPUTED)
		rc = buf_printf(b, " AS %s", c->expr);
	else
		rc = buf_printf(b, " %s", c->type);
	if (!rc && c->kind == DDL_COL_METADATA) {
		rc = buf_adds(b, " METADATA");
		if (!rc && c->meta_key && !(rc = buf_adds(b, " FROM ")))
			rc = ddl_put_string(b, c->meta_key, 0);
		if (!rc && c->is_virtual)
			rc = buf_adds(b, " VIRTUAL");
	}
	if (!rc && c->comment && !(rc = buf_adds(b, " COMMENT ")))
		rc = ddl_put_string(b, c->comment, 0);
	return rc;
}

/*
 * Column constraints come out as one table constraint, metadata and
 * comments as written, expressions as their kept text; a merged table
 * loses its LIKE clause, since it now holds what the source gave it.
 */
int ddl_format(struct buf *b, const struct ddl_table *t)
{
	const char *sep = "";
	size_t i;
	int rc;

	if ((rc = buf_printf(b, "CREATE TABLE %s",
			     t->if_not_exists ? "IF NOT EXISTS " : "")) ||
	    (rc = put_name(b, t->name, t->nparts, 0)))
		return rc;
	/* no column list at all when there is nothing to put in it */
	if (t->ncols || t->wm_col || t->has_pk) {
		if ((rc = buf_adds(b, " (")))
			return rc;
		for (i = 0; i < t->ncols; i++, sep = ",")
			if ((rc = buf_printf(b, "%s\n", sep)) ||
			    (rc = format_column(b, &t->cols[i])))
				return rc;
		if (t->wm_col) {
			if ((rc = buf_printf(b, "%s\n  WATERMARK FOR ", sep)) ||
			    (rc = ddl_put_ident(b, t->wm_col, 0)) ||
			    (rc = buf_printf(b, " AS %s", t->wm_expr)))
				return rc;
			sep = ",";
		}
		if (t->has_pk) {
			if ((rc = buf_printf(b, "%s\n  ", sep)))
				return rc;
			if (t->pk_name &&
			    ((rc = buf_adds(b, "CONSTRAINT ")) ||
			     (rc = ddl_put_ident(b, t->pk_name, 0)) ||
			     (rc = buf_addc(b, ' '))))
				return rc;
			if ((rc = buf_adds(b, "PRIMARY KEY (")) ||
			    (rc = put_list(b, &t->pk, 0)) ||
			    (rc = buf_adds(b, ") NOT ENFORCED")))
				return rc;
		}
		if ((rc = buf_adds(b, "\n)")))
			return rc;
	}
	if (t->comment && ((rc = buf_adds(b, "\nCOMMENT ")) ||
			   (rc = ddl_put_string(b, t->comment, 0))))
		return rc;
	if (t->has_dist &&
	    ((rc = buf_adds(b, t->dist_cols.n ? "\nDISTRIBUTED BY "
					      : "\nDISTRIBUTED ")) ||
	     (rc = put_distribution(b, t, 0))))
		return rc;
	if (t->parts.n &&
	    ((rc = buf_adds(b, "\nPARTITIONED BY (")) ||
	     (rc = put_list(b, &t->parts, 0)) || (rc = buf_addc(b, ')'))))
		return rc;
	if (t->conn_nparts &&
	    ((rc = buf_adds(b, "\nUSING CONNECTION ")) ||
	     (rc = put_name(b, t->conn_name, t->conn_nparts, 0))))
		return rc;
	if (t->has_with || t->nopts) {
		if ((rc = buf_adds(b, "\nWITH (")))
			return rc;
		for (i = 0; i < t->nopts; i++)
			if ((rc = buf_adds(b, i ? ",\n  " : "\n  ")) ||
			    (rc = ddl_put_string(b, t->opts[i].key, 0)) ||
			    (rc = buf_adds(b, " = ")) ||
			    (rc = ddl_put_string(b, t->opts[i].value, 0)))
				return rc;
		if ((rc = buf_adds(b, t->nopts ? "\n)" : ")")))
			return rc;
	}
	/* an unmerged LIKE is kept, options and all */
	if (t->has_like && !t->merged &&
	    ((rc = buf_adds(b, "\nLIKE ")) ||
	     (rc = put_name(b, t->like_name, t->like_nparts, 0)) ||
	     (rc = put_like_opts(b, t))))
		return rc;
	return buf_adds(b, ";\n");
}
