/*
 * test_name.c - unit tests of the naming rules (core/name.h): environment,
 * artifact, scratch and table file names, Kubernetes label keys and
 * values, name_ext and name_is_jar.  Every rule is tried with names that
 * just fit, that just do not, and with hostile ones: "..", '/', control
 * characters, 256 bytes, invalid UTF-8.
 */
#include "t.h"

#include <errno.h>
#include <string.h>

#include "err.h"
#include "name.h"

/* `n` copies of `c`, NUL-terminated, in `out` (n + 1 bytes). */
static char *rep(char *out, char c, size_t n)
{
	memset(out, c, n);
	out[n] = '\0';
	return out;
}

/* ---- environments ---------------------------------------------------------- */

static void test_env(void)
{
	static const char *const good[] = {
		"a", "0", "prod", "dev-1", "a-b-c", "9lives", "x0", "a--b",
	};
	static const char *const bad[] = {
		"", "-a", "a-", "-", "A", "Prod", "a_b", "a.b", "a b", ".",
		"..", "a/b", "/", "a\n", "\t", "a\x01", "a\x7f",
		"\xc3\xa9t\xc3\xa9",
		"\xff", "a\xc3", "_env_x",
	};
	struct cmfs_err err = CMFS_ERR_INIT;
	char s[300];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (name_env_check(good[i], NULL))
			fprintf(stderr, "  env '%s' refused\n", good[i]);
		T_INTEQ(name_env_check(good[i], NULL), 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!name_env_check(bad[i], NULL))
			fprintf(stderr, "  env '%s' accepted\n", bad[i]);
		T_ERRNO(name_env_check(bad[i], NULL), EINVAL);
	}
	T_INTEQ(name_env_check(rep(s, 'a', 63), NULL), 0);
	T_ERRNO(name_env_check(rep(s, 'a', 64), NULL), EINVAL);
	T_ERRNO(name_env_check(rep(s, 'a', 256), NULL), EINVAL);
	/* The message names the rule and the name (cut when long). */
	T_ERRNO(name_env_check("Bad_Env", &err), EINVAL);
	T_INTEQ(err.code, -EINVAL);
	T_CONTAINS(err.msg, "environment name 'Bad_Env'");
	T_CONTAINS(err.msg, "1-63");
	cmfs_err_clear(&err);
	T_ERRNO(name_env_check(rep(s, 'b', 256), &err), EINVAL);
	T_CONTAINS(err.msg, "...");
	T_CHECK(strlen(err.msg) < CMFS_ERR_MSG);
	/* A control character does not break the one-line message. */
	cmfs_err_clear(&err);
	T_ERRNO(name_env_check("a\nb", &err), EINVAL);
	T_CHECK(strchr(err.msg, '\n') == NULL);
}

/* ---- artifacts ------------------------------------------------------------- */

static void test_artifact(void)
{
	static const char *const good[] = {
		"x.jar", "a", "A", "0", "mongodb-connector.jar",
		"flink-sql-connector-kafka-3.2.0-1.19.jar", "a_b.c-d", "x.",
		"x..jar", "README", "-x", "_x",
	};
	static const char *const bad[] = {
		"", ".", "..", ".x", ".x.jar", "a/b", "/x", "x/", "../x.jar",
		"a b", "a\tb", "x\n", "x\x01", "x\x7f", "x:y", "x*", "x~",
		"x$y", "\xc3\xa9.jar", "x\xff.jar", "x\xc3", "x%2F",
	};
	struct cmfs_err err = CMFS_ERR_INIT;
	char s[300];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (name_artifact_check(good[i], NULL))
			fprintf(stderr, "  artifact '%s' refused\n", good[i]);
		T_INTEQ(name_artifact_check(good[i], NULL), 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!name_artifact_check(bad[i], NULL))
			fprintf(stderr, "  artifact '%s' accepted\n", bad[i]);
		T_ERRNO(name_artifact_check(bad[i], NULL), EINVAL);
	}
	T_INTEQ(name_artifact_check(rep(s, 'a', 253), NULL), 0);
	T_ERRNO(name_artifact_check(rep(s, 'a', 254), NULL), EINVAL);
	T_ERRNO(name_artifact_check(rep(s, 'a', 256), NULL), EINVAL);
	T_ERRNO(name_artifact_check("a b.jar", &err), EINVAL);
	T_CONTAINS(err.msg, "artifact name 'a b.jar'");
	T_CONTAINS(err.msg, "not starting with '.'");
}

static void test_artifact_scratch(void)
{
	char s[300];

	T_INTEQ(name_artifact_scratch(".x.jar.swp"), 1);
	T_INTEQ(name_artifact_scratch(".mongodb.jar.Ab12Cd"), 1);
	T_INTEQ(name_artifact_scratch("..x"), 1);
	T_INTEQ(name_artifact_scratch(". x"), 1);
	T_INTEQ(name_artifact_scratch(".\xc3\xa9"), 1);
	T_INTEQ(name_artifact_scratch(""), 0);
	T_INTEQ(name_artifact_scratch("."), 0);
	T_INTEQ(name_artifact_scratch(".."), 0);
	T_INTEQ(name_artifact_scratch("x.jar"), 0);
	T_INTEQ(name_artifact_scratch("x~"), 0);
	T_INTEQ(name_artifact_scratch("4913"), 0);
	T_INTEQ(name_artifact_scratch(".a/b"), 0);
	T_INTEQ(name_artifact_scratch("./"), 0);
	T_INTEQ(name_artifact_scratch(".x\n"), 0);
	T_INTEQ(name_artifact_scratch(".x\r"), 0);
	T_INTEQ(name_artifact_scratch(".\x1b[31m"), 0);
	T_INTEQ(name_artifact_scratch(".x\x7f"), 0);
	rep(s, 'x', 255);
	s[0] = '.';
	T_INTEQ(name_artifact_scratch(s), 1);
	rep(s, 'x', 256);
	s[0] = '.';
	T_INTEQ(name_artifact_scratch(s), 0);
}

/* ---- tables ---------------------------------------------------------------- */

static void test_table_file(void)
{
	static const char *const bad[] = {
		"", ".sql", "t", "t.SQL", "t.sql.bak", "t.sql~", ".t.sql",
		"-t.sql", "a b.sql", "a.b.sql", "../t.sql", "a/b.sql",
		"t\n.sql", "t\x01.sql", "\xc3\xa9.sql", "t\xff.sql", "tsql",
		"t.sqlx", "resolved",
	};
	char out[129], s[300];
	size_t i;

	memset(out, '#', sizeof(out));
	T_INTEQ(name_table_file(out, "t.sql"), 1);
	T_STREQ(out, "t");
	T_INTEQ(name_table_file(out, "My_Table$1-x.sql"), 1);
	T_STREQ(out, "My_Table$1-x");
	T_INTEQ(name_table_file(out, "0.sql"), 1);
	T_STREQ(out, "0");
	T_INTEQ(name_table_file(out, "t-.sql"), 1);
	T_STREQ(out, "t-");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(out, "unchanged");
		if (name_table_file(out, bad[i]))
			fprintf(stderr, "  table file '%s' accepted\n", bad[i]);
		T_INTEQ(name_table_file(out, bad[i]), 0);
		T_STREQ(out, "unchanged");
	}
	/* 128 bytes of name fit (the out buffer is 129), 129 do not. */
	rep(s, 'n', 128);
	strcat(s, ".sql");
	T_INTEQ(name_table_file(out, s), 1);
	T_INTEQ(strlen(out), 128);
	rep(s, 'n', 129);
	strcat(s, ".sql");
	T_INTEQ(name_table_file(out, s), 0);
	rep(s, 'n', 252);
	strcat(s, ".sql");
	T_INTEQ(name_table_file(out, s), 0);
}

static void test_table_scratch(void)
{
	char s[300];

	T_INTEQ(name_table_scratch("4913"), 1);
	T_INTEQ(name_table_scratch(".t.sql.swp"), 1);
	T_INTEQ(name_table_scratch("t.sql~"), 1);
	T_INTEQ(name_table_scratch("sedAbC123"), 1);
	T_INTEQ(name_table_scratch("-t.sql"), 1);	/* not a table file */
	T_INTEQ(name_table_scratch("t.SQL"), 1);
	T_INTEQ(name_table_scratch("t.sql"), 0);
	T_INTEQ(name_table_scratch("resolved"), 0);
	T_INTEQ(name_table_scratch(""), 0);
	T_INTEQ(name_table_scratch("."), 0);
	T_INTEQ(name_table_scratch(".."), 0);
	T_INTEQ(name_table_scratch("a/b"), 0);
	T_INTEQ(name_table_scratch("../x"), 0);
	T_INTEQ(name_table_scratch("x\n"), 0);
	T_INTEQ(name_table_scratch("x\x01y"), 0);
	T_INTEQ(name_table_scratch("x\x7f"), 0);
	T_INTEQ(name_table_scratch(rep(s, 'x', 255)), 1);
	T_INTEQ(name_table_scratch(rep(s, 'x', 256)), 0);
}

/* ---- labels ---------------------------------------------------------------- */

static void test_label_key(void)
{
	static const char *const good[] = {
		"cmf.confluent.io/sql-artifact-type",
		"cmf.confluent.io/sql-artifact-identifier",
		"app", "A", "0", "a.b_c-d", "team/owner", "a-b.c-d/x",
		"example.com/Name_1.x", "user.comment", "1.2.3/x",
	};
	static const char *const bad[] = {
		"", "/", "/x", "x/", "a.com/", "Example.com/x",
		"ex_ample.com/x",
		"a..b/x", ".a/x", "a./x", "-a.com/x", "a-.com/x", "a.com/-x",
		"a.com/x-", "x-", "-x", "_x", "x_", ".x", "x.", "a/b/c",
		"a b", "a\tb", "a\n", "a\x01", "a\x7f", "\xc3\xa9",
		"a\xff", "ex\xc3\xa9.com/x", "a:b", "a*b", "a=b",
	};
	struct cmfs_err err = CMFS_ERR_INIT;
	char s[600], label[64], last[64];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (name_label_key_check(good[i], NULL))
			fprintf(stderr, "  label key '%s' refused\n", good[i]);
		T_INTEQ(name_label_key_check(good[i], NULL), 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!name_label_key_check(bad[i], NULL))
			fprintf(stderr, "  label key '%s' accepted\n", bad[i]);
		T_ERRNO(name_label_key_check(bad[i], NULL), EINVAL);
	}
	/* Name part: 63 bytes fit, 64 do not. */
	T_INTEQ(name_label_key_check(rep(s, 'k', 63), NULL), 0);
	T_ERRNO(name_label_key_check(rep(s, 'k', 64), NULL), EINVAL);
	T_ERRNO(name_label_key_check(rep(s, 'k', 256), NULL), EINVAL);
	/* Prefix: DNS labels of at most 63, the whole at most 253. */
	rep(label, 'p', 63);
	rep(last, 'q', 61);
	snprintf(s, sizeof(s), "%s.%s.%s.%s/x", label, label, label, last);
	T_INTEQ(strlen(s), 253 + 2);	/* 63 * 3 + 61 + 3 dots, "/x" */
	T_INTEQ(name_label_key_check(s, NULL), 0);
	rep(last, 'q', 62);
	snprintf(s, sizeof(s), "%s.%s.%s.%s/x", label, label, label, last);
	T_INTEQ(strlen(s), 254 + 2);
	T_ERRNO(name_label_key_check(s, NULL), EINVAL);
	snprintf(s, sizeof(s), "%s.io/x", rep(label, 'p', 63));
	T_INTEQ(name_label_key_check(s, NULL), 0);
	snprintf(s, sizeof(s), "%sp.io/x", rep(label, 'p', 63));
	/* A 64-byte DNS label. */
	T_ERRNO(name_label_key_check(s, NULL), EINVAL);
	/* Messages say which part is wrong. */
	T_ERRNO(name_label_key_check("Bad.com/x", &err), EINVAL);
	T_CONTAINS(err.msg, "label key 'Bad.com/x'");
	T_CONTAINS(err.msg, "prefix");
	cmfs_err_clear(&err);
	T_ERRNO(name_label_key_check("ok.com/-x", &err), EINVAL);
	T_CONTAINS(err.msg, "label key 'ok.com/-x'");
	T_CONTAINS(err.msg, "name must be 1-63");
}

static void test_label_value(void)
{
	static const char *const good[] = {
		"", "connector", "format", "mongodb", "a", "0", "a-b_c.d",
		"Kafka-3.2", "json-ish",
	};
	static const char *const bad[] = {
		"-a", "a-", "_a", "a_", ".a", "a.", "a b", " a", "a/b",
		"a\n", "a\x01", "a\x7f", "\xc3\xa9", "a\xff", "a=b", "a,b",
		"a:b", "-",
	};
	struct cmfs_err err = CMFS_ERR_INIT;
	const char *k = "cmf.confluent.io/sql-artifact-identifier";
	char s[300];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (name_label_value_check(k, good[i], strlen(good[i]), NULL))
			fprintf(stderr, "  value '%s' refused\n", good[i]);
		T_INTEQ(name_label_value_check(k, good[i], strlen(good[i]),
					       NULL), 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!name_label_value_check(k, bad[i], strlen(bad[i]), NULL))
			fprintf(stderr, "  value '%s' accepted\n", bad[i]);
		T_ERRNO(name_label_value_check(k, bad[i], strlen(bad[i]),
					       NULL), EINVAL);
	}
	T_INTEQ(name_label_value_check(k, rep(s, 'v', 63), 63, NULL), 0);
	T_ERRNO(name_label_value_check(k, rep(s, 'v', 64), 64, NULL), EINVAL);
	T_ERRNO(name_label_value_check(k, rep(s, 'v', 256), 256, NULL),
		EINVAL);
	/* The length is what counts, not the NUL: a NUL inside is a bad
	 * byte; a shorter length looks at the prefix only. */
	T_ERRNO(name_label_value_check(k, "ab\0cd", 5, NULL), EINVAL);
	T_ERRNO(name_label_value_check(k, "ab\0", 3, NULL), EINVAL);
	T_INTEQ(name_label_value_check(k, "ab-", 2, NULL), 0);
	T_INTEQ(name_label_value_check(k, "ab", 0, NULL), 0);
	T_ERRNO(name_label_value_check(k, "bad value", 9, &err), EINVAL);
	T_CONTAINS(err.msg, k);
	T_CONTAINS(err.msg, "'bad value'");
	/* A long bad value is cut in the message. */
	cmfs_err_clear(&err);
	rep(s, 'v', 200);
	s[199] = '-';
	T_ERRNO(name_label_value_check(k, s, 200, &err), EINVAL);
	T_CHECK(strlen(err.msg) < CMFS_ERR_MSG);
}

/* ---- extensions ------------------------------------------------------------ */

static void test_ext(void)
{
	const char *n = "mongodb-connector.jar";

	T_STREQ(name_ext(n), ".jar");
	T_CHECK(name_ext(n) == n + strlen(n) - 4);
	T_STREQ(name_ext("x"), "");
	T_CHECK(*name_ext("x") == '\0');
	T_STREQ(name_ext("a.b.c"), ".c");
	T_STREQ(name_ext("x.tar.gz"), ".gz");
	T_STREQ(name_ext("x."), ".");
	T_STREQ(name_ext(""), "");

	T_INTEQ(name_is_jar("x.jar"), 1);
	T_INTEQ(name_is_jar("a.b.jar"), 1);
	T_INTEQ(name_is_jar(".jar"), 0);
	T_INTEQ(name_is_jar("jar"), 0);
	T_INTEQ(name_is_jar(""), 0);
	T_INTEQ(name_is_jar("x.JAR"), 0);
	T_INTEQ(name_is_jar("x.jar.bak"), 0);
	T_INTEQ(name_is_jar("x.jarx"), 0);
	T_INTEQ(name_is_jar("xjar"), 0);
	T_INTEQ(name_is_jar("x.zip"), 0);
}

int main(void)
{
	T_RUN(test_env);
	T_RUN(test_artifact);
	T_RUN(test_artifact_scratch);
	T_RUN(test_table_file);
	T_RUN(test_table_scratch);
	T_RUN(test_label_key);
	T_RUN(test_label_value);
	T_RUN(test_ext);
	return T_DONE();
}
