/*
 * ifcache.h - ifindex -> interface name, kept from rtnetlink (link add,
 * remove, rename) on the main loop, read lock-free by workers.
 */
#ifndef NFQD_IFCACHE_H
#define NFQD_IFCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct ev_loop;

/* Dump the links and watch for changes on LOOP. 0 or negative errno. */
int ifcache_start(struct ev_loop *loop);
void ifcache_stop(void);

/* Copy the name of IFINDEX into NAME (IFNAMSIZ bytes); false if unknown.
 * Any registered RCU reader thread. */
bool ifcache_name(uint32_t ifindex, char *name);

/*
 * Set IFINDEX's NAME (NULL: forget it) and publish at once, as a netlink
 * notification would. Main thread; for tests and callers that know better.
 * 0 or -EINVAL.
 */
int ifcache_set(uint32_t ifindex, const char *name);

#endif
