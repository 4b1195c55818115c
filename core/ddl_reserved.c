/*
 * ddl_reserved.c - the words Flink SQL reserves: unquoted, none of them
 * may name a table, a column, a field or a constraint.
 *
 * The list is the union of two sources, read by hand:
 *
 *  - Calcite's reserved keywords (the bold ones of the "Keywords" list in
 *    Calcite's SQL reference), as far as every Calcite that Flink 1.20 to
 *    2.x builds on (1.32 to 1.36) reserves them: words reserved only by
 *    later Calcite releases (ASOF, MATCH_CONDITION, QUALIFY, SAFE_CAST, the
 *    week days, ...) are left out, so that nothing a supported Flink takes
 *    is refused;
 *  - Flink's own keywords (the "keywords" list of its Parser.tdd) that are
 *    not in its "nonReservedKeywords" or "nonReservedKeywordsToAdd": for
 *    instance COMMENT, STRING, BYTES, WATERMARK, HASH, RAW, TIMESTAMP_LTZ.
 *
 * Flink's own non-reserved list makes the rest usable as names (KEY, MAP,
 * DATA, ...).  Back-quoted, every word is a name: `default`.t, `user`.
 */
#include "ddl_int.h"

#include <stdlib.h>
#include <string.h>

/* Upper case, sorted by strcmp() for bsearch(). */
static const char *const reserved[] = {
	"ABS", "ALL", "ALLOCATE", "ALLOW", "ALTER", "AND", "ANY", "ARE",
	"ARRAY", "ARRAY_MAX_CARDINALITY", "AS", "ASENSITIVE", "ASYMMETRIC",
	"AT", "ATOMIC", "AUTHORIZATION", "AVG", "BEGIN", "BEGIN_FRAME",
	"BEGIN_PARTITION", "BETWEEN", "BIGINT", "BINARY", "BIT", "BLOB",
	"BOOLEAN", "BOTH", "BUCKETS", "BY", "BYTES", "CALL", "CALLED",
	"CARDINALITY", "CASCADED", "CASE", "CAST", "CATALOGS", "CEIL",
	"CEILING", "CHAR", "CHARACTER", "CHARACTER_LENGTH", "CHAR_LENGTH",
	"CHECK", "CLASSIFIER", "CLOB", "CLOSE", "COALESCE", "COLLATE",
	"COLLECT", "COLUMN", "COMMENT", "COMMIT", "CONDITION", "CONNECT",
	"CONNECTIONS", "CONSTRAINT", "CONTAINS", "CONTINUOUS", "CONVERT",
	"CORR", "CORRESPONDING", "COUNT", "COVAR_POP", "COVAR_SAMP", "CREATE",
	"CROSS", "CUBE", "CUME_DIST", "CURRENT", "CURRENT_CATALOG",
	"CURRENT_DATE", "CURRENT_DEFAULT_TRANSFORM_GROUP", "CURRENT_PATH",
	"CURRENT_ROLE", "CURRENT_ROW", "CURRENT_SCHEMA", "CURRENT_TIME",
	"CURRENT_TIMESTAMP", "CURRENT_TRANSFORM_GROUP_FOR_TYPE",
	"CURRENT_USER", "CURSOR", "CYCLE", "DATABASES", "DATE", "DAY",
	"DEALLOCATE", "DEC", "DECIMAL", "DECLARE", "DEFAULT", "DEFINE",
	"DELETE", "DENSE_RANK", "DEREF", "DESCRIBE", "DETERMINISTIC",
	"DISALLOW", "DISCONNECT", "DISTINCT", "DISTRIBUTED", "DISTRIBUTION",
	"DOUBLE", "DROP", "DYNAMIC", "EACH", "ELEMENT", "ELSE", "EMPTY",
	"END", "END-EXEC", "END_FRAME", "END_PARTITION", "EQUALS", "ESCAPE",
	"EVERY", "EXCEPT", "EXEC", "EXECUTE", "EXISTS", "EXP", "EXPLAIN",
	"EXTEND", "EXTENDED", "EXTERNAL", "EXTRACT", "FALSE", "FETCH",
	"FILTER", "FIRST_VALUE", "FLOAT", "FLOOR", "FOR", "FOREIGN",
	"FRAME_ROW", "FREE", "FRESHNESS", "FROM", "FULL", "FUNCTION",
	"FUNCTIONS", "FUSION", "GET", "GLOBAL", "GRANT", "GROUP", "GROUPING",
	"GROUPS", "HASH", "HAVING", "HOLD", "HOUR", "IDENTITY", "IMPORT",
	"IN", "INDICATOR", "INITIAL", "INNER", "INOUT", "INSENSITIVE",
	"INSERT", "INT", "INTEGER", "INTERSECT", "INTERSECTION", "INTERVAL",
	"INTO", "IS", "JOIN", "JSON_ARRAY", "JSON_ARRAYAGG", "JSON_EXISTS",
	"JSON_OBJECT", "JSON_OBJECTAGG", "JSON_QUERY", "JSON_VALUE", "LAG",
	"LANGUAGE", "LARGE", "LAST_VALUE", "LATERAL", "LEAD", "LEADING",
	"LEFT", "LIKE", "LIKE_REGEX", "LIMIT", "LN", "LOCAL", "LOCALTIME",
	"LOCALTIMESTAMP", "LOWER", "MATCH", "MATCHES", "MATCH_NUMBER",
	"MATCH_RECOGNIZE", "MATERIALIZED", "MAX", "MEASURES", "MEMBER",
	"MERGE", "METHOD", "MIN", "MINUS", "MINUTE", "MOD", "MODELS",
	"MODIFIES", "MODIFY", "MODULE", "MODULES", "MONTH", "MULTISET",
	"NATIONAL", "NATURAL", "NCHAR", "NCLOB", "NEW", "NEXT", "NO", "NONE",
	"NORMALIZE", "NOT", "NTH_VALUE", "NTILE", "NULL", "NULLIF", "NUMERIC",
	"OCCURRENCES_REGEX", "OCTET_LENGTH", "OF", "OFFSET", "OLD", "OMIT",
	"ON", "ONE", "ONLY", "OPEN", "OR", "ORDER", "ORDINAL", "OUT", "OUTER",
	"OVER", "OVERLAPS", "OVERLAY", "PARAMETER", "PARTITION", "PATTERN",
	"PER", "PERCENT", "PERCENTILE_CONT", "PERCENTILE_DISC",
	"PERCENT_RANK", "PERIOD", "PERMUTE", "PORTION", "POSITION",
	"POSITION_REGEX", "POWER", "PRECEDES", "PRECISION", "PREPARE", "PREV",
	"PRIMARY", "PROCEDURE", "PROCEDURES", "RANGE", "RANK", "RAW", "READS",
	"REAL", "RECURSIVE", "REF", "REFERENCES", "REFERENCING", "REFRESH",
	"REFRESH_MODE", "REGR_AVGX", "REGR_AVGY", "REGR_COUNT",
	"REGR_INTERCEPT", "REGR_R2", "REGR_SLOPE", "REGR_SXX", "REGR_SXY",
	"REGR_SYY", "RELEASE", "RENAME", "RESET", "RESULT", "RESUME",
	"RETURN", "RETURNS", "REVOKE", "RIGHT", "ROLLBACK", "ROLLUP", "ROW",
	"ROWS", "ROW_NUMBER", "RUNNING", "SAVEPOINT", "SCALA", "SCOPE",
	"SCROLL", "SEARCH", "SECOND", "SEEK", "SELECT", "SENSITIVE",
	"SESSION_USER", "SET", "SHOW", "SIMILAR", "SKIP", "SMALLINT", "SOME",
	"SPECIFIC", "SPECIFICTYPE", "SQL", "SQLEXCEPTION", "SQLSTATE",
	"SQLWARNING", "SQRT", "START", "STATIC", "STDDEV_POP", "STDDEV_SAMP",
	"STREAM", "STRING", "STRUCTURED", "SUBMULTISET", "SUBSET",
	"SUBSTRING", "SUBSTRING_REGEX", "SUCCEEDS", "SUM", "SUSPEND",
	"SYMMETRIC", "SYSTEM", "SYSTEM_TIME", "SYSTEM_USER", "TABLE",
	"TABLES", "TABLESAMPLE", "THEN", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ",
	"TIMEZONE_HOUR", "TIMEZONE_MINUTE", "TINYINT", "TO", "TRAILING",
	"TRANSLATE", "TRANSLATE_REGEX", "TRANSLATION", "TREAT", "TRIGGER",
	"TRIM", "TRIM_ARRAY", "TRUE", "TRUNCATE", "UESCAPE", "UNION",
	"UNIQUE", "UNKNOWN", "UNNEST", "UPDATE", "UPPER", "UPSERT", "USE",
	"USER", "USING", "VALUE", "VALUES", "VARBINARY", "VARCHAR", "VARYING",
	"VAR_POP", "VAR_SAMP", "VERSIONING", "VIEWS", "WATERMARK",
	"WATERMARKS", "WHEN", "WHENEVER", "WHERE", "WIDTH_BUCKET", "WINDOW",
	"WITH", "WITHIN", "WITHOUT", "YEAR",
};

static int cmp_word(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

int ddl_reserved(const char *s, size_t n)
{
	char up[40];
	size_t i;

	/* the longest reserved word is shorter than the buffer */
	if (n >= sizeof(up))
		return 0;
	for (i = 0; i < n; i++)
		up[i] = s[i] >= 'a' && s[i] <= 'z' ? (char)(s[i] - 'a' + 'A')
						   : s[i];
	up[n] = '\0';
	return bsearch(up, reserved, sizeof(reserved) / sizeof(reserved[0]),
		       sizeof(reserved[0]), cmp_word) != NULL;
}
