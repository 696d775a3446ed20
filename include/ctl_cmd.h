/*
 * ctl_cmd.h - the daemon's control commands (status, stats, rules, reload,
 * counters reset): one decoded request in, one JSON document out. Called
 * by ctl.c on the main loop.
 */
#ifndef NFQD_CTL_CMD_H
#define NFQD_CTL_CMD_H

#include <jansson.h>

struct nfqd;
struct proto_request;

/*
 * Run request R. Returns a PROTO_ST_* status; *out is the response
 * document ({"error":"..."} unless PROTO_ST_OK), or NULL if even that
 * could not be allocated (status PROTO_ST_INTERNAL then).
 */
int ctl_cmd_run(struct nfqd *d, const struct proto_request *r, json_t **out);

/* {"error":"<formatted message>"}, or NULL on ENOMEM. */
json_t *ctl_error_json(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
