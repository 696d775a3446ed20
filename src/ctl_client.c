/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_client.c - the client end of the control protocol: connect, send
 * one request frame, read one response frame, all under one deadline.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_client.h"
#include "proto.h"

#define CALL_TIMEOUT_MS	30000	/* ctl_client_ask(): a reload may take long */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for EVENTS on FD until DEADLINE (ms). 0, or -ETIMEDOUT / -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left;
	int n;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int client_connect(const char *path, int64_t deadline)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(int);
	int fd, err = 0;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	err = -errno;
	/* A full backlog: wait for room, then ask for the result. */
	if (err == -EAGAIN || err == -EINPROGRESS) {
		err = wait_fd(fd, POLLOUT, deadline);
		if (!err &&
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0)
			err = -err;
		if (!err)
			return fd;
	}
	close(fd);
	return err;
}

static int send_all(int fd, const uint8_t *buf, size_t len, int64_t deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		int ret;

		if (n >= 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = wait_fd(fd, POLLOUT, deadline);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Read until one whole frame is in *buf. Returns its size or -errno. */
static ssize_t recv_frame(int fd, uint8_t **buf, struct proto_frame *f,
			  int64_t deadline)
{
	size_t len = 0, cap = 0;
	uint8_t *b = NULL, *nb;
	ssize_t n;

	for (;;) {
		n = proto_frame_decode(b ? b : (const uint8_t *)"", len,
				       PROTO_MAX_RESPONSE, f);
		if (n != 0)
			break;
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			nb = realloc(b, cap);
			if (!nb) {
				n = -ENOMEM;
				break;
			}
			b = nb;
		}
		n = recv(fd, b + len, cap - len, 0);
		if (n > 0) {
			len += (size_t)n;
			continue;
		}
		if (n == 0) {
			n = -ECONNRESET;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			n = -errno;
			break;
		}
		n = wait_fd(fd, POLLIN, deadline);
		if (n < 0)
			break;
	}
	if (n < 0)
		free(b);
	else
		*buf = b;
	return n;
}

static int reply_fill(const struct proto_frame *f, struct ctl_reply *reply)
{
	reply->payload = malloc((size_t)f->len + 1);
	if (!reply->payload)
		return -ENOMEM;
	memcpy(reply->payload, f->payload, f->len);
	reply->payload[f->len] = '\0';
	reply->len = f->len;
	reply->status = f->status;
	return 0;
}

static void recv_error(const char *path, ssize_t n,
		       const struct proto_frame *f, char *err, size_t errlen)
{
	if (n == -EPROTONOSUPPORT)
		snprintf(err, errlen, "%s: daemon speaks protocol version %u, "
			 "nfqd-ctl speaks %u", path, f->version, PROTO_VERSION);
	else if (n == -EBADMSG)
		snprintf(err, errlen, "%s: not an nfqd control socket "
			 "(malformed response)", path);
	else if (n == -EMSGSIZE)
		snprintf(err, errlen, "%s: response of %u bytes too large",
			 path, f->len);
	else if (n == -ECONNRESET)
		snprintf(err, errlen, "%s: connection closed before a "
			 "whole response", path);
	else
		snprintf(err, errlen, "%s: no response (%s)", path,
			 strerror((int)-n));
}

static int request_frame(const struct proto_request *req, uint8_t **frame)
{
	uint8_t payload[PROTO_MAX_REQUEST];
	ssize_t len;

	len = proto_request_encode(req, payload, sizeof(payload));
	if (len < 0)
		return (int)len;
	return (int)proto_frame_alloc(PROTO_REQUEST, 0, payload,
				      (uint32_t)len, frame);
}

/* Why PATH cannot be reached, and what to do about it. */
static void connect_error(const char *path, int e, char *err, size_t errlen)
{
	const char *hint = "";

	if (e == -ENOENT || e == -ECONNREFUSED)
		hint = "; is nfqd running? (systemctl status nfqd)";
	else if (e == -EACCES || e == -EPERM)
		hint = "; the socket is for root and the members of nfqd's "
		       "control-group (nfqd.conf(5)): run as root or join that group";
	snprintf(err, errlen, "cannot connect to %s: %s%s", path,
		 strerror(-e), hint);
}

int ctl_client_call(const char *path, const struct proto_request *req,
		    int timeout_ms, struct ctl_reply *reply,
		    char *err, size_t errlen)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct proto_frame f;
	uint8_t *frame = NULL, *in = NULL;
	ssize_t n;
	int fd, len, ret;

	memset(reply, 0, sizeof(*reply));
	len = request_frame(req, &frame);
	if (len < 0) {
		snprintf(err, errlen, "cannot encode the request (%s)",
			 strerror(-len));
		return len;
	}
	fd = client_connect(path, deadline);
	if (fd < 0) {
		connect_error(path, fd, err, errlen);
		free(frame);
		return fd;
	}
	/* A refusing daemon answers before reading: read even if this fails. */
	ret = send_all(fd, frame, (size_t)len, deadline);
	free(frame);
	n = recv_frame(fd, &in, &f, deadline);
	close(fd);
	if (n < 0) {
		if (ret < 0 && n == -ECONNRESET)
			n = ret;
		recv_error(path, n, &f, err, errlen);
		return (int)n;
	}
	if (f.type != PROTO_RESPONSE) {
		free(in);
		snprintf(err, errlen, "%s: malformed response (not a "
			 "response frame)", path);
		return -EBADMSG;
	}
	ret = reply_fill(&f, reply);
	free(in);
	if (ret < 0)
		snprintf(err, errlen, "out of memory");
	return ret;
}

/* No answer to REQ, for the reason WHY: said on stderr, and for a JSON
 * request as the document {"error": WHY} in *J, so that -j prints one
 * JSON document whatever happened. */
static int unreached(const struct proto_request *req, const char *why,
		     json_t **j)
{
	fprintf(stderr, "nfqd-ctl: %s\n", why);
	if (req->flags & PROTO_REQ_JSON)
		*j = json_pack("{s:s}", "error", why);
	return CTL_EXIT_UNREACH;
}

int ctl_client_ask(const char *path, const struct proto_request *req,
		   json_t **j, uint16_t *status)
{
	struct ctl_reply reply;
	json_error_t jerr;
	char err[512];

	*j = NULL;
	if (ctl_client_call(path, req, CALL_TIMEOUT_MS, &reply, err,
			    sizeof(err)) < 0)
		return unreached(req, err, j);
	*status = reply.status;
	*j = json_loadb(reply.payload, reply.len, 0, &jerr);
	free(reply.payload);
	if (!*j) {
		char msg[sizeof(err) + 200];

		snprintf(msg, sizeof(msg), "%s: malformed answer (%s)", path,
			 jerr.text);
		return unreached(req, msg, j);
	}
	return reply.status == PROTO_ST_OK ? 0 : CTL_EXIT_DAEMON;
}
