/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * namegen.c - nfqd-namegen, the names benchmark's packet generator: DNS
 * queries, TLS ClientHellos and name-less TCP flows, crafted as IPv4
 * packets on a raw socket, and the 1,000,000-name blocklist they are
 * matched against.
 *
 *   nfqd-namegen -w FILE -N NAMES
 *   nfqd-namegen -m dns|tls|tcp -d DST -n COUNT [-N NAMES] [-H HIT]
 *                [-x SPLIT] [-f FIRST]
 *
 * -w writes the list: NAMES names, one entry a line, in the formats lists
 * ship in: three lines in four a hosts line ("0.0.0.0 NAME": that name),
 * the fourth an adblock rule ("||NAME^": the name and below), and a
 * comment every 1000 lines. Name k is a function of k alone, so the
 * packets can name list entries without reading the list.
 *
 * -m sends COUNT packets from 192.0.2.1 (the source of DST's subnet the
 * kernel picks) to DST, sendmmsg batches of 64 on an IPPROTO_RAW socket:
 *   dns  UDP queries to port 53, one question each, every query a name of
 *        its own; one in HIT (default 10) names a list entry (a subdomain
 *        of it for an adblock entry), the others miss;
 *   tls  TCP flows to port 443: a SYN, then the ClientHello. One flow in
 *        HIT names a list entry. One flow in SPLIT (default 0: none) sends
 *        a browser-sized ClientHello (a post-quantum key share before the
 *        server_name, 1,455-1,470 bytes) in two segments, the first of
 *        NG_SPLIT_AT bytes, which mostly cuts the name in two; the
 *        others a 513-byte ClientHello in one segment. COUNT
 *        counts packets; the last flow is cut short if it must be;
 *   tcp  TCP flows to port 8080 that carry no name: a SYN, then 15
 *        segments of 100 bytes of binary data (not TLS, not HTTP).
 * Source ports follow the flow number from 1024 (flows FIRST, FIRST+1...;
 * -f makes a second fill's flows new ones). Prints "sent=N blocked=B":
 * B packets carry a list entry's complete name (the ones a policy that
 * drops the list drops: the query, the last segment of the ClientHello).
 * Checksums are computed. Exit status: 0 all sent, 1 error, 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/namewire.h"

#define NG_BATCH 64
#define NG_PKT 2048
#define NG_SPLIT_AT 1400	/* bytes of a split ClientHello's first segment */
#define NG_TCP_SEGS 15
#define NG_TCP_DATA 100

static const char *const words[] = {
	"ads", "track", "metrics", "cdn", "pixel", "stat", "click", "beacon",
};
static const char *const zones[] = {
	"example", "adnet", "trackers", "analytics", "media", "promo", "netads",
	"tagserv", "counter", "bannerz", "popup", "affil", "redirect",
};
static const char *const tlds[] = { "com", "net", "org", "info", "test" };

/* List entry K: its name into BUF; true if an adblock line (and below). */
static bool list_name(uint32_t k, char *buf, size_t len)
{
	snprintf(buf, len, "%s%u.%s%u.%s", words[k % 8], k, zones[k % 13],
		 k % 1000, tlds[k % 5]);
	return k % 4 == 3;
}

static int write_list(const char *path, uint32_t n)
{
	FILE *f = fopen(path, "w");
	char name[128];

	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "# nfqd-namegen blocklist: %u names\n", n);
	for (uint32_t k = 0; k < n; k++) {
		if (k % 1000 == 0)
			fprintf(f, "# block %u\n", k / 1000);
		if (list_name(k, name, sizeof(name)))
			fprintf(f, "||%s^\n", name);
		else
			fprintf(f, "0.0.0.0 %s\n", name);
	}
	if (fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

/* The name the I-th query or flow asks for; true if it is on the list. */
static bool query_name(uint32_t i, uint32_t n, uint32_t hit, char *buf,
		       size_t len)
{
	char e[120];
	uint32_t k;

	if (hit && i % hit == 0 && n) {
		k = (uint32_t)(((uint64_t)i * 2654435761u) % n);
		if (list_name(k, e, sizeof(e)))
			snprintf(buf, len, "www.%s", e);
		else
			snprintf(buf, len, "%s", e);
		return true;
	}
	snprintf(buf, len, "q%u.%s%u.%s", i, zones[i % 13], i % 997,
		 tlds[(i / 13) % 5]);
	return false;
}

static uint16_t csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t csum_add(uint32_t s, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)(p[len - 1] << 8);
	return s;
}

static void put32(uint8_t *p, uint32_t v)
{
	wire_put16(p, v >> 16);
	wire_put16(p + 2, v);
}

struct pkt {
	uint8_t b[NG_PKT];
	size_t len;
};

static struct in_addr src_addr, dst_addr;

/* IPv4 header + L4 (PROTO, L4LEN bytes already at b + 20): checksums. */
static void finish_ip(struct pkt *p, uint8_t proto, size_t l4len)
{
	uint8_t *ip = p->b, *l4 = p->b + 20;
	uint32_t s;

	ip[0] = 0x45;
	ip[1] = 0;
	wire_put16(ip + 2, (uint32_t)(20 + l4len));
	wire_put16(ip + 4, 0);
	wire_put16(ip + 6, 0x4000);	/* DF */
	ip[8] = 64;
	ip[9] = proto;
	wire_put16(ip + 10, 0);
	memcpy(ip + 12, &src_addr, 4);
	memcpy(ip + 16, &dst_addr, 4);
	wire_put16(ip + 10, csum_fold(csum_add(0, ip, 20)));
	s = csum_add(0, ip + 12, 8) + proto + (uint32_t)l4len;
	if (proto == IPPROTO_UDP) {
		wire_put16(l4 + 6, 0);
		wire_put16(l4 + 6, csum_fold(csum_add(s, l4, l4len)));
	} else {
		wire_put16(l4 + 16, 0);
		wire_put16(l4 + 16, csum_fold(csum_add(s, l4, l4len)));
	}
	p->len = 20 + l4len;
}

/* Query I's DNS message for NAME into D; its length. */
static size_t dns_message(uint8_t *d, uint32_t i, const char *name)
{
	return wire_dns_query(d, (uint16_t)i, name, i % 2 ? 28 : 1);
}

static void dns_query(struct pkt *p, uint32_t i, const char *name)
{
	uint8_t *u = p->b + 20;
	size_t n;

	wire_put16(u, 1024 + i % 60000);
	wire_put16(u + 2, 53);
	n = dns_message(u + 8, i, name);
	wire_put16(u + 4, (uint32_t)(8 + n));
	finish_ip(p, IPPROTO_UDP, 8 + n);
}

static void tcp_seg(struct pkt *p, uint16_t sport, uint16_t dport,
		    uint32_t seq, uint8_t flags, const uint8_t *data,
		    size_t len)
{
	uint8_t *t = p->b + 20;

	wire_put16(t, sport);
	wire_put16(t + 2, dport);
	put32(t + 4, seq);
	put32(t + 8, flags & 0x02 ? 0 : 0x10000001u);
	t[12] = 5 << 4;
	t[13] = flags;
	wire_put16(t + 14, 64240);
	wire_put16(t + 18, 0);
	if (len)
		memcpy(t + 20, data, len);
	finish_ip(p, IPPROTO_TCP, 20 + len);
}

static struct {
	int fd;
	struct pkt pk[NG_BATCH];
	unsigned n;
	uint64_t sent;
} tx;

static int flush(void)
{
	struct mmsghdr m[NG_BATCH];
	struct iovec iov[NG_BATCH];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr = dst_addr };
	unsigned done = 0;

	memset(m, 0, sizeof(m));
	for (unsigned i = 0; i < tx.n; i++) {
		iov[i].iov_base = tx.pk[i].b;
		iov[i].iov_len = tx.pk[i].len;
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
		m[i].msg_hdr.msg_name = &to;
		m[i].msg_hdr.msg_namelen = sizeof(to);
	}
	while (done < tx.n) {
		int r = sendmmsg(tx.fd, m + done, tx.n - done, 0);

		if (r < 0 && (errno == ENOBUFS || errno == EAGAIN ||
			      errno == EINTR)) {
			usleep(1000);
			continue;
		}
		if (r < 0) {
			perror("nfqd-namegen: sendmmsg");
			return -1;
		}
		done += (unsigned)r;
	}
	tx.sent += tx.n;
	tx.n = 0;
	return 0;
}

static struct pkt *next_pkt(void)
{
	if (tx.n == NG_BATCH && flush() < 0)
		return NULL;
	return &tx.pk[tx.n++];
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nfqd-namegen -w FILE -N NAMES\n"
		"       nfqd-namegen -m dns|tls|tcp -d DST -n COUNT [-N NAMES] "
		"[-H HIT] [-x SPLIT] [-f FIRST]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *wfile = NULL, *dst = NULL;
	uint64_t count = 0, blocked = 0;
	uint32_t names = 1000000, hit = 10, split = 0, first = 0;
	int c;

	while ((c = getopt(argc, argv, "w:N:m:d:n:H:x:f:")) != -1) {
		switch (c) {
		case 'w': wfile = optarg; break;
		case 'N': names = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		case 'd': dst = optarg; break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'H': hit = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'x': split = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'f': first = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (wfile)
		return write_list(wfile, names);
	if (!mode || !dst || !count || inet_pton(AF_INET, dst, &dst_addr) != 1)
		usage();
	if (strcmp(mode, "dns") && strcmp(mode, "tls") && strcmp(mode, "tcp"))
		usage();
	/* The source: the address the kernel would use towards DST. */
	{
		int u = socket(AF_INET, SOCK_DGRAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr = dst_addr,
					 .sin_port = htons(9) };
		socklen_t al = sizeof(a);

		if (u < 0 || connect(u, (struct sockaddr *)&a, sizeof(a)) ||
		    getsockname(u, (struct sockaddr *)&a, &al)) {
			perror("nfqd-namegen: route to DST");
			return 1;
		}
		src_addr = a.sin_addr;
		close(u);
	}
	tx.fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (tx.fd < 0) {
		perror("nfqd-namegen: raw socket (needs CAP_NET_RAW)");
		return 1;
	}
	char name[160];
	uint8_t hello[4096];
	uint64_t left = count;
	for (uint32_t i = first; left; i++) {
		struct pkt *p;
		bool hitp = query_name(i, names, hit, name, sizeof(name));
		uint16_t sport = (uint16_t)(1024 + i % 60000);
		uint32_t isn = i * 2654435761u;

		if (!strcmp(mode, "dns")) {
			if (!(p = next_pkt()))
				return 1;
			dns_query(p, i, name);
			left--;
			blocked += hitp;
			continue;
		}
		if (!(p = next_pkt()))
			return 1;
		tcp_seg(p, sport, strcmp(mode, "tls") ? 8080 : 443, isn, 0x02,
			NULL, 0);
		left--;
		if (!strcmp(mode, "tcp")) {
			uint8_t data[NG_TCP_DATA];

			for (int k = 0; k < NG_TCP_DATA; k++)
				data[k] = (uint8_t)(0x80 + ((i + (uint32_t)k) & 0x3f));
			for (uint32_t s = 0; s < NG_TCP_SEGS && left; s++) {
				if (!(p = next_pkt()))
					return 1;
				tcp_seg(p, sport, 8080,
					isn + 1 + s * NG_TCP_DATA, 0x18, data,
					NG_TCP_DATA);
				left--;
			}
			continue;
		}
		bool big = split && i % split == 0;
		size_t hl = wire_client_hello(hello, name, i, big);
		size_t cut = big ? NG_SPLIT_AT : hl;

		if (!left)
			break;
		if (!(p = next_pkt()))
			return 1;
		tcp_seg(p, sport, 443, isn + 1, 0x18, hello, cut);
		left--;
		if (cut == hl) {
			blocked += hitp;
			continue;
		}
		if (!left)
			break;
		if (!(p = next_pkt()))
			return 1;
		tcp_seg(p, sport, 443, isn + 1 + (uint32_t)cut, 0x18,
			hello + cut, hl - cut);
		left--;
		blocked += hitp;
	}
	if (tx.n && flush() < 0)
		return 1;
	printf("sent=%llu blocked=%llu\n", (unsigned long long)tx.sent,
	       (unsigned long long)blocked);
	return 0;
}
