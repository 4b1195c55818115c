/*
 * name.h - the naming rules of the tree (DESIGN.md, "The tree") and of
 * labels (Kubernetes label syntax).  Pure functions, no state.
 */
#ifndef CMFS_NAME_H
#define CMFS_NAME_H

#include <stddef.h>

#include "err.h"

/* Prefix of label xattrs: user.<label key>. */
#define NAME_XATTR_USER "user."
/* The two CMF labels that say what an artifact is (keys without "user."). */
#define NAME_LABEL_TYPE "cmf.confluent.io/sql-artifact-type"
#define NAME_LABEL_IDENT "cmf.confluent.io/sql-artifact-identifier"
/* Reserved computed attributes: user.cmfs.* */
#define NAME_XATTR_CMFS "user.cmfs."

/* [a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?  0 or -EINVAL with a message. */
int name_env_check(const char *s, struct cmfs_err *err);

/* [A-Za-z0-9._-]{1,253}, not starting with '.'.  0 or -EINVAL. */
int name_artifact_check(const char *s, struct cmfs_err *err);

/* 1 if `s` is a scratch name in artifacts/: starts with '.', no '/',
 * not "." or "..", at most 255 bytes, no control characters. */
int name_artifact_scratch(const char *s);

/*
 * If `s` is "<table>.sql" with a valid table name ([A-Za-z0-9_$-]{1,128},
 * not starting with '-'), copy the table name into `out` (at least 129
 * bytes) and return 1; else 0.
 */
int name_table_file(char *out, const char *s);

/* 1 if `s` may name a scratch file in tables/ (any name that is not a
 * table file, "resolved", "." or ".."; no control characters). */
int name_table_scratch(const char *s);

/* Kubernetes label key: [prefix/]name.  0 or -EINVAL with the reason. */
int name_label_key_check(const char *key, struct cmfs_err *err);

/* Kubernetes label value: empty or [A-Za-z0-9]([-A-Za-z0-9_.]{0,61}
 * [A-Za-z0-9])?.  0 or -EINVAL with the reason. */
int name_label_value_check(const char *key, const char *value, size_t len,
			   struct cmfs_err *err);

/* The extension of a version file: the artifact name from its last '.',
 * or "" when there is none (never NULL; points into `name`). */
const char *name_ext(const char *name);

/* 1 if `name` ends in ".jar". */
int name_is_jar(const char *name);

#endif
