/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_index.c - the rule classifier behind policy_judge().
 *
 * Why this shape: most rules carry at least one positive match on a value
 * (an address or prefix, a port, an interface name, a mark...). Such a
 * rule is false for every packet whose value for that field is PRESENT and
 * outside the match's set, or ABSENT, so the rule can be filed under the
 * set's values and skipped unless the packet's value looks it up. Each
 * rule is filed under exactly one match (its "key"). Rules without such a
 * match go to a wildcard list. A packet gathers its lists (a field that is
 * INCOMPLETE contributes every rule filed under it), merges them in rule
 * order and runs the full matcher on each candidate: first match,
 * counters, limits, statements and the incomplete verdict stay exactly
 * those of rule-by-rule evaluation, only rules that cannot match are not
 * looked at.
 *
 * Per 32-bit field (addresses, ports, protocols, lengths, marks) the keys
 * become elementary intervals: the sorted starts of every key range cut
 * the value space, and each piece lists the rules whose key covers it, so
 * one branch-free binary search finds a packet's list. Otherwise, and for
 * IPv6 addresses and names, one hash per hook and family holds (field,
 * prefix length, masked value) -> list, ranges split into prefixes, and a
 * packet probes the field once per prefix length in use. A 32-bit field
 * takes the intervals when the search needs at most pidx_iv_steps (4)
 * steps per hash probe it replaces (a probe hashes a 128-bit key and
 * compares a 32-byte slot; a step is a load and a conditional move), and
 * its lists hold at most PIDX_IV_SPREAD entries per key range: many rules
 * with overlapping ranges would put each rule in many pieces, memory
 * quadratic in the rules. So a short policy's ranges and prefixes
 * (5000-5100, the /8 to /29 of a blocklist) cost one search per field
 * instead of a probe per length, while 10,000 distinct ports or addresses
 * keep one probe each.
 *
 * Before any of that, a transport field of another protocol than the
 * packet's is not read (it is ABSENT), and a value outside every key of
 * its field is not searched. A candidate found by its key's lookup has
 * that match PRESENT and true, so the matcher skips it (pidx_next()).
 * Cost per packet: a search or the probes of each field the packet has,
 * plus the candidates before the deciding rule; it does not grow with
 * the number of rules as long as their keys differ.
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
#define PIDX_IV_SPREAD		4	/* interval list entries per range */

typedef unsigned __int128 u128;

unsigned pidx_iv_steps = 4;

/*
 * Packets by transport protocol: a transport field of another protocol is
 * ABSENT (field_th_state()), so its field is not even read. PC_ALL: the
 * protocol is not known (INCOMPLETE, ABSENT), every field.
 */
enum pclass { PC_ALL, PC_TCP, PC_UDP, PC_ICMP, PC_ICMPV6, PC_OTHER, PC_MAX };

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
	uint32_t iv_off, n_iv;		/* interval field: iv_lo[iv_off..] */
	uint32_t iv_min, iv_max;	/* its keys lie in [min, max] */
	uint8_t proto;			/* transport field: its protocol */
};

/* A rule list: rules[off .. off + n). */
struct pspan {
	uint32_t off, n;
};

struct pidx {
	unsigned n_fields;
	struct pfield fields[PIDX_MAX_FIELDS];
	/* Per PC_* class of packet, the fields rules are filed under that
	 * such a packet can have. */
	uint8_t n_probe[PC_MAX];
	uint8_t probe[PC_MAX][PIDX_MAX_FIELDS];
	uint32_t wild_off, n_wild;
	struct pslot *tab;
	unsigned bits;
	uint32_t *lists;
	size_t n_lists;
	uint8_t *key_m;			/* per rule: its key match, or
					 * PIDX_NO_SKIP */
	size_t n_rules;
	/* Interval fields: per field, ascending interval starts (the first
	 * is 0) and each interval's rules. */
	uint32_t *iv_lo;
	struct pspan *iv;
	size_t n_iv;
	uint32_t *iv_rules;
	size_t n_iv_rules;
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

/* A list; KEY: found by the packet's value, not for an unseen field or
 * for want of a key. */
static void push(struct pidx_walk *w, const uint32_t *l, uint32_t n, bool key)
{
	if (n)
		w->c[w->n++] = (struct pidx_cursor){ l, l + n, key };
}

/* The packet's value of an address or name field FD as a key, and its
 * state. */
static enum pkt_state wide_key(const struct pfield *fd,
			       const struct ifcache *ifc,
			       const struct pkt *pkt, u128 *k)
{
	enum pkt_state st;
	char name[IF_NAMESIZE];
	const uint8_t *a;

	if (fd->kind == SETK_U128) {
		st = field_u128(pkt, fd->field, &a);
		*k = load128(a);
		return st;
	}
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

/* Index of the interval of LO[0 .. N) holding V: LO[0] is 0, so there
 * is one. Branch-free: the steps do not depend on V. */
static uint32_t iv_find(const uint32_t *lo, uint32_t n, uint32_t v)
{
	const uint32_t *b = lo;

	while (n > 1) {
		uint32_t half = n / 2;

		b = b[half] <= v ? b + half : b;
		n -= half;
	}
	return (uint32_t)(b - lo);
}

/* The lists of key K of hashed field F: one probe per prefix length. */
static void probe_hash(const struct pidx *x, unsigned f, u128 k,
		       struct pidx_walk *w)
{
	const struct pfield *fd = &x->fields[f];

	for (unsigned i = 0; i < fd->n_lens; i++) {
		uint8_t len = fd->lens[i];
		u128 pk = k & prefix_mask(fd->kind, len);
		const struct pslot *s = slot_at(x->tab, x->bits, (uint8_t)f,
						len, pk);

		if (s->used)
			push(w, x->lists + s->off, s->n, true);
	}
}

/* The list of value V of 32-bit field F: one search, or its probes. */
static void probe_u32(const struct pidx *x, unsigned f, uint32_t v,
		      struct pidx_walk *w)
{
	const struct pfield *fd = &x->fields[f];
	const struct pspan *sp;

	if (!fd->n_iv) {
		probe_hash(x, f, v, w);
		return;
	}
	/* Outside every key: no rule, no search. */
	if (v < fd->iv_min || v > fd->iv_max)
		return;
	sp = &x->iv[fd->iv_off + iv_find(x->iv_lo + fd->iv_off, fd->n_iv, v)];
	push(w, x->iv_rules + sp->off, sp->n, true);
}

static void push_all(const struct pidx *x, const struct pfield *fd,
		     struct pidx_walk *w)
{
	/* The matcher decides what an unseen field means. */
	push(w, x->lists + fd->all_off, fd->n_all, false);
}

/* Out of line: the loop over the 32-bit fields stays small. */
static __attribute__((noinline)) void probe_wide(const struct pidx *x,
						 unsigned f,
						 const struct ifcache *ifc,
						 const struct pkt *pkt,
						 struct pidx_walk *w)
{
	u128 k;
	enum pkt_state st = wide_key(&x->fields[f], ifc, pkt, &k);

	if (st == PKT_PRESENT)
		probe_hash(x, f, k, w);
	else if (st == PKT_INCOMPLETE)
		push_all(x, &x->fields[f], w);
}

static enum pclass proto_class(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return PC_TCP;
	case IPPROTO_UDP:
		return PC_UDP;
	case IPPROTO_ICMP:
		return PC_ICMP;
	case IPPROTO_ICMPV6:
		return PC_ICMPV6;
	default:
		return PC_OTHER;
	}
}

void pidx_start(const struct pidx *x, const struct ifcache *ifc,
		const struct pkt *pkt, struct pidx_walk *w)
{
	unsigned pc = pkt->l4 == PKT_PRESENT ? proto_class(pkt->l4proto) :
					       PC_ALL;

	w->n = 0;
	w->key_m = x->key_m;
	for (unsigned i = 0; i < x->n_probe[pc]; i++) {
		unsigned f = x->probe[pc][i];
		const struct pfield *fd = &x->fields[f];
		enum pkt_state st;
		uint32_t v;

		if (fd->kind != SETK_U32) {
			probe_wide(x, f, ifc, pkt, w);
			continue;
		}
		st = field_u32(pkt, fd->field, fd->mask, &v);
		if (st == PKT_PRESENT)
			probe_u32(x, f, v, w);
		else if (st == PKT_INCOMPLETE)
			push_all(x, fd, w);
	}
	push(w, x->lists + x->wild_off, x->n_wild, false);
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
	uint8_t mi;			/* the rule's match, or PIDX_NO_SKIP */
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

/* *ARR to N items of SIZE bytes, kept as it was on failure. */
static int resize(void **arr, size_t n, size_t size)
{
	void *p = realloc(*arr, (n ? n : 1) * size);

	if (!p)
		return -ENOMEM;
	*arr = p;
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
						  .kind = kind,
						  .proto = implied_proto(f) };
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
	/* Names are never keys: their rules are candidates for every
	 * packet unless another of their matches files them. */
	return f != MATCH_TCP_FLAGS && f != MATCH_CT_STATE &&
	       f != MATCH_LIMIT && !policy_field_is_name(f);
}

static enum set_kind field_kind(enum match_field f)
{
	if (f == MATCH_IP6_SADDR || f == MATCH_IP6_DADDR)
		return SETK_U128;
	if (f == MATCH_IIFNAME || f == MATCH_OIFNAME)
		return SETK_STR;
	return SETK_U32;
}

/* Start an option of rule RULE on field F; false if it cannot be one. */
static bool opt_begin(struct build *b, uint32_t rule, enum match_field f,
		      uint32_t mask, unsigned mi)
{
	int fid = field_id(b->x, f, mask, field_kind(f));

	b->cur = NULL;
	if (fid < 0 || grow((void **)&b->opts, b->n_opts, &b->cap_opts,
			    sizeof(*b->opts))) {
		b->err = fid < 0 ? 1 : -ENOMEM;
		return false;
	}
	b->cur = &b->opts[b->n_opts];
	*b->cur = (struct bopt){ rule, (uint8_t)fid,
				 mi < PIDX_NO_SKIP ? (uint8_t)mi : PIDX_NO_SKIP,
				 (uint32_t)b->n_ents, 0, UINT32_MAX };
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
			/* Not a match of the rule: none to skip. */
			if (opt_begin(b, pos, MATCH_META_L4PROTO, 0,
				      PIDX_NO_SKIP))
				add_ent(b, proto, 32);
			if (opt_end(b))
				return -ENOMEM;
		}
		/* A set that changes at runtime cannot be filed by value. */
		if (m->negate || !keyed_field(m->field) || !m->set || m->dyn)
			continue;
		if (opt_begin(b, pos, m->field,
			      m->field == MATCH_META_MARK ? m->mask : 0, j))
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

/* ---- interval fields */

/* One range of a rule's key, for building an interval field. */
struct prange {
	uint32_t lo, hi, rule;
};

/* The ranges of the keys filed under field FID, in rule order; adjacent
 * prefixes of one rule joined again. Their number, or -ENOMEM. */
static long iv_ranges(const struct build *b, unsigned n_rules,
		      const int32_t *chosen, unsigned fid, struct prange **out)
{
	size_t n = 0, cap = 0;
	struct prange *v = NULL;

	for (uint32_t r = 0; r < n_rules; r++) {
		const struct bopt *o = chosen[r] < 0 ? NULL :
				       &b->opts[chosen[r]];

		for (uint32_t e = 0; o && o->fid == fid && e < o->n; e++) {
			const struct bent *en = &b->ents[o->first + e];
			uint32_t lo = (uint32_t)en->key;
			uint32_t hi = lo | ~(uint32_t)prefix_mask(SETK_U32,
								   en->len);

			if (n && v[n - 1].rule == r && v[n - 1].hi != UINT32_MAX
			    && v[n - 1].hi + 1 == lo) {
				v[n - 1].hi = hi;
				continue;
			}
			if (grow((void **)&v, n, &cap, sizeof(*v))) {
				free(v);
				return -ENOMEM;
			}
			v[n++] = (struct prange){ lo, hi, r };
		}
	}
	*out = v;
	return (long)n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The sorted distinct interval starts of ranges V[0 .. N): 0, every lo,
 * every hi + 1. Their number, or -ENOMEM. */
static long iv_bounds(const struct prange *v, size_t n, uint32_t **out)
{
	uint32_t *lo = malloc((2 * n + 1) * sizeof(*lo));
	size_t m = 0, k = 1;

	if (!lo)
		return -ENOMEM;
	lo[m++] = 0;
	for (size_t i = 0; i < n; i++) {
		lo[m++] = v[i].lo;
		if (v[i].hi != UINT32_MAX)
			lo[m++] = v[i].hi + 1;
	}
	qsort(lo, m, sizeof(*lo), cmp_u32);
	for (size_t i = 1; i < m; i++)
		if (lo[i] != lo[k - 1])
			lo[k++] = lo[i];
	*out = lo;
	return (long)k;
}

/* Intervals [*I0, *I1) of LO[0 .. N) that range R covers. */
static void iv_cover(const uint32_t *lo, uint32_t n, const struct prange *r,
		     uint32_t *i0, uint32_t *i1)
{
	*i0 = iv_find(lo, n, r->lo);
	*i1 = r->hi == UINT32_MAX ? n : iv_find(lo, n, r->hi + 1);
}

static unsigned ceil_log2(size_t n)
{
	unsigned k = 0;

	while (((size_t)1 << k) < n)
		k++;
	return k;
}

/* Append the intervals LO[0 .. N) of field FD and their rules (ranges V,
 * TOTAL rule entries). 0 or -ENOMEM. */
static int iv_store(struct pidx *x, struct pfield *fd, const uint32_t *lo,
		    uint32_t n, const struct prange *v, size_t n_v,
		    size_t total)
{
	size_t need = x->n_iv + n, off = x->n_iv_rules;
	struct pspan *sp;

	if (resize((void **)&x->iv_lo, need, sizeof(*x->iv_lo)) ||
	    resize((void **)&x->iv, need, sizeof(*x->iv)) ||
	    resize((void **)&x->iv_rules, off + total, sizeof(*x->iv_rules)))
		return -ENOMEM;
	fd->iv_off = (uint32_t)x->n_iv;
	fd->n_iv = n;
	fd->iv_min = UINT32_MAX;
	for (size_t i = 0; i < n_v; i++) {
		fd->iv_min = v[i].lo < fd->iv_min ? v[i].lo : fd->iv_min;
		fd->iv_max = v[i].hi > fd->iv_max ? v[i].hi : fd->iv_max;
	}
	memcpy(x->iv_lo + x->n_iv, lo, n * sizeof(*lo));
	sp = x->iv + x->n_iv;
	memset(sp, 0, n * sizeof(*sp));
	for (size_t i = 0; i < n_v; i++) {
		uint32_t i0, i1;

		iv_cover(lo, n, &v[i], &i0, &i1);
		for (uint32_t j = i0; j < i1; j++)
			sp[j].n++;
	}
	for (uint32_t j = 0; j < n; j++) {
		sp[j].off = (uint32_t)off;
		off += sp[j].n;
		sp[j].n = 0;
	}
	for (size_t i = 0; i < n_v; i++) {
		uint32_t i0, i1;

		iv_cover(lo, n, &v[i], &i0, &i1);
		for (uint32_t j = i0; j < i1; j++) {
			uint32_t *l = x->iv_rules + sp[j].off;

			/* Rules come in order: a repeat is the last one. */
			if (!sp[j].n || l[sp[j].n - 1] != v[i].rule)
				l[sp[j].n++] = v[i].rule;
		}
	}
	x->n_iv = need;
	x->n_iv_rules = off;
	return 0;
}

/*
 * Make field FID an interval field if one binary search is cheaper than
 * its hash probes and the lists stay linear in its ranges (overlapping
 * ranges of many rules would put each rule in many intervals).
 */
static int iv_field(struct build *b, unsigned n_rules, const int32_t *chosen,
		    unsigned fid)
{
	struct pfield *fd = &b->x->fields[fid];
	struct prange *v = NULL;
	uint32_t *lo = NULL;
	long n_v, n;
	size_t total = 0;
	int err = 0;

	if (fd->kind != SETK_U32)
		return 0;
	n_v = iv_ranges(b, n_rules, chosen, fid, &v);
	if (n_v <= 0)
		return (int)n_v;
	n = iv_bounds(v, (size_t)n_v, &lo);
	if (n < 0) {
		err = -ENOMEM;
		goto out;
	}
	if (ceil_log2((size_t)n) > pidx_iv_steps * fd->n_lens ||
	    n > UINT32_MAX / 2)
		goto out;
	for (long i = 0; i < n_v; i++) {
		uint32_t i0, i1;

		iv_cover(lo, (uint32_t)n, &v[i], &i0, &i1);
		total += i1 - i0;
	}
	if (total <= PIDX_IV_SPREAD * (size_t)n_v)
		err = iv_store(b->x, fd, lo, (uint32_t)n, v, (size_t)n_v,
			       total);
out:
	free(v);
	free(lo);
	return err;
}

/* Field F is read by the packets of every class its protocol allows. */
static void add_probe(struct pidx *x, unsigned f)
{
	static const uint8_t proto[PC_MAX] = {
		[PC_TCP] = IPPROTO_TCP, [PC_UDP] = IPPROTO_UDP,
		[PC_ICMP] = IPPROTO_ICMP, [PC_ICMPV6] = IPPROTO_ICMPV6,
	};
	uint8_t fp = x->fields[f].proto;

	for (unsigned pc = 0; pc < PC_MAX; pc++)
		if (pc == PC_ALL || !fp || fp == proto[pc])
			x->probe[pc][x->n_probe[pc]++] = (uint8_t)f;
}

/* Lay out the lists: per key, per field (all), the wildcard. */
static int fill(struct build *b, unsigned n_rules, const int32_t *chosen)
{
	struct pidx *x = b->x;
	struct pfield *fd;
	size_t n_keys = 0, off = 0;

	for (unsigned f = 0; f < x->n_fields; f++)
		if (iv_field(b, n_rules, chosen, f))
			return -ENOMEM;
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
		fd = &x->fields[b->opts[chosen[r]].fid];
		if (!fd->n_iv)
			count_keys(x->tab, x->bits, b, &b->opts[chosen[r]]);
		fd->n_all++;
	}
	for (size_t i = 0; i < (size_t)1 << x->bits; i++) {
		x->tab[i].off = (uint32_t)off;
		off += x->tab[i].n;
		x->tab[i].n = 0;
	}
	for (unsigned f = 0; f < x->n_fields; f++) {
		if (x->fields[f].n_all)
			add_probe(x, f);
		x->fields[f].all_off = (uint32_t)off;
		off += x->fields[f].n_all;
		x->fields[f].n_all = 0;
	}
	x->wild_off = (uint32_t)off;
	off += x->n_wild;
	x->n_wild = 0;
	x->n_lists = off;
	x->lists = malloc((off ? off : 1) * sizeof(*x->lists));
	x->key_m = malloc(n_rules ? n_rules : 1);
	if (!x->lists || !x->key_m)
		return -ENOMEM;
	x->n_rules = n_rules;
	for (uint32_t r = 0; r < n_rules; r++)
		x->key_m[r] = chosen[r] < 0 ? PIDX_NO_SKIP :
					      b->opts[chosen[r]].mi;
	for (uint32_t r = 0; r < n_rules; r++) {
		const struct bopt *o;

		if (chosen[r] < 0) {
			x->lists[x->wild_off + x->n_wild++] = r;
			continue;
		}
		o = &b->opts[chosen[r]];
		fd = &x->fields[o->fid];
		x->lists[fd->all_off + fd->n_all++] = r;
		for (uint32_t e = o->first; !fd->n_iv && e < o->first + o->n;
		     e++) {
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
	free(x->key_m);
	free(x->iv_lo);
	free(x->iv);
	free(x->iv_rules);
	free(x);
}

size_t pidx_bytes(const struct pidx *x)
{
	if (!x)
		return 0;
	return sizeof(*x) + ((size_t)1 << x->bits) * sizeof(*x->tab) +
	       x->n_lists * sizeof(*x->lists) + x->n_rules +
	       x->n_iv * (sizeof(*x->iv_lo) + sizeof(*x->iv)) +
	       x->n_iv_rules * sizeof(*x->iv_rules);
}
