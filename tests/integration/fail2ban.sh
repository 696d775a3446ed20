#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fail2ban.sh - contrib/fail2ban/action.d/nfqd.conf with Debian's real
# fail2ban-server (its own config, socket, pid file and an in-memory
# database in $TMP, in the foreground; never the system service) and its
# real sshd filter: three failed logins from 192.0.2.1 written to a log
# file get that address banned within the find time, nfqd drops its
# packets, and the ban ends on time: its packets pass again.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

command -v fail2ban-server >/dev/null 2>&1 || skip "fail2ban-server not installed"
[ -f /etc/fail2ban/filter.d/sshd.conf ] || skip "fail2ban's sshd filter not installed"
ns_setup
sink_setup
queue_rule_setup 0
SOCK="$TMP/nfqd.sock"
CONF=$(conf_file nfqd.conf <<EOF
options {
    queues 1;
    stats-file "$TMP/stats";
    control-socket "$SOCK";
    set-state-file none;
}
set fail2ban  { type ipv4_addr; flags timeout; }
set fail2ban6 { type ipv6_addr; flags timeout; }
hook input {
    ip saddr @fail2ban drop;
    ip6 saddr @fail2ban6 drop;
}
EOF
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"

# fail2ban: everything in $TMP/f2b.
F2B="$TMP/f2b"
mkdir -p "$F2B/action.d" "$F2B/filter.d"
cp "$TOP_SRCDIR/contrib/fail2ban/action.d/nfqd.conf" "$F2B/action.d/"
cp /etc/fail2ban/filter.d/sshd.conf /etc/fail2ban/filter.d/common.conf "$F2B/filter.d/"
AUTH="$TMP/auth.log"
: >"$AUTH"
BANTIME=4
cat >"$F2B/fail2ban.conf" <<EOF
[Definition]
loglevel = INFO
logtarget = $F2B/fail2ban.log
socket = $F2B/fail2ban.sock
pidfile = $F2B/fail2ban.pid
dbfile = :memory:
EOF
cat >"$F2B/jail.conf" <<EOF
[DEFAULT]
backend = polling
[sshd]
enabled = true
filter = sshd
logpath = $AUTH
maxretry = 3
findtime = 60
bantime = $BANTIME
banaction = nfqd
action = nfqd[nfqd_ctl="$NFQD_CTL", socket="$SOCK"]
EOF
fail2ban-server -f -x -c "$F2B" -s "$F2B/fail2ban.sock" -p "$F2B/fail2ban.pid" \
	--logtarget "$F2B/fail2ban.log" >"$TMP/f2b.out" 2>&1 &
F2B_PID=$!
bg_pid $F2B_PID
# Wait for the jail in the server's jail list: asking "status sshd" before
# the jail is loaded makes the server log an UnknownJailException ERROR,
# which the check of its log below would then count against nfqd's action.
n=0
until fail2ban-client -s "$F2B/fail2ban.sock" status 2>/dev/null | grep -q "Jail list:.*sshd"; do
	n=$((n + 1)); [ $n -lt 150 ] || fail "fail2ban did not start: $(cat "$TMP/f2b.out" "$F2B/fail2ban.log")"
	kill -0 $F2B_PID 2>/dev/null || fail "fail2ban-server exited: $(cat "$TMP/f2b.out")"
	sleep 0.1
done
log "fail2ban-server $(fail2ban-server -V | head -n 1) running, jail sshd"

# $1 datagrams from A (192.0.2.1): how many reach the sink.
passed() {
	local before after
	before=$(sink_udp_packets)
	send_udp_to "$NS_A" 192.0.2.2 "$1" 9
	after=$(wait_sink_udp $((before + $1)))
	echo $((after - before))
}
[ "$(passed 3)" = 3 ] || fail "packets dropped before any ban"

# Three failed logins, as sshd writes them.
for i in 1 2 3; do
	echo "$(date '+%b %e %H:%M:%S') testhost sshd[4242]: Failed password for root from 192.0.2.1 port 5000$i ssh2" >>"$AUTH"
done
# Banned within the find time: the element appears in the set.
n=0
until ctl -j set list fail2ban 2>/dev/null | grep -q '"192.0.2.1"'; do
	n=$((n + 1)); [ $n -lt 600 ] || fail "not banned within the find time: $(cat "$F2B/fail2ban.log")"
	sleep 0.1
done
log "banned: $(ctl set list fail2ban)"
ctl -j set list fail2ban >"$TMP/list.json"
json_check "$TMP/list.json" "
e = d['elements'][0]
assert e['origin'] == 'runtime' and 0 < e['expires'] <= $BANTIME, d
" || fail "the ban carries no timeout of bantime"
[ "$(passed 3)" = 0 ] || fail "a banned source's packets pass"

# The ban ends on time (fail2ban's unban, nfqd's timeout): they pass again.
n=0
while [ "$(passed 1)" != 1 ]; do
	n=$((n + 1)); [ $n -lt 150 ] || fail "ban did not end: $(cat "$F2B/fail2ban.log")"
	sleep 0.1
done
n=0
until grep -q "Unban 192.0.2.1" "$F2B/fail2ban.log"; do
	n=$((n + 1)); [ $n -lt 100 ] || fail "fail2ban did not unban: $(cat "$F2B/fail2ban.log")"
	sleep 0.1
done
grep "Ban 192.0.2.1\|Unban 192.0.2.1" "$F2B/fail2ban.log" | sed 's/^/# /'
! grep -qi "error" "$F2B/fail2ban.log" || fail "fail2ban logged errors: $(grep -i error "$F2B/fail2ban.log")"
[ "$(passed 3)" = 3 ] || fail "packets dropped after the unban"

fail2ban-client -s "$F2B/fail2ban.sock" stop >/dev/null 2>&1
n=0
while kill -0 $F2B_PID 2>/dev/null; do
	n=$((n + 1)); [ $n -lt 100 ] || fail "fail2ban-server did not stop"
	sleep 0.1
done
wait $F2B_PID 2>/dev/null
stop_nfqd
log "ok"
