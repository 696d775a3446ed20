#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""fake_systemd.py - the part of systemd nfqd's lifecycle tests need,
without systemd: a notify socket that keeps a file descriptor store
(FDSTORE=1 / FDSTOREREMOVE=1 with FDNAME=), and a service process started
again whenever it exits, with the stored sockets passed as LISTEN_FDS /
LISTEN_FDNAMES / LISTEN_PID, as systemd passes them.

usage: fake_systemd.py DIR [--watchdog-usec N] [--orphans QUEUE:N]
                       [--orphans-rcvbuf BYTES] [--orphans-hold FILE]
                       -- COMMAND...

DIR/notify.log gets one line per notify message ("SECONDS PID MESSAGE",
newlines as "|"), DIR/main.pid the running service's pid, DIR/starts the number of
starts. --orphans QUEUE:N: before the first start, bind queue QUEUE on a
netlink socket of our own, read N packets without answering them, and put
that socket in the store as nfq-QUEUE (the state a killed nfqd leaves).
--orphans-rcvbuf BYTES: that socket's receive buffer (default 8 MiB; a
small one makes later packets fail delivery and use up their ids).
--orphans-hold FILE: start the service only once FILE exists.
SIGTERM stops the service (SIGTERM), then this process; the store closes.
"""
import array
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFQNL_MSG_CONFIG = (3 << 8) | 2
NFQNL_MSG_PACKET = (3 << 8) | 0
NLM_F_REQUEST, NLM_F_ACK = 1, 4


def nl_config_bind(queue):
    cmd = struct.pack("<HH", 8, 1) + struct.pack("!BBH", 1, 0, 0)
    params = struct.pack("<HH", 9, 2) + struct.pack("!IB", 0xffff, 2)
    params += b"\0" * 3
    body = struct.pack("!BBH", 0, 0, queue) + cmd + params
    return struct.pack("=IHHII", 16 + len(body), NFQNL_MSG_CONFIG,
                       NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body


def orphan_socket(queue, n, bound_file, rcvbuf):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.bind((0, 0))
    s.setsockopt(socket.SOL_SOCKET, 33, rcvbuf)  # SO_RCVBUFFORCE
    s.send(nl_config_bind(queue))
    ack = s.recv(65536)
    err = struct.unpack_from("=i", ack, 16)[0]
    if err:
        sys.exit("fake_systemd: bind queue %d: error %d" % (queue, err))
    open(bound_file, "w").close()
    read = 0
    while read < n:
        buf = s.recv(1 << 17)
        off = 0
        while off + 16 <= len(buf):
            ln, typ = struct.unpack_from("=IH", buf, off)
            if typ == NFQNL_MSG_PACKET:
                read += 1
            off += (ln + 3) & ~3
            if ln < 16:
                break
    return s


class Manager:
    def __init__(self, d, cmd, wd_usec):
        self.dir, self.cmd, self.wd_usec = d, cmd, wd_usec
        self.store = []          # (name, fd)
        self.child = None
        self.starts = 0
        self.stopping = False
        path = os.path.join(d, "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.path = path
        self.log = open(os.path.join(d, "notify.log"), "a", buffering=1)

    def start(self):
        names = [n for n, _ in self.store]
        fds = [fd for _, fd in self.store]
        pid = os.fork()
        if pid == 0:
            # Out of the way first: a stored fd may sit at 3 + i.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 512) for fd in fds]
            for i, fd in enumerate(high):
                os.dup2(fd, 3 + i, inheritable=True)
            os.closerange(3 + len(fds), 4096)
            env = dict(os.environ, NOTIFY_SOCKET=self.path)
            if fds:
                env.update(LISTEN_FDS=str(len(fds)),
                           LISTEN_FDNAMES=":".join(names),
                           LISTEN_PID=str(os.getpid()))
            if self.wd_usec:
                env.update(WATCHDOG_USEC=str(self.wd_usec),
                           WATCHDOG_PID=str(os.getpid()))
            os.execvpe(self.cmd[0], self.cmd, env)
        self.child = pid
        self.starts += 1
        with open(os.path.join(self.dir, "main.pid.tmp"), "w") as f:
            f.write("%d\n" % pid)
        os.rename(os.path.join(self.dir, "main.pid.tmp"),
                  os.path.join(self.dir, "main.pid"))
        with open(os.path.join(self.dir, "starts"), "w") as f:
            f.write("%d\n" % self.starts)

    def notify(self):
        msg, anc, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(64 * 4))
        fds, pid = [], 0
        for level, typ, data in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(data[:len(data) - len(data) % a.itemsize])
                fds.extend(a)
            elif level == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS:
                pid = struct.unpack("=iII", data[:12])[0]
        text = msg.decode(errors="replace")
        self.log.write("%.3f %d %s\n" % (time.monotonic(), pid,
                                           text.replace("\n", "|")))
        kv = dict(l.split("=", 1) for l in text.split("\n") if "=" in l)
        name = kv.get("FDNAME", "stored")
        if kv.get("FDSTORE") == "1":
            self.store.extend((name, fd) for fd in fds)
            fds = []
        if kv.get("FDSTOREREMOVE") == "1":
            for n, fd in [e for e in self.store if e[0] == name]:
                os.close(fd)
            self.store = [e for e in self.store if e[0] != name]
        for fd in fds:
            os.close(fd)

    def run(self):
        r, w = os.pipe()
        os.set_blocking(w, False)
        signal.set_wakeup_fd(w)
        signal.signal(signal.SIGTERM, lambda *a: setattr(self, "stopping", True))
        signal.signal(signal.SIGCHLD, lambda *a: None)
        self.start()
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == self.child:
                self.log.write("%.3f %d exited %d\n" %
                               (time.monotonic(), pid, status))
                self.child = None
                if self.stopping:
                    return
                self.start()
            if self.stopping is True and self.child:
                os.kill(self.child, signal.SIGTERM)
                self.stopping = "sent"
            ready, _, _ = select.select([self.sock, r], [], [], 0.2)
            if self.sock in ready:
                self.notify()
            if r in ready:
                os.read(r, 512)


def main():
    args = sys.argv[1:]
    d, args = args[0], args[1:]
    wd, orphans, rcvbuf, hold = 0, None, 8 << 20, None
    while args and args[0] != "--":
        if args[0] == "--watchdog-usec":
            wd, args = int(args[1]), args[2:]
        elif args[0] == "--orphans-rcvbuf":
            rcvbuf, args = int(args[1]), args[2:]
        elif args[0] == "--orphans-hold":
            hold, args = args[1], args[2:]
        elif args[0] == "--orphans":
            q, n = args[1].split(":")
            orphans, args = (int(q), int(n)), args[2:]
        else:
            sys.exit("fake_systemd: unknown option " + args[0])
    m = Manager(d, args[1:], wd)
    if orphans:
        s = orphan_socket(orphans[0], orphans[1],
                          os.path.join(d, "orphans.bound"), rcvbuf)
        m.store.append(("nfq-%d" % orphans[0], os.dup(s.fileno())))
        s.close()
        open(os.path.join(d, "orphans.read"), "w").close()
    while hold and not os.path.exists(hold):
        time.sleep(0.05)
    m.run()


if __name__ == "__main__":
    main()
