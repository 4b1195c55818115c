/*
 * ddl_lex.c - the lexical layer of the DDL parser: the arena that owns a
 * tree, the UTF-8 check, the tokenizer, line:col positions, error text and
 * the quoting helpers the dump and the formatter share.
 *
 * The lexer works on demand: the parser holds the current token and at
 * most one token of look-ahead, so memory does not grow with the input.
 * Tokens are spans of the source; their values (an identifier without its
 * back-quotes, a string without its quotes) are copied out only when the
 * parser keeps them.  Blanks and comments (-- to end of line, and block
 * comments) separate tokens and are otherwise dropped; each token records
 * how many bytes of them came before it, which is how the parser tells
 * `a<=b` (one operator) from `a < = b` (garbage) and how expression text
 * is normalised.  A line comment starts with -- or with //, as in
 * Calcite's lexer (Flink CDC's documentation writes `_id STRING, // ...`).
 */
#include "ddl_int.h"
#include "utf8.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ----------------------------------------------------------- */

/*
 * A table owns one arena: a list of chunks, newest first.  Allocation
 * bumps a pointer in the newest chunk; nothing is freed until the whole
 * table is.  Growing arrays copy themselves to a fresh block and leave the
 * old one behind, which at most doubles the memory of a table whose input
 * is capped at 1 MiB anyway.
 */

#define CHUNK_MIN (32 * 1024) /* a typical table fits in one chunk */
#define ALIGN 16	      /* enough for any object the tree holds */

struct ddl_chunk {
	struct ddl_chunk *next;
	size_t used, size; /* bytes of data after the header */
};

/* The header rounded up, so the data that follows it is aligned. */
#define HDR ((sizeof(struct ddl_chunk) + ALIGN - 1) & ~(size_t)(ALIGN - 1))

/*
 * Hand out `n` bytes from the newest chunk, starting a bigger one when it
 * is full.  Memory is zeroed, so fresh structs start out empty.
 */
void *ddl_arena_alloc(struct ddl_arena *a, size_t n)
{
	struct ddl_chunk *c = a->head;
	size_t size;
	void *p;

	n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (n == 0)
		n = ALIGN;
	if (!c || c->size - c->used < n) {
		if (n > SIZE_MAX / 2 - HDR)
			return NULL;
		size = n > CHUNK_MIN ? n : CHUNK_MIN;
		c = calloc(1, HDR + size);
		if (!c)
			return NULL;
		c->size = size;
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c + HDR + c->used;
	c->used += n;
	return p;
}

/* Copy n bytes of s, NUL-terminated, into the arena; NULL on ENOMEM. */
char *ddl_arena_strndup(struct ddl_arena *a, const char *s, size_t n)
{
	char *p = ddl_arena_alloc(a, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* Copy a C string into the arena; NULL on ENOMEM. */
char *ddl_arena_strdup(struct ddl_arena *a, const char *s)
{
	return ddl_arena_strndup(a, s, strlen(s));
}

/* Free every chunk; the arena is empty (and usable) again. */
void ddl_arena_release(struct ddl_arena *a)
{
	struct ddl_chunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

/* Append to a string vector; the array doubles inside the arena. */
int ddl_strv_push(struct ddl_arena *a, struct ddl_strv *sv, char *s)
{
	char **v;
	size_t n;

	if (sv->n == sv->alloc) {
		n = sv->alloc ? sv->alloc * 2 : 4;
		v = ddl_arena_alloc(a, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		if (sv->n)
			memcpy(v, sv->v, sv->n * sizeof(*v));
		sv->v = v;
		sv->alloc = n;
	}
	sv->v[sv->n++] = s;
	return 0;
}

/* Linear search: the lists (keys, partitions) are short. */
long ddl_strv_find(const struct ddl_strv *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return (long)i;
	return -1;
}

/* ---- UTF-8 ----------------------------------------------------------- */

/*
 * The whole input must be UTF-8, since names and strings end up in files,
 * and free of NUL bytes, since every value is kept as a C string.
 */
int ddl_utf8_check(struct ddl_parser *p)
{
	const unsigned char *s = (const unsigned char *)p->src;
	size_t i = 0;

	while (i < p->len) {
		if (!s[i])
			return ddl_error_at(p, i, -EINVAL,
					    "NUL byte in the statement");
		if (utf8_next(s, p->len, &i) < 0)
			return ddl_error_at(p, i, -EINVAL,
					    "invalid UTF-8 (byte 0x%02x)",
					    s[i]);
	}
	return 0;
}

/* ---- positions and errors -------------------------------------------- */

/*
 * Positions are computed only when an error is reported, by counting from
 * the start: the lexer does not have to track lines for every token.
 */
void ddl_linecol(const char *src, size_t len, size_t off, int *line, int *col)
{
	size_t i;
	int l = 1, c = 1;

	if (off > len)
		off = len;
	for (i = 0; i < off; i++) {
		if (src[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)src[i] & 0xc0) != 0x80) {
			c++; /* count characters, not bytes */
		}
	}
	*line = l;
	*col = c;
}

/*
 * The message is formatted first and prefixed with the position after, so
 * callers never deal with line numbers themselves.
 */
int ddl_error_at(struct ddl_parser *p, size_t off, int code, const char *fmt,
		 ...)
{
	char msg[CMFS_ERR_MSG];
	va_list ap;
	int line, col;

	if (p->err && p->err->code)
		return code; /* the first error wins */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->nopos)
		return cmfs_err_set(p->err, code, "%s", msg);
	ddl_linecol(p->src, p->len, off, &line, &col);
	return cmfs_err_set(p->err, code, "%d:%d: %s", line, col, msg);
}

/* Copy at most `max` bytes of s[0..n) into out, cut at a character. */
static void clip(char *out, size_t size, const char *s, size_t n, size_t max)
{
	size_t k = n < max ? n : max;

	if (k >= size)
		k = size - 1;
	while (k < n && k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	memcpy(out, s, k);
	out[k] = '\0';
	if (k < n && size - k > 3)
		strcat(out, "...");
}

/*
 * A token as a message shows it: words and punctuation in double quotes,
 * strings with their quotes and the word "string", at most 40 bytes.
 */
void ddl_tok_describe(const struct ddl_parser *p, const struct ddl_tok *t,
		      char *out, size_t size)
{
	char text[64];

	if (t->kind == TK_EOF) {
		snprintf(out, size, "end of input");
		return;
	}
	clip(text, sizeof(text), p->src + t->off, t->len, 40);
	if (t->kind == TK_STRING || t->kind == TK_BINSTR)
		snprintf(out, size, "string %s", text);
	else if (t->kind == TK_QIDENT)
		snprintf(out, size, "%s", text);
	else
		snprintf(out, size, "\"%s\"", text);
}

/* The usual syntax error, at the current token. */
int ddl_expected(struct ddl_parser *p, const char *what)
{
	char found[96];

	ddl_tok_describe(p, &p->cur, found, sizeof(found));
	return ddl_error_at(p, p->cur.off, -EINVAL, "expected %s, found %s",
			    what, found);
}

/* ---- the tokenizer ---------------------------------------------------- */

/*
 * Identifiers start with a letter and go on with letters and digits, as
 * Calcite's lexer defines them (its <LETTER> and <DIGIT>, the character
 * classes of JavaCC's Java grammar): '$', '_', ASCII letters, Latin-1 and
 * most alphabets up to U+1FFF, kana, CJK and compatibility ideographs, and
 * the decimal digits of some scripts.  Anything else (an emoji, the euro
 * sign, a non-breaking space) needs back-quotes.  Keywords are identifiers
 * that the parser compares without regard to case; back-quoted
 * identifiers never are keywords.
 */

/* The code point of the UTF-8 sequence at s (checked valid); *len its
 * length in bytes. */
static uint32_t code_point(const unsigned char *s, size_t *len)
{
	uint32_t cp;
	size_t k, i;

	if (s[0] < 0x80) {
		*len = 1;
		return s[0];
	}
	k = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	cp = s[0] & (0x7f >> k);
	for (i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	*len = k;
	return cp;
}

static int in_ranges(uint32_t cp, const uint32_t (*r)[2], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (cp >= r[i][0] && cp <= r[i][1])
			return 1;
	return 0;
}

static int calcite_letter(uint32_t cp)
{
	static const uint32_t r[][2] = {
		{0x24, 0x24},	  {0x41, 0x5a},	    {0x5f, 0x5f},
		{0x61, 0x7a},	  {0xc0, 0xd6},	    {0xd8, 0xf6},
		{0xf8, 0xff},	  {0x100, 0x1fff},  {0x3040, 0x318f},
		{0x3300, 0x337f}, {0x3400, 0x3d2d}, {0x4e00, 0x9fff},
		{0xf900, 0xfaff},
	};

	return in_ranges(cp, r, sizeof(r) / sizeof(r[0]));
}

static int calcite_digit(uint32_t cp)
{
	static const uint32_t r[][2] = {
		{0x30, 0x39},	  {0x660, 0x669}, {0x6f0, 0x6f9},
		{0x966, 0x96f},	  {0x9e6, 0x9ef}, {0xa66, 0xa6f},
		{0xae6, 0xaef},	  {0xb66, 0xb6f}, {0xbe7, 0xbef},
		{0xc66, 0xc6f},	  {0xce6, 0xcef}, {0xd66, 0xd6f},
		{0xe50, 0xe59},	  {0xed0, 0xed9}, {0x1040, 0x1049},
	};

	return in_ranges(cp, r, sizeof(r) / sizeof(r[0]));
}

/* The length of the identifier at s[0..n) (0 if none starts there). */
static size_t ident_len(const unsigned char *s, size_t n)
{
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		cp = code_point(s + i, &k);
		if (!calcite_letter(cp) && (!i || !calcite_digit(cp)))
			break;
		i += k;
	}
	return i;
}

/* ASCII digits only: isdigit() would depend on the locale. */
static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Skip blanks and comments from `pos`; returns the new position, or
 * SIZE_MAX after recording an unterminated block comment.
 */
static size_t skip_blank(struct ddl_parser *p, size_t pos)
{
	const char *s = p->src;
	size_t start;

	while (pos < p->len) {
		unsigned char c = (unsigned char)s[pos];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\f' || c == '\v') {
			pos++;
		} else if ((c == '-' || c == '/') && pos + 1 < p->len &&
			   s[pos + 1] == (char)c) {
			/* -- and // run to the end of the line (or input) */
			while (pos < p->len && s[pos] != '\n')
				pos++;
		} else if (c == '/' && pos + 1 < p->len && s[pos + 1] == '*') {
			/* block comments do not nest, as in Calcite */
			start = pos;
			pos += 2;
			while (pos + 1 < p->len &&
			       !(s[pos] == '*' && s[pos + 1] == '/'))
				pos++;
			if (pos + 1 >= p->len) {
				ddl_error_at(p, start, -EINVAL,
					     "unterminated /* comment");
				return SIZE_MAX;
			}
			pos += 2;
		} else {
			break;
		}
	}
	return pos;
}

/*
 * Strings ('it''s') and back-quoted identifiers (`a``b`) share one rule:
 * the quote doubled stands for itself.  *pos starts after the opening
 * quote and ends after the closing one.
 */
static int scan_quoted(struct ddl_parser *p, size_t start, size_t *pos, char q,
		       const char *what)
{
	size_t i = *pos;

	for (;;) {
		if (i >= p->len)
			return ddl_error_at(p, start, -EINVAL,
					    "unterminated %s", what);
		if (p->src[i] == q) {
			if (i + 1 < p->len && p->src[i + 1] == q) {
				i += 2;
				continue;
			}
			*pos = i + 1;
			return 0;
		}
		i++;
	}
}

/*
 * Lex one token starting at `pos`; the position after it goes to *end.
 * Multi-character operators (<=, <>, ||, =>) are left to the parser as
 * runs of one-character tokens with no gap between them: that keeps
 * `ARRAY<ARRAY<INT>>` simple, since ">>" is never one token.
 */
static int lex_one(struct ddl_parser *p, size_t pos, struct ddl_tok *t,
		   size_t *end)
{
	const char *s = p->src;
	size_t from = pos, i;
	unsigned char c;
	int rc;

	pos = skip_blank(p, pos);
	if (pos == SIZE_MAX)
		return -EINVAL;
	t->gap = pos - from;
	t->off = pos;
	if (pos >= p->len) {
		t->kind = TK_EOF;
		t->len = 0;
		*end = pos;
		return 0;
	}
	c = (unsigned char)s[pos];
	i = pos;
	if ((c == 'x' || c == 'X') && i + 1 < p->len && s[i + 1] == '\'') {
		/* X'0aff': a binary string, before x as an identifier */
		i += 2;
		rc = scan_quoted(p, pos, &i, '\'', "binary string");
		if (rc)
			return rc;
		t->kind = TK_BINSTR;
	} else if ((i += ident_len((const unsigned char *)s + pos,
				    p->len - pos)) > pos) {
		/* a character that cannot go on a name ends it: a word glued
		 * to an emoji is refused at the emoji, below, next time */
		t->kind = TK_IDENT;
	} else if (c == '`') {
		i++;
		rc = scan_quoted(p, pos, &i, '`', "`quoted identifier`");
		if (rc)
			return rc;
		if (i - pos == 2)
			return ddl_error_at(p, pos, -EINVAL,
					    "empty quoted identifier ``");
		t->kind = TK_QIDENT;
	} else if (c == '\'') {
		/* a string; its value is unquoted only if the parser keeps it
		 */
		i++;
		rc = scan_quoted(p, pos, &i, '\'', "string literal");
		if (rc)
			return rc;
		t->kind = TK_STRING;
	} else if (is_digit(c) || (c == '.' && i + 1 < p->len &&
				   is_digit((unsigned char)s[i + 1]))) {
		/* 12, 1.5, .5, 1e3, 2E-2: an exponent needs its digits */
		while (i < p->len && is_digit((unsigned char)s[i]))
			i++;
		if (i < p->len && s[i] == '.') {
			i++;
			while (i < p->len && is_digit((unsigned char)s[i]))
				i++;
		}
		if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
			size_t j = i + 1;

			if (j < p->len && (s[j] == '+' || s[j] == '-'))
				j++;
			if (j < p->len && is_digit((unsigned char)s[j])) {
				while (j < p->len &&
				       is_digit((unsigned char)s[j]))
					j++;
				i = j;
			}
		}
		t->kind = TK_NUMBER;
	} else if (strchr("()<>=,;.[]+-*/%|!:?{}&^~@#", (int)c) && c) {
		/* any operator character: the parser decides what fits */
		i++;
		t->kind = TK_PUNCT;
	} else if (c >= 0x20 && c < 0x7f) {
		return ddl_error_at(p, pos, -EINVAL,
				    "unexpected character '%c'", c);
	} else if (c >= 0x80) {
		size_t k;
		uint32_t cp = code_point((const unsigned char *)s + pos, &k);

		return ddl_error_at(p, pos, -EINVAL,
				    "character '%.*s' (U+%04X) is not a letter "
				    "of Flink SQL: outside quotes it cannot be "
				    "part of a name; back-quote the name "
				    "(`...`)",
				    (int)k, s + pos, (unsigned)cp);
	} else {
		return ddl_error_at(p, pos, -EINVAL,
				    "unexpected control character 0x%02x", c);
	}
	t->len = i - pos;
	*end = i;
	return 0;
}

/*
 * Start lexing `src`: the first token becomes current.  A UTF-8
 * byte-order mark, which some editors write, is skipped.
 */
int ddl_lex_init(struct ddl_parser *p, const char *src, size_t len,
		 struct ddl_table *t, struct cmfs_err *err)
{
	memset(p, 0, sizeof(*p));
	p->src = src;
	p->len = len;
	p->t = t;
	p->err = err;
	/* a byte-order mark from an editor is not part of the statement */
	if (len >= 3 && !memcmp(src, "\xef\xbb\xbf", 3))
		p->pos = 3;
	return ddl_advance(p);
}

/*
 * Move to the next token, taking the look-ahead if one was peeked.  The
 * end of the token left behind is kept: it is where an expression ends.
 */
int ddl_advance(struct ddl_parser *p)
{
	p->prev_end = p->cur.off + p->cur.len;
	if (p->has_nxt) {
		p->cur = p->nxt;
		p->pos = p->nxt.off + p->nxt.len;
		p->has_nxt = 0;
		return 0;
	}
	return lex_one(p, p->pos, &p->cur, &p->pos);
}

/*
 * One token of look-ahead is all the grammar needs (WATERMARK FOR, PRIMARY
 * KEY, a name followed by '(' for a call, DATE followed by a string).
 */
int ddl_peek(struct ddl_parser *p, const struct ddl_tok **out)
{
	size_t end;
	int rc;

	if (!p->has_nxt) {
		rc = lex_one(p, p->pos, &p->nxt, &end);
		if (rc)
			return rc;
		p->has_nxt = 1;
	}
	*out = &p->nxt;
	return 0;
}

/* ---- token tests ------------------------------------------------------ */

/* Is `t` the one-character token `c`? */
int ddl_is_punct(const struct ddl_parser *p, const struct ddl_tok *t, char c)
{
	return t->kind == TK_PUNCT && p->src[t->off] == c;
}

/*
 * Is `t` the keyword `kw` (given in upper case)?  Only unquoted words
 * match, in any case: `TABLE` in back-quotes is a name, never a keyword.
 */
int ddl_is_kw(const struct ddl_parser *p, const struct ddl_tok *t,
	      const char *kw)
{
	size_t i, n = strlen(kw);
	char a, b;

	if (t->kind != TK_IDENT || t->len != n)
		return 0;
	for (i = 0; i < n; i++) {
		a = p->src[t->off + i];
		b = kw[i];
		if (a >= 'a' && a <= 'z')
			a = (char)(a - 'a' + 'A');
		if (a != b)
			return 0;
	}
	return 1;
}

/* The same tests on the current token. */
int ddl_cur_punct(const struct ddl_parser *p, char c)
{
	return ddl_is_punct(p, &p->cur, c);
}

int ddl_cur_kw(const struct ddl_parser *p, const char *kw)
{
	return ddl_is_kw(p, &p->cur, kw);
}

/*
 * The accept functions report "matched" in their result and a lexical
 * error in *rc, so that `if (accept(...) && rc)` reads naturally.
 */
int ddl_accept_punct(struct ddl_parser *p, char c, int *rc)
{
	if (!ddl_cur_punct(p, c))
		return 0;
	*rc = ddl_advance(p);
	return 1;
}

int ddl_accept_kw(struct ddl_parser *p, const char *kw, int *rc)
{
	if (!ddl_cur_kw(p, kw))
		return 0;
	*rc = ddl_advance(p);
	return 1;
}

/* Consume `c` or fail with "expected 'c', found ...". */
int ddl_expect_punct(struct ddl_parser *p, char c)
{
	char what[4] = {'\'', c, '\'', '\0'};

	if (!ddl_cur_punct(p, c))
		return ddl_expected(p, what);
	return ddl_advance(p);
}

/* Consume the keyword `kw` or fail naming it. */
int ddl_expect_kw(struct ddl_parser *p, const char *kw)
{
	if (!ddl_cur_kw(p, kw))
		return ddl_expected(p, kw);
	return ddl_advance(p);
}

/* Is the token after the current one the keyword `kw`? */
int ddl_next_kw(struct ddl_parser *p, const char *kw, int *rc)
{
	const struct ddl_tok *n;

	*rc = ddl_peek(p, &n);
	return !*rc && ddl_is_kw(p, n, kw);
}

/* Enter one level of nesting at the current token, or fail. */
int ddl_enter(struct ddl_parser *p)
{
	if (p->depth >= DDL_MAX_DEPTH)
		return ddl_error_at(p, p->cur.off, -EINVAL,
				    "nested deeper than %d levels",
				    DDL_MAX_DEPTH);
	p->depth++;
	return 0;
}

/* ---- token values ----------------------------------------------------- */

/*
 * Read an unsigned integer literal into *out (at most INT_MAX).  `what`
 * names it for the message.
 */
int ddl_read_uint(struct ddl_parser *p, long *out, const char *what)
{
	const char *s = p->src + p->cur.off;
	long v = 0;
	size_t i;

	if (p->cur.kind != TK_NUMBER)
		return ddl_expected(p, what);
	/* a NUMBER token may be 1.5 or 1e3: only plain digits will do */
	for (i = 0; i < p->cur.len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return ddl_expected(p, what);
		v = v * 10 + (s[i] - '0');
		if (v > INT_MAX)
			return ddl_error_at(p, p->cur.off, -EINVAL,
					    "%s is too large", what);
	}
	*out = v;
	return ddl_advance(p);
}

/* Copy s[0..n) into the arena, turning each doubled `q` into one. */
static int undouble(struct ddl_parser *p, const char *s, size_t n, char q,
		    char **out)
{
	char *d = ddl_arena_alloc(&p->t->arena, n + 1);
	size_t i, k = 0;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		d[k++] = s[i];
		if (s[i] == q)
			i++; /* the second of a doubled quote */
	}
	d[k] = '\0';
	*out = d;
	return 0;
}

/*
 * The name an identifier token stands for: as written when unquoted
 * (Flink keeps the case of identifiers), unescaped when back-quoted.
 */
int ddl_ident_value(struct ddl_parser *p, const struct ddl_tok *t, char **out)
{
	const char *s = p->src + t->off;

	if (t->kind == TK_QIDENT)
		return undouble(p, s + 1, t->len - 2, '`', out);
	*out = ddl_arena_strndup(&p->t->arena, s, t->len);
	return *out ? 0 : -ENOMEM;
}

/* UTF-16 code units of UTF-8 text: how Java, and so Flink, counts. */
static size_t utf16_len(const char *s)
{
	const unsigned char *c;
	size_t n = 0;

	for (c = (const unsigned char *)s; *c; c++)
		if ((*c & 0xc0) != 0x80)
			n += *c >= 0xf0 ? 2 : 1; /* beyond the BMP: a pair */
	return n;
}

/*
 * A name as a declaration writes it: not a reserved word unless
 * back-quoted, and no longer than Flink's parser takes (its planner sets
 * Calcite's identifierMaxLength to 256, counted in Java chars, quoted or
 * not).
 */
int ddl_name_value(struct ddl_parser *p, const struct ddl_tok *t, char **out)
{
	int rc;

	if (t->kind == TK_IDENT && ddl_reserved(p->src + t->off, t->len))
		return ddl_error_at(p, t->off, -EINVAL,
				    "%.*s is a reserved word of Flink SQL: "
				    "to use it as a name, back-quote it: "
				    "`%.*s`",
				    (int)t->len, p->src + t->off, (int)t->len,
				    p->src + t->off);
	if ((rc = ddl_ident_value(p, t, out)))
		return rc;
	if (utf16_len(*out) > DDL_MAX_IDENT)
		return ddl_error_at(p, t->off, -EINVAL,
				    "a name of %zu characters: Flink takes at "
				    "most %d",
				    utf16_len(*out), DDL_MAX_IDENT);
	return 0;
}

/* The text of a 'string' token, its doubled quotes undone. */
int ddl_string_value(struct ddl_parser *p, const struct ddl_tok *t, char **out)
{
	return undouble(p, p->src + t->off + 1, t->len - 2, '\'', out);
}

/*
 * The text of the tokens in [from, to): each run of blanks and comments
 * between two tokens becomes one space; tokens are copied as written.
 */
int ddl_span_text(struct ddl_parser *p, size_t from, size_t to, char **out)
{
	struct ddl_tok t;
	size_t pos = from, end;
	char *d;
	size_t k = 0;
	int rc;

	/* the text can only shrink: each gap becomes at most one space */
	d = ddl_arena_alloc(&p->t->arena, to - from + 1);
	if (!d)
		return -ENOMEM;
	while (pos < to) {
		rc = lex_one(p, pos, &t, &end);
		if (rc)
			return rc;
		if (t.kind == TK_EOF || t.off >= to)
			break;
		if (k && t.gap)
			d[k++] = ' ';
		memcpy(d + k, p->src + t.off, t.len);
		k += t.len;
		pos = end;
	}
	d[k] = '\0';
	*out = d;
	return 0;
}

/* ---- output helpers --------------------------------------------------- */

/* Append s, doubling `q`; with `escape`, control characters as \n etc. */
static int put_quoted(struct buf *b, const char *s, char q, int escape)
{
	const unsigned char *c;
	int rc = buf_addc(b, q);

	for (c = (const unsigned char *)s; !rc && *c; c++) {
		if (*c == (unsigned char)q)
			rc = buf_add(b, (char[2]){q, q}, 2);
		else if (escape && *c == '\n')
			rc = buf_adds(b, "\\n");
		else if (escape && *c == '\t')
			rc = buf_adds(b, "\\t");
		else if (escape && *c == '\\')
			rc = buf_adds(b, "\\\\");
		else if (escape && (*c < 0x20 || *c == 0x7f))
			rc = buf_printf(b, "\\x%02x", *c);
		else
			rc = buf_addc(b, (char)*c);
	}
	return rc ? rc : buf_addc(b, q);
}

/* `name`, its back-quotes doubled: always quoted, so never a keyword. */
int ddl_put_ident(struct buf *b, const char *s, int escape)
{
	return put_quoted(b, s, '`', escape);
}

/* 'text', its quotes doubled. */
int ddl_put_string(struct buf *b, const char *s, int escape)
{
	return put_quoted(b, s, '\'', escape);
}

/* Free text (expressions): only the escaping of control characters. */
int ddl_put_text(struct buf *b, const char *s, int escape)
{
	const unsigned char *c;
	int rc = 0;

	if (!escape)
		return buf_adds(b, s);
	for (c = (const unsigned char *)s; !rc && *c; c++) {
		if (*c == '\n')
			rc = buf_adds(b, "\\n");
		else if (*c == '\t')
			rc = buf_adds(b, "\\t");
		else if (*c == '\\')
			rc = buf_adds(b, "\\\\");
		else if (*c < 0x20 || *c == 0x7f)
			rc = buf_printf(b, "\\x%02x", *c);
		else
			rc = buf_addc(b, (char)*c);
	}
	return rc;
}
