#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# set_flood.sh - runtime adds and deletes while a flood from 16 other
# sources is judged by two workers (nfqd.conf(5) "Runtime elements"):
# after "set add" answers, every packet its source sends is dropped
# (none of them reaches the sink); after "set delete" answers, every one
# passes. The verdict of each marker packet is checked by the sink's
# counters, round after round.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

ns_setup
require_cmd nft
in_b nft -f - <<'NFT' || fail "nft sink"
table inet nfqdsink {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 7000-7999 counter drop
		udp dport 8000-8999 counter drop
		meta l4proto udp drop
	}
}
NFT
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-balance 0:1 || fail "iptables"
SRCS=$(add_sources)
in_a ip addr add 192.0.2.100/24 dev va
SOCK="$TMP/nfqd.sock"
CONF=$(conf_file nfqd.conf <<EOF
$(flood_options 2 | sed 's|^}$|\tset-state-file none;\n}|')
set blocked { type ipv4_addr; flags timeout; }
hook input {
    ip saddr @blocked drop;
}
EOF
)
grep -q "set-state-file none" "$CONF" || fail "config"
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0 1
wait_file "$SOCK"

# Sink packets of the dports $1 (7000-7999 or 8000-8999).
sink_range() {
	in_b nft list chain inet nfqdsink in | awk -v r="$1" '$0 ~ r && /counter/ {
		for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'
}
nfqd_dropped() {
	ctl -j stats | "$PY" -c 'import json, sys; print(sum(q["dropped"] for q in json.load(sys.stdin)["queues"]))'
}
# $2 datagrams from 192.0.2.100 to port $1.
send_marker() {
	ip netns exec "$NS_A" "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("192.0.2.100", 0))
for i in range(int(sys.argv[2])):
    s.sendto(b"m" * 18, ("192.0.2.2", int(sys.argv[1])))
' "$1" "$2" || fail "marker send"
}

# The flood: 16 sources, paced so the kernel queue never overflows.
ip netns exec "$NS_A" "$TOP_BUILDDIR/tests/bench/nfqd-gen" -q -d 192.0.2.2 \
	-n 100000000 -S "$SRCS" -r 20000 >/dev/null 2>&1 &
GEN=$!
bg_pid $GEN
passed=0
dropped=0
for round in $(seq 1 20); do
	ctl set add blocked 192.0.2.100 >/dev/null || fail "round $round: add"
	# Other elements added and expiring meanwhile (addresses that send
	# nothing, so nfqd's drops are the markers alone): churn.
	ctl set add blocked 198.51.100.$round timeout 500ms >/dev/null || fail "churn add"
	send_marker $((7000 + round)) 20
	# The markers may still wait in the veth backlog when the sender
	# returns: delete only once nfqd has judged (dropped) all of them.
	dropped=$((dropped + 20))
	n=0
	until [ "$(nfqd_dropped)" -ge $dropped ]; do
		n=$((n + 1)); [ $n -lt 100 ] || fail "round $round: nfqd dropped $(nfqd_dropped), want $dropped; $(sink_range 7000-7999) passed"
		sleep 0.1
	done
	ctl set delete blocked 192.0.2.100 >/dev/null || fail "round $round: delete"
	send_marker $((8000 + round)) 20
	passed=$((passed + 20))
	n=0
	until [ "$(sink_range 8000-8999)" -ge $passed ]; do
		n=$((n + 1)); [ $n -lt 100 ] || fail "round $round: $(sink_range 8000-8999) of $passed passed after the delete"
		sleep 0.1
	done
	[ "$(sink_range 7000-7999)" = 0 ] || fail "round $round: a packet sent after the add passed"
done
[ "$(sink_range 8000-8999)" = $passed ] || fail "more packets than sent: $(sink_range 8000-8999)"
kill $GEN 2>/dev/null
wait $GEN 2>/dev/null
log "20 rounds: 400 packets after an add all dropped, 400 after a delete all passed, under a 20000 pps flood"
ctl -j stats >"$TMP/stats.json"
json_check "$TMP/stats.json" "assert sum(q['packets'] for q in d['queues']) > 800, d" || fail "no flood judged"
stop_nfqd
log "ok"
