# SPDX-License-Identifier: GPL-2.0-or-later
# tests/diff/packets.py - hostile and plain probes for the adversarial
# differential test, crafted with scapy, plus the test's own idea of which
# packets nfqd may be unable to judge with a given copy range.
#
# Every probe is one IP packet (or, for IPv4 fragments to the input hook,
# a complete set of fragments that the kernel reassembles before the hook)
# carrying its id in the IPv4 identification or the IPv6 flow label and
# DSCP 0x0b, which the test's NFQUEUE and log rules select on.
import struct

from scapy.all import (IP, IPv6, TCP, UDP, ICMP, Raw, raw, IPerror,
                       TCPerror, UDPerror, IPerror6, ICMPv6EchoRequest,
                       ICMPv6EchoReply, ICMPv6DestUnreach, ICMPv6PacketTooBig,
                       ICMPv6TimeExceeded, ICMPv6ParamProblem, ICMPv6Unknown,
                       IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrRouting, IPv6ExtHdrFragment, HBHOptUnknown,
                       Pad1, conf)
from scapy.layers.ipsec import AH
from scapy.layers.sctp import SCTP
from scapy.utils import checksum

conf.verb = 0

TOS = 0x2c              # DSCP 0x0b, ECN 0
HOP, ROUTING, FRAGMENT, AH_, NONE, DSTOPTS = 0, 43, 44, 51, 59, 60

# Address plan (see diff_adversarial.sh): P is the peer on va/va2, J the
# judged host (vb/vb2 towards P, vc/vc2 towards Q), Q the far side.
SRC4_P = ['192.0.2.1', '192.0.3.1', '10.9.1.1', '10.9.200.7', '10.8.0.1',
          '172.16.5.5', '203.0.113.9']
SRC6_P = ['2001:db8::1', '2001:db8:ff::1', '2001:db8:5::1',
          '2001:db8:5:1::9', '2001:db9::1', '2001:db8:8::1']
DST4 = {
    'input': ['192.0.2.2', '192.0.3.2', '198.51.100.7', '198.51.100.200',
              '198.51.100.%d'],
    'forward': ['198.51.101.9', '198.51.102.33', '198.51.101.%d',
                '198.51.102.%d'],
    'output': ['203.0.113.9', '203.0.113.77', '203.0.113.%d', '10.9.200.7'],
}
DST6 = {
    'input': ['2001:db8::2', '2001:db8:ff::2', '2001:db8:1::7',
              '2001:db8:1::ff', '2001:db8:1::%x'],
    'forward': ['2001:db8:2::5', '2001:db8:3::9', '2001:db8:2::%x',
                '2001:db8:3::%x'],
    'output': ['2001:db8:7::1', '2001:db8:7::77', '2001:db8:7::%x',
               '2001:db9::1'],
}
SRC4_J = ['192.0.2.2', '192.0.3.2', '198.51.100.7', '10.9.1.1']
SRC6_J = ['2001:db8::2', '2001:db8:1::7', '2001:db8:5::1']
PORTS = [0, 22, 53, 80, 443, 1000, 1500, 2500, 8000, 8080, 8081, 65535]
TTLS = [64, 64, 64, 33, 34, 35]   # 33-35 get marks (see the premark table)

# Shares of each kind of probe (by family); see the builders below.
KINDS4 = {'plain': 20, 'ip4opt': 14, 'tcpopt': 10, 'short': 14, 'frag': 14,
          'icmperr': 8, 'copyedge': 14, 'refused': 3}
KINDS6 = {'plain': 12, 'ext6': 18, 'longext6': 7, 'tcpopt': 6, 'short': 10,
          'frag': 14, 'icmperr': 7, 'bad6': 10, 'copyedge': 12, 'plenlie': 4,
          'refused': 2}
OUTPUT_ONLY, NOT_OUTPUT = {'plenlie'}, {('refused', 6)}


class Probe:
    """One probe: its id, the hook it is for, the device it leaves by
    (va/va2 from the peer, vb/vb2 from the judged host) and its frames."""

    def __init__(self, pid, hook, fam, kind):
        self.pid = pid
        self.hook = hook
        self.fam = fam
        self.kind = kind
        self.dev = None
        self.frames = []
        self.src = self.dst = None
        self.ttl = 64


def pick_addr(rng, pool, v6):
    a = rng.choice(pool)
    if '%' in a:
        a = a % rng.randint(1, 0xfffe if v6 else 254)
    return a


def payload(rng, n):
    return bytes((i * 7 + 1) & 0xff for i in range(n)) if n else b''


def tcp_flags(rng):
    return rng.choice([0x02, 0x12, 0x10, 0x04, 0x18, 0x01, 0x11, 0x20,
                       0x3f, 0x00, rng.randint(0, 255)])


def port(rng):
    # Never 0x62 in the first byte: see policygen.nft_guards().
    if rng.random() < 0.8:
        return rng.choice(PORTS)
    p = rng.randint(0, 65535)
    return p if p >> 8 != 0x62 else p ^ 0x100


def tcp_options(rng):
    opts = []
    room = rng.choice([4, 8, 12, 20, 40])
    while True:
        o = rng.choice([('MSS', 1460), ('NOP', None), ('WScale', 7),
                        ('SAckOK', b''), ('Timestamp', (1, 2)),
                        ('SAck', (1, 2)), (253, b'\x01\x02'),
                        (99, b'\0' * rng.randint(0, 6))])
        size = {'NOP': 1, 'MSS': 4, 'WScale': 3, 'SAckOK': 2,
                'Timestamp': 10, 'SAck': 10}.get(o[0]) or 2 + len(o[1])
        if size > room:
            return opts
        room -= size
        opts.append(o)


def l4(rng, proto, fam, plen, opts=False, doff=None):
    """(protocol number, bytes) of a transport header with PLEN bytes."""
    data = payload(rng, plen)
    if proto == 'tcp':
        t = TCP(sport=port(rng), dport=port(rng), seq=rng.randint(0, 1 << 31),
                flags=tcp_flags(rng), chksum=0,
                options=tcp_options(rng) if opts else [])
        if doff is not None:
            t.dataofs = doff
        return 6, raw(t / Raw(data))
    if proto == 'udp':
        return 17, raw(UDP(sport=port(rng), dport=port(rng), chksum=0) /
                       Raw(data))
    if proto == 'sctp':
        return 132, raw(SCTP(sport=port(rng), dport=port(rng),
                             tag=rng.randint(0, 1 << 31), chksum=0) /
                        Raw(data))
    if proto == 'icmp' and fam == 4:
        t = rng.choice([8, 8, 0, 3, 11, 12, 13, 5, rng.randint(0, 255)])
        return 1, raw(ICMP(type=t, code=rng.choice([0, 0, 1, 3]),
                           id=rng.randint(0, 65535)) / Raw(data))
    if proto == 'icmp':
        t = rng.choice([128, 128, 129, 135, rng.randint(0, 255)])
        t = t if t != 0x62 else 0x63     # see policygen.nft_guards()
        if t == 128:
            return 58, raw(ICMPv6EchoRequest(id=1, seq=2, data=data,
                                              cksum=0))
        if t == 129:
            return 58, raw(ICMPv6EchoReply(id=1, seq=2, data=data,
                                            cksum=0))
        return 58, raw(ICMPv6Unknown(type=t, code=0, cksum=0,
                                     msgbody=data))
    # Anything else: a protocol neither engine parses, as opaque bytes.
    num = rng.choice([47, 50, 4, 41, 135, 255, 2, 103])
    return num, payload(rng, max(plen, rng.choice([0, 4, 20])))


def l4_any(rng, fam, plen=None, short=False):
    proto = rng.choices(['tcp', 'udp', 'icmp', 'sctp', 'other'],
                        [5, 4, 3, 1, 1])[0]
    if plen is None:
        plen = rng.choice([0, 0, 8, 30, 100, 300, 1000, 1400, 3000])
    num, b = l4(rng, proto, fam, plen)
    if short:
        hdr = {6: 20, 17: 8, 1: 8, 58: 8, 132: 12}.get(num, 8)
        b = b[:rng.randint(0, hdr - 1)]
    return num, b


def ip4(p, proto, body, opts=b'', flags=0, frag=0, ttl=None):
    opts += b'\0' * (-len(opts) & 3)
    hl = 20 + len(opts)
    h = IP(version=4, ihl=hl // 4, tos=TOS, len=hl + len(body), id=p.pid,
           flags=flags, frag=frag, ttl=ttl or p.ttl, proto=proto, src=p.src,
           dst=p.dst, chksum=0)
    hdr = bytearray(raw(h)[:20] + opts)
    struct.pack_into('!H', hdr, 10, checksum(bytes(hdr)))
    return bytes(hdr) + body


def ip6(p, nh, body, plen=None):
    return raw(IPv6(tc=TOS, fl=p.pid, nh=nh, hlim=p.ttl, src=p.src,
                    dst=p.dst, plen=len(body) if plen is None else plen)) + \
        body


# IPv6 extension headers, each as (its protocol number, a builder taking
# the next header's number). The kernel parses only a hop-by-hop header
# that comes first before the hooks, and drops the packet if it is not
# valid: "valid" builds such a header.
def opts_hdr(kind, hdrlen, valid=True, rng=None):
    area = 8 * (hdrlen + 1) - 2

    def build(nh):
        if not valid:
            return bytes([nh, hdrlen]) + bytes(
                rng.randint(0, 255) for _ in range(area))
        opts, left = [], area
        while left:
            if left == 1:
                opts.append(Pad1())
                left = 0
                continue
            n = min(left, 257)
            if left - n == 1:
                n -= 2
            opts.append(HBHOptUnknown(otype=0x1e, optlen=n - 2,
                                      optdata=b'\0' * (n - 2)))
            left -= n
        cls = IPv6ExtHdrHopByHop if kind == HOP else IPv6ExtHdrDestOpt
        return raw(cls(nh=nh, len=hdrlen, autopad=0, options=opts))
    return kind, build


def routing_hdr(nseg, segleft, rtype=0):
    addrs = ['2001:db8:9::%x' % (i + 1) for i in range(nseg)]
    return ROUTING, lambda nh: raw(IPv6ExtHdrRouting(
        nh=nh, type=rtype, segleft=segleft, addresses=addrs))


def frag_hdr(offset, m, ident=7):
    return FRAGMENT, lambda nh: raw(IPv6ExtHdrFragment(
        nh=nh, offset=offset, m=m, id=ident))


def ah_hdr(plen_words):
    if plen_words < 1:
        return AH_, lambda nh: struct.pack('!BBHI', nh, plen_words, 0, 1)
    icv = b'\0' * ((plen_words + 2) * 4 - 12)
    return AH_, lambda nh: raw(AH(nh=nh, payloadlen=plen_words, spi=1,
                                  seq=2, icv=icv))


def chain(hdrs, last):
    """(first next-header number, bytes) of HDRS followed by protocol
    LAST."""
    out = b''
    nh = last
    for kind, build in reversed(hdrs):
        out = build(nh) + out
        nh = kind
    return nh, out


def rand_ext(rng, first):
    """One random extension header; FIRST: it comes right after the fixed
    header, where the kernel checks a hop-by-hop header."""
    k = rng.choice([HOP, DSTOPTS, DSTOPTS, ROUTING, FRAGMENT, AH_])
    if k in (HOP, DSTOPTS):
        hl = rng.choice([0, 0, 1, 2, 5, 30])
        return opts_hdr(k, hl, valid=first or rng.random() < 0.7, rng=rng)
    if k == ROUTING:
        n = rng.randint(0, 4)
        return routing_hdr(n, rng.randint(0, n), rng.choice([0, 0, 2, 4]))
    if k == FRAGMENT:
        return frag_hdr(0, rng.choice([0, 1]), rng.randint(0, 1 << 31))
    return ah_hdr(rng.choice([1, 2, 4, 10]))


# The builders: each fills p.frames (IP packets) for one kind of probe.
def k_plain(rng, p, ctx):
    num, b = l4_any(rng, p.fam)
    p.frames = [ip4(p, num, b) if p.fam == 4 else ip6(p, num, b)]


def ip4_options(rng, hook, room=40):
    """Options of ROOM bytes at most: valid ones where the receive path
    checks them, anything at all on the output path."""
    if room < 4:
        return b''
    if hook == 'output' and rng.random() < 0.4:
        return bytes(rng.randint(0, 255) for _ in range(
            rng.randint(1, room // 4) * 4))
    out = b''
    kinds = ['nop', 'unknown', 'rr', 'ra', 'end']
    while len(out) < room:
        left = room - len(out)
        k = rng.choice(kinds)
        if k == 'end':
            break
        if k == 'nop':
            out += b'\x01'
        elif k == 'ra' and left >= 4:
            out += b'\x94\x04\x00\x00'
        elif k == 'rr' and left >= 7:
            slots = rng.randint(1, (left - 3) // 4)
            out += bytes([7, 3 + 4 * slots, 4]) + b'\0' * (4 * slots)
            kinds.remove('rr')      # a second one is refused
        elif k == 'unknown' and left >= 2:
            n = rng.randint(2, min(left, 12))
            out += bytes([rng.choice([0x1e, 0x5e, 0x9e, 0xde]), n]) + \
                b'\0' * (n - 2)
    return out


def k_ip4opt(rng, p, ctx):
    opts = ip4_options(rng, p.hook)
    num, b = l4_any(rng, 4, short=rng.random() < 0.2)
    p.frames = [ip4(p, num, b, opts)]


def k_tcpopt(rng, p, ctx):
    r = rng.random()
    if r < 0.6:
        num, b = l4(rng, 'tcp', p.fam, rng.choice([0, 10, 200]), opts=True)
    elif r < 0.85:
        num, b = l4(rng, 'tcp', p.fam, rng.choice([0, 10, 200]),
                    doff=rng.randint(0, 4))
    else:
        # A data offset past the end of the packet.
        num, b = l4(rng, 'tcp', p.fam, rng.choice([0, 4]),
                    doff=rng.randint(6, 15))
    if p.fam == 4:
        p.frames = [ip4(p, num, b)]
    else:
        hdrs = [rand_ext(rng, i == 0) for i in range(rng.choice([0, 0, 1]))]
        nh, c = chain(hdrs, num)
        p.frames = [ip6(p, nh, c + b)]


def k_short(rng, p, ctx):
    num, b = l4_any(rng, p.fam, plen=0, short=True)
    if p.fam == 4:
        opts = ip4_options(rng, p.hook, rng.choice([0, 0, 8, 40]))
        p.frames = [ip4(p, num, b, opts)]
    else:
        hdrs = [rand_ext(rng, i == 0)
                for i in range(rng.choice([0, 0, 1, 3]))]
        nh, c = chain(hdrs, num)
        p.frames = [ip6(p, nh, c + b)]


def k_frag(rng, p, ctx):
    if p.fam == 4:
        num, b = l4_any(rng, 4, plen=rng.choice([8, 30, 100, 600]))
        if p.hook == 'input':
            # Only a whole set reaches the input hook (reassembled).
            cuts = sorted(set(rng.randint(1, max(1, (len(b) - 1) // 8)) * 8
                              for _ in range(rng.randint(1, 3))))
            cuts = [c for c in cuts if c < len(b)] or [len(b)]
            frames, start = [], 0
            for c in cuts + [len(b)]:
                if c <= start:
                    continue
                frames.append(ip4(p, num, b[start:c], frag=start // 8,
                                  flags=1 if c < len(b) else 0))
                start = c
            rng.shuffle(frames)
            p.frames = frames
            return
        r = rng.random()
        if r < 0.5:     # first fragment, transport header maybe cut
            n = rng.choice([8, 16, 24, len(b) // 8 * 8 or 8])
            p.frames = [ip4(p, num, b[:n], flags=1, frag=0)]
        else:           # later fragment
            p.frames = [ip4(p, num, b[:rng.choice([8, 16, len(b)])],
                            flags=rng.choice([0, 1, 2]),
                            frag=rng.choice([1, 2, 3, 100, 185, 8191]))]
        return
    num, b = l4_any(rng, 6, plen=rng.choice([8, 30, 100, 600]))
    pre = [rand_ext(rng, i == 0) for i in range(rng.choice([0, 0, 1, 2]))]
    post = [rand_ext(rng, False) for i in range(rng.choice([0, 0, 0, 1]))]
    r = rng.random()
    if r < 0.35:        # first fragment
        f = frag_hdr(0, 1)
        b = b[:rng.choice([len(b), 8, 16, 4])]
    elif r < 0.75:      # later fragment
        f = frag_hdr(rng.choice([1, 2, 185, 8191]), rng.choice([0, 1]))
        if rng.random() < 0.3:
            num = rng.choice([DSTOPTS, ROUTING, HOP, AH_, NONE])
        post = []
    else:               # atomic fragment
        f = frag_hdr(0, 0)
    nh, c = chain(pre + [f] + post, num)
    p.frames = [ip6(p, nh, c + b)]


def k_icmperr(rng, p, ctx):
    inner_l4 = rng.choice([TCPerror(sport=port(rng), dport=port(rng)),
                           UDPerror(sport=port(rng), dport=port(rng))])
    if p.fam == 4:
        inner = IPerror(src=p.dst, dst=p.src, id=1) / inner_l4
        e = ICMP(type=rng.choice([3, 11, 12, 4, 5]),
                 code=rng.randint(0, 3)) / inner
        b = raw(e)
        b = b[:rng.choice([len(b), 8 + 28, 8 + 20])]
        p.frames = [ip4(p, 1, b)]
        return
    inner = IPerror6(src=p.dst, dst=p.src) / inner_l4
    cls = rng.choice([ICMPv6DestUnreach, ICMPv6PacketTooBig,
                      ICMPv6TimeExceeded, ICMPv6ParamProblem])
    b = raw(cls(cksum=0) / inner)
    b = b[:rng.choice([len(b), 8 + 48, 8 + 40])]
    hdrs = [rand_ext(rng, i == 0) for i in range(rng.choice([0, 0, 1]))]
    nh, c = chain(hdrs, 58)
    p.frames = [ip6(p, nh, c + b)]


def k_ext6(rng, p, ctx):
    n = rng.choice([1, 1, 2, 3, 4, 6, 8, 12])
    hdrs = [rand_ext(rng, i == 0) for i in range(n)]
    num, b = l4_any(rng, 6, short=rng.random() < 0.15)
    nh, c = chain(hdrs, num)
    p.frames = [ip6(p, nh, c + b)]


def k_longext6(rng, p, ctx):
    n = rng.choice([17, 33, 64, 100, 200, 300, 500, 800])
    cache = {}

    def cheap(k, hl):
        # Thousands of headers: build each distinct one once.
        def build(nh):
            key = (k, hl, nh)
            if key not in cache:
                cache[key] = opts_hdr(k, hl)[1](nh)
            return cache[key]
        return k, build
    first = [opts_hdr(HOP, 0)] if rng.random() < 0.3 else []
    hdrs = first + [cheap(DSTOPTS, 0) for _ in range(n)]
    if rng.random() < 0.2:
        hdrs.append(ah_hdr(2))
    num, b = l4_any(rng, 6, plen=rng.choice([0, 20, 200]))
    nh, c = chain(hdrs, num)
    p.frames = [ip6(p, nh, c + b)]


def k_bad6(rng, p, ctx):
    r = rng.random()
    num, b = l4_any(rng, 6, plen=rng.choice([0, 20]))
    hdrs = [rand_ext(rng, i == 0) for i in range(rng.choice([0, 1, 2]))]
    nh, c = chain(hdrs, DSTOPTS if r < 0.5 else rng.choice(
        [FRAGMENT, AH_, ROUTING, HOP]))
    if r < 0.5:
        # A header that claims more than the packet holds.
        tail = bytes([num, rng.choice([1, 4, 30, 255])]) + \
            b'\0' * rng.choice([0, 2, 6, 14])
    else:
        # The last header cut short, or nothing after the chain at all.
        tail = bytes([num, 0, 0, 0, 0, 0, 0, 0])[:rng.randint(0, 7)]
    p.frames = [ip6(p, nh, c + tail)]


def k_copyedge(rng, p, ctx):
    """The transport header right across the copy boundary."""
    copy = ctx['copy']
    num, b = l4_any(rng, p.fam, plen=rng.choice([0, 100, 400]))
    if p.fam == 4:
        lo, hi = max(20, copy - 24), min(60, copy + 4)
        if lo > hi:     # out of reach of IPv4 options
            lo, hi = 20, 60
        t = rng.randint(lo, hi) // 4 * 4
        opts = ip4_options(rng, p.hook, t - 20) if t > 20 else b''
        opts = opts + b'\x01' * (t - 20 - len(opts))
        p.frames = [ip4(p, num, b, opts)]
        return
    t = rng.randint(max(48, copy - 24), copy + 8) // 8 * 8
    hdrs, left = [], t - 40
    while left >= 8:
        hl = rng.randint(0, min(left // 8 - 1, 30))
        hdrs.append(opts_hdr(DSTOPTS if hdrs or rng.random() < 0.5 else HOP,
                             hl))
        left -= 8 * (hl + 1)
    nh, c = chain(hdrs, num)
    p.frames = [ip6(p, nh, c + b)]


def k_plenlie(rng, p, ctx):
    """IPv6 payload length that disagrees with the packet: only a raw
    socket can send that, so only on the output hook."""
    hdrs = [rand_ext(rng, i == 0) for i in range(rng.choice([0, 1, 2]))]
    num, b = l4_any(rng, 6, plen=rng.choice([0, 50]))
    nh, c = chain(hdrs, num)
    body = c + b
    p.frames = [ip6(p, nh, body, plen=rng.choice(
        [0, len(body) // 2, max(0, len(body) - 8), len(body) + 64]))]


def k_refused(rng, p, ctx):
    """Headers the kernel refuses before any hook on the receive path
    (ip_rcv, ipv6_rcv), and fixes on the output path: there a raw socket's
    IPv4 total length and checksum are rewritten (and a header length
    below 5 words is refused with EINVAL, so not sent)."""
    num, b = l4_any(rng, p.fam, plen=rng.choice([0, 20]))
    if p.fam == 6:      # a payload length longer than the packet
        p.frames = [ip6(p, num, b, plen=len(b) + rng.choice([1, 8, 100]))]
        return
    f = bytearray(ip4(p, num, b))
    r = rng.choice(['csum', 'ihl', 'long', 'short'] if p.hook != 'output'
                   else ['csum', 'long'])
    if r == 'ihl':
        f[0] = 0x40 | rng.randint(0, 4)
    elif r == 'long':
        struct.pack_into('!H', f, 2, len(f) + rng.choice([1, 40]))
    elif r == 'short':
        struct.pack_into('!H', f, 2, rng.randint(0, 19))
    struct.pack_into('!H', f, 10, 0)
    struct.pack_into('!H', f, 10, checksum(bytes(f[:20])) ^
                     (0x5a5a if r == 'csum' else 0))
    p.frames = [bytes(f)]


BUILDERS = {'plain': k_plain, 'ip4opt': k_ip4opt, 'tcpopt': k_tcpopt,
            'short': k_short, 'frag': k_frag, 'icmperr': k_icmperr,
            'ext6': k_ext6, 'longext6': k_longext6, 'bad6': k_bad6,
            'copyedge': k_copyedge, 'plenlie': k_plenlie,
            'refused': k_refused}


def gen_probe(rng, pid, hook, fam, ctx):
    kinds = KINDS4 if fam == 4 else KINDS6
    names = [k for k in kinds if (k not in OUTPUT_ONLY or hook == 'output')
             and ((k, fam) not in NOT_OUTPUT or hook != 'output')]
    kind = rng.choices(names, [kinds[k] for k in names])[0]
    p = Probe(pid, hook, fam, kind)
    v6 = fam == 6
    if hook == 'output':
        p.src = pick_addr(rng, SRC6_J if v6 else SRC4_J, v6)
        p.dev = rng.choice(['vb', 'vb2'])
    else:
        p.src = pick_addr(rng, SRC6_P if v6 else SRC4_P, v6)
        p.dev = rng.choice(['va', 'va2'])
    p.dst = pick_addr(rng, (DST6 if v6 else DST4)[hook], v6)
    p.ttl = rng.choice(TTLS)
    BUILDERS[kind](rng, p, ctx)
    return p


# Which probes nfqd may be unable to judge with a copy of COPY bytes, by
# nft's reading of the packet: a field the policy language has (ports,
# TCP flags, ICMP type; for IPv6 also the walk to the transport header) in
# the packet but past the copy; an IPv6 extension header chain that runs
# off the packet, or whose payload length claims more than the packet has
# (malformed); a chain longer than LONG_CHAIN headers. Deliberately wider
# than nfqd's rule in one respect, the walk limit (nfqd's may be anything
# above LONG_CHAIN), and in another: it does not ask whether a rule needs
# the field. Every probe nfqd gives incomplete-verdict must be one of these.
L4NEED = {6: 14, 17: 4, 1: 1, 58: 1}     # bytes up to the last such field
LONG_CHAIN = 8


def maybe_incomplete(b, copy):
    L = len(b)
    if L < 20:
        return False
    if b[0] >> 4 == 4:
        ihl = (b[0] & 15) * 4
        if ihl < 20 or struct.unpack_from('!H', b, 2)[0] != L:
            return True     # malformed: the kernel lets none reach a hook
        if struct.unpack_from('!H', b, 6)[0] & 0x1fff:
            return False    # a later fragment has no transport header
        return min(ihl + L4NEED.get(b[9], 0), L) > copy
    if L < 40:
        return False
    plen = struct.unpack_from('!H', b, 4)[0]
    if plen and 40 + plen > L:
        return True         # malformed: claims more than the packet has
    # As ipv6_find_hdr(): 4 bytes of a routing or fragment header are
    # read, 2 of the others; AH (with IP6_FH_F_AUTH) and "no next header"
    # end the walk like a transport protocol.
    off, nh, n = 40, b[6], 0
    while nh in (HOP, ROUTING, DSTOPTS, FRAGMENT):
        n += 1
        need = 4 if nh in (ROUTING, FRAGMENT) else 2
        if n > LONG_CHAIN or off + need > min(L, copy):
            return True
        if nh == FRAGMENT:
            if struct.unpack_from('!H', b, off + 2)[0] & 0xfff8:
                return False    # a later fragment: no transport header
            nh, off = b[off], off + 8
        else:
            nh, off = b[off], off + (b[off + 1] + 1) * 8
        if off > L:
            return True         # malformed: the chain runs off the packet
    if nh == AH_:
        return off + 2 > min(L, copy)
    return min(off + L4NEED.get(nh, 0), L) > copy
