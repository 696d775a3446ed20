/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_names.c - the name parsers (DNS, TLS, HTTP, QUIC Initials) and the
 * out-of-order stream, on crafted and hostile bytes; QUIC against the
 * test vectors of RFC 9001 Appendix A and RFC 9369 Appendix A.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "quic_build.h"
#include "../common/namewire.h"

/* ---- DNS ---- */

/* A query for NAME (presentation form) of TYPE into BUF; its length. */
static size_t dns_query(uint8_t *buf, const char *name, uint16_t type)
{
	return wire_dns_query(buf, 0x1234, name, type);
}

static void test_dns_udp(void **state)
{
	uint8_t b[600];
	struct name_out o;
	size_t n = dns_query(b, "WWW.Example.COM", 28), i;

	assert_int_equal(name_dns_udp(b, n, &o), NAME_DONE);
	assert_string_equal(o.name, "www.example.com");
	assert_int_equal(o.len, 15);
	assert_int_equal(o.qtype, 28);
	/* Every prefix is malformed, never a name. */
	for (i = 0; i < n - 4; i++)
		assert_int_equal(name_dns_udp(b, i, &o), NAME_BAD);
	/* The root. */
	n = dns_query(b, "", 2);
	assert_int_equal(name_dns_udp(b, n, &o), NAME_DONE);
	assert_int_equal(o.len, 0);
	/* A response is not a query. */
	n = dns_query(b, "a.test", 1);
	b[2] |= 0x80;
	assert_int_equal(name_dns_udp(b, n, &o), NAME_NOT);
	b[2] &= 0x7f;
	/* Two questions. */
	b[5] = 2;
	assert_int_equal(name_dns_udp(b, n, &o), NAME_BAD);
	b[5] = 1;
	/* A label with a dot in it. */
	b[13] = '.';
	assert_int_equal(name_dns_udp(b, n, &o), NAME_BAD);
}

static void test_dns_hostile(void **state)
{
	uint8_t b[600];
	struct name_out o;
	size_t n;

	/* A pointer to itself (a loop) and one past the end. */
	n = dns_query(b, "a.test", 1);
	b[12] = 0xc0;
	b[13] = 12;
	assert_int_equal(name_dns_udp(b, n, &o), NAME_BAD);
	b[13] = 0xff;
	assert_int_equal(name_dns_udp(b, n, &o), NAME_BAD);
	/* Label types 0x40 and 0x80. */
	b[12] = 0x41;
	assert_int_equal(name_dns_udp(b, n, &o), NAME_BAD);
	b[12] = 0x81;
	assert_int_equal(name_dns_udp(b, n, &o), NAME_BAD);
	/* A label length that overruns. */
	b[12] = 60;
	assert_int_equal(name_dns_udp(b, n, &o), NAME_BAD);
	/* A name of 255 wire bytes is the longest. */
	memset(b, 0, sizeof(b));
	b[5] = 1;
	n = 12;
	for (int i = 0; i < 4; i++) {
		size_t l = i < 3 ? 63 : 61;	/* 4 + 63*3 + 61 + 1 = 255 */
		b[n++] = (uint8_t)l;
		memset(b + n, 'a', l);
		n += l;
	}
	b[n++] = 0;
	n += 4;
	assert_int_equal(name_dns_udp(b, n, &o), NAME_DONE);
	assert_int_equal(o.len, 253);
	b[12] = 63;	/* ...and one label longer: 257 */
	memmove(b + 12 + 1 + 63 + 2, b + 12 + 1 + 63, n - 12 - 64);
	b[12 + 64] = 'a';
	b[12 + 65] = 'a';
	assert_int_equal(name_dns_udp(b, n + 2, &o), NAME_BAD);
}

/*
 * The question's name as the labels joined by dots and given to
 * name_normalize(), the two-step form the parser does in one pass: -1 if
 * either step refuses it (a label with a dot, too long, not printable).
 */
static int dns_model(const uint8_t *q, size_t len, struct name_out *o)
{
	char text[600];
	size_t at = 0, tl = 0;

	while (at < len && q[at]) {
		uint8_t l = q[at++];

		if (l > 63 || l > len - at || memchr(q + at, '.', l))
			return -1;
		memcpy(text + tl, q + at, l);
		tl += l;
		text[tl++] = '.';
		at += l;
	}
	if (at >= len)
		return -1;
	o->len = 0;
	return tl ? name_normalize(text, tl, o) : 0;
}

/* Random questions of random labels (printable or not, dots, upper
 * case, lengths near the limits): the one-pass parser agrees with the
 * model on every one, and names the same name. */
static void test_dns_model(void **state)
{
	static const uint8_t bytes[] = { 'a', 'Z', '0', '-', '_', '.', ' ',
					 0x7e, 0x7f, 0x21, 0x80, 0, 'A', 'z', '@', '[',
					 '`', '{', 0x20, 0xc1, 0xae, 0xff };
	uint8_t b[600], *exact;
	struct name_out o, m;
	unsigned seed = 20261202, agree = 0;
	enum name_result r;
	int want;

	for (int t = 0; t < 200000; t++) {
		int labels = rand_r(&seed) % 6;
		size_t n = 12;

		memset(b, 0, 12);
		b[5] = 1;
		for (int i = 0; i < labels && n < 500; i++) {
			size_t l = rand_r(&seed) % 4 ? 1 + rand_r(&seed) % 20 :
						       50 + rand_r(&seed) % 16;

			b[n++] = (uint8_t)l;
			for (size_t k = 0; k < l && n < 590; k++)
				b[n++] = rand_r(&seed) % 8 ?
					"abcXYZ019-"[rand_r(&seed) % 10] :
					rand_r(&seed) % 2 ?
					bytes[rand_r(&seed) % sizeof(bytes)] :
					(uint8_t)rand_r(&seed);
		}
		b[n++] = 0;
		memset(b + n, 0, 4);
		n += 4;
		want = dns_model(b + 12, n - 12, &m);
		/* The message alone in its buffer: ASan sees a read past it. */
		exact = malloc(n);
		assert_non_null(exact);
		memcpy(exact, b, n);
		r = name_dns_udp(exact, n, &o);
		free(exact);
		if (want < 0) {
			assert_int_equal(r, NAME_BAD);
			assert_int_equal(o.len, 0);
			continue;
		}
		assert_int_equal(r, NAME_DONE);
		assert_int_equal(o.len, m.len);
		assert_memory_equal(o.name, m.name, (size_t)m.len);
		assert_int_equal(o.name[o.len], '\0');
		agree++;
	}
	assert_true(agree > 1000);	/* both kinds were tried */
	/* Names of 247 to 255 bytes: three labels of 63 and one of 55-63. */
	for (size_t last = 55; last <= 63; last++) {
		size_t n = 12;

		memset(b, 0, 12);
		b[5] = 1;
		for (int i = 0; i < 4; i++) {
			size_t l = i < 3 ? 63 : last;

			b[n++] = (uint8_t)l;
			memset(b + n, 'a', l);
			n += l;
		}
		b[n++] = 0;
		memset(b + n, 0, 4);
		n += 4;
		want = dns_model(b + 12, n - 12, &m);
		assert_int_equal(name_dns_udp(b, n, &o),
				 want < 0 ? NAME_BAD : NAME_DONE);
		assert_int_equal(want < 0, 192 + last > NAME_MAX_LEN);
		assert_int_equal(o.len, want < 0 ? 0 : 192 + last);
	}
}

/* name_label_lower() against a byte at a time: every byte value at every
 * place of labels of 1-20 bytes, read from a buffer of exactly the
 * label (ASan sees a read past it) or followed by 8 '.' bytes (a read
 * past it fails the label without ASan too). */
static void test_label_lower(void **state)
{
	for (size_t n = 1; n <= 20; n++) {
		for (size_t spare = 0; spare <= 8; spare += 8) {
			uint8_t *s = malloc(n + spare);
			char *d = malloc(n + spare);

			assert_non_null(s);
			assert_non_null(d);
			for (size_t at = 0; at < n; at++) {
				for (unsigned v = 0; v < 256; v++) {
					bool ok = v >= 0x21 && v <= 0x7e &&
						  v != '.';

					for (size_t i = 0; i < n + spare; i++)
						s[i] = i < n ? (uint8_t)"aQzM9-[@`{"[
							(i * 7 + n) % 10] : '.';
					s[at] = (uint8_t)v;
					assert_int_equal(name_label_lower(
						d, s, n), ok);
					for (size_t i = 0; ok && i < n; i++)
						assert_int_equal(d[i], s[i] >= 'A' &&
							s[i] <= 'Z' ? s[i] + 32 : s[i]);
				}
			}
			free(s);
			free(d);
		}
	}
}

static void test_dns_tcp(void **state)
{
	uint8_t b[600];
	struct name_out o;
	size_t n = dns_query(b + 2, "tcp.test", 16), i;

	b[0] = (uint8_t)(n >> 8);
	b[1] = (uint8_t)n;
	for (i = 0; i < n + 2; i++)
		assert_int_equal(name_dns_tcp(b, i, &o), NAME_MORE);
	assert_int_equal(name_dns_tcp(b, n + 2, &o), NAME_DONE);
	assert_string_equal(o.name, "tcp.test");
	assert_int_equal(o.qtype, 16);
	/* A length prefix shorter than the question. */
	b[1] = 14;
	assert_int_equal(name_dns_tcp(b, n + 2, &o), NAME_BAD);
}

/* ---- TLS ---- */

struct buf {
	uint8_t b[20000];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put16(struct buf *b, unsigned v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(b, x, 2);
}

/* A server_name extension with the names given (NULL-ended). */
static void ext_sni(struct buf *e, const char *const *names)
{
	size_t list = 0, i;

	for (i = 0; names[i]; i++)
		list += 3 + strlen(names[i]);
	put16(e, 0);
	put16(e, (unsigned)(list + 2));
	put16(e, (unsigned)list);
	for (i = 0; names[i]; i++) {
		uint8_t t = 0;

		put(e, &t, 1);
		put16(e, (unsigned)strlen(names[i]));
		put(e, names[i], strlen(names[i]));
	}
}

static void ext_raw(struct buf *e, unsigned type, size_t len)
{
	put16(e, type);
	put16(e, (unsigned)len);
	memset(e->b + e->n, 0x5a, len);
	e->n += len;
}

/* A ClientHello handshake message with extensions E. */
static void hello(struct buf *h, const struct buf *e)
{
	uint8_t rnd[32] = { 1 }, z = 0, one = 1, sid = 32;
	size_t body;

	h->n = 0;
	put(h, &one, 1);
	put(h, "\0\0\0", 3);
	put16(h, 0x0303);
	put(h, rnd, 32);
	put(h, &sid, 1);
	put(h, rnd, 32);
	put16(h, 4);
	put16(h, 0x1301);
	put16(h, 0x1302);
	put(h, &one, 1);
	put(h, &z, 1);
	put16(h, (unsigned)e->n);
	put(h, e->b, e->n);
	body = h->n - 4;
	h->b[1] = (uint8_t)(body >> 16);
	h->b[2] = (uint8_t)(body >> 8);
	h->b[3] = (uint8_t)body;
}

/* H cut into records of at most RL bytes. */
static void records(struct buf *r, const struct buf *h, size_t rl)
{
	size_t at;
	uint8_t t = 22;

	r->n = 0;
	for (at = 0; at < h->n; at += rl) {
		size_t n = h->n - at < rl ? h->n - at : rl;

		put(r, &t, 1);
		put16(r, 0x0301);
		put16(r, (unsigned)n);
		put(r, h->b + at, n);
	}
}

static struct buf e, h, r;

static void test_tls_sni(void **state)
{
	static const char *const names[] = { "Blocked.TEST.", NULL };
	struct name_out o;
	size_t i;

	e.n = 0;
	ext_raw(&e, 0x0a0a, 0);		/* GREASE */
	ext_raw(&e, 51, 1200);		/* a big key share first */
	ext_sni(&e, names);
	ext_raw(&e, 43, 3);
	hello(&h, &e);
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_DONE);
	assert_string_equal(o.name, "blocked.test");
	assert_false(o.ech);
	/* Every prefix is MORE, never a name or NOT. */
	for (i = 0; i < r.n; i++)
		assert_int_equal(name_tls_stream(r.b, i, &o), NAME_MORE);
	/* Split across records of every size from 1 byte up. */
	for (i = 1; i < 300; i += (i < 40 ? 1 : 37)) {
		records(&r, &h, i);
		assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_DONE);
		assert_string_equal(o.name, "blocked.test");
	}
	/* Not TLS at all. */
	assert_int_equal(name_tls_stream((const uint8_t *)"GET / HTTP", 10, &o),
			 NAME_NOT);
	/* The bare handshake (a QUIC CRYPTO stream). */
	assert_int_equal(name_tls_handshake(h.b, h.n, &o), NAME_DONE);
	assert_string_equal(o.name, "blocked.test");
}

static void test_tls_ech_nosni(void **state)
{
	struct name_out o;

	e.n = 0;
	ext_raw(&e, 0xfe0d, 200);
	hello(&h, &e);
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_DONE);
	assert_int_equal(o.len, 0);
	assert_true(o.ech);
}

static void test_tls_hostile(void **state)
{
	static const char *const two[] = { "a.test", "b.test", NULL };
	static const char *const one[] = { "a.test", NULL };
	static const char *const bad[] = { "a..test", NULL };
	struct name_out o;

	/* Two host names in one extension. */
	e.n = 0;
	ext_sni(&e, two);
	hello(&h, &e);
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_BAD);
	/* Two server_name extensions. */
	e.n = 0;
	ext_sni(&e, one);
	ext_sni(&e, one);
	hello(&h, &e);
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_BAD);
	/* An empty label. */
	e.n = 0;
	ext_sni(&e, bad);
	hello(&h, &e);
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_BAD);
	/* An extension length that overruns the extensions. */
	e.n = 0;
	ext_sni(&e, one);
	hello(&h, &e);
	h.b[h.n - e.n + 3] += 1;	/* the server_name length */
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_BAD);
	/* A handshake length past NAME_HELLO_MAX. */
	hello(&h, &e);
	h.b[1] = 0x10;
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_BAD);
	/* A non-handshake record in the middle. */
	hello(&h, &e);
	records(&r, &h, 30);
	r.b[35] = 23;
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_BAD);
	/* A zero-length record. */
	r.b[35] = 22;
	r.b[38] = 0;
	r.b[39] = 0;
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_BAD);
	/* A ServerHello is not a ClientHello. */
	hello(&h, &e);
	h.b[0] = 2;
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_NOT);
}

/*
 * Two extensions of one type are malformed (RFC 8446 4.2): random lists
 * of extension types (from a few types, so that many repeat, and from
 * all 65536) against the plain check of every pair; and a list at the
 * 128 types the parser keeps.
 */
static void test_tls_ext_dups(void **state)
{
	static const char *const one[] = { "a.test", NULL };
	uint64_t x = 0x243f6a8885a308d3ull;
	unsigned types[140];
	struct name_out o;

	for (int round = 0; round < 20000; round++) {
		size_t n = 1 + (size_t)(round % 130);
		unsigned span = round % 2 ? 65536 : 40;
		bool dup = false;

		e.n = 0;
		ext_sni(&e, one);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			types[i] = 1 + (unsigned)(x % (span - 1));
			ext_raw(&e, types[i], 0);
			for (size_t j = 0; j < i; j++)
				dup |= types[j] == types[i];
		}
		hello(&h, &e);
		records(&r, &h, 16384);
		if (dup || n + 1 > 128) {
			assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_BAD);
		} else {
			assert_int_equal(name_tls_stream(r.b, r.n, &o),
					 NAME_DONE);
			assert_string_equal(o.name, "a.test");
		}
	}
	/* 127 types and the server_name: the most the parser keeps. */
	e.n = 0;
	ext_sni(&e, one);
	for (unsigned i = 1; i < 128; i++)
		ext_raw(&e, i * 509, 0);
	hello(&h, &e);
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_DONE);
	/* 126 and the server_name, then the first again (128 in all): the
	 * repeat is found, far from its first. */
	e.n = 0;
	ext_sni(&e, one);
	for (unsigned i = 1; i < 127; i++)
		ext_raw(&e, i * 509, 0);
	ext_raw(&e, 509, 0);
	hello(&h, &e);
	records(&r, &h, 16384);
	assert_int_equal(name_tls_stream(r.b, r.n, &o), NAME_BAD);
}

/*
 * The model: the ClientHello parser as it was before its duplicate check
 * had a filter and its records were read without a copy (55bbca0 and
 * after): plain, each extension compared with all before it, every
 * record copied.
 */
struct mrd {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static const uint8_t *m_take(struct mrd *rd, size_t n)
{
	const uint8_t *p = rd->p;

	if (rd->bad || n > rd->left) {
		rd->bad = true;
		return NULL;
	}
	rd->p += n;
	rd->left -= n;
	return p;
}

static size_t m_take_n(struct mrd *rd, int bytes)
{
	const uint8_t *p = m_take(rd, (size_t)bytes);

	if (!p)
		return 0;
	return bytes == 1 ? p[0] : (size_t)p[0] << 8 | p[1];
}

static struct mrd m_sub(struct mrd *rd, size_t n)
{
	struct mrd s = { .p = m_take(rd, n), .left = n };

	if (!s.p)
		s = (struct mrd){ .bad = true };
	return s;
}

static bool m_sni(struct mrd ext, struct name_out *out)
{
	struct mrd list = m_sub(&ext, m_take_n(&ext, 2));
	bool found = false;

	if (ext.bad || ext.left || list.left == 0)
		return false;
	while (list.left && !list.bad) {
		unsigned type = (unsigned)m_take_n(&list, 1);
		struct mrd nm = m_sub(&list, m_take_n(&list, 2));

		if (list.bad || nm.bad)
			return false;
		if (type != 0)
			continue;
		if (found || name_normalize((const char *)nm.p, nm.left,
					    out) < 0)
			return false;
		found = true;
	}
	return found && !list.bad;
}

static bool m_client_hello(struct mrd rd, struct name_out *out)
{
	uint16_t seen[128];
	size_t n, ns = 0;
	struct mrd exts;

	m_take(&rd, 2 + 32);
	n = m_take_n(&rd, 1);
	if (n > 32)
		return false;
	m_take(&rd, n);
	n = m_take_n(&rd, 2);
	if (n < 2 || n % 2)
		return false;
	m_take(&rd, n);
	n = m_take_n(&rd, 1);
	if (n < 1)
		return false;
	m_take(&rd, n);
	if (rd.bad)
		return false;
	if (rd.left == 0)
		return true;
	exts = m_sub(&rd, m_take_n(&rd, 2));
	if (rd.bad || exts.bad || rd.left)
		return false;
	while (exts.left) {
		unsigned type = (unsigned)m_take_n(&exts, 2);
		struct mrd data = m_sub(&exts, m_take_n(&exts, 2));

		if (exts.bad || data.bad)
			return false;
		for (size_t i = 0; i < ns; i++)
			if (seen[i] == type)
				return false;
		if (ns == 128)
			return false;
		seen[ns++] = (uint16_t)type;
		if (type == 0 && !m_sni(data, out))
			return false;
		if (type == 0xfe0d)
			out->ech = true;
	}
	return true;
}

static enum name_result m_handshake(const uint8_t *p, size_t len,
				    struct name_out *out)
{
	size_t body;

	memset(out, 0, sizeof(*out));
	if (len < 1)
		return NAME_MORE;
	if (p[0] != 1)
		return NAME_NOT;
	if (len < 4)
		return NAME_MORE;
	body = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
	if (body + 4 > NAME_HELLO_MAX)
		return NAME_BAD;
	if (len - 4 < body)
		return NAME_MORE;
	if (!m_client_hello((struct mrd){ .p = p + 4, .left = body }, out)) {
		memset(out, 0, sizeof(*out));
		return NAME_BAD;
	}
	return NAME_DONE;
}

static enum name_result m_stream(const uint8_t *p, size_t len,
				 struct name_out *out)
{
	static uint8_t hs[NAME_HELLO_MAX];
	size_t at = 0, hl = 0;
	enum name_result res;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return NAME_MORE;
	if (p[0] != 22)
		return NAME_NOT;
	for (;;) {
		size_t rl, tl;

		if (len - at < 5) {
			if (at < len && p[at] != 22)
				return NAME_BAD;
			if (len - at >= 2 && p[at + 1] != 3)
				return NAME_BAD;
			return NAME_MORE;
		}
		if (p[at] != 22 || p[at + 1] != 3)
			return at ? NAME_BAD : NAME_NOT;
		rl = (size_t)p[at + 3] << 8 | p[at + 4];
		if (rl == 0 || rl > 16384 + 2048)
			return NAME_BAD;
		at += 5;
		tl = rl < len - at ? rl : len - at;
		if (tl > sizeof(hs) - hl)
			tl = sizeof(hs) - hl;
		memcpy(hs + hl, p + at, tl);
		hl += tl;
		at += tl;
		res = m_handshake(hs, hl, out);
		if (res != NAME_MORE)
			return res;
		if (hl == sizeof(hs))
			return NAME_BAD;
		if (tl < rl)
			return NAME_MORE;
	}
}

static uint64_t rnd_x = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rnd_x ^= rnd_x << 13;
	rnd_x ^= rnd_x >> 7;
	rnd_x ^= rnd_x << 17;
	return (uint32_t)(rnd_x % n);
}

/*
 * name_tls_stream() against the model on 100,000 ClientHellos: a few
 * random extensions (server_name with one or two names, good or bad,
 * encrypted_client_hello, repeats), cut into records of a random size,
 * cut short at a random byte, and sometimes with bytes changed.
 */
static void test_tls_model(void **state)
{
	static const char *const good[] = { "A.test", NULL };
	static const char *const two[] = { "a.test", "b.test", NULL };
	static const char *const bad[] = { "a..test", NULL };
	static const char *const *const snis[] = { good, two, bad };
	struct name_out o, m;

	(void)state;
	for (int round = 0; round < 100000; round++) {
		size_t n_ext = rnd(12), len;
		enum name_result got, want;

		e.n = 0;
		for (size_t i = 0; i < n_ext; i++) {
			switch (rnd(6)) {
			case 0:
				ext_sni(&e, snis[rnd(3)]);
				break;
			case 1:
				ext_raw(&e, 0xfe0d, rnd(300));
				break;
			case 2:
				ext_raw(&e, rnd(8), rnd(40));
				break;
			default:
				ext_raw(&e, rnd(65536), rnd(900));
			}
		}
		hello(&h, &e);
		records(&r, &h, 1 + rnd(rnd(2) ? 2000 : 64));
		len = rnd(4) ? r.n : rnd((uint32_t)r.n + 1);
		if (!rnd(4))
			for (int k = 1 + (int)rnd(3); k > 0; k--)
				r.b[rnd((uint32_t)r.n)] ^= (uint8_t)(1 + rnd(255));
		got = name_tls_stream(r.b, len, &o);
		want = m_stream(r.b, len, &m);
		assert_int_equal(got, want);
		if (got == NAME_DONE) {
			assert_int_equal(o.len, m.len);
			assert_string_equal(o.name, m.name);
			assert_int_equal(o.ech, m.ech);
		}
	}
}

/* ---- HTTP ---- */

static enum name_result http(const char *s, struct name_out *o)
{
	return name_http_host((const uint8_t *)s, strlen(s), o);
}

static void test_http(void **state)
{
	static const char req[] =
		"GET /x HTTP/1.1\r\nUser-Agent: t\r\nHost: WWW.Blocked.test:8080\r\n\r\n";
	struct name_out o;
	size_t i;

	assert_int_equal(http(req, &o), NAME_DONE);
	assert_string_equal(o.name, "www.blocked.test");
	for (i = 0; i < sizeof(req) - 1; i++)
		assert_int_equal(name_http_host((const uint8_t *)req, i, &o),
				 NAME_MORE);
	assert_int_equal(http("GET / HTTP/1.0\r\n\r\n", &o), NAME_DONE);
	assert_int_equal(o.len, 0);
	assert_int_equal(http("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n",
			      &o), NAME_DONE);
	assert_string_equal(o.name, "a.test");
	assert_int_equal(http("CONNECT b.test:443 HTTP/1.1\r\n\r\n", &o),
			 NAME_DONE);
	assert_string_equal(o.name, "b.test");
	assert_int_equal(http("GET / HTTP/1.1\r\nhost:\t c.test. \r\n\r\n", &o),
			 NAME_DONE);
	assert_string_equal(o.name, "c.test");
	assert_int_equal(http("\x16\x03\x01", &o), NAME_NOT);
	/* Python's http.server takes " GET / HTTP/1.1": not yet known. */
	assert_int_equal(http(" GET", &o), NAME_MORE);
}

/* First lines of other protocols that speak a line with a space first:
 * not HTTP (no method, no HTTP version), so NOT, not a malformed
 * request. A prefix of one is MORE, never BAD. */
static void test_http_not(void **state)
{
	static const char *const lines[] = {
		"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n",
		"SSH-2.0-Go\r\n",
		"SSH-2.0-PuTTY_Release_0.78\n",
		"EHLO client.example\r\n",
		"HELO x\r\n",
		"a1 LOGIN bob secret\r\n",
		"USER bob\r\n",
		"PING\r\n",
		"get key\r\n",		/* memcached */
		"\r\nEHLO x\r\n",
		"  EHLO x\r\n",
		"OPTIONSX / x\r\n",
		"GETS\tfoo\r\n",
		/* other protocols' lines that start with an HTTP method but
		 * name no version: no server reads a request in them (HTTP/0.9
		 * is GET alone, of a path or an absolute URI) */
		"GET key\r\n",				/* Redis inline */
		"DELETE key\r\n",
		"OPTIONS rtsp://cam.test/s RTSP/1.0\r\nCSeq: 1\r\n\r\n",
		"OPTIONS * RTSP/1.0\r\n",
		"OPTIONS sip:bob@sip.test SIP/2.0\r\n",
		"GET\tkey\r\n",
	};
	struct name_out o;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		size_t n = strlen(lines[i]);

		assert_int_equal(http(lines[i], &o), NAME_NOT);
		/* and with what follows the line (an SSH KEXINIT) */
		for (j = 0; j + 1 < n; j++) {
			enum name_result got = name_http_host(
				(const uint8_t *)lines[i], j, &o);

			assert_true(got == NAME_MORE || got == NAME_NOT);
		}
	}
	{
		static const char ssh[] =
			"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"
			"\0\0\x05\xdc\x07\x14";

		assert_int_equal(name_http_host((const uint8_t *)ssh,
						sizeof(ssh) - 1, &o), NAME_NOT);
	}
	/* A first word that no server takes for a method: NOT at once. */
	assert_int_equal(http("SSH\x01", &o), NAME_NOT);
	assert_int_equal(name_http_host((const uint8_t *)
					"\x00\x00\x00\x08\x04\xd2\x16\x2f",
					8, &o), NAME_NOT);	/* postgres */
	/* A first word that is no method yet may still end in HTTP/1.1
	 * (Go and Apache take any token for a method): MORE, not NOT. */
	assert_int_equal(http("SSH-2.0-OpenSSH_9.2p1 Debian", &o), NAME_MORE);
	assert_int_equal(http("EHLO client.example", &o), NAME_MORE);
}

static void test_http_hostile(void **state)
{
	struct name_out o;

	assert_int_equal(http("GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
			      &o), NAME_BAD);
	assert_int_equal(http("GET / HTTP/1.1\r\nHost : a.test\r\n\r\n", &o),
			 NAME_BAD);
	assert_int_equal(http("GET / HTTP/1.1\r\nX: y\r\n z\r\n\r\n", &o),
			 NAME_BAD);
	assert_int_equal(http("GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n",
			      &o), NAME_BAD);
	assert_int_equal(http("GET http://u@a.test/ HTTP/1.1\r\n\r\n", &o),
			 NAME_BAD);
	assert_int_equal(http("GET / HTTP/1.1\nHost: a.test\n\n", &o), NAME_BAD);
	assert_int_equal(http("GET / HTTP/2.0\r\n\r\n", &o), NAME_BAD);
	assert_int_equal(http("GET / HTTP/1.1\r\nHost: a.test:8x\r\n\r\n", &o),
			 NAME_BAD);
	assert_int_equal(http("GET / HTTP/1.1\r\nHost: a\x01.test\r\n\r\n", &o),
			 NAME_BAD);
}

/* Requests a real HTTP/1.x server would take (nginx, Apache, Go, Python's
 * http.server): read (the name is blocked.test) or BAD, never NOT, or a
 * blocklist is evaded by dressing a request as another protocol. */
static void test_http_evasion(void **state)
{
	static const char *const reqs[] = {
		/* extension and lower-case methods (Go, Apache, an nginx
		 * proxy pass them on) */
		"FOO / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"get / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"SSH-2.0-x / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"EHLO / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"PROPFIND / HTTP/1.1\r\nHost: a\r\nHost: blocked.test\r\n\r\n",
		/* tabs and other white space between the words (Apache
		 * unsafe, Python splits on any) */
		"GET\t/\tHTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"FOO\t/\tHTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"FOO\x1f/\x1fHTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"FOO\xa0/\xa0HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"GET  / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		/* trailing white space, lower-case or odd version */
		"FOO / HTTP/1.1 \r\nHost: blocked.test\r\n\r\n",
		"FOO / http/1.1\r\nHost: blocked.test\r\n\r\n",
		"FOO / HTTP/1.10\r\nHost: blocked.test\r\n\r\n",
		"FOO / HTTP/2.0\r\nHost: blocked.test\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		/* leading empty lines (nginx, Apache skip them) and white
		 * space (Python) */
		"\r\nGET / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"\r\n\r\nFOO / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"\nGET / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		" GET / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"\tFOO / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		/* HTTP/0.9, absolute-form (nginx picks the server by it) */
		"GET http://blocked.test/\r\n",
		"GET /\r\n",
		"GET\r\n",
		/* bare LF line ends */
		"FOO / HTTP/1.1\nHost: blocked.test\n\n",
		"GET / HTTP/1.1\nHost: blocked.test\n\n",
		/* HTTP/1.1 in an unknown method's line, anywhere in it */
		"X-Y blocked.test HTTP/1.1 x\r\n\r\n",
		"FOO /\rHTTP/1.1\r\n\r\n",
		/* hostile heads after a well-formed line of any method */
		"FOO / HTTP/1.1\r\nHost: a.test\r\nHost: blocked.test\r\n\r\n",
		"FOO / HTTP/1.1\r\nX: y\r\nHost: a.test\r\n blocked.test\r\n\r\n",
		"FOO / HTTP/1.1\r\nHost : blocked.test\r\n\r\n",
		"FOO http://a.test/ HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
	};
	struct name_out o;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		size_t n = strlen(reqs[i]);

		enum name_result got = http(reqs[i], &o);

		/* read (its name is the blocked one) or malformed */
		if (got != NAME_BAD &&
		    !(got == NAME_DONE && !strcmp(o.name, "blocked.test")))
			fail_msg("request %zu: %s", i, name_result_str(got));
		/* no prefix of one is NOT: the flow would settle on it */
		for (j = 0; j < n; j++)
			assert_int_not_equal(name_http_host(
				(const uint8_t *)reqs[i], j, &o), NAME_NOT);
	}
	/* An over-long first line of an unknown word: BAD at the limit. */
	{
		static uint8_t big[16384];

		memset(big, 'A', sizeof(big));
		big[3] = ' ';
		assert_int_equal(name_http_host(big, sizeof(big), &o), NAME_BAD);
		assert_int_equal(name_http_host(big, sizeof(big) - 1, &o),
				 NAME_MORE);
	}
	/* Methods of RFC 9110 and PATCH are read as before, and a
	 * well-formed line of an extension method too. */
	assert_int_equal(http("PATCH /x HTTP/1.1\r\nHost: p.test\r\n\r\n", &o),
			 NAME_DONE);
	assert_string_equal(o.name, "p.test");
	assert_int_equal(http("PROPFIND /x HTTP/1.1\r\nHost: d.test\r\n\r\n",
			      &o), NAME_DONE);
	assert_string_equal(o.name, "d.test");
	assert_int_equal(http("OPTIONS * HTTP/1.1\r\nHost: o.test\r\n\r\n", &o),
			 NAME_DONE);
	assert_string_equal(o.name, "o.test");
}

/* ---- QUIC ---- */

static void test_quic_keys(void **state)
{
	uint8_t dcid[8], key[16], iv[12], hp[16], x[16];

	unhex("8394c8f03e515708", dcid);
	/* RFC 9001 A.1 */
	assert_int_equal(name_quic_keys(QUIC_V1, dcid, 8, key, iv, hp), 0);
	unhex("1f369613dd76d5467730efcbe3b1a22d", x);
	assert_memory_equal(key, x, 16);
	unhex("fa044b2f42a3fd3b46fb255c", x);
	assert_memory_equal(iv, x, 12);
	unhex("9f50449e04a0e810283a1e9933adedd2", x);
	assert_memory_equal(hp, x, 16);
	/* RFC 9369 A.1 */
	assert_int_equal(name_quic_keys(QUIC_V2, dcid, 8, key, iv, hp), 0);
	unhex("8b1a0bc121284290a29e0971b5cd045d", x);
	assert_memory_equal(key, x, 16);
	unhex("91f73e2351d8fa91660e909f", x);
	assert_memory_equal(iv, x, 12);
	unhex("45b95e15235d6f45a6b19cbcb0294ba9", x);
	assert_memory_equal(hp, x, 16);
	assert_int_equal(name_quic_keys(0xff00001d, dcid, 8, key, iv, hp),
			 -EINVAL);
}

static uint8_t pl[1200], pkt[1300], hdr[64];

/* RFC 9001 A.2: the protected client Initial; its start as published. */
static void test_quic_rfc9001_a2(void **state)
{
	static const char a2_start[] =
		"c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11"
		"d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399";
	uint8_t want[64];
	struct quic_initial *q = malloc(sizeof(*q));
	struct name_out o;
	size_t hl, n, wn;

	hl = unhex("c300000001088394c8f03e5157080000449e00000002", hdr);
	memset(pl, 0, sizeof(pl));
	unhex(A2_CRYPTO, pl);
	n = quic_protect(QUIC_V1, hdr, hl, 4, 2, pl, 1162, pkt);
	assert_int_equal(n, 1200);
	wn = unhex(a2_start, want);
	assert_memory_equal(pkt, want, wn);

	assert_int_equal(name_quic_initial(pkt, n, q), NAME_DONE);
	assert_int_equal(q->version, QUIC_V1);
	assert_int_equal(q->n_frames, 1);
	assert_int_equal(q->frames[0].offset, 0);
	assert_int_equal(q->frames[0].len, 0xf1);
	assert_int_equal(name_tls_handshake(q->plain + q->frames[0].pos,
					    q->frames[0].len, &o), NAME_DONE);
	assert_string_equal(o.name, "example.com");
	/* A flipped bit anywhere fails the tag (or the header). */
	for (size_t i = 18; i < n; i += 97) {
		pkt[i] ^= 0x10;
		assert_int_equal(name_quic_initial(pkt, n, q), NAME_BAD);
		pkt[i] ^= 0x10;
	}
	/* A length past the datagram. */
	assert_int_equal(name_quic_initial(pkt, n - 1, q), NAME_BAD);
	free(q);
}

/* v2 (RFC 9369): the type bits of an Initial are 01. */
static void test_quic_v2_split(void **state)
{
	struct quic_initial *q = malloc(sizeof(*q));
	struct name_stream s;
	uint8_t mem[2048], ch[300];
	struct name_out o;
	size_t hl, n, chn, k;

	/* The A.2 ClientHello as two CRYPTO frames, second first. */
	chn = unhex(A2_CRYPTO + 8, ch);	/* past 06 00 40f1 */
	k = 100;
	memset(pl, 0, sizeof(pl));
	n = 0;
	pl[n++] = 0x06;
	pl[n++] = 0x40;
	pl[n++] = (uint8_t)k;		/* offset 100 */
	pl[n++] = 0x40;
	pl[n++] = (uint8_t)(chn - k);
	memcpy(pl + n, ch + k, chn - k);
	n += chn - k;
	pl[n++] = 0x01;			/* PING */
	pl[n++] = 0x06;
	pl[n++] = 0x00;			/* offset 0 */
	pl[n++] = 0x40;
	pl[n++] = (uint8_t)k;
	memcpy(pl + n, ch, k);
	hl = unhex("d36b3343cf088394c8f03e5157080000449e00000000", hdr);
	n = quic_protect(QUIC_V2, hdr, hl, 4, 0, pl, 1162, pkt);
	assert_int_equal(name_quic_initial(pkt, n, q), NAME_DONE);
	assert_int_equal(q->version, QUIC_V2);
	assert_int_equal(q->n_frames, 2);
	name_stream_init(&s, mem, 1024);
	for (unsigned f = 0; f < q->n_frames; f++)
		assert_int_equal(name_stream_put(&s, q->frames[f].offset,
						 q->plain + q->frames[f].pos,
						 q->frames[f].len), 0);
	assert_int_equal(s.contig, chn);
	assert_int_equal(name_tls_handshake(s.buf, s.contig, &o), NAME_DONE);
	assert_string_equal(o.name, "example.com");
	/* The v1 type bits under the v2 version: not an Initial. */
	pkt[0] = (uint8_t)((pkt[0] & 0xcf) | 0x00);
	assert_int_not_equal(name_quic_initial(pkt, n, q), NAME_DONE);
	free(q);
}

static void test_quic_not(void **state)
{
	struct quic_initial *q = malloc(sizeof(*q));
	uint8_t b[40] = { 0x40, 1, 2, 3 };

	assert_int_equal(name_quic_initial(b, sizeof(b), q), NAME_NOT);
	b[0] = 0xc0;
	b[4] = 0x07;		/* unknown version */
	assert_int_equal(name_quic_initial(b, sizeof(b), q), NAME_NOT);
	b[1] = b[2] = b[3] = 0;
	b[4] = 0x01;
	b[5] = 21;		/* DCID too long */
	assert_int_equal(name_quic_initial(b, sizeof(b), q), NAME_BAD);
	free(q);
}

/* ---- stream ---- */

static void test_stream(void **state)
{
	uint8_t mem[64];
	struct name_stream s;

	assert_true(name_stream_bytes(50) <= sizeof(mem));
	name_stream_init(&s, mem, 50);
	assert_int_equal(name_stream_put(&s, 10, (const uint8_t *)"klmno", 5), 0);
	assert_int_equal(s.contig, 0);
	assert_int_equal(name_stream_put(&s, 0, (const uint8_t *)"abcdefghij", 10), 0);
	assert_int_equal(s.contig, 15);
	/* An overlapping retransmission with the same bytes... */
	assert_int_equal(name_stream_put(&s, 8, (const uint8_t *)"ijklm", 5), 0);
	/* ...and with other bytes. */
	assert_int_equal(name_stream_put(&s, 8, (const uint8_t *)"ijXlm", 5),
			 -EILSEQ);
	assert_memory_equal(s.buf, "abcdefghijklmno", 15);
	/* Past the end. */
	assert_int_equal(name_stream_put(&s, 45, (const uint8_t *)"0123456789", 10), 1);
	assert_int_equal(name_stream_put(&s, 1000, (const uint8_t *)"x", 1), 1);
	assert_int_equal(s.contig, 15);
}

/*
 * name_stream_put() against a byte-at-a-time model: random writes (in
 * order, out of order, overlapping, past the end, agreeing or not with
 * what is there) must give the same result, bytes and contig.
 */
static void test_stream_model(void **state)
{
	enum { CAP = 300 };
	static uint8_t mem[CAP + CAP / 8 + 1];
	uint8_t mbuf[CAP], mhave[CAP], data[400];
	struct name_stream s;
	uint32_t seed = 12345, mcontig;

	for (int round = 0; round < 2000; round++) {
		name_stream_init(&s, mem, CAP);
		memset(mhave, 0, sizeof(mhave));
		mcontig = 0;
		for (int w = 0; w < 12; w++) {
			uint32_t off, len, i;
			int want = 0, got;

			seed = seed * 1103515245u + 12345u;
			off = (seed >> 8) % (CAP + 40);
			seed = seed * 1103515245u + 12345u;
			len = (seed >> 8) % 120;
			for (i = 0; i < len; i++) {
				seed = seed * 1103515245u + 12345u;
				/* mostly what the model holds (or 'a'+i) */
				data[i] = off + i < CAP && mhave[off + i] &&
					  (seed >> 16) % 50 ? mbuf[off + i] :
					  (uint8_t)('a' + (off + i) % 26 +
						    ((seed >> 16) % 97 == 0));
			}
			for (i = 0; i < len && off + i < CAP; i++)
				if (mhave[off + i] && mbuf[off + i] != data[i])
					want = -EILSEQ;
			if (!want && off + len > CAP && len)
				want = 1;
			if (want >= 0)
				for (i = 0; i < len && off + i < CAP; i++) {
					mbuf[off + i] = data[i];
					mhave[off + i] = 1;
				}
			while (mcontig < CAP && mhave[mcontig])
				mcontig++;
			got = name_stream_put(&s, off, data, len);
			assert_int_equal(got, want);
			assert_int_equal(s.contig, mcontig);
		}
		for (uint32_t i = 0; i < CAP; i++)
			if (mhave[i])
				assert_int_equal(s.buf[i], mbuf[i]);
	}
}

/* name_normalize() as it was, a byte at a time: the model. */
static int normalize_model(const char *s, size_t len, struct name_out *out)
{
	size_t i, label = 0;

	if (len && s[len - 1] == '.')
		len--;
	if (len == 0 || len > NAME_MAX_LEN)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '.') {
			if (label == 0)
				return -EINVAL;
			label = 0;
		} else if (c < 0x21 || c > 0x7e || ++label > 63) {
			return -EINVAL;
		}
		out->name[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : (char)c;
	}
	if (label == 0)
		return -EINVAL;
	out->name[len] = '\0';
	out->len = (uint16_t)len;
	return 0;
}

/* Random names (labels of 0-70 bytes, some bytes of any value, 0-260
 * bytes in all): name_normalize() agrees with the model on every one. */
static void test_normalize_model(void **state)
{
	unsigned seed = 99, ok = 0;
	struct name_out o, m;
	char b[300];

	for (int t = 0; t < 200000; t++) {
		size_t n = 0, want_n = (size_t)rand_r(&seed) % 261;
		int got;

		while (n < want_n) {
			size_t l = rand_r(&seed) % 8 ? (size_t)rand_r(&seed) % 12 :
				   60 + (size_t)rand_r(&seed) % 11;

			for (size_t k = 0; k < l && n < want_n; k++)
				b[n++] = rand_r(&seed) % 16 ?
					"aZ09-_@[`{~!"[rand_r(&seed) % 12] :
					(char)rand_r(&seed);
			if (n < want_n)
				b[n++] = '.';
		}
		got = normalize_model(b, n, &m);
		assert_int_equal(name_normalize(b, n, &o), got);
		if (got == 0) {
			assert_int_equal(o.len, m.len);
			assert_string_equal(o.name, m.name);
			ok++;
		}
	}
	assert_true(ok > 10000);
}

static void test_normalize(void **state)
{
	struct name_out o;

	assert_int_equal(name_normalize("A.B.", 4, &o), 0);
	assert_string_equal(o.name, "a.b");
	assert_int_equal(name_normalize(".", 1, &o), -EINVAL);
	assert_int_equal(name_normalize("a..b", 4, &o), -EINVAL);
	assert_int_equal(name_normalize(".a", 2, &o), -EINVAL);
	assert_int_equal(name_normalize("a b", 3, &o), -EINVAL);
	assert_int_equal(name_normalize("\xc3\xa9.test", 7, &o), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dns_udp),
		cmocka_unit_test(test_dns_hostile),
		cmocka_unit_test(test_dns_model),
		cmocka_unit_test(test_label_lower),
		cmocka_unit_test(test_dns_tcp),
		cmocka_unit_test(test_tls_sni),
		cmocka_unit_test(test_tls_ech_nosni),
		cmocka_unit_test(test_tls_hostile),
		cmocka_unit_test(test_tls_ext_dups),
		cmocka_unit_test(test_tls_model),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_http_hostile),
		cmocka_unit_test(test_http_not),
		cmocka_unit_test(test_http_evasion),
		cmocka_unit_test(test_quic_keys),
		cmocka_unit_test(test_quic_rfc9001_a2),
		cmocka_unit_test(test_quic_v2_split),
		cmocka_unit_test(test_quic_not),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_stream_model),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_normalize_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
