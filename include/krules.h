/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * krules.h - the kernel's side of the queues: which netfilter hooks have
 * a rule that sends packets to nfqd's queues. Read from the nf_tables
 * ruleset over netlink (iptables-nft's rules are there too, as NFQUEUE
 * targets; nft's as queue expressions), following jumps and gotos from
 * each base chain. Main thread only; one call is one ruleset dump.
 */
#ifndef NFQD_KRULES_H
#define NFQD_KRULES_H

#include <stdbool.h>
#include <stdint.h>

/* What the kernel's rules send to the queues. */
struct krules_found {
	uint32_t v4;	/* bit h: an IPv4 packet at hook h (0-4, NF_INET_*) can
			 * reach a rule queueing to one of the queues */
	uint32_t v6;	/* the same for IPv6 */
	bool legacy;	/* iptables-legacy tables exist, which netlink does
			 * not show: a hook without rules here may have some */
};

/*
 * Scan the ruleset of the current network namespace for rules queueing to
 * any of the N queue numbers QUEUES. 0, or a negative errno (-EPERM
 * without CAP_NET_ADMIN) with OUT zeroed.
 */
int krules_scan(const uint16_t *queues, unsigned n, struct krules_found *out);

#endif
