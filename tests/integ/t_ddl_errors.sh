#!/bin/sh
# tables/: what Flink's validator refuses is refused at write time, and
# the reason is readable where the user wrote (user.cmfs.error on an
# existing table until the next good write, across remounts; events for
# a new one).
. "$(dirname "$0")/lib.sh"
mount_cmfs
mkdir "$M/envs/prod"
TB=$M/envs/prod/tables
DDL=$TOP/tests/ddl

# reason FILE: the table's user.cmfs.error, as getfattr prints it.
reason() {
	getfattr --absolute-names --only-values -n user.cmfs.error "$1" 2>&1
}

# What Flink accepts is accepted: // comments, $ names, keys twice, no
# column list, USING CONNECTION.
for f in 111-no-column-list 113-slash-slash-comment 114-dollar-identifier \
	115-using-connection 117-quoted-reserved-words 118-watermark-expressions; do
	name=$(sed -n 's/^CREATE TABLE \(`default`\.\)\{0,1\}\([A-Za-z_]*\).*/\2/p' \
		"$DDL/valid/$f.sql" | head -n 1)
	check "accepted: $f" cp "$DDL/valid/$f.sql" "$TB/$name.sql"
done
printf "CREATE TABLE dup (a INT) WITH ('connector' = 'x', 'connector' = 'datagen')" >"$T/dup.sql"
check "a key written twice is accepted" cp "$T/dup.sql" "$TB/dup.sql"
eq "as written" "$(cat "$T/dup.sql")" "$(cat "$TB/dup.sql")"
eq "the catalog keeps the last value, as Flink" datagen \
	"$(sql "SELECT o.value FROM tables t, tab_options o WHERE o.table_id = t.id AND t.name = 'dup' AND o.key = 'connector'")"
contains "events name the connector Flink uses" "connector=datagen" "$(last_event prod 'table=dup')"

# A good table, then refused rewrites: each keeps the old text and says
# why on the file itself.
good="CREATE TABLE shop (
  ID BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen')"
errno_is "a good table" OK write "$TB/shop.sql" "$good"
eq "no reason while it is good" "" "$(reason "$TB/shop.sql")"

# refused DESC ERRNO REASON-FRAGMENT TEXT
refused() {
	errno_is "refused: $1" "$2" write "$TB/shop.sql" "$4"
	contains "$1: getfattr says why" "$3" "$(reason "$TB/shop.sql")"
	eq "$1: the old text stays" "$good" "$(cat "$TB/shop.sql")"
}
refused "a reserved word" EINVAL "2:3: user is a reserved word of Flink SQL: to use it as a name, back-quote it: \`user\`" \
	"CREATE TABLE shop (
  user STRING
) WITH ('connector' = 'datagen')"
refused "an emoji in a name" EINVAL "1:21: character" \
	"CREATE TABLE shop (a🚀 INT) WITH ('connector' = 'datagen')"
refused "case-sensitive names" EINVAL "(names are case-sensitive: \`ID\` exists)" \
	"CREATE TABLE shop (
  ID BIGINT,
  k AS id + 1
) WITH ('connector' = 'datagen')"
refused "an unknown function" EINVAL "unknown function TO_TIMESTAMPS()" \
	"CREATE TABLE shop (s STRING, t AS TO_TIMESTAMPS(s)) WITH ('connector' = 'datagen')"
refused "a bare TIMESTAMP rowtime" EINVAL "TIMESTAMP alone means TIMESTAMP(6): write TIMESTAMP(3)" \
	"CREATE TABLE shop (ts TIMESTAMP, WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')"
refused "a watermark on PROCTIME()" EINVAL "processing-time" \
	"CREATE TABLE shop (pt AS PROCTIME(), WATERMARK FOR pt AS pt) WITH ('connector' = 'datagen')"
refused "a watermark of another type" EINVAL "is INT: it must be TIMESTAMP(p)" \
	"CREATE TABLE shop (ts TIMESTAMP(3), WATERMARK FOR ts AS 1) WITH ('connector' = 'datagen')"
refused "a CTAS with bare column names" EOPNOTSUPP "(CTAS) is not supported" \
	"CREATE TABLE shop (a, b) WITH ('connector' = 'blackhole') AS SELECT 1, 2"
contains "events keep the refusal too" "errno=EOPNOTSUPP" "$(last_event prod 'table=shop')"

# The reason goes with the next good write, and with the table.
errno_is "a good write again" OK write "$TB/shop.sql" "$good"
eq "the reason is gone" "" "$(reason "$TB/shop.sql")"
errno_is "refused once more" EINVAL write "$TB/shop.sql" "CREATE TABLE shop (a INT"
contains "the new reason" "1:25: expected" "$(reason "$TB/shop.sql")"
# The catalog keeps it: a remount still says why, until a good write.
remount_cmfs
contains "a remount keeps the reason" "1:25: expected" "$(reason "$TB/shop.sql")"
errno_is "a good write after the remount" OK write "$TB/shop.sql" "$good"
eq "which clears it" "" "$(reason "$TB/shop.sql")"
remount_cmfs
eq "for good" "" "$(reason "$TB/shop.sql")"
errno_is "refused after the remount" EINVAL write "$TB/shop.sql" "CREATE TABLE shop (a INT"
check "rm of the table" rm "$TB/shop.sql"
errno_is "the table again" OK write "$TB/shop.sql" "$good"
eq "a new table starts with no reason" "" "$(reason "$TB/shop.sql")"

# A refused new table has no file: its reason is in events.
errno_is "a refused new table" EINVAL write "$TB/fresh.sql" \
	"CREATE TABLE fresh (s STRING, t AS TO_TIMESTAMPS(s)) WITH ('connector' = 'datagen')"
check_not "does not exist" test -e "$TB/fresh.sql"
contains "events say why (the README's command)" "unknown function TO_TIMESTAMPS()" \
	"$(grep -F 'table=fresh' "$M/envs/prod/events" | tail -n 1)"
finish
