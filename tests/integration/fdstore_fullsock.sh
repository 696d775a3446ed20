#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A config acknowledgement lost to a full receive buffer is asked for
# again, not turned into a failed start: the kernel sends ACKs without
# waiting (netlink_ack, MSG_DONTWAIT), so on a socket whose buffer is full
# the ACK of the adoption's config message is dropped. fake_systemd.py
# keeps queue 0's socket (rcvbuf 64K, no --queue-bypass); nfqd is stopped
# (SIGSTOP) while 3,000 datagrams fill the socket, then killed (SIGKILL):
# the next nfqd adopts the full socket. It must start (READY=1, no exit
# 1), say that it sent the config message again, and every datagram the
# kernel queued must be judged: delivered = id_sequence - user_dropped
# (the kernel numbers the packets it could not deliver too), none left. Then a reload whose new options
# need the worker's reconfigure ACK, again on a full socket.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables python3
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0

write_conf() {
	conf_file nfqd.conf <<EOF
options {
	queues 1;
	queue-maxlen 65536;
	rcvbuf 64K;
	copy-range $1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input { udp dport 9 accept; }
EOF
}
conf=$(write_conf 256)
mkdir "$TMP/fs"
ip netns exec "$NS_B" "$TOP_SRCDIR/tests/integration/fake_systemd.py" "$TMP/fs" -- \
	"$NFQD" -c "$conf" >"$TMP/nfqd.log" 2>&1 &
mgr=$!
bg_pid $mgr
main_pid() { cat "$TMP/fs/main.pid" 2>/dev/null; }
wait_ready() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ -n "$1" ] && grep -q "^[0-9.]* $1 .*READY=1" "$TMP/fs/notify.log" 2>/dev/null && return 0
		kill -0 $mgr 2>/dev/null || fail "fake_systemd exited"
		sleep 0.05
	done
	fail "no READY=1 from '$1': $(tail -5 "$TMP/fs/notify.log")"
}
end=$(deadline "$WAIT_SECONDS")
while [ -z "$(main_pid)" ] && before "$end"; do sleep 0.05; done
wait_ready "$(main_pid)"

# Fill the socket while nfqd cannot read.
fill() {
	kill -STOP "$(main_pid)"
	send_udp "$NS_A" 192.0.2.2 3000 -q
	ud=$(kqueue_field "$NS_B" 0 7)
	[ "${ud:-0}" -gt 0 ] || fail "the socket did not fill (user_dropped ${ud:-none})"
}
fill
old=$(main_pid)
kill -KILL "$old"
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	[ -n "$(main_pid)" ] && [ "$(main_pid)" != "$old" ] && break
	sleep 0.05
done
wait_ready "$(main_pid)"
grep -q "exited 256" "$TMP/fs/notify.log" && fail "an nfqd exited 1: $(cat "$TMP/nfqd.log")"
grep -q "adopted the socket" "$TMP/nfqd.log" || fail "queue 0 not adopted: $(cat "$TMP/nfqd.log")"
# Everything the kernel queued is judged.
end=$(deadline "$WAIT_SECONDS")
while [ "$(kqueue_field "$NS_B" 0 3)" != 0 ] && before "$end"; do
	sleep 0.1
done
line=$(kqueue_line "$NS_B" 0)
read -r _ _ total _ _ qd ud idseq _ <<<"$line"
got=$(wait_sink_udp $((idseq - ud)))
log "adoption of a full socket: kernel queued $idseq (user_dropped $ud), delivered $got, left $total"
[ "$total" = 0 ] || fail "$total packets left in the kernel queue"
[ "$got" = $((idseq - ud)) ] || fail "queued $((idseq - ud)), delivered $got"
grep -q "no ACK from the kernel .*config message sent again" "$TMP/nfqd.log" \
	|| fail "the adoption's ACK was not asked for again: $(cat "$TMP/nfqd.log")"

# A reload that reconfigures the queue (copy-range) on a full socket.
fill
write_conf 512 >/dev/null
in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" reload >"$TMP/reload.out" 2>&1 &
rpid=$!
bg_pid $rpid
# The request waits for the stopped nfqd: its connection in the control
# socket's backlog (the listening socket's Recv-Q).
backlog() {
	in_b ss -xlH | awk -v s="$TMP/nfqd.sock" '$5 == s { print $3 }'
}
end=$(deadline "$WAIT_SECONDS")
while [ "$(backlog)" != 1 ] && before "$end"; do
	sleep 0.05
done
[ "$(backlog)" = 1 ] || fail "nfqd-ctl reload did not connect to the stopped nfqd"
kill -CONT "$(main_pid)"
wait $rpid || fail "reload on a full socket failed: $(cat "$TMP/reload.out")"
log "reload on a full socket: $(cat "$TMP/reload.out")"
kill -TERM $mgr
wait $mgr
log "ok"
