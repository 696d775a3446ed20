/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_names.c - libFuzzer target for the DNS, TLS and HTTP name parsers
 * (src/name_*.c): every input goes to each of them whole and cut, and
 * through the out-of-order stream in two pieces, second first. A prefix
 * of an input never gives a different answer than the whole (it is MORE,
 * or the same name), an HTTP prefix that is NOT has a whole that is NOT,
 * and a name found is always in normal form.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "names.h"
#include "name_check.h"

typedef enum name_result (*parse_fn)(const uint8_t *, size_t,
				     struct name_out *);

static void stream_parser(parse_fn fn, const uint8_t *d, size_t n,
			  size_t cut)
{
	struct name_out whole, part;
	enum name_result r = fn(d, n, &whole), rp;

	if (r == NAME_DONE)
		check_name(&whole);
	rp = fn(d, cut, &part);
	if (rp == NAME_DONE)
		check_name(&part);
	if (r == NAME_DONE)
		assert(rp == NAME_MORE ||
		       (rp == NAME_DONE && !strcmp(part.name, whole.name) &&
			part.ech == whole.ech && part.qtype == whole.qtype));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t mem[4096 + 512];
	size_t cut = size ? data[0] % (size + 1) : 0;
	struct name_stream s;
	struct name_out o;

	if (name_dns_udp(data, size, &o) == NAME_DONE)
		check_name(&o);
	stream_parser(name_dns_tcp, data, size, cut);
	stream_parser(name_tls_stream, data, size, cut);
	stream_parser(name_tls_handshake, data, size, cut);
	stream_parser(name_http_host, data, size, cut);
	/* HTTP: NOT is final (a flow settles on it; another protocol's
	 * first line never turns into a request). */
	if (name_http_host(data, cut, &o) == NAME_NOT)
		assert(name_http_host(data, size, &o) == NAME_NOT);

	/* The stream: second piece first, then the first. */
	name_stream_init(&s, mem, 4096);
	assert(name_stream_put(&s, cut, data + cut, size - cut) >= 0);
	assert(name_stream_put(&s, 0, data, cut) >= 0);
	assert(s.contig == (size < 4096 ? size : 4096));
	assert(memcmp(s.buf, data, s.contig) == 0);
	return 0;
}
