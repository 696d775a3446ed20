#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "queues auto" binds one queue per online CPU from queue-base, and each
# worker thread is pinned to its CPU. A reload follows cpu-pin on the queues
# that stay: "no" lets every worker run on every CPU nfqd may use (cpu -1),
# "yes" pins them again.
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

# Each worker's CPUs (Cpus_allowed_list) against $2 (its own CPU for
# "own"), and the cpu nfqd-ctl stats reports against $3 (own: its CPU).
check_pins() {
	local base=$1 i tid cpus want cpu
	for i in $(seq 0 $((ncpu - 1))); do
		tid=$(worker_tid $((base + i)))
		[ -n "$tid" ] || fail "no worker thread for queue $((base + i))"
		cpus=$(awk '/Cpus_allowed_list/ { print $2 }' \
			"/proc/$NFQD_PID/task/$tid/status")
		want=$2; [ "$want" = own ] && want=$i
		[ "$cpus" = "$want" ] \
			|| fail "queue $((base + i)) worker on CPUs $cpus, want $want"
		cpu=$(in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" -j stats | python3 -c \
			"import json,sys; print([q['cpu'] for q in json.load(sys.stdin)['queues'] if q['queue'] == $((base + i))][0])")
		want=$3; [ "$want" = own ] && want=$i
		[ "$cpu" = "$want" ] \
			|| fail "queue $((base + i)): stats say cpu $cpu, want $want"
	done
}

write_auto() {
	conf_file "auto$1.conf" <<EOF
options {
	queues auto;
	cpu-pin ${2:-yes};
	queue-base $1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
EOF
}

reload_pin() {
	write_auto "$1" "$2" >/dev/null
	in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" reload >/dev/null ||
		fail "reload with cpu-pin $2 failed"
}

check_auto() {
	local base=$1 i conf want="" got all
	conf=$(write_auto "$base")
	start_nfqd "$NS_B" "$conf"
	for i in $(seq 0 $((ncpu - 1))); do
		want="$want $((base + i))"
	done
	wait_bound "$NS_B" $want
	got=$(in_b awk '{ printf " %d", $1 }' /proc/net/netfilter/nfnetlink_queue)
	[ "$got" = "$want" ] || fail "bound:$got, want:$want"
	check_pins "$base" own own
	all=$(awk '/Cpus_allowed_list/ { print $2 }' "/proc/$NFQD_PID/status")
	reload_pin "$base" no
	check_pins "$base" "$all" -1
	reload_pin "$base" yes
	check_pins "$base" own own
	stop_nfqd
	log "queue-base $base: bound$got, each worker pinned, unpinned and pinned again by reloads"
}

check_auto 0
check_auto 8
log "ok: $ncpu CPUs"
