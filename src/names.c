/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.c - what the name parsers share: the normal form of a name and
 * the out-of-order byte stream that gathers a client's first bytes.
 */
#include <errno.h>
#include <string.h>

#include "names.h"

const char *name_result_str(enum name_result r)
{
	switch (r) {
	case NAME_DONE: return "done";
	case NAME_MORE: return "more";
	case NAME_NOT: return "not";
	case NAME_BAD: return "bad";
	}
	return "?";
}

void names_copy(struct pkt_names *dst, const struct pkt_names *src)
{
	dst->state = src->state;
	dst->proto = src->proto;
	dst->n.len = src->n.len;
	dst->n.qtype = src->n.qtype;
	dst->n.ech = src->n.ech;
	memcpy(dst->n.name, src->n.name, (size_t)src->n.len + 1);
}

int name_normalize(const char *s, size_t len, struct name_out *out)
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

size_t name_stream_bytes(uint32_t cap)
{
	return (size_t)cap + (cap + 7) / 8;
}

void name_stream_init(struct name_stream *s, void *mem, uint32_t cap)
{
	s->buf = mem;
	s->have = s->buf + cap;
	s->cap = cap;
	s->contig = 0;
	s->hi = 0;
	memset(s->have, 0, (cap + 7) / 8);
}

static bool have(const struct name_stream *s, uint32_t i)
{
	return s->have[i / 8] & (1u << (i % 8));
}

/* Mark bytes [A, B) as there. */
static void mark(struct name_stream *s, uint32_t a, uint32_t b)
{
	while (a < b && a % 8)
		s->have[a / 8] |= (uint8_t)(1u << (a % 8)), a++;
	if (b - a >= 8) {
		memset(s->have + a / 8, 0xff, (b - a) / 8);
		a += (b - a) / 8 * 8;
	}
	while (a < b)
		s->have[a / 8] |= (uint8_t)(1u << (a % 8)), a++;
}

int name_stream_put(struct name_stream *s, uint64_t off, const uint8_t *data,
		    size_t len)
{
	uint32_t a, b, lo, i;
	int rc = 0;

	if (off >= s->cap)
		return len ? 1 : 0;
	if (len > s->cap - off) {
		len = s->cap - (size_t)off;
		rc = 1;
	}
	a = (uint32_t)off;
	b = a + (uint32_t)len;
	/* Check first: a conflicting write changes nothing. Below contig
	 * every byte is there; above it only bytes below hi may be. */
	lo = b < s->contig ? b : s->contig;
	if (a < lo && memcmp(s->buf + a, data, lo - a))
		return -EILSEQ;
	for (i = a > lo ? a : lo; i < b && i < s->hi; i++)
		if (have(s, i) && s->buf[i] != data[i - a])
			return -EILSEQ;
	memcpy(s->buf + a, data, len);
	mark(s, a, b);
	if (b > s->hi)
		s->hi = b;
	if (a <= s->contig && b > s->contig)
		s->contig = b;
	while (s->contig < s->hi && have(s, s->contig))
		s->contig++;
	return rc;
}
