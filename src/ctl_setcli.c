/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ctl_setcli.c - nfqd-ctl's "sets" table and "set ..." commands. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_client.h"
#include "ctl_setcli.h"
#include "proto.h"

/* Room for the words of a request besides its data lines. */
#define WORDS_ROOM	(2 + 5 * (PROTO_MAX_ARG_LEN + 1))
#define CHUNK_MAX	(PROTO_MAX_REQUEST - WORDS_ROOM)

static long long num(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static void human(char *buf, size_t size, long long v)
{
	if (v >= 10ll << 20)
		snprintf(buf, size, "%lldM", v >> 20);
	else if (v >= 10ll << 10)
		snprintf(buf, size, "%lldK", v >> 10);
	else
		snprintf(buf, size, "%lld", v);
}

int ctl_render_sets(FILE *f, json_t *j)
{
	json_t *sets = json_object_get(j, "sets"), *s;
	size_t i;

	if (!json_is_array(sets))
		return -EINVAL;
	fprintf(f, "%-16s %-12s %9s %9s %9s %7s %9s %9s %9s %6s  %s\n", "set",
		"type", "elements", "runtime", "size", "memory", "adds",
		"deletes", "expiries", "full", "source");
	json_array_foreach(sets, i, s) {
		const char *file = json_string_value(json_object_get(s,
								    "file"));
		char mem[32];

		human(mem, sizeof(mem), num(s, "memory"));
		fprintf(f, "%-16s %-12s %9lld %9lld %9lld %7s %9lld %9lld "
			"%9lld %6lld  %s\n",
			json_string_value(json_object_get(s, "name")),
			json_string_value(json_object_get(s, "type")),
			num(s, "elements"), num(s, "runtime_elements"),
			num(s, "size"), mem, num(s, "adds"), num(s, "deletes"),
			num(s, "expiries"), num(s, "table_full"),
			file ? file : "config");
	}
	return 0;
}

static const struct {
	const char *name, *type, *help, *key;
} set_metrics[] = {
	{ "nfqd_set_elements", "gauge",
	  "Elements of the set: config, file and runtime.", "elements" },
	{ "nfqd_set_runtime_elements", "gauge",
	  "Runtime elements of the set (nfqd-ctl set add, add @set rules).",
	  "runtime_elements" },
	{ "nfqd_set_size", "gauge",
	  "Most runtime elements the set holds (its size).", "size" },
	{ "nfqd_set_memory_bytes", "gauge",
	  "Approximate memory of the set.", "memory" },
	{ "nfqd_set_adds_total", "counter",
	  "Runtime elements added.", "adds" },
	{ "nfqd_set_deletes_total", "counter",
	  "Runtime elements deleted (set delete, set flush).", "deletes" },
	{ "nfqd_set_expiries_total", "counter",
	  "Runtime elements that expired.", "expiries" },
	{ "nfqd_set_table_full_total", "counter",
	  "Adds refused because the set was full.", "table_full" },
}, limit_metrics[] = {
	{ "nfqd_limit_keys", "gauge",
	  "Keys a per-key limit tracks now.", "keys" },
	{ "nfqd_limit_table_full_total", "counter",
	  "New keys of a per-key limit treated as over the limit because "
	  "its table was full.", "table_full" },
};

void ctl_render_prometheus_sets(FILE *f, json_t *j)
{
	json_t *sets = json_object_get(j, "sets");
	json_t *limits = json_object_get(j, "limits"), *s;
	size_t i;

	for (size_t m = 0; m < sizeof(set_metrics) / sizeof(set_metrics[0]);
	     m++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", set_metrics[m].name,
			set_metrics[m].help, set_metrics[m].name,
			set_metrics[m].type);
		json_array_foreach(sets, i, s)
			fprintf(f, "%s{set=\"%s\"} %lld\n", set_metrics[m].name,
				json_string_value(json_object_get(s, "name")),
				num(s, set_metrics[m].key));
	}
	for (size_t m = 0; m < 2; m++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n",
			limit_metrics[m].name, limit_metrics[m].help,
			limit_metrics[m].name, limit_metrics[m].type);
		json_array_foreach(limits, i, s)
			fprintf(f, "%s{hook=\"%s\",index=\"%lld\"} %lld\n",
				limit_metrics[m].name,
				json_string_value(json_object_get(s, "hook")),
				num(s, "index"), num(s, limit_metrics[m].key));
	}
}

/* ---- set list ---- */

static void render_list(FILE *f, json_t *j)
{
	json_t *elems = json_object_get(j, "elements"), *e;
	size_t i;

	json_array_foreach(elems, i, e) {
		json_t *exp = json_object_get(e, "expires");

		fprintf(f, "%-40s %-8s", json_string_value(json_object_get(e,
				"element")),
			json_string_value(json_object_get(e, "origin")));
		if (json_is_number(exp))
			fprintf(f, " expires %.1fs", json_number_value(exp));
		fputc('\n', f);
	}
}

/* ---- requests ---- */

struct setreq {
	const char *socket;
	bool json;
	const char *words[5];	/* set SUB NAME [timeout D] */
	unsigned n_words;
	char *buf;		/* data lines of the next request */
	size_t len;
	size_t line;		/* input line number (stdin) */
	unsigned arg;		/* element number (command line) */
	size_t sent_elems;	/* elements of answered requests */
	long long a, b;		/* added/deleted, existing/absent */
	unsigned requests;
	json_t *last;		/* the last answer */
};

static int call(struct setreq *q, json_t **j, uint16_t *status)
{
	struct proto_request req = { .flags = q->json ? PROTO_REQ_JSON : 0 };

	req.argc = q->n_words;
	memcpy(req.argv, q->words, q->n_words * sizeof(req.argv[0]));
	if (q->len) {
		req.flags |= PROTO_REQ_DATA;
		req.data = q->buf;
		req.data_len = q->len;
	}
	return ctl_client_ask(q->socket, &req, j, status);
}

/* Error answer J ({"error": ...}): as JSON on standard output with -j,
 * else its line on standard error; and what the requests before it did.
 * Takes J. */
static void print_error(const struct setreq *q, json_t *j)
{
	if (q->json) {
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		fprintf(stderr, "nfqd-ctl: %s\n",
			json_string_value(json_object_get(j, "error")));
	}
	if (q->sent_elems)
		fprintf(stderr, "nfqd-ctl: the %zu elements before this "
			"request were applied\n", q->sent_elems);
	json_decref(j);
}

/* Send the lines gathered so far; count what they did. */
static int flush_chunk(struct setreq *q, size_t n_elems)
{
	bool add = !strcmp(q->words[1], "add");
	uint16_t status = 0;
	json_t *j;
	int ret = call(q, &j, &status);

	if (ret && !j)
		return ret;
	if (ret) {
		print_error(q, j);
		return ret;
	}
	q->a += num(j, add ? "added" : "deleted");
	q->b += num(j, add ? "existing" : "absent");
	q->sent_elems += n_elems;
	q->requests++;
	json_decref(q->last);
	q->last = j;
	q->len = 0;
	return 0;
}

/* An element refused before it is sent, as the daemon refuses a bad
 * one: one line naming it (JSON with -j), exit 1, nothing applied. */
static int refuse(const struct setreq *q, const char *why)
{
	char msg[256];
	json_t *j;

	if (q->line)
		snprintf(msg, sizeof(msg), "set %s: line %zu: %s", q->words[2],
			 q->line, why);
	else
		snprintf(msg, sizeof(msg), "set %s: element %u: %s",
			 q->words[2], q->arg, why);
	j = json_pack("{s:s}", "error", msg);
	if (j)
		print_error(q, j);
	else		/* a set name that is not UTF-8 */
		fprintf(stderr, "nfqd-ctl: %s\n", msg);
	return 1;
}

/* Append one element as a data line, sending first when full. */
static int push(struct setreq *q, const char *e, size_t n, size_t *pending)
{
	for (size_t i = 0; i < n; i++)
		if (e[i] < 0x20 || e[i] > 0x7e)
			return refuse(q, "not printable ASCII (write a domain "
				      "name as its A-label, xn--...)");
	if (n > PROTO_MAX_ARG_LEN) {
		char why[64];

		snprintf(why, sizeof(why), "longer than %u bytes",
			 PROTO_MAX_ARG_LEN);
		return refuse(q, why);
	}
	if (q->len + n + 1 > CHUNK_MAX) {
		int ret = flush_chunk(q, *pending);

		if (ret)
			return ret;
		*pending = 0;
	}
	memcpy(q->buf + q->len, e, n);
	q->buf[q->len + n] = '\n';
	q->len += n + 1;
	++*pending;
	return 0;
}

static int push_stdin(struct setreq *q, size_t *pending)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;

	while (!ret && (n = getline(&line, &cap, stdin)) >= 0) {
		q->line++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		for (ssize_t i = 0; i < n; i++)
			if (line[i] == '\t')
				line[i] = ' ';
		if (n)
			ret = push(q, line, (size_t)n, pending);
	}
	free(line);
	return ret;
}

static void print_result(const struct setreq *q)
{
	const char *sub = q->words[1], *name = q->words[2];

	if (q->json) {
		json_t *o = json_deep_copy(q->last);

		if (!strcmp(sub, "add") || !strcmp(sub, "delete")) {
			bool add = !strcmp(sub, "add");

			json_object_set_new(o, add ? "added" : "deleted",
					    json_integer(q->a));
			json_object_set_new(o, add ? "existing" : "absent",
					    json_integer(q->b));
			json_object_set_new(o, "requests",
					    json_integer(q->requests));
		}
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else if (!strcmp(sub, "add")) {
		printf("set %s: %lld added, %lld already present\n", name,
		       q->a, q->b);
	} else if (!strcmp(sub, "delete")) {
		printf("set %s: %lld deleted, %lld not present\n", name, q->a,
		       q->b);
	} else if (!strcmp(sub, "flush")) {
		printf("set %s: %lld deleted\n", name,
		       num(q->last, "deleted"));
	} else {
		render_list(stdout, q->last);
	}
}

static int usage_set(void)
{
	fprintf(stderr, "nfqd-ctl: usage: nfqd-ctl set add NAME ELEMENT... "
		"[timeout DURATION]\n"
		"nfqd-ctl: usage: nfqd-ctl set delete NAME ELEMENT...\n"
		"nfqd-ctl: usage: nfqd-ctl set flush|list NAME\n"
		"nfqd-ctl: (ELEMENT - reads one element a line from "
		"standard input)\n");
	return CTL_EXIT_USAGE;
}

/* The words and elements of "set add|delete NAME ..." into Q. */
static int send_elems(struct setreq *q, const char *const *w, unsigned n)
{
	bool add = !strcmp(w[1], "add");
	unsigned end = n;
	size_t pending = 0;
	int ret = 0;

	if (add && n >= 5 && !strcmp(w[n - 2], "timeout")) {
		q->words[q->n_words++] = w[n - 2];
		q->words[q->n_words++] = w[n - 1];
		end -= 2;
	}
	if (end == 3)
		return usage_set();
	for (unsigned i = 3; !ret && i < end; i++) {
		q->arg = i - 2;
		q->line = 0;
		if (!strcmp(w[i], "-"))
			ret = push_stdin(q, &pending);
		else
			ret = push(q, w[i], strlen(w[i]), &pending);
	}
	if (!ret && (q->len || !q->requests))
		ret = flush_chunk(q, pending);
	return ret;
}

int ctl_set_run(const char *socket, bool json, const char *const *words,
		unsigned n)
{
	struct setreq q = { .socket = socket, .json = json };
	const char *sub = n >= 2 ? words[1] : "";
	bool change = !strcmp(sub, "add") || !strcmp(sub, "delete");
	int ret;

	if (n < 3 || (!change && (n != 3 || (strcmp(sub, "flush") &&
					      strcmp(sub, "list")))))
		return usage_set();
	for (unsigned i = 0; i < 3; i++)
		q.words[q.n_words++] = words[i];
	q.buf = malloc(CHUNK_MAX);
	if (!q.buf)
		return CTL_EXIT_DAEMON;
	ret = change ? send_elems(&q, words, n) : flush_chunk(&q, 0);
	if (!ret)
		print_result(&q);
	json_decref(q.last);
	free(q.buf);
	return ret;
}
