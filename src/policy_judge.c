/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policy_judge.c - the packet path: matching, statements, counters. */
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ifcache.h"
#include "log.h"
#include "pkt.h"
#include "policy.h"
#include "policy_field.h"
#include "policy_index.h"
#include "policy_int.h"
#include "verdict.h"

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Take one token if there is one (GCRA; one CAS, no lock). */
static bool limiter_take(struct limiter *l)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t tat = atomic_load_explicit(&l->tat, memory_order_relaxed);

	if (l->interval == UINT64_MAX)
		return false;
	for (;;) {
		uint64_t start = tat > now ? tat : now;

		if (start - now > l->tolerance)
			return false;
		if (atomic_compare_exchange_weak_explicit(&l->tat, &tat,
				start + l->interval, memory_order_relaxed,
				memory_order_relaxed))
			return true;
	}
}

/* A token of the bucket of the packet's KEY ("limit ... per KEY"). */
static bool key_take(const struct cmatch *m, const struct pkt *pkt,
		     enum pkt_state *st)
{
	uint8_t k[16] = { 0 };
	const uint8_t *a;
	uint32_t v;

	if (m->kl_key == MATCH_IP6_SADDR || m->kl_key == MATCH_IP6_DADDR) {
		*st = field_u128(pkt, m->kl_key, &a);
		if (*st == PKT_PRESENT)
			memcpy(k, a, 16);
	} else {
		*st = field_u32(pkt, m->kl_key, 0xffffffff, &v);
		memcpy(k, &v, sizeof(v));
	}
	return *st == PKT_PRESENT && keylimit_take(m->kl, k);
}

/* V in one of M's ranges; no branch per range. */
static bool in_spans(const struct cmatch *m, uint32_t v)
{
	bool hit = false;

	for (unsigned i = 0; i < m->n_span; i++)
		hit |= v - m->span[i].lo <= m->span[i].hi - m->span[i].lo;
	return hit;
}

/*
 * The match holds, before negation, when *ST is PKT_PRESENT; otherwise
 * the field is ABSENT or INCOMPLETE and the result means nothing.
 */
static bool match_value(const struct policy *p, const struct cmatch *m,
			const struct pkt *pkt, enum pkt_state *st)
{
	char name[IF_NAMESIZE];
	const uint8_t *a;
	uint32_t v;

	switch (m->field) {
	case MATCH_IP6_SADDR:
	case MATCH_IP6_DADDR:
		*st = field_u128(pkt, m->field, &a);
		if (*st != PKT_PRESENT)
			return false;
		return set_has_u128(m->set, a) ||
		       (m->dyn && dynset_has_u128(m->dyn, a));
	case MATCH_IIFNAME:
	case MATCH_OIFNAME:
		*st = field_name(p->ifc, pkt, m->field, name);
		return set_has_str(m->set, name);
	case MATCH_TCP_FLAGS:
		*st = field_th_state(pkt, 0, IPPROTO_TCP, PKT_TH_FLAGS_END);
		return (pkt->tcp_flags & m->flags) == m->flags;
	case MATCH_CT_STATE:
		/* Without NFQA_CT_INFO and without conntrack asked for (a
		 * reload that just added "ct state"), the state is unknown. */
		*st = pkt->flags & PKT_HAS_CT ? PKT_PRESENT : PKT_INCOMPLETE;
		return pkt->ct_state & m->flags;
	case MATCH_LIMIT:
		*st = PKT_PRESENT;
		return m->kl ? key_take(m, pkt, st) : limiter_take(m->lim);
	default:
		*st = field_u32(pkt, m->field, m->mask, &v);
		if (m->n_span ? in_spans(m, v) : set_has_u32(m->set, v))
			return true;
		return m->dyn && *st == PKT_PRESENT &&
		       dynset_has_u32(m->dyn, v);
	}
}

enum rule_result { RULE_FALSE, RULE_TRUE, RULE_UNKNOWN };

/*
 * As nft: a field the packet lacks (no IPv4 header for "ip saddr", not
 * TCP for "tcp dport", no socket for "meta skuid") fails the match even
 * when negated; negation only flips the comparison. A field nfqd cannot
 * see makes the rule unknown, unless a later match is false; a limit
 * after it is not evaluated, so it takes no token for an unknown rule.
 */
static enum rule_result rule_matches(const struct policy *p,
				     const struct crule *r,
				     const struct pkt *pkt, unsigned skip)
{
	bool unknown = false;

	for (unsigned i = 0; i < r->n_m; i++) {
		const struct cmatch *m = &r->m[i];
		enum pkt_state st;
		bool hit;

		/* Known PRESENT and true: it could neither fail the rule
		 * nor make it unknown. */
		if (i == skip)
			continue;
		if (unknown && m->field == MATCH_LIMIT)
			continue;
		hit = match_value(p, m, pkt, &st);
		if (st == PKT_ABSENT)
			return RULE_FALSE;
		if (st == PKT_INCOMPLETE)
			unknown = true;
		else if (hit == m->negate)
			return RULE_FALSE;
	}
	return unknown ? RULE_UNKNOWN : RULE_TRUE;
}

/* Plain increment by the owning worker; readers use relaxed loads. */
static void ctr_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v,
			 __ATOMIC_RELAXED);
}

static uint64_t *slot_ctr(struct policy *p, unsigned slot)
{
	return (uint64_t *)((char *)p->ctr + (size_t)slot * p->stride);
}

/* A device for the log line: the cache's name, or "#INDEX". */
static void log_dev(const struct ifcache *ifc, uint32_t ifindex, bool present,
		    char name[IF_NAMESIZE])
{
	if (field_dev_name(ifc, ifindex, present, name) == PKT_INCOMPLETE)
		snprintf(name, IF_NAMESIZE, "#%u", ifindex);
}

static void log_packet(const struct policy *p, const struct crule *r,
		       const struct pkt *pkt)
{
	char in[IF_NAMESIZE], out[IF_NAMESIZE];
	char src[INET6_ADDRSTRLEN] = "?", dst[INET6_ADDRSTRLEN] = "?";
	char l4[48] = "";

	log_dev(p->ifc, pkt->indev, pkt->flags & PKT_HAS_INDEV, in);
	log_dev(p->ifc, pkt->outdev, pkt->flags & PKT_HAS_OUTDEV, out);
	if (pkt->l3 == PKT_PRESENT) {
		inet_ntop(pkt->l3_family, pkt->saddr, src, sizeof(src));
		inet_ntop(pkt->l3_family, pkt->daddr, dst, sizeof(dst));
	}
	if ((pkt->l4proto == IPPROTO_ICMP || pkt->l4proto == IPPROTO_ICMPV6) &&
	    pkt_th_state(pkt, PKT_TH_TYPE_END) == PKT_PRESENT)
		snprintf(l4, sizeof(l4), " TYPE=%u", pkt->icmp_type);
	else if (pkt_th_state(pkt, PKT_TH_DPORT_END) == PKT_PRESENT)
		snprintf(l4, sizeof(l4), " SPT=%u DPT=%u", pkt->sport,
			 pkt->dport);
	log_info("%shook %s rule %u (%s): IN=%s OUT=%s SRC=%s DST=%s LEN=%u "
		 "PROTO=%u%s MARK=0x%x", r->log_prefix ? r->log_prefix : "",
		 conf_hook_name(r->hook), r->pos, r->where, in, out, src, dst,
		 pkt->orig_len, pkt->l4proto, l4,
		 pkt->flags & PKT_HAS_MARK ? pkt->mark : 0);
}

/*
 * At most LOG_LINES_PER_SEC lines per rule and second, from all workers
 * together; the first line of a new second reports what was suppressed.
 */
static void log_limited(const struct policy *p, const struct crule *r,
			const struct pkt *pkt)
{
	struct log_limit *ll = r->ll;
	uint64_t sec = now_ns(CLOCK_MONOTONIC_COARSE) / 1000000000ull;
	uint64_t st = atomic_load_explicit(&ll->state, memory_order_relaxed);
	uint64_t nst, lost;

	for (;;) {
		if (st >> 16 != sec)
			nst = sec << 16 | 1;
		else if ((st & 0xffff) < LOG_LINES_PER_SEC)
			nst = st + 1;
		else {
			atomic_fetch_add_explicit(&ll->suppressed, 1,
						  memory_order_relaxed);
			return;
		}
		if (atomic_compare_exchange_weak_explicit(&ll->state, &st, nst,
				memory_order_relaxed, memory_order_relaxed))
			break;
	}
	if ((nst & 0xffff) == 1) {
		lost = atomic_exchange_explicit(&ll->suppressed, 0,
						memory_order_relaxed);
		if (lost)
			log_info("%shook %s rule %u (%s): %llu messages "
				 "suppressed", r->log_prefix ? r->log_prefix :
				 "", conf_hook_name(r->hook), r->pos, r->where,
				 (unsigned long long)lost);
	}
	log_packet(p, r, pkt);
}

static int family_index(const struct pkt *pkt)
{
	if (pkt->family == NFPROTO_IPV4)
		return 0;
	if (pkt->family == NFPROTO_IPV6)
		return 1;
	if (pkt->l3_family == AF_INET)
		return 0;
	if (pkt->l3_family == AF_INET6)
		return 1;
	return -1;
}

static void apply_rule(struct policy *p, const struct crule *r,
		       const struct pkt *pkt, struct decision *d)
{
	if (r->log)
		log_limited(p, r, pkt);
	d->verdict = r->verdict;
	if (r->set_mark) {
		d->set_mark = true;
		d->mark = r->mark;
	}
	if (r->bypass) {
		if (!d->set_mark)
			d->mark = pkt->flags & PKT_HAS_MARK ? pkt->mark : 0;
		d->set_mark = true;
		d->mark |= p->bypass_mark;
	}
}

/*
 * The statement "add/update @set { KEY }" of a matching rule: as nft, a
 * packet without KEY's header does not match the rule (false); one whose
 * KEY nfqd cannot see gets the incomplete verdict (-1). A full set
 * refuses the add (counted in the set); the verdict stands (1).
 */
static int add_to_set(const struct crule *r, const struct pkt *pkt)
{
	uint8_t k[16] = { 0 };
	enum pkt_state st;
	const uint8_t *a;
	uint32_t v;

	if (r->add_key == MATCH_IP6_SADDR || r->add_key == MATCH_IP6_DADDR) {
		st = field_u128(pkt, r->add_key, &a);
		if (st == PKT_PRESENT)
			memcpy(k, a, 16);
	} else {
		st = field_u32(pkt, r->add_key, 0xffffffff, &v);
		memcpy(k, &v, sizeof(v));
	}
	if (st != PKT_PRESENT)
		return st == PKT_ABSENT ? 0 : -1;
	dynset_add(r->add, k, r->add_timeout_ns ? r->add_timeout_ns :
		   dynset_default_timeout(r->add), DYN_RULE, r->add_update);
	return 1;
}

/* Judge PKT by rule R, whose match SKIP (or none: PIDX_NO_SKIP) is known
 * to hold: true when R decided (it matched, or it might have). */
static bool decide(struct policy *p, const struct crule *r,
		   const struct pkt *pkt, unsigned skip, uint64_t *c,
		   struct decision *d)
{
	switch (rule_matches(p, r, pkt, skip)) {
	case RULE_FALSE:
		return false;
	case RULE_UNKNOWN:
		/* This rule might have decided: no later one may. */
		d->verdict = p->incomplete_verdict;
		d->incomplete = true;
		return true;
	case RULE_TRUE:
		break;
	}
	if (r->add) {
		int added = add_to_set(r, pkt);

		if (added == 0)
			return false;
		if (added < 0) {
			d->verdict = p->incomplete_verdict;
			d->incomplete = true;
			return true;
		}
	}
	apply_rule(p, r, pkt, d);
	if (c) {
		ctr_add(&c[2 * r->idx], 1);
		ctr_add(&c[2 * r->idx + 1], pkt->orig_len ? pkt->orig_len :
							    pkt->payload_len);
	}
	return true;
}

static bool use_index(const struct policy *p, const struct chook *h, int f)
{
	if (p->eval == POLICY_EVAL_AUTO)
		return h->n_fam[f] >= POLICY_INDEX_MIN_RULES;
	return p->eval == POLICY_EVAL_INDEX;
}

void policy_judge(struct policy *p, const struct pkt *pkt, unsigned slot,
		  struct decision *d)
{
	int f = family_index(pkt);
	const struct chook *h;
	uint64_t *c = NULL;

	d->verdict = NF_ACCEPT;
	d->set_mark = false;
	d->mark = 0;
	d->incomplete = false;
	if (!p || pkt->hook >= HOOK_MAX)
		return;
	h = &p->hooks[pkt->hook];
	if (slot < p->nslots)
		c = slot_ctr(p, slot);
	if (f >= 0 && use_index(p, h, f)) {
		/* Only rules that cannot match are left out, in order. */
		struct pidx_walk w;
		uint32_t i;
		unsigned skip;

		pidx_start(h->idx[f], p->ifc, pkt, &w);
		while ((i = pidx_next(&w, &skip)) != PIDX_END)
			if (decide(p, h->fam[f][i], pkt, skip, c, d))
				return;
	} else {
		for (unsigned i = 0; f >= 0 && i < h->n_fam[f]; i++)
			if (decide(p, h->fam[f][i], pkt, PIDX_NO_SKIP, c, d))
				return;
	}
	d->verdict = h->policy_verdict;
	if (c)
		ctr_add(&c[2 * (size_t)p->n_rules + pkt->hook], 1);
}

void policy_set_eval(struct policy *p, enum policy_eval e)
{
	p->eval = e;
}
