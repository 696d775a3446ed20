/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rcu_publish.h - RCU pointer publication that ThreadSanitizer can see. */
#ifndef NFQD_RCU_PUBLISH_H
#define NFQD_RCU_PUBLISH_H

#include <urcu-qsbr.h>

/*
 * liburcu publishes with an inline-assembly xchg and reads with a
 * volatile load: correct on every CPU it supports, but invisible to
 * ThreadSanitizer as synchronization, which then reports every field of
 * a freshly published policy or table as raced. A TSan build
 * (configure --enable-tsan) publishes and reads with the equivalent
 * compiler atomics instead (acquire-release xchg, acquire load: on
 * x86-64 the same instructions). The grace period is annotated in
 * src/tsan_urcu.c.
 */
#if defined(__SANITIZE_THREAD__)
#define rcu_publish_ptr(pp, v) \
	__atomic_exchange_n((pp), (v), __ATOMIC_ACQ_REL)
#define rcu_read_ptr(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#else
#define rcu_publish_ptr(pp, v) rcu_xchg_pointer((pp), (v))
#define rcu_read_ptr(p) rcu_dereference(p)
#endif

#endif
