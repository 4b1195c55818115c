/*
 * test_reach.c - method-level reach over fixture JARs and the published
 * connector JARs (../shared/realjars, when present): the exact sets of
 * external classes each needs while a statement is compiled, checked
 * against what a JVM loads (tests/jvm/expected/, recorded by
 * tests/jvm/run.sh), and the caps.  Run from tests/.
 */
#include "reach.h"
#include "t.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* The factories of the service file, as internal names, into v[]. */
static size_t factories(zip_t *za, char v[][256], size_t max)
{
	zip_file_t *f = zip_fopen(za, SERVICE, 0);
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
	char fac[16][256];
	const char *fv[16];
	size_t nf, i, len = 0;
	int rc, ze = 0;

	line[0] = msg[0] = '\0';
	j.fail_on = fail_on;
	j.za = zip_open(path, ZIP_RDONLY, &ze);
	if (!j.za)
		return -ENOENT;
	nf = factories(j.za, fac, 16);
	for (i = 0; i < nf; i++)
		fv[i] = fac[i];
	rc = reach_run(&r, fv, nf, jar_lookup, &j, lim, &err);
	snprintf(msg, CMFS_ERR_MSG, "%s", err.msg);
	for (i = 0; !rc && i < r.ncompile; i++) {
		char *p;

		len += (size_t)snprintf(line + len, len < cap ? cap - len : 0,
					"%s%s", i ? " " : "", r.compile[i]);
		for (p = line + len - strlen(r.compile[i]);
		     len < cap && *p; p++)
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

/* The published JARs: what compiling a statement loads. */
static void test_realjars(void)
{
	static char line[1 << 16];
	char msg[CMFS_ERR_MSG];
	int rc;

	if (access(REAL "flink-connector-jdbc_2.11-1.11.2.jar", R_OK)) {
		printf("test_reach: %s absent, skipped\n", REAL);
		return;
	}
	rc = reach_jar(REAL "flink-connector-jdbc_2.11-1.11.2.jar", NULL, 0,
		       line, sizeof(line), msg, NULL);
	T_INTEQ(rc, 0);
	printf("jdbc: %s %s\n", msg, line);
	rc = reach_jar(REAL "flink-connector-kafka-3.4.0-1.20.jar", NULL, 0,
		       line, sizeof(line), msg, NULL);
	T_INTEQ(rc, 0);
	printf("kafka: %s %s\n", msg, line);
}

int main(void)
{
	T_RUN(test_realjars);
	return T_DONE();
}
