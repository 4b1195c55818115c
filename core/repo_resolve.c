/*
 * repo_resolve.c - resolution: a table's JAR set (resolve.h), cached per
 * catalog generation, its events line written once per result; and the
 * tables that use an artifact (user.cmfs.used-by).
 */
#define _GNU_SOURCE
#include "repo_int.h"

/* ---- resolution ---- */

/* resolve_table() of `name`, or what it said under this generation. */
static int resolve_cached(struct repo *r, const struct config *cfg,
			  const struct catalog_env *e, const char *name,
			  struct resolution *res, struct cmfs_err *err)
{
	struct cmfs_err why = CMFS_ERR_INIT;
	uint64_t gen = catalog_generation(r->cat);
	int rc;

	if (resolve_cache_get(r->resolved, gen, cfg, e->id, name, res, &rc,
			      err))
		return rc;
	rc = resolve_table(res, r->cat, cfg, e, name, &why);
	resolve_cache_put(r->resolved, gen, cfg, e->id, name, res, rc, &why);
	return rc ? cmfs_err_set(err, rc, "%s", cmfs_err_msg(&why)) : 0;
}

/*
 * 1 if the resolution of `name` (its .sql when `sql`) in `env` gave the
 * same result as when its line was last written: the same bytes (those at
 * `from` in `out`, but for the time a .sql's first line holds) or the same
 * error.  Else 0, and this result is remembered.  The memory is a table
 * of SEEN_SLOTS: a table that lost its slot is written again, no more.
 */
static int seen_before(struct repo *r, const char *env, const char *name,
		       int sql, int rc, const struct cmfs_err *err,
		       const struct buf *out, size_t from)
{
	struct store_hash *h;
	struct seen *slot;
	char key[sizeof(slot->key)], digest[STORE_SHA_HEX];
	const char *p = out->data ? out->data + from : "";
	size_t n = out->len - from, i;
	uint64_t fnv = 1469598103934665603ull;
	int same;

	if ((size_t)snprintf(key, sizeof(key), "%s/%s.%s", env, name,
			     sql ? "sql" : "jars") >= sizeof(key))
		return 0;
	if (sql && !rc) {
		const char *nl = memchr(p, '\n', n);

		n -= nl ? (size_t)(nl + 1 - p) : n;
		p = nl ? nl + 1 : p + n;
	}
	if (store_hash_new(&h))
		return 0;
	store_hash_update(h, &rc, sizeof(rc));
	if (rc && err)
		store_hash_update(h, cmfs_err_msg(err),
				  strlen(cmfs_err_msg(err)));
	store_hash_update(h, p, n);
	store_hash_final(h, digest);
	store_hash_free(h);
	for (i = 0; key[i]; i++)
		fnv = (fnv ^ (unsigned char)key[i]) * 1099511628211ull;
	pthread_mutex_lock(&r->seen_lock);
	slot = &r->seen[fnv % SEEN_SLOTS];
	same = !strcmp(slot->key, key) && !strcmp(slot->digest, digest);
	memcpy(slot->key, key, sizeof(key));
	memcpy(slot->digest, digest, sizeof(digest));
	pthread_mutex_unlock(&r->seen_lock);
	return same;
}

int repo_resolve(struct repo *r, const struct repo_who *who, const char *env,
		 const char *name, int sql, int record_it, struct buf *out,
		 struct cmfs_err *err)
{
	const struct config *cfg = repo_config(r);
	struct resolution res;
	struct catalog_env e;
	struct event ev;
	size_t i, from = out->len;
	int rc;

	rc = env_get(r, env, &e, err);
	if (!rc)
		rc = resolve_cached(r, cfg, &e, name, &res, err);
	if (!rc)
		rc = resolve_render(out, &res, r->cat, &e,
				    cfg->sql.jar_path_prefix
					    ? cfg->sql.jar_path_prefix
					    : (r->mountpoint ? r->mountpoint
							     : ""),
				    sql, clock_now_ns(), err);
	if (!record_it || rc == -ENOENT ||
	    seen_before(r, env, name, sql, rc, err, out, from))
		return rc;
	event_init(&ev, clock_now_ns(), who->uid, env, "resolve");
	event_add(&ev, "table", name);
	for (i = 0; !rc && i < res.njars; i++)
		event_addf(&ev, "jar", "%s@%lld", res.jars[i].name,
			   (long long)res.jars[i].version);
	record_later(r, &ev, env, rc, err);
	event_release(&ev);
	return rc;
}

int repo_refused_classes(struct repo *r, const char *env, const char *name,
			 struct buf *out, struct cmfs_err *err)
{
	struct catalog_env e;
	int rc = env_get(r, env, &e, err);

	return rc ? rc
		  : resolve_refused(out, r->cat, repo_config(r), &e, name, err);
}

/* Context of used-by: the artifact looked for, and where names go. */
struct used_by {
	struct repo *r;
	const struct catalog_env *env;
	const char *name;
	struct buf *out;
};

static int table_uses(void *arg, const struct catalog_table *t)
{
	struct used_by *u = arg;
	struct resolution res;

	if (!resolve_cached(u->r, repo_config(u->r), u->env, t->name, &res,
			    NULL) &&
	    resolve_uses(&res, u->name))
		return buf_printf(u->out, "%s\n", t->name);
	return 0;
}

int repo_used_by(struct repo *r, const char *env, const char *name,
		 struct buf *out)
{
	struct catalog_env e;
	struct used_by u = { r, &e, name, out };
	int rc = catalog_env_get(r->cat, env, &e, NULL);

	if (!rc)
		rc = catalog_table_list(r->cat, e.id, table_uses, &u, NULL);
	/* Lines between names, none after the last: one name reads as
	 * plain text in getfattr. */
	if (!rc && out->len && out->data[out->len - 1] == '\n')
		out->data[--out->len] = '\0';
	return rc;
}
