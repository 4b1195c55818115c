#!/bin/sh
# The audit trail under abuse and on a bad day: users without rights
# looping on refusals and on resolutions do not grow the store by more
# than 1 MB a minute, and what they did is counted in events; retention
# by [events] max_rows; on a full disk every result=ok line is a change
# the catalog holds and no line is bare; the refusals that had no line;
# hostile bytes in names escaped.
. "$(dirname "$0")/lib.sh"

NOONE=4242	# no rights at all
RO=4243		# read only
MANY=4244	# no rights, refused many ways
chmod 755 "$T"
as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
# shellcheck disable=SC2317 # called by the trap
audit_cleanup() {
	cleanup
	umount "$T/small" 2>/dev/null
	rm -rf "$T"
}
trap audit_cleanup EXIT

INI_EXTRA="[access]
read = root, $RO
upload = root
write_tables = root
admin = root"
mount_cmfs
P=$M/envs/prod
A=$P/artifacts
TB=$P/tables
mkdir "$P"
cp "$FIX/mongodb.jar" "$A/mongodb-connector.jar"
setfattr -n user.cmf.confluent.io/sql-artifact-type -v connector "$A/mongodb-connector.jar"
setfattr -n user.cmf.confluent.io/sql-artifact-identifier -v mongodb "$A/mongodb-connector.jar"
cp "$TOP/tests/ddl/valid/004-mongodb-orders.sql" "$TB/orders.sql"
check "the read-only user resolves the table" as $RO cat "$TB/resolved/orders.jars"
check "the user without rights may not read events" sh -c \
	"! setpriv --reuid=$NOONE --regid=$NOONE --clear-groups cat '$P/events'"

# The two loops of issue 34, side by side for 10 s; then a third user
# refused 200 different ways at once.
sleep 1
sync
rows0=$(sql "SELECT count(*) FROM events")
size0=$(du -sb "$STORE" | cut -f1)
# shellcheck disable=SC2016 # expanded by the inner shell
loop='end=$(($(date +%s) + 10)); n=0
while [ "$(date +%s)" -lt "$end" ]; do cat "$1" >/dev/null 2>&1; n=$((n + 1)); done
echo "$n"'
as $NOONE sh -c "$loop" loop "$P/events" >"$T/n_events" &
L1=$!
as $RO sh -c "$loop" loop "$TB/resolved/orders.jars" >"$T/n_jars" &
L2=$!
wait $L1 $L2
sleep 1
sync
n_events=$(cat "$T/n_events")
n_jars=$(cat "$T/n_jars")
say "loops: $n_events refused reads of events, $n_jars reads of orders.jars"
check "the refusal loop ran (over 500 times)" test "$n_events" -gt 500
check "the resolution loop ran (over 500 times)" test "$n_jars" -gt 500
rows1=$(sql "SELECT count(*) FROM events")
size1=$(du -sb "$STORE" | cut -f1)
say "events rows: $rows0 -> $rows1; store: $size0 -> $size1 bytes"
# 1 MB a minute, pro rata: 10 s of loops (and the second after) is 183 KB.
check "the store grew by at most 1 MB a minute" test $((size1 - size0)) -le 187392
check "events grew by few lines, not one per refusal" test $((rows1 - rows0)) -le 20
as $MANY sh -c "i=0; while [ \$i -lt 200 ]; do i=\$((i + 1)); cat '$P/x'\$i 2>/dev/null; done"
cat "$P/events" >"$T/ev"
coalesced=$(grep "uid=$NOONE env=prod action=read object=events repeated=" "$T/ev" | head -n 1)
contains "the refusal loop is one line with its count" "result=refused errno=EACCES" "$coalesced"
rep=$(printf '%s' "$coalesced" | sed -n 's/.* repeated=\([0-9]*\) in=\([0-9]*\)s .*/\1 in \2/p')
check "and the count is of the thousands ($rep s)" test "${rep%% *}" -gt 100
eq "a resolution that did not change is written once" 1 \
	"$(grep -c "uid=$RO env=prod action=resolve table=orders" "$T/ev")"
written=$(grep -c "uid=$MANY env=prod action=read object=x[0-9]* result=refused" "$T/ev")
check "a uid refused 200 ways writes at most its burst ($written)" test "$written" -le 70
# Every line is whole: time, uid, env, action first.
eq "no line lacks time, uid, env or action" "" \
	"$(grep -v -E '^time=[0-9T:.-]+Z uid=[0-9]+ env=prod action=[^ ]+ ' "$T/ev")"

# At unmount the counts still open are written: every refusal is there.
umount_cmfs
sql "SELECT line FROM events WHERE env = 'prod' ORDER BY off" >"$T/ev"
# The sum of a uid's refusals in events: each line 1, or its count.
refusals() {
	grep "uid=$1 env=prod action=" "$T/ev" | awk '
	/ repeated=/ { sub(/.* repeated=/, ""); n += $1; next }
	/ suppressed=/ { sub(/.* suppressed=/, ""); n += $1; next }
	{ n++ } END { print n + 0 }'
}
# (A lookup of prod that the kernel checks again is a refusal of its own.)
eq "every refused read is in events, written or counted" \
	"$((n_events + 1))" "$(refusals $NOONE)"
eq "every refusal of the uid refused 200 ways too" 200 "$(refusals $MANY)"
contains "the rest is counted, not dropped" "uid=$MANY env=prod action=rate-limit object=refusals suppressed=" \
	"$(cat "$T/ev")"

# The refusals that had no line.
INI_EXTRA="$INI_EXTRA
[limits]
max_artifact_size = 64K
max_scratch_size = 32K"
mount_cmfs
errno_is "a scratch file over max_scratch_size" EFBIG write "$A/.scratch" \
	"$(head -c 40000 /dev/zero | tr '\0' x)"
contains "has its line" "action=write object=.scratch result=refused errno=EFBIG" \
	"$(last_event prod 'object=.scratch')"
printf x >"$A/.scratch2"
errno_is "a truncate of a scratch file over it" EFBIG truncate "$A/.scratch2" 40000
contains "has its line" "action=truncate object=.scratch2 result=refused errno=EFBIG" \
	"$(last_event prod 'object=.scratch2')"
printf x >"$A/small.bin"
# truncate(1) opens the file and ftruncate()s the descriptor.
contains "an ftruncate of an upload over max_artifact_size" "File too large" \
	"$(truncate -s 70000 "$A/small.bin" 2>&1)"
contains "has its line" "action=truncate object=small.bin result=refused errno=EFBIG" \
	"$(last_event prod 'object=small.bin')"
eq "and the artifact is as it was" x "$(cat "$A/small.bin")"
printf "CREATE TABLE t1 (a INT) WITH ('connector' = 'datagen')" >"$TB/t1.sql"
printf "CREATE TABLE t2 (b INT) WITH ('connector' = 'datagen')" >"$TB/t2.sql"
before=$(grep -c . "$P/events")
errno_is "mv of one table onto another (its text names t1)" EINVAL \
	rename "$TB/t1.sql" "$TB/t2.sql"
after=$(grep -c . "$P/events")
eq "is one line in events" 1 $((after - before))
contains "that says what was refused" \
	"action=rename table=t1 to=t2 result=refused errno=EINVAL" \
	"$(tail -n 1 "$P/events")"
eq "t2 is as it was" "CREATE TABLE t2 (b INT) WITH ('connector' = 'datagen')" \
	"$(cat "$TB/t2.sql")"
check "t1 too" test -e "$TB/t1.sql"

# Hostile bytes in refused names: escaped, never raw.
bad=$(printf 'h\001\033[31m\302\205\342\200\256x\377.jar')
check_not "a name with control and non-UTF-8 bytes is refused" \
	sh -c "printf x >'$A/$bad'"
line=$(grep -a 'h\\x01' "$P/events" | tail -n 1)
contains "its bytes are escaped" 'h\x01\x1b[31m\xc2\x85\xe2\x80\xaex\xff.jar' "$line"
eq "no raw control or non-UTF-8 byte in events" 0 \
	"$(LC_ALL=C grep -c -a -P '[\x00-\x09\x0b-\x1f\x7f]|\xff|\xc2\x85' "$P/events")"

# Retention by rows: the oldest go first, and a line says so.
INI_EXTRA="$INI_EXTRA
[events]
max_rows = 20"
remount_cmfs
eq "at most max_rows lines are kept" 20 \
	"$(sql "SELECT count(*) FROM events WHERE env = 'prod'")"
contains "with a line that says how many went" "action=retention object=events removed=" \
	"$(cat "$P/events")"
eq "events starts with a whole line" "time=" "$(head -c 5 "$P/events")"
eq "its size is what is read" "$(stat -c %s "$P/events")" "$(wc -c <"$P/events" | tr -d ' ')"
i=0
while [ $i -lt 50 ]; do
	i=$((i + 1))
	setfattr -n user.n -v "$i" "$A/small.bin"
done
sleep 0.5
n=$(sql "SELECT count(*) FROM events WHERE env = 'prod'")
check "50 more lines: still about max_rows ($n)" test "$n" -le 22
contains "the newest is kept" "value=50 result=ok" "$(tail -n 1 "$P/events" ; grep 'value=50 ' "$P/events")"
eq "every line is whole" "" \
	"$(grep -v -E '^time=[0-9T:.-]+Z uid=[0-9]+ env=prod action=[^ ]+ ' "$P/events")"

# The gate's rates are [events] keys: a burst of 5 where 60 is the
# default writes 5 of 50 different refusals, and counts the rest.
umount_cmfs
INI_EXTRA="[access]
read = root, $RO
upload = root
write_tables = root
admin = root
[events]
repeat_window = 2s
uid_rate = 1
uid_burst = 5"
mount_cmfs
ls "$P" >/dev/null # the kernel knows prod: each refusal is of a y<i>
as $MANY sh -c "i=0; while [ \$i -lt 50 ]; do i=\$((i + 1)); cat '$P/y'\$i 2>/dev/null; done"
written=$(grep -c "uid=$MANY env=prod action=read object=y[0-9]* result=refused" "$P/events")
check "[events] uid_burst = 5: 5 of 50 refusals written, and a few a second ($written)" \
	test "$written" -ge 5 -a "$written" -le 15
# Refusals outside any environment (the root, envs/ itself) are whole
# lines too, with env=- (no environment is named so), in the daemon log.
check_not "a file at the root is refused" touch "$M/x"
errno_is "a bad environment name is refused" EINVAL mkdir "$M/envs/Bad_Name"
as $MANY sh -c "i=0; while [ \$i -lt 3 ]; do i=\$((i + 1)); touch '$M/envs/z'\$i 2>/dev/null; done"
contains "the root's refusal says env=-" "env=- action=create object=x result=refused" \
	"$(grep 'object=x ' "$LOG")"
contains "so does a bad environment name's" \
	"env=- action=mkdir object=Bad_Name result=refused errno=EINVAL" \
	"$(grep 'object=Bad_Name' "$LOG")"
eq "no refusal line in the log lacks time, uid, env or action" "" \
	"$(grep 'result=refused' "$LOG" |
		grep -v -E 'time=[0-9T:.-]+Z uid=[0-9]+ env=[^ ]+ action=[^ ]+ ')"
umount_cmfs
sql "SELECT line FROM events WHERE env = 'prod' ORDER BY off" >"$T/ev"
eq "every one of the 50 is in events, written or counted" 50 \
	"$(grep "uid=$MANY env=prod action=" "$T/ev" | grep "object=y\|object=refusals" | awk '
	/ suppressed=/ { sub(/.* suppressed=/, ""); n += $1; next }
	{ n++ } END { print n + 0 }')"

# A full disk: commits that fail are refusals, in events and in the log.
umount_cmfs
mkdir "$T/small"
if mount -t tmpfs -o size=6M tmpfs "$T/small" 2>/dev/null; then
	STORE=$T/small/store
	INI_EXTRA=
	: >"$LOG"
	mount_cmfs
	mkdir "$P"
	i=0
	full=0
	while [ $i -lt 400 ]; do
		i=$((i + 1))
		head -c 40000 /dev/urandom >"$T/chunk"
		if ! cp "$T/chunk" "$A/f$i.bin" 2>"$T/cp.err"; then
			full=$((full + 1))
			[ $full -ge 5 ] && break
		fi
		printf "CREATE TABLE t%s (a INT) WITH ('connector' = 'datagen')" \
			"$i" >"$TB/t$i.sql" 2>/dev/null
	done
	check "the disk filled ($i uploads)" test $full -ge 1
	contains "with ENOSPC" "No space left" "$(cat "$T/cp.err")"
	umount_cmfs
	# What events say happened must be in the catalog.
	sql "SELECT line FROM events WHERE env = 'prod' ORDER BY off" >"$T/ev"
	bad=0
	grep 'action=upload .*result=ok' "$T/ev" | while read -r l; do
		a=$(printf '%s' "$l" | sed -n 's/.* artifact=\([^ ]*\) .*/\1/p')
		v=$(printf '%s' "$l" | sed -n 's/.* version=\([0-9]*\) .*/\1/p')
		s=$(printf '%s' "$l" | sed -n 's/.* sha256=\([0-9a-f]*\) .*/\1/p')
		n=$(sql "SELECT count(*) FROM versions v JOIN artifacts a ON a.id = v.artifact_id WHERE a.name = '$a' AND v.n = $v AND v.sha256 = '$s'")
		[ "$n" = 1 ] || echo "$l"
	done >"$T/lies"
	grep 'action=table-write .*result=ok' "$T/ev" | while read -r l; do
		t=$(printf '%s' "$l" | sed -n 's/.* table=\([^ ]*\) .*/\1/p')
		n=$(sql "SELECT count(*) FROM tables WHERE name = '$t'")
		[ "$n" = 1 ] || echo "$l"
	done >>"$T/lies"
	eq "every result=ok line in events is in the catalog" "" "$(head -n 5 "$T/lies")"
	# The daemon's log: no result=ok for what the catalog lacks.
	grep -a -o 'action=upload artifact=[^ ]* version=[0-9]* size=[0-9]* sha256=[0-9a-f]* .*result=ok' "$LOG" |
		while read -r l; do
			a=$(printf '%s' "$l" | sed -n 's/.*artifact=\([^ ]*\) .*/\1/p')
			s=$(printf '%s' "$l" | sed -n 's/.* sha256=\([0-9a-f]*\) .*/\1/p')
			n=$(sql "SELECT count(*) FROM versions v JOIN artifacts a ON a.id = v.artifact_id WHERE a.name = '$a' AND v.sha256 = '$s'")
			[ "$n" = 1 ] || echo "$l"
		done >"$T/loglies"
	grep -a -o 'action=table-write table=[^ ]* .*result=ok' "$LOG" |
		while read -r l; do
			t=$(printf '%s' "$l" | sed -n 's/.* table=\([^ ]*\) .*/\1/p')
			n=$(sql "SELECT count(*) FROM tables WHERE name = '$t'")
			[ "$n" = 1 ] || echo "$l"
		done >>"$T/loglies"
	eq "nor in the daemon's log" "" "$(head -n 5 "$T/loglies")"
	check "where a table write was refused with ENOSPC" grep -a -q \
		'action=table-write table=[^ ]* .*result=refused errno=ENOSPC' "$LOG"
	eq "no line in events is bare" "" \
		"$(grep -v -E '^time=[0-9T:.-]+Z uid=[0-9]+ env=prod action=[^ ]+ ' "$T/ev")"
	eq "nor in the daemon's log" "" \
		"$(grep -a -E '^ ?result=' "$LOG" | head -n 3)"
	check "a refused commit says ENOSPC" grep -a -q 'result=refused errno=ENOSPC' "$LOG"
	umount "$T/small"
else
	skip "cannot mount a tmpfs for the full-disk test"
fi
finish
