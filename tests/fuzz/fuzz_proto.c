/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_proto.c - libFuzzer target for the control protocol decoder: the
 * input is fed to proto_frame_decode() whole and in two pieces, as the
 * daemon sees it arrive, and a decoded request payload goes on to
 * proto_request_decode(); what decodes must encode back identically.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

static void check_request(const struct proto_frame *f)
{
	struct proto_request r;
	uint8_t buf[PROTO_MAX_REQUEST];
	ssize_t n;

	if (proto_request_decode(f->payload, f->len, &r) < 0)
		return;
	n = proto_request_encode(&r, buf, sizeof(buf));
	assert(n == (ssize_t)f->len);
	assert(memcmp(buf, f->payload, f->len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_frame f, g;
	ssize_t n, m;
	size_t split = size ? data[0] % (size + 1) : 0;

	n = proto_frame_decode(data, size, PROTO_MAX_REQUEST, &f);
	assert(n <= (ssize_t)size);
	/* A prefix never gives a different verdict than the whole... */
	m = proto_frame_decode(data, split, PROTO_MAX_REQUEST, &g);
	assert(m == 0 || m == n || (m < 0 && n < 0));
	if (n <= 0)
		return 0;
	/* ...and a decoded frame is exactly what the encoder writes. */
	assert(proto_frame_size(f.len) == (size_t)n);
	assert(memcmp(data + n - PROTO_END_LEN, PROTO_END, PROTO_END_LEN) == 0);
	if (f.type == PROTO_REQUEST)
		check_request(&f);
	return 0;
}
