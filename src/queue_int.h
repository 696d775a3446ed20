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

#include "bigmem.h"
#include "domset.h"
#include "flow.h"
#include "names.h"
#include "pkt.h"
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
	uint16_t dns_ports[CONF_DNS_PORTS_MAX];	/* DNS for names */
	unsigned n_dns_ports;
};

/* A reconfigure request from the main thread. */
struct reconf {
	struct queue_params p;
	uint32_t req;
};

#define MANAGED_FLAGS (NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO | \
		       NFQA_CFG_F_UID_GID | NFQA_CFG_F_CONNTRACK)

/* A received datagram's packet, parsed a few packets before it is
 * judged, and what it alone shows of its names (flow_ahead()). On its
 * own cache lines (calloc_lines()). */
struct __attribute__((aligned(64))) rx_ahead {
	bool parsed;		/* p and fa hold the datagram's packet */
	bool probed;		/* the look-ahead made probes of a name */
	uint8_t probed_proto;	/* its enum name_proto */
	/* That name: fa.names's, or its rx_name's pair */
	const struct name_out *name;
	/* In this order, so that a packet without a name writes the
	 * first three lines of its rx_ahead (four or five before): the
	 * name's bytes come last. */
	struct pkt p;
	struct flow_ahead fa;
};

/* What the look-ahead keeps of a datagram's name, apart from struct
 * rx_ahead, so that packets without names do not bring it to the cache
 * (each is about 1.5 KB). */
struct rx_name {
	struct dom_probes probes;	/* of the rx_ahead's name */
	struct name_out pair;		/* guessed with the datagram before
					 * (flow_ahead_pair()) */
};

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

	/* receive buffers: batch slots of rx_each bytes, and what the
	 * names look-ahead learnt of each (queue.c names_ahead()), all in
	 * one mapping of rx_mem_len bytes at rx_mem (queue.c alloc_rx()) */
	void *rx_mem;
	size_t rx_mem_len;
	struct mmsghdr *msgs;
	struct iovec *iov;
	char *rx;
	size_t rx_each;
	struct rx_ahead *ahead;
	struct rx_name *ahead_names;	/* one per rx_ahead */
	/* The look-ahead (names_ahead()) only pays for packets that show a
	 * name or are TCP segments (a flow to look up); a batch of others
	 * is judged faster without it. ahead_skip: the last batch had none
	 * (the next is judged without it); ahead_want: this one has one. */
	bool ahead_skip, ahead_want;
	uint64_t rx_ns;		/* monotonic time of the datagrams judged now */
	bool rx_names;		/* their policy matches names */
	uint64_t rx_serial;	/* their policy's policy_serial() */
	struct verdict_batch vb;

	/* acknowledgement awaited by the synchronous config path: a config
	 * message sent again (its ACK may have been lost to a full receive
	 * buffer) gets the next number, and an ACK of any of them counts */
	uint32_t wait_first;	/* first number of the message awaited */
	uint32_t wait_seq;	/* its last number; 0 when none awaited */
	bool acked;
	int ack_err;
	uint32_t reconf_first;	/* the same for the worker's reconfigure */
	uint32_t reconf_seq;
	uint32_t reconf_req;	/* worker: the request reconf_seq answers */
	ev_timer reconf_resend;	/* worker: no ACK yet, send it again */

	/* a final stop (queue.c, stop_final): the kernel's queue_dropped when it
	 * began, and the packets the worker judged after it began */
	uint32_t stop_qdropped;
	bool stop_known;	/* stop_qdropped read */
	bool closed;		/* the kernel acknowledged maxlen 0 */
	uint64_t stop_judged;
	bool unbinding;		/* packets now read were flushed by the kernel */
	uint64_t flushed;

	/* orphans of an adopted socket (queue_conf.c): answered by a batch
	 * verdict below the first id this process reads, or up to
	 * orphan_seq if it read none while adopting */
	bool orphans_pending;		/* decide() calls queue_orphans_seen() */
	bool orphans_adopting;		/* the adoption's config is unanswered */
	bool orphans_queued;		/* their verdict is in the ledger */
	bool orphans_known;		/* orphan_total and orphan_seq read */
	uint32_t orphan_verdict;	/* NF_REPEAT, NF_ACCEPT or NF_DROP */
	uint32_t orphan_total;		/* kernel's queue_total at adoption */
	uint32_t orphan_seq;		/* kernel's id_sequence at adoption */
	uint32_t orphan_read;		/* ids <= orphan_seq this process read */

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
	uint32_t hooks_delta;		/* bit h: a packet of hook h */
	struct queue_counters live __attribute__((aligned(64)));
	/* when a packet of each hook was last published, CLOCK_REALTIME
	 * seconds (0: never); atomic, written by the queue's thread */
	int64_t hook_seen[QUEUE_HOOKS];
	/* main thread only */
	struct queue_counters base __attribute__((aligned(64)));

	/* The worker's: the memory a step of the look-ahead found that a
	 * later step or the judging will read, asked for together
	 * (bigmem_fetch()). Last: its 8 kB would part the fields above
	 * that every batch reads. */
	struct bigmem_wants wants;
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

/* A packet with id ID was read on an adopted socket: the orphans' batch
 * verdict goes in the ledger before the first one; ids up to the
 * adopted sequence are counted (they are not orphans). */
void queue_orphans_seen(struct queue *q, uint32_t id);

/*
 * The orphans of an adopted socket are expected: they get VERDICT (NF_*).
 * K is the kernel's line for the queue read just before the adoption's
 * config message, or NULL when it could not be read: then the orphans are
 * still answered, before the first packet read, but not counted.
 */
struct kqueue_line;
void queue_orphans_expect(struct queue *q, uint32_t verdict,
			  const struct kqueue_line *k);

/* The kernel acknowledged the adoption: every packet numbered up to the
 * adopted sequence has been read. If none was, the orphans' verdict
 * covers every id up to it. */
void queue_orphans_adopted(struct queue *q);

/* The kernel's answer ERR (0 or -ENOENT) to the orphans' message. */
void queue_orphans_answered(struct queue *q, int err);

/* Does SEQ lie in FIRST..LAST (wrapping; LAST 0: nothing awaited)? */
static inline bool queue_seq_in(uint32_t seq, uint32_t first, uint32_t last)
{
	return last && seq - first <= last - first;
}

/* How long an ACK may take before the message is sent again. */
#define QUEUE_RESEND_MS	100

/* Main thread, before a final stop: note the kernel's counters. */
void queue_conf_stop_begin(struct queue *q);


/* Unbind a stopped queue (unless keep_bound), counting what the kernel
 * flushed. */
void queue_conf_unbind(struct queue *q);

/* Judge the N datagrams in q->rx/q->msgs with POL, as a receive batch
 * does after recvmmsg (its verdicts wait in q->vb). */
void queue_judge_batch(struct queue *q, struct policy *pol, int n);

#endif
