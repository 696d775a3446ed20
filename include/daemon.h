/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.h - the daemon: config, queues and workers, the main thread's
 * libev loop (signals), reload and shutdown. Everything in struct nfqd is
 * owned by the main thread. main() (nfqd.c) composes it with the control
 * socket (ctl.h, through struct ctl_ops) and the stats writer (stats.h):
 *	nfqd_start - ctl_start, stats_start - nfqd_serve - nfqd_run -
 *	ctl_stop - nfqd_stop - stats_stop
 */
#ifndef NFQD_DAEMON_H
#define NFQD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ev.h>

#include "conf.h"
#include "fdstore.h"
#include "registry.h"

struct ctl_ops;
struct ifcache;
struct stats;
struct diags;

/* Where the running config came from. */
enum nfqd_conf_state {
	NFQD_CONF_FILE,		/* the config file */
	NFQD_CONF_BUILTIN,	/* the built-in default (no file) */
	NFQD_CONF_LAST_GOOD,	/* the file was refused at start: the last
				 * config that loaded, from systemd's store */
};

/* Everything the daemon holds: the one owner of every piece of its state. */
struct nfqd {
	struct ev_loop *loop;		/* main thread's loop */
	const char *config_path;	/* file to (re)load */
	bool builtin_config;		/* default path absent: built-in used */
	struct conf *conf;		/* running configuration */
	enum nfqd_conf_state config_state;	/* where it came from */
	char *refused;			/* LAST_GOOD: the file's first error */
	uint64_t generation;		/* 1 after start, +1 per reload */
	double start_time;		/* ev_time() at start */
	pid_t pid;
	unsigned nqueues;		/* bound at start */
	bool stats_dir_created;		/* by us: chown it for option user */
	struct registry_root reg;	/* queue table and policy (RCU) */
	bool slot_used[NFQD_MAX_QUEUES];	/* worker slots (counters) */
	struct ifcache *ifc;		/* interface names, for the policy */
	struct fdstore fds;		/* sockets in systemd's fd store */
	char *unit;			/* systemd unit, read at start, or NULL */
	struct stats *stats;		/* main's: reconfigured on reload */
	bool debug;			/* -d: log level fixed at debug */
	bool start_retry;		/* start failed, but not for the config:
					 * exit NFQD_EXIT_RETRY */
	uint32_t kflags_supported;	/* NFQA_CFG_F_* this kernel accepts */
	ev_signal sig_watchers[3];	/* HUP, TERM, INT */
	ev_timer log_timer;		/* flushes the workers' log rings */
	ev_timer sweep_timer;		/* frees expired set elements */
	ev_timer watchdog_timer;	/* WATCHDOG=1 while workers progress */
	bool watchdog_stalled;		/* a worker stopped: pings withheld */
};

/* Exit status of a start that failed with a valid config while systemd
 * holds queue sockets (EX_TEMPFAIL): the unit restarts it, and the
 * store, with what the kernel queued, is kept. 1 is a refused config. */
#define NFQD_EXIT_RETRY	75

/*
 * Load the config and bind every queue (no worker runs yet, privileges
 * kept). Logs one clear line and returns a negative errno on any failure.
 */
int nfqd_start(struct nfqd *d, const char *config_path, bool builtin);

/* Drop privileges (option user), start the workers, tell systemd READY.
 * Logs the reason and returns a negative errno on failure. */
int nfqd_serve(struct nfqd *d);

/* Run the main loop until SIGTERM/SIGINT. */
void nfqd_run(struct nfqd *d);

/* Stop the workers (every packet read is answered), unbind, free. */
void nfqd_stop(struct nfqd *d);

/* Fill OPS with the daemon's side of the control commands. */
void nfqd_ctl_ops(struct nfqd *d, struct ctl_ops *ops);

/*
 * Re-read the config file and apply it: new policy, queues added or
 * removed, queue options reconfigured. On failure nothing changes and
 * DG holds the errors; the warnings go to DG either way (and to the log
 * when the reload goes ahead). Main thread only.
 */
int nfqd_reload(struct nfqd *d, struct diags *dg);

/* Zero nfqd's own counters: every queue's and the policy's. */
void nfqd_counters_reset(struct nfqd *d);

#endif
