#!/bin/sh
# kill -9 of the daemon in the middle of a large upload, then remount: the
# previous version is intact, nothing partial is visible, no staging file
# or orphan blob is left, the catalog passes its integrity check.  Also a
# 1 GiB upload end to end.
. "$(dirname "$0")/lib.sh"
# Blob files and their sync first (inline blobs, rows of the catalog, at
# the end): no blob is inline.
INI_EXTRA="inline_max = 0"
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

# sync = batch (the default): a kill -9 right after an upload loses
# nothing (the bytes are in the page cache) and takes nothing back.
cp "$DATA/plain-v2.jar" "$A/lib.jar"
kill -9 "$PID"
wait "$PID" 2>/dev/null
PID=
fusermount3 -uz "$M" 2>/dev/null
mount_cmfs
check "kill -9 right after cp: the upload is there" cmp "$DATA/plain-v2.jar" "$A/lib.jar"
check_not "nothing was taken back" grep -q action=recover "$LOG"
# fsync(2) of a file (sync FILE) waits for the store's sync.
cp "$DATA/plain-v1.jar" "$A/lib.jar"
check "sync FILE" sync "$A/lib.jar"
eq "after fsync nothing is left unsynced" 0 "$(sql 'SELECT count(*) FROM unsynced')"
cp "$DATA/plain-v2.jar" "$A/dir.jar"
check "sync DIR" sync "$A"
eq "after fsync of a directory nothing is left unsynced" 0 "$(sql 'SELECT count(*) FROM unsynced')"

# What a power loss before the sync leaves: the catalog has the version,
# the blob is still listed as unsynced, its bytes are torn.  The next
# mount takes that version back and says so.
cp "$DATA/mongodb-v2.jar" "$A/lib.jar"
umount_cmfs
sha=$(sha256sum <"$DATA/mongodb-v2.jar" | cut -d' ' -f1)
sql "INSERT INTO unsynced(sha256) VALUES('$sha')"
truncate -s 100 "$STORE/blobs/$(printf %.2s "$sha")/$sha"
mount_cmfs
eq "the torn version is taken back" "1.jar 2.jar" \
	"$(ls "$M/envs/prod/versions/lib.jar" | tr '\n' ' ' | sed 's/ $//')"
check "the latest is the one before" cmp "$DATA/plain-v1.jar" "$A/lib.jar"
contains "events says why" 'action=recover artifact=lib.jar version=3 reason="its bytes are torn' \
	"$(cat "$M/envs/prod/events")"
contains "so does the daemon log" "action=recover artifact=lib.jar" "$(cat "$LOG")"
eq "the list is empty" 0 "$(sql 'SELECT count(*) FROM unsynced')"
cp "$DATA/plain-v2.jar" "$A/lib.jar"
eq "a new upload gets the next number" "1.jar 2.jar 4.jar" \
	"$(ls "$M/envs/prod/versions/lib.jar" | tr '\n' ' ' | sed 's/ $//')"

# sync = close: nothing is ever listed; each close waited for the disk.
INI_EXTRA="inline_max = 0
sync = close"
remount_cmfs
cp "$DATA/plain-v1.jar" "$A/close.jar"
eq "sync = close lists nothing" 0 "$(sql 'SELECT count(*) FROM unsynced')"
check "and the upload reads back" cmp "$DATA/plain-v1.jar" "$A/close.jar"

# Inline blobs (the default for small files) are written in the commit's
# transaction: never listed as unsynced, and a kill -9 right after cp
# loses nothing.
INI_EXTRA=
remount_cmfs
cp "$DATA/mongodb-v2.jar" "$A/small.jar"
eq "an inline blob is never listed unsynced" 0 "$(sql 'SELECT count(*) FROM unsynced')"
kill -9 "$PID"
wait "$PID" 2>/dev/null
PID=
fusermount3 -uz "$M" 2>/dev/null
mount_cmfs
check "kill -9 right after cp of a small file: it is there" \
	cmp "$DATA/mongodb-v2.jar" "$A/small.jar"
eq "its bytes are a row of the catalog, not a file" "1 0" \
	"$(sql "SELECT count(*) FROM inline_blobs WHERE sha256 = '$sha'") $(find "$STORE/blobs" -name "$sha" | wc -l | tr -d ' ')"
check_not "nothing was taken back" grep -q "action=recover artifact=small.jar" "$LOG"

# A start on a dead mount point unmounts it first.
kill -9 "$PID"
wait "$PID" 2>/dev/null
PID=
# Over io_uring (t_uring.sh) the kernel ends the connection only once
# the dead daemon's rings are gone: a request in between is aborted
# (ECONNABORTED), and the next ones find the connection closed.
if grep -q 'io_uring: on' "$LOG"; then
	"$SYSC" open "$A/big.jar" >/dev/null
fi
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
