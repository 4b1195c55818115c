/*
 * ddl_expr.c - expressions of Flink SQL, as far as a CREATE TABLE
 * statement uses them (data types: ddl_type.c).
 *
 * Expressions (computed columns, watermarks) need no tree: the parser
 * walks them with the usual precedence levels (OR, AND, NOT, comparison
 * and predicates, + - ||, * / %, unary sign, postfix [] and .field,
 * primaries) to find where they end and to reject what is not an
 * expression; the caller keeps the source text.  Function calls accept
 * the special argument forms of the SQL standard (EXTRACT(x FROM y),
 * TRIM(BOTH ' ' FROM s), POSITION(a IN b), SUBSTRING(s FROM i FOR n),
 * CEIL(t TO DAY), JSON_VALUE(... RETURNING type DEFAULT x ON ERROR)).
 * Subqueries are refused, as Flink refuses them in computed columns.
 *
 * Every recursive entry counts against DDL_MAX_DEPTH, so no input can run
 * the stack out; long flat chains (a + b + c ...) are loops.
 */
#include "ddl_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is the current token `a` immediately followed (no blank) by `b`? */
static int punct2(struct ddl_parser *p, char a, char b, int *rc)
{
	const struct ddl_tok *n;

	if (!ddl_cur_punct(p, a))
		return 0;
	*rc = ddl_peek(p, &n);
	if (*rc)
		return 0;
	return ddl_is_punct(p, n, b) && n->gap == 0;
}

/*
 * The precedence ladder, loosest first: OR, AND, NOT, predicates
 * (comparison, IS, BETWEEN, LIKE, SIMILAR TO, IN), + - ||, * / %, unary
 * sign, postfix ([i], .field, .method()), primaries.  Each level loops
 * over its operators and calls the next level for the operands; only
 * parentheses, calls, NOT and signs recurse, and each such entry counts
 * against the depth limit through expr_or() or ddl_enter().
 */

static int expr_or(struct ddl_parser *p);  /* the whole ladder */
static int expr_add(struct ddl_parser *p); /* operands of predicates */

/* Is `t` one of the n keywords `words`? */
static int kw_in(const struct ddl_parser *p, const struct ddl_tok *t,
		 const char *const *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ddl_is_kw(p, t, words[i]))
			return 1;
	return 0;
}

/*
 * Words that cannot begin an operand: seeing one where an operand belongs
 * means the expression is garbage (or empty), not a column reference.
 */
static int stop_word(struct ddl_parser *p)
{
	static const char *const words[] = {
		"AND",	   "OR",	"IS",	 "IN",	   "BETWEEN", "LIKE",
		"SIMILAR", "THEN",	"WHEN",	 "ELSE",   "END",     "AS",
		"FROM",	   "FOR",	"TO",	 "ESCAPE", "WHERE",   "BY",
		"ON",	   "PLACING",	"UNION", "ORDER",  "GROUP",   "HAVING",
		"JOIN",	   "RETURNING",
	};

	return kw_in(p, &p->cur, words, sizeof(words) / sizeof(words[0]));
}

/* SELECT, VALUES or WITH: the start of a query. */
static int is_subquery_word(struct ddl_parser *p, const struct ddl_tok *t)
{
	return ddl_is_kw(p, t, "SELECT") || ddl_is_kw(p, t, "VALUES") ||
	       ddl_is_kw(p, t, "WITH");
}

/*
 * Flink refuses a query inside a computed column or a watermark; saying
 * so here is clearer than "expected an expression, found SELECT".
 */
static int subquery(struct ddl_parser *p, size_t off)
{
	return ddl_error_at(p, off, -EINVAL,
			    "subqueries are not allowed in a CREATE TABLE "
			    "expression");
}

/* Units of interval literals (plural forms too, as Calcite reads them). */
static int literal_unit(const struct ddl_parser *p, const struct ddl_tok *t)
{
	static const char *const units[] = {
		"YEAR",	       "YEARS",	       "QUARTER",     "QUARTERS",
		"MONTH",       "MONTHS",       "WEEK",	      "WEEKS",
		"DAY",	       "DAYS",	       "HOUR",	      "HOURS",
		"MINUTE",      "MINUTES",      "SECOND",      "SECONDS",
		"MILLISECOND", "MILLISECONDS", "MICROSECOND", "MICROSECONDS",
		"NANOSECOND",  "NANOSECONDS",
	};

	return kw_in(p, t, units, sizeof(units) / sizeof(units[0]));
}

/* unit [(p)] after an interval literal or its TO */
static int literal_unit_prec(struct ddl_parser *p)
{
	long n;
	int rc;

	if (!literal_unit(p, &p->cur))
		return ddl_expected(p, "an interval unit (SECOND, MINUTE, "
				       "HOUR, DAY, ...)");
	if ((rc = ddl_advance(p)))
		return rc;
	if (!ddl_cur_punct(p, '('))
		return 0;
	if ((rc = ddl_advance(p)) || (rc = ddl_read_uint(p, &n, "a precision")))
		return rc;
	return ddl_expect_punct(p, ')');
}

/* INTERVAL [+|-] '5' SECOND [TO ...], the INTERVAL already consumed */
static int interval_literal(struct ddl_parser *p)
{
	int rc = 0;

	/* INTERVAL -'3' HOUR: the sign goes before the string */
	if (ddl_cur_punct(p, '+') || ddl_cur_punct(p, '-'))
		if ((rc = ddl_advance(p)))
			return rc;
	if (p->cur.kind != TK_STRING && p->cur.kind != TK_NUMBER)
		return ddl_expected(p, "an interval value such as '5'");
	if ((rc = ddl_advance(p)) || (rc = literal_unit_prec(p)))
		return rc;
	if (ddl_accept_kw(p, "TO", &rc))
		return rc ? rc : literal_unit_prec(p);
	return rc;
}

/* CAST(x AS type), TRY_CAST(...): the name already consumed */
static int cast_call(struct ddl_parser *p)
{
	char *type;
	int rc;

	if ((rc = ddl_expect_punct(p, '(')) || (rc = expr_or(p)) ||
	    (rc = ddl_expect_kw(p, "AS")) || (rc = ddl_parse_type(p, &type)))
		return rc;
	/* the type is the cast's, nullable or not */
	p->ety = type;
	return ddl_expect_punct(p, ')');
}

/* CASE [x] WHEN a[, b] THEN r ... [ELSE e] END: CASE already consumed */
static int case_expr(struct ddl_parser *p)
{
	int rc = 0, whens = 0;

	/* a simple CASE has an operand; a searched CASE goes on with WHEN */
	if (!ddl_cur_kw(p, "WHEN") && (rc = expr_or(p)))
		return rc;
	while (ddl_cur_kw(p, "WHEN")) {
		if ((rc = ddl_advance(p)) || (rc = expr_or(p)))
			return rc;
		while (ddl_cur_punct(p, ','))
			if ((rc = ddl_advance(p)) || (rc = expr_or(p)))
				return rc;
		if ((rc = ddl_expect_kw(p, "THEN")) || (rc = expr_or(p)))
			return rc;
		whens++;
	}
	if (!whens)
		return ddl_expected(p, "WHEN");
	if (ddl_accept_kw(p, "ELSE", &rc) && (rc || (rc = expr_or(p))))
		return rc;
	if (rc)
		return rc;
	return ddl_expect_kw(p, "END");
}

/* expr {, expr} up to `close` (which is consumed); empty allowed.  One
 * expression keeps its type, as (a) is a; several make a row. */
static int expr_list(struct ddl_parser *p, char close)
{
	int rc, n = 0;

	p->ety = NULL;
	if (ddl_cur_punct(p, close))
		return ddl_advance(p);
	for (;;) {
		if ((rc = expr_or(p)))
			return rc;
		n++;
		if (!ddl_cur_punct(p, ','))
			break;
		if ((rc = ddl_advance(p)))
			return rc;
	}
	if (n > 1)
		p->ety = "ROW";
	return ddl_expect_punct(p, close);
}

/*
 * The clauses SQL/JSON functions take after an argument:
 * RETURNING type, {NULL | ERROR | DEFAULT x | ...} ON {EMPTY | ERROR |
 * NULL}, {WITH | WITHOUT} [CONDITIONAL | UNCONDITIONAL] [ARRAY] WRAPPER.
 */
static int json_clauses(struct ddl_parser *p)
{
	static const char *const on_what[] = {
		"NULL", "ERROR", "ABSENT", "TRUE", "FALSE", "UNKNOWN", "EMPTY"};
	char *type;
	size_t i;
	int rc = 0, hit;

	for (;;) {
		if (ddl_cur_kw(p, "RETURNING")) {
			if ((rc = ddl_advance(p)) ||
			    (rc = ddl_parse_type(p, &type)))
				return rc;
			continue;
		}
		if (ddl_cur_kw(p, "WITH") || ddl_cur_kw(p, "WITHOUT")) {
			if ((rc = ddl_advance(p)))
				return rc;
			if ((ddl_accept_kw(p, "CONDITIONAL", &rc) ||
			     ddl_accept_kw(p, "UNCONDITIONAL", &rc)) &&
			    rc)
				return rc;
			if (ddl_accept_kw(p, "ARRAY", &rc) && rc)
				return rc;
			if ((rc = ddl_expect_kw(p, "WRAPPER")))
				return rc;
			continue;
		}
		/* the behaviours: {NULL | ERROR | DEFAULT x | ...} ON ... */
		hit = 0;
		if (ddl_cur_kw(p, "DEFAULT")) {
			if ((rc = ddl_advance(p)) || (rc = expr_add(p)))
				return rc;
			hit = 1;
		} else {
			for (i = 0; i < sizeof(on_what) / sizeof(on_what[0]);
			     i++) {
				if (ddl_cur_kw(p, on_what[i]) &&
				    ddl_next_kw(p, "ON", &rc)) {
					if ((rc = ddl_advance(p)))
						return rc;
					hit = 1;
					break;
				}
				if (rc)
					return rc;
			}
		}
		if (!hit)
			return 0;
		if ((rc = ddl_expect_kw(p, "ON")))
			return rc;
		if (!ddl_cur_kw(p, "EMPTY") && !ddl_cur_kw(p, "ERROR") &&
		    !ddl_cur_kw(p, "NULL"))
			return ddl_expected(p, "EMPTY, ERROR or NULL");
		if ((rc = ddl_advance(p)))
			return rc;
	}
}

/*
 * The arguments of a call to `fn` (its last name part), '(' consumed.
 * Besides commas, the standard's keyword separators are allowed between
 * arguments (FROM, FOR, PLACING, TO, VALUE, and IN for POSITION).
 */
static int call_args(struct ddl_parser *p, const struct ddl_tok *fn)
{
	/* the functions whose arguments have a syntax of their own */
	int position = ddl_is_kw(p, fn, "POSITION");
	int trim = ddl_is_kw(p, fn, "TRIM");
	int json_obj = ddl_is_kw(p, fn, "JSON_OBJECT") ||
		       ddl_is_kw(p, fn, "JSON_OBJECTAGG");
	const struct ddl_tok *n;
	int rc = 0;

	if (ddl_cur_punct(p, ')'))
		return ddl_advance(p); /* f() */
	if (is_subquery_word(p, &p->cur))
		return subquery(p, p->cur.off);
	/* aggregates may say COUNT(DISTINCT x); TRIM may start with its
	 * side and even leave out the characters: TRIM(LEADING FROM s) */
	if ((ddl_accept_kw(p, "DISTINCT", &rc) ||
	     ddl_accept_kw(p, "ALL", &rc)) &&
	    rc)
		return rc;
	if (trim &&
	    (ddl_cur_kw(p, "BOTH") || ddl_cur_kw(p, "LEADING") ||
	     ddl_cur_kw(p, "TRAILING")) &&
	    (rc = ddl_advance(p)))
		return rc;
	if (trim && ddl_accept_kw(p, "FROM", &rc) && rc)
		return rc;
	/* one argument per turn: *, name => value, or an expression */
	for (;;) {
		if ((rc = ddl_peek(p, &n)))
			return rc;
		if (ddl_cur_punct(p, '*') &&
		    (ddl_is_punct(p, n, ')') || ddl_is_punct(p, n, ','))) {
			rc = ddl_advance(p); /* COUNT(*) */
		} else {
			if ((p->cur.kind == TK_IDENT ||
			     p->cur.kind == TK_QIDENT) &&
			    ddl_is_punct(p, n, '=') && n->off + 1 < p->len &&
			    p->src[n->off + 1] == '>') {
				/* a named argument: name => value */
				if ((rc = ddl_advance(p)))
					return rc;
				if (!punct2(p, '=', '>', &rc))
					return rc ? rc
						  : ddl_expected(p, "'=>'");
				if ((rc = ddl_advance(p)) ||
				    (rc = ddl_advance(p)))
					return rc;
			} else if (json_obj && ddl_cur_kw(p, "KEY") &&
				   (n->kind == TK_STRING ||
				    n->kind == TK_IDENT ||
				    n->kind == TK_QIDENT)) {
				/* JSON_OBJECT(KEY k VALUE v) */
				if ((rc = ddl_advance(p)))
					return rc;
			}
			/* POSITION(a IN b): IN is a separator, not a predicate
			 */
			rc = position ? expr_add(p) : expr_or(p);
			if (!rc)
				rc = json_clauses(p);
		}
		if (rc)
			return rc;
		if (ddl_cur_punct(p, ')'))
			return ddl_advance(p);
		/* between arguments: a comma or a separator keyword */
		if (ddl_cur_punct(p, ',') || ddl_cur_kw(p, "FROM") ||
		    ddl_cur_kw(p, "FOR") || ddl_cur_kw(p, "PLACING") ||
		    ddl_cur_kw(p, "TO") ||
		    (json_obj && ddl_cur_kw(p, "VALUE")) ||
		    (position && ddl_cur_kw(p, "IN"))) {
			if ((rc = ddl_advance(p)))
				return rc;
			continue;
		}
		return ddl_expected(p, "',' or ')'");
	}
}

/* The words that name a time unit inside a call (EXTRACT(DOW FROM x),
 * CEIL(ts TO WEEK), TIMESTAMPDIFF(QUARTER, a, b)): not columns.  The
 * interval units, and those only EXTRACT and FLOOR/CEIL know. */
static int time_unit_word(const struct ddl_parser *p,
			  const struct ddl_tok *t)
{
	static const char *const words[] = {
		"MILLENNIUM", "CENTURY", "DECADE",  "DOY",	   "DOW",
		"EPOCH",      "ISODOW",	 "ISOYEAR", "FRAC_SECOND",
	};

	return literal_unit(p, t) ||
	       kw_in(p, t, words, sizeof(words) / sizeof(words[0]));
}

/* The niladic functions Calcite reserves, written without (): their type. */
static const char *niladic_type(const struct ddl_parser *p,
				const struct ddl_tok *t)
{
	if (ddl_is_kw(p, t, "CURRENT_TIMESTAMP"))
		return "TIMESTAMP_LTZ(3)";
	if (ddl_is_kw(p, t, "LOCALTIMESTAMP"))
		return "TIMESTAMP(3)";
	if (ddl_is_kw(p, t, "CURRENT_DATE"))
		return "DATE";
	if (ddl_is_kw(p, t, "CURRENT_TIME") || ddl_is_kw(p, t, "LOCALTIME"))
		return "TIME(0)";
	return NULL;
}

/*
 * A name that is not called: a column, when the expression is analysed
 * (p->scope).  Reserved words here are niladic functions or keywords
 * (CURRENT_TIMESTAMP, DAY in EXTRACT); a name followed by '.' that is no
 * column may be a qualified function (cat.db.f()): neither is checked.
 */
static int column_ref(struct ddl_parser *p, const struct ddl_tok *t)
{
	const struct ddl_column *c;
	char *name, hint[128];
	int rc;

	p->ety = NULL;
	if (!p->scope)
		return 0;
	if (t->kind == TK_IDENT && ddl_reserved(p->src + t->off, t->len)) {
		p->ety = niladic_type(p, t);
		return 0;
	}
	if ((rc = ddl_ident_value(p, t, &name)))
		return rc;
	c = ddl_find_column(p->scope, name);
	if (!c) {
		if (ddl_cur_punct(p, '.') ||
		    (t->kind == TK_IDENT && time_unit_word(p, t)))
			return 0;
		return ddl_error_at(p, t->off, -EINVAL,
				    "`%.60s` is not a column of the table%s",
				    name,
				    ddl_case_hint(p->scope, name, hint,
						  sizeof(hint)));
	}
	/* Flink resolves computed columns over the physical and metadata
	 * ones only */
	if (p->in_computed && c->kind == DDL_COL_COMPUTED)
		return ddl_error_at(p, t->off, -EINVAL,
				    "`%.60s` is a computed column: a computed "
				    "column may only use physical and "
				    "metadata columns",
				    name);
	if (c->type) {
		p->ety = c->type;
		return 0;
	}
	/* a computed rowtime in a watermark: its own expression's type */
	{
		char ty[64];
		struct cmfs_err why = CMFS_ERR_INIT;

		if (!ddl_expr_check(p->scope, c->expr, 1, ty, sizeof(ty),
				    &why) &&
		    ty[0])
			p->ety = ddl_arena_strdup(&p->t->arena, ty);
	}
	return 0;
}

/* A call of `fn`, its arguments parsed: a built-in function, when the
 * expression is analysed.  The call's type is the function's. */
static int function_ref(struct ddl_parser *p, const struct ddl_tok *fn)
{
	char *name;
	int rc;

	p->ety = NULL;
	if (!p->scope)
		return 0;
	if ((rc = ddl_ident_value(p, fn, &name)))
		return rc;
	if (ddl_function(name, strlen(name), &p->ety))
		return 0;
	return ddl_error_at(p, fn->off, -EINVAL,
			    "unknown function %.60s(): not one of Flink's "
			    "built-in functions",
			    name);
}

/* A primary operand: literal, special form, name, call, parentheses. */
static int primary(struct ddl_parser *p)
{
	const struct ddl_tok *n;
	struct ddl_tok fn;
	int rc;

	p->ety = NULL;
	switch (p->cur.kind) {
	case TK_NUMBER:
		/* 12 is an INT, 1.5 and 1e3 something else numeric */
		p->ety = memchr(p->src + p->cur.off, '.', p->cur.len) ||
				 memchr(p->src + p->cur.off, 'e',
					p->cur.len) ||
				 memchr(p->src + p->cur.off, 'E', p->cur.len)
			 ? "DECIMAL"
			 : "INT";
		return ddl_advance(p);
	case TK_STRING:
		p->ety = "STRING";
		return ddl_advance(p); /* 'text' */
	case TK_BINSTR:
		p->ety = "BYTES";
		return ddl_advance(p); /* X'00ff' */
	case TK_QIDENT:
		break;
	case TK_PUNCT:
		if (ddl_cur_punct(p, '(')) {
			if ((rc = ddl_advance(p)))
				return rc;
			if (is_subquery_word(p, &p->cur))
				return subquery(p, p->cur.off);
			if (ddl_cur_punct(p, ')'))
				return ddl_expected(p, "an expression");
			return expr_list(p, ')'); /* (a) or a row (a, b) */
		}
		return ddl_expected(p, "an expression");
	case TK_EOF:
		return ddl_expected(p, "an expression");
	case TK_IDENT:
		/* words with a syntax of their own come first; a word that
		 * is none of them is a column, field or function name */
		if ((rc = ddl_peek(p, &n)))
			return rc;
		if (ddl_cur_kw(p, "TRUE") || ddl_cur_kw(p, "FALSE") ||
		    ddl_cur_kw(p, "UNKNOWN"))
			p->ety = "BOOLEAN";
		if (ddl_cur_kw(p, "TRUE") || ddl_cur_kw(p, "FALSE") ||
		    ddl_cur_kw(p, "NULL") || ddl_cur_kw(p, "UNKNOWN"))
			return ddl_advance(p);
		if (ddl_cur_kw(p, "INTERVAL")) {
			if ((rc = ddl_advance(p)))
				return rc;
			p->ety = "INTERVAL";
			return interval_literal(p);
		}
		/* typed literals; DATE alone may still be a column */
		if ((ddl_cur_kw(p, "DATE") || ddl_cur_kw(p, "TIME") ||
		     ddl_cur_kw(p, "TIMESTAMP")) &&
		    n->kind == TK_STRING) {
			/* a TIMESTAMP literal's precision is its digits' */
			p->ety = ddl_cur_kw(p, "DATE")	 ? "DATE"
				 : ddl_cur_kw(p, "TIME") ? "TIME"
							 : NULL;
			if ((rc = ddl_advance(p)))
				return rc;
			return ddl_advance(p); /* DATE '2024-01-01' */
		}
		if ((ddl_cur_kw(p, "CAST") || ddl_cur_kw(p, "TRY_CAST")) &&
		    ddl_is_punct(p, n, '(')) {
			if ((rc = ddl_advance(p)))
				return rc;
			return cast_call(p);
		}
		if (ddl_cur_kw(p, "CASE")) {
			if ((rc = ddl_advance(p)) || (rc = case_expr(p)))
				return rc;
			p->ety = NULL; /* the branches' common type */
			return 0;
		}
		/* constructors: ARRAY[1, 2], MAP['k', v]; ROW(...) is a call */
		if ((ddl_cur_kw(p, "ARRAY") || ddl_cur_kw(p, "MAP")) &&
		    ddl_is_punct(p, n, '[')) {
			const char *ty = ddl_cur_kw(p, "MAP") ? "MAP" : "ARRAY";

			if ((rc = ddl_advance(p)) || (rc = ddl_advance(p)) ||
			    (rc = expr_list(p, ']')))
				return rc;
			p->ety = ty;
			return 0;
		}
		if (is_subquery_word(p, &p->cur))
			return subquery(p, p->cur.off);
		if (stop_word(p))
			return ddl_expected(p, "an expression");
		break;
	}
	/* a name, perhaps a call: f(...); qualified names (cat.db.f) come
	 * back through postfix(), as .field followed by '(' */
	fn = p->cur;
	if ((rc = ddl_advance(p)))
		return rc;
	if (!ddl_cur_punct(p, '('))
		return column_ref(p, &fn);
	if ((rc = ddl_advance(p)) || (rc = call_args(p, &fn)))
		return rc;
	return function_ref(p, &fn);
}

/* primary, then [index], .field and .method(args) */
static int postfix(struct ddl_parser *p)
{
	struct ddl_tok fn;
	int rc;

	if ((rc = primary(p)))
		return rc;
	/* a[1].b['k'].c(): applied left to right, as often as written;
	 * the type of an element or field is not followed */
	for (;;) {
		if (ddl_cur_punct(p, '[') || ddl_cur_punct(p, '.'))
			p->ety = NULL;
		if (ddl_cur_punct(p, '[')) {
			if ((rc = ddl_advance(p)) || (rc = expr_or(p)) ||
			    (rc = ddl_expect_punct(p, ']')))
				return rc;
		} else if (ddl_cur_punct(p, '.')) {
			if ((rc = ddl_advance(p)))
				return rc;
			if (p->cur.kind != TK_IDENT && p->cur.kind != TK_QIDENT)
				return ddl_expected(p, "a field name");
			fn = p->cur;
			if ((rc = ddl_advance(p)))
				return rc;
			if (ddl_cur_punct(p, '(')) {
				if ((rc = ddl_advance(p)) ||
				    (rc = call_args(p, &fn)))
					return rc;
			}
		} else {
			return 0;
		}
	}
}

/* [+|-]* postfix; each sign is one level of nesting (- - - x). */
static int expr_unary(struct ddl_parser *p)
{
	int rc;

	if (!ddl_cur_punct(p, '+') && !ddl_cur_punct(p, '-'))
		return postfix(p);
	if ((rc = ddl_advance(p)) || (rc = ddl_enter(p)))
		return rc;
	rc = expr_unary(p);
	p->depth--;
	return rc;
}

/* unary {* / % unary}: a loop, so long products cost no stack. */
static int expr_mul(struct ddl_parser *p)
{
	int rc;

	if ((rc = expr_unary(p)))
		return rc;
	while (ddl_cur_punct(p, '*') || ddl_cur_punct(p, '/') ||
	       ddl_cur_punct(p, '%')) {
		if ((rc = ddl_advance(p)) || (rc = expr_unary(p)))
			return rc;
		p->ety = NULL; /* numeric, of a type not followed */
	}
	return 0;
}

/* A point in time (DATE, TIME, TIMESTAMP...) or PROCTIME(): what stays
 * itself when an INTERVAL is added or subtracted. */
static int temporal(const char *ty)
{
	return ty && (!strncmp(ty, "TIMESTAMP", 9) || !strncmp(ty, "DATE", 4) ||
		      !strncmp(ty, "TIME", 4) || !strcmp(ty, "PROCTIME"));
}

/* mul {+ - || mul}; || is two adjacent '|' tokens. */
static int expr_add(struct ddl_parser *p)
{
	const char *ty;
	int rc = 0, concat;

	if ((rc = expr_mul(p)))
		return rc;
	ty = p->ety;
	for (;;) {
		concat = 0;
		if (ddl_cur_punct(p, '+') || ddl_cur_punct(p, '-')) {
			if ((rc = ddl_advance(p)))
				return rc;
		} else if (punct2(p, '|', '|', &rc)) {
			if ((rc = ddl_advance(p)) || (rc = ddl_advance(p)))
				return rc;
			concat = 1;
		} else {
			p->ety = rc ? NULL : ty;
			return rc;
		}
		if ((rc = expr_mul(p)))
			return rc;
		/* ts - INTERVAL '5' SECOND is still ts's type */
		if (concat)
			ty = "STRING";
		else if (!(temporal(ty) && p->ety && !strcmp(p->ety, "INTERVAL")))
			ty = NULL;
	}
}

/* A comparison operator at the current token: its token count, or 0. */
static int cmp_op(struct ddl_parser *p, int *rc)
{
	if (ddl_cur_punct(p, '='))
		return 1;
	if (ddl_cur_punct(p, '<'))
		return punct2(p, '<', '=', rc) || punct2(p, '<', '>', rc) ? 2
									  : 1;
	if (ddl_cur_punct(p, '>'))
		return punct2(p, '>', '=', rc) ? 2 : 1;
	if (punct2(p, '!', '=', rc))
		return 2;
	return 0;
}

/* The predicates after an operand: comparisons, IS, BETWEEN, LIKE, IN. */
static int predicates(struct ddl_parser *p);

static int expr_pred(struct ddl_parser *p)
{
	size_t start;
	int rc;

	if ((rc = expr_add(p)))
		return rc;
	start = p->cur.off;
	rc = predicates(p);
	if (!rc && p->cur.off != start)
		p->ety = "BOOLEAN";
	return rc;
}

/* The predicates after an operand, if any. */
static int predicates(struct ddl_parser *p)
{
	int rc = 0, k;

	/* a loop: Calcite chains them (a = b = c), so do we */
	for (;;) {
		k = cmp_op(p, &rc);
		if (rc)
			return rc;
		if (k) {
			while (k--)
				if ((rc = ddl_advance(p)))
					return rc;
			if ((rc = expr_add(p)))
				return rc;
			continue;
		}
		if (ddl_cur_kw(p, "IS")) {
			if ((rc = ddl_advance(p)))
				return rc;
			if (ddl_accept_kw(p, "NOT", &rc) && rc)
				return rc;
			if (ddl_cur_kw(p, "DISTINCT")) {
				if ((rc = ddl_advance(p)) ||
				    (rc = ddl_expect_kw(p, "FROM")) ||
				    (rc = expr_add(p)))
					return rc;
				continue;
			}
			if (!ddl_cur_kw(p, "NULL") && !ddl_cur_kw(p, "TRUE") &&
			    !ddl_cur_kw(p, "FALSE") &&
			    !ddl_cur_kw(p, "UNKNOWN"))
				return ddl_expected(p,
						    "NULL, TRUE, FALSE, "
						    "UNKNOWN or DISTINCT FROM");
			if ((rc = ddl_advance(p)))
				return rc;
			continue;
		}
		/* NOT here belongs to NOT BETWEEN/LIKE/SIMILAR/IN only; any
		 * other NOT ends the operand (a NOT NULL type, NOT ENFORCED) */
		if (ddl_cur_kw(p, "NOT")) {
			const struct ddl_tok *n;

			if ((rc = ddl_peek(p, &n)))
				return rc;
			if (!ddl_is_kw(p, n, "BETWEEN") &&
			    !ddl_is_kw(p, n, "LIKE") &&
			    !ddl_is_kw(p, n, "SIMILAR") &&
			    !ddl_is_kw(p, n, "IN"))
				return 0;
			if ((rc = ddl_advance(p)))
				return rc;
		}
		if (ddl_cur_kw(p, "BETWEEN")) {
			if ((rc = ddl_advance(p)))
				return rc;
			if ((ddl_accept_kw(p, "ASYMMETRIC", &rc) ||
			     ddl_accept_kw(p, "SYMMETRIC", &rc)) &&
			    rc)
				return rc;
			if ((rc = expr_add(p)) ||
			    (rc = ddl_expect_kw(p, "AND")) ||
			    (rc = expr_add(p)))
				return rc;
		} else if (ddl_cur_kw(p, "LIKE") || ddl_cur_kw(p, "SIMILAR")) {
			int similar = ddl_cur_kw(p, "SIMILAR");

			if ((rc = ddl_advance(p)))
				return rc;
			if (similar && (rc = ddl_expect_kw(p, "TO")))
				return rc;
			if ((rc = expr_add(p)))
				return rc;
			if (ddl_accept_kw(p, "ESCAPE", &rc) &&
			    (rc || (rc = expr_add(p))))
				return rc;
		} else if (ddl_cur_kw(p, "IN")) {
			if ((rc = ddl_advance(p)) ||
			    (rc = ddl_expect_punct(p, '(')))
				return rc;
			if (is_subquery_word(p, &p->cur))
				return subquery(p, p->cur.off);
			if ((rc = expr_list(p, ')')))
				return rc;
		} else {
			return 0;
		}
		if (rc)
			return rc;
	}
}

/* NOT* pred: NOT binds looser than comparisons (NOT a = b). */
static int expr_not(struct ddl_parser *p)
{
	int rc;

	if (!ddl_cur_kw(p, "NOT"))
		return expr_pred(p);
	if ((rc = ddl_advance(p)) || (rc = ddl_enter(p)))
		return rc;
	rc = expr_not(p);
	p->depth--;
	p->ety = "BOOLEAN";
	return rc;
}

/* not {AND not} */
static int expr_and(struct ddl_parser *p)
{
	int rc;

	if ((rc = expr_not(p)))
		return rc;
	while (ddl_cur_kw(p, "AND")) {
		if ((rc = ddl_advance(p)) || (rc = expr_not(p)))
			return rc;
		p->ety = "BOOLEAN";
	}
	return 0;
}

/* The top of the precedence ladder; each entry is one nesting level. */
static int expr_or(struct ddl_parser *p)
{
	int rc;

	if ((rc = ddl_enter(p)))
		return rc;
	if ((rc = expr_and(p)))
		goto out;
	while (ddl_cur_kw(p, "OR")) {
		if ((rc = ddl_advance(p)) || (rc = expr_and(p)))
			goto out;
		p->ety = "BOOLEAN";
	}
out:
	p->depth--;
	return rc;
}

/*
 * An expression from the current token on.  It ends at the first token
 * that cannot continue it (',' or ')' of the column list, COMMENT); the
 * caller checks that what follows fits.  [*from, *to) is its source.
 */
int ddl_parse_expr(struct ddl_parser *p, size_t *from, size_t *to)
{
	int rc;

	*from = p->cur.off;
	rc = expr_or(p);
	if (rc)
		return rc;
	*to = p->prev_end;
	return 0;
}

/*
 * The analysis runs the parser again over the kept text, with the table's
 * columns in scope and a scratch table for what the parser allocates
 * (types of CASTs): the table checked may be one being merged, whose
 * arena must not grow behind its back.
 */
int ddl_expr_check(const struct ddl_table *scope, const char *text,
		   int computed, char *type, size_t tsize,
		   struct cmfs_err *err)
{
	struct ddl_table *tmp = calloc(1, sizeof(*tmp));
	struct ddl_parser q;
	size_t from, to;
	int rc;

	type[0] = '\0';
	if (!tmp)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	rc = ddl_lex_init(&q, text, strlen(text), tmp, err);
	q.scope = scope;
	q.in_computed = computed;
	q.nopos = 1;
	if (!rc)
		rc = ddl_parse_expr(&q, &from, &to);
	if (!rc && q.ety)
		snprintf(type, tsize, "%s", q.ety);
	ddl_table_free(tmp);
	return rc;
}
