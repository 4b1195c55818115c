#!/bin/sh
# run.sh - record what a JVM loads from outside each fixture JAR while the
# planner's calls run (ReachProbe.java), into tests/jvm/expected/<jar>.txt,
# which test_reach compares with cmfs's compile-time sets.  The records are
# committed, so the comparison runs without a JDK; rerun this after a
# fixture changes.  Skips (exit 77) without javac.
#
# Usage: sh tests/jvm/run.sh [OUT]   (OUT: where to write; default
# tests/jvm/expected, as committed; test_reach passes a temp dir to check
# that the records still hold)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
fix=$here/../fixtures
out=${1:-$here/expected}

if ! command -v javac >/dev/null 2>&1; then
	echo "run.sh: no javac, skipped"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# stubs DIR OUT: compile the stub API under DIR.
stubs() {
	find "$1" -name '*.java' | LC_ALL=C sort >"$work/list"
	mkdir -p "$2"
	javac --release 11 -encoding UTF-8 -nowarn -d "$2" -cp "$2" @"$work/list"
}

stubs "$fix/java/stubs" "$work/old"
stubs "$fix/java/reach/stubs" "$work/reach"
mkdir -p "$work/probe" "$out"
javac -encoding UTF-8 -nowarn -d "$work/probe" "$here/ReachProbe.java"

# The fixtures built from java/ with a factory service file: the reach
# ones against their own stubs, the others against the first stubs.
for jar in mongodb fmt-jsonish inherit default-id runtime-id async-sink \
	guava-ref unicode bundle const-id reach-rt-absent \
	reach-compile-absent reach-fat-like reach-services; do
	case $jar in
	reach-*) s=$work/reach ;;
	*) s=$work/old ;;
	esac
	java -cp "$work/probe" ReachProbe "$s" "$fix/jars/$jar.jar" \
		>"$out/$jar.txt" 2>"$work/err" || {
		cat "$work/err" >&2
		exit 1
	}
	printf '%s: %s classes\n' "$jar" "$(wc -l <"$out/$jar.txt")"
done

# The options the factories declare (OptionsProbe.java), for test_options.
stubs "$fix/java/options/stubs" "$work/options"
javac -encoding UTF-8 -nowarn -d "$work/probe" "$here/OptionsProbe.java"
java -cp "$work/probe" OptionsProbe "$work/options" "$fix/jars/options.jar" \
	>"$out/options-keys.txt"
printf 'options: %s keys\n' "$(wc -l <"$out/options-keys.txt")"
