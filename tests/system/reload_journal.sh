#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A refused reload through the unit is an error in the journal:
# "journalctl -p err -u nfqd" shows the config error (nfqd prefixes its
# lines with their syslog priority when stderr is the journal).
. "$(dirname "$0")/lib.sh"

conf="$NFQD_SYSCONFDIR/nfqd/nfqd.conf"
sys_setup
sys_write_conf <<'EOC'
options { queues 2; }
EOC
in_c systemctl start nfqd || fail "systemctl start nfqd failed"
wait_active
sys_write_conf <<'EOC'
options {
	queues 2;
	no-such-option 1;
}
EOC
in_c systemctl reload nfqd 2>/dev/null && fail "reload succeeded with a bad config"
in_c journalctl -u nfqd --no-pager -o cat | grep -q "$conf:3:2: unknown option" \
	|| fail "the reload error is not in the journal at all"

in_c journalctl -p err -u nfqd --no-pager -o cat >"$TMP/err.out"
sed 's/^/#   /' "$TMP/err.out"
grep -q "$conf:3:2: unknown option" "$TMP/err.out" \
	|| fail "journalctl -p err -u nfqd does not show the reload error"
log "ok: the reload error is at priority err"
