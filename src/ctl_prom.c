/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_prom.c - the stats and rules documents as Prometheus text
 * exposition (format 0.0.4) for "nfqd-ctl stats --prometheus": counters
 * end in _total, gauges do not, every family has HELP and TYPE lines.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ctl_client.h"

/* One per-queue family: name, type, help, key of the stats row. */
static const struct prom_metric {
	const char *name;
	const char *type;
	const char *help;
	const char *key;
} queue_metrics[] = {
	{ "nfqd_packets_total", "counter",
	  "Packets nfqd received on the queue.", "packets" },
	{ "nfqd_bytes_total", "counter",
	  "Original length of the packets nfqd received, in bytes.", "bytes" },
	{ "nfqd_accepted_total", "counter",
	  "Packets given NF_ACCEPT.", "accepted" },
	{ "nfqd_dropped_total", "counter",
	  "Packets given NF_DROP.", "dropped" },
	{ "nfqd_other_verdicts_total", "counter",
	  "Packets given another verdict (repeat, queue N).", "other" },
	{ "nfqd_verdict_batches_total", "counter",
	  "Verdict send calls.", "batches" },
	{ "nfqd_enobufs_total", "counter",
	  "ENOBUFS seen on the queue's netlink socket.", "enobufs" },
	{ "nfqd_errors_total", "counter",
	  "Other socket or parse errors.", "errors" },
	{ "nfqd_incomplete_total", "counter",
	  "Packets given incomplete-verdict: a rule needed headers that were "
	  "not in the copy or were malformed.", "incomplete" },
	{ "nfqd_orphans_total", "counter",
	  "Packets a previous nfqd process received and never answered, "
	  "given orphan-verdict when the queue was adopted.", "orphans" },
	{ "nfqd_kernel_queue_dropped_total", "counter",
	  "Packets the kernel dropped because the queue was full (kernel "
	  "queue_dropped; a 32-bit counter that wraps, and restarts when the "
	  "queue is unbound).", "queue_dropped" },
	{ "nfqd_kernel_user_dropped_total", "counter",
	  "Packets the kernel dropped because the netlink socket buffer was "
	  "full (kernel user_dropped; a 32-bit counter that wraps, and "
	  "restarts when the queue is unbound).", "user_dropped" },
	{ "nfqd_kernel_queue_length", "gauge",
	  "Packets waiting in the kernel queue (kernel queue_total).",
	  "queue_total" },
	{ "nfqd_kernel_id_sequence", "gauge",
	  "Last packet id the kernel assigned on the queue (32-bit).",
	  "id_sequence" },
	{ "nfqd_queue_cpu", "gauge",
	  "CPU the queue's worker is pinned to, or -1.", "cpu" },
	{ "nfqd_flows", "gauge",
	  "Flows in the queue's flow table for names.", "flows" },
	{ "nfqd_flows_pending", "gauge",
	  "Flows gathering their first bytes for a name.", "flows_pending" },
	{ "nfqd_flow_evictions_total", "counter",
	  "Live flows pushed out of the flow table by new ones.",
	  "flow_evictions" },
	{ "nfqd_names_total", "counter",
	  "Names found (DNS query, TLS or QUIC server name, HTTP host).",
	  "names" },
	{ "nfqd_names_incomplete_total", "counter",
	  "Names that could not be found (malformed, past the limit, cut by "
	  "copy-range, flow state lost): INCOMPLETE.", "names_incomplete" },
};
#define N_QUEUE_METRICS	(sizeof(queue_metrics) / sizeof(queue_metrics[0]))

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void up(FILE *f, int value)
{
	family(f, "nfqd_up", "gauge",
	       "1 if nfqd-ctl could read nfqd's counters, 0 if not.");
	fprintf(f, "nfqd_up %d\n", value);
}

void ctl_render_prometheus_down(FILE *f)
{
	up(f, 0);
}

static void queue_family(FILE *f, const struct prom_metric *m,
			 json_t *queues)
{
	bool first = true;
	json_t *q, *v;
	size_t i;

	json_array_foreach(queues, i, q) {
		/* An older daemon may lack a counter: no sample, not 0. */
		v = json_object_get(q, m->key);
		if (!json_is_integer(v))
			continue;
		if (first)
			family(f, m->name, m->type, m->help);
		first = false;
		fprintf(f, "%s{queue=\"%lld\"} %lld\n", m->name,
			(long long)json_integer_value(json_object_get(q,
								      "queue")),
			(long long)json_integer_value(v));
	}
}

/* S as a label value: escaped, cut (at a character) to the label limit. */
static void label_value(FILE *f, const char *s)
{
	size_t n = strlen(s), cut = n;

	if (n > CTL_PROM_RULE_LABEL) {
		cut = CTL_PROM_RULE_LABEL - 3;
		while (cut && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
	}
	for (size_t i = 0; i < cut; i++) {
		if (s[i] == '\\' || s[i] == '"')
			fputc('\\', f);
		if (s[i] == '\n')
			fputs("\\n", f);
		else
			fputc(s[i], f);
	}
	if (cut < n)
		fputs("...", f);
}

/* Samples of rule family NAME (KEY of each rule) for every hook. */
static void rule_samples(FILE *f, json_t *hooks, const char *name,
			 const char *key)
{
	json_t *h, *r;
	size_t i, k;

	json_array_foreach(hooks, i, h) {
		const char *hook = json_string_value(json_object_get(h,
								     "hook"));

		json_array_foreach(json_object_get(h, "rules"), k, r) {
			const char *text = json_string_value(
				json_object_get(r, "rule"));

			fprintf(f, "%s{hook=\"", name);
			label_value(f, hook ? hook : "");
			fprintf(f, "\",index=\"%lld\",rule=\"", (long long)
				json_integer_value(json_object_get(r,
								   "index")));
			label_value(f, text ? text : "");
			fprintf(f, "\"} %lld\n", (long long)
				json_integer_value(json_object_get(r, key)));
		}
	}
}

static void rule_families(FILE *f, json_t *rules)
{
	json_t *hooks = json_object_get(rules, "hooks"), *h;
	size_t i, n = 0;

	if (!json_is_array(hooks))
		return;
	family(f, "nfqd_policy_generation", "gauge",
	       "Policy generation: 1 at start, one more per successful "
	       "reload.");
	fprintf(f, "nfqd_policy_generation %lld\n",
		(long long)json_integer_value(json_object_get(rules,
							      "generation")));
	family(f, "nfqd_policy_packets_total", "counter",
	       "Packets no rule of the hook matched, given the hook's "
	       "policy.");
	json_array_foreach(hooks, i, h) {
		fprintf(f, "nfqd_policy_packets_total{hook=\"");
		label_value(f, json_string_value(json_object_get(h, "hook"))
			       ?: "");
		fprintf(f, "\"} %lld\n", (long long)json_integer_value(
			json_object_get(h, "policy_packets")));
		n += json_array_size(json_object_get(h, "rules"));
	}
	if (!n)
		return;
	family(f, "nfqd_rule_packets_total", "counter",
	       "Packets the rule decided (its matches held).");
	rule_samples(f, hooks, "nfqd_rule_packets_total", "packets");
	family(f, "nfqd_rule_bytes_total", "counter",
	       "Original length of the packets the rule decided, in bytes.");
	rule_samples(f, hooks, "nfqd_rule_bytes_total", "bytes");
}

int ctl_render_prometheus(FILE *f, json_t *stats, json_t *rules)
{
	json_t *queues = json_object_get(stats, "queues");

	if (!json_is_array(queues))
		return -EINVAL;
	up(f, 1);
	for (size_t m = 0; m < N_QUEUE_METRICS; m++)
		queue_family(f, &queue_metrics[m], queues);
	rule_families(f, rules);
	return 0;
}
