/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_render.c - nfqd-ctl's text output: the daemon always answers JSON;
 * this turns status, stats and rules into aligned tables.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctl_client.h"

/* nfqd's counters and the kernel's columns, in stats file order. */
static const char *const stats_cols[] = {
	"queue", "cpu", "packets", "bytes", "accepted", "dropped", "other",
	"batches", "enobufs", "errors", "queue_total", "queue_dropped",
	"user_dropped", "id_sequence", "incomplete", "orphans", "flows",
	"flows_pending", "flow_evictions", "names", "names_incomplete",
};
#define N_STATS_COLS	(sizeof(stats_cols) / sizeof(stats_cols[0]))

static json_int_t int_of(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static const char *str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void print_duration(FILE *f, json_int_t s)
{
	if (s >= 86400)
		fprintf(f, "%lldd ", (long long)(s / 86400));
	if (s >= 3600)
		fprintf(f, "%lldh ", (long long)(s / 3600 % 24));
	if (s >= 60)
		fprintf(f, "%lldm ", (long long)(s / 60 % 60));
	fprintf(f, "%llds", (long long)(s % 60));
}

/* "hook input:  kernel rules yes (ipv4 ipv6), last packet 3s ago", per
 * hook the policy judges; what is wrong says what to do. */
static void render_status_hooks(FILE *f, json_t *hooks)
{
	json_t *h, *k, *seen;
	size_t i;

	json_array_foreach(hooks, i, h) {
		k = json_object_get(h, "kernel_rules");
		seen = json_object_get(h, "last_packet");
		fprintf(f, "hook %-12s", str_of(h, "hook"));
		if (json_is_true(k))
			fprintf(f, "kernel rules yes (%s), ",
				str_of(h, "kernel_families"));
		else if (json_is_false(k))
			fprintf(f, "kernel rules NONE (run nfqd-rules install), ");
		else
			fprintf(f, "kernel rules unknown (%s), ",
				str_of(h, "kernel_error"));
		if (json_is_integer(seen)) {
			fprintf(f, "last packet ");
			print_duration(f, json_integer_value(seen));
			fprintf(f, " ago\n");
		} else {
			fprintf(f, "no packet seen\n");
		}
	}
}

int ctl_render_status(FILE *f, json_t *j)
{
	json_t *queues = json_object_get(j, "queues"), *q;
	size_t i;

	if (!json_is_object(j) || !json_is_array(queues))
		return -EINVAL;
	fprintf(f, "version:     %s\n", str_of(j, "version"));
	fprintf(f, "pid:         %lld\n", (long long)int_of(j, "pid"));
	fprintf(f, "uptime:      ");
	print_duration(f, int_of(j, "uptime"));
	fprintf(f, "\nconfig:      %s%s\n", str_of(j, "config"),
		json_is_true(json_object_get(j, "builtin_config")) ?
		" (absent: built-in configuration)" : "");
	if (json_is_string(json_object_get(j, "refused")))
		fprintf(f, "config state: LAST GOOD CONFIG: the file was refused at start: %s\n",
			str_of(j, "refused"));
	fprintf(f, "generation:  %lld\n", (long long)int_of(j, "generation"));
	fprintf(f, "queues:     ");
	json_array_foreach(queues, i, q)
		fprintf(f, " %lld", (long long)json_integer_value(q));
	fprintf(f, "%s\n", json_array_size(queues) ? "" : " none");
	queues = json_object_get(j, "adopted");
	if (json_is_array(queues)) {
		fprintf(f, "adopted:    ");
		json_array_foreach(queues, i, q)
			fprintf(f, " %lld", (long long)json_integer_value(q));
		fprintf(f, "%s\n", json_array_size(queues) ? "" : " none");
	}
	render_status_hooks(f, json_object_get(j, "hooks"));
	return 0;
}

int ctl_render_stats(FILE *f, json_t *j)
{
	json_t *queues = json_object_get(j, "queues"), *q;
	int width[N_STATS_COLS];
	char num[32];
	size_t i, c;

	if (!json_is_array(queues))
		return -EINVAL;
	for (c = 0; c < N_STATS_COLS; c++)
		width[c] = (int)strlen(stats_cols[c]);
	json_array_foreach(queues, i, q) {
		for (c = 0; c < N_STATS_COLS; c++) {
			int n = snprintf(num, sizeof(num), "%lld",
					 (long long)int_of(q, stats_cols[c]));

			if (n > width[c])
				width[c] = n;
		}
	}
	for (c = 0; c < N_STATS_COLS; c++)
		fprintf(f, "%s%*s", c ? " " : "", width[c], stats_cols[c]);
	fputc('\n', f);
	json_array_foreach(queues, i, q) {
		for (c = 0; c < N_STATS_COLS; c++)
			fprintf(f, "%s%*lld", c ? " " : "", width[c],
				(long long)int_of(q, stats_cols[c]));
		fputc('\n', f);
	}
	return 0;
}

static void render_hook(FILE *f, json_t *hook)
{
	json_t *rules = json_object_get(hook, "rules"), *r;
	int wp = 7, wb = 5;
	char num[32];
	size_t i;

	fprintf(f, "hook %s: policy %s, %lld packets\n", str_of(hook, "hook"),
		str_of(hook, "policy"),
		(long long)int_of(hook, "policy_packets"));
	if (!json_array_size(rules))
		return;
	json_array_foreach(rules, i, r) {
		int n = snprintf(num, sizeof(num), "%lld",
				 (long long)int_of(r, "packets"));

		wp = n > wp ? n : wp;
		n = snprintf(num, sizeof(num), "%lld",
			     (long long)int_of(r, "bytes"));
		wb = n > wb ? n : wb;
	}
	fprintf(f, "  %5s %*s %*s  %s\n", "index", wp, "packets", wb, "bytes",
		"rule");
	json_array_foreach(rules, i, r)
		fprintf(f, "  %5lld %*lld %*lld  %s\n",
			(long long)int_of(r, "index"),
			wp, (long long)int_of(r, "packets"),
			wb, (long long)int_of(r, "bytes"), str_of(r, "rule"));
}

int ctl_render_rules(FILE *f, json_t *j)
{
	json_t *hooks = json_object_get(j, "hooks"), *h;
	size_t i;

	if (!json_is_array(hooks))
		return -EINVAL;
	fprintf(f, "generation %lld\n", (long long)int_of(j, "generation"));
	json_array_foreach(json_object_get(j, "sets"), i, h)
		fprintf(f, "set %s: %lld element%s\n", str_of(h, "set"),
			(long long)int_of(h, "elements"),
			int_of(h, "elements") == 1 ? "" : "s");
	json_array_foreach(hooks, i, h)
		render_hook(f, h);
	return 0;
}
