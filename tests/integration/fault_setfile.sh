#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A set file deleted, made garbage, or replaced while reloads run: every
# reload that cannot read the whole file fails naming it, and the daemon
# keeps its old set (packets from a blocked address stay dropped).
# Replacing the file by rename(2) while 10 reloads run is safe: each
# reload sees the old or the new file whole, never a mix. Recovery: a
# whole file again and the reload succeeds. (A file rewritten in place
# is read as it is at that moment: docs/reliability.md.)
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0 || fail "iptables"
in_a ip addr add 192.0.2.77/24 dev va

cat >"$TMP/nfqd.conf" <<EOF
options { queues 1; stats-file "$TMP/stats"; control-socket "$TMP/nfqd.sock"; }
set blocked { type ipv4_addr; flags interval; file "$TMP/blocked.txt"; }
hook input { ip saddr @blocked drop; udp dport 10 drop; }
EOF
# A set file blocking 192.0.2.77 after $1 lines of other addresses.
blocklist() {
	awk -v n="$1" 'BEGIN { print "# blocked"
		for (i = 0; i < n; i++)
			printf "10.%d.%d.%d\n", int(i / 65536), int(i / 256) % 256, i % 256
		print "192.0.2.77" }'
}
blocklist 10 >"$TMP/blocked.txt"

ctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }
generation() {
	ctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])'
}
dropped() {
	ctl -j stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["queues"][0]["dropped"])'
}
# 50 datagrams from 192.0.2.77 to port 9: all dropped ($2 = drop) or all
# passed ($2 = pass).
from_77() {
	local s0 d0 want_s want_d end
	s0=$(sink_udp_packets)
	d0=$(dropped)
	send_udp "$NS_A" 192.0.2.2 50 -q -p 9 -S 192.0.2.77
	if [ "$2" = drop ]; then want_s=$s0 want_d=$((d0 + 50))
	else want_s=$((s0 + 50)) want_d=$d0; fi
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ "$(sink_udp_packets)" -eq "$want_s" ] &&
			[ "$(dropped)" -eq "$want_d" ] && return 0
		sleep 0.05
	done
	fail "$1: from 192.0.2.77 sink +$(( $(sink_udp_packets) - s0 )), dropped +$(( $(dropped) - d0 )), want all to $2"
}
# The reload must fail with an error containing $1; generation stays $2.
refused() {
	local out
	out=$(ctl reload 2>&1) && fail "$3: the reload succeeded"
	log "$3: $out"
	echo "$out" | grep -qF "$1" || fail "$3: the error does not say $1"
	[ "$(generation)" = "$2" ] || fail "$3: generation $(generation), want $2"
	from_77 "$3" drop
}

start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
from_77 start drop

rm "$TMP/blocked.txt"
refused "$TMP/blocked.txt: No such file" 1 "set file deleted"

printf '192.0.2.77\nnot-an-address\n' >"$TMP/blocked.txt"
refused "$TMP/blocked.txt:2:" 1 "set file with garbage on line 2"


# Recovery.
blocklist 10 >"$TMP/blocked.txt"
ctl reload >/dev/null || fail "the reload of a whole file failed"
[ "$(generation)" = 2 ] || fail "generation $(generation), want 2"
from_77 "recovered" drop

# Replaced by rename while reloads run: two versions, both blocking .77
# at their end, swapped as fast as the shell can.
blocklist 100000 >"$TMP/v1"
blocklist 80000 >"$TMP/v2"
(
	while :; do
		cp "$TMP/v1" "$TMP/new" && mv "$TMP/new" "$TMP/blocked.txt"
		cp "$TMP/v2" "$TMP/new" && mv "$TMP/new" "$TMP/blocked.txt"
	done
) &
swapper=$!
bg_pid $swapper
gen=2
for i in $(seq 1 10); do
	out=$(ctl reload 2>&1) || fail "reload $i while the file is swapped: $out"
	gen=$((gen + 1))
	from_77 "reload $i while the file is swapped" drop
done
kill "$swapper"
wait "$swapper" 2>/dev/null
[ "$(generation)" = "$gen" ] || fail "generation $(generation), want $gen"

# A set emptied on purpose is an empty set: .77 passes.
: >"$TMP/blocked.txt"
ctl reload >/dev/null || fail "the reload of an empty set file failed"
from_77 "empty set file" pass
stop_nfqd
log "ok"
