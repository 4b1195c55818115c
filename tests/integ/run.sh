#!/bin/sh
# run.sh - run every integration test (tests/integ/t_*.sh), or those
# named (run.sh t_stress.sh ...), each in its own shell, and sum their
# closing lines.  Exit 77 from a test is a skip.
cd "$(dirname "$0")" || exit 1
p=0
f=0
s=0
[ $# -gt 0 ] || set -- t_*.sh
for t in "$@"; do
	out=$(sh "./$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	line=$(printf '%s\n' "$out" | tail -n 1)
	np=$(printf '%s' "$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
	nf=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	ns=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
	if [ "$rc" -eq 77 ]; then
		s=$((s + 1))
		continue
	fi
	p=$((p + ${np:-0}))
	f=$((f + ${nf:-1}))
	s=$((s + ${ns:-0}))
	if [ "$rc" -ne 0 ] && [ "${nf:-1}" -eq 0 ]; then f=$((f + 1)); fi
done
echo "integration: $p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
