/* SPDX-License-Identifier: GPL-2.0-or-later */
/* conf_val.c - raw parse values, rule items, error records and rule text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_parse.h"

/* ---- raw values ---- */

void conf_atom_clear(struct atom *a)
{
	free(a->text);
	a->text = NULL;
}

struct pelem *conf_pelem_new(enum pelem_kind kind, struct atom *a,
			     struct atom *b)
{
	struct pelem *e = calloc(1, sizeof(*e));

	if (!e) {
		conf_atom_clear(a);
		if (b)
			conf_atom_clear(b);
		return NULL;
	}
	e->kind = kind;
	e->a = *a;
	if (b)
		e->b = *b;
	e->loc = a->loc;
	return e;
}

void conf_pelem_free(struct pelem *e)
{
	if (!e)
		return;
	conf_atom_clear(&e->a);
	conf_atom_clear(&e->b);
	free(e);
}

struct pval *conf_pval_new(struct pelem *first, const struct conf_loc *loc)
{
	struct pval *v = calloc(1, sizeof(*v));

	if (!v) {
		conf_pelem_free(first);
		return NULL;
	}
	v->loc = *loc;
	if (first && conf_pval_add(v, first)) {
		free(v);
		return NULL;
	}
	return v;
}

/* Takes e (its contents move into the array) even on failure. */
int conf_pval_add(struct pval *v, struct pelem *e)
{
	size_t cap = conf_grow(v->n);
	struct pelem *n = cap ? realloc(v->elems, cap * sizeof(*n)) : v->elems;

	if (!n) {
		conf_pelem_free(e);
		return -ENOMEM;
	}
	v->elems = n;
	v->elems[v->n++] = *e;
	free(e);
	return 0;
}

void conf_pval_free(struct pval *v)
{
	if (!v)
		return;
	for (unsigned i = 0; i < v->n; i++) {
		conf_atom_clear(&v->elems[i].a);
		conf_atom_clear(&v->elems[i].b);
	}
	free(v->elems);
	free(v->setref);
	free(v);
}

void conf_elems_free(struct conf_elem *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(e[i].str);
	free(e);
}

void conf_match_clear(struct conf_match *m)
{
	free(m->set_name);
	free(m->text);
	conf_elems_free(m->elems, m->n_elems);
	memset(m, 0, sizeof(*m));
}

void conf_item_free(struct item *it)
{
	if (!it)
		return;
	free(it->text);
	free(it->prefix);
	free(it->add_set);
	conf_match_clear(&it->m);
	free(it);
}

struct items *conf_items_new(struct item *first)
{
	struct items *l = calloc(1, sizeof(*l));

	if (!l) {
		conf_item_free(first);
		return NULL;
	}
	if (conf_items_add(l, first)) {
		free(l);
		return NULL;
	}
	return l;
}

/* Takes it even on failure. */
int conf_items_add(struct items *l, struct item *it)
{
	if (l->n == l->cap) {
		unsigned cap = l->cap ? l->cap * 2 : 8;
		struct item *n = realloc(l->v, cap * sizeof(*n));

		if (!n) {
			conf_item_free(it);
			return -ENOMEM;
		}
		l->v = n;
		l->cap = cap;
	}
	l->v[l->n++] = *it;
	free(it);
	return 0;
}

static void items_clear(struct item *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		free(v[i].text);
		free(v[i].prefix);
		free(v[i].add_set);
		conf_match_clear(&v[i].m);
	}
}

void conf_items_free(struct items *l)
{
	if (!l)
		return;
	items_clear(l->v, l->n);
	free(l->v);
	free(l);
}

/* ---- errors and text ---- */

void conf_verror(struct pstate *st, const struct conf_loc *loc,
		 const char *fmt, va_list ap)
{
	struct conf_loc l = { st->file, loc->line, loc->col };

	st->n_errs++;
	if (diag_vadd(st->diags, DIAG_ERROR, &l, fmt, ap) == -ENOMEM)
		st->nomem = true;
}

void conf_error(struct pstate *st, const struct conf_loc *loc,
		const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_verror(st, loc, fmt, ap);
	va_end(ap);
}

/* A growing string; on ENOMEM it stays NULL and the caller reports it. */
void conf_sb_add(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->nomem)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->s, cap);

		if (!p) {
			b->nomem = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

char *conf_sb_done(struct sbuf *b, struct pstate *st)
{
	if (b->nomem || !b->s) {
		free(b->s);
		st->nomem = true;
		return NULL;
	}
	return b->s;
}

static void sb_atom(struct sbuf *b, const struct atom *a)
{
	if (a->kind == ATOM_STR)
		conf_sb_add(b, "\"");
	conf_sb_add(b, a->text);
	if (a->kind == ATOM_STR)
		conf_sb_add(b, "\"");
}

static void sb_elem(struct sbuf *b, const struct pelem *e)
{
	sb_atom(b, &e->a);
	if (e->kind == PE_ONE)
		return;
	conf_sb_add(b, e->kind == PE_RANGE ? "-" : "/");
	sb_atom(b, &e->b);
}

/* The value as nft would print it: "22", "{ 23, 2323 }", "@set". */
void conf_sb_pval(struct sbuf *b, const struct pval *v)
{
	if (v->setref) {
		conf_sb_add(b, "@");
		conf_sb_add(b, v->setref);
		return;
	}
	if (v->list)
		conf_sb_add(b, v->n ? "{ " : "{");
	for (unsigned i = 0; i < v->n; i++) {
		if (i)
			conf_sb_add(b, v->comma ? "," : ", ");
		sb_elem(b, &v->elems[i]);
	}
	if (v->list)
		conf_sb_add(b, " }");
}

struct item *conf_item_new(struct pstate *st, enum item_kind kind,
			     const struct conf_loc *loc, const char *text)
{
	struct item *it = calloc(1, sizeof(*it));

	if (!it || !(it->text = strdup(text))) {
		free(it);
		st->nomem = true;
		return NULL;
	}
	it->kind = kind;
	it->loc = *loc;
	snprintf(it->name, sizeof(it->name), "%s", text);
	return it;
}

/* ---- durations ---- */

static const struct {
	const char *unit;
	uint64_t ms;
} dur_units[] = {
	{ "d", 86400000ull }, { "h", 3600000ull }, { "m", 60000ull },
	{ "s", 1000ull }, { "ms", 1ull },
};

#define MAX_DURATION_MS	(366ull * 86400000ull)	/* a year and a day */

int conf_parse_duration(const char *text, uint64_t *ms)
{
	uint64_t v = 0;
	const char *p = text;

	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (uint64_t)(*p++ - '0');
		if (v > MAX_DURATION_MS)
			return -EINVAL;
	}
	if (p == text)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++) {
		if (strcmp(p, dur_units[i].unit) != 0)
			continue;
		if (v == 0 || v > MAX_DURATION_MS / dur_units[i].ms)
			return -EINVAL;
		*ms = v * dur_units[i].ms;
		return 0;
	}
	return -EINVAL;
}

void conf_format_duration(uint64_t ms, char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++) {
		if (ms % dur_units[i].ms == 0) {
			snprintf(buf, size, "%llu%s",
				 (unsigned long long)(ms / dur_units[i].ms),
				 dur_units[i].unit);
			return;
		}
	}
}
