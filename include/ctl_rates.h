/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_rates.h - rates for nfqd-ctl's live views (stats -w, top), computed
 * on the client from two of the daemon's documents and the time the
 * client measured between them (ctl_rates.c).
 */
#ifndef NFQD_CTL_RATES_H
#define NFQD_CTL_RATES_H

#include <jansson.h>

/*
 * Growth of a counter from PREV to CUR. A counter that went down was
 * restarted (a new daemon, a rebound queue, "counters reset", a 32-bit
 * kernel counter wrapping): its growth is then CUR, what it counted since
 * the restart, so a rate is never negative.
 */
double ctl_counter_delta(json_int_t prev, json_int_t cur);

/*
 * Add to every queue of stats document CUR that is also in PREV (matched
 * by "queue") an object "rates": per second over DT seconds, for each
 * counter both documents carry (packets, bytes, accepted, dropped, other,
 * batches, enobufs, errors, incomplete, orphans, queue_dropped,
 * user_dropped), and "packets_per_batch" (growth of packets over growth
 * of batches; null when no batch was sent). 0, or -EINVAL if a document
 * does not have the stats shape or DT <= 0, -ENOMEM.
 */
int ctl_rates_queues(json_t *prev, json_t *cur, double dt);

/*
 * The rules of rules document CUR with hits per second since PREV
 * (may be NULL: every rate is null then and DT unused), busiest first:
 * an array of {"hook":"input", "index":N or null for the hook's policy,
 * "rule":"text", "packets":N, "rate":R or null}. Rules match PREV by
 * hook, index and text, so a reload that changes a rule gives it no rate
 * (null) rather than a wrong one. A hook's policy is listed when the hook
 * has rules or the policy counted packets. Sorted by rate, then packets,
 * then the daemon's order. NULL if CUR does not have the rules shape or
 * on ENOMEM.
 */
json_t *ctl_rates_rules(json_t *prev, json_t *cur, double dt);

#endif
