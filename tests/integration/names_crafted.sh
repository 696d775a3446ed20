#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# names_crafted.sh - hostile ClientHellos, DNS queries and QUIC Initials,
# crafted with scapy and sent on the veth, against "tls sni @blk drop" and
# "dns qname @blk drop" with incomplete-verdict drop (nfqd.conf(5) NAMES).
# Each TCP case is a SYN and data segments of its own connection (its own
# source port); nfqd's accepted/dropped/incomplete counters must come out
# exactly as the cases add up:
#   - a real ClientHello (OpenSSL's, via Python's ssl) for a blocked name
#     split at EVERY byte boundary into two segments: SYN and the first
#     segment accepted (the name still coming), the second dropped;
#   - the same, second segment first (out of order), and overlapping;
#   - an allowed name split likewise: all accepted;
#   - a retransmission with other bytes: incomplete, dropped;
#   - a retransmission of the dropped segment, later data: dropped;
#   - two server names, an extension length that overruns, a ClientHello
#     in several records (blocked): dropped (the first two incomplete);
#   - an allowlist: a flow's later segment naming another name is judged
#     on the flow's name;
#   - DNS: a compression loop and a pointer past the end (incomplete,
#     dropped), a blocked query (dropped), an allowed one (accepted);
#   - DNS over TCP: a blocked query after an allowed one on the same
#     connection, in its own segment or behind it (incomplete, dropped);
#   - QUIC: an Initial whose tag fails (incomplete, dropped); an Initial
#     of another DCID for a blocked name from the ports of a flow named by
#     an allowed one (dropped); the client's Initial after it took the
#     server's connection ID and a short-header packet (the flow's name:
#     accepted); a datagram not QUIC while the ClientHello is still coming
#     (incomplete, dropped), and an Initial of another DCID whose tag
#     fails: dropped themselves, the flow's next Initial judged on its
#     name; fakes for an allowed name before the real Initial (a bad
#     UDP checksum or length: not read);
#   - segments the server does not read as the stream nfqd would gather:
#     an urgent byte before the ClientHello, a decoy without ACK, with RST
#     or with a bad checksum (incomplete, dropped; the real ClientHello
#     judged: an allowed one accepted, the decoy's drop not the flow's),
#     the fakes of DPI evasion tools (an MD5 or AO option, an older
#     timestamp, a sequence number before the stream: incomplete,
#     dropped, not gathered; a lower TTL at input is this host's), a
#     SYN with another sequence number on a live flow (incomplete), bytes
#     past the 8192 behind a hole (incomplete); a ClientHello in the SYN
#     (TCP Fast Open): the SYN dropped on its name;
#   - a flood of half-open handshakes, then a reload with another
#     flow-table-size, then reloads without names and back (below).
. "$TOP_SRCDIR/tests/lib.sh"

require_root
require_cmd ip iptables
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy' 2>/dev/null ||
	skip "needs /usr/bin/python3 with scapy (python3-scapy)"
/usr/bin/python3 -c 'import cryptography' 2>/dev/null ||
	skip "needs /usr/bin/python3 with cryptography (python3-cryptography)"

ns_setup
in_b iptables -A INPUT -i vb -j NFQUEUE --queue-num 0 || fail "NFQUEUE rule"
# A's kernel answers B's SYN-ACKs and RSTs with RSTs: keep them off the count.
in_a iptables -A OUTPUT -p tcp --tcp-flags RST RST -j DROP || fail "RST rule"

SOCK="$TMP/nfqd.sock"
conf=$(conf_file nfqd.conf <<EOF
options {
	queues { 0 };
	copy-range 65531;
	stats-file "$TMP/stats";
	control-socket "$SOCK";
	incomplete-verdict drop;
	flow-table-size 8192;
}
set blk { type domain; elements = { ".blocked.test" }; }
set alw { type domain; elements = { "www.allowed.test" }; }
hook input {
	policy accept;
	tcp dport 4443 tls sni != @alw drop;
	tls sni @blk drop;
	dns qname @blk drop;
}
EOF
)
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0

cat >"$TMP/send.py" <<'EOF'
import logging, struct, sys
logging.getLogger("scapy").setLevel(logging.ERROR)
from scapy.all import Ether, IP, TCP, UDP, Raw, conf, sendp
sys.path.insert(0, sys.argv[2])
from craft import crypto, hello, initial

conf.verb = 0
mac = sys.argv[1]
out = []
want = {"accepted": 0, "dropped": 0, "incomplete": 0}
port = [20000]


def conn(segs, acc, drop, inc=0, dport=443):
    """A SYN, then (offset, bytes) segments; what nfqd must do."""
    port[0] += 1
    sp, isn = port[0], 1000
    base = Ether(dst=mac) / IP(src="192.0.2.1", dst="192.0.2.2")
    out.append(base / TCP(sport=sp, dport=dport, flags="S", seq=isn))
    for off, data in segs:
        out.append(base / TCP(sport=sp, dport=dport, flags="PA",
                              seq=isn + 1 + off, ack=1) / Raw(data))
    want["accepted"] += acc
    want["dropped"] += drop
    want["incomplete"] += inc


def conn2(segs, acc, drop, inc=0, dport=443, syn_opts=()):
    """A SYN (with TCP options SYN_OPTS), then (flags, offset, bytes, TCP
    fields; "ttl": the IP TTL, default 64) segments."""
    port[0] += 1
    sp, isn = port[0], 1000
    base = Ether(dst=mac) / IP(src="192.0.2.1", dst="192.0.2.2")
    out.append(base / TCP(sport=sp, dport=dport, flags="S", seq=isn,
                          options=list(syn_opts)))
    for flags, off, data, kw in segs:
        kw = dict(kw)
        ip = Ether(dst=mac) / IP(src="192.0.2.1", dst="192.0.2.2",
                                 ttl=kw.pop("ttl", 64))
        t = TCP(sport=sp, dport=dport, flags=flags, seq=isn + 1 + off, **kw)
        out.append(ip / t / Raw(data) if data else ip / t)
    want["accepted"] += acc
    want["dropped"] += drop
    want["incomplete"] += inc


blocked, allowed = hello("www.blocked.test"), hello("www.allowed.test")
n = len(blocked)
for k in range(1, n):
    conn([(0, blocked[:k]), (k, blocked[k:])], 2, 1)
for k in range(1, n, 7):
    conn([(k, blocked[k:]), (0, blocked[:k])], 2, 1)          # out of order
    if k + 5 < n:                                             # overlapping
        conn([(0, blocked[:k + 5]), (k, blocked[k:])], 2, 1)
for k in range(1, len(allowed), 11):
    conn([(0, allowed[:k]), (k, allowed[k:])], 3, 0)
# a retransmission with other bytes
k = n // 2
other = bytes(b ^ 0x55 for b in blocked[:k])
conn([(0, blocked[:k]), (0, other)], 2, 1, 1)
# after the drop: the segment again, and more data
conn([(0, blocked[:k]), (k, blocked[k:]), (k, blocked[k:]),
      (n, b"later data")], 2, 3)

# an urgent byte before the ClientHello: the server's kernel takes it out
# of the stream; "\0\x16\x03..." is no name to nfqd, but no ABSENT either
conn2([("PAU", 0, b"\0" + blocked, {"ack": 1, "urgptr": 1})], 1, 1, 1)
# decoys for an allowed name the server drops: no ACK, a bad checksum
conn2([("P", 0, allowed, {}), ("PA", 0, blocked, {"ack": 1})], 1, 2, 1)
conn2([("PA", 0, allowed, {"ack": 1, "chksum": 0xbad}),
       ("PA", 0, blocked, {"ack": 1})], 1, 2, 1)
# a decoy past a hole with RST (the server does not take its bytes):
# incomplete itself, the rest judged on the stream's name
conn2([("PA", 0, blocked[:10], {"ack": 1}),
       ("RA", 20, allowed[20:], {"ack": 1}),
       ("PA", 10, blocked[10:20], {"ack": 1}),
       ("PA", 20, blocked[20:], {"ack": 1})], 3, 2, 1)
# a decoy anybody who knows the ports can send (no ACK, a bad checksum:
# no sequence number to guess) does not end an allowed flow whose name
# is still coming: the decoy incomplete and dropped, the ClientHello
# after it accepted on its name
conn2([("P", 0, b"junk", {}), ("PA", 0, allowed, {"ack": 1})], 2, 1, 1)
conn2([("PA", 0, b"junk", {"ack": 1, "chksum": 0xbad}),
       ("PA", 0, allowed, {"ack": 1})], 2, 1, 1)
# fakes of DPI evasion tools (zapret's --dpi-desync=fake): a ClientHello
# for an allowed name the server never takes, before the real one for a
# blocked name. A TCP MD5 or AO signature the SYN did not have (a server
# without keys drops it), a timestamp older than the SYN's (PAWS drops
# it): the fake incomplete and dropped, not gathered; the real one
# dropped on its name. A TTL lower than the SYN's tells a fake only
# where the packet goes on to another host (unit tests: test_flow.c);
# here, at input, this host takes it: its bytes are the stream's.
conn2([("PA", 0, allowed, {"ack": 1, "ttl": 3}),
       ("PA", 0, blocked, {"ack": 1})], 3, 0, 0)
conn2([("PA", 0, allowed, {"ack": 1, "options": [(19, bytes(16))]}),
       ("PA", 0, blocked, {"ack": 1})], 1, 2, 1)
conn2([("PA", 0, allowed, {"ack": 1, "options": [(29, bytes(14))]}),
       ("PA", 0, blocked, {"ack": 1})], 1, 2, 1)
conn2([("PA", 0, allowed, {"ack": 1,
                           "options": [("Timestamp", (900, 0))]}),
       ("PA", 0, blocked, {"ack": 1,
                           "options": [("Timestamp", (1001, 5))]})],
      1, 2, 1, syn_opts=[("Timestamp", (1000, 0))])
# the same TTL, timestamps that go on: the allowed name accepted
conn2([("PA", 0, allowed[:50], {"ack": 1, "ttl": 64,
                                "options": [("Timestamp", (1000, 5))]}),
       ("PA", 50, allowed[50:], {"ack": 1,
                                 "options": [("Timestamp", (1002, 5))]})],
      3, 0, 0, syn_opts=[("Timestamp", (1000, 0))])
# a fake before the stream's start (zapret's badseq): the server drops it;
# incomplete itself, the flow not ended by it
conn2([("PA", -600, b"junk", {"ack": 1}), ("PA", 0, allowed, {"ack": 1})],
      2, 1, 1)
# a segment that begins before the stream's start and goes on into it
# (zapret's seqovl): the server takes the bytes from the start, and so
# does nfqd
conn2([("PA", -10, b"x" * 10 + blocked, {"ack": 1})], 1, 1, 0)
conn2([("PA", -10, b"x" * 10 + allowed, {"ack": 1})], 2, 0, 0)
# a SYN with another sequence number: no new start of the stream
conn2([("S", 4000, b"", {}), ("PA", 0, blocked, {"ack": 1})], 1, 2, 1)
# bytes past the 8192 behind a hole
conn2([("PA", 9000, b"x", {"ack": 1})], 1, 1, 1)
# TCP Fast Open: the ClientHello in the SYN, dropped on its name; its
# next segment with it
port[0] += 1
tfo = Ether(dst=mac) / IP(src="192.0.2.1", dst="192.0.2.2")
out.append(tfo / TCP(sport=port[0], dport=443, flags="S", seq=1000) /
           Raw(blocked))
out.append(tfo / TCP(sport=port[0], dport=443, flags="PA", ack=1,
                     seq=1001 + n) / Raw(b"later"))
want["dropped"] += 2

# hand-made ClientHellos (records of one handshake message)
def ch(exts):
    body = b"\x03\x03" + bytes(32) + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"
    body += struct.pack(">H", len(exts)) + exts
    hs = b"\x01" + struct.pack(">I", len(body))[1:] + body
    return hs


def sni(*names):
    lst = b"".join(b"\x00" + struct.pack(">H", len(x)) + x for x in names)
    data = struct.pack(">H", len(lst)) + lst
    return b"\x00\x00" + struct.pack(">H", len(data)) + data


def records(hs, size):
    return b"".join(b"\x16\x03\x01" + struct.pack(">H", len(hs[i:i + size]))
                    + hs[i:i + size] for i in range(0, len(hs), size))


conn([(0, records(ch(sni(b"a.test", b"b.test")), 16384))], 1, 1, 1)
bad = bytearray(records(ch(sni(b"x.test")), 16384))
bad[-10] += 1     # the server_name extension's length overruns
conn([(0, bytes(bad))], 1, 1, 1)
conn([(0, records(ch(sni(b"www.blocked.test")), 10))], 1, 1)
conn([(0, records(ch(sni(b"www.allowed.test")), 10))], 2, 0)
# an allowlist (port 4443): a flow named www.allowed.test, then a segment
# holding a whole ClientHello for another name. The flow keeps its first
# name, so the segment is accepted; the look-ahead, which reads each
# segment alone, saw the other name, and its lookups must not be used.
first = hello("www.allowed.test")
conn([(0, first), (len(first), hello("www.other.test"))], 3, 0, dport=4443)

# DNS over UDP
def q(name, ptr=None):
    b = struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0)
    if ptr is not None:
        b += ptr
    else:
        for l in name.split("."):
            b += bytes([len(l)]) + l.encode()
        b += b"\x00"
    return b + b"\x00\x01\x00\x01"


udp = Ether(dst=mac) / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=5353, dport=53)
for payload, acc, drop, inc in ((q("", b"\xc0\x0c"), 0, 1, 1),
                                (q("", b"\xc3\xff"), 0, 1, 1),
                                (q("ads.blocked.test"), 0, 1, 0),
                                (q("www.allowed.test"), 1, 0, 0)):
    out.append(udp / Raw(payload))
    want["accepted"] += acc
    want["dropped"] += drop
    want["incomplete"] += inc

# DNS over TCP: an allowed query, then a blocked one on the same
# connection (a later segment, or behind the first in one segment):
# INCOMPLETE, not judged on the first query's name.
def tq(name):
    m = q(name)
    return struct.pack(">H", len(m)) + m


q1, q2 = tq("www.allowed.test"), tq("ads.blocked.test")
conn([(0, q1), (len(q1), q2)], 2, 1, 1, dport=53)
conn([(0, q1 + q2)], 1, 1, 1, dport=53)
conn([(0, tq("x.blocked.test"))], 1, 1, 0, dport=53)

# QUIC: a v1 Initial header with garbage where the protected payload is
qi = (b"\xc3\x00\x00\x00\x01\x08" + bytes(range(8)) + b"\x00\x00" +
      struct.pack(">H", 0x4000 | 1180) + bytes(1180))
out.append(Ether(dst=mac) / IP(src="192.0.2.1", dst="192.0.2.2") /
           UDP(sport=40000, dport=443) / Raw(qi))
want["dropped"] += 1
want["incomplete"] += 1

# QUIC Initials that decrypt (RFC 9001): craft.py.
import os


def quic(sport, dgrams, acc, drop, inc=0):
    """Datagrams: bytes, or (bytes, {"ttl": IP TTL, "chksum": UDP's})."""
    for d in dgrams:
        d, kw = d if isinstance(d, tuple) else (d, {})
        kw = dict(kw)
        ip = IP(src="192.0.2.1", dst="192.0.2.2", ttl=kw.pop("ttl", 64))
        out.append(Ether(dst=mac) / ip / UDP(sport=sport, dport=443, **kw) /
                   Raw(d))
    want["accepted"] += acc
    want["dropped"] += drop
    want["incomplete"] += inc


da, db, ds = os.urandom(8), os.urandom(8), os.urandom(8)
qok, qbad = hello("www.allowed.test")[5:], blocked[5:]
# Another connection (another DCID) from the ports of a flow named
# www.allowed.test, for a blocked name: judged on its own name.
quic(41001, [initial(crypto(qok), da), initial(crypto(qbad), db)], 1, 1)
# The client's ACK after the server's Initial (the server's connection
# ID, its first DCID's keys) and a short-header packet: the flow's name.
quic(41002, [initial(crypto(qok), da), initial(b"\x02\x00\x00\x00\x00", ds, da),
             b"\x43" + ds + bytes(40)], 3, 0)
# While the ClientHello is still coming, a datagram that is no QUIC
# long-header packet is INCOMPLETE, not pending.
quic(41003, [initial(crypto(qok[:100]), da), b"not quic at all"], 1, 1, 1)
# Such a datagram, or an Initial of another DCID whose tag fails, is
# anybody's who knows the ports (the server discards it): it does not end
# the flow, whose next Initial completes the allowed name.
quic(41004, [initial(crypto(qok[:100]), da), b"not quic at all",
             qi[:6] + db + qi[14:],
             initial(crypto(qok[100:], 100), da)], 2, 2, 2)
# Fakes of DPI evasion tools for QUIC: an Initial for an allowed name the
# server never takes, then the real one for a blocked name, of the same
# DCID. A bad UDP checksum, a UDP length shorter than the datagram: the
# fake incomplete, not gathered, the real one dropped on its name. (A
# lower TTL, where packets go on to another host: unit tests; at input
# this host takes the first Initial whatever its TTL.)
quic(41005, [(initial(crypto(qok), da), {"chksum": 0xbad}),
             initial(crypto(qbad), da)], 0, 2, 1)
quic(41008, [(initial(crypto(qok), da), {"len": 100}),
             initial(crypto(qbad), da)], 0, 2, 1)
quic(41006, [(initial(crypto(qok), da), {"ttl": 3}),
             initial(crypto(qbad), da)], 2, 0, 0)
# the client's own Initials, the same TTL: the allowed name
quic(41007, [initial(crypto(qok[:100]), da),
             initial(crypto(qok[100:], 100), da),
             initial(crypto(qok), da)], 3, 0)

sendp(out, iface="va")
print(len(out), want["accepted"], want["dropped"], want["incomplete"])
EOF
CRAFT="$TOP_SRCDIR/tests/integration"	# craft.py
set -- $(in_a /usr/bin/python3 "$TMP/send.py" "$(in_b cat /sys/class/net/vb/address)" "$CRAFT") ||
	fail "send.py"
total=$1 acc=$2 drop=$3 inc=$4
log "sent $total packets: want $acc accepted, $drop dropped, $inc incomplete"

counters() {
	"$NFQD_CTL" -s "$SOCK" -j stats | /usr/bin/python3 -c '
import json, sys
q = json.load(sys.stdin)["queues"][0]
print(q["packets"], q["accepted"], q["dropped"], q["incomplete"])'
}
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	set -- $(counters)
	[ "$1" -ge "$total" ] && break
	sleep 0.1
done
[ "$1" -eq "$total" ] || fail "nfqd saw $1 packets of $total"
[ "$2" -eq "$acc" ] && [ "$3" -eq "$drop" ] && [ "$4" -eq "$inc" ] ||
	fail "accepted/dropped/incomplete $2/$3/$4, want $acc/$drop/$inc"
log "ok: $2 accepted, $3 dropped, $4 incomplete, as the cases add up"

# A flood of half-open handshakes from random sources: a SYN and the first
# half of a ClientHello each, more flows than the table holds
# (flow-table-size 8192) and
# more gathering than it allows (4096), for a blocked name. The table
# stays within its bounds, evictions are counted, and no second half of the
# first flows is accepted: those whose state is gone (evicted, or never
# gathered for want of room) are INCOMPLETE, the others blocked by name.
cat >"$TMP/flood.py" <<'EOF'
import logging, random, sys
logging.getLogger("scapy").setLevel(logging.ERROR)
from scapy.all import Ether, IP, TCP, Raw, conf, sendp
sys.path.insert(0, sys.argv[4])
from craft import hello

conf.verb = 0
mac, n, phase = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ch = hello("www.blocked.test")
k = len(ch) // 2
random.seed(7)
out = []
for j in range(n):
    src = "10.%d.%d.%d" % (random.randrange(256), random.randrange(256),
                          random.randrange(1, 255))
    base = Ether(dst=mac) / IP(src=src, dst="192.0.2.2")
    sp = 1024 + j % 60000
    if phase == "open":
        out.append(base / TCP(sport=sp, dport=443, flags="S", seq=5000))
        out.append(base / TCP(sport=sp, dport=443, flags="PA", seq=5001,
                              ack=1) / Raw(ch[:k]))
    elif j < 100:
        out.append(base / TCP(sport=sp, dport=443, flags="PA",
                              seq=5001 + k, ack=1) / Raw(ch[k:]))
sendp(out, iface="va")
print(len(out))
EOF
in_b ip route add 10.0.0.0/8 dev vb || fail "route"
mac=$(in_b cat /sys/class/net/vb/address)
set -- $(counters)
p0=$1 a0=$2 d0=$3 i0=$4
FLOOD=30000
sent=$(in_a /usr/bin/python3 "$TMP/flood.py" "$mac" $FLOOD open "$CRAFT") || fail "flood"
end=$(deadline 60)
while before "$end"; do
	set -- $(counters)
	[ "$1" -ge $((p0 + sent)) ] && break
	sleep 0.1
done
[ "$1" -eq $((p0 + sent)) ] || fail "nfqd saw $(( $1 - p0 )) of $sent flood packets"
flows() {
	"$NFQD_CTL" -s "$SOCK" -j stats | /usr/bin/python3 -c '
import json, sys
q = json.load(sys.stdin)["queues"][0]
print(q["flows"], q["flows_pending"], q["flow_evictions"], q["names"],
      q["names_incomplete"])'
}
set -- $(flows)
log "after $FLOOD half-open handshakes: flows $1, pending $2, evictions $3, names $4, incomplete $5"
[ "$1" -le 8192 ] && [ "$2" -le 4096 ] || fail "flow table past its bounds: $*"
[ "$3" -ge $((FLOOD - 8192)) ] || fail "evictions $3, want >= $((FLOOD - 8192))"
rss=$(awk '/^VmRSS/ { print $2 }' /proc/$NFQD_PID/status)
log "nfqd VmRSS $rss kB"
if [ "${SAN_MODE:-none}" = none ]; then
	[ "$rss" -lt 200000 ] || fail "nfqd uses $rss kB"
else
	log "VmRSS not bounded under $SAN_MODE: the sanitizer's shadow memory and quarantine"
fi
# The first flows were evicted: their second halves are INCOMPLETE.
set -- $(counters)
p1=$1 a1=$2 d1=$3 i1=$4
sent=$(in_a /usr/bin/python3 "$TMP/flood.py" "$mac" $FLOOD close "$CRAFT") || fail "close"
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	set -- $(counters)
	[ "$1" -ge $((p1 + sent)) ] && break
	sleep 0.1
done
[ "$2" -eq "$a1" ] && [ "$3" -eq $((d1 + sent)) ] && [ "$4" -gt "$i1" ] ||
	fail "second halves of the first flows: accepted $(( $2 - a1 )), dropped $(( $3 - d1 )), incomplete $(( $4 - i1 )) of $sent"
log "ok: the $sent second halves of the first flows were all dropped, $(( $4 - i1 )) as incomplete (evicted or never gathered), the rest on their name"

# A reload with another flow-table-size moves the flows to a table of
# that size (a full bucket's least recently seen evicted): the gauge
# stays within it, and the table keeps working.
sed -i 's/flow-table-size 8192;/flow-table-size 4096;/' "$conf"
"$NFQD_CTL" -s "$SOCK" reload >/dev/null || fail "reload failed"
end=$(deadline "$WAIT_SECONDS")
until grep -q "flow table resized to 4096 flows" "$TMP/nfqd.log" || ! before "$end"; do
	sleep 0.1
done
grep -q "flow table resized to 4096 flows" "$TMP/nfqd.log" ||
	fail "no new flow table after the reload: $(tail -5 "$TMP/nfqd.log")"
in_a /usr/bin/python3 "$TMP/send.py" "$mac" "$CRAFT" >/dev/null || fail "send.py again"
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	set -- $(flows)
	[ "$1" -le 4096 ] && [ "$1" -gt 0 ] && break
	sleep 0.1
done
[ "$1" -le 4096 ] && [ "$1" -gt 0 ] || fail "after the reload: flows $*"
log "ok: reload with flow-table-size 4096: $(grep -o 'flow table resized.*' "$TMP/nfqd.log"), flows $1"

# A reload to a policy without name matches and back: a connection whose
# SYN came before, and whose ClientHello (blocked) went by unfollowed in
# between, is INCOMPLETE afterwards (its state lost), not pending for
# ever on the hole where its first bytes were.
cat >"$TMP/late.py" <<'EOF'
import logging, sys
logging.getLogger("scapy").setLevel(logging.ERROR)
from scapy.all import Ether, IP, TCP, Raw, conf, sendp
sys.path.insert(0, sys.argv[3])
from craft import hello

conf.verb = 0
mac, phase = sys.argv[1], sys.argv[2]
ch = hello("www.blocked.test")
base = Ether(dst=mac) / IP(src="192.0.2.1", dst="192.0.2.2")
t = TCP(sport=30001, dport=443, flags="PA", ack=1)
if phase == "syn":
    p = base / TCP(sport=30001, dport=443, flags="S", seq=7000)
elif phase == "hello":
    t.seq = 7001
    p = base / t / Raw(ch)
else:
    t.seq = 7001 + len(ch)
    p = base / t / Raw(b"later")
sendp([p], iface="va")
EOF
late() {	# phase: send it, wait until nfqd has judged it
	set -- "$1" $(counters)
	in_a /usr/bin/python3 "$TMP/late.py" "$mac" "$1" "$CRAFT" || fail "late.py $1"
	local p0=$2 end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		set -- "$1" $(counters)
		[ "$2" -gt "$p0" ] && break
		sleep 0.1
	done
}
cp "$conf" "$TMP/names.conf"
late syn
sed '/tls sni\|dns qname/d' "$TMP/names.conf" >"$conf"
"$NFQD_CTL" -s "$SOCK" reload >/dev/null || fail "reload without names"
late hello
cp "$TMP/names.conf" "$conf"
"$NFQD_CTL" -s "$SOCK" reload >/dev/null || fail "reload with names"
set -- $(counters)
a1=$2 d1=$3 i1=$4
late later
set -- $(counters)
[ "$2" -eq "$a1" ] && [ "$3" -eq $((d1 + 1)) ] && [ "$4" -eq $((i1 + 1)) ] ||
	fail "after names came back: the unfollowed flow's next segment accepted $(( $2 - a1 )), dropped $(( $3 - d1 )), incomplete $(( $4 - i1 )), want dropped as incomplete"
log "ok: after a reload without names and back, an unfollowed flow's next segment is dropped as incomplete"
stop_nfqd
