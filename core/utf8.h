/*
 * utf8.h - the one strict UTF-8 decoder: what every part of cmfs that
 * checks text for UTF-8 (statements, exports, JAR service files, the
 * JSON and log writers) accepts.
 */
#ifndef CMFS_UTF8_H
#define CMFS_UTF8_H

#include <stddef.h>

/*
 * Decode one UTF-8 sequence at s[*i], where s[*i..n) may be read and
 * *i < n, moving *i past it.  Strict: no overlong forms, no surrogates,
 * nothing above U+10FFFF, nothing cut short.  The code point (0..0x7f for
 * one byte, NUL included), or -1 with *i unchanged.  Bytes are read one at
 * a time and reading stops at the first that is not a continuation byte,
 * so a NUL-terminated string may be passed with n past its end.
 */
long utf8_next(const unsigned char *s, size_t n, size_t *i);

#endif
