/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_pktmsg.c - NFQUEUE packet messages -> struct pkt, from hand-made
 * netlink messages: good ones, bad attributes, truncation, other types. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_packet),
		cmocka_unit_test(test_cap_len_and_outdev),
		cmocka_unit_test(test_ct_info),
		cmocka_unit_test(test_ct_missing),
		cmocka_unit_test(test_cut_copy),
		cmocka_unit_test(test_no_packet_header),
		cmocka_unit_test(test_bad_attribute_keeps_id),
		cmocka_unit_test(test_short_buffer),
		cmocka_unit_test(test_other_message_type),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
