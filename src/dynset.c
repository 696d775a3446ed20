/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dynset.c - runtime elements of a named set in an RCU lock-free hash. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu-qsbr.h>
#include <urcu/rculfhash.h>

#include "domset.h"
#include "dynset.h"
#include "names.h"

#define DEAD	1ull	/* expiry of an element being swept: in the past */
#define MIN_BUCKETS	64
#define DYN_CACHELINE	64

/* A domain set's element (SETK_DOMAIN) is a pattern: its key's first 8
 * bytes are the name's hash (domset.h's, that a lookup's probes carry),
 * its name and DOM_* flags follow the element. */
struct dynelem {
	struct cds_lfht_node node;
	uint8_t key[16];
	_Atomic uint64_t expires;	/* CLOCK_MONOTONIC ns; 0: never */
	uint8_t origin;			/* enum dyn_origin */
	uint8_t flags;			/* domain: DOM_* */
	uint8_t len;			/* domain: the name's length */
	struct dynelem *next_free;	/* removed, waiting for a grace period */
	char name[];			/* domain: the name, NUL-terminated */
};

/* What a table lookup compares: a value's 16 bytes, or (NAME set) a
 * domain pattern, whose name and flags must be the element's; with
 * ROLE, a live element of the name with any of FLAGS (a packet's
 * lookup: the name itself, or a name it is below). */
struct dynkey {
	const uint8_t *k;
	const char *name;
	size_t len;
	unsigned flags;
	bool role;
};

/*
 * What every lookup reads (ht, used) sits on a cache line of its own,
 * apart from the counters every add and delete writes, so that a change
 * does not make the next lookup on another CPU miss on them.
 */
struct dynset {
	enum set_kind kind;
	int type;
	unsigned refs;			/* main thread only */
	struct cds_lfht *ht;
	_Atomic bool used;		/* an element was ever added: until
					 * then a lookup is a load */
	_Atomic size_t max;
	_Atomic uint64_t timeout_ns;
	_Alignas(DYN_CACHELINE) _Atomic size_t n;
	_Atomic size_t timed;		/* of them with an expiry: the
					 * sweeper skips a set without */
	_Atomic uint64_t adds, deletes, expiries, full;
	_Atomic size_t name_bytes;	/* domain: the elements' names */
	struct dynelem *removed;	/* main thread only */
	size_t buckets;			/* main thread only */
};

uint64_t dynset_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A domain pattern's hash is its name's alone: the patterns of a name
 * share a bucket, where a lookup by role finds any of them. */
static unsigned long hash_key(const struct dynkey *dk)
{
	uint64_t a, b = 0;

	memcpy(&a, dk->k, 8);
	if (!dk->name)
		memcpy(&b, dk->k + 8, 8);
	a = (a ^ (b * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;
	return (unsigned long)(a ^ (a >> 29));
}

/* Acquire: the key and origin another thread wrote before it released
 * the expiry (liburcu's own publication is invisible to TSan). */
static uint64_t expires_of(const struct dynelem *e)
{
	return atomic_load_explicit(&e->expires, memory_order_acquire);
}

static bool live(const struct dynelem *e)
{
	uint64_t exp = expires_of(e);

	return exp == 0 || dynset_now() < exp;
}

static int match_key(struct cds_lfht_node *node, const void *key)
{
	const struct dynelem *e = caa_container_of(node, struct dynelem, node);
	const struct dynkey *dk = key;

	(void)expires_of(e);
	if (!dk->name)
		return memcmp(e->key, dk->k, 16) == 0;
	if (e->len != dk->len || memcmp(e->key, dk->k, 8) ||
	    memcmp(e->name, dk->name, dk->len))
		return 0;
	if (dk->role)
		return (e->flags & dk->flags) && live(e);
	return e->flags == dk->flags;
}

struct dynset *dynset_new(enum set_kind kind, int type, size_t max,
			  uint64_t timeout_ns)
{
	struct dynset *s = aligned_alloc(DYN_CACHELINE, sizeof(*s));

	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->type = type;
	s->refs = 1;
	atomic_init(&s->max, max);
	atomic_init(&s->timeout_ns, timeout_ns);
	return s;
}

struct dynset *dynset_ref(struct dynset *s)
{
	s->refs++;
	return s;
}

static void free_removed(struct dynset *s)
{
	while (s->removed) {
		struct dynelem *e = s->removed;

		s->removed = e->next_free;
		free(e);
	}
}

void dynset_unref(struct dynset *s)
{
	struct cds_lfht_iter it;
	struct dynelem *e;

	if (!s || --s->refs)
		return;
	if (!s->ht) {
		free(s);
		return;
	}
	cds_lfht_for_each_entry(s->ht, &it, e, node) {
		if (cds_lfht_del(s->ht, &e->node) == 0) {
			e->next_free = s->removed;
			s->removed = e;
		}
	}
	/* The caller guarantees no reader is left. */
	free_removed(s);
	cds_lfht_destroy(s->ht, NULL);
	free(s);
}

enum set_kind dynset_kind(const struct dynset *s)
{
	return s->kind;
}

int dynset_type(const struct dynset *s)
{
	return s->type;
}

void dynset_configure(struct dynset *s, size_t max, uint64_t timeout_ns)
{
	atomic_store_explicit(&s->max, max, memory_order_relaxed);
	atomic_store_explicit(&s->timeout_ns, timeout_ns, memory_order_relaxed);
}

uint64_t dynset_default_timeout(const struct dynset *s)
{
	return atomic_load_explicit(&s->timeout_ns, memory_order_relaxed);
}

/* The table, once dynset_prepare() made it (acquire: its insides). */
static struct cds_lfht *table(const struct dynset *s)
{
	return __atomic_load_n(&s->ht, __ATOMIC_ACQUIRE);
}

int dynset_prepare(struct dynset *s)
{
	struct cds_lfht *ht;

	if (s->ht)
		return 0;
	/* No CDS_LFHT_AUTO_RESIZE: that resizes in a thread of liburcu's
	 * that workers would wake (a futex) from the packet path; the main
	 * thread grows the table instead (dynset_grow()). liburcu asserts
	 * rather than fail on ENOMEM here: made only when first needed. */
	ht = cds_lfht_new(MIN_BUCKETS, MIN_BUCKETS, 0, 0, NULL);
	if (!ht)
		return -ENOMEM;
	s->buckets = MIN_BUCKETS;
	__atomic_store_n(&s->ht, ht, __ATOMIC_RELEASE);
	return 0;
}

size_t dynset_max(const struct dynset *s)
{
	return atomic_load_explicit(&s->max, memory_order_relaxed);
}

static struct dynelem *find(const struct dynset *s, const struct dynkey *k)
{
	struct cds_lfht *ht = table(s);
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	if (!ht)
		return NULL;
	cds_lfht_lookup(ht, hash_key(k), match_key, k, &it);
	node = cds_lfht_iter_get_node(&it);
	return node ? caa_container_of(node, struct dynelem, node) : NULL;
}

static bool has(const struct dynset *s, const struct dynkey *k)
{
	const struct dynelem *e;

	if (!atomic_load_explicit(&s->used, memory_order_relaxed))
		return false;
	e = find(s, k);
	return e && live(e);
}

bool dynset_has_u32(const struct dynset *s, uint32_t v)
{
	uint8_t k[16] = { 0 };

	memcpy(k, &v, sizeof(v));
	return has(s, &(struct dynkey){ .k = k });
}

bool dynset_has_u128(const struct dynset *s, const uint8_t v[16])
{
	return has(s, &(struct dynkey){ .k = v });
}

/* The key of pattern N, whose name hashes to H, into K. */
static struct dynkey name_key(const struct dyn_name *n, uint64_t h,
			      uint8_t k[16])
{
	memset(k, 0, 16);
	memcpy(k, &h, 8);
	return (struct dynkey){ .k = k, .name = n->name, .len = n->len,
				.flags = n->flags };
}

static struct dynkey pattern_key(const struct dyn_name *n, uint8_t k[16])
{
	return name_key(n, domset_name_hash(n->name, n->len), k);
}

bool dynset_has_pattern(const struct dynset *s, const struct dyn_name *n)
{
	uint8_t k[16];
	struct dynkey dk = pattern_key(n, k);

	return has(s, &dk);
}

bool dynset_match_name(const struct dynset *s, const char *name, size_t len,
		       const struct dom_probes *pr)
{
	struct dom_probes own;

	if (!atomic_load_explicit(&s->used, memory_order_relaxed) || !len)
		return false;
	if (!pr) {
		domset_probes(name, len, &own);
		pr = &own;
	}
	for (unsigned i = 0; i < pr->n; i++) {
		struct dyn_name n = { name + pr->at[i], len - pr->at[i],
				      pr->at[i] ? DOM_BELOW : DOM_EXACT };
		uint8_t k[16];
		struct dynkey dk = name_key(&n, pr->p[i].h, k);

		dk.role = true;
		if (find(s, &dk))
			return true;
	}
	return false;
}

static uint64_t expiry(uint64_t timeout_ns)
{
	return timeout_ns ? dynset_now() + timeout_ns : 0;
}

/* Count an element's expiry going from OLD to NEW. */
static void note_timed(struct dynset *s, uint64_t old, uint64_t new)
{
	if (!old && new)
		atomic_fetch_add_explicit(&s->timed, 1, memory_order_relaxed);
	else if (old && !new)
		atomic_fetch_sub_explicit(&s->timed, 1, memory_order_relaxed);
}

/* An element already there: revive it if expired, refresh if asked. */
static int add_existing(struct dynset *s, struct dynelem *e,
			uint64_t timeout_ns, bool refresh)
{
	uint64_t nexp;

	uint64_t exp = expires_of(e);
	bool expired = exp && dynset_now() >= exp;

	if (exp == DEAD)
		return -EAGAIN;	/* being swept: add anew after the sweep */
	if (!expired && !refresh)
		return 0;
	/* Lost to the sweeper: it is gone, add anew next time. */
	nexp = expiry(timeout_ns);
	if (!atomic_compare_exchange_strong_explicit(&e->expires, &exp,
			nexp, memory_order_relaxed, memory_order_relaxed))
		return -EAGAIN;
	note_timed(s, exp, nexp);
	return expired ? 1 : 0;
}

static int add_key(struct dynset *s, const struct dynkey *dk,
		   uint64_t timeout_ns, enum dyn_origin origin, bool refresh)
{
	struct cds_lfht *ht = table(s);
	struct cds_lfht_node *got;
	struct dynelem *e = find(s, dk);
	size_t n, extra = dk->name ? dk->len + 1 : 0;
	int rc;

	if (!ht)
		return -ENOMEM;	/* dynset_prepare() was not called */
	if (e) {
		rc = add_existing(s, e, timeout_ns, refresh);
		if (rc == 1)
			atomic_fetch_add_explicit(&s->adds, 1,
						  memory_order_relaxed);
		return rc == -EAGAIN ? 0 : rc;
	}
	n = atomic_fetch_add_explicit(&s->n, 1, memory_order_relaxed);
	if (n >= atomic_load_explicit(&s->max, memory_order_relaxed)) {
		atomic_fetch_sub_explicit(&s->n, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->full, 1, memory_order_relaxed);
		return -ENOSPC;
	}
	e = calloc(1, sizeof(*e) + extra);
	if (!e) {
		atomic_fetch_sub_explicit(&s->n, 1, memory_order_relaxed);
		return -ENOMEM;
	}
	if (!atomic_load_explicit(&s->used, memory_order_relaxed))
		atomic_store_explicit(&s->used, true, memory_order_relaxed);
	memcpy(e->key, dk->k, 16);
	e->origin = (uint8_t)origin;
	if (dk->name) {
		e->flags = (uint8_t)dk->flags;
		e->len = (uint8_t)dk->len;
		memcpy(e->name, dk->name, dk->len);
	}
	atomic_store_explicit(&e->expires, expiry(timeout_ns),
			      memory_order_release);
	cds_lfht_node_init(&e->node);
	got = cds_lfht_add_unique(ht, hash_key(dk), match_key, dk, &e->node);
	if (got != &e->node) {
		/* Another thread added it first. */
		free(e);
		atomic_fetch_sub_explicit(&s->n, 1, memory_order_relaxed);
		return 0;
	}
	note_timed(s, 0, timeout_ns);
	atomic_fetch_add_explicit(&s->adds, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->name_bytes, extra, memory_order_relaxed);
	return 1;
}

int dynset_add(struct dynset *s, const uint8_t v[16], uint64_t timeout_ns,
	       enum dyn_origin origin, bool refresh)
{
	return add_key(s, &(struct dynkey){ .k = v }, timeout_ns, origin,
		       refresh);
}

int dynset_add_pattern(struct dynset *s, const struct dyn_name *n,
		       uint64_t timeout_ns, enum dyn_origin origin,
		       bool refresh)
{
	uint8_t k[16];
	struct dynkey dk;

	if (!n->len || n->len > NAME_MAX_LEN || !n->flags)
		return -EINVAL;
	dk = pattern_key(n, k);
	return add_key(s, &dk, timeout_ns, origin, refresh);
}

static void unlink_elem(struct dynset *s, struct dynelem *e)
{
	if (cds_lfht_del(s->ht, &e->node) != 0)
		return;
	note_timed(s, expires_of(e),
		   0);
	atomic_fetch_sub_explicit(&s->n, 1, memory_order_relaxed);
	if (e->len)
		atomic_fetch_sub_explicit(&s->name_bytes, e->len + 1u,
					  memory_order_relaxed);
	e->next_free = s->removed;
	s->removed = e;
}

static int del_key(struct dynset *s, const struct dynkey *dk)
{
	struct dynelem *e = find(s, dk);

	if (!e || !live(e))
		return 0;
	unlink_elem(s, e);
	atomic_fetch_add_explicit(&s->deletes, 1, memory_order_relaxed);
	return 1;
}

int dynset_del(struct dynset *s, const uint8_t v[16])
{
	return del_key(s, &(struct dynkey){ .k = v });
}

int dynset_del_pattern(struct dynset *s, const struct dyn_name *n)
{
	uint8_t k[16];
	struct dynkey dk = pattern_key(n, k);

	return del_key(s, &dk);
}

static int undo_key(struct dynset *s, const struct dynkey *dk)
{
	struct dynelem *e = find(s, dk);

	if (!e)
		return 0;
	unlink_elem(s, e);
	atomic_fetch_sub_explicit(&s->adds, 1, memory_order_relaxed);
	return 1;
}

int dynset_undo_add(struct dynset *s, const uint8_t v[16])
{
	return undo_key(s, &(struct dynkey){ .k = v });
}

int dynset_undo_add_pattern(struct dynset *s, const struct dyn_name *n)
{
	uint8_t k[16];
	struct dynkey dk = pattern_key(n, k);

	return undo_key(s, &dk);
}

size_t dynset_flush(struct dynset *s)
{
	struct cds_lfht_iter it;
	struct dynelem *e;
	size_t n = 0;

	if (!s->ht)
		return 0;
	cds_lfht_for_each_entry(s->ht, &it, e, node) {
		n += live(e);
		unlink_elem(s, e);
	}
	atomic_fetch_add_explicit(&s->deletes, n, memory_order_relaxed);
	return n;
}

size_t dynset_sweep(struct dynset *s, uint64_t now)
{
	struct cds_lfht_iter it;
	struct dynelem *e;
	size_t n = 0;

	if (!s->ht || atomic_load_explicit(&s->timed, memory_order_relaxed) == 0)
		return 0;
	cds_lfht_for_each_entry(s->ht, &it, e, node) {
		uint64_t exp = expires_of(e);

		if (!exp || exp > now)
			continue;
		/* A worker may refresh it at this moment: whoever swaps
		 * the expiry first wins. */
		if (exp != DEAD &&
		    !atomic_compare_exchange_strong_explicit(&e->expires, &exp,
				DEAD, memory_order_relaxed,
				memory_order_relaxed))
			continue;
		unlink_elem(s, e);
		n++;
	}
	atomic_fetch_add_explicit(&s->expiries, n, memory_order_relaxed);
	return n;
}

void dynset_grow(struct dynset *s)
{
	size_t n = atomic_load_explicit(&s->n, memory_order_relaxed);
	size_t b = s->buckets;

	if (!s->ht || n <= b)
		return;
	while (b < n)
		b *= 2;
	cds_lfht_resize(s->ht, b);
	s->buckets = b;
}

void dynset_reclaim(struct dynset *s)
{
	if (!s->removed)
		return;
	synchronize_rcu();
	free_removed(s);
}

int dynset_walk(const struct dynset *s, uint64_t now, dynset_walk_fn fn,
		void *arg)
{
	struct cds_lfht *ht = table(s);
	struct cds_lfht_iter it;
	struct dynelem *e;

	if (!ht)
		return 0;
	cds_lfht_for_each_entry(ht, &it, e, node) {
		uint64_t exp = expires_of(e);
		int rc;

		if (exp && exp <= now)
			continue;
		rc = fn(arg, &(struct dyn_elem){
				.v = e->key,
				.n = { e->name, e->len, e->flags },
				.origin = (enum dyn_origin)e->origin,
				.left_ns = exp ? exp - now : 0 });
		if (rc)
			return rc;
	}
	return 0;
}

void dynset_get_stats(const struct dynset *s, struct dynset_stats *out)
{
	out->n = atomic_load_explicit(&s->n, memory_order_relaxed);
	out->max = atomic_load_explicit(&s->max, memory_order_relaxed);
	out->adds = atomic_load_explicit(&s->adds, memory_order_relaxed);
	out->deletes = atomic_load_explicit(&s->deletes, memory_order_relaxed);
	out->expiries = atomic_load_explicit(&s->expiries,
					     memory_order_relaxed);
	out->full = atomic_load_explicit(&s->full, memory_order_relaxed);
	/* An element, plus about one bucket pointer per element (the table
	 * keeps its load near one). */
	out->memory = sizeof(*s) + out->n * sizeof(struct dynelem) +
		      s->buckets * 2 * sizeof(void *) +
		      atomic_load_explicit(&s->name_bytes,
					   memory_order_relaxed);
}
