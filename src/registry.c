/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * registry.c - the RCU-published queue table and policy pointer of one
 * struct registry_root (the daemon's). Only the main thread publishes;
 * workers, stats and control read lock-free.
 */
#include <stdlib.h>
#include "rcu_publish.h"

#include "registry.h"

/* What a root points to before the first table and after the last. */
static struct registry empty_registry;

void registry_init(struct registry_root *root)
{
	root->queues = &empty_registry;
	root->policy = NULL;
}

struct registry *registry_alloc(unsigned n)
{
	struct registry *r = calloc(1, sizeof(*r) + n * sizeof(r->q[0]));

	if (r)
		r->n = n;
	return r;
}

struct registry *registry_get(const struct registry_root *root)
{
	return rcu_read_ptr(root->queues);
}

void registry_publish(struct registry_root *root, struct registry *r)
{
	struct registry *old = rcu_publish_ptr(&root->queues,
						r ? r : &empty_registry);

	synchronize_rcu();
	if (old != &empty_registry)
		free(old);
}

struct policy *registry_policy(const struct registry_root *root)
{
	return rcu_read_ptr(root->policy);
}

struct policy *registry_publish_policy(struct registry_root *root,
				       struct policy *p)
{
	struct policy *old = rcu_publish_ptr(&root->policy, p);

	synchronize_rcu();
	return old;
}
