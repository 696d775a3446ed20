/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_cmd.c - the daemon's control commands: each turns the daemon's
 * state into the JSON document nfqd-ctl(8) documents. Main thread only.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu-qsbr.h>

#include "conf.h"
#include "ctl_cmd.h"
#include "ctl_sets.h"
#include "krules.h"
#include "log.h"
#include "policy.h"
#include "proto.h"
#include "queue.h"
#include "registry.h"
#include "stats.h"

json_t *ctl_error_json(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:s}", "error", msg);
}

/* json_object_set_new() for a u64 counter. */
static int set_u64(json_t *o, const char *key, uint64_t v)
{
	return json_object_set_new(o, key, json_integer((json_int_t)v));
}

/* ------------------------------------------------------------------ */
/* the hooks the policy judges, as the kernel and the queues see them  */

/* What status and reload say about each hook the policy judges. */
struct hook_view {
	uint32_t used;			/* bit h: a rule, or policy drop */
	int64_t seen[QUEUE_HOOKS];	/* last packet, 0: none */
	uint16_t nums[NFQD_MAX_QUEUES];	/* the queues bound */
	unsigned n;
	int krc;			/* krules_scan(): 0 or -errno */
	struct krules_found k;
};

static void hook_view_read(const struct registry_root *root,
			   struct hook_view *v)
{
	const struct policy *p;
	struct registry *r;

	memset(v, 0, sizeof(*v));
	rcu_read_lock();
	p = registry_policy(root);
	for (int h = 0; p && h < QUEUE_HOOKS; h++)
		if (policy_rule_count(p, h) ||
		    policy_hook_policy(p, h) == VERDICT_DROP)
			v->used |= 1u << h;
	r = registry_get(root);
	for (unsigned i = 0; r && i < r->n && i < NFQD_MAX_QUEUES; i++) {
		v->nums[v->n++] = queue_num(r->q[i]);
		for (unsigned h = 0; h < QUEUE_HOOKS; h++) {
			int64_t t = queue_hook_last_seen(r->q[i], h);

			if (t > v->seen[h])
				v->seen[h] = t;
		}
	}
	rcu_read_unlock();
	v->krc = krules_scan(v->nums, v->n, &v->k);
}

/* 1: a kernel rule queues hook H's packets to us, 0: none does, -1: we
 * cannot tell (the ruleset unreadable, or legacy iptables tables). */
static int hook_queued(const struct hook_view *v, unsigned h)
{
	if (v->krc < 0)
		return -1;
	if ((v->k.v4 | v->k.v6) & (1u << h))
		return 1;
	return v->k.legacy ? -1 : 0;
}

static const char *hook_families(const struct hook_view *v, unsigned h)
{
	bool v4 = v->k.v4 & (1u << h), v6 = v->k.v6 & (1u << h);

	return v4 && v6 ? "ipv4 ipv6" : v4 ? "ipv4" : v6 ? "ipv6" : "";
}

static json_t *hook_status_json(const struct hook_view *v, unsigned h,
				int64_t now)
{
	int q = hook_queued(v, h);
	json_t *o = json_pack("{s:s}", "hook", conf_hook_name(h));

	if (!o)
		return NULL;
	json_object_set_new(o, "kernel_rules", q < 0 ? json_null() :
			    json_boolean(q));
	json_object_set_new(o, "kernel_families",
			    json_string(hook_families(v, h)));
	if (v->krc < 0)
		json_object_set_new(o, "kernel_error",
				    json_string(strerror(-v->krc)));
	else if (q < 0)
		json_object_set_new(o, "kernel_error", json_string(
			"iptables-legacy tables exist; their rules cannot be read"));
	json_object_set_new(o, "last_packet", v->seen[h] ?
			    json_integer(now > v->seen[h] ? now - v->seen[h] : 0) :
			    json_null());
	return o;
}

static json_t *hooks_status_json(const struct ctl_ops *ops)
{
	struct hook_view *v = malloc(sizeof(*v));
	json_t *a = json_array();
	int64_t now = (int64_t)time(NULL);

	if (!v || !a) {
		free(v);
		json_decref(a);
		return NULL;
	}
	hook_view_read(ops->root, v);
	for (unsigned h = 0; h < QUEUE_HOOKS; h++)
		if (v->used & (1u << h))
			json_array_append_new(a, hook_status_json(v, h, now));
	free(v);
	return a;
}

/* A hook the policy judges that no kernel rule queues from gets a
 * warning, logged after WHAT and returned (a JSON array). */
static json_t *unfed_hooks(const struct registry_root *root, const char *what)
{
	struct hook_view *v = malloc(sizeof(*v));
	json_t *w = json_array();
	char msg[512];

	if (!v || !w) {
		free(v);
		json_decref(w);
		return NULL;
	}
	hook_view_read(root, v);
	for (unsigned h = 0; h < QUEUE_HOOKS; h++) {
		if (!(v->used & (1u << h)) || hook_queued(v, h) != 0)
			continue;
		snprintf(msg, sizeof(msg), "hook %s: no kernel rule queues its "
			 "packets to nfqd's queues, so its rules judge nothing; "
			 "run: nfqd-rules install (or enable nfqd-rules.service)",
			 conf_hook_name(h));
		log_warn("%s: %s", what, msg);
		json_array_append_new(w, json_string(msg));
	}
	free(v);
	return w;
}

void ctl_warn_unfed_hooks(const struct registry_root *root, const char *what)
{
	json_decref(unfed_hooks(root, what));
}

static int cmd_status(const struct ctl_ops *ops,
		      const struct proto_request *req, json_t **out)
{
	struct registry *r;
	json_t *o, *queues, *adopted;
	struct ctl_status st;
	double up;

	ops->status(ops->ctx, &st);
	up = st.uptime;

	queues = json_array();
	adopted = json_array();
	if (!queues || !adopted) {
		json_decref(queues);
		json_decref(adopted);
		return -ENOMEM;
	}
	rcu_read_lock();
	r = registry_get(ops->root);
	for (unsigned i = 0; r && i < r->n; i++) {
		json_array_append_new(queues, json_integer(queue_num(r->q[i])));
		if (queue_adopted(r->q[i]))
			json_array_append_new(adopted,
					      json_integer(queue_num(r->q[i])));
	}
	rcu_read_unlock();
	o = json_pack("{s:s, s:I, s:I, s:s, s:b, s:I, s:o, s:o, s:o*}",
		      "version", PACKAGE_VERSION,
		      "pid", (json_int_t)st.pid,
		      "uptime", (json_int_t)(up > 0 ? up : 0),
		      "config", st.config_path ? st.config_path : "",
		      "builtin_config", st.builtin_config,
		      "generation", (json_int_t)st.generation,
		      "queues", queues,
		      "adopted", adopted,
		      "hooks", hooks_status_json(ops));
	if (!o)
		return -ENOMEM;
	/* Where the running config came from; "refused" only when the
	 * file was refused at start and the last good config runs. */
	json_object_set_new(o, "config_state",
			    json_string(st.config_state ? st.config_state :
					"file"));
	if (st.refused)
		json_object_set_new(o, "refused", json_string(st.refused));
	*out = o;
	return 0;
}

static json_t *stats_row_json(const struct stats_row *w)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "queue", json_integer(w->queue));
	json_object_set_new(o, "cpu", json_integer(w->cpu));
	set_u64(o, "packets", w->c.packets);
	set_u64(o, "bytes", w->c.bytes);
	set_u64(o, "accepted", w->c.accepted);
	set_u64(o, "dropped", w->c.dropped);
	set_u64(o, "other", w->c.other);
	set_u64(o, "batches", w->c.batches);
	set_u64(o, "enobufs", w->c.enobufs);
	set_u64(o, "errors", w->c.errors);
	set_u64(o, "incomplete", w->c.incomplete);
	set_u64(o, "orphans", w->c.orphans);
	set_u64(o, "flows", w->c.flows);
	set_u64(o, "flows_pending", w->c.flows_pending);
	set_u64(o, "flow_evictions", w->c.flow_evictions);
	set_u64(o, "names", w->c.names);
	set_u64(o, "names_incomplete", w->c.names_incomplete);
	set_u64(o, "queue_total", w->k.queue_total);
	set_u64(o, "queue_dropped", w->k.queue_dropped);
	set_u64(o, "user_dropped", w->k.user_dropped);
	set_u64(o, "id_sequence", w->k.id_sequence);
	set_u64(o, "peer_portid", w->k.peer_portid);
	set_u64(o, "copy_mode", w->k.copy_mode);
	set_u64(o, "copy_range", w->k.copy_range);
	return o;
}

static int cmd_stats(const struct ctl_ops *ops,
		      const struct proto_request *r, json_t **out)
{
	struct stats_row *rows;
	json_t *queues;
	int n;

	n = stats_snapshot(ops->root, &rows);
	if (n < 0)
		return n;
	queues = json_array();
	for (int i = 0; queues && i < n; i++) {
		if (json_array_append_new(queues, stats_row_json(&rows[i]))) {
			json_decref(queues);
			queues = NULL;
		}
	}
	free(rows);
	*out = json_pack("{s:o}", "queues", queues);
	return *out ? 0 : -ENOMEM;
}

static json_t *hook_json(const struct policy *p, enum conf_hook_id h)
{
	json_t *rules = json_array();
	uint64_t packets, bytes;
	unsigned n = policy_rule_count(p, h);

	for (unsigned i = 0; rules && i < n; i++) {
		json_t *r;

		policy_rule_counters(p, h, i, &packets, &bytes);
		r = json_pack("{s:I, s:s, s:I, s:I}",
			      "index", (json_int_t)i + 1,
			      "rule", policy_rule_text(p, h, i),
			      "packets", (json_int_t)packets,
			      "bytes", (json_int_t)bytes);
		if (json_array_append_new(rules, r)) {
			json_decref(rules);
			rules = NULL;
		}
	}
	packets = policy_policy_packets(p, h);
	return json_pack("{s:s, s:s, s:I, s:o}",
			 "hook", conf_hook_name(h),
			 "policy", conf_verdict_name(policy_hook_policy(p, h)),
			 "policy_packets", (json_int_t)packets,
			 "rules", rules);
}

/* [{"set":"NAME","elements":N}] of P's named sets. */
static json_t *sets_json(const struct policy *p)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < policy_set_count(p); i++) {
		struct policy_set_view v;

		policy_set_get(p, i, &v);
		json_array_append_new(a, json_pack("{s:s, s:I}",
			"set", v.name, "elements",
			(json_int_t)policy_set_elements(p, i)));
	}
	return a;
}

static int cmd_rules(const struct ctl_ops *ops,
		      const struct proto_request *r, json_t **out)
{
	struct ctl_status st;
	struct policy *p;
	json_t *hooks = json_array(), *sets = NULL;

	if (!hooks)
		return -ENOMEM;
	/* Rule texts live in the policy: copy them inside the section. */
	rcu_read_lock();
	p = registry_policy(ops->root);
	for (int h = 0; p && hooks && h < HOOK_MAX; h++) {
		if (json_array_append_new(hooks, hook_json(p, h))) {
			json_decref(hooks);
			hooks = NULL;
		}
	}
	sets = sets_json(p);
	rcu_read_unlock();
	ops->status(ops->ctx, &st);
	*out = json_pack("{s:I, s:o, s:o*}", "generation",
			 (json_int_t)st.generation, "hooks", hooks, "sets", sets);
	return *out ? 0 : -ENOMEM;
}

/* ["a", "b"] from "a\nb\n" (NULL: []). */
static json_t *lines_json(const char *text)
{
	json_t *lines = json_array();
	const char *p = text ? text : "";

	while (lines && *p) {
		size_t n = strcspn(p, "\n");

		if (n)
			json_array_append_new(lines, json_stringn(p, n));
		p += n + (p[n] == '\n');
	}
	return lines;
}

/* {"error": first line, "errors": [every line]} from "a\nb\n". */
static json_t *reload_error_json(const char *errors, int err)
{
	json_t *lines = lines_json(errors);
	json_t *o;

	if (lines && json_array_size(lines) == 0) {
		char msg[128];

		snprintf(msg, sizeof(msg), "reload failed (%s)",
			 strerror(-err));
		json_array_append_new(lines, json_string(msg));
	}
	o = json_pack("{s:O, s:o}", "error", json_array_get(lines, 0),
		      "errors", lines);
	return o;
}

static int cmd_reload(const struct ctl_ops *ops,
		      const struct proto_request *r, json_t **out)
{
	json_t *warnings, *kernel;
	struct ctl_status st;
	char *errors = NULL;
	int ret;

	ret = ops->reload(ops->ctx, &errors);
	ops->status(ops->ctx, &st);
	if (ret < 0) {
		*out = reload_error_json(errors, ret);
		log_err("control: reload failed, keeping generation %llu: %s",
			(unsigned long long)st.generation,
			json_string_value(json_object_get(*out, "error")));
		free(errors);
		return *out ? 1 : -ENOMEM;
	}
	/* The config's warnings, then the kernel's side. */
	warnings = lines_json(errors);
	free(errors);
	kernel = unfed_hooks(ops->root, "control: reload");
	if (warnings && kernel)
		json_array_extend(warnings, kernel);
	json_decref(kernel);
	*out = json_pack("{s:I, s:o*}", "generation",
			 (json_int_t)st.generation, "warnings", warnings);
	return *out ? 0 : -ENOMEM;
}

static int cmd_counters_reset(const struct ctl_ops *ops,
		      const struct proto_request *r, json_t **out)
{
	ops->counters_reset(ops->ctx);
	log_info("control: counters reset");
	*out = json_pack("{s:b}", "reset", 1);
	return *out ? 0 : -ENOMEM;
}

static int cmd_sets(const struct ctl_ops *ops, const struct proto_request *r,
		    json_t **out)
{
	int ret;

	rcu_read_lock();
	ret = ctl_sets_list(registry_policy(ops->root), out);
	rcu_read_unlock();
	return ret;
}

static int cmd_set(const struct ctl_ops *ops, const struct proto_request *r,
		   json_t **out)
{
	struct policy *p = registry_policy(ops->root);

	if (!p) {
		*out = ctl_error_json("no policy loaded yet");
		return 1;
	}
	return ctl_set_cmd(p, r, out);
}

/* The daemon's command table: words of the request, handler. */
static const struct ctl_cmd {
	const char *name;
	const char *sub;	/* required second word, or NULL for none */
	bool more;		/* the handler checks the other words */
	int (*run)(const struct ctl_ops *ops, const struct proto_request *r,
		   json_t **out);
} commands[] = {
	{ "status", NULL, false, cmd_status },
	{ "stats", NULL, false, cmd_stats },
	{ "rules", NULL, false, cmd_rules },
	{ "reload", NULL, false, cmd_reload },
	{ "counters", "reset", false, cmd_counters_reset },
	{ "sets", NULL, false, cmd_sets },
	{ "set", NULL, true, cmd_set },
};

static const struct ctl_cmd *cmd_find(const struct proto_request *r)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const struct ctl_cmd *c = &commands[i];

		if (strcmp(r->argv[0], c->name) != 0)
			continue;
		if (c->more)
			return c;
		if (r->data_len)
			return NULL;
		if (c->sub ? r->argc == 2 && strcmp(r->argv[1], c->sub) == 0
			   : r->argc == 1)
			return c;
		return NULL;
	}
	return NULL;
}

int ctl_cmd_run(const struct ctl_ops *ops, const struct proto_request *r,
		json_t **out)
{
	const struct ctl_cmd *c = cmd_find(r);
	int ret;

	*out = NULL;
	if (!c) {
		*out = ctl_error_json("unknown command '%s%s%s'", r->argv[0],
				      r->argc > 1 ? " " : "",
				      r->argc > 1 ? r->argv[1] : "");
		return PROTO_ST_UNKNOWN;
	}
	ret = c->run(ops, r, out);
	if (ret == 0)
		return PROTO_ST_OK;
	if (ret == CTL_SETS_BADARGS)
		return PROTO_ST_UNKNOWN;
	if (ret > 0)
		return PROTO_ST_FAILED;
	json_decref(*out);
	*out = ctl_error_json("%s failed (%s)", c->name, strerror(-ret));
	return PROTO_ST_INTERNAL;
}
