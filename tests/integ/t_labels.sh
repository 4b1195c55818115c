#!/bin/sh
# Labels as user.* xattrs: Kubernetes syntax, getfattr -d lists exactly
# the labels, computed attributes, reserved and foreign namespaces.
. "$(dirname "$0")/lib.sh"
mount_cmfs
mkdir "$M/envs/prod"
A=$M/envs/prod/artifacts
F=$A/lib.jar
cp "$DATA/plain-v1.jar" "$F"

check "setfattr of a label" setfattr -n user.team -v data "$F"
check "a prefixed key" setfattr -n user.example.com/owner -v alice "$F"
eq "getfattr -d lists exactly the labels" \
	"user.example.com/owner=\"alice\" user.team=\"data\"" \
	"$(getfattr -d "$F" 2>/dev/null | grep '^user' | tr '\n' ' ' | sed 's/ $//')"
check "an empty value is a valid label" setfattr -n user.empty -v "" "$F"
errno_is "a value with a space" EINVAL setxattr "$F" user.team "a b"
errno_is "a value of 64 characters" EINVAL setxattr "$F" user.team "$(printf 'v%.0s' $(seq 64))"
errno_is "a key starting with a dash" EINVAL setxattr "$F" user.-x v
errno_is "an upper-case prefix" EINVAL setxattr "$F" user.Example.com/x v
contains "a bad label is in events" "errno=EINVAL" "$(last_event prod 'action=label')"
errno_is "sql-artifact-type takes connector or format" EINVAL \
	setxattr "$F" user.cmf.confluent.io/sql-artifact-type catalog
errno_is "user.cmfs.* is reserved" EPERM setxattr "$F" user.cmfs.version 9
errno_is "user.cmfs.* cannot be removed" EPERM removexattr "$F" user.cmfs.sha256
errno_is "trusted.* is not supported" EOPNOTSUPP setxattr "$F" trusted.x y
errno_is "security.* reads as no data" ENODATA getxattr "$F" security.capability
errno_is "system.posix_acl_access reads as no data" ENODATA getxattr "$F" system.posix_acl_access
errno_is "XATTR_CREATE on an existing label" EEXIST setxattr "$F" user.team x create
errno_is "XATTR_REPLACE on a missing label" ENODATA setxattr "$F" user.none x replace
errno_is "removexattr of a missing label" ENODATA removexattr "$F" user.none
check "setfattr -x removes a label" setfattr -x user.empty "$F"
errno_is "it is gone" ENODATA getxattr "$F" user.empty
eq "computed attributes are not listed" "" \
	"$(getfattr -d -m - "$F" 2>/dev/null | grep '^user.cmfs' || true)"
eq "user.cmfs.factories of a JAR without factories is empty" "" \
	"$(getfattr --only-values -n user.cmfs.factories "$F")"
contains "user.cmfs.error says why" "no factory service file" \
	"$(getfattr --only-values -n user.cmfs.error "$F")"
errno_is "an unknown computed attribute" ENODATA getxattr "$F" user.cmfs.nothing

cp "$DATA/plain-v2.jar" "$F"
eq "labels carry to a new version" data "$(getfattr --only-values -n user.team "$F")"
eq "labels read on a version file too" data \
	"$(getfattr --only-values -n user.team "$M/envs/prod/versions/lib.jar/1.jar")"
contains "a removed label is in events" "key=empty result=ok" "$(last_event prod 'action=unlabel')"

# Labels on a scratch file move with the rename.
cp "$DATA/plain-v1.jar" "$A/.tmp.upload"
setfattr -n user.team -v scratch "$A/.tmp.upload"
eq "a scratch file holds labels" scratch "$(getfattr --only-values -n user.team "$A/.tmp.upload")"
mv "$A/.tmp.upload" "$A/moved.jar"
eq "they move with the rename" scratch "$(getfattr --only-values -n user.team "$A/moved.jar")"
check_not "the scratch file is gone" test -e "$A/.tmp.upload"

# Directories and events carry no labels.
errno_is "a label on a directory" EOPNOTSUPP setxattr "$A" user.a b
errno_is "no label on events" ENODATA getxattr "$M/envs/prod/events" user.a

remount_cmfs
eq "labels survive a remount" alice "$(getfattr --only-values -n user.example.com/owner "$F")"
eq "the labels in the catalog" 2 "$(sql "SELECT count(*) FROM labels l JOIN artifacts a ON a.id = l.artifact_id WHERE a.name = 'lib.jar'")"
finish
