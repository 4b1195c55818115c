/*
 * test_utf8.c - core/utf8.c: the strict decoder every UTF-8 check uses
 * accepts each length's shortest forms and refuses overlong forms,
 * surrogates, code points past U+10FFFF, stray and cut-short sequences.
 */
#include "t.h"

#include <string.h>

#include "utf8.h"

/* Decode all of `s` as one character: its code point or -1, and its length. */
static long one(const char *s, size_t *len)
{
	size_t i = 0;
	long cp = utf8_next((const unsigned char *)s, strlen(s), &i);

	*len = i;
	return cp;
}

static void test_valid(void)
{
	size_t n;

	T_INTEQ(one("A", &n), 'A');
	T_INTEQ(n, 1);
	T_INTEQ(one("\xc2\x80", &n), 0x80);
	T_INTEQ(n, 2);
	T_INTEQ(one("\xdf\xbf", &n), 0x7ff);
	T_INTEQ(one("\xe0\xa0\x80", &n), 0x800);
	T_INTEQ(n, 3);
	T_INTEQ(one("\xef\xbb\xbf", &n), 0xfeff);
	T_INTEQ(one("\xed\x9f\xbf", &n), 0xd7ff);
	T_INTEQ(one("\xf0\x90\x80\x80", &n), 0x10000);
	T_INTEQ(n, 4);
	T_INTEQ(one("\xf4\x8f\xbf\xbf", &n), 0x10ffff);
}

/* Refused, with the position left where it was. */
static void test_invalid(void)
{
	static const char *bad[] = {
		"\x80", "\xbf",			/* stray continuation */
		"\xc0\x80", "\xc1\xbf",		/* overlong 2 */
		"\xe0\x9f\xbf",			/* overlong 3 */
		"\xf0\x8f\xbf\xbf",		/* overlong 4 */
		"\xed\xa0\x80", "\xed\xbf\xbf",	/* surrogates */
		"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", /* past U+10FFFF */
		"\xf8\x88\x80\x80\x80", "\xff",	/* no such lead byte */
		"\xc2", "\xe0\xa0", "\xf0\x90\x80", /* cut short */
		"\xc2\x41",			/* not a continuation */
	};
	size_t i, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		T_INTEQ(one(bad[i], &n), -1);
		T_INTEQ(n, 0);
	}
}

/* n bounds the read: a sequence cut by n is refused, the NUL stops it too. */
static void test_bounds(void)
{
	const unsigned char s[] = "x\xe2\x82\xac";
	size_t i = 1;

	T_INTEQ(utf8_next(s, 3, &i), -1);
	T_INTEQ(i, 1);
	T_INTEQ(utf8_next(s, 4, &i), 0x20ac);
	T_INTEQ(i, 4);
	i = 0;
	T_INTEQ(utf8_next((const unsigned char *)"\xe2\x82", 4, &i), -1);
}

int main(void)
{
	T_RUN(test_valid);
	T_RUN(test_invalid);
	T_RUN(test_bounds);
	return T_DONE();
}
