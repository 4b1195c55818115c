/*
 * jar_cost.c - an inspection's memory, estimated from the archive's end
 * record (jar_cost.h).
 */
#define _GNU_SOURCE
#include "jar_cost.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAIL 65557		/* the end record (22) and a longest comment */
#define PER_CD_BYTE 7		/* bytes held per byte of central directory */

static uint32_t le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/*
 * Reads `n` bytes at `off` of the archive into `out`: 0, or -1 when they
 * are not all there.
 */
typedef int (*reader)(const void *src, uint64_t off, void *out, size_t n);

static uint64_t cost_of(uint64_t cd)
{
	uint64_t c = cd > UINT64_MAX / PER_CD_BYTE ? UINT64_MAX
						   : cd * PER_CD_BYTE;

	return c < JAR_COST_MIN ? JAR_COST_MIN : c;
}

/*
 * The central directory's size from the end record in `tail` (the last
 * `n` bytes of an archive of `size` bytes), going to the ZIP64 record
 * through `rd` when the classic one holds 0xFFFFFFFF.
 */
static uint64_t estimate(const unsigned char *tail, size_t n, uint64_t size,
			 reader rd, const void *src)
{
	unsigned char z[56];
	size_t i;
	uint64_t at;

	if (n < 22)
		return JAR_COST_MIN;
	for (i = n - 22 + 1; i-- > 0;) {
		if (memcmp(tail + i, "PK\5\6", 4))
			continue;
		if (le32(tail + i + 12) != 0xffffffffu)
			return cost_of(le32(tail + i + 12));
		/* ZIP64: the locator sits just before the classic record. */
		if (i < 20 || memcmp(tail + i - 20, "PK\6\7", 4))
			return JAR_COST_MIN;
		at = le64(tail + i - 20 + 8);
		if (size < sizeof(z) || at > size - sizeof(z) || rd(src, at, z, sizeof(z)) ||
		    memcmp(z, "PK\6\6", 4))
			return JAR_COST_MIN;
		return cost_of(le64(z + 40));
	}
	return JAR_COST_MIN;
}

static int read_fd(const void *src, uint64_t off, void *out, size_t n)
{
	return pread(*(const int *)src, out, n, (off_t)off) == (ssize_t)n ? 0
									  : -1;
}

uint64_t jar_cost_fd(int fd)
{
	unsigned char tail[TAIL];
	struct stat st;
	size_t n;

	if (fstat(fd, &st) || st.st_size < 22)
		return JAR_COST_MIN;
	n = (uint64_t)st.st_size < TAIL ? (size_t)st.st_size : TAIL;
	if (read_fd(&fd, (uint64_t)st.st_size - n, tail, n))
		return JAR_COST_MIN;
	return estimate(tail, n, (uint64_t)st.st_size, read_fd, &fd);
}

struct span {
	const unsigned char *p;
	size_t len;
};

static int read_mem(const void *src, uint64_t off, void *out, size_t n)
{
	const struct span *s = src;

	if (off > s->len || n > s->len - off)
		return -1;
	memcpy(out, s->p + off, n);
	return 0;
}

uint64_t jar_cost_mem(const void *data, size_t len)
{
	struct span s = { data, len };
	size_t n = len < TAIL ? len : TAIL;

	return estimate(s.p + len - n, n, len, read_mem, &s);
}
