/*
 * stats.h - the /proc-style stats file (interface.md §2): a timer on the
 * main loop rewrites it whole (temporary file, rename) every
 * stats-interval seconds; plus the readers of the kernel's
 * /proc/net/netfilter/nfnetlink_queue shared with the control socket.
 */
#ifndef NFQD_STATS_H
#define NFQD_STATS_H

#include <stdbool.h>
#include <stdint.h>

struct nfqd;
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

/* Start the stats timer on d->loop with d->conf's options; writes the file
 * once at once. Creates the directory if missing. 0 or negative errno. */
int stats_start(struct nfqd *d, struct stats **out);

/* Apply changed options (file, interval) after a reload. */
void stats_reconfigure(struct stats *s);

/* Stop the timer and remove the file. */
void stats_stop(struct stats *s);

#endif
