#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Reloads refused for lack of memory: the running daemon's address space
# is capped (prlimit --as) a few MiB above what it uses, then reloads ask
# for more than that: a config file of 400,000 inline set elements (the
# scanner's copy of the file fails), batch 1024 with copy-range 65531
# (the workers' receive buffers fail), a set file of 1,000,000 addresses
# (the set fails). Each reload must fail with an error that says "out of
# memory" and names what ran out, the daemon must stay up on generation
# 1 and keep judging traffic by the old policy; once the cap is lifted the
# set-file reload succeeds and its set drops.
. "$(dirname "$0")/../lib.sh"

# A sanitizer's allocator reserves terabytes of address space and dies,
# by design, when it cannot map more: an address-space cap tests it, not
# nfqd. tests/unit/test_nomem covers every allocation of a load instead.
if [ "${SAN_MODE:-none}" != none ]; then
	echo "SKIP: $TEST_NAME: cannot run under a sanitizer ($SAN_MODE): an address-space cap stops its allocator, not nfqd's" >&2
	exit 77
fi

ns_setup
sink_setup
require_cmd iptables prlimit
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0
in_a ip addr add 192.0.2.77/24 dev va

opts="options { queues 1; stats-file \"$TMP/stats\"; control-socket \"$TMP/nfqd.sock\"; "
policy='hook input { udp dport 10 drop; ip saddr @big drop; }'
# Config $1 (extra options) with set "big" from file $2.
write_conf() {
	printf '%s%s }\nset big { type ipv4_addr; file "%s"; }\n%s\n' \
		"$opts" "$1" "$TMP/$2" "$policy" >"$TMP/nfqd.conf.new"
	mv "$TMP/nfqd.conf.new" "$TMP/nfqd.conf"
}
echo 198.51.100.1 >"$TMP/small.txt"
awk 'BEGIN { for (i = 0; i < 1000000; i++)
	printf "10.%d.%d.%d\n", int(i / 65536), int(i / 256) % 256, i % 256
	print "192.0.2.77" }' >"$TMP/big.txt"

ctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }
generation() {
	ctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])'
}
dropped() {
	ctl -j stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["queues"][0]["dropped"])'
}
# 100 datagrams to port 9 must pass, 100 to port 10 must be dropped.
judged_by_old_policy() {
	local s0 d0 end
	s0=$(sink_udp_packets)
	d0=$(dropped)
	send_udp "$NS_A" 192.0.2.2 100 -q -p 9
	send_udp "$NS_A" 192.0.2.2 100 -q -p 10
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ "$(sink_udp_packets)" -eq $((s0 + 100)) ] &&
			[ "$(dropped)" -eq $((d0 + 100)) ] && return 0
		sleep 0.05
	done
	fail "after $1: sink +$(( $(sink_udp_packets) - s0 )), dropped +$(( $(dropped) - d0 )), want 100 and 100"
}
# Reload must fail naming $1 and saying out of memory.
reload_refused() {
	local out
	out=$(ctl reload 2>&1) && fail "$2: the reload succeeded"
	kill -0 "$NFQD_PID" 2>/dev/null || fail "$2: nfqd died: $out"
	log "$2: $out"
	echo "$out" | grep -q "$1" || fail "$2: the error does not name $1"
	echo "$out" | grep -qi "memory" || fail "$2: the error does not say out of memory"
	[ "$(generation)" = 1 ] || fail "$2: generation $(generation), want 1"
	judged_by_old_policy "$2"
}

write_conf "" small.txt
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
judged_by_old_policy "start"
vm=$(awk '/VmSize/ { print $2 }' "/proc/$NFQD_PID/status")
prlimit --pid "$NFQD_PID" --as=$(( (vm + 10240) * 1024 )): || fail "prlimit"
log "address space capped at $((vm + 10240)) KiB (VmSize $vm KiB + 10 MiB)"

# 1. The scanner's copy of a 5 MiB config file.
{
	printf '%s }\nset big { type ipv4_addr; elements = {\n' "$opts"
	awk 'BEGIN { for (i = 0; i < 400000; i++)
		printf "10.%d.%d.%d,\n", int(i / 65536), int(i / 256) % 256, i % 256 }'
	printf '192.0.2.77 }; }\n%s\n' "$policy"
} >"$TMP/nfqd.conf.new"
mv "$TMP/nfqd.conf.new" "$TMP/nfqd.conf"
reload_refused nfqd.conf "a 5 MiB config file"

# 2. The workers' receive buffers: 1024 x 64 KiB.
write_conf "batch 1024; copy-range 65531;" small.txt
reload_refused "queue 0" "batch 1024, copy-range 65531"

# 3. A set of 1,000,000 addresses from a file: the error names the file.
write_conf "" big.txt
reload_refused big.txt "a set file of 1,000,000 addresses"

# The cap lifted, the same reload succeeds and its set drops.
prlimit --pid "$NFQD_PID" --as=unlimited: || fail "prlimit"
ctl reload >/dev/null || fail "the reload without a cap failed"
[ "$(generation)" = 2 ] || fail "generation $(generation) after the reload, want 2"
s0=$(sink_udp_packets)
d0=$(dropped)
send_udp "$NS_A" 192.0.2.2 100 -q -p 9 -S 192.0.2.77
end=$(deadline "$WAIT_SECONDS")
while [ "$(dropped)" -lt $((d0 + 100)) ] && before "$end"; do
	sleep 0.05
done
[ "$(dropped)" -eq $((d0 + 100)) ] || fail "the big set did not drop: dropped +$(( $(dropped) - d0 ))"
[ "$(sink_udp_packets)" -eq "$s0" ] || fail "packets from the big set passed"
grep -q "Aborted\|out of dynamic memory" "$TMP/nfqd.log" && fail "nfqd aborted"

stop_nfqd
log "ok"
