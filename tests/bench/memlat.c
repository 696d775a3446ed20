/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memlat.c - nfqd-memlat, the benchmark's measure of the machine's memory:
 * the time of one read at a random place in a table of MB megabytes, each
 * read waiting for the one before (a pointer chase over the table's cache
 * lines in a random cycle), in memory from bigmem_alloc(), as nfqd's
 * large tables are (huge pages where the kernel gives them).
 * What a lookup in a 1,000,000-name set or a flow table costs is about one
 * or two of these; a table that fits the CPU's caches reads far faster.
 *
 *   nfqd-memlat MB...
 *
 * Prints "MB MB: N ns a read" per size (the best of 3 passes of 200,000
 * reads). Exit status: 0, 1 error, 2 usage.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bigmem.h"

#define LINE 64
#define READS 200000

static char *volatile sink;	/* keeps the chase from being optimised out */

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* xorshift64*: a cycle order that does not depend on libc's rand(). */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* Link every line of the N-byte table at P into one random cycle. */
static int link_lines(char *p, size_t n)
{
	size_t lines = n / LINE, i;
	uint32_t *order = malloc(lines * sizeof(*order));
	uint64_t s = 0x9e3779b97f4a7c15ull;

	if (!order)
		return -ENOMEM;
	for (i = 0; i < lines; i++)
		order[i] = (uint32_t)i;
	for (i = lines - 1; i > 0; i--) {
		size_t j = (size_t)(next(&s) % (i + 1));
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < lines; i++)
		*(char **)(p + (size_t)order[i] * LINE) =
			p + (size_t)order[(i + 1) % lines] * LINE;
	free(order);
	return 0;
}

static int measure(size_t mb)
{
	size_t n = mb << 20;
	char *p = bigmem_alloc(n), *q;
	double best = 0;

	if (!p || link_lines(p, n)) {
		fprintf(stderr, "nfqd-memlat: out of memory\n");
		return 1;
	}
	q = p;
	for (int pass = 0; pass < 3; pass++) {
		double t0 = now_ns(), t;

		for (int k = 0; k < READS; k++)
			q = *(char *volatile *)q;
		t = (now_ns() - t0) / READS;
		if (pass == 0 || t < best)
			best = t;
	}
	sink = q;
	printf("%zu MB: %.0f ns a read\n", mb, best);
	bigmem_free(p, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nfqd-memlat MB...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		char *end;
		unsigned long mb = strtoul(argv[i], &end, 10);

		if (*end || mb == 0 || mb > 4096) {
			fprintf(stderr, "nfqd-memlat: %s: not a size in MB "
				"(1-4096)\n", argv[i]);
			return 2;
		}
		if (measure(mb))
			return 1;
	}
	return 0;
}
