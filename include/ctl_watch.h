/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_watch.h - nfqd-ctl's repeating commands: polling the daemon every
 * interval and keeping two samples for rates, "stats -w" and the batch
 * mode of "top" (ctl_watch.c); "top" on a terminal (ctl_top.c, in the
 * nfqd-ctl program only, so the library does not need curses).
 */
#ifndef NFQD_CTL_WATCH_H
#define NFQD_CTL_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Documents a poller asks for. */
#define CTL_DOC_STATUS	0x1
#define CTL_DOC_STATS	0x2
#define CTL_DOC_RULES	0x4

/* The daemon's documents at one moment. */
struct ctl_sample {
	json_t *status;
	json_t *stats;
	json_t *rules;
	double t;		/* CLOCK_MONOTONIC seconds, client side */
};

/* Two samples and the rates between them. */
struct ctl_poller {
	const char *socket;
	unsigned what;		/* CTL_DOC_* */
	int timeout_ms;		/* for each request */
	struct ctl_sample prev, cur;
	bool rates;		/* cur's queues carry "rates" since prev */
	double dt;		/* seconds from prev to cur, when rates */
	json_t *rules;		/* ctl_rates_rules() of cur, when asked */
	int exit_status;	/* of the last poll: CTL_EXIT_* */
	char err[512];		/* why the last poll failed */
};

/* Seconds on CLOCK_MONOTONIC. */
double ctl_now(void);

/*
 * Poll the daemon: the documents P->what into P->cur, the previous ones
 * kept for rates. Rates are computed when the previous poll succeeded and
 * the daemon's pid did not change (when status is asked); after a failed
 * poll they start again from the next sample. 0, or a negative errno with
 * P->err and P->exit_status set.
 */
int ctl_poll(struct ctl_poller *p);

/* Free the samples of P. */
void ctl_poller_clear(struct ctl_poller *p);

struct ctl_watch_opts {
	const char *socket;
	double interval;	/* seconds */
	unsigned long count;	/* intervals to show; 0: until interrupted */
	bool json;
};

/*
 * "stats -w": every interval, the queues' rates table (text), or one
 * JSON document per line with counters, "rates" and "interval". The
 * daemon must answer at once; later failures are reported on stderr and
 * retried every interval. Returns the exit status of the last poll.
 */
int ctl_watch_stats(const struct ctl_watch_opts *o);

/* "top -b": the same frames as top, as plain text, one per interval. */
int ctl_top_batch(const struct ctl_watch_opts *o);

/* "top" on the terminal of stdin/stdout (ctl_top.c). Exit status. */
int ctl_top_run(const struct ctl_watch_opts *o);

/* Request timeout for polls every INTERVAL seconds. */
int ctl_watch_timeout_ms(double interval);

#endif
