/*
 * test_format_builtin.c - Flink 1.20's built-in formats' options
 * (core/format_builtin.c) and options_check taking them for a format
 * that has no JAR: typos under the format's prefix ("json.", "key.json.",
 * "value.debezium-json."), bad boolean and enum values, a format key
 * without its key./value. prefix, and a format cmfs has no table for,
 * which stays unchecked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "format_builtin.h"
#include "options.h"
#include "t.h"

/* Each format [sql] builtin_formats lists by default has a table, sorted
 * and unique by key, whose defaults pass its own value check. */
static void test_table(void)
{
	struct config c;
	char *list, *id, *save = NULL;
	size_t i, nfmt = 0;

	T_INTEQ(config_defaults(&c), 0);
	list = strdup(c.sql.builtin_formats);
	T_CHECK(list != NULL);
	for (id = strtok_r(list, ",", &save); id;
	     id = strtok_r(NULL, ",", &save)) {
		const struct options_set *s = format_builtin_options(id);

		nfmt++;
		T_CHECK(s != NULL);
		if (!s) {
			fprintf(stderr, "  no table for built-in %s\n", id);
			continue;
		}
		T_CHECK(s->n > 0);
		T_INTEQ(s->unknown, 0);
		T_CHECK(s->prefixes == NULL);
		for (i = 0; i < s->n; i++) {
			const struct options_option *o = &s->v[i];

			if (i)
				T_CHECK(strcmp(s->v[i - 1].key, o->key) < 0);
			T_CHECK(options_find(s, o->key) == o);
			/* 1.20: no format requires an option; none has
			 * deprecated or fallback keys. */
			T_INTEQ(o->required, 0);
			T_CHECK(!o->deprecated && !o->fallback);
			T_CHECK(strcmp(o->type, "enum") || o->values);
			T_CHECK(!o->defval || options_value_ok(o, o->defval));
		}
	}
	T_INTEQ(nfmt, 7);
	free(list);
	config_release(&c);
	T_CHECK(format_builtin_options("avro") == NULL);
	T_CHECK(format_builtin_options("JSON") == NULL);
	T_CHECK(format_builtin_options(NULL) == NULL);
}

/* Every key of `id`'s table, comma-joined, into out[cap]. */
static void keys_of(char *out, size_t cap, const char *id)
{
	const struct options_set *s = format_builtin_options(id);
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; s && i < s->n; i++)
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s",
				      i ? "," : "", s->v[i].key);
}

/* The keys, as the factories' optionalOptions() return them in 1.20. */
static void test_keys(void)
{
	char k[1024];
	const struct options_option *o;

	keys_of(k, sizeof(k), "json");
	T_STREQ(k, "decode.json-parser.enabled,encode.decimal-as-plain-number,"
		   "encode.ignore-null-fields,fail-on-missing-field,"
		   "ignore-parse-errors,map-null-key.literal,map-null-key.mode,"
		   "timestamp-format.standard");
	keys_of(k, sizeof(k), "csv");
	T_STREQ(k, "allow-comments,array-element-delimiter,"
		   "disable-quote-character,escape-character,field-delimiter,"
		   "ignore-parse-errors,null-literal,quote-character,"
		   "write-bigdecimal-in-scientific-notation");
	keys_of(k, sizeof(k), "raw");
	T_STREQ(k, "charset,endianness");
	keys_of(k, sizeof(k), "debezium-json");
	T_STREQ(k, "encode.decimal-as-plain-number,encode.ignore-null-fields,"
		   "ignore-parse-errors,map-null-key.literal,map-null-key.mode,"
		   "schema-include,timestamp-format.standard");
	keys_of(k, sizeof(k), "canal-json");
	T_STREQ(k, "database.include,encode.decimal-as-plain-number,"
		   "encode.ignore-null-fields,ignore-parse-errors,"
		   "map-null-key.literal,map-null-key.mode,table.include,"
		   "timestamp-format.standard");
	keys_of(k, sizeof(k), "maxwell-json");
	T_STREQ(k, "encode.decimal-as-plain-number,encode.ignore-null-fields,"
		   "ignore-parse-errors,map-null-key.literal,map-null-key.mode,"
		   "timestamp-format.standard");
	keys_of(k, sizeof(k), "ogg-json");
	T_STREQ(k, "encode.decimal-as-plain-number,encode.ignore-null-fields,"
		   "ignore-parse-errors,map-null-key.literal,map-null-key.mode,"
		   "timestamp-format.standard");
	o = options_find(format_builtin_options("json"),
			 "timestamp-format.standard");
	T_CHECK(o && o->forward && !strcmp(o->values, "SQL,ISO-8601"));
	o = options_find(format_builtin_options("json"), "ignore-parse-errors");
	T_CHECK(o && !o->forward && !strcmp(o->type, "boolean"));
	o = options_find(format_builtin_options("csv"), "quote-character");
	T_CHECK(o && !strcmp(o->defval, "\""));
}

/* CSV's one-character options, as CsvCommons.validateFormatOptions
 * takes them (field-delimiter after unescapeJava). */
static void test_char(void)
{
	const struct options_option *o =
		options_find(format_builtin_options("csv"), "field-delimiter");
	static const char *const ok[] = {",",	  " ",	    "|",      "\\t",
					 "\\u0009", "\\011", "\\;",    "\\",
					 "\xc3\xa9", "\\uu+0041"};
	static const char *const bad[] = {"",	  "||",	    "ab",
					  "\\u00", "\\400", "\\tx",
					  "\xf0\x9f\x98\x80", "\xc3"};
	size_t i;

	T_CHECK(o && !strcmp(o->type, "char"));
	if (!o)
		return;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!options_value_ok(o, ok[i])) {
			T_CHECK(!"one character refused");
			fprintf(stderr, "  '%s'\n", ok[i]);
		}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (options_value_ok(o, bad[i])) {
			T_CHECK(!"not one character taken");
			fprintf(stderr, "  '%s'\n", bad[i]);
		}
	o = options_find(format_builtin_options("csv"),
			 "array-element-delimiter");
	T_CHECK(o && options_value_ok(o, "||"));
}

/* A Kafka-like connector: 'topic' required, the three format options,
 * its own 'properties.*'. */
static struct options_option conn_v[] = {
	{.key = (char *)"format", .type = (char *)"string"},
	{.key = (char *)"key.format", .type = (char *)"string"},
	{.key = (char *)"properties.bootstrap.servers",
	 .type = (char *)"string"},
	{.key = (char *)"topic", .type = (char *)"string", .required = 1},
	{.key = (char *)"value.format", .type = (char *)"string"},
};
static const struct options_set conn = {
	.v = conn_v,
	.n = sizeof(conn_v) / sizeof(conn_v[0]),
	.prefixes = (char *)"properties.",
};

/* Check a table of connector 'k' with the n key/value pairs in kv and
 * up to two formats named there (set NULL: resolution found no JAR). */
static int check(const char *const *kv, size_t n, struct cmfs_err *err)
{
	char *keys[16], *values[16];
	struct options_format f[3];
	size_t i, nf = 0;

	for (i = 0; i < n; i++) {
		keys[i] = (char *)kv[2 * i];
		values[i] = (char *)kv[2 * i + 1];
		if (!strcmp(keys[i], "format") ||
		    !strcmp(keys[i], "key.format") ||
		    !strcmp(keys[i], "value.format")) {
			f[nf].option = keys[i];
			f[nf].id = values[i];
			f[nf++].set = NULL;
		}
	}
	cmfs_err_clear(err);
	return options_check("t", "k", &conn, f, nf, keys, values, n, err);
}

#define N(a) (sizeof(a) / sizeof((a)[0]) / 2)

static void test_check(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	static const char *const good[] = {
		"connector", "k", "topic", "t", "format", "json",
		"json.ignore-parse-errors", "TRUE",
		"json.timestamp-format.standard", "ISO-8601",
		"json.map-null-key.mode", "literal",
		"json.decode.json-parser.enabled", "false"};
	static const char *const typo[] = {"connector", "k", "topic", "t",
					   "format", "json",
					   "json.ignore-parse-error", "true"};
	static const char *const badbool[] = {"connector", "k", "topic", "t",
					      "format", "json",
					      "json.fail-on-missing-field",
					      "yes"};
	static const char *const badenum[] = {
		"connector", "k", "topic", "t", "format", "json",
		"json.timestamp-format.standard", "ISO8601"};
	static const char *const value_typo[] = {
		"connector", "k", "topic", "t", "value.format", "json",
		"value.json.fail-on-missing-fields", "true"};
	static const char *const value_cdc[] = {
		"connector", "k", "topic", "t", "value.format", "debezium-json",
		"value.debezium-json.schema-includes", "true"};
	static const char *const key_good[] = {
		"connector", "k", "topic", "t", "key.format", "json",
		"key.json.ignore-parse-errors", "true", "value.format", "csv",
		"value.csv.field-delimiter", "|"};
	static const char *const key_typo[] = {
		"connector", "k", "topic", "t", "key.format", "json",
		"key.json.map-null-key.mod", "DROP"};
	static const char *const no_prefix[] = {
		"connector", "k", "topic", "t", "value.format", "json",
		"json.ignore-parse-errors", "true"};
	static const char *const raw_good[] = {"connector", "k", "topic", "t",
					       "format", "raw",
					       "raw.endianness",
					       "LITTLE-ENDIAN"};
	static const char *const raw_typo[] = {"connector", "k", "topic", "t",
					       "format", "raw",
					       "raw.endianess",
					       "little-endian"};
	static const char *const csv_delim[] = {"connector", "k", "topic", "t",
						"format", "csv",
						"csv.field-delimiter", "||"};
	static const char *const unknown_fmt[] = {
		"connector", "k", "topic", "t", "format", "protobuf",
		"protobuf.anything", "x"};

	T_INTEQ(check(good, N(good), &err), 0);
	T_ERRNO(check(typo, N(typo), &err), EINVAL);
	T_STREQ(err.msg, "table t: option 'json.ignore-parse-error' is not one "
			 "that format 'json' declares: did you mean "
			 "'json.ignore-parse-errors'?");
	T_ERRNO(check(badbool, N(badbool), &err), EINVAL);
	T_STREQ(err.msg, "table t: option 'json.fail-on-missing-field' = 'yes' "
			 "is not a valid boolean");
	T_ERRNO(check(badenum, N(badenum), &err), EINVAL);
	T_STREQ(err.msg, "table t: option 'json.timestamp-format.standard' = "
			 "'ISO8601' is not a valid enum(SQL|ISO-8601): did you "
			 "mean 'ISO-8601'?");
	T_ERRNO(check(value_typo, N(value_typo), &err), EINVAL);
	T_STREQ(err.msg, "table t: option 'value.json.fail-on-missing-fields' "
			 "is not one that format 'json' declares: did you mean "
			 "'value.json.fail-on-missing-field'?");
	T_ERRNO(check(value_cdc, N(value_cdc), &err), EINVAL);
	T_STREQ(err.msg, "table t: option "
			 "'value.debezium-json.schema-includes' is not one that "
			 "format 'debezium-json' declares: did you mean "
			 "'value.debezium-json.schema-include'?");
	T_INTEQ(check(key_good, N(key_good), &err), 0);
	T_ERRNO(check(key_typo, N(key_typo), &err), EINVAL);
	T_CONTAINS(err.msg, "did you mean 'key.json.map-null-key.mode'?");
	/* Under no format's prefix, it is the connector's, which has no
	 * such key: the format's option with its value. prefix is nearest. */
	T_ERRNO(check(no_prefix, N(no_prefix), &err), EINVAL);
	T_STREQ(err.msg, "table t: option 'json.ignore-parse-errors' is not "
			 "one that connector 'k' declares: did you mean "
			 "'value.json.ignore-parse-errors'?");
	T_INTEQ(check(raw_good, N(raw_good), &err), 0);
	T_ERRNO(check(raw_typo, N(raw_typo), &err), EINVAL);
	T_CONTAINS(err.msg, "did you mean 'raw.endianness'?");
	T_ERRNO(check(csv_delim, N(csv_delim), &err), EINVAL);
	T_STREQ(err.msg, "table t: option 'csv.field-delimiter' = '||' is not "
			 "a valid char");
	/* A format cmfs has no table for is not checked. */
	T_INTEQ(check(unknown_fmt, N(unknown_fmt), &err), 0);
}

/* A format's own set (its JAR, read from bytecode) wins over the table,
 * and a connector without a set (built in) checks nothing. */
static void test_precedence(void)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct options_set own = {.unknown = OPTIONS_UNKNOWN_OPTIONAL};
	struct options_format f = {"format", "json", &own};
	char *k[4] = {(char *)"connector", (char *)"topic", (char *)"format",
		      (char *)"json.ignore-parse-error"};
	char *v[4] = {(char *)"k", (char *)"t", (char *)"json",
		      (char *)"true"};

	T_INTEQ(options_check("t", "k", &conn, &f, 1, k, v, 4, &err), 0);
	f.set = NULL;
	T_ERRNO(options_check("t", "k", &conn, &f, 1, k, v, 4, &err), EINVAL);
	cmfs_err_clear(&err);
	T_INTEQ(options_check("t", "filesystem", NULL, &f, 1, k, v, 4, &err),
		0);
}

int main(void)
{
	T_RUN(test_table);
	T_RUN(test_keys);
	T_RUN(test_char);
	T_RUN(test_check);
	T_RUN(test_precedence);
	return T_DONE();
}
