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
	memset(s->have, 0, (cap + 7) / 8);
}

static bool have(const struct name_stream *s, uint32_t i)
{
	return s->have[i / 8] & (1u << (i % 8));
}

int name_stream_put(struct name_stream *s, uint64_t off, const uint8_t *data,
		    size_t len)
{
	int rc = 0;
	size_t i;

	if (off >= s->cap)
		return len ? 1 : 0;
	if (len > s->cap - off) {
		len = s->cap - (size_t)off;
		rc = 1;
	}
	/* Check first: a conflicting write changes nothing. */
	for (i = 0; i < len; i++)
		if (have(s, (uint32_t)(off + i)) && s->buf[off + i] != data[i])
			return -EILSEQ;
	for (i = 0; i < len; i++) {
		uint32_t j = (uint32_t)(off + i);

		s->buf[j] = data[i];
		s->have[j / 8] |= (uint8_t)(1u << (j % 8));
	}
	while (s->contig < s->cap && have(s, s->contig))
		s->contig++;
	return rc;
}
