/*
 * ddl_int.h - what the files of the DDL module share and nobody else sees.
 *
 * The module is split by stage: ddl_lex.c (arena, UTF-8 check, lexer,
 * positions and error text), ddl_reserved.c (Flink's reserved words),
 * ddl_type.c (data types), ddl_expr.c (expressions), ddl_func.c (the
 * built-in functions), ddl.c (the CREATE TABLE statement, accessors),
 * ddl_check.c (checks on a whole table), ddl_format.c (dump, format) and
 * ddl_merge.c (the LIKE merge).  Everything a table owns lives in one
 * arena that ddl_table_free() releases at once, so no error path has to
 * free a half-built tree piece by piece.
 */
#ifndef CMFS_DDL_INT_H
#define CMFS_DDL_INT_H

#include <stddef.h>

#include "buf.h"
#include "ddl.h"
#include "err.h"

/* Limits (see ddl.h for what a caller sees when one is reached). */
#define DDL_MAX_INPUT (1024 * 1024)	/* bytes of SQL text */
#define DDL_MAX_DEPTH 64		/* nesting of types and expressions */
#define DDL_MAX_OPTIONS 1024		/* WITH options, also after a merge */
#define DDL_MAX_COLUMNS 4096		/* columns, also after a merge */
#define DDL_MAX_TEXT (16 * 1024 * 1024) /* one canonical type or dump */
#define DDL_MAX_IDENT 256		/* Java chars in a name, as Flink */

/* ---- arena ------------------------------------------------------------ */

struct ddl_chunk;

/* Bump allocator: memory is only ever released all together. */
struct ddl_arena {
	struct ddl_chunk *head; /* newest chunk first */
};

/*
 * `n` zeroed, aligned bytes owned by arena `a`, or NULL on ENOMEM; the
 * strdup's copy into it.  All of it goes at once with ddl_arena_release().
 * An arena is used by one thread at a time.
 */
void *ddl_arena_alloc(struct ddl_arena *a, size_t n);
char *ddl_arena_strndup(struct ddl_arena *a, const char *s, size_t n);
char *ddl_arena_strdup(struct ddl_arena *a, const char *s);
void ddl_arena_release(struct ddl_arena *a);

/* A growable array of strings kept in an arena. */
struct ddl_strv {
	char **v;
	size_t n, alloc;
};

/* Appends `s` (kept, not copied) to `sv`, growing it in `a`: 0 or -ENOMEM. */
int ddl_strv_push(struct ddl_arena *a, struct ddl_strv *sv, char *s);
/* Index of `s` in `sv`, or -1. */
long ddl_strv_find(const struct ddl_strv *sv, const char *s);

/* ---- the tree ----------------------------------------------------------- */

enum ddl_col_kind {
	DDL_COL_PHYSICAL,
	DDL_COL_COMPUTED,
	DDL_COL_METADATA,
};

struct ddl_column {
	char *name; /* identifier as written, unquoted */
	enum ddl_col_kind kind;
	char *type;	/* canonical type text; NULL when computed */
	char *expr;	/* computed: expression text */
	char *meta_key; /* metadata: FROM 'key', or NULL */
	int is_virtual; /* metadata: VIRTUAL */
	char *comment;	/* COMMENT 'text', or NULL */
	size_t off;	/* where the name is, for messages */
};

struct ddl_option {
	char *key;
	char *value;
	size_t off; /* where the key is, for messages */
};

/* LIKE options: what a feature takes from the source table. */
enum ddl_strategy {
	DDL_INCLUDING,
	DDL_EXCLUDING,
	DDL_OVERWRITING,
};

enum ddl_feature {
	DDL_F_ALL,
	DDL_F_CONSTRAINTS,
	DDL_F_DISTRIBUTION,
	DDL_F_GENERATED,
	DDL_F_METADATA,
	DDL_F_OPTIONS,
	DDL_F_PARTITIONS,
	DDL_F_WATERMARKS,
	DDL_F_COUNT,
};

struct ddl_like_opt {
	enum ddl_strategy strategy;
	enum ddl_feature feature;
};

struct ddl_table {
	struct ddl_arena arena; /* owns every pointer below */
	char *name[3];		/* catalog, database, table: last nparts used */
	int nparts;
	int name_at[2];		/* line, col of the name: for later checks */
	int if_not_exists;

	struct ddl_column *cols;
	size_t ncols, acols;

	int has_pk;
	char *pk_name;	    /* CONSTRAINT name, or NULL */
	struct ddl_strv pk; /* primary-key columns */
	size_t pk_off;

	char *wm_col; /* rowtime column, or NULL without WATERMARK */
	char *wm_expr;
	size_t wm_off;

	char *comment;	       /* table COMMENT, or NULL */
	struct ddl_strv parts; /* PARTITIONED BY */
	size_t part_off;

	int has_dist;
	const char *dist_kind; /* "HASH", "RANGE" or NULL (unspecified) */
	struct ddl_strv dist_cols;
	long buckets; /* INTO n BUCKETS, 0 when absent */
	size_t dist_off;

	char *conn_name[3]; /* USING CONNECTION: last conn_nparts used */
	int conn_nparts;

	int has_with;
	struct ddl_option *opts; /* as written: a key may come twice */
	size_t nopts, aopts;

	int has_like;
	char *like_name[3];
	int like_nparts;
	int like_at[2]; /* line, col of the LIKE source's name */
	struct ddl_like_opt like_opts[DDL_F_COUNT * 3];
	int nlike_opts;
	int merged; /* ddl_merge_like() has run */
};

/* The SQL keyword of a LIKE strategy / feature (static text). */
const char *ddl_strategy_name(enum ddl_strategy s);
const char *ddl_feature_name(enum ddl_feature f);
/* The column called `name` (case-sensitive), or NULL. */
const struct ddl_column *ddl_find_column(const struct ddl_table *t,
					 const char *name);
struct ddl_parser;
/* The columns named by the primary key, watermark, partitions and
 * bucketing must exist (key columns must be physical, a rowtime column
 * TIMESTAMP(p)/TIMESTAMP_LTZ(p), p <= 3): -EINVAL if not.  With a parser
 * the message gets the clause's line:col. */
int ddl_check_refs(const struct ddl_table *t, struct ddl_parser *p,
		   struct cmfs_err *err);

/* ---- lexer -------------------------------------------------------------- */

enum ddl_tok_kind {
	TK_EOF,
	TK_IDENT,  /* unquoted word: identifier or keyword */
	TK_QIDENT, /* `back-quoted` identifier */
	TK_STRING, /* 'text' */
	TK_BINSTR, /* X'hex' */
	TK_NUMBER,
	TK_PUNCT, /* one character: ( ) < > = , ; . [ ] + - * / % | ! : ? */
};

struct ddl_tok {
	enum ddl_tok_kind kind;
	size_t off; /* first byte in the source */
	size_t len; /* bytes, quotes included */
	size_t gap; /* bytes of blanks and comments before it */
};

/* Parser state: the source, one current token and one of look-ahead. */
struct ddl_parser {
	const char *src;
	size_t len;
	size_t pos; /* where lexing continues */
	struct ddl_tok cur;
	struct ddl_tok nxt;
	int has_nxt;
	size_t prev_end;     /* end of the last token consumed */
	int depth;	     /* recursion depth in types and expressions */
	struct ddl_table *t; /* the tree being built (owns the arena) */
	struct cmfs_err *err;
	const char *untyped; /* first column written without a type */
	size_t untyped_off;

	/* analysis of a kept expression (ddl_expr_check); scope NULL while
	 * parsing a statement, when columns are not all known yet */
	const struct ddl_table *scope; /* the columns names refer to */
	int in_computed; /* a computed column: physical/metadata refs only */
	int nopos;	 /* messages without line:col (not the user's text) */
	const char *ety; /* type of the operand just parsed, NULL unknown */
};

/* 0 if the whole source is UTF-8 (utf8.h) without NUL bytes, else
 * -EINVAL with line:col.  Then ddl_lex_init() readies the first token. */
int ddl_utf8_check(struct ddl_parser *p);
int ddl_lex_init(struct ddl_parser *p, const char *src, size_t len,
		 struct ddl_table *t, struct cmfs_err *err);
/* Step to the next token; 0 or -EINVAL for a lexical error. */
int ddl_advance(struct ddl_parser *p);
/* The token after the current one, lexed on first use. */
int ddl_peek(struct ddl_parser *p, const struct ddl_tok **out);

/* Token tests: punctuation character, keyword (case-insensitive). */
int ddl_is_punct(const struct ddl_parser *p, const struct ddl_tok *t, char c);
int ddl_is_kw(const struct ddl_parser *p, const struct ddl_tok *t,
	      const char *kw);
int ddl_cur_punct(const struct ddl_parser *p, char c);
int ddl_cur_kw(const struct ddl_parser *p, const char *kw);
/* Consume the current token when it matches; 1 if it did. */
int ddl_accept_punct(struct ddl_parser *p, char c, int *rc);
int ddl_accept_kw(struct ddl_parser *p, const char *kw, int *rc);
/* Consume a token that must match, else "expected X, found Y". */
int ddl_expect_punct(struct ddl_parser *p, char c);
int ddl_expect_kw(struct ddl_parser *p, const char *kw);
/* 1 if the token after the current one is keyword `kw` (*rc: 0, or the
 * look-ahead's -EINVAL). */
int ddl_next_kw(struct ddl_parser *p, const char *kw, int *rc);
/* One level deeper in a type or expression: 0, or -EINVAL past
 * DDL_MAX_DEPTH; the caller decrements p->depth on the way out. */
int ddl_enter(struct ddl_parser *p);

/* line:col (1-based, columns in characters) of a byte offset. */
void ddl_linecol(const char *src, size_t len, size_t off, int *line, int *col);
/* Record "line:col: message" with `code`; returns `code`. */
int ddl_error_at(struct ddl_parser *p, size_t off, int code, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));
/* Record "line:col: expected <what>, found <current token>". */
int ddl_expected(struct ddl_parser *p, const char *what);
/* Describe a token for a message ("end of input", "\"foo\"", ...). */
void ddl_tok_describe(const struct ddl_parser *p, const struct ddl_tok *t,
		      char *out, size_t size);

/* An unsigned integer literal (plain digits, at most INT_MAX) into *out,
 * consumed; -EINVAL naming `what` otherwise. */
int ddl_read_uint(struct ddl_parser *p, long *out, const char *what);
/* Token values, copied into the table's arena. */
int ddl_ident_value(struct ddl_parser *p, const struct ddl_tok *t, char **out);
/* The same for a name being declared or listed: -EINVAL for a reserved
 * word unquoted or a name longer than DDL_MAX_IDENT. */
int ddl_name_value(struct ddl_parser *p, const struct ddl_tok *t, char **out);
/* 1 if the word s[0..n) is reserved in Flink SQL (any case). */
int ddl_reserved(const char *s, size_t n);
int ddl_string_value(struct ddl_parser *p, const struct ddl_tok *t, char **out);
/* Source text from `from` to `to` with blanks and comments made single
 * spaces: the stable text kept for expressions. */
int ddl_span_text(struct ddl_parser *p, size_t from, size_t to, char **out);

/* ---- output helpers ----------------------------------------------------- */

/* Append `s` as a `quoted` identifier / 'quoted' string.  With `escape`
 * set, control characters become \n, \t, \xNN (and \ becomes \\), so a
 * dump stays one item per line. */
int ddl_put_ident(struct buf *b, const char *s, int escape);
int ddl_put_string(struct buf *b, const char *s, int escape);
int ddl_put_text(struct buf *b, const char *s, int escape);

/* ---- types and expressions --------------------------------------------- */

/* Parse a data type at the current token; *out = canonical text. */
int ddl_parse_type(struct ddl_parser *p, char **out);
/* Parse an expression; [*from, *to) is its source span. */
int ddl_parse_expr(struct ddl_parser *p, size_t *from, size_t *to);

/*
 * Check the kept text of an expression against the columns of `scope`,
 * as Flink's schema resolver does: every column it names exists (and, in
 * a computed column, `computed` set, is physical or metadata), every
 * function it calls is built in.  Its type, as far as it can be told
 * (canonical text, "PROCTIME" for PROCTIME(), "" when unknown), goes to
 * type[0..tsize).  0, or -EINVAL with the reason (no position) in err.
 */
int ddl_expr_check(const struct ddl_table *scope, const char *text,
		   int computed, char *type, size_t tsize,
		   struct cmfs_err *err);

/* Flink's built-in function `s[0..n)` (any case): 1 with its return
 * type in *type (NULL when it depends on the arguments), else 0. */
int ddl_function(const char *s, size_t n, const char **type);

/* " (names are case-sensitive: `ID` exists)" into out when a column
 * is called `name` in another case, else "": the hint of a message. */
const char *ddl_case_hint(const struct ddl_table *t, const char *name,
			  char *out, size_t size);

#endif
