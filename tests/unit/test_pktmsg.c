/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_pktmsg.c - NFQUEUE packet messages -> struct pkt, from hand-made
 * netlink messages: good ones, bad attributes, truncation, other types;
 * and random messages judged against libnetfilter_queue's own parser. */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "pkt.h"

/* IPv4 UDP 192.0.2.1:1234 -> 192.0.2.2:9, 4 bytes of data. */
static const uint8_t udp4[] = {
	0x45, 0x00, 0x00, 0x20, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
	192, 0, 2, 1, 192, 0, 2, 2,
	0x04, 0xd2, 0x00, 0x09, 0x00, 0x0c, 0x00, 0x00,
	'a', 'b', 'c', 'd',
};

static char buf[8192];

static struct nlmsghdr *put_msg(uint16_t type, uint8_t family, uint16_t queue)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(queue);
	return nlh;
}

static void put_hdr(struct nlmsghdr *nlh, uint32_t id, uint16_t proto,
		    uint8_t hook)
{
	struct nfqnl_msg_packet_hdr ph = {
		.packet_id = htonl(id),
		.hw_protocol = htons(proto),
		.hook = hook,
	};

	mnl_attr_put(nlh, NFQA_PACKET_HDR, sizeof(ph), &ph);
}

static struct nlmsghdr *good_msg(void)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 3);

	put_hdr(nlh, 4242, 0x0800, NF_INET_LOCAL_IN);
	mnl_attr_put_u32(nlh, NFQA_MARK, htonl(0x10));
	mnl_attr_put_u32(nlh, NFQA_IFINDEX_INDEV, htonl(7));
	mnl_attr_put_u32(nlh, NFQA_UID, htonl(1000));
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(udp4), udp4);
	return nlh;
}

static void test_good_packet(void **state)
{
	struct nlmsghdr *nlh = good_msg();
	struct pkt p;

	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p), PKT_OK);
	assert_int_equal(p.id, 4242);
	assert_int_equal(p.queue, 3);
	assert_int_equal(p.family, NFPROTO_IPV4);
	assert_int_equal(p.hw_proto, 0x0800);
	assert_int_equal(p.hook, NF_INET_LOCAL_IN);
	assert_int_equal(p.mark, 0x10);
	assert_int_equal(p.indev, 7);
	assert_int_equal(p.uid, 1000);
	assert_true(p.flags & PKT_HAS_MARK);
	assert_true(p.flags & PKT_HAS_INDEV);
	assert_false(p.flags & PKT_HAS_OUTDEV);
	assert_true(p.flags & PKT_HAS_UID);
	assert_false(p.flags & PKT_HAS_GID);
	assert_int_equal(p.payload_len, sizeof(udp4));
	assert_memory_equal(p.payload, udp4, sizeof(udp4));
	/* No NFQA_CAP_LEN: the packet was copied whole. */
	assert_int_equal(p.orig_len, sizeof(udp4));
	/* Headers are parsed too. */
	assert_int_equal(pkt_th_state(&p, PKT_TH_DPORT_END), PKT_PRESENT);
	assert_int_equal(p.sport, 1234);
	assert_int_equal(p.dport, 9);
}

static void test_cap_len_and_outdev(void **state)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV6, 0);
	struct pkt p;

	put_hdr(nlh, 1, 0x86dd, NF_INET_LOCAL_OUT);
	mnl_attr_put_u32(nlh, NFQA_IFINDEX_OUTDEV, htonl(9));
	mnl_attr_put_u32(nlh, NFQA_GID, htonl(50));
	mnl_attr_put_u32(nlh, NFQA_CAP_LEN, htonl(1500));
	mnl_attr_put(nlh, NFQA_PAYLOAD, 10, udp4);
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p), PKT_OK);
	assert_int_equal(p.outdev, 9);
	assert_true(p.flags & PKT_HAS_OUTDEV);
	assert_false(p.flags & PKT_HAS_INDEV);
	assert_int_equal(p.gid, 50);
	assert_int_equal(p.orig_len, 1500);
	assert_int_equal(p.payload_len, 10);
	assert_int_equal(p.hook, NF_INET_LOCAL_OUT);
}

/* NFQA_SKB_INFO: a checksum the kernel has not verified, and that is not
 * left for the device (locally made), is PKT_CSUM_UNVERIFIED; else not. */
static void test_skb_info(void **state)
{
	static const struct { uint32_t info; bool unverified; } cases[] = {
		{ NFQA_SKB_CSUM_NOTVERIFIED, true },
		{ NFQA_SKB_CSUM_NOTVERIFIED | NFQA_SKB_GSO, true },
		{ NFQA_SKB_CSUMNOTREADY, false },
		{ NFQA_SKB_CSUMNOTREADY | NFQA_SKB_CSUM_NOTVERIFIED, false },
		{ NFQA_SKB_GSO, false },
		{ 0, false },
	};
	struct pkt p;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nlmsghdr *nlh = good_msg();

		mnl_attr_put_u32(nlh, NFQA_SKB_INFO, htonl(cases[i].info));
		assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
				 PKT_OK);
		assert_int_equal(!!(p.flags & PKT_CSUM_UNVERIFIED),
				 cases[i].unverified);
	}
	/* None at all: verified, or nothing to say. */
	assert_int_equal(pkt_parse_msg(good_msg(), good_msg()->nlmsg_len, 0,
				       &p), PKT_OK);
	assert_false(p.flags & PKT_CSUM_UNVERIFIED);
}

static void test_ct_info(void **state)
{
	static const struct { uint32_t info, bits; } cases[] = {
		{ 0, CT_STATE_ESTABLISHED }, { 1, CT_STATE_RELATED },
		{ 2, CT_STATE_NEW }, { 3, CT_STATE_ESTABLISHED },
		{ 4, CT_STATE_RELATED }, { 7, CT_STATE_INVALID },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
		struct pkt p;

		put_hdr(nlh, 1, 0x0800, NF_INET_FORWARD);
		mnl_attr_put_u32(nlh, NFQA_CT_INFO, htonl(cases[i].info));
		assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
				 PKT_OK);
		assert_true(p.flags & PKT_HAS_CT);
		assert_int_equal(p.ct_state, cases[i].bits);
	}
}

/* No NFQA_CT_INFO: a packet without a connection if conntrack was asked
 * for (nft: invalid or untracked), unknown if not. */
static void test_ct_missing(void **state)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
	struct pkt p;

	put_hdr(nlh, 1, 0x0800, NF_INET_LOCAL_IN);
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(udp4), udp4);
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len,
				       NFQA_CFG_F_CONNTRACK, &p), PKT_OK);
	assert_true(p.flags & PKT_HAS_CT);
	assert_int_equal(p.ct_state, CT_STATE_INVALID);
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len,
				       NFQA_CFG_F_UID_GID, &p), PKT_OK);
	assert_false(p.flags & PKT_HAS_CT);
	/* With the info, the flag changes nothing. */
	mnl_attr_put_u32(nlh, NFQA_CT_INFO, htonl(2));
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len,
				       NFQA_CFG_F_CONNTRACK, &p), PKT_OK);
	assert_int_equal(p.ct_state, CT_STATE_NEW);
}

/* A copy cut by copy-range: NFQA_CAP_LEN says what the copy lacks. */
static void test_cut_copy(void **state)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
	struct pkt p;

	put_hdr(nlh, 1, 0x0800, NF_INET_LOCAL_IN);
	mnl_attr_put_u32(nlh, NFQA_CAP_LEN, htonl(sizeof(udp4)));
	mnl_attr_put(nlh, NFQA_PAYLOAD, 22, udp4);
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p), PKT_OK);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(pkt_th_state(&p, PKT_TH_SPORT_END), PKT_PRESENT);
	assert_int_equal(pkt_th_state(&p, PKT_TH_DPORT_END), PKT_INCOMPLETE);
	assert_int_equal(p.sport, 1234);

	/* copy-range 0: no payload at all, nothing known. */
	nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV6, 0);
	put_hdr(nlh, 2, 0x86dd, NF_INET_LOCAL_IN);
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p), PKT_OK);
	assert_int_equal(p.l3_family, AF_INET6);
	assert_int_equal(p.l3, PKT_INCOMPLETE);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
}

static void test_no_packet_header(void **state)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
	struct pkt p;

	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(udp4), udp4);
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p), PKT_BAD);
}

static void test_bad_attribute_keeps_id(void **state)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
	uint16_t short_mark = 1;
	struct pkt p;

	put_hdr(nlh, 99, 0x0800, NF_INET_PRE_ROUTING);
	/* NFQA_MARK must be a u32. */
	mnl_attr_put(nlh, NFQA_MARK, sizeof(short_mark), &short_mark);
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(udp4), udp4);
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
			 PKT_BAD_WITH_ID);
	assert_int_equal(p.id, 99);
	assert_int_equal(p.payload_len, 0);
	assert_int_equal(p.l3, PKT_INCOMPLETE);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
}

static void test_short_buffer(void **state)
{
	struct nlmsghdr *nlh = good_msg();
	struct pkt p;

	/* The message claims more bytes than the buffer holds. */
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len - 8, 0, &p),
			 PKT_BAD);
	assert_int_equal(pkt_parse_msg(nlh, 10, 0, &p), PKT_BAD);
}

static void test_other_message_type(void **state)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_CONFIG, NFPROTO_IPV4, 0);
	struct pkt p;

	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
			 PKT_NOT_PACKET);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | NFQNL_MSG_PACKET;
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
			 PKT_NOT_PACKET);
}


/* Every field of struct pkt, for comparing two parses. A field added to
 * struct pkt belongs here too. */
#define PKT_FIELDS(X) X(id) X(hw_proto) X(hook) X(family) X(queue) \
	X(flags) X(mark) X(indev) X(outdev) X(uid) X(gid) X(ct_state) \
	X(payload) X(payload_len) X(orig_len) X(l3_family) X(l3) X(l4) \
	X(l4proto) X(fragment) X(ip_protocol) X(th_copied) X(th_len) \
	X(sport) X(dport) X(tcp_flags) X(icmp_type)

static void assert_same_pkt(const struct pkt *a, const struct pkt *b)
{
#define SAME(f) assert_true(a->f == b->f);
	PKT_FIELDS(SAME)
#undef SAME
	assert_memory_equal(a->saddr, b->saddr, sizeof(a->saddr));
	assert_memory_equal(a->daddr, b->daddr, sizeof(a->daddr));
}

/* A parse of NLH's first LEN bytes into a clean and a dirty struct gives
 * WANT and the same fields. */
static void check_all_set(const struct nlmsghdr *nlh, size_t len,
			  enum pkt_parse_result want)
{
	struct pkt clean, dirty;

	memset(&clean, 0, sizeof(clean));
	memset(&dirty, 0xa5, sizeof(dirty));
	assert_int_equal(pkt_parse_msg(nlh, len, 0, &clean), want);
	assert_int_equal(pkt_parse_msg(nlh, len, 0, &dirty), want);
	assert_same_pkt(&clean, &dirty);
}

/* The parse sets every field itself (it does not memset the struct). */
static void test_every_field_set(void **state)
{
	struct nlmsghdr *nlh = good_msg();

	check_all_set(nlh, nlh->nlmsg_len, PKT_OK);
	/* And on the bad paths: an attribute of the wrong length, */
	nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
	put_hdr(nlh, 5, 0x0800, NF_INET_LOCAL_IN);
	mnl_attr_put(nlh, NFQA_MARK, 2, "xx");
	check_all_set(nlh, nlh->nlmsg_len, PKT_BAD_WITH_ID);
	/* no packet header, too short, not a packet. */
	nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
	check_all_set(nlh, nlh->nlmsg_len, PKT_BAD);
	check_all_set(nlh, 4, PKT_BAD);
	nlh = put_msg(NFQNL_MSG_CONFIG, NFPROTO_IPV4, 0);
	check_all_set(nlh, nlh->nlmsg_len, PKT_NOT_PACKET);
}

/* An attribute may not reach into the padding after an unaligned
 * message that ends the datagram: the message is malformed. */
static void test_attr_past_datagram(void **state)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
	struct pkt p;

	put_hdr(nlh, 8, 0x0800, NF_INET_LOCAL_IN);
	mnl_attr_put(nlh, NFQA_PAYLOAD, 4, udp4);
	/* The payload claims 4 bytes; the message and datagram end after 1
	 * (libnetfilter_queue would read up to the aligned length). */
	nlh->nlmsg_len -= 3;
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
			 PKT_BAD_WITH_ID);
	assert_int_equal(p.id, 8);
	assert_null(p.payload);
	assert_int_equal(p.payload_len, 0);
	assert_int_equal(p.l3, PKT_INCOMPLETE);
}

/*
 * An attribute that does not fit ends the walk: the message is malformed,
 * not a good one whose later attributes (here the uid and ct info) are
 * absent (issue 17, item 11). libnetfilter_queue calls it good.
 */
static void test_broken_attr_fails(void **state)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
	struct nlattr *bad;
	struct pkt p;

	put_hdr(nlh, 12, 0x0800, NF_INET_LOCAL_OUT);
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(udp4), udp4);
	bad = (struct nlattr *)((char *)nlh + nlh->nlmsg_len);
	mnl_attr_put_u32(nlh, NFQA_MARK, htonl(1));
	mnl_attr_put_u32(nlh, NFQA_UID, htonl(4242));
	mnl_attr_put_u32(nlh, NFQA_CT_INFO, htonl(0));
	/* Shorter than an attribute header: the walk cannot go on. */
	bad->nla_len = 2;
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len,
				       NFQA_CFG_F_UID_GID |
				       NFQA_CFG_F_CONNTRACK, &p),
			 PKT_BAD_WITH_ID);
	assert_int_equal(p.id, 12);
	assert_int_equal(p.flags, 0);
	assert_int_equal(p.l3, PKT_INCOMPLETE);
	/* Longer than what is left. */
	bad->nla_len = 200;
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
			 PKT_BAD_WITH_ID);
	/* Bytes after the last attribute that are no attribute. */
	bad->nla_len = 8;
	nlh->nlmsg_len = (uint32_t)((char *)bad - (char *)nlh) + 2;
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
			 PKT_BAD_WITH_ID);
	/* Before the packet header: no id either. */
	nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
	bad = (struct nlattr *)((char *)nlh + nlh->nlmsg_len);
	mnl_attr_put_u32(nlh, NFQA_MARK, htonl(1));
	put_hdr(nlh, 13, 0x0800, NF_INET_LOCAL_OUT);
	bad->nla_len = 3;
	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p), PKT_BAD);
}

/*
 * Queue families other than IPv4/IPv6 (issue 17, item 10): the family
 * comes from the message, not from the payload's first nibble, so a
 * bridge frame that looks like IPv4, an ARP frame or an unknown family
 * has no IP header, and nfqd cannot say what it has: INCOMPLETE.
 */
static void test_other_families(void **state)
{
	static const uint8_t arp[28] = { 0x00, 0x01, 0x08, 0x00, 6, 4, 0, 1 };
	static const uint8_t fams[] = { NFPROTO_BRIDGE, NFPROTO_ARP,
					NFPROTO_NETDEV, 99 };
	struct pkt p;

	for (unsigned i = 0; i < sizeof(fams); i++) {
		struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, fams[i], 0);

		put_hdr(nlh, 20 + i, 0x0800, 2);
		mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(udp4), udp4);
		assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
				 PKT_OK);
		assert_int_equal(p.family, fams[i]);
		assert_int_equal(p.l3_family, 0);
		assert_int_equal(p.l3, PKT_INCOMPLETE);
		assert_int_equal(p.l4, PKT_INCOMPLETE);
		assert_int_equal(p.saddr[0], 0);
		assert_int_equal(p.dport, 0);
	}
	{
		struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_ARP,
					       0);

		put_hdr(nlh, 30, 0x0806, 0);
		mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(arp), arp);
		assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p),
				 PKT_OK);
		assert_int_equal(p.l3_family, 0);
		assert_int_equal(p.l3, PKT_INCOMPLETE);
	}
}

/* ---- random messages against nfq_nlmsg_parse() */

static uint32_t rnd_state = 2463534242u;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/* The exact length libnetfilter_queue wants for TYPE, or 0. */
static unsigned lib_len(unsigned type)
{
	switch (type) {
	case NFQA_PACKET_HDR:
		return sizeof(struct nfqnl_msg_packet_hdr);
	case NFQA_TIMESTAMP:
		return sizeof(struct nfqnl_msg_packet_timestamp);
	case NFQA_HWADDR:
		return sizeof(struct nfqnl_msg_packet_hw);
	case NFQA_MARK: case NFQA_IFINDEX_INDEV: case NFQA_IFINDEX_OUTDEV:
	case NFQA_IFINDEX_PHYSINDEV: case NFQA_IFINDEX_PHYSOUTDEV:
	case NFQA_CT_INFO: case NFQA_CAP_LEN: case NFQA_SKB_INFO:
	case NFQA_UID: case NFQA_GID: case NFQA_SECCTX:
		return 4;
	}
	return 0;
}

/* One random attribute: mostly the right length, sometimes not. */
static void put_random_attr(struct nlmsghdr *nlh)
{
	uint8_t data[64];
	unsigned type = rnd() % 4 ? rnd() % 20 : rnd() % 64;
	unsigned len = lib_len(type);
	struct nlattr *a;

	if (type == NFQA_PAYLOAD)
		len = rnd() % 2 ? sizeof(udp4) : rnd() % 48;
	if (!len || rnd() % 8 == 0)
		len = rnd() % 20;
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)rnd();
	if (type == NFQA_PAYLOAD && len >= sizeof(udp4) / 2)
		memcpy(data, udp4, len < sizeof(udp4) ? len : sizeof(udp4));
	a = (struct nlattr *)((char *)nlh + nlh->nlmsg_len);
	mnl_attr_put(nlh, (uint16_t)type, len, data);
	if (rnd() % 16 == 0)
		a->nla_type |= NLA_F_NET_BYTEORDER;
}

/* The attributes fill NLH exactly (the library does not check). */
static bool attrs_fill(const struct nlmsghdr *nlh)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
		;
	return (const char *)a >= (const char *)mnl_nlmsg_get_payload_tail(nlh);
}

/* What pkt_parse_msg() must make of NLH, by the library's parser; but a
 * message whose attributes stop short is bad, where the library calls
 * it good. */
static enum pkt_parse_result lib_expect(const struct nlmsghdr *nlh,
					struct nlattr **attr)
{
	memset(attr, 0, sizeof(struct nlattr *) * (NFQA_MAX + 1));
	if (nfq_nlmsg_parse(nlh, attr) < 0 || !attrs_fill(nlh))
		return attr[NFQA_PACKET_HDR] ? PKT_BAD_WITH_ID : PKT_BAD;
	return attr[NFQA_PACKET_HDR] ? PKT_OK : PKT_BAD;
}

static uint32_t lib_u32(struct nlattr *a)
{
	return ntohl(mnl_attr_get_u32(a));
}

static void check_against_lib(const struct nlmsghdr *nlh)
{
	struct nlattr *attr[NFQA_MAX + 1];
	enum pkt_parse_result want = lib_expect(nlh, attr);
	struct pkt p;

	assert_int_equal(pkt_parse_msg(nlh, nlh->nlmsg_len, 0, &p), want);
	if (want == PKT_BAD)
		return;
	assert_int_equal(p.id, ntohl(((struct nfqnl_msg_packet_hdr *)
			 mnl_attr_get_payload(attr[NFQA_PACKET_HDR]))->packet_id));
	if (want != PKT_OK)
		return;
	assert_int_equal(!!(p.flags & PKT_HAS_MARK), !!attr[NFQA_MARK]);
	if (attr[NFQA_MARK])
		assert_int_equal(p.mark, lib_u32(attr[NFQA_MARK]));
	if (attr[NFQA_IFINDEX_INDEV])
		assert_int_equal(p.indev, lib_u32(attr[NFQA_IFINDEX_INDEV]));
	if (attr[NFQA_IFINDEX_OUTDEV])
		assert_int_equal(p.outdev, lib_u32(attr[NFQA_IFINDEX_OUTDEV]));
	if (attr[NFQA_UID])
		assert_int_equal(p.uid, lib_u32(attr[NFQA_UID]));
	if (attr[NFQA_GID])
		assert_int_equal(p.gid, lib_u32(attr[NFQA_GID]));
	assert_int_equal(!!(p.flags & PKT_HAS_CT), !!attr[NFQA_CT_INFO]);
	if (attr[NFQA_PAYLOAD]) {
		assert_ptr_equal(p.payload,
				 mnl_attr_get_payload(attr[NFQA_PAYLOAD]));
		assert_int_equal(p.payload_len,
				 mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]));
	} else {
		assert_null(p.payload);
	}
	assert_int_equal(p.orig_len, attr[NFQA_CAP_LEN] ?
			 lib_u32(attr[NFQA_CAP_LEN]) : p.payload_len);
}

static void test_random_against_library(void **state)
{
	unsigned outcome[4] = { 0 };

	for (int i = 0; i < 200000; i++) {
		struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET, NFPROTO_IPV4, 0);
		unsigned n = rnd() % 7;
		struct nlattr *attr[NFQA_MAX + 1];

		if (rnd() % 4)
			put_hdr(nlh, rnd(), 0x0800, NF_INET_LOCAL_IN);
		for (unsigned k = 0; k < n; k++)
			put_random_attr(nlh);
		/* Now and then an attribute longer than what is left. */
		if (n && rnd() % 8 == 0) {
			struct nlattr *last = (struct nlattr *)
				((char *)nlh + nlh->nlmsg_len - 4);

			if (rnd() % 2)
				last->nla_len = (uint16_t)(rnd() % 200);
		}
		check_against_lib(nlh);
		outcome[lib_expect(nlh, attr)]++;
	}
	/* The random messages reach every outcome. */
	assert_true(outcome[PKT_OK] > 1000);
	assert_true(outcome[PKT_BAD] > 1000);
	assert_true(outcome[PKT_BAD_WITH_ID] > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_packet),
		cmocka_unit_test(test_cap_len_and_outdev),
		cmocka_unit_test(test_ct_info),
		cmocka_unit_test(test_skb_info),
		cmocka_unit_test(test_ct_missing),
		cmocka_unit_test(test_cut_copy),
		cmocka_unit_test(test_no_packet_header),
		cmocka_unit_test(test_bad_attribute_keeps_id),
		cmocka_unit_test(test_short_buffer),
		cmocka_unit_test(test_other_message_type),
		cmocka_unit_test(test_every_field_set),
		cmocka_unit_test(test_attr_past_datagram),
		cmocka_unit_test(test_broken_attr_fails),
		cmocka_unit_test(test_other_families),
		cmocka_unit_test(test_random_against_library),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
