/*
 * utf8.c - the one strict UTF-8 decoder.
 */
#include "utf8.h"

long utf8_next(const unsigned char *s, size_t n, size_t *i)
{
	unsigned char c = s[*i];
	size_t k, len;
	long cp, min;

	if (c < 0x80) {
		(*i)++;
		return c;
	}
	if ((c & 0xe0) == 0xc0) {
		len = 2, cp = c & 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, cp = c & 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return -1;
	}
	if (n - *i < len)
		return -1;
	for (k = 1; k < len; k++) {
		if ((s[*i + k] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[*i + k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*i += len;
	return cp;
}
