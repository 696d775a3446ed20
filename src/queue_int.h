/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * queue_int.h - struct queue and what its two halves share: queue.c (the
 * worker's receive / judge / verdict path) and queue_conf.c (the netlink
 * configuration: bind, adopt, flags, unbind). Not for other modules.
 */
#ifndef NFQD_QUEUE_INT_H
#define NFQD_QUEUE_INT_H

#include <ev.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "queue.h"
#include "verdict.h"

struct mnl_socket;
struct nlmsghdr;
struct log_ring;

/* What the worker applies to its queue; replaced whole on reconfigure. */
struct queue_params {
	uint32_t copy_range;
	uint32_t maxlen;
	uint32_t batch;
	uint32_t flags;		/* NFQA_CFG_F_* wanted */
	uint32_t flow_size;	/* flow table for names: flows, idle s */
	uint32_t flow_timeout;
};

/* A reconfigure request from the main thread. */
struct reconf {
	struct queue_params p;
	uint32_t req;
};

#define MANAGED_FLAGS (NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO | \
		       NFQA_CFG_F_UID_GID | NFQA_CFG_F_CONNTRACK)

struct queue {
	const struct registry_root *root;	/* the policy to judge with */
	uint16_t num;
	int cpu;
	unsigned slot;
	struct mnl_socket *nl;
	int fd;
	bool bound;		/* ours in the kernel: unbind on stop */
	bool adopted;		/* the socket came from systemd's fd store */
	bool keep_bound;	/* stop without unbinding (fd store) */
	uint32_t seq;		/* config messages (never VERDICT_SEQ_BIT) */
	struct queue_params params;	/* the worker's (or before start) */
	struct queue_params main_params;	/* main thread: last asked for */

	/* receive buffers: batch slots of rx_each bytes */
	struct mmsghdr *msgs;
	struct iovec *iov;
	char *rx;
	size_t rx_each;
	struct verdict_batch vb;

	/* acknowledgement awaited by the synchronous config path */
	uint32_t wait_seq;
	bool acked;
	int ack_err;
	uint32_t reconf_seq;
	uint32_t reconf_req;	/* worker: the request reconf_seq answers */
	bool unbinding;		/* packets now read were flushed by the kernel */
	uint64_t flushed;

	/* orphans of an adopted socket (queue_conf.c): answered by a batch
	 * verdict below the first id this process reads */
	bool orphans_pending;
	uint32_t orphan_verdict;	/* NF_REPEAT, NF_ACCEPT or NF_DROP */
	uint32_t orphan_total;		/* kernel's queue_total at adoption */
	uint32_t orphan_seq;		/* kernel's id_sequence at adoption */

	/* the worker */
	pthread_t thread;
	bool started;
	struct ev_loop *loop;
	ev_io io;
	ev_async wake;
	ev_timer retry;		/* resend what a failed send left */
	double retry_delay;
	bool in_worker;		/* the worker thread runs the loop */
	bool send_failing;	/* logged once per failure streak */
	bool paused;		/* not receiving: the ledger is at its bound */
	struct log_ring *log;	/* the worker's log lines */
	struct flowtab *flows;	/* names (flow.h): the worker's, made on
				 * the first packet a name rule needs */
	struct queue_counters flows_seen;	/* its counters published */
	struct reconf *pending;		/* from the main thread (xchg) */
	bool stopping;			/* set by the main thread */

	/* reconfigure requests: main thread numbers them, the worker
	 * reports the kernel's answer (reconf_done, then reconf_err) */
	uint32_t reconf_last;		/* main thread */
	uint32_t reconf_done;		/* worker, atomic */
	int reconf_err;			/* worker, atomic */

	/* progress for the watchdog: the worker writes, main reads */
	uint64_t progress;		/* batches completed, atomic */
	bool idle;			/* waiting in its loop, atomic */
	uint64_t progress_seen;		/* main thread */

	/* Written only by the thread that runs the queue (the worker, or
	 * the main thread before start / after join). */
	struct queue_counters delta;	/* this batch, not yet published */
	struct queue_counters live __attribute__((aligned(64)));
	/* main thread only */
	struct queue_counters base __attribute__((aligned(64)));
};


/* queue.c, for queue_conf.c */
struct conf_options;
void queue_params_from_options(struct queue_params *p,
			       const struct conf_options *o, uint32_t kflags);
int queue_receive_batch(struct queue *q);
void queue_counters_publish(struct queue *q);

/* queue_conf.c, for queue.c */

/* Build in BUF (MNL_SOCKET_BUFFER_SIZE) one config message for queue
 * NUM: BIND first when BIND, then copy mode and range, maxlen and the
 * flags of P with MANAGED_FLAGS as mask, all applied by the kernel in one
 * step. */
struct nlmsghdr *queue_conf_msg(char *buf, uint16_t num,
				const struct queue_params *p, bool bind);

/* The next config sequence number (never VERDICT_SEQ_BIT). */
uint32_t queue_next_cfg_seq(struct queue *q);

/* The first packet read on an adopted socket has id FIRST: put the batch
 * verdict for the older ones (the orphans) in the ledger. */
void queue_orphans_before(struct queue *q, uint32_t first);

/* Unbind a stopped queue (unless keep_bound), counting what the kernel
 * flushed. */
void queue_conf_unbind(struct queue *q);

#endif
