#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A queue that cannot be set up reports the system call's own error, not
# one left behind by the log line written about it: nfqd's stderr is
# /dev/full (every log write fails with ENOSPC), a reload adds queue 1,
# and strace makes the main thread's netlink socket(), then its bind(),
# fail with EMFILE and EADDRINUSE. nfqd-ctl must name those errors.
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd strace
write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF
options {
	queues $1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input { policy accept; }
EOF
}
ctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }

write_conf "0-0"
ip netns exec "$NS_B" "$NFQD" -c "$TMP/nfqd.conf" >/dev/full 2>&1 &
NFQD_PID=$!
wait_bound "$NS_B" 0
end=$(deadline "$WAIT_SECONDS")
while [ ! -S "$TMP/nfqd.sock" ] && before "$end"; do
	sleep 0.05
done
write_conf "0-1"

# $1: the system call to fail, $2: its errno, $3: the text nfqd-ctl must show.
refused() {
	local out end
	strace -qq -p "$NFQD_PID" -e trace="$1" -e inject="$1":error="$2":when=1 \
		-o /dev/null &
	local sp=$!
	bg_pid $sp
	wait_traced "$NFQD_PID"
	out=$(ctl reload 2>&1) && fail "reload with a failing $1 succeeded"
	kill -INT $sp
	wait $sp 2>/dev/null
	end=$(deadline "$WAIT_SECONDS")
	until grep -q 'TracerPid:[[:space:]]*0' "/proc/$NFQD_PID/status" || ! before "$end"; do
		sleep 0.05
	done
	log "$1 failing with $2: $out"
	case $out in
	*"$3"*) ;;
	*) fail "reload error does not name $2 ($3): $out" ;;
	esac
}
refused socket EMFILE "Too many open files"
refused bind EADDRINUSE "Address already in use"
[ -z "$(kqueue_line "$NS_B" 1)" ] || fail "queue 1 bound after the failed reloads"
ctl reload >/dev/null || fail "reload without a fault failed"
wait_bound "$NS_B" 0 1
stop_nfqd
log "ok: the reload errors name the failed call's errno"
