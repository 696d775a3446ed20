/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_ctl_rates.c - unit tests of nfqd-ctl's rates and live views
 * (ctl_rates.c, ctl_view.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_rates.h"
#include "ctl_view.h"

static json_t *doc(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	assert_non_null(j);
	return j;
}

static double rate(json_t *stats, size_t q, const char *key)
{
	json_t *r = json_object_get(json_object_get(json_array_get(
		json_object_get(stats, "queues"), q), "rates"), key);

	assert_true(json_is_number(r));
	return json_number_value(r);
}

static void test_counter_delta(void **state)
{
	assert_true(ctl_counter_delta(10, 25) == 15);
	assert_true(ctl_counter_delta(7, 7) == 0);
	/* Restarted (new daemon, counters reset, a 32-bit wrap): the count
	 * since, never negative. */
	assert_true(ctl_counter_delta(1000, 40) == 40);
	assert_true(ctl_counter_delta(4294967295LL, 3) == 3);
	assert_true(ctl_counter_delta(5, -1) == 0);
}

static void test_queue_rates(void **state)
{
	json_t *prev = doc("{\"queues\":[{\"queue\":0,\"packets\":100,"
			   "\"bytes\":1000,\"batches\":10,\"dropped\":50,"
			   "\"queue_dropped\":7,\"queue_total\":3},"
			   "{\"queue\":1,\"packets\":5,\"batches\":5}]}");
	json_t *cur = doc("{\"queues\":[{\"queue\":0,\"packets\":300,"
			  "\"bytes\":5000,\"batches\":20,\"dropped\":10,"
			  "\"queue_dropped\":9,\"queue_total\":8},"
			  "{\"queue\":1,\"packets\":5,\"batches\":5},"
			  "{\"queue\":2,\"packets\":9}]}");
	json_t *q0, *q2, *empty;

	assert_int_equal(ctl_rates_queues(prev, cur, 2.0), 0);
	assert_true(rate(cur, 0, "packets") == 100);
	assert_true(rate(cur, 0, "bytes") == 2000);
	assert_true(rate(cur, 0, "packets_per_batch") == 20);
	assert_true(rate(cur, 0, "queue_dropped") == 1);
	/* dropped went down (counters reset): 10 since, over 2 s. */
	assert_true(rate(cur, 0, "dropped") == 5);
	q0 = json_object_get(json_array_get(json_object_get(cur, "queues"), 0),
			     "rates");
	/* A gauge has no rate; a counter an old daemon lacks has none. */
	assert_null(json_object_get(q0, "queue_total"));
	assert_null(json_object_get(q0, "incomplete"));
	/* No batch sent: no ratio. */
	assert_true(json_is_null(json_object_get(json_object_get(
		json_array_get(json_object_get(cur, "queues"), 1), "rates"),
		"packets_per_batch")));
	/* A queue new since PREV has no rates. */
	q2 = json_array_get(json_object_get(cur, "queues"), 2);
	assert_null(json_object_get(q2, "rates"));
	assert_int_equal(ctl_rates_queues(prev, cur, 0), -EINVAL);
	empty = doc("{}");
	assert_int_equal(ctl_rates_queues(prev, empty, 1), -EINVAL);
	json_decref(empty);
	json_decref(prev);
	json_decref(cur);
}

static const char rules_prev[] =
	"{\"generation\":1,\"hooks\":["
	"{\"hook\":\"input\",\"policy\":\"accept\",\"policy_packets\":10,"
	"\"rules\":[{\"index\":1,\"rule\":\"udp dport 9 drop\",\"packets\":0},"
	"{\"index\":2,\"rule\":\"tcp dport 22 accept\",\"packets\":100}]},"
	"{\"hook\":\"output\",\"policy\":\"accept\",\"policy_packets\":0,"
	"\"rules\":[]}]}";
static const char rules_cur[] =
	"{\"generation\":2,\"hooks\":["
	"{\"hook\":\"input\",\"policy\":\"drop\",\"policy_packets\":30,"
	"\"rules\":[{\"index\":1,\"rule\":\"udp dport 9 drop\",\"packets\":50},"
	"{\"index\":2,\"rule\":\"tcp dport 23 drop\",\"packets\":900},"
	"{\"index\":3,\"rule\":\"udp dport 7 drop\",\"packets\":0}]},"
	"{\"hook\":\"output\",\"policy\":\"accept\",\"policy_packets\":0,"
	"\"rules\":[]}]}";

static void test_rule_rates(void **state)
{
	json_t *prev = doc(rules_prev), *cur = doc(rules_cur);
	json_t *rows = ctl_rates_rules(prev, cur, 10), *r, *empty;

	assert_non_null(rows);
	/* The policy of a hook without rules and packets is left out. */
	assert_int_equal(json_array_size(rows), 4);
	r = json_array_get(rows, 0);
	assert_string_equal(json_string_value(json_object_get(r, "rule")),
			    "udp dport 9 drop");
	assert_true(json_number_value(json_object_get(r, "rate")) == 5);
	r = json_array_get(rows, 1);
	assert_string_equal(json_string_value(json_object_get(r, "rule")),
			    "policy drop");
	assert_true(json_is_null(json_object_get(r, "index")));
	assert_true(json_number_value(json_object_get(r, "rate")) == 2);
	/* A rule whose text changed has no rate; it sorts after the rates,
	 * by packets. */
	r = json_array_get(rows, 2);
	assert_string_equal(json_string_value(json_object_get(r, "rule")),
			    "tcp dport 23 drop");
	assert_true(json_is_null(json_object_get(r, "rate")));
	assert_int_equal(json_integer_value(json_object_get(r, "packets")),
			 900);
	json_decref(rows);
	/* Without a previous sample: no rates, busiest by packets first. */
	rows = ctl_rates_rules(NULL, cur, 0);
	assert_non_null(rows);
	r = json_array_get(rows, 0);
	assert_string_equal(json_string_value(json_object_get(r, "rule")),
			    "tcp dport 23 drop");
	assert_true(json_is_null(json_object_get(r, "rate")));
	json_decref(rows);
	empty = doc("[]");
	assert_null(ctl_rates_rules(NULL, empty, 1));
	json_decref(empty);
	json_decref(prev);
	json_decref(cur);
}

static void test_num(void **state)
{
	char b[16];

	assert_string_equal(ctl_view_num(-1, b, sizeof(b)), "-");
	assert_string_equal(ctl_view_num(0, b, sizeof(b)), "0");
	assert_string_equal(ctl_view_num(0.25, b, sizeof(b)), "0.2");
	assert_string_equal(ctl_view_num(6, b, sizeof(b)), "6");
	assert_string_equal(ctl_view_num(1234.4, b, sizeof(b)), "1234");
	assert_string_equal(ctl_view_num(99999, b, sizeof(b)), "99999");
	assert_string_equal(ctl_view_num(123456, b, sizeof(b)), "123.5k");
	assert_string_equal(ctl_view_num(4.5e6, b, sizeof(b)), "4.5M");
	assert_string_equal(ctl_view_num(2e9, b, sizeof(b)), "2.0G");
}

static char *capture(int (*fn)(FILE *, void *), void *arg, int *ret)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	*ret = fn(f, arg);
	fclose(f);
	return out;
}

static int rates_table(FILE *f, void *arg)
{
	return ctl_view_rates(f, arg, "12:00:00  ");
}

static void test_rates_table(void **state)
{
	json_t *prev = doc("{\"queues\":[{\"queue\":0,\"cpu\":0,"
			   "\"packets\":0,\"batches\":0,\"incomplete\":0},"
			   "{\"queue\":1,\"cpu\":1,\"packets\":0,"
			   "\"batches\":0}]}");
	json_t *cur = doc("{\"queues\":[{\"queue\":0,\"cpu\":0,"
			  "\"packets\":300,\"batches\":100,\"incomplete\":2,"
			  "\"queue_total\":17},"
			  "{\"queue\":1,\"cpu\":1,\"packets\":100,"
			  "\"batches\":100}]}");
	char *out;
	int ret;

	assert_int_equal(ctl_rates_queues(prev, cur, 1), 0);
	out = capture(rates_table, cur, &ret);
	assert_int_equal(ret, 0);
	assert_string_equal(out,
		"12:00:00  QUEUE CPU   PKT/S BYTES/S ACCEPT/S  DROP/S   DEPTH "
		"QDROP/S UDROP/S PKT/BATCH ENOBUFS/S INCOMPL/S\n"
		"12:00:00      0   0     300       -        -       -      17 "
		"      -       -         3         -         2\n"
		"12:00:00      1   1     100       -        -       -       - "
		"      -       -         1         -         -\n"
		"12:00:00    all   -     400       -        -       -       - "
		"      -       -         2         -         -\n");
	free(out);
	json_decref(prev);
	json_decref(cur);
}

static int top_frame(FILE *f, void *arg)
{
	return ctl_view_top(f, arg);
}

static void test_top_frame(void **state)
{
	json_t *stats = doc("{\"queues\":[{\"queue\":0,\"cpu\":0,"
			    "\"packets\":1}]}");
	json_t *cur = doc(rules_cur);
	json_t *rules = ctl_rates_rules(NULL, cur, 0);
	struct ctl_top_frame fr = {
		.socket = "/run/nfqd/nfqd.sock", .interval = 1.5,
		.clock = "12:00:00",
		.status = doc("{\"version\":\"0.1.0\",\"pid\":42,"
			      "\"uptime\":3725,\"config\":\"/etc/x.conf\","
			      "\"generation\":2,\"queues\":[0]}"),
		.stats = stats, .rules = rules, .height = 9,
	};
	char *out;
	int lines;

	out = capture(top_frame, &fr, &lines);
	/* 2 header lines, a blank, heading, 1 queue, a blank, heading,
	 * 2 of the 4 rules. */
	assert_int_equal(lines, 9);
	assert_int_equal(fr.heading[0], 3);
	assert_int_equal(fr.heading[1], 6);
	assert_true(strncmp(out, "12:00:00  nfqd 0.1.0  pid 42  up 1h 2m 5s  "
			    "generation 2  queues 1\nconfig /etc/x.conf  "
			    "socket /run/nfqd/nfqd.sock  every 1.5s",
			    100) == 0);
	assert_non_null(strstr(out, "\ninput            2       -          "
			       "900  tcp dport 23 drop\n"));
	assert_null(strstr(out, "udp dport 7"));
	free(out);
	fr.height = 0;
	out = capture(top_frame, &fr, &lines);
	assert_int_equal(lines, 11);
	assert_non_null(strstr(out, "udp dport 7 drop\n"));
	free(out);
	fr.error = "cannot reach nfqd (no such file)";
	out = capture(top_frame, &fr, &lines);
	assert_string_equal(out, "12:00:00  nfqd-ctl top: cannot reach nfqd "
			    "(no such file)\nretrying every 1.5s  q: quit\n");
	assert_int_equal(fr.heading[0], -1);
	free(out);
	json_decref(fr.status);
	json_decref(stats);
	json_decref(rules);
	json_decref(cur);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_delta),
		cmocka_unit_test(test_queue_rates),
		cmocka_unit_test(test_rule_rates),
		cmocka_unit_test(test_num),
		cmocka_unit_test(test_rates_table),
		cmocka_unit_test(test_top_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
