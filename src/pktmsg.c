/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pktmsg.c - one NFQUEUE packet message -> struct pkt (netlink attributes). */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <string.h>

#include "pkt.h"

/* enum ip_conntrack_info, as NFQA_CT_INFO carries it. */
#define CTINFO_ESTABLISHED	0
#define CTINFO_RELATED		1
#define CTINFO_NEW		2
#define CTINFO_IS_REPLY		3
#define CTINFO_NUMBER		5

static uint32_t attr_u32(const struct nlattr *a)
{
	return ntohl(mnl_attr_get_u32(a));
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

/* The optional attributes that say where the packet is and who sent it. */
static void parse_meta(struct nlattr **attr, uint32_t cfg_flags,
		       struct pkt *p)
{
	if (attr[NFQA_MARK]) {
		p->mark = attr_u32(attr[NFQA_MARK]);
		p->flags |= PKT_HAS_MARK;
	}
	if (attr[NFQA_IFINDEX_INDEV]) {
		p->indev = attr_u32(attr[NFQA_IFINDEX_INDEV]);
		p->flags |= PKT_HAS_INDEV;
	}
	if (attr[NFQA_IFINDEX_OUTDEV]) {
		p->outdev = attr_u32(attr[NFQA_IFINDEX_OUTDEV]);
		p->flags |= PKT_HAS_OUTDEV;
	}
	if (attr[NFQA_UID]) {
		p->uid = attr_u32(attr[NFQA_UID]);
		p->flags |= PKT_HAS_UID;
	}
	if (attr[NFQA_GID]) {
		p->gid = attr_u32(attr[NFQA_GID]);
		p->flags |= PKT_HAS_GID;
	}
	if (attr[NFQA_CT_INFO]) {
		p->ct_state = ct_state_bits(attr_u32(attr[NFQA_CT_INFO]));
		p->flags |= PKT_HAS_CT;
	} else if (cfg_flags & NFQA_CFG_F_CONNTRACK) {
		/* Asked for, and none: the packet has no conntrack entry,
		 * which nft calls invalid (or untracked). */
		p->ct_state = CT_STATE_INVALID;
		p->flags |= PKT_HAS_CT;
	}
}

enum pkt_parse_result pkt_parse_msg(const struct nlmsghdr *nlh, size_t len,
				    uint32_t cfg_flags, struct pkt *p)
{
	struct nlattr *attr[NFQA_MAX + 1] = { NULL };
	const struct nfqnl_msg_packet_hdr *ph;
	const struct nfgenmsg *nfg;
	int rc;

	memset(p, 0, sizeof(*p));
	if (len < NLMSG_HDRLEN + sizeof(*nfg) || nlh->nlmsg_len > len ||
	    nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*nfg))
		return PKT_BAD;
	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_QUEUE ||
	    NFNL_MSG_TYPE(nlh->nlmsg_type) != NFQNL_MSG_PACKET)
		return PKT_NOT_PACKET;
	nfg = mnl_nlmsg_get_payload(nlh);
	p->family = nfg->nfgen_family;
	p->queue = ntohs(nfg->res_id);

	/* On a bad attribute the ones before it are still filled in: the
	 * packet header comes first, so the id usually survives. */
	rc = nfq_nlmsg_parse(nlh, attr);
	if (!attr[NFQA_PACKET_HDR])
		return PKT_BAD;
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	p->id = ntohl(ph->packet_id);
	p->hw_proto = ntohs(ph->hw_protocol);
	p->hook = ph->hook;
	if (rc < 0) {
		/* The payload is not trusted: its headers are INCOMPLETE, so
		 * no rule that reads them can take them for absent. */
		pkt_parse_headers(p);
		return PKT_BAD_WITH_ID;
	}

	parse_meta(attr, cfg_flags, p);
	if (attr[NFQA_PAYLOAD]) {
		p->payload = mnl_attr_get_payload(attr[NFQA_PAYLOAD]);
		p->payload_len = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
	}
	p->orig_len = attr[NFQA_CAP_LEN] ? attr_u32(attr[NFQA_CAP_LEN])
					 : p->payload_len;
	pkt_parse_headers(p);
	return PKT_OK;
}
