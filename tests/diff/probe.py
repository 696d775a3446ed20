#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/diff/probe.py - the differential test's packet driver: sends the
# same crafted probes through two namespace pairs (nfqd's and nft's) and
# prints, per probe, whether it arrived on each side.
#
# usage: probe.py DIR SEND1 RECV1 SEND2 RECV2
#   DIR "in":  SEND* are the peers (devices va, va2), RECV* the judged
#              hosts: probes pass the judged host's input hook.
#   DIR "out": SEND* are the judged hosts (vb, vb2), RECV* the peers:
#              probes pass the judged host's output hook.
# Output: one line per probe "ID ARRIVED1 ARRIVED2 DESCRIPTION", then
# "summary N".
import ctypes
import os
import random
import select
import socket
import struct
import sys
import time

MAGIC = b'NFQDPRB!'
CLONE_NEWNET = 0x40000000
IPPROTO_SCTP = 132
SO_BINDTODEVICE = 25

libc = ctypes.CDLL(None, use_errno=True)


def enter(ns):
    fd = os.open('/run/netns/' + ns, os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        sys.exit('setns %s failed: errno %d' % (ns, ctypes.get_errno()))
    os.close(fd)


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def l4_header(p, payload):
    proto = p['proto']
    if proto == 'tcp':
        return struct.pack('!HHIIBBHHH', p['sport'], p['dport'], 1, 0,
                           5 << 4, p['flags'], 8192, 0, 0)
    if proto == 'udp':
        return struct.pack('!HHHH', p['sport'], p['dport'],
                           8 + len(payload), 0)
    if proto == 'sctp':
        return struct.pack('!HHII', p['sport'], p['dport'], 0, 0)
    # icmp / icmpv6 echo request, checksummed so no one drops it early
    t = 8 if p['fam'] == 4 else 128
    h = struct.pack('!BBHHH', t, 0, 0, 0x4242, p['id'] & 0xffff)
    data = h + payload
    if p['fam'] == 6:
        # ICMPv6 raw sockets verify the checksum over a pseudo-header.
        data = (socket.inet_pton(socket.AF_INET6, p['src']) +
                socket.inet_pton(socket.AF_INET6, p['dst']) +
                struct.pack('!IxxxB', len(h + payload), 58)) + data
    return struct.pack('!BBHHH', t, 0, csum(data), 0x4242,
                       p['id'] & 0xffff)


PROTO_NUM = {'tcp': 6, 'udp': 17, 'sctp': IPPROTO_SCTP, 'icmp': 1,
             'icmpv6': 58}


def build(p):
    payload = b'x' * p['pad'] + MAGIC + struct.pack('!I', p['id'])
    l4 = l4_header(p, payload) + payload
    num = PROTO_NUM[p['proto']]
    if p['fam'] == 4:
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(l4), 0, 0,
                         p['ttl'], num, 0, socket.inet_aton(p['src']),
                         socket.inet_aton(p['dst']))
        return ip + l4
    ip = struct.pack('!IHBB16s16s', 0x60000000, len(l4), num, p['ttl'],
                     socket.inet_pton(socket.AF_INET6, p['src']),
                     socket.inet_pton(socket.AF_INET6, p['dst']))
    return ip + l4


def probes(direction):
    # Sources and destinations are kept apart so that no receiver sees
    # one of its own addresses as a source (a martian).
    if direction == 'in':
        src4 = ['192.0.2.1', '10.9.1.1', '10.8.0.1', '203.0.113.9']
        dst4 = ['192.0.2.2', '198.51.100.2', '198.51.100.200']
        src6 = ['2001:db8::1', '2001:db8:5::1', '2001:db9::1']
        dst6 = ['2001:db8::2', '2001:db8:1::2', '2001:db8:1::ff']
        devs = ['va', 'va2']
    else:
        src4 = ['192.0.2.2', '10.9.1.1', '203.0.113.9']
        dst4 = ['192.0.2.1', '198.51.100.2', '198.51.100.200']
        src6 = ['2001:db8::2', '2001:db8:5::1', '2001:db9::1']
        dst6 = ['2001:db8::1', '2001:db8:1::2', '2001:db8:1::ff']
        devs = ['vb', 'vb2']
    ports = [22, 53, 80, 1000, 1500, 2500, 8000, 8080, 8081]
    rnd = random.Random(4242)
    out = []
    for i in range(96):
        fam = 4 if i % 5 < 3 else 6
        proto = ['tcp', 'udp', 'tcp', 'udp', 'icmp', 'sctp'][i % 6]
        if proto == 'icmp' and fam == 6:
            proto = 'icmpv6'
        out.append({
            'id': i, 'fam': fam, 'proto': proto,
            'src': rnd.choice(src4 if fam == 4 else src6),
            'dst': rnd.choice(dst4 if fam == 4 else dst6),
            'sport': rnd.choice(ports), 'dport': rnd.choice(ports),
            'flags': rnd.choice([0x02, 0x12, 0x10, 0x04, 0x18, 0x01]),
            'ttl': rnd.choice([64, 64, 33, 34, 35]),
            'pad': rnd.choice([0, 10, 90, 150, 300]),
            'dev': devs[(i // 7) % 2],
        })
    return out


def describe(p):
    s = '%s %s %s>%s' % (p['dev'], p['proto'], p['src'], p['dst'])
    if p['proto'] in ('tcp', 'udp', 'sctp'):
        s += ' %d>%d' % (p['sport'], p['dport'])
    if p['proto'] == 'tcp':
        s += ' flags=0x%02x' % p['flags']
    return s + ' ttl=%d pad=%d' % (p['ttl'], p['pad'])


def send_sockets(ns, devs):
    enter(ns)
    socks = {}
    for dev in devs:
        for fam, af in ((4, socket.AF_INET), (6, socket.AF_INET6)):
            s = socket.socket(af, socket.SOCK_RAW, socket.IPPROTO_RAW)
            s.setsockopt(socket.SOL_SOCKET, SO_BINDTODEVICE, dev.encode())
            socks[(dev, fam)] = s
    return socks


def recv_sockets(ns):
    enter(ns)
    socks = []
    for proto in (6, 17, IPPROTO_SCTP, 1):
        socks.append((4, proto, socket.socket(socket.AF_INET,
                                              socket.SOCK_RAW, proto)))
    for proto in (6, 17, IPPROTO_SCTP, 58):
        socks.append((6, proto, socket.socket(socket.AF_INET6,
                                              socket.SOCK_RAW, proto)))
    for _, _, s in socks:
        s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    return socks


def probe_id(fam, proto, data):
    """The probe id at the end of a received probe, or None."""
    if fam == 4:
        data = data[(data[0] & 0xf) * 4:]
    if len(data) < 12 or data[-12:-4] != MAGIC:
        return None
    # ICMP errors quote probes: only echo requests count.
    if proto in (1, 58) and data[0] not in (8, 128):
        return None
    return struct.unpack('!I', data[-4:])[0]


def main():
    t0 = time.monotonic()
    direction, send1, recv1, send2, recv2 = sys.argv[1:6]
    plist = probes(direction)
    devs = sorted({p['dev'] for p in plist})
    tx = [send_sockets(send1, devs), send_sockets(send2, devs)]
    rx = [recv_sockets(recv1), recv_sockets(recv2)]
    seen = [set(), set()]
    t_setup = time.monotonic()

    def drain(deadline):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            socks = [s for side in rx for _, _, s in side]
            r, _, _ = select.select(socks, [], [], left)
            for side in (0, 1):
                for fam, proto, s in rx[side]:
                    if s not in r:
                        continue
                    while True:
                        try:
                            data = s.recv(65535)
                        except BlockingIOError:
                            break
                        i = probe_id(fam, proto, data)
                        if i is not None:
                            seen[side].add(i)

    for p in plist:
        pkt = build(p)
        for side in (0, 1):
            try:
                tx[side][(p['dev'], p['fam'])].sendto(pkt, (p['dst'], 0))
            except PermissionError:
                pass    # dropped in the sender's own output hook
        if p['id'] % 16 == 15:
            drain(time.monotonic() + 0.002)
    # Wait for a quiet spell with both sides agreeing; a machine under
    # load may hold a verdict back for seconds (nfqd waiting for a CPU),
    # so a disagreement waits longer: WAIT_SECONDS (the tests' deadline).
    patience = float(os.environ.get('WAIT_SECONDS', 30))
    t_sent = time.monotonic()
    while True:
        before = (len(seen[0]), len(seen[1]))
        drain(time.monotonic() + 0.06)
        waited = time.monotonic() - t_sent
        if before == (len(seen[0]), len(seen[1])) and \
                (seen[0] == seen[1] or waited > patience):
            break
    if os.environ.get('DIFF_DEBUG'):
        sys.stderr.write('probe: setup %.3f s, send %.3f s\n' %
                         (t_setup - t0, t_sent - t_setup))
    for p in plist:
        print('%d %d %d %s' % (p['id'], p['id'] in seen[0],
                               p['id'] in seen[1], describe(p)))
    print('summary %d' % len(plist))


if __name__ == '__main__':
    main()
