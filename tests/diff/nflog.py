# SPDX-License-Identifier: GPL-2.0-or-later
# tests/diff/nflog.py - a minimal NFLOG reader (nfnetlink_log) for the
# adversarial differential test: binds log groups in the namespace it is
# created in and reads (group, hook, packet bytes) for every logged packet.
import errno
import socket
import struct

NETLINK_NETFILTER = 12
NFNL_SUBSYS_ULOG = 4
NFULNL_MSG_PACKET = 0
NFULNL_MSG_CONFIG = 1
NFULA_PACKET_HDR = 1
NFULA_PAYLOAD = 9
NFULA_CFG_CMD = 1
NFULA_CFG_MODE = 2
NFULA_CFG_TIMEOUT = 3
NFULA_CFG_QTHRESH = 4
NFULNL_CFG_CMD_BIND = 1
NFULNL_COPY_PACKET = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2
NLMSG_DONE = 3
SO_RCVBUFFORCE = 33


def _attr(kind, data):
    n = 4 + len(data)
    return struct.pack('=HH', n, kind) + data + b'\0' * (-n & 3)


def _attrs(buf):
    out = {}
    off = 0
    while off + 4 <= len(buf):
        n, kind = struct.unpack_from('=HH', buf, off)
        if n < 4:
            break
        out[kind & 0x3fff] = buf[off + 4:off + n]
        off += (n + 3) & ~3
    return out


class Overrun(Exception):
    """The kernel dropped log messages: the socket buffer overflowed."""


class NflogReader:
    def __init__(self, groups, rcvbuf=64 << 20):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                  NETLINK_NETFILTER)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf)
        self.sock.bind((0, 0))
        self.seq = 0
        for g in groups:
            # One message per group: bind, whole packets, no batching.
            self._config(g, _attr(NFULA_CFG_CMD,
                                  struct.pack('B', NFULNL_CFG_CMD_BIND)))
            self._config(g, _attr(NFULA_CFG_MODE, struct.pack(
                '>IBx', 0xffff, NFULNL_COPY_PACKET)) +
                _attr(NFULA_CFG_QTHRESH, struct.pack('>I', 1)) +
                _attr(NFULA_CFG_TIMEOUT, struct.pack('>I', 0)))
        self.sock.setblocking(False)

    def fileno(self):
        return self.sock.fileno()

    def _config(self, group, attrs):
        self.seq += 1
        body = struct.pack('=BBH', socket.AF_UNSPEC, 0,
                           socket.htons(group)) + attrs
        hdr = struct.pack('=IHHII', 16 + len(body),
                          NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_CONFIG,
                          NLM_F_REQUEST | NLM_F_ACK, self.seq, 0)
        self.sock.send(hdr + body)
        data = self.sock.recv(65536)
        _, kind, _, _, _ = struct.unpack_from('=IHHII', data)
        if kind == NLMSG_ERROR:
            err = struct.unpack_from('=i', data, 16)[0]
            if err:
                raise OSError(-err, 'nflog config of group %d: %s' %
                              (group, errno.errorcode.get(-err, err)))

    def read(self):
        """Every message waiting now: a list of (group, hook, packet)."""
        out = []
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except BlockingIOError:
                return out
            except OSError as e:
                if e.errno == errno.ENOBUFS:
                    raise Overrun() from e
                raise
            off = 0
            while off + 16 <= len(data):
                n, kind, _, _, _ = struct.unpack_from('=IHHII', data, off)
                if n < 16:
                    break
                if kind == NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET:
                    group = socket.ntohs(struct.unpack_from(
                        '=H', data, off + 18)[0])
                    a = _attrs(data[off + 20:off + n])
                    hook = a[NFULA_PACKET_HDR][2] \
                        if NFULA_PACKET_HDR in a else -1
                    out.append((group, hook, a.get(NFULA_PAYLOAD, b'')))
                off += (n + 3) & ~3
