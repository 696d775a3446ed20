#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Zero loss across restarts with a file descriptor store, without systemd:
# fake_systemd.py keeps the sockets nfqd stores (FDSTORE=1, FDNAME=nfq-N)
# and passes them to the next nfqd (LISTEN_FDS), as systemd does. A flood
# through queues 0-1 without --queue-bypass across two SIGKILLs and a
# SIGTERM: every packet sent arrives, every one marked by the policy, and
# the new processes list the queues as adopted. A queue that leaves the
# config (by reload, or at start) leaves the store and is unbound.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables
require_cmd python3
srcs=$(add_sources)
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-balance 0:1
in_b nft insert rule inet nfqdsink in meta mark 0x10 counter comment marked \
	|| fail "nft marked counter"
marked() {
	in_b nft list chain inet nfqdsink in | awk '/marked/ { for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'
}
# The test needs CPU for nfqd: a restart on a loaded machine can leave a
# queue unread for seconds while the flood goes on. The flood sends
# 15,000 packets a second, 7,500 to a queue, and a queue holds at most 65536 packets on kernels that keep a hash of
# queued ids (6.18.44 here: with queue-maxlen 262144 it held 65536 and
# counted the rest in queue_dropped, logging "hash insert failed: -7"): a queue
# unread for 8 s loses nothing (rcvbuf 128M for their messages of about
# 1 KiB, kernel memory only while nothing reads), so a slow restart delays
# packets but loses none.
conf=$( (flood_options 2 65536 128M; echo 'hook input { udp dport 9 mark set 0x10 accept; }') \
	| conf_file nfqd.conf)
mkdir "$TMP/fs"
# Not through in_b: a function in the background is a subshell, and
# killing $! would leave the manager and nfqd running.
ip netns exec "$NS_B" "$TOP_SRCDIR/tests/integration/fake_systemd.py" "$TMP/fs" -- \
	"$NFQD" -c "$conf" >"$TMP/nfqd.log" 2>&1 &
mgr=$!
bg_pid $mgr
wait_bound "$NS_B" 0 1
main_pid() { cat "$TMP/fs/main.pid"; }
# Wait until the service with pid $1 has sent READY=1.
wait_ready() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		grep -q "^[0-9.]* $1 .*READY=1" "$TMP/fs/notify.log" 2>/dev/null && return 0
		kill -0 $mgr 2>/dev/null || fail "fake_systemd exited"
		sleep 0.05
	done
	fail "no READY=1 from $1: $(cat "$TMP/fs/notify.log")"
}
wait_ready "$(main_pid)"
for q in 0 1; do
	grep -q "FDSTORE=1|.*FDNAME=nfq-$q" "$TMP/fs/notify.log" \
		|| fail "queue $q's socket not stored: $(cat "$TMP/fs/notify.log")"
done

total=150000
gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
[ -x "$gen" ] || fail "generator $gen not built"
ip netns exec "$NS_A" "$gen" -d 192.0.2.2 -n $total -r 15000 -S "$srcs" -q &
genpid=$!
bg_pid $genpid
# Packets the kernel queued on queues 0 and 1 so far.
queued() {
	echo $(( $(kqueue_field "$NS_B" 0 8) + $(kqueue_field "$NS_B" 1 8) ))
}
# Each restart comes 22,500 packets (1.5 s of the flood) after the last,
# counted, not timed: a loaded machine may feed the generator late.
for sig in KILL TERM KILL; do
	want=$(( $(queued) + 22500 ))
	end=$(deadline "$WAIT_SECONDS")
	while [ "$(queued)" -lt $want ] && before "$end"; do
		sleep 0.1
	done
	old=$(main_pid)
	kill -$sig "$old"
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ "$(main_pid)" != "$old" ] && break
		sleep 0.05
	done
	[ "$(main_pid)" != "$old" ] || fail "not restarted after SIG$sig"
	wait_ready "$(main_pid)"
	log "SIG$sig: $old -> $(main_pid)"
done
wait $genpid || fail "generator failed"
# Everything through: nothing waiting, the sink stable.
prev=
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	now=$(sink_udp_packets)
	waiting=$(kqueue_field "$NS_B" 0 3)$(kqueue_field "$NS_B" 1 3)
	[ "$now" = "$prev" ] && [ "$waiting" = 00 ] && break
	prev=$now
	sleep 0.1
done
got=$(sink_udp_packets)
m=$(marked)
status=$("$NFQD_CTL" -s "$TMP/nfqd.sock" -j status)
log "sent $total, delivered $got, marked $m"
echo "$status" | tr -d " \n" | grep -q '"adopted":\[0,1\]' \
	|| fail "status does not list queues 0 and 1 as adopted"
"$NFQD_CTL" -s "$TMP/nfqd.sock" status | grep -q '^adopted: *0 1$' \
	|| fail "status text has no 'adopted: 0 1' line"
[ "$got" = "$total" ] || fail "lost $((total - got)) of $total packets"
[ "$m" = "$total" ] || fail "$((total - m)) packets delivered unmarked"

# A reload that removes queue 1 takes its socket out of the store (and
# unbinds it); one that adds it back stores it again.
write_conf() {
	(flood_options "$1"; echo 'hook input { udp dport 9 mark set 0x10 accept; }') \
		>"$conf.new" && mv "$conf.new" "$conf"
}
reload() {
	"$NFQD_CTL" -s "$TMP/nfqd.sock" reload >/dev/null || fail "reload failed"
}
write_conf 1
reload
grep -q "FDSTOREREMOVE=1|FDNAME=nfq-1" "$TMP/fs/notify.log" \
	|| fail "no FDSTOREREMOVE for queue 1 on reload"
[ -z "$(kqueue_line "$NS_B" 1)" ] || fail "queue 1 still bound after its removal"
write_conf 2
reload
wait_bound "$NS_B" 0 1
[ "$(grep -c "FDSTORE=1|.*FDNAME=nfq-1" "$TMP/fs/notify.log")" = 2 ] \
	|| fail "queue 1 not stored again after the reload that added it"
# A start with a config that no longer has queue 1: its stored socket is
# closed and removed from the store, which unbinds it.
write_conf 1
old=$(main_pid)
kill -KILL "$old"
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	[ "$(main_pid)" != "$old" ] && break
	sleep 0.05
done
wait_ready "$(main_pid)"
[ "$(grep -c "FDSTOREREMOVE=1|FDNAME=nfq-1" "$TMP/fs/notify.log")" = 2 ] \
	|| fail "stored socket of queue 1 not removed at start"
[ -z "$(kqueue_line "$NS_B" 1)" ] || fail "queue 1 still bound after a start without it"
[ -n "$(kqueue_line "$NS_B" 0)" ] || fail "queue 0 not bound"
kill -TERM $mgr
wait $mgr
log "ok: $total sent, $total delivered and marked across SIGKILL, SIGTERM, SIGKILL; a queue leaves the store with the config"
