#!/bin/sh
# Access rules on a real mount, as real unprivileged users made here:
# who may read, upload, write tables and administer; EACCES in events with
# the uid; modes that agree with the caller; SIGHUP reload.
. "$(dirname "$0")/lib.sh"

U_RO=cmfst_ro
U_UP=cmfst_up
U_TW=cmfst_tw
U_GRP=cmfst_grp
G=cmfst_ops
groupadd -f "$G"
for u in $U_RO $U_UP $U_TW $U_GRP; do
	id "$u" >/dev/null 2>&1 || useradd -M -N -s /bin/sh "$u"
done
usermod -a -G "$G" $U_GRP
cleanup_users() {
	for u in $U_RO $U_UP $U_TW $U_GRP; do userdel "$u" 2>/dev/null; done
	groupdel "$G" 2>/dev/null
}

# The tools the users run must be reachable by them.
chmod 755 "$T"
cp "$SYSC" "$T/sysc"
cp "$DATA/plain-v1.jar" "$T/lib.jar"
chmod 755 "$T/sysc"
chmod 644 "$T/lib.jar"
as() { u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"; }
sy() { u=$1; shift; as "$u" "$T/sysc" "$@" 2>&1; }

INI_EXTRA="[access]
read = *
upload = root, $U_UP, @$G
write_tables = root, $U_TW
admin = root"
mount_cmfs
P=$M/envs/prod
mkdir "$P"
cp "$T/lib.jar" "$P/artifacts/lib.jar"
printf "CREATE TABLE t (a INT) WITH ('connector' = 'datagen')" >"$P/tables/t.sql"

# The matrix: read, list, upload, label, delete, mkdir/rmdir, table, resolved.
eq "reader: read an artifact" OK "$(sy $U_RO read "$P/artifacts/lib.jar")"
check "reader: list" as $U_RO ls "$P/artifacts"
eq "reader: upload" EACCES "$(sy $U_RO write "$P/artifacts/new.txt" x)"
eq "reader: overwrite" EACCES "$(sy $U_RO open "$P/artifacts/lib.jar" wt)"
eq "reader: label" EACCES "$(sy $U_RO setxattr "$P/artifacts/lib.jar" user.a b)"
eq "reader: delete" EACCES "$(sy $U_RO unlink "$P/artifacts/lib.jar")"
eq "reader: mkdir env" EACCES "$(sy $U_RO mkdir "$M/envs/dev")"
mkdir "$M/envs/scratch-env"
eq "reader: rmdir env" EACCES "$(sy $U_RO rmdir "$M/envs/scratch-env")"
eq "uploader: rmdir env" EACCES "$(sy $U_UP rmdir "$M/envs/scratch-env")"
eq "table writer: mkdir env" EACCES "$(sy $U_TW mkdir "$M/envs/tw")"
eq "reader: remove a version" EACCES "$(sy $U_RO unlink "$P/versions/lib.jar/1.jar")"
eq "reader: write a table" EACCES "$(sy $U_RO write "$P/tables/t.sql" x)"
eq "reader: drop a table" EACCES "$(sy $U_RO unlink "$P/tables/t.sql")"
eq "reader: read resolved" OK "$(sy $U_RO read "$P/tables/resolved/t.jars")"
eq "reader: read events" OK "$(sy $U_RO read "$P/events")"
contains "EACCES is in events with the uid" "uid=$(id -u $U_RO) env=prod action=create object=new.txt result=refused errno=EACCES" \
	"$(grep -F 'object=new.txt' "$P/events" | tail -n 1)"
eq "reader: ls -l shows no write bits" "-r--r--r--" \
	"$(as $U_RO stat -c %A "$P/artifacts/lib.jar")"

eq "uploader: upload" OK "$(sy $U_UP write "$P/artifacts/up.txt" hello)"
eq "uploader: label" OK "$(sy $U_UP setxattr "$P/artifacts/up.txt" user.team data)"
eq "uploader: delete needs admin" EACCES "$(sy $U_UP unlink "$P/artifacts/up.txt")"
eq "uploader: write a table" EACCES "$(sy $U_UP write "$P/tables/t.sql" x)"
eq "uploader: owns what it uploaded" "$(id -u $U_UP)" "$(stat -c %u "$P/artifacts/up.txt")"
eq "uploader: sees write bits" "-rw-r--r--" "$(as $U_UP stat -c %A "$P/artifacts/up.txt")"
eq "@group member: upload" OK "$(sy $U_GRP write "$P/artifacts/grp.txt" x)"

eq "table writer: write a table" OK \
	"$(sy $U_TW write "$P/tables/t2.sql" "CREATE TABLE t2 (a INT) WITH ('connector' = 'datagen')")"
eq "table writer: drop a table" OK "$(sy $U_TW unlink "$P/tables/t2.sql")"
eq "table writer: upload" EACCES "$(sy $U_TW write "$P/artifacts/x.txt" x)"

eq "root (admin): delete" OK "$("$SYSC" unlink "$P/artifacts/up.txt")"
eq "root (admin): mkdir" OK "$("$SYSC" mkdir "$M/envs/dev")"
eq "root (admin): rmdir" OK "$("$SYSC" rmdir "$M/envs/scratch-env")"
eq "uploader: drop a table" EACCES "$(sy $U_UP unlink "$P/tables/t.sql")"
eq "table writer: read resolved" OK "$(sy $U_TW read "$P/tables/resolved/t.sql")"

# SIGHUP: new rules without unmounting; a bad file keeps the old ones.
cat >>"$T/cmfs.ini" <<INI
[env.dev]
upload = $U_RO
INI
kill -HUP "$PID"
sleep 0.5
contains "the reload is in the daemon log" "SIGHUP: reloaded" "$(cat "$LOG")"
eq "reader may now upload in dev" OK "$(sy $U_RO write "$M/envs/dev/artifacts/ro.txt" x)"
eq "but still not in prod" EACCES "$(sy $U_RO write "$P/artifacts/ro.txt" x)"
printf '[access]\nread = nosuchuserhere\n' >>"$T/cmfs.ini"
kill -HUP "$PID"
sleep 0.5
contains "a bad file is logged" "keeping the configuration in force" "$(cat "$LOG")"
eq "and the old rules stay" OK "$(sy $U_RO write "$M/envs/dev/artifacts/ro2.txt" x)"

# Configuration management reloads often: a replaced configuration is kept
# 10 minutes (a request may still read it), 64 of them; one more reload in
# that time is refused and the rules in force stay.
head -n -2 "$T/cmfs.ini" >"$T/cmfs.ini.new" && mv "$T/cmfs.ini.new" "$T/cmfs.ini"
n0=$(grep -c "SIGHUP: reloaded" "$LOG")
i=0
while [ $i -lt 64 ]; do
	kill -HUP "$PID"
	j=0
	while [ "$(grep -c -e 'SIGHUP: reloaded' -e 'reloads within' "$LOG")" \
		-lt $((n0 + i + 1)) ] && [ $j -lt 200 ]; do
		sleep 0.01
		j=$((j + 1))
	done
	i=$((i + 1))
done
eq "63 more reloads are taken" $((n0 + 63)) "$(grep -c 'SIGHUP: reloaded' "$LOG")"
contains "one more within 10 minutes is refused" "64 reloads within 600 s" "$(cat "$LOG")"
eq "and the rules in force stay" OK "$(sy $U_RO write "$M/envs/dev/artifacts/ro3.txt" x)"
umount_cmfs

# An environment's admins hold every right there, as CMF's roles do, and
# [env.<e>]'s admin list decides who creates <e>: here root may not read
# by [access], yet administers prod2 and so reads and writes there; the
# uploader administers nothing but prod2's own list names it.
INI_EXTRA="[access]
read = $U_RO
upload = $U_UP
write_tables = $U_TW
admin = $U_TW
[env.prod2]
admin = root, $U_UP"
mount_cmfs
eq "[env.prod2] admin: root makes prod2 though [access] lets it not read" OK "$("$SYSC" mkdir "$M/envs/prod2")"
eq "and uploads there" OK "$("$SYSC" write "$M/envs/prod2/artifacts/a.txt" x)"
eq "and writes a table there" OK "$("$SYSC" write "$M/envs/prod2/tables/t.sql" "CREATE TABLE t (a INT) WITH ('connector' = 'datagen')")"
eq "and reads it" OK "$("$SYSC" read "$M/envs/prod2/tables/resolved/t.jars")"
eq "but not prod, where it is not admin" EACCES "$("$SYSC" read "$P/artifacts/lib.jar")"
eq "an admin of prod2 by its list reads there" OK "$(sy $U_UP read "$M/envs/prod2/artifacts/a.txt")"
eq "[access] admin: the table writer reads prod" OK "$(sy $U_TW read "$P/artifacts/lib.jar")"
eq "and uploads there" OK "$(sy $U_TW write "$P/artifacts/tw.txt" x)"
eq "but is not prod2's admin: [env.prod2] decides there" EACCES "$(sy $U_TW unlink "$M/envs/prod2/artifacts/a.txt")"
eq "the reader stays a reader" EACCES "$(sy $U_RO write "$P/artifacts/ro.txt" x)"
umount_cmfs

# Without rules: the mounting user does everything, others read.
INI_EXTRA=
mount_cmfs
eq "default: another user reads" OK "$(sy $U_RO read "$P/artifacts/lib.jar")"
eq "default: another user cannot upload" EACCES "$(sy $U_RO write "$P/artifacts/z.txt" x)"
eq "default: nor make an environment" EACCES "$(sy $U_RO mkdir "$M/envs/x")"
eq "default: the owner can" OK "$("$SYSC" write "$P/artifacts/z.txt" x)"
cleanup_users
finish
