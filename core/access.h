/*
 * access.h - the access rules: who may read, upload, write tables and
 * administer, globally ([access]) and per environment ([env.<name>]).
 *
 * A right is decided for a caller (uid, gid, supplementary groups) in an
 * environment (or none, for the envs/ directory itself):
 *  - the environment's list for that right, when [env.<name>] gives one;
 *  - else the [access] list, when given;
 *  - else the default: the mounting user holds every right, everyone else
 *    may read;
 *  - and whoever holds `admin` there holds read, upload and write_tables
 *    there too (CMF's roles).  Creating or removing environment <e> is
 *    `admin` of <e>: [env.<e>]'s list when it gives one.
 * The mounting user and root... are not special beyond the default: a
 * rule that leaves them out leaves them out.
 */
#ifndef CMFS_ACCESS_H
#define CMFS_ACCESS_H

#include <stddef.h>
#include <sys/types.h>

#include "config.h"

struct access_who {
	uid_t uid;
	gid_t gid;
	size_t ngroups;
	const gid_t *groups;	/* supplementary groups, borrowed */
};

/*
 * 1 if `who` holds `right` in `env` (NULL: outside any environment) under
 * `cfg`, where `owner` is the uid that mounted.
 */
int access_allowed(const struct config *cfg, uid_t owner, const char *env,
		   const struct access_who *who, enum config_right right);

#endif
