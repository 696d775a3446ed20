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

static int load(const char *path, bool builtin, struct conf **c,
		struct diags *d)
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
	free(nums);
	if (n < 0)
		diag_add(d, DIAG_ERROR, &(struct conf_loc){ path, 0, 0 },
			 "queues: cannot resolve queue numbers (%s)",
			 strerror(-n));
	return n < 0 ? n : 0;
}

int nfqd_check_config(const char *path, bool builtin, bool dump)
{
	struct diags d = { 0 };
	struct conf *c = NULL;
	struct policy *p = NULL;
	int rc;

	rc = load(path, builtin, &c, &d);
	if (rc == 0) {
		/* What a start checks: the system's side, and the policy
		 * with its set files. A dump shows what nfqd understood,
		 * whatever system it is made on. */
		int env = dump ? 0 : conf_check_env(c, &d);

		p = policy_build(c, 1, &d);
		rc = p ? env : -EINVAL;
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
