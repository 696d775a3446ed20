/*
 * ctl_render.c - nfqd-ctl's text output: the daemon always answers JSON;
 * this turns status, stats and rules into aligned tables, and stats into
 * Prometheus text exposition (format 0.0.4).
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
	"user_dropped", "id_sequence", "incomplete", "orphans",
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
	fprintf(f, "generation:  %lld\n", (long long)int_of(j, "generation"));
	fprintf(f, "queues:     ");
	json_array_foreach(queues, i, q)
		fprintf(f, " %lld", (long long)json_integer_value(q));
	fprintf(f, "%s\n", json_array_size(queues) ? "" : " none");
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
	json_array_foreach(hooks, i, h)
		render_hook(f, h);
	return 0;
}

/* One Prometheus metric family: name, type, help, stats JSON key. */
static const struct prom_metric {
	const char *name;
	const char *type;
	const char *help;
	const char *key;
} prom_metrics[] = {
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
	{ "nfqd_kernel_queue_length", "gauge",
	  "Packets waiting in the kernel queue (kernel queue_total).",
	  "queue_total" },
	{ "nfqd_kernel_queue_dropped", "gauge",
	  "Packets the kernel dropped because the queue was full "
	  "(kernel queue_dropped, 32-bit, wraps).", "queue_dropped" },
	{ "nfqd_kernel_user_dropped", "gauge",
	  "Packets the kernel dropped because the netlink socket buffer was "
	  "full (kernel queue_user_dropped, 32-bit, wraps).", "user_dropped" },
	{ "nfqd_kernel_id_sequence", "gauge",
	  "Last packet id the kernel assigned on the queue.", "id_sequence" },
	{ "nfqd_queue_cpu", "gauge",
	  "CPU the queue's worker is pinned to, or -1.", "cpu" },
};

int ctl_render_prometheus(FILE *f, json_t *j)
{
	json_t *queues = json_object_get(j, "queues"), *q;
	size_t i, m;

	if (!json_is_array(queues))
		return -EINVAL;
	for (m = 0; m < sizeof(prom_metrics) / sizeof(prom_metrics[0]); m++) {
		const struct prom_metric *p = &prom_metrics[m];

		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", p->name, p->help,
			p->name, p->type);
		json_array_foreach(queues, i, q)
			fprintf(f, "%s{queue=\"%lld\"} %lld\n", p->name,
				(long long)int_of(q, "queue"),
				(long long)int_of(q, p->key));
	}
	return 0;
}
