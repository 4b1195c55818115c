/*
 * zipdir.c - a zip's central directory, judged as libzip judges it.
 *
 * Every rule below is one of libzip 1.7.3's, read in zip_open.c,
 * zip_dirent.c, zip_extra_field.c and zip_utf-8.c (_zip_find_central_dir,
 * _zip_read_eocd, _zip_read_cdir, _zip_dirent_read, _zip_ef_parse,
 * _zip_checkcons, _zip_headercomp, _zip_guess_encoding),
 * narrowed where that keeps this short: an archive that libzip would open
 * in some roundabout way is simply not clean here.  tests/unit/
 * test_zipdir.c holds the two to each other over every header byte of
 * real JARs, changed.
 */
#include "zipdir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EOCD_LEN 22u
#define CEN_LEN 46u
#define LOC_LEN 30u
#define SATURATED 0xffffffffu

/* Extra fields that replace a name or comment with the UTF-8 they hold. */
#define EF_UTF8_NAME 0x7075u
#define EF_UTF8_COMMENT 0x6375u

/* Bits of the flags: encrypted (0, and 6: strong), data descriptor (3). */
#define FLAG_ENCRYPTED 0x41u
#define FLAG_DESCRIPTOR 0x08u

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

int zipdir_end(const uint8_t *tail, size_t n, uint64_t size, struct zipdir *z)
{
	const uint8_t *e = NULL, *p;

	if (n < EOCD_LEN || n != (size < ZIPDIR_TAIL ? size : ZIPDIR_TAIL))
		return 0;
	/* The one end-record signature where libzip looks for one, all of
	 * it inside the tail: libzip weighs every other as a candidate. */
	for (p = tail; (p = memchr(p, 'P', (size_t)(tail + n - 3 - p))); p++) {
		if (memcmp(p, "PK\5\6", 4))
			continue;
		if (e)
			return 0;
		e = p;
	}
	/* Its comment runs to the end of the file (ZIP_CHECKCONS). */
	if (!e || (size_t)(tail + n - e) < EOCD_LEN ||
	    (size_t)(tail + n - e) != EOCD_LEN + le16(e + 20))
		return 0;
	/* One disk, the entries of this disk all of them, no zip64 value
	 * (0xffff, 0xffffffff: libzip would look for one). */
	if (le32(e + 4) || le16(e + 8) != le16(e + 10) || !le16(e + 10) ||
	    le16(e + 10) == 0xffff || le32(e + 12) == SATURATED ||
	    le32(e + 16) == SATURATED)
		return 0;
	/* The directory ends where the record starts (ZIP_CHECKCONS). */
	z->count = le16(e + 10);
	z->cd_size = le32(e + 12);
	z->cd_off = le32(e + 16);
	if (z->cd_off + z->cd_size != size - (uint64_t)(tail + n - e))
		return 0;
	/* libzip reads a zip64 end record when a locator precedes this
	 * one. */
	if (e - tail >= 20 && !memcmp(e - 20, "PK\6\7", 4))
		return 0;
	return 1;
}

/*
 * 1 when the `len` bytes at ef are extra fields, end to end (an id, a
 * length, that many bytes), none of which renames the entry.
 */
static int extra_plain(const uint8_t *ef, size_t len)
{
	size_t at = 0, k;

	while (len - at >= 4) {
		k = le16(ef + at + 2);
		if (k > len - at - 4 || le16(ef + at) == EF_UTF8_NAME ||
		    le16(ef + at) == EF_UTF8_COMMENT)
			return 0;
		at += 4 + k;
	}
	return at == len;
}

/* 1 when every byte is printable ASCII (libzip's guess: ASCII, kept raw,
 * and equal names compare equal however it hashes them). */
static int name_plain(const uint8_t *s, size_t n)
{
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return 0;
	return 1;
}

/*
 * Central record h (whose fixed part is in the directory), `left` bytes
 * of the directory from h on, of a directory at cd_off: its length when
 * plain, else 0.
 */
static size_t record_plain(const uint8_t *h, size_t left, uint64_t cd_off)
{
	uint32_t csize = le32(h + 20), usize = le32(h + 24);
	uint32_t off = le32(h + 42);
	size_t nl = le16(h + 28), el = le16(h + 30);
	uint16_t method = le16(h + 10);

	if (memcmp(h, "PK\1\2", 4) || (le16(h + 8) & FLAG_ENCRYPTED) ||
	    (method != 0 && method != 8) || (method == 0 && csize != usize) ||
	    csize == SATURATED || usize == SATURATED || off == SATURATED ||
	    le16(h + 32) || CEN_LEN + nl + el > left ||
	    !name_plain(h + CEN_LEN, nl) || !extra_plain(h + CEN_LEN + nl, el))
		return 0;
	/* The entry lies before the directory (_zip_checkcons). */
	if ((uint64_t)off + csize + nl + LOC_LEN > cd_off)
		return 0;
	return CEN_LEN + nl + el;
}

int zipdir_local(const uint8_t *h, const uint8_t *loc, size_t got)
{
	size_t nl = le16(h + 28), el;
	uint32_t crc, csize, usize;

	if (got < LOC_LEN + nl)
		return -1;
	if (memcmp(loc, "PK\3\4", 4) || le16(loc + 4) > le16(h + 6) ||
	    le16(loc + 8) != le16(h + 10) || le16(loc + 10) != le16(h + 12) ||
	    le16(loc + 12) != le16(h + 14) || le16(loc + 26) != nl ||
	    memcmp(loc + LOC_LEN, h + CEN_LEN, nl))
		return 0;
	crc = le32(loc + 14);
	csize = le32(loc + 18);
	usize = le32(loc + 22);
	if (csize == SATURATED || usize == SATURATED)
		return 0;
	if ((crc != le32(h + 16) || csize != le32(h + 20) ||
	     usize != le32(h + 24)) &&
	    (!(le16(loc + 6) & FLAG_DESCRIPTOR) || crc || csize || usize))
		return 0;
	el = le16(loc + 28);
	if (got < LOC_LEN + nl + el)
		return -1;
	return extra_plain(loc + LOC_LEN + nl, el);
}

int zipdir_local_read(const uint8_t *h, uint8_t *buf, zipdir_read_fn read,
		      void *ctx)
{
	size_t nl = le16(h + 28), got, want = LOC_LEN + nl + 64, more;
	uint64_t off = le32(h + 42);
	int rc;

	if ((rc = read(ctx, buf, want, off, &got)))
		return rc;
	rc = zipdir_local(h, buf, got);
	if (rc != -1 || got < want)
		return rc == 1; /* short: the file ends inside the header */
	/* A long extra field. */
	more = LOC_LEN + nl + le16(buf + 28) - want;
	if ((rc = read(ctx, buf + want, more, off + want, &got)))
		return rc;
	return got == more && zipdir_local(h, buf, want + more) == 1;
}

int zipdir_records(const uint8_t *cd, const struct zipdir *z, uint32_t *rec)
{
	size_t at = 0, len, size = (size_t)z->cd_size;
	uint64_t i;

	for (i = 0; i < z->count; i++) {
		if (size - at < CEN_LEN ||
		    !(len = record_plain(cd + at, size - at, z->cd_off)))
			return 0;
		rec[i] = (uint32_t)at;
		at += len;
	}
	/* Exactly the records counted, and nothing after them. */
	return at == size;
}

int zipdir_check(const uint8_t *cd, const struct zipdir *z, uint32_t *rec,
		 zipdir_read_fn read, void *ctx)
{
	uint64_t i;
	uint8_t *buf;
	int rc;

	if (!zipdir_records(cd, z, rec))
		return 0;
	buf = malloc(ZIPDIR_LOCAL_MAX);
	if (!buf)
		return -ENOMEM;
	for (i = 0, rc = 1; i < z->count && rc == 1; i++)
		rc = zipdir_local_read(cd + rec[i], buf, read, ctx);
	free(buf);
	return rc;
}
