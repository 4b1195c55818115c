/*
 * options_set.c - a set of declared options (struct options_set): made,
 * sorted, looked up, copied and released, and written out as the text
 * `cmfs inspect` and user.cmfs.options show (options.h has the contract).
 *
 * options.c fills sets from bytecode; the catalog's rows, the checks of a
 * table's options and the reports use them as this file leaves them.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

int options_set_add(struct options_set *s, const struct options_option *o)
{
	struct options_option *v = realloc(s->v, (s->n + 1) * sizeof(*v));
	struct options_option *d;

	if (!v)
		return -ENOMEM;
	s->v = v;
	d = &v[s->n];
	memset(d, 0, sizeof(*d));
	d->key = dup0(o->key);
	d->type = dup0(o->type ? o->type : "?");
	d->values = dup0(o->values);
	d->defval = dup0(o->defval);
	d->deprecated = dup0(o->deprecated);
	d->fallback = dup0(o->fallback);
	d->list = o->list;
	d->required = o->required;
	d->forward = o->forward;
	if (!d->key || !d->type || (o->values && !d->values) ||
	    (o->defval && !d->defval) || (o->deprecated && !d->deprecated) ||
	    (o->fallback && !d->fallback)) {
		free(d->key);
		free(d->type);
		free(d->values);
		free(d->defval);
		free(d->deprecated);
		free(d->fallback);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

static int cmp_opt(const void *a, const void *b)
{
	return strcmp(((const struct options_option *)a)->key,
		      ((const struct options_option *)b)->key);
}

void options_set_sort(struct options_set *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_opt);
}

const struct options_option *options_find(const struct options_set *s,
					  const char *key)
{
	struct options_option k;

	k.key = (char *)key;
	if (!s->n)
		return NULL;
	return bsearch(&k, s->v, s->n, sizeof(k), cmp_opt);
}

/* Add the options of set `si` with the role given, merging by key. */

void options_set_release(struct options_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].type);
		free(s->v[i].values);
		free(s->v[i].defval);
		free(s->v[i].deprecated);
		free(s->v[i].fallback);
	}
	free(s->v);
	free(s->prefixes);
	memset(s, 0, sizeof(*s));
}

int options_set_copy(struct options_set *dst, const struct options_set *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->unknown = src->unknown;
	if (src->prefixes && !(dst->prefixes = strdup(src->prefixes)))
		return -ENOMEM;
	for (i = 0; i < src->n; i++)
		if (options_set_add(dst, &src->v[i])) {
			options_set_release(dst);
			return -ENOMEM;
		}
	return 0;
}

int options_type_text(char **out, const struct options_option *o)
{
	char *s = NULL;
	int n;

	if (!strcmp(o->type, "enum") && o->values) {
		char *v = strdup(o->values), *p;

		if (!v)
			return -ENOMEM;
		for (p = v; *p; p++)
			if (*p == ',')
				*p = '|';
		n = asprintf(&s, o->list ? "list<enum(%s)>" : "enum(%s)", v);
		free(v);
	} else {
		n = asprintf(&s, o->list ? "list<%s>" : "%s", o->type);
	}
	if (n < 0)
		return -ENOMEM;
	*out = s;
	return 0;
}

int options_format(struct buf *b, const char *factory,
		   const struct options_set *s)
{
	static const struct {
		unsigned bit;
		const char *what;
	} unk[] = {
		{OPTIONS_UNKNOWN_REQUIRED, "requiredOptions()"},
		{OPTIONS_UNKNOWN_OPTIONAL, "optionalOptions()"},
		{OPTIONS_UNKNOWN_PREFIXES, "validateExcept()"},
	};
	int unvalidated = (s->unknown & OPTIONS_UNVALIDATED) != 0;
	size_t i;
	int rc = 0;

	for (i = 0; i < s->n && !rc; i++) {
		const struct options_option *o = &s->v[i];
		char *t = NULL;

		rc = options_type_text(&t, o);
		if (!rc)
			rc = buf_printf(b, "%s\t%s\t%s\t%s\t%s\n", factory,
					o->required ? "required" : "optional",
					o->key, t, o->defval ? o->defval : "-");
		free(t);
	}
	if (unvalidated && !rc)
		rc = buf_printf(b,
				"# %s: calls none of FactoryUtil's checks: "
				"its options are not checked\n",
				factory);
	for (i = 0; i < sizeof(unk) / sizeof(unk[0]) && !rc; i++)
		if ((s->unknown & unk[i].bit) &&
		    !(unvalidated && unk[i].bit == OPTIONS_UNKNOWN_PREFIXES))
			rc = buf_printf(b,
					"# %s: %s is computed at run time: "
					"not checked\n",
					factory, unk[i].what);
	return rc;
}
