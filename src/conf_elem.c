/* SPDX-License-Identifier: GPL-2.0-or-later */
/* conf_elem.c - one value (address, port, name, ...) into a conf_elem. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "conf_parse.h"
#include "domset.h"
#include "names.h"

struct name_num {
	const char *name;
	unsigned num;
};

static const struct name_num proto_names[] = {
	{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "icmpv6", 58 },
	{ "ipv6-icmp", 58 }, { "sctp", 132 }, { NULL, 0 },
};

static const struct name_num icmp_names[] = {
	{ "echo-reply", 0 }, { "destination-unreachable", 3 },
	{ "source-quench", 4 }, { "redirect", 5 }, { "echo-request", 8 },
	{ "router-advertisement", 9 }, { "router-solicitation", 10 },
	{ "time-exceeded", 11 }, { "parameter-problem", 12 },
	{ "timestamp-request", 13 }, { "timestamp-reply", 14 },
	{ "info-request", 15 }, { "info-reply", 16 },
	{ "address-mask-request", 17 }, { "address-mask-reply", 18 },
	{ NULL, 0 },
};

static const struct name_num icmp6_names[] = {
	{ "destination-unreachable", 1 }, { "packet-too-big", 2 },
	{ "time-exceeded", 3 }, { "parameter-problem", 4 },
	{ "echo-request", 128 }, { "echo-reply", 129 },
	{ "mld-listener-query", 130 }, { "mld-listener-report", 131 },
	{ "mld-listener-done", 132 }, { "nd-router-solicit", 133 },
	{ "nd-router-advert", 134 }, { "nd-neighbor-solicit", 135 },
	{ "nd-neighbor-advert", 136 }, { "nd-redirect", 137 },
	{ NULL, 0 },
};

static const struct name_num qtype_names[] = {
	{ "a", 1 }, { "ns", 2 }, { "cname", 5 }, { "soa", 6 }, { "ptr", 12 },
	{ "mx", 15 }, { "txt", 16 }, { "aaaa", 28 }, { "srv", 33 },
	{ "naptr", 35 }, { "ds", 43 }, { "dnskey", 48 }, { "svcb", 64 },
	{ "https", 65 }, { "axfr", 252 }, { "any", 255 }, { "caa", 257 },
	{ NULL, 0 },
};

static const char *const set_type_names[] = {
	[SET_IPV4_ADDR] = "ipv4_addr",
	[SET_IPV6_ADDR] = "ipv6_addr",
	[SET_INET_SERVICE] = "inet_service",
	[SET_IFNAME] = "ifname",
	[SET_MARK] = "mark",
	[SET_DOMAIN] = "domain",
};

const char *conf_set_type_name(enum set_type t)
{
	if ((unsigned)t >= sizeof(set_type_names) / sizeof(set_type_names[0]))
		return "?";
	return set_type_names[t];
}

int conf_set_type_parse(const char *name)
{
	for (unsigned i = 0; i <= SET_DOMAIN; i++)
		if (strcmp(name, set_type_names[i]) == 0)
			return (int)i;
	return -1;
}

enum vshape conf_set_shape(enum set_type t)
{
	switch (t) {
	case SET_IPV4_ADDR:
		return V_ADDR4;
	case SET_IPV6_ADDR:
		return V_ADDR6;
	case SET_INET_SERVICE:
		return V_PORT;
	case SET_IFNAME:
		return V_IFNAME;
	case SET_DOMAIN:
		return V_DOMAIN;
	case SET_MARK:
		break;
	}
	return V_MARK;
}

uint64_t conf_parse_number(const char *s, bool *sized)
{
	uint64_t v = 0, mul = 1;
	unsigned base = 10;

	*sized = false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; *s; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return UINT64_MAX;
		v = v * base + d;
	}
	switch (*s) {
	case 'K':
		mul = 1ull << 10;
		break;
	case 'M':
		mul = 1ull << 20;
		break;
	case 'G':
		mul = 1ull << 30;
		break;
	default:
		return v;
	}
	*sized = true;
	return v > UINT64_MAX / mul ? UINT64_MAX : v * mul;
}

/* NAME's number in T; DNS types in any case, as DNS tools write them
 * ("A", "AAAA"), every other name as nft spells it. */
static int lookup(const struct name_num *t, const char *name, unsigned *num)
{
	int (*cmp)(const char *, const char *) =
		t == qtype_names ? strcasecmp : strcmp;

	for (; t->name; t++) {
		if (cmp(t->name, name) == 0) {
			*num = t->num;
			return 0;
		}
	}
	return -1;
}

static void list_names(const struct name_num *t, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned i = 0; t[i].name && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
				      t[i].name);
}

/* A number or, with names, a symbolic name; range-checked against max. */
static int conv_num1(const struct atom *a, uint64_t max, const char *what,
		     const struct name_num *names, uint64_t *v,
		     char *msg, size_t len)
{
	unsigned n;

	if (a->kind == ATOM_NUM && !a->sized) {
		if (a->num > max) {
			snprintf(msg, len, max == 0xffffffff ?
				 "%s %s out of range; expected 0..0x%llx" :
				 "%s %s out of range; expected 0..%llu",
				 what, a->text, (unsigned long long)max);
			return -1;
		}
		*v = a->num;
		return 0;
	}
	if (names && a->kind == ATOM_WORD && lookup(names, a->text, &n) == 0) {
		*v = n;
		return 0;
	}
	if (names && a->kind == ATOM_WORD) {
		char all[512];

		list_names(names, all, sizeof(all));
		snprintf(msg, len, "unknown %s \"%s\"; expected one of: %s, "
			 "or a number 0..%llu", what, a->text, all,
			 (unsigned long long)max);
		return -1;
	}
	snprintf(msg, len, "expected a %s number, got \"%s\"", what, a->text);
	return -1;
}

static int conv_num(const struct pelem *pe, uint64_t max, const char *what,
		    const struct name_num *names, struct conf_elem *out,
		    char *msg, size_t len)
{
	out->kind = ELEM_NUM;
	if (pe->kind == PE_SLASH) {
		snprintf(msg, len, "unexpected '/' in %s \"%s/%s\"", what,
			 pe->a.text, pe->b.text);
		return -1;
	}
	if (conv_num1(&pe->a, max, what, names, &out->lo, msg, len))
		return -1;
	out->hi = out->lo;
	if (pe->kind == PE_ONE)
		return 0;
	if (conv_num1(&pe->b, max, what, names, &out->hi, msg, len))
		return -1;
	if (out->lo > out->hi) {
		snprintf(msg, len, "bad range %s-%s: %s is above %s",
			 pe->a.text, pe->b.text, pe->a.text, pe->b.text);
		return -1;
	}
	return 0;
}

static int addr1(const struct atom *a, int family, uint8_t *out,
		 char *msg, size_t len)
{
	const char *fam = family == AF_INET ? "IPv4" : "IPv6";
	const char *other = family == AF_INET ? "IPv6" : "IPv4";
	uint8_t tmp[16];

	memset(out, 0, 16);
	if (a->kind == ATOM_ADDR && inet_pton(family, a->text, out) == 1)
		return 0;
	if (a->kind == ATOM_ADDR &&
	    inet_pton(family == AF_INET ? AF_INET6 : AF_INET, a->text,
		      tmp) == 1) {
		snprintf(msg, len, "%s is an %s address; expected an %s "
			 "address", a->text, other, fam);
		return -1;
	}
	if (a->kind == ATOM_ADDR)
		snprintf(msg, len, "invalid %s address \"%s\"", fam, a->text);
	else
		snprintf(msg, len, "expected an %s address, got \"%s\"", fam,
			 a->text);
	return -1;
}

static int conv_prefix(const struct pelem *pe, int family,
		       struct conf_elem *out, char *msg, size_t len)
{
	unsigned bits = family == AF_INET ? 32 : 128;
	uint64_t plen = pe->b.num;

	if (pe->b.kind != ATOM_NUM || pe->b.sized || plen > bits) {
		snprintf(msg, len, "bad prefix length /%s; expected 0..%u",
			 pe->b.text, bits);
		return -1;
	}
	/* Host bits are cleared, as nft does: 10.1.2.3/8 is 10.0.0.0/8. */
	for (unsigned i = 0; i < 16; i++) {
		unsigned keep = plen >= (i + 1) * 8 ? 8 :
				plen > i * 8 ? (unsigned)(plen - i * 8) : 0;
		uint8_t m = (uint8_t)(0xff00 >> keep);

		if (i * 8 >= bits)
			break;
		out->alo[i] &= m;
		out->ahi[i] = out->alo[i] | (uint8_t)~m;
	}
	return 0;
}

static int conv_addr(const struct pelem *pe, int family,
		     struct conf_elem *out, char *msg, size_t len)
{
	out->kind = ELEM_ADDR;
	out->family = (uint8_t)family;
	if (addr1(&pe->a, family, out->alo, msg, len))
		return -1;
	memcpy(out->ahi, out->alo, 16);
	if (pe->kind == PE_SLASH)
		return conv_prefix(pe, family, out, msg, len);
	if (pe->kind == PE_ONE)
		return 0;
	if (addr1(&pe->b, family, out->ahi, msg, len))
		return -1;
	if (memcmp(out->alo, out->ahi, 16) > 0) {
		snprintf(msg, len, "bad range %s-%s: %s is above %s",
			 pe->a.text, pe->b.text, pe->a.text, pe->b.text);
		return -1;
	}
	return 0;
}

static int conv_ifname(const struct pelem *pe, struct conf_elem *out,
		       char *msg, size_t len)
{
	const char *s = pe->a.text, *star;
	size_t n = strlen(s);

	out->kind = ELEM_STR;
	if (pe->kind != PE_ONE ||
	    (pe->a.kind != ATOM_STR && pe->a.kind != ATOM_WORD)) {
		snprintf(msg, len, "expected an interface name such as "
			 "\"eth0\" or \"eth*\"");
		return -1;
	}
	star = strchr(s, '*');
	if (n == 0 || n >= IFNAMSIZ || (star && star[1])) {
		snprintf(msg, len, "bad interface name \"%s\"; expected 1..%d "
			 "characters, '*' only at the end", s, IFNAMSIZ - 1);
		return -1;
	}
	out->str = strdup(s);
	if (!out->str) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* A domain pattern: stored in normal form ("*.example.com"). */
static int conv_domain(const struct pelem *pe, struct conf_elem *out,
		       char *msg, size_t len)
{
	char name[NAME_MAX_LEN + 1], text[DOM_PATTERN_MAX + 1];
	const char *why;
	unsigned flags;

	out->kind = ELEM_STR;
	if (pe->kind != PE_ONE || pe->a.kind == ATOM_NUM) {
		snprintf(msg, len, "expected a name in double quotes such as "
			 "\"example.com\", \".example.com\" (and below) or "
			 "\"*.example.com\" (below only)");
		return -1;
	}
	if (domset_pattern(pe->a.text, strlen(pe->a.text), name, &flags,
			   &why)) {
		snprintf(msg, len, "bad name \"%s\": %s", pe->a.text, why);
		return -1;
	}
	domset_pattern_text(name, flags, text);
	out->str = strdup(text);
	if (!out->str) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int conf_conv_elem(const struct pelem *pe, enum vshape shape,
		   struct conf_elem *out, char *msg, size_t len)
{
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->loc = pe->loc;
	switch (shape) {
	case V_ADDR4:
		rc = conv_addr(pe, AF_INET, out, msg, len);
		break;
	case V_ADDR6:
		rc = conv_addr(pe, AF_INET6, out, msg, len);
		break;
	case V_PORT:
		rc = conv_num(pe, 65535, "port", NULL, out, msg, len);
		break;
	case V_PROTO:
		rc = conv_num(pe, 255, "protocol", proto_names, out, msg, len);
		break;
	case V_ICMP:
		rc = conv_num(pe, 255, "icmp type", icmp_names, out, msg, len);
		break;
	case V_ICMP6:
		rc = conv_num(pe, 255, "icmpv6 type", icmp6_names, out, msg,
			      len);
		break;
	case V_IFNAME:
		rc = conv_ifname(pe, out, msg, len);
		break;
	case V_MARK:
		rc = conv_num(pe, 0xffffffff, "mark", NULL, out, msg, len);
		break;
	case V_LEN:
		/* 32 bits, as nft: a GSO or BIG TCP packet queued whole
		 * ("gso yes") can be longer than 65535. */
		rc = conv_num(pe, 0xffffffff, "length", NULL, out, msg, len);
		break;
	case V_ID:
		rc = conv_num(pe, 0xffffffff, "id", NULL, out, msg, len);
		break;
	case V_DOMAIN:
		rc = conv_domain(pe, out, msg, len);
		break;
	case V_QTYPE:
		rc = conv_num(pe, 65535, "dns qtype", qtype_names, out, msg,
			      len);
		break;
	}
	return rc;
}

/* Classify a bare word from a set file the way the scanner would. */
static void file_atom(struct atom *a, char *s)
{
	memset(a, 0, sizeof(*a));
	a->text = s;
	if (s[0] == '"') {
		size_t n = strlen(s);

		a->kind = ATOM_STR;
		a->text = s + 1;
		if (n >= 2 && s[n - 1] == '"')
			s[n - 1] = '\0';
	} else if (strchr(s, ':') || (s[0] >= '0' && s[0] <= '9' &&
				      strchr(s, '.'))) {
		a->kind = ATOM_ADDR;
	} else if (s[0] >= '0' && s[0] <= '9') {
		a->kind = ATOM_NUM;
		a->num = conf_parse_number(s, &a->sized);
		/* Trailing junk ("12ab") must not pass as a number. */
		if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ?
		    (!s[2] || s[2 + strspn(s + 2, "0123456789abcdefABCDEF")]) :
		    s[strspn(s, "0123456789")])
			a->kind = ATOM_WORD;
	} else {
		a->kind = ATOM_WORD;
	}
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strcspn(s, "#\r\n");
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*e = '\0';
	return s;
}

/*
 * Set files hold up to millions of lines, so no scanner here: split at
 * '/' or '-' and reuse the converters the grammar uses.
 */
int conf_parse_elem(const char *text, enum set_type type, bool interval,
		    struct conf_elem *out, char **msg)
{
	char buf[256], err[512], *s, *sep = NULL;
	struct pelem pe = { .kind = PE_ONE };
	int rc;

	*msg = NULL;
	memset(out, 0, sizeof(*out));
	if (strlen(text) >= sizeof(buf)) {
		*msg = strdup("element too long");
		return -EINVAL;
	}
	strcpy(buf, text);
	s = trim(buf);
	if (type != SET_IFNAME && type != SET_DOMAIN)
		sep = strpbrk(s, "/-");
	if (sep) {
		pe.kind = *sep == '/' ? PE_SLASH : PE_RANGE;
		*sep = '\0';
		file_atom(&pe.b, trim(sep + 1));
		s = trim(s);
	}
	file_atom(&pe.a, s);
	if (!*s || (sep && !*pe.b.text)) {
		snprintf(err, sizeof(err), "empty element \"%s\"", text);
		rc = -1;
	} else if (pe.kind != PE_ONE && !interval) {
		snprintf(err, sizeof(err), "\"%s\": %s needs \"flags "
			 "interval\"", s, pe.kind == PE_SLASH ? "a prefix" :
			 "a range");
		rc = -1;
	} else {
		rc = conf_conv_elem(&pe, conf_set_shape(type), out, err,
				    sizeof(err));
	}
	if (rc == 0)
		return 0;
	*msg = strdup(err);
	return rc == -ENOMEM ? -ENOMEM : -EINVAL;
}
