/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * keylimit.h - "limit rate N/UNIT per KEY": one token bucket per key
 * value, the plain limit's (limiter.h, nft's), in a liburcu lock-free hash
 * table of bounded size. Workers take tokens and add keys without a lock; the
 * main thread removes keys whose bucket is full again (they are as good
 * as new) and frees them after a grace period.
 */
#ifndef NFQD_KEYLIMIT_H
#define NFQD_KEYLIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEYLIMIT_SIZE	65536u	/* keys one limit tracks at most */

struct keylimit;
struct limiter;

/* A table of buckets of SHAPE's cost and size (limiter.h), one per key,
 * each full at first; at most MAX keys. NULL on ENOMEM. */
struct keylimit *keylimit_new(const struct limiter *shape, size_t max);
/* No reader may be left. */
void keylimit_free(struct keylimit *kl);

/*
 * Take a packet's tokens at NOW (ns, CLOCK_MONOTONIC) from the bucket of
 * key K (16 bytes, as dynset.h), as limiter_take() does. A key not yet
 * tracked gets a full bucket; when the table is full a new key gets none
 * (false: over the limit), counted. Lock-free, workers.
 */
bool keylimit_take(struct keylimit *kl, const uint8_t k[16], uint64_t now);

/* Main thread: forget keys whose bucket is full again, free them after
 * a grace period, grow the table. */
void keylimit_sweep(struct keylimit *kl);

/* Keys tracked now, and new keys refused because the table was full. */
size_t keylimit_count(const struct keylimit *kl);
uint64_t keylimit_full(const struct keylimit *kl);

#endif
