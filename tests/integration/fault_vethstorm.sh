#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A storm of link events in the namespace nfqd judges in: 334 veth pairs
# each created, renamed and deleted (1,002 ip link commands, in batches)
# while iifname/oifname rules are live and traffic flows on the stable
# interface vb. Midway a second interface, vold, is renamed to vren, the
# name a rule waits for. No packet of the stable flow is lost, misjudged
# or judged incomplete (an interface missing from nfqd's cache would make
# it so), and afterwards the rule on vren matches.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/integration/fault_lib.sh"

ns_setup
fault_setup
# A second link from A to B: vold (B) / va2 (A), 198.51.100.0/24.
in_b ip link add vold type veth peer name va2 || fail "second link"
in_b ip link set va2 netns "$NS_A" || fail "va2 to A"
in_a ip addr add 198.51.100.1/24 dev va2
in_a ip link set va2 up
in_b ip addr add 198.51.100.2/24 dev vold
in_b ip link set vold up
cat >"$TMP/nfqd.conf" <<EOF
options {
	queues 1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input {
	iifname "vs*" udp dport 9 drop;
	iifname "vb" udp dport 9 mark set 0x1 accept;
	iifname "vren" udp dport 9 mark set 0x1 accept;
	udp dport 9 drop;
	udp dport 10 drop;
}
hook output {
	oifname { "vs*", "vold" } udp dport 9 drop;
}
EOF
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0

# Before the rename, vold's packets fall through to "udp dport 9 drop".
snap a
send_udp "$NS_A" 198.51.100.2 10 -q
settle
snap b
[ $((b_dr - a_dr)) -eq 10 ] || fail "vold: $((b_dr - a_dr)) of 10 dropped"

PAIRS=334
ROUND=48
batches=0
for ((i = 1; i <= PAIRS; i += ROUND)); do
	end=$((i + ROUND - 1))
	[ $end -gt $PAIRS ] && end=$PAIRS
	f="$TMP/storm.$batches"
	{
		for ((j = i; j <= end; j++)); do
			echo "link add vsa$j type veth peer name vsp$j"
		done
		for ((j = i; j <= end; j++)); do
			echo "link set vsa$j name vsr$j"
		done
		for ((j = i; j <= end; j++)); do
			echo "link del vsr$j"
		done
	} >"$f"
	batches=$((batches + 1))
done

inc0=$(nq incomplete)
snap c
traffic_start
for ((k = 0; k < batches; k++)); do
	in_b ip -batch "$TMP/storm.$k" || fail "storm batch $k"
	if [ $k = $((batches / 2)) ]; then
		in_b ip -batch - <<'B' || fail "rename vold"
link set vold down
link set vold name vren
link set vren up
B
	fi
done
traffic_stop
sent=$(awk '{ s += $1 } END { print s }' "$TMP/sent")
settle
snap d
account c d "veth storm"
[ "$D_ipt" -eq "$sent" ] || fail "$D_ipt of $sent reached the queue"
[ "$D_pk" -eq "$sent" ] || fail "nfqd judged $D_pk of $sent"
[ "$D_ac" -eq $((sent / 2)) ] || fail "accepted $D_ac, want $((sent / 2))"
[ "$D_dr" -eq $((sent / 2)) ] || fail "dropped $D_dr, want $((sent / 2))"
[ $((D_qd + D_ud + D_pass)) -eq 0 ] || fail "lost or passed: $D_qd $D_ud $D_pass"
inc=$(( $(nq incomplete) - inc0 ))
[ "$inc" -eq 0 ] || fail "$inc packets judged incomplete during the storm"
left=$(in_b ip -o link show | grep -c ' vs[apr][0-9]')
[ "$left" -eq 0 ] || fail "$left storm interfaces left"

# The rule on vren follows the new name.
snap e
send_udp "$NS_A" 198.51.100.2 10 -q
settle
snap f
[ $((f_ac - e_ac)) -eq 10 ] || fail "vren: $((f_ac - e_ac)) of 10 accepted by its rule"
[ $((f_s1 - e_s1)) -eq 10 ] || fail "vren: the sink saw $((f_s1 - e_s1)) of 10 marked"
grep -q "link notifications lost" "$TMP/nfqd.log" && overrun=", rtnetlink overrun and resync" || overrun=
stop_nfqd
log "ok: $sent packets on vb during $((PAIRS * 3)) link commands in $batches batches$overrun: none lost, misjudged or incomplete; the rule follows vold's rename to vren"
