#!/bin/sh
# The request loop: libfuse's multithreaded loop (fs/main.c) with the
# knobs of the command line.  Four clients at once upload, list and read
# back small files through the default mount, through one limited to two
# threads of which one stays idle (-o max_threads=2,max_idle_threads=1),
# and through one with a device per thread (-o clone_fd); and -s still
# serves in one thread.  No mount logs libfuse's complaint about a loop
# setting it was handed.
. "$(dirname "$0")/lib.sh"

head -c 5000 /dev/urandom >"$T/small.bin"

# clients ENV: four processes at once, each copying 20 files into ENV and
# reading them back; each writes "ok" to $T/c<i> when all came back whole.
# (Waited for by pid: the daemon is a child of this shell too.)
clients() {
	mkdir "$M/envs/$1"
	pids=
	for i in 1 2 3 4; do
		(
			a=$M/envs/$1/artifacts
			k=0
			while [ $k -lt 20 ]; do
				cp "$T/small.bin" "$a/c$i-$k.bin" || exit 1
				k=$((k + 1))
			done
			ls "$a" >/dev/null || exit 1
			k=0
			while [ $k -lt 20 ]; do
				cmp -s "$T/small.bin" "$a/c$i-$k.bin" || exit 1
				k=$((k + 1))
			done
			echo ok >"$T/c$i"
		) &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p"; done
}

# served WHAT ENV: the four clients' files all came back, and are listed.
served() {
	eq "$1: every client's files came back" "ok ok ok ok" \
		"$(cat "$T/c1" "$T/c2" "$T/c3" "$T/c4" 2>/dev/null | tr '\n' ' ' |
			sed 's/ $//')"
	eq "$1: 80 files listed" 80 \
		"$(find "$M/envs/$2/artifacts" -type f | wc -l | tr -d ' ')"
	rm -f "$T"/c?
}

mount_cmfs
clients a
served "default loop" a
umount_cmfs

MOUNT_OPTS="-o allow_other,max_threads=2,max_idle_threads=1" mount_cmfs
clients b
served "max_threads=2, max_idle_threads=1" b
umount_cmfs

MOUNT_OPTS="-o allow_other,clone_fd" mount_cmfs
clients c
served "clone_fd" c
umount_cmfs

MOUNT_OPTS="-o allow_other -s" mount_cmfs
clients d
served "one thread (-s)" d
umount_cmfs

check_not "no complaint about the loop's settings" \
	grep -q "Ignoring invalid" "$LOG"
finish
