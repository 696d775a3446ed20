#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# examples.sh - the example configurations in contrib/examples: each one
# (its set files where it installs them) passes "nfqd -t"; the blocklist
# files are really loaded (a broken line is reported as FILE:LINE); and
# bulk-bypass.conf does what its comment says, run for real with the
# kernel rules copied from that comment, on a router between two
# namespaces: a bulk TCP transfer leaves the queue after its first
# packets, while another connection stays in it.
#
# The bypass is asserted with the product's own accounting. The packets
# of a bulk connection that reach the queue before nfqd's verdict on its
# first non-SYN packet has set the connection mark (the sender's initial
# window, and its retransmissions while nfqd is starved of CPU) are
# judged by nfqd, legitimately; so the promise is: the bytes nfqd judged
# plus the bytes that skipped the queue cover the transfer, and nfqd
# judged only a handful of the connection's packets. How many bytes those
# packets carry is the sender's TCP stack's business (veth hands over
# GSO packets of up to 64 KiB), not a bound the test can hold it to.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

EX="$TOP_SRCDIR/contrib/examples"
mkdir -p "$TMP/etc"
cp "$EX"/*.conf "$EX"/*.txt "$TMP/etc/"
# Where the examples say /etc/nfqd/, this test's copy.
sed -i "s|/etc/nfqd/|$TMP/etc/|g" "$TMP"/etc/*.conf
n=0
for conf in "$TMP"/etc/*.conf; do
	name=$(basename "$conf")
	head -n 1 "$conf" | grep -q "^# $name - " || fail "$name: no banner comment"
	out=$(nfqd_check "$conf") || fail "$name: nfqd -t: $out"
	case $out in "config OK, but: "*)
		log "$name: ${out#config OK, but: }"; out="config OK" ;;
	esac
	[ "$out" = "config OK" ] || fail "$name: $out"
	n=$((n + 1))
done
[ $n -ge 4 ] || fail "only $n examples"
log "$n examples pass nfqd -t"
# The set files are read: an error in one is reported with its line.
echo "not-an-address" >>"$TMP/etc/blocklist-v6.txt"
out=$("$NFQD" -t -c "$TMP/etc/ips-blocklist.conf" 2>&1) && fail "a bad set file passed"
echo "$out" | grep -q "blocklist-v6.txt:[0-9]" || fail "set file error: $out"

# bulk-bypass.conf for real: A -> B (router, nfqd) -> C.
NS_C="nfqd-$$-c"
trap 'rc=$?; ip netns del "$NS_C" 2>/dev/null; (exit $rc); cleanup' EXIT
ns_setup
require_cmd iptables
ip netns add "$NS_C" || fail "netns add $NS_C"
ip link add vc netns "$NS_B" type veth peer name vd netns "$NS_C" || fail "veth"
in_c() { ip netns exec "$NS_C" "$@"; }
in_b ip addr add 198.51.100.1/24 dev vc
in_c ip addr add 198.51.100.2/24 dev vd
in_b ip link set vc up
in_c ip link set vd up
in_c ip link set lo up
in_a ip route add 198.51.100.0/24 via 192.0.2.2
in_c ip route add default via 198.51.100.1
in_b sysctl -qw net.ipv4.ip_forward=1

# The kernel rules exactly as the comment gives them (queues 0-1 here).
grep '^#   iptables ' "$EX/bulk-bypass.conf" | sed 's/^#   //' >"$TMP/rules.sh"
[ "$(wc -l <"$TMP/rules.sh")" -eq 3 ] || fail "comment rules: $(cat "$TMP/rules.sh")"
sed -i 's/--queue-balance 0:3/--queue-balance 0:1/' "$TMP/rules.sh"
while read -r rule; do
	log "B: $rule"
	# shellcheck disable=SC2086
	in_b $rule || fail "rule from the comment failed: $rule"
done <"$TMP/rules.sh"

SOCK="$TMP/nfqd.sock"
conf_file bulk.conf >/dev/null <<EOF2
options {
    queues 2;
    stats-file "$TMP/stats";
    control-socket "$SOCK";
}
$(sed '/^options {/,/^}/d' "$TMP/etc/bulk-bypass.conf")
EOF2
start_nfqd "$NS_B" "$TMP/bulk.conf"
wait_bound "$NS_B" 0 1
wait_file "$SOCK"
# Packets ($1 packets) or bytes ($1 bytes) nfqd judged; veth hands GSO
# packets of up to 64 KiB, so bytes say more than packets.
judged() {
	ctl -j stats | "$PY" -c 'import json, sys
print(sum(q[sys.argv[1]] for q in json.load(sys.stdin)["queues"]))' "$1"
}
bypass_hits() {
	ctl -j rules | "$PY" -c 'import json, sys
h = [h for h in json.load(sys.stdin)["hooks"] if h["hook"] == "forward"][0]
print(sum(r["packets"] for r in h["rules"] if "bypass" in r["rule"]))'
}
# Bytes the connmark rule let skip the queue.
skipped() {
	in_b iptables -L FORWARD -v -x -n | awk '/connmark/ { print $2 }'
}

# Send $2 bytes over TCP from A to C port $1; prints what C received.
transfer() {
	in_c "$PY" -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.51.100.2", int(sys.argv[1])))
s.listen(1)
s.settimeout(30)
c, _ = s.accept()
n = 0
while True:
    b = c.recv(65536)
    if not b:
        break
    n += len(b)
print(n)
' "$1" >"$TMP/received" &
	local server=$!
	bg_pid $server
	# The server listens once python has started, which a loaded machine
	# delays: poll against the clock.
	local end
	end=$(deadline "$WAIT_SECONDS")
	until in_c ss -ltn | grep -q ":$1 "; do
		kill -0 $server 2>/dev/null || fail "the server on port $1 exited"
		before "$end" || fail "the server on port $1 did not listen in $WAIT_SECONDS s"
		sleep 0.1
	done
	in_a "$PY" -c '
import socket, sys
s = socket.create_connection(("198.51.100.2", int(sys.argv[1])), timeout=30)
s.sendall(b"x" * int(sys.argv[2]))
s.close()
' "$1" "$2" || fail "transfer to port $1 failed"
	wait $server
	cat "$TMP/received"
}

BYTES=3000000
before=$(judged packets)
before_bytes=$(judged bytes)
got=$(transfer 5201 $BYTES)
[ "$got" -eq $BYTES ] || fail "bulk transfer: C received $got of $BYTES bytes"
bulk=$(($(judged packets) - before))
bulk_bytes=$(($(judged bytes) - before_bytes))
bulk_skipped=$(skipped)
log "port 5201 (bulk): nfqd judged $bulk packets ($bulk_bytes bytes), $bulk_skipped bytes skipped the queue; bypass rule hits $(bypass_hits)"
[ "$(bypass_hits)" -ge 1 ] || fail "the bypass rule never matched"
# Every byte went one way or the other (IP bytes, headers included, so
# the sum is a little more than the payload).
[ $((bulk_bytes + bulk_skipped)) -ge $BYTES ] \
	|| fail "nfqd judged $bulk_bytes bytes and $bulk_skipped skipped the queue: less than the $BYTES sent"
# Most of them skipped it: nfqd saw the start, not the transfer.
[ "$bulk_skipped" -ge $((BYTES / 2)) ] \
	|| fail "only $bulk_skipped of $BYTES bytes skipped the queue"
# A handful of packets: the handshake, the initial window (10 segments,
# fewer with GSO) queued before the verdict that marks the connection,
# and the sender's retransmissions while nfqd waits for a CPU. A broken
# bypass makes it thousands (every segment and every ACK).
[ "$bulk" -le 30 ] \
	|| fail "nfqd judged $bulk packets ($bulk_bytes bytes) of a bypassed transfer"

before_bytes=$(judged bytes)
skipped_before=$(skipped)
got=$(transfer 8080 $BYTES)
[ "$got" -eq $BYTES ] || fail "other transfer: C received $got of $BYTES bytes"
other=$(($(judged bytes) - before_bytes))
log "port 8080 (not bulk): nfqd judged $other bytes"
[ "$other" -ge $BYTES ] || fail "a connection that is not bulk left the queue (nfqd judged $other bytes)"
[ "$(skipped)" -eq "$skipped_before" ] || fail "packets of a connection that is not bulk skipped the queue"
stop_nfqd
log "ok"
