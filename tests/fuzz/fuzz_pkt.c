/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_pkt.c - libFuzzer target: pkt_parse_headers() on arbitrary bytes,
 * then policy_judge() of the result against a policy using every match.
 * Input: 8 bytes of packet metadata, then the packet from its network
 * header on; the high nibble of byte 7 cuts the copy the parser sees.
 * Every field the parser claims PRESENT must lie inside that copy: an
 * independent walk over the whole packet says where each one is.
 */
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "pkt.h"
#include "policy.h"
#include "verdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct policy *policy;

static struct conf_elem num(uint64_t lo, uint64_t hi)
{
	return (struct conf_elem){ .kind = ELEM_NUM, .lo = lo, .hi = hi };
}

static struct conf_elem addr(int af, const char *lo, const char *hi)
{
	struct conf_elem e = { .kind = ELEM_ADDR, .family = (uint8_t)af };

	inet_pton(af, lo, e.alo);
	inet_pton(af, hi, e.ahi);
	return e;
}

static struct conf_elem e_v4, e_v6, e_port[2], e_proto, e_type, e_len;
static struct conf_elem e_if = { .kind = ELEM_STR, .str = "lo*" };
static struct conf_match matches[] = {
	{ .field = MATCH_IP_SADDR, .elems = &e_v4, .n_elems = 1 },
	{ .field = MATCH_IP6_DADDR, .negate = true, .elems = &e_v6,
	  .n_elems = 1 },
	{ .field = MATCH_TCP_DPORT, .elems = e_port, .n_elems = 2 },
	{ .field = MATCH_UDP_SPORT, .negate = true, .elems = e_port,
	  .n_elems = 1 },
	{ .field = MATCH_TCP_FLAGS, .flags = TCPF_SYN },
	{ .field = MATCH_ICMP_TYPE, .elems = &e_type, .n_elems = 1 },
	{ .field = MATCH_ICMPV6_TYPE, .elems = &e_type, .n_elems = 1 },
	{ .field = MATCH_META_L4PROTO, .elems = &e_proto, .n_elems = 1 },
	{ .field = MATCH_IIFNAME, .negate = true, .elems = &e_if,
	  .n_elems = 1 },
	{ .field = MATCH_OIFNAME, .elems = &e_if, .n_elems = 1 },
	{ .field = MATCH_META_LENGTH, .elems = &e_len, .n_elems = 1 },
	{ .field = MATCH_CT_STATE, .flags = CT_STATE_NEW },
	{ .field = MATCH_META_SKUID, .elems = &e_len, .n_elems = 1 },
};
#define N_MATCHES (sizeof(matches) / sizeof(matches[0]))

/* One rule per match, alternating verdicts, so every match is tried. */
static void build_policy(void)
{
	static struct conf_rule rules[N_MATCHES];
	static struct conf c;

	e_v4 = addr(AF_INET, "10.0.0.0", "10.255.255.255");
	e_v6 = addr(AF_INET6, "2001:db8::", "2001:db8::ffff");
	e_port[0] = num(22, 22);
	e_port[1] = num(1000, 2000);
	e_proto = num(IPPROTO_SCTP, IPPROTO_SCTP);
	e_type = num(8, 8);
	e_len = num(100, 200);
	for (unsigned i = 0; i < N_MATCHES; i++) {
		matches[i].mask = 0xffffffff;
		rules[i].matches = &matches[i];
		rules[i].n_matches = 1;
		rules[i].verdict = i % 2 ? VERDICT_DROP : VERDICT_ACCEPT;
		rules[i].text = "fuzz";
		rules[i].mark_set = i % 3 == 0;
		rules[i].bypass = i % 4 == 0 && rules[i].verdict ==
						VERDICT_ACCEPT;
	}
	for (int h = 0; h < HOOK_MAX; h++) {
		c.hooks[h].present = true;
		c.hooks[h].rules = rules;
		c.hooks[h].n_rules = N_MATCHES;
		c.hooks[h].policy = h % 2 ? VERDICT_DROP : VERDICT_ACCEPT;
	}
	c.opts.bypass_mark = 0x40000000;
	policy = policy_build(&c, 1, NULL);
	if (!policy)
		abort();
}

static uint16_t get16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* An IPv6 extension header that ipv6_find_hdr() walks past or into. */
static bool ext_hdr(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60;
}

/*
 * Where nft finds the transport header of the whole packet B (LEN bytes),
 * written apart from pkt.c and without its bounds: the offset, the
 * protocol in *PROTO and whether it is a later fragment in *FRAG; or -1.
 */
static long ref_thoff(const uint8_t *b, size_t len, bool v6, int *proto,
		      bool *frag)
{
	size_t at = 40, hl;
	uint8_t nh;

	*frag = false;
	if (!v6) {
		if (len < 20)
			return -1;
		*proto = b[9];
		*frag = get16(b + 6) & 0x1fff;
		return (long)(b[0] & 0xf) * 4;
	}
	if (len < 40)
		return -1;
	nh = b[6];
	while (ext_hdr(nh)) {
		if (at + (nh == 43 || nh == 44 ? 4 : 2) > len)
			return -1;
		if (nh == 51)
			break;		/* IP6_FH_F_AUTH */
		if (nh == 44 && (get16(b + at + 2) & ~7u)) {
			if (ext_hdr(b[at]))
				return -1;
			*proto = b[at];
			*frag = true;
			return (long)at;
		}
		hl = nh == 44 ? 8 : ((size_t)b[at + 1] + 1) * 8;
		nh = b[at];
		at += hl;
	}
	*proto = nh;
	return (long)at;
}

/* Abort unless transport bytes [0, END) claimed PRESENT are in the copy
 * (TH is where the reference found the header) and hold what the parser
 * read. */
static void check_th(const struct pkt *p, long th, uint32_t end,
		     unsigned value, unsigned got)
{
	if (pkt_th_state(p, end) != PKT_PRESENT)
		return;
	if (th < 0 || (uint64_t)th + end > p->payload_len || value != got)
		abort();
}

/* What the parser claims PRESENT lies inside the copy of the packet B. */
static void check_present(const struct pkt *p, const uint8_t *b, size_t len)
{
	bool v6 = p->l3_family == AF_INET6, frag;
	size_t fixed = v6 ? 40 : 20;
	int proto = -1;
	long th;

	if (p->l3 == PKT_PRESENT &&
	    (p->payload_len < fixed || p->l3_family == 0 ||
	     memcmp(p->saddr, b + (v6 ? 8 : 12), v6 ? 16 : 4) ||
	     memcmp(p->daddr, b + (v6 ? 24 : 16), v6 ? 16 : 4)))
		abort();
	if (p->l4 != PKT_PRESENT)
		return;
	if (p->l3 != PKT_PRESENT)
		abort();
	th = ref_thoff(b, len, v6, &proto, &frag);
	if (proto != p->l4proto || frag != p->fragment)
		abort();
	if (frag || th < 0)
		return;
	check_th(p, th, PKT_TH_SPORT_END, p->sport,
		 th + 2 <= (long)len ? get16(b + th) : ~0u);
	check_th(p, th, PKT_TH_DPORT_END, p->dport,
		 th + 4 <= (long)len ? get16(b + th + 2) : ~0u);
	if (p->l4proto == IPPROTO_TCP)
		check_th(p, th, PKT_TH_FLAGS_END, p->tcp_flags,
			 th + 14 <= (long)len ? b[th + 13] : ~0u);
	if (p->l4proto == IPPROTO_ICMP || p->l4proto == IPPROTO_ICMPV6)
		check_th(p, th, PKT_TH_TYPE_END, p->icmp_type,
			 th + 1 <= (long)len ? b[th] : ~0u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkt p = { 0 };
	struct decision d;
	size_t cut;
	uint8_t *copy;

	if (!policy)
		build_policy();
	if (size < 8)
		return 0;
	p.hook = data[0] % (HOOK_MAX + 1);
	p.family = data[1] & 1 ? NFPROTO_IPV6 : NFPROTO_IPV4;
	p.flags = (uint32_t)data[2] << 8 | data[3];
	p.flags &= PKT_HAS_MARK | PKT_HAS_INDEV | PKT_HAS_OUTDEV |
		   PKT_HAS_UID | PKT_HAS_GID | PKT_HAS_CT;
	p.indev = data[4] & 3;		/* 1 is lo in any namespace */
	p.outdev = data[5] & 3;
	p.mark = data[6];
	p.ct_state = data[7] & 0xf;
	p.uid = p.gid = data[6];
	/* The copy: the packet less 0..60 bytes at its end. */
	cut = (size_t)(data[7] >> 4) * 4;
	data += 8;
	size -= 8;
	cut = cut < size ? cut : size;
	/* An exact-size heap copy: ASan catches any read past the end. */
	copy = malloc(size - cut ? size - cut : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size - cut);
	p.payload = size - cut ? copy : NULL;
	p.payload_len = (uint32_t)(size - cut);
	p.orig_len = (uint32_t)size;
	pkt_parse_headers(&p);
	check_present(&p, data, size);
	policy_judge(policy, &p, 0, &d);
	if (d.incomplete && d.verdict != policy_incomplete_verdict(policy))
		abort();
	free(copy);
	return 0;
}
