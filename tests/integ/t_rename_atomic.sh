#!/bin/sh
# A scratch file renamed onto a table (sed -i, vim's write) or an artifact
# (rsync) is one change: after it, the catalog has the new text (or
# version) and no scratch file is left; a crash in the middle leaves the
# old state or the new one, never both names.  The crash is injected as t_crash.sh does it for power losses:
# the store is left as the daemon leaves it between its two steps (the
# scratch file staged under scratch/<env>/{t,a}-to/<target>/, the
# catalog committed or not), and the next mount settles it.
. "$(dirname "$0")/lib.sh"
mount_cmfs
mkdir "$M/envs/prod"
TB=$M/envs/prod/tables
old="CREATE TABLE t (a INT) WITH ('connector' = 'datagen')"
new="CREATE TABLE t (a INT, b INT) WITH ('connector' = 'datagen')"
printf '%s' "$old" >"$TB/t.sql"

# The rename itself.
printf '%s' "$new" >"$TB/t.sql.tmp"
check "mv of a scratch file onto a table" mv "$TB/t.sql.tmp" "$TB/t.sql"
eq "the catalog has the new text" "$new" "$(sql "SELECT ddl FROM tables WHERE name = 't'")"
eq "tables/ has no scratch file" "resolved t.sql" "$(ls "$TB" | tr '\n' ' ' | sed 's/ $//')"
eq "nothing is left staged" 0 "$(find "$STORE/scratch" -path '*-to/*' -type f | wc -l | tr -d ' ')"
contains "one events line, a table write" "action=table-write table=t connector=datagen result=ok" \
	"$(last_event prod 'table=t')"

# Refused: both names stay as they were.
printf 'CREATE TABLE t (a INT' >"$TB/bad.tmp"
check_not "a rename of text that is no table is refused" mv "$TB/bad.tmp" "$TB/t.sql"
eq "the table keeps its text" "$new" "$(cat "$TB/t.sql")"
eq "the scratch file is still there" "CREATE TABLE t (a INT" "$(cat "$TB/bad.tmp")"
eq "nothing is left staged after a refusal" 0 \
	"$(find "$STORE/scratch" -path '*-to/*' -type f | wc -l | tr -d ' ')"
rm "$TB/bad.tmp"

# A crash after the staging, before the commit: the old state comes back.
umount_cmfs
mkdir -p "$STORE/scratch/prod/t-to/t"
printf '%s' "$old" >"$STORE/scratch/prod/t-to/t/sedAbc123"
mount_cmfs
eq "cut before the commit: the table keeps its text" "$new" "$(cat "$TB/t.sql")"
eq "and the scratch file is back" "$old" "$(cat "$TB/sedAbc123")"
eq "nothing is left staged after the mount" 0 \
	"$(find "$STORE/scratch" -path '*-to/*' -type f | wc -l | tr -d ' ')"
contains "the daemon's log says so" "was not committed, the scratch file is back" "$(cat "$LOG")"
rm "$TB/sedAbc123"

# A crash after the commit, before the scratch file went: the new state.
umount_cmfs
mkdir -p "$STORE/scratch/prod/t-to/t"
printf '%s' "$new" >"$STORE/scratch/prod/t-to/t/sedXyz789"
mount_cmfs
eq "cut after the commit: the table has the new text" "$new" "$(cat "$TB/t.sql")"
check_not "and the scratch file is gone" test -e "$TB/sedXyz789"
eq "tables/ shows one name" "resolved t.sql" "$(ls "$TB" | tr '\n' ' ' | sed 's/ $//')"
eq "nothing is left staged after that mount" 0 \
	"$(find "$STORE/scratch" -path '*-to/*' -type f | wc -l | tr -d ' ')"
contains "the daemon's log says so too" "it was committed, the scratch file is removed" "$(cat "$LOG")"

# A table renamed to a scratch name, and back: one step each way.
check "mv of a table to a scratch name" mv "$TB/t.sql" "$TB/t.sql.bak"
eq "the table is gone, its text is the scratch file" "resolved t.sql.bak" \
	"$(ls "$TB" | tr '\n' ' ' | sed 's/ $//')"
eq "with the table's text" "$new" "$(cat "$TB/t.sql.bak")"
eq "the catalog has no such table" 0 "$(sql "SELECT count(*) FROM tables WHERE name = 't'")"
check "and back" mv "$TB/t.sql.bak" "$TB/t.sql"
eq "the table is back" "$new" "$(sql "SELECT ddl FROM tables WHERE name = 't'")"
eq "nothing is left staged after both" 0 \
	"$(find "$STORE/scratch" -path '*-to/*' -type f | wc -l | tr -d ' ')"

# The same in artifacts/: rsync's temp file renamed into place.
A=$M/envs/prod/artifacts
printf 'one' >"$A/.lib.txt.aB12"
check "mv of a scratch file onto an artifact" mv "$A/.lib.txt.aB12" "$A/lib.txt"
eq "the artifact has its bytes" one "$(cat "$A/lib.txt")"
eq "artifacts/ has no scratch file" "lib.txt" "$(ls -A "$A" | tr '\n' ' ' | sed 's/ $//')"
eq "nothing of artifacts/ is left staged" 0 \
	"$(find "$STORE/scratch" -path '*/a-to/*' -type f | wc -l | tr -d ' ')"
umount_cmfs
mkdir -p "$STORE/scratch/prod/a-to/lib.txt"
printf 'two' >"$STORE/scratch/prod/a-to/lib.txt/.lib.txt.cut1"
mount_cmfs
eq "cut before the commit: the artifact keeps its bytes" one "$(cat "$A/lib.txt")"
eq "and the scratch file is back" two "$(cat "$A/.lib.txt.cut1")"
eq "one version" "1.txt" "$(ls "$M/envs/prod/versions/lib.txt" | tr '\n' ' ' | sed 's/ $//')"
rm "$A/.lib.txt.cut1"
umount_cmfs
mkdir -p "$STORE/scratch/prod/a-to/lib.txt"
printf 'one' >"$STORE/scratch/prod/a-to/lib.txt/.lib.txt.cut2"
mount_cmfs
check_not "cut after the commit: the scratch file is gone" test -e "$A/.lib.txt.cut2"
eq "artifacts/ shows one name" "lib.txt" "$(ls -A "$A" | tr '\n' ' ' | sed 's/ $//')"
eq "nothing is left staged at all" 0 \
	"$(find "$STORE/scratch" -path '*-to/*' -type f | wc -l | tr -d ' ')"
finish
