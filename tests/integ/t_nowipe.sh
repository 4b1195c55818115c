#!/bin/sh
# A store no mistake wipes: a mount whose catalog.db is missing, empty or
# another store's refuses to start and frees no blob; a second daemon on a
# store in use is refused while the first goes on; blobs the catalog does
# not know are kept, and a crash's leftovers (loose blobs) are still swept.
. "$(dirname "$0")/lib.sh"
A=$M/envs/prod/artifacts

# start_fails WHAT: a daemon on $STORE at $T/m2 must exit non-zero without
# mounting; its output in $OUT.
start_fails() {
	mkdir -p "$T/m2"
	OUT=$(timeout 20 "$CMFS" -c "$T/cmfs.ini" -f "$T/m2" 2>&1)
	rc=$?
	check_not "$1: the daemon exits non-zero" test "$rc" -eq 0
	check_not "$1: nothing mounted" mountpoint -q "$T/m2"
}

nblobs() {
	find "$STORE/blobs" -type f | wc -l
}

INI_EXTRA="inline_max = 0"
mount_cmfs
mkdir "$M/envs/prod"
cp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
printf 'one\n' >"$A/notes.txt"
printf 'two\n' >"$A/notes.txt"
umount_cmfs
eq "three blobs" 3 "$(nblobs)"

# A second daemon on a store in use.
mount_cmfs
start_fails "a second daemon on the same store"
contains "it names the one in use" "in use by another cmfs (pid $PID)" "$OUT"
eq "the first still serves" "two" "$(cat "$A/notes.txt")"
umount_cmfs

# catalog.db gone: refused, nothing freed, nothing created.
mv "$STORE/catalog.db" "$T/catalog.db.saved"
start_fails "catalog.db missing"
contains "it says why" "catalog.db is missing but blobs/ holds blobs" "$OUT"
eq "no blob freed (missing)" 3 "$(nblobs)"
check_not "no catalog.db created" test -e "$STORE/catalog.db"

# catalog.db empty.
: >"$STORE/catalog.db"
start_fails "catalog.db empty"
contains "it says why (empty)" "catalog.db is empty" "$OUT"
eq "no blob freed (empty)" 3 "$(nblobs)"

# Another store's catalog (a fresh one): knows none of them.
rm -f "$STORE/catalog.db"
mkdir -p "$T/other"
printf '[store]\npath = %s\n' "$T/other/store" >"$T/other.ini"
"$CMFS" -c "$T/other.ini" -f "$T/m2" >/dev/null 2>&1 &
p2=$!
i=0
while ! mountpoint -q "$T/m2" && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
fusermount3 -u "$T/m2"
wait "$p2"
cp "$T/other/store/catalog.db" "$STORE/catalog.db"
start_fails "another store's catalog"
contains "it says why (foreign)" "knows none of its 3 blobs" "$OUT"
eq "no blob freed (foreign)" 3 "$(nblobs)"

# The right catalog back: all there.
rm -f "$STORE/catalog.db" "$STORE/catalog.db-wal" "$STORE/catalog.db-shm"
mv "$T/catalog.db.saved" "$STORE/catalog.db"
mount_cmfs
eq "the artifact is back" "two" "$(cat "$A/notes.txt")"
cmp -s "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
check "the JAR is back, whole" test $? -eq 0
umount_cmfs

# A stray blob (not the catalog's) is kept; a loose one (a crash between
# an upload's link and its commit) is freed.
stray=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
loose=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
mkdir -p "$STORE/blobs/01" "$STORE/blobs/fe"
printf 'stray' >"$STORE/blobs/01/$stray"
printf 'loose' >"$STORE/blobs/fe/$loose"
sql "INSERT INTO loose(sha256) VALUES('$loose')"
mount_cmfs
check "the stray blob is kept" test -f "$STORE/blobs/01/$stray"
check_not "the loose blob is freed" test -f "$STORE/blobs/fe/$loose"
check "the log says the stray one is kept" \
	grep -q "not known to the catalog: kept" "$LOG"
eq "no loose row left" 0 "$(sql 'SELECT count(*) FROM loose')"
finish
