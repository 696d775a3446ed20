/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_field.h - what a value match sees of a packet: each field's state
 * (PRESENT, ABSENT, INCOMPLETE) and value, exactly as the matcher compares
 * it. Shared by the matcher (policy_judge.c) and the classifier
 * (policy_index.c), so that both decide from the same reading.
 */
#ifndef NFQD_POLICY_FIELD_H
#define NFQD_POLICY_FIELD_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "conf.h"
#include "ifcache.h"
#include "pkt.h"

/*
 * Interface name of IFINDEX: "" when the packet has no such device (as
 * nft: then "iifname != x" holds). Only the cache is asked: the packet
 * path makes no system call. Unknown to the cache (just created, or the
 * cache not started): INCOMPLETE.
 */
static inline enum pkt_state field_dev_name(const struct ifcache *ifc,
					    uint32_t ifindex, bool present,
					    char name[IF_NAMESIZE])
{
	name[0] = '\0';
	if (!present || !ifindex)
		return PKT_PRESENT;
	return ifcache_name(ifc, ifindex, name) ? PKT_PRESENT : PKT_INCOMPLETE;
}

static inline uint32_t field_get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

/* An address field: the packet's family decides which there are. */
static inline enum pkt_state field_addr_state(const struct pkt *pkt,
					      uint8_t family)
{
	if (pkt->l3_family != family)
		return PKT_ABSENT;
	return (enum pkt_state)pkt->l3;
}

/*
 * A transport field of protocol PROTO in bytes [0, END) of the transport
 * header. As nft: another protocol, or no transport header, is ABSENT.
 */
static inline enum pkt_state field_th_state(const struct pkt *pkt,
					    uint8_t family, uint8_t proto,
					    uint32_t end)
{
	if (family && pkt->l3_family != family)
		return PKT_ABSENT;
	if (pkt->l4 == PKT_PRESENT && pkt->l4proto != proto)
		return PKT_ABSENT;
	return pkt_th_state(pkt, end);
}

/*
 * meta skuid / skgid (HAS: PKT_HAS_UID or PKT_HAS_GID). The kernel sends
 * the owner of full sockets only; nft also sees the listener behind a
 * TCP request socket (a half-open connection). Without the attribute:
 *  - a TCP SYN-ACK this host sends (output; postrouting without an input
 *    device) may come from a request socket: INCOMPLETE;
 *  - a TCP segment arriving (input) other than a SYN without ACK may
 *    belong to one (the handshake's ACK): INCOMPLETE;
 *  - TCP whose flags nfqd cannot see, there: INCOMPLETE;
 *  - anything else has no owner for nft either (kernel RSTs, ICMP
 *    errors, time-wait, forwarded packets, other protocols): ABSENT.
 */
static inline enum pkt_state field_owner_state(const struct pkt *pkt,
					       uint32_t has)
{
	bool sent = pkt->hook == HOOK_OUTPUT ||
		    (pkt->hook == HOOK_POSTROUTING &&
		     !(pkt->flags & PKT_HAS_INDEV));
	enum pkt_state st;
	bool syn, ack;

	if (pkt->flags & has)
		return PKT_PRESENT;
	if (!sent && pkt->hook != HOOK_INPUT)
		return PKT_ABSENT;
	st = field_th_state(pkt, 0, IPPROTO_TCP, PKT_TH_FLAGS_END);
	if (st != PKT_PRESENT)
		return st;
	syn = pkt->tcp_flags & TCPF_SYN;
	ack = pkt->tcp_flags & TCPF_ACK;
	if (sent)
		return syn && ack ? PKT_INCOMPLETE : PKT_ABSENT;
	return syn && !ack ? PKT_ABSENT : PKT_INCOMPLETE;
}

/*
 * Fields compared against a set of 32-bit values (addresses in host
 * order, ports, protocols, types, the mark under MASK, length, ids).
 * *V is meaningful only when PRESENT is returned. Always inlined: gcc
 * would call it, and the call, the store of *V and its reload cost more
 * than the switch (about 3 ns a packet with the benchmark's 20 rules).
 */
static inline __attribute__((always_inline)) enum pkt_state
field_u32(const struct pkt *pkt, enum match_field f, uint32_t mask,
	  uint32_t *v)
{
	switch (f) {
	case MATCH_IP_SADDR:
		*v = field_get32(pkt->saddr);
		return field_addr_state(pkt, AF_INET);
	case MATCH_IP_DADDR:
		*v = field_get32(pkt->daddr);
		return field_addr_state(pkt, AF_INET);
	case MATCH_IP_PROTOCOL:
		*v = pkt->ip_protocol;
		return field_addr_state(pkt, AF_INET);
	case MATCH_META_L4PROTO:
		*v = pkt->l4proto;
		return (enum pkt_state)pkt->l4;
	case MATCH_TCP_SPORT:
		*v = pkt->sport;
		return field_th_state(pkt, 0, IPPROTO_TCP, PKT_TH_SPORT_END);
	case MATCH_TCP_DPORT:
		*v = pkt->dport;
		return field_th_state(pkt, 0, IPPROTO_TCP, PKT_TH_DPORT_END);
	case MATCH_UDP_SPORT:
		*v = pkt->sport;
		return field_th_state(pkt, 0, IPPROTO_UDP, PKT_TH_SPORT_END);
	case MATCH_UDP_DPORT:
		*v = pkt->dport;
		return field_th_state(pkt, 0, IPPROTO_UDP, PKT_TH_DPORT_END);
	case MATCH_ICMP_TYPE:
		*v = pkt->icmp_type;
		return field_th_state(pkt, AF_INET, IPPROTO_ICMP,
				      PKT_TH_TYPE_END);
	case MATCH_ICMPV6_TYPE:
		*v = pkt->icmp_type;
		return field_th_state(pkt, AF_INET6, IPPROTO_ICMPV6,
				      PKT_TH_TYPE_END);
	case MATCH_META_MARK:
		/* No NFQA_MARK attribute means the mark is 0. */
		*v = (pkt->flags & PKT_HAS_MARK ? pkt->mark : 0) & mask;
		return PKT_PRESENT;
	case MATCH_META_LENGTH:
		/* 0: copy-range 0, the kernel sent no length at all. */
		*v = pkt_length(pkt);
		return *v ? PKT_PRESENT : PKT_INCOMPLETE;
	case MATCH_META_SKUID:
		*v = pkt->uid;
		return field_owner_state(pkt, PKT_HAS_UID);
	case MATCH_META_SKGID:
		*v = pkt->gid;
		return field_owner_state(pkt, PKT_HAS_GID);
	default:
		*v = 0;
		return PKT_ABSENT;
	}
}

/* IPv6 addresses (network order, 16 bytes at *A). */
static inline enum pkt_state field_u128(const struct pkt *pkt,
					enum match_field f, const uint8_t **a)
{
	*a = f == MATCH_IP6_SADDR ? pkt->saddr : pkt->daddr;
	return field_addr_state(pkt, AF_INET6);
}

/* Interface names (iifname, oifname), from the cache IFC. */
static inline enum pkt_state field_name(const struct ifcache *ifc,
					const struct pkt *pkt,
					enum match_field f,
					char name[IF_NAMESIZE])
{
	if (f == MATCH_IIFNAME)
		return field_dev_name(ifc, pkt->indev,
				      pkt->flags & PKT_HAS_INDEV, name);
	return field_dev_name(ifc, pkt->outdev,
			      pkt->flags & PKT_HAS_OUTDEV, name);
}

#endif
