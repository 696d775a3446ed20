#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A restart whose config is refused keeps the last config that loaded,
# without systemd: fake_systemd.py keeps what nfqd stores (the queue
# socket, FDNAME=nfq-0, and the config text as a memfd, FDNAME=config)
# and starts nfqd again when it exits. The rule has --queue-bypass, so a
# daemon that does not come back lets everything through.
#
# A syntax error, then nfqd.conf(5)'s EXAMPLE lines 'user "nfqd";
# control-group "nfqd";' on a system without such a group: "nfqd -t"
# refuses both, a restart runs the last good config (port 9 stays
# blocked: 0 of 20 delivered), logs at priority 2 what it refused, and
# says so in "nfqd-ctl status" (text and JSON) and in STATUS=. A reload
# of a fixed file ends it. Without a stored config, a refused config
# stops nfqd with exit status 1 and a priority-2 line.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables python3
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0 --queue-bypass

GROUP=nfqd-nogroup-$$
getent group "$GROUP" >/dev/null && fail "group $GROUP exists"
good() {
	cat <<EOF
options {
	queues 1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input { udp dport 9 drop; }
EOF
}
good | conf_file nfqd.conf >/dev/null
conf=$TMP/nfqd.conf
ctl() { in_b "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }

mkdir "$TMP/fs"
ip netns exec "$NS_B" "$TOP_SRCDIR/tests/integration/fake_systemd.py" "$TMP/fs" -- \
	"$NFQD" -c "$conf" >"$TMP/nfqd.log" 2>&1 &
mgr=$!
bg_pid $mgr
main_pid() { cat "$TMP/fs/main.pid" 2>/dev/null; }
# Wait until the service with pid $1 has sent READY=1.
wait_ready() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		grep -q "^[0-9.]* $1 .*READY=1" "$TMP/fs/notify.log" 2>/dev/null && return 0
		kill -0 $mgr 2>/dev/null || fail "fake_systemd exited"
		sleep 0.05
	done
	fail "no READY=1 from $1: $(cat "$TMP/fs/notify.log")"
}
# Kill the service with signal $1, wait for the next one to be ready.
restart_with() {
	local old end
	old=$(main_pid)
	kill -"$1" "$old"
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ -n "$(main_pid)" ] && [ "$(main_pid)" != "$old" ] && break
		sleep 0.05
	done
	[ "$(main_pid)" != "$old" ] || fail "no new process after SIG$1"
	wait_ready "$(main_pid)"
}
# Send 20 datagrams to the blocked port; print how many were delivered.
delivered_of_20() {
	local before
	before=$(sink_udp_packets)
	send_udp "$NS_A" 192.0.2.2 20 -q
	# A drop is not an event to wait for: a marker to an open port is.
	send_udp "$NS_A" 192.0.2.2 1 -q -p 7
	wait_sink_udp $((before + 1)) >/dev/null
	echo $(( $(sink_udp_packets) - before - 1 ))
}
end=$(deadline "$WAIT_SECONDS")
while [ -z "$(main_pid)" ] && before "$end"; do
	sleep 0.05
done
wait_ready "$(main_pid)"
grep -q "FDSTORE=1|.*FDNAME=config" "$TMP/fs/notify.log" \
	|| fail "the config was not stored: $(cat "$TMP/fs/notify.log")"
n=$(delivered_of_20)
[ "$n" = 0 ] || fail "good config: $n of 20 delivered to the blocked port"

check_last_good() {
	local what=$1 sig=$2 pattern=$3 j
	in_b "$NFQD" -t -c "$conf" >"$TMP/t.out" 2>&1 \
		&& fail "$what: nfqd -t accepted it"
	grep -q "$pattern" "$TMP/t.out" || fail "$what: nfqd -t: $(cat "$TMP/t.out")"
	: >"$TMP/nfqd.log"
	restart_with "$sig"
	grep -aq "critical: config $conf refused: .*$pattern.*running the last config that loaded" \
		"$TMP/nfqd.log" || fail "$what: no critical line: $(cat "$TMP/nfqd.log")"
	j=$(ctl -j status) || fail "$what: status"
	python3 - "$j" "$pattern" <<'PY' || fail "$what: status JSON $j"
import json, re, sys
s = json.loads(sys.argv[1])
assert s["config_state"] == "last-good", s
assert re.search(sys.argv[2], s["refused"]), s
PY
	ctl status | grep -q "LAST GOOD CONFIG" || fail "$what: status text: $(ctl status)"
	grep "^[0-9.]* $(main_pid) .*STATUS=LAST GOOD CONFIG" "$TMP/fs/notify.log" \
		| grep -q "$pattern" || fail "$what: STATUS=: $(tail -3 "$TMP/fs/notify.log")"
	n=$(delivered_of_20)
	[ "$n" = 0 ] || fail "$what: $n of 20 delivered to the blocked port"
	log "$what: -t refuses it, SIG$sig restart runs the last good config, 0 of 20 delivered"
	log "  $(grep -a "critical: config" "$TMP/nfqd.log")"
}

# A syntax error.
good | sed 's/udp dport 9 drop;/udp dport 9 drop/' >"$conf"
check_last_good "syntax error" KILL "$conf:[0-9]*:[0-9]*: "

# nfqd.conf(5)'s EXAMPLE: user and control group that do not exist here.
good | sed "s|queues 1;|queues 1; user \"nobody\"; control-group \"$GROUP\";|" >"$conf"
check_last_good "missing control-group" TERM "control-group \"$GROUP\": no such group"

# A reload of a fixed file ends the fallback.
good >"$conf"
ctl reload >/dev/null || fail "reload of the fixed file"
[ "$(ctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["config_state"])')" = file ] \
	|| fail "still last-good after a good reload"
grep -aq "no longer running the last good config" "$TMP/nfqd.log" \
	|| fail "no log line for the end of the fallback"
kill -TERM $mgr
wait $mgr

# Under a manager with an empty store: a refused config stops nfqd
# (exit 1), at priority 2.
good | sed 's/udp dport 9 drop;/udp dport 9 drop/' >"$conf"
mkdir "$TMP/fs2"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' "$TMP/fs2/notify.sock"
NOTIFY_SOCKET=$TMP/fs2/notify.sock in_b "$NFQD" -c "$conf" >"$TMP/plain.log" 2>&1
rc=$?
[ $rc = 1 ] || fail "refused config without a store: exit $rc"
grep -q "critical: config $conf refused .*no last good config" "$TMP/plain.log" \
	|| fail "no critical line: $(cat "$TMP/plain.log")"
log "ok"
