/*
 * export.c - `cmfs export` and `cmfs import`: the store as a directory of
 * CMF-style JSON files and plain bytes, and back.  The format is in
 * export.h.
 *
 * Export reads the catalog through one read snapshot, so a mounted store
 * can be exported while it serves; the bytes of each version are copied
 * and hashed on the way, so a backup never silently holds a corrupt blob.
 * The marker export.json is written last: a directory without it is an
 * export that did not finish, and import refuses it.
 *
 * Import checks and stages everything it reads: each file's bytes are
 * copied to a staging file and hashed, compared with artifact.json, and
 * linked into the blob store; the catalog rows go in with one transaction
 * at the end.  A failure rolls the transaction back and unlinks the blobs
 * that nothing refers to, so the store is as it was.
 *
 * The JSON reader is written for exactly these files: a small recursive
 * descent parser into a tree (objects keep their order), strict about
 * syntax (RFC 8259, UTF-8, integers only, no duplicate keys), with caps on
 * depth, size and node count, and line:col in every error; then a schema
 * check per kind that refuses unknown keys.
 */
#define _GNU_SOURCE
#include "export.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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
#include "ddl.h"
#include "fsck.h"
#include "jar.h"
#include "json.h"
#include "name.h"
#include "store.h"
#include "utf8.h"

#define JSON_MAX_DEPTH 16
#define JSON_MAX_NODES 100000
#define JSON_MAX_KEYS 4096	     /* keys of one object */
#define JSON_MAX_FILE (16u << 20)    /* bytes of one JSON or .sql file */
#define EVENTS_MAX ((size_t)1 << 30) /* bytes of one events file */

#define ANN_UID "cmfs/uid"
#define ANN_NEXT "cmfs/next-version"

/* ---- time: RFC 3339 with nanoseconds ------------------------------------ */

/* Append `ns` (since the epoch) as 2026-11-30T06:30:00.123456789Z. */
static int time_add(struct buf *b, int64_t ns)
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
	return buf_printf(b, "\"%s.%09lldZ\"", s, (long long)frac);
}

/* `n` decimal digits at `s` into *out; 0 or -1. */
static int digits(const char *s, int n, int *out)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/*
 * Parse YYYY-MM-DDTHH:MM:SS[.fraction]Z (UTC only, 1 to 9 fraction
 * digits) into ns.  0 or -1.
 */
static int time_parse(const char *s, int64_t *out)
{
	struct tm tm, back;
	int y, mo, d, h, mi, se, i;
	int64_t frac = 0, scale = 100000000;
	time_t t;

	if (strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' ||
	    digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d) ||
	    s[10] != 'T' || digits(s + 11, 2, &h) || s[13] != ':' ||
	    digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &se))
		return -1;
	i = 19;
	if (s[i] == '.') {
		for (i++; s[i] >= '0' && s[i] <= '9' && scale; i++) {
			frac += (s[i] - '0') * scale;
			scale /= 10;
		}
		if (i == 20)
			return -1;
	}
	if (s[i] != 'Z' || s[i + 1])
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	t = timegm(&tm);
	/* Out-of-range fields (Feb 30, 25:00) come back different. */
	if (!gmtime_r(&t, &back) || back.tm_year != y - 1900 ||
	    back.tm_mon != mo - 1 || back.tm_mday != d || back.tm_hour != h ||
	    back.tm_min != mi || back.tm_sec != se)
		return -1;
	*out = (int64_t)t * 1000000000 + frac;
	return 0;
}

/* ---- UTF-8 -------------------------------------------------------------- */

/*
 * Length of the UTF-8 sequence at s[0..n) (n > 0), or 0 if it is not a
 * valid, shortest-form encoding of a Unicode scalar value.
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t i = 0;

	return utf8_next(s, n, &i) < 0 ? 0 : i;
}

/* ---- JSON writing ------------------------------------------------------- */

/* Append `s` as a JSON string.  -EINVAL for text that is not UTF-8. */
static int jw_str(struct buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, k;
	int rc = buf_addc(b, '"');

	while (!rc && i < n) {
		unsigned char c = p[i];

		if (c == '"' || c == '\\') {
			rc = buf_addc(b, '\\');
			if (!rc)
				rc = buf_addc(b, (char)c);
			i++;
		} else if (c < 0x20) {
			rc = c == '\n'	 ? buf_adds(b, "\\n")
			     : c == '\t' ? buf_adds(b, "\\t")
			     : c == '\r' ? buf_adds(b, "\\r")
					 : buf_printf(b, "\\u%04x", c);
			i++;
		} else if (!(k = utf8_len(p + i, n - i))) {
			return -EINVAL;
		} else {
			rc = buf_add(b, p + i, k);
			i += k;
		}
	}
	return rc ? rc : buf_addc(b, '"');
}

/* Append `"key": ` at `indent` spaces. */
static int jw_key(struct buf *b, int indent, const char *key)
{
	int rc = buf_printf(b, "%*s", indent, "");

	if (!rc)
		rc = jw_str(b, key);
	return rc ? rc : buf_adds(b, ": ");
}

/*
 * Append a metadata object: name (when given), creationTimestamp, labels
 * (n of them) and annotations (NULL-terminated key, value pairs).
 */
static int jw_metadata(struct buf *b, const char *name, int64_t ns,
		       size_t nlabels, char *const *keys, char *const *values,
		       const char *const *ann)
{
	size_t i;
	int rc = buf_adds(b, "  \"metadata\": {\n");

	if (!rc && name && !(rc = jw_key(b, 4, "name")) &&
	    !(rc = jw_str(b, name)))
		rc = buf_adds(b, ",\n");
	if (!rc && !(rc = jw_key(b, 4, "creationTimestamp")) &&
	    !(rc = time_add(b, ns)))
		rc = buf_adds(b, nlabels || (ann && ann[0]) ? ",\n" : "\n");
	if (!rc && nlabels && !(rc = jw_key(b, 4, "labels")))
		rc = buf_adds(b, "{\n");
	for (i = 0; !rc && i < nlabels; i++) {
		if (!(rc = jw_key(b, 6, keys[i])) &&
		    !(rc = jw_str(b, values[i])))
			rc = buf_adds(b, i + 1 < nlabels ? ",\n" : "\n");
	}
	if (!rc && nlabels)
		rc = buf_adds(b, ann && ann[0] ? "    },\n" : "    }\n");
	if (!rc && ann && ann[0] && !(rc = jw_key(b, 4, "annotations")))
		rc = buf_adds(b, "{\n");
	for (i = 0; !rc && ann && ann[i]; i += 2) {
		if (!(rc = jw_key(b, 6, ann[i])) &&
		    !(rc = jw_str(b, ann[i + 1])))
			rc = buf_adds(b, ann[i + 2] ? ",\n" : "\n");
	}
	if (!rc && ann && ann[0])
		rc = buf_adds(b, "    }\n");
	return rc ? rc : buf_adds(b, "  },\n");
}

int export_artifact_json(struct buf *out, const struct export_artifact *a)
{
	char uid[16], next[24];
	const char *ann[] = {ANN_UID, uid, ANN_NEXT, next, NULL};
	int rc;

	snprintf(uid, sizeof(uid), "%u", a->uid);
	snprintf(next, sizeof(next), "%lld", (long long)a->next);
	if (!a->next)
		ann[2] = NULL;
	rc = buf_printf(out,
			"{\n  \"apiVersion\": \"%s\",\n"
			"  \"kind\": \"Artifact\",\n",
			EXPORT_API_CMF);
	if (!rc)
		rc = jw_metadata(out, a->name, a->mtime, a->nlabels, a->keys,
				 a->values, ann);
	if (!rc)
		rc = buf_printf(out,
				"  \"spec\": {},\n"
				"  \"status\": {\n"
				"    \"version\": %lld,\n"
				"    \"size\": %llu,\n"
				"    \"checksum\": {\n"
				"      \"sha256\": \"%s\"\n"
				"    }\n"
				"  }\n"
				"}\n",
				(long long)a->version,
				(unsigned long long)a->size, a->sha256);
	return rc;
}

/* ---- JSON reading ------------------------------------------------------- */

enum jtype { J_NULL, J_BOOL, J_INT, J_STR, J_ARR, J_OBJ };

struct jnode {
	enum jtype type;
	int line, col;	  /* where the value starts, 1-based */
	char *s;	  /* J_STR: NUL-terminated (no NUL inside) */
	int64_t i;	  /* J_INT; J_BOOL: 0 or 1 */
	size_t n;	  /* J_ARR, J_OBJ: members */
	char **keys;	  /* J_OBJ: keys, in file order */
	struct jnode **v; /* J_ARR, J_OBJ: values */
};

struct jparser {
	const char *p, *end;
	const char *line_start;
	int line;
	int depth;
	size_t nodes;
	struct cmfs_err *err;
};

static void jfree(struct jnode *j)
{
	size_t i;

	if (!j)
		return;
	for (i = 0; i < j->n; i++) {
		if (j->keys)
			free(j->keys[i]);
		jfree(j->v[i]);
	}
	free(j->keys);
	free(j->v);
	free(j->s);
	free(j);
}

/* The column of `at`: characters since the start of its line, 1-based. */
static int column(const struct jparser *P, const char *at)
{
	const char *q;
	int col = 1;

	for (q = P->line_start; q < at; q++)
		col += ((unsigned char)*q & 0xc0) != 0x80;
	return col;
}

/* Record "line:col: reason" at `at`; returns -EINVAL (or `code`). */
static int jerr(struct jparser *P, const char *at, int code, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

static int jerr(struct jparser *P, const char *at, int code, const char *fmt,
		...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cmfs_err_set(P->err, code, "%d:%d: %s", P->line, column(P, at),
			    msg);
}

static void skip_ws(struct jparser *P)
{
	while (P->p < P->end) {
		if (*P->p == '\n') {
			P->line++;
			P->line_start = P->p + 1;
		} else if (*P->p != ' ' && *P->p != '\t' && *P->p != '\r') {
			return;
		}
		P->p++;
	}
}

/* A character for messages: printable or its code. */
static const char *shown(const struct jparser *P, char *tmp, size_t n)
{
	unsigned char c;

	if (P->p >= P->end)
		return "the end of the file";
	c = (unsigned char)*P->p;
	if (c >= 0x21 && c < 0x7f)
		snprintf(tmp, n, "'%c'", c);
	else
		snprintf(tmp, n, "byte 0x%02x", c);
	return tmp;
}

/*
 * The escape at P->p (just after the backslash at `esc`), appended to
 * `b` as UTF-8: \uXXXX must be a scalar value (a surrogate only as half
 * of a pair), and not NUL, since strings end up as C strings.
 */
static int parse_escape(struct jparser *P, const char *esc, struct buf *b)
{
	static const char plain[] = "\"\\/bfnrt", means[] = "\"\\/\b\f\n\r\t";
	const char *k;
	char utf8[4];
	unsigned u;

	if (P->p >= P->end)
		return jerr(P, esc, -EINVAL, "unterminated string");
	if (*P->p != 'u') {
		k = strchr(plain, *P->p);
		if (!k || !*P->p)
			return jerr(P, esc, -EINVAL, "unknown escape \\%c",
				    *P->p);
		P->p++;
		return buf_addc(b, means[k - plain]);
	}
	P->p++;
	switch (json_unicode(&P->p, P->end, &u)) {
	case 0:
		return buf_add(b, utf8, json_utf8(utf8, u));
	case JSON_BAD_HEX:
		return jerr(P, esc, -EINVAL, "\\u needs four hex digits");
	case JSON_LONE_SURROGATE:
		return jerr(P, esc, -EINVAL, "a lone UTF-16 surrogate");
	default:
		return jerr(P, esc, -EINVAL, "\\u0000 is not allowed");
	}
}

/* A string at P->p (the opening quote); *out is malloc'd. */
static int parse_string(struct jparser *P, char **out)
{
	struct buf b = BUF_INIT(JSON_MAX_FILE);
	const char *start = P->p;
	unsigned char c;
	size_t k;
	int rc = 0;

	P->p++;
	while (!rc) {
		if (P->p >= P->end) {
			rc = jerr(P, start, -EINVAL, "unterminated string");
			break;
		}
		c = (unsigned char)*P->p;
		if (c == '"') {
			P->p++;
			break;
		}
		if (c < 0x20) {
			rc = jerr(P, P->p, -EINVAL,
				  "control character 0x%02x in a string "
				  "(write it as an escape)",
				  c);
		} else if (c == '\\') {
			P->p++;
			rc = parse_escape(P, P->p - 1, &b);
		} else if (!(k = utf8_len((const unsigned char *)P->p,
					  (size_t)(P->end - P->p)))) {
			rc = jerr(P, P->p, -EINVAL,
				  "invalid UTF-8 (byte 0x%02x)", c);
		} else {
			rc = buf_add(&b, P->p, k);
			P->p += k;
		}
	}
	if (!rc && !(*out = buf_take(&b, NULL)))
		rc = -ENOMEM;
	if (rc == -ENOMEM || rc == -EFBIG)
		cmfs_err_set(P->err, rc, "%s",
			     rc == -ENOMEM ? "out of memory"
					   : "string too long");
	buf_release(&b);
	return rc;
}

/* An integer: -?(0|[1-9][0-9]*), within int64. */
static int parse_int(struct jparser *P, int64_t *out)
{
	const char *start = P->p;
	int neg = 0;
	uint64_t v = 0;

	if (*P->p == '-') {
		neg = 1;
		P->p++;
	}
	if (P->p >= P->end || *P->p < '0' || *P->p > '9')
		return jerr(P, start, -EINVAL, "a number needs digits");
	if (*P->p == '0' && P->p + 1 < P->end && P->p[1] >= '0' &&
	    P->p[1] <= '9')
		return jerr(P, start, -EINVAL, "a number with a leading 0");
	while (P->p < P->end && *P->p >= '0' && *P->p <= '9') {
		if (v > (UINT64_C(1) << 63) / 10)
			return jerr(P, start, -EINVAL, "number out of range");
		v = v * 10 + (uint64_t)(*P->p++ - '0');
	}
	if (P->p < P->end && (*P->p == '.' || *P->p == 'e' || *P->p == 'E'))
		return jerr(P, start, -EINVAL,
			    "only integers are expected in these files");
	if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
		return jerr(P, start, -EINVAL, "number out of range");
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

static int parse_value(struct jparser *P, struct jnode **out);

/* Append `v` (and `key`, for an object) to `j`. */
static int add_member(struct jnode *j, char *key, struct jnode *v)
{
	struct jnode **nv = realloc(j->v, (j->n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	j->v = nv;
	if (j->type == J_OBJ) {
		char **nk = realloc(j->keys, (j->n + 1) * sizeof(*nk));

		if (!nk)
			return -ENOMEM;
		j->keys = nk;
		j->keys[j->n] = key;
	}
	j->v[j->n++] = v;
	return 0;
}

/* The members of an array or object, P->p after the opening bracket. */
static int parse_members(struct jparser *P, struct jnode *j)
{
	char close = j->type == J_OBJ ? '}' : ']', tmp[16];
	struct jnode *v;
	char *key;
	size_t i;
	int rc;

	skip_ws(P);
	if (P->p < P->end && *P->p == close) {
		P->p++;
		return 0;
	}
	for (;;) {
		key = NULL;
		skip_ws(P);
		if (j->type == J_OBJ) {
			const char *at = P->p;

			if (P->p >= P->end || *P->p != '"')
				return jerr(P, P->p, -EINVAL,
					    "expected a key string, found %s",
					    shown(P, tmp, sizeof(tmp)));
			if (j->n == JSON_MAX_KEYS)
				return jerr(P, at, -EFBIG,
					    "more than %d keys in an object",
					    JSON_MAX_KEYS);
			if ((rc = parse_string(P, &key)))
				return rc;
			for (i = 0; i < j->n; i++)
				if (!strcmp(j->keys[i], key)) {
					free(key);
					return jerr(P, at, -EINVAL,
						    "duplicate key \"%.80s\"",
						    j->keys[i]);
				}
			skip_ws(P);
			if (P->p >= P->end || *P->p != ':') {
				free(key);
				return jerr(P, P->p, -EINVAL,
					    "expected ':', found %s",
					    shown(P, tmp, sizeof(tmp)));
			}
			P->p++;
		}
		if ((rc = parse_value(P, &v))) {
			free(key);
			return rc;
		}
		if (add_member(j, key, v)) {
			free(key);
			jfree(v);
			return cmfs_err_set(P->err, -ENOMEM, "out of memory");
		}
		skip_ws(P);
		if (P->p < P->end && *P->p == ',') {
			P->p++;
			continue;
		}
		if (P->p < P->end && *P->p == close) {
			P->p++;
			return 0;
		}
		return jerr(P, P->p, -EINVAL, "expected ',' or '%c', found %s",
			    close, shown(P, tmp, sizeof(tmp)));
	}
}

static int parse_value(struct jparser *P, struct jnode **out)
{
	struct jnode *j;
	char tmp[16];
	int rc = 0;

	skip_ws(P);
	if (++P->nodes > JSON_MAX_NODES)
		return jerr(P, P->p, -EFBIG, "more than %d values",
			    JSON_MAX_NODES);
	j = calloc(1, sizeof(*j));
	if (!j)
		return cmfs_err_set(P->err, -ENOMEM, "out of memory");
	j->line = P->line;
	j->col = column(P, P->p);
	if (P->p >= P->end) {
		rc = jerr(P, P->p, -EINVAL,
			  "expected a value, found the end "
			  "of the file");
	} else if (*P->p == '{' || *P->p == '[') {
		j->type = *P->p == '{' ? J_OBJ : J_ARR;
		if (++P->depth > JSON_MAX_DEPTH)
			rc = jerr(P, P->p, -EINVAL, "nested deeper than %d",
				  JSON_MAX_DEPTH);
		P->p++;
		if (!rc)
			rc = parse_members(P, j);
		P->depth--;
	} else if (*P->p == '"') {
		j->type = J_STR;
		rc = parse_string(P, &j->s);
	} else if (*P->p == '-' || (*P->p >= '0' && *P->p <= '9')) {
		j->type = J_INT;
		rc = parse_int(P, &j->i);
	} else if (P->end - P->p >= 4 && !memcmp(P->p, "true", 4)) {
		j->type = J_BOOL;
		j->i = 1;
		P->p += 4;
	} else if (P->end - P->p >= 5 && !memcmp(P->p, "false", 5)) {
		j->type = J_BOOL;
		P->p += 5;
	} else if (P->end - P->p >= 4 && !memcmp(P->p, "null", 4)) {
		P->p += 4;
	} else {
		rc = jerr(P, P->p, -EINVAL, "expected a value, found %s",
			  shown(P, tmp, sizeof(tmp)));
	}
	if (rc) {
		jfree(j);
		return rc;
	}
	*out = j;
	return 0;
}

/* Parse a whole document. */
static int json_parse(struct jnode **out, const char *text, size_t len,
		      struct cmfs_err *err)
{
	struct jparser P = {text, text + len, text, 1, 0, 0, err};
	char tmp[16];
	int rc;

	*out = NULL;
	if (len > JSON_MAX_FILE)
		return cmfs_err_set(err, -EFBIG, "more than %u bytes",
				    JSON_MAX_FILE);
	if ((rc = parse_value(&P, out)))
		return rc;
	skip_ws(&P);
	if (P.p < P.end) {
		rc = jerr(&P, P.p, -EINVAL, "text after the value: %s",
			  shown(&P, tmp, sizeof(tmp)));
		jfree(*out);
		*out = NULL;
	}
	return rc;
}

/* ---- the schema of each kind -------------------------------------------- */

static const char *jtype_name(enum jtype t)
{
	static const char *const names[] = {"null",	  "a boolean",
					    "an integer", "a string",
					    "an array",	  "an object"};

	return names[t];
}

/* Member `key` of object `o`, or NULL. */
static const struct jnode *jget(const struct jnode *o, const char *key)
{
	size_t i;

	for (i = 0; o && i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->v[i];
	return NULL;
}

static int jbad(const struct jnode *j, struct cmfs_err *err, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));

/* "line:col: reason" at node `j`; -EINVAL. */
static int jbad(const struct jnode *j, struct cmfs_err *err, const char *fmt,
		...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cmfs_err_set(err, -EINVAL, "%d:%d: %s", j->line, j->col, msg);
}

/* `j` must be of `type`; `what` names it in the message. */
static int jtype(const struct jnode *j, enum jtype type, const char *what,
		 struct cmfs_err *err)
{
	if (j->type != type)
		return jbad(j, err, "%s must be %s, not %s", what,
			    jtype_name(type), jtype_name(j->type));
	return 0;
}

/*
 * Object `o` (called `what`) may hold only the keys in `allowed`
 * (NULL-terminated); those marked required (a leading '!') must be there.
 */
static int jkeys(const struct jnode *o, const char *what,
		 const char *const *allowed, struct cmfs_err *err)
{
	size_t i, k;
	int rc = jtype(o, J_OBJ, what, err);

	for (i = 0; !rc && i < o->n; i++) {
		for (k = 0; allowed[k]; k++)
			if (!strcmp(o->keys[i],
				    allowed[k] + (allowed[k][0] == '!')))
				break;
		if (!allowed[k])
			rc = jbad(o->v[i], err, "unknown key \"%.80s\" in %s",
				  o->keys[i], what);
	}
	for (k = 0; !rc && allowed[k]; k++)
		if (allowed[k][0] == '!' && !jget(o, allowed[k] + 1))
			rc = jbad(o, err, "%s lacks \"%s\"", what,
				  allowed[k] + 1);
	return rc;
}

/* String member `key` of `o` (may be missing: *out = NULL). */
static int jstr(const struct jnode *o, const char *key, const char **out,
		struct cmfs_err *err)
{
	const struct jnode *j = jget(o, key);

	*out = NULL;
	if (!j)
		return 0;
	if (j->type != J_STR)
		return jbad(j, err, "\"%s\" must be a string, not %s", key,
			    jtype_name(j->type));
	*out = j->s;
	return 0;
}

/* Integer member `key` of `o`, at least `min`. */
static int jint(const struct jnode *o, const char *key, int64_t min,
		int64_t *out, struct cmfs_err *err)
{
	const struct jnode *j = jget(o, key);

	if (!j)
		return jbad(o, err, "lacks \"%s\"", key);
	if (j->type != J_INT)
		return jbad(j, err, "\"%s\" must be an integer, not %s", key,
			    jtype_name(j->type));
	if (j->i < min)
		return jbad(j, err, "\"%s\" must be at least %lld", key,
			    (long long)min);
	*out = j->i;
	return 0;
}

/* apiVersion and kind of document `top`. */
static int jkind(const struct jnode *top, const char *api, const char *kind,
		 struct cmfs_err *err)
{
	const char *a, *k;
	int rc = jtype(top, J_OBJ, "the document", err);

	if (!rc && !(rc = jstr(top, "apiVersion", &a, err)) &&
	    (!a || strcmp(a, api)))
		rc = jbad(top, err, "apiVersion must be \"%s\"", api);
	if (!rc && !(rc = jstr(top, "kind", &k, err)) &&
	    (!k || strcmp(k, kind)))
		rc = jbad(top, err, "kind must be \"%s\"", kind);
	return rc;
}

/* A decimal uid (0 .. 2^32-1) in a string. */
static int parse_uid(const struct jnode *at, const char *s, uint32_t *out,
		     struct cmfs_err *err)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || v > UINT32_MAX || *s == '-' || *s == '+' ||
	    *s == ' ')
		return jbad(at, err, "\"%s\" is not a uid", s);
	*out = (uint32_t)v;
	return 0;
}

/*
 * The common metadata: name (required when `name` is non-NULL, copied to
 * name[namelen]), creationTimestamp into *ns (-1 when missing), the
 * "cmfs/uid" annotation into *uid (0 when missing).  `labels` and
 * `next` are for artifacts: the labels object and "cmfs/next-version".
 */
static int jmeta(const struct jnode *top, char *name, size_t namelen,
		 int64_t *ns, uint32_t *uid, const struct jnode **labels,
		 int64_t *next, struct cmfs_err *err)
{
	static const char *const with_name[] = {"!name", "creationTimestamp",
						"labels", "annotations", NULL};
	static const char *const ann_keys[] = {ANN_NEXT, ANN_UID, NULL};
	const struct jnode *m = jget(top, "metadata"), *ann;
	const char *s;
	char *end;
	int rc;

	*ns = -1;
	*uid = 0;
	if (!m)
		return jbad(top, err, "lacks \"metadata\"");
	rc = jkeys(m, "metadata", with_name + !name, err);
	if (!rc && !labels && jget(m, "labels"))
		rc = jbad(jget(m, "labels"), err, "labels are for artifacts");
	if (!rc && name && !(rc = jstr(m, "name", &s, err))) {
		if (strlen(s) >= namelen)
			return jbad(jget(m, "name"), err, "name too long");
		memcpy(name, s, strlen(s) + 1);
	}
	if (!rc && !(rc = jstr(m, "creationTimestamp", &s, err)) && s &&
	    time_parse(s, ns))
		rc = jbad(jget(m, "creationTimestamp"), err,
			  "creationTimestamp \"%.40s\" is not RFC 3339 "
			  "(2026-11-30T06:30:00.123456789Z)",
			  s);
	if (rc)
		return rc;
	if (labels)
		*labels = jget(m, "labels");
	ann = jget(m, "annotations");
	if (!ann)
		return 0;
	if ((rc = jkeys(ann, "annotations", next ? ann_keys : ann_keys + 1,
			err)))
		return rc;
	if (!next && jget(ann, ANN_NEXT))
		return jbad(ann, err, "%s is for artifacts", ANN_NEXT);
	if (!(rc = jstr(ann, ANN_UID, &s, err)) && s)
		rc = parse_uid(jget(ann, ANN_UID), s, uid, err);
	if (!rc && next && !(rc = jstr(ann, ANN_NEXT, &s, err)) && s) {
		errno = 0;
		*next = strtoll(s, &end, 10);
		if (!*s || *end || errno || *next < 2 || *s == '+')
			rc = jbad(jget(ann, ANN_NEXT), err,
				  "\"%s\" is not a version number", s);
	}
	return rc;
}

/* spec must be absent or {}. */
static int jempty_spec(const struct jnode *top, struct cmfs_err *err)
{
	static const char *const none[] = {NULL};
	const struct jnode *s = jget(top, "spec");

	return s ? jkeys(s, "spec", none, err) : 0;
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

/* 64 lower-case hex digits. */
static int is_sha(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return 0;
	return i == 64;
}

/* The labels object into a->keys/values, checked. */
static int read_labels(struct export_artifact *a, const struct jnode *l,
		       struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	size_t i;
	int rc = jtype(l, J_OBJ, "labels", err);

	if (rc)
		return rc;
	a->keys = calloc(l->n + 1, sizeof(char *));
	a->values = calloc(l->n + 1, sizeof(char *));
	if (!a->keys || !a->values)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < l->n; i++) {
		const struct jnode *v = l->v[i];

		if ((rc = jtype(v, J_STR, "a label value", err)))
			return rc;
		if (name_label_key_check(l->keys[i], &e2) ||
		    name_label_value_check(l->keys[i], v->s, strlen(v->s), &e2))
			return jbad(v, err, "%s", cmfs_err_msg(&e2));
		a->keys[i] = strdup(l->keys[i]);
		a->values[i] = strdup(v->s);
		a->nlabels++;
		if (!a->keys[i] || !a->values[i])
			return cmfs_err_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

int export_artifact_parse(struct export_artifact *out, const char *text,
			  size_t len, struct cmfs_err *err)
{
	static const char *const top_keys[] = {
		"!apiVersion", "!kind", "!metadata", "spec", "status", NULL};
	static const char *const status_keys[] = {"!version", "!size",
						  "!checksum", NULL};
	static const char *const sum_keys[] = {"!sha256", NULL};
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct export_artifact a;
	const struct jnode *labels = NULL, *st, *sum;
	struct jnode *top = NULL;
	const char *sha;
	int64_t size = 0;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(out, 0, sizeof(*out));
	if ((rc = json_parse(&top, text, len, err)))
		return rc;
	rc = jkind(top, EXPORT_API_CMF, "Artifact", err);
	if (!rc)
		rc = jkeys(top, "the document", top_keys, err);
	if (!rc)
		rc = jmeta(top, a.name, sizeof(a.name), &a.mtime, &a.uid,
			   &labels, &a.next, err);
	if (!rc && name_artifact_check(a.name, &e2))
		rc = jbad(jget(jget(top, "metadata"), "name"), err, "%s",
			  cmfs_err_msg(&e2));
	if (!rc)
		rc = jempty_spec(top, err);
	if (!rc && labels)
		rc = read_labels(&a, labels, err);
	st = jget(top, "status");
	if (!rc && st && !(rc = jkeys(st, "status", status_keys, err)) &&
	    !(rc = jint(st, "version", 1, &a.version, err)) &&
	    !(rc = jint(st, "size", 0, &size, err))) {
		sum = jget(st, "checksum");
		if (!(rc = jkeys(sum, "checksum", sum_keys, err)) &&
		    !(rc = jstr(sum, "sha256", &sha, err))) {
			if (!is_sha(sha))
				rc = jbad(jget(sum, "sha256"), err,
					  "sha256 must be 64 lower-case hex "
					  "digits");
			else
				memcpy(a.sha256, sha, 65);
		}
		a.size = (uint64_t)size;
	}
	if (!rc && a.next && a.version && a.next <= a.version)
		rc = jbad(top, err, "%s %lld is not above version %lld",
			  ANN_NEXT, (long long)a.next, (long long)a.version);
	jfree(top);
	if (rc) {
		export_artifact_release(&a);
		return rc;
	}
	*out = a;
	return 0;
}

/* ---- files -------------------------------------------------------------- */

/*
 * The name of the bytes file in a version directory: the artifact's name,
 * except for an artifact named artifact.json, whose bytes would take the
 * place of the metadata.
 */
static const char *bytes_name(const char *name)
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

/* Read all of file `path` (at most `cap` bytes) into `out`. */
static int read_file(const char *path, size_t cap, struct buf *out,
		     struct cmfs_err *err)
{
	char chunk[65536];
	ssize_t n;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cmfs_err_set(err, -errno, "%s: %s", path,
				    strerror(errno));
	out->cap = cap;
	while (!rc && (n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		rc = n < 0 ? -errno : buf_add(out, chunk, (size_t)n);
	}
	close(fd);
	if (rc == -EFBIG)
		return cmfs_err_set(err, rc, "%s: more than %zu bytes", path,
				    cap);
	if (rc)
		return cmfs_err_set(err, rc, "%s: %s", path, strerror(-rc));
	return 0;
}

/* snprintf into a PATH_MAX buffer; -ENAMETOOLONG when it does not fit. */
static int path_fmt(char *out, struct cmfs_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int path_fmt(char *out, struct cmfs_err *err, const char *fmt, ...)
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
		rc = path_fmt(path, err, "%s/%s", adir, art->name);
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
		if ((rc = path_fmt(path, err, "%s/%s/%lld", adir, art->name,
				   (long long)v->n)) ||
		    (rc = make_dir(path, err)))
			break;
		if ((rc = export_artifact_json(&d->b, &a))) {
			cmfs_err_set(err, rc, "%s: cannot write its JSON",
				     art->name);
			break;
		}
		if ((rc = path_fmt(path, err, "%s/%s/%lld/artifact.json", adir,
				   art->name, (long long)v->n)) ||
		    (rc = write_file(path, d->b.data, d->b.len, err)) ||
		    (rc = path_fmt(path, err, "%s/%s/%lld/%s", adir, art->name,
				   (long long)v->n, bytes_name(art->name))) ||
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
	size_t i;
	int rc;

	snprintf(uid, sizeof(uid), "%u", t->uid);
	rc = buf_printf(b,
			"{\n  \"apiVersion\": \"%s\",\n"
			"  \"kind\": \"Table\",\n",
			EXPORT_API_CMFS);
	if (!rc)
		rc = jw_metadata(b, t->name, t->mtime, 0, NULL, NULL, ann);
	if (!rc)
		rc = buf_adds(b, "  \"spec\": {\n    \"options\": {");
	for (i = 0; !rc && i < def->nopts; i++) {
		rc = buf_adds(b, i ? ",\n" : "\n");
		if (!rc && !(rc = jw_key(b, 6, def->keys[i])))
			rc = jw_str(b, def->values[i]);
	}
	if (!rc)
		rc = buf_adds(b, def->nopts ? "\n    }" : "}");
	if (!rc && def->like_ddl && !(rc = buf_adds(b, ",\n")) &&
	    !(rc = jw_key(b, 4, "like")))
		rc = jw_str(b, def->like_ddl);
	return rc ? rc : buf_adds(b, "\n  }\n}\n");
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
	if (!rc && !(rc = path_fmt(path, err, "%s/%s.sql", tdir, t->name)))
		rc = write_file(path, def.ddl, strlen(def.ddl), err);
	if (!rc && !(rc = path_fmt(path, err, "%s/%s.json", tdir, t->name)))
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
	uint64_t size = 0;
	size_t i;
	int rc;

	snprintf(uid, sizeof(uid), "%u", e->uid);
	if ((rc = path_fmt(edir, err, "%s/envs/%s", dir, e->name)) ||
	    (rc = make_dir(edir, err)))
		return rc;
	buf_reset(&d->b);
	rc = buf_printf(&d->b,
			"{\n  \"apiVersion\": \"%s\",\n"
			"  \"kind\": \"Environment\",\n",
			EXPORT_API_CMF);
	if (!rc)
		rc = jw_metadata(&d->b, e->name, e->ctime, 0, NULL, NULL, ann);
	if (!rc)
		rc = buf_adds(&d->b, "  \"spec\": {}\n}\n");
	if (rc)
		return cmfs_err_set(err, rc, "out of memory");
	if ((rc = path_fmt(sub, err, "%s/environment.json", edir)) ||
	    (rc = write_file(sub, d->b.data, d->b.len, err)))
		return rc;
	rc = path_fmt(sub, err, "%s/artifacts", edir);
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
	    !(rc = path_fmt(sub, err, "%s/next-versions", edir)))
		rc = write_file(sub, d->b.data, d->b.len, err);
	if (!rc && !(rc = path_fmt(sub, err, "%s/tables", edir)))
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
	if (!rc && size && !(rc = path_fmt(sub, err, "%s/events", edir)))
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
	char path[PATH_MAX];
	size_t i;
	int rc;

	buf_reset(&d->b);
	rc = buf_printf(&d->b,
			"{\n  \"apiVersion\": \"%s\",\n"
			"  \"kind\": \"Export\",\n",
			EXPORT_API_CMFS);
	if (!rc)
		rc = jw_metadata(&d->b, NULL, clock_now_ns(), 0, NULL, NULL, NULL);
	if (!rc)
		rc = buf_printf(&d->b,
				"  \"spec\": {\n    \"format\": %d,\n"
				"    \"cmfsVersion\": \"%s\",\n"
				"    \"environments\": [",
				EXPORT_FORMAT, CMFS_VERSION);
	for (i = 0; !rc && i < envs->n; i++) {
		rc = buf_adds(&d->b, i ? ", " : "");
		if (!rc)
			rc = jw_str(
				&d->b,
				((const struct catalog_env *)envs->v)[i].name);
	}
	if (!rc)
		rc = buf_adds(&d->b, "]\n  }\n}\n");
	if (rc)
		return cmfs_err_set(err, rc, "out of memory");
	if ((rc = path_fmt(path, err, "%s/export.json", dir)))
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
	if ((rc = path_fmt(db, err, "%s/catalog.db", path)))
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
	if (!rc && !(rc = path_fmt(path, err, "%s/envs", dir)))
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

/* ---- load --------------------------------------------------------------- */

/* The state of one load. */
struct load {
	const char *dir;
	struct store *store;
	struct catalog *cat;
	struct export_stats st;
	uint64_t inline_max;	      /* blobs this small: in the catalog */
	char (*blobs)[STORE_SHA_HEX]; /* blobs linked by this load */
	size_t nblobs;
};

/* Parse JSON file `path` into *out, errors prefixed with the path. */
static int load_json(const char *path, struct jnode **out, struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(JSON_MAX_FILE);
	int rc = read_file(path, JSON_MAX_FILE, &b, err);

	if (!rc && (rc = json_parse(out, b.data ? b.data : "", b.len, &e2)))
		cmfs_err_set(err, rc, "%s:%s", path, cmfs_err_msg(&e2));
	buf_release(&b);
	return rc;
}

/* Run a schema check `rc` made with `e2`; prefix its message with path. */
static int at_file(int rc, const char *path, const struct cmfs_err *e2,
		   struct cmfs_err *err)
{
	if (!rc)
		return 0;
	return cmfs_err_set(err, rc, "%s:%s", path, cmfs_err_msg(e2));
}

/* Entries of directory `path` but . and .., sorted; free with free_names. */
static int list_dir(const char *path, struct dirent ***out, int *n,
		    struct cmfs_err *err)
{
	*n = scandir(path, out, NULL, alphasort);
	if (*n < 0) {
		*out = NULL;
		*n = 0;
		if (errno == ENOENT)
			return 0;
		return cmfs_err_set(err, -errno, "%s: %s", path,
				    strerror(errno));
	}
	return 0;
}

static void free_names(struct dirent **names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int is_dot(const char *s)
{
	return !strcmp(s, ".") || !strcmp(s, "..");
}

/* Remember blob `sha` as linked by this load. */
static int note_blob(struct load *L, const char *sha)
{
	char(*b)[STORE_SHA_HEX] =
		realloc(L->blobs, (L->nblobs + 1) * sizeof(*b));

	if (!b)
		return -ENOMEM;
	L->blobs = b;
	memcpy(L->blobs[L->nblobs++], sha, STORE_SHA_HEX);
	return 0;
}

/*
 * The bytes in `path` as the load keeps them: a blob of at most
 * inline_max bytes into *mem (malloc'd; it goes into the catalog, as an
 * upload's would), any other into a staging file *fd.  Their size and
 * SHA-256 into *size and hex.
 */
static int load_read(struct load *L, const char *path, int src, void **mem,
		     int *fd, uint64_t *size, char *hex, struct cmfs_err *err)
{
	struct stat st;
	ssize_t n;
	int rc;

	if (fstat(src, &st))
		return cmfs_err_set(err, -errno, "%s: %s", path,
				    strerror(errno));
	*size = (uint64_t)st.st_size;
	if (!L->inline_max || *size > L->inline_max) {
		if ((rc = store_stage(L->store, fd, err)) ||
		    (rc = store_copy_fd(src, *fd, *size, err)))
			return rc;
		return store_hash_fd(hex, *fd, *size, err);
	}
	if (!(*mem = malloc(*size ? (size_t)*size : 1)))
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	/* Short only if it shrank since its size was taken. */
	if ((n = store_pread_full(src, *mem, (size_t)*size, 0)) < 0)
		return cmfs_err_set(err, (int)n, "%s: %s", path,
				    strerror((int)-n));
	*size = (uint64_t)n;
	store_hash_mem(hex, *mem, (size_t)n);
	return 0;
}

/*
 * Read the bytes in `path`, check them against `a` (filling size and
 * sha256 where artifact.json has no status), inspect a *.jar, and put
 * the blob into the catalog (inline_max) or link it into the store.
 */
static int load_bytes(struct load *L, const char *path,
		      struct export_artifact *a, struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct jar_report *rep = NULL;
	struct jar_limits lim;
	char hex[STORE_SHA_HEX];
	uint64_t size = 0;
	void *mem = NULL;
	int src, fd = -1, rc;

	src = open(path, O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return cmfs_err_set(err, -errno, "%s: %s", path,
				    strerror(errno));
	if ((rc = load_read(L, path, src, &mem, &fd, &size, hex, err)))
		goto out;
	if (a->version && a->sha256[0] &&
	    (strcmp(hex, a->sha256) || a->size != size)) {
		rc = cmfs_err_set(err, -EINVAL,
				  "%s: %llu bytes with SHA-256 %s, but "
				  "artifact.json says %llu bytes, %s",
				  path, (unsigned long long)size, hex,
				  (unsigned long long)a->size, a->sha256);
		goto out;
	}
	memcpy(a->sha256, hex, sizeof(hex));
	a->size = size;
	if (name_is_jar(a->name) &&
	    catalog_insp_get(L->cat, hex, &rep, NULL) == -ENOENT) {
		jar_limits_default(&lim);
		rc = mem ? jar_inspect_mem(&rep, mem, (size_t)size, &lim, &e2)
			 : jar_inspect_fd(&rep, fd, &lim, &e2);
		if (rc == -EINVAL)
			rc = cmfs_err_set(err, rc,
					  "%s: not a valid JAR (zip "
					  "archive): %s",
					  path, cmfs_err_msg(&e2));
		else if (rc)
			rc = cmfs_err_set(err, rc, "%s: %s", path,
					  cmfs_err_msg(&e2));
		if (!rc)
			rc = catalog_insp_put(L->cat, hex, rep, err);
		if (rc)
			goto out;
	}
	if (mem) {
		/* Committed, or rolled back, with the load's transaction. */
		rc = catalog_inline_put(L->cat, hex, mem, (size_t)size, err);
	} else {
		rc = store_blob_commit(L->store, fd, hex, size, 1, err);
		if (!rc && catalog_keeps_blobs(L->cat))
			rc = catalog_blob_put(L->cat, hex, fd, size, err);
		if (!rc && note_blob(L, hex))
			rc = cmfs_err_set(err, -ENOMEM, "out of memory");
	}
	if (!rc)
		L->st.bytes += size;
out:
	jar_report_free(rep);
	free(mem);
	if (fd >= 0)
		close(fd);
	close(src);
	return rc;
}

/* A decimal version directory name (no sign, no leading 0). */
static int64_t version_dir(const char *s)
{
	int64_t v = 0;
	size_t i;

	if (!*s || *s == '0' || strlen(s) > 18)
		return 0;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int cmp_version(const void *a, const void *b)
{
	int64_t x = version_dir((*(struct dirent *const *)a)->d_name);
	int64_t y = version_dir((*(struct dirent *const *)b)->d_name);

	return (x > y) - (x < y);
}

/* One version directory <adir>/<n>: artifact.json and the bytes. */
static int load_version(struct load *L, const char *vdir, const char *name,
			int64_t n, struct export_artifact *a,
			struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(JSON_MAX_FILE);
	struct dirent **ents = NULL;
	char path[PATH_MAX];
	int nents = 0, i, rc;

	if ((rc = list_dir(vdir, &ents, &nents, err)))
		return rc;
	for (i = 0; !rc && i < nents; i++)
		if (!is_dot(ents[i]->d_name) &&
		    strcmp(ents[i]->d_name, "artifact.json") &&
		    strcmp(ents[i]->d_name, bytes_name(name)))
			rc = cmfs_err_set(err, -EINVAL,
					  "%s/%s: unexpected (a version "
					  "directory holds artifact.json and "
					  "%s)",
					  vdir, ents[i]->d_name,
					  bytes_name(name));
	free_names(ents, nents);
	if (rc || (rc = path_fmt(path, err, "%s/artifact.json", vdir)) ||
	    (rc = read_file(path, JSON_MAX_FILE, &b, err)))
		goto out;
	rc = at_file(export_artifact_parse(a, b.data ? b.data : "", b.len, &e2),
		     path, &e2, err);
	if (rc)
		goto out;
	if (strcmp(a->name, name)) {
		rc = cmfs_err_set(err, -EINVAL,
				  "%s: metadata.name is %s, but it is in the "
				  "directory of %s",
				  path, a->name, name);
		goto out;
	}
	if (a->version && a->version != n) {
		rc = cmfs_err_set(err, -EINVAL,
				  "%s: status.version is %lld, but it is in "
				  "directory %lld",
				  path, (long long)a->version, (long long)n);
		goto out;
	}
	if ((rc = path_fmt(path, err, "%s/%s", vdir, bytes_name(name))) ||
	    (rc = load_bytes(L, path, a, err)))
		goto out;
	a->version = n;
	if (a->mtime < 0)
		a->mtime = clock_now_ns();
out:
	buf_release(&b);
	return rc;
}

/* One artifact directory: its versions in order, then next and labels. */
static int load_artifact(struct load *L, int64_t env_id, const char *adir,
			 const char *name, struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct export_artifact a, last;
	struct catalog_version v;
	struct dirent **ents = NULL;
	char vdir[PATH_MAX];
	int64_t art_id = 0, n;
	int nents = 0, i, rc;
	size_t k;

	memset(&last, 0, sizeof(last));
	if (name_artifact_check(name, &e2))
		return cmfs_err_set(err, -EINVAL, "%s/%s: %s", adir, name,
				    cmfs_err_msg(&e2));
	if ((rc = path_fmt(vdir, err, "%s/%s", adir, name)) ||
	    (rc = list_dir(vdir, &ents, &nents, err)))
		return rc;
	for (i = 0; i < nents; i++)
		if (!is_dot(ents[i]->d_name) && !version_dir(ents[i]->d_name))
			break;
	if (i < nents) {
		rc = cmfs_err_set(err, -EINVAL,
				  "%s/%s: unexpected (an artifact directory "
				  "holds one directory per version number)",
				  vdir, ents[i]->d_name);
		goto out;
	}
	if (nents)
		qsort(ents, (size_t)nents, sizeof(*ents), cmp_version);
	rc = catalog_art_add(L->cat, env_id, name, &art_id, err);
	for (i = 0; !rc && i < nents; i++) {
		if (is_dot(ents[i]->d_name))
			continue;
		n = version_dir(ents[i]->d_name);
		if ((rc = path_fmt(vdir, err, "%s/%s/%s", adir, name,
				   ents[i]->d_name)))
			break;
		memset(&a, 0, sizeof(a));
		rc = load_version(L, vdir, name, n, &a, err);
		if (!rc) {
			memset(&v, 0, sizeof(v));
			v.artifact_id = art_id;
			v.n = n;
			memcpy(v.sha256, a.sha256, sizeof(v.sha256));
			v.size = a.size;
			v.mtime = a.mtime;
			v.uid = a.uid;
			rc = catalog_ver_put(L->cat, &v, err);
		}
		if (rc) {
			export_artifact_release(&a);
			break;
		}
		export_artifact_release(&last);
		last = a;
		L->st.versions++;
	}
	if (!rc && !last.version)
		rc = cmfs_err_set(err, -EINVAL, "%s/%s: no versions", adir,
				  name);
	if (!rc && last.next)
		rc = catalog_art_next_set(L->cat, art_id, last.next, err);
	for (k = 0; !rc && k < last.nlabels; k++)
		rc = catalog_label_set(L->cat, art_id, last.keys[k],
				       last.values[k], err);
	if (!rc)
		L->st.artifacts++;
out:
	export_artifact_release(&last);
	free_names(ents, nents);
	return rc;
}

/*
 * <t>.json of a table: its options and LIKE text into `def`, its time
 * and uid.
 */
static int read_table_json(const char *path, const char *name,
			   struct catalog_table_def *def, int64_t *mtime,
			   uint32_t *uid, struct cmfs_err *err)
{
	static const char *const top_keys[] = {"!apiVersion", "!kind",
					       "!metadata", "!spec", NULL};
	static const char *const spec_keys[] = {"!options", "like", NULL};
	struct cmfs_err e2 = CMFS_ERR_INIT;
	const struct jnode *spec, *opts;
	struct jnode *top = NULL;
	char tname[129];
	const char *like;
	size_t i;
	int rc = load_json(path, &top, err);

	if (rc)
		return rc;
	rc = jkind(top, EXPORT_API_CMFS, "Table", &e2);
	if (!rc)
		rc = jkeys(top, "the document", top_keys, &e2);
	if (!rc)
		rc = jmeta(top, tname, sizeof(tname), mtime, uid, NULL, NULL,
			   &e2);
	if (!rc && strcmp(tname, name))
		rc = jbad(jget(top, "metadata"), &e2,
			  "metadata.name is %s, not %s", tname, name);
	spec = jget(top, "spec");
	if (!rc)
		rc = jkeys(spec, "spec", spec_keys, &e2);
	opts = jget(spec, "options");
	if (!rc)
		rc = jtype(opts, J_OBJ, "options", &e2);
	if (!rc && !(rc = jstr(spec, "like", &like, &e2)) && like &&
	    !(def->like_ddl = strdup(like)))
		rc = cmfs_err_set(&e2, -ENOMEM, "out of memory");
	if (!rc) {
		def->keys = calloc(opts->n + 1, sizeof(char *));
		def->values = calloc(opts->n + 1, sizeof(char *));
		if (!def->keys || !def->values)
			rc = cmfs_err_set(&e2, -ENOMEM, "out of memory");
	}
	for (i = 0; !rc && i < opts->n; i++) {
		if ((rc = jtype(opts->v[i], J_STR, "an option value", &e2)))
			break;
		def->keys[i] = strdup(opts->keys[i]);
		def->values[i] = strdup(opts->v[i]->s);
		def->nopts++;
		if (!def->keys[i] || !def->values[i])
			rc = cmfs_err_set(&e2, -ENOMEM, "out of memory");
	}
	jfree(top);
	return at_file(rc, path, &e2, err);
}

/* One table: <t>.sql as written, <t>.json for the rest. */
static int load_table(struct load *L, int64_t env_id, const char *env,
		      const char *tdir, const char *name, struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct catalog_table_def def;
	struct ddl_table *t = NULL;
	struct buf text = BUF_INIT(JSON_MAX_FILE);
	char path[PATH_MAX];
	int64_t mtime = -1;
	uint32_t uid = 0;
	int rc;

	memset(&def, 0, sizeof(def));
	if ((rc = path_fmt(path, err, "%s/%s.json", tdir, name)) ||
	    (rc = read_table_json(path, name, &def, &mtime, &uid, err)) ||
	    (rc = path_fmt(path, err, "%s/%s.sql", tdir, name)) ||
	    (rc = read_file(path, JSON_MAX_FILE, &text, err)))
		goto out;
	if (memchr(buf_str(&text), '\0', text.len)) {
		rc = cmfs_err_set(err, -EINVAL, "%s: holds a NUL byte", path);
		goto out;
	}
	/* The text must still be one valid CREATE TABLE of this name. */
	if ((rc = ddl_parse(&t, buf_str(&text), text.len, &e2)) ||
	    (rc = ddl_check_name(t, env, name, &e2))) {
		rc = cmfs_err_set(err, rc, "%s: %s", path, cmfs_err_msg(&e2));
		goto out;
	}
	if (!(def.ddl = buf_take(&text, NULL))) {
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = catalog_table_put(L->cat, env_id, name, &def,
			       mtime < 0 ? clock_now_ns() : mtime, uid, NULL, err);
	if (!rc)
		L->st.tables++;
out:
	ddl_table_free(t);
	catalog_table_def_release(&def);
	buf_release(&text);
	return rc;
}

/* The tables/ directory: pairs of <t>.sql and <t>.json. */
static int load_tables(struct load *L, int64_t env_id, const char *env,
		       const char *tdir, struct cmfs_err *err)
{
	struct dirent **ents = NULL;
	char table[129], other[300];
	const char *s;
	size_t len;
	int nents = 0, i, rc;

	if ((rc = list_dir(tdir, &ents, &nents, err)))
		return rc;
	for (i = 0; !rc && i < nents; i++) {
		s = ents[i]->d_name;
		len = strlen(s);
		if (is_dot(s))
			continue;
		if (len > 5 && !strcmp(s + len - 5, ".json")) {
			char p[PATH_MAX];

			/* Loaded with its .sql, which must be there. */
			snprintf(other, sizeof(other), "%.*s.sql",
				 (int)(len - 5), s);
			if (!name_table_file(table, other))
				rc = cmfs_err_set(err, -EINVAL,
						  "%s/%s: not a table file",
						  tdir, s);
			else if (!(rc = path_fmt(p, err, "%s/%s", tdir,
						 other)) &&
				 access(p, F_OK))
				rc = cmfs_err_set(err, -EINVAL,
						  "%s/%s: no %s beside it",
						  tdir, s, other);
			continue;
		}
		if (!name_table_file(table, s)) {
			rc = cmfs_err_set(err, -EINVAL,
					  "%s/%s: unexpected (tables/ holds "
					  "<table>.sql and <table>.json)",
					  tdir, s);
			break;
		}
		rc = load_table(L, env_id, env, tdir, table, err);
	}
	free_names(ents, nents);
	return rc;
}

/* The events file: each line appended to the environment's trail. */
static int load_events(struct load *L, const char *env, const char *path,
		       struct cmfs_err *err)
{
	struct buf b = BUF_INIT(EVENTS_MAX);
	char *p, *nl, save;
	int rc;

	if (access(path, F_OK))
		return 0;
	if ((rc = read_file(path, EVENTS_MAX, &b, err)))
		return rc;
	if (b.len && memchr(b.data, '\0', b.len))
		rc = cmfs_err_set(err, -EINVAL, "%s: holds a NUL byte", path);
	for (p = b.data; !rc && p && *p; p = nl) {
		nl = strchr(p, '\n');
		nl = nl ? nl + 1 : p + strlen(p);
		save = *nl;
		*nl = '\0';
		rc = catalog_event_add(L->cat, env, p, err);
		*nl = save;
		L->st.events++;
	}
	buf_release(&b);
	return rc;
}

/*
 * next-versions: "<name> <next>" a line, for names no artifact holds,
 * each name valid and once, each number at least 2.
 */
static int load_retired(struct load *L, const char *env, const char *path,
			struct cmfs_err *err)
{
	struct buf b = BUF_INIT(JSON_MAX_FILE);
	struct cmfs_err e2 = CMFS_ERR_INIT;
	char *line, *next, *sp, *end;
	long long n;
	size_t lineno = 0;
	int rc;

	if (access(path, F_OK))
		return 0;
	if ((rc = read_file(path, JSON_MAX_FILE, &b, err)))
		goto out;
	for (line = b.len ? b.data : NULL; !rc && line && *line; line = next) {
		lineno++;
		next = strchr(line, '\n');
		if (!next) {
			rc = cmfs_err_set(err, -EINVAL,
					  "%s:%zu: no newline at the end", path,
					  lineno);
			break;
		}
		*next++ = '\0';
		sp = strchr(line, ' ');
		if (sp)
			*sp = '\0';
		errno = 0;
		n = sp ? strtoll(sp + 1, &end, 10) : 0;
		if (!sp || !sp[1] || *end || errno || n < 2 || sp[1] == '+')
			rc = cmfs_err_set(err, -EINVAL,
					  "%s:%zu: not \"<name> <next>\"", path,
					  lineno);
		else if (name_artifact_check(line, &e2))
			rc = cmfs_err_set(err, -EINVAL, "%s:%zu: %s", path,
					  lineno, cmfs_err_msg(&e2));
		else if ((rc = catalog_retired_put(L->cat, env, line, n, &e2)))
			cmfs_err_set(err, rc == -EEXIST ? -EINVAL : rc,
				     "%s:%zu: %s", path, lineno,
				     cmfs_err_msg(&e2));
	}
out:
	buf_release(&b);
	return rc;
}

static int load_env(struct load *L, const char *env, struct cmfs_err *err)
{
	static const char *const top_keys[] = {"!apiVersion", "!kind",
					       "!metadata", "spec", NULL};
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct catalog_env e;
	struct dirent **ents = NULL;
	struct jnode *top = NULL;
	char edir[PATH_MAX], path[PATH_MAX], name[64];
	int64_t ctime = -1;
	uint32_t uid = 0;
	int nents = 0, i, rc;

	if ((rc = path_fmt(edir, err, "%s/envs/%s", L->dir, env)) ||
	    (rc = path_fmt(path, err, "%s/environment.json", edir)) ||
	    (rc = load_json(path, &top, err)))
		return rc;
	rc = jkind(top, EXPORT_API_CMF, "Environment", &e2);
	if (!rc)
		rc = jkeys(top, "the document", top_keys, &e2);
	if (!rc)
		rc = jmeta(top, name, sizeof(name), &ctime, &uid, NULL, NULL,
			   &e2);
	if (!rc)
		rc = jempty_spec(top, &e2);
	if (!rc && strcmp(name, env))
		rc = jbad(jget(top, "metadata"), &e2,
			  "metadata.name is %s, not %s", name, env);
	jfree(top);
	if ((rc = at_file(rc, path, &e2, err)))
		return rc;
	rc = catalog_env_add(L->cat, env, uid, ctime < 0 ? clock_now_ns() : ctime, &e,
			     err);
	if (rc == -EEXIST)
		return cmfs_err_set(err, rc,
				    "environment %s exists in the "
				    "store already",
				    env);
	if (rc)
		return rc;
	if ((rc = list_dir(edir, &ents, &nents, err)))
		return rc;
	for (i = 0; !rc && i < nents; i++) {
		const char *s = ents[i]->d_name;

		if (!is_dot(s) && strcmp(s, "environment.json") &&
		    strcmp(s, "artifacts") && strcmp(s, "tables") &&
		    strcmp(s, "events") && strcmp(s, "next-versions"))
			rc = cmfs_err_set(err, -EINVAL, "%s/%s: unexpected",
					  edir, s);
	}
	free_names(ents, nents);
	ents = NULL;
	nents = 0;
	if (!rc && !(rc = path_fmt(path, err, "%s/artifacts", edir)))
		rc = list_dir(path, &ents, &nents, err);
	for (i = 0; !rc && i < nents; i++)
		if (!is_dot(ents[i]->d_name))
			rc = load_artifact(L, e.id, path, ents[i]->d_name, err);
	free_names(ents, nents);
	if (!rc && !(rc = path_fmt(path, err, "%s/next-versions", edir)))
		rc = load_retired(L, env, path, err);
	if (!rc && !(rc = path_fmt(path, err, "%s/tables", edir)))
		rc = load_tables(L, e.id, env, path, err);
	if (!rc && !(rc = path_fmt(path, err, "%s/events", edir)))
		rc = load_events(L, env, path, err);
	if (!rc)
		L->st.envs++;
	return rc;
}

/* export.json: the format and the environments, checked against envs/. */
static int load_marker(struct load *L, struct jnode **out,
		       const struct jnode **envs, struct cmfs_err *err)
{
	static const char *const top_keys[] = {"!apiVersion", "!kind",
					       "metadata", "!spec", NULL};
	static const char *const spec_keys[] = {"!format", "cmfsVersion",
						"!environments", NULL};
	struct cmfs_err e2 = CMFS_ERR_INIT;
	const struct jnode *spec;
	struct dirent **ents = NULL;
	char path[PATH_MAX];
	int64_t format = 0, ns;
	uint32_t uid;
	size_t i, j, seen = 0;
	int nents = 0, k, rc;

	if ((rc = path_fmt(path, err, "%s/export.json", L->dir)))
		return rc;
	if (access(path, F_OK))
		return cmfs_err_set(err, -EINVAL,
				    "%s: no export.json: not a cmfs export (or "
				    "one that did not finish)",
				    L->dir);
	if ((rc = load_json(path, out, err)))
		return rc;
	rc = jkind(*out, EXPORT_API_CMFS, "Export", &e2);
	if (!rc)
		rc = jkeys(*out, "the document", top_keys, &e2);
	if (!rc && jget(*out, "metadata"))
		rc = jmeta(*out, NULL, 0, &ns, &uid, NULL, NULL, &e2);
	spec = jget(*out, "spec");
	if (!rc)
		rc = jkeys(spec, "spec", spec_keys, &e2);
	if (!rc && !(rc = jint(spec, "format", 1, &format, &e2)) &&
	    format != EXPORT_FORMAT)
		rc = jbad(jget(spec, "format"), &e2,
			  "format %lld: this cmfs reads format %d",
			  (long long)format, EXPORT_FORMAT);
	*envs = jget(spec, "environments");
	if (!rc)
		rc = jtype(*envs, J_ARR, "environments", &e2);
	for (i = 0; !rc && i < (*envs)->n; i++) {
		const struct jnode *e = (*envs)->v[i];

		if ((rc = jtype(e, J_STR, "an environment", &e2)))
			break;
		if (name_env_check(e->s, NULL))
			rc = jbad(e, &e2, "%.80s is not an environment name",
				  e->s);
		for (j = 0; !rc && j < i; j++)
			if (!strcmp((*envs)->v[j]->s, e->s))
				rc = jbad(e, &e2, "%s is listed twice", e->s);
	}
	if ((rc = at_file(rc, path, &e2, err)))
		return rc;
	/* envs/ holds exactly the environments listed. */
	if ((rc = path_fmt(path, err, "%s/envs", L->dir)) ||
	    (rc = list_dir(path, &ents, &nents, err)))
		return rc;
	for (k = 0; !rc && k < nents; k++) {
		if (is_dot(ents[k]->d_name))
			continue;
		for (i = 0; i < (*envs)->n; i++)
			if (!strcmp((*envs)->v[i]->s, ents[k]->d_name))
				break;
		if (i == (*envs)->n)
			rc = cmfs_err_set(err, -EINVAL,
					  "%s/%s: not listed in export.json",
					  path, ents[k]->d_name);
		seen++;
	}
	if (!rc && seen != (*envs)->n)
		rc = cmfs_err_set(err, -EINVAL,
				  "%s: export.json lists %zu environments, "
				  "the directory holds %zu",
				  path, (*envs)->n, seen);
	free_names(ents, nents);
	return rc;
}

int export_load(const char *dir, const char *store, uint64_t inline_max,
		struct export_stats *out, struct cmfs_err *err)
{
	return export_load_into(dir, store, NULL, inline_max, out, err);
}

/* The catalog an import writes: the store's catalog.db, or the one at
 * `catalog`, bound to this store (a store with a catalog.db of its own is
 * refused: the mount would refuse it too). */
static int open_target(struct load *L, const char *catalog,
		       struct cmfs_err *err)
{
	char db[PATH_MAX], id[PATH_MAX + 256];
	int rc;

	if ((rc = path_fmt(db, err, "%s/catalog.db", store_path(L->store))))
		return rc;
	if (!catalog)
		return catalog_open(&L->cat, db, err);
	if (!access(db, F_OK))
		return cmfs_err_set(err, -EEXIST,
				    "store %s has a catalog of its own "
				    "(catalog.db): import into a store of the "
				    "database's own",
				    store_path(L->store));
	if ((rc = catalog_open(&L->cat, catalog, err)))
		return rc;
	store_ident(L->store, id, sizeof(id));
	return catalog_bind_store(L->cat, id, err);
}

int export_load_into(const char *dir, const char *store, const char *catalog,
		     uint64_t inline_max, struct export_stats *out,
		     struct cmfs_err *err)
{
	const struct jnode *envs = NULL;
	struct jnode *marker = NULL;
	struct catalog_env e;
	struct load L;
	pid_t busy;
	uint64_t refs;
	size_t i;
	int rc;

	memset(&L, 0, sizeof(L));
	L.dir = dir;
	L.inline_max = inline_max;
	if ((rc = load_marker(&L, &marker, &envs, err)))
		goto out;
	busy = fsck_store_busy(store);
	if (busy) {
		rc = cmfs_err_set(err, -EBUSY,
				  "store %s is in use by pid %ld (a mount?): "
				  "unmount it first",
				  store, (long)busy);
		goto out;
	}
	if ((rc = store_open(&L.store, store, err)) ||
	    (rc = store_lock(L.store, err)) ||
	    (rc = open_target(&L, catalog, err)))
		goto out;
	for (i = 0; i < envs->n; i++)
		if (!catalog_env_get(L.cat, envs->v[i]->s, &e, NULL)) {
			rc = cmfs_err_set(err, -EEXIST,
					  "environment %s exists in store %s "
					  "already",
					  envs->v[i]->s, store);
			goto out;
		}
	if ((rc = catalog_begin(L.cat, err)))
		goto out;
	for (i = 0; !rc && i < envs->n; i++)
		rc = load_env(&L, envs->v[i]->s, err);
	rc = catalog_end(L.cat, rc, err);
	if (rc) {
		/* Rolled back: free the blobs this load linked for nothing. */
		for (i = 0; i < L.nblobs; i++)
			if (!catalog_blob_refs(L.cat, L.blobs[i], &refs,
					       NULL) &&
			    !refs)
				store_blob_unlink(L.store, L.blobs[i]);
	} else if (out) {
		*out = L.st;
	}
out:
	jfree(marker);
	catalog_close(L.cat);
	store_close(L.store);
	free(L.blobs);
	return rc;
}
