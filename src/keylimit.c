/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keylimit.c - per-key token buckets in an RCU lock-free hash table. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <urcu-qsbr.h>
#include <urcu/rculfhash.h>

#include "dynset.h"	/* dynset_now() */
#include "keylimit.h"
#include "limiter.h"

#define MIN_BUCKETS	64

struct kbucket {
	struct cds_lfht_node node;
	uint8_t key[16];
	_Atomic uint64_t tat;		/* limiter.h's TAT; 0: full */
	struct kbucket *next_free;
};

struct keylimit {
	struct cds_lfht *ht;
	struct limiter shape;		/* every key's cost and size */
	size_t max;
	_Atomic size_t n;
	_Atomic uint64_t full;
	size_t buckets;			/* main thread */
	struct kbucket *removed;	/* main thread */
};

static unsigned long hash_key(const uint8_t k[16])
{
	uint64_t a, b;

	memcpy(&a, k, 8);
	memcpy(&b, k + 8, 8);
	a = (a ^ (b * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;
	return (unsigned long)(a ^ (a >> 29));
}

static int match_key(struct cds_lfht_node *node, const void *key)
{
	const struct kbucket *e = caa_container_of(node, struct kbucket, node);

	/* Acquire: the key written before the release of tat (TSan cannot
	 * see liburcu's publication). */
	(void)atomic_load_explicit(&e->tat, memory_order_acquire);
	return memcmp(e->key, key, 16) == 0;
}

struct keylimit *keylimit_new(const struct limiter *shape, size_t max)
{
	struct keylimit *kl = calloc(1, sizeof(*kl));

	if (!kl)
		return NULL;
	kl->ht = cds_lfht_new(MIN_BUCKETS, MIN_BUCKETS, 0, 0, NULL);
	if (!kl->ht) {
		free(kl);
		return NULL;
	}
	kl->shape.cost = shape->cost;
	kl->shape.slack = shape->slack;
	kl->max = max;
	kl->buckets = MIN_BUCKETS;
	return kl;
}

static void free_removed(struct keylimit *kl)
{
	while (kl->removed) {
		struct kbucket *e = kl->removed;

		kl->removed = e->next_free;
		free(e);
	}
}

void keylimit_free(struct keylimit *kl)
{
	struct cds_lfht_iter it;
	struct kbucket *e;

	if (!kl)
		return;
	cds_lfht_for_each_entry(kl->ht, &it, e, node) {
		if (cds_lfht_del(kl->ht, &e->node) == 0) {
			e->next_free = kl->removed;
			kl->removed = e;
		}
	}
	free_removed(kl);
	cds_lfht_destroy(kl->ht, NULL);
	free(kl);
}

static struct kbucket *find(struct keylimit *kl, const uint8_t k[16])
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	cds_lfht_lookup(kl->ht, hash_key(k), match_key, k, &it);
	node = cds_lfht_iter_get_node(&it);
	return node ? caa_container_of(node, struct kbucket, node) : NULL;
}

/* A new key with a full bucket; NULL when the table is full. */
static struct kbucket *track(struct keylimit *kl, const uint8_t k[16])
{
	struct cds_lfht_node *got;
	struct kbucket *e;

	if (atomic_fetch_add_explicit(&kl->n, 1, memory_order_relaxed) >=
	    kl->max) {
		atomic_fetch_sub_explicit(&kl->n, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&kl->full, 1, memory_order_relaxed);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		atomic_fetch_sub_explicit(&kl->n, 1, memory_order_relaxed);
		return NULL;
	}
	memcpy(e->key, k, 16);
	atomic_store_explicit(&e->tat, 0, memory_order_release);
	cds_lfht_node_init(&e->node);
	got = cds_lfht_add_unique(kl->ht, hash_key(k), match_key, k, &e->node);
	if (got != &e->node) {
		free(e);
		atomic_fetch_sub_explicit(&kl->n, 1, memory_order_relaxed);
		e = caa_container_of(got, struct kbucket, node);
	}
	return e;
}

bool keylimit_take(struct keylimit *kl, const uint8_t k[16], uint64_t now)
{
	struct kbucket *e = find(kl, k);

	if (!e && !(e = track(kl, k)))
		return false;
	return limiter_take_tat(&kl->shape, &e->tat, now);
}

void keylimit_sweep(struct keylimit *kl)
{
	uint64_t now = dynset_now();
	struct cds_lfht_iter it;
	struct kbucket *e;
	size_t n, b;

	if (!kl || atomic_load_explicit(&kl->n, memory_order_relaxed) == 0)
		return;
	cds_lfht_for_each_entry(kl->ht, &it, e, node) {
		if (atomic_load_explicit(&e->tat, memory_order_acquire) > now)
			continue;
		if (cds_lfht_del(kl->ht, &e->node) != 0)
			continue;
		atomic_fetch_sub_explicit(&kl->n, 1, memory_order_relaxed);
		e->next_free = kl->removed;
		kl->removed = e;
	}
	if (kl->removed) {
		synchronize_rcu();
		free_removed(kl);
	}
	n = atomic_load_explicit(&kl->n, memory_order_relaxed);
	for (b = kl->buckets; b < n; b *= 2)
		;
	if (b != kl->buckets) {
		cds_lfht_resize(kl->ht, b);
		kl->buckets = b;
	}
}

size_t keylimit_count(const struct keylimit *kl)
{
	return atomic_load_explicit(&kl->n, memory_order_relaxed);
}

uint64_t keylimit_full(const struct keylimit *kl)
{
	return atomic_load_explicit(&kl->full, memory_order_relaxed);
}
