/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * queue_conf.c - a queue's netlink configuration, off the packet path:
 * opening and binding its socket, adopting one a previous process left in
 * systemd's file descriptor store (and answering that process's
 * orphans), probing kernel flags, unbinding.
 *
 * Binding, copy mode and range, maxlen and flags always travel in one
 * NFQNL_MSG_CONFIG: the kernel binds first and applies the rest in the
 * same call, so no packet is ever queued with the defaults.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <urcu-qsbr.h>

#include "conf.h"
#include "log.h"
#include "queue.h"
#include "queue_int.h"
#include "stats.h"
#include "verdict.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* The most a config message waits for its ACK, sent again meanwhile:
 * a slow ACK (a receive buffer full of packets) is not a failure. */
#define ACK_TIMEOUT_MS	10000

/* ------------------------------------------------------------------ */
/* messages                                                            */

uint32_t queue_next_cfg_seq(struct queue *q)
{
	q->seq = (q->seq + 1) & ~VERDICT_SEQ_BIT;
	if (q->seq == 0)
		q->seq = 1;
	return q->seq;
}

/* Flags and mask go in one message: a second pair would override. */
static void put_flags(struct nlmsghdr *nlh, uint32_t flags, uint32_t mask)
{
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(mask));
}

struct nlmsghdr *queue_conf_msg(char *buf, uint16_t num,
				const struct queue_params *p, bool bind)
{
	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, num);

	if (bind)
		nfq_nlmsg_cfg_put_cmd(nlh, AF_UNSPEC, NFQNL_CFG_CMD_BIND);
	if (p->copy_range == 0)
		nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_META, 0);
	else
		nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET,
					 (int)p->copy_range);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, p->maxlen);
	put_flags(nlh, p->flags, MANAGED_FLAGS);
	return nlh;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 +
	       (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Send NLH with an ACK request and wait for the ACK, giving verdicts to
 * any packet that arrives meanwhile. Only while no worker runs. The
 * kernel sends an ACK without waiting (MSG_DONTWAIT): when the receive
 * buffer is full it is lost, so the message goes again, with the next
 * sequence number, every QUEUE_RESEND_MS until one is answered (*RESENT
 * then says the kernel may have applied an earlier copy).
 */
static int talk_resent(struct queue *q, struct nlmsghdr *nlh, bool *resent)
{
	struct timespec start, sent;

	nlh->nlmsg_flags |= NLM_F_ACK;
	q->acked = false;
	q->wait_first = q->wait_seq = 0;
	*resent = false;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!q->acked && ms_since(&start) < ACK_TIMEOUT_MS) {
		struct pollfd pfd = { .fd = q->fd, .events = POLLIN };

		if (!q->wait_seq || ms_since(&sent) >= QUEUE_RESEND_MS) {
			if (q->wait_seq && !*resent)
				log_info("queue %u: no ACK from the kernel in %d ms (lost when the receive buffer is full): config message sent again",
					 q->num, QUEUE_RESEND_MS);
			*resent = q->wait_seq != 0;
			nlh->nlmsg_seq = queue_next_cfg_seq(q);
			if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0) {
				q->wait_seq = 0;
				return -errno;
			}
			q->wait_seq = nlh->nlmsg_seq;
			if (!q->wait_first)
				q->wait_first = q->wait_seq;
			clock_gettime(CLOCK_MONOTONIC, &sent);
		}
		if (queue_receive_batch(q) == 0 &&
		    poll(&pfd, 1, QUEUE_RESEND_MS) < 0 && errno != EINTR) {
			q->wait_seq = 0;
			return -errno;
		}
	}
	q->wait_seq = 0;
	return q->acked ? q->ack_err : -ETIMEDOUT;
}

static int talk(struct queue *q, struct nlmsghdr *nlh)
{
	bool resent;

	return talk_resent(q, nlh, &resent);
}

/* Bind (when BIND) and configure Q with q->params, in one message. A
 * bind sent again answers EBUSY when the first copy bound the queue
 * (without applying its options): configure it then. */
static int configure(struct queue *q, bool bind)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	bool resent;
	int rc;

	rc = talk_resent(q, queue_conf_msg(buf, q->num, &q->params, bind),
			 &resent);
	if (rc == -EBUSY && bind && resent)
		rc = talk(q, queue_conf_msg(buf, q->num, &q->params, false));
	return rc;
}

static void log_conf_error(const struct queue *q, const char *what, int rc)
{
	if (rc == -EPERM)
		log_err(QUEUE_HELD_FMT, q->num, what, strerror(-rc));
	else
		log_err("queue %u: %s with copy-range %u, queue-maxlen %u, flags 0x%x failed (%s)",
			q->num, what, q->params.copy_range, q->params.maxlen,
			q->params.flags, strerror(-rc));
}

/* ------------------------------------------------------------------ */
/* sockets                                                             */

int queue_set_rcvbuf(struct queue *q, uint64_t rcvbuf)
{
	int size = rcvbuf > (uint64_t)INT32_MAX ? INT32_MAX : (int)rcvbuf;

	if (setsockopt(q->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size,
		       sizeof(size)) < 0) {
		int err = -errno;

		log_err("queue %u: SO_RCVBUFFORCE %d failed (%s): nfqd needs CAP_NET_ADMIN",
			q->num, size, strerror(-err));
		return err;
	}
	return 0;
}

static int setup_socket(struct queue *q, uint64_t rcvbuf)
{
	int one = 1;
	int rc = queue_set_rcvbuf(q, rcvbuf);

	if (rc < 0)
		return rc;
	/* Overruns are counted by the kernel (user_dropped); an ENOBUFS
	 * error on the socket would only interrupt the receive loop (and
	 * make systemd drop the socket from its store: POLLERR). */
	setsockopt(q->fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	setsockopt(q->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
}

static int open_socket(struct queue *q, uint64_t rcvbuf)
{
	int err;

	/* errno is saved before anything is logged: a failed log write
	 * sets it too. */
	q->nl = mnl_socket_open2(NETLINK_NETFILTER,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!q->nl) {
		err = -errno;
		log_err("queue %u: netlink socket failed (%s)", q->num,
			strerror(-err));
		return err;
	}
	q->fd = mnl_socket_get_fd(q->nl);
	if (mnl_socket_bind(q->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		log_err("queue %u: netlink bind failed (%s)", q->num,
			strerror(-err));
		return err;
	}
	return setup_socket(q, rcvbuf);
}

int queue_open(struct queue **out, const struct queue_place *at,
	       const struct conf_options *o, uint32_t kflags)
{
	struct queue *q;
	int rc;

	rc = queue_alloc(out, at, o);
	q = *out;
	if (rc < 0)
		return rc;
	queue_params_from_options(&q->params, o, kflags);
	q->main_params = q->params;
	rc = open_socket(q, o->rcvbuf);
	if (rc < 0)
		return rc;
	rc = configure(q, true);
	if (rc < 0) {
		log_conf_error(q, "bind", rc);
		return rc;
	}
	q->bound = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* adoption and orphans                                                */

static uint32_t orphan_nf_verdict(enum verdict_kind v)
{
	switch (v) {
	case VERDICT_ACCEPT:
		return NF_ACCEPT;
	case VERDICT_DROP:
		return NF_DROP;
	default:
		return NF_REPEAT;
	}
}

/* Orphans count in their own column only: packets, accepted, dropped
 * and other are about the packets this process received. */
static void orphans_counted(struct queue *q, uint32_t n)
{
	q->delta.orphans += n;
	if (n)
		log_info("queue %u: %u packets of the previous process given orphan-verdict",
			 q->num, n);
}

void queue_orphans_expect(struct queue *q, uint32_t verdict,
			  const struct kqueue_line *k)
{
	q->orphan_verdict = verdict;
	q->orphans_known = k != NULL;
	q->orphan_total = k ? k->queue_total : 0;
	q->orphan_seq = k ? k->id_sequence : 0;
	q->orphan_read = 0;
	q->orphans_queued = false;
	q->orphans_adopting = true;
	q->orphans_pending = true;
}

/* On the packet path: the ledger answers ids < the first one read
 * first, whatever the kernel seemed to hold (an id can be used up by a
 * failed delivery: no estimate from ids is safe). */
void queue_orphans_seen(struct queue *q, uint32_t id)
{
	struct decision d = { .verdict = q->orphan_verdict };

	if (!q->orphans_queued) {
		verdict_batch_add_orphans(&q->vb, &d);
		q->orphans_queued = true;
	}
	if (q->orphans_known && (int32_t)(q->orphan_seq - id) >= 0)
		q->orphan_read++;
	if (!q->orphans_adopting)
		q->orphans_pending = false;
}

void queue_orphans_adopted(struct queue *q)
{
	struct decision d = { .verdict = q->orphan_verdict };

	if (!q->orphans_pending)
		return;
	q->orphans_adopting = false;
	if (q->orphans_queued) {
		q->orphans_pending = false;
		return;
	}
	/* Nothing read: every packet the kernel held up to the adopted
	 * sequence is an orphan. Without that sequence (or behind a gap)
	 * the first packet read bounds them. */
	if (q->orphans_known &&
	    verdict_batch_add_orphans_upto(&q->vb, q->orphan_seq, &d) == 0) {
		q->orphans_queued = true;
		q->orphans_pending = false;
	}
}

/*
 * The kernel answered the orphans' batch verdict: ENOENT, it matched no
 * packet; 0, at least one: what the kernel held at adoption less what
 * this process read of it.
 */
void queue_orphans_answered(struct queue *q, int err)
{
	uint32_t n;

	if (err == -ENOENT) {
		log_debug("queue %u: no packet of the previous process was left",
			  q->num);
		return;
	}
	if (err) {
		q->delta.errors++;
		log_err("queue %u: the orphans' verdict was refused (%s)",
			q->num, strerror(-err));
		return;
	}
	if (!q->orphans_known) {
		log_info("queue %u: packets of the previous process given orphan-verdict (how many is unknown: /proc/net/netfilter/nfnetlink_queue was unreadable)",
			 q->num);
		return;
	}
	n = q->orphan_total > q->orphan_read ?
		q->orphan_total - q->orphan_read : 1;
	orphans_counted(q, n);
}

/*
 * The kernel's queue_total and id_sequence, read before the adoption's
 * config message: that message takes the queue's lock, so every packet
 * numbered up to id_sequence is in the socket before its ACK. A file
 * that cannot be read does not mean nothing is held.
 */
static void orphans_prepare(struct queue *q, enum verdict_kind v)
{
	struct kqueue_line k;
	int rc = stats_kernel_line(q->num, &k);

	if (rc < 0)
		log_warn("queue %u: cannot read /proc/net/netfilter/nfnetlink_queue (%s): the previous process's packets get orphan-verdict before the first packet read, and are not counted (mount /proc in nfqd's namespace to count them)",
			 q->num, strerror(-rc));
	queue_orphans_expect(q, orphan_nf_verdict(v), rc < 0 ? NULL : &k);
}

int queue_adopt(struct queue **out, int fd, const struct queue_place *at,
		const struct conf_options *o, uint32_t kflags)
{
	struct queue *q;
	int rc;

	rc = queue_alloc(out, at, o);
	q = *out;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	queue_params_from_options(&q->params, o, kflags);
	q->main_params = q->params;
	q->nl = mnl_socket_fdopen(fd);
	if (!q->nl) {
		rc = -errno;
		log_err("queue %u: stored socket unusable (%s)", at->num,
			strerror(-rc));
		close(fd);
		return rc;
	}
	q->fd = fd;
	q->adopted = true;
	/* Whoever made it, the worker's loop needs it non-blocking. */
	rc = fcntl(fd, F_GETFL);
	if (rc < 0 || fcntl(fd, F_SETFL, rc | O_NONBLOCK) < 0) {
		rc = -errno;
		log_err("queue %u: stored socket: cannot make it non-blocking (%s)",
			at->num, strerror(-rc));
		return rc;
	}
	rc = setup_socket(q, o->rcvbuf);
	if (rc < 0)
		return rc;
	orphans_prepare(q, o->orphan_verdict);
	rc = configure(q, false);
	if (rc == -ENODEV) {
		/* The socket no longer holds the queue: bind it anew. */
		q->orphans_pending = false;
		q->adopted = false;
		rc = configure(q, true);
	}
	if (rc < 0) {
		log_conf_error(q, q->adopted ? "adopt" : "bind", rc);
		return rc;
	}
	q->bound = true;
	queue_orphans_adopted(q);
	queue_counters_publish(q);
	log_info("queue %u: %s the socket stored by the previous process",
		 at->num, q->adopted ? "adopted" : "rebound");
	return 0;
}

/* ------------------------------------------------------------------ */
/* kernel flags                                                        */

/*
 * The kernel checks flags before it looks up the queue: a config message
 * with only FLAGS and MASK for a queue this socket does not hold answers
 * EOPNOTSUPP for a flag it lacks, and ENODEV or EPERM otherwise. No
 * queue is bound or changed. Before that, nfnetlink answers EPERM to
 * every message of a process without CAP_NET_ADMIN over the network
 * namespace: asked first, a flag no kernel has (EOPNOTSUPP once the
 * message gets through) tells that EPERM from a held queue's.
 */
#define KFLAG_NONE (1u << 31)

/* Ask about flag BIT of q->num: *ANSWER gets the kernel's (0 or a
 * negative errno). 0, or the socket's negative errno. */
static int ask_flag(struct queue *q, uint32_t bit, int *answer)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], ack[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->num);
	ssize_t n;

	put_flags(nlh, bit, bit);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = queue_next_cfg_seq(q);
	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(q->nl, ack, sizeof(ack));
	if (n < 0)
		return -errno;
	*answer = mnl_cb_run(ack, (size_t)n, nlh->nlmsg_seq, 0, NULL,
			     NULL) < 0 ? -errno : 0;
	return 0;
}

/* Which of the flags WANTED the kernel accepts for q->num, into *OUT. */
static int ask_flags(struct queue *q, uint32_t wanted, uint32_t *out)
{
	int rc, answer = 0;

	rc = ask_flag(q, KFLAG_NONE, &answer);
	if (rc == 0 && answer == -EPERM)
		return -EPERM;
	for (uint32_t bit = 1; bit && rc == 0; bit <<= 1) {
		if (!(wanted & bit))
			continue;
		rc = ask_flag(q, bit, &answer);
		if (rc == 0 && answer != -EOPNOTSUPP && answer != -EINVAL)
			*out |= bit;
		else if (rc == 0)
			log_debug("kernel: queue flag 0x%x not supported", bit);
	}
	return rc;
}

int queue_kflags_supported(uint32_t wanted, uint16_t num, uint32_t *out)
{
	struct queue q = { .num = num, .fd = -1 };
	int rc;

	*out = 0;
	q.nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!q.nl)
		return -errno;
	rc = mnl_socket_bind(q.nl, 0, MNL_SOCKET_AUTOPID) < 0 ? -errno : 0;
	if (rc == 0)
		rc = ask_flags(&q, wanted, out);
	mnl_socket_close(q.nl);
	return rc;
}

/* ------------------------------------------------------------------ */
/* unbinding                                                           */

void queue_conf_stop_begin(struct queue *q)
{
	struct kqueue_line k;

	q->stop_known = stats_kernel_line(q->num, &k) == 0;
	q->stop_qdropped = q->stop_known ? k.queue_dropped : 0;
}

/*
 * What a final stop did, from the kernel's counters just before the
 * unbind: the backlog judged, what arrived during the stop, and whether
 * the kernel's count of queued packets matches this process's. Packets
 * the rules send from now on meet no listener: dropped, or accepted
 * with --queue-bypass, and counted nowhere; so when the rules still
 * send packets (some arrived during the stop), priority 2.
 */
static void stop_report(const struct queue *q)
{
	struct kqueue_line k;
	uint32_t arrived;
	bool open = q->params.flags & NFQA_CFG_F_FAIL_OPEN;

	if (stats_kernel_line(q->num, &k) < 0) {
		log_warn("queue %u: stop: no kernel counters to report", q->num);
		return;
	}
	arrived = q->stop_known ? k.queue_dropped - q->stop_qdropped : 0;
	log_info("queue %u: stop: %llu queued packets judged, %u left in the kernel queue; kernel id_sequence %u, packets received by this process %llu (%s)",
		 q->num, (unsigned long long)q->stop_judged, k.queue_total,
		 k.id_sequence, (unsigned long long)q->live.packets,
		 q->adopted ? "adopted: the ids count earlier processes' packets too" :
			      "bound by this process: equal when nothing was lost");
	if (!q->closed)
		return;
	if (open && q->stop_judged)
		log_crit("queue %u: released: packets arriving during the stop were accepted by the kernel unjudged (fail-open yes; the kernel does not count them); from now on the rules' packets to this queue are dropped, or accepted with --queue-bypass",
			 q->num);
	else if (!open && (arrived || q->stop_judged))
		log_crit("queue %u: released: %u packets arriving during the stop were dropped by the kernel (queue_dropped, fail-open no); from now on the rules' packets to this queue are dropped, or accepted with --queue-bypass",
			 q->num, arrived);
}

void queue_conf_unbind(struct queue *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	bool resent;
	int rc;

	if (!q->bound)
		return;
	q->bound = false;
	/* The socket lives on in systemd's store: the next process adopts
	 * the queue and everything still queued. */
	if (q->keep_bound)
		return;
	/* The kernel drops what is still queued when it unbinds: every
	 * packet message read from here on is one of those. */
	q->unbinding = true;
	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->num);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_UNSPEC, NFQNL_CFG_CMD_UNBIND);
	stop_report(q);
	rc = talk_resent(q, nlh, &resent);
	if (rc == -ENODEV && resent)
		rc = 0;	/* the first copy unbound it; its ACK was lost */
	if (rc < 0)
		log_warn("queue %u: unbind failed (%s)", q->num, strerror(-rc));
	if (q->flushed)
		log_crit("queue %u: unbound; the kernel dropped %llu packets still queued",
			 q->num, (unsigned long long)q->flushed);
	queue_counters_publish(q);
}

/* ------------------------------------------------------------------ */
/* accessors for the daemon                                            */

int queue_fd(const struct queue *q)
{
	return q->fd;
}

bool queue_adopted(const struct queue *q)
{
	return q->adopted;
}

void queue_keep_bound(struct queue *q, bool keep)
{
	q->keep_bound = keep;
}
