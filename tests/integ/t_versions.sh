#!/bin/sh
# versions/: listing, removal of one version, of the last one, of the
# artifact; blobs freed when nothing refers to them.
. "$(dirname "$0")/lib.sh"
mount_cmfs
mkdir "$M/envs/prod"
A=$M/envs/prod/artifacts
V=$M/envs/prod/versions
# Blobs: files of the store, and rows of the catalog (inline blobs, up
# to [store] inline_max, 64K by default).  A freed file goes at the
# store's next sync (sync = batch): fsync(2) of a file under the mount
# (sync FILE) makes it now; a row goes in the transaction that freed it.
files() {
	sync "$M/envs/prod/events"
	find "$STORE/blobs" -type f | wc -l | tr -d ' '
}
rows() {
	sql 'SELECT count(*) FROM inline_blobs'
}
blobs() {
	echo $(($(files) + $(rows)))
}

printf 'one\n' >"$A/x.txt"
printf 'two\n' >"$A/x.txt"
printf 'three\n' >"$A/x.txt"
eq "three versions" "1.txt 2.txt 3.txt" "$(ls "$V/x.txt" | tr '\n' ' ' | sed 's/ $//')"
eq "three blobs" 3 "$(blobs)"
eq "small ones, in the catalog" "3 0" "$(rows) $(files)"
eq "ls -l of a version shows its own size" 4 "$(stat -c %s "$V/x.txt/2.txt")"
eq "version files are read-only" "-r--r--r--" "$(stat -c %A "$V/x.txt/1.txt")"
errno_is "a version name that does not exist" ENOENT open "$V/x.txt/9.txt"
errno_is "a version name that is not a number" ENOENT open "$V/x.txt/latest"
errno_is "renaming a version" EROFS rename "$V/x.txt/1.txt" "$V/x.txt/5.txt"
errno_is "setting a label on a version" EROFS setxattr "$V/x.txt/1.txt" user.a b

rm "$V/x.txt/3.txt"
eq "removing the latest makes 2 the latest" two "$(cat "$A/x.txt")"
eq "its blob is freed" 2 "$(blobs)"
contains "the removal is in events" "action=delete-version" "$(last_event prod 'version=3')"
printf 'four\n' >"$A/x.txt"
eq "a version number is never reused" "1.txt 2.txt 4.txt" "$(ls "$V/x.txt" | tr '\n' ' ' | sed 's/ $//')"

# Shared blobs: two artifacts with the same bytes.
printf 'one\n' >"$A/y.txt"
eq "identical bytes share one blob" 3 "$(blobs)"
rm "$A/x.txt"
check_not "rm of the artifact removes it" test -e "$A/x.txt"
check_not "and its versions directory" test -e "$V/x.txt"
eq "the shared blob stays for y.txt" 1 "$(blobs)"
eq "y.txt reads" one "$(cat "$A/y.txt")"
rm "$V/y.txt/1.txt"
check_not "removing the last version removes the artifact" test -e "$A/y.txt"
eq "no blob is left" 0 "$(blobs)"

# A blob bigger than inline_max is a file; freed like the others.
head -c 100000 /dev/urandom >"$T/big.bin"
cp "$T/big.bin" "$A/big.bin"
printf 'small\n' >"$A/big.bin"
eq "a big blob is a file, a small one a row" "1 1" "$(files) $(rows)"
check "the big version reads back" cmp "$T/big.bin" "$V/big.bin/1.bin"
rm "$V/big.bin/1.bin"
eq "its file is freed" "0 1" "$(files) $(rows)"
rm "$A/big.bin"
eq "and the row with the last version" "0 0" "$(files) $(rows)"
errno_is "rm of a missing artifact" ENOENT unlink "$A/nothing.jar"

# Rename of an artifact keeps its versions and labels.
printf 'a\n' >"$A/old.txt"
printf 'b\n' >"$A/old.txt"
setfattr -n user.k -v v "$A/old.txt"
check "mv renames an artifact" mv "$A/old.txt" "$A/new.txt"
eq "with its versions" "1.txt 2.txt" "$(ls "$V/new.txt" | tr '\n' ' ' | sed 's/ $//')"
eq "and its labels" v "$(getfattr --only-values -n user.k "$A/new.txt")"
check_not "the old name is gone" test -e "$A/old.txt"
errno_is "renaming to a .jar name needs zip archives" EINVAL rename "$A/new.txt" "$A/new.jar"

# A removed artifact's version names never name anything again: the
# new artifact of that name numbers on, and the old numbers are gone,
# also from the kernel's cache once its second for them is up.
printf 'p\n' >"$A/gone.txt"
printf 'q\n' >"$A/gone.txt"
stat "$V/gone.txt/1.txt" >/dev/null
rm "$A/gone.txt"
printf 'r\n' >"$A/gone.txt"
sleep 1.2
eq "numbered after the removed ones" 3.txt "$(ls "$V/gone.txt")"
check_not "the old numbers are gone" stat "$V/gone.txt/1.txt"

# And a mount whose artifacts come and go does not keep every version
# name it ever showed: versions/<name> of a new artifact of that name
# is a new inode, so a listing that shows it makes the kernel drop the
# old one with what it held under it, and forget them (counted in the
# kernel's cache of FUSE inodes, where /proc/slabinfo shows it; mv goes
# the same way as rm).  (The new inode's number may be the old one's:
# the daemon may have reused its memory once the kernel forgot it.)
slab() { awk '$1 == "fuse_inode" { print $2 }' /proc/slabinfo 2>/dev/null; }
churn() {
	for a in 0 1 2 3 4 5 6 7 8 9; do
		printf '%s %s\n' "$1" $a >"$A/c$a.txt"
		printf '%s %s b\n' "$1" $a >"$A/c$a.txt"
	done
	find "$V" >/dev/null
	for a in 0 1 2 3 4; do rm "$A/c$a.txt"; done
	for a in 5 6 7 8 9; do mv "$A/c$a.txt" "$A/m$a.txt"; rm "$A/m$a.txt"; done
}
if [ -n "$(slab)" ]; then
	churn 1
	sleep 0.5
	before=$(slab)
	r=2
	while [ $r -le 41 ]; do
		churn $r
		r=$((r + 1))
	done
	find "$V" >/dev/null
	sleep 0.5
	after=$(slab)
	check "10 artifacts that come and go 40 times leave no version names \
in the kernel ($before -> $after FUSE inodes)" test $((after - before)) -lt 300
else
	skip "the kernel's FUSE inodes: /proc/slabinfo lists no fuse_inode"
fi

remount_cmfs
eq "versions survive a remount" "1.txt 2.txt" "$(ls "$V/new.txt" | tr '\n' ' ' | sed 's/ $//')"
finish
