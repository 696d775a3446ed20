/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * krules.c - which hooks have kernel rules queueing to nfqd (krules.h).
 *
 * Two netlink dumps of nf_tables (every family): the chains (a base
 * chain carries its hook) and the rules. A rule queues to us when one of
 * its expressions is nft's "queue" (numbers NUM .. NUM+TOTAL-1, or a
 * number from a register: any) or iptables-nft's compat "target" NFQUEUE
 * (struct xt_NFQ_info*, host byte order); a rule's "immediate" jump or
 * goto makes an edge to another chain of the same table. A hook is
 * covered when a base chain of family ip/ip6/inet at that hook reaches a
 * queueing chain. Matches before the queue are not evaluated: a rule that
 * queues only some packets (iptables -i eth0 ...) counts as queueing.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>

#include "krules.h"

#define NAME_MAX_LEN	256	/* NFT_NAME_MAXLEN */

struct kchain {
	uint8_t family;
	char table[NAME_MAX_LEN];
	char name[NAME_MAX_LEN];
	int hook;		/* -1: not a base chain */
	bool queues;		/* a rule of it queues to us */
	bool seen;		/* walk mark */
};

struct kedge {
	unsigned from, to;	/* indices into chains */
};

struct scan {
	const uint16_t *queues;
	unsigned nq;
	struct kchain *chains;
	unsigned n_chains, cap_chains;
	struct kedge *edges;
	unsigned n_edges, cap_edges;
	int err;
};

static bool our_family(uint8_t f)
{
	return f == NFPROTO_INET || f == NFPROTO_IPV4 || f == NFPROTO_IPV6;
}

/* Does [FIRST, FIRST + TOTAL) hold one of our queues? */
static bool range_ours(const struct scan *s, unsigned first, unsigned total)
{
	if (total == 0)
		total = 1;
	for (unsigned i = 0; i < s->nq; i++)
		if (s->queues[i] >= first && s->queues[i] < first + total)
			return true;
	return false;
}

static int find_chain(const struct scan *s, uint8_t fam, const char *table,
		      const char *name)
{
	for (unsigned i = 0; i < s->n_chains; i++) {
		const struct kchain *c = &s->chains[i];

		if (c->family == fam && !strcmp(c->table, table) &&
		    !strcmp(c->name, name))
			return (int)i;
	}
	return -1;
}

static int grow(void **v, unsigned *cap, unsigned n, size_t size)
{
	void *nv;
	unsigned nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 16;
	nv = realloc(*v, nc * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

/* ------------------------------------------------------------ parsing */

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (type <= 16)
		tb[type] = a;
	return MNL_CB_OK;
}

/* Up to 16 attributes of A's nest (or of NLH's payload after HDRLEN). */
static void parse_nest(const struct nlattr *a, const struct nlattr **tb)
{
	memset(tb, 0, 17 * sizeof(*tb));
	mnl_attr_parse_nested(a, attr_cb, tb);
}

static bool attr_str(const struct nlattr *a, char *out)
{
	const char *s;

	if (!a || mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
		return false;
	s = mnl_attr_get_str(a);
	if (strlen(s) >= NAME_MAX_LEN)
		return false;
	strcpy(out, s);
	return true;
}

static uint32_t attr_be32(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) >= 4 ?
		ntohl(mnl_attr_get_u32(a)) : 0;
}

static uint16_t attr_be16(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) >= 2 ?
		ntohs(mnl_attr_get_u16(a)) : 0;
}

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct scan *s = data;
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[17] = { 0 }, *hk[17];
	struct kchain *c;

	if (!our_family(g->nfgen_family))
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*g), attr_cb, tb);
	if (grow((void **)&s->chains, &s->cap_chains, s->n_chains,
		 sizeof(*s->chains)) < 0) {
		s->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	c = &s->chains[s->n_chains];
	memset(c, 0, sizeof(*c));
	c->family = g->nfgen_family;
	c->hook = -1;
	if (!attr_str(tb[NFTA_CHAIN_TABLE], c->table) ||
	    !attr_str(tb[NFTA_CHAIN_NAME], c->name))
		return MNL_CB_OK;
	if (tb[NFTA_CHAIN_HOOK]) {
		parse_nest(tb[NFTA_CHAIN_HOOK], hk);
		if (hk[NFTA_HOOK_HOOKNUM])
			c->hook = (int)attr_be32(hk[NFTA_HOOK_HOOKNUM]);
	}
	s->n_chains++;
	return MNL_CB_OK;
}

/* Does the compat target NAME/REV with INFO queue to us? */
static bool target_queues(const struct scan *s, const struct nlattr **tb)
{
	const uint16_t *info;
	size_t len;

	if (!tb[NFTA_TARGET_NAME] || !tb[NFTA_TARGET_INFO] ||
	    mnl_attr_validate(tb[NFTA_TARGET_NAME], MNL_TYPE_NUL_STRING) < 0 ||
	    strcmp(mnl_attr_get_str(tb[NFTA_TARGET_NAME]), "NFQUEUE"))
		return false;
	info = mnl_attr_get_payload(tb[NFTA_TARGET_INFO]);
	len = mnl_attr_get_payload_len(tb[NFTA_TARGET_INFO]);
	if (len < 2)
		return false;
	/* xt_NFQ_info: queuenum; v1 on: queues_total next (host order). */
	if (attr_be32(tb[NFTA_TARGET_REV]) == 0 || len < 4)
		return range_ours(s, info[0], 1);
	return range_ours(s, info[0], info[1]);
}

/* One expression of a rule of chain FROM: queue, NFQUEUE, or a jump. */
static void expr(struct scan *s, unsigned from, const struct nlattr *e)
{
	const struct nlattr *tb[17], *d[17], *v[17], *vd[17];
	const struct kchain *c = &s->chains[from];
	char name[NAME_MAX_LEN];
	const char *kind;
	int to;

	parse_nest(e, tb);
	if (!tb[NFTA_EXPR_NAME] || !tb[NFTA_EXPR_DATA] ||
	    mnl_attr_validate(tb[NFTA_EXPR_NAME], MNL_TYPE_NUL_STRING) < 0)
		return;
	kind = mnl_attr_get_str(tb[NFTA_EXPR_NAME]);
	parse_nest(tb[NFTA_EXPR_DATA], d);
	if (!strcmp(kind, "queue")) {
		if (d[NFTA_QUEUE_SREG_QNUM] ||
		    range_ours(s, attr_be16(d[NFTA_QUEUE_NUM]),
			       attr_be16(d[NFTA_QUEUE_TOTAL])))
			s->chains[from].queues = true;
	} else if (!strcmp(kind, "target")) {
		if (target_queues(s, d))
			s->chains[from].queues = true;
	} else if (!strcmp(kind, "immediate") && d[NFTA_IMMEDIATE_DATA]) {
		parse_nest(d[NFTA_IMMEDIATE_DATA], v);
		if (!v[NFTA_DATA_VERDICT])
			return;
		parse_nest(v[NFTA_DATA_VERDICT], vd);
		if (!attr_str(vd[NFTA_VERDICT_CHAIN], name))
			return;
		to = find_chain(s, c->family, c->table, name);
		if (to < 0 || grow((void **)&s->edges, &s->cap_edges,
				   s->n_edges, sizeof(*s->edges)) < 0)
			return;
		s->edges[s->n_edges++] = (struct kedge){ from, (unsigned)to };
	}
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct scan *s = data;
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[17] = { 0 }, *e;
	char table[NAME_MAX_LEN], chain[NAME_MAX_LEN];
	int from;

	if (!our_family(g->nfgen_family))
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*g), attr_cb, tb);
	if (!attr_str(tb[NFTA_RULE_TABLE], table) ||
	    !attr_str(tb[NFTA_RULE_CHAIN], chain) ||
	    !tb[NFTA_RULE_EXPRESSIONS])
		return MNL_CB_OK;
	from = find_chain(s, g->nfgen_family, table, chain);
	if (from < 0)
		return MNL_CB_OK;	/* a chain made after the chain dump */
	mnl_attr_for_each_nested(e, tb[NFTA_RULE_EXPRESSIONS])
		expr(s, (unsigned)from, e);
	return MNL_CB_OK;
}

/* ------------------------------------------------------------ dumping */

static int dump(struct mnl_socket *nl, uint16_t msg, mnl_cb_t cb,
		struct scan *s)
{
	static char buf[65536];	/* main thread only */
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *g;
	uint32_t seq = (uint32_t)time(NULL), portid = mnl_socket_get_portid(nl);
	ssize_t n;
	int rc;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | msg;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = NFPROTO_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = 0;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		rc = mnl_cb_run(buf, (size_t)n, seq, portid, cb, s);
	} while (rc > MNL_CB_STOP);
	if (rc < 0)
		return s->err ? s->err : -errno;
	return 0;
}

/* Any legacy (x_tables) table of FILE (/proc/net/ip_tables_names). */
static bool legacy_tables(const char *file)
{
	FILE *f = fopen(file, "re");
	int c;

	if (!f)
		return false;
	c = fgetc(f);
	fclose(f);
	return c != EOF;
}

/* Mark in *MASK the hook of every base chain that reaches a queueing
 * chain (depth-first over the jump edges). */
static bool reaches(struct scan *s, unsigned i)
{
	if (s->chains[i].queues)
		return true;
	if (s->chains[i].seen)
		return false;
	s->chains[i].seen = true;
	for (unsigned e = 0; e < s->n_edges; e++)
		if (s->edges[e].from == i && reaches(s, s->edges[e].to))
			return true;
	return false;
}

static void collect(struct scan *s, struct krules_found *out)
{
	for (unsigned i = 0; i < s->n_chains; i++) {
		const struct kchain *c = &s->chains[i];

		if (c->hook < 0 || c->hook > NF_INET_POST_ROUTING)
			continue;
		for (unsigned k = 0; k < s->n_chains; k++)
			s->chains[k].seen = false;
		if (!reaches(s, i))
			continue;
		if (c->family != NFPROTO_IPV6)
			out->v4 |= 1u << c->hook;
		if (c->family != NFPROTO_IPV4)
			out->v6 |= 1u << c->hook;
	}
}

int krules_scan(const uint16_t *queues, unsigned n, struct krules_found *out)
{
	struct scan s = { .queues = queues, .nq = n };
	struct mnl_socket *nl;
	int rc;

	memset(out, 0, sizeof(*out));
	nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		mnl_socket_close(nl);
		return rc;
	}
	rc = dump(nl, NFT_MSG_GETCHAIN, chain_cb, &s);
	if (rc == 0)
		rc = dump(nl, NFT_MSG_GETRULE, rule_cb, &s);
	mnl_socket_close(nl);
	if (rc == 0)
		collect(&s, out);
	free(s.chains);
	free(s.edges);
	out->legacy = legacy_tables("/proc/net/ip_tables_names") ||
		      legacy_tables("/proc/net/ip6_tables_names");
	return rc;
}
