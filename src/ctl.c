/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl.c - the control socket on the main loop: accepts nfqd-ctl
 * connections, checks each peer's credentials, reads one request frame,
 * answers with one response frame and closes. Every socket is
 * non-blocking and every connection has a deadline, so no client, however
 * slow, silent or hostile, can hold up the daemon or another client.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>
#include <jansson.h>

#include "conf.h"
#include "ctl.h"
#include "ctl_cmd.h"
#include "log.h"
#include "proto.h"
#include "stats.h"

#define CTL_MAX_CONNS		256	/* more are answered "busy" */
#define CTL_BACKLOG		128
#define CTL_ACCEPT_BURST	64	/* accepts per loop iteration */
#define CTL_REQUEST_TIMEOUT	5.0	/* s from accept to a request */
#define CTL_WRITE_TIMEOUT	10.0	/* s to take the whole response */
#define CTL_RETRY_ACCEPT	1.0	/* s to wait after EMFILE */
#define CTL_INBUF_MIN		512
#define CTL_INBUF_MAX		proto_frame_size(PROTO_MAX_REQUEST)
#define CTL_PEER_GROUPS_MAX	4096

struct ctl_conn {
	struct ctl *ctl;
	struct ctl_conn *prev, *next;
	int fd;
	ev_io io;
	ev_timer timer;
	struct ucred cred;
	uint8_t *in;
	size_t in_len, in_cap;
	uint8_t *out;
	size_t out_len, out_off;
};

struct ctl {
	struct ev_loop *loop;
	const struct ctl_ops *ops;	/* the daemon, as the commands see it */
	int fd;
	ev_io io;
	ev_timer retry;		/* re-enable accept after EMFILE */
	char *path;
	ino_t ino;		/* ours: never unlink a successor's socket */
	char *group;		/* control-group, or NULL */
	gid_t gid;
	struct ctl_conn *conns;
	unsigned n_conns;
};

static void conn_close(struct ctl_conn *cn)
{
	struct ctl *c = cn->ctl;

	ev_io_stop(c->loop, &cn->io);
	ev_timer_stop(c->loop, &cn->timer);
	close(cn->fd);
	if (cn->prev)
		cn->prev->next = cn->next;
	else
		c->conns = cn->next;
	if (cn->next)
		cn->next->prev = cn->prev;
	c->n_conns--;
	free(cn->in);
	free(cn->out);
	free(cn);
}

static void conn_write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ctl_conn *cn = w->data;

	while (cn->out_off < cn->out_len) {
		ssize_t n = send(cn->fd, cn->out + cn->out_off,
				 cn->out_len - cn->out_off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			log_debug("control: peer pid %d: send failed (%s)",
				  (int)cn->cred.pid, strerror(errno));
			break;
		}
		cn->out_off += (size_t)n;
	}
	/* One request per connection: done. */
	conn_close(cn);
}

/*
 * Queue the response J (consumed) with STATUS and switch the connection
 * to writing; it closes once the peer has taken it all.
 */
static void conn_respond(struct ctl_conn *cn, uint16_t status, json_t *j)
{
	struct ev_loop *loop = cn->ctl->loop;
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	ssize_t n;

	json_decref(j);
	if (!text) {
		status = PROTO_ST_INTERNAL;
		text = strdup("{\"error\":\"out of memory\"}");
	}
	n = -ENOMEM;
	if (text)
		n = proto_frame_alloc(PROTO_RESPONSE, status, text,
				      (uint32_t)strlen(text), &cn->out);
	free(text);
	if (n < 0) {
		conn_close(cn);
		return;
	}
	cn->out_len = (size_t)n;
	cn->out_off = 0;
	ev_io_stop(loop, &cn->io);
	ev_io_init(&cn->io, conn_write_cb, cn->fd, EV_WRITE);
	cn->io.data = cn;
	ev_io_start(loop, &cn->io);
	ev_timer_stop(loop, &cn->timer);
	/* A long command (a big reload) must not eat the write deadline. */
	ev_now_update(loop);
	ev_timer_set(&cn->timer, CTL_WRITE_TIMEOUT, 0.);
	ev_timer_start(loop, &cn->timer);
}

static void conn_error(struct ctl_conn *cn, uint16_t status, const char *msg)
{
	log_info("control: peer pid %d uid %u: %s", (int)cn->cred.pid,
		 (unsigned)cn->cred.uid, msg);
	conn_respond(cn, status, ctl_error_json("%s", msg));
}

static void conn_request(struct ctl_conn *cn, const struct proto_frame *f)
{
	struct proto_request r;
	json_t *j;
	int st;

	if (f->type != PROTO_REQUEST) {
		conn_error(cn, PROTO_ST_BAD_FRAME,
			   "bad request: not a request frame");
		return;
	}
	if (proto_request_decode(f->payload, f->len, &r) < 0) {
		conn_error(cn, PROTO_ST_BAD_FRAME,
			   "bad request: malformed command");
		return;
	}
	log_debug("control: peer pid %d uid %u: %s%s%s", (int)cn->cred.pid,
		  (unsigned)cn->cred.uid, r.argv[0], r.argc > 1 ? " " : "",
		  r.argc > 1 ? r.argv[1] : "");
	st = ctl_cmd_run(cn->ctl->ops, &r, &j);
	conn_respond(cn, (uint16_t)st, j);
}

/*
 * Decode what has arrived; answer a whole frame or refuse a bad one.
 * Returns false while more bytes are needed, true once answered.
 */
static bool conn_parse(struct ctl_conn *cn)
{
	struct proto_frame f;
	char msg[128];
	ssize_t n;

	n = proto_frame_decode(cn->in, cn->in_len, PROTO_MAX_REQUEST, &f);
	if (n == 0)
		return false;
	if (n == -EPROTONOSUPPORT) {
		snprintf(msg, sizeof(msg),
			 "protocol version %u not supported (daemon speaks %u)",
			 f.version, PROTO_VERSION);
		conn_error(cn, PROTO_ST_VERSION, msg);
	} else if (n == -EMSGSIZE) {
		snprintf(msg, sizeof(msg),
			 "request of %u bytes too large (at most %u)",
			 f.len, PROTO_MAX_REQUEST);
		conn_error(cn, PROTO_ST_TOO_BIG, msg);
	} else if (n < 0) {
		conn_error(cn, PROTO_ST_BAD_FRAME,
			   "bad request: not an nfqd control frame");
	} else if ((size_t)n != cn->in_len) {
		conn_error(cn, PROTO_ST_BAD_FRAME,
			   "bad request: data after the request frame");
	} else {
		conn_request(cn, &f);
	}
	return true;
}

static int conn_grow(struct ctl_conn *cn)
{
	size_t cap = cn->in_cap ? cn->in_cap * 2 : CTL_INBUF_MIN;
	uint8_t *in;

	if (cap > CTL_INBUF_MAX)
		cap = CTL_INBUF_MAX;
	if (cap <= cn->in_cap)
		return -EMSGSIZE;
	in = realloc(cn->in, cap);
	if (!in)
		return -ENOMEM;
	cn->in = in;
	cn->in_cap = cap;
	return 0;
}

/*
 * Read what the peer sent and act on it. Returns true while the
 * connection still waits for its request; false once it was answered or
 * closed (CN may be gone then).
 */
static bool conn_pull(struct ctl_conn *cn)
{
	ssize_t n;

	/* The decoder refuses a frame longer than CTL_INBUF_MAX first. */
	if (cn->in_len == cn->in_cap && conn_grow(cn) < 0) {
		conn_close(cn);
		return false;
	}
	n = recv(cn->fd, cn->in + cn->in_len, cn->in_cap - cn->in_len, 0);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return true;
		log_debug("control: peer pid %d: recv failed (%s)",
			  (int)cn->cred.pid, strerror(errno));
		conn_close(cn);
		return false;
	}
	if (n == 0) {
		log_debug("control: peer pid %d closed before a whole request",
			  (int)cn->cred.pid);
		conn_close(cn);
		return false;
	}
	cn->in_len += (size_t)n;
	return !conn_parse(cn);
}

static void conn_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	conn_pull(w->data);
}

static void conn_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ctl_conn *cn = w->data;
	uint8_t *frame;
	ssize_t n;

	/*
	 * After the loop was blocked (a long reload), timers run before the
	 * I/O callbacks: serve a request that did arrive in time first.
	 */
	if (!cn->out && !conn_pull(cn))
		return;
	log_info("control: peer pid %d uid %u: timed out, closing",
		 (int)cn->cred.pid, (unsigned)cn->cred.uid);
	if (!cn->out) {
		static const char body[] = "{\"error\":\"request timed out\"}";

		/* Best effort: one non-blocking send, then close anyway. */
		n = proto_frame_alloc(PROTO_RESPONSE, PROTO_ST_TIMEOUT, body,
				      sizeof(body) - 1, &frame);
		if (n > 0) {
			if (send(cn->fd, frame, (size_t)n,
				 MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				log_debug("control: timeout answer not sent");
			free(frame);
		}
	}
	conn_close(cn);
}

/* Is GID among the peer's supplementary groups? */
static bool peer_in_group(int fd, const struct ucred *cred, gid_t gid)
{
	gid_t groups[CTL_PEER_GROUPS_MAX];
	socklen_t len = sizeof(groups);
	int n = CTL_PEER_GROUPS_MAX;
	char buf[4096];
	struct passwd pw, *pwp = NULL;

	/* The groups the peer process holds now (Linux >= 4.13)... */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0) {
		n = (int)(len / sizeof(gid_t));
	} else {
		/* ...else its user's groups from the group database. */
		if (getpwuid_r(cred->uid, &pw, buf, sizeof(buf), &pwp) || !pwp)
			return false;
		if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) < 0)
			return false;
	}
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

static bool peer_allowed(struct ctl *c, int fd, const struct ucred *cred)
{
	if (cred->uid == 0 || cred->uid == geteuid())
		return true;
	if (!c->group)
		return false;
	return cred->gid == c->gid || peer_in_group(fd, cred, c->gid);
}

static void conn_new(struct ctl *c, int fd)
{
	struct ev_loop *loop = c->loop;
	socklen_t len = sizeof(struct ucred);
	struct ctl_conn *cn;
	char msg[160];

	cn = calloc(1, sizeof(*cn));
	if (!cn) {
		close(fd);
		return;
	}
	cn->ctl = c;
	cn->fd = fd;
	cn->next = c->conns;
	if (c->conns)
		c->conns->prev = cn;
	c->conns = cn;
	c->n_conns++;
	ev_timer_init(&cn->timer, conn_timeout_cb, CTL_REQUEST_TIMEOUT, 0.);
	cn->timer.data = cn;
	ev_timer_start(loop, &cn->timer);
	ev_io_init(&cn->io, conn_read_cb, fd, EV_READ);
	cn->io.data = cn;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cn->cred, &len) < 0) {
		conn_error(cn, PROTO_ST_DENIED,
			   "permission denied: no peer credentials");
		return;
	}
	if (c->n_conns > CTL_MAX_CONNS) {
		conn_error(cn, PROTO_ST_BUSY,
			   "too many connections, try again");
		return;
	}
	if (!peer_allowed(c, fd, &cn->cred)) {
		snprintf(msg, sizeof(msg),
			 "permission denied: uid %u is not root%s%s%s (nfqd.conf "
			 "option control-group names the group that may ask)",
			 (unsigned)cn->cred.uid,
			 c->group ? " nor in group '" : "",
			 c->group ? c->group : "", c->group ? "'" : "");
		conn_error(cn, PROTO_ST_DENIED, msg);
		return;
	}
	ev_io_start(loop, &cn->io);
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ctl *c = w->data;

	for (int i = 0; i < CTL_ACCEPT_BURST; i++) {
		int fd = accept4(c->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			conn_new(c, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		log_warn("control: accept failed (%s), pausing for %.0f s",
			 strerror(errno), CTL_RETRY_ACCEPT);
		/* Level-triggered: a persistent EMFILE would spin. */
		ev_io_stop(loop, &c->io);
		ev_timer_start(loop, &c->retry);
		return;
	}
}

static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ctl *c = w->data;

	ev_io_start(loop, &c->io);
}

/* A socket file left by a dead daemon is removed; a live one is not. */
static int remove_stale(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, ret;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (ret == 0 || errno == EAGAIN)
		return -EADDRINUSE;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

static int ctl_resolve_group(struct ctl *c, const char *name)
{
	struct group gr, *grp = NULL;
	char buf[16384];
	int ret;

	ret = getgrnam_r(name, &gr, buf, sizeof(buf), &grp);
	if (ret || !grp) {
		log_err("control: group '%s' not found", name);
		return ret ? -ret : -ENOENT;
	}
	c->group = strdup(name);
	c->gid = grp->gr_gid;
	return c->group ? 0 : -ENOMEM;
}

/* Bind with a umask so the socket is never reachable with a wider mode. */
static int ctl_bind(struct ctl *c, const struct sockaddr_un *sa)
{
	struct stat st;
	mode_t old;
	int ret;

	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	old = umask(0177);
	ret = bind(c->fd, (const struct sockaddr *)sa, sizeof(*sa));
	umask(old);
	if (ret < 0)
		return -errno;
	if (c->group && (chown(c->path, (uid_t)-1, c->gid) < 0 ||
			 chmod(c->path, 0660) < 0))
		return -errno;
	if (lstat(c->path, &st) == 0)
		c->ino = st.st_ino;
	if (listen(c->fd, CTL_BACKLOG) < 0)
		return -errno;
	return 0;
}

static int ctl_open(struct ctl *c, const struct conf_options *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ret;

	if (strlen(c->path) >= sizeof(sa.sun_path)) {
		log_err("control: socket path %s too long", c->path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, c->path);
	if (o->control_group && (ret = ctl_resolve_group(c, o->control_group)))
		return ret;
	ret = stats_mkdir_parent(c->path);
	if (ret < 0) {
		log_err("control: cannot create the directory of %s (%s)",
			c->path, strerror(-ret));
		return ret;
	}
	ret = remove_stale(c->path, &sa);
	if (ret == -EADDRINUSE)
		log_err("control: %s is in use by another process", c->path);
	else if (ret == -EEXIST)
		log_err("control: %s exists and is not a socket", c->path);
	else if (ret < 0)
		log_err("control: cannot remove stale %s (%s)", c->path,
			strerror(-ret));
	if (ret < 0)
		return ret;
	ret = ctl_bind(c, &sa);
	if (ret < 0)
		log_err("control: cannot listen on %s (%s)", c->path,
			strerror(-ret));
	return ret;
}

static void ctl_free(struct ctl *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	free(c->group);
	free(c);
}

int ctl_start(struct ev_loop *loop, const struct conf_options *o,
	      const struct ctl_ops *ops, struct ctl **out)
{
	struct ctl *c;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->ops = ops;
	c->fd = -1;
	c->path = strdup(o->control_socket && *o->control_socket ?
			 o->control_socket : NFQD_DEFAULT_SOCKET);
	if (!c->path) {
		ctl_free(c);
		return -ENOMEM;
	}
	ret = ctl_open(c, o);
	if (ret < 0) {
		if (c->ino)
			unlink(c->path);
		ctl_free(c);
		return ret;
	}
	ev_io_init(&c->io, accept_cb, c->fd, EV_READ);
	c->io.data = c;
	ev_io_start(loop, &c->io);
	ev_timer_init(&c->retry, retry_cb, CTL_RETRY_ACCEPT, 0.);
	c->retry.data = c;
	log_info("control: listening on %s (mode %s%s)", c->path,
		 c->group ? "0660, group " : "0600", c->group ? c->group : "");
	*out = c;
	return 0;
}

void ctl_stop(struct ctl *c)
{
	struct stat st;

	if (!c)
		return;
	ev_io_stop(c->loop, &c->io);
	ev_timer_stop(c->loop, &c->retry);
	while (c->conns)
		conn_close(c->conns);
	if (lstat(c->path, &st) == 0 && st.st_ino == c->ino &&
	    unlink(c->path) < 0)
		log_warn("control: cannot remove %s (%s)", c->path,
			 strerror(errno));
	ctl_free(c);
}
