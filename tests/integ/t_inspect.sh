#!/bin/sh
# cmfs inspect, as an operator checks a JAR before uploading it: the
# report, --json, the allowlist of -c, the exit status (0 usable, 1 not,
# 2 usage), a JAR that is not a zip and names that need escaping in JSON,
# as root and as a user without privileges; and the same verdicts as the
# mount's for the same bytes.
. "$(dirname "$0")/lib.sh"

# insp ARGS...: run `cmfs inspect ARGS`; stdout in $OUT, status in $RC.
insp() {
	OUT=$("$CMFS" inspect "$@" 2>/dev/null)
	RC=$?
}

chmod 755 "$T"
for j in mongodb guava-ref no-service not-zip fmt-jsonish; do
	cp "$FIX/$j.jar" "$T/$j.jar"
	chmod 644 "$T/$j.jar"
done

insp "$T/mongodb.jar"
eq "a connector JAR: exit 0" 0 "$RC"
contains "its archive" "archive: valid zip, 16 entries" "$OUT"
contains "its factory, kind and identifier" \
	"connector mongodb com.example.mongodb.MongoDynamicTableFactory" "$OUT"
contains "an external class and the default allowlist's verdict" \
	"org.apache.flink.configuration.ConfigOption" "$OUT"
contains "the verdict" "verdict: usable" "$OUT"

insp --json "$T/fmt-jsonish.jar"
eq "--json: exit 0" 0 "$RC"
contains "--json: one object with the factory" \
	'"factories":[{"class":"com.example.jsonish.JsonIshFormatFactory","kind":"format","identifier":"json-ish"}]' \
	"$OUT"
eq "--json: one line" 1 "$(printf '%s\n' "$OUT" | wc -l)"

insp "$T/guava-ref.jar"
eq "classes outside the default allowlist: exit 1" 1 "$RC"
contains "and which" "com.google.common.collect.ImmutableList" "$OUT"
contains "the verdict says why" "verdict: refused: 2 external classes" "$OUT"
printf '[sql]\nclass_allowlist = java.*, org.apache.flink.*, com.google.*, okhttp3.*\n' \
	>"$T/allow.ini"
insp -c "$T/allow.ini" "$T/guava-ref.jar"
eq "allowed by -c's allowlist: exit 0" 0 "$RC"
contains "with its verdict" "verdict: usable" "$OUT"

insp "$T/no-service.jar"
eq "no service file: exit 1" 1 "$RC"
contains "and why" "no factory service file" "$OUT"

insp "$T/not-zip.jar"
eq "not a zip archive: exit 1" 1 "$RC"
contains "and why" "not-zip.jar: not usable:" "$OUT"
cp "$T/not-zip.jar" "$T/a\"b\\c.jar"
insp --json "$T/a\"b\\c.jar"
eq "--json of a broken JAR: exit 1" 1 "$RC"
contains "its name escaped" '"file":"'"$T"'/a\"b\\c.jar","valid_zip":false,"error":"' \
	"$OUT"
insp "$T/missing.jar"
eq "a missing file: exit 1" 1 "$RC"
contains "and why" "No such file or directory" "$OUT"

insp
eq "no file: usage, exit 2" 2 "$RC"
insp --frobnicate "$T/mongodb.jar"
eq "an unknown option: exit 2" 2 "$RC"
insp "$T/mongodb.jar" --json
eq "an option after the file" 0 "$RC"
contains "is read" '"verdict":"usable"' "$OUT"

# Without privileges: what the user may read, and no more.
OUT=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$CMFS" inspect "$T/mongodb.jar" 2>&1)
eq "as nobody: exit 0" 0 "$?"
contains "as nobody: the report" "verdict: usable" "$OUT"
chmod 600 "$T/mongodb.jar"
OUT=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$CMFS" inspect "$T/mongodb.jar" 2>&1)
eq "as nobody, a file it may not read: exit 1" 1 "$?"
contains "and why" "Permission denied" "$OUT"
chmod 644 "$T/mongodb.jar"

# cmfs overrides no C library function: libzip's mktime() is the C
# library's.
if command -v nm >/dev/null 2>&1; then
	check_not "the binary defines no mktime()" \
		sh -c "nm -D --defined-only '$CMFS' | grep -q ' mktime\$'"
else
	skip "no nm: mktime's definition not checked"
fi

# The mount records what inspect reports.
mount_cmfs
mkdir "$M/envs/dev"
cp "$T/mongodb.jar" "$M/envs/dev/artifacts/mongodb.jar"
eq "the mount records the same factory" \
	"connector mongodb com.example.mongodb.MongoDynamicTableFactory" \
	"$(getfattr --absolute-names --only-values -n user.cmfs.factories \
		"$M/envs/dev/artifacts/mongodb.jar")"
check_not "and refuses what inspect calls no zip" \
	cp "$T/not-zip.jar" "$M/envs/dev/artifacts/broken.jar"
finish
