#!/bin/sh
# Published connector JARs (../shared/realjars, when present) and the
# reach fixtures, through a real mount under the embedded defaults (no
# [sql] settings): what Flink loads while it compiles a statement is
# checked against the default allowlist (the JDK and a stock Flink 1.20
# lib/); what only the job's run time needs is not (issue 29).
. "$(dirname "$0")/lib.sh"
REAL=$TOP/../shared/realjars
mount_cmfs
TYPE=user.cmf.confluent.io/sql-artifact-type
IDENT=user.cmf.confluent.io/sql-artifact-identifier

# env NAME: make environment NAME; its paths in A, TB, R.
env_() {
	mkdir "$M/envs/$1"
	A=$M/envs/$1/artifacts
	TB=$M/envs/$1/tables
	R=$TB/resolved
}
label() { setfattr -n $TYPE -v "$2" "$A/$1" && setfattr -n $IDENT -v "$3" "$A/$1"; }
error_of() { getfattr --only-values -n user.cmfs.error "$1" 2>/dev/null; }

# A fat SQL connector's shape: kafka-clients relocated inside, its run
# time naming lz4, Kerberos, Jackson and commons-lang3.
env_ fat
cp "$FIX/reach-fat-like.jar" "$A/flink-sql-connector-kafka.jar"
check "label the fat-like JAR connector kafka" label flink-sql-connector-kafka.jar connector kafka
printf "CREATE TABLE clicks (user_id BIGINT, url STRING) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'properties.bootstrap.servers' = 'k:9092', 'format' = 'json')" >"$TB/clicks.sql"
eq "a kafka+json table resolves: the connector, json is built in" \
	"$M/envs/fat/versions/flink-sql-connector-kafka.jar/1.jar" "$(cat "$R/clicks.jars")"
eq "no error" "" "$(error_of "$R/clicks.jars")"
OUT=$("$CMFS" inspect "$FIX/reach-fat-like.jar")
contains "inspect lists the run-time classes" "run-time classes (not checked): 12" "$OUT"
contains "Jackson among them" "  com.fasterxml.jackson.databind.ObjectMapper" "$OUT"
contains "and the verdict is usable" "verdict: usable" "$OUT"
OUT=$("$CMFS" inspect --json "$FIX/reach-fat-like.jar")
contains "JSON too" '"runtime":["com.fasterxml.jackson.databind.ObjectMapper",' "$OUT"

# Run-time code naming an absent library resolves; a source constructor
# or a runtime provider that needs one is refused.
env_ rt
cp "$FIX/reach-rt-absent.jar" "$A/rt.jar"
label rt.jar connector rt-absent
printf "CREATE TABLE r (a INT) WITH ('connector' = 'rt-absent', 'url' = 'x')" >"$TB/r.sql"
eq "run-time only library: resolves" "$M/envs/rt/versions/rt.jar/1.jar" "$(cat "$R/r.jars")"
cp "$FIX/reach-services.jar" "$A/svc.jar"
label svc.jar connector svc
printf "CREATE TABLE v (a INT) WITH ('connector' = 'svc', 'url' = 'jdbc:my://x')" >"$TB/v.sql"
eq "dialects found by ServiceLoader, run time absent: resolves" "$M/envs/rt/versions/svc.jar/1.jar" "$(cat "$R/v.jars")"
cp "$FIX/reach-compile-absent.jar" "$A/ct.jar"
label ct.jar connector ctor-absent
printf "CREATE TABLE c (a INT) WITH ('connector' = 'ctor-absent')" >"$TB/c.sql"
errno_is "a constructor needs an absent library: EPERM" EPERM read "$R/c.jars"
contains "naming it" "com.absent.lib.Client" "$(error_of "$R/c.jars")"

if [ ! -f "$REAL/flink-connector-jdbc_2.11-1.11.2.jar" ]; then
	skip "$REAL is absent: the published JARs are not tried"
	finish
fi

# JDBC: a MySQL table needs nothing outside the JDK and Flink while it
# is compiled (the Postgres dialect's array converter runs later).
env_ jdbc
cp "$REAL/flink-connector-jdbc_2.11-1.11.2.jar" "$A/flink-connector-jdbc.jar"
check "label the JDBC JAR connector jdbc" label flink-connector-jdbc.jar connector jdbc
printf "CREATE TABLE users (id BIGINT, name STRING) WITH ('connector' = 'jdbc', 'url' = 'jdbc:mysql://db:3306/shop', 'table-name' = 'users')" >"$TB/users.sql"
eq "a MySQL jdbc table resolves" "$M/envs/jdbc/versions/flink-connector-jdbc.jar/1.jar" "$(cat "$R/users.jars")"
eq "no error" "" "$(error_of "$R/users.jars")"
OUT=$("$CMFS" inspect "$REAL/flink-connector-jdbc_2.11-1.11.2.jar")
contains "org.postgresql is run time's" "  org.postgresql.jdbc.PgArray" "$OUT"
contains "and the JAR is usable" "verdict: usable" "$OUT"

# The thin Kafka JARs: building the source needs kafka-clients, which
# neither they nor a stock cluster have.
for j in flink-connector-kafka-3.4.0-1.20 flink-connector-kafka-3.1-SNAPSHOT; do
	case $j in *3.4.0*) e=k34 ;; *) e=k31 ;; esac
	env_ $e
	cp "$REAL/$j.jar" "$A/$j.jar"
	check "label $j connector kafka" label "$j.jar" connector kafka
	printf "CREATE TABLE clicks (user_id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json')" >"$TB/clicks.sql"
	errno_is "$j: EPERM" EPERM read "$R/clicks.jars"
	msg=$(error_of "$R/clicks.jars")
	contains "$j: naming org.apache.kafka classes" "org.apache.kafka." "$msg"
	# Whole: every class (a few here) and the advice at the end.
	contains "$j: ends with the advice" "; shade them into the JAR or widen [sql] class_allowlist" "$msg"
	all=$(getfattr --only-values -n user.cmfs.refused-classes "$R/clicks.jars")
	for c in $(printf '%s\n' "$all" | cut -d' ' -f2); do
		case $msg in *"$c"[,\;]*) ;; *) check "$j: the message names $c" false ;; esac
	done
	total=$(printf '%s\n' "$msg" | sed -n 's/.* reaches \([0-9]*\) classes outside.*/\1/p')
	eq "$j: refused-classes lists every one the message counts" "$total" "$(printf '%s\n' "$all" | grep -c "^$j.jar org\.apache\.kafka\.")"
	eq "$j: and nothing the allowlist takes" "" "$(printf '%s\n' "$all" | grep -v "^$j.jar org\.apache\.kafka\.")"
	eq "$j: the same in events" 1 "$(grep -c "shade them into the JAR or widen" "$M/envs/$e/events")"
done
eq "a table that resolves has no refused classes" "" "$(getfattr --only-values -n user.cmfs.refused-classes "$M/envs/fat/tables/resolved/clicks.jars")"

# An upgrade: an inspection that an older inspector made (here: the
# class-level reach of before, which refused the fat connector) is made
# again after the mount, in the background, and the table resolves.
umount_cmfs
sql "UPDATE inspections SET inspector = 1, external = external || 'com.ning.compress.lzf.LZFChunk' || char(10) WHERE sha256 = (SELECT sha256 FROM versions v JOIN artifacts a ON a.id = v.artifact_id WHERE a.name = 'flink-sql-connector-kafka.jar')"
eq "the old inspection is stamped 1" 1 "$(sql "SELECT count(*) FROM inspections WHERE inspector = 1")"
mount_cmfs
i=0
until grep -q "inspected again with inspector 2: 1 of 1 blobs" "$LOG" || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
contains "the log says it is done" "inspected again with inspector 2: 1 of 1 blobs" "$(cat "$LOG")"
contains "and what it started" "1 blobs were inspected by an older cmfs" "$(cat "$LOG")"
eq "every inspection is the current inspector's" 0 "$(sql "SELECT count(*) FROM inspections WHERE inspector < 2")"
eq "the fat connector resolves again" "$M/envs/fat/versions/flink-sql-connector-kafka.jar/1.jar" "$(cat "$M/envs/fat/tables/resolved/clicks.jars")"
remount_cmfs
eq "a mount with nothing to redo says nothing of it" 1 "$(grep -c "were inspected by an older cmfs" "$LOG")"
finish
