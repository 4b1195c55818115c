/*
 * test_zipdir.c - zipdir's verdict held to libzip's: whatever zipdir
 * calls clean, libzip (ZIP_CHECKCONS) must open and describe entry for
 * entry as the records do (name, sizes, CRC-32, method, not encrypted).
 * Over the fixture JARs, and over them changed: every byte of the end
 * record, of the central records and of the local headers set to other
 * values, one at a time; random bytes anywhere; and the shapes zipdir
 * leaves to libzip on purpose.  Run from tests/.
 */
#include "t.h"
#include "zipdir.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define JARS "fixtures/jars/"

/* Reads from memory, for zipdir_check(). */
struct mem {
	const uint8_t *b;
	size_t n;
	size_t reads;
};

static int mem_read(void *ctx, void *buf, size_t n, uint64_t off, size_t *got)
{
	struct mem *m = ctx;

	m->reads++;
	*got = 0;
	if (off >= m->n)
		return 0;
	*got = n < m->n - off ? n : (size_t)(m->n - off);
	memcpy(buf, m->b + off, *got);
	return 0;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/*
 * Each local header of an archive whose records are plain (rec[]), judged
 * from bytes in memory (zipdir_local) with as many bytes as a reader may
 * happen to hold: too few to tell, or the verdict of reading it whole
 * (zipdir_local_read); all of them good exactly when zipdir_check() said
 * clean.
 */
static void locals_held(const uint8_t *b, size_t n, const struct zipdir *z,
			const uint32_t *rec, int clean)
{
	static uint8_t buf[ZIPDIR_LOCAL_MAX];
	struct mem m = {b, n, 0};
	size_t cuts[8], k, len, left;
	int all = 1, ok = 1, whole, r;
	uint64_t i, off;
	uint8_t *cut;

	for (i = 0; i < z->count && ok; i++) {
		const uint8_t *h = b + z->cd_off + rec[i];

		off = get32(h + 42);
		whole = zipdir_local_read(h, buf, mem_read, &m);
		ok = whole == 0 || whole == 1;
		all &= whole == 1;
		if (off > n)
			continue;
		left = n - (size_t)off;
		len = 30 + get16(h + 28);
		if (len <= left)
			len += get16(b + off + 28);
		cuts[0] = 0, cuts[1] = 29, cuts[2] = len - 1, cuts[3] = len;
		cuts[4] = len + 1, cuts[5] = 30 + get16(h + 28);
		cuts[6] = cuts[5] - 1, cuts[7] = left;
		for (k = 0; k < 8 && ok; k++) {
			if (cuts[k] > left)
				continue;
			/* Its own block, for the sanitizer to catch a read
			 * past what it was given. */
			cut = malloc(cuts[k] ? cuts[k] : 1);
			if (!cut) {
				ok = 0;
				break;
			}
			memcpy(cut, b + off, cuts[k]);
			r = zipdir_local(h, cut, cuts[k]);
			free(cut);
			/* Whole, it tells; cut short, it may not. */
			ok = r == whole || (r == -1 && cuts[k] < len);
			if (!ok)
				fprintf(stderr,
					"  entry %llu, %zu bytes: %d, "
					"whole %d\n",
					(unsigned long long)i, cuts[k], r,
					whole);
		}
	}
	T_CHECK(ok);
	if (ok)
		T_CHECK(all == clean);
}

/* zipdir's verdict on n bytes at b: 1 clean (the records' offsets into
 * rec, at least `cap` of them), 0 unsure. */
static int judge(const uint8_t *b, size_t n, uint32_t **rec, struct zipdir *z)
{
	size_t t = n < ZIPDIR_TAIL ? n : ZIPDIR_TAIL;
	struct mem m = {b, n, 0};
	int rc;

	*rec = NULL;
	if (!zipdir_end(b + n - t, t, n, z))
		return 0;
	*rec = malloc(z->count * sizeof(**rec));
	if (!*rec)
		return 0;
	rc = zipdir_check(b + z->cd_off, z, *rec, mem_read, &m);
	T_CHECK(rc == 0 || rc == 1);
	if (zipdir_records(b + z->cd_off, z, *rec))
		locals_held(b, n, z, *rec, rc);
	else
		T_CHECK(rc == 0);
	return rc == 1;
}

/* libzip's open of n bytes at b, as jar.c opens: NULL if refused (its
 * code into *ze). */
static zip_t *libzip_open(const uint8_t *b, size_t n, int *ze)
{
	zip_error_t e;
	zip_source_t *s;
	zip_t *za;

	zip_error_init(&e);
	s = zip_source_buffer_create(b, n, 0, &e);
	za = s ? zip_open_from_source(s, ZIP_CHECKCONS | ZIP_RDONLY, &e) : NULL;
	if (!za && s)
		zip_source_free(s);
	*ze = zip_error_code_zip(&e);
	zip_error_fini(&e);
	return za;
}

static size_t nclean, nunsure;

/*
 * zipdir on b, held to libzip: 1 clean (and libzip agrees, checked), 0
 * unsure.  `what` names the case when they disagree.
 */
static int held(const char *what, const uint8_t *b, size_t n)
{
	struct zipdir z;
	uint32_t *rec;
	zip_t *za;
	int ze, clean = judge(b, n, &rec, &z), ok = 1;
	uint64_t i;

	za = libzip_open(b, n, &ze);
	if (clean) {
		nclean++;
		/* Duplicate names are the caller's to refuse. */
		ok = za || ze == ZIP_ER_EXISTS;
		for (i = 0; za && ok && i < z.count; i++) {
			const uint8_t *h = b + z.cd_off + rec[i];
			const char *name = zip_get_name(za, i, ZIP_FL_ENC_RAW);
			zip_stat_t st;

			zip_stat_init(&st);
			ok = (zip_int64_t)z.count ==
				     zip_get_num_entries(za, 0) &&
			     name && strlen(name) == get16(h + 28) &&
			     !memcmp(name, h + 46, get16(h + 28)) &&
			     !zip_stat_index(za, i, ZIP_FL_ENC_RAW, &st) &&
			     st.size == get32(h + 24) &&
			     st.comp_size == get32(h + 20) &&
			     st.crc == get32(h + 16) &&
			     st.comp_method == get16(h + 10) &&
			     st.encryption_method == ZIP_EM_NONE;
		}
		T_CHECK(ok);
		if (!ok)
			fprintf(stderr, "  zipdir: clean, libzip: %s %d (%s)\n",
				za ? "other entries" : "refused", ze, what);
	} else {
		nunsure++;
	}
	if (za)
		zip_discard(za);
	free(rec);
	return clean;
}

/* Each value that a byte is set to, in turn. */
static const int twists[] = {0x00, 0xff, 0x01, 0x80, 0x7f, 0x20, 'P', -1};

/* Every byte of [from, to) of b set to each twist (and flipped by one),
 * one at a time, each held to libzip; the clean outcomes counted. */
static size_t twist_range(const char *what, uint8_t *b, size_t n, size_t from,
			  size_t to)
{
	size_t i, k, clean = 0;
	uint8_t old;

	for (i = from; i < to && i < n; i++) {
		old = b[i];
		for (k = 0; twists[k] >= 0; k++) {
			if (old == (uint8_t)twists[k])
				continue;
			b[i] = (uint8_t)twists[k];
			clean += (size_t)held(what, b, n);
		}
		b[i] = old ^ 1;
		clean += (size_t)held(what, b, n);
		b[i] = old;
	}
	return clean;
}

static uint8_t *jar(const char *name, size_t *n)
{
	char path[256];

	snprintf(path, sizeof(path), JARS "%s", name);
	return (uint8_t *)t_slurp(path, n);
}

/*
 * Every fixture: the plain ones clean, the odd ones left to libzip.
 * (prefixed-adjusted.jar is clean: libzip opens it as well, offsets
 * and all; a prefix is jar.c's to refuse, whoever opened the archive.)
 */
static void test_fixtures(void)
{
	static const char *const unsure[] = {
		"comment.jar",	 "zip64.jar",
		"prefixed.jar",	 "not-zip.jar",
		"truncated.jar", "truncated-tail.jar",
		"empty-zip.jar", "empty.jar",
		"unicode.jar",	 NULL};
	DIR *d = opendir(JARS);
	struct dirent *de;
	size_t n, k, nfix = 0, nclean_fix = 0;
	uint8_t *b;
	int clean;

	T_CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		if (!strstr(de->d_name, ".jar"))
			continue;
		b = jar(de->d_name, &n);
		T_CHECK(b != NULL);
		if (!b)
			continue;
		clean = held(de->d_name, b, n);
		nfix++;
		nclean_fix += (size_t)clean;
		for (k = 0; unsure[k]; k++)
			if (!strcmp(de->d_name, unsure[k]) && clean) {
				T_CHECK(!clean);
				fprintf(stderr, "  %s: clean\n", de->d_name);
			}
		if (!strcmp(de->d_name, "mongodb.jar") ||
		    !strcmp(de->d_name, "stored.jar") ||
		    !strcmp(de->d_name, "dup.jar") ||
		    !strcmp(de->d_name, "bomb.jar"))
			T_INTEQ(clean, 1);
		free(b);
	}
	if (d)
		closedir(d);
	T_CHECK(nfix >= 30);
	T_CHECK(nclean_fix >= 20);
}

/*
 * Every byte of the end record, of each central record and of each local
 * header (fixed parts, names and extra fields) of a few fixtures, changed
 * one at a time: never clean where libzip disagrees, still clean where a
 * byte libzip ignores changed (an attribute, the version made by).
 */
static void test_every_header_byte(void)
{
	static const char *const names[] = {"mongodb.jar", "stored.jar",
					    "multi-release.jar", NULL};
	size_t n, k, p, end, clean;
	struct zipdir z;
	uint8_t *b;

	for (k = 0; names[k]; k++) {
		b = jar(names[k], &n);
		T_CHECK(b != NULL);
		if (!b)
			continue;
		T_CHECK(zipdir_end(b + n - (n < ZIPDIR_TAIL ? n : ZIPDIR_TAIL),
				   n < ZIPDIR_TAIL ? n : ZIPDIR_TAIL, n, &z));
		clean = twist_range(names[k], b, n, n - 22, n);
		T_INTEQ(clean, 0); /* every end-record byte matters */
		clean = 0;
		end = (size_t)(z.cd_off + z.cd_size);
		for (p = (size_t)z.cd_off; p + 46 <= end;) {
			size_t len = 46u + get16(b + p + 28) +
				     get16(b + p + 30) + get16(b + p + 32);
			size_t loc = get32(b + p + 42);

			clean += twist_range(names[k], b, n, p, p + len);
			/* Its local header, and a little of the data. */
			twist_range(names[k], b, n, loc,
				    loc + 30 + get16(b + loc + 26) +
					    get16(b + loc + 28) + 4);
			p += len;
		}
		/* Made by, attributes, disk: libzip reads none of them. */
		T_CHECK(clean > 0);
		free(b);
	}
	T_CHECK(nclean > 0 && nunsure > 0);
}

/* Random bytes anywhere, a few at a time, seeded: held all the same. */
static void test_random_changes(void)
{
	static const char *const names[] = {"mongodb.jar", "dup.jar",
					    "stored.jar", NULL};
	unsigned seed = 12345, round, j, k;
	size_t n;
	uint8_t *b, *c;

	for (k = 0; names[k]; k++) {
		b = jar(names[k], &n);
		c = b ? malloc(n) : NULL;
		T_CHECK(c != NULL);
		if (!c) {
			free(b);
			continue;
		}
		for (round = 0; round < 3000; round++) {
			memcpy(c, b, n);
			for (j = 0; j < 1 + round % 4; j++) {
				seed = seed * 1103515245u + 12345u;
				c[(seed >> 8) % n] = (uint8_t)(seed >> 24);
			}
			held(names[k], c, n);
		}
		free(c);
		free(b);
	}
}

/* Where entry 0 has its central record and local header, in b. */
static void first_entry(const uint8_t *b, size_t n, size_t *cen, size_t *loc)
{
	*cen = get32(b + n - 22 + 16);
	*loc = get32(b + *cen + 42);
}

/* mongodb.jar (*n bytes) and, in *c, room for `copies` of it and `more`
 * bytes; NULL (both freed) when either is missing. */
static uint8_t *with_room(size_t *n, size_t copies, size_t more, uint8_t **c)
{
	uint8_t *b = jar("mongodb.jar", n);

	*c = b ? malloc(copies * *n + more) : NULL;
	T_CHECK(*c != NULL);
	if (!*c) {
		free(b);
		return NULL;
	}
	return b;
}

/* Shapes that libzip opens and zipdir leaves to it, and one it takes. */
static void test_shapes(void)
{
	size_t n, cen, loc;
	uint8_t *b, *c;

	b = with_room(&n, 1, 64, &c);
	if (!b)
		return;
	first_entry(b, n, &cen, &loc);
	T_INTEQ(held("plain", b, n), 1);
	/* A data descriptor flagged, the local sizes and CRC zero. */
	memcpy(c, b, n);
	c[cen + 8] |= 8;
	c[loc + 6] |= 8;
	memset(c + loc + 14, 0, 12);
	T_INTEQ(held("descriptor", c, n), 1);
	/* Flagged, but the local sizes not zero and not equal: libzip
	 * refuses it, so it is unsure. */
	c[loc + 18] = 1;
	T_INTEQ(held("descriptor, sizes", c, n), 0);
	/* Trailing bytes after the end record. */
	memcpy(c, b, n);
	memset(c + n, 0, 8);
	T_INTEQ(held("trailing", c, n + 8), 0);
	/* A comment, as some build tools leave: clean. */
	memcpy(c, b, n);
	put16(c + n - 2, 3);
	memcpy(c + n, "abc", 3);
	T_INTEQ(held("comment", c, n + 3), 1);
	/* Its length one short of the bytes after the record, or one
	 * over: libzip refuses both (ZIP_CHECKCONS); unsure. */
	put16(c + n - 2, 2);
	T_INTEQ(held("comment, short", c, n + 3), 0);
	put16(c + n - 2, 4);
	T_INTEQ(held("comment, long", c, n + 3), 0);
	/* Another end-record signature in it: libzip weighs it too. */
	put16(c + n - 2, 5);
	memcpy(c + n, "PK\5\6x", 5);
	T_INTEQ(held("comment, signature", c, n + 5), 0);
	/* A local version needed above the central one. */
	memcpy(c, b, n);
	put16(c + loc + 4, get16(b + cen + 6) + 1);
	T_INTEQ(held("version", c, n), 0);
	/* A non-ASCII name, in both headers: libzip takes it as UTF-8. */
	memcpy(c, b, n);
	c[cen + 46] = 0xc3;
	c[cen + 47] = 0xa9;
	c[loc + 30] = 0xc3;
	c[loc + 31] = 0xa9;
	T_INTEQ(held("utf-8", c, n), 0);
	/* The version made by: libzip ignores it, so does zipdir. */
	memcpy(c, b, n);
	put16(c + cen + 4, 0x0314);
	T_INTEQ(held("made by", c, n), 1);
	free(c);
	free(b);
}

/*
 * Archive comments: the longest there can be, of every byte value; each
 * byte of the end record and of a short comment changed one at a time;
 * a comment that ends with the first bytes of a signature.
 */
static void test_comments(void)
{
	size_t n, i, clean;
	uint8_t *b, *c;

	b = with_room(&n, 1, 65535, &c);
	if (!b)
		return;
	memcpy(c, b, n);
	put16(c + n - 2, 65535);
	for (i = 0; i < 65535; i++)
		c[n + i] = (uint8_t)(i * 7 + (i >> 8));
	/* (no "PK\5\6" in that sequence) */
	T_INTEQ(held("comment, 65535 bytes", c, n + 65535), 1);
	memcpy(c, b, n);
	put16(c + n - 2, 16);
	memcpy(c + n, "PK\3\4 \0\xff\xfePK\1\2 end", 16);
	T_INTEQ(held("comment, other signatures", c, n + 16), 1);
	clean = twist_range("comment, twisted", c, n + 16, n - 22, n + 16);
	T_CHECK(clean > 0);
	/* The signature's first bytes ending the file, at the end of a
	 * comment: no signature. */
	memcpy(c, b, n);
	put16(c + n - 2, 3);
	memcpy(c + n, "PK\5", 3);
	T_INTEQ(held("comment, part of a signature", c, n + 3), 1);
	free(c);
	free(b);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

/*
 * A second end record that libzip weighs and prefers: between the entries
 * and the directory, a directory of two entries (the first and the last,
 * so its span is the whole archive's) and an end record whose comment
 * runs to the end of the file.  libzip keeps the first candidate of equal
 * span, and so sees two entries where the last record counts them all:
 * zipdir must not call it clean.
 */
static void test_second_end_record(void)
{
	size_t n, cd, size, p, first = 0, last = 0, len, lfirst = 0, llast = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	uint8_t *b, *c;
	size_t o;

	b = with_room(&n, 2, 64, &c);
	if (!b)
		return;
	cd = get32(b + n - 22 + 16);
	size = get32(b + n - 22 + 12);
	for (p = cd; p < cd + size; p += len) {
		uint64_t off = get32(b + p + 42);
		uint64_t end = off + get32(b + p + 20) + get16(b + p + 28) + 30;

		len = 46u + get16(b + p + 28) + get16(b + p + 30) +
		      get16(b + p + 32);
		if (off < lo) {
			lo = off;
			first = p;
			lfirst = len;
		}
		if (end > hi) {
			hi = end;
			last = p;
			llast = len;
		}
	}
	T_CHECK(first != last);
	memcpy(c, b, cd);
	o = cd;
	memcpy(c + o, b + first, lfirst);
	memcpy(c + o + lfirst, b + last, llast);
	o += lfirst + llast;
	memset(c + o, 0, 22);
	memcpy(c + o, "PK\5\6", 4);
	put16(c + o + 8, 2);
	put16(c + o + 10, 2);
	put32(c + o + 12, (uint32_t)(lfirst + llast));
	put32(c + o + 16, (uint32_t)cd);
	put16(c + o + 20, (unsigned)(size + 22));
	o += 22;
	memcpy(c + o, b + cd, size);
	memcpy(c + o + size, b + n - 22, 22);
	put32(c + o + size + 16, (uint32_t)o);
	o += size + 22;
	T_INTEQ(held("second end record", c, o), 0);
	free(c);
	free(b);
}

int main(void)
{
	T_RUN(test_fixtures);
	T_RUN(test_shapes);
	T_RUN(test_comments);
	T_RUN(test_second_end_record);
	T_RUN(test_every_header_byte);
	T_RUN(test_random_changes);
	fprintf(stderr, "zipdir: %zu clean, %zu unsure\n", nclean, nunsure);
	return T_DONE();
}
