# lib.sh - shared by the integration tests: mount cmfs for real, drive it
# with the tools users use, count checks.  POSIX sh; sourced, not run.
#
#   . "$(dirname "$0")/lib.sh"
#   mount_cmfs                 # fresh store, embedded defaults + $INI_EXTRA
#   check "what" test -f "$M/envs"
#   errno_is "what" EINVAL setxattr "$F" user.x y
#   finish                     # prints "<name>: N passed, N failed, N skipped"
#
# It skips (exit 77) without /dev/fuse or root; its EXIT trap unmounts,
# waits for the daemon and fails the test on a sanitizer report in the
# daemon's log.

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CMFS=${CMFS:-$TOP/cmfs}
SYSC=${SYSC:-$TOP/${CMFS_BUILD:-build}/tools/sysc}
# Fixture JARs (tests/fixtures) and plain test data (tests/integ/data).
export FIX="$TOP/tests/fixtures/jars"
export DATA="$TOP/tests/integ/data"
NAME=$(basename "$0" .sh)
# libfuse's own leaks are not ours (see the file).
export LSAN_OPTIONS="suppressions=$TOP/tests/lsan.supp:print_suppressions=0"
PASS=0
FAIL=0
SKIP=0
PID=
T=$(mktemp -d "/tmp/cmfs-$NAME.XXXXXX")
M=$T/mnt
STORE=$T/store
LOG=$T/daemon.log
mkdir -p "$M"

if [ ! -c /dev/fuse ] || [ "$(id -u)" != 0 ]; then
	echo "$NAME: skipped: needs root and /dev/fuse"
	rm -rf "$T"
	exit 77
fi

say() { printf '%s\n' "$*"; }

pass() { PASS=$((PASS + 1)); }

fail() {
	FAIL=$((FAIL + 1))
	say "FAIL: $*"
}

skip() {
	SKIP=$((SKIP + 1))
	say "skip: $*"
}

# check DESC CMD...: passes when CMD exits 0.
check() {
	d=$1
	shift
	if "$@" >/dev/null 2>&1; then pass; else fail "$d"; fi
}

# check_not DESC CMD...: passes when CMD fails.
check_not() {
	d=$1
	shift
	if "$@" >/dev/null 2>&1; then fail "$d"; else pass; fi
}

# eq DESC EXPECTED ACTUAL
eq() {
	if [ "$2" = "$3" ]; then
		pass
	else
		fail "$1: expected [$2], got [$3]"
	fi
}

# contains DESC NEEDLE HAYSTACK
contains() {
	case $3 in
	*"$2"*) pass ;;
	*) fail "$1: [$2] not in [$3]" ;;
	esac
}

# errno_is DESC ERRNO SYSC-ARGS...: the errno name of one system call.
errno_is() {
	d=$1
	want=$2
	shift 2
	got=$("$SYSC" "$@" 2>&1)
	eq "$d" "$want" "$got"
}

# The last line of an environment's events that mentions $2.
last_event() {
	grep -F -- "$2" "$M/envs/$1/events" | tail -n 1
}

write_ini() {
	{
		printf '[store]\npath = %s\n' "$STORE"
		if [ -n "${INI_EXTRA:-}" ]; then printf '%s\n' "$INI_EXTRA"; fi
		if [ -n "${CMFS_TEST_PG:-}" ]; then
			printf '[catalog]\nurl = %s\n' "$PG_URL"
		fi
	} >"$T/cmfs.ini"
}

# mount_cmfs [EXTRA-ARGS...]: start the daemon in the foreground and wait.
# With allow_other (other users' tests need it) unless MOUNT_OPTS says
# otherwise: a mount only its owner uses lets the kernel keep more.
mount_cmfs() {
	write_ini
	# shellcheck disable=SC2086 # options are words
	"$CMFS" -c "$T/cmfs.ini" -f ${MOUNT_OPTS--o allow_other} "$@" "$M" \
		>>"$LOG" 2>&1 &
	PID=$!
	i=0
	while ! mountpoint -q "$M"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$PID" 2>/dev/null; then
			say "FAIL: cmfs did not mount; log:"
			cat "$LOG"
			PID=
			FAIL=$((FAIL + 1))
			finish
		fi
		sleep 0.05
	done
}

# umount_cmfs: unmount and wait for the daemon; a sanitizer report or a
# non-zero exit is a failure.
umount_cmfs() {
	[ -n "$PID" ] || return 0
	fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M" 2>/dev/null
	if wait "$PID"; then pass; else fail "daemon exited non-zero"; fi
	PID=
	san='AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:'
	if grep -q -E "$san" "$LOG"; then
		fail "sanitizer report in the daemon log"
		grep -E -A 20 "$san" "$LOG" | head -n 40
	fi
}

remount_cmfs() {
	umount_cmfs
	mount_cmfs "$@"
}

# The catalog, read with sqlite3 (the daemon may be running: WAL allows it),
# or with psql when the test's catalog is PostgreSQL's (pg.sh).
sql() {
	if [ -n "${PG_URL:-}" ]; then
		pg_sql "$1"
	else
		sqlite3 "$STORE/catalog.db" "$1"
	fi
}

cleanup() {
	if [ -n "$PID" ]; then
		fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M" 2>/dev/null
		wait "$PID" 2>/dev/null
	fi
	if [ "$FAIL" -gt 0 ] && [ -f "$LOG" ]; then
		say "--- daemon log (last 30 lines) ---"
		tail -n 30 "$LOG"
	fi
	rm -rf "$T"
	# A test's PostgreSQL cluster (pg.sh), whatever trap calls this.
	if command -v pg_discard >/dev/null 2>&1; then pg_discard; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

finish() {
	umount_cmfs
	say "$NAME: $PASS passed, $FAIL failed, $SKIP skipped"
	[ "$FAIL" -eq 0 ] || exit 1
	exit 0
}

# CMFS_TEST_PG=1: the test's mounts keep their catalog in a private
# PostgreSQL cluster (pg.sh) instead of SQLite.
if [ -n "${CMFS_TEST_PG:-}" ]; then
	. "$TOP/tests/integ/pg.sh"
	pg_start
fi
