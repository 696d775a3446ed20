/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_watch.c - polling the daemon every interval for nfqd-ctl's live
 * views: two samples and the rates between them, "stats -w" (text table
 * or JSON lines) and "top -b". Deadlines are absolute on CLOCK_MONOTONIC,
 * so a slow answer does not make the views drift.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_client.h"
#include "ctl_rates.h"
#include "ctl_view.h"
#include "ctl_watch.h"
#include "proto.h"

double ctl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int ctl_watch_timeout_ms(double interval)
{
	double ms = interval * 1000;

	return ms < 1000 ? 1000 : ms > 5000 ? 5000 : (int)ms;
}

static void sample_clear(struct ctl_sample *s)
{
	json_decref(s->status);
	json_decref(s->stats);
	json_decref(s->rules);
	memset(s, 0, sizeof(*s));
}

void ctl_poller_clear(struct ctl_poller *p)
{
	sample_clear(&p->prev);
	sample_clear(&p->cur);
	json_decref(p->rules);
	p->rules = NULL;
	p->rates = false;
}

/* Ask for one document (command WORD). 0, or -errno with p->err set. */
static int ask(struct ctl_poller *p, const char *word, json_t **out)
{
	struct proto_request req = { .argc = 1, .argv = { word } };
	struct ctl_reply reply;
	char err[sizeof(p->err) - 64];
	json_error_t jerr;
	json_t *j;
	int ret;

	ret = ctl_client_call(p->socket, &req, p->timeout_ms, &reply, err,
			      sizeof(err));
	if (ret < 0) {
		snprintf(p->err, sizeof(p->err), "cannot reach nfqd (%s)",
			 err);
		p->exit_status = CTL_EXIT_UNREACH;
		return ret;
	}
	j = json_loadb(reply.payload, reply.len, 0, &jerr);
	free(reply.payload);
	if (!j || reply.status != PROTO_ST_OK) {
		const char *msg = json_string_value(json_object_get(j,
								    "error"));

		snprintf(p->err, sizeof(p->err), "nfqd answered %s: %s", word,
			 msg ? msg : j ? proto_status_str(reply.status)
				       : "malformed JSON");
		p->exit_status = j ? CTL_EXIT_DAEMON : CTL_EXIT_UNREACH;
		json_decref(j);
		return j ? -EPROTO : -EBADMSG;
	}
	*out = j;
	return 0;
}

static int take(struct ctl_poller *p, struct ctl_sample *s)
{
	int ret = 0;

	if (p->what & CTL_DOC_STATUS)
		ret = ask(p, "status", &s->status);
	if (!ret && (p->what & CTL_DOC_STATS))
		ret = ask(p, "stats", &s->stats);
	if (!ret && (p->what & CTL_DOC_RULES))
		ret = ask(p, "rules", &s->rules);
	s->t = ctl_now();
	return ret;
}

/* The same daemon process in both samples (when status was asked). */
static bool same_daemon(const struct ctl_sample *a, const struct ctl_sample *b)
{
	if (!a->status || !b->status)
		return true;
	return json_integer_value(json_object_get(a->status, "pid")) ==
	       json_integer_value(json_object_get(b->status, "pid"));
}

int ctl_poll(struct ctl_poller *p)
{
	bool had = p->cur.stats || p->cur.rules || p->cur.status;
	struct ctl_sample s = { 0 };
	int ret;

	ret = take(p, &s);
	if (ret < 0) {
		sample_clear(&s);
		ctl_poller_clear(p);
		return ret;
	}
	sample_clear(&p->prev);
	p->prev = p->cur;
	p->cur = s;
	p->exit_status = CTL_EXIT_OK;
	p->rates = had && same_daemon(&p->prev, &p->cur) &&
		   p->cur.t > p->prev.t;
	p->dt = p->rates ? p->cur.t - p->prev.t : 0;
	if (p->rates && p->cur.stats &&
	    ctl_rates_queues(p->prev.stats, p->cur.stats, p->dt) < 0)
		p->rates = false;
	json_decref(p->rules);
	p->rules = NULL;
	if (p->cur.rules)
		p->rules = ctl_rates_rules(p->rates ? p->prev.rules : NULL,
					   p->cur.rules, p->dt);
	return 0;
}

/* Sleep until *next (CLOCK_MONOTONIC seconds), then set the deadline
 * after it; one that has passed already is moved past now. */
static void wait_tick(double *next, double interval)
{
	struct timespec ts = {
		.tv_sec = (time_t)*next,
		.tv_nsec = (long)((*next - floor(*next)) * 1e9),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	*next += interval;
	if (*next < ctl_now())
		*next = ctl_now() + interval;
}

static void local_clock(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm) || !strftime(buf, size, "%H:%M:%S", &tm))
		snprintf(buf, size, "--:--:--");
}

static int print_json_line(const struct ctl_poller *p)
{
	struct timespec wall;
	double ms;
	json_t *o;
	int ret;

	clock_gettime(CLOCK_REALTIME, &wall);
	ms = (double)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
	o = json_pack("{s:f, s:f, s:O}",
		      "time", ms / 1000,
		      "interval", round(p->dt * 1e6) / 1e6,
		      "queues", json_object_get(p->cur.stats, "queues"));
	if (!o)
		return -ENOMEM;
	ret = json_dumpf(o, stdout, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(o);
	fputc('\n', stdout);
	return ret;
}

static int show_stats(const struct ctl_watch_opts *o, struct ctl_poller *p)
{
	char prefix[16];

	if (p->exit_status != CTL_EXIT_OK) {
		fprintf(stderr, "nfqd-ctl: %s\n", p->err);
		return 0;
	}
	if (!p->rates)
		return 0;
	if (o->json)
		return print_json_line(p);
	local_clock(prefix, sizeof(prefix) - 2);
	strcat(prefix, "  ");
	return ctl_view_rates(stdout, p->cur.stats, prefix);
}

/* The loop shared by "stats -w" and "top -b": SHOW after every poll. */
static int watch(const struct ctl_watch_opts *o, unsigned what,
		 int (*show)(const struct ctl_watch_opts *o,
			     struct ctl_poller *p))
{
	struct ctl_poller p = {
		.socket = o->socket, .what = what,
		.timeout_ms = ctl_watch_timeout_ms(o->interval),
	};
	double next;
	int ret;

	if (ctl_poll(&p) < 0) {
		fprintf(stderr, "nfqd-ctl: %s\n", p.err);
		return p.exit_status;
	}
	next = p.cur.t + o->interval;
	for (unsigned long n = 0; !o->count || n < o->count; n++) {
		wait_tick(&next, o->interval);
		ctl_poll(&p);
		ret = show(o, &p);
		if (fflush(stdout) == EOF || ret < 0) {
			perror("nfqd-ctl: stdout");
			ctl_poller_clear(&p);
			return CTL_EXIT_DAEMON;
		}
	}
	ret = p.exit_status;
	ctl_poller_clear(&p);
	return ret;
}

int ctl_watch_stats(const struct ctl_watch_opts *o)
{
	return watch(o, CTL_DOC_STATS, show_stats);
}

static int show_top(const struct ctl_watch_opts *o, struct ctl_poller *p)
{
	struct ctl_top_frame fr = {
		.socket = o->socket, .interval = o->interval,
		.status = p->cur.status, .stats = p->cur.stats,
		.rules = p->rules,
	};
	char clock[16];

	local_clock(clock, sizeof(clock));
	fr.clock = clock;
	if (p->exit_status != CTL_EXIT_OK)
		fr.error = p->err;
	ctl_view_top(stdout, &fr);
	fputc('\n', stdout);
	return 0;
}

int ctl_top_batch(const struct ctl_watch_opts *o)
{
	return watch(o, CTL_DOC_STATUS | CTL_DOC_STATS | CTL_DOC_RULES,
		     show_top);
}
