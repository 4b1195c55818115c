/*
 * test_classfile.c - the class-file reader: javac's output read exactly,
 * hand-made class files for each rule, and damaged input (every prefix,
 * every byte flipped) refused without a crash.  Run from tests/.
 */
#include "classfile.h"
#include "t.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define FIX "fixtures/classes/"

/* Read a whole file into *out (malloc'd); its length, or 0. */
static size_t slurp(const char *path, uint8_t **out)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	*out = NULL;
	if (!f)
		return 0;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n)) &&
	    fread(b, 1, (size_t)n, f) == (size_t)n) {
		fclose(f);
		*out = b;
		return (size_t)n;
	}
	free(b);
	fclose(f);
	return 0;
}

/* Parse a fixture class; NULL (and a failed check) if it won't. */
static struct classfile *load(const char *name, uint8_t **bytes)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct classfile *cf = NULL;
	char path[256];
	size_t n;

	snprintf(path, sizeof(path), FIX "%s", name);
	n = slurp(path, bytes);
	T_CHECK(n > 0);
	if (!n)
		return NULL;
	T_INTEQ(classfile_parse(&cf, *bytes, n, &err), 0);
	if (err.code)
		fprintf(stderr, "%s: %s\n", name, err.msg);
	return cf;
}

/* Join cf's refs with spaces into buf: classfile_refs()'s result. */
static int refs_join(const struct classfile *cf, char *buf, size_t cap,
		     struct cmfs_err *err)
{
	char **refs = NULL;
	size_t n = 0, i, len = 0;
	int rc;

	buf[0] = '\0';
	rc = classfile_refs(&refs, &n, cf, err);
	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0,
					"%s%s", i ? " " : "", refs[i]);
	T_CHECK(refs[n] == NULL);
	classfile_names_free(refs);
	return 0;
}

/* The refs of a fixture class, or the error message. */
static const char *refs_line(const struct classfile *cf, char *buf, size_t cap)
{
	static struct cmfs_err err;

	cmfs_err_clear(&err);
	if (refs_join(cf, buf, cap, &err))
		return err.msg;
	return buf;
}

/* The name of Class constant idx (a static copy). */
static const char *cname(const struct classfile *cf, unsigned idx)
{
	static char buf[256];
	char *s = NULL;

	if (classfile_class_name(&s, cf, idx, NULL))
		return "(error)";
	snprintf(buf, sizeof(buf), "%s", s);
	free(s);
	return buf;
}

static void test_plain_factory(void)
{
	const struct classfile_member *m;
	struct classfile *cf;
	uint8_t *bytes;
	char line[2048], *s = NULL;
	unsigned idx = 0;

	cf = load("PlainFactory.class", &bytes);
	if (!cf)
		return;
	T_INTEQ(cf->major, 55); /* --release 11 */
	T_INTEQ(cf->minor, 0);
	T_INTEQ(cf->ncp, 29);
	T_INTEQ(cf->cp[7].tag, CLASSFILE_STRING);
	T_STREQ(cname(cf, cf->this_class), "com/example/plain/PlainFactory");
	T_STREQ(cname(cf, cf->super_class), "java/lang/Object");
	T_INTEQ(cf->ninterfaces, 1);
	T_STREQ(cname(cf, cf->interfaces[0]),
		"org/apache/flink/table/factories/Factory");
	T_INTEQ(cf->access & CLASSFILE_ACC_PUBLIC, CLASSFILE_ACC_PUBLIC);
	T_INTEQ(cf->nfields, 0);
	T_INTEQ(cf->nmethods, 4);
	m = classfile_method(cf, "factoryIdentifier", "()Ljava/lang/String;");
	T_CHECK(m != NULL);
	if (m) {
		T_INTEQ(m->code_len, 3);
		T_INTEQ(classfile_const_return(cf, m, &idx),
			CLASSFILE_RET_STRING);
		T_INTEQ(idx, 7);
		T_INTEQ(classfile_string(&s, cf, idx, NULL), 0);
		T_STREQ(s, "plain");
		free(s);
	}
	T_CHECK(classfile_method(cf, "factoryIdentifier", "()V") == NULL);
	m = classfile_method(cf, "<init>", "()V");
	T_CHECK(m &&
		classfile_const_return(cf, m, &idx) == CLASSFILE_RET_OTHER);
	/* Signature attributes are not followed: no ConfigOption here. */
	T_STREQ(refs_line(cf, line, sizeof(line)),
		"com/example/plain/PlainFactory java/lang/Object "
		"java/lang/String java/util/Collections java/util/Set "
		"org/apache/flink/table/factories/Factory");
	T_CHECK(classfile_utf8_eq(cf, 8, "plain"));
	T_CHECK(!classfile_utf8_eq(cf, 8, "plai"));
	T_CHECK(!classfile_utf8_eq(cf, 7, "plain")); /* a String, not Utf8 */
	classfile_free(cf);
	free(bytes);
}

/* A static final field with a ConstantValue, read by getstatic. */
static void test_const_field(void)
{
	const struct classfile_member *m, *f;
	struct classfile *cf;
	uint8_t *bytes;
	char *s = NULL;
	unsigned idx = 0;

	cf = load("ConstIdFactory.class", &bytes);
	if (!cf)
		return;
	f = classfile_field(cf, "IDENTIFIER", "Ljava/lang/String;");
	T_CHECK(f != NULL);
	if (f) {
		T_INTEQ(f->access &
				(CLASSFILE_ACC_STATIC | CLASSFILE_ACC_FINAL),
			CLASSFILE_ACC_STATIC | CLASSFILE_ACC_FINAL);
		T_INTEQ(f->constant, 13);
		T_INTEQ(classfile_string(&s, cf, f->constant, NULL), 0);
		T_STREQ(s, "const-id");
		free(s);
	}
	m = classfile_method(cf, "factoryIdentifier", "()Ljava/lang/String;");
	T_CHECK(m &&
		classfile_const_return(cf, m, &idx) == CLASSFILE_RET_FIELD);
	T_INTEQ(idx, 7);
	T_INTEQ(cf->cp[idx].tag, CLASSFILE_FIELDREF);
	T_STREQ(cname(cf, cf->cp[idx].a), "com/example/constid/ConstIdFactory");
	classfile_free(cf);
	free(bytes);

	/* An interface whose fields got a ConstantValue, or not. */
	cf = load("Ids.class", &bytes);
	if (!cf)
		return;
	T_CHECK(cf->access & CLASSFILE_ACC_INTERFACE);
	f = classfile_field(cf, "HOLDER", "Ljava/lang/String;");
	T_CHECK(f && f->constant == 1);
	f = classfile_field(cf, "PLAIN", "Ljava/lang/String;");
	T_CHECK(f && f->constant == 0);
	classfile_free(cf);
	free(bytes);
}

/* Code computed at run time; invokedynamic and method handles. */
static void test_runtime_and_indy(void)
{
	const struct classfile_member *m;
	struct classfile *cf;
	uint8_t *bytes;
	char line[4096];
	unsigned idx = 0, i, indy = 0, mh = 0;

	cf = load("RuntimeIdFactory.class", &bytes);
	if (!cf)
		return;
	m = classfile_method(cf, "factoryIdentifier", "()Ljava/lang/String;");
	T_CHECK(m &&
		classfile_const_return(cf, m, &idx) == CLASSFILE_RET_OTHER);
	for (i = 1; i < cf->ncp; i++) {
		indy += cf->cp[i].tag == CLASSFILE_INVOKE_DYNAMIC;
		mh += cf->cp[i].tag == CLASSFILE_METHOD_HANDLE;
	}
	T_INTEQ(indy, 1);
	T_INTEQ(mh, 1);
	T_CONTAINS(refs_line(cf, line, sizeof(line)),
		   "java/lang/invoke/StringConcatFactory");
	classfile_free(cf);
	free(bytes);

	/* A lambda: the functional interface is only in a descriptor. */
	cf = load("BsonCodec.class", &bytes);
	if (!cf)
		return;
	T_STREQ(refs_line(cf, line, sizeof(line)),
		"com/example/shaded/bson/BsonCodec "
		"com/example/shaded/bson/BsonDocument "
		"java/lang/Object java/lang/String "
		"java/lang/invoke/CallSite "
		"java/lang/invoke/LambdaMetafactory "
		"java/lang/invoke/MethodHandle "
		"java/lang/invoke/MethodHandles "
		"java/lang/invoke/MethodHandles$Lookup "
		"java/lang/invoke/MethodType java/nio/ByteBuffer "
		"java/nio/charset/Charset java/nio/charset/StandardCharsets "
		"java/util/concurrent/ConcurrentHashMap "
		"java/util/function/Function");
	classfile_free(cf);
	free(bytes);
}

/* Non-ASCII names: 2- and 3-byte sequences and a surrogate pair. */
static void test_unicode(void)
{
	const struct classfile_member *m;
	struct classfile *cf;
	uint8_t *bytes;
	char line[4096], *s = NULL;
	unsigned idx = 0;

	cf = load("UnicodeFactory.class", &bytes);
	if (!cf)
		return;
	T_STREQ(cname(cf, cf->this_class),
		"com/example/\xc3\xbcn\xc3\xaf/F\xc3\xa4"
		"ctory\xce\xa9");
	m = classfile_method(cf, "factoryIdentifier", "()Ljava/lang/String;");
	T_CHECK(m &&
		classfile_const_return(cf, m, &idx) == CLASSFILE_RET_STRING);
	T_INTEQ(classfile_string(&s, cf, idx, NULL), 0);
	/* U+1D4B3 is ED A0 B5 ED B2 B3 in the class, F0 9D 92 B3 here. */
	T_STREQ(s, "\xc3\xbcn\xc3\xaf"
		   "code-\xf0\x9d\x92\xb3");
	free(s);
	T_CONTAINS(refs_line(cf, line, sizeof(line)),
		   "com/example/\xc3\xbcn\xc3\xaf/\xf0\x9d\x92\xb3Helper");
	classfile_free(cf);
	free(bytes);
}

static void test_interface_default(void)
{
	const struct classfile_member *m;
	struct classfile *cf;
	uint8_t *bytes;

	cf = load("Named.class", &bytes);
	if (!cf)
		return;
	T_CHECK(cf->access & CLASSFILE_ACC_INTERFACE);
	T_CHECK(cf->access & CLASSFILE_ACC_ABSTRACT);
	m = classfile_method(cf, "factoryIdentifier", "()Ljava/lang/String;");
	T_CHECK(m && !(m->access & CLASSFILE_ACC_ABSTRACT) && m->code);
	classfile_free(cf);
	free(bytes);
}

static void test_corrupt_pool_fixture(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct classfile *cf = NULL;
	uint8_t *bytes;
	size_t n = slurp(FIX "corrupt-pool.class", &bytes);

	T_CHECK(n > 0);
	T_ERRNO(classfile_parse(&cf, bytes, n, &err), EINVAL);
	T_CHECK(cf == NULL);
	T_STREQ(err.msg, "offset 10: constant 1 (tag 10) refers to a wrong "
			 "or missing entry");
	free(bytes);
}

/* ---- hand-made class files ---- */

struct cb {
	uint8_t d[1024];
	size_t n;
};

static void p1(struct cb *c, unsigned v)
{
	c->d[c->n++] = (uint8_t)v;
}

static void p2(struct cb *c, unsigned v)
{
	p1(c, v >> 8);
	p1(c, v & 0xff);
}

static void p4(struct cb *c, uint32_t v)
{
	p2(c, v >> 16);
	p2(c, v & 0xffff);
}

static void pbytes(struct cb *c, const void *s, size_t n)
{
	memcpy(c->d + c->n, s, n);
	c->n += n;
}

/* A Utf8 constant holding the n bytes s. */
static void putf8(struct cb *c, const char *s, size_t n)
{
	p1(c, CLASSFILE_UTF8);
	p2(c, (unsigned)n);
	pbytes(c, s, n);
}

/* Magic, version 55, and constant_pool_count. */
static void head(struct cb *c, unsigned ncp)
{
	c->n = 0;
	p4(c, 0xcafebabe);
	p2(c, 0);
	p2(c, 55);
	p2(c, ncp);
}

/* The pool every small class starts with: #1 Utf8 A, #2 Class #1. */
static void pool_a(struct cb *c, unsigned ncp)
{
	head(c, ncp);
	putf8(c, "A", 1);
	p1(c, CLASSFILE_CLASS);
	p2(c, 1);
}

/* access, this = #2, super = 0, no interfaces, fields, methods, attrs. */
static void tail_empty(struct cb *c)
{
	p2(c, 0x21);
	p2(c, 2);
	p2(c, 0);
	p2(c, 0);
	p2(c, 0);
	p2(c, 0);
	p2(c, 0);
}

/* Parse c; the errno, with the message in msg. */
static int try_parse(struct cb *c, char *msg)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct classfile *cf = NULL;
	int rc = classfile_parse(&cf, c->d, c->n, &err);

	strcpy(msg, err.msg);
	T_CHECK(rc ? cf == NULL : cf != NULL);
	classfile_free(cf);
	return rc;
}

static void test_minimal_and_truncated(void)
{
	char msg[CMFS_ERR_MSG];
	struct cb c;
	size_t full, k;

	pool_a(&c, 3);
	tail_empty(&c);
	T_INTEQ(try_parse(&c, msg), 0);
	full = c.n;
	/* Every proper prefix is refused. */
	for (k = 0; k < full; k++) {
		c.n = k;
		if (try_parse(&c, msg) != -EINVAL) {
			T_CHECK(!"a prefix parsed");
			break;
		}
	}
	c.n = 0;
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 0: truncated magic");
	c.n = 12;
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 10: truncated constant pool");
	/* Extra bytes at the end. */
	c.n = full;
	p1(&c, 0);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 31: 1 extra bytes after the class");
	c.d[0] = 0xca;
	c.d[1] = 0xfe;
	c.d[2] = 0xd0;
	c.d[3] = 0x0d;
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 0: magic is 0xcafed00d, not a class file");
	pool_a(&c, 3);
	c.d[7] = 44;
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 6: major version 44 is not valid");
}

static void test_pool_rules(void)
{
	char msg[CMFS_ERR_MSG];
	struct cb c;

	/* A huge count with no bytes behind it: refused before allocating. */
	head(&c, 65535);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 10: truncated constant pool");
	head(&c, 0);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 8: constant_pool_count is 0");
	/* An unknown tag. */
	pool_a(&c, 4);
	p1(&c, 2);
	p2(&c, 0);
	tail_empty(&c);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 17: unknown constant tag 2");
	/* A Long in the last slot. */
	pool_a(&c, 4);
	p1(&c, CLASSFILE_LONG);
	p4(&c, 0);
	p4(&c, 1);
	tail_empty(&c);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 17: 8-byte constant in the last pool slot");
	/* A Long takes two slots: #3-#4, then #5 is usable. */
	pool_a(&c, 6);
	p1(&c, CLASSFILE_LONG);
	p4(&c, 0);
	p4(&c, 1);
	putf8(&c, "x", 1);
	tail_empty(&c);
	T_INTEQ(try_parse(&c, msg), 0);
	/* ...and an index to its second slot is refused. */
	pool_a(&c, 6);
	p1(&c, CLASSFILE_LONG);
	p4(&c, 0);
	p4(&c, 1);
	p1(&c, CLASSFILE_STRING);
	p2(&c, 4);
	tail_empty(&c);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 26: constant 5 (tag 8) refers to a wrong or "
		     "missing entry");
	/* A Class naming a Class, an index past the end, a bad handle. */
	pool_a(&c, 4);
	p1(&c, CLASSFILE_CLASS);
	p2(&c, 2);
	tail_empty(&c);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	pool_a(&c, 4);
	p1(&c, CLASSFILE_STRING);
	p2(&c, 9);
	tail_empty(&c);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	pool_a(&c, 4);
	p1(&c, CLASSFILE_METHOD_HANDLE);
	p1(&c, 10);
	p2(&c, 1);
	tail_empty(&c);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 17: constant 3 (tag 15) refers to a wrong or "
		     "missing entry");
	/* this_class must be a Class. */
	pool_a(&c, 3);
	tail_empty(&c);
	c.d[c.n - 11] = 1; /* this_class = #1, a Utf8 */
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 19: this_class 1 is not a valid Class index");
	/* Module, Package, Dynamic: every tag up to Java 21 parses. */
	pool_a(&c, 9);
	p1(&c, CLASSFILE_MODULE);
	p2(&c, 1);
	p1(&c, CLASSFILE_PACKAGE);
	p2(&c, 1);
	p1(&c, CLASSFILE_NAME_AND_TYPE);
	p2(&c, 1);
	p2(&c, 8);
	p1(&c, CLASSFILE_DYNAMIC);
	p2(&c, 0);
	p2(&c, 5);
	p1(&c, CLASSFILE_FLOAT);
	p4(&c, 0);
	putf8(&c, "I", 1);
	tail_empty(&c);
	T_INTEQ(try_parse(&c, msg), 0);
}

static void test_utf8_rules(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct classfile *cf = NULL;
	char msg[CMFS_ERR_MSG], *s = NULL;
	static const char *const bad[] = {"a\x00"
					  "b",
					  "\xf0\x9d\x92\xb3",
					  "\xc1\x81",
					  "\xe0\x80\x80",
					  "\xc3",
					  "\xe2\x82",
					  "\x80"};
	static const size_t badlen[] = {3, 4, 2, 3, 1, 2, 1};
	struct cb c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pool_a(&c, 4);
		putf8(&c, bad[i], badlen[i]);
		tail_empty(&c);
		T_ERRNO(try_parse(&c, msg), EINVAL);
		T_CONTAINS(msg, "malformed modified UTF-8");
	}
	/* The same after k ASCII bytes and before more, whichever byte of
	 * a 32-byte block or an eight-byte word they fall on (mutf8_check
	 * takes ASCII so many at a time): the offset names the first bad
	 * byte. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[96];
		long base = -1, k, at;

		for (k = 0; k < 41; k++) {
			memset(buf, 'x', (size_t)k);
			memcpy(buf + k, bad[i], badlen[i]);
			memset(buf + k + badlen[i], 'y', 40);
			pool_a(&c, 4);
			putf8(&c, buf, (size_t)k + badlen[i] + 40);
			tail_empty(&c);
			T_ERRNO(try_parse(&c, msg), EINVAL);
			T_CONTAINS(msg, "malformed modified UTF-8");
			at = strtol(msg + strlen("offset "), NULL, 10);
			if (base < 0)
				base = at;
			/* "a\0b": the NUL, one past the start */
			T_INTEQ(at, base + k);
		}
	}
	/* Good multi-byte sequences anywhere in a long string come out
	 * as they went in (ASCII is copied eight bytes at a time). */
	for (i = 0; i < 41; i++) {
		char buf[64];

		memset(buf, 'x', i);
		memcpy(buf + i, "\xc3\xa9\xe2\x82\xac", 5); /* e-acute, euro */
		memset(buf + i + 5, 'y', 9);
		buf[i + 14] = '\0';
		pool_a(&c, 4);
		putf8(&c, buf, i + 14);
		tail_empty(&c);
		cf = NULL;
		T_INTEQ(classfile_parse(&cf, c.d, c.n, &err), 0);
		if (!cf)
			return;
		T_INTEQ(classfile_utf8(&s, cf, 3, &err), 0);
		T_STREQ(s, buf);
		free(s);
		s = NULL;
		classfile_free(cf);
	}
	/* C0 80 (U+0000) is valid modified UTF-8, but no C string. */
	pool_a(&c, 5);
	putf8(&c, "a\xc0\x80", 3);
	putf8(&c, "\xed\xa0\xb5", 3); /* an unpaired high surrogate */
	tail_empty(&c);
	T_INTEQ(classfile_parse(&cf, c.d, c.n, &err), 0);
	if (!cf)
		return;
	T_ERRNO(classfile_utf8(&s, cf, 3, &err), EINVAL);
	T_STREQ(err.msg, "offset 17: Utf8 constant holds U+0000");
	cmfs_err_clear(&err);
	T_ERRNO(classfile_utf8(&s, cf, 4, &err), EINVAL);
	T_STREQ(err.msg, "offset 23: Utf8 constant holds an unpaired "
			 "surrogate");
	T_ERRNO(classfile_utf8(&s, cf, 2, NULL), EINVAL); /* a Class */
	T_ERRNO(classfile_utf8(&s, cf, 99, NULL), EINVAL);
	T_CHECK(s == NULL);
	classfile_free(cf);
}

/* A class whose constant #3 is a Class named `name`: its refs. */
static int refs_of_name(const char *name, char *msg, char *line)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct classfile *cf = NULL;
	struct cb c;
	int rc;

	pool_a(&c, 5);
	putf8(&c, name, strlen(name));
	p1(&c, CLASSFILE_CLASS);
	p2(&c, 3);
	tail_empty(&c);
	rc = classfile_parse(&cf, c.d, c.n, &err);
	T_INTEQ(rc, 0);
	if (rc)
		return rc;
	rc = refs_join(cf, line, 512, &err);
	strcpy(msg, err.msg);
	classfile_free(cf);
	return rc;
}

static void test_names_and_arrays(void)
{
	char msg[CMFS_ERR_MSG], line[512];
	char dims[300];

	T_INTEQ(refs_of_name("a/b/C$D", msg, line), 0);
	T_STREQ(line, "A a/b/C$D");
	T_INTEQ(refs_of_name("[[Ljava/lang/String;", msg, line), 0);
	T_STREQ(line, "A java/lang/String");
	T_INTEQ(refs_of_name("[I", msg, line), 0);
	T_STREQ(line, "A");
	T_ERRNO(refs_of_name("a//b", msg, line), EINVAL);
	T_STREQ(msg, "offset 24: bad class name a//b");
	T_ERRNO(refs_of_name("a.b", msg, line), EINVAL);
	T_ERRNO(refs_of_name("a/", msg, line), EINVAL);
	T_ERRNO(refs_of_name("/a", msg, line), EINVAL);
	T_ERRNO(refs_of_name("a;b", msg, line), EINVAL);
	T_ERRNO(refs_of_name("a/b[", msg, line), EINVAL);
	T_INTEQ(refs_of_name("a", msg, line), 0);
	T_STREQ(line, "A a");
	T_INTEQ(refs_of_name("\xc3\xa9/b", msg, line), 0);
	T_STREQ(line, "A \xc3\xa9/b");
	T_ERRNO(refs_of_name("[X", msg, line), EINVAL);
	T_ERRNO(refs_of_name("[Ljava/lang/String", msg, line), EINVAL);
	T_ERRNO(refs_of_name("[V", msg, line), EINVAL);
	T_ERRNO(refs_of_name("", msg, line), EINVAL);
	memset(dims, '[', 256);
	strcpy(dims + 256, "I");
	T_ERRNO(refs_of_name(dims, msg, line), EINVAL);
	T_INTEQ(refs_of_name(dims + 1, msg, line), 0); /* 255 dimensions */
}

/* A class with one NameAndType whose descriptor is `desc`. */
static int refs_of_desc(const char *desc, char *line)
{
	struct classfile *cf = NULL;
	struct cb c;
	int rc;

	pool_a(&c, 6);
	putf8(&c, "f", 1);
	putf8(&c, desc, strlen(desc));
	p1(&c, CLASSFILE_NAME_AND_TYPE);
	p2(&c, 3);
	p2(&c, 4);
	tail_empty(&c);
	rc = classfile_parse(&cf, c.d, c.n, NULL);
	T_INTEQ(rc, 0);
	if (rc)
		return rc;
	rc = refs_join(cf, line, 512, NULL);
	classfile_free(cf);
	return rc;
}

static void test_descriptors(void)
{
	char line[512];

	T_INTEQ(refs_of_desc("(I[JLa/B;[[Lc/D;)Le/F;", line), 0);
	T_STREQ(line, "A a/B c/D e/F");
	T_INTEQ(refs_of_desc("()V", line), 0);
	T_STREQ(line, "A");
	T_INTEQ(refs_of_desc("[Lx/Y;", line), 0);
	T_STREQ(line, "A x/Y");
	T_ERRNO(refs_of_desc("V", line), EINVAL);
	T_ERRNO(refs_of_desc("(V)V", line), EINVAL);
	T_ERRNO(refs_of_desc("(I", line), EINVAL);
	T_ERRNO(refs_of_desc("()", line), EINVAL);
	T_ERRNO(refs_of_desc("()VV", line), EINVAL);
	T_ERRNO(refs_of_desc("La/B", line), EINVAL);
	T_ERRNO(refs_of_desc("L;", line), EINVAL);
	T_ERRNO(refs_of_desc("La.b;", line), EINVAL);
	T_ERRNO(refs_of_desc("Q", line), EINVAL);
	/* A class name's parts: none empty, none holding '[' (JVMS 4.2.1). */
	T_INTEQ(refs_of_desc("(La/b;Lc;)La/b/c;", line), 0);
	T_STREQ(line, "A a/b a/b/c c");
	T_ERRNO(refs_of_desc("La/;", line), EINVAL);
	T_ERRNO(refs_of_desc("L/a;", line), EINVAL);
	T_ERRNO(refs_of_desc("La//b;", line), EINVAL);
	T_ERRNO(refs_of_desc("(La[b;)V", line), EINVAL);
	T_ERRNO(refs_of_desc("(La.Lb;)V", line), EINVAL);
	T_ERRNO(refs_of_desc("(La[Lb;)V", line), EINVAL);
	T_ERRNO(refs_of_desc("(La/b;Lc/;)V", line), EINVAL);
	/* Cut short anywhere: the next constant's bytes follow. */
	T_ERRNO(refs_of_desc("", line), EINVAL);
	T_ERRNO(refs_of_desc("(", line), EINVAL);
	T_ERRNO(refs_of_desc("[", line), EINVAL);
	T_ERRNO(refs_of_desc("[L", line), EINVAL);
	T_ERRNO(refs_of_desc("(La/B", line), EINVAL);
	T_ERRNO(refs_of_desc("(I)", line), EINVAL);
	/* Not ASCII: the same names come out, as UTF-8. */
	T_INTEQ(refs_of_desc("(L\xc3\xa9/b;[Lc/D;)V", line), 0);
	T_STREQ(line, "A c/D \xc3\xa9/b");
	T_ERRNO(refs_of_desc("(L\xc3\xa9/b)V", line), EINVAL);
}

/*
 * A class with one method: name #3, descriptor #4, and a Code attribute
 * (name #5) whose code is the n bytes `code`, followed by `extra` bytes
 * the attribute length claims.
 */
static void method_class(struct cb *c, const uint8_t *code, size_t n, int extra,
			 int twice)
{
	int k;

	pool_a(c, 7);
	putf8(c, "factoryIdentifier", 17);
	putf8(c, "()Ljava/lang/String;", 20);
	putf8(c, "Code", 4);
	p1(c, CLASSFILE_STRING);
	p2(c, 3);
	p2(c, 0x21);
	p2(c, 2);
	p2(c, 0);
	p2(c, 0);
	p2(c, 0); /* fields */
	p2(c, 1); /* methods */
	p2(c, CLASSFILE_ACC_PUBLIC);
	p2(c, 3);
	p2(c, 4);
	p2(c, twice ? 2 : 1);
	for (k = 0; k < (twice ? 2 : 1); k++) {
		p2(c, 5);
		p4(c, (uint32_t)(12 + n + extra));
		p2(c, 1);
		p2(c, 1);
		p4(c, (uint32_t)n);
		pbytes(c, code, n);
		p2(c, 0);
		p2(c, 0);
		c->n += (size_t)(extra > 0 ? extra : 0);
	}
	p2(c, 0);
}

static void test_code_rules(void)
{
	static const uint8_t ldc[] = {0x12, 6, 0xb0};
	static const uint8_t ldc_w[] = {0x13, 0, 6, 0xb0};
	static const uint8_t ldc_utf8[] = {0x12, 3, 0xb0};
	static const uint8_t ldc_pop[] = {0x12, 6, 0x57};
	static const uint8_t ldc_short[] = {0x13, 0, 6};
	static const uint8_t getstatic_bad[] = {0xb2, 0, 6, 0xb0};
	const struct classfile_member *m;
	struct classfile *cf = NULL;
	char msg[CMFS_ERR_MSG];
	unsigned idx = 0;
	struct cb c;

	method_class(&c, ldc, sizeof(ldc), 0, 0);
	T_INTEQ(classfile_parse(&cf, c.d, c.n, NULL), 0);
	m = cf ? classfile_method(cf, "factoryIdentifier",
				  "()Ljava/lang/String;")
	       : NULL;
	T_CHECK(m &&
		classfile_const_return(cf, m, &idx) == CLASSFILE_RET_STRING &&
		idx == 6);
	classfile_free(cf);
	cf = NULL;
	method_class(&c, ldc_w, sizeof(ldc_w), 0, 0);
	T_INTEQ(classfile_parse(&cf, c.d, c.n, NULL), 0);
	m = cf ? &cf->methods[0] : NULL;
	T_CHECK(m &&
		classfile_const_return(cf, m, &idx) == CLASSFILE_RET_STRING);
	classfile_free(cf);
	cf = NULL;
	/* Not constants: ldc of a Utf8, no areturn, cut short, getstatic
	 * of something that is not a Fieldref. */
	method_class(&c, ldc_utf8, sizeof(ldc_utf8), 0, 0);
	T_INTEQ(classfile_parse(&cf, c.d, c.n, NULL), 0);
	T_CHECK(cf && classfile_const_return(cf, &cf->methods[0], &idx) ==
			      CLASSFILE_RET_OTHER);
	classfile_free(cf);
	cf = NULL;
	method_class(&c, ldc_pop, sizeof(ldc_pop), 0, 0);
	T_INTEQ(classfile_parse(&cf, c.d, c.n, NULL), 0);
	T_CHECK(cf && classfile_const_return(cf, &cf->methods[0], &idx) ==
			      CLASSFILE_RET_OTHER);
	classfile_free(cf);
	cf = NULL;
	method_class(&c, ldc_short, sizeof(ldc_short), 0, 0);
	T_INTEQ(classfile_parse(&cf, c.d, c.n, NULL), 0);
	T_CHECK(cf && classfile_const_return(cf, &cf->methods[0], &idx) ==
			      CLASSFILE_RET_OTHER);
	classfile_free(cf);
	cf = NULL;
	method_class(&c, getstatic_bad, sizeof(getstatic_bad), 0, 0);
	T_INTEQ(classfile_parse(&cf, c.d, c.n, NULL), 0);
	T_CHECK(cf && classfile_const_return(cf, &cf->methods[0], &idx) ==
			      CLASSFILE_RET_OTHER);
	classfile_free(cf);
	/* Structural errors. */
	method_class(&c, ldc, 0, 0, 0);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 100: code_length 0 is not 1..65535");
	method_class(&c, ldc, sizeof(ldc), 0, 1);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 111: second Code attribute");
	method_class(&c, ldc, sizeof(ldc), 2, 0);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 111: Code attribute is 2 bytes longer than its "
		     "contents");
	method_class(&c, ldc, sizeof(ldc), -1, 0);
	T_ERRNO(try_parse(&c, msg), EINVAL);
}

/* Decode method m whole: its opcodes and operands as "op:index ...". */
static int insns_line(const struct classfile *cf,
		      const struct classfile_member *m, char *line, size_t cap,
		      char *msg)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct classfile_insn in;
	uint32_t pc = 0, steps = 0;
	size_t len = 0;
	int rc;

	line[0] = msg[0] = '\0';
	while ((rc = classfile_insn_next(cf, m, &pc, &in, &err)) == 1) {
		T_CHECK(pc > in.pc && pc <= m->code_len);
		T_CHECK(++steps <= m->code_len);
		len += (size_t)snprintf(line + len, len < cap ? cap - len : 0,
					"%s%x:%u", len ? " " : "", in.op,
					in.index);
	}
	strcpy(msg, err.msg);
	return rc;
}

/* Method bodies decoded: lengths of every shape, operands checked. */
static void test_insns(void)
{
	/* tableswitch at 0: 3 bytes of padding, default, 0..1, 2 offsets;
	 * nop, then lookupswitch at 25 (2 bytes of padding, 1 pair); wide
	 * iinc and wide iload; new #2, ldc #6, return. */
	/* clang-format off */
	static const uint8_t code[] = {
		0xaa, 0, 0, 0, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0, 1,
		0, 0, 0, 24, 0, 0, 0, 24,
		0x00, 0xab, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 7,
		0, 0, 0, 9,
		0xc4, 0x84, 0, 1, 0, 5, 0xc4, 0x15, 0, 1,
		0xbb, 0, 2, 0x12, 6, 0xb1};
	static const uint8_t new_string[] = {0xbb, 0, 6, 0xb1};
	static const uint8_t unknown[] = {0x00, 0xca};
	static const uint8_t cut[] = {0x00, 0xb6, 0};
	static const uint8_t table_down[] = {0xaa, 0, 0, 0, 0, 0, 0, 0,
					     0, 0, 0, 1, 0, 0, 0, 0};
	static const uint8_t lookup_neg[] = {0xab, 0, 0, 0, 0, 0, 0, 0,
					     0xff, 0xff, 0xff, 0xff};
	static const uint8_t table_cut[] = {0xaa, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0, 0, 0, 0, 0, 9};
	static const uint8_t wide_bad[] = {0xc4, 0xb6, 0, 1};
	struct classfile *cf = NULL;
	char line[512], msg[CMFS_ERR_MSG];
	uint8_t *bytes = NULL;
	uint16_t t = 0;
	struct cb c;
	unsigned i;

	method_class(&c, code, sizeof(code), 0, 0);
	T_INTEQ(classfile_parse(&cf, c.d, c.n, NULL), 0);
	T_INTEQ(cf ? insns_line(cf, &cf->methods[0], line, sizeof(line), msg)
		   : -1,
		0);
	T_STREQ(line, "aa:0 0:0 ab:0 84:0 15:0 bb:2 12:6 b1:0");
	classfile_free(cf);
	cf = NULL;
#define BAD(code_, want)                                                      \
	do {                                                                  \
		method_class(&c, code_, sizeof(code_), 0, 0);                 \
		T_INTEQ(classfile_parse(&cf, c.d, c.n, NULL), 0);             \
		T_ERRNO(cf ? insns_line(cf, &cf->methods[0], line,            \
					sizeof(line), msg)                    \
			   : 0,                                               \
			EINVAL);                                              \
		T_STREQ(msg, want);                                           \
		classfile_free(cf);                                           \
		cf = NULL;                                                    \
	} while (0)
	BAD(new_string, "offset 104: opcode 0xbb with operand 6 of the wrong "
			"kind");
	BAD(unknown, "offset 105: unknown opcode 0xca");
	BAD(cut, "offset 105: instruction cut by the end of the code");
	BAD(table_down, "offset 104: tableswitch high below low");
	BAD(lookup_neg, "offset 104: lookupswitch of -1 pairs");
	BAD(table_cut, "offset 104: instruction cut by the end of the code");
	BAD(wide_bad, "offset 104: wide of opcode 0xb6");
#undef BAD
	/* clang-format on */
	/* javac's code: the factory creates its source (new, then
	 * invokespecial of its constructor), reads its option through an
	 * interface; no handlers. */
	cf = load("MongoDynamicTableFactory.class", &bytes);
	for (i = 0; cf && i < cf->nmethods; i++) {
		T_INTEQ(insns_line(cf, &cf->methods[i], line, sizeof(line),
				   msg),
			0);
		T_INTEQ(cf->methods[i].nexc, 0);
		if (classfile_utf8_eq(cf, cf->methods[i].name,
				      "createDynamicTableSource")) {
			T_CONTAINS(line, " bb:");
			T_CONTAINS(line, " b9:");
			T_CONTAINS(line, " b7:");
		}
	}
	T_ERRNO(cf ? classfile_handler(cf, &cf->methods[0], 0, &t, NULL) : 0,
		EINVAL);
	classfile_free(cf);
	free(bytes);
}

/*
 * A class whose one attribute is BootstrapMethods: one entry whose handle
 * is constant `h` (#2 is a Class, no handle; 0: no entry), declared
 * `extra` bytes longer than it is.
 */
static void bsm_class(struct cb *c, unsigned h, unsigned extra)
{
	unsigned n = h ? 1 : 0;

	pool_a(c, 4);
	putf8(c, "BootstrapMethods", 16);
	p2(c, 0x21);
	p2(c, 2);
	p2(c, 0);
	p2(c, 0);
	p2(c, 0);
	p2(c, 0);
	p2(c, 1); /* attributes */
	p2(c, 3);
	p4(c, 2 + 4 * n + extra);
	p2(c, n);
	if (n) {
		p2(c, h);
		p2(c, 0);
	}
	memset(c->d + c->n, 0, extra);
	c->n += extra;
}

/* BootstrapMethods are checked as the class is parsed. */
static void test_bootstrap_rules(void)
{
	char msg[CMFS_ERR_MSG];
	struct cb c;

	bsm_class(&c, 2, 0);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 58: bootstrap method 2 is not a MethodHandle");
	bsm_class(&c, 9, 0);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_CONTAINS(msg, "bootstrap method 9 is not a MethodHandle");
	bsm_class(&c, 0, 0);
	T_INTEQ(try_parse(&c, msg), 0);
	bsm_class(&c, 0, 2);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 58: BootstrapMethods is 2 bytes longer than its "
		     "contents");
}

/* Descriptors' classes in place, repeats kept; bad ones refused. */
static void test_desc_classes(void)
{
	const char *v[4];
	size_t n[4], count = 0;

	T_INTEQ(classfile_desc_classes("(ILa/B;[[Lc/D;La/B;)Le/F;", v, n, 4,
				       &count),
		0);
	T_INTEQ(count, 4);
	T_CHECK(n[0] == 3 && !strncmp(v[0], "a/B", 3));
	T_CHECK(n[1] == 3 && !strncmp(v[1], "c/D", 3));
	T_CHECK(n[3] == 3 && !strncmp(v[3], "e/F", 3));
	T_INTEQ(classfile_desc_classes("()V", v, n, 4, &count), 0);
	T_INTEQ(count, 0);
	T_INTEQ(classfile_desc_classes("[J", v, n, 4, &count), 0);
	T_INTEQ(count, 0);
	T_INTEQ(classfile_desc_classes("(La/B;La/B;La/B;La/B;La/B;)V", v, n,
				       2, &count),
		0);
	T_INTEQ(count, 5);
	T_ERRNO(classfile_desc_classes("(La/B)V", v, n, 4, &count), EINVAL);
	T_ERRNO(classfile_desc_classes("(I", v, n, 4, &count), EINVAL);
	T_ERRNO(classfile_desc_classes("V", v, n, 4, &count), EINVAL);
	T_ERRNO(classfile_desc_classes("II", v, n, 4, &count), EINVAL);
	T_ERRNO(classfile_desc_classes("()VI", v, n, 4, &count), EINVAL);
	T_ERRNO(classfile_desc_classes("(V)V", v, n, 4, &count), EINVAL);
}

/*
 * A class with one static final String field whose attributes are `n`
 * ConstantValues, each `len` bytes long, pointing at constant `cv`
 * (#2 is a Class, #5 a String).
 */
static void field_class(struct cb *c, unsigned n, unsigned len, unsigned cv)
{
	unsigned k;

	pool_a(c, 6);
	putf8(c, "ConstantValue", 13);
	putf8(c, "Ljava/lang/String;", 18);
	p1(c, CLASSFILE_STRING);
	p2(c, 1);
	p2(c, 0x21);
	p2(c, 2);
	p2(c, 0);
	p2(c, 0);
	p2(c, 1); /* one field */
	p2(c, CLASSFILE_ACC_STATIC | CLASSFILE_ACC_FINAL);
	p2(c, 1);
	p2(c, 4);
	p2(c, n);
	for (k = 0; k < n; k++) {
		p2(c, 3);
		p4(c, len);
		if (len == 2)
			p2(c, cv);
		else
			c->n += len;
	}
	p2(c, 0);
	p2(c, 0);
}

static void test_constant_value_rules(void)
{
	struct classfile *cf = NULL;
	char msg[CMFS_ERR_MSG];
	struct cb c;

	field_class(&c, 1, 2, 5);
	T_INTEQ(classfile_parse(&cf, c.d, c.n, NULL), 0);
	T_CHECK(cf && cf->nfields == 1 && cf->fields[0].constant == 5);
	classfile_free(cf);
	field_class(&c, 1, 2, 2);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 81: ConstantValue 2 is not a constant");
	field_class(&c, 1, 3, 5);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 75: bad or second ConstantValue");
	field_class(&c, 2, 2, 5);
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 83: bad or second ConstantValue");
	/* A field attribute that runs past the end of the file. */
	field_class(&c, 1, 200, 5);
	c.n -= 150;
	T_ERRNO(try_parse(&c, msg), EINVAL);
	T_STREQ(msg, "offset 81: truncated attribute");
}

/* Flip every bit of good class files: no crash, refused or parsed. */
static void test_bit_flips(void)
{
	static const char *const names[] = {"PlainFactory.class",
					    "BsonCodec.class",
					    "UnicodeFactory.class"};
	size_t f, i, bit, ok = 0, bad = 0;

	for (f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		char path[256];
		uint8_t *b;
		size_t n;

		snprintf(path, sizeof(path), FIX "%s", names[f]);
		n = slurp(path, &b);
		T_CHECK(n > 0);
		for (i = 0; i < n; i++)
			for (bit = 0; bit < 8; bit++) {
				struct classfile *cf = NULL;
				char **refs = NULL;
				size_t nr;
				int rc;

				b[i] ^= (uint8_t)(1u << bit);
				rc = classfile_parse(&cf, b, n, NULL);
				if (!rc &&
				    !classfile_refs(&refs, &nr, cf, NULL))
					classfile_names_free(refs);
				if (rc)
					bad++;
				else
					ok++;
				classfile_free(cf);
				b[i] ^= (uint8_t)(1u << bit);
			}
		free(b);
	}
	T_CHECK(ok > 0 && bad > 0);
}

/*
 * A class naming 150 classes, each twice, by long names (more than the
 * 64 names and 2 KiB that refs gathers on the stack): each once, sorted;
 * then, parsed again into the same struct (classfile_reparse), a small
 * class with nothing of the big one left over.
 */
static void test_many_refs(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct classfile *cf = NULL;
	size_t cap = 1 << 16, n = 0, k, len = 0;
	uint8_t *d = malloc(cap);
	char *want = malloc(cap), *got = malloc(cap), name[64];
	struct cb c;

	T_CHECK(d && want && got);
	if (!d || !want || !got)
		goto out;
#define B1(v) (d[n++] = (uint8_t)(v))
#define B2(v) (B1((v) >> 8), B1((v)&0xff))
	B2(0xcafe);
	B2(0xbabe);
	B2(0);
	B2(55);
	B2(3 + 4 * 150);
	B1(CLASSFILE_UTF8); /* #1 A, #2 its Class */
	B2(1);
	B1('A');
	B1(CLASSFILE_CLASS);
	B2(1);
	for (k = 0; k < 300; k++) {
		/* backwards, each twice: 149, 149, 148, 148 ... */
		int m = snprintf(name, sizeof(name),
				 "org/example/with/a/rather/long/name/C%03zu",
				 149 - k / 2);

		B1(CLASSFILE_UTF8);
		B2((unsigned)m);
		memcpy(d + n, name, (size_t)m);
		n += (size_t)m;
		B1(CLASSFILE_CLASS);
		B2((unsigned)(3 + 2 * k));
	}
	B2(0x21); /* access, this = #2, super 0, nothing else */
	B2(2);
	B2(0);
	B2(0);
	B2(0);
	B2(0);
	B2(0);
#undef B1
#undef B2
	len = (size_t)snprintf(want, cap, "A");
	for (k = 0; k < 150; k++)
		len += (size_t)snprintf(want + len, cap - len,
					" org/example/with/a/rather/long/name/"
					"C%03zu",
					k);
	T_INTEQ(classfile_parse(&cf, d, n, &err), 0);
	if (!cf)
		goto out;
	T_INTEQ(refs_join(cf, got, cap, &err), 0);
	T_STREQ(got, want);
	/* The same struct, a small class: its own refs alone. */
	pool_a(&c, 5);
	putf8(&c, "B", 1);
	p1(&c, CLASSFILE_CLASS);
	p2(&c, 3);
	tail_empty(&c);
	T_INTEQ(classfile_reparse(cf, c.d, c.n, &err), 0);
	T_INTEQ(cf->ncp, 5);
	T_INTEQ(refs_join(cf, got, cap, &err), 0);
	T_STREQ(got, "A B");
	/* A bad one, then a good one again: the struct stays usable. */
	c.d[10] = 0x55; /* #1's tag */
	T_ERRNO(classfile_reparse(cf, c.d, c.n, &err), EINVAL);
	c.d[10] = CLASSFILE_UTF8;
	T_INTEQ(classfile_reparse(cf, c.d, c.n, &err), 0);
	T_INTEQ(refs_join(cf, got, cap, &err), 0);
	T_STREQ(got, "A B");
	classfile_free(cf);
out:
	free(d);
	free(want);
	free(got);
}

int main(void)
{
	T_RUN(test_plain_factory);
	T_RUN(test_const_field);
	T_RUN(test_runtime_and_indy);
	T_RUN(test_unicode);
	T_RUN(test_interface_default);
	T_RUN(test_corrupt_pool_fixture);
	T_RUN(test_minimal_and_truncated);
	T_RUN(test_pool_rules);
	T_RUN(test_utf8_rules);
	T_RUN(test_names_and_arrays);
	T_RUN(test_descriptors);
	T_RUN(test_code_rules);
	T_RUN(test_insns);
	T_RUN(test_desc_classes);
	T_RUN(test_bootstrap_rules);
	T_RUN(test_constant_value_rules);
	T_RUN(test_bit_flips);
	T_RUN(test_many_refs);
	return T_DONE();
}
