/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.c - the /proc-style stats file (nfqd(8), STATS FILE), rewritten whole
 * by a timer on the main loop, and the reader of the kernel's
 * /proc/net/netfilter/nfnetlink_queue shared with the control socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ev.h>
#include <urcu-qsbr.h>

#include "conf.h"
#include "log.h"
#include "queue.h"
#include "registry.h"
#include "stats.h"

#define KQUEUE_PROC	"/proc/net/netfilter/nfnetlink_queue"
#define STATS_LINE_MAX	384	/* 9 u32, 10 u64, an int: < 330 bytes */

struct stats {
	struct ev_loop *loop;
	const struct registry_root *root;	/* the queues to report */
	ev_timer timer;
	char *path;		/* the stats file */
	char *tmpl;		/* DIR/.NAME.XXXXXX: the temporary files */
	uint32_t interval;
	bool failing;		/* log a failure once, not per interval */
};

/*
 * The kernel's file is root-only (0440): it is opened once, while nfqd is
 * still root, and rewound for every read, so the stats keep their kernel
 * columns after the switch to option "user".
 */
static FILE *kqueue_file;

static FILE *kqueue_open(void)
{
	if (kqueue_file) {
		rewind(kqueue_file);
		return kqueue_file;
	}
	kqueue_file = fopen(KQUEUE_PROC, "re");
	return kqueue_file;
}

/*
 * Read every line of the kernel's file. Returns the count with *out
 * malloc'd, or a negative errno. No nfnetlink_queue module loaded means
 * no file: that is zero queues, not an error.
 */
static int kernel_lines_read(struct kqueue_line **out)
{
	struct kqueue_line *v = NULL, *nv, k;
	size_t n = 0, cap = 0;
	char line[256];
	FILE *f;

	*out = NULL;
	f = kqueue_open();
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %u %u %u %u %u %u %u %d", &k.queue_num,
			   &k.peer_portid, &k.queue_total, &k.copy_mode,
			   &k.copy_range, &k.queue_dropped, &k.user_dropped,
			   &k.id_sequence, &k.one) != 9)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = k;
	}
	*out = v;
	return (int)n;
}

int stats_kernel_line(uint16_t num, struct kqueue_line *out)
{
	struct kqueue_line *v;
	int n, ret = -ENOENT;

	n = kernel_lines_read(&v);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (v[i].queue_num == num) {
			*out = v[i];
			ret = 0;
			break;
		}
	}
	free(v);
	return ret;
}

/* Copy the queue numbers, CPUs and counters out of the RCU table. */
static int snapshot_queues(const struct registry_root *root,
			   struct stats_row **out)
{
	struct stats_row *rows;
	struct registry *r;
	unsigned n;

	rcu_read_lock();
	r = registry_get(root);
	n = r ? r->n : 0;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		rcu_read_unlock();
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		rows[i].queue = queue_num(r->q[i]);
		rows[i].cpu = queue_cpu(r->q[i]);
		queue_counters_read(r->q[i], &rows[i].c);
	}
	rcu_read_unlock();
	*out = rows;
	return (int)n;
}

int stats_snapshot(const struct registry_root *root, struct stats_row **out)
{
	struct kqueue_line *k;
	struct stats_row *rows;
	int n, nk;

	n = snapshot_queues(root, &rows);
	if (n < 0)
		return n;
	/* The kernel's file is read outside the read-side section. */
	nk = kernel_lines_read(&k);
	if (nk < 0) {
		free(rows);
		return nk;
	}
	for (int i = 0; i < n; i++) {
		rows[i].k.queue_num = rows[i].queue;
		rows[i].k.one = 1;
		for (int j = 0; j < nk; j++) {
			if (k[j].queue_num == rows[i].queue) {
				rows[i].k = k[j];
				break;
			}
		}
	}
	free(k);
	*out = rows;
	return n;
}

int stats_format_line(const struct stats_row *w, char *buf, size_t size)
{
	const struct kqueue_line *k = &w->k;
	const struct queue_counters *c = &w->c;

	/* Columns 1-9 in the kernel's own format, so its readers work. */
	return snprintf(buf, size,
			"%5u %6u %5u %1u %5u %5u %5u %8u %2d"
			" %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			k->queue_num, k->peer_portid, k->queue_total,
			k->copy_mode, k->copy_range, k->queue_dropped,
			k->user_dropped, k->id_sequence, k->one,
			c->packets, c->bytes, c->accepted, c->dropped,
			c->other, c->batches, c->enobufs, c->errors, w->cpu,
			c->incomplete, c->orphans, c->flows,
			c->flows_pending, c->flow_evictions, c->names,
			c->names_incomplete);
}

int stats_mkdir_parent(const char *path)
{
	char *dir = strdup(path);
	char *slash;
	int ret = 0;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		goto out;
	*slash = '\0';
	for (char *p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			ret = -errno;
			goto out;
		}
		*p = c;
		if (!c)
			break;
	}
out:
	free(dir);
	return ret;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Format every row into one malloc'd buffer. Returns its length or -errno. */
static ssize_t stats_render(const struct registry_root *root, char **out)
{
	struct stats_row *rows;
	size_t len = 0;
	char *buf;
	int n;

	n = stats_snapshot(root, &rows);
	if (n < 0)
		return n;
	buf = malloc((size_t)n * STATS_LINE_MAX + 1);
	if (!buf) {
		free(rows);
		return -ENOMEM;
	}
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		len += (size_t)stats_format_line(&rows[i], buf + len,
						 STATS_LINE_MAX);
	free(rows);
	*out = buf;
	return (ssize_t)len;
}

/*
 * A new temporary file next to the stats file, named unpredictably and
 * created exclusively (mkostemp: O_CREAT | O_EXCL, which never follows a
 * symbolic link): in a directory others may write to, nobody can plant a
 * link that makes nfqd overwrite another file. TMP receives its name.
 */
static int create_tmp(const struct stats *s, char *tmp, size_t size)
{
	int fd;

	snprintf(tmp, size, "%s", s->tmpl);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* Someone removed the directory (tmpfs /run cleaned). */
		stats_mkdir_parent(s->path);
		snprintf(tmp, size, "%s", s->tmpl);
		fd = mkostemp(tmp, O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	/* mkostemp creates 0600; the stats are for every reader. */
	if (fchmod(fd, 0644) < 0) {
		int err = -errno;

		close(fd);
		unlink(tmp);
		return err;
	}
	return fd;
}

/* Write a temporary file, then rename it over PATH: readers see the old
 * file or the new one. */
static int stats_write_file(struct stats *s)
{
	size_t size = strlen(s->tmpl) + 1;
	char *buf, *tmp;
	ssize_t len;
	int fd, ret;

	len = stats_render(s->root, &buf);
	if (len < 0)
		return (int)len;
	tmp = malloc(size);
	if (!tmp) {
		free(buf);
		return -ENOMEM;
	}
	fd = create_tmp(s, tmp, size);
	if (fd < 0) {
		free(buf);
		free(tmp);
		return fd;
	}
	ret = write_all(fd, buf, (size_t)len);
	free(buf);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, s->path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

static void stats_update(struct stats *s)
{
	int ret = stats_write_file(s);

	if (ret < 0 && !s->failing)
		log_err("stats: cannot write %s (%s)", s->path, strerror(-ret));
	else if (ret == 0 && s->failing)
		log_info("stats: writing %s again", s->path);
	s->failing = ret < 0;
}

static void stats_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	stats_update(w->data);
}

static int stats_set_path(struct stats *s, const char *path)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) + 1 : 0;
	char *p, *t = NULL;

	p = strdup(path);
	if (asprintf(&t, "%.*s.%s.XXXXXX", dirlen, path,
		     slash ? slash + 1 : path) < 0)
		t = NULL;
	if (!p || !t) {
		free(p);
		free(t);
		return -ENOMEM;
	}
	free(s->path);
	free(s->tmpl);
	s->path = p;
	s->tmpl = t;
	return 0;
}

static const char *opt_path(const struct conf_options *o)
{
	const char *p = o->stats_file;

	return p && *p ? p : NFQD_DEFAULT_STATS;
}

static uint32_t opt_interval(const struct conf_options *o)
{
	uint32_t iv = o->stats_interval;

	return iv ? iv : 1;
}

int stats_start(struct ev_loop *loop, const struct conf_options *o,
		const struct registry_root *root, struct stats **out)
{
	struct stats *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->loop = loop;
	s->root = root;
	ret = stats_set_path(s, opt_path(o));
	if (ret == 0)
		ret = stats_mkdir_parent(s->path);
	if (ret < 0) {
		log_err("stats: cannot create the directory of %s (%s)",
			opt_path(o), strerror(-ret));
		free(s->path);
		free(s->tmpl);
		free(s);
		return ret;
	}
	s->interval = opt_interval(o);
	ev_timer_init(&s->timer, stats_timer_cb, s->interval, s->interval);
	s->timer.data = s;
	ev_timer_start(loop, &s->timer);
	stats_update(s);
	*out = s;
	return 0;
}

void stats_reconfigure(struct stats *s, const struct conf_options *o)
{
	const char *path;
	uint32_t iv;

	if (!s)
		return;
	path = opt_path(o);
	if (strcmp(path, s->path) != 0) {
		char *old = strdup(s->path);

		if (stats_set_path(s, path) == 0 && old) {
			unlink(old);
			log_info("stats: now writing %s", s->path);
		}
		free(old);
		stats_mkdir_parent(s->path);
	}
	iv = opt_interval(o);
	if (iv != s->interval) {
		s->interval = iv;
		ev_timer_stop(s->loop, &s->timer);
		ev_timer_set(&s->timer, iv, iv);
		ev_timer_start(s->loop, &s->timer);
	}
	stats_update(s);
}

void stats_stop(struct stats *s)
{
	if (!s)
		return;
	ev_timer_stop(s->loop, &s->timer);
	unlink(s->path);
	free(s->path);
	free(s->tmpl);
	free(s);
	if (kqueue_file)
		fclose(kqueue_file);
	kqueue_file = NULL;
}
