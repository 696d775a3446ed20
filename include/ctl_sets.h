/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_sets.h - the daemon's "sets" command: every named set of the running
 * policy with its type, elements, approximate memory and file. Called
 * from the command table in ctl_cmd.c inside an RCU read-side section.
 */
#ifndef NFQD_CTL_SETS_H
#define NFQD_CTL_SETS_H

#include <jansson.h>

struct policy;

/* "sets": {"sets":[{...}]} for P (NULL: no policy yet, no set).
 * 0 or -ENOMEM. */
int ctl_sets_list(const struct policy *p, json_t **out);

#endif
