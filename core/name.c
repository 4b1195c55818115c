/*
 * name.c - name and label syntax.  Every name that reaches the catalog
 * passed one of these checks first; the messages say what the rule is, so
 * that a refused `mkdir` or `setfattr` tells the user what to type instead.
 */
#include "name.h"

#include <errno.h>
#include <string.h>

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* 1 if `s` holds a byte below 0x20 or DEL. */
static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

int name_env_check(const char *s, struct cmfs_err *err)
{
	size_t n = strlen(s), i;

	if (n < 1 || n > 63)
		goto bad;
	if (!is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
		goto bad;
	for (i = 0; i < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			goto bad;
	return 0;
bad:
	return cmfs_err_set(err, -EINVAL,
			    "environment name '%.64s%s': use 1-63 of a-z, 0-9 "
			    "and '-', starting and ending with a letter or "
			    "digit", s, n > 64 ? "..." : "");
}

int name_artifact_check(const char *s, struct cmfs_err *err)
{
	size_t n = strlen(s), i;

	if (n < 1 || n > 253 || s[0] == '.')
		goto bad;
	for (i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-')
			goto bad;
	return 0;
bad:
	return cmfs_err_set(err, -EINVAL,
			    "artifact name '%.64s%s': use 1-253 of A-Z, a-z, "
			    "0-9, '.', '_' and '-', not starting with '.'", s,
			    n > 64 ? "..." : "");
}

int name_artifact_scratch(const char *s)
{
	size_t n = strlen(s);

	return s[0] == '.' && n <= 255 && strcmp(s, ".") && strcmp(s, "..") &&
	       !strchr(s, '/') && !has_control(s);
}

int name_table_file(char *out, const char *s)
{
	size_t n = strlen(s), i;

	if (n < 5 || n > 128 + 4 || strcmp(s + n - 4, ".sql"))
		return 0;
	n -= 4;
	if (s[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '_' && s[i] != '$' &&
		    s[i] != '-')
			return 0;
	memcpy(out, s, n);
	out[n] = '\0';
	return 1;
}

int name_table_scratch(const char *s)
{
	char t[129];

	return *s && strlen(s) <= 255 && strcmp(s, ".") && strcmp(s, "..") &&
	       strcmp(s, "resolved") && !strchr(s, '/') && !has_control(s) &&
	       !name_table_file(t, s);
}

/* [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? of at most 63 bytes. */
static int label_word_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return 0;
	for (i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' &&
		    s[i] != '.')
			return 0;
	return 1;
}

/* A DNS subdomain: dot-separated lower-case labels, at most 253 bytes. */
static int dns_subdomain_ok(const char *s, size_t n)
{
	size_t i, start = 0;

	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (i == start || i - start > 63 || !is_lower_alnum(s[start]) ||
		    !is_lower_alnum(s[i - 1]))
			return 0;
		for (size_t j = start; j < i; j++)
			if (!is_lower_alnum(s[j]) && s[j] != '-')
				return 0;
		start = i + 1;
	}
	return 1;
}

int name_label_key_check(const char *key, struct cmfs_err *err)
{
	const char *slash = strchr(key, '/');
	const char *name = slash ? slash + 1 : key;

	if (slash && !dns_subdomain_ok(key, (size_t)(slash - key)))
		return cmfs_err_set(err, -EINVAL,
				    "label key '%.100s': the prefix before '/' "
				    "must be a DNS subdomain (lower-case "
				    "letters, digits, '-' and '.')", key);
	if (!label_word_ok(name, strlen(name)))
		return cmfs_err_set(err, -EINVAL,
				    "label key '%.100s': the name must be 1-63 "
				    "of A-Z, a-z, 0-9, '-', '_' and '.', "
				    "starting and ending with a letter or "
				    "digit", key);
	return 0;
}

int name_label_value_check(const char *key, const char *value, size_t len,
			   struct cmfs_err *err)
{
	if (len == 0 || label_word_ok(value, len))
		return 0;
	return cmfs_err_set(err, -EINVAL,
			    "label %.100s: value '%.*s' must be empty or 1-63 "
			    "of A-Z, a-z, 0-9, '-', '_' and '.', starting and "
			    "ending with a letter or digit", key,
			    len > 64 ? 64 : (int)len, value);
}

const char *name_ext(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot ? dot : name + strlen(name);
}

int name_is_jar(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, ".jar");
}
