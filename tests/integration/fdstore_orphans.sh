#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Orphans: a process bound queue 0, read 100 packets, never answered them
# and left its socket in the fd store (fake_systemd.py plays both). nfqd
# adopts the socket; the 100 get orphan-verdict "repeat" (handed back to
# the hook, queued again and judged by nfqd's policy) with one batch
# verdict: all 300 packets arrive marked, and "orphans" counts 100.
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
# Not through in_b: a function in the background is a subshell, and
# killing $! would leave the manager and nfqd running.
ip netns exec "$NS_B" "$TOP_SRCDIR/tests/integration/fake_systemd.py" "$TMP/fs" \
	--orphans 0:100 -- "$NFQD" -c "$conf" >"$TMP/nfqd.log" 2>&1 &
mgr=$!
bg_pid $mgr
end=$(deadline "$WAIT_SECONDS")
while [ ! -e "$TMP/fs/orphans.bound" ] && before "$end"; do
	sleep 0.05
done
[ -e "$TMP/fs/orphans.bound" ] || fail "fake_systemd did not bind queue 0"
send_udp "$NS_A" 192.0.2.2 300
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	[ "$(marked)" = 300 ] && [ "$(kqueue_field "$NS_B" 0 3)" = 0 ] && break
	sleep 0.05
done
got=$(sink_udp_packets)
m=$(marked)
orphans=$("$NFQD_CTL" -s "$TMP/nfqd.sock" -j stats | tr -d ' \n' \
	| sed -n 's/.*"orphans":\([0-9]*\).*/\1/p')
log "sent 300, delivered $got, marked $m, orphans $orphans"
"$NFQD_CTL" -s "$TMP/nfqd.sock" status | grep -q '^adopted: *0$' \
	|| fail "queue 0 not listed as adopted"
[ "$got" = 300 ] || fail "delivered $got of 300"
[ "$m" = 300 ] || fail "$((300 - m)) packets not judged by the policy"
[ "$orphans" = 100 ] || fail "orphans counted $orphans, want 100"
kill -TERM $mgr
wait $mgr
log "ok: 100 orphans repeated and judged, nothing lost"
