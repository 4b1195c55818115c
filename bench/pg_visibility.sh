#!/bin/sh
# bench/pg_visibility.sh - how soon host B sees an upload made on host A,
# both mounting one PostgreSQL catalog (issue 31: p50 <= 100 ms, p99 <= 1 s).
#
#   sh bench/pg_visibility.sh          (as root; SAMPLES=200 by default)
#
# A private cluster and two daemons on two stores, as tests/integ/t_pg2.sh
# starts them, with 30 s kernel cache times (so B sees a name only when
# A's notification makes its kernel ask again).  Each sample: B looks up a
# new name (its kernel keeps the miss), A uploads a 1 KiB file there (cp
# returns once the version is committed), then B stats the name in a busy
# loop until it is there.  The time from cp's return to B's first
# success is the sample.  Prints p50, p90, p99 and the maximum, in ms.
CMFS=${CMFS:-$(cd "$(dirname "$0")/.." && pwd)/cmfs}
. "$(dirname "$0")/../tests/integ/lib.sh"
. "$(dirname "$0")/../tests/integ/pg.sh"
SAMPLES=${SAMPLES:-200}
pg_start

two_hosts
mount_cmfs
M2=$T/mnt2
mkdir -p "$M2"
mount_second "$T/b.ini" "$M2" "$T/daemon2.log"
mkdir "$M/envs/prod"
while [ ! -d "$M2/envs/prod/artifacts" ]; do sleep 0.01; done
head -c 1024 /dev/urandom >"$T/one.bin"

: >"$T/samples"
i=0
while [ $i -lt "$SAMPLES" ]; do
	f=v$i.bin
	[ -e "$M2/envs/prod/artifacts/$f" ] || :
	cp "$T/one.bin" "$M/envs/prod/artifacts/$f"
	t0=$(date +%s%N)
	while [ ! -e "$M2/envs/prod/artifacts/$f" ]; do :; done
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000)) >>"$T/samples"
	i=$((i + 1))
done
sort -n "$T/samples" | awk -v n="$SAMPLES" '
	{ v[NR] = $1 }
	END {
		printf "visibility on B of an upload on A, %d samples: ", n
		printf "p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms\n",
			v[int(n * 0.50) + 1] / 1000, v[int(n * 0.90) + 1] / 1000,
			v[int(n * 0.99) + 1] / 1000, v[n] / 1000
	}'
umount_second "$M2"
finish
