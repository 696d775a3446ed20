/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_view.h - nfqd-ctl's live text views (ctl_view.c): the per-queue
 * rates table of "stats -w" and the frame of "top", drawn from the
 * daemon's documents with the rates of ctl_rates.h.
 */
#ifndef NFQD_CTL_VIEW_H
#define NFQD_CTL_VIEW_H

#include <stdio.h>

#include <jansson.h>

/*
 * The rates table of stats document STATS (queues carry "rates" from
 * ctl_rates_queues(); a queue without shows "-"): a heading line, then
 * one line per queue, then an "all" line when there are several queues;
 * every line starts with PREFIX (e.g. a time stamp). 0, or -EINVAL if
 * STATS does not have the stats shape.
 */
int ctl_view_rates(FILE *f, json_t *stats, const char *prefix);

/* What one frame of "top" shows. */
struct ctl_top_frame {
	const char *socket;
	double interval;	/* seconds between frames */
	const char *clock;	/* wall clock time, "HH:MM:SS" */
	const char *error;	/* the daemon could not be asked: why */
	json_t *status;		/* the daemon's documents; any may be NULL */
	json_t *stats;		/* queues with "rates" */
	json_t *rules;		/* ctl_rates_rules() */
	int height;		/* lines on the screen; 0: no limit */
	int heading[2];		/* out: lines of the column headings, or -1 */
};

/*
 * Write frame FR on F: a header (version, pid, uptime, generation,
 * config; or the error), the queues' rates table, then the busiest rules
 * by hits per second, as many as fit in FR->height lines (all with 0).
 * Lines are not cut to any width: a terminal front end clips them.
 * Returns the number of lines written.
 */
int ctl_view_top(FILE *f, struct ctl_top_frame *fr);

/* Format rate X as at most 7 characters ("0", "0.5", "1234", "12.3k",
 * "4.5M"; "-" when X < 0, i.e. unknown). Returns BUF. */
const char *ctl_view_num(double x, char *buf, size_t size);

#endif
