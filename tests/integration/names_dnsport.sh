#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# names_dnsport.sh - the dns-ports option (nfqd.conf(5)): DNS queries to a
# resolver on port 5353 are judged by "dns qname" only when 5353 is one
# of the dns-ports. kdig over UDP and TCP to a scripted resolver that
# listens on 53 and 5353; a reload that takes 5353 out lets the blocked
# name through on 5353 again (and still not on 53). Bad values are
# refused by nfqd -t with the fix in the message.
. "$TOP_SRCDIR/tests/lib.sh"

require_root
require_cmd ip iptables kdig
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"

# Refused values, each with the way to write it.
for bad in '0' '{ 53, 70000 }' '5300-5400' '"dns"'; do
	printf 'options { dns-ports %s; }\n' "$bad" >"$TMP/bad.conf"
	out=$("$NFQD" -t -c "$TMP/bad.conf" 2>&1) &&
		fail "nfqd -t accepted dns-ports $bad"
	case $out in
	*"dns-ports"*) ;;
	*) fail "nfqd -t on dns-ports $bad: $out" ;;
	esac
done
log "nfqd -t refuses bad dns-ports values: $(echo "$out" | head -n 1)"

ns_setup
in_b iptables -A INPUT -i vb -j NFQUEUE --queue-num 0 || fail "NFQUEUE rule"

cat >"$TMP/dns.py" <<'PY'
# Answers every A query with 192.0.2.2 over UDP and TCP, ports 53 and 5353.
import socket, struct, threading

def answer(q):
    hdr = q[:2] + b"\x81\x80" + q[4:6] + b"\x00\x01\x00\x00\x00\x00"
    end = 12
    while q[end]:
        end += q[end] + 1
    end += 5
    rr = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + bytes([192, 0, 2, 2])
    return hdr + q[12:end] + rr

def udp(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("192.0.2.2", port))
    while True:
        q, a = s.recvfrom(4096)
        s.sendto(answer(q), a)

def serve(c):
    # A connection of its own: a blocked client's, whose query never
    # comes, must not hold up the next one.
    c.settimeout(5)
    try:
        n = struct.unpack(">H", c.recv(2, socket.MSG_WAITALL))[0]
        r = answer(c.recv(n, socket.MSG_WAITALL))
        c.sendall(struct.pack(">H", len(r)) + r)
    except Exception:
        pass
    c.close()

def tcp(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("192.0.2.2", port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()

for p in (53, 5353):
    threading.Thread(target=tcp, args=(p,), daemon=True).start()
    threading.Thread(target=udp, args=(p,), daemon=True).start()
threading.Event().wait()
PY
ip netns exec "$NS_B" /usr/bin/python3 "$TMP/dns.py" >"$TMP/dns.log" 2>&1 &
bg_pid $!

write_conf() {	# the options line's dns-ports, or nothing for the default
	cat >"$TMP/nfqd.conf" <<EOC
options {
	queues { 0 };
	copy-range 65531;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
	$1
}
hook input {
	policy accept;
	dns qname "blocked.test" drop;
}
EOC
}
write_conf "dns-ports { 53, 5353 };"
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0

dns_ok() {	# NAME PORT [+tcp]
	in_a kdig +short +time=2 +retry=0 ${3:-} -p "$2" @192.0.2.2 "$1" A \
		2>/dev/null | grep -q 192.0.2.2
}
for i in $(seq 1 100); do
	dns_ok ok.test 5353 && dns_ok ok.test 53 && break
	[ "$i" = 100 ] && fail "resolver not reachable through nfqd: $(cat "$TMP/nfqd.log" "$TMP/dns.log")"
	sleep 0.1
done

for p in 53 5353; do
	for t in "" +tcp; do
		dns_ok ok.test "$p" "$t" || fail "ok.test on port $p $t not answered"
		dns_ok blocked.test "$p" "$t" &&
			fail "dns-ports { 53, 5353 }: blocked.test on port $p $t answered"
	done
done
log "dns-ports { 53, 5353 }: blocked.test is dropped on both ports, UDP and TCP; ok.test answered"

# The default again (53 only), by a reload: 5353 is no DNS port any more.
write_conf ""
"$NFQD_CTL" -s "$TMP/nfqd.sock" reload >/dev/null || fail "reload failed"
for i in $(seq 1 100); do
	dns_ok blocked.test 5353 && break
	[ "$i" = 100 ] && fail "after the reload to the default, blocked.test on 5353 still not answered"
	sleep 0.1
done
dns_ok blocked.test 5353 +tcp || fail "default dns-ports: blocked.test on 5353 over TCP not answered"
dns_ok blocked.test 53 && fail "default dns-ports: blocked.test on 53 answered"
dns_ok blocked.test 53 +tcp && fail "default dns-ports: blocked.test on 53 over TCP answered"
log "after a reload to the default: 5353 is not judged by name, 53 still is"
stop_nfqd
log "ok"
