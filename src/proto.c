/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proto.c - control protocol framing and request payloads (see proto.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

static void put_u16(uint8_t *p, uint16_t v)
{
	v = htons(v);
	memcpy(p, &v, sizeof(v));
}

static void put_u32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, sizeof(v));
}

static uint16_t get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return ntohs(v);
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return ntohl(v);
}

ssize_t proto_frame_encode(uint8_t type, uint16_t status, const void *payload,
			   uint32_t len, void *buf, size_t size)
{
	uint8_t *p = buf;

	if (type != PROTO_REQUEST && type != PROTO_RESPONSE)
		return -EINVAL;
	if (size < proto_frame_size(len))
		return -ENOSPC;
	memcpy(p, PROTO_MAGIC, 4);
	p[4] = PROTO_VERSION;
	p[5] = type;
	put_u16(p + 6, status);
	put_u32(p + 8, len);
	if (len)
		memcpy(p + PROTO_HDR_LEN, payload, len);
	memcpy(p + PROTO_HDR_LEN + len, PROTO_END, PROTO_END_LEN);
	return (ssize_t)proto_frame_size(len);
}

ssize_t proto_frame_alloc(uint8_t type, uint16_t status, const void *payload,
			  uint32_t len, uint8_t **out)
{
	size_t size = proto_frame_size(len);
	uint8_t *buf;
	ssize_t n;

	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	n = proto_frame_encode(type, status, payload, len, buf, size);
	if (n < 0) {
		free(buf);
		return n;
	}
	*out = buf;
	return n;
}

/* Compare the magic bytes that have arrived so far. */
static int check_magic(const uint8_t *p, size_t len)
{
	size_t n = len < 4 ? len : 4;

	return memcmp(p, PROTO_MAGIC, n) == 0 ? 0 : -EBADMSG;
}

ssize_t proto_frame_decode(const void *buf, size_t len, uint32_t max,
			   struct proto_frame *f)
{
	const uint8_t *p = buf;
	size_t size;

	memset(f, 0, sizeof(*f));
	if (check_magic(p, len) < 0)
		return -EBADMSG;
	if (len < 5)
		return 0;
	f->version = p[4];
	/* Version first: everything after it may differ in another one. */
	if (f->version != PROTO_VERSION)
		return -EPROTONOSUPPORT;
	if (len < 6)
		return 0;
	f->type = p[5];
	if (f->type != PROTO_REQUEST && f->type != PROTO_RESPONSE)
		return -EBADMSG;
	if (len < PROTO_HDR_LEN)
		return 0;
	f->status = get_u16(p + 6);
	if (f->type == PROTO_REQUEST && f->status != 0)
		return -EBADMSG;
	f->len = get_u32(p + 8);
	if (f->len > max)
		return -EMSGSIZE;
	size = proto_frame_size(f->len);
	if (len < size)
		return 0;
	if (memcmp(p + PROTO_HDR_LEN + f->len, PROTO_END, PROTO_END_LEN) != 0)
		return -EBADMSG;
	f->payload = p + PROTO_HDR_LEN;
	return (ssize_t)size;
}

static bool arg_ok(const char *s, size_t len)
{
	if (len == 0 || len > PROTO_MAX_ARG_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

/* Lines of printable ASCII, each ended by '\n'. */
static bool data_ok(const char *s, size_t len)
{
	if (len && s[len - 1] != '\n')
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] != '\n' && (s[i] < 0x20 || s[i] > 0x7e))
			return false;
	return true;
}

ssize_t proto_request_encode(const struct proto_request *r, void *buf,
			     size_t size)
{
	uint8_t *p = buf;
	size_t off = 2;

	if (r->argc == 0 || r->argc > PROTO_MAX_ARGS ||
	    (r->flags & ~PROTO_REQ_FLAGS))
		return -EINVAL;
	if (size < off)
		return -ENOSPC;
	p[0] = (uint8_t)r->flags;
	p[1] = (uint8_t)r->argc;
	for (unsigned i = 0; i < r->argc; i++) {
		size_t n = strlen(r->argv[i]);

		if (!arg_ok(r->argv[i], n))
			return -EINVAL;
		if (size - off < n + 1)
			return -ENOSPC;
		memcpy(p + off, r->argv[i], n + 1);
		off += n + 1;
	}
	if (!(r->flags & PROTO_REQ_DATA))
		return (ssize_t)off;
	if (!data_ok(r->data, r->data_len))
		return -EINVAL;
	if (size - off < r->data_len)
		return -ENOSPC;
	memcpy(p + off, r->data, r->data_len);
	return (ssize_t)(off + r->data_len);
}

int proto_request_decode(const void *payload, uint32_t len,
			 struct proto_request *r)
{
	const char *p = payload;
	size_t off = 2;

	memset(r, 0, sizeof(*r));
	if (len < 2)
		return -EBADMSG;
	r->flags = (uint8_t)p[0];
	r->argc = (uint8_t)p[1];
	if ((r->flags & ~PROTO_REQ_FLAGS) || r->argc == 0 ||
	    r->argc > PROTO_MAX_ARGS)
		return -EBADMSG;
	for (unsigned i = 0; i < r->argc; i++) {
		const char *nul = memchr(p + off, '\0', len - off);

		if (!nul || !arg_ok(p + off, (size_t)(nul - (p + off))))
			return -EBADMSG;
		r->argv[i] = p + off;
		off = (size_t)(nul - p) + 1;
	}
	if (r->flags & PROTO_REQ_DATA) {
		r->data = p + off;
		r->data_len = len - off;
		return data_ok(r->data, r->data_len) ? 0 : -EBADMSG;
	}
	return off == len ? 0 : -EBADMSG;
}

const char *proto_status_str(uint16_t status)
{
	static const char *const names[] = {
		[PROTO_ST_OK] = "ok",
		[PROTO_ST_FAILED] = "command failed",
		[PROTO_ST_BAD_FRAME] = "bad request frame",
		[PROTO_ST_VERSION] = "protocol version not supported",
		[PROTO_ST_TOO_BIG] = "request too large",
		[PROTO_ST_DENIED] = "permission denied",
		[PROTO_ST_UNKNOWN] = "unknown command",
		[PROTO_ST_BUSY] = "too many connections",
		[PROTO_ST_INTERNAL] = "internal error",
		[PROTO_ST_TIMEOUT] = "timed out",
	};

	if (status < sizeof(names) / sizeof(names[0]) && names[status])
		return names[status];
	return "unknown status";
}
