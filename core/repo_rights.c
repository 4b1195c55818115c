/*
 * repo_rights.c - who may do what, and what is refused before a change
 * begins: the right each operation needs (access.h decides who holds
 * it), and the errno of each place of the tree that cannot change.
 */
#define _GNU_SOURCE
#include "repo_int.h"

/* ---- rights and refusals decided before a change ---- */

enum config_right repo_change_right(enum repo_area area)
{
	switch (area) {
	case REPO_AREA_ARTIFACTS:
		return CONFIG_UPLOAD;
	case REPO_AREA_TABLES:
		return CONFIG_WRITE_TABLES;
	default:
		return CONFIG_ADMIN;
	}
}

enum config_right repo_right(enum repo_area area, enum repo_op op,
			     int versioned)
{
	switch (op) {
	case REPO_OP_READ:
		return CONFIG_READ;
	case REPO_OP_LABEL:
		return CONFIG_UPLOAD;
	case REPO_OP_REMOVE:
		if (versioned)
			return CONFIG_ADMIN;
		break;
	case REPO_OP_CHANGE:
		break;
	}
	return repo_change_right(area);
}

int repo_rules_need_groups(struct repo *r)
{
	return repo_config(r)->nscopes != 0;
}

int repo_may(struct repo *r, const struct repo_who *who, const char *env,
	     enum config_right right)
{
	struct access_who w = { who->uid, who->gid, who->ngroups,
				who->groups };

	return access_allowed(repo_config(r), r->owner,
			      env && *env ? env : NULL, &w, right);
}

int repo_authorise(struct repo *r, const struct repo_who *who,
		   const char *env, enum config_right right,
		   const char *action, const char *object)
{
	char msg[CMFS_ERR_MSG];

	if (repo_may(r, who, env, right))
		return 0;
	snprintf(msg, sizeof(msg), "uid %u may not %s here (%s right)",
		 (unsigned)who->uid, action, config_right_name(right));
	repo_refused(r, who, env && *env ? env : NULL, action, object,
		     -EACCES, msg);
	return -EACCES;
}

int repo_refuse_change(struct repo *r, const struct repo_who *who,
		       const char *env, enum repo_area area, const char *path,
		       const char *name, const char *action)
{
	char msg[CMFS_ERR_MSG];
	int rc = area == REPO_AREA_FIXED ? -EROFS : -EPERM;

	snprintf(msg, sizeof(msg), "%s%s%s: %s", path, name ? "/" : "",
		 name ? name : "",
		 rc == -EROFS ? "read-only: versions, resolved files and "
				"events cannot be changed"
			      : "not possible here");
	repo_refused(r, who, env && *env ? env : NULL, action,
		     name ? name : path, rc, msg);
	return rc;
}

int repo_may_change(struct repo *r, const struct repo_who *who,
		    const char *env, enum repo_area area, int dir)
{
	if (area == REPO_AREA_ROOT)
		return 0;
	if (area == REPO_AREA_FIXED && !dir)
		return -EROFS;
	return repo_may(r, who, env, repo_change_right(area)) ? 0 : -EACCES;
}

int repo_reads_limited(struct repo *r, const char *env)
{
	const struct config *cfg = repo_config(r);
	const struct config_scope *e = config_scope_env(cfg, env);
	const struct config_scope *g = config_scope_global(cfg);

	return (e && e->who[CONFIG_READ].set) || (g && g->who[CONFIG_READ].set);
}

/* The refusal of `size` bytes for `name`, over `limit` (the ini key
 * `key`): -EFBIG. */
static int too_big(struct repo *r, const struct repo_who *who,
		   const char *env, const char *name, const char *action,
		   uint64_t size, uint64_t limit, const char *key)
{
	char msg[CMFS_ERR_MSG];

	snprintf(msg, sizeof(msg),
		 "%s: %llu bytes is over the limit of %llu ([limits] %s)",
		 name, (unsigned long long)size, (unsigned long long)limit,
		 key);
	repo_refused(r, who, env && *env ? env : NULL, action, name, -EFBIG,
		     msg);
	return -EFBIG;
}

int repo_scratch_fits(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, const char *action,
		      uint64_t size)
{
	uint64_t limit = repo_config(r)->limits.scratch_size;

	return size > limit ? too_big(r, who, env, name, action, size, limit,
				      "max_scratch_size")
			    : 0;
}

int repo_upload_truncate_refused(struct repo *r, const struct repo_who *who,
				 const char *env, const char *name,
				 uint64_t size, int rc)
{
	char msg[CMFS_ERR_MSG];

	if (rc == -EFBIG)
		return too_big(r, who, env, name, "truncate", size,
			       repo_config(r)->limits.artifact_size,
			       "max_artifact_size");
	snprintf(msg, sizeof(msg), "%s: truncating to %llu bytes failed: %s",
		 name, (unsigned long long)size, strerror(-rc));
	repo_refused(r, who, env, "truncate", name, rc, msg);
	return rc;
}

int repo_art_truncate(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name, uint64_t size,
		      struct cmfs_err *err)
{
	struct repo_upload *u;
	int rc = repo_upload_begin(&u, r, env, name, size == 0, err);

	if (rc)
		return rc;
	rc = repo_upload_truncate(u, (off_t)size);
	if (rc)
		repo_upload_truncate_refused(r, who, env, name, size, rc);
	else
		rc = repo_upload_commit(u, who, NULL, err);
	repo_upload_free(u);
	return rc;
}

size_t repo_table_text_cap(struct repo *r)
{
	return repo_config(r)->limits.ddl_size;
}

int repo_create_refused(struct repo *r, const struct repo_who *who,
			const char *env, enum repo_area area,
			const char *name)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	int rc;

	if (area == REPO_AREA_ARTIFACTS)
		rc = name_artifact_check(name, &err);
	else
		rc = cmfs_err_set(&err, -EINVAL,
				  "%.200s: not a table file (<table>.sql) "
				  "nor a scratch name", name);
	if (!rc)
		rc = cmfs_err_set(&err, -EINVAL, "%.200s: bad name", name);
	repo_refused(r, who, env, "create", name, rc, cmfs_err_msg(&err));
	return rc;
}

int repo_rename_refused(struct repo *r, const struct repo_who *who,
			const char *env, const char *name)
{
	repo_refused(r, who, env, "rename", name, -EINVAL,
		     "not a valid name here");
	return -EINVAL;
}

int repo_link_refused(struct repo *r, const struct repo_who *who,
		      const char *env, const char *name)
{
	repo_refused(r, who, env && *env ? env : NULL, "link", name, -EPERM,
		     "links are not supported");
	return -EPERM;
}

int repo_table_doomed(size_t len)
{
	return len ? 0 : -EINVAL;
}

int repo_table_write_failed(struct repo *r, const struct repo_who *who,
			    const char *env, const char *name, int rc)
{
	repo_refused(r, who, env, "table-write", name, rc,
		     "a write failed (over max_ddl_size), so nothing was "
		     "committed");
	return rc;
}
