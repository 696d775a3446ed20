/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ctl_setcli.c - nfqd-ctl's "sets" table. */
#include <errno.h>
#include <stdio.h>

#include "ctl_setcli.h"

static long long num(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static void human(char *buf, size_t size, long long v)
{
	if (v >= 10ll << 20)
		snprintf(buf, size, "%lldM", v >> 20);
	else if (v >= 10ll << 10)
		snprintf(buf, size, "%lldK", v >> 10);
	else
		snprintf(buf, size, "%lld", v);
}

int ctl_render_sets(FILE *f, json_t *j)
{
	json_t *sets = json_object_get(j, "sets"), *s;
	size_t i;

	if (!json_is_array(sets))
		return -EINVAL;
	fprintf(f, "%-16s %-12s %9s %7s  %s\n", "set", "type", "elements",
		"memory", "file");
	json_array_foreach(sets, i, s) {
		const char *file = json_string_value(json_object_get(s,
								    "file"));
		char mem[32];

		human(mem, sizeof(mem), num(s, "memory"));
		fprintf(f, "%-16s %-12s %9lld %7s  %s\n",
			json_string_value(json_object_get(s, "name")),
			json_string_value(json_object_get(s, "type")),
			num(s, "elements"), mem, file ? file : "-");
	}
	return 0;
}
