/*
 * ddl_func.c - Flink's built-in functions, as far as a CREATE TABLE
 * expression may call them, with the type each returns.
 *
 * The names are those of Flink's documentation of system (built-in)
 * functions (comparison, arithmetic, string, temporal, conditional, type
 * conversion, collection, JSON, value construction, hash, aggregate and
 * time-attribute functions) from 1.20 to 2.x.  Names compare without
 * regard to case, as Flink looks built-in functions up.  The type is
 * what the function returns whatever its arguments, as canonical type
 * text, or NULL when it depends on them (COALESCE, CAST, ...): the
 * watermark check uses it and says nothing about what it cannot know.
 * PROCTIME() returns the marker "PROCTIME", a processing-time attribute.
 *
 * Functions registered in a catalog (CREATE FUNCTION) are not here: the
 * environment catalog stores tables only.
 */
#include "ddl_int.h"

#include <stdlib.h>
#include <string.h>

struct func {
	const char *name; /* upper case, sorted by strcmp() */
	const char *type;
};

static const struct func funcs[] = {
	{"ABS", NULL},
	{"ACOS", "DOUBLE"},
	{"ARRAY", NULL},
	{"ARRAY_AGG", NULL},
	{"ARRAY_APPEND", "ARRAY"},
	{"ARRAY_CONCAT", "ARRAY"},
	{"ARRAY_CONTAINS", "BOOLEAN"},
	{"ARRAY_DISTINCT", "ARRAY"},
	{"ARRAY_EXCEPT", "ARRAY"},
	{"ARRAY_INTERSECT", "ARRAY"},
	{"ARRAY_JOIN", "STRING"},
	{"ARRAY_MAX", NULL},
	{"ARRAY_MIN", NULL},
	{"ARRAY_POSITION", "INT"},
	{"ARRAY_PREPEND", "ARRAY"},
	{"ARRAY_REMOVE", "ARRAY"},
	{"ARRAY_REVERSE", "ARRAY"},
	{"ARRAY_SLICE", "ARRAY"},
	{"ARRAY_SORT", "ARRAY"},
	{"ARRAY_UNION", "ARRAY"},
	{"ASCII", "INT"},
	{"ASIN", "DOUBLE"},
	{"ATAN", "DOUBLE"},
	{"ATAN2", "DOUBLE"},
	{"AVG", NULL},
	{"BIN", "STRING"},
	{"BTRIM", "STRING"},
	{"CARDINALITY", "INT"},
	{"CAST", NULL},
	{"CEIL", NULL},
	{"CEILING", NULL},
	{"CHARACTER_LENGTH", "INT"},
	{"CHAR_LENGTH", "INT"},
	{"CHR", "STRING"},
	{"COALESCE", NULL},
	{"COLLECT", NULL},
	{"CONCAT", "STRING"},
	{"CONCAT_WS", "STRING"},
	{"CONVERT_TZ", "STRING"},
	{"COS", "DOUBLE"},
	{"COSH", "DOUBLE"},
	{"COT", "DOUBLE"},
	{"COUNT", NULL},
	{"CUME_DIST", NULL},
	{"CURRENT_CATALOG", "STRING"},
	{"CURRENT_DATABASE", "STRING"},
	{"CURRENT_ROW_TIMESTAMP", "TIMESTAMP_LTZ(3)"},
	{"CURRENT_WATERMARK", NULL},
	{"DATEDIFF", NULL},
	{"DATE_ADD", NULL},
	{"DATE_FORMAT", "STRING"},
	{"DATE_SUB", NULL},
	{"DAYOFMONTH", "BIGINT"},
	{"DAYOFWEEK", "BIGINT"},
	{"DAYOFYEAR", "BIGINT"},
	{"DECODE", "STRING"},
	{"DEGREES", "DOUBLE"},
	{"DENSE_RANK", NULL},
	{"E", "DOUBLE"},
	{"ELEMENT", NULL},
	{"ELT", "STRING"},
	{"ENCODE", "BYTES"},
	{"ENDSWITH", "BOOLEAN"},
	{"EXP", "DOUBLE"},
	{"EXTRACT", "BIGINT"},
	{"FIRST_VALUE", NULL},
	{"FLOOR", NULL},
	{"FROM_BASE64", "STRING"},
	{"FROM_UNIXTIME", "STRING"},
	{"GREATEST", NULL},
	{"GROUPING", NULL},
	{"GROUPING_ID", NULL},
	{"GROUP_ID", NULL},
	{"HEX", "STRING"},
	{"HOUR", "BIGINT"},
	{"IF", NULL},
	{"IFNULL", NULL},
	{"INITCAP", "STRING"},
	{"INSTR", "INT"},
	{"IS_ALPHA", "BOOLEAN"},
	{"IS_DECIMAL", "BOOLEAN"},
	{"IS_DIGIT", "BOOLEAN"},
	{"JSON", NULL},
	{"JSON_ARRAY", "STRING"},
	{"JSON_ARRAYAGG", NULL},
	{"JSON_EXISTS", "BOOLEAN"},
	{"JSON_OBJECT", "STRING"},
	{"JSON_OBJECTAGG", NULL},
	{"JSON_QUERY", "STRING"},
	{"JSON_QUOTE", "STRING"},
	{"JSON_STRING", "STRING"},
	{"JSON_UNQUOTE", "STRING"},
	{"JSON_VALUE", NULL},
	{"LAG", NULL},
	{"LAST_VALUE", NULL},
	{"LEAD", NULL},
	{"LEAST", NULL},
	{"LEFT", "STRING"},
	{"LISTAGG", NULL},
	{"LN", "DOUBLE"},
	{"LOCATE", "INT"},
	{"LOG", "DOUBLE"},
	{"LOG10", "DOUBLE"},
	{"LOG2", "DOUBLE"},
	{"LOWER", "STRING"},
	{"LPAD", "STRING"},
	{"LTRIM", "STRING"},
	{"MAP", NULL},
	{"MAP_ENTRIES", "ARRAY"},
	{"MAP_FROM_ARRAYS", "MAP"},
	{"MAP_KEYS", "ARRAY"},
	{"MAP_UNION", "MAP"},
	{"MAP_VALUES", "ARRAY"},
	{"MAX", NULL},
	{"MD5", "STRING"},
	{"MIN", NULL},
	{"MINUTE", "BIGINT"},
	{"MOD", NULL},
	{"MONTH", "BIGINT"},
	{"NOW", "TIMESTAMP_LTZ(3)"},
	{"NTILE", NULL},
	{"NULLIF", NULL},
	{"OBJECT_OF", NULL},
	{"OBJECT_UPDATE", NULL},
	{"OVERLAY", "STRING"},
	{"PARSE_JSON", NULL},
	{"PARSE_URL", "STRING"},
	{"PERCENTILE", NULL},
	{"PERCENT_RANK", NULL},
	{"PI", "DOUBLE"},
	{"POSITION", "INT"},
	{"POWER", "DOUBLE"},
	{"PRINTF", "STRING"},
	{"PROCTIME", "PROCTIME"},
	{"QUARTER", "BIGINT"},
	{"RADIANS", "DOUBLE"},
	{"RAND", "DOUBLE"},
	{"RAND_INTEGER", "INT"},
	{"RANK", NULL},
	{"REGEXP", "BOOLEAN"},
	{"REGEXP_COUNT", "INT"},
	{"REGEXP_EXTRACT", "STRING"},
	{"REGEXP_EXTRACT_ALL", "ARRAY"},
	{"REGEXP_INSTR", "INT"},
	{"REGEXP_REPLACE", "STRING"},
	{"REGEXP_SUBSTR", "STRING"},
	{"REPEAT", "STRING"},
	{"REPLACE", "STRING"},
	{"REVERSE", "STRING"},
	{"RIGHT", "STRING"},
	{"ROUND", NULL},
	{"ROW", NULL},
	{"ROW_NUMBER", NULL},
	{"RPAD", "STRING"},
	{"RTRIM", "STRING"},
	{"SECOND", "BIGINT"},
	{"SHA1", "STRING"},
	{"SHA2", "STRING"},
	{"SHA224", "STRING"},
	{"SHA256", "STRING"},
	{"SHA384", "STRING"},
	{"SHA512", "STRING"},
	{"SIGN", NULL},
	{"SIN", "DOUBLE"},
	{"SINH", "DOUBLE"},
	{"SOURCE_WATERMARK", NULL},
	{"SPLIT", "ARRAY"},
	{"SPLIT_INDEX", "STRING"},
	{"SQRT", "DOUBLE"},
	{"STARTSWITH", "BOOLEAN"},
	{"STDDEV_POP", NULL},
	{"STDDEV_SAMP", NULL},
	{"STR_TO_MAP", "MAP"},
	{"SUBSTR", "STRING"},
	{"SUBSTRING", "STRING"},
	{"SUM", NULL},
	{"SUM0", NULL},
	{"TAN", "DOUBLE"},
	{"TANH", "DOUBLE"},
	{"TIMESTAMPADD", NULL},
	{"TIMESTAMPDIFF", "BIGINT"},
	{"TO_BASE64", "STRING"},
	{"TO_DATE", "DATE"},
	{"TO_TIMESTAMP", "TIMESTAMP(3)"},
	{"TO_TIMESTAMP_LTZ", "TIMESTAMP_LTZ(3)"},
	{"TRANSLATE", "STRING"},
	{"TRIM", "STRING"},
	{"TRUNCATE", NULL},
	{"TRY_CAST", NULL},
	{"TRY_PARSE_JSON", NULL},
	{"TYPEOF", "STRING"},
	{"UNHEX", "BYTES"},
	{"UNIX_TIMESTAMP", "BIGINT"},
	{"UPPER", "STRING"},
	{"URL_DECODE", "STRING"},
	{"URL_ENCODE", "STRING"},
	{"UUID", "STRING"},
	{"VARIANCE", NULL},
	{"VAR_POP", NULL},
	{"VAR_SAMP", NULL},
	{"WEEK", "BIGINT"},
	{"YEAR", "BIGINT"},
};

static int cmp_func(const void *key, const void *elem)
{
	return strcmp(key, ((const struct func *)elem)->name);
}

int ddl_function(const char *s, size_t n, const char **type)
{
	const struct func *f;
	char up[32];
	size_t i;

	if (n >= sizeof(up))
		return 0; /* longer than any name in the list */
	for (i = 0; i < n; i++)
		up[i] = s[i] >= 'a' && s[i] <= 'z' ? (char)(s[i] - 'a' + 'A')
						   : s[i];
	up[n] = '\0';
	f = bsearch(up, funcs, sizeof(funcs) / sizeof(funcs[0]),
		    sizeof(funcs[0]), cmp_func);
	if (!f)
		return 0;
	*type = f->type;
	return 1;
}
