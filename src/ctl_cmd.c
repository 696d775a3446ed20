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

#include <urcu-qsbr.h>

#include "conf.h"
#include "ctl_cmd.h"
#include "ctl_sets.h"
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
	o = json_pack("{s:s, s:I, s:I, s:s, s:b, s:I, s:o, s:o}",
		      "version", PACKAGE_VERSION,
		      "pid", (json_int_t)st.pid,
		      "uptime", (json_int_t)(up > 0 ? up : 0),
		      "config", st.config_path ? st.config_path : "",
		      "builtin_config", st.builtin_config,
		      "generation", (json_int_t)st.generation,
		      "queues", queues,
		      "adopted", adopted);
	if (!o)
		return -ENOMEM;
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

static int cmd_rules(const struct ctl_ops *ops,
		      const struct proto_request *r, json_t **out)
{
	struct ctl_status st;
	struct policy *p;
	json_t *hooks = json_array();

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
	rcu_read_unlock();
	ops->status(ops->ctx, &st);
	*out = json_pack("{s:I, s:o}", "generation", (json_int_t)st.generation,
			 "hooks", hooks);
	return *out ? 0 : -ENOMEM;
}

/* {"error": first line, "errors": [every line]} from "a\nb\n". */
static json_t *reload_error_json(const char *errors, int err)
{
	json_t *lines = json_array();
	const char *p = errors ? errors : "";
	json_t *o;

	while (lines && *p) {
		size_t n = strcspn(p, "\n");

		if (n)
			json_array_append_new(lines, json_stringn(p, n));
		p += n + (p[n] == '\n');
	}
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
	free(errors);
	*out = json_pack("{s:I}", "generation", (json_int_t)st.generation);
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
	return ctl_sets_list(registry_policy(ops->root), out);
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
