#!/bin/sh
# cmfs fsck on stores damaged on purpose: a flipped byte in a blob, a
# deleted blob, an orphan blob, a truncated catalog.db; each with the
# verdict, the exit code (e2fsck's: 0 clean, 1 repaired, 4 left, 8 could
# not run, 16 usage), what --repair does and what the mount shows after.
# Also: a mounted store is checked read-only and not repaired.
. "$(dirname "$0")/lib.sh"
TYPE=user.cmf.confluent.io/sql-artifact-type
IDENT=user.cmf.confluent.io/sql-artifact-identifier
P=$M/envs/prod
A=$P/artifacts

# fsck ARGS...: run it; its output in $OUT, its exit code in $RC.
fsck() {
	OUT=$("$CMFS" fsck "$@" 2>&1)
	RC=$?
}

# The path of the blob of artifact $1 (its latest version).
blob_of() {
	s=$(getfattr --absolute-names --only-values -n user.cmfs.sha256 "$A/$1")
	printf '%s/blobs/%.2s/%s\n' "$STORE" "$s" "$s"
}

# Damage to blob files first: no blob is inline (rows of the catalog:
# at the end).
INI_EXTRA="inline_max = 0"
mount_cmfs
mkdir "$P"
cp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
setfattr -n $TYPE -v connector "$A/mongodb-connector.jar"
setfattr -n $IDENT -v mongodb "$A/mongodb-connector.jar"
cp "$DATA/mongodb-v2.jar" "$A/mongodb-connector.jar"
printf 'hello\n' >"$A/notes.txt"
cp "$TOP/tests/ddl/valid/004-mongodb-orders.sql" "$P/tables/orders.sql"
JAR2=$(blob_of mongodb-connector.jar)
NOTES=$(blob_of notes.txt)

# A mounted store: checked read-only.
fsck "$STORE"
eq "a mounted clean store: exit 0" 0 "$RC"
contains "it says the store is in use" "in use by pid $PID" "$OUT"
contains "and checked read-only" "checked read-only" "$OUT"
contains "a summary" "1 environments, 2 artifacts, 3 versions, 3 blobs" "$OUT"
printf 'X' | dd of="$NOTES" bs=1 seek=2 conv=notrunc 2>/dev/null
fsck --repair "$STORE"
eq "damage on a mounted store is left: exit 4" 4 "$RC"
contains "not repaired while mounted" "not repaired: the store is in use" "$OUT"
printf 'l' | dd of="$NOTES" bs=1 seek=2 conv=notrunc 2>/dev/null
umount_cmfs

fsck "$STORE"
eq "clean offline: exit 0" 0 "$RC"
contains "it says clean" ": clean" "$OUT"
fsck -c "$T/cmfs.ini"
eq "-c cmfs.ini finds the store" 0 "$RC"

# A flipped byte in version 2 of the JAR.
printf 'X' | dd of="$JAR2" bs=1 seek=100 conv=notrunc 2>/dev/null
fsck "$STORE"
eq "a flipped byte: exit 4" 4 "$RC"
contains "names env, artifact and version" \
	"env prod, artifact mongodb-connector.jar, version 2: blob" "$OUT"
contains "says it is corrupt" "is corrupt: its bytes hash to" "$OUT"
check "a check alone changes nothing" test -f "$JAR2"
fsck --repair "$STORE"
eq "repaired: exit 1" 1 "$RC"
contains "says what it did" \
	"repaired: removed version 2; mongodb-connector.jar is now at version 1" "$OUT"
fsck "$STORE"
eq "clean after the repair" 0 "$RC"
check_not "the corrupt blob is gone" test -e "$JAR2"

# A deleted blob: the only version of notes.txt.
rm "$NOTES"
fsck "$STORE"
eq "a deleted blob: exit 4" 4 "$RC"
contains "names it" "env prod, artifact notes.txt, version 1: blob" "$OUT"
contains "missing" "is missing" "$OUT"
fsck --repair "$STORE"
eq "repaired: exit 1" 1 "$RC"
contains "the artifact goes with its last version" \
	"removed version 1 and notes.txt, which has no good version left" "$OUT"

# An orphan blob.
printf 'orphan\n' >"$T/o"
S=$(sha256sum "$T/o" | cut -c1-64)
mkdir -p "$STORE/blobs/$(printf '%.2s' "$S")"
cp "$T/o" "$STORE/blobs/$(printf '%.2s' "$S")/$S"
fsck "$STORE"
eq "a blob the catalog does not know: exit 4" 4 "$RC"
contains "names it" "blob $S (7 bytes) is not known to the catalog" "$OUT"
# As an upload lists its blob before it links it, then is interrupted.
sql "INSERT INTO loose(sha256) VALUES('$S')"
fsck "$STORE"
eq "an orphan an interrupted upload leaves: exit 0" 0 "$RC"
contains "names the orphan" "blob $S (7 bytes) is an orphan" "$OUT"
contains "says what it is" \
	"left from an interrupted upload; the next mount removes it" "$OUT"
fsck --repair "$STORE"
eq "removed: still exit 0" 0 "$RC"
check_not "the orphan is removed" test -e "$STORE/blobs/$(printf '%.2s' "$S")/$S"
fsck "$STORE"
eq "clean again" 0 "$RC"

# What the mount shows after the repairs.
mount_cmfs
eq "the JAR is back at version 1" "1.jar" "$(ls "$P/versions/mongodb-connector.jar")"
check "its bytes are version 1's" cmp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
eq "its labels stay" connector "$(getfattr --absolute-names --only-values -n $TYPE "$A/mongodb-connector.jar")"
check_not "notes.txt is gone" test -e "$A/notes.txt"
contains "the repair is in events" "action=fsck-repair artifact=mongodb-connector.jar version=2" \
	"$(last_event prod 'action=fsck-repair artifact=mongodb')"
eq "the table still resolves" "$P/versions/mongodb-connector.jar/1.jar" \
	"$(cat "$P/tables/resolved/orders.jars")"
cp "$DATA/mongodb-v2.jar" "$A/mongodb-connector.jar"
eq "version 2 is never reused" "1.jar 3.jar" "$(ls "$P/versions/mongodb-connector.jar" | tr '\n' ' ' | sed 's/ $//')"
umount_cmfs

# A truncated catalog: reported, left alone, blobs untouched.
cp "$STORE/catalog.db" "$T/catalog.bak"
NB=$(find "$STORE/blobs" -type f | wc -l)
truncate -s "$(($(stat -c %s "$STORE/catalog.db") / 2))" "$STORE/catalog.db"
fsck --repair "$STORE"
eq "a truncated catalog: exit 4" 4 "$RC"
contains "says so" "malformed" "$OUT"
contains "and what to do" "restore the store from a backup" "$OUT"
eq "no blob was touched" "$NB" "$(find "$STORE/blobs" -type f | wc -l)"
: >"$STORE/catalog.db"
fsck --repair "$STORE"
eq "an emptied catalog: exit 4" 4 "$RC"
contains "says it holds no schema" "no cmfs schema" "$OUT"
eq "no blob was touched" "$NB" "$(find "$STORE/blobs" -type f | wc -l)"
eq "and fsck did not write a schema" 0 "$(stat -c %s "$STORE/catalog.db")"
cp "$T/catalog.bak" "$STORE/catalog.db"
fsck "$STORE"
eq "the catalog put back: clean" 0 "$RC"

# Inline blobs (the default for small files): bytes in the catalog.
INI_EXTRA=
mount_cmfs
printf 'inline\n' >"$A/small.txt"
S=$(getfattr --absolute-names --only-values -n user.cmfs.sha256 "$A/small.txt")
umount_cmfs
fsck "$STORE"
eq "inline blobs are checked: clean" 0 "$RC"
sql "UPDATE inline_blobs SET bytes = 'INLINE' || char(10) WHERE sha256 = '$S'"
fsck "$STORE"
eq "a corrupt inline blob: exit 4" 4 "$RC"
contains "names it" "env prod, artifact small.txt, version 1: blob $S is corrupt" "$OUT"
fsck --repair "$STORE"
eq "repaired: exit 1" 1 "$RC"
eq "its row went with its version" 0 \
	"$(sql "SELECT count(*) FROM inline_blobs WHERE sha256 = '$S'")"
sql "INSERT INTO inline_blobs(sha256, bytes) VALUES('$S', 'x')"
fsck --repair "$STORE"
contains "an orphan row" "blob $S (1 bytes) is an orphan" "$OUT"
eq "is removed" 0 "$(sql "SELECT count(*) FROM inline_blobs")"
mount_cmfs
check_not "small.txt is gone" test -e "$A/small.txt"
umount_cmfs

# Operational errors and usage.
fsck "$T/nonesuch"
eq "no such store: exit 8" 8 "$RC"
contains "says why" "No such file or directory" "$OUT"
fsck
eq "no store named: exit 16" 16 "$RC"
fsck --frobnicate "$STORE"
eq "an unknown option: exit 16" 16 "$RC"
contains "named" "cmfs fsck: unknown option --frobnicate" "$OUT"
fsck -c
eq "-c without its file: exit 16" 16 "$RC"
contains "said" "cmfs fsck: -c needs a value" "$OUT"
printf '[store]\npath = %s\n' "$STORE" >"$T/long.ini"
fsck "--config=$T/long.ini"
eq "the long form --config=FILE, as getopt_long reads it" 0 "$RC"
fsck "$STORE" "$STORE"
eq "two stores: exit 16" 16 "$RC"
finish
