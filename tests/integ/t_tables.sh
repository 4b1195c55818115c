#!/bin/sh
# tables/: writing <t>.sql creates or replaces a table, checked at close;
# the editors and tools people use; refusals that keep the previous text.
. "$(dirname "$0")/lib.sh"
mount_cmfs
mkdir "$M/envs/prod"
TB=$M/envs/prod/tables
DDL=$TOP/tests/ddl

cp "$DDL/valid/004-mongodb-orders.sql" "$TB/orders.sql"
check "cp of a CREATE TABLE" cmp "$DDL/valid/004-mongodb-orders.sql" "$TB/orders.sql"
eq "ls -l shows its size" "$(stat -c %s "$DDL/valid/004-mongodb-orders.sql")" "$(stat -c %s "$TB/orders.sql")"
eq "stored as written" "$(cat "$DDL/valid/004-mongodb-orders.sql")" \
	"$(sql "SELECT ddl FROM tables WHERE name = 'orders'")"
eq "its options are in the catalog" mongodb \
	"$(sql "SELECT o.value FROM tables t, tab_options o WHERE o.table_id = t.id AND t.name = 'orders' AND o.key = 'connector'")"
contains "the write is in events" "action=table-write table=orders connector=mongodb result=ok" \
	"$(last_event prod 'table=orders')"

# The seeds: RocketMQ accepted, Databend refused for its primary key.
for f in "$DDL"/valid/00[123]-rocketmq-*.sql; do
	name=$(sed -n 's/.*CREATE TABLE \([a-z_]*\).*/\1/p' "$f" | head -n 1)
	check "rocketmq seed $(basename "$f")" cp "$f" "$TB/$name.sql"
done
sed 's/CREATE TABLE t_user/CREATE TABLE t_user/' "$DDL/invalid/001-databend-enforced-pk.sql" >"$T/databend.sql"
check_not "the databend seed is refused" cp "$T/databend.sql" "$TB/t_user.sql"
contains "with the reason and the fix" "NOT ENFORCED" "$(last_event prod 'table=t_user')"
check_not "a refused new table does not exist" test -e "$TB/t_user.sql"

# Refusals keep the previous definition.
before=$(cat "$TB/orders.sql")
errno_is "an ENFORCED primary key" EINVAL write "$TB/orders.sql" \
	"CREATE TABLE orders (a INT, PRIMARY KEY (a)) WITH ('connector' = 'x')"
errno_is "CTAS" EOPNOTSUPP write "$TB/orders.sql" "CREATE TABLE orders AS SELECT * FROM src"
contains "CTAS says why" "not supported in the environment catalog" "$(last_event prod 'errno=EOPNOTSUPP')"
errno_is "RTAS" EOPNOTSUPP write "$TB/orders.sql" "CREATE OR REPLACE TABLE orders AS SELECT 1"
errno_is "a name that differs from the file's" EINVAL write "$TB/orders.sql" \
	"CREATE TABLE other (a INT) WITH ('connector' = 'x')"
errno_is "two statements" EINVAL write "$TB/orders.sql" \
	"CREATE TABLE orders (a INT) WITH ('connector' = 'x'); CREATE TABLE orders (b INT) WITH ('connector' = 'x');"
errno_is "not a CREATE TABLE" EINVAL write "$TB/orders.sql" "DROP TABLE orders"
errno_is "TEMPORARY" EINVAL write "$TB/orders.sql" \
	"CREATE TEMPORARY TABLE orders (a INT) WITH ('connector' = 'x')"
errno_is "another catalog" EINVAL write "$TB/orders.sql" \
	"CREATE TABLE other_cat.db1.orders (a INT) WITH ('connector' = 'x')"
errno_is "the environment catalog's own name" OK write "$TB/qual.sql" \
	"CREATE TABLE \`_env_prod\`.\`default\`.qual (a INT) WITH ('connector' = 'datagen')"
errno_is "a syntax error" EINVAL write "$TB/orders.sql" "CREATE TABLE orders (a INT"
contains "it says line:col" "1:" "$(last_event prod 'table=orders' | sed 's/.*reason=//')"
eq "after all that, the previous text is intact" "$before" "$(cat "$TB/orders.sql")"
errno_is "a name that is not a table is a scratch file" OK write "$TB/notes.txt" "x"
errno_is "resolved/ is read-only" EROFS write "$TB/resolved/orders.jars" x

# Editors and tools.
sed -i "s/'shop'/'shop2'/" "$TB/orders.sql"
contains "sed -i edits a table" "'shop2'" "$(sql "SELECT ddl FROM tables WHERE name = 'orders'")"
eq "and leaves no scratch file" "notes.txt orders.sql qual.sql resolved rocketmq_sink.sql rocketmq_source.sql" \
	"$(ls "$TB" | tr '\n' ' ' | sed 's/ $//')"
sed -i "s/PRIMARY KEY (\`_id\`) NOT ENFORCED/PRIMARY KEY (\`_id\`)/" "$TB/orders.sql" 2>/dev/null
contains "a sed -i that breaks the table is refused" "'shop2'" "$(cat "$TB/orders.sql")"
contains "the broken edit did not land" "NOT ENFORCED" "$(cat "$TB/orders.sql")"
echo "-- owner: data team" >>"$TB/orders.sql"
contains "echo >> appends a comment" "owner: data team" "$(cat "$TB/orders.sql")"
tee "$TB/tee_t.sql" >/dev/null <<'SQL'
CREATE TABLE tee_t (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'datagen');
SQL
check "tee writes a table" test -s "$TB/tee_t.sql"
install -m 644 "$DDL/valid/004-mongodb-orders.sql" "$TB/orders2.sql" 2>/dev/null
check_not "install of a file whose name differs is refused" test -e "$TB/orders2.sql"
if command -v vim >/dev/null 2>&1; then
	HOME=$T vim -u DEFAULTS -i NONE -es -c "%s/'shop2'/'shop3'/" -c wq "$TB/orders.sql" </dev/null
	contains "vim with its defaults (swap, backup) edits a table" "'shop3'" \
		"$(sql "SELECT ddl FROM tables WHERE name = 'orders'")"
	HOME=$T vim -u DEFAULTS -i NONE -es -c "%s/NOT ENFORCED//" -c 'w' -c 'q!' "$TB/orders.sql" </dev/null
	contains "a vim write that breaks it is refused" "NOT ENFORCED" "$(cat "$TB/orders.sql")"
	eq "vim leaves no swap, backup or 4913 file" "" \
		"$(ls -A "$TB" | grep -E '\.swp$|~$|^4913$' || true)"
else
	skip "vim is not installed"
fi

if command -v nano >/dev/null 2>&1 && command -v tmux >/dev/null 2>&1; then
	# nano, typed at through tmux: add a comment line on top, save, exit.
	(cd "$TB" && tmux new-session -d -s "cmfs-nano-$$" -x 120 -y 40 \
		"HOME=$T nano orders.sql")
	sleep 1
	tmux send-keys -t "cmfs-nano-$$" M-\\
	tmux send-keys -t "cmfs-nano-$$" -l -- "-- edited in nano"
	tmux send-keys -t "cmfs-nano-$$" Enter C-o
	sleep 0.5
	tmux send-keys -t "cmfs-nano-$$" Enter
	sleep 0.5
	tmux send-keys -t "cmfs-nano-$$" C-x
	sleep 0.5
	tmux kill-session -t "cmfs-nano-$$" 2>/dev/null
	eq "nano edits a table" "-- edited in nano" "$(head -n 1 "$TB/orders.sql")"
	contains "and it is stored" "edited in nano" "$(sql "SELECT ddl FROM tables WHERE name = 'orders'")"
else
	skip "nano or tmux is not installed"
fi

# Drop.
check "rm drops a table" rm "$TB/tee_t.sql"
eq "gone from the catalog" 0 "$(sql "SELECT count(*) FROM tables WHERE name = 'tee_t'")"
contains "the drop is in events" "action=table-drop" "$(last_event prod 'table=tee_t')"
errno_is "rm of a missing table" ENOENT unlink "$TB/tee_t.sql"

# LIKE: merged at write time; the source must exist.
cat >"$TB/base.sql" <<'SQL'
CREATE TABLE base (id BIGINT, name STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '5');
SQL
cat >"$TB/derived.sql" <<'SQL'
CREATE TABLE derived (extra INT) WITH ('rows-per-second' = '10') LIKE base;
SQL
eq "LIKE merges the options" "connector=datagen rows-per-second=10" \
	"$(sql "SELECT group_concat(o.key || '=' || o.value, ' ') FROM (SELECT o.key, o.value FROM tables t, tab_options o WHERE o.table_id = t.id AND t.name = 'derived' ORDER BY o.seq) o")"
errno_is "LIKE of a missing table" EINVAL write "$TB/d2.sql" \
	"CREATE TABLE d2 (x INT) LIKE nothing"
rm "$TB/base.sql"
eq "the derived table keeps its merged options" 2 \
	"$(sql "SELECT count(*) FROM tables t, tab_options o WHERE o.table_id = t.id AND t.name = 'derived'")"

remount_cmfs
contains "tables survive a remount" "'shop3'" "$(cat "$TB/orders.sql")"
finish
