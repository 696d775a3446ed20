#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfqd stopped (SIGSTOP) for about 1 s (while 10,000 packets arrive) and
# resumed (SIGCONT) in the middle of a sustained paced flood (30,000
# datagrams at 10,000 per second, ports 9 and 10 in turn, queue-maxlen
# 100). Without fail-open every packet that
# reached the NFQUEUE rule is judged by nfqd with its policy's verdict or
# counted lost by the kernel: the loss is exactly the growth of
# queue_dropped + user_dropped. A reload turns fail-open on: the same
# flood loses nothing, and what nfqd did not judge passes unjudged, the
# NFQUEUE rule's packet count minus nfqd's packets.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/integration/fault_lib.sh"

ns_setup
fault_setup
N=30000
RATE=10000
write_conf() {
	cat >"$TMP/nfqd.conf.new" <<EOC
options {
	queues 1;
	queue-maxlen 100;
	rcvbuf 64M;
	fail-open $1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
$FAULT_POLICY
EOC
	mv "$TMP/nfqd.conf.new" "$TMP/nfqd.conf"
}

# Wait until $1 more packets than now reached the NFQUEUE rule.
wait_queued() {
	local want end
	want=$(($(ipt_packets) + $1))
	end=$(deadline "$WAIT_SECONDS")
	while [ "$(ipt_packets)" -lt "$want" ] && before "$end"; do
		sleep 0.05
	done
}

# The flood in the background; nfqd stopped about a second into it, for
# about a second. Both counted in packets the flood sent, not by the
# clock: a loaded machine may start the generator late or starve it,
# and the stop must last for more than queue-maxlen's 100 packets.
flood_with_stop() {
	local gen="$TOP_BUILDDIR/tests/bench/nfqd-gen" gpid
	[ -x "$gen" ] || fail "generator $gen not built"
	ip netns exec "$NS_A" "$gen" -q -d 192.0.2.2 -n $N -r $RATE -p 9 -P 2 &
	gpid=$!
	bg_pid $gpid
	wait_queued $RATE
	kill -STOP "$NFQD_PID"
	wait_queued $RATE
	kill -CONT "$NFQD_PID"
	wait $gpid || fail "generator failed"
	settle
}

write_conf no
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0

snap a
flood_with_stop
snap b
account a b "stopped in a flood, fail-open no"
[ "$D_ipt" -eq $N ] || fail "$D_ipt of $N reached the queue"
[ "$D_pass" -eq 0 ] || fail "$D_pass packets passed without nfqd"
lost=$((D_ipt - D_pk))
[ "$lost" -eq $((D_qd + D_ud)) ] \
	|| fail "lost $lost, queue_dropped + user_dropped +$((D_qd + D_ud))"
[ "$lost" -gt 0 ] || fail "a stop of $RATE packets with queue-maxlen 100 lost nothing"
[ "$D_id" -eq "$D_pk" ] || fail "id_sequence +$D_id, nfqd received $D_pk"
log "fail-open no: sent $N, judged $D_pk ($D_ac accepted, $D_dr dropped), delivered $((D_s1 + D_pass)), lost $lost (queue_dropped +$D_qd, user_dropped +$D_ud)"

write_conf yes
fctl reload >/dev/null || fail "reload to fail-open yes"
snap c
flood_with_stop
snap d
account c d "stopped in a flood, fail-open yes"
[ "$D_ipt" -eq $N ] || fail "$D_ipt of $N reached the queue"
[ "$D_qd" -eq 0 ] || fail "fail-open: queue_dropped +$D_qd"
[ "$D_ud" -eq 0 ] || fail "fail-open: user_dropped +$D_ud"
unjudged=$((D_ipt - D_pk))
[ "$unjudged" -eq "$D_pass" ] || fail "rule count - nfqd = $unjudged, passed $D_pass"
[ "$unjudged" -gt 0 ] || fail "a stop of $RATE packets with queue-maxlen 100 passed nothing unjudged"
log "fail-open yes: sent $N, judged $D_pk ($D_ac accepted, $D_dr dropped), delivered $((D_s1 + D_pass)) ($D_pass unjudged, $D_s3 of them to port 10, which the policy drops), lost 0"
stop_nfqd
log "ok"
