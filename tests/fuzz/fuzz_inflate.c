/*
 * fuzz_inflate.c - libFuzzer target: any bytes, inflated as a raw DEFLATE
 * stream by inflate.c (both builds of its loop) and by zlib, libzip's
 * inflater, into the same room (the first byte picks it, 0-16 KiB).  They
 * must agree: both refuse, or both take it with the same bytes out and
 * the same bytes read.  Seeds: tests/fuzz/corpus/inflate/.
 */
#include "inflate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct inflater *zs[2];
static uint8_t want[1u << 14], have[1u << 14];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	z_stream s = {0};
	size_t cap, got, used, hgot, hused;
	int zrc, i;

	if (size < 1)
		return 0;
	if (!zs[0]) {
		if (inflate_new(&zs[0]) || inflate_new(&zs[1]))
			abort();
		inflate_plain(zs[1]);
	}
	cap = (size_t)data[0] * 64;
	data++;
	size--;
	if (inflateInit2(&s, -15) != Z_OK)
		abort();
	s.next_in = (Bytef *)data;
	s.avail_in = (uInt)size;
	s.next_out = want;
	s.avail_out = (uInt)cap;
	zrc = inflate(&s, Z_FINISH);
	got = s.total_out;
	used = s.total_in;
	inflateEnd(&s);
	for (i = 0; i < 2; i++) {
		int rc = inflate_raw(zs[i], have, cap, &hgot, data, size, &hused);

		if (zrc != Z_STREAM_END ? rc == 0
					: rc != 0 || hgot != got ||
						  hused != used ||
						  memcmp(have, want, got))
			abort();
	}
	return 0;
}
