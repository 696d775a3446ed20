/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * domset.h - sets of domain names at blocklist scale: a name ("example.com"),
 * the names below it ("*.example.com") or both (".example.com"). An
 * open-addressing table of 8-byte slots (half of a 64-bit hash and a
 * 32-bit offset into a string arena: 16 bytes a name, plus the name and 2
 * bytes in the arena), and a Bloom filter of about 2 bytes a name in
 * front of it; a lookup probes once per label
 * suffix of the name asked about, whatever the set's size, and most
 * probes of names not in the set end at the filter. Built once, then
 * read-only and safe to read from any number of threads.
 */
#ifndef NFQD_DOMSET_H
#define NFQD_DOMSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DOM_EXACT 0x1		/* the name itself */
#define DOM_BELOW 0x2		/* every name below it */

/* Longest pattern text: "*." and a name of NAME_MAX_LEN (names.h). */
#define DOM_PATTERN_MAX (2 + 253)

struct domset;

/* An empty set. NULL on ENOMEM. */
struct domset *domset_new(void);
void domset_free(struct domset *d);

/*
 * Parse the pattern TEXT (LEN bytes): "example.com", ".example.com" or
 * "*.example.com", any case, one trailing dot allowed; "*." and the name
 * 253 characters at most, as the names below it must be. NAME (at least
 * NAME_MAX_LEN + 1 bytes) gets the normal form, *FLAGS the DOM_* bits.
 * 0, or -EINVAL with *WHY a static reason (non-ASCII asks for the A-label).
 */
int domset_pattern(const char *text, size_t len, char *name, unsigned *flags,
		   const char **why);

/* Write the pattern text of NAME with FLAGS into OUT (DOM_PATTERN_MAX + 1). */
void domset_pattern_text(const char *name, unsigned flags, char *out);

/* The hash of normalised NAME (LEN bytes): its probe's (dom_probes) when
 * it is a label suffix of a name looked up. */
uint64_t domset_name_hash(const char *name, size_t len);

/* Does D hold NAME (LEN bytes) with every one of FLAGS? */
bool domset_holds(const struct domset *d, const char *name, size_t len,
		  unsigned flags);

/* Add normalised NAME (LEN bytes) with FLAGS (merged with any earlier). */
int domset_add(struct domset *d, const char *name, size_t len, unsigned flags);

/* Give back the memory growing left over and build the filter; after the
 * last add (a later add drops the filter). */
void domset_finish(struct domset *d);

/*
 * The probes of a name: the hash of each of its label suffixes, shortest
 * first, where each starts, and the bits each must find in a set's
 * filter. They depend on the name alone, not on a set: made once
 * (domset_probes()), they serve every set's lookups of the name, and the
 * look-ahead that asks for those lookups' memory.
 */
#define DOM_SUFFIX_MAX 127	/* labels of a 253-byte name */
struct dom_probes {
	unsigned n;			/* 0: no name (empty, too long) */
	uint8_t at[DOM_SUFFIX_MAX];
	struct dom_probe {		/* side by side: one line for 4 */
		uint64_t h;
		uint64_t bits;
	} p[DOM_SUFFIX_MAX];
};
void domset_probes(const char *name, size_t len, struct dom_probes *pr);

/* Does normalised NAME (LEN bytes) match? One probe per label suffix.
 * PR: NAME's probes (domset_probes()) whose memory the look-ahead has
 * asked for (domset_prefetch()), or NULL to make them and ask here. */
bool domset_match(const struct domset *d, const char *name, size_t len,
		  const struct dom_probes *pr);

/*
 * The memory domset_match() of the name of PR will read, some packets
 * before the match, so that the cache misses of several packets' lookups
 * overlap: into W, for the caller to ask for with the other packets'
 * (bigmem_fetch()), or asked for here when W is NULL. A lookup reads
 * the filter, then the table slots the filter lets through, then the
 * names those slots point to: each step can only be taken once the step
 * before has arrived, so the look-ahead calls this three times for a
 * name, from DOM_AHEAD_FILTER to DOM_AHEAD_NAMES, for the other packets
 * of its chunk in between (src/queue.c, names_ahead()).
 */
enum dom_ahead { DOM_AHEAD_FILTER, DOM_AHEAD_SLOTS, DOM_AHEAD_NAMES };
struct bigmem_wants;
void domset_prefetch(const struct domset *d, const struct dom_probes *pr,
		     enum dom_ahead step, struct bigmem_wants *w);

size_t domset_count(const struct domset *d);
/* Bytes the set holds (table, arena and filter). */
size_t domset_bytes(const struct domset *d);

/* FN(ARG, NAME, FLAGS) for every name, in the order first added; a
 * non-zero return stops the walk and is returned. */
typedef int (*domset_walk_fn)(void *arg, const char *name, unsigned flags);
int domset_walk(const struct domset *d, domset_walk_fn fn, void *arg);

#endif
