#!/bin/sh
# The smaller points of issue 34, item 8, through a real mount: listings
# have . and ..; mknod(2) of a regular file in artifacts/ makes a file as
# an empty upload would; max_store_size is EDQUOT, as the manual says;
# 320 uploads of the same bytes at once leave one blob; truncate(2) of an
# artifact that has an upload open applies to that upload.
. "$(dirname "$0")/lib.sh"
INI_EXTRA="[limits]
max_store_size = 300K"
mount_cmfs
mkdir "$M/envs/prod"
A=$M/envs/prod/artifacts
V=$M/envs/prod/versions
PY=/usr/bin/python3

# ---- . and .. ------------------------------------------------------------

printf 'x\n' >"$A/a.txt"
for d in "$M" "$M/envs" "$M/envs/prod" "$A" "$V" "$V/a.txt" \
	"$M/envs/prod/tables" "$M/envs/prod/tables/resolved"; do
	eq "ls -a ${d#"$M"}/ has . and .." ". .." \
		"$(ls -a "$d" | head -n 2 | tr '\n' ' ' | sed 's/ $//')"
done

# ---- mknod ---------------------------------------------------------------

mk() { $PY -c 'import os,stat,sys; os.mknod(sys.argv[1], stat.S_IFREG | 0o644)' "$1"; }
check "mknod of artifacts/m.txt succeeds" mk "$A/m.txt"
check "and makes a file" test -f "$A/m.txt"
eq "an empty one" 0 "$(stat -c %s "$A/m.txt")"
eq "version 1, as : > m.txt would" "1.txt" "$(ls "$V/m.txt" | tr '\n' ' ' | sed 's/ $//')"
contains "listed" "m.txt" "$(ls "$A")"
check_not "mknod of it again: it exists" mk "$A/m.txt"
printf 'bytes\n' >>"$A/m.txt"
eq "written after: version 2" "1.txt 2.txt" "$(ls "$V/m.txt" | tr '\n' ' ' | sed 's/ $//')"
# A *.jar: an empty one is no zip archive; mknod makes the upload that
# tar --xattrs fills (labels first, then its bytes).
check "mknod of artifacts/t.jar succeeds" mk "$A/t.jar"
setfattr -n user.team -v data "$A/t.jar"
cat "$DATA/plain-v1.jar" >"$A/t.jar"
check "then written, it is that JAR" cmp "$A/t.jar" "$DATA/plain-v1.jar"
eq "with the label set between" data \
	"$(getfattr --only-values -n user.team "$A/t.jar" 2>/dev/null)"
eq "one version" "1.jar" "$(ls "$V/t.jar" | tr '\n' ' ' | sed 's/ $//')"
check "mknod of a FIFO is refused" sh -c "! mkfifo '$A/f.txt' 2>/dev/null"

# ---- max_store_size: EDQUOT ----------------------------------------------

head -c 200000 /dev/urandom >"$T/r1"
head -c 200000 /dev/urandom >"$T/r2"
check "under the store's size" cp "$T/r1" "$A/s1.bin"
errno_is "over max_store_size: EDQUOT" EDQUOT write "$A/s2.bin" \
	"$(head -c 90000 "$T/r2" | base64 -w0)"
check_not "cp says so" cp "$T/r2" "$A/s2.bin"
contains "with errno=EDQUOT in events" "errno=EDQUOT" \
	"$(last_event prod 'artifact=s2.bin')"
check "the same bytes again cost nothing" cp "$T/r1" "$A/s1copy.bin"
rm "$A/s1.bin" "$A/s1copy.bin"
umount_cmfs

# ---- 320 uploads of the same bytes at once: one blob ---------------------

# shellcheck disable=SC2034 # read by lib.sh
INI_EXTRA=
mount_cmfs
head -c 60000 /dev/urandom >"$T/same.bin"
S=$(sha256sum "$T/same.bin" | cut -c1-64)
# shellcheck disable=SC3045 # dash and bash have it
ulimit -n 4096 2>/dev/null || true
# Every one written before any closes: more than the memory for uploads
# holds (16 MiB), so some are written to files.
$PY - "$A" "$T/same.bin" <<'PY'
import os, sys
d, data = sys.argv[1], open(sys.argv[2], 'rb').read()
fds = []
for i in range(320):
    fd = os.open(f"{d}/same{i}.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    fds.append(fd)
for fd in fds:
    os.close(fd)
PY
sync "$M/envs/prod/events"
eq "320 artifacts" 320 "$(find "$A" -name 'same*' | wc -l | tr -d ' ')"
eq "one blob: a row" 1 "$(sql "SELECT count(*) FROM inline_blobs WHERE sha256 = '$S'")"
eq "and no file" 0 "$(find "$STORE/blobs" -type f -name "$S" | wc -l | tr -d ' ')"
eq "fsck: no second copy" 0 "$("$CMFS" fsck "$STORE" 2>&1 | grep -c 'second copy')"

# ---- truncate(2) of an artifact that has an upload open ------------------

# It applies to that upload, as truncate(2) of a file another process
# has open applies to the file it writes: its descriptor's fstat and
# reads agree, and its close commits the result.
printf 'old bytes\n' >"$A/tr.txt"
out=$($PY - "$A/tr.txt" <<'PY'
import os, sys
p = sys.argv[1]
# Another process truncates by name; made before the file is opened,
# so that it never holds (and closes) the descriptor.
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(w)
    os.read(r, 1)
    os.truncate(p, 25)
    os._exit(0)
os.close(r)
fd = os.open(p, os.O_RDWR | os.O_TRUNC)
os.write(fd, b"0123456789" * 10)
os.write(w, b"x")
os.waitpid(pid, 0)
st = os.fstat(fd).st_size
data = os.pread(fd, 1000, 0)
os.write(fd, b"END")   # at offset 100: a hole after the 25 bytes
os.close(fd)
print(st, len(data), data[:25].decode())
PY
)
eq "the open upload's fstat and reads: 25 bytes" \
	"25 25 0123456789012345678901234" "$out"
eq "its close commits the truncated bytes and the write after" 103 \
	"$(stat -c %s "$A/tr.txt")"
eq "one version for the open upload, none for the truncate" "1.txt 2.txt" \
	"$(ls "$V/tr.txt" | tr '\n' ' ' | sed 's/ $//')"
# Without an upload open, truncate(2) by name is an upload of its own
# (truncate(1) opens the file and truncates that upload: the same).
$PY -c 'import os,sys; os.truncate(sys.argv[1], 4)' "$A/tr.txt"
eq "truncate by name: a version" "1.txt 2.txt 3.txt" \
	"$(ls "$V/tr.txt" | tr '\n' ' ' | sed 's/ $//')"
eq "of 4 bytes" 4 "$(stat -c %s "$A/tr.txt")"

finish
