/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * limiter.h - the token bucket of "limit rate N/UNIT [burst M]", exactly
 * nft's packet limit (net/netfilter/nft_limit.c, packet mode):
 *
 *   cost       = UNIT in ns / N        (integer division; 0 above 1/ns)
 *   bucket     = cost * M              (M 0 or not given: 5)
 *   a packet takes cost ns of tokens if the bucket holds that many; the
 *   bucket refills one ns a ns up to its size, and starts full.
 *
 * So a back-to-back burst passes M packets, then one per cost. Kept as
 * GCRA, which is the same bucket seen from the other side: one atomic
 * "theoretical arrival time" TAT, bucket level = size - (TAT - now); a
 * packet passes when max(TAT, now) - now <= size - cost and moves TAT to
 * max(TAT, now) + cost. One CAS, no lock, shared by all workers.
 *
 * limiter_take_tat() takes the bucket's TAT apart from its cost and size,
 * so that one bucket per key ("limit ... per KEY", keylimit.c) is the same
 * bucket: one owner of the arithmetic.
 */
#ifndef NFQD_LIMITER_H
#define NFQD_LIMITER_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define LIMIT_BURST_DEFAULT	5	/* nft's, and the kernel's for 0 */

struct limiter {
	_Atomic uint64_t tat;		/* ns, CLOCK_MONOTONIC; 0: full */
	uint64_t cost;			/* ns per packet */
	uint64_t slack;			/* ns: bucket size - cost */
};

/*
 * The cost and bucket size of RATE packets per PER_SECONDS with BURST
 * (0: the default). -EINVAL for a rate or period of 0; -EOVERFLOW for a
 * bucket nft cannot hold (the kernel refuses one past 2^64 ns; past 2^63
 * it would never let a packet through, so that is refused too).
 */
static inline int limiter_bucket(uint64_t rate, uint64_t per_seconds,
				 uint32_t burst, uint64_t *cost,
				 uint64_t *size)
{
	uint64_t period;

	if (!rate || !per_seconds)
		return -EINVAL;
	if (__builtin_mul_overflow(per_seconds, 1000000000ull, &period))
		return -EOVERFLOW;
	*cost = period / rate;
	if (__builtin_mul_overflow(*cost, (uint64_t)(burst ? burst :
				   LIMIT_BURST_DEFAULT), size) ||
	    *size > INT64_MAX)
		return -EOVERFLOW;
	return 0;
}

/* A full bucket; the errors of limiter_bucket(). */
static inline int limiter_init(struct limiter *l, uint64_t rate,
			       uint64_t per_seconds, uint32_t burst)
{
	uint64_t cost, size;
	int err = limiter_bucket(rate, per_seconds, burst, &cost, &size);

	if (err)
		return err;
	l->cost = cost;
	l->slack = size - cost;
	atomic_init(&l->tat, 0);
	return 0;
}

/*
 * Take one packet's tokens at time NOW (ns) if the bucket holds them: the
 * bucket whose arrival time is *TAT, of L's cost and size. A per-key
 * bucket (keylimit.h) is a TAT alone and shares its rule's L.
 */
static inline bool limiter_take_tat(const struct limiter *l,
				    _Atomic uint64_t *tatp, uint64_t now)
{
	uint64_t tat = atomic_load_explicit(tatp, memory_order_relaxed);

	for (;;) {
		uint64_t start = tat > now ? tat : now;

		if (start - now > l->slack)
			return false;
		if (atomic_compare_exchange_weak_explicit(tatp, &tat,
				start + l->cost, memory_order_relaxed,
				memory_order_relaxed))
			return true;
	}
}

/* Take one packet's tokens from L's own bucket at NOW. */
static inline bool limiter_take(struct limiter *l, uint64_t now)
{
	return limiter_take_tat(l, &l->tat, now);
}

#endif
