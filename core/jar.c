/*
 * jar.c - the JAR inspector: what a factory JAR offers, read, never run.
 *
 * One inspection is one `struct insp`.  It reads the archive's central
 * directory, has the archive judged, checks that the file is a zip from
 * its first byte on, and maps every raw entry name to its index in a hash
 * table (duplicates are refused there too).
 *
 * libzip, with ZIP_CHECKCONS, is the judge of whether the archive is
 * valid.  An archive of the plain shape that jar tools write is judged by
 * zipdir instead, which accepts only what libzip would, described as
 * libzip would describe it (zipdir.h; test_zipdir holds the two to each
 * other), for a tenth of libzip's cost: its directory first, and each
 * local header as a reader reads it anyway, the rest once the walk is
 * over (settle_locals).  One that does not agree with its record undoes
 * the inspection, and libzip judges the archive from the start, as it
 * would have without zipdir (inspect).  Anything else libzip opens,
 * through a zip_source of our own that reads with pread() (so a shared fd
 * keeps its offset, and memory and files take the same path).  To read
 * the entries we keep, for each plain one (stored or deflated, not
 * encrypted) that the judge describes as its record does, where its local
 * header is (build_index); fast_read then checks that header, reads
 * exactly the entry's compressed bytes and inflates them in one call of
 * inflate.c (which refuses what zlib refuses, faster than libdeflate
 * over small streams); libdeflate checks their CRC-32.  Any other entry,
 * and any entry whose bytes do not come out exactly as declared (size,
 * CRC-32), is read by libzip instead (opened only then, if zipdir judged
 * the archive), so every verdict on a damaged entry is libzip's.  Then:
 *
 *   1. the service file is inflated and parsed as ServiceLoader would;
 *   2. each listed factory class is read; its supertypes are walked
 *      depth-first through the JAR's classes (three colours, so a cyclic
 *      hierarchy is reported, not followed forever) to find its kind, and
 *      factoryIdentifier() is resolved as the JVM selects it, then judged
 *      constant or not;
 *   3. the classes the factories name are followed breadth-first through
 *      the JAR; the names the JAR does not hold are the external classes.
 *      The classes the walk is about to take are read and parsed ahead
 *      of it, by its thread and a helper (see "Reading ahead"), and
 *      taken in its order, so the outcome is the same either way.
 *
 * Only the service file and the classes reached are inflated.  Each
 * inflate is counted as it happens (struct jar_limits): no size declared
 * in a header is believed, and a stream that outgrows its declared size is
 * stopped there.  Problems that make a valid zip a useless factory JAR go
 * into the report (`fail`, which returns STOP); only a broken archive,
 * memory and I/O are errors of the call.  libzip's codes become errnos
 * here and nowhere else (zip_errno).
 */
#include "jar.h"

#include "classfile.h"
#include "inflate.h"
#include "store.h"
#include "thread.h"
#include "zipdir.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <libdeflate.h>

/* Returned by helpers once the report holds its error: stop, return 0. */
#define STOP 1

/* Supertype walks recurse: a depth limit above this counts as this. */
#define DEPTH_CEILING 1024

#define ID_METHOD "factoryIdentifier"
#define ID_DESC "()Ljava/lang/String;"
#define STRING_DESC "Ljava/lang/String;"

/* Kind bits: what a class's supertypes make it. */
enum { BIT_CONNECTOR = 1, BIT_FORMAT = 2 };

/* External supertypes that make a factory a connector. */
static const char *const connector_types[] = {
	"org/apache/flink/table/factories/DynamicTableSourceFactory",
	"org/apache/flink/table/factories/DynamicTableSinkFactory",
	"org/apache/flink/table/factories/ManagedTableFactory",
	"org/apache/flink/connector/base/table/AsyncDynamicTableSinkFactory",
	"org/apache/flink/connector/file/table/FileSystemTableFactory",
	NULL};

/* External supertypes that make a factory a format. */
static const char *const format_types[] = {
	"org/apache/flink/table/factories/DeserializationFormatFactory",
	"org/apache/flink/table/factories/SerializationFormatFactory",
	"org/apache/flink/table/factories/DecodingFormatFactory",
	"org/apache/flink/table/factories/EncodingFormatFactory",
	"org/apache/flink/table/factories/FormatFactory",
	"org/apache/flink/connector/file/table/factories/"
	"BulkReaderFormatFactory",
	"org/apache/flink/connector/file/table/factories/"
	"BulkWriterFormatFactory",
	NULL};

/*
 * Generous for real JARs (the largest shaded connectors hold some 50,000
 * entries, a class file is rarely over 1 MiB, a service file a few
 * lines), small enough that a hostile upload costs some tens of MiB of
 * memory (a class's bytes are freed once read) and a second of CPU.
 */
void jar_limits_default(struct jar_limits *lim)
{
	lim->max_entries = 200000;
	lim->max_entry_size = 16u << 20;
	lim->max_inflated = 256u << 20;
	lim->max_classes = 50000;
	lim->max_depth = 64;
	lim->max_service_size = 1u << 20;
}

/* ------------------------------------------------------------------ */
/* A string-keyed hash table: open addressing, keys borrowed.          */

struct slot {
	const char *key; /* NULL = empty */
	uint32_t len;
	uint32_t tag; /* the key's hash, high half: most misses end here */
	uintptr_t val;
};

struct map {
	struct slot *v;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

/* The hashes' seed: one per process, so that no archive can be made to
 * collide its names on purpose (a probe run as long as the table). */
static uint64_t seed;
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void seed_init(void)
{
	uint64_t t;

	if (getentropy(&t, sizeof(t)))
		t = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^
		    (uint64_t)(uintptr_t)&t;
	seed = t | 1;
}

/*
 * Eight bytes at a time, each word folded in with a multiply, then the
 * bits mixed down (the finaliser of MurmurHash3): class names run to
 * dozens of bytes, and a byte at a time (FNV-1a) was 9 % of a shaded
 * JAR's inspection.
 */
static uint64_t hash(const char *s, size_t n)
{
	const uint64_t k = 0x9fb21c651e98df25ull;
	uint64_t h = seed ^ ((uint64_t)n * k), w;

	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (n) {
		w = 0;
		memcpy(&w, s, n);
		h = (h ^ w) * k;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* The slot holding `k`, or the empty slot where it would go. */
static struct slot *map_slot(const struct map *m, const char *k, size_t n,
			     uint64_t h)
{
	uint32_t tag = (uint32_t)(h >> 32);
	size_t i = (size_t)h & (m->cap - 1);

	for (;; i = (i + 1) & (m->cap - 1)) {
		struct slot *s = &m->v[i];

		if (!s->key ||
		    (s->tag == tag && s->len == n && !memcmp(s->key, k, n)))
			return s;
	}
}

/*
 * Make room for `n` keys at once: an archive's entry count is known
 * before its names go in, and doubling 64 slots up to 20,000 entries
 * re-places every key ten times.  0 or -ENOMEM (the table is kept).
 */
static int map_reserve(struct map *m, size_t n)
{
	struct slot *old = m->v;
	size_t ocap = m->cap, cap = 64, i;

	while (cap < n * 2 && cap < SIZE_MAX / 4 / sizeof(*m->v))
		cap *= 2;
	if (cap <= ocap)
		return 0;
	pthread_once(&seed_once, seed_init);
	m->v = calloc(cap, sizeof(*m->v));
	if (!m->v) {
		m->v = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (i = 0; i < ocap; i++)
		if (old[i].key)
			*map_slot(m, old[i].key, old[i].len,
				  hash(old[i].key, old[i].len)) = old[i];
	free(old);
	return 0;
}

/* Double the table (64 slots to start with): it stays at most half full,
 * so probe runs stay short.  On failure the old table is kept. */
static int map_grow(struct map *m)
{
	return map_reserve(m, m->cap ? m->cap : 32);
}

/*
 * The slot holding k, or the empty one where it goes, with its tag and
 * length set (the caller that fills it sets key and val and counts it):
 * one hash for a look-up that may become an insertion.  NULL: no room
 * (ENOMEM, or a key over 4 GiB; names in a zip or a class file are at
 * most 65,535 bytes).
 */
static struct slot *map_place(struct map *m, const char *k, size_t n)
{
	struct slot *s;
	uint64_t h;

	if (n > UINT32_MAX || ((m->n + 1) * 2 > m->cap && map_grow(m)))
		return NULL;
	h = hash(k, n);
	s = map_slot(m, k, n, h);
	if (!s->key) {
		s->len = (uint32_t)n;
		s->tag = (uint32_t)(h >> 32);
	}
	return s;
}

/*
 * Add k -> val unless k is there: 0 added, 1 already there (unchanged),
 * -ENOMEM.  The key's bytes must outlive the map.
 */
static int map_put(struct map *m, const char *k, size_t n, uintptr_t val)
{
	struct slot *s = map_place(m, k, n);

	if (!s)
		return -ENOMEM;
	if (s->key)
		return 1;
	s->key = k;
	s->val = val;
	m->n++;
	return 0;
}

/* 1 and *val (if non-NULL) when k is there, else 0. */
static int map_get(const struct map *m, const char *k, size_t n, uintptr_t *val)
{
	struct slot *s;

	if (!m->cap)
		return 0;
	s = map_slot(m, k, n, hash(k, n));
	if (!s->key)
		return 0;
	if (val)
		*val = s->val;
	return 1;
}

/* Free the table; the keys were borrowed and stay their owners'. */
static void map_release(struct map *m)
{
	free(m->v);
	m->v = NULL;
	m->cap = m->n = 0;
}

/* ------------------------------------------------------------------ */
/* UTF-8 and names.                                                     */

/*
 * Decode one UTF-8 sequence at s[*i] (strict: no overlong forms, no
 * surrogates, nothing above U+10FFFF).  The code point, or -1.
 */
static long utf8_next(const unsigned char *s, size_t n, size_t *i)
{
	unsigned char c = s[*i];
	size_t k, len;
	long cp, min;

	if (c < 0x80) {
		(*i)++;
		return c;
	}
	if ((c & 0xe0) == 0xc0) {
		len = 2, cp = c & 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, cp = c & 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return -1;
	}
	if (n - *i < len)
		return -1;
	for (k = 1; k < len; k++) {
		if ((s[*i + k] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[*i + k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*i += len;
	return cp;
}

/*
 * Could `c` (not ASCII) be part of a Java identifier, or start one?
 * Character.isJavaIdentifierStart/Part decide by Unicode category; we
 * know Latin-1 exactly and the blanks and punctuation that show up in
 * hand-edited files, and take other letters on trust.  C1 controls and
 * other "ignorable" characters that Java tolerates inside a name are
 * refused, as ASCII controls are: no compiler writes them.
 */
static int java_ident_wide(long c, int start)
{
	if (c < 0xa0)
		return 0;
	if (c <= 0xff) {
		if ((c >= 0xa2 && c <= 0xa5) || c == 0xaa || c == 0xb5 ||
		    c == 0xba)
			return 1;
		return c >= 0xc0 && c != 0xd7 && c != 0xf7;
	}
	if (c == 0x1680 || c == 0x3000 || c == 0x3001 || c == 0x3002 ||
	    c == 0xfeff || (c >= 0xfffc && c <= 0xffff))
		return 0;
	if (c >= 0x2000 && c <= 0x206f) /* general punctuation */
		return c == 0x203f || c == 0x2040 || c == 0x2054;
	(void)start;
	return 1;
}

/* Character.isJavaIdentifierStart(): ASCII exactly, the rest above. */
static int java_ident_start(long c)
{
	if (c < 0x80)
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		       c == '_' || c == '$';
	return java_ident_wide(c, 1);
}

/* Character.isJavaIdentifierPart(), less the ignorable controls. */
static int java_ident_part(long c)
{
	return java_ident_start(c) || (c >= '0' && c <= '9') ||
	       (c >= 0x80 && java_ident_wide(c, 0));
}

/* Copy `src` into dst[cap] with `from` replaced by `to`, truncating. */
static void name_copy(char *dst, size_t cap, const char *src, char from,
		      char to)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < cap; i++)
		dst[i] = src[i] == from ? to : src[i];
	dst[i] = '\0';
}

/* A malloc'd copy of `src` with `from` replaced by `to`, or NULL. */
static char *name_dup(const char *src, char from, char to)
{
	size_t n = strlen(src) + 1;
	char *d = malloc(n);

	if (d)
		name_copy(d, n, src, from, to);
	return d;
}

/* ------------------------------------------------------------------ */
/* The service file.                                                   */

/* The names gathered by jar_service_parse(). */
struct names_acc {
	char **v; /* in file order */
	size_t n, alloc;
	struct map seen; /* the names in v, to drop duplicates */
};

/* One line of a service file: add its name to `acc`, if it has one. */
static int service_line(const char *p, size_t n, unsigned line,
			struct names_acc *acc, struct cmfs_err *err)
{
	const unsigned char *u;
	const char *hash_at;
	size_t i = 0;
	char *name;
	long c;
	int rc;

	hash_at = memchr(p, '#', n);
	if (hash_at)
		n = (size_t)(hash_at - p);
	/* String.trim(): everything up to U+0020 goes, at both ends. */
	while (n && (unsigned char)p[0] <= ' ')
		p++, n--;
	while (n && (unsigned char)p[n - 1] <= ' ')
		n--;
	if (!n)
		return 0;
	if (memchr(p, ' ', n) || memchr(p, '\t', n))
		return cmfs_err_set(err, -EINVAL,
				    "line %u: space inside a class name", line);
	u = (const unsigned char *)p;
	while (i < n) {
		size_t at = i;

		c = utf8_next(u, n, &i);
		if (c < 0)
			return cmfs_err_set(err, -EINVAL,
					    "line %u: malformed UTF-8", line);
		if (c == 0xfeff)
			return cmfs_err_set(
				err, -EINVAL,
				"line %u: byte order mark (U+FEFF): "
				"save the file as UTF-8 without BOM",
				line);
		if (at == 0 ? !java_ident_start(c)
			    : !java_ident_part(c) && c != '.')
			return cmfs_err_set(err, -EINVAL,
					    "line %u: illegal provider-class "
					    "name %.*s: U+%04lX at byte %zu",
					    line, (int)(n > 128 ? 128 : n), p,
					    c, at + 1);
	}
	if (acc->n + 1 >= acc->alloc) {
		size_t a = acc->alloc ? acc->alloc * 2 : 8;
		char **v = realloc(acc->v, a * sizeof(*v));

		if (!v)
			return -ENOMEM;
		acc->v = v;
		acc->alloc = a;
	}
	name = malloc(n + 1);
	if (!name)
		return -ENOMEM;
	memcpy(name, p, n);
	name[n] = '\0';
	rc = map_put(&acc->seen, name, n, 0);
	if (rc) { /* a duplicate (ServiceLoader keeps the first) or -ENOMEM */
		free(name);
		return rc < 0 ? rc : 0;
	}
	acc->v[acc->n++] = name;
	return 0;
}

int jar_service_parse(char ***out, size_t *n, const char *data, size_t len,
		      struct cmfs_err *err)
{
	struct names_acc acc = {NULL, 0, 0, {NULL, 0, 0}};
	size_t pos = 0, i;
	unsigned line = 0;
	int rc = 0;

	/*
	 * BufferedReader.readLine(): \n, \r and \r\n end a line, and the
	 * last line needs no terminator.  Splitting on bytes is safe: no
	 * byte of a multi-byte UTF-8 sequence is below 0x80.  One pass, and
	 * a hash set for the duplicates, so megabytes stay fast.
	 */
	while (pos < len && !rc) {
		size_t start = pos;

		line++;
		while (pos < len && data[pos] != '\n' && data[pos] != '\r')
			pos++;
		rc = service_line(data + start, pos - start, line, &acc, err);
		if (pos < len && data[pos] == '\r' && pos + 1 < len &&
		    data[pos + 1] == '\n')
			pos++;
		if (pos < len)
			pos++;
	}
	map_release(&acc.seen);
	if (!rc && !acc.v) {
		acc.v = malloc(sizeof(*acc.v));
		rc = acc.v ? 0 : -ENOMEM;
	}
	if (rc) {
		for (i = 0; i < acc.n; i++)
			free(acc.v[i]);
		free(acc.v);
		return rc;
	}
	acc.v[acc.n] = NULL;
	*out = acc.v;
	*n = acc.n;
	return 0;
}

void jar_names_free(char **names)
{
	char **p;

	if (!names)
		return;
	for (p = names; *p; p++)
		free(*p);
	free(names);
}

/* ------------------------------------------------------------------ */
/* Where the archive's bytes come from: an fd (pread) or memory.       */

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

struct input {
	int fd; /* -1: read from mem */
	const uint8_t *mem;
	uint64_t size;
	uint64_t pos;	   /* the zip source's position */
	zip_error_t error; /* the zip source's last error */
	uint8_t *win;	   /* fd: the read-ahead window, or NULL */
	uint64_t win_off;  /* file offset of win[0] */
	size_t win_len;	   /* bytes valid in win */
};

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

/* What a central directory record says of its entry (cd_record). */
struct cdrec {
	uint64_t size, comp_size, off; /* zip64 values where saturated */
	uint32_t crc;
	uint16_t method;
	const uint8_t *name; /* not '\0'-terminated */
	size_t nl;
};

/*
 * Read record `h` (its lengths checked to fit) into *r: 0 when its entry
 * is plain, as we read entries ourselves: stored or deflated, not
 * encrypted; 1 otherwise, or when its zip64 extra field is malformed.
 * Zip64 sizes and offset come from the zip64 extra field.
 */
static int cd_record(const uint8_t *h, struct cdrec *r)
{
	uint64_t v[3] = {le32(h + 24), le32(h + 20), le32(h + 42)};
	size_t k, len;
	const uint8_t *e, *end, *z;

	memset(r, 0, sizeof(*r)); /* a malformed record leaves no garbage */
	r->nl = le16(h + 28);
	r->name = h + 46;
	e = h + 46 + r->nl;
	end = e + le16(h + 30);
	/* Zip64: size, compressed size, offset, each only if saturated. */
	for (; end - e >= 4; e += 4 + len) {
		len = le16(e + 2);
		if (len > (size_t)(end - e - 4))
			return 1;
		if (le16(e) != 0x0001)
			continue;
		for (z = e + 4, k = 0; k < 3; k++) {
			if (v[k] != 0xffffffffu)
				continue;
			if (z + 8 > e + 4 + len)
				return 1;
			v[k] = le64(z);
			z += 8;
		}
	}
	r->size = v[0];
	r->comp_size = v[1];
	r->off = v[2];
	r->crc = le32(h + 16);
	r->method = le16(h + 10);
	/* Flag bits 0 and 6: encrypted. */
	if (le16(h + 8) & 0x41)
		return 1;
	return r->method == ZIP_CM_DEFLATE || (r->method == ZIP_CM_STORE &&
					       r->size == r->comp_size)
		       ? 0
		       : 1;
}

/* ------------------------------------------------------------------ */
/* The state of one inspection.                                        */

/* An entry that our index does not read: libzip does. */
#define NO_INDEX UINT64_MAX

/* The least fast_read's buffer holds (it grows to the largest entry
 * read, compressed), and the bytes of a local header's extra field that
 * its first read takes on trust. */
#define ZBUF (64u << 10)
#define LOCAL_SLACK 64u

/*
 * Room that an inflated entry's buffer has past its declared size:
 * inflate_raw decodes in its fast loop only while some 300 bytes of
 * output space are left, and a class file is a few KiB (a stream that
 * would outgrow the declared size still fails: its size is checked after).
 */
#define INFLATE_SLACK 512u

enum { WALK_NEW, WALK_ACTIVE, WALK_DONE };

/* A class of the JAR that the inspection has read. */
struct jclass {
	const char *name; /* internal name, "a/b/C", UTF-8 (its record's) */
	uint8_t *bytes; /* the class file; cf borrows it (both NULL once
			 * its names are taken, or if it was read ahead) */
	struct classfile *cf;
	char *super;   /* superclass's internal name, NULL = none */
	char **ifaces; /* superinterfaces, NULL-terminated */
	unsigned walk; /* WALK_*: the kind walk's colour */
	unsigned bits; /* BIT_*, of all its supertypes */
	unsigned mark; /* == insp.gen: seen by the current walk */
	int reached;   /* queued by the reachability walk */
	char **refs;   /* queued: the classes it names (take_refs) */
	size_t nrefs;
	char *refs_err; /* or why they could not be taken */
	int refs_ready; /* refs or refs_err were taken when it was read */
	int named;	/* refs[] hold struct name *s now (ref_name) */
	int inert;	/* and each one external, or a class reached whose
			 * names are taken: the walk has nothing to do */
};

/*
 * Entries that lie side by side are read as one run: an entry joins the
 * run before it when it starts at most RUN_GAP bytes after that run's end
 * and the run stays within RUN_MAX bytes (ahead_runs, prer_read).
 */
#define RUN_MAX (64u << 10)
#define RUN_GAP (4u << 10)

/* What a thread needs to read entries itself (fast_read). */
struct reader {
	const struct input *src; /* the archive, read-only */
	uint64_t cap;		 /* lim.max_entry_size */
	uint8_t *zbuf; /* an entry's local header and compressed bytes */
	size_t zcap;   /* bytes zbuf holds */
	uint8_t *run;  /* a run of entries read at once (ahead_take) */
	size_t rcap;   /* bytes run holds */
	uint64_t roff; /* the file offset of run[0] */
	size_t rlen;   /* bytes of run read; 0 = none */
	size_t most;   /* the longest run read (jar_test.run_most) */
	uint8_t *out;  /* a class inflated (ahead_read) */
	size_t ocap;   /* bytes out holds */
	struct classfile *cf; /* and parsed: its arrays are kept */
	struct inflater *inflater; /* NULL until needed */
};

/*
 * Readers that inspections let go of, kept for the next: an upload of a
 * small JAR read its classes with a new decompressor and buffer each
 * time (their allocation was 4 % of a small upload's CPU).  A few, and
 * none with a buffer grown past POOL_ZCAP.
 */
#define POOL_MAX 4
#define POOL_ZCAP (256u << 10)

static struct {
	pthread_mutex_t mu;
	struct reader v[POOL_MAX];
	unsigned n;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* A pooled reader's buffer and decompressor, if there is one. */
static void reader_take(struct reader *rd)
{
	pthread_mutex_lock(&pool.mu);
	if (pool.n) {
		pool.n--;
		rd->zbuf = pool.v[pool.n].zbuf;
		rd->zcap = pool.v[pool.n].zcap;
		rd->inflater = pool.v[pool.n].inflater;
		if (!rd->cf)
			rd->cf = pool.v[pool.n].cf;
		else
			classfile_free(pool.v[pool.n].cf);
		/* ahead_read may have sized a buffer of its own */
		if (!rd->out) {
			rd->out = pool.v[pool.n].out;
			rd->ocap = pool.v[pool.n].ocap;
		} else {
			free(pool.v[pool.n].out);
		}
	}
	pthread_mutex_unlock(&pool.mu);
}

static void reader_release(struct reader *rd)
{
	free(rd->run);
	rd->run = NULL;
	rd->rcap = rd->rlen = 0;
	if (rd->ocap > POOL_ZCAP) {
		free(rd->out);
		rd->out = NULL;
		rd->ocap = 0;
	}
	if (rd->cf && rd->cf->cp_cap + rd->cf->methods_cap > POOL_ZCAP / 32) {
		classfile_free(rd->cf); /* a giant's arrays stay no longer */
		rd->cf = NULL;
	}
	if (rd->inflater && rd->zcap <= POOL_ZCAP) {
		pthread_mutex_lock(&pool.mu);
		if (pool.n < POOL_MAX) {
			pool.v[pool.n++] = *rd;
			memset(rd, 0, sizeof(*rd));
		}
		pthread_mutex_unlock(&pool.mu);
	}
	free(rd->out);
	classfile_free(rd->cf);
	free(rd->zbuf);
	inflate_free(rd->inflater);
	memset(rd, 0, sizeof(*rd));
}

/*
 * A class of the JAR that the walk will read next, read and parsed ahead
 * of it (reach): the entry as its judge describes it, and then either its
 * bytes and class file (or why they do not parse), or nothing, when the
 * walk must read it itself (libzip's path, or a cap to report).
 */
/* What reading a class ahead leaves for load_class to take. */
struct took {
	char *why;   /* why the class is unusable, or NULL */
	char *super; /* its supertypes (class_check) */
	char **ifaces;
	char **refs; /* the names it names (take_refs) */
	size_t nrefs;
	char *refs_err; /* or why they cannot be taken */
};

/* An entry to read ourselves (fast_read). */
struct spot {
	zip_uint64_t idx;
	uint64_t pos;	    /* its local header's offset, or NO_INDEX */
	const char *name;   /* its raw name, not '\0'-terminated */
	size_t nl;	    /* its length */
	const uint8_t *rec; /* its central record, when its local header is
			     * yet to be judged (insp.lok), else NULL */
	uint8_t *agreed;    /* then set to 1 if it agrees with rec */
};

struct ahead {
	const char *iname;
	struct spot e;
	zip_stat_t st;
	int done;	   /* read: t, whose why may say it is unusable */
	size_t len;	   /* bytes inflated */
	struct took t;
};

struct helper;
struct prer;

/*
 * A class name the walk has met, and all it knows of it: the JAR's class
 * read under it, or that it is external, or where the JAR holds it, or
 * that it is listed to be read ahead.  One table of these, where there
 * were a table for each (classes, external, listed ahead): a wide JAR's
 * walk looks up some 120,000 names, several times each, and each look-up
 * was a cache miss or two.
 */
#define NO_ENTRY UINT64_MAX

struct name {
	struct jclass *jc;  /* read (load_class) */
	zip_uint64_t entry; /* "<key>.class" (map_entries), or NO_ENTRY */
	size_t planned;	    /* ahead[] index + 1 in list `batch`, or 0 */
	unsigned batch;	    /* the list (insp.batch) `planned` is of */
	uint8_t external;   /* not the JAR's: in insp.ext[] */
	char key[];	    /* '\0'-terminated */
};

/* struct names, carved from blocks that live as long as the walk. */
struct name_pool {
	struct name_pool *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
};

/*
 * Neighbours in the file, read with one pread (ahead_take): the ahead[]
 * entries order[first .. first + n - 1], whose local headers and data lie
 * in [off, off + len).  len 0: one entry, read on its own.
 */
struct run {
	size_t first, n;
	uint64_t off;
	size_t len;
};

struct insp {
	zip_t *za;
	struct input *src;
	struct jar_limits lim;
	struct cmfs_err *err;
	struct jar_report *rep;
	struct map entries;	/* raw entry name -> index */
	struct map names;	/* internal name -> struct name * */
	struct name_pool *pool; /* where the struct names live */
	struct jclass **cls; /* every class read, in reading order */
	size_t ncls, acls;
	struct jclass **queue; /* the reachability walk's queue */
	size_t nqueue, aqueue;
	char **ext; /* external classes, internal names */
	size_t next, aext;
	uint64_t inflated;  /* bytes inflated so far */
	unsigned gen;	    /* walk generation, for jclass.mark */
	unsigned max_depth; /* lim.max_depth, at most DEPTH_CEILING */

	/* Reading entries ourselves: build_index, fast_read. */
	uint64_t cd_off, cd_size; /* the central directory, as the end
				   * record says (precheck_entries) */
	uint64_t cd_count;	  /* its entries, as it says too */
	struct zipdir plain;	  /* the directory, as zipdir_end() read it */
	int plain_end;		  /* ... when it found the end record plain */
	uint8_t *cd;	     /* the directory's bytes, or NULL (read_directory);
			      * the pre-reader borrows them */
	uint32_t *rec;	     /* zipdir judged the archive (open_plain): entry
			      * -> its record in cd; NULL: libzip did */
	uint8_t *lok;	     /* entry -> 1 once its local header is found to
			      * agree with its record (read_directory) */
	int locals;	     /* zipdir judged the records alone: the local
			      * headers are judged as they are read, the
			      * rest after the walk (settle_locals) */
	int no_plain;	     /* libzip judges, not zipdir (a second try) */
	uint64_t *at;	     /* entry -> its local header's offset, or NO_INDEX;
			      * NULL = no index */
	struct reader rd;    /* the walk's thread's; a helper has its own */
	struct ahead *ahead; /* classes read ahead of the walk (reach) */
	size_t nahead, aahead;
	size_t nlisted;	       /* ahead[] holding a name (nahead, or more) */
	unsigned batch;	       /* ahead[]'s list, counted (name.batch) */
	struct run *runs;      /* ahead[] in runs, as the threads take them */
	size_t nruns, aruns;
	size_t *order; /* ahead[] indexes by file offset; runs index it */
	size_t aorder;
	struct helper *helper; /* NULL until a walk is wide enough */
	struct prer *pre;      /* NULL, or classes read while it is judged */
	int reaching;	       /* reach() is on: classes come as names */
	struct jar_test *test; /* NULL, or jar_inspect_test()'s knobs */
};

/*
 * Make room for one more element in the array `v` of n elements of `size`
 * bytes (*alloc allocated).  The array, moved perhaps, or NULL when out of
 * memory (then `v` is still valid).
 */
static void *grow_array(void *v, size_t n, size_t *alloc, size_t size)
{
	size_t a;
	void *p;

	if (n < *alloc)
		return v;
	a = *alloc ? *alloc * 2 : 16;
	p = realloc(v, a * size);
	if (p)
		*alloc = a;
	return p;
}

/* The record of name `k` (n bytes), or NULL: none met yet. */
static struct name *name_get(const struct insp *in, const char *k, size_t n)
{
	uintptr_t v;

	return map_get(&in->names, k, n, &v) ? (struct name *)v : NULL;
}

/*
 * `size` bytes (a multiple of 16) that live as long as the walk, carved
 * from the pool's blocks; NULL: out of memory.
 */
static void *pool_get(struct insp *in, size_t size)
{
	struct name_pool *b = in->pool;
	void *p;

	if (!b || b->cap - b->used < size) {
		size_t cap = size > 65536 ? size : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = in->pool;
		b->used = 0;
		b->cap = cap;
		in->pool = b;
	}
	p = b->mem + b->used;
	b->used += size;
	return p;
}

/* The record of name `k` (n bytes), made if new; NULL: out of memory. */
static struct name *name_add(struct insp *in, const char *k, size_t n)
{
	struct slot *s = map_place(&in->names, k, n);
	struct name *r;

	if (!s)
		return NULL;
	if (s->key)
		return (struct name *)s->val;
	r = pool_get(in, (sizeof(*r) + n + 1 + 15) & ~(size_t)15);
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->entry = NO_ENTRY;
	memcpy(r->key, k, n);
	r->key[n] = '\0';
	s->key = r->key;
	s->val = (uintptr_t)r;
	in->names.n++;
	return r;
}

/* Let go of every record. */
static void names_release(struct insp *in)
{
	struct name_pool *b, *next;

	map_release(&in->names);
	for (b = in->pool; b; b = next) {
		next = b->next;
		free(b);
	}
	in->pool = NULL;
}

/*
 * Record why the JAR is unusable (the first reason wins), with control
 * characters masked so it stays one line.  Returns STOP, or -ENOMEM.
 */
static int fail(struct insp *in, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct insp *in, int code, const char *fmt, ...)
{
	char msg[2 * CMFS_ERR_MSG];
	va_list ap;
	char *p;

	if (in->rep->error)
		return STOP;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	in->rep->error = strdup(msg);
	if (!in->rep->error)
		return -ENOMEM;
	in->rep->code = code;
	return STOP;
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
	return fail(in, -ENOEXEC, "entry %s: %s", name, why);
}

/*
 * The `want` bytes at `pos` from the run rd holds (ahead_take read it):
 * 0 and *p, *got (fewer than want only where the file ends), or 1 when
 * the run does not hold them.
 */
static int run_get(const struct reader *rd, uint64_t pos, size_t want,
		   const uint8_t **p, size_t *got)
{
	uint64_t end = rd->roff + rd->rlen;

	if (!rd->rlen || pos < rd->roff || pos >= end ||
	    (end - pos < want && end != rd->src->size))
		return 1;
	*p = rd->run + (pos - rd->roff);
	*got = end - pos < want ? (size_t)(end - pos) : want;
	return 0;
}

/*
 * Read the `len` bytes at `off` into rd's run, for run_get: a run of
 * neighbours, one pread instead of one per entry.  Not one of none, nor
 * one longer than RUN_MAX: its entries then overlap, as only a forged
 * directory makes them (ahead_runs, prer_read join an entry only within
 * RUN_MAX), and each is read by itself.  Nothing held when the read fails.
 */
static void run_read(struct reader *rd, uint64_t off, uint64_t len)
{
	rd->rlen = 0;
	rd->roff = off;
	if (!len || len > RUN_MAX)
		return;
	if (len > rd->rcap) {
		free(rd->run);
		rd->rcap = 0;
		if (!(rd->run = malloc((size_t)len)))
			return;
		rd->rcap = (size_t)len;
	}
	if (len > rd->most)
		rd->most = (size_t)len;
	if (input_direct(rd->src, rd->run, (size_t)len, off, &rd->rlen))
		rd->rlen = 0;
}

/*
 * Read entry e ourselves (e->pos NO_INDEX: it is not in the index,
 * build_index): its local header, checked against the directory
 * (signature, method, name), then exactly its compressed bytes, inflated
 * in one call of inflate_raw (or copied, if stored) into b, which has room
 * for st->size + INFLATE_SLACK bytes.  0 when b holds st->size bytes with
 * the declared CRC-32.  1 when anything is off: not in the index, a short
 * read, a mismatch, a stream that is damaged, ends early, has bytes after
 * its end or outgrows the declared size.  Then libzip reads the entry, so
 * that it gets libzip's verdict, word for word, whichever way it came.
 * -ENOMEM.  With e->rec, the header is judged as zipdir would judge it
 * too, while it is at hand (*e->agreed, for settle_locals).
 */
static int fast_read(struct reader *rd, const struct spot *e,
		     const zip_stat_t *st, uint8_t *b)
{
	size_t got, start, want, used = 0, out = 0, nl = e->nl;
	const uint8_t *hdr, *data;

	if (e->pos == NO_INDEX || st->comp_size > rd->cap + ZBUF || !e->name ||
	    nl > ZBUF / 2)
		return 1;
	/* One read for the header, the name, a little extra field and the
	 * data; a longer extra field costs a second read. */
	want = 30 + nl + LOCAL_SLACK + (size_t)st->comp_size;
	if (!rd->inflater && !rd->zbuf)
		reader_take(rd);
	if (want > rd->zcap) {
		free(rd->zbuf);
		rd->zcap = want > ZBUF ? want : ZBUF;
		if (!(rd->zbuf = malloc(rd->zcap))) {
			rd->zcap = 0;
			return -ENOMEM;
		}
	}
	if (!rd->inflater && inflate_new(&rd->inflater))
		return -ENOMEM;
	if (run_get(rd, e->pos, want, &hdr, &got)) {
		if (input_direct(rd->src, rd->zbuf, want, e->pos, &got))
			return 1;
		hdr = rd->zbuf;
	}
	if (got < 30 + nl)
		return 1;
	if (memcmp(hdr, "PK\3\4", 4) || le16(hdr + 8) != st->comp_method ||
	    le16(hdr + 26) != nl || memcmp(hdr + 30, e->name, nl))
		return 1;
	if (e->rec && zipdir_local(e->rec, hdr, got) == 1)
		__atomic_store_n(e->agreed, 1, __ATOMIC_RELAXED);
	start = 30 + nl + le16(hdr + 28);
	data = hdr + start;
	if (got < start + st->comp_size) {
		if (start <= 30 + nl + LOCAL_SLACK)
			return 1; /* the file ends inside the entry */
		data = rd->zbuf;
		if (input_direct(rd->src, rd->zbuf, (size_t)st->comp_size,
				 e->pos + start, &got) ||
		    got != st->comp_size)
			return 1;
	}
	if (st->comp_method == ZIP_CM_STORE) {
		if (st->comp_size != st->size)
			return 1;
		memcpy(b, data, (size_t)st->size);
	} else if (inflate_raw(rd->inflater, b,
			       (size_t)st->size + INFLATE_SLACK, &out, data,
			       (size_t)st->comp_size, &used) ||
		   used != st->comp_size || out != st->size) {
		return 1;
	}
	return libdeflate_crc32(0, b, (size_t)st->size) != st->crc;
}

/* Over the cap on inflated bytes: the report says so. */
static int over_inflated(struct insp *in)
{
	return fail(in, -EFBIG,
		    "the classes read inflate to more than %llu bytes (the "
		    "limit)",
		    (unsigned long long)in->lim.max_inflated);
}

/* What record r says of entry idx, as zip_stat_index() would. */
static void stat_of(const struct cdrec *r, zip_uint64_t idx, zip_stat_t *st)
{
	zip_stat_init(st);
	st->valid = ZIP_STAT_INDEX | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
		    ZIP_STAT_CRC | ZIP_STAT_COMP_METHOD |
		    ZIP_STAT_ENCRYPTION_METHOD;
	st->index = idx;
	st->size = r->size;
	st->comp_size = r->comp_size;
	st->crc = r->crc;
	st->comp_method = r->method;
	st->encryption_method = ZIP_EM_NONE;
}

/*
 * Entry idx as its directory record says (zipdir judged the archive) or
 * as libzip says: 0 and *st, or -1 (libzip's error in in->za).
 */
static int entry_stat(struct insp *in, zip_uint64_t idx, zip_stat_t *st)
{
	struct cdrec r;

	if (!in->rec) {
		zip_stat_init(st);
		return zip_stat_index(in->za, idx, 0, st) < 0 ? -1 : 0;
	}
	cd_record(in->cd + in->rec[idx], &r);
	stat_of(&r, idx, st);
	return 0;
}

/* Entry idx's raw name, *nl bytes (not '\0'-terminated), or NULL. */
static const char *entry_name(const struct insp *in, zip_uint64_t idx,
			      size_t *nl)
{
	const uint8_t *h;
	const char *name;

	if (in->rec) {
		h = in->cd + in->rec[idx];
		*nl = le16(h + 28);
		return (const char *)h + 46;
	}
	name = zip_get_name(in->za, idx, ZIP_FL_ENC_RAW);
	*nl = name ? strlen(name) : 0;
	return name;
}

/*
 * Open the archive with libzip (`flags`) into in->za, through our source,
 * so both inputs read the same way (libzip owns the source once the open
 * succeeds and frees it in zip_discard()): 0, or -1 and *ze.
 */
static int libzip_open(struct insp *in, int flags, zip_error_t *ze)
{
	zip_source_t *zs = zip_source_function_create(input_source, in->src, ze);

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
 * libzip's view of an archive that zipdir judged, the first time an entry
 * must be read by libzip (a damaged one, whose verdict is libzip's): 0,
 * or -1 and *ze.  Without ZIP_CHECKCONS, which zipdir's checks stood for
 * when the archive was opened: an entry changed since then is libzip's to
 * judge as it reads it, as when libzip opened the archive first.  Only a
 * file cut or rewritten past its directory fails here.
 */
static int libzip_late(struct insp *in, zip_error_t *ze)
{
	return in->za ? 0 : libzip_open(in, ZIP_RDONLY, ze);
}

/* Where entry idx is, for fast_read. */
static void spot_of(struct insp *in, zip_uint64_t idx, struct spot *e)
{
	e->idx = idx;
	e->pos = in->at ? in->at[idx] : NO_INDEX;
	e->name = entry_name(in, idx, &e->nl);
	e->rec = in->locals ? in->cd + in->rec[idx] : NULL;
	e->agreed = in->locals ? &in->lok[idx] : NULL;
}

/*
 * Inflate entry `idx` (named `name`), at most `cap` bytes, into *out
 * (malloc'd, *len bytes): through our index if it can (fast_read), else
 * with libzip.  The declared size is only a first guess: the bytes are
 * counted as they come, and one byte past the declared size stops the
 * read.  0, STOP or -errno.
 */
static int read_entry(struct insp *in, zip_uint64_t idx, const char *name,
		      uint64_t cap, uint8_t **out, size_t *len)
{
	zip_file_t *f = NULL;
	uint8_t *b = NULL;
	uint64_t got = 0;
	zip_stat_t st;
	zip_error_t ze;
	struct spot e;
	int rc = 0;

	if (entry_stat(in, idx, &st) < 0)
		return entry_fail(in, name, zip_get_error(in->za));
	if (!(st.valid & ZIP_STAT_SIZE))
		return fail(in, -ENOEXEC, "entry %s: no size", name);
	if (st.size > cap)
		return fail(in, -EFBIG,
			    "entry %s: %llu bytes, over the limit of %llu",
			    name, (unsigned long long)st.size,
			    (unsigned long long)cap);
	b = malloc((size_t)st.size + INFLATE_SLACK);
	if (!b)
		return -ENOMEM;
	spot_of(in, idx, &e);
	rc = fast_read(&in->rd, &e, &st, b);
	if (rc < 0)
		goto out;
	if (!rc) {
		got = st.size;
		in->inflated += got;
		if (in->test)
			in->test->nfast++;
		if (in->inflated > in->lim.max_inflated) {
			rc = over_inflated(in);
			goto out;
		}
	} else {
		rc = 0;
		zip_error_init(&ze);
		if (libzip_late(in, &ze)) {
			rc = zip_errno(zip_error_code_zip(&ze)) == -EINVAL
				     ? fail(in, -ENOEXEC,
					    "entry %s: the archive changed "
					    "while it was read (%s)",
					    name, zip_error_strerror(&ze))
				     : entry_fail(in, name, &ze);
			zip_error_fini(&ze);
			goto out;
		}
		zip_error_fini(&ze);
		f = zip_fopen_index(in->za, idx, 0);
		if (!f) {
			rc = entry_fail(in, name, zip_get_error(in->za));
			goto out;
		}
	}
	while (f) {
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
			rc = fail(in, -EFBIG,
				  "entry %s inflates past the %llu bytes its "
				  "header declares (a zip bomb?)",
				  name, (unsigned long long)st.size);
			goto out;
		}
	}
	if (got != st.size) {
		rc = fail(in, -ENOEXEC,
			  "entry %s: %llu bytes, not the %llu declared", name,
			  (unsigned long long)got, (unsigned long long)st.size);
		goto out;
	}
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

/*
 * Weigh the entry count that the end-of-central-directory record (or its
 * zip64 twin) declares, before libzip allocates a table that big.  Only a
 * record that ends the file exactly (as ZIP_CHECKCONS wants) is read;
 * anything else is left to libzip.  Where the central directory is goes
 * into in->cd_off and cd_size, for build_index().  0, STOP (too many
 * entries) or -EIO.
 */
static int precheck_entries(struct insp *in)
{
	size_t tail, got, p;
	uint64_t count = 0;
	uint8_t *b, z[56];
	int rc = 0, found = 0;

	tail = in->src->size < ZIPDIR_TAIL ? (size_t)in->src->size
					   : ZIPDIR_TAIL;
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
		in->cd_count = count;
		in->cd_size = le32(b + p + 12);
		in->cd_off = le32(b + p + 16);
		/* A zip64 locator right before: the real count is there. */
		if (p >= 20 && !memcmp(b + p - 20, "PK\6\7", 4)) {
			uint64_t off = le64(b + p - 20 + 8);

			if (off < in->src->size && in->src->size - off >= 56 &&
			    !input_read(in->src, z, 56, off, &got) &&
			    got == 56 && !memcmp(z, "PK\6\6", 4)) {
				count = le64(z + 32);
				in->cd_count = count;
				in->cd_size = le64(z + 40);
				in->cd_off = le64(z + 48);
			}
		}
	}
	/* The record zipdir reads is the one found: the file's last. */
	in->plain_end = zipdir_end(b, tail, in->src->size, &in->plain);
	if (found && count > in->lim.max_entries)
		rc = fail(in, -EFBIG,
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
	if (n > 0 && map_reserve(&in->names, (size_t)n))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		size_t len;
		const char *name = entry_name(in, (zip_uint64_t)i, &len);
		struct name *r;

		if (!name)
			return cmfs_err_set(in->err, -EINVAL,
					    "not a valid zip archive: entry "
					    "%lld has no name",
					    (long long)i);
		if (len >= 6 && !memcmp(name + len - 6, ".class", 6) &&
		    strncmp(name, "META-INF/", 9)) {
			/* A base class: its record knows its entry. */
			if (!(r = name_add(in, name, len - 6)))
				return -ENOMEM;
			rc = r->entry != NO_ENTRY;
			r->entry = (zip_uint64_t)i;
		} else {
			rc = map_put(&in->entries, name, len, (uintptr_t)i);
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

/* 1 if libzip describes entry i as plain record r does (name, method,
 * sizes, CRC-32, no encryption), else 0. */
static int stat_agrees(struct insp *in, zip_uint64_t i, const struct cdrec *r)
{
	const zip_uint64_t need = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
				  ZIP_STAT_CRC | ZIP_STAT_COMP_METHOD |
				  ZIP_STAT_ENCRYPTION_METHOD;
	const char *name;
	zip_stat_t st;

	zip_stat_init(&st);
	if (zip_stat_index(in->za, i, ZIP_FL_ENC_RAW, &st) ||
	    (st.valid & need) != need || st.encryption_method != ZIP_EM_NONE ||
	    st.comp_method != r->method || st.crc != r->crc ||
	    st.size != r->size || st.comp_size != r->comp_size)
		return 0;
	name = zip_get_name(in->za, i, ZIP_FL_ENC_RAW);
	return name && strlen(name) == r->nl && !memcmp(name, r->name, r->nl);
}

/*
 * The record at cd + *p of a directory of `size` bytes, its lengths
 * checked to fit, *p moved past it; NULL when there is none there.
 */
static const uint8_t *cd_next(const uint8_t *cd, size_t size, size_t *p)
{
	const uint8_t *h = cd + *p;
	size_t len;

	if (size - *p < 46 || memcmp(h, "PK\1\2", 4))
		return NULL;
	len = 46u + le16(h + 28) + le16(h + 30) + le16(h + 32);
	if (len > size - *p)
		return NULL;
	*p += len;
	return h;
}

/*
 * Our own index of the central directory, so that entries are read
 * without libzip's machinery for each (fast_read): one offset for each
 * entry that we can read (cd_record), NO_INDEX for the rest, which libzip
 * reads.  When libzip opened the archive, only where it describes the
 * entry as the directory does (stat_agrees); a directory we cannot walk,
 * or one that libzip counts otherwise, leaves no index.  The judge of
 * what is valid was zipdir or libzip: the index is only a shorter way to
 * the bytes of the entries they accepted.  0 or -ENOMEM.
 */
static int build_index(struct insp *in)
{
	size_t n = in->rep->nentries, i, p = 0;
	const uint8_t *h;
	struct cdrec r;

	if ((in->test && in->test->libzip_only) || !n || !in->cd)
		return 0;
	in->at = malloc(n * sizeof(*in->at));
	if (!in->at)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		in->at[i] = NO_INDEX;
		if (in->rec) {
			if (!cd_record(in->cd + in->rec[i], &r))
				in->at[i] = r.off;
			continue;
		}
		if (!(h = cd_next(in->cd, (size_t)in->cd_size, &p)))
			break;
		if (!cd_record(h, &r) && stat_agrees(in, i, &r))
			in->at[i] = r.off;
	}
	if (i == n && (in->rec || p == in->cd_size))
		return 0;
	free(in->at);
	in->at = NULL;
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

static void prer_start(struct insp *in);
static int prer_busy(const struct insp *in);
static void prer_join(struct insp *in, struct helper *h);

/* Longest central directory read whole; a longer one is libzip's alone
 * (20,000 entries of shaded JAR take some 2 MiB). */
#define CD_MAX (64u << 20)

/*
 * The central directory that the end record points to, into in->cd, when
 * it lies within the file: judged by zipdir, indexed by us (build_index)
 * and the pre-reader.  0, or -ENOMEM; no directory is no error (libzip
 * will judge the archive).
 */
static int read_directory(struct insp *in)
{
	size_t got;

	if (!in->cd_size || in->cd_size > CD_MAX ||
	    in->cd_off > in->src->size ||
	    in->cd_size > in->src->size - in->cd_off)
		return 0;
	in->cd = malloc((size_t)in->cd_size);
	if (!in->cd)
		return -ENOMEM;
	if (input_direct(in->src, in->cd, (size_t)in->cd_size, in->cd_off,
			 &got) ||
	    got != in->cd_size) {
		free(in->cd);
		in->cd = NULL;
		return 0;
	}
	/* Room for what readers find of local headers, when zipdir may
	 * judge the archive (open_plain). */
	if (in->plain_end && !in->no_plain && in->plain.count == in->cd_count &&
	    !(in->test && in->test->libzip_only))
		in->lok = calloc((size_t)in->cd_count, 1);
	return 0;
}

/* zipdir's reads of local headers: through the input's window, as
 * libzip's were (in the file's order, mostly). */
static int plain_read(void *ctx, void *buf, size_t n, uint64_t off, size_t *got)
{
	return input_read(ctx, buf, n, off, got);
}

/*
 * Judge the archive with zipdir: 1 when it is clean, and in->rec maps its
 * entries; 0 when unsure (libzip judges it); -ENOMEM or -EIO.  Clean may
 * mean "if its local headers agree" (in->locals): reading every one of
 * them before anything else was a tenth of a shaded JAR's inspection,
 * and the readers read most of them anyway.
 */
static int open_plain(struct insp *in)
{
	const struct zipdir *z = &in->plain;
	int rc;

	/* in->cd is what the precheck's record points to: the same one
	 * when zipdir_end() found the file's last record plain. */
	if (!in->plain_end || !in->cd || z->cd_off != in->cd_off ||
	    z->cd_size != in->cd_size || in->no_plain ||
	    (in->test && in->test->libzip_only))
		return 0;
	in->rec = malloc((size_t)z->count * sizeof(*in->rec));
	if (!in->rec)
		return -ENOMEM;
	if (in->lok && !(in->test && in->test->locals_first))
		rc = in->locals = zipdir_records(in->cd, z, in->rec);
	else
		rc = zipdir_check(in->cd, z, in->rec, plain_read, in->src);
	if (rc == 1) {
		in->rep->nentries = (size_t)z->count;
		if (in->test && !in->locals)
			in->test->zipdir = 1;
		return 1;
	}
	free(in->rec);
	in->rec = NULL;
	if (rc == -EIO)
		return cmfs_err_set(in->err, -EIO, "cannot read the archive");
	return rc;
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
 * Open the archive: judged by zipdir when it has the plain shape, else by
 * libzip with its consistency checks (the same verdict either way: see
 * zipdir.h); then map its entries.  0, STOP (a cap), -EINVAL (not a valid
 * zip archive: err says why), -ENOMEM or -EIO.
 */
static int open_archive(struct insp *in)
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
		rc = read_directory(in);
	if (rc)
		return rc;
	prer_start(in);
	/* A test's pre-reader reads all it will before the archive is
	 * judged (and refused, maybe) and so before the walk. */
	while (in->test && in->test->pre > 1 && prer_busy(in))
		sched_yield();
	rc = open_plain(in);
	if (!rc)
		rc = open_libzip(in, head);
	if (rc < 0)
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
	/* The precheck weighed the record; this is what the judge made of
	 * it. */
	if (in->rep->nentries > in->lim.max_entries)
		return fail(in, -EFBIG,
			    "the archive has %zu entries, over the limit of "
			    "%zu",
			    in->rep->nentries, in->lim.max_entries);
	rc = map_entries(in);
	return rc ? rc : build_index(in);
}

/* ------------------------------------------------------------------ */
/* The JAR's classes.                                                  */

/* Free all a class holds (the class itself is the pool's); NULL is ok. */
static void jclass_clear(struct jclass *jc)
{
	if (!jc)
		return;
	classfile_free(jc->cf);
	free(jc->bytes);
	classfile_names_free(jc->refs);
	free(jc->refs_err);
	free(jc->super);
	jar_names_free(jc->ifaces);
	memset(jc, 0, sizeof(*jc));
}

/*
 * The JAR's entry for record r's class: 1 and *idx, or 0 (the JAR has
 * none).  map_entries gave every base class's record its entry ("a/B"
 * is "a/B.class" at the root; nothing under META-INF/ is a base class:
 * a multi-release JAR keeps its versions there).
 */
static int name_entry(const struct name *r, zip_uint64_t *idx)
{
	if (r->entry == NO_ENTRY)
		return 0;
	*idx = r->entry;
	return 1;
}

/*
 * What the walk takes of a parsed class: the class it declares, which
 * must be `iname` (the JVM's NoClassDefFoundError "wrong name"), and the
 * names of its supertypes, none an array type (a format error the JVM
 * refuses too).  0 and *super (NULL: none) and *ifaces (NULL-terminated);
 * 1 and *why, the reason the class is unusable; -ENOMEM.  It touches
 * nothing of the inspection, so either thread runs it (ahead_read).
 */
static int class_check(const struct classfile *cf, const char *iname,
		       char **super, char ***ifaces, char **why)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	char msg[2 * CMFS_ERR_MSG] = "", *this_name = NULL, *sup = NULL;
	char **ifs;
	unsigned i;
	int rc;

	*super = NULL;
	*ifaces = NULL;
	*why = NULL;
	rc = classfile_class_name(&this_name, cf, cf->this_class, &e);
	if (rc == -EINVAL)
		snprintf(msg, sizeof(msg), "class file %s.class: %s", iname,
			 e.msg);
	else if (!rc && strcmp(this_name, iname))
		snprintf(msg, sizeof(msg),
			 "class file %s.class declares class %s", iname,
			 this_name);
	free(this_name);
	if (rc && rc != -EINVAL)
		return rc;
	if (msg[0])
		goto refuse;
	ifs = calloc((size_t)cf->ninterfaces + 1, sizeof(char *));
	if (!ifs)
		return -ENOMEM;
	if (cf->super_class)
		rc = classfile_class_name(&sup, cf, cf->super_class, &e);
	for (i = 0; i < cf->ninterfaces && !rc; i++)
		rc = classfile_class_name(&ifs[i], cf, cf->interfaces[i], &e);
	if (rc == -EINVAL)
		snprintf(msg, sizeof(msg), "class file %s.class: %s", iname,
			 e.msg);
	for (i = 0; !rc && i < cf->ninterfaces && !msg[0]; i++)
		if (ifs[i][0] == '[')
			snprintf(msg, sizeof(msg),
				 "class file %s.class: an array type as a "
				 "superinterface",
				 iname);
	if (!rc && !msg[0] && sup && sup[0] == '[')
		snprintf(msg, sizeof(msg),
			 "class file %s.class: an array type as superclass",
			 iname);
	if (rc || msg[0]) {
		free(sup);
		jar_names_free(ifs);
		if (!msg[0])
			return rc;
		goto refuse;
	}
	*super = sup;
	*ifaces = ifs;
	return 0;
refuse:
	*why = strdup(msg);
	return *why ? 1 : -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Reading ahead of the walk.                                           */

/*
 * A wide JAR (a shaded connector: thousands of classes, every one reached)
 * spends most of its inspection inflating and parsing class files, one at
 * a time, in the walk's order.  Each of those is independent of the
 * others, so reach() lists the classes the walk is about to read, in the
 * order it will read them, and has them read and parsed first, by its own
 * thread and another taking turns from one counter: a helper thread, or
 * the pre-reader once its own reading is over (prer_join).  The walk
 * then takes each one as though it had just read it (load_class), in its
 * own order: counts, caps and errors come out as they would one at a
 * time.  Only the pure work is done ahead: fast_read, classfile_parse,
 * class_check, classfile_refs; a class read ahead reaches the walk as
 * its names alone.  Anything else (an entry libzip must read, a size over
 * a cap) is left to the walk.  libzip is never called off the walk's
 * thread while the walk runs (its archive is discarded by the
 * pre-reader, after: insp_release).
 */
#define AHEAD_MAX 1024u			 /* classes listed at a time */
#define AHEAD_BYTES ((uint64_t)16 << 20) /* their declared sizes */
#define AHEAD_HELP 32u			 /* help for this many or more */

struct helper {
	struct insp *in;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	unsigned batch; /* the batch being read (mu) */
	unsigned seen;	/* the last batch the helper finished (mu) */
	int quit;	/* (mu) */
	size_t next;	/* the next ahead[] to take (atomic) */
	struct reader rd;
};

static void took_clear(struct took *t)
{
	free(t->why);
	free(t->super);
	jar_names_free(t->ifaces);
	classfile_names_free(t->refs);
	free(t->refs_err);
	memset(t, 0, sizeof(*t));
}

/* Let go of what class a was read into; its name stays. */
static void ahead_clear(struct ahead *a)
{
	took_clear(&a->t);
	a->done = 0;
}

/*
 * Read class a and take from it all that load_class and take_refs would,
 * on whichever thread: the bytes are inflated into the reader's buffer
 * and let go of here, so a wide JAR's classes cost no allocation each.
 * Left not done (the walk reads it itself) when it cannot be read
 * through the index, or on ENOMEM.
 */
static void ahead_read(struct reader *rd, struct ahead *a)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	size_t size = (size_t)a->st.size;
	char msg[2 * CMFS_ERR_MSG];
	struct classfile *cf;
	int rc;

	if (!rd->cf && !(rd->cf = calloc(1, sizeof(*rd->cf))))
		return;
	cf = rd->cf;
	if (size + INFLATE_SLACK > rd->ocap) {
		free(rd->out);
		rd->ocap = 0;
		if (!(rd->out = malloc(size + INFLATE_SLACK)))
			return;
		rd->ocap = size + INFLATE_SLACK;
	}
	if (fast_read(rd, &a->e, &a->st, rd->out))
		return; /* the walk reads it: libzip, or its own ENOMEM */
	rc = classfile_reparse(cf, rd->out, size, &e);
	if (rc == -EINVAL) {
		snprintf(msg, sizeof(msg), "class file %s.class: %s", a->iname,
			 e.msg);
		rc = (a->t.why = strdup(msg)) ? 0 : -ENOMEM;
	} else if (!rc) {
		rc = class_check(cf, a->iname, &a->t.super, &a->t.ifaces,
				 &a->t.why);
		if (!rc) {
			/* The names it names, as take_refs() would. */
			cmfs_err_clear(&e);
			rc = classfile_refs(&a->t.refs, &a->t.nrefs, cf, &e);
			if (rc == -EINVAL)
				rc = (a->t.refs_err = strdup(e.msg)) ? 0
								     : -ENOMEM;
		}
		rc = rc == 1 ? 0 : rc;
	}
	if (rc) {
		ahead_clear(a);
		return;
	}
	a->len = size;
	a->done = 1;
}

/*
 * Take runs from the shared counter until none are left: each read with
 * one pread, then its classes one by one.  A run that cannot be read
 * leaves its classes to read themselves (fast_read), as alone.  The runs
 * it took.
 */
static size_t ahead_take(struct helper *h, struct reader *rd)
{
	struct insp *in = h->in;
	size_t i, k, took = 0;

	while ((i = __atomic_fetch_add(&h->next, 1, __ATOMIC_RELAXED)) <
	       in->nruns) {
		const struct run *r = &in->runs[i];

		run_read(rd, r->off, r->len);
		for (k = 0; k < r->n; k++)
			ahead_read(rd, &in->ahead[in->order[r->first + k]]);
		rd->rlen = 0;
		took++;
	}
	return took;
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	unsigned batch;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (!h->quit && h->seen == h->batch)
			pthread_cond_wait(&h->cond, &h->mu);
		if (h->quit)
			break;
		batch = h->batch;
		pthread_mutex_unlock(&h->mu);
		ahead_take(h, &h->rd);
		pthread_mutex_lock(&h->mu);
		h->seen = batch;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* A helper for this inspection, or NULL: then the walk reads alone. */
static struct helper *helper_get(struct insp *in)
{
	struct helper *h = in->helper;

	if (h)
		return h;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->in = in;
	h->rd.src = in->src;
	h->rd.cap = in->lim.max_entry_size;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cond, NULL);
	if (thread_start(&h->thread, helper_main, h)) {
		pthread_cond_destroy(&h->cond);
		pthread_mutex_destroy(&h->mu);
		free(h);
		return NULL;
	}
	return in->helper = h;
}

/* Tell the test knobs, if any, how long a run rd read. */
static void run_note(const struct insp *in, const struct reader *rd)
{
	if (in->test && rd->most > in->test->run_most)
		in->test->run_most = rd->most;
}

static void helper_stop(struct insp *in)
{
	struct helper *h = in->helper;

	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->quit = 1;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->thread, NULL);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->mu);
	run_note(in, &h->rd);
	reader_release(&h->rd);
	free(h);
	in->helper = NULL;
}

/*
 * Where ahead[i]'s local header and data lie, [*pos, *end), as fast_read
 * will read them: 0, or 1 when fast_read will not read it from the index.
 */
static int ahead_extent(const struct insp *in, size_t i, uint64_t *pos,
			uint64_t *end)
{
	const struct ahead *a = &in->ahead[i];

	if (a->e.pos == NO_INDEX || !a->e.name ||
	    a->st.comp_size > in->lim.max_entry_size + ZBUF ||
	    a->e.nl > ZBUF / 2)
		return 1;
	*pos = a->e.pos;
	*end = *pos + 30 + a->e.nl + LOCAL_SLACK + a->st.comp_size;
	return 0;
}

/* An entry's place, for sorting ahead[] by it (ahead_runs). */
struct extent {
	uint64_t pos, end;
	size_t i;
};

static int cmp_extent(const void *a, const void *b)
{
	const struct extent *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * Group ahead[] into runs (struct run): sorted by offset, an entry joins
 * the run before it when it starts at most RUN_GAP bytes after that run's
 * end and the run stays within RUN_MAX bytes.  A shaded JAR's classes lie
 * side by side: its 20,000 preads become a few hundred.  Entries outside
 * the index are runs of their own.  0 or -ENOMEM.
 */
static int ahead_runs(struct insp *in)
{
	struct extent *x = malloc(in->nahead * sizeof(*x));
	uint64_t pos, end;
	size_t i, m = 0, k;
	struct run *r = NULL;
	void *p;

	if (!x)
		return -ENOMEM;
	if (in->nahead > in->aorder) {
		p = realloc(in->order, in->nahead * sizeof(*in->order));
		if (!p)
			goto nomem;
		in->order = p;
		in->aorder = in->nahead;
	}
	if (in->nahead > in->aruns) {
		p = realloc(in->runs, in->nahead * sizeof(*in->runs));
		if (!p)
			goto nomem;
		in->runs = p;
		in->aruns = in->nahead;
	}
	/* The ones in the index first, by offset; then the rest. */
	for (i = 0; i < in->nahead; i++)
		if (!ahead_extent(in, i, &pos, &end))
			x[m++] = (struct extent){pos, end, i};
	qsort(x, m, sizeof(*x), cmp_extent);
	k = m;
	for (i = 0; i < in->nahead; i++)
		if (ahead_extent(in, i, &pos, &end))
			x[k++] = (struct extent){0, 0, i};
	in->nruns = 0;
	for (i = 0; i < in->nahead; i++) {
		in->order[i] = x[i].i;
		if (r && i < m && x[i].pos <= r->off + r->len + RUN_GAP &&
		    x[i].end - r->off <= RUN_MAX) {
			if (x[i].end - r->off > r->len)
				r->len = (size_t)(x[i].end - r->off);
			r->n++;
			continue;
		}
		r = &in->runs[in->nruns++];
		r->first = i;
		r->n = 1;
		r->off = i < m ? x[i].pos : 0;
		r->len = i < m ? (size_t)(x[i].end - x[i].pos) : 0;
	}
	/* A run of one is read by fast_read itself, into its own buffer. */
	for (i = 0; i < in->nruns; i++)
		if (in->runs[i].n == 1)
			in->runs[i].len = 0;
	free(x);
	return 0;
nomem:
	free(x);
	return -ENOMEM;
}

/* Read ahead[] (in->nahead of them): with the helper, if there is one.
 * 0 or -ENOMEM. */
static int ahead_run(struct insp *in)
{
	struct helper *h = NULL, alone = {.in = in};
	unsigned batch;
	int rc = ahead_runs(in), wide, join;

	if (rc)
		return rc;
	/* A short list is read alone; a long one with the pre-reader (the
	 * other thread already), or else with a helper if one starts. */
	wide = in->nahead >= AHEAD_HELP || (in->test && in->test->always_help);
	join = wide && in->pre;
	if (wide && !join)
		h = helper_get(in);
	if (!h) {
		if (join)
			prer_join(in, &alone);
		ahead_take(&alone, &in->rd);
		if (join)
			prer_join(in, NULL);
		return 0;
	}
	__atomic_store_n(&h->next, 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&h->mu);
	batch = ++h->batch;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->mu);
	ahead_take(h, &in->rd);
	pthread_mutex_lock(&h->mu);
	while (h->seen != batch)
		pthread_cond_wait(&h->cond, &h->mu);
	pthread_mutex_unlock(&h->mu);
	return 0;
}

/* Let go of what the walk did not take. */
static void ahead_drop(struct insp *in)
{
	size_t i;

	for (i = 0; i < in->nlisted; i++)
		ahead_clear(&in->ahead[i]);
	in->nahead = in->nlisted = 0;
	in->batch++; /* what was listed is listed no more */
}

/* The class read ahead for record r, if it was and is still unclaimed. */
static struct ahead *ahead_of(const struct insp *in, const struct name *r)
{
	/* A name listed past nahead was taken back (ahead_plan). */
	if (!in->nahead || !r->planned || r->batch != in->batch ||
	    r->planned > in->nahead)
		return NULL;
	return &in->ahead[r->planned - 1];
}

/* ------------------------------------------------------------------ */
/* Reading classes while the archive is judged, and ahead of the walk.   */

/*
 * Judging a wide archive (zipdir's walk of the directory and the index
 * after it; libzip's open, when the shape is not plain, was a quarter of
 * the inspection) takes a thread, and nothing is walked before it ends.
 * Meanwhile a thread of our own (the pre-reader) indexes the central
 * directory the walk's thread read and, in file order, reads the classes
 * as ahead_read does (judging their local headers for zipdir, insp.lok),
 * keeping of each what load_class takes.  The walk takes a class so read
 * only if the index reads its entry where the pre-reader did
 * (prer_agrees); the rest it reads itself, as before.  A class is read by
 * one side only: its slot goes once from PRE_FREE to PRE_BUSY (the
 * pre-reader's) or to PRE_WALK (the walk's).  The pre-reader stops when
 * the walk is over, so what it reads in vain is what it can read beside
 * the open and the walk, on a core that would have been idle; done with
 * the file, it reads the walk's lists with it (prer_join), and after the
 * walk it judges with it the local headers nobody read (settle_locals).
 */
#define PRE_MIN 512u	/* entries, for an archive to be pre-read */
#define PRE_HOLD 16384u /* classes read and not taken, at most (memory) */

enum { PRE_FREE, PRE_BUSY, PRE_DONE, PRE_WALK };

/* A class read (PRE_DONE): what ahead_read left of it. */
struct preslot {
	struct took t;
	uint32_t len; /* bytes inflated (at most the entry cap, 16 MiB) */
	uint8_t done; /* else the walk reads it itself */
};

/* The local headers left to judge once the walk is over (settle_locals),
 * taken in chunks by the walk's thread and the pre-reader. */
struct headers {
	const struct insp *in;
	size_t chunk; /* entries a chunk */
	size_t next;  /* atomic: the next chunk to take */
	int rc;	      /* atomic: 1 while all agree, else the first 0 or
		       * -errno met */
};

struct prer {
	pthread_t thread;
	pthread_mutex_t mu;  /* the end (quit, over, told, rest), join */
	pthread_cond_t cond; /* any of those changed */
	int quit;	     /* atomic: the walk is over */
	int ready;	     /* atomic: f[] and of[] are built */
	int over;	     /* atomic: it reads no more */
	int told;	     /* the walk has said what comes after (rest) */
	struct insp *rest;   /* NULL, or what it lets go of, and itself */
	struct helper *join; /* (mu) a list to read with the walk, or NULL */
	unsigned join_gen;   /* (mu) one more for each list so offered */
	unsigned joined_gen; /* (mu) the last one it began to read */
	int joined;	     /* (mu) it is reading from join */
	struct headers *heads; /* (mu) local headers to judge with the walk's
				* thread (settle_locals), or NULL */
	int judging;	       /* (mu) it is judging them */
	struct jar_test *test;
	size_t held; /* atomic: classes read and not taken yet */
	struct reader rd;
	uint64_t cd_off, cd_size, count; /* the directory (precheck) */
	uint64_t budget;		 /* bytes it may inflate */
	const uint8_t *cd;		 /* the central directory (insp.cd) */
	uint8_t *lok;			 /* insp.lok, or NULL */
	struct found *f;		 /* the JAR's classes, in file order */
	struct preslot *v;		 /* what became of each, once read */
	unsigned *state;		 /* PRE_*, one per f[] (atomic) */
	size_t n;			 /* classes */
	uint32_t *of;	       /* entry index -> f[] index + 1, or 0 */
	char names[ZBUF + 16]; /* the class being read: its internal name */
	struct ahead take;     /* the walk's: the one it takes (prer_take) */
};

/* A class entry found in the directory: where it lies, its record. */
struct found {
	uint64_t pos, end; /* its local header, to the end of its data */
	uint32_t rec;	   /* its record's offset into the directory */
	uint32_t entry;	   /* its index */
};

/* qsort() order of found classes by their offsets. */
static int cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * 1 if record h (read into *r) is of a class fast_read could read: plain,
 * "*.class" not under META-INF/, a name without NUL, sizes within the cap.
 */
static int prer_wants(const struct prer *p, const uint8_t *h, struct cdrec *r)
{
	return !cd_record(h, r) && r->nl >= 7 && r->nl <= ZBUF / 2 &&
	       !memcmp(r->name + r->nl - 6, ".class", 6) &&
	       !(r->nl >= 9 && !memcmp(r->name, "META-INF/", 9)) &&
	       !memchr(r->name, '\0', r->nl) && r->size <= p->rd.cap &&
	       r->comp_size <= p->rd.cap + ZBUF;
}

/*
 * Read the central directory into cd: the classes prer_wants, by offset
 * (f[]), and of[] (prer_start allocated them all, for as many classes as
 * entries).  What each class needs to be read goes into v[] only when its
 * turn comes (prer_fill): touching fresh memory is dear, and the walk may
 * end long before.  0, or -1 when the directory cannot be walked as the
 * end record says.
 */
static int prer_index(struct prer *p)
{
	size_t n = (size_t)p->count, i, k, m = 0, pos = 0;
	size_t got = (size_t)p->cd_size, sorted = 1;
	const uint8_t *h;
	struct cdrec r;

	for (i = 0; i < n && (h = cd_next(p->cd, got, &pos)); i++) {
		if (!prer_wants(p, h, &r))
			continue;
		p->f[m] = (struct found){
			r.off, r.off + 30 + r.nl + LOCAL_SLACK + r.comp_size,
			(uint32_t)(h - p->cd), (uint32_t)i};
		sorted &= !m || p->f[m - 1].pos <= r.off;
		m++;
	}
	if (i != n || pos != got)
		return -1;
	/* Directories list entries in file order, mostly. */
	if (!sorted)
		qsort(p->f, m, sizeof(*p->f), cmp_found);
	for (k = 0; k < m; k++)
		p->of[p->f[k].entry] = (uint32_t)k + 1;
	p->n = m;
	return 0;
}

/*
 * Class f[k] as ahead_read wants it, from its directory record, into *a
 * (its names into p->names, until the next one).
 */
static void prer_fill(struct prer *p, size_t k, struct ahead *a)
{
	struct cdrec r;

	prer_wants(p, p->cd + p->f[k].rec, &r);
	memset(a, 0, sizeof(*a));
	a->e.idx = p->f[k].entry;
	a->e.pos = r.off;
	stat_of(&r, a->e.idx, &a->st);
	a->e.name = (const char *)r.name;
	a->e.nl = r.nl;
	if (p->lok) {
		a->e.rec = p->cd + p->f[k].rec;
		a->e.agreed = &p->lok[a->e.idx];
	}
	a->iname = memcpy(p->names, r.name, r.nl - 6);
	p->names[r.nl - 6] = '\0';
}

/* Read class f[m] and keep what became of it in v[m]. */
static void prer_one(struct prer *p, size_t m)
{
	struct preslot *v = &p->v[m];
	struct ahead a;

	prer_fill(p, m, &a);
	ahead_read(&p->rd, &a);
	v->t = a.t;
	v->len = (uint32_t)a.len;
	v->done = (uint8_t)a.done;
}

/*
 * Read the classes in runs of neighbours (RUN_MAX, RUN_GAP), each one the
 * walk has not claimed, until all are read, the walk is over or the
 * budget is spent.
 */
static void prer_read(struct prer *p)
{
	uint64_t spent = 0, end, off;
	size_t k = 0, j, m, mine;

	while (k < p->n && spent <= p->budget &&
	       __atomic_load_n(&p->held, __ATOMIC_RELAXED) < PRE_HOLD &&
	       !__atomic_load_n(&p->quit, __ATOMIC_RELAXED)) {
		off = p->f[k].pos;
		end = p->f[k].end;
		for (j = k + 1; j < p->n && p->f[j].pos <= end + RUN_GAP &&
				p->f[j].end - off <= RUN_MAX;
		     j++)
			if (p->f[j].end > end)
				end = p->f[j].end;
		for (m = k, mine = 0; m < j; m++) {
			unsigned st = PRE_FREE;

			mine += __atomic_compare_exchange_n(
				&p->state[m], &st, PRE_BUSY, 0,
				__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		}
		run_read(&p->rd, off, mine > 1 ? end - off : 0);
		for (m = k; m < j; m++) {
			if (__atomic_load_n(&p->state[m], __ATOMIC_ACQUIRE) !=
			    PRE_BUSY)
				continue;
			prer_one(p, m);
			spent += p->v[m].done ? p->v[m].len : 0;
			if (p->v[m].done)
				__atomic_fetch_add(&p->held, 1,
						   __ATOMIC_RELAXED);
			__atomic_store_n(&p->state[m], PRE_DONE,
					 __ATOMIC_RELEASE);
		}
		p->rd.rlen = 0;
		k = j;
	}
}

static void insp_free(struct insp *in);
static void prer_free(struct prer *p);
static void headers_judge(struct headers *hj, struct input *src);

/* Judge local headers with the walk's thread, through a window of its
 * own (settle_locals). */
static void prer_judge(struct prer *p, struct headers *hj)
{
	const struct input *src = p->rd.src;
	struct input mine;

	/* Not a copy of all of it: the walk's thread moves its window. */
	memset(&mine, 0, sizeof(mine));
	mine.fd = src->fd;
	mine.mem = src->mem;
	mine.size = src->size;
	mine.win = src->win ? malloc(WINDOW) : NULL; /* NULL: preads */
	headers_judge(hj, &mine);
	free(mine.win);
}

/*
 * Read, then wait to be told what comes next: to end (the walk joins it
 * and lets go of everything), or to let go of `rest`, what the walk built,
 * and of itself, so that the caller of the inspection need not wait for
 * the frees of some 100,000 allocations and a few MiB of unmapping.
 */
static void *prer_main(void *arg)
{
	struct prer *p = arg;
	struct insp *rest;
	unsigned gen = 0;

	if (!prer_index(p)) {
		__atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
		/* The test knob: not before the walk's first list. */
		if (p->test && p->test->join) {
			pthread_mutex_lock(&p->mu);
			while (!p->join_gen && !p->quit)
				pthread_cond_wait(&p->cond, &p->mu);
			pthread_mutex_unlock(&p->mu);
		}
		prer_read(p);
	}
	pthread_mutex_lock(&p->mu);
	__atomic_store_n(&p->over, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&p->cond);
	while (!p->told) {
		struct helper *h = p->join;
		struct headers *hj = p->heads;
		size_t took;

		if (hj) {
			p->heads = NULL;
			p->judging = 1;
			pthread_mutex_unlock(&p->mu);
			prer_judge(p, hj);
			pthread_mutex_lock(&p->mu);
			p->judging = 0;
			pthread_cond_broadcast(&p->cond);
			continue;
		}
		if (!h || gen == p->join_gen) {
			pthread_cond_wait(&p->cond, &p->mu);
			continue;
		}
		/* Read the walk's list with it (prer_join). */
		gen = p->joined_gen = p->join_gen;
		p->joined = 1;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->mu);
		took = ahead_take(h, &p->rd);
		pthread_mutex_lock(&p->mu);
		if (p->test)
			p->test->njoined += took;
		p->joined = 0;
		pthread_cond_broadcast(&p->cond);
	}
	rest = p->rest;
	pthread_mutex_unlock(&p->mu);
	if (rest) { /* detached: nobody else has p now */
		insp_free(rest);
		free(rest);
		prer_free(p);
	}
	return NULL;
}

/*
 * Start a pre-reader for a wide archive, before it is judged: not
 * with the test knobs that read otherwise, nor when it cannot start.
 */
static void prer_start(struct insp *in)
{
	const struct jar_test *t = in->test;
	struct prer *p;
	size_t n;

	if (t && (t->libzip_only || t->no_ahead || t->later || t->pre < 0))
		return;
	/* A directory read (read_directory), whose offsets and counts fit
	 * struct found's. */
	if (!in->cd || in->cd_count < (t && t->pre > 0 ? 1 : PRE_MIN) ||
	    in->cd_count > in->lim.max_entries || in->cd_count >= UINT32_MAX ||
	    in->cd_size > UINT32_MAX)
		return;
	/* The caller's heap, not a new one the thread would start: the
	 * memory the thread fills is then as cheap to touch as the walk's
	 * (see one_shot_heap() in fs/main.c). */
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cond, NULL);
	n = (size_t)in->cd_count;
	p->cd = in->cd;
	p->lok = in->lok;
	p->f = malloc(n * sizeof(*p->f));
	p->v = calloc(n, sizeof(*p->v));
	p->of = calloc(n, sizeof(*p->of));
	p->state = calloc(n, sizeof(*p->state));
	if (!p->f || !p->v || !p->of || !p->state) {
		prer_free(p);
		return;
	}
	p->rd.src = in->src;
	p->rd.cap = in->lim.max_entry_size;
	p->test = in->test;
	p->cd_off = in->cd_off;
	p->cd_size = in->cd_size;
	p->count = in->cd_count;
	p->budget = in->lim.max_inflated;
	if (thread_start(&p->thread, prer_main, p)) {
		prer_free(p);
		return;
	}
	in->pre = p;
}

/* Let go of what a class read left. */
static void preslot_clear(struct preslot *v)
{
	took_clear(&v->t);
	memset(v, 0, sizeof(*v));
}

/* 1 when there is a pre-reader and it has read all it will. */
static int prer_over(const struct insp *in)
{
	return in->pre && __atomic_load_n(&in->pre->over, __ATOMIC_ACQUIRE);
}

/* 1 while a pre-reader is reading. */
static int prer_busy(const struct insp *in)
{
	return in->pre && !__atomic_load_n(&in->pre->over, __ATOMIC_ACQUIRE);
}

/*
 * A pre-reader is the walk's helper: once its own reading is over it
 * takes runs of the walk's list from the same counter (prer_main).
 * While it reads, the walk reads its lists alone, as before; but the
 * last long list of a wide JAR used to end 4-8 ms after the pre-reader,
 * the walk reading alone and the pre-reader waiting.  With h, offer the
 * list `h` counts; with NULL, take the offer back and wait for the run
 * the pre-reader may be reading.  (With the test knob `join`, the walk
 * waits until the pre-reader has read the list, all of it.)
 */
static void prer_join(struct insp *in, struct helper *h)
{
	struct prer *p = in->pre;

	pthread_mutex_lock(&p->mu);
	p->join = h;
	if (h) {
		p->join_gen++;
		pthread_cond_broadcast(&p->cond);
	}
	while (h && in->test && in->test->join &&
	       (p->joined_gen != p->join_gen || p->joined))
		pthread_cond_wait(&p->cond, &p->mu);
	while (!h && p->joined)
		pthread_cond_wait(&p->cond, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

/* Let go of a stopped pre-reader and of what the walk did not take. */
static void prer_free(struct prer *p)
{
	size_t k;

	for (k = 0; p->v && k < p->n; k++)
		preslot_clear(&p->v[k]);
	ahead_clear(&p->take);
	reader_release(&p->rd);
	free(p->f);
	free(p->v);
	free(p->state);
	free(p->of);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* Have the pre-reader, if any, stop reading, and wait until it has. */
static void prer_quit(struct insp *in)
{
	struct prer *p = in->pre;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	__atomic_store_n(&p->quit, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&p->cond);
	while (!__atomic_load_n(&p->over, __ATOMIC_RELAXED))
		pthread_cond_wait(&p->cond, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

/*
 * Stop the pre-reader; with `rest`, leave it that to let go of, and
 * itself, once it reads no more (the input is the caller's, and gone
 * after the inspection returns): 1.  Else join it and let go of it: 0.
 */
static int prer_stop(struct insp *in, struct insp *rest)
{
	struct prer *p = in->pre;

	if (!p)
		return 0;
	prer_quit(in);
	in->pre = NULL;
	if (rest && pthread_detach(p->thread))
		rest = NULL;
	pthread_mutex_lock(&p->mu);
	run_note(in, &p->rd); /* it reads no more */
	p->rest = rest;
	p->told = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->mu);
	if (rest)
		return 1; /* p is the pre-reader's now */
	pthread_join(p->thread, NULL);
	prer_free(p);
	return 0;
}

/*
 * The pre-reader's slot for entry idx, or NULL when it has none (or has
 * not built them yet).
 */
static size_t prer_slot(const struct insp *in, zip_uint64_t idx)
{
	const struct prer *p = in->pre;

	if (!p || !__atomic_load_n(&p->ready, __ATOMIC_ACQUIRE) ||
	    idx >= p->count)
		return 0;
	return p->of[idx];
}

/*
 * Entry idx, about to be listed for reading ahead (ahead_plan): 1 when
 * the pre-reader has it (read or being read: load_class takes it), else
 * 0, and from now on the walk has it.
 */
static int prer_has(struct insp *in, zip_uint64_t idx)
{
	size_t k = prer_slot(in, idx);
	unsigned st = PRE_FREE;

	if (!k)
		return 0;
	if (__atomic_compare_exchange_n(&in->pre->state[k - 1], &st, PRE_WALK,
					0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	return st != PRE_WALK;
}

/*
 * 1 if the index reads entry idx where the pre-reader read record f[k]:
 * both were built from the one directory, and the index holds only the
 * entries that the archive's judge describes as their records do.
 */
static int prer_agrees(const struct insp *in, size_t k, zip_uint64_t idx)
{
	return in->at && in->at[idx] == in->pre->f[k].pos;
}

/*
 * Class entry idx as the pre-reader read it, for load_class to take
 * (waiting if it is being read), if libzip sees the entry as the
 * pre-reader did; else NULL, and the walk reads it itself.
 */
static struct ahead *prer_take(struct insp *in, zip_uint64_t idx)
{
	size_t k = prer_slot(in, idx);
	unsigned st = PRE_FREE;
	struct prer *p = in->pre;
	struct preslot *v;
	struct ahead *a;

	if (!k--)
		return NULL;
	if (__atomic_compare_exchange_n(&p->state[k], &st, PRE_WALK, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return NULL;
	while (st == PRE_BUSY) {
		sched_yield();
		st = __atomic_load_n(&p->state[k], __ATOMIC_ACQUIRE);
	}
	if (st != PRE_DONE)
		return NULL; /* the walk's already */
	__atomic_store_n(&p->state[k], PRE_WALK, __ATOMIC_RELAXED);
	v = &p->v[k];
	if (!v->done)
		return NULL;
	__atomic_fetch_sub(&p->held, 1, __ATOMIC_RELAXED);
	if (!prer_agrees(in, k, idx)) {
		preslot_clear(v);
		return NULL;
	}
	a = &p->take;
	ahead_clear(a);
	a->e.idx = idx;
	a->t = v->t;
	a->len = v->len;
	a->done = 1;
	memset(v, 0, sizeof(*v));
	if (in->test)
		in->test->npre++;
	return a;
}

/*
 * The JAR's class `iname`, read and parsed on first use: 0 and *out (the
 * inspection owns it), or 0 and *out = NULL when the JAR does not hold
 * it; STOP when it is damaged or a cap is hit; -errno.
 */
static int load_name(struct insp *in, struct name *r, struct jclass **out)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	const char *iname = r->key;
	struct jclass *jc = NULL;
	struct ahead *a;
	char entry[CMFS_ERR_MSG];
	char *why = NULL;
	zip_uint64_t idx;
	size_t len;
	void *p;
	int rc;

	*out = r->jc;
	if (r->jc)
		return 0;
	/* One listed ahead was found in the JAR when it was listed. */
	a = ahead_of(in, r);
	if (a)
		idx = a->e.idx;
	else if (!name_entry(r, &idx))
		return 0;
	if (in->ncls >= in->lim.max_classes)
		return fail(in, -EFBIG,
			    "the factories reach more than %zu classes of the "
			    "JAR (the limit)",
			    in->lim.max_classes);
	/* Or one the pre-reader read (by the reachability
	 * walk: the factories and their supertypes are read whole, for the
	 * identifier walks). */
	if (!a && in->reaching)
		a = prer_take(in, idx);
	/* Caps first, then bytes, then the class, then its name: a class
	 * file must declare the class its entry name says (the JVM's
	 * NoClassDefFoundError "wrong name"). */
	jc = pool_get(in, (sizeof(*jc) + 15) & ~(size_t)15);
	if (!jc) {
		rc = -ENOMEM;
		goto out;
	}
	memset(jc, 0, sizeof(*jc));
	jc->name = iname;
	if (a && a->done) {
		/* Read ahead: counted, capped and judged here, in order. */
		jc->refs = a->t.refs;
		jc->nrefs = a->t.nrefs;
		jc->refs_err = a->t.refs_err;
		jc->refs_ready = 1;
		jc->super = a->t.super;
		jc->ifaces = a->t.ifaces;
		a->t.refs = NULL;
		a->t.refs_err = NULL;
		a->t.super = NULL;
		a->t.ifaces = NULL;
		a->done = 0;
		rc = 0;
		in->inflated += a->len;
		if (in->test)
			in->test->nfast++;
		if (in->inflated > in->lim.max_inflated)
			rc = over_inflated(in);
		else if (a->t.why)
			rc = fail(in, -ENOEXEC, "%s", a->t.why);
		if (rc)
			goto out;
	} else {
		snprintf(entry, sizeof(entry), "%s.class", iname);
		rc = read_entry(in, idx, entry, in->lim.max_entry_size,
				&jc->bytes, &len);
		if (rc)
			goto out;
		rc = classfile_parse(&jc->cf, jc->bytes, len, &e);
		if (rc == -EINVAL)
			rc = fail(in, -ENOEXEC, "class file %s: %s", entry,
				  e.msg);
		if (!rc)
			rc = class_check(jc->cf, iname, &jc->super, &jc->ifaces,
					 &why);
		if (rc == 1)
			rc = fail(in, -ENOEXEC, "%s", why);
		if (rc)
			goto out;
	}
	p = grow_array(in->cls, in->ncls, &in->acls, sizeof(*in->cls));
	if (!p) {
		rc = -ENOMEM;
		goto out;
	}
	in->cls = p;
	in->cls[in->ncls++] = jc;
	r->jc = jc;
	*out = jc;
	jc = NULL;
out:
	free(why);
	jclass_clear(jc);
	return rc;
}

/* load_name() by the class's internal name. */
static int load_class(struct insp *in, const char *iname, struct jclass **out)
{
	struct name *r = name_add(in, iname, strlen(iname));

	*out = NULL;
	return r ? load_name(in, r, out) : -ENOMEM;
}

/* The kind bits that an external supertype's name gives. */
static unsigned known_bits(const char *iname)
{
	unsigned bits = 0;
	size_t i;

	for (i = 0; connector_types[i]; i++)
		if (!strcmp(iname, connector_types[i]))
			bits |= BIT_CONNECTOR;
	for (i = 0; format_types[i]; i++)
		if (!strcmp(iname, format_types[i]))
			bits |= BIT_FORMAT;
	return bits;
}

static int walk_kind(struct insp *in, struct jclass *jc, unsigned depth);

/* Add to jc's bits those its supertype `name` brings. */
static int super_bits(struct insp *in, struct jclass *jc, const char *name,
		      unsigned depth)
{
	struct jclass *sc;
	int rc;

	jc->bits |= known_bits(name);
	rc = load_class(in, name, &sc);
	if (!rc && sc)
		rc = walk_kind(in, sc, depth + 1);
	if (!rc && sc)
		jc->bits |= sc->bits;
	return rc;
}

/*
 * Walk jc's supertypes depth-first, through the JAR's classes, gathering
 * kind bits.  A class met again while its own walk is on the stack is a
 * cyclic hierarchy (the JVM's ClassCircularityError); a path longer than
 * max_depth is a cap.  Once this returns 0 for a class, its supertype
 * graph is known to be acyclic and shallow, so the other walks below can
 * recurse over it without checks of their own.
 */
static int walk_kind(struct insp *in, struct jclass *jc, unsigned depth)
{
	char dots[CMFS_ERR_MSG];
	size_t i;
	int rc = 0;

	if (jc->walk == WALK_DONE)
		return 0;
	name_copy(dots, sizeof(dots), jc->name, '/', '.');
	if (jc->walk == WALK_ACTIVE)
		return fail(in, -ENOEXEC, "class %s: cyclic class hierarchy",
			    dots);
	if (depth > in->max_depth)
		return fail(in, -EFBIG,
			    "class %s: class hierarchy deeper than %u (the "
			    "limit)",
			    dots, in->max_depth);
	jc->walk = WALK_ACTIVE;
	if (jc->super)
		rc = super_bits(in, jc, jc->super, depth);
	for (i = 0; !rc && jc->ifaces[i]; i++)
		rc = super_bits(in, jc, jc->ifaces[i], depth);
	if (!rc)
		jc->walk = WALK_DONE;
	return rc;
}

/* ------------------------------------------------------------------ */
/* factoryIdentifier().                                                */

/* 1 if m can be selected for an interface call: a concrete instance one. */
static int concrete(const struct classfile_member *m)
{
	return m &&
	       !(m->access & (CLASSFILE_ACC_STATIC | CLASSFILE_ACC_PRIVATE |
			      CLASSFILE_ACC_ABSTRACT));
}

/* What resolve_field() found. */
enum { FIELD_NONE, FIELD_FOUND, FIELD_OPAQUE };

/*
 * Find field `name` of type String as getstatic resolves it (JVMS
 * 5.4.3.2): in c, then its superinterfaces, then its superclass.  *res is
 * FIELD_FOUND (with *owner and *f), FIELD_NONE, or FIELD_OPAQUE when an
 * external type in the way might declare it.  0, STOP or -errno.
 */
static int resolve_field(struct insp *in, struct jclass *c, const char *name,
			 int *res, struct jclass **owner,
			 const struct classfile_member **f)
{
	struct jclass *sc;
	size_t i;
	int rc;

	*res = FIELD_NONE;
	if (c->mark == in->gen) /* searched already, in vain */
		return 0;
	c->mark = in->gen;
	*f = classfile_field(c->cf, name, STRING_DESC);
	if (*f) {
		*owner = c;
		*res = FIELD_FOUND;
		return 0;
	}
	for (i = 0; c->ifaces[i]; i++) {
		rc = load_class(in, c->ifaces[i], &sc);
		if (!rc && sc)
			rc = resolve_field(in, sc, name, res, owner, f);
		else if (!rc)
			*res = FIELD_OPAQUE;
		if (rc || *res != FIELD_NONE)
			return rc;
	}
	if (!c->super || !strcmp(c->super, "java/lang/Object"))
		return 0;
	rc = load_class(in, c->super, &sc);
	if (!rc && sc)
		rc = resolve_field(in, sc, name, res, owner, f);
	else if (!rc)
		*res = FIELD_OPAQUE;
	return rc;
}

/*
 * The constant behind `getstatic #idx; areturn` in class c: the field must
 * be a static final String of a JAR class with a ConstantValue.
 * 0 (with *out, or unknown), STOP or -errno.
 */
static int field_value(struct insp *in, struct jclass *c, unsigned idx,
		       char **out)
{
	const struct classfile *cf = c->cf;
	const struct classfile_const *fr = &cf->cp[idx];
	const struct classfile_const *nat = &cf->cp[fr->b];
	const struct classfile_member *f = NULL;
	char *cname = NULL, *fname = NULL;
	struct jclass *fc, *owner = NULL;
	int rc, res;

	if (!classfile_utf8_eq(cf, nat->b, STRING_DESC))
		return 0;
	rc = classfile_class_name(&cname, cf, fr->a, NULL);
	if (!rc)
		rc = classfile_utf8(&fname, cf, nat->a, NULL);
	if (rc)
		goto out;
	/* The field's class may be any JAR class: prove its hierarchy
	 * finite before resolve_field() recurses over it. */
	rc = load_class(in, cname, &fc);
	if (!rc && fc)
		rc = walk_kind(in, fc, 0);
	if (rc || !fc)
		goto out;
	in->gen++;
	rc = resolve_field(in, fc, fname, &res, &owner, &f);
	if (!rc && res == FIELD_FOUND) {
		if ((f->access & CLASSFILE_ACC_STATIC) &&
		    (f->access & CLASSFILE_ACC_FINAL) && f->constant &&
		    owner->cf->cp[f->constant].tag == CLASSFILE_STRING)
			rc = classfile_string(out, owner->cf, f->constant,
					      NULL);
	}
out:
	free(cname);
	free(fname);
	/* A name that cannot be read only makes the identifier unknown. */
	return rc == -EINVAL ? 0 : rc;
}

/* Judge method m of class c: does it return a constant string? */
static int method_value(struct insp *in, struct jclass *c,
			const struct classfile_member *m, char **out)
{
	unsigned idx = 0;
	int rc = 0;

	switch (classfile_const_return(c->cf, m, &idx)) {
	case CLASSFILE_RET_STRING:
		rc = classfile_string(out, c->cf, idx, NULL);
		break;
	case CLASSFILE_RET_FIELD:
		rc = field_value(in, c, idx, out);
		break;
	case CLASSFILE_RET_OTHER:
		break;
	}
	return rc == -EINVAL ? 0 : rc;
}

/* Candidate default methods: the interfaces that declare one. */
struct cands {
	struct jclass **v;
	size_t n, alloc;
	int opaque; /* an external interface might declare one too */
};

/*
 * Gather the superinterfaces of c (transitively; each once per walk) that
 * declare a concrete factoryIdentifier().  External interfaces of Java or
 * of Flink's factory package are known not to; any other makes the
 * answer opaque.
 */
static int collect_defaults(struct insp *in, struct jclass *c, struct cands *cs)
{
	struct jclass *ic;
	size_t i;
	void *p;
	int rc;

	for (i = 0; c->ifaces[i]; i++) {
		const char *name = c->ifaces[i];

		rc = load_class(in, name, &ic);
		if (rc)
			return rc;
		if (!ic) {
			if (strncmp(name, "java/", 5) &&
			    strncmp(name, "org/apache/flink/table/factories/",
				    33))
				cs->opaque = 1;
			continue;
		}
		if (ic->mark == in->gen)
			continue;
		ic->mark = in->gen;
		if (concrete(classfile_method(ic->cf, ID_METHOD, ID_DESC))) {
			p = grow_array(cs->v, cs->n, &cs->alloc,
				       sizeof(*cs->v));
			if (!p)
				return -ENOMEM;
			cs->v = p;
			cs->v[cs->n++] = ic;
		}
		rc = collect_defaults(in, ic, cs);
		if (rc)
			return rc;
	}
	return 0;
}

/* 1 if interface `sup` is a superinterface of `sub` (a fresh walk). */
static int extends_iface(struct insp *in, struct jclass *sub,
			 struct jclass *sup)
{
	struct jclass *ic;
	struct name *r;
	size_t i;

	for (i = 0; sub->ifaces[i]; i++) {
		const char *name = sub->ifaces[i];

		/* All were loaded by collect_defaults(), if in the JAR. */
		r = name_get(in, name, strlen(name));
		if (!r || !r->jc)
			continue;
		ic = r->jc;
		if (ic == sup)
			return 1;
		if (ic->mark == in->gen)
			continue;
		ic->mark = in->gen;
		if (extends_iface(in, ic, sup))
			return 1;
	}
	return 0;
}

/*
 * No class in the chain implements factoryIdentifier(): the JVM takes
 * the one maximally-specific default method of the superinterfaces
 * (JVMS 5.4.3.3), if there is exactly one.
 */
static int default_value(struct insp *in, struct jclass *fc, char **out)
{
	struct cands cs = {NULL, 0, 0, 0};
	struct jclass *c = fc, *pick = NULL;
	size_t i, j, kept = 0;
	int rc = 0;

	/* The superinterfaces of the class and of all its superclasses,
	 * which factory_identifier() found all in the JAR. */
	in->gen++;
	while (c && !rc) {
		rc = collect_defaults(in, c, &cs);
		if (!rc && c->super)
			rc = load_class(in, c->super, &c);
		else
			c = NULL;
	}
	/* Maximally specific: no other candidate extends it. */
	for (i = 0; i < cs.n && !rc; i++) {
		int specific = 1;

		for (j = 0; j < cs.n && specific; j++) {
			in->gen++;
			if (j != i && extends_iface(in, cs.v[j], cs.v[i]))
				specific = 0;
		}
		if (specific) {
			kept++;
			pick = cs.v[i];
		}
	}
	if (!rc && kept == 1 && !cs.opaque)
		rc = method_value(
			in, pick,
			classfile_method(pick->cf, ID_METHOD, ID_DESC), out);
	free(cs.v);
	return rc;
}

/*
 * The identifier of factory class fc, when its factoryIdentifier() is a
 * constant: selected as invokeinterface would (the class, then its
 * superclasses, skipping abstract methods; then default methods).
 * 0 with *out set or NULL (unknown), STOP or -errno.
 */
static int factory_identifier(struct insp *in, struct jclass *fc, char **out)
{
	const struct classfile_member *m;
	struct jclass *c = fc;
	int rc;

	*out = NULL;
	/* Bounded: walk_kind() has proved the superclass chain finite. */
	for (;;) {
		m = classfile_method(c->cf, ID_METHOD, ID_DESC);
		if (concrete(m))
			return method_value(in, c, m, out);
		if (!c->super || !strcmp(c->super, "java/lang/Object"))
			break;
		rc = load_class(in, c->super, &c);
		if (rc)
			return rc;
		if (!c) /* an external superclass may implement it */
			return 0;
	}
	return default_value(in, fc, out);
}

/* ------------------------------------------------------------------ */
/* Reach and report.                                                   */

/* Queue class jc for the reachability walk, once. */
static int enqueue(struct insp *in, struct jclass *jc)
{
	void *p;

	if (jc->reached)
		return 0;
	p = grow_array(in->queue, in->nqueue, &in->aqueue, sizeof(*in->queue));
	if (!p)
		return -ENOMEM;
	in->queue = p;
	in->queue[in->nqueue++] = jc;
	jc->reached = 1;
	return 0;
}

/* Record class r as external, once. */
static int add_external(struct insp *in, struct name *r)
{
	char *d;
	void *p;

	if (r->external)
		return 0;
	p = grow_array(in->ext, in->next, &in->aext, sizeof(*in->ext));
	if (!p)
		return -ENOMEM;
	in->ext = p;
	d = strdup(r->key);
	if (!d)
		return -ENOMEM;
	in->ext[in->next++] = d;
	r->external = 1;
	return 0;
}

/*
 * Take the classes that queued class jc names, or why they cannot be
 * taken, and let its bytes go: nothing reads a class once the identifier
 * walks are done, and a wide JAR queues thousands of classes at a time,
 * better as lists of names than as class files.  0 or -ENOMEM.
 */
static int take_refs(struct jclass *jc)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	int rc = jc->refs_ready
			 ? 0
			 : classfile_refs(&jc->refs, &jc->nrefs, jc->cf, &e);

	if (rc == -EINVAL && !(jc->refs_err = strdup(e.msg)))
		rc = -ENOMEM;
	else if (rc == -EINVAL)
		rc = 0;
	classfile_free(jc->cf);
	jc->cf = NULL;
	free(jc->bytes);
	jc->bytes = NULL;
	return rc;
}

/*
 * The record of queued class jc's i-th name.  ahead_plan looks each one
 * up first and leaves its record in the name's place (jc->named): a wide
 * JAR's walk meets some 600,000 names, and a look-up is a cache miss or
 * two.  (A char * holds any object pointer, and gives it back.)
 */
static struct name *ref_name(struct insp *in, struct jclass *jc, size_t i)
{
	if (jc->named)
		return (struct name *)(void *)jc->refs[i];
	return name_add(in, jc->refs[i], strlen(jc->refs[i]));
}

/*
 * List the classes that the walk, from queue[from] on, is about to read
 * (the names those classes refer to, first mention first, that are the
 * JAR's and not read yet), and read them.  Whole classes' lists only,
 * up to AHEAD_MAX or AHEAD_BYTES (one class's alone may pass them):
 * *to is the queue position to list from next.  0 or -ENOMEM.
 */
static int ahead_plan(struct insp *in, size_t from, size_t *to)
{
	uint64_t bytes = 0;
	size_t i, j, mark = 0;
	int rc, inert;

	ahead_drop(in);
	for (i = from; i < in->nqueue; i++) {
		struct jclass *jc = in->queue[i];

		/* A factory's names are taken when the walk gets to it;
		 * taken now, they come out the same. */
		if (jc->cf && (rc = take_refs(jc)))
			return rc;
		mark = in->nahead;
		inert = 1;
		for (j = 0; j < jc->nrefs; j++) {
			struct name *r = ref_name(in, jc, j);
			struct ahead *a;
			zip_uint64_t idx;
			zip_stat_t st;
			void *p;

			if (!r)
				return -ENOMEM;
			jc->refs[j] = (char *)r;
			/* Flags only go from 0 to 1: what is done now stays
			 * done when the walk gets to this class. */
			inert &= r->external ||
				 (r->jc && r->jc->reached && !r->jc->cf);
			if (r->external || r->jc || ahead_of(in, r))
				continue;
			rc = name_entry(r, &idx);
			if (rc && prer_has(in, idx))
				continue;
			if (!rc || entry_stat(in, idx, &st) < 0 ||
			    !(st.valid & ZIP_STAT_SIZE) ||
			    st.size > in->lim.max_entry_size)
				continue;
			p = grow_array(in->ahead, in->nahead, &in->aahead,
				       sizeof(*in->ahead));
			if (!p)
				return -ENOMEM;
			in->ahead = p;
			a = &in->ahead[in->nahead];
			memset(a, 0, sizeof(*a));
			spot_of(in, idx, &a->e);
			a->st = st;
			a->iname = r->key;
			in->nlisted = ++in->nahead;
			r->planned = in->nahead;
			r->batch = in->batch;
			bytes += st.size;
		}
		jc->named = 1;
		jc->inert = inert;
		if (i > from &&
		    (in->nahead > AHEAD_MAX || bytes > AHEAD_BYTES)) {
			/* Not this class's: the next list starts with it.
			 * (Their names stay, as the map's keys, until
			 * ahead_drop.) */
			in->nahead = mark;
			break;
		}
	}
	*to = i < in->nqueue ? (i > from ? i : i + 1) : in->nqueue;
	return in->nahead ? ahead_run(in) : 0;
}

/*
 * Breadth-first from the queued factories: each class named by a reached
 * class is either the JAR's (read and queued) or external (recorded).
 */
static int reach(struct insp *in)
{
	struct jclass *jc, *rc_cls;
	size_t head, i, planned_to = 0;
	int rc = 0;

	/*
	 * The queue grows while it is walked: a JAR class named for the
	 * first time is read (load_class), appended, and kept as the names
	 * it names (take_refs); a bad name among them is reported when the
	 * walk gets to it, as though they were taken then.  Names already
	 * known external are skipped without building an entry name.
	 */
	in->reaching = 1;
	for (head = 0; head < in->nqueue && !rc; head++) {
		/* Read ahead what the queued classes name (ahead_plan). */
		if (head == planned_to && !(in->test && in->test->no_ahead) &&
		    (rc = ahead_plan(in, head, &planned_to)))
			return rc;
		jc = in->queue[head];
		rc = jc->cf ? take_refs(jc) : 0;
		if (rc)
			return rc;
		if (jc->refs_err)
			return fail(in, -ENOEXEC, "class file %s.class: %s",
				    jc->name, jc->refs_err);
		for (i = 0; i < jc->nrefs && !rc && !jc->inert; i++) {
			struct name *r = ref_name(in, jc, i);

			if (!r)
				return -ENOMEM;
			if (r->external)
				continue;
			rc = load_name(in, r, &rc_cls);
			if (!rc && rc_cls)
				rc = enqueue(in, rc_cls);
			if (!rc && rc_cls && rc_cls->cf)
				rc = take_refs(rc_cls);
			else if (!rc && !rc_cls)
				rc = add_external(in, r);
		}
		/* Once the pre-reader's pass is over, little is allocated
		 * that could reuse the memory, and ~15,000 frees of its
		 * blocks (another thread's arena: a lock each) were 3 ms of
		 * the walk's tail: insp_free() lets go of them, on the
		 * pre-reader's thread after the inspection returns. */
		if (jc->inert && prer_over(in))
			continue;
		classfile_names_free(jc->refs);
		jc->refs = NULL;
		jc->nrefs = 0;
	}
	return rc;
}

/* qsort() order: by bytes, so by code point for UTF-8 names. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Hand the external classes to the report: dotted, sorted. */
static int report_external(struct insp *in)
{
	size_t i;

	for (i = 0; i < in->next; i++) {
		char *p;

		for (p = in->ext[i]; *p; p++)
			if (*p == '/')
				*p = '.';
	}
	qsort(in->ext, in->next, sizeof(*in->ext), cmp_str);
	in->rep->external = in->ext;
	in->rep->nexternal = in->next;
	in->ext = NULL;
	in->next = in->aext = 0;
	return 0;
}

/* The service file's class names: 0 and *names, STOP or -errno. */
static int read_service(struct insp *in, char ***names, size_t *n)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	uint8_t *data = NULL;
	uintptr_t idx;
	size_t len;
	int rc;

	if (!map_get(&in->entries, JAR_SERVICE_FILE, strlen(JAR_SERVICE_FILE),
		     &idx))
		return fail(in, -ENOEXEC,
			    "the JAR has no factory service file: when "
			    "shading, merge service files");
	rc = read_entry(in, (zip_uint64_t)idx, JAR_SERVICE_FILE,
			in->lim.max_service_size, &data, &len);
	if (rc)
		return rc;
	rc = jar_service_parse(names, n, (const char *)data, len, &e);
	free(data);
	if (rc == -EINVAL)
		return fail(in, -ENOEXEC, "the JAR's factory service file: %s",
			    e.msg);
	if (rc)
		return rc;
	if (*n == 0) {
		jar_names_free(*names);
		*names = NULL;
		return fail(in, -ENOEXEC,
			    "the JAR's factory service file is empty: when "
			    "shading, merge service files");
	}
	return 0;
}

/* Each listed factory: its class, kind and identifier, in file order. */
static int inspect_factories(struct insp *in)
{
	struct jar_report *rep = in->rep;
	char **names = NULL, *iname = NULL;
	struct jar_factory *f;
	struct jclass *jc;
	size_t n = 0, i;
	int rc;

	rc = read_service(in, &names, &n);
	if (rc)
		return rc;
	rep->factories = calloc(n, sizeof(*rep->factories));
	if (!rep->factories) {
		rc = -ENOMEM;
		goto out;
	}
	/*
	 * A binary name becomes an internal name by its dots alone: `$` of a
	 * nested class stays, as in the entry name.  Each factory is read,
	 * walked for its kind (which also proves its hierarchy finite), and
	 * only then asked for its identifier.
	 */
	for (i = 0; i < n && !rc; i++) {
		free(iname);
		iname = name_dup(names[i], '.', '/');
		if (!iname) {
			rc = -ENOMEM;
			break;
		}
		rc = load_class(in, iname, &jc);
		if (!rc && !jc)
			rc = fail(in, -ENOEXEC,
				  "factory class %s is listed in the service "
				  "file but not in the JAR",
				  names[i]);
		if (!rc)
			rc = walk_kind(in, jc, 0);
		if (rc)
			break;
		f = &rep->factories[rep->nfactories];
		f->kind = jc->bits & BIT_CONNECTOR ? JAR_KIND_CONNECTOR
			  : jc->bits & BIT_FORMAT  ? JAR_KIND_FORMAT
						   : JAR_KIND_OTHER;
		rc = factory_identifier(in, jc, &f->identifier);
		if (rc)
			break;
		f->cls = strdup(names[i]);
		if (!f->cls) {
			free(f->identifier);
			f->identifier = NULL;
			rc = -ENOMEM;
			break;
		}
		rep->nfactories++;
		rc = enqueue(in, jc);
	}
out:
	free(iname);
	jar_names_free(names);
	return rc;
}

/*
 * Let go of what the walk built, libzip's archive too (no threads).  Its
 * source's callback is not called with the input again but for CLOSE and
 * FREE, which do not touch it: it may be gone by now (insp_release).
 */
static void insp_free(struct insp *in)
{
	size_t i;

	if (in->za)
		zip_discard(in->za);
	in->za = NULL;
	for (i = 0; i < in->ncls; i++)
		jclass_clear(in->cls[i]);
	free(in->cls);
	free(in->queue);
	for (i = 0; i < in->next; i++)
		free(in->ext[i]);
	free(in->ext);
	map_release(&in->entries);
	free(in->at);
	free(in->rec);
	free(in->lok);
	free(in->cd);
	ahead_drop(in);
	free(in->ahead);
	free(in->runs);
	free(in->order);
	names_release(in); /* the classes' names were the records' */
}

/*
 * Free what an inspection holds besides the report.  A wide JAR's walk
 * built some 100,000 allocations, and libzip's archive some 80,000 more:
 * a pre-reader, if there is one, lets go of them after the inspection has
 * returned (its thread is idle by then; the frees took 5 % of a shaded
 * JAR's inspection, and libzip's discard 4 ms more).
 */
static void insp_release(struct insp *in)
{
	struct insp *rest = NULL;

	helper_stop(in);
	run_note(in, &in->rd);
	reader_release(&in->rd);
	if (in->pre && (rest = malloc(sizeof(*rest)))) {
		*rest = *in;
		rest->pre = NULL;
		rest->rep = NULL;
	}
	if (prer_stop(in, rest))
		return; /* `in` keeps its report and nothing else */
	free(rest);
	insp_free(in);
}

/* inspect_once(): a local header disagrees with its record, zipdir's
 * verdict does not stand, and libzip must judge the archive. */
#define AGAIN 2

/*
 * zipdir judged the directory's records (in->locals), and the readers the
 * local headers they read: judge the rest, the walk over.  1 when every
 * one agrees with its record (the archive is clean), 0 when one does not
 * (then libzip must judge it), -ENOMEM or -EIO.
 */
static int settle_locals(struct insp *in)
{
	struct headers hj = {in, 0, 0, 1};
	struct prer *p = in->pre;
	int rc;

	/* What it has judged is final once it reads no more; the helpers'
	 * and its lists of the walk's were over before the walk went on. */
	prer_quit(in);
	in->locals = 0;
	/* Eight chunks: a shaded JAR that reaches a tenth of its classes
	 * leaves 18,000 headers here, 14 ms on one thread. */
	hj.chunk = (size_t)(in->plain.count + 7) / 8;
	if (p) {
		pthread_mutex_lock(&p->mu);
		p->heads = &hj;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->mu);
	}
	/* (The test knob: the pre-reader judges them all.) */
	if (!p || !in->test || !in->test->heads_pre)
		headers_judge(&hj, in->src);
	if (p) { /* hj is on this stack: taken back, or waited for */
		pthread_mutex_lock(&p->mu);
		while (in->test && in->test->heads_pre && p->heads == &hj)
			pthread_cond_wait(&p->cond, &p->mu);
		if (p->heads == &hj)
			p->heads = NULL;
		while (p->judging)
			pthread_cond_wait(&p->cond, &p->mu);
		pthread_mutex_unlock(&p->mu);
	}
	rc = __atomic_load_n(&hj.rc, __ATOMIC_RELAXED);
	if (rc == 1 && in->test)
		in->test->zipdir = 1;
	if (rc == -EIO)
		return cmfs_err_set(in->err, -EIO, "cannot read the archive");
	return rc;
}

/* Take chunks of hj's headers until none are left or one is amiss. */
static void headers_judge(struct headers *hj, struct input *src)
{
	const struct insp *in = hj->in;
	size_t n = (size_t)in->plain.count, c, i, end;
	uint8_t *buf = malloc(ZIPDIR_LOCAL_MAX);
	int rc = buf ? 1 : -ENOMEM, one = 1;

	while (rc == 1 && __atomic_load_n(&hj->rc, __ATOMIC_RELAXED) == 1 &&
	       (c = __atomic_fetch_add(&hj->next, 1, __ATOMIC_RELAXED)) <
		       (n + hj->chunk - 1) / hj->chunk) {
		end = (c + 1) * hj->chunk < n ? (c + 1) * hj->chunk : n;
		for (i = c * hj->chunk; i < end && rc == 1; i++)
			if (!__atomic_load_n(&in->lok[i], __ATOMIC_RELAXED))
				rc = zipdir_local_read(in->cd + in->rec[i], buf,
						       plain_read, src);
	}
	if (rc != 1) /* the first one met stands */
		__atomic_compare_exchange_n(&hj->rc, &one, rc, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	free(buf);
}

/*
 * The inspection proper, over any input; `t` may be NULL.  0, AGAIN, or
 * -errno.
 */
static int inspect_once(struct jar_report **out, struct input *src,
			const struct jar_limits *lim, struct jar_test *t,
			int no_plain, struct cmfs_err *err)
{
	struct insp in;
	int rc;

	memset(&in, 0, sizeof(in));
	in.src = src;
	in.err = err;
	in.test = t;
	in.no_plain = no_plain;
	if (lim)
		in.lim = *lim;
	else
		jar_limits_default(&in.lim);
	in.max_depth = in.lim.max_depth < DEPTH_CEILING ? in.lim.max_depth
							: DEPTH_CEILING;
	in.rd.src = src;
	in.rd.cap = in.lim.max_entry_size;
	in.rep = calloc(1, sizeof(*in.rep));
	if (!in.rep)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	/* Each step runs only if the one before found nothing wrong: STOP
	 * (the report has its error) and errors skip the rest alike. */
	rc = open_archive(&in);
	if (!rc && t && t->later) { /* the file changes under us */
		src->mem = t->later;
		src->size = t->later_len;
	}
	if (!rc)
		rc = inspect_factories(&in);
	if (!rc)
		rc = reach(&in);
	if (!rc)
		rc = report_external(&in);
	/* Whatever was found stands only if the archive is clean. */
	if (in.locals && rc != -ENOMEM) {
		int clean = settle_locals(&in);

		rc = clean == 0 ? AGAIN : clean < 0 ? clean : rc;
	}
	insp_release(&in);
	if (rc < 0 || rc == AGAIN) {
		jar_report_free(in.rep);
		return rc == AGAIN ? AGAIN
				   : cmfs_err_set(err, rc, "%s", strerror(-rc));
	}
	*out = in.rep;
	return 0;
}

static int inspect(struct jar_report **out, struct input *src,
		   const struct jar_limits *lim, struct jar_test *t,
		   struct cmfs_err *err)
{
	int rc = inspect_once(out, src, lim, t, 0, err);

	if (rc != AGAIN)
		return rc;
	/* A local header does not agree with its record (a damaged
	 * archive, or one that changed while it was read): libzip's
	 * verdict, as though zipdir had never judged it. */
	cmfs_err_clear(err);
	if (t) { /* what it counts is the second try's */
		t->again = 1;
		t->zipdir = 0;
		t->nfast = t->npre = t->njoined = 0;
	}
	return inspect_once(out, src, lim, t, 1, err);
}

int jar_inspect_fd(struct jar_report **out, int fd,
		   const struct jar_limits *lim, struct cmfs_err *err)
{
	struct input src;
	struct stat st;
	uint8_t *whole = NULL;
	size_t got;
	int rc;

	if (fstat(fd, &st))
		return cmfs_err_set(err, -EIO, "cannot stat the archive: %s",
				    strerror(errno));
	/* pread() needs a file: a pipe or a socket is not an upload. */
	if (!S_ISREG(st.st_mode))
		return cmfs_err_set(err, -EINVAL,
				    "not a zip archive: not a regular file");
	memset(&src, 0, sizeof(src));
	src.fd = fd;
	src.size = (uint64_t)st.st_size;
	/* A JAR that fits the window is read once, and then from memory:
	 * most uploads are a few KiB, and their directory, service file and
	 * factory cost a pread each otherwise. */
	if (src.size <= WINDOW) {
		whole = malloc(src.size ? (size_t)src.size : 1);
		/* If it shrank, what was read is the JAR. */
		if (whole &&
		    !pread_full(fd, whole, (size_t)src.size, 0, &got)) {
			src.mem = whole;
			src.size = got;
			src.fd = -1;
		}
	}
	/* Without a window, every read is a pread. */
	if (src.fd >= 0)
		src.win = malloc(WINDOW);
	zip_error_init(&src.error);
	rc = inspect(out, &src, lim, NULL, err);
	zip_error_fini(&src.error);
	free(src.win);
	free(whole);
	return rc;
}

int jar_inspect_test(struct jar_report **out, const void *data, size_t len,
		     const struct jar_limits *lim, struct jar_test *t,
		     struct cmfs_err *err)
{
	struct input src;
	int rc;

	memset(&src, 0, sizeof(src));
	src.fd = -1;
	src.mem = data;
	src.size = len;
	zip_error_init(&src.error);
	rc = inspect(out, &src, lim, t, err);
	zip_error_fini(&src.error);
	return rc;
}

int jar_inspect_mem(struct jar_report **out, const void *data, size_t len,
		    const struct jar_limits *lim, struct cmfs_err *err)
{
	return jar_inspect_test(out, data, len, lim, NULL, err);
}

int jar_inspect(struct jar_report **out, const char *path,
		const struct jar_limits *lim, struct cmfs_err *err)
{
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* A missing or forbidden file says so; the rest is I/O. */
		rc = errno == ENOENT || errno == EACCES ? -errno : -EIO;
		return cmfs_err_set(err, rc, "%s: %s", path, strerror(errno));
	}
	rc = jar_inspect_fd(out, fd, lim, err);
	close(fd);
	return rc;
}

/* Also frees reports that other modules build (catalog.c reads them back). */
void jar_report_free(struct jar_report *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nfactories; i++) {
		free(r->factories[i].cls);
		free(r->factories[i].identifier);
	}
	free(r->factories);
	for (i = 0; i < r->nexternal; i++)
		free(r->external[i]);
	free(r->external);
	free(r->error);
	free(r);
}

/* The names are those of CMF's sql-artifact-type label (and "other"). */
const char *jar_kind_name(enum jar_kind k)
{
	switch (k) {
	case JAR_KIND_CONNECTOR:
		return "connector";
	case JAR_KIND_FORMAT:
		return "format";
	default:
		return "other";
	}
}

int jar_kind_parse(enum jar_kind *out, const char *s)
{
	static const enum jar_kind all[] = {JAR_KIND_CONNECTOR, JAR_KIND_FORMAT,
					    JAR_KIND_OTHER};
	size_t i;

	for (i = 0; s && i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(s, jar_kind_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* Allowlist and the `cmfs inspect` report.                            */

/*
 * Walk the list once, pattern by pattern, without copying it: each is
 * trimmed of blanks, then matched as a prefix (a trailing `*`) or whole.
 */
int jar_class_allowed(const char *cls, const char *allowlist)
{
	const char *p = allowlist, *end, *s;
	size_t n;

	if (!cls || !p)
		return 0;
	while (*p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		s = p;
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		n = (size_t)(end - s);
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
		if (n && s[n - 1] == '*') {
			if (!strncmp(cls, s, n - 1))
				return 1;
		} else if (n && strlen(cls) == n && !memcmp(cls, s, n)) {
			return 1;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

size_t jar_report_refused(const struct jar_report *r, const char *allowlist)
{
	size_t i, n = 0;

	for (i = 0; i < r->nexternal; i++)
		n += !jar_class_allowed(r->external[i], allowlist);
	return n;
}

/*
 * Append `s` as a JSON string (null for NULL): quotes, backslashes and
 * controls escaped, bytes that are not UTF-8 replaced by U+FFFD.
 */
static int json_str(struct buf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n, at;
	int rc;

	if (!s)
		return buf_adds(b, "null");
	n = strlen(s);
	rc = buf_addc(b, '"');
	while (!rc && i < n) {
		at = i;
		if (u[i] == '"' || u[i] == '\\') {
			rc = buf_printf(b, "\\%c", u[i]);
			i++;
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			rc = buf_printf(b, "\\u%04x", u[i]);
			i++;
		} else if (utf8_next(u, n, &i) < 0) {
			rc = buf_adds(b, "\\ufffd");
			i = at + 1;
		} else {
			rc = buf_add(b, s + at, i - at);
		}
	}
	return rc ? rc : buf_addc(b, '"');
}

/* The report as one JSON object. */
static int format_json(struct buf *b, const struct jar_report *r,
		       const char *allowlist, size_t refused)
{
	size_t i;
	int rc;

	rc = buf_printf(b, "{\"valid_zip\":true,\"entries\":%zu,\"error\":",
			r->nentries);
	if (!rc)
		rc = json_str(b, r->error);
	if (!rc)
		rc = buf_adds(b, ",\"factories\":[");
	for (i = 0; i < r->nfactories && !rc; i++) {
		const struct jar_factory *f = &r->factories[i];

		rc = buf_adds(b, i ? ",{\"class\":" : "{\"class\":");
		if (!rc)
			rc = json_str(b, f->cls);
		if (!rc)
			rc = buf_printf(b, ",\"kind\":\"%s\",\"identifier\":",
					jar_kind_name(f->kind));
		if (!rc)
			rc = json_str(b, f->identifier);
		if (!rc)
			rc = buf_addc(b, '}');
	}
	if (!rc)
		rc = buf_adds(b, "],\"external\":[");
	for (i = 0; i < r->nexternal && !rc; i++) {
		rc = buf_adds(b, i ? ",{\"class\":" : "{\"class\":");
		if (!rc)
			rc = json_str(b, r->external[i]);
		if (!rc && allowlist)
			rc = buf_printf(
				b, ",\"allowed\":%s",
				jar_class_allowed(r->external[i], allowlist)
					? "true"
					: "false");
		if (!rc)
			rc = buf_addc(b, '}');
	}
	if (!rc)
		rc = buf_addc(b, ']');
	if (!rc && allowlist)
		rc = buf_printf(b, ",\"refused\":%zu,\"verdict\":\"%s\"",
				refused,
				r->error || refused ? "refused" : "usable");
	return rc ? rc : buf_adds(b, "}\n");
}

/* The report as aligned lines of text. */
static int format_text(struct buf *b, const struct jar_report *r,
		       const char *allowlist, size_t refused)
{
	size_t i, idw = 7, clw = 0;
	int rc;

	for (i = 0; i < r->nfactories; i++)
		if (r->factories[i].identifier &&
		    strlen(r->factories[i].identifier) > idw)
			idw = strlen(r->factories[i].identifier);
	for (i = 0; i < r->nexternal; i++)
		if (strlen(r->external[i]) > clw)
			clw = strlen(r->external[i]);
	rc = buf_printf(b,
			"archive: valid zip, %zu entries\n"
			"factories: %zu\n",
			r->nentries, r->nfactories);
	for (i = 0; i < r->nfactories && !rc; i++) {
		const struct jar_factory *f = &r->factories[i];

		rc = buf_printf(
			b, "  %-9s %-*s %s\n", jar_kind_name(f->kind), (int)idw,
			f->identifier ? f->identifier : "unknown", f->cls);
	}
	if (!rc)
		rc = buf_printf(b, "external classes: %zu\n", r->nexternal);
	for (i = 0; i < r->nexternal && !rc; i++) {
		if (allowlist)
			rc = buf_printf(
				b, "  %-*s %s\n", (int)clw, r->external[i],
				jar_class_allowed(r->external[i], allowlist)
					? "allowed"
					: "refused");
		else
			rc = buf_printf(b, "  %s\n", r->external[i]);
	}
	if (!rc && r->error)
		rc = buf_printf(b, "error: %s\n", r->error);
	if (rc || !allowlist)
		return rc;
	if (r->error)
		return buf_adds(b, "verdict: refused: the JAR is not a usable "
				   "factory JAR\n");
	if (refused)
		return buf_printf(b,
				  "verdict: refused: %zu external "
				  "class%s outside the allowlist\n",
				  refused, refused == 1 ? "" : "es");
	return buf_adds(b, "verdict: usable\n");
}

int jar_failure_format(struct buf *out, const char *file, const char *msg,
		       int json)
{
	int rc;

	if (!json)
		return buf_printf(out, "%s: not usable: %s\n", file, msg);
	rc = buf_adds(out, "{\"file\":");
	if (!rc)
		rc = json_str(out, file);
	if (!rc)
		rc = buf_adds(out, ",\"valid_zip\":false,\"error\":");
	if (!rc)
		rc = json_str(out, msg);
	return rc ? rc : buf_adds(out, "}\n");
}

/* The verdict counts the refused classes once, for both formats. */
int jar_report_format(struct buf *out, const struct jar_report *r,
		      const char *allowlist, int json)
{
	size_t refused = allowlist ? jar_report_refused(r, allowlist) : 0;

	if (json)
		return format_json(out, r, allowlist, refused);
	return format_text(out, r, allowlist, refused);
}
