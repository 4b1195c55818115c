#!/bin/sh
# Two hosts on one PostgreSQL catalog: two daemons, two mount points, two
# stores (each host's copies of the blobs), one database (pg.sh).  What
# one host commits shows on the other within a second (LISTEN/NOTIFY);
# uploads of one artifact from both get distinct numbers; a host killed
# mid-upload and a server restart leave the other and the catalog whole.
# Skips only without PostgreSQL's binaries.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg.sh"
pg_start

two_hosts
mount_cmfs

M2=$T/mnt2
STORE2=$T/store2
LOG2=$T/daemon2.log
PID2=
mkdir -p "$M2"

# Host B, as mount_cmfs mounts host A.
mount_b() {
	check "host B mounts beside A" mount_second "$T/b.ini" "$M2" "$LOG2"
}

umount_b() {
	umount_second "$M2"
}

# within DESC CMD...: CMD succeeds within a second (polled every 20 ms).
within() {
	d=$1
	shift
	i=0
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 50 ]; then
			fail "$d (not within a second)"
			return
		fi
		sleep 0.02
	done
	pass
}

# has_value FILE ATTR VALUE: the attribute of FILE is VALUE.
has_value() {
	[ "$(getfattr --only-values -n "$2" "$1" 2>/dev/null)" = "$3" ]
}

# factories_name FILE NEEDLE: user.cmfs.factories of FILE mentions it.
factories_name() {
	getfattr --only-values -n user.cmfs.factories "$1" 2>/dev/null |
		grep -q "$2"
}

# same_text EXPECTED FILE
same_text() {
	[ "$(cat "$2" 2>/dev/null)" = "$1" ]
}

mount_b
PA=$M/envs/prod
PB=$M2/envs/prod
TYPE=user.cmf.confluent.io/sql-artifact-type
IDENT=user.cmf.confluent.io/sql-artifact-identifier

# An environment made on A.
stat "$PB" >/dev/null 2>&1 # (a negative entry B's kernel may keep)
mkdir "$PA"
within "an environment made on A shows on B" test -d "$PB/artifacts"

# An upload on A, with its labels: readable on B, with them.
stat "$PB/artifacts/mongodb-connector.jar" >/dev/null 2>&1
cp "$FIX/mongodb.jar" "$PA/artifacts/mongodb-connector.jar"
setfattr -n $TYPE -v connector "$PA/artifacts/mongodb-connector.jar"
setfattr -n $IDENT -v mongodb "$PA/artifacts/mongodb-connector.jar"
within "an upload on A reads back on B" cmp "$FIX/mongodb.jar" "$PB/artifacts/mongodb-connector.jar"
within "with its labels" has_value "$PB/artifacts/mongodb-connector.jar" $IDENT mongodb
within "and user.cmfs.factories" factories_name "$PB/artifacts/mongodb-connector.jar" mongodb

# A table written on B, resolved on A.
cat "$PA/tables/resolved/orders.jars" >/dev/null 2>&1
cp "$TOP/tests/ddl/valid/004-mongodb-orders.sql" "$PB/tables/orders.sql"
within "a table written on B resolves on A" same_text "$PA/versions/mongodb-connector.jar/1.jar" "$PA/tables/resolved/orders.jars"
eq "and on B" "$PB/versions/mongodb-connector.jar/1.jar" "$(cat "$PB/tables/resolved/orders.jars")"

# A new version on A: B's resolution and latest bytes follow.
cp "$DATA/mongodb-v2.jar" "$PA/artifacts/mongodb-connector.jar"
within "a new version on A re-resolves B's table" same_text "$PB/versions/mongodb-connector.jar/2.jar" "$PB/tables/resolved/orders.jars"
within "and B reads the new bytes" cmp "$DATA/mongodb-v2.jar" "$PB/artifacts/mongodb-connector.jar"
check "the old version still reads on B" cmp "$FIX/mongodb.jar" "$PB/versions/mongodb-connector.jar/1.jar"

# Uploads of one artifact from both hosts at once: one number each.
head -c 300000 /dev/urandom >"$T/first.bin"
cp "$T/first.bin" "$PA/artifacts/blob.bin"
within "the first upload shows on B" cmp "$T/first.bin" "$PB/artifacts/blob.bin"
B1=$(sha256sum <"$T/first.bin" | cut -c1-64)
check "B has a copy of its own, from the database" cmp "$T/first.bin" "$STORE2/blobs/$(printf %.2s "$B1")/$B1"
i=0
pids=
while [ $i -lt 6 ]; do
	head -c 300000 /dev/urandom >"$T/r$i.bin"
	if [ $((i % 2)) -eq 0 ]; then d=$PA; else d=$PB; fi
	cp "$T/r$i.bin" "$d/artifacts/blob.bin" &
	pids="$pids $!"
	i=$((i + 1))
done
rcs=
for p in $pids; do
	wait "$p"
	rcs="$rcs$?"
done
eq "six uploads from two hosts at once succeed" 000000 "$rcs"
eq "seven versions, numbered 1 to 7" "1 7 7" "$(pg_sql "SELECT min(v.n), max(v.n), count(DISTINCT v.n) FROM versions v JOIN artifacts a ON a.id = v.artifact_id WHERE a.name = 'blob.bin'" | tr '|' ' ')"
eq "A lists them" 7 "$(ls "$PA/versions/blob.bin" | wc -l | tr -d ' ')"
within "B lists them" test "$(ls "$PB/versions/blob.bin" | wc -l | tr -d ' ')" -eq 7
i=0
while [ $i -lt 6 ]; do
	n=$(pg_sql "SELECT v.n FROM versions v JOIN artifacts a ON a.id = v.artifact_id WHERE a.name = 'blob.bin' AND v.sha256 = '$(sha256sum <"$T/r$i.bin" | cut -c1-64)'")
	if ! cmp -s "$T/r$i.bin" "$PB/versions/blob.bin/$n.bin" ||
		! cmp -s "$T/r$i.bin" "$PA/versions/blob.bin/$n.bin"; then
		fail "upload $i (version $n) reads back on both hosts"
	else
		pass
	fi
	i=$((i + 1))
done

# rm on A: gone on B.
stat "$PB/artifacts/blob.bin" >/dev/null
rm "$PA/artifacts/blob.bin"
within "rm on A shows on B" test ! -e "$PB/artifacts/blob.bin"
eq "and its blobs leave the database" 0 "$(pg_sql "SELECT count(*) FROM blobs WHERE sha256 = '$(sha256sum <"$T/r0.bin" | cut -c1-64)'")"

# A killed mid-upload: B and the catalog as they were.
before=$(pg_sql "SELECT count(*) FROM versions")
chunks=$(pg_sql "SELECT count(*) FROM blob_chunks")
# (cat holds the file open, written, until its input ends: no close, no
# commit.)
(head -c 3000000 /dev/urandom; sleep 3) | cat >"$PA/artifacts/slow.bin" 2>/dev/null &
W=$!
sleep 0.5
kill -9 "$PID"
wait "$PID" 2>/dev/null
PID=
fusermount3 -uz "$M" 2>/dev/null
wait "$W" 2>/dev/null
eq "no version came of the killed upload" "$before" "$(pg_sql "SELECT count(*) FROM versions")"
eq "nor bytes" "$chunks" "$(pg_sql "SELECT count(*) FROM blob_chunks")"
check_not "B has no such artifact" test -e "$PB/artifacts/slow.bin"
check "B reads on" cmp "$DATA/mongodb-v2.jar" "$PB/artifacts/mongodb-connector.jar"
check "B uploads on" cp "$T/r1.bin" "$PB/artifacts/after-kill.bin"
mount_cmfs
within "A, mounted again, reads B's upload" cmp "$T/r1.bin" "$PA/artifacts/after-kill.bin"

# The server restarted while both are mounted: writes fail with EIO, then
# work again on both without a remount, and changes show again.
stat "$PA/artifacts/after-kill.bin" >/dev/null
stat "$PB/artifacts/after-kill.bin" >/dev/null
pg_stop
errno_is "a label on A while the server is down" EIO setxattr "$PA/artifacts/after-kill.bin" user.team data
errno_is "a label on B while the server is down" EIO setxattr "$PB/artifacts/after-kill.bin" user.team data
# Reads of what B holds go on: an artifact it read before (its copy of the
# blob), by its name and by its version.
check "B reads an artifact it holds while the server is down" \
	cmp "$T/r1.bin" "$PB/artifacts/after-kill.bin"
check "and its version" cmp "$T/r1.bin" "$PB/versions/after-kill.bin/1.bin"
contains "B's log says why the label failed" "result=refused errno=EIO" \
	"$(grep "action=label artifact=after-kill.bin key=team value=data" "$LOG2")"
pg_start_again
check "after the restart, a label on A" setfattr -n user.team -v a "$PA/artifacts/after-kill.bin"
check "and one on B" setfattr -n user.owner -v b "$PB/artifacts/after-kill.bin"
i=0
while ! grep -q "every name invalidated" "$LOG2" && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
contains "B says it reconnected and invalidated all" "every name invalidated" "$(cat "$LOG2")"
cp "$T/r2.bin" "$PA/artifacts/after-restart.bin"
within "an upload on A after the restart shows on B" cmp "$T/r2.bin" "$PB/artifacts/after-restart.bin"
within "a label set on B shows on A" has_value "$PA/artifacts/after-kill.bin" user.owner b

# [store] cache_max bounds B's copies: least recently used out first,
# never one that is open; one that went is fetched again, whole.
umount_b
printf '[store]\npath = %s\ncache_max = 700K\n%s\n' "$STORE2" "$INI_EXTRA" >"$T/b.ini"
mount_b
check_not "B's copy of a blob freed on A goes at B's next mount" test -e "$STORE2/blobs/$(printf %.2s "$B1")/$B1"
i=1
while [ $i -le 3 ]; do
	head -c 300000 /dev/urandom >"$T/c$i.bin"
	cp "$T/c$i.bin" "$PA/artifacts/c$i.bin"
	i=$((i + 1))
done
# copy_of N: B's copy of c<N>.bin.
copy_of() {
	h=$(sha256sum <"$T/c$1.bin" | cut -c1-64)
	printf '%s/blobs/%.2s/%s' "$STORE2" "$h" "$h"
}
within "c1 shows on B" cmp "$T/c1.bin" "$PB/artifacts/c1.bin"
exec 3<"$PB/versions/c1.bin/1.bin"
check "c2 reads on B" cmp "$T/c2.bin" "$PB/artifacts/c2.bin"
check "c3 reads on B" cmp "$T/c3.bin" "$PB/artifacts/c3.bin"
check "the open c1, least recently used, stays" test -e "$(copy_of 1)"
check_not "c2 went instead" test -e "$(copy_of 2)"
check "c3 stays" test -e "$(copy_of 3)"
# (sizes from find: a read of the copies would make them recently used)
check "B's copies are within cache_max" test "$(find "$STORE2/blobs" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')" -le 716800
exec 3<&-
sleep 0.5 # (the kernel lets the file go when the daemon has the release)
check "c2, fetched again, reads whole" cmp "$T/c2.bin" "$PB/versions/c2.bin/1.bin"
check_not "and c1, closed now, went" test -e "$(copy_of 1)"
check "c1 read again" cmp "$T/c1.bin" "$PB/artifacts/c1.bin"

umount_b
finish
