/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_conf.c - unit tests of the config parser (cmocka). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conf.h"
#include "confenv.h"
#include "log.h"

#ifndef CONF_TEST_DIR
#define CONF_TEST_DIR "tests/conf"
#endif

/* ---- helpers ---- */

/* load_buf() and load_file() with the errors as "FILE:LINE:COL:
 * message\n" lines (NULL if none), as the tests compare them. */
static int load_buf(const char *name, const char *buf, size_t len,
		    struct conf **c, char **err)
{
	struct diags d = { 0 };
	int rc = conf_load_buffer(name, buf, len, c, &d);

	*err = diag_join(&d, DIAG_ERROR);
	diag_free(&d);
	return rc;
}

static int load_file(const char *path, struct conf **c, char **err)
{
	struct diags d = { 0 };
	int rc = conf_load(path, c, &d);

	*err = diag_join(&d, DIAG_ERROR);
	diag_free(&d);
	return rc;
}

static struct conf *load_ok(const char *text)
{
	struct conf *c = NULL;
	char *err = NULL;
	int rc = load_buf("t.conf", text, strlen(text), &c, &err);

	if (rc)
		fail_msg("unexpected error %d:\n%s", rc, err ? err : "");
	assert_null(err);
	assert_non_null(c);
	return c;
}

/* The exact error text for TEXT, as conf_load() would give it. */
static void expect_err(const char *text, const char *want)
{
	struct conf *c = NULL;
	char *err = NULL;
	int rc = load_buf("t.conf", text, strlen(text), &c, &err);

	assert_int_equal(rc, -EINVAL);
	assert_null(c);
	assert_non_null(err);
	if (strcmp(err, want))
		fail_msg("input:\n%s\nwant:\n%sgot:\n%s", text, want, err);
	free(err);
}

static const struct conf_rule *rule(const struct conf *c, enum conf_hook_id h,
				    unsigned i)
{
	assert_true(c->hooks[h].present);
	assert_true(i < c->hooks[h].n_rules);
	return &c->hooks[h].rules[i];
}

/* Load one rule inside "hook input { ... }" and return the conf. */
static struct conf *one_rule(const char *r)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "set s4 { type ipv4_addr; }\n"
		 "set s6 { type ipv6_addr; }\n"
		 "set sp { type inet_service; }\n"
		 "set si { type ifname; }\n"
		 "set sm { type mark; }\n"
		 "hook input {\n\t%s\n}\n", r);
	return load_ok(buf);
}

static void addr4(const uint8_t *a, const char *want)
{
	uint8_t w[16] = { 0 };

	assert_int_equal(inet_pton(AF_INET, want, w), 1);
	assert_memory_equal(a, w, 16);
}

static void addr6(const uint8_t *a, const char *want)
{
	uint8_t w[16];

	assert_int_equal(inet_pton(AF_INET6, want, w), 1);
	assert_memory_equal(a, w, 16);
}

/* ---- valid files ---- */

static void test_default(void **state)
{
	struct conf *c = conf_default();

	assert_non_null(c);
	assert_int_equal(c->opts.queues_mode, QUEUES_AUTO);
	assert_int_equal(c->opts.queue_maxlen, 4096);
	assert_int_equal(c->opts.copy_range, 256);
	assert_int_equal(c->opts.batch, 64);
	assert_int_equal(c->opts.rcvbuf, 16u << 20);
	assert_string_equal(c->opts.stats_file, NFQD_DEFAULT_STATS);
	assert_string_equal(c->opts.control_socket, NFQD_DEFAULT_SOCKET);
	assert_int_equal(c->opts.log_level, LOG_LVL_INFO);
	assert_int_equal(c->opts.bypass_mark, 0x40000000);
	assert_int_equal(c->opts.incomplete_verdict, VERDICT_DROP);
	assert_int_equal(c->opts.orphan_verdict, VERDICT_REPEAT);
	assert_true(c->opts.gso && c->opts.cpu_pin && !c->opts.fail_open);
	for (int h = 0; h < HOOK_MAX; h++) {
		assert_false(c->hooks[h].present);
		assert_int_equal(c->hooks[h].policy, VERDICT_ACCEPT);
	}
	conf_free(c);
}

static void test_example_file(void **state)
{
	struct conf *c = NULL;
	char *err = NULL;
	const struct conf_set *s;
	static const char *const texts[] = {
		"ip saddr @blocked counter drop",
		"tcp dport { 23, 2323 } drop",
		"iifname \"eth0\" tcp dport 22 accept",
		"udp dport 5000-5100 mark set 0x10 accept",
		"ip6 daddr 2001:db8::/32 drop",
		"meta mark 0x1 repeat",
		"udp dport 9999 queue 7",
	};

	assert_int_equal(chdir(CONF_TEST_DIR), 0);
	if (load_file("example.conf", &c, &err))
		fail_msg("%s", err);
	assert_string_equal(c->path, "example.conf");
	assert_int_equal(c->opts.rcvbuf, 16u << 20);
	assert_string_equal(c->opts.user, "nfqd");
	assert_string_equal(c->opts.control_group, "nfqd");
	assert_int_equal(c->n_sets, 1);
	s = &c->sets[0];
	assert_string_equal(s->name, "blocked");
	assert_int_equal(s->type, SET_IPV4_ADDR);
	assert_true(s->interval);
	assert_int_equal(s->n_elems, 2);
	addr4(s->elems[0].alo, "192.0.2.0");
	addr4(s->elems[0].ahi, "192.0.2.255");
	addr4(s->elems[1].alo, "203.0.113.9");
	addr4(s->elems[1].ahi, "203.0.113.9");
	assert_string_equal(s->file, "/etc/nfqd/blocked.txt");
	assert_int_equal(s->loc.line, 22);
	assert_int_equal(s->loc.col, 5);
	assert_int_equal(c->hooks[HOOK_INPUT].n_rules, 7);
	for (unsigned i = 0; i < 7; i++)
		assert_string_equal(rule(c, HOOK_INPUT, i)->text, texts[i]);
	assert_int_equal(rule(c, HOOK_INPUT, 0)->loc.line, 31);
	assert_int_equal(rule(c, HOOK_INPUT, 0)->loc.col, 5);
	assert_int_equal(rule(c, HOOK_INPUT, 6)->queue_num, 7);
	conf_free(c);
}

static void test_all_file(void **state)
{
	struct conf *c = NULL;
	char *err = NULL;

	if (load_file(CONF_TEST_DIR "/all.conf", &c, &err))
		fail_msg("%s", err);
	assert_int_equal(c->n_sets, 5);
	assert_int_equal(c->hooks[HOOK_OUTPUT].n_rules, 14);
	assert_int_equal(c->hooks[HOOK_OUTPUT].policy, VERDICT_DROP);
	assert_true(c->hooks[HOOK_PREROUTING].present);
	assert_int_equal(c->hooks[HOOK_PREROUTING].n_rules, 0);
	conf_free(c);
}

static void test_options(void **state)
{
	struct conf *c = load_ok(
		"# all options\n"
		"options {\n"
		"  queues 4; queue-base 10; queue-maxlen 64K;\n"
		"  copy-range 0xfff0; fail-open on; gso off; batch 1024;\n"
		"  rcvbuf 1G; cpu-pin no; stats-file \"/tmp/s\";\n"
		"  stats-interval 3600; control-socket \"/tmp/c.sock\";\n"
		"  log-level debug; user \"u\"; control-group \"g\";\n"
		"  bypass-mark 0x1; incomplete-verdict accept;\n"
		"  orphan-verdict drop;\n"
		"}\n");
	const struct conf_options *o = &c->opts;

	assert_int_equal(o->queues_mode, QUEUES_COUNT);
	assert_int_equal(o->queues_count, 4);
	assert_int_equal(o->queue_base, 10);
	assert_int_equal(o->queue_maxlen, 65536);
	assert_int_equal(o->copy_range, 0xfff0);
	assert_true(o->fail_open);
	assert_false(o->gso);
	assert_int_equal(o->batch, 1024);
	assert_int_equal(o->rcvbuf, 1u << 30);
	assert_false(o->cpu_pin);
	assert_string_equal(o->stats_file, "/tmp/s");
	assert_int_equal(o->stats_interval, 3600);
	assert_string_equal(o->control_socket, "/tmp/c.sock");
	assert_int_equal(o->log_level, LOG_LVL_DEBUG);
	assert_string_equal(o->user, "u");
	assert_string_equal(o->control_group, "g");
	assert_int_equal(o->bypass_mark, 1);
	assert_int_equal(o->incomplete_verdict, VERDICT_ACCEPT);
	assert_int_equal(o->orphan_verdict, VERDICT_DROP);
	conf_free(c);
}

static void queues_are(const char *opt, const uint16_t *want, int n)
{
	char buf[256];
	struct conf *c;
	uint16_t *q;

	snprintf(buf, sizeof(buf), "options { %s }", opt);
	c = load_ok(buf);
	assert_int_equal(conf_queue_numbers(&c->opts, &q), n);
	assert_memory_equal(q, want, (size_t)n * sizeof(*q));
	free(q);
	conf_free(c);
}

static void test_queues(void **state)
{
	static const uint16_t count[] = { 10, 11, 12 };
	static const uint16_t range[] = { 2, 3, 4, 5 };
	static const uint16_t list[] = { 0, 2, 5, 6, 7 };
	static const uint16_t one[] = { 3 };
	struct conf *c = load_ok("options { queues auto; queue-base 100; }");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint16_t *q;

	assert_int_equal(c->opts.queues_mode, QUEUES_AUTO);
	assert_int_equal(conf_queue_numbers(&c->opts, &q), ncpu);
	assert_int_equal(q[0], 100);
	assert_int_equal(q[ncpu - 1], 100 + ncpu - 1);
	free(q);
	conf_free(c);
	queues_are("queues 3; queue-base 10;", count, 3);
	queues_are("queues 2-5; queue-base 10;", range, 4);
	queues_are("queues { 7, 0, 2, 5-7, 6 };", list, 5);
	queues_are("queues { 3 };", one, 1);
	queues_are("queues { 3, };", one, 1);
}

static void test_queue_numbers_errors(void **state)
{
	struct conf_range big = { 0, 65535 }, bad = { 70000, 70000 };
	struct conf_options o = { .queues_mode = QUEUES_LIST,
				  .queue_list = &big, .n_queue_list = 1 };
	uint16_t *q;

	assert_int_equal(conf_queue_numbers(&o, &q), -E2BIG);
	o.queue_list = &bad;
	assert_int_equal(conf_queue_numbers(&o, &q), -ERANGE);
	o.queues_mode = QUEUES_COUNT;
	o.queues_count = 2;
	o.queue_base = 65535;
	assert_int_equal(conf_queue_numbers(&o, &q), -ERANGE);
}

/* "queues auto" is one queue per online CPU: too many from a high
 * queue-base is an error at the queue-base, with the base that fits. */
static void test_queues_auto_range(void **state)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char want[512];

	if (ncpu < 2)
		skip();
	snprintf(want, sizeof(want), "t.conf:1:35: queue-base 65535 with "
		 "queues auto (one queue per online CPU, %ld here) goes past "
		 "queue 65535; use queue-base %ld or lower, or a count: queues "
		 "N\n", ncpu, 65536 - ncpu);
	expect_err("options { queues auto; queue-base 65535; }", want);
}

/* Users and groups are looked up on this system, after the parse; a
 * missing one is still reported where the config names it. */
static void test_env_errors(void **state)
{
	struct conf *c = load_ok("options {\n  user \"no-such-user-nfqd\";\n"
				 "  control-group \"no-such-group-nfqd\";\n}");
	struct diags d = { 0 };
	char *err;

	assert_int_equal(conf_check_env(c, &d), -EINVAL);
	err = diag_join(&d, DIAG_ERROR);
	assert_non_null(err);
	assert_string_equal(err,
		"t.conf:2:8: user \"no-such-user-nfqd\": no such user: create "
		"it (useradd --system --no-create-home no-such-user-nfqd) or "
		"remove option user\n"
		"t.conf:3:17: control-group \"no-such-group-nfqd\": no such "
		"group: create it (groupadd --system no-such-group-nfqd) or "
		"remove option control-group\n");
	free(err);
	diag_free(&d);
	conf_free(c);
}

/* The control socket's directory, as root sees it (nfqd makes it). */
static void test_env_socket_dir(void **state)
{
	struct conf *c;
	struct diags d = { 0 };
	char *err;

	if (geteuid() != 0)
		skip();
	c = load_ok("options {\n  control-socket \"/etc/passwd/c.sock\";\n}");
	assert_int_equal(conf_check_env(c, &d), -EINVAL);
	err = diag_join(&d, DIAG_ERROR);
	assert_non_null(err);
	assert_string_equal(err, "t.conf:2:18: control-socket "
			    "\"/etc/passwd/c.sock\": /etc/passwd is not a "
			    "directory: choose another path\n");
	free(err);
	diag_free(&d);
	conf_free(c);
}

static void test_sets(void **state)
{
	struct conf *c = load_ok(
		"set a { type ipv6_addr; flags interval;\n"
		"  elements = { ::1, 2001:db8::/32, fe80::1-fe80::ff }; }\n"
		"set p { elements = { 22, 8000-8080 }; flags interval;\n"
		"  type inet_service; }\n"
		"set i { type ifname; elements = { \"eth0\", \"wl*\" }; }\n"
		"set m { type mark; elements = { 1, 0xff }; }\n"
		"set e { type ipv4_addr; elements = { }; file \"/x\"; }\n"
		"set d { type domain; flags timeout; timeout 1h; size 100;\n"
		"  elements = { \".a.test\" }; }\n");
	const struct conf_set *s = c->sets;

	assert_int_equal(c->n_sets, 6);
	/* A domain set takes runtime patterns, with timeouts. */
	assert_true(s[5].timeout);
	assert_int_equal(s[5].timeout_ms, 3600000);
	assert_int_equal(s[5].size, 100);
	assert_int_equal(s[0].type, SET_IPV6_ADDR);
	assert_int_equal(s[0].elems[0].family, AF_INET6);
	addr6(s[0].elems[0].alo, "::1");
	addr6(s[0].elems[1].alo, "2001:db8::");
	addr6(s[0].elems[1].ahi, "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");
	addr6(s[0].elems[2].alo, "fe80::1");
	addr6(s[0].elems[2].ahi, "fe80::ff");
	assert_int_equal(s[1].type, SET_INET_SERVICE);
	assert_true(s[1].interval);
	assert_int_equal(s[1].elems[1].lo, 8000);
	assert_int_equal(s[1].elems[1].hi, 8080);
	assert_int_equal(s[2].elems[1].kind, ELEM_STR);
	assert_string_equal(s[2].elems[1].str, "wl*");
	assert_int_equal(s[3].elems[1].lo, 0xff);
	assert_int_equal(s[4].n_elems, 0);
	assert_string_equal(s[4].file, "/x");
	assert_int_equal(s[4].elems[0].loc.line, 0);
	conf_free(c);
}

static void test_match_addr(void **state)
{
	/* One family a rule: "ip saddr ... ip6 daddr ..." never matches. */
	struct conf *c = one_rule("ip saddr != 10.1.2.3/8 "
				  "ip daddr { 1.2.3.4, 5.6.7.8-5.6.7.9 } drop;\n"
				  "\tip6 saddr @s6 "
				  "ip6 daddr ::ffff:1.2.3.4 drop;");
	const struct conf_rule *r = rule(c, HOOK_INPUT, 0);
	const struct conf_match *m = r->matches;

	assert_int_equal(r->n_matches, 2);
	assert_int_equal(m[0].field, MATCH_IP_SADDR);
	assert_true(m[0].negate);
	assert_int_equal(m[0].elems[0].family, AF_INET);
	addr4(m[0].elems[0].alo, "10.0.0.0");
	addr4(m[0].elems[0].ahi, "10.255.255.255");
	assert_int_equal(m[1].field, MATCH_IP_DADDR);
	assert_int_equal(m[1].n_elems, 2);
	addr4(m[1].elems[1].alo, "5.6.7.8");
	addr4(m[1].elems[1].ahi, "5.6.7.9");
	assert_string_equal(r->text, "ip saddr != 10.1.2.3/8 ip daddr "
			    "{ 1.2.3.4, 5.6.7.8-5.6.7.9 } drop");
	/* Each match keeps its own text (for warnings). */
	assert_string_equal(m[1].text, "ip daddr { 1.2.3.4, 5.6.7.8-5.6.7.9 }");
	assert_int_equal(r->verdict, VERDICT_DROP);
	r = rule(c, HOOK_INPUT, 1);
	m = r->matches;
	assert_int_equal(m[0].field, MATCH_IP6_SADDR);
	assert_string_equal(m[0].set_name, "s6");
	assert_int_equal(m[0].set_loc.line, 8);
	assert_int_equal(m[0].set_loc.col, 12);
	assert_int_equal(m[1].field, MATCH_IP6_DADDR);
	addr6(m[1].elems[0].alo, "::ffff:1.2.3.4");
	assert_string_equal(m[0].text, "ip6 saddr @s6");
	conf_free(c);
}

static void test_match_l4(void **state)
{
	struct conf *c = one_rule("ip protocol { tcp, udp, 47 } "
				  "meta l4proto != sctp tcp sport @sp "
				  "tcp dport != { 1, 2-3 } "
				  "tcp flags syn,ack accept;\n"
				  "udp sport 53 udp dport 0x10 accept;\n"
				  "meta l4proto { icmpv6, ipv6-icmp } "
				  "icmpv6 type { nd-router-advert, 1 } "
				  "accept;\n"
				  "ip protocol icmp icmp type echo-request "
				  "accept;");
	const struct conf_rule *r = rule(c, HOOK_INPUT, 0);
	const struct conf_match *m = r->matches;

	assert_int_equal(m[0].field, MATCH_IP_PROTOCOL);
	assert_int_equal(m[0].n_elems, 3);
	assert_int_equal(m[0].elems[0].lo, 6);
	assert_int_equal(m[0].elems[1].lo, 17);
	assert_int_equal(m[0].elems[2].lo, 47);
	assert_int_equal(m[1].field, MATCH_META_L4PROTO);
	assert_true(m[1].negate);
	assert_int_equal(m[1].elems[0].lo, 132);
	assert_int_equal(m[2].field, MATCH_TCP_SPORT);
	assert_string_equal(m[2].set_name, "sp");
	assert_int_equal(m[3].field, MATCH_TCP_DPORT);
	assert_int_equal(m[3].elems[1].lo, 2);
	assert_int_equal(m[3].elems[1].hi, 3);
	assert_int_equal(m[4].field, MATCH_TCP_FLAGS);
	assert_int_equal(m[4].flags, TCPF_SYN | TCPF_ACK);
	assert_string_equal(r->text, "ip protocol { tcp, udp, 47 } "
			    "meta l4proto != sctp tcp sport @sp "
			    "tcp dport != { 1, 2-3 } tcp flags syn,ack accept");
	r = rule(c, HOOK_INPUT, 1);
	assert_int_equal(r->matches[0].field, MATCH_UDP_SPORT);
	assert_int_equal(r->matches[1].field, MATCH_UDP_DPORT);
	assert_int_equal(r->matches[1].elems[0].lo, 16);
	r = rule(c, HOOK_INPUT, 2);
	assert_int_equal(r->matches[0].elems[1].lo, 58);
	assert_int_equal(r->matches[1].field, MATCH_ICMPV6_TYPE);
	assert_int_equal(r->matches[1].elems[0].lo, 134);
	assert_int_equal(r->matches[1].elems[1].lo, 1);
	r = rule(c, HOOK_INPUT, 3);
	assert_int_equal(r->matches[1].field, MATCH_ICMP_TYPE);
	assert_int_equal(r->matches[1].elems[0].lo, 8);
	conf_free(c);
}

static void test_match_meta(void **state)
{
	struct conf *c = one_rule("iifname { \"eth*\", \"lo\" } "
				  "oifname != @si meta mark 0x10/0xff "
				  "meta length 100-200 meta skuid 0 "
				  "meta skgid 1000 repeat;\n"
				  "meta mark @sm ct state new,established "
				  "limit rate 10/minute burst 5 accept;\n"
				  "oifname eth0 meta mark 7 ct state invalid "
				  "limit rate 5/second drop;");
	const struct conf_rule *r = rule(c, HOOK_INPUT, 0);
	const struct conf_match *m = r->matches;

	assert_int_equal(m[0].field, MATCH_IIFNAME);
	assert_string_equal(m[0].elems[0].str, "eth*");
	assert_string_equal(m[0].elems[1].str, "lo");
	assert_int_equal(m[1].field, MATCH_OIFNAME);
	assert_true(m[1].negate);
	assert_string_equal(m[1].set_name, "si");
	assert_int_equal(m[2].field, MATCH_META_MARK);
	assert_int_equal(m[2].elems[0].lo, 0x10);
	assert_int_equal(m[2].mask, 0xff);
	assert_int_equal(m[3].field, MATCH_META_LENGTH);
	assert_int_equal(m[3].elems[0].hi, 200);
	assert_int_equal(m[4].field, MATCH_META_SKUID);
	assert_int_equal(m[5].field, MATCH_META_SKGID);
	assert_int_equal(m[5].elems[0].lo, 1000);
	assert_int_equal(r->verdict, VERDICT_REPEAT);
	r = rule(c, HOOK_INPUT, 1);
	m = r->matches;
	assert_string_equal(m[0].set_name, "sm");
	assert_int_equal(m[1].field, MATCH_CT_STATE);
	assert_int_equal(m[1].flags, CT_STATE_NEW | CT_STATE_ESTABLISHED);
	assert_int_equal(m[2].field, MATCH_LIMIT);
	assert_int_equal(m[2].rate, 10);
	assert_int_equal(m[2].per_seconds, 60);
	assert_int_equal(m[2].burst, 5);
	assert_string_equal(r->text, "meta mark @sm ct state new,established "
			    "limit rate 10/minute burst 5 accept");
	r = rule(c, HOOK_INPUT, 2);
	m = r->matches;
	assert_string_equal(m[0].elems[0].str, "eth0");
	assert_int_equal(m[1].mask, 0xffffffff);
	assert_int_equal(m[2].flags, CT_STATE_INVALID);
	assert_int_equal(m[3].per_seconds, 1);
	assert_int_equal(m[3].burst, 0);
	conf_free(c);
	/* meta length has 32 bits, as nft's (GSO, BIG TCP). */
	c = one_rule("meta length 65536-4294967295 drop;");
	m = rule(c, HOOK_INPUT, 0)->matches;
	assert_int_equal(m[0].elems[0].lo, 65536);
	assert_int_equal(m[0].elems[0].hi, 4294967295u);
	conf_free(c);
}

/* Every rate unit and form nft accepts in packet mode. */
static void test_match_limit(void **state)
{
	struct conf *c = one_rule("limit rate over 3/hour burst 2 packets "
				  "accept;\n"
				  "limit rate 1/day drop;\n"
				  "limit rate 7/week burst 9 drop;\n"
				  "limit rate 1/second ip saddr 10.0.0.1 drop;");
	const struct conf_rule *r = rule(c, HOOK_INPUT, 0);
	const struct conf_match *m = r->matches;

	assert_int_equal(m[0].field, MATCH_LIMIT);
	assert_true(m[0].negate);
	assert_int_equal(m[0].rate, 3);
	assert_int_equal(m[0].per_seconds, 3600);
	assert_int_equal(m[0].burst, 2);
	assert_string_equal(r->text, "limit rate over 3/hour burst 2 packets "
			    "accept");
	m = rule(c, HOOK_INPUT, 1)->matches;
	assert_false(m[0].negate);
	assert_int_equal(m[0].per_seconds, 86400);
	assert_int_equal(m[0].burst, 0);
	m = rule(c, HOOK_INPUT, 2)->matches;
	assert_int_equal(m[0].rate, 7);
	assert_int_equal(m[0].per_seconds, 604800);
	assert_int_equal(m[0].burst, 9);
	r = rule(c, HOOK_INPUT, 3);
	assert_int_equal(r->n_matches, 2);
	assert_int_equal(r->matches[1].field, MATCH_IP_SADDR);
	conf_free(c);
}

/* "per KEY" with main's limit words: before or after the burst, with
 * over, as a keyword that ends the limit's words. */
static void test_match_limit_per(void **state)
{
	struct conf *c = one_rule("limit rate 3/minute per ip saddr accept;\n"
				  "limit rate over 10/second per tcp dport "
				  "burst 20 packets drop;\n"
				  "limit rate 1/hour burst 2 per ip6 saddr "
				  "ip6 daddr ::1 drop;");
	const struct conf_rule *r = rule(c, HOOK_INPUT, 0);
	const struct conf_match *m = r->matches;

	assert_true(m[0].per);
	assert_int_equal(m[0].per_key, MATCH_IP_SADDR);
	assert_int_equal(m[0].rate, 3);
	assert_int_equal(m[0].per_seconds, 60);
	assert_int_equal(m[0].burst, 0);
	assert_string_equal(r->text, "limit rate 3/minute per ip saddr accept");
	r = rule(c, HOOK_INPUT, 1);
	m = r->matches;
	assert_true(m[0].negate);
	assert_int_equal(m[0].per_key, MATCH_TCP_DPORT);
	assert_int_equal(m[0].burst, 20);
	assert_string_equal(r->text, "limit rate over 10/second per tcp dport "
			    "burst 20 packets drop");
	r = rule(c, HOOK_INPUT, 2);
	assert_int_equal(r->n_matches, 2);
	assert_int_equal(r->matches[0].per_key, MATCH_IP6_SADDR);
	assert_int_equal(r->matches[0].burst, 2);
	assert_int_equal(r->matches[1].field, MATCH_IP6_DADDR);
	conf_free(c);
}

static void test_statements(void **state)
{
	struct conf *c = load_ok(
		"hook forward {\n"
		"  policy drop;\n"
		"  counter accept;\n"
		"  tcp dport 22 counter log prefix \"ssh: \" mark set 0x10 "
		"bypass accept;\n"
		"  log drop; mark set 4294967295 repeat;\n"
		"  queue num 3; queue 65535;\n"
		"}\n"
		"hook postrouting { policy accept; }\n");
	const struct conf_rule *r;

	assert_int_equal(c->hooks[HOOK_FORWARD].policy, VERDICT_DROP);
	assert_true(c->hooks[HOOK_POSTROUTING].present);
	assert_false(c->hooks[HOOK_INPUT].present);
	r = rule(c, HOOK_FORWARD, 0);
	assert_int_equal(r->n_matches, 0);
	assert_true(r->counter);
	assert_string_equal(r->text, "counter accept");
	r = rule(c, HOOK_FORWARD, 1);
	assert_true(r->counter && r->log && r->mark_set && r->bypass);
	assert_string_equal(r->log_prefix, "ssh: ");
	assert_int_equal(r->mark, 0x10);
	assert_string_equal(r->text, "tcp dport 22 counter "
			    "log prefix \"ssh: \" mark set 0x10 bypass accept");
	r = rule(c, HOOK_FORWARD, 2);
	assert_true(r->log);
	assert_null(r->log_prefix);
	assert_false(r->counter);
	r = rule(c, HOOK_FORWARD, 3);
	assert_int_equal(r->mark, 0xffffffff);
	r = rule(c, HOOK_FORWARD, 4);
	assert_int_equal(r->verdict, VERDICT_QUEUE);
	assert_int_equal(r->queue_num, 3);
	assert_string_equal(r->text, "queue 3");
	assert_int_equal(rule(c, HOOK_FORWARD, 5)->queue_num, 65535);
	conf_free(c);
}

static void test_syntax_bits(void **state)
{
	/* Comments, empty statements, spacing and hex all parse. */
	struct conf *c = load_ok("# c\n\nhook input{tcp dport 1 - 0x10 "
				 "drop;}# end");
	const struct conf_rule *r = rule(c, HOOK_INPUT, 0);

	assert_string_equal(r->text, "tcp dport 1-0x10 drop");
	assert_int_equal(r->matches[0].elems[0].hi, 16);
	assert_int_equal(r->loc.line, 3);
	assert_int_equal(r->loc.col, 12);
	conf_free(c);
	c = load_ok("");
	assert_int_equal(c->opts.batch, 64);
	conf_free(c);
}

/* ---- errors ---- */

static void test_missing_file(void **state)
{
	struct conf *c = NULL;
	char *err = NULL;

	assert_int_equal(load_file("/nonexistent/nfqd.conf", &c, &err),
			 -ENOENT);
	assert_null(c);
	assert_string_equal(err, "/nonexistent/nfqd.conf: cannot open: "
			    "No such file or directory\n");
	free(err);
}

static void test_errors_file(void **state)
{
	struct conf *c = NULL;
	char *err = NULL;

	assert_int_equal(chdir(CONF_TEST_DIR), 0);
	assert_int_equal(load_file("errors.conf", &c, &err), -EINVAL);
	assert_string_equal(err,
		"errors.conf:3:5: unknown option \"queue-maxlenn\"; expected "
		"one of: queues, queue-base, queue-maxlen, copy-range, "
		"fail-open, gso, batch, rcvbuf, cpu-pin, stats-file, "
		"stats-interval, control-socket, log-level, user, "
		"control-group, bypass-mark, incomplete-verdict, "
		"orphan-verdict, flow-table-size, flow-timeout, "
		"set-state-file, dns-ports\n"
		"errors.conf:4:11: batch 0 out of range; expected 1..1024\n"
		"errors.conf:6:1: syntax error, unexpected '}', expecting ';'\n"
		"errors.conf:9:40: syntax error, unexpected '}', "
		"expecting ';'\n"
		"errors.conf:11:14: unknown set \"blockd\"\n");
	free(err);
}

static void test_too_many_errors(void **state)
{
	char buf[4096] = "hook input {\n";
	struct conf *c = NULL;
	char *err = NULL, *p;
	unsigned lines = 0;

	for (int i = 0; i < 30; i++)
		strcat(buf, "tcp dport 70000 drop;\n");
	strcat(buf, "}\n");
	assert_int_equal(load_buf("t.conf", buf, strlen(buf), &c,
					  &err), -EINVAL);
	for (p = err; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(lines, NFQD_MAX_ERRORS + 1);
	assert_non_null(strstr(err, "t.conf:2:11: port 70000 out of range"));
	assert_non_null(strstr(err, "t.conf:22:11: too many errors, "
			       "stopping\n"));
	free(err);
}

struct err_case {
	const char *in, *want;
};

static const struct err_case err_cases[] = {
	/* syntax */
	{ "options { batch 1 }",
	  "t.conf:1:19: syntax error, unexpected '}', expecting ';'\n" },
	{ "hook input { tcp dport 22 accept }",
	  "t.conf:1:34: syntax error, unexpected '}', expecting ';'\n" },
	{ "hook input {\n  tcp dport 22 accept;\n",
	  "t.conf:3:1: syntax error, unexpected end of file, expecting "
	  "'}'\n" },
	{ "hook input { x; }",
	  "t.conf:1:14: unknown word \"x\"; expected a match, a statement "
	  "(counter, log, mark set, bypass) or a verdict (accept, drop, "
	  "repeat, queue N)\n" },
	{ "hook input { tcp dport 23 dro; }",
	  "t.conf:1:27: unknown word \"dro\"; expected a match, a statement "
	  "(counter, log, mark set, bypass) or a verdict (accept, drop, "
	  "repeat, queue N)\n" },
	{ "hook input { tcp dport 23 drop extra; }",
	  "t.conf:1:32: syntax error, unexpected name \"extra\", "
	  "expecting ';'\n" },
	{ "hook input { ip saddr 1.2.3.4 \"x\" drop; }",
	  "t.conf:1:31: syntax error, unexpected string \"x\", expecting "
	  "';'\n" },
	{ "hooks input {}",
	  "t.conf:1:1: syntax error, unexpected name \"hooks\", expecting "
	  "end of file or options or set or hook\n" },
	{ "hook input { tcp dport 1 ^ drop; }",
	  "t.conf:1:26: unexpected character '^'\n" },
	{ "hook input { ip saddr 1.2.3 drop; }",
	  "t.conf:1:23: invalid number or address \"1.2.3\"\n" },
	{ "options { user \"nfqd; }",
	  "t.conf:1:16: unterminated string\n" },
	{ "hook input { ip saddr @ drop; }",
	  "t.conf:1:23: expected a set name after '@'\n" },
	/* options */
	{ "options { queue-maxlenn 5; }",
	  "t.conf:1:11: unknown option \"queue-maxlenn\"; expected one of: "
	  "queues, queue-base, queue-maxlen, copy-range, fail-open, gso, "
	  "batch, rcvbuf, cpu-pin, stats-file, stats-interval, "
	  "control-socket, log-level, user, control-group, bypass-mark, "
	  "incomplete-verdict, orphan-verdict, flow-table-size, "
	  "flow-timeout, set-state-file, dns-ports\n" },
	{ "options { incomplete-verdict repeat; }",
	  "t.conf:1:30: \"incomplete-verdict\" expects accept or drop\n" },
	{ "options { incomplete-verdict maybe; }",
	  "t.conf:1:30: \"incomplete-verdict\" expects accept or drop\n" },
	{ "options { orphan-verdict queue 3; }",
	  "t.conf:1:26: \"orphan-verdict\" expects repeat, accept or drop\n" },
	{ "options { batch 2; batch 3; }",
	  "t.conf:1:20: duplicate option \"batch\"\n" },
	{ "options { copy-range 65532; }",
	  "t.conf:1:22: copy-range 65532 out of range; expected 0..65531\n" },
	{ "options { queue-maxlen 0; }",
	  "t.conf:1:24: queue-maxlen 0 out of range; expected 1..1048576\n" },
	{ "options { queue-maxlen 2M; }",
	  "t.conf:1:24: queue-maxlen 2M out of range; expected 1..1048576\n" },
	{ "options { batch 1025; }",
	  "t.conf:1:17: batch 1025 out of range; expected 1..1024\n" },
	{ "options { batch 1K; }",
	  "t.conf:1:17: \"batch\" takes no K/M/G suffix\n" },
	{ "options { batch yes; }",
	  "t.conf:1:17: \"batch\" expects a number 1..1024\n" },
	{ "options { stats-interval 0; }",
	  "t.conf:1:26: stats-interval 0 out of range; expected 1..3600\n" },
	{ "options { rcvbuf 4095; }",
	  "t.conf:1:18: rcvbuf 4095 out of range; expected 4096..1G\n" },
	{ "options { rcvbuf 2G; }",
	  "t.conf:1:18: rcvbuf 2G out of range; expected 4096..1G\n" },
	{ "options { queue-base 65536; }",
	  "t.conf:1:22: queue-base 65536 out of range; expected 0..65535\n" },
	{ "options { bypass-mark 0x100000000; }",
	  "t.conf:1:23: bypass-mark 0x100000000 out of range; expected "
	  "0..0xffffffff\n" },
	{ "options { log-level loud; }",
	  "t.conf:1:21: \"log-level\" expects one of: error, warning, info, "
	  "debug\n" },
	{ "options { gso maybe; }",
	  "t.conf:1:15: \"gso\" expects yes, no, on or off\n" },
	{ "options { user nfqd; }",
	  "t.conf:1:16: \"user\" expects a non-empty string in double "
	  "quotes\n" },
	{ "options { queues 0; }",
	  "t.conf:1:18: queues 0 out of range; expected a count 1..1024\n" },
	{ "options { queues 1025; }",
	  "t.conf:1:18: queues 1025 out of range; expected a count "
	  "1..1024\n" },
	{ "options { queues 65536-65537; }",
	  "t.conf:1:18: queue 65536 out of range; expected 0..65535\n" },
	{ "options { queues { 1, 7-5 }; }",
	  "t.conf:1:23: bad range 7-5: 7 is above 5\n" },
	{ "options { queues 0-1024; }",
	  "t.conf:1:18: too many queues; at most 1024\n" },
	{ "options { queues lots; }",
	  "t.conf:1:18: \"queues\" expects auto, a count N, a range A-B or a "
	  "list { 0, 2, 5-7 }\n" },
	{ "options { queues 8; queue-base 65530; }",
	  "t.conf:1:18: queues 8 from queue-base 65530 go past queue "
	  "65535\n" },
	/* sets */
	{ "set s { elements = { 1.2.3.4 }; }",
	  "t.conf:1:5: set \"s\" has no type; add \"type ipv4_addr;\" (or "
	  "ipv6_addr, inet_service, ifname, mark, domain)\n" },
	{ "set s { type ipv5_addr; }",
	  "t.conf:1:14: unknown set type \"ipv5_addr\"; expected one of: "
	  "ipv4_addr, ipv6_addr, inet_service, ifname, mark, domain\n" },
	{ "set s { type mark; }\nset s { type mark; }",
	  "t.conf:2:5: duplicate set \"s\" (first defined at 1:5)\n" },
	{ "set s { type ipv4_addr; elements = { 10.0.0.0/8 }; }",
	  "t.conf:1:38: prefix 10.0.0.0/8 needs \"flags interval\" in set "
	  "\"s\"\n" },
	{ "set s { type inet_service; elements = { 1-2 }; }",
	  "t.conf:1:41: range 1-2 needs \"flags interval\" in set \"s\"\n" },
	{ "set s { type ipv4_addr; elements = { ::1 }; }",
	  "t.conf:1:38: ::1 is an IPv6 address; expected an IPv4 address\n" },
	{ "set s { type inet_service; elements = { 65536 }; }",
	  "t.conf:1:41: port 65536 out of range; expected 0..65535\n" },
	{ "set s { type ifname; elements = { \"a234567890123456\" }; }",
	  "t.conf:1:35: bad interface name \"a234567890123456\"; expected "
	  "1..15 characters, '*' only at the end\n" },
	{ "set s { type ipv4_addr; flags constant; }",
	  "t.conf:1:31: unknown set flag \"constant\"; expected interval or "
	  "timeout\n" },
	{ "set s { type ipv4_addr; depth 5; }",
	  "t.conf:1:25: unknown set property \"depth\"; expected one of: type, "
	  "flags, elements, file, size, timeout\n" },
	{ "set s { type ipv4_addr; size 0; }",
	  "t.conf:1:30: \"size\" expects a number of elements from 1 to "
	  "16777216\n" },
	{ "set s { type ipv4_addr; flags timeout; timeout 10; }",
	  "t.conf:1:48: \"timeout\" expects a duration: 500ms, 30s, 10m, 1h "
	  "or 2d; at most 366d\n" },
	{ "set s { type ipv4_addr; flags timeout; timeout 367d; }",
	  "t.conf:1:48: \"timeout\" expects a duration: 500ms, 30s, 10m, 1h "
	  "or 2d; at most 366d\n" },
	{ "set s { type ipv4_addr; timeout 10s; }",
	  "t.conf:1:5: set \"s\" has a timeout but not \"flags timeout;\"; "
	  "add it\n" },
	{ "set dt { type domain; timeout 10s; }",
	  "t.conf:1:5: set \"dt\" has a timeout but not \"flags timeout;\"; "
	  "add it\n" },
	{ "set i { type ifname; flags interval, timeout; }",
	  "t.conf:1:38: set \"i\" has type ifname, which takes no runtime "
	  "elements: \"flags timeout\" does nothing; remove it\n" },
	{ "set d { type domain; flags interval; }",
	  "t.conf:1:28: set \"d\" has type domain, whose elements are never "
	  "prefixes or ranges: \"flags interval\" does nothing; remove it\n" },
	{ "set d { timeout 1h; type ifname; }",
	  "t.conf:1:9: set \"d\" has type ifname, which takes no runtime "
	  "elements: \"timeout\" does nothing; remove it\n" },
	{ "set s { type ipv4_addr; elements { 1.2.3.4 }; }",
	  "t.conf:1:25: expected '=' after \"elements\"\n" },
	{ "set s { type ipv4_addr; type ipv4_addr; }",
	  "t.conf:1:25: duplicate \"type\" in set \"s\"\n" },
	/* hooks */
	{ "hook input { }\nhook input { }",
	  "t.conf:2:6: duplicate hook \"input\" (first at 1:6)\n" },
	{ "hook inpt { }",
	  "t.conf:1:6: unknown hook \"inpt\"; expected one of: prerouting, "
	  "input, forward, output, postrouting\n" },
	{ "hook input { policy repeat; }",
	  "t.conf:1:21: bad policy \"repeat\"; expected accept or drop\n" },
	{ "hook input { policy queue 1; }",
	  "t.conf:1:21: bad policy \"queue 1\"; expected accept or drop\n" },
	{ "hook input { policy drop; policy accept; }",
	  "t.conf:1:34: duplicate policy\n" },
	{ "hook input { policy allow; }",
	  "t.conf:1:21: bad policy \"allow\"; expected accept or drop\n" },
	/* rules: order and verdicts */
	{ "hook input { counter; }",
	  "t.conf:1:21: missing verdict; expected one of: accept, drop, "
	  "repeat, queue N\n" },
	{ "hook input { drop accept; }",
	  "t.conf:1:19: syntax error, unexpected accept, expecting ';'\n" },
	{ "hook input { drop counter; }",
	  "t.conf:1:19: syntax error, unexpected counter, expecting ';'\n" },
	{ "hook input { ; }",
	  "t.conf:1:14: syntax error, unexpected ';', expecting '}'\n" },
	{ "hook input { bypass drop; }",
	  "t.conf:1:14: \"bypass\" is only allowed before \"accept\"\n" },
	{ "hook input { counter tcp dport 1 accept; }",
	  "t.conf:1:22: \"tcp dport\" out of order; write matches, then "
	  "counter, log, mark set, bypass (add/update @set anywhere among "
	  "them), then the verdict\n" },
	{ "hook input { mark set 1 counter accept; }",
	  "t.conf:1:25: \"counter\" out of order; write matches, then "
	  "counter, log, mark set, bypass (add/update @set anywhere among "
	  "them), then the verdict\n" },
	{ "set s { type ipv4_addr; } hook input { add @s { ip saddr } "
	  "tcp dport 1 accept; }",
	  "t.conf:1:60: \"tcp dport\" out of order; write matches, then "
	  "counter, log, mark set, bypass (add/update @set anywhere among "
	  "them), then the verdict\n" },
	{ "set s { type ipv4_addr; } hook input { add @s { ip saddr } "
	  "update @s { ip saddr } accept; }",
	  "t.conf:1:67: duplicate \"update @set\"\n" },
	{ "set s { type ipv4_addr; } hook input { add @s { tcp flags } drop; }",
	  "t.conf:1:53: \"tcp flags\" cannot fill a set; expected ip saddr, "
	  "ip daddr, ip6 saddr, ip6 daddr, tcp sport, tcp dport, udp sport or "
	  "udp dport\n" },
	{ "hook input { limit rate 3/minute per tcp flags accept; }",
	  "t.conf:1:42: \"tcp flags\" cannot key a limit; expected ip saddr, "
	  "ip daddr, ip6 saddr, ip6 daddr, tcp sport, tcp dport, udp sport or "
	  "udp dport\n" },
	{ "hook input { limit rate 3/minute per ip saddr burst 0 accept; }",
	  "t.conf:1:53: burst 0 out of range; expected 1..4294967295 (nft "
	  "refuses a bucket of 0 packets)\n" },
	{ "set s { type ipv4_addr; } hook input { add @s { ip saddr . tcp "
	  "dport } drop; }",
	  "t.conf:1:58: concatenations (ip saddr . tcp dport) are not "
	  "supported: a set, add @set and limit ... per take one key; write "
	  "one (ip saddr)\n"
	  "t.conf:1:72: syntax error, unexpected drop, expecting end of file "
	  "or options or set or hook\n" },
	{ "hook input { limit rate 3/minute per ip saddr . tcp dport accept; }",
	  "t.conf:1:47: concatenations (ip saddr . tcp dport) are not "
	  "supported: a set, add @set and limit ... per take one key; write "
	  "one (ip saddr)\n" },
	{ "hook input { counter counter accept; }",
	  "t.conf:1:22: duplicate \"counter\"\n" },
	/* rules: values */
	{ "hook input { tcp dport 65536 drop; }",
	  "t.conf:1:24: port 65536 out of range; expected 0..65535\n" },
	{ "hook input { tcp dport 9-1 drop; }",
	  "t.conf:1:24: bad range 9-1: 9 is above 1\n" },
	{ "hook input { tcp dport { 1, x } drop; }",
	  "t.conf:1:29: expected a port number, got \"x\"\n" },
	{ "hook input { tcp dport 1, 2 drop; }",
	  "t.conf:1:27: unexpected ','; write a list as { a, b }\n" },
	{ "hook input { tcp dport { } drop; }",
	  "t.conf:1:24: empty list\n" },
	{ "hook input { ip saddr 10.0.0.0/33 drop; }",
	  "t.conf:1:23: bad prefix length /33; expected 0..32\n" },
	{ "hook input { ip6 saddr ::/129 drop; }",
	  "t.conf:1:24: bad prefix length /129; expected 0..128\n" },
	{ "hook input { ip saddr 10.0.0.9-10.0.0.1 drop; }",
	  "t.conf:1:23: bad range 10.0.0.9-10.0.0.1: 10.0.0.9 is above "
	  "10.0.0.1\n" },
	{ "hook input { ip saddr 2001:db8::1 drop; }",
	  "t.conf:1:23: 2001:db8::1 is an IPv6 address; expected an IPv4 "
	  "address\n" },
	{ "hook input { ip6 daddr 10.0.0.1 drop; }",
	  "t.conf:1:24: 10.0.0.1 is an IPv4 address; expected an IPv6 "
	  "address\n" },
	{ "hook input { ip saddr 1.2.3.256 drop; }",
	  "t.conf:1:23: invalid IPv4 address \"1.2.3.256\"\n" },
	{ "hook input { ip6 saddr 1:::2 drop; }",
	  "t.conf:1:24: invalid IPv6 address \"1:::2\"\n" },
	{ "hook input { meta mark 0x100000000 drop; }",
	  "t.conf:1:24: mark 0x100000000 out of range; expected "
	  "0..0xffffffff\n" },
	{ "hook input { meta mark 1/x drop; }",
	  "t.conf:1:26: bad mark mask \"x\"; expected 0..0xffffffff\n" },
	{ "hook input { mark set 0x100000000 accept; }",
	  "t.conf:1:23: mark 0x100000000 out of range; expected "
	  "0..0xffffffff\n" },
	{ "hook input { queue 65536; }",
	  "t.conf:1:20: queue 65536 out of range; expected 0..65535\n" },
	{ "hook input { limit rate 0/second accept; }",
	  "t.conf:1:25: limit rate 0 out of range; expected "
	  "1..4294967295\n" },
	{ "hook input { limit rate 5/fortnight accept; }",
	  "t.conf:1:25: expected a rate N/second, N/minute, N/hour, N/day or "
	  "N/week\n" },
	{ "hook input { limit rate 5/second bust 3 accept; }",
	  "t.conf:1:34: unexpected \"bust\"; expected burst\n" },
	{ "hook input { limit rate 5/second burst 0 accept; }",
	  "t.conf:1:40: burst 0 out of range; expected 1..4294967295 (nft "
	  "refuses a bucket of 0 packets)\n" },
	{ "hook input { limit rate 5/second burst accept; }",
	  "t.conf:1:34: expected a number of packets after burst\n" },
	{ "hook input { limit rate 5/second burst 2 packets 3 accept; }",
	  "t.conf:1:50: unexpected \"3\" after the limit\n" },
	{ "hook input { limit 5/second accept; }",
	  "t.conf:1:20: unexpected \"5/second\"; expected rate\n" },
	{ "hook input { limit rate over accept; }",
	  "t.conf:1:25: expected a rate N/second, N/minute, N/hour, N/day or "
	  "N/week after \"over\"\n" },
	{ "hook input { limit rate 1/week burst 20000 accept; }",
	  "t.conf:1:25: limit rate 1/week burst 20000: a bucket of 20000 "
	  "packets at 1 a week is more than nft can hold (292 years); "
	  "use a smaller burst or a faster rate\n" },
	{ "hook input { tcp flags syn,foo accept; }",
	  "t.conf:1:28: unknown tcp flag \"foo\"; expected one of: syn, ack, "
	  "fin, rst, psh, urg\n" },
	{ "hook input { ct state new,old accept; }",
	  "t.conf:1:27: unknown ct state \"old\"; expected one of: new, "
	  "established, related, invalid\n" },
	{ "hook input { ip protocol gre accept; }",
	  "t.conf:1:26: unknown protocol \"gre\"; expected one of: icmp, tcp, "
	  "udp, icmpv6, ipv6-icmp, sctp, or a number 0..255\n" },
	{ "hook input { icmp type ping accept; }",
	  "t.conf:1:24: unknown icmp type \"ping\"; expected one of: "
	  "echo-reply, destination-unreachable, source-quench, redirect, "
	  "echo-request, router-advertisement, router-solicitation, "
	  "time-exceeded, parameter-problem, timestamp-request, "
	  "timestamp-reply, info-request, info-reply, address-mask-request, "
	  "address-mask-reply, or a number 0..255\n" },
	{ "hook input { icmpv6 type 256 accept; }",
	  "t.conf:1:26: icmpv6 type 256 out of range; expected 0..255\n" },
	{ "hook input { iifname \"a*b\" accept; }",
	  "t.conf:1:22: bad interface name \"a*b\"; expected 1..15 "
	  "characters, '*' only at the end\n" },
	{ "hook input { ip frob 1 accept; }",
	  "t.conf:1:17: unknown \"ip\" field \"frob\"; expected one of: "
	  "saddr, daddr, protocol\n" },
	{ "hook input { log level \"x\" accept; }",
	  "t.conf:1:18: unexpected \"level\"; expected prefix\n" },
	/* rules: sets and protocols */
	{ "hook input { ip saddr @nope drop; }",
	  "t.conf:1:23: unknown set \"nope\"\n" },
	{ "set p { type inet_service; }\nhook input { ip saddr @p drop; }",
	  "t.conf:2:23: set \"p\" has type inet_service; \"ip saddr\" needs a "
	  "set of type ipv4_addr\n" },
	{ "set p { type ipv4_addr; }\nhook input { ip6 saddr @p drop; }",
	  "t.conf:2:24: set \"p\" has type ipv4_addr; \"ip6 saddr\" needs a "
	  "set of type ipv6_addr\n" },
	{ "set p { type ipv4_addr; }\nhook input { tcp dport @p drop; }",
	  "t.conf:2:24: set \"p\" has type ipv4_addr; \"tcp dport\" needs a "
	  "set of type inet_service\n" },
	{ "set p { type mark; }\nhook input { iifname @p drop; }",
	  "t.conf:2:22: set \"p\" has type mark; \"iifname\" needs a set of "
	  "type ifname\n" },
	{ "set p { type ifname; }\nhook input { meta mark @p drop; }",
	  "t.conf:2:24: set \"p\" has type ifname; \"meta mark\" needs a set "
	  "of type mark\n" },
	{ "hook input { meta length 4294967296 drop; }",
	  "t.conf:1:26: length 4294967296 out of range; expected "
	  "0..0xffffffff\n" },
	{ "set p { type ipv4_addr; }\nhook input { meta length @p drop; }",
	  "t.conf:2:26: a set cannot be used with \"meta length\"\n" },
	{ "hook input { meta l4proto icmp tcp dport 22 accept; }",
	  "t.conf:1:32: \"tcp dport\" needs protocol tcp, but \"meta l4proto "
	  "icmp\" excludes it\n" },
	{ "hook input { ip protocol { 1, 17 } tcp sport 22 accept; }",
	  "t.conf:1:36: \"tcp sport\" needs protocol tcp, but \"ip protocol "
	  "{ 1, 17 }\" excludes it\n" },
	{ "hook input { ip protocol != udp udp dport 53 accept; }",
	  "t.conf:1:33: \"udp dport\" needs protocol udp, but \"ip protocol "
	  "!= udp\" excludes it\n" },
	{ "hook input { tcp dport 1 udp dport 2 accept; }",
	  "t.conf:1:26: \"udp dport\" contradicts \"tcp dport\": a packet is "
	  "not both tcp and udp\n" },
	{ "hook input { ip saddr 10.0.0.1 ip6 daddr ::1 drop; }",
	  "t.conf:1:32: \"ip6 daddr\" contradicts \"ip saddr\": a packet is "
	  "not both IPv4 and IPv6\n" },
	{ "hook input { ip protocol tcp ip6 saddr ::1 drop; }",
	  "t.conf:1:30: \"ip6 saddr\" contradicts \"ip protocol\": a packet "
	  "is not both IPv4 and IPv6\n" },
	{ "hook input { icmp type 8 ip6 saddr ::1 drop; }",
	  "t.conf:1:26: \"ip6 saddr\" contradicts \"icmp type\": a packet is "
	  "not both IPv4 and IPv6\n" },
	{ "hook input { icmpv6 type 1 ip daddr 10.0.0.1 drop; }",
	  "t.conf:1:28: \"ip daddr\" contradicts \"icmpv6 type\": a packet is "
	  "not both IPv6 and IPv4\n" },
	{ "hook input { icmp type 8 icmpv6 type 1 drop; }",
	  "t.conf:1:26: \"icmpv6 type\" contradicts \"icmp type\": a packet "
	  "is not both icmp and icmpv6\n" },
	{ "hook input { http host \"a.test\" udp dport 80 drop; }",
	  "t.conf:1:33: \"udp dport\" contradicts \"http host\": a packet is "
	  "not both tcp and udp\n" },
	{ "hook input { dns qname \"a.test\" meta l4proto icmp drop; }",
	  "t.conf:1:14: \"dns qname\" needs protocol tcp or udp, but \"meta "
	  "l4proto icmp\" excludes it\n" },
	{ "hook input { dns qname \"a.test\" tls sni \"b.test\" drop; }",
	  "t.conf:1:33: \"tls sni\" contradicts \"dns qname\": a packet is "
	  "not both DNS and TLS\n" },
	{ "hook input { http host \"a.test\" tls ech drop; }",
	  "t.conf:1:33: \"tls ech\" contradicts \"http host\": a packet is "
	  "not both HTTP and TLS\n" },
	{ "hook input { meta l4proto tcp icmp type 8 accept; }",
	  "t.conf:1:31: \"icmp type\" needs protocol icmp, but \"meta l4proto "
	  "tcp\" excludes it\n" },
};

/* Every case is tried and every mismatch printed before failing. */
static void test_error_cases(void **state)
{
	unsigned bad = 0;

	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *t = &err_cases[i];
		struct conf *c = NULL;
		char *err = NULL;
		int rc = load_buf("t.conf", t->in, strlen(t->in), &c,
					  &err);

		if (rc != -EINVAL || !err || strcmp(err, t->want)) {
			print_error("input: %s\nwant: %sgot:  %s\n", t->in,
				    t->want, err ? err : "(none)\n");
			bad++;
		}
		conf_free(c);
		free(err);
	}
	assert_int_equal(bad, 0);
}

/* Several errors in one file are all reported, in file order. */
static void test_multiple_errors(void **state)
{
	expect_err("options {\n"
		   "  batch 0;\n"
		   "  gso maybe\n"
		   "}\n"
		   "set s { type nope; }\n"
		   "hook input {\n"
		   "  ip saddr @missing drop;\n"
		   "  tcp dport 70000 drop;\n"
		   "  tcp dport 22 accept\n"
		   "  udp dport 1 accept;\n"
		   "  counter;\n"
		   "}\n",
		   "t.conf:2:9: batch 0 out of range; expected 1..1024\n"
		   "t.conf:4:1: syntax error, unexpected '}', expecting ';'\n"
		   "t.conf:5:14: unknown set type \"nope\"; expected one of: "
		   "ipv4_addr, ipv6_addr, inet_service, ifname, mark, domain\n"
		   "t.conf:7:12: unknown set \"missing\"\n"
		   "t.conf:8:13: port 70000 out of range; expected 0..65535\n"
		   "t.conf:10:3: syntax error, unexpected udp, expecting ';'\n"
		   "t.conf:11:10: missing verdict; expected one of: accept, "
		   "drop, repeat, queue N\n");
}

/* ---- set file elements ---- */

static void test_parse_elem(void **state)
{
	struct conf_elem e;
	char *msg;

	assert_int_equal(conf_parse_elem("  10.1.0.0/16 # x\n", SET_IPV4_ADDR,
					 true, &e, &msg), 0);
	assert_null(msg);
	addr4(e.alo, "10.1.0.0");
	addr4(e.ahi, "10.1.255.255");
	assert_int_equal(e.family, AF_INET);
	assert_int_equal(conf_parse_elem("1.2.3.4-1.2.3.9", SET_IPV4_ADDR,
					 true, &e, &msg), 0);
	addr4(e.ahi, "1.2.3.9");
	assert_int_equal(conf_parse_elem("2001:db8::1", SET_IPV6_ADDR, false,
					 &e, &msg), 0);
	addr6(e.ahi, "2001:db8::1");
	assert_int_equal(conf_parse_elem("8000-8080", SET_INET_SERVICE, true,
					 &e, &msg), 0);
	assert_int_equal(e.lo, 8000);
	assert_int_equal(e.hi, 8080);
	assert_int_equal(conf_parse_elem("0x10", SET_MARK, false, &e, &msg),
			 0);
	assert_int_equal(e.lo, 16);
	assert_int_equal(conf_parse_elem("br-lan", SET_IFNAME, false, &e,
					 &msg), 0);
	assert_string_equal(e.str, "br-lan");
	free(e.str);
	assert_int_equal(conf_parse_elem("\"wl*\"", SET_IFNAME, false, &e,
					 &msg), 0);
	assert_string_equal(e.str, "wl*");
	free(e.str);

	assert_int_equal(conf_parse_elem("10.0.0.0/8", SET_IPV4_ADDR, false,
					 &e, &msg), -EINVAL);
	assert_string_equal(msg, "\"10.0.0.0\": a prefix needs \"flags "
			    "interval\"");
	free(msg);
	assert_int_equal(conf_parse_elem("::1", SET_IPV4_ADDR, false, &e,
					 &msg), -EINVAL);
	assert_string_equal(msg, "::1 is an IPv6 address; expected an IPv4 "
			    "address");
	free(msg);
	assert_int_equal(conf_parse_elem("70000", SET_INET_SERVICE, false, &e,
					 &msg), -EINVAL);
	assert_string_equal(msg, "port 70000 out of range; expected 0..65535");
	free(msg);
	assert_int_equal(conf_parse_elem("12ab", SET_INET_SERVICE, false, &e,
					 &msg), -EINVAL);
	free(msg);
	assert_int_equal(conf_parse_elem("", SET_MARK, false, &e, &msg),
			 -EINVAL);
	free(msg);
}

/* ---- domain set files ---- */

static const char *dom_add(void *arg, const struct conf_elem *el)
{
	strcat(arg, el->str);
	strcat(arg, "\n");
	return NULL;
}

/*
 * Read TEXT as the file d.txt of domain set d: the patterns it adds into
 * ELEMS (one a line; 4096 bytes), its warnings as diag_join() gives them
 * ("" if none) returned (malloc'd).
 */
static char *dom_file(const char *text, char *elems)
{
	char dir[] = "/tmp/test_conf.XXXXXX";
	struct conf c = { 0 };
	struct conf_set s = { .name = (char *)"d", .type = SET_DOMAIN,
			      .file = (char *)"d.txt" };
	struct diags d = { 0 };
	int here = open(".", O_RDONLY | O_DIRECTORY);
	FILE *f;
	char *w;

	assert_true(here >= 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	f = fopen("d.txt", "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	elems[0] = '\0';
	assert_int_equal(conf_set_file_read(&c, &s, dom_add, elems, &d), 0);
	unlink("d.txt");
	assert_int_equal(fchdir(here), 0);
	close(here);
	rmdir(dir);
	w = diag_join(&d, DIAG_WARNING);
	diag_free(&d);
	return w ? w : strdup("");
}

/* The address of a hosts line may be IPv6 with a zone index (macOS's
 * "fe80::1%lo0 localhost"): a hosts line as "::1 localhost" is. */
static void test_domain_file_hosts(void **state)
{
	char elems[4096], *w;

	w = dom_file("127.0.0.1 localhost\n::1 localhost\n"
		     "fe80::1%lo0 localhost\nfe80::1%lo0 zone.test\n"
		     "0.0.0.0 a.test\n", elems);
	assert_string_equal(w, "");
	assert_string_equal(elems, "zone.test\na.test\n");
	free(w);
	w = dom_file("fe80::1%lo0\nb.test\n", elems);
	assert_string_equal(w, "d.txt:1:1: warning: \"fe80::1%lo0\": an "
			    "address without a name; line ignored\n");
	assert_string_equal(elems, "b.test\n");
	free(w);
}

/* After the first 10 junk lines, one warning counts the rest, at the
 * first of them (not at the file's last line). */
static void test_domain_file_junk(void **state)
{
	char text[512] = "a.test\n", elems[4096], *w, *last;

	for (int i = 0; i < 13; i++)
		strcat(text, "bad!name\n");
	strcat(text, "b.test\nc.test\n");
	w = dom_file(text, elems);
	assert_string_equal(elems, "a.test\nb.test\nc.test\n");
	assert_non_null(strstr(w, "d.txt:11:1: warning: \"bad!name\""));
	last = strstr(w, "d.txt:12:1:");
	assert_non_null(last);
	assert_string_equal(last, "d.txt:12:1: warning: set d: 3 more lines "
			    "with junk, ignored (from this one to line 14; "
			    "only the first 10 are shown one by one): fix or "
			    "remove it, or comment it out ('#')\n");
	free(w);
}

/* A hosts line's names are entries of their own: a bad one is ignored,
 * the others kept, and the line counted once among the junk lines, with
 * one warning (its first bad name's). */
static void test_domain_file_hosts_junk(void **state)
{
	char text[1024] = "", elems[4096], *w, *last;

	for (int i = 0; i < 12; i++)
		strcat(text, "0.0.0.0 a.test bad!1 bad!2\n");
	w = dom_file(text, elems);
	assert_non_null(strstr(w, "d.txt:1:16: warning: \"bad!1\": not a "));
	assert_null(strstr(w, "d.txt:1:22:"));
	assert_non_null(strstr(w, "; this name ignored, the line's good "
			       "names kept\n"));
	assert_null(strstr(w, "line ignored"));
	assert_non_null(strstr(w, "d.txt:10:16:"));
	last = strstr(w, "d.txt:11:16:");
	assert_non_null(last);
	assert_string_equal(last, "d.txt:11:16: warning: set d: 2 more lines "
			    "with junk, ignored (from this one to line 12; "
			    "only the first 10 are shown one by one): fix or "
			    "remove it, or comment it out ('#')\n");
	for (int i = 0; i < 12; i++)	/* each line's good name */
		assert_memory_equal(elems + 7 * i, "a.test\n", 7);
	assert_int_equal(strlen(elems), 7 * 12);
	free(w);
}

/* add/update @set may stand anywhere among the statements (nft takes
 * them in any place): the rule is the same. */
static void test_setadd_anywhere(void **state)
{
	static const char *const rules[] = {
		"tcp dport 23 add @s { ip saddr timeout 1h } counter log "
		"mark set 1 drop;",
		"tcp dport 23 counter add @s { ip saddr timeout 1h } log "
		"mark set 1 drop;",
		"tcp dport 23 counter log mark set 1 add @s { ip saddr "
		"timeout 1h } drop;",
	};
	char text[512];

	(void)state;
	for (unsigned i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct conf *c;

		snprintf(text, sizeof(text), "set s { type ipv4_addr; flags "
			 "timeout; } hook input { %s }\n", rules[i]);
		c = load_ok(text);
		assert_int_equal(c->hooks[HOOK_INPUT].n_rules, 1);
		assert_string_equal(c->hooks[HOOK_INPUT].rules[0].add_set, "s");
		assert_int_equal(c->hooks[HOOK_INPUT].rules[0].add_timeout_ms,
				 3600000);
		assert_true(c->hooks[HOOK_INPUT].rules[0].log);
		conf_free(c);
	}
}

/* DNS types in any case, as DNS tools write them ("A", "AAAA"). */
static void test_qtype_case(void **state)
{
	struct conf *c = load_ok("hook input { dns qtype { A, aaaa, Https, "
				 "TXT } drop; }\n");
	const struct conf_match *m = &c->hooks[HOOK_INPUT].rules[0].matches[0];

	(void)state;
	assert_int_equal(m->n_elems, 4);
	assert_int_equal(m->elems[0].lo, 1);
	assert_int_equal(m->elems[1].lo, 28);
	assert_int_equal(m->elems[2].lo, 65);
	assert_int_equal(m->elems[3].lo, 16);
	conf_free(c);
}

/* A name of LEN characters: labels of 63 and a shorter last one. */
static void long_name(char *out, unsigned len)
{
	for (unsigned i = 0; i < len; i++)
		out[i] = i % 64 == 63 ? '.' : 'a';
	out[len] = '\0';
}

/* "*." and a name 253 characters in all at most: no name below a longer
 * pattern fits a name's 253. Refused as an over-long name is, in the
 * config (an error) and in a set file (a warning). */
static void test_domain_below_too_long(void **state)
{
	char name[300], text[400], want[1024], elems[4096], *w;
	const char *why = "no name below it fits in 253 characters: \"*.\" "
			  "and the name, 253 in all";
	struct conf *c;

	long_name(name, 251);
	snprintf(text, sizeof(text), "set d { type domain; elements = { "
		 "\"*.%s\" }; }\n", name);
	c = load_ok(text);
	conf_free(c);
	long_name(name, 252);
	snprintf(text, sizeof(text), "set d { type domain; elements = { "
		 "\"*.%s\" }; }\n", name);
	snprintf(want, sizeof(want), "t.conf:1:35: bad name \"*.%s\": %s\n",
		 name, why);
	expect_err(text, want);
	long_name(name, 253);
	snprintf(text, sizeof(text), "*.%s\na.test\n", name);
	w = dom_file(text, elems);
	snprintf(want, sizeof(want), "d.txt:1:1: warning: \"*.%.78s\": %s; "
		 "line ignored\n", name, why);
	assert_string_equal(w, want);
	assert_string_equal(elems, "a.test\n");
	free(w);
}

static void test_names(void **state)
{
	assert_string_equal(conf_hook_name(HOOK_PREROUTING), "prerouting");
	assert_string_equal(conf_hook_name(HOOK_POSTROUTING), "postrouting");
	assert_string_equal(conf_verdict_name(VERDICT_QUEUE), "queue");
	assert_string_equal(conf_verdict_name(VERDICT_DROP), "drop");
	assert_string_equal(conf_set_type_name(SET_IPV4_ADDR), "ipv4_addr");
	assert_string_equal(conf_set_type_name(SET_INET_SERVICE),
			    "inet_service");
	assert_string_equal(conf_set_type_name(SET_MARK), "mark");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_all_file),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_queues),
		cmocka_unit_test(test_queue_numbers_errors),
		cmocka_unit_test(test_queues_auto_range),
		cmocka_unit_test(test_env_errors),
		cmocka_unit_test(test_env_socket_dir),
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_match_addr),
		cmocka_unit_test(test_match_l4),
		cmocka_unit_test(test_match_meta),
		cmocka_unit_test(test_match_limit),
		cmocka_unit_test(test_match_limit_per),
		cmocka_unit_test(test_statements),
		cmocka_unit_test(test_syntax_bits),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_errors_file),
		cmocka_unit_test(test_too_many_errors),
		cmocka_unit_test(test_error_cases),
		cmocka_unit_test(test_multiple_errors),
		cmocka_unit_test(test_parse_elem),
		cmocka_unit_test(test_domain_file_hosts),
		cmocka_unit_test(test_domain_file_junk),
		cmocka_unit_test(test_domain_file_hosts_junk),
		cmocka_unit_test(test_setadd_anywhere),
		cmocka_unit_test(test_qtype_case),
		cmocka_unit_test(test_domain_below_too_long),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
