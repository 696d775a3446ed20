#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# With option user, nfqd runs as that user when SIGTERM comes, and no
# longer sees its own /proc entry (not dumpable after the switch,
# ProtectProc=invisible): it must still tell a restart from a final stop
# (the unit's name is read at start, the job over the system bus).
. "$(dirname "$0")/lib.sh"

sys_setup
sys_write_conf <<'EOC'
options { queues 1; user "nobody"; }
hook input { udp dport 9 accept; }
EOC
in_c systemctl start nfqd || fail "systemctl start nfqd failed"
wait_active
old=$(unit_prop MainPID)
sys_restart || fail "systemctl restart failed"
wait_active "$old"
in_c systemctl stop nfqd || fail "systemctl stop failed"
in_c journalctl -u nfqd --no-pager -o cat >"$TMP/journal"
grep -E "running as|stop:|adopted" "$TMP/journal" | sed 's/^/#   /'
grep -q 'running as user nobody' "$TMP/journal" || fail "option user not in effect"
grep -q 'job "restart".*a restart: the queues stay bound' "$TMP/journal" \
	|| fail "the restart was not recognised"
grep -q 'queue 0: adopted the socket' "$TMP/journal" || fail "no adoption after the restart"
grep -q 'job "stop".*a final stop' "$TMP/journal" || fail "the stop was not recognised"
grep -q 'queue 0: stop: .* 0 left in the kernel queue' "$TMP/journal" \
	|| fail "no drained final stop"
log "ok: restart and final stop told apart as user nobody"
