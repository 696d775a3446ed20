/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.c - start-up, the main loop (signals), reload and shutdown.
 * Everything here runs on the main thread; workers only see what the
 * registry publishes.
 */
#include <cap-ng.h>
#include <errno.h>
#include <ev.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>
#include <urcu-qsbr.h>

#include "conf.h"
#include "confenv.h"
#include "ctl_cmd.h"
#include "daemon.h"
#include "diag.h"
#include "fdstore.h"
#include "ifcache.h"
#include "log.h"
#include "policy.h"
#include "queue.h"
#include "registry.h"
#include "setstate.h"
#include "stats.h"
#include "svcjob.h"

#define LOG_FLUSH_SECONDS	0.1	/* workers' log lines reach stderr */
/* A reload waits this long for the kernel's answer to a reconfigure, as
 * long as a config message waits for its ACK (queue_conf.c): a worker
 * that wakes late (a loaded machine) is slow, not failed. */
#define RECONF_WAIT_MS		10000
#define SWEEP_SECONDS		1.0	/* expired set elements are freed */


/* ------------------------------------------------------------------ */
/* helpers                                                             */

/* The config file (its text in *TEXT, malloc'd), or the built-in one
 * (*TEXT NULL). */
static int load_conf(const char *path, bool builtin, struct conf **out,
		     char **text, size_t *len, struct diags *dg)
{
	int rc;

	if (builtin) {
		*out = conf_default();
		return *out ? 0 : -ENOMEM;
	}
	rc = conf_read_file(path, text, len, dg);
	if (rc == 0)
		rc = conf_load_buffer(path, *text, *len, out, dg);
	return rc;
}

/* The CPU for queue NUM: queue base+i runs on the i-th CPU this process
 * may use (so systemd's CPUAffinity= is respected). */
static int cpu_for_queue(const struct conf_options *o, uint16_t num)
{
	cpu_set_t set;
	int n, i, k;

	if (!o->cpu_pin || sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	n = CPU_COUNT(&set);
	if (n <= 0)
		return -1;
	k = ((int)num - (int)o->queue_base) % n;
	if (k < 0)
		k += n;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set) && k-- == 0)
			return i;
	return -1;
}

static unsigned alloc_slot(bool *used)
{
	for (unsigned i = 0; i < NFQD_MAX_QUEUES; i++)
		if (!used[i]) {
			used[i] = true;
			return i;
		}
	return NFQD_MAX_QUEUES;	/* none free: the caller checks */
}

static unsigned slot_count(const bool *used)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFQD_MAX_QUEUES; i++)
		if (used[i])
			n = i + 1;
	return n;
}

/* Worker threads inherit the creator's signal mask: block everything so
 * that signals reach the main loop only. */
static int start_worker(struct queue *q)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = queue_start(q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Learn which optional kernel flags this kernel accepts (binds
 * nothing). */
static int no_net_admin(void)
{
	log_err("no CAP_NET_ADMIN over this network namespace: nfqd must run as root or with CAP_NET_ADMIN to bind NFQUEUE queues");
	return -EPERM;
}

static int probe_kflags(struct nfqd *d, uint16_t num)
{
	int rc = queue_kflags_supported(QUEUE_OPTIONAL_KFLAGS, num,
					&d->kflags_supported);

	if (rc == -EPERM)
		return no_net_admin();
	if (rc < 0)
		log_err("kernel: cannot probe queue flags (%s)", strerror(-rc));
	return rc;
}

/* ------------------------------------------------------------------ */
/* systemd: the file descriptor store and the watchdog                 */

/* Sockets systemd passed at start (LISTEN_FDS): queue NUM's, or -1. */
/* Queue NUM in R (ascending queue numbers), or NULL. */
static struct queue *find_queue(const struct registry *r, uint16_t num)
{
	unsigned lo = 0, hi = r->n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		uint16_t n = queue_num(r->q[mid]);

		if (n == num)
			return r->q[mid];
		if (n < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* WATCHDOG=1 only while every worker completes batches or waits. */
static void on_watchdog(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct nfqd *d = w->data;
	struct registry *r = registry_get(&d->reg);
	int stuck = -1;

	for (unsigned i = 0; r && i < r->n; i++)
		if (!queue_progressed(r->q[i]) && stuck < 0)
			stuck = queue_num(r->q[i]);
	if (stuck < 0) {
		if (d->watchdog_stalled)
			log_info("watchdog: every worker makes progress again");
		d->watchdog_stalled = false;
		sd_notify(0, "WATCHDOG=1");
		return;
	}
	if (!d->watchdog_stalled)
		log_warn("queue %d: worker stuck in a batch: no watchdog ping",
			 stuck);
	d->watchdog_stalled = true;
}

static void watchdog_start(struct nfqd *d)
{
	uint64_t usec = 0;

	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return;
	ev_timer_init(&d->watchdog_timer, on_watchdog, 0., usec / 2e6);
	d->watchdog_timer.data = d;
	ev_timer_again(d->loop, &d->watchdog_timer);
	sd_notify(0, "WATCHDOG=1");
	log_info("watchdog: %.1f s, pinged while every worker makes progress",
		 usec / 1e6);
}

static void notify_status(const struct nfqd *d, const char *state)
{
	struct registry *r = registry_get(&d->reg);

	if (d->config_state == NFQD_CONF_LAST_GOOD)
		sd_notifyf(0, "%sSTATUS=LAST GOOD CONFIG: generation %llu, %u queues; config file refused: %s",
			   state, (unsigned long long)d->generation, r->n,
			   d->refused);
	else
		sd_notifyf(0, "%sSTATUS=generation %llu, %u queues", state,
			   (unsigned long long)d->generation, r->n);
}

/* MONOTONIC_USEC lets systemd (253+) tell this reload from an older one;
 * 252 ignores it. */
static void notify_reloading(const struct nfqd *d)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading, generation %llu running",
		   (unsigned long long)now.tv_sec * 1000000ULL +
		   (unsigned long long)now.tv_nsec / 1000ULL,
		   (unsigned long long)d->generation);
}

/* A failed reload keeps the running policy: say so, with its first error
 * (a STATUS= value is one line). */
static void notify_reload_failed(const struct nfqd *d,
				 const struct diags *dg, int err)
{
	char *first = dg->errors ? diag_join(dg, DIAG_ERROR) : NULL;
	const char *e = first ? first : strerror(-err);

	sd_notifyf(0, "READY=1\nSTATUS=reload failed, keeping generation %llu, %u queues: %.*s",
		   (unsigned long long)d->generation, registry_get(&d->reg)->n,
		   (int)strcspn(e, "\n"), e);
	free(first);
}

/* ------------------------------------------------------------------ */
/* start-up                                                            */

static bool have_net_admin(void)
{
	capng_get_caps_process();
	return capng_have_capability(CAPNG_EFFECTIVE, CAP_NET_ADMIN);
}

static void close_queues(struct queue **qs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (qs[i])
			queue_stop(qs[i]);
		queue_free(qs[i]);
	}
}

/* Bind (or adopt) every queue of the config; no worker runs yet. */
static int open_queues(struct nfqd *d, struct registry *r,
		       const uint16_t *nums, uint32_t kflags)
{
	const struct conf_options *o = &d->conf->opts;
	int rc = 0;

	for (unsigned i = 0; i < r->n && rc == 0; i++) {
		struct queue_place at = {
			.num = nums[i],
			.cpu = cpu_for_queue(o, nums[i]),
			.slot = alloc_slot(d->slot_used),
			.root = &d->reg,
		};
		int fd = fdstore_take(&d->fds, nums[i]);

		if (fd >= 0) {
			rc = queue_adopt(&r->q[i], fd, &at, o, kflags);
			/* systemd holds a copy: it outlives us either way */
			if (r->q[i])
				queue_keep_bound(r->q[i], d->fds.under_systemd);
			continue;
		}
		rc = queue_open(&r->q[i], &at, o, kflags);
		if (rc == 0)
			fdstore_put(&d->fds, r->q[i]);
	}
	return rc;
}

/* P: the policy the start's config check built (now ours). */
static int start_queues(struct nfqd *d, const uint16_t *nums, unsigned n,
			struct policy *p)
{
	struct registry *r = registry_alloc(n);
	struct diags dg = { 0 };
	char *state;
	int rc;

	if (!r) {
		policy_free(p);
		return -ENOMEM;
	}
	rc = probe_kflags(d, n ? nums[0] : 0);
	if (rc == 0)
		rc = policy_check_kflags(p, d->kflags_supported, &dg);
	diag_log(&dg, "");
	diag_free(&dg);
	if (rc < 0) {
		policy_free(p);
		free(r);
		return rc;
	}
	policy_use_ifcache(p, d->ifc);
	state = setstate_path(&d->conf->opts);
	setstate_restore(p, state);
	free(state);
	/* Packets can arrive as soon as a queue is bound, and are judged
	 * while waiting for the kernel's ACKs: publish the policy first. */
	registry_publish_policy(&d->reg, p);
	rc = open_queues(d, r, nums, policy_kernel_flags(p));
	if (rc < 0) {
		close_queues(r->q, n);
		free(r);
		return rc;
	}
	registry_publish(&d->reg, r);
	fdstore_close_rest(&d->fds, r);
	return 0;
}

/* Workers start last: they inherit the credentials the main thread has
 * then (see drop_privileges()). */
static int start_workers(struct nfqd *d)
{
	struct registry *r = registry_get(&d->reg);
	int rc = 0;

	for (unsigned i = 0; i < r->n && rc == 0; i++)
		rc = start_worker(r->q[i]);
	return rc;
}

static void dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash && slash != path ? (size_t)(slash - path) : 1;

	snprintf(dir, size, "%.*s", (int)len, slash ? path : ".");
}

/* Does the directory of PATH exist? */
static bool dir_exists(const char *path)
{
	char dir[4096];

	dir_of(path, dir, sizeof(dir));
	return access(dir, F_OK) == 0;
}

/* Is DIR one of the directories systemd made for this service
 * (RuntimeDirectory=, passed as RUNTIME_DIRECTORY, colon-separated)? */
static bool is_runtime_dir(const char *dir)
{
	const char *s = getenv("RUNTIME_DIRECTORY");
	size_t len = strlen(dir);

	while (s && *s) {
		size_t n = strcspn(s, ":");

		if (n == len && strncmp(s, dir, n) == 0)
			return true;
		s += n + (s[n] == ':');
	}
	return false;
}

/*
 * Run as opts.user with only CAP_NET_ADMIN (workers send verdicts and a
 * reload may bind queues: nfnetlink checks the capability on every
 * message). The stats directory nfqd created, or systemd's
 * RuntimeDirectory= for it, is handed to that user; another one that
 * existed must already be writable by it.
 */
static int drop_privileges(const struct conf_options *o, bool created_dir)
{
	char dir[4096];
	struct passwd *pw;
	int rc;

	if (!o->user)
		return 0;
	pw = getpwnam(o->user);
	if (!pw) {
		log_err("user \"%s\": no such user", o->user);
		return -ENOENT;
	}
	dir_of(o->stats_file, dir, sizeof(dir));
	if ((created_dir || is_runtime_dir(dir)) &&
	    chown(dir, pw->pw_uid, pw->pw_gid) < 0)
		log_warn("stats: chown %s to %s failed (%s)", dir, o->user,
			 strerror(errno));
	capng_clear(CAPNG_SELECT_BOTH);
	capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED,
		     CAP_NET_ADMIN);
	rc = capng_change_id((int)pw->pw_uid, (int)pw->pw_gid,
			     CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING);
	if (rc != 0) {
		log_err("user \"%s\": cannot switch to uid %u (libcap-ng error %d)",
			o->user, pw->pw_uid, rc);
		return -EPERM;
	}
	if (access(dir, W_OK) < 0)
		log_warn("stats: %s is not writable by user %s: the stats file will not be updated",
			 dir, o->user);
	log_info("running as user %s (uid %u) with CAP_NET_ADMIN only",
		 o->user, pw->pw_uid);
	return 0;
}

/*
 * SIGTERM under systemd: only a restart job keeps the queues bound in
 * the file descriptor store (the next process adopts them with what is
 * queued), and so does a manager other than systemd (no systemd unit:
 * fake_systemd.py in the tests). Anything else (a stop job, no job, a
 * store that does not hold the sockets, a systemd nfqd cannot ask) is a
 * final stop: every packet the kernel queued is judged, then the queues
 * are unbound.
 */
static void choose_stop(struct nfqd *d)
{
	struct registry *r = registry_get(&d->reg);
	char why[256];
	enum svc_stop kind;

	if (!d->fds.under_systemd || !r || r->n == 0)
		return;
	kind = svcjob_stop_kind(d->unit, r->n, why, sizeof(why));
	if (kind == SVC_STOP_NO_UNIT) {
		/* A service manager speaking systemd's notify protocol
		 * keeps the sockets: its business what comes next. */
		log_info("stop: %s: the queues stay bound in the manager's store",
			 why);
		return;
	}
	if (kind == SVC_STOP_RESTART) {
		log_info("stop: %s: a restart: the queues stay bound in the store, their packets wait for the next process",
			 why);
		return;
	}
	if (kind == SVC_STOP_UNKNOWN)
		log_warn("stop: %s: taken as a final stop", why);
	else
		log_info("stop: %s: a final stop", why);
	log_info("stop: every packet queued is judged, then the queues are unbound");
	for (unsigned i = 0; i < r->n; i++)
		fdstore_remove(&d->fds, r->q[i]);
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct nfqd *d = w->data;
	struct diags dg = { 0 };
	int rc;

	if (w->signum != SIGHUP) {
		log_info("signal %d: stopping", w->signum);
		choose_stop(d);
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	rc = nfqd_reload(d, &dg);
	if (rc < 0) {
		char prefix[80];

		snprintf(prefix, sizeof(prefix), "reload failed, keeping "
			 "generation %llu: ", (unsigned long long)d->generation);
		diag_log(&dg, prefix);
		if (!dg.errors)		/* no reason recorded */
			log_err("%s%s", prefix, strerror(-rc));
	} else {
		ctl_warn_unfed_hooks(&d->reg, "reload");
	}
	diag_free(&dg);
}

static void loop_release(struct ev_loop *loop)
{
	rcu_thread_offline();
}

static void loop_acquire(struct ev_loop *loop)
{
	rcu_thread_online();
}


static void on_log_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct nfqd *d = w->data;

	log_rings_flush();
	policy_log_report(registry_policy(&d->reg));
}

/* Expired runtime elements stop matching on their own (lookups check
 * the time); this frees them. */
static void on_sweep_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct nfqd *d = w->data;
	double t0 = ev_time(), took;

	policy_sets_sweep(registry_policy(&d->reg));
	/* A walk over a million elements takes a while: keep the main
	 * loop (control commands, reloads) free at least 90% of the time. */
	took = ev_time() - t0;
	w->repeat = took * 10 > SWEEP_SECONDS ? took * 10 : SWEEP_SECONDS;
	ev_timer_again(loop, w);
}

static void watch_signals(struct nfqd *d)
{
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };

	for (unsigned i = 0; i < 3; i++) {
		ev_signal_init(&d->sig_watchers[i], on_signal, sigs[i]);
		d->sig_watchers[i].data = d;
		ev_signal_start(d->loop, &d->sig_watchers[i]);
	}
}

/* The config a start runs with, checked as far as a start checks it
 * before binding: parsed, the system's side (users, groups, paths), the
 * queue numbers, the policy with its set files. */
struct start_conf {
	struct conf *conf;
	uint16_t *nums;
	int n;
	struct policy *pol;
	char *text;		/* what was parsed (NULL: built-in) */
	size_t len;
};

static void start_conf_free(struct start_conf *sc)
{
	conf_free(sc->conf);
	free(sc->nums);
	policy_free(sc->pol);
	free(sc->text);
	memset(sc, 0, sizeof(*sc));
}

static int check_start_conf(struct nfqd *d, struct start_conf *sc,
			    struct diags *dg)
{
	int rc;

	if (d->builtin_config) {
		sc->conf = conf_default();
		rc = sc->conf ? 0 : -ENOMEM;
	} else {
		rc = conf_load_buffer(d->config_path, sc->text, sc->len,
				      &sc->conf, dg);
	}
	if (rc == 0)
		rc = conf_check_env(sc->conf, dg);
	if (rc == 0) {
		sc->n = conf_queue_numbers(&sc->conf->opts, &sc->nums);
		if (sc->n < 0)
			diag_add(dg, DIAG_ERROR, NULL, "queues: cannot resolve queue numbers (%s)",
				 strerror(-sc->n));
		rc = sc->n < 0 ? sc->n : 0;
	}
	if (rc == 0) {
		sc->pol = policy_build(sc->conf, (unsigned)sc->n, dg);
		rc = sc->pol ? 0 : -EINVAL;
	}
	return rc;
}

/* The first error of DG, one line (malloc'd), or a generic text. */
static char *first_error(const struct diags *dg, int rc)
{
	char *all = dg->errors ? diag_join(dg, DIAG_ERROR) : NULL;
	char *line;

	if (!all)
		return strdup(strerror(-rc));
	all[strcspn(all, "\n")] = '\0';
	line = strdup(all);
	free(all);
	return line;
}

/*
 * The config file, checked as a start checks it; when it is refused
 * and systemd's store keeps the last config that loaded (a restart after
 * a bad edit), that one: the policy that ran stays enforced, at
 * priority 2 in the journal, in "nfqd-ctl status" and in STATUS=.
 */
static int start_conf(struct nfqd *d, struct start_conf *sc)
{
	struct diags dg = { 0 };
	int rc = 0;

	if (!d->builtin_config)
		rc = conf_read_file(d->config_path, &sc->text, &sc->len, &dg);
	if (rc == 0)
		rc = check_start_conf(d, sc, &dg);
	diag_log(&dg, "");
	if (rc == 0) {
		diag_free(&dg);
		d->config_state = d->builtin_config ? NFQD_CONF_BUILTIN :
						       NFQD_CONF_FILE;
		return 0;
	}
	d->refused = first_error(&dg, rc);
	diag_free(&dg);
	start_conf_free(sc);
	if (fdstore_config_text(&d->fds, &sc->text, &sc->len) < 0) {
		/* Under systemd the rules may already send packets here. */
		if (d->fds.under_systemd)
			log_crit("config %s refused (%s) and no last good config is kept in systemd's store: nfqd does not start",
				 d->config_path, d->refused);
		return rc;
	}
	rc = check_start_conf(d, sc, &dg);
	diag_log(&dg, "last good config: ");
	diag_free(&dg);
	if (rc < 0) {
		log_crit("config %s refused (%s), and the last good config kept in systemd's store fails too: nfqd does not start",
			 d->config_path, d->refused);
		return rc;
	}
	d->config_state = NFQD_CONF_LAST_GOOD;
	log_crit("config %s refused: %s; running the last config that loaded (kept in systemd's file descriptor store) instead: fix the file, then systemctl reload nfqd",
		 d->config_path, d->refused);
	return 0;
}

static int start_with(struct nfqd *d, struct start_conf *sc)
{
	int rc;

	if (!d->debug)
		log_set_level(d->conf->opts.log_level);
	if (!have_net_admin())
		return no_net_admin();
	/* Packets are judged from the first bind on: names first. */
	rc = ifcache_start(d->loop, &d->ifc);
	if (rc < 0)
		return rc;
	rc = start_queues(d, sc->nums, (unsigned)sc->n, sc->pol);
	sc->pol = NULL;
	if (rc < 0)
		return rc;
	/* Only the file's text: a fallback keeps what the store holds. */
	if (d->config_state == NFQD_CONF_FILE)
		fdstore_put_config(&d->fds, sc->text, sc->len);
	return 0;
}

int nfqd_start(struct nfqd *d, const char *config_path, bool builtin)
{
	struct start_conf sc = { 0 };
	int rc;

	registry_init(&d->reg);
	d->pid = getpid();
	/* First: sd_listen_fds*() must see LISTEN_PID before anything. */
	fdstore_collect(&d->fds);
	if (d->fds.under_systemd)
		d->unit = svcjob_unit();	/* while /proc/self is ours */
	d->config_path = config_path;
	d->builtin_config = builtin;
	d->loop = ev_default_loop(EVFLAG_AUTO | EVFLAG_SIGNALFD);
	if (!d->loop)
		return -ENOMEM;
	d->start_time = ev_time();
	ev_set_loop_release_cb(d->loop, loop_release, loop_acquire);
	watch_signals(d);
	ev_timer_init(&d->log_timer, on_log_timer, LOG_FLUSH_SECONDS,
		      LOG_FLUSH_SECONDS);
	d->log_timer.data = d;
	ev_timer_start(d->loop, &d->log_timer);
	ev_timer_init(&d->sweep_timer, on_sweep_timer, SWEEP_SECONDS,
		      SWEEP_SECONDS);
	d->sweep_timer.data = d;
	ev_timer_start(d->loop, &d->sweep_timer);

	rc = start_conf(d, &sc);
	if (rc == 0) {
		d->conf = sc.conf;
		sc.conf = NULL;
		rc = start_with(d, &sc);
	}
	if (rc == 0) {
		d->generation = 1;
		d->nqueues = (unsigned)sc.n;
		d->stats_dir_created = !dir_exists(d->conf->opts.stats_file);
	} else {
		/* The config was fine and systemd holds queues with packets
		 * (a slow kernel, a full socket): worth another start. */
		d->start_retry = d->conf && d->fds.n_passed;
		fdstore_report_release(&d->fds);
	}
	start_conf_free(&sc);
	return rc;
}

int nfqd_serve(struct nfqd *d)
{
	int rc;

	rc = drop_privileges(&d->conf->opts, d->stats_dir_created);
	if (rc == 0)
		rc = start_workers(d);
	if (rc < 0)
		return rc;
	log_info("started: %u queues, config %s, generation 1", d->nqueues,
		 d->builtin_config ? "built-in" : d->config_path);
	ctl_warn_unfed_hooks(&d->reg, "start");
	notify_status(d, "READY=1\n");
	watchdog_start(d);
	return 0;
}

/* ------------------------------------------------------------------ */
/* reload                                                              */

struct reload_plan {
	struct registry *next;		/* the new table */
	struct queue *removed[NFQD_MAX_QUEUES];
	unsigned n_removed;
	bool opened[NFQD_MAX_QUEUES];	/* next->q[i] is new */
	bool started[NFQD_MAX_QUEUES];	/* ... and its worker runs */
	bool asked[NFQD_MAX_QUEUES];	/* next->q[i] kept, reconfigured */
	unsigned slot[NFQD_MAX_QUEUES];	/* a new queue's worker slot */
	uint16_t nums[NFQD_MAX_QUEUES];
	bool used[NFQD_MAX_QUEUES];	/* slots in use during the switch */
};

/* Which queues stay, go and come, with a slot for each new one; binds
 * nothing yet. */
static int plan_queues(struct nfqd *d, const uint16_t *nums, unsigned n,
		       struct reload_plan *pl, struct diags *dg)
{
	struct registry *cur = registry_get(&d->reg);

	memcpy(pl->used, d->slot_used, sizeof(pl->used));
	if (n > NFQD_MAX_QUEUES)
		return -E2BIG;
	pl->next = registry_alloc(n);
	if (!pl->next)
		return -ENOMEM;
	for (unsigned i = 0; i < cur->n; i++) {
		bool kept = false;

		for (unsigned j = 0; j < n; j++)
			kept |= nums[j] == queue_num(cur->q[i]);
		if (!kept)
			pl->removed[pl->n_removed++] = cur->q[i];
	}
	for (unsigned i = 0; i < n; i++) {
		pl->nums[i] = nums[i];
		pl->next->q[i] = find_queue(cur, nums[i]);
		if (pl->next->q[i])
			continue;
		pl->opened[i] = true;
		pl->slot[i] = alloc_slot(pl->used);
		if (pl->slot[i] >= NFQD_MAX_QUEUES) {
			/* Old and new queues together exceed the slots. */
			diag_add(dg, DIAG_ERROR, NULL, "queue %u: no worker slot free (at most %u queues during a reload)",
				  nums[i], NFQD_MAX_QUEUES);
			return -ENOSPC;
		}
	}
	return 0;
}

static void bind_failed(struct diags *dg, uint16_t num, int rc)
{
	if (rc == -EPERM)
		diag_add(dg, DIAG_ERROR, NULL, QUEUE_HELD_FMT, num, "bind",
			 strerror(-rc));
	else
		diag_add(dg, DIAG_ERROR, NULL, "queue %u: cannot bind (%s)",
			 num, strerror(-rc));
}

/* Bind the new queues with the options O and flags KFLAGS; their
 * workers wait. */
static int open_new(struct nfqd *d, const struct conf_options *o,
		    uint32_t kflags,
		    struct reload_plan *pl, struct diags *dg)
{
	int rc = 0;

	for (unsigned i = 0; i < pl->next->n && rc == 0; i++) {
		uint16_t num = pl->nums[i];

		if (!pl->opened[i])
			continue;
		struct queue_place at = {
			.num = num,
			.cpu = cpu_for_queue(o, num),
			.slot = pl->slot[i],
			.root = &d->reg,
		};

		rc = queue_open(&pl->next->q[i], &at, o, kflags);
		if (rc < 0)
			bind_failed(dg, num, rc);
	}
	return rc;
}

static int start_new(const struct nfqd *d, struct reload_plan *pl,
		     struct diags *dg)
{
	for (unsigned i = 0; i < pl->next->n; i++) {
		int rc;

		if (!pl->opened[i])
			continue;
		rc = start_worker(pl->next->q[i]);
		if (rc < 0) {
			diag_add(dg, DIAG_ERROR, NULL, "queue %u: worker did not start (%s)",
				  pl->nums[i], strerror(-rc));
			return rc;
		}
		pl->started[i] = true;
	}
	return 0;
}

/* Undo the new queues: their workers stop, their sockets close and the
 * kernel unbinds them (they are in no fd store yet). */
static void abort_plan(struct reload_plan *pl)
{
	for (unsigned i = 0; pl->next && i < pl->next->n; i++)
		if (pl->opened[i] && pl->next->q[i]) {
			queue_stop(pl->next->q[i]);
			queue_free(pl->next->q[i]);
		}
	free(pl->next);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 +
	       (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Wait (bounded) until the kernel answered every reconfigure that
 * ASKED marks. 0, or the first failure (its queue named in DG).
 */
static int wait_reconfigured(struct registry *r, const bool *asked,
			     struct diags *dg)
{
	const struct timespec pause = { 0, 1000000 };
	struct timespec t0;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < r->n && rc == 0; i++) {
		int res = 0;

		while (asked[i] && (res = queue_reconfigure_result(r->q[i])) > 0 &&
		       ms_since(&t0) < RECONF_WAIT_MS)
			nanosleep(&pause, NULL);
		if (!asked[i] || res == 0)
			continue;
		rc = res > 0 ? -ETIMEDOUT : res;
		diag_add(dg, DIAG_ERROR, NULL, rc == -ENOMEM ?
			 "queue %u: no memory for the new batch and copy-range buffers (%s)" :
			 "queue %u: the kernel did not accept the new queue configuration (%s)",
			  queue_num(r->q[i]), strerror(-rc));
	}
	return rc;
}

/* The queues that stay get the running options and flags back. */
static void revert_kept(const struct nfqd *d, struct reload_plan *pl)
{
	uint32_t old_kflags = 0;

	if (registry_policy(&d->reg))
		old_kflags = policy_kernel_flags(registry_policy(&d->reg));
	for (unsigned i = 0; pl->next && i < pl->next->n; i++)
		if (pl->asked[i])
			queue_reconfigure(pl->next->q[i], &d->conf->opts,
					  old_kflags);
}

/*
 * Give the queues that stay the options O (the new ones, with the larger
 * of the old and new copy range) and KFLAGS (the old and the new policy's),
 * and wait until the kernel has acknowledged them: a policy that needs a
 * new flag (meta skuid needs UID_GID) must not judge packets queued
 * without it, and the old one keeps the flags and the copy it needs until
 * it is unpublished (drop_old_needs()).
 */
static int reconfigure_kept(const struct conf_options *o, uint32_t kflags,
			    struct reload_plan *pl, struct diags *dg)
{
	for (unsigned i = 0; i < pl->next->n; i++)
		if (!pl->opened[i])
			pl->asked[i] = queue_reconfigure(pl->next->q[i], o,
							 kflags);
	return wait_reconfigured(pl->next, pl->asked, dg);
}

/*
 * After the switch, the flags and the copy range only the old policy
 * needed go: no worker judges with it any more (registry_publish_policy()
 * waited for a grace period), and the new policy does not read them. A
 * failure leaves a flag or bytes nothing reads: logged, the reload stands.
 */
static void drop_old_needs(struct nfqd *d, const struct conf *nc,
			   uint32_t kflags)
{
	struct registry *r = registry_get(&d->reg);
	bool asked[NFQD_MAX_QUEUES] = { false };
	struct diags dg = { 0 };
	bool any = false;

	for (unsigned i = 0; i < r->n; i++)
		any |= asked[i] = queue_reconfigure(r->q[i], &nc->opts, kflags);
	if (any && wait_reconfigured(r, asked, &dg) < 0)
		diag_log(&dg, "reload: kernel flags or copy range the new policy does not need stay: ");
	diag_free(&dg);
}

/* Switch to the planned table: nothing here can fail. */
static void commit_plan(struct nfqd *d, struct reload_plan *pl)
{
	registry_publish(&d->reg, pl->next);
	for (unsigned i = 0; i < pl->next->n; i++)
		if (pl->opened[i])
			fdstore_put(&d->fds, pl->next->q[i]);
	for (unsigned i = 0; i < pl->n_removed; i++) {
		fdstore_remove(&d->fds, pl->removed[i]);
		queue_request_stop(pl->removed[i]);
	}
	for (unsigned i = 0; i < pl->n_removed; i++) {
		pl->used[queue_slot(pl->removed[i])] = false;
		queue_stop(pl->removed[i]);
		log_info("queue %u: removed", queue_num(pl->removed[i]));
		queue_free(pl->removed[i]);
	}
	memcpy(d->slot_used, pl->used, sizeof(d->slot_used));
}

/*
 * The whole new policy is built before anything is bound; new queues are
 * bound with the union of the old and new kernel flags and the larger
 * copy range (the old policy may judge their first packets until the
 * switch; drop_old_needs() gives them the new ones after) and their workers
 * started before the switch: any failure leaves nothing newly bound and
 * the running options on the queues that stay.
 */
static int reload_with(struct nfqd *d, struct conf *nc, struct diags *dg)
{
	struct reload_plan *pl;
	struct policy *p = NULL, *old = registry_policy(&d->reg);
	uint16_t *nums = NULL;
	uint32_t kflags = 0, both = 0;
	struct conf_options both_opts = nc->opts;
	int n, rc;

	n = conf_queue_numbers(&nc->opts, &nums);
	if (n < 0) {
		diag_add(dg, DIAG_ERROR, NULL, "queues: cannot resolve queue numbers (%s)",
			  strerror(-n));
		return n;
	}
	pl = calloc(1, sizeof(*pl));	/* big: a table per queue slot */
	if (!pl) {
		free(nums);
		return -ENOMEM;
	}
	rc = plan_queues(d, nums, (unsigned)n, pl, dg);
	free(nums);
	if (rc == 0) {
		p = policy_build(nc, slot_count(pl->used), dg);
		if (p)
			policy_use_ifcache(p, d->ifc);
		rc = p ? policy_check_kflags(p, d->kflags_supported, dg) :
			 -EINVAL;
	}
	if (rc == 0) {
		kflags = policy_kernel_flags(p);
		both = kflags | (old ? policy_kernel_flags(old) : 0);
		if (d->conf->opts.copy_range > both_opts.copy_range)
			both_opts.copy_range = d->conf->opts.copy_range;
		rc = open_new(d, &both_opts, both, pl, dg);
	}
	if (rc == 0)
		rc = reconfigure_kept(&both_opts, both, pl, dg);
	if (rc == 0)
		rc = start_new(d, pl, dg);
	if (rc < 0) {
		revert_kept(d, pl);
		policy_free(p);
		abort_plan(pl);
		free(pl);
		return rc;
	}
	/* Kept queues take a new rcvbuf too (a new one has it already): a
	 * socket that overflows must be mendable without a restart. */
	for (unsigned i = 0; i < pl->next->n; i++)
		if (!pl->opened[i] && nc->opts.rcvbuf != d->conf->opts.rcvbuf)
			queue_set_rcvbuf(pl->next->q[i], nc->opts.rcvbuf);
	/* Only now: every queue has the kernel flags P needs. */
	policy_share_dynsets(p, old);
	old = registry_publish_policy(&d->reg, p);
	policy_carry_counters(p, old);
	policy_free(old);
	commit_plan(d, pl);
	free(pl);
	drop_old_needs(d, nc, kflags);
	return 0;
}

/* The queues that stay follow cpu-pin and queue-base (new ones were
 * bound with them). */
static void pin_queues(struct nfqd *d, const struct conf_options *o)
{
	struct registry *r = registry_get(&d->reg);

	for (unsigned i = 0; i < r->n; i++) {
		uint16_t num = queue_num(r->q[i]);
		int cpu = cpu_for_queue(o, num);
		int rc = queue_set_cpu(r->q[i], cpu);

		if (rc < 0 && cpu < 0)
			log_warn("queue %u: cannot let the worker run on every CPU (%s): it stays on CPU %d until a restart",
				 num, strerror(-rc), queue_cpu(r->q[i]));
		else if (rc < 0)
			log_warn("queue %u: cannot pin the worker to CPU %d (%s): it stays where it runs until a restart",
				 num, cpu, strerror(-rc));
	}
}

/* A daemon on the built-in config (the default file did not exist at
 * start) reloads it only while that file still does not exist. */
static bool reload_builtin(const struct nfqd *d)
{
	return d->builtin_config && access(d->config_path, F_OK) < 0 &&
	       errno == ENOENT;
}

int nfqd_reload(struct nfqd *d, struct diags *dg)
{
	struct conf *nc = NULL;
	char *text = NULL;
	size_t len = 0;
	char *sets;
	bool builtin = reload_builtin(d);
	int rc;

	notify_reloading(d);
	rc = load_conf(d->config_path, builtin, &nc, &text, &len, dg);
	if (rc == 0)
		rc = conf_check_env(nc, dg);	/* as a start checks it */
	if (rc == 0)
		rc = reload_with(d, nc, dg);
	if (rc < 0) {
		conf_free(nc);
		free(text);
		notify_reload_failed(d, dg, rc);
		return rc;
	}
	pin_queues(d, &nc->opts);
	if (text)
		fdstore_put_config(&d->fds, text, len);
	free(text);
	if (d->config_state == NFQD_CONF_LAST_GOOD)
		log_warn("config %s loaded: no longer running the last good config",
			 d->config_path);
	if (d->builtin_config && !builtin)
		log_info("config %s exists now: loaded instead of the built-in config",
			 d->config_path);
	d->builtin_config = builtin;
	d->config_state = d->builtin_config ? NFQD_CONF_BUILTIN :
					       NFQD_CONF_FILE;
	free(d->refused);
	d->refused = NULL;
	diag_log(dg, "");	/* only warnings: the reload goes ahead */
	conf_free(d->conf);
	d->conf = nc;
	d->generation++;
	if (!d->debug)
		log_set_level(nc->opts.log_level);
	stats_reconfigure(d->stats, &d->conf->opts);
	sets = policy_sets_summary(registry_policy(&d->reg));
	log_info("reloaded %s: generation %llu, %u queues%s%s",
		 d->builtin_config ? "built-in config" : d->config_path,
		 (unsigned long long)d->generation, registry_get(&d->reg)->n,
		 sets ? ", sets: " : "", sets ? sets : "");
	free(sets);
	notify_status(d, "READY=1\n");
	return 0;
}

void nfqd_counters_reset(struct nfqd *d)
{
	struct registry *r;

	rcu_read_lock();
	r = registry_get(&d->reg);
	for (unsigned i = 0; i < r->n; i++)
		queue_counters_reset(r->q[i]);
	if (registry_policy(&d->reg))
		policy_counters_reset(registry_policy(&d->reg));
	rcu_read_unlock();
}

/* ------------------------------------------------------------------ */
/* run and shut down                                                   */

static void log_final(const struct queue *q)
{
	struct queue_counters c;

	queue_counters_read(q, &c);
	log_info("queue %u: stopped: packets %llu accepted %llu dropped %llu other %llu batches %llu enobufs %llu errors %llu incomplete %llu orphans %llu",
		 queue_num(q), (unsigned long long)c.packets,
		 (unsigned long long)c.accepted, (unsigned long long)c.dropped,
		 (unsigned long long)c.other, (unsigned long long)c.batches,
		 (unsigned long long)c.enobufs, (unsigned long long)c.errors,
		 (unsigned long long)c.incomplete,
		 (unsigned long long)c.orphans);
}

static void shutdown_queues(struct nfqd *d)
{
	struct registry *r = registry_get(&d->reg);

	for (unsigned i = 0; i < r->n; i++)
		queue_request_stop(r->q[i]);
	for (unsigned i = 0; i < r->n; i++) {
		queue_stop(r->q[i]);
		log_final(r->q[i]);
	}
}

static void free_queues(struct nfqd *d)
{
	struct registry *r = registry_get(&d->reg);
	struct queue *qs[NFQD_MAX_QUEUES];
	unsigned n = r->n;

	memcpy(qs, r->q, n * sizeof(qs[0]));
	registry_publish(&d->reg, NULL);
	for (unsigned i = 0; i < n; i++)
		queue_free(qs[i]);
}

void nfqd_stop(struct nfqd *d)
{
	char *state;

	ev_timer_stop(d->loop, &d->log_timer);
	ev_timer_stop(d->loop, &d->sweep_timer);
	shutdown_queues(d);
	free_queues(d);
	log_rings_flush();
	state = d->conf ? setstate_path(&d->conf->opts) : NULL;
	setstate_save(registry_policy(&d->reg), state);
	free(state);
	policy_free(registry_publish_policy(&d->reg, NULL));
	ifcache_free(d->ifc);
	d->ifc = NULL;
	conf_free(d->conf);
	d->conf = NULL;
	free(d->refused);
	d->refused = NULL;
	free(d->unit);
	d->unit = NULL;
}

void nfqd_run(struct nfqd *d)
{
	ev_run(d->loop, 0);
	sd_notify(0, "STOPPING=1");
}

/* ------------------------------------------------------------------ */
/* the control commands' view of the daemon (ctl_cmd.h)                */

static void ctl_status_of(void *ctx, struct ctl_status *out)
{
	const struct nfqd *d = ctx;
	double up = ev_now(d->loop) - d->start_time;

	out->pid = d->pid;
	out->uptime = up > 0 ? up : 0;
	out->config_path = d->config_path;
	out->builtin_config = d->builtin_config;
	out->generation = d->generation;
	out->config_state = d->config_state == NFQD_CONF_LAST_GOOD ?
			    "last-good" : d->builtin_config ? "built-in" :
			    "file";
	out->refused = d->refused;
}

/* The control protocol carries the errors as lines. */
static int ctl_reload(void *ctx, char **errors)
{
	struct diags dg = { 0 };
	int rc = nfqd_reload(ctx, &dg);

	/* A refused reload reports its errors; one that went ahead, its
	 * warnings. */
	*errors = diag_join(&dg, rc < 0 ? DIAG_ERROR : DIAG_WARNING);
	diag_free(&dg);
	return rc;
}

static void ctl_counters_reset(void *ctx)
{
	nfqd_counters_reset(ctx);
}

void nfqd_ctl_ops(struct nfqd *d, struct ctl_ops *ops)
{
	ops->ctx = d;
	ops->root = &d->reg;
	ops->status = ctl_status_of;
	ops->reload = ctl_reload;
	ops->counters_reset = ctl_counters_reset;
}
