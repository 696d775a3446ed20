/*
 * fuzz_pkt.c - libFuzzer target: pkt_parse_headers() on arbitrary bytes,
 * then policy_judge() of the result against a policy using every match.
 * Input: 8 bytes of packet metadata, then the network header onwards.
 */
#include <arpa/inet.h>
#include <linux/netfilter.h>
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
	char *err;

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
	policy = policy_build(&c, 1, &err);
	if (!policy)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkt p = { 0 };
	struct decision d;
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
	/* An exact-size heap copy: ASan catches any read past the end. */
	size -= 8;
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 8, size);
	p.payload = copy;
	p.payload_len = (uint32_t)size;
	p.orig_len = (uint32_t)size + (data[7] >> 4);
	pkt_parse_headers(&p);
	/* What the parser claims must lie inside the copy. */
	if ((p.flags & PKT_HAS_L4) && !(p.flags & PKT_HAS_L3))
		abort();
	if ((p.flags & PKT_HAS_L4) && p.fragment)
		abort();
	policy_judge(policy, &p, 0, &d);
	free(copy);
	return 0;
}
