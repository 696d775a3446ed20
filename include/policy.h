/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.h - the compiled, immutable policy: per hook and family an
 * ordered array of compiled rules, sets in hash tables or interval
 * structures. Built off the packet path from a struct conf, read by every
 * worker at once without locks; per-rule counters are kept per worker slot.
 */
#ifndef NFQD_POLICY_H
#define NFQD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "domset.h"

struct pkt;
struct decision;
struct dynset;
struct set;
struct ifcache;
struct policy;

/*
 * Compile C for NSLOTS worker slots (0..NSLOTS-1). Reads set files.
 * Returns NULL on failure, with the errors on D (NULL: not wanted); the
 * warnings (as policy_warnings() finds them, and empty set files) go to D
 * either way. Does not keep pointers into C.
 */
struct policy *policy_build(const struct conf *c, unsigned nslots,
			    struct diags *d);
void policy_free(struct policy *p);

/* Give P the interface names its iifname/oifname matches read, before it
 * is published; IFC must outlive P. Without it every name is unknown. */
void policy_use_ifcache(struct policy *p, const struct ifcache *ifc);

/*
 * Warnings about C that do not stop it from loading, as "FILE:LINE:COL:
 * warning: message\n" lines (malloc'd), or NULL: matches whose field
 * copy-range cuts off even on packets without IP options or IPv6
 * extension headers, so that every such packet is INCOMPLETE; rules that
 * can never match because an earlier rule of the hook matches every
 * packet they would (the same matches again, or a subset of them: a rule
 * without matches hides every rule after it). Does not read set files.
 */
char *policy_warnings(const struct conf *c);

/*
 * Judge PKT: first matching rule of its hook and family wins, else the
 * hook's policy. Runs the rule's statements (counter, log, mark set,
 * bypass, limit). SLOT is the calling worker's slot; a slot >= NSLOTS is
 * judged but not counted. Lock-free; callable from any worker at once.
 */
void policy_judge(struct policy *p, const struct pkt *pkt, unsigned slot,
		  struct decision *d);

/* A number no other policy built by this process has (0: none): a
 * worker tells a reload's policy from the one it judged with. */
uint64_t policy_serial(const struct policy *p);

/* Does some rule match on names (the worker then fills pkt->names)? */
bool policy_has_names(const struct policy *p);

/*
 * The memory the lookups of a name of protocol PROTO (enum name_proto)
 * with probes PR (domset_probes()) in the policy's domain sets will read
 * at STEP, into W (domset_prefetch()): a few packets before the packet
 * is judged, so that the cache misses of several packets overlap.
 */
void policy_prefetch_name(const struct policy *p, unsigned proto,
			  const struct dom_probes *pr, enum dom_ahead step,
			  struct bigmem_wants *w);

/*
 * How policy_judge() finds the deciding rule; the result is the same. AUTO
 * (the default): through the classifier when a hook and family has at
 * least POLICY_INDEX_MIN_RULES rules, else rule by rule. LINEAR, INDEX:
 * always one way, for tests that compare the two.
 */
enum policy_eval { POLICY_EVAL_AUTO, POLICY_EVAL_LINEAR, POLICY_EVAL_INDEX };
#define POLICY_INDEX_MIN_RULES	8
void policy_set_eval(struct policy *p, enum policy_eval e);

/* The option incomplete-verdict as an NF_* code (NF_DROP without a
 * policy): for packets no rule can judge, and for messages that carry an
 * id but cannot be parsed. */
uint32_t policy_incomplete_verdict(const struct policy *p);

/* NFQA_CFG_F_* bits the rules need from the kernel (UID_GID, CONNTRACK). */
uint32_t policy_kernel_flags(const struct policy *p);

/* "FILE:LINE:COL: RULE" of the first rule that needs kernel flag FLAG
 * (one NFQA_CFG_F_* bit), or NULL. For errors naming the rule. */
const char *policy_flag_user(const struct policy *p, uint32_t flag);

/* The kernel flags P needs that SUPPORTED lacks, each an error in DG
 * naming its rule: -EOPNOTSUPP, or 0 when none is missing. */
int policy_check_kflags(const struct policy *p, uint32_t supported,
			struct diags *dg);

/*
 * Before P replaces OLD (main thread, nothing may fail after this): each
 * named set that keeps its name and type takes over OLD's runtime
 * elements (the same object, so nothing added meanwhile is lost, and
 * its new "size" and "timeout" apply); the runtime elements of a set
 * that is gone or changed type are dropped, with a warning in the log.
 */
void policy_share_dynsets(struct policy *p, const struct policy *old);

/*
 * After P replaced OLD and no worker counts into OLD any more (main
 * thread): each rule of P whose hook had a rule of the same text in OLD
 * goes on from that rule's packets and bytes (equal texts paired in
 * order), and each hook's policy packets from OLD's: a reload starts no
 * rule's counters again unless it changed the rule's text.
 */
void policy_carry_counters(struct policy *p, const struct policy *old);

/* The named sets, for "nfqd-ctl sets" and "nfqd-ctl set ..." (main
 * thread; the pointers live as long as P). */
struct policy_set_view {
	const char *name;
	enum set_type type;
	const char *file;		/* "file PATH", or NULL */
	bool timeout;			/* "flags timeout" */
	const struct set *elems;	/* config and file elements */
	const struct set *inline_elems;	/* the config's alone when the set
					 * has a file too, else NULL */
	struct dynset *dyn;		/* runtime elements; NULL: ifname */
};
unsigned policy_set_count(const struct policy *p);

/* The per-key limits ("limit ... per KEY"), for "nfqd-ctl sets". */
struct policy_keylimit_view {
	enum conf_hook_id hook;
	unsigned pos;			/* 1-based position in its hook */
	const char *rule;
	size_t keys, size;
	uint64_t full;			/* new keys refused: table full */
};
unsigned policy_keylimit_count(const struct policy *p);
void policy_keylimit_get(const struct policy *p, unsigned i,
			 struct policy_keylimit_view *out);
/*
 * A runtime element's text as a 16-byte key of a set of TYPE (dynset.h:
 * U32 values host order in the first four bytes): NULL, or why not (in
 * BUF). Only single values. And back: its text into BUF.
 */
const char *policy_elem_key(enum set_type type, const char *text,
			    uint8_t k[16], char *buf, size_t size);
void policy_elem_text(enum set_type type, const uint8_t k[16], char *buf,
		      size_t size);
void policy_u32_text(enum set_type type, uint32_t v, char *buf, size_t size);
/* Runtime element E's text (a value, or a domain set's pattern) into BUF
 * (DOM_PATTERN_MAX + 1 bytes hold any). */
struct dyn_elem;
void policy_dyn_text(enum set_type type, const struct dyn_elem *e, char *buf,
		     size_t size);

/* Free the runtime elements that have expired (main thread). */
void policy_sets_sweep(struct policy *p);
/* Index of set NAME, or -1. */
int policy_set_find(const struct policy *p, const char *name);
void policy_set_get(const struct policy *p, unsigned i,
		    struct policy_set_view *out);

/* Introspection for "nfqd-ctl rules" (counters summed over slots). */
unsigned policy_rule_count(const struct policy *p, enum conf_hook_id h);
const char *policy_rule_text(const struct policy *p, enum conf_hook_id h,
			     unsigned i);
void policy_rule_counters(const struct policy *p, enum conf_hook_id h,
			  unsigned i, uint64_t *packets, uint64_t *bytes);
enum verdict_kind policy_hook_policy(const struct policy *p,
				     enum conf_hook_id h);
uint64_t policy_policy_packets(const struct policy *p, enum conf_hook_id h);

/* Zero what the counters report (main thread). */
void policy_counters_reset(struct policy *p);

/* Named set I's elements: the config's and its file's (distinct values
 * plus merged intervals), and those plus the runtime ones. */
size_t policy_set_static(const struct policy *p, unsigned i);
size_t policy_set_elements(const struct policy *p, unsigned i);

/* "NAME N elements, NAME N elements" (malloc'd), NULL for no set. */
char *policy_sets_summary(const struct policy *p);

/* Log how many lines each log rule suppressed in a second that is over
 * (the rate limit: 10 lines per rule and second). Main thread, on a
 * timer; P may be NULL. */
void policy_log_report(struct policy *p);

#endif
