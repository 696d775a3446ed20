/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pktmsg.c - one NFQUEUE packet message -> struct pkt (netlink attributes). */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <string.h>

#include "pkt.h"

/* enum ip_conntrack_info, as NFQA_CT_INFO carries it. */
#define CTINFO_ESTABLISHED	0
#define CTINFO_RELATED		1
#define CTINFO_NEW		2
#define CTINFO_IS_REPLY		3
#define CTINFO_NUMBER		5

static const void *attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static uint32_t attr_u32(const struct nlattr *a)
{
	uint32_t v;

	memcpy(&v, attr_data(a), sizeof(v));
	return ntohl(v);
}

static uint32_t ct_state_bits(uint32_t ctinfo)
{
	/* IP_CT_UNTRACKED (7), or anything unknown: nfqd's syntax has no
	 * "untracked", and such a packet must not pass for new. */
	if (ctinfo >= CTINFO_NUMBER)
		return CT_STATE_INVALID;
	switch (ctinfo % CTINFO_IS_REPLY) {
	case CTINFO_ESTABLISHED:
		return CT_STATE_ESTABLISHED;
	case CTINFO_RELATED:
		return CT_STATE_RELATED;
	default:
		return CT_STATE_NEW;
	}
}

/* The attributes nfqd reads, by where struct msg_attrs keeps them; AT_NONE
 * is where the others go, never read. */
enum attr_at {
	AT_NONE, AT_HDR, AT_MARK, AT_INDEV, AT_OUTDEV, AT_UID, AT_GID,
	AT_CT_INFO, AT_PAYLOAD, AT_CAP_LEN, AT_SKB_INFO, AT_N
};

/* The attributes nfqd reads; NULL when the message has none. */
struct msg_attrs {
	const struct nlattr *at[AT_N];
};

/* The optional attributes that say where the packet is and who sent it. */
static void parse_meta(const struct msg_attrs *attr, uint32_t cfg_flags,
		       struct pkt *p)
{
	if (attr->at[AT_MARK]) {
		p->mark = attr_u32(attr->at[AT_MARK]);
		p->flags |= PKT_HAS_MARK;
	}
	if (attr->at[AT_INDEV]) {
		p->indev = attr_u32(attr->at[AT_INDEV]);
		p->flags |= PKT_HAS_INDEV;
	}
	if (attr->at[AT_OUTDEV]) {
		p->outdev = attr_u32(attr->at[AT_OUTDEV]);
		p->flags |= PKT_HAS_OUTDEV;
	}
	if (attr->at[AT_UID]) {
		p->uid = attr_u32(attr->at[AT_UID]);
		p->flags |= PKT_HAS_UID;
	}
	if (attr->at[AT_GID]) {
		p->gid = attr_u32(attr->at[AT_GID]);
		p->flags |= PKT_HAS_GID;
	}
	if (attr->at[AT_SKB_INFO] &&
	    (attr_u32(attr->at[AT_SKB_INFO]) &
	     (NFQA_SKB_CSUM_NOTVERIFIED | NFQA_SKB_CSUMNOTREADY)) ==
		    NFQA_SKB_CSUM_NOTVERIFIED)
		p->flags |= PKT_CSUM_UNVERIFIED;
	if (attr->at[AT_CT_INFO]) {
		p->ct_state = ct_state_bits(attr_u32(attr->at[AT_CT_INFO]));
		p->flags |= PKT_HAS_CT;
	} else if (cfg_flags & NFQA_CFG_F_CONNTRACK) {
		/* Asked for, and none: the packet has no conntrack entry,
		 * which nft calls invalid (or untracked). */
		p->ct_state = CT_STATE_INVALID;
		p->flags |= PKT_HAS_CT;
	}
}

/*
 * Per attribute type, where struct msg_attrs keeps it (AT_NONE: not read)
 * and the length it must have, 0 for any: the rules of
 * libnetfilter_queue's nfq_nlmsg_parse() (1.0.5, whose NFQA_MAX is
 * NFQA_SECCTX, which it checks as a u32), so that a message is good or bad
 * here exactly when it is there; tests/unit/test_pktmsg.c compares the two
 * on random messages. Parsed here because the library's callback per
 * attribute cost more than the rest of the packet's user-space work.
 */
#define PKT_NFQA_MAX	NFQA_SECCTX
static const struct attr_rule {
	uint8_t at;		/* enum attr_at */
	uint8_t len;		/* its payload's length; 0: any */
} attr_rules[PKT_NFQA_MAX + 1] = {
	[NFQA_PACKET_HDR] = { AT_HDR, sizeof(struct nfqnl_msg_packet_hdr) },
	[NFQA_MARK] = { AT_MARK, 4 },
	[NFQA_TIMESTAMP] = { AT_NONE,
			     sizeof(struct nfqnl_msg_packet_timestamp) },
	[NFQA_IFINDEX_INDEV] = { AT_INDEV, 4 },
	[NFQA_IFINDEX_OUTDEV] = { AT_OUTDEV, 4 },
	[NFQA_IFINDEX_PHYSINDEV] = { AT_NONE, 4 },
	[NFQA_IFINDEX_PHYSOUTDEV] = { AT_NONE, 4 },
	[NFQA_HWADDR] = { AT_NONE, sizeof(struct nfqnl_msg_packet_hw) },
	[NFQA_PAYLOAD] = { AT_PAYLOAD, 0 },
	[NFQA_CT_INFO] = { AT_CT_INFO, 4 },
	[NFQA_CAP_LEN] = { AT_CAP_LEN, 4 },
	[NFQA_SKB_INFO] = { AT_SKB_INFO, 4 },
	[NFQA_UID] = { AT_UID, 4 },
	[NFQA_GID] = { AT_GID, 4 },
	[NFQA_SECCTX] = { AT_NONE, 4 },
};

/*
 * Fill ATTR from the attributes after the nfgenmsg header, the last of a
 * type winning; types above PKT_NFQA_MAX are skipped. Returns -1 at an
 * attribute of the wrong length, and when the attributes do not fill the
 * message exactly (one does not fit, or bytes are left over that are no
 * attribute), leaving the ones before it. libnetfilter_queue stops
 * silently there (mnl_attr_parse) and calls the message good: the
 * attributes after the break (ct info, mark, uid) would read as absent.
 */
static int parse_attrs(const struct nlmsghdr *nlh, size_t len,
		       struct msg_attrs *attr)
{
	size_t end = MNL_ALIGN(nlh->nlmsg_len);
	size_t off = NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg));

	/* Never past the datagram, even into the message's padding. */
	if (end > len)
		end = len;
	while (off + sizeof(struct nlattr) <= end) {
		const struct nlattr *a =
			(const struct nlattr *)((const char *)nlh + off);
		uint16_t type = a->nla_type & NLA_TYPE_MASK;
		struct attr_rule r = { AT_NONE, 0 };

		if (a->nla_len < sizeof(*a) || a->nla_len > end - off)
			break;
		if (type <= PKT_NFQA_MAX)
			r = attr_rules[type];
		if (r.len && a->nla_len - sizeof(*a) != r.len)
			return -1;
		/* A table, not a switch: a message has several. */
		attr->at[r.at] = a;
		off += MNL_ALIGN(a->nla_len);
	}
	return off < end ? -1 : 0;
}

/*
 * Clear what pkt_parse_msg() fills from the message; pkt_parse_headers()
 * sets the rest. Field by field: a memset of the whole struct became a
 * "rep stos", a third of the parse. test_pktmsg checks that every field
 * is set on a struct full of garbage.
 */
static void reset_msg_fields(struct pkt *p)
{
	p->id = 0;
	p->hw_proto = 0;
	p->hook = 0;
	p->family = 0;
	p->queue = 0;
	p->flags = 0;
	p->mark = 0;
	p->indev = p->outdev = 0;
	p->uid = p->gid = 0;
	p->ct_state = 0;
	p->payload = NULL;
	p->payload_len = p->orig_len = 0;
	p->names = NULL;
	p->probes = NULL;
}

/* A message nfqd cannot use: no payload, so every header field is set
 * and none PRESENT. */
static enum pkt_parse_result unparsed(struct pkt *p, enum pkt_parse_result r)
{
	pkt_parse_headers(p);
	return r;
}

enum pkt_parse_result pkt_parse_msg(const struct nlmsghdr *nlh, size_t len,
				    uint32_t cfg_flags, struct pkt *p)
{
	struct msg_attrs attr = { 0 };
	const struct nfqnl_msg_packet_hdr *ph;
	const struct nfgenmsg *nfg;
	int rc;

	reset_msg_fields(p);
	if (len < NLMSG_HDRLEN + sizeof(*nfg) || nlh->nlmsg_len > len ||
	    nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*nfg))
		return unparsed(p, PKT_BAD);
	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_QUEUE ||
	    NFNL_MSG_TYPE(nlh->nlmsg_type) != NFQNL_MSG_PACKET)
		return unparsed(p, PKT_NOT_PACKET);
	nfg = (const struct nfgenmsg *)((const char *)nlh + NLMSG_HDRLEN);
	p->family = nfg->nfgen_family;
	p->queue = ntohs(nfg->res_id);

	/* On a bad attribute the ones before it are still filled in: the
	 * packet header comes first, so the id usually survives. */
	rc = parse_attrs(nlh, len, &attr);
	if (!attr.at[AT_HDR])
		return unparsed(p, PKT_BAD);
	ph = attr_data(attr.at[AT_HDR]);
	p->id = ntohl(ph->packet_id);
	p->hw_proto = ntohs(ph->hw_protocol);
	p->hook = ph->hook;
	/* A bad attribute: the payload is not trusted, its headers are
	 * INCOMPLETE, so no rule that reads them can take them for absent;
	 * the caller gives the packet incomplete-verdict. */
	if (rc < 0)
		return unparsed(p, PKT_BAD_WITH_ID);

	parse_meta(&attr, cfg_flags, p);
	if (attr.at[AT_PAYLOAD]) {
		p->payload = attr_data(attr.at[AT_PAYLOAD]);
		p->payload_len = attr.at[AT_PAYLOAD]->nla_len - NLA_HDRLEN;
	}
	p->orig_len = attr.at[AT_CAP_LEN] ? attr_u32(attr.at[AT_CAP_LEN]) :
					    p->payload_len;
	pkt_parse_headers(p);
	return PKT_OK;
}
