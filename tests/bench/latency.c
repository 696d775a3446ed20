/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * latency.c - nfqd-latency, the receiving end of the benchmark's latency
 * probes (sent by nfqd-gen -L).
 *
 *   nfqd-latency -p PORT [-o FILE]
 *
 * Binds a UDP socket to PORT (IPv4, any address) and, for every probe that
 * arrives, takes the receive time (CLOCK_MONOTONIC, which every network
 * namespace shares) minus the send time the probe carries. Runs until
 * SIGTERM/SIGINT, then prints one line of key=value pairs:
 *   probes= min_ns= p50_ns= p90_ns= p99_ns= p999_ns= max_ns= bad=
 * (nearest-rank percentiles; bad = datagrams that were not probes). -o
 * writes every latency in ns, one a line, in arrival order.
 * Exit status: 0 done, 1 error, 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LAT_MAGIC	"nfqP"

/* As nfqd-gen writes it. */
struct lat_probe {
	char magic[4];
	uint32_t seq;
	uint64_t sent_ns;
} __attribute__((packed));

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile P (0..1] of the N sorted values V. */
static uint64_t pct(const uint64_t *v, size_t n, double p)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)(p * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

static int open_socket(unsigned int port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int fd, size = 8 << 20;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0) {
		perror("nfqd-latency: socket");
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		fprintf(stderr, "nfqd-latency: bind port %u: %s\n", port,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	unsigned long port = 0;
	const char *out = NULL;
	struct sigaction sa;
	uint64_t *lat = NULL, *sorted;
	size_t n = 0, cap = 0, bad = 0;
	int c, fd;

	while ((c = getopt(argc, argv, "p:o:h")) != -1) {
		switch (c) {
		case 'p':
			port = strtoul(optarg, NULL, 10);
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			printf("usage: nfqd-latency -p PORT [-o FILE]\n");
			return 0;
		default:
			goto usage;
		}
	}
	if (optind != argc || port < 1 || port > 65535)
		goto usage;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: recv returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fd = open_socket((unsigned int)port);
	if (fd < 0)
		return 1;

	while (!stop) {
		struct lat_probe p;
		ssize_t r = recv(fd, &p, sizeof(p), MSG_TRUNC);
		uint64_t t = now_ns();

		if (r < 0) {
			if (errno == EINTR)
				continue;
			perror("nfqd-latency: recv");
			return 1;
		}
		if ((size_t)r < sizeof(p) || memcmp(p.magic, LAT_MAGIC, 4) ||
		    p.sent_ns > t) {
			bad++;
			continue;
		}
		if (n == cap) {
			uint64_t *nl;

			cap = cap ? cap * 2 : 65536;
			nl = realloc(lat, cap * sizeof(*lat));
			if (!nl) {
				perror("nfqd-latency: realloc");
				return 1;
			}
			lat = nl;
		}
		lat[n++] = t - p.sent_ns;
	}
	close(fd);

	if (out) {
		FILE *f = fopen(out, "w");

		if (!f) {
			perror("nfqd-latency: -o");
			return 1;
		}
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%llu\n", (unsigned long long)lat[i]);
		fclose(f);
	}
	sorted = lat;
	if (n)
		qsort(sorted, n, sizeof(*sorted), cmp_u64);
	printf("probes=%zu min_ns=%llu p50_ns=%llu p90_ns=%llu p99_ns=%llu "
	       "p999_ns=%llu max_ns=%llu bad=%zu\n", n,
	       (unsigned long long)(n ? sorted[0] : 0),
	       (unsigned long long)pct(sorted, n, 0.50),
	       (unsigned long long)pct(sorted, n, 0.90),
	       (unsigned long long)pct(sorted, n, 0.99),
	       (unsigned long long)pct(sorted, n, 0.999),
	       (unsigned long long)(n ? sorted[n - 1] : 0), bad);
	free(lat);
	return 0;
usage:
	fprintf(stderr, "usage: nfqd-latency -p PORT [-o FILE]\n");
	return 2;
}
