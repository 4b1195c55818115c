#!/bin/sh
# bench/pg.sh - issue 31's rows: several hosts on one PostgreSQL catalog.
#
#   make bench-pg                      (as root)
#   SAMPLES=200 RES_ARTS=300 RES_TABLES=600 BIG_MIB=64 ROUNDS=3 sh bench/pg.sh
#
# A private cluster (tests/integ/pg.sh), hosts A and B on it (two daemons,
# two stores, as tests/integ/t_pg2.sh starts them) and host C on SQLite in
# a store of its own, all with the same [mount] cache times (30 s, so that
# B sees a name only when A's notification makes its kernel ask again).
#
#   visibility   B looks up a new name (its kernel keeps the miss), A
#                uploads a 1 KiB file there (cp returns once the version
#                is committed), B stats the name in a busy loop until it
#                is there: cp's return to B's first success.  Target: p50
#                <= 100 ms, p99 <= 1 s.
#   resolution   the same RES_ARTS labelled factory JARs and RES_TABLES
#                tables on A and on C; resolved/<t>.jars of tables not
#                read before (the daemon resolves them: "first"), then the
#                same again ("again", kept by the daemon), read as cat does
#                (bench/lat.c), A and C in turn.  Target: A's p50 <= 2x C's.
#   versions/    a BIG_MIB MiB file uploaded on A, read on B through its
#                pinned versions/ path: the first read fetches it into B's
#                cache; then warm reads (page cache) against the same bytes
#                read from a native file.  Target: <= 1.12x native.
# Prints a Markdown table; the figures are medians of ROUNDS rounds.
CMFS=${CMFS:-$(cd "$(dirname "$0")/.." && pwd)/cmfs}
BENCH=$(cd "$(dirname "$0")" && pwd)
. "$BENCH/../tests/integ/lib.sh"
. "$BENCH/../tests/integ/pg.sh"
SAMPLES=${SAMPLES:-200}
RES_ARTS=${RES_ARTS:-300}
RES_TABLES=${RES_TABLES:-600}
BIG_MIB=${BIG_MIB:-64}
ROUNDS=${ROUNDS:-3}
PY=${PYTHON:-python3}
pg_start

cc -O2 -o "$T/lat" "$BENCH/lat.c" || { say "FAIL: cannot build lat.c"; exit 1; }
two_hosts
mount_cmfs
M2=$T/mnt2
M3=$T/mnt3
mkdir -p "$M2" "$M3"
mount_second "$T/b.ini" "$M2" "$T/daemon2.log"
PID_B=$PID2
# Host C: SQLite, the same cache times.
printf '[store]\npath = %s\n[mount]\nentry_timeout = 30\nattr_timeout = 30\nnegative_timeout = 30\n' \
	"$T/store3" >"$T/c.ini"
mount_second "$T/c.ini" "$M3" "$T/daemon3.log"
PID_C=$PID2
PID2=$PID_B

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
row() { printf '| %s | %s | %s | %s | %s |\n' "$@"; }

# ---- visibility
mkdir "$M/envs/prod"
while [ ! -d "$M2/envs/prod/artifacts" ]; do sleep 0.01; done
head -c 1024 /dev/urandom >"$T/one.bin"
: >"$T/vis"
i=0
while [ $i -lt "$SAMPLES" ]; do
	f=v$i.bin
	[ -e "$M2/envs/prod/artifacts/$f" ] || :
	cp "$T/one.bin" "$M/envs/prod/artifacts/$f"
	t0=$(date +%s%N)
	while [ ! -e "$M2/envs/prod/artifacts/$f" ]; do :; done
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000)) >>"$T/vis"
	i=$((i + 1))
done
VIS=$(sort -n "$T/vis" | awk -v n="$SAMPLES" '{ v[NR] = $1 } END {
	printf "%.1f %.1f %.1f", v[int(n * 0.50) + 1] / 1000,
		v[int(n * 0.99) + 1] / 1000, v[n] / 1000 }')
set -- $VIS
VIS50=$1 VIS99=$2 VISMAX=$3

# ---- resolution: A (PostgreSQL) against C (SQLite)
"$PY" "$BENCH/mkjar.py" small "$T/res" "$RES_ARTS" res 1 >/dev/null
"$PY" "$BENCH/mkjar.py" tables "$T/sql" "$RES_TABLES" "$RES_ARTS" res \
	>/dev/null
for h in "$M" "$M3"; do
	mkdir "$h/envs/res"
	cp -R "$T/res/." "$h/envs/res/artifacts/"
	(cd "$h/envs/res/artifacts" && setfattr --restore="$T/res.labels")
	cp -R "$T/sql/." "$h/envs/res/tables/"
done
per=$((RES_TABLES / ROUNDS))
: >"$T/res.first.A"
: >"$T/res.first.C"
: >"$T/res.again.A"
: >"$T/res.again.C"
r=0
while [ $r -lt "$ROUNDS" ]; do
	seq $((r * per + 1)) $(((r + 1) * per)) >"$T/idx"
	for h in A C; do
		[ $h = A ] && root=$M || root=$M3
		awk -v d="$root/envs/res/tables/resolved" \
			'{ printf "%s/t%07d.jars\n", d, $1 }' "$T/idx" >"$T/list.$h"
	done
	# Alternate which host goes first.
	[ $((r % 2)) = 0 ] && order="A C" || order="C A"
	for pass in first again; do
		for h in $order; do
			"$T/lat" <"$T/list.$h" >"$T/lat.out"
			sed -n 's/.* p50=\([0-9.]*\).*/\1/p' "$T/lat.out" \
				>>"$T/res.$pass.$h"
			e=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' "$T/lat.out")
			[ "$e" = 0 ] || say "warning: $e errors reading $h's resolved files"
		done
	done
	r=$((r + 1))
done
RF_A=$(median <"$T/res.first.A")
RF_C=$(median <"$T/res.first.C")
RA_A=$(median <"$T/res.again.A")
RA_C=$(median <"$T/res.again.C")

# ---- versions/ on B, warm, against native
head -c $((BIG_MIB * 1048576)) /dev/urandom >"$T/big.bin"
cp "$T/big.bin" "$M/envs/prod/artifacts/big.bin"
V=$M2/envs/prod/versions/big.bin/1.bin
while [ ! -e "$V" ]; do sleep 0.01; done
cat "$V" >/dev/null # the first read: fetched into B's cache
cat "$T/big.bin" >/dev/null
readt() {
	s=$(date +%s%N)
	cat "$1" >/dev/null
	e=$(date +%s%N)
	echo $(((e - s) / 1000))
}
: >"$T/rd.B"
: >"$T/rd.N"
r=0
while [ $r -lt $((ROUNDS * 3)) ]; do
	readt "$V" >>"$T/rd.B"
	readt "$T/big.bin" >>"$T/rd.N"
	r=$((r + 1))
done
RD_B=$(median <"$T/rd.B")
RD_N=$(median <"$T/rd.N")
cmp -s "$V" "$T/big.bin" || say "warning: B's versions/ read other bytes"

say ""
say "## Several hosts on one PostgreSQL catalog (bench/pg.sh)"
say ""
say "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$BENCH/.." rev-parse --short HEAD 2>/dev/null || echo unknown); SAMPLES=$SAMPLES RES_ARTS=$RES_ARTS RES_TABLES=$RES_TABLES BIG_MIB=$BIG_MIB ROUNDS=$ROUNDS"
say ""
row "workload" "PostgreSQL" "baseline" "ratio" "target"
row "---" "---:" "---:" "---:" "---"
row "visibility on B of an upload on A, p50" "$VIS50 ms" "-" "-" "<= 100 ms"
row "visibility on B of an upload on A, p99 (max $VISMAX ms)" "$VIS99 ms" "-" "-" "<= 1000 ms"
row "resolution p50, first read (baseline: SQLite)" "$RF_A us" "$RF_C us" "$(ratio "$RF_A" "$RF_C")" "<= 2x"
row "resolution p50, again (baseline: SQLite)" "$RA_A us" "$RA_C us" "$(ratio "$RA_A" "$RA_C")" "<= 2x"
row "warm read of versions/ on B, $BIG_MIB MiB (baseline: native)" "$RD_B us" "$RD_N us" "$(ratio "$RD_B" "$RD_N")" "<= 1.12x"

fusermount3 -u "$M3"
wait "$PID_C" || say "warning: host C's daemon exited non-zero"
umount_second "$M2"
finish
