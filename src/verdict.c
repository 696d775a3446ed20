/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verdict.c - the verdict ledger and batcher. Decisions wait in a ring, in
 * id order, until the sendmsg carrying them succeeded; messages are always
 * built from the oldest entry, so a batch verdict (every waiting id <= the
 * one given) only ever covers packets answered before it or decided the
 * same way.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

/* nlmsghdr + nfgenmsg + verdict header attribute + mark attribute. */
#define VERDICT_MSG_MAX \
	(NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg)) + \
	 MNL_ALIGN(MNL_ATTR_HDRLEN + sizeof(struct nfqnl_msg_verdict_hdr)) + \
	 MNL_ALIGN(MNL_ATTR_HDRLEN + sizeof(uint32_t)))

#define LEDGER_MIN	64
#define TRANSIENT_TRIES	3	/* then the caller retries later */
#define EINTR_TRIES	16

enum rec_kind {
	REC_PACKET,
	REC_GAP,	/* packets of unknown id before the next entry */
	REC_ORPHANS,	/* a gap: a previous process's packets */
	REC_ORPHANS_UPTO,	/* the same, every held id <= id */
};

struct verdict_rec {
	uint32_t id;
	uint8_t kind;
	bool single;	/* a send of it failed: answer it alone */
	struct decision d;
};

static unsigned pow2_at_least(unsigned n)
{
	unsigned p = LEDGER_MIN;

	while (p < n)
		p *= 2;
	return p;
}

int verdict_batch_init(struct verdict_batch *b, uint16_t queue,
		       unsigned max_msgs)
{
	memset(b, 0, sizeof(*b));
	b->queue = queue;
	b->seq = VERDICT_SEQ_BIT + 1;
	b->cap = pow2_at_least(2 * max_msgs);
	b->rec = calloc(b->cap, sizeof(*b->rec));
	if (!b->rec || verdict_batch_set_max(b, max_msgs) < 0) {
		verdict_batch_free(b);
		return -ENOMEM;
	}
	return 0;
}

void verdict_batch_free(struct verdict_batch *b)
{
	free(b->buf);
	free(b->rec);
	b->buf = NULL;
	b->rec = NULL;
	b->count = 0;
}

int verdict_batch_set_max(struct verdict_batch *b, unsigned max_msgs)
{
	size_t size;
	char *buf;

	if (max_msgs == 0)
		max_msgs = 1;
	size = (size_t)max_msgs * VERDICT_MSG_MAX;
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	free(b->buf);
	b->buf = buf;
	b->buf_size = size;
	b->max_msgs = max_msgs;
	b->send_max = size;
	b->len = 0;
	b->n_msgs = 0;
	b->built = 0;
	return 0;
}

static struct verdict_rec *rec_at(const struct verdict_batch *b, unsigned i)
{
	return &b->rec[(b->head + i) & (b->cap - 1)];
}

/* Double the ring, oldest entry first in the new one. */
static void grow(struct verdict_batch *b)
{
	unsigned ncap = b->cap * 2;
	struct verdict_rec *n = malloc(ncap * sizeof(*n));

	if (!n || ncap < b->cap)
		abort();
	for (unsigned i = 0; i < b->count; i++)
		n[i] = *rec_at(b, i);
	free(b->rec);
	b->rec = n;
	b->cap = ncap;
	b->head = 0;
}

static struct verdict_rec *append(struct verdict_batch *b)
{
	if (b->count == b->cap)
		grow(b);
	return rec_at(b, b->count++);
}

/* A record of KIND for ID (a packet's, or a gap's bound) with *D. */
static inline void put_rec(struct verdict_batch *b, uint8_t kind,
			   uint32_t id, const struct decision *d)
{
	struct verdict_rec *r = append(b);

	r->id = id;
	r->kind = kind;
	r->single = false;
	/* Field by field: the caller has just written *D so, and a copy of
	 * the whole struct read it as one 16-byte load that those stores
	 * cannot forward to, waiting for them to reach the cache. */
	r->d.verdict = d->verdict;
	r->d.set_mark = d->set_mark;
	r->d.mark = d->mark;
	r->d.incomplete = d->incomplete;
	r->d.sticky = d->sticky;
}

void verdict_batch_add(struct verdict_batch *b, uint32_t id,
		       const struct decision *d)
{
	put_rec(b, REC_PACKET, id, d);
}

static bool same_decision(const struct decision *a, const struct decision *b)
{
	return a->verdict == b->verdict && a->set_mark == b->set_mark &&
	       (!a->set_mark || a->mark == b->mark);
}

static bool is_gap(const struct verdict_rec *r)
{
	return r->kind == REC_GAP || r->kind == REC_ORPHANS;
}

void verdict_batch_add_gap(struct verdict_batch *b, const struct decision *d)
{
	if (b->count) {
		const struct verdict_rec *r = rec_at(b, b->count - 1);

		if (r->kind == REC_GAP && same_decision(&r->d, d))
			return;
	}
	put_rec(b, REC_GAP, 0, d);
}

void verdict_batch_add_orphans(struct verdict_batch *b,
			       const struct decision *d)
{
	put_rec(b, REC_ORPHANS, 0, d);
}

int verdict_batch_add_orphans_upto(struct verdict_batch *b, uint32_t last,
				   const struct decision *d)
{
	if (b->count)
		return -EBUSY;
	put_rec(b, REC_ORPHANS_UPTO, last, d);
	return 0;
}

/* How strict a verdict is: drop, then repeat (judged again), then
 * queue, then accept. */
static int strictness(uint32_t verdict)
{
	switch (verdict & NF_VERDICT_MASK) {
	case NF_DROP:
		return 3;
	case NF_REPEAT:
		return 2;
	case NF_QUEUE:
		return 1;
	default:
		return 0;
	}
}

/*
 * Gaps from I up to the first known id: their packets cannot be told
 * apart, so one batch verdict answers them all, with the strictest of
 * their decisions (never a laxer one than a packet was given). Sets *D
 * and returns the index of the entry that bounds them.
 */
static unsigned gap_run(const struct verdict_batch *b, unsigned i,
			const struct decision **d, bool *orphans)
{
	*d = &rec_at(b, i)->d;
	*orphans = rec_at(b, i)->kind == REC_ORPHANS;
	for (i++; i < b->count && is_gap(rec_at(b, i)); i++) {
		*orphans |= rec_at(b, i)->kind == REC_ORPHANS;
		if (strictness(rec_at(b, i)->d.verdict) >
		    strictness((*d)->verdict))
			*d = &rec_at(b, i)->d;
	}
	return i;
}

/* A message answering orphans has its own sequence number and asks for
 * an acknowledgement: whether it matched a packet is how they are
 * counted. */
static void put_msg(struct verdict_batch *b, int type, uint32_t id,
		    const struct decision *d, bool orphans)
{
	struct nlmsghdr *nlh = nfq_nlmsg_put(b->buf + b->len, type, b->queue);

	nfq_nlmsg_verdict_put(nlh, (int)id, (int)d->verdict);
	if (d->set_mark)
		nfq_nlmsg_verdict_put_mark(nlh, d->mark);
	if (orphans) {
		nlh->nlmsg_seq = VERDICT_SEQ_ORPHANS;
		nlh->nlmsg_flags |= NLM_F_ACK;
	} else {
		nlh->nlmsg_seq = b->seq | VERDICT_SEQ_BIT;
		b->seq = (b->seq + 1) | VERDICT_SEQ_BIT;
		if (b->seq == VERDICT_SEQ_ORPHANS)
			b->seq++;
	}
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
	b->n_msgs++;
}

/* Entries from I that one message can answer: a run of equal decisions
 * (none of them left by a failed send), or a single one. */
static unsigned run_end(const struct verdict_batch *b, unsigned i)
{
	const struct verdict_rec *r = rec_at(b, i);
	unsigned j = i + 1;

	if (r->single)
		return j;
	while (j < b->count) {
		const struct verdict_rec *n = rec_at(b, j);

		if (n->kind != REC_PACKET || n->single ||
		    !same_decision(&n->d, &r->d))
			break;
		j++;
	}
	return j;
}

static bool is_drop(const struct verdict_rec *r)
{
	return (r->d.verdict & NF_VERDICT_MASK) == NF_DROP;
}

/*
 * A run of I's decision with lone drops in it: entries I..end-1, the last
 * one of I's decision, *DROPS of them drops. Each drop is answered alone
 * before the one batch verdict that answers the others: a dropped packet
 * is never delivered, so answering it before older ones changes no order
 * of delivery, and one message per drop replaces two per interruption of
 * the run (two drops in a row would cost two either way, more would cost
 * more: a run of drops ends the run). At most ROOM messages in all.
 * Returns I + 1 and no drops when there is no such run (the caller uses
 * run_end()).
 */
static unsigned run_end_past_drops(const struct verdict_batch *b, unsigned i,
				   unsigned room, unsigned *drops)
{
	const struct verdict_rec *r = rec_at(b, i);
	unsigned end = i + 1, seen = 0;

	*drops = 0;
	if (r->single || is_drop(r))
		return end;
	for (unsigned j = i + 1; j < b->count; j++) {
		const struct verdict_rec *n = rec_at(b, j);

		if (n->kind != REC_PACKET || n->single)
			break;
		if (same_decision(&n->d, &r->d)) {
			end = j + 1;
			*drops = seen;
		} else if (is_drop(n) && end == j && seen + 2 <= room) {
			seen++;	/* a lone drop, right after I's decision */
		} else {
			break;
		}
	}
	return end;
}

/* The messages for entries I..END-1 (run_end_past_drops()): each drop
 * among them alone, then the batch for the rest. */
static void put_run_past_drops(struct verdict_batch *b, unsigned i,
			       unsigned end)
{
	for (unsigned k = i + 1; k < end; k++)
		if (is_drop(rec_at(b, k)))
			put_msg(b, NFQNL_MSG_VERDICT, rec_at(b, k)->id,
				&rec_at(b, k)->d, false);
	put_msg(b, NFQNL_MSG_VERDICT_BATCH, rec_at(b, end - 1)->id,
		&rec_at(b, i)->d, false);
}

/* Messages that still fit in this send. */
static unsigned room(const struct verdict_batch *b, size_t limit)
{
	unsigned by_size = (unsigned)((limit - b->len) / VERDICT_MSG_MAX);
	unsigned by_count = b->max_msgs - b->n_msgs;

	return by_size < by_count ? by_size : by_count;
}

size_t verdict_batch_build(struct verdict_batch *b)
{
	size_t limit = b->send_max < b->buf_size ? b->send_max : b->buf_size;
	unsigned i = 0;

	b->len = 0;
	b->n_msgs = 0;
	while (i < b->count && room(b, limit) > 0) {
		const struct verdict_rec *r = rec_at(b, i);
		unsigned j, drops;

		if (r->kind == REC_ORPHANS_UPTO) {
			put_msg(b, NFQNL_MSG_VERDICT_BATCH, r->id, &r->d, true);
			i++;
			continue;
		}
		if (is_gap(r)) {
			const struct decision *d;
			bool orphans;

			/* Everything older is answered before this message;
			 * the next known id bounds the unknown ones. */
			j = gap_run(b, i, &d, &orphans);
			if (j == b->count)
				break;
			put_msg(b, NFQNL_MSG_VERDICT_BATCH,
				rec_at(b, j)->id - 1, d, orphans);
			i = j;
			continue;
		}
		j = run_end_past_drops(b, i, room(b, limit), &drops);
		if (drops) {
			put_run_past_drops(b, i, j);
			i = j;
			continue;
		}
		j = run_end(b, i);
		put_msg(b, j - i > 1 ? NFQNL_MSG_VERDICT_BATCH :
				       NFQNL_MSG_VERDICT,
			rec_at(b, j - 1)->id, &r->d, false);
		i = j;
	}
	b->built = i;
	return b->len;
}

void verdict_batch_sent(struct verdict_batch *b)
{
	b->head = (b->head + b->built) & (b->cap - 1);
	b->count -= b->built;
	/* Empty: start again at the ring's first entry, so that a queue
	 * answering every batch writes the same few lines, still in the
	 * cache, rather than a new one every 2.7 packets. */
	if (!b->count)
		b->head = 0;
	b->built = 0;
	b->len = 0;
	b->n_msgs = 0;
}

void verdict_batch_unsent(struct verdict_batch *b)
{
	for (unsigned i = 0; i < b->built; i++)
		rec_at(b, i)->single = true;
	b->built = 0;
	b->len = 0;
	b->n_msgs = 0;
}

static bool transient(int err)
{
	return err == -ENOBUFS || err == -ENOMEM || err == -EAGAIN ||
	       err == -EWOULDBLOCK;
}

int verdict_batch_flush(struct verdict_batch *b, verdict_send_fn send,
			void *ctx, struct verdict_flush_stats *st)
{
	struct verdict_flush_stats dummy;
	unsigned tries = 0, intr = 0;
	size_t len;
	int rc;

	if (!st)
		st = &dummy;
	while ((len = verdict_batch_build(b)) > 0) {
		rc = send(ctx, b->buf, len);
		if (rc == 0) {
			verdict_batch_sent(b);
			st->sends++;
			tries = intr = 0;
			continue;
		}
		if (rc == -EINTR && ++intr < EINTR_TRIES)
			continue;
		if (rc == -EMSGSIZE && b->n_msgs > 1) {
			/* Too big for the socket: fewer messages per send. */
			b->send_max = len / 2;
			if (b->send_max < VERDICT_MSG_MAX)
				b->send_max = VERDICT_MSG_MAX;
			continue;
		}
		if (transient(rc)) {
			st->transient++;
			if (++tries < TRANSIENT_TRIES)
				continue;
		} else {
			st->errors++;
		}
		verdict_batch_unsent(b);
		return rc;
	}
	return 0;
}
