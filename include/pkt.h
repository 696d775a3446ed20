/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pkt.h - the packet view: what one NFQUEUE message says about one packet,
 * and its IPv4/IPv6 and transport headers, parsed without ever reading past
 * the bytes the kernel copied. Every header field is PRESENT, ABSENT or
 * INCOMPLETE (nfqd.conf(5), INCOMPLETE PACKETS): a field the packet has but
 * the copy does not show is never mistaken for one it lacks.
 */
#ifndef NFQD_PKT_H
#define NFQD_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;
struct pkt_names;
struct dom_probes;

/* Which optional parts of struct pkt are valid. */
#define PKT_HAS_MARK	0x0001
#define PKT_HAS_INDEV	0x0002
#define PKT_HAS_OUTDEV	0x0004
#define PKT_HAS_UID	0x0008
#define PKT_HAS_GID	0x0010
#define PKT_HAS_CT	0x0020
/* Not a part, a fact: the kernel has not verified the transport checksum
 * (NFQA_SKB_INFO: CSUM_NOTVERIFIED) and it is not one left for the
 * device to fill (CSUMNOTREADY: locally made). A bad one makes the
 * receiver's TCP drop the segment: the flow table verifies it before it
 * takes a segment's bytes for the stream's (flow.c). */
#define PKT_CSUM_UNVERIFIED	0x0040
/* A fact pkt_parse_headers() finds: an IPv6 extension header for which
 * the receiving host discards the packet, while routers forward it: a
 * hop-by-hop options header after another header than the IPv6 header
 * (RFC 8200 4.1; Linux: no protocol 0 to deliver it to), a destination
 * option of a type it does not know whose high bits say discard (RFC 8200
 * 4.2), or one that runs past its header. DPI evasion tools send fakes so
 * (zapret's hopbyhop2). The flow table does not take its bytes (flow.c). */
#define PKT_EXT_DISCARD	0x0080

/* TCP flag bits as in the TCP header (struct pkt tcp_flags). */
#define TCPF_FIN	0x01
#define TCPF_SYN	0x02
#define TCPF_RST	0x04
#define TCPF_PSH	0x08
#define TCPF_ACK	0x10
#define TCPF_URG	0x20

/* Connection tracking states (struct pkt ct_state). */
#define CT_STATE_NEW		0x1
#define CT_STATE_ESTABLISHED	0x2
#define CT_STATE_RELATED	0x4
#define CT_STATE_INVALID	0x8

/* Longest IPv6 extension header chain walked; longer is INCOMPLETE. */
#define PKT_MAX_EXTHDRS	64

/* What the packet view knows of one field. */
enum pkt_state {
	PKT_ABSENT = 0,		/* the packet does not have it */
	PKT_PRESENT,		/* in the copy; the value is valid */
	PKT_INCOMPLETE,		/* the packet has (or may have) it; unseen */
};

/* Where each transport field ends, in bytes from the transport header
 * (nft loads each at its own offset). */
#define PKT_TH_SPORT_END	2
#define PKT_TH_DPORT_END	4
#define PKT_TH_FLAGS_END	14	/* TCP flags: byte 13 */
#define PKT_TH_TYPE_END		1	/* ICMP / ICMPv6 type: byte 0 */

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
	uint32_t ct_state;	/* CT_STATE_* bits if PKT_HAS_CT */
	/* From the network header on, maybe cut; NULL: copy-range 0. */
	const uint8_t *payload;
	uint32_t payload_len;	/* bytes copied */
	/* Original packet length (NFQA_CAP_LEN, else payload_len); 0 when
	 * unknown: with copy-range 0 (copy-meta mode) the kernel sends
	 * neither payload nor NFQA_CAP_LEN. */
	uint32_t orig_len;

	/* Filled by pkt_parse_headers(). Addresses in network byte order. */
	uint8_t l3_family;	/* AF_INET / AF_INET6, 0 if neither */
	uint8_t l3;		/* pkt_state of saddr, daddr, ip protocol */
	uint8_t l4;		/* pkt_state of l4proto (meta l4proto) */
	uint8_t l4proto;	/* IPPROTO_*, as nft: AH is not skipped */
	bool fragment;		/* non-first fragment: no transport header */
	bool first_fragment;	/* the first of fragments (offset 0, more
				 * to come): a transport header, not all
				 * of its payload */
	uint8_t ip_protocol;	/* IPv4 protocol field */
	uint8_t saddr[16];
	uint8_t daddr[16];
	uint32_t th_copied;	/* transport header bytes in the copy */
	uint32_t th_len;	/* ... in the packet */
	uint16_t sport, dport;	/* host order, TCP/UDP/SCTP */
	uint8_t tcp_flags;	/* TCPF_* */
	uint8_t icmp_type;	/* ICMP or ICMPv6 type */
	/* Names (names.h), filled by the flow table before judging when the
	 * policy has name matches; NULL: every name match is INCOMPLETE. */
	const struct pkt_names *names;
	/* The domain-set probes (domset.h) of names' name, made ahead by
	 * the queue; NULL: the lookups make their own. */
	const struct dom_probes *probes;
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
 * socket, by the rules of libnetfilter_queue's nfq_nlmsg_parse() (never
 * reading past LEN). p->payload points into the message. Sets every field
 * of *p. CFG_FLAGS are the NFQA_CFG_F_* bits the queue asked the kernel
 * for: with NFQA_CFG_F_CONNTRACK, a message without NFQA_CT_INFO is a
 * packet without a connection (ct state invalid). Calls
 * pkt_parse_headers() on success.
 */
enum pkt_parse_result pkt_parse_msg(const struct nlmsghdr *nlh, size_t len,
				    uint32_t cfg_flags, struct pkt *p);

/*
 * Parse the IPv4/IPv6 header and find the transport header as nft does,
 * from p->payload (p->payload_len bytes of a packet of p->orig_len bytes;
 * an orig_len below payload_len counts as payload_len). Never fails: what
 * is out of the copy, beyond the walk limit or malformed is INCOMPLETE.
 */
void pkt_parse_headers(struct pkt *p);

/* The packet's length as nft's "meta length" sees it; 0: unknown. */
static inline uint32_t pkt_length(const struct pkt *p)
{
	return p->orig_len ? p->orig_len : p->payload_len;
}

/*
 * State of the transport header bytes [0, END): PRESENT when they are in
 * the copy, INCOMPLETE when only the packet has them, ABSENT when the
 * packet ends before them or has no transport header (a later fragment).
 * The caller checks l4proto itself.
 */
static inline enum pkt_state pkt_th_state(const struct pkt *p, uint32_t end)
{
	if (p->l4 != PKT_PRESENT)
		return (enum pkt_state)p->l4;
	if (p->fragment)
		return PKT_ABSENT;
	if (end <= p->th_copied)
		return PKT_PRESENT;
	return end <= p->th_len ? PKT_INCOMPLETE : PKT_ABSENT;
}

#endif
