/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_fixture.h - for unit tests that build a struct conf by hand: an
 * address element from text, and freeing the conf (its strings are the
 * test's literals; only the arrays are allocated). Include cmocka.h and
 * arpa/inet.h first.
 */
#ifndef NFQD_TEST_CONF_FIXTURE_H
#define NFQD_TEST_CONF_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

/* E = the address, prefix or range TEXT: "a.b.c.d", "a::b", with "/n"
 * or "-b". */
static inline void fill_addr(struct conf_elem *e, const char *text)
{
	char t[128], *sep;
	int af = strchr(text, ':') ? AF_INET6 : AF_INET;
	unsigned alen = af == AF_INET ? 4 : 16, plen = alen * 8;

	snprintf(t, sizeof(t), "%s", text);
	e->kind = ELEM_ADDR;
	e->family = (uint8_t)af;
	if ((sep = strchr(t, '-'))) {
		*sep = '\0';
		assert_int_equal(inet_pton(af, sep + 1, e->ahi), 1);
		assert_int_equal(inet_pton(af, t, e->alo), 1);
		return;
	}
	if ((sep = strchr(t, '/'))) {
		*sep = '\0';
		plen = (unsigned)atoi(sep + 1);
	}
	assert_int_equal(inet_pton(af, t, e->alo), 1);
	memcpy(e->ahi, e->alo, 16);
	for (unsigned i = 0; i < alen; i++) {
		unsigned b = plen > i * 8 ? plen - i * 8 : 0;
		uint8_t mk = b >= 8 ? 0xff : (uint8_t)(0xff00 >> b);

		e->alo[i] &= mk;
		e->ahi[i] |= (uint8_t)~mk;
	}
}

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
