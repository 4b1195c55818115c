# shellcheck shell=sh
# bench/lib.sh - the mount helpers bench/run.sh, bench/reqmix.sh and
# bench/soak.sh share.
# Sourced, not run; the caller defines die().

# unmount DIR: if DIR is a mount point, unmount it (lazily if it is busy).
unmount() {
	if mountpoint -q "$1"; then
		fusermount3 -u "$1" 2>/dev/null || fusermount3 -uz "$1" ||
			true
	fi
}

# wait_gone PID: the daemon exits after its unmount; 10 s at most.
wait_gone() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		kill "$1" 2>/dev/null || true
	fi
}

# wait_mount DIR PID [LOG]: until DIR is mounted; die (after printing
# LOG, if given) when daemon PID exits first or 10 s pass.
wait_mount() {
	i=0
	while ! mountpoint -q "$1"; do
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 "$2" 2>/dev/null; then
			if [ -n "${3:-}" ]; then cat "$3" >&2; fi
			die "$1 did not mount"
		fi
		sleep 0.05
	done
}

# The fuse module's switch for requests over io_uring (fs/uring.c).
URING_PARAM=/sys/module/fuse/parameters/enable_uring
URING_WAS=

# uring_on: unless URING=0, turn it on for this run, as an operator who
# wants cmfs fast would; uring_restore (in the caller's cleanup) puts
# back what it was.  passthrough_ll (libfuse 3.14) cannot use it.
uring_on() {
	if [ "${URING:-1}" = 1 ] && [ -w "$URING_PARAM" ]; then
		URING_WAS=$(cat "$URING_PARAM")
		echo Y >"$URING_PARAM"
	fi
}

uring_restore() {
	[ -z "$URING_WAS" ] || echo "$URING_WAS" >"$URING_PARAM"
}

# uring_said LOG: what the daemon logged of io_uring at mount (its rings
# register right after INIT: waits 2 s at most for the line).
uring_said() {
	i=0
	while ! grep -q 'io_uring: o' "$1" && [ $i -lt 40 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	grep -o 'io_uring: o.*' "$1" | head -n 1
}
