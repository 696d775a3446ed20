/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verdict.h - the verdict ledger and batcher: every decision made for a
 * packet the kernel still holds, in id order, until a sendmsg has
 * delivered its verdict; and the netlink messages that answer them with
 * the fewest messages: a run of two or more equal decisions becomes one
 * NFQNL_MSG_VERDICT_BATCH, a single one an NFQNL_MSG_VERDICT. Drops
 * inside a run of another decision (1 in 10 names blocked) do not split
 * it: each is answered alone first, then one batch verdict answers the
 * rest. A dropped packet is never delivered, so the packets that are
 * still leave in the order they came.
 *
 * A batch verdict applies to every waiting packet with an id <= the one
 * given, so it is only safe when every older waiting packet has been
 * answered: by an earlier sendmsg that succeeded, or by an earlier message
 * of the same sendmsg (the kernel processes them in order). The ledger
 * keeps a decision until the sendmsg carrying it succeeded, and always
 * builds from its oldest entry: a failed send never lets a later batch
 * verdict cover a packet decided differently.
 *
 * No socket in here: the caller sends through a function it passes in.
 */
#ifndef NFQD_VERDICT_H
#define NFQD_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the policy decided for one packet. */
struct decision {
	uint32_t verdict;	/* NF_ACCEPT, NF_DROP, NF_REPEAT, NF_QUEUE_NR(n) */
	bool set_mark;
	uint32_t mark;
	bool incomplete;	/* verdict is the policy's incomplete-verdict */
	bool sticky;		/* a drop the packet's flow keeps (nfqd.conf(5)
				 * NAMES): a name's, INCOMPLETE or listed */
};

/*
 * Verdict messages carry sequence numbers with this bit set, config
 * messages never do: an error the kernel returns about a verdict can
 * never be taken for the answer to a config message.
 */
#define VERDICT_SEQ_BIT		0x80000000u

/* The one sequence number of messages answering a previous process's
 * orphans (verdict_batch_add_orphans()); no other message has it. */
#define VERDICT_SEQ_ORPHANS	VERDICT_SEQ_BIT

static inline bool verdict_seq_is_verdict(uint32_t seq)
{
	return (seq & VERDICT_SEQ_BIT) != 0;
}

struct verdict_rec;

struct verdict_batch {
	uint16_t queue;
	/* the ledger: decided, not yet delivered, oldest first (a ring) */
	struct verdict_rec *rec;
	unsigned cap;		/* power of two */
	unsigned head;		/* index of the oldest */
	unsigned count;
	/* verdict_batch_build() output */
	char *buf;
	size_t buf_size;
	unsigned max_msgs;	/* messages that fit in buf */
	size_t len;		/* bytes built */
	unsigned n_msgs;	/* messages built */
	unsigned built;		/* ledger entries the built messages answer */
	size_t send_max;	/* most bytes per send, learnt from EMSGSIZE */
	uint32_t seq;		/* next verdict sequence number */
};

/* What verdict_batch_flush() did, for the caller's counters. */
struct verdict_flush_stats {
	unsigned sends;		/* sends that succeeded */
	unsigned transient;	/* ENOBUFS, ENOMEM, EAGAIN */
	unsigned errors;	/* any other failure */
};

/*
 * Allocate for MAX_MSGS messages per send (the receive batch) and a
 * ledger that grows as needed. 0 or -ENOMEM.
 */
int verdict_batch_init(struct verdict_batch *b, uint16_t queue,
		       unsigned max_msgs);
void verdict_batch_free(struct verdict_batch *b);

/* Change the messages per send (the ledger is kept). 0 or -ENOMEM
 * (nothing changed). */
int verdict_batch_set_max(struct verdict_batch *b, unsigned max_msgs);

/*
 * Record the decision for packet ID. Ids must be added in the order the
 * packets were received (ascending, wrap-safe); every received packet the
 * kernel holds must get one, or a later batch message would cover it.
 * The ledger grows when full (aborts if memory runs out: the kernel would
 * hold a packet nfqd no longer knows about).
 */
void verdict_batch_add(struct verdict_batch *b, uint32_t id,
		       const struct decision *d);

/*
 * Record a packet whose id could not be read, with decision D: it is
 * answered by a batch verdict ending just below the next id added (every
 * older packet having been answered before it). Consecutive ones with the
 * same decision merge; consecutive ones with different decisions stay
 * apart, but no id tells their packets apart: the one batch verdict that
 * answers them carries the strictest of their decisions (drop, then
 * repeat, then queue, then accept), never a laxer one than any was given.
 * Until a later packet is added, it waits in the ledger.
 */
void verdict_batch_add_gap(struct verdict_batch *b, const struct decision *d);

/*
 * A previous process's orphans (an adopted socket): a gap as above, with
 * decision D, added before the first packet this process read. Its
 * message has the sequence number VERDICT_SEQ_ORPHANS and asks for an
 * acknowledgement: 0 when it answered at least one packet, ENOENT when
 * there was none.
 */
void verdict_batch_add_orphans(struct verdict_batch *b,
			       const struct decision *d);

/*
 * The same when this process has read nothing yet: a batch verdict with
 * D for every held id <= LAST. Only into an empty ledger (-EBUSY
 * otherwise: a waiting gap could hide an id <= LAST).
 */
int verdict_batch_add_orphans_upto(struct verdict_batch *b, uint32_t last,
				   const struct decision *d);

/* Ledger entries not yet delivered. */
static inline unsigned verdict_batch_pending(const struct verdict_batch *b)
{
	return b->count;
}

/*
 * Build messages for the oldest ledger entries into b->buf: at most
 * b->max_msgs messages and b->send_max bytes, not past a gap no later
 * packet resolves yet. Entries a failed send left behind get one
 * NFQNL_MSG_VERDICT each. Sets b->len, b->n_msgs, b->built and the
 * sequence numbers; returns b->len (0: nothing to send).
 */
size_t verdict_batch_build(struct verdict_batch *b);

/* The built messages were delivered: forget their entries. */
void verdict_batch_sent(struct verdict_batch *b);

/* The built messages were not delivered: keep their entries, to be
 * answered one by one from now on. */
void verdict_batch_unsent(struct verdict_batch *b);

/* Send: 0, or a negative errno when nothing of BUF was delivered. */
typedef int (*verdict_send_fn)(void *ctx, const void *buf, size_t len);

/*
 * Deliver every ledger entry that can be answered, oldest first, with as
 * few sends of SEND as possible. A send that fails with EINTR is
 * repeated; ENOBUFS, ENOMEM and EAGAIN (transient) are retried a few
 * times; EMSGSIZE halves the bytes per send down to one message. When a
 * send still fails, the entries stay (marked to be answered one by one)
 * and the errno is returned: the caller retries later. 0 when the ledger
 * holds nothing sendable. ST (may be NULL) is added to.
 */
int verdict_batch_flush(struct verdict_batch *b, verdict_send_fn send,
			void *ctx, struct verdict_flush_stats *st);

#endif
