/*
 * test_reach.c - method-level reach over fixture JARs and the published
 * connector JARs (../shared/realjars, when present): the exact sets of
 * external classes each needs while a statement is compiled, checked
 * against what a JVM loads (tests/jvm/expected/, recorded by
 * tests/jvm/run.sh), and the caps.  Run from tests/.
 */
#include "jar.h"
#include "reach.h"
#include "t.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>

#define JARS "fixtures/jars/"
#define REAL "../../shared/realjars/"
#define SERVICE "META-INF/services/org.apache.flink.table.factories.Factory"

/* A JAR's classes, parsed on first use and kept for the walk. */
struct jar {
	zip_t *za;
	struct classfile **cf;
	uint8_t **bytes;
	size_t n, cap;
	size_t lookups; /* calls of the callback */
	int fail_on;	/* > 0: the n-th lookup fails with -EIO */
};

/* reach_lookup_fn over a zip archive: "<iname>.class" or external. */
static int jar_lookup(void *ctx, const char *iname,
		      const struct classfile **out)
{
	struct jar *j = ctx;
	char entry[1024];
	zip_stat_t st;
	zip_file_t *f;
	uint8_t *b;
	int rc;

	*out = NULL;
	if (++j->lookups == (size_t)j->fail_on)
		return -EIO;
	snprintf(entry, sizeof(entry), "%s.class", iname);
	if (zip_stat(j->za, entry, 0, &st) || !(st.valid & ZIP_STAT_SIZE))
		return 0;
	b = malloc(st.size ? st.size : 1);
	f = zip_fopen(j->za, entry, 0);
	if (!b || !f || zip_fread(f, b, st.size) != (zip_int64_t)st.size) {
		free(b);
		if (f)
			zip_fclose(f);
		return -EIO;
	}
	zip_fclose(f);
	if (j->n == j->cap) {
		j->cap = j->cap ? j->cap * 2 : 64;
		j->cf = realloc(j->cf, j->cap * sizeof(*j->cf));
		j->bytes = realloc(j->bytes, j->cap * sizeof(*j->bytes));
	}
	rc = classfile_parse(&j->cf[j->n], b, st.size, NULL);
	if (rc) {
		free(b);
		return rc;
	}
	j->bytes[j->n] = b;
	*out = j->cf[j->n++];
	return 0;
}

static void jar_close(struct jar *j)
{
	size_t i;

	for (i = 0; i < j->n; i++) {
		classfile_free(j->cf[i]);
		free(j->bytes[i]);
	}
	free(j->cf);
	free(j->bytes);
	if (j->za)
		zip_discard(j->za);
	memset(j, 0, sizeof(*j));
}

/* The classes of service file `svc`, as internal names, into v[]. */
static size_t factories(zip_t *za, const char *svc, char v[][256], size_t max)
{
	zip_file_t *f = zip_fopen(za, svc, 0);
	char buf[8192], *line, *save = NULL;
	zip_int64_t len;
	size_t n = 0;

	if (!f)
		return 0;
	len = zip_fread(f, buf, sizeof(buf) - 1);
	zip_fclose(f);
	buf[len > 0 ? len : 0] = '\0';
	for (line = strtok_r(buf, "\r\n", &save); line && n < max;
	     line = strtok_r(NULL, "\r\n", &save)) {
		char *p = line, *e;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		for (e = p; *e && *e != ' ' && *e != '\t' && *e != '#'; e++)
			*e = *e == '.' ? '/' : *e;
		*e = '\0';
		snprintf(v[n++], 256, "%s", p);
	}
	return n;
}

/*
 * Reach over JAR `path`: 0 and the compile-time set joined by spaces
 * (dots) in `line`, or the error (message in msg).
 */
static int reach_jar(const char *path, const struct reach_limits *lim,
		     int fail_on, char *line, size_t cap, char *msg,
		     struct reach_result *keep)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct reach_result r;
	struct jar j = {0};
	char fac[16][256], prov[16][256];
	const char *fv[16], *pv[16];
	size_t nf, np = 0, i, len = 0;
	int rc, ze = 0;

	line[0] = msg[0] = '\0';
	j.fail_on = fail_on;
	j.za = zip_open(path, ZIP_RDONLY, &ze);
	if (!j.za)
		return -ENOENT;
	nf = factories(j.za, SERVICE, fac, 16);
	for (i = 0; i < nf; i++)
		fv[i] = fac[i];
	/* The other service files' providers. */
	for (i = 0; i < (size_t)zip_get_num_entries(j.za, 0); i++) {
		const char *e = zip_get_name(j.za, i, 0);

		if (e && !strncmp(e, "META-INF/services/", 18) &&
		    !strchr(e + 18, '/') && strcmp(e, SERVICE) && e[18])
			np += factories(j.za, e, prov + np, 16 - np);
	}
	for (i = 0; i < np; i++)
		pv[i] = prov[i];
	rc = reach_run(&r, fv, nf, pv, np, jar_lookup, &j, lim, &err);
	snprintf(msg, CMFS_ERR_MSG, "%s", err.msg);
	for (i = 0; !rc && i < r.ncompile; i++) {
		char *p;

		len += (size_t)snprintf(line + len, len < cap ? cap - len : 0,
					"%s%s", i ? " " : "", r.compile[i]);
		for (p = line + len - strlen(r.compile[i]); len < cap && *p;
		     p++)
			if (*p == '/')
				*p = '.';
	}
	if (!rc && keep)
		*keep = r;
	else if (!rc)
		reach_result_release(&r);
	jar_close(&j);
	return rc;
}

/* A JDK class: always on a cluster, and loaded besides by its verifier. */
static int jdk(const char *n)
{
	return !strncmp(n, "java.", 5) || !strncmp(n, "javax.", 6) ||
	       !strncmp(n, "jdk.", 4) || !strncmp(n, "sun.", 4);
}

/* 1 if `name` is one of the space-separated names of `line`. */
static int in_line(const char *line, const char *name)
{
	size_t n = strlen(name);
	const char *p = line;

	while ((p = strstr(p, name))) {
		if ((p == line || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* The exact sets of the fixtures built for reach (java/reach/). */
static void test_fixture_sets(void)
{
	static char line[1 << 16];
	char msg[CMFS_ERR_MSG];

	/* Run time names com.absent.lib (a reader, a lambda kept for it, a
	 * Fetcher only the reader makes): none of it here.  A lambda kept
	 * in a static field and handed to Optional.map runs: Locale. */
	T_INTEQ(reach_jar(JARS "reach-rt-absent.jar", NULL, 0, line,
			  sizeof(line), msg, NULL),
		0);
	T_STREQ(line,
		"java.lang.Object java.lang.String java.lang.invoke.CallSite "
		"java.lang.invoke.LambdaMetafactory "
		"java.lang.invoke.MethodHandle "
		"java.lang.invoke.MethodHandles$Lookup "
		"java.lang.invoke.MethodType "
		"java.lang.invoke.StringConcatFactory java.util.Collections "
		"java.util.HashSet java.util.Locale java.util.Optional "
		"java.util.Set java.util.function.Function "
		"org.apache.flink.api.connector.source.Source "
		"org.apache.flink.configuration.ConfigOption "
		"org.apache.flink.configuration.ReadableConfig "
		"org.apache.flink.table.connector.ChangelogMode "
		"org.apache.flink.table.connector.source.DynamicTableSource "
		"org.apache.flink.table.connector.source.ScanTableSource "
		"org.apache.flink.table.connector.source.ScanTableSource$"
		"ScanRuntimeProvider "
		"org.apache.flink.table.connector.source.SourceProvider "
		"org.apache.flink.table.factories.DynamicTableFactory$Context "
		"org.apache.flink.table.factories.DynamicTableSourceFactory");
	/* A source's constructor, another's runtime provider. */
	T_INTEQ(reach_jar(JARS "reach-compile-absent.jar", NULL, 0, line,
			  sizeof(line), msg, NULL),
		0);
	T_STREQ(line,
		"com.absent.lib.Client com.absent.lib.Deserializer "
		"java.lang.Object java.lang.String java.util.Collections "
		"java.util.Set org.apache.flink.table.connector.ChangelogMode "
		"org.apache.flink.table.connector.source.DynamicTableSource "
		"org.apache.flink.table.connector.source.ScanTableSource "
		"org.apache.flink.table.connector.source.ScanTableSource$"
		"ScanRuntimeProvider "
		"org.apache.flink.table.factories.DynamicTableSourceFactory");
	/* Shaped like a fat SQL connector: the relocated client's run-time
	 * paths (lz4, Kerberos, Jackson, commons-lang3) are not reached. */
	T_INTEQ(reach_jar(JARS "reach-fat-like.jar", NULL, 0, line,
			  sizeof(line), msg, NULL),
		0);
	T_STREQ(line,
		"java.io.Closeable java.lang.CharSequence java.lang.Class "
		"java.lang.Object java.lang.String java.lang.invoke.CallSite "
		"java.lang.invoke.LambdaMetafactory "
		"java.lang.invoke.MethodHandle "
		"java.lang.invoke.MethodHandles$Lookup "
		"java.lang.invoke.MethodType java.util.HashSet "
		"java.util.Properties java.util.Set "
		"java.util.function.Function "
		"org.apache.flink.api.connector.source.Source "
		"org.apache.flink.configuration.ConfigOption "
		"org.apache.flink.configuration.ReadableConfig "
		"org.apache.flink.table.connector.ChangelogMode "
		"org.apache.flink.table.connector.sink.DynamicTableSink "
		"org.apache.flink.table.connector.sink.DynamicTableSink$"
		"SinkRuntimeProvider "
		"org.apache.flink.table.connector.source.DynamicTableSource "
		"org.apache.flink.table.connector.source.ScanTableSource "
		"org.apache.flink.table.connector.source.ScanTableSource$"
		"ScanRuntimeProvider "
		"org.apache.flink.table.connector.source.SourceProvider "
		"org.apache.flink.table.connector.source.abilities."
		"SupportsProjectionPushDown "
		"org.apache.flink.table.factories.DynamicTableFactory$Context "
		"org.apache.flink.table.factories.DynamicTableSinkFactory "
		"org.apache.flink.table.factories.DynamicTableSourceFactory");
	T_CHECK(!strstr(line, "jackson") && !strstr(line, "jpountz") &&
		!strstr(line, "jgss") && !strstr(line, "lang3"));
	/* Dialects found by ServiceLoader: no `new` names them, yet both
	 * are constructed and asked (UUID, Objects); one's run-time
	 * converter names com.absent.lib, not reached. */
	T_INTEQ(reach_jar(JARS "reach-services.jar", NULL, 0, line,
			  sizeof(line), msg, NULL),
		0);
	T_STREQ(line,
		"java.lang.Class java.lang.ClassLoader java.lang.Object "
		"java.lang.String java.util.Collections java.util.Iterator "
		"java.util.Objects java.util.ServiceLoader java.util.Set "
		"java.util.UUID org.apache.flink.configuration.ConfigOption "
		"org.apache.flink.configuration.ReadableConfig "
		"org.apache.flink.table.connector.ChangelogMode "
		"org.apache.flink.table.connector.source.DynamicTableSource "
		"org.apache.flink.table.connector.source.ScanTableSource "
		"org.apache.flink.table.connector.source.ScanTableSource$"
		"ScanRuntimeProvider "
		"org.apache.flink.table.factories.DynamicTableFactory$Context "
		"org.apache.flink.table.factories.DynamicTableSourceFactory");
}

/* The run-time set jar_inspect reports beside it, joined by spaces. */
static const char *runtime_of(const char *jar, char *line, size_t cap)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct jar_report *r = NULL;
	char path[256];
	size_t i, n = 0;

	line[0] = '\0';
	snprintf(path, sizeof(path), JARS "%s.jar", jar);
	T_INTEQ(jar_inspect(&r, path, NULL, &err), 0);
	T_CHECK(r && !r->error);
	for (i = 0; r && i < r->nruntime; i++)
		n += (size_t)snprintf(line + n, n < cap ? cap - n : 0, "%s%s",
				      i ? " " : "", r->runtime[i]);
	jar_report_free(r);
	return line;
}

/* What only the job's run time needs: reported, never checked. */
static void test_runtime_sets(void)
{
	static char line[1 << 14];

	T_STREQ(runtime_of("reach-rt-absent", line, sizeof(line)),
		"com.absent.lib.Client com.absent.lib.Codec "
		"java.lang.invoke.MethodHandles "
		"org.apache.flink.table.connector.source.ScanTableSource$"
		"ScanContext org.apache.flink.table.factories."
		"DynamicTableFactory");
	T_STREQ(runtime_of("reach-compile-absent", line, sizeof(line)),
		"org.apache.flink.table.connector.source.ScanTableSource$"
		"ScanContext org.apache.flink.table.factories."
		"DynamicTableFactory org.apache.flink.table.factories."
		"DynamicTableFactory$Context");
	/* A provider's run-time code: found from the service file. */
	T_STREQ(runtime_of("reach-services", line, sizeof(line)),
		"com.absent.lib.Codec "
		"org.apache.flink.table.connector.source.ScanTableSource$"
		"ScanContext org.apache.flink.table.factories."
		"DynamicTableFactory");
	/* The fat shape: compression, Kerberos, Jackson, commons-lang3. */
	T_STREQ(runtime_of("reach-fat-like", line, sizeof(line)),
		"com.fasterxml.jackson.databind.ObjectMapper "
		"java.lang.invoke.MethodHandles "
		"java.lang.invoke.StringConcatFactory "
		"net.jpountz.lz4.LZ4Factory "
		"org.apache.commons.lang3.StringUtils "
		"org.apache.flink.table.connector.sink.DynamicTableSink$"
		"Context "
		"org.apache.flink.table.connector.source.ScanTableSource$"
		"ScanContext org.apache.flink.table.factories."
		"DynamicTableFactory org.ietf.jgss.GSSException "
		"org.ietf.jgss.GSSManager org.ietf.jgss.GSSName "
		"org.ietf.jgss.Oid");
}

/*
 * Against the JVM: what ReachProbe recorded (tests/jvm/expected/) is in
 * cmfs's set, for every fixture; for those built to be exact, the sets
 * are equal but for JDK classes (cmfs counts the bootstrap methods' and
 * the declared types' of what runs, which the JVM loads only as a check
 * needs them; every cluster has them).
 */
static void test_jvm(void)
{
	static const struct {
		const char *jar;
		int exact;
	} v[] = {
		/* Exact: built so that every class compiling names, the JVM
		 * loads too (no null returned for a declared type, every
		 * parameter used as declared). */
		{"reach-rt-absent", 1},
		{"reach-fat-like", 1},
		{"reach-services", 1},
		{"mongodb", 1},
		/* Contained: a create* that returns null, a constructor
		 * that throws, options the stub context cannot give. */
		{"reach-compile-absent", 0},
		{"fmt-jsonish", 0},
		{"inherit", 0},
		{"default-id", 0},
		{"runtime-id", 0},
		{"async-sink", 0},
		{"guava-ref", 0},
		{"unicode", 0},
		{"bundle", 0},
		{"const-id", 0},
		/* (missing-class.jar lists a factory it lacks: no upload
		 * gets as far as reach.) */
	};
	static char line[1 << 16];
	char msg[CMFS_ERR_MSG], path[256], *text, *save = NULL, *n;
	size_t i, k, len, nj;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(path, sizeof(path), "jvm/expected/%s.txt", v[i].jar);
		text = t_slurp(path, &len);
		T_CHECK(text != NULL);
		if (!text)
			continue;
		snprintf(path, sizeof(path), JARS "%s.jar", v[i].jar);
		T_INTEQ(reach_jar(path, NULL, 0, line, sizeof(line), msg, NULL),
			0);
		nj = 0;
		for (n = strtok_r(text, "\n", &save); n;
		     n = strtok_r(NULL, "\n", &save)) {
			nj += !jdk(n);
			if (!in_line(line, n))
				fprintf(stderr, "%s: the JVM loads %s\n",
					v[i].jar, n);
			T_CHECK(in_line(line, n));
		}
		/* Exact: as many non-JDK names as the JVM's. */
		for (k = 0, n = line; v[i].exact && *n; k++) {
			size_t w = strcspn(n, " ");
			char one[512];

			snprintf(one, sizeof(one), "%.*s", (int)w, n);
			if (jdk(one))
				k--;
			n += w + (n[w] == ' ');
		}
		if (v[i].exact)
			T_INTEQ(k, nj);
		free(text);
	}
}

/*
 * With a JDK: run the JVM again (tests/jvm/run.sh) and find the same
 * records as those committed, which test_jvm compared with cmfs.
 */
static void test_jvm_again(void)
{
	char dir[] = "/tmp/cmfs-test-reach-XXXXXX", cmd[512], path[600];
	char *a, *b;
	size_t la, lb, i;
	int st;
	static const char *const v[] = {
		"reach-rt-absent", "reach-fat-like", "reach-compile-absent",
		"reach-services",  "mongodb",	     "fmt-jsonish",
		"inherit",	   "default-id",     "runtime-id",
		"async-sink",	   "guava-ref",	     "unicode",
		"bundle",	   "const-id",
		/* The option keys OptionsProbe reads, which test_options
		 * compares with cmfs's. */
		"options-keys",	   NULL};

	if (system("command -v javac >/dev/null 2>&1") != 0) {
		printf("test_reach: no javac: the JVM is not run again\n");
		return;
	}
	T_CHECK(mkdtemp(dir) != NULL);
	snprintf(cmd, sizeof(cmd), "sh jvm/run.sh %s >%s/log 2>&1", dir, dir);
	st = system(cmd);
	T_INTEQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
	for (i = 0; v[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s.txt", dir, v[i]);
		a = t_slurp(path, &la);
		snprintf(path, sizeof(path), "jvm/expected/%s.txt", v[i]);
		b = t_slurp(path, &lb);
		T_CHECK(a && b && la == lb && !memcmp(a, b, la));
		free(a);
		free(b);
	}
	t_rmtree(dir);
}

/* The caps, a failing lookup, a factory the JAR lacks. */
static void test_limits_and_errors(void)
{
	static char line[1 << 14];
	struct reach_limits lim;
	char msg[CMFS_ERR_MSG];

	reach_limits_default(&lim);
	lim.max_methods = 3;
	T_ERRNO(reach_jar(JARS "reach-fat-like.jar", &lim, 0, line,
			  sizeof(line), msg, NULL),
		EFBIG);
	T_STREQ(msg, "the factories' code reaches more than 3 methods (the "
		     "limit)");
	reach_limits_default(&lim);
	lim.max_classes = 5;
	T_ERRNO(reach_jar(JARS "reach-fat-like.jar", &lim, 0, line,
			  sizeof(line), msg, NULL),
		EFBIG);
	T_CONTAINS(msg, "more than 5 classes");
	/* What the callback returns stops the walk and comes back. */
	T_ERRNO(reach_jar(JARS "reach-fat-like.jar", NULL, 3, line,
			  sizeof(line), msg, NULL),
		EIO);
	/* A listed factory the JAR does not hold. */
	T_ERRNO(reach_jar(JARS "missing-class.jar", NULL, 0, line, sizeof(line),
			  msg, NULL),
		ENOEXEC);
	T_CONTAINS(msg, "AbsentFactory is not in the JAR");
}

/* Bytecode that does not decode, in a reached method: which method. */
static int one_class(void *ctx, const char *iname, const struct classfile **out)
{
	const struct classfile *cf = ctx;

	*out = !strcmp(iname, "com/example/rtabsent/RtFactory") ? cf : NULL;
	return 0;
}

static void test_bad_code(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	const char *fac = "com/example/rtabsent/RtFactory";
	struct reach_result r;
	struct classfile *cf = NULL;
	zip_t *za;
	zip_file_t *f;
	zip_stat_t st;
	uint8_t *b = NULL;
	unsigned i;
	int ze;

	za = zip_open(JARS "reach-rt-absent.jar", ZIP_RDONLY, &ze);
	T_CHECK(za &&
		!zip_stat(za, "com/example/rtabsent/RtFactory.class", 0, &st));
	if (!za)
		return;
	b = malloc(st.size);
	f = zip_fopen(za, "com/example/rtabsent/RtFactory.class", 0);
	T_CHECK(b && f && zip_fread(f, b, st.size) == (zip_int64_t)st.size);
	zip_fclose(f);
	zip_discard(za);
	T_INTEQ(classfile_parse(&cf, b, st.size, NULL), 0);
	/* Alone, it reaches only itself and external classes. */
	T_INTEQ(reach_run(&r, &fac, 1, NULL, 0, one_class, cf, NULL, &err), 0);
	T_INTEQ(r.nclasses, 1);
	T_CHECK(r.nmethods >= 5);
	reach_result_release(&r);
	/* factoryIdentifier's first opcode made one no class file holds. */
	for (i = 0; cf && i < cf->nmethods; i++)
		if (classfile_utf8_eq(cf, cf->methods[i].name,
				      "factoryIdentifier"))
			b[cf->methods[i].code - b] = 0xca;
	T_ERRNO(reach_run(&r, &fac, 1, NULL, 0, one_class, cf, NULL, &err),
		EINVAL);
	T_CONTAINS(err.msg, "class com/example/rtabsent/RtFactory, method "
			    "factoryIdentifier: offset ");
	T_CONTAINS(err.msg, "unknown opcode 0xca");
	classfile_free(cf);
	free(b);
}

/* Class `entry` of fixture JAR `jar`, parsed (*bytes: free after it). */
static struct classfile *jar_class(const char *jar, const char *entry,
				   uint8_t **bytes)
{
	struct classfile *cf = NULL;
	zip_file_t *f;
	zip_stat_t st;
	zip_t *za;
	int ze;

	*bytes = NULL;
	za = zip_open(jar, ZIP_RDONLY, &ze);
	if (!za || zip_stat(za, entry, 0, &st) || !(*bytes = malloc(st.size)) ||
	    !(f = zip_fopen(za, entry, 0))) {
		T_CHECK(0);
		if (za)
			zip_discard(za);
		return NULL;
	}
	T_CHECK(zip_fread(f, *bytes, st.size) == (zip_int64_t)st.size);
	zip_fclose(f);
	zip_discard(za);
	T_INTEQ(classfile_parse(&cf, *bytes, st.size, NULL), 0);
	return cf;
}

/* The class file reader's handlers and bootstrap methods, on javac's
 * output (reach reads them; test_classfile has the hostile cases). */
static void test_handlers_and_bootstraps(void)
{
	struct classfile *cf;
	uint8_t *b;
	uint16_t t = 0, h = 0, na = 0;
	char *name = NULL;
	unsigned i, seen = 0;

	/* try { GSSManager ... } catch (GSSException e): one handler. */
	cf = jar_class(JARS "reach-fat-like.jar",
		       "org/apache/flink/kafka/shaded/org/apache/kafka/common/"
		       "security/SaslAuthenticator.class",
		       &b);
	for (i = 0; cf && i < cf->nmethods; i++) {
		if (!cf->methods[i].nexc)
			continue;
		seen++;
		T_INTEQ(cf->methods[i].nexc, 1);
		T_INTEQ(classfile_handler(cf, &cf->methods[i], 0, &t, NULL), 0);
		T_INTEQ(classfile_class_name(&name, cf, t, NULL), 0);
		T_STREQ(name, "org/ietf/jgss/GSSException");
		free(name);
		name = NULL;
		T_ERRNO(classfile_handler(cf, &cf->methods[i], 1, &t, NULL),
			EINVAL);
	}
	T_INTEQ(seen, 1);
	classfile_free(cf);
	free(b);
	/* Two lambdas and a string concatenation: three bootstrap methods,
	 * LambdaMetafactory's with its three arguments. */
	cf = jar_class(JARS "reach-rt-absent.jar",
		       "com/example/rtabsent/RtTableSource.class", &b);
	T_CHECK(cf && cf->nbsm == 3);
	for (i = 0, seen = 0; cf && i < cf->nbsm; i++) {
		struct classfile_const *c;

		T_INTEQ(classfile_bootstrap(cf, i, &h, &na, NULL), 0);
		T_INTEQ(cf->cp[h].tag, CLASSFILE_METHOD_HANDLE);
		T_INTEQ(cf->cp[h].kind, 6); /* invokeStatic */
		c = &cf->cp[cf->cp[h].a];
		T_INTEQ(classfile_class_name(&name, cf, c->a, NULL), 0);
		if (name &&
		    !strcmp(name, "java/lang/invoke/LambdaMetafactory")) {
			seen++;
			T_INTEQ(na, 3);
			T_INTEQ(cf->cp[classfile_bootstrap_arg(cf, i, 0)].tag,
				CLASSFILE_METHOD_TYPE);
			T_INTEQ(cf->cp[classfile_bootstrap_arg(cf, i, 1)].tag,
				CLASSFILE_METHOD_HANDLE);
		}
		free(name);
		name = NULL;
	}
	T_INTEQ(seen, 2);
	T_ERRNO(cf ? classfile_bootstrap(cf, 3, &h, &na, NULL) : -EINVAL,
		EINVAL);
	classfile_free(cf);
	free(b);
}

/* The published JARs: what compiling a statement loads. */
static void test_realjars(void)
{
	static char line[1 << 16];
	char msg[CMFS_ERR_MSG], *save = NULL, *n;
	static const char *const kafka[] = {
		REAL "flink-connector-kafka-3.4.0-1.20.jar",
		REAL "flink-connector-kafka-3.1-SNAPSHOT.jar"};
	size_t i;

	if (access(REAL "flink-connector-jdbc_2.11-1.11.2.jar", R_OK)) {
		printf("test_reach: %s absent, skipped\n", REAL);
		return;
	}
	/* JDBC: only the JDK, Flink and slf4j (not the Postgres dialect's
	 * array converter's org.postgresql). */
	T_INTEQ(reach_jar(REAL "flink-connector-jdbc_2.11-1.11.2.jar", NULL, 0,
			  line, sizeof(line), msg, NULL),
		0);
	for (n = strtok_r(line, " ", &save); n; n = strtok_r(NULL, " ", &save))
		if (!jdk(n) && strncmp(n, "org.apache.flink.", 17) &&
		    strncmp(n, "org.slf4j.", 10)) {
			fprintf(stderr, "jdbc: %s\n", n);
			T_CHECK(0);
		}
	/* Thin Kafka: building the source needs kafka-clients. */
	for (i = 0; i < 2; i++) {
		T_INTEQ(reach_jar(kafka[i], NULL, 0, line, sizeof(line), msg,
				  NULL),
			0);
		T_CHECK(in_line(line, "org.apache.kafka.common.serialization."
				      "ByteArrayDeserializer"));
	}
}

/* REACH_PRINT=1: each fixture's set, for a person. */
static void test_print_all(void)
{
	static const char *const v[] = {"reach-rt-absent",
					"reach-fat-like",
					"reach-compile-absent",
					"mongodb",
					"fmt-jsonish",
					"inherit",
					"default-id",
					"runtime-id",
					"async-sink",
					"guava-ref",
					"unicode",
					"bundle",
					"const-id",
					NULL};
	static char line[1 << 16];
	char msg[CMFS_ERR_MSG], path[256];
	size_t i;

	for (i = 0; v[i]; i++) {
		snprintf(path, sizeof(path), JARS "%s.jar", v[i]);
		reach_jar(path, NULL, 0, line, sizeof(line), msg, NULL);
		printf("%s: %s %s\n", v[i], msg, line);
	}
}

int main(void)
{
	if (getenv("REACH_PRINT")) {
		T_RUN(test_print_all);
		return 0;
	}
	T_RUN(test_fixture_sets);
	T_RUN(test_runtime_sets);
	T_RUN(test_jvm);
	T_RUN(test_jvm_again);
	T_RUN(test_limits_and_errors);
	T_RUN(test_bad_code);
	T_RUN(test_handlers_and_bootstraps);
	T_RUN(test_realjars);
	return T_DONE();
}
