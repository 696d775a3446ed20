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
#include "names.h"
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

/* A token of the bucket of the packet's KEY ("limit ... per KEY"). */
static bool key_take(const struct cmatch *m, const struct pkt *pkt,
		     uint64_t now, int *st)
{
	uint8_t k[16] = { 0 };
	const uint8_t *a;
	uint32_t v;

	if (m->kl_key == MATCH_IP6_SADDR || m->kl_key == MATCH_IP6_DADDR) {
		*st = (int)field_u128(pkt, m->kl_key, &a);
		if (*st == PKT_PRESENT)
			memcpy(k, a, 16);
	} else {
		*st = (int)field_u32(pkt, m->kl_key, 0xffffffff, &v);
		memcpy(k, &v, sizeof(v));
	}
	return *st == PKT_PRESENT && keylimit_take(m->kl, k, now);
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
 * A name field of PROTO: its state (a pkt_state, or NAMES_PENDING) and,
 * when PRESENT, the name. A packet of another protocol has none.
 */
static int name_state(const struct pkt *pkt, uint8_t proto,
		      const struct name_out **n)
{
	const struct pkt_names *pn = pkt->names;

	if (!pn)
		return PKT_INCOMPLETE;
	if (pn->proto != NP_NONE && !(pn->proto & proto))
		return PKT_ABSENT;
	if (pn->state == PKT_PRESENT) {
		*n = &pn->n;
		return PKT_PRESENT;
	}
	return pn->state;
}

/* Does name N match M's domain set: its config and file patterns, or
 * its runtime ones? */
static bool has_name(const struct cmatch *m, const struct name_out *n,
		     const struct pkt *pkt)
{
	return set_has_domain(m->set, n->name, n->len, pkt->probes) ||
	       (m->dyn && dynset_match_name(m->dyn, n->name, n->len,
					    pkt->probes));
}

static bool match_name(const struct cmatch *m, const struct pkt *pkt,
		       int *st)
{
	const struct name_out *n = NULL;

	*st = name_state(pkt, (uint8_t)policy_name_proto(m->field), &n);
	if (*st != PKT_PRESENT)
		return false;
	switch (m->field) {
	case MATCH_DNS_QTYPE:
		return m->n_span ? in_spans(m, n->qtype) :
				   set_has_u32(m->set, n->qtype);
	case MATCH_TLS_ECH:
		return n->ech;
	case MATCH_TLS_SNI:
	case MATCH_HTTP_HOST:
		if (!n->len) {		/* a ClientHello without a name */
			*st = PKT_ABSENT;
			return false;
		}
		return has_name(m, n, pkt);
	default:
		return has_name(m, n, pkt);
	}
}

/*
 * The match holds, before negation, when *ST is PKT_PRESENT; otherwise
 * the field is ABSENT or INCOMPLETE and the result means nothing.
 */
static bool match_value(const struct policy *p, const struct cmatch *m,
			const struct pkt *pkt, int *st)
{
	char name[IF_NAMESIZE];
	const uint8_t *a;
	uint32_t v;

	switch (m->field) {
	case MATCH_DNS_QNAME:
	case MATCH_DNS_QTYPE:
	case MATCH_TLS_SNI:
	case MATCH_TLS_ECH:
	case MATCH_HTTP_HOST:
		return match_name(m, pkt, st);
	case MATCH_IP6_SADDR:
	case MATCH_IP6_DADDR:
		*st = (int)field_u128(pkt, m->field, &a);
		if (*st != PKT_PRESENT)
			return false;
		return set_has_u128(m->set, a) ||
		       (m->dyn && dynset_has_u128(m->dyn, a));
	case MATCH_IIFNAME:
	case MATCH_OIFNAME:
		*st = (int)field_name(p->ifc, pkt, m->field, name);
		return set_has_str(m->set, name);
	case MATCH_TCP_FLAGS:
		*st = (int)field_th_state(pkt, 0, IPPROTO_TCP,
					  PKT_TH_FLAGS_END);
		return (pkt->tcp_flags & m->flags) == m->flags;
	case MATCH_CT_STATE:
		/* Without NFQA_CT_INFO and without conntrack asked for (a
		 * reload that just added "ct state"), the state is unknown. */
		*st = pkt->flags & PKT_HAS_CT ? PKT_PRESENT : PKT_INCOMPLETE;
		return pkt->ct_state & m->flags;
	case MATCH_LIMIT:
		*st = PKT_PRESENT;
		return m->kl ? key_take(m, pkt, now_ns(CLOCK_MONOTONIC), st) :
			       limiter_take(m->lim, now_ns(CLOCK_MONOTONIC));
	default:
		*st = (int)field_u32(pkt, m->field, m->mask, &v);
		if (m->n_span ? in_spans(m, v) : set_has_u32(m->set, v))
			return true;
		return m->dyn && *st == PKT_PRESENT &&
		       dynset_has_u32(m->dyn, v);
	}
}

enum rule_result { RULE_FALSE, RULE_TRUE, RULE_UNKNOWN, RULE_PENDING };

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
	bool unknown = false, pending = false;

	for (unsigned i = 0; i < r->n_m; i++) {
		const struct cmatch *m = &r->m[i];
		int st;
		bool hit;

		/* Known PRESENT and true: it could neither fail the rule
		 * nor make it unknown. */
		if (i == skip)
			continue;
		if ((unknown || pending) && m->field == MATCH_LIMIT)
			continue;
		hit = match_value(p, m, pkt, &st);
		if (st == PKT_ABSENT)
			return RULE_FALSE;
		if (st == PKT_INCOMPLETE)
			unknown = true;
		else if (st == NAMES_PENDING)
			pending = true;
		else if (hit == m->negate)
			return RULE_FALSE;
	}
	return unknown ? RULE_UNKNOWN : pending ? RULE_PENDING : RULE_TRUE;
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

#define RING_FIELDS_MAX	640	/* log.c keeps as much of the fields */

/* The verdict a log line names: what the rule decided. */
static const char *verdict_word(uint32_t v)
{
	switch (v & NF_VERDICT_MASK) {
	case NF_ACCEPT:
		return "accept";
	case NF_DROP:
		return "drop";
	case NF_REPEAT:
		return "repeat";
	case NF_QUEUE:
		return "queue";
	default:
		return "other";
	}
}

static void log_packet(const struct policy *p, const struct crule *r,
		       const struct pkt *pkt)
{
	char in[IF_NAMESIZE], out[IF_NAMESIZE];
	char src[INET6_ADDRSTRLEN] = "?", dst[INET6_ADDRSTRLEN] = "?";
	char l4[48] = "", ports[48] = "", fields[RING_FIELDS_MAX];
	char name[NAME_MAX_LEN + 8] = "", name_f[NAME_MAX_LEN + 12] = "";

	log_dev(p->ifc, pkt->indev, pkt->flags & PKT_HAS_INDEV, in);
	log_dev(p->ifc, pkt->outdev, pkt->flags & PKT_HAS_OUTDEV, out);
	if (pkt->l3 == PKT_PRESENT) {
		inet_ntop(pkt->l3_family, pkt->saddr, src, sizeof(src));
		inet_ntop(pkt->l3_family, pkt->daddr, dst, sizeof(dst));
	}
	if ((pkt->l4proto == IPPROTO_ICMP || pkt->l4proto == IPPROTO_ICMPV6) &&
	    pkt_th_state(pkt, PKT_TH_TYPE_END) == PKT_PRESENT)
		snprintf(l4, sizeof(l4), " TYPE=%u", pkt->icmp_type);
	else if (pkt_th_state(pkt, PKT_TH_DPORT_END) == PKT_PRESENT) {
		snprintf(l4, sizeof(l4), " SPT=%u DPT=%u", pkt->sport,
			 pkt->dport);
		snprintf(ports, sizeof(ports), "NFQD_SPT=%u\nNFQD_DPT=%u\n",
			 pkt->sport, pkt->dport);
	}
	/* The name the rule saw (label bytes: printable, no spaces). */
	if (r->names && pkt->names && pkt->names->state == PKT_PRESENT &&
	    pkt->names->n.len) {
		snprintf(name, sizeof(name), " NAME=%s", pkt->names->n.name);
		snprintf(name_f, sizeof(name_f), "NFQD_NAME=%s\n",
			 pkt->names->n.name);
	}
	/* The same facts as journal fields (log.h, log_fields()). */
	snprintf(fields, sizeof(fields), "NFQD_HOOK=%s\nNFQD_RULE=%u\n"
		 "NFQD_RULE_AT=%s\nNFQD_VERDICT=%s\nNFQD_SRC=%s\nNFQD_DST=%s\n"
		 "NFQD_PROTO=%u\n%s%s", conf_hook_name(r->hook), r->pos, r->where,
		 verdict_word(r->verdict), src, dst, pkt->l4proto, ports,
		 name_f);
	log_fields(LOG_LVL_INFO, fields, "%shook %s rule %u (%s): IN=%s OUT=%s SRC=%s DST=%s LEN=%u "
		 "PROTO=%u%s%s MARK=0x%x VERDICT=%s",
		 r->log_prefix ? r->log_prefix : "",
		 conf_hook_name(r->hook), r->pos, r->where, in, out, src, dst,
		 pkt->orig_len, pkt->l4proto, l4, name,
		 pkt->flags & PKT_HAS_MARK ? pkt->mark : 0,
		 verdict_word(r->verdict));
}

/* "N messages suppressed" for rule R, if any were. */
static void log_suppressed(const struct crule *r)
{
	uint64_t lost = atomic_exchange_explicit(&r->ll->suppressed, 0,
						 memory_order_relaxed);

	if (lost)
		log_info("%shook %s rule %u (%s): %llu messages suppressed",
			 r->log_prefix ? r->log_prefix : "",
			 conf_hook_name(r->hook), r->pos, r->where,
			 (unsigned long long)lost);
}

void policy_log_report(struct policy *p)
{
	uint64_t sec = now_ns(CLOCK_MONOTONIC_COARSE) / 1000000000ull;

	for (unsigned i = 0; p && i < p->n_rules; i++) {
		const struct crule *r = &p->rules[i];

		/* Only a second that is over: its count is final. */
		if (r->log && atomic_load_explicit(&r->ll->state,
				memory_order_relaxed) >> 16 != sec)
			log_suppressed(r);
	}
}

/*
 * At most LOG_LINES_PER_SEC lines per rule and second, from all workers
 * together; the first line of a new second reports what was suppressed
 * (and policy_log_report(), on the main thread's timer, reports it even
 * when no packet follows).
 */
static void log_limited(const struct policy *p, const struct crule *r,
			const struct pkt *pkt)
{
	struct log_limit *ll = r->ll;
	uint64_t sec = now_ns(CLOCK_MONOTONIC_COARSE) / 1000000000ull;
	uint64_t st = atomic_load_explicit(&ll->state, memory_order_relaxed);
	uint64_t nst;

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
	if ((nst & 0xffff) == 1)
		log_suppressed(r);
	log_packet(p, r, pkt);
}

/* The rules of the packet's family: 0 IPv4, 1 IPv6, -1 none. A packet
 * built by hand (NFPROTO_UNSPEC) goes by its version field. */
static int family_index(const struct pkt *pkt)
{
	if (pkt->family == NFPROTO_IPV4)
		return 0;
	if (pkt->family == NFPROTO_IPV6)
		return 1;
	if (pkt->family != NFPROTO_UNSPEC)
		return -1;
	if (pkt->l3_family == AF_INET)
		return 0;
	if (pkt->l3_family == AF_INET6)
		return 1;
	return -1;
}

/*
 * nfqd's hook blocks are the IPv4/IPv6 hooks. A packet queued from another
 * family (bridge, ARP, netdev: their hook numbers mean other places) or
 * from a hook nfqd has no block for (inet ingress) cannot be judged by
 * them: it gets incomplete-verdict, as a rule that might have matched.
 */
static bool judgeable(const struct pkt *pkt)
{
	if (pkt->hook >= HOOK_MAX)
		return false;
	return pkt->family == NFPROTO_IPV4 || pkt->family == NFPROTO_IPV6 ||
	       pkt->family == NFPROTO_UNSPEC;
}

/* Is PKT's flow's name still coming (nfqd.conf(5) NAMES)? */
static bool names_coming(const struct pkt *pkt)
{
	return pkt->names && pkt->names->state == NAMES_PENDING;
}

/* Are PKT's names unknown (INCOMPLETE, or no flow table to read them)? */
static bool names_unknown(const struct pkt *pkt)
{
	return !pkt->names || pkt->names->state == PKT_INCOMPLETE;
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
	/* A connection leaves the queue once its name is known, not at a
	 * packet before it (a SYN): the name rules must see the name. */
	if (r->bypass && !names_coming(pkt)) {
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
		d->sticky = r->names && names_unknown(pkt);
		return true;
	case RULE_PENDING:
		/* A name still coming (nfqd.conf(5) NAMES): this packet has
		 * none, so a rule that would drop it for its name does not
		 * match; one that would let it through might, and the
		 * handshake cannot finish without the rest: accepted, and
		 * the packet completing the name is judged. */
		if (r->verdict == NF_DROP)
			return false;
		d->verdict = NF_ACCEPT;
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
	d->sticky = r->sticky;
	if (c) {
		ctr_add(&c[2 * r->idx], 1);
		ctr_add(&c[2 * r->idx + 1], pkt_length(pkt));
	}
	return true;
}

/* Has PKT no name of any protocol (every name field ABSENT)? Then the
 * rules that first match a name cannot match, the first ones of a hook
 * (chook.lead_names) passed over at once. */
static inline bool no_names(const struct pkt *pkt)
{
	return pkt->names && pkt->names->state == PKT_ABSENT;
}

/*
 * Would rule_matches() find R false at its first match, a name's that
 * the packet has none of (ABSENT, or its names are another protocol's)?
 * The rules of a names policy are mostly such, and most packets carry no
 * name: they are passed over here without calling decide().
 */
static inline bool first_name_absent(const struct crule *r,
				     const struct pkt *pkt)
{
	const struct name_out *n;

	return r->first_name != NP_NONE &&
	       name_state(pkt, r->first_name, &n) == PKT_ABSENT;
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
	d->sticky = false;
	if (!p)
		return;
	if (!judgeable(pkt)) {
		d->verdict = p->incomplete_verdict;
		d->incomplete = true;
		return;
	}
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
			if (!first_name_absent(h->fam[f][i], pkt) &&
			    decide(p, h->fam[f][i], pkt, skip, c, d))
				return;
	} else if (f >= 0) {
		for (unsigned i = no_names(pkt) ? h->lead_names[f] : 0;
		     i < h->n_fam[f]; i++)
			if (!first_name_absent(h->fam[f][i], pkt) &&
			    decide(p, h->fam[f][i], pkt, PIDX_NO_SKIP, c,
				   d))
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
