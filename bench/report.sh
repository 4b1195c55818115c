#!/bin/sh
# bench/report.sh - the report of a bench/run.sh run: medians, ratios and
# targets as a Markdown table on stdout and in $OUT (bench/RESULTS.md),
# with the machine, date and command, and bench/findings.md appended.
#
#   sh bench/report.sh DIR      (DIR: what run.sh saved, by default
#                                /var/tmp/cmfs-bench-last)
#
# DIR holds raw ("key target value" lines: µs, counts or KiB), knobs (the
# run's settings, shell assignments), and optionally failed,
# inspect.head, res.sample, reqmix.md.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$TOP/bench
D=${1:?usage: report.sh DIR}
OUT=${OUT:-$BENCH/RESULTS.md}
if [ ! -f "$D/raw" ] || [ ! -f "$D/knobs" ]; then
	echo "report: $D has no raw and knobs" >&2
	exit 1
fi
# shellcheck disable=SC1091 # written by run.sh
. "$D/knobs"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
RAW=$D/raw
touch "$W/failed"
[ ! -f "$D/failed" ] || cp "$D/failed" "$W/failed"

# Rows: key~label~unit~kind~limit~target.  kind: pt or native (the
# cmfs/<kind> time ratio must be <= limit), inspect, flat, rss, or - (no
# target).  unit: s (µs raw shown in s), us, n, kib.
spec() {
	cat <<EOF
upload~Upload: cp of a $BIG_MIB MiB JAR~s~pt~1.12~<= 1.12x passthrough
upload-sync~Upload: cp + sync (durable everywhere)~s~-~~
read-cold~Read $BIG_MIB MiB, cold (cmfs: versions/, as jobs read)~s~pt~1.053~throughput >= 0.95x passthrough
read-warm~Read $BIG_MIB MiB, warm (cmfs: versions/, as jobs read)~s~native~1.12~<= 1.12x native
read-latest-cold~Read $BIG_MIB MiB, cold (cmfs: artifacts/, the latest)~s~-~~
read-latest-warm~Read $BIG_MIB MiB, warm (cmfs: artifacts/, the latest)~s~-~~
many-cp~$N small JARs: cp -R~s~-~~
many-label~$N small JARs: 2 labels each, setfattr --restore~s~-~~
many-label-sql~  the labels' SQL alone: SQLite without cmfs (bench/txn.c)~s~-~~
many-upload-sql~  the uploads' SQL alone, each a new artifact (bench/txn.c)~s~-~~
many~$N small JARs with labels (cp + labels)~s~pt~1.3~<= 1.3x passthrough
many-floor~  floor: passthrough's cp + labels, plus both SQL rows~s~-~~
ls-cold~ls -l of $N artifacts, cold~s~pt~1.3~<= 1.3x passthrough
ls-warm~ls -l of $N artifacts, warm~s~pt~1.3~<= 1.3x passthrough
getfattr~getfattr -d -R of $N artifacts~s~-~~
tables~$N CREATE TABLE files: cp -R~s~-~~
find~find \\| wc -l of that environment, cold~s~-~~
find-entries~  entries found~n~-~~
shaded-up~Upload: cp of the shaded JAR ($SHADED_MIB MiB)~s~-~~
inspect~Inspect shaded JAR ($SHADED_CLASSES classes); native = jdeps~s~inspect~~< 1 s
res-small-cold-p50~Resolve p50, $RES_FIRST artifacts, cold; others: small file~us~pt~2~<= 2x small-file cat via passthrough
res-small-cold-p99~Resolve p99, $RES_FIRST artifacts, cold~us~-~~
res-small-recold-p50~Resolve p50, $RES_FIRST artifacts, cold again (daemon warm)~us~pt~2~<= 2x small-file cat via passthrough
res-small-recold-p99~Resolve p99, $RES_FIRST artifacts, cold again~us~-~~
res-small-warm-p50~Resolve p50, $RES_FIRST artifacts, warm~us~pt~2~<= 2x small-file cat via passthrough
res-small-warm-p99~Resolve p99, $RES_FIRST artifacts, warm~us~-~~
res-large-cold-p50~Resolve p50, $RES_ARTS artifacts, cold~us~pt~2~<= 2x small-file cat via passthrough
res-large-cold-p99~Resolve p99, $RES_ARTS artifacts, cold~us~-~~
res-large-recold-p50~Resolve p50, $RES_ARTS artifacts, cold again (daemon warm)~us~pt~2~<= 2x small-file cat via passthrough
res-large-recold-p99~Resolve p99, $RES_ARTS artifacts, cold again~us~-~~
res-large-warm-p50~Resolve p50, $RES_ARTS artifacts, warm~us~pt~2~<= 2x small-file cat via passthrough
res-large-warm-p99~Resolve p99, $RES_ARTS artifacts, warm~us~-~~
flat~Resolve p50 at $RES_ARTS / at $RES_FIRST artifacts (warm)~x~flat~1.5~flat (<= 1.5x, our reading)
res-populate-first~Populate: $RES_FIRST labelled uploads, sequential~s~-~~
res-populate-tables~Populate: $RES_TABLES table writes~s~-~~
res-populate-rest~Populate: the other uploads, $RES_PARALLEL parallel cp~s~-~~
res-artifacts~  artifacts in the environment~n~-~~
used-by~getfattr user.cmfs.used-by, $RES_TABLES tables~s~-~~
rss-after-many~Daemon RSS after the many-upload rounds~kib~-~~
hwm-after-many~  peak so far (VmHWM)~kib~-~~
rss-after-inspect~Daemon RSS after the shaded JAR's upload (inspection)~kib~-~~
hwm-after-inspect~  peak so far (VmHWM)~kib~-~~
rss-after-resolve~Daemon RSS with the resolution environment~kib~-~~
hwm-after-resolve~  peak so far (VmHWM)~kib~-~~
rss-peak~Daemon peak RSS (VmHWM)~kib~rss~65536~<= 64 MiB
EOF
}

# Median of each key and target; jdeps stands in the native column.
awk '{ k = $1; t = ($2 == "jdeps") ? "native" : $2; print k, t, $3 }' \
	"$RAW" | sort -k1,1 -k2,2 -k3,3g | awk '
	{ key = $1 " " $2; v[key, ++n[key]] = $3; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key } }
	END {
		for (i = 1; i <= nk; i++) {
			k = keys[i]; c = n[k]
			m = (c % 2) ? v[k, (c + 1) / 2] : (v[k, c / 2] + v[k, c / 2 + 1]) / 2
			print k, m
		}
	}' >"$W/medians"
# The flatness row, from the two warm p50s of cmfs.
awk '$1 == "res-small-warm-p50" && $2 == "cmfs" { s = $3 }
	$1 == "res-large-warm-p50" && $2 == "cmfs" { l = $3 }
	END { if (s > 0 && l > 0) print "flat cmfs", l / s }' "$W/medians" \
	>"$W/flat"
cat "$W/flat" >>"$W/medians"
# The many row's floor with a commit before each reply: passthrough's own
# cp + labels plus what the uploads' and labels' SQL alone take.
awk '$1 == "many" && $2 == "pt" { p = $3 }
	$1 == "many-upload-sql" && $2 == "cmfs" { u = $3 }
	$1 == "many-label-sql" && $2 == "cmfs" { l = $3 }
	END { if (p > 0 && u > 0 && l > 0) {
		print "many-floor pt", p; print "many-floor cmfs", p + u + l } }' \
	"$W/medians" >"$W/floor"
cat "$W/floor" >>"$W/medians"

spec | awk -F'~' -v med="$W/medians" -v failed="$W/failed" '
	BEGIN {
		while ((getline l < med) > 0) { split(l, a, " "); m[a[1], a[2]] = a[3]; have[a[1]] = 1 }
		while ((getline l < failed) > 0) { split(l, a, " "); bad[a[1]] = 1 }
		print "| workload | native | passthrough | cmfs | cmfs/pt | cmfs/native | target | met |"
		print "|---|---:|---:|---:|---:|---:|---|---|"
	}
	function show(v, u) {
		if (v == "") return "-"
		if (u == "s") return sprintf("%.3f s", v / 1e6)
		if (u == "us") return sprintf("%.0f us", v)
		if (u == "kib") return sprintf("%.1f MiB", v / 1024)
		if (u == "x") return sprintf("%.2fx", v)
		return sprintf("%d", v)
	}
	function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
	{
		key = $1; if (!(key in have)) next
		nv = m[key, "native"]; pv = m[key, "pt"]; cv = m[key, "cmfs"]
		rp = (key == "flat" || $3 == "n" || $3 == "kib") ? "-" : ratio(cv, pv)
		rn = (key == "flat" || $3 == "n" || $3 == "kib") ? "-" : ratio(cv, nv)
		met = "-"
		if ($4 == "pt" && rp != "-") met = (rp + 0 <= $5 + 0) ? "met" : "NOT met"
		if ($4 == "native" && rn != "-") met = (rn + 0 <= $5 + 0) ? "met" : "NOT met"
		if ($4 == "flat" && cv != "") met = (cv + 0 <= $5 + 0) ? "met" : "NOT met"
		if ($4 == "rss" && cv != "") met = (cv + 0 <= $5 + 0) ? "met" : "NOT met"
		if ($4 == "inspect" && cv != "") {
			# jdeps is shown for scale, not raced (issue 33).
			met = (cv / 1e6 < 1) ? "met" : "NOT met"
			if (nv != "") rn = sprintf("%.3f (jdeps %.1fx slower)", cv / nv, nv / cv)
		}
		if (key in bad) met = met ", FAILED runs"
		printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $2, show(nv, $3), show(pv, $3), show(cv, $3), rp, rn, $6, met
	}' >"$W/table.md"

cmd="make bench"
for v in SHADED_MIB SHADED_CLASSES RES_PARALLEL RES_SAMPLES RES_FIRST \
	RES_TABLES RES_ARTS BIG_MIB N ROUNDS; do
	x=$(eval "printf '%s' \"\${$v}\"")
	cmd="$v=$x $cmd"
done
[ -z "$WORKLOADS_SET" ] || cmd="WORKLOADS='$WORKLOADS' $cmd"
[ "${USED_BY:-1}" = 1 ] || cmd="USED_BY=$USED_BY $cmd"
[ "${URING:-1}" = 1 ] || cmd="URING=$URING $cmd"
[ "$PT_OPTS" = xattr ] || cmd="PT_OPTS='$PT_OPTS' $cmd"
[ -z "$CMFS_INI_EXTRA" ] || cmd="CMFS_INI_EXTRA='$CMFS_INI_EXTRA' $cmd"
[ -z "${CMFS:-}" ] || cmd="CMFS=$CMFS $cmd"
extra=
[ -z "$CMFS_INI_EXTRA" ] || extra=" + \`$CMFS_INI_EXTRA\`"

{
	echo "# cmfs benchmark results (issue 7)"
	echo
	echo "Made by \`bench/run.sh\`; rerun with the command below.  Times are"
	echo "medians of $ROUNDS round(s), the three targets alternating in a"
	echo "rotating order (the populate, used-by and RSS rows: one run);"
	echo "ratios are of times (lower is better for cmfs)."
	echo
	echo "- date: $DATE"
	echo "- command: \`$cmd\`"
	echo "- machine: $(nproc) CPUs ($(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r), $(sed -n 's/^PRETTY_NAME="*\([^"]*\)"*$/\1/p' /etc/os-release)"
	echo "- disk: $DEV under $BENCH_TMP (native, passthrough's source and the cmfs store), $DISK"
	echo "- libfuse $(pkg-config --modversion fuse3); passthrough: \`$PT_NAME\` built with -O2, \`-o $PT_OPTS\` (its defaults: 1 s timeouts, multithreaded)"
	echo "- cmfs: commit $REV, binary sha256 $BINSUM…, embedded defaults + \`[store] path\`$extra, mounted \`-f\` (no allow_other); daemon CPU time over the run: ${CPU} s"
	if [ -s "$D/uring" ]; then echo "- cmfs's requests: $(cat "$D/uring") (bench/run.sh sets the fuse module's enable_uring to Y for the run; URING=0 leaves it)"; fi
	if [ "$COLD" = 0 ]; then echo "- cold rows skipped: /proc/sys/vm/drop_caches not writable"; fi
	if [ -f "$D/inspect.head" ]; then echo "- cmfs inspect of the shaded JAR: $(tr '\n' ' ' <"$D/inspect.head")"; fi
	if [ -f "$D/res.sample" ]; then echo "- a resolved file: \`$(cat "$D/res.sample")\`"; fi
	echo
	echo "## Results"
	echo
	cat "$W/table.md"
	echo
	echo "Resolution latency is open + read to the end + close of each file"
	echo "(bench/lat.c, what \`cat\` does without starting a process): cmfs"
	echo "reads \`tables/resolved/<t>.jars\` of $RES_SAMPLES random tables,"
	echo "passthrough and native read the same tables' \`.sql\` text files;"
	echo "each round reads tables of its own, none read before."
	echo "\"cold\" is after \`echo 3 > /proc/sys/vm/drop_caches\` (dentries"
	echo "gone, so every path is looked up again), of tables no earlier"
	echo "round read: what the daemon keeps in memory (SQLite's 16 MiB of"
	echo "pages, resolutions of an unchanged catalog) does not hold them."
	echo "\"cold again\" drops the kernel's caches once more and reads the"
	echo "same tables: the daemon has just resolved them."
	echo "The resolution environment is populated through the mount (cp -R"
	echo "and setfattr --restore), not by writing the catalog directly."
	if [ -s "$D/reqmix.md" ]; then
		echo
		cat "$D/reqmix.md"
	fi
	if [ -f "$BENCH/findings.md" ]; then
		echo
		cat "$BENCH/findings.md"
	fi
} >"$W/RESULTS.md"
cp "$W/RESULTS.md" "$OUT"
cat "$W/table.md"
echo "bench: wrote $OUT" >&2
