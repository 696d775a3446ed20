#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel queue overflows: 20,000 datagrams into queue 0 (queue-maxlen
# 1000, a receive buffer with room for all of them) while nfqd is stopped.
# Without fail-open the kernel drops the 19,000 it has no room for: the
# loss equals the growth of queue_dropped exactly, and every packet nfqd
# judged got its policy's verdict. A reload turns fail-open on: the next
# burst loses nothing; what overflowed passes unjudged (the sink sees it
# unmarked) and no kernel counter says so: the NFQUEUE rule's packet count
# minus nfqd's packets minus both kernel drop counters is that number.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/integration/fault_lib.sh"

ns_setup
fault_setup
N=20000
MAXLEN=1000
write_conf() {
	cat >"$TMP/nfqd.conf.new" <<EOF
options {
	queues 1;
	queue-maxlen $MAXLEN;
	rcvbuf 64M;
	fail-open $1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
$FAULT_POLICY
EOF
	mv "$TMP/nfqd.conf.new" "$TMP/nfqd.conf"
}
write_conf no
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0

snap a
burst_stopped $N
snap b
account a b "queue full, fail-open no"
[ "$D_ipt" -eq $N ] || fail "$D_ipt of $N reached the queue"
[ "$D_pk" -eq $MAXLEN ] || fail "nfqd judged $D_pk, want the $MAXLEN the queue held"
[ "$D_qd" -eq $((N - MAXLEN)) ] || fail "queue_dropped +$D_qd, want $((N - MAXLEN))"
[ "$D_ud" -eq 0 ] || fail "user_dropped +$D_ud"
[ "$D_pass" -eq 0 ] || fail "$D_pass packets passed without nfqd"
log "drained $MAXLEN packets in $DRAIN_MS ms after SIGCONT"

write_conf yes
fctl reload >/dev/null || fail "reload to fail-open yes"
snap c
burst_stopped $N
snap d
account c d "queue full, fail-open yes"
[ "$D_ipt" -eq $N ] || fail "$D_ipt of $N reached the queue"
[ "$D_pk" -eq $MAXLEN ] || fail "nfqd judged $D_pk, want $MAXLEN"
[ "$D_qd" -eq 0 ] || fail "fail-open: queue_dropped +$D_qd"
[ "$D_ud" -eq 0 ] || fail "fail-open: user_dropped +$D_ud"
[ "$D_pass" -eq $((N - MAXLEN)) ] || fail "passed unjudged $D_pass, want $((N - MAXLEN))"
# What an operator can compute without a sink.
unseen=$((D_ipt - D_pk - D_qd - D_ud))
[ "$unseen" -eq "$D_pass" ] || fail "rule count - nfqd - drops = $unseen, passed $D_pass"
# No id was spent on them: id_sequence grew by what nfqd received.
[ "$D_id" -eq "$D_pk" ] || fail "id_sequence +$D_id, nfqd received $D_pk"
stop_nfqd
log "ok"
