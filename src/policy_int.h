/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_int.h - the compiled policy's layout, shared by policy.c (build,
 * introspection), policy_judge.c (the packet path) and policy_lint.c.
 */
#ifndef NFQD_POLICY_INT_H
#define NFQD_POLICY_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "dynset.h"
#include "keylimit.h"
#include "limiter.h"
#include "names.h"
#include "policy.h"
#include "set.h"

#define CACHELINE	64
#define LOG_LINES_PER_SEC	10	/* per rule; the rest are counted */

/* A rule's limit: its bucket alone on a cache line (workers share it). */
struct rule_limit {
	struct limiter b;
} __attribute__((aligned(CACHELINE)));

/* Per-rule log rate limit: "second << 16 | lines", and what was dropped. */
struct log_limit {
	_Atomic uint64_t state;
	_Atomic uint64_t suppressed;
} __attribute__((aligned(CACHELINE)));

struct pidx;

#define CMATCH_SPANS	4

struct cmatch {
	enum match_field field;
	bool negate;
	const struct set *set;		/* values; owned by policy->sets */
	struct dynset *dyn;		/* a named set's runtime elements, or
					 * NULL (inline values) */
	/* A 32-bit set of at most CMATCH_SPANS ranges ("udp dport 53",
	 * "tcp dport { 80, 443 }") is compared inline: no lookup call.
	 * 0: look the value up in the set. */
	unsigned n_span;
	struct { uint32_t lo, hi; } span[CMATCH_SPANS];
	uint32_t mask;			/* meta mark */
	uint32_t flags;			/* tcp flags, ct state */
	struct limiter *lim;		/* limit: in policy->lims */
	struct keylimit *kl;		/* limit ... per KEY: buckets */
	enum match_field kl_key;	/* KEY */
};

#define FAM_V4	0x1
#define FAM_V6	0x2

struct crule {
	struct cmatch *m;
	unsigned n_m;
	unsigned idx;			/* policy-wide index: counters */
	enum conf_hook_id hook;
	unsigned pos;			/* 1-based position in its hook */
	unsigned fams;			/* FAM_* this rule can match */
	uint32_t verdict;		/* NF_* verdict code */
	bool set_mark;
	uint32_t mark;
	bool bypass;
	struct dynset *add;		/* "add/update @set { KEY }", or NULL */
	enum match_field add_key;
	uint64_t add_timeout_ns;	/* 0: the set's default */
	bool add_update;
	bool log;
	bool names;			/* has a name match */
	bool sticky;			/* names, and every other match one
					 * a flow's packets share: its drop
					 * stays with the flow */
	uint8_t first_name;		/* enum name_proto of the first match
					 * when it is a name's, else NP_NONE */
	char *log_prefix;
	char *text;
	char *where;			/* "FILE:LINE:COL" */
	struct log_limit *ll;
};

struct chook {
	enum verdict_kind policy;
	uint32_t policy_verdict;
	unsigned first, n;		/* p->rules[first .. first + n) */
	struct crule **fam[2];		/* IPv4, IPv6: rules that can match */
	unsigned n_fam[2];
	unsigned lead_names[2];		/* how many of fam[f] first match a
					 * name: a packet without one passes
					 * them all (policy_judge()) */
	struct pidx *idx[2];		/* their classifiers */
};

/* A named set: its static part is policy->sets[i]. */
struct pnamed {
	char *name;
	enum set_type type;
	char *file;			/* "file PATH" as written, or NULL */
	bool timeout;			/* "flags timeout" */
	struct set *inline_elems;	/* "elements = {...}" alone, when the
					 * set has a file too (origin for
					 * "set list"); else NULL */
	struct dynset *dyn;		/* runtime part, NULL for ifname */
};

#define POLICY_NAME_SETS 8

struct policy {
	uint64_t serial;		/* policy_serial() */
	unsigned nslots;
	enum policy_eval eval;
	unsigned n_rules;
	struct crule *rules;
	struct chook hooks[HOOK_MAX];
	struct set **sets;		/* named and inline; all owned */
	unsigned n_sets;
	struct pnamed *named;		/* the named sets, config order:
					 * sets[i] is named[i]'s static part */
	unsigned n_named;
	struct rule_limit *lims;
	unsigned n_lims;
	struct keylimit **kls;		/* per-key limits, owned */
	const struct crule **kl_rule;	/* the rule of each */
	unsigned n_kls;
	struct log_limit *lls;
	const struct ifcache *ifc;	/* interface names; NULL: none known */
	uint32_t bypass_mark;
	uint32_t incomplete_verdict;	/* NF_DROP or NF_ACCEPT */
	uint32_t kflags;
	bool names;			/* some rule has a name match */
	/* The domain sets name matches look names up in, each with the
	 * protocols (1 << NP_*) whose names it is asked about: what
	 * policy_prefetch_name() asks memory for (the first few). */
	struct name_set {
		const struct domset *dom;
		unsigned protos;
	} name_sets[POLICY_NAME_SETS];
	unsigned n_name_sets;
	char *flag_user_uid, *flag_user_ct;
	/* Counters: per slot a cache-line aligned block of n_ctr words:
	 * rule i packets at 2i, bytes at 2i + 1, hook h policy packets at
	 * 2 * n_rules + h. Written only by the slot's worker. */
	size_t n_ctr, stride;
	uint64_t *ctr;
	uint64_t *base;			/* reset baseline (main thread) */
};

/* A match on a name (DNS, TLS, HTTP; nfqd.conf(5) NAMES). */
bool policy_field_is_name(enum match_field f);
/* The enum name_proto of a name match's field; NP_NONE for others. */
static inline unsigned policy_name_proto(enum match_field f)
{
	switch (f) {
	case MATCH_DNS_QNAME:
	case MATCH_DNS_QTYPE:
		return NP_DNS;
	case MATCH_TLS_SNI:
	case MATCH_TLS_ECH:
		return NP_TLS;
	case MATCH_HTTP_HOST:
		return NP_HTTP;
	default:
		return NP_NONE;
	}
}

/* FAM_* the packets a match on F can hold have. */
unsigned policy_field_fams(enum match_field f);

/* Queue the warnings about C on D (policy_lint.c). */
void policy_lint(const struct conf *c, struct diags *d);

/* Add one parsed element to S (the kind fixes what fits). NULL or a
 * static message. */
const char *policy_add_elem(struct set *s, const struct conf_elem *el);

#endif
