#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# names_chromium.sh - a real browser against name matches (nfqd.conf(5)
# NAMES): headless Chromium (Debian's chromium) in namespace A fetches
# https://NAME/ from a TLS server in B through nfqd. Its ClientHello is
# about 2 KB with a post-quantum key share and permuted extensions.
#   - over TCP: an allowed name's page loads, a blocked one's never does
#     (tls sni @blk drop), before and after;
#   - over QUIC (--origin-to-force-quic-on; no QUIC server is needed, the
#     Initials are sent anyway): nfqd decrypts the Initials, joins their
#     CRYPTO frames (the ClientHello needs more than one) and the rule
#     for the name counts them: the blocked name's drop rule, the allowed
#     name's accept rule, never the other. A UDP socket on port 443 in B
#     reads and discards what nfqd accepts: without it B answers a
#     connection's first Initial (accepted as pending) with an ICMP port
#     unreachable, and Chromium, if that comes back before it has sent the
#     second, abandons the connection with the name never sent (seen with
#     tcpdump and nstat's UdpNoPorts; the test failed in CI so).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

require_root
require_cmd ip iptables openssl chromium
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"

ns_setup
in_b iptables -A INPUT -i vb -j NFQUEUE --queue-num 0 || fail "NFQUEUE rule"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1 ||
	fail "openssl req"
echo "<html><body>page-from-b</body></html>" >"$TMP/index.html"
cat >"$TMP/tls.py" <<'EOF'
import http.server, os, ssl, sys
os.chdir(sys.argv[3])
srv = http.server.ThreadingHTTPServer(("192.0.2.2", 443),
                                      http.server.SimpleHTTPRequestHandler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                             do_handshake_on_connect=False)
srv.serve_forever()
EOF
ip netns exec "$NS_B" /usr/bin/python3 "$TMP/tls.py" "$TMP/cert.pem" \
	"$TMP/key.pem" "$TMP" >"$TMP/tls.log" 2>&1 &
bg_pid $!
cat >"$TMP/udp.py" <<'EOF'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("192.0.2.2", 443))
while True:
    s.recv(65535)
EOF
ip netns exec "$NS_B" /usr/bin/python3 "$TMP/udp.py" >"$TMP/udp.log" 2>&1 &
bg_pid $!

SOCK="$TMP/nfqd.sock"
conf=$(conf_file nfqd.conf <<EOF
options {
	queues { 0 };
	copy-range 65531;
	stats-file "$TMP/stats";
	control-socket "$SOCK";
}
set blk { type domain; elements = { ".blocked.test" }; }
hook input {
	policy accept;
	udp dport 443 tls sni @blk drop;
	udp dport 443 tls sni "www.allowed.test" accept;
	tls sni @blk drop;
}
EOF
)
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0

# One fetch: prints the page (the DOM) or nothing; 20 s at most.
# Chromium's stderr and exit status go to $TMP/chromium.$2.log.
fetch() {
	ip netns exec "$NS_A" timeout 20 chromium --headless=new --no-sandbox \
		--ignore-certificate-errors --user-data-dir="$TMP/profile.$2" \
		--host-resolver-rules="MAP *.test 192.0.2.2" ${3:-} \
		--dump-dom "https://$1/" 2>"$TMP/chromium.$2.log"
	echo "chromium exited $?" >>"$TMP/chromium.$2.log"
}
# What fetch $1 printed, and the TLS server's log, for a failure's message.
fetch_log() {
	echo "chromium:"; tail -n 20 "$TMP/chromium.$1.log"
	echo "server:"; tail -n 10 "$TMP/tls.log"
}
# nfqd's counters, on one line, for a failure's message.
quic_stats() { "$NFQD_CTL" -s "$SOCK" -j stats | tr -d ' \n'; }
# Packets counted by rule $1 of hook input.
rule_packets() {
	"$NFQD_CTL" -s "$SOCK" rules | awk -v r="$1" '
		/^hook / { inp = ($2 == "input:") }
		inp && $1 == r { print $2; exit }'
}

# The server answers through nfqd (polling, 60 s at most: a start of
# chromium on a loaded machine takes seconds).
end=$(deadline 60)
until fetch www.allowed.test warm | grep -q page-from-b; do
	before "$end" || fail "no page for an allowed name: $(fetch_log warm)"
	sleep 0.5
done
for round in 1 2; do
	t0=$(date +%s)
	fetch www.allowed.test a$round | grep -q page-from-b ||
		fail "round $round: allowed www.allowed.test did not load" \
			"($(($(date +%s) - t0)) s; stats $(quic_stats))" "$(fetch_log a$round)"
	fetch www.blocked.test b$round | grep -q page-from-b &&
		fail "round $round: blocked www.blocked.test loaded"
	log "round $round: TCP: allowed loads, blocked does not"
done

# QUIC Initials: the rules count the name's packets. B never answers,
# so Chromium sends its whole ClientHello and resends it until it gives
# up; the counters are read once it has.
quic="--enable-quic --origin-to-force-quic-on"
fetch www.blocked.test qb "$quic=www.blocked.test:443" >/dev/null
b=$(rule_packets 1) a=$(rule_packets 2)
[ "$b" -ge 1 ] && [ "$a" -eq 0 ] ||
	fail "QUIC to www.blocked.test: drop rule $b packets, allow rule $a; stats $(quic_stats)"
fetch www.allowed.test qa "$quic=www.allowed.test:443" >/dev/null
b2=$(rule_packets 1) a=$(rule_packets 2)
[ "$b2" -eq "$b" ] && [ "$a" -ge 1 ] ||
	fail "QUIC to www.allowed.test: drop rule $b2 packets (was $b), allow rule $a; stats $(quic_stats)"
[ "$(in_b nstat -asz UdpNoPorts | awk '$1 == "UdpNoPorts" { print $2 }')" -eq 0 ] ||
	fail "B answered a QUIC Initial with port unreachable: is the UDP sink up? $(cat "$TMP/udp.log")"
log "QUIC: Chromium's Initials give the name: blocked $b dropped, allowed $a accepted"
stop_nfqd
log "ok"
