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
eq "one line per option and per unknown set" 14 "$(printf '%s\n' "$OUT" | wc -l)"

# Kept across a remount: read from the catalog, not inspected again.
remount_cmfs
eq "the same after a remount" "$OUT" \
	"$(getfattr --only-values -n user.cmfs.options "$M/envs/o/artifacts/opts.jar")"

OUT=$("$CMFS" inspect "$FIX/options.jar")
contains "cmfs inspect lists them" "$(printf 'options of opts:\nopts\toptional\tconnect.timeout\tduration\t30 s')" "$OUT"
OUT=$("$CMFS" inspect --json "$FIX/options.jar")
contains "and in JSON" '{"key":"hostname","required":true,"forward":true,"type":"string"' "$OUT"
contains "with the prefixes validateExcept lets through" '"prefixes":"extra."' "$OUT"

if [ -f "$REAL/flink-connector-kafka-3.4.0-1.20.jar" ]; then
	cp "$REAL/flink-connector-kafka-3.4.0-1.20.jar" "$A/kafka.jar"
	OUT=$(getfattr --only-values -n user.cmfs.options "$A/kafka.jar")
	contains "Kafka: bootstrap servers required" \
		"$(printf 'kafka\trequired\tproperties.bootstrap.servers\tstring\t-')" "$OUT"
	contains "Kafka: the startup mode's values" \
		"$(printf 'kafka\toptional\tscan.startup.mode\tenum(earliest-offset|latest-offset|group-offsets|timestamp|specific-offsets)\tgroup-offsets')" "$OUT"
else
	skip "$REAL is absent: the published JARs are not tried"
fi
finish
