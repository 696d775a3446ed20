#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/diff/adversarial.py - the adversarial differential test's driver:
# per round a random policy (policygen.py) loaded into nfqd and into nft, a
# random copy-range for nfqd, and random plain and hostile probes
# (packets.py) through the input, forward and output hooks of two
# identical worlds, one judged by nfqd, one by nft; the probes go through
# twice, with nfqd's incomplete-verdict drop and then accept. Fates come
# from NFLOG chains before (priority -100) and after (priority 100) the
# judging hook; see diff_adversarial.sh for the topology and the property.
#
# usage: adversarial.py P1 J1 P2 J2 NFQD_CTL SOCKET CONF
#   P1/J1: peer and judged namespace of nfqd's world, P2/J2 of nft's.
# Environment: DIFF_SEED (default: random, printed first), DIFF_PACKETS
# (probes in all, default 4000; each is sent twice), DIFF_ROUNDS (default
# 10), DIFF_ROUND (run only that round of the seed), DIFF_VERBOSE (a table
# per round and the probes that reached no hook).
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
IVS = ('drop', 'accept')        # each round runs with both, in this order
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
        self.pre = {}       # (hook, fam, id) -> [bytes seen before the hook]
        self.post = set()   # (hook, fam, id) accepted by the hook
        self.send_errors = 0
        self.overruns = 0

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
        try:
            msgs = self.log.read()
        except nflog.Overrun:
            self.overruns += 1
            return 1
        for group, hook, data in msgs:
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
        self.overruns = 0


class Outcome:
    """What one run of a round left: per world the probes seen before and
    after the hook, and nfqd's counter increments."""

    def __init__(self, iv, delta, worlds):
        self.iv = iv
        self.delta = delta
        self.pre = [dict(w.pre) for w in worlds]
        self.post = [set(w.post) for w in worlds]
        self.arrived = sum(len(v) for v in worlds[0].pre.values())
        self.send_errors = sum(w.send_errors for w in worlds)
        self.overruns = sum(w.overruns for w in worlds)


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
        """Until nfqd has answered everything, both worlds have logged the
        same probes before their hooks and the logs are quiet. (A probe's
        log lines after the hook are written in the same pass as the one
        before it, or in nfqd's verdict.)"""
        self.pump(backlog=0)
        last = time.monotonic()
        deadline = last + 10
        while time.monotonic() < deadline:
            r, _, _ = select.select([w.log for w in self.worlds], [], [],
                                    0.05)
            if r and sum(w.drain() for w in self.worlds):
                last = time.monotonic()
            q = queue_line()
            if q and q[2]:
                self.pump(backlog=0)
                last = time.monotonic()
            elif time.monotonic() - last > 0.15 and \
                    self.worlds[0].pre.keys() == self.worlds[1].pre.keys():
                return

    def stats_after(self, s0):
        """nfqd's counters once they count every packet that reached its
        hooks (a worker publishes them just after its verdicts)."""
        arrived = sum(len(v) for v in self.worlds[0].pre.values())
        # Generous: on a loaded machine a worker may wait for a CPU
        # for seconds between its verdicts and its counters.
        deadline = time.monotonic() + 30
        while True:
            s1 = self.ctl.stats()
            if s1['packets'] - s0['packets'] >= arrived or \
                    time.monotonic() > deadline:
                return s1
            time.sleep(0.02)

    def round(self, r):
        """One policy, one copy range, one set of probes, sent twice: with
        incomplete-verdict drop, then accept."""
        rng = random.Random(self.seed * 1000003 + r)
        copy = rng.choice(COPY_RANGES)
        pol = policygen.gen_policy(rng)
        opts = NFQD_OPTIONS + [
            'stats-file "%s"' % os.path.join(os.path.dirname(
                self.ctl.conf), 'stats'),
            'control-socket "%s"' % self.ctl.sock, 'copy-range %d' % copy]
        texts = {iv: policygen.render_nfqd(
            pol, opts + ['incomplete-verdict %s' % iv]) for iv in IVS}
        nft_text = policygen.render_nft(pol)
        ctx = {'copy': copy}
        probes = []
        for pid in range(1, self.per_round + 1):
            hook = rng.choice(policygen.HOOKS)
            probes.append(packets.gen_probe(rng, pid, hook,
                                            rng.choice([4, 6]), ctx))
        nft_load(self.j2, nft_text)
        runs = []
        for iv in IVS:
            self.ctl.load(texts[iv], copy)
            for w in self.worlds:
                w.reset()
            s0 = self.ctl.stats()
            self.send_all(probes)
            self.settle()
            s1 = self.stats_after(s0)
            run = Outcome(iv, {k: s1[k] - s0[k] for k in s1}, self.worlds)
            self.check_run(r, run)
            runs.append(run)
        self.judge(r, copy, probes, runs, texts['drop'], nft_text)

    def check_run(self, r, run):
        """The run was a fair comparison."""
        d = run.delta
        if d.get('packets', 0) != run.arrived:
            self.error('round %d (%s): nfqd received %d packets, %d reached '
                       'its hooks' % (r, run.iv, d.get('packets', 0),
                                      run.arrived))
        for k in ('queue_dropped', 'user_dropped', 'enobufs', 'errors'):
            if d.get(k):
                self.error('round %d (%s): nfqd %s grew by %d' %
                           (r, run.iv, k, d[k]))
        if run.overruns:
            self.error('round %d (%s): log messages lost (ENOBUFS)' %
                       (r, run.iv))
        if run.send_errors:
            self.error('round %d (%s): %d probes could not be sent' %
                       (r, run.iv, run.send_errors))

    def judge(self, r, copy, probes, runs, nfqd_text, nft_text):
        """Per probe: nfqd's fate with incomplete-verdict drop (fd) and
        accept (fa), nft's (n). A probe nfqd judged whole has the same fate
        both times, and it must be nft's. A probe nfqd could not judge is
        dropped the first time and accepted the second: it must be one the
        test thinks nfqd may be unable to judge, and there must be exactly
        as many as the incomplete counter grew by, each time."""
        bad = []
        reached = flipped = cand_seen = 0
        per = collections.defaultdict(collections.Counter)
        for p in probes:
            k = (HOOK_NUM[p.hook], p.fam, p.pid)
            c = per[(p.hook, p.fam, p.kind)]
            c['sent'] += 1
            seen = [run.pre[i].get(k) for run in runs for i in (0, 1)]
            if any(seen) and not all(seen):
                self.error('round %d: probe %d reached the %s hook in some '
                           'runs only (%s)' % (r, p.pid, p.hook,
                                               summary(p.frames[0])))
            if not all(seen):
                if self.verbose:
                    print('# not at the %s hook: %s: %s' % (
                        p.hook, p.kind, summary(p.frames[0])))
                    print('#   hex: %s' % hexdump(p.frames[0], 200))
                continue
            self.check_seen(r, p, seen)
            b = seen[1][0]
            reached += 1
            c['reached'] += 1
            cand = packets.maybe_incomplete(b, copy)
            cand_seen += cand
            c['maybe_incomplete'] += cand
            fd, fa = (k in run.post[0] for run in runs)
            n, n2 = (k in run.post[1] for run in runs)
            if n != n2:
                self.error('round %d: nft gave probe %d two fates' %
                           (r, p.pid))
            what = None
            if fd and not fa:
                what = 'nfqd accepted it with incomplete-verdict drop ' \
                    'and dropped it with accept'
            elif fa and not fd:
                flipped += 1
                c['incomplete'] += 1
                if not cand:
                    what = 'nfqd gave it incomplete-verdict, but could ' \
                        'judge it'
            elif fd != n:
                what = 'nfqd %s a packet nft %s' % (
                    ('accepted', 'drops') if fd else ('dropped', 'accepts'))
            else:
                c['agree'] += 1
            if what:
                c['violations'] += 1
                bad.append((what, p, b, fd, fa, n, cand))
        notes = []
        for run in runs:
            inc = run.delta.get('incomplete', 0)
            if inc != flipped:
                notes.append('with incomplete-verdict %s the incomplete '
                             'counter grew by %d, but %d probes got '
                             'incomplete-verdict' % (run.iv, inc, flipped))
        print('# round %d: copy-range %d, %d probes, %d reached their hook, '
              '%d judged incomplete of %d that may be, %d violations' %
              (r, copy, len(probes), reached, flipped, cand_seen,
               len(bad) + len(notes)), flush=True)
        for what, p, b, fd, fa, n, cand in bad:
            fate = ('dropped', 'accepted')
            print('VIOLATION seed=%d round=%d probe=%d hook=%s ipv%d '
                  'kind=%s copy-range=%d: %s (nfqd %s with '
                  'incomplete-verdict drop, %s with accept; nft %s; '
                  'could %sbe incomplete)' %
                  (self.seed, r, p.pid, p.hook, p.fam, p.kind, copy, what,
                   fate[fd], fate[fa], fate[n], '' if cand else 'not '))
            print('  via %s: %s' % (p.dev, summary(b)))
            print('  hex: %s' % hexdump(b))
        for n in notes:
            print('VIOLATION seed=%d round=%d copy-range=%d: %s' %
                  (self.seed, r, copy, n))
        if bad or notes:
            print('--- round %d policy, nfqd.conf (incomplete-verdict drop, '
                  'then accept):\n%s--- nft:\n%s---' %
                  (r, nfqd_text, nft_text))
        self.violations += len(bad) + len(notes)
        for key, c in per.items():
            self.table[key].update(c)
        if self.verbose:
            self.print_table(per)

    def check_seen(self, r, p, seen):
        """Each world saw the probe once per run, the same bytes, with the
        probe's addresses."""
        fam = socket.AF_INET if p.fam == 4 else socket.AF_INET6
        want = (socket.inet_pton(fam, p.src), socket.inet_pton(fam, p.dst))
        for s in seen:
            if len(s) > 1 or addrs(s[0]) != want or s[0] != seen[1][0]:
                self.error('round %d: probe %d logged %d times, or not as '
                           'sent' % (r, p.pid, len(s)))
                return

    def print_table(self, table):
        cols = ['sent', 'reached', 'agree', 'incomplete',
                'maybe_incomplete', 'violations']
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
        print('# totals over %d rounds (%.0f s); reached: in both worlds '
              'and runs; incomplete: given incomplete-verdict; maybe_inc: '
              'the test thinks nfqd may be unable to judge it' %
              (len(rounds), time.monotonic() - t0))
        self.print_table(self.table)
        if self.violations or self.errors:
            print('# FAILED: %d violations, %d errors; replay with '
                  'DIFF_SEED=%d' % (self.violations, self.errors,
                                    self.seed))
            return 1
        return 0


if __name__ == '__main__':
    sys.exit(Run(sys.argv[1:]).main())
