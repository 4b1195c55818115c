#!/bin/sh
# Chaos: for a bounded time, from every CPU at once, clients that step on
# each other's names: uploads of the same artifacts (small and over
# inline_max), labels set, read and removed on them, renames back and
# forth, removals of artifacts and versions, listings and stats, reads of
# versions, table writes, renames and removals with their resolved files,
# scratch files, environments made and removed.  Nothing is checked while
# it runs; after it: the mount still answers, the daemon stopped cleanly
# with no sanitizer report (lib.sh), and cmfs fsck finds the store clean.
# The races it found are regression tests of their own in t_stress.
# shellcheck disable=SC2016 # the clients' scripts expand their own variables
. "$(dirname "$0")/lib.sh"
SECONDS_PER_RUN=${CHAOS_SECONDS:-12}
NCPU=$(getconf _NPROCESSORS_ONLN)
[ "$NCPU" -le 4 ] || NCPU=4

mount_cmfs
E=$M/envs/e
A=$E/artifacts
V=$E/versions
TB=$E/tables
mkdir "$E"
head -c 2000 /dev/urandom >"$T/small"
head -c 90000 /dev/urandom >"$T/large"
cp "$T/small" "$A/x.bin"
cp "$FIX/mongodb.jar" "$A/j.jar"
END=$(($(date +%s) + SECONDS_PER_RUN))
export A V TB END T FIX M

# chaos CPU SCRIPT: run SCRIPT in a loop on CPU until END; its errors are
# expected (names come and go under it).
pids=
chaos() {
	taskset -c "$1" sh -c "while [ \$(date +%s) -lt \$END ]; do $2; done" \
		>/dev/null 2>&1 &
	pids="$pids $!"
}
c=0
while [ "$c" -lt "$NCPU" ]; do
	chaos "$c" 'for n in x y z; do cp "$T/small" "$A/$n.bin"; cp "$T/large" "$A/$n.bin"; done'
	chaos "$c" 'for n in x y z; do setfattr -n user.k -v "v$$" "$A/$n.bin"; getfattr -d "$A/$n.bin"; setfattr -x user.k "$A/$n.bin"; done'
	chaos "$c" 'ls -l "$A" "$V/x.bin" "$V/y.bin"; cat "$V/x.bin/1.bin"; stat "$A"/*.bin'
	chaos "$c" 'mv "$A/x.bin" "$A/w.bin"; mv "$A/w.bin" "$A/x.bin"; rm -f "$A/z.bin"'
	chaos "$c" 'printf "CREATE TABLE t (a INT) WITH ('"'connector' = 'datagen'"');" >"$TB/t.sql"; cat "$TB/t.sql"; printf x >"$TB/.t.swp"; rm -f "$TB/.t.swp" "$TB/t.sql"'
	chaos "$c" 'printf "CREATE TABLE u (a INT) WITH ('"'connector' = 'mongodb'"');" >"$TB/u.sql"; mv "$TB/u.sql" "$TB/v.sql"; cat "$TB/resolved/v.jars" "$TB/resolved/v.sql"; rm -f "$TB/v.sql"'
	chaos "$c" 'cp "$FIX/mongodb.jar" "$A/j.jar"; getfattr -n user.cmfs.factories "$A/j.jar"; rm -f "$V/y.bin/1.bin"; ls "$V/y.bin"'
	chaos "$c" 'mkdir "$M/envs/f$$" && rmdir "$M/envs/f$$"; ls "$M/envs"'
	c=$((c + 1))
done
# shellcheck disable=SC2086 # the list of pids
wait $pids

check "the mount still answers" ls "$A"
check "an upload after it" cp "$T/small" "$A/after.bin"
check "reads back" cmp "$A/after.bin" "$T/small"
check "a label after it" setfattr -n user.team -v after "$A/after.bin"
eq "reads back" after \
	"$(getfattr --only-values -n user.team "$A/after.bin" 2>/dev/null)"
eq "the connector is still usable" connector \
	"$(getfattr --only-values -n user.cmfs.factories "$A/j.jar" 2>/dev/null |
		cut -d' ' -f1)"
umount_cmfs
out=$("$CMFS" fsck "$STORE" 2>&1)
rc=$?
eq "cmfs fsck of the store: clean" 0 "$rc"
[ "$rc" = 0 ] || say "$out"
finish
