#!/bin/sh
# tables/resolved/: each rule of resolution through a real mount, with the
# fixture JARs (tests/fixtures/jars, built from tests/fixtures/java).
. "$(dirname "$0")/lib.sh"
mount_cmfs
mkdir "$M/envs/prod"
P=$M/envs/prod
A=$P/artifacts
TB=$P/tables
R=$TB/resolved
TYPE=user.cmf.confluent.io/sql-artifact-type
IDENT=user.cmf.confluent.io/sql-artifact-identifier

label() { setfattr -n $TYPE -v "$2" "$A/$1" && setfattr -n $IDENT -v "$3" "$A/$1"; }

# The seeds' MongoDB example, end to end.
cp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
errno_is "a label the JAR does not offer" EINVAL setxattr "$A/mongodb-connector.jar" $IDENT mongo
contains "the refusal names what it offers" "offers connector 'mongodb'" "$(last_event prod 'value=mongo ')"
check "label it connector mongodb" label mongodb-connector.jar connector mongodb
cp "$TOP/tests/ddl/valid/004-mongodb-orders.sql" "$TB/orders.sql"
eq "resolved/ lists both files" "orders.jars orders.sql" "$(ls "$R" | tr '\n' ' ' | sed 's/ $//')"
eq "orders.jars is the pinned connector" "$M/envs/prod/versions/mongodb-connector.jar/1.jar" "$(cat "$R/orders.jars")"
eq "stat size = what is read" "$(stat -c %s "$R/orders.jars")" "$(wc -c <"$R/orders.jars" | tr -d ' ')"
eq "user.cmfs.error is empty on success" "" "$(getfattr --only-values -n user.cmfs.error "$R/orders.jars")"
contains "orders.sql adds the JAR" "ADD JAR '$M/envs/prod/versions/mongodb-connector.jar/1.jar';" "$(cat "$R/orders.sql")"
contains "orders.sql holds the DDL" "'collection' = 'orders'" "$(cat "$R/orders.sql")"
eq "sql stat size = what is read" "$(stat -c %s "$R/orders.sql")" "$(wc -c <"$R/orders.sql" | tr -d ' ')"
grep -v -e '^--' -e '^ADD JAR' "$R/orders.sql" >"$T/back.sql"
check "the DDL in orders.sql parses back" cp "$T/back.sql" "$TB/orders.sql"
eq "used-by names the table" orders "$(getfattr --only-values -n user.cmfs.used-by "$A/mongodb-connector.jar")"
contains "the resolution is in events" "action=resolve table=orders jar=mongodb-connector.jar@1 result=ok" "$(last_event prod 'action=resolve')"

# Latest version wins; the old pinned path still reads the old bytes.
cp "$DATA/mongodb-v2.jar" "$A/mongodb-connector.jar"
eq "a new version is resolved" "$M/envs/prod/versions/mongodb-connector.jar/2.jar" "$(cat "$R/orders.jars")"
check "the pinned old path reads the old bytes" cmp "$FIX/mongodb.jar" "$P/versions/mongodb-connector.jar/1.jar"
errno_is "a new version that drops the factory is refused" EINVAL write "$A/mongodb-connector.jar" "x"
check_not "cp of a JAR without the factory is refused" cp "$FIX/no-service.jar" "$A/mongodb-connector.jar"
eq "still version 2" "$M/envs/prod/versions/mongodb-connector.jar/2.jar" "$(cat "$R/orders.jars")"

# Ambiguity.
cp "$FIX/mongodb.jar" "$A/mongo-copy.jar"
label mongo-copy.jar connector mongodb
errno_is "two artifacts with one identifier" ENOTUNIQ read "$R/orders.jars"
contains "the error names both" "mongo-copy.jar, mongodb-connector.jar" "$(getfattr --only-values -n user.cmfs.error "$R/orders.jars")"
contains "and says what to do" "keep one artifact per identifier" "$(last_event prod 'errno=ENOTUNIQ')"
eq "a failing table has size 0" 0 "$(stat -c %s "$R/orders.jars")"
rm "$A/mongo-copy.jar"

# Missing, and a table without a connector.
printf "CREATE TABLE k (a INT) WITH ('connector' = 'kafka', 'format' = 'json')" >"$TB/k.sql"
errno_is "no artifact for an identifier" ENOPKG read "$R/k.jars"
contains "it lists the identifiers there are" "mongodb (mongodb-connector.jar)" "$(getfattr --only-values -n user.cmfs.error "$R/k.jars")"
printf "CREATE TABLE nc (a INT) WITH ('format' = 'json')" >"$TB/nc.sql"
errno_is "a table without a connector" EINVAL read "$R/nc.jars"
contains "says so" "no 'connector' option" "$(getfattr --only-values -n user.cmfs.error "$R/nc.jars")"

# Built-ins.
printf "CREATE TABLE gen (a INT) WITH ('connector' = 'datagen', 'format' = 'json', 'file.format' = 'orc', 'sink.format' = 'nonesuch')" >"$TB/gen.sql"
eq "built-ins need no JAR" "" "$(cat "$R/gen.jars")"
contains "the .sql says the cluster provides them" "provided by the cluster: datagen" "$(cat "$R/gen.sql")"
cp "$FIX/runtime-id.jar" "$A/json-override.jar"
check "an unknown identifier of the right kind may be labelled" label json-override.jar format json
errno_is "a built-in claimed by an artifact is ambiguous" ENOTUNIQ read "$R/gen.jars"
# A connector's own *.format option names no format (StarRocks' sink).
printf "CREATE TABLE sr (a INT) WITH ('connector' = 'datagen', 'sink.properties.format' = 'json')" >"$TB/sr.sql"
errno_is "sink.properties.format pulls no format in" OK read "$R/sr.jars"
eq "and needs no JAR" "" "$(cat "$R/sr.jars")"
rm "$A/json-override.jar"

# key.format / value.format and bundled formats.
cp "$FIX/bundle.jar" "$A/kafka-ish.jar"
label kafka-ish.jar connector kafka-ish
cp "$FIX/fmt-jsonish.jar" "$A/jsonish.jar"
label jsonish.jar format json-ish
printf "CREATE TABLE kv (a INT) WITH ('connector' = 'kafka-ish', 'key.format' = 'json-ish', 'value.format' = 'avro-ish')" >"$TB/kv.sql"
eq "connector first, then the format JAR; the bundled format needs none" \
	"$M/envs/prod/versions/kafka-ish.jar/1.jar $M/envs/prod/versions/jsonish.jar/1.jar" \
	"$(tr '\n' ' ' <"$R/kv.jars" | sed 's/ $//')"
printf "CREATE TABLE mav (a INT) WITH ('connector' = 'mongodb', 'format' = 'avro-ish')" >"$TB/mav.sql"
errno_is "a format bundled in another connector's JAR" ENOPKG read "$R/mav.jars"
contains "says which and what to do" "bundled in connector kafka-ish.jar" "$(getfattr --only-values -n user.cmfs.error "$R/mav.jars")"
printf "CREATE TABLE dup (a INT) WITH ('connector' = 'kafka-ish', 'key.format' = 'json-ish', 'value.format' = 'json-ish')" >"$TB/dup.sql"
eq "no duplicates" 2 "$(wc -l <"$R/dup.jars" | tr -d ' ')"
# The bundled format and a format artifact with its identifier: two
# factories to Flink.
cp "$FIX/bundle.jar" "$A/avro-ish.jar"
label avro-ish.jar format avro-ish
errno_is "a bundled format also uploaded as a format artifact" ENOTUNIQ read "$R/kv.jars"
contains "names both" "bundled in connector kafka-ish.jar and carried by format artifact avro-ish.jar" "$(getfattr --only-values -n user.cmfs.error "$R/kv.jars")"
rm "$A/avro-ish.jar"
eq "without it, the bundled one serves again" 2 "$(wc -l <"$R/kv.jars" | tr -d ' ')"

# A matched artifact that is not a *.jar.
cp "$FIX/mongodb.jar" "$A/fmt.zip"
label fmt.zip format zipfmt
printf "CREATE TABLE z (a INT) WITH ('connector' = 'datagen', 'format' = 'zipfmt')" >"$TB/z.sql"
errno_is "a match that is not a .jar" ENOEXEC read "$R/z.jars"
contains "says why" "does not end in .jar" "$(getfattr --only-values -n user.cmfs.error "$R/z.jars")"

# LIKE: a derived table resolves to its source's connector.
printf "CREATE TABLE orders_eu (region STRING) LIKE orders" >"$TB/orders_eu.sql"
eq "LIKE-derived table" "$M/envs/prod/versions/mongodb-connector.jar/2.jar" "$(cat "$R/orders_eu.jars")"
contains "its .sql holds the source's DDL first" "CREATE TABLE" "$(sed -n '/^ADD JAR/,$p' "$R/orders_eu.sql" | sed -n 2p)"
eq "used-by lists both tables" "orders orders_eu" \
	"$(getfattr --only-values -n user.cmfs.used-by "$A/mongodb-connector.jar" | tr '\n' ' ' | sed 's/ $//')"

# The class allowlist.
cp "$FIX/guava-ref.jar" "$A/guava-ish.jar"
label guava-ish.jar connector guava-ish
printf "CREATE TABLE g (a INT) WITH ('connector' = 'guava-ish')" >"$TB/g.sql"
errno_is "a class outside the allowlist" EPERM read "$R/g.jars"
contains "named in the error" "com.google.common.collect.ImmutableList" "$(getfattr --only-values -n user.cmfs.error "$R/g.jars")"

# Deleting the artifact: ENOPKG, and used-by follows.
rm "$A/mongodb-connector.jar"
errno_is "after rm of its connector" ENOPKG read "$R/orders.jars"
errno_is "versions are gone too" ENOENT read "$P/versions/mongodb-connector.jar/2.jar"

# Configuration: the allowlist and the path prefix take effect at once.
INI_EXTRA="[sql]
class_allowlist = java.*,org.apache.flink.*,com.google.common.*,okhttp3.*
jar_path_prefix = /opt/flink/cmfs"
remount_cmfs
eq "a widened allowlist needs no re-upload" "/opt/flink/cmfs/envs/prod/versions/guava-ish.jar/1.jar" "$(cat "$R/g.jars")"

# A read's event line waits up to 50 ms in memory, then goes into the
# catalog (the unit test test_cache shows a close writes what is left).
# After a remount, as the first of its table (one whose result did not
# change since the last line is not written again).
remount_cmfs
cat "$R/g.jars" >/dev/null
umount_cmfs
eq "both reads of g are in the catalog after unmount" 2 "$(sql "SELECT count(*) FROM events WHERE CAST(line AS TEXT) LIKE '%action=resolve table=g jar=guava-ish.jar@1 result=ok%'")"

# A long class list (issue 29 item 4): the message names the first
# classes and how many more, and keeps its advice; the attribute
# user.cmfs.refused-classes and events have what they promise.
INI_EXTRA="[sql]
class_allowlist = okhttp3.*"
mount_cmfs
mkdir "$M/envs/long"
LA=$M/envs/long/artifacts
cp "$FIX/reach-fat-like.jar" "$LA/fat.jar"
setfattr -n user.cmf.confluent.io/sql-artifact-type -v connector "$LA/fat.jar"
setfattr -n user.cmf.confluent.io/sql-artifact-identifier -v kafka "$LA/fat.jar"
printf "CREATE TABLE f (a INT) WITH ('connector' = 'kafka')" >"$M/envs/long/tables/f.sql"
LR=$M/envs/long/tables/resolved
errno_is "every class refused: EPERM" EPERM read "$LR/f.jars"
msg=$(getfattr --only-values -n user.cmfs.error "$LR/f.jars")
n=$(printf '%s\n' "$msg" | sed -n 's/^fat.jar reaches \([0-9]*\) classes outside the class allowlist: .*/\1/p')
all=$(getfattr --only-values -n user.cmfs.refused-classes "$LR/f.jars")
check "the message counts the classes" [ -n "$n" ]
eq "each class the JAR reaches is counted" "$("$CMFS" inspect "$FIX/reach-fat-like.jar" | sed -n 's/^external classes: //p')" "$n"
contains "the message says how many more and where they are, then its advice" " more (getfattr -n user.cmfs.refused-classes tables/resolved/f.jars lists them all); shade them into the JAR or widen [sql] class_allowlist" "$msg"
eq "the message stays short" 1 "$([ "${#msg}" -lt 1500 ] && echo 1)"
eq "refused-classes has every one" "$n" "$(printf '%s\n' "$all" | grep -c '^fat.jar [a-z]')"
eq "the same whole message in events" 1 "$(grep -c "lists them all); shade them into the JAR or widen" "$M/envs/long/events")"
eq "resolved.sql says the same" "$msg" "$(getfattr --only-values -n user.cmfs.error "$LR/f.sql")"
finish
