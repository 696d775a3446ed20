/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_conf.c - libFuzzer target: any bytes through the config parser. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf *c = NULL;
	struct diags d = { 0 };
	uint16_t *q = NULL;
	int rc;

	rc = conf_load_buffer("fuzz.conf", (const char *)data, size, &c,
			      &d);
	if (rc == 0 && conf_queue_numbers(&c->opts, &q) > 0)
		free(q);
	conf_free(c);
	diag_free(&d);
	return 0;
}
