/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_view.c - the text of nfqd-ctl's live views: the per-queue rates
 * table ("stats -w", "top") and the rest of a "top" frame (header, the
 * busiest rules). Plain text only, so batch mode, watch mode and the
 * terminal front end show the same thing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctl_view.h"

enum col_kind {
	COL_RATE,	/* "rates" member: per second */
	COL_RATIO,	/* "rates" member: a ratio */
	COL_GAUGE,	/* counter of the queue itself: a level */
};

/* The rate columns, most useful first: a narrow terminal cuts the end. */
static const struct rate_col {
	const char *head;
	const char *key;
	enum col_kind kind;
} cols[] = {
	{ "PKT/S", "packets", COL_RATE },
	{ "BYTES/S", "bytes", COL_RATE },
	{ "ACCEPT/S", "accepted", COL_RATE },
	{ "DROP/S", "dropped", COL_RATE },
	{ "DEPTH", "queue_total", COL_GAUGE },
	{ "QDROP/S", "queue_dropped", COL_RATE },
	{ "UDROP/S", "user_dropped", COL_RATE },
	{ "PKT/BATCH", "packets_per_batch", COL_RATIO },
	{ "ENOBUFS/S", "enobufs", COL_RATE },
	{ "INCOMPL/S", "incomplete", COL_RATE },
};
#define N_COLS		(sizeof(cols) / sizeof(cols[0]))
#define COL_MIN_WIDTH	7

static int col_width(const struct rate_col *c)
{
	int n = (int)strlen(c->head);

	return n > COL_MIN_WIDTH ? n : COL_MIN_WIDTH;
}

const char *ctl_view_num(double x, char *buf, size_t size)
{
	static const char suffix[] = "kMGTP";
	size_t s = 0;

	if (x < 0)
		snprintf(buf, size, "-");
	else if (x == 0)
		snprintf(buf, size, "0");
	else if (x < 9.95 && x != floor(x))
		snprintf(buf, size, "%.1f", x);
	else if (x < 99999.5)
		snprintf(buf, size, "%.0f", x);
	else {
		x /= 1000;
		while (x >= 999.95 && s + 1 < sizeof(suffix) - 1) {
			x /= 1000;
			s++;
		}
		snprintf(buf, size, "%.1f%c", x, suffix[s]);
	}
	return buf;
}

/* Column C of queue Q, or -1 when unknown (no rates yet, old daemon). */
static double col_value(json_t *q, const struct rate_col *c)
{
	json_t *v;

	if (c->kind == COL_GAUGE)
		v = json_object_get(q, c->key);
	else
		v = json_object_get(json_object_get(q, "rates"), c->key);
	return json_is_number(v) ? json_number_value(v) : -1;
}

static void heading(FILE *f, const char *prefix)
{
	fprintf(f, "%sQUEUE CPU", prefix);
	for (size_t c = 0; c < N_COLS; c++)
		fprintf(f, " %*s", col_width(&cols[c]), cols[c].head);
	fputc('\n', f);
}

static void row(FILE *f, const char *prefix, const char *queue,
		const char *cpu, const double *v)
{
	char num[32];

	fprintf(f, "%s%5s %3s", prefix, queue, cpu);
	for (size_t c = 0; c < N_COLS; c++)
		fprintf(f, " %*s", col_width(&cols[c]),
			ctl_view_num(v[c], num, sizeof(num)));
	fputc('\n', f);
}

/* The "all" line: sums, and the batch ratio of the sums. */
static void total_row(FILE *f, const char *prefix, json_t *queues)
{
	double v[N_COLS] = { 0 }, pkts = 0, batches = 0;
	json_t *q, *r;
	size_t i, c;

	json_array_foreach(queues, i, q) {
		for (c = 0; c < N_COLS; c++) {
			double x = col_value(q, &cols[c]);

			if (cols[c].kind != COL_RATIO)
				v[c] = x < 0 || v[c] < 0 ? -1 : v[c] + x;
		}
		r = json_object_get(q, "rates");
		pkts += json_number_value(json_object_get(r, "packets"));
		batches += json_number_value(json_object_get(r, "batches"));
	}
	for (c = 0; c < N_COLS; c++)
		if (cols[c].kind == COL_RATIO)
			v[c] = batches > 0 ? pkts / batches : -1;
	row(f, prefix, "all", "-", v);
}

int ctl_view_rates(FILE *f, json_t *stats, const char *prefix)
{
	json_t *queues = json_object_get(stats, "queues"), *q;
	double v[N_COLS];
	char num[16], cpu[16];
	size_t i;

	if (!json_is_array(queues))
		return -EINVAL;
	heading(f, prefix);
	json_array_foreach(queues, i, q) {
		for (size_t c = 0; c < N_COLS; c++)
			v[c] = col_value(q, &cols[c]);
		snprintf(num, sizeof(num), "%lld", (long long)
			 json_integer_value(json_object_get(q, "queue")));
		snprintf(cpu, sizeof(cpu), "%lld", (long long)
			 json_integer_value(json_object_get(q, "cpu")));
		row(f, prefix, num, cpu, v);
	}
	if (json_array_size(queues) > 1)
		total_row(f, prefix, queues);
	return 0;
}

static const char *str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "?";
}

static long long int_of(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static void uptime(FILE *f, long long s)
{
	if (s >= 86400)
		fprintf(f, "%lldd ", s / 86400);
	if (s >= 3600)
		fprintf(f, "%lldh ", s / 3600 % 24);
	if (s >= 60)
		fprintf(f, "%lldm ", s / 60 % 60);
	fprintf(f, "%llds", s % 60);
}

/* Two header lines. */
static void header(FILE *f, const struct ctl_top_frame *fr)
{
	json_t *st = fr->status;

	fprintf(f, "%s  nfqd %s  pid %lld  up ", fr->clock,
		str_of(st, "version"), int_of(st, "pid"));
	uptime(f, int_of(st, "uptime"));
	fprintf(f, "  generation %lld  queues %zu\n", int_of(st, "generation"),
		json_array_size(json_object_get(st, "queues")));
	fprintf(f, "config %s%s  socket %s  every %gs  q: quit\n",
		str_of(st, "config"),
		json_is_true(json_object_get(st, "builtin_config")) ?
		" (absent: built-in)" : "", fr->socket, fr->interval);
}

#define RULE_HEADING	"HOOK         INDEX  HITS/S      PACKETS  RULE\n"

static void rule_row(FILE *f, json_t *r)
{
	json_t *index = json_object_get(r, "index");
	json_t *rate = json_object_get(r, "rate");
	char idx[24], num[16];

	if (json_is_integer(index))
		snprintf(idx, sizeof(idx), "%lld",
			 (long long)json_integer_value(index));
	else
		snprintf(idx, sizeof(idx), "-");
	fprintf(f, "%-11s %6s %7s %12lld  %s\n", str_of(r, "hook"), idx,
		ctl_view_num(json_is_number(rate) ? json_number_value(rate)
						  : -1, num, sizeof(num)),
		int_of(r, "packets"), str_of(r, "rule"));
}

int ctl_view_top(FILE *f, struct ctl_top_frame *fr)
{
	size_t nq, nr, i;
	int lines;

	fr->heading[0] = fr->heading[1] = -1;
	if (fr->error) {
		fprintf(f, "%s  nfqd-ctl top: %s\n"
			"retrying every %gs  q: quit\n", fr->clock, fr->error,
			fr->interval);
		return 2;
	}
	header(f, fr);
	fputc('\n', f);
	fr->heading[0] = 3;
	ctl_view_rates(f, fr->stats, "");
	nq = json_array_size(json_object_get(fr->stats, "queues"));
	lines = 4 + (int)nq + (nq > 1);
	nr = json_array_size(fr->rules);
	if (fr->height > 0)
		nr = fr->height - lines - 2 > 0 ?
		     (size_t)(fr->height - lines - 2) : 0;
	nr = nr < json_array_size(fr->rules) ? nr : json_array_size(fr->rules);
	if (!nr)
		return lines;
	fprintf(f, "\n" RULE_HEADING);
	fr->heading[1] = lines + 1;
	for (i = 0; i < nr; i++)
		rule_row(f, json_array_get(fr->rules, i));
	return lines + 2 + (int)nr;
}
