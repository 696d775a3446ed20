#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The progress watchdog: with WATCHDOG_USEC set, nfqd sends WATCHDOG=1
# every half interval while every worker completes batches or waits; a
# worker stuck in a batch (strace holds one worker thread in recvmmsg for
# 3 s, no special build) stops the pings, and they resume when it moves.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables
require_cmd python3
require_cmd strace
# Everything to queue 0: queue 1's worker stays idle, which is progress.
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0
conf=$(flood_options | conf_file nfqd.conf)
mkdir "$TMP/fs"
# Not through in_b: a function in the background is a subshell, and
# killing $! would leave the manager and nfqd running.
ip netns exec "$NS_B" "$TOP_SRCDIR/tests/integration/fake_systemd.py" "$TMP/fs" \
	--watchdog-usec 1000000 -- "$NFQD" -c "$conf" >"$TMP/nfqd.log" 2>&1 &
mgr=$!
bg_pid $mgr
wait_bound "$NS_B" 0 1
pings() { grep -c 'WATCHDOG=1' "$TMP/fs/notify.log"; }
end=$(deadline "$WAIT_SECONDS")
while [ "$(pings)" -lt 4 ] && before "$end"; do
	sleep 0.05
done
[ "$(pings)" -ge 4 ] || fail "no steady WATCHDOG=1 while idle: $(cat "$TMP/fs/notify.log")"

pid=$(cat "$TMP/fs/main.pid")
tid=$(grep -l '^nfqd-q0$' /proc/"$pid"/task/*/comm | head -1 | cut -d/ -f5)
[ -n "$tid" ] || fail "no worker thread nfqd-q0"
# Hold queue 0's worker in its next recvmmsg for 3 s, then let go.
strace -qq -o "$TMP/strace.out" -p "$tid" -e trace=recvmmsg \
	-e inject=recvmmsg:delay_enter=3000000:when=1 2>"$TMP/strace.err" &
st=$!
bg_pid $st
wait_traced "$tid"
ip netns exec "$NS_A" "$TOP_BUILDDIR/tests/bench/nfqd-gen" -d 192.0.2.2 -n 2000 -r 1000 -q &
gen=$!
bg_pid $gen
wait $gen
kill $st 2>/dev/null
wait $st 2>/dev/null
# Pings resume once the worker moves again: wait for that line and for a
# ping after it, which ends the longest gap.
end=$(deadline "$WAIT_SECONDS")
until grep -q 'every worker makes progress again' "$TMP/nfqd.log" || ! before "$end"; do
	sleep 0.1
done
n=$(pings)
while [ "$(pings)" -le "$n" ] && before "$end"; do
	sleep 0.1
done
# The longest silence between two pings, in seconds.
gap=$(awk '/WATCHDOG=1/ { if (t) { d = $1 - t; if (d > m) m = d } t = $1 }
	END { printf "%.1f", m }' "$TMP/fs/notify.log")
log "longest gap between pings: $gap s"
grep -q 'queue 0: worker stuck in a batch' "$TMP/nfqd.log" \
	|| fail "no 'worker stuck' line; strace: $(cat "$TMP/strace.err")"
awk -v g="$gap" 'BEGIN { exit !(g >= 1.5) }' \
	|| fail "pings went on while queue 0's worker was stuck (gap $gap s)"
grep -q 'every worker makes progress again' "$TMP/nfqd.log" \
	|| fail "pings did not resume"
kill -TERM $mgr
wait $mgr
log "ok: pings stop while a worker is stuck and resume after"
