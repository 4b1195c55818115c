#!/bin/sh
# [catalog] url: the catalog in PostgreSQL (a private cluster, pg.sh),
# through real mounts, one host at a time (t_pg2.sh: several at once).
# Skips only without PostgreSQL's binaries.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg.sh"
pg_start
UNIT=$TOP/${CMFS_BUILD:-build}/tests/test_catalog_pg

# The backend alone, against this server (two connections at once among
# its tests).
out=$(CMFS_TEST_PG_URL=$PG_URL "$UNIT" 2>&1)
contains "the backend's unit tests pass" " 0 failed" "$(printf '%s\n' "$out" | tail -n 1)"
check "and ran" test "$(printf '%s\n' "$out" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')" -gt 100
[ "$FAIL" -eq 0 ] || printf '%s\n' "$out" | tail -n 20

# A fresh database for the mounts.
pg_sql "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null 2>&1
INI_EXTRA="[catalog]
url = $PG_URL"
mount_cmfs
contains "the log names the catalog" "catalog: PostgreSQL at postgresql://cmfs@/postgres" "$(cat "$LOG")"
eq "the schema is created at the first mount" 5 "$(pg_sql 'SELECT version FROM cmfs_schema')"
check "no catalog.db in the store" test ! -e "$STORE/catalog.db"

P=$M/envs/prod
A=$P/artifacts
TB=$P/tables
R=$TB/resolved
TYPE=user.cmf.confluent.io/sql-artifact-type
IDENT=user.cmf.confluent.io/sql-artifact-identifier
mkdir "$P"
eq "the environment is a row" prod "$(pg_sql 'SELECT name FROM envs')"

# An upload, its labels, its factories.
cp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
check "labelled connector" setfattr -n $TYPE -v connector "$A/mongodb-connector.jar"
check "labelled mongodb" setfattr -n $IDENT -v mongodb "$A/mongodb-connector.jar"
eq "the version is a row" "1|$(sha256sum <"$FIX/mongodb.jar" | cut -c1-64)" \
	"$(pg_sql 'SELECT n, sha256 FROM versions')"
eq "the labels are rows" 2 "$(pg_sql 'SELECT count(*) FROM labels')"
contains "user.cmfs.factories" "mongodb" "$(getfattr --only-values -n user.cmfs.factories "$A/mongodb-connector.jar")"
check "the bytes read back" cmp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"

# A table resolved against them.
cp "$TOP/tests/ddl/valid/004-mongodb-orders.sql" "$TB/orders.sql"
eq "the table resolves" "$P/versions/mongodb-connector.jar/1.jar" "$(cat "$R/orders.jars")"
eq "the table is a row" orders "$(pg_sql 'SELECT name FROM tables')"
eq "its options are rows" mongodb \
	"$(pg_sql "SELECT o.value FROM tab_options o JOIN tables t ON t.id = o.table_id WHERE t.name = 'orders' AND o.key = 'connector'")"

# The options a factory declares are kept, and a table's are checked
# against them (issue 32), as on SQLite (t_options.sh).
cp "$FIX/options.jar" "$A/opts.jar"
check "labelled connector" setfattr -n $TYPE -v connector "$A/opts.jar"
check "labelled opts" setfattr -n $IDENT -v opts "$A/opts.jar"
check "the declared options are rows" test "$(pg_sql 'SELECT count(*) FROM factory_options')" -gt 10
printf "CREATE TABLE typo (a INT) WITH ('connector' = 'opts', 'hostname' = 'db', 'scan.startup.mod' = 'earliest-offset')" >"$TB/typo.sql"
errno_is "an option typo on a PostgreSQL catalog: EINVAL" EINVAL read "$R/typo.jars"
eq "the key and the nearest known key" \
	"table typo: option 'scan.startup.mod' is not one that connector 'opts' declares: did you mean 'scan.startup.mode'?" \
	"$(getfattr --only-values -n user.cmfs.error "$R/typo.jars" 2>/dev/null)"
printf "CREATE TABLE okopts (a INT) WITH ('connector' = 'opts', 'hostname' = 'db', 'scan.startup.mode' = 'earliest-offset')" >"$TB/okopts.sql"
eq "the right key resolves" "$P/versions/opts.jar/1.jar" "$(cat "$R/okopts.jars")"
rm "$TB/typo.sql" "$TB/okopts.sql" "$A/opts.jar"

# Versions: new bytes, a new number; the same bytes, none.
cp "$DATA/mongodb-v2.jar" "$A/mongodb-connector.jar"
cp "$DATA/mongodb-v2.jar" "$A/mongodb-connector.jar"
eq "two versions" "1.jar 2.jar" "$(ls "$P/versions/mongodb-connector.jar" | tr '\n' ' ' | sed 's/ $//')"
eq "the new version is resolved" "$P/versions/mongodb-connector.jar/2.jar" "$(cat "$R/orders.jars")"
check "the pinned old path reads the old bytes" cmp "$FIX/mongodb.jar" "$P/versions/mongodb-connector.jar/1.jar"

# Uploads of one artifact from several processes at once: one number each.
# (The first upload of a name alone: creates of one new name at once are
# refused but one, EEXIST, whatever the catalog.)
head -c 200000 /dev/urandom >"$T/first.bin"
cp "$T/first.bin" "$A/blob.bin"
i=0
pids=
while [ $i -lt 8 ]; do
	head -c 200000 /dev/urandom >"$T/r$i.bin"
	cp "$T/r$i.bin" "$A/blob.bin" &
	pids="$pids $!"
	i=$((i + 1))
done
rcs=
for p in $pids; do
	wait "$p"
	rcs="$rcs$?"
done
eq "eight uploads at once succeed" 00000000 "$rcs"
eq "nine versions" 9 "$(ls "$P/versions/blob.bin" | wc -l | tr -d ' ')"
eq "numbered 1 to 9" "1 9 9" "$(pg_sql "SELECT min(v.n), max(v.n), count(DISTINCT v.n) FROM versions v JOIN artifacts a ON a.id = v.artifact_id WHERE a.name = 'blob.bin'" | tr '|' ' ')"
# Blobs above inline_max are bytes of the database too, in chunks.
S1=$(sha256sum <"$T/r1.bin" | cut -c1-64)
eq "a blob is a row of the database" "200000" "$(pg_sql "SELECT size FROM blobs WHERE sha256 = '$S1'")"
eq "its bytes are chunks of it" "$S1" "$(pg_sql "SELECT string_agg(bytes, ''::bytea ORDER BY seq) FROM blob_chunks WHERE sha256 = '$S1'" | sed 's/^\\x//' | xxd -r -p | sha256sum | cut -c1-64)"

# rm, then the name goes on counting.
rm "$A/blob.bin"
check_not "rm: gone" test -e "$A/blob.bin"
eq "its rows are gone" 0 "$(pg_sql "SELECT count(*) FROM artifacts WHERE name = 'blob.bin'")"
eq "and its blobs' bytes" 0 "$(pg_sql "SELECT count(*) FROM blob_chunks WHERE sha256 = '$S1'")"
cp "$T/r0.bin" "$A/blob.bin"
eq "a new upload of the name is version 10" 10.bin "$(ls "$P/versions/blob.bin")"
contains "events are kept in the database" "action=upload artifact=blob.bin version=10" "$(cat "$P/events")"

# Another host's store (t_pg2.sh mounts two at once).
M2=$T/mnt2
STORE2=$T/store2
mkdir -p "$M2"
printf '[store]\npath = %s\n[catalog]\nurl = %s\n' "$STORE2" "$PG_URL" >"$T/b.ini"

# The catalog outlives the mount: the same store mounts it again.
errno_is "a refused rewrite" EINVAL write "$TB/orders.sql" "CREATE TABLE orders (a INT"
remount_cmfs
eq "after a remount, the artifacts" "blob.bin mongodb-connector.jar" "$(ls "$A" | tr '\n' ' ' | sed 's/ $//')"
eq "and the resolution" "$P/versions/mongodb-connector.jar/2.jar" "$(cat "$R/orders.jars")"
eq "and the labels" mongodb "$(getfattr --only-values -n $IDENT "$A/mongodb-connector.jar")"
contains "and why the rewrite was refused" "1:27: expected" \
	"$(getfattr --absolute-names --only-values -n user.cmfs.error "$TB/orders.sql" 2>&1)"
check "a good rewrite" cp "$TOP/tests/ddl/valid/004-mongodb-orders.sql" "$TB/orders.sql"
eq "clears it" "" "$(getfattr --absolute-names --only-values -n user.cmfs.error "$TB/orders.sql" 2>&1)"
umount_cmfs

# Another store on the database: it copies the blobs it reads from there,
# each checked against its SHA-256.
check "another store mounts the database" mount_second "$T/b.ini" "$M2"
B10=$(pg_sql "SELECT v.sha256 FROM versions v JOIN artifacts a ON a.id = v.artifact_id WHERE a.name = 'blob.bin'")
check_not "without the blob" test -e "$STORE2/blobs/$(printf %.2s "$B10")/$B10"
check "its bytes read back there" cmp "$T/r0.bin" "$M2/envs/prod/versions/blob.bin/10.bin"
check "a copy is now in that store" cmp "$T/r0.bin" "$STORE2/blobs/$(printf %.2s "$B10")/$B10"
check "and the JAR" cmp "$DATA/mongodb-v2.jar" "$M2/envs/prod/versions/mongodb-connector.jar/2.jar"
umount_second "$M2"
# A store that has a catalog.db of its own is not mounted on a database.
mkdir -p "$STORE2"
: >"$STORE2/catalog.db"
contains "a store with its own catalog is refused" "has a catalog of its own" "$("$CMFS" -c "$T/b.ini" -f "$M2" 2>&1)"
rm -f "$STORE2/catalog.db"

# A catalog from schema 4: the bytes of its versions only in the store
# that mounted it (the one cmfs_store names).  Another store is refused
# until that one has mounted it once, which puts them in the database.
pg_sql "DELETE FROM blobs; INSERT INTO cmfs_store VALUES('$(hostname):$STORE')" >/dev/null
contains "another store is refused while the bytes are in one" "mount it from there once" "$("$CMFS" -c "$T/b.ini" -f "$M2" 2>&1)"
check_not "and is not mounted" mountpoint -q "$M2"
mount_cmfs
contains "the store that has them puts them in the database" "blobs of store $STORE in the catalog" "$(cat "$LOG")"
umount_cmfs
eq "every version's bytes are there" 0 "$(pg_sql "SELECT count(*) FROM versions v WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = v.sha256) AND NOT EXISTS (SELECT 1 FROM inline_blobs i WHERE i.sha256 = v.sha256)")"
rm -rf "$STORE2/blobs"
check "then another store mounts" mount_second "$T/b.ini" "$M2"
check "and reads them" cmp "$T/r0.bin" "$M2/envs/prod/versions/blob.bin/10.bin"
umount_second "$M2"

# fsck on the database: its blobs hashed from there.
out=$("$CMFS" fsck -c "$T/cmfs.ini" 2>&1)
eq "fsck of the database: clean" 0 "$?"
contains "it checked its versions" "3 versions" "$out"
# A chunk of a blob damaged in the database: its version is reported,
# and --repair takes it back.
BV=$(pg_sql "SELECT v.sha256 FROM versions v JOIN artifacts a ON a.id = v.artifact_id WHERE a.name = 'blob.bin'")
pg_sql "UPDATE blob_chunks SET bytes = overlay(bytes placing '\x00'::bytea from 7) WHERE sha256 = '$BV'" >/dev/null
out=$("$CMFS" fsck -c "$T/cmfs.ini" 2>&1)
eq "fsck finds the damage" 4 "$?"
contains "and names the version" "artifact blob.bin, version 10: blob $BV is corrupt" "$out"
out=$("$CMFS" fsck --repair -c "$T/cmfs.ini" 2>&1)
eq "fsck --repair repairs it" 1 "$?"
eq "the version is gone" 0 "$(pg_sql "SELECT count(*) FROM versions WHERE sha256 = '$BV'")"
eq "and its blob with it" 0 "$(pg_sql "SELECT count(*) FROM blobs WHERE sha256 = '$BV'")"
check "fsck is clean again" "$CMFS" fsck -c "$T/cmfs.ini"

# The server gone and back: writes fail at once with a reason, then work
# again without a remount.
mount_cmfs
check "blob.bin, uploaded again after the repair" cp "$T/r0.bin" "$A/blob.bin"
stat "$A/blob.bin" >/dev/null # (a failed look-up is an EIO the log does not name)
# A label and a resolution prepare their statements on this connection;
# those die with it, and must be prepared again on the next.
check "a label before the server goes" setfattr -n user.owner -v data "$A/blob.bin"
eq "a resolution before it goes" "$P/versions/mongodb-connector.jar/2.jar" "$(cat "$R/orders.jars")"
pg_stop
errno_is "a label while the server is down" EIO setxattr "$A/blob.bin" user.team data
i=0
while ! grep -q 'action=label .*errno=EIO' "$LOG" && [ $i -lt 40 ]; do
	sleep 0.05
	i=$((i + 1))
done
contains "the log says why" "reason=\"catalog postgresql://" "$(grep -F 'action=label' "$LOG" | tail -n 1)"
pg_start_again
check "after the server is back, a label" setfattr -n user.team -v data "$A/blob.bin"
eq "is in the catalog" 1 "$(pg_sql "SELECT count(*) FROM labels WHERE key = 'team'")"
eq "and a resolution (the label made it resolve again)" "$P/versions/mongodb-connector.jar/2.jar" "$(cat "$R/orders.jars")"

# export and import: the database's catalog out to a SQLite store, and
# that store's into another database, each the same export again.
out=$("$CMFS" export -c "$T/cmfs.ini" "$T/exp" 2>&1)
eq "export from the database beside its mount" 0 "$?"
contains "with everything" "exported 1 environments, 2 artifacts (3 versions," "$out"
umount_cmfs
check "import into a SQLite store" "$CMFS" import "$T/exp" "$T/sqlite"
check "export of it" "$CMFS" export "$T/sqlite" "$T/exp2"
# Two exports alike but for when they were made.
same_export() {
	grep -v creationTimestamp "$1/export.json" >"$T/a.json"
	grep -v creationTimestamp "$2/export.json" >"$T/b.json"
	diff -r -x export.json "$1" "$2" && diff "$T/a.json" "$T/b.json"
}
check "the same export" same_export "$T/exp" "$T/exp2"
pg_sql "CREATE DATABASE moved" >/dev/null
URL2=$(printf '%s' "$PG_URL" | sed 's|/postgres?|/moved?|')
printf '[store]\npath = %s\n[catalog]\nurl = %s\n' "$T/store3" "$URL2" >"$T/c.ini"
out=$("$CMFS" import "$T/exp2" -c "$T/c.ini" 2>&1)
eq "import of the SQLite store's export into a new database" 0 "$?"
contains "says what it read" "imported 1 environments, 2 artifacts (3 versions," "$out"
check "export of that" "$CMFS" export -c "$T/c.ini" "$T/exp3"
check "the same export again" same_export "$T/exp" "$T/exp3"
check_not "importing twice fails" "$CMFS" import "$T/exp2" -c "$T/c.ini"
check "the moved catalog mounts" mount_second "$T/c.ini" "$M2"
eq "the moved catalog mounts: its table resolves" "$M2/envs/prod/versions/mongodb-connector.jar/2.jar" \
	"$(cat "$M2/envs/prod/tables/resolved/orders.jars")"
check "and its bytes read back" cmp "$DATA/mongodb-v2.jar" "$M2/envs/prod/versions/mongodb-connector.jar/2.jar"
eq "with its labels" mongodb "$(getfattr --only-values -n $IDENT "$M2/envs/prod/artifacts/mongodb-connector.jar")"
umount_second "$M2"
finish
