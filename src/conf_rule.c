/* SPDX-License-Identifier: GPL-2.0-or-later */
/* conf_rule.c - grammar actions for rules: matches, statements, verdicts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf_parse.h"
#include "limiter.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum field_kind {
	FK_ELEMS,		/* values converted by shape */
	FK_TCP_FLAGS,
	FK_CT_STATE,
	FK_NONE,		/* no value: "tls ech" */
};

/* IP protocols a match can imply, as bits (proto_defs[] order). */
enum {
	P_TCP = 1,
	P_UDP = 2,
	P_ICMP = 4,
	P_ICMP6 = 8,
};

struct field_def {
	const char *kw, *word;
	enum match_field field;
	enum field_kind kind;
	enum vshape shape;
	int set_type;		/* what an @set must be, or -1 */
	unsigned protos;	/* implies one of these IP protocols (P_*) */
};

static const struct field_def field_defs[] = {
	{ "ip", "saddr", MATCH_IP_SADDR, FK_ELEMS, V_ADDR4, SET_IPV4_ADDR, 0 },
	{ "ip", "daddr", MATCH_IP_DADDR, FK_ELEMS, V_ADDR4, SET_IPV4_ADDR, 0 },
	{ "ip", "protocol", MATCH_IP_PROTOCOL, FK_ELEMS, V_PROTO, -1, 0 },
	{ "ip6", "saddr", MATCH_IP6_SADDR, FK_ELEMS, V_ADDR6, SET_IPV6_ADDR,
	  0 },
	{ "ip6", "daddr", MATCH_IP6_DADDR, FK_ELEMS, V_ADDR6, SET_IPV6_ADDR,
	  0 },
	{ "tcp", "sport", MATCH_TCP_SPORT, FK_ELEMS, V_PORT, SET_INET_SERVICE,
	  P_TCP },
	{ "tcp", "dport", MATCH_TCP_DPORT, FK_ELEMS, V_PORT, SET_INET_SERVICE,
	  P_TCP },
	{ "tcp", "flags", MATCH_TCP_FLAGS, FK_TCP_FLAGS, V_ID, -1, P_TCP },
	{ "udp", "sport", MATCH_UDP_SPORT, FK_ELEMS, V_PORT, SET_INET_SERVICE,
	  P_UDP },
	{ "udp", "dport", MATCH_UDP_DPORT, FK_ELEMS, V_PORT, SET_INET_SERVICE,
	  P_UDP },
	{ "icmp", "type", MATCH_ICMP_TYPE, FK_ELEMS, V_ICMP, -1, P_ICMP },
	{ "icmpv6", "type", MATCH_ICMPV6_TYPE, FK_ELEMS, V_ICMP6, -1,
	  P_ICMP6 },
	{ "meta", "l4proto", MATCH_META_L4PROTO, FK_ELEMS, V_PROTO, -1, 0 },
	{ "meta", "mark", MATCH_META_MARK, FK_ELEMS, V_MARK, SET_MARK, 0 },
	{ "meta", "length", MATCH_META_LENGTH, FK_ELEMS, V_LEN, -1, 0 },
	{ "meta", "skuid", MATCH_META_SKUID, FK_ELEMS, V_ID, -1, 0 },
	{ "meta", "skgid", MATCH_META_SKGID, FK_ELEMS, V_ID, -1, 0 },
	{ "ct", "state", MATCH_CT_STATE, FK_CT_STATE, V_ID, -1, 0 },
	{ "iifname", NULL, MATCH_IIFNAME, FK_ELEMS, V_IFNAME, SET_IFNAME, 0 },
	{ "oifname", NULL, MATCH_OIFNAME, FK_ELEMS, V_IFNAME, SET_IFNAME, 0 },
	{ "dns", "qname", MATCH_DNS_QNAME, FK_ELEMS, V_DOMAIN, SET_DOMAIN,
	  P_TCP | P_UDP },
	{ "dns", "qtype", MATCH_DNS_QTYPE, FK_ELEMS, V_QTYPE, -1,
	  P_TCP | P_UDP },
	{ "tls", "sni", MATCH_TLS_SNI, FK_ELEMS, V_DOMAIN, SET_DOMAIN,
	  P_TCP | P_UDP },
	{ "tls", "ech", MATCH_TLS_ECH, FK_NONE, V_ID, -1, P_TCP | P_UDP },
	{ "http", "host", MATCH_HTTP_HOST, FK_ELEMS, V_DOMAIN, SET_DOMAIN,
	  P_TCP },
};

struct flag_name {
	const char *name;
	uint32_t bit;
};

static const struct flag_name tcp_flags[] = {
	{ "syn", TCPF_SYN }, { "ack", TCPF_ACK }, { "fin", TCPF_FIN },
	{ "rst", TCPF_RST }, { "psh", TCPF_PSH }, { "urg", TCPF_URG },
	{ NULL, 0 },
};

static const struct flag_name ct_states[] = {
	{ "new", CT_STATE_NEW }, { "established", CT_STATE_ESTABLISHED },
	{ "related", CT_STATE_RELATED }, { "invalid", CT_STATE_INVALID },
	{ NULL, 0 },
};

static const struct field_def *find_field(struct pstate *st, const char *kw,
					  const struct atom *field)
{
	char all[128];
	size_t o = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(field_defs); i++) {
		const struct field_def *d = &field_defs[i];

		if (strcmp(d->kw, kw))
			continue;
		if (!d->word || strcmp(d->word, field->text) == 0)
			return d;
		o += (size_t)snprintf(all + o, sizeof(all) - o, "%s%s",
				      o ? ", " : "", d->word);
	}
	conf_error(st, &field->loc, "unknown \"%s\" field \"%s\"; expected one "
		   "of: %s", kw, field->text, all);
	return NULL;
}

static void match_flags(struct pstate *st, struct item *it,
			const struct field_def *d, const struct pval *v)
{
	const struct flag_name *names = d->kind == FK_TCP_FLAGS ? tcp_flags :
					ct_states;
	const char *what = d->kind == FK_TCP_FLAGS ? "tcp flag" : "ct state";

	for (unsigned i = 0; i < v->n; i++) {
		const struct pelem *e = &v->elems[i];
		const struct flag_name *f = names;

		for (; f->name && e->kind == PE_ONE; f++)
			if (!strcmp(f->name, e->a.text))
				break;
		if (e->kind == PE_ONE && f->name) {
			it->m.flags |= f->bit;
			continue;
		}
		conf_error(st, &e->loc, "unknown %s \"%s\"; expected one "
			   "of: %s", what, e->a.text, d->kind == FK_TCP_FLAGS ?
			   "syn, ack, fin, rst, psh, urg" :
			   "new, established, related, invalid");
		it->bad = true;
	}
}

/* "meta mark N/MASK": the only place a '/' means a mask. */
static int mark_mask(struct pstate *st, struct item *it, const struct pval *v)
{
	const struct pelem *e = &v->elems[0];
	struct pelem one = *e;
	char msg[256];

	if (v->n != 1 || v->list || e->kind != PE_SLASH)
		return 0;
	one.kind = PE_ONE;
	if (conf_conv_elem(&one, V_MARK, &it->m.elems[0], msg, sizeof(msg))) {
		conf_error(st, &e->loc, "%s", msg);
	} else if (e->b.kind != ATOM_NUM || e->b.sized ||
		   e->b.num > 0xffffffff) {
		conf_error(st, &e->b.loc, "bad mark mask \"%s\"; expected "
			   "0..0xffffffff", e->b.text);
	} else {
		it->m.mask = (uint32_t)e->b.num;
		it->m.n_elems = 1;
		return 1;
	}
	it->bad = true;
	return 1;
}

static void match_elems(struct pstate *st, struct item *it,
			const struct field_def *d, const struct pval *v)
{
	char msg[512];

	if (v->n == 0) {
		conf_error(st, &v->loc, "empty list");
		it->bad = true;
		return;
	}
	it->m.elems = calloc(v->n, sizeof(*it->m.elems));
	if (!it->m.elems) {
		st->nomem = true;
		it->bad = true;
		return;
	}
	if (d->field == MATCH_META_MARK && mark_mask(st, it, v))
		return;
	for (unsigned i = 0; i < v->n; i++) {
		const struct pelem *e = &v->elems[i];
		int rc = conf_conv_elem(e, d->shape,
					&it->m.elems[it->m.n_elems],
					msg, sizeof(msg));

		if (rc) {
			conf_error(st, &e->loc, "%s", msg);
			it->bad = true;
			continue;
		}
		it->m.n_elems++;
	}
}

static int match_value(struct pstate *st, struct item *it,
		       const struct field_def *d, const struct pval *v)
{
	if (v->setref) {
		if (d->set_type < 0) {
			conf_error(st, &v->loc, "a set cannot be used with "
				   "\"%s\"", it->name);
			return -1;
		}
		it->m.set_name = strdup(v->setref);
		it->m.set_loc = v->loc;
		if (!it->m.set_name)
			st->nomem = true;
		return it->m.set_name ? 0 : -1;
	}
	if (d->kind != FK_ELEMS) {
		match_flags(st, it, d, v);
		return 0;
	}
	if (v->comma) {
		conf_error(st, &v->elems[1].loc, "unexpected ','; write a list "
			   "as { a, b }");
		return -1;
	}
	match_elems(st, it, d, v);
	return 0;
}

/* What a packet must be for match D to hold: its protocol, address
 * family ("ip", "icmp": IPv4) and the message a name is read from. */
static void match_implies(struct item *it, const struct field_def *d)
{
	static const char *const apps[][2] = {
		{ "dns", "DNS" }, { "tls", "TLS" }, { "http", "HTTP" },
	};

	it->protos = d->protos;
	if (!strcmp(d->kw, "ip") || !strcmp(d->kw, "icmp"))
		it->fam = "IPv4";
	else if (!strcmp(d->kw, "ip6") || !strcmp(d->kw, "icmpv6"))
		it->fam = "IPv6";
	for (unsigned i = 0; i < ARRAY_SIZE(apps); i++)
		if (!strcmp(d->kw, apps[i][0]))
			it->app = apps[i][1];
}

struct item *conf_pst_match(struct pstate *st, const char *kw,
			    const struct conf_loc *kwloc,
			    const struct atom *field, bool neg,
			    const struct pval *v)
{
	const struct field_def *d;
	struct sbuf b = { 0 };
	struct item *it;

	conf_sb_add(&b, kw);
	if (field) {
		conf_sb_add(&b, " ");
		conf_sb_add(&b, field->text);
	}
	it = conf_item_new(st, IT_MATCH, kwloc, b.s ? b.s : "");
	if (!it) {
		free(b.s);
		return NULL;
	}
	if (v) {
		conf_sb_add(&b, neg ? " != " : " ");
		conf_sb_pval(&b, v);
	}
	free(it->text);
	it->text = conf_sb_done(&b, st);
	if (!it->text) {
		conf_item_free(it);
		return NULL;
	}
	d = find_field(st, kw, field);
	if (!d) {
		it->bad = true;
		return it;
	}
	it->m.field = d->field;
	it->m.negate = neg;
	it->m.loc = *kwloc;
	it->m.mask = 0xffffffff;
	match_implies(it, d);
	if (d->kind == FK_NONE) {
		if (v) {
			conf_error(st, &v->loc, "\"%s\" takes no value",
				   it->name);
			it->bad = true;
		}
		return it;
	}
	if (!v) {
		conf_error(st, kwloc, "\"%s\" needs a value", it->name);
		it->bad = true;
		return it;
	}
	if (match_value(st, it, d, v))
		it->bad = true;
	return it;
}

static const struct {
	const char *name;
	uint32_t seconds;
} limit_units[] = {
	{ "second", 1 }, { "minute", 60 }, { "hour", 3600 },
	{ "day", 86400 }, { "week", 604800 },
};

#define LIMIT_RATES "N/second, N/minute, N/hour, N/day or N/week"

/* E as written, into B. */
static void sb_elem_text(struct sbuf *b, const struct pelem *e)
{
	struct pval v = { .elems = (struct pelem *)e, .n = 1 };

	conf_sb_pval(b, &v);
}

static bool limit_word(const struct pelem *e, const char *w)
{
	return e->kind == PE_ONE && e->a.kind == ATOM_WORD &&
	       strcmp(e->a.text, w) == 0;
}

/* "N/UNIT" at E (NULL: missing, after AFTER). */
static int limit_rate(struct pstate *st, struct item *it,
		      const struct pelem *e, const struct pelem *after)
{
	unsigned u = 0;

	if (e && e->kind == PE_SLASH && e->a.kind == ATOM_NUM &&
	    !e->a.sized && e->b.kind == ATOM_WORD)
		while (u < ARRAY_SIZE(limit_units) &&
		       strcmp(e->b.text, limit_units[u].name))
			u++;
	if (!e || e->kind != PE_SLASH ||
	    u == ARRAY_SIZE(limit_units)) {
		conf_error(st, e ? &e->loc : &after->loc,
			   "expected a rate " LIMIT_RATES "%s",
			   e || !limit_word(after, "over") ? "" :
			   " after \"over\"");
		return -1;
	}
	if (e->a.num < 1 || e->a.num > 0xffffffff) {
		conf_error(st, &e->loc, "limit rate %s out of range; expected "
			   "1..4294967295", e->a.text);
		return -1;
	}
	it->m.rate = (uint32_t)e->a.num;
	it->m.per_seconds = limit_units[u].seconds;
	return 0;
}

/* The number of packets after "burst" at KW (E: NULL if none). */
static int limit_burst(struct pstate *st, struct item *it,
		       const struct pelem *kw, const struct pelem *e)
{
	if (!e || e->kind != PE_ONE || e->a.kind != ATOM_NUM) {
		conf_error(st, &kw->loc, "expected a number of packets after "
			   "burst");
		return -1;
	}
	if (e->a.sized || e->a.num < 1 || e->a.num > 0xffffffff) {
		conf_error(st, &e->loc, "burst %s out of range; expected "
			   "1..4294967295%s", e->a.text, e->a.num ? "" :
			   " (nft refuses a bucket of 0 packets)");
		return -1;
	}
	it->m.burst = (uint32_t)e->a.num;
	return 0;
}

/* A bucket nft can hold (limiter.h). RATE is the rate's element. */
static int limit_size(struct pstate *st, const struct item *it,
		      const struct pelem *rate)
{
	uint64_t cost, size;
	unsigned u = 0;

	if (!limiter_bucket(it->m.rate, it->m.per_seconds, it->m.burst,
			    &cost, &size))
		return 0;
	while (limit_units[u].seconds != it->m.per_seconds)
		u++;
	conf_error(st, &rate->loc, "limit rate %u/%s burst %u: a bucket of "
		   "%u packets at %u a %s is more than nft can hold (292 "
		   "years); use a smaller burst or a faster rate", it->m.rate,
		   limit_units[u].name, it->m.burst, it->m.burst, it->m.rate,
		   limit_units[u].name);
	return -1;
}

/* rate [over] N/UNIT [burst M [packets]] */
static int limit_args(struct pstate *st, struct item *it,
		      const struct pval *v)
{
	const struct pelem *e = v->elems, *end = v->elems + v->n, *rate;
	struct sbuf b = { 0 };

	if (!limit_word(e, "rate")) {
		sb_elem_text(&b, e);
		conf_error(st, &e->loc, "unexpected \"%s\"; expected rate",
			   b.s ? b.s : "?");
		free(b.s);
		return -1;
	}
	if (++e < end && limit_word(e, "over")) {
		it->m.negate = true;
		e++;
	}
	rate = e < end ? e : NULL;
	if (limit_rate(st, it, rate, e - 1))
		return -1;
	if (++e < end && limit_word(e, "burst")) {
		if (limit_burst(st, it, e, e + 1 < end ? e + 1 : NULL))
			return -1;
		e += 2;
		if (e < end && limit_word(e, "packets"))
			e++;
	} else if (e < end && e->kind == PE_ONE && e->a.kind == ATOM_WORD) {
		conf_error(st, &e->loc, "unexpected \"%s\"; expected burst",
			   e->a.text);
		return -1;
	}
	if (e < end) {
		sb_elem_text(&b, e);
		conf_error(st, &e->loc, "unexpected \"%s\" after the limit",
			   b.s ? b.s : "?");
		free(b.s);
		return -1;
	}
	return limit_size(st, it, rate);
}

/* The match "limit ..." of text TEXT (taken) from ALL, its words. */
static struct item *limit_item(struct pstate *st, const struct conf_loc *kwloc,
			       const struct pval *all, struct sbuf *text)
{
	struct item *it = conf_item_new(st, IT_MATCH, kwloc, "limit rate");

	if (!it) {
		free(text->s);
		return NULL;
	}
	free(it->text);
	it->text = conf_sb_done(text, st);
	if (!it->text) {
		conf_item_free(it);
		return NULL;
	}
	it->m.field = MATCH_LIMIT;
	it->m.loc = *kwloc;
	it->m.mask = 0xffffffff;
	if (limit_args(st, it, all))
		it->bad = true;
	return it;
}

static void sb_limit_args(struct sbuf *b, const struct pval *args)
{
	for (unsigned i = 0; args && i < args->n; i++) {
		conf_sb_add(b, " ");
		sb_elem_text(b, &args->elems[i]);
	}
}

struct item *conf_pst_limit(struct pstate *st, const struct conf_loc *kwloc,
			    const struct pval *args)
{
	struct sbuf b = { 0 };

	conf_sb_add(&b, "limit");
	sb_limit_args(&b, args);
	return limit_item(st, kwloc, args, &b);
}

static const char *const stmt_names[] = {
	[IT_SETADD] = "add @set",
	[IT_COUNTER] = "counter",
	[IT_LOG] = "log",
	[IT_MARK] = "mark set",
	[IT_BYPASS] = "bypass",
};

struct item *conf_pst_stmt(struct pstate *st, enum item_kind kind,
			   const struct conf_loc *loc, const struct atom *arg1,
			   const struct atom *arg2)
{
	struct item *it = conf_item_new(st, kind, loc, stmt_names[kind]);
	char text[600];

	if (!it || !arg1)
		return it;
	if (kind == IT_LOG && strcmp(arg1->text, "prefix")) {
		conf_error(st, &arg1->loc, "unexpected \"%s\"; expected prefix",
			   arg1->text);
		it->bad = true;
	} else if (kind == IT_LOG) {
		it->prefix = strdup(arg2->text);
		snprintf(text, sizeof(text), "log prefix \"%.500s\"",
			 arg2->text);
	} else if (arg1->sized || arg1->num > 0xffffffff) {
		conf_error(st, &arg1->loc, "mark %s out of range; expected "
			   "0..0xffffffff", arg1->text);
		it->bad = true;
	} else {
		it->mark = (uint32_t)arg1->num;
		snprintf(text, sizeof(text), "mark set %s", arg1->text);
	}
	if (!it->bad) {
		free(it->text);
		it->text = strdup(text);
		if (!it->text || (kind == IT_LOG && !it->prefix)) {
			conf_item_free(it);
			st->nomem = true;
			return NULL;
		}
	}
	return it;
}

static const struct field_def *key_def(const char *kw, const char *word)
{
	for (unsigned i = 0; i < ARRAY_SIZE(field_defs); i++) {
		const struct field_def *d = &field_defs[i];

		if (d->word && !strcmp(d->kw, kw) && !strcmp(d->word, word) &&
		    (d->set_type == SET_IPV4_ADDR ||
		     d->set_type == SET_IPV6_ADDR ||
		     d->set_type == SET_INET_SERVICE))
			return d;
	}
	return NULL;
}

struct item *conf_pst_limit_per(struct pstate *st,
				const struct conf_loc *kwloc,
				const struct pval *args, const char *kw,
				const struct atom *field,
				const struct pval *tail)
{
	const struct field_def *d = key_def(kw, field->text);
	unsigned n = args->n + (tail ? tail->n : 0);
	struct pval all = { .loc = args->loc, .n = n };
	struct sbuf b = { 0 };
	struct item *it;

	/* limit_args() reads the words of both parts, without "per". */
	all.elems = malloc(n * sizeof(*all.elems));
	if (!all.elems)
		return NULL;
	memcpy(all.elems, args->elems, args->n * sizeof(*all.elems));
	if (tail)
		memcpy(all.elems + args->n, tail->elems,
		       tail->n * sizeof(*all.elems));
	conf_sb_add(&b, "limit");
	sb_limit_args(&b, args);
	conf_sb_add(&b, " per ");
	conf_sb_add(&b, kw);
	conf_sb_add(&b, " ");
	conf_sb_add(&b, field->text);
	sb_limit_args(&b, tail);
	it = limit_item(st, kwloc, &all, &b);
	free(all.elems);
	if (!it)
		return NULL;
	if (!d) {
		conf_error(st, &field->loc, "\"%s %s\" cannot key a limit; "
			   "expected ip saddr, ip daddr, ip6 saddr, ip6 daddr, "
			   "tcp sport, tcp dport, udp sport or udp dport", kw,
			   field->text);
		it->bad = true;
		return it;
	}
	it->m.per = true;
	it->m.per_key = d->field;
	return it;
}

struct item *conf_pst_setadd(struct pstate *st, const char *verb,
			     struct atom *set, const char *kw,
			     const struct atom *field,
			     const struct atom *timeout_kw,
			     const struct atom *dur)
{
	struct item *it = conf_item_new(st, IT_SETADD, &set->loc,
					strcmp(verb, "update") ? "add @set" :
								 "update @set");
	const struct field_def *d = key_def(kw, field->text);
	char text[400], durs[32] = "";

	if (!it)
		return NULL;
	if (!d) {
		conf_error(st, &field->loc, "\"%s %s\" cannot fill a set; "
			   "expected ip saddr, ip daddr, ip6 saddr, ip6 daddr, "
			   "tcp sport, tcp dport, udp sport or udp dport", kw,
			   field->text);
		it->bad = true;
	} else if (timeout_kw && (strcmp(timeout_kw->text, "timeout") ||
		   conf_parse_duration(dur->text, &it->add_timeout_ms))) {
		conf_error(st, &timeout_kw->loc, "expected \"timeout "
			   "DURATION\" (" CONF_DURATION_FORMS ") after the key");
		it->bad = true;
	}
	if (it->bad)
		return it;
	it->add_key = d->field;
	it->add_update = verb[0] == 'u';
	it->m.loc = set->loc;
	it->add_set = set->text;
	set->text = NULL;
	if (it->add_timeout_ms)
		conf_format_duration(it->add_timeout_ms, durs, sizeof(durs));
	snprintf(text, sizeof(text), "%s @%s { %s %s%s%s }", verb,
		 it->add_set, kw, field->text, durs[0] ? " timeout " : "",
		 durs);
	free(it->text);
	it->text = strdup(text);
	snprintf(it->name, sizeof(it->name), "%s @set", verb);
	if (!it->text) {
		conf_item_free(it);
		st->nomem = true;
		return NULL;
	}
	return it;
}

struct item *conf_pst_verdict(struct pstate *st, enum verdict_kind v,
			      const struct conf_loc *loc, const struct atom *w,
			      const struct atom *num)
{
	struct item *it = conf_item_new(st, IT_VERDICT, loc,
					conf_verdict_name(v));
	char text[64];

	if (!it)
		return NULL;
	it->verdict = v;
	if (!num)
		return it;
	if (w && strcmp(w->text, "num")) {
		conf_error(st, &w->loc, "unexpected \"%s\"; expected a queue "
			   "number", w->text);
		it->bad = true;
	} else if (num->sized || num->num > 65535) {
		conf_error(st, &num->loc, "queue %s out of range; expected "
			   "0..65535", num->text);
		it->bad = true;
	} else {
		it->queue_num = (uint16_t)num->num;
		snprintf(text, sizeof(text), "queue %.40s", num->text);
		free(it->text);
		it->text = strdup(text);
		if (!it->text) {
			conf_item_free(it);
			st->nomem = true;
			return NULL;
		}
	}
	return it;
}

/* ---- one whole rule ---- */

static unsigned phase(const struct item *it)
{
	return it->kind == IT_MATCH ? 0 : (unsigned)it->kind;
}

#define ORDER_HINT "write matches, then counter, log, mark set, bypass " \
	"(add/update @set anywhere among them), then the verdict"

/* Matches, then counter, log, mark set, bypass, then one verdict; one
 * add/update @set anywhere after the matches, before the verdict (nft
 * takes set statements in any place; the set is filled when the rule
 * matches, whatever their order). */
static int check_order(struct pstate *st, const struct items *l,
		       const struct conf_loc *end)
{
	const struct item *verdict = NULL, *bypass = NULL, *add = NULL;
	unsigned max = 0;
	int bad = 0;

	for (unsigned i = 0; i < l->n; i++) {
		const struct item *it = &l->v[i];
		unsigned p = phase(it);
		bool dup = it->kind == IT_SETADD ? add != NULL : p == max && p;

		bad |= it->bad;
		/* The grammar puts the one verdict last; order the rest. */
		if (dup || (it->kind != IT_SETADD && p < max) ||
		    (p == 0 && add)) {
			conf_error(st, &it->loc, dup ? "duplicate \"%s\"" :
				   "\"%s\" out of order; " ORDER_HINT,
				   it->name);
			bad = 1;
		}
		if (it->kind == IT_SETADD)
			add = it;
		else if (p > max)
			max = p;
		if (it->kind == IT_VERDICT)
			verdict = it;
		if (it->kind == IT_BYPASS)
			bypass = it;
	}
	if (!verdict) {
		conf_error(st, end, "missing verdict; expected one of: accept, "
			   "drop, repeat, queue N");
		return -1;
	}
	if (bypass && verdict->verdict != VERDICT_ACCEPT) {
		conf_error(st, &bypass->loc, "\"bypass\" is only allowed "
			   "before \"accept\"");
		bad = 1;
	}
	return bad ? -1 : 0;
}

static bool elems_have(const struct conf_match *m, uint64_t v)
{
	for (unsigned i = 0; i < m->n_elems; i++)
		if (m->elems[i].lo <= v && v <= m->elems[i].hi)
			return true;
	return false;
}

static const struct {
	unsigned bit;
	int num;
	const char *name;
} proto_defs[] = {
	{ P_TCP, 6, "tcp" }, { P_UDP, 17, "udp" }, { P_ICMP, 1, "icmp" },
	{ P_ICMP6, 58, "icmpv6" },
};

/* "tcp", or "tcp or udp" for more than one. */
static const char *protos_name(unsigned protos, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < ARRAY_SIZE(proto_defs); i++)
		if ((protos & proto_defs[i].bit) && o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
					      o ? " or " : "",
					      proto_defs[i].name);
	return buf;
}

/* Does "ip protocol"/"meta l4proto" match M let one of PROTOS through? */
static bool protos_pass(const struct conf_match *m, unsigned protos)
{
	for (unsigned i = 0; i < ARRAY_SIZE(proto_defs); i++)
		if ((protos & proto_defs[i].bit) &&
		    elems_have(m, (uint64_t)proto_defs[i].num) != m->negate)
			return true;
	return false;
}

/* The protocols the matches leave, *BY the match that last narrowed
 * them; 0 after reporting two matches no packet can satisfy together. */
static unsigned narrow_protos(struct pstate *st, const struct items *l,
			      const struct item **by)
{
	unsigned left = ~0u;
	char a[32], b[32];

	*by = NULL;
	for (unsigned i = 0; i < l->n; i++) {
		const struct item *it = &l->v[i];

		if (it->kind != IT_MATCH || !it->protos ||
		    (left & it->protos) == left)
			continue;
		if (!(left & it->protos)) {
			conf_error(st, &it->loc, "\"%s\" contradicts \"%s\": a "
				   "packet is not both %s and %s", it->name,
				   (*by)->name, protos_name(left, a, sizeof(a)),
				   protos_name(it->protos, b, sizeof(b)));
			return 0;
		}
		left &= it->protos;
		*by = it;
	}
	return *by ? left : ~0u;
}

/* "meta l4proto icmp tcp dport 22" can never match: say so now. */
static int check_protos(struct pstate *st, const struct items *l)
{
	const struct item *by;
	unsigned protos = narrow_protos(st, l, &by);
	char names[32];
	int bad = 0;

	if (!protos)
		return -1;
	for (unsigned i = 0; by && i < l->n; i++) {
		const struct conf_match *m = &l->v[i].m;

		if (l->v[i].kind != IT_MATCH || m->set_name ||
		    (m->field != MATCH_IP_PROTOCOL &&
		     m->field != MATCH_META_L4PROTO) ||
		    protos_pass(m, protos))
			continue;
		conf_error(st, &by->loc, "\"%s\" needs protocol %s, but "
			   "\"%s\" excludes it", by->name,
			   protos_name(protos, names, sizeof(names)),
			   l->v[i].text);
		bad = 1;
	}
	return bad ? -1 : 0;
}

/* Matches of two address families ("ip saddr ... ip6 daddr ...") or
 * of two messages ("dns qname ... tls sni ...") never hold together. */
static int check_excl(struct pstate *st, const struct items *l, bool fam)
{
	const struct item *first = NULL;

	for (unsigned i = 0; i < l->n; i++) {
		const struct item *it = &l->v[i];
		const char *what = fam ? it->fam : it->app;

		if (it->kind != IT_MATCH || !what)
			continue;
		if (!first) {
			first = it;
			continue;
		}
		if (strcmp(what, fam ? first->fam : first->app) == 0)
			continue;
		conf_error(st, &it->loc, "\"%s\" contradicts \"%s\": a "
			   "packet is not both %s and %s", it->name,
			   first->name, fam ? first->fam : first->app, what);
		return -1;
	}
	return 0;
}

static int rule_fill(struct pstate *st, struct conf_rule *r,
		     struct items *l)
{
	struct sbuf b = { 0 };
	unsigned nm = 0;

	r->matches = calloc(l->n, sizeof(*r->matches));
	if (!r->matches)
		return -ENOMEM;
	r->loc = l->v[0].loc;
	for (unsigned i = 0; i < l->n; i++) {
		struct item *it = &l->v[i];

		conf_sb_add(&b, i ? " " : "");
		conf_sb_add(&b, it->text);
		if (it->kind == IT_MATCH) {
			it->m.text = it->text;
			it->text = NULL;
			r->matches[nm++] = it->m;
			memset(&it->m, 0, sizeof(it->m));
		} else if (it->kind == IT_SETADD) {
			r->add_set = it->add_set;
			it->add_set = NULL;
			r->add_key = it->add_key;
			r->add_timeout_ms = it->add_timeout_ms;
			r->add_update = it->add_update;
			r->add_loc = it->m.loc;
		} else if (it->kind == IT_COUNTER) {
			r->counter = true;
		} else if (it->kind == IT_LOG) {
			r->log = true;
			r->log_prefix = it->prefix;
			it->prefix = NULL;
		} else if (it->kind == IT_MARK) {
			r->mark_set = true;
			r->mark = it->mark;
		} else if (it->kind == IT_BYPASS) {
			r->bypass = true;
		} else {
			r->verdict = it->verdict;
			r->queue_num = it->queue_num;
		}
	}
	r->n_matches = nm;
	r->text = conf_sb_done(&b, st);
	return r->text ? 0 : -ENOMEM;
}

void conf_pst_rule(struct pstate *st, struct items *l,
		   const struct conf_loc *end)
{
	struct conf_hook *h = st->cur_hook;
	struct conf_rule *n;
	size_t cap;
	int bad;

	bad = check_order(st, l, end);
	bad |= check_protos(st, l);
	/* One report a pair: "icmp type 8 icmpv6 type 1" is one above. */
	if (!bad)
		bad = check_excl(st, l, true);
	if (!bad)
		bad = check_excl(st, l, false);
	if (bad || !h)
		goto out;
	cap = conf_grow(h->n_rules);
	n = cap ? realloc(h->rules, cap * sizeof(*n)) : h->rules;
	if (!n) {
		st->nomem = true;
		goto out;
	}
	h->rules = n;
	memset(&n[h->n_rules], 0, sizeof(*n));
	if (rule_fill(st, &n[h->n_rules], l)) {
		/* An element of the array, not a block of its own. */
		conf_rule_clear(&n[h->n_rules]);
		st->nomem = true;
		goto out;
	}
	h->n_rules++;
out:
	conf_items_free(l);
}

/* ---- checks that need the whole file ---- */

static enum set_type field_set_type(enum match_field f)
{
	for (unsigned i = 0; i < ARRAY_SIZE(field_defs); i++)
		if (field_defs[i].field == f)
			return (enum set_type)field_defs[i].set_type;
	return SET_MARK;
}

static const char *field_name(enum match_field f, char *buf, size_t len)
{
	for (unsigned i = 0; i < ARRAY_SIZE(field_defs); i++) {
		const struct field_def *d = &field_defs[i];

		if (d->field == f) {
			snprintf(buf, len, "%s%s%s", d->kw, d->word ? " " : "",
				 d->word ? d->word : "");
			break;
		}
	}
	return buf;
}

static void check_set_ref(struct pstate *st, const struct conf_match *m)
{
	const struct conf *c = st->conf;
	enum set_type want = field_set_type(m->field);
	char name[32];

	for (unsigned i = 0; i < c->n_sets; i++) {
		if (strcmp(c->sets[i].name, m->set_name))
			continue;
		if (c->sets[i].type != want)
			conf_error(st, &m->set_loc, "set \"%s\" has type %s; "
				   "\"%s\" needs a set of type %s",
				   m->set_name,
				   conf_set_type_name(c->sets[i].type),
				   field_name(m->field, name, sizeof(name)),
				   conf_set_type_name(want));
		return;
	}
	for (unsigned i = 0; i < st->n_bad_sets; i++)
		if (strcmp(st->bad_sets[i], m->set_name) == 0)
			return;
	conf_error(st, &m->set_loc, "unknown set \"%s\"", m->set_name);
}

/* "queues N" or "queues auto" (one per online CPU, as
 * conf_queue_numbers() counts them) from queue-base past queue 65535. */
static void check_queue_range(struct pstate *st,
			      const struct conf_options *o)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (o->queues_mode == QUEUES_COUNT &&
	    o->queue_base + o->queues_count - 1 > 65535)
		conf_error(st, &st->queues_loc, "queues %u from queue-base %u "
			   "go past queue 65535", o->queues_count,
			   o->queue_base);
	if (o->queues_mode != QUEUES_AUTO || n > NFQD_MAX_QUEUES ||
	    o->queue_base + n - 1 <= 65535)
		return;
	conf_error(st, &st->queue_base_loc, "queue-base %u with queues auto "
		   "(one queue per online CPU, %ld here) goes past queue "
		   "65535; use queue-base %ld or lower, or a count: queues N",
		   o->queue_base, n, 65536 - n);
}

void conf_pst_finish(struct pstate *st)
{
	const struct conf_options *o = &st->conf->opts;

	for (unsigned h = 0; h < HOOK_MAX; h++) {
		const struct conf_hook *hk = &st->conf->hooks[h];

		for (unsigned r = 0; r < hk->n_rules; r++)
			for (unsigned i = 0; i < hk->rules[r].n_matches; i++)
				if (hk->rules[r].matches[i].set_name)
					check_set_ref(st,
						&hk->rules[r].matches[i]);
	}
	check_queue_range(st, o);
}
