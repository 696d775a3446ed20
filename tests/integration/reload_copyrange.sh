#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload that lowers copy-range (issue 17 item 9), under a flood of
# 8000-byte UDP packets from namespace B to itself (output hook, lo):
# 1. packets the kernel queued with the old copy still wait in the socket
#    when the reload takes effect (the worker is slowed by strace, 20 ms
#    before each receive): nfqd's receive buffers must not cut them, so
#    none gets incomplete-verdict (copy-range 65531 -> 128);
# 2. the old policy must not judge packets copied with the new, smaller
#    range: from "udp dport 11 drop" with copy-range 65531 to "ip daddr
#    192.0.2.2 drop" with copy-range 20 (no UDP header in the copy), the
#    main thread waking 300 ms late from each of its waits, no packet is
#    incomplete, and none passes (incomplete-verdict is accept here).
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd iptables nft strace
in_b iptables -A OUTPUT -o lo -p udp --dport 11 -j NFQUEUE --queue-num 0
in_b nft -f - <<'NFT' || fail "nft counter"
table inet seen {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 11 counter drop
	}
}
NFT
passed() {
	in_b nft list chain inet seen in | awk '/dport 11 counter/ { for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'
}
write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF
options {
	queues 1;
	copy-range $1;
	queue-maxlen 65536;
	rcvbuf 256M;
	incomplete-verdict accept;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook output {
	$2
}
EOF
}
ctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }
stat() {
	ctl -j stats | python3 -c "import json,sys; print(json.load(sys.stdin)['queues'][0]['$1'])"
}

# Flood port 11 with $1 packets at $2 per second, reload once $3 are
# judged (with "$4" the thread to slow and how), wait for all. Sets
# during (judged during the reload), inc (incomplete-verdicts), pass.
reload_under_flood() {
	local n0 n1 inc0 pass0 gen sp end
	n0=$(stat packets)
	inc0=$(stat incomplete)
	pass0=$(passed)
	in_b "$TOP_BUILDDIR/tests/bench/nfqd-gen" -q -d 192.0.2.2 -n "$1" -p 11 -s 8000 -r "$2" &
	gen=$!
	bg_pid $gen
	end=$(deadline "$WAIT_SECONDS")
	while [ "$(stat packets)" -le $((n0 + $3)) ] && before "$end"; do
		sleep 0.01
	done
	# shellcheck disable=SC2086
	strace -qq -p $4 -o /dev/null &
	sp=$!
	bg_pid $sp
	wait_traced "${4%% *}"
	n1=$(stat packets)
	ctl reload >/dev/null || fail "reload failed: $(tail -3 "$TMP/nfqd.log")"
	during=$(( $(stat packets) - n1 ))
	kill -INT $sp
	wait $sp 2>/dev/null
	wait $gen || fail "flood generator failed"
	end=$(deadline 60)
	while before "$end"; do
		[ "$(stat packets)" -ge $((n0 + $1)) ] && [ "$(kqueue_field "$NS_B" 0 3)" = 0 ] && break
		sleep 0.05
	done
	[ "$(stat packets)" -ge $((n0 + $1)) ] || fail "judged $(( $(stat packets) - n0 )) of $1"
	inc=$(( $(stat incomplete) - inc0 ))
	pass=$(( $(passed) - pass0 ))
	[ "$during" -gt 0 ] || fail "no packet was judged during the reload: the test saw nothing"
}

# The flood lasts 6 s, so that it still runs when the reload comes on a
# loaded machine (waiting for strace to attach can take seconds there).
FLOOD=12000
write_conf 65531 "udp dport 11 accept;"
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
worker=""
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	for t in /proc/$NFQD_PID/task/*; do
		[ "$(cat "$t/comm")" = nfqd-q0 ] && worker=${t##*/}
	done
	[ -n "$worker" ] && break
	sleep 0.05
done
[ -n "$worker" ] || fail "no worker thread"

write_conf 128 "udp dport 11 accept;"
reload_under_flood $FLOOD 2000 200 \
	"$worker -e trace=recvmmsg -e inject=recvmmsg:delay_enter=20000"
log "copy-range 65531 -> 128: $during packets judged during the reload, $inc incomplete, $pass of $FLOOD passed"
[ "$(kqueue_field "$NS_B" 0 5)" = 128 ] || fail "copy-range not lowered: $(kqueue_line "$NS_B" 0)"
[ "$inc" = 0 ] || fail "$inc packets queued with the old copy range were cut"
[ "$pass" = "$FLOOD" ] || fail "$pass of $FLOOD passed"

write_conf 65531 "udp dport 11 drop;"
ctl reload >/dev/null || fail "reload back to copy-range 65531 failed"
write_conf 20 "ip daddr 192.0.2.2 drop;"
reload_under_flood $FLOOD 2000 200 \
	"$NFQD_PID -e trace=clock_nanosleep,nanosleep -e inject=clock_nanosleep,nanosleep:delay_exit=300000"
log "copy-range 65531 -> 20 with a new policy: $during packets judged during the reload, $inc incomplete, $pass of $FLOOD passed"
[ "$(kqueue_field "$NS_B" 0 5)" = 20 ] || fail "copy-range not lowered: $(kqueue_line "$NS_B" 0)"
[ "$inc" = 0 ] || fail "$inc packets judged by the old policy with the new copy range"
[ "$pass" = 0 ] || fail "$pass packets passed"
[ "$(kqueue_field "$NS_B" 0 6)" = 0 ] || fail "queue_dropped: the flood overflowed the queue"
[ "$(kqueue_field "$NS_B" 0 7)" = 0 ] || fail "user_dropped: the flood overflowed the socket"
stop_nfqd
log "ok: lowering copy-range cut no queued packet and the old policy never saw the smaller copy"
