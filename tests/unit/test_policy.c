/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_policy.c - unit tests of policy compilation and judging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <ev.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "conf_fixture.h"
#include "ifcache.h"
#include "pkt.h"
#include "names.h"
#include "policy.h"
#include "verdict.h"

/* ---- building a struct conf by hand (the parser's job in the daemon) */

static struct conf *conf_new(void)
{
	struct conf *c = calloc(1, sizeof(*c));

	c->path = "test.conf";
	c->opts.bypass_mark = 0x40000000;
	c->opts.incomplete_verdict = VERDICT_DROP;	/* the default */
	return c;
}

static struct conf_rule *rule(struct conf *c, enum conf_hook_id h,
			      enum verdict_kind v, const char *text)
{
	struct conf_hook *hk = &c->hooks[h];
	struct conf_rule *r;

	hk->present = true;
	hk->rules = realloc(hk->rules, (hk->n_rules + 1) * sizeof(*r));
	r = &hk->rules[hk->n_rules++];
	memset(r, 0, sizeof(*r));
	r->verdict = v;
	r->text = (char *)text;
	r->loc = (struct conf_loc){ "test.conf", 10 + hk->n_rules, 5 };
	return r;
}

static struct conf_match *match(struct conf_rule *r, enum match_field f,
				bool negate)
{
	struct conf_match *m;

	r->matches = realloc(r->matches, (r->n_matches + 1) * sizeof(*m));
	m = &r->matches[r->n_matches++];
	memset(m, 0, sizeof(*m));
	m->field = f;
	m->negate = negate;
	m->mask = 0xffffffff;
	m->loc = (struct conf_loc){ "test.conf", r->loc.line, 7 };
	return m;
}

static struct conf_elem *elem(struct conf_elem **v, unsigned *n)
{
	struct conf_elem *e;

	*v = realloc(*v, (*n + 1) * sizeof(*e));
	e = &(*v)[(*n)++];
	memset(e, 0, sizeof(*e));
	e->loc = (struct conf_loc){ "test.conf", 1, 1 };
	return e;
}

static void num(struct conf_match *m, uint64_t lo, uint64_t hi)
{
	struct conf_elem *e = elem(&m->elems, &m->n_elems);

	e->kind = ELEM_NUM;
	e->lo = lo;
	e->hi = hi;
}

static void addr(struct conf_match *m, const char *text)
{
	fill_addr(elem(&m->elems, &m->n_elems), text);
}

static void str(struct conf_match *m, const char *s)
{
	struct conf_elem *e = elem(&m->elems, &m->n_elems);

	e->kind = ELEM_STR;
	e->str = (char *)s;
}

static struct conf_set *set(struct conf *c, const char *name,
			    enum set_type t, bool interval)
{
	struct conf_set *s;

	c->sets = realloc(c->sets, (c->n_sets + 1) * sizeof(*s));
	s = &c->sets[c->n_sets++];
	memset(s, 0, sizeof(*s));
	s->name = (char *)name;
	s->type = t;
	s->interval = interval;
	s->loc = (struct conf_loc){ "test.conf", 3, 1 };
	return s;
}

/* The interface names the policies built here read (the daemon's
 * struct nfqd owns its own, fed by rtnetlink). */
static struct ifcache *names;

/* policy_build() with the errors as "FILE:LINE:COL: message\n" lines. */
static struct policy *build_errs(struct conf *c, unsigned nslots, char **err)
{
	struct diags d = { 0 };
	struct policy *p = policy_build(c, nslots, &d);

	*err = diag_join(&d, DIAG_ERROR);
	diag_free(&d);
	return p;
}

static struct policy *build(struct conf *c, unsigned nslots)
{
	char *err = NULL;
	struct policy *p = build_errs(c, nslots, &err);

	if (!p)
		fail_msg("policy_build: %s", err);
	free(err);
	policy_use_ifcache(p, names);
	return p;
}

static char *build_err(struct conf *c)
{
	char *err = NULL;
	struct policy *p = build_errs(c, 1, &err);

	assert_null(p);
	assert_non_null(err);
	return err;
}

/* ---- packets */

static uint8_t raw[2048];

struct pk {
	const char *src, *dst;
	uint8_t proto;
	uint16_t sport, dport;
	uint8_t tcp_flags, icmp_type;
};

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static struct pkt mkpkt(enum conf_hook_id hook, const struct pk *k)
{
	struct pkt p = { 0 };
	bool v6 = strchr(k->src, ':');
	size_t hl = v6 ? 40 : 20, l4 = k->proto == IPPROTO_TCP ? 20 : 12;
	uint8_t *t = raw + hl;

	memset(raw, 0, sizeof(raw));
	if (v6) {
		raw[0] = 0x60;
		put16(raw + 4, (uint16_t)l4);
		raw[6] = k->proto;
		inet_pton(AF_INET6, k->src, raw + 8);
		inet_pton(AF_INET6, k->dst, raw + 24);
	} else {
		raw[0] = 0x45;
		put16(raw + 2, (uint16_t)(hl + l4));
		raw[9] = k->proto;
		inet_pton(AF_INET, k->src, raw + 12);
		inet_pton(AF_INET, k->dst, raw + 16);
	}
	if (k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6) {
		t[0] = k->icmp_type;
	} else {
		put16(t, k->sport);
		put16(t + 2, k->dport);
		t[12] = 5 << 4;
		t[13] = k->tcp_flags;
	}
	p.hook = (uint8_t)hook;
	p.family = v6 ? NFPROTO_IPV6 : NFPROTO_IPV4;
	p.payload = raw;
	p.payload_len = (uint32_t)(hl + l4);
	p.orig_len = p.payload_len;
	pkt_parse_headers(&p);
	return p;
}

static uint32_t judge(struct policy *p, const struct pkt *k)
{
	struct decision d;

	policy_judge(p, k, 0, &d);
	return d.verdict;
}

#define TCP4(s, d, sp, dp) \
	(&(struct pk){ s, d, IPPROTO_TCP, sp, dp, TCPF_SYN, 0 })
#define UDP4(s, d, sp, dp) \
	(&(struct pk){ s, d, IPPROTO_UDP, sp, dp, 0, 0 })

/* ---- tests */

static void test_empty_accepts(void **state)
{
	struct conf *c = conf_new();
	struct policy *p = build(c, 2);
	struct pkt k;

	for (int h = 0; h < HOOK_MAX; h++) {
		k = mkpkt((enum conf_hook_id)h,
			  TCP4("1.1.1.1", "2.2.2.2", 1, 2));
		assert_int_equal(judge(p, &k), NF_ACCEPT);
		assert_int_equal(policy_rule_count(p, (enum conf_hook_id)h), 0);
		assert_int_equal(policy_hook_policy(p, (enum conf_hook_id)h),
				 VERDICT_ACCEPT);
		assert_int_equal(policy_policy_packets(p,
					(enum conf_hook_id)h), 1);
	}
	assert_int_equal(policy_kernel_flags(p), 0);
	assert_null(policy_flag_user(p, NFQA_CFG_F_CONNTRACK));
	policy_free(p);
	free_conf(c);
}

static void test_addresses_and_family(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	struct policy *p;
	struct pkt k;
	uint64_t pk, by;

	r = rule(c, HOOK_INPUT, VERDICT_DROP, "ip saddr 192.0.2.0/24 drop");
	addr(match(r, MATCH_IP_SADDR, false), "192.0.2.0/24");
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "ip daddr != 10.0.0.1-10.0.0.5 "
		 "ip saddr 10.9.0.0/16 drop");
	addr(match(r, MATCH_IP_DADDR, true), "10.0.0.1-10.0.0.5");
	addr(match(r, MATCH_IP_SADDR, false), "10.9.0.0/16");
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "ip6 saddr 2001:db8::/32 drop");
	addr(match(r, MATCH_IP6_SADDR, false), "2001:db8::/32");
	r = rule(c, HOOK_INPUT, VERDICT_REPEAT,
		 "ip6 daddr { ::1, ::2 } repeat");
	m = match(r, MATCH_IP6_DADDR, false);
	addr(m, "::1");
	addr(m, "::2");
	p = build(c, 1);

	assert_int_equal(policy_rule_count(p, HOOK_INPUT), 4);
	assert_string_equal(policy_rule_text(p, HOOK_INPUT, 2),
			    "ip6 saddr 2001:db8::/32 drop");
	k = mkpkt(HOOK_INPUT, TCP4("192.0.2.77", "1.1.1.1", 1, 2));
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_OUTPUT, TCP4("192.0.2.77", "1.1.1.1", 1, 2));
	assert_int_equal(judge(p, &k), NF_ACCEPT);	/* other hook */
	k = mkpkt(HOOK_INPUT, TCP4("192.0.3.1", "1.1.1.1", 1, 2));
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	k = mkpkt(HOOK_INPUT, TCP4("10.9.1.1", "10.0.0.3", 1, 2));
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	k = mkpkt(HOOK_INPUT, TCP4("10.9.1.1", "10.0.0.6", 1, 2));
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_INPUT, TCP4("2001:db8:1::1", "::3", 1, 2));
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_INPUT, TCP4("2001:db9::1", "::2", 1, 2));
	assert_int_equal(judge(p, &k), NF_REPEAT);
	k = mkpkt(HOOK_INPUT, TCP4("2001:db9::1", "::3", 1, 2));
	assert_int_equal(judge(p, &k), NF_ACCEPT);

	policy_rule_counters(p, HOOK_INPUT, 0, &pk, &by);
	assert_int_equal(pk, 1);
	assert_int_equal(by, 40);
	policy_rule_counters(p, HOOK_INPUT, 1, &pk, &by);
	assert_int_equal(pk, 1);
	assert_int_equal(policy_policy_packets(p, HOOK_INPUT), 3);
	assert_int_equal(policy_policy_packets(p, HOOK_OUTPUT), 1);

	/* Reset: a baseline, then counting goes on from zero. */
	policy_counters_reset(p);
	policy_rule_counters(p, HOOK_INPUT, 0, &pk, &by);
	assert_int_equal(pk + by, 0);
	assert_int_equal(policy_policy_packets(p, HOOK_INPUT), 0);
	k = mkpkt(HOOK_INPUT, TCP4("192.0.2.1", "1.1.1.1", 1, 2));
	judge(p, &k);
	policy_rule_counters(p, HOOK_INPUT, 0, &pk, &by);
	assert_int_equal(pk, 1);
	/* A slot beyond nslots is judged but not counted. */
	{
		struct decision d;

		policy_judge(p, &k, 7, &d);
		assert_int_equal(d.verdict, NF_DROP);
		policy_rule_counters(p, HOOK_INPUT, 0, &pk, &by);
		assert_int_equal(pk, 1);
	}
	policy_free(p);
	free_conf(c);
}

static struct policy *from_text(const char *text, struct conf **c)
{
	assert_int_equal(conf_load_buffer("t.conf", text, strlen(text), c,
					  NULL), 0);
	return build(*c, 1);
}

/* A reload's policy goes on from the old one's counters of the rules
 * it keeps: same hook, same text, equal texts paired in order. */
static void test_counters_carried(void **state)
{
	struct conf *c1 = NULL, *c2 = NULL;
	struct policy *old = from_text("hook input { tcp dport 1 drop; "
				       "tcp dport 2 drop; tcp dport 1 drop; "
				       "udp dport 3 drop; }\n", &c1);
	struct policy *p = from_text("hook input { tcp dport 9 drop; "
				     "tcp dport 1 drop; tcp dport 1 drop; "
				     "tcp dport 2 drop; }\n"
				     "hook output { tcp dport 2 drop; }\n", &c2);
	uint64_t pk, by;
	struct pkt k;

	(void)state;
	k = mkpkt(HOOK_INPUT, TCP4("192.0.2.1", "192.0.2.2", 5, 1));
	judge(old, &k);			/* the first "tcp dport 1" */
	k = mkpkt(HOOK_INPUT, TCP4("192.0.2.1", "192.0.2.2", 5, 2));
	judge(old, &k);
	judge(old, &k);
	k = mkpkt(HOOK_INPUT, TCP4("192.0.2.1", "192.0.2.2", 5, 4));
	judge(old, &k);			/* the policy */
	policy_carry_counters(p, old);
	policy_rule_counters(p, HOOK_INPUT, 0, &pk, &by);
	assert_int_equal(pk, 0);	/* a new text */
	policy_rule_counters(p, HOOK_INPUT, 1, &pk, &by);
	assert_int_equal(pk, 1);	/* the first "tcp dport 1" */
	assert_int_equal(by, 40);
	policy_rule_counters(p, HOOK_INPUT, 2, &pk, &by);
	assert_int_equal(pk, 0);	/* the second */
	policy_rule_counters(p, HOOK_INPUT, 3, &pk, &by);
	assert_int_equal(pk, 2);
	policy_rule_counters(p, HOOK_OUTPUT, 0, &pk, &by);
	assert_int_equal(pk, 0);	/* the same text in another hook */
	assert_int_equal(policy_policy_packets(p, HOOK_INPUT), 1);
	/* Counting goes on from there; a reset starts from zero again. */
	judge(p, &k);
	assert_int_equal(policy_policy_packets(p, HOOK_INPUT), 2);
	policy_counters_reset(p);
	policy_rule_counters(p, HOOK_INPUT, 3, &pk, &by);
	assert_int_equal(pk + by, 0);
	assert_int_equal(policy_policy_packets(p, HOOK_INPUT), 0);
	policy_free(old);
	policy_free(p);
	conf_free(c1);
	conf_free(c2);
}

static void test_ports_protocols(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	struct policy *p;
	struct pkt k;

	c->hooks[HOOK_FORWARD].present = true;
	c->hooks[HOOK_FORWARD].policy = VERDICT_DROP;
	r = rule(c, HOOK_FORWARD, VERDICT_DROP, "tcp dport { 23, 2323 } drop");
	m = match(r, MATCH_TCP_DPORT, false);
	num(m, 23, 23);
	num(m, 2323, 2323);
	r = rule(c, HOOK_FORWARD, VERDICT_ACCEPT, "udp dport 5000-5100 accept");
	num(match(r, MATCH_UDP_DPORT, false), 5000, 5100);
	r = rule(c, HOOK_FORWARD, VERDICT_QUEUE, "tcp sport != 22 queue 7");
	num(match(r, MATCH_TCP_SPORT, true), 22, 22);
	r->queue_num = 7;
	r = rule(c, HOOK_FORWARD, VERDICT_ACCEPT, "tcp flags syn,ack accept");
	match(r, MATCH_TCP_FLAGS, false)->flags = TCPF_SYN | TCPF_ACK;
	r = rule(c, HOOK_FORWARD, VERDICT_ACCEPT, "icmp type echo-request "
		 "accept");
	num(match(r, MATCH_ICMP_TYPE, false), 8, 8);
	r = rule(c, HOOK_FORWARD, VERDICT_ACCEPT, "icmpv6 type 128 accept");
	num(match(r, MATCH_ICMPV6_TYPE, false), 128, 128);
	r = rule(c, HOOK_FORWARD, VERDICT_ACCEPT, "meta l4proto sctp accept");
	num(match(r, MATCH_META_L4PROTO, false), IPPROTO_SCTP, IPPROTO_SCTP);
	r = rule(c, HOOK_FORWARD, VERDICT_REPEAT, "ip protocol 17 repeat");
	num(match(r, MATCH_IP_PROTOCOL, false), 17, 17);
	p = build(c, 1);

	k = mkpkt(HOOK_FORWARD, TCP4("1.1.1.1", "2.2.2.2", 22, 2323));
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_FORWARD, UDP4("1.1.1.1", "2.2.2.2", 22, 23));
	assert_int_equal(judge(p, &k), NF_REPEAT);	/* not tcp */
	k = mkpkt(HOOK_FORWARD, UDP4("1.1.1.1", "2.2.2.2", 22, 5100));
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	k = mkpkt(HOOK_FORWARD, UDP4("::1", "::2", 22, 5101));
	assert_int_equal(judge(p, &k), NF_DROP);	/* v6: no ip protocol */
	k = mkpkt(HOOK_FORWARD, TCP4("1.1.1.1", "2.2.2.2", 21, 80));
	assert_int_equal(judge(p, &k), NF_QUEUE_NR(7));
	k = mkpkt(HOOK_FORWARD, &(struct pk){ "1.1.1.1", "2.2.2.2",
		  IPPROTO_TCP, 22, 80, TCPF_SYN, 0 });
	assert_int_equal(judge(p, &k), NF_DROP);	/* syn only */
	k = mkpkt(HOOK_FORWARD, &(struct pk){ "1.1.1.1", "2.2.2.2",
		  IPPROTO_TCP, 22, 80, TCPF_SYN | TCPF_ACK | TCPF_PSH, 0 });
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	k = mkpkt(HOOK_FORWARD, &(struct pk){ "1.1.1.1", "2.2.2.2",
		  IPPROTO_ICMP, 0, 0, 0, 8 });
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	k = mkpkt(HOOK_FORWARD, &(struct pk){ "1.1.1.1", "2.2.2.2",
		  IPPROTO_ICMP, 0, 0, 0, 0 });
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_FORWARD, &(struct pk){ "::1", "::2",
		  IPPROTO_ICMPV6, 0, 0, 0, 128 });
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	k = mkpkt(HOOK_FORWARD, &(struct pk){ "::1", "::2",
		  IPPROTO_ICMP, 0, 0, 0, 8 });
	assert_int_equal(judge(p, &k), NF_DROP);	/* icmp is v4 only */
	k = mkpkt(HOOK_FORWARD, &(struct pk){ "::1", "::2",
		  IPPROTO_SCTP, 1, 2, 0, 0 });
	assert_int_equal(judge(p, &k), NF_ACCEPT);

	/* A copy cut inside the ports: the first rule cannot decide, no
	 * later one may; the packet gets incomplete-verdict (drop). */
	k = mkpkt(HOOK_FORWARD, TCP4("1.1.1.1", "2.2.2.2", 21, 80));
	k.payload_len = 22;
	pkt_parse_headers(&k);
	assert_int_equal(judge(p, &k), NF_DROP);
	policy_free(p);
	free_conf(c);
}

/* A set of at most CMATCH_SPANS ranges is compared inline (policy.c
 * find_spans()): its edges, the whole range, merged neighbours, a named
 * set, two and four values, and five that must go to the lookup. */
static void test_one_range(void **state)
{
	static const struct { uint16_t dport; uint32_t v; } want[] = {
		{ 99, NF_DROP }, { 100, NF_ACCEPT }, { 200, NF_ACCEPT },
		{ 201, NF_DROP }, { 6, NF_DROP }, { 7, NF_REPEAT },
		{ 8, NF_REPEAT }, { 9, NF_DROP }, { 0, NF_QUEUE_NR(3) },
		{ 65535, NF_QUEUE_NR(4) }, { 300, NF_QUEUE_NR(5) },
		{ 302, NF_QUEUE_NR(5) }, { 301, NF_DROP },
		{ 506, NF_QUEUE_NR(6) }, { 505, NF_DROP },
		{ 408, NF_QUEUE_NR(7) }, { 407, NF_DROP },
		{ 400, NF_QUEUE_NR(7) },
	};
	struct conf *c = conf_new();
	struct conf_set *cs = set(c, "hi", SET_INET_SERVICE, false);
	struct conf_elem *e = elem(&cs->elems, &cs->n_elems);
	struct conf_rule *r;
	struct conf_match *m;
	struct policy *p;

	e->kind = ELEM_NUM;
	e->lo = e->hi = 65535;

	c->hooks[HOOK_INPUT].policy = VERDICT_DROP;
	r = rule(c, HOOK_INPUT, VERDICT_ACCEPT, "udp dport 100-200 accept");
	num(match(r, MATCH_UDP_DPORT, false), 100, 200);
	r = rule(c, HOOK_INPUT, VERDICT_QUEUE, "ip saddr 0.0.0.0/0 udp dport 0 "
		 "queue 3");
	addr(match(r, MATCH_IP_SADDR, false), "0.0.0.0/0");
	num(match(r, MATCH_UDP_DPORT, false), 0, 0);
	r->queue_num = 3;
	r = rule(c, HOOK_INPUT, VERDICT_REPEAT, "udp dport { 7, 8 } repeat");
	num(match(r, MATCH_UDP_DPORT, false), 7, 7);
	num(r->matches, 8, 8);
	r = rule(c, HOOK_INPUT, VERDICT_QUEUE, "udp dport @hi queue 4");
	match(r, MATCH_UDP_DPORT, false)->set_name = "hi";
	r->queue_num = 4;
	r = rule(c, HOOK_INPUT, VERDICT_QUEUE, "udp dport { 300, 302 } "
		 "queue 5");
	num(match(r, MATCH_UDP_DPORT, false), 300, 300);
	num(r->matches, 302, 302);
	r->queue_num = 5;
	r = rule(c, HOOK_INPUT, VERDICT_QUEUE, "udp dport { 500, 502, 504, "
		 "506 } queue 6");
	m = match(r, MATCH_UDP_DPORT, false);
	for (unsigned i = 0; i < 4; i++)
		num(m, 500 + 2 * i, 500 + 2 * i);
	r->queue_num = 6;
	r = rule(c, HOOK_INPUT, VERDICT_QUEUE, "udp dport { 400, 402, 404, "
		 "406, 408 } queue 7");
	m = match(r, MATCH_UDP_DPORT, false);
	for (unsigned i = 0; i < 5; i++)
		num(m, 400 + 2 * i, 400 + 2 * i);
	r->queue_num = 7;
	p = build(c, 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct pkt k = mkpkt(HOOK_INPUT, UDP4("192.0.2.1", "192.0.2.2",
						      1, want[i].dport));

		assert_int_equal(judge(p, &k), want[i].v);
	}
	policy_free(p);
	free_conf(c);
}

static void test_interfaces(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	struct policy *p;
	struct pkt k;
	char name[16];

	assert_false(ifcache_name(NULL, 900, name));	/* no cache */
	assert_false(ifcache_name(names, 900, name));	/* not yet known */
	ifcache_set(names, 900, "lan0");
	ifcache_set(names, 901, "wan0");
	ifcache_set(names, 902, "veth7");
	assert_true(ifcache_name(names, 900, name));
	assert_string_equal(name, "lan0");

	r = rule(c, HOOK_FORWARD, VERDICT_DROP, "iifname \"wan0\" drop");
	str(match(r, MATCH_IIFNAME, false), "wan0");
	r = rule(c, HOOK_FORWARD, VERDICT_REPEAT, "oifname { veth*, x } "
		 "repeat");
	m = match(r, MATCH_OIFNAME, false);
	str(m, "veth*");
	str(m, "x");
	r = rule(c, HOOK_OUTPUT, VERDICT_DROP, "iifname != \"lan0\" drop");
	str(match(r, MATCH_IIFNAME, true), "lan0");
	p = build(c, 1);

	k = mkpkt(HOOK_FORWARD, TCP4("1.1.1.1", "2.2.2.2", 1, 2));
	k.flags |= PKT_HAS_INDEV | PKT_HAS_OUTDEV;
	k.indev = 900;
	k.outdev = 901;
	assert_int_equal(judge(p, &k), NF_ACCEPT);	/* never swapped */
	k.indev = 901;
	k.outdev = 900;
	assert_int_equal(judge(p, &k), NF_DROP);
	k.indev = 900;
	k.outdev = 902;
	assert_int_equal(judge(p, &k), NF_REPEAT);
	/* Renames are followed: the match is by name. */
	ifcache_set(names, 902, "eth9");
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	ifcache_set(names, 900, "wan0");
	assert_int_equal(judge(p, &k), NF_DROP);
	ifcache_set(names, 900, "lan0");

	/* Output hook: no input device, "iifname != lan0" holds (nft). */
	k = mkpkt(HOOK_OUTPUT, TCP4("1.1.1.1", "2.2.2.2", 1, 2));
	k.flags |= PKT_HAS_OUTDEV;
	k.outdev = 901;
	assert_int_equal(judge(p, &k), NF_DROP);
	k.flags |= PKT_HAS_INDEV;
	k.indev = 900;
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	ifcache_set(names, 900, NULL);
	assert_false(ifcache_name(names, 900, name));
	policy_free(p);
	free_conf(c);
}

static void test_meta_and_statements(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	struct policy *p;
	struct pkt k;
	struct decision d;

	r = rule(c, HOOK_INPUT, VERDICT_ACCEPT, "meta mark 0x1/0xf mark set "
		 "0x10 accept");
	m = match(r, MATCH_META_MARK, false);
	num(m, 1, 1);
	m->mask = 0xf;
	r->mark_set = true;
	r->mark = 0x10;
	r = rule(c, HOOK_INPUT, VERDICT_ACCEPT, "meta length 100-200 bypass "
		 "accept");
	num(match(r, MATCH_META_LENGTH, false), 100, 200);
	r->bypass = true;
	r = rule(c, HOOK_INPUT, VERDICT_ACCEPT, "meta skuid 1000 mark set 2 "
		 "bypass accept");
	num(match(r, MATCH_META_SKUID, false), 1000, 1000);
	r->mark_set = true;
	r->mark = 2;
	r->bypass = true;
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "ct state new,invalid drop");
	match(r, MATCH_CT_STATE, false)->flags = CT_STATE_NEW |
						 CT_STATE_INVALID;
	r = rule(c, HOOK_INPUT, VERDICT_REPEAT, "meta skgid != 5 repeat");
	num(match(r, MATCH_META_SKGID, true), 5, 5);
	p = build(c, 1);

	assert_int_equal(policy_kernel_flags(p),
			 NFQA_CFG_F_UID_GID | NFQA_CFG_F_CONNTRACK);
	assert_string_equal(policy_flag_user(p, NFQA_CFG_F_CONNTRACK),
			    "test.conf:14:7: ct state new,invalid drop");
	assert_string_equal(policy_flag_user(p, NFQA_CFG_F_UID_GID),
			    "test.conf:13:7: meta skuid 1000 mark set 2 "
			    "bypass accept");

	k = mkpkt(HOOK_INPUT, TCP4("1.1.1.1", "2.2.2.2", 1, 2));
	k.flags |= PKT_HAS_MARK;
	k.mark = 0x71;
	policy_judge(p, &k, 0, &d);
	assert_int_equal(d.verdict, NF_ACCEPT);
	assert_true(d.set_mark);
	assert_int_equal(d.mark, 0x10);

	k.mark = 0x72;
	k.orig_len = 150;
	policy_judge(p, &k, 0, &d);
	assert_true(d.set_mark);
	assert_int_equal(d.mark, 0x40000072);

	k.orig_len = 40;
	k.flags |= PKT_HAS_UID;
	k.uid = 1000;
	policy_judge(p, &k, 0, &d);
	assert_true(d.set_mark);
	assert_int_equal(d.mark, 0x40000002);

	/* No conntrack info (not asked for): ct state cannot be judged. */
	k.uid = 0;
	policy_judge(p, &k, 0, &d);
	assert_int_equal(d.verdict, NF_DROP);
	assert_true(d.incomplete);
	assert_false(d.set_mark);
	/* No gid: no match. */
	k.flags |= PKT_HAS_CT;
	k.ct_state = CT_STATE_ESTABLISHED;
	policy_judge(p, &k, 0, &d);
	assert_int_equal(d.verdict, NF_ACCEPT);
	assert_false(d.incomplete);
	k.ct_state = CT_STATE_INVALID;
	assert_int_equal(judge(p, &k), NF_DROP);
	k.ct_state = CT_STATE_ESTABLISHED;
	k.flags |= PKT_HAS_GID;
	k.gid = 6;
	assert_int_equal(judge(p, &k), NF_REPEAT);
	k.gid = 5;
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	policy_free(p);
	free_conf(c);
}

static void test_limit(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	struct policy *p;
	struct pkt k;
	int hits = 0;

	r = rule(c, HOOK_INPUT, VERDICT_DROP, "limit rate 5/minute drop");
	m = match(r, MATCH_LIMIT, false);
	m->rate = 5;
	m->per_seconds = 60;
	r = rule(c, HOOK_OUTPUT, VERDICT_DROP, "limit rate over 3/minute "
		 "burst 2 drop");
	m = match(r, MATCH_LIMIT, true);
	m->rate = 3;
	m->per_seconds = 60;
	m->burst = 2;
	p = build(c, 1);
	k = mkpkt(HOOK_INPUT, TCP4("1.1.1.1", "2.2.2.2", 1, 2));
	for (int i = 0; i < 20; i++)
		hits += judge(p, &k) == NF_DROP;
	assert_int_equal(hits, 5);
	hits = 0;
	k = mkpkt(HOOK_OUTPUT, TCP4("1.1.1.1", "2.2.2.2", 1, 2));
	/* "over": false while the bucket (2 packets) has tokens. */
	for (int i = 0; i < 20; i++)
		hits += judge(p, &k) == NF_DROP;
	assert_int_equal(hits, 18);
	policy_free(p);
	free_conf(c);
}

/* One rule "limit ... accept", policy drop, in the input hook. */
static struct policy *limit_policy(struct conf *c, uint32_t rate,
				   uint32_t per_seconds, uint32_t burst)
{
	struct conf_match *m;

	c->hooks[HOOK_INPUT].policy = VERDICT_DROP;
	m = match(rule(c, HOOK_INPUT, VERDICT_ACCEPT, "limit accept"),
		  MATCH_LIMIT, false);
	m->rate = rate;
	m->per_seconds = per_seconds;
	m->burst = burst;
	return build(c, 1);
}

/* The same limit, a bucket per "ip saddr". */
static struct policy *limit_policy_per(struct conf *c, uint32_t rate,
				       uint32_t per_seconds, uint32_t burst)
{
	struct conf_match *m;

	c->hooks[HOOK_INPUT].policy = VERDICT_DROP;
	m = match(rule(c, HOOK_INPUT, VERDICT_ACCEPT,
		       "limit per ip saddr accept"), MATCH_LIMIT, false);
	m->rate = rate;
	m->per_seconds = per_seconds;
	m->burst = burst;
	m->per = true;
	m->per_key = MATCH_IP_SADDR;
	return build(c, 1);
}

static unsigned accepted_of(struct policy *p, unsigned n)
{
	struct pkt k = mkpkt(HOOK_INPUT, UDP4("1.1.1.1", "2.2.2.2", 1, 9));
	unsigned acc = 0;

	for (unsigned i = 0; i < n; i++)
		acc += judge(p, &k) == NF_ACCEPT;
	return acc;
}

/*
 * nft's packet limit (net/netfilter/nft_limit.c): a token costs
 * period / rate, the bucket holds burst tokens (5 when none is given, as
 * burst 0 in the kernel) and starts full, whatever the rate. So a
 * back-to-back burst gets exactly "burst" packets through, plus what the
 * rate refills meanwhile (nothing, at these rates, while a test runs).
 */
static void test_limit_bucket_as_nft(void **state)
{
	static const struct {
		uint32_t rate, per, burst;
		unsigned want;
	} cases[] = {
		{ 1, 60, 0, 5 },		/* 1/minute: 5, not 1 */
		{ 1, 60, 20, 20 },
		{ 100, 3600, 0, 5 },		/* 100/hour: 5, not 100 */
		{ 3, 3600, 2, 2 },
		{ 1, 86400, 1, 1 },
		{ 1000, 604800, 0, 5 },
		{ 60480, 604800, 1000, 1000 },	/* 10 s a token */
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct conf *c = conf_new();
		struct policy *p = limit_policy(c, cases[i].rate,
						cases[i].per, cases[i].burst);
		unsigned acc = accepted_of(p, 2000);

		if (acc != cases[i].want)
			fail_msg("limit rate %u per %u s burst %u: %u accepted,"
				 " nft: %u", cases[i].rate, cases[i].per,
				 cases[i].burst, acc, cases[i].want);
		policy_free(p);
		free_conf(c);
	}
}

/*
 * "limit ... per ip saddr" is the same bucket once per source: with two
 * sources interleaved, each gets exactly what a plain limit lets through
 * (nft's burst), not the rate plus the burst, and neither takes the
 * other's tokens.
 */
static void test_limit_per_key_as_nft(void **state)
{
	static const struct {
		uint32_t rate, per, burst;
		unsigned want;
	} cases[] = {
		{ 1, 60, 0, 5 },
		{ 1, 60, 20, 20 },
		{ 100, 3600, 0, 5 },
		{ 3, 3600, 2, 2 },
		{ 60480, 604800, 1000, 1000 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct conf *c = conf_new();
		struct policy *p = limit_policy_per(c, cases[i].rate,
						    cases[i].per,
						    cases[i].burst);
		struct pkt a = mkpkt(HOOK_INPUT, UDP4("1.1.1.1", "2.2.2.2", 1,
						     9));
		struct pkt b = mkpkt(HOOK_INPUT, UDP4("1.1.1.2", "2.2.2.2", 1,
						     9));
		unsigned acc_a = 0, acc_b = 0;

		for (unsigned n = 0; n < 2000; n++) {
			acc_a += judge(p, &a) == NF_ACCEPT;
			acc_b += judge(p, &b) == NF_ACCEPT;
		}
		if (acc_a != cases[i].want || acc_b != cases[i].want)
			fail_msg("limit rate %u per %u s burst %u per ip saddr:"
				 " %u and %u accepted, nft: %u each",
				 cases[i].rate, cases[i].per, cases[i].burst,
				 acc_a, acc_b, cases[i].want);
		policy_free(p);
		free_conf(c);
	}
}

/* 100/second: 5 at once (not 100), then one per 10 ms. */
static void test_limit_fast_rate(void **state)
{
	struct conf *c = conf_new();
	struct policy *p = limit_policy(c, 100, 1, 0);
	struct timespec t0, t1;
	unsigned acc;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	acc = accepted_of(p, 100);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (acc < 5 || acc > 5 + (unsigned)(secs * 100) + 1)
		fail_msg("100/second: %u of 100 accepted in %.3f s", acc, secs);
	policy_free(p);
	free_conf(c);
}

/* A rate above one packet per nanosecond costs nothing: nft's token
 * costs period / rate = 0 ns, and every packet passes. */
static void test_limit_free_rate(void **state)
{
	struct conf *c = conf_new();
	struct policy *p = limit_policy(c, 2000000000u, 1, 3);

	assert_int_equal(accepted_of(p, 1000), 1000);
	policy_free(p);
	free_conf(c);
}

/*
 * nft evaluates a rule's matches left to right, in an inet table for
 * both families: a limit before "ip saddr" takes a token for an IPv6
 * packet too (which then fails "ip saddr"); one after it does not.
 */
static void test_limit_before_family(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	struct policy *p;
	struct pkt k;

	c->hooks[HOOK_INPUT].policy = VERDICT_DROP;
	r = rule(c, HOOK_INPUT, VERDICT_ACCEPT, "limit rate 1/hour burst 2 "
		 "ip saddr 10.0.0.1 accept");
	m = match(r, MATCH_LIMIT, false);
	m->rate = 1;
	m->per_seconds = 3600;
	m->burst = 2;
	addr(match(r, MATCH_IP_SADDR, false), "10.0.0.1");
	r = rule(c, HOOK_INPUT, VERDICT_ACCEPT, "ip6 saddr 2001:db8::1 "
		 "limit rate 1/hour burst 2 accept");
	addr(match(r, MATCH_IP6_SADDR, false), "2001:db8::1");
	m = match(r, MATCH_LIMIT, false);
	m->rate = 1;
	m->per_seconds = 3600;
	m->burst = 2;
	for (int e = 0; e < 2; e++) {
		p = build(c, 1);
		policy_set_eval(p, e ? POLICY_EVAL_INDEX : POLICY_EVAL_LINEAR);
		/* Two IPv6 packets from elsewhere: both tokens of rule 1. */
		k = mkpkt(HOOK_INPUT, UDP4("2001:db8::9", "2001:db8::2", 1, 9));
		assert_int_equal(judge(p, &k), NF_DROP);
		assert_int_equal(judge(p, &k), NF_DROP);
		k = mkpkt(HOOK_INPUT, UDP4("10.0.0.1", "10.0.0.2", 1, 9));
		assert_int_equal(judge(p, &k), NF_DROP);
		/* IPv4 packets never reach rule 2's limit. */
		k = mkpkt(HOOK_INPUT, UDP4("10.0.0.9", "10.0.0.2", 1, 9));
		assert_int_equal(judge(p, &k), NF_DROP);
		k = mkpkt(HOOK_INPUT, UDP4("2001:db8::1", "2001:db8::2", 1,
					   9));
		assert_int_equal(judge(p, &k), NF_ACCEPT);
		assert_int_equal(judge(p, &k), NF_ACCEPT);
		assert_int_equal(judge(p, &k), NF_DROP);
		policy_free(p);
	}
	free_conf(c);
}

struct thr {
	struct policy *p;
	struct pkt k;
	unsigned slot;
	int drops;
};

static void *judge_many(void *arg)
{
	struct thr *t = arg;
	struct decision d;

	for (int i = 0; i < 200000; i++) {
		policy_judge(t->p, &t->k, t->slot, &d);
		t->drops += d.verdict == NF_DROP;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	struct policy *p;
	struct thr t[4];
	pthread_t tid[4];
	uint64_t pk, by, total = 0;
	struct timespec t0, t1;
	double secs;

	r = rule(c, HOOK_INPUT, VERDICT_DROP, "limit rate 1000/minute burst "
		 "10 drop");
	m = match(r, MATCH_LIMIT, false);
	m->rate = 1000;
	m->per_seconds = 60;
	m->burst = 10;
	p = build(c, 4);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < 4; i++) {
		t[i] = (struct thr){ p, mkpkt(HOOK_INPUT, TCP4("1.1.1.1",
					      "2.2.2.2", 1, 2)), i, 0 };
		pthread_create(&tid[i], NULL, judge_many, &t[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(tid[i], NULL);
		total += (uint64_t)t[i].drops;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* The bucket is shared: 10 (the burst) at once, and 1000 a minute
	 * more for as long as the threads ran (valgrind makes that many
	 * seconds). */
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(total >= 10 &&
		    total <= 10 + (uint64_t)(secs * 1000 / 60) + 1);
	policy_rule_counters(p, HOOK_INPUT, 0, &pk, &by);
	assert_int_equal(pk, total);
	assert_int_equal(policy_policy_packets(p, HOOK_INPUT) + total,
			 4 * 200000);
	policy_free(p);
	free_conf(c);
}

static char tmpdir[] = "/tmp/test_policy.XXXXXX";

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static void test_sets_and_files(void **state)
{
	struct conf *c = conf_new();
	struct conf_set *s;
	struct conf_rule *r;
	struct policy *p;
	struct pkt k;

	s = set(c, "blocked", SET_IPV4_ADDR, true);
	fill_addr(elem(&s->elems, &s->n_elems), "203.0.113.9");
	s->file = strdup(write_file("blocked.txt", "# blocked hosts\n"
				    "\n  192.0.2.0/24   # doc net\n"
				    "198.51.100.1-198.51.100.3\r\n10.1.1.1\n"));
	s = set(c, "v6", SET_IPV6_ADDR, false);
	s->file = strdup(write_file("v6.txt", "2001:db8::1\n"));
	s = set(c, "ports", SET_INET_SERVICE, true);
	s->file = strdup(write_file("ports.txt", "22\n8000-8080\n0x50\n"));
	s = set(c, "ifs", SET_IFNAME, false);
	s->file = strdup(write_file("ifs.txt", "\"lan0\"\nppp*\n"));

	r = rule(c, HOOK_INPUT, VERDICT_DROP, "ip saddr @blocked drop");
	match(r, MATCH_IP_SADDR, false)->set_name = "blocked";
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "ip6 saddr @v6 drop");
	match(r, MATCH_IP6_SADDR, false)->set_name = "v6";
	r = rule(c, HOOK_INPUT, VERDICT_REPEAT, "udp dport != @ports repeat");
	match(r, MATCH_UDP_DPORT, true)->set_name = "ports";
	r = rule(c, HOOK_INPUT, VERDICT_QUEUE, "iifname @ifs queue 3");
	match(r, MATCH_IIFNAME, false)->set_name = "ifs";
	r->queue_num = 3;
	p = build(c, 1);

	k = mkpkt(HOOK_INPUT, TCP4("203.0.113.9", "1.1.1.1", 1, 2));
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_INPUT, TCP4("192.0.2.200", "1.1.1.1", 1, 2));
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_INPUT, TCP4("198.51.100.3", "1.1.1.1", 1, 2));
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_INPUT, TCP4("198.51.100.4", "1.1.1.1", 1, 2));
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	k = mkpkt(HOOK_INPUT, TCP4("10.1.1.1", "1.1.1.1", 1, 2));
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_INPUT, TCP4("2001:db8::1", "::1", 1, 2));
	assert_int_equal(judge(p, &k), NF_DROP);
	k = mkpkt(HOOK_INPUT, UDP4("1.1.1.1", "1.1.1.1", 1, 8080));
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	k = mkpkt(HOOK_INPUT, UDP4("1.1.1.1", "1.1.1.1", 1, 80));
	assert_int_equal(judge(p, &k), NF_ACCEPT);
	k = mkpkt(HOOK_INPUT, UDP4("1.1.1.1", "1.1.1.1", 1, 8081));
	assert_int_equal(judge(p, &k), NF_REPEAT);
	ifcache_set(names, 910, "ppp0");
	k = mkpkt(HOOK_INPUT, TCP4("1.1.1.1", "1.1.1.1", 1, 2));
	k.flags |= PKT_HAS_INDEV;
	k.indev = 910;
	assert_int_equal(judge(p, &k), NF_QUEUE_NR(3));
	policy_free(p);
	for (unsigned i = 0; i < c->n_sets; i++)
		free(c->sets[i].file);
	free_conf(c);
}

static void test_errors(void **state)
{
	struct conf *c = conf_new();
	struct conf_set *s;
	struct conf_rule *r;
	char *err, path[300];

	s = set(c, "bad", SET_IPV4_ADDR, false);
	s->file = strdup(write_file("bad.txt", "192.0.2.1\n  10.0.0.0/8\n"
				    "1.2.3\n\n2001:db8::1\n"));
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "ip saddr @nope drop");
	match(r, MATCH_IP_SADDR, false)->set_name = "nope";
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "tcp dport @bad drop");
	match(r, MATCH_TCP_DPORT, false)->set_name = "bad";
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "bypass drop");
	r->bypass = true;
	err = build_err(c);
	snprintf(path, sizeof(path), "%s/bad.txt", tmpdir);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "bad.txt:2:3: "));
	assert_non_null(strstr(err, "needs \"flags interval\""));
	assert_non_null(strstr(err, "bad.txt:3:1: "));
	assert_non_null(strstr(err, "bad.txt:5:1: "));
	assert_null(strstr(err, "bad.txt:1:"));
	assert_null(strstr(err, "bad.txt:4:"));
	assert_non_null(strstr(err, "test.conf:11:7: unknown set @nope"));
	assert_non_null(strstr(err, "test.conf:12:7: set @bad has type "
			       "ipv4_addr"));
	assert_non_null(strstr(err, "test.conf:13:5: bypass is only"));
	free(err);
	free(s->file);

	/* A missing set file names the set and the file. */
	s->file = "/nonexistent/nfqd-set.txt";
	err = build_err(c);
	assert_non_null(strstr(err, "test.conf:3:1: set bad: cannot read "
			       "/nonexistent/nfqd-set.txt"));
	free(err);
	free_conf(c);
}

/* Count newline-terminated lines of FD from its start. */
static int count_lines(int fd, const char *needle)
{
	char buf[65536];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	int lines = 0;

	buf[n > 0 ? n : 0] = '\0';
	for (char *s = buf; (s = strstr(s, needle)); s++)
		lines++;
	return lines;
}

static void test_log_rate_limit(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct policy *p;
	struct pkt k;
	char path[300];
	int fd, saved;

	r = rule(c, HOOK_INPUT, VERDICT_DROP, "log prefix \"x: \" drop");
	r->log = true;
	r->log_prefix = "flood: ";
	p = build(c, 1);
	snprintf(path, sizeof(path), "%s/log", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	saved = dup(2);
	dup2(fd, 2);
	k = mkpkt(HOOK_INPUT, TCP4("1.1.1.1", "2.2.2.2", 1, 2));
	for (int i = 0; i < 10000; i++)
		judge(p, &k);
	dup2(saved, 2);
	close(saved);
	/* One second may end mid-loop: at most two seconds' worth. */
	assert_true(count_lines(fd, "flood: ") >= 10);
	assert_true(count_lines(fd, "flood: ") <= 21);
	assert_true(count_lines(fd, "SRC=1.1.1.1 DST=2.2.2.2") >= 10);
	close(fd);
	policy_free(p);
	free_conf(c);
}

/* ---- incomplete packets: what the copy does not show never passes for
 * what the packet does not have */

/*
 * An IPv6 packet from SRC with N_EXT destination-options headers (8 bytes
 * each) before its PROTO header (TCP or UDP) with destination port DPORT,
 * of which the kernel copied COPY bytes (0: all of it).
 */
static struct pkt mk6ext(enum conf_hook_id hook, const char *src,
			 uint8_t proto, uint16_t dport, unsigned n_ext,
			 size_t copy)
{
	size_t l4 = proto == IPPROTO_TCP ? 20 : 8;
	size_t len = 40 + 8 * (size_t)n_ext + l4;
	uint8_t *t = raw + len - l4;
	struct pkt p = { 0 };

	assert_true(len <= sizeof(raw));
	memset(raw, 0, sizeof(raw));
	raw[0] = 0x60;
	put16(raw + 4, (uint16_t)(len - 40));
	raw[6] = n_ext ? IPPROTO_DSTOPTS : proto;
	raw[7] = 64;
	inet_pton(AF_INET6, src, raw + 8);
	inet_pton(AF_INET6, "2001:db8::2", raw + 24);
	for (unsigned i = 0; i < n_ext; i++)
		raw[40 + 8 * i] = i + 1 < n_ext ? IPPROTO_DSTOPTS : proto;
	put16(t, 40000);
	put16(t + 2, dport);
	t[12] = 5 << 4;
	t[13] = TCPF_SYN;
	p.hook = (uint8_t)hook;
	p.family = NFPROTO_IPV6;
	p.payload = raw;
	p.orig_len = (uint32_t)len;
	p.payload_len = (uint32_t)(copy && copy < len ? copy : len);
	pkt_parse_headers(&p);
	return p;
}

/*
 * An IPv4 packet from SRC with an IHL-word header, fragment field FRAG
 * and L4LEN bytes of a PROTO header (destination port DPORT); COPY bytes
 * copied (0: all).
 */
static struct pkt mk4(enum conf_hook_id hook, const char *src, uint8_t proto,
		      uint16_t dport, unsigned ihl, size_t l4len,
		      uint16_t frag, size_t copy)
{
	size_t len = ihl * 4 + l4len;
	uint8_t *t = raw + ihl * 4;
	struct pkt p = { 0 };

	memset(raw, 0, sizeof(raw));
	raw[0] = (uint8_t)(0x40 | ihl);
	put16(raw + 2, (uint16_t)len);
	put16(raw + 6, frag);
	raw[9] = proto;
	inet_pton(AF_INET, src, raw + 12);
	inet_pton(AF_INET, "192.0.2.2", raw + 16);
	memset(raw + 20, 1, ihl * 4 - 20);	/* NOP options */
	put16(t, 40000);
	put16(t + 2, dport);
	t[12] = 5 << 4;
	t[13] = TCPF_SYN;
	p.hook = (uint8_t)hook;
	p.family = NFPROTO_IPV4;
	p.payload = raw;
	p.orig_len = (uint32_t)len;
	p.payload_len = (uint32_t)(copy && copy < len ? copy : len);
	pkt_parse_headers(&p);
	return p;
}

static struct decision judged(struct policy *p, const struct pkt *k)
{
	struct decision d;

	policy_judge(p, k, 0, &d);
	return d;
}

#define assert_decided(expr, v) do { \
	struct decision d_ = (expr); \
	assert_int_equal(d_.verdict, (v)); \
	assert_false(d_.incomplete); \
} while (0)
#define assert_incomplete(expr, v) do { \
	struct decision d_ = (expr); \
	assert_int_equal(d_.verdict, (v)); \
	assert_true(d_.incomplete); \
} while (0)

/*
 * Name matches (nfqd.conf(5) NAMES): PRESENT, ABSENT, INCOMPLETE and a
 * name still coming, judged rule by rule and through the classifier with
 * the same outcome; the name rule is a keyless candidate behind keyed
 * rules of other fields.
 */
static void test_names(void **state)
{
	static const char text[] =
		"set blk { type domain; elements = { \".blocked.test\" }; }\n"
		"hook input {\n"
		"  tcp dport 22 accept;\n"
		"  tcp dport 23 drop;\n"
		"  ip saddr 198.51.100.7 drop;\n"
		"  tls sni @blk drop;\n"
		"  tls ech drop;\n"
		"  dns qname \"ok.test\" dns qtype aaaa drop;\n"
		"  http host != \"allowed.test\" mark set 0x5 accept;\n"
		"  udp dport 9 drop;\n"
		"}\n";
	struct conf *c = NULL;
	struct pkt_names n;
	struct pkt k;
	struct policy *p;

	assert_int_equal(conf_load_buffer("t.conf", text, strlen(text), &c,
					  NULL), 0);
	p = build(c, 1);
	assert_true(policy_has_names(p));
	for (int e = 0; e < 2; e++) {
		policy_set_eval(p, e ? POLICY_EVAL_INDEX : POLICY_EVAL_LINEAR);
		k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 443, 5, 20, 0, 0);
		/* No names at all (no flow table): INCOMPLETE. */
		k.names = NULL;
		assert_incomplete(judged(p, &k), NF_DROP);
		k.names = &n;
		/* A keyed rule before the name rules still decides first. */
		memset(&n, 0, sizeof(n));
		n.state = PKT_INCOMPLETE;
		k.dport = 22;
		assert_decided(judged(p, &k), NF_ACCEPT);
		k.dport = 443;
		assert_incomplete(judged(p, &k), NF_DROP);
		/* The name still coming: the rule accepts. */
		n.state = NAMES_PENDING;
		assert_decided(judged(p, &k), NF_ACCEPT);
		/* Not the protocol: on to later rules (udp dport 9 is not
		 * a TCP packet's). */
		n.state = PKT_ABSENT;
		assert_decided(judged(p, &k), NF_ACCEPT);
		/* A TLS name. */
		n.state = PKT_PRESENT;
		n.proto = NP_TLS;
		strcpy(n.n.name, "www.blocked.test");
		n.n.len = (uint16_t)strlen(n.n.name);
		assert_decided(judged(p, &k), NF_DROP);
		assert_true(judged(p, &k).sticky);
		strcpy(n.n.name, "blocked.test.example");
		n.n.len = (uint16_t)strlen(n.n.name);
		assert_decided(judged(p, &k), NF_ACCEPT);
		n.n.ech = true;
		assert_decided(judged(p, &k), NF_DROP);
		n.n.ech = false;
		/* A ClientHello without a name: tls sni ABSENT. */
		n.n.len = 0;
		n.n.name[0] = '\0';
		assert_decided(judged(p, &k), NF_ACCEPT);
		/* DNS: name and type. */
		n.proto = NP_DNS;
		strcpy(n.n.name, "ok.test");
		n.n.len = 7;
		n.n.qtype = 28;
		assert_decided(judged(p, &k), NF_DROP);
		n.n.qtype = 1;
		assert_decided(judged(p, &k), NF_ACCEPT);
		/* HTTP: != holds for another host, marks and accepts. */
		n.proto = NP_HTTP;
		strcpy(n.n.name, "other.test");
		n.n.len = 10;
		assert_true(judged(p, &k).set_mark);
		strcpy(n.n.name, "allowed.test");
		n.n.len = 12;
		assert_false(judged(p, &k).set_mark);
		/* A name of one protocol is ABSENT for the others. */
		n.proto = NP_DNS;
		n.state = PKT_INCOMPLETE;
		assert_incomplete(judged(p, &k), NF_DROP);
		k.dport = 23;
		assert_decided(judged(p, &k), NF_DROP);
	}
	policy_free(p);
	conf_free(c);
}

/*
 * Rules that first match a name, at the head of a hook: a packet with no
 * name passes them all at once (chook.lead_names), as it passes each;
 * one with a name, or whose names are unknown, meets them one by one.
 */
static void test_names_leading(void **state)
{
	static const char text[] =
		"set blk { type domain; elements = { \".blocked.test\" }; }\n"
		"hook input {\n"
		"  tls sni @blk drop;\n"
		"  http host != \"allowed.test\" mark set 0x5 accept;\n"
		"  tcp dport 443 drop;\n"
		"  tls sni \"late.test\" accept;\n"
		"}\n";
	struct conf *c = NULL;
	struct pkt_names n;
	struct pkt k;
	struct policy *p;

	(void)state;
	assert_int_equal(conf_load_buffer("t.conf", text, strlen(text), &c,
					  NULL), 0);
	p = build(c, 1);
	for (int e = 0; e < 2; e++) {
		policy_set_eval(p, e ? POLICY_EVAL_INDEX : POLICY_EVAL_LINEAR);
		k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 443, 5, 20, 0, 0);
		k.names = &n;
		memset(&n, 0, sizeof(n));
		/* No name: past both name rules to the port's. */
		n.state = PKT_ABSENT;
		assert_decided(judged(p, &k), NF_DROP);
		assert_false(judged(p, &k).set_mark);
		k.dport = 444;
		assert_decided(judged(p, &k), NF_ACCEPT);
		k.dport = 443;
		/* Unknown names: the first name rule decides. */
		k.names = NULL;
		assert_incomplete(judged(p, &k), NF_DROP);
		k.names = &n;
		n.state = PKT_INCOMPLETE;
		assert_incomplete(judged(p, &k), NF_DROP);
		/* An HTTP host: the second rule marks and accepts. */
		n.state = PKT_PRESENT;
		n.proto = NP_HTTP;
		strcpy(n.n.name, "other.test");
		n.n.len = 10;
		assert_true(judged(p, &k).set_mark);
		/* A TLS name: listed, dropped; else on past the HTTP rule. */
		n.proto = NP_TLS;
		strcpy(n.n.name, "a.blocked.test");
		n.n.len = 14;
		assert_decided(judged(p, &k), NF_DROP);
		assert_true(judged(p, &k).sticky);
		strcpy(n.n.name, "late.test");
		n.n.len = 9;
		assert_false(judged(p, &k).sticky);	/* the port's drop */
		k.dport = 444;
		assert_decided(judged(p, &k), NF_ACCEPT);
		assert_true(judged(p, &k).sticky);	/* "late.test" */
	}
	policy_free(p);
	conf_free(c);
}

/*
 * A name still coming (the SYN, a ClientHello's first segment): for such
 * a packet a rule whose name would drop it is as one that does not match
 * (the packet carries no name yet), so later rules judge it: a port's or
 * a source's drop still drops a SYN. A rule whose name would accept it
 * accepts it (the name may yet be that one) and ends the walk.
 */
static void test_names_pending(void **state)
{
	static const char text[] =
		"set blk { type domain; elements = { \".blocked.test\" }; }\n"
		"hook input {\n"
		"  tls sni @blk drop;\n"
		"  dns qname @blk drop;\n"
		"  tcp dport 22 drop;\n"
		"  ip saddr 198.51.100.7 drop;\n"
		"  tls sni \"allowed.test\" accept;\n"
		"  tcp dport 443 drop;\n"
		"}\n";
	struct conf *c = NULL;
	struct pkt_names n;
	struct pkt k;
	struct policy *p;

	(void)state;
	assert_int_equal(conf_load_buffer("t.conf", text, strlen(text), &c,
					  NULL), 0);
	p = build(c, 1);
	for (int e = 0; e < 2; e++) {
		policy_set_eval(p, e ? POLICY_EVAL_INDEX : POLICY_EVAL_LINEAR);
		k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 22, 5, 20, 0, 0);
		k.names = &n;
		memset(&n, 0, sizeof(n));
		n.state = NAMES_PENDING;
		assert_decided(judged(p, &k), NF_DROP);
		assert_false(judged(p, &k).sticky);
		k = mk4(HOOK_INPUT, "198.51.100.7", IPPROTO_TCP, 443, 5, 20, 0,
			0);
		k.names = &n;
		assert_decided(judged(p, &k), NF_DROP);
		/* The allow rule might match: accepted, the port's drop
		 * not tried. */
		k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 443, 5, 20, 0, 0);
		k.names = &n;
		assert_decided(judged(p, &k), NF_ACCEPT);
		k.dport = 8080;
		assert_decided(judged(p, &k), NF_ACCEPT);
		/* The names known: the blocklist's drop. */
		n.state = PKT_PRESENT;
		n.proto = NP_TLS;
		strcpy(n.n.name, "a.blocked.test");
		n.n.len = 14;
		assert_decided(judged(p, &k), NF_DROP);
		assert_true(judged(p, &k).sticky);
	}
	policy_free(p);
	conf_free(c);
}

/*
 * Which drops a flow keeps (decision.sticky): a name rule's whose other
 * matches every packet of the flow shares; not one that also needs a
 * limit's token or a runtime set element (the next packet may not), nor
 * a rule without a name. A packet whose name is still coming is not
 * marked for bypass: the connection leaves the queue once its name is
 * known.
 */
static void test_names_sticky(void **state)
{
	static const char text[] =
		"options { bypass-mark 0x40000000; }\n"
		"set blk { type domain; elements = { \".blocked.test\" }; }\n"
		"set tmp { type ipv4_addr; flags timeout; }\n"
		"hook input {\n"
		"  tls sni \"rl.test\" limit rate over 1/second drop;\n"
		"  tls sni \"set.test\" ip saddr @tmp drop;\n"
		"  tls sni @blk tcp dport 443 drop;\n"
		"  tcp dport 23 drop;\n"
		"  tcp dport 443 bypass accept;\n"
		"}\n";
	struct conf *c = NULL;
	struct pkt_names n;
	struct pkt k;
	struct policy *p;
	struct decision d;

	(void)state;
	assert_int_equal(conf_load_buffer("t.conf", text, strlen(text), &c,
					  NULL), 0);
	p = build(c, 1);
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 443, 5, 20, 0, 0);
	k.names = &n;
	memset(&n, 0, sizeof(n));
	n.state = PKT_PRESENT;
	n.proto = NP_TLS;
	strcpy(n.n.name, "a.blocked.test");
	n.n.len = 14;
	assert_decided(judged(p, &k), NF_DROP);
	assert_true(judged(p, &k).sticky);
	/* The limit's drop: over the rate once its burst is spent. */
	strcpy(n.n.name, "rl.test");
	n.n.len = 7;
	for (int i = 0; i < 10 && judged(p, &k).verdict != NF_DROP; i++)
		;
	d = judged(p, &k);
	assert_int_equal(d.verdict, NF_DROP);
	assert_false(d.sticky);
	/* A port's drop: no name. */
	k.dport = 23;
	assert_decided(judged(p, &k), NF_DROP);
	assert_false(judged(p, &k).sticky);
	/* The name still coming: accepted, not marked for bypass. */
	k.dport = 443;
	n.state = NAMES_PENDING;
	d = judged(p, &k);
	assert_int_equal(d.verdict, NF_ACCEPT);
	assert_false(d.set_mark);
	/* Known (and not listed): marked. */
	n.state = PKT_PRESENT;
	strcpy(n.n.name, "ok.test");
	n.n.len = 7;
	d = judged(p, &k);
	assert_int_equal(d.verdict, NF_ACCEPT);
	assert_true(d.set_mark);
	assert_int_equal(d.mark & 0x40000000, 0x40000000);
	policy_free(p);
	conf_free(c);
}

/* A name still coming says which protocols it may yet be: a flow to a
 * port that is not a DNS port is no DNS, so "dns qname ... accept" does
 * not accept it (ABSENT: on to the policy), while a TLS or HTTP rule
 * still does; the same flow to a DNS port is pending for dns matches
 * alone. */
static void test_names_pending_proto(void **state)
{
	static const char text[] =
		"hook input {\n"
		"  policy drop;\n"
		"  dns qname \"ok.test\" accept;\n"
		"  tcp dport 8443 tls sni \"ok.test\" accept;\n"
		"}\n";
	struct conf *c = NULL;
	struct pkt_names n;
	struct pkt k;
	struct policy *p;

	(void)state;
	assert_int_equal(conf_load_buffer("t.conf", text, strlen(text), &c,
					  NULL), 0);
	p = build(c, 1);
	for (int e = 0; e < 2; e++) {
		policy_set_eval(p, e ? POLICY_EVAL_INDEX : POLICY_EVAL_LINEAR);
		k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 2223, 5, 20, 0,
			0);
		k.names = &n;
		memset(&n, 0, sizeof(n));
		n.state = NAMES_PENDING;
		n.proto = NP_TLS | NP_HTTP;
		assert_decided(judged(p, &k), NF_DROP);
		k.dport = 8443;
		assert_decided(judged(p, &k), NF_ACCEPT);
		n.proto = NP_DNS;
		k.dport = 53;
		assert_decided(judged(p, &k), NF_ACCEPT);
		k.dport = 8443;
		assert_decided(judged(p, &k), NF_ACCEPT);
		n.proto = NP_HTTP;
		k.dport = 2223;
		assert_decided(judged(p, &k), NF_DROP);
	}
	policy_free(p);
	conf_free(c);
}

/* The headline bypasses, and "tcp dport 23 drop" / "udp dport 7 drop". */
static struct conf *headline_conf(void)
{
	struct conf *c = conf_new();
	struct conf_rule *r;

	r = rule(c, HOOK_INPUT, VERDICT_DROP, "ip6 saddr 2001:db8:bad::/48 "
		 "drop");
	addr(match(r, MATCH_IP6_SADDR, false), "2001:db8:bad::/48");
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "tcp dport 23 drop");
	num(match(r, MATCH_TCP_DPORT, false), 23, 23);
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "udp dport 7 drop");
	num(match(r, MATCH_UDP_DPORT, false), 7, 7);
	return c;
}

static void test_long_ext_chains(void **state)
{
	struct conf *c = headline_conf();
	struct policy *p = build(c, 1);
	uint64_t pk, by;
	struct pkt k;

	/* 30 headers, the chain leaving a copy of 256 bytes: the blocked
	 * source is still seen, and decides. */
	k = mk6ext(HOOK_INPUT, "2001:db8:bad::1", IPPROTO_UDP, 9, 30, 256);
	assert_decided(judged(p, &k), NF_DROP);
	policy_rule_counters(p, HOOK_INPUT, 0, &pk, &by);
	assert_int_equal(pk, 1);
	/* Another source: "tcp dport 23" might have matched. */
	k = mk6ext(HOOK_INPUT, "2001:db8::1", IPPROTO_UDP, 9, 30, 256);
	assert_incomplete(judged(p, &k), NF_DROP);
	/* The whole chain in the copy: judged on what is there. */
	k = mk6ext(HOOK_INPUT, "2001:db8::1", IPPROTO_UDP, 7, 30, 0);
	assert_decided(judged(p, &k), NF_DROP);
	k = mk6ext(HOOK_INPUT, "2001:db8::1", IPPROTO_UDP, 9, 30, 0);
	assert_decided(judged(p, &k), NF_ACCEPT);
	k = mk6ext(HOOK_INPUT, "2001:db8::1", IPPROTO_TCP, 23,
		   PKT_MAX_EXTHDRS, 0);
	assert_decided(judged(p, &k), NF_DROP);
	/* One header past the walk limit, all in the copy. */
	k = mk6ext(HOOK_INPUT, "2001:db8::1", IPPROTO_TCP, 80,
		   PKT_MAX_EXTHDRS + 1, 0);
	assert_incomplete(judged(p, &k), NF_DROP);
	k = mk6ext(HOOK_INPUT, "2001:db8:bad::2", IPPROTO_TCP, 80,
		   PKT_MAX_EXTHDRS + 1, 0);
	assert_decided(judged(p, &k), NF_DROP);
	/* Counters: no rule hit and no policy packet for the unknown. */
	policy_rule_counters(p, HOOK_INPUT, 0, &pk, &by);
	assert_int_equal(pk, 2);
	policy_rule_counters(p, HOOK_INPUT, 1, &pk, &by);
	assert_int_equal(pk, 1);
	policy_rule_counters(p, HOOK_INPUT, 2, &pk, &by);
	assert_int_equal(pk, 1);
	assert_int_equal(policy_policy_packets(p, HOOK_INPUT), 1);
	policy_free(p);

	/* incomplete-verdict accept: passes, still marked incomplete. */
	c->opts.incomplete_verdict = VERDICT_ACCEPT;
	p = build(c, 1);
	k = mk6ext(HOOK_INPUT, "2001:db8::1", IPPROTO_UDP, 7, 30, 256);
	assert_incomplete(judged(p, &k), NF_ACCEPT);
	k = mk6ext(HOOK_INPUT, "2001:db8:bad::1", IPPROTO_UDP, 7, 30, 256);
	assert_decided(judged(p, &k), NF_DROP);
	assert_int_equal(policy_incomplete_verdict(p), NF_ACCEPT);
	policy_free(p);
	free_conf(c);
}

/* Transport past the copy: INCOMPLETE; past the packet: ABSENT. */
static void test_transport_out_of_reach(void **state)
{
	struct conf *c = headline_conf();
	struct policy *p = build(c, 1);
	struct pkt k;

	/* 40 bytes of IPv4 options and a copy of 60 bytes. */
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 23, 15, 20, 0, 60);
	assert_incomplete(judged(p, &k), NF_DROP);
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 23, 15, 20, 0, 63);
	assert_incomplete(judged(p, &k), NF_DROP);
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 23, 15, 20, 0, 64);
	assert_decided(judged(p, &k), NF_DROP);
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 22, 15, 20, 0, 64);
	assert_decided(judged(p, &k), NF_ACCEPT);
	/* A packet that ends before the destination port has none. */
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 23, 5, 2, 0, 0);
	assert_decided(judged(p, &k), NF_ACCEPT);
	/* A first fragment with 4 bytes of TCP: its ports count (nft). */
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 23, 5, 4, 0x2000, 0);
	assert_decided(judged(p, &k), NF_DROP);
	/* A later fragment has no transport header at all. */
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 23, 5, 20, 0x2001, 0);
	assert_decided(judged(p, &k), NF_ACCEPT);
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 23, 5, 20, 0x0001, 24);
	assert_decided(judged(p, &k), NF_ACCEPT);
	/* Malformed (IHL 4, tot_len beyond the packet): fail closed. */
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_UDP, 9, 5, 8, 0, 0);
	raw[0] = 0x44;
	pkt_parse_headers(&k);
	assert_incomplete(judged(p, &k), NF_DROP);
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_UDP, 9, 5, 8, 0, 0);
	put16(raw + 2, 29);
	pkt_parse_headers(&k);
	assert_incomplete(judged(p, &k), NF_DROP);
	/* The IPv6 fixed header not in the copy: even the address is
	 * unknown. */
	k = mk6ext(HOOK_INPUT, "2001:db8:bad::1", IPPROTO_UDP, 7, 0, 39);
	assert_incomplete(judged(p, &k), NF_DROP);
	policy_free(p);
	free_conf(c);
}

/* As nft (IP6_FH_F_AUTH): behind AH there is no TCP header to match. */
static void test_ah_and_fragments6(void **state)
{
	struct conf *c = headline_conf();
	struct conf_rule *r;
	struct policy *p;
	struct pkt k;

	r = rule(c, HOOK_INPUT, VERDICT_REPEAT, "meta l4proto { ah, 59 } "
		 "repeat");
	num(match(r, MATCH_META_L4PROTO, false), IPPROTO_AH, IPPROTO_AH);
	num(r->matches, IPPROTO_NONE, IPPROTO_NONE);
	p = build(c, 1);
	k = mk6ext(HOOK_INPUT, "2001:db8::1", IPPROTO_TCP, 23, 2, 0);
	raw[40 + 8] = IPPROTO_AH;	/* the second header is AH */
	raw[40 + 8 + 1] = 0;		/* (0 + 2) * 4 = 8 bytes */
	pkt_parse_headers(&k);
	assert_int_equal(k.l4proto, IPPROTO_AH);
	assert_decided(judged(p, &k), NF_REPEAT);
	/* NEXTHDR_NONE after a hop-by-hop header. */
	k = mk6ext(HOOK_INPUT, "2001:db8::1", IPPROTO_NONE, 0, 1, 0);
	raw[6] = IPPROTO_HOPOPTS;
	pkt_parse_headers(&k);
	assert_decided(judged(p, &k), NF_REPEAT);
	/* A later fragment: its protocol, but no ports. */
	k = mk6ext(HOOK_INPUT, "2001:db8::1", IPPROTO_TCP, 23, 1, 0);
	raw[6] = IPPROTO_FRAGMENT;
	put16(raw + 42, 0x0010);
	pkt_parse_headers(&k);
	assert_true(k.fragment);
	assert_decided(judged(p, &k), NF_ACCEPT);
	/* The first fragment: its ports. */
	put16(raw + 42, 0x0001);
	pkt_parse_headers(&k);
	assert_decided(judged(p, &k), NF_DROP);
	policy_free(p);
	free_conf(c);
}

static void test_unknown_rule_logic(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	struct policy *p;
	struct pkt k;
	uint64_t pk, by;

	/* Earlier rules that can decide on what is there still do. */
	r = rule(c, HOOK_INPUT, VERDICT_ACCEPT, "ip saddr 10.0.0.0/8 accept");
	addr(match(r, MATCH_IP_SADDR, false), "10.0.0.0/8");
	/* A later match that is false makes an unknown rule false. */
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "tcp dport 23 ip saddr "
		 "192.0.2.0/24 drop");
	num(match(r, MATCH_TCP_DPORT, false), 23, 23);
	addr(match(r, MATCH_IP_SADDR, false), "192.0.2.0/24");
	/* After an unknown match, a limit takes no token. */
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "udp dport 7 limit rate "
		 "1/minute burst 1 drop");
	num(match(r, MATCH_UDP_DPORT, false), 7, 7);
	m = match(r, MATCH_LIMIT, false);
	m->rate = 1;
	m->per_seconds = 60;
	m->burst = 1;
	/* Negated, on a field the packet lacks: false (nft). */
	r = rule(c, HOOK_INPUT, VERDICT_REPEAT, "tcp dport != 22 repeat");
	num(match(r, MATCH_TCP_DPORT, true), 22, 22);
	p = build(c, 1);

	k = mk4(HOOK_INPUT, "10.1.1.1", IPPROTO_TCP, 23, 15, 20, 0, 40);
	assert_decided(judged(p, &k), NF_ACCEPT);
	k = mk4(HOOK_INPUT, "198.51.100.1", IPPROTO_TCP, 23, 15, 20, 0, 40);
	assert_incomplete(judged(p, &k), NF_DROP);
	k = mk4(HOOK_INPUT, "203.0.113.1", IPPROTO_UDP, 9, 5, 8, 0, 0);
	/* Rule 2 false (not TCP), rule 3 false, rule 4 false (not TCP). */
	assert_decided(judged(p, &k), NF_ACCEPT);
	for (int i = 0; i < 5; i++) {
		k = mk4(HOOK_INPUT, "203.0.113.1", IPPROTO_UDP, 7, 15, 8, 0,
			60);
		assert_incomplete(judged(p, &k), NF_DROP);
	}
	/* The bucket is still full: one complete packet takes the token. */
	k = mk4(HOOK_INPUT, "203.0.113.1", IPPROTO_UDP, 7, 5, 8, 0, 0);
	assert_decided(judged(p, &k), NF_DROP);
	assert_decided(judged(p, &k), NF_ACCEPT);
	policy_rule_counters(p, HOOK_INPUT, 2, &pk, &by);
	assert_int_equal(pk, 1);
	policy_rule_counters(p, HOOK_INPUT, 1, &pk, &by);
	assert_int_equal(pk, 0);
	/* TCP from 192.0.2.1, ports out of the copy: rule 2 unknown. */
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 80, 15, 20, 0, 40);
	assert_incomplete(judged(p, &k), NF_DROP);
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 80, 5, 20, 0, 0);
	assert_decided(judged(p, &k), NF_REPEAT);
	policy_free(p);
	free_conf(c);
}

static void test_unknown_meta(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct policy *p;
	struct pkt k;

	r = rule(c, HOOK_FORWARD, VERDICT_DROP, "iifname \"wan1\" drop");
	str(match(r, MATCH_IIFNAME, false), "wan1");
	r = rule(c, HOOK_FORWARD, VERDICT_REPEAT, "oifname != \"lan1\" "
		 "repeat");
	str(match(r, MATCH_OIFNAME, true), "lan1");
	r = rule(c, HOOK_OUTPUT, VERDICT_DROP, "ct state invalid drop");
	match(r, MATCH_CT_STATE, false)->flags = CT_STATE_INVALID;
	p = build(c, 1);

	ifcache_set(names, 920, "wan1");
	ifcache_set(names, 921, "lan1");
	k = mk4(HOOK_FORWARD, "192.0.2.1", IPPROTO_UDP, 9, 5, 8, 0, 0);
	k.flags |= PKT_HAS_INDEV | PKT_HAS_OUTDEV;
	k.indev = 920;
	k.outdev = 921;
	assert_decided(judged(p, &k), NF_DROP);
	k.indev = 921;
	assert_decided(judged(p, &k), NF_ACCEPT);
	/* An index the cache does not know: no system call, unknown. */
	k.indev = 929;
	assert_incomplete(judged(p, &k), NF_DROP);
	k.indev = 921;
	k.outdev = 929;
	assert_incomplete(judged(p, &k), NF_DROP);
	/* No output device: its name is "", and "!= lan1" holds. */
	k.flags &= ~(uint32_t)PKT_HAS_OUTDEV;
	assert_decided(judged(p, &k), NF_REPEAT);
	ifcache_set(names, 920, NULL);
	ifcache_set(names, 921, NULL);

	/* ct state: asked for and none is invalid (pktmsg.c); not known
	 * at all is unknown. */
	k = mk4(HOOK_OUTPUT, "192.0.2.1", IPPROTO_UDP, 9, 5, 8, 0, 0);
	assert_incomplete(judged(p, &k), NF_DROP);
	k.flags |= PKT_HAS_CT;
	k.ct_state = CT_STATE_INVALID;
	assert_decided(judged(p, &k), NF_DROP);
	k.ct_state = CT_STATE_NEW;
	assert_decided(judged(p, &k), NF_ACCEPT);
	policy_free(p);
	free_conf(c);
}

/*
 * meta skuid / skgid without the attribute (issue 17, item 2): a SYN-ACK
 * the host sends comes from a listener's request socket, whose owner nft
 * sees and the kernel does not send: INCOMPLETE. A kernel RST, a
 * forwarded SYN-ACK, an input packet have no owner for nft: ABSENT.
 */
static void test_owner_synack(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct policy *p;
	struct pkt k;

	r = rule(c, HOOK_OUTPUT, VERDICT_DROP, "meta skuid 4242 drop");
	num(match(r, MATCH_META_SKUID, false), 4242, 4242);
	r = rule(c, HOOK_POSTROUTING, VERDICT_DROP, "meta skgid != 5 drop");
	num(match(r, MATCH_META_SKGID, true), 5, 5);
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "meta skuid 4242 drop");
	num(match(r, MATCH_META_SKUID, false), 4242, 4242);
	r = rule(c, HOOK_FORWARD, VERDICT_DROP, "meta skuid 4242 drop");
	num(match(r, MATCH_META_SKUID, false), 4242, 4242);
	p = build(c, 1);

	k = mk4(HOOK_OUTPUT, "192.0.2.2", IPPROTO_TCP, 80, 5, 20, 0, 0);
	raw[33] = TCPF_SYN | TCPF_ACK;
	pkt_parse_headers(&k);
	assert_incomplete(judged(p, &k), NF_DROP);
	/* With the owner: judged on it. */
	k.flags |= PKT_HAS_UID;
	k.uid = 4242;
	assert_decided(judged(p, &k), NF_DROP);
	k.uid = 1;
	assert_decided(judged(p, &k), NF_ACCEPT);
	k.flags &= ~(uint32_t)PKT_HAS_UID;
	/* The flags past the copy: maybe a SYN-ACK. */
	k.payload_len = 30;
	pkt_parse_headers(&k);
	assert_incomplete(judged(p, &k), NF_DROP);
	k.payload_len = k.orig_len;
	/* A kernel RST, a plain SYN, UDP: no owner for nft either. */
	raw[33] = TCPF_RST | TCPF_ACK;
	pkt_parse_headers(&k);
	assert_decided(judged(p, &k), NF_ACCEPT);
	raw[33] = TCPF_SYN;
	pkt_parse_headers(&k);
	assert_decided(judged(p, &k), NF_ACCEPT);
	k = mk4(HOOK_OUTPUT, "192.0.2.2", IPPROTO_UDP, 80, 5, 8, 0, 0);
	assert_decided(judged(p, &k), NF_ACCEPT);
	/* Postrouting: sent here (no input device) or forwarded. */
	k = mk4(HOOK_POSTROUTING, "192.0.2.2", IPPROTO_TCP, 80, 5, 20, 0, 0);
	raw[33] = TCPF_SYN | TCPF_ACK;
	pkt_parse_headers(&k);
	assert_incomplete(judged(p, &k), NF_DROP);
	k.flags |= PKT_HAS_INDEV;
	k.indev = 3;
	assert_decided(judged(p, &k), NF_ACCEPT);
	/* Input: the handshake's ACK reaches the request socket, a first
	 * SYN no socket; UDP without an owner has none. */
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_TCP, 80, 5, 20, 0, 0);
	raw[33] = TCPF_ACK;
	pkt_parse_headers(&k);
	assert_incomplete(judged(p, &k), NF_DROP);
	raw[33] = TCPF_SYN;
	pkt_parse_headers(&k);
	assert_decided(judged(p, &k), NF_ACCEPT);
	k = mk4(HOOK_INPUT, "192.0.2.1", IPPROTO_UDP, 80, 5, 8, 0, 0);
	assert_decided(judged(p, &k), NF_ACCEPT);
	/* Forward: no socket. */
	k = mk4(HOOK_FORWARD, "192.0.2.1", IPPROTO_TCP, 80, 5, 20, 0, 0);
	raw[33] = TCPF_SYN | TCPF_ACK;
	pkt_parse_headers(&k);
	assert_decided(judged(p, &k), NF_ACCEPT);
	policy_free(p);
	free_conf(c);
}

/*
 * Other queue families and hooks (issue 17, item 10): nfqd's hook blocks
 * are the IPv4/IPv6 hooks; a bridge packet (whose hook 2 is the bridge's
 * forward), an unknown family's, an inet hook nfqd has no block for: each
 * gets incomplete-verdict, never a block's rules or policy, and never
 * skips the meta-only rules to reach the policy.
 */
static void test_other_families(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct policy *p;
	struct pkt k;

	r = rule(c, HOOK_FORWARD, VERDICT_DROP, "ip saddr 192.0.2.1 drop");
	addr(match(r, MATCH_IP_SADDR, false), "192.0.2.1");
	r = rule(c, HOOK_FORWARD, VERDICT_DROP, "meta mark 1 drop");
	num(match(r, MATCH_META_MARK, false), 1, 1);
	p = build(c, 1);

	k = mk4(HOOK_FORWARD, "192.0.2.1", IPPROTO_UDP, 9, 5, 8, 0, 0);
	assert_decided(judged(p, &k), NF_DROP);
	/* The same bytes from a bridge queue. */
	k.family = NFPROTO_BRIDGE;
	pkt_parse_headers(&k);
	assert_int_equal(k.l3_family, 0);
	assert_incomplete(judged(p, &k), NF_DROP);
	/* An unknown family whose payload is no IP packet: the meta-only
	 * rule is not skipped to reach the policy. */
	k.family = 99;
	raw[0] = 0x00;
	k.flags |= PKT_HAS_MARK;
	k.mark = 1;
	pkt_parse_headers(&k);
	assert_incomplete(judged(p, &k), NF_DROP);
	k.family = NFPROTO_ARP;
	pkt_parse_headers(&k);
	assert_incomplete(judged(p, &k), NF_DROP);
	/* IPv4 from a hook nfqd has no block for (inet ingress). */
	k = mk4(HOOK_FORWARD, "192.0.2.7", IPPROTO_UDP, 9, 5, 8, 0, 0);
	k.hook = HOOK_MAX;
	assert_incomplete(judged(p, &k), NF_DROP);
	policy_free(p);
	free_conf(c);
}

/* nfqd -t: a copy-range that cuts a rule's field off every packet. */
static void test_copy_warnings(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	char *w;

	r = rule(c, HOOK_INPUT, VERDICT_DROP, "tcp flags syn drop");
	m = match(r, MATCH_TCP_FLAGS, false);
	m->flags = TCPF_SYN;
	m->text = (char *)"tcp flags syn";
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "ip saddr 10.0.0.0/8 tcp dport "
		 "23 drop");
	addr(match(r, MATCH_IP_SADDR, false), "10.0.0.0/8");
	num(match(r, MATCH_TCP_DPORT, false), 23, 23);
	r = rule(c, HOOK_OUTPUT, VERDICT_DROP, "meta mark 1 drop");
	num(match(r, MATCH_META_MARK, false), 1, 1);
	r = rule(c, HOOK_OUTPUT, VERDICT_DROP, "meta length 1000-65535 drop");
	num(match(r, MATCH_META_LENGTH, false), 1000, 65535);

	c->opts.copy_range = 256;
	assert_null(policy_warnings(c));
	c->opts.copy_range = 40;
	w = policy_warnings(c);
	assert_string_equal(w, "test.conf:11:7: warning: copy-range 40 is "
			    "too small for \"tcp flags syn\" (IPv6 packets "
			    "without extension headers need 54 bytes)\n");
	free(w);
	/* copy-range 0: no payload at all. */
	c->opts.copy_range = 0;
	w = policy_warnings(c);
	assert_non_null(strstr(w, "test.conf:12:7: warning: copy-range 0 is "
			       "too small for \"ip saddr 10.0.0.0/8 tcp dport "
			       "23 drop\" (IPv4 packets without options need "
			       "20 bytes)\n"));
	assert_non_null(strstr(w, "(IPv4 packets without options need 24 "
			       "bytes)"));
	assert_null(strstr(w, "meta mark"));
	/* ... and no packet length (issue 17, item 3). */
	assert_non_null(strstr(w, "test.conf:12:7: warning: copy-range 0 "
			       "sends no packet length: \"meta length "
			       "1000-65535 drop\" is always incomplete\n"));
	free(w);
	c->opts.copy_range = 1;
	w = policy_warnings(c);
	assert_null(strstr(w, "meta length"));
	free(w);
	free_conf(c);
}

/* A name match's copy-range warning names what its protocol needs: a
 * DNS question fits 512 bytes, a ClientHello does not. */
static void test_names_copy_warning(void **state)
{
	const char *text = "options { copy-range 512; }\n"
			   "hook input { dns qname \"a.test\" drop; }\n";
	struct conf *c = NULL;
	char *w;

	(void)state;
	assert_int_equal(conf_load_buffer("t.conf", text, strlen(text), &c,
					  NULL), 0);
	assert_null(policy_warnings(c));
	c->opts.copy_range = 256;
	w = policy_warnings(c);
	assert_non_null(strstr(w, "a DNS query's question"));
	assert_non_null(strstr(w, "use copy-range 512 or more"));
	assert_null(strstr(w, "ClientHello"));
	free(w);
	conf_free(c);
}

/* nfqd -t: a rule that accepts on a TLS or HTTP name without a port
 * lets every port's SYN through (nfqd.conf(5) NAMES). */
static void test_names_open_ports(void **state)
{
	const char *text = "options { copy-range 4096; }\n"
			   "hook input {\n"
			   "  tls sni \"bad.test\" drop;\n"
			   "  tcp dport 443 tls sni \"ok.test\" accept;\n"
			   "  dns qname \"ok.test\" accept;\n"
			   "  http host != \"ok.test\" accept;\n"
			   "}\n";
	struct conf *c = NULL;
	char *w;

	(void)state;
	assert_int_equal(conf_load_buffer("t.conf", text, strlen(text), &c,
					  NULL), 0);
	w = policy_warnings(c);
	assert_non_null(w);
	assert_non_null(strstr(w, "t.conf:6:3: warning: rule \"http host != "
			       "\"ok.test\" accept\" lets through the first "
			       "packets of a connection to any port"));
	assert_null(strstr(w, "t.conf:3:"));
	assert_null(strstr(w, "t.conf:4:"));
	assert_null(strstr(w, "t.conf:5:"));
	free(w);
	conf_free(c);
}

/*
 * meta length (issue 17, items 3 and 11): copy-range 0 sends no length,
 * which is INCOMPLETE, not 0; a GSO or BIG TCP packet queued whole can be
 * longer than 65535, and the match takes 32 bits as nft's does.
 */
static void test_meta_length(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct policy *p;
	struct pkt k;

	r = rule(c, HOOK_OUTPUT, VERDICT_DROP, "meta length 1000-65535 drop");
	num(match(r, MATCH_META_LENGTH, false), 1000, 65535);
	r = rule(c, HOOK_OUTPUT, VERDICT_REPEAT, "meta length "
		 "65536-4294967295 repeat");
	num(match(r, MATCH_META_LENGTH, false), 65536, 4294967295u);
	p = build(c, 1);

	k = mk4(HOOK_OUTPUT, "192.0.2.1", IPPROTO_UDP, 9, 5, 8, 0, 0);
	assert_decided(judged(p, &k), NF_ACCEPT);
	k.orig_len = 1200;
	assert_decided(judged(p, &k), NF_DROP);
	k.orig_len = 200000;
	assert_decided(judged(p, &k), NF_REPEAT);
	k.orig_len = 4294967295u;
	assert_decided(judged(p, &k), NF_REPEAT);
	/* copy-range 0: neither payload nor NFQA_CAP_LEN. */
	k.payload = NULL;
	k.payload_len = 0;
	k.orig_len = 0;
	pkt_parse_headers(&k);
	assert_incomplete(judged(p, &k), NF_DROP);
	policy_free(p);
	free_conf(c);
}

/* nfqd -t: a rule an earlier rule of its hook hides. */
static void test_hidden_warnings(void **state)
{
	struct conf *c = conf_new();
	struct conf_rule *r;
	struct conf_match *m;
	char *w;

	c->opts.copy_range = 256;
	r = rule(c, HOOK_INPUT, VERDICT_ACCEPT, "tcp dport 22 accept");
	num(match(r, MATCH_TCP_DPORT, false), 22, 22);
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "tcp dport { 23, 22 } drop");
	m = match(r, MATCH_TCP_DPORT, false);
	num(m, 23, 23);
	num(m, 22, 22);
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "limit rate 1/second drop");
	match(r, MATCH_LIMIT, false)->rate = 1;
	r = rule(c, HOOK_INPUT, VERDICT_DROP, "limit rate 1/second drop");
	match(r, MATCH_LIMIT, false)->rate = 1;
	r = rule(c, HOOK_FORWARD, VERDICT_ACCEPT, "tcp dport != 22 accept");
	num(match(r, MATCH_TCP_DPORT, true), 22, 22);
	r = rule(c, HOOK_FORWARD, VERDICT_DROP, "tcp dport 22 drop");
	num(match(r, MATCH_TCP_DPORT, false), 22, 22);
	/* Nothing hidden: a wider list, a limit, a negation. */
	assert_null(policy_warnings(c));

	r = rule(c, HOOK_INPUT, VERDICT_DROP, "tcp dport { 22, 23 } counter "
		 "drop");
	m = match(r, MATCH_TCP_DPORT, false);
	num(m, 22, 22);
	num(m, 23, 23);
	r->counter = true;
	r = rule(c, HOOK_OUTPUT, VERDICT_DROP, "drop");
	r = rule(c, HOOK_OUTPUT, VERDICT_ACCEPT, "meta mark 1 accept");
	num(match(r, MATCH_META_MARK, false), 1, 1);
	w = policy_warnings(c);
	assert_string_equal(w,
		"test.conf:12:5: warning: rule \"meta mark 1 accept\" can "
		"never match: the rule at line 11 (\"drop\") takes every "
		"packet first\n"
		"test.conf:15:5: warning: rule \"tcp dport { 22, 23 } counter "
		"drop\" can never match: the rule at line 12 (\"tcp dport { "
		"23, 22 } drop\") takes all its packets first\n");
	free(w);
	free_conf(c);
}

/* A set file without elements loads, with a warning. */
static void test_empty_set_file(void **state)
{
	struct conf *c = conf_new();
	struct diags d = { 0 };
	struct conf_set *s;
	struct policy *p;
	char *w;

	s = set(c, "none", SET_IPV4_ADDR, false);
	s->file = strdup(write_file("empty.txt", "# none yet\n\n"));
	p = policy_build(c, 1, &d);
	assert_non_null(p);
	assert_int_equal(d.errors, 0);
	assert_int_equal(d.warnings, 1);
	w = diag_join(&d, DIAG_WARNING);
	assert_non_null(strstr(w, "test.conf:3:1: warning: set none: file "));
	assert_non_null(strstr(w, "empty.txt has no elements\n"));
	free(w);
	diag_free(&d);
	policy_free(p);
	free(s->file);
	free_conf(c);
}

/* Run LOOP until ifcache maps IFINDEX to WANT (NULL: unknown); 2 s max. */
static bool wait_name(struct ev_loop *loop, const struct ifcache *ifc,
		      unsigned ifindex, const char *want)
{
	char name[IF_NAMESIZE];

	for (int i = 0; i < 200; i++) {
		bool known;

		ifcache_batch_begin();
		known = ifcache_name(ifc, ifindex, name);

		if (want ? known && !strcmp(name, want) : !known)
			return true;
		ev_run(loop, EVRUN_NOWAIT);
		usleep(10000);
	}
	return false;
}

/*
 * The real thing: dump and notifications from rtnetlink, in a network
 * namespace of the test's own (skipped when it cannot have one).
 */
static void test_ifcache_netlink(void **state)
{
	struct ev_loop *loop;
	struct ifcache *ifc = NULL;
	unsigned idx;
	char name[IF_NAMESIZE];

	if (unshare(CLONE_NEWNET) < 0)
		skip();
	loop = ev_loop_new(EVFLAG_AUTO);
	assert_int_equal(ifcache_start(loop, &ifc), 0);
	assert_true(ifcache_name(ifc, 1, name));
	assert_string_equal(name, "lo");
	if (system("ip link add nfqdt0 type veth peer name nfqdt1 "
		   ">/dev/null 2>&1") != 0) {
		ifcache_free(ifc);
		ev_loop_destroy(loop);
		skip();
	}
	idx = if_nametoindex("nfqdt0");
	assert_true(idx > 0);
	assert_true(wait_name(loop, ifc, idx, "nfqdt0"));
	/* A rename the kernel acknowledged, its notification not yet read:
	 * a batch received now must not use the old name (issue 17). */
	assert_int_equal(system("ip link set nfqdt0 name nfqdrn"), 0);
	ifcache_batch_begin();
	assert_false(ifcache_name(ifc, idx, name));
	assert_false(ifcache_name(ifc, 1, name));
	assert_true(wait_name(loop, ifc, idx, "nfqdrn"));
	ifcache_batch_begin();
	assert_true(ifcache_name(ifc, idx, name));
	assert_string_equal(name, "nfqdrn");
	/* A worker with its own socket (issue 17): the main loop does not
	 * run below until the end, so every name comes from the worker. */
	ifcache_worker_start();
	assert_true(wait_name(loop, ifc, idx, "nfqdrn"));
	/* Unrelated links come and go: names stay known. */
	assert_int_equal(system("ip link add nfqdu0 type veth peer name "
				"nfqdu1 && ip link del nfqdu0"), 0);
	ifcache_batch_begin();
	assert_true(ifcache_name(ifc, idx, name));
	assert_string_equal(name, "nfqdrn");
	assert_true(ifcache_name(ifc, 1, name));
	/* A rename is seen by the very next batch, unread by the main
	 * thread; so is a deletion. */
	assert_int_equal(system("ip link set nfqdrn name nfqdwk"), 0);
	ifcache_batch_begin();
	assert_true(ifcache_name(ifc, idx, name));
	assert_string_equal(name, "nfqdwk");
	assert_int_equal(system("ip link del nfqdwk"), 0);
	ifcache_batch_begin();
	assert_false(ifcache_name(ifc, idx, name));
	assert_true(ifcache_name(ifc, 1, name));
	assert_true(wait_name(loop, ifc, idx, NULL));
	/* More changes than the worker's table holds, unread by the main
	 * thread: no name is sure until the main thread caught up. */
	assert_int_equal(system("for i in $(seq 1 140); do echo link add "
				"nfqdo$i type veth peer name nfqdp$i; done | "
				"ip -batch -"), 0);
	ifcache_batch_begin();
	assert_false(ifcache_name(ifc, 1, name));
	assert_true(wait_name(loop, ifc, 1, "lo"));
	idx = if_nametoindex("nfqdo140");
	assert_true(idx > 0);
	assert_true(wait_name(loop, ifc, idx, "nfqdo140"));
	assert_int_equal(system("for i in $(seq 1 140); do echo link del "
				"nfqdo$i; done | ip -batch -"), 0);
	assert_true(wait_name(loop, ifc, idx, NULL));
	ifcache_worker_stop();
	ifcache_free(ifc);
	ev_loop_destroy(loop);
}

static int setup(void **state)
{
	names = ifcache_new();
	return names && mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	ifcache_free(names);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_accepts),
		cmocka_unit_test(test_addresses_and_family),
		cmocka_unit_test(test_counters_carried),
		cmocka_unit_test(test_names_copy_warning),
		cmocka_unit_test(test_ports_protocols),
		cmocka_unit_test(test_one_range),
		cmocka_unit_test(test_interfaces),
		cmocka_unit_test(test_meta_and_statements),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_limit_bucket_as_nft),
		cmocka_unit_test(test_limit_per_key_as_nft),
		cmocka_unit_test(test_limit_fast_rate),
		cmocka_unit_test(test_limit_free_rate),
		cmocka_unit_test(test_limit_before_family),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_sets_and_files),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_log_rate_limit),
		cmocka_unit_test(test_long_ext_chains),
		cmocka_unit_test(test_transport_out_of_reach),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_names_leading),
		cmocka_unit_test(test_names_pending),
		cmocka_unit_test(test_names_pending_proto),
		cmocka_unit_test(test_names_sticky),
		cmocka_unit_test(test_names_open_ports),
		cmocka_unit_test(test_ah_and_fragments6),
		cmocka_unit_test(test_unknown_rule_logic),
		cmocka_unit_test(test_unknown_meta),
		cmocka_unit_test(test_owner_synack),
		cmocka_unit_test(test_other_families),
		cmocka_unit_test(test_copy_warnings),
		cmocka_unit_test(test_meta_length),
		cmocka_unit_test(test_hidden_warnings),
		cmocka_unit_test(test_empty_set_file),
		cmocka_unit_test(test_ifcache_netlink),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
