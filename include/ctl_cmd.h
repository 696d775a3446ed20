/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_cmd.h - the daemon's control commands (status, stats, rules, reload,
 * counters reset): one decoded request in, one JSON document out. Called
 * by ctl.c on the main loop.
 */
#ifndef NFQD_CTL_CMD_H
#define NFQD_CTL_CMD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proto_request;
struct registry_root;

/* What "status" reports about the daemon itself. */
struct ctl_status {
	pid_t pid;
	double uptime;			/* seconds since start */
	const char *config_path;
	bool builtin_config;
	uint64_t generation;
	const char *config_state;	/* "file", "built-in", "last-good" */
	const char *refused;		/* last-good: the file's first error */
};

/*
 * The daemon as the control commands see it: main() fills this from
 * daemon.h, so the control side never depends on the daemon's insides.
 * Queues, counters and rules are read from ROOT (RCU) directly.
 */
struct ctl_ops {
	void *ctx;
	const struct registry_root *root;	/* queues, policy (RCU) */
	void (*status)(void *ctx, struct ctl_status *out);
	/* Re-read the config: 0 with *errors the config's warnings, or a
	 * negative errno with *errors its errors (malloc'd lines
	 * "FILE:LINE:COL: message\n", or NULL for none). */
	int (*reload)(void *ctx, char **errors);
	void (*counters_reset)(void *ctx);
};

/*
 * Run request R against the daemon OPS. Returns a PROTO_ST_* status; *out is the response
 * document ({"error":"..."} unless PROTO_ST_OK), or NULL if even that
 * could not be allocated (status PROTO_ST_INTERNAL then).
 */
int ctl_cmd_run(const struct ctl_ops *ops, const struct proto_request *r,
		json_t **out);

/* Log a warning, after "WHAT: ", for each hook the policy of ROOT judges
 * that no kernel rule queues packets from (krules.h), naming
 * "nfqd-rules install". Main thread. A control reload does it itself. */
void ctl_warn_unfed_hooks(const struct registry_root *root, const char *what);

/* {"error":"<formatted message>"}, or NULL on ENOMEM. */
json_t *ctl_error_json(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
