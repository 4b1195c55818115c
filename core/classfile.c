/*
 * classfile.c - a bounds-checked reader for one Java class file.
 *
 * The bytes come from uploaded JARs, so they are hostile until proven
 * otherwise: every read goes through a cursor (`struct rd`) that checks
 * the bytes left first, every count is weighed against the bytes that
 * must follow it before anything is allocated, and every constant-pool
 * index is checked to name an entry of the right tag before anyone
 * follows it.  The reader never recurses on input, so no depth of nesting
 * can exhaust the stack.  Names are converted from the class file's
 * modified UTF-8 to standard UTF-8 only when asked for, because the JAR's
 * entry names and our reports are plain UTF-8.
 */
#include "classfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Names and descriptors that fit in this many bytes are converted on
 * the stack (utf8_into). */
#define NAME_BUF 256

/* A cursor over the bytes [0, len): `off` is the next byte to read. */
struct rd {
	const uint8_t *p;
	size_t len;
	size_t off;
	struct cmfs_err *err;
};

/* The error of need(), out of the way of the reads that find their bytes. */
__attribute__((noinline, cold)) static int truncated(const struct rd *r,
						     const char *what)
{
	return cmfs_err_set(r->err, -EINVAL, "offset %zu: truncated %s", r->off,
			    what);
}

/* Fail unless `n` more bytes can be read; `what` names them. */
static inline int need(struct rd *r, size_t n, const char *what)
{
	return r->len - r->off < n ? truncated(r, what) : 0;
}

/*
 * Read a big-endian u1, u2 or u4 (JVMS 4.1) into *v and advance, or fail
 * naming `what` when the bytes run out.  Nothing is read past `len`.
 */
static inline int get1(struct rd *r, uint8_t *v, const char *what)
{
	int rc = need(r, 1, what);

	if (rc)
		return rc;
	*v = r->p[r->off++];
	return 0;
}

static inline int get2(struct rd *r, uint16_t *v, const char *what)
{
	int rc = need(r, 2, what);

	if (rc)
		return rc;
	*v = (uint16_t)(r->p[r->off] << 8 | r->p[r->off + 1]);
	r->off += 2;
	return 0;
}

static inline int get4(struct rd *r, uint32_t *v, const char *what)
{
	int rc = need(r, 4, what);

	if (rc)
		return rc;
	*v = (uint32_t)r->p[r->off] << 24 | (uint32_t)r->p[r->off + 1] << 16 |
	     (uint32_t)r->p[r->off + 2] << 8 | r->p[r->off + 3];
	r->off += 4;
	return 0;
}

/*
 * Array v (room for *cap elements of `size` bytes), grown to hold n and
 * zeroed: the array, moved perhaps, or NULL when out of memory (v kept).
 * n is bounded by the bytes left (callers check).
 */
static void *room(void *v, size_t *cap, size_t n, size_t size)
{
	if (!n)
		n = 1;
	if (n > *cap || !v) {
		void *q = realloc(v, n * size);

		if (!q)
			return NULL;
		v = q;
		*cap = n;
	}
	return memset(v, 0, n * size);
}

/* 1 if `idx` is a valid pool index holding a constant tagged `tag`. */
static int is_tag(const struct classfile *cf, unsigned idx, uint8_t tag)
{
	return idx > 0 && idx < cf->ncp && cf->cp[idx].tag == tag;
}

/* Sixteen signed bytes, compared lane by lane (GCC's and clang's vector
 * extension: SSE2 on x86-64, plain code elsewhere). */
typedef int8_t v16i8 __attribute__((vector_size(16)));

/*
 * Check modified UTF-8 (JVMS 4.4.7): no byte 0 or F0..FF, continuation
 * bytes where they belong, and no overlong form except C0 80 (U+0000).
 * Surrogates are allowed: that is how supplementary characters are
 * written.  Returns the offset of the first bad byte, or `n` if none.
 */
static size_t mutf8_check(const uint8_t *s, size_t n)
{
	const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull;
	size_t i = 0;
	uint64_t w, m[2];
	v16i8 a, b;

	while (i < n) {
		uint8_t c;

		/* Many at a time while all are 0x01..0x7f, the bytes that
		 * are positive as signed chars: most of a class's text is
		 * ASCII, and a long string constant is checked 32 bytes a
		 * step (two vector compares where the target has them). */
		for (; n - i >= 32; i += 32) {
			memcpy(&a, s + i, 16);
			memcpy(&b, s + i + 16, 16);
			a = (a > 0) & (b > 0);
			memcpy(m, &a, 16);
			if ((m[0] & m[1]) != ~(uint64_t)0)
				break;
		}
		if (i == n)
			break;
		c = s[i];
		if (n - i >= 8) {
			memcpy(&w, s + i, 8);
			if (!(w & hi) && !((w - lo) & ~w & hi)) {
				i += 8;
				continue;
			}
		}
		if (c >= 0x01 && c <= 0x7f) {
			i++;
		} else if ((c & 0xe0) == 0xc0) {
			/* 110xxxxx 10xxxxxx: U+0080..U+07FF, or U+0000 */
			if (n - i < 2 || (s[i + 1] & 0xc0) != 0x80)
				return i;
			if (c == 0xc1 || (c == 0xc0 && s[i + 1] != 0x80))
				return i;
			i += 2;
		} else if ((c & 0xf0) == 0xe0) {
			/* 1110xxxx 10xxxxxx 10xxxxxx: U+0800..U+FFFF,
			 * surrogate halves included */
			if (n - i < 3 || (s[i + 1] & 0xc0) != 0x80 ||
			    (s[i + 2] & 0xc0) != 0x80)
				return i;
			if (c == 0xe0 && s[i + 1] < 0xa0)
				return i;
			i += 3;
		} else {
			/* 0x00, a stray continuation byte, or 4-byte
			 * UTF-8, which class files never hold */
			return i;
		}
	}
	return n;
}

/* Decode the 3-byte sequence at s (already checked). */
static unsigned dec3(const uint8_t *s)
{
	return (unsigned)(s[0] & 0x0f) << 12 | (unsigned)(s[1] & 0x3f) << 6 |
	       (s[2] & 0x3f);
}

/*
 * Convert checked modified UTF-8 to a standard UTF-8 C string at d, which
 * has room for n + 1 bytes: a surrogate pair (two 3-byte sequences)
 * becomes one 4-byte sequence; the rest is the same.  The output is never
 * longer than the input.  Returns 0, or 1 for U+0000 and 2 for an
 * unpaired surrogate, which have no place in a C string or in UTF-8.
 */
static int mutf8_to_utf8(char *d, const uint8_t *s, size_t n)
{
	size_t i = 0, j = 0;
	uint64_t w;

	while (i < n) {
		uint8_t c = s[i];
		unsigned v, lo, cp;

		/* ASCII eight at a time (checked: no byte is 0); j <= i,
		 * so the eight bytes fit in d's n + 1. */
		if (n - i >= 8) {
			memcpy(&w, s + i, 8);
			if (!(w & 0x8080808080808080ull)) {
				memcpy(d + j, &w, 8);
				i += 8;
				j += 8;
				continue;
			}
		}
		if (c < 0x80) {
			d[j++] = (char)c;
			i++;
			continue;
		}
		/* 2 bytes: the same in UTF-8, except C0 80 (U+0000). */
		if ((c & 0xe0) == 0xc0) {
			if (c == 0xc0)
				return 1;
			memcpy(d + j, s + i, 2);
			i += 2;
			j += 2;
			continue;
		}
		/* 3 bytes: the same in UTF-8 unless a surrogate half. */
		v = dec3(s + i);
		if (v < 0xd800 || v > 0xdfff) {
			memcpy(d + j, s + i, 3);
			i += 3;
			j += 3;
			continue;
		}
		/* A high surrogate must be followed by a low one. */
		if (v > 0xdbff || n - i < 6 || (s[i + 3] & 0xf0) != 0xe0)
			return 2;
		lo = dec3(s + i + 3);
		if (lo < 0xdc00 || lo > 0xdfff)
			return 2;
		/* Join the halves and write the 4-byte UTF-8 form. */
		cp = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
		d[j++] = (char)(0xf0 | cp >> 18);
		d[j++] = (char)(0x80 | (cp >> 12 & 0x3f));
		d[j++] = (char)(0x80 | (cp >> 6 & 0x3f));
		d[j++] = (char)(0x80 | (cp & 0x3f));
		i += 6;
	}
	d[j] = '\0';
	return 0;
}

/*
 * The Utf8 at idx as UTF-8, into buf (cap bytes) if it fits there, else
 * into a malloc'd block: *out is the one or the other (free it unless it
 * is buf).  `what` names it in the error message.  A class names some
 * ten classes and descriptors, each taken once: the caller's buffer
 * spares a malloc for each.
 */
static int utf8_into(char **out, char *buf, size_t cap,
		     const struct classfile *cf, unsigned idx, const char *what,
		     struct cmfs_err *err)
{
	const struct classfile_const *c;
	char *d;
	int rc;

	if (!is_tag(cf, idx, CLASSFILE_UTF8))
		return cmfs_err_set(err, -EINVAL, "constant %u: not a Utf8",
				    idx);
	c = &cf->cp[idx];
	d = (size_t)c->len < cap ? buf : malloc((size_t)c->len + 1);
	if (!d)
		return -ENOMEM;
	rc = mutf8_to_utf8(d, c->bytes, c->len);
	if (rc && d != buf)
		free(d);
	if (rc == 1)
		return cmfs_err_set(err, -EINVAL, "offset %u: %s holds U+0000",
				    c->off, what);
	if (rc == 2)
		return cmfs_err_set(err, -EINVAL,
				    "offset %u: %s holds an unpaired surrogate",
				    c->off, what);
	*out = d;
	return 0;
}

/* The Utf8 at idx as UTF-8, malloc'd (utf8_into). */
static int utf8_dup(char **out, const struct classfile *cf, unsigned idx,
		    const char *what, struct cmfs_err *err)
{
	return utf8_into(out, NULL, 0, cf, idx, what, err);
}

/* What name_len() makes of a byte: a separator, or no name's. */
enum { NAME_PART, NAME_SLASH, NAME_BAD };
static const uint8_t name_byte[256] = {
	['\0'] = NAME_BAD, ['.'] = NAME_BAD,   [';'] = NAME_BAD,
	['['] = NAME_BAD,  ['/'] = NAME_SLASH,
};

/*
 * The length of the class name in internal form (JVMS 4.2.1) at s: one
 * or more non-empty parts separated by '/', none holding '.', ';', '['
 * or '\0'.  It runs to s[n] or, with `end`, to the first `end` byte (a
 * descriptor's L<name>;).  0 when there is no such name.  A byte is one
 * look-up: a wide JAR's classes name some 600,000 names.
 */
static size_t name_len(const char *s, size_t n, char end)
{
	size_t i, start = 0; /* where the part being read starts */

	for (i = 0; i < n; i++) {
		switch (name_byte[(uint8_t)s[i]]) {
		case NAME_PART:
			continue;
		case NAME_SLASH:
			if (i == start)
				return 0;
			start = i + 1;
			continue;
		}
		if (!end || s[i] != end)
			return 0;
		break;
	}
	return start < i ? i : 0;
}

/* 1 if the n bytes at s are a class name in internal form. */
static int internal_name_ok(const char *s, size_t n)
{
	return n && name_len(s, n, '\0') == n;
}

/*
 * The names a class refers to, gathered: every one is appended, '\0'
 * ended, to one growing buffer and remembered by its offset; the list
 * handed out is one allocation (names_finish).  A wide JAR's classes name
 * some thirty classes each, many twice: a malloc per name was a fifth of
 * its inspection.
 */
#define NAMES_BYTES 2048 /* on the stack first: most classes fit */
#define NAMES_MAX 64

struct names {
	char *buf; /* sbuf, or malloc'd once it outgrew it */
	size_t len, cap;
	size_t *off; /* each name's offset into buf; soff, or malloc'd */
	size_t n, alloc;
	char sbuf[NAMES_BYTES];
	size_t soff[NAMES_MAX];
};

static void names_init(struct names *nl)
{
	nl->buf = nl->sbuf;
	nl->cap = sizeof(nl->sbuf);
	nl->off = nl->soff;
	nl->alloc = NAMES_MAX;
	nl->len = nl->n = 0;
}

/* Append a copy of the n bytes at s. */
static int names_add(struct names *nl, const char *s, size_t n)
{
	if (nl->n == nl->alloc) {
		size_t a = nl->alloc * 2;
		size_t *v = nl->off == nl->soff
				    ? malloc(a * sizeof(*v))
				    : realloc(nl->off, a * sizeof(*v));

		if (!v)
			return -ENOMEM;
		if (nl->off == nl->soff)
			memcpy(v, nl->soff, sizeof(nl->soff));
		nl->off = v;
		nl->alloc = a;
	}
	if (n + 1 > nl->cap - nl->len) {
		size_t c = nl->cap;
		char *b;

		while (n + 1 > c - nl->len)
			c *= 2;
		b = nl->buf == nl->sbuf ? malloc(c) : realloc(nl->buf, c);
		if (!b)
			return -ENOMEM;
		if (nl->buf == nl->sbuf)
			memcpy(b, nl->sbuf, nl->len);
		nl->buf = b;
		nl->cap = c;
	}
	memcpy(nl->buf + nl->len, s, n);
	nl->buf[nl->len + n] = '\0';
	nl->off[nl->n++] = nl->len;
	nl->len += n + 1;
	return 0;
}

static void names_release(struct names *nl)
{
	if (nl->buf != nl->sbuf)
		free(nl->buf);
	if (nl->off != nl->soff)
		free(nl->off);
}

/* qsort() order of two name pointers: by bytes. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The gathered names, sorted by bytes, each once, as a NULL-terminated
 * array whose strings live in the same allocation: 0 and *out, *n, or
 * -ENOMEM.  `nl` is released either way.
 */
static int names_finish(struct names *nl, char ***out, size_t *n)
{
	char *sv[NAMES_MAX + 1], **w, *d;
	char **v = nl->n <= NAMES_MAX ? sv : malloc((nl->n + 1) * sizeof(*v));
	size_t i, j, bytes = 0;

	if (!v) {
		names_release(nl);
		return -ENOMEM;
	}
	for (i = 0; i < nl->n; i++)
		v[i] = nl->buf + nl->off[i];
	/* Most classes name a few dozen: sorted in place, without a call
	 * through qsort()'s pointer for each comparison. */
	if (nl->n > NAMES_MAX) {
		qsort(v, nl->n, sizeof(*v), cmp_str);
	} else {
		for (i = 1; i < nl->n; i++) {
			char *x = v[i];

			for (j = i; j > 0 && strcmp(v[j - 1], x) > 0; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
	}
	for (i = j = 0; i < nl->n; i++)
		if (!j || strcmp(v[j - 1], v[i])) {
			v[j++] = v[i];
			bytes += strlen(v[i]) + 1;
		}
	w = malloc((j + 1) * sizeof(*w) + bytes);
	if (!w) {
		if (v != sv)
			free(v);
		names_release(nl);
		return -ENOMEM;
	}
	d = (char *)(w + j + 1);
	for (i = 0; i < j; i++) {
		size_t len = strlen(v[i]) + 1;

		w[i] = memcpy(d, v[i], len);
		d += len;
	}
	w[j] = NULL;
	if (v != sv)
		free(v);
	names_release(nl);
	*out = w;
	*n = j;
	return 0;
}

/*
 * Parse one field type at s + *i (JVMS 4.3.2), adding the class it names
 * to `nl` (when non-NULL).  `void_ok` admits `V` (a method's return type).
 * 0, or 1 when malformed, or -ENOMEM.
 */
static int field_type(const char *s, size_t *i, struct names *nl, int void_ok)
{
	size_t dims = 0, j;

	/* An array: up to 255 dimensions (JVMS 4.3.2), then its element. */
	while (s[*i] == '[') {
		dims++;
		(*i)++;
	}
	if (dims > 255)
		return 1;
	switch (s[*i]) {
	case 'B':
	case 'C':
	case 'D':
	case 'F':
	case 'I':
	case 'J':
	case 'S':
	case 'Z':
		(*i)++;
		return 0;
	case 'V':
		if (!void_ok || dims)
			return 1;
		(*i)++;
		return 0;
	case 'L':
		/* L<internal name>; the only place a class is named */
		if (!(j = name_len(s + *i + 1, SIZE_MAX, ';')))
			return 1;
		if (nl && names_add(nl, s + *i + 1, j))
			return -ENOMEM;
		*i += j + 2;
		return 0;
	default:
		return 1;
	}
}

/* Which descriptors parse_desc() admits. */
enum { DESC_FIELD = 1, DESC_METHOD = 2, DESC_ANY = 3 };

/* Parse a whole descriptor: 0, 1 when malformed, or -ENOMEM. */
static int parse_desc(const char *s, struct names *nl, int which)
{
	size_t i = 0;
	int rc;

	/* "(params)return" for methods, a single field type otherwise. */
	if (s[0] == '(') {
		if (!(which & DESC_METHOD))
			return 1;
		i = 1;
		while (s[i] != ')') {
			if (!s[i])
				return 1;
			rc = field_type(s, &i, nl, 0);
			if (rc)
				return rc;
		}
		i++;
		rc = field_type(s, &i, nl, 1);
	} else {
		if (!(which & DESC_FIELD))
			return 1;
		rc = field_type(s, &i, nl, 0);
	}
	if (rc)
		return rc;
	return s[i] ? 1 : 0;
}

/* The descriptor in Utf8 `idx`: add its classes to `nl`. */
static int desc_refs(const struct classfile *cf, unsigned idx, int which,
		     uint32_t off, struct names *nl, struct cmfs_err *err)
{
	char buf[NAME_BUF], *d = NULL;
	int rc;

	/* Descriptors are converted whole: names in them may be non-ASCII. */
	rc = utf8_into(&d, buf, sizeof(buf), cf, idx, "descriptor", err);
	if (rc)
		return rc;
	rc = parse_desc(d, nl, which);
	if (rc > 0)
		rc = cmfs_err_set(err, -EINVAL, "offset %u: bad descriptor %s",
				  off, d);
	if (d != buf)
		free(d);
	return rc;
}

/*
 * Read the constant pool (JVMS 4.4): first every entry's bytes, then,
 * once all tags are known, every index between entries.
 */
static int parse_pool(struct rd *r, struct classfile *cf)
{
	struct classfile_const *cp;
	uint16_t n;
	unsigned i;
	int rc;

	/* The count is one more than the entries: index 0 is never used. */
	rc = get2(r, &n, "constant_pool_count");
	if (rc)
		return rc;
	if (n == 0)
		return cmfs_err_set(r->err, -EINVAL,
				    "offset 8: constant_pool_count is 0");
	/* Each slot takes at least 3 bytes (a Long: 9 for 2 slots). */
	rc = need(r, (size_t)(n - 1) * 3, "constant pool");
	if (rc)
		return rc;
	cf->ncp = n;
	cp = room(cf->cp, &cf->cp_cap, n, sizeof(*cf->cp));
	if (!cp)
		return -ENOMEM;
	cf->cp = cp;
	for (i = 1; i < n; i++) {
		struct classfile_const *c = &cf->cp[i];
		uint16_t len;
		size_t bad;

		c->off = (uint32_t)r->off;
		rc = get1(r, &c->tag, "constant tag");
		if (rc)
			return rc;
		switch (c->tag) {
		case CLASSFILE_UTF8:
			/* u2 length, then that many bytes, checked now:
			 * every later use may trust them. */
			rc = get2(r, &len, "Utf8 length");
			if (!rc)
				rc = need(r, len, "Utf8 constant");
			if (rc)
				return rc;
			c->bytes = r->p + r->off;
			c->len = len;
			bad = mutf8_check(c->bytes, len);
			if (bad < len)
				return cmfs_err_set(r->err, -EINVAL,
						    "offset %zu: malformed "
						    "modified UTF-8",
						    r->off + bad);
			r->off += len;
			break;
		case CLASSFILE_INTEGER:
		case CLASSFILE_FLOAT:
		case CLASSFILE_LONG:
		case CLASSFILE_DOUBLE:
			/* 4 or 8 raw bytes; 8-byte ones take two slots,
			 * the second unusable (tag 0), as JVMS 4.4.5 says. */
			c->len = c->tag <= CLASSFILE_FLOAT ? 4 : 8;
			rc = need(r, c->len, "numeric constant");
			if (rc)
				return rc;
			c->bytes = r->p + r->off;
			r->off += c->len;
			if (c->len == 8 && ++i >= n)
				return cmfs_err_set(
					r->err, -EINVAL,
					"offset %u: 8-byte constant "
					"in the last pool slot",
					c->off);
			break;
		case CLASSFILE_CLASS:
		case CLASSFILE_STRING:
		case CLASSFILE_METHOD_TYPE:
		case CLASSFILE_MODULE:
		case CLASSFILE_PACKAGE:
			/* One u2: the Utf8 holding the name or text. */
			rc = get2(r, &c->a, "constant index");
			if (rc)
				return rc;
			break;
		case CLASSFILE_FIELDREF:
		case CLASSFILE_METHODREF:
		case CLASSFILE_INTERFACE_METHODREF:
		case CLASSFILE_NAME_AND_TYPE:
		case CLASSFILE_DYNAMIC:
		case CLASSFILE_INVOKE_DYNAMIC:
			/* Two u2: class or bootstrap method, then
			 * NameAndType (or, for NameAndType, two Utf8s). */
			rc = get2(r, &c->a, "constant index");
			if (!rc)
				rc = get2(r, &c->b, "constant index");
			if (rc)
				return rc;
			break;
		case CLASSFILE_METHOD_HANDLE:
			/* u1 reference_kind, u2 the member it handles. */
			rc = get1(r, &c->kind, "reference kind");
			if (!rc)
				rc = get2(r, &c->a, "constant index");
			if (rc)
				return rc;
			break;
		default:
			return cmfs_err_set(
				r->err, -EINVAL,
				"offset %u: unknown constant tag %u", c->off,
				c->tag);
		}
	}
	/* Now that every tag is known, check the links between entries. */
	for (i = 1; i < n; i++) {
		const struct classfile_const *c = &cf->cp[i];
		int ok = 1;

		switch (c->tag) {
		case CLASSFILE_CLASS:
		case CLASSFILE_STRING:
		case CLASSFILE_METHOD_TYPE:
		case CLASSFILE_MODULE:
		case CLASSFILE_PACKAGE:
			ok = is_tag(cf, c->a, CLASSFILE_UTF8);
			break;
		case CLASSFILE_FIELDREF:
		case CLASSFILE_METHODREF:
		case CLASSFILE_INTERFACE_METHODREF:
			ok = is_tag(cf, c->a, CLASSFILE_CLASS) &&
			     is_tag(cf, c->b, CLASSFILE_NAME_AND_TYPE);
			break;
		case CLASSFILE_NAME_AND_TYPE:
			ok = is_tag(cf, c->a, CLASSFILE_UTF8) &&
			     is_tag(cf, c->b, CLASSFILE_UTF8);
			break;
		case CLASSFILE_DYNAMIC:
		case CLASSFILE_INVOKE_DYNAMIC:
			ok = is_tag(cf, c->b, CLASSFILE_NAME_AND_TYPE);
			break;
		case CLASSFILE_METHOD_HANDLE:
			/* JVMS 4.4.8: kinds 1-4 (get/put field or static)
			 * name a Fieldref; 5 and 8 (invokevirtual,
			 * newinvokespecial) a Methodref; 6 and 7 (static,
			 * special) either; 9 (invokeinterface) an
			 * InterfaceMethodref. */
			if (c->kind >= 1 && c->kind <= 4)
				ok = is_tag(cf, c->a, CLASSFILE_FIELDREF);
			else if (c->kind == 5 || c->kind == 8)
				ok = is_tag(cf, c->a, CLASSFILE_METHODREF);
			else if (c->kind == 6 || c->kind == 7)
				ok = is_tag(cf, c->a, CLASSFILE_METHODREF) ||
				     is_tag(cf, c->a,
					    CLASSFILE_INTERFACE_METHODREF);
			else if (c->kind == 9)
				ok = is_tag(cf, c->a,
					    CLASSFILE_INTERFACE_METHODREF);
			else
				ok = 0;
			break;
		}
		if (!ok)
			return cmfs_err_set(
				r->err, -EINVAL,
				"offset %u: constant %u (tag %u) "
				"refers to a wrong or missing entry",
				c->off, i, c->tag);
	}
	return 0;
}

/* Read a u2 that must be the index of a constant tagged `tag`. */
static int get_index(struct rd *r, const struct classfile *cf, uint8_t tag,
		     uint16_t *v, const char *what)
{
	size_t off = r->off;
	int rc = get2(r, v, what);

	if (rc)
		return rc;
	/* Checked where it is read, so the offset in the message is the
	 * offset of the bad index. */
	if (!is_tag(cf, *v, tag))
		return cmfs_err_set(r->err, -EINVAL,
				    "offset %zu: %s %u is not a valid %s index",
				    off, what, *v,
				    tag == CLASSFILE_CLASS ? "Class" : "Utf8");
	return 0;
}

/*
 * An attribute's head: u2 name (a Utf8) into *name, u4 length into *len,
 * and that many bytes present after it (not consumed).
 */
static int attr_head(struct rd *r, const struct classfile *cf,
		     uint16_t *name, uint32_t *len)
{
	int rc = get_index(r, cf, CLASSFILE_UTF8, name, "attribute name");

	if (!rc)
		rc = get4(r, len, "attribute length");
	if (!rc)
		rc = need(r, *len, "attribute");
	return rc;
}

/*
 * Skip `count` attributes, checking each name and length: u2 name (a
 * Utf8), u4 length, then the bytes, which must all be there.  What they
 * hold is not looked at, so a malformed optional attribute is no error
 * (nor is it to the JVM, which ignores attributes it does not use).
 */
static int skip_attrs(struct rd *r, const struct classfile *cf, unsigned count)
{
	unsigned i;
	int rc;

	for (i = 0; i < count; i++) {
		uint16_t name;
		uint32_t len;

		if ((rc = attr_head(r, cf, &name, &len)))
			return rc;
		r->off += len;
	}
	return 0;
}

/* Read a Code attribute's body, `len` bytes at the cursor (JVMS 4.7.3). */
static int parse_code(struct rd *r, const struct classfile *cf, uint32_t len,
		      struct classfile_member *m)
{
	/* A cursor that ends where the attribute ends: nothing inside can
	 * claim bytes of what follows it. */
	struct rd c = {r->p, r->off + len, r->off, r->err};
	uint16_t u, nexc, nattr;
	uint32_t code_len;
	int rc;

	rc = get2(&c, &u, "max_stack");
	if (!rc)
		rc = get2(&c, &u, "max_locals");
	if (!rc)
		rc = get4(&c, &code_len, "code_length");
	if (rc)
		return rc;
	if (code_len == 0 || code_len > 65535)
		return cmfs_err_set(
			r->err, -EINVAL,
			"offset %zu: code_length %u is not 1..65535", c.off - 4,
			code_len);
	rc = need(&c, code_len, "code");
	if (rc)
		return rc;
	m->code = c.p + c.off;
	m->code_len = code_len;
	c.off += code_len;
	rc = get2(&c, &nexc, "exception_table_length");
	if (!rc)
		rc = need(&c, (size_t)nexc * 8, "exception table");
	if (rc)
		return rc;
	m->exc = c.p + c.off; /* start, end, handler, catch_type */
	m->nexc = nexc;
	c.off += (size_t)nexc * 8;
	/* LineNumberTable, StackMapTable ...: skipped, lengths checked. */
	rc = get2(&c, &nattr, "attributes_count");
	if (!rc)
		rc = skip_attrs(&c, cf, nattr);
	if (rc)
		return rc;
	if (c.off != c.len)
		return cmfs_err_set(r->err, -EINVAL,
				    "offset %zu: Code attribute is %zu bytes "
				    "longer than its contents",
				    c.off, c.len - c.off);
	r->off = c.off;
	return 0;
}

/* Read the attributes of one field or method (`method` says which). */
static int member_attrs(struct rd *r, const struct classfile *cf,
			struct classfile_member *m, int method)
{
	uint16_t count, name, cv;
	uint32_t len;
	unsigned i;
	int rc;

	rc = get2(r, &count, "attributes_count");
	if (rc)
		return rc;
	for (i = 0; i < count; i++) {
		size_t at = r->off;

		if ((rc = attr_head(r, cf, &name, &len)))
			return rc;
		/*
		 * Attributes are known by name, not position.  A field has
		 * at most one ConstantValue (2 bytes: a constant of a
		 * loadable type); a method at most one Code.  Anything else
		 * (Signature, annotations, Exceptions ...) is skipped.
		 */
		if (!method && classfile_utf8_eq(cf, name, "ConstantValue")) {
			if (m->constant || len != 2)
				return cmfs_err_set(r->err, -EINVAL,
						    "offset %zu: bad or second "
						    "ConstantValue",
						    at);
			rc = get2(r, &cv, "ConstantValue");
			if (rc)
				return rc;
			if (!is_tag(cf, cv, CLASSFILE_INTEGER) &&
			    !is_tag(cf, cv, CLASSFILE_FLOAT) &&
			    !is_tag(cf, cv, CLASSFILE_LONG) &&
			    !is_tag(cf, cv, CLASSFILE_DOUBLE) &&
			    !is_tag(cf, cv, CLASSFILE_STRING))
				return cmfs_err_set(r->err, -EINVAL,
						    "offset %zu: ConstantValue "
						    "%u is not a constant",
						    at + 6, cv);
			m->constant = cv;
		} else if (method && classfile_utf8_eq(cf, name, "Code")) {
			if (m->code)
				return cmfs_err_set(r->err, -EINVAL,
						    "offset %zu: second Code "
						    "attribute",
						    at);
			rc = parse_code(r, cf, len, m);
			if (rc)
				return rc;
		} else {
			r->off += len;
		}
	}
	return 0;
}

/* Read fields (method = 0) or methods (method = 1), JVMS 4.5 and 4.6. */
static int parse_members(struct rd *r, const struct classfile *cf,
			 struct classfile_member **out, size_t *cap,
			 uint16_t *nout, int method)
{
	const char *what = method ? "methods" : "fields";
	struct classfile_member *v;
	uint16_t n;
	unsigned i;
	int rc;

	rc = get2(r, &n, what);
	if (!rc) /* each member is at least 8 bytes */
		rc = need(r, (size_t)n * 8, what);
	if (rc)
		return rc;
	/* Bounded by the check above: at most len / 8 members. */
	v = room(*out, cap, n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	*out = v;
	*nout = n;
	for (i = 0; i < n; i++) {
		v[i].off = (uint32_t)r->off;
		rc = get2(r, &v[i].access, "access_flags");
		if (!rc)
			rc = get_index(r, cf, CLASSFILE_UTF8, &v[i].name,
				       "member name");
		if (!rc)
			rc = get_index(r, cf, CLASSFILE_UTF8, &v[i].desc,
				       "member descriptor");
		if (!rc)
			rc = member_attrs(r, cf, &v[i], method);
		if (rc)
			return rc;
	}
	return 0;
}

/* 1 if constant idx may be a bootstrap argument (JVMS 4.7.23). */
static int loadable(const struct classfile *cf, unsigned idx)
{
	if (idx == 0 || idx >= cf->ncp)
		return 0;
	switch (cf->cp[idx].tag) {
	case CLASSFILE_INTEGER:
	case CLASSFILE_FLOAT:
	case CLASSFILE_LONG:
	case CLASSFILE_DOUBLE:
	case CLASSFILE_CLASS:
	case CLASSFILE_STRING:
	case CLASSFILE_METHOD_HANDLE:
	case CLASSFILE_METHOD_TYPE:
	case CLASSFILE_DYNAMIC:
		return 1;
	}
	return 0;
}

/*
 * Read the BootstrapMethods attribute's body, `len` bytes at the cursor
 * (JVMS 4.7.23): each entry's offset is kept, its handle and arguments
 * checked.  At most one such attribute.
 */
static int parse_bsm(struct rd *r, struct classfile *cf, uint32_t len,
		     size_t at)
{
	struct rd c = {r->p, r->off + len, r->off, r->err};
	uint16_t n, h, nargs, a;
	uint32_t *v;
	unsigned i, j;
	int rc;

	if (cf->nbsm)
		return cmfs_err_set(r->err, -EINVAL,
				    "offset %zu: second BootstrapMethods", at);
	rc = get2(&c, &n, "num_bootstrap_methods");
	if (!rc) /* each entry is at least 4 bytes */
		rc = need(&c, (size_t)n * 4, "bootstrap methods");
	if (rc)
		return rc;
	v = room(cf->bsm, &cf->bsm_cap, n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	cf->bsm = v;
	for (i = 0; i < n; i++) {
		v[i] = (uint32_t)c.off;
		rc = get2(&c, &h, "bootstrap_method_ref");
		if (!rc && !is_tag(cf, h, CLASSFILE_METHOD_HANDLE))
			rc = cmfs_err_set(r->err, -EINVAL,
					  "offset %zu: bootstrap method %u is "
					  "not a MethodHandle",
					  c.off - 2, h);
		if (!rc)
			rc = get2(&c, &nargs, "num_bootstrap_arguments");
		if (!rc)
			rc = need(&c, (size_t)nargs * 2, "bootstrap arguments");
		for (j = 0; j < nargs && !rc; j++) {
			rc = get2(&c, &a, "bootstrap argument");
			if (!rc && !loadable(cf, a))
				rc = cmfs_err_set(r->err, -EINVAL,
						  "offset %zu: bootstrap "
						  "argument %u is not loadable",
						  c.off - 2, a);
		}
		if (rc)
			return rc;
	}
	if (c.off != c.len)
		return cmfs_err_set(r->err, -EINVAL,
				    "offset %zu: BootstrapMethods is %zu bytes "
				    "longer than its contents",
				    c.off, c.len - c.off);
	cf->nbsm = n;
	r->off = c.off;
	return 0;
}

/* One attribute of the class itself: BootstrapMethods read, others
 * skipped (their lengths checked). */
static int class_attr(struct rd *r, struct classfile *cf)
{
	size_t at = r->off;
	uint16_t name;
	uint32_t len;
	int rc;

	if ((rc = attr_head(r, cf, &name, &len)))
		return rc;
	if (classfile_utf8_eq(cf, name, "BootstrapMethods"))
		return parse_bsm(r, cf, len, at);
	r->off += len;
	return 0;
}

/*
 * The sections in file order (JVMS 4.1): magic and versions, the pool,
 * the class proper, fields, methods, attributes; then nothing.  Each
 * step leaves the cursor at the next; the first error stops it all.
 */
int classfile_reparse(struct classfile *cf, const void *data, size_t len,
		      struct cmfs_err *err)
{
	struct rd r = {data, len, 0, err};
	uint16_t n, count, *ifs;
	uint32_t magic;
	unsigned i;
	int rc;

	/* Nothing of an earlier parse shows through: counts first. */
	cf->ncp = cf->ninterfaces = cf->nfields = cf->nmethods = 0;
	cf->nbsm = 0;
	cf->this_class = cf->super_class = 0;
	cf->data = data;
	cf->len = len;
	rc = get4(&r, &magic, "magic");
	if (rc)
		goto out;
	if (magic != 0xcafebabe) {
		rc = cmfs_err_set(err, -EINVAL,
				  "offset 0: magic is 0x%08x, not a class file",
				  magic);
		goto out;
	}
	rc = get2(&r, &cf->minor, "minor_version");
	if (!rc)
		rc = get2(&r, &cf->major, "major_version");
	if (rc)
		goto out;
	if (cf->major < 45) {
		rc = cmfs_err_set(err, -EINVAL,
				  "offset 6: major version %u is not valid",
				  cf->major);
		goto out;
	}
	rc = parse_pool(&r, cf);
	if (rc)
		goto out;
	/* JVMS 4.1: the class proper.  super_class is 0 only for
	 * java/lang/Object and module-info; we take 0 from anyone. */
	rc = get2(&r, &cf->access, "access_flags");
	if (!rc)
		rc = get_index(&r, cf, CLASSFILE_CLASS, &cf->this_class,
			       "this_class");
	if (!rc)
		rc = get2(&r, &cf->super_class, "super_class");
	if (!rc && cf->super_class &&
	    !is_tag(cf, cf->super_class, CLASSFILE_CLASS))
		rc = cmfs_err_set(err, -EINVAL,
				  "offset %zu: super_class %u is not a valid "
				  "Class index",
				  r.off - 2, cf->super_class);
	if (!rc)
		rc = get2(&r, &n, "interfaces_count");
	if (!rc)
		rc = need(&r, (size_t)n * 2, "interfaces");
	if (rc)
		goto out;
	ifs = room(cf->interfaces, &cf->if_cap, n, sizeof(*ifs));
	if (!ifs) {
		rc = -ENOMEM;
		goto out;
	}
	cf->interfaces = ifs;
	cf->ninterfaces = n;
	for (i = 0; i < n && !rc; i++)
		rc = get_index(&r, cf, CLASSFILE_CLASS, &cf->interfaces[i],
			       "interface");
	if (!rc)
		rc = parse_members(&r, cf, &cf->fields, &cf->fields_cap,
				   &cf->nfields, 0);
	if (!rc)
		rc = parse_members(&r, cf, &cf->methods, &cf->methods_cap,
				   &cf->nmethods, 1);
	/* The class's own attributes (SourceFile, InnerClasses ...):
	 * only BootstrapMethods is read. */
	if (!rc)
		rc = get2(&r, &count, "attributes_count");
	for (i = 0; i < count && !rc; i++)
		rc = class_attr(&r, cf);
	if (rc)
		goto out;
	/* The JVM refuses trailing bytes too (ClassFormatError). */
	if (r.off != len)
		rc = cmfs_err_set(err, -EINVAL,
				  "offset %zu: %zu extra bytes after the class",
				  r.off, len - r.off);
out:
	return rc;
}

int classfile_parse(struct classfile **out, const void *data, size_t len,
		    struct cmfs_err *err)
{
	struct classfile *cf = calloc(1, sizeof(*cf));
	int rc;

	if (!cf)
		return -ENOMEM;
	rc = classfile_reparse(cf, data, len, err);
	if (rc) {
		classfile_free(cf);
		return rc;
	}
	*out = cf;
	return 0;
}

/* The pointers inside point into the caller's bytes: nothing to free. */
void classfile_free(struct classfile *cf)
{
	if (!cf)
		return;
	free(cf->cp);
	free(cf->interfaces);
	free(cf->fields);
	free(cf->methods);
	free(cf->bsm);
	free(cf);
}

int classfile_utf8(char **out, const struct classfile *cf, unsigned idx,
		   struct cmfs_err *err)
{
	return utf8_dup(out, cf, idx, "Utf8 constant", err);
}

/*
 * Byte comparison: modified UTF-8 and UTF-8 agree on ASCII without NUL,
 * and the names compared here (attribute, member, descriptor) are ASCII.
 */
int classfile_utf8_eq(const struct classfile *cf, unsigned idx, const char *s)
{
	size_t n = strlen(s);

	return is_tag(cf, idx, CLASSFILE_UTF8) && cf->cp[idx].len == n &&
	       memcmp(cf->cp[idx].bytes, s, n) == 0;
}

/*
 * The name of Class constant idx, checked, into buf or malloc'd as
 * utf8_into() puts it.  Names are checked when asked for, not at parse
 * time, as the JVM checks them when it resolves the constant.
 */
static int class_name_into(char **out, char *buf, size_t cap,
			   const struct classfile *cf, unsigned idx,
			   struct cmfs_err *err)
{
	char *s = NULL;
	size_t n;
	int rc, ok;

	if (!is_tag(cf, idx, CLASSFILE_CLASS))
		return cmfs_err_set(err, -EINVAL, "constant %u: not a Class",
				    idx);
	rc = utf8_into(&s, buf, cap, cf, cf->cp[idx].a, "class name", err);
	if (rc)
		return rc;
	n = strlen(s);
	/* An array class is named by its descriptor ("[I", "[La/B;"),
	 * every other class by its internal name. */
	ok = s[0] == '[' ? parse_desc(s, NULL, DESC_FIELD) == 0
			 : internal_name_ok(s, n);
	if (!ok) {
		rc = cmfs_err_set(err, -EINVAL, "offset %u: bad class name %s",
				  cf->cp[idx].off, s);
		if (s != buf)
			free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int classfile_class_name(char **out, const struct classfile *cf, unsigned idx,
			 struct cmfs_err *err)
{
	return class_name_into(out, NULL, 0, cf, idx, err);
}

int classfile_string(char **out, const struct classfile *cf, unsigned idx,
		     struct cmfs_err *err)
{
	if (!is_tag(cf, idx, CLASSFILE_STRING))
		return cmfs_err_set(err, -EINVAL, "constant %u: not a String",
				    idx);
	return utf8_dup(out, cf, cf->cp[idx].a, "string", err);
}

/* The first member of v[0..n) with this name and descriptor. */
static const struct classfile_member *
find_member(const struct classfile *cf, const struct classfile_member *v,
	    unsigned n, const char *name, const char *desc)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (classfile_utf8_eq(cf, v[i].name, name) &&
		    classfile_utf8_eq(cf, v[i].desc, desc))
			return &v[i];
	return NULL;
}

const struct classfile_member *
classfile_method(const struct classfile *cf, const char *name, const char *desc)
{
	return find_member(cf, cf->methods, cf->nmethods, name, desc);
}

const struct classfile_member *
classfile_field(const struct classfile *cf, const char *name, const char *desc)
{
	return find_member(cf, cf->fields, cf->nfields, name, desc);
}

/* Add the class a Class constant names (an array's element class). */
static int class_ref(const struct classfile *cf, unsigned idx, struct names *nl,
		     struct cmfs_err *err)
{
	char buf[NAME_BUF], *s = NULL;
	size_t i = 0;
	int rc;

	rc = class_name_into(&s, buf, sizeof(buf), cf, idx, err);
	if (rc)
		return rc;
	/*
	 * An array class ("[[La/B;", from anewarray or checkcast of an
	 * array) is linked through its element class; a primitive array
	 * ("[I") names no class at all.
	 */
	if (s[0] != '[')
		rc = names_add(nl, s, strlen(s));
	else /* already checked: parses, adding the element class if any */
		rc = field_type(s, &i, nl, 0) < 0 ? -ENOMEM : 0;
	if (s != buf)
		free(s);
	return rc;
}

int classfile_refs(char ***out, size_t *n, const struct classfile *cf,
		   struct cmfs_err *err)
{
	struct names nl;
	size_t i;
	int rc = 0;

	names_init(&nl);
	/*
	 * Methodref, Fieldref and friends name their class through a Class
	 * constant and their type through a NameAndType, so those two and
	 * MethodType cover every class the code can name; the descriptors
	 * of the class's own members cover its signature.
	 */
	for (i = 1; i < cf->ncp && !rc; i++) {
		const struct classfile_const *c = &cf->cp[i];

		if (c->tag == CLASSFILE_CLASS)
			rc = class_ref(cf, (unsigned)i, &nl, err);
		else if (c->tag == CLASSFILE_NAME_AND_TYPE)
			rc = desc_refs(cf, c->b, DESC_ANY, c->off, &nl, err);
		else if (c->tag == CLASSFILE_METHOD_TYPE)
			rc = desc_refs(cf, c->a, DESC_METHOD, c->off, &nl, err);
	}
	for (i = 0; i < cf->nfields && !rc; i++)
		rc = desc_refs(cf, cf->fields[i].desc, DESC_FIELD,
			       cf->fields[i].off, &nl, err);
	for (i = 0; i < cf->nmethods && !rc; i++)
		rc = desc_refs(cf, cf->methods[i].desc, DESC_METHOD,
			       cf->methods[i].off, &nl, err);
	if (rc) {
		names_release(&nl);
		return rc;
	}
	return names_finish(&nl, out, n);
}

void classfile_names_free(char **names)
{
	free(names); /* the strings are in the same block (names_finish) */
}

enum classfile_ret classfile_const_return(const struct classfile *cf,
					  const struct classfile_member *m,
					  unsigned *index)
{
	const uint8_t *c = m->code;
	unsigned idx, next;

	/*
	 * Only straight-line code whose first instruction loads the value
	 * and whose second returns it: a branch cannot come between, so
	 * nothing else can be returned.  Opcodes per JVMS chapter 6.
	 */
	if (!c || m->code_len < 3)
		return CLASSFILE_RET_OTHER;
	switch (c[0]) {
	case 0x12: /* ldc u1 */
		idx = c[1];
		next = 2;
		break;
	case 0x13: /* ldc_w u2 */
	case 0xb2: /* getstatic u2 */
		if (m->code_len < 4)
			return CLASSFILE_RET_OTHER;
		idx = (unsigned)c[1] << 8 | c[2];
		next = 3;
		break;
	default:
		return CLASSFILE_RET_OTHER;
	}
	if (c[next] != 0xb0) /* areturn */
		return CLASSFILE_RET_OTHER;
	/* The operand must name the right kind of constant: ldc of an
	 * Integer or a Class returns no String. */
	if (c[0] == 0xb2) {
		if (!is_tag(cf, idx, CLASSFILE_FIELDREF))
			return CLASSFILE_RET_OTHER;
		*index = idx;
		return CLASSFILE_RET_FIELD;
	}
	if (!is_tag(cf, idx, CLASSFILE_STRING))
		return CLASSFILE_RET_OTHER;
	*index = idx;
	return CLASSFILE_RET_STRING;
}

/*
 * Instruction lengths by opcode (JVMS chapter 6), operands included: 0
 * for the ones whose length depends on the code (0xaa tableswitch, 0xab
 * lookupswitch, 0xc4 wide), and for the opcodes a class file may not hold
 * (0xca breakpoint, the unassigned 0xcb..0xfd, 0xfe and 0xff impdep).
 * Rows of sixteen: 0x84 is iinc (3), 0x99..0xa8 branches (3), 0xb9 and
 * 0xba invokeinterface and invokedynamic (5), 0xc8 and 0xc9 goto_w and
 * jsr_w (5).
 */
static const uint8_t insn_len[256] = {
	/* 0x00 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x10 */ 2, 3, 2, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1,
	/* 0x20 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x30 */ 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1,
	/* 0x40 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x50 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x60 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x70 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x80 */ 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x90 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3,
	/* 0xa0 */ 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 0, 0, 1, 1, 1, 1,
	/* 0xb0 */ 1, 1, 3, 3, 3, 3, 3, 3, 3, 5, 5, 3, 2, 3, 1, 1,
	/* 0xc0 */ 3, 3, 1, 1, 0, 4, 3, 3, 5, 5, 0, 0, 0, 0, 0, 0,
	/* 0xd0..0xff: 0 */
};

/* The tags operand `index` of opcode `op` may have: 1 if it has one. */
static int operand_ok(const struct classfile *cf, uint8_t op, unsigned idx)
{
	uint8_t t = idx && idx < cf->ncp ? cf->cp[idx].tag : 0;

	switch (op) {
	case CLASSFILE_OP_INVOKEVIRTUAL:
		return t == CLASSFILE_METHODREF;
	case CLASSFILE_OP_INVOKESPECIAL:
	case CLASSFILE_OP_INVOKESTATIC:
		return t == CLASSFILE_METHODREF ||
		       t == CLASSFILE_INTERFACE_METHODREF;
	case CLASSFILE_OP_INVOKEINTERFACE:
		return t == CLASSFILE_INTERFACE_METHODREF;
	case CLASSFILE_OP_INVOKEDYNAMIC:
		return t == CLASSFILE_INVOKE_DYNAMIC &&
		       cf->cp[idx].a < cf->nbsm;
	case CLASSFILE_OP_NEW:
	case CLASSFILE_OP_CHECKCAST:
	case CLASSFILE_OP_INSTANCEOF:
	case CLASSFILE_OP_ANEWARRAY:
	case CLASSFILE_OP_MULTIANEWARRAY:
		return t == CLASSFILE_CLASS;
	case CLASSFILE_OP_GETSTATIC:
	case CLASSFILE_OP_PUTSTATIC:
	case CLASSFILE_OP_GETFIELD:
	case CLASSFILE_OP_PUTFIELD:
		return t == CLASSFILE_FIELDREF;
	case CLASSFILE_OP_LDC2_W:
		return t == CLASSFILE_LONG || t == CLASSFILE_DOUBLE ||
		       (t == CLASSFILE_DYNAMIC && cf->cp[idx].a < cf->nbsm);
	default: /* ldc, ldc_w */
		if (t == CLASSFILE_DYNAMIC)
			return cf->cp[idx].a < cf->nbsm;
		return t != CLASSFILE_LONG && t != CLASSFILE_DOUBLE &&
		       loadable(cf, idx);
	}
}

/* A big-endian u4 at p. */
static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* The offset in the class file of code[pc]. */
static size_t code_off(const struct classfile *cf,
		       const struct classfile_member *m, uint32_t pc)
{
	return (size_t)(m->code - cf->data) + pc;
}

int classfile_insn_next(const struct classfile *cf,
			const struct classfile_member *m, uint32_t *pc,
			struct classfile_insn *insn, struct cmfs_err *err)
{
	const uint8_t *c = m->code;
	uint32_t at = *pc, n = m->code_len, len;
	uint8_t op;
	int has = 0; /* it has a constant operand, to be checked */

	if (!c || at >= n)
		return 0;
	op = c[at];
	len = insn_len[op];
	insn->pc = at;
	insn->op = op;
	insn->index = 0;
	insn->local = 0;
	if (op == 0xaa || op == 0xab) {
		/* tableswitch, lookupswitch: 0-3 bytes of padding to a
		 * multiple of 4 from the start of the code, then the
		 * default and the table (64-bit sums: no wrap). */
		uint64_t p = ((uint64_t)at + 4) & ~(uint64_t)3, entries;
		uint64_t head = op == 0xaa ? 12 : 8; /* default, low, high;
						      * default, npairs */

		if (p + head > n)
			goto cut;
		if (op == 0xaa) {
			int32_t lo = (int32_t)be32(c + p + 4);
			int32_t hi = (int32_t)be32(c + p + 8);

			if (hi < lo)
				return cmfs_err_set(err, -EINVAL,
						    "offset %zu: tableswitch "
						    "high below low",
						    code_off(cf, m, at));
			entries = ((uint64_t)((int64_t)hi - lo) + 1) * 4;
		} else {
			int32_t np = (int32_t)be32(c + p + 4);

			if (np < 0)
				return cmfs_err_set(err, -EINVAL,
						    "offset %zu: lookupswitch "
						    "of %d pairs",
						    code_off(cf, m, at), np);
			entries = (uint64_t)np * 8;
		}
		if (p + head + entries > n)
			goto cut;
		*pc = (uint32_t)(p + head + entries);
		return 1;
	}
	if (op == 0xc4) {
		/* wide: a load, store or ret with a u2 index, or iinc with
		 * a u2 index and an s2 constant. */
		if (n - at < 2)
			goto cut;
		op = c[at + 1];
		if (op == 0x84)
			len = 6;
		else if ((op >= 0x15 && op <= 0x19) ||
			 (op >= 0x36 && op <= 0x3a) || op == 0xa9)
			len = 4;
		else
			return cmfs_err_set(err, -EINVAL,
					    "offset %zu: wide of opcode 0x%02x",
					    code_off(cf, m, at), op);
		insn->op = op;
	} else if (!len) {
		return cmfs_err_set(err, -EINVAL,
				    "offset %zu: unknown opcode 0x%02x",
				    code_off(cf, m, at), op);
	}
	if (n - at < len)
		goto cut;
	/* The local variable of a load, store, iinc or ret: a u1 operand,
	 * a u2 after wide, or in the opcode (iload_0 .. astore_3). */
	if ((op >= 0x15 && op <= 0x19) || (op >= 0x36 && op <= 0x3a) ||
	    op == 0x84 || op == 0xa9)
		insn->local = c[at] == 0xc4
				      ? (uint16_t)(c[at + 2] << 8 | c[at + 3])
				      : c[at + 1];
	else if (op >= 0x1a && op <= 0x2d)
		insn->local = (op - 0x1a) & 3;
	else if (op >= 0x3b && op <= 0x4e)
		insn->local = (op - 0x3b) & 3;
	switch (op) {
	case CLASSFILE_OP_LDC:
		insn->index = c[at + 1];
		has = 1;
		break;
	case CLASSFILE_OP_LDC_W:
	case CLASSFILE_OP_LDC2_W:
	case CLASSFILE_OP_GETSTATIC:
	case CLASSFILE_OP_PUTSTATIC:
	case CLASSFILE_OP_GETFIELD:
	case CLASSFILE_OP_PUTFIELD:
	case CLASSFILE_OP_INVOKEVIRTUAL:
	case CLASSFILE_OP_INVOKESPECIAL:
	case CLASSFILE_OP_INVOKESTATIC:
	case CLASSFILE_OP_INVOKEINTERFACE:
	case CLASSFILE_OP_INVOKEDYNAMIC:
	case CLASSFILE_OP_NEW:
	case CLASSFILE_OP_ANEWARRAY:
	case CLASSFILE_OP_CHECKCAST:
	case CLASSFILE_OP_INSTANCEOF:
	case CLASSFILE_OP_MULTIANEWARRAY:
		if (c[at] == 0xc4) /* wide never widens these */
			break;
		insn->index = (uint16_t)(c[at + 1] << 8 | c[at + 2]);
		has = 1;
		break;
	}
	if (has && !operand_ok(cf, op, insn->index))
		return cmfs_err_set(err, -EINVAL,
				    "offset %zu: opcode 0x%02x with operand "
				    "%u of the wrong kind",
				    code_off(cf, m, at), op, insn->index);
	*pc = at + len;
	return 1;
cut:
	return cmfs_err_set(err, -EINVAL,
			    "offset %zu: instruction cut by the end of the "
			    "code",
			    code_off(cf, m, at));
}

int classfile_handler(const struct classfile *cf,
		      const struct classfile_member *m, unsigned i,
		      uint16_t *cls, struct cmfs_err *err)
{
	const uint8_t *e;
	uint16_t t;

	if (i >= m->nexc)
		return cmfs_err_set(err, -EINVAL, "no handler %u", i);
	e = m->exc + (size_t)i * 8;
	t = (uint16_t)(e[6] << 8 | e[7]);
	if (t && !is_tag(cf, t, CLASSFILE_CLASS))
		return cmfs_err_set(err, -EINVAL,
				    "offset %zu: catch_type %u is not a Class",
				    (size_t)(e - cf->data) + 6, t);
	*cls = t;
	return 0;
}

int classfile_bootstrap(const struct classfile *cf, unsigned bsm,
			uint16_t *handle, uint16_t *nargs, struct cmfs_err *err)
{
	const uint8_t *p;

	if (bsm >= cf->nbsm)
		return cmfs_err_set(err, -EINVAL,
				    "bootstrap method %u: no such entry", bsm);
	p = cf->data + cf->bsm[bsm];
	*handle = (uint16_t)(p[0] << 8 | p[1]);
	*nargs = (uint16_t)(p[2] << 8 | p[3]);
	return 0;
}

uint16_t classfile_bootstrap_arg(const struct classfile *cf, unsigned bsm,
				 unsigned i)
{
	const uint8_t *p = cf->data + cf->bsm[bsm] + 4 + (size_t)i * 2;

	return (uint16_t)(p[0] << 8 | p[1]);
}

int classfile_desc_classes(const char *desc, const char **names, size_t *n,
			   size_t cap, size_t *count)
{
	size_t i = 0, k = 0, j;
	int method = desc[0] == '(';

	/* The same grammar as parse_desc, the names kept in place. */
	if (method)
		i = 1;
	for (;;) {
		size_t dims = 0;

		if (method && desc[i] == ')') {
			method = 0;
			i++;
			if (desc[i] == 'V') {
				i++;
				break;
			}
		}
		while (desc[i] == '[') {
			dims++;
			i++;
		}
		if (dims > 255)
			return -EINVAL;
		switch (desc[i]) {
		case 'B':
		case 'C':
		case 'D':
		case 'F':
		case 'I':
		case 'J':
		case 'S':
		case 'Z':
			i++;
			break;
		case 'L':
			j = name_len(desc + i + 1, SIZE_MAX, ';');
			if (!j)
				return -EINVAL;
			if (k < cap) {
				names[k] = desc + i + 1;
				n[k] = j;
			}
			k++;
			i += j + 2;
			break;
		default:
			return -EINVAL;
		}
		if (!method)
			break;
	}
	if (desc[i] || (desc[0] == '(' && method))
		return -EINVAL;
	*count = k;
	return 0;
}
