#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The netlink socket's receive buffer overflows: 5,000 datagrams into
# queue 0 (queue-maxlen 65536, rcvbuf 4096: room for a few messages)
# while nfqd is stopped. Without fail-open the kernel drops what the
# socket cannot take: the loss equals the growth of user_dropped exactly,
# and every packet nfqd judged got its policy's verdict. nfqd's enobufs
# counter does not see it (NETLINK_NO_ENOBUFS: the overrun is the
# kernel's to count). With fail-open (turned on by a reload) the overflow
# passes unjudged and no drop counter moves; id_sequence grows by every
# packet, so id_sequence minus nfqd's packets counts them. Recovery: a
# reload with rcvbuf 64M, and the next burst loses nothing.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/integration/fault_lib.sh"

ns_setup
fault_setup
N=5000
write_conf() {
	cat >"$TMP/nfqd.conf.new" <<EOF
options {
	queues 1;
	queue-maxlen 65536;
	rcvbuf $1;
	fail-open $2;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
$FAULT_POLICY
EOF
	mv "$TMP/nfqd.conf.new" "$TMP/nfqd.conf"
}
write_conf 4096 no
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0

snap a
burst_stopped $N
snap b
account a b "rcvbuf 4096, fail-open no"
[ "$D_ipt" -eq $N ] || fail "$D_ipt of $N reached the queue"
[ "$D_ud" -gt $((N / 2)) ] || fail "user_dropped +$D_ud: the socket did not overflow"
[ "$D_ud" -eq $((N - D_pk)) ] || fail "user_dropped +$D_ud, want $N - $D_pk judged"
[ "$D_qd" -eq 0 ] || fail "queue_dropped +$D_qd"
[ "$D_pass" -eq 0 ] || fail "$D_pass packets passed without nfqd"
log "drained $D_pk packets in $DRAIN_MS ms after SIGCONT"

write_conf 4096 yes
fctl reload >/dev/null || fail "reload to fail-open yes"
snap c
burst_stopped $N
snap d
account c d "rcvbuf 4096, fail-open yes"
[ "$D_ipt" -eq $N ] || fail "$D_ipt of $N reached the queue"
[ "$D_ud" -eq 0 ] || fail "fail-open: user_dropped +$D_ud"
[ "$D_qd" -eq 0 ] || fail "fail-open: queue_dropped +$D_qd"
[ "$D_pass" -eq $((N - D_pk)) ] || fail "passed unjudged $D_pass, want $((N - D_pk))"
[ "$D_pass" -gt $((N / 2)) ] || fail "only $D_pass passed: the socket did not overflow"
# The kernel spent an id on each of them before the socket refused it.
[ $((D_id - D_pk)) -eq "$D_pass" ] || fail "id_sequence +$D_id - $D_pk judged != $D_pass passed"

# Recovery: a bigger buffer by a reload; the same burst loses nothing.
write_conf 64M no
fctl reload >/dev/null || fail "reload to rcvbuf 64M"
snap e
burst_stopped $N
snap f
account e f "rcvbuf 64M after a reload"
[ "$D_pk" -eq $N ] || fail "after rcvbuf 64M: nfqd judged $D_pk of $N (user_dropped +$D_ud)"
log "drained $N packets in $DRAIN_MS ms after SIGCONT"
stop_nfqd
log "ok"
