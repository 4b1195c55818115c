/*
 * resolve.c - from a table's options to a pinned JAR set, or the reason
 * there is none.  Every look-up goes through indexed catalog queries
 * (labels by key and value), so a resolution costs the same with ten
 * artifacts or a hundred thousand.
 */
#include "resolve.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hash.h"
#include "jar.h"
#include "name.h"
#include "shortlist.h"

/* Bytes a list may take in a message (err.h): room for the words after. */
#define LIST_BUDGET 800
/* Bytes of resolve_refused()'s lines: an attribute's value is at most
 * 64 KiB (XATTR_SIZE_MAX), and a line per JAR may say what is left out. */
#define REFUSED_MAX (60 * 1024)

/* The artifacts carrying a given identifier label and type label. */
struct matches {
	struct catalog *cat;
	const char *kind;
	size_t n;
	struct catalog_artifact a[8];	/* the first eight */
	struct shortlist names;		/* their names, for a message */
};

static int collect(void *arg, const struct catalog_artifact *a)
{
	struct matches *m = arg;
	char *type = NULL;
	int rc;

	rc = catalog_label_get(m->cat, a->id, NAME_LABEL_TYPE, &type, NULL);
	if (rc == -ENODATA)
		return 0;
	if (rc)
		return rc;
	if (!strcmp(type, m->kind)) {
		if (m->n < sizeof(m->a) / sizeof(m->a[0]))
			m->a[m->n] = *a;
		m->n++;
		rc = shortlist_add(&m->names, "%s", a->name);
	}
	free(type);
	return rc;
}

/* Find the artifacts of `env_id` labelled as `kind` `id`; their type
 * labels come with them (collect() asks the catalog for nothing more). */
static int find(struct matches *m, struct catalog *cat, int64_t env_id,
		const char *kind, const char *id, struct cmfs_err *err)
{
	memset(m, 0, sizeof(*m));
	m->cat = cat;
	m->kind = kind;
	m->names = (struct shortlist)SHORTLIST_INIT(LIST_BUDGET);
	return catalog_art_by_label_with(cat, env_id, NAME_LABEL_IDENT, id,
					 NAME_LABEL_TYPE, collect, m, err);
}

/* The identifiers of `kind` that artifacts of `env_id` do carry. */
struct known {
	struct catalog *cat;
	const char *kind;
	struct shortlist list;
};

static int known_id(void *arg, const struct catalog_artifact *a)
{
	struct known *k = arg;
	char *type = NULL, *id = NULL;

	if (!catalog_label_get(k->cat, a->id, NAME_LABEL_TYPE, &type, NULL) &&
	    !strcmp(type, k->kind) &&
	    !catalog_label_get(k->cat, a->id, NAME_LABEL_IDENT, &id, NULL))
		shortlist_add(&k->list, "%s (%s)", id, a->name);
	free(type);
	free(id);
	return 0;
}

/* "none" or the identifiers of `kind` on offer, for error messages. */
static void list_known(struct buf *out, struct catalog *cat, int64_t env_id,
		       const char *kind)
{
	struct known k = { cat, kind, SHORTLIST_INIT(LIST_BUDGET) };

	catalog_art_by_label(cat, env_id, NAME_LABEL_TYPE, kind, known_id, &k,
			     NULL);
	buf_adds(out, shortlist_str(&k.list, "none"));
	shortlist_release(&k.list);
}

/* The inspection of the latest version of `a`. */
static int inspection(struct catalog *cat, const struct catalog_artifact *a,
		      struct jar_report **out, struct cmfs_err *err)
{
	int rc = catalog_insp_of(cat, &a->latest, out, NULL);

	if (rc == -ENOENT)
		return cmfs_err_set(err, -ENOEXEC,
				    "%s version %lld was not inspected", a->name,
				    (long long)a->latest.n);
	return rc ? cmfs_err_set(err, rc, "%s: %s", a->name, strerror(-rc))
		  : 0;
}

/* 1 if the report offers a factory of `kind` with identifier `id`. */
static int offers(const struct jar_report *r, enum jar_kind kind,
		  const char *id)
{
	size_t i;

	for (i = 0; i < r->nfactories; i++)
		if (r->factories[i].kind == kind && r->factories[i].identifier &&
		    !strcmp(r->factories[i].identifier, id))
			return 1;
	return 0;
}

/* Add `a` to the set unless it is there. */
static int add_jar(struct resolution *res, const struct catalog_artifact *a,
		   const char *kind, const char *id, struct cmfs_err *err)
{
	size_t i;
	struct resolve_jar *j;

	for (i = 0; i < res->njars; i++)
		if (!strcmp(res->jars[i].name, a->name))
			return 0;
	if (res->njars == RESOLVE_MAX_JARS)
		return cmfs_err_set(err, -EFBIG, "%s: more than %d JARs",
				    res->table, RESOLVE_MAX_JARS);
	j = &res->jars[res->njars++];
	snprintf(j->name, sizeof(j->name), "%s", a->name);
	j->version = a->latest.n;
	snprintf(j->kind, sizeof(j->kind), "%s", kind);
	snprintf(j->identifier, sizeof(j->identifier), "%s", id);
	return 0;
}

/*
 * Check a matched artifact (rule 5) and its reached classes (rule 6) for
 * table `table`.  With `refused`, the classes outside the allowlist are
 * listed there instead ("<artifact> <class>" lines) and are no refusal.
 */
static int check_jar(const struct catalog_artifact *a, const struct jar_report *r,
		     const struct config *cfg, const char *table,
		     struct buf *refused, struct cmfs_err *err)
{
	struct shortlist bad = SHORTLIST_INIT(LIST_BUDGET);
	char all[300] = "";
	size_t i, more = 0;
	int rc = 0;

	if (!r->nfactories)
		return cmfs_err_set(err, -ENOEXEC,
				    "%s is not a factory JAR: %s", a->name,
				    r->error ? r->error
					     : "no factory is listed");
	for (i = 0; !rc && i < r->nexternal; i++) {
		if (jar_class_allowed(r->external[i], cfg->sql.class_allowlist))
			continue;
		if (!refused)
			rc = shortlist_add(&bad, "%s", r->external[i]);
		else if (refused->len + strlen(a->name) + strlen(r->external[i]) +
				 2 > REFUSED_MAX)
			more++;
		else
			rc = buf_printf(refused, "%s %s\n", a->name,
					r->external[i]);
	}
	if (!rc && more)
		rc = buf_printf(refused,
				"%s ... and %zu more (cmfs inspect lists "
				"every class it reaches)\n", a->name, more);
	if (bad.shown < bad.n)
		snprintf(all, sizeof(all),
			 " (getfattr -n user.cmfs.refused-classes "
			 "tables/resolved/%s.jars lists them all)", table);
	if (!rc && bad.n)
		rc = cmfs_err_set(err, -EPERM,
				  "%s reaches %zu class%s outside the class "
				  "allowlist: %s%s; shade them into the JAR or widen "
				  "[sql] class_allowlist", a->name, bad.n,
				  bad.n == 1 ? "" : "es",
				  shortlist_str(&bad, ""), all);
	shortlist_release(&bad);
	return rc;
}

/* Connector artifacts of the environment, to look for bundled formats. */
struct bundled {
	struct catalog *cat;
	const char *id;
	const char *skip;
	char found[254];
};

static int find_bundled(void *arg, const struct catalog_artifact *a)
{
	struct bundled *b = arg;
	struct jar_report *r = NULL;

	if (b->found[0] || !strcmp(a->name, b->skip))
		return 0;
	if (!catalog_insp_of(b->cat, &a->latest, &r, NULL) &&
	    offers(r, JAR_KIND_FORMAT, b->id))
		snprintf(b->found, sizeof(b->found), "%s", a->name);
	jar_report_free(r);
	return 0;
}

/*
 * Resolve one identifier.  `conn` is the connector's report (NULL for
 * the connector itself or a built-in connector), `conn_name` its name.
 */
static int resolve_id(struct resolution *res, struct catalog *cat,
		      const struct config *cfg, int64_t env_id,
		      const char *kind, const char *id,
		      const struct jar_report *conn, const char *conn_name,
		      struct buf *refused, struct jar_report **report,
		      struct cmfs_err *err)
{
	int is_conn = !strcmp(kind, "connector");
	const char *builtins = is_conn ? cfg->sql.builtin_connectors
				       : cfg->sql.builtin_formats;
	int builtin = config_list_has(builtins, id);
	struct matches m;
	struct buf have = BUF_INIT(2 * LIST_BUDGET);
	int rc;

	*report = NULL;
	rc = find(&m, cat, env_id, kind, id, err);
	if (rc)
		goto out;
	if (builtin && m.n) {
		rc = cmfs_err_set(err, -ENOTUNIQ,
				  "%s '%s' is ambiguous: built into the "
				  "cluster and claimed by %s; keep one "
				  "artifact per identifier per environment",
				  kind, id, shortlist_str(&m.names, ""));
	} else if (builtin) {
		if (res->nbuiltin < RESOLVE_MAX_JARS)
			snprintf(res->builtin[res->nbuiltin++], 128, "%s", id);
	} else if (m.n > 1) {
		rc = cmfs_err_set(err, -ENOTUNIQ,
				  "%s '%s' is ambiguous: %s all carry it; keep "
				  "one artifact per identifier per environment",
				  kind, id, shortlist_str(&m.names, ""));
	} else if (m.n == 1 && !is_conn && conn &&
		   offers(conn, JAR_KIND_FORMAT, id) &&
		   strcmp(m.a[0].name, conn_name)) {
		/* Rule 4: two factories with one identifier, to Flink. */
		rc = cmfs_err_set(err, -ENOTUNIQ,
				  "format '%s' is ambiguous: bundled in "
				  "connector %s and carried by format artifact "
				  "%s, two factories to Flink; remove the "
				  "format artifact or use a connector JAR "
				  "without it", id, conn_name, m.a[0].name);
	} else if (m.n == 1) {
		if (!name_is_jar(m.a[0].name))
			rc = cmfs_err_set(err, -ENOEXEC,
					  "%s '%s' matches %s, whose name does "
					  "not end in .jar: Flink loads it with "
					  "ADD JAR; rename it to *.jar",
					  kind, id, m.a[0].name);
		if (!rc)
			rc = inspection(cat, &m.a[0], report, err);
		if (!rc)
			rc = check_jar(&m.a[0], *report, cfg, res->table,
				      refused, err);
		if (!rc)
			rc = add_jar(res, &m.a[0], kind, id, err);
	} else if (!is_conn && conn && offers(conn, JAR_KIND_FORMAT, id)) {
		/* Rule 4: the connector's own JAR bundles the format. */
		if (res->nbuiltin < RESOLVE_MAX_JARS)
			snprintf(res->builtin[res->nbuiltin++], 128,
				 "%s (in %s)", id, conn_name);
	} else {
		struct bundled b = { cat, id, conn_name ? conn_name : "", "" };

		if (!is_conn)
			catalog_art_by_label(cat, env_id, NAME_LABEL_TYPE,
					     "connector", find_bundled, &b,
					     NULL);
		list_known(&have, cat, env_id, kind);
		if (b.found[0])
			rc = cmfs_err_set(err, -ENOPKG,
					  "format '%s' is bundled in connector "
					  "%s, which serves only tables that "
					  "use that connector; upload it as a "
					  "format artifact", id, b.found);
		else
			rc = cmfs_err_set(err, -ENOPKG,
					  "no %s artifact has identifier '%s' "
					  "(%s identifiers here: %s); upload one "
					  "and label it", kind, id, kind,
					  buf_str(&have));
	}
out:
	shortlist_release(&m.names);
	buf_release(&have);
	if (rc) {
		jar_report_free(*report);
		*report = NULL;
	}
	return rc;
}

/* 1 if `key` names a format: format, key.format, value.format. */
static int format_key(const char *key)
{
	return !strcmp(key, "format") || !strcmp(key, "key.format") ||
	       !strcmp(key, "value.format");
}

/* The options of the factory of `kind` and identifier `id` in r, or NULL. */
static const struct options_set *declared(const struct jar_report *r,
					  enum jar_kind kind, const char *id)
{
	size_t i;

	for (i = 0; r && i < r->nfactories; i++)
		if (r->factories[i].kind == kind && r->factories[i].identifier &&
		    !strcmp(r->factories[i].identifier, id))
			return &r->factories[i].options;
	return NULL;
}

/* resolve_table(), or resolve_refused() with `refused`. */
static int resolve_run(struct resolution *out, struct catalog *cat,
		       const struct config *cfg, const struct catalog_env *env,
		       const char *table, struct buf *refused,
		       struct cmfs_err *err)
{
	struct catalog_table t;
	struct catalog_table_def d;
	struct jar_report *conn = NULL, *rep = NULL, *frep[3] = {NULL};
	struct options_format fmts[3];
	const char *connector = NULL, *conn_name = NULL;
	size_t i, nf = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(out->table, sizeof(out->table), "%s", table);
	rc = catalog_table_get(cat, env->id, table, &t, err);
	if (rc == -ENOENT)
		return cmfs_err_set(err, rc, "no table %s in environment %s",
				    table, env->name);
	if (rc || (rc = catalog_table_def(cat, t.id, &d, err)))
		return rc;
	for (i = 0; i < d.nopts; i++)
		if (!strcmp(d.keys[i], "connector"))
			connector = d.values[i];
	if (!connector) {
		rc = cmfs_err_set(err, -EINVAL,
				  "table %s has no 'connector' option: say "
				  "which connector reads and writes it", table);
		goto out;
	}
	rc = resolve_id(out, cat, cfg, env->id, "connector", connector, NULL,
			NULL, refused, &conn, err);
	if (!rc && out->njars)
		conn_name = out->jars[0].name;
	for (i = 0; !rc && i < d.nopts; i++) {
		/* Only these three name formats (Flink's FactoryUtil); a
		 * connector's own `*.format` option (Paimon's file.format,
		 * StarRocks' sink.properties.format) never does. */
		if (!format_key(d.keys[i]))
			continue;
		rc = resolve_id(out, cat, cfg, env->id, "format", d.values[i],
				conn, conn_name, refused, &rep, err);
		/* Its options: from its own JAR, or the connector's that
		 * bundles it; none known for a built-in one. */
		if (!rc && nf < 3) {
			fmts[nf].option = d.keys[i];
			fmts[nf].id = d.values[i];
			fmts[nf].set = rep ? declared(rep, JAR_KIND_FORMAT,
						      d.values[i])
					   : declared(conn, JAR_KIND_FORMAT,
						      d.values[i]);
			frep[nf++] = rep;
		} else {
			jar_report_free(rep);
		}
		rep = NULL;
	}
	/* The options, as Flink checks them when the job is submitted. */
	if (!rc && conn && cfg->sql.check_options)
		rc = options_check(table, connector,
				   declared(conn, JAR_KIND_CONNECTOR,
					    connector),
				   fmts, nf, d.keys, d.values, d.nopts, err);
out:
	for (i = 0; i < nf; i++)
		jar_report_free(frep[i]);
	jar_report_free(conn);
	catalog_table_def_release(&d);
	return rc;
}

int resolve_table(struct resolution *out, struct catalog *cat,
		  const struct config *cfg, const struct catalog_env *env,
		  const char *table, struct cmfs_err *err)
{
	return resolve_run(out, cat, cfg, env, table, NULL, err);
}

int resolve_refused(struct buf *out, struct catalog *cat,
		    const struct config *cfg, const struct catalog_env *env,
		    const char *table, struct cmfs_err *err)
{
	struct resolution res;

	return resolve_run(&res, cat, cfg, env, table, out, err);
}

int resolve_uses(const struct resolution *res, const char *name)
{
	size_t i;

	for (i = 0; i < res->njars; i++)
		if (!strcmp(res->jars[i].name, name))
			return 1;
	return 0;
}

/*
 * The offset just past the last character of `ddl` that is neither blank
 * nor inside a comment: strings and quoted names are skipped whole, so a
 * ';' or "--" inside them counts as what it is.
 */
static size_t significant_end(const char *ddl)
{
	const char *p = ddl, *q;
	size_t end = 0;
	char close;

	while (*p) {
		if (p[0] == '-' && p[1] == '-') {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			q = strstr(p + 2, "*/");
			p = q ? q + 2 : p + strlen(p);
		} else if (*p == '\'' || *p == '`' || *p == '"') {
			/* A doubled quote is one quote inside. */
			close = *p++;
			while (*p && !(*p == close && p[1] != close))
				p += *p == close ? 2 : 1;
			if (*p)
				p++;
			end = (size_t)(p - ddl);
		} else {
			if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
				end = (size_t)(p - ddl) + 1;
			p++;
		}
	}
	return end;
}

/*
 * Append `ddl` as written, as one statement for sql-client: ended by ';'
 * (added where the text has none, on a line of its own after a trailing
 * comment, so it can never fall into it) and a newline.
 */
static int add_statement(struct buf *out, const char *ddl)
{
	size_t n = strlen(ddl), end = significant_end(ddl);
	int rc;

	while (n && (ddl[n - 1] == ' ' || ddl[n - 1] == '\n' ||
		     ddl[n - 1] == '\r' || ddl[n - 1] == '\t'))
		n--;
	rc = buf_add(out, ddl, n);
	/* After a trailing comment the ';' needs a line of its own. */
	if (!rc && !(end && ddl[end - 1] == ';'))
		rc = buf_adds(out, end < n ? "\n;" : ";");
	return rc ? rc : buf_addc(out, '\n');
}

int resolve_render(struct buf *out, const struct resolution *res,
		   struct catalog *cat, const struct catalog_env *env,
		   const char *prefix, int sql, int64_t now,
		   struct cmfs_err *err)
{
	struct catalog_table t;
	struct catalog_table_def d;
	char stamp[40];
	time_t secs = (time_t)(now / 1000000000);
	struct tm tm;
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < res->njars; i++) {
		const struct resolve_jar *j = &res->jars[i];

		if (sql)
			continue;
		rc = buf_printf(out, "%s/envs/%s/versions/%s/%lld%s\n", prefix,
				env->name, j->name, (long long)j->version,
				name_ext(j->name));
	}
	if (!sql || rc)
		return rc;
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	rc = buf_printf(out,
			"-- cmfs: table %s of environment %s (catalog "
			"_env_%s.default), resolved %s\n",
			res->table, env->name, env->name, stamp);
	for (i = 0; !rc && i < res->njars; i++)
		rc = buf_printf(out, "-- %s '%s': %s version %lld\n",
				res->jars[i].kind, res->jars[i].identifier,
				res->jars[i].name,
				(long long)res->jars[i].version);
	for (i = 0; !rc && i < res->nbuiltin; i++)
		rc = buf_printf(out, "-- provided by the cluster: %s\n",
				res->builtin[i]);
	for (i = 0; !rc && i < res->njars; i++)
		rc = buf_printf(out, "ADD JAR '%s/envs/%s/versions/%s/%lld%s';\n",
				prefix, env->name, res->jars[i].name,
				(long long)res->jars[i].version,
				name_ext(res->jars[i].name));
	if (rc)
		return rc;
	rc = catalog_table_get(cat, env->id, res->table, &t, err);
	if (!rc)
		rc = catalog_table_def(cat, t.id, &d, err);
	if (rc)
		return rc;
	if (d.like_ddl)
		rc = add_statement(out, d.like_ddl);
	if (!rc)
		rc = add_statement(out, d.ddl);
	catalog_table_def_release(&d);
	return rc;
}

/* ---- The cache ---- */

/*
 * Direct-mapped: a collision evicts.  A cache of bounded size whose hits
 * are checked against the catalog generation needs no more: a table that
 * grows (hash.h) would need an eviction policy of its own to stay
 * bounded.  The slot is chosen by hash.h's hash, salted with the
 * environment.
 */
#define CACHE_SLOTS 1024

struct cache_slot {
	uint64_t gen;
	const void *cfg; /* NULL: empty */
	int64_t env_id;
	char *table;
	int code;
	char *why; /* the reason, when code != 0 */
	size_t njars, nbuiltin;
	struct resolve_jar *jars;
	char (*builtin)[128];
};

struct resolve_cache {
	pthread_mutex_t lock;
	struct cache_slot slot[CACHE_SLOTS];
};

struct resolve_cache *resolve_cache_new(void)
{
	struct resolve_cache *rc = calloc(1, sizeof(*rc));

	if (rc)
		pthread_mutex_init(&rc->lock, NULL);
	return rc;
}

static void slot_clear(struct cache_slot *s)
{
	free(s->table);
	free(s->why);
	free(s->jars);
	free(s->builtin);
	memset(s, 0, sizeof(*s));
}

void resolve_cache_clear(struct resolve_cache *rc)
{
	size_t i;

	if (!rc)
		return;
	pthread_mutex_lock(&rc->lock);
	for (i = 0; i < CACHE_SLOTS; i++)
		slot_clear(&rc->slot[i]);
	pthread_mutex_unlock(&rc->lock);
}

void resolve_cache_free(struct resolve_cache *rc)
{
	size_t i;

	if (!rc)
		return;
	for (i = 0; i < CACHE_SLOTS; i++)
		slot_clear(&rc->slot[i]);
	pthread_mutex_destroy(&rc->lock);
	free(rc);
}

/* The slot of (environment, table name). */
static struct cache_slot *slot_of(struct resolve_cache *rc, int64_t env_id,
				  const char *table)
{
	uint64_t h = hash_bytes(table, strlen(table), (uint64_t)env_id);

	return &rc->slot[h % CACHE_SLOTS];
}

int resolve_cache_get(struct resolve_cache *rc, uint64_t gen, const void *cfg,
		      int64_t env_id, const char *table, struct resolution *res,
		      int *code, struct cmfs_err *err)
{
	struct cache_slot *s;
	int hit;

	if (!rc)
		return 0;
	pthread_mutex_lock(&rc->lock);
	s = slot_of(rc, env_id, table);
	hit = s->cfg == cfg && s->gen == gen && s->env_id == env_id &&
	      !strcmp(s->table, table);
	if (hit) {
		memset(res, 0, sizeof(*res));
		snprintf(res->table, sizeof(res->table), "%s", table);
		res->njars = s->njars;
		res->nbuiltin = s->nbuiltin;
		if (s->njars)
			memcpy(res->jars, s->jars, s->njars * sizeof(*s->jars));
		if (s->nbuiltin)
			memcpy(res->builtin, s->builtin,
			       s->nbuiltin * sizeof(*s->builtin));
		*code = s->code;
		if (s->code)
			cmfs_err_set(err, s->code, "%s", s->why);
	}
	pthread_mutex_unlock(&rc->lock);
	return hit;
}

void resolve_cache_put(struct resolve_cache *rc, uint64_t gen, const void *cfg,
		       int64_t env_id, const char *table,
		       const struct resolution *res, int code,
		       const struct cmfs_err *err)
{
	struct cache_slot n = {gen,  cfg, env_id, NULL, code,
			       NULL, 0,	  0,	  NULL, NULL};
	struct cache_slot *s;

	/* Only what the catalog's rows decide; not a failing disk. */
	if (!rc ||
	    (code && code != -ENOENT && code != -EINVAL && code != -ENOPKG &&
	     code != -ENOTUNIQ && code != -ENOEXEC && code != -EPERM))
		return;
	n.table = strdup(table);
	if (code)
		n.why = strdup(cmfs_err_msg(err));
	else {
		n.njars = res->njars;
		n.nbuiltin = res->nbuiltin;
		n.jars = n.njars ? malloc(n.njars * sizeof(*n.jars)) : NULL;
		n.builtin = n.nbuiltin ? malloc(n.nbuiltin * sizeof(*n.builtin))
				       : NULL;
		if (n.jars)
			memcpy(n.jars, res->jars, n.njars * sizeof(*n.jars));
		if (n.builtin)
			memcpy(n.builtin, res->builtin,
			       n.nbuiltin * sizeof(*n.builtin));
	}
	if (!n.table || (code && !n.why) || (n.njars && !n.jars) ||
	    (n.nbuiltin && !n.builtin)) {
		slot_clear(&n);
		return;
	}
	pthread_mutex_lock(&rc->lock);
	s = slot_of(rc, env_id, table);
	slot_clear(s);
	*s = n;
	pthread_mutex_unlock(&rc->lock);
}
