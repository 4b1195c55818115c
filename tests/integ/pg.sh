# pg.sh - a private PostgreSQL cluster for the tests that need one.
# POSIX sh; sourced after lib.sh, whose cleanup (at exit) stops it.
#
#   . "$(dirname "$0")/pg.sh"
#   pg_start                   # skips (exit 77) without PostgreSQL
#   INI_EXTRA="[catalog]
#   url = $PG_URL"
#   pg_sql "SELECT count(*) FROM versions"
#
# The cluster lives in a directory of its own under /tmp, owned by an
# unprivileged user (initdb and postgres refuse to run as root), listens
# on a Unix socket in that directory and on a loopback port, and is
# stopped and removed when the test exits.

PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V |
	tail -n 1)}
PGUSER_OS=${PGUSER_OS:-nobody}
PGDIR=
PGPORT=
PG_URL=

# Run as the cluster's owner, from a directory it may enter.
as_pg() {
	(cd "$PGDIR" && runuser -u "$PGUSER_OS" -- "$@")
}

# Start the server on $PGPORT; 0 once it accepts connections.
pg_run() {
	as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w -t 60 \
		-o "-k $PGDIR -p $PGPORT -h 127.0.0.1 -c fsync=off \
		-c full_page_writes=off" start >/dev/null 2>&1
}

pg_start() {
	if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ] ||
		[ ! -x "$PGBIN/pg_ctl" ]; then
		say "$NAME: skipped: needs PostgreSQL (initdb, pg_ctl)"
		exit 77
	fi
	PGDIR=$(mktemp -d /tmp/cmfs-pg.XXXXXX)
	chown "$PGUSER_OS" "$PGDIR"
	chmod 700 "$PGDIR"
	if ! as_pg "$PGBIN/initdb" -D "$PGDIR/data" -U cmfs -A trust \
		-E UTF8 --locale=C --no-sync >"$PGDIR/initdb.log" 2>&1; then
		say "FAIL: initdb; log:"
		cat "$PGDIR/initdb.log"
		FAIL=$((FAIL + 1))
		finish
	fi
	# A free port: another cluster (a test running beside) may hold one.
	tries=0
	while :; do
		PGPORT=$((20000 + ($$ + tries * 7919) % 30000))
		if pg_run; then
			break
		fi
		tries=$((tries + 1))
		if [ $tries -ge 5 ]; then
			say "FAIL: pg_ctl start; log:"
			tail -n 20 "$PGDIR/log"
			FAIL=$((FAIL + 1))
			finish
		fi
	done
	PG_URL="postgresql://cmfs@/postgres?host=$PGDIR&port=$PGPORT"
}

# pg_stop: stop the server at once (as a crash would).
pg_stop() {
	[ -n "$PGDIR" ] || return 0
	as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate -w stop \
		>/dev/null 2>&1
}

# pg_start_again: after pg_stop, the same server on the same port.
pg_start_again() {
	if ! pg_run; then
		say "FAIL: pg_ctl start (again); log:"
		tail -n 20 "$PGDIR/log"
		FAIL=$((FAIL + 1))
		finish
	fi
}

# pg_sql SQL: one statement through psql, unaligned, no headers.
pg_sql() {
	"$PGBIN/psql" -X -q -A -t -d "$PG_URL" -c "$1"
}

# two_hosts: INI_EXTRA for hosts on $PG_URL whose kernels may keep names
# long, found or not (30 s), so that only another host's notification
# makes one ask again soon; and $T/b.ini, host B's configuration (store
# $T/store2) for mount_second.  Then mount_cmfs mounts host A.
two_hosts() {
	INI_EXTRA="[mount]
entry_timeout = 30
attr_timeout = 30
negative_timeout = 30
[catalog]
url = $PG_URL"
	printf '[store]\npath = %s\n%s\n' "$T/store2" "$INI_EXTRA" \
		>"$T/b.ini"
}

# mount_second INI MNT [LOG]: another host, a daemon of its own on MNT
# with configuration INI, logging to LOG ($LOG by default); its pid in
# PID2.  0 once mounted.
mount_second() {
	"$CMFS" -c "$1" -f -o allow_other "$2" >>"${3:-$LOG}" 2>&1 &
	PID2=$!
	i=0
	while ! mountpoint -q "$2" && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	mountpoint -q "$2"
}

# umount_second MNT: unmount it; passes when its daemon exits 0.
umount_second() {
	fusermount3 -u "$1"
	if wait "$PID2"; then pass; else fail "the second daemon exited non-zero"; fi
	PID2=
}

# Stop and remove the cluster: lib.sh's cleanup calls this at exit.
pg_discard() {
	if [ -n "$PGDIR" ]; then
		pg_stop
		rm -rf "$PGDIR"
		PGDIR=
	fi
}
