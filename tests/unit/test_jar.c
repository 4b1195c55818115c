/*
 * test_jar.c - the JAR inspector against the fixture JARs of
 * tests/fixtures/jars/ (built by tests/fixtures/build-jars.sh): factories,
 * kinds, identifiers and external classes exactly; every refusal with its
 * message; caps; the service-file parser; the allowlist; the report; a
 * cross-check with jdeps; damaged archives; and the speed on a generated
 * 100 MB JAR of 20,000 classes.  Run from tests/.
 */
#include "fixture.h"
#include "jar.h"
#include "t.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zip.h>
#include <libdeflate.h>
#include <zlib.h> /* deflate: streams libdeflate cannot write (no end) */

#define JARS "fixtures/jars/"

/* Inspect a fixture with `lim` (NULL = defaults); NULL if refused. */
static struct jar_report *inspect(const char *name,
				  const struct jar_limits *lim)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct jar_report *r = NULL;
	char path[256];
	int rc;

	snprintf(path, sizeof(path), JARS "%s", name);
	rc = jar_inspect(&r, path, lim, &err);
	T_INTEQ(rc, 0);
	if (rc)
		fprintf(stderr, "%s: %s\n", name, err.msg);
	return r;
}

/* The error an invalid archive gets (a static copy), or "(accepted)". */
static const char *refused(const char *name, int *rc)
{
	static struct cmfs_err err;
	struct jar_report *r = NULL;
	char path[256];

	cmfs_err_clear(&err);
	snprintf(path, sizeof(path), JARS "%s", name);
	*rc = jar_inspect(&r, path, NULL, &err);
	T_CHECK(*rc ? r == NULL : r != NULL);
	jar_report_free(r);
	return *rc ? err.msg : "(accepted)";
}

/* "kind identifier class" of each factory, joined by "; ". */
static const char *factories(const struct jar_report *r)
{
	static char buf[2048];
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; r && i < r->nfactories; i++)
		n += (size_t)snprintf(
			buf + n, sizeof(buf) - n, "%s%s %s %s", i ? "; " : "",
			jar_kind_name(r->factories[i].kind),
			r->factories[i].identifier ? r->factories[i].identifier
						   : "(unknown)",
			r->factories[i].cls);
	return buf;
}

/*
 * Every external class the factories' classes name, joined by spaces:
 * the compile-time set and the run-time set merged (both sorted), which
 * is what the class-level walk finds.
 */
static const char *externals(const struct jar_report *r)
{
	static char buf[8192];
	size_t i = 0, j = 0, n = 0;

	buf[0] = '\0';
	while (r && (i < r->nexternal || j < r->nruntime)) {
		const char *x;

		if (j >= r->nruntime ||
		    (i < r->nexternal &&
		     strcmp(r->external[i], r->runtime[j]) < 0))
			x = r->external[i++];
		else
			x = r->runtime[j++];
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
				      n ? " " : "", x);
	}
	return buf;
}

/* The compile-time set alone (what resolution checks), by spaces. */
static const char *compile_set(const struct jar_report *r)
{
	static char buf[8192];
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; r && i < r->nexternal; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
				      i ? " " : "", r->external[i]);
	return buf;
}

static const char *err_of(const struct jar_report *r)
{
	return r && r->error ? r->error : "(none)";
}

#define FLINK "org.apache.flink."
#define FACT FLINK "table.factories."

static const char mongodb_external[] =
	"java.lang.Object java.lang.String java.lang.invoke.CallSite "
	"java.lang.invoke.LambdaMetafactory java.lang.invoke.MethodHandle "
	"java.lang.invoke.MethodHandles java.lang.invoke.MethodHandles$Lookup "
	"java.lang.invoke.MethodType java.lang.invoke.StringConcatFactory "
	"java.nio.ByteBuffer java.nio.charset.Charset "
	"java.nio.charset.StandardCharsets java.time.Instant java.util.HashSet "
	"java.util.Set java.util.concurrent.ConcurrentHashMap "
	"java.util.concurrent.atomic.AtomicLong "
	"java.util.function.Function " FLINK "configuration.ConfigOption " FLINK
	"configuration.ReadableConfig " FLINK
	"table.connector.sink.DynamicTableSink " FLINK
	"table.connector.source.DynamicTableSource " FACT
	"DynamicTableFactory " FACT "DynamicTableFactory$Context " FACT
	"DynamicTableSinkFactory " FACT "DynamicTableSourceFactory";

static void test_mongodb(void)
{
	struct jar_report *r = inspect("mongodb.jar", NULL);

	T_STREQ(err_of(r), "(none)");
	T_INTEQ(r ? r->code : -1, 0);
	T_INTEQ(r ? r->nentries : 0, 16);
	T_STREQ(factories(r), "connector mongodb "
			      "com.example.mongodb.MongoDynamicTableFactory");
	/* Shaded helpers are the JAR's own; Unused is never reached, so
	 * its okhttp3 reference does not count. */
	T_STREQ(externals(r), mongodb_external);
	/* Of those, compiling a statement loads these (reach.h); the rest
	 * (MethodHandles, Instant, DynamicTableFactory) is run time's. */
	T_STREQ(compile_set(r),
		"java.lang.Object java.lang.String java.lang.invoke.CallSite "
		"java.lang.invoke.LambdaMetafactory "
		"java.lang.invoke.MethodHandle "
		"java.lang.invoke.MethodHandles$Lookup "
		"java.lang.invoke.MethodType "
		"java.lang.invoke.StringConcatFactory java.nio.ByteBuffer "
		"java.nio.charset.Charset java.nio.charset.StandardCharsets "
		"java.util.HashSet java.util.Set "
		"java.util.concurrent.ConcurrentHashMap "
		"java.util.concurrent.atomic.AtomicLong "
		"java.util.function.Function " FLINK
		"configuration.ConfigOption " FLINK
		"configuration.ReadableConfig " FLINK
		"table.connector.sink.DynamicTableSink " FLINK
		"table.connector.source.DynamicTableSource " FACT
		"DynamicTableFactory$Context " FACT "DynamicTableSinkFactory " FACT
		"DynamicTableSourceFactory");
	T_INTEQ(r ? r->nruntime : 0, 3);
	jar_report_free(r);
}

static void test_format_and_stored(void)
{
	struct jar_report *r = inspect("fmt-jsonish.jar", NULL);
	struct jar_report *s = inspect("stored.jar", NULL);
	char ext[8192];

	T_STREQ(factories(r),
		"format json-ish com.example.jsonish.JsonIshFormatFactory");
	T_STREQ(externals(r),
		"java.lang.Object java.lang.String java.util.Collections "
		"java.util.Set " FLINK "configuration.ReadableConfig " FLINK
		"table.connector.format.DecodingFormat " FLINK
		"table.connector.format.EncodingFormat " FACT
		"DeserializationFormatFactory " FACT "DynamicTableFactory " FACT
		"DynamicTableFactory$Context " FACT
		"SerializationFormatFactory");
	snprintf(ext, sizeof(ext), "%s", externals(r));
	/* The same classes, stored instead of deflated. */
	T_STREQ(factories(s),
		"format json-ish com.example.jsonish.JsonIshFormatFactory");
	T_STREQ(externals(s), ext);
	T_STREQ(err_of(s), "(none)");
	jar_report_free(r);
	jar_report_free(s);
}

static void test_bundle(void)
{
	struct jar_report *r = inspect("bundle.jar", NULL);

	/* Comments, blank lines, CRLF, a lone CR, tabs, a duplicate and no
	 * final newline: three names, in file order. */
	T_STREQ(factories(r),
		"connector kafka-ish com.example.bundle.KafkaIshFactory; "
		"format avro-ish com.example.bundle.AvroIshFormatFactory; "
		"other ish-catalog com.example.bundle.IshCatalogFactory");
	T_STREQ(err_of(r), "(none)");
	T_INTEQ(r ? r->nexternal + r->nruntime : 0, 12);
	jar_report_free(r);
}

static void test_identifier_rules(void)
{
	struct jar_report *r;

	/* Interfaces and identifier from an abstract base, two levels up. */
	r = inspect("inherit.jar", NULL);
	T_STREQ(factories(r),
		"connector inherited com.example.inherit.InheritedFactory; "
		"connector overriding com.example.inherit.OverridingFactory");
	jar_report_free(r);
	/* Default methods, the more specific one winning. */
	r = inspect("default-id.jar", NULL);
	T_STREQ(factories(r),
		"connector from-default com.example.defid.DefaultIdFactory; "
		"format more-specific com.example.defid.ConcreteMoreFactory");
	jar_report_free(r);
	/* Computed at run time; a static field that is not final. */
	r = inspect("runtime-id.jar", NULL);
	T_STREQ(factories(r),
		"format (unknown) com.example.rtid.RuntimeIdFactory; "
		"format (unknown) com.example.rtid.MutableIdFactory");
	T_CONTAINS(externals(r), "java.lang.System");
	jar_report_free(r);
	/* getstatic of a ConstantValue: here, through a subinterface of
	 * another class, and without a ConstantValue (unknown). */
	r = inspect("const-id.jar", NULL);
	T_STREQ(factories(r),
		"connector const-id com.example.constid.ConstIdFactory; "
		"connector holder-id com.example.constid.HolderIdFactory; "
		"connector (unknown) com.example.constid.PlainIdFactory");
	jar_report_free(r);
	/* An external Flink base class makes a connector; an unknown one
	 * hides both kind and identifier. */
	r = inspect("async-sink.jar", NULL);
	T_STREQ(factories(r),
		"connector async-ish com.example.asink.AsyncIshSinkFactory; "
		"other (unknown) com.example.asink.ExtSubFactory");
	T_CONTAINS(externals(r), "com.example.external.ExternalBaseFactory "
				 "java.lang.String");
	T_CONTAINS(externals(r), FLINK "connector.base.table."
				       "AsyncDynamicTableSinkFactory");
	jar_report_free(r);
}

static void test_reach(void)
{
	struct jar_report *r;

	r = inspect("guava-ref.jar", NULL);
	T_STREQ(factories(r),
		"connector guava-ish com.example.guava.GuavaIshFactory");
	/* Guava through a helper's code, okhttp3 through a field type. */
	T_STREQ(externals(r),
		"com.google.common.collect.ImmutableList java.lang.Object "
		"java.lang.String java.lang.invoke.CallSite "
		"java.lang.invoke.MethodHandles "
		"java.lang.invoke.MethodHandles$Lookup "
		"java.lang.invoke.MethodType "
		"java.lang.invoke.StringConcatFactory java.util.Collection "
		"java.util.HashSet java.util.List java.util.Set "
		"okhttp3.OkHttpClient " FLINK
		"configuration.ConfigOption " FLINK
		"table.connector.source.DynamicTableSource " FACT
		"DynamicTableFactory " FACT "DynamicTableFactory$Context " FACT
		"DynamicTableSourceFactory");
	T_INTEQ(r ? jar_report_refused(r, "java.*,org.apache.flink.*") : 0, 2);
	T_INTEQ(r ? jar_report_refused(r, "java.*, org.apache.flink.*, "
					  "okhttp3.*, com.google.*")
		  : 9,
		0);
	jar_report_free(r);
	/* A multi-release JAR: the base Helper counts, not versions/11's,
	 * which would reach okhttp3. */
	r = inspect("multi-release.jar", NULL);
	T_STREQ(factories(r),
		"connector multi-release com.example.mr.MrFactory");
	T_CONTAINS(externals(r), "java.util.ArrayList");
	T_CHECK(!strstr(externals(r), "okhttp3"));
	T_CHECK(!strstr(externals(r), "com.example"));
	jar_report_free(r);
	/* Unicode names, a supplementary character among them. */
	r = inspect("unicode.jar", NULL);
	T_STREQ(factories(r), "connector \xc3\xbcn\xc3\xaf"
			      "code-\xf0\x9d\x92"
			      "\xb3 com.example.\xc3\xbcn\xc3\xaf.F\xc3\xa4"
			      "ctory\xce\xa9");
	T_CHECK(!strstr(externals(r), "com.example"));
	jar_report_free(r);
}

/* zip64 headers and end records, and a zip comment: same as mongodb. */
static void test_zip_variants(void)
{
	static const char *const names[] = {"zip64.jar", "comment.jar"};
	size_t i;

	for (i = 0; i < 2; i++) {
		struct jar_report *r = inspect(names[i], NULL);

		T_STREQ(err_of(r), "(none)");
		T_STREQ(factories(r),
			"connector mongodb "
			"com.example.mongodb.MongoDynamicTableFactory");
		T_STREQ(externals(r), mongodb_external);
		jar_report_free(r);
	}
}

static void test_not_factory_jars(void)
{
	struct jar_report *r;

	r = inspect("missing-class.jar", NULL);
	T_STREQ(err_of(r), "factory class com.example.missing.AbsentFactory "
			   "is listed in the service file but not in the JAR");
	T_INTEQ(r ? r->code : 0, -ENOEXEC);
	/* The factory found before the error is still listed. */
	T_STREQ(factories(r),
		"format present com.example.missing.PresentFactory");
	T_INTEQ(r ? r->nexternal : 1, 0);
	jar_report_free(r);
	r = inspect("no-service.jar", NULL);
	T_STREQ(err_of(r), "the JAR has no factory service file: when "
			   "shading, merge service files");
	T_INTEQ(r ? r->code : 0, -ENOEXEC);
	jar_report_free(r);
	r = inspect("empty-zip.jar", NULL);
	T_STREQ(err_of(r), "the JAR has no factory service file: when "
			   "shading, merge service files");
	T_INTEQ(r ? r->nentries : 1, 0);
	jar_report_free(r);
	r = inspect("empty-service.jar", NULL);
	T_STREQ(err_of(r), "the JAR's factory service file is empty: when "
			   "shading, merge service files");
	jar_report_free(r);
	r = inspect("bom.jar", NULL);
	T_STREQ(err_of(r),
		"the JAR's factory service file: line 1: byte "
		"order mark (U+FEFF): save the file as UTF-8 without BOM");
	T_INTEQ(r ? r->nfactories : 1, 0);
	jar_report_free(r);
	r = inspect("syntax.jar", NULL);
	T_STREQ(err_of(r), "the JAR's factory service file: line 3: space "
			   "inside a class name");
	jar_report_free(r);
}

static void test_hostile_jars(void)
{
	struct jar_report *r;

	r = inspect("cyclic.jar", NULL);
	T_STREQ(err_of(r), "class com.example.cyclic.CycA: cyclic class "
			   "hierarchy");
	jar_report_free(r);
	r = inspect("bad-class.jar", NULL);
	T_STREQ(err_of(r), "class file com/example/plain/PlainFactory.class: "
			   "offset 178: truncated Utf8 constant");
	T_INTEQ(r ? r->code : 0, -ENOEXEC);
	jar_report_free(r);
	r = inspect("wrong-name.jar", NULL);
	T_STREQ(err_of(r), "class file com/example/plain/Renamed.class "
			   "declares class com/example/plain/PlainFactory");
	jar_report_free(r);
	/* The headers say 1234 bytes; it inflates to 40 MiB. */
	r = inspect("bomb.jar", NULL);
	T_STREQ(err_of(r),
		"entry com/example/bomb/BombFactory.class inflates "
		"past the 1234 bytes its header declares (a zip bomb?)");
	T_INTEQ(r ? r->code : 0, -EFBIG);
	jar_report_free(r);
	r = inspect("service-bomb.jar", NULL);
	T_STREQ(err_of(r), "entry " JAR_SERVICE_FILE ": 8388608 bytes, over "
			   "the limit of 1048576");
	T_INTEQ(r ? r->code : 0, -EFBIG);
	jar_report_free(r);
}

static void test_invalid_archives(void)
{
	int rc;

	T_STREQ(refused("not-zip.jar", &rc), "not a zip archive");
	T_ERRNO(rc, EINVAL);
	T_STREQ(refused("empty.jar", &rc), "not a zip archive: 0 bytes");
	T_ERRNO(rc, EINVAL);
	T_STREQ(refused("truncated.jar", &rc),
		"not a valid zip archive: "
		"truncated or damaged (no end of central directory)");
	T_ERRNO(rc, EINVAL);
	T_STREQ(refused("truncated-tail.jar", &rc),
		"not a valid zip archive: "
		"truncated or damaged (no end of central directory)");
	T_STREQ(refused("prefixed.jar", &rc),
		"not a valid zip archive: 35 "
		"bytes of other data before it (a prefixed archive)");
	T_ERRNO(rc, EINVAL);
	/* Offsets adjusted for the prefix: libzip would read it. */
	T_STREQ(refused("prefixed-adjusted.jar", &rc),
		"not a valid zip "
		"archive: 35 bytes of other data before it (a prefixed "
		"archive)");
	T_ERRNO(rc, EINVAL);
	T_STREQ(refused("dup.jar", &rc), "not a valid zip archive: duplicate "
					 "entry name " JAR_SERVICE_FILE);
	T_ERRNO(rc, EINVAL);
	T_STREQ(refused("no-such.jar", &rc), JARS "no-such.jar: No such file "
						  "or directory");
	T_ERRNO(rc, ENOENT);
	T_STREQ(refused("mongodb.jar", &rc), "(accepted)");
}

static void test_limits(void)
{
	struct jar_limits lim;
	struct jar_report *r;

	jar_limits_default(&lim);
	T_CHECK(lim.max_entries >= 100000 && lim.max_classes >= 20000);
	lim.max_entries = 4;
	r = inspect("mongodb.jar", &lim);
	T_STREQ(err_of(r), "the archive declares 16 entries, over the limit "
			   "of 4");
	T_INTEQ(r ? r->code : 0, -EFBIG);
	jar_report_free(r);
	r = inspect("zip64.jar", &lim); /* the count of the zip64 record */
	T_STREQ(err_of(r), "the archive declares 16 entries, over the limit "
			   "of 4");
	jar_report_free(r);
	jar_limits_default(&lim);
	lim.max_classes = 3;
	r = inspect("mongodb.jar", &lim);
	T_STREQ(err_of(r), "the factories reach more than 3 classes of the "
			   "JAR (the limit)");
	T_STREQ(factories(r), "connector mongodb "
			      "com.example.mongodb.MongoDynamicTableFactory");
	T_INTEQ(r ? r->nexternal : 1, 0);
	jar_report_free(r);
	jar_limits_default(&lim);
	lim.max_depth = 1;
	r = inspect("inherit.jar", &lim);
	T_STREQ(err_of(r), "class com.example.inherit.AbstractIshFactory: "
			   "class hierarchy deeper than 1 (the limit)");
	jar_report_free(r);
	lim.max_depth = 2;
	r = inspect("inherit.jar", &lim);
	T_STREQ(err_of(r), "(none)");
	jar_report_free(r);
	jar_limits_default(&lim);
	lim.max_entry_size = 1000;
	r = inspect("mongodb.jar", &lim);
	T_STREQ(err_of(r), "entry com/example/mongodb/MongoDynamicTableFactory"
			   ".class: 2126 bytes, over the limit of 1000");
	jar_report_free(r);
	jar_limits_default(&lim);
	lim.max_inflated = 3000;
	r = inspect("mongodb.jar", &lim);
	T_STREQ(err_of(r), "the classes read inflate to more than 3000 bytes "
			   "(the limit)");
	jar_report_free(r);
	jar_limits_default(&lim);
	lim.max_service_size = 10;
	r = inspect("mongodb.jar", &lim);
	T_STREQ(err_of(r), "entry " JAR_SERVICE_FILE ": 45 bytes, over the "
			   "limit of 10");
	jar_report_free(r);
}

/* Read a whole file (malloc'd); its length. */
static size_t slurp(const char *path, uint8_t **out)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	*out = NULL;
	if (fd < 0 || fstat(fd, &st) || !(b = malloc((size_t)st.st_size + 1)) ||
	    read(fd, b, (size_t)st.st_size) != st.st_size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);
	*out = b;
	return (size_t)st.st_size;
}

/* Inspect `path` through an fd: 0, or -errno; *nreads, its read calls. */
static int inspect_fd_counted(struct jar_report **r, const char *path,
			      long long *nreads)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	long long ask, before, after;
	int fd = open(path, O_RDONLY), rc;

	T_CHECK(fd >= 0);
	ask = fixture_io("syscr");
	ask = fixture_io("syscr") - ask; /* what reading the count costs */
	before = fixture_io("syscr");
	rc = jar_inspect_fd(r, fd, NULL, &err);
	after = fixture_io("syscr");
	*nreads = before < 0 ? -1 : after - before - ask;
	close(fd);
	return rc;
}

static void test_fd_and_memory(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct jar_report *r = NULL;
	char path[] = "/tmp/cmfs-test-jar-XXXXXX";
	uint8_t *bytes, *big;
	long long nreads;
	size_t n;
	int fd, p[2];

	/* pread from offset 0, whatever the fd's offset; fd left open.  A
	 * missing fixture fails the test (run from tests/). */
	fd = open(JARS "mongodb.jar", O_RDONLY);
	T_CHECK(fd >= 0);
	if (fd < 0)
		return;
	T_CHECK(lseek(fd, 100, SEEK_SET) == 100);
	T_INTEQ(jar_inspect_fd(&r, fd, NULL, &err), 0);
	T_STREQ(externals(r), mongodb_external);
	jar_report_free(r);
	r = NULL;
	T_INTEQ(lseek(fd, 0, SEEK_CUR), 100);
	T_CHECK(fcntl(fd, F_GETFD) >= 0);
	close(fd);
	n = slurp(JARS "mongodb.jar", &bytes);
	T_CHECK(n > 22);
	if (n <= 22) {
		free(bytes);
		return;
	}
	T_INTEQ(jar_inspect_mem(&r, bytes, n, NULL, &err), 0);
	T_STREQ(factories(r), "connector mongodb "
			      "com.example.mongodb.MongoDynamicTableFactory");
	T_STREQ(externals(r), mongodb_external);
	jar_report_free(r);
	r = NULL;
	/* A JAR that fits the read window is read with one pread, then from
	 * memory; one past it (a 64 KiB comment) through the window: the
	 * same report either way. */
	T_INTEQ(inspect_fd_counted(&r, JARS "mongodb.jar", &nreads), 0);
	if (nreads >= 0)
		T_INTEQ(nreads, 1);
	T_STREQ(externals(r), mongodb_external);
	jar_report_free(r);
	r = NULL;
	big = malloc(n + 65535);
	T_CHECK(big && !memcmp(bytes + n - 22, "PK\5\6", 4) &&
		!bytes[n - 2] && !bytes[n - 1]);
	if (!big) {
		free(bytes);
		return;
	}
	memcpy(big, bytes, n);
	big[n - 2] = big[n - 1] = 0xff;
	memset(big + n, 'x', 65535);
	fd = mkstemp(path);
	T_CHECK(fd >= 0);
	T_CHECK(write(fd, big, n + 65535) == (ssize_t)(n + 65535));
	close(fd);
	T_INTEQ(inspect_fd_counted(&r, path, &nreads), 0);
	if (nreads >= 0)
		T_CHECK(nreads > 1);
	T_STREQ(factories(r), "connector mongodb "
			      "com.example.mongodb.MongoDynamicTableFactory");
	T_STREQ(externals(r), mongodb_external);
	jar_report_free(r);
	r = NULL;
	unlink(path);
	free(big);
	free(bytes);
	/* Not a regular file. */
	T_INTEQ(pipe(p), 0);
	T_ERRNO(jar_inspect_fd(&r, p[0], NULL, &err), EINVAL);
	T_STREQ(err.msg, "not a zip archive: not a regular file");
	T_CHECK(r == NULL);
	close(p[0]);
	close(p[1]);
}

/* ---- the service file ---- */

/* Parse `s`: the names joined by '|', or "ERR <message>". */
static const char *svc(const char *s, size_t len)
{
	static char buf[CMFS_ERR_MSG + 8];
	struct cmfs_err err = CMFS_ERR_INIT;
	char **names = NULL;
	size_t n = 0, i, k = 0;
	int rc = jar_service_parse(&names, &n, s, len, &err);

	if (rc) {
		T_ERRNO(rc, EINVAL);
		T_CHECK(names == NULL);
		snprintf(buf, sizeof(buf), "ERR %s", err.msg);
		return buf;
	}
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s",
				      i ? "|" : "", names[i]);
	T_CHECK(names[n] == NULL);
	jar_names_free(names);
	return buf;
}

#define SVC(lit) svc(lit, sizeof(lit) - 1)

static void test_service_parse(void)
{
	T_STREQ(SVC(""), "");
	T_STREQ(SVC("\n\n  \t\n"), "");
	T_STREQ(SVC("# only a comment"), "");
	T_STREQ(SVC("a.B"), "a.B");
	T_STREQ(SVC("a.B\nc.D\n"), "a.B|c.D");
	T_STREQ(SVC("a.B\r\nc.D\r\n"), "a.B|c.D");
	T_STREQ(SVC("a.B\rc.D\r"), "a.B|c.D");
	T_STREQ(SVC("  a.B  # trailing\n\tc.D\t\n"), "a.B|c.D");
	T_STREQ(SVC("a.B#no space before\n"), "a.B");
	T_STREQ(SVC("c.D\na.B\nc.D\na.B\n"), "c.D|a.B"); /* first order kept */
	T_STREQ(SVC("a.b.C$D\n_x.$y1\n"), "a.b.C$D|_x.$y1");
	T_STREQ(SVC("a..B\n"), "a..B"); /* ServiceLoader lets it pass too */
	T_STREQ(SVC("\x01 a.B \x1f\n"), "a.B"); /* trim: up to U+0020 */
	T_STREQ(SVC("com.\xc3\xa9t\xc3\xa9.Fa\xc3\xa7"
		    "ade\n"),
		"com.\xc3\xa9t\xc3\xa9.Fa\xc3\xa7"
		"ade");
	T_STREQ(SVC("a.\xf0\x9d\x92\xb3\n"), "a.\xf0\x9d\x92\xb3");
	T_STREQ(SVC("p.\xe2\x82\xac"
		    "uro\n"),
		"p.\xe2\x82\xac"
		"uro");
	/* Syntax errors, naming the line. */
	T_STREQ(SVC("\xef\xbb\xbf"
		    "a.B\n"),
		"ERR line 1: byte order mark "
		"(U+FEFF): save the file as UTF-8 without BOM");
	T_STREQ(SVC("\xef\xbb\xbf# comment\n"),
		"ERR line 1: byte order mark "
		"(U+FEFF): save the file as UTF-8 without BOM");
	T_STREQ(SVC("a.B\n\na.B c.D\n"), "ERR line 3: space inside a class "
					 "name");
	T_STREQ(SVC("a.B\tc.D\n"), "ERR line 1: space inside a class name");
	T_STREQ(SVC("ok.A\r\nok.B\r\n1a.B\r\n"),
		"ERR line 3: illegal "
		"provider-class name 1a.B: U+0031 at byte 1");
	T_STREQ(SVC(".a.B"), "ERR line 1: illegal provider-class name .a.B: "
			     "U+002E at byte 1");
	T_STREQ(SVC("a-b.C"), "ERR line 1: illegal provider-class name "
			      "a-b.C: U+002D at byte 2");
	T_STREQ(SVC("a.B;"), "ERR line 1: illegal provider-class name a.B;: "
			     "U+003B at byte 4");
	T_STREQ(SVC("a/B"), "ERR line 1: illegal provider-class name a/B: "
			    "U+002F at byte 2");
	T_STREQ(SVC("a.B\x01"
		    "C"),
		"ERR line 1: illegal provider-class name "
		"a.B\x01"
		"C: U+0001 at byte 4");
	T_STREQ(SVC("a.\xc2\xa0"
		    "B"),
		"ERR line 1: illegal provider-class "
		"name a.\xc2\xa0"
		"B: U+00A0 at byte 3");
	T_STREQ(SVC("a\xc3\x97"
		    "b"),
		"ERR line 1: illegal provider-class "
		"name a\xc3\x97"
		"b: U+00D7 at byte 2");
	T_STREQ(SVC("a\xe2\x80\x8b"
		    "b"),
		"ERR line 1: illegal "
		"provider-class name a\xe2\x80\x8b"
		"b: U+200B at byte 2");
	T_STREQ(SVC("a.B\xff"), "ERR line 1: malformed UTF-8");
	T_STREQ(SVC("a.\xc0\xae"), "ERR line 1: malformed UTF-8");
	T_STREQ(SVC("a.\xed\xa0\x80"), "ERR line 1: malformed UTF-8");
	T_STREQ(SVC("# \xff in a comment is fine\na.B"), "a.B");
	T_STREQ(svc("a.B\0c", 5), "ERR line 1: illegal provider-class name "
				  "a.B: U+0000 at byte 4");
}

/* A service file of megabytes: linear, and duplicates are cheap. */
static void test_service_parse_big(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	size_t len = 8u << 20, i, n = 0;
	char **names = NULL;
	char *s = malloc(len + 1);
	clock_t t0;
	double secs;

	T_CHECK(s != NULL);
	if (!s)
		return;
	for (i = 0; i + 32 <= len; i += 32)
		snprintf(s + i, 33, "com.example.F%018zu\n", (i / 32) % 100000);
	t0 = clock();
	T_INTEQ(jar_service_parse(&names, &n, s, i, &err), 0);
	secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	T_INTEQ(n, 100000);
	T_STREQ(n ? names[0] : "", "com.example.F000000000000000000");
	T_STREQ(n ? names[n - 1] : "", "com.example.F000000000000099999");
	T_CHECK(secs < 5.0);
	jar_names_free(names);
	free(s);
}

static void test_allowlist(void)
{
	const char *al =
		"java.*, org.apache.flink.* ,javax.annotation.Nullable";

	T_INTEQ(jar_class_allowed("java.lang.String", al), 1);
	T_INTEQ(jar_class_allowed("org.apache.flink.table.api.Table", al), 1);
	T_INTEQ(jar_class_allowed("javax.annotation.Nullable", al), 1);
	T_INTEQ(jar_class_allowed("javax.annotation.Nonnull", al), 0);
	T_INTEQ(jar_class_allowed("javax.annotation.Nullable2", al), 0);
	T_INTEQ(jar_class_allowed("javafx.Foo", al), 0); /* not java. */
	T_INTEQ(jar_class_allowed("java", al), 0);
	T_INTEQ(jar_class_allowed("org.apache.flinkx.A", al), 0);
	T_INTEQ(jar_class_allowed("okhttp3.OkHttpClient", al), 0);
	T_INTEQ(jar_class_allowed("com.x.Y", "com.x*"), 1); /* any suffix */
	T_INTEQ(jar_class_allowed("com.xy.Z", "com.x*"), 1);
	T_INTEQ(jar_class_allowed("anything.at.All", "*"), 1);
	T_INTEQ(jar_class_allowed("a.B", ""), 0);
	T_INTEQ(jar_class_allowed("a.B", NULL), 0);
	T_INTEQ(jar_class_allowed("a.B", " , ,a.B,"), 1);
	T_INTEQ(jar_class_allowed("a.B", "\ta.B\t"), 1);
}

static void test_kinds(void)
{
	enum jar_kind k = JAR_KIND_OTHER;

	T_STREQ(jar_kind_name(JAR_KIND_CONNECTOR), "connector");
	T_STREQ(jar_kind_name(JAR_KIND_FORMAT), "format");
	T_STREQ(jar_kind_name(JAR_KIND_OTHER), "other");
	T_INTEQ(jar_kind_parse(&k, "connector"), 0);
	T_INTEQ(k, JAR_KIND_CONNECTOR);
	T_INTEQ(jar_kind_parse(&k, "format"), 0);
	T_INTEQ(k, JAR_KIND_FORMAT);
	T_INTEQ(jar_kind_parse(&k, "other"), 0);
	T_INTEQ(k, JAR_KIND_OTHER);
	T_ERRNO(jar_kind_parse(&k, "Connector"), EINVAL);
	T_ERRNO(jar_kind_parse(&k, ""), EINVAL);
	T_ERRNO(jar_kind_parse(&k, NULL), EINVAL);
	jar_report_free(NULL);
	jar_names_free(NULL);
}

/* A copy reads as the original does (json: options too), owns all it
 * holds (the original freed first), and is of the same size. */
static void test_report_copy(void)
{
	struct jar_report *r = inspect("fmt-jsonish.jar", NULL), *c = NULL;
	struct buf a = BUF_INIT(1 << 20), b = BUF_INIT(1 << 20);

	if (!r)
		return;
	T_INTEQ(jar_report_copy(&c, r), 0);
	T_INTEQ(jar_report_format(&a, r, NULL, 1), 0);
	/* Its size counts the same blocks; each external class name is a
	 * pointer and a block of 32 bytes at least. */
	T_INTEQ(c ? jar_report_size(c) : 0, jar_report_size(r));
	T_CHECK(jar_report_size(r) >=
		sizeof(*r) + r->nexternal * (sizeof(char *) + 32));
	jar_report_free(r);
	T_INTEQ(c ? jar_report_format(&b, c, NULL, 1) : -1, 0);
	T_CHECK(a.len > 0);
	T_STREQ(buf_str(&b), buf_str(&a));
	jar_report_free(c);
	buf_release(&a);
	buf_release(&b);
}

static void test_report_format(void)
{
	struct jar_report *r = inspect("fmt-jsonish.jar", NULL);
	struct buf b = BUF_INIT(1 << 20);
	struct jar_factory f[2];
	char *ext[2];
	struct jar_report h;

	if (!r)
		return;
	T_INTEQ(jar_report_format(&b, r, NULL, 0), 0);
	T_STREQ(buf_str(&b),
		"archive: valid zip, 7 entries\n"
		"factories: 1\n"
		"  format    json-ish "
		"com.example.jsonish.JsonIshFormatFactory\n"
		"external classes: 8\n"
		"  java.lang.Object\n  java.lang.String\n"
		"  java.util.Collections\n  java.util.Set\n"
		"  " FLINK "table.connector.format.DecodingFormat\n"
		"  " FLINK "table.connector.format.EncodingFormat\n"
		"  " FACT "DeserializationFormatFactory\n"
		"  " FACT "SerializationFormatFactory\n"
		"run-time classes (not checked): 3\n"
		"  " FLINK "configuration.ReadableConfig\n"
		"  " FACT "DynamicTableFactory\n"
		"  " FACT "DynamicTableFactory$Context\n");
	buf_reset(&b);
	T_INTEQ(jar_report_format(&b, r, "java.util.*,org.apache.flink.*", 0),
		0);
	T_CONTAINS(buf_str(&b),
		   "\n  java.lang.Object                        "
		   "                      refused\n  java.lang.String");
	T_CONTAINS(buf_str(&b), "  java.util.Set                            "
				"                     allowed\n");
	/* The run-time classes get no verdict: information only. */
	T_CONTAINS(buf_str(&b), "allowed\nrun-time classes (not checked): 3\n"
				"  " FLINK "configuration.ReadableConfig\n");
	T_CONTAINS(buf_str(&b), "$Context\nverdict: refused: 2 external "
				"classes outside the allowlist (marked refused "
				"above); shade them into the JAR or widen "
				"[sql] class_allowlist\n");
	buf_reset(&b);
	T_INTEQ(jar_report_format(&b, r, "java.*,org.apache.flink.*", 0), 0);
	T_CONTAINS(buf_str(&b), "$Context\nverdict: usable\n");
	buf_reset(&b);
	T_INTEQ(jar_report_format(&b, r, "java.*,org.apache.flink.*", 1), 0);
	T_STREQ(buf_str(&b),
		"{\"valid_zip\":true,\"entries\":7,\"error\":null,"
		"\"factories\":[{\"class\":\"com.example.jsonish."
		"JsonIshFormatFactory\",\"kind\":\"format\",\"identifier\":"
		"\"json-ish\",\"options\":[],\"options_unknown\":[],\"prefixes\":null}],\"external\":["
		"{\"class\":\"java.lang.Object\",\"allowed\":true},"
		"{\"class\":\"java.lang.String\",\"allowed\":true},"
		"{\"class\":\"java.util.Collections\",\"allowed\":true},"
		"{\"class\":\"java.util.Set\",\"allowed\":true},"
		"{\"class\":\"" FLINK "table.connector.format.DecodingFormat\","
		"\"allowed\":true},"
		"{\"class\":\"" FLINK "table.connector.format.EncodingFormat\","
		"\"allowed\":true},"
		"{\"class\":\"" FACT "DeserializationFormatFactory\","
		"\"allowed\":true},"
		"{\"class\":\"" FACT "SerializationFormatFactory\","
		"\"allowed\":true}],\"runtime\":[\"" FLINK
		"configuration.ReadableConfig\",\"" FACT
		"DynamicTableFactory\",\"" FACT "DynamicTableFactory$Context\"],"
		"\"refused\":0,\"verdict\":\"usable\"}\n");
	jar_report_free(r);
	/* An unusable JAR, and strings that need escaping. */
	memset(&h, 0, sizeof(h));
	memset(f, 0, sizeof(f));
	h.error = (char *)"bad \"x\"\\ \x01 \xff\xc3\xa9";
	h.code = -ENOEXEC;
	h.nentries = 3;
	f[0].cls = (char *)"a.B";
	f[0].kind = JAR_KIND_CONNECTOR;
	f[0].identifier = NULL;
	f[1].cls = (char *)"a.C";
	f[1].kind = JAR_KIND_OTHER;
	f[1].identifier = (char *)"long-identifier";
	h.factories = f;
	h.nfactories = 2;
	ext[0] = (char *)"x.Y";
	h.external = ext;
	h.nexternal = 1;
	buf_reset(&b);
	T_INTEQ(jar_report_format(&b, &h, "x.*", 1), 0);
	T_STREQ(buf_str(&b),
		"{\"valid_zip\":true,\"entries\":3,\"error\":\"bad "
		"\\\"x\\\"\\\\ "
		"\\u0001 \xef\xbf\xbd\xc3\xa9\",\"factories\":["
		"{\"class\":\"a.B\",\"kind\":\"connector\",\"identifier\":null,"
		"\"options\":[],\"options_unknown\":[],\"prefixes\":null},"
		"{\"class\":\"a.C\",\"kind\":\"other\",\"identifier\":"
		"\"long-identifier\",\"options\":[],\"options_unknown\":[],\"prefixes\":null}],"
		"\"external\":[{\"class\":\"x.Y\","
		"\"allowed\":true}],\"runtime\":[],\"refused\":0,"
		"\"verdict\":\"refused\"}\n");
	buf_reset(&b);
	T_INTEQ(jar_report_format(&b, &h, "x.*", 0), 0);
	T_STREQ(buf_str(&b),
		"archive: valid zip, 3 entries\n"
		"factories: 2\n"
		"  connector unknown         a.B\n"
		"  other     long-identifier a.C\n"
		"external classes: 1\n"
		"  x.Y allowed\n"
		"error: bad \"x\"\\ \x01 \xff\xc3\xa9\n"
		"verdict: refused: the JAR is not a usable factory JAR\n");
	/* A full buffer: -EFBIG, nothing past the cap. */
	buf_release(&b);
	buf_init(&b, 16);
	T_ERRNO(jar_report_format(&b, &h, NULL, 0), EFBIG);
	buf_release(&b);
}

/* A JAR that could not be inspected: its name and why, escaped in JSON. */
static void test_failure_format(void)
{
	struct buf b = BUF_INIT(1 << 16);

	T_INTEQ(jar_failure_format(&b, "a\"b\\.jar", "not a zip: \x01 \xff", 1),
		0);
	T_STREQ(buf_str(&b), "{\"file\":\"a\\\"b\\\\.jar\",\"valid_zip\":"
			     "false,\"error\":\"not a zip: \\u0001 "
			     "\xef\xbf\xbd\"}\n");
	buf_reset(&b);
	T_INTEQ(jar_failure_format(&b, "x.jar", "cut short", 0), 0);
	T_STREQ(buf_str(&b), "x.jar: not usable: cut short\n");
	buf_release(&b);
	buf_init(&b, 8);
	T_ERRNO(jar_failure_format(&b, "x.jar", "cut short", 1), EFBIG);
	buf_release(&b);
}

/* ---- jdeps ---- */

/* A fresh temporary directory (a static path). */
static const char *tmpdir(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/test_jar.XXXXXX");
	T_CHECK(mkdtemp(dir) != NULL);
	return dir;
}

static void rmtree(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	T_INTEQ(system(cmd), 0);
}

/*
 * Run check-jdeps.sh on a fixture with our external classes (minus the
 * one at `drop`, when >= 0): its exit status, 77 = no JDK.
 */
static int jdeps_check(const char *jar, const char *factory, long drop)
{
	struct jar_report *r = inspect(jar, NULL);
	const char *dir = tmpdir();
	char path[128], cmd[512];
	FILE *f;
	size_t i;
	int st;

	snprintf(path, sizeof(path), "%s/expected", dir);
	f = fopen(path, "w");
	T_CHECK(f != NULL);
	/* jdeps follows classes, not methods: the two sets together. */
	if (f && r) {
		char all[8192], *t, *save = NULL;

		snprintf(all, sizeof(all), "%s", externals(r));
		for (i = 0, t = strtok_r(all, " ", &save); t;
		     i++, t = strtok_r(NULL, " ", &save))
			if ((long)i != drop)
				fprintf(f, "%s\n", t);
	}
	if (f)
		fclose(f);
	jar_report_free(r);
	snprintf(cmd, sizeof(cmd),
		 "sh fixtures/check-jdeps.sh " JARS "%s %s %s >%s/out 2>&1",
		 jar, path, factory, dir);
	st = system(cmd);
	st = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (st != 0 && st != 77 && drop < 0) {
		snprintf(cmd, sizeof(cmd), "cat %s/out >&2", dir);
		T_INTEQ(system(cmd), 0);
	}
	rmtree(dir);
	return st;
}

static void test_jdeps(void)
{
	int st =
		jdeps_check("mongodb.jar",
			    "com.example.mongodb.MongoDynamicTableFactory", -1);

	if (st == 77) {
		fprintf(stderr, "test_jdeps: skipped: no JDK (jdeps)\n");
		return;
	}
	T_INTEQ(st, 0);
	T_INTEQ(jdeps_check("guava-ref.jar",
			    "com.example.guava.GuavaIshFactory", -1),
		0);
	/* The check can fail: drop one class and it must. */
	T_INTEQ(jdeps_check("mongodb.jar",
			    "com.example.mongodb.MongoDynamicTableFactory", 5),
		1);
}

/* ---- damaged archives ---- */

/* Inspect a damaged copy: refused or not, never a crash. */
static int damaged(const uint8_t *b, size_t n, size_t *ok)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct jar_report *r = NULL;
	int rc = jar_inspect_mem(&r, b, n, NULL, &err);

	if (!rc) {
		struct buf out = BUF_INIT(1 << 20);

		T_INTEQ(jar_report_format(&out, r, "java.*", 1), 0);
		buf_release(&out);
		(*ok)++;
	}
	jar_report_free(r);
	return rc == 0 || rc == -EINVAL;
}

static void test_damaged(void)
{
	static const char *const names[] = {"mongodb.jar", "zip64.jar",
					    "bundle.jar", "stored.jar"};
	size_t f, i, ok = 0, bad = 0;

	for (f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		char path[128];
		uint8_t *b;
		size_t n;

		snprintf(path, sizeof(path), JARS "%s", names[f]);
		n = slurp(path, &b);
		T_CHECK(n > 0);
		for (i = 0; i <= n; i += 11)
			bad += !damaged(b, i, &ok);
		for (i = 0; i < n; i += 5) {
			b[i] ^= 0x5a;
			bad += !damaged(b, n, &ok);
			b[i] ^= 0x5a;
		}
		free(b);
	}
	T_INTEQ(bad, 0);
	T_CHECK(ok > 0);
}

/* ---- our own index and libzip: the same reports ---- */

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/*
 * Inspect n bytes at b with `lim` (NULL = the defaults): the outcome (rc,
 * the error, the report as JSON with verdicts) into `out`.
 */
static void run(struct buf *out, const uint8_t *b, size_t n,
		const struct jar_limits *lim)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct jar_report *r = NULL;
	int rc = jar_inspect_mem(&r, b, n, lim, &err);

	buf_printf(out, "rc %d %s\n", rc, rc ? err.msg : "");
	if (!rc) {
		buf_printf(out, "code %d error %s\n", r->code, err_of(r));
		jar_report_format(out, r, "java.*", 1);
	}
	jar_report_free(r);
}

/* The report's error for the n bytes at b into err[256] ("" when the
 * archive is refused); the whole outcome into *out if non-NULL. */
static void error_in(const uint8_t *b, size_t n, char *err, struct buf *out)
{
	struct buf a = BUF_INIT(1 << 20);
	const char *e;

	run(&a, b, n, NULL);
	e = strstr(buf_str(&a), " error ");
	snprintf(err, 256, "%.*s", e ? (int)strcspn(e + 7, "\n") : 0,
		 e ? e + 7 : "");
	if (out)
		buf_printf(out, "%s", buf_str(&a));
	buf_release(&a);
}

/* Where entry `name` has its central record and local header in b. */
static int locate(const uint8_t *b, size_t n, const char *name, size_t *cen,
		  size_t *loc)
{
	size_t len = strlen(name), i;

	for (i = 0; i + 46 + len <= n; i++)
		if (!memcmp(b + i, "PK\1\2", 4) && get16(b + i + 28) == len &&
		    !memcmp(b + i + 46, name, len)) {
			*cen = i;
			*loc = get32(b + i + 42);
			return 0;
		}
	return -1;
}

/*
 * A copy of a zip (no comment) whose central records all keep their
 * sizes and offset in a zip64 extra field, as past 4 GiB; *len set.
 */
static uint8_t *zip64_extras(const uint8_t *b, size_t n, size_t *len)
{
	const uint8_t *eocd = b + n - 22;
	size_t cd = get32(eocd + 16), end = cd + get32(eocd + 12), p, k, o;
	uint8_t *z = malloc(n + 28 * get16(eocd + 10));

	if (!z || memcmp(eocd, "PK\5\6", 4))
		return free(z), NULL;
	memcpy(z, b, cd);
	for (p = cd, o = cd; p < end; p += k) {
		const uint8_t *h = b + p;
		size_t nl = get16(h + 28);

		k = 46 + nl + get16(h + 30) + get16(h + 32);
		memcpy(z + o, h, 46 + nl);
		z[o + 30] = (uint8_t)(get16(h + 30) + 28);
		z[o + 31] = (uint8_t)((get16(h + 30) + 28) >> 8);
		put32(z + o + 24, 0xffffffffu);
		put32(z + o + 20, 0xffffffffu);
		put32(z + o + 42, 0xffffffffu);
		o += 46 + nl;
		memcpy(z + o, "\1\0\30\0", 4);
		put32(z + o + 4, get32(h + 24));
		put32(z + o + 8, 0);
		put32(z + o + 12, get32(h + 20));
		put32(z + o + 16, 0);
		put32(z + o + 20, get32(h + 42));
		put32(z + o + 24, 0);
		o += 28;
		memcpy(z + o, h + 46 + nl, k - 46 - nl);
		o += k - 46 - nl;
	}
	memcpy(z + o, eocd, 22);
	put32(z + o + 12, (uint32_t)(o - cd));
	*len = o + 22;
	return z;
}

/*
 * A zip of one entry, the service file, holding `len` bytes at `data`,
 * stored or deflated (then as a raw stream ending with `flush`, and
 * `junk` bytes after it), into out[]; its length.
 */
static size_t one_entry(uint8_t *out, const char *data, size_t len, int method,
			int flush, size_t junk)
{
	static const char name[] = JAR_SERVICE_FILE;
	size_t nl = sizeof(name) - 1, comp = len, cd;
	uint8_t *d = out + 30 + nl;
	z_stream z;

	memset(&z, 0, sizeof(z));
	if (method) {
		deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8,
			     Z_DEFAULT_STRATEGY);
		z.next_in = (Bytef *)(uintptr_t)data;
		z.avail_in = (uInt)len;
		z.next_out = d;
		z.avail_out = 4096;
		deflate(&z, flush);
		comp = z.total_out + junk;
		memset(d + z.total_out, 0x5a, junk);
		deflateEnd(&z);
	} else {
		memcpy(d, data, len);
	}
	memset(out, 0, 30);
	memcpy(out, "PK\3\4\24\0\0\0", 8);
	out[8] = (uint8_t)method;
	put32(out + 14, libdeflate_crc32(0, data, len));
	put32(out + 18, (uint32_t)comp);
	put32(out + 22, (uint32_t)len);
	out[26] = (uint8_t)nl;
	memcpy(out + 30, name, nl);
	cd = 30 + nl + comp;
	memset(out + cd, 0, 46);
	memcpy(out + cd, "PK\1\2\24\0\24\0", 8);
	memcpy(out + cd + 8, out + 6, 24); /* flags .. lengths */
	memcpy(out + cd + 46, name, nl);
	memset(out + cd + 46 + nl, 0, 22);
	memcpy(out + cd + 46 + nl, "PK\5\6", 4);
	out[cd + 46 + nl + 8] = out[cd + 46 + nl + 10] = 1;
	put32(out + cd + 46 + nl + 12, (uint32_t)(46 + nl));
	put32(out + cd + 46 + nl + 16, (uint32_t)cd);
	return cd + 46 + nl + 22;
}

/* Streams that end oddly, in archives of their own. */
static void test_index_streams(void)
{
	static const char svc_text[] = "com.example.Absent\n";
	static const char absent[] = "factory class com.example.Absent is "
				     "listed in the service file but not in "
				     "the JAR";
	uint8_t b[4096];
	size_t n;
	char err[256];

	n = one_entry(b, svc_text, strlen(svc_text), 8, Z_FINISH, 0);
	error_in(b, n, err, NULL);
	T_STREQ(err, absent);
	n = one_entry(b, svc_text, strlen(svc_text), 0, 0, 0);
	error_in(b, n, err, NULL);
	T_STREQ(err, absent);
	/* All the bytes, but no final block: libzip (zlib) takes them. */
	n = one_entry(b, svc_text, strlen(svc_text), 8, Z_SYNC_FLUSH, 0);
	error_in(b, n, err, NULL);
	T_STREQ(err, absent);
	/* Bytes after the final block: the same. */
	n = one_entry(b, svc_text, strlen(svc_text), 8, Z_FINISH, 3);
	error_in(b, n, err, NULL);
	T_STREQ(err, absent);
}

#define MONGO_FACTORY "com/example/mongodb/MongoDynamicTableFactory.class"

/* Damaged entries and archives: libzip's verdict, word for word. */
static void test_index_hostile(void)
{
	struct buf out = BUF_INIT(1 << 20);
	size_t n, n2, cen = 0, loc = 0, cen2 = 0, loc2 = 0;
	char err[256];
	uint8_t *b, *c, *z;

	n = slurp(JARS "mongodb.jar", &b);
	c = malloc(n);
	T_CHECK(n && c && !locate(b, n, MONGO_FACTORY, &cen, &loc));
	if (!c || locate(b, n, MONGO_FACTORY, &cen, &loc)) {
		free(c);
		free(b);
		return;
	}
	T_INTEQ(get16(b + loc + 8), 8); /* deflated */
	error_in(b, n, err, NULL);
	T_STREQ(err, "(none)");
	/* A CRC-32 that is wrong in both headers: libzip opens it. */
	memcpy(c, b, n);
	c[cen + 16] ^= 1;
	c[loc + 14] ^= 1;
	error_in(c, n, err, NULL);
	T_STREQ(err, "entry " MONGO_FACTORY ": CRC mismatch: the entry is "
		     "damaged");
	/* Declared one byte short: the stream outgrows it. */
	memcpy(c, b, n);
	put32(c + cen + 24, 2125);
	put32(c + loc + 22, 2125);
	error_in(c, n, err, NULL);
	T_STREQ(err, "entry " MONGO_FACTORY " inflates past the 2125 bytes "
		     "its header declares (a zip bomb?)");
	/* Declared one byte long: the stream ends first. */
	put32(c + cen + 24, 2127);
	put32(c + loc + 22, 2127);
	error_in(c, n, err, NULL);
	T_STREQ(err, "entry " MONGO_FACTORY ": 2126 bytes, not the 2127 "
		     "declared");
	/* A data descriptor flagged, sizes and CRC only in the directory. */
	memcpy(c, b, n);
	c[cen + 8] |= 8;
	c[loc + 6] |= 8;
	memset(c + loc + 14, 0, 12);
	error_in(c, n, err, NULL);
	T_STREQ(err, "(none)");
	/* The local name, then the local method, no longer the central
	 * ones: libzip finds the archive inconsistent. */
	memcpy(c, b, n);
	c[loc + 30 + 12] ^= 0x20;
	error_in(c, n, err, &out);
	T_CONTAINS(buf_str(&out), "rc -22 not a valid zip archive: Zip "
				  "archive inconsistent");
	memcpy(c, b, n);
	c[loc + 8] = 0;
	buf_reset(&out);
	error_in(c, n, err, &out);
	T_CONTAINS(buf_str(&out), "rc -22 not a valid zip archive: Zip "
				  "archive inconsistent");
	/* The local time of an entry no reader reads (a class no factory
	 * reaches): found after the walk. */
	memcpy(c, b, n);
	T_CHECK(!locate(c, n, "com/example/mongodb/internal/Unused.class",
			&cen2, &loc2));
	c[loc2 + 10] ^= 1;
	buf_reset(&out);
	error_in(c, n, err, &out);
	T_CONTAINS(buf_str(&out), "rc -22 not a valid zip archive: Zip "
				  "archive inconsistent");
	buf_release(&out);
	/* Sizes and offsets in zip64 extra fields. */
	z = zip64_extras(b, n, &n2);
	T_CHECK(z != NULL);
	if (z)
		error_in(z, n2, err, NULL);
	T_STREQ(err, "(none)");
	free(z);
	free(c);
	free(b);
}

/* ---- speed: a generated 100 MB JAR of 20,000 classes ---- */

struct cw {
	uint8_t *d;
	size_t n;
};

static void w1(struct cw *c, unsigned v)
{
	c->d[c->n++] = (uint8_t)v;
}

static void w2(struct cw *c, unsigned v)
{
	w1(c, v >> 8);
	w1(c, v & 0xff);
}

static void wutf8(struct cw *c, const char *s, size_t n)
{
	w1(c, 1);
	w2(c, (unsigned)n);
	memcpy(c->d + c->n, s, n);
	c->n += n;
}

/*
 * A class file `name` (extends Object, implements `iface`) naming class
 * `ref`, with `pad` bytes of incompressible padding and, with `id`, a
 * factoryIdentifier() returning it.  Malloc'd; *len set.
 */
static uint8_t *gen_class(size_t *len, const char *name, const char *iface,
			  const char *ref, const char *id, size_t pad,
			  unsigned *seed)
{
	struct cw c;
	size_t i;

	c.d = malloc(pad + 1024);
	c.n = 0;
	if (!c.d)
		return NULL;
	w2(&c, 0xcafe);
	w2(&c, 0xbabe);
	w2(&c, 0);
	w2(&c, 55);
	/*
	 * The pool: #1 name, #2 its Class, #3-#4 java/lang/Object, #5-#6
	 * the interface, #7-#8 the class it names, #9 the padding, #10-#11
	 * factoryIdentifier()'s name and descriptor, #12 "Code", #13-#14
	 * the identifier as a String.
	 */
	w2(&c, 15);
	wutf8(&c, name, strlen(name));
	w1(&c, 7);
	w2(&c, 1);
	wutf8(&c, "java/lang/Object", 16);
	w1(&c, 7);
	w2(&c, 3);
	wutf8(&c, iface, strlen(iface));
	w1(&c, 7);
	w2(&c, 5);
	wutf8(&c, ref, strlen(ref));
	w1(&c, 7);
	w2(&c, 7);
	w1(&c, 1);
	w2(&c, (unsigned)pad);
	for (i = 0; i < pad; i++) {
		*seed = *seed * 1103515245u + 12345u;
		c.d[c.n++] = (uint8_t)('a' + (*seed >> 16) % 26);
	}
	wutf8(&c, "factoryIdentifier", 17);
	wutf8(&c, "()Ljava/lang/String;", 20);
	wutf8(&c, "Code", 4);
	wutf8(&c, id ? id : "-", id ? strlen(id) : 1);
	w1(&c, 8);
	w2(&c, 13);
	/* public class #2 extends #4 implements #6 */
	w2(&c, 0x21);
	w2(&c, 2);
	w2(&c, 4);
	w2(&c, 1);
	w2(&c, 6);
	w2(&c, 0);	    /* fields */
	w2(&c, id ? 1 : 0); /* methods */
	if (id) {
		/* public #10 #11, Code (15 bytes): stack 1, locals 1,
		 * 3 bytes of code: ldc #14; areturn */
		w2(&c, 1);
		w2(&c, 10);
		w2(&c, 11);
		w2(&c, 1);
		w2(&c, 12);
		w2(&c, 0);
		w2(&c, 15);
		w2(&c, 1);
		w2(&c, 1);
		w2(&c, 0);
		w2(&c, 3);
		w1(&c, 0x12);
		w1(&c, 14);
		w1(&c, 0xb0);
		w2(&c, 0);
		w2(&c, 0);
	}
	w2(&c, 0); /* attributes */
	*len = c.n;
	return c.d;
}

/* Add n bytes (handed over) as entry `name`, stored. */
static int add_entry(zip_t *za, const char *name, uint8_t *d, size_t n)
{
	zip_source_t *src = zip_source_buffer(za, d, n, 1);
	zip_int64_t idx;

	if (!src) {
		free(d);
		return -1;
	}
	idx = zip_file_add(za, name, src, ZIP_FL_ENC_UTF_8);
	if (idx < 0) {
		zip_source_free(src);
		return -1;
	}
	return zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
}

#define NCLASSES 20000
#define NREACHED 2000

/*
 * A new zip at `path` holding a service file that lists factory `cls`
 * (an internal name, "gen/PerfFactory"), and that factory's class file,
 * which names class `first`, with identifier `id`.  NULL on failure.
 */
static zip_t *factory_zip(const char *path, const char *cls, const char *first,
			  const char *id, unsigned *seed)
{
	size_t n = strlen(cls), i;
	char entry[128];
	uint8_t *d;
	int ze = 0, fail;
	zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &ze);

	d = malloc(n + 1);
	if (!za || !d) {
		free(d);
		if (za)
			zip_discard(za);
		return NULL;
	}
	for (i = 0; i < n; i++)
		d[i] = cls[i] == '/' ? '.' : (uint8_t)cls[i];
	d[n] = '\n';
	fail = add_entry(za, JAR_SERVICE_FILE, d, n + 1);
	d = gen_class(
		&n, cls,
		"org/apache/flink/table/factories/DynamicTableSinkFactory",
		first, id, 10, seed);
	snprintf(entry, sizeof(entry), "%s.class", cls);
	fail |= !d || add_entry(za, entry, d, n);
	if (fail) {
		zip_discard(za);
		return NULL;
	}
	return za;
}

#define NTREE 4095

/*
 * A tree of classes, each naming two more (T(i): T(2i+1) and T(2i+2)):
 * every class is reached, and a cap stops the walk midway.
 */
static void test_wide(void)
{
	const char *dir = tmpdir();
	struct buf want = BUF_INIT(1 << 22);
	char path[128], name[64], l[64], r[64];
	struct jar_limits lim[3];
	size_t n, i, k;
	unsigned seed = 7;
	uint8_t *d, *jar;
	int fail = 0;
	zip_t *za;

	snprintf(path, sizeof(path), "%s/wide.jar", dir);
	za = factory_zip(path, "gen/TreeFactory", "gen/T0000", "tree", &seed);
	T_CHECK(za != NULL);
	if (!za)
		return;
	for (i = 0; i < NTREE && !fail; i++) {
		snprintf(name, sizeof(name), "gen/T%04zu", i);
		snprintf(l, sizeof(l),
			 2 * i + 1 < NTREE ? "gen/T%04zu"
					   : "java/io/Serializable",
			 2 * i + 1);
		snprintf(r, sizeof(r),
			 2 * i + 2 < NTREE ? "gen/T%04zu" : "java/util/List",
			 2 * i + 2);
		d = gen_class(&n, name, l, r, NULL, 64, &seed);
		snprintf(name, sizeof(name), "gen/T%04zu.class", i);
		fail |= !d || add_entry(za, name, d, n);
	}
	T_CHECK(!fail);
	T_INTEQ(zip_close(za), 0);
	n = slurp(path, &jar);
	T_CHECK(n > 0);
	/* No caps in the way; the classes cap midway; the inflate cap. */
	for (k = 0; k < 3; k++)
		jar_limits_default(&lim[k]);
	lim[1].max_classes = 3000;
	lim[2].max_inflated = 200000;
	for (k = 0; k < 3; k++) {
		buf_reset(&want);
		run(&want, jar, n, &lim[k]);
		if (k == 0) {
			T_CONTAINS(buf_str(&want), "java.util.List");
		} else {
			T_CONTAINS(buf_str(&want), "(the limit)");
		}
	}
	free(jar);
	buf_release(&want);
}

/*
 * A JAR of 602 entries, wide enough to be pre-read: a service file, its
 * factory, and a chain P0000 -> P0001 -> ... -> P0599 -> java/util/List;
 * its bytes into *jar, their count returned (0 when it cannot be made).
 */
static size_t chain_jar(uint8_t **jar)
{
	char path[128], name[64], next[64];
	unsigned seed = 3;
	size_t n, i;
	uint8_t *d;
	int fail = 0;
	zip_t *za;

	*jar = NULL;
	snprintf(path, sizeof(path), "%s/pre.jar", tmpdir());
	za = factory_zip(path, "gen/PreFactory", "gen/P0000", "pre", &seed);
	T_CHECK(za != NULL);
	if (!za)
		return 0;
	for (i = 0; i < 600 && !fail; i++) {
		snprintf(name, sizeof(name), "gen/P%04zu", i);
		snprintf(next, sizeof(next),
			 i + 1 < 600 ? "gen/P%04zu" : "java/util/List", i + 1);
		d = gen_class(&n, name, "java/io/Serializable", next, NULL, 64,
			      &seed);
		snprintf(name, sizeof(name), "gen/P%04zu.class", i);
		fail |= !d || add_entry(za, name, d, n);
	}
	T_CHECK(!fail);
	T_INTEQ(zip_close(za), 0);
	n = slurp(path, jar);
	T_CHECK(n > 0);
	return n;
}

/*
 * A directory that says a deflated class's data runs far past its
 * neighbours (or past 4 GiB) makes it overlap them: refused as libzip
 * refuses it, without reading (or allocating) the forged length.
 */
static void test_forged_run(void)
{
	static const uint32_t lie[] = {1u << 20, 0xfffffe00u};
	struct buf got = BUF_INIT(1 << 20);
	size_t n, cen = 0, loc, k;
	uint8_t *jar;

	n = chain_jar(&jar);
	if (!n)
		return;
	T_INTEQ(locate(jar, n, "gen/P0100.class", &cen, &loc), 0);
	for (k = 0; k < sizeof(lie) / sizeof(*lie) && cen; k++) {
		jar[cen + 10] = 8; /* deflated: the sizes may differ */
		put32(jar + cen + 20, lie[k]);
		buf_reset(&got);
		run(&got, jar, n, NULL);
		T_CONTAINS(buf_str(&got), "rc -22 not a valid zip archive: ");
	}
	free(jar);
	buf_release(&got);
}

static void test_speed(void)
{
	const char *dir = tmpdir();
	struct cmfs_err err = CMFS_ERR_INIT;
	struct jar_report *r = NULL;
	struct jar_limits lim;
	char path[128], name[64], ref[64];
	struct timespec t0, t1;
	unsigned seed = 1;
	uint8_t *d;
	size_t n, i;
	double secs, limit;
	struct stat st;
	zip_t *za;
	int fail = 0;

	snprintf(path, sizeof(path), "%s/big.jar", dir);
	za = factory_zip(path, "gen/PerfFactory", "gen/C00000", "perf", &seed);
	T_CHECK(za != NULL);
	if (!za)
		return;
	/* A chain of NREACHED classes; the rest name okhttp3, unreached. */
	for (i = 0; i < NCLASSES && !fail; i++) {
		snprintf(name, sizeof(name), "gen/C%05zu", i);
		if (i + 1 < NREACHED)
			snprintf(ref, sizeof(ref), "gen/C%05zu", i + 1);
		else
			snprintf(ref, sizeof(ref),
				 i < NREACHED ? "java/util/List"
					      : "okhttp3/OkHttpClient");
		d = gen_class(&n, name, "java/io/Serializable", ref, NULL, 5000,
			      &seed);
		snprintf(name, sizeof(name), "gen/C%05zu.class", i);
		fail |= d ? add_entry(za, name, d, n) : -1;
	}
	T_INTEQ(fail, 0);
	T_INTEQ(zip_close(za), 0);
	T_CHECK(stat(path, &st) == 0 && st.st_size > 100000000);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	T_INTEQ(jar_inspect(&r, path, NULL, &err), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	T_STREQ(err_of(r), "(none)");
	T_STREQ(factories(r), "connector perf gen.PerfFactory");
	T_STREQ(externals(r), "java.io.Serializable java.lang.Object "
			      "java.lang.String java.util.List " FACT
			      "DynamicTableSinkFactory");
	T_INTEQ(r ? r->nentries : 0, NCLASSES + 2);
	jar_report_free(r);
	r = NULL;
	/* Sanitizers slow everything down several times. */
	limit = 1.0;
#if defined(__SANITIZE_ADDRESS__)
	limit = 6.0;
#endif
	fprintf(stderr,
		"test_speed: %.0f MB, %d classes, %d reached: "
		"%.3f s\n",
		(double)st.st_size / 1e6, NCLASSES, NREACHED + 1, secs);
	T_CHECK(secs < limit);
	/* The entry cap stops it before libzip reads the directory. */
	jar_limits_default(&lim);
	lim.max_entries = 10000;
	T_INTEQ(jar_inspect(&r, path, &lim, &err), 0);
	T_STREQ(err_of(r), "the archive declares 20002 entries, over the "
			   "limit of 10000");
	jar_report_free(r);
	rmtree(dir);
}

int main(void)
{
	T_RUN(test_mongodb);
	T_RUN(test_format_and_stored);
	T_RUN(test_report_copy);
	T_RUN(test_bundle);
	T_RUN(test_identifier_rules);
	T_RUN(test_reach);
	T_RUN(test_zip_variants);
	T_RUN(test_not_factory_jars);
	T_RUN(test_hostile_jars);
	T_RUN(test_invalid_archives);
	T_RUN(test_limits);
	T_RUN(test_fd_and_memory);
	T_RUN(test_service_parse);
	T_RUN(test_service_parse_big);
	T_RUN(test_allowlist);
	T_RUN(test_kinds);
	T_RUN(test_report_format);
	T_RUN(test_failure_format);
	T_RUN(test_jdeps);
	T_RUN(test_damaged);
	T_RUN(test_index_hostile);
	T_RUN(test_index_streams);
	T_RUN(test_wide);
	T_RUN(test_forged_run);
	T_RUN(test_speed);
	return T_DONE();
}
