/*
 * repo_label.c - labels of artifacts (user.*), checked against what the
 * artifact's JAR offers, and the computed attributes (user.cmfs.*).
 */
#define _GNU_SOURCE
#include "repo_int.h"

/* ---- labels of artifacts ---- */

int repo_label_set(struct repo *r, const struct repo_who *who,
		   const char *env, const char *name, const char *key,
		   const char *value, size_t len, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct jar_report *rep = NULL;
	struct label *pending = NULL;
	struct event ev;
	char *v = strndup(value, len);
	int rc;

	store_reserve_take(r->store);
	event_init(&ev, clock_now_ns(), who->uid, env, "label");
	event_add(&ev, "artifact", name);
	event_add(&ev, "key", key);
	event_add(&ev, "value", v ? v : "");
	if (!v) {
		rc = cmfs_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = strlen(v) != len ? cmfs_err_set(err, -EINVAL,
					     "label %s: value holds a "
					     "NUL byte",
					     key)
			      : label_check(repo_config(r), key, v, len, err);
	if (!rc)
		rc = label_push(&pending, key, v);
	if (!rc)
		rc = begin(r, err);
	if (rc)
		goto out;
	rc = art_get(r, env, name, &e, &a, err);
	/* What the JAR offers: its factories, not their options. */
	if (!rc && name_is_jar(name) &&
	    catalog_insp_offers(r->cat, &a.latest, &rep, err))
		rc = cmfs_err_set(err, -EIO, "%s: no inspection recorded",
				  name);
	if (!rc)
		rc = check_labels(r, name, a.id, pending, rep, err);
	if (!rc)
		rc = catalog_label_set(r->cat, a.id, key, v, err);
	if (!rc)
		record(r, &ev, env, 0, NULL);
	rc = end(r, rc, err);
out:
	if (rc && rc != -ENOENT)
		record(r, &ev, env, rc, err);
	jar_report_free(rep);
	label_free(pending);
	free(v);
	event_release(&ev);
	return rc;
}

int repo_label_remove(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, const char *key,
		      struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct event ev;
	int rc;

	room_to_free(r);
	event_init(&ev, clock_now_ns(), who->uid, env, "unlabel");
	event_add(&ev, "artifact", name);
	event_add(&ev, "key", key);
	rc = begin(r, err);
	if (rc)
		goto out;
	rc = art_get(r, env, name, &e, &a, err);
	if (!rc)
		rc = catalog_label_del(r->cat, a.id, key, err);
	if (!rc)
		record(r, &ev, env, 0, NULL);
	rc = end(r, rc, err);
out:
	if (rc && rc != -ENOENT && rc != -ENODATA)
		record(r, &ev, env, rc, err);
	event_release(&ev);
	return rc;
}

int repo_label_get(struct repo *r, const char *env, const char *name,
		   const char *key, struct buf *out)
{
	struct catalog_artifact a;
	char *v = NULL;
	int rc = art_find(r, env, name, &a);

	if (!rc)
		rc = catalog_label_get(r->cat, a.id, key, &v, NULL);
	if (!rc)
		rc = buf_adds(out, v);
	free(v);
	return rc;
}

/* catalog_label_list callback: "user.<key>\0" into a buf. */
static int list_label(void *arg, const char *key, const char *value)
{
	(void)value;
	return buf_printf(arg, "user.%s%c", key, '\0');
}

int repo_label_list(struct repo *r, const char *env, const char *name,
		    struct buf *out)
{
	struct catalog_artifact a;
	int rc = art_find(r, env, name, &a);

	return rc ? rc : catalog_label_list(r->cat, a.id, list_label, out, NULL);
}

int repo_computed(struct repo *r, const char *env, const char *name,
		  int64_t n, const char *attr, struct buf *out,
		  struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct catalog_version v;
	int rc;

	rc = env_get(r, env, &e, err);
	if (!rc)
		rc = catalog_art_get(r->cat, e.id, name, &a, err);
	if (rc)
		return rc;
	v = a.latest;
	if (n && (rc = catalog_ver_get(r->cat, a.id, n, &v, err)))
		return rc;
	return repo_computed_ver(r, env, name, &v, attr, out, err);
}

int repo_computed_ver(struct repo *r, const char *env, const char *name,
		      const struct catalog_version *v, const char *attr,
		      struct buf *out, struct cmfs_err *err)
{
	struct catalog_env e;
	struct catalog_artifact a;
	struct jar_report *rep = NULL;
	size_t i;
	int rc;

	if (!strcmp(attr, "version"))
		return buf_printf(out, "%lld", (long long)v->n);
	if (!strcmp(attr, "sha256"))
		return buf_adds(out, v->sha256);
	if (!strcmp(attr, "used-by")) {
		/* Tables resolve to the latest version only. */
		if (env_get(r, env, &e, NULL) ||
		    catalog_art_get(r->cat, e.id, name, &a, NULL) ||
		    a.latest.n != v->n || strcmp(a.latest.sha256, v->sha256))
			return 0;
		return repo_used_by(r, env, name, out);
	}
	if (strcmp(attr, "factories") && strcmp(attr, "error") &&
	    strcmp(attr, "options"))
		return -ENODATA;
	if (!name_is_jar(name))
		return strcmp(attr, "error")
			       ? 0
			       : buf_printf(out, "%s is not a JAR: resolution "
						 "refuses it", name);
	if (catalog_insp_of(r->cat, v, &rep, err))
		return 0;
	if (!strcmp(attr, "error")) {
		rc = rep->error ? buf_adds(out, rep->error) : 0;
	} else if (!strcmp(attr, "options")) {
		/* One line per option, factory by factory (options.h). */
		for (i = 0, rc = 0; !rc && i < rep->nfactories; i++)
			rc = options_format(out,
					    rep->factories[i].identifier
						    ? rep->factories[i].identifier
						    : "unknown",
					    &rep->factories[i].options);
	} else {
		for (i = 0, rc = 0; !rc && i < rep->nfactories; i++)
			rc = buf_printf(out, "%s %s %s\n",
					jar_kind_name(rep->factories[i].kind),
					rep->factories[i].identifier
						? rep->factories[i].identifier
						: "unknown",
					rep->factories[i].cls);
	}
	jar_report_free(rep);
	return rc;
}
