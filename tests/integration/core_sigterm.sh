#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM in the middle of a flood: every packet nfqd received gets a
# verdict before it exits, so the sink sees exactly what nfqd accepted.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables
srcs=$(add_sources)
# No --queue-bypass: once nfqd is gone the kernel drops, so nothing
# reaches the sink except what nfqd accepted.
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-balance 0:1

conf=$(flood_options | conf_file nfqd.conf)
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0 1

gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
[ -x "$gen" ] || fail "generator $gen not built"
ip netns exec "$NS_A" "$gen" -d 192.0.2.2 -n 5000000 -P 64 -S "$srcs" >/dev/null 2>&1 &
genpid=$!
bg_pid $genpid
# Stop once the flood is under way (a loaded machine may take seconds).
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	n=$(kqueue_field "$NS_B" 0 8)
	[ "${n:-0}" -gt 20000 ] && break
	sleep 0.05
done
stop_nfqd
kill "$genpid" 2>/dev/null
wait "$genpid" 2>/dev/null

packets=$(final_counter packets)
accepted=$(final_counter accepted)
verdicts=$(($(final_counter accepted) + $(final_counter dropped) + $(final_counter other)))
got=$(sink_udp_packets)
log "nfqd received $packets, accepted $accepted; sink saw $got"
[ "$packets" -gt 20000 ] || fail "nfqd received only $packets before SIGTERM"
[ "$packets" -eq "$verdicts" ] \
	|| fail "received $packets but gave $verdicts verdicts"
[ "$got" -eq "$accepted" ] || fail "sink saw $got, nfqd accepted $accepted"
grep -q "verdict send failed" "$TMP/nfqd.log" && fail "a verdict send failed"
log "ok: no received packet lost on SIGTERM"
