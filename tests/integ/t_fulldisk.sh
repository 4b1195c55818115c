#!/bin/sh
# Deletes on a full disk: a store on a small tmpfs is filled until uploads
# fail with ENOSPC and nothing is left free; then rm, rm of a version, mv
# and setfattr -x through the mount still work and free space, also after
# a remount on the full disk, and cmfs fsck --repair runs there.  The
# reserve (<store>/reserve) is what gives them room.
. "$(dirname "$0")/lib.sh"
A=$M/envs/prod/artifacts
V=$M/envs/prod/versions
FS=$T/fs
mkdir -p "$FS"
if ! mount -t tmpfs -o size=24m tmpfs "$FS" 2>/dev/null; then
	echo "$NAME: skipped: cannot mount a tmpfs"
	rm -rf "$T"
	exit 77
fi
trap 'umount_quiet; umount "$FS" 2>/dev/null; cleanup' EXIT
umount_quiet() {
	[ -n "$PID" ] || return 0
	fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M" 2>/dev/null
	wait "$PID" 2>/dev/null
	PID=
}
STORE=$FS/store

avail() {
	df -k --output=avail "$FS" | tail -n 1 | tr -d ' '
}

# fill NAME: write zeros to $FS/NAME until the disk is full.
fill() {
	dd if=/dev/zero of="$FS/$1" bs=64k 2>/dev/null
	sync
}

INI_EXTRA="inline_max = 0"
mount_cmfs
mkdir "$M/envs/prod"
check "a reserve is held" test -s "$STORE/reserve"
i=0
full=0
while [ $i -lt 40 ]; do
	i=$((i + 1))
	if ! head -c 2000000 /dev/urandom >"$T/x" ||
		! cp "$T/x" "$A/f$i.bin" 2>"$T/cp.err"; then
		full=1
		break
	fi
done
eq "uploads end with ENOSPC" 1 "$full"
contains "cp says so" "No space left on device" "$(cat "$T/cp.err")"
n=$(sql "SELECT count(*) FROM artifacts")
check "some uploads got in" test "$n" -ge 3
printf 'v2' >"$T/y"
head -c 300000 /dev/urandom >>"$T/y"
cp "$T/y" "$A/f1.bin" 2>/dev/null # a second version, if it fits
setfattr -n user.x -v 1 "$A/f3.bin"
fill filler
eq "the disk is full" 0 "$(avail)"

before=$(sql "SELECT count(*) FROM artifacts")
check "rm of an artifact on a full disk" rm "$A/f2.bin"
check_not "it is gone" test -e "$A/f2.bin"
eq "the catalog lost one artifact" $((before - 1)) \
	"$(sql "SELECT count(*) FROM artifacts")"
contains "events has the delete" "action=delete artifact=f2.bin" \
	"$(last_event prod f2.bin)"
# The blob's blocks come back once it is unlinked (after its sync).
i=0
while [ "$(avail)" -lt 1000 ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
check "space came back" test "$(avail)" -ge 1000

fill filler2
eq "full again" 0 "$(avail)"
check "mv on a full disk" mv "$A/f3.bin" "$A/g3.bin"
check "the new name is there" test -f "$A/g3.bin"
check "setfattr -x on a full disk" setfattr -x user.x "$A/g3.bin"
nv=$(ls "$V/g3.bin" | head -n 1)
check "rm of a version on a full disk" rm "$V/g3.bin/$nv"

# A remount on a full disk, and a delete there.
umount_cmfs
fill filler3
eq "full while unmounted" 0 "$(avail)"
mount_cmfs
check "rm after a remount on a full disk" rm "$A/f4.bin"
check_not "gone after the remount" test -e "$A/f4.bin"
umount_cmfs

# fsck --repair on the full store.
fill filler4
OUT=$("$CMFS" fsck --repair "$STORE" 2>&1)
rc=$?
check "fsck --repair runs on a full disk (exit < 8)" test "$rc" -lt 8
case $OUT in
*"No space"* | *"disk is full"*) fail "fsck: $OUT" ;;
*) pass ;;
esac

# Room again: uploads work and the reserve is taken back.
rm -f "$FS"/filler*
mount_cmfs
check "an upload works again" cp "$T/x" "$A/again.bin"
check "the reserve is back" test -s "$STORE/reserve"
cmp -s "$T/x" "$A/again.bin"
eq "its bytes" 0 $?
finish
