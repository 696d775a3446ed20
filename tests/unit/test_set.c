/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_set.c - unit tests of the set hash and interval structures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "domset.h"
#include "set.h"

static void a6(const char *s, uint8_t out[16])
{
	assert_int_equal(inet_pton(AF_INET6, s, out), 1);
}

static uint32_t a4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return ntohl(a.s_addr);
}

static void test_u32_exact_hash(void **state)
{
	struct set *s = set_new(SETK_U32);

	for (uint32_t v = 0; v < 100000; v += 3)
		assert_int_equal(set_add_u32(s, v, v), 0);
	assert_int_equal(set_add_u32(s, 3, 3), 0);	/* duplicate */
	assert_int_equal(set_add_u32(s, UINT32_MAX, UINT32_MAX), 0);
	assert_int_equal(set_finish(s), 0);
	assert_int_equal(set_n_exact(s), 33334 + 1);
	for (uint32_t v = 0; v < 100002; v++)
		assert_int_equal(set_has_u32(s, v), v % 3 == 0 && v < 100000);
	assert_true(set_has_u32(s, 0));
	assert_true(set_has_u32(s, UINT32_MAX));
	assert_false(set_has_u32(s, UINT32_MAX - 1));
	assert_int_equal(set_add_u32(s, 7, 7), -EINVAL);	/* finished */
	set_free(s);
}

static void test_u32_few_and_zero(void **state)
{
	struct set *s = set_new(SETK_U32);

	assert_int_equal(set_add_u32(s, 22, 22), 0);
	assert_int_equal(set_add_u32(s, 0, 0), 0);
	assert_int_equal(set_finish(s), 0);
	assert_true(set_has_u32(s, 22));
	assert_true(set_has_u32(s, 0));
	assert_false(set_has_u32(s, 1));
	assert_false(set_has_u32(s, 23));
	set_free(s);

	/* A hashed set without 0 must not claim 0. */
	s = set_new(SETK_U32);
	for (uint32_t v = 1; v <= 50; v++)
		set_add_u32(s, v, v);
	set_finish(s);
	assert_false(set_has_u32(s, 0));
	assert_true(set_has_u32(s, 50));
	set_free(s);
}

static void test_u32_intervals_merge(void **state)
{
	struct set *s = set_new(SETK_U32);

	assert_int_equal(set_add_u32(s, 5, 4), -EINVAL);
	set_add_u32(s, 100, 200);
	set_add_u32(s, 150, 300);	/* overlaps */
	set_add_u32(s, 301, 310);	/* touches */
	set_add_u32(s, 10, 20);
	set_add_u32(s, 12, 15);		/* inside */
	set_add_u32(s, 400, 400);
	set_add_u32(s, UINT32_MAX - 5, UINT32_MAX);
	set_add_u32(s, UINT32_MAX - 1, UINT32_MAX);
	assert_int_equal(set_finish(s), 0);
	assert_int_equal(set_n_intervals(s), 4);
	assert_false(set_has_u32(s, 9));
	assert_true(set_has_u32(s, 10));
	assert_true(set_has_u32(s, 20));
	assert_false(set_has_u32(s, 21));
	assert_false(set_has_u32(s, 99));
	assert_true(set_has_u32(s, 100));
	assert_true(set_has_u32(s, 250));
	assert_true(set_has_u32(s, 310));
	assert_false(set_has_u32(s, 311));
	assert_true(set_has_u32(s, 400));
	assert_false(set_has_u32(s, 401));
	assert_true(set_has_u32(s, UINT32_MAX));
	assert_true(set_has_u32(s, UINT32_MAX - 5));
	assert_false(set_has_u32(s, UINT32_MAX - 6));
	assert_false(set_has_u32(s, 0));
	set_free(s);
}

static void test_ipv4_prefixes(void **state)
{
	struct set *s = set_new(SETK_U32);

	/* 0.0.0.0/0 must hold every address, 10.0.0.0/8 and a host. */
	set_add_u32(s, a4("10.0.0.0"), a4("10.255.255.255"));
	set_add_u32(s, a4("192.0.2.0"), a4("192.0.2.255"));
	for (int i = 0; i < 20; i++)
		set_add_u32(s, a4("203.0.113.9") + (uint32_t)i,
			    a4("203.0.113.9") + (uint32_t)i);
	set_finish(s);
	assert_true(set_has_u32(s, a4("10.1.2.3")));
	assert_false(set_has_u32(s, a4("11.0.0.0")));
	assert_false(set_has_u32(s, a4("9.255.255.255")));
	assert_true(set_has_u32(s, a4("192.0.2.255")));
	assert_false(set_has_u32(s, a4("192.0.3.0")));
	assert_true(set_has_u32(s, a4("203.0.113.28")));
	assert_false(set_has_u32(s, a4("203.0.113.29")));
	set_free(s);

	s = set_new(SETK_U32);
	set_add_u32(s, 0, UINT32_MAX);
	set_finish(s);
	assert_true(set_has_u32(s, 0));
	assert_true(set_has_u32(s, UINT32_MAX));
	assert_true(set_has_u32(s, a4("1.2.3.4")));
	set_free(s);
}

static void test_ipv6(void **state)
{
	struct set *s = set_new(SETK_U128);
	uint8_t lo[16], hi[16], v[16];

	a6("2001:db8::", lo);
	a6("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", hi);
	assert_int_equal(set_add_u128(s, lo, hi), 0);
	assert_int_equal(set_add_u128(s, hi, lo), -EINVAL);
	a6("::", lo);
	assert_int_equal(set_add_u128(s, lo, lo), 0);	/* :: exact */
	for (int i = 1; i <= 20; i++) {
		a6("fe80::", v);
		v[15] = (uint8_t)i;
		set_add_u128(s, v, v);
	}
	/* Ranges that straddle the 64-bit halves. */
	a6("2001:db9::ffff:ffff:ffff:fff0", lo);
	a6("2001:db9:0:1::10", hi);
	set_add_u128(s, lo, hi);
	a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0", lo);
	memset(hi, 0xff, 16);
	set_add_u128(s, lo, hi);
	assert_int_equal(set_finish(s), 0);
	assert_true(set_n_exact(s) >= 21);

	a6("2001:db8::1", v);
	assert_true(set_has_u128(s, v));
	a6("2001:db8:abcd::", v);
	assert_true(set_has_u128(s, v));
	a6("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", v);
	assert_false(set_has_u128(s, v));
	a6("2001:db9::", v);
	assert_false(set_has_u128(s, v));
	a6("::", v);
	assert_true(set_has_u128(s, v));
	a6("::1", v);
	assert_false(set_has_u128(s, v));
	a6("fe80::14", v);
	assert_true(set_has_u128(s, v));
	a6("fe80::15", v);
	assert_false(set_has_u128(s, v));
	a6("2001:db9::ffff:ffff:ffff:ffff", v);
	assert_true(set_has_u128(s, v));
	a6("2001:db9:0:1::10", v);
	assert_true(set_has_u128(s, v));
	a6("2001:db9:0:1::11", v);
	assert_false(set_has_u128(s, v));
	memset(v, 0xff, 16);
	assert_true(set_has_u128(s, v));
	set_free(s);
}

static void test_names(void **state)
{
	struct set *s = set_new(SETK_STR);
	char name[16];

	assert_int_equal(set_add_str(s, "eth0"), 0);
	assert_int_equal(set_add_str(s, "veth*"), 0);
	assert_int_equal(set_add_str(s, "veth*"), 0);	/* counted once */
	assert_int_equal(set_add_str(s, "0123456789abcdef"), -EINVAL);
	assert_int_equal(set_add_str(s, "0123456789abcde"), 0);
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "tap%d", i);
		set_add_str(s, name);
	}
	assert_int_equal(set_finish(s), 0);
	assert_true(set_has_str(s, "eth0"));
	assert_false(set_has_str(s, "eth"));
	assert_false(set_has_str(s, "eth00"));
	assert_true(set_has_str(s, "veth"));
	assert_true(set_has_str(s, "veth123"));
	assert_false(set_has_str(s, "vet"));
	assert_true(set_has_str(s, "tap39"));
	assert_false(set_has_str(s, "tap40"));
	assert_true(set_has_str(s, "0123456789abcde"));
	assert_false(set_has_str(s, ""));
	assert_int_equal(set_n_exact(s), 42);
	assert_int_equal(set_n_prefixes(s), 1);
	assert_int_equal(set_bytes(s), 32 * 43);
	set_free(s);

	s = set_new(SETK_STR);
	set_add_str(s, "*");
	set_finish(s);
	assert_true(set_has_str(s, "anything"));
	set_free(s);
}

static void test_big_u32(void **state)
{
	struct set *s = set_new(SETK_U32);

	for (uint32_t v = 0; v < 1000000; v++)
		set_add_u32(s, 0x0a000000 + v * 7, 0x0a000000 + v * 7);
	assert_int_equal(set_finish(s), 0);
	assert_int_equal(set_n_exact(s), 1000000);
	for (uint32_t v = 0; v < 7000000; v += 1)
		if (set_has_u32(s, 0x0a000000 + v) != (v % 7 == 0))
			fail_msg("value %u", v);
	set_free(s);
}

static bool dom_has(const struct set *s, const char *name)
{
	return set_has_domain(s, name, strlen(name), NULL);
}

static void test_domain(void **state)
{
	struct set *s = set_new(SETK_DOMAIN);
	const char *why;

	assert_int_equal(set_add_domain(s, "Exact.TEST.", &why), 0);
	assert_int_equal(set_add_domain(s, ".both.test", &why), 0);
	assert_int_equal(set_add_domain(s, "*.below.test", &why), 0);
	assert_int_equal(set_add_domain(s, "merge.test", &why), 0);
	assert_int_equal(set_add_domain(s, "*.merge.test", &why), 0);
	assert_int_equal(set_add_domain(s, "h\xc3\xa9.test", &why), -EINVAL);
	assert_non_null(strstr(why, "A-label"));
	assert_int_equal(set_add_domain(s, "a*.test", &why), -EINVAL);
	assert_int_equal(set_add_domain(s, "a..test", &why), -EINVAL);
	assert_int_equal(set_add_domain(s, "", &why), -EINVAL);
	assert_int_equal(set_finish(s), 0);
	assert_int_equal(set_n_exact(s), 4);

	assert_true(dom_has(s, "exact.test"));
	assert_false(dom_has(s, "a.exact.test"));
	assert_false(dom_has(s, "test"));
	assert_false(dom_has(s, "xexact.test"));
	assert_true(dom_has(s, "both.test"));
	assert_true(dom_has(s, "a.b.both.test"));
	assert_false(dom_has(s, "aboth.test"));
	assert_false(dom_has(s, "below.test"));
	assert_true(dom_has(s, "x.below.test"));
	assert_true(dom_has(s, "merge.test"));
	assert_true(dom_has(s, "x.merge.test"));
	assert_false(dom_has(s, ""));
	set_free(s);
}

static int dom_walk(void *arg, const void *lo, const void *hi)
{
	char *out = arg;

	assert_null(hi);
	strcat(out, lo);
	strcat(out, " ");
	return 0;
}

static void test_domain_walk(void **state)
{
	struct set *s = set_new(SETK_DOMAIN);
	char out[256] = "";
	const char *why;

	assert_int_equal(set_add_domain(s, "b.test", &why), 0);
	assert_int_equal(set_add_domain(s, ".a.test", &why), 0);
	assert_int_equal(set_add_domain(s, "*.c.test", &why), 0);
	assert_int_equal(set_add_domain(s, "B.test", &why), 0);
	assert_int_equal(set_finish(s), 0);
	assert_int_equal(set_walk(s, dom_walk, out), 0);
	assert_string_equal(out, "b.test .a.test *.c.test ");
	set_free(s);
}

static int flags_of(void *arg, const char *name, unsigned flags)
{
	unsigned *out = arg;

	if (!strcmp(name, "merge.test"))
		*out = flags;
	return 0;
}

/*
 * A name added again with other flags after the table grew (it is moved
 * to new slots, its flags stay in the arena): both meanings stay, in the
 * lookup and in the walk, and every other name is still found.
 */
static void test_domain_merge_after_grow(void **state)
{
	struct domset *d = domset_new();
	unsigned flags = 0;
	char name[64];
	int len;

	assert_int_equal(domset_add(d, "merge.test", 10, DOM_EXACT), 0);
	for (int i = 0; i < 5000; i++) {
		len = snprintf(name, sizeof(name), "n%d.merge%d.test", i, i % 7);
		assert_int_equal(domset_add(d, name, (size_t)len, DOM_EXACT), 0);
	}
	assert_int_equal(domset_add(d, "merge.test", 10, DOM_BELOW), 0);
	domset_finish(d);
	assert_int_equal(domset_count(d), 5001);
	assert_true(domset_match(d, "merge.test", 10, NULL));
	assert_true(domset_match(d, "x.merge.test", 12, NULL));
	assert_false(domset_match(d, "merge.test.x", 12, NULL));
	for (int i = 0; i < 5000; i++) {
		len = snprintf(name, sizeof(name), "n%d.merge%d.test", i, i % 7);
		assert_true(domset_match(d, name, (size_t)len, NULL));
		len = snprintf(name, sizeof(name), "n%d.merge%d.test",
			       i, (i + 1) % 7);
		assert_false(domset_match(d, name, (size_t)len, NULL));
	}
	assert_int_equal(domset_walk(d, flags_of, &flags), 0);
	assert_int_equal(flags, DOM_EXACT | DOM_BELOW);
	domset_free(d);
}

/* A random label of 1 to 20 characters, 1 in 8 of 21 to 63. */
static size_t rand_label(char *out)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789-";
	size_t n = rand() % 8 ? 1 + rand() % 20 : 21 + rand() % 43;

	for (size_t i = 0; i < n; i++)
		out[i] = chars[rand() % (sizeof(chars) - 1)];
	return n;
}

/* A random name of 1 to 4 labels, at most 200 characters. */
static size_t rand_name(char *out)
{
	size_t len = 0, labels = 1 + rand() % 4;

	for (size_t k = 0; k < labels && len < 120; k++) {
		if (k)
			out[len++] = '.';
		len += rand_label(out + len);
	}
	out[len] = '\0';
	return len;
}

/*
 * Names of labels of every length (the hash reads 8 bytes at a time,
 * a label's last 1 to 7 bytes with the bytes before them when there are
 * 8), asked about as themselves and below other labels, against a model
 * that compares the strings: a name matches when it, or a label suffix
 * of it, was added with the flag that covers it.
 */
#define WORDS_N 400
static void test_domain_words(void **state)
{
	static char names[WORDS_N][256];
	static unsigned flags[WORDS_N];
	struct domset *d = domset_new();
	struct dom_probes pr;
	static struct bigmem_wants wants;
	char q[512];

	srand(4242);
	for (int i = 0; i < WORDS_N; i++) {
		rand_name(names[i]);
		flags[i] = 1 + rand() % 3;	/* EXACT, BELOW or both */
		assert_int_equal(domset_add(d, names[i], strlen(names[i]),
					    flags[i]), 0);
	}
	domset_finish(d);
	for (int iter = 0; iter < 20000; iter++) {
		int i = rand() % WORDS_N;
		size_t len = 0;
		bool want = false;

		if (rand() % 2) {		/* below a listed name */
			len = rand_label(q);
			q[len++] = '.';
		}
		len += (size_t)sprintf(q + len, "%s", names[i]);
		if (rand() % 4 == 0)		/* or a name not listed */
			q[rand() % len] = '_';
		for (size_t at = 0; at < len; at++) {
			if (at && q[at - 1] != '.')
				continue;
			for (int k = 0; k < WORDS_N; k++)
				if (!strcmp(q + at, names[k]) &&
				    (flags[k] & (at ? DOM_BELOW : DOM_EXACT)))
					want = true;
		}
		assert_int_equal(domset_match(d, q, len, NULL), want);
		/* The same with probes made first and the look-ahead's
		 * three steps asked for (what a queue does), at once or
		 * through a list of wanted addresses. */
		domset_probes(q, len, &pr);
		for (int step = DOM_AHEAD_FILTER; step <= DOM_AHEAD_NAMES;
		     step++) {
			domset_prefetch(d, &pr, (enum dom_ahead)step,
					iter % 2 ? &wants : NULL);
			bigmem_fetch(&wants);
		}
		assert_int_equal(domset_match(d, q, len, &pr), want);
	}
	domset_free(d);
}

/* domset_probes()' label starts against a byte at a time: names of 1 to
 * 40 labels of 1-12 bytes (dots at every place of a word), each alone in
 * a buffer of its length (ASan sees a read past it). */
static void test_domain_probe_starts(void **state)
{
	struct dom_probes pr;
	unsigned seed = 7;

	for (int iter = 0; iter < 20000; iter++) {
		int labels = 1 + rand_r(&seed) % 40;
		char q[512], *exact;
		size_t len = 0, k;

		for (int i = 0; i < labels && len < 230; i++) {
			size_t l = 1 + rand_r(&seed) % 12;

			if (i)
				q[len++] = '.';
			for (size_t j = 0; j < l; j++)
				q[len++] = (char)('a' + rand_r(&seed) % 26);
		}
		exact = malloc(len);
		assert_non_null(exact);
		memcpy(exact, q, len);
		domset_probes(exact, len, &pr);
		free(exact);
		k = 0;		/* shortest suffix first: starts from the end */
		for (size_t at = len; at-- > 0;) {
			if (at && q[at - 1] != '.')
				continue;
			assert_true(k < pr.n);
			assert_int_equal(pr.at[k], at);
			k++;
		}
		assert_int_equal(pr.n, k);
	}
}

/*
 * A blocklist's size: 1,000,000 names (plus their parents as "*." patterns
 * would double it; these are distinct names). Asserts the memory bound
 * (under 64 bytes a name); prints the bytes, no time is asserted.
 */
static void test_domain_million(void **state)
{
	struct domset *d = domset_new();
	char name[64];
	size_t n = 1000000, i, len, total = 0;

	for (i = 0; i < n; i++) {
		len = (size_t)snprintf(name, sizeof(name), "host%zu.block%zu.test",
				       i, i % 9973);
		total += len;
		assert_int_equal(domset_add(d, name, len, DOM_EXACT), 0);
	}
	domset_finish(d);
	assert_int_equal(domset_count(d), n);
	printf("# domset: %zu names, average %.1f characters, %zu bytes, "
	       "%.1f bytes a name\n", n, (double)total / n, domset_bytes(d),
	       (double)domset_bytes(d) / n);
	assert_true(domset_bytes(d) < 64 * n);
	/* Every name, through the filter domset_finish() built: it must
	 * never turn a member away. */
	for (i = 0; i < n; i++) {
		len = (size_t)snprintf(name, sizeof(name), "host%zu.block%zu.test",
				       i, i % 9973);
		assert_true(domset_match(d, name, len, NULL));
		if (i % 997)
			continue;
		name[0] = 'x';
		assert_false(domset_match(d, name, len, NULL));
	}
	/* An add after it drops the filter; both names still match. */
	assert_int_equal(domset_add(d, "late.test", 9, DOM_EXACT), 0);
	assert_true(domset_match(d, "late.test", 9, NULL));
	assert_true(domset_match(d, "host5.block5.test", 17, NULL));
	domset_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u32_exact_hash),
		cmocka_unit_test(test_u32_few_and_zero),
		cmocka_unit_test(test_u32_intervals_merge),
		cmocka_unit_test(test_ipv4_prefixes),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_domain),
		cmocka_unit_test(test_domain_walk),
		cmocka_unit_test(test_domain_merge_after_grow),
		cmocka_unit_test(test_domain_words),
		cmocka_unit_test(test_domain_probe_starts),
		cmocka_unit_test(test_domain_million),
		cmocka_unit_test(test_big_u32),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
