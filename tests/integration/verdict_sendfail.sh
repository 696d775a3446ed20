#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Verdict sends that fail are resent, and no batch verdict ever covers a
# packet decided otherwise: a flood through two queues, half of it to
# ports the policy drops, while a preloaded shim (sendfail_shim.c) makes
# the workers' verdict sends fail for 60 ms of every 300 (ENOBUFS, EPERM:
# longer than any immediate retry loop) or whenever they exceed a size
# (EMSGSIZE). No dropped port may reach the
# sink, every packet must be answered (nothing left in the kernel queue),
# and the sink must see exactly the packets nfqd accepted.
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd iptables nft cc
cc -shared -fPIC -O2 -o "$TMP/sendfail.so" \
	"$TOP_SRCDIR/tests/integration/sendfail_shim.c" -ldl -lpthread \
	|| fail "cannot build the preload shim"
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-balance 0:1
in_b nft -f - <<'NFT' || fail "nft sink"
table inet nfqdsink {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 9-40 counter drop
		udp dport 41-72 counter drop
	}
}
NFT
sink() {
	in_b nft list chain inet nfqdsink in |
		awk -v p="$1" '$0 ~ "dport " p " counter" { for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'
}
srcs=$(add_sources)

# The test needs CPU for nfqd (the shim slows its verdicts too): each
# queue has room for the whole flood of 60,000 (queue-maxlen 65536,
# rcvbuf 128M), however the hash spreads it and however long a loaded
# machine starves a worker; what is checked is the verdicts, not speed.
# (A queue holds at most 65536 packets on kernels that keep a hash of
# queued ids, whatever queue-maxlen says.)
conf=$({ flood_options 2 65536 128M; cat; } <<EOF | conf_file nfqd.conf
hook input {
	udp dport 9-40 drop;
	udp dport 41-72 accept;
}
EOF
)

# One run: $1 = label, the rest: environment for the shim.
run() {
	local label=$1 end settled=
	shift
	env LD_PRELOAD="$(san_preload "$TMP/sendfail.so")" "$@" \
		ip netns exec "$NS_B" "$NFQD" -c "$conf" >"$TMP/nfqd.log" 2>&1 &
	NFQD_PID=$!
	wait_bound "$NS_B" 0 1
	local d0 a0
	d0=$(sink 9-40)
	a0=$(sink 41-72)
	send_udp "$NS_A" 192.0.2.2 60000 -q -P 64 -S "$srcs" -r 60000
	# Every packet answered: nothing waits in either kernel queue, and
	# the sink stops moving.
	local prev=x cur
	end=$(deadline 60)
	while before "$end"; do
		cur="$(kqueue_field "$NS_B" 0 3) $(kqueue_field "$NS_B" 1 3) $(sink 41-72)"
		case $cur in "0 0 "*) [ "$cur" = "$prev" ] && settled=1 && break ;; esac
		prev=$cur
		sleep 0.2
	done
	[ -n "$settled" ] || fail "$label: packets still waiting in the kernel: $cur"
	local dropped_seen accepted_seen
	dropped_seen=$(( $(sink 9-40) - d0 ))
	accepted_seen=$(( $(sink 41-72) - a0 ))
	stop_nfqd
	grep "^sendfail:" "$TMP/nfqd.log" | while read -r line; do log "$label: $line"; done
	local failed packets accepted dropped
	failed=$(awk -F'failed=' '/^sendfail:/ { s += $2 } END { print s + 0 }' "$TMP/nfqd.log")
	packets=$(final_counter packets)
	accepted=$(final_counter accepted)
	dropped=$(final_counter dropped)
	log "$label: $failed sends failed; nfqd: $packets packets, $accepted accepted, $dropped dropped; sink: $accepted_seen accepted, $dropped_seen of the dropped ports"
	[ "$failed" -gt 0 ] || fail "$label: the shim failed no send"
	[ "$packets" -gt 30000 ] || fail "$label: too few packets judged ($packets)"
	[ "$dropped_seen" -eq 0 ] || fail "$label: $dropped_seen packets the policy drops reached the sink"
	[ $((accepted + dropped)) -eq "$packets" ] || fail "$label: $packets packets but $accepted + $dropped verdicts"
	[ "$accepted_seen" -eq "$accepted" ] || fail "$label: nfqd accepted $accepted, the sink saw $accepted_seen"
	if grep -q "messages lost" "$TMP/nfqd.log"; then
		fail "$label: verdict messages were lost"
	fi
	return 0
}

run enobufs SENDFAIL_PERIOD_MS=300 SENDFAIL_BURST_MS=60 SENDFAIL_ERRNO=105
run eperm SENDFAIL_PERIOD_MS=300 SENDFAIL_BURST_MS=60 SENDFAIL_ERRNO=1
# A socket that takes at most a few messages per send.
run emsgsize SENDFAIL_ABOVE=200
log "ok: failed verdict sends were resent; no dropped packet got through"
