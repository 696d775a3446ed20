#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install the build and test dependencies, build nfqd with warnings as
# errors, and run the whole test suite: unit tests, integration tests
# against the real kernel in their own network namespaces, system tests
# (the installed tree under a real systemd in a container), make
# distcheck, the README's other command (contrib/demo.sh, its output
# checked), make check again with ASan + UBSan, and a short run of every
# fuzz target. Run as root from anywhere in a clone.
# In CI (CI=true) a skipped integration test fails the run.
#
# contrib/test.sh --repeat N: the same build, then every integration test
# N times (make check-repeat) and each test's pass count out of N, so a
# flaky test shows itself before it reaches CI.
set -euo pipefail

repeat=
case ${1:-} in
--repeat)
	repeat=${2:-}
	[ "$repeat" -ge 1 ] 2>/dev/null || { echo "usage: contrib/test.sh [--repeat N]" >&2; exit 2; }
	;;
"") ;;
*) echo "usage: contrib/test.sh [--repeat N]" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
"$top/contrib/install-deps.sh"

cd "$top"
./autogen.sh >/dev/null
pkg-config --exists cmocka || { echo "test: cmocka missing" >&2; exit 1; }

echo "== build (gcc, -Werror)"
mkdir -p "$top/build"
cd "$top/build"
../configure --enable-werror >/dev/null
make -j"$jobs" >/dev/null

if [ -n "$repeat" ]; then
	echo "== make check-repeat N=$repeat"
	exec make check-repeat N="$repeat"
fi

echo "== make check"
status=0
make -j"$jobs" check >check.out 2>&1 || status=$?
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' check.out || true
if [ $status -ne 0 ]; then
	echo "== failing test logs"
	for log in $(find . -name '*.log' ! -name test-suite.log ! -name config.log); do
		grep -qE '^:test-result: (FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null \
			&& { echo "--- $log"; tail -n 60 "$log"; }
	done
fi
pass=$(grep -c '^PASS:' check.out || true)
fail=$(grep -cE '^(FAIL|ERROR|XPASS):' check.out || true)
skip=$(grep -c '^SKIP:' check.out || true)
xfail=$(grep -c '^XFAIL:' check.out || true)

# The tarball builds out of tree, passes its tests and installs and
# uninstalls cleanly. Its temporary prefix is no layout a system boots, and
# make check above ran the system tests on this very build: skip them here.
echo "== make distcheck"
dstatus=0
NFQD_SYSTEM_TESTS=off make -j"$jobs" distcheck \
	DISTCHECK_CONFIGURE_FLAGS=--enable-werror >distcheck.out 2>&1 || dstatus=$?
if [ $dstatus -eq 0 ]; then
	pass=$((pass + 1))
	grep -E '^nfqd-.* archives ready for distribution' -A 1 distcheck.out || true
else
	fail=$((fail + 1))
	echo "make distcheck failed:"
	tail -n 60 distcheck.out
fi

# The README's first command as a newcomer runs it: it must end well, and
# show an allowed name answered and a blocked one dropped, over DNS and TLS.
echo "== contrib/demo.sh"
mstatus=0
"$top/contrib/demo.sh" >"$top/build/demo.out" 2>&1 || mstatus=$?
for want in "www.example.org: answered 192.0.2.2" \
	"cdn.ads.example: no answer: nfqd dropped the query" \
	"www.example.org: HTTP 200 from the server" \
	"cdn.ads.example: no answer: nfqd dropped the ClientHello" \
	"demo done"; do
	grep -qF "$want" "$top/build/demo.out" ||
		{ echo "demo: no line \"$want\""; mstatus=1; }
done
if [ $mstatus -eq 0 ]; then
	pass=$((pass + 1))
	echo "demo: ok"
else
	fail=$((fail + 1))
	echo "contrib/demo.sh failed:"
	tail -n 60 "$top/build/demo.out"
fi

# make check again with ASan + UBSan (tests/README.md): a report fails the
# test that caused it. make check-sanitizers leaves out the system tests
# and the two tests that assert a time or a rate (SAN_SKIP_TESTS in
# Makefile.am says why).
echo "== make check with ASan + UBSan"
t0=$SECONDS
mkdir -p "$top/build-asan"
cd "$top/build-asan"
sstatus=0
{
	../configure --enable-werror --enable-sanitizers >/dev/null &&
	make -j"$jobs" >/dev/null &&
	make -j"$jobs" check-sanitizers >check.out 2>&1
} || sstatus=$?
grep -E '^(FAIL|XPASS|ERROR):' check.out || true
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|ERROR):' check.out || true
if [ $sstatus -eq 0 ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "== failing test logs (ASan + UBSan)"
	for log in $(find . -name '*.log' ! -name test-suite.log ! -name config.log); do
		grep -qE '^:test-result: (FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null \
			&& { echo "--- $log"; tail -n 80 "$log"; }
	done
fi
echo "ASan + UBSan: $((SECONDS - t0)) s"

echo "== fuzz (clang, libFuzzer + ASan, ${FUZZ_SECONDS:-15} s per target)"
mkdir -p "$top/build-fuzz"
cd "$top/build-fuzz"
fstatus=0
{
	CC=clang CFLAGS="-g -O1 -fsanitize=fuzzer-no-link,address" \
		../configure --enable-fuzz >/dev/null &&
	make -j"$jobs" libnfqd.la >/dev/null &&
	make fuzz-run FUZZ_SECONDS="${FUZZ_SECONDS:-15}" >fuzz.out 2>&1
} || fstatus=$?
grep -E '^fuzz:|stat::number_of_executed_units|ERROR' fuzz.out || true
if [ $fstatus -eq 0 ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	tail -n 40 fuzz.out
fi

if [ "${CI:-}" = true ] && [ "$skip" -gt 0 ]; then
	echo "test: $skip tests skipped; in CI a skip is a failure" >&2
	fail=$((fail + skip))
fi
echo "tests: $pass passed, $fail failed, $skip skipped," \
	"$xfail expected failures (XFAIL_TESTS in Makefile.am)"
[ "$status" -eq 0 ] && [ "$dstatus" -eq 0 ] && [ "$fstatus" -eq 0 ] && [ "$fail" -eq 0 ]
