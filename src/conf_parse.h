/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_parse.h - private to the config parser: parse state, raw values as
 * the scanner and grammar see them, and the checks that turn them into a
 * struct conf. Only scanner.l, parser.y and conf*.c include this.
 */
#ifndef NFQD_CONF_PARSE_H
#define NFQD_CONF_PARSE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "diag.h"

/* One token's value: a number, address, name or string, as written. */
enum atom_kind {
	ATOM_NUM,
	ATOM_ADDR,		/* text only; inet_pton decides the family */
	ATOM_WORD,
	ATOM_STR,		/* text without the quotes */
};

struct atom {
	enum atom_kind kind;
	char *text;		/* as written (owned) */
	uint64_t num;		/* ATOM_NUM; UINT64_MAX if it overflowed */
	bool sized;		/* ATOM_NUM had a K/M/G suffix */
	struct conf_loc loc;
};

enum pelem_kind {
	PE_ONE,			/* a */
	PE_RANGE,		/* a-b */
	PE_SLASH,		/* a/b: prefix, mark/mask, rate/period */
};

struct pelem {
	enum pelem_kind kind;
	struct atom a, b;
	struct conf_loc loc;
};

/* A value: one element, "a, b" (comma), "{ a, b }" (list), or "@set". */
struct pval {
	bool list;
	bool comma;
	char *setref;
	struct pelem *elems;
	unsigned n;
	struct conf_loc loc;
};

enum item_kind {
	IT_MATCH,
	IT_SETADD,
	IT_COUNTER,
	IT_LOG,
	IT_MARK,
	IT_BYPASS,
	IT_VERDICT,
};

/* One piece of a rule: a match, a statement or the verdict. */
struct item {
	enum item_kind kind;
	struct conf_loc loc;
	char *text;
	struct conf_match m;
	char *prefix;
	uint32_t mark;
	enum verdict_kind verdict;
	uint16_t queue_num;
	char *add_set;		/* IT_SETADD: set name, key, timeout */
	enum match_field add_key;
	uint64_t add_timeout_ms;
	bool add_update;
	bool bad;		/* an error was reported: drop the rule */
	unsigned protos;	/* match implies one of these P_* (0: any) */
	const char *fam;	/* match implies "IPv4" or "IPv6", or NULL */
	const char *app;	/* it reads "DNS", "TLS" or "HTTP", or NULL */
	char name[24];		/* for messages: "tcp dport", "counter" */
};

struct items {
	struct item *v;
	unsigned n, cap;
};

/* Set being parsed: properties may come in any order, so check at '}'. */
struct pset {
	struct conf_set set;
	bool have_type, have_flags, have_elems;
	bool bad_type;		/* "type" was given but wrong */
	/* Where each was written (line 0: not given), for a type that
	 * makes it meaningless. */
	struct conf_loc interval_loc, timeout_flag_loc, size_loc, timeout_loc;
	struct pval *elems;
};

struct pstate {
	struct conf *conf;
	const char *file;		/* conf->files[0] */
	struct diags *diags;		/* where errors go */
	unsigned n_errs;		/* errors of this parse */
	bool nomem;
	const char *last_text;		/* the token just scanned */
	struct pset *cur_set;
	struct conf_hook *cur_hook;	/* hooks[] or &scratch */
	struct conf_hook scratch;	/* rules of a bad or duplicate hook */
	bool policy_seen;		/* in the current hook block */
	unsigned opt_seen;		/* bit per option */
	struct conf_loc queues_loc;
	struct conf_loc queue_base_loc;
	char **bad_sets;		/* dropped sets: no "unknown set" */
	unsigned n_bad_sets;
};

/* Report an error at LOC in st->file (diag.h keeps NFQD_MAX_ERRORS). */
void conf_error(struct pstate *st, const struct conf_loc *loc,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void conf_verror(struct pstate *st, const struct conf_loc *loc,
		 const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Numbers: decimal, 0x hex, optional K/M/G (saturates at UINT64_MAX). */
uint64_t conf_parse_number(const char *s, bool *sized);

void conf_atom_clear(struct atom *a);
struct pval *conf_pval_new(struct pelem *first, const struct conf_loc *loc);
int conf_pval_add(struct pval *v, struct pelem *e);
void conf_pval_free(struct pval *v);
struct pelem *conf_pelem_new(enum pelem_kind kind, struct atom *a,
			     struct atom *b);
void conf_pelem_free(struct pelem *e);
void conf_item_free(struct item *it);
struct items *conf_items_new(struct item *first);
int conf_items_add(struct items *l, struct item *it);
void conf_items_free(struct items *l);

/* Shared by conf_build.c and conf_rule.c. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool nomem;
};

void conf_sb_add(struct sbuf *b, const char *s);
void conf_sb_pval(struct sbuf *b, const struct pval *v);
char *conf_sb_done(struct sbuf *b, struct pstate *st);
struct item *conf_item_new(struct pstate *st, enum item_kind kind,
			   const struct conf_loc *loc, const char *text);
void conf_match_clear(struct conf_match *m);
void conf_elems_free(struct conf_elem *e, unsigned n);
void conf_rule_clear(struct conf_rule *r);
void conf_rules_free(struct conf_rule *r, unsigned n);
/*
 * Arrays the parser grows one element at a time (rules, a value's
 * elements) keep a capacity of the next power of two, implied by the
 * count: the new capacity to reallocate to before adding element N, or
 * 0 if there is room. An allocator whose realloc always moves (ASan's)
 * made 5000 rules cost seconds of copying.
 */
static inline size_t conf_grow(size_t n)
{
	if (n & (n - 1))
		return 0;
	return n ? 2 * n : 1;
}

void conf_pst_cleanup(struct pstate *st);

/* Grammar actions (conf_build.c). Values are borrowed, never freed. */
void conf_pst_option(struct pstate *st, const struct atom *name,
		     const struct pval *v);
/* An option whose value is a verdict keyword (incomplete-verdict drop). */
void conf_pst_option_verdict(struct pstate *st, const struct atom *name,
			     const struct item *verdict);
void conf_pst_set_begin(struct pstate *st, const struct atom *name);
void conf_pst_set_prop(struct pstate *st, const struct atom *name, bool eq,
		       struct pval **v);
void conf_pst_set_end(struct pstate *st);
void conf_pst_hook_begin(struct pstate *st, const struct atom *name);
void conf_pst_hook_policy(struct pstate *st, struct item *verdict,
			  const struct atom *word);
void conf_pst_hook_end(struct pstate *st);
void conf_pst_rule(struct pstate *st, struct items *l,
		   const struct conf_loc *end);
struct item *conf_pst_match(struct pstate *st, const char *kw,
			    const struct conf_loc *kwloc,
			    const struct atom *field, bool neg,
			    const struct pval *v);
struct item *conf_pst_limit(struct pstate *st, const struct conf_loc *kwloc,
			    const struct pval *args);
struct item *conf_pst_stmt(struct pstate *st, enum item_kind kind,
			   const struct conf_loc *loc, const struct atom *arg1,
			   const struct atom *arg2);
/* "add|update @SET { KW FIELD [timeout D] }" (D, TIMEOUT_KW NULL). */
struct item *conf_pst_setadd(struct pstate *st, const char *verb,
			     struct atom *set, const char *kw,
			     const struct atom *field,
			     const struct atom *timeout_kw,
			     const struct atom *dur);
/* "limit ARGS per KW FIELD [TAIL]": a bucket per value of the key;
 * TAIL (burst M, or NULL) may follow the key. */
struct item *conf_pst_limit_per(struct pstate *st,
				const struct conf_loc *kwloc,
				const struct pval *args, const char *kw,
				const struct atom *field,
				const struct pval *tail);
struct item *conf_pst_verdict(struct pstate *st, enum verdict_kind v,
			      const struct conf_loc *loc, const struct atom *w,
			      const struct atom *num);
void conf_pst_finish(struct pstate *st);

/* Value conversion (conf_elem.c); msg gets the reason on error. */
enum vshape {
	V_ADDR4,
	V_ADDR6,
	V_PORT,
	V_PROTO,
	V_ICMP,
	V_ICMP6,
	V_IFNAME,
	V_MARK,
	V_LEN,
	V_ID,
	V_DOMAIN,
	V_QTYPE,
};

int conf_conv_elem(const struct pelem *pe, enum vshape shape,
		   struct conf_elem *out, char *msg, size_t msglen);
enum vshape conf_set_shape(enum set_type t);
int conf_set_type_parse(const char *name);

/* The parser entry point (parser.y): 0, or -EINVAL/-ENOMEM. */
int conf_parse_buffer(struct pstate *st, const char *buf, size_t len);

#endif
