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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	int i;

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

/* Code point `cp` (at most U+10FFFF, not NUL) as UTF-8 at *o. */
static void put_utf8(char **o, unsigned cp)
{
	char *d = *o;

	if (cp < 0x80) {
		*d++ = (char)cp;
	} else if (cp < 0x800) {
		*d++ = (char)(0xc0 | cp >> 6);
		*d++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*d++ = (char)(0xe0 | cp >> 12);
		*d++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*d++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*d++ = (char)(0xf0 | cp >> 18);
		*d++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*d++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*d++ = (char)(0x80 | (cp & 0x3f));
	}
	*o = d;
}

/* The \u escape at p (after the backslash and u): its code point, with
 * a following low surrogate taken too; *p moved past what was read. */
static int unicode_escape(const char **p, unsigned *cp)
{
	unsigned hi, lo;

	if (hex4(*p, &hi))
		return -EINVAL;
	*p += 4;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return -EINVAL; /* a low surrogate alone */
	if (hi >= 0xd800 && hi <= 0xdbff) {
		if ((*p)[0] != '\\' || (*p)[1] != 'u' || hex4(*p + 2, &lo) ||
		    lo < 0xdc00 || lo > 0xdfff)
			return -EINVAL;
		*p += 6;
		hi = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (!hi)
		return -EINVAL; /* NUL would cut the C string short */
	*cp = hi;
	return 0;
}

/*
 * The string at *p (its opening quote) decoded into *o, NUL-terminated;
 * *p and *o moved past it.  The output never outgrows the input.
 */
static int string(const char **p, char **o)
{
	const char *s = *p + 1;
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
		switch (*s++) {
		case '"': *d++ = '"'; break;
		case '\\': *d++ = '\\'; break;
		case '/': *d++ = '/'; break;
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 't': *d++ = '\t'; break;
		case 'u':
			if (unicode_escape(&s, &cp))
				return -EINVAL;
			put_utf8(&d, cp);
			break;
		default:
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
	const char *p = skip_ws(text);
	int rc = 0;
	size_t i;

	if (width < 1 || width > JSON_MAX_WIDTH || *p != '[')
		return -EINVAL;
	/* Every decoded string is no longer than its JSON text. */
	if (!(buf = malloc(strlen(text) + 1)))
		return -ENOMEM;
	p = skip_ws(p + 1);
	if (*p == ']')
		goto end;
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
				rc = string(&p, &o);
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
end:
	if (!rc && *skip_ws(p + 1))
		rc = -EINVAL; /* something after the array */
	free(buf);
	return rc;
}
