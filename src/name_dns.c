/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * name_dns.c - the question of a DNS query (RFC 1035 4.1): the name in
 * wire form, uncompressed, and its type. A query's name has no
 * compression pointer, so one is refused rather than followed: no loop,
 * no pointer past the end can be reached.
 */

#include "names.h"

#define DNS_HDR 12

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * The wire-form name at P (LEN bytes left) into OUT in normal form
 * (name_normalize()'s: labels of printable ASCII, lower case, 253 bytes
 * at most), in one pass; its wire length, or -1 (malformed, compressed,
 * past LEN, a '.' in a label: not one presentation name).
 */
static int wire_name(const uint8_t *p, size_t len, struct name_out *out)
{
	size_t at = 0, tl = 0;

	for (;;) {
		uint8_t l;

		if (at >= len)
			return -1;
		l = p[at++];
		if (l == 0)
			break;
		if (l > 63 || l > len - at)	/* pointers: 0xc0; 0x40/0x80 */
			return -1;
		if (tl + (tl ? 1 : 0) + l > NAME_MAX_LEN)
			return -1;
		if (tl)
			out->name[tl++] = '.';
		if (!name_label_lower(out->name + tl, p + at, l))
			return -1;
		tl += l;
		at += l;
	}
	out->name[tl] = '\0';
	out->len = (uint16_t)tl;
	return (int)at;
}

enum name_result name_dns_udp(const uint8_t *p, size_t len,
			      struct name_out *out)
{
	int n;

	name_out_clear(out);
	if (len < DNS_HDR)
		return NAME_BAD;
	if (p[2] & 0x80)
		return NAME_NOT;	/* QR: a response */
	if (rd16(p + 4) != 1)
		return NAME_BAD;	/* QDCOUNT: exactly one question */
	n = wire_name(p + DNS_HDR, len - DNS_HDR, out);
	if (n < 0 || len - DNS_HDR - (size_t)n < 4) {
		name_out_clear(out);
		return NAME_BAD;
	}
	out->qtype = rd16(p + DNS_HDR + n);
	return NAME_DONE;
}

enum name_result name_dns_tcp(const uint8_t *p, size_t len,
			      struct name_out *out)
{
	size_t mlen;

	name_out_clear(out);
	if (len < 2)
		return NAME_MORE;
	mlen = rd16(p);
	if (len - 2 < mlen)
		return NAME_MORE;
	return name_dns_udp(p + 2, mlen, out);
}
