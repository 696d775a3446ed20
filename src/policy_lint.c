/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_lint.c - warnings about a config that compiles but probably does
 * not do what was meant: rules an earlier rule hides, matches copy-range
 * cuts off. Run by policy_build(); never stops a config from loading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "policy.h"
#include "policy_int.h"

static struct conf_loc loc_of(const struct conf *c, const struct conf_loc *l)
{
	struct conf_loc r = *l;

	if (!r.file)
		r.file = c->path ? c->path : "<config>";
	return r;
}

/* ---- copy-range ---- */

/* The copy-range below which a name match of each protocol (NP_*) is
 * warned about, and what must be copied whole. */
static const struct {
	uint32_t min;
	const char *what;
} names_copy_min[] = {
	[NP_DNS] = { 512, "a DNS query's question (its name of up to 255 "
		     "bytes, after the IP, UDP or TCP and DNS headers)" },
	[NP_TLS] = { 4096, "a ClientHello (about 2 KB from a browser, one "
		     "packet with GRO) or a QUIC Initial (1,200-1,500 "
		     "bytes)" },
	[NP_HTTP] = { 4096, "an HTTP request's head up to its Host line" },
};

/*
 * Bytes of the copy field F needs on a packet of family FAM (FAM_V4 or
 * FAM_V6) without IP options or extension headers; 0: not from the
 * packet's headers.
 */

static unsigned copy_need(enum match_field f, unsigned fam)
{
	unsigned base = fam == FAM_V4 ? 20 : 40;

	switch (f) {
	case MATCH_IP_SADDR:
	case MATCH_IP_DADDR:
	case MATCH_IP6_SADDR:
	case MATCH_IP6_DADDR:
	case MATCH_IP_PROTOCOL:
	case MATCH_META_L4PROTO:
		return base;	/* the whole fixed header */
	case MATCH_TCP_SPORT:
	case MATCH_UDP_SPORT:
		return base + PKT_TH_SPORT_END;
	case MATCH_TCP_DPORT:
	case MATCH_UDP_DPORT:
		return base + PKT_TH_DPORT_END;
	case MATCH_TCP_FLAGS:
		return base + PKT_TH_FLAGS_END;
	case MATCH_ICMP_TYPE:
	case MATCH_ICMPV6_TYPE:
		return base + PKT_TH_TYPE_END;
	default:
		return 0;
	}
}

/* A name match whose message copy-range RANGE cuts off: warned about
 * once a protocol (WARNED: 1 << NP_* of those warned about). */
static void warn_names_copy(uint32_t range, const struct conf_match *cm,
			    const struct conf_loc *at, struct diags *d,
			    unsigned *warned)
{
	unsigned proto = policy_name_proto(cm->field);

	if (proto >= sizeof(names_copy_min) / sizeof(names_copy_min[0]) ||
	    !names_copy_min[proto].what || range >= names_copy_min[proto].min ||
	    (*warned & 1u << proto))
		return;
	*warned |= 1u << proto;
	diag_add(d, DIAG_WARNING, at, "copy-range %u is too small for "
		 "\"%s\": %s must be copied whole, else the name is "
		 "INCOMPLETE; use copy-range %u or more", range,
		 cm->text ? cm->text : "?", names_copy_min[proto].what,
		 names_copy_min[proto].min);
}

/* Warn about the matches of CR that copy-range cuts off even on the
 * simplest packets of the families the rule can match. */
static void warn_copy(const struct conf *c, const struct conf_rule *cr,
		      struct diags *d, unsigned *names_warned)
{
	uint32_t range = c->opts.copy_range;
	unsigned fams = FAM_V4 | FAM_V6;

	for (unsigned i = 0; i < cr->n_matches; i++)
		fams &= policy_field_fams(cr->matches[i].field);
	for (unsigned i = 0; i < cr->n_matches; i++) {
		const struct conf_match *cm = &cr->matches[i];
		struct conf_loc at = loc_of(c, &cm->loc);
		/* IPv6 needs more than IPv4: name the larger need. */
		unsigned fam = fams & FAM_V6 ? FAM_V6 : FAM_V4;
		unsigned need = fams ? copy_need(cm->field, fam) : 0;

		if (!range && cm->field == MATCH_META_LENGTH)
			diag_add(d, DIAG_WARNING, &at, "copy-range 0 sends no "
				 "packet length: \"%s\" is always incomplete",
				 cm->text ? cm->text : cr->text ? cr->text :
				 "?");
		if (policy_field_is_name(cm->field)) {
			warn_names_copy(range, cm, &at, d, names_warned);
			continue;
		}
		if (need <= range)
			continue;
		diag_add(d, DIAG_WARNING, &at, "copy-range %u is too small "
			 "for \"%s\" (%s need %u bytes)", range,
			 cm->text ? cm->text : cr->text ? cr->text : "?",
			 fam == FAM_V6 ? "IPv6 packets without extension "
					 "headers" :
					 "IPv4 packets without options", need);
	}
}

/* ---- rules hidden by an earlier rule ---- */

static bool elem_eq(const struct conf_elem *a, const struct conf_elem *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case ELEM_NUM:
		return a->lo == b->lo && a->hi == b->hi;
	case ELEM_ADDR:
		return a->family == b->family &&
		       !memcmp(a->alo, b->alo, sizeof(a->alo)) &&
		       !memcmp(a->ahi, b->ahi, sizeof(a->ahi));
	default:
		return a->str && b->str && !strcmp(a->str, b->str);
	}
}

/* Every element of A is one of B. */
static bool elems_in(const struct conf_match *a, const struct conf_match *b)
{
	for (unsigned i = 0; i < a->n_elems; i++) {
		unsigned j = 0;

		while (j < b->n_elems && !elem_eq(&a->elems[i], &b->elems[j]))
			j++;
		if (j == b->n_elems)
			return false;
	}
	return true;
}

/* A and B test the same thing (their values as sets). */
static bool match_eq(const struct conf_match *a, const struct conf_match *b)
{
	if (a->field != b->field || a->negate != b->negate ||
	    a->mask != b->mask || a->flags != b->flags ||
	    !a->set_name != !b->set_name ||
	    (a->set_name && strcmp(a->set_name, b->set_name)))
		return false;
	return elems_in(a, b) && elems_in(b, a);
}

/*
 * Every packet R matches, E matches too: each match of E is one of R's.
 * A limit is never taken as covering: it stops matching when spent.
 */
static bool covers(const struct conf_rule *e, const struct conf_rule *r)
{
	for (unsigned i = 0; i < e->n_matches; i++) {
		unsigned j = 0;

		if (e->matches[i].field == MATCH_LIMIT)
			return false;
		while (j < r->n_matches &&
		       !match_eq(&e->matches[i], &r->matches[j]))
			j++;
		if (j == r->n_matches)
			return false;
	}
	return true;
}

/* Earlier rules a rule is compared with (besides one without matches):
 * bounds the work on a hook of many thousand rules. */
#define LINT_WINDOW	256

static void warn_one(const struct conf *c, const struct conf_rule *r,
		     const struct conf_rule *e, struct diags *d)
{
	struct conf_loc at = loc_of(c, &r->loc);

	diag_add(d, DIAG_WARNING, &at, "rule \"%s\" can never match: the "
		 "rule at line %u (\"%s\") takes %s first",
		 r->text ? r->text : "?", e->loc.line, e->text ? e->text : "?",
		 e->n_matches ? "all its packets" : "every packet");
}

/* Every verdict ends the chain: the first rule that matches wins. */
static void warn_hidden(const struct conf *c, const struct conf_hook *h,
			struct diags *d)
{
	const struct conf_rule *any = NULL;	/* first without matches */

	for (unsigned i = 0; i < h->n_rules; i++) {
		const struct conf_rule *r = &h->rules[i];
		unsigned j = i > LINT_WINDOW ? i - LINT_WINDOW : 0;

		if (any) {
			warn_one(c, r, any, d);
			continue;
		}
		for (; j < i && !covers(&h->rules[j], r); j++)
			;
		if (j < i)
			warn_one(c, r, &h->rules[j], d);
		if (!r->n_matches)
			any = r;
	}
}

/* Does CR match a name that any port's connection may carry (a TLS or
 * QUIC server name, an HTTP host; DNS is read on dns-ports only)? */
static bool names_any_port(const struct conf_rule *cr)
{
	bool name = false, port = false;

	for (unsigned i = 0; i < cr->n_matches; i++) {
		enum match_field f = cr->matches[i].field;

		name |= f == MATCH_TLS_SNI || f == MATCH_TLS_ECH ||
			f == MATCH_HTTP_HOST;
		port |= f == MATCH_TCP_DPORT || f == MATCH_UDP_DPORT;
	}
	return name && !port;
}

/* A rule that accepts on a name accepts the packets before the name
 * (nfqd.conf(5) NAMES): without a port, those of a connection to any. */
static void warn_open_ports(const struct conf *c, const struct conf_rule *cr,
			    struct diags *d)
{
	struct conf_loc at = loc_of(c, &cr->loc);

	if (cr->verdict == VERDICT_DROP || !names_any_port(cr))
		return;
	diag_add(d, DIAG_WARNING, &at, "rule \"%s\" lets through the first "
		 "packets of a connection to any port while its name is still "
		 "coming (the SYN, up to 8192 bytes of an unfinished "
		 "ClientHello or request head): name the ports its servers "
		 "listen on in the rule (\"tcp dport { 80, 443 }\", \"udp "
		 "dport 443\")", cr->text ? cr->text : "?");
}

void policy_lint(const struct conf *c, struct diags *d)
{
	unsigned from = d->n;
	unsigned names_warned = 0;

	for (int h = 0; h < HOOK_MAX; h++) {
		for (unsigned i = 0; i < c->hooks[h].n_rules; i++) {
			warn_copy(c, &c->hooks[h].rules[i], d, &names_warned);
			warn_open_ports(c, &c->hooks[h].rules[i], d);
		}
		warn_hidden(c, &c->hooks[h], d);
	}
	diag_sort(d, from);
}

char *policy_warnings(const struct conf *c)
{
	struct diags d = { 0 };
	char *s;

	policy_lint(c, &d);
	s = diag_join(&d, DIAG_WARNING);
	diag_free(&d);
	return s;
}
