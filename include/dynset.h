/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dynset.h - the runtime part of a named set: single values added and
 * removed while traffic flows (nfqd-ctl set add/delete, rules that add to
 * a set), each with an optional expiry. A liburcu lock-free hash table
 * (cds_lfht, QSBR flavour): workers look up and add without a lock;
 * removals and frees happen on the main thread only, after a grace
 * period. The config's and the set file's elements stay in the policy's
 * immutable struct set; a policy holds a reference to each of its named
 * sets' dynset, and a reload hands the same object to the new policy
 * when the set keeps its name and type (policy_share_dynsets()).
 */
#ifndef NFQD_DYNSET_H
#define NFQD_DYNSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "set.h"

#define DYNSET_DEFAULT_SIZE	65536u	/* runtime elements without "size" */

struct dom_probes;

/* Where a runtime element came from. */
enum dyn_origin {
	DYN_RUNTIME,		/* nfqd-ctl set add */
	DYN_RULE,		/* an "add @set" / "update @set" statement */
};

struct dynset;

/* What "nfqd-ctl sets" reports. Counters only grow. */
struct dynset_stats {
	size_t n;			/* runtime elements now (some may
					 * be expired, not yet swept) */
	size_t max;			/* "size" */
	uint64_t adds, deletes, expiries, full;
	size_t memory;			/* bytes, approximate */
};

/*
 * A domain set's runtime element (SETK_DOMAIN) is a pattern (domset.h): a
 * normalised NAME of LEN bytes with DOM_* FLAGS. "example.com",
 * "*.example.com" and ".example.com" are three elements.
 */
struct dyn_name {
	const char *name;
	size_t len;
	unsigned flags;
};

/* One element, as dynset_walk() shows it: V its value (a domain set's:
 * its name's hash), N a domain set's pattern (N.len 0 for others). */
struct dyn_elem {
	const uint8_t *v;
	struct dyn_name n;
	enum dyn_origin origin;
	uint64_t left_ns;		/* 0: no timeout */
};

/*
 * An empty runtime part for a set of KIND (SETK_U32, SETK_U128 or
 * SETK_DOMAIN) and
 * config type TYPE (enum set_type, kept only to tell a type change),
 * holding at most MAX elements; TIMEOUT_NS is the default timeout of
 * elements added without one (0: none). One reference, the caller's.
 * NULL on ENOMEM.
 */
struct dynset *dynset_new(enum set_kind kind, int type, size_t max,
			  uint64_t timeout_ns);
struct dynset *dynset_ref(struct dynset *s);
/* Make the hash table (main thread), before the first add: 0 or
 * -ENOMEM. Lookups before it find nothing; dynset_add() fails. */
int dynset_prepare(struct dynset *s);
/* Drop a reference; the last one frees every element (no reader may be
 * left: call after a grace period). Main thread. */
void dynset_unref(struct dynset *s);

enum set_kind dynset_kind(const struct dynset *s);
int dynset_type(const struct dynset *s);
/* A reload's new "size" and "timeout" for a kept set. */
void dynset_configure(struct dynset *s, size_t max, uint64_t timeout_ns);
uint64_t dynset_default_timeout(const struct dynset *s);
size_t dynset_max(const struct dynset *s);

/* The packet path: is V in the set and not expired? Lock-free, any
 * registered RCU thread that is online. U32: host order; U128: 16-byte
 * network order. */
bool dynset_has_u32(const struct dynset *s, uint32_t v);
bool dynset_has_u128(const struct dynset *s, const uint8_t v[16]);
/* A domain set's: does normalised NAME (LEN bytes) match a live pattern,
 * the name itself or a name it is below? One lookup per label suffix,
 * by PR (NAME's probes, domset_probes()) or, NULL, probes made here;
 * a load while the set never had a runtime element. */
bool dynset_match_name(const struct dynset *s, const char *name, size_t len,
		       const struct dom_probes *pr);
/* Is pattern N itself a live element? */
bool dynset_has_pattern(const struct dynset *s, const struct dyn_name *n);

/* Monotonic "now" in ns, the clock expiries use. */
uint64_t dynset_now(void);

/*
 * Add V (16 bytes: U32 values as a host-order uint32_t in the first four
 * bytes, the rest zero; U128 network order) with a timeout of TIMEOUT_NS
 * (0: never expires). An element already there keeps its origin; with
 * REFRESH its expiry becomes the new one, without it stays. Returns 1
 * added, 0 already there, -ENOSPC the set is full (counted), -ENOMEM.
 * Any online RCU thread (workers too).
 */
int dynset_add(struct dynset *s, const uint8_t v[16], uint64_t timeout_ns,
	       enum dyn_origin origin, bool refresh);
/* The same for a domain set's pattern N; -EINVAL for an empty or too
 * long name or no flags. */
int dynset_add_pattern(struct dynset *s, const struct dyn_name *n,
		       uint64_t timeout_ns, enum dyn_origin origin,
		       bool refresh);

/*
 * Remove V: 1 removed, 0 not there. The element is freed by
 * dynset_reclaim(). Main thread.
 */
int dynset_del(struct dynset *s, const uint8_t v[16]);
int dynset_del_pattern(struct dynset *s, const struct dyn_name *n);
/* Take back V, which this thread's dynset_add() just added (a command
 * refused part-way): removed, and no longer counted as an add. 1
 * removed, 0 not there. Main thread. */
int dynset_undo_add(struct dynset *s, const uint8_t v[16]);
int dynset_undo_add_pattern(struct dynset *s, const struct dyn_name *n);
/* Remove every element; the count removed. Main thread. */
size_t dynset_flush(struct dynset *s);
/* Remove the elements expired at NOW; the count removed. Main thread. */
size_t dynset_sweep(struct dynset *s, uint64_t now);
/* Grow the hash table to one bucket per element or more (lookups stay
 * short): after adds, and periodically for adds from rules. Main
 * thread, an RCU-registered one. */
void dynset_grow(struct dynset *s);
/* Wait for a grace period and free what del/flush/sweep removed. Main
 * thread, an RCU-registered one. */
void dynset_reclaim(struct dynset *s);

/*
 * Visit every element not expired at NOW: FN(ARG, ELEMENT). A non-zero
 * return stops the walk and is returned. Main thread (or any online RCU
 * thread).
 */
typedef int (*dynset_walk_fn)(void *arg, const struct dyn_elem *e);
int dynset_walk(const struct dynset *s, uint64_t now, dynset_walk_fn fn,
		void *arg);

void dynset_get_stats(const struct dynset *s, struct dynset_stats *out);

#endif
