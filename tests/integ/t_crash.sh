#!/bin/sh
# kill -9 of the daemon in the middle of a large upload, then remount: the
# previous version is intact, nothing partial is visible, no staging file
# or orphan blob is left, the catalog passes its integrity check.  Also a
# 1 GiB upload end to end.
. "$(dirname "$0")/lib.sh"
mount_cmfs
mkdir "$M/envs/prod"
A=$M/envs/prod/artifacts
cp "$DATA/plain-v1.jar" "$A/big.jar"

# A slow writer: 400 MiB in 1 MiB blocks, killed under it.
dd if=/dev/urandom of="$A/big.jar" bs=1M count=400 status=none 2>/dev/null &
w=$!
i=0
while [ "$(find "$STORE/staging" -type f 2>/dev/null | wc -l)" -eq 0 ] &&
	[ $i -lt 20 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.5
kill -9 "$PID"
wait "$PID" 2>/dev/null
PID=
wait "$w" 2>/dev/null
fusermount3 -uz "$M" 2>/dev/null
mount_cmfs
check "the previous version is intact" cmp "$DATA/plain-v1.jar" "$A/big.jar"
eq "no version was made" "1.jar" "$(ls "$M/envs/prod/versions/big.jar")"
eq "no staging file is left" 0 "$(find "$STORE/staging" -type f | wc -l | tr -d ' ')"
eq "no orphan blob is left" 1 "$(find "$STORE/blobs" -type f | wc -l | tr -d ' ')"
eq "catalog integrity" ok "$(sql 'PRAGMA integrity_check')"
eq "catalog foreign keys" "" "$(sql 'PRAGMA foreign_key_check')"

# A start on a dead mount point unmounts it first.
kill -9 "$PID"
wait "$PID" 2>/dev/null
PID=
errno_is "the dead mount answers ENOTCONN" ENOTCONN open "$A/big.jar"
mount_cmfs
check "a new start recovered the dead mount point" cmp "$DATA/plain-v1.jar" "$A/big.jar"

# 1 GiB.
head -c 1073741824 /dev/urandom >"$T/gig.bin"
check "cp of 1 GiB" cp "$T/gig.bin" "$A/gig.bin"
eq "its SHA-256" "$(sha256sum <"$T/gig.bin" | cut -d' ' -f1)" \
	"$(getfattr --only-values -n user.cmfs.sha256 "$A/gig.bin")"
eq "its size" 1073741824 "$(stat -c %s "$A/gig.bin")"
check "it reads back" cmp "$T/gig.bin" "$A/gig.bin"
rm -f "$T/gig.bin"
finish
