/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fdstore.c - the queue sockets kept in systemd's file descriptor store:
 * collected at start (LISTEN_FDS, FDNAME=nfq-<num>), handed to the queues
 * that adopt them, stored after every bind, removed when a queue goes.
 * Main thread only; the daemon owns the one struct fdstore.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "fdstore.h"
#include "log.h"
#include "queue.h"
#include "registry.h"
#include "stats.h"

static int stored_name_num(const char *name)
{
	char *end;
	unsigned long v;

	if (!name || strncmp(name, "nfq-", 4) != 0 || !name[4])
		return -1;
	v = strtoul(name + 4, &end, 10);
	return *end || v > UINT16_MAX ? -1 : (int)v;
}

void fdstore_collect(struct fdstore *fs)
{
	char **names = NULL;
	int n = sd_listen_fds_with_names(1, &names);

	fs->under_systemd = getenv("NOTIFY_SOCKET") != NULL;
	fs->config_fd = -1;
	if (n > 0)
		fs->fds = calloc((size_t)n, sizeof(*fs->fds));
	for (int i = 0; fs->fds && i < n; i++) {
		const char *name = names ? names[i] : NULL;

		fs->fds[i].fd = SD_LISTEN_FDS_START + i;
		fs->fds[i].num = stored_name_num(name);
		if (fs->fds[i].num >= 0 && fs->n_passed < 64)
			fs->passed[fs->n_passed++] = (uint16_t)fs->fds[i].num;
		if (name && strcmp(name, "config") == 0 && fs->config_fd < 0) {
			fs->config_fd = fs->fds[i].fd;
			fs->fds[i].fd = -1;
		}
	}
	fs->n = fs->fds ? (unsigned)n : 0;
	for (int i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
	if (n > 0)
		log_info("systemd passed %d stored sockets", n);
}

/* The stored socket of queue NUM (now the caller's), or -1. */
int fdstore_take(struct fdstore *fs, uint16_t num)
{
	for (unsigned i = 0; i < fs->n; i++)
		if (fs->fds[i].fd >= 0 && fs->fds[i].num == (int)num) {
			int fd = fs->fds[i].fd;

			fs->fds[i].fd = -1;
			return fd;
		}
	return -1;
}

static void fdstore_notify(const char *what, uint16_t num, int *fd)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "%sFDNAME=nfq-%u", what, num);
	if (sd_pid_notify_with_fds(0, 0, msg, fd, fd ? 1 : 0) < 0)
		log_warn("queue %u: systemd fd store: notify failed", num);
}

/* Keep Q's socket in systemd's store: it outlives this process. */
void fdstore_put(const struct fdstore *fs, struct queue *q)
{
	int fd = queue_fd(q);

	if (!fs->under_systemd)
		return;
	/* FDPOLL=0: systemd must not drop it on POLLERR. */
	fdstore_notify("FDSTORE=1\nFDPOLL=0\n", queue_num(q), &fd);
	queue_keep_bound(q, true);
}

/* Q leaves the config: systemd closes its copy, Q's stop unbinds. */
void fdstore_remove(const struct fdstore *fs, struct queue *q)
{
	if (fs->under_systemd)
		fdstore_notify("FDSTOREREMOVE=1\n", queue_num(q), NULL);
	queue_keep_bound(q, false);
}


int fdstore_config_text(const struct fdstore *fs, char **buf, size_t *len)
{
	struct stat st;
	char *b;
	ssize_t n;

	if (fs->config_fd < 0)
		return -ENOENT;
	if (fstat(fs->config_fd, &st) < 0)
		return -errno;
	b = malloc((size_t)st.st_size + 1);
	if (!b)
		return -ENOMEM;
	n = pread(fs->config_fd, b, (size_t)st.st_size, 0);
	if (n < 0) {
		int err = -errno;

		free(b);
		return err;
	}
	*buf = b;
	*len = (size_t)n;
	return 0;
}

static int write_all(int fd, const char *text, size_t len)
{
	while (len) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

void fdstore_put_config(struct fdstore *fs, const char *text, size_t len)
{
	int fd, rc;

	if (!fs->under_systemd)
		return;
	fd = memfd_create("nfqd-last-good-config",
			  MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		log_warn("config: cannot keep it in systemd's store: memfd_create failed (%s)",
			 strerror(errno));
		return;
	}
	rc = write_all(fd, text, len);
	/* Sealed: nobody changes what the next start falls back to. */
	if (rc == 0)
		fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
			  F_SEAL_WRITE | F_SEAL_SEAL);
	if (rc == 0)
		sd_pid_notify_with_fds(0, 0, "FDSTOREREMOVE=1\nFDNAME=config",
				       NULL, 0);
	if (rc == 0 &&
	    sd_pid_notify_with_fds(0, 0, "FDSTORE=1\nFDPOLL=0\nFDNAME=config",
				   &fd, 1) < 0)
		rc = -EIO;
	if (rc < 0)
		log_warn("config: cannot keep it in systemd's store (%s)",
			 strerror(-rc));
	close(fd);
	if (fs->config_fd >= 0)
		close(fs->config_fd);
	fs->config_fd = -1;
}

void fdstore_report_release(const struct fdstore *fs)
{
	for (unsigned i = 0; i < fs->n_passed; i++) {
		struct kqueue_line k = { 0 };
		uint16_t num = fs->passed[i];

		if (stats_kernel_line(num, &k) < 0)
			continue;	/* not bound: nothing to lose */
		log_crit("queue %u: released: nfqd exits with %u packets queued (queue_dropped %u, id_sequence %u): the kernel drops them when systemd empties its store (or accepts them with --queue-bypass), and packets the rules send to queue %u are no longer judged",
			 num, k.queue_total, k.queue_dropped, k.id_sequence,
			 num);
	}
}

/* Stored sockets no queue of R took: close them (which unbinds their
 * queues once systemd's copies go too). */
void fdstore_close_rest(struct fdstore *fs, const struct registry *r)
{
	for (unsigned i = 0; i < fs->n; i++) {
		struct stored_fd *s = &fs->fds[i];
		struct queue *kept;

		if (s->fd < 0)
			continue;
		close(s->fd);
		s->fd = -1;
		if (s->num < 0) {
			log_warn("systemd passed a socket nfqd did not store: closed");
			continue;
		}
		kept = NULL;
		for (unsigned j = 0; j < r->n; j++)
			if (queue_num(r->q[j]) == s->num)
				kept = r->q[j];
		if (kept) {
			log_info("queue %u: a second stored socket: closed",
				 s->num);
		} else {
			struct kqueue_line k = { 0 };

			stats_kernel_line((uint16_t)s->num, &k);
			log_crit("queue %u: not in the config: its stored socket is closed, which releases the queue: the kernel drops the %u packets it holds (or accepts them with --queue-bypass), and packets rules still send to queue %u are no longer judged",
				 s->num, k.queue_total, s->num);
		}
		if (!fs->under_systemd)
			continue;
		fdstore_notify("FDSTOREREMOVE=1\n", (uint16_t)s->num, NULL);
		/* That removed every socket of the name: store ours again. */
		if (kept)
			fdstore_put(fs, kept);
	}
	free(fs->fds);
	fs->fds = NULL;
	fs->n = 0;
}
