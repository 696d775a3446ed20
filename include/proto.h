/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proto.h - the control protocol's framing, shared by nfqd (ctl.c) and
 * nfqd-ctl: one request frame per connection, one response frame back.
 *
 * Frame (all integers in network byte order):
 *
 *   offset  size  field
 *   0       4     magic "NFQD"
 *   4       1     version (PROTO_VERSION)
 *   5       1     type: PROTO_REQUEST or PROTO_RESPONSE
 *   6       2     status: 0 in a request; PROTO_ST_* in a response
 *   8       4     payload length
 *   12      len   payload
 *   12+len  4     end marker "END\n"
 *
 * Magic and version stay at these offsets in every future version, so
 * either end can always tell "another version" from "not our protocol".
 * A request payload is a flags byte, an argument count and that many
 * NUL-terminated arguments (the command words), then, with flag
 * PROTO_REQ_DATA, data lines to the end; a response payload is one
 * JSON document ({"error":"..."} when status is not PROTO_ST_OK).
 */
#ifndef NFQD_PROTO_H
#define NFQD_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROTO_MAGIC		"NFQD"
#define PROTO_VERSION		1u
#define PROTO_HDR_LEN		12
#define PROTO_END		"END\n"
#define PROTO_END_LEN		4
#define PROTO_OVERHEAD		(PROTO_HDR_LEN + PROTO_END_LEN)

#define PROTO_MAX_REQUEST	(64u * 1024)		/* payload */
#define PROTO_MAX_RESPONSE	(64u * 1024 * 1024)	/* payload */
#define PROTO_MAX_ARGS		16
#define PROTO_MAX_ARG_LEN	255

enum proto_type {
	PROTO_REQUEST = 1,
	PROTO_RESPONSE = 2,
};

/* Response status. Anything but PROTO_ST_OK carries {"error":"..."}. */
enum proto_status {
	PROTO_ST_OK = 0,
	PROTO_ST_FAILED = 1,	/* the command failed (a bad reload) */
	PROTO_ST_BAD_FRAME = 2,	/* not a valid frame or request */
	PROTO_ST_VERSION = 3,	/* protocol version not supported */
	PROTO_ST_TOO_BIG = 4,	/* request larger than PROTO_MAX_REQUEST */
	PROTO_ST_DENIED = 5,	/* peer is not root or in control-group */
	PROTO_ST_UNKNOWN = 6,	/* unknown command or bad arguments */
	PROTO_ST_BUSY = 7,	/* too many connections */
	PROTO_ST_INTERNAL = 8,	/* the daemon ran out of memory, ... */
	PROTO_ST_TIMEOUT = 9,	/* request not received in time */
};

/* Request flags. */
#define PROTO_REQ_JSON		0x01	/* the client prints JSON */
#define PROTO_REQ_DATA		0x02	/* data lines follow the arguments */
#define PROTO_REQ_FLAGS		(PROTO_REQ_JSON | PROTO_REQ_DATA)

/* A decoded frame; payload points into the caller's buffer. */
struct proto_frame {
	uint8_t version;
	uint8_t type;
	uint16_t status;
	uint32_t len;
	const uint8_t *payload;
};

/* A decoded request; argv[] points into the frame's payload. */
struct proto_request {
	unsigned flags;
	unsigned argc;
	const char *argv[PROTO_MAX_ARGS];
	/* PROTO_REQ_DATA: lines of printable ASCII, each ended by '\n'
	 * (bulk set elements); not NUL-terminated. */
	const char *data;
	size_t data_len;
};

/* Bytes a frame with a LEN-byte payload takes on the wire. */
static inline size_t proto_frame_size(uint32_t len)
{
	return (size_t)len + PROTO_OVERHEAD;
}

/*
 * Write one frame into BUF (SIZE bytes). Returns its size, or -ENOSPC if
 * BUF is too small, -EINVAL for a bad type.
 */
ssize_t proto_frame_encode(uint8_t type, uint16_t status, const void *payload,
			   uint32_t len, void *buf, size_t size);

/*
 * Same into a malloc'd buffer (*out, caller frees). Returns the size or
 * a negative errno.
 */
ssize_t proto_frame_alloc(uint8_t type, uint16_t status, const void *payload,
			  uint32_t len, uint8_t **out);

/*
 * Decode the frame at the start of BUF (LEN bytes received so far). Checks
 * as much as the bytes already allow, so garbage is refused at its first
 * byte. Returns the frame's size (> 0) with *f filled, 0 if more bytes are
 * needed, or a negative errno:
 *   -EBADMSG          not a frame: magic, type, request status, end marker
 *   -EPROTONOSUPPORT  another protocol version (f->version says which)
 *   -EMSGSIZE         payload longer than MAX (f->len says how long)
 */
ssize_t proto_frame_decode(const void *buf, size_t len, uint32_t max,
			   struct proto_frame *f);

/*
 * Encode a request payload into BUF. Returns its length, -ENOSPC, or
 * -EINVAL for an argument that breaks the rules proto_request_decode()
 * enforces.
 */
ssize_t proto_request_encode(const struct proto_request *r, void *buf,
			     size_t size);

/*
 * Decode a request payload strictly: known flags only, 1..PROTO_MAX_ARGS
 * arguments of 1..PROTO_MAX_ARG_LEN printable ASCII bytes each, nothing
 * after the last unless PROTO_REQ_DATA is set: then the rest is data,
 * printable ASCII lines each ended by '\n'. 0 or -EBADMSG.
 */
int proto_request_decode(const void *payload, uint32_t len,
			 struct proto_request *r);

/* A short text for a status ("permission denied", ...). */
const char *proto_status_str(uint16_t status);

#endif
