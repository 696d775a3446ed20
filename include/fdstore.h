/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fdstore.h - the queue sockets kept in systemd's file descriptor store, so
 * that a queue's binding (which belongs to its netlink socket) outlives a
 * restart. Without systemd (no NOTIFY_SOCKET) every call is a no-op.
 */
#ifndef NFQD_FDSTORE_H
#define NFQD_FDSTORE_H

#include <stdbool.h>
#include <stdint.h>

struct queue;
struct registry;

/* A socket systemd passed at start. */
struct stored_fd {
	int fd;			/* -1 once taken or closed */
	int num;		/* queue, from FDNAME=nfq-<num>; -1 if not ours */
};

struct fdstore {
	bool under_systemd;	/* NOTIFY_SOCKET at start */
	struct stored_fd *fds;	/* passed at start, until fdstore_close_rest */
	unsigned n;
	int config_fd;		/* FDNAME=config: the last config that
				 * loaded (a memfd), or -1 */
	uint16_t passed[64];	/* queues whose sockets were passed (the
				 * first 64), for fdstore_report_release */
	unsigned n_passed;
};

/* Note whether systemd runs us, and take the sockets it passed. */
void fdstore_collect(struct fdstore *fs);

/* The stored socket of queue NUM (now the caller's), or -1. */
int fdstore_take(struct fdstore *fs, uint16_t num);

/* Keep Q's socket in systemd's store: it outlives this process. */
void fdstore_put(const struct fdstore *fs, struct queue *q);

/* Q leaves the config: systemd closes its copy, Q's stop unbinds. */
void fdstore_remove(const struct fdstore *fs, struct queue *q);

/*
 * The text of the last config that loaded, as kept in the store
 * (FDNAME=config): *BUF malloc'd. 0, -ENOENT when systemd passed none,
 * or a negative errno.
 */
int fdstore_config_text(const struct fdstore *fs, char **buf, size_t *len);

/* Keep TEXT (LEN bytes), the config that just loaded, in the store as a
 * memfd named "config", replacing the one kept before. */
void fdstore_put_config(struct fdstore *fs, const char *text, size_t len);

/* nfqd exits without serving: log at priority 2, for each queue whose
 * socket systemd passed, what the kernel still queues there (lost when
 * systemd releases the store) and that the queue is no longer judged. */
void fdstore_report_release(const struct fdstore *fs);

/* Close the passed sockets no queue of R took (which unbinds their
 * queues once systemd's copies go too), and forget the rest. */
void fdstore_close_rest(struct fdstore *fs, const struct registry *r);

#endif
