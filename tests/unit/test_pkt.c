/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_pkt.c - unit tests of IPv4/IPv6/transport header parsing: what is
 * PRESENT, ABSENT or INCOMPLETE for a given copy of a given packet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <linux/netfilter.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

static uint8_t buf[2048];

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

/* IPv4 header with IHL words, protocol PROTO, L4LEN bytes after it. */
static size_t ip4(unsigned ihl, uint8_t proto, size_t l4len, uint16_t frag)
{
	memset(buf, 0, sizeof(buf));
	buf[0] = (uint8_t)(0x40 | ihl);
	put16(buf + 2, (uint16_t)(ihl * 4 + l4len));
	put16(buf + 6, frag);
	buf[8] = 64;
	buf[9] = proto;
	inet_pton(AF_INET, "192.0.2.1", buf + 12);
	inet_pton(AF_INET, "198.51.100.7", buf + 16);
	for (unsigned i = 20; i < ihl * 4; i++)
		buf[i] = 1;	/* NOP options */
	return ihl * 4 + l4len;
}

static void ports(uint8_t *l4, uint16_t sp, uint16_t dp)
{
	put16(l4, sp);
	put16(l4 + 2, dp);
}

/* The first COPY bytes of buf as the copy of a packet of ORIG bytes
 * (0: the copy is the whole packet), queued by FAMILY (0: none). */
static struct pkt parse_fam(uint8_t family, size_t copy, size_t orig)
{
	/* A heap copy of exactly COPY bytes, so ASan sees any over-read. */
	uint8_t *c = malloc(copy ? copy : 1);
	struct pkt p = { 0 };

	memcpy(c, buf, copy);
	p.family = family;
	p.payload = copy ? c : NULL;
	p.payload_len = (uint32_t)copy;
	p.orig_len = (uint32_t)orig;
	pkt_parse_headers(&p);
	p.payload = NULL;
	free(c);
	return p;
}

static struct pkt parse(size_t copy, size_t orig)
{
	return parse_fam(0, copy, orig);
}

#define TH(p, f)	pkt_th_state(&(p), PKT_TH_##f##_END)

static void test_ipv4_tcp(void **state)
{
	size_t len = ip4(5, IPPROTO_TCP, 20, 0);
	struct pkt p;

	ports(buf + 20, 40000, 22);
	buf[20 + 12] = 5 << 4;
	buf[20 + 13] = TCPF_SYN | TCPF_ACK;
	p = parse(len, 0);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l3_family, AF_INET);
	assert_int_equal(p.l4proto, IPPROTO_TCP);
	assert_int_equal(p.ip_protocol, IPPROTO_TCP);
	assert_int_equal(TH(p, SPORT), PKT_PRESENT);
	assert_int_equal(TH(p, FLAGS), PKT_PRESENT);
	assert_int_equal(p.sport, 40000);
	assert_int_equal(p.dport, 22);
	assert_int_equal(p.tcp_flags, TCPF_SYN | TCPF_ACK);
	assert_memory_equal(p.saddr, "\xc0\x00\x02\x01", 4);
	assert_memory_equal(p.daddr, "\xc6\x33\x64\x07", 4);
	assert_false(p.fragment);

	/* A data offset below 5 does not stop nft reading the ports. */
	buf[20 + 12] = 4 << 4;
	p = parse(len, 0);
	assert_int_equal(TH(p, DPORT), PKT_PRESENT);
	assert_int_equal(TH(p, FLAGS), PKT_PRESENT);
}

/* Each transport field is read at its own bytes: in the copy PRESENT,
 * in the packet only INCOMPLETE, past the packet ABSENT. */
static void test_ipv4_transport_bytes(void **state)
{
	size_t len = ip4(5, IPPROTO_TCP, 20, 0);
	struct pkt p;

	ports(buf + 20, 40000, 23);
	buf[20 + 13] = TCPF_SYN;
	p = parse(20 + 3, len);
	assert_int_equal(TH(p, SPORT), PKT_PRESENT);
	assert_int_equal(TH(p, DPORT), PKT_INCOMPLETE);
	assert_int_equal(TH(p, FLAGS), PKT_INCOMPLETE);
	assert_int_equal(p.sport, 40000);
	assert_int_equal(p.dport, 0);
	p = parse(20 + 13, len);
	assert_int_equal(TH(p, DPORT), PKT_PRESENT);
	assert_int_equal(p.dport, 23);
	assert_int_equal(TH(p, FLAGS), PKT_INCOMPLETE);
	p = parse(20, len);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(TH(p, SPORT), PKT_INCOMPLETE);

	/* The packet itself ends after 3 bytes of TCP header. */
	ip4(5, IPPROTO_TCP, 3, 0);
	ports(buf + 20, 40000, 23);
	p = parse(23, 0);
	assert_int_equal(TH(p, SPORT), PKT_PRESENT);
	assert_int_equal(TH(p, DPORT), PKT_ABSENT);
	assert_int_equal(TH(p, FLAGS), PKT_ABSENT);
	/* tot_len shorter than the packet: nft reads to the skb's end. */
	put16(buf + 2, 22);
	p = parse(23, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(TH(p, SPORT), PKT_PRESENT);
}

/* Up to 40 bytes of options and a copy that ends inside them. */
static void test_ipv4_options_small_copy(void **state)
{
	size_t len = ip4(15, IPPROTO_UDP, 8, 0);
	struct pkt p;

	ports(buf + 60, 5353, 53);
	p = parse(len, 0);
	assert_int_equal(TH(p, DPORT), PKT_PRESENT);
	assert_int_equal(p.sport, 5353);
	assert_int_equal(p.dport, 53);
	for (size_t copy = 20; copy < 64; copy++) {
		p = parse(copy, len);
		assert_int_equal(p.l3, PKT_PRESENT);
		assert_memory_equal(p.saddr, "\xc0\x00\x02\x01", 4);
		assert_int_equal(p.l4, PKT_PRESENT);
		assert_int_equal(p.l4proto, IPPROTO_UDP);
		assert_int_equal(TH(p, SPORT), copy >= 62 ? PKT_PRESENT :
						PKT_INCOMPLETE);
		assert_int_equal(TH(p, DPORT), PKT_INCOMPLETE);
	}
}

/* As nft_set_pktinfo_ipv4_validate(), but fail closed: INCOMPLETE. */
static void test_ipv4_malformed(void **state)
{
	size_t len = ip4(5, IPPROTO_UDP, 8, 0);
	struct pkt p;

	buf[0] = 0x44;			/* IHL below 5 */
	p = parse(len, 0);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.ip_protocol, IPPROTO_UDP);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	assert_int_equal(TH(p, DPORT), PKT_INCOMPLETE);

	len = ip4(5, IPPROTO_UDP, 8, 0);
	put16(buf + 2, 29);		/* tot_len beyond the packet */
	p = parse(len, 0);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	p = parse(len, 29);		/* ... but not beyond the original */
	assert_int_equal(p.l4, PKT_PRESENT);
	put16(buf + 2, 19);		/* tot_len below the header length */
	p = parse(len, 0);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	ip4(15, IPPROTO_UDP, 0, 0);	/* tot_len 60 == IHL: no UDP */
	p = parse(60, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(TH(p, SPORT), PKT_ABSENT);

	len = ip4(5, IPPROTO_UDP, 8, 0);
	put16(buf + 2, 0);		/* BIG TCP: the whole packet */
	ports(buf + 20, 1, 2);
	p = parse(len, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.dport, 2);
}

static void test_ipv4_icmp(void **state)
{
	size_t len = ip4(5, IPPROTO_ICMP, 8, 0);
	struct pkt p;

	buf[20] = 8;
	p = parse(len, 0);
	assert_int_equal(TH(p, TYPE), PKT_PRESENT);
	assert_int_equal(p.icmp_type, 8);
	p = parse(21, len);
	assert_int_equal(TH(p, TYPE), PKT_PRESENT);
	p = parse(20, len);
	assert_int_equal(TH(p, TYPE), PKT_INCOMPLETE);
	/* A packet that ends with its IP header has no ICMP type. */
	len = ip4(5, IPPROTO_ICMP, 0, 0);
	p = parse(len, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(TH(p, TYPE), PKT_ABSENT);
	/* A packet shorter than its tot_len: malformed. */
	len = ip4(5, IPPROTO_ICMP, 8, 0);
	p = parse(20, 20);
	assert_int_equal(TH(p, TYPE), PKT_INCOMPLETE);
}

static void test_ipv4_fragments(void **state)
{
	size_t len = ip4(5, IPPROTO_TCP, 4, 0x2000);	/* MF, offset 0 */
	struct pkt p;

	/* A first fragment with only 4 bytes of TCP: ports, no flags. */
	ports(buf + 20, 1, 23);
	p = parse(len, 0);
	assert_false(p.fragment);
	assert_true(p.first_fragment);
	assert_int_equal(TH(p, DPORT), PKT_PRESENT);
	assert_int_equal(p.dport, 23);
	assert_int_equal(TH(p, FLAGS), PKT_ABSENT);

	len = ip4(5, IPPROTO_UDP, 8, 0x0001);		/* offset 8 */
	ports(buf + 20, 1, 2);
	p = parse(len, 0);
	assert_true(p.fragment);
	assert_false(p.first_fragment);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l4proto, IPPROTO_UDP);
	assert_int_equal(TH(p, SPORT), PKT_ABSENT);
	p = parse(20, 1000);
	assert_int_equal(TH(p, SPORT), PKT_ABSENT);
}

static void test_short_and_garbage(void **state)
{
	struct pkt p;

	memset(buf, 0, sizeof(buf));
	for (size_t n = 1; n < 40; n++) {
		buf[0] = 0x45;
		p = parse(n, 1500);
		assert_int_equal(p.l3, n >= 20 ? PKT_PRESENT : PKT_INCOMPLETE);
		buf[0] = 0x60;
		p = parse(n, 1500);
		assert_int_equal(p.l3, PKT_INCOMPLETE);
		assert_int_equal(p.l4, PKT_INCOMPLETE);
		assert_int_equal(p.l3_family, AF_INET6);
	}
	/* Neither version, no family from the queue: not an IP packet. */
	buf[0] = 0x50;
	p = parse(100, 0);
	assert_int_equal(p.l3_family, 0);
	assert_int_equal(p.l3, PKT_ABSENT);
	assert_int_equal(p.l4, PKT_ABSENT);
	/* The queue says IPv4, the header does not: malformed. */
	p = parse_fam(NFPROTO_IPV4, 100, 0);
	assert_int_equal(p.l3_family, AF_INET);
	assert_int_equal(p.l3, PKT_INCOMPLETE);
	buf[0] = 0x45;
	p = parse_fam(NFPROTO_IPV6, 100, 0);
	assert_int_equal(p.l3, PKT_INCOMPLETE);
	/* Nothing copied (copy-range 0): everything INCOMPLETE. */
	p = parse_fam(NFPROTO_IPV6, 0, 0);
	assert_int_equal(p.l3_family, AF_INET6);
	assert_int_equal(p.l3, PKT_INCOMPLETE);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	assert_int_equal(TH(p, DPORT), PKT_INCOMPLETE);
	p = (struct pkt){ 0 };
	pkt_parse_headers(&p);
	assert_int_equal(p.l3, PKT_ABSENT);
}

/* IPv6 header; the extension chain is appended by the caller. */
static void ip6(uint8_t next, uint16_t plen)
{
	memset(buf, 0, sizeof(buf));
	buf[0] = 0x60;
	put16(buf + 4, plen);
	buf[6] = next;
	buf[7] = 64;
	inet_pton(AF_INET6, "2001:db8::1", buf + 8);
	inet_pton(AF_INET6, "2001:db8::2", buf + 24);
}

/* N destination-options headers of 8 bytes after the IPv6 header, then
 * a UDP header with ports 1234 -> 7; returns the packet length. */
static size_t ip6_dst_chain(unsigned n)
{
	size_t len = 40 + 8 * (size_t)n + 8;

	ip6(n ? IPPROTO_DSTOPTS : IPPROTO_UDP, (uint16_t)(len - 40));
	for (unsigned i = 0; i < n; i++)
		buf[40 + i * 8] = i + 1 < n ? IPPROTO_DSTOPTS : IPPROTO_UDP;
	ports(buf + len - 8, 1234, 7);
	put16(buf + len - 4, 8);
	return len;
}

static void test_ipv6_udp_icmp(void **state)
{
	struct pkt p;

	ip6(IPPROTO_UDP, 8);
	ports(buf + 40, 1234, 4321);
	p = parse(48, 0);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l3_family, AF_INET6);
	assert_int_equal(p.dport, 4321);
	assert_int_equal(p.daddr[15], 2);

	ip6(IPPROTO_ICMPV6, 8);
	buf[40] = 128;
	p = parse(48, 0);
	assert_int_equal(TH(p, TYPE), PKT_PRESENT);
	assert_int_equal(p.icmp_type, 128);
	p = parse(40, 48);
	assert_int_equal(TH(p, TYPE), PKT_INCOMPLETE);
	assert_int_equal(p.l3, PKT_PRESENT);

	/* payload length 2: the packet ends inside the UDP header. */
	ip6(IPPROTO_UDP, 2);
	ports(buf + 40, 1, 2);
	p = parse(42, 0);
	assert_int_equal(TH(p, SPORT), PKT_PRESENT);
	assert_int_equal(TH(p, DPORT), PKT_ABSENT);
}

static void test_ipv6_ext_chain(void **state)
{
	struct pkt p;
	uint8_t *e;
	size_t len;

	/* hop-by-hop (8) -> routing (24) -> dest opts (16) -> fragment,
	 * offset 0 (8) -> TCP */
	ip6(IPPROTO_HOPOPTS, 8 + 24 + 16 + 8 + 20);
	e = buf + 40;
	e[0] = IPPROTO_ROUTING;
	e[1] = 0;
	e += 8;
	e[0] = IPPROTO_DSTOPTS;
	e[1] = 2;
	e += 24;
	e[0] = IPPROTO_FRAGMENT;
	e[1] = 1;
	e += 16;
	e[0] = IPPROTO_TCP;
	put16(e + 2, 0x0001);	/* offset 0, more fragments */
	e += 8;
	ports(e, 443, 55555);
	e[12] = 5 << 4;
	e[13] = TCPF_RST;
	len = (size_t)(e + 20 - buf);
	p = parse(len, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l4proto, IPPROTO_TCP);
	assert_int_equal(p.sport, 443);
	assert_int_equal(p.tcp_flags, TCPF_RST);
	assert_false(p.fragment);
	assert_true(p.first_fragment);

	/* Every copy that ends inside the chain: addresses still there,
	 * the protocol INCOMPLETE; inside TCP: field by field. */
	for (size_t n = 40; n < len; n++) {
		p = parse(n, len);
		assert_int_equal(p.l3, PKT_PRESENT);
		assert_int_equal(p.saddr[15], 1);
		if (n < (size_t)(e - buf) - 4) {
			assert_int_equal(p.l4, PKT_INCOMPLETE);
			assert_int_equal(TH(p, SPORT), PKT_INCOMPLETE);
		} else {
			assert_int_equal(p.l4, PKT_PRESENT);
			assert_int_equal(TH(p, DPORT),
				n >= (size_t)(e - buf) + 4 ? PKT_PRESENT :
							     PKT_INCOMPLETE);
		}
	}

	/* Now a non-first fragment: the protocol, no transport header. */
	put16(e - 8 + 2, 0x0008);
	p = parse(len, 0);
	assert_true(p.fragment);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l4proto, IPPROTO_TCP);
	assert_int_equal(TH(p, DPORT), PKT_ABSENT);
	/* ... whose next header is another extension header: nft finds no
	 * protocol at all. */
	e[-8] = IPPROTO_DSTOPTS;
	p = parse(len, 0);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_ABSENT);
	assert_int_equal(TH(p, DPORT), PKT_ABSENT);
}

/* A hop-by-hop header is walked wherever it is, as nft walks it; after
 * another header it marks the packet (the receiving host discards it),
 * as does a destination option the host does not know. */
static void test_ipv6_ext_discard(void **state)
{
	struct pkt p;

	(void)state;
	/* hop-by-hop -> UDP: in place */
	ip6(IPPROTO_HOPOPTS, 16);
	buf[40] = IPPROTO_UDP;
	ports(buf + 48, 1234, 53);
	p = parse(56, 0);
	assert_int_equal(p.l4proto, IPPROTO_UDP);
	assert_false(p.flags & PKT_EXT_DISCARD);
	/* hop-by-hop -> hop-by-hop -> UDP, dest opts -> hop-by-hop -> UDP */
	for (int k = 0; k < 2; k++) {
		ip6(k ? IPPROTO_DSTOPTS : IPPROTO_HOPOPTS, 24);
		buf[40] = IPPROTO_HOPOPTS;
		buf[48] = IPPROTO_UDP;
		ports(buf + 56, 1234, 53);
		p = parse(64, 0);
		assert_int_equal(p.l4, PKT_PRESENT);
		assert_int_equal(p.l4proto, IPPROTO_UDP);
		assert_int_equal(p.dport, 53);
		assert_true(p.flags & PKT_EXT_DISCARD);
	}
	/* A destination option: of a type the host does not know whose
	 * high bits say discard (0x8b, 10: discard), or running past its
	 * header: marked; an unknown type to skip (0x1e, 00), PadN, the
	 * Home Address option (0xc9): not. */
	{
		static const struct { uint8_t opt[6]; bool discard; } c[] = {
			{ { 0x8b, 4, 0, 0, 0, 0 }, true },
			{ { 0x4b, 4, 0, 0, 0, 0 }, true },
			{ { 0x1, 2, 0, 0, 0x1e, 0 }, false },
			{ { 0x1e, 4, 1, 2, 3, 4 }, false },
			{ { 0xc9, 4, 0, 0, 0, 0 }, false },
			{ { 0x1, 5, 0, 0, 0, 0 }, true },
			{ { 0, 0, 0, 0, 0, 0 }, false },
		};

		for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
			ip6(IPPROTO_DSTOPTS, 16);
			buf[40] = IPPROTO_UDP;
			memcpy(buf + 42, c[k].opt, 6);
			ports(buf + 48, 1234, 53);
			p = parse(56, 0);
			assert_int_equal(p.l4proto, IPPROTO_UDP);
			assert_int_equal(!!(p.flags & PKT_EXT_DISCARD),
					 c[k].discard);
			/* Cut inside the header: not read, not marked. */
			p = parse(44, 56);
			assert_false(p.flags & PKT_EXT_DISCARD);
		}
	}
	/* The mark is the packet's: parsed again without, it goes. */
	ip6(IPPROTO_UDP, 8);
	ports(buf + 40, 1234, 53);
	p.payload = buf;
	p.payload_len = p.orig_len = 48;
	pkt_parse_headers(&p);
	assert_false(p.flags & PKT_EXT_DISCARD);
}

static void test_ipv6_long_chains(void **state)
{
	struct pkt p;
	size_t len;

	/* 30 headers: far more than the old limit of 16, all in the copy. */
	len = ip6_dst_chain(30);
	p = parse(len, 0);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l4proto, IPPROTO_UDP);
	assert_int_equal(p.dport, 7);
	/* ... with a copy of 256 bytes: the chain leaves the copy. */
	p = parse(256, len);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_memory_equal(p.saddr, buf + 8, 16);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	assert_int_equal(TH(p, DPORT), PKT_INCOMPLETE);

	/* The walk limit, and one header past it. */
	len = ip6_dst_chain(PKT_MAX_EXTHDRS);
	p = parse(len, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.dport, 7);
	len = ip6_dst_chain(PKT_MAX_EXTHDRS + 1);
	p = parse(len, 0);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	assert_int_equal(TH(p, DPORT), PKT_INCOMPLETE);
}

static void test_ipv6_malformed(void **state)
{
	struct pkt p;
	size_t len;

	/* A header whose length runs past the end of the packet. */
	len = ip6_dst_chain(3);
	buf[40 + 8 + 1] = 20;
	p = parse(len, 0);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	/* The packet ends inside an extension header's first bytes. */
	len = ip6_dst_chain(3);
	put16(buf + 4, 9);
	p = parse(49, 0);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	/* A payload length beyond the packet. */
	len = ip6_dst_chain(1);
	put16(buf + 4, 100);
	p = parse(len, 0);
	assert_int_equal(p.l3, PKT_PRESENT);
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	/* Payload length 0 (jumbogram, BIG TCP): the whole packet. */
	put16(buf + 4, 0);
	p = parse(len, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.dport, 7);
}

/* As nft (IP6_FH_F_AUTH): AH is the transport protocol, not skipped. */
static void test_ipv6_ah_none_esp(void **state)
{
	struct pkt p;

	ip6(IPPROTO_AH, 16 + 20);
	buf[40] = IPPROTO_TCP;
	buf[41] = 2;		/* (2 + 2) * 4 = 16 bytes */
	ports(buf + 56, 1, 23);
	p = parse(76, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l4proto, IPPROTO_AH);
	p = parse(41, 76);	/* the AH header's first 2 bytes not copied */
	assert_int_equal(p.l4, PKT_INCOMPLETE);
	p = parse(42, 76);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l4proto, IPPROTO_AH);

	ip6(IPPROTO_HOPOPTS, 8);
	buf[40] = IPPROTO_NONE;
	p = parse(48, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l4proto, IPPROTO_NONE);

	ip6(IPPROTO_ESP, 8);
	p = parse(48, 0);
	assert_int_equal(p.l4, PKT_PRESENT);
	assert_int_equal(p.l4proto, IPPROTO_ESP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_tcp),
		cmocka_unit_test(test_ipv4_transport_bytes),
		cmocka_unit_test(test_ipv4_options_small_copy),
		cmocka_unit_test(test_ipv4_malformed),
		cmocka_unit_test(test_ipv4_icmp),
		cmocka_unit_test(test_ipv4_fragments),
		cmocka_unit_test(test_short_and_garbage),
		cmocka_unit_test(test_ipv6_udp_icmp),
		cmocka_unit_test(test_ipv6_ext_chain),
		cmocka_unit_test(test_ipv6_ext_discard),
		cmocka_unit_test(test_ipv6_long_chains),
		cmocka_unit_test(test_ipv6_malformed),
		cmocka_unit_test(test_ipv6_ah_none_esp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
