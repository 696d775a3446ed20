/* test_pkt.c - unit tests of IPv4/IPv6/transport header parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
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

static struct pkt parse(size_t len)
{
	/* A heap copy of exactly LEN bytes, so ASan sees any over-read. */
	uint8_t *copy = malloc(len ? len : 1);
	struct pkt p = { 0 };

	memcpy(copy, buf, len);
	p.payload = copy;
	p.payload_len = (uint32_t)len;
	pkt_parse_headers(&p);
	p.payload = NULL;
	free(copy);
	return p;
}

static void test_ipv4_tcp(void **state)
{
	size_t len = ip4(5, IPPROTO_TCP, 20, 0);
	struct pkt p;

	ports(buf + 20, 40000, 22);
	buf[20 + 12] = 5 << 4;
	buf[20 + 13] = TCPF_SYN | TCPF_ACK;
	p = parse(len);
	assert_int_equal(p.flags & (PKT_HAS_L3 | PKT_HAS_L4),
			 PKT_HAS_L3 | PKT_HAS_L4);
	assert_int_equal(p.l3_family, AF_INET);
	assert_int_equal(p.l4proto, IPPROTO_TCP);
	assert_int_equal(p.sport, 40000);
	assert_int_equal(p.dport, 22);
	assert_int_equal(p.tcp_flags, TCPF_SYN | TCPF_ACK);
	assert_memory_equal(p.saddr, "\xc0\x00\x02\x01", 4);
	assert_memory_equal(p.daddr, "\xc6\x33\x64\x07", 4);
	assert_false(p.fragment);

	/* Truncated inside the TCP header: L3 only. */
	p = parse(20 + 19);
	assert_int_equal(p.flags & (PKT_HAS_L3 | PKT_HAS_L4), PKT_HAS_L3);
	/* Bad data offset. */
	buf[20 + 12] = 4 << 4;
	p = parse(len);
	assert_int_equal(p.flags & PKT_HAS_L4, 0);
}

static void test_ipv4_options_udp(void **state)
{
	size_t len = ip4(15, IPPROTO_UDP, 8, 0);
	struct pkt p;

	ports(buf + 60, 5353, 53);
	p = parse(len);
	assert_true(p.flags & PKT_HAS_L4);
	assert_int_equal(p.sport, 5353);
	assert_int_equal(p.dport, 53);
	/* Header longer than the copy. */
	p = parse(59);
	assert_int_equal(p.flags & (PKT_HAS_L3 | PKT_HAS_L4), 0);
	/* IHL below 5. */
	buf[0] = 0x44;
	p = parse(len);
	assert_int_equal(p.flags & (PKT_HAS_L3 | PKT_HAS_L4), 0);
}

static void test_ipv4_total_length(void **state)
{
	size_t len = ip4(5, IPPROTO_UDP, 8, 0);
	struct pkt p;

	/* tot_len says the datagram ends inside the UDP header. */
	put16(buf + 2, 24);
	p = parse(len);
	assert_int_equal(p.flags & (PKT_HAS_L3 | PKT_HAS_L4), PKT_HAS_L3);
	/* tot_len below the header length: malformed. */
	put16(buf + 2, 19);
	p = parse(len);
	assert_int_equal(p.flags & PKT_HAS_L3, 0);
	(void)len;
}

static void test_ipv4_icmp_sctp(void **state)
{
	size_t len = ip4(5, IPPROTO_ICMP, 8, 0);
	struct pkt p;

	buf[20] = 8;
	p = parse(len);
	assert_true(p.flags & PKT_HAS_L4);
	assert_int_equal(p.icmp_type, 8);
	p = parse(23);
	assert_false(p.flags & PKT_HAS_L4);

	len = ip4(5, IPPROTO_SCTP, 12, 0);
	ports(buf + 20, 2905, 2906);
	p = parse(len);
	assert_true(p.flags & PKT_HAS_L4);
	assert_int_equal(p.l4proto, IPPROTO_SCTP);
	assert_int_equal(p.dport, 2906);
	p = parse(len - 1);
	assert_false(p.flags & PKT_HAS_L4);
}

static void test_ipv4_fragments(void **state)
{
	size_t len = ip4(5, IPPROTO_UDP, 8, 0x2000);	/* MF, offset 0 */
	struct pkt p;

	ports(buf + 20, 1, 2);
	p = parse(len);
	assert_false(p.fragment);
	assert_true(p.flags & PKT_HAS_L4);

	len = ip4(5, IPPROTO_UDP, 8, 0x0001);		/* offset 8 */
	ports(buf + 20, 1, 2);
	p = parse(len);
	assert_true(p.fragment);
	assert_true(p.flags & PKT_HAS_L3);
	assert_false(p.flags & PKT_HAS_L4);
	assert_int_equal(p.l4proto, IPPROTO_UDP);
}

static void test_short_and_garbage(void **state)
{
	struct pkt p;

	memset(buf, 0, sizeof(buf));
	for (size_t n = 0; n < 40; n++) {
		/* tot_len 0 (BIG TCP) means "as long as the copy". */
		buf[0] = 0x45;
		p = parse(n);
		assert_int_equal(p.flags & PKT_HAS_L4, 0);
		assert_int_equal(!!(p.flags & PKT_HAS_L3), n >= 20);
		buf[0] = 0x60;
		p = parse(n);
		assert_int_equal(p.flags & (PKT_HAS_L3 | PKT_HAS_L4), 0);
	}
	buf[0] = 0x50;
	p = parse(100);
	assert_int_equal(p.flags & (PKT_HAS_L3 | PKT_HAS_L4), 0);
	/* No payload at all. */
	p = (struct pkt){ 0 };
	pkt_parse_headers(&p);
	assert_int_equal(p.flags, 0);
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

static void test_ipv6_udp_icmp(void **state)
{
	struct pkt p;

	ip6(IPPROTO_UDP, 8);
	ports(buf + 40, 1234, 4321);
	p = parse(48);
	assert_int_equal(p.flags & (PKT_HAS_L3 | PKT_HAS_L4),
			 PKT_HAS_L3 | PKT_HAS_L4);
	assert_int_equal(p.l3_family, AF_INET6);
	assert_int_equal(p.dport, 4321);
	assert_int_equal(p.daddr[15], 2);

	ip6(IPPROTO_ICMPV6, 8);
	buf[40] = 128;
	p = parse(48);
	assert_true(p.flags & PKT_HAS_L4);
	assert_int_equal(p.icmp_type, 128);
	p = parse(43);
	assert_false(p.flags & PKT_HAS_L4);
	assert_true(p.flags & PKT_HAS_L3);
}

static void test_ipv6_ext_chain(void **state)
{
	struct pkt p;
	uint8_t *e;

	/* hop-by-hop (8) -> routing (24) -> dest opts (16) -> AH (16)
	 * -> fragment, offset 0 (8) -> TCP */
	ip6(IPPROTO_HOPOPTS, 8 + 24 + 16 + 16 + 8 + 20);
	e = buf + 40;
	e[0] = IPPROTO_ROUTING;
	e[1] = 0;
	e += 8;
	e[0] = IPPROTO_DSTOPTS;
	e[1] = 2;
	e += 24;
	e[0] = IPPROTO_AH;
	e[1] = 1;
	e += 16;
	e[0] = IPPROTO_FRAGMENT;
	e[1] = 2;	/* (2 + 2) * 4 = 16 */
	e += 16;
	e[0] = IPPROTO_TCP;
	put16(e + 2, 0x0001);	/* offset 0, more fragments */
	e += 8;
	ports(e, 443, 55555);
	e[12] = 5 << 4;
	e[13] = TCPF_RST;
	p = parse((size_t)(e + 20 - buf));
	assert_int_equal(p.flags & (PKT_HAS_L3 | PKT_HAS_L4),
			 PKT_HAS_L3 | PKT_HAS_L4);
	assert_int_equal(p.l4proto, IPPROTO_TCP);
	assert_int_equal(p.sport, 443);
	assert_int_equal(p.tcp_flags, TCPF_RST);
	assert_false(p.fragment);

	/* Every truncation inside the chain: no L3; inside TCP: no L4. */
	for (size_t n = 40; n < (size_t)(e - buf); n++) {
		p = parse(n);
		assert_false(p.flags & PKT_HAS_L4);
	}
	p = parse(41);
	assert_false(p.flags & PKT_HAS_L3);

	/* Now a non-first fragment. */
	put16(e - 8 + 2, 0x0008);
	p = parse((size_t)(e + 20 - buf));
	assert_true(p.fragment);
	assert_true(p.flags & PKT_HAS_L3);
	assert_false(p.flags & PKT_HAS_L4);
	assert_int_equal(p.l4proto, IPPROTO_TCP);
}

static void test_ipv6_loop_and_none(void **state)
{
	struct pkt p;

	/* A chain longer than the limit of extension headers. */
	ip6(IPPROTO_DSTOPTS, 0);
	for (int i = 0; i < 40; i++) {
		buf[40 + i * 8] = IPPROTO_DSTOPTS;
		buf[40 + i * 8 + 1] = 0;
	}
	p = parse(40 + 40 * 8);
	assert_false(p.flags & PKT_HAS_L3);

	ip6(IPPROTO_NONE, 0);
	p = parse(60);
	assert_true(p.flags & PKT_HAS_L3);
	assert_false(p.flags & PKT_HAS_L4);
	assert_int_equal(p.l4proto, IPPROTO_NONE);

	/* payload length shorter than the UDP header. */
	ip6(IPPROTO_UDP, 4);
	p = parse(48);
	assert_true(p.flags & PKT_HAS_L3);
	assert_false(p.flags & PKT_HAS_L4);
}

static void test_ipv6_sctp(void **state)
{
	struct pkt p;

	ip6(IPPROTO_SCTP, 12);
	ports(buf + 40, 36412, 36412);
	p = parse(52);
	assert_true(p.flags & PKT_HAS_L4);
	assert_int_equal(p.sport, 36412);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_tcp),
		cmocka_unit_test(test_ipv4_options_udp),
		cmocka_unit_test(test_ipv4_total_length),
		cmocka_unit_test(test_ipv4_icmp_sctp),
		cmocka_unit_test(test_ipv4_fragments),
		cmocka_unit_test(test_short_and_garbage),
		cmocka_unit_test(test_ipv6_udp_icmp),
		cmocka_unit_test(test_ipv6_ext_chain),
		cmocka_unit_test(test_ipv6_loop_and_none),
		cmocka_unit_test(test_ipv6_sctp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
