/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * queue.h - one NFQUEUE worker: its netlink socket, its thread pinned to a
 * CPU, its own libev loop, buffers and counters. Nothing in here is shared
 * with another worker; the main thread only reads the counters.
 */
#ifndef NFQD_QUEUE_H
#define NFQD_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netfilter/nfnetlink_queue.h>

struct conf_options;
struct policy;
struct queue;
struct registry_root;
struct verdict_batch;

/* nfqd's own per-queue counters (stats file columns 10-17, 19-25). */
struct queue_counters {
	uint64_t packets;	/* packets received */
	uint64_t bytes;		/* original packet lengths */
	uint64_t accepted;
	uint64_t dropped;
	uint64_t other;		/* repeat, queue N */
	uint64_t batches;	/* verdict sendmsg calls */
	uint64_t enobufs;
	uint64_t errors;
	uint64_t incomplete;	/* given incomplete-verdict */
	uint64_t orphans;	/* a previous process's, given orphan-verdict */
	/* The flow table for names (flow.h); the last two are gauges,
	 * which "counters reset" leaves alone. */
	uint64_t flow_evictions;	/* live flows pushed out by new ones */
	uint64_t names;			/* names found */
	uint64_t names_incomplete;	/* names that could not be found */
	uint64_t flows;			/* gauge: flows in the table */
	uint64_t flows_pending;		/* gauge: flows gathering bytes */
};

/*
 * Where a queue sits: its number, the CPU its worker is pinned to (-1:
 * none), its worker slot (for per-worker policy counters), and the root
 * whose current policy it judges with (must outlive the queue; NULL:
 * every packet accepted, for tests).
 */
struct queue_place {
	uint16_t num;
	int cpu;
	unsigned slot;
	const struct registry_root *root;
};

/* What the kernel's EPERM to a bind or an adoption (WHAT) of queue NUM
 * says, in the log and in a reload's errors, and what to do: printf
 * format of NUM, WHAT and strerror(EPERM). */
#define QUEUE_HELD_FMT \
	"queue %u: %s failed: already bound by another process (%s): stop " \
	"that process (another nfqd?) or take the queue out of \"queues\""

/*
 * Open a netlink socket and bind queue AT->num configured from O with the
 * optional kernel flags KFLAGS (NFQA_CFG_F_UID_GID, _CONNTRACK), all in
 * one config message (queue_conf.c). Logs the reason and returns a
 * negative errno on failure (-EPERM: queue bound by another process or no
 * CAP_NET_ADMIN). Does not start the thread.
 */
int queue_open(struct queue **out, const struct queue_place *at,
	       const struct conf_options *o, uint32_t kflags);

/*
 * As queue_open(), but with FD, a netlink socket a previous process bound
 * the queue with (systemd's fd store): reconfigure the binding it holds
 * (or bind anew if it holds none). The packets the previous process read
 * and never answered get O's orphan-verdict with one batch verdict
 * before the first verdict of this process. FD is Q's (closed with it)
 * from the call on, even on failure.
 */
int queue_adopt(struct queue **out, int fd, const struct queue_place *at,
		const struct conf_options *o, uint32_t kflags);

/* Kernel flags a policy may ask for; probed once at start (and by
 * nfqd -t), with a config message that binds nothing. */
#define QUEUE_OPTIONAL_KFLAGS (NFQA_CFG_F_UID_GID | NFQA_CFG_F_CONNTRACK)

/*
 * Which of the NFQA_CFG_F_* bits WANTED this kernel accepts, asked on a
 * socket of its own about queue NUM without binding or changing it. 0
 * with *OUT set, or a negative errno: -EPERM when the kernel refuses to
 * be asked (no CAP_NET_ADMIN over this network namespace).
 */
int queue_kflags_supported(uint32_t wanted, uint16_t num, uint32_t *out);

/*
 * The part of queue_open() that needs no kernel: allocate the queue with
 * its buffers, verdict ledger and log ring, and no socket. *OUT is set
 * whenever something was allocated (free it with queue_free()). 0 or
 * -ENOMEM. For queue_open() and the unit tests of the receive path.
 */
int queue_alloc(struct queue **out, const struct queue_place *at,
		const struct conf_options *o);

/*
 * The receive path for one datagram of LEN bytes as recvmmsg returned it
 * (TRUNCATED: MSG_TRUNC was set): judge its packets with POL into the
 * verdict ledger and publish the counters. Sends nothing. The thread
 * that runs the queue (or a unit test).
 */
void queue_rx_datagram(struct queue *q, struct policy *pol, char *buf,
		       size_t len, bool truncated);

/* The queue's verdict ledger (the thread that runs the queue). */
struct verdict_batch *queue_verdicts(struct queue *q);

/* Start the worker thread. 0 or negative errno. */
int queue_start(struct queue *q);

/*
 * Ask the worker to apply new options (queue-maxlen, copy-range, flags,
 * batch); it does so between two batches and sends them to the kernel.
 * Returns true if that was needed (the options differ from the last ones
 * asked for and the worker runs): then queue_reconfigure_result() tells
 * when the kernel has answered. Main thread only.
 */
bool queue_reconfigure(struct queue *q, const struct conf_options *o,
		       uint32_t kflags);

/*
 * The kernel's answer to the last queue_reconfigure() that returned true:
 * 1 while awaited, 0 acknowledged (packets queued from now on carry what
 * the new flags add), or the negative errno it (or the send) failed with.
 * Main thread only.
 */
int queue_reconfigure_result(const struct queue *q);

/* Give the queue's socket a receive buffer of RCVBUF bytes (at open, and
 * from the main thread at a reload: the worker keeps running). Logs the
 * reason and returns a negative errno on failure. */
int queue_set_rcvbuf(struct queue *q, uint64_t rcvbuf);

/* Ask the worker to stop without waiting (see queue_stop()). */
void queue_request_stop(struct queue *q);

/*
 * Stop the worker: it stops reading new work after draining what its
 * socket already holds, gives every received packet its verdict, and
 * exits; then the queue is unbound. With queue_keep_bound() it neither
 * drains nor unbinds: what is queued waits for the process that adopts
 * the socket. Blocks until done. Main thread only.
 */
void queue_stop(struct queue *q);

/* Free a stopped (or never started) queue, closing its socket. */
void queue_free(struct queue *q);

/* Stop without unbinding: the socket outlives the process (fd store). */
void queue_keep_bound(struct queue *q, bool keep);

/*
 * For the watchdog: has the worker completed a batch since the last
 * call, or is it waiting in its loop (or not started)? Main thread only;
 * the worker only stores two words, no lock.
 */
bool queue_progressed(struct queue *q);

int queue_fd(const struct queue *q);	/* the netlink socket */
bool queue_adopted(const struct queue *q);	/* came from the fd store */
uint16_t queue_num(const struct queue *q);
int queue_cpu(const struct queue *q);	/* -1 if not pinned */
/* Pin the worker to CPU, or (-1) let it run on every CPU the calling
 * thread may use. Main thread; 0 or -errno (the worker stays). */
int queue_set_cpu(struct queue *q, int cpu);
unsigned queue_slot(const struct queue *q);

/* Netfilter hooks a queue tells apart (NF_INET_PRE_ROUTING .. POST_ROUTING). */
#define QUEUE_HOOKS	5

/* When a packet of HOOK last came through Q: CLOCK_REALTIME seconds,
 * 0 if none has since Q started. Any thread. */
int64_t queue_hook_last_seen(const struct queue *q, unsigned hook);

/* Counters since start or the last queue_counters_reset(). Any thread. */
void queue_counters_read(const struct queue *q, struct queue_counters *out);

/* Zero what queue_counters_read() reports (a baseline; workers keep
 * sole ownership of the live counters). Main thread only. */
void queue_counters_reset(struct queue *q);

#endif
