/*
 * catalog_rows.c - rows of the catalog written and read back the same
 * way by every backend (catalog_rows.h).
 */
#include "catalog_rows.h"

#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int catalog_rows_external(struct jar_report *r, const char *text)
{
	const char *p, *e;
	size_t n = 0;

	for (p = text; *p; p++)
		n += *p == '\n';
	if (!n)
		return 0;
	r->external = calloc(n, sizeof(char *));
	if (!r->external)
		return -ENOMEM;
	for (p = text; *p && (e = strchr(p, '\n')); p = e + 1) {
		r->external[r->nexternal] = strndup(p, (size_t)(e - p));
		if (!r->external[r->nexternal])
			return -ENOMEM;
		r->nexternal++;
	}
	return 0;
}

int catalog_rows_factory_add(struct jar_report *r, const char *kind,
			     const char *identifier, const char *cls)
{
	struct jar_factory *f;

	if (!kind || !cls)
		return -EINVAL;
	f = realloc(r->factories, (r->nfactories + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	r->factories = f;
	f = &r->factories[r->nfactories++];
	memset(f, 0, sizeof(*f));
	if (jar_kind_parse(&f->kind, kind))
		f->kind = JAR_KIND_OTHER;
	f->identifier = identifier ? strdup(identifier) : NULL;
	f->cls = strdup(cls);
	return (identifier && !f->identifier) || !f->cls ? -ENOMEM : 0;
}

int catalog_rows_option_add(struct catalog_table_def *d, const char *k,
			    const char *v)
{
	char **keys, **values;

	if (!k || !v)
		return -EINVAL;
	if (!(keys = realloc(d->keys, (d->nopts + 1) * sizeof(char *))))
		return -ENOMEM;
	d->keys = keys;
	values = realloc(d->values, (d->nopts + 1) * sizeof(char *));
	if (!values)
		return -ENOMEM;
	d->values = values;
	d->keys[d->nopts] = strdup(k);
	d->values[d->nopts] = strdup(v);
	d->nopts++;
	return d->keys[d->nopts - 1] && d->values[d->nopts - 1] ? 0 : -ENOMEM;
}

int catalog_rows_def(struct catalog_table_def *out, const char *ddl,
		     const char *like)
{
	memset(out, 0, sizeof(*out));
	out->ddl = strdup(ddl);
	out->like_ddl = like ? strdup(like) : NULL;
	if (out->ddl && (!like || out->like_ddl))
		return 0;
	catalog_table_def_release(out);
	return -ENOMEM;
}

static const char *const unknown_sets[] = {"required", "optional",
					   "prefixes", "validation"};

int catalog_rows_options_each(const struct jar_report *r,
			      int (*fn)(void *arg, size_t factory,
					const char *role, const char *key,
					const struct options_option *o),
			      void *arg)
{
	size_t i, j;
	int rc = 0;

	for (i = 0; !rc && i < r->nfactories; i++) {
		const struct options_set *o = &r->factories[i].options;
		const char *p = o->prefixes, *e;

		for (j = 0; !rc && j < o->n; j++)
			rc = fn(arg, i, o->v[j].required ? "required"
							 : "optional",
				o->v[j].key, &o->v[j]);
		for (j = 0; !rc && j < 4; j++)
			if (o->unknown & (1u << j))
				rc = fn(arg, i, "unknown", unknown_sets[j],
					NULL);
		while (!rc && p && *p) {
			char one[256];
			size_t n;

			e = strchr(p, ',');
			n = e ? (size_t)(e - p) : strlen(p);
			snprintf(one, sizeof(one), "%.*s", (int)n, p);
			rc = fn(arg, i, "prefix", one, NULL);
			p = e ? e + 1 : NULL;
		}
	}
	return rc;
}

/* Append a joined string to a comma list *dst (malloc'd): 0 or -ENOMEM. */
static int list_add(char **dst, const char *s)
{
	size_t n = *dst ? strlen(*dst) : 0;
	char *v = realloc(*dst, n + strlen(s) + 2);

	if (!v)
		return -ENOMEM;
	if (n)
		v[n++] = ',';
	strcpy(v + n, s);
	*dst = v;
	return 0;
}

int catalog_rows_option_read(struct jar_report *r, int64_t factory,
			     const char *role, const char *key,
			     const struct options_option *o)
{
	struct options_set *set;
	struct options_option v;
	unsigned j;

	if (factory < 0 || (uint64_t)factory >= r->nfactories || !role ||
	    !key)
		return 0;
	set = &r->factories[factory].options;
	if (!strcmp(role, "unknown")) {
		for (j = 0; j < 4 && strcmp(key, unknown_sets[j]); j++)
			;
		set->unknown |= j < 4 ? 1u << j : OPTIONS_UNKNOWN_PREFIXES;
		return 0;
	}
	if (!strcmp(role, "prefix"))
		return list_add(&set->prefixes, key);
	v = *o;
	v.key = (char *)key;
	if (!v.type)
		v.type = (char *)"?";
	v.required = !strcmp(role, "required");
	return options_set_add(set, &v);
}

const char *catalog_rows_unknown_list(unsigned unknown, char *out, size_t n)
{
	size_t j, k, len = 0;

	for (j = 0; j < 4; j++) {
		if (!(unknown & (1u << j)))
			continue;
		k = strlen(unknown_sets[j]);
		if (len + k + 2 > n)
			break;
		if (len)
			out[len++] = ',';
		memcpy(out + len, unknown_sets[j], k);
		len += k;
	}
	if (n)
		out[len] = '\0';
	return len ? out : NULL;
}

int catalog_rows_unknown_read(struct jar_report *r, int64_t factory,
			      const char *list)
{
	char one[32];
	const char *e;
	size_t n;
	int rc = 0;

	while (!rc && list && *list) {
		e = strchr(list, ',');
		n = e ? (size_t)(e - list) : strlen(list);
		snprintf(one, sizeof(one), "%.*s", (int)n, list);
		rc = catalog_rows_option_read(r, factory, "unknown", one, NULL);
		list = e ? e + 1 : NULL;
	}
	return rc;
}

void catalog_rows_options_sort(struct jar_report *r)
{
	size_t i;

	for (i = 0; i < r->nfactories; i++)
		options_set_sort(&r->factories[i].options);
}

void catalog_rows_options_unknown(struct jar_report *r)
{
	size_t i;

	for (i = 0; i < r->nfactories; i++)
		r->factories[i].options.unknown = OPTIONS_UNKNOWN_REQUIRED |
						   OPTIONS_UNKNOWN_OPTIONAL |
						   OPTIONS_UNKNOWN_PREFIXES;
}
