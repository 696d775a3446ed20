/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_setcli.h - nfqd-ctl's side of the set commands: "sets" as a table,
 * and "set add|delete|flush|list", whose elements travel as data lines
 * (PROTO_REQ_DATA) in requests of at most PROTO_MAX_REQUEST bytes, so a
 * bulk load from standard input ("set add NAME -") is a few hundred
 * requests for a million elements.
 */
#ifndef NFQD_CTL_SETCLI_H
#define NFQD_CTL_SETCLI_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* The "sets" document as a table on F. 0 or -EINVAL. */
int ctl_render_sets(FILE *f, json_t *j);

/* The "sets" document as Prometheus families labelled set="NAME"
 * (nfqd_set_*) and, for per-key limits, hook/index (nfqd_limit_*). */
void ctl_render_prometheus_sets(FILE *f, json_t *j);

/*
 * Run "set WORDS..." (WORDS[0] is "set") against the daemon at SOCKET,
 * print the answer (JSON with JSON) and return nfqd-ctl's exit status.
 * Elements "-" mean: one element a line from standard input.
 */
int ctl_set_run(const char *socket, bool json, const char *const *words,
		unsigned n);

#endif
