/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drainwait.c - nfqd-drainwait, the drain benchmark's stopwatch.
 *
 *   nfqd-drainwait -q Q[,Q...] -n COUNT -t TABLE -c COUNTER [-p PID,...]
 *                  [-i POLL_US] [-T TIMEOUT_S] [-I SLICE_US]
 *
 * Run in the consumer's network namespace after the queues were filled
 * while the consumer was stopped. Reads the baseline of the nftables named
 * counter (family inet) TABLE/COUNTER that counts accepted packets at the
 * sink, starts the clock, sends SIGCONT to the PIDs, then polls cheaply
 * (sleeping POLL_US, default 500 us, between polls so that it does not steal
 * a CPU from the consumer) until the queues' queue_total in
 * /proc/net/netfilter/nfnetlink_queue is 0 and the counter grew by COUNT.
 * The counter is read over netlink (NFT_MSG_GETOBJ), no fork per poll.
 *
 * Prints one line of key=value pairs:
 *   drain_ns queue_empty_ns sink pre_total pre_qdrop pre_udrop qdrop udrop
 *   polls
 * drain_ns is from SIGCONT until the sink counted COUNT packets,
 * queue_empty_ns until every queue_total was 0 (the last verdict).
 *
 * -I SLICE_US interleaves the drains of several consumers, one PID a
 * queue (the Nth of -p drains the Nth of -q): they are continued one at a
 * time, round-robin, for SLICE_US each, the others stopped, until every
 * queue is empty; then all are continued. A consumer's CPU time (read by
 * the caller around the drain) is then taken within milliseconds of the
 * others', so that the machine's swings of speed, which last longer,
 * fall on all of them alike. The line then ends with slices=N.
 * Exit status: 0 done, 1 timeout or error, 2 usage.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#define DW_MAX_QUEUES	64
#define DW_PROC		"/proc/net/netfilter/nfnetlink_queue"

struct dw_queue_state {
	uint64_t each[DW_MAX_QUEUES];	/* queue_total of each -q queue */
	uint64_t total;
	uint64_t qdrop;
	uint64_t udrop;
	unsigned int found;
};

static unsigned int queues[DW_MAX_QUEUES];
static unsigned int nqueues;
static pid_t pids[DW_MAX_QUEUES];
static unsigned int npids;
static struct mnl_socket *nl;
static unsigned int nl_portid, nl_seq = 1;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nfqd-drainwait -q Q[,Q...] -n COUNT -t TABLE -c COUNTER\n"
		"                      [-p PID,...] [-i POLL_US] [-T TIMEOUT_S]\n"
		"                      [-I SLICE_US]\n");
}

/* Sum the listed queues' lines of the kernel's proc file; each one's
 * queue_total, in -q's order, in st->each. */
static int read_queues(struct dw_queue_state *st)
{
	char buf[16384];
	char *line, *save = NULL;
	ssize_t n, len = 0;
	int fd;

	memset(st, 0, sizeof(*st));
	fd = open(DW_PROC, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned int qn, portid, total, mode, range, qdrop, udrop, i;

		if (sscanf(line, "%u %u %u %u %u %u %u", &qn, &portid, &total,
			   &mode, &range, &qdrop, &udrop) != 7)
			continue;
		for (i = 0; i < nqueues; i++) {
			if (queues[i] != qn)
				continue;
			st->each[i] = total;
			st->total += total;
			st->qdrop += qdrop;
			st->udrop += udrop;
			st->found++;
		}
	}
	return 0;
}

static void sleep_us(unsigned long long us)
{
	struct timespec ts = {
		.tv_sec = (time_t)(us / 1000000),
		.tv_nsec = (long)(us % 1000000) * 1000,
	};

	nanosleep(&ts, NULL);
}

/* Is every thread of PID stopped (state T or t)? */
static bool all_stopped(pid_t pid)
{
	char path[320], buf[512];
	struct dirent *e;
	bool all = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return true;	/* gone: nothing runs */
	while (all && (e = readdir(d))) {
		ssize_t n;
		char *st;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat",
			 (int)pid, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* the thread ended */
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		st = strrchr(buf, ')');
		all = !st || st[1] != ' ' || st[2] == 'T' || st[2] == 't';
	}
	closedir(d);
	return all;
}

/* Stop PID and wait until it is (2 s at most). */
static int stop_wait(pid_t pid)
{
	if (kill(pid, SIGSTOP) < 0)
		return -1;
	for (int i = 0; i < 40000; i++) {
		if (all_stopped(pid))
			return 0;
		sleep_us(50);
	}
	errno = ETIMEDOUT;
	return -1;
}

/* The -I drain: every queue emptied by its own PID, one at a time,
 * SLICE_US each; the slices given, or -1. */
static long interleave(unsigned long long slice_us, uint64_t deadline)
{
	long slices = 0;
	bool left = true;

	while (left) {
		struct dw_queue_state st;

		left = false;
		if (read_queues(&st) < 0)
			return -1;
		if (st.found != nqueues) {
			errno = ENOENT;	/* a queue was unbound */
			return -1;
		}
		for (unsigned int i = 0; i < nqueues; i++) {
			if (st.each[i] == 0)
				continue;
			left = true;
			if (kill(pids[i], SIGCONT) < 0)
				return -1;
			sleep_us(slice_us);
			if (stop_wait(pids[i]) < 0)
				return -1;
			slices++;
		}
		if (now_ns() > deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return slices;
}

static int counter_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *attr, *nested;
	uint64_t *packets = data;

	mnl_attr_for_each(attr, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(attr) != NFTA_OBJ_DATA)
			continue;
		mnl_attr_for_each_nested(nested, attr) {
			if (mnl_attr_get_type(nested) == NFTA_COUNTER_PACKETS)
				*packets = be64toh(mnl_attr_get_u64(nested));
		}
	}
	return MNL_CB_OK;
}

/* Read the packets of named counter TABLE/NAME (family inet). */
static int read_counter(const char *table, const char *name, uint64_t *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;
	unsigned int seq = nl_seq++;
	uint64_t packets = UINT64_MAX;
	int ret;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETOBJ;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = NFPROTO_INET;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	mnl_attr_put_strz(nlh, NFTA_OBJ_TABLE, table);
	mnl_attr_put_strz(nlh, NFTA_OBJ_NAME, name);
	mnl_attr_put_u32(nlh, NFTA_OBJ_TYPE, htonl(NFT_OBJECT_COUNTER));
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	do {
		ret = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret < 0)
			return -1;
		ret = mnl_cb_run(buf, (size_t)ret, seq, nl_portid, counter_cb,
				 &packets);
	} while (ret > 0);
	if (ret < 0 || packets == UINT64_MAX)
		return -1;
	*out = packets;
	return 0;
}

static int parse_pids(char *list)
{
	char *save = NULL, *tok, *end;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long v = strtol(tok, &end, 10);

		if (*end || end == tok || v <= 0 || npids == DW_MAX_QUEUES)
			return -1;
		pids[npids++] = (pid_t)v;
	}
	return 0;
}

static int parse_queues(char *list)
{
	char *save = NULL, *tok, *end;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long v = strtoul(tok, &end, 10);

		if (*end || end == tok || v > 65535 ||
		    nqueues == DW_MAX_QUEUES)
			return -1;
		queues[nqueues++] = (unsigned int)v;
	}
	return nqueues ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *table = NULL, *cname = NULL;
	unsigned long long count = 0, poll_us = 500, timeout_s = 60;
	unsigned long long slice_us = 0;
	long slices = 0;
	struct dw_queue_state pre, st;
	uint64_t base, sink = 0, t0, t_empty = 0, t_end = 0, deadline;
	unsigned long polls = 0;
	struct sched_param idle = { .sched_priority = 0 };
	unsigned int i;
	bool have_n = false;
	int c;

	while ((c = getopt(argc, argv, "q:n:t:c:p:i:T:I:h")) != -1) {
		switch (c) {
		case 'q':
			if (parse_queues(optarg))
				goto bad;
			break;
		case 'n':
			count = strtoull(optarg, NULL, 10);
			have_n = true;
			break;
		case 't':
			table = optarg;
			break;
		case 'c':
			cname = optarg;
			break;
		case 'p':
			if (parse_pids(optarg))
				goto bad;
			break;
		case 'i':
			poll_us = strtoull(optarg, NULL, 10);
			break;
		case 'T':
			timeout_s = strtoull(optarg, NULL, 10);
			break;
		case 'I':
			slice_us = strtoull(optarg, NULL, 10);
			if (!slice_us)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || !nqueues || !have_n || !table || !cname)
		goto bad;
	if (slice_us && npids != nqueues) {
		fprintf(stderr, "nfqd-drainwait: -I needs one PID a queue\n");
		goto bad;
	}

	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("nfqd-drainwait: netlink");
		return 1;
	}
	nl_portid = mnl_socket_get_portid(nl);
	if (read_counter(table, cname, &base) < 0) {
		fprintf(stderr, "nfqd-drainwait: cannot read counter %s/%s: "
			"%s\n", table, cname, strerror(errno));
		return 1;
	}
	if (read_queues(&pre) < 0 || pre.found != nqueues) {
		fprintf(stderr, "nfqd-drainwait: queues not all bound\n");
		return 1;
	}

	/*
	 * Poll at SCHED_IDLE: the stopwatch must not take CPU time from the
	 * consumer it times. With one queue a CPU is free anyway; with one
	 * queue per CPU every poll would otherwise preempt a worker. When
	 * the drain ends the CPUs go idle and the poll runs at once.
	 */
	if (!slice_us && sched_setscheduler(0, SCHED_IDLE, &idle) < 0)
		perror("nfqd-drainwait: SCHED_IDLE (polling at normal priority)");
	t0 = now_ns();
	deadline = t0 + timeout_s * 1000000000ULL;
	/* Interleaved, a slice must end on time: normal priority. */
	if (slice_us && (slices = interleave(slice_us, deadline)) < 0) {
		perror("nfqd-drainwait: interleaved drain");
		for (i = 0; i < npids; i++)
			kill(pids[i], SIGCONT);
		return 1;
	}
	for (i = 0; i < npids; i++) {
		if (kill(pids[i], SIGCONT) < 0) {
			perror("nfqd-drainwait: SIGCONT");
			return 1;
		}
	}
	for (;;) {
		uint64_t t;

		if (poll_us)
			sleep_us(poll_us);
		polls++;
		t = now_ns();
		if (!t_empty) {
			if (read_queues(&st) < 0)
				return 1;
			if (st.total == 0)
				t_empty = t;
		}
		if (t_empty) {
			if (read_counter(table, cname, &sink) < 0) {
				perror("nfqd-drainwait: counter");
				return 1;
			}
			if (sink - base >= count) {
				t_end = now_ns();
				break;
			}
		}
		if (t > deadline)
			break;
	}
	read_queues(&st);
	if (!t_end)
		read_counter(table, cname, &sink);
	printf("drain_ns=%llu queue_empty_ns=%llu sink=%llu pre_total=%llu "
	       "pre_qdrop=%llu pre_udrop=%llu qdrop=%llu udrop=%llu "
	       "polls=%lu",
	       t_end ? (unsigned long long)(t_end - t0) : 0ULL,
	       t_empty ? (unsigned long long)(t_empty - t0) : 0ULL,
	       (unsigned long long)(sink - base),
	       (unsigned long long)pre.total, (unsigned long long)pre.qdrop,
	       (unsigned long long)pre.udrop, (unsigned long long)st.qdrop,
	       (unsigned long long)st.udrop, polls);
	if (slice_us)
		printf(" slices=%ld", slices);
	putchar('\n');
	mnl_socket_close(nl);
	if (!t_end) {
		fprintf(stderr, "nfqd-drainwait: timeout after %llu s\n",
			timeout_s);
		return 1;
	}
	return 0;
bad:
	usage(stderr);
	return 2;
}
