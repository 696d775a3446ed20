/*
 * verdict.c - the verdict batcher. Packets of one receive batch are decided
 * in id order; a run of equal decisions becomes one NFQNL_MSG_VERDICT_BATCH
 * (the kernel applies it to every waiting id <= the one given, and every
 * older packet was verdicted by an earlier message), a lone decision one
 * NFQNL_MSG_VERDICT. All messages go out in one sendmsg.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

/* nlmsghdr + nfgenmsg + verdict header attribute + mark attribute. */
#define VERDICT_MSG_MAX \
	(NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg)) + \
	 MNL_ALIGN(MNL_ATTR_HDRLEN + sizeof(struct nfqnl_msg_verdict_hdr)) + \
	 MNL_ALIGN(MNL_ATTR_HDRLEN + sizeof(uint32_t)))

int verdict_batch_init(struct verdict_batch *b, uint16_t queue, unsigned max)
{
	memset(b, 0, sizeof(*b));
	b->queue = queue;
	b->max = max;
	b->buf_size = (size_t)max * VERDICT_MSG_MAX;
	b->buf = malloc(b->buf_size);
	return b->buf ? 0 : -ENOMEM;
}

void verdict_batch_free(struct verdict_batch *b)
{
	free(b->buf);
	b->buf = NULL;
}

void verdict_batch_reset(struct verdict_batch *b)
{
	b->len = 0;
	b->n_msgs = 0;
	b->run_len = 0;
}

static bool same_decision(const struct decision *a, const struct decision *b)
{
	return a->verdict == b->verdict && a->set_mark == b->set_mark &&
	       (!a->set_mark || a->mark == b->mark);
}

/* Append the pending run as one message. */
static void emit_run(struct verdict_batch *b)
{
	int type = b->run_len > 1 ? NFQNL_MSG_VERDICT_BATCH : NFQNL_MSG_VERDICT;
	struct nlmsghdr *nlh;

	if (b->run_len == 0)
		return;
	/* verdict_batch_full() keeps n_msgs below max: the buffer fits. */
	nlh = nfq_nlmsg_put(b->buf + b->len, type, b->queue);
	nfq_nlmsg_verdict_put(nlh, (int)b->run_last, (int)b->run.verdict);
	if (b->run.set_mark)
		nfq_nlmsg_verdict_put_mark(nlh, b->run.mark);
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
	b->n_msgs++;
	b->run_len = 0;
}

void verdict_batch_add(struct verdict_batch *b, uint32_t id,
		       const struct decision *d)
{
	if (b->run_len > 0 && same_decision(&b->run, d)) {
		b->run_last = id;
		b->run_len++;
		return;
	}
	emit_run(b);
	b->run = *d;
	b->run_last = id;
	b->run_len = 1;
}

size_t verdict_batch_finish(struct verdict_batch *b, uint32_t seq)
{
	size_t off = 0;

	emit_run(b);
	for (unsigned i = 0; i < b->n_msgs; i++) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)(b->buf + off);

		nlh->nlmsg_seq = seq + i;
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return b->len;
}

bool verdict_batch_full(const struct verdict_batch *b)
{
	return b->n_msgs + (b->run_len > 0) >= b->max;
}
