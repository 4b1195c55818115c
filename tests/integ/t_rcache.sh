#!/bin/sh
# tables/resolved/<t>.jars kept in the kernel's page cache (fs/kcache.c,
# "Resolved files in the page cache"): served from it while the catalog
# stays as it was, and never read stale after a change has returned -
# not its bytes, not its size, not after a reload of the rules.  Mounted
# without allow_other: only a mount whose callers all see the same modes
# lets the kernel keep the attributes (or one with no rule on who reads:
# at the end).
. "$(dirname "$0")/lib.sh"
MOUNT_OPTS=
mount_cmfs
mkdir "$M/envs/prod"
P=$M/envs/prod
A=$P/artifacts
R=$P/tables/resolved
TYPE=user.cmf.confluent.io/sql-artifact-type
IDENT=user.cmf.confluent.io/sql-artifact-identifier

cp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
setfattr -n $TYPE -v connector "$A/mongodb-connector.jar"
setfattr -n $IDENT -v mongodb "$A/mongodb-connector.jar"
cp "$TOP/tests/ddl/valid/004-mongodb-orders.sql" "$P/tables/orders.sql"
long="$P/versions/mongodb-connector.jar/1.jar"
short="$P/versions/m.jar/1.jar"

# pages FILE: how many of FILE's pages the kernel's page cache holds.
pages() { fincore -n -o PAGES "$1" | tr -d ' '; }

eq "the first read" "$long" "$(cat "$R/orders.jars")"
eq "leaves its page in the page cache" 1 "$(pages "$R/orders.jars")"
n0=$(grep -c 'action=resolve table=orders' "$P/events")
eq "a read from the pages" "$long" "$(cat "$R/orders.jars")"
# A resolution whose result did not change is not written again (issue
# 34: a loop of reads must not grow the store); one that changed is.
eq "is not a second line in events: the same result" $n0 \
	"$(grep -c 'action=resolve table=orders' "$P/events")"

# Same size, other bytes: the pages of version 1 are not read again.
cp "$DATA/mongodb-v2.jar" "$A/mongodb-connector.jar"
eq "a new version: the new bytes" "${long%1.jar}2.jar" "$(cat "$R/orders.jars")"
eq "is a resolution in events" $((n0 + 1)) \
	"$(grep -c 'action=resolve table=orders' "$P/events")"
cp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
eq "and again" "${long%1.jar}3.jar" "$(cat "$R/orders.jars")"
rm "$P/versions/mongodb-connector.jar/2.jar" "$P/versions/mongodb-connector.jar/3.jar"
eq "the versions removed: version 1 again" "$long" "$(cat "$R/orders.jars")"

# A change alters the size: stat asks again at once, though the kernel
# was told to keep it for attr_timeout.
eq "stat before" $((${#long} + 1)) "$(stat -c %s "$R/orders.jars")"
mv "$A/mongodb-connector.jar" "$A/m.jar"
eq "stat right after a rename of the artifact" $((${#short} + 1)) \
	"$(stat -c %s "$R/orders.jars")"
eq "reads the new name" "$short" "$(cat "$R/orders.jars")"
mv "$A/m.jar" "$A/mongodb-connector.jar"
eq "stat right after the rename back" $((${#long} + 1)) \
	"$(stat -c %s "$R/orders.jars")"

# Pages of the short bytes, then the kernel told a longer size, then the
# short bytes again: a reader a byte at a time (never past the size it
# holds) must not read past them.
mv "$A/mongodb-connector.jar" "$A/m.jar"
eq "short bytes in the pages" "$short" "$(cat "$R/orders.jars")"
mv "$A/m.jar" "$A/mongodb-connector.jar"
# Until the daemon has the RELEASE of cat's handle (the kernel sends it
# after close(2) returned), a stat tells the size of the bytes that
# handle reads, and the kernel keeps none of it: ask again for up to 2 s
# (a size kept wrongly would stay for attr_timeout, 30 s).
i=0
while [ "$(stat -c %s "$R/orders.jars")" != $((${#long} + 1)) ] &&
	[ $i -lt 40 ]; do
	sleep 0.05
	i=$((i + 1))
done
eq "the longer size told" $((${#long} + 1)) "$(stat -c %s "$R/orders.jars")"
mv "$A/mongodb-connector.jar" "$A/m.jar"
eq "a byte at a time: the short bytes, nothing after them" \
	"$(printf '%s\n' "$short" | od -An -c)" \
	"$(dd if="$R/orders.jars" bs=1 2>/dev/null | od -An -c)"
eq "a byte at a time once more (from the pages)" \
	"$(printf '%s\n' "$short" | od -An -c)" \
	"$(dd if="$R/orders.jars" bs=1 2>/dev/null | od -An -c)"
mv "$A/m.jar" "$A/mongodb-connector.jar"
eq "and the long ones after them" \
	"$(printf '%s\n' "$long" | od -An -c)" \
	"$(dd if="$R/orders.jars" bs=1 2>/dev/null | od -An -c)"

# Two snapshots open at once: each reads its own bytes.
exec 3<"$R/orders.jars"
mv "$A/mongodb-connector.jar" "$A/m.jar"
exec 4<"$R/orders.jars"
eq "the handle opened before the change reads the old bytes" "$long" "$(cat <&3)"
eq "the one opened after it, the new" "$short" "$(cat <&4)"
exec 3<&- 4<&-
eq "both closed: the new bytes" "$short" "$(cat "$R/orders.jars")"
eq "and from the pages" "$short" "$(cat "$R/orders.jars")"
mv "$A/m.jar" "$A/mongodb-connector.jar"

# A map of a handle that reads around the pages fills them with its own
# bytes: the next open of other bytes (of the same size, so the kernel
# sees no new size) must not read them.
eq "version 1 in the pages" "$long" "$(cat "$R/orders.jars")"
exec 3<"$R/orders.jars"
cp "$DATA/mongodb-v2.jar" "$A/mongodb-connector.jar"
new=$(cat "$R/orders.jars")
eq "a new version, as long" ${#long} ${#new}
eq "a map of a handle opened while the old one reads" OK \
	"$("$SYSC" mmap "$R/orders.jars" "$T/map.out")"
eq "maps the new bytes" "$new" "$(cat "$T/map.out")"
exec 3<&-
rm "$P/versions/mongodb-connector.jar/${new##*/}"
# (dd reads a byte at a time, never past the size the kernel holds, and
# never asks for it: nothing makes the kernel look again.)
eq "the new version removed: version 1, not the pages of the map" "$long" \
	"$(dd if="$R/orders.jars" bs=1 count=${#long} 2>/dev/null)"

# Readers while the bytes change between two lengths, again and again:
# each read is one whole snapshot, never a mix or a cut.
flip() {
	i=0
	while [ $i -lt 150 ]; do
		mv "$A/mongodb-connector.jar" "$A/m.jar"
		mv "$A/m.jar" "$A/mongodb-connector.jar"
		i=$((i + 1))
	done
}
reader() {
	i=0
	while [ $i -lt 300 ]; do
		cat "$R/orders.jars"
		dd if="$R/orders.jars" bs=7 2>/dev/null
		i=$((i + 1))
	done >"$T/reads.$1"
}
flip &
fp=$!
reader 1 &
r1=$!
reader 2 &
r2=$!
wait $fp $r1 $r2
eq "1,200 reads while the bytes change" 1200 "$(cat "$T/reads.1" "$T/reads.2" | wc -l)"
eq "each one of the two snapshots, whole" "" \
	"$(cat "$T/reads.1" "$T/reads.2" | grep -a -v -x -F -e "$long" -e "$short" | head -n 3)"
eq "both seen" 2 "$(sort -u "$T/reads.1" "$T/reads.2" | wc -l)"

# A failing resolution: size 0 at once, the reason at open.
cp "$FIX/mongodb.jar" "$A/mongo-copy.jar"
setfattr -n $TYPE -v connector "$A/mongo-copy.jar"
setfattr -n $IDENT -v mongodb "$A/mongo-copy.jar"
eq "ambiguous: size 0 right after the label" 0 "$(stat -c %s "$R/orders.jars")"
errno_is "and the open fails" ENOTUNIQ read "$R/orders.jars"
rm "$A/mongo-copy.jar"
eq "resolved again" "$long" "$(cat "$R/orders.jars")"

# The rules change (SIGHUP): the paths it lists start elsewhere.
sz=$(stat -c %s "$R/orders.jars")
PFX=/opt/flink/usrlib/cmfs
printf '[sql]\njar_path_prefix = %s\n' "$PFX" >>"$T/cmfs.ini"
n0=$(grep -c "SIGHUP: reloaded" "$LOG")
kill -HUP "$PID"
i=0
while [ "$(grep -c "SIGHUP: reloaded" "$LOG")" = "$n0" ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
eq "after a reload: the size of the new prefix" \
	$((sz - ${#M} + ${#PFX})) \
	"$(stat -c %s "$R/orders.jars")"
eq "and its bytes" "$PFX/envs/prod/versions/mongodb-connector.jar/1.jar" \
	"$(cat "$R/orders.jars")"

# A table that needs no JAR (built-ins only): nothing to read, twice.
printf "CREATE TABLE g (a INT) WITH ('connector' = 'datagen')" >"$P/tables/g.sql"
eq "a table of built-ins: an empty .jars" "" "$(cat "$R/g.jars")"
eq "again" "" "$(cat "$R/g.jars")"
eq "its size" 0 "$(stat -c %s "$R/g.jars")"

# The .sql beside it says when it was resolved: never kept.
cat "$R/orders.sql" >/dev/null
eq "the .sql leaves no pages" 0 "$(pages "$R/orders.sql")"

# With allow_other (others may call) and no rule on who reads, every
# caller sees the same mode: the kernel keeps it all the same.
unset MOUNT_OPTS
remount_cmfs
eq "allow_other: reads" "$long" "$(cat "$R/orders.jars")"
eq "and the page stays" 1 "$(pages "$R/orders.jars")"
# A rule on who reads: modes differ by caller, nothing is kept.
INI_EXTRA="[access]
read = root"
remount_cmfs
eq "a read rule: reads" "$long" "$(cat "$R/orders.jars")"
eq "and leaves no page" 0 "$(pages "$R/orders.jars")"
sz=$(stat -c %s "$R/orders.jars")
mv "$A/mongodb-connector.jar" "$A/m.jar"
eq "stat after a change" $((sz - ${#long} + ${#short})) "$(stat -c %s "$R/orders.jars")"

umount_cmfs
finish
