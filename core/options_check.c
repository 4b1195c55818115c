/*
 * options_check.c - a table's WITH options against what its factories
 * declare, as Flink's FactoryUtil checks them when a job is submitted
 * (options.h has the contract).
 *
 * Flink's TableFactoryHelper.validate() takes, in order: the required
 * options present (an option counts as present under its key, a fallback
 * key or a deprecated key); each present option's value readable as the
 * option's type; then no key left that no factory consumes.  Consumed are
 * 'connector', 'property-version', the connector's options, and for each
 * format the connector discovers, the format's options under the format's
 * prefix: "<id>." for 'format', "key.<id>." for 'key.format',
 * "value.<id>." for 'value.format'.  Keys under a prefix the connector
 * gives validateExcept (Kafka's "properties.") are not checked.  A format
 * resolution found no JAR for (a built-in one) has Flink 1.20's
 * declarations from format_builtin.h.  Where a set is unknown (computed at
 * run time, a built-in format cmfs has no table for, an inspection older
 * than the options) nothing is refused on it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "format_builtin.h"
#include "options.h"

/* The options of format f: from its JAR, else Flink's built-in ones; NULL
 * when neither is known. */
static const struct options_set *fmt_set(const struct options_format *f)
{
	return f->set ? f->set : format_builtin_options(f->id);
}

/* Does comma-separated `list` (may be NULL) hold `key`? */
static int in_list(const char *list, const char *key)
{
	return options_list_has(list, key, strlen(key), 0);
}

/* Does `key` start with one of comma-separated `prefixes`? */
static int has_prefix(const char *prefixes, const char *key)
{
	const char *p = prefixes;

	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l && !strncmp(p, key, l))
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* The option of s that `key` names: its key, a fallback or a deprecated
 * key; NULL if none. */
static const struct options_option *lookup(const struct options_set *s,
					   const char *key)
{
	const struct options_option *o = options_find(s, key);
	size_t i;

	for (i = 0; !o && i < s->n; i++)
		if (in_list(s->v[i].fallback, key) ||
		    in_list(s->v[i].deprecated, key))
			o = &s->v[i];
	return o;
}

/* The table's value of option o under `prefix`, or NULL when absent. */
static const char *value_of(const struct options_option *o, const char *prefix,
			    char *const *keys, char *const *values, size_t n)
{
	size_t i, pl = strlen(prefix);

	for (i = 0; i < n; i++) {
		const char *k = keys[i];

		if (strncmp(k, prefix, pl))
			continue;
		k += pl;
		if (!strcmp(k, o->key) || in_list(o->fallback, k) ||
		    in_list(o->deprecated, k))
			return values[i];
	}
	return NULL;
}

/* Levenshtein distance of a and b (each at most 255 bytes counted). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[256];

	if (la > 255)
		la = 255;
	if (lb > 255)
		lb = 255;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0], up;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best;

			up = row[j];
			best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/*
 * How far `cand` is from what was written, `key`: the edit distance, or
 * 1 when one holds the other (a prefix left out: "value.", "-offset").
 */
static size_t how_far(const char *key, const char *cand)
{
	if (strlen(key) >= 4 && strlen(cand) >= 4 &&
	    (strstr(cand, key) || strstr(key, cand)))
		return 1;
	return distance(key, cand);
}

/* Keep `cand` (under `prefix`) in *best when it is nearer to `key`. */
static void nearer(const char *key, const char *prefix, const char *cand,
		   char *best, size_t cap, size_t *bestd)
{
	char full[512];
	size_t d;

	snprintf(full, sizeof(full), "%s%s", prefix, cand);
	d = how_far(key, full);
	if (d < *bestd) {
		*bestd = d;
		snprintf(best, cap, "%s", full);
	}
}

/* The known key nearest to `key`, when near enough to be a slip. */
static void suggest(char *best, size_t cap, const char *key,
		    const struct options_set *conn,
		    const struct options_format *fmts, size_t nfmts)
{
	size_t bestd = (size_t)-1, i, j, len = strlen(key);
	char pre[300];

	best[0] = '\0';
	for (i = 0; conn && i < conn->n; i++)
		nearer(key, "", conn->v[i].key, best, cap, &bestd);
	for (j = 0; j < nfmts; j++) {
		const struct options_set *s = fmt_set(&fmts[j]);

		if (!s)
			continue;
		options_format_prefix(pre, sizeof(pre), fmts[j].option,
				      fmts[j].id);
		for (i = 0; i < s->n; i++)
			nearer(key, pre, s->v[i].key, best, cap, &bestd);
	}
	/* A slip: a few letters, or a prefix left out (value.). */
	if (bestd > 3 && bestd > len / 3)
		best[0] = '\0';
}

/* The value of enum option o nearest to `v`. */
static void suggest_value(char *best, size_t cap, const char *v,
			  const struct options_option *o)
{
	const char *p = o->values;
	size_t bestd = (size_t)-1;

	best[0] = '\0';
	while (p && *p) {
		const char *e = strchr(p, ',');
		char one[256];
		size_t d;

		snprintf(one, sizeof(one), "%.*s",
			 (int)(e ? (size_t)(e - p) : strlen(p)), p);
		d = how_far(v, one);
		if (d < bestd) {
			bestd = d;
			snprintf(best, cap, "%s", one);
		}
		p = e ? e + 1 : NULL;
	}
	if (bestd > 3 && bestd > strlen(v) / 2)
		best[0] = '\0';
}

void options_format_prefix(char *out, size_t cap, const char *option,
			   const char *id)
{
	size_t n = strlen(option), f = strlen("format");

	/* "value.format" -> "value." + id + "."; "format" -> id + ".". */
	if (n >= f && !strcmp(option + n - f, "format"))
		snprintf(out, cap, "%.*s%s.", (int)(n - f), option, id);
	else
		snprintf(out, cap, "%s.", id);
}

/* Required options of s (under prefix) present in the table. */
static int check_required(const char *table, const char *what, const char *id,
			  const struct options_set *s, const char *prefix,
			  char *const *keys, char *const *values, size_t n,
			  struct cmfs_err *err)
{
	size_t i;
	char *t = NULL;
	int rc;

	if (!s || (s->unknown & OPTIONS_UNKNOWN_REQUIRED))
		return 0;
	for (i = 0; i < s->n; i++) {
		if (!s->v[i].required ||
		    value_of(&s->v[i], prefix, keys, values, n))
			continue;
		if (options_type_text(&t, &s->v[i]))
			return cmfs_err_set(err, -ENOMEM, "out of memory");
		rc = cmfs_err_set(err, -EINVAL,
				  "table %s: %s '%s' requires option '%s%s' "
				  "(%s), which the table does not set",
				  table, what, id, prefix, s->v[i].key, t);
		free(t);
		return rc;
	}
	return 0;
}

/* The value of option o (table key `key`) readable as its type. */
static int check_value(const char *table, const char *key, const char *v,
		       const struct options_option *o, struct cmfs_err *err)
{
	char near[256], *t = NULL;
	int rc;

	if (options_value_ok(o, v))
		return 0;
	if (options_type_text(&t, o))
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	near[0] = '\0';
	if (!strcmp(o->type, "enum") && o->values)
		suggest_value(near, sizeof(near), v, o);
	rc = cmfs_err_set(
		err, -EINVAL,
		"table %s: option '%s' = '%s' is not a valid %s%s%s%s", table,
		key, v, t, near[0] ? ": did you mean '" : "", near,
		near[0] ? "'?" : "");
	free(t);
	return rc;
}

int options_check(const char *table, const char *connector,
		  const struct options_set *conn,
		  const struct options_format *fmts, size_t nfmts,
		  char *const *keys, char *const *values, size_t n,
		  struct cmfs_err *err)
{
	char pre[300], near[512];
	size_t i, j;
	int rc;

	if (!conn || (conn->unknown & OPTIONS_UNVALIDATED))
		return 0;
	/* 1. Required options, the connector's and its formats'. */
	rc = check_required(table, "connector", connector, conn, "", keys,
			    values, n, err);
	for (j = 0; !rc && j < nfmts; j++) {
		options_format_prefix(pre, sizeof(pre), fmts[j].option,
				      fmts[j].id);
		rc = check_required(table, "format", fmts[j].id,
				    fmt_set(&fmts[j]), pre, keys, values, n,
				    err);
	}
	if (rc)
		return rc;
	/* 2. and 3. Each key: whose it is, and its value. */
	for (i = 0; i < n; i++) {
		const char *k = keys[i];
		const struct options_option *o = NULL;
		const struct options_set *owner = conn;
		int fmt = 0;

		if (!strcmp(k, "connector") || !strcmp(k, "property-version"))
			continue;
		for (j = 0; j < nfmts; j++) {
			options_format_prefix(pre, sizeof(pre), fmts[j].option,
					      fmts[j].id);
			if (!strncmp(k, pre, strlen(pre))) {
				fmt = 1;
				owner = fmt_set(&fmts[j]);
				if (owner)
					o = lookup(owner, k + strlen(pre));
				break;
			}
		}
		if (!fmt)
			o = lookup(conn, k);
		if (o) {
			rc = check_value(table, k, values[i], o, err);
			if (rc)
				return rc;
			continue;
		}
		/* Not declared: refused only where the whole set is known. */
		if (!owner || (owner->unknown & (OPTIONS_UNKNOWN_REQUIRED |
						 OPTIONS_UNKNOWN_OPTIONAL)))
			continue;
		if (!fmt && ((conn->unknown & OPTIONS_UNKNOWN_PREFIXES) ||
			     has_prefix(conn->prefixes, k)))
			continue;
		suggest(near, sizeof(near), k, conn, fmts, nfmts);
		return cmfs_err_set(err, -EINVAL,
				    "table %s: option '%s' is not one that "
				    "%s '%s' declares%s%s%s",
				    table, k, fmt ? "format" : "connector",
				    fmt ? fmts[j].id : connector,
				    near[0] ? ": did you mean '" : "", near,
				    near[0] ? "'?" : "");
	}
	return 0;
}
