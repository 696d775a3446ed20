#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two queues behind --queue-balance 0:1: 60,000 UDP datagrams and pings
# all arrive, both queues are used, the kernel dropped nothing.
. "$(dirname "$0")/../lib.sh"

ns_setup
sink_setup
require_cmd iptables ping
srcs=$(add_sources)
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-balance 0:1
in_b iptables -A INPUT -p icmp -j NFQUEUE --queue-balance 0:1

# The test needs CPU for nfqd: the generator sends as fast as it can,
# and on a loaded machine a worker can go without the CPU for the whole
# flood. --queue-balance hashes 17 addresses over 2 queues, so one queue
# may get most of it: each has room for all 60,000 datagrams
# (queue-maxlen 65536, rcvbuf 128M; kernel memory only while a worker
# is starved), so a starved worker delays packets but loses none;
# a queue holds at most 65536 packets on kernels that keep a hash of
# queued ids (6.18.44 here: with queue-maxlen 262144 it held 65536 and
# counted the rest in queue_dropped, logging "hash insert failed: -7").
conf=$(flood_options 2 65536 128M | conf_file nfqd.conf)
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0 1

in_a ping -c 20 -i 0.01 -W 2 -q 192.0.2.2 >"$TMP/ping.out" \
	|| fail "ping through nfqd lost packets: $(cat "$TMP/ping.out")"
send_udp "$NS_A" 192.0.2.2 60000 -P 64 -S "$srcs"

got=$(wait_sink_udp 60000)
[ "$got" = 60000 ] || fail "sink saw $got of 60000 datagrams"

seq0=$(kqueue_field "$NS_B" 0 8)
seq1=$(kqueue_field "$NS_B" 1 8)
log "id_sequence: queue 0 $seq0, queue 1 $seq1"
[ "$seq0" -gt 0 ] && [ "$seq1" -gt 0 ] || fail "not both queues used"
[ $((seq0 + seq1)) -eq 60020 ] || fail "queued $((seq0 + seq1)), want 60020"
for q in 0 1; do
	[ "$(kqueue_field "$NS_B" $q 6)" = 0 ] || fail "queue $q: queue_dropped"
	[ "$(kqueue_field "$NS_B" $q 7)" = 0 ] || fail "queue $q: user_dropped"
done

stop_nfqd
accepted=$(final_counter accepted)
[ "$accepted" = 60020 ] || fail "nfqd accepted $accepted, want 60020"
log "ok: 60,000 datagrams and 20 pings through 2 queues"
