/*
 * ddl_type.c - Flink SQL's data types, as a CREATE TABLE statement writes
 * them (ddl_parse_type(), ddl_int.h).
 *
 * Types are parsed fully and rewritten as canonical text: keywords in
 * upper case, synonyms folded (INTEGER -> INT, DEC/NUMERIC -> DECIMAL,
 * CHARACTER VARYING -> VARCHAR, DOUBLE PRECISION -> DOUBLE, REAL -> FLOAT,
 * ROW(...) -> ROW<...>, `t ARRAY` -> ARRAY<t>, TIMESTAMP WITH LOCAL TIME
 * ZONE -> TIMESTAMP_LTZ, WITHOUT TIME ZONE dropped), one space after each
 * comma, field names back-quoted as written, NOT NULL kept and NULL
 * dropped.  Precisions and lengths are checked against Flink's ranges.
 *
 * Each type function appends canonical text to a buffer and consumes the
 * tokens it read.  Type names are keywords compared without case, so
 * `Map<STRING, BIGINT>` and `map<string, bigint>` give the same text;
 * field names keep their case and are written back-quoted.  Nesting
 * counts against DDL_MAX_DEPTH (ddl_enter()).
 */
#include "ddl_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * An optional "(n)" after a type name, checked against [lo, hi].  *out is
 * -1 when absent.
 */
static int opt_len(struct ddl_parser *p, const char *type, long lo, long hi,
		   long *out)
{
	size_t off;
	int rc;

	*out = -1;
	if (!ddl_cur_punct(p, '('))
		return 0;
	rc = ddl_advance(p);
	if (rc)
		return rc;
	off = p->cur.off;
	rc = ddl_read_uint(p, out, "a length or precision");
	if (rc)
		return rc;
	/* the string and binary types count characters or bytes */
	if (*out < lo || *out > hi)
		return ddl_error_at(p, off, -EINVAL,
				    "%s %s must be between %ld and %ld, found "
				    "%ld",
				    type,
				    hi == INT_MAX ? "length" : "precision", lo,
				    hi, *out);
	return ddl_expect_punct(p, ')');
}

/* Append NAME or NAME(n). */
static int put_len(struct buf *b, const char *name, long n)
{
	if (n < 0)
		return buf_adds(b, name);
	return buf_printf(b, "%s(%ld)", name, n);
}

/* [WITHOUT TIME ZONE]; sets *ltz for WITH LOCAL TIME ZONE if allowed. */
static int time_zone(struct ddl_parser *p, int allow_ltz, int *ltz)
{
	int rc = 0;

	*ltz = 0;
	/* WITHOUT TIME ZONE is the default: accepted and not written */
	if (ddl_accept_kw(p, "WITHOUT", &rc)) {
		if (rc || (rc = ddl_expect_kw(p, "TIME")))
			return rc;
		return ddl_expect_kw(p, "ZONE");
	}
	if (!allow_ltz || !ddl_cur_kw(p, "WITH"))
		return 0;
	/* Flink has no zoned TIMESTAMP: say what to use instead */
	if (ddl_next_kw(p, "TIME", &rc))
		return ddl_error_at(p, p->cur.off, -EINVAL,
				    "TIMESTAMP WITH TIME ZONE is not supported "
				    "by Flink: use TIMESTAMP_LTZ");
	if (rc || !ddl_next_kw(p, "LOCAL", &rc))
		return rc; /* some other WITH (JSON's WITH WRAPPER) */
	if ((rc = ddl_advance(p)) || (rc = ddl_expect_kw(p, "LOCAL")) ||
	    (rc = ddl_expect_kw(p, "TIME")) || (rc = ddl_expect_kw(p, "ZONE")))
		return rc;
	*ltz = 1;
	return 0;
}

/* Types nest (ARRAY<ROW<a MAP<...>>>): the full grammar is recursive. */
static int type_rec(struct ddl_parser *p, struct buf *out);

/* Fields of ROW<...> or ROW(...), up to the closing `close`. */
static int row_fields(struct ddl_parser *p, struct buf *b, char close)
{
	struct ddl_strv names = {0};
	char *name, *comment;
	size_t off;
	int rc;

	if (ddl_cur_punct(p, close))
		return ddl_advance(p); /* ROW<>: no fields */
	/* name type [NOT NULL] ['comment'], separated by commas */
	for (;;) {
		if (p->cur.kind != TK_IDENT && p->cur.kind != TK_QIDENT)
			return ddl_expected(p, "a ROW field name");
		off = p->cur.off;
		if ((rc = ddl_name_value(p, &p->cur, &name)) ||
		    (rc = ddl_advance(p)))
			return rc;
		/* Flink's RowType: "Field names must be unique" (exactly) */
		if (ddl_strv_find(&names, name) >= 0)
			return ddl_error_at(p, off, -EINVAL,
					    "field `%s` appears twice in the "
					    "ROW: field names must be unique",
					    name);
		if ((rc = ddl_strv_push(&p->t->arena, &names, name)))
			return rc;
		if ((rc = ddl_put_ident(b, name, 0)) ||
		    (rc = buf_addc(b, ' ')) || (rc = type_rec(p, b)))
			return rc;
		if (p->cur.kind == TK_STRING) {
			/* ROW<a INT 'a comment'> */
			if ((rc = ddl_string_value(p, &p->cur, &comment)) ||
			    (rc = ddl_advance(p)) || (rc = buf_addc(b, ' ')) ||
			    (rc = ddl_put_string(b, comment, 0)))
				return rc;
		}
		if (ddl_cur_punct(p, close))
			return ddl_advance(p);
		if (!ddl_cur_punct(p, ','))
			return ddl_expected(p, close == '>' ? "',' or '>'"
							    : "',' or ')'");
		if ((rc = ddl_advance(p)) || (rc = buf_adds(b, ", ")))
			return rc;
	}
}

/* RAW('class', 'serializer snapshot') */
static int raw_type(struct ddl_parser *p, struct buf *b)
{
	static const char *const what[] = {"a class name in quotes",
					   "a serializer snapshot in quotes"};
	char *s;
	int rc, i;

	if ((rc = ddl_expect_punct(p, '(')) || (rc = buf_adds(b, "RAW(")))
		return rc;
	for (i = 0; i < 2; i++) {
		if (i && ((rc = ddl_expect_punct(p, ',')) ||
			  (rc = buf_adds(b, ", "))))
			return rc;
		if (p->cur.kind != TK_STRING)
			return ddl_expected(p, what[i]);
		if ((rc = ddl_string_value(p, &p->cur, &s)) ||
		    (rc = ddl_advance(p)) || (rc = ddl_put_string(b, s, 0)))
			return rc;
	}
	if ((rc = ddl_expect_punct(p, ')')))
		return rc;
	return buf_addc(b, ')');
}

/* The unit keyword at the current token, or NULL. */
static const char *interval_unit(struct ddl_parser *p)
{
	static const char *const units[] = {"YEAR", "MONTH",  "DAY",
					    "HOUR", "MINUTE", "SECOND"};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (ddl_cur_kw(p, units[i]))
			return units[i];
	return NULL;
}

/*
 * INTERVAL types, as Flink lists them: YEAR[(p)] [TO MONTH], MONTH,
 * DAY[(p1)] [TO HOUR | MINUTE | SECOND[(p2)]], HOUR [TO MINUTE |
 * SECOND[(p2)]], MINUTE [TO SECOND[(p2)]], SECOND[(p2)].
 */
static int interval_type(struct ddl_parser *p, struct buf *b)
{
	const char *u = interval_unit(p), *to;
	long prec;
	int rc;

	if (!u)
		return ddl_expected(p, "an interval unit (YEAR, MONTH, DAY, "
				       "HOUR, MINUTE or SECOND)");
	if ((rc = ddl_advance(p)) || (rc = buf_adds(b, "INTERVAL ")))
		return rc;
	/* only YEAR, DAY and SECOND take a precision, within these ranges */
	prec = -1;
	if (!strcmp(u, "YEAR"))
		rc = opt_len(p, "INTERVAL YEAR", 1, 4, &prec);
	else if (!strcmp(u, "DAY"))
		rc = opt_len(p, "INTERVAL DAY", 1, 6, &prec);
	else if (!strcmp(u, "SECOND"))
		rc = opt_len(p, "INTERVAL SECOND", 0, 9, &prec);
	if (rc || (rc = put_len(b, u, prec)))
		return rc;
	if (!strcmp(u, "MONTH") || !strcmp(u, "SECOND") || !ddl_cur_kw(p, "TO"))
		return 0;
	if ((rc = ddl_advance(p)))
		return rc;
	/* the end unit must be smaller: YEAR TO MONTH, DAY TO SECOND, ... */
	to = interval_unit(p);
	if (!to || (!strcmp(u, "YEAR") && strcmp(to, "MONTH")) ||
	    (!strcmp(u, "DAY") &&
	     (!strcmp(to, "YEAR") || !strcmp(to, "MONTH") ||
	      !strcmp(to, "DAY"))) ||
	    (!strcmp(u, "HOUR") && strcmp(to, "MINUTE") &&
	     strcmp(to, "SECOND")) ||
	    (!strcmp(u, "MINUTE") && strcmp(to, "SECOND")))
		return ddl_expected(p, !strcmp(u, "YEAR")
					       ? "MONTH"
					       : "a smaller interval unit");
	if ((rc = ddl_advance(p)))
		return rc;
	prec = -1;
	if (!strcmp(to, "SECOND") &&
	    (rc = opt_len(p, "INTERVAL SECOND", 0, 9, &prec)))
		return rc;
	if ((rc = buf_adds(b, " TO ")))
		return rc;
	return put_len(b, to, prec);
}

/*
 * The base type (no nullability, no postfix ARRAY) at the current token.
 * Parameterised types come first, each with its synonyms; the types that
 * take no parameters are a table at the end.  Anything else is not a
 * type: Flink's DDL has no user-defined type names.
 */
static int base_type(struct ddl_parser *p, struct buf *b)
{
	long n = -1, s = -1;
	int rc = 0, ltz;

	if (p->cur.kind != TK_IDENT)
		return ddl_expected(p, "a data type");
	if (ddl_cur_kw(p, "CHAR") || ddl_cur_kw(p, "CHARACTER") ||
	    ddl_cur_kw(p, "BINARY")) {
		int bin = ddl_cur_kw(p, "BINARY"), var;

		/* CHARACTER VARYING is VARCHAR, BINARY VARYING VARBINARY */
		if ((rc = ddl_advance(p)))
			return rc;
		var = ddl_accept_kw(p, "VARYING", &rc);
		if (rc)
			return rc;
		if ((rc = opt_len(p, bin ? "BINARY" : "CHAR", 1, INT_MAX, &n)))
			return rc;
		return put_len(b,
			       bin ? (var ? "VARBINARY" : "BINARY")
				   : (var ? "VARCHAR" : "CHAR"),
			       n);
	}
	if (ddl_cur_kw(p, "VARCHAR") || ddl_cur_kw(p, "VARBINARY")) {
		const char *name =
			ddl_cur_kw(p, "VARCHAR") ? "VARCHAR" : "VARBINARY";

		if ((rc = ddl_advance(p)) ||
		    (rc = opt_len(p, name, 1, INT_MAX, &n)))
			return rc;
		return put_len(b, name, n);
	}
	if (ddl_cur_kw(p, "DECIMAL") || ddl_cur_kw(p, "DEC") ||
	    ddl_cur_kw(p, "NUMERIC")) {
		size_t off;

		/* DECIMAL [(precision [, scale])], 1 <= p <= 38, 0 <= s <= p */
		if ((rc = ddl_advance(p)))
			return rc;
		if (ddl_cur_punct(p, '(')) {
			if ((rc = ddl_advance(p)))
				return rc;
			off = p->cur.off;
			if ((rc = ddl_read_uint(p, &n, "a precision")))
				return rc;
			if (n < 1 || n > 38)
				return ddl_error_at(p, off, -EINVAL,
						    "DECIMAL precision must be "
						    "between 1 and 38, found "
						    "%ld",
						    n);
			if (ddl_cur_punct(p, ',')) {
				if ((rc = ddl_advance(p)))
					return rc;
				off = p->cur.off;
				if ((rc = ddl_read_uint(p, &s, "a scale")))
					return rc;
				if (s > n)
					return ddl_error_at(
						p, off, -EINVAL,
						"DECIMAL scale must be between "
						"0 and the precision %ld, "
						"found %ld",
						n, s);
			}
			if ((rc = ddl_expect_punct(p, ')')))
				return rc;
		}
		if (n < 0)
			return buf_adds(b, "DECIMAL");
		if (s < 0)
			return buf_printf(b, "DECIMAL(%ld)", n);
		return buf_printf(b, "DECIMAL(%ld, %ld)", n, s);
	}
	if (ddl_cur_kw(p, "TIME")) {
		if ((rc = ddl_advance(p)) ||
		    (rc = opt_len(p, "TIME", 0, 9, &n)) ||
		    (rc = time_zone(p, 0, &ltz)))
			return rc;
		return put_len(b, "TIME", n);
	}
	/* TIMESTAMP(3) WITH LOCAL TIME ZONE is written TIMESTAMP_LTZ(3) */
	if (ddl_cur_kw(p, "TIMESTAMP")) {
		if ((rc = ddl_advance(p)) ||
		    (rc = opt_len(p, "TIMESTAMP", 0, 9, &n)) ||
		    (rc = time_zone(p, 1, &ltz)))
			return rc;
		return put_len(b, ltz ? "TIMESTAMP_LTZ" : "TIMESTAMP", n);
	}
	if (ddl_cur_kw(p, "TIMESTAMP_LTZ")) {
		if ((rc = ddl_advance(p)) ||
		    (rc = opt_len(p, "TIMESTAMP_LTZ", 0, 9, &n)))
			return rc;
		return put_len(b, "TIMESTAMP_LTZ", n);
	}
	/* DOUBLE PRECISION is the standard's spelling of DOUBLE */
	if (ddl_cur_kw(p, "DOUBLE")) {
		if ((rc = ddl_advance(p)))
			return rc;
		ddl_accept_kw(p, "PRECISION", &rc);
		return rc ? rc : buf_adds(b, "DOUBLE");
	}
	if (ddl_cur_kw(p, "INTERVAL")) {
		if ((rc = ddl_advance(p)))
			return rc;
		return interval_type(p, b);
	}
	/* Flink's collection syntax; `INT ARRAY` is handled in type_rec */
	if (ddl_cur_kw(p, "ARRAY") || ddl_cur_kw(p, "MULTISET")) {
		const char *name =
			ddl_cur_kw(p, "ARRAY") ? "ARRAY" : "MULTISET";

		if ((rc = ddl_advance(p)) || (rc = ddl_expect_punct(p, '<')) ||
		    (rc = buf_printf(b, "%s<", name)) ||
		    (rc = type_rec(p, b)) || (rc = ddl_expect_punct(p, '>')))
			return rc;
		return buf_addc(b, '>');
	}
	if (ddl_cur_kw(p, "MAP")) {
		if ((rc = ddl_advance(p)) || (rc = ddl_expect_punct(p, '<')) ||
		    (rc = buf_adds(b, "MAP<")) || (rc = type_rec(p, b)) ||
		    (rc = ddl_expect_punct(p, ',')) ||
		    (rc = buf_adds(b, ", ")) || (rc = type_rec(p, b)) ||
		    (rc = ddl_expect_punct(p, '>')))
			return rc;
		return buf_addc(b, '>');
	}
	/* ROW<...> is Flink's form, ROW(...) the standard's: same type */
	if (ddl_cur_kw(p, "ROW")) {
		char close;

		if ((rc = ddl_advance(p)))
			return rc;
		if (ddl_cur_punct(p, '<'))
			close = '>';
		else if (ddl_cur_punct(p, '('))
			close = ')';
		else
			return ddl_expected(p, "'<' or '('");
		if ((rc = ddl_advance(p)) || (rc = buf_adds(b, "ROW<")) ||
		    (rc = row_fields(p, b, close)))
			return rc;
		return buf_addc(b, '>');
	}
	/* RAW('class', 'snapshot'): an opaque Java type */
	if (ddl_cur_kw(p, "RAW")) {
		if ((rc = ddl_advance(p)))
			return rc;
		return raw_type(p, b);
	}
	{
		/* the types that take no parameters */
		static const char *const plain[][2] = {
			{"STRING", "STRING"},	  {"BYTES", "BYTES"},
			{"BOOLEAN", "BOOLEAN"},	  {"TINYINT", "TINYINT"},
			{"SMALLINT", "SMALLINT"}, {"INT", "INT"},
			{"INTEGER", "INT"},	  {"BIGINT", "BIGINT"},
			{"FLOAT", "FLOAT"},	  {"REAL", "FLOAT"},
			{"DATE", "DATE"},	  {"VARIANT", "VARIANT"},
		};
		size_t i;

		for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
			if (ddl_cur_kw(p, plain[i][0])) {
				if ((rc = ddl_advance(p)))
					return rc;
				return buf_adds(b, plain[i][1]);
			}
		}
	}
	return ddl_expected(p, "a data type");
}

/* [NOT NULL | NULL] after a type. */
static int nullability(struct ddl_parser *p, struct buf *b)
{
	int rc = 0;

	/* NOT alone is not ours: it may be NOT ENFORCED further on */
	if (ddl_cur_kw(p, "NOT") && ddl_next_kw(p, "NULL", &rc)) {
		if ((rc = ddl_advance(p)) || (rc = ddl_advance(p)))
			return rc;
		return buf_adds(b, " NOT NULL");
	}
	if (rc)
		return rc;
	if (ddl_accept_kw(p, "NULL", &rc))
		return rc; /* nullable is the default: say nothing */
	return 0;
}

/*
 * A full type: base, nullability, then any number of postfix ARRAY or
 * MULTISET (`INT NOT NULL ARRAY` is ARRAY<INT NOT NULL>).  The text goes
 * to a scratch buffer first because a postfix wraps what came before.
 */
static int type_rec(struct ddl_parser *p, struct buf *out)
{
	struct buf cur = BUF_INIT(DDL_MAX_TEXT), wrap = BUF_INIT(DDL_MAX_TEXT);
	const char *name;
	int rc, wraps = 0;

	if ((rc = ddl_enter(p)))
		return rc;
	if ((rc = base_type(p, &cur)) || (rc = nullability(p, &cur)))
		goto out;
	while (ddl_cur_kw(p, "ARRAY") || ddl_cur_kw(p, "MULTISET")) {
		name = ddl_cur_kw(p, "ARRAY") ? "ARRAY" : "MULTISET";
		/* each wrap is a level, as in the canonical ARRAY<...> */
		if ((rc = ddl_enter(p)))
			goto out;
		wraps++;
		if ((rc = ddl_advance(p)))
			goto out;
		buf_reset(&wrap);
		if ((rc = buf_printf(&wrap, "%s<%s>", name, buf_str(&cur))))
			goto out;
		buf_reset(&cur);
		if ((rc = buf_adds(&cur, buf_str(&wrap))) ||
		    (rc = nullability(p, &cur)))
			goto out;
	}
	rc = buf_adds(out, buf_str(&cur));
out:
	buf_release(&cur);
	buf_release(&wrap);
	p->depth -= 1 + wraps;
	return rc;
}

/*
 * The entry point for columns, ROW fields, CAST and RETURNING: the text
 * is built in a capped scratch buffer and copied into the arena.
 */
int ddl_parse_type(struct ddl_parser *p, char **out)
{
	struct buf b = BUF_INIT(DDL_MAX_TEXT);
	int rc;

	rc = type_rec(p, &b);
	if (rc == -EFBIG)
		rc = ddl_error_at(p, p->cur.off, -EFBIG, "type text too long");
	if (!rc) {
		*out = ddl_arena_strdup(&p->t->arena, buf_str(&b));
		if (!*out)
			rc = -ENOMEM;
	}
	buf_release(&b);
	return rc;
}
