/*
 * import.c - `cmfs import`: an export directory (export.h) read, checked
 * and applied to a store.
 *
 * Import checks and stages everything it reads: each file's bytes are
 * copied to a staging file and hashed, compared with artifact.json, and
 * linked into the blob store; the catalog rows go in with one transaction
 * at the end.  A failure rolls the transaction back and unlinks the blobs
 * that nothing refers to, so the store is as it was.
 *
 * jansson parses each JSON file (RFC 8259, UTF-8, no duplicate keys, no
 * \u0000); its errors keep their line:col.  Before it builds a document
 * the text is weighed: jansson has no cap on the values of a document,
 * and a file of nothing but brackets would cost many times its size.
 * Then a schema check per kind refuses unknown keys and wrong types, and
 * takes integers only.
 */
#define _GNU_SOURCE
#include "export.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "clock.h"
#include "ddl.h"
#include "export_int.h"
#include "fsck.h"
#include "jar.h"
#include "name.h"
#include "store.h"

#define JSON_MAX_DEPTH 16
#define JSON_MAX_NODES 100000
#define JSON_MAX_KEYS 4096	  /* keys of one object */
#define JSON_MAX_FILE (16u << 20) /* bytes of one JSON or .sql file */

/* ---- time: RFC 3339 with nanoseconds ------------------------------------ */

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
	/* Nanoseconds since the epoch fit an int64 from 1677 to 2262. */
	if (t >= INT64_MAX / 1000000000 || t <= INT64_MIN / 1000000000)
		return -1;
	*out = (int64_t)t * 1000000000 + frac;
	return 0;
}

/* ---- JSON reading ------------------------------------------------------- */

/* "line:col: reason" at byte `at` of `text`; `code`. */
static int weigh_err(const char *text, const char *at, int code,
		     struct cmfs_err *err, const char *what, int n)
{
	const char *q, *line_start = text;
	int line = 1, col = 1;

	for (q = text; q < at; q++)
		if (*q == '\n') {
			line++;
			line_start = q + 1;
		}
	for (q = line_start; q < at; q++)
		col += ((unsigned char)*q & 0xc0) != 0x80;
	return cmfs_err_set(err, code, "%d:%d: %s %d", line, col, what, n);
}

/*
 * Weigh `text` before jansson builds it: at most JSON_MAX_DEPTH levels
 * and JSON_MAX_NODES values.  Each value but the first follows a '[',
 * '{' or ',' outside strings, so their count bounds the values; what is
 * not JSON is left to jansson.
 */
static int json_weigh(const char *text, size_t len, struct cmfs_err *err)
{
	const char *p, *end = text + len;
	size_t nodes = 1;
	int depth = 0, in_str = 0;

	for (p = text; p < end; p++) {
		if (in_str) {
			if (*p == '\\' && p + 1 < end)
				p++;
			else if (*p == '"')
				in_str = 0;
			continue;
		}
		if (*p == '"') {
			in_str = 1;
		} else if (*p == '[' || *p == '{') {
			if (++depth > JSON_MAX_DEPTH)
				return weigh_err(text, p, -EINVAL, err,
						 "nested deeper than",
						 JSON_MAX_DEPTH);
			nodes++;
		} else if (*p == ']' || *p == '}') {
			depth--;
		} else if (*p == ',') {
			nodes++;
		}
		if (nodes > JSON_MAX_NODES)
			return weigh_err(text, p, -EFBIG, err,
					 "more values than", JSON_MAX_NODES);
	}
	return 0;
}

/*
 * Parse a whole document: an object or array, no duplicate keys.  0 and
 * *out (json_decref it), or -EINVAL with "line:col: reason" (-EFBIG past
 * a cap, -ENOMEM).
 */
static int json_read(json_t **out, const char *text, size_t len,
		     struct cmfs_err *err)
{
	json_error_t e;
	int rc;

	*out = NULL;
	if (len > JSON_MAX_FILE)
		return cmfs_err_set(err, -EFBIG, "more than %u bytes",
				    JSON_MAX_FILE);
	if ((rc = json_weigh(text, len, err)))
		return rc;
	*out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
	if (*out)
		return 0;
	if (json_error_code(&e) == json_error_out_of_memory)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	return cmfs_err_set(err, -EINVAL, "%d:%d: %s", e.line, e.column,
			    e.text);
}

/* ---- the schema of each kind -------------------------------------------- */

static const char *type_name(json_type t)
{
	switch (t) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number with a fraction or exponent";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/* What `j` is, for messages (NULL: missing). */
static const char *jtype_name(const json_t *j)
{
	return j ? type_name(json_typeof(j)) : "missing";
}

/* Member `key` of object `o`, or NULL. */
static const json_t *jget(const json_t *o, const char *key)
{
	return json_object_get(o, key);
}

/* `j` must be of `type`; `what` names it in the message. */
static int jtype(const json_t *j, json_type type, const char *what,
		 struct cmfs_err *err)
{
	if (!j || json_typeof(j) != type)
		return cmfs_err_set(err, -EINVAL, "%s must be %s, not %s",
				    what, type_name(type), jtype_name(j));
	return 0;
}

/*
 * Object `o` (called `what`) may hold only the keys in `allowed`
 * (NULL-terminated); those marked required (a leading '!') must be there.
 */
static int jkeys(const json_t *o, const char *what,
		 const char *const *allowed, struct cmfs_err *err)
{
	const char *key;
	json_t *v;
	size_t k;
	int rc = jtype(o, JSON_OBJECT, what, err);

	if (rc)
		return rc;
	json_object_foreach ((json_t *)o, key, v) {
		for (k = 0; allowed[k]; k++)
			if (!strcmp(key, allowed[k] + (allowed[k][0] == '!')))
				break;
		if (!allowed[k])
			return cmfs_err_set(err, -EINVAL,
					    "unknown key \"%.80s\" in %s", key,
					    what);
	}
	for (k = 0; allowed[k]; k++)
		if (allowed[k][0] == '!' && !jget(o, allowed[k] + 1))
			return cmfs_err_set(err, -EINVAL, "%s lacks \"%s\"",
					    what, allowed[k] + 1);
	return 0;
}

/* An object of any keys, at most JSON_MAX_KEYS of them. */
static int jmap(const json_t *o, const char *what, struct cmfs_err *err)
{
	int rc = jtype(o, JSON_OBJECT, what, err);

	if (!rc && json_object_size(o) > JSON_MAX_KEYS)
		rc = cmfs_err_set(err, -EFBIG, "%s: more than %d keys", what,
				  JSON_MAX_KEYS);
	return rc;
}

/* String member `key` of `o` (may be missing: *out = NULL). */
static int jstr(const json_t *o, const char *key, const char **out,
		struct cmfs_err *err)
{
	const json_t *j = jget(o, key);

	*out = NULL;
	if (!j)
		return 0;
	if (!json_is_string(j))
		return cmfs_err_set(err, -EINVAL,
				    "\"%s\" must be a string, not %s", key,
				    jtype_name(j));
	*out = json_string_value(j);
	return 0;
}

/* Integer member `key` of `o`, at least `min`. */
static int jint(const json_t *o, const char *key, int64_t min, int64_t *out,
		struct cmfs_err *err)
{
	const json_t *j = jget(o, key);

	if (!j)
		return cmfs_err_set(err, -EINVAL, "lacks \"%s\"", key);
	if (json_is_real(j))
		return cmfs_err_set(err, -EINVAL,
				    "\"%s\": only integers are expected in "
				    "these files",
				    key);
	if (!json_is_integer(j))
		return cmfs_err_set(err, -EINVAL,
				    "\"%s\" must be an integer, not %s", key,
				    jtype_name(j));
	if (json_integer_value(j) < min)
		return cmfs_err_set(err, -EINVAL,
				    "\"%s\" must be at least %lld", key,
				    (long long)min);
	*out = json_integer_value(j);
	return 0;
}

/* apiVersion and kind of document `top`. */
static int jkind(const json_t *top, const char *api, const char *kind,
		 struct cmfs_err *err)
{
	const char *a, *k;
	int rc = jtype(top, JSON_OBJECT, "the document", err);

	if (!rc && !(rc = jstr(top, "apiVersion", &a, err)) &&
	    (!a || strcmp(a, api)))
		rc = cmfs_err_set(err, -EINVAL, "apiVersion must be \"%s\"",
				  api);
	if (!rc && !(rc = jstr(top, "kind", &k, err)) &&
	    (!k || strcmp(k, kind)))
		rc = cmfs_err_set(err, -EINVAL, "kind must be \"%s\"", kind);
	return rc;
}

/* A decimal uid (0 .. 2^32-1) in a string. */
static int parse_uid(const char *s, uint32_t *out, struct cmfs_err *err)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || v > UINT32_MAX || *s == '-' || *s == '+' ||
	    *s == ' ')
		return cmfs_err_set(err, -EINVAL, "\"%s\" is not a uid", s);
	*out = (uint32_t)v;
	return 0;
}

/*
 * The common metadata: name (required when `name` is non-NULL, copied to
 * name[namelen]), creationTimestamp into *ns (-1 when missing), the
 * "cmfs/uid" annotation into *uid (0 when missing).  `labels` and
 * `next` are for artifacts: the labels object and "cmfs/next-version".
 */
static int jmeta(const json_t *top, char *name, size_t namelen, int64_t *ns,
		 uint32_t *uid, const json_t **labels, int64_t *next,
		 struct cmfs_err *err)
{
	static const char *const with_name[] = {"!name", "creationTimestamp",
						"labels", "annotations", NULL};
	static const char *const ann_keys[] = {ANN_NEXT, ANN_UID, NULL};
	const json_t *m = jget(top, "metadata"), *ann;
	const char *s;
	char *end;
	int rc;

	*ns = -1;
	*uid = 0;
	if (!m)
		return cmfs_err_set(err, -EINVAL, "lacks \"metadata\"");
	rc = jkeys(m, "metadata", with_name + !name, err);
	if (!rc && !labels && jget(m, "labels"))
		rc = cmfs_err_set(err, -EINVAL, "labels are for artifacts");
	if (!rc && name && !(rc = jstr(m, "name", &s, err))) {
		if (strlen(s) >= namelen)
			return cmfs_err_set(err, -EINVAL,
					    "metadata.name: too long");
		memcpy(name, s, strlen(s) + 1);
	}
	if (!rc && !(rc = jstr(m, "creationTimestamp", &s, err)) && s &&
	    time_parse(s, ns))
		rc = cmfs_err_set(err, -EINVAL,
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
	if (!(rc = jstr(ann, ANN_UID, &s, err)) && s)
		rc = parse_uid(s, uid, err);
	if (!rc && next && !(rc = jstr(ann, ANN_NEXT, &s, err)) && s) {
		errno = 0;
		*next = strtoll(s, &end, 10);
		if (!*s || *end || errno || *next < 2 || *s == '+')
			rc = cmfs_err_set(err, -EINVAL,
					  "\"%s\" is not a version number", s);
	}
	return rc;
}

/* spec must be absent or {}. */
static int jempty_spec(const json_t *top, struct cmfs_err *err)
{
	static const char *const none[] = {NULL};
	const json_t *s = jget(top, "spec");

	return s ? jkeys(s, "spec", none, err) : 0;
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
static int read_labels(struct export_artifact *a, const json_t *l,
		       struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	const char *key;
	json_t *v;
	size_t n = json_object_size(l);
	int rc = jmap(l, "labels", err);

	if (rc)
		return rc;
	a->keys = calloc(n + 1, sizeof(char *));
	a->values = calloc(n + 1, sizeof(char *));
	if (!a->keys || !a->values)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	json_object_foreach ((json_t *)l, key, v) {
		const char *s = json_string_value(v);

		if (!s)
			return cmfs_err_set(err, -EINVAL,
					    "label %.80s must be a string, "
					    "not %s",
					    key, jtype_name(v));
		if (name_label_key_check(key, &e2) ||
		    name_label_value_check(key, s, strlen(s), &e2))
			return cmfs_err_set(err, -EINVAL, "%s",
					    cmfs_err_msg(&e2));
		a->keys[a->nlabels] = strdup(key);
		a->values[a->nlabels] = strdup(s);
		if (!a->keys[a->nlabels++] || !a->values[a->nlabels - 1])
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
	const json_t *labels = NULL, *st, *sum;
	json_t *top = NULL;
	const char *sha;
	int64_t size = 0;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(out, 0, sizeof(*out));
	if ((rc = json_read(&top, text, len, err)))
		return rc;
	rc = jkind(top, EXPORT_API_CMF, "Artifact", err);
	if (!rc)
		rc = jkeys(top, "the document", top_keys, err);
	if (!rc)
		rc = jmeta(top, a.name, sizeof(a.name), &a.mtime, &a.uid,
			   &labels, &a.next, err);
	if (!rc && name_artifact_check(a.name, &e2))
		rc = cmfs_err_set(err, -EINVAL, "metadata.name: %s",
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
				rc = cmfs_err_set(err, -EINVAL,
						  "sha256 must be 64 lower-case "
						  "hex digits");
			else
				memcpy(a.sha256, sha, 65);
		}
		a.size = (uint64_t)size;
	}
	if (!rc && a.next && a.version && a.next <= a.version)
		rc = cmfs_err_set(err, -EINVAL,
				  "%s %lld is not above version %lld", ANN_NEXT,
				  (long long)a.next, (long long)a.version);
	json_decref(top);
	if (rc) {
		export_artifact_release(&a);
		return rc;
	}
	*out = a;
	return 0;
}

/* ---- files -------------------------------------------------------------- */

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

/*
 * A failed read `rc` of file `path`, with message `e2`, into `err`: a
 * syntax error's "line:col: reason" as path:line:col: reason, a schema
 * check's reason as path: reason.
 */
static int at_file(int rc, const char *path, const struct cmfs_err *e2,
		   struct cmfs_err *err)
{
	const char *msg = cmfs_err_msg(e2);

	if (!rc)
		return 0;
	return cmfs_err_set(err, rc, "%s:%s%s", path,
			    *msg >= '0' && *msg <= '9' ? "" : " ", msg);
}

/* Parse JSON file `path` into *out, errors prefixed with the path. */
static int load_json(const char *path, json_t **out, struct cmfs_err *err)
{
	struct cmfs_err e2 = CMFS_ERR_INIT;
	struct buf b = BUF_INIT(JSON_MAX_FILE);
	int rc = read_file(path, JSON_MAX_FILE, &b, err);

	if (!rc)
		rc = at_file(json_read(out, b.data ? b.data : "", b.len, &e2),
			     path, &e2, err);
	buf_release(&b);
	return rc;
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
		    strcmp(ents[i]->d_name, export_bytes_name(name)))
			rc = cmfs_err_set(err, -EINVAL,
					  "%s/%s: unexpected (a version "
					  "directory holds artifact.json and "
					  "%s)",
					  vdir, ents[i]->d_name,
					  export_bytes_name(name));
	free_names(ents, nents);
	if (rc || (rc = export_path(path, err, "%s/artifact.json", vdir)) ||
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
	if ((rc = export_path(path, err, "%s/%s", vdir, export_bytes_name(name))) ||
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
	if ((rc = export_path(vdir, err, "%s/%s", adir, name)) ||
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
		if ((rc = export_path(vdir, err, "%s/%s/%s", adir, name,
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
	const json_t *spec, *opts;
	json_t *top = NULL, *v;
	char tname[129];
	const char *like, *key;
	size_t i = 0;
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
		rc = cmfs_err_set(&e2, -EINVAL, "metadata.name is %s, not %s",
				  tname, name);
	spec = jget(top, "spec");
	if (!rc)
		rc = jkeys(spec, "spec", spec_keys, &e2);
	opts = jget(spec, "options");
	if (!rc)
		rc = jmap(opts, "options", &e2);
	if (!rc && !(rc = jstr(spec, "like", &like, &e2)) && like &&
	    !(def->like_ddl = strdup(like)))
		rc = cmfs_err_set(&e2, -ENOMEM, "out of memory");
	if (!rc) {
		def->keys = calloc(json_object_size(opts) + 1, sizeof(char *));
		def->values =
			calloc(json_object_size(opts) + 1, sizeof(char *));
		if (!def->keys || !def->values)
			rc = cmfs_err_set(&e2, -ENOMEM, "out of memory");
	}
	json_object_foreach (rc ? NULL : (json_t *)opts, key, v) {
		if ((rc = jtype(v, JSON_STRING, "an option value", &e2)))
			break;
		def->keys[i] = strdup(key);
		def->values[i] = strdup(json_string_value(v));
		def->nopts++;
		if (!def->keys[i] || !def->values[i++]) {
			rc = cmfs_err_set(&e2, -ENOMEM, "out of memory");
			break;
		}
	}
	json_decref(top);
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
	if ((rc = export_path(path, err, "%s/%s.json", tdir, name)) ||
	    (rc = read_table_json(path, name, &def, &mtime, &uid, err)) ||
	    (rc = export_path(path, err, "%s/%s.sql", tdir, name)) ||
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
			else if (!(rc = export_path(p, err, "%s/%s", tdir,
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
	json_t *top = NULL;
	char edir[PATH_MAX], path[PATH_MAX], name[64];
	int64_t ctime = -1;
	uint32_t uid = 0;
	int nents = 0, i, rc;

	if ((rc = export_path(edir, err, "%s/envs/%s", L->dir, env)) ||
	    (rc = export_path(path, err, "%s/environment.json", edir)) ||
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
		rc = cmfs_err_set(&e2, -EINVAL, "metadata.name is %s, not %s",
				  name, env);
	json_decref(top);
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
	if (!rc && !(rc = export_path(path, err, "%s/artifacts", edir)))
		rc = list_dir(path, &ents, &nents, err);
	for (i = 0; !rc && i < nents; i++)
		if (!is_dot(ents[i]->d_name))
			rc = load_artifact(L, e.id, path, ents[i]->d_name, err);
	free_names(ents, nents);
	if (!rc && !(rc = export_path(path, err, "%s/next-versions", edir)))
		rc = load_retired(L, env, path, err);
	if (!rc && !(rc = export_path(path, err, "%s/tables", edir)))
		rc = load_tables(L, e.id, env, path, err);
	if (!rc && !(rc = export_path(path, err, "%s/events", edir)))
		rc = load_events(L, env, path, err);
	if (!rc)
		L->st.envs++;
	return rc;
}

/* The i-th environment export.json lists (NULL: not a string). */
static const char *env_at(const json_t *envs, size_t i)
{
	return json_string_value(json_array_get(envs, i));
}

/* export.json: the format and the environments, checked against envs/. */
static int load_marker(struct load *L, json_t **out, const json_t **envs,
		       struct cmfs_err *err)
{
	static const char *const top_keys[] = {"!apiVersion", "!kind",
					       "metadata", "!spec", NULL};
	static const char *const spec_keys[] = {"!format", "cmfsVersion",
						"!environments", NULL};
	struct cmfs_err e2 = CMFS_ERR_INIT;
	const json_t *spec;
	struct dirent **ents = NULL;
	char path[PATH_MAX];
	int64_t format = 0, ns;
	uint32_t uid;
	size_t i, j, seen = 0;
	int nents = 0, k, rc;

	if ((rc = export_path(path, err, "%s/export.json", L->dir)))
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
		rc = cmfs_err_set(&e2, -EINVAL,
				  "format %lld: this cmfs reads format %d",
				  (long long)format, EXPORT_FORMAT);
	*envs = jget(spec, "environments");
	if (!rc)
		rc = jtype(*envs, JSON_ARRAY, "environments", &e2);
	for (i = 0; !rc && i < json_array_size(*envs); i++) {
		const char *e = env_at(*envs, i);

		if ((rc = jtype(json_array_get(*envs, i), JSON_STRING,
				"an environment", &e2)))
			break;
		if (name_env_check(e, NULL))
			rc = cmfs_err_set(&e2, -EINVAL,
					  "%.80s is not an environment name",
					  e);
		for (j = 0; !rc && j < i; j++)
			if (!strcmp(env_at(*envs, j), e))
				rc = cmfs_err_set(&e2, -EINVAL,
						  "%s is listed twice", e);
	}
	if ((rc = at_file(rc, path, &e2, err)))
		return rc;
	/* envs/ holds exactly the environments listed. */
	if ((rc = export_path(path, err, "%s/envs", L->dir)) ||
	    (rc = list_dir(path, &ents, &nents, err)))
		return rc;
	for (k = 0; !rc && k < nents; k++) {
		if (is_dot(ents[k]->d_name))
			continue;
		for (i = 0; i < json_array_size(*envs); i++)
			if (!strcmp(env_at(*envs, i), ents[k]->d_name))
				break;
		if (i == json_array_size(*envs))
			rc = cmfs_err_set(err, -EINVAL,
					  "%s/%s: not listed in export.json",
					  path, ents[k]->d_name);
		seen++;
	}
	if (!rc && seen != json_array_size(*envs))
		rc = cmfs_err_set(err, -EINVAL,
				  "%s: export.json lists %zu environments, "
				  "the directory holds %zu",
				  path, json_array_size(*envs), seen);
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

	if ((rc = export_path(db, err, "%s/catalog.db", store_path(L->store))))
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
	const json_t *envs = NULL;
	json_t *marker = NULL;
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
	for (i = 0; i < json_array_size(envs); i++)
		if (!catalog_env_get(L.cat, env_at(envs, i), &e, NULL)) {
			rc = cmfs_err_set(err, -EEXIST,
					  "environment %s exists in store %s "
					  "already",
					  env_at(envs, i), store);
			goto out;
		}
	if ((rc = catalog_begin(L.cat, err)))
		goto out;
	for (i = 0; !rc && i < json_array_size(envs); i++)
		rc = load_env(&L, env_at(envs, i), err);
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
	json_decref(marker);
	catalog_close(L.cat);
	store_close(L.store);
	free(L.blobs);
	return rc;
}
