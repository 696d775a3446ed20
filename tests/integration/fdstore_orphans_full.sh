#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Orphans behind failed deliveries (issue 17 item 5): a process bound
# queue 0 with a small socket buffer, read 10 packets and never answered
# them, and left its socket in the fd store (fake_systemd.py). 300 more
# packets arrive: the first ones wait in the socket, the others fail
# delivery (the socket is full) and use up their ids. nfqd adopts the
# socket. The 10 orphans get orphan-verdict "repeat" (queued again and
# judged by nfqd's policy), not the batch verdict of the packets that
# waited in the socket: nfqd judges every packet the kernel held, all
# arrive marked, and "orphans" counts 10.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables
require_cmd python3
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0
in_b nft insert rule inet nfqdsink in meta mark 0x10 counter comment marked \
	|| fail "nft marked counter"
marked() {
	in_b nft list chain inet nfqdsink in | awk '/marked/ { for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'
}
conf=$( (flood_options 1; echo 'hook input { udp dport 9 mark set 0x10 accept; }') \
	| conf_file nfqd.conf)
mkdir "$TMP/fs"
ip netns exec "$NS_B" "$TOP_SRCDIR/tests/integration/fake_systemd.py" "$TMP/fs" \
	--orphans 0:10 --orphans-rcvbuf 16384 --orphans-hold "$TMP/go" \
	-- "$NFQD" -c "$conf" >"$TMP/nfqd.log" 2>&1 &
mgr=$!
bg_pid $mgr
end=$(deadline "$WAIT_SECONDS")
while [ ! -e "$TMP/fs/orphans.bound" ] && before "$end"; do
	sleep 0.05
done
[ -e "$TMP/fs/orphans.bound" ] || fail "fake_systemd did not bind queue 0"
send_udp "$NS_A" 192.0.2.2 10 -q
end=$(deadline "$WAIT_SECONDS")
while [ ! -e "$TMP/fs/orphans.read" ] && before "$end"; do
	sleep 0.05
done
[ -e "$TMP/fs/orphans.read" ] || fail "fake_systemd did not read the 10 orphans"
send_udp "$NS_A" 192.0.2.2 300 -q
# queue_total: the orphans and what waits in the socket; user_dropped:
# the failed deliveries.
held=$(kqueue_field "$NS_B" 0 3)
failed=$(kqueue_field "$NS_B" 0 7)
log "before adoption: kernel holds $held, $failed deliveries failed, id_sequence $(kqueue_field "$NS_B" 0 8)"
[ "$failed" -ge 10 ] || fail "only $failed failed deliveries: the socket buffer did not fill"
[ "$held" -gt 10 ] || fail "nothing waits in the socket besides the orphans: $held held"
touch "$TMP/go"
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	[ "$(marked)" = "$held" ] && [ "$(kqueue_field "$NS_B" 0 3)" = 0 ] && break
	sleep 0.05
done
stat() {
	"$NFQD_CTL" -s "$TMP/nfqd.sock" -j stats | python3 -c \
		"import json,sys; print(json.load(sys.stdin)['queues'][0]['$1'])"
}
got=$(sink_udp_packets)
m=$(marked)
judged=$(stat packets)
orphans=$(stat orphans)
log "held $held, delivered $got, marked $m, judged by nfqd $judged, orphans $orphans"
[ "$got" = "$held" ] || fail "delivered $got of the $held held"
[ "$m" = "$held" ] || fail "$((held - m)) packets not marked"
[ "$judged" = "$held" ] || fail "nfqd judged $judged of the $held held (orphans swept by a batch verdict)"
[ "$orphans" = 10 ] || fail "orphans counted $orphans, want 10"
kill -TERM $mgr
wait $mgr
log "ok: 10 orphans behind $failed failed deliveries repeated and judged"
