/* SPDX-License-Identifier: GPL-2.0-or-later */
/* check.c - "nfqd -t" and "nfqd -t --dump". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "conf.h"
#include "confenv.h"
#include "diag.h"
#include "policy.h"
#include "queue.h"

/* FIRST: the config's first queue, which a start probes the kernel on. */
static int load(const char *path, bool builtin, struct conf **c,
		uint16_t *first, struct diags *d)
{
	uint16_t *nums = NULL;
	int rc, n;

	if (builtin) {
		*c = conf_default();
		return *c ? 0 : -ENOMEM;
	}
	rc = conf_load(path, c, d);
	if (rc < 0)
		return rc;
	n = conf_queue_numbers(&(*c)->opts, &nums);
	if (n > 0)
		*first = nums[0];
	free(nums);
	if (n < 0)
		diag_add(d, DIAG_ERROR, &(struct conf_loc){ path, 0, 0 },
			 "queues: cannot resolve queue numbers (%s)",
			 strerror(-n));
	return n < 0 ? n : 0;
}

/* The kernel features P needs, asked as a start asks (binding nothing);
 * when the kernel cannot be asked (without CAP_NET_ADMIN over this
 * network namespace, which a start needs first), only a warning that
 * the start checks them. */
static int check_kernel(const struct policy *p, uint16_t num,
			struct diags *d)
{
	uint32_t need = policy_kernel_flags(p) & QUEUE_OPTIONAL_KFLAGS;
	uint32_t supported;
	int rc;

	if (!need)
		return 0;
	rc = queue_kflags_supported(need, num, &supported);
	if (rc == 0)
		return policy_check_kflags(p, supported, d);
	diag_add(d, DIAG_WARNING, NULL, "%s: cannot ask the kernel whether NFQUEUE provides what this rule needs (%s): the start checks it; run nfqd -t as root to check it now",
		 policy_flag_user(p, need & NFQA_CFG_F_CONNTRACK ?
				  NFQA_CFG_F_CONNTRACK : NFQA_CFG_F_UID_GID),
		 rc == -EPERM ? "no CAP_NET_ADMIN over this network namespace" :
				strerror(-rc));
	return 0;
}

int nfqd_check_config(const char *path, bool builtin, bool dump)
{
	struct diags d = { 0 };
	struct conf *c = NULL;
	struct policy *p = NULL;
	uint16_t first = 0;
	int rc;

	rc = load(path, builtin, &c, &first, &d);
	if (rc == 0) {
		/* What a start checks: the system's side, and the policy
		 * with its set files. A dump shows what nfqd understood,
		 * whatever system it is made on. */
		int env = dump ? 0 : conf_check_env(c, &d);

		p = policy_build(c, 1, &d);
		rc = p ? env : -EINVAL;
		if (p && !dump && check_kernel(p, first, &d) < 0)
			rc = -EOPNOTSUPP;
	}
	diag_print(stderr, &d);
	if (rc == 0 && dump) {
		rc = conf_dump(stdout, c, NULL);
		if (rc < 0)
			fprintf(stderr, "dump failed (%s)\n", strerror(-rc));
	} else if (rc == 0)
		printf("config OK\n");
	else if (!d.n)
		fprintf(stderr, "config invalid (%s)\n", strerror(-rc));
	diag_free(&d);
	policy_free(p);
	conf_free(c);
	return rc;
}
