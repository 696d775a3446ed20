/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_dump.c - the normalised config, as "nfqd -t --dump" prints it:
 * every value in one spelling (numbers in decimal, marks in hex, address
 * ranges as prefixes where they are one), lists and sets sorted and
 * without duplicates, a set's file read into its elements. The output is
 * a config nfqd reads back to the same dump.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conf.h"
#include "log.h"
#include "setstate.h"

/* An element list being gathered: a copy owning its strings. */
struct elist {
	struct conf_elem *v;
	unsigned n, cap;
	bool nomem;
};

static const char *elist_add(void *arg, const struct conf_elem *el)
{
	struct elist *l = arg;
	struct conf_elem *v;

	if (l->n == l->cap) {
		unsigned cap = l->cap ? l->cap * 2 : 16;

		v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->nomem = true;
			return NULL;
		}
		l->v = v;
		l->cap = cap;
	}
	v = &l->v[l->n];
	*v = *el;
	v->str = NULL;
	if (el->str && !(v->str = strdup(el->str))) {
		l->nomem = true;
		return NULL;
	}
	l->n++;
	return NULL;
}

static void elist_free(struct elist *l)
{
	for (unsigned i = 0; i < l->n; i++)
		free(l->v[i].str);
	free(l->v);
}

static int elem_cmp(const void *pa, const void *pb)
{
	const struct conf_elem *a = pa, *b = pb;
	int r;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	switch (a->kind) {
	case ELEM_NUM:
		if (a->lo != b->lo)
			return a->lo < b->lo ? -1 : 1;
		return a->hi < b->hi ? -1 : a->hi > b->hi;
	case ELEM_ADDR:
		if (a->family != b->family)
			return a->family < b->family ? -1 : 1;
		r = memcmp(a->alo, b->alo, sizeof(a->alo));
		return r ? r : memcmp(a->ahi, b->ahi, sizeof(a->ahi));
	default:
		return strcmp(a->str ? a->str : "", b->str ? b->str : "");
	}
}

/* Sort V[0..N) and drop the repeats: returns the new count. */
static unsigned canon(struct conf_elem *v, unsigned n)
{
	unsigned k = 0;

	if (!n)
		return 0;	/* qsort() wants an array, even of none */
	qsort(v, n, sizeof(*v), elem_cmp);
	for (unsigned i = 0; i < n; i++) {
		if (k && elem_cmp(&v[k - 1], &v[i]) == 0) {
			free(v[i].str);
			continue;
		}
		v[k++] = v[i];
	}
	return k;
}

/* The prefix length that makes LO..HI one prefix, or -1. */
static int prefix_len(const struct conf_elem *e, unsigned bytes)
{
	unsigned bits = bytes * 8, p = bits;

	/* The trailing bits where LO has 0 and HI has 1. */
	while (p > 0) {
		unsigned b = p - 1, mask = 0x80u >> (b % 8);

		if ((e->alo[b / 8] & mask) || !(e->ahi[b / 8] & mask))
			break;
		p--;
	}
	for (unsigned b = 0; b < p; b++) {
		unsigned mask = 0x80u >> (b % 8);

		if ((e->alo[b / 8] & mask) != (e->ahi[b / 8] & mask))
			return -1;
	}
	return (int)p;
}

static void put_addr(FILE *f, int family, const uint8_t *a)
{
	char buf[INET6_ADDRSTRLEN];

	fputs(inet_ntop(family, a, buf, sizeof(buf)) ? buf : "?", f);
}

static void put_num(FILE *f, uint64_t n, bool hex)
{
	if (hex)
		fprintf(f, "0x%llx", (unsigned long long)n);
	else
		fprintf(f, "%llu", (unsigned long long)n);
}

/* MARKS: numbers in hex, as marks are written. */
static void put_elem(FILE *f, const struct conf_elem *e, bool marks)
{
	unsigned bytes = e->family == AF_INET ? 4 : 16;
	int p;

	switch (e->kind) {
	case ELEM_NUM:
		put_num(f, e->lo, marks);
		if (e->hi != e->lo) {
			fputc('-', f);
			put_num(f, e->hi, marks);
		}
		return;
	case ELEM_ADDR:
		p = prefix_len(e, bytes);
		put_addr(f, e->family, e->alo);
		if (p < 0) {
			fputc('-', f);
			put_addr(f, e->family, e->ahi);
		} else if ((unsigned)p != bytes * 8) {
			fprintf(f, "/%d", p);
		}
		return;
	default:
		fprintf(f, "\"%s\"", e->str ? e->str : "");
	}
}

/* "{ a, b }", or the one element alone unless BRACES. */
static void put_elems(FILE *f, const struct conf_elem *v, unsigned n,
		      bool marks, bool braces)
{
	if (n == 1 && !braces) {
		put_elem(f, &v[0], marks);
		return;
	}
	fputs("{ ", f);
	for (unsigned i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		put_elem(f, &v[i], marks);
	}
	fputs(n ? " }" : "}", f);
}

/* ---- options ---- */

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static const char *level_name(int level)
{
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (log_level_parse(names[i]) == level)
			return names[i];
	return "info";
}

static void put_queues(FILE *f, const struct conf_options *o)
{
	fputs("\tqueues ", f);
	if (o->queues_mode == QUEUES_AUTO) {
		fputs("auto;\n", f);
		return;
	}
	if (o->queues_mode == QUEUES_COUNT) {
		fprintf(f, "%u;\n", o->queues_count);
		return;
	}
	fputs("{ ", f);
	for (unsigned i = 0; i < o->n_queue_list; i++) {
		const struct conf_range *r = &o->queue_list[i];

		fprintf(f, i ? ", %u" : "%u", r->lo);
		if (r->hi != r->lo)
			fprintf(f, "-%u", r->hi);
	}
	fputs(" };\n", f);
}

static void put_str_opt(FILE *f, const char *name, const char *v)
{
	if (v)
		fprintf(f, "\t%s \"%s\";\n", name, v);
}

/* The file nfqd would use (by default beside the control socket). */
static int put_state_file(FILE *f, const struct conf_options *o)
{
	char *path;

	if (o->set_state_none) {
		fputs("\tset-state-file none;\n", f);
		return 0;
	}
	path = setstate_path(o);
	if (!path)
		return -ENOMEM;
	put_str_opt(f, "set-state-file", path);
	free(path);
	return 0;
}

static int put_options(FILE *f, const struct conf_options *o)
{
	fputs("options {\n", f);
	put_queues(f, o);
	fprintf(f, "\tqueue-base %u;\n", o->queue_base);
	fprintf(f, "\tqueue-maxlen %u;\n", o->queue_maxlen);
	fprintf(f, "\tcopy-range %u;\n", o->copy_range);
	fprintf(f, "\tfail-open %s;\n", yes_no(o->fail_open));
	fprintf(f, "\tgso %s;\n", yes_no(o->gso));
	fprintf(f, "\tbatch %u;\n", o->batch);
	fprintf(f, "\trcvbuf %llu;\n", (unsigned long long)o->rcvbuf);
	fprintf(f, "\tcpu-pin %s;\n", yes_no(o->cpu_pin));
	put_str_opt(f, "stats-file", o->stats_file);
	fprintf(f, "\tstats-interval %u;\n", o->stats_interval);
	put_str_opt(f, "control-socket", o->control_socket);
	fprintf(f, "\tlog-level %s;\n", level_name(o->log_level));
	put_str_opt(f, "user", o->user);
	put_str_opt(f, "control-group", o->control_group);
	if (put_state_file(f, o) < 0)
		return -ENOMEM;
	fprintf(f, "\tbypass-mark 0x%x;\n", o->bypass_mark);
	fprintf(f, "\tincomplete-verdict %s;\n",
		conf_verdict_name(o->incomplete_verdict));
	fprintf(f, "\torphan-verdict %s;\n",
		conf_verdict_name(o->orphan_verdict));
	fprintf(f, "\tflow-table-size %u;\n", o->flow_table_size);
	fprintf(f, "\tflow-timeout %u;\n", o->flow_timeout);
	fputs("\tdns-ports {", f);
	for (unsigned i = 0; i < o->n_dns_ports; i++)
		fprintf(f, "%s %u", i ? "," : "", o->dns_ports[i]);
	fputs(" };\n", f);
	fputs("}\n", f);
	return 0;
}

/* ---- sets ---- */

/* A set with more elements is dumped one element per line, so that two
 * dumps diff element by element. */
#define SET_DUMP_INLINE_MAX	8

static void put_elem_lines(FILE *f, const struct conf_elem *v, unsigned n,
			   bool marks)
{
	fputs("{\n", f);
	for (unsigned i = 0; i < n; i++) {
		fputs("\t\t", f);
		put_elem(f, &v[i], marks);
		fputs(i + 1 < n ? ",\n" : "\n", f);
	}
	fputs("\t}", f);
}

/* A set's flags, size and timeout, each followed by END ("; " or
 * ";\n\t"). */
static void put_set_props(FILE *f, const struct conf_set *s, const char *end)
{
	if (s->interval || s->timeout)
		fprintf(f, "flags %s%s%s%s", s->interval ? "interval" : "",
			s->interval && s->timeout ? ", " : "",
			s->timeout ? "timeout" : "", end);
	if (s->size)
		fprintf(f, "size %u%s", s->size, end);
	if (s->timeout_ms) {
		char dur[32];

		conf_format_duration(s->timeout_ms, dur, sizeof(dur));
		fprintf(f, "timeout %s%s", dur, end);
	}
}

static int put_set(FILE *f, const struct conf *c, const struct conf_set *s,
		   struct diags *d)
{
	struct elist l = { 0 };
	int err = 0;

	for (unsigned i = 0; i < s->n_elems; i++)
		elist_add(&l, &s->elems[i]);
	if (s->file && !l.nomem)
		err = conf_set_file_read(c, s, elist_add, &l, d);
	if (!err && l.nomem)
		err = -ENOMEM;
	if (!err) {
		bool lines;

		l.n = canon(l.v, l.n);
		lines = l.n > SET_DUMP_INLINE_MAX;
		fprintf(f, "set %s {%stype %s;%s", s->name, lines ? "\n\t" : " ",
			conf_set_type_name(s->type), lines ? "\n\t" : " ");
		put_set_props(f, s, lines ? ";\n\t" : "; ");
		fputs("elements = ", f);
		if (lines)
			put_elem_lines(f, l.v, l.n, s->type == SET_MARK);
		else
			put_elems(f, l.v, l.n, s->type == SET_MARK, true);
		fputs(lines ? ";\n}\n" : "; }\n", f);
	}
	elist_free(&l);
	return err;
}

/* ---- rules ---- */

static const char *const field_names[] = {
	[MATCH_IP_SADDR] = "ip saddr",
	[MATCH_IP_DADDR] = "ip daddr",
	[MATCH_IP6_SADDR] = "ip6 saddr",
	[MATCH_IP6_DADDR] = "ip6 daddr",
	[MATCH_IP_PROTOCOL] = "ip protocol",
	[MATCH_META_L4PROTO] = "meta l4proto",
	[MATCH_TCP_SPORT] = "tcp sport",
	[MATCH_TCP_DPORT] = "tcp dport",
	[MATCH_UDP_SPORT] = "udp sport",
	[MATCH_UDP_DPORT] = "udp dport",
	[MATCH_TCP_FLAGS] = "tcp flags",
	[MATCH_ICMP_TYPE] = "icmp type",
	[MATCH_ICMPV6_TYPE] = "icmpv6 type",
	[MATCH_IIFNAME] = "iifname",
	[MATCH_OIFNAME] = "oifname",
	[MATCH_META_MARK] = "meta mark",
	[MATCH_META_LENGTH] = "meta length",
	[MATCH_META_SKUID] = "meta skuid",
	[MATCH_META_SKGID] = "meta skgid",
	[MATCH_CT_STATE] = "ct state",
	[MATCH_LIMIT] = "limit",
	[MATCH_DNS_QNAME] = "dns qname",
	[MATCH_DNS_QTYPE] = "dns qtype",
	[MATCH_TLS_SNI] = "tls sni",
	[MATCH_TLS_ECH] = "tls ech",
	[MATCH_HTTP_HOST] = "http host",
};

struct flag_name {
	const char *name;
	uint32_t bit;
};

static const struct flag_name tcp_flags[] = {
	{ "fin", TCPF_FIN }, { "syn", TCPF_SYN }, { "rst", TCPF_RST },
	{ "psh", TCPF_PSH }, { "ack", TCPF_ACK }, { "urg", TCPF_URG },
	{ NULL, 0 },
};

static const struct flag_name ct_states[] = {
	{ "invalid", CT_STATE_INVALID }, { "established",
	  CT_STATE_ESTABLISHED }, { "related", CT_STATE_RELATED },
	{ "new", CT_STATE_NEW }, { NULL, 0 },
};

static void put_flags(FILE *f, const struct flag_name *names, uint32_t bits)
{
	bool first = true;

	for (const struct flag_name *n = names; n->name; n++) {
		if (!(bits & n->bit))
			continue;
		fprintf(f, "%s%s", first ? "" : ",", n->name);
		first = false;
	}
}

static const char *limit_unit(uint32_t seconds)
{
	switch (seconds) {
	case 60:
		return "minute";
	case 3600:
		return "hour";
	case 86400:
		return "day";
	case 604800:
		return "week";
	default:
		return "second";
	}
}

static int put_match(FILE *f, const struct conf_match *m)
{
	struct elist l = { 0 };

	if (m->field == MATCH_LIMIT) {
		fprintf(f, "limit rate %s%u/%s", m->negate ? "over " : "",
			m->rate, limit_unit(m->per_seconds));
		if (m->per)
			fprintf(f, " per %s", field_names[m->per_key]);
		if (m->burst)
			fprintf(f, " burst %u", m->burst);
		return 0;
	}
	if (m->field == MATCH_TLS_ECH) {
		fputs("tls ech", f);
		return 0;
	}
	fprintf(f, "%s %s", field_names[m->field], m->negate ? "!= " : "");
	if (m->field == MATCH_TCP_FLAGS) {
		put_flags(f, tcp_flags, m->flags);
		return 0;
	}
	if (m->field == MATCH_CT_STATE) {
		put_flags(f, ct_states, m->flags);
		return 0;
	}
	if (m->set_name) {
		fprintf(f, "@%s", m->set_name);
		return 0;
	}
	for (unsigned i = 0; i < m->n_elems; i++)
		elist_add(&l, &m->elems[i]);
	if (l.nomem) {
		elist_free(&l);
		return -ENOMEM;
	}
	l.n = canon(l.v, l.n);
	put_elems(f, l.v, l.n, m->field == MATCH_META_MARK, false);
	if (m->field == MATCH_META_MARK && m->mask != 0xffffffff)
		fprintf(f, "/0x%x", m->mask);
	elist_free(&l);
	return 0;
}

static int put_rule(FILE *f, const struct conf_rule *r)
{
	fputc('\t', f);
	for (unsigned i = 0; i < r->n_matches; i++) {
		if (put_match(f, &r->matches[i]))
			return -ENOMEM;
		fputc(' ', f);
	}
	if (r->add_set) {
		char dur[32];

		fprintf(f, "%s @%s { %s ", r->add_update ? "update" : "add",
			r->add_set, field_names[r->add_key]);
		if (r->add_timeout_ms) {
			conf_format_duration(r->add_timeout_ms, dur,
					     sizeof(dur));
			fprintf(f, "timeout %s ", dur);
		}
		fputs("} ", f);
	}
	if (r->counter)
		fputs("counter ", f);
	if (r->log && r->log_prefix)
		fprintf(f, "log prefix \"%s\" ", r->log_prefix);
	else if (r->log)
		fputs("log ", f);
	if (r->mark_set)
		fprintf(f, "mark set 0x%x ", r->mark);
	if (r->bypass)
		fputs("bypass ", f);
	if (r->verdict == VERDICT_QUEUE)
		fprintf(f, "queue num %u;\n", r->queue_num);
	else
		fprintf(f, "%s;\n", conf_verdict_name(r->verdict));
	return 0;
}

static int put_hook(FILE *f, enum conf_hook_id id, const struct conf_hook *h)
{
	fprintf(f, "hook %s {\n\tpolicy %s;\n", conf_hook_name(id),
		conf_verdict_name(h->policy));
	for (unsigned i = 0; i < h->n_rules; i++)
		if (put_rule(f, &h->rules[i]))
			return -ENOMEM;
	fputs("}\n", f);
	return 0;
}

int conf_dump(FILE *f, const struct conf *c, struct diags *d)
{
	int err = put_options(f, &c->opts);

	for (unsigned i = 0; i < c->n_sets && !err; i++)
		err = put_set(f, c, &c->sets[i], d);
	for (int h = 0; h < HOOK_MAX && !err; h++)
		if (c->hooks[h].present)
			err = put_hook(f, (enum conf_hook_id)h, &c->hooks[h]);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	return err;
}
