#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# incomplete.sh - verdicts that cannot be bypassed by hiding a header, on
# the real kernel. Crafted frames (scapy, sent on the veth so the sender's
# stack does not rewrite them) reach nfqd through ip6tables/iptables
# NFQUEUE with copy-range 64:
#   - a blocked IPv6 source behind 20 destination-options headers (the
#     chain leaves the copy): dropped by "ip6 saddr", not incomplete;
#   - "tcp dport 23" / "udp dport 7" behind 4 such headers (the transport
#     header is past the copy): incomplete, so dropped, then passed with
#     incomplete-verdict accept, counted as incomplete both times (stats
#     file column 19, nfqd-ctl -j stats "incomplete");
#   - ordinary traffic is judged as before and never incomplete.
# Also: nfqd -t warns about a copy-range too small for a rule.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

N=5
STATS="$TMP/stats"
SOCK="$TMP/nfqd.sock"

require_root
require_cmd ip iptables ip6tables nft
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy' 2>/dev/null ||
	skip "needs /usr/bin/python3 with scapy (python3-scapy)"

write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF
options {
	queues { 0 };
	copy-range 64;
	stats-file "$STATS";
	stats-interval 1;
	control-socket "$SOCK";
	incomplete-verdict $1;
}
hook input {
	policy accept;
	ip6 saddr 2001:db8:bad::/48 drop;
	tcp dport 23 drop;
	udp dport 7 drop;
}
EOF
}

# nfqd -t: copy-range 40 cannot hold "tcp flags syn" of an IPv6 packet.
cat >"$TMP/small.conf" <<EOF
options { copy-range 40; }
hook input {
	tcp flags syn drop;
}
EOF
"$NFQD" -t -c "$TMP/small.conf" >"$TMP/t.out" 2>"$TMP/t.err" ||
	fail "nfqd -t failed on a config with warnings: $(cat "$TMP/t.err")"
grep -qx "config OK" "$TMP/t.out" || fail "nfqd -t: $(cat "$TMP/t.out")"
want='small.conf:3:2: warning: copy-range 40 is too small for "tcp flags syn"'
want="$want (IPv6 packets without extension headers need 54 bytes)"
grep -qF "$want" "$TMP/t.err" || fail "nfqd -t warning: $(cat "$TMP/t.err")"

ns_setup
for ipt in iptables ip6tables; do
	in_b $ipt -A INPUT -i vb -j NFQUEUE --queue-num 0 ||
		fail "$ipt NFQUEUE rule"
done
# What nfqd accepts is counted per source and dropped here.
in_b nft -f - <<'NFT' || fail "nft sink"
table inet sink {
	chain in {
		type filter hook input priority 100; policy accept;
		ip6 saddr 2001:db8:bad::1 counter drop
		ip6 saddr 2001:db8::11 counter drop
		ip6 saddr 2001:db8::12 counter drop
		ip6 saddr 2001:db8::13 counter drop
		ip6 saddr 2001:db8::14 counter drop
		ip6 saddr 2001:db8::15 counter drop
		ip saddr 192.0.2.13 counter drop
		ip saddr 192.0.2.14 counter drop
	}
}
NFT

# The frames: "SRC what" per case, N of each.
cat >"$TMP/send.py" <<'EOF'
import logging
import sys
logging.getLogger("scapy").setLevel(logging.ERROR)
from scapy.all import (Ether, IP, IPv6, IPv6ExtHdrDestOpt, TCP, UDP,
                       conf, sendp)

conf.verb = 0
mac, n = sys.argv[1], int(sys.argv[2])


def v6(src, hdrs, l4):
    p = IPv6(src=src, dst="2001:db8::2", hlim=64)
    for _ in range(hdrs):
        p = p / IPv6ExtHdrDestOpt()
    return Ether(dst=mac) / p / l4


def v4(src, l4):
    return Ether(dst=mac) / IP(src=src, dst="192.0.2.2") / l4


frames = [
    # a blocked source behind 20 headers (160 bytes): past the copy
    v6("2001:db8:bad::1", 20, UDP(sport=4000, dport=9)),
    # the transport header past the copy (40 + 32 > 64)
    v6("2001:db8::11", 4, TCP(sport=4000, dport=23, flags="S")),
    v6("2001:db8::12", 4, UDP(sport=4000, dport=7)),
    # ordinary traffic: one header, ports in the copy; none
    v6("2001:db8::13", 1, UDP(sport=4000, dport=9)),
    v6("2001:db8::14", 0, UDP(sport=4000, dport=7)),
    v6("2001:db8::15", 0, TCP(sport=4000, dport=22, flags="S")),
    v4("192.0.2.14", TCP(sport=4000, dport=23, flags="S")),
    v4("192.0.2.13", UDP(sport=4000, dport=9)),
]
for f in frames:
    sendp([f] * n, iface="va")
EOF
MAC_B=$(in_b cat /sys/class/net/vb/address)
send_frames() {
	in_a /usr/bin/python3 "$TMP/send.py" "$MAC_B" "$N" ||
		fail "scapy sender failed"
}

# Packets the sink counted from source $1.
arrived() {
	in_b nft list chain inet sink in | awk -v s="$1" '
		$2 == "saddr" && $3 == s {
			for (i = 1; i <= NF; i++)
				if ($i == "packets") print $(i + 1)
		}'
}

# Wait ($WAIT_SECONDS s at most) until the sink counted $2 packets from $1.
wait_arrived() {
	local end v=
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		v=$(arrived "$1")
		[ "$v" = "$2" ] && return 0
		sleep 0.1
	done
	fail "$3: $v packets from $1 arrived, want $2"
}

# check_round INCOMPLETE PASSED ORDINARY: after a round of frames, nfqd's
# incomplete counter is INCOMPLETE, PASSED of the frames behind headers
# and ORDINARY of each ordinary kind arrived (totals since start).
check_round() {
	wait_stats_field "$STATS" 0 19 "$1"
	wait_arrived 2001:db8::13 "$3" "ordinary IPv6, one header"
	wait_arrived 2001:db8::15 "$3" "ordinary IPv6 tcp dport 22"
	wait_arrived 192.0.2.13 "$3" "ordinary IPv4, sent last"
	# Every frame of the round was judged: the rest is final.
	[ "$(arrived 2001:db8:bad::1)" = 0 ] ||
		fail "blocked source behind 20 headers passed"
	[ "$(arrived 2001:db8::11)" = "$2" ] || fail "tcp dport 23 behind" \
		"headers: $(arrived 2001:db8::11) passed, want $2"
	[ "$(arrived 2001:db8::12)" = "$2" ] || fail "udp dport 7 behind" \
		"headers: $(arrived 2001:db8::12) passed, want $2"
	[ "$(arrived 2001:db8::14)" = 0 ] || fail "udp dport 7 passed"
	[ "$(arrived 192.0.2.14)" = 0 ] || fail "tcp dport 23 (IPv4) passed"
	ctl -j stats >"$TMP/stats.json" || fail "nfqd-ctl -j stats"
	json_check "$TMP/stats.json" "
q = d['queues'][0]
assert q['incomplete'] == $1, q"
}

write_conf drop
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
wait_file "$SOCK"
wait_file "$STATS"

send_frames
check_round $((2 * N)) 0 "$N"
log "incomplete-verdict drop: $((2 * N)) incomplete packets dropped"

write_conf accept
ctl reload >/dev/null || fail "reload"
send_frames
check_round $((4 * N)) "$N" $((2 * N))
log "incomplete-verdict accept: $((2 * N)) more passed, and counted"

stop_nfqd
exit 0
