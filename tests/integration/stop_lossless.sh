#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stop outside systemd loses no packet the kernel had queued: nfqd is
# stopped (SIGSTOP) while 3,000 datagrams queue up, a paced flood
# (3,000 per second) goes on, and SIGTERM arrives with the backlog in
# the kernel queue. nfqd sets queue-maxlen 0 (with fail-open as
# configured) in one config message, judges the whole backlog and every
# packet that arrived before the kernel took it, then unbinds.
#
# fail-open yes with --queue-bypass: every datagram sent is delivered
# (judged and marked by nfqd, or accepted unjudged by the kernel during
# and after the stop), nothing is flushed at the unbind.
# fail-open no without --queue-bypass: every packet the kernel queued
# (id_sequence) was received and judged by nfqd, none is left in the
# kernel queue at the unbind, and what arrived during the stop is the
# growth of queue_dropped, which nfqd reports.
#   NFQD_STOP_ROUNDS  stops per mode (default 5)
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/integration/fault_lib.sh"

ROUNDS=${NFQD_STOP_ROUNDS:-5}
BACKLOG=3000
FLOOD=6000
RATE=3000
gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
[ -x "$gen" ] || fail "generator $gen not built"

ns_setup

write_conf() {
	conf_file nfqd.conf <<EOC
options {
	queues 1;
	queue-maxlen 65536;
	rcvbuf 64M;
	fail-open $1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input { udp dport 9 mark set 0x1 accept; }
EOC
}

# A stop with a backlog and a flood; sets SENT. The log of this run is
# appended to $TMP/all.log.
stop_round() {
	local conf=$1 fpid end
	start_nfqd "$NS_B" "$conf"
	wait_bound "$NS_B" 0
	kill -STOP "$NFQD_PID"
	send_udp "$NS_A" 192.0.2.2 $BACKLOG -q
	ip netns exec "$NS_A" "$gen" -d 192.0.2.2 -n $FLOOD -r $RATE -q &
	fpid=$!
	bg_pid $fpid
	# The backlog and the flood under way in the kernel queue.
	end=$(deadline "$WAIT_SECONDS")
	while [ "$(kq 3)" -lt $((BACKLOG + RATE / 10)) ] && before "$end"; do
		sleep 0.05
	done
	[ "$(kq 3)" -ge $((BACKLOG + RATE / 10)) ] ||
		fail "backlog $(kq 3), expected $((BACKLOG + RATE / 10)) or more"
	kill -TERM "$NFQD_PID"
	kill -CONT "$NFQD_PID"
	stop_nfqd
	wait $fpid || fail "flood generator failed"
	SENT=$((BACKLOG + FLOOD))
	cat "$TMP/nfqd.log" >>"$TMP/all.log"
}

# "JUDGED LEFT IDSEQ RECEIVED" from the stop line of the last run.
stop_line() {
	sed -n 's/.*queue 0: stop: \([0-9]*\) queued packets judged, \([0-9]*\) left in the kernel queue; kernel id_sequence \([0-9]*\), packets received by this process \([0-9]*\).*/\1 \2 \3 \4/p' \
		"$TMP/nfqd.log"
}

check_round() {
	local judged left idseq recv
	read -r judged left idseq recv <<<"$(stop_line)"
	[ -n "$recv" ] || fail "no stop line in the log: $(cat "$TMP/nfqd.log")"
	[ "$left" -eq 0 ] || fail "$left packets left in the kernel queue at the unbind"
	[ "$idseq" -eq "$recv" ] \
		|| fail "the kernel queued $idseq packets, nfqd received $recv"
	grep -q "still queued" "$TMP/nfqd.log" \
		&& fail "packets flushed at the unbind: $(grep 'still queued' "$TMP/nfqd.log")"
	log "$1: judged after SIGTERM $judged, kernel id_sequence $idseq = received $recv, left 0"
	JUDGED=$judged
}

# The stop reports at priority 2 when packets came during it: nfqd knows
# that when it judged some after queue-maxlen 0 (and, with fail-open no,
# from queue_dropped). Its workers may have judged the whole backlog
# before the main thread took SIGTERM (a loaded machine runs them first
# after SIGCONT): then nothing came during the stop, and an info line is
# right.
need_crit() {
	[ "$JUDGED" -gt 0 ] || { log "$1: the backlog was judged before the stop began"; return 1; }
}

# Wait until the sink counters stop moving (the last accepted packets).
sink_settle() {
	local end last= cur
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		cur="$(sink_n 1) $(sink_n 2)"
		[ "$cur" = "$last" ] && return 0
		last=$cur
		sleep 0.2
	done
}

# --- fail-open yes, --queue-bypass: nothing lost at all ---------------
fault_setup --queue-bypass
conf=$(write_conf yes)
total=0
for r in $(seq 1 "$ROUNDS"); do
	stop_round "$conf"
	check_round "fail-open yes, stop $r"
	if need_crit "fail-open yes, stop $r"; then
		grep -q "<2>\|critical: queue 0: released" "$TMP/nfqd.log" \
			|| fail "no critical line for the released queue"
	fi
	total=$((total + SENT))
done
sink_settle
marked=$(sink_n 1) unmarked=$(sink_n 2) ipt=$(ipt_packets)
judged=$(awk '/stopped: packets/ { for (i = 1; i <= NF; i++) if ($i == "accepted") s += $(i + 1) } END { print s + 0 }' "$TMP/all.log")
log "fail-open yes: sent $total, reached the rule $ipt, delivered $((marked + unmarked)) ($marked judged by nfqd, $unmarked accepted unjudged by the kernel)"
[ "$ipt" -eq "$total" ] || fail "$ipt of $total reached the NFQUEUE rule"
[ "$marked" -eq "$judged" ] || fail "nfqd accepted $judged, the sink saw $marked marked"
[ $((marked + unmarked)) -eq "$total" ] \
	|| fail "lost $((total - marked - unmarked)) of $total across $ROUNDS stops"

# --- fail-open no, no bypass: every queued packet judged --------------
in_b iptables -F INPUT
in_b nft flush table inet fsink
in_b nft delete table inet fsink
fault_setup
: >"$TMP/all.log"
conf=$(write_conf no)
for r in $(seq 1 "$ROUNDS"); do
	stop_round "$conf"
	check_round "fail-open no, stop $r"
	dropped=$(sed -n 's/.*released: \([0-9]*\) packets arriving during the stop were dropped.*/\1/p' "$TMP/nfqd.log")
	if need_crit "fail-open no, stop $r"; then
		[ -n "$dropped" ] || fail "no critical line counting the packets dropped during the stop"
	fi
	log "fail-open no, stop $r: ${dropped:-0} arriving during the stop dropped by the kernel (queue_dropped)"
done
grep -q "still queued" "$TMP/all.log" && fail "packets flushed at an unbind"
log "ok: $ROUNDS + $ROUNDS stops, no queued packet lost"
