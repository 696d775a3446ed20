/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_policy_index.c - the classifier against rule-by-rule evaluation,
 * and both against a reference that evaluates the parsed rules left to
 * right as nft does, written apart from the rule compiler (no per-family
 * rule lists, no compiled sets, buckets of its own): random policies and
 * random packets (cut copies, fragments, unknown interfaces, missing marks
 * and ids, limits, negations, sets) must get the same decisions and
 * counters all three ways; and large policies stay cheap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "conf_fixture.h"
#include "diag.h"
#include "ifcache.h"
#include "pkt.h"
#include "policy.h"
#include "policy_field.h"
#include "policy_index.h"
#include "policy_int.h"
#include "verdict.h"

static uint64_t rng_state;

/* The interface names both policies and the reference read. */
static struct ifcache *ifnames;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? (uint32_t)(rng_state % n) : 0;
}

static bool chance(unsigned pct)
{
	return rnd(100) < pct;
}

/* ---- random configurations */

static const char *const addr4[] = {
	"10.0.0.1", "10.0.0.2", "10.0.1.1", "192.0.2.1", "192.0.2.200",
	"0.0.0.0", "255.255.255.255",
};
static const char *const pfx4[] = {
	"10.0.0.0/24", "10.0.0.0/8", "192.0.2.0/25", "0.0.0.0/0",
	"10.0.0.1-10.0.0.5", "192.0.2.100-192.0.2.255", "10.0.0.2/31",
};
static const char *const addr6[] = {
	"2001:db8::1", "2001:db8::2", "2001:db8:1::1", "fe80::1", "::",
};
static const char *const pfx6[] = {
	"2001:db8::/64", "2001:db8::/32", "::/0", "2001:db8::1-2001:db8::9",
	"fe80::/10",
};
static const uint32_t ports[] = { 0, 22, 53, 80, 443, 1000, 65535 };
static const char *const names[] = { "lan0", "wan0", "veth7", "", "lan*",
				     "w*" };

static struct conf_elem *new_elem(struct conf_elem **v, unsigned *n)
{
	struct conf_elem *e;

	*v = realloc(*v, (*n + 1) * sizeof(*e));
	e = &(*v)[(*n)++];
	memset(e, 0, sizeof(*e));
	e->loc = (struct conf_loc){ "rand.conf", 1, 1 };
	return e;
}

static void rand_num(struct conf_elem **v, unsigned *n, uint32_t lo,
		     uint32_t hi)
{
	struct conf_elem *e = new_elem(v, n);

	e->kind = ELEM_NUM;
	e->lo = lo;
	e->hi = hi;
}

/* Also values outside the small pools above: many distinct ranges per
 * field, so that a field's intervals need a long search. */
static bool wide_values;

/* A port range or a 10.0.0.0/16 prefix of its own, into V. */
static void rand_wide(enum match_field f, struct conf_elem **v, unsigned *n)
{
	char a[32];
	uint32_t p = rnd(65536);

	if (f == MATCH_IP_SADDR || f == MATCH_IP_DADDR) {
		snprintf(a, sizeof(a), "10.0.%u.%u/%u", rnd(256), rnd(256),
			 24 + rnd(9));
		fill_addr(new_elem(v, n), a);
	} else {
		rand_num(v, n, p, p + (chance(50) ? 0 : rnd(300)));
		if ((*v)[*n - 1].hi > 65535)
			(*v)[*n - 1].hi = 65535;
	}
}

/* One or a few values of field F into V. */
static void rand_values(enum match_field f, struct conf_elem **v,
			unsigned *n)
{
	unsigned k = chance(70) ? 1 : 2 + rnd(10);

	for (unsigned i = 0; i < k; i++) {
		if (wide_values && (f == MATCH_IP_SADDR || f == MATCH_IP_DADDR
				    || (f >= MATCH_TCP_SPORT &&
					f <= MATCH_UDP_DPORT)) && chance(60)) {
			rand_wide(f, v, n);
			continue;
		}
		switch (f) {
		case MATCH_IP_SADDR:
		case MATCH_IP_DADDR:
			fill_addr(new_elem(v, n), chance(50) ?
				  addr4[rnd(7)] : pfx4[rnd(7)]);
			break;
		case MATCH_IP6_SADDR:
		case MATCH_IP6_DADDR:
			fill_addr(new_elem(v, n), chance(50) ?
				  addr6[rnd(5)] : pfx6[rnd(5)]);
			break;
		case MATCH_IP_PROTOCOL:
		case MATCH_META_L4PROTO: {
			static const uint8_t pr[] = { 6, 17, 1, 58, 47, 51 };

			rand_num(v, n, pr[rnd(6)], 0);
			(*v)[*n - 1].hi = (*v)[*n - 1].lo;
			break;
		}
		case MATCH_ICMP_TYPE:
		case MATCH_ICMPV6_TYPE:
			rand_num(v, n, rnd(4) * 64, 0);
			(*v)[*n - 1].hi = (*v)[*n - 1].lo +
					  (chance(20) ? 10 : 0);
			break;
		case MATCH_IIFNAME:
		case MATCH_OIFNAME: {
			struct conf_elem *e = new_elem(v, n);

			e->kind = ELEM_STR;
			e->str = (char *)names[rnd(chance(70) ? 4 : 6)];
			break;
		}
		case MATCH_META_MARK:
			rand_num(v, n, rnd(4), 0);
			(*v)[*n - 1].hi = (*v)[*n - 1].lo;
			break;
		case MATCH_META_LENGTH:
			rand_num(v, n, 20 + rnd(60), 0);
			(*v)[*n - 1].hi = (*v)[*n - 1].lo + (chance(50) ?
							     rnd(1000) : 0);
			break;
		case MATCH_META_SKUID:
		case MATCH_META_SKGID:
			rand_num(v, n, rnd(3), 0);
			(*v)[*n - 1].hi = (*v)[*n - 1].lo;
			break;
		default: {	/* ports */
			uint32_t p = ports[rnd(7)];

			rand_num(v, n, p, chance(20) && p < 65000 ?
				 p + rnd(2000) : p);
			break;
		}
		}
	}
}

static const enum match_field fields[] = {
	MATCH_IP_SADDR, MATCH_IP_DADDR, MATCH_IP6_SADDR, MATCH_IP6_DADDR,
	MATCH_IP_PROTOCOL, MATCH_META_L4PROTO, MATCH_TCP_SPORT,
	MATCH_TCP_DPORT, MATCH_UDP_SPORT, MATCH_UDP_DPORT, MATCH_TCP_FLAGS,
	MATCH_ICMP_TYPE, MATCH_ICMPV6_TYPE, MATCH_IIFNAME, MATCH_OIFNAME,
	MATCH_META_MARK, MATCH_META_LENGTH, MATCH_META_SKUID,
	MATCH_META_SKGID, MATCH_CT_STATE, MATCH_LIMIT,
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

/* Named sets: "s4" (IPv4, many values: a hash), "s6", "sp" (ports). */
static void rand_sets(struct conf *c)
{
	static const char *const nm[] = { "s4", "s6", "sp" };
	static const enum set_type ty[] = { SET_IPV4_ADDR, SET_IPV6_ADDR,
					    SET_INET_SERVICE };

	c->n_sets = 3;
	c->sets = calloc(3, sizeof(*c->sets));
	for (unsigned s = 0; s < 3; s++) {
		struct conf_set *cs = &c->sets[s];
		unsigned k = 1 + rnd(20);

		cs->name = (char *)nm[s];
		cs->type = ty[s];
		cs->interval = true;
		for (unsigned i = 0; i < k; i++)
			rand_values(s == 0 ? MATCH_IP_SADDR : s == 1 ?
				    MATCH_IP6_SADDR : MATCH_TCP_DPORT,
				    &cs->elems, &cs->n_elems);
	}
}

static void rand_match(struct conf_match *m)
{
	memset(m, 0, sizeof(*m));
	m->field = fields[rnd(N_FIELDS)];
	m->negate = chance(25);
	m->mask = 0xffffffff;
	m->loc = (struct conf_loc){ "rand.conf", 2, 1 };
	switch (m->field) {
	case MATCH_TCP_FLAGS:
		m->flags = 1u << rnd(6) | (chance(50) ? TCPF_ACK : 0);
		return;
	case MATCH_CT_STATE:
		m->flags = 1u << rnd(4);
		return;
	case MATCH_LIMIT:
		/* A bucket of 1, 2 or 5 packets and no refill while the
		 * test runs (1 or 2 an hour); negated: "over". */
		m->rate = 1 + rnd(2);
		m->per_seconds = 3600;
		m->burst = rnd(3);
		return;
	case MATCH_META_MARK:
		m->mask = chance(50) ? 0xffffffff : 1 + rnd(3);
		break;
	default:
		break;
	}
	if (chance(15) && (m->field == MATCH_IP_SADDR ||
			   m->field == MATCH_IP_DADDR))
		m->set_name = "s4";
	else if (chance(15) && (m->field == MATCH_IP6_SADDR ||
				m->field == MATCH_IP6_DADDR))
		m->set_name = "s6";
	else if (chance(15) && (m->field == MATCH_TCP_DPORT ||
				m->field == MATCH_UDP_SPORT))
		m->set_name = "sp";
	else
		rand_values(m->field, &m->elems, &m->n_elems);
}

static void rand_rule(struct conf_rule *r, unsigned pos)
{
	memset(r, 0, sizeof(*r));
	r->n_matches = rnd(chance(20) ? 6 : 4);
	r->matches = calloc(r->n_matches + 1, sizeof(*r->matches));
	for (unsigned j = 0; j < r->n_matches; j++)
		rand_match(&r->matches[j]);
	r->verdict = (enum verdict_kind)rnd(4);
	r->queue_num = (uint16_t)rnd(4);
	r->mark_set = chance(20);
	r->mark = rnd(16);
	r->bypass = r->verdict == VERDICT_ACCEPT && chance(10);
	r->counter = true;
	r->text = "rule";
	r->loc = (struct conf_loc){ "rand.conf", 10 + pos, 1 };
}

static struct conf *rand_conf(unsigned max_rules)
{
	struct conf *c = calloc(1, sizeof(*c));

	c->path = "rand.conf";
	c->opts.bypass_mark = 0x40000000;
	c->opts.incomplete_verdict = chance(50) ? VERDICT_DROP :
						  VERDICT_ACCEPT;
	rand_sets(c);
	for (int h = HOOK_INPUT; h <= HOOK_FORWARD; h++) {
		struct conf_hook *hk = &c->hooks[h];

		hk->present = true;
		hk->policy = chance(50) ? VERDICT_ACCEPT : VERDICT_DROP;
		hk->n_rules = rnd(max_rules + 1);
		hk->rules = calloc(hk->n_rules + 1, sizeof(*hk->rules));
		for (unsigned i = 0; i < hk->n_rules; i++)
			rand_rule(&hk->rules[i], i);
	}
	return c;
}

/* ---- random packets */

static uint8_t raw[256];

static void put16(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static void rand_addr(uint8_t *a, bool v6)
{
	struct conf_elem e;

	if (chance(70))
		fill_addr(&e, v6 ? addr6[rnd(5)] : addr4[rnd(7)]);
	else
		fill_addr(&e, v6 ? pfx6[rnd(5)] : pfx4[rnd(7)]);
	memcpy(a, chance(50) ? e.alo : e.ahi, v6 ? 16 : 4);
	if (chance(20))
		a[v6 ? 15 : 3] ^= (uint8_t)rnd(256);
}

/* Transport header of PROTO at T; its length. */
static size_t rand_l4(uint8_t *t, uint8_t proto)
{
	put16(t, chance(70) ? ports[rnd(7)] : rnd(65536));
	put16(t + 2, chance(70) ? ports[rnd(7)] : rnd(65536));
	if (proto == IPPROTO_TCP) {
		t[12] = 5 << 4;
		t[13] = (uint8_t)rnd(64);
		return 20;
	}
	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6)
		t[0] = (uint8_t)(chance(70) ? rnd(4) * 64 + rnd(2) * 5 :
					      rnd(256));
	return 8;
}

static struct pkt rand_pkt(void)
{
	static const uint8_t protos[] = { 6, 17, 1, 58, 47, 51 };
	struct pkt p = { 0 };
	bool v6 = chance(40);
	uint8_t proto = protos[rnd(6)];
	size_t hl = v6 ? 40 : 20, len;

	memset(raw, 0, sizeof(raw));
	if (v6) {
		raw[0] = 0x60;
		raw[6] = proto;
		if (chance(15)) {	/* a hop-by-hop header first */
			raw[6] = 0;
			raw[40] = proto;
			hl += 8;
		}
		rand_addr(raw + 8, true);
		rand_addr(raw + 24, true);
	} else {
		raw[0] = 0x45;
		raw[9] = proto;
		rand_addr(raw + 12, false);
		rand_addr(raw + 16, false);
		if (chance(10))
			put16(raw + 6, 1 + rnd(100));
	}
	len = hl + rand_l4(raw + hl, proto) + rnd(40);
	if (v6)
		put16(raw + 4, (uint32_t)(len - 40));
	else
		put16(raw + 2, (uint32_t)len);
	p.hook = (uint8_t)(HOOK_INPUT + rnd(3));
	p.family = chance(90) ? (v6 ? NFPROTO_IPV6 : NFPROTO_IPV4) :
				NFPROTO_UNSPEC;
	p.payload = raw;
	p.orig_len = (uint32_t)len;
	p.payload_len = chance(70) ? (uint32_t)len : rnd((uint32_t)len + 1);
	if (chance(5))
		p.payload = NULL, p.payload_len = 0;
	if (chance(50)) {
		p.flags |= PKT_HAS_MARK;
		p.mark = rnd(5);
	}
	if (chance(70)) {
		p.flags |= PKT_HAS_INDEV;
		p.indev = 900 + rnd(5);	/* 903, 904: not in the cache */
	}
	if (chance(50)) {
		p.flags |= PKT_HAS_OUTDEV;
		p.outdev = chance(20) ? 0 : 900 + rnd(5);
	}
	if (chance(50)) {
		p.flags |= PKT_HAS_UID | PKT_HAS_GID;
		p.uid = rnd(3);
		p.gid = rnd(3);
	}
	if (chance(60)) {
		p.flags |= PKT_HAS_CT;
		p.ct_state = 1u << rnd(4);
	}
	if (p.payload)
		pkt_parse_headers(&p);
	return p;
}

/*
 * ---- the reference: the parsed rules (struct conf) evaluated left to
 * right, as nft evaluates a rule in an inet table. Written apart from the
 * rule compiler: no per-family rule lists, no compiled sets, its own
 * buckets; only the packet's fields are read through policy_field.h (the
 * parser's reading of a packet is tested elsewhere). A match the packet
 * lacks (ABSENT) ends the rule false, one nfqd cannot see (INCOMPLETE)
 * makes it unknown unless a later match is false, and a limit takes its
 * token when it is reached with the rule still known.
 */

#define REF_MAXM	8		/* matches per rule, at most */

struct ref {
	const struct conf *c;
	unsigned *tokens[HOOK_MAX];	/* rule i, match j: [i * REF_MAXM + j] */
	uint64_t *pk[HOOK_MAX], *by[HOOK_MAX];
	uint64_t policy_pk[HOOK_MAX];
};

static void ref_init(struct ref *r, const struct conf *c)
{
	memset(r, 0, sizeof(*r));
	r->c = c;
	for (int h = 0; h < HOOK_MAX; h++) {
		const struct conf_hook *hk = &c->hooks[h];
		size_t n = hk->n_rules + 1;

		r->tokens[h] = calloc(n * REF_MAXM, sizeof(unsigned));
		r->pk[h] = calloc(n, sizeof(uint64_t));
		r->by[h] = calloc(n, sizeof(uint64_t));
		assert_non_null(r->tokens[h]);
		for (unsigned i = 0; i < hk->n_rules; i++) {
			assert_true(hk->rules[i].n_matches <= REF_MAXM);
			for (unsigned j = 0; j < hk->rules[i].n_matches; j++) {
				const struct conf_match *m =
					&hk->rules[i].matches[j];

				/* No refill: one or two tokens an hour. */
				assert_true(m->field != MATCH_LIMIT ||
					    m->rate * 3600 / m->per_seconds
					    <= 2);
				r->tokens[h][i * REF_MAXM + j] =
					m->burst ? m->burst : 5;
			}
		}
	}
}

static void ref_free(struct ref *r)
{
	for (int h = 0; h < HOOK_MAX; h++) {
		free(r->tokens[h]);
		free(r->pk[h]);
		free(r->by[h]);
	}
}

static bool ref_in32(const struct conf_elem *e, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t lo = e[i].lo, hi = e[i].hi;

		if (e[i].kind == ELEM_ADDR) {
			if (e[i].family != AF_INET)
				continue;
			lo = field_get32(e[i].alo);
			hi = field_get32(e[i].ahi);
		} else if (e[i].kind != ELEM_NUM) {
			continue;
		}
		if (v >= lo && v <= hi)
			return true;
	}
	return false;
}

static bool ref_in128(const struct conf_elem *e, unsigned n,
		      const uint8_t *a)
{
	for (unsigned i = 0; i < n; i++)
		if (e[i].kind == ELEM_ADDR && e[i].family == AF_INET6 &&
		    memcmp(e[i].alo, a, 16) <= 0 && memcmp(a, e[i].ahi, 16) <= 0)
			return true;
	return false;
}

static bool ref_in_name(const struct conf_elem *e, unsigned n,
			const char *name)
{
	for (unsigned i = 0; i < n; i++) {
		size_t len = e[i].kind == ELEM_STR ? strlen(e[i].str) : 0;

		if (e[i].kind != ELEM_STR)
			continue;
		if (len && e[i].str[len - 1] == '*' ?
		    !strncmp(name, e[i].str, len - 1) : !strcmp(name, e[i].str))
			return true;
	}
	return false;
}

/* M's values: inline, or its named set's. */
static void ref_values(const struct conf *c, const struct conf_match *m,
		       const struct conf_elem **e, unsigned *n)
{
	*e = m->elems;
	*n = m->n_elems;
	for (unsigned i = 0; m->set_name && i < c->n_sets; i++)
		if (!strcmp(c->sets[i].name, m->set_name)) {
			*e = c->sets[i].elems;
			*n = c->sets[i].n_elems;
		}
}

/* Match M (rule I, match J of hook H) on PKT: its state, and whether it
 * holds before negation. A limit takes a token here. */
static bool ref_match(struct ref *r, int h, unsigned i, unsigned j,
		      const struct pkt *pkt, enum pkt_state *st)
{
	const struct conf_match *m = &r->c->hooks[h].rules[i].matches[j];
	const struct conf_elem *e;
	char name[IF_NAMESIZE];
	const uint8_t *a;
	unsigned n, *tok;
	uint32_t v;

	ref_values(r->c, m, &e, &n);
	switch (m->field) {
	case MATCH_LIMIT:
		tok = &r->tokens[h][i * REF_MAXM + j];
		*st = PKT_PRESENT;
		if (!*tok)
			return false;
		(*tok)--;
		return true;
	case MATCH_TCP_FLAGS:
		*st = field_th_state(pkt, 0, IPPROTO_TCP, PKT_TH_FLAGS_END);
		return (pkt->tcp_flags & m->flags) == m->flags;
	case MATCH_CT_STATE:
		*st = pkt->flags & PKT_HAS_CT ? PKT_PRESENT : PKT_INCOMPLETE;
		return pkt->ct_state & m->flags;
	case MATCH_IP6_SADDR:
	case MATCH_IP6_DADDR:
		*st = field_u128(pkt, m->field, &a);
		return ref_in128(e, n, a);
	case MATCH_IIFNAME:
	case MATCH_OIFNAME:
		*st = field_name(ifnames, pkt, m->field, name);
		return ref_in_name(e, n, name);
	default:
		*st = field_u32(pkt, m->field, m->field == MATCH_META_MARK ?
				m->mask : 0xffffffff, &v);
		return ref_in32(e, n, v);
	}
}

static uint32_t ref_verdict(enum verdict_kind v, uint16_t q)
{
	return v == VERDICT_DROP ? NF_DROP : v == VERDICT_REPEAT ? NF_REPEAT :
	       v == VERDICT_QUEUE ? NF_QUEUE_NR((uint32_t)q) : NF_ACCEPT;
}

/* PKT through hook PKT->hook's rules, in order, every rule: *D. */
static void ref_judge(struct ref *r, const struct pkt *pkt,
		      struct decision *d)
{
	int h = pkt->hook;
	const struct conf_hook *hk = &r->c->hooks[h];
	bool fam = pkt->family == NFPROTO_IPV4 ||
		   pkt->family == NFPROTO_IPV6 || pkt->l3_family;

	memset(d, 0, sizeof(*d));
	/* A packet of no known family meets no rule (as policy_judge()). */
	for (unsigned i = 0; fam && i < hk->n_rules; i++) {
		const struct conf_rule *cr = &hk->rules[i];
		bool unknown = false, no = false;

		for (unsigned j = 0; j < cr->n_matches && !no; j++) {
			enum pkt_state st;
			bool hit;

			if (unknown && cr->matches[j].field == MATCH_LIMIT)
				continue;
			hit = ref_match(r, h, i, j, pkt, &st);
			if (st == PKT_ABSENT)
				no = true;
			else if (st == PKT_INCOMPLETE)
				unknown = true;
			else if (hit == cr->matches[j].negate)
				no = true;
		}
		if (no)
			continue;
		if (unknown) {
			d->verdict = r->c->opts.incomplete_verdict ==
				     VERDICT_DROP ? NF_DROP : NF_ACCEPT;
			d->incomplete = true;
			return;
		}
		d->verdict = ref_verdict(cr->verdict, cr->queue_num);
		d->set_mark = cr->mark_set || cr->bypass;
		d->mark = cr->mark_set ? cr->mark : pkt->flags & PKT_HAS_MARK ?
			  pkt->mark : 0;
		if (!cr->mark_set && !cr->bypass)
			d->mark = 0;
		if (cr->bypass)
			d->mark |= r->c->opts.bypass_mark;
		r->pk[h][i]++;
		r->by[h][i] += pkt->orig_len ? pkt->orig_len :
					       pkt->payload_len;
		return;
	}
	d->verdict = hk->present ? ref_verdict(hk->policy, 0) : NF_ACCEPT;
	r->policy_pk[h]++;
}

static void same_as_ref(struct policy *p, const struct ref *r)
{
	for (int h = 0; h < HOOK_MAX; h++) {
		for (unsigned i = 0; i < policy_rule_count(p, h); i++) {
			uint64_t pk, by;

			policy_rule_counters(p, h, i, &pk, &by);
			assert_int_equal(pk, r->pk[h][i]);
			assert_int_equal(by, r->by[h][i]);
		}
		assert_int_equal(policy_policy_packets(p, h),
				 r->policy_pk[h]);
	}
}

/* ---- comparing */

static void same_counters(struct policy *a, struct policy *b)
{
	for (int h = 0; h < HOOK_MAX; h++) {
		assert_int_equal(policy_rule_count(a, h),
				 policy_rule_count(b, h));
		for (unsigned i = 0; i < policy_rule_count(a, h); i++) {
			uint64_t pa, ba, pb, bb;

			policy_rule_counters(a, h, i, &pa, &ba);
			policy_rule_counters(b, h, i, &pb, &bb);
			assert_int_equal(pa, pb);
			assert_int_equal(ba, bb);
		}
		assert_int_equal(policy_policy_packets(a, h),
				 policy_policy_packets(b, h));
	}
}

static bool same_decision(const struct decision *a,
			  const struct decision *b)
{
	return a->verdict == b->verdict && a->set_mark == b->set_mark &&
	       a->mark == b->mark && a->incomplete == b->incomplete;
}

static void compare_once(unsigned max_rules, unsigned n_pkts)
{
	struct conf *c = rand_conf(max_rules);
	struct diags dg = { 0 };
	struct policy *lin = policy_build(c, 1, &dg);
	struct policy *idx;
	struct ref ref;

	if (!lin)
		fail_msg("policy_build: %s", diag_join(&dg, DIAG_ERROR));
	idx = policy_build(c, 1, &dg);
	diag_free(&dg);
	assert_non_null(idx);
	policy_use_ifcache(lin, ifnames);
	policy_use_ifcache(idx, ifnames);
	policy_set_eval(lin, POLICY_EVAL_LINEAR);
	policy_set_eval(idx, POLICY_EVAL_INDEX);
	ref_init(&ref, c);
	for (unsigned i = 0; i < n_pkts; i++) {
		struct pkt p = rand_pkt();
		struct decision dl, di, dr;

		policy_judge(lin, &p, 0, &dl);
		policy_judge(idx, &p, 0, &di);
		ref_judge(&ref, &p, &dr);
		if (!same_decision(&dl, &di) || !same_decision(&dl, &dr))
			fail_msg("seed state %llu packet %u (hook %u family %u):"
				 " linear %u/%d/%u/%d index %u/%d/%u/%d "
				 "reference %u/%d/%u/%d",
				 (unsigned long long)rng_state, i, p.hook,
				 p.family, dl.verdict, dl.set_mark, dl.mark,
				 dl.incomplete, di.verdict, di.set_mark,
				 di.mark, di.incomplete, dr.verdict,
				 dr.set_mark, dr.mark, dr.incomplete);
	}
	same_counters(lin, idx);
	same_as_ref(lin, &ref);
	ref_free(&ref);
	policy_free(lin);
	policy_free(idx);
	free_conf(c);
}

static void set_ifaces(void)
{
	ifcache_set(ifnames, 900, "lan0");
	ifcache_set(ifnames, 901, "wan0");
	ifcache_set(ifnames, 902, "veth7");
}

static void test_random_small(void **state)
{
	rng_state = 0x9e3779b97f4a7c15ull;
	set_ifaces();
	for (unsigned i = 0; i < 1500; i++)
		compare_once(12, 200);
}

static void test_random_large(void **state)
{
	rng_state = 0x2545f4914f6cdd1dull;
	set_ifaces();
	for (unsigned i = 0; i < 40; i++)
		compare_once(400, 2000);
}

/* The same with every 32-bit field in the hash, then in intervals
 * wherever their lists stay linear (the two lookups the cost picks
 * between), with values that make long interval arrays. */
static void test_random_forced(void **state)
{
	static const unsigned steps[] = { 0, 64 };

	set_ifaces();
	wide_values = true;
	for (unsigned k = 0; k < 2; k++) {
		pidx_iv_steps = steps[k];
		rng_state = 0x9e3779b97f4a7c15ull + k;
		for (unsigned i = 0; i < 500; i++)
			compare_once(12, 200);
		rng_state = 0x2545f4914f6cdd1dull + k;
		for (unsigned i = 0; i < 15; i++)
			compare_once(400, 2000);
	}
	pidx_iv_steps = 4;
	wide_values = false;
}

/* ---- scale: the benchmark's "N rules that miss, then one that matches" */

static struct conf *miss_conf(unsigned n)
{
	struct conf *c = calloc(1, sizeof(*c));
	struct conf_hook *hk = &c->hooks[HOOK_INPUT];

	c->path = "miss.conf";
	c->opts.incomplete_verdict = VERDICT_DROP;
	hk->present = true;
	hk->n_rules = n + 1;
	hk->rules = calloc(n + 1, sizeof(*hk->rules));
	for (unsigned i = 0; i <= n; i++) {
		struct conf_rule *r = &hk->rules[i];
		struct conf_match *m = calloc(1, sizeof(*m));
		unsigned k = i / 3;

		r->matches = m;
		r->n_matches = 1;
		r->verdict = i < n ? VERDICT_DROP : VERDICT_ACCEPT;
		r->text = "rule";
		m->mask = 0xffffffff;
		if (i == n) {
			m->field = MATCH_UDP_DPORT;
			rand_num(&m->elems, &m->n_elems, 9, 9);
		} else if (i % 3 == 0) {
			char a[32];

			m->field = MATCH_IP_SADDR;
			snprintf(a, sizeof(a), "10.%u.%u.%u", k >> 16,
				 k >> 8 & 255, k & 255);
			fill_addr(new_elem(&m->elems, &m->n_elems), a);
		} else {
			m->field = i % 3 == 1 ? MATCH_TCP_DPORT :
						MATCH_UDP_DPORT;
			rand_num(&m->elems, &m->n_elems,
				 (i % 3 == 1 ? 1000 : 20000) + k, 0);
			m->elems[0].hi = m->elems[0].lo;
		}
	}
	return c;
}

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* A UDP packet from 192.0.2.1 to port 9 meets one candidate: the rule
 * that accepts it. Prints the build time and memory (not asserted). */
static void test_scale(void **state)
{
	struct conf *c = miss_conf(10000);
	struct timespec t0, t1;
	struct diags dg = { 0 };
	struct policy *p;
	struct pidx_walk w;
	struct pkt k = { 0 };
	unsigned n = 0, skip;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	p = policy_build(c, 1, &dg);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag_free(&dg);
	assert_non_null(p);
	memset(raw, 0, sizeof(raw));
	raw[0] = 0x45;
	put16(raw + 2, 46);
	raw[9] = IPPROTO_UDP;
	inet_pton(AF_INET, "192.0.2.1", raw + 12);
	inet_pton(AF_INET, "192.0.2.2", raw + 16);
	put16(raw + 22, 9);
	k.hook = HOOK_INPUT;
	k.family = NFPROTO_IPV4;
	k.payload = raw;
	k.payload_len = k.orig_len = 46;
	pkt_parse_headers(&k);
	pidx_start(p->hooks[HOOK_INPUT].idx[0], NULL, &k, &w);
	while (pidx_next(&w, &skip) != PIDX_END)
		n++;
	assert_int_equal(n, 1);
	{
		struct decision d;

		policy_judge(p, &k, 0, &d);
		assert_int_equal(d.verdict, NF_ACCEPT);
	}
	print_message("10001 rules: policy_build %.1f ms, ", secs(&t0, &t1) *
		      1e3);
	/* Again, the classifier alone. */
	for (int h = 0; h < HOOK_MAX; h++)
		for (int f = 0; f < 2; f++)
			pidx_free(p->hooks[h].idx[f]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(pidx_build(p), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("of which the classifier %.1f ms, %zu bytes\n",
		      secs(&t0, &t1) * 1e3,
		      pidx_bytes(p->hooks[HOOK_INPUT].idx[0]));
	policy_free(p);
	free_conf(c);
}

static int setup(void **state)
{
	ifnames = ifcache_new();
	return ifnames ? 0 : -1;
}

static int teardown(void **state)
{
	ifcache_free(ifnames);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_small),
		cmocka_unit_test(test_random_large),
		cmocka_unit_test(test_random_forced),
		cmocka_unit_test(test_scale),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
