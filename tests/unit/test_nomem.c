/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_nomem.c - out of memory at each allocation of a load and a build. */
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/netfilter.h>

#include "conf.h"
#include "diag.h"
#include "pkt.h"
#include "policy.h"
#include "verdict.h"

/*
 * What a reload does before it touches the running daemon: conf_load()
 * (scanner, parser, checks) and policy_build() (sets, set files, rules).
 * Allocation N of that sequence fails, for every N until the sequence
 * needs fewer than N: each time the load must fail with an error that
 * says out of memory (in words or strerror(ENOMEM)), never crash, abort
 * or exit, and free every block it took. It may succeed only where the failure was made good (stdio
 * reads unbuffered when it has no buffer): then its policy must judge as
 * the policy built without faults does.
 *
 * malloc, calloc and realloc are replaced by ELF interposition; glibc's
 * own callers (strdup, getline, fopen, ...) come here too. ASan and TSan
 * replace the same symbols, so a sanitizer build only runs the sequence
 * once, without failures (say so, do not skip: the other builds run it).
 */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NO_INTERPOSE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NO_INTERPOSE 1
#endif
#endif

static bool armed;
static long count, fail_at, tolerated, live;

#ifndef NO_INTERPOSE
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);

static bool fail_now(void)
{
	if (!armed || ++count != fail_at)
		return false;
	errno = ENOMEM;
	return true;
}

/*
 * Blocks taken and not given back: a failed load must give back all.
 * Blocks from here carry a 16-byte header with a tag; free() counts only
 * those (glibc frees blocks of its own allocators here too).
 */
#define TAG 0x6e66716466617574ull
#define HDR 16

static void *tagged(char *b)
{
	if (!b)
		return NULL;
	*(unsigned long long *)b = TAG;
	live++;
	return b + HDR;
}

static bool ours(void *p)
{
	return p && *(unsigned long long *)((char *)p - HDR) == TAG;
}

void *malloc(size_t size)
{
	return fail_now() ? NULL : tagged(__libc_malloc(size + HDR));
}

void *calloc(size_t n, size_t size)
{
	if (size && n > (SIZE_MAX - HDR) / size) {
		errno = ENOMEM;
		return NULL;
	}
	return fail_now() ? NULL : tagged(__libc_calloc(1, n * size + HDR));
}

void free(void *p)
{
	if (!ours(p)) {
		__libc_free(p);
		return;
	}
	live--;
	*(unsigned long long *)((char *)p - HDR) = 0;
	__libc_free((char *)p - HDR);
}

void *realloc(void *p, size_t size)
{
	char *r;

	if (!p)
		return malloc(size);
	if (!size) {
		free(p);
		return NULL;
	}
	if (fail_now())
		return NULL;
	if (!ours(p))
		return __libc_realloc(p, size);
	r = __libc_realloc((char *)p - HDR, size + HDR);
	return r ? r + HDR : NULL;
}
#endif

static const char conf_text[] =
	"options { queues 0-3; rcvbuf 1M; copy-range 512; }\n"
	"set ports { type inet_service; flags interval; elements = { 22, 8000-8080 }; }\n"
	"set v6 { type ipv6_addr; flags interval; elements = { ::1, 2001:db8::/32 }; }\n"
	"set ifs { type ifname; elements = { \"eth0\", \"wl*\" }; }\n"
	"set blocked { type ipv4_addr; flags interval; file \"%s\"; }\n"
	"hook input {\n"
	"\tip saddr @blocked drop;\n"
	"\tudp dport 9 accept;\n"
	"\tip daddr { 1.2.3.4, 5.6.7.8-5.6.7.9 } counter accept;\n"
	"\tip6 saddr @v6 log prefix \"v6: \" drop;\n"
	"\ttcp dport @ports tcp flags syn accept;\n"
	"\ticmp type { echo-request, 3 } accept;\n"
	"\tiifname @ifs meta mark 0x10/0xff mark set 0x1 accept;\n"
	"\tct state invalid drop;\n"
	"\tlimit rate 5/second udp dport 53 accept;\n"
	"}\n"
	"hook output { policy drop; oifname \"lo\" accept; }\n";

static char conf_path[64], set_path[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(99);
	}
}

static void setup(void)
{
	char buf[sizeof(conf_text) + 64];
	int fd;

	strcpy(set_path, "/tmp/test_nomem.set.XXXXXX");
	fd = mkstemp(set_path);
	if (fd < 0)
		exit(99);
	close(fd);
	write_file(set_path, "# blocked\n10.0.0.0/8\n192.0.2.1\n198.51.100.1-198.51.100.9\n");
	strcpy(conf_path, "/tmp/test_nomem.conf.XXXXXX");
	fd = mkstemp(conf_path);
	if (fd < 0)
		exit(99);
	close(fd);
	snprintf(buf, sizeof(buf), conf_text, set_path);
	write_file(conf_path, buf);
}

/* A UDP datagram from SRC to port 9 on hook input. */
static struct pkt udp4(uint8_t *raw, const char *src)
{
	struct pkt p = { 0 };

	memset(raw, 0, 28);
	raw[0] = 0x45;
	raw[3] = 28;
	raw[9] = 17;
	inet_pton(AF_INET, src, raw + 12);
	inet_pton(AF_INET, "192.0.2.2", raw + 16);
	raw[23] = 9;
	p.hook = HOOK_INPUT;
	p.family = NFPROTO_IPV4;
	p.payload = raw;
	p.orig_len = p.payload_len = 28;
	pkt_parse_headers(&p);
	return p;
}

/* The set file's addresses are dropped, others accepted: a set cut
 * short by a failure taken for the end of its file would let them by. */
static void judges_right(struct policy *p, long n)
{
	static const char *const blocked[] = { "10.9.8.7", "192.0.2.1",
					       "198.51.100.9" };
	uint8_t raw[28];
	struct decision d;
	struct pkt k;

	for (unsigned i = 0; i < 3; i++) {
		k = udp4(raw, blocked[i]);
		policy_judge(p, &k, 0, &d);
		if (d.verdict != NF_DROP) {
			fprintf(stderr, "FAIL: allocation %ld failed, the load succeeded and %s is not dropped\n",
				n, blocked[i]);
			exit(1);
		}
	}
	k = udp4(raw, "203.0.113.1");
	policy_judge(p, &k, 0, &d);
	if (d.verdict != NF_ACCEPT) {
		fprintf(stderr, "FAIL: allocation %ld: 203.0.113.1 not accepted\n", n);
		exit(1);
	}
}

/* One load and build with allocation N failing (0: none). 0 once N is
 * past the last allocation. */
static int run(long n)
{
	struct conf *c = NULL;
	struct policy *p = NULL;
	struct diags dg = { 0 };
	char *errors;
	long live0 = live;
	int rc, failed;

	count = 0;
	fail_at = n;
	armed = true;
	rc = conf_load(conf_path, &c, &dg);
	if (rc == 0)
		p = policy_build(c, 4, &dg);
	armed = false;
	/* A message that could not be stored for want of memory counts as
	 * saying "out of memory" (diag_print says so). */
	errors = dg.nomem ? strdup("out of memory") :
			    diag_join(&dg, DIAG_ERROR);
	diag_free(&dg);
	failed = rc < 0 || !p;
	if (failed && n == 0) {
		fprintf(stderr, "FAIL: the load fails without a fault: %s\n",
			errors ? errors : "(no error)");
		exit(1);
	}
	if (failed && (!errors || (!strstr(errors, "out of memory") &&
				   !strstr(errors, strerror(ENOMEM))))) {
		fprintf(stderr, "FAIL: allocation %ld failed: rc %d, errors \"%s\", want \"out of memory\"\n",
			n, rc, errors ? errors : "(none)");
		exit(1);
	}
	if (!failed)
		judges_right(p, n);
	if (!failed && n != 0 && count >= n)
		tolerated++;
	policy_free(p);
	conf_free(c);
	free(errors);
	if (live != live0) {
		fprintf(stderr, "FAIL: allocation %ld failed: %ld blocks not freed\n",
			n, live - live0);
		exit(1);
	}
	return n == 0 || count >= n;
}

int main(void)
{
	setup();
	run(0);
#ifndef NO_INTERPOSE
	if (count == 0) {
		/* valgrind's malloc: it checks the one load for leaks. */
		printf("# malloc is not this test's (valgrind?): one load without faults\n");
		return 0;
	}
#endif
#ifdef NO_INTERPOSE
	printf("# sanitizer build: allocations cannot be failed (the sanitizer owns malloc); one load without faults\n");
#else
	long n;

	for (n = 1; run(n); n++)
		;
	printf("# failed each of %ld allocations in turn: %ld made good, the others failed the load with out of memory\n",
	       n - 1, tolerated);
#endif
	unlink(conf_path);
	unlink(set_path);
	return 0;
}
