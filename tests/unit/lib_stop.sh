#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# lib_stop.sh - how a test's cleanup (tests/lib.sh) stops the programs it
# started in the background:
#  - a program that runs gets SIGTERM and never SIGCONT (a SIGCONT drops
#    the SIGSTOP a sanitizer's leak check at exit sends its own threads,
#    and that check then hangs for ever: seen once in CI, 2 h 20 min);
#  - a stopped program (SIGSTOP) gets SIGCONT too, and exits;
#  - one that ignores SIGTERM is killed after WAIT_SECONDS and the test
#    fails quickly, instead of running out CI's time.
# No namespaces: lib.sh's helpers are called on plain child processes.
WAIT_SECONDS=3
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

# A child that records the signals it gets in $TMP/$1.sig and exits
# 0.5 s after SIGTERM (a daemon's orderly stop).
child() {
	/usr/bin/python3 -c '
import os, signal, sys, time
f = sys.argv[1]
def note(n, _):
    open(f, "a").write(signal.Signals(n).name + "\n")
    if n == signal.SIGTERM:
        time.sleep(0.5)
        sys.exit(0)
signal.signal(signal.SIGCONT, note)
signal.signal(signal.SIGTERM, note)
open(f + ".up", "w").close()
while True:
    time.sleep(1)
' "$TMP/$1.sig" &
}
wait_up() {
	end=$(deadline "$WAIT_SECONDS")
	until [ -e "$TMP/$1.sig.up" ]; do
		before "$end" || fail "child $1 did not start"
		sleep 0.05
	done
}

child run; run=$!
child stopped; stopped=$!
sh -c 'trap "" TERM; while :; do sleep 0.1; done' & deaf=$!
wait_up run
wait_up stopped
kill -STOP "$stopped"
end=$(deadline "$WAIT_SECONDS")
until [ "$(child_state "$stopped")" = T ]; do
	before "$end" || fail "child $stopped did not stop on SIGSTOP"
	sleep 0.05
done

t0=$(date +%s)
stop_children "$run" "$stopped" "$deaf" 2>"$TMP/stop.err" &&
	fail "stop_children returned 0 with a child that ignores SIGTERM"
t=$(($(date +%s) - t0))
out=$(cat "$TMP/stop.err")
echo "$out" | grep -q "^FAIL: pid $deaf (sh) still runs $WAIT_SECONDS s after SIGTERM; killed" ||
	fail "no message for the child that ignores SIGTERM: $out"
[ "$t" -le $((WAIT_SECONDS + 2)) ] ||
	fail "stop_children took $t s with WAIT_SECONDS=$WAIT_SECONDS"
for p in $run $stopped $deaf; do
	[ -z "$(child_state "$p")" ] || fail "child $p is still there"
done
[ "$(cat "$TMP/run.sig")" = SIGTERM ] ||
	fail "the running child got: $(cat "$TMP/run.sig" | tr '\n' ' ') (SIGTERM alone expected)"
grep -qx SIGTERM "$TMP/stopped.sig" ||
	fail "the stopped child never saw its SIGTERM: $(cat "$TMP/stopped.sig" 2>/dev/null | tr '\n' ' ')"
log "ok"
