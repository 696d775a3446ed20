#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Orphans when the kernel's queue file cannot be read (issue 17 item 5):
# as fdstore_orphans.sh (a process read 100 packets of queue 0, never
# answered them and left its socket in the fd store), but nfqd runs in a
# mount namespace where /proc is an empty tmpfs (no kernel queue file).
# That is no proof that nothing is held: the 100 still get orphan-verdict
# "repeat" before the first verdict, and nfqd judges all 300 packets.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables python3 unshare
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0
conf=$( (flood_options 1; echo 'hook input { udp dport 9 mark set 0x10 accept; }') \
	| conf_file nfqd.conf)
mkdir "$TMP/fs"
ip netns exec "$NS_B" "$TOP_SRCDIR/tests/integration/fake_systemd.py" "$TMP/fs" \
	--orphans 0:100 -- unshare -m sh -c \
	'mount -t tmpfs none /proc && exec "$0" -c "$1"' \
	"$NFQD" "$conf" >"$TMP/nfqd.log" 2>&1 &
mgr=$!
bg_pid $mgr
end=$(deadline "$WAIT_SECONDS")
while [ ! -e "$TMP/fs/orphans.bound" ] && before "$end"; do
	sleep 0.05
done
[ -e "$TMP/fs/orphans.bound" ] || fail "fake_systemd did not bind queue 0"
send_udp "$NS_A" 192.0.2.2 300
stat() {
	"$NFQD_CTL" -s "$TMP/nfqd.sock" -j stats 2>/dev/null | python3 -c \
		"import json,sys; print(json.load(sys.stdin)['queues'][0]['$1'])" 2>/dev/null
}
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	[ "$(stat packets)" = 300 ] && [ "$(kqueue_field "$NS_B" 0 3)" = 0 ] && break
	sleep 0.05
done
got=$(sink_udp_packets)
judged=$(stat packets)
log "sent 300, delivered $got, judged by nfqd $judged, orphans counted $(stat orphans)"
[ "$got" = 300 ] || fail "delivered $got of 300"
[ "$judged" = 300 ] || fail "nfqd judged $judged of 300: the orphans were not given orphan-verdict"
grep -q "cannot read /proc/net/netfilter/nfnetlink_queue" "$TMP/nfqd.log" \
	|| fail "no warning about the unreadable queue file"
kill -TERM $mgr
wait $mgr
log "ok: 100 orphans repeated and judged without the kernel's queue file"
