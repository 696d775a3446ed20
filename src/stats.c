/* stats.c - STUB until observability lands. */
#include <errno.h>
#include <stddef.h>

#include "stats.h"

int stats_kernel_line(uint16_t num, struct kqueue_line *out) { return -ENOENT; }
int stats_start(struct nfqd *d, struct stats **out) { *out = NULL; return 0; }
void stats_reconfigure(struct stats *s) { }
void stats_stop(struct stats *s) { }
