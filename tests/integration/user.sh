#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Option "user": after binding, nfqd runs as that user with CAP_NET_ADMIN
# only, in every thread; verdicts, reloads, the stats file and the control
# socket keep working. An unknown user is a start-up error.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables
id nobody >/dev/null 2>&1 || skip "no user nobody"
chmod 755 "$TMP"	# the unprivileged daemon must reach its files
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-balance 0:1

write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF
options {
	queues 2;
	user "$1";
	stats-file "$TMP/run/stats";
	control-socket "$TMP/run/nfqd.sock";
}
hook input { udp dport 7 drop; }
EOF
}
ctl() { in_b "$NFQD_CTL" -s "$TMP/run/nfqd.sock" "$@"; }

write_conf nobody
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0 1
end=$(deadline "$WAIT_SECONDS")
until grep -q "running as user nobody" "$TMP/nfqd.log" || ! before "$end"; do
	sleep 0.05
done
grep -q "running as user nobody" "$TMP/nfqd.log" || fail "no privilege drop logged"

nobody_uid=$(id -u nobody)
for t in /proc/$NFQD_PID/task/*; do
	name=$(cat "$t/comm")
	uid=$(awk '/^Uid:/ { print $3 }' "$t/status")
	capeff=$(awk '/^CapEff:/ { print $2 }' "$t/status")
	[ "$uid" = "$nobody_uid" ] || fail "thread $name runs as uid $uid"
	# CAP_NET_ADMIN is capability 12.
	[ "$capeff" = 0000000000001000 ] || fail "thread $name has capabilities $capeff"
done
log "every thread runs as uid $nobody_uid with CapEff 0x1000 (CAP_NET_ADMIN)"

send_udp "$NS_A" 192.0.2.2 1000 -p 9 -q
send_udp "$NS_A" 192.0.2.2 100 -p 7 -q
got=$(wait_sink_udp 1000)
[ "$got" = 1000 ] || fail "sink saw $got, want 1000"
ctl reload >/dev/null || fail "reload as nobody failed"
end=$(deadline "$WAIT_SECONDS")
until awk '{ s += $10 } END { exit s == 1100 ? 0 : 1 }' "$TMP/run/stats" 2>/dev/null || ! before "$end"; do
	sleep 0.1
done
awk '{ s += $10 } END { exit s == 1100 ? 0 : 1 }' "$TMP/run/stats" \
	|| fail "stats file not updated: $(cat "$TMP/run/stats" 2>&1)"
stop_nfqd

write_conf no-such-user-nfqd
out=$(timeout 10 ip netns exec "$NS_B" "$NFQD" -c "$TMP/nfqd.conf" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "unknown user: exit $rc, want 1"
echo "$out" | grep -q 'user "no-such-user-nfqd": no such user' || fail "unknown user: $out"
log "ok"
