/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ctl_setcli.h - nfqd-ctl's side of the "sets" command: a table. */
#ifndef NFQD_CTL_SETCLI_H
#define NFQD_CTL_SETCLI_H

#include <stdio.h>

#include <jansson.h>

/* The "sets" document as a table on F. 0 or -EINVAL. */
int ctl_render_sets(FILE *f, json_t *j);

#endif
