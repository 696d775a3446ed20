/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_client.h - the client end of the control protocol, for nfqd-ctl:
 * one request, one response (ctl_client.c); and rendering of the daemon's
 * JSON documents as text tables and Prometheus exposition (ctl_render.c).
 */
#ifndef NFQD_CTL_CLIENT_H
#define NFQD_CTL_CLIENT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct proto_request;

/* nfqd-ctl's exit statuses. */
enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_DAEMON = 1,	/* the daemon answered with an error */
	CTL_EXIT_USAGE = 2,
	CTL_EXIT_UNREACH = 3,	/* the daemon cannot be reached */
};

struct ctl_reply {
	uint16_t status;	/* PROTO_ST_* */
	char *payload;		/* NUL-terminated JSON text, malloc'd */
	uint32_t len;
};

/*
 * Connect to the socket at PATH, send REQ, and wait at most TIMEOUT_MS
 * for the whole response. Returns 0 with *reply filled (caller frees
 * reply->payload), or a negative errno with a one-line reason in ERR
 * (naming PATH): the daemon could not be reached or did not answer
 * with a valid frame.
 */
int ctl_client_call(const char *path, const struct proto_request *req,
		    int timeout_ms, struct ctl_reply *reply,
		    char *err, size_t errlen);

/*
 * ctl_client_call() with nfqd-ctl's timeout, the answer parsed: 0 (the
 * daemon said OK), CTL_EXIT_DAEMON (it answered with an error: *J holds
 * the error document) or CTL_EXIT_UNREACH (no answer, or not JSON: the
 * reason is printed on stderr; *J is {"error": reason} for a request
 * with PROTO_REQ_JSON, else NULL). *STATUS is the PROTO_ST_* of an
 * answer. The caller frees *J.
 */
int ctl_client_ask(const char *path, const struct proto_request *req,
		   json_t **j, uint16_t *status);

/*
 * Render the daemon's answer to status / stats / rules as text on F.
 * 0, or -EINVAL if J does not have the documented shape.
 */
int ctl_render_status(FILE *f, json_t *j);
int ctl_render_stats(FILE *f, json_t *j);
int ctl_render_rules(FILE *f, json_t *j);

/*
 * The stats document STATS and the rules document RULES (may be NULL) in
 * Prometheus text exposition format 0.0.4 (ctl_prom.c): per-queue
 * families labelled queue="N", per-rule families labelled hook, index and
 * rule (the rule's text, escaped, cut to CTL_PROM_RULE_LABEL bytes), and
 * nfqd_up 1. 0, or -EINVAL if STATS does not have the stats shape.
 */
int ctl_render_prometheus(FILE *f, json_t *stats, json_t *rules);
#define CTL_PROM_RULE_LABEL	64

/* The exposition when the daemon cannot be asked: nfqd_up 0 alone. */
void ctl_render_prometheus_down(FILE *f);

#endif
