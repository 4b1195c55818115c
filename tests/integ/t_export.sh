#!/bin/sh
# cmfs export / cmfs import: a store built through the mount, exported
# (while mounted: a read snapshot), imported into a new store, checked
# with fsck, mounted at the same place, and compared with what users see:
# ls -lR (times aside), labels (getfattr -d), computed attributes, the
# tables, the events, and the resolutions.  Then what import refuses.
. "$(dirname "$0")/lib.sh"
TYPE=user.cmf.confluent.io/sql-artifact-type
IDENT=user.cmf.confluent.io/sql-artifact-identifier
P=$M/envs/prod
A=$P/artifacts
TB=$P/tables
EXP=$T/export

# What a user sees under the mount, into $T/$1.*: the mount path and the
# time of resolution masked.  The events are read first: reading
# resolved/ files adds resolutions to them.
snapshot() {
	out=$T/$1
	for e in prod staging empty; do
		cat "$M/envs/$e/events"
	done >"$out.events"
	ls -lR --time-style=+ "$M/envs" >"$out.ls"
	(cd "$M/envs" && getfattr -R -d -m '^user\.' . 2>/dev/null) >"$out.xattr"
	for f in "$M"/envs/*/artifacts/* "$M"/envs/*/versions/*/*; do
		for a in version sha256 factories error; do
			printf '%s %s: ' "${f#"$M"/}" "$a"
			getfattr --absolute-names --only-values -n "user.cmfs.$a" "$f" 2>&1
			echo
		done
	done >"$out.computed"
	for f in "$M"/envs/*/tables/*.sql "$M"/envs/*/tables/resolved/*; do
		printf '== %s\n' "${f#"$M"/}"
		cat "$f" 2>&1
	done | sed -e "s|$M|<mnt>|g" \
		-e 's/resolved [0-9][0-9T:.-]*Z$/resolved <time>/' >"$out.tables"
}

mount_cmfs
mkdir "$P" "$M/envs/staging" "$M/envs/empty"
cp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
setfattr -n $TYPE -v connector "$A/mongodb-connector.jar"
setfattr -n $IDENT -v mongodb "$A/mongodb-connector.jar"
cp "$DATA/mongodb-v2.jar" "$A/mongodb-connector.jar"
cp "$FIX/fmt-jsonish.jar" "$A/jsonish.jar"
setfattr -n $TYPE -v format "$A/jsonish.jar"
setfattr -n $IDENT -v json-ish "$A/jsonish.jar"
setfattr -n user.team -v data-eng "$A/jsonish.jar"
printf 'one\n' >"$A/notes.txt"
printf 'two\n' >"$A/notes.txt"
printf 'three\n' >"$A/notes.txt"
rm "$P/versions/notes.txt/3.txt"
cp "$DATA/plain-v1.jar" "$M/envs/staging/artifacts/lib.jar"
cp "$TOP/tests/ddl/valid/004-mongodb-orders.sql" "$TB/orders.sql"
printf "CREATE TABLE orders_eu (region STRING) WITH ('collection' = 'eu') LIKE orders" >"$TB/orders_eu.sql"
printf "CREATE TABLE j (a INT) WITH ('connector' = 'mongodb', 'format' = 'json-ish')" >"$TB/j.sql"
printf "CREATE TABLE k (a INT) WITH ('connector' = 'kafka')" >"$M/envs/staging/tables/k.sql"
check "a LIKE source may go; the merged options stay" rm "$TB/orders.sql"
cp "$TOP/tests/ddl/valid/004-mongodb-orders.sql" "$TB/orders.sql"
check "sed -i of the LIKE source" sed -i "s/'shop'/'shop2'/" "$TB/orders.sql"
eq "orders_eu still resolves" "$P/versions/mongodb-connector.jar/2.jar" "$(cat "$TB/resolved/orders_eu.jars")"

# Export while mounted; then the picture of the old store.  The line of
# a read (the resolution just above) reaches the catalog up to 50 ms
# later: an export is a snapshot of the catalog, so wait for it.
sleep 0.2
out=$("$CMFS" export "$STORE" "$EXP" 2>&1)
eq "export exits 0" 0 "$?"
contains "it says what it wrote" "exported 3 environments, 4 artifacts (6 versions," "$out"
check "export.json is there" test -f "$EXP/export.json"
check "the JAR of version 2 is there" cmp "$DATA/mongodb-v2.jar" \
	"$EXP/envs/prod/artifacts/mongodb-connector.jar/2/mongodb-connector.jar"
contains "artifact.json is CMF's" '"apiVersion": "cmf.confluent.io/v1"' \
	"$(cat "$EXP/envs/prod/artifacts/mongodb-connector.jar/2/artifact.json")"
contains "with the labels" '"cmf.confluent.io/sql-artifact-identifier": "mongodb"' \
	"$(cat "$EXP/envs/prod/artifacts/mongodb-connector.jar/2/artifact.json")"
check "the tables as written" cmp "$TB/orders_eu.sql" "$EXP/envs/prod/tables/orders_eu.sql"
snapshot old
umount_cmfs

# Import into a new store, fsck it, mount it where the old one was.
OLD=$STORE
STORE=$T/store2
out=$("$CMFS" import "$EXP" "$STORE" 2>&1)
eq "import exits 0" 0 "$?"
contains "it says what it read" "imported 3 environments, 4 artifacts (6 versions," "$out"
out=$("$CMFS" fsck "$STORE" 2>&1)
eq "fsck of the new store: clean" 0 "$?"
contains "with everything there" "3 environments, 4 artifacts, 6 versions" "$out"
check "the new store has a blob directory" test -d "$STORE/blobs"
eq "small blobs went into the catalog, as uploads put them" "" \
	"$(find "$STORE/blobs" -type f)"
mount_cmfs
check "and read back as they were" cmp "$DATA/mongodb-v2.jar" \
	"$P/versions/mongodb-connector.jar/2.jar"
snapshot new
for part in events ls xattr computed tables; do
	if cmp -s "$T/old.$part" "$T/new.$part"; then
		pass
	else
		fail "the new store's $part differ"
		diff "$T/old.$part" "$T/new.$part" | head -n 20
	fi
done
contains "the labels are there" 'user.team="data-eng"' "$(cat "$T/new.xattr")"
contains "the resolutions are there" "<mnt>/envs/prod/versions/jsonish.jar/1.jar" "$(cat "$T/new.tables")"
printf 'four\n' >"$A/notes.txt"
eq "a deleted version's number stays unused" "1.txt 2.txt 4.txt" \
	"$(ls "$P/versions/notes.txt" | tr '\n' ' ' | sed 's/ $//')"
umount_cmfs

# What import and export refuse.
out=$("$CMFS" import "$EXP" "$STORE" 2>&1)
eq "importing twice fails" 1 "$?"
contains "because the environments exist" "exists in store" "$out"
out=$("$CMFS" export "$OLD" "$EXP" 2>&1)
eq "exporting into a non-empty directory fails" 1 "$?"
contains "says so" "not empty" "$out"
cp -r "$EXP" "$T/bad"
printf 'x' >>"$T/bad/envs/prod/artifacts/jsonish.jar/1/jsonish.jar"
out=$("$CMFS" import "$T/bad" "$T/store3" 2>&1)
eq "tampered bytes are refused" 1 "$?"
contains "naming the file" "jsonish.jar/1/jsonish.jar:" "$out"
out=$("$CMFS" fsck "$T/store3" 2>&1)
eq "and the refused import left a clean, empty store" 0 "$?"
contains "empty" "0 environments, 0 artifacts, 0 versions, 0 blobs" "$out"
"$CMFS" import "$EXP" >/dev/null 2>&1
eq "usage: exit 2" 2 "$?"
finish
