#!/usr/bin/env python3
# tests/diff/adversarial.py - the adversarial differential test's driver:
# per round a random policy (policygen.py) loaded into nfqd and into nft,
# a random copy-range and incomplete-verdict for nfqd, and random plain and
# hostile probes (packets.py) through the input, forward and output hooks
# of two identical worlds, one judged by nfqd, one by nft. Fates come from
# NFLOG chains before (priority -100) and after (priority 100) the judging
# hook; see diff_adversarial.sh for the topology.
#
# usage: adversarial.py P1 J1 P2 J2 NFQD_CTL SOCKET CONF
#   P1/J1: peer and judged namespace of nfqd's world, P2/J2 of nft's.
# Environment: DIFF_SEED (default: random, printed first), DIFF_PACKETS
# (probes in all, default 4000), DIFF_ROUNDS (default 10), DIFF_ROUND (run
# only that round of the seed), DIFF_VERBOSE (per-kind table every round).
# Exit status 0: every probe obeyed the property; 1: violations (printed).
import collections
import ctypes
import json
import os
import random
import select
import socket
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nflog            # noqa: E402
import packets          # noqa: E402
import policygen        # noqa: E402
from scapy.all import IP, IPv6  # noqa: E402

CLONE_NEWNET = 0x40000000
SO_BINDTODEVICE = 25
HOOK_NUM = {'input': 1, 'forward': 2, 'output': 3}
COPY_RANGES = [40, 64, 96, 128, 256]
# Fixed MAC addresses (diff_adversarial.sh): frames are the same bytes in
# both worlds.
MAC = {'va': '02:00:00:00:00:a1', 'va2': '02:00:00:00:00:a2',
       'vb': '02:00:00:00:00:b1', 'vb2': '02:00:00:00:00:b2'}
PEER = {'va': 'vb', 'va2': 'vb2'}
NFQD_OPTIONS = ['queues { 0 }', 'queue-maxlen 65536', 'rcvbuf 64M',
                'stats-interval 1']

libc = ctypes.CDLL(None, use_errno=True)


def enter(ns):
    fd = os.open('/run/netns/' + ns, os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        sys.exit('setns %s failed: errno %d' % (ns, ctypes.get_errno()))
    os.close(fd)


def mac(s):
    return bytes(int(x, 16) for x in s.split(':'))


class World:
    """One side: frame sockets on the peer, raw sockets and the NFLOG
    reader in the judged namespace."""

    def __init__(self, peer, judged):
        enter(peer)
        self.frame = {}
        for dev in ('va', 'va2'):
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            s.bind((dev, 0))
            self.frame[dev] = s
        enter(judged)
        self.log = nflog.NflogReader([1, 2])
        self.raw = {}
        for dev in ('vb', 'vb2'):
            for fam, af in ((4, socket.AF_INET), (6, socket.AF_INET6)):
                s = socket.socket(af, socket.SOCK_RAW, socket.IPPROTO_RAW)
                s.setsockopt(socket.SOL_SOCKET, SO_BINDTODEVICE,
                             dev.encode())
                s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
                self.raw[(dev, fam)] = s
        self.pre = {}       # (hook, fam, id) -> bytes seen before the hook
        self.post = set()   # (hook, fam, id) accepted by the hook
        self.send_errors = 0

    def send(self, p):
        for f in p.frames:
            try:
                if p.hook == 'output':
                    dst = (p.dst, 0) if p.fam == 4 else (p.dst, 0, 0, 0)
                    self.raw[(p.dev, p.fam)].sendto(f, dst)
                else:
                    eth = mac(MAC[PEER[p.dev]]) + mac(MAC[p.dev]) + \
                        (b'\x08\x00' if p.fam == 4 else b'\x86\xdd')
                    self.frame[p.dev].send(eth + f)
            except PermissionError:
                pass    # the output hook dropped it while we sent
            except OSError:
                self.send_errors += 1

    def drain(self):
        got = 0
        for group, hook, data in self.log.read():
            got += 1
            k = probe_key(data)
            if k is None:
                continue
            k = (hook,) + k
            if group == 1:
                self.pre.setdefault(k, []).append(data)
            else:
                self.post.add(k)
        return got

    def reset(self):
        self.drain()
        self.pre.clear()
        self.post.clear()
        self.send_errors = 0


def probe_key(b):
    """(family, probe id) from the IPv4 id or the IPv6 flow label."""
    if len(b) >= 20 and b[0] >> 4 == 4:
        return 4, struct.unpack_from('!H', b, 4)[0]
    if len(b) >= 40 and b[0] >> 4 == 6:
        return 6, struct.unpack_from('!I', b, 0)[0] & 0xfffff
    return None


def addrs(b):
    if b[0] >> 4 == 4:
        return b[12:16], b[16:20]
    return b[8:24], b[24:40]


def queue_line():
    """nfqd's kernel queue line in the current namespace (J1)."""
    with open('/proc/self/net/netfilter/nfnetlink_queue') as f:
        for line in f:
            v = line.split()
            if v and v[0] == '0':
                return [int(x) for x in v]
    return None


class Ctl:
    def __init__(self, ctl, sock, conf):
        self.ctl, self.sock, self.conf = ctl, sock, conf

    def stats(self):
        out = subprocess.run([self.ctl, '-s', self.sock, '-j', 'stats'],
                             check=True, capture_output=True, text=True)
        tot = collections.Counter()
        for q in json.loads(out.stdout)['queues']:
            for k, v in q.items():
                if isinstance(v, int):
                    tot[k] += v
        return tot

    def load(self, text, copy):
        with open(self.conf, 'w') as f:
            f.write(text)
        r = subprocess.run([self.ctl, '-s', self.sock, 'reload'],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit('nfqd refused the policy:\n%s%s%s' % (
                r.stdout, r.stderr, text))
        # The queue takes the new copy range from its worker: wait for it.
        for _ in range(500):
            q = queue_line()
            if q and q[4] == copy:
                return
            time.sleep(0.01)
        sys.exit('nfqd did not set copy-range %d' % copy)


def nft_load(ns, text):
    r = subprocess.run(['ip', 'netns', 'exec', ns, 'nft', '-f', '-'],
                       input=text, capture_output=True, text=True)
    if r.returncode:
        sys.exit('nft refused the policy:\n%s%s' % (r.stderr, text))


def chain_desc(b):
    """A compact view of an IPv6 header chain: long chains defeat scapy."""
    names = {0: 'HBH', 43: 'RT', 44: 'FRAG', 51: 'AH', 60: 'DST'}
    off, nh, out = 40, b[6], []
    while nh in names and off + 2 <= len(b):
        if nh == 44:
            hl = 8
            fo = struct.unpack_from('!H', b, off + 2)[0] \
                if off + 4 <= len(b) else 0
            name = 'FRAG(off=%d,m=%d)' % (fo >> 3, fo & 1)
        elif nh == 51:
            hl = (b[off + 1] + 2) * 4
            name = 'AH(%d)' % hl
        else:
            hl = (b[off + 1] + 1) * 8
            name = '%s(%d)' % (names[nh], hl)
        if out and out[-1][0] == name:
            out[-1][1] += 1
        else:
            out.append([name, 1])
        nh, off = b[off], off + hl
    s = ' '.join(n if c == 1 else '%sx%d' % (n, c) for n, c in out)
    return '%s -> %d at %d of %d' % (s or '(none)', nh, off, len(b))


def summary(b):
    try:
        s = (IP(b) if b[0] >> 4 == 4 else IPv6(b)).summary()
    except RecursionError:
        s = 'IPv6 / (too deep for scapy)'
    except Exception as e:      # scapy may fail on hostile input
        s = 'scapy: %s' % e
    if b[0] >> 4 == 6:
        s += ' | chain: ' + chain_desc(b)
    return s


def hexdump(b, cap=1500):
    h = b[:cap].hex()
    return h + ('... (%d bytes in all)' % len(b) if len(b) > cap else '')


class Run:
    def __init__(self, argv):
        p1, j1, p2, j2, ctl, sock, conf = argv
        self.j2 = j2
        env = os.environ
        self.seed = int(env['DIFF_SEED']) if env.get('DIFF_SEED') else \
            random.SystemRandom().randrange(1 << 31)
        print('# seed %d (DIFF_SEED=%d replays this run)' %
              (self.seed, self.seed), flush=True)
        self.total = int(env.get('DIFF_PACKETS') or 4000)
        self.rounds = int(env.get('DIFF_ROUNDS') or 10)
        self.per_round = max(1, self.total // self.rounds)
        if self.per_round > 60000:      # ids are 16 bits in IPv4
            self.rounds = -(-self.total // 60000)
            self.per_round = -(-self.total // self.rounds)
        self.only = env.get('DIFF_ROUND')
        self.verbose = bool(env.get('DIFF_VERBOSE'))
        self.worlds = [World(p1, j1), World(p2, j2)]
        enter(j1)       # stay here: /proc/self/net is nfqd's queue
        self.ctl = Ctl(ctl, sock, conf)
        self.violations = 0
        self.errors = 0
        # (hook, fam, kind) -> counters over the run
        self.table = collections.defaultdict(collections.Counter)

    def error(self, msg):
        self.errors += 1
        print('ERROR seed=%d: %s' % (self.seed, msg), flush=True)

    def send_all(self, probes):
        for i, p in enumerate(probes):
            for w in self.worlds:
                w.send(p)
            if i % 32 == 31:
                self.pump(backlog=2000)

    def pump(self, backlog):
        """Read the logs; wait while nfqd has more than BACKLOG
        packets in hand."""
        deadline = time.monotonic() + 30
        while True:
            for w in self.worlds:
                w.drain()
            q = queue_line()
            if q is None or q[2] <= backlog:
                return
            if time.monotonic() > deadline:
                self.error('nfqd left %d packets unanswered' % q[2])
                return
            select.select([w.log for w in self.worlds], [], [], 0.01)

    def settle(self):
        """Until nfqd has answered everything and the logs are quiet."""
        self.pump(backlog=0)
        last = time.monotonic()
        while time.monotonic() - last < 0.15:
            r, _, _ = select.select([w.log for w in self.worlds], [], [],
                                    0.05)
            if r and sum(w.drain() for w in self.worlds):
                last = time.monotonic()
            q = queue_line()
            if q and q[2]:
                self.pump(backlog=0)
                last = time.monotonic()

    def round(self, r):
        rng = random.Random(self.seed * 1000003 + r)
        copy = rng.choice(COPY_RANGES)
        iv = 'accept' if r % 3 == 2 else 'drop'
        pol = policygen.gen_policy(rng)
        nfqd_text = policygen.render_nfqd(pol, NFQD_OPTIONS + [
            'stats-file "%s"' % os.path.join(os.path.dirname(
                self.ctl.conf), 'stats'),
            'control-socket "%s"' % self.ctl.sock,
            'copy-range %d' % copy, 'incomplete-verdict %s' % iv])
        nft_text = policygen.render_nft(pol)
        ctx = {'copy': copy}
        probes = []
        for pid in range(1, self.per_round + 1):
            hook = rng.choice(policygen.HOOKS)
            probes.append(packets.gen_probe(rng, pid, hook,
                                            rng.choice([4, 6]), ctx))
        self.ctl.load(nfqd_text, copy)
        nft_load(self.j2, nft_text)
        for w in self.worlds:
            w.reset()
        s0 = self.ctl.stats()
        self.send_all(probes)
        self.settle()
        s1 = self.ctl.stats()
        d = {k: s1[k] - s0[k] for k in s1}
        return self.judge(r, copy, iv, probes, d, nfqd_text, nft_text)

    def judge(self, r, copy, iv, probes, d, nfqd_text, nft_text):
        w1, w2 = self.worlds
        bad = []
        reached = mism = cand_seen = 0
        only_nfqd = []      # nfqd dropped, nft accepted (iv drop)
        only_nft = []       # nfqd accepted, nft dropped (iv accept)
        per = collections.defaultdict(collections.Counter)
        for p in probes:
            k = (HOOK_NUM[p.hook], p.fam, p.pid)
            c = per[(p.hook, p.fam, p.kind)]
            c['sent'] += 1
            seen1, seen2 = w1.pre.get(k), w2.pre.get(k)
            want = (socket.inet_pton(socket.AF_INET if p.fam == 4 else
                                     socket.AF_INET6, p.src),
                    socket.inet_pton(socket.AF_INET if p.fam == 4 else
                                     socket.AF_INET6, p.dst))
            for seen in (seen1, seen2):
                if seen and (len(seen) > 1 or addrs(seen[0]) != want):
                    self.error('round %d: probe %d logged %d times or with '
                               'other addresses' % (r, p.pid, len(seen)))
            if bool(seen1) != bool(seen2):
                self.error('round %d: probe %d reached the %s hook in one '
                           'world only (%s)' % (r, p.pid, p.hook,
                                                summary(p.frames[0])))
            if not (seen1 and seen2):
                if self.verbose:
                    print('# not at the %s hook: %s: %s' % (
                        p.hook, p.kind, summary(p.frames[0])))
                    print('#   hex: %s' % hexdump(p.frames[0], 200))
                continue
            b = seen2[0]
            if seen1[0] != b:
                self.error('round %d: probe %d differs between the worlds '
                           'at the hook' % (r, p.pid))
            reached += 1
            c['reached'] += 1
            cand = packets.maybe_incomplete(b, copy)
            cand_seen += cand
            c['maybe_incomplete'] += cand
            f1, f2 = k in w1.post, k in w2.post
            if f1 == f2:
                c['agree'] += 1
                continue
            mism += 1
            c['nfqd_' + ('accept' if f1 else 'drop')] += 1
            what = None
            if f1 and not f2:
                if iv == 'drop' or not cand:
                    what = 'nfqd accepted a packet nft drops'
                else:
                    only_nft.append(p)
            else:
                if iv == 'accept' or not cand:
                    what = 'nfqd dropped a packet nft accepts'
                else:
                    only_nfqd.append(p)
            if what:
                bad.append((what, p, b, f1, f2))
        explained = only_nfqd if iv == 'drop' else only_nft
        inc = d.get('incomplete', 0)
        notes = []
        if len(explained) > inc:
            notes.append('%d disagreements put down to incomplete-verdict, '
                         'but the incomplete counter grew by %d' %
                         (len(explained), inc))
        if inc > cand_seen:
            notes.append('the incomplete counter grew by %d, but only %d '
                         'probes could not be judged' % (inc, cand_seen))
        pre1 = sum(len(v) for v in w1.pre.values())
        if d.get('packets', 0) != pre1:
            self.error('round %d: nfqd received %d packets, %d reached its '
                       'hooks' % (r, d.get('packets', 0), pre1))
        for k in ('queue_dropped', 'user_dropped', 'enobufs', 'errors'):
            if d.get(k):
                self.error('round %d: nfqd %s grew by %d: the round is not '
                           'a fair comparison' % (r, k, d[k]))
        for w in self.worlds:
            if w.send_errors:
                self.error('round %d: %d probes could not be sent' %
                           (r, w.send_errors))
        print('# round %d: copy-range %d, incomplete-verdict %s: %d probes, '
              '%d reached their hook in both worlds, %d disagreements '
              '(%d within incomplete-verdict), incomplete +%d of %d '
              'candidates, %d violations' %
              (r, copy, iv, len(probes), reached, mism, len(explained), inc,
               cand_seen, len(bad) + len(notes)), flush=True)
        for what, p, b, f1, f2 in bad:
            print('VIOLATION seed=%d round=%d probe=%d hook=%s ipv%d '
                  'kind=%s copy-range=%d incomplete-verdict=%s: %s '
                  '(nfqd %s, nft %s; could %sbe incomplete)' %
                  (self.seed, r, p.pid, p.hook, p.fam, p.kind, copy, iv,
                   what, 'accepted' if f1 else 'dropped',
                   'accepted' if f2 else 'dropped',
                   '' if packets.maybe_incomplete(b, copy) else 'not '))
            print('  via %s: %s' % (p.dev, summary(b)))
            print('  hex: %s' % hexdump(b))
        for n in notes:
            print('VIOLATION seed=%d round=%d copy-range=%d '
                  'incomplete-verdict=%s: %s' % (self.seed, r, copy, iv, n))
        if bad or notes:
            print('--- round %d policy, nfqd.conf:\n%s--- nft:\n%s---' %
                  (r, nfqd_text, nft_text))
        self.violations += len(bad) + len(notes)
        for key, c in per.items():
            self.table[key].update(c)
        if self.verbose:
            self.print_table(per)
        return not bad and not notes

    def print_table(self, table):
        cols = ['sent', 'reached', 'agree', 'nfqd_drop', 'nfqd_accept',
                'maybe_incomplete']
        print('# %-8s %-4s %-9s %s' % ('hook', 'fam', 'kind',
                                       ' '.join('%9s' % c[:9] for c in
                                                cols)))
        for key in sorted(table):
            c = table[key]
            print('# %-8s ipv%d %-9s %s' % (key + (' '.join(
                '%9d' % c[x] for x in cols),)))
        sys.stdout.flush()

    def main(self):
        t0 = time.monotonic()
        rounds = [int(self.only)] if self.only else range(1, self.rounds + 1)
        for r in rounds:
            self.round(r)
        print('# totals over %d rounds (%.0f s): nfqd_drop / nfqd_accept '
              'count disagreements, reached = reached the hook in both '
              'worlds' % (len(rounds), time.monotonic() - t0))
        self.print_table(self.table)
        if self.violations or self.errors:
            print('# FAILED: %d violations, %d errors; replay with '
                  'DIFF_SEED=%d' % (self.violations, self.errors,
                                    self.seed))
            return 1
        return 0


if __name__ == '__main__':
    sys.exit(Run(sys.argv[1:]).main())
