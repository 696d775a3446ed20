/* policy.c - STUB until the rule engine lands: every hook accepts. */
#include <linux/netfilter.h>
#include <stdlib.h>

#include "pkt.h"
#include "policy.h"
#include "verdict.h"

struct policy {
	unsigned nslots;
};

struct policy *policy_build(const struct conf *c, unsigned nslots, char **errors)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (p)
		p->nslots = nslots;
	return p;
}

void policy_free(struct policy *p)
{
	free(p);
}

void policy_judge(struct policy *p, const struct pkt *pkt, unsigned slot,
		  struct decision *d)
{
	d->verdict = NF_ACCEPT;
	d->set_mark = false;
	d->mark = 0;
}

uint32_t policy_kernel_flags(const struct policy *p) { return 0; }
unsigned policy_rule_count(const struct policy *p, enum conf_hook_id h) { return 0; }
const char *policy_rule_text(const struct policy *p, enum conf_hook_id h, unsigned i) { return ""; }
void policy_rule_counters(const struct policy *p, enum conf_hook_id h, unsigned i,
			  uint64_t *packets, uint64_t *bytes) { *packets = *bytes = 0; }
enum verdict_kind policy_hook_policy(const struct policy *p, enum conf_hook_id h) { return VERDICT_ACCEPT; }
uint64_t policy_policy_packets(const struct policy *p, enum conf_hook_id h) { return 0; }
void policy_counters_reset(struct policy *p) { }
const char *policy_flag_user(const struct policy *p, uint32_t flag) { return NULL; }
