/*
 * jar_archive.c - the JAR as a zip archive: where its bytes come from (an
 * fd read with pread(), or memory), libzip's open with its consistency
 * checks (whose verdict stands), what we check besides (a prefix before
 * the first entry, duplicate names, an entry count over the cap before
 * libzip allocates for it), and each entry read whole under the caps of
 * struct jar_limits.  libzip's codes become errnos here and nowhere else
 * (zip_errno).
 */
#include "jar_int.h"

#include "store.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>

/*
 * libzip reads in small pieces: with ZIP_CHECKCONS, four or so per entry
 * to compare each local header with the central directory, walking the
 * file forward.  From an fd, short reads are served from a read-ahead
 * window, so 20,000 entries cost a few thousand pread() calls, not 80,000.
 * Only a forward scan fills the whole window: a jump elsewhere (an entry
 * opened out of file order) reads what was asked, rounded up to a page.
 */
#define WINDOW (64u << 10)
#define PAGE 4096u

/* pread n bytes at off, fewer only at the end of the file: 0 or -EIO. */
static int pread_full(int fd, void *buf, size_t n, uint64_t off, size_t *got)
{
	ssize_t r = store_pread_full(fd, buf, n, (off_t)off);

	if (r < 0)
		return -EIO;
	*got = (size_t)r;
	return 0;
}

/* Read up to n bytes at `off`, past the window; *got < n only at the end.
 * 0 or -EIO. */
static int input_direct(const struct input *in, void *buf, size_t n,
			uint64_t off, size_t *got)
{
	*got = 0;
	if (off >= in->size)
		return 0;
	if (n > in->size - off)
		n = (size_t)(in->size - off);
	if (in->fd >= 0)
		return pread_full(in->fd, buf, n, off, got);
	memcpy(buf, in->mem + off, n);
	*got = n;
	return 0;
}

/* Read up to n bytes at `off` through the window; *got < n only at the
 * end. 0 or -EIO. */
static int input_read(struct input *in, void *buf, size_t n, uint64_t off,
		      size_t *got)
{
	uint64_t end = in->win_off + in->win_len;
	size_t want;

	if (in->fd < 0 || !in->win || n > WINDOW / 4)
		return input_direct(in, buf, n, off, got);
	*got = 0;
	if (off >= in->size)
		return 0;
	if (n > in->size - off)
		n = (size_t)(in->size - off);
	if (off < in->win_off || off + n > end) {
		/* Right after the window, a forward scan goes on: refill
		 * it all.  Elsewhere, read what was asked. */
		want = off >= end && off - end < WINDOW
			       ? WINDOW
			       : (n + PAGE - 1) / PAGE * PAGE;
		if (want > in->size - off) /* not past the end: a pread more */
			want = (size_t)(in->size - off);
		in->win_len = 0;
		if (pread_full(in->fd, in->win, want, off, &in->win_len))
			return -EIO;
		in->win_off = off;
		if (n > in->win_len) /* the file shrank under us */
			n = in->win_len;
	}
	memcpy(buf, in->win + (off - in->win_off), n);
	*got = n;
	return 0;
}

/* The zip_source callback over an input: seekable, read-only. */
static zip_int64_t input_source(void *ud, void *data, zip_uint64_t len,
				zip_source_cmd_t cmd)
{
	struct input *in = ud;
	zip_stat_t *st;
	zip_int64_t pos;
	size_t got;

	switch (cmd) {
	case ZIP_SOURCE_OPEN:
		in->pos = 0;
		return 0;
	case ZIP_SOURCE_READ:
		if (len > (1u << 30))
			len = 1u << 30;
		if (input_read(in, data, (size_t)len, in->pos, &got)) {
			zip_error_set(&in->error, ZIP_ER_READ, EIO);
			return -1;
		}
		in->pos += got;
		return (zip_int64_t)got;
	case ZIP_SOURCE_CLOSE:
	case ZIP_SOURCE_FREE:
		return 0; /* without `in`: see insp_free() */
	case ZIP_SOURCE_STAT:
		st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &in->error);
		if (!st)
			return -1;
		zip_stat_init(st);
		st->size = in->size;
		st->valid |= ZIP_STAT_SIZE;
		return sizeof(*st);
	case ZIP_SOURCE_ERROR:
		return zip_error_to_data(&in->error, data, len);
	case ZIP_SOURCE_SEEK:
		pos = zip_source_seek_compute_offset(in->pos, in->size, data,
						     len, &in->error);
		if (pos < 0)
			return -1;
		in->pos = (uint64_t)pos;
		return 0;
	case ZIP_SOURCE_TELL:
		return (zip_int64_t)in->pos;
	case ZIP_SOURCE_SUPPORTS:
		return ZIP_SOURCE_SUPPORTS_SEEKABLE;
	default:
		zip_error_set(&in->error, ZIP_ER_OPNOTSUPP, 0);
		return -1;
	}
}

/* Little-endian fields of zip headers (APPNOTE.TXT). */
static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* The errno for a libzip error code: the one place that maps them. */
static int zip_errno(int ze)
{
	switch (ze) {
	case ZIP_ER_MEMORY:
		return -ENOMEM;
	case ZIP_ER_READ:
	case ZIP_ER_SEEK:
	case ZIP_ER_TELL:
	case ZIP_ER_OPEN:
	case ZIP_ER_CLOSE:
	case ZIP_ER_WRITE:
	case ZIP_ER_TMPOPEN:
		return -EIO;
	default:
		return -EINVAL;
	}
}

/* A libzip error while reading entry `name`: the report, or -errno. */
static int entry_fail(struct insp *in, const char *name, zip_error_t *ze)
{
	int code = zip_error_code_zip(ze);
	int e = zip_errno(code);
	const char *why;

	if (e != -EINVAL)
		return cmfs_err_set(in->err, e, "%s: %s", name,
				    zip_error_strerror(ze));
	switch (code) {
	case ZIP_ER_NOPASSWD:
	case ZIP_ER_WRONGPASSWD:
	case ZIP_ER_ENCRNOTSUPP:
		why = "encrypted";
		break;
	case ZIP_ER_COMPNOTSUPP:
		why = "compression method not supported";
		break;
	case ZIP_ER_CRC:
		why = "CRC mismatch: the entry is damaged";
		break;
	default:
		why = zip_error_strerror(ze);
		break;
	}
	return jar_fail(in, -ENOEXEC, "entry %s: %s", name, why);
}
/* Over the cap on inflated bytes: the report says so. */
static int over_inflated(struct insp *in)
{
	return jar_fail(in, -EFBIG,
			"the classes read inflate to more than %llu bytes (the "
			"limit)",
			(unsigned long long)in->lim.max_inflated);
}

/*
 * Open the archive with libzip (`flags`) into in->za, through our source,
 * so both inputs read the same way (libzip owns the source once the open
 * succeeds and frees it in zip_discard()): 0, or -1 and *ze.
 */
static int libzip_open(struct insp *in, int flags, zip_error_t *ze)
{
	zip_source_t *zs =
		zip_source_function_create(input_source, in->src, ze);

	if (!zs)
		return -1;
	in->za = zip_open_from_source(zs, flags, ze);
	if (!in->za) {
		zip_source_free(zs);
		return -1;
	}
	return 0;
}

/*
 * Inflate deflated entry `idx` (described by st) into b, which holds
 * st->size bytes: its compressed bytes as libzip reads them, inflated by
 * libdeflate in one call into a buffer of the declared size (faster than
 * zlib's stream under libzip: bench/findings.md).  0 when b holds exactly
 * st->size bytes with the declared CRC-32; 1 when anything is off (then
 * libzip reads the entry, and its verdict is the report's); -ENOMEM.
 */
static int deflated(struct insp *in, zip_uint64_t idx, const zip_stat_t *st,
		    uint8_t *b)
{
	const zip_uint64_t need =
		ZIP_STAT_COMP_SIZE | ZIP_STAT_CRC | ZIP_STAT_COMP_METHOD;
	zip_file_t *f;
	zip_int64_t n;

	if ((st->valid & need) != need || st->comp_method != ZIP_CM_DEFLATE ||
	    st->comp_size > in->lim.max_entry_size)
		return 1;
	if (st->comp_size > in->zcap) {
		free(in->zbuf);
		in->zcap = 0;
		if (!(in->zbuf = malloc((size_t)st->comp_size)))
			return -ENOMEM;
		in->zcap = (size_t)st->comp_size;
	}
	if (!in->dd && !(in->dd = libdeflate_alloc_decompressor()))
		return -ENOMEM;
	f = zip_fopen_index(in->za, idx, ZIP_FL_COMPRESSED);
	if (!f)
		return 1;
	n = zip_fread(f, in->zbuf, st->comp_size);
	zip_fclose(f);
	if (n < 0 || (zip_uint64_t)n != st->comp_size ||
	    libdeflate_deflate_decompress(in->dd, in->zbuf, (size_t)n, b,
					  (size_t)st->size,
					  NULL) != LIBDEFLATE_SUCCESS)
		return 1;
	return libdeflate_crc32(0, b, (size_t)st->size) != st->crc;
}

/*
 * Inflate entry `idx` (named `name`), at most `cap` bytes, into *out
 * (malloc'd, *len bytes): by libdeflate where it is deflated and sound,
 * else by libzip, counting the bytes as they come, so that one byte past
 * the declared size stops the read (the declared size is only a first
 * guess).  0, STOP or -errno.
 */
int jar_read_entry(struct insp *in, zip_uint64_t idx, const char *name,
		   uint64_t cap, uint8_t **out, size_t *len)
{
	zip_file_t *f = NULL;
	uint8_t *b = NULL;
	uint64_t got = 0;
	zip_stat_t st;
	int rc = 0;

	zip_stat_init(&st);
	if (zip_stat_index(in->za, idx, 0, &st) < 0)
		return entry_fail(in, name, zip_get_error(in->za));
	if (!(st.valid & ZIP_STAT_SIZE))
		return jar_fail(in, -ENOEXEC, "entry %s: no size", name);
	if (st.size > cap)
		return jar_fail(in, -EFBIG,
				"entry %s: %llu bytes, over the limit of %llu",
				name, (unsigned long long)st.size,
				(unsigned long long)cap);
	/* One byte more than declared: the read that finds it stops. */
	b = malloc((size_t)st.size + 1);
	if (!b)
		return -ENOMEM;
	rc = deflated(in, idx, &st, b);
	if (rc < 0)
		goto out;
	if (!rc) {
		got = st.size;
		in->inflated += got;
		if (in->inflated > in->lim.max_inflated)
			rc = over_inflated(in);
		goto done;
	}
	rc = 0;
	f = zip_fopen_index(in->za, idx, 0);
	if (!f) {
		rc = entry_fail(in, name, zip_get_error(in->za));
		goto out;
	}
	for (;;) {
		zip_int64_t n = zip_fread(f, b + got, st.size + 1 - got);

		if (n < 0) {
			rc = entry_fail(in, name, zip_file_get_error(f));
			goto out;
		}
		if (n == 0)
			break;
		got += (uint64_t)n;
		in->inflated += (uint64_t)n;
		if (in->inflated > in->lim.max_inflated) {
			rc = over_inflated(in);
			goto out;
		}
		if (got > st.size) {
			rc = jar_fail(
				in, -EFBIG,
				"entry %s inflates past the %llu bytes its "
				"header declares (a zip bomb?)",
				name, (unsigned long long)st.size);
			goto out;
		}
	}
	if (got != st.size) {
		rc = jar_fail(in, -ENOEXEC,
			      "entry %s: %llu bytes, not the %llu declared",
			      name, (unsigned long long)got,
			      (unsigned long long)st.size);
		goto out;
	}
done:
	if (rc)
		goto out;
	*out = b;
	*len = (size_t)got;
	b = NULL;
out:
	free(b);
	if (f)
		zip_fclose(f);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Opening the archive.                                                */

/* The offset of the first local header signature in the first 64 KiB. */
static long find_local_header(struct input *src)
{
	uint8_t *b;
	size_t got, i;
	long at = -1;

	b = malloc(65536);
	if (!b)
		return -1;
	if (!input_read(src, b, 65536, 0, &got))
		for (i = 0; i + 4 <= got && at < 0; i++)
			if (!memcmp(b + i, "PK\3\4", 4))
				at = (long)i;
	free(b);
	return at;
}

/*
 * An archive that does not start with its first entry but holds one
 * within its first 64 KiB (a prefixed archive: a script or an installer
 * before it) is refused as such: -EINVAL, err says so; else 0.
 */
static int refuse_prefix(struct insp *in)
{
	long at = find_local_header(in->src);

	if (at <= 0)
		return 0;
	return cmfs_err_set(in->err, -EINVAL,
			    "not a valid zip archive: %ld bytes of other data "
			    "before it (a prefixed archive)",
			    at);
}

/* The bytes at the end of a file where libzip looks for an end record:
 * the longest comment, the record and a zip64 locator. */
#define END_TAIL (65536u + 22u + 20u)

/*
 * Weigh the entry count that the end-of-central-directory record (or its
 * zip64 twin) declares, before libzip allocates a table that big.  Only a
 * record that ends the file exactly (as ZIP_CHECKCONS wants) is read;
 * anything else is left to libzip.  0, STOP (too many entries) or -EIO.
 */
static int precheck_entries(struct insp *in)
{
	size_t tail, got, p;
	uint64_t count = 0;
	uint8_t *b, z[56];
	int rc = 0, found = 0;

	tail = in->src->size < END_TAIL ? (size_t)in->src->size : END_TAIL;
	if (tail < 22)
		return 0;
	b = malloc(tail);
	if (!b)
		return -ENOMEM;
	rc = input_read(in->src, b, tail, in->src->size - tail, &got);
	if (rc || got != tail) {
		rc = cmfs_err_set(in->err, -EIO, "cannot read the archive");
		goto out;
	}
	for (p = tail - 22 + 1; p-- > 0 && !found;) {
		if (memcmp(b + p, "PK\5\6", 4) ||
		    p + 22 + le16(b + p + 20) != tail)
			continue;
		found = 1;
		count = le16(b + p + 10);
		/* A zip64 locator right before: the real count is there. */
		if (p >= 20 && !memcmp(b + p - 20, "PK\6\7", 4)) {
			uint64_t off = le64(b + p - 20 + 8);

			if (off < in->src->size && in->src->size - off >= 56 &&
			    !input_read(in->src, z, 56, off, &got) &&
			    got == 56 && !memcmp(z, "PK\6\6", 4)) {
				count = le64(z + 32);
			}
		}
	}
	if (found && count > in->lim.max_entries)
		rc = jar_fail(
			in, -EFBIG,
			"the archive declares %llu entries, over the limit "
			"of %zu",
			(unsigned long long)count, in->lim.max_entries);
out:
	free(b);
	return rc;
}

/*
 * Map every raw entry name to its index; a name seen twice makes the
 * archive invalid (-EINVAL), as it would be ambiguous which one a class
 * loader reads.
 */
static int map_entries(struct insp *in)
{
	zip_int64_t n = (zip_int64_t)in->rep->nentries, i;
	int rc;

	/* Every entry's name goes in; the classes reached are at most as
	 * many as the entries. */
	if (n > 0 && hash_reserve(&in->names, (size_t)n))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *name =
			zip_get_name(in->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
		size_t len = name ? strlen(name) : 0;
		struct name *r;

		if (!name)
			return cmfs_err_set(in->err, -EINVAL,
					    "not a valid zip archive: entry "
					    "%lld has no name",
					    (long long)i);
		if (len >= 6 && !memcmp(name + len - 6, ".class", 6) &&
		    strncmp(name, "META-INF/", 9)) {
			/* A base class: its record knows its entry. */
			if (!(r = jar_name_add(in, name, len - 6)))
				return -ENOMEM;
			rc = r->entry != NO_ENTRY;
			r->entry = (zip_uint64_t)i;
		} else {
			rc = hash_put(&in->entries, name, len, (uintptr_t)i);
			if (rc < 0)
				return rc;
		}
		if (rc)
			return cmfs_err_set(
				in->err, -EINVAL,
				"not a valid zip archive: duplicate "
				"entry name %.*s",
				(int)len, name);
	}
	return 0;
}

/*
 * Why libzip would not open the archive, in words a person can act on.
 * `head` holds the first `nhead` bytes of the file.
 */
static int open_error(struct insp *in, zip_error_t *ze, const uint8_t *head)
{
	int code = zip_error_code_zip(ze), e = zip_errno(code), rc;

	if (e != -EINVAL)
		return cmfs_err_set(in->err, e, "cannot read the archive: %s",
				    zip_error_strerror(ze));
	if (code == ZIP_ER_EXISTS) {
		/* Open it again, leniently, only to name the duplicate. */
		zip_error_t ze2;

		zip_error_init(&ze2);
		libzip_open(in, ZIP_RDONLY, &ze2);
		zip_error_fini(&ze2);
		if (in->za)
			in->rep->nentries =
				(size_t)zip_get_num_entries(in->za, 0);
		rc = in->za ? map_entries(in) : 0;
		if (rc)
			return rc;
		return cmfs_err_set(in->err, -EINVAL,
				    "not a valid zip archive: duplicate entry "
				    "names");
	}
	if (memcmp(head, "PK\3\4", 4)) {
		if ((rc = refuse_prefix(in)))
			return rc;
		if (code == ZIP_ER_NOZIP)
			return cmfs_err_set(in->err, -EINVAL,
					    "not a zip archive");
	}
	if (code == ZIP_ER_NOZIP)
		return cmfs_err_set(in->err, -EINVAL,
				    "not a valid zip archive: truncated or "
				    "damaged (no end of central directory)");
	return cmfs_err_set(in->err, -EINVAL, "not a valid zip archive: %s",
			    zip_error_strerror(ze));
}

/*
 * libzip's open, with its consistency checks: 0, or -EINVAL (err says
 * why), -ENOMEM or -EIO.
 */
static int open_libzip(struct insp *in, const uint8_t *head)
{
	zip_error_t ze;
	int rc;

	zip_error_init(&ze);
	if (libzip_open(in, ZIP_CHECKCONS | ZIP_RDONLY, &ze)) {
		rc = open_error(in, &ze, head);
		zip_error_fini(&ze);
		return rc;
	}
	zip_error_fini(&ze);
	in->rep->nentries = (size_t)zip_get_num_entries(in->za, 0);
	return 0;
}

/*
 * Open the archive, judged by libzip with its consistency checks, then
 * map its entries.  0, STOP (a cap), -EINVAL (not a valid zip archive:
 * err says why), -ENOMEM or -EIO.
 */
int jar_open_archive(struct insp *in)
{
	uint8_t head[4] = {0, 0, 0, 0};
	size_t got;
	int rc;

	if (input_read(in->src, head, 4, 0, &got))
		return cmfs_err_set(in->err, -EIO, "cannot read the archive");
	if (in->src->size < 22)
		return cmfs_err_set(in->err, -EINVAL,
				    "not a zip archive: %llu bytes",
				    (unsigned long long)in->src->size);
	rc = precheck_entries(in);
	if (!rc)
		rc = open_libzip(in, head);
	if (rc)
		return rc;
	/* libzip follows offsets that were adjusted for a prefix: we don't. */
	if (memcmp(head, "PK\3\4", 4) && memcmp(head, "PK\5\6", 4)) {
		if ((rc = refuse_prefix(in)))
			return rc;
		return cmfs_err_set(in->err, -EINVAL,
				    "not a valid zip archive: it does not "
				    "start with a zip entry (a prefixed "
				    "archive?)");
	}
	/* The precheck weighed the record; this is what libzip made of it. */
	if (in->rep->nentries > in->lim.max_entries)
		return jar_fail(
			in, -EFBIG,
			"the archive has %zu entries, over the limit of "
			"%zu",
			in->rep->nentries, in->lim.max_entries);
	return map_entries(in);
}

/* ------------------------------------------------------------------ */
/* Inputs, and letting go of the archive.                              */

int jar_input_fd(struct input *src, int fd, struct cmfs_err *err)
{
	struct stat st;
	size_t got;

	if (fstat(fd, &st))
		return cmfs_err_set(err, -EIO, "cannot stat the archive: %s",
				    strerror(errno));
	/* pread() needs a file: a pipe or a socket is not an upload. */
	if (!S_ISREG(st.st_mode))
		return cmfs_err_set(err, -EINVAL,
				    "not a zip archive: not a regular file");
	memset(src, 0, sizeof(*src));
	src->fd = fd;
	src->size = (uint64_t)st.st_size;
	/* A JAR that fits the window is read once, and then from memory:
	 * most uploads are a few KiB, and their directory, service file and
	 * factory cost a pread each otherwise. */
	if (src->size <= WINDOW) {
		src->own = malloc(src->size ? (size_t)src->size : 1);
		/* If it shrank, what was read is the JAR. */
		if (src->own &&
		    !pread_full(fd, src->own, (size_t)src->size, 0, &got)) {
			src->mem = src->own;
			src->size = got;
			src->fd = -1;
		}
	}
	/* Without a window, every read is a pread. */
	if (src->fd >= 0)
		src->win = malloc(WINDOW);
	zip_error_init(&src->error);
	return 0;
}

void jar_input_mem(struct input *src, const void *data, size_t len)
{
	memset(src, 0, sizeof(*src));
	src->fd = -1;
	src->mem = data;
	src->size = len;
	zip_error_init(&src->error);
}

void jar_input_release(struct input *src)
{
	zip_error_fini(&src->error);
	free(src->win);
	free(src->own);
	src->win = src->own = NULL;
}

/*
 * libzip's archive first: its source's callback is not called with the
 * input again but for CLOSE and FREE, which do not touch it.
 */
void jar_archive_close(struct insp *in)
{
	if (in->za)
		zip_discard(in->za);
	in->za = NULL;
	hash_release(&in->entries);
	libdeflate_free_decompressor(in->dd);
	in->dd = NULL;
	free(in->zbuf);
	in->zbuf = NULL;
	in->zcap = 0;
}
