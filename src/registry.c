/*
 * registry.c - the RCU-published queue table and policy pointer. Only the
 * main thread publishes; workers, stats and control read lock-free.
 */
#include <stdlib.h>
#include "rcu_publish.h"

#include "registry.h"

static struct registry empty_registry;
static struct registry *current_registry = &empty_registry;
static struct policy *current_policy;

struct registry *registry_alloc(unsigned n)
{
	struct registry *r = calloc(1, sizeof(*r) + n * sizeof(r->q[0]));

	if (r)
		r->n = n;
	return r;
}

struct registry *registry_get(void)
{
	return rcu_read_ptr(current_registry);
}

void registry_publish(struct registry *r)
{
	struct registry *old = rcu_publish_ptr(&current_registry,
						r ? r : &empty_registry);

	synchronize_rcu();
	if (old != &empty_registry)
		free(old);
}

struct policy *registry_policy(void)
{
	return rcu_read_ptr(current_policy);
}

struct policy *registry_publish_policy(struct policy *p)
{
	struct policy *old = rcu_publish_ptr(&current_policy, p);

	synchronize_rcu();
	return old;
}
