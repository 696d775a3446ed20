/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * set.h - the lookup structures behind sets and inline { lists }: an
 * open-addressing hash for exact values and a sorted array of disjoint
 * intervals (binary search) for prefixes and ranges. Built once, then
 * read-only and safe to read from any number of threads.
 */
#ifndef NFQD_SET_H
#define NFQD_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domset.h"

/* What a set holds; fixes which add/lookup functions apply. */
enum set_kind {
	SETK_U32,	/* IPv4 addresses (host order), ports, marks, numbers */
	SETK_U128,	/* IPv6 addresses (16 bytes, network order) */
	SETK_STR,	/* interface names; "name*" is a prefix wildcard */
	SETK_DOMAIN,	/* domain names and patterns (domset.h) */
};

struct set;

/* An empty set being built. NULL on ENOMEM. */
struct set *set_new(enum set_kind kind);
void set_free(struct set *s);
enum set_kind set_kind(const struct set *s);

/*
 * Add an inclusive range (LO == HI for one value). Only before
 * set_finish(). 0, -EINVAL (LO > HI, wrong kind) or -ENOMEM.
 */
int set_add_u32(struct set *s, uint32_t lo, uint32_t hi);
int set_add_u128(struct set *s, const uint8_t lo[16], const uint8_t hi[16]);
/* NAME of at most 15 characters; a trailing '*' makes it a prefix. */
int set_add_str(struct set *s, const char *name);

/*
 * A domain pattern "example.com", ".example.com" or "*.example.com"
 * (domset_pattern()); -EINVAL with *WHY set if it is none.
 */
int set_add_domain(struct set *s, const char *pattern, const char **why);

/*
 * Build the lookup structures: exact values into the hash (or into the
 * interval array when there are only a few), ranges sorted and merged.
 * 0 or -ENOMEM. After this the set is immutable.
 */
int set_finish(struct set *s);

/* Lookups; only after set_finish(). Lock-free, any thread. */
bool set_has_u32(const struct set *s, uint32_t v);
bool set_has_u128(const struct set *s, const uint8_t v[16]);
bool set_has_str(const struct set *s, const char *name);
/* NAME: normalised (names.h), LEN bytes; PR: its probes, or NULL
 * (domset_match()). */
bool set_has_domain(const struct set *s, const char *name, size_t len,
		    const struct dom_probes *pr);
/* The domain set behind S (SETK_DOMAIN), NULL for another kind: for the
 * look-ahead's domset_prefetch() (policy_prefetch_name()). */
const struct domset *set_domset(const struct set *s);

/*
 * Visit every element of a finished set: FN(ARG, LO, HI) once per exact
 * value (LO == HI) and per merged interval. U32: pointers to uint32_t;
 * U128: 16-byte network-order addresses; STR: NUL-padded 16-byte names,
 * HI NULL for an exact name, HI == LO for the prefix of "name*"; DOMAIN:
 * the pattern text, HI NULL, in the order first added. A non-zero
 * return from FN stops the walk and is returned. Not on the packet path.
 */
typedef int (*set_walk_fn)(void *arg, const void *lo, const void *hi);
int set_walk(const struct set *s, set_walk_fn fn, void *arg);

/* Number of distinct exact values (domain: names) and of merged
 * intervals (for tests). */
size_t set_n_exact(const struct set *s);
size_t set_n_intervals(const struct set *s);
/* Number of distinct wildcard names ("eth*") of an ifname set. */
size_t set_n_prefixes(const struct set *s);
/* Bytes the set's elements hold: a domain set's table, names and filter
 * as allocated; for other kinds 32 bytes an element, an estimate. */
size_t set_bytes(const struct set *s);

#endif
