/* SPDX-License-Identifier: GPL-2.0-or-later */
/* set.c - exact-value hashes and sorted interval arrays behind every set. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domset.h"
#include "names.h"
#include "set.h"

#define NAME_LEN	16	/* IFNAMSIZ */
#define FEW_EXACT	8	/* fewer values than this go to the intervals */

typedef unsigned __int128 u128;

struct iv32 {
	uint32_t lo, hi;
};

struct iv128 {
	u128 lo, hi;
};

struct name {
	char s[NAME_LEN];
};

struct set {
	enum set_kind kind;
	bool finished;
	/*
	 * Exact values: while building a plain array (vals, n_vals), after
	 * set_finish() an open-addressing table of 1 << bits slots where 0
	 * (or "") marks an empty slot, so the value 0 itself is kept aside.
	 */
	void *vals;
	size_t n_vals, cap_vals;
	unsigned bits;
	bool has_zero;
	size_t n_exact;
	/* Ranges: sorted, disjoint, merged after set_finish(). */
	void *ivs;
	size_t n_ivs, cap_ivs;
	/* SETK_STR prefixes ("eth*" stored as "eth"). */
	struct name *prefixes;
	size_t n_prefixes, cap_prefixes;
	/* SETK_DOMAIN: everything is here. */
	struct domset *dom;
};

static size_t elem_size(enum set_kind k)
{
	return k == SETK_U32 ? sizeof(uint32_t) :
	       k == SETK_U128 ? sizeof(u128) : sizeof(struct name);
}

static size_t iv_size(enum set_kind k)
{
	return k == SETK_U32 ? sizeof(struct iv32) : sizeof(struct iv128);
}

struct set *set_new(enum set_kind kind)
{
	struct set *s = calloc(1, sizeof(*s));

	if (s)
		s->kind = kind;
	if (s && kind == SETK_DOMAIN && !(s->dom = domset_new())) {
		free(s);
		return NULL;
	}
	return s;
}

void set_free(struct set *s)
{
	if (!s)
		return;
	free(s->vals);
	free(s->ivs);
	free(s->prefixes);
	domset_free(s->dom);
	free(s);
}

enum set_kind set_kind(const struct set *s)
{
	return s->kind;
}

/* Make room for one more item of SIZE bytes in *ARR (doubling). */
static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static u128 load128(const uint8_t b[16])
{
	u128 v = 0;

	for (int i = 0; i < 16; i++)
		v = (v << 8) | b[i];
	return v;
}

int set_add_u32(struct set *s, uint32_t lo, uint32_t hi)
{
	if (s->kind != SETK_U32 || s->finished || lo > hi)
		return -EINVAL;
	if (lo == hi) {
		if (grow(&s->vals, s->n_vals, &s->cap_vals, sizeof(uint32_t)))
			return -ENOMEM;
		((uint32_t *)s->vals)[s->n_vals++] = lo;
		return 0;
	}
	if (grow(&s->ivs, s->n_ivs, &s->cap_ivs, sizeof(struct iv32)))
		return -ENOMEM;
	((struct iv32 *)s->ivs)[s->n_ivs++] = (struct iv32){ lo, hi };
	return 0;
}

int set_add_u128(struct set *s, const uint8_t lo[16], const uint8_t hi[16])
{
	u128 l = load128(lo), h = load128(hi);

	if (s->kind != SETK_U128 || s->finished || l > h)
		return -EINVAL;
	if (l == h) {
		if (grow(&s->vals, s->n_vals, &s->cap_vals, sizeof(u128)))
			return -ENOMEM;
		((u128 *)s->vals)[s->n_vals++] = l;
		return 0;
	}
	if (grow(&s->ivs, s->n_ivs, &s->cap_ivs, sizeof(struct iv128)))
		return -ENOMEM;
	((struct iv128 *)s->ivs)[s->n_ivs++] = (struct iv128){ l, h };
	return 0;
}

int set_add_str(struct set *s, const char *name)
{
	size_t len = strlen(name);
	struct name n = { { 0 } };

	if (s->kind != SETK_STR || s->finished)
		return -EINVAL;
	if (len && name[len - 1] == '*') {
		if (len - 1 >= NAME_LEN)
			return -EINVAL;
		memcpy(n.s, name, len - 1);
		for (size_t i = 0; i < s->n_prefixes; i++)
			if (!strcmp(s->prefixes[i].s, n.s))
				return 0;	/* a wildcard given twice */
		if (grow((void **)&s->prefixes, s->n_prefixes,
			 &s->cap_prefixes, sizeof(n)))
			return -ENOMEM;
		s->prefixes[s->n_prefixes++] = n;
		return 0;
	}
	if (len >= NAME_LEN)
		return -EINVAL;
	memcpy(n.s, name, len);
	if (grow(&s->vals, s->n_vals, &s->cap_vals, sizeof(n)))
		return -ENOMEM;
	((struct name *)s->vals)[s->n_vals++] = n;
	return 0;
}

int set_add_domain(struct set *s, const char *pattern, const char **why)
{
	char name[NAME_MAX_LEN + 1];
	unsigned flags;

	*why = "not a domain set";
	if (s->kind != SETK_DOMAIN || s->finished)
		return -EINVAL;
	if (domset_pattern(pattern, strlen(pattern), name, &flags, why))
		return -EINVAL;
	*why = "out of memory";
	return domset_add(s->dom, name, strlen(name), flags);
}

bool set_has_domain(const struct set *s, const char *name, size_t len,
		    const struct dom_probes *pr)
{
	return s->kind == SETK_DOMAIN && domset_match(s->dom, name, len, pr);
}

const struct domset *set_domset(const struct set *s)
{
	return s->kind == SETK_DOMAIN ? s->dom : NULL;
}

size_t set_bytes(const struct set *s)
{
	if (s->dom)
		return domset_bytes(s->dom);
	return 32 * (s->n_exact + s->n_ivs + s->n_prefixes);
}

/* Hashes: multiplicative, top BITS bits. */
static size_t hash32(uint32_t v, unsigned bits)
{
	return (size_t)(((uint64_t)v * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static size_t hash128(u128 v, unsigned bits)
{
	uint64_t x = (uint64_t)(v >> 64) * 0xff51afd7ed558ccdull ^ (uint64_t)v;

	return (size_t)((x * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static size_t hash_name(const struct name *n, unsigned bits)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < NAME_LEN && n->s[i]; i++)
		h = (h ^ (uint8_t)n->s[i]) * 0x100000001b3ull;
	return (size_t)((h * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static bool is_zero(const void *slot, enum set_kind k)
{
	if (k == SETK_U32)
		return *(const uint32_t *)slot == 0;
	if (k == SETK_U128)
		return *(const u128 *)slot == 0;
	return ((const struct name *)slot)->s[0] == '\0';
}

static size_t hash_of(const void *v, enum set_kind k, unsigned bits)
{
	if (k == SETK_U32)
		return hash32(*(const uint32_t *)v, bits);
	if (k == SETK_U128)
		return hash128(*(const u128 *)v, bits);
	return hash_name(v, bits);
}

/* Insert V into the table TAB; returns true if it was new. */
static bool tab_insert(void *tab, unsigned bits, enum set_kind k,
		       const void *v)
{
	size_t es = elem_size(k), mask = ((size_t)1 << bits) - 1;
	size_t i = hash_of(v, k, bits);

	for (;; i = (i + 1) & mask) {
		char *slot = (char *)tab + i * es;

		if (is_zero(slot, k)) {
			memcpy(slot, v, es);
			return true;
		}
		if (!memcmp(slot, v, es))
			return false;
	}
}

/* Turn the value array into a hash table at most half full. */
static int build_hash(struct set *s)
{
	size_t es = elem_size(s->kind);
	unsigned bits = 4;
	void *tab;

	while (((size_t)1 << bits) < s->n_vals * 2)
		bits++;
	tab = calloc((size_t)1 << bits, es);
	if (!tab)
		return -ENOMEM;
	s->n_exact = 0;
	for (size_t i = 0; i < s->n_vals; i++) {
		const char *v = (const char *)s->vals + i * es;

		if (is_zero(v, s->kind)) {
			s->n_exact += !s->has_zero;
			s->has_zero = true;
		} else if (tab_insert(tab, bits, s->kind, v)) {
			s->n_exact++;
		}
	}
	free(s->vals);
	s->vals = tab;
	s->bits = bits;
	return 0;
}

static int cmp_iv32(const void *a, const void *b)
{
	const struct iv32 *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_iv128(const void *a, const void *b)
{
	const struct iv128 *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sort and merge overlapping or touching intervals in place. */
static void merge_ivs(struct set *s)
{
	size_t n = 0;

	if (!s->n_ivs)
		return;
	if (s->kind == SETK_U32) {
		struct iv32 *v = s->ivs;

		qsort(v, s->n_ivs, sizeof(*v), cmp_iv32);
		for (size_t i = 1; i < s->n_ivs; i++) {
			if (v[n].hi == UINT32_MAX || v[i].lo <= v[n].hi + 1) {
				if (v[i].hi > v[n].hi)
					v[n].hi = v[i].hi;
			} else {
				v[++n] = v[i];
			}
		}
	} else {
		struct iv128 *v = s->ivs;

		qsort(v, s->n_ivs, sizeof(*v), cmp_iv128);
		for (size_t i = 1; i < s->n_ivs; i++) {
			if (v[n].hi == ~(u128)0 || v[i].lo <= v[n].hi + 1) {
				if (v[i].hi > v[n].hi)
					v[n].hi = v[i].hi;
			} else {
				v[++n] = v[i];
			}
		}
	}
	s->n_ivs = n + 1;
}

/* A handful of exact values: cheaper as intervals than as a hash. */
static int vals_to_ivs(struct set *s)
{
	for (size_t i = 0; i < s->n_vals; i++) {
		if (grow(&s->ivs, s->n_ivs, &s->cap_ivs, iv_size(s->kind)))
			return -ENOMEM;
		if (s->kind == SETK_U32) {
			uint32_t v = ((uint32_t *)s->vals)[i];

			((struct iv32 *)s->ivs)[s->n_ivs++] =
				(struct iv32){ v, v };
		} else {
			u128 v = ((u128 *)s->vals)[i];

			((struct iv128 *)s->ivs)[s->n_ivs++] =
				(struct iv128){ v, v };
		}
	}
	free(s->vals);
	s->vals = NULL;
	s->n_vals = 0;
	return 0;
}

int set_finish(struct set *s)
{
	int err;

	if (s->finished)
		return 0;
	if (s->kind == SETK_DOMAIN) {
		domset_finish(s->dom);
		s->finished = true;
		return 0;
	}
	if (s->kind != SETK_STR && s->n_vals < FEW_EXACT)
		err = vals_to_ivs(s);
	else
		err = s->n_vals ? build_hash(s) : 0;
	if (err)
		return err;
	if (s->kind != SETK_STR)
		merge_ivs(s);
	s->finished = true;
	return 0;
}

static bool find32(const struct set *s, uint32_t v)
{
	const struct iv32 *iv = s->ivs;
	size_t lo = 0, hi = s->n_ivs;

	/* Find the last interval starting at or below V. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (iv[mid].lo <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && v <= iv[lo - 1].hi;
}

static bool find128(const struct set *s, u128 v)
{
	const struct iv128 *iv = s->ivs;
	size_t lo = 0, hi = s->n_ivs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (iv[mid].lo <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && v <= iv[lo - 1].hi;
}

bool set_has_u32(const struct set *s, uint32_t v)
{
	if (s->bits) {
		const uint32_t *tab = s->vals;
		size_t mask = ((size_t)1 << s->bits) - 1;

		if (v == 0) {
			if (s->has_zero)
				return true;
		} else {
			for (size_t i = hash32(v, s->bits); tab[i];
			     i = (i + 1) & mask)
				if (tab[i] == v)
					return true;
		}
	}
	return s->n_ivs && find32(s, v);
}

bool set_has_u128(const struct set *s, const uint8_t b[16])
{
	u128 v = load128(b);

	if (s->bits) {
		const u128 *tab = s->vals;
		size_t mask = ((size_t)1 << s->bits) - 1;

		if (v == 0) {
			if (s->has_zero)
				return true;
		} else {
			for (size_t i = hash128(v, s->bits); tab[i];
			     i = (i + 1) & mask)
				if (tab[i] == v)
					return true;
		}
	}
	return s->n_ivs && find128(s, v);
}

bool set_has_str(const struct set *s, const char *name)
{
	struct name n = { { 0 } };
	size_t len = strnlen(name, NAME_LEN);

	if (len >= NAME_LEN)
		return false;
	memcpy(n.s, name, len);
	if (s->bits && !len && s->has_zero)
		return true;
	if (s->bits && len) {
		const struct name *tab = s->vals;
		size_t mask = ((size_t)1 << s->bits) - 1;

		for (size_t i = hash_name(&n, s->bits); tab[i].s[0];
		     i = (i + 1) & mask)
			if (!memcmp(tab[i].s, n.s, NAME_LEN))
				return true;
	}
	for (size_t i = 0; i < s->n_prefixes; i++) {
		const char *p = s->prefixes[i].s;

		if (!strncmp(name, p, strlen(p)))
			return true;
	}
	return false;
}

size_t set_n_exact(const struct set *s)
{
	if (s->dom)
		return domset_count(s->dom);
	return s->n_exact;
}

size_t set_n_intervals(const struct set *s)
{
	return s->n_ivs;
}

size_t set_n_prefixes(const struct set *s)
{
	return s->n_prefixes;
}

static void store128(u128 v, uint8_t b[16])
{
	for (int i = 15; i >= 0; i--, v >>= 8)
		b[i] = (uint8_t)v;
}

/* One exact value of the hash (or the value 0, kept aside). */
static int walk_exact(const struct set *s, const void *v, set_walk_fn fn,
		      void *arg)
{
	uint8_t b[16];

	if (s->kind == SETK_U32)
		return fn(arg, v, v);
	if (s->kind == SETK_U128) {
		store128(*(const u128 *)v, b);
		return fn(arg, b, b);
	}
	return fn(arg, v, NULL);
}

static int walk_ivs(const struct set *s, set_walk_fn fn, void *arg)
{
	uint8_t lo[16], hi[16];
	int r = 0;

	for (size_t i = 0; !r && i < s->n_ivs; i++) {
		if (s->kind == SETK_U32) {
			const struct iv32 *iv = (const struct iv32 *)s->ivs + i;

			r = fn(arg, &iv->lo, &iv->hi);
		} else {
			const struct iv128 *iv =
				(const struct iv128 *)s->ivs + i;

			store128(iv->lo, lo);
			store128(iv->hi, hi);
			r = fn(arg, lo, hi);
		}
	}
	return r;
}

struct dom_walk {
	set_walk_fn fn;
	void *arg;
};

static int walk_dom(void *arg, const char *name, unsigned flags)
{
	const struct dom_walk *w = arg;
	char text[DOM_PATTERN_MAX + 1];

	domset_pattern_text(name, flags, text);
	return w->fn(w->arg, text, NULL);
}

int set_walk(const struct set *s, set_walk_fn fn, void *arg)
{
	static const char zero[sizeof(u128) > NAME_LEN ? sizeof(u128) :
			       NAME_LEN];
	size_t es = elem_size(s->kind);
	int r = 0;

	if (s->kind == SETK_DOMAIN)
		return domset_walk(s->dom, walk_dom,
				   &(struct dom_walk){ fn, arg });
	if (s->bits && s->has_zero)
		r = walk_exact(s, zero, fn, arg);
	for (size_t i = 0; !r && s->bits && i < (size_t)1 << s->bits; i++) {
		const char *slot = (const char *)s->vals + i * es;

		if (!is_zero(slot, s->kind))
			r = walk_exact(s, slot, fn, arg);
	}
	if (!r && s->kind != SETK_STR)
		r = walk_ivs(s, fn, arg);
	for (size_t i = 0; !r && i < s->n_prefixes; i++)
		r = fn(arg, s->prefixes[i].s, s->prefixes[i].s);
	return r;
}
