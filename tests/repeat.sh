#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# repeat.sh - make check-repeat: run each test N times (round after round,
# so that a noisy minute of the machine hits every test alike) through
# make check, keep the log of every failed run, and print each test's
# pass count out of N. A test that fails once in a hundred runs while the
# product is right is a bug (tests/README.md).
#
#   repeat.sh N MAKE TEST...     (run from the build tree)
# Exit 0 when every test passed every run, 1 otherwise.
set -u
n=$1
make=$2
shift 2
[ "$n" -ge 1 ] 2>/dev/null || { echo "check-repeat: N=$n is not a count of runs" >&2; exit 2; }
[ $# -ge 1 ] || { echo "check-repeat: no tests to repeat" >&2; exit 2; }
dir=repeat.out
rm -rf "$dir"
mkdir -p "$dir"
for t in "$@"; do
	echo 0 >"$dir/$(echo "$t" | tr / _).pass"
	echo 0 >"$dir/$(echo "$t" | tr / _).skip"
done
bump() { echo $(($(cat "$1") + 1)) >"$1"; }
round=1
while [ $round -le "$n" ]; do
	for t in "$@"; do
		key=$dir/$(echo "$t" | tr / _)
		$make check TESTS="$t" >"$dir/last.out" 2>&1
		res=$(sed -n 's/^:test-result: //p' "${t%.*}.trs" 2>/dev/null | head -n 1)
		case $res in
		PASS) bump "$key.pass" ;;
		SKIP) bump "$key.skip" ;;
		*)
			cp "${t%.*}.log" "$key.run$round.log" 2>/dev/null ||
				cp "$dir/last.out" "$key.run$round.log"
			echo "check-repeat: round $round: ${res:-no result} $t (log: $key.run$round.log)"
			;;
		esac
	done
	echo "check-repeat: round $round of $n done"
	round=$((round + 1))
done
bad=0
printf '%-48s %s\n' test passed
for t in "$@"; do
	key=$dir/$(echo "$t" | tr / _)
	p=$(cat "$key.pass")
	s=$(cat "$key.skip")
	note=
	[ "$s" -gt 0 ] && note=" ($s skipped)"
	[ "$p" -eq "$n" ] || bad=1
	printf '%-48s %s/%s%s\n' "$t" "$p" "$n" "$note"
done
rm -f "$dir/last.out" "$dir"/*.pass "$dir"/*.skip
[ $bad -eq 0 ] && echo "check-repeat: every test passed $n of $n runs"
exit $bad
