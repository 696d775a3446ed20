/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_dynset.c - a domain set's runtime patterns (dynset.h): "name",
 * "*.name" and ".name" are three elements, each matching as a config
 * pattern does; they expire, are deleted and undone one by one, and a
 * walk shows each as its text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include <urcu-qsbr.h>

#include "domset.h"
#include "dynset.h"
#include "policy.h"
#include "set.h"

static struct dynset *ds;

static int setup(void **state)
{
	(void)state;
	rcu_register_thread();
	ds = dynset_new(SETK_DOMAIN, SET_DOMAIN, 4, 0);
	return !ds || dynset_prepare(ds);
}

static int teardown(void **state)
{
	(void)state;
	synchronize_rcu();
	dynset_unref(ds);
	rcu_unregister_thread();
	return 0;
}

/* Pattern TEXT (config syntax), its name into NAME. */
static struct dyn_name pattern(const char *text, char name[DOM_PATTERN_MAX + 1])
{
	const char *why;
	unsigned flags;

	assert_int_equal(domset_pattern(text, strlen(text), name, &flags,
					&why), 0);
	return (struct dyn_name){ name, strlen(name), flags };
}

/* Add pattern TEXT with TIMEOUT_NS: dynset_add_pattern's return. */
static int add(const char *text, uint64_t timeout_ns)
{
	char name[DOM_PATTERN_MAX + 1];
	struct dyn_name n = pattern(text, name);

	return dynset_add_pattern(ds, &n, timeout_ns, DYN_RUNTIME, true);
}

static int del(const char *text)
{
	char name[DOM_PATTERN_MAX + 1];
	struct dyn_name n = pattern(text, name);

	return dynset_del_pattern(ds, &n);
}

static bool match(const char *name)
{
	struct dom_probes pr;

	domset_probes(name, strlen(name), &pr);
	/* With the probes the look-ahead made, and without. */
	assert_int_equal(dynset_match_name(ds, name, strlen(name), &pr),
			 dynset_match_name(ds, name, strlen(name), NULL));
	return dynset_match_name(ds, name, strlen(name), &pr);
}

static void test_patterns(void **state)
{
	(void)state;
	assert_false(match("a.test"));		/* never used: a load */
	assert_int_equal(add("a.test", 0), 1);
	assert_true(match("a.test"));
	assert_false(match("x.a.test"));	/* the name alone */
	assert_false(match("test"));
	assert_false(match("aa.test"));
	assert_int_equal(add("*.b.test", 0), 1);
	assert_false(match("b.test"));		/* below it only */
	assert_true(match("x.b.test"));
	assert_true(match("y.x.b.test"));
	assert_false(match("xb.test"));
	assert_int_equal(add(".c.test", 0), 1);
	assert_true(match("c.test"));		/* both */
	assert_true(match("x.c.test"));
	/* The same name with other flags is another element. */
	assert_int_equal(add("*.a.test", 0), 1);
	assert_true(match("x.a.test"));
	assert_int_equal(add("A.Test.", 0), 0);	/* there: normal form */
	/* The set holds 4: a fifth is refused, nothing changed. */
	assert_int_equal(add("d.test", 0), -ENOSPC);
	assert_false(match("d.test"));
	/* Delete one pattern of a name: the other stays. */
	assert_int_equal(del("a.test"), 1);
	assert_int_equal(del("a.test"), 0);
	assert_false(match("a.test"));
	assert_true(match("x.a.test"));
	assert_true(dynset_has_pattern(ds, &(struct dyn_name){ "a.test", 6,
							       DOM_BELOW }));
	assert_false(dynset_has_pattern(ds, &(struct dyn_name){ "a.test", 6,
								DOM_EXACT }));
	dynset_reclaim(ds);
}

/* An expired pattern does not hide a live one of the same name. */
static void test_expiry(void **state)
{
	struct timespec t = { 0, 30 * 1000000 };

	(void)state;
	assert_int_equal(add("e.test", 10 * 1000000ull), 1);
	assert_int_equal(add(".e.test", 0), 1);
	assert_int_equal(add("*.f.test", 10 * 1000000ull), 1);
	nanosleep(&t, NULL);
	assert_true(match("e.test"));
	assert_true(match("x.e.test"));
	assert_false(match("x.f.test"));
	assert_int_equal(dynset_sweep(ds, dynset_now()), 2);
	dynset_reclaim(ds);
	assert_true(match("e.test"));
}

struct seen {
	char text[4][DOM_PATTERN_MAX + 1];
	unsigned n;
};

static int note(void *arg, const struct dyn_elem *e)
{
	struct seen *s = arg;

	assert_true(s->n < 4);
	policy_dyn_text(SET_DOMAIN, e, s->text[s->n++], DOM_PATTERN_MAX + 1);
	return 0;
}

static bool seen(const struct seen *s, const char *text)
{
	for (unsigned i = 0; i < s->n; i++)
		if (!strcmp(s->text[i], text))
			return true;
	return false;
}

/* A walk shows each pattern as its config text; undo takes one back. */
static void test_walk_undo(void **state)
{
	struct seen s = { .n = 0 };
	struct dynset_stats st;

	(void)state;
	assert_int_equal(add("g.test", 0), 1);
	assert_int_equal(add("*.g.test", 0), 1);
	assert_int_equal(add(".h.test", 0), 1);
	dynset_walk(ds, dynset_now(), note, &s);
	assert_int_equal(s.n, 3);
	assert_true(seen(&s, "g.test"));
	assert_true(seen(&s, "*.g.test"));
	assert_true(seen(&s, ".h.test"));
	assert_int_equal(dynset_undo_add_pattern(ds, &(struct dyn_name){
				"g.test", 6, DOM_BELOW }), 1);
	dynset_reclaim(ds);
	assert_false(match("x.g.test"));
	assert_true(match("g.test"));
	dynset_get_stats(ds, &st);
	assert_int_equal(st.n, 2);
	assert_int_equal(st.adds, 2);
	assert_true(st.memory > 2 * strlen("g.test"));
	assert_int_equal(dynset_flush(ds), 2);
	dynset_reclaim(ds);
	assert_false(match("g.test"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_patterns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_undo, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
