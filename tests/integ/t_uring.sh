#!/bin/sh
# Requests over io_uring (fs/uring.c): with the fuse module's enable_uring
# set, the same work as through /dev/fuse, issued from each CPU in turn
# (each CPU has rings of its own) and from several processes at once: big
# and small uploads, a refused one, labels, listings, a table and its
# resolution, renames and removals, a version read back.  The daemon log
# says the rings were used and how many requests they served; with
# [mount] io_uring = off, or without the module parameter, the mount says
# why not and works through /dev/fuse.
. "$(dirname "$0")/lib.sh"

PARAM=/sys/module/fuse/parameters/enable_uring
if [ ! -w "$PARAM" ]; then
	echo "$NAME: skipped: no $PARAM (Linux 6.14+, CONFIG_FUSE_IO_URING)"
	rm -rf "$T"
	exit 77
fi
WAS=$(cat "$PARAM")
trap 'echo "$WAS" >"$PARAM"; cleanup' EXIT
echo Y >"$PARAM"

NCPU=$(getconf _NPROCESSORS_ONLN)
# per THREADS: the entries each CPU gets, the loop's threads shared out,
# 1 to 4 (fs/uring.c).
per() {
	p=$((($1 + NCPU - 1) / NCPU))
	if [ "$p" -gt 4 ]; then p=4; fi
	echo "$p"
}
# pinned: the daemon's threads bound to a single CPU.
pinned() {
	grep -h '^Cpus_allowed_list' /proc/"$PID"/task/*/status |
		awk '$2 ~ /^[0-9]+$/' | wc -l
}
head -c 3000000 /dev/urandom >"$T/big.bin"
printf 'not a zip' >"$T/bad.jar"

# served: the count the daemon logged at its last unmount.
served() {
	sed -n 's/.*io_uring: \([0-9]*\) requests served.*/\1/p' "$LOG" |
		tail -n 1
}

mount_cmfs
# The rings register right after INIT: the log says so once all did.
i=0
while ! grep -q 'io_uring: on' "$LOG" && [ $i -lt 40 ]; do
	sleep 0.05
	i=$((i + 1))
done
# With the parameter there, only a kernel that does not offer it at INIT
# excuses the rings' absence; anything else is a failure of ours.
if grep -q 'io_uring: off: the kernel does not offer it' "$LOG"; then
	skip "$(grep 'io_uring' "$LOG")"
	finish
fi
contains "the rings are on" "io_uring: on" "$(grep 'io_uring' "$LOG")"
contains "the loop's 10 threads shared out among the CPUs" \
	"io_uring: on: $NCPU CPUs, $(per 10) entries each" "$(grep 'io_uring' "$LOG")"
# An environment per CPU: each holds its own mongodb connector.
cpu=0
while [ "$cpu" -lt "$NCPU" ]; do
	on() { taskset -c "$cpu" "$@"; }
	check "CPU $cpu: mkdir of an environment" on mkdir "$M/envs/u$cpu"
	A=$M/envs/u$cpu/artifacts
	V=$M/envs/u$cpu/versions
	check "CPU $cpu: a connector JAR" on cp "$FIX/mongodb.jar" "$A/m$cpu.jar"
	check "CPU $cpu: its labels" on setfattr \
		-n user.cmf.confluent.io/sql-artifact-type -v connector "$A/m$cpu.jar"
	check "CPU $cpu: identifier" on setfattr \
		-n user.cmf.confluent.io/sql-artifact-identifier -v mongodb \
		"$A/m$cpu.jar"
	eq "CPU $cpu: getfattr -d" \
		"user.cmf.confluent.io/sql-artifact-identifier=\"mongodb\"" \
		"$(on getfattr -d "$A/m$cpu.jar" 2>/dev/null | grep identifier)"
	check "CPU $cpu: 3 MB in 1 MiB writes" on cp "$T/big.bin" "$A/big$cpu.bin"
	check "CPU $cpu: it reads back" on cmp "$A/big$cpu.bin" "$T/big.bin"
	check "CPU $cpu: its version too" on cmp "$V/big$cpu.bin/1.bin" "$T/big.bin"
	errno_is "CPU $cpu: a JAR that is no zip" EINVAL \
		write "$A/bad$cpu.jar" "not a zip"
	check_not "CPU $cpu: and nothing of it" test -e "$A/bad$cpu.jar"
	contains "CPU $cpu: the refusal is in events" "errno=EINVAL" \
		"$(last_event u$cpu "artifact=bad$cpu.jar")"
	printf "CREATE TABLE t (a STRING) WITH ('connector' = 'mongodb')" \
		>"$T/t.sql"
	check "CPU $cpu: a table" on cp "$T/t.sql" "$M/envs/u$cpu/tables/"
	eq "CPU $cpu: its JAR set" "$V/m$cpu.jar/1.jar" \
		"$(on cat "$M/envs/u$cpu/tables/resolved/t.jars")"
	check "CPU $cpu: mv" on mv "$A/big$cpu.bin" "$A/moved$cpu.bin"
	check "CPU $cpu: rm" on rm "$A/moved$cpu.bin"
	cpu=$((cpu + 1))
done

# Several writers at once, more than a CPU's entries.
i=0
pids=
while [ $i -lt 12 ]; do
	(cp "$FIX/stored.jar" "$A/p$i.jar" &&
		setfattr -n user.team -v t$i "$A/p$i.jar") &
	pids="$pids $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # the list of pids
wait $pids
eq "12 uploads at once" 12 "$(ls "$A" | grep -c '^p.*\.jar$')"
eq "and their labels" 12 \
	"$(getfattr -d "$A"/p*.jar 2>/dev/null | grep -c '^user.team=')"
eq "ls -l of the whole directory" "$(ls "$A" | wc -l)" \
	"$(ls -l "$A" | grep -c '^-')"
# The rings' threads are bound to their CPU; the threads they start
# (the store's hashing, the catalog's sync, an inspection's helper) are
# not, or they would share that one CPU.
if [ "$NCPU" -gt 1 ]; then
	eq "only the rings' threads are bound to one CPU" \
		$((NCPU * $(per 10))) "$(pinned)"
fi
umount_cmfs
n=$(served)
check "the rings served the requests ($n)" test "${n:-0}" -gt 200

# Fewer threads for the loop, fewer entries: one a CPU at least.
: >"$LOG"
mount_cmfs -o max_threads=2
i=0
while ! grep -q 'io_uring: on' "$LOG" && [ $i -lt 40 ]; do
	sleep 0.05
	i=$((i + 1))
done
contains "max_threads=2: $(per 2) entries a CPU" \
	"io_uring: on: $NCPU CPUs, $(per 2) entries each" "$(grep 'io_uring' "$LOG")"
if [ "$NCPU" -gt 1 ]; then
	eq "max_threads=2: as many bound threads" $((NCPU * $(per 2))) "$(pinned)"
fi
check "max_threads=2: an upload" cp "$FIX/mongodb.jar" "$A/few.jar"
check "max_threads=2: its label" setfattr -n user.team -v few "$A/few.jar"
umount_cmfs

# Off by configuration: /dev/fuse only, and the log says so.
INI_EXTRA='[mount]
io_uring = off'
mount_cmfs
contains "io_uring = off is logged" "io_uring: off: [mount] io_uring = off" \
	"$(cat "$LOG")"
check "an upload without rings" cp "$FIX/mongodb.jar" "$A/off.jar"
check "the earlier ones are all there" test -f "$A/p11.jar"
umount_cmfs
INI_EXTRA=

# Not offered by the kernel.
echo N >"$PARAM"
: >"$LOG"
mount_cmfs
contains "a kernel without it is logged" "io_uring: off: the kernel does not offer it" \
	"$(cat "$LOG")"
check "an upload through /dev/fuse" cp "$FIX/mongodb.jar" "$A/classic.jar"
finish
