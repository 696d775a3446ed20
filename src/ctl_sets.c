/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_sets.c - "sets": the named sets of the running policy, each with
 * its type, elements (config and file), approximate memory and file.
 */
#include <errno.h>

#include "conf.h"
#include "ctl_sets.h"
#include "policy.h"

/* Approximate bytes an element takes in a set (value, index slot). */
#define ELEM_BYTES	32

static json_t *set_json(const struct policy *p, unsigned i)
{
	const char *file = policy_set_file(p, i);
	size_t n = policy_set_elements(p, i);

	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:o}",
			 "name", policy_set_name(p, i),
			 "type", conf_set_type_name(policy_set_type(p, i)),
			 "elements", (json_int_t)n,
			 "static_elements", (json_int_t)n,
			 "memory", (json_int_t)(n * ELEM_BYTES),
			 "file", file ? json_string(file) : json_null());
}

int ctl_sets_list(const struct policy *p, json_t **out)
{
	json_t *arr = json_array();
	unsigned n = policy_named_sets(p);

	for (unsigned i = 0; arr && i < n; i++) {
		if (json_array_append_new(arr, set_json(p, i))) {
			json_decref(arr);
			arr = NULL;
		}
	}
	*out = json_pack("{s:o}", "sets", arr);
	return *out ? 0 : -ENOMEM;
}
