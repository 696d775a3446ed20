/*
 * verdict.h - the verdict batcher: collects one decision per packet of a
 * receive batch, in id order, and turns them into the fewest netlink
 * messages: a run of two or more equal decisions becomes one
 * NFQNL_MSG_VERDICT_BATCH, a single one an NFQNL_MSG_VERDICT. The caller
 * sends the whole buffer with one sendmsg.
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
};

struct verdict_batch {
	uint16_t queue;
	unsigned max;		/* most decisions per batch */
	unsigned n_msgs;	/* messages built by verdict_build() */
	size_t len;		/* bytes built by verdict_build() */
	char *buf;		/* verdict_build() output */
	size_t buf_size;
	/* pending run */
	unsigned run_len;	/* 0: no pending run */
	uint32_t run_last;
	struct decision run;
};

/* Allocate buffers for up to MAX decisions per batch. 0 or -ENOMEM. */
int verdict_batch_init(struct verdict_batch *b, uint16_t queue, unsigned max);
void verdict_batch_free(struct verdict_batch *b);

/* Start a new batch (drops anything built). */
void verdict_batch_reset(struct verdict_batch *b);

/*
 * Add the decision for packet ID. Ids must be added in the order the
 * packets were received (ascending, wrap-safe); every received packet with
 * an id must get one, or a later batch message would cover it.
 */
void verdict_batch_add(struct verdict_batch *b, uint32_t id,
		       const struct decision *d);

/* True when no further decision may be added before verdict_batch_finish()
 * (at most MAX messages fit); the caller sends and resets, then goes on. */
bool verdict_batch_full(const struct verdict_batch *b);

/*
 * Finish the batch: b->buf holds b->len bytes of b->n_msgs netlink
 * messages (sequence numbers from SEQ on). Returns b->len.
 */
size_t verdict_batch_finish(struct verdict_batch *b, uint32_t seq);

#endif
