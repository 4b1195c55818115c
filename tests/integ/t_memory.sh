#!/bin/sh
# Memory is bounded: sixteen parallel uploads of a JAR of 200,000 entries
# (each inspection alone holds tens of MiB) keep the daemon under 256 MiB
# at its peak, every upload commits, and the memory goes back after.
. "$(dirname "$0")/lib.sh"
A=$M/envs/prod/artifacts
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
	echo "$NAME: skipped: needs $PY to write the archive"
	rm -rf "$T"
	exit 77
fi

# One archive of 199,990 empty classes; fifteen copies that differ by an
# archive comment (the end record's last field, then the comment's bytes).
"$PY" - "$T/j1.jar" <<'PYEOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
    z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    for i in range(199990):
        z.writestr("c/%x.class" % i, b"")
PYEOF
size=$(stat -c %s "$T/j1.jar")
i=2
while [ $i -le 16 ]; do
	cp "$T/j1.jar" "$T/j$i.jar"
	printf '\002\000' | dd of="$T/j$i.jar" bs=1 seek=$((size - 2)) \
		conv=notrunc 2>/dev/null
	printf '%02d' $i >>"$T/j$i.jar"
	i=$((i + 1))
done

mount_cmfs
mkdir "$M/envs/prod"
i=1
cps=
while [ $i -le 16 ]; do
	cp "$T/j$i.jar" "$A/j$i.jar" 2>"$T/cp$i.err" &
	cps="$cps $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # the pids are words
wait $cps # not the daemon, also a child of this shell
eq "no cp failed" "" "$(cat "$T"/cp*.err)"
eq "sixteen artifacts" 16 "$(ls "$A" | wc -l)"
if [ "${CMFS_BUILD:-build}" != build ]; then
	# A sanitizer's allocator keeps freed memory in quarantine and adds
	# its shadow: the daemon's RSS says nothing of cmfs's own there.
	skip "peak and returned memory: measured in the plain build"
	finish
fi
peak=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$PID/status")
say "daemon peak RSS: $((peak / 1024)) MiB"
check "the peak stays under 256 MiB" test "$peak" -lt $((256 * 1024))
rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$PID/status")
say "daemon RSS after: $((rss / 1024)) MiB"
check "memory goes back after (under 64 MiB)" test "$rss" -lt $((64 * 1024))
cmp -s "$T/j16.jar" "$A/j16.jar"
eq "the bytes of one" 0 $?
finish
