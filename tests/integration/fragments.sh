#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fragments.sh - later fragments have no ports (issue 17, item 4), on the
# forward hook, which sees the fragments of both families. A (va) sends
# crafted fragments (scapy) through the router B to C; nfqd judges B's
# forward hook with
#     tcp dport != 22 drop
# A first fragment is judged on its ports (dport 23: dropped, 22:
# passes). A later fragment, IPv4 or IPv6, whose data happen to start with
# the bytes of ports 4000 -> 23, has no transport header: the match is
# absent, fails even negated, and the fragment passes, not incomplete
# (nfqd.conf(5), INCOMPLETE PACKETS: nft's payload fast path reads those
# data bytes as ports, its slow path does not; nfqd follows the latter).
# C counts what arrives, per source, before any reassembly.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"
. "$TOP_SRCDIR/tests/integration/router_lib.sh"

SOCK="$TMP/nfqd.sock"
N=3

trap router_cleanup EXIT
require_root
require_cmd ip iptables ip6tables nft
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy' 2>/dev/null ||
	skip "needs /usr/bin/python3 with scapy (python3-scapy)"

router_setup
router_queue
# C counts per source at prerouting: fragments are never reassembled
# before it (no conntrack in C).
in_c nft -f - <<'NFT' || fail "nft counters in C"
table inet got {
	chain pre {
		type filter hook prerouting priority 0; policy accept;
		ip saddr 192.0.2.31 counter drop
		ip saddr 192.0.2.32 counter drop
		ip saddr 192.0.2.33 counter drop
		ip6 saddr 2001:db8::31 counter drop
		ip6 saddr 2001:db8::32 counter drop
		ip6 saddr 2001:db8::33 counter drop
	}
}
NFT

# What nft itself reads as the ports of the later fragments (logged).
in_b nft -f - <<'NFT' || fail "nft reference"
table inet ref {
	chain fw {
		type filter hook forward priority -10; policy accept;
		ip saddr 192.0.2.33 tcp dport 23 counter
		ip6 saddr 2001:db8::33 tcp dport 23 counter
	}
}
NFT

CONF=$(conf_file nfqd.conf <<EOF
options {
	queues { 0 };
	control-socket "$SOCK";
}
hook forward {
	policy accept;
	tcp dport != 22 drop;
}
EOF
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"

cat >"$TMP/send.py" <<'EOF'
import logging
import struct
import sys
logging.getLogger("scapy").setLevel(logging.ERROR)
from scapy.all import (Ether, IP, IPv6, IPv6ExtHdrFragment, TCP, Raw,
                       conf, sendp)

conf.verb = 0
mac, n = sys.argv[1], int(sys.argv[2])
# The data of a later fragment: starts like a TCP header 4000 -> 23.
looks_like_23 = struct.pack("!HH", 4000, 23) + b"x" * 36


def v4(src, first, dport=0):
    if first:
        return (IP(src=src, dst="198.51.100.2", flags="MF", frag=0, proto=6)
                / TCP(sport=4000, dport=dport, flags="S") / Raw(b"y" * 20))
    return (IP(src=src, dst="198.51.100.2", frag=8, proto=6)
            / Raw(looks_like_23))


def v6(src, first, dport=0):
    if first:
        return (IPv6(src=src, dst="2001:db8:c::2")
                / IPv6ExtHdrFragment(nh=6, offset=0, m=1, id=7)
                / TCP(sport=4000, dport=dport, flags="S") / Raw(b"y" * 20))
    return (IPv6(src=src, dst="2001:db8:c::2")
            / IPv6ExtHdrFragment(nh=6, offset=8, m=0, id=7)
            / Raw(looks_like_23))


frames = [
    v4("192.0.2.31", True, 23),
    v4("192.0.2.32", True, 22),
    v4("192.0.2.33", False),
    v6("2001:db8::31", True, 23),
    v6("2001:db8::32", True, 22),
    v6("2001:db8::33", False),
]
for f in frames:
    sendp([Ether(dst=mac) / f] * n, iface="va")
EOF
MAC_B=$(in_b cat /sys/class/net/vb/address)
in_a /usr/bin/python3 "$TMP/send.py" "$MAC_B" "$N" || fail "scapy sender"

arrived() {
	in_c nft list chain inet got pre | awk -v s="$1" '
		$2 == "saddr" && $3 == s {
			for (i = 1; i <= NF; i++)
				if ($i == "packets") print $(i + 1)
		}'
}

# Every frame judged: the last kind sent has arrived ($WAIT_SECONDS s
# at most).
end=$(deadline "$WAIT_SECONDS")
while [ "$(arrived 2001:db8::33)" != "$N" ] && before "$end"; do
	sleep 0.1
done
for s in 192.0.2.31 192.0.2.32 192.0.2.33 2001:db8::31 2001:db8::32 \
	2001:db8::33; do
	log "from $s: $(arrived "$s") of $N arrived"
done
[ "$(arrived 192.0.2.31)" = 0 ] || fail "first IPv4 fragment, dport 23, passed"
[ "$(arrived 2001:db8::31)" = 0 ] || fail "first IPv6 fragment, dport 23, passed"
[ "$(arrived 192.0.2.32)" = "$N" ] || fail "first IPv4 fragment, dport 22, dropped"
[ "$(arrived 2001:db8::32)" = "$N" ] || fail "first IPv6 fragment, dport 22, dropped"
[ "$(arrived 192.0.2.33)" = "$N" ] ||
	fail "later IPv4 fragments: $(arrived 192.0.2.33) of $N passed; the ports of a later fragment are absent"
[ "$(arrived 2001:db8::33)" = "$N" ] ||
	fail "later IPv6 fragments: $(arrived 2001:db8::33) of $N passed; the ports of a later fragment are absent"
log "nft's 'tcp dport 23' matched later fragments (IPv4, IPv6):" \
	"$(in_b nft list chain inet ref fw | awk '/counter/ {
		for (i = 1; i <= NF; i++) if ($i == "packets") printf "%s ", $(i + 1) }')"
ctl -j stats >"$TMP/stats.json" || fail "nfqd-ctl -j stats"
json_check "$TMP/stats.json" "
q = d['queues'][0]
assert q['incomplete'] == 0, q
assert q['packets'] == 6 * $N, q" || fail "stats"
stop_nfqd
exit 0
