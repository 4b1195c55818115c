/*
 * jar.c - the JAR inspector: what a factory JAR offers, read, never run.
 *
 * One inspection is one `struct insp`.  libzip opens the archive with its
 * consistency checks (ZIP_CHECKCONS, read-only) and its verdict on
 * whether the file is a valid zip is the one that stands; we add what it
 * does not check: that the file is a zip from its first byte on, that no
 * two entries share a name (every raw name goes into a hash table), and
 * a cap on the entries an end record declares, weighed before libzip
 * allocates a table that big.  libzip reads the archive through a
 * zip_source of our own that reads with pread() (so a shared fd keeps
 * its offset, and memory and files take the same path), and it reads and
 * inflates every entry, so each verdict on a damaged entry is its own.
 * Then:
 *
 *   1. the service file is inflated and parsed as ServiceLoader would;
 *   2. each listed factory class is read; its supertypes are walked
 *      depth-first through the JAR's classes (three colours, so a cyclic
 *      hierarchy is reported, not followed forever) to find its kind, and
 *      factoryIdentifier() is resolved as the JVM selects it, then judged
 *      constant or not;
 *   3. the classes the factories name are followed breadth-first through
 *      the JAR; the names the JAR does not hold are the external classes.
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
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zip.h>

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

/* ------------------------------------------------------------------ */
/* The state of one inspection.                                        */

enum { WALK_NEW, WALK_ACTIVE, WALK_DONE };

/* A class of the JAR that the inspection has read. */
struct jclass {
	const char *name; /* internal name, "a/b/C", UTF-8 (its record's) */
	uint8_t *bytes;	  /* the class file; cf borrows it (both NULL once
			   * its names are taken) */
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
};

/*
 * A class name the walk has met, and all it knows of it: the JAR's class
 * read under it, or that it is external, or where the JAR holds it.  One
 * table of these rather than one per question: a wide JAR's walk looks
 * up each name several times.
 */
#define NO_ENTRY UINT64_MAX

struct name {
	struct jclass *jc;  /* read (load_class) */
	zip_uint64_t entry; /* "<key>.class" (map_entries), or NO_ENTRY */
	uint8_t external;   /* not the JAR's: in insp.ext[] */
	char key[];	    /* '\0'-terminated */
};

/* struct names, carved from blocks that live as long as the walk. */
struct name_pool {
	struct name_pool *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
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
	struct jclass **cls;	/* every class read, in reading order */
	size_t ncls, acls;
	struct jclass **queue; /* the reachability walk's queue */
	size_t nqueue, aqueue;
	char **ext; /* external classes, internal names */
	size_t next, aext;
	uint64_t inflated;  /* bytes inflated so far */
	struct libdeflate_decompressor *dd; /* NULL until needed */
	uint8_t *zbuf; /* a deflated entry's bytes (deflated) */
	size_t zcap;
	unsigned gen;	    /* walk generation, for jclass.mark */
	unsigned max_depth; /* lim.max_depth, at most DEPTH_CEILING */
};

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
/* Over the cap on inflated bytes: the report says so. */
static int over_inflated(struct insp *in)
{
	return fail(in, -EFBIG,
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
 * Inflate deflated entry `idx` (described by st) into b, which holds
 * st->size bytes: its compressed bytes as libzip reads them, inflated by
 * libdeflate (zlib, under libzip, took half of a shaded JAR's
 * inspection).  0 when b holds exactly st->size bytes with the declared
 * CRC-32; 1 when anything is off (then libzip reads the entry, and its
 * verdict is the report's); -ENOMEM.
 */
static int deflated(struct insp *in, zip_uint64_t idx, const zip_stat_t *st,
		    uint8_t *b)
{
	const zip_uint64_t need = ZIP_STAT_COMP_SIZE | ZIP_STAT_CRC |
				  ZIP_STAT_COMP_METHOD;
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
static int read_entry(struct insp *in, zip_uint64_t idx, const char *name,
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
		return fail(in, -ENOEXEC, "entry %s: no size", name);
	if (st.size > cap)
		return fail(in, -EFBIG,
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
		const char *name = zip_get_name(in->za, (zip_uint64_t)i,
						ZIP_FL_ENC_RAW);
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
		return fail(in, -EFBIG,
			    "the archive has %zu entries, over the limit of "
			    "%zu",
			    in->rep->nentries, in->lim.max_entries);
	return map_entries(in);
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
 * nothing of the inspection.
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
	char entry[CMFS_ERR_MSG];
	char *why = NULL;
	zip_uint64_t idx;
	size_t len;
	void *p;
	int rc;

	*out = r->jc;
	if (r->jc || !name_entry(r, &idx))
		return 0;
	if (in->ncls >= in->lim.max_classes)
		return fail(in, -EFBIG,
			    "the factories reach more than %zu classes of the "
			    "JAR (the limit)",
			    in->lim.max_classes);
	/* Caps first, then bytes, then the class, then its name: a class
	 * file must declare the class its entry name says (the JVM's
	 * NoClassDefFoundError "wrong name"). */
	jc = pool_get(in, (sizeof(*jc) + 15) & ~(size_t)15);
	if (!jc)
		return -ENOMEM;
	memset(jc, 0, sizeof(*jc));
	jc->name = iname;
	snprintf(entry, sizeof(entry), "%s.class", iname);
	rc = read_entry(in, idx, entry, in->lim.max_entry_size, &jc->bytes,
			&len);
	if (rc)
		goto out;
	rc = classfile_parse(&jc->cf, jc->bytes, len, &e);
	if (rc == -EINVAL)
		rc = fail(in, -ENOEXEC, "class file %s: %s", entry, e.msg);
	if (!rc)
		rc = class_check(jc->cf, iname, &jc->super, &jc->ifaces, &why);
	if (rc == 1)
		rc = fail(in, -ENOEXEC, "%s", why);
	if (rc)
		goto out;
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
	int rc = classfile_refs(&jc->refs, &jc->nrefs, jc->cf, &e);

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
 * Breadth-first from the queued factories: each class named by a reached
 * class is either the JAR's (read and queued) or external (recorded).
 */
static int reach(struct insp *in)
{
	struct jclass *jc, *rc_cls;
	size_t head, i;
	int rc = 0;

	/*
	 * The queue grows while it is walked: a JAR class named for the
	 * first time is read (load_name), appended, and kept as the names
	 * it names (take_refs); a bad name among them is reported when the
	 * walk gets to it, as though they were taken then.
	 */
	for (head = 0; head < in->nqueue && !rc; head++) {
		jc = in->queue[head];
		rc = jc->cf ? take_refs(jc) : 0;
		if (rc)
			return rc;
		if (jc->refs_err)
			return fail(in, -ENOEXEC, "class file %s.class: %s",
				    jc->name, jc->refs_err);
		for (i = 0; i < jc->nrefs && !rc; i++) {
			struct name *r = name_add(in, jc->refs[i],
						  strlen(jc->refs[i]));

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

/* Let go of all an inspection holds besides its report. */
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
	libdeflate_free_decompressor(in->dd);
	free(in->zbuf);
	names_release(in); /* the classes' names were the records' */
}

/* The inspection proper, over any input: 0 and *out, or -errno. */
static int inspect(struct jar_report **out, struct input *src,
		   const struct jar_limits *lim, struct cmfs_err *err)
{
	struct insp in;
	int rc;

	memset(&in, 0, sizeof(in));
	in.src = src;
	in.err = err;
	if (lim)
		in.lim = *lim;
	else
		jar_limits_default(&in.lim);
	in.max_depth = in.lim.max_depth < DEPTH_CEILING ? in.lim.max_depth
							: DEPTH_CEILING;
	in.rep = calloc(1, sizeof(*in.rep));
	if (!in.rep)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	/* Each step runs only if the one before found nothing wrong: STOP
	 * (the report has its error) and errors skip the rest alike. */
	rc = open_archive(&in);
	if (!rc)
		rc = inspect_factories(&in);
	if (!rc)
		rc = reach(&in);
	if (!rc)
		rc = report_external(&in);
	insp_free(&in);
	if (rc < 0) {
		jar_report_free(in.rep);
		return cmfs_err_set(err, rc, "%s", strerror(-rc));
	}
	*out = in.rep;
	return 0;
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
	rc = inspect(out, &src, lim, err);
	zip_error_fini(&src.error);
	free(src.win);
	free(whole);
	return rc;
}

int jar_inspect_mem(struct jar_report **out, const void *data, size_t len,
		    const struct jar_limits *lim, struct cmfs_err *err)
{
	struct input src;
	int rc;

	memset(&src, 0, sizeof(src));
	src.fd = -1;
	src.mem = data;
	src.size = len;
	zip_error_init(&src.error);
	rc = inspect(out, &src, lim, err);
	zip_error_fini(&src.error);
	return rc;
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
