#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The interface-name cache recovers from lost rtnetlink notifications:
# with an iifname rule live, nfqd is stopped (SIGSTOP) while hundreds of
# link events overflow its rtnetlink socket and the interface the traffic
# comes in on is renamed to the rule's name; after SIGCONT the rule must
# follow the new name (nfqd reads every link again after an overrun).
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables sysctl
# No IPv6 on B: its address configuration would send link notifications
# (with the interface's name) long after the rename, and mend the cache
# by chance.
in_b sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0
conf=$(conf_file nfqd.conf <<EOF
options {
	queues 1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input {
	iifname "vbnew" udp dport 9 drop;
}
EOF
)
rule_hits() {
	in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" -j rules | python3 -c \
		'import json,sys; print([h for h in json.load(sys.stdin)["hooks"] if h["hook"] == "input"][0]["rules"][0]["packets"])'
}
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0
send_udp "$NS_A" 192.0.2.2 5
wait_sink_udp 5 >/dev/null
[ "$(sink_udp_packets)" = 5 ] || fail "packets on vb did not pass: sink $(sink_udp_packets)"
[ "$(rule_hits)" = 0 ] || fail "the iifname rule matched before the rename"

kill -STOP "$NFQD_PID"
# Far more link notifications than an rtnetlink socket buffer holds.
for i in $(seq 1 300); do
	echo "link add fl$i type veth peer name flp$i"
done >"$TMP/add.batch"
for i in $(seq 1 300); do echo "link del fl$i"; done >"$TMP/del.batch"
in_b ip -batch "$TMP/add.batch" || fail "veth flood"
in_b ip -batch "$TMP/del.batch" || fail "veth flood removal"
# The traffic's interface takes the rule's name while nfqd cannot read.
mac_a=$(in_a cat /sys/class/net/va/address)
in_b ip link set vb down
in_b ip link set vb name vbnew
in_b ip link set vbnew up
in_b ip neigh replace 192.0.2.1 lladdr "$mac_a" dev vbnew nud permanent
# The link is up once the kernel announced it (linkwatch): from then on no
# notification about vbnew is due.
end=$(deadline "$WAIT_SECONDS")
while [ "$(in_b cat /sys/class/net/vbnew/operstate)" != up ] && before "$end"; do
	sleep 0.05
done
[ "$(in_b cat /sys/class/net/vbnew/operstate)" = up ] || fail "vbnew not up"
kill -CONT "$NFQD_PID"

# The rule must start matching (within $WAIT_SECONDS s): packets from
# now on are dropped.
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	send_udp "$NS_A" 192.0.2.2 1
	[ "$(rule_hits)" -gt 0 ] 2>/dev/null && break
	sleep 0.1
done
[ "$(rule_hits)" -gt 0 ] 2>/dev/null || fail "iifname \"vbnew\" never matched after the rename: the name cache missed it"
before=$(sink_udp_packets)
hits=$(rule_hits)
send_udp "$NS_A" 192.0.2.2 10
end=$(deadline "$WAIT_SECONDS")
while [ "$(rule_hits)" -lt $((hits + 10)) ] && before "$end"; do
	sleep 0.05
done
[ "$(rule_hits)" -ge $((hits + 10)) ] || fail "the rule matched $(( $(rule_hits) - hits )) of 10"
[ "$(sink_udp_packets)" = "$before" ] || fail "packets on vbnew passed"
grep -q "link notifications lost" "$TMP/nfqd.log" || fail "the overrun was not logged"
stop_nfqd
log "ok: the iifname rule follows a rename made during an overrun"
