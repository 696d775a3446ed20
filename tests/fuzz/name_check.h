/* SPDX-License-Identifier: GPL-2.0-or-later */
/* name_check.h - the fuzz targets' check of a name found (names.h). */
#ifndef NFQD_FUZZ_NAME_CHECK_H
#define NFQD_FUZZ_NAME_CHECK_H

#include <assert.h>
#include <string.h>

#include "names.h"

/* A name found is in normal form: printable ASCII, lower case, no dot
 * at either end, as long as its length says. */
static inline void check_name(const struct name_out *o)
{
	assert(o->len <= NAME_MAX_LEN && strlen(o->name) == o->len);
	for (size_t i = 0; i < o->len; i++)
		assert(o->name[i] > 0x20 && o->name[i] < 0x7f &&
		       !(o->name[i] >= 'A' && o->name[i] <= 'Z'));
	assert(!o->len || (o->name[0] != '.' && o->name[o->len - 1] != '.'));
}

#endif
