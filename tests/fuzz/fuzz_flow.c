/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_flow.c - libFuzzer target for the flow table (src/flow.c): the
 * input is a run of receive batches of TCP and UDP packets of a few
 * flows (SYNs, segments of a ClientHello, an HTTP request or a DNS query
 * at any offset, other bytes, copies cut short, reversed directions,
 * idle times), judged twice: by one table as the queue judges a batch
 * (flow_ahead() on all of it first, flow_ahead_line() FLOW_AHEAD ahead,
 * its slot hints going stale as the packets before change the table),
 * and by another packet by packet without the look-ahead. Up to the
 * first eviction of a live flow (the same packet's in both; after it the
 * two may choose other victims, having placed flows in other slots of a
 * bucket) both must give every packet the same names and fate.
 * Always: a TCP segment whose flow is not found is INCOMPLETE, never
 * taken for one without a name; a name found is in normal form; the
 * counters stay within the table's bounds.
 */
#include <assert.h>
#include <netinet/in.h>
/* after netinet/in.h, which it would otherwise clash with */
#include <linux/netfilter.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "flow.h"
#include "names.h"
#include "name_check.h"
#include "pkt.h"
#include "../common/namewire.h"

#define FLOWS 8		/* flows of the input: endpoints below */
#define BATCH_MAX 16	/* packets of a receive batch */
#define DATA_MAX 2048	/* bytes of one segment's payload */
#define TIMEOUT_S 2	/* the tables' idle timeout */

/* The input, read a byte at a time; 0 once it is used up. */
struct input {
	const uint8_t *d;
	size_t n, at;
};

static uint8_t byte(struct input *in)
{
	return in->at < in->n ? in->d[in->at++] : 0;
}

static bool more(const struct input *in)
{
	return in->at < in->n;
}

/* The client streams of the flows: flow K sends stream K % 4 to its
 * server port (a ClientHello and an HTTP request to 443 and 80, a DNS
 * query over TCP to 53, and a browser's ClientHello of 1,455 bytes
 * whose server_name follows a post-quantum key share: tests/common/
 * namewire.h). */
#define STREAMS 4
static uint8_t stream[STREAMS][DATA_MAX];
static size_t stream_len[STREAMS];
static const uint16_t stream_port[STREAMS] = { 443, 80, 53, 443 };

static void make_streams(void)
{
	static const char http[] =
		"GET / HTTP/1.1\r\nUser-Agent: x\r\nHost: WWW.Example.NET.\r\n"
		"\r\n";

	if (stream_len[0])
		return;
	stream_len[0] = wire_client_hello(stream[0], "example.com", 0, false);
	stream_len[1] = sizeof(http) - 1;
	memcpy(stream[1], http, stream_len[1]);
	/* over TCP: the query after its length */
	stream_len[2] = 2 + wire_dns_query(stream[2] + 2, 0x1234,
					   "mail.Example.org", 1);
	wire_put16(stream[2], stream_len[2] - 2);
	stream_len[3] = wire_client_hello(stream[3], "b.example.com", 3, true);
}

/* One packet of the input, as a queue receives it. */
struct fpkt {
	uint8_t buf[60 + DATA_MAX];
	struct pkt p;
	unsigned flow;		/* 0 .. FLOWS - 1 */
	bool reverse;		/* server to client */
	bool syn;		/* a SYN without ACK (starts a flow) */
	bool tcp;
};

/* Flow K's ends: IPv4 for K < 6, else IPv6; the client's port 40000 + K. */
static void put_addrs(uint8_t *b, unsigned k, bool v6, bool reverse)
{
	uint8_t c[16] = { 0 }, s[16] = { 0 };
	size_t n = v6 ? 16 : 4;

	if (v6) {
		c[0] = s[0] = 0x20;
		c[1] = s[1] = 0x01;
		c[2] = s[2] = 0x0d;
		c[3] = s[3] = 0xb8;
		c[15] = (uint8_t)(1 + k % 2);
		s[15] = 7;
	} else {
		memcpy(c, "\xc0\x00\x02\x00", 4);
		c[3] = (uint8_t)(1 + k % 2);
		memcpy(s, "\xc6\x33\x64\x07", 4);
	}
	memcpy(b, reverse ? s : c, n);
	memcpy(b + n, reverse ? c : s, n);
}

/* The IP and transport header of P (LEN payload bytes, PROTO) before
 * its payload; the header's length. */
static size_t put_headers(struct fpkt *f, uint8_t proto, size_t len,
			  uint16_t cport, uint16_t sport)
{
	bool v6 = f->flow >= 6;
	size_t ih = v6 ? 40 : 20, th = proto == IPPROTO_TCP ? 20 : 8;
	uint8_t *b = f->buf, *t = f->buf + ih;

	memset(b, 0, ih + th);
	if (v6) {
		b[0] = 0x60;
		wire_put16(b + 4, th + len);
		b[6] = proto;
		b[7] = 64;
		put_addrs(b + 8, f->flow, true, f->reverse);
	} else {
		b[0] = 0x45;
		wire_put16(b + 2, ih + th + len);
		b[8] = 64;
		b[9] = proto;
		put_addrs(b + 12, f->flow, false, f->reverse);
	}
	wire_put16(t, f->reverse ? sport : cport);
	wire_put16(t + 2, f->reverse ? cport : sport);
	if (proto == IPPROTO_UDP)
		wire_put16(t + 4, th + len);
	else
		t[12] = 0x50;
	return ih + th;
}

static const uint8_t tcp_flags[8] = {
	TCPF_SYN, TCPF_ACK, TCPF_PSH | TCPF_ACK, TCPF_SYN | TCPF_ACK,
	TCPF_FIN | TCPF_ACK, TCPF_RST, TCPF_PSH | TCPF_ACK, TCPF_ACK,
};

/* The payload of a packet of flow K into D, its length: K's stream's
 * bytes from OFF, or the input's own. */
static size_t payload(struct input *in, unsigned k, uint8_t how, size_t off,
		      uint8_t *d)
{
	size_t len = byte(in) % 4 == 0 ? 0 : (size_t)byte(in) * 8 % 1601;
	const uint8_t *s = stream[k % STREAMS];
	size_t sl = stream_len[k % STREAMS];

	if (how & 0x20) {		/* the input's bytes */
		for (size_t i = 0; i < len; i++)
			d[i] = byte(in);
		return len;
	}
	if (off >= sl)
		return 0;
	if (len > sl - off)
		len = sl - off;
	memcpy(d, s + off, len);
	return len;
}

/* Read packet F of the input. */
static void read_packet(struct input *in, struct fpkt *f)
{
	uint8_t how = byte(in);
	unsigned k = how % FLOWS;
	uint16_t cport = (uint16_t)(40000 + k), sport = stream_port[k % 4];
	size_t off = 0, len, hl;
	uint32_t isn = 1000u * (k + 1), seq;

	f->flow = k;
	f->reverse = how & 0x08;
	f->tcp = (how & 0x10) == 0 || k % 4 != 2;
	if (!f->tcp) {			/* UDP: DNS, or anything to 443 */
		sport = how & 0x40 ? 443 : 53;
		len = payload(in, 2, how, 2, f->buf + 60);
		hl = put_headers(f, IPPROTO_UDP, len, cport, sport);
		f->syn = false;
	} else {
		uint8_t fl = tcp_flags[byte(in) % 8];

		/* Mostly 16-byte steps, now and then any byte's offset. */
		off = (size_t)byte(in) * 16;
		if (byte(in) % 4 == 0)
			off = off / 16 * 8 + byte(in) % 8;
		seq = fl & TCPF_SYN ? isn : isn + 1 + (uint32_t)off;
		if (how & 0x80) {	/* a sequence number of the input's */
			seq = (uint32_t)byte(in) << 24;
			seq |= byte(in);
		}
		len = fl & TCPF_SYN ? 0 : payload(in, k, how, off,
						  f->buf + 60);
		hl = put_headers(f, IPPROTO_TCP, len, cport, sport);
		wire_put16(f->buf + hl - 16, seq >> 16);
		wire_put16(f->buf + hl - 14, seq);
		f->buf[hl - 7] = fl;
		f->syn = (fl & (TCPF_SYN | TCPF_ACK)) == TCPF_SYN;
	}
	memmove(f->buf + hl, f->buf + 60, len);
	memset(&f->p, 0, sizeof(f->p));
	f->p.family = f->flow >= 6 ? NFPROTO_IPV6 : NFPROTO_IPV4;
	f->p.payload = f->buf;
	f->p.orig_len = (uint32_t)(hl + len);
	f->p.payload_len = f->p.orig_len;
	if (byte(in) % 8 == 0)		/* a copy cut short */
		f->p.payload_len = (uint32_t)(byte(in) % (hl + len + 1));
	pkt_parse_headers(&f->p);
}

/* What a table gave one packet. */
struct answer {
	struct pkt_names n;
	enum flow_fate fate;
	bool flow;		/* it found or made the packet's flow */
	uint64_t evictions;	/* the table's, after the packet */
};

/* The invariants of answer A, table T's (of SLOTS flows) to packet F
 * whose flow is FL; then, as a policy would, drop the flows named below
 * example.com. */
static void check(const struct flowtab *t, size_t slots,
		  const struct fpkt *f, struct answer *a, void *fl)
{
	const struct flow_counters *c = flowtab_counters(t);

	a->flow = fl != NULL;
	a->evictions = c->evictions;
	if (a->n.state == PKT_PRESENT)
		check_name(&a->n.n);
	assert(c->flows <= slots && c->pending <= c->flows &&
	       c->pending <= FLOW_PENDING_MAX);
	/* A readable segment of no flow (never started, evicted, idle
	 * too long) is INCOMPLETE: its flow's name is not known. */
	if (f->tcp && !f->syn && !fl && f->p.l4 == PKT_PRESENT &&
	    f->p.th_copied >= 20)
		assert(a->n.state == PKT_INCOMPLETE);
	if (fl && a->n.state == PKT_PRESENT && a->n.n.len > 12 &&
	    !strcmp(a->n.n.name + a->n.n.len - 12, ".example.com"))
		flow_note_drop(fl);
}

static bool same(const struct answer *x, const struct answer *y)
{
	return x->n.state == y->n.state && x->n.proto == y->n.proto &&
	       x->fate == y->fate && x->flow == y->flow &&
	       x->evictions == y->evictions &&
	       x->n.n.len == y->n.n.len && x->n.n.qtype == y->n.n.qtype &&
	       x->n.n.ech == y->n.n.ech &&
	       !memcmp(x->n.n.name, y->n.n.name, x->n.n.len);
}

/* The counters of the two tables agree, but for the flows held now (and
 * those gathering): a flow idle too long stays in the table until a
 * lookup or a new flow clears its slot, and the two tables may have
 * placed it, and the new flows, in other slots of its bucket. */
static void same_counts(const struct flow_counters *a,
			const struct flow_counters *b)
{
	assert(a->created == b->created && a->evictions == b->evictions &&
	       a->names == b->names && a->incomplete == b->incomplete);
}

/* Batch B (N packets) through T the queue's way: every packet's
 * flow_ahead() first, then each judged after flow_ahead_line() of the
 * packet FLOW_AHEAD ahead (src/queue.c, names_ahead() and
 * flows_ahead()). */
static void judge_ahead(struct flowtab *t, size_t slots, struct fpkt *b,
			int n, uint64_t now, struct answer *out)
{
	static struct flow_ahead fa[BATCH_MAX];

	for (int i = 0; i < n; i++)
		flow_ahead(t, &b[i].p, &fa[i], NULL);
	for (int i = 0; i < n; i++) {
		void *fl;

		for (int k = i == 0 ? 0 : i + FLOW_AHEAD;
		     k <= i + FLOW_AHEAD && k < n; k++)
			flow_ahead_line(t, &b[k].p, &fa[k],
					k ? &fa[k - 1] : NULL, now);
		fl = flow_names(t, &b[i].p, now, &fa[i], &out[i].n,
				&out[i].fate);
		check(t, slots, &b[i], &out[i], fl);
	}
}

/* ... and packet by packet, without the look-ahead. */
static void judge_plain(struct flowtab *t, size_t slots, struct fpkt *b,
			int n, uint64_t now, struct answer *out)
{
	for (int i = 0; i < n; i++) {
		void *fl = flow_names(t, &b[i].p, now, NULL, &out[i].n,
				      &out[i].fate);

		check(t, slots, &b[i], &out[i], fl);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t dns[] = { 53 };
	static struct fpkt batch[BATCH_MAX];
	static struct answer x[BATCH_MAX], y[BATCH_MAX];
	struct input in = { data, size, 0 };
	size_t slots = (size_t)8 << (byte(&in) % 4);
	struct flowtab *ta = flowtab_new(slots, TIMEOUT_S, dns, 1);
	struct flowtab *tp = flowtab_new(slots, TIMEOUT_S, dns, 1);
	uint64_t now = 1000000000ull;
	bool evicted = false;

	make_streams();
	assert(ta && tp);
	/* The same buckets in both, and from one run to the next. */
	flowtab_set_seed(ta, 0x9e3779b97f4a7c15ull);
	flowtab_set_seed(tp, 0x9e3779b97f4a7c15ull);
	while (more(&in)) {
		int n = 1 + byte(&in) % BATCH_MAX;
		uint8_t idle = byte(&in);

		/* The coarse clock's step, or an idle time past the
		 * timeout now and then. */
		now += idle >= 0xf0 ? (uint64_t)(idle - 0xee) * 1000000000ull
				    : 4000000ull;
		for (int i = 0; i < n; i++)
			read_packet(&in, &batch[i]);
		judge_ahead(ta, slots, batch, n, now, x);
		judge_plain(tp, slots, batch, n, now, y);
		if (evicted)
			continue;
		/* Up to and with the first eviction (the same packet's in
		 * both: the same flows live in the same buckets). */
		for (int i = 0; i < n && !evicted; i++) {
			assert(same(&x[i], &y[i]));
			evicted = x[i].evictions > 0;
		}
		if (!evicted)
			same_counts(flowtab_counters(ta),
				    flowtab_counters(tp));
	}
	flowtab_free(ta);
	flowtab_free(tp);
	return 0;
}
