#!/bin/bash
# contrib/nfqd-rules: --dry-run changes nothing, install is idempotent and
# remove leaves other rules alone; with its connmark rules a bypassed TCP
# connection's later packets never reach the queue (nfqd sees its SYN
# only), without them nfqd sees every packet.
. "$(dirname "$0")/../lib.sh"

RULES="$TOP_SRCDIR/contrib/nfqd-rules"

ns_setup
require_cmd iptables ip6tables iptables-save ip6tables-save python3

conf=$(conf_file nfqd.conf <<EOF
options {
	queues 0-1;
	bypass-mark 0x40000000;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input {
	policy accept;
	tcp dport { 7000, 7001 } bypass accept;
}
EOF
)

saved() { in_b iptables-save | grep '^-A'; in_b ip6tables-save | grep '^-A'; }

in_b iptables -A INPUT -p icmp -m comment --comment mine -j ACCEPT
in_b ip6tables -A INPUT -p ipv6-icmp -j ACCEPT
before=$(saved)

out=$(in_b "$RULES" -c "$conf" --dry-run install) || fail "dry run failed"
[ "$(saved)" = "$before" ] || fail "--dry-run changed the rules"
nfq='-j NFQUEUE --queue-balance 0:1 --queue-cpu-fanout --queue-bypass'
echo "$out" | grep -q -- "$nfq" ||
	fail "dry run: no NFQUEUE rule in: $out"

in_b "$RULES" -c "$conf" install || fail "install failed"
first=$(saved)
[ "$(echo "$first" | grep -c nfqd-rules)" -eq 6 ] ||
	fail "install: expected 6 rules (3 per family): $first"
in_b "$RULES" -c "$conf" install || fail "second install failed"
[ "$(saved)" = "$first" ] || fail "a second install changed the rules"
[ -z "$(in_b "$RULES" -c "$conf" --dry-run install)" ] ||
	fail "a dry run after install would change something"
[ "$(in_b "$RULES" show | wc -l)" -eq 6 ] || fail "show: not 6 rules"

# One TCP connection from A to B port $1: 300 segments of 100 bytes.
flow() {
	in_b python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("192.0.2.2", int(sys.argv[1])))
s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
n = 0
while True:
    d = c.recv(65536)
    if not d:
        break
    n += len(d)
print(n, flush=True)' "$1" >"$TMP/server.out" &
	local spid=$! i
	bg_pid $spid
	for i in $(seq 1 100); do
		grep -q listening "$TMP/server.out" && break
		sleep 0.05
	done
	in_a python3 -c '
import socket, sys, time
c = socket.create_connection(("192.0.2.2", int(sys.argv[1])), timeout=10)
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
for i in range(300):
    c.sendall(b"x" * 100)
    time.sleep(0.002)
c.close()' "$1" || fail "client failed"
	wait $spid
	[ "$(tail -n 1 "$TMP/server.out")" = 30000 ] ||
		fail "server got $(tail -n 1 "$TMP/server.out") of 30000 bytes"
}

start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0 1
flow 7000
stop_nfqd
seen=$(final_counter packets)
log "bypassed connection with the connmark rules: nfqd saw $seen packets"
[ "$seen" -ge 1 ] && [ "$seen" -le 3 ] ||
	fail "nfqd saw $seen packets of a bypassed connection (want 1-3)"

# Without the connmark rules every packet of the connection is queued.
in_b "$RULES" -c "$conf" --no-bypass install || fail "install --no-bypass"
[ "$(saved | grep -c nfqd-rules)" -eq 2 ] || fail "--no-bypass: not 2 rules"
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0 1
flow 7001
stop_nfqd
seen=$(final_counter packets)
log "bypassed connection without the connmark rules: nfqd saw $seen packets"
[ "$seen" -ge 300 ] || fail "nfqd saw only $seen packets without connmark"

in_b "$RULES" remove || fail "remove failed"
[ "$(saved)" = "$before" ] ||
	fail "remove: rules left or others touched: $(saved)"
in_b "$RULES" remove || fail "a second remove failed"
exit 0
