#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# limit_diff.sh - nfqd's "limit" against nft's own: the same rule with the
# same rate and burst in nfqd (UDP port 9, through NFQUEUE) and in an nft
# chain (UDP port 10), the same back-to-back burst of datagrams through
# each; both must accept the same number, within one packet (the two
# buckets start and refill at slightly different moments) plus the tokens
# the rate earns while a burst is sent and judged: nft counts a packet as
# it arrives, nfqd when it judges it, and on a loaded machine nfqd may
# judge a burst over a second or more (a worker waiting for a CPU), in
# which "limit rate 100/second" would earn 100 tokens more. That is the
# machine's speed, not a difference of the limits; the rates per second
# here are 1/second, so that the allowance stays a packet or two.
#
# Each case is "RULE | NFT RULE | SEND": RULE goes into nfqd's input hook
# (policy drop), the nft rule (the same text when empty) into an nft
# chain "udp dport 10 RULE; udp dport 10 drop". SEND is a list of
# "COUNT FAMILY" bursts sent one after the other to both sides.
#
# Also: a limit before an IPv4-only match takes a token for each IPv6
# packet too, as in nft's inet table (matches are evaluated left to
# right); "limit ... per KEY" against nft's per-element limit in a
# dynamic set; and a burst of 0, which nft refuses, is refused by nfqd.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"

require_root
require_cmd nft iptables ip6tables
[ -x "$NFQD" ] || skip "nfqd not built"
[ -x "$NFQD_CTL" ] || skip "nfqd-ctl not built"
ns_setup

for ipt in iptables ip6tables; do
	in_b $ipt -A INPUT -p udp --dport 9 -j NFQUEUE --queue-num 0 ||
		fail "$ipt NFQUEUE rule"
done
# After both engines: count what they accepted, and drop it.
in_b nft -f - <<'NFT' || fail "nft sink"
table inet sink {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 9 counter drop
		udp dport 10 counter drop
	}
}
table inet ref {
	set m1 { type ipv4_addr; flags dynamic; }
	set m2 { type ipv4_addr; flags dynamic; }
	set m3 { type ipv6_addr; flags dynamic; }
	chain in { type filter hook input priority 0; policy accept; }
}
NFT

write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF
options {
	queues 1;
	stats-file "$TMP/stats";
	control-socket "$TMP/ctl.sock";
}
hook input {
	policy drop;
	$1;
}
EOF
}

write_conf "accept"
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
end=$(deadline "$WAIT_SECONDS")
while [ ! -S "$TMP/ctl.sock" ] && before "$end"; do
	sleep 0.05
done
[ -S "$TMP/ctl.sock" ] || fail "no control socket after $WAIT_SECONDS s"

# Packets the sink counted for UDP port $1 (what its engine accepted).
sink_count() {
	in_b nft list chain inet sink in | awk -v p="dport $1 " '
		index($0, p) { for (i = 1; i <= NF; i++)
			if ($i == "packets") print $(i + 1) }'
}

# Packets the nft reference judged (its two rules' counters together).
ref_judged() {
	in_b nft list chain inet ref in | awk '
		{ for (i = 1; i <= NF; i++) if ($i == "packets") s += $(i + 1) }
		END { print s + 0 }'
}

# Packets nfqd judged in the input hook (its rule, and its policy).
nfqd_judged() {
	"$NFQD_CTL" -s "$TMP/ctl.sock" rules | awk '
		$1 == "hook" && $2 == "input:" { s += $5 }
		$1 == "hook" { cur = $2 }
		cur == "input:" && $1 ~ /^[0-9]+$/ { s += $2 }
		END { print s + 0 }'
}

# Poll until command $1 prints $2 ($WAIT_SECONDS s at most).
wait_for() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ "$($1)" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "$1: $($1) of $2 packets judged after $WAIT_SECONDS s"
}

# send PORT SEND: the bursts of SEND to UDP port PORT; print the total.
send() {
	local port=$1 total=0 n fam
	shift
	while [ $# -ge 2 ]; do
		n=$1 fam=$2
		shift 2
		if [ "$fam" = 6 ]; then
			send_udp "$NS_A" 2001:db8::2 "$n" -6 -p "$port" -q
		else
			send_udp "$NS_A" 192.0.2.2 "$n" -p "$port" -q
		fi
		total=$((total + n))
	done
	echo "$total"
}

# Milliseconds since the epoch.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The tokens the limit of rule $1 earns in $2 ms (0 for a rule without a
# rate; rounded down).
earned() {
	local rate per ms
	rate=$(echo "$1" | sed -n 's|.*rate \(over \)\{0,1\}\([0-9]*\)/\([a-z]*\).*|\2 \3|p')
	[ -n "$rate" ] || { echo 0; return; }
	per=${rate#* }
	case $per in
	second) ms=1000 ;;
	minute) ms=60000 ;;
	hour) ms=3600000 ;;
	day) ms=86400000 ;;
	week) ms=604800000 ;;
	*) fail "no unit in: $1" ;;
	esac
	echo $((${rate% *} * $2 / ms))
}

n=0
bad=0
# run_case NFQD_RULE NFT_RULE SEND
run_case() {
	local rule=$1 nrule=${2:-$1} total a9 a10 b9 b10 t0 t1 t2 slack
	write_conf "$rule"
	n=$((n + 1))
	if ! "$NFQD_CTL" -s "$TMP/ctl.sock" reload >"$TMP/reload.out" 2>&1
	then
		log "FAIL $rule: nfqd refused it: $(head -n 1 "$TMP/reload.out")"
		bad=$((bad + 1))
		LAST_NFT=0
		return
	fi
	printf 'flush chain inet ref in\nadd rule inet ref in udp dport 10 %s\nadd rule inet ref in udp dport 10 counter drop\n' \
		"${nrule% accept} counter accept" | in_b nft -f - ||
		fail "nft rejected: $nrule"
	b9=$(sink_count 9)
	b10=$(sink_count 10)
	base=$(nfqd_judged)
	t0=$(now_ms)
	total=$(send 10 $3) || fail "sending to nft"
	wait_for ref_judged "$total"
	t1=$(now_ms)
	total=$(send 9 $3) || fail "sending to nfqd"
	wait_for nfqd_judged $((base + total))
	t2=$(now_ms)
	a9=$(($(sink_count 9) - b9))
	a10=$(($(sink_count 10) - b10))
	# One packet, and what the rate earns in the longer of the two runs.
	[ $((t2 - t1)) -gt $((t1 - t0)) ] && t0=$((t2 - t1)) || t0=$((t1 - t0))
	slack=$((1 + $(earned "$rule" "$t0")))
	if [ $((a9 - a10)) -le $slack ] && [ $((a10 - a9)) -le $slack ]; then
		log "ok   $rule: nft accepted $a10 of $total, nfqd $a9 (within $slack: $t0 ms)"
	else
		log "FAIL $rule: nft accepted $a10 of $total, nfqd $a9 (more than $slack apart: $t0 ms)"
		bad=$((bad + 1))
	fi
	LAST_NFT=$a10
}

# rate, burst: nft's default burst is 5 packets
run_case "limit rate 1/second accept" "" "50 4"
run_case "limit rate 1/minute accept" "" "30 4"
run_case "limit rate 1/minute burst 20 accept" \
	"limit rate 1/minute burst 20 packets accept" "40 4"
run_case "limit rate 1/second burst 20 accept" \
	"limit rate 1/second burst 20 packets accept" "40 4"
run_case "limit rate 3/hour burst 2 accept" \
	"limit rate 3/hour burst 2 packets accept" "10 4"
run_case "limit rate 1/day accept" "" "10 4"
run_case "limit rate 1/week burst 1 accept" \
	"limit rate 1/week burst 1 packets accept" "10 4"
run_case "limit rate over 1/minute burst 3 accept" \
	"limit rate over 1/minute burst 3 packets accept" "20 4"
# Family: the limit comes first, so IPv6 packets take its tokens too
# (and then fail "ip saddr"): the IPv4 packets after them find none.
run_case "limit rate 1/minute burst 4 ip saddr 192.0.2.1 accept" \
	"limit rate 1/minute burst 4 packets ip saddr 192.0.2.1 accept" \
	"4 6 4 4"
[ "$LAST_NFT" -eq 0 ] ||
	fail "nft accepted $LAST_NFT IPv4 packets after the IPv6 ones"
run_case "limit rate 1/minute burst 6 ip6 saddr 2001:db8::1 accept" \
	"limit rate 1/minute burst 6 packets ip6 saddr 2001:db8::1 accept" \
	"3 4 6 6"
run_case "limit rate 1/minute burst 4 ip saddr 192.0.2.1 accept" \
	"limit rate 1/minute burst 4 packets ip saddr 192.0.2.1 accept" \
	"2 6 4 4"
# The same with the family match first: no token for the other family.
run_case "ip saddr 192.0.2.1 limit rate 1/minute burst 4 accept" \
	"ip saddr 192.0.2.1 limit rate 1/minute burst 4 packets accept" \
	"4 6 8 4"

# Per key: nfqd's bucket for each source against nft's per-element limit
# of a dynamic set (a meter), fresh sets each: the same bucket, burst 5
# by default; a packet without the key takes no token and does not match.
run_case "limit rate 1/minute per ip saddr accept" \
	"update @m1 { ip saddr limit rate 1/minute } accept" "30 4"
run_case "limit rate 10/second per ip saddr burst 20 accept" \
	"update @m2 { ip saddr limit rate 10/second burst 20 packets } accept" \
	"40 4"
run_case "limit rate 1/minute burst 3 per ip6 saddr accept" \
	"update @m3 { ip6 saddr limit rate 1/minute burst 3 packets } accept" \
	"10 4 10 6"

# A burst of 0: nft refuses it, so does nfqd (and keeps its policy).
if printf 'add rule inet ref in udp dport 10 limit rate 1/second burst 0 packets accept\n' |
	in_b nft -f - 2>/dev/null; then
	fail "nft accepted burst 0: the reference changed"
fi
write_conf "limit rate 1/second burst 0 accept"
if "$NFQD" -t -c "$TMP/nfqd.conf" >"$TMP/t.out" 2>&1; then
	fail "nfqd -t accepted burst 0"
fi
grep -q "burst 0" "$TMP/t.out" || fail "burst 0 refusal: $(cat "$TMP/t.out")"
log "burst 0 refused: $(head -n 1 "$TMP/t.out")"

[ "$bad" -eq 0 ] || fail "$bad of $n limits differ between nfqd and nft"
log "all $n limits accept what nft's accept"
stop_nfqd
exit 0
