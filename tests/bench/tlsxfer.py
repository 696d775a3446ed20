#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/tlsxfer.py - a TLS transfer for the names phase's bypass:
#   tlsxfer.py server PORT CERT KEY   one connection; prints bytes received
#   tlsxfer.py client HOST PORT SNI BYTES [TIMEOUT_S]
#                                     sends BYTES with server name SNI;
#                                     prints seconds from connect to the
#                                     server's close_notify (all was read)
# Both ends close with close_notify: a plain close with the server's
# session tickets unread would reset the connection and lose data.
import socket, ssl, sys, time
if sys.argv[1] == "server":
    port, cert, key = int(sys.argv[2]), sys.argv[3], sys.argv[4]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port)); ls.listen(1)
    c, _ = ls.accept()
    s = ctx.wrap_socket(c, server_side=True)
    n = 0
    while True:
        b = s.recv(1 << 16)
        if not b: break
        n += len(b)
    s.unwrap()
    print(n, flush=True)
else:
    host, port, sni, total = sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
    c = socket.create_connection((host, port), timeout=float(sys.argv[6]) if len(sys.argv) > 6 else 30)
    t0 = time.monotonic()
    s = ctx.wrap_socket(c, server_hostname=sni)
    buf = bytes(1 << 16); left = total
    while left:
        k = min(left, len(buf)); s.sendall(buf[:k]); left -= k
    s.unwrap()  # close_notify, and wait for the server's: all was read
    c.close()
    print("%.3f" % (time.monotonic() - t0))
