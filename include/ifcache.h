/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ifcache.h - ifindex -> interface name, kept from rtnetlink (link add,
 * remove, rename) on the main loop, read lock-free by workers. The daemon
 * owns one (struct nfqd); the policy it publishes points to it.
 */
#ifndef NFQD_IFCACHE_H
#define NFQD_IFCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct ev_loop;
struct ifcache;

/* Dump the links and watch for changes on LOOP. 0 or negative errno. */
int ifcache_start(struct ev_loop *loop, struct ifcache **out);

/* An empty cache that watches nothing (filled with ifcache_set). NULL on
 * ENOMEM. */
struct ifcache *ifcache_new(void);

/* Stop watching, wait for readers, free. NULL is fine. Main thread. */
void ifcache_free(struct ifcache *c);

/* Copy the name of IFINDEX into NAME (IFNAMSIZ bytes); false if unknown
 * or C is NULL, and for every index while this worker may have missed a
 * link change (checked once per batch, see ifcache_batch_begin). Any
 * registered RCU reader thread; C itself is not changed. */
bool ifcache_name(const struct ifcache *c, uint32_t ifindex, char *name);

/*
 * A worker received packets and is about to judge them: the next
 * ifcache_name() of this thread first reads, without waiting, the link
 * notifications that reached this worker's own rtnetlink socket (one
 * recvfrom when none did), so a rename the kernel acknowledged before
 * those packets were queued is seen. A thread without a socket (see
 * ifcache_worker_start) polls the main thread's instead and sees no name
 * while that one holds unread changes; a thread that never calls it is
 * not checked (tests).
 */
void ifcache_batch_begin(void);

/* Open (start) and close (stop) the calling worker thread's rtnetlink
 * socket for link notifications. Not on the packet path. */
void ifcache_worker_start(void);
void ifcache_worker_stop(void);

/*
 * Set IFINDEX's NAME (NULL: forget it) and publish at once, as a netlink
 * notification would. Main thread; for tests and callers that know better.
 * 0 or -EINVAL.
 */
int ifcache_set(struct ifcache *c, uint32_t ifindex, const char *name);

#endif
