/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_rates.c - per-queue and per-rule rates from two of the daemon's
 * documents; the client measures the time between them, so the rates do
 * not depend on when the daemon's stats timer last ran.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_rates.h"

/* The counters of a stats row that grow; queue_total is a gauge and
 * id_sequence an id, so neither has a rate. */
static const char *const rate_keys[] = {
	"packets", "bytes", "accepted", "dropped", "other", "batches",
	"enobufs", "errors", "incomplete", "orphans", "queue_dropped",
	"user_dropped", "flow_evictions", "names", "names_incomplete",
};
#define N_RATE_KEYS	(sizeof(rate_keys) / sizeof(rate_keys[0]))

/* Rates are estimates: a thousandth is plenty, and JSON stays short. */
static json_t *rounded(double x)
{
	return json_real(round(x * 1000) / 1000);
}

double ctl_counter_delta(json_int_t prev, json_int_t cur)
{
	if (cur < 0)
		return 0;
	return (double)(cur >= prev ? cur - prev : cur);
}

static json_t *find_queue(json_t *queues, json_int_t num)
{
	json_t *q;
	size_t i;

	json_array_foreach(queues, i, q)
		if (json_integer_value(json_object_get(q, "queue")) == num)
			return q;
	return NULL;
}

/* Growth of counter KEY between P and C, or -1 if either lacks it. */
static double key_delta(json_t *p, json_t *c, const char *key)
{
	json_t *pv = json_object_get(p, key), *cv = json_object_get(c, key);

	if (!json_is_integer(pv) || !json_is_integer(cv))
		return -1;
	return ctl_counter_delta(json_integer_value(pv),
				 json_integer_value(cv));
}

static json_t *queue_rates(json_t *p, json_t *c, double dt)
{
	json_t *r = json_object();
	double dp, db;

	if (!r)
		return NULL;
	for (size_t k = 0; k < N_RATE_KEYS; k++) {
		double d = key_delta(p, c, rate_keys[k]);

		if (d >= 0 && json_object_set_new(r, rate_keys[k],
						  rounded(d / dt))) {
			json_decref(r);
			return NULL;
		}
	}
	dp = key_delta(p, c, "packets");
	db = key_delta(p, c, "batches");
	if (json_object_set_new(r, "packets_per_batch",
				dp >= 0 && db > 0 ? rounded(dp / db)
						  : json_null())) {
		json_decref(r);
		return NULL;
	}
	return r;
}

int ctl_rates_queues(json_t *prev, json_t *cur, double dt)
{
	json_t *pq = json_object_get(prev, "queues");
	json_t *cq = json_object_get(cur, "queues"), *c, *p;
	size_t i;

	if (!json_is_array(pq) || !json_is_array(cq) || !(dt > 0))
		return -EINVAL;
	json_array_foreach(cq, i, c) {
		json_t *num = json_object_get(c, "queue");

		if (!json_is_object(c))
			return -EINVAL;
		p = find_queue(pq, json_integer_value(num));
		if (p && json_object_set_new(c, "rates",
					     queue_rates(p, c, dt)))
			return -ENOMEM;
	}
	return 0;
}

/* The rule of hook HNAME with INDEX and TEXT in rules document DOC. */
static json_t *find_rule(json_t *doc, const char *hname, json_int_t index,
			 const char *text)
{
	json_t *h, *r;
	size_t i, k;

	json_array_foreach(json_object_get(doc, "hooks"), i, h) {
		const char *n = json_string_value(json_object_get(h, "hook"));

		if (!n || strcmp(n, hname))
			continue;
		json_array_foreach(json_object_get(h, "rules"), k, r) {
			const char *t = json_string_value(json_object_get(r,
								"rule"));

			if (json_integer_value(json_object_get(r, "index")) ==
			    index && t && !strcmp(t, text))
				return r;
		}
	}
	return NULL;
}

static json_t *hook_of(json_t *doc, const char *hname)
{
	json_t *h;
	size_t i;

	json_array_foreach(json_object_get(doc, "hooks"), i, h) {
		const char *n = json_string_value(json_object_get(h, "hook"));

		if (n && !strcmp(n, hname))
			return h;
	}
	return NULL;
}

static int add_row(json_t *out, const char *hook, json_int_t index,
		   const char *text, json_int_t packets, double delta,
		   double dt)
{
	json_t *row = json_pack("{s:s, s:o, s:s, s:I, s:o}",
				"hook", hook,
				"index", index ? json_integer(index)
					       : json_null(),
				"rule", text,
				"packets", packets,
				"rate", delta >= 0 ? rounded(delta / dt)
						   : json_null());

	return row ? json_array_append_new(out, row) : -ENOMEM;
}

/* The rows of hook H (rules, then its policy) appended to OUT. */
static int hook_rows(json_t *out, json_t *prev, json_t *h, double dt)
{
	const char *hname = json_string_value(json_object_get(h, "hook"));
	json_t *rules = json_object_get(h, "rules"), *r, *p;
	json_int_t n;
	char text[64];
	size_t i;

	if (!hname)
		return -EINVAL;
	json_array_foreach(rules, i, r) {
		const char *t = json_string_value(json_object_get(r, "rule"));
		json_int_t idx = json_integer_value(json_object_get(r,
								    "index"));

		if (!t || idx <= 0)
			return -EINVAL;
		p = find_rule(prev, hname, idx, t);
		n = json_integer_value(json_object_get(r, "packets"));
		if (add_row(out, hname, idx, t, n,
			    p ? key_delta(p, r, "packets") : -1, dt))
			return -ENOMEM;
	}
	n = json_integer_value(json_object_get(h, "policy_packets"));
	if (!json_array_size(rules) && !n)
		return 0;
	snprintf(text, sizeof(text), "policy %s",
		 json_string_value(json_object_get(h, "policy")) ?: "?");
	p = hook_of(prev, hname);
	return add_row(out, hname, 0, text, n,
		       p ? key_delta(p, h, "policy_packets") : -1, dt);
}

static double rate_of(json_t *row)
{
	json_t *r = json_object_get(row, "rate");

	return json_is_number(r) ? json_number_value(r) : -1;
}

/* Busiest first; the daemon's hook and rule order breaks ties, which
 * qsort's instability would lose, so the position is the last key. */
struct rule_ref {
	json_t *row;
	size_t pos;
};

static int rule_cmp(const void *a, const void *b)
{
	const struct rule_ref *x = a, *y = b;
	double rx = rate_of(x->row), ry = rate_of(y->row);
	json_int_t px = json_integer_value(json_object_get(x->row, "packets"));
	json_int_t py = json_integer_value(json_object_get(y->row, "packets"));

	if (rx != ry)
		return rx < ry ? 1 : -1;
	if (px != py)
		return px < py ? 1 : -1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static json_t *sorted(json_t *rows)
{
	size_t n = json_array_size(rows), i;
	struct rule_ref *ref = calloc(n ? n : 1, sizeof(*ref));
	json_t *out = json_array();

	for (i = 0; ref && out && i < n; i++)
		ref[i] = (struct rule_ref){ json_array_get(rows, i), i };
	if (ref && out) {
		qsort(ref, n, sizeof(*ref), rule_cmp);
		for (i = 0; out && i < n; i++) {
			if (json_array_append(out, ref[i].row)) {
				json_decref(out);
				out = NULL;
			}
		}
	} else {
		json_decref(out);
		out = NULL;
	}
	free(ref);
	json_decref(rows);
	return out;
}

json_t *ctl_rates_rules(json_t *prev, json_t *cur, double dt)
{
	json_t *hooks = json_object_get(cur, "hooks"), *h;
	json_t *rows = json_array();
	size_t i;

	if (!json_is_array(hooks) || !rows || (prev && !(dt > 0))) {
		json_decref(rows);
		return NULL;
	}
	json_array_foreach(hooks, i, h) {
		if (hook_rows(rows, prev, h, dt)) {
			json_decref(rows);
			return NULL;
		}
	}
	return sorted(rows);
}
