/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxloop.c - nfqd-rxloop: the worker's judging of receive batches
 * (queue_judge_batch(): look-ahead, parse, flow table, rules, verdict
 * ledger) timed in user space on hand-made packet messages, without the
 * kernel: what nfqd's own code costs a packet, to a few ns, where a
 * drain's ratio moves by ±0.02 from table to table. Next to it, the
 * floor's work on the same messages (the walk to the packet id).
 *
 *   nfqd-rxloop udp|rtp|dns|tcp|tls [empty] [BATCHES [POLLUTE_KB [LIST]]]
 *
 * udp: 46-byte datagrams to port 9 (nfqd-gen's); rtp: 188-byte ones
 * whose first byte is 0x80, as RTP's (and a QUIC long header's); dns:
 * nfqd-namegen's queries to port 53, 1 in 10 naming an entry of LIST;
 * tcp: flows to port 8080, a SYN and 15 segments of 100 bytes; tls:
 * flows to port 443, a SYN and nfqd-namegen's ClientHello (1 in 4 a
 * browser's, in two segments), 1 in 10 naming an entry of LIST. LIST:
 * nfqd-namegen -w's (default /tmp/nfqd-names.txt). The policy is the
 * bench's names policy (dns qname/tls sni @big drop; big: LIST for dns
 * and tls, two names otherwise),
 * or "empty" (policy accept). 64 messages a batch, BATCHES batches
 * (default 100000); POLLUTE_KB: bytes written between batches, as the
 * kernel's work evicts nfqd's lines in a drain (default 0). Not a test:
 * it judges, it does not check.
 */
#include "../../src/queue.c"

#include <endian.h>
#include <stdio.h>
#include <time.h>

#define NB 64

size_t rxloop_hello(uint8_t *out, uint32_t flow);	/* rxloop_hello.c */
size_t rxloop_dns(uint8_t *out, uint32_t i);

#define OPTS "options { batch 64; copy-range 4096; }\n"
#define RULES "hook input { policy accept; dns qname @big drop; " \
	"tls sni @big drop; }\n"
#define CONF_SMALL OPTS "set big { type domain; elements = { " \
	"\"one.example\", \"*.two.example\" }; }\n" RULES
#define CONF_LIST OPTS "set big { type domain; file \"%s\"; }\n" RULES
#define CONF_EMPTY OPTS "hook input { policy accept; }\n"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* An IPv4 packet 10.0.0.1:SP -> 10.0.0.2:DP into P, DL data bytes
 * (DATA, or a pattern); its length. */
static size_t mkpkt(uint8_t *p, uint8_t proto, uint16_t sp, uint16_t dp,
		    uint32_t seq, uint8_t flags, const uint8_t *data, size_t dl)
{
	size_t hl = proto == IPPROTO_TCP ? 20 : 8, tot = 20 + hl + dl;
	uint8_t *t = p + 20;

	memset(p, 0, 20 + hl);
	p[0] = 0x45;
	p[2] = (uint8_t)(tot >> 8);
	p[3] = (uint8_t)tot;
	p[8] = 64;
	p[9] = proto;
	p[12] = 10;
	p[15] = 1;
	p[16] = 10;
	p[19] = 2;
	t[0] = (uint8_t)(sp >> 8);
	t[1] = (uint8_t)sp;
	t[2] = (uint8_t)(dp >> 8);
	t[3] = (uint8_t)dp;
	if (proto == IPPROTO_TCP) {
		t[4] = (uint8_t)(seq >> 24);
		t[5] = (uint8_t)(seq >> 16);
		t[6] = (uint8_t)(seq >> 8);
		t[7] = (uint8_t)seq;
		t[12] = 0x50;
		t[13] = flags;
		t[14] = 0xff;
	} else {
		t[4] = (uint8_t)((8 + dl) >> 8);
		t[5] = (uint8_t)(8 + dl);
	}
	for (size_t i = 0; i < dl; i++)
		t[hl + i] = data ? data[i] : (uint8_t)(0x80 + (i & 0x3f));
	return tot;
}

/* A packet message as the kernel sends it from an input hook into BUF:
 * header, input device, hardware address, payload. Its length. */
static unsigned mkmsg(char *buf, uint32_t id, const uint8_t *pkt, size_t len)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfqnl_msg_packet_hdr ph = {
		.packet_id = htobe32(id),
		.hw_protocol = htobe16(0x0800),
		.hook = NF_INET_LOCAL_IN,
	};
	struct nfqnl_msg_packet_hw hw = { .hw_addrlen = htobe16(6) };
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = NFPROTO_IPV4;
	nfg->version = NFNETLINK_V0;
	mnl_attr_put(nlh, NFQA_PACKET_HDR, sizeof(ph), &ph);
	mnl_attr_put_u32(nlh, NFQA_IFINDEX_INDEV, htobe32(7));
	mnl_attr_put(nlh, NFQA_HWADDR, sizeof(hw), &hw);
	mnl_attr_put(nlh, NFQA_PAYLOAD, len, pkt);
	return nlh->nlmsg_len;
}

/* The stream of packets of KIND: the next one into P; its length. */
static size_t next_pkt(const char *kind, uint8_t *p)
{
	static uint32_t flow, seg, id;
	static uint8_t hello[4096];
	static size_t hl, hoff;
	uint16_t sp = (uint16_t)(1024 + flow % 60000);
	size_t n;

	if (!strcmp(kind, "udp"))	/* nfqd-gen's payload */
		return mkpkt(p, IPPROTO_UDP, (uint16_t)(1024 + id++ % 50000),
			     9, 0, 0, (const uint8_t *)"nfqd-gen\0\0\0\0\0\0"
			     "\0\0\0", 18);
	if (!strcmp(kind, "dns")) {	/* nfqd-namegen's queries */
		uint8_t q[512];

		n = rxloop_dns(q, id);
		return mkpkt(p, IPPROTO_UDP, (uint16_t)(1024 + id++ % 60000),
			     53, 0, 0, q, n);
	}
	if (!strcmp(kind, "rtp"))	/* first byte 0x80, as RTP's */
		return mkpkt(p, IPPROTO_UDP, (uint16_t)(1024 + id++ % 50000),
			     5004, 0, 0, NULL, 160);
	if (seg == 0) {
		seg = 1;
		hoff = 0;
		if (!strcmp(kind, "tls"))
			hl = rxloop_hello(hello, flow);
		return mkpkt(p, IPPROTO_TCP, sp,
			     strcmp(kind, "tls") ? 8080 : 443, 1000, TCPF_SYN,
			     NULL, 0);
	}
	if (!strcmp(kind, "tls")) {
		size_t cut = hl > 1400 && hoff == 0 ? 1400 : hl - hoff;

		n = mkpkt(p, IPPROTO_TCP, sp, 443, 1001 + (uint32_t)hoff,
			  TCPF_PSH | TCPF_ACK, hello + hoff, cut);
		hoff += cut;
		if (hoff == hl) {
			seg = 0;
			flow++;
		}
		return n;
	}
	n = mkpkt(p, IPPROTO_TCP, sp, 8080, 1001 + (seg - 1) * 100,
		  TCPF_PSH | TCPF_ACK, NULL, 100);
	if (++seg == 16) {
		seg = 0;
		flow++;
	}
	return n;
}

/* What the floor does with a batch: find each message's packet id. */
static uint32_t floor_batch(const struct queue *q, int n)
{
	uint32_t id = 0;

	for (int i = 0; i < n; i++) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)
			(q->rx + (size_t)i * q->rx_each);
		const struct nlattr *a;

		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
			const struct nfqnl_msg_packet_hdr *ph;

			if (mnl_attr_get_type(a) != NFQA_PACKET_HDR)
				continue;
			ph = mnl_attr_get_payload(a);
			id = be32toh(ph->packet_id);
			break;
		}
	}
	return id;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "udp";
	bool empty = argc > 2 && !strcmp(argv[2], "empty");
	long batches = argc > 3 ? atol(argv[3]) : 100000;
	size_t junk_n = argc > 4 ? (size_t)atol(argv[4]) << 10 : 0;
	const char *list = argc > 5 ? argv[5] : "/tmp/nfqd-names.txt";
	char *junk = junk_n ? calloc(1, junk_n) : NULL, cf[1024];
	double t_q = 0, t_f = 0;
	volatile uint32_t sink = 0;
	uint8_t pkt[2048];
	struct policy *pol;
	struct queue *q;
	struct conf *c;
	uint32_t id = 1;

	if (strcmp(kind, "udp") && strcmp(kind, "rtp") &&
	    strcmp(kind, "dns") && strcmp(kind, "tcp") &&
	    strcmp(kind, "tls")) {
		fprintf(stderr, "usage: nfqd-rxloop udp|rtp|dns|tcp|tls [empty] "
			"[BATCHES [POLLUTE_KB [LIST]]]\n");
		return 2;
	}
	if (empty)
		snprintf(cf, sizeof(cf), "%s", CONF_EMPTY);
	else if (!strcmp(kind, "tls") || !strcmp(kind, "dns"))
		snprintf(cf, sizeof(cf), CONF_LIST, list);
	else
		snprintf(cf, sizeof(cf), "%s", CONF_SMALL);
	rcu_register_thread();
	if (conf_load_buffer("rxloop.conf", cf, strlen(cf), &c, NULL) ||
	    !(pol = policy_build(c, 1, NULL)) ||
	    queue_alloc(&q, &(struct queue_place){ .cpu = -1 }, &c->opts)) {
		fprintf(stderr, "nfqd-rxloop: no policy or queue (%s)\n", list);
		return 1;
	}
	for (long b = 0; b < batches; b++) {
		double t0, t1, t2;

		for (int i = 0; i < NB; i++) {
			size_t n = next_pkt(kind, pkt);

			q->msgs[i].msg_len = mkmsg(q->rx + (size_t)i * q->rx_each,
						   id++, pkt, n);
			q->msgs[i].msg_hdr.msg_flags = 0;
		}
		for (size_t j = 0; j < junk_n; j += 64)
			junk[j]++;
		t0 = now_s();
		sink += floor_batch(q, NB);
		t1 = now_s();
		queue_judge_batch(q, pol, NB);
		verdict_batch_build(&q->vb);
		verdict_batch_sent(&q->vb);
		queue_counters_publish(q);
		t2 = now_s();
		t_f += t1 - t0;
		t_q += t2 - t1;
	}
	printf("%s%s: nfqd %.1f ns a packet, floor %.1f (%ld packets)\n",
	       kind, empty ? " (empty policy)" : "",
	       t_q * 1e9 / (double)(batches * NB),
	       t_f * 1e9 / (double)(batches * NB), batches * NB);
	return 0;
}
