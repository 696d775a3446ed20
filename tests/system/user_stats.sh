#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Option "user" under the unit: the stats file keeps being updated after
# nfqd switches to that user. The unit's RuntimeDirectory= makes
# /run/nfqd, owned by root; nfqd hands the stats directory to the user only
# when it created the directory itself, or when systemd made it for the
# service (RUNTIME_DIRECTORY).
. "$(dirname "$0")/lib.sh"

FAIL_RC=99	# anything but the pending check failing is a harness error
sys_setup
in_c useradd --system --user-group --no-create-home --shell /usr/sbin/nologin \
	nfqd || fail "useradd nfqd"
sys_write_conf <<'EOC'
options {
	queues 2;
	user "nfqd";
}
hook input { udp dport 9 mark set 0x10 accept; }
EOC
in_c systemctl start nfqd || fail "systemctl start nfqd failed"
wait_active
sys_flood_setup
send_c 1000
wait_sink "1000 0" || fail "sink counts '$(sink_counts)', want '1000 0'"

FAIL_RC=1	# the pending check
end=$(deadline "$WAIT_SECONDS")
while [ "$(stats_sum 10)" != 1000 ] && before "$end"; do
	sleep 0.1
done
[ "$(stats_sum 10)" = 1000 ] \
	|| fail "stats file not updated as user nfqd: $(in_c ls -l /run/nfqd)"
log "ok: the stats file counts 1000 packets"
