/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * registry.h - the state workers, stats and control read without locks,
 * published with liburcu (QSBR flavour): the queue table and the current
 * policy. Writers (the main thread only) build a new object completely,
 * publish it, wait for a grace period, then free the old one.
 *
 * Readers: call inside rcu_read_lock()/rcu_read_unlock() from a thread
 * registered with rcu_register_thread(); do not keep the pointer past a
 * quiescent state.
 */
#ifndef NFQD_REGISTRY_H
#define NFQD_REGISTRY_H

#include <stdint.h>

struct queue;
struct policy;

/* An immutable snapshot of the bound queues, ascending queue number. */
struct registry {
	unsigned n;
	struct queue *q[];
};

/* The two pointers readers dereference. The daemon owns one (struct
 * nfqd); workers, stats and control are handed a pointer to it. */
struct registry_root {
	struct registry *queues;	/* never NULL after registry_init */
	struct policy *policy;		/* NULL before the first publish */
};

/* An empty table, no policy. */
void registry_init(struct registry_root *root);

/* Allocate a table for N queues (n set, entries to be filled). */
struct registry *registry_alloc(unsigned n);

/* ROOT's current queue table (never NULL; may be empty). */
struct registry *registry_get(const struct registry_root *root);

/* Publish R, wait for readers of the old table, free the old table (not
 * the queues it points to). Main thread only. */
void registry_publish(struct registry_root *root, struct registry *r);

/* ROOT's current policy (NULL before the first publish). */
struct policy *registry_policy(const struct registry_root *root);

/* Publish P and return the old policy after a grace period (caller frees). */
struct policy *registry_publish_policy(struct registry_root *root,
				       struct policy *p);

#endif
