/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * refconsumer.c - nfqd-refconsumer, the classic NFQUEUE consumer used as the
 * benchmark's baseline: libmnl + libnetfilter_queue's nlmsg helpers, shaped
 * like libnetfilter_queue's examples/nf-queue.c.
 *
 *   nfqd-refconsumer -q NUM [-l MAXLEN] [-r RCVBUF] [-c RANGE] [-g]
 *
 * Binds ONE queue (with NLM_F_ACK, so a failed bind is an error), copy-packet
 * mode with a small copy range, queue-maxlen, the GSO flag (set with -g,
 * else cleared), SO_RCVBUFFORCE; then loops:
 * one recv() -> one NF_ACCEPT verdict sendmsg() per packet, no printing.
 * SIGTERM/SIGINT end the loop; the queue is unbound and the program exits 0.
 * SIGSTOP/SIGCONT (the drain benchmark) are harmless.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#define REF_BUF_SIZE	(0xffff + (MNL_SOCKET_BUFFER_SIZE / 2))

static volatile sig_atomic_t stop;
static struct mnl_socket *nl;
static unsigned int portid;
static uint32_t queue_num;

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nfqd-refconsumer -q NUM [-l MAXLEN] [-r RCVBUF] [-c RANGE] [-g]\n"
		"  -q NUM      queue number to bind\n"
		"  -l MAXLEN   kernel queue length (default 1024)\n"
		"  -r RCVBUF   SO_RCVBUFFORCE bytes, K/M/G suffix (default 8M)\n"
		"  -c RANGE    copy range in bytes (default 64)\n"
		"  -g          set the queue's GSO flag (default: cleared)\n");
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

/* Send a config message and wait for its ACK (or error). */
static int send_config(struct nlmsghdr *nlh, const char *what)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int ret;

	nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		fprintf(stderr, "nfqd-refconsumer: %s: send: %s\n", what,
			strerror(errno));
		return -1;
	}
	for (;;) {
		ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		ret = mnl_cb_run(buf, (size_t)ret, nlh->nlmsg_seq, portid,
				 NULL, NULL);
		if (ret <= 0)
			break;
	}
	if (ret < 0) {
		fprintf(stderr, "nfqd-refconsumer: %s queue %u: %s\n", what,
			queue_num, strerror(errno));
		return -1;
	}
	return 0;
}

static void send_verdict(uint32_t id)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_VERDICT, queue_num);
	nfq_nlmsg_verdict_put(nlh, (int)id, NF_ACCEPT);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0 && errno != EINTR)
		perror("nfqd-refconsumer: verdict");
}

static int queue_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *attr[NFQA_MAX + 1] = { NULL };
	struct nfqnl_msg_packet_hdr *ph;

	if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR])
		return MNL_CB_OK;
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	send_verdict(ntohl(ph->packet_id));
	return MNL_CB_OK;
}

int main(int argc, char **argv)
{
	unsigned long long qnum = 0, maxlen = 1024, rcvbuf = 8 << 20;
	unsigned long long range = 64;
	bool have_q = false, gso = false;
	struct sigaction sa;
	struct nlmsghdr *nlh;
	char *buf;
	int c, fd, one = 1, rb;
	unsigned int seq = 1;
	ssize_t ret;

	while ((c = getopt(argc, argv, "q:l:r:c:gh")) != -1) {
		switch (c) {
		case 'q':
			if (parse_size(optarg, 65535, &qnum))
				goto bad;
			have_q = true;
			break;
		case 'l':
			if (parse_size(optarg, UINT32_MAX, &maxlen))
				goto bad;
			break;
		case 'r':
			if (parse_size(optarg, 1ULL << 30, &rcvbuf))
				goto bad;
			break;
		case 'c':
			if (parse_size(optarg, 65531, &range))
				goto bad;
			break;
		case 'g':
			gso = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!have_q || optind != argc) {
		usage(stderr);
		return 2;
	}
	queue_num = (uint32_t)qnum;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: recv returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	buf = malloc(REF_BUF_SIZE);
	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!buf || !nl) {
		perror("nfqd-refconsumer: mnl_socket_open");
		return 1;
	}
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("nfqd-refconsumer: mnl_socket_bind");
		return 1;
	}
	portid = mnl_socket_get_portid(nl);
	fd = mnl_socket_get_fd(nl);
	rb = (int)rcvbuf;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof(rb)) < 0) {
		perror("nfqd-refconsumer: SO_RCVBUFFORCE");
		return 1;
	}

	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, queue_num);
	nlh->nlmsg_seq = seq++;
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	if (send_config(nlh, "bind") < 0)
		return 1;

	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, queue_num);
	nlh->nlmsg_seq = seq++;
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, (int)range);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, (uint32_t)maxlen);
	/* Flags need their mask beside them, in the same message. */
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(gso ? NFQA_CFG_F_GSO : 0));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_GSO));
	if (send_config(nlh, "params") < 0)
		return 1;

	/* As nf-queue.c: don't report ENOBUFS, the kernel drops for us. */
	mnl_socket_setsockopt(nl, NETLINK_NO_ENOBUFS, &one, sizeof(one));

	while (!stop) {
		ret = mnl_socket_recvfrom(nl, buf, REF_BUF_SIZE);
		if (ret < 0) {
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			perror("nfqd-refconsumer: recv");
			return 1;
		}
		if (mnl_cb_run(buf, (size_t)ret, 0, portid, queue_cb,
			       NULL) < 0 && errno != EINTR) {
			perror("nfqd-refconsumer: mnl_cb_run");
			return 1;
		}
	}

	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, queue_num);
	nlh->nlmsg_seq = seq++;
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_UNBIND);
	send_config(nlh, "unbind");
	mnl_socket_close(nl);
	free(buf);
	return 0;
bad:
	fprintf(stderr, "nfqd-refconsumer: bad value '%s' for -%c\n", optarg,
		c);
	usage(stderr);
	return 2;
}
