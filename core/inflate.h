/*
 * inflate.h - raw DEFLATE (RFC 1951) from one buffer into another.
 *
 * The inspector reads a JAR's classes: tens of thousands of streams of a
 * few KiB, each inflated whole into a buffer of its declared size.  Over
 * such streams a third of libdeflate's time went to reading each block's
 * header and building its decoding tables (2.3 us a stream of the bench's
 * shaded JAR), which this decoder does in 1.4 us; its decoding loop is as
 * fast.  It decodes exactly what zlib (libzip's inflater) decodes and
 * refuses exactly what zlib refuses: tests/unit/test_inflate.c and
 * tests/fuzz/fuzz_inflate.c hold the two to each other.
 *
 * Threads: an inflater is one thread's at a time; any number may be used
 * at once.
 */
#ifndef CMFS_INFLATE_H
#define CMFS_INFLATE_H

#include <stddef.h>

/* The decoding tables of one stream at a time. */
struct inflater;

/* A new inflater in *out (inflate_free() frees it).  0 or -ENOMEM. */
int inflate_new(struct inflater **out);

/* Free z; NULL is a no-op. */
void inflate_free(struct inflater *z);

/* For tests: z decodes with the loop built for any x86-64 from now on,
 * not the BMI2 one inflate_new() picks where the CPU has BMI2. */
void inflate_plain(struct inflater *z);

/*
 * Inflate the raw DEFLATE stream at the start of in[0..in_len) into
 * out[0..cap).  0 when it ends (a final block) within those bytes, with
 * *out_len the bytes written and *in_used the bytes read (the last one
 * perhaps in part); bytes after the stream are not read.  -EINVAL when it
 * is not valid DEFLATE or ends before its final block, -EFBIG when it
 * inflates to more than cap bytes.  On an error out[0..cap) holds
 * whatever was decoded so far, and *out_len and *in_used are not set.
 */
int inflate_raw(struct inflater *z, void *out, size_t cap, size_t *out_len,
		const void *in, size_t in_len, size_t *in_used);

#endif
