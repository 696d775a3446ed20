#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ctl_badclients.sh - hostile and unlucky control clients: garbage, a
# truncated frame, a frame claiming 4 GiB, an oversized frame, a client
# that never speaks, a slow one, a wrong protocol version, non-root peers,
# 100 clients at once; and a request sent while the daemon was stopped.
# Each bad one gets an error or is dropped, and meanwhile the daemon keeps
# passing traffic and answering other clients: while clients that hold a
# connection are still connected, not after their deadline. No check is
# a stopwatch (the machine may be loaded).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"
require_cmd setpriv

ns_setup
sink_setup
queue_rule_setup 0
STATS="$TMP/run/stats"
SOCK="$TMP/run/nfqd.sock"
CONF=$(conf_file nfqd.conf <<EOF
options {
    queues { 0 };
    stats-file "$STATS";
    control-socket "$SOCK";
    control-group "nogroup";
}
EOF
)
chmod 755 "$TMP"
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"
[ "$(stat -c %a "$SOCK")" = 660 ] || fail "socket mode $(stat -c %a "$SOCK"), want 660"
[ "$(stat -c %G "$SOCK")" = nogroup ] || fail "socket group $(stat -c %G "$SOCK")"

raw() { in_b "$PY" "$CTL_PY" "$SOCK" "$@"; }
sent=0
# The daemon still answers and still passes packets.
alive() {
	ctl status >/dev/null || fail "status failed after: $1"
	send_udp_to "$NS_A" 192.0.2.2 10 5000
	sent=$((sent + 10))
	wait_stats_field "$STATS" 0 10 "$sent"
	kill -0 "$NFQD_PID" || fail "nfqd died after: $1"
}

for mode in garbage truncated huge oversized version badpayload; do
	out=$(raw "$mode") || fail "$mode: $out"
	log "$mode: $out"
	alive "$mode"
done

# Clients that hold a connection: the silent one, the one stalling
# mid-frame and the slow one are cut off at the deadline, while others
# are served at once; a non-reader does not block anyone either.
raw silent >"$TMP/silent.out" 2>&1 &
p1=$!
raw truncated-wait >"$TMP/trunc.out" 2>&1 &
p2=$!
raw slow >"$TMP/slow.out" 2>&1 &
p3=$!
raw nonreader 8 >/dev/null 2>&1 &
p4=$!
bg_pid "$p1 $p2 $p3 $p4"
# Connections the daemon accepted and holds: a socket bound to $SOCK with
# a peer. The silent, stalled and slow clients are held until their
# request deadline; the non-reader's answer may fit in its socket buffer,
# and then the daemon is done with it at once.
held() {
	in_b ss -xH | awk -v s="$SOCK" '$2 == "ESTAB" && $5 == s' | wc -l
}
end=$(deadline "$WAIT_SECONDS")
while [ "$(held)" -lt 3 ] && before "$end"; do
	sleep 0.05
done
[ "$(held)" -ge 3 ] || fail "the silent, stalled and slow clients were not all accepted in $WAIT_SECONDS s: $(in_b ss -xH)"
# Answered while the silent and the stalled client are held, not after
# their request deadline (5 s from their accept) cut them off.
ctl status >/dev/null || fail "status failed with three clients holding connections"
kill -0 "$p1" 2>/dev/null && kill -0 "$p2" 2>/dev/null ||
	fail "status was answered only after the silent and stalled clients were cut off: $(cat "$TMP/silent.out" "$TMP/trunc.out")"
alive "silent, stalled, slow and non-reading clients connected"
out=$(raw many 100) || fail "100 clients: $out"
log "$out"
alive "100 clients"
wait $p1 || fail "silent client: $(cat "$TMP/silent.out")"
wait $p2 || fail "stalled client: $(cat "$TMP/trunc.out")"
wait $p3 || fail "slow client: $(cat "$TMP/slow.out")"
wait $p4
log "silent: $(tr '\n' ' ' <"$TMP/silent.out")"
log "slow: $(tr '\n' ' ' <"$TMP/slow.out")"

# A request that arrived while the daemon was held up past the request
# deadline is still served (timers fire before I/O after a stall).
out=$(raw stalled "$NFQD_PID") || fail "stalled daemon: $out"
alive "a stalled daemon"

# Non-root peers. A user in neither root nor control-group cannot even
# open the 0660 socket: exit 3 naming the reason.
in_b setpriv --reuid=65534 --regid=12345 --clear-groups \
	"$NFQD_CTL" -s "$SOCK" status >/dev/null 2>"$TMP/nobody.err"
rc=$?
[ $rc -eq 3 ] || fail "unprivileged client exit $rc, want 3: $(cat "$TMP/nobody.err")"
grep -q "Permission denied.*control-group" "$TMP/nobody.err" || fail "message does not name control-group: $(cat "$TMP/nobody.err")"
# One that can open it (CAP_DAC_OVERRIDE) is refused by its credentials.
in_b setpriv --reuid=65534 --regid=12345 --clear-groups \
	--inh-caps=+dac_override --ambient-caps=+dac_override \
	"$NFQD_CTL" -s "$SOCK" status >/dev/null 2>"$TMP/cap.err"
rc=$?
[ $rc -eq 1 ] || fail "uncredentialed client exit $rc, want 1: $(cat "$TMP/cap.err")"
grep -q "permission denied: uid 65534 is not root nor in group 'nogroup' (nfqd.conf option control-group" \
	"$TMP/cap.err" || fail "message: $(cat "$TMP/cap.err")"
# control-group members are served: by primary and by supplementary group.
in_b setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$NFQD_CTL" -s "$SOCK" -j stats >/dev/null || fail "primary group member refused"
in_b setpriv --reuid=65534 --regid=12345 --groups=65534 \
	"$NFQD_CTL" -s "$SOCK" -j status >/dev/null || fail "supplementary group member refused"
alive "non-root peers"

stop_nfqd
log "ok"
