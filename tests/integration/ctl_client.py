#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ctl_client.py - raw control-protocol clients for nfqd's integration tests.

    ctl_client.py SOCKET MODE [ARG]

Each MODE behaves like one kind of client (good or hostile) and checks
what the daemon does about it. Prints one line; exits 0 when the daemon
behaved as expected, 1 otherwise.

No check is a stopwatch: on a loaded machine the daemon may be late by
seconds. What is asserted is what happened (an answer, its status, a
connection cut before the request was complete) and that a deadline did
not fire early; the socket timeout only ends a test whose daemon hangs.

Frame: "NFQD" u8 version, u8 type (1 request, 2 response), u16 status,
u32 payload length (network order), payload, "END\\n".
"""
import json
import os
import socket
import struct
import subprocess
import sys
import time

VERSION = 1
REQUEST, RESPONSE = 1, 2
ST_OK, ST_BAD_FRAME, ST_VERSION, ST_TOO_BIG, ST_BUSY, ST_TIMEOUT = \
    0, 2, 3, 4, 7, 9


def frame(payload, version=VERSION, ftype=REQUEST, status=0, length=None):
    n = len(payload) if length is None else length
    return (b"NFQD" + struct.pack("!BBHI", version, ftype, status, n)
            + payload + b"END\n")


def request(*words, flags=0):
    body = bytes([flags, len(words)])
    for w in words:
        body += w.encode() + b"\0"
    return frame(body)


def connect(path, timeout=60.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def wait_accepted(s, path, timeout=60.0):
    """Wait until the daemon has accepted connection s: ss then shows a
    socket bound to path whose peer is s (a connection still in the
    listen backlog has no peer yet)."""
    ino = str(os.fstat(s.fileno()).st_ino)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        out = subprocess.run(["ss", "-xH"], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 8 and f[4] == path and f[7] == ino:
                return
        time.sleep(0.05)
    raise AssertionError("the daemon did not accept the connection in %d s"
                         % timeout)


def read_response(s):
    """(status, document) of one response frame, or None on EOF/reset."""
    buf = b""
    try:
        while True:
            if len(buf) >= 12:
                n = struct.unpack("!I", buf[8:12])[0]
                if len(buf) >= 16 + n:
                    break
            chunk = s.recv(65536)
            if not chunk:
                return None
            buf += chunk
    except (ConnectionResetError, BrokenPipeError):
        return None
    assert buf[:4] == b"NFQD", buf[:16]
    version, ftype, status, n = struct.unpack("!BBHI", buf[4:12])
    assert version == VERSION and ftype == RESPONSE, (version, ftype)
    assert buf[12 + n:16 + n] == b"END\n", buf[12 + n:16 + n]
    return status, json.loads(buf[12:12 + n])


def expect_error(s, status, fragment):
    r = read_response(s)
    if r is None:
        print("closed without an answer")
        return 0 if status is None else 1
    got, doc = r
    print("status %d: %s" % (got, doc.get("error")))
    if status is not None and got != status:
        return 1
    return 0 if fragment in doc.get("error", "") else 1


def send_quiet(s, data):
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


def mode_ok(path, arg):
    s = connect(path)
    s.sendall(request(*(arg or "status").split()))
    r = read_response(s)
    print("status %s" % (r[0] if r else "closed"))
    return 0 if r and r[0] == ST_OK else 1


def mode_garbage(path, arg):
    s = connect(path)
    send_quiet(s, b"GET / HTTP/1.0\r\n\r\n" * 4)
    return expect_error(s, ST_BAD_FRAME, "not an nfqd control frame")


def mode_truncated(path, arg):
    """Half a header, then the write side shut: dropped, no answer."""
    s = connect(path)
    s.sendall(request("status")[:7])
    s.shutdown(socket.SHUT_WR)
    t = time.monotonic()
    r = read_response(s)
    took = time.monotonic() - t
    # Had the daemon waited for the rest, its request deadline would
    # have answered "timed out": no answer at all is the drop.
    print("answer %r after %.2f s" % (r, took))
    return 0 if r is None else 1


def mode_truncated_wait(path, arg):
    """Half a frame, then silence: cut off by the request deadline (5 s
    from accept; not before 3 s have passed here)."""
    s = connect(path)
    s.sendall(request("status")[:14])
    t = time.monotonic()
    rc = expect_error(s, ST_TIMEOUT, "timed out")
    took = time.monotonic() - t
    print("cut after %.2f s" % took)
    return rc if took > 3 else 1


def mode_huge(path, arg):
    s = connect(path)
    send_quiet(s, b"NFQD" + struct.pack("!BBHI", VERSION, REQUEST, 0,
                                        0xffffffff) + b"x" * 100)
    return expect_error(s, ST_TOO_BIG, "too large")


def mode_oversized(path, arg):
    """A well-formed frame just over the 64 KiB request limit."""
    s = connect(path)
    send_quiet(s, frame(b"\0\1" + b"a" * (64 * 1024)))
    return expect_error(s, ST_TOO_BIG, "too large")


def mode_version(path, arg):
    s = connect(path)
    send_quiet(s, frame(b"\0\1status\0", version=2))
    return expect_error(s, ST_VERSION,
                        "protocol version 2 not supported (daemon speaks 1)")


def mode_badpayload(path, arg):
    s = connect(path)
    send_quiet(s, frame(b"\0\2status\0"))
    return expect_error(s, ST_BAD_FRAME, "malformed command")


def mode_silent(path, arg):
    """Connect and never speak: closed after the request deadline (5 s
    from accept; not before 3 s have passed here)."""
    s = connect(path)
    t = time.monotonic()
    rc = expect_error(s, ST_TIMEOUT, "timed out")
    took = time.monotonic() - t
    print("cut after %.2f s" % took)
    return rc if took > 3 else 1


def mode_slow(path, arg):
    """One byte a second: a whole request would take 25 s; the request
    deadline (5 s from accept, not per byte) cuts it off before."""
    s = connect(path)
    data = request("status")
    t = time.monotonic()
    sent = 0
    try:
        for b in data:
            s.sendall(bytes([b]))
            sent += 1
            time.sleep(1)
    except (BrokenPipeError, ConnectionResetError):
        pass
    took = time.monotonic() - t
    print("cut after %d of %d bytes, %.2f s" % (sent, len(data), took))
    return 0 if sent < len(data) else 1


def mode_many(path, arg):
    """N clients connected at once, then all ask, then all read."""
    n = int(arg or 100)
    socks = [connect(path) for _ in range(n)]
    for s in socks:
        s.sendall(request("stats"))
    ok = 0
    for s in socks:
        r = read_response(s)
        if r and r[0] == ST_OK and "queues" in r[1]:
            ok += 1
        s.close()
    print("%d of %d clients served" % (ok, n))
    return 0 if ok == n else 1


def mode_nonreader(path, arg):
    """Asks for rules, never reads, holds the connection for ARG s."""
    s = connect(path)
    s.sendall(request("rules"))
    time.sleep(float(arg or 1))
    print("done")
    return 0


def mode_stalled(path, arg):
    """The daemon is stopped (SIGSTOP, pid ARG) for 6 s after accepting
    this client, which sends its request meanwhile: it is still served,
    not timed out, when the daemon runs again."""
    import signal
    s = connect(path)
    wait_accepted(s, path)
    os.kill(int(arg), signal.SIGSTOP)
    try:
        s.sendall(request("status"))
        time.sleep(6)
    finally:
        os.kill(int(arg), signal.SIGCONT)
    r = read_response(s)
    print("status %s" % (r[0] if r else "closed"))
    return 0 if r and r[0] == ST_OK else 1


def storm_client(path, kind, tally):
    """One client of mode_storm: "good" asks for stats and must get them
    or a "busy" answer; the others hang up mid-request."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(60.0)
    if kind == "good":
        # A daemon at its connection limit answers "busy" and closes
        # before reading: the send may fail, the answer is still there
        # to read (as nfqd-ctl does).
        try:
            s.sendall(request("stats"))
        except (BrokenPipeError, ConnectionResetError):
            pass
        r = read_response(s)
        if r and r[0] == ST_OK and "queues" in r[1]:
            tally["ok"] += 1
        elif r and r[0] == ST_BUSY and "too many" in r[1].get("error", ""):
            tally["busy"] += 1
        else:
            tally["bad"] += 1
            tally["why"] = repr(r)
    elif kind == "noread":
        s.sendall(request("rules"))
    else:
        send_quiet(s, request("status")[:9])
        if kind == "halfhold":
            time.sleep(0.3)
    s.close()


def mode_storm(path, arg):
    """ARG (1000) connects: 1 in 20 by a child process SIGKILLed after
    half a request; the rest by 250 threads at once, in turn a good
    client, one closing after half a frame, one holding half a frame for
    0.3 s, one closing before reading its answer."""
    import resource
    import signal
    import threading
    n = int(arg or 1000)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    n_kill = n // 20
    kids = []
    for _ in range(n_kill):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.sendall(request("status")[:9])
            os.write(wfd, b"x")
            time.sleep(60)
            os._exit(0)
        os.close(wfd)
        kids.append((pid, rfd))
    for pid, rfd in kids:
        os.read(rfd, 1)
        os.close(rfd)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    kinds = ["good", "halfclose", "halfhold", "good", "noread"]
    jobs = [kinds[i % len(kinds)] for i in range(n - n_kill)]
    n_threads = 250
    start = threading.Barrier(n_threads)
    lock = threading.Lock()
    total = {"ok": 0, "busy": 0, "bad": 0, "err": 0}

    def worker(mine):
        tally = {"ok": 0, "busy": 0, "bad": 0, "err": 0}
        start.wait()
        for kind in mine:
            try:
                storm_client(path, kind, tally)
            except OSError as e:
                if kind == "good":
                    tally["err"] += 1
                    tally["why"] = repr(e)
        with lock:
            for k, v in tally.items():
                total[k] = v if k == "why" else total.get(k, 0) + v

    threads = [threading.Thread(target=worker, args=(jobs[i::n_threads],))
               for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    good = jobs.count("good")
    print("%d connects (%d killed mid-request): %d of %d good clients "
          "answered, %d busy, %d bad, %d errors %s"
          % (n, n_kill, total["ok"], good, total["busy"], total["bad"],
             total["err"], total.get("why", "")))
    return 0 if total["ok"] + total["busy"] == good and total["ok"] else 1


MODES = {
    "ok": mode_ok,
    "garbage": mode_garbage,
    "truncated": mode_truncated,
    "truncated-wait": mode_truncated_wait,
    "huge": mode_huge,
    "oversized": mode_oversized,
    "version": mode_version,
    "badpayload": mode_badpayload,
    "silent": mode_silent,
    "slow": mode_slow,
    "stalled": mode_stalled,
    "many": mode_many,
    "nonreader": mode_nonreader,
    "storm": mode_storm,
}


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in MODES:
        print("usage: ctl_client.py SOCKET MODE [ARG]; modes: "
              + " ".join(sorted(MODES)), file=sys.stderr)
        return 2
    arg = sys.argv[3] if len(sys.argv) > 3 else None
    try:
        return MODES[sys.argv[2]](sys.argv[1], arg)
    except (OSError, AssertionError, ValueError) as e:
        print("error: %r" % (e,))
        return 1


if __name__ == "__main__":
    sys.exit(main())
