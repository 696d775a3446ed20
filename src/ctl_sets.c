/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_sets.c - "sets" and "set add|delete|flush|list": the runtime
 * elements of a running policy's named sets. Every command parses all
 * its elements before it changes anything, and undoes its own adds when
 * the set fills up midway: it applies wholly or not at all.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conf.h"
#include "ctl_sets.h"
#include "domset.h"
#include "dynset.h"
#include "policy.h"
#include "proto.h"
#include "set.h"

static json_t *err_json(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static json_t *err_json(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:s}", "error", msg);
}

/* ---- sets ---- */

static json_t *set_json(struct policy *p, unsigned i)
{
	struct policy_set_view v;
	struct dynset_stats st = { 0 };
	size_t n_static;
	json_t *o;

	policy_set_get(p, i, &v);
	if (v.dyn)
		dynset_get_stats(v.dyn, &st);
	n_static = policy_set_static(p, i);
	o = json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
		      "s:I, s:I, s:I, s:o, s:s}",
		      "name", v.name,
		      "type", conf_set_type_name(v.type),
		      "timeout_flag", v.timeout,
		      "elements", (json_int_t)(n_static + st.n),
		      "static_elements", (json_int_t)n_static,
		      "runtime_elements", (json_int_t)st.n,
		      "size", (json_int_t)st.max,
		      "timeout", (json_int_t)(v.dyn ?
				dynset_default_timeout(v.dyn) / 1000000 : 0),
		      "memory", (json_int_t)(st.memory + set_bytes(v.elems)),
		      "adds", (json_int_t)st.adds,
		      "deletes", (json_int_t)st.deletes,
		      "expiries", (json_int_t)st.expiries,
		      "table_full", (json_int_t)st.full,
		      "file", v.file ? json_string(v.file) : json_null(),
		      "source", v.file ? v.file : "config");
	return o;
}

static json_t *limits_json(struct policy *p)
{
	json_t *arr = json_array();
	unsigned n = policy_keylimit_count(p);

	for (unsigned i = 0; arr && i < n; i++) {
		struct policy_keylimit_view v;

		policy_keylimit_get(p, i, &v);
		json_array_append_new(arr, json_pack("{s:s, s:I, s:s, s:I, s:I, "
						     "s:I}",
			"hook", conf_hook_name(v.hook), "index", (json_int_t)v.pos,
			"rule", v.rule, "keys", (json_int_t)v.keys,
			"size", (json_int_t)v.size,
			"table_full", (json_int_t)v.full));
	}
	return arr;
}

int ctl_sets_list(struct policy *p, json_t **out)
{
	json_t *arr = json_array();
	unsigned n = policy_set_count(p);

	for (unsigned i = 0; arr && i < n; i++) {
		if (json_array_append_new(arr, set_json(p, i))) {
			json_decref(arr);
			arr = NULL;
		}
	}
	*out = json_pack("{s:o, s:o}", "sets", arr, "limits", limits_json(p));
	return *out ? 0 : -ENOMEM;
}

/* ---- set list ---- */

struct lister {
	json_t *arr;
	enum set_type type;
	const struct set *inline_elems;
	bool has_file;
	char **inline_doms;		/* a domain set's inline patterns, */
	size_t n_doms, cap_doms;	/* sorted */
	int err;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int note_dom(void *arg, const void *lo, const void *hi)
{
	struct lister *l = arg;
	char *t = strdup(lo);

	(void)hi;
	if (t && l->n_doms == l->cap_doms) {
		size_t cap = l->cap_doms ? 2 * l->cap_doms : 16;
		char **n = realloc(l->inline_doms, cap * sizeof(*n));

		if (!n) {
			free(t);
			t = NULL;
		} else {
			l->inline_doms = n;
			l->cap_doms = cap;
		}
	}
	if (!t) {
		l->err = -ENOMEM;
		return 1;
	}
	l->inline_doms[l->n_doms++] = t;
	return 0;
}

/* A domain set's inline patterns as text, to tell "config" from "file". */
static int note_doms(struct lister *l)
{
	if (l->type != SET_DOMAIN || !l->has_file || !l->inline_elems)
		return 0;
	set_walk(l->inline_elems, note_dom, l);
	qsort(l->inline_doms, l->n_doms, sizeof(char *), cmp_str);
	return l->err;
}

static void free_doms(struct lister *l)
{
	for (size_t i = 0; i < l->n_doms; i++)
		free(l->inline_doms[i]);
	free(l->inline_doms);
}

static int list_add(struct lister *l, const char *elem, const char *origin,
		    uint64_t left_ns)
{
	json_t *o = json_pack("{s:s, s:s, s:o}", "element", elem,
			      "origin", origin,
			      "expires", left_ns ? json_real(left_ns / 1e9) :
						   json_null());

	if (json_array_append_new(l->arr, o)) {
		l->err = -ENOMEM;
		return 1;
	}
	return 0;
}

/* Where a static element came from. */
static const char *static_origin(const struct lister *l, const void *lo)
{
	if (!l->has_file)
		return "config";
	if (!l->inline_elems)
		return "file";
	if (l->type == SET_DOMAIN)
		return bsearch(&lo, l->inline_doms, l->n_doms, sizeof(char *),
			       cmp_str) ? "config" : "file";
	if (set_kind(l->inline_elems) == SETK_U32)
		return set_has_u32(l->inline_elems, *(const uint32_t *)lo) ?
		       "config" : "file";
	if (set_kind(l->inline_elems) == SETK_U128)
		return set_has_u128(l->inline_elems, lo) ? "config" : "file";
	return set_has_str(l->inline_elems, lo) ? "config" : "file";
}

/* Text of a static element of L's type: a value, a range, a name. */
static void static_text(const struct lister *l, const void *lo,
			const void *hi, char *buf, size_t size)
{
	char a[64], b[64];

	if (l->type == SET_DOMAIN) {
		snprintf(buf, size, "%s", (const char *)lo);
		return;
	}
	if (l->type == SET_IFNAME) {
		snprintf(buf, size, "%.16s%s", (const char *)lo, hi ? "*" : "");
		return;
	}
	if (l->type == SET_IPV6_ADDR) {
		inet_ntop(AF_INET6, lo, a, sizeof(a));
		inet_ntop(AF_INET6, hi, b, sizeof(b));
	} else {
		policy_u32_text(l->type, *(const uint32_t *)lo, a, sizeof(a));
		policy_u32_text(l->type, *(const uint32_t *)hi, b, sizeof(b));
	}
	if (strcmp(a, b) == 0)
		snprintf(buf, size, "%s", a);
	else
		snprintf(buf, size, "%s-%s", a, b);
}

static int list_static(void *arg, const void *lo, const void *hi)
{
	struct lister *l = arg;
	char text[DOM_PATTERN_MAX + 16];

	static_text(l, lo, hi, text, sizeof(text));
	return list_add(l, text, static_origin(l, lo), 0);
}

static int list_runtime(void *arg, const struct dyn_elem *e)
{
	struct lister *l = arg;
	char text[DOM_PATTERN_MAX + 1];

	policy_dyn_text(l->type, e, text, sizeof(text));
	return list_add(l, text, e->origin == DYN_RULE ? "rule" : "runtime",
			e->left_ns);
}

static int cmd_list(const struct policy_set_view *v, json_t **out)
{
	struct lister l = { .arr = json_array(), .type = v->type,
			    .inline_elems = v->inline_elems,
			    .has_file = v->file != NULL };

	if (!l.arr)
		return -ENOMEM;
	if (!note_doms(&l))
		set_walk(v->elems, list_static, &l);
	if (v->dyn && !l.err)
		dynset_walk(v->dyn, dynset_now(), list_runtime, &l);
	free_doms(&l);
	if (l.err) {
		json_decref(l.arr);
		return l.err;
	}
	*out = json_pack("{s:s, s:s, s:o}", "set", v->name,
			 "type", conf_set_type_name(v->type), "elements", l.arr);
	return *out ? 0 : -ENOMEM;
}

/* ---- add, delete, flush ---- */

/* The elements of one command, parsed: values, or a domain set's
 * patterns (their names allocated). */
struct keys {
	uint8_t (*k)[16];
	struct dyn_name *pat;
	size_t n, cap;
	uint64_t timeout_ns;
	bool timeout_given;
};

static int keys_room(struct keys *ks)
{
	size_t cap = ks->cap ? ks->cap * 2 : 64;
	void *k, *pat;

	if (ks->n < ks->cap)
		return 0;
	k = realloc(ks->k, cap * sizeof(*ks->k));
	if (k)
		ks->k = k;
	pat = k ? realloc(ks->pat, cap * sizeof(*ks->pat)) : NULL;
	if (!pat)
		return -ENOMEM;
	ks->pat = pat;
	ks->cap = cap;
	return 0;
}

/* Push value K, or (NAME not NULL) the pattern NAME with FLAGS. */
static int keys_push(struct keys *ks, const uint8_t k[16], const char *name,
		     unsigned flags)
{
	char *copy = NULL;

	if (keys_room(ks) || (name && !(copy = strdup(name))))
		return -ENOMEM;
	memcpy(ks->k[ks->n], k, 16);
	ks->pat[ks->n++] = (struct dyn_name){ copy, copy ? strlen(copy) : 0,
					      flags };
	return 0;
}

static void keys_free(struct keys *ks)
{
	for (size_t i = 0; i < ks->n; i++)
		free((char *)ks->pat[i].name);
	free(ks->pat);
	free(ks->k);
}

/* Element I of KS in set DS: added, deleted, its add undone. */
static int key_add(struct dynset *ds, const struct keys *ks, size_t i,
		   uint64_t timeout)
{
	if (ks->pat[i].name)
		return dynset_add_pattern(ds, &ks->pat[i], timeout,
					  DYN_RUNTIME, true);
	return dynset_add(ds, ks->k[i], timeout, DYN_RUNTIME, true);
}

static int key_del(struct dynset *ds, const struct keys *ks, size_t i)
{
	return ks->pat[i].name ? dynset_del_pattern(ds, &ks->pat[i]) :
				 dynset_del(ds, ks->k[i]);
}

static void key_undo(struct dynset *ds, const struct keys *ks, size_t i)
{
	if (ks->pat[i].name)
		dynset_undo_add_pattern(ds, &ks->pat[i]);
	else
		dynset_undo_add(ds, ks->k[i]);
}

/* A domain set's element: the patterns of a line of a list. */
struct line_keys {
	struct keys *ks;
	const char *why;		/* the first bad pattern's reason */
	char bad[PROTO_MAX_ARG_LEN + 1];	/* ... and text */
	int rc;
};

static void push_token(void *arg, char *text, unsigned col, unsigned force,
		       bool entry)
{
	static const uint8_t none[16];
	struct line_keys *lk = arg;
	char name[DOM_PATTERN_MAX + 1];
	unsigned flags;

	(void)col;
	(void)entry;
	if (lk->why || lk->rc)
		return;
	if (domset_pattern(text, strlen(text), name, &flags, &lk->why)) {
		snprintf(lk->bad, sizeof(lk->bad), "%s", text);
		return;
	}
	lk->rc = keys_push(lk->ks, none, name, force ? force : flags);
}

/* Element TEXT of domain set V: a pattern, or a line of a list in the
 * formats a set's file takes (a hosts line, an adblock rule), each of its
 * patterns pushed. 0, 1 with *OUT set for a bad one, or -ENOMEM. */
static int push_patterns(const struct policy_set_view *v, struct keys *ks,
			 char *text, json_t **out)
{
	struct line_keys lk = { .ks = ks };
	const char *tok = text, *why;
	unsigned col;

	why = conf_domain_line(text, push_token, &lk, &col, &tok);
	if (why) {
		*out = err_json("set %s: \"%s\": %s", v->name, tok, why);
		return 1;
	}
	if (lk.why) {
		*out = err_json("set %s: %s: %s", v->name, lk.bad, lk.why);
		return 1;
	}
	return lk.rc;
}

/* One element's text (trimmed; empty and '#' lines are skipped). 0, 1
 * with *out set for a bad element, or -ENOMEM. */
static int parse_one(const struct policy_set_view *v, const char *text,
		     size_t len, struct keys *ks, json_t **out)
{
	char buf[PROTO_MAX_ARG_LEN + 1], why[384];
	uint8_t k[16];

	while (len && (*text == ' ' || *text == '\t'))
		text++, len--;
	while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
		len--;
	if (!len || *text == '#')
		return 0;
	if (len > PROTO_MAX_ARG_LEN) {
		*out = err_json("set %s: element too long: \"%.40s...\"",
				v->name, text);
		return 1;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (v->type == SET_DOMAIN)
		return push_patterns(v, ks, buf, out);
	if (policy_elem_key(v->type, buf, k, why, sizeof(why))) {
		*out = err_json("set %s: %s: %s", v->name, buf, why);
		return 1;
	}
	return keys_push(ks, k, NULL, 0);
}

/* ARGV[FIRST..] (a trailing "timeout D" when ADD) and the data lines. */
static int parse_elems(const struct policy_set_view *v,
		       const struct proto_request *r, unsigned first,
		       bool add, struct keys *ks, json_t **out)
{
	unsigned end = r->argc;
	uint64_t ms;
	int rc = 0;

	if (add && end >= first + 2 && !strcmp(r->argv[end - 2], "timeout")) {
		if (conf_parse_duration(r->argv[end - 1], &ms)) {
			*out = err_json("bad timeout \"%s\"; expected a "
					"duration: " CONF_DURATION_FORMS,
					r->argv[end - 1]);
			return 1;
		}
		ks->timeout_ns = ms * 1000000ull;
		ks->timeout_given = true;
		end -= 2;
	}
	for (unsigned i = first; !rc && i < end; i++)
		rc = parse_one(v, r->argv[i], strlen(r->argv[i]), ks, out);
	for (size_t off = 0; !rc && off < r->data_len;) {
		const char *line = r->data + off;
		size_t n = strcspn(line, "\n");

		rc = parse_one(v, line, n, ks, out);
		off += n + 1;
	}
	if (!rc && ks->n == 0) {
		*out = err_json("set %s: no elements given", v->name);
		rc = 1;
	}
	return rc;
}

/* Undo the first N keys of KS that this command added (ADDED[i]). */
static void undo_adds(struct dynset *ds, const struct keys *ks,
		      const bool *added, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (added[i])
			key_undo(ds, ks, i);
	dynset_reclaim(ds);
}

static int apply_add(const struct policy_set_view *v, struct keys *ks,
		     json_t **out)
{
	struct dynset *ds = v->dyn;
	uint64_t timeout = ks->timeout_given ? ks->timeout_ns :
			   dynset_default_timeout(ds);
	size_t n_new = 0;
	bool *added = calloc(ks->n, sizeof(*added));

	if (!added || dynset_prepare(ds)) {
		free(added);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ks->n; i++) {
		int rc = key_add(ds, ks, i, timeout);

		if (rc < 0) {
			undo_adds(ds, ks, added, i);
			free(added);
			if (rc != -ENOSPC)
				return rc;
			*out = err_json("set %s is full (size %zu); nothing "
					"added: raise \"size\" in its "
					"declaration and reload", v->name,
					dynset_max(ds));
			return 1;
		}
		added[i] = rc == 1;
		n_new += rc == 1;
	}
	free(added);
	dynset_grow(ds);
	*out = json_pack("{s:s, s:I, s:I, s:I}", "set", v->name,
			 "added", (json_int_t)n_new,
			 "existing", (json_int_t)(ks->n - n_new),
			 "timeout", (json_int_t)(timeout / 1000000));
	return *out ? 0 : -ENOMEM;
}

/* Is element I of KS a config or file element (which a runtime delete
 * cannot remove)? */
static bool is_static(const struct policy_set_view *v, const struct keys *ks,
		      size_t i)
{
	const struct dyn_name *n = &ks->pat[i];
	uint32_t u;

	if (n->name)
		return domset_holds(set_domset(v->elems), n->name, n->len,
				    n->flags);
	if (v->type == SET_IPV6_ADDR)
		return set_has_u128(v->elems, ks->k[i]);
	memcpy(&u, ks->k[i], sizeof(u));
	return set_has_u32(v->elems, u);
}

/* Is it also a runtime element (added with the same value as a config
 * or file element: its delete removes it, the value stays matched)? */
static bool is_runtime(const struct policy_set_view *v, const struct keys *ks,
		       size_t i)
{
	if (ks->pat[i].name)
		return dynset_has_pattern(v->dyn, &ks->pat[i]);
	return dynset_has_u128(v->dyn, ks->k[i]);
}

static int apply_delete(const struct policy_set_view *v, struct keys *ks,
			json_t **out)
{
	size_t n_del = 0;
	char text[DOM_PATTERN_MAX + 1];

	for (size_t i = 0; i < ks->n; i++) {
		if (!is_static(v, ks, i) || is_runtime(v, ks, i))
			continue;
		policy_dyn_text(v->type, &(struct dyn_elem){
					.v = ks->k[i], .n = ks->pat[i] },
				text, sizeof(text));
		*out = err_json("set %s: %s comes from the %s; nothing "
				"deleted: remove it there and reload", v->name,
				text, v->file ? "config or its file" :
				"config");
		return 1;
	}
	for (size_t i = 0; i < ks->n; i++)
		n_del += (size_t)key_del(v->dyn, ks, i);
	dynset_reclaim(v->dyn);
	*out = json_pack("{s:s, s:I, s:I}", "set", v->name,
			 "deleted", (json_int_t)n_del,
			 "absent", (json_int_t)(ks->n - n_del));
	return *out ? 0 : -ENOMEM;
}

static int cmd_change(const struct policy_set_view *v,
		      const struct proto_request *r, bool add, json_t **out)
{
	struct keys ks = { 0 };
	int rc;

	rc = parse_elems(v, r, 3, add, &ks, out);
	if (rc == 0 && add && ks.timeout_given && !v->timeout) {
		*out = err_json("set %s has no \"flags timeout;\": add it to "
				"its declaration to give elements a timeout",
				v->name);
		rc = 1;
	}
	if (rc == 0)
		rc = add ? apply_add(v, &ks, out) : apply_delete(v, &ks, out);
	keys_free(&ks);
	return rc;
}

static int cmd_flush(const struct policy_set_view *v, json_t **out)
{
	size_t n = dynset_flush(v->dyn);

	dynset_reclaim(v->dyn);
	*out = json_pack("{s:s, s:I}", "set", v->name,
			 "deleted", (json_int_t)n);
	return *out ? 0 : -ENOMEM;
}

int ctl_set_cmd(struct policy *p, const struct proto_request *r,
		json_t **out)
{
	static const char *const subs[] = { "add", "delete", "flush",
					    "list" };
	struct policy_set_view v;
	unsigned sub;
	int i;

	for (sub = 0; r->argc >= 2 && sub < 4; sub++)
		if (!strcmp(r->argv[1], subs[sub]))
			break;
	if (r->argc < 3 || sub == 4 || (sub >= 2 && r->argc != 3) ||
	    (sub >= 2 && r->data_len)) {
		*out = err_json("usage: set add|delete NAME ELEMENT... | "
				"set flush|list NAME");
		return CTL_SETS_BADARGS;
	}
	i = policy_set_find(p, r->argv[2]);
	if (i < 0) {
		*out = err_json("unknown set \"%s\" (nfqd-ctl sets lists "
				"them)", r->argv[2]);
		return 1;
	}
	policy_set_get(p, (unsigned)i, &v);
	if (sub == 3)
		return cmd_list(&v, out);
	if (!v.dyn) {
		*out = err_json("set %s has type %s, which takes no runtime "
				"elements", v.name, conf_set_type_name(v.type));
		return 1;
	}
	if (sub == 2)
		return cmd_flush(&v, out);
	return cmd_change(&v, r, sub == 0, out);
}
