/*
 * zipdir.h - a zip's central directory, judged as libzip judges it.
 *
 * libzip (1.7.3, Debian 12's), opening an archive with ZIP_CHECKCONS,
 * says whether a JAR is a valid zip (jar.c).  Its open was a tenth of a
 * shaded JAR's inspection: for each entry a structure, strings, a hash
 * slot, two time conversions and four small reads of its local header.
 * zipdir_check() walks the same records without any of that, and calls
 * an archive clean only when libzip would open it and describe every
 * entry as its record does.  That is the plain shape JAR tools write
 * (of the test fixtures, all but the odd ones on purpose and the one
 * with non-ASCII names):
 *
 *   - one end record, its comment (if any) running to the end of the
 *     file: no zip64 locator before it, and no other end-record
 *     signature where libzip looks for one (the file's last ZIPDIR_TAIL
 *     bytes);
 *   - one disk; the directory ends where the end record starts and holds
 *     exactly the records it counts, at least one;
 *   - each entry stored (sizes equal) or deflated, not encrypted, sizes
 *     and offset below 0xffffffff, a name of printable ASCII, no comment,
 *     extra fields that parse exactly and none that renames the entry
 *     (0x7075, 0x6375); it lies before the directory;
 *   - its local header agrees with its record as _zip_headercomp() wants:
 *     version needed no higher, method, time and date, name; CRC-32 and
 *     sizes equal, or all zero with a data descriptor flagged; its extra
 *     fields parse exactly too.
 *
 * Anything else is "unsure", not "invalid": the caller opens it with
 * libzip, whose verdict stands, word for word.  Duplicate names are the
 * caller's to find (libzip refuses them too).
 */
#ifndef CMFS_ZIPDIR_H
#define CMFS_ZIPDIR_H

#include <stddef.h>
#include <stdint.h>

/* The bytes at the end of a file where libzip looks for an end record:
 * the longest comment, the record and a zip64 locator (its CDBUFSIZE). */
#define ZIPDIR_TAIL (65536u + 22u + 20u)

/* Where an archive's central directory is, as its end record says. */
struct zipdir {
	uint64_t cd_off, cd_size; /* the directory's bytes in the file */
	uint64_t count;		  /* the records it holds */
};

/*
 * The end record of a file of `size` bytes whose last n bytes are `tail`
 * (n = the lesser of size and ZIPDIR_TAIL): 1 and *z when it is plain (see
 * above), 0 when unsure.
 */
int zipdir_end(const uint8_t *tail, size_t n, uint64_t size, struct zipdir *z);

/*
 * How zipdir_check() reads local headers: up to n bytes at `off` into buf,
 * *got fewer only where the file ends.  0, or -errno.
 */
typedef int (*zipdir_read_fn)(void *ctx, void *buf, size_t n, uint64_t off,
			      size_t *got);

/* The most bytes a local header takes: its fixed part, a name and an
 * extra field, both at their longest. */
#define ZIPDIR_LOCAL_MAX (30u + 2u * 65535u)

/*
 * Walk directory `cd` (z->cd_size bytes, of the archive zipdir_end() found
 * plain) without reading anything else: 1 when every record is plain and
 * they are exactly as many as z->count says, rec[i] then being the offset
 * of entry i's record in cd; else 0 (unsure).  The archive is clean only
 * if, besides, every entry's local header agrees with its record
 * (zipdir_local).
 */
int zipdir_records(const uint8_t *cd, const struct zipdir *z, uint32_t *rec);

/*
 * Whether the local header at `loc` (got bytes of the file from there on)
 * agrees with central record h as libzip wants: 1 yes, 0 no, -1 when got
 * is too short to tell (a header is read whole: its fixed part, name and
 * extra field).  A caller that reads an entry anyway can judge its header
 * with the bytes it has.
 */
int zipdir_local(const uint8_t *h, const uint8_t *loc, size_t got);

/*
 * The same, reading the header with `read` into buf (ZIPDIR_LOCAL_MAX
 * bytes): 1, 0 (also when the file ends inside it), or the reader's
 * -errno.
 */
int zipdir_local_read(const uint8_t *h, uint8_t *buf, zipdir_read_fn read,
		      void *ctx);

/*
 * Judge directory `cd` whole: zipdir_records(), then each entry's local
 * header, read with `read`.  1: clean, and rec[] as zipdir_records() says.
 * 0: unsure.  -ENOMEM, or the reader's -errno.
 */
int zipdir_check(const uint8_t *cd, const struct zipdir *z, uint32_t *rec,
		 zipdir_read_fn read, void *ctx);

#endif
