#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A final "systemctl stop" loses no packet the kernel had queued: 20
# start/stop cycles during a steady 3,000 packets/s UDP stream over the
# container's lo, through queue 0 with --queue-bypass and option
# fail-open yes. nfqd asks systemd (D-Bus) for the unit's running job:
# "stop" is a final stop, which sets queue-maxlen 0, judges everything
# queued and unbinds. Every datagram sent must be delivered (judged and
# marked by nfqd, or accepted by the kernel while no nfqd listens), the
# marked ones must be exactly those nfqd accepted, and at each stop the
# kernel's id_sequence must equal the packets nfqd received, with none
# left in the queue. Then one "systemctl restart": job "restart" keeps
# the queue bound in the store and the next process adopts it.
#   NFQD_STOP_CYCLES   start/stop cycles (default 20)
#   NFQD_STOP_RATE     packets per second (default 3000)
. "$(dirname "$0")/lib.sh"

CYCLES=${NFQD_STOP_CYCLES:-20}
RATE=${NFQD_STOP_RATE:-3000}

sys_setup
# 20 starts in a minute: past systemd's default start limit (5 in 10 s).
mkdir -p "$SYS_ROOT/etc/systemd/system/nfqd.service.d"
cat >"$SYS_ROOT/etc/systemd/system/nfqd.service.d/startlimit.conf" <<'EOC'
[Unit]
StartLimitIntervalSec=0
EOC
in_c systemctl daemon-reload
sys_write_conf <<'EOC'
options {
	queues 1;
	queue-maxlen 65536;
	rcvbuf 64M;
	fail-open yes;
}
hook input { udp dport 9 mark set 0x10 accept; }
EOC
in_c iptables -A INPUT -i lo -p udp -j NFQUEUE --queue-num 0 --queue-bypass \
	|| fail "iptables NFQUEUE rule"
in_c nft -f - <<'NFT' || fail "nft sink"
table inet sink {
	chain in {
		type filter hook input priority 100; policy accept;
		meta l4proto udp meta mark 0x10 counter drop
		meta l4proto udp counter drop
	}
}
NFT

# Start the unit once the previous instance's cgroup is gone: systemd 252
# in a container can fail a start that comes while the old cgroup is
# still being removed (status 219/CGROUP, "Failed to kill control group
# ... Input/output error" in its journal), which says nothing of nfqd.
# Such a start is logged and tried again, at most 3 times.
start_unit() {
	local try since
	sys_wait_cgroup_gone
	for try in 1 2 3; do
		since=$(in_c date '+%Y-%m-%d %H:%M:%S.%6N')
		in_c systemctl start nfqd && return 0
		sys_cgroup_race "$since" || return 1
		log "$1: start failed with 219/CGROUP (the container's cgroup), try $try"
		in_c systemctl reset-failed nfqd
		sleep 0.5
	done
	return 1
}
since=$(in_c date '+%Y-%m-%d %H:%M:%S.%6N')
sys_flood "$RATE" &
gen=$!
bg_pid "$gen"
for c in $(seq 1 "$CYCLES"); do
	start_unit "cycle $c" || fail "cycle $c: systemctl start failed"
	wait_active
	sleep 0.5
	in_c systemctl stop nfqd || fail "cycle $c: systemctl stop failed"
	[ "$(unit_prop ActiveState)" = inactive ] \
		|| fail "cycle $c: unit $(unit_prop ActiveState) after stop"
done
# One restart in the stream: the queue stays bound across it.
start_unit restart || fail "systemctl start failed"
wait_active
old=$(unit_prop MainPID)
sleep 0.5
sys_restart || fail "systemctl restart failed"
wait_active "$old"
sleep 0.5
in_c systemctl stop nfqd || fail "last systemctl stop failed"
touch "$TMP/stop"
wait "$gen" || fail "flood: $(cat "$TMP/sent")"
sent=$(cat "$TMP/sent")

prev=
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	now=$(sink_counts)
	[ "$now" = "$prev" ] && break
	prev=$now
	sleep 0.2
done
read -r marked unmarked <<<"$(sink_counts)"
in_c journalctl -u nfqd --since "$since" --no-pager -o cat >"$TMP/journal"

# Every stop: job "stop", nothing left queued, id_sequence = received.
stops=$(grep -c 'job "stop".*a final stop' "$TMP/journal")
[ "$stops" = $((CYCLES + 1)) ] \
	|| fail "$stops final stops in the journal, expected $((CYCLES + 1))"
grep 'queue 0: stop: ' "$TMP/journal" >"$TMP/stoplines"
bad=$(awk '{
	for (i = 1; i <= NF; i++) {
		if ($i == "left") left = $(i - 1)
		if ($i == "id_sequence") seq = $(i + 1)
		if ($i == "process") recv = $(i + 1)
	}
	sub(/,/, "", seq)
	# an adopted queue's ids count the previous process's packets too
	if (left != 0 || (seq != recv && $0 !~ /adopted:/)) print
}' "$TMP/stoplines")
[ -z "$bad" ] || fail "a stop left packets or lost some: $bad"
[ "$(wc -l <"$TMP/stoplines")" = "$stops" ] \
	|| fail "$(wc -l <"$TMP/stoplines") stop reports for $stops stops"
grep -q "still queued" "$TMP/journal" \
	&& fail "packets flushed at an unbind: $(grep 'still queued' "$TMP/journal")"
grep -q 'job "restart".*a restart: the queues stay bound' "$TMP/journal" \
	|| fail "the restart was not taken for one: $(grep 'stop:' "$TMP/journal" | tail -3)"
grep -q "queue 0: adopted the socket stored by the previous process" "$TMP/journal" \
	|| fail "the process after the restart did not adopt queue 0"
accepted=$(awk '/stopped: packets/ { for (i = 1; i <= NF; i++) if ($i == "accepted") s += $(i + 1) } END { print s + 0 }' "$TMP/journal")
judged=$(awk '/stop: .* queued packets judged/ { s += $4 } END { print s + 0 }' "$TMP/journal")
log "sent $sent at $RATE/s across $CYCLES stops and 1 restart; delivered $((marked + unmarked)) ($marked judged and marked by nfqd, $unmarked accepted by the kernel while unjudged)"
log "nfqd accepted $accepted; judged after a stop request: $judged; every stop: 0 left in the kernel queue, id_sequence = received"
sed -n 's/^/#   /; 1,3p' "$TMP/stoplines"
grep -m1 'job "stop"' "$TMP/journal" | sed 's/^/#   /'
grep -m1 'job "restart"' "$TMP/journal" | sed 's/^/#   /'
[ "$marked" = "$accepted" ] || fail "nfqd accepted $accepted, the sink saw $marked marked"
[ $((marked + unmarked)) = "$sent" ] \
	|| fail "lost $((sent - marked - unmarked)) of $sent across $CYCLES stops"
log "ok: no packet lost across $CYCLES stops"
