/*
 * test_options.c - the options factories declare, read from bytecode
 * (core/options.c through jar_inspect): the fixture JAR's shapes
 * (tests/fixtures/java/options/: an options class, a base factory,
 * FactoryUtil's constants, an enum, a set built at run time), the keys a
 * JVM reads from the same JAR (tests/jvm/expected/options-keys.txt,
 * recorded by tests/jvm/run.sh), the published Kafka and JDBC connectors
 * against their documented options, and Flink's rules for values.
 * Run from tests/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "fixture.h"
#include "jar.h"
#include "options.h"
#include "t.h"

#define REALJARS "../../shared/realjars/"

/* The factory of `r` with this identifier, or NULL. */
static const struct jar_factory *factory(const struct jar_report *r,
					 const char *id)
{
	size_t i;

	for (i = 0; i < r->nfactories; i++)
		if (r->factories[i].identifier &&
		    !strcmp(r->factories[i].identifier, id))
			return &r->factories[i];
	return NULL;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Inspect JAR `path`: a fixture of the tree, whose absence fails the test
 * (fixture_read()), or with `optional` a published JAR of
 * ../shared/realjars, which a machine may not have (NULL after a
 * "skipped" line, as test_reach.c says it).
 */
static struct jar_report *inspect_jar(const char *path, int optional)
{
	struct jar_report *r = NULL;
	struct cmfs_err err = CMFS_ERR_INIT;
	size_t len;
	char *data;

	if (optional && access(path, R_OK)) {
		printf("test_options: %s absent, skipped\n", path);
		return NULL;
	}
	data = fixture_read(path, &len, "no such JAR");
	if (!data)
		return NULL;
	T_INTEQ(jar_inspect_mem(&r, data, len, NULL, &err), 0);
	free(data);
	if (r)
		T_CHECK(!r->error);
	return r;
}

/* Inspect fixture JAR `path` of the tree (inspect_jar()). */
static struct jar_report *inspect(const char *path)
{
	return inspect_jar(path, 0);
}

/* The shapes of the fixture: each option with its type and default. */
static void test_shapes(void)
{
	struct jar_report *r = inspect("fixtures/jars/options.jar");
	const struct jar_factory *f;
	const struct options_option *o;
	char *t = NULL;

	if (!r)
		return;
	f = factory(r, "opts");
	T_CHECK(f != NULL);
	if (!f)
		goto out;
	T_INTEQ(f->options.unknown, 0);
	T_INTEQ(f->options.n, 11);
	T_STREQ(f->options.prefixes, "extra.");
	/* Inherited from the base factory, required there. */
	o = options_find(&f->options, "hostname");
	T_CHECK(o && o->required && o->forward && !strcmp(o->type, "string"));
	o = options_find(&f->options, "port");
	T_CHECK(o && !o->required && o->forward);
	T_STREQ(o ? o->type : NULL, "int");
	T_STREQ(o ? o->defval : NULL, "5432");
	o = options_find(&f->options, "connect.timeout");
	T_STREQ(o ? o->type : NULL, "duration");
	T_STREQ(o ? o->defval : NULL, "30 s");
	o = options_find(&f->options, "sink.buffer-size");
	T_STREQ(o ? o->type : NULL, "memory");
	T_STREQ(o ? o->defval : NULL, "64mb");
	/* The enum: its values as toString() gives them. */
	o = options_find(&f->options, "scan.startup.mode");
	T_STREQ(o ? o->type : NULL, "enum");
	T_STREQ(o ? o->values : NULL, "earliest-offset,latest-offset");
	T_STREQ(o ? o->defval : NULL, "earliest-offset");
	if (o) {
		T_INTEQ(options_type_text(&t, o), 0);
		T_STREQ(t, "enum(earliest-offset|latest-offset)");
		free(t);
	}
	o = options_find(&f->options, "ssl.enabled");
	T_STREQ(o ? o->defval : NULL, "true");
	T_STREQ(o ? o->deprecated : NULL, "ssl");
	o = options_find(&f->options, "username");
	T_STREQ(o ? o->fallback : NULL, "user");
	o = options_find(&f->options, "tags");
	T_CHECK(o && o->list);
	/* FactoryUtil's constants, named directly and through an alias. */
	o = options_find(&f->options, "format");
	T_STREQ(o ? o->type : NULL, "string");
	o = options_find(&f->options, "sink.parallelism");
	T_STREQ(o ? o->type : NULL, "int");
	T_CHECK(!options_find(&f->options, "nothing"));

	/* Built at run time: unknown, but the required set is known. */
	f = factory(r, "opts-runtime");
	T_CHECK(f && f->options.unknown == OPTIONS_UNKNOWN_OPTIONAL);
	T_CHECK(f && f->options.n == 1 &&
		!strcmp(f->options.v[0].key, "hostname"));
	f = factory(r, "opts-fmt");
	T_CHECK(f && f->options.n == 2 && !f->options.unknown);
out:
	jar_report_free(r);
	/* A connector that calls none of FactoryUtil's checks: Flink
	 * refuses none of its keys, nor does the check. */
	r = inspect("fixtures/jars/bundle.jar");
	f = r ? factory(r, "kafka-ish") : NULL;
	T_CHECK(f && (f->options.unknown & OPTIONS_UNVALIDATED));
	if (f) {
		char *k[2] = {(char *)"connector", (char *)"anything"};
		char *v[2] = {(char *)"kafka-ish", (char *)"x"};
		struct cmfs_err err = CMFS_ERR_INIT;

		T_INTEQ(options_check("t", "kafka-ish", &f->options, NULL, 0,
				      k, v, 2, &err),
			0);
	}
	f = r ? factory(r, "avro-ish") : NULL;
	T_CHECK(f && !(f->options.unknown & OPTIONS_UNVALIDATED));
	jar_report_free(r);
}

/* The text of getfattr and cmfs inspect: one line per option. */
static void test_format(void)
{
	struct jar_report *r = inspect("fixtures/jars/options.jar");
	struct buf b;

	if (!r)
		return;
	buf_init(&b, 1 << 20);
	T_INTEQ(options_format(&b, "opts-runtime",
			       &factory(r, "opts-runtime")->options),
		0);
	T_STREQ(buf_str(&b),
		"opts-runtime\trequired\thostname\tstring\t-\n"
		"# opts-runtime: optionalOptions() is computed at run time: "
		"not checked\n");
	buf_reset(&b);
	T_INTEQ(jar_report_format(&b, r, NULL, 1), 0);
	T_CONTAINS(buf_str(&b), "\"key\":\"scan.startup.mode\",\"required\":"
				"false,\"forward\":false,\"type\":\"enum\"");
	T_CONTAINS(buf_str(&b), "\"options_unknown\":[\"optional\"]");
	buf_reset(&b);
	T_INTEQ(jar_report_format(&b, r, NULL, 0), 0);
	T_CONTAINS(buf_str(&b), "options of opts:\n");
	T_CONTAINS(buf_str(&b), "opts\toptional\tport\tint\t5432\n");
	buf_release(&b);
	jar_report_free(r);
}

/*
 * Against the JVM: the keys OptionsProbe read by calling requiredOptions()
 * and optionalOptions() are exactly those cmfs read, for every set cmfs
 * calls known.
 */
static void test_jvm(void)
{
	struct jar_report *r = inspect("fixtures/jars/options.jar");
	char *want = fixture_read("jvm/expected/options-keys.txt", NULL,
				  "no JVM record");
	struct buf got;
	size_t i, j;

	buf_init(&got, 1 << 20);
	for (i = 0; r && want && i < r->nfactories; i++) {
		const struct jar_factory *f = &r->factories[i];

		for (j = 0; j < f->options.n; j++)
			buf_printf(&got, "%s %s %s\n", f->identifier,
				   f->options.v[j].required ? "required"
							    : "optional",
				   f->options.v[j].key);
	}
	if (r && want) {
		/* Sorted as the probe sorts; opts-runtime's optional set is
		 * unknown to cmfs and the probe's environment leaves it
		 * empty, so the lists are equal. */
		char *lines[64], *s = (char *)buf_str(&got), *p;
		size_t n = 0;
		struct buf sorted;

		for (p = strtok(s, "\n"); p && n < 64; p = strtok(NULL, "\n"))
			lines[n++] = p;
		qsort(lines, n, sizeof(*lines), cmp_line);
		buf_init(&sorted, 1 << 20);
		for (i = 0; i < n; i++)
			buf_printf(&sorted, "%s\n", lines[i]);
		T_STREQ(buf_str(&sorted), want);
		buf_release(&sorted);
	}
	buf_release(&got);
	free(want);
	jar_report_free(r);
}

/* The keys of `f`, comma-separated, sorted (a static buffer). */
static const char *keys(const struct jar_factory *f, int required)
{
	static char s[4096];
	size_t i;

	s[0] = '\0';
	for (i = 0; f && i < f->options.n; i++) {
		if (required >= 0 && f->options.v[i].required != required)
			continue;
		if (s[0])
			strcat(s, ",");
		strcat(s, f->options.v[i].key);
	}
	return s;
}

/* The published connectors against the options their documentation
 * lists (less 'connector' and the 'properties.*' prefix). */
static void test_realjars(void)
{
	struct jar_report *r;
	const struct jar_factory *f;

	r = inspect_jar(REALJARS "flink-connector-kafka-3.4.0-1.20.jar", 1);
	if (r) {
		f = factory(r, "kafka");
		T_STREQ(keys(f, 1), "properties.bootstrap.servers");
		T_STREQ(keys(f, -1),
			"format,key.fields,key.fields-prefix,key.format,"
			"properties.bootstrap.servers,properties.group.id,"
			"scan.bounded.mode,scan.bounded.specific-offsets,"
			"scan.bounded.timestamp-millis,scan.startup.mode,"
			"scan.startup.specific-offsets,"
			"scan.startup.timestamp-millis,"
			"scan.topic-partition-discovery.interval,"
			"sink.delivery-guarantee,sink.parallelism,"
			"sink.partitioner,sink.semantic,"
			"sink.transactional-id-prefix,topic,topic-pattern,"
			"value.fields-include,value.format");
		T_CHECK(f && !f->options.unknown);
		T_STREQ(f ? f->options.prefixes : NULL, "properties.");
		T_STREQ(options_find(&f->options, "scan.startup.mode")->values,
			"earliest-offset,latest-offset,group-offsets,"
			"timestamp,specific-offsets");
		f = factory(r, "upsert-kafka");
		/* 3.4 takes topic-pattern too: topic is optional. */
		T_STREQ(keys(f, 1), "key.format,properties.bootstrap.servers,"
				    "value.format");
		jar_report_free(r);
	}
	r = inspect_jar(REALJARS "flink-connector-jdbc_2.11-1.11.2.jar", 1);
	if (r) {
		f = factory(r, "jdbc");
		T_STREQ(keys(f, 1), "table-name,url");
		T_STREQ(keys(f, 0),
			"driver,lookup.cache.max-rows,lookup.cache.ttl,"
			"lookup.max-retries,password,scan.fetch-size,"
			"scan.partition.column,scan.partition.lower-bound,"
			"scan.partition.num,scan.partition.upper-bound,"
			"sink.buffer-flush.interval,sink.buffer-flush.max-rows,"
			"sink.max-retries,username");
		T_CHECK(f && !f->options.unknown);
		jar_report_free(r);
	}
}

/* Values by Flink's rules. */
static void test_values(void)
{
	struct options_option o;

	memset(&o, 0, sizeof(o));
	o.type = (char *)"boolean";
	T_CHECK(options_value_ok(&o, "TRUE") && options_value_ok(&o, "false"));
	T_CHECK(!options_value_ok(&o, "yes") && !options_value_ok(&o, "1"));
	o.type = (char *)"int";
	T_CHECK(options_value_ok(&o, "42") && options_value_ok(&o, "-7"));
	T_CHECK(!options_value_ok(&o, "4x") && !options_value_ok(&o, "") &&
		!options_value_ok(&o, "3000000000"));
	o.type = (char *)"long";
	T_CHECK(options_value_ok(&o, "3000000000"));
	o.type = (char *)"double";
	T_CHECK(options_value_ok(&o, "1.5e3") && !options_value_ok(&o, "x"));
	o.type = (char *)"duration";
	T_CHECK(options_value_ok(&o, "30 s") && options_value_ok(&o, "5min") &&
		options_value_ok(&o, "100") &&
		options_value_ok(&o, "2 hours"));
	T_CHECK(!options_value_ok(&o, "30 parsecs") &&
		!options_value_ok(&o, "fast") && !options_value_ok(&o, "-1 s"));
	o.type = (char *)"memory";
	T_CHECK(options_value_ok(&o, "64mb") && options_value_ok(&o, "1 g") &&
		options_value_ok(&o, "512"));
	T_CHECK(!options_value_ok(&o, "64 mbit") &&
		!options_value_ok(&o, "lots"));
	o.type = (char *)"enum";
	o.values = (char *)"earliest-offset,latest-offset";
	T_CHECK(options_value_ok(&o, "EARLIEST-offset"));
	T_CHECK(!options_value_ok(&o, "earliest"));
	o.values = NULL; /* values not known: anything */
	T_CHECK(options_value_ok(&o, "earliest"));
	o.type = (char *)"int";
	o.list = 1;
	T_CHECK(options_value_ok(&o, "1;2;3") && !options_value_ok(&o, "1;b"));
	o.list = 0;
	o.type = (char *)"string";
	T_CHECK(options_value_ok(&o, "anything at all"));
}

/* check TABLE's n options against the fixture's opts connector and
 * opts-fmt under `fmt_option` (NULL: no format); the error in err. */
static int check(const struct jar_report *r, const char *fmt_option,
		 const char *const *kv, size_t n, struct cmfs_err *err)
{
	char *keys[16], *values[16];
	struct options_format f;
	size_t i;

	for (i = 0; i < n; i++) {
		keys[i] = (char *)kv[2 * i];
		values[i] = (char *)kv[2 * i + 1];
	}
	f.option = fmt_option;
	f.id = "opts-fmt";
	f.set = &factory(r, "opts-fmt")->options;
	cmfs_err_clear(err);
	return options_check("t", "opts", &factory(r, "opts")->options, &f,
			     fmt_option ? 1 : 0, keys, values, n, err);
}

/* Tables against the fixture's declarations, as Flink would take them. */
static void test_check(void)
{
	struct jar_report *r = inspect("fixtures/jars/options.jar");
	struct cmfs_err err = CMFS_ERR_INIT;
	static const char *const good[] = {
		"connector", "opts", "hostname", "h", "port", "5432",
		"scan.startup.mode", "LATEST-OFFSET", "connect.timeout",
		"10 s", "ssl", "false", "user", "u", "extra.anything", "x",
		"tags", "a;b", "value.format", "opts-fmt",
		"value.opts-fmt.charset", "latin1"};
	static const char *const typo[] = {
		"connector", "opts", "hostname", "h", "scan.startup.mod",
		"earliest-offset"};
	static const char *const missing[] = {"connector", "opts", "port",
					      "1"};
	static const char *const badenum[] = {"connector", "opts", "hostname",
					      "h", "scan.startup.mode",
					      "earliest"};
	static const char *const badint[] = {"connector", "opts", "hostname",
					     "h", "port", "54x"};
	static const char *const noprefix[] = {
		"connector", "opts", "hostname", "h", "value.format",
		"opts-fmt", "opts-fmt.charset", "latin1"};
	static const char *const fmtbool[] = {
		"connector", "opts", "hostname", "h", "format", "opts-fmt",
		"opts-fmt.fail-on-missing-field", "yes"};

	if (!r)
		return;
	T_INTEQ(check(r, "value.format", good, 11, &err), 0);
	T_ERRNO(check(r, NULL, typo, 3, &err), EINVAL);
	T_STREQ(err.msg, "table t: option 'scan.startup.mod' is not one that "
			 "connector 'opts' declares: did you mean "
			 "'scan.startup.mode'?");
	T_ERRNO(check(r, NULL, missing, 2, &err), EINVAL);
	T_STREQ(err.msg, "table t: connector 'opts' requires option "
			 "'hostname' (string), which the table does not set");
	T_ERRNO(check(r, NULL, badenum, 3, &err), EINVAL);
	T_STREQ(err.msg, "table t: option 'scan.startup.mode' = 'earliest' is "
			 "not a valid enum(earliest-offset|latest-offset): did you "
			 "mean 'earliest-offset'?");
	T_ERRNO(check(r, NULL, badint, 3, &err), EINVAL);
	T_CONTAINS(err.msg, "'port' = '54x' is not a valid int");
	T_ERRNO(check(r, "value.format", noprefix, 4, &err), EINVAL);
	T_STREQ(err.msg, "table t: option 'opts-fmt.charset' is not one that "
			 "connector 'opts' declares: did you mean "
			 "'value.opts-fmt.charset'?");
	T_ERRNO(check(r, "format", fmtbool, 4, &err), EINVAL);
	T_CONTAINS(err.msg, "'opts-fmt.fail-on-missing-field' = 'yes' is not "
			    "a valid boolean");
	/* A set computed at run time refuses no key. */
	{
		char *k[3] = {(char *)"connector", (char *)"hostname",
			      (char *)"whatever"};
		char *v[3] = {(char *)"opts-runtime", (char *)"h",
			      (char *)"x"};

		T_INTEQ(options_check("t", "opts-runtime",
				      &factory(r, "opts-runtime")->options,
				      NULL, 0, k, v, 3, &err),
			0);
		cmfs_err_clear(&err);
		T_ERRNO(options_check("t", "opts-runtime",
				      &factory(r, "opts-runtime")->options,
				      NULL, 0, k, v, 1, &err),
			EINVAL);
		T_CONTAINS(err.msg, "requires option 'hostname'");
	}
	jar_report_free(r);
}

int main(void)
{
	T_RUN(test_shapes);
	T_RUN(test_format);
	T_RUN(test_jvm);
	T_RUN(test_realjars);
	T_RUN(test_values);
	T_RUN(test_check);
	return T_DONE();
}
