#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No silent fail-open under a real systemd: a restart whose config is
# refused keeps enforcing the last config that loaded (kept in the unit's
# file descriptor store as a memfd). The rule has --queue-bypass, so a
# daemon that did not come back would let the blocked port through.
#
# 1. nfqd.conf(5)'s EXAMPLE lines 'user "nfqd"; control-group "nfqd";'
#    on a system without group nfqd: "nfqd -t" refuses them, a "systemctl
#    restart" runs the last good config: 0 of 20 delivered to the blocked
#    port, a priority-2 journal line, config_state "last-good" in
#    "nfqd-ctl -j status", the refusal in the unit's StatusText.
# 2. The same with a syntax error.
# 3. A reload of the fixed file ends the fallback.
. "$(dirname "$0")/lib.sh"

N=20
sys_setup
in_c getent group nfqd >/dev/null && fail "the container has a group nfqd"
in_c getent passwd nobody >/dev/null || fail "the container has no user nobody"
good='options { queues 1; }
hook input { udp dport 9 drop; }'
echo "$good" | sys_write_conf
in_c systemctl start nfqd || fail "systemctl start nfqd failed"
wait_active
in_c iptables -A INPUT -i lo -p udp -j NFQUEUE --queue-num 0 --queue-bypass \
	|| fail "iptables NFQUEUE rule"
in_c nft -f - <<'NFT' || fail "nft sink"
table inet sink {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 9 counter drop
		udp dport 7 counter drop
	}
}
NFT
port_count() {
	in_c nft list chain inet sink in | awk -v p="$1" '$0 ~ "dport " p " " {
		for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'
}
# Send N datagrams to the blocked port 9 and one to port 7 (accepted) as
# a marker; print how many of the N were delivered.
delivered() {
	local b9 b7 end
	b9=$(port_count 9) b7=$(port_count 7)
	send_c "$N" 9
	send_c 1 7
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ "$(port_count 7)" -gt "$b7" ] && break
		sleep 0.1
	done
	[ "$(port_count 7)" -gt "$b7" ] || fail "the marker to port 7 was not delivered"
	echo $(( $(port_count 9) - b9 ))
}
n=$(delivered)
[ "$n" = 0 ] || fail "good config: $n of $N delivered to the blocked port"
log "good config: 0 of $N delivered to port 9"

conf=$NFQD_SYSCONFDIR/nfqd/nfqd.conf
check_restart() {
	local what=$1 pattern=$2 since state j
	in_c "$NFQD_SBINDIR/nfqd" -t >"$TMP/t.out" 2>&1 \
		&& fail "$what: nfqd -t accepted it: $(cat "$TMP/t.out")"
	grep -Eq "$pattern" "$TMP/t.out" || fail "$what: nfqd -t: $(cat "$TMP/t.out")"
	log "$what: nfqd -t: $(head -1 "$TMP/t.out")"
	since=$(in_c date '+%Y-%m-%d %H:%M:%S.%6N')
	old=$(unit_prop MainPID)
	sys_restart || fail "$what: systemctl restart failed"
	wait_active "$old"
	state=$(unit_prop ActiveState)
	n=$(delivered)
	log "$what: restart: unit $state, $n of $N delivered to the blocked port"
	[ "$n" = 0 ] || fail "$what: $n of $N delivered after the restart"
	in_c journalctl -u nfqd -p 2 --since "$since" --no-pager -o cat >"$TMP/crit" 2>&1
	grep -Eq "refused: .*$pattern.*running the last config that loaded" "$TMP/crit" \
		|| fail "$what: no priority-2 journal line: $(cat "$TMP/crit")"
	log "$what: journal -p 2: $(grep 'running the last config' "$TMP/crit")"
	j=$(ctl_c -j status) || fail "$what: nfqd-ctl status"
	python3 - "$j" "$pattern" <<'PY' || fail "$what: status: $j"
import json, re, sys
s = json.loads(sys.argv[1])
assert s["config_state"] == "last-good", s
assert re.search(sys.argv[2], s["refused"]), s
PY
	log "$what: nfqd-ctl status: $(ctl_c status | grep 'config state')"
	unit_prop StatusText | grep -Eq "LAST GOOD CONFIG.*$pattern" \
		|| fail "$what: StatusText: $(unit_prop StatusText)"
	log "$what: StatusText: $(unit_prop StatusText)"
}

# 1. The EXAMPLE's user and control group, no group nfqd here.
echo "$good" | sed 's/queues 1;/queues 1; user "nobody"; control-group "nfqd";/' \
	| sys_write_conf
check_restart "missing group" 'control-group .nfqd.: no such group'

# 2. A syntax error.
echo "$good" | sed 's/drop;/drop/' | sys_write_conf
check_restart "syntax error" "$conf:[0-9]+:[0-9]+: syntax error"

# 3. A good file again: a reload ends the fallback.
echo "$good" | sys_write_conf
in_c systemctl reload nfqd || fail "reload of the fixed file failed"
ctl_c -j status | grep -q '"config_state": *"file"' \
	|| fail "still not the file after a good reload: $(ctl_c -j status)"
n=$(delivered)
[ "$n" = 0 ] || fail "after the reload: $n of $N delivered"
log "ok: both refused restarts kept port 9 blocked; a good reload ends the fallback"
