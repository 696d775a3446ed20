#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "queues auto" binds one queue per online CPU from queue-base, and each
# worker thread is pinned to its CPU.
. "$(dirname "$0")/../lib.sh"

ns_setup
ncpu=$(nproc)

# The tid of the worker thread named nfqd-qN (queues are bound a moment
# before their workers start: wait $WAIT_SECONDS s at most).
worker_tid() {
	local t end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		for t in /proc/$NFQD_PID/task/*; do
			if [ "$(cat "$t/comm" 2>/dev/null)" = "nfqd-q$1" ]; then
				echo "${t##*/}"
				return
			fi
		done
		sleep 0.05
	done
}

check_auto() {
	local base=$1 i conf want="" got cpus tid
	conf=$(conf_file "auto$base.conf" <<EOF
options {
	queues auto;
	queue-base $base;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
EOF
)
	start_nfqd "$NS_B" "$conf"
	for i in $(seq 0 $((ncpu - 1))); do
		want="$want $((base + i))"
	done
	wait_bound "$NS_B" $want
	got=$(in_b awk '{ printf " %d", $1 }' /proc/net/netfilter/nfnetlink_queue)
	[ "$got" = "$want" ] || fail "bound:$got, want:$want"
	for i in $(seq 0 $((ncpu - 1))); do
		tid=$(worker_tid $((base + i)))
		[ -n "$tid" ] || fail "no worker thread for queue $((base + i))"
		cpus=$(awk '/Cpus_allowed_list/ { print $2 }' \
			"/proc/$NFQD_PID/task/$tid/status")
		[ "$cpus" = "$i" ] \
			|| fail "queue $((base + i)) worker on CPUs $cpus, want $i"
	done
	stop_nfqd
	log "queue-base $base: bound$got, each worker pinned"
}

check_auto 0
check_auto 8
log "ok: $ncpu CPUs"
