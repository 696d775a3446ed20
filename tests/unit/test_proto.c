/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_proto.c - unit tests of the control protocol framing (proto.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto.h"

static size_t make_frame(uint8_t type, uint16_t status, const char *payload,
			 uint8_t *buf, size_t size)
{
	ssize_t n = proto_frame_encode(type, status, payload,
				       (uint32_t)strlen(payload), buf, size);

	assert_true(n > 0);
	return (size_t)n;
}

static void test_roundtrip(void **state)
{
	uint8_t buf[256];
	struct proto_frame f;
	size_t n = make_frame(PROTO_RESPONSE, PROTO_ST_FAILED, "{\"a\":1}",
			      buf, sizeof(buf));

	assert_int_equal(n, PROTO_OVERHEAD + 7);
	assert_memory_equal(buf, "NFQD\x01\x02\x00\x01\x00\x00\x00\x07", 12);
	assert_memory_equal(buf + 19, "END\n", 4);
	assert_int_equal(proto_frame_decode(buf, n, 1024, &f), (ssize_t)n);
	assert_int_equal(f.version, PROTO_VERSION);
	assert_int_equal(f.type, PROTO_RESPONSE);
	assert_int_equal(f.status, PROTO_ST_FAILED);
	assert_int_equal(f.len, 7);
	assert_memory_equal(f.payload, "{\"a\":1}", 7);
}

static void test_empty_payload(void **state)
{
	uint8_t buf[64];
	struct proto_frame f;
	size_t n = make_frame(PROTO_REQUEST, 0, "", buf, sizeof(buf));

	assert_int_equal(n, PROTO_OVERHEAD);
	assert_int_equal(proto_frame_decode(buf, n, 0, &f), (ssize_t)n);
	assert_int_equal(f.len, 0);
}

/* Every strict prefix of a valid frame asks for more, never fails. */
static void test_prefixes_need_more(void **state)
{
	uint8_t buf[256];
	struct proto_frame f;
	size_t n = make_frame(PROTO_REQUEST, 0, "stats", buf, sizeof(buf));

	for (size_t i = 0; i < n; i++)
		assert_int_equal(proto_frame_decode(buf, i, 1024, &f), 0);
	/* Extra bytes after a whole frame are the caller's business. */
	assert_int_equal(proto_frame_decode(buf, sizeof(buf), 1024, &f),
			 (ssize_t)n);
}

static void test_garbage_first_byte(void **state)
{
	struct proto_frame f;

	assert_int_equal(proto_frame_decode("G", 1, 1024, &f), -EBADMSG);
	assert_int_equal(proto_frame_decode("NFQX", 4, 1024, &f), -EBADMSG);
	assert_int_equal(proto_frame_decode("GET / HTTP/1.0\r\n\r\n", 18,
					    1024, &f), -EBADMSG);
}

static void test_version(void **state)
{
	uint8_t buf[64];
	struct proto_frame f;
	size_t n = make_frame(PROTO_REQUEST, 0, "x", buf, sizeof(buf));

	buf[4] = 2;
	/* Known as soon as the version byte is in. */
	assert_int_equal(proto_frame_decode(buf, 5, 1024, &f),
			 -EPROTONOSUPPORT);
	assert_int_equal(f.version, 2);
	assert_int_equal(proto_frame_decode(buf, n, 1024, &f),
			 -EPROTONOSUPPORT);
}

static void test_bad_type_and_status(void **state)
{
	uint8_t buf[64];
	struct proto_frame f;
	size_t n = make_frame(PROTO_REQUEST, 0, "x", buf, sizeof(buf));

	buf[5] = 3;
	assert_int_equal(proto_frame_decode(buf, 6, 1024, &f), -EBADMSG);
	buf[5] = PROTO_REQUEST;
	buf[7] = 1;	/* a request carries no status */
	assert_int_equal(proto_frame_decode(buf, n, 1024, &f), -EBADMSG);
	assert_int_equal(proto_frame_encode(0, 0, "", 0, buf, sizeof(buf)),
			 -EINVAL);
}

static void test_too_big(void **state)
{
	uint8_t hdr[12] = "NFQD\x01\x01\x00\x00\xff\xff\xff\xff";
	struct proto_frame f;

	/* A 4 GiB claim is refused from the header alone. */
	assert_int_equal(proto_frame_decode(hdr, sizeof(hdr),
					    PROTO_MAX_REQUEST, &f), -EMSGSIZE);
	assert_int_equal(f.len, 0xffffffffu);
	hdr[8] = hdr[9] = 0;
	hdr[10] = 0x01;
	hdr[11] = 0x00;	/* 256 bytes */
	assert_int_equal(proto_frame_decode(hdr, sizeof(hdr), 255, &f),
			 -EMSGSIZE);
	assert_int_equal(proto_frame_decode(hdr, sizeof(hdr), 256, &f), 0);
}

static void test_bad_end_marker(void **state)
{
	uint8_t buf[64];
	struct proto_frame f;
	size_t n = make_frame(PROTO_RESPONSE, 0, "{}", buf, sizeof(buf));

	buf[n - 1] = 'X';
	assert_int_equal(proto_frame_decode(buf, n, 1024, &f), -EBADMSG);
}

static void test_encode_nospace(void **state)
{
	uint8_t buf[20];

	assert_int_equal(proto_frame_encode(PROTO_REQUEST, 0, "12345", 5,
					    buf, 20), -ENOSPC);
	assert_int_equal(proto_frame_encode(PROTO_REQUEST, 0, "1234", 4,
					    buf, 20), 20);
}

static void test_request_roundtrip(void **state)
{
	struct proto_request r = {
		.flags = PROTO_REQ_JSON, .argc = 2,
		.argv = { "counters", "reset" },
	}, d;
	uint8_t buf[64];
	ssize_t n = proto_request_encode(&r, buf, sizeof(buf));

	assert_int_equal(n, 2 + 9 + 6);
	assert_int_equal(proto_request_decode(buf, (uint32_t)n, &d), 0);
	assert_int_equal(d.flags, PROTO_REQ_JSON);
	assert_int_equal(d.argc, 2);
	assert_string_equal(d.argv[0], "counters");
	assert_string_equal(d.argv[1], "reset");
	assert_int_equal(proto_request_encode(&r, buf, 10), -ENOSPC);
}

static void test_request_encode_refuses(void **state)
{
	struct proto_request r = { .argc = 1, .argv = { "" } };
	char long_arg[PROTO_MAX_ARG_LEN + 2];
	uint8_t buf[1024];

	assert_int_equal(proto_request_encode(&r, buf, sizeof(buf)), -EINVAL);
	r.argv[0] = "a\nb";
	assert_int_equal(proto_request_encode(&r, buf, sizeof(buf)), -EINVAL);
	memset(long_arg, 'a', sizeof(long_arg) - 1);
	long_arg[sizeof(long_arg) - 1] = '\0';
	r.argv[0] = long_arg;
	assert_int_equal(proto_request_encode(&r, buf, sizeof(buf)), -EINVAL);
	r.argv[0] = "stats";
	r.argc = 0;
	assert_int_equal(proto_request_encode(&r, buf, sizeof(buf)), -EINVAL);
	r.argc = 1;
	r.flags = 0x80;
	assert_int_equal(proto_request_encode(&r, buf, sizeof(buf)), -EINVAL);
}

static void test_request_decode_strict(void **state)
{
	struct proto_request r;

	assert_int_equal(proto_request_decode("\0\1stats", 8, &r), 0);
	assert_string_equal(r.argv[0], "stats");
	/* unterminated, trailing byte, empty arg, unknown flag, no args */
	assert_int_equal(proto_request_decode("\0\1stats", 7, &r), -EBADMSG);
	assert_int_equal(proto_request_decode("\0\1stats\0x", 9, &r), -EBADMSG);
	assert_int_equal(proto_request_decode("\0\1\0", 3, &r), -EBADMSG);
	assert_int_equal(proto_request_decode("\x04\1stats", 8, &r), -EBADMSG);
	/* data lines: only with PROTO_REQ_DATA, each ended by a newline */
	assert_int_equal(proto_request_decode("\x02\1set\0a\nb\n", 10, &r), 0);
	assert_int_equal(r.data_len, 4);
	assert_memory_equal(r.data, "a\nb\n", 4);
	assert_int_equal(proto_request_decode("\x02\1set\0a\nb", 9, &r),
			 -EBADMSG);
	assert_int_equal(proto_request_decode("\x02\1set\0a\x01\n", 9, &r),
			 -EBADMSG);
	assert_int_equal(proto_request_decode("\0\0", 2, &r), -EBADMSG);
	assert_int_equal(proto_request_decode("\0", 1, &r), -EBADMSG);
	/* argc says two, one present */
	assert_int_equal(proto_request_decode("\0\2stats", 8, &r), -EBADMSG);
	/* a control byte inside an argument */
	assert_int_equal(proto_request_decode("\0\1st\x01ts", 8, &r), -EBADMSG);
	assert_int_equal(proto_request_decode("\0\x11stats", 8, &r), -EBADMSG);
}

static void test_status_str(void **state)
{
	assert_string_equal(proto_status_str(PROTO_ST_DENIED),
			    "permission denied");
	assert_string_equal(proto_status_str(999), "unknown status");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_empty_payload),
		cmocka_unit_test(test_prefixes_need_more),
		cmocka_unit_test(test_garbage_first_byte),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_bad_type_and_status),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_bad_end_marker),
		cmocka_unit_test(test_encode_nospace),
		cmocka_unit_test(test_request_roundtrip),
		cmocka_unit_test(test_request_encode_refuses),
		cmocka_unit_test(test_request_decode_strict),
		cmocka_unit_test(test_status_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
