#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Queue changes at reload: a new queue gets a worker, a removed one is
# unbound, copy-range is reconfigured in place, counters of kept queues
# survive, and traffic keeps flowing throughout.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables
in_b iptables -A INPUT -p udp --dport 9 -j NFQUEUE --queue-num 0
in_b iptables -A INPUT -p udp --dport 10 -j NFQUEUE --queue-num 1 --queue-bypass

write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF
options {
	queues $1;
	copy-range $2;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input { udp dport 10 drop; }
EOF
}
ctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }
received() {
	ctl -j stats | python3 -c "import json,sys; print(sum(q['packets'] for q in json.load(sys.stdin)['queues'] if q['queue'] == $1))"
}

write_conf "0-0" 256
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
send_udp "$NS_A" 192.0.2.2 1000 -q
# Queue 1 has no listener yet: --queue-bypass lets port 10 through.
send_udp "$NS_A" 192.0.2.2 100 -p 10 -q
[ "$(sink_udp_packets)" = 1100 ] || fail "sink saw $(sink_udp_packets), want 1100"

write_conf "{ 0, 1 }" 128
ctl reload >/dev/null || fail "reload adding queue 1 failed"
wait_bound "$NS_B" 0 1
[ "$(kqueue_field "$NS_B" 0 5)" = 128 ] || fail "copy-range not reconfigured: $(kqueue_line "$NS_B" 0)"
[ "$(kqueue_field "$NS_B" 1 5)" = 128 ] || fail "new queue copy-range: $(kqueue_line "$NS_B" 1)"
send_udp "$NS_A" 192.0.2.2 1000 -q
send_udp "$NS_A" 192.0.2.2 100 -p 10 -q
# Port 10 now meets nfqd's drop rule on queue 1.
got=$(wait_sink_udp 2100)
[ "$got" = 2100 ] || fail "sink saw $got, want 2100"
[ "$(received 0)" = 2000 ] || fail "queue 0 counters did not survive: $(received 0)"
[ "$(received 1)" = 100 ] || fail "queue 1 received $(received 1), want 100"

write_conf "0-0" 256
ctl reload >/dev/null || fail "reload removing queue 1 failed"
[ -z "$(kqueue_line "$NS_B" 1)" ] || fail "queue 1 still bound"
[ "$(kqueue_field "$NS_B" 0 5)" = 256 ] || fail "copy-range not restored"
send_udp "$NS_A" 192.0.2.2 100 -p 10 -q
got=$(wait_sink_udp 2200)
[ "$got" = 2200 ] || fail "bypass after removal: sink $got"
[ "$(ctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["queues"])')" = "[0]" ] \
	|| fail "status lists removed queue"
stop_nfqd
grep -q "queue 1: removed" "$TMP/nfqd.log" || fail "no removal logged"
log "ok"
