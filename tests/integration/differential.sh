#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# differential.sh - nfqd's rule engine against nft itself: every rule of
# tests/diff/rules.txt is loaded into nfqd (pair A/B, via NFQUEUE) and into
# an nft chain (pair C/D); the same crafted probes go through both, and each
# probe must have the same fate (arrived or dropped) on both sides.
#
# Both pairs: X (peer) va/va2 <-> Y (judged host) vb/vb2.
#   va 192.0.2.1 2001:db8::1      vb 192.0.2.2 2001:db8::2
#   va2 192.0.3.1 2001:db8:ff::1  vb2 192.0.3.2 2001:db8:ff::2
# Marks come from an nft table on the judged host that maps the probe's
# TTL to a mark (33 -> 0x1, 34 -> 0x11, 35 -> 0x40000001), before either
# engine looks at the packet.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"

NS_C="nfqd-$$-c"
NS_D="nfqd-$$-d"
RULES="$TOP_SRCDIR/tests/diff/rules.txt"
PROBE="$TOP_SRCDIR/tests/diff/probe.py"

diff_cleanup() {
	local rc=$?
	ip netns del "$NS_C" 2>/dev/null
	ip netns del "$NS_D" 2>/dev/null
	(exit $rc)
	cleanup
}
trap diff_cleanup EXIT

# pair_setup X Y: the topology above.
pair_setup() {
	local x=$1 y=$2 ns dev
	ip netns add "$x" || fail "netns add $x"
	ip netns add "$y" || fail "netns add $y"
	ip link add va netns "$x" type veth peer name vb netns "$y" || fail veth
	ip link add va2 netns "$x" type veth peer name vb2 netns "$y" ||
		fail veth
	for ns in "$x" "$y"; do
		ip netns exec "$ns" ip link set lo up
		for dev in all default; do
			ip netns exec "$ns" sysctl -qw \
				net.ipv4.conf.$dev.rp_filter=0
		done
	done
	ip -n "$x" addr add 192.0.2.1/24 dev va
	ip -n "$x" addr add 192.0.3.1/24 dev va2
	ip -n "$x" addr add 2001:db8::1/64 dev va nodad
	ip -n "$x" addr add 2001:db8:ff::1/64 dev va2 nodad
	ip -n "$y" addr add 192.0.2.2/24 dev vb
	ip -n "$y" addr add 192.0.3.2/24 dev vb2
	ip -n "$y" addr add 2001:db8::2/64 dev vb nodad
	ip -n "$y" addr add 2001:db8:ff::2/64 dev vb2 nodad
	for dev in va va2; do
		ip -n "$x" link set "$dev" up
		ip netns exec "$x" sysctl -qw net.ipv4.conf.$dev.rp_filter=0
	done
	for dev in vb vb2; do
		ip -n "$y" link set "$dev" up
		ip netns exec "$y" sysctl -qw net.ipv4.conf.$dev.rp_filter=0
	done
	neigh "$x" va "$y" vb 192.0.2.2 2001:db8::2
	neigh "$x" va2 "$y" vb2 192.0.3.2 2001:db8:ff::2
	neigh "$y" vb "$x" va 192.0.2.1 2001:db8::1
	neigh "$y" vb2 "$x" va2 192.0.3.1 2001:db8:ff::1
	ip -n "$x" route add default via 192.0.2.2 dev va
	ip -n "$x" route add default via 192.0.3.2 dev va2 metric 100
	ip -n "$x" -6 route add default via 2001:db8::2 dev va
	ip -n "$x" -6 route add default via 2001:db8:ff::2 dev va2 metric 100
	ip -n "$y" route add default via 192.0.2.1 dev vb
	ip -n "$y" route add default via 192.0.3.1 dev vb2 metric 100
	ip -n "$y" -6 route add default via 2001:db8::1 dev vb
	ip -n "$y" -6 route add default via 2001:db8:ff::1 dev vb2 metric 100
	premark "$y"
}

# neigh NS DEV PEERNS PEERDEV IP4 IP6: static neighbour entries, so no
# ARP/ND traffic goes through the engines under test.
neigh() {
	local mac
	mac=$(ip netns exec "$3" cat "/sys/class/net/$4/address")
	ip -n "$1" neigh replace "$5" lladdr "$mac" dev "$2" nud permanent
	ip -n "$1" -6 neigh replace "$6" lladdr "$mac" dev "$2" nud permanent
}

premark() {
	ip netns exec "$1" nft -f - <<'NFT' || fail "nft premark"
table inet premark {
	map ttl2mark {
		typeof ip ttl : meta mark
		elements = { 33 : 0x1, 34 : 0x11, 35 : 0x40000001 }
	}
	chain pre {
		type filter hook prerouting priority -300; policy accept;
		meta nfproto ipv4 meta mark set ip ttl map @ttl2mark
		meta nfproto ipv6 meta mark set ip6 hoplimit map @ttl2mark
	}
	chain out {
		type filter hook output priority -300; policy accept;
		meta nfproto ipv4 meta mark set ip ttl map @ttl2mark
		meta nfproto ipv6 meta mark set ip6 hoplimit map @ttl2mark
	}
}
NFT
}

# Receivers take any address of the probes' destination ranges
# (AnyIP); only the receiving side of the current direction may, or the
# senders would deliver their own probes to themselves.
local_routes() {
	local act=$1 ns=$2
	ip -n "$ns" route "$act" local 198.51.100.0/24 dev lo
	ip -n "$ns" -6 route "$act" local 2001:db8:1::/48 dev lo
}

direction() {
	[ "$1" = "${CUR_DIR:-}" ] && return 0
	if [ "$1" = in ]; then
		[ -n "${CUR_DIR:-}" ] && for ns in "$NS_A" "$NS_C"; do
			local_routes del "$ns"
		done
		for ns in "$NS_B" "$NS_D"; do local_routes add "$ns"; done
	else
		[ -n "${CUR_DIR:-}" ] && for ns in "$NS_B" "$NS_D"; do
			local_routes del "$ns"
		done
		for ns in "$NS_A" "$NS_C"; do local_routes add "$ns"; done
	fi
	CUR_DIR=$1
}

SETS_NFQD='
set blk4 { type ipv4_addr; flags interval; elements = { 10.9.0.0/16, 203.0.113.9 }; }
set blk6 { type ipv6_addr; flags interval; elements = { 2001:db8:5::/48, 2001:db9::1 }; }
set ports { type inet_service; flags interval; elements = { 22, 8000-8080 }; }
set ifs { type ifname; elements = { "vb2" }; }
set marks { type mark; elements = { 0x1, 0x11 }; }'

SETS_NFT='
	set blk4 { type ipv4_addr; flags interval; elements = { 10.9.0.0/16, 203.0.113.9 }; }
	set blk6 { type ipv6_addr; flags interval; elements = { 2001:db8:5::/48, 2001:db9::1 }; }
	set ports { type inet_service; flags interval; elements = { 22, 8000-8080 }; }
	set ifs { type ifname; elements = { "vb2" }; }
	set marks { type mark; elements = { 0x1, 0x11 }; }'

# nfqd's config with RULE (may be empty) in HOOK.
write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF
options {
	queues 1;
	stats-file "$TMP/stats";
	control-socket "$TMP/ctl.sock";
}
$SETS_NFQD
hook $1 {
	policy accept;
	${2:+$2 drop;}
}
EOF
}

# The reference: RULE (may be empty) in nft's chain of HOOK in NS_D.
ref_rule() {
	local chain=in
	[ "$1" = output ] && chain=out
	{
		echo "flush chain inet ref in"
		echo "flush chain inet ref out"
		[ -n "$2" ] && echo "add rule inet ref $chain $2 drop"
	} | in_d nft -f - || fail "nft rejected: $2"
}

in_d() { ip netns exec "$NS_D" "$@"; }

# pyenv-style shims cost a second per start; take the real thing.
PYTHON=${PYTHON:-python3}
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3

require_root
require_cmd nft iptables ip6tables python3 ip sysctl
[ -x "$NFQD" ] || skip "nfqd not built"
[ -x "$NFQD_CTL" ] || skip "nfqd-ctl not built"

pair_setup "$NS_A" "$NS_B"
pair_setup "$NS_C" "$NS_D"

# nfqd's side: everything on vb/vb2 goes to queue 0 (this kernel has
# xt_NFQUEUE but no nft queue expression).
for ipt in iptables ip6tables; do
	for dev in vb vb2; do
		in_b $ipt -A INPUT -i $dev -j NFQUEUE --queue-num 0 &&
			in_b $ipt -A OUTPUT -o $dev -j NFQUEUE --queue-num 0 ||
			fail "$ipt NFQUEUE rules"
	done
done
in_d nft -f - <<NFT || fail "nft reference table"
table inet ref {
$SETS_NFT
	chain in { type filter hook input priority 0; policy accept; }
	chain out { type filter hook output priority 0; policy accept; }
}
NFT

write_conf input ""
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0

# check_counter HOOK DROPS: nfqd's hit counter of the hook's only rule
# counts at least what nfqd dropped, plus at most a few strays (IPv6
# router solicitations, MLD reports) that the rule may also match.
check_counter() {
	local hits
	hits=$("$NFQD_CTL" -s "$TMP/ctl.sock" rules | awk -v h="$1" '
		$1 == "hook" { cur = $2 }
		cur == h ":" && $1 == "1" { print $2 }') ||
		fail "nfqd-ctl rules"
	[ "$hits" -ge "$2" ] && [ "$hits" -le $(($2 + 8)) ] ||
		fail "rule counter $hits, but nfqd dropped $2 probes"
}

# run_case HOOK NFQD_RULE NFT_RULE: 0 if both sides agree on every probe.
run_case() {
	local dir=in hook=$1 rule=$2
	[ "$1" = output ] && dir=out
	write_conf "$1" "$2"
	[ -n "${DIFF_DEBUG:-}" ] && date +%s.%N
	"$NFQD_CTL" -s "$TMP/ctl.sock" reload >"$TMP/reload.out" 2>&1 ||
		fail "nfqd reload of \"$2\": $(cat "$TMP/reload.out")"
	ref_rule "$1" "$3"
	direction "$dir"
	[ -n "${DIFF_DEBUG:-}" ] && date +%s.%N
	if [ $dir = in ]; then
		set -- "$NS_A" "$NS_B" "$NS_C" "$NS_D"
	else
		set -- "$NS_B" "$NS_A" "$NS_D" "$NS_C"
	fi
	"$PYTHON" "$PROBE" "$dir" "$@" >"$TMP/probe.out" ||
		fail "probe driver failed"
	[ -n "${DIFF_DEBUG:-}" ] && date +%s.%N
	grep -q '^summary' "$TMP/probe.out" || fail "probe driver output"
	MISMATCH=$(awk '$1 != "summary" && $2 != $3' "$TMP/probe.out")
	DROPS=$(awk '$1 != "summary" && $3 == 0' "$TMP/probe.out" | wc -l)
	[ -n "$rule" ] && check_counter "$hook" "$(awk '$1 != "summary" &&
		$2 == 0' "$TMP/probe.out" | wc -l)"
	if [ -n "$MISMATCH" ] && [ -n "${DIFF_HOLD:-}" ]; then
		log "holding for inspection: $NS_A $NS_B $TMP"
		sleep "$DIFF_HOLD"
	fi
	[ -z "$MISMATCH" ]
}

# Plumbing check: with no rule every probe arrives on both sides, in both
# directions; otherwise a disagreement would mean nothing.
for hook in input output; do
	run_case "$hook" "" "" || fail "baseline $hook: sides differ"
	[ "$DROPS" -eq 0 ] || {
		awk '$3 == 0 || $2 == 0' "$TMP/probe.out" | head >&2
		fail "baseline $hook: $DROPS probes lost without a rule"
	}
done

# Strip blanks around $1 without a fork per field.
trim() {
	local t=$1
	t=${t#"${t%%[! 	]*}"}
	t=${t%"${t##*[! 	]}"}
	printf '%s' "$t"
}

n=0
bad=0
total_drops=0
while IFS='|' read -r hook nrule frule; do
	hook=$(trim "$hook")
	case "$hook" in ''|'#'*) continue ;; esac
	nrule=$(trim "$nrule")
	frule=$(trim "$frule")
	[ -n "$frule" ] || frule=$nrule
	n=$((n + 1))
	if run_case "$hook" "$nrule" "$frule"; then
		log "ok   $hook: $nrule ($DROPS of 96 dropped)"
	else
		bad=$((bad + 1))
		log "FAIL $hook: $nrule (nfqd vs nft differ on):"
		echo "$MISMATCH" | head -n 8 | sed 's/^/#     /'
		if [ -n "${DIFF_DEBUG:-}" ]; then
			in_b "$NFQD_CTL" -s "$TMP/ctl.sock" stats
			in_b "$NFQD_CTL" -s "$TMP/ctl.sock" rules
			kqueue_line "$NS_B" 0
		fi
	fi
	total_drops=$((total_drops + DROPS))
done <<EOF
$(grep -e "${DIFF_FILTER:-.}" "$RULES")
EOF

# A match the kernel cannot feed (ct state: this kernel refuses conntrack
# attributes) must fail the reload, naming the rule, and keep the policy.
write_conf input "ct state new"
if "$NFQD_CTL" -s "$TMP/ctl.sock" reload >"$TMP/reload.out" 2>&1; then
	log "kernel accepts conntrack attributes: no refusal to check"
else
	grep -q "nfqd.conf:[0-9]*:[0-9]*" "$TMP/reload.out" || fail \
		"ct state refusal names no rule: $(cat "$TMP/reload.out")"
	log "ct state refused: $(head -n 1 "$TMP/reload.out")"
fi

[ -z "${DIFF_FILTER:-}" ] || exit 0
[ "$n" -gt 40 ] || fail "only $n rules in the corpus"
[ "$total_drops" -gt 0 ] || fail "no rule dropped anything"
[ "$bad" -eq 0 ] || fail "$bad of $n rules differ between nfqd and nft"
log "all $n rules agree with nft"
stop_nfqd
exit 0
