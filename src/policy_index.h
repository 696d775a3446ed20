/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_index.h - the rule classifier: per hook and family, which rules a
 * packet could match at all, found by hashing its field values, so that
 * judging costs the same with 10 rules or 10,000. Private to the policy
 * engine; the design is explained in policy_index.c.
 */
#ifndef NFQD_POLICY_INDEX_H
#define NFQD_POLICY_INDEX_H

#include <stdbool.h>
#include <stdint.h>

struct ifcache;
struct pkt;
struct policy;
struct chook;

/* Most candidate lists one packet gathers (field prefix lengths + 2). */
#define PIDX_MAX_CURSORS	64
#define PIDX_END		UINT32_MAX

struct pidx;

/* Search steps one hash probe is worth: a 32-bit field takes intervals
 * when its search needs at most this many per probe it replaces (see
 * policy_index.c). Tests set 0 to keep every field in the hash. */
extern unsigned pidx_iv_steps;

/*
 * Build the classifier of every hook and family of P (h->idx[]) after its
 * rules are compiled. 0 or -ENOMEM. Off the packet path.
 */
int pidx_build(struct policy *p);
void pidx_free(struct pidx *x);

/* Memory the classifier of X holds, in bytes (for tests and the docs). */
size_t pidx_bytes(const struct pidx *x);

/* No match of the candidate is known to hold (see pidx_next()). */
#define PIDX_NO_SKIP		255

struct pidx_cursor {
	const uint32_t *p, *end;
	bool key;			/* found by the packet's value */
};

/* The candidate lists of one packet, merged in rule order. */
struct pidx_walk {
	unsigned n;
	const uint8_t *key_m;		/* per rule: its key match */
	struct pidx_cursor c[PIDX_MAX_CURSORS];
};

/* Gather PKT's candidate lists from X, interface names from IFC. No
 * allocation, no lock. */
void pidx_start(const struct pidx *x, const struct ifcache *ifc,
		const struct pkt *pkt, struct pidx_walk *w);

/*
 * The next candidate's position in its family's rule list, ascending, or
 * PIDX_END. A rule that is not returned cannot match the packet. *SKIP:
 * the index of the candidate's match that is known to hold (its key,
 * looked up with the packet's PRESENT value), which the matcher need not
 * test again; or PIDX_NO_SKIP.
 */
static inline uint32_t pidx_next(struct pidx_walk *w, unsigned *skip)
{
	uint32_t best = PIDX_END;
	bool key = true;

	for (unsigned i = 0; i < w->n; i++)
		if (*w->c[i].p < best)
			best = *w->c[i].p;
	for (unsigned i = 0; i < w->n;) {
		struct pidx_cursor *c = &w->c[i];

		if (*c->p == best) {
			/* Where two lists hold it, both must say so. */
			key &= c->key;
			if (++c->p == c->end) {
				*c = w->c[--w->n];
				continue;
			}
		}
		i++;
	}
	*skip = key && best != PIDX_END ? w->key_m[best] : PIDX_NO_SKIP;
	return best;
}

#endif
