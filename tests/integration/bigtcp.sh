#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bigtcp.sh - "meta length" beyond 65535 (issue 17, item 11). With IPv6
# BIG TCP (gso_max_size 185000 on the sender's veth) and "gso yes" the
# output hook queues TCP packets longer than 65535 bytes whole; nft's
# meta length, a 32-bit value, sees them. nfqd in A judges A's output hook
# with
#     meta length 65536-4294967295 accept
# (a config nfqd refused before: lengths stopped at 65535), and its rule
# counter must count packets as nft's own counter does, with every byte
# of them.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

SOCK="$TMP/nfqd.sock"

require_root
require_cmd ip ip6tables nft

ns_setup
in_a ip link set va gso_max_size 185000 ||
	skip "this kernel or iproute2 cannot raise gso_max_size (BIG TCP)"
in_b ip link set vb gro_max_size 185000 || skip "no gro_max_size"
in_a ip6tables -A OUTPUT -p tcp --dport 5001 -j NFQUEUE --queue-num 0 ||
	fail "ip6tables NFQUEUE rule"
in_a nft -f - <<'NFT' || fail "nft reference"
table inet ref {
	chain out {
		type filter hook output priority -10; policy accept;
		tcp dport 5001 meta length 65536-4294967295 counter
	}
}
NFT

CONF=$(conf_file nfqd.conf <<EOF
options {
	queues { 0 };
	gso yes;
	control-socket "$SOCK";
}
hook output {
	policy accept;
	meta length 65536-4294967295 accept;
}
EOF
)
"$NFQD" -t -c "$CONF" >"$TMP/t.out" 2>&1 || fail "nfqd -t: $(cat "$TMP/t.out")"
start_nfqd "$NS_A" "$CONF"
wait_bound "$NS_A" 0
wait_file "$SOCK"

ip netns exec "$NS_B" "$PY" -c '
import socket
s = socket.socket(socket.AF_INET6)
s.bind(("2001:db8::2", 5001))
s.listen(1)
c, _ = s.accept()
while c.recv(1 << 20):
    pass
' &
bg_pid $!
end=$(deadline "$WAIT_SECONDS")
until [ -n "$(in_b ss -Hltn 'sport = :5001')" ]; do
	before "$end" || fail "the receiver did not listen in $WAIT_SECONDS s"
	sleep 0.1
done
in_a "$PY" -c '
import socket
s = socket.create_connection(("2001:db8::2", 5001), timeout=30)
s.sendall(b"x" * (8 << 20))
s.close()
' || fail "sending 8 MB failed"

in_a "$NFQD_CTL" -s "$SOCK" -j rules >"$TMP/rules.json" ||
	fail "nfqd-ctl -j rules"
set -- $("$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = [h for h in d["hooks"] if h["hook"] == "output"][0]["rules"][0]
print(r["packets"], r["bytes"])' "$TMP/rules.json")
ref=$(in_a nft list chain inet ref out | awk '/counter/ {
	for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1), $(i + 3) }')
log "packets longer than 65535: nfqd $1 ($2 bytes), nft $ref"
[ "$ref" != "0 0" ] || skip "no TCP packet longer than 65535 bytes was sent (BIG TCP off)"
[ "$1 $2" = "$ref" ] || fail "nfqd counted $1 packets ($2 bytes) longer than 65535, nft $ref"
stop_nfqd
exit 0
