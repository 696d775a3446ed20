/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_ctl_render.c - unit tests of nfqd-ctl's text and Prometheus output
 * (ctl_render.c, ctl_prom.c, ctl_setcli.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_client.h"
#include "ctl_setcli.h"

static const char stats_doc[] =
	"{\"queues\":[{\"queue\":0,\"cpu\":0,\"packets\":10,\"bytes\":600,"
	"\"accepted\":7,\"dropped\":3,\"other\":0,\"batches\":2,"
	"\"enobufs\":0,\"errors\":0,\"queue_total\":0,\"queue_dropped\":0,"
	"\"user_dropped\":0,\"id_sequence\":10},"
	"{\"queue\":1,\"cpu\":-1,\"packets\":12345678901,\"bytes\":0,"
	"\"accepted\":0,\"dropped\":0,\"other\":0,\"batches\":0,"
	"\"enobufs\":0,\"errors\":0,\"queue_total\":0,\"queue_dropped\":0,"
	"\"user_dropped\":0,\"id_sequence\":0}]}";

/* Render with FN into a string (caller frees). */
static char *render(int (*fn)(FILE *, json_t *), const char *doc, int *ret)
{
	json_t *j = json_loads(doc, 0, NULL);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(j);
	assert_non_null(f);
	*ret = fn(f, j);
	fclose(f);
	json_decref(j);
	return out;
}

static void test_stats_table(void **state)
{
	int ret;
	char *out = render(ctl_render_stats, stats_doc, &ret);
	char *line2;

	assert_int_equal(ret, 0);
	assert_true(strncmp(out, "queue cpu     packets bytes accepted",
			    36) == 0);
	line2 = strchr(out, '\n') + 1;
	assert_true(strncmp(line2, "    0   0          10   600        7",
			    36) == 0);
	assert_non_null(strstr(out, "    1  -1 12345678901"));
	free(out);
}

static int prom_no_rules(FILE *f, json_t *j)
{
	return ctl_render_prometheus(f, j, NULL);
}

static void test_prometheus(void **state)
{
	int ret;
	char *out = render(prom_no_rules, stats_doc, &ret);

	assert_int_equal(ret, 0);
	assert_non_null(strstr(out,
		"# TYPE nfqd_packets_total counter\n"
		"nfqd_packets_total{queue=\"0\"} 10\n"
		"nfqd_packets_total{queue=\"1\"} 12345678901\n"));
	assert_non_null(strstr(out, "# HELP nfqd_dropped_total "));
	assert_non_null(strstr(out, "nfqd_queue_cpu{queue=\"1\"} -1\n"));
	assert_non_null(strstr(out,
			       "# TYPE nfqd_kernel_queue_length gauge\n"));
	free(out);
}

static const char rules_doc[] =
	"{\"generation\":3,\"hooks\":[{\"hook\":\"input\","
	"\"policy\":\"accept\",\"policy_packets\":5,"
	"\"rules\":[{\"index\":1,\"rule\":\"udp dport 9 drop\","
	"\"packets\":3,\"bytes\":180},"
	"{\"index\":2,\"rule\":\"log prefix \\\"a\\\\b\\\" accept\","
	"\"packets\":1,\"bytes\":60},"
	"{\"index\":3,\"rule\":\"ip saddr { 192.0.2.1, 192.0.2.2, "
	"192.0.2.3, 192.0.2.4, 192.0.2.5, 192.0.2.6 } drop\","
	"\"packets\":0,\"bytes\":0}]},"
	"{\"hook\":\"output\",\"policy\":\"drop\","
	"\"policy_packets\":0,\"rules\":[]}]}";

static int prom_with_rules(FILE *f, json_t *j)
{
	json_t *rules = json_loads(rules_doc, 0, NULL);
	int ret;

	assert_non_null(rules);
	ret = ctl_render_prometheus(f, j, rules);
	json_decref(rules);
	return ret;
}

static void test_prometheus_rules(void **state)
{
	int ret;
	char *out = render(prom_with_rules, stats_doc, &ret);

	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "nfqd_up 1\n"));
	assert_non_null(strstr(out, "nfqd_policy_generation 3\n"));
	assert_non_null(strstr(out,
		"# TYPE nfqd_rule_packets_total counter\n"
		"nfqd_rule_packets_total{hook=\"input\",index=\"1\","
		"rule=\"udp dport 9 drop\"} 3\n"));
	/* Quotes and backslashes escaped. */
	assert_non_null(strstr(out, "index=\"2\",rule=\"log prefix "
			       "\\\"a\\\\b\\\" accept\"} 1\n"));
	/* Long texts cut to 64 bytes, the cut shown. */
	assert_non_null(strstr(out, "index=\"3\",rule=\"ip saddr { "
			       "192.0.2.1, 192.0.2.2, 192.0.2.3, 192.0.2.4, "
			       "192.0....\"} 0\n"));
	assert_non_null(strstr(out, "nfqd_rule_bytes_total{hook=\"input\","
			       "index=\"1\",rule=\"udp dport 9 drop\"} 180\n"));
	assert_non_null(strstr(out, "nfqd_policy_packets_total{hook=\"input\"}"
			       " 5\n"));
	assert_non_null(strstr(out, "nfqd_policy_packets_total{hook=\"output\"}"
			       " 0\n"));
	/* Kernel drop counters are counters, with the 32-bit warning. */
	assert_non_null(strstr(out,
		"# TYPE nfqd_kernel_queue_dropped_total counter\n"));
	assert_non_null(strstr(out,
		"# TYPE nfqd_kernel_user_dropped_total counter\n"));
	assert_non_null(strstr(out, "32-bit counter that wraps"));
	assert_null(strstr(out, "nfqd_kernel_queue_dropped "));
	free(out);
}

static void test_prometheus_missing_key(void **state)
{
	int ret;
	char *out = render(prom_no_rules, stats_doc, &ret);

	/* stats_doc's daemon has no "incomplete": no family, not zeros. */
	assert_int_equal(ret, 0);
	assert_null(strstr(out, "nfqd_incomplete_total"));
	free(out);
	out = render(prom_no_rules, "{\"queues\":[{\"queue\":0,"
		     "\"incomplete\":4}]}", &ret);
	assert_non_null(strstr(out, "# TYPE nfqd_incomplete_total counter\n"
			       "nfqd_incomplete_total{queue=\"0\"} 4\n"));
	assert_null(strstr(out, "nfqd_packets_total"));
	free(out);
}

static void test_prometheus_down(void **state)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ctl_render_prometheus_down(f);
	fclose(f);
	assert_string_equal(out, "# HELP nfqd_up 1 if nfqd-ctl could read "
			    "nfqd's counters, 0 if not.\n"
			    "# TYPE nfqd_up gauge\nnfqd_up 0\n");
	free(out);
}

static void test_rules(void **state)
{
	int ret;
	char *out = render(ctl_render_rules,
			   "{\"generation\":2,\"hooks\":[{\"hook\":\"input\","
			   "\"policy\":\"accept\",\"policy_packets\":5,"
			   "\"rules\":[{\"index\":1,"
			   "\"rule\":\"udp dport 9 drop\","
			   "\"packets\":3,\"bytes\":180}]}]}", &ret);

	assert_int_equal(ret, 0);
	assert_string_equal(out, "generation 2\n"
			    "hook input: policy accept, 5 packets\n"
			    "  index packets bytes  rule\n"
			    "      1       3   180  udp dport 9 drop\n");
	free(out);
}

static void test_status(void **state)
{
	int ret;
	char *out = render(ctl_render_status,
			   "{\"version\":\"0.1.0\",\"pid\":42,\"uptime\":3725,"
			   "\"config\":\"/etc/nfqd/nfqd.conf\","
			   "\"generation\":1,"
			   "\"queues\":[0,1]}", &ret);

	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "uptime:      1h 2m 5s\n"));
	assert_non_null(strstr(out, "queues:      0 1\n"));
	free(out);
}

/* The "sets" table: memory in bytes, K from 10K, M from 10M; "config"
 * for no file; the runtime columns; no set, the header alone. */
static void test_sets(void **state)
{
	int ret;
	char *out = render(ctl_render_sets,
			   "{\"sets\":[{\"name\":\"few\","
			   "\"type\":\"inet_service\",\"elements\":3,"
			   "\"runtime_elements\":0,\"size\":65536,"
			   "\"memory\":96,\"file\":null},"
			   "{\"name\":\"big\",\"type\":\"ipv4_addr\","
			   "\"elements\":200010,\"runtime_elements\":10,"
			   "\"size\":65536,\"memory\":6400000,\"adds\":12,"
			   "\"deletes\":1,\"expiries\":1,\"table_full\":2,"
			   "\"file\":\"big.txt\"},"
			   "{\"name\":\"huge\",\"type\":\"ipv6_addr\","
			   "\"elements\":1000000,\"memory\":32000000,"
			   "\"file\":\"/etc/nfqd/huge\"}]}", &ret);
	const char *head = "set              type          elements   runtime "
			   "     size  memory      adds   deletes  expiries   "
			   "full  source\n";
	char want[1024];

	assert_int_equal(ret, 0);
	snprintf(want, sizeof(want), "%s%s%s%s", head,
		 "few              inet_service         3         0     65536"
		 "      96         0         0         0      0  config\n",
		 "big              ipv4_addr       200010        10     65536"
		 "   6250K        12         1         1      2  big.txt\n",
		 "huge             ipv6_addr      1000000         0         0"
		 "     30M         0         0         0      0  /etc/nfqd/huge\n");
	assert_string_equal(out, want);
	free(out);
	out = render(ctl_render_sets, "{\"sets\":[]}", &ret);
	assert_int_equal(ret, 0);
	assert_string_equal(out, head);
	free(out);
}

static void test_bad_shape(void **state)
{
	int ret;

	free(render(ctl_render_stats, "{\"x\":1}", &ret));
	assert_int_equal(ret, -EINVAL);
	free(render(ctl_render_rules, "[]", &ret));
	assert_int_equal(ret, -EINVAL);
	free(render(ctl_render_status, "{}", &ret));
	assert_int_equal(ret, -EINVAL);
	free(render(ctl_render_sets, "{\"sets\":{}}", &ret));
	assert_int_equal(ret, -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_table),
		cmocka_unit_test(test_prometheus),
		cmocka_unit_test(test_prometheus_rules),
		cmocka_unit_test(test_prometheus_missing_key),
		cmocka_unit_test(test_prometheus_down),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_bad_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
