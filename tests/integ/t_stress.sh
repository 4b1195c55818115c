#!/bin/sh
# Stress: 8 processes for a bounded time uploading, relabelling, writing
# tables, resolving and deleting in one environment; then the catalog is
# checked against a model of what succeeded.  Then a kill -9 loop under
# the same load: after each remount, nothing is lost or half-done.
. "$(dirname "$0")/lib.sh"
SECONDS_PER_RUN=${STRESS_SECONDS:-15}
mount_cmfs

# Handles that live for one write: scratch files, which close without a
# FLUSH, from every CPU at once.  Their RELEASE may come while the write
# that was just answered still holds the handle (fs/file.c, fh_free): the
# sanitized pass, over io_uring, found it here.
mkdir "$M/envs/scratch"
NCPU=$(getconf _NPROCESSORS_ONLN)
[ "$NCPU" -le 4 ] || NCPU=4
pids=
c=0
while [ "$c" -lt "$NCPU" ]; do
	for j in 1 2; do
		# shellcheck disable=SC2016 # the inner script's variables
		taskset -c "$c" sh -c 'i=0
			while [ $i -lt 1000 ]; do
				printf x >"$1/s$2.$i.swp" || exit 1
				i=$((i + 1))
			done' sh "$M/envs/scratch/tables" "$c$j" &
		pids="$pids $!"
	done
	c=$((c + 1))
done
ok=0
for p in $pids; do
	if wait "$p"; then ok=$((ok + 1)); fi
done
eq "one-write handles from every CPU at once" $((NCPU * 2)) "$ok"
eq "all of them there" $((NCPU * 2000)) \
	"$(find "$M/envs/scratch/tables" -name '*.swp' | wc -l)"

# Labels and stats of an artifact while another client uploads it again
# and again: each may find the upload's handle just as its close
# releases it (fs/ops.c, live_writer), and a label must land either with
# the upload or in the catalog, never be lost.
S=$M/envs/scratch/artifacts
head -c 3000 /dev/urandom >"$T/again.bin"
cp "$T/again.bin" "$S/again.bin"
taskset -c 0 sh -c 'i=0
	while [ $i -lt 300 ]; do
		cp "$1" "$2" || exit 1
		i=$((i + 1))
	done' sh "$T/again.bin" "$S/again.bin" &
up=$!
taskset -c "$((NCPU - 1))" sh -c 'i=0
	while [ $i -lt 300 ]; do
		stat "$1" >/dev/null && getfattr -d "$1" >/dev/null || exit 1
		i=$((i + 1))
	done' sh "$S/again.bin" &
st=$!
labels=0
i=0
while [ $i -lt 500 ]; do
	if taskset -c "$((NCPU - 1))" setfattr -n user.round -v "r$i" "$S/again.bin"; then
		labels=$((labels + 1))
	fi
	i=$((i + 1))
done
check "300 uploads of one artifact" wait "$up"
check "stat and getfattr of it meanwhile" wait "$st"
eq "500 labels of it meanwhile" 500 "$labels"
eq "the last label stays" r499 \
	"$(getfattr --only-values -n user.round "$S/again.bin")"
check "and its bytes" cmp "$S/again.bin" "$T/again.bin"

# Renames back and forth while another client stats and reads the labels
# of the same artifact: a GETATTR through its inode takes none of the
# kernel's rename locks (fs/path.c, retire).
cp "$T/again.bin" "$S/r.bin"
taskset -c 0 sh -c 'i=0
	while [ $i -lt 300 ]; do
		mv "$1/r.bin" "$1/q.bin" && mv "$1/q.bin" "$1/r.bin" || exit 1
		i=$((i + 1))
	done' sh "$S" &
mvp=$!
taskset -c "$((NCPU - 1))" sh -c 'i=0
	while [ $i -lt 1000 ]; do
		# The names come and go under ls -l and stat; the
		# directory must answer throughout.
		stat "$1" >/dev/null || exit 1
		ls -l "$1" >/dev/null 2>&1
		stat "$1/r.bin" "$1/q.bin" >/dev/null 2>&1
		getfattr -d "$1/r.bin" >/dev/null 2>&1
		i=$((i + 1))
	done' sh "$S" &
stp=$!
check "600 renames of one artifact" wait "$mvp"
check "ls -l and stat of it meanwhile, the directory answering" wait "$stp"
check "its bytes under its name" cmp "$S/r.bin" "$T/again.bin"
P=$M/envs/prod
A=$P/artifacts
mkdir "$P"
cp "$FIX/mongodb.jar" "$A/mongodb.jar"
setfattr -n user.cmf.confluent.io/sql-artifact-type -v connector "$A/mongodb.jar"
setfattr -n user.cmf.confluent.io/sql-artifact-identifier -v mongodb "$A/mongodb.jar"
for i in 1 2 3 4 5 6 7 8; do
	head -c $((1000 + i * 300)) /dev/urandom >"$T/data$i.a"
	head -c $((2000 + i * 300)) /dev/urandom >"$T/data$i.b"
	# Over inline_max (64K): a blob file, not a row of the catalog.
	head -c $((70000 + i * 300)) /dev/urandom >"$T/data$i.c"
done

# worker I END: its own names; logs each success as "op name value".
worker() {
	i=$1
	end=$2
	log=$T/w$i.log
	: >"$log"
	k=0
	while [ "$(date +%s)" -lt "$end" ] && mountpoint -q "$M"; do
		k=$((k + 1))
		f=$T/data$i.$(case $((k % 4)) in 0) echo a ;; 2) echo c ;; *) echo b ;; esac)
		name=w$i-$((k % 3)).bin
		if cp "$f" "$A/$name" 2>/dev/null; then
			echo "upload $name $(sha256sum <"$f" | cut -d' ' -f1)" >>"$log"
		fi
		if setfattr -n user.round -v "r$k" "$A/$name" 2>/dev/null; then
			echo "label $name r$k" >>"$log"
		fi
		t=t$i
		if printf "CREATE TABLE %s (a INT, k%d INT) WITH ('connector' = 'mongodb')" \
			"$t" "$k" >"$P/tables/$t.sql" 2>/dev/null; then
			echo "table $t k$k" >>"$log"
		fi
		cat "$P/tables/resolved/$t.jars" >/dev/null 2>>"$T/w$i.err"
		if [ $((k % 5)) -eq 0 ] && rm "$A/$name" 2>/dev/null; then
			echo "delete $name -" >>"$log"
		fi
	done
}

# Start the workers; their pids go to $WORKERS (a bare `wait` would
# wait for the daemon too).
run_load() {
	end=$(($(date +%s) + $1))
	WORKERS=
	for i in 1 2 3 4 5 6 7 8; do
		worker "$i" "$end" &
		WORKERS="$WORKERS $!"
	done
}

wait_load() {
	for w in $WORKERS; do wait "$w"; done
}

# The expected state from the logs: last upload after the last delete,
# last label, last table.
expected() {
	cat "$T"/w*.log | awk '
		$1 == "upload" { up[$2] = $3; lab[$2] = "" }
		$1 == "delete" { up[$2] = "-"; lab[$2] = "" }
		$1 == "label"  { lab[$2] = $3 }
		$1 == "table"  { tb[$2] = $3 }
		END {
			for (n in up) print "art " n " " up[n] " " lab[n]
			for (t in tb) print "table " t " " tb[t]
		}' | sort
}

actual() {
	for n in $(cut -d' ' -f2 "$T"/w*.log | sort -u | grep '\.bin$'); do
		if [ -e "$A/$n" ]; then
			s=$(getfattr --only-values -n user.cmfs.sha256 "$A/$n" 2>/dev/null)
			l=$(getfattr --only-values -n user.round "$A/$n" 2>/dev/null)
			echo "art $n $s $l"
		else
			echo "art $n - "
		fi
	done
	for t in 1 2 3 4 5 6 7 8; do
		[ -e "$P/tables/t$t.sql" ] &&
			echo "table t$t $(sed -n 's/.* \(k[0-9]*\) INT.*/\1/p' "$P/tables/t$t.sql")"
	done
	true
}

run_load "$SECONDS_PER_RUN"
wait_load
expected | sed 's/ $//' >"$T/exp"
actual | sed 's/ $//' | sort >"$T/act"
check "the catalog matches what the workers saw succeed" cmp "$T/exp" "$T/act"
if ! cmp -s "$T/exp" "$T/act"; then diff "$T/exp" "$T/act" | head -n 20; fi
eq "every worker did work" 8 "$(for f in "$T"/w*.log; do [ -s "$f" ] && echo; done | wc -l | tr -d ' ')"
eq "resolution only failed as expected" "" \
	"$(cat "$T"/w*.err | grep -v -e 'Package not installed' -e 'No such file' || true)"
eq "catalog integrity" ok "$(sql 'PRAGMA integrity_check')"

# Blobs against the catalog: every version's blob exists with its hash,
# a row of the catalog (inline) or else a file.
verify_blobs() {
	bad=0
	for s in $(sql 'SELECT DISTINCT sha256 FROM versions'); do
		b=$STORE/blobs/$(printf %.2s "$s")/$s
		rm -f "$T/row"
		sql "SELECT writefile('$T/row', bytes) FROM inline_blobs
			WHERE sha256 = '$s'" >/dev/null
		if [ -f "$T/row" ]; then
			b=$T/row
		fi
		if [ ! -f "$b" ] || [ "$(sha256sum <"$b" | cut -d' ' -f1)" != "$s" ]; then
			bad=$((bad + 1))
		fi
	done
	echo "$bad"
}
# Blobs in the store: files and rows.
nblobs() {
	echo $(($(find "$STORE/blobs" -type f | wc -l) + $(sql 'SELECT count(*) FROM inline_blobs')))
}
eq "every blob is whole" 0 "$(verify_blobs)"
check "blobs of both kinds" test "$(sql 'SELECT count(*) FROM inline_blobs')" -gt 0 \
	-a "$(find "$STORE/blobs" -type f | wc -l)" -gt 0

# The kill -9 loop.
round=1
while [ $round -le 3 ]; do
	run_load 30
	sleep "$(awk -v r="$round" 'BEGIN { srand(); print 1 + rand() * 3 }')"
	kill -9 "$PID"
	wait "$PID" 2>/dev/null
	PID=
	wait_load 2>/dev/null
	fusermount3 -uz "$M" 2>/dev/null
	eq "kill $round: catalog integrity" ok "$(sql 'PRAGMA integrity_check')"
	eq "kill $round: every blob is whole" 0 "$(verify_blobs)"
	mount_cmfs
	eq "kill $round: no orphan blob after the restart" \
		"$(sql 'SELECT count(DISTINCT sha256) FROM versions')" \
		"$(nblobs)"
	check "kill $round: the mount works" cmp "$FIX/mongodb.jar" "$A/mongodb.jar"
	round=$((round + 1))
done
finish
