/*
 * format_builtin.c - Flink 1.20's declarations of its built-in formats'
 * options (format_builtin.h has the contract).
 *
 * Source: apache/flink, branch release-1.20 (1.20.0):
 *   flink-formats/flink-json/src/main/java/org/apache/flink/formats/json/
 *     JsonFormatOptions.java, JsonFormatFactory.java,
 *     JsonFormatOptionsUtil.java (the values it accepts),
 *     debezium/DebeziumJsonFormatOptions.java, DebeziumJsonFormatFactory.java,
 *     canal/CanalJsonFormatOptions.java, CanalJsonFormatFactory.java,
 *     maxwell/MaxwellJsonFormatOptions.java, MaxwellJsonFormatFactory.java,
 *     ogg/OggJsonFormatOptions.java, OggJsonFormatFactory.java
 *   flink-formats/flink-csv/src/main/java/org/apache/flink/formats/csv/
 *     CsvFormatOptions.java, CsvCommons.java (optionalOptions and
 *     forwardOptions of CsvFormatFactory)
 *   flink-table/flink-table-runtime/src/main/java/org/apache/flink/formats/
 *     raw/RawFormatOptions.java, RawFormatFactory.java
 *
 * Only what a factory's requiredOptions() and optionalOptions() return is
 * here: FactoryUtil validates exactly those, so an option an options class
 * declares but the factory does not return (JsonFormatOptions'
 * zero-timestamp.behavior in later versions) would be refused by Flink
 * and is not listed.  No built-in format requires an option, and none of
 * these options has a deprecated or fallback key.  The CDC formats share
 * JsonFormatOptions' constants under their own prefix (debezium-json.
 * ignore-parse-errors is JsonFormatOptions.IGNORE_PARSE_ERRORS).
 *
 * Types.  Flink declares timestamp-format.standard, map-null-key.mode and
 * raw.endianness as strings and checks their values in the factory
 * (JsonFormatOptionsUtil, RawFormatFactory.isBigEndian): they are enums
 * here, with the values those checks accept, so a bad value is refused at
 * resolution too.  options_value_ok matches enum values ignoring case,
 * which is Flink's rule for map-null-key.mode and endianness; for
 * timestamp-format.standard Flink is exact, so 'sql' passes here and fails
 * in the cluster: the table errs towards accepting.  map-null-key.mode is
 * checked by Flink only when the format encodes (the table is a sink);
 * a catalog table may be both, so it is checked here always.  CSV's
 * field-delimiter, quote-character and escape-character are strings that
 * CsvCommons.validateFormatOptions requires to be one character: "char"
 * here (options_value_ok).  array-element-delimiter stays a string, as
 * not every version checks it.
 *
 * The struct options_option fields are char * because sets read from
 * bytecode own their strings; here they point at string literals through
 * casts, and the whole table is const: options_check only reads it.
 */
#include <stddef.h>
#include <string.h>

#include "format_builtin.h"

/* One option row: key, type, enum values, default, in forwardOptions(). */
#define OPT(k, t, vals, def, fwd)                                              \
	{                                                                      \
		.key = (char *)(k), .type = (char *)(t),                       \
		.values = (char *)(vals), .defval = (char *)(def),             \
		.forward = (fwd)                                               \
	}

/* JsonFormatOptions' constants, as the JSON-based formats return them;
 * `fwd`: whether the format's forwardOptions() holds the option too. */
#define ENCODE_DECIMAL_AS_PLAIN_NUMBER(fwd)                                    \
	OPT("encode.decimal-as-plain-number", "boolean", NULL, "false", fwd)
#define ENCODE_IGNORE_NULL_FIELDS(fwd)                                         \
	OPT("encode.ignore-null-fields", "boolean", NULL, "false", fwd)
#define IGNORE_PARSE_ERRORS                                                    \
	OPT("ignore-parse-errors", "boolean", NULL, "false", 0)
#define MAP_NULL_KEY_LITERAL(fwd)                                              \
	OPT("map-null-key.literal", "string", NULL, "null", fwd)
#define MAP_NULL_KEY_MODE(fwd)                                                 \
	OPT("map-null-key.mode", "enum", "FAIL,DROP,LITERAL", "FAIL", fwd)
#define TIMESTAMP_FORMAT(fwd)                                                  \
	OPT("timestamp-format.standard", "enum", "SQL,ISO-8601", "SQL", fwd)

/* Each array is sorted by key (strcmp), as options_find searches it. */

/* JsonFormatFactory: optionalOptions(); forwardOptions() holds all but
 * fail-on-missing-field and ignore-parse-errors. */
static const struct options_option json[] = {
	OPT("decode.json-parser.enabled", "boolean", NULL, "true", 1),
	ENCODE_DECIMAL_AS_PLAIN_NUMBER(1),
	ENCODE_IGNORE_NULL_FIELDS(1),
	OPT("fail-on-missing-field", "boolean", NULL, "false", 0),
	IGNORE_PARSE_ERRORS,
	MAP_NULL_KEY_LITERAL(1),
	MAP_NULL_KEY_MODE(1),
	TIMESTAMP_FORMAT(1),
};

/* CsvFormatFactory: CsvCommons.optionalOptions(); forwardOptions() holds
 * all but ignore-parse-errors. */
static const struct options_option csv[] = {
	OPT("allow-comments", "boolean", NULL, "false", 1),
	OPT("array-element-delimiter", "string", NULL, ";", 1),
	OPT("disable-quote-character", "boolean", NULL, "false", 1),
	OPT("escape-character", "char", NULL, NULL, 1),
	OPT("field-delimiter", "char", NULL, ",", 1),
	OPT("ignore-parse-errors", "boolean", NULL, "false", 0),
	OPT("null-literal", "string", NULL, NULL, 1),
	OPT("quote-character", "char", NULL, "\"", 1),
	OPT("write-bigdecimal-in-scientific-notation", "boolean", NULL, "true",
	    1),
};

/* RawFormatFactory: optionalOptions(); no forwardOptions(). */
static const struct options_option raw[] = {
	OPT("charset", "string", NULL, "UTF-8", 0),
	OPT("endianness", "enum", "big-endian,little-endian", "big-endian", 0),
};

/* The CDC formats: optionalOptions(); no forwardOptions(). */
static const struct options_option canal_json[] = {
	OPT("database.include", "string", NULL, NULL, 0),
	ENCODE_DECIMAL_AS_PLAIN_NUMBER(0),
	ENCODE_IGNORE_NULL_FIELDS(0),
	IGNORE_PARSE_ERRORS,
	MAP_NULL_KEY_LITERAL(0),
	MAP_NULL_KEY_MODE(0),
	OPT("table.include", "string", NULL, NULL, 0),
	TIMESTAMP_FORMAT(0),
};

static const struct options_option debezium_json[] = {
	ENCODE_DECIMAL_AS_PLAIN_NUMBER(0),
	ENCODE_IGNORE_NULL_FIELDS(0),
	IGNORE_PARSE_ERRORS,
	MAP_NULL_KEY_LITERAL(0),
	MAP_NULL_KEY_MODE(0),
	OPT("schema-include", "boolean", NULL, "false", 0),
	TIMESTAMP_FORMAT(0),
};

/* maxwell-json and ogg-json return the same options. */
static const struct options_option maxwell_ogg_json[] = {
	ENCODE_DECIMAL_AS_PLAIN_NUMBER(0),
	ENCODE_IGNORE_NULL_FIELDS(0),
	IGNORE_PARSE_ERRORS,
	MAP_NULL_KEY_LITERAL(0),
	MAP_NULL_KEY_MODE(0),
	TIMESTAMP_FORMAT(0),
};

#define SET(a)                                                                 \
	{                                                                      \
		.v = (struct options_option *)(a),                             \
		.n = sizeof(a) / sizeof((a)[0])                                \
	}

/* The formats, by factory identifier. */
static const struct {
	const char *id;
	struct options_set set;
} formats[] = {
	{"canal-json", SET(canal_json)},
	{"csv", SET(csv)},
	{"debezium-json", SET(debezium_json)},
	{"json", SET(json)},
	{"maxwell-json", SET(maxwell_ogg_json)},
	{"ogg-json", SET(maxwell_ogg_json)},
	{"raw", SET(raw)},
};

const struct options_set *format_builtin_options(const char *id)
{
	size_t i;

	for (i = 0; id && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].id, id))
			return &formats[i].set;
	return NULL;
}
