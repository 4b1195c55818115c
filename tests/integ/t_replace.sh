#!/bin/sh
# A reader keeps what it opened, under load (issue 34, item 7): while
# other processes stat artifacts/<name> in a tight loop, a reader of it
# that is replaced by a new upload mid-read reads the version it opened,
# whole (sha256 and bytes), and its fstat keeps that version's size; a
# stat or an open after the upload sees the new one.  Through /dev/fuse
# and, where the fuse module offers it, over io_uring (fs/uring.c).
# The same one step at a time: an upload over it, rm and a new upload,
# a rename onto it.  Bounded: REPLACE_ROUNDS rounds (40) per part, and
# at most REPLACE_S seconds (120) for each loop.
. "$(dirname "$0")/lib.sh"
IDHOLD=${IDHOLD:-$TOP/${CMFS_BUILD:-build}/tools/idhold}
ROUNDS=${REPLACE_ROUNDS:-40}
LIMIT=${REPLACE_S:-120}

dd if=/dev/urandom of="$T/big3" bs=64k count=48 2>/dev/null
dd if=/dev/urandom of="$T/big1" bs=64k count=16 2>/dev/null
H3=$(sha256sum <"$T/big3" | cut -c1-64)
H1=$(sha256sum <"$T/big1" | cut -c1-64)
S3=$(stat -c %s "$T/big3")
S1=$(stat -c %s "$T/big1")

# Stat $1 until $T/stop: each stat asks the daemon whenever the kernel
# dropped the attributes, as a replace does.  The name is there all
# along: a failed stat goes to $T/err.
stat_loop() {
	while [ ! -e "$T/stop" ]; do
		stat -c %s "$1" >/dev/null 2>>"$T/err"
	done
}

# Upload big3 and big1 to $1 in turn until $T/stop; errors to $T/err.
upload_loop() {
	while [ ! -e "$T/stop" ]; do
		cp "$T/big3" "$1" 2>>"$T/err"
		cp "$T/big1" "$1" 2>>"$T/err"
	done
}

# One step at a time, with the tools: an open reader of artifacts/<name>
# keeps its version's size, user.cmfs.sha256 and bytes when the name is
# replaced by an upload, by rm and a new upload, or by a rename onto it;
# the name shows the new one.  $1 says which path requests take.
fd3_is() {
	eq "$1: fstat keeps the old size" "$S3" "$(stat -L -c %s /proc/$$/fd/3)"
	eq "$1: user.cmfs.sha256 the old hash" "$H3" \
		"$(getfattr --absolute-names --only-values -n user.cmfs.sha256 /proc/$$/fd/3)"
	check "$1: reads the old bytes" cmp - "$T/big3" <&3
	exec 3<&-
	eq "$1: the name shows the new size" "$S1" "$(stat -c %s "$A/s.bin")"
	check "$1: and reads the new bytes" cmp "$A/s.bin" "$T/big1"
}
steps() {
	cp "$T/big3" "$A/s.bin"
	exec 3<"$A/s.bin"
	cp "$T/big1" "$A/s.bin"
	fd3_is "$1: an upload over it"
	cp "$T/big3" "$A/s.bin"
	exec 3<"$A/s.bin"
	rm "$A/s.bin"
	cp "$T/big1" "$A/s.bin"
	fd3_is "$1: rm and a new upload"
	cp "$T/big3" "$A/s.bin"
	cp "$T/big1" "$A/t.bin"
	exec 3<"$A/s.bin"
	mv "$A/t.bin" "$A/s.bin"
	fd3_is "$1: a rename onto it"
	# Through the upload's own inode, still open after its commit: the
	# inode is its readers'.
	upload_beside
	eq "$1: committed, the upload's inode is still its reader's" "$S3" \
		"$(stat -L -c %s /proc/$$/fd/4)"
	exec 4>&-
	fd3_is "$1: an upload open beside"
	# Its readers gone, the upload's own inode shows the name's latest.
	# The kernel sends a close's RELEASE after close(2) has returned, so
	# the daemon learns of it a moment later: ask again for up to 2 s.
	upload_beside
	exec 3<&-
	i=0
	while [ "$(stat -L -c %s /proc/$$/fd/4)" != "$S1" ] && [ $i -lt 40 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	eq "$1: then the upload's own fstat is the latest" "$S1" \
		"$(stat -L -c %s /proc/$$/fd/4)"
	exec 4>&-
}

# A reader of s.bin (big3) on fd 3, and an upload of big1 on fd 4 that
# has committed (the close of a duplicate flushes) and is still open.
upload_beside() {
	cp "$T/big3" "$A/s.bin"
	exec 3<"$A/s.bin"
	exec 4>"$A/s.bin"
	cat "$T/big1" >&4
	exec 5>&4
	exec 5>&-
}

# The rounds, on a fresh mount; $1 says which path requests take.
rounds() {
	how=$1
	mount_cmfs
	mkdir -p "$M/envs/prod"
	A=$M/envs/prod/artifacts
	rm -f "$T/stop" "$T/err"
	cp "$T/big3" "$A/r.bin"
	steps "$how"
	stat_loop "$A/r.bin" &
	L1=$!
	stat_loop "$A/r.bin" &
	L2=$!

	# Replaced mid-read, each way in turn (smaller, then bigger).
	bad=0
	stale=0
	i=0
	cur=big3
	end=$(($(date +%s) + LIMIT))
	while [ $i -lt "$ROUNDS" ] && [ "$(date +%s)" -lt $end ]; do
		i=$((i + 1))
		if [ $cur = big3 ]; then new=big1 size=$S1; else new=big3 size=$S3; fi
		out=$("$IDHOLD" half "$A/r.bin" "$T/$cur" "cp '$T/$new' '$A/r.bin'")
		if [ "$out" != OK ]; then
			bad=$((bad + 1))
			say "$how: round $i ($cur replaced by $new): $out"
		fi
		got=$(stat -c %s "$A/r.bin")
		if [ "$got" != "$size" ]; then
			stale=$((stale + 1))
			say "$how: round $i: stat after the upload: $got, not $size"
		fi
		cur=$new
	done
	eq "$how: a replaced reader reads what it opened, fstat too ($i rounds)" \
		0 "$bad"
	eq "$how: a stat after the upload sees the new version" 0 "$stale"

	# Whole reads with cat beside a loop of uploads: every read is one
	# version's bytes, whole.
	upload_loop "$A/r.bin" &
	UP=$!
	bad=0
	i=0
	end=$(($(date +%s) + LIMIT))
	while [ $i -lt $((ROUNDS * 5)) ] && [ "$(date +%s)" -lt $end ]; do
		i=$((i + 1))
		# cat, as the issue read it: open, read to the end.
		# shellcheck disable=SC2002
		h=$(cat "$A/r.bin" | sha256sum | cut -c1-64)
		if [ "$h" != "$H1" ] && [ "$h" != "$H3" ]; then
			bad=$((bad + 1))
			say "$how: cat $i: neither version (sha256 $h)"
		fi
	done
	touch "$T/stop"
	wait $UP $L1 $L2
	eq "$how: cat beside uploads reads one version whole ($i reads)" 0 "$bad"
	eq "$how: no stat nor upload failed beside" "" "$(head -n 5 "$T/err")"
	check "$how: and then the latest" cmp "$A/r.bin" "$T/big1"
	umount_cmfs
}

INI_EXTRA='[mount]
io_uring = off'
rounds "/dev/fuse"
INI_EXTRA=
: >"$LOG"

PARAM=/sys/module/fuse/parameters/enable_uring
if [ -w "$PARAM" ]; then
	WAS=$(cat "$PARAM")
	trap 'echo "$WAS" >"$PARAM"; cleanup' EXIT
	echo Y >"$PARAM"
	rounds "io_uring"
	check "io_uring: the rings were used" grep -q "io_uring: on" "$LOG"
	echo "$WAS" >"$PARAM"
else
	skip "io_uring: no $PARAM (Linux 6.14+, CONFIG_FUSE_IO_URING)"
fi

finish
