/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_flow.c - the flow table's QUIC flows: a client Initial settles the
 * flow's name, the connection's later short-header packets (which carry
 * no name) get it and a drop on it, other UDP packets get none, and a
 * flow evicted or cleared is forgotten; TCP flows that gather, settle and
 * are evicted; and all of it again through flow_ahead(), the queue's
 * look-ahead, which must change no name.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/netfilter.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "names.h"
#include "pkt.h"
#include "quic_build.h"

#define UDP_HL 8

static uint8_t ip[1500];
static struct pkt_names out;

/* An IPv4 header from 192.0.2.1:SPORT to 198.51.100.7:DPORT, protocol
 * PROTO, HL transport header bytes (zeroed), then LEN bytes of DATA. */
static void ip4(uint8_t proto, uint16_t sport, uint16_t dport, size_t hl,
		const void *data, size_t len)
{
	size_t n = 20 + hl + len;

	memset(ip, 0, 20 + hl);
	ip[0] = 0x45;
	ip[2] = (uint8_t)(n >> 8);
	ip[3] = (uint8_t)n;
	ip[8] = 64;
	ip[9] = proto;
	inet_pton(AF_INET, "192.0.2.1", ip + 12);
	inet_pton(AF_INET, "198.51.100.7", ip + 16);
	ip[20] = (uint8_t)(sport >> 8);
	ip[21] = (uint8_t)sport;
	ip[22] = (uint8_t)(dport >> 8);
	ip[23] = (uint8_t)dport;
	memcpy(ip + 20 + hl, data, len);
}

/* The packet in ip[] (N bytes), parsed. */
static struct pkt parsed(size_t n)
{
	struct pkt p = { 0 };

	p.payload = ip;
	p.payload_len = (uint32_t)n;
	p.orig_len = (uint32_t)n;
	pkt_parse_headers(&p);
	assert_int_equal(p.l4, PKT_PRESENT);
	return p;
}

/* UDP from SPORT to DPORT around the LEN bytes at DATA. */
static struct pkt udp(uint16_t sport, uint16_t dport, const uint8_t *data,
		      size_t len)
{
	ip4(IPPROTO_UDP, sport, dport, UDP_HL, data, len);
	ip[24] = (uint8_t)((UDP_HL + len) >> 8);
	ip[25] = (uint8_t)(UDP_HL + len);
	return parsed(20 + UDP_HL + len);
}

/* The TCP header in ip[]: SEQ, a 20-byte header, FLAGS. */
static void tcp_fields(uint32_t seq, uint8_t flags)
{
	ip[24] = (uint8_t)(seq >> 24);
	ip[25] = (uint8_t)(seq >> 16);
	ip[26] = (uint8_t)(seq >> 8);
	ip[27] = (uint8_t)seq;
	ip[32] = 0x50;		/* data offset 5 */
	ip[33] = flags;
}

/* A TCP segment from SPORT to DPORT with FLAGS, SEQ and the LEN bytes
 * at DATA. */
static struct pkt tcp_to(uint16_t sport, uint16_t dport, uint8_t flags,
			 uint32_t seq, const void *data, size_t len)
{
	ip4(IPPROTO_TCP, sport, dport, 20, data, len);
	tcp_fields(seq, flags);
	return parsed(40 + len);
}

/* A TCP segment back from the server, port 80, to the client's SPORT. */
static struct pkt back(uint16_t sport, uint8_t flags, uint32_t seq,
		       const char *data, size_t len)
{
	uint8_t a[4];

	ip4(IPPROTO_TCP, 80, sport, 20, data, len);
	memcpy(a, ip + 12, 4);
	memcpy(ip + 12, ip + 16, 4);
	memcpy(ip + 16, a, 4);
	tcp_fields(seq, flags);
	return parsed(40 + len);
}

/* ... to port 80. */
static struct pkt tcp(uint16_t sport, uint8_t flags, uint32_t seq,
		      const char *data, size_t len)
{
	return tcp_to(sport, 80, flags, seq, data, len);
}

static struct pkt syn(uint16_t sport)
{
	return tcp(sport, TCPF_SYN, 1, "", 0);
}

static uint8_t initial[1300], pl[1200];
static size_t initial_len;

/* RFC 9001 A.2's client Initial: a ClientHello for example.com. */
static void make_initial(void)
{
	uint8_t hdr[64];
	size_t hl = unhex("c300000001088394c8f03e5157080000449e00000002", hdr);

	memset(pl, 0, sizeof(pl));
	unhex(A2_CRYPTO, pl);
	initial_len = quic_protect(QUIC_V1, hdr, hl, 4, 2, pl, 1162, initial);
}

/* A 1-RTT packet: short header, the rest opaque. */
static const uint8_t short_hdr[40] = { 0x43, 0x83, 0x94, 0xc8 };

/* Every test runs twice: as a packet is judged alone, and as the queue
 * judges one after flow_ahead() (its look-ahead): the same names. */
static bool use_ahead;

static int plain(void **state)
{
	(void)state;
	use_ahead = false;
	return 0;
}

static int ahead(void **state)
{
	(void)state;
	use_ahead = true;
	return 0;
}

/* The time of the last packet judged (ns). */
static uint64_t now = 1000000;

/* P's names into OUT, a microsecond after the last packet; its flow. */
static void *names_of(struct flowtab *t, struct pkt p, enum flow_fate *fate)
{
	struct flow_ahead a;

	now += 1000;
	if (!use_ahead)
		return flow_names(t, &p, now, NULL, &out, fate);
	flow_ahead(t, &p, &a, NULL);
	flow_ahead_line(t, &p, &a, NULL, now);
	return flow_names(t, &p, now, &a, &out, fate);
}

/* A TLS record holding RFC 9001 A.2's ClientHello (for example.com). */
static size_t client_hello(uint8_t *rec)
{
	uint8_t crypto[512];
	size_t n = unhex(A2_CRYPTO, crypto) - 4;	/* less the frame head */

	rec[0] = 0x16;
	rec[1] = 3;
	rec[2] = 1;
	rec[3] = (uint8_t)(n >> 8);
	rec[4] = (uint8_t)n;
	memcpy(rec + 5, crypto + 4, n);
	return 5 + n;
}

/* flow_ahead() guesses a ClientHello whole in one segment; flow_names()
 * takes the guess only for the bytes it stands for: the flow's first,
 * on a port that is not DNS. */
static void test_tls_ahead(void **state)
{
	static const uint16_t dns[] = { 53 };
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	struct flow_ahead a;
	enum flow_fate fate;
	uint8_t rec[600];
	size_t n = client_hello(rec);
	struct pkt p;

	(void)state;
	assert_non_null(t);

	/* The flow's first bytes: the name, with or without the guess. */
	names_of(t, tcp_to(4000, 443, TCPF_SYN, 1, "", 0), &fate);
	p = tcp_to(4000, 443, TCPF_ACK, 2, rec, n);
	flow_ahead(t, &p, &a, NULL);
	assert_int_equal(a.names.state, PKT_PRESENT);
	assert_string_equal(a.names.n.name, "example.com");
	names_of(t, p, &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_int_equal(out.proto, NP_TLS);
	assert_string_equal(out.n.name, "example.com");

	/* The same bytes 100 bytes into a stream: not its start, no name. */
	names_of(t, tcp_to(4001, 443, TCPF_SYN, 1, "", 0), &fate);
	names_of(t, tcp_to(4001, 443, TCPF_ACK, 102, rec, n), &fate);
	assert_int_equal(out.state, NAMES_PENDING);

	/* To a DNS port it is a DNS stream, never a ClientHello. */
	p = tcp_to(4002, 53, TCPF_ACK, 2, rec, n);
	flow_ahead(t, &p, &a, NULL);
	assert_int_equal(a.names.state, PKT_ABSENT);
	names_of(t, tcp_to(4002, 53, TCPF_SYN, 1, "", 0), &fate);
	names_of(t, tcp_to(4002, 53, TCPF_ACK, 2, rec, n), &fate);
	assert_int_not_equal(out.proto, NP_TLS);
	flowtab_free(t);
}

/* Segment P's bytes kept in BUF, so that P outlives the next packet
 * built in ip[]. */
static struct pkt kept(struct pkt p, uint8_t *buf)
{
	memcpy(buf, p.payload, p.payload_len);
	p.payload = buf;
	return p;
}

/* flow_ahead_pair() guesses a ClientHello split in two segments, at
 * every byte boundary; and not for segments that are not the two halves
 * of one flow's bytes, in order and whole. */
static void test_tls_pair(void **state)
{
	static const uint16_t dns[] = { 53 };
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	static uint8_t b1[1500], b2[1500];
	struct flow_ahead a1, a2;
	struct name_out n;
	uint8_t rec[600];
	size_t len = client_hello(rec);
	struct pkt p1, p2;

	(void)state;
	assert_non_null(t);
	for (size_t k = 1; k < len; k++) {
		p1 = kept(tcp_to(4000, 443, TCPF_ACK, 2, rec, k), b1);
		p2 = kept(tcp_to(4000, 443, TCPF_ACK, 2 + (uint32_t)k,
				 rec + k, len - k), b2);
		flow_ahead(t, &p1, &a1, NULL);
		flow_ahead(t, &p2, &a2, NULL);
		assert_true(a1.more);
		assert_true(flow_ahead_pair(t, &p1, &a1, &p2, &a2, &n));
		assert_string_equal(n.name, "example.com");
		/* The other way round. */
		assert_false(flow_ahead_pair(t, &p2, &a2, &p1, &a1, &n));
	}
	/* A gap between them, another flow, another port's flow. */
	p1 = kept(tcp_to(4000, 443, TCPF_ACK, 2, rec, 100), b1);
	flow_ahead(t, &p1, &a1, NULL);
	p2 = kept(tcp_to(4000, 443, TCPF_ACK, 103, rec + 100, len - 100), b2);
	flow_ahead(t, &p2, &a2, NULL);
	assert_false(flow_ahead_pair(t, &p1, &a1, &p2, &a2, &n));
	p2 = kept(tcp_to(4001, 443, TCPF_ACK, 102, rec + 100, len - 100), b2);
	flow_ahead(t, &p2, &a2, NULL);
	assert_false(flow_ahead_pair(t, &p1, &a1, &p2, &a2, &n));
	/* A first segment cut short (more sent than copied). */
	p1 = kept(tcp_to(4000, 443, TCPF_ACK, 2, rec, 100), b1);
	p1.th_len += 50;
	flow_ahead(t, &p1, &a1, NULL);
	assert_false(a1.more);
	/* Bytes that are no ClientHello start. */
	p1 = kept(tcp_to(4000, 443, TCPF_ACK, 2, "GET / HTTP/1.1\r\n", 16),
		  b1);
	flow_ahead(t, &p1, &a1, NULL);
	assert_false(a1.more);
	flowtab_free(t);
}

static void test_quic_flow(void **state)
{
	static const uint16_t dns[] = { 53 };
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;
	void *f;

	(void)state;
	assert_non_null(t);
	make_initial();

	/* The Initial: the flow's name. */
	f = names_of(t, udp(40000, 443, initial, initial_len), &fate);
	assert_non_null(f);
	assert_int_equal(fate, FLOW_JUDGE);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_int_equal(out.proto, NP_TLS);
	assert_string_equal(out.n.name, "example.com");

	/* A short-header packet of the connection: the same name. */
	assert_ptr_equal(names_of(t, udp(40000, 443, short_hdr,
					 sizeof(short_hdr)), &fate), f);
	assert_int_equal(fate, FLOW_JUDGE);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "example.com");

	/* Dropped on its name: its later packets stay dropped. */
	flow_note_drop(f);
	names_of(t, udp(40000, 443, short_hdr, sizeof(short_hdr)), &fate);
	assert_int_equal(fate, FLOW_DROP);

	/* Another port's short-header packet: no flow, no name. */
	assert_null(names_of(t, udp(40001, 443, short_hdr,
				    sizeof(short_hdr)), &fate));
	assert_int_equal(fate, FLOW_JUDGE);
	assert_int_equal(out.state, PKT_ABSENT);
	assert_int_equal(flowtab_counters(t)->flows, 1);
	flowtab_free(t);
}

/* RFC 9001 A.2's ClientHello (241 bytes, for example.com) into CH; with
 * OTHER, for exbmple.com: a name of the same length. */
static size_t hello_bytes(uint8_t *ch, bool other)
{
	uint8_t crypto[512];
	size_t n = unhex(A2_CRYPTO, crypto) - 4;	/* less the frame head */

	memcpy(ch, crypto + 4, n);
	if (other)
		for (size_t i = 0; i + 11 <= n; i++)
			if (!memcmp(ch + i, "example.com", 11))
				ch[i + 2] = 'b';
	return n;
}

/* A CRYPTO frame at F: offset OFF, the N bytes at D; its length. */
static size_t crypto_frame(uint8_t *f, uint64_t off, const uint8_t *d,
			   size_t n)
{
	f[0] = 0x06;
	f[1] = (uint8_t)(0x40 | off >> 8);
	f[2] = (uint8_t)off;
	f[3] = (uint8_t)(0x40 | n >> 8);
	f[4] = (uint8_t)n;
	memcpy(f + 5, d, n);
	return 5 + n;
}

/* A client Initial (v1, packet number 2) into OUT with the 8-byte DCID
 * and the FLEN bytes of frames at FR, padded to PLEN; its length. */
static size_t initial_pad(uint8_t *o, const uint8_t dcid[8],
			  const uint8_t *fr, size_t flen, size_t plen)
{
	uint8_t hdr[64];
	size_t hl = unhex("c300000001088394c8f03e5157080000449e00000002", hdr);

	memcpy(hdr + 6, dcid, 8);
	hdr[16] = (uint8_t)(0x40 | (plen + 20) >> 8);
	hdr[17] = (uint8_t)(plen + 20);
	memset(pl, 0, sizeof(pl));
	memcpy(pl, fr, flen);
	return quic_protect(QUIC_V1, hdr, hl, 4, 2, pl, plen, o);
}

/* ... padded as a client pads its Initials (to 1200 bytes). */
static size_t initial_of(uint8_t *o, const uint8_t dcid[8],
			 const uint8_t *fr, size_t flen)
{
	return initial_pad(o, dcid, fr, flen, 1162);
}

/* An Initial with the ClientHello for example.com (or, OTHER,
 * exbmple.com) bytes [OFF, END) into OUT, DCID; its length. */
static size_t hello_initial(uint8_t *o, const uint8_t dcid[8], bool other,
			    size_t off, size_t end)
{
	uint8_t ch[512], fr[600];
	size_t n = hello_bytes(ch, other);

	if (end > n)
		end = n;
	return initial_of(o, dcid, fr, crypto_frame(fr, off, ch + off,
						     end - off));
}

/* UDP datagram P with its IPv4 TTL set to TTL and its hook to HOOK. */
static struct pkt ttl_hook(struct pkt p, uint8_t ttl, uint8_t hook)
{
	ip[8] = ttl;		/* P's bytes are ip[]'s */
	p.hook = hook;
	return p;
}

/* Names of Initial D (N bytes) from port SPORT with TTL at HOOK, into
 * out; the flow handed back. */
static void *initial_at(struct flowtab *t, uint16_t sport, const uint8_t *d,
			size_t n, uint8_t ttl, uint8_t hook)
{
	enum flow_fate fate;

	return names_of(t, ttl_hook(udp(sport, 443, d, n), ttl, hook), &fate);
}

/* Where packets go on to another host, a client's datagrams share one
 * TTL: an Initial of the flow's DCID with a lower one than its first is
 * a fake (INCOMPLETE itself, the flow's name stays), with a higher one
 * the first was (the flow's name is INCOMPLETE). At input, no fake. */
static void test_quic_ttl(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const uint8_t da[8] = { 0xa, 1, 2, 3, 4, 5, 6, 7 };
	static uint8_t a[1400], b[1400];
	const uint8_t fw = NF_INET_FORWARD;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	size_t na = hello_initial(a, da, false, 0, 9999);
	size_t nb = hello_initial(b, da, true, 0, 9999);

	(void)state;
	assert_non_null(t);
	/* The fake first (exbmple.com, TTL 3), then the real one. */
	initial_at(t, 41000, b, nb, 3, fw);
	assert_string_equal(out.n.name, "exbmple.com");
	assert_non_null(initial_at(t, 41000, a, na, 64, fw));
	assert_int_equal(out.state, PKT_INCOMPLETE);
	initial_at(t, 41000, b, nb, 64, fw);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	/* The real one first, then a fake: the fake's own. */
	initial_at(t, 41001, a, na, 64, fw);
	assert_string_equal(out.n.name, "example.com");
	assert_null(initial_at(t, 41001, b, nb, 3, fw));
	assert_int_equal(out.state, PKT_INCOMPLETE);
	initial_at(t, 41001, a, na, 64, fw);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "example.com");
	/* At input this host takes any TTL: the flow's name. */
	initial_at(t, 41002, a, na, 3, NF_INET_LOCAL_IN);
	initial_at(t, 41002, a, na, 64, NF_INET_LOCAL_IN);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "example.com");
	flowtab_free(t);
}

/* A QUIC server tells connections apart by their DCID, the flow table by
 * their ports: a client Initial from the ports of a settled QUIC flow
 * that opens with its own, other DCID is another connection, judged on
 * its own name (a ClientHello whole or gathered), never on the flow's;
 * a client's Initials after it took the server's connection ID (sealed
 * with its first DCID's keys: none that nfqd can open) keep the flow's
 * name; an Initial that opens with another DCID without the start of a
 * ClientHello, or a datagram of two DCIDs, is INCOMPLETE. */
static void test_quic_dcid(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const uint8_t da[8] = { 0xa, 1, 2, 3, 4, 5, 6, 7 };
	static const uint8_t db[8] = { 0xb, 1, 2, 3, 4, 5, 6, 7 };
	static const uint8_t dc[8] = { 0xc, 1, 2, 3, 4, 5, 6, 7 };
	static const uint8_t ds[8] = { 0x5, 1, 2, 3, 4, 5, 6, 7 };
	static const uint8_t ack[] = { 0x02, 0x00, 0x00, 0x00, 0x00 };
	static uint8_t a[1400], b[1400], two[1400];
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;
	size_t na, nb;
	void *f;

	(void)state;
	assert_non_null(t);
	/* The decoy, then another connection's Initial for another name. */
	na = hello_initial(a, da, false, 0, 512);
	f = names_of(t, udp(40000, 443, a, na), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "example.com");
	nb = hello_initial(b, db, true, 0, 512);
	assert_ptr_equal(names_of(t, udp(40000, 443, b, nb), &fate), f);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "exbmple.com");
	/* Its retransmission: the same. */
	names_of(t, udp(40000, 443, b, nb), &fate);
	assert_string_equal(out.n.name, "exbmple.com");
	/* The client's ACK after the server's Initial: the server's
	 * connection ID, sealed with keys nfqd cannot derive from it (built
	 * with its first DCID's, then the DCID changed). */
	nb = initial_of(b, db, ack, sizeof(ack));
	memcpy(b + 6, ds, 8);
	names_of(t, udp(40000, 443, b, nb), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "exbmple.com");
	/* A short-header packet: the flow's name. */
	names_of(t, udp(40000, 443, short_hdr, sizeof(short_hdr)), &fate);
	assert_string_equal(out.n.name, "exbmple.com");
	/* Another DCID, the ClientHello's end alone: no name to read. */
	na = hello_initial(a, dc, false, 100, 512);
	names_of(t, udp(40000, 443, a, na), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	/* Two DCIDs in one datagram, the sealed one first. */
	nb = initial_pad(two, db, ack, sizeof(ack), 100);
	memcpy(two + 6, ds, 8);
	{
		uint8_t ch[512], fr[600];
		size_t n = hello_bytes(ch, false);

		na = initial_pad(two + nb, dc, fr,
				 crypto_frame(fr, 0, ch, n), 500);
	}
	assert_true(nb + na <= sizeof(ip) - 28);
	names_of(t, udp(40000, 443, two, nb + na), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, udp(40000, 443, short_hdr, sizeof(short_hdr)), &fate);
	assert_string_equal(out.n.name, "exbmple.com");

	/* Another connection's ClientHello in two Initials (a Retry's, or
	 * a new connection from the same port): gathered anew. */
	na = hello_initial(a, dc, false, 0, 100);
	names_of(t, udp(40000, 443, a, na), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	na = hello_initial(a, dc, false, 100, 512);
	names_of(t, udp(40000, 443, a, na), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "example.com");

	/* While a flow gathers, the rest of a ClientHello under another
	 * DCID is no part of it. */
	na = hello_initial(a, da, true, 0, 100);
	names_of(t, udp(40001, 443, a, na), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	na = hello_initial(a, db, true, 100, 512);
	names_of(t, udp(40001, 443, a, na), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	na = hello_initial(a, da, true, 100, 512);
	names_of(t, udp(40001, 443, a, na), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "exbmple.com");
	assert_int_equal(flowtab_counters(t)->pending, 0);
	flowtab_free(t);
}

/* The packet in ip[] (an IPv4 one, N bytes) made a fragment: offset
 * OFF (8-byte units), more fragments after it when MORE. */
static struct pkt frag4(size_t n, uint16_t off, bool more)
{
	struct pkt p = { 0 };

	ip[6] = (uint8_t)((more ? 0x20 : 0) | off >> 8);
	ip[7] = (uint8_t)off;
	p.payload = ip;
	p.payload_len = p.orig_len = (uint32_t)n;
	pkt_parse_headers(&p);
	return p;
}

/* UDP over IPv6 from 2001:db8::1:SPORT to 2001:db8::2:DPORT behind a
 * fragment header of offset 0 (MORE: more fragments), the LEN bytes at
 * DATA. */
static struct pkt udp6_frag(uint16_t sport, uint16_t dport, bool more,
			    const uint8_t *data, size_t len)
{
	size_t n = 40 + 8 + UDP_HL + len;
	struct pkt p = { 0 };

	memset(ip, 0, 40 + 8 + UDP_HL);
	ip[0] = 0x60;
	ip[4] = (uint8_t)((n - 40) >> 8);
	ip[5] = (uint8_t)(n - 40);
	ip[6] = IPPROTO_FRAGMENT;
	ip[7] = 64;
	inet_pton(AF_INET6, "2001:db8::1", ip + 8);
	inet_pton(AF_INET6, "2001:db8::2", ip + 24);
	ip[40] = IPPROTO_UDP;
	ip[43] = more ? 1 : 0;
	ip[48] = (uint8_t)(sport >> 8);
	ip[49] = (uint8_t)sport;
	ip[50] = (uint8_t)(dport >> 8);
	ip[51] = (uint8_t)dport;
	ip[52] = (uint8_t)((UDP_HL + len) >> 8);
	ip[53] = (uint8_t)(UDP_HL + len);
	memcpy(ip + 56, data, len);
	p.payload = ip;
	p.payload_len = p.orig_len = (uint32_t)n;
	pkt_parse_headers(&p);
	return p;
}

/* Where nothing reassembles IP fragments (a forward hook without
 * conntrack), the first of them holds a transport header and only the
 * start of its payload: the name of a whole-looking ClientHello, query
 * or Initial in it is not the datagram's, so INCOMPLETE (IPv4, IPv6);
 * a later fragment has no transport header, so no name (ABSENT), as nft
 * finds no ports in it. An unfragmented packet with a fragment header
 * (offset 0, no more) is whole. */
static void test_first_fragment(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const uint8_t q[] = { 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0,
				     1, 'a', 0, 0, 1, 0, 1 };
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;
	uint8_t rec[600];
	size_t n = client_hello(rec);
	struct pkt p;

	(void)state;
	assert_non_null(t);
	names_of(t, tcp_to(4000, 443, TCPF_SYN, 1, "", 0), &fate);
	tcp_to(4000, 443, TCPF_ACK, 2, rec, n);
	p = frag4(40 + n, 0, true);
	assert_true(p.first_fragment);
	names_of(t, p, &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	/* A later fragment: ABSENT. */
	p = frag4(40 + n, 100, false);
	assert_true(p.fragment);
	names_of(t, p, &fate);
	assert_int_equal(out.state, PKT_ABSENT);

	udp(5000, 53, q, sizeof(q));
	names_of(t, frag4(20 + UDP_HL + sizeof(q), 0, true), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, frag4(20 + UDP_HL + sizeof(q), 0, false), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a");

	make_initial();
	udp(40000, 443, initial, initial_len);
	names_of(t, frag4(20 + UDP_HL + initial_len, 0, true), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);

	p = udp6_frag(5000, 53, true, q, sizeof(q));
	assert_true(p.first_fragment);
	names_of(t, p, &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, udp6_frag(5000, 53, false, q, sizeof(q)), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a");
	flowtab_free(t);
}

/* A TCP flow whose name is still coming can be only what its server
 * port allows: its SYN and its ACK are pending for TLS and HTTP
 * matches to a port that is not a DNS port, never for dns ones (a packet
 * to such a port is never DNS), and for dns matches alone to a DNS
 * port. */
static void test_pending_proto(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	names_of(t, tcp_to(6000, 2223, TCPF_SYN, 1, "", 0), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	assert_int_equal(out.proto, NP_TLS | NP_HTTP);
	names_of(t, tcp_to(6000, 2223, TCPF_ACK, 2, "", 0), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	assert_int_equal(out.proto, NP_TLS | NP_HTTP);
	/* A request head's start: HTTP's alone. */
	names_of(t, tcp_to(6000, 2223, TCPF_ACK, 2, head, 10), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	assert_int_equal(out.proto, NP_HTTP);
	/* The server's SYN-ACK. */
	ip4(IPPROTO_TCP, 2223, 6000, 20, "", 0);
	memcpy(ip + 12, (const uint8_t[]){ 198, 51, 100, 7 }, 4);
	memcpy(ip + 16, (const uint8_t[]){ 192, 0, 2, 1 }, 4);
	tcp_fields(77, TCPF_SYN | TCPF_ACK);
	names_of(t, parsed(40), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	assert_int_equal(out.proto, NP_TLS | NP_HTTP);

	names_of(t, tcp_to(6001, 53, TCPF_SYN, 1, "", 0), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	assert_int_equal(out.proto, NP_DNS);
	flowtab_free(t);
}

/* While a QUIC flow's ClientHello is still coming, its long-header
 * packets (Initials, Handshake, 0-RTT) are pending; a short-header
 * packet or a datagram that is not QUIC from its ports is INCOMPLETE (a
 * client sends none before the handshake, which needs the whole
 * ClientHello), never pending, so that an allow rule does not let it
 * through. */
static void test_quic_pending_other(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const uint8_t da[8] = { 0xa, 1, 2, 3, 4, 5, 6, 7 };
	static const uint8_t hs[34] = { 0xe0, 0, 0, 0, 1, 8, 0xa, 1, 2, 3, 4,
					5, 6, 7, 0, 0x40, 17 };
	static const uint8_t rtp[24] = { 0x80, 0x60, 0x12, 0x34, 0x00, 0x01 };
	static uint8_t a[1400];
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;
	size_t na;

	(void)state;
	assert_non_null(t);
	na = hello_initial(a, da, false, 0, 100);
	names_of(t, udp(40000, 443, a, na), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, udp(40000, 443, short_hdr, sizeof(short_hdr)), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, udp(40000, 443, (const uint8_t *)"SMUGGLED", 8), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, udp(40000, 443, rtp, sizeof(rtp)), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, udp(40000, 443, hs, sizeof(hs)), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	na = hello_initial(a, da, false, 100, 512);
	names_of(t, udp(40000, 443, a, na), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	names_of(t, udp(40000, 443, short_hdr, sizeof(short_hdr)), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "example.com");
	flowtab_free(t);
}

/* A DNS query over UDP, judged on its own, counts as a name found, or
 * one that could not be (a compression pointer in its question), once
 * per query with or without the look-ahead; a response counts as
 * neither. */
static void test_dns_udp_counted(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const uint8_t q[] = { 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0,
				     1, 'a', 0, 0, 1, 0, 1 };
	static const uint8_t bad[] = { 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0,
				       0, 0xc0, 0x0c, 0, 1, 0, 1 };
	static const uint8_t resp[] = { 0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0, 0,
					0, 0, 0, 1, 'a', 0, 0, 1, 0, 1 };
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	names_of(t, udp(5000, 53, q, sizeof(q)), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	names_of(t, udp(5001, 53, q, sizeof(q)), &fate);
	names_of(t, udp(5002, 53, bad, sizeof(bad)), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, udp(53, 5000, resp, sizeof(resp)), &fate);
	assert_int_equal(out.state, PKT_ABSENT);
	assert_int_equal(flowtab_counters(t)->names, 2);
	assert_int_equal(flowtab_counters(t)->incomplete, 1);
	assert_int_equal(flowtab_counters(t)->flows, 0);
	flowtab_free(t);
}

/* UDP whose first byte has the high bit of a QUIC long header: RTP
 * (0x80), a QUIC version nfqd does not read, and a datagram too short to
 * show one. With no QUIC flow in the table, the first two carry no name
 * and make no flow; the third is malformed QUIC (INCOMPLETE), as the
 * Initial's parser says; after an Initial made a QUIC flow, the others
 * still carry no name. */
static void test_udp_long_not_quic(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const uint8_t rtp[24] = { 0x80, 0x60, 0x12, 0x34, 0x00, 0x01 };
	static const uint8_t other[24] = { 0xc0, 0xff, 0x00, 0x00, 0x1d, 8 };
	static const uint8_t tiny[5] = { 0x80, 0x60, 0x12, 0x34, 0x00 };
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	assert_null(names_of(t, udp(5004, 5004, rtp, sizeof(rtp)), &fate));
	assert_int_equal(out.state, PKT_ABSENT);
	assert_null(names_of(t, udp(5006, 443, other, sizeof(other)), &fate));
	assert_int_equal(out.state, PKT_ABSENT);
	assert_int_equal(flowtab_counters(t)->flows, 0);
	names_of(t, udp(5008, 443, tiny, sizeof(tiny)), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	make_initial();
	assert_non_null(names_of(t, udp(40000, 443, initial, initial_len),
				 &fate));
	assert_int_equal(out.state, PKT_PRESENT);
	assert_null(names_of(t, udp(5004, 5004, rtp, sizeof(rtp)), &fate));
	assert_int_equal(out.state, PKT_ABSENT);
	assert_int_equal(flowtab_counters(t)->flows, 1);
	flowtab_free(t);
}

/* The one bucket of an 8-flow table: 8 newer TCP flows evict the QUIC
 * flow; then its packets have no name, and a new QUIC flow has one. */
static void test_quic_evicted(void **state)
{
	static const uint16_t dns[] = { 53 };
	struct flowtab *t = flowtab_new(8, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	make_initial();
	assert_non_null(names_of(t, udp(40000, 443, initial, initial_len),
				 &fate));
	for (uint16_t i = 0; i < 8; i++)
		names_of(t, syn((uint16_t)(1000 + i)), &fate);
	assert_int_equal(flowtab_counters(t)->evictions, 1);
	assert_null(names_of(t, udp(40000, 443, short_hdr,
				    sizeof(short_hdr)), &fate));
	assert_int_equal(out.state, PKT_ABSENT);

	assert_non_null(names_of(t, udp(40002, 443, initial, initial_len),
				 &fate));
	assert_non_null(names_of(t, udp(40002, 443, short_hdr,
					sizeof(short_hdr)), &fate));
	assert_string_equal(out.n.name, "example.com");
	flowtab_free(t);
}

/* Flows that gather (a request head in pieces) and settle, evicted and
 * reused: the gathering buffers are counted and given back (ASan: no
 * leak), and a slot's next flow starts clean. */
static void test_tcp_gather_evict(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	struct flowtab *t = flowtab_new(8, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	for (uint16_t i = 0; i < 4; i++) {
		names_of(t, syn((uint16_t)(2000 + i)), &fate);
		names_of(t, tcp((uint16_t)(2000 + i), TCPF_ACK, 2, head, 20),
			 &fate);
		assert_int_equal(out.state, NAMES_PENDING);
	}
	assert_int_equal(flowtab_counters(t)->pending, 4);
	/* One settles: its buffer goes. */
	names_of(t, tcp(2000, TCPF_ACK, 22, head + 20, sizeof(head) - 21),
		 &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	assert_int_equal(flowtab_counters(t)->pending, 3);
	/* Eight new flows push all of them out. */
	for (uint16_t i = 0; i < 8; i++)
		names_of(t, syn((uint16_t)(3000 + i)), &fate);
	assert_int_equal(flowtab_counters(t)->pending, 0);
	assert_int_equal(flowtab_counters(t)->flows, 8);
	/* A new connection in a reused slot knows nothing of the old. */
	names_of(t, tcp(3000, TCPF_ACK, 2, head, sizeof(head) - 1), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_int_equal(fate, FLOW_JUDGE);
	names_of(t, tcp(2001, TCPF_ACK, 22, head + 20, 5), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);	/* state lost */
	flowtab_free(t);
}

/* The later segments of a TCP flow whose name is settled, each judged
 * where flow_ahead_line() saw its flow (flow_names()'s shortest way, in
 * the "ahead" run) and without: the same names and fate. A flow dropped
 * on its name stays dropped, but for a FIN or RST without data; a second
 * DNS query on a connection is INCOMPLETE; a new SYN on the ports of a
 * settled flow starts a new one; an idle flow is forgotten. */
static void test_settled(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const uint8_t q[] = { 0, 19, 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0,
				     0, 0, 1, 'a', 0, 0, 1, 0, 1 };
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;
	void *f;

	(void)state;
	assert_non_null(t);
	names_of(t, syn(7000), &fate);
	f = names_of(t, tcp(7000, TCPF_ACK, 2, head, h), &fate);
	assert_string_equal(out.n.name, "a.test");
	names_of(t, tcp(7000, TCPF_ACK, 2 + h, "body", 4), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	assert_int_equal(fate, FLOW_JUDGE);

	flow_note_drop(f);
	names_of(t, tcp(7000, TCPF_ACK, 2 + h, "body", 4), &fate);
	assert_int_equal(fate, FLOW_DROP);
	names_of(t, tcp(7000, TCPF_ACK | TCPF_FIN, 6 + h, "x", 1), &fate);
	assert_int_equal(fate, FLOW_DROP);
	names_of(t, tcp(7000, TCPF_ACK | TCPF_FIN, 6 + h, "", 0), &fate);
	assert_int_equal(fate, FLOW_PASS);

	/* The same ports, a new connection (a port reused): a settled
	 * flow's SYN with another sequence number starts its own flow, no
	 * name yet. One whose name is still coming keeps it until the
	 * server closes it (test_fake_syn); a dropped flow stays dropped. */
	names_of(t, syn(7002), &fate);
	names_of(t, tcp(7002, TCPF_ACK, 2, head, h), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	names_of(t, tcp(7002, TCPF_SYN, 5000, "", 0), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	assert_int_equal(fate, FLOW_JUDGE);
	names_of(t, tcp(7002, TCPF_ACK, 5001, head, h), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	names_of(t, tcp(7000, TCPF_SYN, 5000, "", 0), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	assert_int_equal(fate, FLOW_DROP);
	names_of(t, back(7000, TCPF_ACK | TCPF_RST, 1, "", 0), &fate);
	assert_int_equal(fate, FLOW_PASS);
	names_of(t, tcp(7000, TCPF_SYN, 5000, "", 0), &fate);
	assert_int_equal(fate, FLOW_DROP);

	/* DNS over TCP: the first query is judged, the next is not seen. */
	names_of(t, tcp_to(7001, 53, TCPF_SYN, 1, "", 0), &fate);
	names_of(t, tcp_to(7001, 53, TCPF_ACK, 2, q, sizeof(q)), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_int_equal(out.proto, NP_DNS);
	names_of(t, tcp_to(7001, 53, TCPF_ACK, 2 + sizeof(q), q, sizeof(q)),
		 &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	assert_int_equal(out.proto, NP_DNS);

	/* Idle past the timeout: forgotten, so INCOMPLETE, never ABSENT. */
	now += 61ull * 1000000000ull;
	names_of(t, tcp(7000, TCPF_ACK, 5001, "more", 4), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	assert_int_equal(fate, FLOW_JUDGE);
	flowtab_free(t);
}

/* flow_ahead_line() notes the slot it saw a flow in, and flow_names()
 * looks there first; the packets judged in between may have evicted the
 * flow and put another in that slot, or the note may be out of the
 * table: the slot must hold the packet's own flow, or it is not used. */
static void test_stale_slot(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head_a[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const char head_b[] = "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n";
	struct flowtab *t = flowtab_new(8, 60, dns, 1);
	struct flow_ahead a;
	struct pkt later;
	enum flow_fate fate;
	uint32_t slot;

	(void)state;
	assert_non_null(t);
	names_of(t, syn(5000), &fate);
	names_of(t, tcp(5000, TCPF_ACK, 2, head_a, sizeof(head_a) - 1), &fate);
	assert_string_equal(out.n.name, "a.test");

	/* Looked at ahead while the flow is there: its slot is noted. */
	later = tcp(5000, TCPF_ACK, 2 + sizeof(head_a) - 1, "x", 1);
	flow_ahead(t, &later, &a, NULL);
	flow_ahead_line(t, &later, &a, NULL, now);
	assert_int_not_equal(a.slot, 0);
	slot = a.slot;

	/* A note out of the table: the bucket is searched as ever. */
	a.slot = 1000000;
	flow_names(t, &later, now, &a, &out, &fate);
	assert_string_equal(out.n.name, "a.test");

	/* Eight new flows with another name take every slot, the noted
	 * one among them: the packet's own flow is gone. */
	for (uint16_t i = 0; i < 8; i++) {
		names_of(t, syn((uint16_t)(6000 + i)), &fate);
		names_of(t, tcp((uint16_t)(6000 + i), TCPF_ACK, 2, head_b,
				sizeof(head_b) - 1), &fate);
		assert_string_equal(out.n.name, "b.test");
	}
	a.slot = slot;
	assert_null(flow_names(t, &later, now, &a, &out, &fate));
	assert_int_equal(out.state, PKT_INCOMPLETE);	/* state lost */
	flowtab_free(t);
}

/* flow_ahead_line() chooses the slot a SYN's new flow takes, and
 * flow_names() takes it if it is still open; a packet judged in between
 * may have taken it, or the note may be out of the bucket: another
 * flow's slot is never taken over while it is in use. */
static void test_stale_fresh(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head_a[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const char head_b[] = "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n";
	struct flowtab *t = flowtab_new(8, 60, dns, 1);	/* one bucket */
	struct flow_ahead a;
	struct pkt p;
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	p = syn(5000);
	flow_ahead(t, &p, &a, NULL);
	flow_ahead_line(t, &p, &a, NULL, now);
	assert_int_not_equal(a.fresh, 0);

	/* Flow B's SYN, judged first, takes that slot (the first free). */
	names_of(t, syn(5001), &fate);
	p = syn(5000);
	assert_non_null(flow_names(t, &p, now, &a, &out, &fate));
	names_of(t, tcp(5001, TCPF_ACK, 2, head_b, sizeof(head_b) - 1), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "b.test");
	names_of(t, tcp(5000, TCPF_ACK, 2, head_a, sizeof(head_a) - 1), &fate);
	assert_string_equal(out.n.name, "a.test");

	/* A note out of the bucket: a slot of it is chosen as ever. */
	p = syn(5002);
	flow_ahead(t, &p, &a, NULL);
	flow_ahead_line(t, &p, &a, NULL, now);
	a.fresh = 1000000;
	assert_non_null(flow_names(t, &p, now, &a, &out, &fate));
	names_of(t, tcp(5001, TCPF_ACK, 2 + sizeof(head_b) - 1, "x", 1),
		 &fate);
	assert_string_equal(out.n.name, "b.test");
	flowtab_free(t);
}

/* A segment looked at ahead right after one of its own flow (a burst)
 * takes the slot that one saw or chose, as a hint: a stale one (the
 * packets judged in between moved the flow) is checked like any other,
 * and a SYN after a packet of its flow looks at the bucket itself. */
static void test_burst_slot(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head_a[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const char head_b[] = "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n";
	struct flowtab *t = flowtab_new(8, 60, dns, 1);	/* one bucket */
	struct flow_ahead fs, fd, fx, fb;
	struct pkt ps, pd, px, pb;
	enum flow_fate fate;
	uint32_t a_slot;

	(void)state;
	assert_non_null(t);
	names_of(t, syn(5001), &fate);	/* flow B, in the first slot */
	names_of(t, tcp(5001, TCPF_ACK, 2, head_b, sizeof(head_b) - 1), &fate);

	/* A's SYN, then its first data: the data takes the SYN's choice.
	 * (Each packet is judged before the next is made: they share the
	 * test's one packet buffer.) */
	ps = syn(5000);
	flow_ahead(t, &ps, &fs, NULL);
	flow_ahead_line(t, &ps, &fs, NULL, now);
	assert_int_not_equal(fs.fresh, 0);
	assert_non_null(flow_names(t, &ps, now, &fs, &out, &fate));
	pd = tcp(5000, TCPF_ACK, 2, head_a, sizeof(head_a) - 1);
	flow_ahead(t, &pd, &fd, NULL);
	flow_ahead_line(t, &pd, &fd, &fs, now);
	assert_int_equal(fd.slot, fs.fresh);
	a_slot = fd.slot;
	assert_non_null(flow_names(t, &pd, now, &fd, &out, &fate));
	assert_string_equal(out.n.name, "a.test");

	/* The next segment: the slot its flow is in. */
	px = tcp(5000, TCPF_ACK, 2 + sizeof(head_a) - 1, "x", 1);
	flow_ahead(t, &px, &fx, NULL);
	flow_ahead_line(t, &px, &fx, &fd, now);
	assert_int_equal(fx.slot, fd.slot);
	flow_names(t, &px, now, &fx, &out, &fate);
	assert_string_equal(out.n.name, "a.test");

	/* Another flow's segment after it looks at the bucket. */
	pb = tcp(5001, TCPF_ACK, 2 + sizeof(head_b) - 1, "x", 1);
	flow_ahead(t, &pb, &fb, NULL);
	flow_ahead_line(t, &pb, &fb, &fx, now);
	assert_int_not_equal(fb.slot, 0);
	assert_int_not_equal(fb.slot, fx.slot);

	/* A stale hint (B's slot, as if A had moved): A is still found. */
	fx.slot = fb.slot;
	px = tcp(5000, TCPF_ACK, 2 + sizeof(head_a) - 1, "x", 1);
	flow_ahead(t, &px, &fd, NULL);
	flow_ahead_line(t, &px, &fd, &fx, now);
	assert_int_equal(fd.slot, fb.slot);
	assert_non_null(flow_names(t, &px, now, &fd, &out, &fate));
	assert_string_equal(out.n.name, "a.test");

	/* A SYN after a packet of its flow (the stale hint again) looks
	 * at the bucket: it sees A where A is. */
	ps = syn(5000);
	flow_ahead(t, &ps, &fs, NULL);
	flow_ahead_line(t, &ps, &fs, &fx, now);
	assert_int_equal(fs.slot, a_slot);
	flowtab_free(t);
}

/* A client segment with the URG flag before the name is settled: the
 * server's kernel takes the urgent byte out of the stream, so the bytes
 * are not the stream the server reads: INCOMPLETE, for the whole flow
 * (never ABSENT for "\0" + a request head, nor a name). */
static void test_urgent(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "\0GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	/* The urgent byte with the request head. */
	names_of(t, syn(7100), &fate);
	names_of(t, tcp(7100, TCPF_ACK | TCPF_URG, 2, head, h), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp(7100, TCPF_ACK, 2 + h, "x", 1), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	/* The urgent byte alone, then the head. */
	names_of(t, syn(7101), &fate);
	names_of(t, tcp(7101, TCPF_ACK | TCPF_URG, 2, head, 1), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp(7101, TCPF_ACK, 3, head + 1, h - 1), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	/* After the name is settled, urgent data changes nothing. */
	names_of(t, syn(7102), &fate);
	names_of(t, tcp(7102, TCPF_ACK, 2, head + 1, h - 1), &fate);
	assert_string_equal(out.n.name, "a.test");
	names_of(t, tcp(7102, TCPF_ACK | TCPF_URG, 1 + h, "x", 1), &fate);
	assert_string_equal(out.n.name, "a.test");
	flowtab_free(t);
}

/* TCP Fast Open: a SYN's payload is the stream's first bytes, judged
 * on the SYN itself; the client's next bytes follow them. A retransmitted
 * SYN, or a segment at the same offsets (a server that did not take the
 * SYN's data gets them again), must carry the same bytes, or the name is
 * INCOMPLETE from then on. */
static void test_tfo(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const char other[] = "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n";
	static const uint8_t q[] = { 0, 19, 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0,
				     0, 0, 1, 'a', 0, 0, 1, 0, 1 };
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;
	uint8_t rec[600];
	size_t n = client_hello(rec);

	(void)state;
	assert_non_null(t);
	/* The whole head in the SYN. */
	names_of(t, tcp(7200, TCPF_SYN, 1, head, h), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	names_of(t, tcp(7200, TCPF_ACK, 2 + h, "body", 4), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	/* The SYN again, and its bytes again after the handshake. */
	names_of(t, tcp(7200, TCPF_SYN, 1, head, h), &fate);
	assert_string_equal(out.n.name, "a.test");
	names_of(t, tcp(7200, TCPF_ACK, 2, head, h), &fate);
	assert_string_equal(out.n.name, "a.test");
	/* Other bytes where the name was: INCOMPLETE, and so it stays. */
	names_of(t, tcp(7200, TCPF_ACK, 2, other, h), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp(7200, TCPF_ACK, 2 + h, "body", 4), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);

	/* Other bytes where the name was, in a segment that begins
	 * before the stream (the server takes them from its start). */
	names_of(t, tcp(7203, TCPF_SYN, 1, head, h), &fate);
	assert_string_equal(out.n.name, "a.test");
	{
		char buf[64];

		memcpy(buf, "0123456789", 10);
		memcpy(buf + 10, other, h);
		names_of(t, tcp(7203, TCPF_ACK, 2 - 10, buf, 10 + h), &fate);
		assert_int_equal(out.state, PKT_INCOMPLETE);
	}

	/* A retransmitted SYN with other bytes. */
	names_of(t, tcp(7201, TCPF_SYN, 1, head, h), &fate);
	assert_string_equal(out.n.name, "a.test");
	names_of(t, tcp(7201, TCPF_SYN, 1, other, h), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);

	/* Part of the head in the SYN, the rest after. */
	names_of(t, tcp(7202, TCPF_SYN, 1, head, 10), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp(7202, TCPF_ACK, 12, head + 10, h - 10), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");

	/* A ClientHello in the SYN; a DNS query in the SYN. */
	names_of(t, tcp_to(7203, 443, TCPF_SYN, 1, rec, n), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_int_equal(out.proto, NP_TLS);
	assert_string_equal(out.n.name, "example.com");
	names_of(t, tcp_to(7204, 53, TCPF_SYN, 1, q, sizeof(q)), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_int_equal(out.proto, NP_DNS);
	names_of(t, tcp_to(7204, 53, TCPF_ACK, 2 + sizeof(q), q, sizeof(q)),
		 &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	/* No buffer is left behind but the kept streams' (ASan: none
	 * leaks). */
	assert_int_equal(flowtab_counters(t)->pending, 3);
	flowtab_free(t);
}

/* A SYN with another sequence number on a live flow whose name is still
 * coming (the server still holds the connection: it answers with an ACK
 * of the old one) is INCOMPLETE and changes nothing: the flow keeps its
 * start, whether it gathered nothing yet or some bytes. On a settled
 * flow it starts a new one, unless the flow was dropped. */
static void test_fake_syn(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	/* Before the first bytes. */
	names_of(t, syn(7300), &fate);
	names_of(t, tcp(7300, TCPF_SYN, 901, "", 0), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp(7300, TCPF_ACK, 2, head, h), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	/* Between the bytes. */
	names_of(t, syn(7301), &fate);
	names_of(t, tcp(7301, TCPF_ACK, 2, head, 10), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp(7301, TCPF_SYN, 2, "", 0), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp(7301, TCPF_ACK, 12, head + 10, h - 10), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	/* After the name: a new connection on these ports (the old one's
	 * name is no longer the stream's to change)... */
	names_of(t, tcp(7301, TCPF_SYN, 77, "", 0), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp(7301, TCPF_ACK, 78, head, h), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	/* ... but a drop stays. */
	flow_note_drop(names_of(t, tcp(7301, TCPF_ACK, 78, head, h), &fate));
	names_of(t, tcp(7301, TCPF_SYN, 300, "", 0), &fate);
	assert_int_equal(fate, FLOW_DROP);
	names_of(t, tcp(7301, TCPF_ACK, 301, head, h), &fate);
	assert_int_equal(fate, FLOW_DROP);
	/* A client's FIN or RST is no close of the server's. */
	names_of(t, syn(7302), &fate);
	names_of(t, tcp(7302, TCPF_ACK, 2, head, 10), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp(7302, TCPF_ACK | TCPF_RST, 12, "", 0), &fate);
	names_of(t, tcp(7302, TCPF_ACK | TCPF_FIN, 12, "", 0), &fate);
	names_of(t, tcp(7302, TCPF_SYN, 901, "", 0), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp(7302, TCPF_ACK, 12, head + 10, h - 10), &fate);
	assert_string_equal(out.n.name, "a.test");
	flowtab_free(t);
}

/* Bytes that land past the 8192 gathered while there is a hole before
 * them (the name not whole): INCOMPLETE, not pending for ever. Wholly
 * past them, the packet's own (anybody who knows the ports can send
 * one): the flow's name still comes; across the end, the flow's. */
static void test_past_hole(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static char big[400];
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	memset(big, 'x', sizeof(big));
	/* Wholly past the buffer, nothing before. */
	names_of(t, syn(7400), &fate);
	names_of(t, tcp(7400, TCPF_ACK, 2 + FLOW_GATHER, "x", 1), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	assert_int_equal(out.proto, NP_NONE);
	names_of(t, tcp(7400, TCPF_ACK, 2, head, h), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	names_of(t, tcp_to(7403, 443, TCPF_SYN, 1000, "", 0), &fate);
	names_of(t, tcp_to(7403, 443, TCPF_ACK | TCPF_PSH, 10001, "x", 1),
		 &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	assert_int_equal(out.proto, NP_NONE);	/* for every name match */
	/* Across its end, a hole after the first bytes. */
	names_of(t, syn(7401), &fate);
	names_of(t, tcp(7401, TCPF_ACK, 2, head, 10), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp(7401, TCPF_ACK, 2 + FLOW_GATHER - 100, big,
			sizeof(big)), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	/* Up to its end but not past: still pending, then the name. */
	names_of(t, syn(7402), &fate);
	names_of(t, tcp(7402, TCPF_ACK, 2 + FLOW_GATHER - 100, big, 100),
		 &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp(7402, TCPF_ACK, 2, head, h), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	assert_int_equal(flowtab_counters(t)->pending, 0);
	flowtab_free(t);
}

/* A client data segment without ACK (no SYN) before the name is
 * settled: the server's TCP drops it, so a decoy name in it is not taken:
 * the segment is INCOMPLETE and not gathered; the real bytes at the same
 * offsets then give the flow its name. */
static void test_no_ack(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const char decoy[] = "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n";
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	names_of(t, syn(7500), &fate);
	names_of(t, tcp(7500, TCPF_PSH, 2, decoy, h), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp(7500, TCPF_ACK | TCPF_PSH, 2, head, h), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	/* The decoy's first half, then the real head. */
	names_of(t, syn(7501), &fate);
	names_of(t, tcp(7501, TCPF_ACK, 2, head, 10), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp(7501, 0, 12, decoy + 10, h - 10), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp(7501, TCPF_ACK, 12, head + 10, h - 10), &fate);
	assert_string_equal(out.n.name, "a.test");
	/* With RST or SYN (and ACK) the server does not take the bytes
	 * either: a decoy past a hole is not gathered. */
	for (uint16_t i = 0; i < 2; i++) {
		uint8_t fl = TCPF_ACK | (i ? TCPF_SYN : TCPF_RST);

		names_of(t, syn(7502 + i), &fate);
		names_of(t, tcp(7502 + i, TCPF_ACK, 2, head, 10), &fate);
		names_of(t, tcp(7502 + i, fl, 22, decoy + 20, h - 20), &fate);
		assert_int_equal(out.state, PKT_INCOMPLETE);
		names_of(t, tcp(7502 + i, TCPF_ACK, 12, head + 10, 10),
			 &fate);
		assert_int_equal(out.state, NAMES_PENDING);
		names_of(t, tcp(7502 + i, TCPF_ACK, 22, head + 20, h - 20),
			 &fate);
		assert_string_equal(out.n.name, "a.test");
	}
	assert_int_equal(flowtab_counters(t)->pending, 0);
	flowtab_free(t);
}

/* The TCP checksum of the IPv4 segment in ip[] (N bytes in all), set. */
static void tcp_csum_set(size_t n)
{
	uint32_t sum = IPPROTO_TCP + (uint32_t)(n - 20);

	ip[36] = ip[37] = 0;
	for (size_t i = 12; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	for (size_t i = 20; i < n; i += 2)
		sum += (uint32_t)ip[i] << 8 | (i + 1 < n ? ip[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	ip[36] = (uint8_t)(sum >> 8);
	ip[37] = (uint8_t)sum;
}

/* A segment as tcp() makes it, its checksum unverified by the kernel
 * (PKT_CSUM_UNVERIFIED), right or (BAD) wrong. */
static struct pkt tcp_unverified(uint16_t sport, uint8_t flags, uint32_t seq,
				 const char *data, size_t len, bool bad)
{
	struct pkt p = tcp(sport, flags, seq, data, len);

	tcp_csum_set(40 + len);
	if (bad)
		ip[37] ^= 1;
	p.flags |= PKT_CSUM_UNVERIFIED;
	return p;
}

/* A segment whose checksum the kernel did not verify is checked before
 * its bytes are gathered: a bad one is INCOMPLETE and not gathered (the
 * server's TCP drops it: a decoy name in it must not settle the flow); a
 * good one counts as ever. */
static void test_bad_csum(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const char decoy[] = "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n";
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	names_of(t, syn(7600), &fate);
	names_of(t, tcp_unverified(7600, TCPF_ACK, 2, decoy, h, true), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp_unverified(7600, TCPF_ACK, 2, head, h, false), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	/* An odd length, in two pieces. */
	names_of(t, syn(7601), &fate);
	names_of(t, tcp_unverified(7601, TCPF_ACK, 2, head, 11, false), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp_unverified(7601, TCPF_ACK, 13, decoy + 11, h - 11,
				   true), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp_unverified(7601, TCPF_ACK, 13, head + 11, h - 11,
				   false), &fate);
	assert_string_equal(out.n.name, "a.test");
	flowtab_free(t);
}

/* The hook tcp6() packets come from. */
static uint8_t hook6 = NF_INET_FORWARD;

/* TCP over IPv6 from 2001:db8::1:SPORT to 2001:db8::2:80, hop limit
 * HOP, with FLAGS, SEQ, the OPTLEN bytes of TCP options at OPT (a
 * multiple of 4) and the LEN bytes at DATA. */
static struct pkt tcp6(uint16_t sport, uint8_t flags, uint32_t seq,
		       uint8_t hop, const uint8_t *opt, size_t optlen,
		       const char *data, size_t len)
{
	size_t th = 20 + optlen, n = 40 + th + len;
	struct pkt p;

	memset(ip, 0, 40 + th);
	ip[0] = 0x60;
	ip[4] = (uint8_t)((n - 40) >> 8);
	ip[5] = (uint8_t)(n - 40);
	ip[6] = IPPROTO_TCP;
	ip[7] = hop;
	inet_pton(AF_INET6, "2001:db8::1", ip + 8);
	inet_pton(AF_INET6, "2001:db8::2", ip + 24);
	ip[40] = (uint8_t)(sport >> 8);
	ip[41] = (uint8_t)sport;
	ip[43] = 80;
	for (int i = 0; i < 4; i++)
		ip[44 + i] = (uint8_t)(seq >> (24 - 8 * i));
	ip[52] = (uint8_t)(th / 4 << 4);
	ip[53] = flags;
	if (optlen)
		memcpy(ip + 60, opt, optlen);
	memcpy(ip + 40 + th, data, len);
	p = parsed(n);
	p.hook = hook6;
	return p;
}

/* The fakes DPI evasion tools send before the real bytes, that a box on
 * the way sees and the server drops: a hop limit lower than the SYN's, a
 * TCP MD5 signature the SYN had not, a timestamp older than the SYN's,
 * bytes before the stream's start. INCOMPLETE, not gathered, the flow not
 * handed back (its drop is the packet's own); the real bytes then name
 * the flow. The client's own segments pass: the SYN's hop limit or a
 * higher one, timestamps that go on, options cut short. */
static void test_fake_marks(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const char fake[] = "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n";
	/* NOP, NOP, timestamp TSval 1000 (or 998, 1001) */
	static const uint8_t ts[] = { 1, 1, 8, 10, 0, 0, 0x03, 0xe8, 0, 0, 0,
				      0 };
	static const uint8_t ts_old[] = { 1, 1, 8, 10, 0, 0, 0x03, 0xe6, 0,
					  0, 0, 0 };
	static const uint8_t ts_new[] = { 1, 1, 8, 10, 0, 0, 0x03, 0xe9, 0,
					  0, 0, 0 };
	/* TSval 1100, 1099: the handshake's ACK, and 1 before it */
	static const uint8_t ts_ack[] = { 1, 1, 8, 10, 0, 0, 0x04, 0x4c, 0, 0,
					  0, 0 };
	static const uint8_t ts_ack1[] = { 1, 1, 8, 10, 0, 0, 0x04, 0x4b, 0,
					   0, 0, 0 };
	static const uint8_t md5[20] = { 19, 18 };
	static const uint8_t cut[4] = { 1, 8, 10, 0 };	/* runs past */
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;
	void *f;

	(void)state;
	assert_non_null(t);
	for (int k = 0; k < 4; k++) {
		uint16_t sp = (uint16_t)(7700 + k);

		names_of(t, tcp6(sp, TCPF_SYN, 1, 60, ts, sizeof(ts), "", 0),
			 &fate);
		if (k == 0)	/* dies on the way */
			f = names_of(t, tcp6(sp, TCPF_ACK, 2, 59, ts,
					     sizeof(ts), fake, h), &fate);
		else if (k == 1)
			f = names_of(t, tcp6(sp, TCPF_ACK, 2, 60, md5,
					     sizeof(md5), fake, h), &fate);
		else if (k == 2)
			f = names_of(t, tcp6(sp, TCPF_ACK, 2, 60, ts_old,
					     sizeof(ts_old), fake, h), &fate);
		else		/* an old sequence number */
			f = names_of(t, tcp6(sp, TCPF_ACK, 0xffffff00u, 60,
					     ts, sizeof(ts), fake, h), &fate);
		assert_int_equal(out.state, PKT_INCOMPLETE);
		assert_null(f);
		assert_int_equal(fate, FLOW_JUDGE);
		f = names_of(t, tcp6(sp, TCPF_ACK, 2, 60, ts_new,
				     sizeof(ts_new), head, h), &fate);
		assert_int_equal(out.state, PKT_PRESENT);
		assert_string_equal(out.n.name, "a.test");
		assert_non_null(f);
	}
	/* Bytes before the stream's start and on into it: those from the
	 * start on are the stream's, as the server takes them. */
	names_of(t, tcp6(7720, TCPF_SYN, 1, 60, NULL, 0, "", 0), &fate);
	{
		static char buf[1400];
		uint8_t ch[512];
		size_t nf = client_hello((uint8_t *)buf), nr;

		/* a whole ClientHello for example.com before the start,
		 * then one for exbmple.com: the look-ahead's guess, read
		 * from the segment's first byte, is not the stream's */
		nr = hello_bytes(ch, true);
		memcpy(buf + nf, "\x16\x03\x01", 3);
		buf[nf + 3] = (char)(nr >> 8);
		buf[nf + 4] = (char)nr;
		memcpy(buf + nf + 5, ch, nr);
		f = names_of(t, tcp6(7720, TCPF_ACK, (uint32_t)(2 - nf), 60,
				     NULL, 0, buf, nf + 5 + nr), &fate);
		assert_int_equal(out.state, PKT_PRESENT);
		assert_string_equal(out.n.name, "exbmple.com");
	}
	/* A fake SYN (it dies on the way) before the client's: the marks
	 * are the highest TTL of the two, so the fake's segments are told. */
	names_of(t, tcp6(7730, TCPF_SYN, 1, 3, NULL, 0, "", 0), &fate);
	names_of(t, tcp6(7730, TCPF_SYN, 1, 60, NULL, 0, "", 0), &fate);
	names_of(t, tcp6(7730, TCPF_ACK, 2, 3, NULL, 0, fake, h), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp6(7730, TCPF_ACK, 2, 60, NULL, 0, head, h), &fate);
	assert_string_equal(out.n.name, "a.test");
	/* PAWS goes by the handshake's ACK: a timestamp older than it by
	 * more than 1 is a fake, by 1 not. */
	names_of(t, tcp6(7731, TCPF_SYN, 1, 60, ts, sizeof(ts), "", 0), &fate);
	names_of(t, tcp6(7731, TCPF_ACK, 2, 60, ts_ack, sizeof(ts_ack), "", 0),
		 &fate);
	names_of(t, tcp6(7731, TCPF_ACK, 2, 60, ts_new, sizeof(ts_new), fake,
			 h), &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp6(7731, TCPF_ACK, 2, 60, ts_ack1, sizeof(ts_ack1), head,
			 h), &fate);
	assert_string_equal(out.n.name, "a.test");
	/* Where this host takes the packet (input, prerouting), a lower
	 * TTL is no fake: its bytes are the stream's. */
	hook6 = NF_INET_LOCAL_IN;
	names_of(t, tcp6(7740, TCPF_SYN, 1, 60, NULL, 0, "", 0), &fate);
	names_of(t, tcp6(7740, TCPF_ACK, 2, 3, NULL, 0, fake, h), &fate);
	assert_string_equal(out.n.name, "b.test");
	hook6 = NF_INET_FORWARD;
	/* The client's own: a higher hop limit, no timestamp, a cut option
	 * (read as far as it goes). */
	names_of(t, tcp6(7710, TCPF_SYN, 1, 60, ts, sizeof(ts), "", 0), &fate);
	names_of(t, tcp6(7710, TCPF_ACK, 2, 61, cut, sizeof(cut), head, 10),
		 &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp6(7710, TCPF_ACK, 12, 60, NULL, 0, head + 10, h - 10),
		 &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	flowtab_free(t);
}

/* IPv6 packet P (its bytes ip[]'s) with K hop-by-hop headers of 8 bytes
 * (PadN) put between the IPv6 header and the next, parsed again. */
static struct pkt hbh(struct pkt p, unsigned k)
{
	size_t n = p.payload_len, add = 8 * (size_t)k;
	uint8_t next = ip[6];
	uint8_t hook = p.hook;

	memmove(ip + 40 + add, ip + 40, n - 40);
	for (unsigned i = 0; i < k; i++) {
		uint8_t *e = ip + 40 + 8 * i;

		memset(e, 0, 8);
		e[0] = i + 1 < k ? IPPROTO_HOPOPTS : next;
		e[2] = 1;	/* PadN of 4 */
		e[3] = 4;
	}
	ip[6] = IPPROTO_HOPOPTS;
	n += add;
	ip[4] = (uint8_t)((n - 40) >> 8);
	ip[5] = (uint8_t)(n - 40);
	p = parsed(n);
	p.hook = hook;
	return p;
}

/* A hop-by-hop header after another (zapret's hopbyhop2): routers pass
 * it, the server discards it. Such a fake SYN makes no flow, such a fake
 * segment is INCOMPLETE and not gathered, at any hook; one hop-by-hop
 * header is the client's own. */
static void test_hbh_fake(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const char fake[] = "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n";
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;
	void *f;

	(void)state;
	assert_non_null(t);
	hook6 = NF_INET_LOCAL_IN;
	names_of(t, tcp6(7800, TCPF_SYN, 1, 60, NULL, 0, "", 0), &fate);
	f = names_of(t, hbh(tcp6(7800, TCPF_ACK, 2, 60, NULL, 0, fake, h), 2),
		     &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	assert_null(f);
	f = names_of(t, hbh(tcp6(7800, TCPF_ACK, 2, 60, NULL, 0, head, h), 1),
		     &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	assert_non_null(f);
	/* A fake SYN of another sequence number first: the real one's
	 * flow, whose bytes then name it. */
	names_of(t, hbh(tcp6(7801, TCPF_SYN, 99, 60, NULL, 0, "", 0), 2),
		 &fate);
	assert_int_equal(out.state, PKT_INCOMPLETE);
	names_of(t, tcp6(7801, TCPF_SYN, 1, 60, NULL, 0, "", 0), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	names_of(t, tcp6(7801, TCPF_ACK, 2, 60, NULL, 0, head, h), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	hook6 = NF_INET_FORWARD;
	flowtab_free(t);
}

/* A SYN from SRC:40000 to DST:80 (IPv4 addresses, host order). */
static struct pkt syn_between(uint32_t src, uint32_t dst)
{
	ip4(IPPROTO_TCP, 40000, 80, 20, "", 0);
	for (int i = 0; i < 4; i++) {
		ip[12 + i] = (uint8_t)(src >> (24 - 8 * i));
		ip[16 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	tcp_fields(1, TCPF_SYN);
	return parsed(40);
}

/* Flows that differ only in the client's, or only in the server's, IPv4
 * address spread over the buckets: 512 of them in a table of 16384 take
 * no flow's slot (an address left out of the hash puts them all in one
 * bucket of 8). */
static void test_spread(void **state)
{
	static const uint16_t dns[] = { 53 };
	enum flow_fate fate;

	(void)state;
	for (int side = 0; side < 2; side++) {
		struct flowtab *t = flowtab_new(16384, 60, dns, 1);

		assert_non_null(t);
		for (uint32_t i = 0; i < 512; i++) {
			uint32_t a = 0x0a000001 + (i << 8);

			names_of(t, side ? syn_between(0xc0000201, a) :
					   syn_between(a, 0xc6336407), &fate);
		}
		assert_int_equal(flowtab_counters(t)->flows, 512);
		assert_int_equal(flowtab_counters(t)->evictions, 0);
		flowtab_free(t);
	}
}

/* A reload's policy judges the flows the old one dropped on their names
 * (flowtab_forget_drops()): the flow keeps its name. */
static void test_forget_drops(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	const uint32_t h = sizeof(head) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1);
	enum flow_fate fate;
	void *f;

	(void)state;
	assert_non_null(t);
	names_of(t, syn(7100), &fate);
	f = names_of(t, tcp(7100, TCPF_ACK, 2, head, h), &fate);
	flow_note_drop(f);
	names_of(t, tcp(7100, TCPF_ACK, 2 + h, "body", 4), &fate);
	assert_int_equal(fate, FLOW_DROP);
	flowtab_forget_drops(t);
	names_of(t, tcp(7100, TCPF_ACK, 2 + h, "body", 4), &fate);
	assert_int_equal(fate, FLOW_JUDGE);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	flowtab_free(t);
}

/* Many flows moved into a table with room for all: none is lost, in
 * whatever order the old table holds them (a flow moved later but seen
 * earlier than one already in its new bucket took that one's slot as if
 * idle). And flows of ports a client takes in turn do not share buckets
 * (24 of them in 32 buckets of 8: none overflows). */
static void test_move_many(void **state)
{
	static const uint16_t dns[] = { 53 };
	struct flowtab *t = flowtab_new(1024, 60, dns, 1), *to;
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	for (uint16_t i = 0; i < 24; i++)
		names_of(t, syn((uint16_t)(7500 + i)), &fate);
	assert_int_equal(flowtab_counters(t)->flows, 24);
	to = flowtab_new(256, 60, dns, 1);
	assert_non_null(to);
	assert_int_equal(flowtab_move(to, t), 0);
	assert_int_equal(flowtab_counters(to)->flows, 24);
	for (uint16_t i = 0; i < 24; i++) {
		names_of(to, tcp((uint16_t)(7500 + i), TCPF_ACK, 2, "x", 1),
			 &fate);
		assert_int_equal(out.state, NAMES_PENDING);
	}
	flowtab_free(to);
}

/* A reload's flow-table-size (flowtab_move()): a settled flow keeps its
 * name, a gathering one its bytes; the counters go along. */
static void test_move(void **state)
{
	static const uint16_t dns[] = { 53 };
	static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	static const char h1[] = "GET / HTTP/1.1\r\nHo";
	static const char h2[] = "st: b.test\r\n\r\n";
	const uint32_t h = sizeof(head) - 1, n1 = sizeof(h1) - 1;
	struct flowtab *t = flowtab_new(64, 60, dns, 1), *to;
	enum flow_fate fate;

	(void)state;
	assert_non_null(t);
	names_of(t, syn(7200), &fate);
	names_of(t, tcp(7200, TCPF_ACK, 2, head, h), &fate);
	names_of(t, syn(7201), &fate);
	names_of(t, tcp(7201, TCPF_ACK, 2, h1, n1), &fate);
	assert_int_equal(out.state, NAMES_PENDING);
	assert_int_equal(flowtab_counters(t)->pending, 1);
	to = flowtab_new(16, 60, dns, 1);
	assert_non_null(to);
	assert_int_equal(flowtab_move(to, t), 0);
	assert_int_equal(flowtab_counters(to)->flows, 2);
	assert_int_equal(flowtab_counters(to)->pending, 1);
	names_of(to, tcp(7200, TCPF_ACK, 2 + h, "body", 4), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "a.test");
	names_of(to, tcp(7201, TCPF_ACK, 2 + n1, h2, sizeof(h2) - 1), &fate);
	assert_int_equal(out.state, PKT_PRESENT);
	assert_string_equal(out.n.name, "b.test");
	assert_int_equal(flowtab_counters(to)->pending, 0);
	flowtab_free(to);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_quic_flow, plain),
		cmocka_unit_test_setup(test_quic_dcid, plain),
		cmocka_unit_test_setup(test_quic_dcid, ahead),
		cmocka_unit_test_setup(test_first_fragment, plain),
		cmocka_unit_test_setup(test_first_fragment, ahead),
		cmocka_unit_test_setup(test_pending_proto, plain),
		cmocka_unit_test_setup(test_pending_proto, ahead),
		cmocka_unit_test_setup(test_quic_pending_other, plain),
		cmocka_unit_test_setup(test_quic_pending_other, ahead),
		cmocka_unit_test_setup(test_dns_udp_counted, plain),
		cmocka_unit_test_setup(test_dns_udp_counted, ahead),
		cmocka_unit_test_setup(test_quic_evicted, plain),
		cmocka_unit_test_setup(test_udp_long_not_quic, plain),
		cmocka_unit_test_setup(test_udp_long_not_quic, ahead),
		cmocka_unit_test_setup(test_tcp_gather_evict, plain),
		cmocka_unit_test_setup(test_tls_ahead, plain),
		cmocka_unit_test_setup(test_settled, plain),
		cmocka_unit_test(test_tls_pair),
		cmocka_unit_test(test_stale_slot),
		cmocka_unit_test(test_stale_fresh),
		cmocka_unit_test(test_burst_slot),
		cmocka_unit_test(test_spread),
		cmocka_unit_test_setup(test_quic_flow, ahead),
		cmocka_unit_test_setup(test_quic_evicted, ahead),
		cmocka_unit_test_setup(test_tcp_gather_evict, ahead),
		cmocka_unit_test_setup(test_tls_ahead, ahead),
		cmocka_unit_test_setup(test_settled, ahead),
		cmocka_unit_test(test_forget_drops),
		cmocka_unit_test(test_move),
		cmocka_unit_test_setup(test_urgent, plain),
		cmocka_unit_test_setup(test_urgent, ahead),
		cmocka_unit_test_setup(test_tfo, plain),
		cmocka_unit_test_setup(test_tfo, ahead),
		cmocka_unit_test_setup(test_fake_syn, plain),
		cmocka_unit_test_setup(test_fake_syn, ahead),
		cmocka_unit_test_setup(test_past_hole, plain),
		cmocka_unit_test_setup(test_past_hole, ahead),
		cmocka_unit_test_setup(test_no_ack, plain),
		cmocka_unit_test_setup(test_no_ack, ahead),
		cmocka_unit_test_setup(test_bad_csum, plain),
		cmocka_unit_test_setup(test_bad_csum, ahead),
		cmocka_unit_test_setup(test_fake_marks, plain),
		cmocka_unit_test_setup(test_fake_marks, ahead),
		cmocka_unit_test_setup(test_hbh_fake, plain),
		cmocka_unit_test_setup(test_hbh_fake, ahead),
		cmocka_unit_test_setup(test_move_many, plain),
		cmocka_unit_test_setup(test_quic_ttl, plain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
