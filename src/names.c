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

/* Per byte: itself in lower case if it may be in a label (printable
 * ASCII, 0x21-0x7e, not '.'), else 0: one rule for every parser. */
#define L(c) [c] = (char)((c) == '.' ? 0 : (c) >= 'A' && (c) <= 'Z' ? \
			  (c) + 32 : (c))
#define L4(c) L(c), L(c + 1), L(c + 2), L(c + 3)
#define L16(c) L4(c), L4(c + 4), L4(c + 8), L4(c + 12)
static const char label_char[256] = {
	L(0x21), L(0x22), L(0x23), L4(0x24), L4(0x28), L4(0x2c),
	L16(0x30), L16(0x40), L16(0x50), L16(0x60),
	L4(0x70), L4(0x74), L4(0x78), L(0x7c), L(0x7d), L(0x7e),
};
#undef L16
#undef L4
#undef L

bool name_label_lower(char *d, const uint8_t *s, size_t n)
{
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		char c = label_char[s[i]];

		ok &= c != 0;
		d[i] = c;
	}
	return ok;
}

int name_normalize(const char *s, size_t len, struct name_out *out)
{
	size_t i, start = 0;	/* of the label I is in */

	if (len && s[len - 1] == '.')
		len--;
	if (len == 0 || len > NAME_MAX_LEN)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = label_char[(uint8_t)s[i]];

		if (!c) {	/* a label's end, or no name */
			if (s[i] != '.' || i == start || i - start > 63)
				return -EINVAL;
			c = '.';
			start = i + 1;
		}
		out->name[i] = c;
	}
	if (i == start || i - start > 63)
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
