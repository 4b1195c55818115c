#!/bin/sh
# Who may see what is in an environment (issue 34, item 8): a user
# without `read` there cannot stat artifacts, tables or events, nor list
# label names, even right after a user who may has looked them up (the
# kernel keeps names across users; cmfs keeps no attributes where the
# rules differ).
. "$(dirname "$0")/lib.sh"

U_NO=cmfst_noread
U_RD=cmfst_reader
for u in $U_NO $U_RD; do
	id "$u" >/dev/null 2>&1 || useradd -M -N -s /bin/sh "$u"
done
chmod 755 "$T"
cp "$SYSC" "$T/sysc"
chmod 755 "$T/sysc"
as() { u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"; }
sy() { u=$1; shift; as "$u" "$T/sysc" "$@" 2>&1; }

# shellcheck disable=SC2034 # read by lib.sh
INI_EXTRA="[access]
read = *
[env.prod]
read = root, $U_RD
upload = root
write_tables = root
admin = root"
mount_cmfs
P=$M/envs/prod
mkdir "$P"
cp "$DATA/plain-v1.jar" "$P/artifacts/x.jar"
setfattr -n user.team -v data "$P/artifacts/x.jar"
printf "CREATE TABLE t (a INT) WITH ('connector' = 'datagen')" >"$P/tables/t.sql"

for f in artifacts/x.jar tables/t.sql events versions/x.jar/1.jar \
	tables/resolved/t.jars; do
	# The owner looks first: the kernel now knows the name.
	stat "$P/$f" >/dev/null
	check_not "no read: stat $f" as $U_NO stat "$P/$f"
	check "read: stat $f" as $U_RD stat "$P/$f"
	check "root: stat $f" stat "$P/$f"
done
# ls -l through known names (a listing taken by root first).
ls -l "$P/artifacts" >/dev/null
check_not "no read: ls -l" as $U_NO ls -l "$P/artifacts"
check_not "no read: stat after root's ls -l" as $U_NO stat "$P/artifacts/x.jar"
eq "no read: label names" EACCES "$(sy $U_NO listxattr "$P/artifacts/x.jar")"
eq "no read: a label" EACCES "$(sy $U_NO getxattr "$P/artifacts/x.jar" user.team)"
eq "read: label names" OK "$(sy $U_RD listxattr "$P/artifacts/x.jar")"
eq "no read: open" EACCES "$(sy $U_NO read "$P/artifacts/x.jar")"
# Right after the reader's stat, the kernel has nothing to show the other.
as $U_RD stat "$P/artifacts/x.jar" >/dev/null
out=$(as $U_NO stat -c '%s %u %Y' "$P/artifacts/x.jar" 2>&1)
contains "no read: no size, owner or time from a cache" "Permission denied" "$out"
# access(2) through a name the kernel knows from root's look-up.
acc() { as "$1" /usr/bin/python3 -c 'import os,sys; print(os.access(sys.argv[1], {"r": os.R_OK, "w": os.W_OK, "f": os.F_OK}[sys.argv[2]]))' "$2" "$3"; }
stat "$P/artifacts/x.jar" >/dev/null
eq "no read: access(F_OK) says no" False "$(acc $U_NO "$P/artifacts/x.jar" f)"
eq "no read: access(R_OK) says no" False "$(acc $U_NO "$P/artifacts/x.jar" r)"
eq "read: access(R_OK) says yes" True "$(acc $U_RD "$P/artifacts/x.jar" r)"
eq "read, no upload: access(W_OK) says no" False "$(acc $U_RD "$P/artifacts/x.jar" w)"
eq "root (upload): access(W_OK) says yes" True "$(acc root "$P/artifacts/x.jar" w)"
eq "a version: access(W_OK) says no, even to root" False \
	"$(acc root "$P/versions/x.jar/1.jar" w)"
check_not "no read: cd into artifacts/" as $U_NO sh -c "cd '$P/artifacts'"
# A name that is not there: the kernel keeps no absence for others to
# learn from (the refusal is EACCES whether the name is there or not).
stat "$P/artifacts/none.jar" >/dev/null 2>&1
out=$(as $U_NO stat "$P/artifacts/none.jar" 2>&1)
contains "no read: an absent name is EACCES too" "Permission denied" "$out"
# Other environments are not touched by prod's rules.
mkdir "$M/envs/dev"
cp "$DATA/plain-v1.jar" "$M/envs/dev/artifacts/y.jar"
check "no read in prod, read in dev: stat" as $U_NO stat "$M/envs/dev/artifacts/y.jar"
eq "and label names there" OK "$(sy $U_NO listxattr "$M/envs/dev/artifacts/y.jar")"
contains "a refused stat is in events with the uid" \
	"uid=$(id -u $U_NO) env=prod action=stat" "$(cat "$P/events")"

for u in $U_NO $U_RD; do userdel "$u" 2>/dev/null; done
finish
