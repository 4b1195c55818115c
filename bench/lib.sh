# shellcheck shell=sh
# bench/lib.sh - the mount helpers bench/run.sh and bench/reqmix.sh share.
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
