/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ifcache.c - ifindex -> name from rtnetlink (a dump at start, then link
 * notifications) on the main loop; published as an immutable hash table
 * with RCU (QSBR) so workers read it without locks.
 */
#include <errno.h>
#include <ev.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu-qsbr.h>

#include "ifcache.h"
#include "log.h"
#include "rcu_publish.h"

#define NL_BUF_SIZE	32768	/* as libmnl's MNL_SOCKET_DUMP_SIZE */

struct ifent {
	uint32_t ifindex;		/* 0: empty slot */
	char name[IFNAMSIZ];
};

/* What readers see: never changed once published. */
struct iftab {
	unsigned mask;
	struct ifent e[];
};

struct ifcache {
	struct iftab *published;	/* what readers see (RCU) */
	/* The main thread's working copy, rebuilt into a table on change. */
	struct ifent *links;
	unsigned n_links, cap_links;
	struct mnl_socket *mon;		/* link notifications */
	struct ev_io mon_io;
	struct ev_loop *mon_loop;
	int mon_fd;			/* -1: nothing watched */
	bool resync_owed;		/* notifications lost, or a dump failed */
	/* Set while notifications read from mon are not yet published (or
	 * a resync is owed): the names may be stale. */
	atomic_bool applying;
};

/*
 * Renames (issue 17): the kernel queues a link notification on mon before
 * it acknowledges the change to whoever made it, so a packet that the
 * kernel queued after the acknowledgement reaches a worker only after the
 * notification reached mon. A worker therefore checks, once per receive
 * batch and only when a rule asks for a name, that mon holds nothing
 * unread and that the main thread is not between reading and publishing;
 * otherwise every name is unknown (INCOMPLETE) for that batch.
 */
static _Thread_local unsigned long batch_gen, checked_gen;
static _Thread_local bool batch_sure = true;	/* unchecked: trusted */

static unsigned slot_of(uint32_t ifindex, unsigned mask)
{
	return (unsigned)((ifindex * 0x9e3779b1u) >> 7) & mask;
}

static void publish(struct ifcache *c)
{
	unsigned size = 16;
	struct iftab *t, *old;

	while (size < c->n_links * 2)
		size *= 2;
	t = calloc(1, sizeof(*t) + size * sizeof(t->e[0]));
	if (!t) {
		log_err("ifcache: out of memory; interface names may be stale");
		return;
	}
	t->mask = size - 1;
	for (unsigned i = 0; i < c->n_links; i++) {
		unsigned s = slot_of(c->links[i].ifindex, t->mask);

		while (t->e[s].ifindex)
			s = (s + 1) & t->mask;
		t->e[s] = c->links[i];
	}
	old = rcu_publish_ptr(&c->published, t);
	if (old) {
		synchronize_rcu();
		free(old);
	}
}

/* Set (NAME) or remove (NULL) IFINDEX in the working copy. */
static bool update(struct ifcache *c, uint32_t ifindex, const char *name)
{
	unsigned i;

	for (i = 0; i < c->n_links; i++)
		if (c->links[i].ifindex == ifindex)
			break;
	if (!name) {
		if (i == c->n_links)
			return false;
		c->links[i] = c->links[--c->n_links];
		return true;
	}
	if (i == c->n_links) {
		if (c->n_links == c->cap_links) {
			unsigned nc = c->cap_links ? c->cap_links * 2 : 32;
			struct ifent *n = realloc(c->links, nc * sizeof(*n));

			if (!n)
				return false;
			c->links = n;
			c->cap_links = nc;
		}
		c->n_links++;
	} else if (!strncmp(c->links[i].name, name, IFNAMSIZ)) {
		return false;
	}
	c->links[i].ifindex = ifindex;
	strncpy(c->links[i].name, name, IFNAMSIZ - 1);
	c->links[i].name[IFNAMSIZ - 1] = '\0';
	return true;
}

int ifcache_set(struct ifcache *c, uint32_t ifindex, const char *name)
{
	if (!ifindex)
		return -EINVAL;
	if (update(c, ifindex, name) || !c->published)
		publish(c);
	return 0;
}

void ifcache_batch_begin(void)
{
	batch_gen++;
}

/* No notification read or waiting that the published table lacks. */
static bool names_current(const struct ifcache *c)
{
	struct pollfd pfd = { .fd = c->mon_fd, .events = POLLIN };

	if (c->mon_fd < 0)
		return true;
	/* Waiting (or an overrun, POLLERR): not applied yet. */
	if (poll(&pfd, 1, 0) != 0)
		return false;
	/* Read by the main thread after it set the flag: published when
	 * the flag is clear again. */
	atomic_thread_fence(memory_order_seq_cst);
	return !atomic_load_explicit(&c->applying, memory_order_acquire);
}

/* Once per batch: a system call only for batches that read a name. */
static bool names_sure(const struct ifcache *c)
{
	if (checked_gen != batch_gen) {
		checked_gen = batch_gen;
		batch_sure = names_current(c);
	}
	return batch_sure;
}

bool ifcache_name(const struct ifcache *c, uint32_t ifindex, char *name)
{
	struct iftab *t;
	bool found = false;

	if (!c || !ifindex || !names_sure(c))
		return false;
	rcu_read_lock();
	t = rcu_read_ptr(c->published);
	if (t) {
		for (unsigned s = slot_of(ifindex, t->mask); t->e[s].ifindex;
		     s = (s + 1) & t->mask) {
			if (t->e[s].ifindex == ifindex) {
				memcpy(name, t->e[s].name, IFNAMSIZ);
				found = true;
				break;
			}
		}
	}
	rcu_read_unlock();
	return found;
}

/* One RTM_NEWLINK / RTM_DELLINK: a change to the working copy. */
/* What link_cb works on. */
struct link_walk {
	struct ifcache *c;
	bool changed;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	const char *name = NULL;
	struct link_walk *w = data;

	if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifm) ||
	    ifm->ifi_index <= 0)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifm)) {
		if (mnl_attr_get_type(a) == IFLA_IFNAME &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			name = mnl_attr_get_str(a);
	}
	if (nlh->nlmsg_type == RTM_DELLINK)
		w->changed |= update(w->c, (uint32_t)ifm->ifi_index, NULL);
	else if (name)
		w->changed |= update(w->c, (uint32_t)ifm->ifi_index, name);
	return MNL_CB_OK;
}

/* Read every link with a blocking dump on a socket of its own. */
static int dump_links(struct ifcache *c)
{
	char buf[NL_BUF_SIZE];
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtgenmsg *rt;
	uint32_t seq = (uint32_t)time(NULL), portid;
	struct link_walk w = { .c = c };
	int ret = -EIO;
	ssize_t n;

	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto out_errno;
	portid = mnl_socket_get_portid(nl);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	rt = mnl_nlmsg_put_extra_header(nlh, sizeof(*rt));
	rt->rtgen_family = AF_UNSPEC;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		goto out_errno;
	c->n_links = 0;
	while ((n = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, link_cb, &w);
		if (ret <= MNL_CB_STOP)
			break;
	}
	if (n < 0 || ret < 0)
		goto out_errno;
	mnl_socket_close(nl);
	publish(c);
	return 0;
out_errno:
	ret = errno ? -errno : -EIO;
	mnl_socket_close(nl);
	return ret;
}

static void mon_cb(struct ev_loop *loop, struct ev_io *io, int revents)
{
	struct ifcache *c = io->data;
	struct link_walk w = { .c = c };
	char buf[NL_BUF_SIZE];
	bool overrun = false;
	ssize_t n;

	/* Before the first read: a worker that finds mon empty then sees
	 * the flag set until the table is published. */
	atomic_store_explicit(&c->applying, true, memory_order_seq_cst);
	for (;;) {
		n = mnl_socket_recvfrom(c->mon, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n < 0) {
			/* An overrun is remembered whatever the reads after
			 * it say (the loop ends on EAGAIN). */
			if (errno == ENOBUFS)
				overrun = true;
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			break;
		}
		mnl_cb_run(buf, (size_t)n, 0, 0, link_cb, &w);
	}
	if (overrun)
		log_warn("ifcache: link notifications lost (rtnetlink socket overrun): reading every link again");
	if (overrun || c->resync_owed) {
		/* Missed notifications: the only cure is a new dump. */
		int err = dump_links(c);

		c->resync_owed = err != 0;
		if (err)
			log_warn("ifcache: link dump failed (%s): interface "
				 "names are incomplete until the next link "
				 "change reads every link again",
				 strerror(-err));
	} else if (w.changed) {
		publish(c);
	}
	atomic_store_explicit(&c->applying, c->resync_owed,
			      memory_order_release);
}

struct ifcache *ifcache_new(void)
{
	struct ifcache *c = calloc(1, sizeof(struct ifcache));

	if (c)
		c->mon_fd = -1;
	return c;
}

int ifcache_start(struct ev_loop *loop, struct ifcache **out)
{
	struct ifcache *c = ifcache_new();
	int err;

	if (!c)
		return -ENOMEM;
	c->mon = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!c->mon) {
		err = -errno;
		goto fail;
	}
	/* Subscribe before the dump so no change falls between the two. */
	if (mnl_socket_bind(c->mon, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto fail;
	}
	err = dump_links(c);
	if (err)
		goto fail;
	c->mon_loop = loop;
	c->mon_fd = mnl_socket_get_fd(c->mon);
	ev_io_init(&c->mon_io, mon_cb, c->mon_fd, EV_READ);
	c->mon_io.data = c;
	ev_io_start(loop, &c->mon_io);
	*out = c;
	return 0;
fail:
	ifcache_free(c);
	return err;
}

void ifcache_free(struct ifcache *c)
{
	struct iftab *old;

	if (!c)
		return;
	if (c->mon_loop)
		ev_io_stop(c->mon_loop, &c->mon_io);
	if (c->mon)
		mnl_socket_close(c->mon);
	old = rcu_publish_ptr(&c->published, (struct iftab *)NULL);
	if (old) {
		synchronize_rcu();
		free(old);
	}
	free(c->links);
	free(c);
}
