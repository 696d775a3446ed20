/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * floor.c - nfqd-floor, the benchmark's no-work batched consumer: the
 * fastest an NFQUEUE consumer can be with nfqd's socket set-up, so that
 * nfqd's cost above it is what its policy and bookkeeping add.
 *
 *   nfqd-floor -q NUM[,NUM...] [-l MAXLEN] [-r RCVBUF] [-c RANGE]
 *              [-b BATCH] [-g] [-p]
 *
 * One thread per queue. Each binds its queue (with NLM_F_ACK), sets copy
 * range, queue-maxlen and the GSO flag, SO_RCVBUFFORCE, NETLINK_NO_ENOBUFS,
 * then loops: one blocking recvmmsg (MSG_WAITFORONE) of up to BATCH
 * messages, one NFQNL_MSG_VERDICT_BATCH (NF_ACCEPT up to the last id) in
 * one sendmsg. No parsing beyond the packet id, no counters, no policy.
 * Its receive buffers are on a huge page, as nfqd's.
 * -p pins the thread of the i-th listed queue to CPU i (nfqd's cpu-pin).
 * -L wait|batch adds, per packet, the memory reads of a lookup in a
 * million-name domain set and nothing else (no name, no hashing): 3
 * random words of a 2 MB filter (a name's label suffixes), and for 1
 * packet in 8 (a listed name or a filter's false positive) a random word
 * of a 16 MB table and then one of a 32 MB arena that the first chose, all
 * on huge pages like nfqd's. "wait": a packet's reads start when the
 * packet before has its answer, as when packets are judged one after the
 * other; "batch": the reads of a whole receive batch are prefetched
 * stage by stage before any is used, the best a look-ahead could do. The
 * bench's names phase runs both: what the set's memory costs on this
 * machine, apart from any code.
 * SIGTERM/SIGINT: the threads stop, unbind and the program exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "bigmem.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define FL_MAX_QUEUES	64
#define FL_MAX_BATCH	1024
#define FL_RX_OVERHEAD	4096	/* attributes besides the copied payload */

struct fl_queue {
	uint16_t num;
	int cpu;
	struct mnl_socket *nl;
	unsigned int portid;
	unsigned int seq;
	pthread_t thread;
	bool started;
	int rc;
};

static struct {
	unsigned long long maxlen, rcvbuf, range, batch;
	int lookup;		/* -L: LK_NONE, LK_WAIT or LK_BATCH */
	bool gso;
	bool pin;
} opt = {
	.maxlen = 1024,
	.rcvbuf = 8 << 20,
	.range = 64,
	.batch = 64,
};

static struct fl_queue queues[FL_MAX_QUEUES];
static unsigned int nqueues;
static volatile sig_atomic_t stop;

enum { LK_NONE, LK_WAIT, LK_BATCH };
#define LK_FILTER_MB	2
#define LK_TABLE_MB	16
#define LK_ARENA_MB	32
#define LK_PROBES	3	/* filter words a packet */
#define LK_DEEP		8	/* 1 packet in this many reads table and arena */

/* -L: the arrays read, each a power of two of words, and their masks. */
static uint64_t *lk_filter, *lk_table, *lk_arena;
static size_t lk_fmask, lk_tmask, lk_amask;
static volatile uint64_t lk_sink;	/* keeps the reads from being dropped */

static void on_wake(int sig)
{
	/* Only interrupts a blocked recvmmsg; the loop checks `stop`. */
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nfqd-floor -q NUM[,NUM...] [-l MAXLEN] [-r RCVBUF] [-c RANGE]\n"
		"                  [-b BATCH] [-g] [-p] [-L wait|batch]\n"
		"  -q LIST     queues to bind, one thread each\n"
		"  -l MAXLEN   kernel queue length (default 1024)\n"
		"  -r RCVBUF   SO_RCVBUFFORCE bytes, K/M/G suffix (default 8M)\n"
		"  -c RANGE    copy range in bytes (default 64)\n"
		"  -b BATCH    messages per recvmmsg (default 64, max %d)\n"
		"  -g          set the queue's GSO flag (default: cleared)\n"
		"  -p          pin the i-th queue's thread to CPU i\n"
		"  -L MODE     a domain-set lookup's memory reads a packet, MODE\n"
		"              wait (one packet after the other) or batch (the\n"
		"              receive batch's reads prefetched first)\n",
		FL_MAX_BATCH);
}

static int parse_size(const char *s, unsigned long long max,
		      unsigned long long *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || s[0] == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K':
		v <<= 10;
		end++;
		break;
	case 'm': case 'M':
		v <<= 20;
		end++;
		break;
	case 'g': case 'G':
		v <<= 30;
		end++;
		break;
	}
	if (*end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_queues(char *list)
{
	char *save = NULL, *tok;
	unsigned long long v;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (parse_size(tok, 65535, &v) || nqueues == FL_MAX_QUEUES)
			return -1;
		queues[nqueues].num = (uint16_t)v;
		queues[nqueues].cpu = -1;
		nqueues++;
	}
	return nqueues ? 0 : -1;
}

/* Send a config message and wait for its ACK. Returns 0 or -errno. */
static int talk(struct fl_queue *q, struct nlmsghdr *nlh)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int ret;

	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++q->seq;
	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ret = (int)mnl_socket_recvfrom(q->nl, buf, sizeof(buf));
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		ret = mnl_cb_run(buf, (size_t)ret, nlh->nlmsg_seq, q->portid,
				 NULL, NULL);
		if (ret < 0)
			return -errno;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

static int queue_setup(struct fl_queue *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int fd, one = 1, rb = (int)opt.rcvbuf, rc;

	q->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!q->nl || mnl_socket_bind(q->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "nfqd-floor: queue %u: netlink socket: %s\n",
			q->num, strerror(errno));
		return -1;
	}
	q->portid = mnl_socket_get_portid(q->nl);
	fd = mnl_socket_get_fd(q->nl);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof(rb)) < 0) {
		fprintf(stderr, "nfqd-floor: queue %u: SO_RCVBUFFORCE: %s\n",
			q->num, strerror(errno));
		return -1;
	}
	/* As nfqd: overruns are counted by the kernel, not reported. */
	setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));

	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->num);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_UNSPEC, NFQNL_CFG_CMD_BIND);
	rc = talk(q, nlh);
	if (rc < 0) {
		fprintf(stderr, "nfqd-floor: queue %u: bind: %s\n", q->num,
			strerror(-rc));
		return -1;
	}
	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->num);
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, (int)opt.range);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, (uint32_t)opt.maxlen);
	/* Flags need their mask beside them, in the same message. */
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS,
			 htonl(opt.gso ? NFQA_CFG_F_GSO : 0));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_GSO));
	rc = talk(q, nlh);
	if (rc < 0) {
		fprintf(stderr, "nfqd-floor: queue %u: params: %s\n", q->num,
			strerror(-rc));
		return -1;
	}
	return 0;
}

static void queue_unbind(struct fl_queue *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->num);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_UNSPEC, NFQNL_CFG_CMD_UNBIND);
	talk(q, nlh);
}

/* The id of the last queued packet in the datagram, if it holds one. */
static bool last_id(char *buf, size_t len, uint32_t *id)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	const uint16_t pkt_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET;
	int rem = (int)len;
	bool found = false;

	for (; mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
		const struct nlattr *a;

		if (nlh->nlmsg_type != pkt_type)
			continue;
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
			const struct nfqnl_msg_packet_hdr *ph;

			if (mnl_attr_get_type(a) != NFQA_PACKET_HDR)
				continue;
			if (mnl_attr_get_payload_len(a) < sizeof(*ph))
				break;
			ph = mnl_attr_get_payload(a);
			*id = ntohl(ph->packet_id);
			found = true;
			break;
		}
	}
	return found;
}

/* MB megabytes of random words on huge pages, touched now; *MASK: words - 1. */
static uint64_t *lk_array(size_t mb, size_t *mask)
{
	size_t bytes = mb << 20;
	uint64_t *a, x = 0x9e3779b97f4a7c15ull ^ mb;

	a = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(a, bytes, MADV_HUGEPAGE);
#endif
	*mask = bytes / sizeof(*a) - 1;
	for (size_t i = 0; i <= *mask; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		a[i] = x;
	}
	return a;
}

static int lk_init(void)
{
	lk_filter = lk_array(LK_FILTER_MB, &lk_fmask);
	lk_table = lk_array(LK_TABLE_MB, &lk_tmask);
	lk_arena = lk_array(LK_ARENA_MB, &lk_amask);
	return lk_filter && lk_table && lk_arena ? 0 : -1;
}

static uint64_t lk_mix(uint64_t v)
{
	v = (v ^ (v >> 31)) * 0xbf58476d1ce4e5b9ull;
	return v ^ (v >> 27);
}

/* Filter word J of packet N. */
static size_t lk_fword(uint64_t n, unsigned j)
{
	return lk_mix(n * LK_PROBES + j) & lk_fmask;
}

/* "wait": packet N's reads, made from V, the answer of the packet before;
 * returns this packet's answer. */
static uint64_t lk_wait(uint64_t n, uint64_t v)
{
	uint64_t key = n ^ v;

	for (unsigned j = 0; j < LK_PROBES; j++)
		__builtin_prefetch(&lk_filter[lk_fword(key, j)]);
	for (unsigned j = 0; j < LK_PROBES; j++)
		v += lk_filter[lk_fword(key, j)];
	if (n % LK_DEEP == 0) {
		v += lk_table[lk_mix(v) & lk_tmask];
		v += lk_arena[lk_mix(v) & lk_amask];
	}
	return v;
}

/* "batch": the reads of packets N..N+R-1, stage by stage, every stage's
 * addresses prefetched before the stage reads them. */
static uint64_t lk_batch(uint64_t n, int r)
{
	uint64_t v = 0, t[FL_MAX_BATCH], a[FL_MAX_BATCH];

	for (int i = 0; i < r; i++)
		for (unsigned j = 0; j < LK_PROBES; j++)
			__builtin_prefetch(&lk_filter[lk_fword(n + i, j)]);
	for (int i = 0; i < r; i++) {
		for (unsigned j = 0; j < LK_PROBES; j++)
			v += lk_filter[lk_fword(n + i, j)];
		t[i] = lk_mix(v) & lk_tmask;
		if ((n + i) % LK_DEEP == 0)
			__builtin_prefetch(&lk_table[t[i]]);
	}
	for (int i = 0; i < r; i++) {
		if ((n + i) % LK_DEEP)
			continue;
		a[i] = lk_mix(lk_table[t[i]]) & lk_amask;
		__builtin_prefetch(&lk_arena[a[i]]);
	}
	for (int i = 0; i < r; i++)
		if ((n + i) % LK_DEEP == 0)
			v += lk_arena[a[i]];
	return v;
}

/* N bytes for the receive buffers, as nfqd takes its own (src/queue.c,
 * alloc_rx()): whole huge pages from bigmem.h, the used part touched
 * now. Each slot is more than a small page: on small pages the floor
 * would take TLB misses that nfqd does not. NULL on failure; the
 * mapping goes with the process. */
static char *rx_buffers(size_t n)
{
	char *p = bigmem_alloc((n + BIGMEM_HUGE - 1) / BIGMEM_HUGE *
			       BIGMEM_HUGE);

	if (p)
		bigmem_prefault(p, n);
	return p;
}

static void *queue_loop(void *arg)
{
	struct fl_queue *q = arg;
	size_t each = MNL_ALIGN(opt.range) + FL_RX_OVERHEAD;
	unsigned int n = (unsigned int)opt.batch;
	size_t heads = (n * (sizeof(struct mmsghdr) + sizeof(struct iovec)) +
			63) / 64 * 64;
	char *mem = rx_buffers(heads + each * n);
	struct mmsghdr *msgs = (struct mmsghdr *)mem;
	struct iovec *iov = mem ? (struct iovec *)(msgs + n) : NULL;
	char *rx = mem ? mem + heads : NULL;
	char vbuf[MNL_SOCKET_BUFFER_SIZE];
	int fd = mnl_socket_get_fd(q->nl);
	uint64_t lk_n = 0, lk_v = q->num;	/* -L: packets, last answer */

	if (!msgs || !iov || !rx) {
		fprintf(stderr, "nfqd-floor: queue %u: out of memory\n",
			q->num);
		q->rc = 1;
		return NULL;
	}
	for (unsigned int i = 0; i < n; i++) {
		iov[i].iov_base = rx + i * each;
		iov[i].iov_len = each;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (!stop) {
		struct nlmsghdr *nlh;
		uint32_t id = 0;
		bool have = false;
		int r;

		r = recvmmsg(fd, msgs, n, MSG_WAITFORONE, NULL);
		if (r < 0) {
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			fprintf(stderr, "nfqd-floor: queue %u: recvmmsg: %s\n",
				q->num, strerror(errno));
			q->rc = 1;
			break;
		}
		for (int i = 0; i < r; i++) {
			have |= last_id(rx + (size_t)i * each, msgs[i].msg_len,
					&id);
			if (opt.lookup == LK_WAIT)
				lk_v = lk_wait(lk_n++, lk_v);
		}
		if (opt.lookup == LK_BATCH) {
			lk_v += lk_batch(lk_n, r);
			lk_n += (uint64_t)r;
		}
		lk_sink = lk_v;
		if (!have)
			continue;
		nlh = nfq_nlmsg_put(vbuf, NFQNL_MSG_VERDICT_BATCH, q->num);
		nfq_nlmsg_verdict_put(nlh, (int)id, NF_ACCEPT);
		if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0 &&
		    errno != EINTR)
			fprintf(stderr, "nfqd-floor: queue %u: verdict: %s\n",
				q->num, strerror(errno));
	}
	return NULL;	/* the buffers' mapping goes with the process */
}

static int start_thread(struct fl_queue *q)
{
	pthread_attr_t attr;
	int rc;

	pthread_attr_init(&attr);
	if (q->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(q->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	rc = pthread_create(&q->thread, &attr, queue_loop, q);
	pthread_attr_destroy(&attr);
	if (rc) {
		fprintf(stderr, "nfqd-floor: queue %u: thread: %s\n", q->num,
			strerror(rc));
		return -1;
	}
	q->started = true;
	return 0;
}

/* Wake a thread until it has left its loop: a signal sent just before it
 * entered recvmmsg would otherwise be missed. */
static void stop_thread(struct fl_queue *q)
{
	const struct timespec pause = { .tv_nsec = 10 * 1000 * 1000 };

	for (;;) {
		pthread_kill(q->thread, SIGUSR1);
		if (pthread_tryjoin_np(q->thread, NULL) == 0)
			return;
		nanosleep(&pause, NULL);
	}
}

static int parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "q:l:r:c:b:gpL:h")) != -1) {
		switch (c) {
		case 'q':
			if (parse_queues(optarg))
				goto bad;
			break;
		case 'l':
			if (parse_size(optarg, UINT32_MAX, &opt.maxlen))
				goto bad;
			break;
		case 'r':
			if (parse_size(optarg, 1ULL << 30, &opt.rcvbuf))
				goto bad;
			break;
		case 'c':
			if (parse_size(optarg, 65531, &opt.range))
				goto bad;
			break;
		case 'b':
			if (parse_size(optarg, FL_MAX_BATCH, &opt.batch) ||
			    !opt.batch)
				goto bad;
			break;
		case 'g':
			opt.gso = true;
			break;
		case 'p':
			opt.pin = true;
			break;
		case 'L':
			if (!strcmp(optarg, "wait"))
				opt.lookup = LK_WAIT;
			else if (!strcmp(optarg, "batch"))
				opt.lookup = LK_BATCH;
			else
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (!nqueues || optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "nfqd-floor: bad value '%s' for -%c\n", optarg, c);
	usage(stderr);
	return -1;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t term;
	int sig, rc = 0;
	unsigned int i;

	if (parse_args(argc, argv) < 0)
		return 2;
	if (opt.lookup != LK_NONE && lk_init() < 0) {
		fprintf(stderr, "nfqd-floor: -L: %s\n", strerror(errno));
		return 1;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_wake;	/* no SA_RESTART: recvmmsg returns */
	sigaction(SIGUSR1, &sa, NULL);
	/* Only the main thread takes SIGTERM/SIGINT (sigwait below). */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	pthread_sigmask(SIG_BLOCK, &term, NULL);

	for (i = 0; i < nqueues; i++) {
		if (opt.pin)
			queues[i].cpu = (int)i;
		if (queue_setup(&queues[i]) < 0 ||
		    start_thread(&queues[i]) < 0) {
			rc = 1;
			break;
		}
	}
	if (!rc)
		sigwait(&term, &sig);
	stop = 1;
	for (i = 0; i < nqueues; i++) {
		if (queues[i].started)
			stop_thread(&queues[i]);
		if (queues[i].rc)
			rc = 1;
		if (queues[i].nl) {
			queue_unbind(&queues[i]);
			mnl_socket_close(queues[i].nl);
		}
	}
	return rc;
}
