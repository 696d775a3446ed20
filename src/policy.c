/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policy.c - compiling the config's hook blocks into an immutable policy. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "domset.h"
#include "log.h"
#include "pkt.h"
#include "policy.h"
#include "policy_index.h"
#include "policy_int.h"

/* What a match field needs: value kind, set type, family. */
struct field_info {
	bool values;			/* takes values (inline or @set) */
	enum set_kind kind;
	int set_type;			/* required set type, -1: numeric */
	unsigned fams;
};

static struct field_info field_info(enum match_field f)
{
	static const struct field_info num = { true, SETK_U32, -1,
					       FAM_V4 | FAM_V6 };

	switch (f) {
	case MATCH_IP_SADDR:
	case MATCH_IP_DADDR:
		return (struct field_info){ true, SETK_U32, SET_IPV4_ADDR,
					    FAM_V4 };
	case MATCH_IP6_SADDR:
	case MATCH_IP6_DADDR:
		return (struct field_info){ true, SETK_U128, SET_IPV6_ADDR,
					    FAM_V6 };
	case MATCH_IP_PROTOCOL:
	case MATCH_ICMP_TYPE:
		return (struct field_info){ true, SETK_U32, -1, FAM_V4 };
	case MATCH_ICMPV6_TYPE:
		return (struct field_info){ true, SETK_U32, -1, FAM_V6 };
	case MATCH_TCP_SPORT:
	case MATCH_TCP_DPORT:
	case MATCH_UDP_SPORT:
	case MATCH_UDP_DPORT:
		return (struct field_info){ true, SETK_U32, SET_INET_SERVICE,
					    FAM_V4 | FAM_V6 };
	case MATCH_IIFNAME:
	case MATCH_OIFNAME:
		return (struct field_info){ true, SETK_STR, SET_IFNAME,
					    FAM_V4 | FAM_V6 };
	case MATCH_META_MARK:
		return (struct field_info){ true, SETK_U32, SET_MARK,
					    FAM_V4 | FAM_V6 };
	case MATCH_DNS_QNAME:
	case MATCH_TLS_SNI:
	case MATCH_HTTP_HOST:
		return (struct field_info){ true, SETK_DOMAIN, SET_DOMAIN,
					    FAM_V4 | FAM_V6 };
	case MATCH_TCP_FLAGS:
	case MATCH_CT_STATE:
	case MATCH_LIMIT:
	case MATCH_TLS_ECH:
		return (struct field_info){ false, SETK_U32, -1,
					    FAM_V4 | FAM_V6 };
	default:
		return num;
	}
}

bool policy_field_is_name(enum match_field f)
{
	return f == MATCH_DNS_QNAME || f == MATCH_DNS_QTYPE ||
	       f == MATCH_TLS_SNI || f == MATCH_TLS_ECH ||
	       f == MATCH_HTTP_HOST;
}

bool policy_has_names(const struct policy *p)
{
	return p && p->names;
}

unsigned policy_field_fams(enum match_field f)
{
	return field_info(f).fams;
}

static const char *loc_file(const struct conf *c, const struct conf_loc *l)
{
	return l->file ? l->file : c->path ? c->path : "<config>";
}

static void err_at(struct diags *d, const struct conf *c,
		   const struct conf_loc *l, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void err_at(struct diags *d, const struct conf *c,
		   const struct conf_loc *l, const char *fmt, ...)
{
	struct conf_loc at = { loc_file(c, l), l->line, l->col };
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(d, DIAG_ERROR, &at, fmt, ap);
	va_end(ap);
}

static int add_set(struct policy *p, struct set *s)
{
	struct set **ns = realloc(p->sets, (p->n_sets + 1) * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	p->sets = ns;
	p->sets[p->n_sets++] = s;
	return 0;
}

const char *policy_add_elem(struct set *s, const struct conf_elem *el)
{
	enum set_kind k = set_kind(s);
	int err;

	if (k == SETK_U32 && el->kind == ELEM_ADDR && el->family == AF_INET) {
		const uint8_t *a = el->alo, *b = el->ahi;

		err = set_add_u32(s, (uint32_t)a[0] << 24 | a[1] << 16 |
				     a[2] << 8 | a[3],
				  (uint32_t)b[0] << 24 | b[1] << 16 |
				     b[2] << 8 | b[3]);
	} else if (k == SETK_U32 && el->kind == ELEM_NUM) {
		if (el->hi > UINT32_MAX || el->lo > el->hi)
			return "value out of range";
		err = set_add_u32(s, (uint32_t)el->lo, (uint32_t)el->hi);
	} else if (k == SETK_U128 && el->kind == ELEM_ADDR &&
		   el->family == AF_INET6) {
		err = set_add_u128(s, el->alo, el->ahi);
	} else if (k == SETK_DOMAIN && el->kind == ELEM_STR && el->str) {
		const char *why;

		return set_add_domain(s, el->str, &why) ? why : NULL;
	} else if (k == SETK_STR && el->kind == ELEM_STR && el->str) {
		size_t len = strlen(el->str);

		if (len - (len && el->str[len - 1] == '*') > 15)
			return "interface name longer than 15 characters";
		err = set_add_str(s, el->str);
	} else {
		return k == SETK_U32 && el->kind == ELEM_ADDR ?
			"IPv6 value where IPv4 is expected" :
		       k == SETK_U128 && el->kind == ELEM_ADDR ?
			"IPv4 value where IPv6 is expected" :
			"value of the wrong type";
	}
	return err == -ENOMEM ? "out of memory" : err ? "bad value" : NULL;
}

static enum set_kind set_type_kind(enum set_type t)
{
	return t == SET_IPV6_ADDR ? SETK_U128 : t == SET_IFNAME ? SETK_STR :
	       t == SET_DOMAIN ? SETK_DOMAIN : SETK_U32;
}

static const char *add_to_set(void *arg, const struct conf_elem *el)
{
	return policy_add_elem(arg, el);
}

static struct set *compile_set(const struct conf *c, const struct conf_set *cs,
			       struct diags *d)
{
	struct set *s = set_new(set_type_kind(cs->type));

	if (!s)
		return NULL;
	for (unsigned i = 0; i < cs->n_elems; i++) {
		const char *msg = policy_add_elem(s, &cs->elems[i]);

		if (msg)
			err_at(d, c, &cs->elems[i].loc, "set %s: %s",
			       cs->name, msg);
	}
	if ((cs->file && conf_set_file_read(c, cs, add_to_set, s, d) ==
			 -ENOMEM) || set_finish(s)) {
		/* The likeliest set to run out of memory is a big file:
		 * name it. */
		err_at(d, c, &cs->loc, "set %s%s%s: out of memory", cs->name,
		       cs->file ? ": file " : "", cs->file ? cs->file : "");
		set_free(s);
		return NULL;
	}
	return s;
}

/* The inline elements alone, to tell "config" from "file" elements. */
static struct set *inline_only(const struct conf_set *cs)
{
	struct set *s = set_new(set_type_kind(cs->type));

	for (unsigned i = 0; s && i < cs->n_elems; i++)
		policy_add_elem(s, &cs->elems[i]);
	if (s && set_finish(s)) {
		set_free(s);
		return NULL;
	}
	return s;
}

/* Name, file and runtime part of named set CS. */
static int compile_named(struct pnamed *pn, const struct conf_set *cs)
{
	enum set_kind kind = set_type_kind(cs->type);

	pn->type = cs->type;
	pn->timeout = cs->timeout;
	pn->name = strdup(cs->name);
	if (!pn->name || (cs->file && !(pn->file = strdup(cs->file))))
		return -ENOMEM;
	if (cs->file && cs->n_elems && !(pn->inline_elems = inline_only(cs)))
		return -ENOMEM;
	if (kind == SETK_STR)
		return 0;
	pn->dyn = dynset_new(kind, cs->type,
			     cs->size ? cs->size : DYNSET_DEFAULT_SIZE,
			     cs->timeout_ms * 1000000ull);
	return pn->dyn ? 0 : -ENOMEM;
}

static int compile_sets(struct policy *p, const struct conf *c,
			struct diags *d)
{
	p->named = calloc(c->n_sets ? c->n_sets : 1, sizeof(*p->named));
	if (!p->named)
		return -ENOMEM;
	for (unsigned i = 0; i < c->n_sets; i++) {
		struct set *s = compile_set(c, &c->sets[i], d);

		if (!s || add_set(p, s)) {
			set_free(s);
			return -ENOMEM;
		}
		p->n_named++;
		if (compile_named(&p->named[i], &c->sets[i]))
			return -ENOMEM;
	}
	return 0;
}

size_t policy_set_static(const struct policy *p, unsigned i)
{
	return set_n_exact(p->sets[i]) + set_n_intervals(p->sets[i]) +
	       set_n_prefixes(p->sets[i]);
}

size_t policy_set_elements(const struct policy *p, unsigned i)
{
	struct dynset_stats st = { 0 };

	if (p->named[i].dyn)
		dynset_get_stats(p->named[i].dyn, &st);
	return policy_set_static(p, i) + st.n;
}

char *policy_sets_summary(const struct policy *p)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	if (!policy_set_count(p))
		return NULL;
	f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	for (unsigned i = 0; i < p->n_named; i++)
		fprintf(f, "%s%s %zu element%s", i ? ", " : "",
			p->named[i].name, policy_set_elements(p, i),
			policy_set_elements(p, i) == 1 ? "" : "s");
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static int find_set(const struct conf *c, const char *name)
{
	for (unsigned i = 0; i < c->n_sets; i++)
		if (!strcmp(c->sets[i].name, name))
			return (int)i;
	return -1;
}

/* The "@name" token if the parser recorded it, else the match. */
static const struct conf_loc *set_loc(const struct conf_match *cm)
{
	return cm->set_loc.line ? &cm->set_loc : &cm->loc;
}

static const char *type_name(enum set_type t)
{
	static const char *const names[] = { "ipv4_addr", "ipv6_addr",
					     "inet_service", "ifname",
					     "mark", "domain" };

	return t <= SET_DOMAIN ? names[t] : "?";
}

static bool set_type_ok(const struct field_info *fi, enum set_type t)
{
	if (fi->set_type >= 0)
		return (int)t == fi->set_type;
	return t == SET_INET_SERVICE || t == SET_MARK;
}

/* nft's packet limit (limiter.h); the parser refused what it cannot be. */
static void compile_limit(struct policy *p, const struct conf *c,
			  struct cmatch *m, const struct conf_match *cm,
			  struct diags *d)
{
	struct limiter *l = &p->lims[p->n_lims++].b;

	m->lim = l;
	if (limiter_init(l, cm->rate, cm->per_seconds, cm->burst))
		err_at(d, c, &cm->loc, "limit rate %u per %u s, burst %u: "
		       "not a bucket nft can hold", cm->rate, cm->per_seconds,
		       cm->burst);
}

/* "limit ... per KEY": the same bucket, one per value of KEY. */
static int compile_keylimit(struct policy *p, struct cmatch *m,
			    const struct conf_match *cm, const struct crule *r)
{
	struct keylimit **n = realloc(p->kls, (p->n_kls + 1) * sizeof(*n));
	const struct crule **nr;

	if (!n)
		return -ENOMEM;
	p->kls = n;
	nr = realloc(p->kl_rule, (p->n_kls + 1) * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	p->kl_rule = nr;
	nr[p->n_kls] = r;
	m->kl = keylimit_new(m->lim, KEYLIMIT_SIZE);
	if (!m->kl)
		return -ENOMEM;
	p->kls[p->n_kls++] = m->kl;
	m->kl_key = cm->per_key;
	return 0;
}

static int note_span(void *arg, const void *lo, const void *hi)
{
	struct cmatch *m = arg;

	if (m->n_span == CMATCH_SPANS)
		return 1;
	m->span[m->n_span].lo = *(const uint32_t *)lo;
	m->span[m->n_span].hi = *(const uint32_t *)hi;
	m->n_span++;
	return 0;
}

/* A set of a few values or ranges (most matches: "udp dport 53",
 * "meta length 28-512", "tcp dport { 80, 443 }") costs a comparison per
 * range instead of a lookup call. */
static void find_spans(struct cmatch *m)
{
	if (m->set && set_kind(m->set) == SETK_U32 &&
	    set_walk(m->set, note_span, m))
		m->n_span = 0;
}

static int compile_match(struct policy *p, const struct conf *c,
			 const struct conf_match *cm, struct cmatch *m,
			 const struct crule *r, struct diags *d)
{
	struct field_info fi = field_info(cm->field);
	struct set *s;
	int err;

	m->field = cm->field;
	m->negate = cm->negate;
	m->mask = cm->field == MATCH_META_MARK ? cm->mask : 0;
	m->flags = cm->flags;
	if (cm->field == MATCH_LIMIT) {
		compile_limit(p, c, m, cm, d);
		return cm->per ? compile_keylimit(p, m, cm, r) : 0;
	}
	if (!fi.values)
		return 0;
	if (cm->set_name) {
		int i = find_set(c, cm->set_name);

		if (i < 0) {
			err_at(d, c, set_loc(cm), "unknown set @%s",
			       cm->set_name);
			return 0;
		}
		if (!set_type_ok(&fi, c->sets[i].type)) {
			err_at(d, c, set_loc(cm), "set @%s has type %s, "
			       "which this match cannot use", cm->set_name,
			       type_name(c->sets[i].type));
			return 0;
		}
		m->set = p->sets[i];
		m->dyn = p->named[i].dyn;
		find_spans(m);
		return 0;
	}
	if (!cm->n_elems) {
		err_at(d, c, &cm->loc, "match without a value");
		return 0;
	}
	s = set_new(fi.kind);
	if (!s || add_set(p, s)) {
		set_free(s);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < cm->n_elems; i++) {
		const char *msg = policy_add_elem(s, &cm->elems[i]);

		if (msg)
			err_at(d, c, &cm->elems[i].loc, "%s", msg);
	}
	m->set = s;
	err = set_finish(s);
	if (!err)
		find_spans(m);
	return err;
}

static uint32_t nf_verdict(enum verdict_kind v, uint16_t queue_num)
{
	switch (v) {
	case VERDICT_DROP:
		return NF_DROP;
	case VERDICT_REPEAT:
		return NF_REPEAT;
	case VERDICT_QUEUE:
		return NF_QUEUE_NR((uint32_t)queue_num);
	default:
		return NF_ACCEPT;
	}
}

/* "FILE:LINE:COL: rule text" of the rule R at L, for error messages. */
static char *flag_user(const struct conf *c, const struct conf_loc *l,
		       const struct crule *r)
{
	char *s;

	if (asprintf(&s, "%s:%u:%u: %s", loc_file(c, l), l->line, l->col,
		     r->text) < 0)
		return NULL;
	return s;
}

static int note_kernel_flags(struct policy *p, const struct conf *c,
			     const struct conf_match *cm, const struct crule *r)
{
	char **user = NULL;

	if (cm->field == MATCH_META_SKUID || cm->field == MATCH_META_SKGID) {
		p->kflags |= NFQA_CFG_F_UID_GID;
		user = &p->flag_user_uid;
	} else if (cm->field == MATCH_CT_STATE) {
		p->kflags |= NFQA_CFG_F_CONNTRACK;
		user = &p->flag_user_ct;
	}
	if (user && !*user) {
		*user = flag_user(c, &cm->loc, r);
		if (!*user)
			return -ENOMEM;
	}
	return 0;
}

/*
 * FAM_* of the packets rule CR can match, from its matches before the
 * first limit only: as in nft's inet table, matches are evaluated left to
 * right, so a packet of the other family still reaches the limit and
 * takes a token ("limit rate 1/minute ip saddr 10.0.0.1": IPv6 packets
 * take the tokens too, then fail "ip saddr").
 */
static unsigned rule_fams(const struct conf_rule *cr)
{
	unsigned fams = FAM_V4 | FAM_V6;

	for (unsigned i = 0; i < cr->n_matches; i++) {
		const struct conf_match *m = &cr->matches[i];

		/* A per-key limit takes no token from a packet without
		 * its key, which then matches nothing. */
		if (m->field == MATCH_LIMIT)
			return m->per ? fams & field_info(m->per_key).fams :
					fams;
		fams &= field_info(m->field).fams;
	}
	/* Nor does "add @S { KEY }" for a packet without KEY. */
	if (cr->add_set)
		fams &= field_info(cr->add_key).fams;
	return fams;
}

/* "add/update @NAME { KEY [timeout D] }": the set must hold KEY's type
 * and take runtime elements; a timeout needs "flags timeout". */
static void compile_add(struct policy *p, const struct conf *c,
			const struct conf_rule *cr, struct crule *r,
			struct diags *d)
{
	struct field_info fi = field_info(cr->add_key);
	int i = find_set(c, cr->add_set);

	if (i < 0) {
		err_at(d, c, &cr->add_loc, "unknown set @%s", cr->add_set);
		return;
	}
	if ((int)c->sets[i].type != fi.set_type) {
		err_at(d, c, &cr->add_loc, "set @%s has type %s, which this "
		       "key cannot fill", cr->add_set,
		       type_name(c->sets[i].type));
		return;
	}
	if (cr->add_timeout_ms && !c->sets[i].timeout) {
		err_at(d, c, &cr->add_loc, "set @%s has no \"flags "
		       "timeout;\": add it to give elements a timeout",
		       cr->add_set);
		return;
	}
	r->add = p->named[i].dyn;
	r->add_key = cr->add_key;
	r->add_timeout_ns = cr->add_timeout_ms * 1000000ull;
	r->add_update = cr->add_update;
	/* Workers add from the packet path: the table must exist. */
	if (r->add && dynset_prepare(r->add))
		err_at(d, c, &cr->add_loc, "set @%s: out of memory",
		       cr->add_set);
}

/* Remember the domain set of name match M for policy_prefetch_name(). */
static void note_name_set(struct policy *p, const struct cmatch *m)
{
	unsigned proto = policy_name_proto(m->field), i;
	const struct domset *dom = m->set ? set_domset(m->set) : NULL;

	if (proto == NP_NONE || !dom)
		return;
	for (i = 0; i < p->n_name_sets; i++)
		if (p->name_sets[i].dom == dom)
			break;
	if (i == POLICY_NAME_SETS)
		return;		/* a hint: the first few are enough */
	if (i == p->n_name_sets)
		p->name_sets[p->n_name_sets++].dom = dom;
	p->name_sets[i].protos |= 1u << proto;
}

void policy_prefetch_name(const struct policy *p, unsigned proto,
			  const struct dom_probes *pr, enum dom_ahead step,
			  struct bigmem_wants *w)
{
	for (unsigned i = 0; i < p->n_name_sets; i++)
		if (p->name_sets[i].protos & (1u << proto))
			domset_prefetch(p->name_sets[i].dom, pr, step, w);
}

/* Is M's field the same for every packet of a flow (addresses, ports,
 * protocol, names) and its value fixed by the config (no runtime set
 * elements but names', no limit's tokens)? */
static bool flow_invariant(const struct cmatch *m)
{
	/* A name is the flow's: a drop on it stays even if the set's
	 * runtime patterns change (nfqd.conf(5) NAMES). */
	if (m->dyn && !policy_field_is_name(m->field))
		return false;
	switch (m->field) {
	case MATCH_TCP_FLAGS:
	case MATCH_META_MARK:
	case MATCH_META_LENGTH:
	case MATCH_CT_STATE:
	case MATCH_LIMIT:
	case MATCH_IIFNAME:
	case MATCH_OIFNAME:
	case MATCH_META_SKUID:
	case MATCH_META_SKGID:
		return false;
	default:
		return true;
	}
}

/* A drop by R on a name stays with the flow (nfqd.conf(5) NAMES) when
 * nothing else R matches can change between the flow's packets. */
static bool drop_sticks(const struct crule *r)
{
	if (!r->names)
		return false;
	for (unsigned i = 0; i < r->n_m; i++)
		if (!flow_invariant(&r->m[i]))
			return false;
	return true;
}

static int compile_rule(struct policy *p, const struct conf *c,
			const struct conf_rule *cr, struct crule *r,
			struct diags *d)
{
	int err;

	r->text = strdup(cr->text ? cr->text : "?");
	r->log_prefix = cr->log_prefix ? strdup(cr->log_prefix) : NULL;
	r->m = calloc(cr->n_matches ? cr->n_matches : 1, sizeof(*r->m));
	if (!r->text || !r->m || (cr->log_prefix && !r->log_prefix) ||
	    asprintf(&r->where, "%s:%u:%u", loc_file(c, &cr->loc),
		     cr->loc.line, cr->loc.col) < 0) {
		r->where = NULL;
		return -ENOMEM;
	}
	r->n_m = cr->n_matches;
	r->fams = rule_fams(cr);
	for (unsigned i = 0; i < cr->n_matches; i++) {
		err = compile_match(p, c, &cr->matches[i], &r->m[i], r, d);
		if (!err)
			err = note_kernel_flags(p, c, &cr->matches[i], r);
		if (err)
			return err;
		if (policy_field_is_name(cr->matches[i].field))
			r->names = p->names = true;
		note_name_set(p, &r->m[i]);
	}
	if (r->n_m)
		r->first_name = (uint8_t)policy_name_proto(r->m[0].field);
	r->sticky = drop_sticks(r);
	if (cr->add_set)
		compile_add(p, c, cr, r, d);
	if (cr->bypass && cr->verdict != VERDICT_ACCEPT)
		err_at(d, c, &cr->loc, "bypass is only allowed before accept");
	r->verdict = nf_verdict(cr->verdict, cr->queue_num);
	r->set_mark = cr->mark_set;
	r->mark = cr->mark;
	r->bypass = cr->bypass;
	r->log = cr->log;
	return 0;
}

/* Per family, the rules of hook H that can match it, in order. */
static int index_families(struct policy *p, struct chook *h)
{
	for (int f = 0; f < 2; f++) {
		h->fam[f] = calloc(h->n ? h->n : 1, sizeof(*h->fam[f]));
		if (!h->fam[f])
			return -ENOMEM;
		for (unsigned i = 0; i < h->n; i++) {
			struct crule *r = &p->rules[h->first + i];

			if (r->fams & (f ? FAM_V6 : FAM_V4))
				h->fam[f][h->n_fam[f]++] = r;
		}
		while (h->lead_names[f] < h->n_fam[f] &&
		       h->fam[f][h->lead_names[f]]->first_name != NP_NONE)
			h->lead_names[f]++;
	}
	return 0;
}

/* Sizes everything that is allocated once, up front. */
static int alloc_arrays(struct policy *p, const struct conf *c)
{
	unsigned n_lims = 0;

	for (int h = 0; h < HOOK_MAX; h++) {
		for (unsigned i = 0; i < c->hooks[h].n_rules; i++) {
			const struct conf_rule *cr = &c->hooks[h].rules[i];

			p->n_rules++;
			for (unsigned j = 0; j < cr->n_matches; j++)
				n_lims += cr->matches[j].field == MATCH_LIMIT;
		}
	}
	p->rules = calloc(p->n_rules ? p->n_rules : 1, sizeof(*p->rules));
	p->lims = aligned_alloc(CACHELINE, (n_lims ? n_lims : 1) *
					   sizeof(*p->lims));
	p->lls = aligned_alloc(CACHELINE, (p->n_rules ? p->n_rules : 1) *
					  sizeof(*p->lls));
	p->n_ctr = 2 * (size_t)p->n_rules + HOOK_MAX;
	p->stride = (p->n_ctr * sizeof(uint64_t) + CACHELINE - 1) &
		    ~(size_t)(CACHELINE - 1);
	p->ctr = aligned_alloc(CACHELINE, p->stride * (p->nslots ? p->nslots :
							       1));
	p->base = calloc(p->n_ctr, sizeof(*p->base));
	if (!p->rules || !p->lims || !p->lls || !p->ctr || !p->base)
		return -ENOMEM;
	memset(p->lims, 0, (n_lims ? n_lims : 1) * sizeof(*p->lims));
	memset(p->lls, 0, (p->n_rules ? p->n_rules : 1) * sizeof(*p->lls));
	memset(p->ctr, 0, p->stride * (p->nslots ? p->nslots : 1));
	return 0;
}

static int compile_hooks(struct policy *p, const struct conf *c,
			 struct diags *d)
{
	unsigned idx = 0;
	int err;

	for (int h = 0; h < HOOK_MAX; h++) {
		const struct conf_hook *ch = &c->hooks[h];
		struct chook *hk = &p->hooks[h];

		hk->policy = ch->present ? ch->policy : VERDICT_ACCEPT;
		hk->policy_verdict = nf_verdict(hk->policy, 0);
		hk->first = idx;
		hk->n = ch->n_rules;
		for (unsigned i = 0; i < ch->n_rules; i++, idx++) {
			struct crule *r = &p->rules[idx];

			r->idx = idx;
			r->hook = (enum conf_hook_id)h;
			r->pos = i + 1;
			r->ll = &p->lls[idx];
			err = compile_rule(p, c, &ch->rules[i], r, d);
			if (err)
				return err;
		}
		err = index_families(p, hk);
		if (err)
			return err;
	}
	return 0;
}

/* Compile C into P; errors on D (never NULL). 0, -EINVAL or -ENOMEM. */
static int compile(struct policy *p, const struct conf *c, struct diags *d)
{
	unsigned errors = d->errors;
	int err;

	p->bypass_mark = c->opts.bypass_mark;
	p->incomplete_verdict = nf_verdict(c->opts.incomplete_verdict, 0);
	err = alloc_arrays(p, c);
	if (!err)
		err = compile_sets(p, c, d);
	if (!err)
		err = compile_hooks(p, c, d);
	if (!err)
		policy_lint(c, d);
	if (!err && d->errors > errors)
		err = -EINVAL;
	if (!err)
		err = pidx_build(p);
	return err;
}

uint64_t policy_serial(const struct policy *p)
{
	return p ? p->serial : 0;
}

struct policy *policy_build(const struct conf *c, unsigned nslots,
			    struct diags *d)
{
	struct policy *p = calloc(1, sizeof(*p));
	struct diags mine = { 0 };
	int err = -ENOMEM;

	if (p) {
		static uint64_t built;

		p->serial = __atomic_add_fetch(&built, 1, __ATOMIC_RELAXED);
		p->nslots = nslots;
		err = compile(p, c, d ? d : &mine);
	}
	diag_free(&mine);
	if (err == -ENOMEM)
		diag_add(d, DIAG_ERROR, NULL, "policy: out of memory");
	if (err) {
		policy_free(p);
		return NULL;
	}
	return p;
}

void policy_use_ifcache(struct policy *p, const struct ifcache *ifc)
{
	p->ifc = ifc;
}

static struct pnamed *named_find(const struct policy *p, const char *name)
{
	for (unsigned i = 0; p && i < p->n_named; i++)
		if (strcmp(p->named[i].name, name) == 0)
			return &p->named[i];
	return NULL;
}

/* P's set I takes OLD's runtime part, whose elements stay. */
static void take_dynset(struct policy *p, unsigned i, struct dynset *old)
{
	struct pnamed *pn = &p->named[i];

	dynset_configure(old, dynset_max(pn->dyn), dynset_default_timeout(pn->dyn));
	for (unsigned r = 0; r < p->n_rules; r++) {
		/* Workers add to it from now: it needs its table. */
		if (p->rules[r].add == pn->dyn && !dynset_prepare(old))
			p->rules[r].add = old;
		for (unsigned j = 0; j < p->rules[r].n_m; j++)
			if (p->rules[r].m[j].dyn == pn->dyn)
				p->rules[r].m[j].dyn = old;
	}
	dynset_unref(pn->dyn);
	pn->dyn = dynset_ref(old);
}

static void log_dropped(const struct pnamed *on, const char *why)
{
	struct dynset_stats st;

	dynset_get_stats(on->dyn, &st);
	if (st.n)
		log_warn("set %s: %s: %zu runtime elements dropped",
			   on->name, why, st.n);
}

/* ---- runtime element text ---- */


static void key_of_u32(uint32_t v, uint8_t k[16])
{
	memset(k, 0, 16);
	memcpy(k, &v, sizeof(v));
}

static uint32_t u32_of(const uint8_t *a)
{
	return (uint32_t)a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];
}

/* TEXT as a single value of TYPE into K. NULL, or why not (in BUF). */
const char *policy_elem_key(enum set_type type, const char *text,
			    uint8_t k[16], char *buf, size_t size)
{
	struct conf_elem el;
	char *msg = NULL;
	bool one;

	if (conf_parse_elem(text, type, true, &el, &msg)) {
		snprintf(buf, size, "%s", msg ? msg : "bad element");
		free(msg);
		return buf;
	}
	free(el.str);
	if (el.kind == ELEM_ADDR) {
		one = memcmp(el.alo, el.ahi, 16) == 0;
		if (type == SET_IPV4_ADDR)
			key_of_u32(u32_of(el.alo), k);
		else
			memcpy(k, el.alo, 16);
	} else {
		one = el.lo == el.hi;
		key_of_u32((uint32_t)el.lo, k);
	}
	if (!one) {
		snprintf(buf, size, "runtime elements are single values; "
			 "put prefixes and ranges in the config or the set's "
			 "file");
		return buf;
	}
	return NULL;
}

void policy_u32_text(enum set_type type, uint32_t v, char *buf, size_t size)
{
	if (type == SET_IPV4_ADDR)
		snprintf(buf, size, "%u.%u.%u.%u", v >> 24, (v >> 16) & 0xff,
			 (v >> 8) & 0xff, v & 0xff);
	else if (type == SET_MARK)
		snprintf(buf, size, "0x%x", v);
	else
		snprintf(buf, size, "%u", v);
}

void policy_elem_text(enum set_type type, const uint8_t k[16], char *buf,
		      size_t size)
{
	uint32_t v;

	if (type == SET_IPV6_ADDR) {
		inet_ntop(AF_INET6, k, buf, (socklen_t)size);
		return;
	}
	memcpy(&v, k, sizeof(v));
	policy_u32_text(type, v, buf, size);
}

void policy_dyn_text(enum set_type type, const struct dyn_elem *e, char *buf,
		     size_t size)
{
	char pat[DOM_PATTERN_MAX + 1];

	if (!e->n.len) {
		policy_elem_text(type, e->v, buf, size);
		return;
	}
	domset_pattern_text(e->n.name, e->n.flags, pat);
	snprintf(buf, size, "%s", pat);
}

void policy_sets_sweep(struct policy *p)
{
	uint64_t now = dynset_now();

	for (unsigned i = 0; p && i < p->n_named; i++) {
		struct dynset *ds = p->named[i].dyn;

		if (ds && dynset_sweep(ds, now))
			dynset_reclaim(ds);
		if (ds)
			dynset_grow(ds);
	}
	for (unsigned i = 0; p && i < p->n_kls; i++)
		keylimit_sweep(p->kls[i]);
}

unsigned policy_keylimit_count(const struct policy *p)
{
	return p ? p->n_kls : 0;
}

void policy_keylimit_get(const struct policy *p, unsigned i,
			 struct policy_keylimit_view *out)
{
	const struct crule *r = p->kl_rule[i];

	out->hook = r->hook;
	out->pos = r->pos;
	out->rule = r->text;
	out->keys = keylimit_count(p->kls[i]);
	out->size = KEYLIMIT_SIZE;
	out->full = keylimit_full(p->kls[i]);
}

unsigned policy_set_count(const struct policy *p)
{
	return p ? p->n_named : 0;
}

int policy_set_find(const struct policy *p, const char *name)
{
	const struct pnamed *pn = named_find(p, name);

	return pn ? (int)(pn - p->named) : -1;
}

void policy_set_get(const struct policy *p, unsigned i,
		    struct policy_set_view *out)
{
	const struct pnamed *pn = &p->named[i];

	out->name = pn->name;
	out->type = pn->type;
	out->file = pn->file;
	out->timeout = pn->timeout;
	out->elems = p->sets[i];
	out->inline_elems = pn->inline_elems;
	out->dyn = pn->dyn;
}

void policy_share_dynsets(struct policy *p, const struct policy *old)
{
	for (unsigned i = 0; old && i < old->n_named; i++) {
		const struct pnamed *on = &old->named[i];
		struct pnamed *nn = named_find(p, on->name);

		if (!on->dyn)
			continue;
		if (!nn)
			log_dropped(on, "removed from the config");
		else if (!nn->dyn || dynset_type(nn->dyn) != dynset_type(on->dyn))
			log_dropped(on, "type changed");
		else
			take_dynset(p, (unsigned)(nn - p->named), on->dyn);
	}
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (unsigned i = 0; p->rules && i < p->n_rules; i++) {
		free(p->rules[i].m);
		free(p->rules[i].text);
		free(p->rules[i].log_prefix);
		free(p->rules[i].where);
	}
	for (int h = 0; h < HOOK_MAX; h++) {
		free(p->hooks[h].fam[0]);
		free(p->hooks[h].fam[1]);
		pidx_free(p->hooks[h].idx[0]);
		pidx_free(p->hooks[h].idx[1]);
	}
	for (unsigned i = 0; i < p->n_sets; i++)
		set_free(p->sets[i]);
	free(p->sets);
	for (unsigned i = 0; i < p->n_named; i++) {
		free(p->named[i].name);
		free(p->named[i].file);
		set_free(p->named[i].inline_elems);
		dynset_unref(p->named[i].dyn);
	}
	free(p->named);
	for (unsigned i = 0; i < p->n_kls; i++)
		keylimit_free(p->kls[i]);
	free(p->kls);
	free(p->kl_rule);
	free(p->rules);
	free(p->lims);
	free(p->lls);
	free(p->ctr);
	free(p->base);
	free(p->flag_user_uid);
	free(p->flag_user_ct);
	free(p);
}

uint32_t policy_incomplete_verdict(const struct policy *p)
{
	return p ? p->incomplete_verdict : NF_DROP;
}

uint32_t policy_kernel_flags(const struct policy *p)
{
	return p ? p->kflags : 0;
}

const char *policy_flag_user(const struct policy *p, uint32_t flag)
{
	if (!p)
		return NULL;
	if (flag & NFQA_CFG_F_CONNTRACK)
		return p->flag_user_ct;
	if (flag & NFQA_CFG_F_UID_GID)
		return p->flag_user_uid;
	return NULL;
}

/* Name the rule that needs a kernel feature this kernel lacks. */
int policy_check_kflags(const struct policy *p, uint32_t supported,
			struct diags *dg)
{
	uint32_t missing = policy_kernel_flags(p) & ~supported;

	if (missing & NFQA_CFG_F_CONNTRACK)
		diag_add(dg, DIAG_ERROR, NULL, "%s: ct state needs conntrack attributes from NFQUEUE, which this kernel does not provide (CONFIG_NETFILTER_NETLINK_GLUE_CT)",
			  policy_flag_user(p, NFQA_CFG_F_CONNTRACK));
	if (missing & NFQA_CFG_F_UID_GID)
		diag_add(dg, DIAG_ERROR, NULL, "%s: meta skuid/skgid needs NFQUEUE uid/gid attributes, which this kernel refused",
			  policy_flag_user(p, NFQA_CFG_F_UID_GID));
	return missing ? -EOPNOTSUPP : 0;
}

/* Sum of counter word I over all slots, minus the reset baseline. */
static uint64_t ctr_sum(const struct policy *p, size_t i)
{
	uint64_t sum = 0;

	for (unsigned s = 0; s < p->nslots; s++) {
		const uint64_t *blk = (const uint64_t *)((const char *)p->ctr +
							 s * p->stride);

		sum += __atomic_load_n(&blk[i], __ATOMIC_RELAXED);
	}
	return sum - __atomic_load_n(&p->base[i], __ATOMIC_RELAXED);
}

unsigned policy_rule_count(const struct policy *p, enum conf_hook_id h)
{
	return p && h < HOOK_MAX ? p->hooks[h].n : 0;
}

const char *policy_rule_text(const struct policy *p, enum conf_hook_id h,
			     unsigned i)
{
	if (!p || h >= HOOK_MAX || i >= p->hooks[h].n)
		return "";
	return p->rules[p->hooks[h].first + i].text;
}

void policy_rule_counters(const struct policy *p, enum conf_hook_id h,
			  unsigned i, uint64_t *packets, uint64_t *bytes)
{
	size_t idx;

	*packets = *bytes = 0;
	if (!p || h >= HOOK_MAX || i >= p->hooks[h].n)
		return;
	idx = p->hooks[h].first + i;
	*packets = ctr_sum(p, 2 * idx);
	*bytes = ctr_sum(p, 2 * idx + 1);
}

enum verdict_kind policy_hook_policy(const struct policy *p,
				     enum conf_hook_id h)
{
	return p && h < HOOK_MAX ? p->hooks[h].policy : VERDICT_ACCEPT;
}

uint64_t policy_policy_packets(const struct policy *p, enum conf_hook_id h)
{
	if (!p || h >= HOOK_MAX)
		return 0;
	return ctr_sum(p, 2 * (size_t)p->n_rules + h);
}

void policy_counters_reset(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_ctr; i++) {
		uint64_t cur = ctr_sum(p, i) +
			       __atomic_load_n(&p->base[i], __ATOMIC_RELAXED);

		__atomic_store_n(&p->base[i], cur, __ATOMIC_RELAXED);
	}
}

/* Add X to what counter word I of P reports (main thread). */
static void ctr_add(struct policy *p, size_t i, uint64_t x)
{
	uint64_t b = __atomic_load_n(&p->base[i], __ATOMIC_RELAXED);

	__atomic_store_n(&p->base[i], b - x, __ATOMIC_RELAXED);
}

/* qsort() of rule pointers by text, then by position: equal texts stay
 * in their order, so the k-th of a text pairs with the old k-th. */
static int by_text(const void *a, const void *b)
{
	const struct crule *x = *(const struct crule *const *)a;
	const struct crule *y = *(const struct crule *const *)b;
	int c = strcmp(x->text, y->text);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* The rules of hook H of P sorted by_text(), or NULL (no rule, ENOMEM). */
static const struct crule **sorted_rules(const struct policy *p,
					 enum conf_hook_id h)
{
	const struct chook *ch = &p->hooks[h];
	const struct crule **v;

	if (!ch->n || !(v = malloc(ch->n * sizeof(*v))))
		return NULL;
	for (unsigned i = 0; i < ch->n; i++)
		v[i] = &p->rules[ch->first + i];
	qsort(v, ch->n, sizeof(*v), by_text);
	return v;
}

static void carry_hook(struct policy *p, const struct policy *old,
		       enum conf_hook_id h)
{
	const struct crule **nv = sorted_rules(p, h);
	const struct crule **ov = sorted_rules(old, h);
	unsigned i = 0, j = 0, nn = p->hooks[h].n, on = old->hooks[h].n;

	while (nv && ov && i < nn && j < on) {
		int c = strcmp(nv[i]->text, ov[j]->text);

		if (c == 0) {
			ctr_add(p, 2 * (size_t)nv[i]->idx,
				ctr_sum(old, 2 * (size_t)ov[j]->idx));
			ctr_add(p, 2 * (size_t)nv[i]->idx + 1,
				ctr_sum(old, 2 * (size_t)ov[j]->idx + 1));
		}
		i += c <= 0;
		j += c >= 0;
	}
	free(nv);
	free(ov);
	ctr_add(p, 2 * (size_t)p->n_rules + h,
		ctr_sum(old, 2 * (size_t)old->n_rules + h));
}

void policy_carry_counters(struct policy *p, const struct policy *old)
{
	if (!p || !old)
		return;
	for (unsigned h = 0; h < HOOK_MAX; h++)
		carry_hook(p, old, (enum conf_hook_id)h);
}
