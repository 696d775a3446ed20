#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfqd.service under a real systemd (Debian's; 252 on bookworm), installed with
# "make install DESTDIR=": the example config is installed and never
# overwritten; start (READY=1, STATUS=); reload through the unit, good and
# bad, and by SIGHUP; a bad config at start; verdicts, the stats file and
# the control socket inside the sandbox; option "user" with
# "control-group"; stop; and the unit's exposure score.
. "$(dirname "$0")/lib.sh"

MAX_EXPOSURE=2.0
conf="$NFQD_SYSCONFDIR/nfqd/nfqd.conf"

sys_require
sys_install

# --- make install: the example config, never overwritten
cmp -s "$SYS_ROOT$conf" "$TOP_SRCDIR/contrib/nfqd.conf.example" \
	|| fail "make install did not put the example config at $conf"
[ -f "$SYS_ROOT$NFQD_EXAMPLESDIR/nfqd.conf.example" ] \
	|| fail "make install did not put the example under $NFQD_EXAMPLESDIR"
echo "# edited by the admin" >>"$SYS_ROOT$conf"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -s -C "$TOP_BUILDDIR" install DESTDIR="$SYS_ROOT" >/dev/null 2>&1 \
	|| fail "second make install failed"
tail -n 1 "$SYS_ROOT$conf" | grep -q "edited by the admin" \
	|| fail "a second make install overwrote $conf"
log "make install: example config at $conf, kept on reinstall"
sed -i '$d' "$SYS_ROOT$conf"

sys_boot

# --- start with the installed example config
in_c systemctl start nfqd || fail "systemctl start nfqd failed"
wait_active
status=$(unit_prop StatusText)
echo "$status" | grep -Eq '^generation 1, [0-9]+ queues$' \
	|| fail "STATUS after start: '$status'"
ctl_c status >"$TMP/status.out" || fail "nfqd-ctl status failed"
grep -q "^config: *$conf\$" "$TMP/status.out" \
	|| fail "nfqd-ctl status: $(cat "$TMP/status.out")"
log "started: '$status'; nfqd-ctl status answers inside"
main_pid=$(unit_prop MainPID)

# --- the settings the daemon side relies on
[ "$(unit_prop FileDescriptorStoreMax)" -ge 1024 ] \
	|| fail "FileDescriptorStoreMax=$(unit_prop FileDescriptorStoreMax)"
[ "$(unit_prop NotifyAccess)" = main ] \
	|| fail "NotifyAccess=$(unit_prop NotifyAccess)"
log "FileDescriptorStoreMax=$(unit_prop FileDescriptorStoreMax)," \
	"WatchdogUSec=$(unit_prop WatchdogUSec)"

# --- reload through the unit: a good config
sys_write_conf <<'EOF'
options {
	queues 2;
	queue-maxlen 16384;
}
hook input {
	udp dport 7 drop;
	udp dport 9 mark set 0x10 accept;
}
EOF
in_c systemctl reload nfqd || fail "systemctl reload (good config) failed"
[ "$(generation)" = 2 ] || fail "generation $(generation) after a reload"
[ "$(unit_prop StatusText)" = "generation 2, 2 queues" ] \
	|| fail "STATUS after reload: '$(unit_prop StatusText)'"
[ "$(unit_prop ActiveState)" = active ] || fail "not active after reload"
log "reload (good): exit 0, generation 2, '$(unit_prop StatusText)'"

# --- verdicts and the stats file inside the sandbox
sys_flood_setup
send_c 2000 9
send_c 500 7
wait_sink "2000 0" || fail "sink (marked, unmarked): '$(sink_counts)'"
end=$(deadline "$WAIT_SECONDS")
while [ "$(stats_sum 10)" != 2500 ] && before "$end"; do
	sleep 0.1
done
stats=/run/nfqd/stats
in_c awk 'NF < 20 || $2 == 0 { exit 1 } { s += $10; d += $13 }
	END { exit !(NR == 2 && s == 2500 && d == 500) }' "$stats" \
	|| fail "stats file: $(in_c cat "$stats")"
log "2000 packets marked and delivered, 500 dropped;" \
	"the stats file has the kernel's columns"

# --- reload through the unit: a bad config fails visibly
sys_write_conf <<'EOF'
options {
	queues 2;
	no-such-option 1;
}
EOF
if in_c systemctl reload nfqd 2>"$TMP/reload.err"; then
	fail "systemctl reload succeeded with a bad config"
fi
[ "$(generation)" = 2 ] || fail "generation $(generation) after a bad reload"
[ "$(unit_prop ActiveState)" = active ] \
	|| fail "state '$(unit_prop ActiveState)' after a bad reload"
[ "$(unit_prop MainPID)" = "$main_pid" ] || fail "main PID changed on reload"
status=$(unit_prop StatusText)
case $status in
"reload failed, keeping generation 2, 2 queues: $conf:3:2: unknown option"*) ;;
*) fail "STATUS after a bad reload: '$status'" ;;
esac
in_c journalctl -u nfqd --no-pager -o cat | grep -q "$conf:3:2: unknown option" \
	|| fail "the reload error is not in the journal"
log "reload (bad): systemctl reload failed, generation 2 kept, STATUS '$status'"

# --- SIGHUP: the daemon's RELOADING=1 ... READY=1 alone
in_c systemctl kill --kill-whom=main -s HUP nfqd || fail "systemctl kill -s HUP"
end=$(deadline "$WAIT_SECONDS")
until in_c journalctl -u nfqd --no-pager -o cat \
		| grep -q "reload failed, keeping generation 2: $conf:3:2: unknown option" ||
		! before "$end"; do
	sleep 0.1
done
[ "$(unit_prop ActiveState)" = active ] \
	|| fail "state '$(unit_prop ActiveState)' after SIGHUP with a bad config"
[ "$(generation)" = 2 ] || fail "generation $(generation) after a bad SIGHUP"
sys_write_conf <<'EOF'
options { queues 2; }
hook input { udp dport 9 mark set 0x10 accept; }
EOF
in_c systemctl kill --kill-whom=main -s HUP nfqd || fail "systemctl kill -s HUP"
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	[ "$(generation)" = 3 ] && [ "$(unit_prop ActiveState)" = active ] && break
	sleep 0.1
done
[ "$(generation)" = 3 ] && [ "$(unit_prop ActiveState)" = active ] \
	|| fail "SIGHUP: generation $(generation), state $(unit_prop ActiveState)"
log "SIGHUP: bad config kept generation 2, good one made 3; unit active"

# --- stop
in_c systemctl stop nfqd || fail "systemctl stop failed"
[ "$(unit_prop ActiveState)" = inactive ] \
	|| fail "state '$(unit_prop ActiveState)' after stop"
[ "$(unit_prop Result)" = success ] \
	|| fail "result '$(unit_prop Result)' after stop"
in_c journalctl -u nfqd --no-pager -o cat | grep -Eq '^(nfqd: info: )?stopped$' \
	|| fail "no 'stopped' line in the journal"
bound=$(in_c cat /proc/net/netfilter/nfnetlink_queue)
[ -z "$bound" ] || fail "queues still bound after stop: $bound"
in_c test -e /run/nfqd && fail "/run/nfqd left after stop"
log "stop: exit 0, queues unbound, /run/nfqd removed"

# --- a bad config at start: nfqd exits 1, and is not restarted in a loop
sys_write_conf <<'EOF'
hook input { tcp dport 99999 drop; }
EOF
sys_wait_cgroup_gone
for try in 1 2 3; do
	since=$(in_c date '+%Y-%m-%d %H:%M:%S.%6N')
	in_c systemctl start nfqd 2>/dev/null && fail "start succeeded with a bad config"
	sleep 1		# longer than RestartSec: a restart would have begun
	# A start that met the container's cgroup race (status 219/CGROUP,
	# lib.sh) never ran nfqd, and Restart=on-failure rightly started it
	# again: that restart says nothing of nfqd's exit status 1. Try
	# again. A second has passed: the journal has the line if there
	# was one.
	in_c journalctl -u nfqd --since "$since" --no-pager -o cat |
		grep -q 'status=219/CGROUP' || break
	log "bad start: a start failed with 219/CGROUP (the container's cgroup race), try $try"
	in_c systemctl reset-failed nfqd
	sys_wait_cgroup_gone
done
[ "$(unit_prop ActiveState)" = failed ] \
	|| fail "state '$(unit_prop ActiveState)' after a bad start"
# The last try's restarts, from the journal (NRestarts also counts a
# raced try's restart when there was one).
restarts=$(in_c journalctl -u nfqd --since "$since" --no-pager -o cat |
	grep -c 'Scheduled restart job')
[ "$restarts" = 0 ] && { [ "$try" != 1 ] || [ "$(unit_prop NRestarts)" = 0 ]; } \
	|| fail "restarted $restarts times after a bad start (NRestarts $(unit_prop NRestarts), main process status $(unit_prop ExecMainStatus))"
in_c journalctl -u nfqd --no-pager -o cat | grep -q "$conf:1:24: port 99999" \
	|| fail "the start error is not in the journal"
log "start with a bad config: failed, not restarted, error in the journal"

# --- option user and control-group under the sandbox
in_c useradd --system --user-group --no-create-home --shell /usr/sbin/nologin \
	nfqd || fail "useradd nfqd"
sys_write_conf <<'EOF'
options {
	queues 2;
	user "nfqd";
	control-group "nfqd";
}
hook input { udp dport 9 mark set 0x10 accept; }
EOF
in_c systemctl reset-failed nfqd
sys_wait_cgroup_gone
in_c systemctl start nfqd || fail "start with option user failed"
wait_active
pid=$(unit_prop MainPID)
uid=$(in_c id -u nfqd)
for t in $(in_c ls "/proc/$pid/task"); do
	st=$(in_c cat "/proc/$pid/task/$t/status")
	echo "$st" | awk -v u="$uid" '/^Uid:/ { exit !($2 == u && $3 == u) }' \
		|| fail "thread $t does not run as uid $uid"
	echo "$st" | grep -q '^CapEff:.*0000000000001000$' \
		|| fail "thread $t: $(echo "$st" | grep CapEff)"
	echo "$st" | grep -q '^Seccomp:.*2$' || fail "thread $t: no seccomp filter"
done
[ "$(in_c stat -c '%a %G' /run/nfqd/nfqd.sock)" = "660 nfqd" ] \
	|| fail "control socket: $(in_c stat -c '%a %G' /run/nfqd/nfqd.sock)"
in_c useradd --no-create-home --groups nfqd ops || fail "useradd ops"
in_c runuser -u ops -- "$NFQD_SBINDIR/nfqd-ctl" status >/dev/null \
	|| fail "a member of control-group cannot use nfqd-ctl"
in_c systemctl reload nfqd || fail "reload as user nfqd failed"
[ "$(generation)" = 2 ] || fail "generation $(generation) after a reload as nfqd"
send_c 1000 9
wait_sink "3000 0" || fail "option user: sink counts '$(sink_counts)'"
log "option user: every thread uid $uid, CAP_NET_ADMIN only, seccomp;" \
	"socket 0660 group nfqd, usable by its members; reload and verdicts work"
in_c systemctl stop nfqd || fail "stop (option user) failed"
[ "$(unit_prop Result)" = success ] \
	|| fail "result '$(unit_prop Result)' after stop (option user)"

# --- exposure
in_c systemd-analyze security nfqd --no-pager >"$TMP/security.out" 2>&1
grep -E '^(- |✗)' "$TMP/security.out" | sed 's/^/#   /'
score=$(sed -n 's/.*Overall exposure level for nfqd.service: \([0-9.]*\).*/\1/p' \
	"$TMP/security.out")
[ -n "$score" ] || fail "no score: $(tail -n 3 "$TMP/security.out")"
awk -v s="$score" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(s <= m) }' \
	|| fail "systemd-analyze security nfqd: $score, want <= $MAX_EXPOSURE"
log "systemd-analyze security nfqd: exposure $score (<= $MAX_EXPOSURE)"
log "ok"
