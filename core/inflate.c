/*
 * inflate.c - raw DEFLATE decoding (inflate.h).
 *
 * A DEFLATE stream is a run of blocks: stored bytes, or Huffman codes
 * for literals, lengths and distances, fixed by the format (type 1) or
 * given in the block's header (type 2, "dynamic") as code lengths that
 * are themselves coded with a small "precode".
 *
 * Bits.  The stream is read least significant bit first into a 64-bit
 * buffer, `buf`, of which `n` bits are the stream's next ones.  Away
 * from the input's end one unaligned 8-byte load tops it up to at least
 * 56 bits (fill_fast); the bits above `n` then hold the next bytes too,
 * which later loads OR in again, bit for bit the same.  Within the last
 * 8 bytes it is topped up a byte at a time (fill_slow), and past the end
 * with zero bytes that are counted (`over`): a stream whose codes need
 * them ends early and is refused.
 *
 * Tables.  A code is decoded by one look-up of the buffer's low bits in a
 * table: each entry says how many bits its code takes and what it means
 * (see "Entries").  Codes longer than the table's root bits (11 for
 * literals and lengths, 8 for distances, 7 for the precode, whose codes
 * are at most 7 bits) take a second look-up in a subtable that the root
 * entry points to.  A table is built for each dynamic block: the symbols
 * of each length found 16 at a time by SSE2 compares, the root table
 * grown by doubling (a code of L bits fills every entry whose low L bits
 * are its bits reversed), so a symbol with a code of root bits or fewer
 * is one store.  What zlib refuses when it builds the same tables is
 * refused here: a code that is over-subscribed, or incomplete beyond a
 * single code of one bit (and any incomplete precode), too many symbols,
 * a length repeated with none before it, a run of lengths past the
 * last, or a block whose end-of-block symbol has no code.
 *
 * Decoding.  While at least 16 input bytes and FAST_ROOM output bytes
 * are left, the fast loop decodes without bounds checks on either: one
 * top-up each round gives the bits for two literals, or a length and its
 * distance, and the next entry is looked up before a match is copied.
 * Near either end the slow loop decodes a symbol at a time with every
 * check.  The loop is compiled twice, once for BMI2 (one-uop variable
 * shifts), and inflate_new() picks by the CPU.
 */
#include "inflate.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Root bits of each table, and the longest code DEFLATE has. */
#define LIT_BITS 11
#define DIST_BITS 8
#define PRE_BITS 7
#define MAX_BITS 15

/*
 * Room for a table: its root, and a subtable for each code longer than
 * the root bits at most (a subtable is never wider than the bits those
 * codes have left).  Loose, but plainly enough; build() checks it too.
 */
#define LIT_CAP ((1u << LIT_BITS) + 286u * (1u << (MAX_BITS - LIT_BITS)))
#define DIST_CAP ((1u << DIST_BITS) + 30u * (1u << (MAX_BITS - DIST_BITS)))

/* Code lengths of a block's literals and lengths, then its distances:
 * build() reads them 64 at a time, so zeros pad them past 286 + 30. */
#define LENS_ROOM 320u

/* Output the fast loop may write in a round: two literals, or a match
 * of 258 bytes copied in 40-byte steps (280, copy_match). */
#define FAST_ROOM 300u

/*
 * Entries.  Bits 0-7: the bits the entry takes from the stream (its
 * code's, and a length's or distance's extra bits).  Bits 8-11: its
 * code's own bits, after which the extra bits start; in a pointer, the
 * subtable's index bits.  The rest depends on the table:
 *
 *   literal/length: LIT, the byte in bits 16-23; SUB, the subtable's
 *     start in bits 16-27; EOB; BAD (no such code); or none of these, a
 *     length whose base is in bits 16-24;
 *   distance: D_SUB or D_BAD in bits 12-13; the base or the subtable's
 *     start in bits 16-31 (a base is up to 24,577);
 *   precode: the code length (0-15) in bits 16-23, or with P_PREV or
 *     P_ZERO the number of repeats less its extra bits.
 */
#define LIT 0x80000000u
#define SUB 0x40000000u
#define EOB 0x20000000u
#define BAD 0x10000000u
#define P_PREV 0x01000000u
#define P_ZERO 0x02000000u
#define D_SUB 0x1000u
#define D_BAD 0x2000u

#define TAKES(e) ((e)&0xffu)
#define CODE_BITS(e) (((e) >> 8) & 0xfu)

/* The low n bits of x (n <= 63). */
#define LOW(x, n) ((x) & ((UINT64_C(1) << (n)) - 1))

/* What is the same for every inflater: built once (setup). */
static struct {
	pthread_once_t once;
	uint8_t rev[256]; /* each byte with its bits reversed */
	/* Each symbol's entry, less the bits it takes (build adds them). */
	uint32_t lit[288], dist[32], pre[19];
	/* The tables of fixed-code blocks (type 1): no subtables. */
	uint32_t fixed_lit[1u << LIT_BITS], fixed_dist[1u << DIST_BITS];
} k = {.once = PTHREAD_ONCE_INIT};

struct bits {
	uint64_t buf;
	unsigned n;		/* bits of buf that are the stream's next */
	unsigned over;		/* zero bytes added past the input's end */
	const uint8_t *p, *end; /* the input not yet in buf */
};

typedef int decode_fn(struct inflater *z, uint8_t *out, size_t cap,
		      size_t *out_len, const uint8_t *in, size_t in_len,
		      size_t *in_used);

struct inflater {
	uint32_t lit[LIT_CAP];
	uint32_t dist[DIST_CAP];
	uint32_t pre[1u << PRE_BITS];
	uint8_t lens[LENS_ROOM];
	decode_fn *decode; /* the plain or the BMI2 build of the loop */
};

/* ------------------------------------------------------------------ */
/* Tables                                                              */

/* code, a number of len bits, with its bits reversed: a Huffman code
 * is stored from its most significant bit, the stream from its least. */
static inline unsigned reversed(unsigned code, unsigned len)
{
	return ((unsigned)k.rev[code & 0xff] << 8 | k.rev[code >> 8]) >>
	       (16 - len);
}

/* The symbols among lens[0..64 * nw) whose length is len, in order,
 * into out[]; how many.  lens holds at least 64 * nw bytes. */
static unsigned with_length(uint16_t *out, const uint8_t *lens, unsigned nw,
			    unsigned len)
{
	unsigned w, i, n = 0;

	for (w = 0; w < nw; w++) {
		const uint8_t *p = lens + 64 * w;
		uint64_t bits = 0;
#ifdef __SSE2__
		__m128i want = _mm_set1_epi8((char)len);

		for (i = 0; i < 4; i++) {
			__m128i v = _mm_loadu_si128((const void *)(p + 16 * i));

			bits |= (uint64_t)(uint16_t)_mm_movemask_epi8(
					_mm_cmpeq_epi8(v, want))
				<< (16 * i);
		}
#else
		for (i = 0; i < 64; i++)
			bits |= (uint64_t)(p[i] == len) << i;
#endif
		for (; bits; bits &= bits - 1)
			out[n++] = (uint16_t)(64 * w + __builtin_ctzll(bits));
	}
	return n;
}

/* The index bits of a subtable for codes of len bits (done of them
 * placed already) under a root of root bits: as many as the codes
 * sharing its prefix need, up to the longest, max (zlib's rule). */
static unsigned sub_width(const unsigned *count, unsigned len, unsigned done,
			  unsigned root, unsigned max)
{
	unsigned bits = len - root;
	int free_ = (1 << bits) - (int)(count[len] - done);

	while (free_ > 0 && bits + root < max) {
		bits++;
		free_ = 2 * free_ - (int)count[bits + root];
	}
	return bits;
}

/* The codes a set of lengths leaves unused (0: a complete code), or -1
 * when it is over-subscribed. */
static long unused_codes(const unsigned *count)
{
	long left = 1;
	unsigned len;

	for (len = 1; len <= MAX_BITS; len++) {
		left = 2 * left - (long)count[len];
		if (left < 0)
			return -1;
	}
	return left;
}

/*
 * Build a decoding table in t (room for cap entries) for the code whose
 * lengths are lens[0..nsym), count[len] of each length 1..15 (lens is
 * zero up to the next multiple of 64).  sym[] holds each symbol's entry
 * less its bits; `bad` and `sub` are the table's flags.  0, or -EINVAL
 * for a code zlib refuses (see the top of the file).
 */
static int build(uint32_t *t, unsigned cap, unsigned root, const uint8_t *lens,
		 unsigned nsym, const unsigned *count, const uint32_t *sym,
		 uint32_t bad, uint32_t sub)
{
	unsigned len, max = 0, code = 0, size = 2, i, j, n;
	unsigned nw = (nsym + 63) / 64, mask = (1u << root) - 1;
	unsigned end = 1u << root, prefix = ~0u, bits = 0, start = 0;
	long left = unused_codes(count);
	uint16_t syms[LENS_ROOM];

	for (len = 1; len <= MAX_BITS; len++)
		if (count[len])
			max = len;
	if (max == 0) { /* no codes (a block without distances) */
		for (i = 0; i < 1u << root; i++)
			t[i] = bad;
		return 0;
	}
	if (left < 0 || (left && max != 1))
		return -EINVAL;

	/* The root table, doubled from 2 entries to 1 << root; the codes
	 * of each length are consecutive, in the order of their symbols. */
	t[0] = t[1] = bad;
	for (len = 1; len <= root; len++, code <<= 1) {
		if (len > 1) {
			memcpy(t + size, t, size * sizeof(*t));
			size <<= 1;
		}
		n = count[len] ? with_length(syms, lens, nw, len) : 0;
		for (i = 0; i < n; i++)
			t[reversed(code++, len)] =
				sym[syms[i]] + (len << 8 | len);
	}

	/* Longer codes: a subtable for each root prefix they share. */
	for (len = root + 1; len <= max; len++, code <<= 1) {
		unsigned tail = len - root;

		n = count[len] ? with_length(syms, lens, nw, len) : 0;
		for (i = 0; i < n; i++, code++) {
			unsigned r = reversed(code, len);

			if ((r & mask) != prefix) {
				prefix = r & mask;
				bits = sub_width(count, len, i, root, max);
				start = end;
				end += 1u << bits;
				if (end > cap)
					return -EINVAL;
				for (j = start; j < end; j++)
					t[j] = bad;
				t[prefix] =
					sub | start << 16 | bits << 8 | root;
			}
			for (j = r >> root; j < 1u << bits; j += 1u << tail)
				t[start + j] =
					sym[syms[i]] + (tail << 8 | tail);
		}
	}
	return 0;
}

/* Each symbol's entry, the fixed code's tables, the reversed bytes. */
static void setup(void)
{
	static const uint16_t len_base[29] = {
		3,  4,	5,  6,	7,  8,	9,  10, 11,  13,  15,  17,  19,	 23, 27,
		31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
	static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1,
					      1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
					      4, 4, 4, 4, 5, 5, 5, 5, 0};
	static const uint16_t dist_base[30] = {
		1,    2,    3,	  4,	5,    7,    9,	  13,	 17,	25,
		33,   49,   65,	  97,	129,  193,  257,  385,	 513,	769,
		1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
	uint8_t lens[LENS_ROOM] = {0};
	unsigned count[MAX_BITS + 1] = {0}, i, b;

	for (i = 0; i < 256; i++) {
		unsigned r = 0;

		for (b = 0; b < 8; b++)
			r |= ((i >> b) & 1) << (7 - b);
		k.rev[i] = (uint8_t)r;
		k.lit[i] = LIT | i << 16;
	}
	k.lit[256] = EOB;
	for (i = 0; i < 29; i++) /* the extra bits go into the bits taken */
		k.lit[257 + i] = (uint32_t)len_base[i] << 16 | len_extra[i];
	k.lit[286] = k.lit[287] = BAD;
	for (i = 0; i < 30; i++)
		k.dist[i] =
			(uint32_t)dist_base[i] << 16 | (i < 4 ? 0 : i / 2 - 1);
	k.dist[30] = k.dist[31] = D_BAD;
	for (i = 0; i < 16; i++)
		k.pre[i] = i << 16;
	k.pre[16] = P_PREV | 3u << 16 | 2;  /* 3-6 times the last length */
	k.pre[17] = P_ZERO | 3u << 16 | 3;  /* 3-10 zeros */
	k.pre[18] = P_ZERO | 11u << 16 | 7; /* 11-138 zeros */

	/* RFC 1951 3.2.6: 8, 9, 7 and 8 bits for literals and lengths, 5
	 * for every distance.  Complete codes: build() cannot fail. */
	for (i = 0; i < 288; i++)
		lens[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
	count[7] = 24;
	count[8] = 152;
	count[9] = 112;
	build(k.fixed_lit, 1u << LIT_BITS, LIT_BITS, lens, 288, count, k.lit,
	      BAD, SUB);
	memset(lens, 0, sizeof(lens));
	memset(count, 0, sizeof(count));
	memset(lens, 5, 32);
	count[5] = 32;
	build(k.fixed_dist, 1u << DIST_BITS, DIST_BITS, lens, 32, count, k.dist,
	      D_BAD, D_SUB);
}

/* ------------------------------------------------------------------ */
/* Bits                                                                */

/* At least 56 bits in the buffer; 8 bytes of input must be left.  n is
 * 63 at most here: fill_slow, which may leave 64, only runs once fewer
 * than 8 bytes are left, and then this never again (but after a stored
 * block, which empties the buffer). */
static inline void fill_fast(struct bits *b)
{
	uint64_t w;

	memcpy(&w, b->p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	b->buf |= w << b->n;
	b->p += (63 - b->n) >> 3;
	b->n |= 56;
}

/* At least 57 bits, a byte at a time: zeros past the input's end. */
static inline void fill_slow(struct bits *b)
{
	while (b->n <= 56) {
		if (b->p < b->end)
			b->buf |= (uint64_t)*b->p++ << b->n;
		else
			b->over++;
		b->n += 8;
	}
}

static inline void fill(struct bits *b)
{
	if (b->end - b->p >= 8)
		fill_fast(b);
	else
		fill_slow(b);
}

static inline void drop(struct bits *b, unsigned n)
{
	b->buf >>= n & 63;
	b->n -= n;
}

/* Whether bits past the input's end were taken. */
static inline int overrun(const struct bits *b)
{
	return b->over * 8 > b->n;
}

/* ------------------------------------------------------------------ */
/* Blocks                                                              */

/* A stored block after its 3 header bits: to the next byte, LEN, NLEN
 * (LEN's complement), then LEN bytes as they are. */
static int stored(struct bits *b, uint8_t **op, uint8_t *end)
{
	unsigned len, nlen;

	drop(b, b->n & 7);
	fill(b);
	len = (unsigned)LOW(b->buf, 16);
	nlen = (unsigned)LOW(b->buf >> 16, 16);
	drop(b, 32);
	if (overrun(b) || len != (~nlen & 0xffff))
		return -EINVAL;
	/* The whole bytes still in the buffer go back to the input. */
	b->p -= b->n / 8 - b->over;
	b->buf = 0;
	b->n = b->over = 0;
	if ((size_t)(b->end - b->p) < len)
		return -EINVAL;
	if ((size_t)(end - *op) < len)
		return -EFBIG;
	memcpy(*op, b->p, len);
	*op += len;
	b->p += len;
	return 0;
}

/*
 * A dynamic block's header after its 3 bits: how many codes of each kind,
 * the precode's lengths, the code lengths it codes (runs of zeros and
 * repeats of the last one included), then the block's two tables.
 */
static int header(struct inflater *z, struct bits *b)
{
	/* The order in which the precode's lengths come (RFC 1951 3.2.7). */
	static const uint8_t order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
					  11, 4,  12, 3, 13, 2, 14, 1, 15};
	unsigned nlit, ndist, npre, n, i, v, rep;
	/* Lengths of each size: literals/lengths at 0-15, distances 16-31. */
	unsigned count[2 * (MAX_BITS + 1)] = {0}, pcount[MAX_BITS + 1] = {0};
	uint8_t plens[64] = {0}, dlens[64] = {0};
	int rc;

	/* The block's top-up left at least 53 bits: 14 are here. */
	nlit = 257 + (unsigned)LOW(b->buf, 5);
	ndist = 1 + (unsigned)LOW(b->buf >> 5, 5);
	npre = 4 + (unsigned)LOW(b->buf >> 10, 4);
	drop(b, 14);
	if (nlit > 286 || ndist > 30)
		return -EINVAL;
	for (i = 0; i < npre; i++) { /* 3 bits each: at most 57 */
		if (b->n < 3)
			fill(b);
		v = (unsigned)LOW(b->buf, 3);
		plens[order[i]] = (uint8_t)v;
		pcount[v]++;
		drop(b, 3);
	}
	pcount[0] = 0;
	/* zlib takes no incomplete precode, not even a single code. */
	if (unused_codes(pcount) != 0)
		return -EINVAL;
	build(z->pre, 1u << PRE_BITS, PRE_BITS, plens, 19, pcount, k.pre, BAD,
	      SUB);

	n = nlit + ndist;
	for (i = 0; i < n;) {
		uint32_t e;

		if (b->n < 2 * PRE_BITS) /* a code and its extra bits */
			fill(b);
		e = z->pre[LOW(b->buf, PRE_BITS)];
		if (!(e & (P_PREV | P_ZERO))) {
			v = e >> 16 & 0xff;
			drop(b, TAKES(e));
			count[(i >= nlit) * (MAX_BITS + 1) + v]++;
			z->lens[i++] = (uint8_t)v;
			continue;
		}
		rep = (e >> 16 & 0xff) +
		      (unsigned)(LOW(b->buf, TAKES(e)) >> CODE_BITS(e));
		drop(b, TAKES(e));
		v = 0;
		if (e & P_PREV) {
			if (i == 0)
				return -EINVAL;
			v = z->lens[i - 1];
		}
		if (rep > n - i)
			return -EINVAL;
		memset(z->lens + i, (int)v, rep);
		if (i < nlit && i + rep > nlit) { /* a run across the two */
			count[v] += nlit - i;
			count[MAX_BITS + 1 + v] += i + rep - nlit;
		} else {
			count[(i >= nlit) * (MAX_BITS + 1) + v] += rep;
		}
		i += rep;
	}
	if (overrun(b) || z->lens[256] == 0)
		return -EINVAL;
	/* Each set of lengths zero-padded for build(). */
	memcpy(dlens, z->lens + nlit, ndist);
	memset(z->lens + nlit, 0, LENS_ROOM - nlit);
	rc = build(z->lit, LIT_CAP, LIT_BITS, z->lens, nlit, count, k.lit, BAD,
		   SUB);
	if (!rc)
		rc = build(z->dist, DIST_CAP, DIST_BITS, dlens, ndist,
			   count + MAX_BITS + 1, k.dist, D_BAD, D_SUB);
	return rc;
}

/*
 * A match of `length` bytes (3-258) from `dist` (1-32,768) bytes back,
 * to op.  A distance of 8 or more is copied 40 bytes at a time, a
 * shorter one 8: it may write up to 280 bytes from op, the fast loop's
 * room.
 */
static inline void copy_match(uint8_t *op, size_t dist, size_t length)
{
	/* For a distance under 8: the first multiple of it that is 8 or
	 * more, where the bytes repeat too. */
	static const uint8_t period[8] = {0, 0, 8, 9, 8, 10, 12, 14};
	const uint8_t *src = op - dist;
	uint8_t *end = op + length;
	size_t back;
	int i;

	if (dist >= 8) { /* each word read is whole before it is read */
		do {
			for (i = 0; i < 5; i++)
				memcpy(op + 8 * i, src + 8 * i, 8);
			op += 40;
			src += 40;
		} while (op < end);
	} else if (dist == 1) {
		memset(op, *src, length);
	} else {
		for (i = 0; i < 8; i++)
			op[i] = src[i];
		back = period[dist];
		for (op += 8; op < end; op += 8)
			memcpy(op, op - back, 8);
	}
}

/* A length's or distance's value: its entry's base, plus the extra bits
 * after its code, all of which it takes from the buffer. */
static inline size_t take_value(struct bits *b, uint32_t e)
{
	size_t v = (e >> 16) + (size_t)(LOW(b->buf, TAKES(e)) >> CODE_BITS(e));

	drop(b, TAKES(e));
	return v;
}

/* The distance whose code starts the buffer (at most 28 bits), into
 * *dist.  0, or -EINVAL for a code that is none. */
static inline int take_dist(struct bits *b, const uint32_t *dt, size_t *dist)
{
	uint32_t e = dt[LOW(b->buf, DIST_BITS)];

	if (e & D_SUB) {
		drop(b, TAKES(e));
		e = dt[(e >> 16) + LOW(b->buf, CODE_BITS(e))];
	}
	if (e & D_BAD)
		return -EINVAL;
	*dist = take_value(b, e);
	return 0;
}

/* The subtable entry of the literal/length code whose root entry, e,
 * the buffer has just given up. */
static inline uint32_t sub_entry(const struct bits *b, const uint32_t *lt,
				 uint32_t e)
{
	return lt[(e >> 16 & 0xfff) + LOW(b->buf, CODE_BITS(e))];
}

/*
 * The codes of one block up to its end-of-block, from *bp's bits into
 * *opp, with the tables lt (literals, lengths) and dt (distances).  0,
 * -EINVAL or -EFBIG.  Inlined into each build of the decoder.
 */
static inline __attribute__((always_inline)) int
codes(struct bits *bp, const uint32_t *lt, const uint32_t *dt, uint8_t *out,
      uint8_t **opp, uint8_t *end)
{
	struct bits b = *bp;
	uint8_t *op = *opp;
	size_t length, dist;
	uint32_t e = 0, lit;

	if (b.end - b.p >= 16 && (size_t)(end - op) >= FAST_ROOM) {
		fill_fast(&b);
		e = lt[LOW(b.buf, LIT_BITS)];
	}
	/* e is looked up, with at least 26 bits in the buffer then. */
	while (b.end - b.p >= 16 && (size_t)(end - op) >= FAST_ROOM) {
		fill_fast(&b);
		if (e & LIT) {
			drop(&b, TAKES(e));
			lit = e >> 16;
			e = lt[LOW(b.buf, LIT_BITS)];
			*op++ = (uint8_t)lit;
			if (e & LIT) {
				drop(&b, TAKES(e));
				lit = e >> 16;
				e = lt[LOW(b.buf, LIT_BITS)];
				*op++ = (uint8_t)lit;
			}
			continue;
		}
		if (e & SUB) {
			drop(&b, TAKES(e));
			e = sub_entry(&b, lt, e);
			if (e & LIT) {
				drop(&b, TAKES(e));
				lit = e >> 16;
				e = lt[LOW(b.buf, LIT_BITS)];
				*op++ = (uint8_t)lit;
				continue;
			}
		}
		if (e & (EOB | BAD)) {
			if (e & BAD)
				return -EINVAL;
			drop(&b, TAKES(e));
			goto done;
		}
		/* A length (at most 20 bits), then its distance (28). */
		length = take_value(&b, e);
		if (take_dist(&b, dt, &dist) || dist > (size_t)(op - out))
			return -EINVAL;
		/* The next code is looked up while the match is copied. */
		fill_fast(&b);
		e = lt[LOW(b.buf, LIT_BITS)];
		copy_match(op, dist, length);
		op += length;
	}

	/* Near the end of the input or the output: a code at a time. */
	for (;;) {
		fill(&b);
		e = lt[LOW(b.buf, LIT_BITS)];
		if (e & SUB) {
			drop(&b, TAKES(e));
			e = sub_entry(&b, lt, e);
		}
		if (e & BAD)
			return -EINVAL;
		if (e & LIT) {
			if (op == end)
				return -EFBIG;
			drop(&b, TAKES(e));
			*op++ = (uint8_t)(e >> 16);
			if (overrun(&b))
				return -EINVAL;
			continue;
		}
		if (e & EOB) {
			drop(&b, TAKES(e));
			break;
		}
		length = take_value(&b, e);
		fill(&b);
		if (take_dist(&b, dt, &dist) || overrun(&b) ||
		    dist > (size_t)(op - out))
			return -EINVAL;
		if (length > (size_t)(end - op))
			return -EFBIG;
		for (; length; length--, op++)
			*op = *(op - dist);
	}
done:
	if (overrun(&b))
		return -EINVAL;
	*bp = b;
	*opp = op;
	return 0;
}

/* The whole stream, block by block (inflate_raw). */
static inline __attribute__((always_inline)) int
decode(struct inflater *z, uint8_t *out, size_t cap, size_t *out_len,
       const uint8_t *in, size_t in_len, size_t *in_used)
{
	struct bits b = {0, 0, 0, in, in + in_len};
	uint8_t *op = out, *end = out + cap;
	unsigned final, type;
	int rc;

	do {
		fill(&b);
		final = b.buf & 1;
		type = b.buf >> 1 & 3;
		drop(&b, 3);
		switch (type) {
		case 0:
			rc = stored(&b, &op, end);
			break;
		case 1:
			rc = codes(&b, k.fixed_lit, k.fixed_dist, out, &op,
				   end);
			break;
		case 2:
			rc = header(z, &b);
			if (!rc)
				rc = codes(&b, z->lit, z->dist, out, &op, end);
			break;
		default:
			rc = -EINVAL;
		}
		if (rc)
			return rc;
	} while (!final);
	if (overrun(&b))
		return -EINVAL;
	*out_len = (size_t)(op - out);
	*in_used = (size_t)(b.p - in) + b.over - b.n / 8;
	return 0;
}

static int decode_plain(struct inflater *z, uint8_t *out, size_t cap,
			size_t *out_len, const uint8_t *in, size_t in_len,
			size_t *in_used)
{
	return decode(z, out, cap, out_len, in, in_len, in_used);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("bmi2"))) static int
decode_bmi2(struct inflater *z, uint8_t *out, size_t cap, size_t *out_len,
	    const uint8_t *in, size_t in_len, size_t *in_used)
{
	return decode(z, out, cap, out_len, in, in_len, in_used);
}
#endif

/* ------------------------------------------------------------------ */

int inflate_new(struct inflater **out)
{
	struct inflater *z;

	pthread_once(&k.once, setup);
	z = malloc(sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->decode = decode_plain;
#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("bmi2"))
		z->decode = decode_bmi2;
#endif
	*out = z;
	return 0;
}

void inflate_free(struct inflater *z)
{
	free(z);
}

void inflate_plain(struct inflater *z)
{
	z->decode = decode_plain;
}

int inflate_raw(struct inflater *z, void *out, size_t cap, size_t *out_len,
		const void *in, size_t in_len, size_t *in_used)
{
	return z->decode(z, out, cap, out_len, in, in_len, in_used);
}
