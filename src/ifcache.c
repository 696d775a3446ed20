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
#include <sys/socket.h>
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
	/* Reads of mon completed (and published): workers' overrides. */
	atomic_ulong reads_done;
};

/*
 * Renames (issue 17): the kernel queues a link notification on every
 * subscribed socket before it acknowledges the change to whoever made it,
 * so a packet the kernel queued after the acknowledgement reaches a worker
 * only after the notification reached every rtnetlink subscriber. Each
 * worker has a socket of its own (ifcache_worker_start): once per receive
 * batch, and only when a rule reads a name, it reads that socket without
 * waiting and keeps what it read in a small table of overrides, consulted
 * before the published table. An override goes once the published table
 * agrees with it and provably includes the notification (two main-loop
 * reads completed since: the second one began after the worker read it).
 * When the worker lost notifications (its socket overran, or the table is
 * full) or before its socket exists, every name is INCOMPLETE until the
 * main thread has read and published everything queued on mon (a poll of
 * mon and the applying flag: the only case that costs a second system
 * call) or has completed two reads of mon since (caught_up).
 */
#define IFW_MAX		256	/* a batch of 48 veth pairs adds 96 links */

struct ifover {
	uint32_t ifindex;
	bool gone;			/* deleted */
	char name[IFNAMSIZ];
	unsigned long stamp;		/* c->reads_done when last set */
};

struct ifworker {
	struct mnl_socket *nl;		/* NULL: none, check mon each batch */
	bool behind;			/* lost notifications: wait for mon */
	bool since_known;		/* since holds a value */
	unsigned long since;		/* c->reads_done when it fell behind */
	unsigned n;
	struct ifover o[IFW_MAX];
	char buf[NL_BUF_SIZE];
};

static _Thread_local struct ifworker *me;
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

/* No notification read or waiting on mon that the published table
 * lacks: one poll(2). */
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

/* The published name of IFINDEX in T (NULL: none). Inside an RCU read. */
static bool tab_name(const struct iftab *t, uint32_t ifindex, char *name)
{
	if (!t)
		return false;
	for (unsigned s = slot_of(ifindex, t->mask); t->e[s].ifindex;
	     s = (s + 1) & t->mask) {
		if (t->e[s].ifindex == ifindex) {
			memcpy(name, t->e[s].name, IFNAMSIZ);
			return true;
		}
	}
	return false;
}

/*
 * The link of one RTM_NEWLINK / RTM_DELLINK; false for any other message.
 * *NAME is NULL for a deletion and for a new link without a name. The one
 * parser of link messages, for the main loop and the workers.
 */
static bool link_parse(const struct nlmsghdr *nlh, uint32_t *ifindex,
		       const char **name)
{
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	*name = NULL;
	if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
		return false;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifm) ||
	    ifm->ifi_index <= 0)
		return false;
	*ifindex = (uint32_t)ifm->ifi_index;
	if (nlh->nlmsg_type == RTM_DELLINK)
		return true;
	mnl_attr_for_each(a, nlh, sizeof(*ifm)) {
		if (mnl_attr_get_type(a) == IFLA_IFNAME &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			*name = mnl_attr_get_str(a);
	}
	return true;
}

static struct ifover *over_find(uint32_t ifindex)
{
	for (unsigned i = 0; i < me->n; i++)
		if (me->o[i].ifindex == ifindex)
			return &me->o[i];
	return NULL;
}

/* What over_cb works on. */
struct over_walk {
	unsigned long stamp;
	bool full;
};

/* One notification read by a worker: its override. */
static int over_cb(const struct nlmsghdr *nlh, void *data)
{
	struct over_walk *w = data;
	struct ifover *o;
	uint32_t ifindex;
	const char *name;

	if (!link_parse(nlh, &ifindex, &name) ||
	    (nlh->nlmsg_type == RTM_NEWLINK && !name))
		return MNL_CB_OK;
	o = over_find(ifindex);
	if (!o) {
		if (me->n == IFW_MAX) {
			w->full = true;
			return MNL_CB_OK;
		}
		o = &me->o[me->n++];
		o->ifindex = ifindex;
	}
	o->gone = !name;
	if (name) {
		strncpy(o->name, name, IFNAMSIZ - 1);
		o->name[IFNAMSIZ - 1] = '\0';
	}
	o->stamp = w->stamp;
	return MNL_CB_OK;
}

/* Read this worker's socket to its end: one recvfrom when nothing came. */
static void worker_drain(const struct ifcache *c)
{
	struct over_walk w = { 0 };
	bool lost = false;
	ssize_t n;

	for (;;) {
		struct sockaddr_nl from;
		socklen_t len = sizeof(from);

		n = recvfrom(mnl_socket_get_fd(me->nl), me->buf,
			     sizeof(me->buf), MSG_DONTWAIT | MSG_TRUNC,
			     (struct sockaddr *)&from, &len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			lost = true;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			lost = true;
		if (n <= 0)
			break;
		if (from.nl_pid != 0)		/* not the kernel's */
			continue;
		if ((size_t)n > sizeof(me->buf)) {	/* truncated */
			lost = true;
			continue;
		}
		/* After the read: mon had it before this value was read. */
		w.stamp = atomic_load_explicit(&c->reads_done,
					       memory_order_acquire);
		mnl_cb_run(me->buf, (size_t)n, 0, 0, over_cb, &w);
	}
	if (!lost && !w.full)
		return;
	/* What is kept may be older than what was lost: the published
	 * table, once it holds everything, is the only truth. */
	me->n = 0;
	if (!me->behind)
		log_warn("ifcache: a worker lost link notifications (%s): "
			 "interface names are INCOMPLETE until the main "
			 "thread has read every notification",
			 lost ? "its rtnetlink socket overran" :
				"more than 256 unpublished link changes");
	me->behind = true;
	me->since = atomic_load_explicit(&c->reads_done, memory_order_acquire);
	me->since_known = true;
}

/*
 * A worker that fell behind (at its start, or when it lost notifications
 * at a moment T) is level again once the main thread completed two reads
 * of mon since T: the second one began after T, so the published table
 * holds everything queued before T, and the worker's own socket everything
 * after. Without it, a worker behind would wait for a moment when mon is
 * empty, which a slow main thread and steady link changes may never give.
 */
static bool caught_up(const struct ifcache *c)
{
	unsigned long done = atomic_load_explicit(&c->reads_done,
						  memory_order_acquire);

	if (!me->since_known) {		/* at start: T is now */
		me->since = done;
		me->since_known = true;
		return false;
	}
	return done - me->since >= 2;
}

/* Forget the overrides the published table provably holds. */
static void worker_prune(const struct ifcache *c)
{
	unsigned long done = atomic_load_explicit(&c->reads_done,
						  memory_order_acquire);
	const struct iftab *t;
	char name[IFNAMSIZ];

	rcu_read_lock();
	t = rcu_read_ptr(c->published);
	for (unsigned i = 0; i < me->n;) {
		const struct ifover *o = &me->o[i];
		bool known = tab_name(t, o->ifindex, name);

		/* The second read of mon since began after the worker's. */
		if (done - o->stamp >= 2 &&
		    (o->gone ? !known : known && !strcmp(name, o->name)))
			me->o[i] = me->o[--me->n];
		else
			i++;
	}
	rcu_read_unlock();
}

/* Once per batch: system calls only for batches that read a name. */
static bool names_sure(const struct ifcache *c)
{
	if (checked_gen == batch_gen)
		return batch_sure;
	checked_gen = batch_gen;
	if (me && me->nl) {
		worker_drain(c);
		if (me->n)
			worker_prune(c);
		if (me->behind && caught_up(c))
			me->behind = false;
		if (!me->behind)
			return batch_sure = true;
	}
	batch_sure = names_current(c);
	if (batch_sure && me)
		me->behind = false;
	return batch_sure;
}

bool ifcache_name(const struct ifcache *c, uint32_t ifindex, char *name)
{
	const struct ifover *o;
	bool found;

	if (!c || !ifindex || !names_sure(c))
		return false;
	o = me && me->n ? over_find(ifindex) : NULL;
	if (o) {
		if (!o->gone)
			memcpy(name, o->name, IFNAMSIZ);
		return !o->gone;
	}
	rcu_read_lock();
	found = tab_name(rcu_read_ptr(c->published), ifindex, name);
	rcu_read_unlock();
	return found;
}

void ifcache_worker_start(void)
{
	struct ifworker *w = calloc(1, sizeof(*w));
	int size = 1 << 20, err;

	if (!w) {
		log_warn("ifcache: out of memory for a worker's link "
			 "notifications: it checks the main thread's on "
			 "every batch that reads an interface name");
		return;
	}
	/* Until the main thread has published what came before. */
	w->behind = true;
	w->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (w->nl && mnl_socket_bind(w->nl, RTMGRP_LINK,
				     MNL_SOCKET_AUTOPID) == 0) {
		/* Room for a storm between two batches; best effort (the
		 * cost of an overrun is a catch-up, logged). */
		if (setsockopt(mnl_socket_get_fd(w->nl), SOL_SOCKET,
			       SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
			setsockopt(mnl_socket_get_fd(w->nl), SOL_SOCKET,
				   SO_RCVBUF, &size, sizeof(size));
	} else {
		err = errno;
		if (w->nl)
			mnl_socket_close(w->nl);
		w->nl = NULL;
		log_warn("ifcache: cannot open a worker's link notification "
			 "socket (%s): it checks the main thread's on every "
			 "batch that reads an interface name, and names are "
			 "INCOMPLETE while that one holds unread changes",
			 strerror(err));
	}
	me = w;
}

void ifcache_worker_stop(void)
{
	if (!me)
		return;
	if (me->nl)
		mnl_socket_close(me->nl);
	free(me);
	me = NULL;
}

/* What link_cb works on. */
struct link_walk {
	struct ifcache *c;
	bool changed;
};

/* One RTM_NEWLINK / RTM_DELLINK: a change to the working copy. */
static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_walk *w = data;
	uint32_t ifindex;
	const char *name;

	if (!link_parse(nlh, &ifindex, &name))
		return MNL_CB_OK;
	if (nlh->nlmsg_type == RTM_DELLINK)
		w->changed |= update(w->c, ifindex, NULL);
	else if (name)
		w->changed |= update(w->c, ifindex, name);
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
	/* Only a read that left the table whole counts (caught_up and
	 * worker_prune rely on it). */
	if (!c->resync_owed)
		atomic_fetch_add_explicit(&c->reads_done, 1,
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
