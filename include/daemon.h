/*
 * daemon.h - the daemon as a whole: start-up, the main thread's libev loop
 * (signals, stats timer, control socket), reload and shutdown. Everything
 * in struct nfqd is owned by the main thread.
 */
#ifndef NFQD_DAEMON_H
#define NFQD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct ev_loop;
struct conf;
struct stats;
struct ctl;
struct diags;

struct nfqd {
	struct ev_loop *loop;		/* main thread's loop */
	const char *config_path;	/* file to (re)load */
	bool builtin_config;		/* default path absent: built-in used */
	struct conf *conf;		/* running configuration */
	uint64_t generation;		/* 1 after start, +1 per reload */
	double start_time;		/* ev_time() at start */
	pid_t pid;
	struct stats *stats;
	struct ctl *ctl;
	bool debug;			/* -d: log level fixed at debug */
	uint32_t kflags_supported;	/* NFQA_CFG_F_* this kernel accepts */
};

/*
 * Load the config, bind every queue, start workers, stats and control.
 * Logs one clear line and returns a negative errno on any failure.
 */
int nfqd_start(struct nfqd *d, const char *config_path, bool builtin);

/* Run the main loop until SIGTERM/SIGINT, then shut down. Returns the
 * process exit code. */
int nfqd_run(struct nfqd *d);

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
