/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * svcjob.h - what the service manager is doing to this service when it
 * sends SIGTERM: restarting it (the queue sockets in its file descriptor
 * store are passed to the next process) or stopping it for good (the
 * store is emptied, and whatever the kernel still queues is lost unless
 * nfqd drains it first). Asked over systemd's D-Bus API.
 */
#ifndef NFQD_SVCJOB_H
#define NFQD_SVCJOB_H

#include <stddef.h>

enum svc_stop {
	SVC_STOP_FINAL,		/* a stop job, or no job: the service ends */
	SVC_STOP_RESTART,	/* a restart job, and the store holds the sockets */
	SVC_STOP_UNKNOWN,	/* the manager could not be asked */
	SVC_STOP_NO_UNIT,	/* not in a systemd unit: another manager */
};

/*
 * The systemd unit this process runs in (malloc'd), or NULL. At start,
 * while root: after option user switches to another user, the process
 * is not dumpable and with ProtectProc=invisible its own /proc entry,
 * where the unit is read from, is hidden from it.
 */
char *svcjob_unit(void);

/*
 * Ask systemd (its private socket when root, else the system bus) for
 * UNIT's running job and its file descriptor store (UNIT NULL: not a
 * systemd unit, SVC_STOP_NO_UNIT).
 * RESTART only when the job is a restart and the store holds at least
 * NSTORED descriptors (FileDescriptorStoreMax= set, FDSTORE= honoured).
 * WHY gets one line saying what was found. Main thread; blocks for at
 * most two seconds.
 */
enum svc_stop svcjob_stop_kind(const char *unit, unsigned nstored, char *why,
			       size_t size);

#endif
