/*
 * access.c - deciding a right from the rule lists of the configuration.
 * Names in the lists were checked to exist when the ini was loaded; they
 * are looked up again here (getpwnam/getgrnam), so a user added to a group
 * later counts without a reload.
 */
#include "access.h"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

/* 1 if `who` is in group `g` (primary or supplementary). */
static int in_group(const struct access_who *who, gid_t g)
{
	size_t i;

	if (who->gid == g)
		return 1;
	for (i = 0; i < who->ngroups; i++)
		if (who->groups[i] == g)
			return 1;
	return 0;
}

/* 1 if one entry of a rule list names `who`. */
static int matches(const char *entry, const struct access_who *who)
{
	char buf[1024];
	struct passwd pw, *pp = NULL;
	struct group gr, *gp = NULL;
	char *end;
	unsigned long v;

	if (!strcmp(entry, "*"))
		return 1;
	if (entry[0] == '@') {
		if (getgrnam_r(entry + 1, &gr, buf, sizeof(buf), &gp) || !gp)
			return 0;
		return in_group(who, gp->gr_gid);
	}
	v = strtoul(entry, &end, 10);
	if (*entry && !*end)
		return (uid_t)v == who->uid;
	if (getpwnam_r(entry, &pw, buf, sizeof(buf), &pp) || !pp)
		return 0;
	return pp->pw_uid == who->uid;
}

static int listed(const struct config_who *w, const struct access_who *who)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (matches(w->v[i], who))
			return 1;
	return 0;
}

/* `right` by its own list: the environment's, else [access]'s, else the
 * default. */
static int by_list(const struct config *cfg, uid_t owner, const char *env,
		   const struct access_who *who, enum config_right right)
{
	const struct config_scope *s = env ? config_scope_env(cfg, env) : NULL;

	if (s && s->who[right].set)
		return listed(&s->who[right], who);
	s = config_scope_global(cfg);
	if (s && s->who[right].set)
		return listed(&s->who[right], who);
	return who->uid == owner || right == CONFIG_READ;
}

int access_allowed(const struct config *cfg, uid_t owner, const char *env,
		   const struct access_who *who, enum config_right right)
{
	/* An admin of a place holds every right there, as in CMF's roles. */
	return by_list(cfg, owner, env, who, right) ||
	       (right != CONFIG_ADMIN &&
		by_list(cfg, owner, env, who, CONFIG_ADMIN));
}
