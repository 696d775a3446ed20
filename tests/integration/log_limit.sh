#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# log_limit.sh - the log statement as nfqd.conf(5) documents it: each line
# names the rule's verdict (VERDICT=drop); at most 10 lines per rule and
# second are written and the rest counted, and the count is reported by
# the daemon's timer without another packet of that rule: lines written
# plus lines suppressed make the packets sent, exactly.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

ns_setup
queue_rule_setup 0
SOCK="$TMP/nfqd.sock"
CONF=$(conf_file nfqd.conf <<EOF2
options {
	queues { 0 };
	stats-file "$TMP/stats";
	control-socket "$SOCK";
}
hook input {
	udp dport 9 log prefix "lim " drop;
	udp dport 10 log accept;
}
EOF2
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"
N=500
send_udp_to "$NS_A" 192.0.2.2 $N 9
wait_stats_field "$TMP/stats" 0 10 $N
# No more packets of that rule: the suppressed count must still come.
sum=0
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	lines=$(grep -c "lim hook input rule 1 .*SRC=192.0.2.1 .*DPT=9 " "$TMP/nfqd.log")
	supp=$(sed -n 's/.*lim hook input rule 1 (.*): \([0-9]*\) messages suppressed$/\1/p' \
		"$TMP/nfqd.log" | awk '{ s += $1 } END { print s + 0 }')
	sum=$((lines + supp))
	[ $sum -eq $N ] && break
	sleep 0.1
done
[ $sum -eq $N ] || fail "$lines lines + $supp suppressed = $sum, want $N: $(tail -5 "$TMP/nfqd.log")"
[ "$supp" -gt 0 ] || fail "nothing suppressed of $N packets"
bad=$(grep "lim hook input rule 1 .*DPT=9 " "$TMP/nfqd.log" | grep -v " VERDICT=drop$" | head -1)
[ -z "$bad" ] || fail "a line without VERDICT=drop: $bad"
send_udp_to "$NS_A" 192.0.2.2 1 10
end=$(deadline "$WAIT_SECONDS")
until grep -q "hook input rule 2 .*DPT=10 .* VERDICT=accept$" "$TMP/nfqd.log" || ! before "$end"; do
	sleep 0.05
done
grep -q "hook input rule 2 .*DPT=10 .* VERDICT=accept$" "$TMP/nfqd.log" || fail "no accept line"
log "$N packets: $lines lines, $supp suppressed (reported without a later packet)"
log "$(grep -m1 "lim hook input rule 1 .*DPT=9 " "$TMP/nfqd.log")"
stop_nfqd
