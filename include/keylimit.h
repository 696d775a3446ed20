/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * keylimit.h - "limit rate N/second per KEY": one token bucket (GCRA, as
 * the plain limit) per key value, in a liburcu lock-free hash table of
 * bounded size. Workers take tokens and add keys without a lock; the
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

/* A table for buckets of one token per INTERVAL_NS holding
 * TOLERANCE_NS / INTERVAL_NS + 1 tokens, at most MAX keys. NULL on
 * ENOMEM. */
struct keylimit *keylimit_new(uint64_t interval_ns, uint64_t tolerance_ns,
			      size_t max);
/* No reader may be left. */
void keylimit_free(struct keylimit *kl);

/*
 * Take a token from the bucket of key K (16 bytes, as dynset.h). A key
 * not yet tracked gets a full bucket; when the table is full a new key
 * gets none (false: over the limit), counted. Lock-free, workers.
 */
bool keylimit_take(struct keylimit *kl, const uint8_t k[16]);

/* Main thread: forget keys whose bucket is full again, free them after
 * a grace period, grow the table. */
void keylimit_sweep(struct keylimit *kl);

/* Keys tracked now, and new keys refused because the table was full. */
size_t keylimit_count(const struct keylimit *kl);
uint64_t keylimit_full(const struct keylimit *kl);

#endif
