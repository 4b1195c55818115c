/*
 * json.c - rows of strings out of a JSON array of arrays (json.h).
 *
 * SQLite's json_each() read these before, one virtual-table row per
 * element: reading a JAR's factories that way was an eighth of a label
 * change's CPU.  This reads them in one pass: strictly (RFC 8259 strings,
 * no NUL, no lone surrogates), since a row someone edited by hand must
 * come out as an error, never as a different value.
 */
#include "json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Four hex digits at p (before end) into *out. */
static int hex4(const char *p, const char *end, unsigned *out)
{
	unsigned v = 0;
	int i;

	if (end - p < 4)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

size_t json_utf8(char s[4], unsigned long cp)
{
	if (cp < 0x80) {
		s[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		s[0] = (char)(0xc0 | cp >> 6);
		s[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		s[0] = (char)(0xe0 | cp >> 12);
		s[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		s[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	s[0] = (char)(0xf0 | cp >> 18);
	s[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	s[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	s[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int json_unicode(const char **p, const char *end, unsigned *cp)
{
	const char *s = *p;
	unsigned hi, lo;

	if (hex4(s, end, &hi))
		return JSON_BAD_HEX;
	s += 4;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return JSON_LONE_SURROGATE;
	if (hi >= 0xd800 && hi <= 0xdbff) {
		if (end - s < 2 || s[0] != '\\' || s[1] != 'u')
			return JSON_LONE_SURROGATE;
		if (hex4(s + 2, end, &lo))
			return JSON_BAD_HEX;
		if (lo < 0xdc00 || lo > 0xdfff)
			return JSON_LONE_SURROGATE;
		s += 6;
		hi = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (!hi)
		return JSON_NUL; /* it would cut the C string short */
	*cp = hi;
	*p = s;
	return 0;
}

/*
 * The string at *p (its opening quote) decoded into *o, NUL-terminated;
 * *p and *o moved past it.  The output never outgrows the input.
 */
static int string(const char **p, const char *end, char **o)
{
	static const char plain[] = "\"\\/bfnrt", means[] = "\"\\/\b\f\n\r\t";
	const char *s = *p + 1, *k;
	char *d = *o;

	for (;;) {
		unsigned char c = (unsigned char)*s++;
		unsigned cp;

		if (c == '"')
			break;
		if (c < 0x20)
			return -EINVAL; /* the end, or a raw control */
		if (c != '\\') {
			*d++ = (char)c;
			continue;
		}
		if (*s == 'u') {
			s++;
			if (json_unicode(&s, end, &cp))
				return -EINVAL;
			d += json_utf8(d, cp);
		} else if (*s && (k = strchr(plain, *s))) {
			*d++ = means[k - plain];
			s++;
		} else {
			return -EINVAL;
		}
	}
	*d++ = '\0';
	*p = s;
	*o = d;
	return 0;
}

int json_rows(const char *text, size_t width,
	      int (*fn)(void *arg, char **fields), void *arg)
{
	char *fields[JSON_MAX_WIDTH], *buf, *o;
	const char *p = skip_ws(text), *end = text + strlen(text);
	int rc = 0;
	size_t i;

	if (width < 1 || width > JSON_MAX_WIDTH || *p != '[')
		return -EINVAL;
	/* Every decoded string is no longer than its JSON text. */
	if (!(buf = malloc((size_t)(end - text) + 1)))
		return -ENOMEM;
	p = skip_ws(p + 1);
	if (*p == ']')
		goto done;
	for (;;) {
		if (*p != '[') {
			rc = -EINVAL;
			break;
		}
		o = buf;
		for (i = 0; !rc && i < width; i++) {
			p = skip_ws(p + 1); /* past '[' or ',' */
			if (!strncmp(p, "null", 4)) {
				fields[i] = NULL;
				p += 4;
			} else if (*p == '"') {
				fields[i] = o;
				rc = string(&p, end, &o);
			} else {
				rc = -EINVAL;
			}
			p = skip_ws(p);
			if (!rc && *p != (i + 1 < width ? ',' : ']'))
				rc = -EINVAL;
		}
		if (rc || (rc = fn(arg, fields)))
			break;
		p = skip_ws(p + 1);
		if (*p == ']')
			break;
		if (*p != ',') {
			rc = -EINVAL;
			break;
		}
		p = skip_ws(p + 1);
	}
done:
	if (!rc && *skip_ws(p + 1))
		rc = -EINVAL; /* something after the array */
	free(buf);
	return rc;
}

/* `s` as a JSON string (or null) into b. */
static int json_str(struct buf *b, const char *s)
{
	int rc = 0;

	if (!s)
		return buf_adds(b, "null");
	rc = buf_addc(b, '"');
	for (; !rc && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			rc = buf_printf(b, "\\%c", c);
		else if (c < 0x20)
			rc = buf_printf(b, "\\u%04x", c);
		else
			rc = buf_addc(b, (char)c);
	}
	return rc ? rc : buf_addc(b, '"');
}

int json_rows_write(struct buf *b, size_t n, size_t width,
		      const char *(*field)(const void *arg, size_t i,
					   size_t j),
		      const void *arg)
{
	size_t i, j;
	int rc = buf_addc(b, '[');

	for (i = 0; !rc && i < n; i++) {
		rc = buf_adds(b, i ? ",[" : "[");
		for (j = 0; !rc && j < width; j++) {
			if (j)
				rc = buf_addc(b, ',');
			if (!rc)
				rc = json_str(b, field(arg, i, j));
		}
		if (!rc)
			rc = buf_addc(b, ']');
	}
	return rc ? rc : buf_addc(b, ']');
}
