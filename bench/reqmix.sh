#!/bin/sh
# bench/reqmix.sh - the FUSE request mix behind bench/run.sh's numbers:
# small versions of its workloads against cmfs and passthrough_ll, both
# mounted with -d, and the requests each one received per workload,
# counted from the debug logs; with strace, the daemon's syscalls during
# the small uploads.  Prints a Markdown section.
#
#   sh bench/reqmix.sh                (root; K=200 files, a 64 MiB JAR)
#
# Knobs: K BIG_MIB CMFS BENCH_TMP PYTHON.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$TOP/bench
CMFS=${CMFS:-$TOP/cmfs}
K=${K:-200}
BIG_MIB=${BIG_MIB:-64}
BENCH_TMP=${BENCH_TMP:-/var/tmp}
PY=${PYTHON:-python3}
EXAMPLES=/usr/share/doc/libfuse3-dev/examples

die() {
	printf 'reqmix: %s\n' "$*" >&2
	exit 1
}

# unmount, wait_gone, wait_mount.
# shellcheck source=bench/lib.sh
. "$BENCH/lib.sh"

[ "$(id -u)" = 0 ] || die "run as root"
[ -x "$CMFS" ] || die "no $CMFS"

W=$(mktemp -d "$BENCH_TMP/cmfs-reqmix.XXXXXX")
M=$W/mnt
P=$W/pt
CPID=
PTPID=
SPID=

cleanup() {
	set +e
	if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null; fi
	unmount "$M"
	unmount "$P"
	[ -n "$CPID" ] && wait_gone "$CPID"
	[ -n "$PTPID" ] && wait_gone "$PTPID"
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$M" "$P" "$W/ptsrc" "$W/in"
if [ -f "$EXAMPLES/passthrough_ll.c.gz" ]; then
	gzip -dc "$EXAMPLES/passthrough_ll.c.gz" >"$W/passthrough_ll.c"
else
	cp "$EXAMPLES/passthrough_ll.c" "$W/passthrough_ll.c"
fi
if [ -f "$EXAMPLES/passthrough_helpers.h.gz" ]; then
	gzip -dc "$EXAMPLES/passthrough_helpers.h.gz" >"$W/passthrough_helpers.h"
fi
# shellcheck disable=SC2046 # pkg-config's words are meant to split
cc -O2 -I"$EXAMPLES" -o "$W/passthrough_ll" "$W/passthrough_ll.c" \
	$(pkg-config --cflags --libs fuse3)
cc -O2 -o "$W/lat" "$BENCH/lat.c"
"$PY" "$BENCH/mkjar.py" big "$W/in/big.jar" "$BIG_MIB"
"$PY" "$BENCH/mkjar.py" small "$W/in/small" "$K" bench
"$PY" "$BENCH/mkjar.py" tables "$W/in/sql" "$K" "$K" bench

printf '[store]\npath = %s\n' "$W/store" >"$W/cmfs.ini"
"$CMFS" -c "$W/cmfs.ini" -d "$M" >"$W/cmfs.log" 2>&1 &
CPID=$!
wait_mount "$M" "$CPID"
"$W/passthrough_ll" -d -o "source=$W/ptsrc,xattr" "$P" >"$W/pt.log" 2>&1 &
PTPID=$!
wait_mount "$P" "$PTPID"
mkdir "$M/envs/e"
mkdir -p "$P/envs/e/artifacts" "$P/envs/e/tables"

dropc() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# mark: the line counts of both logs, where the next workload starts.
mark() {
	sleep 0.3
	CM=$(wc -l <"$W/cmfs.log")
	PM=$(wc -l <"$W/pt.log")
}

# count NAME: the requests since mark, per opcode, as "NAME fs op n".
count() {
	sleep 0.3
	tail -n +"$((CM + 1))" "$W/cmfs.log" |
		awk -v w="$1" '$3 == "opcode:" { n[$4]++ }
			END { for (o in n) print w, "cmfs", o, n[o] }' >>"$W/mix"
	tail -n +"$((PM + 1))" "$W/pt.log" |
		awk -v w="$1" '$3 == "opcode:" { n[$4]++ }
			END { for (o in n) print w, "pt", o, n[o] }' >>"$W/mix"
}

: >"$W/mix"
A=$M/envs/e/artifacts
B=$P/envs/e/artifacts

mark
cp "$W/in/big.jar" "$A/big.jar"
cp "$W/in/big.jar" "$B/big.jar"
count "upload-${BIG_MIB}MiB"

dropc
mark
cat "$A/big.jar" >/dev/null
cat "$B/big.jar" >/dev/null
count "read-cold-${BIG_MIB}MiB"

mark
cat "$A/big.jar" >/dev/null
cat "$B/big.jar" >/dev/null
count "read-warm-${BIG_MIB}MiB"

# The daemon's syscalls during the small uploads.
if command -v strace >/dev/null 2>&1; then
	strace -c -w -f -o "$W/strace.txt" -p "$CPID" 2>/dev/null &
	SPID=$!
	sleep 0.5
fi
mark
cp -R "$W/in/small/." "$A/"
cp -R "$W/in/small/." "$B/"
count "cp-${K}-small-jars"
mark
(cd "$A" && setfattr --restore="$W/in/small.labels")
(cd "$B" && setfattr --restore="$W/in/small.labels")
count "label-${K}x2"
if [ -n "$SPID" ]; then
	kill -INT "$SPID" 2>/dev/null || true
	wait "$SPID" 2>/dev/null || true
	SPID=
fi

dropc
mark
ls -l "$A" >/dev/null
ls -l "$B" >/dev/null
count "ls-l-cold-${K}"

mark
ls -l "$A" >/dev/null
ls -l "$B" >/dev/null
count "ls-l-warm-${K}"

mark
getfattr -d -R "$A" >/dev/null 2>&1
getfattr -d -R "$B" >/dev/null 2>&1
count "getfattr-d-${K}"

mark
cp -R "$W/in/sql/." "$M/envs/e/tables/"
cp -R "$W/in/sql/." "$P/envs/e/tables/"
count "tables-${K}"

find "$M/envs/e/tables/resolved" -name '*.jars' >"$W/res.list"
find "$P/envs/e/tables" -name '*.sql' >"$W/pt.list"
dropc
mark
"$W/lat" <"$W/res.list" >/dev/null
"$W/lat" <"$W/pt.list" >/dev/null
count "resolve-cold-${K}"
mark
"$W/lat" <"$W/res.list" >/dev/null
"$W/lat" <"$W/pt.list" >/dev/null
count "resolve-warm-${K}"

# The largest write the kernel sent (insize of WRITE requests).
wsize() {
	awk '$3 == "opcode:" && $4 == "WRITE" { v = $9 + 0; if (v > m) m = v }
		END { printf "%d", m }' "$1"
}

echo "## Request mix (bench/reqmix.sh, K=$K, ${BIG_MIB} MiB JAR)"
echo
echo "FUSE requests per workload, counted from the -d logs of cmfs and"
echo "passthrough_ll (the same commands on both). The"
echo "resolve rows read \`resolved/<t>.jars\` on cmfs and \`<t>.sql\` on"
echo "passthrough. Largest WRITE request (insize, with its header): cmfs"
echo "$(wsize "$W/cmfs.log") bytes, passthrough $(wsize "$W/pt.log") bytes."
echo
echo "| workload | requests cmfs / passthrough | cmfs by opcode | passthrough by opcode |"
echo "|---|---|---|---|"
awk '
	{ k = $1; if (!(k in seen)) { seen[k] = 1; ord[++n] = k }
	  tot[k, $2] += $4; s[k, $2] = s[k, $2] sprintf("%s %d, ", $3, $4) }
	END {
		for (i = 1; i <= n; i++) {
			k = ord[i]
			printf "| %s | %d / %d | %s | %s |\n", k, tot[k, "cmfs"], tot[k, "pt"], substr(s[k, "cmfs"], 1, length(s[k, "cmfs"]) - 2), substr(s[k, "pt"], 1, length(s[k, "pt"]) - 2)
		}
	}' "$W/mix"
if [ -s "$W/strace.txt" ]; then
	echo
	echo "cmfs daemon syscalls during the $K small uploads and their labels"
	echo "(strace -c -w -f: wall time in each call, idle waits included; top 12):"
	echo
	echo '```'
	sed -n '1,2p' "$W/strace.txt"
	sed -n '3,$p' "$W/strace.txt" | grep -v -e '^---' -e total | head -n 12
	echo '```'
fi
