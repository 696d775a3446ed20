#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfqd end to end, as root, in two network namespaces of its own:
# installs what is missing, builds, puts iptables NFQUEUE rules in front of
# a host, runs nfqd with a small policy (addresses, ports, and a list of
# domain names blocked in DNS queries and TLS server names), sends traffic
# (ping, TCP, UDP, kdig, curl to a TLS server), shows the stats, the
# policy's decisions and a few seconds of "nfqd-ctl top" while traffic
# flows, and removes everything it made.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
ns_c="nfqd-demo-client"
ns_s="nfqd-demo-server"
tmp=$(mktemp -d /tmp/nfqd-demo.XXXXXX)
nfqd_pid=
tls_pid=
dns_pid=

cleanup() {
	set +e
	[ -n "$nfqd_pid" ] && kill "$nfqd_pid" 2>/dev/null && wait "$nfqd_pid"
	[ -n "$tls_pid" ] && kill "$tls_pid" 2>/dev/null && wait "$tls_pid"
	[ -n "$dns_pid" ] && kill "$dns_pid" 2>/dev/null && wait "$dns_pid"
	ip netns del "$ns_c" 2>/dev/null
	ip netns del "$ns_s" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }

# Wait until WHAT listens in $ns_s on PORT (ss option OPT: -ltn, -lun);
# after 5 s stop, with its LOG if it has one.
wait_listening() {
	local opt=$1 port=$2 what=$3 log=${4:-}
	for _ in $(seq 1 50); do
		ip netns exec "$ns_s" ss "$opt" | grep -q ":$port " && return 0
		sleep 0.1
	done
	echo "demo: $what is not listening on port $port after 5 s" >&2
	[ -n "$log" ] && cat "$log" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || { echo "demo: run as root" >&2; exit 1; }

step "dependencies"
"$top/contrib/install-deps.sh"

step "build"
cd "$top"
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p build
cd build
[ -f Makefile ] || ../configure >/dev/null
make -j"$(nproc)" nfqd nfqd-ctl tests/bench/nfqd-gen >/dev/null
nfqd="$top/build/nfqd"
ctl="$top/build/nfqd-ctl"
gen="$top/build/tests/bench/nfqd-gen"
echo "built $("$nfqd" -V)"

step "namespaces: $ns_c (192.0.2.1, .66) <-> $ns_s (192.0.2.2)"
ip netns del "$ns_c" 2>/dev/null || true
ip netns del "$ns_s" 2>/dev/null || true
if ! mountpoint -q /; then
	echo "demo: / is not a mount point (a chroot?): ip netns cannot make its" >&2
	echo "demo: mount namespace. Bind-mount the root onto itself first:" >&2
	echo "demo:   mount --bind DIR DIR, then chroot DIR" >&2
	exit 1
fi
ip netns add "$ns_c"
ip netns add "$ns_s"
ip link add veth-c netns "$ns_c" type veth peer name veth-s netns "$ns_s"
ip -n "$ns_c" addr add 192.0.2.1/24 dev veth-c
ip -n "$ns_c" addr add 192.0.2.66/24 dev veth-c
ip -n "$ns_s" addr add 192.0.2.2/24 dev veth-s
for ns in "$ns_c" "$ns_s"; do
	ip -n "$ns" link set lo up
done
ip -n "$ns_c" link set veth-c up
ip -n "$ns_s" link set veth-s up

step "rules in $ns_s: iptables sends new input traffic to queues 0-1"
# Spread by flow hash, not --queue-cpu-fanout: names need all of a
# connection's packets in one queue (its flow table), and a veth hands a
# local client's packets to whichever CPU the client runs on.
ip netns exec "$ns_s" iptables -A INPUT -i veth-s -j NFQUEUE \
	--queue-balance 0:1 --queue-bypass
ip netns exec "$ns_s" iptables -S INPUT
# Accepted UDP ends in a counting nft chain (nobody listens on port 9).
ip netns exec "$ns_s" nft -f - <<'NFT'
table inet demo {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 9 counter drop
	}
}
NFT

step "nfqd policy"
cat >"$tmp/blocked.txt" <<'EOF'
# one element per line
192.0.2.66
203.0.113.0/24
EOF
cat >"$tmp/nfqd.conf" <<EOF
options {
	queues 2;
	stats-file "$tmp/stats";
	stats-interval 1;
	control-socket "$tmp/nfqd.sock";
	copy-range 4096;	# a whole ClientHello, for its server name
}
set blocked {
	type ipv4_addr;
	flags interval;
	file "$tmp/blocked.txt";
}
set blocked_names {
	type domain;
	# ".ads.example": that name and every name below it
	elements = { ".ads.example", "tracker.example" };
}
hook input {
	policy accept;
	ip saddr @blocked counter drop;
	tcp dport { 23, 2323 } drop;
	udp dport 9 accept;
	dns qname @blocked_names counter drop;
	tls sni @blocked_names counter drop;
}
EOF
sed -n '/^set/,$p' "$tmp/nfqd.conf"
"$nfqd" -t -c "$tmp/nfqd.conf"

step "servers in $ns_s: DNS (port 53, any name is 192.0.2.2), TLS (port 443)"
# A DNS server of a few lines: every query answered with one A record;
# a datagram without a whole question is ignored.
ip netns exec "$ns_s" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("192.0.2.2", 53))
while True:
    q, peer = s.recvfrom(512)
    end = q.find(b"\0", 12) + 5     # the question: name, type, class
    if len(q) < 17 or end < 17 or end > len(q):
        continue
    s.sendto(q[:2] + b"\x81\x80\0\x01\0\x01\0\0\0\0" + q[12:end] +
             b"\xc0\x0c\0\x01\0\x01\0\0\0\x3c\0\x04\xc0\0\x02\x02", peer)
' &
dns_pid=$!
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-subj /CN=demo -days 1 -keyout "$tmp/key.pem" -out "$tmp/cert.pem" \
	2>/dev/null
ip netns exec "$ns_s" openssl s_server -quiet -www -accept 443 \
	-cert "$tmp/cert.pem" -key "$tmp/key.pem" >"$tmp/tls.log" 2>&1 &
tls_pid=$!
wait_listening -ltn 443 "openssl s_server" "$tmp/tls.log"
wait_listening -lun 53 "the DNS server"
echo "listening"

step "start nfqd in $ns_s"
ip netns exec "$ns_s" "$nfqd" -c "$tmp/nfqd.conf" 2>"$tmp/nfqd.log" &
nfqd_pid=$!
for _ in $(seq 1 50); do
	[ -S "$tmp/nfqd.sock" ] && break
	sleep 0.1
done
ip netns exec "$ns_s" "$ctl" -s "$tmp/nfqd.sock" status

step "traffic from $ns_c"
ip netns exec "$ns_c" ping -c 3 -i 0.2 -W 1 -I 192.0.2.1 192.0.2.2 | tail -n 2
echo "ping from the blocked address 192.0.2.66:"
ip netns exec "$ns_c" ping -c 2 -i 0.2 -W 1 -I 192.0.2.66 192.0.2.2 | tail -n 2 || true
echo "telnet (tcp port 23):"
if ip netns exec "$ns_c" timeout 3 socat -T 1 - TCP:192.0.2.2:23,connect-timeout=1 </dev/null 2>/dev/null; then
	echo "  connected?!"
else
	echo "  no answer: nfqd dropped the SYN"
fi
echo "DNS queries (kdig, UDP):"
for name in www.example.org cdn.ads.example; do
	if addr=$(ip netns exec "$ns_c" kdig +short +timeout=2 +retry=1 \
		@192.0.2.2 "$name" A 2>/dev/null) && [ -n "$addr" ]; then
		echo "  $name: answered $addr"
	else
		echo "  $name: no answer: nfqd dropped the query"
	fi
done
echo "HTTPS (curl to openssl s_server in $ns_s, port 443):"
for name in www.example.org cdn.ads.example; do
	code=$(ip netns exec "$ns_c" curl -sk -m 5 -o /dev/null -w '%{http_code}' \
		--resolve "$name:443:192.0.2.2" "https://$name/" || true)
	if [ "$code" = 200 ]; then
		echo "  $name: HTTP 200 from the server"
	else
		echo "  $name: no answer: nfqd dropped the ClientHello"
	fi
done
echo "10000 UDP datagrams to port 9:"
ip netns exec "$ns_c" "$gen" -d 192.0.2.2 -n 10000 -P 1
sleep 1.2

step "policy decisions (nfqd-ctl rules)"
ip netns exec "$ns_s" "$ctl" -s "$tmp/nfqd.sock" rules

step "per-queue counters (nfqd-ctl stats)"
ip netns exec "$ns_s" "$ctl" -s "$tmp/nfqd.sock" stats

step "the /proc-style stats file ($tmp/stats)"
cat "$tmp/stats"
echo "kernel's /proc/net/netfilter/nfnetlink_queue in $ns_s:"
ip netns exec "$ns_s" cat /proc/net/netfilter/nfnetlink_queue

step "nfqd-ctl top -b: three seconds of live rates while traffic flows"
# A paced UDP stream (5000 datagrams a second) in the background; top's
# batch mode prints one frame a second, like "top -b".
ip netns exec "$ns_c" "$gen" -q -d 192.0.2.2 -n 20000 -r 5000 -P 1 &
gen_pid=$!
ip netns exec "$ns_s" "$ctl" -s "$tmp/nfqd.sock" top -b -n 3 -d 1
wait "$gen_pid" || true
echo "(interactive: nfqd-ctl top; q quits. Per-interval rates as JSON lines:"
echo " nfqd-ctl -j stats -w 1. Prometheus: nfqd-ctl stats --prometheus)"

step "stop nfqd (SIGTERM) and clean up"
kill -TERM "$nfqd_pid"
wait "$nfqd_pid" || true
nfqd_pid=
tail -n 4 "$tmp/nfqd.log"
echo "demo done"
