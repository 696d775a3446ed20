#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# copymeta.sh - copy-range 0 (the kernel's copy-meta mode) sends neither
# the payload nor the packet's length: "meta length" is incomplete, never
# a length of 0 (issue 17, item 3). With
#     meta length 1000-65535 drop
# and incomplete-verdict drop, 1,200-byte and 100-byte UDP datagrams are
# all dropped and counted incomplete; with incomplete-verdict accept all
# pass, and counted again. nfqd -t warns about the match.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

N=5
SOCK="$TMP/nfqd.sock"

require_root
require_cmd ip iptables nft

write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF
options {
	queues { 0 };
	copy-range 0;
	control-socket "$SOCK";
	incomplete-verdict $1;
}
hook input {
	policy accept;
	meta length 1000-65535 drop;
}
EOF
}

write_conf drop
"$NFQD" -t -c "$TMP/nfqd.conf" >"$TMP/t.out" 2>"$TMP/t.err" ||
	fail "nfqd -t: $(cat "$TMP/t.err")"
grep -qF 'nfqd.conf:9:2: warning: copy-range 0 sends no packet length: "meta length 1000-65535"' \
	"$TMP/t.err" || fail "nfqd -t did not warn: $(cat "$TMP/t.err")"

ns_setup
sink_setup
queue_rule_setup 0
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
wait_file "$SOCK"

# N datagrams of $1 bytes (IPv4 length: 28 + payload).
send_sized() {
	in_a "$PY" -c '
import socket, sys
n, size = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    s.sendto(b"x" * (size - 28), ("192.0.2.2", 9))
' "$N" "$1" || fail "sending failed"
}

# Wait ($WAIT_SECONDS s at most) until nfqd counted $1 incomplete packets.
wait_incomplete() {
	local end v=
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		v=$(ctl -j stats | "$PY" -c '
import json, sys
print(json.load(sys.stdin)["queues"][0]["incomplete"])')
		[ "$v" = "$1" ] && return 0
		sleep 0.1
	done
	fail "nfqd counted $v incomplete packets, want $1"
}

send_sized 1200
send_sized 100
wait_incomplete $((2 * N))
# Judged: what passed has arrived by now (one queue, in order).
[ "$(sink_udp_packets)" = 0 ] ||
	fail "$(sink_udp_packets) datagrams passed with incomplete-verdict drop"
log "incomplete-verdict drop: $((2 * N)) of $((2 * N)) incomplete, none passed"

write_conf accept
ctl reload >/dev/null || fail "reload"
send_sized 1200
send_sized 100
wait_incomplete $((4 * N))
got=$(wait_sink_udp $((2 * N)))
[ "$got" = $((2 * N)) ] || fail "$got datagrams passed, want $((2 * N))"
log "incomplete-verdict accept: $((2 * N)) more incomplete, all passed"
stop_nfqd
exit 0
