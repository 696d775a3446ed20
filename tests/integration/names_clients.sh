#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# names_clients.sh - name matches (nfqd.conf(5) NAMES) against real clients
# and servers in namespaces: curl and openssl s_client to a threaded TLS
# server (Python's ssl, i.e. OpenSSL) and, last, to an openssl s_server
# (TLS SNI over TCP), curl to a Python HTTP server (Host), kdig over UDP
# and TCP to a scripted resolver (DNS query names). A blocklist names
# .blocked.test and exact.test: every blocked name fails, every other
# name works, before and after the blocked attempts. A port's drop after
# the name rules still drops its SYN: a server that speaks first (as SSH
# or SMTP do) shows nothing through it, and one on another port does.
# Clients of line protocols (a real ssh client's banner, SMTP, IMAP, FTP
# lines) pass the HTTP blocklist; HTTP dressed as them does not. (s_server serves one
# connection at a time and a blocked client's connection stays open,
# its ClientHello dropped, so it is tried last.) Runtime patterns
# (nfqd-ctl set add/delete on the domain set): a name blocked from the
# next query on, a timeout that expires, a config pattern that cannot be
# deleted, a bad pattern refused, a list on standard input (hosts and
# adblock lines), a restart that keeps them.
. "$TOP_SRCDIR/tests/lib.sh"

require_root
require_cmd ip iptables openssl curl kdig ssh
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"

ns_setup
in_b iptables -A INPUT -i vb -j NFQUEUE --queue-num 0 || fail "NFQUEUE rule"

# A self-signed certificate for the TLS server.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1 ||
	fail "openssl req"

# Servers in B: TLS on 443, HTTP on 80, DNS on 53 (UDP and TCP),
# openssl s_server on 4433.
cat >"$TMP/tls.py" <<'EOF'
import http.server, ssl, sys
srv = http.server.ThreadingHTTPServer(("192.0.2.2", 443),
                                      http.server.SimpleHTTPRequestHandler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                             do_handshake_on_connect=False)
srv.serve_forever()
EOF
ip netns exec "$NS_B" /usr/bin/python3 "$TMP/tls.py" "$TMP/cert.pem" \
	"$TMP/key.pem" >"$TMP/tls.log" 2>&1 &
bg_pid $!
ip netns exec "$NS_B" openssl s_server -accept 4433 -cert "$TMP/cert.pem" \
	-key "$TMP/key.pem" -www -quiet >"$TMP/s_server.log" 2>&1 &
bg_pid $!
ip netns exec "$NS_B" /usr/bin/python3 -m http.server 80 --bind 192.0.2.2 \
	--directory "$TMP" >"$TMP/http.log" 2>&1 &
bg_pid $!
cat >"$TMP/dns.py" <<'EOF'
# Answers every A query with 192.0.2.2, over UDP and TCP (port 53).
import socket, struct, threading

def answer(q):
    hdr = q[:2] + b"\x81\x80" + q[4:6] + b"\x00\x01\x00\x00\x00\x00"
    end = 12
    while q[end]:
        end += q[end] + 1
    end += 5
    rr = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + bytes([192, 0, 2, 2])
    return hdr + q[12:end] + rr

def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("192.0.2.2", 53))
    while True:
        q, a = s.recvfrom(4096)
        s.sendto(answer(q), a)

def tcp():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("192.0.2.2", 53))
    s.listen(16)
    while True:
        c, _ = s.accept()
        c.settimeout(5)
        try:
            n = struct.unpack(">H", c.recv(2, socket.MSG_WAITALL))[0]
            r = answer(c.recv(n, socket.MSG_WAITALL))
            c.sendall(struct.pack(">H", len(r)) + r)
        except Exception:
            pass
        c.close()

threading.Thread(target=tcp, daemon=True).start()
udp()
EOF
ip netns exec "$NS_B" /usr/bin/python3 "$TMP/dns.py" >"$TMP/dns.log" 2>&1 &
bg_pid $!
# Servers that speak first (a banner on connect): 2222, dropped by a
# rule after the name rules, and 2223.
cat >"$TMP/banner.py" <<'EOF'
import socket, threading

def serve(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("192.0.2.2", port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        c.sendall(b"BANNER\n")
        c.close()

threading.Thread(target=serve, args=(2222,), daemon=True).start()
serve(2223)
EOF
ip netns exec "$NS_B" /usr/bin/python3 "$TMP/banner.py" >"$TMP/banner.log" 2>&1 &
bg_pid $!
# A server of a line protocol on 2525 (the client speaks first, a line
# with a space: SSH, SMTP, IMAP, FTP): logs the first line it gets and
# answers GOT.
cat >"$TMP/line.py" <<'EOF'
import socket, threading

def one(c):
    c.settimeout(5)
    d = b""
    try:
        while b"\n" not in d:
            b = c.recv(4096)
            if not b:
                break
            d += b
        print(repr(d.split(b"\n")[0]), flush=True)
        c.sendall(b"GOT\r\n")
    except OSError:
        pass
    c.close()

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("192.0.2.2", 2525))
s.listen(16)
while True:
    c, _ = s.accept()
    threading.Thread(target=one, args=(c,), daemon=True).start()
EOF
ip netns exec "$NS_B" /usr/bin/python3 "$TMP/line.py" >"$TMP/line.log" 2>&1 &
bg_pid $!
echo hello >"$TMP/index.html"

conf=$(conf_file nfqd.conf <<EOF
options {
	queues { 0 };
	copy-range 65531;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
	incomplete-verdict drop;
}
set blk { type domain; flags timeout;
	elements = { ".blocked.test", "exact.test" }; }
hook input {
	policy accept;
	tls sni @blk log prefix "sni " drop;
	http host @blk drop;
	dns qname @blk drop;
	tcp dport 2222 drop;
}
EOF
)
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0

cat >"$TMP/banner_get.py" <<'EOF'
# banner_get.py PORT TIMEOUT: exit 0 when the server's banner arrives.
import socket, sys
try:
    s = socket.create_connection(("192.0.2.2", int(sys.argv[1])),
                                 timeout=float(sys.argv[2]))
    sys.exit(0 if s.recv(16) == b"BANNER\n" else 1)
except OSError:
    sys.exit(1)
EOF

cat >"$TMP/line_get.py" <<'EOF'
# line_get.py PORT TIMEOUT TEXT: send TEXT (backslash escapes read),
# exit 0 when the server answers GOT.
import codecs, socket, sys
try:
    s = socket.create_connection(("192.0.2.2", int(sys.argv[1])),
                                 timeout=float(sys.argv[2]))
    s.sendall(codecs.decode(sys.argv[3], "unicode_escape").encode("latin-1"))
    sys.exit(0 if s.recv(16).startswith(b"GOT") else 1)
except OSError:
    sys.exit(1)
EOF
line_ok() { in_a /usr/bin/python3 "$TMP/line_get.py" 2525 "$T" "$1"; }

# Wait for the servers (polling, $WAIT_SECONDS s at most).
end=$(deadline "$WAIT_SECONDS")
while :; do
	in_a curl -sk -m 2 --resolve ok.test:443:192.0.2.2 \
		https://ok.test/ >/dev/null 2>&1 &&
	in_a curl -s -m 2 --resolve ok.test:80:192.0.2.2 \
		http://ok.test/index.html >/dev/null 2>&1 &&
	in_a kdig +short +time=1 +retry=0 @192.0.2.2 ok.test A 2>/dev/null |
		grep -q 192.0.2.2 &&
	in_a /usr/bin/python3 "$TMP/banner_get.py" 2223 2 &&
	in_a /usr/bin/python3 "$TMP/line_get.py" 2525 2 'QUIT\r\n' && break
	before "$end" || fail "servers not reachable through nfqd: $(cat "$TMP/nfqd.log")"
	sleep 0.1
done

# Each client waits $T s: long for an allowed name (an answer is due,
# and a loaded machine may keep nfqd or a server from the CPU for
# seconds), short for a blocked one (no answer is due: nfqd dropped it).
T_ALLOWED=$WAIT_SECONDS
T_BLOCKED=3
T=$T_ALLOWED
tls_ok() { in_a curl -sk -m "$T" --resolve "$1:443:192.0.2.2" "https://$1/" >/dev/null 2>&1; }
http_ok() { in_a curl -s -m "$T" --resolve "$1:80:192.0.2.2" "http://$1/index.html" >/dev/null 2>&1; }
dns_ok() { in_a kdig +short +time="$T" +retry=0 ${2:-} @192.0.2.2 "$1" A 2>/dev/null | grep -q 192.0.2.2; }
sclient_ok() {
	echo | in_a timeout $((T + 2)) openssl s_client -connect "192.0.2.2:$2" \
		-servername "$1" >"$TMP/s_client.out" 2>&1
	grep -q "BEGIN CERTIFICATE" "$TMP/s_client.out"
}

for round in 1 2; do
	T=$T_ALLOWED
	for n in ok.test www.allowed.test Exact.test.x blocked.test.com; do
		tls_ok "$n" || fail "round $round: TLS to allowed $n failed"
		http_ok "$n" || fail "round $round: HTTP to allowed $n failed"
		dns_ok "$n" || fail "round $round: DNS (UDP) for allowed $n failed"
		dns_ok "$n" +tcp || fail "round $round: DNS (TCP) for allowed $n failed"
		sclient_ok "$n" 443 || fail "round $round: s_client to allowed $n failed"
	done
	T=$T_BLOCKED
	for n in blocked.test a.b.BLOCKED.test exact.test; do
		tls_ok "$n" && fail "round $round: TLS to blocked $n connected"
		http_ok "$n" && fail "round $round: HTTP to blocked $n connected"
		dns_ok "$n" && fail "round $round: DNS (UDP) for blocked $n answered"
		dns_ok "$n" +tcp && fail "round $round: DNS (TCP) for blocked $n answered"
		sclient_ok "$n" 443 && fail "round $round: s_client to blocked $n got a certificate"
	done
	log "round $round: allowed names connect, blocked ones do not"
done
# The log line names the name the rule saw, in its normal form.
grep -q "sni hook input rule 1 .* DPT=443 NAME=a\.b\.blocked\.test MARK=0x0 VERDICT=drop$" \
	"$TMP/nfqd.log" || fail "no log line with the name: $(grep -m1 'sni hook' "$TMP/nfqd.log")"

ctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }
T=$T_ALLOWED
dns_ok www.rt.test || fail "before the add: DNS for www.rt.test failed"
ctl set add blk .rt.test >/dev/null || fail "set add .rt.test"
ctl set add blk '*.tmo.test' timeout 1h >/dev/null || fail "set add *.tmo.test"
T=$T_BLOCKED
dns_ok rt.test && fail "DNS for rt.test answered after set add .rt.test"
dns_ok www.rt.test +tcp && fail "DNS (TCP) for www.rt.test answered after the add"
tls_ok www.rt.test && fail "TLS to www.rt.test connected after the add"
dns_ok a.tmo.test && fail "DNS for a.tmo.test answered after set add *.tmo.test"
T=$T_ALLOWED
dns_ok tmo.test || fail "*.tmo.test blocked tmo.test itself"
dns_ok rt.test.ok || fail "DNS for rt.test.ok failed: not below .rt.test"
ctl -j set list blk >"$TMP/list.json" || fail "set list blk"
/usr/bin/python3 - "$TMP/list.json" <<'PY' || fail "set list blk: $(cat "$TMP/list.json")"
import json, sys
d = json.load(open(sys.argv[1]))
e = {x["element"]: x for x in d["elements"]}
assert d["type"] == "domain", d
assert e[".rt.test"]["origin"] == "runtime" and e[".rt.test"]["expires"] is None, e
assert e["*.tmo.test"]["origin"] == "runtime", e
assert 3000 < e["*.tmo.test"]["expires"] <= 3600, e
assert e["exact.test"]["origin"] == "config", e
PY
ctl set delete blk exact.test >"$TMP/del.out" 2>&1 &&
	fail "a config pattern was deleted at runtime"
grep -q "exact.test comes from the config" "$TMP/del.out" ||
	fail "no reason for the refused delete: $(cat "$TMP/del.out")"
ctl set add blk 'bücher.test' >"$TMP/add.out" 2>&1 && fail "a non-ASCII name was added"
grep -q "set blk: element 1: not printable ASCII (write a domain name as its A-label" \
	"$TMP/add.out" || fail "no A-label hint: $(cat "$TMP/add.out")"
ctl set add blk 'a..test' >"$TMP/add.out" 2>&1 && fail "a bad name was added"
grep -q "set blk: a..test: not a domain name" "$TMP/add.out" ||
	fail "no reason for a bad name: $(cat "$TMP/add.out")"
ctl set delete blk .rt.test >/dev/null || fail "set delete .rt.test"
dns_ok rt.test || fail "DNS for rt.test failed after the delete"
# A new timeout for an element there: it expires then.
ctl set add blk '*.tmo.test' timeout 2s >/dev/null || fail "set add *.tmo.test again"
T=1
end=$(deadline "$WAIT_SECONDS")
until dns_ok a.tmo.test; do
	before "$end" || fail "*.tmo.test did not expire"
done
T=$T_ALLOWED
log "runtime patterns: added, matched, listed, expired and deleted"
# A list on standard input, in the formats a set's file takes: hosts
# lines (localhost names skipped), adblock rules, comments.
printf '%s\n' '# a list' '0.0.0.0 h1.test h2.test' '||ab.test^' \
	'127.0.0.1 localhost' '! adblock comment' '[Adblock Plus 2.0]' |
	ctl set add blk - >"$TMP/bulk.out" || fail "bulk add: $(cat "$TMP/bulk.out")"
grep -q "set blk: 3 added, 0 already present" "$TMP/bulk.out" ||
	fail "bulk add: $(cat "$TMP/bulk.out")"
T=$T_BLOCKED
dns_ok h2.test && fail "DNS for h2.test (a hosts line) answered"
dns_ok x.ab.test && fail "DNS for x.ab.test (||ab.test^) answered"
T=$T_ALLOWED
dns_ok x.h2.test || fail "a hosts line's name blocked the names below it"
printf '%s\n' 'ok.test' '||ab.test/ads^' | ctl set add blk - >"$TMP/bulk.out" 2>&1 &&
	fail "a bulk add with junk succeeded"
grep -q 'set blk: "||ab.test/ads^": not a plain adblock domain rule' "$TMP/bulk.out" ||
	fail "no reason for the junk: $(cat "$TMP/bulk.out")"
dns_ok ok.test || fail "a refused bulk add added ok.test"
ctl set delete blk h1.test h2.test .ab.test >/dev/null || fail "delete the list"
dns_ok h2.test || fail "DNS for h2.test failed after the delete"
log "runtime patterns from a hosts and adblock list on standard input"
# A restart keeps them (saved at stop, restored at start).
ctl set add blk again.test >/dev/null || fail "set add again.test"
stop_nfqd
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0
grep -q "restored 1 runtime elements" "$TMP/nfqd.log" ||
	fail "pattern not restored: $(cat "$TMP/nfqd.log")"
T=$T_BLOCKED
dns_ok again.test && fail "DNS for again.test answered after the restart"
ctl reload >/dev/null || fail "reload"
dns_ok again.test && fail "DNS for again.test answered after a reload"
log "runtime patterns survive a restart and a reload"

T=$T_ALLOWED
sclient_ok www.allowed.test 4433 || fail "s_client to s_server as www.allowed.test failed"
T=$T_BLOCKED
sclient_ok www.blocked.test 4433 && fail "s_client to s_server as www.blocked.test got a certificate"
log "openssl s_client and s_server: allowed connects, blocked does not"
# The SYN to 2222 while the name rules wait for a name: the port's drop
# judges it (before, the name rules accepted it and the banner came).
in_a /usr/bin/python3 "$TMP/banner_get.py" 2222 "$T_BLOCKED" &&
	fail "a SYN to a dropped port passed the name rules: the banner came"
in_a /usr/bin/python3 "$TMP/banner_get.py" 2223 "$WAIT_SECONDS" ||
	fail "no banner from the server on 2223"
log "a port's drop after the name rules drops its SYN"
# Line protocols are not HTTP: their connections pass "http host @blk
# drop" on any port (they were malformed HTTP, INCOMPLETE, dropped),
# while an HTTP request dressed as one (an extension method, tabs, an
# empty line first) is still read, or malformed, and dropped.
T=$T_ALLOWED
for line in 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n' \
	'EHLO client.example\r\n' 'a1 LOGIN bob secret\r\n' 'USER bob\r\n'; do
	line_ok "$line" || fail "line protocol '$line' to 2525 got no answer"
done
in_a timeout $((T + 2)) ssh -o BatchMode=yes -o ConnectTimeout="$T" \
	-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
	-p 2525 192.0.2.2 true >"$TMP/ssh.out" 2>&1
grep -q "'SSH-2.0-OpenSSH" "$TMP/line.log" ||
	fail "a real ssh client's banner did not reach the server: $(cat "$TMP/ssh.out")"
log "a real ssh client's banner passes: $(grep "'SSH-2.0-OpenSSH" "$TMP/line.log" | tail -1)"
T=$T_BLOCKED
for line in 'FOO / HTTP/1.1\r\nHost: www.blocked.test\r\n\r\n' \
	'GET\t/\tHTTP/1.1\r\nHost: www.blocked.test\r\n\r\n' \
	'\r\nEHLO / HTTP/1.1\r\nHost: www.blocked.test\r\n\r\n'; do
	line_ok "$line" && fail "HTTP dressed as another protocol passed: '$line'"
done
log "line protocols pass an http host blocklist, HTTP dressed as one does not"
stop_nfqd
log "ok"
