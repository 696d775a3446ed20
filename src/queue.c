/*
 * queue.c - one NFQUEUE worker: socket set-up, the receive/judge/verdict
 * cycle, and the thread that runs it on its own libev loop.
 *
 * Per receive batch: recvmmsg up to `batch` messages, judge each packet
 * with the RCU-read policy, hand the decisions to the verdict batcher,
 * send every verdict message of the batch in one sendmsg, announce a
 * quiescent state. No lock is taken anywhere on this path.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ev.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <urcu-qsbr.h>

#include "conf.h"
#include "log.h"
#include "pkt.h"
#include "policy.h"
#include "queue.h"
#include "registry.h"
#include "verdict.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Room for the attributes that come with the payload (headers, marks,
 * interfaces, uid/gid, conntrack): generous, so nothing is truncated. */
#define RX_OVERHEAD	4096
#define ACK_TIMEOUT_MS	2000
#define BATCHES_PER_WAKE 64	/* then let the loop look at its async */
#define DRAIN_SECONDS	0.5	/* most time spent draining on stop */
#define SEND_RETRIES	100

/* What the worker applies to its queue; replaced whole on reconfigure. */
struct queue_params {
	uint32_t copy_range;
	uint32_t maxlen;
	uint32_t batch;
	uint32_t flags;		/* NFQA_CFG_F_* wanted */
};

#define MANAGED_FLAGS (NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO | \
		       NFQA_CFG_F_UID_GID | NFQA_CFG_F_CONNTRACK)

struct queue {
	uint16_t num;
	int cpu;
	unsigned slot;
	struct mnl_socket *nl;
	int fd;
	bool bound;		/* ours in the kernel: unbind on stop */
	uint32_t seq;
	struct queue_params params;

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
	bool unbinding;		/* packets now read were flushed by the kernel */
	uint64_t flushed;

	/* the worker */
	pthread_t thread;
	bool started;
	struct ev_loop *loop;
	ev_io io;
	ev_async wake;
	struct queue_params *pending;	/* from the main thread (xchg) */
	bool stopping;			/* set by the main thread */

	/* Written only by the thread that runs the queue (the worker, or
	 * the main thread before start / after join). */
	struct queue_counters delta;	/* this batch, not yet published */
	struct queue_counters live __attribute__((aligned(64)));
	/* main thread only */
	struct queue_counters base __attribute__((aligned(64)));
};

uint16_t queue_num(const struct queue *q)
{
	return q->num;
}

int queue_cpu(const struct queue *q)
{
	return q->cpu;
}

unsigned queue_slot(const struct queue *q)
{
	return q->slot;
}

/* ------------------------------------------------------------------ */
/* counters: one writer each, readers use relaxed loads                */

#define N_COUNTERS (sizeof(struct queue_counters) / sizeof(uint64_t))

static void counters_publish(struct queue *q)
{
	uint64_t *live = (uint64_t *)&q->live;
	uint64_t *delta = (uint64_t *)&q->delta;

	for (size_t i = 0; i < N_COUNTERS; i++) {
		if (!delta[i])
			continue;
		__atomic_store_n(&live[i], live[i] + delta[i],
				 __ATOMIC_RELAXED);
		delta[i] = 0;
	}
}

void queue_counters_read(const struct queue *q, struct queue_counters *out)
{
	const uint64_t *live = (const uint64_t *)&q->live;
	const uint64_t *base = (const uint64_t *)&q->base;
	uint64_t *o = (uint64_t *)out;

	for (size_t i = 0; i < N_COUNTERS; i++)
		o[i] = __atomic_load_n(&live[i], __ATOMIC_RELAXED) - base[i];
}

void queue_counters_reset(struct queue *q)
{
	const uint64_t *live = (const uint64_t *)&q->live;
	uint64_t *base = (uint64_t *)&q->base;

	for (size_t i = 0; i < N_COUNTERS; i++)
		base[i] = __atomic_load_n(&live[i], __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* buffers                                                             */

static void free_buffers(struct queue *q)
{
	free(q->msgs);
	free(q->iov);
	free(q->rx);
	verdict_batch_free(&q->vb);
	q->msgs = NULL;
	q->iov = NULL;
	q->rx = NULL;
}

static int alloc_buffers(struct queue *q, const struct queue_params *p)
{
	size_t each = NLMSG_ALIGN(p->copy_range) + RX_OVERHEAD;

	q->msgs = calloc(p->batch, sizeof(*q->msgs));
	q->iov = calloc(p->batch, sizeof(*q->iov));
	q->rx = malloc(each * p->batch);
	if (!q->msgs || !q->iov || !q->rx ||
	    verdict_batch_init(&q->vb, q->num, p->batch) < 0) {
		free_buffers(q);
		return -ENOMEM;
	}
	q->rx_each = each;
	for (uint32_t i = 0; i < p->batch; i++) {
		q->iov[i].iov_base = q->rx + i * each;
		q->iov[i].iov_len = each;
		q->msgs[i].msg_hdr.msg_iov = &q->iov[i];
		q->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the receive / judge / verdict cycle                                 */

static void send_verdicts(struct queue *q)
{
	size_t len = verdict_batch_finish(&q->vb, 0);

	for (int tries = 0; len > 0; tries++) {
		if (mnl_socket_sendto(q->nl, q->vb.buf, len) >= 0) {
			q->delta.batches++;
			break;
		}
		if (errno == ENOBUFS || errno == ENOMEM || errno == EAGAIN)
			q->delta.enobufs++;
		else if (errno != EINTR)
			q->delta.errors++;
		if (tries == SEND_RETRIES) {
			/* The packets stay queued in the kernel until the
			 * queue is unbound; say so loudly. */
			log_err("queue %u: verdict send failed (%s): %u messages lost",
				q->num, strerror(errno), q->vb.n_msgs);
			break;
		}
		if (errno != EINTR)
			sched_yield();
	}
	verdict_batch_reset(&q->vb);
}

static void count_verdict(struct queue *q, uint32_t verdict)
{
	switch (verdict & NF_VERDICT_MASK) {
	case NF_ACCEPT:
		q->delta.accepted++;
		break;
	case NF_DROP:
		q->delta.dropped++;
		break;
	default:
		q->delta.other++;
	}
}

static void judge(struct queue *q, struct policy *pol, const struct pkt *p)
{
	struct decision d = { .verdict = NF_ACCEPT };

	if (pol)
		policy_judge(pol, p, q->slot, &d);
	q->delta.packets++;
	q->delta.bytes += p->orig_len;
	count_verdict(q, d.verdict);
	if (verdict_batch_full(&q->vb))
		send_verdicts(q);
	verdict_batch_add(&q->vb, p->id, &d);
}

static void handle_error_msg(struct queue *q, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*e)) {
		q->delta.errors++;
		return;
	}
	if (q->wait_seq && nlh->nlmsg_seq == q->wait_seq) {
		q->acked = true;
		q->ack_err = e->error;
		return;
	}
	if (e->error == 0)
		return;
	if (q->reconf_seq && nlh->nlmsg_seq == q->reconf_seq) {
		log_err("queue %u: reconfigure failed (%s)", q->num,
			strerror(-e->error));
		return;
	}
	/* A verdict the kernel refused (e.g. ENOENT: the packet is gone). */
	q->delta.errors++;
	log_debug("queue %u: verdict refused (%s)", q->num,
		  strerror(-e->error));
}

static void handle_msg(struct queue *q, struct policy *pol,
		       const struct nlmsghdr *nlh)
{
	struct pkt p;

	if (nlh->nlmsg_type == NLMSG_ERROR) {
		handle_error_msg(q, nlh);
		return;
	}
	if (nlh->nlmsg_type < NLMSG_MIN_TYPE)
		return;
	if (q->unbinding) {
		q->flushed++;
		return;
	}
	switch (pkt_parse_msg(nlh, nlh->nlmsg_len, &p)) {
	case PKT_OK:
		judge(q, pol, &p);
		break;
	case PKT_BAD_WITH_ID:
		/* Still queued in the kernel: it must get a verdict, or a
		 * later batch verdict would decide it blindly. */
		q->delta.errors++;
		judge(q, pol, &p);
		break;
	case PKT_NOT_PACKET:
	case PKT_BAD:
		q->delta.errors++;
		break;
	}
}

static void handle_datagram(struct queue *q, struct policy *pol, char *buf,
			    size_t len, bool truncated)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	int rem = (int)len;

	if (truncated) {
		/* Parse what arrived: the id is in the first attribute. */
		q->delta.errors++;
		if (len >= NLMSG_HDRLEN && nlh->nlmsg_len > len)
			nlh->nlmsg_len = (uint32_t)len;
	}
	while (mnl_nlmsg_ok(nlh, rem)) {
		handle_msg(q, pol, nlh);
		nlh = mnl_nlmsg_next(nlh, &rem);
	}
	if (rem > 0 && !truncated)
		q->delta.errors++;
}

/*
 * One receive batch. Returns the number of datagrams read (0: nothing
 * waiting), or a negative errno for a receive error.
 */
static int receive_batch(struct queue *q)
{
	struct policy *pol;
	int n;

	n = recvmmsg(q->fd, q->msgs, q->params.batch, MSG_DONTWAIT, NULL);
	if (n < 0) {
		int err = errno;

		if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR)
			return 0;
		if (err == ENOBUFS)
			q->delta.enobufs++;
		else
			q->delta.errors++;
		counters_publish(q);
		return -err;
	}
	rcu_read_lock();
	pol = registry_policy();
	for (int i = 0; i < n; i++)
		handle_datagram(q, pol, q->rx + (size_t)i * q->rx_each,
				q->msgs[i].msg_len,
				q->msgs[i].msg_hdr.msg_flags & MSG_TRUNC);
	send_verdicts(q);
	rcu_read_unlock();
	counters_publish(q);
	return n;
}

/* ------------------------------------------------------------------ */
/* configuration messages                                              */

/* Send NLH with an ACK request and wait for the ACK, giving verdicts to
 * any packet that arrives meanwhile. Only while no worker runs. */
static int talk(struct queue *q, struct nlmsghdr *nlh)
{
	struct timespec start, now;

	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++q->seq;
	q->wait_seq = nlh->nlmsg_seq;
	q->acked = false;
	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!q->acked) {
		struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (now.tv_sec - start.tv_sec) * 1000 +
		     (now.tv_nsec - start.tv_nsec) / 1000000;
		if (ms >= ACK_TIMEOUT_MS)
			break;
		if (poll(&pfd, 1, (int)(ACK_TIMEOUT_MS - ms)) < 0 &&
		    errno != EINTR)
			return -errno;
		receive_batch(q);
	}
	q->wait_seq = 0;
	return q->acked ? q->ack_err : -ETIMEDOUT;
}

static struct nlmsghdr *cfg_msg(char *buf, uint16_t num)
{
	return nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, num);
}

static void put_params(struct nlmsghdr *nlh, const struct queue_params *p)
{
	if (p->copy_range == 0)
		nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_META, 0);
	else
		nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET,
					 (int)p->copy_range);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, p->maxlen);
}

/* Flags and mask go in one message: a second pair would override. */
static void put_flags(struct nlmsghdr *nlh, uint32_t flags, uint32_t mask)
{
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(mask));
}

static int send_cmd(struct queue *q, uint8_t cmd)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = cfg_msg(buf, q->num);

	nfq_nlmsg_cfg_put_cmd(nlh, AF_UNSPEC, cmd);
	return talk(q, nlh);
}

/* Send q->params.flags (all the flags nfqd manages) and wait. */
static int send_flags(struct queue *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = cfg_msg(buf, q->num);
	int rc;

	put_flags(nlh, q->params.flags, MANAGED_FLAGS);
	rc = talk(q, nlh);
	if (rc < 0)
		log_err("queue %u: kernel refused queue flags 0x%x (%s)",
			q->num, q->params.flags, strerror(-rc));
	return rc;
}

static int configure(struct queue *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = cfg_msg(buf, q->num);
	int rc;

	put_params(nlh, &q->params);
	rc = talk(q, nlh);
	if (rc < 0) {
		log_err("queue %u: setting copy-range %u / queue-maxlen %u failed (%s)",
			q->num, q->params.copy_range, q->params.maxlen,
			strerror(-rc));
		return rc;
	}
	return send_flags(q);
}

int queue_probe_flags(struct queue *q, uint32_t flags)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = cfg_msg(buf, q->num);
	int rc;

	put_flags(nlh, flags, flags);
	rc = talk(q, nlh);
	if (rc == 0) {
		nlh = cfg_msg(buf, q->num);
		put_flags(nlh, q->params.flags & flags, flags);
		rc = talk(q, nlh);
	}
	return rc;
}

int queue_set_kernel_flags(struct queue *q, uint32_t kflags)
{
	uint32_t optional = NFQA_CFG_F_UID_GID | NFQA_CFG_F_CONNTRACK;

	q->params.flags = (q->params.flags & ~optional) | (kflags & optional);
	return send_flags(q);
}

static void params_from_options(struct queue_params *p,
				const struct conf_options *o, uint32_t kflags)
{
	p->copy_range = o->copy_range;
	p->maxlen = o->queue_maxlen;
	p->batch = o->batch;
	p->flags = kflags & (NFQA_CFG_F_UID_GID | NFQA_CFG_F_CONNTRACK);
	if (o->fail_open)
		p->flags |= NFQA_CFG_F_FAIL_OPEN;
	if (o->gso)
		p->flags |= NFQA_CFG_F_GSO;
}

static int open_socket(struct queue *q, uint64_t rcvbuf)
{
	int one = 1;
	int size = rcvbuf > (uint64_t)INT32_MAX ? INT32_MAX : (int)rcvbuf;

	q->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!q->nl) {
		log_err("queue %u: netlink socket failed (%s)", q->num,
			strerror(errno));
		return -errno;
	}
	q->fd = mnl_socket_get_fd(q->nl);
	if (mnl_socket_bind(q->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		log_err("queue %u: netlink bind failed (%s)", q->num,
			strerror(errno));
		return -errno;
	}
	if (setsockopt(q->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size,
		       sizeof(size)) < 0) {
		log_err("queue %u: SO_RCVBUFFORCE %d failed (%s): nfqd needs CAP_NET_ADMIN",
			q->num, size, strerror(errno));
		return -errno;
	}
	/* Overruns are counted by the kernel (user_dropped); an ENOBUFS
	 * error on the socket would only interrupt the receive loop. */
	setsockopt(q->fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	setsockopt(q->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
}

int queue_open(struct queue **out, uint16_t num, int cpu, unsigned slot,
	       const struct conf_options *o)
{
	struct queue *q;
	int rc;

	if (posix_memalign((void **)&q, 64, sizeof(*q)) != 0)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	q->num = num;
	q->cpu = cpu;
	q->slot = slot;
	q->fd = -1;
	params_from_options(&q->params, o, 0);
	*out = q;
	rc = alloc_buffers(q, &q->params);
	if (rc < 0)
		return rc;
	rc = open_socket(q, o->rcvbuf);
	if (rc < 0)
		return rc;
	rc = send_cmd(q, NFQNL_CFG_CMD_BIND);
	if (rc == -EPERM) {
		log_err("queue %u: bind failed: already bound by another process (%s)",
			num, strerror(-rc));
		return rc;
	}
	if (rc < 0) {
		log_err("queue %u: bind failed (%s)", num, strerror(-rc));
		return rc;
	}
	q->bound = true;
	return configure(q);
}

/* ------------------------------------------------------------------ */
/* the worker thread                                                   */

static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct queue *q = w->data;

	for (int i = 0; i < BATCHES_PER_WAKE; i++) {
		int n = receive_batch(q);

		rcu_quiescent_state();
		/* A full batch: more is likely waiting. ENOBUFS: the socket
		 * overran, the next receive goes on. Anything else: back to
		 * the loop. */
		if (n != (int)q->params.batch && n != -ENOBUFS)
			break;
	}
}

/* Receive and verdict what the socket holds, for a bounded time. */
static void drain(struct queue *q)
{
	ev_tstamp end = ev_time() + DRAIN_SECONDS;

	while (ev_time() < end) {
		int n = receive_batch(q);

		rcu_quiescent_state();
		if (n == 0)
			break;
	}
}

static void apply_params(struct queue *q, struct queue_params *np)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	if (np->batch != q->params.batch ||
	    np->copy_range != q->params.copy_range) {
		free_buffers(q);
		if (alloc_buffers(q, np) < 0) {
			/* Keep going with the old sizes. */
			log_err("queue %u: reconfigure: out of memory", q->num);
			np->batch = q->params.batch;
			np->copy_range = q->params.copy_range;
			if (alloc_buffers(q, np) < 0)
				abort();
		}
	}
	q->params = *np;
	/* The ACK comes back through the receive path (handle_error_msg). */
	nlh = cfg_msg(buf, q->num);
	put_params(nlh, np);
	put_flags(nlh, np->flags, MANAGED_FLAGS);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = q->reconf_seq = ++q->seq;
	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0)
		log_err("queue %u: reconfigure failed (%s)", q->num,
			strerror(errno));
	free(np);
}

static void on_wake(struct ev_loop *loop, ev_async *w, int revents)
{
	struct queue *q = w->data;
	struct queue_params *np;

	np = __atomic_exchange_n(&q->pending, NULL, __ATOMIC_ACQ_REL);
	if (np)
		apply_params(q, np);
	if (__atomic_load_n(&q->stopping, __ATOMIC_ACQUIRE)) {
		ev_io_stop(loop, &q->io);
		drain(q);
		ev_break(loop, EVBREAK_ALL);
	}
}

/* A worker is offline for RCU while it sleeps in the loop, so a grace
 * period never waits for an idle queue. */
static void loop_release(struct ev_loop *loop)
{
	rcu_thread_offline();
}

static void loop_acquire(struct ev_loop *loop)
{
	rcu_thread_online();
}

static void *worker_main(void *arg)
{
	struct queue *q = arg;

	rcu_register_thread();
	ev_run(q->loop, 0);
	counters_publish(q);
	rcu_unregister_thread();
	return NULL;
}

int queue_start(struct queue *q)
{
	pthread_attr_t attr;
	char name[16];
	int rc;

	q->loop = ev_loop_new(EVFLAG_AUTO | EVFLAG_NOSIGMASK);
	if (!q->loop)
		return -ENOMEM;
	ev_set_loop_release_cb(q->loop, loop_release, loop_acquire);
	ev_io_init(&q->io, on_readable, q->fd, EV_READ);
	q->io.data = q;
	ev_io_start(q->loop, &q->io);
	ev_async_init(&q->wake, on_wake);
	q->wake.data = q;
	ev_async_start(q->loop, &q->wake);

	pthread_attr_init(&attr);
	if (q->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(q->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	rc = pthread_create(&q->thread, &attr, worker_main, q);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		log_err("queue %u: cannot start worker on CPU %d (%s)",
			q->num, q->cpu, strerror(rc));
		return -rc;
	}
	/* Named by the creator, so the name is there once start returns. */
	snprintf(name, sizeof(name), "nfqd-q%u", q->num);
	pthread_setname_np(q->thread, name);
	q->started = true;
	log_debug("queue %u: worker started on CPU %d", q->num, q->cpu);
	return 0;
}

void queue_reconfigure(struct queue *q, const struct conf_options *o,
		       uint32_t kflags)
{
	struct queue_params np, *p, *old;

	params_from_options(&np, o, kflags);
	if (memcmp(&np, &q->params, sizeof(np)) == 0 || !q->started)
		return;
	p = malloc(sizeof(*p));
	if (!p) {
		log_err("queue %u: reconfigure: out of memory", q->num);
		return;
	}
	*p = np;
	old = __atomic_exchange_n(&q->pending, p, __ATOMIC_ACQ_REL);
	free(old);
	ev_async_send(q->loop, &q->wake);
}

void queue_request_stop(struct queue *q)
{
	if (!q->started)
		return;
	__atomic_store_n(&q->stopping, true, __ATOMIC_RELEASE);
	ev_async_send(q->loop, &q->wake);
}

void queue_stop(struct queue *q)
{
	int rc;

	if (q->started) {
		queue_request_stop(q);
		pthread_join(q->thread, NULL);
		q->started = false;
	}
	if (!q->bound)
		return;
	/* The kernel drops what is still queued when it unbinds: every
	 * packet message read from here on is one of those. */
	q->unbinding = true;
	rc = send_cmd(q, NFQNL_CFG_CMD_UNBIND);
	if (rc < 0)
		log_warn("queue %u: unbind failed (%s)", q->num, strerror(-rc));
	if (q->flushed)
		log_info("queue %u: unbound; the kernel dropped %llu packets still queued",
			 q->num, (unsigned long long)q->flushed);
	q->bound = false;
	counters_publish(q);
}

void queue_free(struct queue *q)
{
	if (!q)
		return;
	free(__atomic_exchange_n(&q->pending, NULL, __ATOMIC_ACQ_REL));
	if (q->loop)
		ev_loop_destroy(q->loop);
	if (q->nl)
		mnl_socket_close(q->nl);
	free_buffers(q);
	free(q);
}
