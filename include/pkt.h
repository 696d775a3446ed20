/*
 * pkt.h - the packet view: what one NFQUEUE message says about one packet,
 * and its IPv4/IPv6 and transport headers, parsed without ever reading past
 * the bytes the kernel copied.
 */
#ifndef NFQD_PKT_H
#define NFQD_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;

/* Which optional parts of struct pkt are valid. */
#define PKT_HAS_MARK	0x0001
#define PKT_HAS_INDEV	0x0002
#define PKT_HAS_OUTDEV	0x0004
#define PKT_HAS_UID	0x0008
#define PKT_HAS_GID	0x0010
#define PKT_HAS_CT	0x0020
#define PKT_HAS_L3	0x0100	/* saddr/daddr/l4proto valid */
#define PKT_HAS_L4	0x0200	/* ports / icmp type / tcp flags valid */

struct pkt {
	uint32_t id;		/* kernel packet id (NFQA_PACKET_HDR) */
	uint16_t hw_proto;	/* host order: ETH_P_IP, ETH_P_IPV6 */
	uint8_t hook;		/* NF_INET_* */
	uint8_t family;		/* NFPROTO_IPV4 / NFPROTO_IPV6 / ... */
	uint16_t queue;		/* queue number (nfgenmsg res_id) */
	uint32_t flags;		/* PKT_HAS_* */
	uint32_t mark;
	uint32_t indev;		/* ifindex, 0 if none */
	uint32_t outdev;
	uint32_t uid, gid;
	uint32_t ct_state;	/* CT_STATE_* bits (conf.h) if PKT_HAS_CT */
	const uint8_t *payload;	/* network header onwards, may be truncated */
	uint32_t payload_len;	/* bytes copied */
	uint32_t orig_len;	/* original packet length */

	/* Filled by pkt_parse_headers(). Addresses in network byte order. */
	uint8_t l3_family;	/* AF_INET / AF_INET6, 0 if unparsed */
	uint8_t l4proto;	/* IPPROTO_* (after IPv6 extension headers) */
	bool fragment;		/* non-first fragment: no transport header */
	uint8_t saddr[16];
	uint8_t daddr[16];
	uint16_t sport, dport;	/* host order, TCP/UDP/SCTP */
	uint8_t tcp_flags;	/* TCPF_* */
	uint8_t icmp_type;	/* ICMP or ICMPv6 type */
};

/* Result of pkt_parse_msg(). */
enum pkt_parse_result {
	PKT_OK = 0,
	PKT_NOT_PACKET,		/* a valid message, but not NFQNL_MSG_PACKET */
	PKT_BAD,		/* malformed; pkt->id not known, nothing to verdict */
	PKT_BAD_WITH_ID,	/* malformed after the header: id valid, verdict it */
};

/*
 * Fill *p from one netlink message of LEN bytes received on an NFQUEUE
 * socket (libnetfilter_queue's nfq_nlmsg_parse). p->payload points into the
 * message. Calls pkt_parse_headers() on success.
 */
enum pkt_parse_result pkt_parse_msg(const struct nlmsghdr *nlh, size_t len,
				    struct pkt *p);

/*
 * Parse the IPv4/IPv6 header and the transport header from p->payload.
 * Sets PKT_HAS_L3 / PKT_HAS_L4 only for what was fully inside the copied
 * bytes and well-formed. Never fails; a bad header just leaves bits unset.
 */
void pkt_parse_headers(struct pkt *p);

#endif
