/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_verdict.c - the verdict ledger and batcher against a model of the
 * kernel queue: every packet must end up with exactly the decision a
 * per-packet consumer would have given it, with one message per run of
 * equal decisions (a lone drop inside a run of another decision answered
 * alone first), the packets not dropped delivered in the order they came,
 * whatever sends fail on the way.
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
#include <errno.h>
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
	unsigned msgs;		/* messages applied */
	unsigned singles;	/* of them NFQNL_MSG_VERDICT */
	unsigned batches;
	unsigned batch_matched;
	int last_delivered;	/* index of the last packet not dropped */
};

static void model_decide(struct model *m, unsigned idx, uint32_t verdict,
			 const struct nlattr *mark)
{
	assert_false(m->decided[idx]);
	/* A packet not dropped leaves after every older one that was not. */
	if ((verdict & NF_VERDICT_MASK) != NF_DROP) {
		assert_true((int)idx > m->last_delivered);
		m->last_delivered = (int)idx;
	}
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

	assert_true(verdict_seq_is_verdict(nlh->nlmsg_seq));
	m->msgs++;
	if (type == NFQNL_MSG_VERDICT) {
		unsigned i;

		m->singles++;
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
	/* At least one, or the kernel says ENOENT. */
	assert_true(matched >= 1);
	m->batches++;
	m->batch_matched += matched;
}

/* Apply one send's buffer, as the kernel does when the sendmsg succeeds. */
static void model_apply_buf(struct model *m, uint16_t queue, const void *buf,
			    size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int rem = (int)len;

	while (mnl_nlmsg_ok(nlh, rem)) {
		model_apply(m, nlh, queue);
		nlh = mnl_nlmsg_next(nlh, &rem);
	}
	assert_int_equal(rem, 0);
}

/* A send that fails by a script, else delivers to the model. */
struct sender {
	struct model *m;
	uint16_t queue;
	int fail_next;		/* fail this many sends ... */
	int fail_err;		/* ... with this */
	size_t fail_above;	/* EMSGSIZE for more bytes than this (0: off) */
	unsigned calls, ok;
	size_t max_len;		/* largest send delivered */
};

static int model_send(void *ctx, const void *buf, size_t len)
{
	struct sender *s = ctx;

	s->calls++;
	if (s->fail_above && len > s->fail_above)
		return -EMSGSIZE;
	if (s->fail_next > 0) {
		s->fail_next--;
		return s->fail_err;
	}
	s->ok++;
	if (len > s->max_len)
		s->max_len = len;
	model_apply_buf(s->m, s->queue, buf, len);
	return 0;
}

static bool same(const struct decision *a, const struct decision *b)
{
	return a->verdict == b->verdict && a->set_mark == b->set_mark &&
	       (!a->set_mark || a->mark == b->mark);
}

static struct model *model_new(uint32_t first, unsigned n)
{
	struct model *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	for (unsigned i = 0; i < n; i++)
		m->ids[i] = first + i;
	m->n = n;
	m->first_id = first;
	m->last_delivered = -1;
	return m;
}

static void assert_all_decided(const struct model *m,
			       const struct decision *dec)
{
	for (unsigned i = 0; i < m->n; i++) {
		assert_true(m->decided[i]);
		assert_true(same(&m->got[i], &dec[i]));
	}
}

static bool drop(const struct decision *d)
{
	return (d->verdict & NF_VERDICT_MASK) == NF_DROP;
}

/*
 * The messages for DEC[0..n) in one send: one per run of equal
 * decisions, except that a lone drop inside a run of another decision
 * costs one message and does not end it.
 */
static unsigned messages_wanted(const struct decision *dec, unsigned n)
{
	unsigned msgs = 0, i = 0;

	while (i < n) {
		unsigned end = i + 1, drops = 0, seen = 0;

		for (unsigned j = i + 1; j < n; j++) {
			if (same(&dec[j], &dec[i])) {
				end = j + 1;
				drops = seen;
			} else if (!drop(&dec[i]) && drop(&dec[j]) &&
				   end == j) {
				seen++;
			} else {
				break;
			}
		}
		msgs += drops + 1;
		i = end;
	}
	return msgs;
}

/*
 * Feed DEC[0..n) for ids from FIRST into a ledger of MAX messages per
 * send, flushing every FLUSH_EVERY decisions as the worker does after a
 * receive. Checks every packet got its own decision and the message
 * count is messages_wanted().
 */
static void run_case(const struct decision *dec, unsigned n, uint32_t first,
		     unsigned max)
{
	struct verdict_batch b;
	struct model *m = model_new(first, n);
	struct sender s = { .m = m, .queue = 7 };
	unsigned runs = 0;

	assert_int_equal(verdict_batch_init(&b, 7, max), 0);
	for (unsigned i = 0; i < n; i++) {
		verdict_batch_add(&b, first + i, &dec[i]);
		if (verdict_batch_pending(&b) == max)
			assert_int_equal(verdict_batch_flush(&b, model_send,
							     &s, NULL), 0);
	}
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, NULL), 0);
	assert_int_equal(verdict_batch_pending(&b), 0);
	assert_all_decided(m, dec);
	for (unsigned i = 0; i < n; i++)
		if (i == 0 || !same(&dec[i], &dec[i - 1]))
			runs++;
	/* Never more than one per run; a flush in the middle of a run may
	 * split it. */
	if (n <= max) {
		assert_int_equal(m->msgs, messages_wanted(dec, n));
		assert_true(m->msgs <= runs);
	}
	assert_true(m->msgs >= messages_wanted(dec, n));
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
	verdict_batch_build(&b);
	assert_int_equal(b.n_msgs, 1);
	assert_int_equal(b.built, 64);
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

/*
 * The bug this ledger fixes: a send fails for good, its messages were
 * thrown away, and the next batch verdict covered those packets with
 * another decision. Now they stay and are answered first, one by one.
 */
static void test_failed_send_is_resent_first(void **state)
{
	struct decision d[8] = { DROP, DROP, DROP, ACCEPT, ACCEPT, ACCEPT,
				 ACCEPT, ACCEPT };
	struct model *m = model_new(10, 8);
	struct sender s = { .m = m, .queue = 7, .fail_next = 1000,
			    .fail_err = -ENOBUFS };
	struct verdict_flush_stats st = { 0 };
	struct verdict_batch b;

	assert_int_equal(verdict_batch_init(&b, 7, 64), 0);
	for (unsigned i = 0; i < 3; i++)
		verdict_batch_add(&b, 10 + i, &d[i]);
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, &st),
			 -ENOBUFS);
	assert_true(st.transient >= 1);
	assert_int_equal(st.sends, 0);
	assert_int_equal(verdict_batch_pending(&b), 3);
	assert_int_equal(m->msgs, 0);

	/* The next receive batch: five accepts, then the send works. */
	for (unsigned i = 3; i < 8; i++)
		verdict_batch_add(&b, 10 + i, &d[i]);
	s.fail_next = 0;
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, &st), 0);
	assert_int_equal(st.sends, 1);
	assert_int_equal(verdict_batch_pending(&b), 0);
	assert_all_decided(m, d);
	/* Three single drops, then one batch for the five accepts. */
	assert_int_equal(m->singles, 3);
	assert_int_equal(m->batches, 1);
	verdict_batch_free(&b);
	free(m);
}

/* ENOBUFS twice then success: retried at once, nothing marked single. */
static void test_transient_retried(void **state)
{
	struct decision d[4] = { DROP, DROP, ACCEPT, ACCEPT };
	struct model *m = model_new(1, 4);
	struct sender s = { .m = m, .queue = 7, .fail_next = 2,
			    .fail_err = -ENOMEM };
	struct verdict_flush_stats st = { 0 };
	struct verdict_batch b;

	assert_int_equal(verdict_batch_init(&b, 7, 64), 0);
	for (unsigned i = 0; i < 4; i++)
		verdict_batch_add(&b, 1 + i, &d[i]);
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, &st), 0);
	assert_int_equal(st.transient, 2);
	assert_int_equal(st.sends, 1);
	assert_int_equal(m->batches, 2);
	assert_all_decided(m, d);
	verdict_batch_free(&b);
	free(m);
}

/* A permanent error (EPERM) keeps everything, for as long as it lasts. */
static void test_permanent_error_keeps_all(void **state)
{
	struct decision d[200];
	struct model *m = model_new(500, 200);
	struct sender s = { .m = m, .queue = 7, .fail_next = 1 << 30,
			    .fail_err = -EPERM };
	struct verdict_flush_stats st = { 0 };
	struct verdict_batch b;

	assert_int_equal(verdict_batch_init(&b, 7, 16), 0);
	for (unsigned i = 0; i < 200; i++) {
		d[i] = i % 7 ? ACCEPT : DROP;
		verdict_batch_add(&b, 500 + i, &d[i]);
		if (i % 16 == 15)
			assert_int_equal(verdict_batch_flush(&b, model_send,
							     &s, &st), -EPERM);
	}
	assert_int_equal(verdict_batch_pending(&b), 200);
	assert_int_equal(m->msgs, 0);
	assert_int_equal(st.transient, 0);
	s.fail_next = 0;
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, &st), 0);
	assert_all_decided(m, d);
	verdict_batch_free(&b);
	free(m);
}

/* EMSGSIZE: fewer messages per send until they fit; all delivered. */
static void test_emsgsize_splits(void **state)
{
	struct decision d[64];
	struct model *m = model_new(1, 64);
	struct sender s = { .m = m, .queue = 7, .fail_above = 300 };
	struct verdict_batch b;

	assert_int_equal(verdict_batch_init(&b, 7, 64), 0);
	for (unsigned i = 0; i < 64; i++) {
		d[i] = i % 2 ? DROP : MARK1;
		verdict_batch_add(&b, 1 + i, &d[i]);
	}
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, NULL), 0);
	assert_int_equal(verdict_batch_pending(&b), 0);
	assert_true(s.max_len <= 300);
	assert_true(s.ok > 1);
	assert_all_decided(m, d);
	verdict_batch_free(&b);
	free(m);
}

/* Even one message too big: kept, reported, sent when it fits again. */
static void test_emsgsize_single_message(void **state)
{
	struct decision d[3] = { DROP, ACCEPT, ACCEPT };
	struct model *m = model_new(1, 3);
	struct sender s = { .m = m, .queue = 7, .fail_above = 8 };
	struct verdict_batch b;

	assert_int_equal(verdict_batch_init(&b, 7, 64), 0);
	for (unsigned i = 0; i < 3; i++)
		verdict_batch_add(&b, 1 + i, &d[i]);
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, NULL),
			 -EMSGSIZE);
	assert_int_equal(verdict_batch_pending(&b), 3);
	s.fail_above = 0;
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, NULL), 0);
	assert_all_decided(m, d);
	verdict_batch_free(&b);
	free(m);
}

/*
 * Packets whose id could not be read (ids 3, 4 here): one batch verdict
 * with incomplete-verdict ending just below the next known id, after
 * every older packet was answered.
 */
static void test_gap_before_next_id(void **state)
{
	const struct decision inc = { .verdict = NF_DROP, .incomplete = true };
	struct decision d[6] = { ACCEPT, ACCEPT, inc, inc, ACCEPT, MARK1 };
	struct model *m = model_new(1, 6);
	struct sender s = { .m = m, .queue = 7 };
	struct verdict_batch b;

	assert_int_equal(verdict_batch_init(&b, 7, 64), 0);
	verdict_batch_add(&b, 1, &ACCEPT);
	verdict_batch_add(&b, 2, &ACCEPT);
	verdict_batch_add_gap(&b, &inc);
	verdict_batch_add_gap(&b, &inc);	/* merges */
	/* Nothing after the gap yet: it waits, what is older goes. */
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, NULL), 0);
	assert_int_equal(verdict_batch_pending(&b), 1);
	assert_int_equal(m->msgs, 1);
	verdict_batch_add(&b, 5, &ACCEPT);
	verdict_batch_add(&b, 6, &MARK1);
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, NULL), 0);
	assert_int_equal(verdict_batch_pending(&b), 0);
	assert_all_decided(m, d);
	verdict_batch_free(&b);
	free(m);
}

/*
 * Two packets of unknown id in a row with different decisions (here an
 * orphan gap with repeat or accept, then an incomplete one with drop):
 * no id tells them apart, so neither decision may silently win for both.
 * They are answered together with the stricter one (drop before repeat
 * before accept), in either order, and a lone pair waits for a known id.
 */
static void check_two_gaps(const struct decision *first,
			   const struct decision *second,
			   const struct decision *want)
{
	struct decision d[4] = { ACCEPT, *want, *want, DROP };
	struct model *m = model_new(1, 4);
	struct sender s = { .m = m, .queue = 7 };
	struct verdict_batch b;

	assert_int_equal(verdict_batch_init(&b, 7, 64), 0);
	verdict_batch_add(&b, 1, &ACCEPT);
	verdict_batch_add_gap(&b, first);
	verdict_batch_add_gap(&b, second);
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, NULL), 0);
	assert_int_equal(m->msgs, 1);	/* nothing bounds the gaps yet */
	verdict_batch_add(&b, 4, &DROP);
	assert_int_equal(verdict_batch_flush(&b, model_send, &s, NULL), 0);
	assert_int_equal(verdict_batch_pending(&b), 0);
	assert_all_decided(m, d);
	verdict_batch_free(&b);
	free(m);
}

static void test_gaps_of_different_decisions(void **state)
{
	const struct decision inc = { .verdict = NF_DROP, .incomplete = true };
	const struct decision repeat = { .verdict = NF_REPEAT };

	check_two_gaps(&repeat, &inc, &inc);
	check_two_gaps(&inc, &repeat, &inc);
	check_two_gaps(&ACCEPT, &inc, &inc);
	check_two_gaps(&ACCEPT, &repeat, &repeat);
	check_two_gaps(&repeat, &ACCEPT, &repeat);
}

/* Verdict messages never share a sequence number with config messages,
 * across the wrap of the counter too. */
static void test_sequence_space(void **state)
{
	struct verdict_batch b;

	assert_int_equal(verdict_batch_init(&b, 7, 4), 0);
	b.seq = 0xfffffffeu;
	for (uint32_t i = 0; i < 20; i++) {
		const struct nlmsghdr *nlh;
		int rem;

		verdict_batch_add(&b, 2 * i, &ACCEPT);
		verdict_batch_add(&b, 2 * i + 1, &DROP);
		verdict_batch_build(&b);
		nlh = (const struct nlmsghdr *)b.buf;
		rem = (int)b.len;
		while (mnl_nlmsg_ok(nlh, rem)) {
			assert_true(nlh->nlmsg_seq & VERDICT_SEQ_BIT);
			assert_true(verdict_seq_is_verdict(nlh->nlmsg_seq));
			/* reserved for the orphans' message */
			assert_int_not_equal(nlh->nlmsg_seq,
					     VERDICT_SEQ_ORPHANS);
			nlh = mnl_nlmsg_next(nlh, &rem);
		}
		verdict_batch_sent(&b);
	}
	for (uint32_t seq = 1; seq < 100000; seq++)
		assert_false(verdict_seq_is_verdict(seq));
	verdict_batch_free(&b);
}

/* Random decisions, random gaps, random failures of every kind, random
 * flushes; at the end every packet has exactly its own decision. */
static void test_random_failures(void **state)
{
	const struct decision *pool[] = { &ACCEPT, &DROP, &MARK1, &MARK2,
					  &MARK0, &QUEUE5 };
	const int errs[] = { -ENOBUFS, -ENOMEM, -EAGAIN, -EPERM, -EINTR,
			     -EINVAL };
	const struct decision inc = { .verdict = NF_DROP, .incomplete = true };
	static struct decision d[MAXPKT];

	srand(4242);
	for (int iter = 0; iter < 500; iter++) {
		unsigned n = 1 + (unsigned)rand() % 1500;
		unsigned max = 1 + (unsigned)rand() % 64;
		uint32_t first = (uint32_t)rand() * 2654435761u;
		struct model *m = model_new(first, n);
		struct sender s = { .m = m, .queue = 7 };
		struct verdict_batch b;
		bool prev_gap = false;

		assert_int_equal(verdict_batch_init(&b, 7, max), 0);
		for (unsigned i = 0; i < n; i++) {
			if (i == 0 || rand() % 4 == 0)
				d[i] = *pool[(unsigned)rand() % 6];
			else
				d[i] = d[i - 1];
			/* An unknown id: never the last packet, so a
			 * known id always bounds it. */
			if (i + 1 < n && rand() % 50 == 0) {
				d[i] = inc;
				if (!prev_gap)
					verdict_batch_add_gap(&b, &inc);
				prev_gap = true;
			} else {
				verdict_batch_add(&b, first + i, &d[i]);
				prev_gap = false;
			}
			if (rand() % 8)
				continue;
			s.fail_next = rand() % 3 ? 0 : 1 + rand() % 5;
			s.fail_err = errs[(unsigned)rand() % 6];
			s.fail_above = rand() % 4 ? 0 : 40 + rand() % 400;
			verdict_batch_flush(&b, model_send, &s, NULL);
		}
		s.fail_next = 0;
		s.fail_above = 0;
		assert_int_equal(verdict_batch_flush(&b, model_send, &s, NULL),
				 0);
		assert_int_equal(verdict_batch_pending(&b), 0);
		/* A gap covers consecutive unknown ids with one message. */
		for (unsigned i = 0; i < n; i++) {
			assert_true(m->decided[i]);
			assert_true(same(&m->got[i], &d[i]));
		}
		verdict_batch_free(&b);
		free(m);
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
		cmocka_unit_test(test_failed_send_is_resent_first),
		cmocka_unit_test(test_transient_retried),
		cmocka_unit_test(test_permanent_error_keeps_all),
		cmocka_unit_test(test_emsgsize_splits),
		cmocka_unit_test(test_emsgsize_single_message),
		cmocka_unit_test(test_gap_before_next_id),
		cmocka_unit_test(test_gaps_of_different_decisions),
		cmocka_unit_test(test_sequence_space),
		cmocka_unit_test(test_random_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
