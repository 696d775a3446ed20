/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * domset.c - the domain-name set: hashed label suffixes, a string arena,
 * and a filter in front of them. A name's probe of a 1,000,000-name
 * table is a cache miss (about 250 ns measured in the benchmark's VM);
 * most names asked about are not in the set, so domset_finish() builds a
 * blocked Bloom filter of the hashes (8 bits per table slot, so at least
 * 16 per name: 2 MB, one huge page, for 1,000,000 names), and a probe
 * whose filter word lacks one of its 3 bits is a miss without touching
 * the table. A table slot is 8 bytes, the hash's top half and the name's
 * arena offset side by side, so a probe that passes the filter reads one
 * line of the table and then the name; the name's DOM_* flags are the
 * byte before it in the arena.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "domset.h"
#include "names.h"

/* A gigabyte of names at most: offsets fit 32 bits with room to spare. */
#define ARENA_MAX ((size_t)1 << 30)

/* A table slot: the high half of the name's hash (the low half chose the
 * slot) and the offset of the name in the arena; offset 0: empty. */
struct dom_slot {
	uint32_t tag;
	uint32_t off;
};

struct domset {
	struct dom_slot *slot;
	size_t cap, n;		/* cap a power of two, n <= cap / 2 */
	char *arena;		/* per name, in order first added: its DOM_*
				 * flags byte, then the name, NUL-ended */
	size_t used, arena_cap;
	uint64_t *filter;	/* after domset_finish(): fmask + 1 words */
	size_t fmask;
};

/* The filter's size in bytes (fmask + 1 words). */
static size_t filter_bytes(const struct domset *d)
{
	return (d->fmask + 1) * sizeof(*d->filter);
}

struct domset *domset_new(void)
{
	return calloc(1, sizeof(struct domset));
}

void domset_free(struct domset *d)
{
	if (!d)
		return;
	bigmem_free(d->slot, d->cap * sizeof(*d->slot));
	bigmem_free(d->arena, d->arena_cap);
	bigmem_free(d->filter, filter_bytes(d));
	free(d);
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1;
}

/*
 * A name's hash folds its labels from the last one back, 8 bytes at a
 * step: every label suffix's hash is a step of the full name's (the
 * state after its first label), so one pass over a name gives them all
 * (domset_probes()). Only equal names need equal hashes (a probe
 * compares the name itself), and nothing hashed outlives the process.
 */
#define HASH_BASIS 0xcbf29ce484222325ull

static uint64_t hash_step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

static uint64_t le_word(const char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return le64toh(w);
}

/* The label NAME[A, B) into hash state H: its length, its 8-byte words,
 * then its last 1 to 7 bytes as one word (read with the bytes before
 * them when NAME has 8 before B, else out of NAME's first word when NAME,
 * LEN bytes, has 8: no byte past NAME's end is read). */
static uint64_t label_step(uint64_t h, const char *name, size_t len,
			   size_t a, size_t b)
{
	size_t n = b - a;
	uint64_t w = 0;

	h = hash_step(h, n);
	for (; n >= 8; a += 8, n -= 8)
		h = hash_step(h, le_word(name + a));
	if (!n)
		return h;
	if (b >= 8) {
		w = le_word(name + b - 8) >> (8 * (8 - n));
	} else if (len >= 8) {
		w = le_word(name) >> (8 * a) & ((1ull << (8 * n)) - 1);
	} else {
		for (size_t i = 0; i < n; i++)
			w |= (uint64_t)(uint8_t)name[a + i] << (8 * i);
	}
	return hash_step(h, w);
}

#define BYTES_LOW 0x7f7f7f7f7f7f7f7full

/* The high bit of each byte of W that is a '.', exactly (no carry from
 * one byte into the next). */
static uint64_t dots(uint64_t w)
{
	uint64_t x = w ^ 0x2e2e2e2e2e2e2e2eull;

	return ~(((x & BYTES_LOW) + BYTES_LOW) | x | BYTES_LOW);
}

/* The byte after the last dot of Z (dots()' bits of a word at AT). */
static size_t after_dot(uint64_t z, size_t at)
{
	return at + (size_t)(63 - __builtin_clzll(z)) / 8 + 1;
}

/* The start of the label that ends at B in NAME (LEN bytes): a word at a
 * time back from B, the name's first word masked to the bytes before B,
 * a byte at a time only in a name shorter than a word. */
static size_t label_start(const char *name, size_t len, size_t b)
{
	uint64_t z;

	for (; b >= 8; b -= 8)
		if ((z = dots(le_word(name + b - 8))))
			return after_dot(z, b - 8);
	if (b && len >= 8) {
		z = dots(le_word(name)) & ((1ull << (8 * b)) - 1);
		return z ? after_dot(z, 0) : 0;
	}
	while (b && name[b - 1] != '.')
		b--;
	return b;
}

static uint64_t filter_bits(uint64_t h);

/*
 * Fold NAME's labels into a hash state, the last label first; returns
 * the state after the whole name (hash_name() mixes it). With PR
 * (domset_probes()), each label suffix that is not empty also gets its
 * probe there, shortest first, at most DOM_SUFFIX_MAX.
 */
static uint64_t fold(const char *name, size_t len, struct dom_probes *pr)
{
	uint64_t state = HASH_BASIS;
	size_t b = len, a;

	for (;;) {
		a = label_start(name, len, b);
		state = label_step(state, name, len, a, b);
		if (pr && a < len && pr->n < DOM_SUFFIX_MAX) {
			struct dom_probe *q = &pr->p[pr->n];

			q->h = mix(state);
			q->bits = filter_bits(q->h);
			pr->at[pr->n++] = (uint8_t)a;
		}
		if (!a)
			return state;
		b = a - 1;
	}
}

static uint64_t hash_name(const char *s, size_t len)
{
	return mix(fold(s, len, NULL));
}

uint64_t domset_name_hash(const char *name, size_t len)
{
	return hash_name(name, len);
}

static uint32_t tag_of(uint64_t h)
{
	return (uint32_t)(h >> 32);
}

/* The slot of NAME, or of the empty slot where it would go. */
static size_t find(const struct domset *d, uint64_t h, const char *name,
		   size_t len)
{
	size_t mask = d->cap - 1, i = (size_t)h & mask;

	for (; d->slot[i].off; i = (i + 1) & mask) {
		const char *s;

		if (d->slot[i].tag != tag_of(h))
			continue;
		s = d->arena + d->slot[i].off;
		if (!memcmp(s, name, len) && s[len] == '\0')
			break;
	}
	return i;
}

bool domset_holds(const struct domset *d, const char *name, size_t len,
		  unsigned flags)
{
	size_t i;

	if (!d->n || !len)
		return false;
	i = find(d, hash_name(name, len), name, len);
	return d->slot[i].off &&
	       ((uint8_t)d->arena[d->slot[i].off - 1] & flags) == flags;
}

/* Call FN(D, ARG, NAME, LEN, OFF) for every name, in arena order. */
static int each_name(const struct domset *d,
		     int (*fn)(const struct domset *, void *, const char *,
			       size_t, uint32_t), void *arg)
{
	size_t at = 0;
	int r = 0;

	while (!r && at < d->used) {
		const char *s = d->arena + at + 1;
		size_t len = strlen(s);

		r = fn(d, arg, s, len, (uint32_t)(at + 1));
		at += len + 2;
	}
	return r;
}

/* Put the name at OFF into the table of ND (which lacks it). */
static int put_name(const struct domset *d, void *nd, const char *name,
		    size_t len, uint32_t off)
{
	struct domset *t = nd;
	uint64_t h = hash_name(name, len);
	size_t i = find(t, h, name, len);

	(void)d;
	t->slot[i].tag = tag_of(h);
	t->slot[i].off = off;
	return 0;
}

/* Double the table; the names are hashed again from the arena, read in
 * order (the slots keep only half of each hash). */
static int grow_table(struct domset *d)
{
	size_t ncap = d->cap ? d->cap * 2 : 64;
	struct domset nd = *d;

	nd.cap = ncap;
	nd.slot = bigmem_alloc(ncap * sizeof(*nd.slot));
	if (!nd.slot)
		return -ENOMEM;
	each_name(d, put_name, &nd);
	bigmem_free(d->slot, d->cap * sizeof(*d->slot));
	*d = nd;
	return 0;
}

/* Room in the arena for a name of LEN bytes, its flags byte and NUL. */
static int arena_room(struct domset *d, size_t len)
{
	size_t ncap = d->arena_cap ? d->arena_cap * 2 : 4096;
	char *na;

	if (d->used + len + 2 <= d->arena_cap)
		return 0;
	if (ncap > ARENA_MAX)
		ncap = ARENA_MAX;
	if (d->used + len + 2 > ncap)
		return -ENOMEM;		/* a gigabyte of names */
	na = bigmem_resize(d->arena, d->arena_cap, ncap);
	if (!na)
		return -ENOMEM;
	d->arena = na;
	d->arena_cap = ncap;
	return 0;
}

int domset_add(struct domset *d, const char *name, size_t len, unsigned flags)
{
	uint64_t h = hash_name(name, len);
	size_t i;

	if (!len || len > NAME_MAX_LEN || !(flags & (DOM_EXACT | DOM_BELOW)))
		return -EINVAL;
	if (d->filter) {	/* an add after domset_finish(): no filter */
		bigmem_free(d->filter, filter_bytes(d));
		d->filter = NULL;
	}
	if (2 * (d->n + 1) > d->cap && grow_table(d))
		return -ENOMEM;
	i = find(d, h, name, len);
	if (d->slot[i].off) {
		d->arena[d->slot[i].off - 1] |= (char)flags;
		return 0;
	}
	if (arena_room(d, len))
		return -ENOMEM;
	d->arena[d->used] = (char)flags;
	memcpy(d->arena + d->used + 1, name, len);
	d->arena[d->used + 1 + len] = '\0';
	d->slot[i].tag = tag_of(h);
	d->slot[i].off = (uint32_t)(d->used + 1);
	d->used += len + 2;
	d->n++;
	return 0;
}

/* The filter word of hash H and the 3 bits H sets in it. */
static uint64_t filter_bits(uint64_t h)
{
	return 1ull << (h >> 58) | 1ull << ((h >> 52) & 63) |
	       1ull << ((h >> 46) & 63);
}

static size_t filter_word(const struct domset *d, uint64_t h)
{
	return (size_t)(h >> 20) & d->fmask;
}

/* Might hash H, whose filter_bits() are B, be in the set? Always yes
 * before domset_finish(). */
static inline bool filter_maybe(const struct domset *d, uint64_t h,
				uint64_t b)
{
	return !d->filter || (d->filter[filter_word(d, h)] & b) == b;
}

static int filter_name(const struct domset *d, void *filter,
		       const char *name, size_t len, uint32_t off)
{
	uint64_t h = hash_name(name, len);

	(void)off;
	((uint64_t *)filter)[filter_word(d, h)] |= filter_bits(h);
	return 0;
}

static void build_filter(struct domset *d)
{
	size_t words = d->cap / 8 ? d->cap / 8 : 1;	/* 8 bits a slot */
	uint64_t *filter;

	bigmem_free(d->filter, filter_bytes(d));
	d->filter = NULL;
	d->fmask = words - 1;
	filter = bigmem_alloc(words * sizeof(*filter));
	if (!filter)
		return;		/* no filter: every probe goes to the table */
	each_name(d, filter_name, filter);
	d->filter = filter;
}

void domset_finish(struct domset *d)
{
	char *na;

	if (d->cap)
		build_filter(d);

	if (d->used && d->used < d->arena_cap &&
	    (na = bigmem_resize(d->arena, d->arena_cap, d->used))) {
		d->arena = na;
		d->arena_cap = d->used;
	}
}

void domset_probes(const char *name, size_t len, struct dom_probes *pr)
{
	pr->n = 0;
	if (len && len <= NAME_MAX_LEN)
		fold(name, len, pr);
}

/* The slot of probe K of PR: of the name at NAME + PR->at[K], or the
 * empty slot that ends its chain. */
static size_t probe_slot(const struct domset *d, const struct dom_probes *pr,
			 unsigned k, const char *name, size_t len)
{
	return find(d, pr->p[k].h, name + pr->at[k], len - pr->at[k]);
}

/*
 * Is NAME, or a name it is below, in the set? Each label suffix is one
 * probe. The probes' memory is asked for before any is read (the filter
 * words, then the table slots of the suffixes the filter lets through),
 * so their cache misses overlap instead of adding up: by the look-ahead
 * (domset_prefetch()) when it made PR, else here.
 */
bool domset_match(const struct domset *d, const char *name, size_t len,
		  const struct dom_probes *pr)
{
	struct dom_probes own;

	if (!d->n || !len)
		return false;
	if (!pr) {
		domset_probes(name, len, &own);
		pr = &own;
		domset_prefetch(d, pr, DOM_AHEAD_FILTER, NULL);
		domset_prefetch(d, pr, DOM_AHEAD_SLOTS, NULL);
	}
	for (unsigned k = 0; k < pr->n; k++) {
		size_t slot;
		unsigned f;

		if (!filter_maybe(d, pr->p[k].h, pr->p[k].bits))
			continue;
		slot = probe_slot(d, pr, k, name, len);
		if (!d->slot[slot].off)
			continue;
		f = (uint8_t)d->arena[d->slot[slot].off - 1];
		if (f & (pr->at[k] == 0 ? DOM_EXACT : DOM_BELOW))
			return true;
	}
	return false;
}

/* P into W, or asked for now without W. */
static inline void want(struct bigmem_wants *w, const void *p)
{
	if (w)
		bigmem_want(w, p);
	else
		__builtin_prefetch(p);
}

/* DOM_AHEAD_NAMES for hash H: the flags and name of every slot of its
 * chain whose tag is H's (the slots arrived after DOM_AHEAD_SLOTS). */
static void want_names(const struct domset *d, uint64_t h,
		       struct bigmem_wants *w)
{
	size_t mask = d->cap - 1, i = (size_t)h & mask;

	for (; d->slot[i].off; i = (i + 1) & mask)
		if (d->slot[i].tag == tag_of(h))
			want(w, d->arena + d->slot[i].off - 1);
}

BIGMEM_PREFETCH_ONLY
void domset_prefetch(const struct domset *d, const struct dom_probes *pr,
		     enum dom_ahead step, struct bigmem_wants *w)
{
	if (!d->n || !d->filter)
		return;
	for (unsigned k = 0; k < pr->n; k++) {
		uint64_t h = pr->p[k].h;

		if (step == DOM_AHEAD_FILTER)
			want(w, &d->filter[filter_word(d, h)]);
		else if (!filter_maybe(d, h, pr->p[k].bits))
			continue;
		else if (step == DOM_AHEAD_SLOTS)
			want(w, &d->slot[(size_t)h & (d->cap - 1)]);
		else
			want_names(d, h, w);
	}
}

size_t domset_count(const struct domset *d)
{
	return d->n;
}

size_t domset_bytes(const struct domset *d)
{
	return sizeof(*d) + d->cap * sizeof(*d->slot) + d->arena_cap +
	       (d->filter ? filter_bytes(d) : 0);
}

struct walk {
	domset_walk_fn fn;
	void *arg;
};

static int walk_name(const struct domset *d, void *arg, const char *name,
		     size_t len, uint32_t off)
{
	struct walk *w = arg;

	(void)len;
	return w->fn(w->arg, name, (uint8_t)d->arena[off - 1]);
}

int domset_walk(const struct domset *d, domset_walk_fn fn, void *arg)
{
	struct walk w = { fn, arg };

	return each_name(d, walk_name, &w);
}

int domset_pattern(const char *text, size_t len, char *name, unsigned *flags,
		   const char **why)
{
	struct name_out o;
	size_t i;

	*flags = DOM_EXACT;
	if (len >= 2 && text[0] == '*' && text[1] == '.') {
		*flags = DOM_BELOW;
		text += 2;
		len -= 2;
	} else if (len >= 1 && text[0] == '.') {
		*flags = DOM_EXACT | DOM_BELOW;
		text++;
		len--;
	}
	for (i = 0; i < len; i++) {
		if ((unsigned char)text[i] >= 0x80) {
			*why = "not an ASCII name: write the A-label "
			       "(xn--..., e.g. from idn2)";
			return -EINVAL;
		}
	}
	if (memchr(text, '*', len)) {
		*why = "'*' only as \"*.\" at the start";
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		char c = text[i];

		if (!(c == '-' || c == '_' || c == '.' ||
		      (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z'))) {
			*why = "not a domain name: letters, digits, '-', '_' "
			       "and dots only";
			return -EINVAL;
		}
	}
	if (name_normalize(text, len, &o) < 0) {
		*why = "not a domain name: labels of 1-63 printable "
		       "characters, 253 in all, no blanks";
		return -EINVAL;
	}
	if (*flags == DOM_BELOW && o.len + 2 > NAME_MAX_LEN) {
		*why = "no name below it fits in 253 characters: \"*.\" and "
		       "the name, 253 in all";
		return -EINVAL;
	}
	memcpy(name, o.name, (size_t)o.len + 1);
	return 0;
}

void domset_pattern_text(const char *name, unsigned flags, char *out)
{
	const char *pre = flags == DOM_BELOW ? "*." :
			  flags == (DOM_EXACT | DOM_BELOW) ? "." : "";

	strcpy(out, pre);
	strcat(out, name);
}
