#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# skuid_synack.sh - "meta skuid" on a listener's SYN-ACK (issue 17, item
# 2). A listener runs as uid 4242 in B (IPv4 and IPv6); nfqd judges B's
# output hook with
#     meta skuid 4242 drop
# The kernel sends no uid with a SYN-ACK (it comes from the listener's
# request socket), while nft attributes it to the listener and drops it:
# nfqd must not take the owner for absent, so the SYN-ACK is incomplete
# and incomplete-verdict drop drops it. A connect from A to that listener
# therefore gets no SYN-ACK at all (counted in A). A kernel RST (a closed
# port) has no socket, for nft neither: it stays absent and passes, so the
# connect to the closed port is refused at once. An nft chain at an
# earlier output priority counts what nft's own "meta skuid 4242" sees.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

SOCK="$TMP/nfqd.sock"

require_root
require_cmd ip iptables ip6tables nft

ns_setup
for ipt in iptables ip6tables; do
	in_b $ipt -A OUTPUT -p tcp -m multiport --sports 8080,8081 \
		-j NFQUEUE --queue-num 0 || fail "$ipt NFQUEUE rule"
done
# The reference in B, and what reaches A, counted.
in_b nft -f - <<'NFT' || fail "nft reference"
table inet ref {
	chain out {
		type filter hook output priority -10; policy accept;
		tcp sport 8080 meta skuid 4242 counter
		tcp sport 8081 meta skuid 0-4294967295 counter
	}
}
NFT
in_a nft -f - <<'NFT' || fail "nft counter in A"
table inet got {
	chain in {
		type filter hook input priority 0; policy accept;
		meta nfproto ipv4 tcp sport 8080 tcp flags & (syn | ack) == syn | ack counter
		meta nfproto ipv6 tcp sport 8080 tcp flags & (syn | ack) == syn | ack counter
		tcp sport 8081 tcp flags & rst == rst counter
	}
}
NFT

CONF=$(conf_file nfqd.conf <<EOF
options {
	queues { 0 };
	control-socket "$SOCK";
}
hook output {
	policy accept;
	meta skuid 4242 drop;
}
EOF
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"

# The listener, as uid 4242: its sockets are made after setuid.
ip netns exec "$NS_B" "$PY" -c '
import os, socket, time
os.setgid(4242)
os.setuid(4242)
ls = []
for fam, addr in ((socket.AF_INET, "192.0.2.2"), (socket.AF_INET6, "2001:db8::2")):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.bind((addr, 8080))
    s.listen(16)
    ls.append(s)
time.sleep(3600)
' &
bg_pid $!
# Both listening sockets, owned by 4242 ($WAIT_SECONDS s at most).
end=$(deadline "$WAIT_SECONDS")
until [ "$(in_b ss -Hltne 'sport = :8080' | grep -c 'uid:4242')" = 2 ]; do
	before "$end" || fail "the uid 4242 listener did not start"
	sleep 0.1
done

# connect from A to $1 port $2, waiting $3 s: "refused", "timeout" or
# "connected". An answer expected (the RST) is waited for long: nfqd
# judges it, and a loaded machine may keep nfqd from the CPU for seconds.
try_connect() {
	in_a "$PY" -c '
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.settimeout(float(sys.argv[3]))
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("connected")
except ConnectionRefusedError:
    print("refused")
except (socket.timeout, TimeoutError):
    print("timeout")
' "$1" "$2" "$3"
}

# Counters of chain $2 of table $1 in namespace $3, in order.
counters() {
	ip netns exec "$3" nft list chain inet "$1" "$2" | awk '/counter/ {
		for (i = 1; i <= NF; i++) if ($i == "packets") printf "%s ", $(i + 1) }'
}

for dst in 192.0.2.2 2001:db8::2; do
	r=$(try_connect "$dst" 8080 1.5)
	log "connect to the uid 4242 listener at $dst: $r"
	[ "$r" = timeout ] || fail "connect to $dst:8080: $r (the SYN-ACK passed)"
	r=$(try_connect "$dst" 8081 "$WAIT_SECONDS")
	log "connect to the closed port at $dst: $r"
	[ "$r" = refused ] || fail "connect to $dst:8081: $r (the kernel RST did not pass)"
done

got=$(counters got in "$NS_A")
ref=$(counters ref out "$NS_B")
log "SYN-ACKs that reached A (IPv4, IPv6), RSTs: $got; nft in B saw uid" \
	"4242 on port 8080 / any uid on 8081: $ref"
set -- $got
[ "$1" = 0 ] && [ "$2" = 0 ] || fail "SYN-ACKs reached A: $got"
[ "$3" = 2 ] || fail "$3 RSTs reached A, want 2"
set -- $ref
[ "$1" -gt 0 ] || fail "nft saw no uid 4242 on the SYN-ACKs: $ref"
[ "$2" = 0 ] || fail "nft saw an owner on a kernel RST: $ref"
ctl -j stats >"$TMP/stats.json" || fail "nfqd-ctl -j stats"
json_check "$TMP/stats.json" "
q = d['queues'][0]
assert q['incomplete'] >= 2, q" || fail "SYN-ACKs not counted incomplete"
stop_nfqd
exit 0
