/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfqd.c - the daemon's command line, and main(): composes the daemon
 * (daemon.c), the control socket (ctl.c) and the stats writer (stats.c).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu-qsbr.h>

#include "config.h"
#include "check.h"
#include "conf.h"
#include "ctl.h"
#include "ctl_cmd.h"
#include "daemon.h"
#include "defaults.h"
#include "log.h"
#include "stats.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: nfqd [-c FILE] [-t] [-d] [-V] [-h]\n"
		"  -c, --config FILE   config file (default %s; when that file\n"
		"                      does not exist the built-in default is used)\n"
		"  -t, --check         check the config, print \"config OK\" or the errors\n"
		"      --dump          with -t: print the normalised config instead\n"
		"  -d, --debug         log at debug level\n"
		"  -V, --version       print the version\n"
		"  -h, --help          this help\n",
		NFQD_DEFAULT_CONFIG);
}

/* Block the signals the main loop handles before any thread exists, so
 * one that arrives during start-up waits for the loop instead of killing
 * the daemon half-started. */
static void block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Start the daemon and its two servers, run until told to stop, stop them
 * in reverse: the control socket first (no command sees a daemon half
 * gone), the stats file last (its final numbers include every verdict). */
static int run_daemon(struct nfqd *d, const char *path, bool builtin)
{
	struct ctl_ops ops;
	struct ctl *ctl = NULL;
	int rc;

	nfqd_ctl_ops(d, &ops);
	rc = nfqd_start(d, path, builtin);
	if (rc == 0)
		rc = ctl_start(d->loop, &d->conf->opts, &ops, &ctl);
	if (rc == 0)
		rc = stats_start(d->loop, &d->conf->opts, &d->reg, &d->stats);
	if (rc == 0)
		rc = nfqd_serve(d);
	if (rc < 0) {
		/* What the start made goes: no stale socket, no stats file
		 * of a daemon that never ran. */
		ctl_stop(ctl);
		stats_stop(d->stats);
		d->stats = NULL;
		return d->start_retry ? NFQD_EXIT_RETRY : 1;
	}
	nfqd_run(d);
	ctl_stop(ctl);
	nfqd_stop(d);
	stats_stop(d->stats);
	log_info("stopped");
	return 0;
}

/* PATH made absolute against the working directory (malloc'd; NULL when
 * out of memory or the directory is gone): status and every reload name
 * and read the same file. Symbolic links stay: a link moved to another
 * file is followed by the next reload. */
static char *absolute(const char *path)
{
	char *cwd, *abs = NULL;

	if (path[0] == '/')
		return strdup(path);
	cwd = getcwd(NULL, 0);
	if (cwd && asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	free(cwd);
	return abs;
}

enum { OPT_DUMP = 256 };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 't' },
		{ "dump", no_argument, NULL, OPT_DUMP },
		{ "debug", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NFQD_DEFAULT_CONFIG;
	bool given = false, check = false, dump = false, builtin;
	/* Static: the daemon's state lives until exit, also after a failed
	 * start (which returns without tearing down what it began); a leak
	 * checker must see it reachable, not lost with main's frame. */
	static struct nfqd d;
	static char *abs;	/* the daemon's config path, for its life */
	int opt;

	while ((opt = getopt_long(argc, argv, "c:tdVh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			given = true;
			break;
		case 't':
			check = true;
			break;
		case OPT_DUMP:
			dump = true;
			break;
		case 'd':
			d.debug = true;
			break;
		case 'V':
			printf("nfqd %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nfqd: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 1;
	}
	/* Only the default path may be absent; a file given with -c must be
	 * there. */
	builtin = !given && access(path, F_OK) < 0 && errno == ENOENT;
	if (d.debug)
		log_set_level(LOG_LVL_DEBUG);
	if (dump && !check) {
		fprintf(stderr, "nfqd: --dump needs -t\n");
		return 1;
	}
	if (check)
		return nfqd_check_config(path, builtin, dump) == 0 ? 0 : 1;

	abs = absolute(path);
	if (!abs) {
		fprintf(stderr, "nfqd: %s: cannot make the path absolute (%s): give it from /\n",
			path, strerror(errno));
		return 1;
	}
	block_signals();
	rcu_register_thread();
	return run_daemon(&d, abs, builtin);
}
