/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_bigmem.c - large tables' memory: zeroed, the whole size usable,
 * kept across a resize, and (outside AddressSanitizer, which gets malloc
 * memory) starting on a 2 MB boundary from 2 MB up, so that a table of
 * 2 MB can be one transparent huge page; a list of wanted addresses
 * bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "bigmem.h"

#define MB ((size_t)1 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif

static void check_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4093)
		assert_int_equal(p[i], 0);
	assert_int_equal(p[n - 1], 0);
}

static void test_sizes(void **state)
{
	static const size_t sizes[] = { 100, MB, 2 * MB, 2 * MB + 1,
					5 * MB + 12345, 16 * MB };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned char *p = bigmem_alloc(n);

		assert_non_null(p);
		check_zero(p, n);
#ifndef ASAN
		if (n >= 2 * MB)
			assert_int_equal((uintptr_t)p % (2 * MB), 0);
#endif
		memset(p, 0xa5, n);
		bigmem_free(p, n);
	}
}

static void test_resize(void **state)
{
	size_t n = 3 * MB + 7, m = 9 * MB + 1;
	unsigned char *p = bigmem_alloc(n), *q;

	(void)state;
	assert_non_null(p);
	memset(p, 0x5a, n);
	q = bigmem_resize(p, n, m);
	assert_non_null(q);
	for (size_t i = 0; i < n; i += 4093)
		assert_int_equal(q[i], 0x5a);
	check_zero(q + n, m - n);
	p = bigmem_resize(q, m, 100);	/* across the megabyte: malloc */
	assert_non_null(p);
	assert_int_equal(p[99], 0x5a);
	bigmem_free(p, 100);
}

/* A list of wanted addresses keeps the first BIGMEM_WANTS_MAX in order,
 * writes nothing past its end however many are noted (the canary after
 * it), and bigmem_fetch() empties it. */
static void test_wants(void **state)
{
	static struct {
		struct bigmem_wants w;
		uintptr_t canary;
	} s = { .canary = 0x5a5a5a5a };
	static char mem[2 * BIGMEM_WANTS_MAX];

	(void)state;
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(mem); i++)
			bigmem_want(&s.w, mem + i);
		assert_int_equal(s.w.n, BIGMEM_WANTS_MAX);
		for (unsigned i = 0; i < BIGMEM_WANTS_MAX; i++)
			assert_ptr_equal(s.w.at[i], mem + i);
		assert_int_equal(s.canary, 0x5a5a5a5a);
		bigmem_fetch(&s.w);
		assert_int_equal(s.w.n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_resize),
		cmocka_unit_test(test_wants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
