#!/bin/sh
# bench/run.sh - the benchmark of issue 7: cmfs side by side with the
# libfuse passthrough example (passthrough_ll, the floor FUSE sets) and
# the native file system, on the same disk, several rounds, alternating.
#
#   make bench                          (as root: mounts, drops caches)
#   ROUNDS=1 N=2000 RES_ARTS=5000 RES_TABLES=1000 SHADED_CLASSES=2000 \
#       SHADED_MIB=20 BIG_MIB=64 sh bench/run.sh      (a quick run)
#
# Workloads (DESIGN.md's tools, the same commands on all three targets):
#   upload    cp of a BIG_MIB MiB factory JAR (a zip: one stored random
#             entry, a service file, a factory class); also cp + sync
#   read      cat > /dev/null of that file, cold (drop_caches) and warm:
#             on cmfs its pinned versions/ path (what <t>.jars lists and
#             a job reads), and artifacts/big.jar (the latest) beside it
#   many      cp -R of N small factory JARs (~2 KiB), then their two labels
#             each with one `setfattr --restore` (plain files natively)
#   list      ls -l (cold and warm) and getfattr -d -R of those N;
#             find | wc -l of their environment's whole tree
#   tables    cp -R of N CREATE TABLE files into tables/
#   inspect   cmfs inspect of a SHADED_MIB MiB JAR with SHADED_CLASSES
#             classes, against jdeps -verbose:class where a JDK is present;
#             and cp of that JAR
#   resolve   an environment with RES_ARTS labelled artifacts and RES_TABLES
#             tables, all uploaded and written through the mount; latency
#             of reading resolved/<t>.jars for RES_SAMPLES random tables
#             (open, read, close: bench/lat.c), against reading a small
#             file through passthrough and natively; at RES_FIRST artifacts
#             and again at RES_ARTS (flatness)
# and the daemon's peak RSS (VmHWM) and CPU time.
#
# Results: a table on stdout and in $OUT (bench/RESULTS.md) with the
# machine, the date and the command; bench/findings.md, when present, is
# appended to it.  Inputs that take long to make (the shaded JAR) are kept
# in $BENCH_CACHE.  Everything else lives in one temporary directory under
# $BENCH_TMP, on the disk the numbers are about, removed at exit with
# everything unmounted.
#
# Knobs (environment): ROUNDS N BIG_MIB RES_ARTS RES_TABLES RES_FIRST
# RES_SAMPLES RES_PARALLEL SHADED_CLASSES SHADED_MIB WORKLOADS BENCH_TMP
# BENCH_CACHE SAVE OUT CMFS CMFS_REV (the commit of $CMFS) USED_BY (0:
# skip reading user.cmfs.used-by, which resolves every table)
# CMFS_INI_EXTRA (lines added to cmfs.ini, \n for newlines) PT_OPTS
# (passthrough_ll -o options) REQMIX (1: also run bench/reqmix.sh) PYTHON
# URING (1, the default: set the fuse module's enable_uring to Y for the
# run, as an operator would, so that cmfs takes requests over io_uring;
# 0: leave it as it is; passthrough_ll, libfuse 3.14, cannot use it)
# QUIET (1, the default: on ext4 without a journal, wait until 370 s
# have passed since the last run removed its files; 0: do not wait).
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
WORKLOADS_SET=${WORKLOADS+x}
BENCH=$TOP/bench
CMFS=${CMFS:-$TOP/cmfs}
# Five rounds: on a VM whose times for the same work are bimodal (a
# many-file row took 3-4 s or 6-7 s on either side), the median of three
# lands on whichever mode two of them hit.
ROUNDS=${ROUNDS:-5}
N=${N:-10000}
BIG_MIB=${BIG_MIB:-256}
RES_ARTS=${RES_ARTS:-100000}
RES_TABLES=${RES_TABLES:-10000}
RES_FIRST=${RES_FIRST:-1000}
RES_SAMPLES=${RES_SAMPLES:-1500}
RES_PARALLEL=${RES_PARALLEL:-4}
SHADED_CLASSES=${SHADED_CLASSES:-20000}
SHADED_MIB=${SHADED_MIB:-100}
WORKLOADS=${WORKLOADS:-upload read many tables inspect resolve}
BENCH_TMP=${BENCH_TMP:-/var/tmp}
BENCH_CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/cmfs-bench}
OUT=${OUT:-$BENCH/RESULTS.md}
CMFS_INI_EXTRA=${CMFS_INI_EXTRA:-}
PT_OPTS=${PT_OPTS:-xattr}
REQMIX=${REQMIX:-0}
USED_BY=${USED_BY:-1}
PY=${PYTHON:-python3}
EXAMPLES=/usr/share/doc/libfuse3-dev/examples

die() {
	printf 'bench: %s\n' "$*" >&2
	exit 1
}

# unmount, wait_gone, wait_mount.
# shellcheck source=bench/lib.sh
. "$BENCH/lib.sh"

say() { printf '%s\n' "$*" >&2; }

has() { case " $WORKLOADS " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- checks ----

[ "$(id -u)" = 0 ] || die "run as root (mounts, drop_caches)"
[ -c /dev/fuse ] || die "no /dev/fuse"
[ -x "$CMFS" ] || die "no $CMFS: run make first"
for t in cc pkg-config "$PY" setfattr getfattr fusermount3 mountpoint shuf; do
	command -v "$t" >/dev/null 2>&1 || die "needs $t"
done
pkg-config --exists fuse3 || die "needs libfuse3-dev (pkg-config fuse3)"
if [ -f "$EXAMPLES/passthrough_ll.c" ]; then
	PT_SRC=$EXAMPLES/passthrough_ll.c
elif [ -f "$EXAMPLES/passthrough_ll.c.gz" ]; then
	PT_SRC=$EXAMPLES/passthrough_ll.c.gz
else
	die "no $EXAMPLES/passthrough_ll.c(.gz): install libfuse3-dev"
fi
for v in ROUNDS N BIG_MIB RES_ARTS RES_TABLES RES_FIRST RES_SAMPLES \
	RES_PARALLEL SHADED_CLASSES SHADED_MIB; do
	x=$(eval "printf '%s' \"\${$v}\"")
	case $x in '' | *[!0-9]*) die "$v must be a number" ;; esac
	[ "$x" -gt 0 ] || die "$v must be positive"
done
[ "$RES_FIRST" -le "$RES_ARTS" ] || RES_FIRST=$RES_ARTS
[ "$RES_SAMPLES" -le "$RES_TABLES" ] || RES_SAMPLES=$RES_TABLES

# Disk: roughly what the inputs and the three copies take, in MiB.
need=$((BIG_MIB * 6 + SHADED_MIB * 5 + (N * (ROUNDS * 3 + 1) * 3 + \
	RES_ARTS * 9 + RES_TABLES * 3) / 1024 + 512))
mkdir -p "$BENCH_TMP"
avail=$(df -Pm "$BENCH_TMP" | awk 'NR == 2 { print $4 }')
[ "$avail" -gt "$need" ] ||
	die "$BENCH_TMP has $avail MiB free; this run needs about $need MiB"

# The commit measured (read now: HEAD may move during a long run); with
# CMFS pointing elsewhere, say which commit that binary is in CMFS_REV.
if [ -n "${CMFS_REV:-}" ]; then
	REV=$CMFS_REV
elif [ "$CMFS" = "$TOP/cmfs" ]; then
	REV=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
else
	REV="unknown ($CMFS)"
fi

# ---- the work directory and its cleanup ----

W=$(mktemp -d "$BENCH_TMP/cmfs-bench.XXXXXX")
M=$W/mnt		# cmfs
P=$W/pt			# passthrough_ll over $W/ptsrc
NAT=$W/native		# the native file system
IN=$W/in		# inputs
# The measurements go to $SAVE (kept, replaced by the next run), so
# `sh bench/report.sh $SAVE` can redo the report, even of a broken run.
SAVE=${SAVE:-$BENCH_TMP/cmfs-bench-last}
RAW=$SAVE/raw		# "key target value" lines
CPID=
PPID_PT=

# journal_of DIR: yes when the file system under DIR has a jbd2 journal.
journal_of() {
	_jdev=$(findmnt -no SOURCE -T "$1" | head -n 1)
	for _j in /proc/fs/jbd2/"$(basename "$_jdev")"-*; do
		if [ -e "$_j" ]; then
			echo yes
			return
		fi
	done
	echo no
}

# quiet_disk: ext4 without a journal passes over every inode freed in the
# last 60 s when it allocates one, 360 s while the freed inode's block of
# the inode table is dirty, which every new file in that block makes it
# (ialloc.c, recently_deleted()).  After a mass delete, such as the last
# run's cleanup, the native side's and passthrough_ll's file creation ran
# 3-10x slower for five to six minutes (findings.md).  Wait that out
# unless QUIET=0.
quiet_disk() {
	_t=$(cat "$BENCH_CACHE/removed" 2>/dev/null || echo 0)
	_left=$((_t + 370 - $(date +%s)))
	[ "${QUIET:-1}" = 1 ] && [ "$_left" -gt 0 ] || return 0
	[ "$(journal_of "$W")" = no ] || return 0
	say "bench: waiting ${_left} s: ext4 without a journal passes over inodes freed in the last 6 minutes (the last run's cleanup)"
	sleep "$_left"
}

cleanup() {
	set +e
	unmount "$M"
	unmount "$P"
	[ -n "$CPID" ] && wait_gone "$CPID"
	[ -n "$PPID_PT" ] && wait_gone "$PPID_PT"
	uring_restore
	rm -rf "$W"
	# The next run waits for these inodes (quiet_disk): thousands of
	# files with these workloads, a handful without.
	if has many || has tables || has resolve; then
		date +%s >"$BENCH_CACHE/removed"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$M" "$P" "$W/ptsrc" "$NAT" "$IN" "$BENCH_CACHE"
quiet_disk
rm -rf "$SAVE"
mkdir -p "$SAVE"
: >"$RAW"

# ---- helpers ----

now_us() { echo $(($(date +%s%N) / 1000)); }

# record KEY TARGET VALUE
record() { echo "$1 $2 $3" >>"$RAW"; }

# timed KEY TARGET CMD...: run CMD and record its wall time in µs; a
# failure is noted (and the time still recorded).
timed() {
	k=$1 tg=$2
	shift 2
	t0=$(now_us)
	if ! "$@"; then
		say "warning: $k on $tg failed"
		echo "$k $tg" >>"$SAVE/failed"
	fi
	t1=$(now_us)
	LAST=$((t1 - t0))
	record "$k" "$tg" "$LAST"
}

COLD=1
[ -w /proc/sys/vm/drop_caches ] || COLD=0
dropc() {
	sync
	if [ "$COLD" = 1 ]; then echo 3 >/proc/sys/vm/drop_caches; fi
}

# fresh DIR: before a workload of many files.  passthrough_ll holds an
# fd for every inode the kernel knows, and an fd limit of 20,000 (which
# root may not be able to raise) ends it at full size: drop the caches,
# so the kernel forgets what earlier workloads made, then read DIR back in
# (the source files stay warm for all three targets alike).
fresh() {
	dropc
	find "$1" -type f -exec cat -- {} + >/dev/null
}

# root TARGET: the top of that target's tree.
root() {
	case $1 in
	native) echo "$NAT" ;;
	pt) echo "$P" ;;
	cmfs) echo "$M" ;;
	esac
}

# mkenv TARGET ENV: an environment (a plain directory pair natively).
mkenv() {
	_mr=$(root "$1")
	if [ "$1" = cmfs ]; then
		mkdir "$_mr/envs/$2"
	else
		mkdir -p "$_mr/envs/$2/artifacts" "$_mr/envs/$2/tables"
	fi
}

# The targets in round $1's order: rotated each round.
order() {
	case $(($1 % 3)) in
	1) echo "native pt cmfs" ;;
	2) echo "pt cmfs native" ;;
	0) echo "cmfs native pt" ;;
	esac
}

cp_file() { cp -- "$1" "$2"; }
cp_sync() { cp -- "$1" "$2" && sync; }
cat_null() { cat -- "$1" >/dev/null; }
cp_tree() { cp -R -- "$1/." "$2/"; }
restore() { (cd "$1" && setfattr --restore="$2"); }
ls_l() { ls -l -- "$1" >/dev/null; }
getf() { getfattr -d -R -- "$1" >/dev/null 2>&1; }
find_count() { find "$1" | wc -l >"$W/count"; }
inspect_jar() { "$CMFS" inspect "$1" >"$W/inspect.out" 2>&1 || true; }
jdeps_jar() { jdeps -verbose:class "$1" >"$W/jdeps.out" 2>&1; }

rss() {
	awk -v k="$1:" '$1 == k { print $2 }' "/proc/$CPID/status"
}

cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' \
		"/proc/$CPID/stat"
}

# ---- build and mount ----

say "bench: work directory $W"
case $PT_SRC in
*.gz) gzip -dc "$PT_SRC" >"$W/passthrough_ll.c" ;;
*) cp "$PT_SRC" "$W/passthrough_ll.c" ;;
esac
if [ -f "$EXAMPLES/passthrough_helpers.h.gz" ]; then
	gzip -dc "$EXAMPLES/passthrough_helpers.h.gz" >"$W/passthrough_helpers.h"
fi
# shellcheck disable=SC2046 # pkg-config's words are meant to split
cc -O2 -I"$EXAMPLES" -o "$W/passthrough_ll" "$W/passthrough_ll.c" \
	$(pkg-config --cflags --libs fuse3) || die "cannot build passthrough_ll"
cc -O2 -o "$W/lat" "$BENCH/lat.c" || die "cannot build bench/lat.c"
# shellcheck disable=SC2046 # pkg-config's words are meant to split
cc -O2 -o "$W/txn" "$BENCH/txn.c" $(pkg-config --cflags --libs sqlite3) ||
	die "cannot build bench/txn.c"

{
	printf '[store]\npath = %s\n' "$W/store"
	if [ -n "$CMFS_INI_EXTRA" ]; then printf '%b\n' "$CMFS_INI_EXTRA"; fi
} >"$W/cmfs.ini"
uring_on
"$CMFS" -c "$W/cmfs.ini" -f "$M" >"$W/cmfs.log" 2>&1 &
CPID=$!
wait_mount "$M" "$CPID" "$W/cmfs.log"
uring_said "$W/cmfs.log" >"$SAVE/uring" || true
"$W/passthrough_ll" -f -o "source=$W/ptsrc,$PT_OPTS" "$P" \
	>"$W/pt.log" 2>&1 &
PPID_PT=$!
wait_mount "$P" "$PPID_PT" "$W/pt.log"
mkdir -p "$NAT/envs" "$P/envs"

# ---- inputs ----

say "bench: making inputs"
if has upload || has read; then
	"$PY" "$BENCH/mkjar.py" big "$IN/big.jar" "$BIG_MIB"
fi
if has many || has tables; then
	"$PY" "$BENCH/mkjar.py" small "$IN/small" "$N" bench
	"$PY" "$BENCH/mkjar.py" tables "$IN/sql" "$N" "$N" bench
fi

# ---- 1. upload, 2. read ----

if has upload || has read; then
	for t in native pt cmfs; do mkenv "$t" big; done
	cat_null "$IN/big.jar"
fi
if has upload; then
	say "bench: upload"
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for t in $(order $r); do
			d=$(root "$t")/envs/big/artifacts
			rm -f "$d/big.jar" "$d/durable.jar"
			sync
			timed upload "$t" cp_file "$IN/big.jar" "$d/big.jar"
			sync
			timed upload-sync "$t" cp_sync "$IN/big.jar" \
				"$d/durable.jar"
			rm -f "$d/durable.jar"
		done
		r=$((r + 1))
	done
fi
if has read; then
	say "bench: read"
	for t in native pt cmfs; do
		d=$(root "$t")/envs/big/artifacts
		[ -f "$d/big.jar" ] || cp_file "$IN/big.jar" "$d/big.jar"
	done
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for t in $(order $r); do
			a=$(root "$t")/envs/big/artifacts/big.jar
			# What a job reads: the pinned path in <t>.jars.
			f=$a
			if [ "$t" = cmfs ]; then
				v=$(ls "$(root cmfs)/envs/big/versions/big.jar" |
					sort -n | tail -n 1)
				f=$(root cmfs)/envs/big/versions/big.jar/$v
			fi
			if [ "$COLD" = 1 ]; then
				dropc
				timed read-cold "$t" cat_null "$f"
				dropc
				timed read-latest-cold "$t" cat_null "$a"
			fi
			cat_null "$f"
			timed read-warm "$t" cat_null "$f"
			cat_null "$a"
			timed read-latest-warm "$t" cat_null "$a"
		done
		r=$((r + 1))
	done
fi

# sql_alone KEY COUNT SQL...: COUNT transactions of the statements on a
# copy of the catalog after the rounds (bench/txn.c), recorded as KEY:
# their whole time, as the rows beside them are.
sql_alone() {
	_key=$1
	_count=$2
	shift 2
	if "$W/txn" "$W/store/catalog.db" "$W/txn.db" "$_count" "$@" \
		>"$W/txn.out"; then
		_us=$(sed -n 's/.* us=\([0-9.]*\) .*/\1/p' "$W/txn.out")
		record "$_key" cmfs "$(awk -v u="$_us" -v n="$_count" \
			'BEGIN { printf "%d", u * n }')"
	else
		say "warning: bench/txn.c on the catalog failed ($_key)"
	fi
	rm -f "$W/txn.db" "$W/txn.db-wal" "$W/txn.db-shm"
}

# label_sql: what the many-label row's SQL costs SQLite alone, on a copy
# of the catalog after the rounds (bench/txn.c): per label the artifact's
# look-up, its JAR's factories, the upsert and an events line, in one
# transaction: the statements cmfs runs, written out here, less its
# reads of the inspection row and the labels and its look-up of where
# the events line goes (a floor).  The rest of cmfs's labels row is the
# request's way through the kernel (what passthrough_ll pays too) and
# cmfs's own work around the statements.
label_sql() {
	_a="(SELECT id FROM artifacts WHERE env_id = (SELECT id FROM envs"
	_a="$_a WHERE name = 'm1') AND name = printf('bench%07d.jar',"
	_a="$_a (?1 - 1) / 2 % $N + 1))"
	sql_alone many-label-sql $((2 * N)) \
		"SELECT a.id FROM artifacts a JOIN versions v ON \
v.artifact_id = a.id WHERE a.id = $_a ORDER BY v.n DESC LIMIT 1" \
		"SELECT kind, identifier, class, unknown FROM insp_factories \
WHERE insp = (SELECT i.id FROM inspections i JOIN versions v ON \
v.sha256 = i.sha256 WHERE v.artifact_id = $_a ORDER BY v.n DESC LIMIT 1) \
ORDER BY seq" \
		"INSERT INTO labels(artifact_id, key, value) VALUES($_a, \
CASE ?1 % 2 WHEN 1 THEN 'cmf.confluent.io/sql-artifact-type' \
ELSE 'cmf.confluent.io/sql-artifact-identifier' END, 'v' || ?1) \
ON CONFLICT(artifact_id, key) DO UPDATE SET value = excluded.value" \
		"INSERT INTO events(id, env, off, len, line) VALUES((1000 << 40) \
+ ?1 * 160, 'm1', ?1 * 160, 160, randomblob(160))"
}

# upload_sql: the same for a new small upload's commit, the statements
# cmfs's close runs (the artifact, its count and version number, the
# inspection and its factory, the inline blob, the version, the loose
# row, the events line), N of them on another copy, each artifact new.
# Ids cmfs holds in memory are looked up here by name (a few index
# seeks more: still a floor).  With label_sql and passthrough's own
# many row, report.sh shows what a commit per request leaves for the
# request path and inspection.
upload_sql() {
	_e="(SELECT id FROM envs WHERE name = 'm1')"
	_n="printf('sql%07d.jar', ?1)"
	_s="printf('%064x', ?1)"
	_a="(SELECT id FROM artifacts WHERE env_id = $_e AND name = $_n)"
	sql_alone many-upload-sql "$N" \
		"SELECT COALESCE((SELECT nart FROM envs WHERE id = $_e), 0)" \
		"INSERT INTO artifacts(env_id, name) VALUES($_e, $_n)" \
		"UPDATE envs SET nart = nart + 1 WHERE id = $_e" \
		"SELECT next_n FROM retired WHERE name = $_n AND env = 'm1'" \
		"INSERT INTO inspections(sha256, error, external, inspector, \
options_read) VALUES($_s, NULL, 'java.lang.Object
java.lang.String
org.apache.flink.table.factories.DynamicTableSourceFactory
', 3, 1)" \
		"UPDATE versions SET insp = last_insert_rowid() WHERE sha256 = \
$_s AND insp IS NOT last_insert_rowid()" \
		"INSERT INTO insp_factories(insp, seq, kind, identifier, class, \
unknown) VALUES(last_insert_rowid(), 0, 'connector', 'sql-' || ?1, \
'com.example.bench.Factory', 'required,optional,validation')" \
		"INSERT INTO inline_blobs(sha256, bytes) VALUES($_s, \
zeroblob(2023))" \
		"SELECT next_n FROM artifacts WHERE id = $_a" \
		"UPDATE artifacts SET next_n = next_n + 1 WHERE id = $_a" \
		"INSERT INTO versions(artifact_id, n, sha256, size, mtime, uid, \
insp) VALUES($_a, 1, $_s, 2023, ?1, 0, (SELECT id FROM inspections WHERE \
sha256 = $_s))" \
		"DELETE FROM loose WHERE sha256 = $_s" \
		"SELECT e.k << 40, COALESCE((SELECT off + len FROM events WHERE \
id BETWEEN e.k << 40 AND (e.k << 40) + 1099511627775 ORDER BY id DESC \
LIMIT 1), 0) FROM event_envs e WHERE e.name = 'm1'" \
		"INSERT INTO events(id, env, off, len, line) VALUES((1001 << 40) \
+ ?1 * 185, 'm1', ?1 * 185, 185, zeroblob(185))"
}

# ---- 3. many uploads, 4. listing, 6. table writes ----

if has many || has tables; then
	say "bench: many uploads, listing, tables (N=$N)"
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for t in $(order $r); do
			e=$(root "$t")/envs/m$r
			if has many; then
				mkenv "$t" "m$r"
				fresh "$IN/small"
				timed many-cp "$t" cp_tree "$IN/small" \
					"$e/artifacts"
				a=$LAST
				timed many-label "$t" restore "$e/artifacts" \
					"$IN/small.labels"
				record many "$t" $((a + LAST))
				if [ "$COLD" = 1 ]; then
					dropc
					timed ls-cold "$t" ls_l "$e/artifacts"
				fi
				timed ls-warm "$t" ls_l "$e/artifacts"
				timed getfattr "$t" getf "$e/artifacts"
				# The environment's whole tree: artifacts (and on
				# cmfs versions/, tables/resolved/, events).
				dropc
				timed find "$t" find_count "$e"
				record find-entries "$t" "$(cat "$W/count")"
			fi
			if has tables; then
				# Tables in an environment of their own, so that
				# passthrough_ll stays under its fd limit.
				mkenv "$t" "t$r"
				fresh "$IN/sql"
				timed tables "$t" cp_tree "$IN/sql" \
					"$(root "$t")/envs/t$r/tables"
			fi
		done
		r=$((r + 1))
	done
	record rss-after-many cmfs "$(rss VmRSS)"
	record hwm-after-many cmfs "$(rss VmHWM)"
fi
if has many; then
	upload_sql
	label_sql
fi

# ---- 7. inspection ----

if has inspect; then
	if command -v javac >/dev/null 2>&1 && [ "${BENCH_JAVAC:-1}" = 1 ]; then
		how=javac
	else
		how=python
	fi
	SHADED=$BENCH_CACHE/shaded-$SHADED_CLASSES-$SHADED_MIB-$how.jar
	if [ ! -f "$SHADED" ]; then
		say "bench: making the shaded JAR ($how, once, kept in $SHADED)"
		if [ $how = javac ]; then
			"$PY" "$BENCH/mkjar.py" javasrc "$W/java" "$SHADED_CLASSES"
			mkdir -p "$W/java/stubs-out" "$W/java/out"
			find "$W/java/stubs" -name '*.java' >"$W/java/stubs.list"
			javac -nowarn -d "$W/java/stubs-out" @"$W/java/stubs.list"
			find "$W/java/src" -name '*.java' >"$W/java/src.list"
			javac -J-Xmx2g -nowarn --release 11 \
				-cp "$W/java/stubs-out" -d "$W/java/out" \
				@"$W/java/src.list"
			"$PY" "$BENCH/mkjar.py" shaded "$SHADED.tmp" \
				"$SHADED_CLASSES" "$SHADED_MIB" "$W/java/out"
			rm -rf "$W/java"
		else
			"$PY" "$BENCH/mkjar.py" shaded "$SHADED.tmp" \
				"$SHADED_CLASSES" "$SHADED_MIB"
		fi
		mv -f "$SHADED.tmp" "$SHADED"
	fi
	say "bench: inspection"
	cat_null "$SHADED"
	for t in native pt cmfs; do mkenv "$t" shaded; done
	r=1
	while [ $r -le "$ROUNDS" ]; do
		# The last round's uploads are written back first: neither
		# side is timed against the other's dirty pages.
		sync
		timed inspect cmfs inspect_jar "$SHADED"
		if command -v jdeps >/dev/null 2>&1; then
			sync
			timed inspect jdeps jdeps_jar "$SHADED"
		fi
		# Bytes of their own each round: cmfs keeps a blob's
		# inspection, and the same bytes again would not be inspected.
		"$PY" "$BENCH/mkjar.py" variant "$SHADED" "$W/shaded-$r.jar" \
			"bench round $r"
		cat_null "$W/shaded-$r.jar"
		for t in $(order $r); do
			d=$(root "$t")/envs/shaded/artifacts
			rm -f "$d/shaded.jar"
			sync
			timed shaded-up "$t" cp_file "$W/shaded-$r.jar" \
				"$d/shaded.jar"
		done
		rm -f "$W/shaded-$r.jar"
		r=$((r + 1))
	done
	sed -n '1,3p' "$W/inspect.out" >"$W/inspect.head"
	record rss-after-inspect cmfs "$(rss VmRSS)"
	record hwm-after-inspect cmfs "$(rss VmHWM)"
fi

# ---- 5. resolution ----

# res_lists PHASE R: the files read in round R of PHASE: RES_SAMPLES
# tables of their own (res.idx holds enough for every phase and round),
# so that "cold" reads tables that no earlier measurement read.
res_lists() {
	k=$(( ($1 * ROUNDS + $2 - 1) * RES_SAMPLES ))
	sed -n "$((k + 1)),$((k + RES_SAMPLES))p" "$W/res.idx" >"$W/res.cur"
	awk -v d="$M/envs/res/tables/resolved" \
		'{ printf "%s/t%07d.jars\n", d, $1 }' "$W/res.cur" \
		>"$W/res-cmfs.list"
	for t in native pt; do
		awk -v d="$(root "$t")/envs/res/tables" \
			'{ printf "%s/t%07d.sql\n", d, $1 }' "$W/res.cur" \
			>"$W/res-$t.list"
	done
}

# res_measure PHASE N: latency of reading RES_SAMPLES resolved files
# (cmfs) and the same tables' small files (native, passthrough), ROUNDS
# times, alternating, each round on tables not read before: cold (page
# cache and dentries dropped, the tables not read since), recold (caches
# dropped again: the daemon resolved them a moment ago) and warm.
res_measure() {
	r=1
	while [ $r -le "$ROUNDS" ]; do
		res_lists "$2" "$r"
		for w in cold recold warm; do
			if [ $w != warm ]; then
				[ "$COLD" = 1 ] || continue
				dropc
			fi
			for t in $(order $r); do
				"$W/lat" <"$W/res-$t.list" >"$W/lat.out"
				for f in p50 p99; do
					v=$(sed -n "s/.* $f=\([0-9.]*\).*/\1/p" \
						"$W/lat.out")
					record "res-$1-$w-$f" "$t" "$v"
				done
				e=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' \
					"$W/lat.out")
				[ "$e" = 0 ] || say "warning: $e errors reading" \
					"$t's files ($1, $w)"
				record "res-$1-errors" "$t" "$e"
			done
		done
		r=$((r + 1))
	done
}

# res_upload DIR...: upload the JAR directories and their labels into
# the resolution environment, in parallel.
res_upload() {
	pids=
	for d in "$@"; do
		(cp_tree "$d" "$M/envs/res/artifacts" &&
			restore "$M/envs/res/artifacts" "$d.labels") &
		pids="$pids $!"
	done
	rc=0
	for p in $pids; do wait "$p" || rc=1; done
	return $rc
}

if has resolve; then
	say "bench: resolution (making $RES_ARTS JARs, $RES_TABLES tables)"
	"$PY" "$BENCH/mkjar.py" small "$IN/res/first" "$RES_FIRST" res 1
	rest=$((RES_ARTS - RES_FIRST))
	chunk=$(((rest + RES_PARALLEL - 1) / RES_PARALLEL))
	set --
	i=0
	while [ $i -lt "$RES_PARALLEL" ] && [ "$rest" -gt 0 ]; do
		from=$((RES_FIRST + 1 + i * chunk))
		cnt=$chunk
		[ $((from + cnt - 1)) -le "$RES_ARTS" ] ||
			cnt=$((RES_ARTS - from + 1))
		if [ "$cnt" -gt 0 ]; then
			"$PY" "$BENCH/mkjar.py" small "$IN/res/rest$i" "$cnt" \
				res "$from"
			set -- "$@" "$IN/res/rest$i"
		fi
		i=$((i + 1))
	done
	"$PY" "$BENCH/mkjar.py" tables "$IN/res/sql" "$RES_TABLES" \
		"$RES_FIRST" res
	for t in native pt cmfs; do mkenv "$t" res; done
	fresh "$IN/res/sql"
	for t in native pt; do cp_tree "$IN/res/sql" "$(root "$t")/envs/res/tables"; done
	say "bench: resolution: $RES_FIRST artifacts, $RES_TABLES tables"
	timed res-populate-first cmfs res_upload "$IN/res/first"
	timed res-populate-tables cmfs cp_tree "$IN/res/sql" "$M/envs/res/tables"
	# Tables for every round of both phases, none read twice.
	if [ $((RES_SAMPLES * ROUNDS * 2)) -gt "$RES_TABLES" ]; then
		RES_SAMPLES=$((RES_TABLES / (ROUNDS * 2)))
		say "bench: RES_SAMPLES lowered to $RES_SAMPLES: each" \
			"round reads tables of its own"
	fi
	shuf -i "1-$RES_TABLES" -n $((RES_SAMPLES * ROUNDS * 2)) \
		--random-source="$IN/res/first.labels" >"$W/res.idx"
	res_measure small 0
	head -n 1 "$W/res-cmfs.list" | xargs cat >"$W/res.sample" 2>&1 || true
	if [ $# -gt 0 ]; then
		say "bench: resolution: uploading $rest more artifacts" \
			"($RES_PARALLEL in parallel)"
		timed res-populate-rest cmfs res_upload "$@"
	fi
	record res-artifacts cmfs "$(find "$M/envs/res/artifacts" -type f | wc -l)"
	res_measure large 1
	# Every table is resolved for this, and a FUSE request in flight
	# cannot be interrupted: USED_BY=0 skips it when that takes long.
	if [ "$USED_BY" = 1 ]; then
		timed used-by cmfs getfattr -n user.cmfs.used-by \
			"$M/envs/res/artifacts/res0000001.jar" >/dev/null
	fi
	record rss-after-resolve cmfs "$(rss VmRSS)"
	record hwm-after-resolve cmfs "$(rss VmHWM)"
fi

record rss-peak cmfs "$(rss VmHWM)"
record rss-now cmfs "$(rss VmRSS)"
CPU=$(cpu_s)

if [ "$REQMIX" = 1 ]; then
	CMFS=$CMFS sh "$BENCH/reqmix.sh" >"$W/reqmix.md" 2>&1 ||
		say "warning: reqmix.sh failed"
fi

# ---- save the run, then the report ----

[ ! -f "$W/inspect.head" ] || cp "$W/inspect.head" "$SAVE/inspect.head"
[ ! -f "$W/res.sample" ] || head -n 1 "$W/res.sample" >"$SAVE/res.sample"
[ ! -s "$W/reqmix.md" ] || cp "$W/reqmix.md" "$SAVE/reqmix.md"
dev=$(findmnt -no SOURCE,FSTYPE -T "$W" | head -n 1)
{
	for v in ROUNDS N BIG_MIB RES_ARTS RES_TABLES RES_FIRST RES_SAMPLES \
		RES_PARALLEL SHADED_CLASSES SHADED_MIB BENCH_TMP PT_OPTS \
		CMFS_INI_EXTRA COLD WORKLOADS USED_BY; do
		x=$(eval "printf '%s' \"\${$v}\"")
		printf "%s='%s'\n" "$v" "$x"
	done
	printf "WORKLOADS_SET='%s'\nCPU='%s'\n" "$WORKLOADS_SET" "$CPU"
	printf "PT_NAME='%s'\n" "$(basename "$PT_SRC")"
	[ "$CMFS" = "$TOP/cmfs" ] || printf "CMFS='%s'\n" "$CMFS"
	printf "DEV='%s'\n" "$dev"
	# A journal matters to what an fsync makes durable (findings.md).
	journal=$(journal_of "$W")
	printf "DISK='%s, ext4 journal: %s'\n" "$(lsblk -dno MODEL,ROTA,SIZE "${dev%% *}" 2>/dev/null |
		awk '{ printf "model=%s rotational=%s size=%s", (NF > 2 ? $1 : "?"), $(NF - 1), $NF }')" "$journal"
	printf "REV='%s'\n" "$REV"
	printf "BINSUM='%s'\n" "$(sha256sum "$CMFS" | cut -c1-12)"
	printf "DATE='%s'\n" "$(date -u '+%Y-%m-%d %H:%M UTC')"
} >"$SAVE/knobs"
OUT=$OUT sh "$BENCH/report.sh" "$SAVE"
