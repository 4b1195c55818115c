#!/bin/sh
# The options factories declare (issue 32), through a real mount: read
# from the fixture JAR's bytecode at upload, kept by the catalog, shown by
# user.cmfs.options and cmfs inspect.
. "$(dirname "$0")/lib.sh"
REAL=$TOP/../shared/realjars
mount_cmfs

mkdir "$M/envs/o"
A=$M/envs/o/artifacts
cp "$FIX/options.jar" "$A/opts.jar"
OUT=$(getfattr --only-values -n user.cmfs.options "$A/opts.jar")
contains "user.cmfs.options: a required option, inherited" \
	"$(printf 'opts\trequired\thostname\tstring\t-')" "$OUT"
contains "an int with its default" "$(printf 'opts\toptional\tport\tint\t5432')" "$OUT"
contains "an enum with its values" \
	"$(printf 'opts\toptional\tscan.startup.mode\tenum(earliest-offset|latest-offset)\tearliest-offset')" "$OUT"
contains "FactoryUtil.FORMAT" "$(printf 'opts\toptional\tformat\tstring\t-')" "$OUT"
contains "the format's own" "$(printf 'opts-fmt\toptional\tfail-on-missing-field\tboolean\tfalse')" "$OUT"
contains "a set built at run time, said so" \
	"# opts-runtime: optionalOptions() is computed at run time: not checked" "$OUT"
eq "one line per option and per unknown set" 15 "$(printf '%s\n' "$OUT" | wc -l)"

# Kept across a remount: read from the catalog, not inspected again.
remount_cmfs
eq "the same after a remount" "$OUT" \
	"$(getfattr --only-values -n user.cmfs.options "$M/envs/o/artifacts/opts.jar")"

OUT=$("$CMFS" inspect "$FIX/options.jar")
contains "cmfs inspect lists them" "$(printf 'options of opts:\nopts\toptional\tconnect.timeout\tduration\t30 s')" "$OUT"
OUT=$("$CMFS" inspect --json "$FIX/options.jar")
contains "and in JSON" '{"key":"hostname","required":true,"forward":true,"type":"string"' "$OUT"
contains "with the prefixes validateExcept lets through" '"prefixes":"extra."' "$OUT"

# Checked at resolution, as Flink's FactoryUtil checks at submission.
TB=$M/envs/o/tables
R=$TB/resolved
TYPE=user.cmf.confluent.io/sql-artifact-type
IDENT=user.cmf.confluent.io/sql-artifact-identifier
setfattr -n $TYPE -v connector "$A/opts.jar"
setfattr -n $IDENT -v opts "$A/opts.jar"
error_of() { getfattr --only-values -n user.cmfs.error "$1" 2>/dev/null; }
JAR=$M/envs/o/versions/opts.jar/1.jar
# ctable NAME CONNECTOR OPTIONS: tables/NAME.sql, this connector's,
# with these other WITH options.
ctable() {
	printf "CREATE TABLE %s (a INT) WITH ('connector' = '%s', %s)" "$1" "$2" "$3" >"$TB/$1.sql"
}
# table NAME OPTIONS: a table of the fixture's connector.
table() { ctable "$1" opts "$2"; }
# refused WHAT NAME MESSAGE: resolving NAME is EINVAL, the reason saying
# MESSAGE.
refused() {
	errno_is "$1: EINVAL" EINVAL read "$R/$2.jars"
	contains "$1: the reason" "$3" "$(error_of "$R/$2.jars")"
}
table good "'hostname' = 'db', 'port' = '5433', 'scan.startup.mode' = 'LATEST-offset', 'connect.timeout' = '5 min', 'ssl' = 'false', 'user' = 'u', 'extra.anything' = 'x', 'value.format' = 'opts-fmt', 'value.opts-fmt.charset' = 'latin1'"
eq "options that are right resolve" "$JAR" "$(cat "$R/good.jars")"
eq "no error" "" "$(error_of "$R/good.jars")"

table typo "'hostname' = 'db', 'scan.startup.mod' = 'earliest-offset'"
errno_is "a typo: EINVAL" EINVAL read "$R/typo.jars"
eq "the key and the nearest known key" \
	"table typo: option 'scan.startup.mod' is not one that connector 'opts' declares: did you mean 'scan.startup.mode'?" \
	"$(error_of "$R/typo.jars")"
contains "in events too" "did you mean 'scan.startup.mode'?" "$(last_event o typo)"

table missing "'port' = '1'"
errno_is "a missing required option: EINVAL" EINVAL read "$R/missing.jars"
eq "which one, and its type" \
	"table missing: connector 'opts' requires option 'hostname' (string), which the table does not set" \
	"$(error_of "$R/missing.jars")"

table badenum "'hostname' = 'db', 'scan.startup.mode' = 'earliest'"
errno_is "a bad enum value: EINVAL" EINVAL read "$R/badenum.jars"
eq "the values it takes" \
	"table badenum: option 'scan.startup.mode' = 'earliest' is not a valid enum(earliest-offset|latest-offset): did you mean 'earliest-offset'?" \
	"$(error_of "$R/badenum.jars")"

table fmt "'hostname' = 'db', 'value.format' = 'opts-fmt', 'value.opts-fmt.fail-on-missing-field' = 'true'"
eq "a format option under value.: resolves" "$JAR" "$(cat "$R/fmt.jars")"
table nopre "'hostname' = 'db', 'value.format' = 'opts-fmt', 'opts-fmt.fail-on-missing-field' = 'true'"
errno_is "without value.: EINVAL" EINVAL read "$R/nopre.jars"
eq "naming the key it meant" \
	"table nopre: option 'opts-fmt.fail-on-missing-field' is not one that connector 'opts' declares: did you mean 'value.opts-fmt.fail-on-missing-field'?" \
	"$(error_of "$R/nopre.jars")"
table fmtval "'hostname' = 'db', 'value.format' = 'opts-fmt', 'value.opts-fmt.fail-on-missing-field' = 'maybe'"
errno_is "a format option's value checked too" EINVAL read "$R/fmtval.jars"
contains "as a boolean" "is not a valid boolean" "$(error_of "$R/fmtval.jars")"

# [sql] check_options = off: Flink finds it at submission instead.
INI_EXTRA=$(printf '[sql]\ncheck_options = off')
remount_cmfs
eq "check_options = off: the typo resolves" "$JAR" "$(cat "$R/typo.jars")"
INI_EXTRA=
remount_cmfs
errno_is "on again: refused" EINVAL read "$R/typo.jars"

# A store from before the options (inspector 2, schema 10): nothing known,
# nothing refused, until the mount inspects the JAR again.
umount_cmfs
sql "DELETE FROM factory_options; UPDATE inspections SET inspector = 2, options_read = 0"
MOUNT_LOG_MARK=$(wc -l <"$LOG")
mount_cmfs
i=0
until tail -n "+$MOUNT_LOG_MARK" "$LOG" | grep -q "inspected again with inspector 3" || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
contains "an older inspection is made again" "inspected again with inspector 3: 1 of 1 blobs" "$(tail -n "+$MOUNT_LOG_MARK" "$LOG")"
contains "and its options are known" "$(printf 'opts\trequired\thostname\tstring\t-')" \
	"$(getfattr --only-values -n user.cmfs.options "$A/opts.jar")"
errno_is "and checked" EINVAL read "$R/typo.jars"

if [ -f "$REAL/flink-connector-jdbc_2.11-1.11.2.jar" ]; then
	cp "$REAL/flink-connector-jdbc_2.11-1.11.2.jar" "$A/jdbc.jar"
	setfattr -n $TYPE -v connector "$A/jdbc.jar"
	setfattr -n $IDENT -v jdbc "$A/jdbc.jar"
	URL="'url' = 'jdbc:mysql://db/shop'"
	ctable users jdbc "$URL, 'table-name' = 'users', 'lookup.cache.ttl' = '10 s', 'sink.buffer-flush.max-rows' = '500'"
	eq "JDBC: a right table resolves" "$M/envs/o/versions/jdbc.jar/1.jar" "$(cat "$R/users.jars")"
	ctable users2 jdbc "$URL, 'table' = 'users'"
	refused "JDBC: table-name missing" users2 "requires option 'table-name'"
	ctable users3 jdbc "$URL, 'table-name' = 'users', 'sink.max-retry' = '3'"
	refused "JDBC: a typo" users3 "did you mean 'sink.max-retries'?"
	ctable users4 jdbc "$URL, 'table-name' = 'users', 'lookup.cache.ttl' = '10 parsecs'"
	refused "JDBC: a duration that is not one" users4 "'10 parsecs' is not a valid duration"
fi

if [ -f "$REAL/flink-connector-kafka-3.4.0-1.20.jar" ]; then
	cp "$REAL/flink-connector-kafka-3.4.0-1.20.jar" "$A/kafka.jar"
	OUT=$(getfattr --only-values -n user.cmfs.options "$A/kafka.jar")
	contains "Kafka: bootstrap servers required" \
		"$(printf 'kafka\trequired\tproperties.bootstrap.servers\tstring\t-')" "$OUT"
	contains "Kafka: the startup mode's values" \
		"$(printf 'kafka\toptional\tscan.startup.mode\tenum(earliest-offset|latest-offset|group-offsets|timestamp|specific-offsets)\tgroup-offsets')" "$OUT"
	# The thin JAR reaches kafka-clients: let it through, to check its
	# options (the fat SQL JAR shades them in).
	INI_EXTRA=$(printf '[sql]\nclass_allowlist = java.*, javax.*, org.apache.flink.*, org.apache.kafka.*, org.slf4j.*')
	remount_cmfs
	A=$M/envs/o/artifacts
	setfattr -n $TYPE -v connector "$A/kafka.jar"
	setfattr -n $IDENT -v kafka "$A/kafka.jar"
	K=$M/envs/o/versions/kafka.jar/1.jar
	BS="'topic' = 't', 'properties.bootstrap.servers' = 'k:9092'"
	ctable k1 kafka "$BS, 'properties.group.id' = 'g', 'properties.max.poll.records' = '10', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json', 'json.fail-on-missing-field' = 'false', 'sink.delivery-guarantee' = 'at-least-once'"
	eq "Kafka: a right table resolves (properties.*, json.*)" "$K" "$(cat "$R/k1.jars")"
	eq "no error" "" "$(error_of "$R/k1.jars")"
	ctable k2 kafka "$BS, 'scan.startup.mod' = 'earliest-offset', 'format' = 'json'"
	refused "Kafka: the typo of the issue" k2 "did you mean 'scan.startup.mode'?"
	ctable k3 kafka "'topic' = 't', 'format' = 'json'"
	refused "Kafka: no bootstrap servers" k3 "requires option 'properties.bootstrap.servers'"
	ctable k4 kafka "$BS, 'scan.startup.mode' = 'earliest', 'format' = 'json'"
	refused "Kafka: a startup mode it does not know" k4 "enum(earliest-offset|latest-offset|group-offsets|timestamp|specific-offsets): did you mean 'earliest-offset'?"
	ctable k5 kafka "$BS, 'value.format' = 'json', 'value.json.ignore-parse-errors' = 'true', 'scan.topic-partition-discovery.interval' = '1 min'"
	eq "Kafka: value.format with a built-in format's options" "$K" "$(cat "$R/k5.jars")"
	# Built-in formats have no JAR here: their options come from cmfs's
	# table of Flink 1.20's declarations (core/format_builtin.c).
	ctable k6 kafka "$BS, 'format' = 'json', 'json.ignore-parse-error' = 'true'"
	errno_is "json: a typo under json.: EINVAL" EINVAL read "$R/k6.jars"
	eq "json: the key and the nearest known key" \
		"table k6: option 'json.ignore-parse-error' is not one that format 'json' declares: did you mean 'json.ignore-parse-errors'?" \
		"$(error_of "$R/k6.jars")"
	contains "json: in events too" "did you mean 'json.ignore-parse-errors'?" "$(last_event o k6)"
	ctable k7 kafka "$BS, 'format' = 'json', 'json.ignore-parse-errors' = 'true', 'json.timestamp-format.standard' = 'ISO-8601', 'json.encode.decimal-as-plain-number' = 'true'"
	eq "json: the right keys resolve" "$K" "$(cat "$R/k7.jars")"
	ctable k8 kafka "$BS, 'value.format' = 'debezium-json', 'value.debezium-json.schema-includes' = 'true'"
	refused "debezium-json: a typo under value.debezium-json." k8 \
		"is not one that format 'debezium-json' declares: did you mean 'value.debezium-json.schema-include'?"
	ctable k9 kafka "$BS, 'value.format' = 'debezium-json', 'value.debezium-json.schema-include' = 'true'"
	eq "debezium-json: the right key resolves" "$K" "$(cat "$R/k9.jars")"
	ctable k10 kafka "$BS, 'format' = 'csv', 'csv.field-delimiter' = '|', 'csv.ignore-parse-errors' = 'true'"
	eq "csv: its options resolve" "$K" "$(cat "$R/k10.jars")"
	ctable k14 kafka "$BS, 'format' = 'csv', 'csv.field-delimiter' = '||'"
	refused "csv: a delimiter of two characters" k14 "'csv.field-delimiter' = '||' is not a valid char"
	ctable k11 kafka "$BS, 'value.format' = 'json', 'value.json.timestamp-format.standard' = 'ISO8601'"
	refused "json: a value its enum does not take" k11 \
		"'ISO8601' is not a valid enum(SQL|ISO-8601): did you mean 'ISO-8601'?"
	ctable k12 kafka "$BS, 'key.format' = 'json', 'key.fields' = 'a', 'value.format' = 'json', 'key.json.fail-on-missing-fields' = 'false'"
	refused "json: a typo under key.json." k12 "did you mean 'key.json.fail-on-missing-field'?"
	ctable k13 kafka "$BS, 'value.format' = 'json', 'value.json.fail-on-missing-field' = 'yes'"
	refused "json: a boolean that is not one" k13 "'yes' is not a valid boolean"
	INI_EXTRA=$(printf '[sql]\ncheck_options = off\nclass_allowlist = java.*, javax.*, org.apache.flink.*, org.apache.kafka.*, org.slf4j.*')
	remount_cmfs
	eq "check_options = off: the json typo resolves" "$K" "$(cat "$R/k6.jars")"
else
	skip "$REAL is absent: the published JARs are not tried"
fi
finish
