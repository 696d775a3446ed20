/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_queue_rx.c - the worker's receive path fed with hand-made
 * datagrams: packets nfqd cannot read whole (truncated, bad attributes,
 * no readable id) get incomplete-verdict explicitly, are counted, and no
 * batch verdict covers them by accident; on an adopted socket the
 * previous process's orphans get one batch verdict below the first id.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf.h"
#include "policy.h"
#include "queue.h"
#include "stats.h"
#include "verdict.h"
#include "../../src/queue_int.h"

/* IPv4 UDP 192.0.2.1:1234 -> 192.0.2.2:9, 4 bytes of data. */
static const uint8_t udp4[] = {
	0x45, 0x00, 0x00, 0x20, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
	192, 0, 2, 1, 192, 0, 2, 2,
	0x04, 0xd2, 0x00, 0x09, 0x00, 0x0c, 0x00, 0x00,
	'a', 'b', 'c', 'd',
};

/* Judged whole, every packet here is accepted; incomplete-verdict is
 * drop: a packet judged on what survived would be accepted. */
static const char config[] =
	"options { incomplete-verdict drop; }\n"
	"hook input { udp dport 9 accept; policy accept; }\n";

static char buf[8192];

static struct nlmsghdr *put_msg(uint16_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = NFPROTO_IPV4;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(3);
	return nlh;
}

static void put_hdr(struct nlmsghdr *nlh, uint32_t id)
{
	struct nfqnl_msg_packet_hdr ph = {
		.packet_id = htonl(id),
		.hw_protocol = htons(0x0800),
		.hook = NF_INET_LOCAL_IN,
	};

	mnl_attr_put(nlh, NFQA_PACKET_HDR, sizeof(ph), &ph);
}

static struct nlmsghdr *good_msg(uint32_t id)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET);

	put_hdr(nlh, id);
	mnl_attr_put_u32(nlh, NFQA_IFINDEX_INDEV, htonl(7));
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(udp4), udp4);
	return nlh;
}

struct fixture {
	struct conf *conf;
	struct policy *pol;
	struct queue *q;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	assert_int_equal(conf_load_buffer("test.conf", config, strlen(config),
					  &f->conf, NULL), 0);
	f->pol = policy_build(f->conf, 1, NULL);
	assert_non_null(f->pol);
	assert_int_equal(policy_incomplete_verdict(f->pol), NF_DROP);
	assert_int_equal(queue_alloc(&f->q, &(struct queue_place){ .num = 3,
			 .cpu = -1 }, &f->conf->opts), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	queue_free(f->q);
	policy_free(f->pol);
	conf_free(f->conf);
	free(f);
	return 0;
}

/* What one verdict message says. */
struct vmsg {
	int type;
	uint32_t id;
	uint32_t verdict;
	uint32_t seq;
	bool ack;
};

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_get_type(a) <= NFQA_MAX)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

/* Build the ledger's messages, decode them into OUT, forget them as if
 * sent. Returns the count. */
static unsigned take_msgs(struct queue *q, struct vmsg *out, unsigned max)
{
	struct verdict_batch *b = queue_verdicts(q);
	const struct nlmsghdr *nlh;
	unsigned n = 0;
	int rem;

	verdict_batch_build(b);
	nlh = (const struct nlmsghdr *)b->buf;
	rem = (int)b->len;
	while (mnl_nlmsg_ok(nlh, rem) && n < max) {
		const struct nlattr *tb[NFQA_MAX + 1] = { NULL };
		const struct nfqnl_msg_verdict_hdr *vh;

		mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, tb);
		assert_non_null(tb[NFQA_VERDICT_HDR]);
		vh = mnl_attr_get_payload(tb[NFQA_VERDICT_HDR]);
		out[n].type = NFNL_MSG_TYPE(nlh->nlmsg_type);
		out[n].id = ntohl(vh->id);
		out[n].verdict = ntohl(vh->verdict);
		out[n].seq = nlh->nlmsg_seq;
		out[n].ack = nlh->nlmsg_flags & NLM_F_ACK;
		assert_true(verdict_seq_is_verdict(nlh->nlmsg_seq));
		n++;
		nlh = mnl_nlmsg_next(nlh, &rem);
	}
	verdict_batch_sent(b);
	return n;
}

static void feed(struct fixture *f, struct nlmsghdr *nlh, size_t len,
		 bool truncated)
{
	queue_rx_datagram(f->q, f->pol, (char *)nlh, len, truncated);
}

static void test_whole_packet_judged(void **state)
{
	struct fixture *f = *state;
	struct queue_counters c;
	struct vmsg m[4];

	feed(f, good_msg(1), good_msg(1)->nlmsg_len, false);
	assert_int_equal(take_msgs(f->q, m, 4), 1);
	assert_int_equal(m[0].type, NFQNL_MSG_VERDICT);
	assert_int_equal(m[0].verdict, NF_ACCEPT);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.packets, 1);
	assert_int_equal(c.incomplete, 0);
	assert_int_equal(c.errors, 0);
}

/* A datagram of two packet messages (the kernel sends one; a datagram
 * is read as netlink allows): both are judged; bytes after the last
 * message too few for a header are a packet message cut short. */
static void test_datagram_of_two(void **state)
{
	static char dgram[1024];
	struct fixture *f = *state;
	struct queue_counters c;
	size_t len1, len2;

	len1 = MNL_ALIGN(good_msg(20)->nlmsg_len);
	memcpy(dgram, buf, len1);
	len2 = good_msg(21)->nlmsg_len;
	memcpy(dgram + len1, buf, len2);
	feed(f, (struct nlmsghdr *)dgram, len1 + len2, false);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.packets, 2);
	assert_int_equal(c.accepted, 2);
	assert_int_equal(c.errors, 0);

	len2 = MNL_ALIGN(len2);
	memset(dgram + len1 + len2, 0, 8);
	feed(f, (struct nlmsghdr *)dgram, len1 + len2 + 8, false);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.packets, 5);
	assert_int_equal(c.accepted, 4);
	assert_int_equal(c.errors, 1);
	assert_int_equal(c.incomplete, 1);
}

/* MSG_TRUNC: the UDP header survived, but the rest did not: no rule may
 * judge it; incomplete-verdict, counted. */
static void test_truncated_gets_incomplete_verdict(void **state)
{
	struct fixture *f = *state;
	struct queue_counters c;
	struct nlmsghdr *nlh;
	struct vmsg m[4];

	feed(f, good_msg(10), good_msg(10)->nlmsg_len, false);
	nlh = good_msg(11);
	feed(f, nlh, nlh->nlmsg_len - 2, true);
	feed(f, good_msg(12), good_msg(12)->nlmsg_len, false);
	/* The lone drop alone first, then one batch for the others
	 * (verdict.h). */
	assert_int_equal(take_msgs(f->q, m, 4), 2);
	assert_int_equal(m[0].type, NFQNL_MSG_VERDICT);
	assert_int_equal(m[0].id, 11);
	assert_int_equal(m[0].verdict, NF_DROP);
	assert_int_equal(m[1].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[1].id, 12);
	assert_int_equal(m[1].verdict, NF_ACCEPT);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.packets, 3);
	assert_int_equal(c.incomplete, 1);
	assert_int_equal(c.errors, 1);
	assert_int_equal(c.dropped, 1);
	assert_int_equal(c.accepted, 2);
}

/* A bad attribute after the packet header: the id is known, nothing
 * else is trusted. */
static void test_bad_attribute_gets_incomplete_verdict(void **state)
{
	struct fixture *f = *state;
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET);
	uint16_t short_mark = 1;
	struct queue_counters c;
	struct vmsg m[4];

	put_hdr(nlh, 20);
	mnl_attr_put(nlh, NFQA_MARK, sizeof(short_mark), &short_mark);
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(udp4), udp4);
	feed(f, nlh, nlh->nlmsg_len, false);
	assert_int_equal(take_msgs(f->q, m, 4), 1);
	assert_int_equal(m[0].type, NFQNL_MSG_VERDICT);
	assert_int_equal(m[0].id, 20);
	assert_int_equal(m[0].verdict, NF_DROP);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.incomplete, 1);
	assert_int_equal(c.errors, 1);
	assert_int_equal(c.dropped, 1);
}

/*
 * A packet message without a readable id between ids 30 and 32: it is
 * answered with incomplete-verdict by a batch verdict ending at 31, after
 * 30 was answered, and before 32 is.
 */
static void test_unknown_id_bounded_by_next(void **state)
{
	struct fixture *f = *state;
	struct nlmsghdr *nlh;
	struct queue_counters c;
	struct vmsg m[8];

	feed(f, good_msg(30), good_msg(30)->nlmsg_len, false);
	nlh = put_msg(NFQNL_MSG_PACKET);
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(udp4), udp4);
	feed(f, nlh, nlh->nlmsg_len, false);
	/* Nothing bounds it yet: 30 goes, the unknown one waits. */
	assert_int_equal(take_msgs(f->q, m, 8), 1);
	assert_int_equal(m[0].id, 30);
	assert_int_equal(verdict_batch_pending(queue_verdicts(f->q)), 1);

	feed(f, good_msg(32), good_msg(32)->nlmsg_len, false);
	feed(f, good_msg(33), good_msg(33)->nlmsg_len, false);
	assert_int_equal(take_msgs(f->q, m, 8), 2);
	assert_int_equal(m[0].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[0].id, 31);
	assert_int_equal(m[0].verdict, NF_DROP);
	assert_int_equal(m[1].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[1].id, 33);
	assert_int_equal(m[1].verdict, NF_ACCEPT);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.packets, 4);
	assert_int_equal(c.incomplete, 1);
	assert_int_equal(c.errors, 1);
}

/* A truncated datagram too short to hold even a netlink header. */
static void test_truncated_header(void **state)
{
	struct fixture *f = *state;
	struct queue_counters c;
	struct vmsg m[8];

	feed(f, good_msg(40), good_msg(40)->nlmsg_len, false);
	feed(f, good_msg(41), 8, true);
	feed(f, good_msg(43), good_msg(43)->nlmsg_len, false);
	assert_int_equal(take_msgs(f->q, m, 8), 3);
	assert_int_equal(m[0].id, 40);
	assert_int_equal(m[1].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[1].id, 42);
	assert_int_equal(m[1].verdict, NF_DROP);
	assert_int_equal(m[2].id, 43);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.incomplete, 1);
}

/* An error about a verdict (sequence number in the verdict space) is a
 * refused verdict, counted as an error; never a config answer. */
static void test_verdict_error_counted(void **state)
{
	struct fixture *f = *state;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;
	struct queue_counters c;

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = VERDICT_SEQ_BIT | 1;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = -ENOENT;
	feed(f, nlh, nlh->nlmsg_len, false);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.errors, 1);
	assert_int_equal(c.packets, 0);
	assert_int_equal(queue_reconfigure_result(f->q), 0);
}

/* An adopted socket whose kernel line said TOTAL held, ids up to SEQ
 * used (KNOWN false: the line could not be read). */
static void adopting(struct fixture *f, bool known, uint32_t total,
		     uint32_t seq)
{
	struct kqueue_line k = { .queue_num = 3, .queue_total = total,
				 .id_sequence = seq };

	queue_orphans_expect(f->q, NF_REPEAT, known ? &k : NULL);
}

/* The kernel's answer to the orphans' message. */
static void orphans_ack(struct fixture *f, int err)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = VERDICT_SEQ_ORPHANS;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = err;
	feed(f, nlh, nlh->nlmsg_len, false);
}

/* An adopted socket: the kernel held ids up to 104 (104 packets), the
 * previous process read 1-100 and answered none. The first packet read
 * is 101: one batch verdict up to 100 with orphan-verdict comes first,
 * and 104 less the 4 read are counted when the kernel says it matched. */
static void test_orphans_batch_below_first_id(void **state)
{
	struct fixture *f = *state;
	struct queue_counters c;
	struct vmsg m[4];

	adopting(f, true, 104, 104);
	for (uint32_t id = 101; id <= 104; id++)
		feed(f, good_msg(id), good_msg(id)->nlmsg_len, false);
	queue_orphans_adopted(f->q);
	assert_false(f->q->orphans_pending);
	assert_int_equal(take_msgs(f->q, m, 4), 2);
	assert_int_equal(m[0].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[0].id, 100);
	assert_int_equal(m[0].verdict, NF_REPEAT);
	assert_int_equal(m[0].seq, VERDICT_SEQ_ORPHANS);
	assert_true(m[0].ack);
	assert_int_equal(m[1].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[1].id, 104);
	assert_int_equal(m[1].verdict, NF_ACCEPT);
	assert_int_not_equal(m[1].seq, VERDICT_SEQ_ORPHANS);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.orphans, 0);	/* not before the kernel says */
	orphans_ack(f, 0);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.orphans, 100);
	assert_int_equal(c.packets, 4);
	assert_int_equal(c.accepted, 4);
	assert_int_equal(c.other, 0);
	assert_int_equal(c.errors, 0);
}

/*
 * Issue 17 item 5: the previous process read ids 91-100 and answered
 * none; 101 and 102 wait in the socket; 103-122 used up ids in failed
 * deliveries (the socket was full). The kernel held 12, its id_sequence
 * is 122. The orphans are answered below 101, before the batch verdict
 * for 101-102 could cover them, and counted as 10.
 */
static void test_orphans_with_failed_deliveries(void **state)
{
	struct fixture *f = *state;
	struct queue_counters c;
	struct vmsg m[4];

	adopting(f, true, 12, 122);
	feed(f, good_msg(101), good_msg(101)->nlmsg_len, false);
	feed(f, good_msg(102), good_msg(102)->nlmsg_len, false);
	queue_orphans_adopted(f->q);
	assert_int_equal(take_msgs(f->q, m, 4), 2);
	assert_int_equal(m[0].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[0].id, 100);
	assert_int_equal(m[0].verdict, NF_REPEAT);
	assert_int_equal(m[1].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[1].id, 102);
	assert_int_equal(m[1].verdict, NF_ACCEPT);
	orphans_ack(f, 0);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.orphans, 10);
}

/* The kernel's queue file could not be read: the orphans are still
 * answered, below the first packet read (even after the adoption), but
 * not counted. */
static void test_orphans_without_kernel_line(void **state)
{
	struct fixture *f = *state;
	struct queue_counters c;
	struct vmsg m[4];

	adopting(f, false, 0, 0);
	queue_orphans_adopted(f->q);
	assert_int_equal(take_msgs(f->q, m, 4), 0);
	assert_true(f->q->orphans_pending);
	feed(f, good_msg(51), good_msg(51)->nlmsg_len, false);
	feed(f, good_msg(52), good_msg(52)->nlmsg_len, false);
	assert_false(f->q->orphans_pending);
	assert_int_equal(take_msgs(f->q, m, 4), 2);
	assert_int_equal(m[0].id, 50);
	assert_int_equal(m[0].verdict, NF_REPEAT);
	assert_int_equal(m[0].seq, VERDICT_SEQ_ORPHANS);
	assert_int_equal(m[1].id, 52);
	assert_int_equal(m[1].verdict, NF_ACCEPT);
	orphans_ack(f, 0);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.orphans, 0);
	assert_int_equal(c.errors, 0);
}

/* Nothing read while adopting: one batch verdict up to the adopted
 * sequence, whatever the kernel seemed to hold (0 here). ENOENT: there
 * was none, no error. */
static void test_orphans_upto_seq_when_none_read(void **state)
{
	struct fixture *f = *state;
	struct queue_counters c;
	struct vmsg m[4];

	adopting(f, true, 0, 700);
	queue_orphans_adopted(f->q);
	assert_false(f->q->orphans_pending);
	feed(f, good_msg(701), good_msg(701)->nlmsg_len, false);
	assert_int_equal(take_msgs(f->q, m, 4), 2);
	assert_int_equal(m[0].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[0].id, 700);
	assert_int_equal(m[0].verdict, NF_REPEAT);
	assert_int_equal(m[0].seq, VERDICT_SEQ_ORPHANS);
	assert_int_equal(m[1].type, NFQNL_MSG_VERDICT);
	assert_int_equal(m[1].id, 701);
	orphans_ack(f, -ENOENT);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.orphans, 0);
	assert_int_equal(c.errors, 0);
}

/* A graceful stop answered everything it read: the orphans' verdict
 * still goes first, matches nothing (ENOENT), counts nothing. Ids
 * wrap. */
static void test_no_orphans_after_graceful_stop(void **state)
{
	struct fixture *f = *state;
	struct queue_counters c;
	struct vmsg m[4];

	adopting(f, true, 3, 1);	/* ids 0xffffffff, 0, 1 */
	feed(f, good_msg(0xffffffffu), good_msg(0xffffffffu)->nlmsg_len,
	     false);
	feed(f, good_msg(0), good_msg(0)->nlmsg_len, false);
	feed(f, good_msg(1), good_msg(1)->nlmsg_len, false);
	queue_orphans_adopted(f->q);
	assert_int_equal(take_msgs(f->q, m, 4), 2);
	assert_int_equal(m[0].type, NFQNL_MSG_VERDICT_BATCH);
	assert_int_equal(m[0].id, 0xfffffffeu);
	assert_int_equal(m[0].verdict, NF_REPEAT);
	assert_int_equal(m[1].id, 1);
	assert_int_equal(m[1].verdict, NF_ACCEPT);
	assert_int_equal(f->q->orphan_read, 3);
	orphans_ack(f, -ENOENT);
	queue_counters_read(f->q, &c);
	assert_int_equal(c.orphans, 0);
	assert_int_equal(c.errors, 0);
	assert_false(f->q->orphans_pending);
}

/* IPv4 UDP 192.0.2.1:1234 -> 192.0.2.2:53, a query for blocked.test A. */
static const uint8_t dns4[] = {
	0x45, 0x00, 0x00, 0x3a, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
	192, 0, 2, 1, 192, 0, 2, 2,
	0x04, 0xd2, 0x00, 0x35, 0x00, 0x26, 0x00, 0x00,
	0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	7, 'b', 'l', 'o', 'c', 'k', 'e', 'd', 4, 't', 'e', 's', 't', 0,
	0x00, 0x01, 0x00, 0x01,
};

static const char names_config[] =
	"set blk { type domain; elements = { \"blocked.test\" }; }\n"
	"hook input { policy accept; dns qname @blk drop; }\n";

/* Receive slot I of Q holds packet ID: PKT (LEN bytes) from eth0. */
static void put_rx(struct queue *q, int i, uint32_t id, const uint8_t *pkt,
		   size_t len)
{
	struct nlmsghdr *nlh = put_msg(NFQNL_MSG_PACKET);

	put_hdr(nlh, id);
	mnl_attr_put_u32(nlh, NFQA_IFINDEX_INDEV, htonl(7));
	mnl_attr_put(nlh, NFQA_PAYLOAD, len, pkt);
	memcpy(q->rx + (size_t)i * q->rx_each, nlh, nlh->nlmsg_len);
	q->msgs[i].msg_len = nlh->nlmsg_len;
	q->msgs[i].msg_hdr.msg_flags = 0;
}

/* A batch of 4 from ID: UDP to port 9, the third a listed DNS query when
 * DNS; judged; true if the look-ahead parsed it. The query is dropped,
 * the others accepted, either way. */
static bool judge_four(struct queue *q, struct policy *pol, uint32_t id,
		       bool dns)
{
	struct vmsg m[8];
	unsigned n;
	bool dropped = false;

	for (int i = 0; i < 4; i++) {
		if (dns && i == 2)
			put_rx(q, i, id + (uint32_t)i, dns4, sizeof(dns4));
		else
			put_rx(q, i, id + (uint32_t)i, udp4, sizeof(udp4));
		q->ahead[i].parsed = false;
	}
	queue_judge_batch(q, pol, 4);
	n = take_msgs(q, m, 8);
	for (unsigned k = 0; k < n; k++) {
		if (m[k].verdict == NF_DROP) {
			assert_true(dns);
			assert_int_equal(m[k].id, id + 2);
			dropped = true;
		} else {
			assert_int_equal(m[k].verdict, NF_ACCEPT);
		}
	}
	assert_int_equal(dropped, dns);
	assert_int_equal(m[n - 1].id, id + 3);
	return q->ahead[0].parsed;
}

/* The look-ahead is left out for a batch after one without names (or TCP
 * segments) and taken up again after one with a name; the verdicts are
 * the same either way. */
static void test_ahead_follows_names(void **state)
{
	struct conf *c;
	struct policy *pol;
	struct queue *q;

	(void)state;
	assert_int_equal(conf_load_buffer("n.conf", names_config,
					  strlen(names_config), &c, NULL), 0);
	pol = policy_build(c, 1, NULL);
	assert_non_null(pol);
	assert_int_equal(queue_alloc(&q, &(struct queue_place){ .num = 3,
			 .cpu = -1 }, &c->opts), 0);
	/* The first batch makes the flow table (no look-ahead yet). */
	assert_false(judge_four(q, pol, 1, false));
	assert_false(judge_four(q, pol, 5, true));	/* none before */
	assert_true(judge_four(q, pol, 9, true));	/* a name before */
	assert_true(judge_four(q, pol, 13, false));
	assert_false(judge_four(q, pol, 17, false));
	assert_false(judge_four(q, pol, 21, true));
	assert_true(judge_four(q, pol, 25, false));
	queue_free(q);
	policy_free(pol);
	conf_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_whole_packet_judged,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_datagram_of_two, setup,
						teardown),
		cmocka_unit_test(test_ahead_follows_names),
		cmocka_unit_test_setup_teardown(test_truncated_gets_incomplete_verdict,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_attribute_gets_incomplete_verdict,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_id_bounded_by_next,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_header,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_orphans_batch_below_first_id,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_orphans_with_failed_deliveries,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_orphans_without_kernel_line,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_orphans_upto_seq_when_none_read,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_orphans_after_graceful_stop,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_verdict_error_counted,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
