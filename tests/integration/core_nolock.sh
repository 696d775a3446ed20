#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No lock and no system call on the packet path, checked under load:
# during a window of a flood through two queues and a policy with sets,
# ranges, marks, a log statement and an interface name, the worker threads
# call no pthread lock, semaphore, condition variable or allocator
# (nolock_shim.c, preloaded), make no futex system call, and no system
# call at all but the batch's receive and send, the event loop's wait and,
# for a batch that reads an interface name, one non-blocking read of the
# worker's own rtnetlink socket (strace on the workers): their log lines go
# through a ring the main thread writes out. That read is not a lock: the
# socket is the worker's alone, and it learns a rename the kernel
# acknowledged before the packets were queued (issue 17); when nothing
# came it is a single recvfrom(MSG_DONTWAIT) that fails with EAGAIN.
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
	udp dport 70 log prefix "seen " accept;
	iifname "vb" udp dport 71 accept;
	ip saddr 192.0.2.0/24 udp dport 9-72 counter accept;
}
EOF
)
LD_PRELOAD="$(san_preload "$TMP/nolock.so")" start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0 1
# Packets judged so far by queue $1, or by all queues without $1.
received() {
	in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" -j stats | python3 -c \
		'import json,sys; print(sum(q["packets"] for q in json.load(sys.stdin)["queues"] if len(sys.argv) < 2 or q["queue"] == int(sys.argv[1])))' "$@"
}
# Wait (120 s at most: strace and a busy machine slow the workers a lot)
# until both queues judged 10,000 more packets.
wait_both() {
	local b0 b1 end
	b0=$(received 0)
	b1=$(received 1)
	end=$(deadline 120)
	while before "$end"; do
		[ $(($(received 0) - b0)) -ge 10000 ] &&
			[ $(($(received 1) - b1)) -ge 10000 ] && return 0
		sleep 0.1
	done
	fail "not enough traffic through both queues in 120 s"
}

gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
# Runs until killed below, however long the windows take.
ip netns exec "$NS_A" "$gen" -q -d 192.0.2.2 -n 1000000000 -P 64 -S "$srcs" -r 200000 &
genpid=$!
bg_pid $genpid
end=$(deadline "$WAIT_SECONDS")
while [ "$(received)" -le 20000 ] && before "$end"; do
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
# Every system call of the workers during a second window.
strace -qq -yy -e signal=none -p "$(echo $workers | tr " " ,)" -o "$TMP/strace.all" 2>"$TMP/strace.err" &
strace_pid=$!
bg_pid $strace_pid
# shellcheck disable=SC2086
wait_traced $workers
wait_both
kill -INT "$strace_pid"
wait "$strace_pid" 2>/dev/null
after=$(received)
log "packets judged during the windows: $((after - before))"
[ $((after - before)) -gt 10000 ] || fail "too little traffic in the window"

# "TID name(args...": the calls by name ("<... name resumed>" lines are
# the second half of one already counted).
calls=$(sed -nE 's/^([0-9]+ +)?([a-z_0-9]+)\(.*/\2/p' "$TMP/strace.all" |
	sort | uniq -c | sort -rn)
log "worker system calls under strace: $(echo $calls)"
echo "$calls" | grep -q recvmmsg || fail "strace saw no recvmmsg: $(head -3 "$TMP/strace.all" "$TMP/strace.err" 2>&1)"
futexes=$(echo "$calls" | awk '$2 == "futex" { print $1 }')
log "futex calls by workers$workers under strace: ${futexes:-0}"
allowed="recvmmsg|sendmsg|sendto|epoll_wait|restart_syscall|recvfrom"
# recvfrom only on a NETLINK_ROUTE socket, never waiting. strace names
# the socket's inode (nfqd's namespace is not its own); the namespace's
# netlink table gives the inode's protocol (0: NETLINK_ROUTE).
# A call another thread interrupted is split in two lines: joined first.
# A call strace was detached in the middle of shows no arguments past the
# socket ("<detached ...>"): it tells nothing, and is left out.
reads=$(awk '/ <detached \.\.\.>$/ { next }
	/ <unfinished \.\.\.>$/ { sub(/ <unfinished \.\.\.>$/, ""); part[$1] = $0; next }
	match($0, /<\.\.\. [a-z_0-9]+ resumed>/) { $0 = part[$1] substr($0, RSTART + RLENGTH) }
	{ print }' "$TMP/strace.all" | grep -E "^([0-9]+ +)?recvfrom\(" || true)
link_reads=$(echo "$reads" | grep -c . || true)
# The buffer is an address when nothing came (EAGAIN) and the decoded
# message when a link message did (a change of vb's state can come at
# any time): the flags are found after it, before the address argument.
bad_reads=$(echo "$reads" | grep -vE "^([0-9]+ +)?recvfrom\([0-9]+<NETLINK:\[[^]]*\]>, .*, [0-9]+, [A-Z_|]*MSG_DONTWAIT[A-Z_|]*, " || true)
for inode in $(echo "$reads" | sed -nE 's/.*<NETLINK:\[([^]]*:)?([0-9]+)\]>.*/\2/p' | sort -u); do
	proto=$(awk -v i="$inode" '$10 == i { print $2 }' "/proc/$NFQD_PID/net/netlink")
	[ "$proto" = 0 ] ||
		bad_reads="$bad_reads socket $inode is netlink protocol '$proto', not NETLINK_ROUTE"
done
log "rtnetlink reads by workers under strace: $link_reads"
[ "$link_reads" -gt 0 ] || fail "no worker read its rtnetlink socket, though a rule reads an interface name"
[ -z "$bad_reads" ] || fail "a worker's recvfrom was not a non-blocking read of its rtnetlink socket: $(echo "$bad_reads" | head -3)"
others=$(echo "$calls" | grep -vE " ($allowed)$" || true)
[ -z "$others" ] || fail "workers made other system calls: $(echo $others); e.g. $(grep -vE "^([0-9]+ +)?($allowed)\(|resumed>" "$TMP/strace.all" | head -3)"

kill "$genpid" 2>/dev/null
stop_nfqd
grep -q "seen hook input rule" "$TMP/nfqd.log" || fail "the log statement logged nothing"
grep "^nolock:" "$TMP/nfqd.log" | while read -r line; do log "$line"; done
seen=$(grep -c "^nolock: nfqd-q.*recvmmsg=[1-9]" "$TMP/nfqd.log" || true)
[ "$seen" -eq 2 ] || fail "the shim did not see both workers receive"
bad=$(grep "^nolock:" "$TMP/nfqd.log" | sed 's/ recvmmsg=[0-9]*//' | grep -E "=[1-9]" || true)
[ -z "$bad" ] || fail "lock or allocation on the packet path: $bad"
log "ok: no lock, allocation or system call but receive, send and wait on the packet path under load"
