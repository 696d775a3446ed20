/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * queue.c - one NFQUEUE worker: the receive/judge/verdict cycle and the
 * thread that runs it on its own libev loop (binding and the other
 * netlink configuration: queue_conf.c).
 *
 * Per receive batch: recvmmsg up to `batch` messages, judge each packet
 * with the RCU-read policy, hand the decisions to the verdict batcher,
 * send every verdict message of the batch in one sendmsg, announce a
 * quiescent state. No lock is taken anywhere on this path.
 */
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <urcu-qsbr.h>

#include "bigmem.h"
#include "conf.h"
#include "ifcache.h"
#include "flow.h"
#include "log.h"
#include "pkt.h"
#include "policy.h"
#include "queue.h"
#include "queue_int.h"
#include "registry.h"
#include "verdict.h"

/* Room for the attributes that come with the payload (headers, marks,
 * interfaces, uid/gid, conntrack): generous, so nothing is truncated. */
#define RX_OVERHEAD	4096
/* One more cache line a receive slot. Slots of a power-of-two size start
 * on the same L1 set (8 KB apart: every 64th line of the cache, with 64
 * sets), so the lines of a batch's messages evicted one another between
 * the kernel writing them and the look-ahead reading them; a line more
 * puts slot i's start on set i. */
#define RX_COLOR	64
#define BATCHES_PER_WAKE 64	/* then let the loop look at its async */
#define CLOSE_SECONDS	30	/* most time a final stop judges the backlog */
#define PENDING_BATCHES	16	/* ledger bound, in receive batches */
#define PENDING_MIN	1024
#define RETRY_FIRST	0.001	/* seconds to the first resend */
#define RETRY_MAX	0.1
#define WAIT_MS		20	/* longest wait for packets in recvmmsg */

uint16_t queue_num(const struct queue *q)
{
	return q->num;
}

int queue_cpu(const struct queue *q)
{
	return q->cpu;
}

int queue_set_cpu(struct queue *q, int cpu)
{
	cpu_set_t set;
	int rc;

	if (cpu == q->cpu)
		return 0;
	CPU_ZERO(&set);
	if (cpu >= 0)
		CPU_SET(cpu, &set);
	else if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	if (q->started) {
		rc = pthread_setaffinity_np(q->thread, sizeof(set), &set);
		if (rc != 0)
			return -rc;
	}
	q->cpu = cpu;
	return 0;
}

unsigned queue_slot(const struct queue *q)
{
	return q->slot;
}

/* ------------------------------------------------------------------ */
/* counters: one writer each, readers use relaxed loads                */

#define N_COUNTERS (sizeof(struct queue_counters) / sizeof(uint64_t))

/* The hooks this batch saw, stamped with a coarse clock (once a batch). */
static void hooks_publish(struct queue *q)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	for (unsigned h = 0; h < QUEUE_HOOKS; h++)
		if (q->hooks_delta & (1u << h))
			__atomic_store_n(&q->hook_seen[h], (int64_t)ts.tv_sec,
					 __ATOMIC_RELAXED);
	q->hooks_delta = 0;
}

int64_t queue_hook_last_seen(const struct queue *q, unsigned hook)
{
	if (hook >= QUEUE_HOOKS)
		return 0;
	return __atomic_load_n(&q->hook_seen[hook], __ATOMIC_RELAXED);
}

/* The flow table's counters into the delta (gauges as a difference). */
static void flows_delta(struct queue *q)
{
	const struct flow_counters *c;
	struct queue_counters *s = &q->flows_seen;

	if (!q->flows)
		return;
	c = flowtab_counters(q->flows);
	q->delta.flow_evictions += c->evictions - s->flow_evictions;
	q->delta.names += c->names - s->names;
	q->delta.names_incomplete += c->incomplete - s->names_incomplete;
	q->delta.flows += c->flows - s->flows;
	q->delta.flows_pending += c->pending - s->flows_pending;
	s->flow_evictions = c->evictions;
	s->names = c->names;
	s->names_incomplete = c->incomplete;
	s->flows = c->flows;
	s->flows_pending = c->pending;
}

/* Names matched again after packets went by unfollowed: the table is
 * made anew on the next packet; the flows it held lose their state
 * (INCOMPLETE). */
static void flows_drop(struct queue *q)
{
	struct queue_counters *s = &q->flows_seen;

	if (!q->flows)
		return;
	flows_delta(q);
	q->delta.flows -= s->flows;
	q->delta.flows_pending -= s->flows_pending;
	memset(s, 0, sizeof(*s));
	flowtab_free(q->flows);
	q->flows = NULL;
	log_info("queue %u: flow table for names made anew (a policy with names after one without)",
		 q->num);
}

/* A reload's flow-table-size NP->flow_size: the flows move to a table
 * of that size (the least recently seen of a full bucket evicted). No
 * memory for it: the old table stays, and says so. */
static void flows_resize(struct queue *q, const struct queue_params *np)
{
	struct flowtab *t;
	size_t n;

	if (!q->flows)
		return;
	t = flowtab_new(np->flow_size, np->flow_timeout, np->dns_ports,
			np->n_dns_ports);
	if (!t) {
		log_err("queue %u: reconfigure: out of memory for flow-table-size %u: the flow table keeps its size",
			q->num, np->flow_size);
		return;
	}
	n = flowtab_move(t, q->flows);
	q->flows = t;
	log_info("queue %u: flow table resized to %u flows, %zu evicted",
		 q->num, np->flow_size, n);
}

/* Gauges: "counters reset" does not apply. */
static bool is_gauge(size_t i)
{
	return i == offsetof(struct queue_counters, flows) / sizeof(uint64_t) ||
	       i == offsetof(struct queue_counters, flows_pending) /
			    sizeof(uint64_t);
}

void queue_counters_publish(struct queue *q)
{
	uint64_t *live = (uint64_t *)&q->live;
	uint64_t *delta = (uint64_t *)&q->delta;

	if (q->hooks_delta)
		hooks_publish(q);

	flows_delta(q);
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
		o[i] = __atomic_load_n(&live[i], __ATOMIC_RELAXED) -
		       (is_gauge(i) ? 0 : base[i]);
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

static void free_rx(struct queue *q)
{
	bigmem_free(q->rx_mem, q->rx_mem_len);
	q->rx_mem = NULL;
	q->rx_mem_len = 0;
	q->msgs = NULL;
	q->iov = NULL;
	q->rx = NULL;
	q->ahead = NULL;
	q->ahead_names = NULL;
}

/* Bytes of one receive slot for copy range RANGE. */
static size_t rx_size(uint32_t range)
{
	return NLMSG_ALIGN(range) + RX_OVERHEAD + RX_COLOR;
}

/* Bytes of N elements of SIZE, to the next cache line. */
static size_t lines(size_t n, size_t size)
{
	return (n * size + 63) / 64 * 64;
}

/* The bytes of alloc_rx()'s buffers for BATCH slots of EACH bytes, and
 * a cache line to align them with where the memory is not. */
static size_t rx_bytes(uint32_t batch, size_t each)
{
	return lines(batch, sizeof(struct mmsghdr)) +
	       lines(batch, sizeof(struct iovec)) +
	       lines(batch, sizeof(struct rx_ahead)) +
	       lines(batch, sizeof(struct rx_name)) + batch * each + 64;
}

/*
 * Receive buffers for P's batch, with slots of at least MIN_EACH bytes
 * (and what P's copy range needs), and the look-ahead's, in one mapping
 * of whole huge pages (bigmem.h). A slot is more than a small page, so
 * on small pages every packet message cost a TLB miss where the kernel
 * wrote it and another where nfqd read it, and a page-table walk is
 * slow in a virtual machine: on one huge page nfqd drained TCP segments
 * 2-3% faster (docs/performance.md). It costs up to 2 MB a queue where
 * the buffers need less.
 */
static int alloc_rx(struct queue *q, const struct queue_params *p,
		    size_t min_each)
{
	size_t each = rx_size(p->copy_range), len, used;
	uintptr_t at;
	char *m;

	if (each < min_each)
		each = min_each;
	used = rx_bytes(p->batch, each);
	len = (used + BIGMEM_HUGE - 1) / BIGMEM_HUGE * BIGMEM_HUGE;
	m = bigmem_alloc(len);
	if (!m)
		return -ENOMEM;
	bigmem_prefault(m, used);
	q->rx_mem = m;
	q->rx_mem_len = len;
	at = ((uintptr_t)m + 63) / 64 * 64;	/* malloc memory (ASan) */
	q->msgs = (struct mmsghdr *)at;
	at += lines(p->batch, sizeof(*q->msgs));
	q->iov = (struct iovec *)at;
	at += lines(p->batch, sizeof(*q->iov));
	q->ahead = (struct rx_ahead *)at;
	at += lines(p->batch, sizeof(*q->ahead));
	q->ahead_names = (struct rx_name *)at;
	at += lines(p->batch, sizeof(*q->ahead_names));
	q->rx = (char *)at;
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
/* sending verdicts                                                    */

static int sock_send(void *ctx, const void *buf, size_t len)
{
	struct queue *q = ctx;

	return mnl_socket_sendto(q->nl, buf, len) < 0 ? -errno : 0;
}

/* Most ledger entries before the worker stops receiving. */
static unsigned pending_max(const struct queue *q)
{
	unsigned n = q->params.batch * PENDING_BATCHES;

	return n < PENDING_MIN ? PENDING_MIN : n;
}

static void resume_receiving(struct queue *q)
{
	if (!q->paused)
		return;
	q->paused = false;
	ev_io_start(q->loop, &q->io);
	log_info("queue %u: verdicts delivered: receiving again", q->num);
}

/* The ledger is full: let the kernel hold new packets until it drains
 * (the kernel queue's limit and fail-open then apply). */
static void pause_receiving(struct queue *q)
{
	if (q->paused || !q->in_worker)
		return;
	q->paused = true;
	ev_io_stop(q->loop, &q->io);
	log_warn("queue %u: %u verdicts not delivered: receiving paused",
		 q->num, verdict_batch_pending(&q->vb));
}

static void send_failed(struct queue *q, int err)
{
	if (!q->send_failing)
		log_err("queue %u: verdict send failed (%s): %u verdicts kept for resending",
			q->num, strerror(-err), verdict_batch_pending(&q->vb));
	q->send_failing = true;
	if (!q->in_worker || ev_is_active(&q->retry))
		return;
	q->retry_delay = q->retry_delay ? q->retry_delay * 2 : RETRY_FIRST;
	if (q->retry_delay > RETRY_MAX)
		q->retry_delay = RETRY_MAX;
	ev_timer_set(&q->retry, q->retry_delay, 0.);
	ev_timer_start(q->loop, &q->retry);
}

/*
 * Deliver every verdict the ledger holds. A failure keeps them there; the
 * retry timer, or the next batch, sends them first.
 */
static int send_verdicts(struct queue *q)
{
	struct verdict_flush_stats st = { 0 };
	int rc;

	rc = verdict_batch_flush(&q->vb, sock_send, q, &st);
	q->delta.batches += st.sends;
	q->delta.enobufs += st.transient;
	q->delta.errors += st.errors;
	if (rc < 0) {
		send_failed(q, rc);
		return rc;
	}
	if (q->send_failing) {
		q->send_failing = false;
		q->retry_delay = 0;
		log_info("queue %u: verdicts sent again", q->num);
	}
	if (q->in_worker)
		ev_timer_stop(q->loop, &q->retry);
	resume_receiving(q);
	return 0;
}

static void on_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
	send_verdicts(w->data);
	queue_counters_publish(w->data);
}

/* ------------------------------------------------------------------ */
/* the receive / judge cycle                                           */

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

/* Count packet ID's decision and put it in the ledger. */
static void decide(struct queue *q, uint32_t id, uint32_t len,
		   const struct decision *d)
{
	/* Once per adopted socket: the previous process's unanswered
	 * packets are the ones older than the first we read. */
	if (__builtin_expect(q->orphans_pending, 0))
		queue_orphans_seen(q, id);
	q->delta.packets++;
	q->delta.bytes += len;
	count_verdict(q, d->verdict);
	verdict_batch_add(&q->vb, id, d);
}

/* This worker's flow table, made (and its pages faulted in) on first
 * need: at the worker's start when the policy has names, else at the
 * first packet judged under a policy that has. */
static void flows_make(struct queue *q)
{
	if (!q->flows)
		q->flows = flowtab_new(q->params.flow_size,
				       q->params.flow_timeout,
				       q->params.dns_ports,
				       q->params.n_dns_ports);
}

/* The packet's names from this worker's flow table (flow.h); a flow
 * dropped on its name stays dropped. */
static void *flow_of(struct queue *q, struct pkt *p,
		     const struct flow_ahead *ahead, struct pkt_names *n,
		     enum flow_fate *fate)
{
	*fate = FLOW_JUDGE;
	flows_make(q);
	if (!q->flows)
		return NULL;	/* p->names NULL: names INCOMPLETE */
	p->names = n;
	return flow_names(q->flows, p, q->rx_ns, ahead, n, fate);
}

/* Before judging the datagrams received now under POL: their time
 * (flow_of(): flows' idle times, which the coarse clock gives in 4 ms
 * steps anyway), and whether POL matches names (asked once, not per
 * packet). */
static void rx_start(struct queue *q, const struct policy *pol)
{
	bool had_names = q->rx_names, first = q->rx_serial == 0;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	q->rx_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	q->rx_names = policy_has_names(pol);
	if (policy_serial(pol) == q->rx_serial)
		return;
	q->rx_serial = policy_serial(pol);
	/* A reload. Under a policy without name matches the flows were not
	 * followed: a flow the table holds may have sent its first bytes
	 * meanwhile, unseen, and would wait for them for ever. When names
	 * come back, the flows held count as lost (INCOMPLETE), never as
	 * pending. Else a flow dropped on a name the old policy listed is
	 * judged by the new one (nfqd.conf(5) NAMES). */
	if (q->rx_names && !had_names && !first)
		flows_drop(q);
	else if (q->flows)
		flowtab_forget_drops(q->flows);
}

/* The probes the look-ahead made (A, and AN its rx_name) of the name it
 * guessed, if N, P's names, has that very name (a flow's own name, or a
 * guess that was wrong, is not: its lookups make their own). */
static void probes_of(struct pkt *p, const struct pkt_names *n,
		      const struct rx_ahead *a, const struct rx_name *an)
{
	p->probes = NULL;
	if (a->probed && n->state == PKT_PRESENT &&
	    n->proto == a->probed_proto && n->n.len == a->name->len &&
	    !memcmp(n->n.name, a->name->name, n->n.len))
		p->probes = &an->probes;
}

/* A: what names_ahead() learnt of P, or NULL. */
static void judge(struct queue *q, struct policy *pol, struct pkt *p,
		  const struct rx_ahead *a)
{
	struct decision d = { .verdict = NF_ACCEPT };
	struct pkt_names names;
	enum flow_fate fate = FLOW_JUDGE;
	void *fl = NULL;

	if (q->rx_names) {
		fl = flow_of(q, p, a ? &a->fa : NULL, &names, &fate);
		if (a && p->names)
			probes_of(p, &names, a, &q->ahead_names[a - q->ahead]);
		if (p->names && (names.state == PKT_PRESENT ||
				 p->l4proto == IPPROTO_TCP))
			q->ahead_want = true;
	}
	if (fate == FLOW_DROP) {
		d.verdict = NF_DROP;
		d.sticky = true;
	} else if (fate == FLOW_PASS) {
		d.verdict = NF_ACCEPT;
	} else if (pol) {
		policy_judge(pol, p, q->slot, &d);
	}
	if (fl && d.sticky && d.verdict == NF_DROP)
		flow_note_drop(fl);
	if (p->hook < QUEUE_HOOKS)
		q->hooks_delta |= 1u << p->hook;
	q->delta.incomplete += d.incomplete;
	decide(q, p->id, p->orig_len, &d);
}

static struct decision incomplete_decision(const struct policy *pol)
{
	struct decision d = {
		.verdict = policy_incomplete_verdict(pol),
		.incomplete = true,
	};

	return d;
}

/* A packet nfqd cannot read whole (truncated, malformed): no rule may
 * judge it on what survived; it gets incomplete-verdict. */
static void judge_incomplete(struct queue *q, const struct policy *pol,
			     uint32_t id, uint32_t len)
{
	struct decision d = incomplete_decision(pol);

	q->delta.errors++;
	q->delta.incomplete++;
	decide(q, id, len, &d);
}

/* A packet message without a readable id: the kernel still holds the
 * packet; it gets incomplete-verdict by a batch verdict ending below the
 * next id (verdict.h). */
static void judge_unknown(struct queue *q, const struct policy *pol)
{
	struct decision d = incomplete_decision(pol);

	q->delta.errors++;
	q->delta.incomplete++;
	q->delta.packets++;
	count_verdict(q, d.verdict);
	verdict_batch_add_gap(&q->vb, &d);
}

static void reconf_report(struct queue *q, int err)
{
	__atomic_store_n(&q->reconf_err, err, __ATOMIC_RELAXED);
	__atomic_store_n(&q->reconf_done, q->reconf_req, __ATOMIC_RELEASE);
	q->reconf_seq = 0;
	if (q->in_worker)
		ev_timer_stop(q->loop, &q->reconf_resend);
}

static void handle_error_msg(struct queue *q, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*e)) {
		q->delta.errors++;
		return;
	}
	if (nlh->nlmsg_seq == VERDICT_SEQ_ORPHANS) {
		queue_orphans_answered(q, e->error);
		return;
	}
	if (verdict_seq_is_verdict(nlh->nlmsg_seq)) {
		/* A verdict the kernel refused (ENOENT: the packet is
		 * gone, e.g. flushed when its device went down). */
		if (e->error) {
			q->delta.errors++;
			log_debug("queue %u: verdict refused (%s)", q->num,
				  strerror(-e->error));
		}
		return;
	}
	if (queue_seq_in(nlh->nlmsg_seq, q->wait_first, q->wait_seq)) {
		q->acked = true;
		q->ack_err = e->error;
		return;
	}
	if (queue_seq_in(nlh->nlmsg_seq, q->reconf_first, q->reconf_seq)) {
		if (e->error)
			log_err("queue %u: reconfigure failed (%s)", q->num,
				strerror(-e->error));
		reconf_report(q, e->error);
		return;
	}
	if (e->error) {
		q->delta.errors++;
		log_debug("queue %u: error %s for message %u", q->num,
			  strerror(-e->error), nlh->nlmsg_seq);
	}
}

/* A: the message parsed ahead (names_ahead()), or NULL. */
static void handle_msg(struct queue *q, struct policy *pol,
		       const struct nlmsghdr *nlh, struct rx_ahead *a)
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
	if (a && a->parsed) {
		judge(q, pol, &a->p, a);
		return;
	}
	switch (pkt_parse_msg(nlh, nlh->nlmsg_len, q->params.flags, &p)) {
	case PKT_OK:
		judge(q, pol, &p, NULL);
		break;
	case PKT_BAD_WITH_ID:
		judge_incomplete(q, pol, p.id, p.orig_len);
		break;
	case PKT_BAD:
		judge_unknown(q, pol);
		break;
	case PKT_NOT_PACKET:
		q->delta.errors++;
		break;
	}
}

/* A message cut short (MSG_TRUNC, or longer than its datagram): only its
 * id is trusted. */
static void handle_cut(struct queue *q, struct policy *pol,
		       struct nlmsghdr *nlh, size_t len)
{
	struct pkt p;

	if (len < NLMSG_HDRLEN) {
		judge_unknown(q, pol);
		return;
	}
	if (nlh->nlmsg_type == NLMSG_ERROR || nlh->nlmsg_type < NLMSG_MIN_TYPE) {
		q->delta.errors++;
		return;
	}
	if (q->unbinding) {
		q->flushed++;
		return;
	}
	if (nlh->nlmsg_len > len)
		nlh->nlmsg_len = (uint32_t)len;
	switch (pkt_parse_msg(nlh, nlh->nlmsg_len, q->params.flags, &p)) {
	case PKT_OK:
	case PKT_BAD_WITH_ID:
		judge_incomplete(q, pol, p.id, p.orig_len);
		break;
	case PKT_BAD:
		judge_unknown(q, pol);
		break;
	case PKT_NOT_PACKET:
		q->delta.errors++;
		break;
	}
}

/* mnl_nlmsg_ok(), inline: a library call, twice a packet. */
static inline bool msg_ok(const struct nlmsghdr *nlh, int len)
{
	return len >= (int)sizeof(*nlh) && nlh->nlmsg_len >= sizeof(*nlh) &&
	       (int)nlh->nlmsg_len <= len;
}

static void handle_datagram(struct queue *q, struct policy *pol, char *buf,
			    size_t len, bool truncated, struct rx_ahead *a)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	int rem = (int)len;

	/* The kernel sends one packet per datagram: a truncated datagram
	 * is one packet message, cut. */
	if (truncated) {
		handle_cut(q, pol, nlh, len);
		return;
	}
	while (msg_ok(nlh, rem)) {
		handle_msg(q, pol, nlh, a);
		a = NULL;	/* it was of the first message */
		/* The datagram's last message (the kernel's one): no calls
		 * to step past it and find nothing. */
		if (MNL_ALIGN(nlh->nlmsg_len) >= (uint32_t)rem)
			return;
		nlh = mnl_nlmsg_next(nlh, &rem);
	}
	if (rem > 0)
		handle_cut(q, pol, nlh, (size_t)rem);
}

void queue_rx_datagram(struct queue *q, struct policy *pol, char *buf,
		       size_t len, bool truncated)
{
	rx_start(q, pol);
	handle_datagram(q, pol, buf, len, truncated, NULL);
	queue_counters_publish(q);
}

struct verdict_batch *queue_verdicts(struct queue *q)
{
	return &q->vb;
}

/* Receive into the buffers: recvmmsg with FLAGS. A wait (no
 * MSG_DONTWAIT) is spent offline for RCU, so a grace period never waits
 * for it. */
static int receive(struct queue *q, unsigned room, int flags)
{
	int n;

	if (flags & MSG_DONTWAIT)
		return recvmmsg(q->fd, q->msgs, room, flags, NULL);
	rcu_thread_offline();
	n = recvmmsg(q->fd, q->msgs, room, flags, NULL);
	rcu_thread_online();
	return n;
}

/* Parse datagram I's packet message (if it is one, whole) into its
 * q->ahead slot with what it alone shows of its names, and note in
 * q->wants the memory its flow's lookup and the lookups of the name it
 * shows will read first. True if it shows a name (the steps after this
 * one have something to do). */
static bool names_prefetch(struct queue *q, const struct policy *pol,
			   int i)
{
	const struct nlmsghdr *nlh =
		(const struct nlmsghdr *)(q->rx + (size_t)i * q->rx_each);
	struct rx_ahead *a = &q->ahead[i];
	struct rx_name *an = &q->ahead_names[i];
	const struct pkt_names *n = &a->fa.names;

	a->parsed = false;
	if ((q->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) ||
	    !msg_ok(nlh, (int)q->msgs[i].msg_len) ||
	    nlh->nlmsg_type < NLMSG_MIN_TYPE ||
	    pkt_parse_msg(nlh, nlh->nlmsg_len, q->params.flags, &a->p) !=
		    PKT_OK)
		return false;
	a->parsed = true;
	a->probed = false;
	flow_ahead(q->flows, &a->p, &a->fa, &q->wants);
	if (n->state == PKT_PRESENT && n->n.len) {
		a->name = &n->n;
		a->probed_proto = n->proto;
	} else if (i > 0 && q->ahead[i - 1].parsed &&
		   q->ahead[i - 1].fa.more &&	/* no call for most */
		   flow_ahead_pair(q->flows, &q->ahead[i - 1].p,
				   &q->ahead[i - 1].fa, &a->p, &a->fa,
				   &an->pair)) {
		a->name = &an->pair;
		a->probed_proto = NP_TLS;
	} else {
		return false;
	}
	domset_probes(a->name->name, a->name->len, &an->probes);
	a->probed = an->probes.n > 0;
	policy_prefetch_name(pol, a->probed_proto, &an->probes,
			     DOM_AHEAD_FILTER, &q->wants);
	return a->probed;
}

/* Datagram I's next step of its name's lookups (domset_prefetch()),
 * into q->wants: the memory the step before asked for is at hand now. */
static void probes_prefetch(struct queue *q, const struct policy *pol,
			    int i, enum dom_ahead step)
{
	const struct rx_ahead *a = &q->ahead[i];

	if (a->parsed && a->probed)
		policy_prefetch_name(pol, a->probed_proto,
				     &q->ahead_names[i].probes, step,
				     &q->wants);
}

/* Datagram I's second step, its flow's bucket now at hand: ask for the
 * flow's own line. Datagram I - 1's step came first (flows_ahead()). */
static inline void flow_prefetch(struct queue *q, int i)
{
	const struct rx_ahead *prev = i > 0 ? &q->ahead[i - 1] : NULL;

	if (q->ahead[i].parsed)
		flow_ahead_line(q->flows, &q->ahead[i].p, &q->ahead[i].fa,
				prev && prev->parsed ? &prev->fa : NULL,
				q->rx_ns);
}

/*
 * Before judging datagrams FROM to TO (AHEAD_CHUNK of a receive batch:
 * all of it with the default batch option): the lookups of a name take a
 * cache miss or more each (a million-name set is far larger than the
 * caches), and waiting for them one packet after the other is most of
 * what names cost. So every datagram of the chunk is parsed first, the
 * probes made of the name it shows (alone, or a ClientHello it ends that
 * the datagram before began: flow_ahead_pair()) and the filter words of
 * its lookups asked for; then, the filter words at hand, the table slots
 * the filter lets through are asked for, and then the names those slots
 * point to: each step's misses overlap across the chunk instead of
 * adding up. Each step first notes the addresses of the whole chunk,
 * then asks for them back to back (bigmem_fetch(): a miss here is a
 * page-table walk too, and walks overlap only when the prefetches that
 * start them are close together). A chunk, not the whole batch: what
 * was asked for must still be in the cache when its packet is judged,
 * and the batch option allows 1024. Each datagram is parsed so once,
 * before it is judged (handle_msg() takes the parse): nothing is parsed
 * twice.
 */
static void names_ahead(struct queue *q, const struct policy *pol, int from,
			int to)
{
	int named = 0;

	for (int k = from; k < to; k++)
		named += names_prefetch(q, pol, k);
	bigmem_fetch(&q->wants);
	if (!named)
		return;		/* no name: no lookup to prepare */
	for (int k = from; k < to; k++)
		probes_prefetch(q, pol, k, DOM_AHEAD_SLOTS);
	bigmem_fetch(&q->wants);
	for (int k = from; k < to; k++)
		probes_prefetch(q, pol, k, DOM_AHEAD_NAMES);
	bigmem_fetch(&q->wants);
}

/*
 * Before judging datagram I of the chunk FROM to TO: ask for the line of
 * datagram I + FLOW_AHEAD's flow, whose bucket names_ahead() asked for.
 * Not earlier: the line a new flow takes depends on the flows made by the
 * packets judged before it.
 */
#define AHEAD_CHUNK 64
static void flows_ahead(struct queue *q, int i, int from, int to)
{
	if (i == from)
		for (int k = from; k < from + FLOW_AHEAD && k < to; k++)
			flow_prefetch(q, k);
	if (i + FLOW_AHEAD < to)
		flow_prefetch(q, i + FLOW_AHEAD);
}

/* The look-ahead only after a batch that had a name or a TCP segment
 * (struct queue, ahead_skip): over name-less UDP it cost about 9 ns a
 * packet (parsing into q->ahead instead of the stack, its passes over
 * the batch) and saved nothing. */
void queue_judge_batch(struct queue *q, struct policy *pol, int n)
{
	bool ahead;

	rx_start(q, pol);
	ahead = q->flows && q->rx_names && !q->ahead_skip;
	q->ahead_want = false;
	for (int i = 0, from = 0, to = 0; i < n; i++) {
		if (ahead && i == to) {
			from = i;
			to = i + AHEAD_CHUNK < n ? i + AHEAD_CHUNK : n;
			names_ahead(q, pol, from, to);
		}
		if (ahead)
			flows_ahead(q, i, from, to);
		handle_datagram(q, pol, q->rx + (size_t)i * q->rx_each,
				q->msgs[i].msg_len,
				q->msgs[i].msg_hdr.msg_flags & MSG_TRUNC,
				ahead ? &q->ahead[i] : NULL);
	}
	q->ahead_skip = !q->ahead_want;
}

/*
 * One receive batch, read with FLAGS. Returns the number of datagrams read
 * (0: nothing waiting, or no room in the ledger), or a negative errno for
 * a receive error.
 */
static int receive_batch(struct queue *q, int flags)
{
	unsigned room = 0, max = pending_max(q), pending;
	struct policy *pol;
	int n;

	pending = verdict_batch_pending(&q->vb);
	if (pending < max)
		room = max - pending < q->params.batch ? max - pending :
							 q->params.batch;
	if (room == 0) {
		pause_receiving(q);
		return 0;
	}
	n = receive(q, room, flags);
	if (n < 0) {
		int err = errno;

		if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR)
			return 0;
		if (err == ENOBUFS)
			q->delta.enobufs++;
		else
			q->delta.errors++;
		queue_counters_publish(q);
		return -err;
	}
	/* Names are checked against link changes made before these. */
	ifcache_batch_begin();
	rcu_read_lock();
	pol = q->root ? registry_policy(q->root) : NULL;
	queue_judge_batch(q, pol, n);
	rcu_read_unlock();
	send_verdicts(q);
	queue_counters_publish(q);
	return n;
}

int queue_receive_batch(struct queue *q)
{
	return receive_batch(q, MSG_DONTWAIT);
}

/* ------------------------------------------------------------------ */
/* allocation                                                          */

void queue_params_from_options(struct queue_params *p,
				 const struct conf_options *o,
				 uint32_t kflags)
{
	p->copy_range = o->copy_range;
	p->maxlen = o->queue_maxlen;
	p->batch = o->batch;
	p->flags = kflags & (NFQA_CFG_F_UID_GID | NFQA_CFG_F_CONNTRACK);
	if (o->fail_open)
		p->flags |= NFQA_CFG_F_FAIL_OPEN;
	if (o->gso)
		p->flags |= NFQA_CFG_F_GSO;
	p->flow_size = o->flow_table_size;
	p->flow_timeout = o->flow_timeout;
	memcpy(p->dns_ports, o->dns_ports, sizeof(p->dns_ports));
	p->n_dns_ports = o->n_dns_ports;
}

int queue_alloc(struct queue **out, const struct queue_place *at,
		const struct conf_options *o)
{
	char name[32];
	struct queue *q;

	*out = NULL;
	if (posix_memalign((void **)&q, 64, sizeof(*q)) != 0)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	*out = q;
	q->root = at->root;
	q->num = at->num;
	q->cpu = at->cpu;
	q->slot = at->slot;
	q->fd = -1;
	queue_params_from_options(&q->params, o, 0);
	q->main_params = q->params;
	snprintf(name, sizeof(name), "queue %u", at->num);
	q->log = log_ring_new(name);
	if (!q->log || alloc_rx(q, &q->params, 0) < 0 ||
	    verdict_batch_init(&q->vb, q->num, q->params.batch) < 0)
		return -ENOMEM;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the worker thread                                                   */

/*
 * May the worker wait for packets in recvmmsg rather than in its loop?
 * Not while the loop has work: a reload or a stop to take (async), or
 * verdicts to resend (the retry timer); not while receiving is paused.
 */
static bool may_wait(struct queue *q)
{
	return q->in_worker && !q->paused && !q->send_failing &&
	       !q->unbinding &&
	       !__atomic_load_n(&q->pending, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&q->stopping, __ATOMIC_ACQUIRE);
}

static void batch_done(struct queue *q)
{
	rcu_quiescent_state();
	__atomic_store_n(&q->progress, q->progress + 1, __ATOMIC_RELAXED);
}

/*
 * Read until the socket is empty; then wait for the next packets in
 * recvmmsg itself, as the no-work floor does, not in the loop's
 * epoll_wait: one system call less per wake-up, which is most of what a
 * lightly loaded queue adds to a packet's way (a system call costs about
 * a microsecond on the virtual machines nfqd was measured on). The wait
 * ends after WAIT_MS (SO_RCVTIMEO, set by queue_start), so a reload or a
 * stop waits at most that long for the loop, and a worker stuck in the
 * kernel stops making progress for the watchdog.
 */
static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct queue *q = w->data;
	int flags = MSG_DONTWAIT;

	for (int i = 0; i < BATCHES_PER_WAKE; i++) {
		int n = receive_batch(q, flags);

		batch_done(q);
		/* A full batch: more is likely waiting. ENOBUFS: the socket
		 * overran, the next receive goes on. */
		if (n == (int)q->params.batch || n == -ENOBUFS)
			flags = MSG_DONTWAIT;
		else if (n < 0 || (n == 0 && flags != MSG_DONTWAIT) ||
			 !may_wait(q))
			break;
		else
			flags = MSG_WAITFORONE;
	}
}

/* The socket as on_readable() wants it: blocking, so that recvmmsg can
 * wait (every other receive says MSG_DONTWAIT), for WAIT_MS at most. */
static int set_wait(struct queue *q)
{
	struct timeval tv = { .tv_usec = WAIT_MS * 1000 };
	int fl = fcntl(q->fd, F_GETFL);

	if (fl < 0 || fcntl(q->fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    setsockopt(q->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

/* Deliver the verdicts of every packet read. The last sends may have
 * failed: a few more tries; what is left is the kernel's (dropped when
 * the queue is unbound, or an orphan for the next process). */
static void answer_read(struct queue *q)
{
	for (int i = 0; i < 10 && verdict_batch_pending(&q->vb); i++)
		send_verdicts(q);
	if (verdict_batch_pending(&q->vb))
		log_err("queue %u: stopping with %u verdicts not delivered",
			q->num, verdict_batch_pending(&q->vb));
}

/* Send queue-maxlen 0 (the flags as they are: fail-open decides what
 * the kernel does with new packets) with a fresh sequence number. */
static int send_close(struct queue *q)
{
	struct queue_params p = q->params;
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	p.maxlen = 0;
	nlh = queue_conf_msg(buf, q->num, &p, false);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = q->wait_seq = queue_next_cfg_seq(q);
	if (!q->wait_first)
		q->wait_first = q->wait_seq;
	return mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0 ? -errno : 0;
}

/* Wait (at most 10 ms) for the socket to become readable. */
static void wait_readable(const struct queue *q)
{
	struct pollfd pfd = { .fd = q->fd, .events = POLLIN };

	rcu_thread_offline();
	poll(&pfd, 1, 10);
	rcu_thread_online();
}

/*
 * A final stop loses nothing the kernel queued: first queue-maxlen 0, so
 * that nothing more is queued (new packets are accepted by the kernel
 * with fail-open, dropped and counted in queue_dropped without), judging
 * what arrives meanwhile; once the kernel acknowledged it, every packet
 * still queued is in the socket or in the ledger: read and judge until
 * the socket is empty. The message is sent again while its ACK is
 * missing (lost when the receive buffer was full).
 */
static void stop_final(struct queue *q)
{
	ev_tstamp end = ev_time() + CLOSE_SECONDS, sent = 0;
	uint64_t before = q->live.packets;
	int rc = 0;

	q->acked = false;
	q->wait_first = q->wait_seq = 0;
	while (!q->acked && ev_time() < end && rc == 0) {
		if (ev_time() - sent >= QUEUE_RESEND_MS / 1000.) {
			rc = send_close(q);
			sent = ev_time();
		}
		if (queue_receive_batch(q) == 0)
			wait_readable(q);
		rcu_quiescent_state();
	}
	q->wait_seq = 0;
	q->closed = q->acked && q->ack_err == 0;
	if (!q->closed)
		log_err("queue %u: stop: the kernel did not take queue-maxlen 0 (%s): packets arriving now may be flushed at the unbind",
			q->num, strerror(rc ? -rc : q->acked ? -q->ack_err : ETIMEDOUT));
	while (ev_time() < end) {
		int n = queue_receive_batch(q);

		rcu_quiescent_state();
		if (n > 0)
			continue;
		if (!verdict_batch_pending(&q->vb))
			break;
		send_verdicts(q);
	}
	answer_read(q);
	q->stop_judged = q->live.packets - before;
}

/*
 * Receive and verdict buffers sized for NP; on failure the old ones stay
 * and -ENOMEM is returned. The slots never get smaller: packets the
 * kernel queued before a lower copy range took effect wait in the socket
 * with their old copy, and must not be cut (incomplete-verdict) by the
 * buffer; and a packet message built just before the change may even
 * arrive after the kernel acknowledged it.
 */
static int resize_buffers(struct queue *q, const struct queue_params *np)
{
	struct queue old = *q;	/* for its buffers' fields alone */

	if (np->batch == q->params.batch &&
	    rx_size(np->copy_range) <= q->rx_each)
		return 0;
	if (alloc_rx(q, np, old.rx_each) < 0)
		goto fail;
	if (verdict_batch_set_max(&q->vb, np->batch) < 0) {
		free_rx(q);
		goto fail;
	}
	free_rx(&old);
	return 0;
fail:
	q->rx_mem = old.rx_mem;
	q->rx_mem_len = old.rx_mem_len;
	q->msgs = old.msgs;
	q->iov = old.iov;
	q->rx = old.rx;
	q->ahead = old.ahead;
	q->ahead_names = old.ahead_names;
	q->rx_each = old.rx_each;
	return -ENOMEM;
}

/* Send the worker's params as a reconfigure, with the next sequence
 * number; the ACK comes back through the receive path
 * (handle_error_msg), which reports it to the main thread. Until then
 * the timer sends it again: a full receive buffer loses ACKs. */
static void send_reconf(struct queue *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	nlh = queue_conf_msg(buf, q->num, &q->params, false);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = q->reconf_seq = queue_next_cfg_seq(q);
	if (!q->reconf_first)
		q->reconf_first = q->reconf_seq;
	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0) {
		int err = -errno;

		log_err("queue %u: reconfigure failed (%s)", q->num,
			strerror(-err));
		reconf_report(q, err);
		return;
	}
	if (q->in_worker)
		ev_timer_again(q->loop, &q->reconf_resend);
}

static void on_reconf_resend(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct queue *q = w->data;

	if (!q->reconf_seq)
		return;
	if (q->reconf_seq == q->reconf_first)
		log_info("queue %u: no ACK from the kernel in %d ms (lost when the receive buffer is full): reconfigure sent again",
			 q->num, QUEUE_RESEND_MS);
	send_reconf(q);
}

static void apply_params(struct queue *q, struct reconf *rq)
{
	struct queue_params *np = &rq->p;

	/* Out of memory: the reload fails (the main thread waits for this
	 * answer) and this queue keeps its old options. */
	if ((np->batch != q->params.batch ||
	     np->copy_range != q->params.copy_range) &&
	    resize_buffers(q, np) < 0) {
		log_err("queue %u: reconfigure: out of memory for batch %u / copy-range %u",
			q->num, np->batch, np->copy_range);
		q->reconf_req = rq->req;
		reconf_report(q, -ENOMEM);
		free(rq);
		return;
	}
	/* The flows stay, with their names and streams. */
	if (np->flow_size != q->params.flow_size)
		flows_resize(q, np);
	if (q->flows) {
		flowtab_set_timeout(q->flows, np->flow_timeout);
		flowtab_set_dns_ports(q->flows, np->dns_ports,
				      np->n_dns_ports);
	}
	q->params = *np;
	q->reconf_req = rq->req;
	q->reconf_first = 0;
	free(rq);
	send_reconf(q);
}

static void on_wake(struct ev_loop *loop, ev_async *w, int revents)
{
	struct queue *q = w->data;
	struct reconf *rq;

	rq = __atomic_exchange_n(&q->pending, NULL, __ATOMIC_ACQ_REL);
	if (rq)
		apply_params(q, rq);
	if (__atomic_load_n(&q->stopping, __ATOMIC_ACQUIRE)) {
		ev_io_stop(loop, &q->io);
		ev_timer_stop(loop, &q->retry);
		ev_timer_stop(loop, &q->reconf_resend);
		if (q->keep_bound)
			answer_read(q);
		else
			stop_final(q);
		ev_break(loop, EVBREAK_ALL);
	}
}

/* A worker is offline for RCU while it sleeps in the loop, so a grace
 * period never waits for an idle queue; and idle for the watchdog. */
static void loop_release(struct ev_loop *loop)
{
	struct queue *q = ev_userdata(loop);

	rcu_thread_offline();
	__atomic_store_n(&q->idle, true, __ATOMIC_RELAXED);
}

static void loop_acquire(struct ev_loop *loop)
{
	struct queue *q = ev_userdata(loop);

	__atomic_store_n(&q->idle, false, __ATOMIC_RELAXED);
	rcu_thread_online();
}

static void *worker_main(void *arg)
{
	struct queue *q = arg;

	rcu_register_thread();
	/* From here on this thread's log lines go through its ring: no
	 * write(2) on the packet path. */
	log_ring_attach(q->log);
	ifcache_worker_start();
	q->in_worker = true;
	rcu_read_lock();
	if (q->root && policy_has_names(registry_policy(q->root)))
		flows_make(q);
	rcu_read_unlock();
	if (verdict_batch_pending(&q->vb))
		send_verdicts(q);
	ev_run(q->loop, 0);
	q->in_worker = false;
	queue_counters_publish(q);
	ifcache_worker_stop();
	log_ring_attach(NULL);
	rcu_unregister_thread();
	return NULL;
}

int queue_start(struct queue *q)
{
	pthread_attr_t attr;
	char name[16];
	int rc;

	rc = set_wait(q);
	if (rc < 0) {
		log_err("queue %u: cannot make the socket wait (%s)", q->num,
			strerror(-rc));
		return rc;
	}
	q->loop = ev_loop_new(EVFLAG_AUTO | EVFLAG_NOSIGMASK);
	if (!q->loop)
		return -ENOMEM;
	ev_set_userdata(q->loop, q);
	ev_set_loop_release_cb(q->loop, loop_release, loop_acquire);
	ev_io_init(&q->io, on_readable, q->fd, EV_READ);
	q->io.data = q;
	ev_io_start(q->loop, &q->io);
	ev_async_init(&q->wake, on_wake);
	q->wake.data = q;
	ev_async_start(q->loop, &q->wake);
	ev_timer_init(&q->retry, on_retry, RETRY_FIRST, 0.);
	q->retry.data = q;
	ev_timer_init(&q->reconf_resend, on_reconf_resend, 0.,
		      QUEUE_RESEND_MS / 1000.);
	q->reconf_resend.data = q;

	pthread_attr_init(&attr);
	if (q->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(q->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	/* Idle for the watchdog until its loop says otherwise. */
	q->idle = true;
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

bool queue_reconfigure(struct queue *q, const struct conf_options *o,
		       uint32_t kflags)
{
	struct queue_params np;
	struct reconf *rq, *old;

	/* main_params, not params: the worker writes those. */
	queue_params_from_options(&np, o, kflags);
	if (memcmp(&np, &q->main_params, sizeof(np)) == 0 || !q->started)
		return false;
	rq = malloc(sizeof(*rq));
	if (!rq) {
		log_err("queue %u: reconfigure: out of memory", q->num);
		return false;
	}
	rq->p = np;
	rq->req = ++q->reconf_last;
	q->main_params = np;
	old = __atomic_exchange_n(&q->pending, rq, __ATOMIC_ACQ_REL);
	free(old);
	ev_async_send(q->loop, &q->wake);
	return true;
}

int queue_reconfigure_result(const struct queue *q)
{
	if (__atomic_load_n(&q->reconf_done, __ATOMIC_ACQUIRE) !=
	    q->reconf_last)
		return 1;
	return __atomic_load_n(&q->reconf_err, __ATOMIC_RELAXED);
}

void queue_request_stop(struct queue *q)
{
	if (!q->started)
		return;
	if (!q->keep_bound && !q->stop_known)
		queue_conf_stop_begin(q);
	__atomic_store_n(&q->stopping, true, __ATOMIC_RELEASE);
	ev_async_send(q->loop, &q->wake);
}

void queue_stop(struct queue *q)
{
	if (q->started) {
		queue_request_stop(q);
		pthread_join(q->thread, NULL);
		q->started = false;
		log_ring_flush(q->log);
	}
	queue_conf_unbind(q);
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
	free_rx(q);
	verdict_batch_free(&q->vb);
	log_ring_free(q->log);
	flowtab_free(q->flows);
	free(q);
}

bool queue_progressed(struct queue *q)
{
	uint64_t now = __atomic_load_n(&q->progress, __ATOMIC_RELAXED);
	bool moved = now != q->progress_seen;

	q->progress_seen = now;
	return moved || !q->started ||
	       __atomic_load_n(&q->idle, __ATOMIC_RELAXED);
}
