/*
 * test_verdict.c - the verdict batcher against a model of the kernel queue:
 * every packet must end up with exactly the decision a per-packet consumer
 * would have given it, with one message per run of equal decisions.
 */
#include <arpa/inet.h>
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

#include "verdict.h"

#define MAXPKT 4096

/* The kernel queue: waiting packets in arrival (id) order. */
struct model {
	uint32_t ids[MAXPKT];
	unsigned n;
	struct decision got[MAXPKT];
	bool decided[MAXPKT];
	uint32_t first_id;
};

static void model_decide(struct model *m, unsigned idx, uint32_t verdict,
			 const struct nlattr *mark)
{
	assert_false(m->decided[idx]);
	m->decided[idx] = true;
	m->got[idx].verdict = verdict;
	m->got[idx].set_mark = mark != NULL;
	m->got[idx].mark = mark ? ntohl(mnl_attr_get_u32(mark)) : 0;
}

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_get_type(a) <= NFQA_MAX)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

/* Apply one verdict message as nfnetlink_queue.c does. */
static void model_apply(struct model *m, const struct nlmsghdr *nlh,
			uint16_t queue)
{
	const struct nlattr *tb[NFQA_MAX + 1] = { NULL };
	const struct nfqnl_msg_verdict_hdr *vh;
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	int type = NFNL_MSG_TYPE(nlh->nlmsg_type);
	uint32_t id, verdict;

	assert_int_equal(NFNL_SUBSYS_ID(nlh->nlmsg_type), NFNL_SUBSYS_QUEUE);
	assert_int_equal(ntohs(nfg->res_id), queue);
	mnl_attr_parse(nlh, sizeof(*nfg), attr_cb, tb);
	assert_non_null(tb[NFQA_VERDICT_HDR]);
	vh = mnl_attr_get_payload(tb[NFQA_VERDICT_HDR]);
	id = ntohl(vh->id);
	verdict = ntohl(vh->verdict);

	if (type == NFQNL_MSG_VERDICT) {
		unsigned i;

		for (i = 0; i < m->n; i++)
			if (m->ids[i] == id && !m->decided[i])
				break;
		assert_true(i < m->n);	/* ENOENT in the kernel */
		model_decide(m, i, verdict, tb[NFQA_MARK]);
		return;
	}
	assert_int_equal(type, NFQNL_MSG_VERDICT_BATCH);
	/* Every waiting packet with id <= the given one (wrap-safe), from
	 * the head of the queue; at least one, or the kernel says ENOENT. */
	unsigned matched = 0;

	for (unsigned i = 0; i < m->n; i++) {
		if (m->decided[i] || (int32_t)(m->ids[i] - id) > 0)
			continue;
		model_decide(m, i, verdict, tb[NFQA_MARK]);
		matched++;
	}
	assert_true(matched > 1);	/* a batch message for one is waste */
}

static unsigned model_apply_buf(struct model *m, const struct verdict_batch *b)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)b->buf;
	int rem = (int)b->len;
	unsigned n = 0;

	while (mnl_nlmsg_ok(nlh, rem)) {
		model_apply(m, nlh, b->queue);
		nlh = mnl_nlmsg_next(nlh, &rem);
		n++;
	}
	assert_int_equal(rem, 0);
	assert_int_equal(n, b->n_msgs);
	return n;
}

static bool same(const struct decision *a, const struct decision *b)
{
	return a->verdict == b->verdict && a->set_mark == b->set_mark &&
	       (!a->set_mark || a->mark == b->mark);
}

/*
 * Feed DEC[0..n) for ids from FIRST through a batcher of size MAX, sending
 * whenever it is full, as the worker does. Checks every packet got its own
 * decision and the message count is the number of runs.
 */
static void run_case(const struct decision *dec, unsigned n, uint32_t first,
		     unsigned max)
{
	struct verdict_batch b;
	struct model *m = calloc(1, sizeof(*m));
	unsigned msgs = 0, runs = 0;

	assert_non_null(m);
	assert_int_equal(verdict_batch_init(&b, 7, max), 0);
	for (unsigned i = 0; i < n; i++)
		m->ids[i] = first + i;
	m->n = n;
	verdict_batch_reset(&b);
	for (unsigned i = 0; i < n; i++) {
		if (verdict_batch_full(&b)) {
			verdict_batch_finish(&b, 0);
			msgs += model_apply_buf(m, &b);
			verdict_batch_reset(&b);
		}
		verdict_batch_add(&b, first + i, &dec[i]);
	}
	verdict_batch_finish(&b, 0);
	msgs += model_apply_buf(m, &b);
	for (unsigned i = 0; i < n; i++) {
		assert_true(m->decided[i]);
		assert_true(same(&m->got[i], &dec[i]));
		if (i == 0 || !same(&dec[i], &dec[i - 1]))
			runs++;
	}
	/* A flush in the middle of a run may split it, never more. */
	if (n <= max)
		assert_int_equal(msgs, runs);
	assert_true(msgs >= runs);
	verdict_batch_free(&b);
	free(m);
}

static const struct decision ACCEPT = {
	.verdict = NF_ACCEPT, .set_mark = false, .mark = 0,
};
static const struct decision DROP = {
	.verdict = NF_DROP, .set_mark = false, .mark = 0,
};
static const struct decision MARK1 = {
	.verdict = NF_ACCEPT, .set_mark = true, .mark = 1,
};
static const struct decision MARK2 = {
	.verdict = NF_ACCEPT, .set_mark = true, .mark = 2,
};
static const struct decision MARK0 = {
	.verdict = NF_ACCEPT, .set_mark = true, .mark = 0,
};
static const struct decision QUEUE5 = {
	.verdict = NF_QUEUE | (5 << 16), .set_mark = false, .mark = 0,
};

static void test_all_same_is_one_message(void **state)
{
	struct decision d[64];
	struct verdict_batch b;

	for (unsigned i = 0; i < 64; i++)
		d[i] = ACCEPT;
	run_case(d, 64, 1, 64);
	assert_int_equal(verdict_batch_init(&b, 0, 64), 0);
	for (unsigned i = 0; i < 64; i++)
		verdict_batch_add(&b, 100 + i, &ACCEPT);
	verdict_batch_finish(&b, 0);
	assert_int_equal(b.n_msgs, 1);
	verdict_batch_free(&b);
}

static void test_single_packet(void **state)
{
	run_case(&DROP, 1, 42, 64);
}

static void test_alternating(void **state)
{
	struct decision d[64];

	for (unsigned i = 0; i < 64; i++)
		d[i] = i % 2 ? DROP : ACCEPT;
	run_case(d, 64, 1000, 64);
}

static void test_marks_split_runs(void **state)
{
	/* Same verdict, different marks; "mark set 0" differs from no mark. */
	const struct decision d[] = { ACCEPT, ACCEPT, MARK1, MARK1, MARK2,
				      MARK0, MARK0, ACCEPT, QUEUE5, QUEUE5,
				      DROP };

	run_case(d, sizeof(d) / sizeof(d[0]), 5, 64);
}

static void test_id_wrap(void **state)
{
	struct decision d[40];

	for (unsigned i = 0; i < 40; i++)
		d[i] = i < 10 ? DROP : i < 30 ? ACCEPT : MARK1;
	run_case(d, 40, 0xfffffff0u, 64);
}

static void test_flush_when_full(void **state)
{
	struct decision d[300];

	for (unsigned i = 0; i < 300; i++)
		d[i] = i % 3 ? ACCEPT : DROP;
	run_case(d, 300, 77, 8);
}

static void test_random_sequences(void **state)
{
	const struct decision *pool[] = { &ACCEPT, &DROP, &MARK1, &MARK2,
					  &MARK0, &QUEUE5 };
	struct decision d[512];

	srand(12345);
	for (int iter = 0; iter < 2000; iter++) {
		unsigned n = 1 + (unsigned)rand() % 512;
		unsigned kinds = 1 + (unsigned)rand() % 6;
		unsigned max = 1 + (unsigned)rand() % 128;
		uint32_t first = (uint32_t)rand() * 2654435761u;

		for (unsigned i = 0; i < n; i++) {
			/* runs of random length */
			if (i == 0 || rand() % 4 == 0)
				d[i] = *pool[(unsigned)rand() % kinds];
			else
				d[i] = d[i - 1];
		}
		run_case(d, n, first, max);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_same_is_one_message),
		cmocka_unit_test(test_single_packet),
		cmocka_unit_test(test_alternating),
		cmocka_unit_test(test_marks_split_runs),
		cmocka_unit_test(test_id_wrap),
		cmocka_unit_test(test_flush_when_full),
		cmocka_unit_test(test_random_sequences),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
