/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_index.c - the rule classifier behind policy_judge().
 *
 * Why this shape: most rules carry at least one positive match on a value
 * (an address or prefix, a port, an interface name, a mark...). Such a
 * rule is false for every packet whose value for that field is PRESENT and
 * outside the match's set, or ABSENT, so the rule can be filed under the
 * set's values and skipped unless the packet's value looks it up. Each
 * rule is filed under exactly one match (its "key"); per hook and family
 * one hash holds (field, prefix length, masked value) -> the ascending list
 * of rules filed there. Ranges are split into prefixes, so a packet
 * probes each field once per prefix length in use. Rules without such a
 * match go to a wildcard list. A packet gathers its lists (a field that is
 * INCOMPLETE contributes every rule filed under it), merges them in rule
 * order and runs the full matcher on each candidate: first match,
 * counters, limits, statements and the incomplete verdict stay exactly
 * those of rule-by-rule evaluation, only rules that cannot match are not
 * looked at. Cost per packet: one probe per (field, length) in use plus
 * the candidates before the deciding rule; it does not grow with the
 * number of rules as long as their keys differ.
 *
 * Bit-vector classification (per-field bitmaps of candidate rules, ANDed)
 * was the alternative: its per-packet cost grows with rules / 64 words per
 * field, about 160 words for 10,000 rules, and its memory with values x
 * rules; a decision tree over all fields can blow up combinatorially. The
 * one-key hash keeps memory linear in the rules' values.
 *
 * Which match is the key: the one whose values are shared by the fewest
 * other rules, penalising broad matches (a short prefix, a protocol, a
 * one-bit mark) that many packets hit. A match only qualifies if it is
 * not negated, comes before any limit (skipping the rule must not skip a
 * token the limit would have taken), and its set has no "name*" pattern
 * and at most PIDX_MAX_ENTRIES prefixes. A transport match (tcp dport,
 * tcp flags, icmp type, negated or not) also files the rule under its
 * protocol as "meta l4proto": another protocol makes it ABSENT.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "policy_field.h"
#include "policy_index.h"
#include "policy_int.h"

#define PIDX_MAX_FIELDS		32	/* field and mask pairs, per chain */
#define PIDX_MAX_ENTRIES	1024	/* prefixes one key match may add */
#define NAME_LEN		128	/* the "length" of exact names */

typedef unsigned __int128 u128;

/* One (field, length, value) key and its rule list; also the build's
 * counters. */
struct pslot {
	u128 key;
	uint32_t off, n;		/* rules: lists[off .. off + n) */
	uint32_t last;			/* build: last rule counted + 1 */
	uint8_t fid, len;
	bool used;
};

struct pfield {
	enum match_field field;
	uint32_t mask;			/* meta mark */
	enum set_kind kind;
	unsigned n_lens;
	uint8_t lens[PIDX_MAX_CURSORS];
	uint32_t all_off, n_all;	/* every rule filed here */
};

struct pidx {
	unsigned n_fields;
	struct pfield fields[PIDX_MAX_FIELDS];
	uint32_t wild_off, n_wild;
	struct pslot *tab;
	unsigned bits;
	uint32_t *lists;
	size_t n_lists;
};

/* ---- keys */

static size_t slot_hash(u128 k, uint8_t fid, uint8_t len, unsigned bits)
{
	uint64_t x = (uint64_t)(k >> 64) * 0xff51afd7ed558ccdull ^ (uint64_t)k;

	x ^= (uint64_t)fid << 8 | len;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)((x ^ x >> 29) * 0xbf58476d1ce4e5b9ull >> (64 - bits));
}

static u128 prefix_mask(enum set_kind kind, unsigned len)
{
	unsigned w = kind == SETK_U32 ? 32 : 128;

	if (kind == SETK_STR || len >= w)
		return ~(u128)0;
	if (!len)
		return 0;
	return kind == SETK_U32 ? (u128)(uint32_t)(~0u << (32 - len)) :
				  ~(u128)0 << (128 - len);
}

static u128 load128(const uint8_t b[16])
{
	u128 v = 0;

	for (int i = 0; i < 16; i++)
		v = v << 8 | b[i];
	return v;
}

/* Slot of (FID, LEN, K) in TAB, or the empty slot where it would go. */
static struct pslot *slot_at(struct pslot *tab, unsigned bits, uint8_t fid,
			     uint8_t len, u128 k)
{
	size_t mask = ((size_t)1 << bits) - 1;

	for (size_t i = slot_hash(k, fid, len, bits);; i = (i + 1) & mask) {
		struct pslot *s = &tab[i];

		if (!s->used || (s->key == k && s->fid == fid && s->len == len))
			return s;
	}
}

/* ---- the packet path */

static void push(struct pidx_walk *w, const uint32_t *l, uint32_t n)
{
	if (n)
		w->c[w->n++] = (struct pidx_cursor){ l, l + n };
}

/* The packet's value of field FD as a key, and its state. */
static enum pkt_state field_key(const struct pfield *fd,
				const struct ifcache *ifc, const struct pkt *pkt,
				u128 *k)
{
	enum pkt_state st;
	char name[IF_NAMESIZE];
	const uint8_t *a;
	uint32_t v;

	switch (fd->kind) {
	case SETK_U32:
		st = field_u32(pkt, fd->field, fd->mask, &v);
		*k = v;
		return st;
	case SETK_U128:
		st = field_u128(pkt, fd->field, &a);
		*k = load128(a);
		return st;
	default:
		st = field_name(ifc, pkt, fd->field, name);
		*k = 0;
		if (st == PKT_PRESENT) {
			size_t n = strnlen(name, sizeof(name));

			/* Longer names are in no set (set_has_str). */
			if (n >= sizeof(name))
				return PKT_ABSENT;
			memcpy(k, name, n);
		}
		return st;
	}
}

void pidx_start(const struct pidx *x, const struct ifcache *ifc,
		const struct pkt *pkt, struct pidx_walk *w)
{
	w->n = 0;
	for (unsigned f = 0; f < x->n_fields; f++) {
		const struct pfield *fd = &x->fields[f];
		u128 k;
		enum pkt_state st = field_key(fd, ifc, pkt, &k);

		if (!fd->n_all || st == PKT_ABSENT)
			continue;
		if (st == PKT_INCOMPLETE) {
			/* The matcher decides what an unseen field means. */
			push(w, x->lists + fd->all_off, fd->n_all);
			continue;
		}
		for (unsigned i = 0; i < fd->n_lens; i++) {
			uint8_t len = fd->lens[i];
			u128 pk = k & prefix_mask(fd->kind, len);
			const struct pslot *s = slot_at(x->tab, x->bits,
							(uint8_t)f, len, pk);

			if (s->used)
				push(w, x->lists + s->off, s->n);
		}
	}
	push(w, x->lists + x->wild_off, x->n_wild);
}

/* ---- building */

/* One key of a candidate match. */
struct bent {
	u128 key;
	uint8_t fid, len;
};

/* A match a rule could be filed under: ents[first .. first + n). */
struct bopt {
	uint32_t rule;
	uint8_t fid;
	uint32_t first, n;
	unsigned sel;			/* fewest value bits it pins */
};

struct build {
	struct pidx *x;
	struct bent *ents;
	size_t n_ents, cap_ents;
	struct bopt *opts;
	size_t n_opts, cap_opts;
	int err;			/* -ENOMEM, or 1: option too large */
	struct bopt *cur;		/* option being filled */
};

static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 64;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Field instance of (F, MASK), added if new; -1 when there is no room. */
static int field_id(struct pidx *x, enum match_field f, uint32_t mask,
		    enum set_kind kind)
{
	for (unsigned i = 0; i < x->n_fields; i++)
		if (x->fields[i].field == f && x->fields[i].mask == mask)
			return (int)i;
	if (x->n_fields == PIDX_MAX_FIELDS)
		return -1;
	x->fields[x->n_fields] = (struct pfield){ .field = f, .mask = mask,
						  .kind = kind };
	return (int)x->n_fields++;
}

/* Bits of the field's values that matter, for judging how broad a key
 * is: a protocol or a type has 8, a port or a length 16. */
static unsigned field_width(const struct pfield *fd)
{
	switch (fd->field) {
	case MATCH_IP_SADDR:
	case MATCH_IP_DADDR:
	case MATCH_META_SKUID:
	case MATCH_META_SKGID:
		return 32;
	case MATCH_IP6_SADDR:
	case MATCH_IP6_DADDR:
		return 64;	/* below a /64, one host */
	case MATCH_META_MARK:
		return (unsigned)__builtin_popcount(fd->mask);
	case MATCH_IP_PROTOCOL:
	case MATCH_META_L4PROTO:
	case MATCH_ICMP_TYPE:
	case MATCH_ICMPV6_TYPE:
	case MATCH_IIFNAME:
	case MATCH_OIFNAME:
		return 8;
	default:
		return 16;
	}
}

static void add_ent(struct build *b, u128 key, unsigned len)
{
	struct pfield *fd = &b->x->fields[b->cur->fid];
	unsigned w = field_width(fd), total = fd->kind == SETK_U32 ? 32 :
					      fd->kind == SETK_U128 ? 128 : w;
	unsigned free_bits = total - (len > total ? total : len);
	unsigned sel = free_bits >= w ? 0 : w - free_bits;

	if (fd->kind == SETK_U128)
		sel = len < w ? len : w;
	if (b->err)
		return;
	if (b->cur->n == PIDX_MAX_ENTRIES) {
		b->err = 1;
		return;
	}
	if (grow((void **)&b->ents, b->n_ents, &b->cap_ents,
		 sizeof(*b->ents))) {
		b->err = -ENOMEM;
		return;
	}
	b->ents[b->n_ents++] = (struct bent){ key, b->cur->fid, (uint8_t)len };
	b->cur->n++;
	if (sel < b->cur->sel)
		b->cur->sel = sel;
}

/* Split [LO, HI] of a W-bit field into aligned prefixes. */
static void add_range(struct build *b, u128 lo, u128 hi, unsigned w)
{
	for (;;) {
		unsigned k = 0;

		/* The largest aligned block at LO that fits. */
		/* k + 1 < 128: a shift by the type's width is undefined. */
		while (k < w && k + 1 < 128 && !(lo >> k & 1)) {
			u128 end = lo + ((((u128)1) << (k + 1)) - 1);

			if (end > hi || end < lo)
				break;
			k++;
		}
		add_ent(b, lo & prefix_mask(w == 32 ? SETK_U32 : SETK_U128,
					    w - k), w - k);
		if (b->err)
			return;
		{
			u128 last = lo + ((((u128)1) << k) - 1);

			if (last >= hi)
				return;
			lo = last + 1;
		}
	}
}

static int walk_elem(void *arg, const void *lo, const void *hi)
{
	struct build *b = arg;
	enum set_kind kind = b->x->fields[b->cur->fid].kind;
	u128 k = 0;

	if (kind == SETK_U32) {
		add_range(b, *(const uint32_t *)lo, *(const uint32_t *)hi, 32);
	} else if (kind == SETK_U128) {
		add_range(b, load128(lo), load128(hi), 128);
	} else if (hi) {
		b->err = 1;	/* "name*": not a hash key */
	} else {
		memcpy(&k, lo, 16);
		add_ent(b, k, NAME_LEN);
	}
	return b->err;
}

static bool keyed_field(enum match_field f)
{
	return f != MATCH_TCP_FLAGS && f != MATCH_CT_STATE &&
	       f != MATCH_LIMIT;
}

static enum set_kind field_kind(enum match_field f)
{
	if (f == MATCH_IP6_SADDR || f == MATCH_IP6_DADDR)
		return SETK_U128;
	if (f == MATCH_IIFNAME || f == MATCH_OIFNAME)
		return SETK_STR;
	return SETK_U32;
}

/* The protocol a transport match implies, or 0. */
static uint8_t implied_proto(enum match_field f)
{
	switch (f) {
	case MATCH_TCP_SPORT:
	case MATCH_TCP_DPORT:
	case MATCH_TCP_FLAGS:
		return IPPROTO_TCP;
	case MATCH_UDP_SPORT:
	case MATCH_UDP_DPORT:
		return IPPROTO_UDP;
	case MATCH_ICMP_TYPE:
		return IPPROTO_ICMP;
	case MATCH_ICMPV6_TYPE:
		return IPPROTO_ICMPV6;
	default:
		return 0;
	}
}

/* Start an option of rule RULE on field F; false if it cannot be one. */
static bool opt_begin(struct build *b, uint32_t rule, enum match_field f,
		      uint32_t mask)
{
	int fid = field_id(b->x, f, mask, field_kind(f));

	b->cur = NULL;
	if (fid < 0 || grow((void **)&b->opts, b->n_opts, &b->cap_opts,
			    sizeof(*b->opts))) {
		b->err = fid < 0 ? 1 : -ENOMEM;
		return false;
	}
	b->cur = &b->opts[b->n_opts];
	*b->cur = (struct bopt){ rule, (uint8_t)fid, (uint32_t)b->n_ents, 0,
				 UINT32_MAX };
	return true;
}

/* Keep the option being filled, or drop it (too large, no room). */
static int opt_end(struct build *b)
{
	if (b->err < 0)
		return b->err;
	if (!b->cur)
		;
	else if (b->err || !b->cur->n)
		b->n_ents = b->cur->first;
	else
		b->n_opts++;
	b->err = 0;
	return 0;
}

/* Every match rule R (position POS) could be filed under. */
static int rule_options(struct build *b, const struct crule *r, uint32_t pos)
{
	bool implied = false;

	for (unsigned j = 0; j < r->n_m; j++) {
		const struct cmatch *m = &r->m[j];
		uint8_t proto = implied_proto(m->field);

		if (m->field == MATCH_LIMIT)
			break;
		if (proto && !implied) {
			implied = true;
			if (opt_begin(b, pos, MATCH_META_L4PROTO, 0))
				add_ent(b, proto, 32);
			if (opt_end(b))
				return -ENOMEM;
		}
		if (m->negate || !keyed_field(m->field) || !m->set)
			continue;
		if (opt_begin(b, pos, m->field,
			      m->field == MATCH_META_MARK ? m->mask : 0))
			set_walk(m->set, walk_elem, b);
		if (opt_end(b))
			return -ENOMEM;
	}
	return 0;
}

static struct pslot *tab_new(size_t n_keys, unsigned *bits)
{
	*bits = 4;
	while (((size_t)1 << *bits) < n_keys * 2)
		(*bits)++;
	return calloc((size_t)1 << *bits, sizeof(struct pslot));
}

/* Count, per key, the rules with an option under it. */
static void count_keys(struct pslot *tab, unsigned bits, const struct build *b,
		       const struct bopt *o)
{
	for (uint32_t e = o->first; e < o->first + o->n; e++) {
		const struct bent *en = &b->ents[e];
		struct pslot *s = slot_at(tab, bits, en->fid, en->len, en->key);

		if (!s->used)
			*s = (struct pslot){ .key = en->key, .fid = en->fid,
					     .len = en->len, .used = true };
		if (s->last != o->rule + 1) {
			s->n++;
			s->last = o->rule + 1;
		}
	}
}

/* Expected candidates a packet would meet through O: the most shared of
 * its keys, plus a penalty for broad ones. */
static uint64_t opt_cost(struct pslot *pop, unsigned bits,
			 const struct build *b, const struct bopt *o)
{
	uint64_t most = 0;

	for (uint32_t e = o->first; e < o->first + o->n; e++) {
		const struct bent *en = &b->ents[e];
		const struct pslot *s = slot_at(pop, bits, en->fid, en->len,
						en->key);

		if (s->n > most)
			most = s->n;
	}
	return most + ((uint64_t)1 << (16 - (o->sel < 16 ? o->sel : 16)));
}

static bool has_len(const struct pfield *fd, uint8_t len)
{
	for (unsigned i = 0; i < fd->n_lens; i++)
		if (fd->lens[i] == len)
			return true;
	return false;
}

/* Would O fit the probe budget; with ADD, take its lengths. */
static bool take_lens(struct pidx *x, const struct build *b,
		      const struct bopt *o, unsigned *n_lens, bool add)
{
	struct pfield *fd = &x->fields[o->fid];
	unsigned extra = 0;
	uint8_t seen[PIDX_MAX_CURSORS];

	for (uint32_t e = o->first; e < o->first + o->n; e++) {
		uint8_t len = b->ents[e].len;
		bool dup = has_len(fd, len);

		for (unsigned i = 0; !dup && i < extra; i++)
			dup = seen[i] == len;
		if (dup)
			continue;
		if (*n_lens + extra + 2 >= PIDX_MAX_CURSORS)
			return false;
		seen[extra++] = len;
	}
	if (add) {
		memcpy(fd->lens + fd->n_lens, seen, extra);
		fd->n_lens += extra;
		*n_lens += extra;
	}
	return true;
}

/* Pick each rule's key: CHOSEN[rule] is an option index or -1. */
static int choose(struct build *b, unsigned n_rules, int32_t *chosen)
{
	struct pslot *pop;
	unsigned bits, n_lens = 0;
	size_t o = 0;

	pop = tab_new(b->n_ents, &bits);
	if (!pop)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_opts; i++)
		count_keys(pop, bits, b, &b->opts[i]);
	for (uint32_t r = 0; r < n_rules; r++) {
		uint64_t best = UINT64_MAX;

		chosen[r] = -1;
		for (; o < b->n_opts && b->opts[o].rule == r; o++) {
			uint64_t c = opt_cost(pop, bits, b, &b->opts[o]);

			if (c < best && take_lens(b->x, b, &b->opts[o],
						  &n_lens, false)) {
				best = c;
				chosen[r] = (int32_t)o;
			}
		}
		if (chosen[r] >= 0)
			take_lens(b->x, b, &b->opts[chosen[r]], &n_lens, true);
	}
	free(pop);
	return 0;
}

/* Lay out the lists: per key, per field (all), the wildcard. */
static int fill(struct build *b, unsigned n_rules, const int32_t *chosen)
{
	struct pidx *x = b->x;
	size_t n_keys = 0, off = 0;

	for (uint32_t r = 0; r < n_rules; r++)
		n_keys += chosen[r] >= 0 ? b->opts[chosen[r]].n : 0;
	x->tab = tab_new(n_keys, &x->bits);
	if (!x->tab)
		return -ENOMEM;
	for (uint32_t r = 0; r < n_rules; r++) {
		if (chosen[r] < 0) {
			x->n_wild++;
			continue;
		}
		count_keys(x->tab, x->bits, b, &b->opts[chosen[r]]);
		x->fields[b->opts[chosen[r]].fid].n_all++;
	}
	for (size_t i = 0; i < (size_t)1 << x->bits; i++) {
		x->tab[i].off = (uint32_t)off;
		off += x->tab[i].n;
		x->tab[i].n = 0;
	}
	for (unsigned f = 0; f < x->n_fields; f++) {
		x->fields[f].all_off = (uint32_t)off;
		off += x->fields[f].n_all;
		x->fields[f].n_all = 0;
	}
	x->wild_off = (uint32_t)off;
	off += x->n_wild;
	x->n_wild = 0;
	x->n_lists = off;
	x->lists = malloc((off ? off : 1) * sizeof(*x->lists));
	if (!x->lists)
		return -ENOMEM;
	for (uint32_t r = 0; r < n_rules; r++) {
		const struct bopt *o;
		struct pfield *fd;

		if (chosen[r] < 0) {
			x->lists[x->wild_off + x->n_wild++] = r;
			continue;
		}
		o = &b->opts[chosen[r]];
		fd = &x->fields[o->fid];
		x->lists[fd->all_off + fd->n_all++] = r;
		for (uint32_t e = o->first; e < o->first + o->n; e++) {
			const struct bent *en = &b->ents[e];
			struct pslot *s = slot_at(x->tab, x->bits, en->fid,
						  en->len, en->key);

			/* Rules come in order: a repeat is the last one. */
			if (s->n && x->lists[s->off + s->n - 1] == r)
				continue;
			x->lists[s->off + s->n++] = r;
		}
	}
	return 0;
}

/* The classifier of one family's rule list RULES[0 .. N). */
static struct pidx *build_one(struct crule *const *rules, unsigned n)
{
	struct build b = { 0 };
	int32_t *chosen = calloc(n ? n : 1, sizeof(*chosen));
	int err = -ENOMEM;

	b.x = calloc(1, sizeof(*b.x));
	if (!b.x || !chosen)
		goto out;
	for (uint32_t r = 0; r < n; r++) {
		err = rule_options(&b, rules[r], r);
		if (err)
			goto out;
	}
	err = choose(&b, n, chosen);
	if (!err)
		err = fill(&b, n, chosen);
out:
	free(b.ents);
	free(b.opts);
	free(chosen);
	if (err) {
		pidx_free(b.x);
		return NULL;
	}
	return b.x;
}

int pidx_build(struct policy *p)
{
	for (int h = 0; h < HOOK_MAX; h++) {
		struct chook *hk = &p->hooks[h];

		for (int f = 0; f < 2; f++) {
			hk->idx[f] = build_one(hk->fam[f], hk->n_fam[f]);
			if (!hk->idx[f])
				return -ENOMEM;
		}
	}
	return 0;
}

void pidx_free(struct pidx *x)
{
	if (!x)
		return;
	free(x->tab);
	free(x->lists);
	free(x);
}

size_t pidx_bytes(const struct pidx *x)
{
	if (!x)
		return 0;
	return sizeof(*x) + ((size_t)1 << x->bits) * sizeof(*x->tab) +
	       x->n_lists * sizeof(*x->lists);
}
