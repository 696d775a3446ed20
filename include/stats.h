/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.h - the /proc-style stats file (nfqd(8), docs/stats-file.md): a
 * timer on the main loop rewrites it whole (temporary file, rename) every
 * stats-interval seconds; plus the readers of the kernel's
 * /proc/net/netfilter/nfnetlink_queue shared with the control socket.
 */
#ifndef NFQD_STATS_H
#define NFQD_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue.h"

struct conf_options;
struct ev_loop;
struct registry_root;
struct stats;

/* One line of /proc/net/netfilter/nfnetlink_queue. */
struct kqueue_line {
	uint32_t queue_num;
	uint32_t peer_portid;
	uint32_t queue_total;
	uint32_t copy_mode;
	uint32_t copy_range;
	uint32_t queue_dropped;
	uint32_t user_dropped;
	uint32_t id_sequence;
	int one;
};

/*
 * Read the kernel's line for queue NUM (in the daemon's network
 * namespace). 0, -ENOENT if the queue is not listed, or negative errno.
 */
int stats_kernel_line(uint16_t num, struct kqueue_line *out);

/* One queue's row: what the stats file and "nfqd-ctl stats" report. */
struct stats_row {
	uint16_t queue;
	int cpu;			/* -1 if not pinned */
	struct kqueue_line k;		/* zeros if not listed */
	struct queue_counters c;
};

/*
 * Snapshot every queue of ROOT (ascending) with its kernel
 * line and counters. Main thread (a registered RCU reader). Returns the
 * number of rows (>= 0) with *out malloc'd (caller frees), or a negative
 * errno.
 */
int stats_snapshot(const struct registry_root *root, struct stats_row **out);

/* Format ROW as one stats file line (docs/stats-file.md), with '\n'. Returns
 * what snprintf returns. */
int stats_format_line(const struct stats_row *row, char *buf, size_t size);

/* Create the directory holding PATH, and its parents, mode 0755, if
 * missing (for the stats file and the control socket). 0 or -errno. */
int stats_mkdir_parent(const char *path);

/* Start the stats timer on LOOP with options O (stats-file,
 * stats-interval); writes the file once at once. Creates the directory if
 * missing. 0 or negative errno. */
int stats_start(struct ev_loop *loop, const struct conf_options *o,
		const struct registry_root *root, struct stats **out);

/* Apply changed options (file, interval) after a reload. */
void stats_reconfigure(struct stats *s, const struct conf_options *o);

/* Stop the timer and remove the file. */
void stats_stop(struct stats *s);

#endif
