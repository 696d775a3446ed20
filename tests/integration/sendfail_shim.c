/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sendfail_shim.c - LD_PRELOAD library for verdict_sendfail.sh: makes the
 * verdict sends of nfqd's worker threads (named "nfqd-q*") fail, the way a
 * kernel short of memory or a too small socket buffer would, without
 * touching anything else. A send is a verdict send when its first netlink
 * message is NFQNL_MSG_VERDICT or NFQNL_MSG_VERDICT_BATCH.
 *
 * Environment:
 *   SENDFAIL_PERIOD_MS=P SENDFAIL_BURST_MS=B  fail every verdict send
 *       made during the first B ms of every P ms (monotonic clock)
 *   SENDFAIL_ERRNO=N                    with this errno (default ENOBUFS)
 *   SENDFAIL_ABOVE=BYTES                EMSGSIZE for larger verdict sends
 * At exit it prints "sendfail: THREAD calls=N failed=N".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

struct tstat {
	char name[16];
	unsigned long calls, failed;
};

static struct tstat stats[MAX_THREADS];
static int next_slot;
static __thread int slot = -1;	/* -2: not a worker */
static long period, burst, above;
static int fail_errno = ENOBUFS;

static int worker_slot(void)
{
	char name[16];

	if (slot == -1) {
		if (pthread_getname_np(pthread_self(), name, sizeof(name)) ||
		    strncmp(name, "nfqd-q", 6) != 0)
			return -1;	/* may be named later: ask again */
		slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
		if (slot >= MAX_THREADS)
			slot = -2;
		else
			memcpy(stats[slot].name, name, sizeof(name));
	}
	return slot;
}

static bool is_verdict(const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int type;

	if (len < sizeof(*nlh) ||
	    NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_QUEUE)
		return false;
	type = NFNL_MSG_TYPE(nlh->nlmsg_type);
	return type == NFQNL_MSG_VERDICT || type == NFQNL_MSG_VERDICT_BATCH;
}

static bool in_burst(void)
{
	struct timespec ts;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ms = ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	return ms % period < burst;
}

/* 0: let it through; else the errno to fail with. */
static int should_fail(const void *buf, size_t len)
{
	int s;

	if (!is_verdict(buf, len) || (s = worker_slot()) < 0)
		return 0;
	stats[s].calls++;
	if (above && (long)len > above) {
		stats[s].failed++;
		return EMSGSIZE;
	}
	if (period && burst && in_burst()) {
		stats[s].failed++;
		return fail_errno;
	}
	return 0;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *to, socklen_t tolen)
{
	static ssize_t (*real)(int, const void *, size_t, int,
			       const struct sockaddr *, socklen_t);
	int err = should_fail(buf, len);

	if (err) {
		errno = err;
		return -1;
	}
	if (!real)
		real = dlsym(RTLD_NEXT, "sendto");
	return real(fd, buf, len, flags, to, tolen);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);
	size_t len = 0;
	int err = 0;

	for (size_t i = 0; i < msg->msg_iovlen; i++)
		len += msg->msg_iov[i].iov_len;
	if (msg->msg_iovlen >= 1)
		err = should_fail(msg->msg_iov[0].iov_base, len);
	if (err) {
		errno = err;
		return -1;
	}
	if (!real)
		real = dlsym(RTLD_NEXT, "sendmsg");
	return real(fd, msg, flags);
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *v;

	if ((v = getenv("SENDFAIL_PERIOD_MS")))
		period = atol(v);
	if ((v = getenv("SENDFAIL_BURST_MS")))
		burst = atol(v);
	if ((v = getenv("SENDFAIL_ABOVE")))
		above = atol(v);
	if ((v = getenv("SENDFAIL_ERRNO")))
		fail_errno = atoi(v);
}

__attribute__((destructor)) static void shim_report(void)
{
	char line[128];

	for (int i = 0; i < next_slot && i < MAX_THREADS; i++) {
		int n = snprintf(line, sizeof(line),
				 "sendfail: %s calls=%lu failed=%lu\n",
				 stats[i].name, stats[i].calls,
				 stats[i].failed);

		if (write(STDERR_FILENO, line, (size_t)n) < 0)
			break;
	}
}
