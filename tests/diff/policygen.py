# SPDX-License-Identifier: GPL-2.0-or-later
# tests/diff/policygen.py - random policies for the adversarial
# differential test. One description (named sets, then per hook a policy
# and rules of matches) is rendered twice: as nfqd.conf and as an nft
# ruleset that means the same.
import ipaddress

HOOKS = ('input', 'forward', 'output')

# Addresses the probes use (see packets.py) and their neighbourhood, so
# that rules hit often.
ADDR4 = ['192.0.2.1', '192.0.3.1', '10.9.1.1', '10.9.200.7', '10.8.0.1',
         '172.16.5.5', '192.0.2.2', '192.0.3.2', '198.51.100.7',
         '198.51.100.200', '198.51.101.9', '198.51.102.33', '203.0.113.9',
         '203.0.113.77']
PFX4 = ['10.9.0.0/16', '10.0.0.0/8', '198.51.100.0/25', '198.51.100.128/25',
        '198.51.101.0/24', '198.51.102.0/24', '203.0.113.0/24',
        '192.0.2.0/24', '192.0.3.0/24', '172.16.0.0/12']
RANGE4 = [('198.51.100.0', '198.51.100.100'), ('10.9.1.0', '10.9.1.255'),
          ('203.0.113.5', '203.0.113.80'), ('198.51.101.1', '198.51.102.50')]
ADDR6 = ['2001:db8::1', '2001:db8:ff::1', '2001:db8:5::1', '2001:db8:5:1::9',
         '2001:db9::1', '2001:db8:8::1', '2001:db8::2', '2001:db8:ff::2',
         '2001:db8:1::7', '2001:db8:1::ff', '2001:db8:2::5', '2001:db8:3::9',
         '2001:db8:7::1', '2001:db8:7::77']
PFX6 = ['2001:db8:5::/48', '2001:db8::/32', '2001:db8:1::/48',
        '2001:db8:2::/48', '2001:db8:3::/48', '2001:db8:7::/64',
        '2001:db9::/32', '2001:db8::/64']
RANGE6 = [('2001:db8:1::1', '2001:db8:1::fe'),
          ('2001:db8:7::10', '2001:db8:7::ffff'),
          ('2001:db8:2::', '2001:db8:3::ffff')]
PORTS = [0, 22, 53, 80, 443, 1000, 1500, 2500, 8000, 8080, 8081, 65535]
PORT_RANGES = [(1000, 2000), (8000, 8080), (0, 21), (60000, 65535),
               (23, 999)]
PROTOS = [6, 17, 1, 58, 132, 51, 50, 59, 0, 43, 44, 60, 47, 4, 41, 135, 255]
PROTO_NAMES = {1: 'icmp', 6: 'tcp', 17: 'udp', 58: 'icmpv6', 132: 'sctp'}
ICMP4 = {0: 'echo-reply', 3: 'destination-unreachable', 4: 'source-quench',
         5: 'redirect', 8: 'echo-request', 11: 'time-exceeded',
         12: 'parameter-problem', 13: 'timestamp-request'}
ICMP6 = {1: 'destination-unreachable', 2: 'packet-too-big',
         3: 'time-exceeded', 4: 'parameter-problem', 128: 'echo-request',
         129: 'echo-reply', 135: 'nd-neighbor-solicit'}
IFNAMES = ['vb', 'vb2', 'vc', 'vc2', 'lo', 'x0']
IFPREFIXES = ['vb*', 'vc*', 'v*', 'x*']
MARKS = [0x0, 0x1, 0x11, 0x40000001, 0x10]
MARK_MASKS = [(0x1, 0xf), (0x1, 0x1), (0x0, 0xf0), (0x40000000, 0x40000000),
              (0x10, 0xff)]
LENGTHS = [60, 100, 1280]
LEN_RANGES = [(0, 100), (100, 200), (60, 200), (201, 1500), (1501, 9000),
              (300, 65535), (40, 64)]
TCP_FLAGS = ['fin', 'syn', 'rst', 'psh', 'ack', 'urg']


def _ip(s):
    return int(ipaddress.ip_address(s))


class Elems:
    """Disjoint elements of one type, as text and as closed intervals."""

    def __init__(self):
        self.text = []
        self.spans = []

    def add(self, text, lo, hi):
        for a, b in self.spans:
            if lo <= b and a <= hi:
                return
        self.text.append(text)
        self.spans.append((lo, hi))


def addr_elem(rng, v6, elems):
    one, pfx, rng_ = (ADDR6, PFX6, RANGE6) if v6 else (ADDR4, PFX4, RANGE4)
    k = rng.random()
    if k < 0.5:
        a = rng.choice(one)
        elems.add(a, _ip(a), _ip(a))
    elif k < 0.8:
        n = ipaddress.ip_network(rng.choice(pfx))
        elems.add(str(n), int(n.network_address), int(n.broadcast_address))
    else:
        a, b = rng.choice(rng_)
        elems.add('%s-%s' % (a, b), _ip(a), _ip(b))


def port_elem(rng, elems):
    if rng.random() < 0.7:
        p = rng.choice(PORTS)
        elems.add(str(p), p, p)
    else:
        a, b = rng.choice(PORT_RANGES)
        elems.add('%d-%d' % (a, b), a, b)


def gen_sets(rng):
    """The named sets of one policy: name -> (type, flags, elements)."""
    sets = {}
    e = Elems()
    for _ in range(rng.randint(1, 4)):
        addr_elem(rng, False, e)
    sets['blk4'] = ('ipv4_addr', True, e.text)
    e = Elems()
    for _ in range(rng.randint(1, 4)):
        addr_elem(rng, True, e)
    sets['blk6'] = ('ipv6_addr', True, e.text)
    e = Elems()
    for _ in range(rng.randint(1, 4)):
        port_elem(rng, e)
    sets['ports'] = ('inet_service', True, e.text)
    sets['ifs'] = ('ifname', False, sorted(set(
        '"%s"' % n for n in rng.sample(IFNAMES, rng.randint(1, 3)))))
    sets['marks'] = ('mark', False, ['0x%x' % m for m in sorted(set(
        rng.sample(MARKS, rng.randint(1, 3))))])
    return sets


# A match: (field, negate, nfqd value text, nft text or None for "the
# nfqd text with the field and operator in front").
# Fields by the family they need and the transport class they imply (a
# rule mixes no two classes: nft refuses or folds such conflicts).
FIELDS = {
    'ip saddr': ('v4', None), 'ip daddr': ('v4', None),
    'ip protocol': ('v4', 'proto'), 'icmp type': ('v4', 'icmp'),
    'ip6 saddr': ('v6', None), 'ip6 daddr': ('v6', None),
    'icmpv6 type': ('v6', 'icmpv6'),
    'meta l4proto': (None, 'proto'),
    'tcp sport': (None, 'tcp'), 'tcp dport': (None, 'tcp'),
    'tcp flags': (None, 'tcp'),
    'udp sport': (None, 'udp'), 'udp dport': (None, 'udp'),
    'iifname': (None, None), 'oifname': (None, None),
    'meta mark': (None, None), 'meta length': (None, None),
}
WEIGHTS = {
    'ip saddr': 4, 'ip daddr': 3, 'ip protocol': 2, 'icmp type': 2,
    'ip6 saddr': 4, 'ip6 daddr': 3, 'icmpv6 type': 2, 'meta l4proto': 4,
    'tcp sport': 2, 'tcp dport': 4, 'tcp flags': 3, 'udp sport': 2,
    'udp dport': 4, 'iifname': 2, 'oifname': 2, 'meta mark': 2,
    'meta length': 2,
}


def listify(items):
    return items[0] if len(items) == 1 else '{ %s }' % ', '.join(items)


def gen_value(rng, field):
    """(nfqd text, nft text) of the value part of one match."""
    if field in ('ip saddr', 'ip daddr', 'ip6 saddr', 'ip6 daddr'):
        v6 = field.startswith('ip6')
        if rng.random() < 0.2:
            s = '@blk6' if v6 else '@blk4'
            return s, s
        e = Elems()
        for _ in range(1 if rng.random() < 0.6 else rng.randint(2, 4)):
            addr_elem(rng, v6, e)
        t = listify(e.text)
        return t, t
    if field in ('tcp sport', 'tcp dport', 'udp sport', 'udp dport'):
        if rng.random() < 0.2:
            return '@ports', '@ports'
        e = Elems()
        for _ in range(1 if rng.random() < 0.5 else rng.randint(2, 4)):
            port_elem(rng, e)
        t = listify(e.text)
        return t, t
    if field in ('ip protocol', 'meta l4proto'):
        ps = sorted(set(rng.choice(PROTOS) for _ in range(
            1 if rng.random() < 0.6 else rng.randint(2, 4))))
        nq = [PROTO_NAMES[p] if p in PROTO_NAMES and rng.random() < 0.6
              else str(p) for p in ps]
        return listify(nq), listify([str(p) for p in ps])
    if field in ('icmp type', 'icmpv6 type'):
        names = ICMP4 if field == 'icmp type' else ICMP6
        ts = sorted(set(rng.choice(list(names)) for _ in range(
            1 if rng.random() < 0.6 else rng.randint(2, 3))))
        nq = [names[t] if rng.random() < 0.5 else str(t) for t in ts]
        return listify(nq), listify([str(t) for t in ts])
    if field in ('iifname', 'oifname'):
        k = rng.random()
        if k < 0.2:
            return '@ifs', '@ifs'
        if k < 0.45:
            t = '"%s"' % rng.choice(IFPREFIXES)
            return t, t
        ns = sorted(set(rng.sample(IFNAMES, 1 if k < 0.8 else
                                   rng.randint(2, 3))))
        t = listify(['"%s"' % n for n in ns])
        return t, t
    if field == 'meta length':
        e = Elems()
        for _ in range(1 if rng.random() < 0.7 else 2):
            if rng.random() < 0.3:
                n = rng.choice(LENGTHS)
                e.add(str(n), n, n)
            else:
                a, b = rng.choice(LEN_RANGES)
                e.add('%d-%d' % (a, b), a, b)
        t = listify(e.text)
        return t, t
    raise ValueError(field)


# nft is given "udp sport & 0xffff != 8000" for "udp sport != 8000":
# nftables 1.0.6 (Debian 12) merges a rule's matches of adjacent payload
# fields into one load and one comparison, and does so for "!=" too:
# "udp dport != 65535 udp sport != 8000" becomes one 4-byte "!= 1f40ffff"
# (nft --debug=netlink), true when either port differs, so a packet from
# port 8000 to port 8081 is accepted against the rule's meaning ("!= {
# 8000 }" is made the same compare, and merged too). With a mask the
# loads are not merged and the rule means what it says, as nfqd reads it
# (both ports must differ); the merged rule disagreed with nfqd (seed
# 864992220, round 10). The two ports are the only adjacent fields
# policygen makes; address, range and set matches are not merged.
def gen_match(rng, field):
    """One match: (nfqd text, nft text)."""
    neg = rng.random() < 0.25
    op = '!= ' if neg else ''
    nop = '!=' if neg else '=='
    if field == 'tcp flags':
        fl = sorted(rng.sample(TCP_FLAGS, rng.choice([1, 1, 2])),
                    key=TCP_FLAGS.index)
        m = ' | '.join(fl)
        return ('tcp flags %s%s' % (op, ','.join(fl)),
                'tcp flags & (%s) %s %s' % (m, nop, m))
    if field == 'meta mark':
        k = rng.random()
        if k < 0.4:
            v, msk = rng.choice(MARK_MASKS)
            return ('meta mark %s0x%x/0x%x' % (op, v, msk),
                    'meta mark & 0x%x %s 0x%x' % (msk, nop, v))
        if k < 0.6:
            return 'meta mark %s@marks' % op, 'meta mark %s@marks' % op
        v = '0x%x' % rng.choice(MARKS)
        return 'meta mark %s%s' % (op, v), 'meta mark %s%s' % (op, v)
    nq, nf = gen_value(rng, field)
    if neg and field.endswith('port') and nf.isdigit():
        # not merged with the other port's (above)
        return '%s != %s' % (field, nq), '%s & 0xffff != %s' % (field, nf)
    return '%s %s%s' % (field, op, nq), '%s %s%s' % (field, op, nf)


def gen_rule(rng):
    fam = rng.choice(['v4', 'v6', None, None])
    cls = None
    used = []
    matches = []
    fields = [f for f in FIELDS if FIELDS[f][0] in (None, fam)]
    weights = [WEIGHTS[f] for f in fields]
    for _ in range(rng.choice([1, 1, 2, 2, 2, 3])):
        f = rng.choices(fields, weights)[0]
        fcls = FIELDS[f][1]
        if f in used or (fcls and cls and fcls != cls):
            continue
        used.append(f)
        cls = cls or fcls
        matches.append(gen_match(rng, f))
    # The family the matches need (fam only limited the choice).
    fam = next((FIELDS[f][0] for f in used if FIELDS[f][0]), None)
    verdict = rng.choice(['accept', 'drop'])
    mark = '0x%x' % rng.choice([0x5, 0x11, 0x80]) \
        if rng.random() < 0.2 else None
    counter = rng.random() < 0.2
    return {'matches': matches, 'verdict': verdict, 'mark': mark,
            'counter': counter, 'fam': fam, 'cls': cls}


def gen_policy(rng):
    pol = {'sets': gen_sets(rng), 'hooks': {}}
    for h in HOOKS:
        pol['hooks'][h] = {
            'policy': rng.choice(['accept', 'drop']),
            'rules': [gen_rule(rng) for _ in range(rng.randint(2, 8))],
        }
    return pol


def _stmt(rule, nft):
    s = []
    if rule['counter']:
        s.append('counter')
    if rule['mark']:
        s.append(('meta mark set ' if nft else 'mark set ') + rule['mark'])
    s.append(rule['verdict'])
    return ' '.join(s)


def render_nfqd(pol, options):
    out = ['options {']
    out += ['\t%s;' % o for o in options]
    out.append('}')
    for name, (typ, interval, elems) in pol['sets'].items():
        out.append('set %s { type %s;%s elements = { %s }; }' % (
            name, typ, ' flags interval;' if interval else '',
            ', '.join(elems)))
    for h in HOOKS:
        hk = pol['hooks'][h]
        out.append('hook %s {' % h)
        out.append('\tpolicy %s;' % hk['policy'])
        for r in hk['rules']:
            out.append('\t%s;' % ' '.join(
                [m[0] for m in r['matches']] + [_stmt(r, False)]))
        out.append('}')
    return '\n'.join(out) + '\n'


def nft_guards(rule):
    """nft's meaning of a transport match on a later fragment, made
    explicit.

    nfqd follows nft's payload expression: a fragment other than the first
    has no transport header, so "tcp dport 22" and "tcp dport != 22" both
    fail on it. This kernel's nft has a fast path for 1-, 2- and 4-byte
    loads that skips that check (being fixed upstream): it reads an IPv4
    fragment's data, and for an IPv6 fragment (whose transport offset
    ipv6_find_hdr() leaves at 0) the IPv6 header, as the transport header.
    So a rule with transport matches is given to nft once per family with a
    guard that fails on later fragments: for IPv4 the fragment offset; for
    IPv6 the first byte at the transport offset, which is the IPv6 header's
    0x62 (version 6, traffic class 0x2c) exactly when the kernel took the
    packet for a later fragment (packets.py never puts 0x62 first in a
    transport header)."""
    if rule['cls'] not in ('tcp', 'udp', 'icmp', 'icmpv6'):
        return [[]]
    out = []
    if rule['fam'] in (None, 'v4'):
        out.append(['ip frag-off & 0x1fff == 0'])
    if rule['fam'] in (None, 'v6'):
        out.append(['meta nfproto ipv6 @th,0,8 != 0x62'])
    return out


NFT_CHAINS = {'input': 'c_in', 'forward': 'c_fwd', 'output': 'c_out'}


def render_nft(pol, table='ref'):
    """The ruleset as one atomic nft -f script that replaces TABLE."""
    out = ['table inet %s' % table, 'delete table inet %s' % table,
           'table inet %s {' % table]
    for name, (typ, interval, elems) in pol['sets'].items():
        out.append('\tset %s { type %s;%s elements = { %s }; }' % (
            name, typ, ' flags interval;' if interval else '',
            ', '.join(elems)))
    for h in HOOKS:
        hk = pol['hooks'][h]
        out.append('\tchain %s {' % NFT_CHAINS[h])
        out.append('\t\ttype filter hook %s priority 0; policy %s;' %
                   (h, hk['policy']))
        for r in hk['rules']:
            for guard in nft_guards(r):
                out.append('\t\t%s' % ' '.join(
                    guard + [m[1] for m in r['matches']] +
                    [_stmt(r, True)]))
        out.append('\t}')
    out.append('}')
    return '\n'.join(out) + '\n'
