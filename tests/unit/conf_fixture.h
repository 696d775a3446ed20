/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_fixture.h - freeing a struct conf a unit test built by hand (its
 * strings are the test's literals; only the arrays are allocated).
 */
#ifndef NFQD_TEST_CONF_FIXTURE_H
#define NFQD_TEST_CONF_FIXTURE_H

#include <stdlib.h>

#include "conf.h"

static inline void free_conf(struct conf *c)
{
	for (int h = 0; h < HOOK_MAX; h++) {
		for (unsigned i = 0; i < c->hooks[h].n_rules; i++) {
			struct conf_rule *r = &c->hooks[h].rules[i];

			for (unsigned j = 0; j < r->n_matches; j++)
				free(r->matches[j].elems);
			free(r->matches);
		}
		free(c->hooks[h].rules);
	}
	for (unsigned i = 0; i < c->n_sets; i++)
		free(c->sets[i].elems);
	free(c->sets);
	free(c);
}

#endif
