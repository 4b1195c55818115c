#!/bin/sh
# Versions keep their identity (issue 34, items 4 and 7): an open
# versions/ file shows one version's size, user.cmfs.sha256 and bytes
# through a rename of its artifact and a new upload of the name, under
# load; a version's name is exact; numbers of a name are never reused
# (rm, rename, remount, export and import); a reader of artifacts/<name>
# that is replaced mid-read reads the version it opened, whole; a missing
# blob is EIO with a line in the log.
. "$(dirname "$0")/lib.sh"
IDHOLD=${IDHOLD:-$TOP/${CMFS_BUILD:-build}/tools/idhold}
mount_cmfs
mkdir "$M/envs/prod"
A=$M/envs/prod/artifacts
V=$M/envs/prod/versions
J1=$FIX/mongodb.jar
J2=$DATA/mongodb-v2.jar

# The versions of artifact $1, as ls shows them.
vers() {
	ls "$V/$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}

# ---- an open version through mv and a new upload, under load ----------

# Load beside: uploads, stats and reads of other names, until $T/stop.
load() {
	i=0
	while [ ! -e "$T/stop" ]; do
		i=$((i + 1))
		cp "$J2" "$A/load.jar" 2>/dev/null
		stat "$A/load.jar" "$A/k.jar" "$A/k2.jar" >/dev/null 2>&1
		cat "$V/load.jar/$i.jar" >/dev/null 2>&1
		ls -l "$V/k.jar" "$V/k2.jar" >/dev/null 2>&1
	done
}
load &
LOAD=$!
flips=0
rounds=0
while [ $rounds -lt 100 ]; do
	rounds=$((rounds + 1))
	# Alternate the bytes, so that the sizes differ each round.
	if [ $((rounds % 2)) = 1 ]; then old=$J1 new=$J2; else old=$J2 new=$J1; fi
	cp "$old" "$A/k.jar"
	n=$(vers k.jar | tr ' ' '\n' | tail -n 1)
	out=$("$IDHOLD" ver "$V/k.jar/$n" \
		"mv '$A/k.jar' '$A/k2.jar' && cp '$new' '$A/k.jar'")
	case $out in
	OK) ;;
	*)
		flips=$((flips + 1))
		say "round $rounds: $out"
		;;
	esac
	rm -f "$A/k.jar" "$A/k2.jar"
done
touch "$T/stop"
wait $LOAD
eq "an open version never changes: flips in $rounds rounds" 0 "$flips"

# The same, one step at a time, with the tools.
cp "$J1" "$A/one.jar"
exec 3<"$V/one.jar/1.jar"
S1=$(stat -L -c %s /proc/$$/fd/3)
H1=$(getfattr --absolute-names --only-values -n user.cmfs.sha256 /proc/$$/fd/3)
mv "$A/one.jar" "$A/one2.jar"
cp "$J2" "$A/one.jar"
eq "fstat: the old size" "$S1" "$(stat -L -c %s /proc/$$/fd/3)"
eq "user.cmfs.sha256: the old hash" "$H1" \
	"$(getfattr --absolute-names --only-values -n user.cmfs.sha256 /proc/$$/fd/3)"
check "reads: the old bytes" cmp - "$J1" <&3
exec 3<&-
eq "the new upload is version 2 of one.jar" "2.jar" "$(vers one.jar)"
errno_is "versions/one.jar/1.jar moved with the artifact" ENOENT \
	open "$V/one.jar/1.jar"
check "it is versions/one2.jar/1.jar" cmp "$V/one2.jar/1.jar" "$J1"

# A version removed while open: still its bytes and size, no link.
cp "$J2" "$A/gone.jar"
exec 3<"$V/gone.jar/1.jar"
rm "$A/gone.jar"
eq "removed and open: its size" "$(stat -c %s "$J2")" \
	"$(stat -L -c %s /proc/$$/fd/3)"
eq "removed and open: no link" 0 "$(stat -L -c %h /proc/$$/fd/3)"
check "removed and open: its bytes" cmp - "$J2" <&3
exec 3<&-
errno_is "removed: gone by name" ENOENT open "$V/gone.jar/1.jar"

# The latest, removed while a reader has it open: the same, as for an
# unlinked file.
cp "$J1" "$A/gone2.jar"
exec 3<"$A/gone2.jar"
rm "$A/gone2.jar"
eq "artifacts/: removed and open: its size" "$(stat -c %s "$J1")" \
	"$(stat -L -c %s /proc/$$/fd/3)"
eq "artifacts/: removed and open: no link" 0 "$(stat -L -c %h /proc/$$/fd/3)"
check "artifacts/: removed and open: its bytes" cmp - "$J1" <&3
exec 3<&-
errno_is "artifacts/: removed: gone by name" ENOENT open "$A/gone2.jar"
check_not "not listed" sh -c "ls '$A' | grep -qx gone2.jar"

# ---- exact names ---------------------------------------------------------

printf 'x\n' >"$A/x.bin"
check "versions/x.bin/1.bin" test -f "$V/x.bin/1.bin"
errno_is "another ext" ENOENT open "$V/x.bin/1.jar"
errno_is "trailing letters" ENOENT open "$V/x.bin/1zzz"
errno_is "the ext and more" ENOENT open "$V/x.bin/1.bin.old"
errno_is "a leading zero" ENOENT open "$V/x.bin/01.bin"
errno_is "no ext" ENOENT open "$V/x.bin/1"
errno_is "rm of a near name" ENOENT unlink "$V/x.bin/1.bin.old"
check "still there" test -f "$V/x.bin/1.bin"
printf 'y\n' >"$A/noext"
check "a name without a dot: versions/noext/1" test -f "$V/noext/1"
errno_is "and nothing after it" ENOENT open "$V/noext/1.bin"

# ---- numbers are never reused --------------------------------------------

printf 'r1\n' >"$A/reuse.jar.txt"
printf 'r2\n' >"$A/reuse.jar.txt"
rm "$A/reuse.jar.txt"
printf 'r3\n' >"$A/reuse.jar.txt"
eq "1, 2, rm, 3" "3.txt" "$(vers reuse.jar.txt)"
cp "$J1" "$A/reuse.jar"
cp "$J2" "$A/reuse.jar"
PIN=$V/reuse.jar/2.jar
rm "$A/reuse.jar"
cp "$J1" "$A/reuse.jar"
eq "rm then upload: version 3" "3.jar" "$(vers reuse.jar)"
errno_is "the pinned path names nothing" ENOENT open "$PIN"
# The last version removed takes the name's artifact; numbers go on.
rm "$V/reuse.jar/3.jar"
cp "$J2" "$A/reuse.jar"
eq "after the last version went: 4" "4.jar" "$(vers reuse.jar)"
# Renamed away and back onto a name that had numbers: moved above them.
mv "$A/reuse.jar" "$A/moved.jar"
eq "renamed: the numbers go with the bytes" "4.jar" "$(vers moved.jar)"
cp "$J1" "$A/reuse.jar"
eq "the old name goes on: 5" "5.jar" "$(vers reuse.jar)"
rm "$A/reuse.jar"
mv "$A/moved.jar" "$A/reuse.jar"
eq "back onto its old name: above 5" "6.jar" "$(vers reuse.jar)"
check "6 is what 4 was" cmp "$V/reuse.jar/6.jar" "$J2"
remount_cmfs
rm "$A/reuse.jar"
cp "$J1" "$A/reuse.jar"
eq "after a remount: 7" "7.jar" "$(vers reuse.jar)"
rm "$A/reuse.jar"

# export and import keep it; fsck finds nothing wrong.
umount_cmfs
"$CMFS" export "$STORE" "$T/exp" >/dev/null 2>&1
check "export writes next-versions" grep -q "^reuse.jar 8$" \
	"$T/exp/envs/prod/next-versions"
"$CMFS" import "$T/exp" "$T/store2" >/dev/null 2>&1
"$CMFS" fsck "$T/store2" >/dev/null 2>&1
eq "fsck of the import: clean" 0 "$?"
STORE1=$STORE
STORE=$T/store2
mount_cmfs
cp "$J2" "$A/reuse.jar"
eq "imported: numbers go on at 8" "8.jar" "$(vers reuse.jar)"
umount_cmfs
STORE=$STORE1
mount_cmfs

# ---- a reader of artifacts/<name> replaced mid-read ----------------------

dd if=/dev/urandom of="$T/big3" bs=64k count=48 2>/dev/null
dd if=/dev/urandom of="$T/big1" bs=64k count=16 2>/dev/null
cp "$T/big3" "$A/big.bin"
eq "replaced by a smaller one mid-read: read whole" OK \
	"$("$IDHOLD" half "$A/big.bin" "$T/big3" \
		"cp '$T/big1' '$A/big.bin' && stat '$A/big.bin' >/dev/null")"
check "the new bytes are the latest" cmp "$A/big.bin" "$T/big1"
eq "replaced by a bigger one mid-read: read whole" OK \
	"$("$IDHOLD" half "$A/big.bin" "$T/big1" \
		"cp '$T/big3' '$A/big.bin' && stat '$A/big.bin' >/dev/null")"
check "and a reader after reads the new" cmp "$A/big.bin" "$T/big3"
eq "stat says the latest size" "$(stat -c %s "$T/big3")" \
	"$(stat -c %s "$A/big.bin")"
# Twice more, with a reader of the new bytes beside the old one.
eq "an old reader and a new one" OK \
	"$("$IDHOLD" half "$A/big.bin" "$T/big3" \
		"cp '$T/big1' '$A/big.bin' && cmp '$A/big.bin' '$T/big1'")"
check "the new reader had the new bytes" cmp "$A/big.bin" "$T/big1"

# ---- cmfs export of a mounted store, with deletes beside it ------------

# Blob files (over inline_max), so that a delete frees a file the export
# reads; the export's snapshot keeps them all.
mkdir "$M/envs/exp"
E=$M/envs/exp/artifacts
i=0
while [ $i -lt 120 ]; do
	i=$((i + 1))
	{ printf '%s\n' "$i"; head -c 70000 "$T/big3"; } >"$E/f$i.bin"
done
n_ok=0
round=0
while [ $round -lt 3 ]; do
	round=$((round + 1))
	"$CMFS" export "$STORE" "$T/exp$round" >"$T/exp$round.out" 2>&1 &
	EXP=$!
	# Delete while it runs, from the end (it exports in name order).
	i=121
	while kill -0 $EXP 2>/dev/null && [ $i -gt 1 ]; do
		i=$((i - 1))
		rm -f "$E/f$i.bin"
		sync "$M/envs/exp/events"
	done
	if wait $EXP; then n_ok=$((n_ok + 1)); else say "$(cat "$T/exp$round.out")"; fi
	kept=$((i - 1)) # f1 .. f$kept were there all along
	# What was deleted comes back for the next round.
	j=$i
	while [ $j -le 120 ]; do
		{ printf '%s\n' "$j"; head -c 70000 "$T/big3"; } >"$E/f$j.bin"
		j=$((j + 1))
	done
done
eq "export beside deletes: every round succeeds" 3 "$n_ok"
# Every version an export lists, whole (the last round's: deleted ones
# included, read from where the mount retired them).
bad=0
nexp=0
for d in "$T"/exp3/envs/exp/artifacts/*/*/; do
	f=$(basename "$(dirname "$d")")
	i=${f#f}
	i=${i%.bin}
	{ printf '%s\n' "$i"; head -c 70000 "$T/big3"; } >"$T/want"
	cmp -s "$d$f" "$T/want" || bad=$((bad + 1))
	nexp=$((nexp + 1))
done
eq "an export holds the bytes of what it lists ($nexp)" 0 "$bad"
check "what was there all along is in it" test "$nexp" -ge "$kept"
sync "$M/envs/exp/events"
sleep 2
eq "the retired blobs are reaped after" 0 \
	"$(find "$STORE/staging" -name 'freed-*' | wc -l | tr -d ' ')"

# ---- a missing blob is EIO, with a line in the log -----------------------

cp "$T/big3" "$A/lost.bin"
S=$(sha256sum "$T/big3" | cut -c1-64)
sync "$A/lost.bin"
rm -f "$STORE/blobs/$(printf '%.2s' "$S")/$S"
errno_is "a read of a version whose blob is missing" EIO read "$A/lost.bin"
errno_is "through versions/ too" EIO read "$V/lost.bin/1.bin"
check "the daemon log says so" grep -q "blob $S is missing from the store" "$LOG"
errno_is "a write that copies it" EIO append "$A/lost.bin" x
rm "$A/lost.bin"

finish
