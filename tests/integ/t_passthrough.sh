#!/bin/sh
# Versions read by the kernel itself (FUSE passthrough, fs/backing.c):
# the bytes, concurrent readers, mmap, a version removed while open, the
# latest read by the daemon while uploads replace it, and versions through
# the daemon with [mount] passthrough = off.  "-d" logs every request libfuse receives,
# so a READ that reached the daemon shows.
. "$(dirname "$0")/lib.sh"

# The READ requests the daemon has received so far.
reads() {
	grep -c 'opcode: READ ' "$LOG"
}

head -c 3000000 /dev/urandom >"$T/big.bin"
head -c 5000 /dev/urandom >"$T/small.bin"

mount_cmfs -d
mkdir "$M/envs/p"
A=$M/envs/p/artifacts
V=$M/envs/p/versions
cp "$T/big.bin" "$A/big.bin"
cp "$T/small.bin" "$A/big.bin"
cp "$T/big.bin" "$A/other.bin"

# Only an upload or a table's text commits at close: any other handle is
# opened with FOPEN_NOFLUSH, and its close sends the daemon no FLUSH.
flushes() {
	grep -c 'opcode: FLUSH ' "$LOG"
}
printf "CREATE TABLE gen (a INT) WITH ('connector' = 'datagen')" \
	>"$M/envs/p/tables/gen.sql"
f0=$(flushes)
check "reads of the latest, a version, a table, its resolution, events" \
	cat "$A/other.bin" "$V/big.bin/1.bin" "$M/envs/p/tables/gen.sql" \
	"$M/envs/p/tables/resolved/gen.jars" "$M/envs/p/events"
eq "closed without a FLUSH" "$f0" "$(flushes)"
cp "$T/small.bin" "$A/flushed.bin"
check_not "an upload's close flushes: its commit" test "$(flushes)" = "$f0"
f0=$(flushes)
printf "CREATE TABLE gen2 (a INT) WITH ('connector' = 'datagen')" \
	>"$M/envs/p/tables/gen2.sql"
check_not "so does a table's write" test "$(flushes)" = "$f0"
printf "not sql" >"$T/bad.sql"
check_not "and its refusal still shows at close" \
	cp "$T/bad.sql" "$M/envs/p/tables/bad.sql"

if ! grep -q 'passthrough: on' "$LOG"; then
	skip "the kernel does not offer passthrough: $(grep 'passthrough:' "$LOG")"
else
	r0=$(reads)
	check "a version reads back byte for byte" cmp "$V/big.bin/1.bin" "$T/big.bin"
	check "so does the next one" cmp "$V/big.bin/2.bin" "$T/small.bin"
	eq "no READ reached the daemon" "$r0" "$(reads)"

	# Two readers of one version at once share its backing file; a
	# third after both closed registers it again.
	exec 3<"$V/big.bin/1.bin"
	check "a second reader beside an open one" cmp "$V/big.bin/1.bin" "$T/big.bin"
	eq "the open reader reads it too" "$(md5sum <"$T/big.bin")" "$(md5sum <&3)"
	exec 3<&-
	check "a reader after both closed" cmp "$V/big.bin/1.bin" "$T/big.bin"
	eq "mmap of a version" OK "$("$SYSC" mmap "$V/big.bin/1.bin" "$T/mapped")"
	check "the mapping shows its bytes" cmp "$T/mapped" "$T/big.bin"
	eq "still no READ" "$r0" "$(reads)"

	# The latest is also opened for uploads: the daemon reads it, and
	# uploads go on while it and a version are open.
	check "the latest reads back" cmp "$A/big.bin" "$T/small.bin"
	check_not "through READ requests" test "$(reads)" = "$r0"
	exec 5<"$A/big.bin"
	exec 6<"$V/big.bin/2.bin"
	check "an upload while the latest and a version are open" \
		cp "$T/big.bin" "$A/big.bin"
	check "the new latest reads back" cmp "$A/big.bin" "$T/big.bin"
	eq "the open version keeps its bytes" "$(md5sum <"$T/small.bin")" \
		"$(md5sum <&6)"
	exec 5<&- 6<&-
	eq "its versions" "1.bin 2.bin 3.bin" "$(ls "$V/big.bin" | tr '\n' ' ' | sed 's/ $//')"
	r1=$(reads)
	check "a version of another artifact with the same blob" \
		cmp "$V/other.bin/1.bin" "$T/big.bin"

	# Removed while open: the open reader keeps its bytes.
	exec 4<"$V/big.bin/1.bin"
	rm "$V/big.bin/1.bin"
	sync "$M/envs/p/events"
	check_not "the removed version is gone" test -e "$V/big.bin/1.bin"
	eq "its open reader still reads it" "$(md5sum <"$T/big.bin")" "$(md5sum <&4)"
	exec 4<&-
	eq "other.bin, same bytes, reads" "$(md5sum <"$T/big.bin")" \
		"$(md5sum <"$V/other.bin/1.bin")"
	eq "none of that reached the daemon as READ" "$r1" "$(reads)"

	# A reload cannot change it, nor the other keys a mount reads; the
	# next mount can.
	printf '[store]\npath = %s.moved\nsync = close\n[mount]\npassthrough = off\nio_uring = off\n' \
		"$STORE" >"$T/cmfs.ini"
	kill -HUP "$PID"
	sleep 0.3
	contains "a reload says passthrough waits for the next mount" \
		"[mount] passthrough changed; it takes effect at the next mount" \
		"$(cat "$LOG")"
	for key in "[store] path" "[store] sync" "[mount] io_uring"; do
		contains "a reload says $key waits for the next mount" \
			"$key changed; it takes effect at the next mount" \
			"$(cat "$LOG")"
	done
	contains "and reloads the rest" "SIGHUP: reloaded" "$(cat "$LOG")"
	check "versions still read after the reload" cmp "$V/big.bin/2.bin" "$T/small.bin"
	eq "and still without READ" "$r1" "$(reads)"
fi

INI_EXTRA='[mount]
passthrough = off'
remount_cmfs -d
contains "off says so in the log" "passthrough: off: [mount] passthrough = off" \
	"$(grep 'passthrough:' "$LOG" | tail -n 1)"
r0=$(reads)
check "with passthrough off a version reads back" cmp "$V/other.bin/1.bin" "$T/big.bin"
check_not "through READ requests" test "$(reads)" = "$r0"
eq "mmap with passthrough off" OK "$("$SYSC" mmap "$V/other.bin/1.bin" "$T/mapped2")"
check "shows the bytes" cmp "$T/mapped2" "$T/big.bin"

INI_EXTRA='[mount]
passthrough = sometimes'
write_ini
mkdir "$T/none"
check_not "a bad value stops start-up" "$CMFS" -c "$T/cmfs.ini" -f "$T/none"
contains "naming the key" "passthrough: 'sometimes' is neither auto nor off" \
	"$("$CMFS" -c "$T/cmfs.ini" -f "$T/none" 2>&1)"
finish
