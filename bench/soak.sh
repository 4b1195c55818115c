#!/bin/sh
# bench/soak.sh - does the daemon's memory stay flat under a long mixed
# workload?  Issue 7: "no growth over a 30-minute soak of the mixed
# workload".
#
#   make soak                               (as root; 30 minutes)
#   SOAK_MIN=5 sh bench/soak.sh             (a short one)
#
# One cmfs mount (embedded defaults + [store] path under $BENCH_TMP).  The
# workload, in a loop until SOAK_MIN minutes have passed, through the
# mount with the tools users use:
#   - cp of a batch of small factory JARs (new artifacts, then new
#     versions of the same ones), and their labels (setfattr --restore);
#   - cp of CREATE TABLE files for them, then cat of resolved/<t>.jars
#     and resolved/<t>.sql of every table, and of the JARs they list;
#   - ls -l, getfattr -d -R and find over the environment;
#   - cat of events; rm of half the tables and of a quarter of the
#     artifacts (another quarter each round: their versions and blobs are
#     freed), then the next round.
# The artifact and table names cycle, so the catalog stays about the same
# size (the events log aside, which is read a request at a time) and
# what grows is what the daemon keeps.
#
# Every SAMPLE_S seconds: VmRSS and VmHWM of the daemon.  Prints the
# samples, then RSS at the end of the warm-up (the first tenth of the run
# and at least 5 minutes, WARM_S seconds: caches filling), the last, the
# peak, and the growth between them; exits 1 when RSS grew by more than
# GROWTH_MAX_MIB (default 4) from the end of the warm-up to the end.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
CMFS=${CMFS:-$TOP/cmfs}
SOAK_MIN=${SOAK_MIN:-30}
SAMPLE_S=${SAMPLE_S:-30}
BATCH=${BATCH:-200}
GROWTH_MAX_MIB=${GROWTH_MAX_MIB:-4}
# A tenth of the run, and at least 5 minutes: the catalog's 16 MiB page
# cache takes about 4 minutes of this workload to fill.
WARM_S=${WARM_S:-$((SOAK_MIN * 6 > 300 ? SOAK_MIN * 6 : 300))}
BENCH_TMP=${BENCH_TMP:-/var/tmp}
PY=${PYTHON:-python3}

die() {
	printf 'soak: %s\n' "$*" >&2
	exit 2
}
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

[ "$(id -u)" = 0 ] || die "run as root (mounts)"
[ -x "$CMFS" ] || die "no $CMFS: run make first"
for t in setfattr getfattr fusermount3 mountpoint "$PY"; do
	command -v "$t" >/dev/null 2>&1 || die "needs $t"
done

W=$(mktemp -d "$BENCH_TMP/cmfs-soak.XXXXXX")
M=$W/mnt
CPID=
cleanup() {
	set +e
	if mountpoint -q "$M"; then fusermount3 -u "$M" || fusermount3 -uz "$M"; fi
	[ -z "$CPID" ] || wait "$CPID" 2>/dev/null
	uring_restore
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$M" "$W/store" "$W/in"

"$PY" "$TOP/bench/mkjar.py" small "$W/in/jars1" "$BATCH" soak 1
MKJAR_SEED=3 "$PY" "$TOP/bench/mkjar.py" small "$W/in/jars2" "$BATCH" soak 1
"$PY" "$TOP/bench/mkjar.py" tables "$W/in/sql" "$BATCH" "$BATCH" soak
printf '[store]\npath = %s/store\n' "$W" >"$W/cmfs.ini"
# As bench/run.sh: requests over io_uring unless URING=0.
uring_on
"$CMFS" -c "$W/cmfs.ini" -f "$M" >"$W/log" 2>&1 &
CPID=$!
i=0
until mountpoint -q "$M"; do
	i=$((i + 1))
	[ $i -lt 100 ] || die "cmfs did not mount: $(cat "$W/log")"
	sleep 0.1
done
E=$M/envs/soak
mkdir "$E"

rss() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$CPID/status"; }

# round N: odd rounds upload one set of bytes, even rounds the other, so
# every artifact still there gets a new version.
round() {
	j=$W/in/jars$(($1 % 2 + 1))
	cp -R "$j/." "$E/artifacts/"
	(cd "$E/artifacts" && setfattr --restore="$j.labels")
	cp -R "$W/in/sql/." "$E/tables/"
	for f in "$E"/tables/resolved/*; do cat "$f"; done >/dev/null
	# What a job does next: read the JARs each <t>.jars lists.
	cat "$E"/tables/resolved/*.jars | sort -u | xargs -r cat >/dev/null
	ls -l "$E/artifacts" "$E/tables" >/dev/null
	getfattr -d -R "$E/artifacts" >/dev/null 2>&1
	find "$E" >/dev/null
	cat "$E/events" >/dev/null
	ls "$E/tables" | grep '\.sql$' | awk 'NR % 2 == 0' |
		sed "s|^|$E/tables/|" | xargs -r rm -f
	# A different quarter each round: every artifact goes within four
	# rounds, so none piles up versions and the data stays the same size.
	ls "$E/artifacts" | awk -v r="$1" 'NR % 4 == r % 4' |
		sed "s|^|$E/artifacts/|" | xargs -r rm -f
}

echo "soak: cmfs $(uring_said "$W/log")"
start=$(date +%s)
end=$((start + SOAK_MIN * 60))
next=$start
first=
n=0
printf '%8s %6s %10s %10s\n' seconds round "rss_kib" "hwm_kib"
while [ "$(date +%s)" -lt "$end" ]; do
	n=$((n + 1))
	round "$n"
	now=$(date +%s)
	[ -n "$first" ] || [ "$now" -lt $((start + WARM_S)) ] ||
		first=$(rss VmRSS)
	if [ "$now" -ge "$next" ]; then
		printf '%8d %6d %10s %10s\n' $((now - start)) "$n" \
			"$(rss VmRSS)" "$(rss VmHWM)"
		next=$((now + SAMPLE_S))
	fi
done
last=$(rss VmRSS)
peak=$(rss VmHWM)
first=${first:-$last}
growth=$(((last - first) / 1024))
printf 'rounds=%d minutes=%d rss_after_warmup=%d KiB rss_end=%d KiB ' \
	"$n" "$SOAK_MIN" "$first" "$last"
printf 'peak=%d KiB growth=%d MiB (limit %d MiB)\n' "$peak" "$growth" \
	"$GROWTH_MAX_MIB"
[ "$growth" -le "$GROWTH_MAX_MIB" ]
