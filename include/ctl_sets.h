/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_sets.h - the daemon's set commands: "sets" (every named set with
 * its counters) and "set add|delete|flush|list NAME ...", which change a
 * running policy's runtime elements (dynset.h). Main thread, called from
 * the command table in ctl_cmd.c.
 */
#ifndef NFQD_CTL_SETS_H
#define NFQD_CTL_SETS_H

#include <jansson.h>

struct policy;
struct proto_request;

/* Return values beyond 0 (ok) and 1 (failed, *out says why). */
#define CTL_SETS_BADARGS	2	/* wrong words: status "unknown" */

/* "sets": {"sets":[{...}]} for P (NULL: no policy yet). */
int ctl_sets_list(struct policy *p, json_t **out);

/* "set SUB NAME ..." against P. 0, 1 or CTL_SETS_BADARGS with *out,
 * or a negative errno. */
int ctl_set_cmd(struct policy *p, const struct proto_request *r,
		json_t **out);

#endif
