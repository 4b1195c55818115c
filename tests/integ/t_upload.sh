#!/bin/sh
# Uploads through every ordinary path, versions, dedup, copy-on-write,
# zip checks, refusals and their events, ls -l and stat.
. "$(dirname "$0")/lib.sh"
mount_cmfs
mkdir "$M/envs/prod"
A=$M/envs/prod/artifacts
V=$M/envs/prod/versions
V1=$DATA/plain-v1.jar
V2=$DATA/plain-v2.jar

cp "$V1" "$A/lib.jar"
check "cp makes version 1" cmp "$V1" "$V/lib.jar/1.jar"
check "the artifact reads as version 1" cmp "$V1" "$A/lib.jar"
eq "the size shows in ls -l" "$(stat -c %s "$V1")" "$(stat -c %s "$A/lib.jar")"
eq "the uploader owns it" 0 "$(stat -c %u "$A/lib.jar")"
cp "$V1" "$A/lib.jar"
eq "the same bytes again make no version" "1.jar" "$(ls "$V/lib.jar")"
contains "the idempotent upload is in events" "unchanged=yes" "$(last_event prod lib.jar)"
cp "$V2" "$A/lib.jar"
eq "new bytes make version 2" "1.jar 2.jar" "$(ls "$V/lib.jar" | tr '\n' ' ' | sed 's/ $//')"
check "latest is version 2" cmp "$V2" "$A/lib.jar"
check "version 1 still reads its bytes" cmp "$V1" "$V/lib.jar/1.jar"
eq "user.cmfs.version" 2 "$(getfattr --only-values -n user.cmfs.version "$A/lib.jar")"
eq "user.cmfs.sha256" "$(sha256sum <"$V2" | cut -d' ' -f1)" \
	"$(getfattr --only-values -n user.cmfs.sha256 "$A/lib.jar")"
eq "user.cmfs.version of a version file" 1 \
	"$(getfattr --only-values -n user.cmfs.version "$V/lib.jar/1.jar")"

# Other tools.
cat "$V1" >"$A/cat.jar"
check "cat > uploads" cmp "$V1" "$A/cat.jar"
tee "$A/tee.jar" <"$V1" >/dev/null
check "tee uploads" cmp "$V1" "$A/tee.jar"
dd if="$V1" of="$A/dd.jar" bs=7 status=none
check "dd with small blocks uploads" cmp "$V1" "$A/dd.jar"
install -m 0644 "$V1" "$A/install.jar"
check "install uploads" cmp "$V1" "$A/install.jar"
printf 'hello\n' >"$A/notes.txt"
eq "a non-JAR is stored as it is" hello "$(cat "$A/notes.txt")"
printf 'more\n' >>"$A/notes.txt"
eq "append without truncation is copy-on-write" "hello more" \
	"$(tr '\n' ' ' <"$A/notes.txt" | sed 's/ $//')"
eq "and made version 2" "1.txt 2.txt" "$(ls "$V/notes.txt" | tr '\n' ' ' | sed 's/ $//')"
eq "version 1 is untouched" hello "$(cat "$V/notes.txt/1.txt")"
printf 'X' | dd of="$A/notes.txt" bs=1 seek=1 conv=notrunc status=none
eq "an overwrite in the middle keeps the rest" "hXllo more" \
	"$(tr '\n' ' ' <"$A/notes.txt" | sed 's/ $//')"
truncate -s 2 "$A/notes.txt"
eq "truncate(2) by name is an upload" hX "$(cat "$A/notes.txt")"

# Written through a shared, writable mapping (uploads may bypass FUSE's
# page cache: that must not cost a writer mmap).  The log says which.
eq "the daemon log says how uploads are written" 1 \
	"$(grep -c -E 'uploads: (direct I/O|through FUSE)' "$LOG")"
eq "mmap MAP_SHARED of a new upload" OK "$("$SYSC" mmapw "$A/mapped.jar" "$V1")"
check "its bytes are version 1" cmp "$V1" "$V/mapped.jar/1.jar"
eq "one version" "1.jar" "$(ls "$V/mapped.jar")"
eq "a mapped rewrite of other bytes" OK "$("$SYSC" mmapw "$A/mapped.jar" "$V2")"
check "is version 2" cmp "$V2" "$V/mapped.jar/2.jar"

# rsync -X: a dot-temp file renamed into place.
mkdir "$T/src"
cp "$V1" "$T/src/r.jar"
setfattr -n user.team -v data-platform "$T/src/r.jar"
check "rsync -X uploads" rsync -X "$T/src/r.jar" "$A/"
check "rsync's bytes" cmp "$V1" "$A/r.jar"
eq "rsync's label arrived with the rename" data-platform \
	"$(getfattr --only-values -n user.team "$A/r.jar")"
check "a second rsync -a -X is a no-op" rsync -a -X "$T/src/r.jar" "$A/"
eq "still one version" "1.jar" "$(ls "$V/r.jar")"
eq "no scratch file is left" "" "$(ls -A "$A" | grep '^\.' || true)"

# cp --preserve=xattr and tar --xattrs.
setfattr -n user.owner -v alice "$T/src/r.jar"
check "cp --preserve=xattr" cp --preserve=xattr "$T/src/r.jar" "$A/px.jar"
eq "cp carried the label" alice "$(getfattr --only-values -n user.owner "$A/px.jar")"
check "cp -a works (other namespaces are answered)" cp -a "$T/src/r.jar" "$A/a.jar"
(cd "$T/src" && tar --xattrs -cf "$T/x.tar" r.jar)
mkdir "$T/tarx"
check "tar --xattrs -x into artifacts/" tar --xattrs --xattrs-include='user.*' -xf "$T/x.tar" -C "$A"
eq "tar's label" data-platform "$(getfattr --only-values -n user.team "$A/r.jar")"

# A *.jar must be a zip archive.
printf 'not a zip\n' >"$T/bad"
errno_is "a non-zip *.jar is refused at close" EINVAL write "$A/lib.jar" "not a zip"
check_not "cp reports the refusal" cp "$T/bad" "$A/lib.jar"
check "the previous version is intact" cmp "$V2" "$A/lib.jar"
eq "no version was made" "1.jar 2.jar" "$(ls "$V/lib.jar" | tr '\n' ' ' | sed 's/ $//')"
contains "the refusal is in events" "errno=EINVAL" "$(last_event prod 'artifact=lib.jar')"
contains "and in the daemon log" "not a valid JAR" "$(grep -F 'artifact=lib.jar' "$LOG" | tail -n 1)"
errno_is "a new non-zip *.jar leaves nothing" EINVAL write "$A/new.jar" "xx"
check_not "new.jar does not exist" test -e "$A/new.jar"

# Names.
errno_is "a name with a space" EINVAL write "$A/a b.jar" x
errno_is "a name with a tilde" EINVAL write "$A/a~" x
errno_is "a 254-character name" EINVAL write "$A/$(printf 'n%.0s' $(seq 254))" x
errno_is "a 256-byte name" ENAMETOOLONG write "$A/$(printf 'n%.0s' $(seq 256))" x
errno_is "links are refused" EPERM link "$A/lib.jar" "$A/l2.jar"
errno_is "symlinks are refused" EPERM symlink lib.jar "$A/s.jar"
errno_is "a rename across directories" EXDEV rename "$A/notes.txt" "$M/envs/prod/tables/n.sql"

# Versions are read-only.
errno_is "writing a version file" EROFS open "$V/lib.jar/1.jar" w
errno_is "creating in versions/" EROFS write "$V/lib.jar/9.jar" x
errno_is "writing events" EROFS open "$M/envs/prod/events" w

# stat agrees with reads; chmod/chown/touch change nothing but succeed.
eq "stat size = bytes read" "$(stat -c %s "$A/lib.jar")" "$(wc -c <"$A/lib.jar" | tr -d ' ')"
check "chmod succeeds" chmod 600 "$A/lib.jar"
check "chown succeeds" chown 1:1 "$A/lib.jar"
check "touch succeeds" touch "$A/lib.jar"
eq "and nothing changed" "1.jar 2.jar" "$(ls "$V/lib.jar" | tr '\n' ' ' | sed 's/ $//')"

# Two concurrent uploads of one name each become a complete version.
head -c 3000000 /dev/urandom >"$T/big1"
head -c 3000000 /dev/urandom >"$T/big2"
printf 'first\n' >"$A/conc.bin"
cp "$T/big1" "$A/conc.bin" &
p1=$!
cp "$T/big2" "$A/conc.bin" &
p2=$!
wait $p1
wait $p2
eq "two more versions" "1.bin 2.bin 3.bin" "$(ls "$V/conc.bin" | tr '\n' ' ' | sed 's/ $//')"
h1=$(sha256sum <"$T/big1" | cut -d' ' -f1)
h2=$(sha256sum <"$T/big2" | cut -d' ' -f1)
got=$(sha256sum <"$V/conc.bin/2.bin" | cut -d' ' -f1)$(sha256sum <"$V/conc.bin/3.bin" | cut -d' ' -f1)
case $got in
"$h1$h2" | "$h2$h1") pass ;;
*) fail "concurrent versions are the two complete uploads" ;;
esac

# What the kernel keeps of a name after uploads.  An upload by a create
# of a name the kernel knew nothing of leaves it nothing to drop (cmfs
# does not invalidate then); any other upload invalidates.  Readers see
# the committed bytes, size and version either way.
printf 'one-1111\n' >"$T/k1"
printf 'two-22222222\n' >"$T/k2"
printf 'three-3\n' >"$T/k3"
cp "$T/k1" "$A/kc.txt"
eq "a created upload reads back" one-1111 "$(cat "$A/kc.txt")"
eq "with its size" 9 "$(stat -c %s "$A/kc.txt")"
eq "as version 1" 1 "$(getfattr --only-values -n user.cmfs.version "$A/kc.txt")"
exec 7<"$A/kc.txt"
read -r held <&7
cp "$T/k2" "$A/kc.txt"
eq "an upload over a name in use reads back" two-22222222 "$(cat "$A/kc.txt")"
eq "with its size" 13 "$(stat -c %s "$A/kc.txt")"
eq "as version 2" 2 "$(getfattr --only-values -n user.cmfs.version "$A/kc.txt")"
rm "$A/kc.txt"
cp "$T/k3" "$A/kc.txt"
eq "removed and made again while a reader holds it" three-3 \
	"$(cat "$A/kc.txt")"
eq "with its size" 8 "$(stat -c %s "$A/kc.txt")"
eq "the reader read the first" one-1111 "$held"
exec 7<&-
printf 'x' | dd of="$A/kc.txt" bs=1 seek=2 conv=notrunc 2>/dev/null
eq "a write in place over it (copy-on-write)" thxee-3 "$(cat "$A/kc.txt")"

# A new name's attributes are kept for its creator's fstat (cp makes one
# before it writes): through the open file (/proc/self/fd, as fstat) the
# writes show, and by name the commit; a refused commit leaves no name.
# (Each stat below holds a copy of fd 8, and its close commits: the
# second write is version 2.)
exec 8>"$A/ka.txt"
eq "a created file, before its first write" 0:262144 \
	"$(stat -L -c %s:%o /proc/self/fd/8)"
printf 'hello' >&8
eq "after it" 5 "$(stat -L -c %s /proc/self/fd/8)"
printf ' world' >&8
eq "after another" 11 "$(stat -L -c %s /proc/self/fd/8)"
exec 8>&-
eq "committed: by name" 11:2 \
	"$(stat -c %s "$A/ka.txt"):$(getfattr --only-values -n user.cmfs.version "$A/ka.txt")"
exec 8>"$A/kbad.jar"
eq "a created jar, before its first write" 0 \
	"$(stat -L -c %s /proc/self/fd/8)"
printf 'not a zip archive' >&8
exec 8>&-
errno_is "its refused commit leaves no name" ENOENT open "$A/kbad.jar"

remount_cmfs
check "everything survives a remount" cmp "$V2" "$A/lib.jar"
eq "labels survive" alice "$(getfattr --only-values -n user.owner "$A/px.jar")"
eq "catalog integrity" ok "$(sql 'PRAGMA integrity_check')"
finish
