/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * name_tls.c - the server_name (RFC 6066 3) of a TLS ClientHello (RFC 8446
 * 4.1.2) and whether it carries encrypted_client_hello, from the client's
 * record stream (handshake records joined: a ClientHello may span
 * several) or from bare handshake bytes (a QUIC CRYPTO stream).
 */
#include <string.h>

#include "names.h"

#define REC_HDR 5
#define REC_HANDSHAKE 22
#define REC_MAX (16384 + 2048)	/* TLSCiphertext limit; plaintext is less */
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0x0000
#define EXT_ECH 0xfe0d

/* A bounded reader: every take fails once past the end. */
struct rd {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static inline const uint8_t *take(struct rd *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->bad || n > r->left) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return p;
}

/* A 1- or 2-byte big-endian length or type; 0 once past the end. */
static inline size_t take_n(struct rd *r, int bytes)
{
	const uint8_t *p = take(r, (size_t)bytes);

	if (!p)
		return 0;
	return bytes == 1 ? p[0] : (size_t)p[0] << 8 | p[1];
}

/* A sub-reader over the next N bytes of R. */
static struct rd sub(struct rd *r, size_t n)
{
	struct rd s = { .p = take(r, n), .left = n, .bad = false };

	if (!s.p)
		s = (struct rd){ .bad = true };
	return s;
}

/* server_name extension data: exactly one host_name. */
static bool sni(struct rd ext, struct name_out *out)
{
	struct rd list = sub(&ext, take_n(&ext, 2));
	bool found = false;

	if (ext.bad || ext.left || list.left == 0)
		return false;
	while (list.left && !list.bad) {
		unsigned type = (unsigned)take_n(&list, 1);
		struct rd nm = sub(&list, take_n(&list, 2));

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

/* Extension TYPE's bit in a 256-bit filter of the types seen. */
static unsigned type_bit(unsigned type)
{
	return (type * 0x9e37u) >> 8 & 255;
}

/*
 * Has TYPE been seen (SEEN[0..N), FILTER the bits of its types)? The list
 * is searched only when TYPE's bit is set: comparing each type with all
 * before it took up to 190 comparisons for a browser's 15-20 extensions,
 * and 8,000 for a hostile ClientHello's 128.
 */
static bool seen_before(const uint16_t *seen, size_t n,
			const uint64_t filter[4], unsigned type)
{
	unsigned b = type_bit(type);

	if (!(filter[b / 64] >> (b % 64) & 1))
		return false;
	for (size_t i = 0; i < n; i++)
		if (seen[i] == type)
			return true;
	return false;
}

/* Types seen so far: those below 64 (nearly all a browser sends) as
 * bits, the others in a list behind a filter. */
struct ext_types {
	uint64_t low;
	uint64_t filter[4];
	uint16_t high[128];
	size_t n_high;
};

/* Note TYPE; false if it was seen before. */
static bool first_of_type(struct ext_types *t, unsigned type)
{
	unsigned b;

	if (type < 64) {
		if (t->low >> type & 1)
			return false;
		t->low |= (uint64_t)1 << type;
		return true;
	}
	if (seen_before(t->high, t->n_high, t->filter, type))
		return false;
	b = type_bit(type);
	t->high[t->n_high++] = (uint16_t)type;
	t->filter[b / 64] |= (uint64_t)1 << (b % 64);
	return true;
}

/* Extensions, 128 at most; two of one type are malformed (RFC 8446
 * 4.2). */
static bool extensions(struct rd exts, struct name_out *out)
{
	struct ext_types t;
	size_t n = 0;

	t.low = 0;
	memset(t.filter, 0, sizeof(t.filter));
	t.n_high = 0;
	while (exts.left) {
		unsigned type = (unsigned)take_n(&exts, 2);
		struct rd data = sub(&exts, take_n(&exts, 2));

		if (exts.bad || data.bad || n++ == 128 ||
		    !first_of_type(&t, type))
			return false;
		if (type == EXT_SERVER_NAME && !sni(data, out))
			return false;
		if (type == EXT_ECH)
			out->ech = true;
	}
	return true;
}

/* The ClientHello body. */
static bool client_hello(struct rd r, struct name_out *out)
{
	size_t n;

	take(&r, 2 + 32);			/* legacy_version, random */
	n = take_n(&r, 1);			/* legacy_session_id */
	if (n > 32)
		return false;
	take(&r, n);
	n = take_n(&r, 2);			/* cipher_suites */
	if (n < 2 || n % 2)
		return false;
	take(&r, n);
	n = take_n(&r, 1);			/* legacy_compression_methods */
	if (n < 1)
		return false;
	take(&r, n);
	if (r.bad)
		return false;
	if (r.left == 0)
		return true;			/* no extensions at all */
	{
		struct rd exts = sub(&r, take_n(&r, 2));

		if (r.bad || exts.bad || r.left)
			return false;
		return extensions(exts, out);
	}
}

enum name_result name_tls_handshake(const uint8_t *p, size_t len,
				    struct name_out *out)
{
	size_t body;

	name_out_clear(out);
	if (len < 1)
		return NAME_MORE;
	if (p[0] != HS_CLIENT_HELLO)
		return NAME_NOT;
	if (len < 4)
		return NAME_MORE;
	body = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
	if (body + 4 > NAME_HELLO_MAX)
		return NAME_BAD;
	if (len - 4 < body)
		return NAME_MORE;
	if (!client_hello((struct rd){ .p = p + 4, .left = body }, out)) {
		name_out_clear(out);
		return NAME_BAD;
	}
	return NAME_DONE;
}

enum name_result name_tls_stream(const uint8_t *p, size_t len,
				 struct name_out *out)
{
	uint8_t hs[NAME_HELLO_MAX];
	size_t at = 0, hl = 0;
	enum name_result r;

	name_out_clear(out);
	if (len == 0)
		return NAME_MORE;
	if (p[0] != REC_HANDSHAKE)
		return NAME_NOT;
	for (;;) {
		size_t rl, take_len;

		if (len - at < REC_HDR) {
			/* A record header cut short: still consistent? */
			if (at < len && p[at] != REC_HANDSHAKE)
				return NAME_BAD;
			if (len - at >= 2 && p[at + 1] != 3)
				return NAME_BAD;
			return NAME_MORE;
		}
		if (p[at] != REC_HANDSHAKE || p[at + 1] != 3)
			return at ? NAME_BAD : NAME_NOT;
		rl = (size_t)p[at + 3] << 8 | p[at + 4];
		if (rl == 0 || rl > REC_MAX)
			return NAME_BAD;
		at += REC_HDR;
		take_len = rl < len - at ? rl : len - at;
		if (take_len > sizeof(hs) - hl)	/* past any ClientHello */
			take_len = sizeof(hs) - hl;
		if (hl == 0) {
			/* The first record most often holds the whole
			 * ClientHello: read it in place, no copy. */
			r = name_tls_handshake(p + at, take_len, out);
			if (r != NAME_MORE)
				return r;
			/* It goes on past these bytes (a ClientHello in
			 * two segments): no record to join it to yet, so
			 * nothing to copy (it was, every time). */
			if (take_len < rl)
				return NAME_MORE;
		}
		memcpy(hs + hl, p + at, take_len);
		hl += take_len;
		at += take_len;
		r = name_tls_handshake(hs, hl, out);
		if (r != NAME_MORE)
			return r;
		if (hl == sizeof(hs))
			return NAME_BAD;
		if (take_len < rl)
			return NAME_MORE;	/* the record itself goes on */
	}
}
