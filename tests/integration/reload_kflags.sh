#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload that adds a rule needing a new kernel flag (meta skuid needs
# NFQA_CFG_F_UID_GID) publishes the new policy only after the kernel has
# acknowledged the flag on every queue: once "nfqd-ctl reload" returns,
# every locally generated packet carries its uid and "meta skuid 0 drop"
# drops it. The window is widened by making the worker wake 1.6 s late
# (strace), and the packets are sent at once after the reload returned.
# A slow worker is no failure: the worker needs two wakes for the
# reconfigure (the request, then the kernel's ACK), 3.2 s here, and the
# reload waits for it (a reload gave up after 3 s and failed with
# "Connection timed out" before).
# A reload that adds the flag, whose new queue configuration the kernel
# (here: strace, failing the worker's next sendto) refuses, fails and
# keeps the running policy.
# A reload that removes the last rule needing a flag drops the flag only
# after the new policy is published and every worker has left the old
# one. Under a flood from uid 0 to port 11, with the main thread waking
# 300 ms late from each of its waits (strace), a reload from "meta skuid
# 0 drop" to "udp dport 11 drop" lets no packet through: none is judged
# by the old rule without its uid (ABSENT: the rule would not match and
# the packet would be accepted). Where the kernel has conntrack
# attributes, the same for the last "ct state" rule: no packet gets
# incomplete-verdict.
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd iptables nft strace
in_b iptables -A OUTPUT -p udp -d 192.0.2.1 -j NFQUEUE --queue-num 0
in_a nft -f - <<'NFT' || fail "nft sink"
table inet sink {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 11 counter drop
	}
}
NFT
burst_seen() {
	in_a nft list chain inet sink in | awk '/dport 11 counter/ { for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'
}
write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF
options {
	queues 1;
	incomplete-verdict accept;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook output {
	$1
	udp dport 9-11 accept;
}
EOF
}
ctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }
generation() {
	ctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])'
}
judged() { stat packets; }
stat() {
	ctl -j stats | python3 -c "import json,sys; print(json.load(sys.stdin)['queues'][0]['$1'])"
}
# Send $1 packets to port 11 from B (uid 0) and wait until nfqd judged
# them all (with $2: only wait, $2 judged before they were sent).
burst() {
	local n0=${2:-} end
	if [ -z "$n0" ]; then
		n0=$(judged)
		send_udp "$NS_B" 192.0.2.1 "$1" -p 11
	fi
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ "$(judged)" -ge $((n0 + $1)) ] && [ "$(kqueue_field "$NS_B" 0 3)" = 0 ] && return 0
		sleep 0.05
	done
	fail "burst not judged: $(judged) of $((n0 + $1))"
}

write_conf ""
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
worker=""
# The worker is named once it started, after the queue was bound.
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	for t in /proc/$NFQD_PID/task/*; do
		[ "$(cat "$t/comm")" = nfqd-q0 ] && worker=${t##*/}
	done
	[ -n "$worker" ] && break
	sleep 0.05
done
[ -n "$worker" ] || fail "no worker thread"
burst 5
[ "$(burst_seen)" = 5 ] || fail "packets did not pass before the reload: $(burst_seen)"

# The worker wakes 1.6 s late from every wait of its loop (offline for
# RCU meanwhile, so no grace period waits for it).
strace -qq -p "$worker" -e trace=epoll_wait \
	-e inject=epoll_wait:delay_exit=1600000 -o /dev/null &
strace_pid=$!
bg_pid $strace_pid
wait_traced "$worker"
write_conf "meta skuid 0 drop;"
before=$(burst_seen)
n0=$(judged)
# The packets leave as soon as the reload returns.
in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" reload >/dev/null &&
	in_b "$TOP_BUILDDIR/tests/bench/nfqd-gen" -q -d 192.0.2.1 -n 20 -p 11 ||
	fail "reload failed: $(tail -3 "$TMP/nfqd.log")"
burst 20 "$n0"
seen=$(( $(burst_seen) - before ))
log "after the reload returned: $seen of 20 packets from uid 0 passed"
[ "$seen" -eq 0 ] || fail "$seen packets from uid 0 passed after the reload with meta skuid 0 drop"
kill -INT $strace_pid
wait $strace_pid 2>/dev/null

# Removing the rule needs nothing from the kernel before the switch.
write_conf ""
ctl reload >/dev/null || fail "reload removing meta skuid failed"
before=$(burst_seen)
burst 10
[ "$(burst_seen)" = $((before + 10)) ] || fail "the policy without skuid does not pass packets"

# The kernel refuses the next queue configuration, the one adding the
# flag back: the reload fails, the generation and the policy stay.
gen=$(generation)
strace -qq -p "$worker" -e trace=sendto -e inject=sendto:error=EPERM:when=1 \
	-o /dev/null &
strace_pid=$!
bg_pid $strace_pid
wait_traced "$worker"
write_conf "meta skuid 0 drop;"
out=$(ctl reload 2>&1) && fail "a reload the kernel refused succeeded: $out"
log "refused: $out"
kill -INT $strace_pid
wait $strace_pid 2>/dev/null
[ "$(generation)" = "$gen" ] || fail "generation $(generation) after a failed reload, want $gen"
before=$(burst_seen)
burst 10
[ "$(burst_seen)" = $((before + 10)) ] || fail "the running policy was not kept after a failed reload"
ctl reload >/dev/null || fail "reload after the refused one failed"
burst 10
[ "$(burst_seen)" = $((before + 10)) ] || fail "the policy with skuid does not drop"

# Reload from the running policy to one whose rule is $1, under a flood
# to port 11 and with the main thread's waits 300 ms late. Sets
# during_reload (packets judged while the reload ran), passed (sink
# count) and incomplete (incomplete-verdicts).
reload_under_flood() {
	local n0 n1 n2 inc0 seen0 gen i
	inc0=$(stat incomplete)
	seen0=$(burst_seen)
	n0=$(judged)
	in_b "$TOP_BUILDDIR/tests/bench/nfqd-gen" -q -d 192.0.2.1 -n 6000 -p 11 -r 3000 &
	gen=$!
	bg_pid $gen
	end=$(deadline "$WAIT_SECONDS")
	while [ "$(judged)" -le $((n0 + 200)) ] && before "$end"; do
		sleep 0.01
	done
	strace -qq -p "$NFQD_PID" -e trace=clock_nanosleep,nanosleep \
		-e inject=clock_nanosleep,nanosleep:delay_exit=300000 -o /dev/null &
	strace_pid=$!
	bg_pid $strace_pid
	wait_traced "$NFQD_PID"
	write_conf "$1"
	n1=$(judged)
	ctl reload >/dev/null || fail "reload to \"$1\" failed"
	n2=$(judged)
	kill -INT $strace_pid
	wait $strace_pid 2>/dev/null
	wait $gen || fail "flood generator failed"
	burst 0 "$n0"
	during_reload=$((n2 - n1))
	passed=$(( $(burst_seen) - seen0 ))
	incomplete=$(( $(stat incomplete) - inc0 ))
	[ $during_reload -gt 0 ] || fail "no packet was judged during the reload: the test saw nothing"
}

reload_under_flood "udp dport 11 drop;"
log "meta skuid removed under a flood: $during_reload packets judged during the reload, $passed of 6000 passed"
[ "$passed" = 0 ] || fail "$passed packets from uid 0 judged by the old meta skuid rule without their uid"
[ "$(kqueue_field "$NS_B" 0 6)" = 0 ] || fail "queue_dropped: the flood overflowed the queue"

write_conf "ct state established,related accept; udp dport 11 drop;"
if ctl reload >"$TMP/ct.out" 2>&1; then
	reload_under_flood "udp dport 11 drop;"
	log "ct state removed under a flood: $during_reload packets judged during the reload, $incomplete given incomplete-verdict"
	[ "$incomplete" = 0 ] || fail "$incomplete packets judged by the old ct state rule without conntrack attributes"
elif grep -q "does not provide" "$TMP/ct.out"; then
	log "this kernel has no NFQUEUE conntrack attributes: ct state part not run"
else
	fail "reload adding ct state failed: $(cat "$TMP/ct.out")"
fi
stop_nfqd
log "ok: the new policy waited for the kernel's flags; a refused reload changed nothing"
