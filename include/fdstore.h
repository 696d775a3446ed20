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
};

/* Note whether systemd runs us, and take the sockets it passed. */
void fdstore_collect(struct fdstore *fs);

/* The stored socket of queue NUM (now the caller's), or -1. */
int fdstore_take(struct fdstore *fs, uint16_t num);

/* Keep Q's socket in systemd's store: it outlives this process. */
void fdstore_put(const struct fdstore *fs, struct queue *q);

/* Q leaves the config: systemd closes its copy, Q's stop unbinds. */
void fdstore_remove(const struct fdstore *fs, struct queue *q);

/* Close the passed sockets no queue of R took (which unbinds their
 * queues once systemd's copies go too), and forget the rest. */
void fdstore_close_rest(struct fdstore *fs, const struct registry *r);

#endif
