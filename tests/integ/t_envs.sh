#!/bin/sh
# Environments: mkdir/rmdir, name rules, ENOTEMPTY, persistence.
. "$(dirname "$0")/lib.sh"
mount_cmfs

E=$M/envs
check "the root holds envs/" test -d "$E"
eq "ls of the root" "envs" "$(ls "$M")"
errno_is "mkdir envs/prod" OK mkdir "$E/prod"
eq "an environment holds its four names" "artifacts events tables versions" \
	"$(ls "$E/prod" | tr '\n' ' ' | sed 's/ $//')"
errno_is "mkdir of an existing environment" EEXIST mkdir "$E/prod"
errno_is "upper case is not an environment name" EINVAL mkdir "$E/Prod"
errno_is "a leading dash is refused" EINVAL mkdir "$E/-x"
errno_is "a trailing dash is refused" EINVAL mkdir "$E/x-"
errno_is "an underscore is refused" EINVAL mkdir "$E/a_b"
long=$(printf 'a%.0s' $(seq 64))
errno_is "64 characters is one too many" EINVAL mkdir "$E/$long"
errno_is "63 characters is fine" OK mkdir "$E/$(printf 'b%.0s' $(seq 63))"
contains "a refused mkdir reaches the daemon log, of no environment" \
	"env=- action=mkdir object=Prod result=refused" \
	"$(grep -F 'object=Prod' "$LOG")"
errno_is "mkdir inside artifacts/ is not possible" EPERM mkdir "$E/prod/artifacts/d"
errno_is "mkdir inside versions/ is read-only" EROFS mkdir "$E/prod/versions/d"
errno_is "mkdir at the root" EPERM mkdir "$M/other"

cp "$DATA/plain-v1.jar" "$E/prod/artifacts/lib.jar"
# glibc sizes a directory's getdents() buffer by its st_blksize, cp and
# cat their reads and writes by a file's (256 KiB: more, and cp maps a
# new buffer for every file).
eq "directories have a page as st_blksize" "4096 4096 4096 4096" \
	"$(stat -c %o "$E" "$E/prod" "$E/prod/artifacts" "$E/prod/versions/lib.jar" | tr '\n' ' ' | sed 's/ $//')"
eq "files have 256 KiB" "262144 262144" \
	"$(stat -c %o "$E/prod/artifacts/lib.jar" "$E/prod/versions/lib.jar/1.jar" | tr '\n' ' ' | sed 's/ $//')"
errno_is "rmdir of an environment holding an artifact" ENOTEMPTY rmdir "$E/prod"
contains "ENOTEMPTY is in events" "errno=ENOTEMPTY" "$(last_event prod rmdir)"
rm "$E/prod/artifacts/lib.jar"
errno_is "rmdir of an empty environment" OK rmdir "$E/prod"
check_not "it is gone" test -e "$E/prod"
errno_is "rmdir of a missing environment" ENOENT rmdir "$E/prod"
errno_is "rmdir of envs/ itself" EPERM rmdir "$M/envs"

mkdir "$E/keep"
remount_cmfs
check "an environment survives a remount" test -d "$E/keep"
eq "and only it, with the 63-character one" 2 "$(ls "$E" | wc -l)"
finish
