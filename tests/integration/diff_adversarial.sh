#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# diff_adversarial.sh - nfqd decides exactly as nft would, or fails closed
# and says so, on random policies and hostile packets.
#
# Two identical worlds, one judged by nfqd (through iptables NFQUEUE), one
# by nft (the same policy as an nft ruleset at priority 0):
#
#   P (peer) va/va2 <-> vb/vb2 J (judged host, a router) vc/vc2 <-> vd/vd2 Q
#
# Every round (tests/diff/adversarial.py) loads a random policy into both
# (tests/diff/policygen.py), gives nfqd a random copy-range (40 ... 256),
# and sends plain and hostile probes (tests/diff/packets.py: IPv6
# extension header chains of every kind and length up to hundreds of
# headers, fragments, IPv4 and TCP options, truncated packets, ICMP errors,
# transport headers across the copy boundary) through J's input, forward
# and output hooks, IPv4 and IPv6: once with nfqd's incomplete-verdict
# drop, once with accept. An NFLOG chain before the judging hook (priority
# -100) says a probe reached it, one after it (priority 100) that it was
# accepted. For every probe that reached its hook:
#   - a probe nfqd judged (the same fate with either incomplete-verdict)
#     has nft's fate: with drop, nfqd never accepts what nft drops and
#     drops what nft accepts only as incomplete; with accept, the reverse;
#   - a probe whose fate follows incomplete-verdict is one the test thinks
#     nfqd may be unable to judge (its headers run past the copy, or its
#     extension header chain is long or malformed: packets.maybe_incomplete);
#   - the "incomplete" counter grows, in each run, by exactly the number of
#     probes whose fate followed incomplete-verdict.
# Every violation is printed with the seed, the policy, the packet (hex
# and scapy's summary) and the fates, and fails the test.
#
# nft is the oracle with one correction: for 1-, 2- and 4-byte loads this
# kernel's nft takes a later fragment's data (IPv4) or its IPv6 header as
# the transport header, where its general path, and nfqd, see none. The
# reference rules carry a guard that restores that meaning (see
# nft_guards() in tests/diff/policygen.py).
#
# What reaches a hook (the table at the end counts it per kind, and
# DIFF_VERBOSE lists what did not): on input and forward, IPv4 with a bad
# checksum, header length or total length never does (ip_rcv), nor with
# malformed or repeated options (ip_rcv_options); only whole, reassembled
# fragment sets reach input, while forward sees each fragment; IPv6 with a
# payload length past the packet's end does not (ipv6_rcv), nor with a
# first hop-by-hop header cut short or invalid (ipv6_parse_hopopts);
# everything else, IPv6 fragments too, arrives as sent. On output, raw
# sockets send anything but an IPv4 header shorter than 20 bytes, and the
# kernel sets an IPv4 header's total length and checksum.
#
# Knobs (environment):
#   DIFF_SEED=N       replay a run (the seed is printed first)
#   DIFF_PACKETS=N    probes in all (default 4000; each goes to both
#                     worlds twice)
#   DIFF_ROUNDS=N     rounds (policies) to spread them over (default 10);
#                     a long run: DIFF_PACKETS=100000 DIFF_ROUNDS=100
#   DIFF_ROUND=N      run only round N of the seed
#   DIFF_VERBOSE=1    a table of probe kinds and fates after every round,
#                     and every probe that reached no hook
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"

NS_P1="nfqd-$$-p1"
NS_J1="nfqd-$$-j1"
NS_Q1="nfqd-$$-q1"
NS_P2="nfqd-$$-p2"
NS_J2="nfqd-$$-j2"
NS_Q2="nfqd-$$-q2"
DRIVER="$TOP_SRCDIR/tests/diff/adversarial.py"

adv_cleanup() {
	local rc=$? ns
	for ns in "$NS_P1" "$NS_J1" "$NS_Q1" "$NS_P2" "$NS_J2" "$NS_Q2"; do
		ip netns del "$ns" 2>/dev/null
	done
	(exit $rc)
	cleanup
}
trap adv_cleanup EXIT

# link NS1 DEV1 MAC1 NS2 DEV2 MAC2: a veth pair with fixed addresses, so
# that a frame is the same bytes in both worlds; room for long chains.
link() {
	ip link add "$2" address "$3" mtu 9000 netns "$1" type veth \
		peer name "$5" address "$6" mtu 9000 netns "$4" ||
		fail "veth $2-$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}

# The peers only send (raw frames) and never answer or route anything.
quiet() {
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$1" nft -f - <<'NFT' || fail "nft quiet"
table inet quiet {
	chain pre { type filter hook prerouting priority -500; policy drop; }
	chain out { type filter hook output priority -500; policy drop; }
}
NFT
}

# world P J Q: the topology above, J's addresses and routes (see
# tests/diff/packets.py for which probe goes where), its marks, the log
# chains and a sink that keeps J from answering probes.
world() {
	local p=$1 j=$2 q=$3 ns dev
	for ns in "$p" "$j" "$q"; do
		ip netns add "$ns" || fail "netns add $ns"
		ip -n "$ns" link set lo up
	done
	link "$p" va 02:00:00:00:00:a1 "$j" vb 02:00:00:00:00:b1
	link "$p" va2 02:00:00:00:00:a2 "$j" vb2 02:00:00:00:00:b2
	link "$j" vc 02:00:00:00:00:c1 "$q" vd 02:00:00:00:00:d1
	link "$j" vc2 02:00:00:00:00:c2 "$q" vd2 02:00:00:00:00:d2
	quiet "$p"
	quiet "$q"
	ip netns exec "$j" sh -e -c '
		sysctl -qw net.ipv4.ip_forward=1
		sysctl -qw net.ipv6.conf.all.forwarding=1
		for d in all default vb vb2 vc vc2; do
			sysctl -qw net.ipv4.conf.$d.rp_filter=0
		done' || fail "sysctl in $j"
	ip -n "$j" addr add 192.0.2.2/24 dev vb
	ip -n "$j" addr add 192.0.3.2/24 dev vb2
	ip -n "$j" addr add 192.0.4.2/24 dev vc
	ip -n "$j" addr add 192.0.5.2/24 dev vc2
	ip -n "$j" addr add 2001:db8::2/64 dev vb nodad
	ip -n "$j" addr add 2001:db8:ff::2/64 dev vb2 nodad
	ip -n "$j" addr add 2001:db8:4::2/64 dev vc nodad
	ip -n "$j" addr add 2001:db8:6::2/64 dev vc2 nodad
	for n in "192.0.2.1 vb a1" "192.0.3.1 vb2 a2" "192.0.4.1 vc d1" \
		"192.0.5.1 vc2 d2" "2001:db8::1 vb a1" "2001:db8:ff::1 vb2 a2" \
		"2001:db8:4::1 vc d1" "2001:db8:6::1 vc2 d2"; do
		set -- $n
		ip -n "$j" neigh replace "$1" lladdr "02:00:00:00:00:$3" \
			dev "$2" nud permanent || fail "neigh $1"
	done
	ip -n "$j" route add local 198.51.100.0/24 dev lo
	ip -n "$j" -6 route add local 2001:db8:1::/48 dev lo
	ip -n "$j" route add 198.51.101.0/24 via 192.0.4.1 dev vc
	ip -n "$j" route add 198.51.102.0/24 via 192.0.5.1 dev vc2
	ip -n "$j" -6 route add 2001:db8:2::/48 via 2001:db8:4::1 dev vc
	ip -n "$j" -6 route add 2001:db8:3::/48 via 2001:db8:6::1 dev vc2
	ip -n "$j" route add default via 192.0.2.1 dev vb
	ip -n "$j" route add default via 192.0.3.1 dev vb2 metric 100
	ip -n "$j" -6 route add default via 2001:db8::1 dev vb
	ip -n "$j" -6 route add default via 2001:db8:ff::1 dev vb2 metric 100 ||
		fail "routes in $j"
	ip netns exec "$j" nft -f - <<'NFT' || fail "nft tables in $j"
table inet premark {
	map ttl2mark {
		typeof ip ttl : meta mark
		elements = { 33 : 0x1, 34 : 0x11, 35 : 0x40000001 }
	}
	chain pre {
		type filter hook prerouting priority -300; policy accept;
		meta nfproto ipv4 meta mark set ip ttl map @ttl2mark
		meta nfproto ipv6 meta mark set ip6 hoplimit map @ttl2mark
	}
	chain out {
		type filter hook output priority -300; policy accept;
		meta nfproto ipv4 meta mark set ip ttl map @ttl2mark
		meta nfproto ipv6 meta mark set ip6 hoplimit map @ttl2mark
	}
}
table inet obs {
	chain in_pre {
		type filter hook input priority -100; policy accept;
		ip dscp 0x0b log group 1
		ip6 dscp 0x0b log group 1
	}
	chain in_post {
		type filter hook input priority 100; policy accept;
		ip dscp 0x0b log group 2
		ip6 dscp 0x0b log group 2
	}
	chain fwd_pre {
		type filter hook forward priority -100; policy accept;
		ip dscp 0x0b log group 1
		ip6 dscp 0x0b log group 1
	}
	chain fwd_post {
		type filter hook forward priority 100; policy accept;
		ip dscp 0x0b log group 2
		ip6 dscp 0x0b log group 2
	}
	chain out_pre {
		type filter hook output priority -100; policy accept;
		ip dscp 0x0b log group 1
		ip6 dscp 0x0b log group 1
	}
	chain out_post {
		type filter hook output priority 100; policy accept;
		ip dscp 0x0b log group 2
		ip6 dscp 0x0b log group 2
	}
	chain sink {
		type filter hook input priority 200; policy drop;
	}
}
table inet ref {
}
NFT
}

PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3

require_root
require_cmd nft iptables ip6tables python3 ip sysctl
[ -x "$NFQD" ] || skip "nfqd not built"
[ -x "$NFQD_CTL" ] || skip "nfqd-ctl not built"
"$PYTHON" -c 'import scapy.all' 2>/dev/null || skip "needs python3-scapy"

world "$NS_P1" "$NS_J1" "$NS_Q1"
world "$NS_P2" "$NS_J2" "$NS_Q2"

# nfqd's world: probes (DSCP 0x0b) of all three hooks to queue 0; J's own
# packets (neighbour discovery, errors it sends) stay out of the counts.
for ipt in iptables ip6tables; do
	for chain in INPUT FORWARD OUTPUT; do
		ip netns exec "$NS_J1" $ipt -A $chain -m dscp --dscp 0x0b \
			-j NFQUEUE --queue-num 0 || fail "$ipt $chain NFQUEUE"
	done
done

CONF=$(conf_file nfqd.conf <<EOF
options {
	queues { 0 };
	queue-maxlen 65536;
	rcvbuf 64M;
	stats-file "$TMP/stats";
	control-socket "$TMP/ctl.sock";
}
EOF
)
start_nfqd "$NS_J1" "$CONF"
wait_bound "$NS_J1" 0
end=$(deadline "$WAIT_SECONDS")
while [ ! -S "$TMP/ctl.sock" ] && before "$end"; do
	sleep 0.05
done
[ -S "$TMP/ctl.sock" ] || fail "no control socket after $WAIT_SECONDS s"

"$PYTHON" "$DRIVER" "$NS_P1" "$NS_J1" "$NS_P2" "$NS_J2" "$NFQD_CTL" \
	"$TMP/ctl.sock" "$CONF" || fail "nfqd and nft disagree (see above)"
stop_nfqd
exit 0
