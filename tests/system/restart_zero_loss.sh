#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Zero loss across restarts under systemd: a steady UDP flood through
# queues 0-1 (iptables NFQUEUE without --queue-bypass, over the
# container's lo) while nfqd is restarted with "systemctl restart", killed
# with SIGKILL (Restart= brings it back) and, once the unit has
# WatchdogSec=, stopped until the watchdog restarts it. Every packet sent
# must be delivered, and every one judged by the policy (marked 0x10).
#
# The daemon keeps its queue sockets in systemd's file descriptor store
# and adopts them at start (nfqd(8), SYSTEMD).
#   NFQD_ZERO_LOSS_RATE    packets per second (default 5000)
#   NFQD_ZERO_LOSS_EVENTS  e.g. "restart kill restart kill restart kill"
. "$(dirname "$0")/lib.sh"

RATE=${NFQD_ZERO_LOSS_RATE:-5000}
EVENTS=${NFQD_ZERO_LOSS_EVENTS:-restart kill restart kill restart kill}
# systemd allows 5 starts in 10 s (the unit keeps that default): one
# restart every 3 s stays within it.
GAP=3

FAIL_RC=99	# anything but the pending check failing is a harness error
sys_setup
if grep -q '^WatchdogSec=' "$SYS_ROOT$NFQD_UNITDIR/nfqd.service"; then
	# A short watchdog for the test, SIGKILL instead of SIGABRT: no core.
	mkdir -p "$SYS_ROOT/etc/systemd/system/nfqd.service.d"
	cat >"$SYS_ROOT/etc/systemd/system/nfqd.service.d/watchdog.conf" <<'EOC'
[Service]
WatchdogSec=3s
WatchdogSignal=SIGKILL
EOC
	in_c systemctl daemon-reload
	EVENTS="$EVENTS watchdog"
else
	log "the unit has no WatchdogSec=: no watchdog restart in this run"
fi
sys_write_conf <<'EOC'
options {
	queues 2;
	queue-maxlen 65536;
	rcvbuf 64M;
}
hook input { udp dport 9 mark set 0x10 accept; }
EOC
in_c systemctl start nfqd || fail "systemctl start nfqd failed"
wait_active
sys_flood_setup

log "flood at $RATE packets/s; events: $EVENTS"
sys_flood "$RATE" &
gen=$!
bg_pid "$gen"
# Both queues in the flood (a loaded machine starts it late), then GAP.
end=$(deadline "$WAIT_SECONDS")
while [ "$(in_c awk '$8 > 0' /proc/net/netfilter/nfnetlink_queue | wc -l)" != 2 ] &&
	before "$end"; do
	sleep 0.1
done
sleep "$GAP"	# not a wait: the flood's time before the first event
[ "$(in_c awk '$8 > 0' /proc/net/netfilter/nfnetlink_queue | wc -l)" = 2 ] \
	|| fail "the flood does not reach both queues:" \
		"$(in_c cat /proc/net/netfilter/nfnetlink_queue)"
for ev in $EVENTS; do
	old=$(unit_prop MainPID)
	case $ev in
	restart)
		sys_restart || fail "systemctl restart failed" ;;
	kill)
		in_c systemctl kill --signal=SIGKILL --kill-whom=main nfqd \
			|| fail "systemctl kill failed" ;;
	watchdog)
		in_c systemctl kill --signal=SIGSTOP --kill-whom=main nfqd \
			|| fail "systemctl kill -s STOP failed" ;;
	*)
		fail "unknown event $ev" ;;
	esac
	wait_active "$old"
	log "$ev: main PID $old -> $(unit_prop MainPID)"
	sleep "$GAP"
done
touch "$TMP/stop"
wait "$gen" || fail "flood: $(cat "$TMP/sent")"
total=$(cat "$TMP/sent")

# Let the last packets through (none left waiting for a verdict), then
# count.
prev=
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	now=$(sink_counts)
	waiting=$(in_c awk '{ s += $3 } END { print s + 0 }' \
		/proc/net/netfilter/nfnetlink_queue)
	[ "$now" = "$prev" ] && [ "$waiting" = 0 ] && break
	prev=$now
	sleep 0.2
done
read -r marked unmarked <<<"$(sink_counts)"
delivered=$((marked + unmarked))
[ "$(unit_prop NRestarts)" -ge 1 ] || [ "${EVENTS#*kill}" = "$EVENTS" ] \
	|| fail "no automatic restart after SIGKILL"
log "sent $total, delivered $delivered (marked $marked," \
	"unmarked $unmarked), lost $((total - delivered))"
ctl_c stats | sed 's/^/#   /'

FAIL_RC=1	# the pending check
[ "$delivered" = "$total" ] \
	|| fail "lost $((total - delivered)) of $total packets across: $EVENTS"
[ "$unmarked" = 0 ] || fail "$unmarked packets delivered without the mark"
log "ok: no packet lost, every one judged"
