# SPDX-License-Identifier: GPL-2.0-or-later
# tests/integration/fault_lib.sh - helpers of the fault tests (fault_*.sh,
# docs/reliability.md); sourced after tests/lib.sh.
#
# Traffic goes to namespace B's queue 0 by an iptables NFQUEUE rule whose
# packet counter says how many packets reached the queue's hook; a sink
# chain after it tells apart what nfqd accepted (port 9, marked 0x1 by the
# policy) from what passed without nfqd (port 9 unmarked, port 10, which
# the policy drops).

require_cmd iptables nft python3

# The queue rule (with $1 extra iptables arguments) and the sink.
fault_setup() {
	in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0 "$@" \
		|| fail "iptables NFQUEUE rule"
	in_b nft -f - <<'NFT' || fail "nft sink"
table inet fsink {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 9 meta mark 0x1 counter drop
		udp dport 9 counter drop
		udp dport 10 counter drop
	}
}
NFT
}

# The policy every fault test judges with (after the options block).
FAULT_POLICY='hook input {
	udp dport 9 mark set 0x1 accept;
	udp dport 10 drop;
}'

# Sink counter $1: 1 port 9 marked (nfqd accepted), 2 port 9 unmarked,
# 3 port 10 (both passed without nfqd's verdict).
sink_n() {
	in_b nft list chain inet fsink in | awk -v n="$1" '/counter/ {
		c++; for (i = 1; i <= NF; i++) if ($i == "packets" && c == n) print $(i + 1)
	}'
}

# Packets that hit the NFQUEUE rule.
ipt_packets() {
	in_b iptables -L INPUT -v -x -n | awk '/NFQUEUE/ { print $1; exit }'
}

# Kernel field $1 of queue 0 (3 queue_total, 6 queue_dropped,
# 7 user_dropped, 8 id_sequence).
kq() { kqueue_field "$NS_B" 0 "$1"; }

# nfqd's counter $1 of queue 0 (JSON stats); the socket is $TMP/nfqd.sock.
nq() {
	in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" -j stats | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["queues"][0][sys.argv[1]])' "$1"
}

fctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }

# Wait (60 s at most) until queue 0 is empty and the sink and nfqd's
# packet counter stop moving.
settle() {
	local end last= cur
	end=$(deadline 60)
	while before "$end"; do
		cur="$(kq 3) $(nq packets) $(sink_n 1) $(sink_n 2) $(sink_n 3)"
		case $cur in "0 "*) [ "$cur" = "$last" ] && return 0 ;; esac
		last=$cur
		sleep 0.1
	done
	fail "queue 0 did not settle: $cur"
}

# Snapshot of every counter, as shell variables with prefix $1.
snap() {
	eval "$1_ipt=$(ipt_packets) $1_qd=$(kq 6) $1_ud=$(kq 7) $1_id=$(kq 8)"
	eval "$1_pk=$(nq packets) $1_ac=$(nq accepted) $1_dr=$(nq dropped)"
	eval "$1_eb=$(nq enobufs) $1_s1=$(sink_n 1) $1_s2=$(sink_n 2) $1_s3=$(sink_n 3)"
}

# Run in namespace B: SIGCONT process $1, then print the milliseconds
# until queue 0 is empty (60 s at most; the loop forks only its sleep, so
# the figure is not an ip-netns-exec's start-up time).
cont_and_time_drain() {
	local t0 q p total rest
	kill -CONT "$1"
	t0=${EPOCHREALTIME/./}
	while (( ${EPOCHREALTIME/./} - t0 < 60000000 )); do
		total=
		while read -r q p total rest; do
			[ "$q" = 0 ] && break
		done </proc/net/netfilter/nfnetlink_queue
		[ "$total" = 0 ] && break
		sleep 0.002
	done
	echo $(( (${EPOCHREALTIME/./} - t0) / 1000 ))
}

# Stop nfqd, send $1 datagrams (ports 9 and 10 in turn) while it cannot
# read, let it go on and wait until everything is settled. DRAIN_MS: from
# SIGCONT until the kernel queue was empty.
burst_stopped() {
	kill -STOP "$NFQD_PID"
	send_udp "$NS_A" 192.0.2.2 "$1" -q -p 9 -P 2
	DRAIN_MS=$(in_b bash -c "$(declare -f cont_and_time_drain)
		cont_and_time_drain $NFQD_PID")
	settle
}

# Check that every packet between snapshots $1 and $2 is accounted for:
# judged by nfqd with its policy's verdict, or counted as lost by the
# kernel, or passed unjudged (fail-open). Sets D_* (deltas).
account() {
	local a=$1 b=$2 v
	for v in ipt qd ud id pk ac dr eb s1 s2 s3; do
		eval "D_$v=\$(( ${b}_$v - ${a}_$v ))"
	done
	D_pass=$((D_s2 + D_s3))
	log "$3: $D_ipt reached the queue; nfqd judged $D_pk ($D_ac accepted, $D_dr dropped, enobufs +$D_eb); kernel queue_dropped +$D_qd, user_dropped +$D_ud; passed unjudged $D_pass"
	[ "$D_ac" -eq "$D_s1" ] || fail "$3: nfqd accepted $D_ac, the sink saw $D_s1 marked"
	[ $((D_ac + D_dr)) -eq "$D_pk" ] || fail "$3: $D_pk judged, $D_ac + $D_dr verdicts"
	# Everything that reached the hook: judged, lost, or passed.
	[ $((D_pk + D_qd + D_ud + D_pass)) -eq "$D_ipt" ] \
		|| fail "$3: $D_pk judged + $D_qd + $D_ud lost + $D_pass passed != $D_ipt queued"
}

# Bursts of 500 datagrams from A (ports 9 and 10 in turn) until
# traffic_stop, each burst recorded in $TMP/sent: traffic that keeps
# flowing while a test storms something else.
traffic_start() {
	rm -f "$TMP/storm.done" "$TMP/sent"
	(
		while [ ! -e "$TMP/storm.done" ]; do
			send_udp "$NS_A" 192.0.2.2 500 -q -p 9 -P 2 -r 20000
			echo 500 >>"$TMP/sent"
		done
	) &
	TRAFFIC_PID=$!
	bg_pid $TRAFFIC_PID
}

# End the bursts of traffic_start after the one in flight.
traffic_stop() {
	touch "$TMP/storm.done"
	wait "$TRAFFIC_PID" || fail "traffic generator failed"
}
