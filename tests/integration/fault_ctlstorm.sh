#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A storm of 1,000 control connects while traffic flows through queue 0:
# 250 threads at once, good clients among clients that hang up after half
# a frame, hold half a frame, never read their answer, or are SIGKILLed
# mid-request. Every good client gets its stats or a "busy" answer, the
# daemon stays up, every packet gets its policy's verdict, and afterwards
# nfqd-ctl status works and the daemon holds the descriptors it held before.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/integration/fault_lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

ns_setup
fault_setup
SOCK="$TMP/nfqd.sock"
cat >"$TMP/nfqd.conf" <<EOF
options {
	queues 1;
	stats-file "$TMP/stats";
	control-socket "$SOCK";
}
$FAULT_POLICY
EOF
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
wait_file "$SOCK"
fctl status >/dev/null || fail "status before the storm"
fds() { ls "/proc/$NFQD_PID/fd" | wc -l; }
fd0=$(fds)
snap a

# Traffic in bursts of 500 (ports 9 and 10 in turn) until the storm ends.
traffic_start
out=$(in_b "$PY" "$CTL_PY" "$SOCK" storm 1000)
rc=$?
traffic_stop
log "$out"
[ $rc -eq 0 ] || fail "storm: $out"
kill -0 "$NFQD_PID" 2>/dev/null || fail "nfqd died in the storm"
sent=$(awk '{ s += $1 } END { print s }' "$TMP/sent")

settle
snap b
account a b "control storm"
[ "$D_ipt" -eq "$sent" ] || fail "$D_ipt of $sent reached the queue"
[ "$D_pk" -eq "$sent" ] || fail "nfqd judged $D_pk of $sent"
[ "$D_ac" -eq $((sent / 2)) ] || fail "accepted $D_ac, want $((sent / 2))"
[ "$D_dr" -eq $((sent / 2)) ] || fail "dropped $D_dr, want $((sent / 2))"
[ $((D_qd + D_ud + D_pass)) -eq 0 ] || fail "lost or passed: $D_qd $D_ud $D_pass"

# Every connection is closed once the held ones are gone.
end=$(deadline "$WAIT_SECONDS")
while [ "$(fds)" -gt "$fd0" ] && before "$end"; do
	sleep 0.1
done
[ "$(fds)" -eq "$fd0" ] || fail "nfqd holds $(fds) descriptors, $fd0 before the storm: $(ls -l "/proc/$NFQD_PID/fd")"
fctl status >/dev/null || fail "status after the storm"
stop_nfqd
log "ok: $sent packets judged during the storm, none lost or misjudged; $fd0 descriptors before and after"
