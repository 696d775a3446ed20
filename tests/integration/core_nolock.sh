#!/bin/bash
# No lock on the packet path, checked under load: during a window of a
# flood through two queues and a policy with sets, ranges and marks, the
# worker threads call no pthread lock, semaphore, condition variable or
# allocator (nolock_shim.c, preloaded), and make no futex system call
# (strace on the workers).
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables cc strace
cc -shared -fPIC -O2 -o "$TMP/nolock.so" "$TOP_SRCDIR/tests/integration/nolock_shim.c" -ldl \
	|| fail "cannot build the preload shim"
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-balance 0:1
srcs=$(add_sources)

conf=$({ flood_options; cat; } <<EOF | conf_file nfqd.conf
set nets {
	type ipv4_addr;
	flags interval;
	elements = { 198.51.100.0/24, 203.0.113.9 };
}
hook input {
	ip saddr @nets drop;
	udp dport { 23, 2323 } drop;
	udp dport 5000-5100 mark set 0x10 accept;
	ip saddr 192.0.2.0/24 udp dport 9-72 counter accept;
}
EOF
)
LD_PRELOAD="$TMP/nolock.so" start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0 1
# Packets judged so far by queue $1, or by all queues without $1.
received() {
	in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" -j stats | python3 -c \
		'import json,sys; print(sum(q["packets"] for q in json.load(sys.stdin)["queues"] if len(sys.argv) < 2 or q["queue"] == int(sys.argv[1])))' "$@"
}
# Wait (30 s at most) until both queues judged 10,000 more packets.
wait_both() {
	local b0 b1 i
	b0=$(received 0)
	b1=$(received 1)
	for i in $(seq 1 300); do
		[ $(($(received 0) - b0)) -ge 10000 ] &&
			[ $(($(received 1) - b1)) -ge 10000 ] && return 0
		sleep 0.1
	done
	fail "not enough traffic through both queues"
}

gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
in_a "$gen" -q -d 192.0.2.2 -n 3000000 -P 64 -S "$srcs" -r 200000 &
genpid=$!
bg_pid $genpid
for i in $(seq 1 100); do
	[ "$(received)" -gt 20000 ] && break
	sleep 0.05
done

workers=""
for t in /proc/$NFQD_PID/task/*; do
	case $(cat "$t/comm") in nfqd-q*) workers="$workers ${t##*/}" ;; esac
done
[ -n "$workers" ] || fail "no worker threads found"

before=$(received)
kill -USR1 "$NFQD_PID"
wait_both
kill -USR2 "$NFQD_PID"
strace -f -p "$NFQD_PID" -e trace=futex -o "$TMP/strace.out" 2>/dev/null &
strace_pid=$!
bg_pid $strace_pid
sleep 0.5
wait_both
kill -INT "$strace_pid"
wait "$strace_pid" 2>/dev/null
after=$(received)
kill "$genpid" 2>/dev/null
log "packets judged during the windows: $((after - before))"
[ $((after - before)) -gt 10000 ] || fail "too little traffic in the window"

futexes=0
for tid in $workers; do
	n=$(grep -c "^$tid " "$TMP/strace.out" || true)
	futexes=$((futexes + n))
done
log "futex calls by workers$workers under strace: $futexes"
[ "$futexes" -eq 0 ] || fail "workers made $futexes futex calls: $(grep -E "^($(echo $workers | tr ' ' '|')) " "$TMP/strace.out" | head -3)"

stop_nfqd
grep "^nolock:" "$TMP/nfqd.log" | while read -r line; do log "$line"; done
seen=$(grep -c "^nolock: nfqd-q.*recvmmsg=[1-9]" "$TMP/nfqd.log" || true)
[ "$seen" -eq 2 ] || fail "the shim did not see both workers receive"
bad=$(grep "^nolock:" "$TMP/nfqd.log" | sed 's/ recvmmsg=[0-9]*//' | grep -E "=[1-9]" || true)
[ -z "$bad" ] || fail "lock or allocation on the packet path: $bad"
log "ok: no lock, allocation or futex on the packet path under load"
