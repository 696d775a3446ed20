/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * namewire.h - for the tests, fuzz targets and benches: the messages
 * nfqd reads names from, built as clients build them: a DNS query and a
 * TLS ClientHello record. Functions static inline: a file includes this
 * and uses what it needs.
 */
#ifndef NFQD_TEST_NAMEWIRE_H
#define NFQD_TEST_NAMEWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* V's low 16 bits at P, in network order. */
static inline void wire_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* NAME (presentation form, no trailing dot) in wire form at P; its
 * length. */
static inline size_t wire_name(uint8_t *p, const char *name)
{
	size_t at = 0;

	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);

		p[at++] = (uint8_t)l;
		memcpy(p + at, name, l);
		at += l;
		name += l + (dot ? 1 : 0);
	}
	p[at++] = 0;
	return at;
}

/* A recursive query ID for NAME of TYPE, class IN, into D; its length. */
static inline size_t wire_dns_query(uint8_t *d, uint16_t id,
				    const char *name, uint16_t type)
{
	size_t n;

	memset(d, 0, 12);
	wire_put16(d, id);
	d[2] = 0x01;		/* RD */
	wire_put16(d + 4, 1);	/* QDCOUNT */
	n = 12 + wire_name(d + 12, name);
	wire_put16(d + n, type);
	wire_put16(d + n + 2, 1);	/* IN */
	return n + 4;
}

/* A ClientHello record for NAME into OUT, its random and session id
 * made of FLOW. BIG: a browser's, with a post-quantum key share (1,216
 * bytes) before the server_name: 1,442 bytes and the name; else padded
 * to a 513-byte record (OpenSSL pads its own to 517). Its length. */
static inline size_t wire_client_hello(uint8_t *out, const char *name,
				       uint32_t flow, bool big)
{
	static const uint16_t suites[] = { 0x1301, 0x1302, 0x1303, 0xc02b,
		0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c,
		0x009d, 0x002f, 0x0035 };
	/* supported_versions, supported_groups, signature_algorithms,
	 * ALPN, psk_key_exchange_modes */
	static const uint8_t rest[] = {
		0x00, 0x2b, 0x00, 0x05, 0x04, 0x03, 0x04, 0x03, 0x03,
		0x00, 0x0a, 0x00, 0x08, 0x00, 0x06, 0x11, 0xec, 0x00, 0x1d,
		0x00, 0x17,
		0x00, 0x0d, 0x00, 0x0a, 0x00, 0x08, 0x04, 0x03, 0x08, 0x04,
		0x04, 0x01, 0x05, 0x03,
		0x00, 0x10, 0x00, 0x0e, 0x00, 0x0c, 0x02, 0x68, 0x32, 0x08,
		0x68, 0x74, 0x74, 0x70, 0x2f, 0x31, 0x2e, 0x31,
		0x00, 0x2d, 0x00, 0x02, 0x01, 0x01,
	};
	uint8_t *h = out + 5, *x;
	size_t at = 4, nl = strlen(name), ks, e = 0, body;

	wire_put16(h + at, 0x0303);
	at += 2;
	for (int i = 0; i < 32; i++)
		h[at++] = (uint8_t)(flow * 31 + (uint32_t)i * 7);
	h[at++] = 32;		/* legacy_session_id */
	for (int i = 0; i < 32; i++)
		h[at++] = (uint8_t)(flow * 17 + (uint32_t)i);
	wire_put16(h + at, sizeof(suites));
	at += 2;
	for (size_t i = 0; i < sizeof(suites) / 2; i++, at += 2)
		wire_put16(h + at, suites[i]);
	h[at++] = 1;
	h[at++] = 0;
	x = h + at + 2;		/* extensions */
	/* key_share: X25519MLKEM768 (1216 bytes) + X25519, or X25519 */
	ks = big ? 4 + 1216 + 4 + 32 : 4 + 32;
	wire_put16(x + e, 0x0033);
	wire_put16(x + e + 2, (uint32_t)(2 + ks));
	wire_put16(x + e + 4, (uint32_t)ks);
	e += 6;
	if (big) {
		wire_put16(x + e, 0x11ec);
		wire_put16(x + e + 2, 1216);
		memset(x + e + 4, 0x5a, 1216);
		e += 4 + 1216;
	}
	wire_put16(x + e, 0x001d);
	wire_put16(x + e + 2, 32);
	memset(x + e + 4, 0xa5, 32);
	e += 4 + 32;
	/* server_name */
	wire_put16(x + e, 0x0000);
	wire_put16(x + e + 2, (uint32_t)(nl + 5));
	wire_put16(x + e + 4, (uint32_t)(nl + 3));
	x[e + 6] = 0;
	wire_put16(x + e + 7, (uint32_t)nl);
	memcpy(x + e + 9, name, nl);
	e += 9 + nl;
	memcpy(x + e, rest, sizeof(rest));
	e += sizeof(rest);
	/* padding (RFC 7685): a 508-byte ClientHello message */
	body = at + 2 + e;
	if (!big && body < 508) {
		size_t pad = 508 - body - 4;

		wire_put16(x + e, 0x0015);
		wire_put16(x + e + 2, (uint32_t)pad);
		memset(x + e + 4, 0, pad);
		e += 4 + pad;
	}
	wire_put16(h + at, (uint32_t)e);
	at += 2 + e;
	h[0] = 1;		/* ClientHello */
	h[1] = 0;
	wire_put16(h + 2, (uint32_t)(at - 4));
	out[0] = 0x16;
	wire_put16(out + 1, 0x0301);
	wire_put16(out + 3, (uint32_t)at);
	return 5 + at;
}

#endif
