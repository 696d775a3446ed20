#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# names_reload.sh - a connection dropped on its name is judged again by a
# reload's policy (nfqd.conf(5) NAMES): curl's request for a listed Host
# is dropped and retransmitted; the set file loses the name, nfqd-ctl
# reload, and the retransmission passes: the request completes. A name
# the new file lists is dropped on a new connection.
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
stop_nfqd
log "ok"
