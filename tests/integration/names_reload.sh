#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# names_reload.sh - a connection dropped on its name is judged again by a
# reload's policy (nfqd.conf(5) NAMES): curl's request for a listed Host
# is dropped and retransmitted; the set file loses the name, nfqd-ctl
# reload, and the retransmission passes: the request completes. A name
# the new file lists is dropped on a new connection. A reload with
# another flow-table-size and flow-timeout keeps the flows: a connection
# open across it goes on (its flow's name stays known).
. "$TOP_SRCDIR/tests/lib.sh"

require_root
require_cmd ip iptables curl
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"

ns_setup
in_b iptables -A INPUT -i vb -p tcp --dport 80 -j NFQUEUE --queue-num 0 ||
	fail "NFQUEUE rule"
echo hello >"$TMP/index.html"
ip netns exec "$NS_B" /usr/bin/python3 -m http.server 80 --bind 192.0.2.2 \
	--directory "$TMP" >"$TMP/http.log" 2>&1 &
bg_pid $!

echo "www.blocked.test" >"$TMP/blk.txt"
conf=$(conf_file nfqd.conf <<EOT
options {
	queues { 0 };
	copy-range 65531;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
	set-state-file none;
	flow-table-size 1024;
	flow-timeout 60;
}
set blk { type domain; file "$TMP/blk.txt"; }
hook input {
	policy accept;
	http host @blk drop;
}
EOT
)
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0
get() { in_a curl -s -m "$2" --resolve "$1:80:192.0.2.2" "http://$1/index.html"; }
end=$(deadline "$WAIT_SECONDS")
until get ok.test 2 >/dev/null; do
	before "$end" || fail "HTTP server not reachable through nfqd"
	sleep 0.1
done
get www.blocked.test 2 >/dev/null && fail "the listed Host was answered"

# The request dropped, then retransmitted (1 s, 3 s, 7 s... after it):
# the reload at about 1.5 s lets a retransmission through.
get www.blocked.test 30 >"$TMP/slow.out" 2>&1 &
slow=$!
sleep 1.5
echo "other.test" >"$TMP/blk.txt"
out=$(ip netns exec "$NS_B" "$NFQD_CTL" -s "$TMP/nfqd.sock" reload 2>&1) ||
	fail "reload: $out"
wait "$slow" || fail "the connection dropped before the reload stayed dropped: $(cat "$TMP/slow.out")"
grep -q hello "$TMP/slow.out" || fail "no answer: $(cat "$TMP/slow.out")"
get other.test 2 >/dev/null && fail "the Host the new file lists was answered"
get www.blocked.test 5 >/dev/null || fail "a new connection to the unlisted Host failed"

# A kept-alive connection named ok.test, open across a reload that
# resizes the flow table: its next segment still has its flow's name.
cat >"$TMP/echo.py" <<'PYEOF2'
import socket, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("192.0.2.2", 8080))
s.listen(16)
def serve(c):
    while c.recv(4096):
        c.sendall(b"ok\n")
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PYEOF2
cat >"$TMP/keep.py" <<'PYEOF2'
import os, socket, sys, time
s = socket.create_connection(("192.0.2.2", 8080), timeout=10)
s.sendall(b"GET / HTTP/1.1\r\nHost: ok.test\r\n\r\n")
assert s.recv(16) == b"ok\n"
open(sys.argv[1] + ".first", "w").close()
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
s.settimeout(15)
s.sendall(b"more")
print("second answer", s.recv(16))
PYEOF2
in_b iptables -A INPUT -i vb -p tcp --dport 8080 -j NFQUEUE --queue-num 0 ||
	fail "NFQUEUE rule 8080"
ip netns exec "$NS_B" /usr/bin/python3 "$TMP/echo.py" >"$TMP/echo.log" 2>&1 &
bg_pid $!
end=$(deadline "$WAIT_SECONDS")
until in_b ss -ltn | grep -q ":8080 "; do
	before "$end" || fail "echo server not listening"
	sleep 0.1
done
in_a /usr/bin/python3 "$TMP/keep.py" "$TMP/go" >"$TMP/keep.out" 2>&1 &
keep=$!
end=$(deadline "$WAIT_SECONDS")
until [ -e "$TMP/go.first" ]; do
	before "$end" && kill -0 "$keep" 2>/dev/null ||
		fail "kept-alive connection: $(cat "$TMP/keep.out")"
	sleep 0.1
done
sed -i 's/flow-table-size 1024;/flow-table-size 512;/; s/flow-timeout 60;/flow-timeout 30;/' "$conf"
out=$(ip netns exec "$NS_B" "$NFQD_CTL" -s "$TMP/nfqd.sock" reload 2>&1) ||
	fail "reload: $out"
end=$(deadline "$WAIT_SECONDS")
until grep -q "flow table resized to 512 flows" "$TMP/nfqd.log"; do
	before "$end" || fail "no resize: $(tail -3 "$TMP/nfqd.log")"
	# The worker reconfigures at its next packet or wake-up.
	sleep 0.1
done
touch "$TMP/go"
wait "$keep" || fail "the connection open across the resize failed: $(cat "$TMP/keep.out")"
grep -q "second answer b'ok" "$TMP/keep.out" || fail "no second answer: $(cat "$TMP/keep.out")"
stop_nfqd
log "ok"
