#!/bin/sh
# Limits and bad input: size and count limits (EFBIG/EDQUOT, nothing
# partial left), a full disk (ENOSPC, everything committed intact),
# hostile names in every directory, hostile JARs through the mount.
. "$(dirname "$0")/lib.sh"
INI_EXTRA="[limits]
max_artifact_size = 64K
max_artifacts_per_env = 4
max_tables_per_env = 2
max_ddl_size = 300
max_labels = 2
max_xattr_size = 16
max_scratch_size = 32K"
mount_cmfs
P=$M/envs/prod
A=$P/artifacts
mkdir "$P"

head -c 70000 /dev/urandom >"$T/big"
check_not "an artifact over max_artifact_size is refused" cp "$T/big" "$A/big.bin"
check_not "and nothing of it remains" test -e "$A/big.bin"
eq "EFBIG" EFBIG "$("$SYSC" write "$A/big2.bin" "$(head -c 70000 /dev/zero | tr '\0' x)" 2>&1)"
for i in 1 2 3 4; do printf '%s' "$i" >"$A/a$i.txt"; done
errno_is "a fifth artifact is over the count" EDQUOT write "$A/a5.txt" x
contains "with a message in events" "errno=EDQUOT" "$(last_event prod 'artifact=a5.txt')"
check "a new version of an existing one is fine" sh -c "printf new >'$A/a1.txt'"
setfattr -n user.l1 -v v "$A/a1.txt"
setfattr -n user.l2 -v v "$A/a1.txt"
errno_is "a third label is over the count" EDQUOT setxattr "$A/a1.txt" user.l3 v
errno_is "a 17-byte value is over the size" EFBIG setxattr "$A/a1.txt" user.l1 "aaaaaaaaaaaaaaaaa"
errno_is "a scratch file over its limit" EFBIG write "$A/.scratch" "$(head -c 40000 /dev/zero | tr '\0' x)"
printf "CREATE TABLE t1 (a INT) WITH ('connector' = 'datagen')" >"$P/tables/t1.sql"
printf "CREATE TABLE t2 (a INT) WITH ('connector' = 'datagen')" >"$P/tables/t2.sql"
errno_is "a third table is over the count" EDQUOT write "$P/tables/t3.sql" \
	"CREATE TABLE t3 (a INT) WITH ('connector' = 'datagen')"
errno_is "a DDL over max_ddl_size" EFBIG write "$P/tables/t1.sql" \
	"CREATE TABLE t1 (a INT) WITH ('connector' = 'datagen', 'x' = '$(head -c 300 /dev/zero | tr '\0' y)')"
eq "the previous definition stays" "CREATE TABLE t1 (a INT) WITH ('connector' = 'datagen')" "$(cat "$P/tables/t1.sql")"

# Hostile names.
for dir in artifacts tables; do
	errno_is "$dir: a control character" EINVAL write "$P/$dir/$(printf 'a\001b')" x
	errno_is "$dir: 256 bytes" ENAMETOOLONG write "$P/$dir/$(printf 'n%.0s' $(seq 256))" x
	errno_is "$dir: '..' is the parent" EISDIR write "$P/$dir/.." x
done
errno_is "invalid UTF-8 in an artifact name" EINVAL write "$A/$(printf 'x\377y.jar')" x
errno_is "mkdir with a slash-free bad name" EINVAL mkdir "$M/envs/$(printf 'a\nb')"

# Hostile JARs through the mount: each refused or recorded, none crashes.
INI_EXTRA=
remount_cmfs
errno_is "a name differing only in case is another name" OK write "$A/A1.txt" X
eq "both are there" "a1.txt:new A1.txt:X" "$(printf 'a1.txt:%s A1.txt:%s' "$(cat "$A/a1.txt")" "$(cat "$A/A1.txt")")"
for j in bomb truncated truncated-tail prefixed not-zip empty dup zip64 service-bomb cyclic bad-class; do
	[ -f "$FIX/$j.jar" ] || continue
	cp "$FIX/$j.jar" "$A/h-$j.jar" 2>/dev/null
	rc=$?
	if [ $rc -eq 0 ] && [ "$j" = zip64 ]; then
		eq "a zip64 JAR is read" "connector mongodb com.example.mongodb.MongoDynamicTableFactory" \
			"$(getfattr --only-values -n user.cmfs.factories "$A/h-$j.jar")"
	elif [ $rc -eq 0 ]; then
		contains "$j.jar is recorded with an inspection error" " " \
			"$(getfattr --only-values -n user.cmfs.error "$A/h-$j.jar")"
	else
		contains "$j.jar is refused as not a zip" "not a valid JAR" \
			"$(last_event prod "artifact=h-$j.jar")"
	fi
done
check "the daemon is still there" mountpoint -q "$M"

# A full disk: the store on a small tmpfs.
umount_cmfs
mkdir "$T/small"
if mount -t tmpfs -o size=3M tmpfs "$T/small" 2>/dev/null; then
	STORE=$T/small/store
	mount_cmfs
	mkdir "$P"
	cp "$DATA/plain-v1.jar" "$A/keep.jar"
	head -c 4000000 /dev/urandom >"$T/huge"
	check_not "an upload that fills the disk fails" cp "$T/huge" "$A/huge.bin"
	check_not "and leaves nothing" test -e "$A/huge.bin"
	check "what was committed before is intact" cmp "$DATA/plain-v1.jar" "$A/keep.jar"
	umount_cmfs
	eq "the catalog is intact" ok "$(sql 'PRAGMA integrity_check')"
	mount_cmfs
	check "and readable after a remount" cmp "$DATA/plain-v1.jar" "$A/keep.jar"
	umount_cmfs
	umount "$T/small"
else
	skip "cannot mount a tmpfs for the full-disk test"
fi
finish
