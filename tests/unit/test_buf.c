/*
 * test_buf.c - unit tests of the capped growable buffer (core/buf.h) and of
 * the first-error-wins message slot (core/err.h).
 *
 * The buffer's contract: always NUL-terminated, growth past the cap fails
 * with -EFBIG and leaves the contents as they were, buf_take() hands the
 * memory over and leaves an empty buffer that keeps its cap.
 */
#include "t.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"

/* ---- buf ------------------------------------------------------------------- */

static void test_empty(void)
{
	struct buf b = BUF_INIT(16);
	struct buf c;

	T_CHECK(b.data == NULL);
	T_INTEQ(b.len, 0);
	T_INTEQ(b.cap, 16);
	T_STREQ(buf_str(&b), "");
	buf_init(&c, 7);
	T_CHECK(c.data == NULL);
	T_INTEQ(c.len, 0);
	T_INTEQ(c.alloc, 0);
	T_INTEQ(c.cap, 7);
	/* An empty append allocates the NUL and succeeds. */
	T_INTEQ(buf_add(&c, "", 0), 0);
	T_CHECK(c.data != NULL);
	T_STREQ(buf_str(&c), "");
	T_INTEQ(c.len, 0);
	buf_release(&c);
	T_CHECK(c.data == NULL);
	T_INTEQ(c.cap, 7);
	buf_release(&b);
}

static void test_append(void)
{
	struct buf b = BUF_INIT(1024);

	T_INTEQ(buf_adds(&b, "abc"), 0);
	T_INTEQ(buf_addc(&b, '-'), 0);
	T_INTEQ(buf_add(&b, "xyz123", 3), 0);
	T_STREQ(buf_str(&b), "abc-xyz");
	T_INTEQ(b.len, 7);
	T_CHECK(b.data[b.len] == '\0');
	/* Bytes with an embedded NUL count in len. */
	T_INTEQ(buf_add(&b, "a\0b", 3), 0);
	T_INTEQ(b.len, 10);
	T_CHECK(memcmp(b.data, "abc-xyza\0b", 11) == 0);
	buf_release(&b);
	T_INTEQ(b.len, 0);
	T_CHECK(b.data == NULL);
	T_INTEQ(b.cap, 1024);
	/* Usable again after release. */
	T_INTEQ(buf_adds(&b, "again"), 0);
	T_STREQ(buf_str(&b), "again");
	buf_release(&b);
}

static void test_grow(void)
{
	struct buf b = BUF_INIT(100000);
	char expect[5001];
	int i;

	for (i = 0; i < 5000; i++) {
		expect[i] = (char)('a' + i % 26);
		if (buf_addc(&b, expect[i]))
			break;
	}
	expect[5000] = '\0';
	T_INTEQ(i, 5000);
	T_INTEQ(b.len, 5000);
	T_CHECK(b.alloc > 5000);
	T_STREQ(buf_str(&b), expect);
	buf_release(&b);
}

static void test_cap(void)
{
	struct buf b = BUF_INIT(8);
	char *before;

	T_INTEQ(buf_adds(&b, "12345"), 0);
	T_INTEQ(buf_adds(&b, "678"), 0);	/* exactly the cap */
	T_INTEQ(b.len, 8);
	T_STREQ(buf_str(&b), "12345678");
	before = b.data;
	/* One byte more: -EFBIG and nothing changes. */
	T_ERRNO(buf_addc(&b, 'x'), EFBIG);
	T_ERRNO(buf_adds(&b, "xy"), EFBIG);
	T_ERRNO(buf_add(&b, "", 1), EFBIG);
	T_ERRNO(buf_printf(&b, "%d", 7), EFBIG);
	T_INTEQ(b.len, 8);
	T_CHECK(b.data == before);
	T_STREQ(buf_str(&b), "12345678");
	/* An empty append at the cap is fine. */
	T_INTEQ(buf_add(&b, "", 0), 0);
	T_INTEQ(buf_printf(&b, "%s", ""), 0);
	T_STREQ(buf_str(&b), "12345678");
	buf_release(&b);

	/* A partial fit is refused whole, not truncated. */
	buf_init(&b, 10);
	T_INTEQ(buf_adds(&b, "abcdef"), 0);
	T_ERRNO(buf_adds(&b, "ghijk"), EFBIG);
	T_STREQ(buf_str(&b), "abcdef");
	T_INTEQ(b.len, 6);
	T_ERRNO(buf_printf(&b, "%s-%d", "gh", 1234), EFBIG);
	T_STREQ(buf_str(&b), "abcdef");
	T_INTEQ(b.len, 6);
	/* Huge lengths must not wrap around the size arithmetic. */
	T_ERRNO(buf_add(&b, "x", SIZE_MAX), EFBIG);
	T_ERRNO(buf_add(&b, "x", SIZE_MAX - 3), EFBIG);
	T_STREQ(buf_str(&b), "abcdef");
	buf_release(&b);

	/* Cap 0: only nothing fits. */
	buf_init(&b, 0);
	T_ERRNO(buf_addc(&b, 'a'), EFBIG);
	T_CHECK(b.data == NULL);
	T_STREQ(buf_str(&b), "");
	buf_release(&b);

	/* A cap hit on the very first append leaves the buffer unallocated. */
	buf_init(&b, 3);
	T_ERRNO(buf_adds(&b, "abcd"), EFBIG);
	T_CHECK(b.data == NULL);
	T_INTEQ(b.len, 0);
	buf_release(&b);
}

static void test_printf(void)
{
	struct buf b = BUF_INIT(4096);
	char big[3000];

	T_INTEQ(buf_printf(&b, "%s=%d", "n", 42), 0);
	T_INTEQ(buf_printf(&b, " %05.1f|%x|%c", 3.14159, 255u, 'z'), 0);
	T_STREQ(buf_str(&b), "n=42 003.1|ff|z");
	T_INTEQ(b.len, strlen("n=42 003.1|ff|z"));
	/* Longer than the first allocation. */
	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	buf_reset(&b);
	T_INTEQ(buf_printf(&b, "<%s>", big), 0);
	T_INTEQ(b.len, 3001);
	T_CHECK(b.data[0] == '<' && b.data[3000] == '>' && b.data[3001] == 0);
	T_CHECK(b.data[1] == 'q' && b.data[2999] == 'q');
	/* A NUL written by %c ends up in the buffer, counted. */
	buf_reset(&b);
	T_INTEQ(buf_printf(&b, "a%cb", '\0'), 0);
	T_INTEQ(b.len, 3);
	T_CHECK(memcmp(b.data, "a\0b", 4) == 0);
	buf_release(&b);
}

static void test_reset(void)
{
	struct buf b = BUF_INIT(64);
	char *mem;
	size_t alloc;

	buf_reset(&b);	/* on an empty buffer: harmless */
	T_STREQ(buf_str(&b), "");
	T_INTEQ(buf_adds(&b, "hello"), 0);
	mem = b.data;
	alloc = b.alloc;
	buf_reset(&b);
	T_INTEQ(b.len, 0);
	T_STREQ(buf_str(&b), "");
	T_CHECK(b.data == mem);
	T_INTEQ(b.alloc, alloc);
	T_INTEQ(buf_adds(&b, "bye"), 0);
	T_STREQ(buf_str(&b), "bye");
	buf_release(&b);
}

static void test_take(void)
{
	struct buf b = BUF_INIT(32);
	size_t len = 99;
	char *p;

	T_INTEQ(buf_adds(&b, "taken"), 0);
	p = buf_take(&b, &len);
	T_STREQ(p, "taken");
	T_INTEQ(len, 5);
	/* The buffer is empty, unallocated and keeps its cap. */
	T_CHECK(b.data == NULL);
	T_INTEQ(b.len, 0);
	T_INTEQ(b.alloc, 0);
	T_INTEQ(b.cap, 32);
	T_STREQ(buf_str(&b), "");
	free(p);

	/* An empty buffer gives a fresh "", never NULL. */
	len = 99;
	p = buf_take(&b, &len);
	T_CHECK(p != NULL);
	T_STREQ(p, "");
	T_INTEQ(len, 0);
	free(p);
	p = buf_take(&b, NULL);
	T_CHECK(p != NULL && p[0] == '\0');
	free(p);

	/* The cap still applies after a take. */
	T_ERRNO(buf_add(&b, "0123456789012345678901234567890123", 34), EFBIG);
	T_INTEQ(buf_adds(&b, "new"), 0);
	p = buf_take(&b, NULL);
	T_STREQ(p, "new");
	free(p);
	buf_release(&b);
}

/* buf_vprintf through a variadic wrapper, as callers use it. */
static int wrap(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int wrap(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

static void test_vprintf(void)
{
	struct buf b = BUF_INIT(10);

	T_INTEQ(wrap(&b, "%s:%d", "ab", 12), 0);
	T_STREQ(buf_str(&b), "ab:12");
	T_ERRNO(wrap(&b, "%s", "toolong"), EFBIG);
	T_STREQ(buf_str(&b), "ab:12");
	T_INTEQ(wrap(&b, "%s", "12345"), 0);
	T_STREQ(buf_str(&b), "ab:1212345");
	buf_release(&b);
}

/* ---- err ------------------------------------------------------------------- */

static void test_err(void)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	char longmsg[CMFS_ERR_MSG + 100];

	T_INTEQ(e.code, 0);
	T_STREQ(cmfs_err_msg(&e), "");
	T_STREQ(cmfs_err_msg(NULL), "");
	/* Returns the code; NULL err is allowed. */
	T_ERRNO(cmfs_err_set(NULL, -EINVAL, "x %d", 1), EINVAL);
	T_ERRNO(cmfs_err_set(&e, -ENOPKG, "%s: no artifact", "kafka"), ENOPKG);
	T_INTEQ(e.code, -ENOPKG);
	T_STREQ(cmfs_err_msg(&e), "kafka: no artifact");
	/* The first error wins, but the code is still returned. */
	T_ERRNO(cmfs_err_set(&e, -EIO, "generic"), EIO);
	T_INTEQ(e.code, -ENOPKG);
	T_STREQ(e.msg, "kafka: no artifact");
	/* Clear, then set again. */
	cmfs_err_clear(&e);
	T_INTEQ(e.code, 0);
	T_STREQ(cmfs_err_msg(&e), "");
	cmfs_err_clear(NULL);
	/* One line: newlines and carriage returns become spaces. */
	T_ERRNO(cmfs_err_set(&e, -EINVAL, "a\nb\r\nc%s", "\nd"), EINVAL);
	T_STREQ(e.msg, "a b  c d");
	cmfs_err_clear(&e);
	/* Without a message: strerror of the code. */
	T_ERRNO(cmfs_err_set(&e, -ENOENT, "%s", ""), ENOENT);
	T_STREQ(cmfs_err_msg(&e), strerror(ENOENT));
	cmfs_err_clear(&e);
	/* A long message is cut, NUL-terminated, and says so. */
	memset(longmsg, 'm', sizeof(longmsg) - 1);
	longmsg[sizeof(longmsg) - 1] = '\0';
	cmfs_err_set(&e, -EFBIG, "%s", longmsg);
	T_INTEQ(strlen(e.msg), CMFS_ERR_MSG - 1);
	T_CHECK(e.msg[0] == 'm' && e.msg[CMFS_ERR_MSG - 5] == 'm');
	T_STREQ(e.msg + CMFS_ERR_MSG - 4, "...");
	cmfs_err_clear(&e);
	/* ... never inside a character: here a 2-byte one across the cut. */
	memset(longmsg, 'm', sizeof(longmsg) - 1);
	memcpy(longmsg + CMFS_ERR_MSG - 5, "\xc3\xa9", 2);
	cmfs_err_set(&e, -EFBIG, "%s", longmsg);
	T_INTEQ(strlen(e.msg), CMFS_ERR_MSG - 2);
	T_STREQ(e.msg + CMFS_ERR_MSG - 5, "...");
}

int main(void)
{
	T_RUN(test_empty);
	T_RUN(test_append);
	T_RUN(test_grow);
	T_RUN(test_cap);
	T_RUN(test_printf);
	T_RUN(test_reset);
	T_RUN(test_take);
	T_RUN(test_vprintf);
	T_RUN(test_err);
	return T_DONE();
}
