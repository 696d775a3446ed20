#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# names_forward.sh - the fakes of DPI evasion tools where nfqd judges
# forwarded traffic (nfqd.conf(5) NAMES, Fakes): A sends crafted TCP
# connections (scapy) through the router B to C; nfqd judges B's forward
# hook with "tls sni @blk drop" and incomplete-verdict drop. A fake
# ClientHello for an allowed name with a lower TTL than its SYN's (one
# that would die on the way to the server) before the real one for a
# blocked name: the fake incomplete and dropped, not read as the
# connection's, the real one dropped on its name. The same with the
# fake's TTL as the SYN's: the fake names the connection (the server
# takes it) and both pass. IPv4 and IPv6 (hop limit). A fake SYN with a
# low TTL before the real SYN does not lower the mark. IPv6 fakes with
# two hop-by-hop headers (zapret's hopbyhop2: routers forward them, the
# server discards them), a ClientHello and a QUIC Initial, or with a
# destination option of a type the server does not know and must
# discard, are not read either; with one hop-by-hop header or a
# destination options header of padding (the server takes them) they
# are. C counts what arrives per source port.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"
. "$TOP_SRCDIR/tests/integration/router_lib.sh"

SOCK="$TMP/nfqd.sock"

trap router_cleanup EXIT
require_root
require_cmd ip iptables ip6tables nft
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy' 2>/dev/null ||
	skip "needs /usr/bin/python3 with scapy (python3-scapy)"
/usr/bin/python3 -c 'import cryptography' 2>/dev/null ||
	skip "needs /usr/bin/python3 with cryptography (python3-cryptography)"

router_setup
router_queue
# C counts the data segments (PSH) that arrive, per source port, and
# drops everything (its kernel must not answer).
in_c nft -f - <<'NFT' || fail "nft counters in C"
table inet got {
	chain pre {
		type filter hook prerouting priority 0; policy drop;
		tcp flags & psh == psh tcp sport 30001 counter
		tcp flags & psh == psh tcp sport 30002 counter
		tcp flags & psh == psh tcp sport 30003 counter
		tcp flags & psh == psh tcp sport 30011 counter
		tcp flags & psh == psh tcp sport 30012 counter
		tcp flags & psh == psh tcp sport 30013 counter
		tcp flags & psh == psh tcp sport 30014 counter
		tcp flags & psh == psh tcp sport 30015 counter
		tcp flags & psh == psh tcp sport 30016 counter
		udp sport 41013 counter
		udp sport 41014 counter
	}
}
NFT

CONF=$(conf_file nfqd.conf <<EOF
options {
	queues { 0 };
	copy-range 65531;
	control-socket "$SOCK";
	incomplete-verdict drop;
}
set blk { type domain; elements = { ".blocked.test" }; }
hook forward {
	policy accept;
	tls sni @blk drop;
}
EOF
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"

cat >"$TMP/send.py" <<'EOF'
import logging, os, sys
logging.getLogger("scapy").setLevel(logging.ERROR)
from scapy.all import (Ether, IP, IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop,
                       HBHOptUnknown, TCP, UDP, Raw, conf, sendp)
sys.path.insert(0, sys.argv[2])
from craft import crypto, hello, initial

conf.verb = 0
mac = sys.argv[1]


blocked, allowed = hello("www.blocked.test"), hello("www.allowed.test")


# IPv6 extension headers: two hop-by-hop (the server discards it), one
# (it takes it), a destination option of an unknown type to discard
# (0x8b: it discards it), a destination options header of padding (it
# takes it).
EXT = {
    "hbh2": lambda: IPv6ExtHdrHopByHop() / IPv6ExtHdrHopByHop(),
    "hbh": lambda: IPv6ExtHdrHopByHop(),
    "dst-unknown": lambda: IPv6ExtHdrDestOpt(
        options=[HBHOptUnknown(otype=0x8b, optdata=b"\0\0\0\0")]),
    "dst": lambda: IPv6ExtHdrDestOpt(),
}


def ip(v6, ttl, ext=None):
    """IPv4, or IPv6 behind the extension headers EXT names."""
    if v6:
        h = IPv6(src="2001:db8::1", dst="2001:db8:c::2", hlim=ttl)
        return h / EXT[ext]() if ext else h
    return IP(src="192.0.2.1", dst="198.51.100.2", ttl=ttl)


def conn(sport, v6, segs, syns=(64,)):
    """SYNs of TTLS SYNS, then (TTL, bytes[, extension headers])
    segments at the start."""
    out = [Ether(dst=mac) / ip(v6, t) / TCP(sport=sport, dport=443,
                                              flags="S", seq=1000)
           for t in syns]
    for ttl, data, *ext in segs:
        out.append(Ether(dst=mac) / ip(v6, ttl, *ext) /
                   TCP(sport=sport, dport=443, flags="PA", seq=1001, ack=1) /
                   Raw(data))
    sendp(out, iface="va")


def quic(sport, dgrams):
    """IPv6 datagrams (bytes, extension headers) to port 443."""
    sendp([Ether(dst=mac) / ip(True, 64, ext) /
           UDP(sport=sport, dport=443) / Raw(d) for d, ext in dgrams],
          iface="va")


conn(30001, False, [(3, allowed), (64, blocked)])
conn(30002, False, [(64, allowed), (64, blocked)])
conn(30003, False, [(3, allowed), (64, blocked)], syns=(3, 64))
conn(30011, True, [(3, allowed), (64, blocked)])
conn(30012, True, [(64, allowed), (64, blocked)])
conn(30013, True, [(64, allowed, "hbh2"), (64, blocked)])
conn(30014, True, [(64, allowed, "hbh"), (64, blocked)])
conn(30015, True, [(64, allowed, "dst-unknown"), (64, blocked)])
conn(30016, True, [(64, allowed, "dst"), (64, blocked)])
dcid = os.urandom(8)
qok, qbad = initial(crypto(allowed[5:]), dcid), initial(crypto(blocked[5:]), dcid)
quic(41013, [(qok, "hbh2"), (qbad, None)])
quic(41014, [(qok, "hbh"), (qbad, None)])
EOF
MAC_B=$(in_b cat /sys/class/net/vb/address)
in_a /usr/bin/python3 "$TMP/send.py" "$MAC_B" \
	"$TOP_SRCDIR/tests/integration" || fail "scapy sender"

arrived() {
	in_c nft list chain inet got pre | awk -v p="$1" '
		$0 ~ "sport " p " " {
			for (i = 1; i <= NF; i++)
				if ($i == "packets") print $(i + 1)
		}'
}
counters() {
	"$NFQD_CTL" -s "$SOCK" -j stats | /usr/bin/python3 -c '
import json, sys
q = json.load(sys.stdin)["queues"][0]
print(q["packets"], q["accepted"], q["dropped"], q["incomplete"])'
}
# 9 connections: 10 SYNs, 18 data segments; 4 QUIC datagrams.
end=$(deadline "$WAIT_SECONDS")
while set -- $(counters) && [ "$1" != 32 ] && before "$end"; do
	sleep 0.1
done
log "judged $1, accepted $2, dropped $3, incomplete $4"
for p in 30001 30002 30003 30011 30012 30013 30014 30015 30016 41013 41014; do
	log "sport $p: $(arrived $p) data segments arrived"
done
# The fakes (TTL 2 and hop limit 2 at B's forward hook, below the SYN's
# 63): dropped, incomplete; the real ClientHellos dropped on the name.
[ "$(arrived 30001)" = 0 ] || fail "IPv4: a fake with a lower TTL named the connection"
[ "$(arrived 30011)" = 0 ] || fail "IPv6: a fake with a lower hop limit named the connection"
[ "$(arrived 30003)" = 0 ] || fail "a fake SYN with a low TTL lowered the mark"
# The same TTL as the SYN's: the server takes the first bytes, so they
# name the connection, and the later ones are its.
[ "$(arrived 30002)" = 2 ] || fail "IPv4: the first ClientHello did not name the connection"
[ "$(arrived 30012)" = 2 ] || fail "IPv6: the first ClientHello did not name the connection"
# Two hop-by-hop headers: the server discards the fake, so it is not read
# (dropped, incomplete); one: the server takes it, so it names the flow.
[ "$(arrived 30013)" = 0 ] || fail "a fake with two hop-by-hop headers named the connection"
[ "$(arrived 41013)" = 0 ] || fail "a QUIC fake with two hop-by-hop headers named the connection"
[ "$(arrived 30014)" = 2 ] || fail "a ClientHello with one hop-by-hop header did not name the connection"
[ "$(arrived 41014)" = 2 ] || fail "an Initial with one hop-by-hop header did not name the connection"
# A destination option of a type the server does not know, to discard:
# not read; one of padding: read.
[ "$(arrived 30015)" = 0 ] || fail "a fake with an unknown destination option named the connection"
[ "$(arrived 30016)" = 2 ] || fail "a ClientHello behind destination options of padding did not name the connection"
[ "$1" = 32 ] && [ "$2" = 20 ] && [ "$3" = 12 ] && [ "$4" = 6 ] ||
	fail "judged/accepted/dropped/incomplete $1/$2/$3/$4, want 32/20/12/6"
log "ok: fakes with a lower TTL or extension headers the server discards dropped, not read; the same TTL read"
