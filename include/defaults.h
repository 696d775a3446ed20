/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * defaults.h - the few constants every part of nfqd shares: default paths
 * and the queue limit. Nothing here depends on the config's structure.
 */
#ifndef NFQD_DEFAULTS_H
#define NFQD_DEFAULTS_H

#ifndef SYSCONFDIR
#define SYSCONFDIR		"/etc"	/* configure's --sysconfdir */
#endif
#define NFQD_DEFAULT_CONFIG	SYSCONFDIR "/nfqd/nfqd.conf"
#define NFQD_DEFAULT_STATS	"/run/nfqd/stats"
#define NFQD_DEFAULT_SOCKET	"/run/nfqd/nfqd.sock"
#define NFQD_MAX_QUEUES		1024	/* most queues one daemon binds */
#define NFQD_MAX_SET_SIZE	(16u << 20)	/* most runtime elements of a set */

#endif
