#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 100 reloads alternating between two policies under a sustained flood:
# every packet gets the verdict of exactly one of the two policies (policy
# 1 marks port 9 with 0x1, policy 2 with 0x2, both drop port 10), nfqd
# loses nothing (kernel queue_dropped/user_dropped stay 0), a bad file is
# refused while the running policy stays, and memory does not grow from
# reload to reload.
# The test needs CPU for nfqd: on a loaded machine a worker can go
# without it for seconds while the flood goes on. Each queue has room
# for every packet the flood sends it: the flood is 120,000 packets, about
# 60,000 a queue, and a queue holds at most 65536 packets on kernels that keep a hash of
# queued ids (6.18.44 here: with queue-maxlen 262144 it held 65536 and
# counted the rest in queue_dropped, logging "hash insert failed: -7");
# rcvbuf 128M holds their messages (about 1 KiB each, kernel memory only
# while a worker is starved). So a starved worker delays packets but loses
# none: what is checked is that nfqd loses nothing and judges each packet
# by one policy, not its speed. (A flood of 500,000 with queue-maxlen
# 262144 lost 131,598 packets on queue 0 in a loaded make check.)
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd iptables nft
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-balance 0:1
in_b nft -f - <<'NFT' || fail "nft sink"
table inet sink {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 9 meta mark 0x1 counter drop
		udp dport 9 meta mark 0x2 counter drop
		meta l4proto udp counter drop
	}
}
NFT
srcs=$(add_sources)

write_conf() {
	{ flood_options 2 65536 128M; cat; } >"$TMP/nfqd.conf.new" <<EOF
hook input {
	udp dport 9 mark set $1 accept;
	udp dport 10 drop;
}
EOF
	mv "$TMP/nfqd.conf.new" "$TMP/nfqd.conf"
}

# Counter N (1: mark 0x1, 2: mark 0x2, 3: anything else) of the sink.
sink_counter() {
	in_b nft list chain inet sink in | awk -v n="$1" '/counter/ {
		c++; for (i = 1; i <= NF; i++) if ($i == "packets" && c == n) print $(i + 1)
	}'
}

rss_kib() { awk '/VmRSS/ { print $2 }' "/proc/$NFQD_PID/status"; }

write_conf 0x1
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0 1
ctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }

# A sanitizer build checks memory and races, not speed: nfqd under ASan
# is a few times slower, under TSan ten times or more, and the same
# flood would overflow the queue. The rate (and count: the same
# duration) is divided by $slow there; the reloads are the same.
case ${SAN_MODE:-none} in
asan) slow=4 ;;
tsan) slow=20 ;;
*) slow=1 ;;
esac
[ $slow -eq 1 ] || log "$SAN_MODE build: the flood at 1/$slow of the rate"
n9=$((100000 / slow))
n10=$((20000 / slow))
gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
ip netns exec "$NS_A" "$gen" -q -d 192.0.2.2 -n $n9 -p 9 -S "$srcs" -r $((20000 / slow)) &
g1=$!
ip netns exec "$NS_A" "$gen" -q -d 192.0.2.2 -n $n10 -p 10 -S "$srcs" -r $((4000 / slow)) &
g2=$!
bg_pid "$g1 $g2"

for i in $(seq 1 100); do
	if [ $((i % 2)) -eq 1 ]; then write_conf 0x2; else write_conf 0x1; fi
	if [ $((i % 4)) -eq 0 ]; then
		kill -HUP "$NFQD_PID"
	else
		ctl reload >/dev/null || fail "reload $i failed"
	fi
	[ $i -eq 20 ] && rss20=$(rss_kib)
	if [ $i -eq 50 ]; then
		# A broken file is refused; the running policy stays.
		echo "hook input { udp dport 9 acept; }" >"$TMP/nfqd.conf"
		out=$(ctl reload 2>&1) && fail "a bad config was accepted"
		echo "$out" | grep -q "nfqd.conf:1:" || fail "no location in: $out"
		write_conf 0x1
		ctl reload >/dev/null || fail "reload after a bad file failed"
	fi
	sleep 0.02
done
rss100=$(rss_kib)
wait "$g1" || fail "generator (port 9) could not send everything"
wait "$g2" || fail "generator (port 10) could not send everything"
# nfqd may still be working through a backlog on a busy machine: wait
# (60 s at most) until both kernel queues are empty and the sink's
# counters stop moving.
last=
end=$(deadline 60)
while before "$end"; do
	now="$(kqueue_field "$NS_B" 0 3) $(kqueue_field "$NS_B" 1 3) $(sink_counter 1) $(sink_counter 2) $(sink_counter 3)"
	case $now in "0 0 "*) [ "$now" = "$last" ] && break ;; esac
	last=$now
	sleep 0.1
done

gen_now=$(ctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])')
# 100 reloads plus the one after the bad file; generation starts at 1.
[ "$gen_now" = 102 ] || fail "generation $gen_now, want 102"

m1=$(sink_counter 1)
m2=$(sink_counter 2)
other=$(sink_counter 3)
log "port 9: $m1 marked by policy 1, $m2 by policy 2; other: $other"
log "kernel: $(kqueue_line "$NS_B" 0) / $(kqueue_line "$NS_B" 1)"
[ "$m1" -gt 0 ] && [ "$m2" -gt 0 ] || fail "one policy never judged"
[ $((m1 + m2)) -eq $n9 ] || fail "port 9: $((m1 + m2)) of $n9 arrived marked"
[ "$other" -eq 0 ] || fail "$other packets passed with neither policy's verdict"
for q in 0 1; do
	[ "$(kqueue_field "$NS_B" $q 6)" = 0 ] || fail "queue $q: queue_dropped"
	[ "$(kqueue_field "$NS_B" $q 7)" = 0 ] || fail "queue $q: user_dropped"
done
log "RSS after reload 20: $rss20 KiB, after reload 100: $rss100 KiB"
# ASan keeps freed blocks in quarantine and TSan its shadow: RSS grows
# by design there; LeakSanitizer checks for leaks in the ASan build.
if [ "${SAN_MODE:-none}" = none ]; then
	[ $((rss100 - rss20)) -le 1024 ] \
		|| fail "memory grew by $((rss100 - rss20)) KiB over 80 reloads"
else
	log "$SAN_MODE build: RSS growth not checked (the sanitizer's own memory)"
fi
stop_nfqd
[ "$(final_counter packets)" -eq $((n9 + n10)) ] \
	|| fail "nfqd received $(final_counter packets), want $((n9 + n10))"
[ "$(final_counter dropped)" -eq $n10 ] \
	|| fail "nfqd dropped $(final_counter dropped), want $n10"
log "ok: 101 reloads under load, nothing lost"
