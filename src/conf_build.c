/* SPDX-License-Identifier: GPL-2.0-or-later */
/* conf_build.c - grammar actions for options, sets and hooks blocks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_parse.h"
#include "log.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- options ---- */

enum opt_id {
	O_QUEUES, O_QUEUE_BASE, O_QUEUE_MAXLEN, O_COPY_RANGE, O_FAIL_OPEN,
	O_GSO, O_BATCH, O_RCVBUF, O_CPU_PIN, O_STATS_FILE, O_STATS_INTERVAL,
	O_CONTROL_SOCKET, O_LOG_LEVEL, O_USER, O_CONTROL_GROUP, O_BYPASS_MARK,
	O_INCOMPLETE_VERDICT, O_ORPHAN_VERDICT, O_FLOW_TABLE_SIZE,
	O_FLOW_TIMEOUT, O_SET_STATE_FILE, O_DNS_PORTS,
};

enum opt_type { OT_QUEUES, OT_NUM, OT_BOOL, OT_STR, OT_LEVEL, OT_VERDICT,
		OT_PORTS };

struct opt_def {
	const char *name;
	enum opt_type type;
	uint64_t min, max;
	const char *range;
	bool size;
};

static const struct opt_def opt_defs[] = {
	[O_QUEUES] = { "queues", OT_QUEUES, 0, 0, NULL, false },
	[O_QUEUE_BASE] = { "queue-base", OT_NUM, 0, 65535, "0..65535", false },
	[O_QUEUE_MAXLEN] = { "queue-maxlen", OT_NUM, 1, 1048576,
			     "1..1048576", true },
	[O_COPY_RANGE] = { "copy-range", OT_NUM, 0, 65531, "0..65531", true },
	[O_FAIL_OPEN] = { "fail-open", OT_BOOL, 0, 0, NULL, false },
	[O_GSO] = { "gso", OT_BOOL, 0, 0, NULL, false },
	[O_BATCH] = { "batch", OT_NUM, 1, 1024, "1..1024", false },
	[O_RCVBUF] = { "rcvbuf", OT_NUM, 4096, 1ull << 30, "4096..1G", true },
	[O_CPU_PIN] = { "cpu-pin", OT_BOOL, 0, 0, NULL, false },
	[O_STATS_FILE] = { "stats-file", OT_STR, 0, 0, NULL, false },
	[O_STATS_INTERVAL] = { "stats-interval", OT_NUM, 1, 3600, "1..3600",
			       false },
	[O_CONTROL_SOCKET] = { "control-socket", OT_STR, 0, 0, NULL, false },
	[O_LOG_LEVEL] = { "log-level", OT_LEVEL, 0, 0, NULL, false },
	[O_USER] = { "user", OT_STR, 0, 0, NULL, false },
	[O_CONTROL_GROUP] = { "control-group", OT_STR, 0, 0, NULL, false },
	[O_BYPASS_MARK] = { "bypass-mark", OT_NUM, 0, 0xffffffff,
			    "0..0xffffffff", false },
	[O_INCOMPLETE_VERDICT] = { "incomplete-verdict", OT_VERDICT, 0, 0,
				   NULL, false },
	[O_ORPHAN_VERDICT] = { "orphan-verdict", OT_VERDICT, 0, 0, NULL,
			       false },
	[O_FLOW_TABLE_SIZE] = { "flow-table-size", OT_NUM, 64, 16u << 20,
				"64..16M", true },
	[O_FLOW_TIMEOUT] = { "flow-timeout", OT_NUM, 1, 86400, "1..86400",
			     false },
	[O_SET_STATE_FILE] = { "set-state-file", OT_STR, 0, 0, NULL, false },
	[O_DNS_PORTS] = { "dns-ports", OT_PORTS, 1, 65535, "1..65535", false },
};

static const struct atom *single(const struct pval *v)
{
	if (v->setref || v->list || v->n != 1 || v->elems[0].kind != PE_ONE)
		return NULL;
	return &v->elems[0].a;
}

static int opt_num(struct pstate *st, const struct opt_def *d,
		   const struct pval *v, uint64_t *out)
{
	const struct atom *a = single(v);

	if (!a || a->kind != ATOM_NUM) {
		conf_error(st, &v->loc, "\"%s\" expects a number %s%s", d->name,
			   d->range, d->size ? " (K, M, G allowed)" : "");
		return -1;
	}
	if (a->sized && !d->size) {
		conf_error(st, &a->loc, "\"%s\" takes no K/M/G suffix",
			   d->name);
		return -1;
	}
	if (a->num < d->min || a->num > d->max) {
		conf_error(st, &a->loc, "%s %s out of range; expected %s",
			   d->name, a->text, d->range);
		return -1;
	}
	*out = a->num;
	return 0;
}

static int opt_bool(struct pstate *st, const struct opt_def *d,
		    const struct pval *v, bool *out)
{
	const struct atom *a = single(v);

	if (a && a->kind == ATOM_WORD) {
		if (!strcmp(a->text, "yes") || !strcmp(a->text, "on")) {
			*out = true;
			return 0;
		}
		if (!strcmp(a->text, "no") || !strcmp(a->text, "off")) {
			*out = false;
			return 0;
		}
	}
	conf_error(st, &v->loc, "\"%s\" expects yes, no, on or off", d->name);
	return -1;
}

static void opt_str(struct pstate *st, const struct opt_def *d,
		    const struct pval *v, char **out)
{
	const struct atom *a = single(v);
	char *s;

	if (!a || a->kind != ATOM_STR || !a->text[0]) {
		conf_error(st, &v->loc, "\"%s\" expects a non-empty string in "
			   "double quotes", d->name);
		return;
	}
	s = strdup(a->text);
	if (!s) {
		st->nomem = true;
		return;
	}
	free(*out);
	*out = s;
}

/* "PATH" or the word none. */
static void opt_state_file(struct pstate *st, const struct opt_def *d,
			   const struct pval *v, struct conf_options *o)
{
	const struct atom *a = single(v);

	if (a && a->kind == ATOM_WORD && strcmp(a->text, "none") == 0) {
		free(o->set_state_file);
		o->set_state_file = NULL;
		o->set_state_none = true;
		return;
	}
	if (!a || a->kind != ATOM_STR || !a->text[0]) {
		conf_error(st, &v->loc, "\"%s\" expects a path in double "
			   "quotes or none", d->name);
		return;
	}
	o->set_state_none = false;
	opt_str(st, d, v, &o->set_state_file);
}

static void opt_level(struct pstate *st, const struct pval *v, int *out)
{
	const struct atom *a = single(v);
	int l = a && a->kind == ATOM_WORD ? log_level_parse(a->text) : -1;

	if (l < 0) {
		conf_error(st, &v->loc, "\"log-level\" expects one of: error, "
			   "warning, info, debug");
		return;
	}
	*out = l;
}

/* "incomplete-verdict accept|drop", "orphan-verdict repeat|accept|drop". */
static void opt_verdict(struct pstate *st, const struct opt_def *d,
			const struct pval *v, bool repeat_ok,
			enum verdict_kind *out)
{
	const struct atom *a = single(v);

	if (a && a->kind == ATOM_WORD) {
		if (!strcmp(a->text, "accept")) {
			*out = VERDICT_ACCEPT;
			return;
		}
		if (!strcmp(a->text, "drop")) {
			*out = VERDICT_DROP;
			return;
		}
		if (repeat_ok && !strcmp(a->text, "repeat")) {
			*out = VERDICT_REPEAT;
			return;
		}
	}
	conf_error(st, &v->loc, "\"%s\" expects %s", d->name,
		   repeat_ok ? "repeat, accept or drop" : "accept or drop");
}

/* One queue number or range of the explicit list form. */
static int queue_elem(struct pstate *st, const struct pelem *e,
		      struct conf_range *r)
{
	const struct atom *b = e->kind == PE_RANGE ? &e->b : &e->a;

	if (e->kind == PE_SLASH || e->a.kind != ATOM_NUM || e->a.sized ||
	    b->kind != ATOM_NUM || b->sized) {
		conf_error(st, &e->loc, "\"queues\" expects auto, a count N, "
			   "a range A-B or a list { 0, 2, 5-7 }");
		return -1;
	}
	if (e->a.num > 65535 || b->num > 65535) {
		conf_error(st, &e->loc, "queue %s out of range; expected "
			   "0..65535", e->a.num > 65535 ? e->a.text : b->text);
		return -1;
	}
	if (e->a.num > b->num) {
		conf_error(st, &e->loc, "bad range %s-%s: %s is above %s",
			   e->a.text, b->text, e->a.text, b->text);
		return -1;
	}
	r->lo = (uint32_t)e->a.num;
	r->hi = (uint32_t)b->num;
	return 0;
}

static void opt_queue_list(struct pstate *st, struct conf_options *o,
			   const struct pval *v)
{
	struct conf_options tmp = *o;
	struct conf_range *r;
	uint16_t *q;
	int n;

	if (v->n == 0) {
		conf_error(st, &v->loc, "\"queues\" list is empty");
		return;
	}
	r = calloc(v->n, sizeof(*r));
	if (!r) {
		st->nomem = true;
		return;
	}
	for (unsigned i = 0; i < v->n; i++) {
		if (queue_elem(st, &v->elems[i], &r[i])) {
			free(r);
			return;
		}
	}
	tmp.queues_mode = QUEUES_LIST;
	tmp.queue_list = r;
	tmp.n_queue_list = v->n;
	n = conf_queue_numbers(&tmp, &q);
	if (n == -ENOMEM) {
		st->nomem = true;
		free(r);
		return;
	}
	if (n < 0) {
		conf_error(st, &v->loc, "too many queues; at most %d",
			   NFQD_MAX_QUEUES);
		free(r);
		return;
	}
	free(q);
	free(o->queue_list);
	o->queues_mode = QUEUES_LIST;
	o->queue_list = r;
	o->n_queue_list = v->n;
}

static void opt_queues(struct pstate *st, struct conf_options *o,
		       const struct pval *v)
{
	const struct atom *a = single(v);

	st->queues_loc = v->loc;
	if (a && a->kind == ATOM_WORD && strcmp(a->text, "auto") == 0) {
		o->queues_mode = QUEUES_AUTO;
		return;
	}
	if (a && a->kind == ATOM_NUM && !a->sized) {
		if (a->num < 1 || a->num > NFQD_MAX_QUEUES) {
			conf_error(st, &a->loc, "queues %s out of range; "
				   "expected a count 1..%d", a->text,
				   NFQD_MAX_QUEUES);
			return;
		}
		o->queues_mode = QUEUES_COUNT;
		o->queues_count = (unsigned)a->num;
		return;
	}
	if (v->setref) {
		conf_error(st, &v->loc, "\"queues\" expects auto, a count N, "
			   "a range A-B or a list { 0, 2, 5-7 }");
		return;
	}
	opt_queue_list(st, o, v);
}

/* dns-ports: a port or a list of ports, at most CONF_DNS_PORTS_MAX. */
static void opt_dns_ports(struct pstate *st, struct conf_options *o,
			  const struct pval *v)
{
	uint16_t ports[CONF_DNS_PORTS_MAX];
	unsigned i;

	if (v->setref || v->n == 0 || v->n > CONF_DNS_PORTS_MAX) {
		conf_error(st, &v->loc, "\"dns-ports\" expects a port or a list "
			   "of 1..%d ports, e.g. dns-ports { 53, 5353 };",
			   CONF_DNS_PORTS_MAX);
		return;
	}
	for (i = 0; i < v->n; i++) {
		const struct pelem *e = &v->elems[i];

		if (e->kind != PE_ONE || e->a.kind != ATOM_NUM || e->a.sized) {
			conf_error(st, &e->loc, "\"dns-ports\" takes port "
				   "numbers, not ranges or names: write each "
				   "port, e.g. dns-ports { 53, 5353 };");
			return;
		}
		if (e->a.num < 1 || e->a.num > 65535) {
			conf_error(st, &e->loc, "dns-ports %s out of range; "
				   "expected 1..65535", e->a.text);
			return;
		}
		ports[i] = (uint16_t)e->a.num;
	}
	memcpy(o->dns_ports, ports, v->n * sizeof(ports[0]));
	o->n_dns_ports = v->n;
}

static void opt_store(struct pstate *st, enum opt_id id, const struct pval *v)
{
	const struct opt_def *d = &opt_defs[id];
	struct conf_options *o = &st->conf->opts;
	uint64_t n;

	switch (id) {
	case O_QUEUES:
		opt_queues(st, o, v);
		return;
	case O_DNS_PORTS:
		opt_dns_ports(st, o, v);
		return;
	case O_FAIL_OPEN:
		opt_bool(st, d, v, &o->fail_open);
		return;
	case O_GSO:
		opt_bool(st, d, v, &o->gso);
		return;
	case O_CPU_PIN:
		opt_bool(st, d, v, &o->cpu_pin);
		return;
	case O_STATS_FILE:
		opt_str(st, d, v, &o->stats_file);
		return;
	case O_CONTROL_SOCKET:
		opt_str(st, d, v, &o->control_socket);
		o->control_socket_loc = (struct conf_loc){ st->file,
							   v->loc.line,
							   v->loc.col };
		return;
	case O_USER:
		opt_str(st, d, v, &o->user);
		o->user_loc = (struct conf_loc){ st->file, v->loc.line,
						 v->loc.col };
		return;
	case O_SET_STATE_FILE:
		opt_state_file(st, d, v, o);
		return;
	case O_CONTROL_GROUP:
		opt_str(st, d, v, &o->control_group);
		o->control_group_loc = (struct conf_loc){ st->file,
							  v->loc.line,
							  v->loc.col };
		return;
	case O_LOG_LEVEL:
		opt_level(st, v, &o->log_level);
		return;
	case O_INCOMPLETE_VERDICT:
		opt_verdict(st, d, v, false, &o->incomplete_verdict);
		return;
	case O_ORPHAN_VERDICT:
		opt_verdict(st, d, v, true, &o->orphan_verdict);
		return;
	default:
		break;
	}
	if (opt_num(st, d, v, &n))
		return;
	if (id == O_QUEUE_BASE) {
		o->queue_base = (uint16_t)n;
		st->queue_base_loc = v->loc;
	} else if (id == O_QUEUE_MAXLEN)
		o->queue_maxlen = (uint32_t)n;
	else if (id == O_COPY_RANGE)
		o->copy_range = (uint32_t)n;
	else if (id == O_BATCH)
		o->batch = (uint32_t)n;
	else if (id == O_RCVBUF)
		o->rcvbuf = n;
	else if (id == O_STATS_INTERVAL)
		o->stats_interval = (uint32_t)n;
	else if (id == O_FLOW_TABLE_SIZE)
		o->flow_table_size = (uint32_t)n;
	else if (id == O_FLOW_TIMEOUT)
		o->flow_timeout = (uint32_t)n;
	else
		o->bypass_mark = (uint32_t)n;
}

/* The option called NAME, marked as seen; -1 (reported) if unknown or
 * given twice. */
static int opt_find(struct pstate *st, const struct atom *name)
{
	char all[512];
	size_t o = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(opt_defs); i++) {
		if (strcmp(name->text, opt_defs[i].name))
			continue;
		if (st->opt_seen & (1u << i)) {
			conf_error(st, &name->loc, "duplicate option \"%s\"",
				   name->text);
			return -1;
		}
		st->opt_seen |= 1u << i;
		return (int)i;
	}
	for (unsigned i = 0; i < ARRAY_SIZE(opt_defs); i++)
		o += (size_t)snprintf(all + o, sizeof(all) - o, "%s%s",
				      i ? ", " : "", opt_defs[i].name);
	conf_error(st, &name->loc, "unknown option \"%s\"; expected one of: %s",
		   name->text, all);
	return -1;
}

void conf_pst_option(struct pstate *st, const struct atom *name,
		     const struct pval *v)
{
	int i = opt_find(st, name);

	if (i >= 0)
		opt_store(st, (enum opt_id)i, v);
}

void conf_pst_option_verdict(struct pstate *st, const struct atom *name,
			     const struct item *verdict)
{
	struct atom word = { .kind = ATOM_WORD, .loc = verdict->loc };
	struct pelem e = { .kind = PE_ONE, .loc = verdict->loc };
	struct pval v = { .elems = &e, .n = 1, .loc = verdict->loc };
	int i = opt_find(st, name);

	if (i < 0 || verdict->bad)
		return;
	/* As a plain word, so every option reports a wrong value alike. */
	word.text = verdict->text;
	e.a = word;
	opt_store(st, (enum opt_id)i, &v);
}

/* ---- sets ---- */

void conf_pst_set_begin(struct pstate *st, const struct atom *name)
{
	struct pset *ps = calloc(1, sizeof(*ps));

	if (!ps || !(ps->set.name = strdup(name->text))) {
		free(ps);
		st->nomem = true;
		return;
	}
	ps->set.loc = name->loc;
	st->cur_set = ps;
}

static void set_flags(struct pstate *st, struct pset *ps, const struct pval *v)
{
	for (unsigned i = 0; i < v->n; i++) {
		const struct pelem *e = &v->elems[i];

		if (e->kind == PE_ONE && e->a.kind == ATOM_WORD &&
		    strcmp(e->a.text, "interval") == 0) {
			ps->set.interval = true;
			ps->interval_loc = e->loc;
			continue;
		}
		if (e->kind == PE_ONE && e->a.kind == ATOM_WORD &&
		    strcmp(e->a.text, "timeout") == 0) {
			ps->set.timeout = true;
			ps->timeout_flag_loc = e->loc;
			continue;
		}
		conf_error(st, &e->loc, "unknown set flag \"%s\"; expected "
			   "interval or timeout", e->a.text);
	}
	if (v->setref || v->n == 0)
		conf_error(st, &v->loc, "\"flags\" expects interval or "
			   "timeout");
}

static void set_type(struct pstate *st, struct pset *ps, const struct pval *v)
{
	const struct atom *a = single(v);
	int t = a && a->kind == ATOM_WORD ? conf_set_type_parse(a->text) : -1;

	if (t < 0) {
		conf_error(st, &v->loc, "unknown set type \"%s\"; expected one "
			   "of: ipv4_addr, ipv6_addr, inet_service, ifname, "
			   "mark, domain", a ? a->text : "");
		ps->bad_type = true;
		return;
	}
	ps->set.type = (enum set_type)t;
	ps->have_type = true;
}

static void set_size(struct pstate *st, struct pset *ps, const struct pval *v)
{
	const struct atom *a = single(v);

	if (!a || a->kind != ATOM_NUM || a->num == 0 ||
	    a->num > NFQD_MAX_SET_SIZE) {
		conf_error(st, &v->loc, "\"size\" expects a number of "
			   "elements from 1 to %u", NFQD_MAX_SET_SIZE);
		return;
	}
	ps->set.size = (uint32_t)a->num;
}

static void set_timeout(struct pstate *st, struct pset *ps,
			const struct pval *v)
{
	const struct atom *a = single(v);

	if (!a || (a->kind != ATOM_WORD && a->kind != ATOM_NUM) ||
	    conf_parse_duration(a->text, &ps->set.timeout_ms)) {
		conf_error(st, &v->loc, "\"timeout\" expects a duration: "
			   CONF_DURATION_FORMS);
		return;
	}
}

static void set_file(struct pstate *st, struct pset *ps, const struct pval *v)
{
	const struct atom *a = single(v);

	if (!a || a->kind != ATOM_STR || !a->text[0]) {
		conf_error(st, &v->loc, "\"file\" expects a path in double "
			   "quotes");
		return;
	}
	ps->set.file = strdup(a->text);
	if (!ps->set.file)
		st->nomem = true;
}

void conf_pst_set_prop(struct pstate *st, const struct atom *name, bool eq,
		       struct pval **v)
{
	static const char *const props[] = { "type", "flags", "elements",
					     "file", "size", "timeout" };
	struct pset *ps = st->cur_set;
	unsigned i;

	if (!ps)
		return;
	for (i = 0; i < ARRAY_SIZE(props); i++)
		if (strcmp(name->text, props[i]) == 0)
			break;
	if (i == ARRAY_SIZE(props)) {
		conf_error(st, &name->loc, "unknown set property \"%s\"; "
			   "expected one of: type, flags, elements, file, "
			   "size, timeout",
			   name->text);
		return;
	}
	if ((i == 2) != eq) {
		conf_error(st, &name->loc, eq ? "unexpected '=' after \"%s\"" :
			   "expected '=' after \"%s\"", name->text);
		return;
	}
	if ((i == 0 && ps->have_type) || (i == 1 && ps->have_flags) ||
	    (i == 2 && ps->have_elems) || (i == 3 && ps->set.file) ||
	    (i == 4 && ps->set.size) || (i == 5 && ps->set.timeout_ms)) {
		conf_error(st, &name->loc, "duplicate \"%s\" in set \"%s\"",
			   name->text, ps->set.name);
		return;
	}
	if (i == 0) {
		set_type(st, ps, *v);
	} else if (i == 1) {
		ps->have_flags = true;
		set_flags(st, ps, *v);
	} else if (i == 2) {
		ps->have_elems = true;
		ps->elems = *v;
		*v = NULL;
	} else if (i == 3) {
		set_file(st, ps, *v);
	} else if (i == 4) {
		ps->size_loc = name->loc;
		set_size(st, ps, *v);
	} else {
		ps->timeout_loc = name->loc;
		set_timeout(st, ps, *v);
	}
}

static void set_elems(struct pstate *st, struct pset *ps)
{
	struct conf_set *s = &ps->set;
	const struct pval *v = ps->elems;
	char msg[512];

	if (v->setref) {
		conf_error(st, &v->loc, "set elements cannot be a set "
			   "reference");
		return;
	}
	s->elems = calloc(v->n ? v->n : 1, sizeof(*s->elems));
	if (!s->elems) {
		st->nomem = true;
		return;
	}
	for (unsigned i = 0; i < v->n; i++) {
		const struct pelem *e = &v->elems[i];

		if (e->kind != PE_ONE && !s->interval) {
			conf_error(st, &e->loc, "%s %s%c%s needs \"flags "
				   "interval\" in set \"%s\"",
				   e->kind == PE_SLASH ? "prefix" : "range",
				   e->a.text, e->kind == PE_SLASH ? '/' : '-',
				   e->b.text, s->name);
			continue;
		}
		if (conf_conv_elem(e, conf_set_shape(s->type),
				   &s->elems[s->n_elems], msg, sizeof(msg))) {
			conf_error(st, &e->loc, "%s", msg);
			continue;
		}
		s->n_elems++;
	}
}

static void set_clear(struct conf_set *s)
{
	free(s->name);
	conf_elems_free(s->elems, s->n_elems);
	free(s->file);
}

/* Drop a set we cannot use, but remember its name for conf_pst_finish(). */
static void set_bad(struct pstate *st, struct pset *ps)
{
	char **n = realloc(st->bad_sets, (st->n_bad_sets + 1) * sizeof(*n));

	if (n) {
		st->bad_sets = n;
		n[st->n_bad_sets++] = ps->set.name;
		ps->set.name = NULL;
	} else {
		st->nomem = true;
	}
	set_clear(&ps->set);
	free(ps);
}

/* A property the set's type makes meaningless, written at LOC. */
static void set_useless(struct pstate *st, const struct pset *ps,
			const struct conf_loc *loc, const char *prop)
{
	const char *type = conf_set_type_name(ps->set.type);

	if (!loc->line)
		return;
	if (strcmp(prop, "flags interval") == 0)
		conf_error(st, loc, "set \"%s\" has type %s, whose elements "
			   "are never prefixes or ranges: \"%s\" does "
			   "nothing; remove it", ps->set.name, type, prop);
	else
		conf_error(st, loc, "set \"%s\" has type %s, which takes no "
			   "runtime elements: \"%s\" does nothing; remove it",
			   ps->set.name, type, prop);
}

/*
 * Names (ifname, domain) are neither prefixes nor ranges, so a domain
 * set's interval flag does nothing (an ifname set may have it: nft wants
 * it before wildcards); and no runtime elements can be added to an
 * ifname set (nfqd-ctl set add refuses them): its timeout flag, timeout
 * and size would do nothing. Each such property given is an error. True
 * for an ifname set (its timeout needs no more checks).
 */
static bool set_type_checks(struct pstate *st, const struct pset *ps)
{
	if (ps->set.type == SET_DOMAIN)
		set_useless(st, ps, &ps->interval_loc, "flags interval");
	if (ps->set.type != SET_IFNAME)
		return false;
	set_useless(st, ps, &ps->timeout_flag_loc, "flags timeout");
	set_useless(st, ps, &ps->size_loc, "size");
	set_useless(st, ps, &ps->timeout_loc, "timeout");
	return true;
}

void conf_pst_set_end(struct pstate *st)
{
	struct pset *ps = st->cur_set;
	struct conf *c = st->conf;
	struct conf_set *n;

	if (!ps)
		return;
	st->cur_set = NULL;
	if (!ps->have_type && !ps->bad_type)
		conf_error(st, &ps->set.loc, "set \"%s\" has no type; add "
			   "\"type ipv4_addr;\" (or ipv6_addr, inet_service, "
			   "ifname, mark, domain)", ps->set.name);
	if (!ps->have_type) {
		conf_pval_free(ps->elems);
		set_bad(st, ps);
		return;
	}
	if (!set_type_checks(st, ps) && ps->set.timeout_ms &&
	    !ps->set.timeout)
		conf_error(st, &ps->set.loc, "set \"%s\" has a timeout but "
			   "not \"flags timeout;\"; add it", ps->set.name);
	if (ps->elems)
		set_elems(st, ps);
	conf_pval_free(ps->elems);
	for (unsigned i = 0; i < c->n_sets; i++) {
		if (strcmp(c->sets[i].name, ps->set.name))
			continue;
		conf_error(st, &ps->set.loc, "duplicate set \"%s\" (first "
			   "defined at %u:%u)", ps->set.name,
			   c->sets[i].loc.line, c->sets[i].loc.col);
		goto drop;
	}
	n = realloc(c->sets, (c->n_sets + 1) * sizeof(*n));
	if (!n) {
		st->nomem = true;
		goto drop;
	}
	c->sets = n;
	c->sets[c->n_sets++] = ps->set;
	free(ps);
	return;
drop:
	set_clear(&ps->set);
	free(ps);
}

/* Free what a parse that stopped inside a block left behind. */
void conf_pst_cleanup(struct pstate *st)
{
	if (st->cur_set) {
		set_clear(&st->cur_set->set);
		conf_pval_free(st->cur_set->elems);
		free(st->cur_set);
		st->cur_set = NULL;
	}
	conf_rules_free(st->scratch.rules, st->scratch.n_rules);
	memset(&st->scratch, 0, sizeof(st->scratch));
	for (unsigned i = 0; i < st->n_bad_sets; i++)
		free(st->bad_sets[i]);
	free(st->bad_sets);
	st->bad_sets = NULL;
	st->n_bad_sets = 0;
}

/* ---- hooks and rules ---- */

void conf_pst_hook_begin(struct pstate *st, const struct atom *name)
{
	struct conf_hook *h;
	unsigned i;

	st->cur_hook = &st->scratch;
	st->policy_seen = false;
	for (i = 0; i < HOOK_MAX; i++)
		if (!strcmp(name->text, conf_hook_name((enum conf_hook_id)i)))
			break;
	if (i == HOOK_MAX) {
		conf_error(st, &name->loc, "unknown hook \"%s\"; expected one "
			   "of: prerouting, input, forward, output, "
			   "postrouting", name->text);
		return;
	}
	h = &st->conf->hooks[i];
	if (h->present) {
		conf_error(st, &name->loc, "duplicate hook \"%s\" (first at "
			   "%u:%u)", name->text, h->loc.line, h->loc.col);
		return;
	}
	h->present = true;
	h->loc = name->loc;
	st->cur_hook = h;
}

void conf_rule_clear(struct conf_rule *r)
{
	for (unsigned j = 0; j < r->n_matches; j++)
		conf_match_clear(&r->matches[j]);
	free(r->matches);
	free(r->log_prefix);
	free(r->add_set);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

void conf_rules_free(struct conf_rule *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		conf_rule_clear(&r[i]);
	free(r);
}

void conf_pst_hook_end(struct pstate *st)
{
	conf_rules_free(st->scratch.rules, st->scratch.n_rules);
	memset(&st->scratch, 0, sizeof(st->scratch));
	st->cur_hook = NULL;
}

void conf_pst_hook_policy(struct pstate *st, struct item *verdict,
			  const struct atom *word)
{
	const struct conf_loc *loc = word ? &word->loc : &verdict->loc;

	if (st->policy_seen) {
		conf_error(st, loc, "duplicate policy");
		return;
	}
	st->policy_seen = true;
	if (word) {
		conf_error(st, &word->loc, "bad policy \"%s\"; expected accept "
			   "or drop", word->text);
		return;
	}
	if (verdict->bad)
		return;
	if (verdict->verdict != VERDICT_ACCEPT &&
	    verdict->verdict != VERDICT_DROP) {
		conf_error(st, &verdict->loc, "bad policy \"%s\"; expected "
			   "accept or drop", verdict->text);
		return;
	}
	if (st->cur_hook)
		st->cur_hook->policy = verdict->verdict;
}
