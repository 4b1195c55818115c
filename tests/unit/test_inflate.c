/*
 * test_inflate.c - core/inflate.c held to zlib, libzip's inflater: every
 * stream here is inflated by both, and both must agree on whether it is
 * valid DEFLATE, on the bytes it inflates to and on where it ends.
 * Streams come from zlib's deflate (every level and strategy, inputs
 * that reach every length, distance and block type), from the fixture
 * JARs, and from those damaged: cut short at every byte, a bit flipped
 * at every bit, bytes changed at random.  Each runs through both builds
 * of the decoding loop (plain and, where the CPU has it, BMI2).
 */
#include "inflate.h"

#include "fixture.h"
#include "t.h"

#include <errno.h>
#include <stdint.h>
#include <zlib.h>

/* Room past a stream's output, as jar.c gives it (INFLATE_SLACK). */
#define SLACK 512

/* The two builds of the loop: [0] as inflate_new() picks, [1] plain. */
static struct inflater *zs[2];

/* Streams inflated, and how many zlib took, for the summary. */
static unsigned long nstreams, nvalid;

/* zlib's raw deflate of in[0..n) at level/strategy/memLevel into a
 * malloc'd buffer (its length into *len). */
static uint8_t *zdeflate(const uint8_t *in, size_t n, int level, int strategy,
			 int mem, size_t *len)
{
	z_stream s = {0};
	uLong cap;
	uint8_t *out;

	if (deflateInit2(&s, level, Z_DEFLATED, -15, mem, strategy) != Z_OK)
		return NULL;
	cap = deflateBound(&s, (uLong)n) + 64;
	out = malloc(cap);
	s.next_in = (Bytef *)in;
	s.avail_in = (uInt)n;
	s.next_out = out;
	s.avail_out = (uInt)cap;
	if (!out || deflate(&s, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&s);
		free(out);
		return NULL;
	}
	*len = s.total_out;
	deflateEnd(&s);
	return out;
}

/*
 * zlib's verdict on in[0..n) inflated into out[0..cap): 0 with *used and
 * *got when the stream ends within both, 1 when it is refused or does
 * not end (input or room run out).
 */
static int zinflate(const uint8_t *in, size_t n, uint8_t *out, size_t cap,
		    size_t *got, size_t *used)
{
	z_stream s = {0};
	int rc;

	if (inflateInit2(&s, -15) != Z_OK)
		return 1;
	s.next_in = (Bytef *)in;
	s.avail_in = (uInt)n;
	s.next_out = out;
	s.avail_out = (uInt)cap;
	rc = inflate(&s, Z_FINISH);
	*got = s.total_out;
	*used = s.total_in;
	inflateEnd(&s);
	return rc != Z_STREAM_END;
}

/* Bytes after the room, which no inflate may write. */
#define CANARY 64

/* Whether any of the CANARY bytes at p (0xa5 each) was written. */
static int past_room(const uint8_t *p)
{
	int i;

	for (i = 0; i < CANARY; i++)
		if (p[i] != 0xa5)
			return 1;
	return 0;
}

/*
 * Both builds against zlib on one stream, into room for cap bytes (and
 * nothing written past it): the same verdict, and when valid the same
 * bytes and length read (a check, failures printed with `what`).
 * Returns zlib's verdict: 1 when it takes the stream.
 */
static int agree_cap(const uint8_t *in, size_t n, size_t cap, const char *what)
{
	uint8_t *want = malloc(cap + 1), *have = malloc(cap + CANARY);
	size_t got = 0, used = 0, hgot, hused;
	int zrc, ok = 1, i;

	if (!want || !have) {
		free(want);
		free(have);
		T_CHECK(!"out of memory");
		return -1;
	}
	zrc = zinflate(in, n, want, cap, &got, &used);
	nstreams++;
	nvalid += !zrc;
	for (i = 0; i < 2 && zs[i]; i++) {
		int rc;

		hgot = hused = (size_t)-1;
		memset(have + cap, 0xa5, CANARY);
		rc = inflate_raw(zs[i], have, cap, &hgot, in, n, &hused);
		if (!past_room(have + cap) &&
		    (zrc ? rc == -EINVAL || rc == -EFBIG
			 : rc == 0 && hgot == got && hused == used &&
				     !memcmp(have, want, got)))
			continue;
		ok = 0;
		fprintf(stderr,
			"%s (%zu bytes, room %zu, loop %d): zlib %s %zu/%zu, "
			"inflate %d %zu/%zu\n",
			what, n, cap, i, zrc ? "refuses" : "takes", got, used,
			rc, hgot, hused);
	}
	T_CHECK(ok);
	free(want);
	free(have);
	return !zrc;
}

/* agree_cap() with the room jar.c gives: the output and SLACK more. */
static int agree(const uint8_t *in, size_t n, size_t size, const char *what)
{
	return agree_cap(in, n, size + SLACK, what);
}

/* agree() into 4 KiB of room, and zlib takes the stream (valid 1) or
 * refuses it (0): a hand-made stream is what it was meant to be. */
static void agree_as(const uint8_t *in, size_t n, int valid, const char *what)
{
	int took = agree_cap(in, n, 4096, what);

	if (took >= 0 && took != valid) {
		T_CHECK(!"zlib's verdict is not the one meant");
		fprintf(stderr, "  %s: zlib %s it\n", what,
			valid ? "refuses" : "takes");
	}
}

/* n bytes of xorshift noise from *seed. */
static void noise(uint8_t *b, size_t n, uint64_t *seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		*seed ^= *seed << 13;
		*seed ^= *seed >> 7;
		*seed ^= *seed << 17;
		b[i] = (uint8_t)(*seed >> 24);
	}
}

/*
 * Inputs that make zlib use every kind of block and code: noise (stored
 * blocks at level 0, literal-only codes), text of few symbols (codes of
 * one and two bits), runs (distance 1), short periods 2-16 (the copy's
 * small distances), long repeats far back (distances up to 32 KiB,
 * lengths to 258), and a mix of them across many blocks.
 */
static uint8_t *make_input(int kind, size_t n, uint64_t *seed)
{
	uint8_t *b = malloc(n ? n : 1);
	size_t i, j;

	if (!b)
		return NULL;
	switch (kind) {
	case 0:
		noise(b, n, seed);
		break;
	case 1: /* two symbols */
		noise(b, n, seed);
		for (i = 0; i < n; i++)
			b[i] = "ab"[b[i] & 1];
		break;
	case 2: /* one symbol */
		memset(b, 'x', n);
		break;
	case 3: /* periods 2..16 in turn, a few hundred bytes each */
		for (i = 0; i < n;) {
			size_t period = 2 + (i / 300) % 15;

			for (j = 0; j < 300 && i < n; j++, i++)
				b[i] = (uint8_t)('a' + (j % period));
		}
		break;
	case 4: /* 2 KiB of noise repeated, a byte changed now and then */
		noise(b, n < 2048 ? n : 2048, seed);
		for (i = 2048; i < n; i++)
			b[i] = (i % 997) ? b[i - 2048] : (uint8_t)i;
		break;
	case 5: /* base64-like text with repeats: class-file-ish */
		noise(b, n, seed);
		for (i = 0; i < n; i++) {
			b[i] = (uint8_t)("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijk"
					 "lmnop"
					 "qrstuvwxyz0123456789+/")[b[i] & 63];
			if (i > 40000 && b[i] < 'F')
				b[i] = b[i - 32700];
		}
		break;
	default: /* a mix: each 1 KiB of one of the above */
		for (i = 0; i < n; i += 1024) {
			uint8_t *part =
				make_input((int)(i / 1024) % 6,
					   n - i < 1024 ? n - i : 1024, seed);

			if (part)
				memcpy(b + i, part,
				       n - i < 1024 ? n - i : 1024);
			free(part);
		}
	}
	return b;
}

/* Every input kind at several sizes, every level and strategy. */
static void test_zlib_streams(void)
{
	static const size_t sizes[] = {0,   1,	  2,	3,     100,   258,
				       259, 1000, 4096, 70000, 300000};
	static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED,
					 Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED};
	uint64_t seed = 20261202;
	char what[96];
	unsigned kind, si, level, st;

	for (kind = 0; kind < 7; kind++)
		for (si = 0; si < sizeof(sizes) / sizeof(*sizes); si++) {
			uint8_t *in = make_input((int)kind, sizes[si], &seed);

			/* zlib's level 9 over 300 KB of repeats is most of
			 * this file's time: fewer levels for long inputs. */
			for (level = 0; level <= 9; level += sizes[si] < 10000
								     ? 1
							     : level ? 5
								     : 1)
				for (st = 0; st < 5; st++) {
					size_t len;
					uint8_t *z = zdeflate(
						in, sizes[si], (int)level,
						strategies[st], st == 4 ? 1 : 8,
						&len);

					snprintf(what, sizeof(what),
						 "kind %u size %zu level %u "
						 "strategy %u",
						 kind, sizes[si], level, st);
					T_CHECK(z != NULL);
					if (z)
						agree(z, len, sizes[si], what);
					free(z);
				}
			free(in);
		}
}

/* Every length 3-258 at every distance 1-20 and some far ones: a match
 * of each is what zlib makes of a period repeated that long. */
static void test_matches(void)
{
	static const size_t far[] = {64,   255,	  256,	 257,	1000,
				     4097, 16385, 24577, 32767, 32768};
	uint8_t in[40000];
	uint64_t seed = 7;
	size_t dist, length, i, len;
	char what[64];

	for (dist = 1; dist <= 20 + sizeof(far) / sizeof(*far); dist++) {
		size_t d = dist <= 20 ? dist : far[dist - 21];

		for (length = 3; length <= 258; length += dist <= 20 ? 1 : 17) {
			uint8_t *z;

			noise(in, d, &seed);
			for (i = d; i < d + length; i++)
				in[i] = in[i - d];
			noise(in + d + length, 8, &seed);
			z = zdeflate(in, d + length + 8, 9, Z_DEFAULT_STRATEGY,
				     9, &len);
			snprintf(what, sizeof(what), "distance %zu length %zu",
				 d, length);
			T_CHECK(z != NULL);
			if (z)
				agree(z, len, d + length + 8, what);
			free(z);
		}
	}
}

/* The output's room: exactly the bytes (no slack), one short, none;
 * a long match last, at every distance kind, with room for it alone. */
static void test_room(void)
{
	static const size_t dists[] = {1, 2, 3, 7, 8, 9, 16, 40, 300};
	uint8_t buf[1400];
	size_t di, length, extra;
	uint64_t seed = 99;
	uint8_t *in = make_input(6, 5000, &seed), *z;
	size_t len, cap;
	int i;

	/* 1,000 bytes of noise, a match, 100 more: the room ends at the
	 * match's end or up to 40 bytes after (where the fast loop may
	 * copy it: it copies in steps of 40), with input left to read. */
	for (di = 0; di < sizeof(dists) / sizeof(*dists); di++)
		for (length = 200; length <= 258; length += 2) {
			size_t d = dists[di], j;

			noise(buf, 1000, &seed);
			for (j = 1000; j < 1000 + length; j++)
				buf[j] = buf[j - d];
			noise(buf + 1000 + length, 100, &seed);
			z = zdeflate(buf, 1100 + length, 9, Z_DEFAULT_STRATEGY,
				     9, &len);
			T_CHECK(z != NULL);
			for (extra = 0; z && extra <= 40; extra++)
				agree_cap(z, len, 1000 + length + extra,
					  "a match at the room's end");
			free(z);
		}
	T_CHECK(in != NULL);
	z = in ? zdeflate(in, 5000, 6, Z_DEFAULT_STRATEGY, 8, &len) : NULL;
	T_CHECK(z != NULL);
	if (z) {
		for (cap = 0; cap <= 5000; cap += cap < 4600 ? 397 : 1)
			agree_cap(z, len, cap, "room");
		for (i = 0; i < 2 && zs[i]; i++) {
			uint8_t out[4999];
			size_t got, used;

			T_ERRNO(inflate_raw(zs[i], out, sizeof(out), &got, z,
					    len, &used),
				EFBIG);
		}
	}
	free(z);
	free(in);
}

/* Hand-made streams: the edges of what a block may be. */
static void test_edges(void)
{
	static const struct {
		const char *what;
		int valid; /* to zlib */
		uint8_t b[16];
		size_t n;
	} v[] = {
		{"empty fixed block", 1, {0x03, 0x00}, 2},
		{"empty stored block", 1, {0x01, 0x00, 0x00, 0xff, 0xff}, 5},
		{"stored, NLEN wrong", 0, {0x01, 0x00, 0x00, 0xfe, 0xff}, 5},
		{"stored, bytes missing",
		 0,
		 {0x01, 0x03, 0x00, 0xfc, 0xff, 'a'},
		 6},
		{"stored then fixed",
		 1,
		 {0x00, 0x01, 0x00, 0xfe, 0xff, 'a', 0x03, 0x00},
		 8},
		{"block type 3", 0, {0x07, 0x00}, 2},
		{"no final block", 0, {0x02, 0x00}, 2},
		{"nothing", 0, {0}, 0},
		{"fixed, literal 'a' and end", 1, {0x4b, 0x04, 0x00}, 3},
		{"fixed, distance before any output", 0, {0x03, 0x02, 0x00}, 3},
		{"fixed, length symbol 286", 0, {0x1b, 0x03, 0x00}, 3},
		{"trailing bytes after the end",
		 1,
		 {0x03, 0x00, 0xde, 0xad},
		 4},
	};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(*v); i++)
		agree_as(v[i].b, v[i].n, v[i].valid, v[i].what);
}

/* ------------------------------------------------------------------ */
/* Streams written bit by bit: the edges of a dynamic block's header.   */

struct bw {
	uint8_t b[512];
	size_t n;      /* whole bytes written */
	uint64_t acc;  /* bits not yet written, LSB first */
	unsigned bits; /* how many */
};

/* n bits of v, least significant first (as DEFLATE packs them). */
static void put(struct bw *w, unsigned v, unsigned n)
{
	w->acc |= (uint64_t)(v & ((1u << n) - 1)) << w->bits;
	w->bits += n;
	while (w->bits >= 8 && w->n < sizeof(w->b)) {
		w->b[w->n++] = (uint8_t)w->acc;
		w->acc >>= 8;
		w->bits -= 8;
	}
}

/* The rest of the last byte. */
static size_t flush(struct bw *w)
{
	if (w->bits)
		put(w, 0, 8 - w->bits);
	return w->n;
}

/* Symbol s of the canonical code with lengths lens[0..n): its bits,
 * most significant first. */
static void put_sym(struct bw *w, const uint8_t *lens, unsigned n, unsigned s)
{
	unsigned code = 0, len, i;

	for (len = 1; len <= 15; len++) {
		for (i = 0; i < n; i++) {
			if (lens[i] != len)
				continue;
			if (i == s) {
				while (len--)
					put(w, code >> len & 1, 1);
				return;
			}
			code++;
		}
		code <<= 1;
	}
}

/* The precode every crafted header uses, complete: 0-12 four bits,
 * 13-18 five. */
static const uint8_t pre_lens[19] = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
				     4, 4, 4, 5, 5, 5, 5, 5, 5};

/* A final dynamic block's header: counts, then the precode. */
static void put_header(struct bw *w, unsigned nlit, unsigned ndist)
{
	static const uint8_t order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
					  11, 4,  12, 3, 13, 2, 14, 1, 15};
	unsigned i;

	put(w, 1, 1);
	put(w, 2, 2);
	put(w, nlit - 257, 5);
	put(w, ndist - 1, 5);
	put(w, 19 - 4, 4);
	for (i = 0; i < 19; i++)
		put(w, pre_lens[order[i]], 3);
}

/* Each length of lens[0..n) as a precode symbol of its own. */
static void put_lens(struct bw *w, const uint8_t *lens, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		put_sym(w, pre_lens, 19, lens[i]);
}

/*
 * A block whose codes have the lengths lit[0..nlit) and dist[0..ndist),
 * then the symbols syms[] (literal/length symbols; a length symbol's
 * next entry is its distance symbol, extra bits zero), then end of
 * block: agree_as() with zlib, which must take it or not as `valid`
 * says.
 */
static void crafted(int valid, const char *what, const uint8_t *lit,
		    unsigned nlit, const uint8_t *dist, unsigned ndist,
		    const unsigned *syms, size_t nsyms)
{
	static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1,
					      1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
					      4, 4, 4, 4, 5, 5, 5, 5, 0};
	struct bw w = {0};
	size_t i;

	put_header(&w, nlit, ndist);
	put_lens(&w, lit, nlit);
	put_lens(&w, dist, ndist);
	for (i = 0; i < nsyms; i++) {
		put_sym(&w, lit, nlit, syms[i]);
		if (syms[i] > 256 && syms[i] < 286 && i + 1 < nsyms) {
			put(&w, 0, len_extra[syms[i] - 257]);
			i++;
			put_sym(&w, dist, ndist, syms[i]);
			put(&w, 0, syms[i] < 4 ? 0 : syms[i] / 2 - 1);
		}
	}
	put_sym(&w, lit, nlit, 256);
	agree_as(w.b, flush(&w), valid, what);
}

static void test_headers(void)
{
	uint8_t lit[288] = {0}, dist[32] = {0};
	unsigned ab[] = {'a', 'b', 'a'}, match[] = {'a', 'b', 257, 0, 257, 0};
	unsigned i, deep[17];

	/* 'a', 'b' and end of block: 2, 2 and 1 bits; one distance. */
	lit['a'] = lit['b'] = 2;
	lit[256] = 1;
	dist[0] = 1;
	crafted(1, "plain", lit, 257, dist, 1, ab, 3);
	crafted(1, "286 codes", lit, 286, dist, 1, ab, 3);
	crafted(0, "287 codes (zlib: too many)", lit, 287, dist, 1, ab, 3);
	crafted(0, "288 codes", lit, 288, dist, 1, ab, 3);
	crafted(1, "30 distances", lit, 257, dist, 30, ab, 3);
	crafted(0, "31 distances (zlib: too many)", lit, 257, dist, 31, ab, 3);
	crafted(0, "32 distances", lit, 257, dist, 32, ab, 3);

	/* Matches through a distance code of one 1-bit code (incomplete,
	 * which zlib takes), of one 2-bit code (it does not), and none. */
	lit[257] = 3;
	lit['b'] = 3;
	crafted(1, "one distance code of 1 bit", lit, 258, dist, 1, match, 6);
	dist[0] = 2;
	crafted(0, "one distance code of 2 bits", lit, 258, dist, 1, match, 6);
	dist[0] = 0;
	crafted(0, "no distance codes, a match", lit, 258, dist, 1, match, 6);
	crafted(1, "no distance codes, no match", lit, 258, dist, 1, ab, 3);
	dist[0] = 1;
	dist[1] = 1;
	dist[2] = 1;
	crafted(0, "distances over-subscribed", lit, 258, dist, 3, ab, 3);
	memset(dist, 0, sizeof(dist));
	dist[0] = 1;

	/* Literal/length codes: only the end of block (one 1-bit code);
	 * over-subscribed; incomplete; without an end of block. */
	memset(lit, 0, sizeof(lit));
	lit[256] = 1;
	crafted(1, "only an end of block", lit, 257, dist, 1, NULL, 0);
	lit['a'] = 1;
	lit['b'] = 1;
	crafted(0, "literals over-subscribed", lit, 257, dist, 1, ab, 2);
	lit['b'] = 2;
	crafted(0, "literals incomplete", lit, 257, dist, 1, ab, 1);
	lit[256] = 0;
	lit['b'] = 1;
	crafted(0, "no end of block", lit, 257, dist, 1, ab, 1);

	/* Codes of every length to 15 (subtables under both roots): 'a'
	 * gets 1 bit, 'b' 2, ... 'o' 15 and end of block 15 too. */
	memset(lit, 0, sizeof(lit));
	memset(dist, 0, sizeof(dist));
	for (i = 0; i < 15; i++) {
		lit['a' + i] = (uint8_t)(i + 1);
		dist[i] = (uint8_t)(i + 1);
		deep[i] = 'a' + i;
	}
	lit[256] = 15;
	dist[15] = 15;
	crafted(1, "codes of 1-15 bits", lit, 257, dist, 16, deep, 15);
	lit[257] = 15; /* over-subscribed by one 15-bit code */
	crafted(0, "one 15-bit code too many", lit, 258, dist, 16, deep, 15);
}

/*
 * Repeat codes (16: the last length 3-6 times; 17, 18: zeros 3-10 and
 * 11-138) at the edges: first of all, short of and past the end.  The
 * code: 'a' and end of block 1 bit each, one distance of 1 bit (257 + 1
 * lengths); `first` (a precode symbol, `extra` in `nbits` bits) comes
 * first, then plain lengths to `total` written in all.
 */
static void repeats(int valid, const char *what, unsigned first, unsigned extra,
		    unsigned nbits, unsigned total)
{
	struct bw w = {0};
	uint8_t lens[300] = {0};
	unsigned i;

	lens['a'] = lens[256] = lens[257] = 1;
	put_header(&w, 257, 1);
	put_sym(&w, pre_lens, 19, first);
	put(&w, extra, nbits);
	i = first == 16 ? 3 + extra : first == 17 ? 3 + extra : 11 + extra;
	for (; i < total; i++)
		put_sym(&w, pre_lens, 19, lens[i]);
	put_sym(&w, lens, 257, 'a');
	put_sym(&w, lens, 257, 256);
	agree_as(w.b, flush(&w), valid, what);
}

static void test_repeats(void)
{
	struct bw w = {0};
	uint8_t lit[257] = {0}, dist[4] = {2, 2, 2, 2};
	int i;

	repeats(1, "zeros first (18)", 18, 0, 7, 258);
	repeats(1, "zeros first (17)", 17, 7, 3, 258);
	repeats(0, "the last length first (16)", 16, 0, 2, 258);
	/* At the end: zeros for the four distances (17, 3 + 1), or one
	 * more than there are (3 + 2). */
	lit['a'] = lit[256] = 1;
	for (i = 0; i < 2; i++) {
		memset(&w, 0, sizeof(w));
		put_header(&w, 257, 4);
		put_lens(&w, lit, 257);
		put_sym(&w, pre_lens, 19, 17);
		put(&w, 1 + i, 3);
		put_sym(&w, lit, 257, 'a');
		put_sym(&w, lit, 257, 256);
		agree_as(w.b, flush(&w), !i,
			 i ? "zeros one past the end" : "zeros to the end");
	}
	memset(&w, 0, sizeof(w));
	memset(lit, 0, sizeof(lit));

	/* 16 across the two sets: 255's length (2) three times, for 256
	 * and the first two distances ('a' 1 bit; 4 distances of 2). */
	lit['a'] = 1;
	lit[255] = lit[256] = 2;
	put_header(&w, 257, 4);
	put_lens(&w, lit, 256);
	put_sym(&w, pre_lens, 19, 16);
	put(&w, 0, 2);
	put_lens(&w, dist + 2, 2);
	put_sym(&w, lit, 257, 'a');
	put_sym(&w, lit, 257, 255);
	put_sym(&w, lit, 257, 256);
	agree_as(w.b, flush(&w), 1, "a repeat across the two sets");
}

/* The deflated entries of a fixture JAR, as raw streams: a callback for
 * each (its bytes, its size). */
static void each_entry(const uint8_t *zip, size_t n,
		       void (*fn)(const uint8_t *, size_t, size_t,
				  const char *),
		       const char *name)
{
	size_t i;

	for (i = 0; i + 46 <= n; i++) {
		uint32_t csize, usize, off;
		unsigned method, nl, el;

		if (memcmp(zip + i, "PK\1\2", 4))
			continue;
		method = zip[i + 10] | zip[i + 11] << 8;
		memcpy(&csize, zip + i + 20, 4);
		memcpy(&usize, zip + i + 24, 4);
		memcpy(&off, zip + i + 42, 4);
		if (method != 8 || off + 30u > n)
			continue;
		nl = zip[off + 26] | zip[off + 27] << 8;
		el = zip[off + 28] | zip[off + 29] << 8;
		if ((size_t)off + 30 + nl + el + csize > n)
			continue;
		fn(zip + off + 30 + nl + el, csize, usize, name);
	}
}

static void entry_whole(const uint8_t *s, size_t n, size_t size,
			const char *name)
{
	agree(s, n, size, name);
}

/* Each entry cut short at every length, then every bit flipped (the
 * first 2,000), then 200 random bytes changed 3 at a time. */
static void entry_damaged(const uint8_t *s, size_t n, size_t size,
			  const char *name)
{
	uint8_t *c = malloc(n + 1);
	uint64_t seed = n;
	size_t i, j;

	if (!c || n > 100000) {
		free(c);
		return;
	}
	for (i = 0; i < n; i++)
		agree(s, i, size, name);
	for (i = 0; i < 8 * n && i < 2000; i++) {
		memcpy(c, s, n);
		c[i / 8] ^= (uint8_t)(1u << (i % 8));
		agree(c, n, size, name);
	}
	for (i = 0; i < 200; i++) {
		uint8_t r[6];

		memcpy(c, s, n);
		noise(r, sizeof(r), &seed);
		for (j = 0; j < 3; j++)
			c[(r[2 * j] | (size_t)r[2 * j + 1] << 8) % n] ^=
				(uint8_t)(r[j] | 1);
		agree(c, n, size, name);
	}
	free(c);
}

static void test_fixture_jars(void)
{
	static const char *const jars[] = {"mongodb.jar",   "bundle.jar",
					   "inherit.jar",   "bad-class.jar",
					   "guava-ref.jar", "unicode.jar"};
	size_t i, n;

	for (i = 0; i < sizeof(jars) / sizeof(*jars); i++) {
		char *zip = fixture_jar(jars[i], &n, "fixture JAR");

		if (!zip)
			continue;
		each_entry((uint8_t *)zip, n, entry_whole, jars[i]);
		each_entry((uint8_t *)zip, n, entry_damaged, jars[i]);
		free(zip);
	}
}

/* zlib's own streams damaged the same ways: dynamic blocks with long
 * codes, stored and fixed ones, several blocks. */
static void test_damaged_streams(void)
{
	uint64_t seed = 5;
	int kind;

	for (kind = 0; kind < 7; kind++) {
		uint8_t *in = make_input(kind, 3000, &seed), *z;
		size_t len;

		z = in ? zdeflate(in, 3000, kind == 0 ? 0 : 6,
				  kind == 3 ? Z_FIXED : Z_DEFAULT_STRATEGY, 8,
				  &len)
		       : NULL;
		T_CHECK(z != NULL);
		if (z)
			entry_damaged(z, len, 3000, "zlib stream");
		free(z);
		free(in);
	}
}

/* Random bytes as a stream: almost all refused, each as zlib does. */
static void test_noise(void)
{
	uint64_t seed = 1;
	uint8_t b[64];
	int i;

	for (i = 0; i < 20000; i++) {
		size_t n = 1 + (size_t)(seed % sizeof(b));

		noise(b, n, &seed);
		agree(b, n, 300, "noise");
	}
}

int main(void)
{
	T_CHECK(inflate_new(&zs[0]) == 0);
	T_CHECK(inflate_new(&zs[1]) == 0);
	if (zs[1])
		inflate_plain(zs[1]);
	T_RUN(test_edges);
	T_RUN(test_headers);
	T_RUN(test_repeats);
	T_RUN(test_zlib_streams);
	T_RUN(test_matches);
	T_RUN(test_room);
	T_RUN(test_fixture_jars);
	T_RUN(test_damaged_streams);
	T_RUN(test_noise);
	printf("%lu streams, %lu valid to zlib\n", nstreams, nvalid);
	inflate_free(zs[0]);
	inflate_free(zs[1]);
	inflate_free(NULL);
	return T_DONE();
}
