/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen.c - nfqd-gen, a sendmmsg UDP traffic generator for nfqd's benchmark
 * and integration tests.
 *
 *   nfqd-gen -d DST -n COUNT [-p DPORT] [-P NPORTS] [-s SIZE] [-b BATCH]
 *            [-S SRCADDR,...] [-6] [-r PPS [-B BURST]]
 *            [-L PROBE_PORT [-R PROBE_PPS]] [-q]
 *
 * Sends exactly COUNT datagrams of SIZE payload bytes to DST, destination
 * ports DPORT .. DPORT+NPORTS-1 in turn. With -S, one socket is bound to each
 * source address and datagram i leaves from source i % nsrc, so the split
 * between sources is exact (their counts differ by at most one). The
 * default SIZE of 18 makes 46-byte IPv4 packets, i.e. minimum-size 64-byte
 * Ethernet frames (14 header + 46 + 4 FCS); over IPv6 they are 66 bytes.
 *
 * -r paces: datagram k is due at start + k / PPS; the sender sleeps until
 * the next one is due (absolute-time sleep) and then sends what is due, at
 * least BURST and at most BATCH at once. The default BURST is 1 ms worth
 * (few wake-ups, cheap for tests that only need a rate); with -L it is 50 us
 * worth, the timer slack 1 ns, and a wait shorter than 20 us is spun rather
 * than slept, so that the load the probes measure is smooth rather than one
 * burst per millisecond, and a rate near the sender's limit is reached (a
 * sleep costs more than a short burst). A sender that falls behind
 * sends full batches back to back: the summary line says what rate was
 * achieved.
 *
 * -L adds latency probes on top of the COUNT datagrams: PROBE_PPS per
 * second (default 1000; a late probe is sent at the next send, but after a
 * stall of more than 10 probe slots the older ones are skipped rather than
 * sent back to back) to PROBE_PORT, each the first datagram of its sendmmsg, carrying "nfqP", a 32-bit sequence number and the send time
 * (CLOCK_MONOTONIC ns, read just before the send; every network namespace
 * shares that clock), all in host byte order. SIZE must be at least 16.
 *
 * "Sent" means accepted by sendmmsg(). The sockets set IP_RECVERR, so a
 * datagram the local stack drops (a full veth backlog) fails with ENOBUFS
 * instead of vanishing, and ICMP errors surface once as ECONNREFUSED etc.
 * These are retried with a short back-off; if a datagram still cannot be
 * sent for 5 s the program reports how many were sent and exits 1. Other
 * errors exit 1 at once. It never silently sends fewer.
 * Exit status: 0 all sent, 1 could not send all / socket error, 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define GEN_MAX_BATCH	1024
#define GEN_MAX_SRC	256
#define GEN_MAX_SIZE	65507
#define GEN_STALL_NS	(5ULL * 1000000000ULL)
#define GEN_BURST_NS	1000000ULL	/* default burst: this much traffic, */
#define GEN_PROBE_BURST_NS 50000ULL	/* or this much with probes */
#define GEN_PROBE_MIN	16		/* magic, sequence, send time */
#define GEN_PROBE_CATCHUP 10		/* most probe slots sent late */
#define GEN_SPIN_NS	20000ULL	/* with probes: spin on shorter waits */

struct gen_src {
	int fd;
	uint64_t count;		/* datagrams this source must send */
	uint64_t sent;
};

static struct {
	int family;
	struct sockaddr_storage dst;
	socklen_t dst_len;
	uint64_t count;
	unsigned int dport;
	unsigned int nports;
	size_t size;
	unsigned int batch;
	uint64_t pps;
	uint64_t burst;
	unsigned int probe_port;
	uint64_t probe_pps;
	bool quiet;
	char *srcs[GEN_MAX_SRC];
	unsigned int nsrc;
} opt = {
	.dport = 9,
	.nports = 1,
	.size = 18,
	.batch = 64,
	.probe_pps = 1000,
};

/* The probe datagram's payload (host byte order, same machine). */
struct gen_probe {
	char magic[4];		/* "nfqP" */
	uint32_t seq;
	uint64_t sent_ns;	/* CLOCK_MONOTONIC */
} __attribute__((packed));

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nfqd-gen -d DST -n COUNT [-p DPORT] [-P NPORTS] [-s SIZE]\n"
		"                [-b BATCH] [-S SRCADDR,...] [-6] [-r PPS [-B BURST]]\n"
		"                [-L PROBE_PORT [-R PROBE_PPS]] [-q]\n"
		"  -d DST      destination IPv4 or IPv6 literal\n"
		"  -n COUNT    datagrams to send (all of them, or exit 1)\n"
		"  -p DPORT    first destination port (default 9)\n"
		"  -P NPORTS   cycle over NPORTS destination ports (default 1)\n"
		"  -s SIZE     UDP payload bytes (default 18: 64-byte IPv4 frames)\n"
		"  -b BATCH    datagrams per sendmmsg (default 64, max %d)\n"
		"  -S A,B,...  source addresses, one socket each, round-robin\n"
		"  -6          DST is IPv6 (also detected from the literal)\n"
		"  -r PPS      paced rate in datagrams per second (default none)\n"
		"  -B BURST    with -r: least datagrams per send (default 1 ms worth,\n"
		"              50 us worth with -L)\n"
		"  -L PORT     also send timestamped latency probes to PORT\n"
		"  -R PPS      probes per second (default 1000)\n"
		"  -q          quiet: no summary line\n",
		GEN_MAX_BATCH);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ULL),
		.tv_nsec = (long)(ns % 1000000000ULL),
	};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_addr(const char *s, int family, struct sockaddr_storage *ss,
		      socklen_t *len, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, s, &sin->sin_addr) != 1)
			return -1;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, s, &sin6->sin6_addr) != 1)
			return -1;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
	}
	return 0;
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static int open_socket(const char *src)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	fd = socket(opt.family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0) {
		perror("nfqd-gen: socket");
		return -1;
	}
	/* Report local drops as ENOBUFS rather than hide them. */
	if (opt.family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one));
	if (src) {
		if (parse_addr(src, opt.family, &ss, &len, 0) < 0) {
			fprintf(stderr, "nfqd-gen: bad source address '%s'\n",
				src);
			close(fd);
			return -1;
		}
		if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
			fprintf(stderr, "nfqd-gen: bind %s: %s\n", src,
				strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

static int split_sources(char *list)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!*tok)
			continue;
		if (opt.nsrc == GEN_MAX_SRC) {
			fprintf(stderr, "nfqd-gen: at most %d sources\n",
				GEN_MAX_SRC);
			return -1;
		}
		opt.srcs[opt.nsrc++] = tok;
	}
	return 0;
}

static int parse_args(int argc, char **argv)
{
	const char *dst = NULL;
	bool have_count = false, v6 = false;
	uint64_t v;
	int c;

	while ((c = getopt(argc, argv, "d:n:p:P:s:b:S:6r:B:L:R:qh")) != -1) {
		switch (c) {
		case 'd':
			dst = optarg;
			break;
		case 'n':
			if (parse_u64(optarg, 0, UINT64_MAX / 2, &opt.count))
				goto bad;
			have_count = true;
			break;
		case 'p':
			if (parse_u64(optarg, 1, 65535, &v))
				goto bad;
			opt.dport = (unsigned int)v;
			break;
		case 'P':
			if (parse_u64(optarg, 1, 65535, &v))
				goto bad;
			opt.nports = (unsigned int)v;
			break;
		case 's':
			if (parse_u64(optarg, 0, GEN_MAX_SIZE, &v))
				goto bad;
			opt.size = (size_t)v;
			break;
		case 'b':
			if (parse_u64(optarg, 1, GEN_MAX_BATCH, &v))
				goto bad;
			opt.batch = (unsigned int)v;
			break;
		case 'S':
			if (split_sources(optarg))
				return -1;
			break;
		case '6':
			v6 = true;
			break;
		case 'r':
			if (parse_u64(optarg, 0, 1000000000, &opt.pps))
				goto bad;
			break;
		case 'B':
			if (parse_u64(optarg, 1, GEN_MAX_BATCH, &opt.burst))
				goto bad;
			break;
		case 'L':
			if (parse_u64(optarg, 1, 65535, &v))
				goto bad;
			opt.probe_port = (unsigned int)v;
			break;
		case 'R':
			if (parse_u64(optarg, 1, 1000000, &opt.probe_pps))
				goto bad;
			break;
		case 'q':
			opt.quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc || !dst || !have_count) {
		usage(stderr);
		return -1;
	}
	if (opt.dport + opt.nports - 1 > 65535) {
		fprintf(stderr, "nfqd-gen: DPORT + NPORTS - 1 exceeds 65535\n");
		return -1;
	}
	if (opt.probe_port && opt.size < GEN_PROBE_MIN) {
		fprintf(stderr, "nfqd-gen: -L needs SIZE >= %d\n",
			GEN_PROBE_MIN);
		return -1;
	}
	opt.family = (v6 || strchr(dst, ':')) ? AF_INET6 : AF_INET;
	if (parse_addr(dst, opt.family, &opt.dst, &opt.dst_len,
		       (uint16_t)opt.dport) < 0) {
		fprintf(stderr, "nfqd-gen: bad %s destination '%s'\n",
			opt.family == AF_INET ? "IPv4" : "IPv6", dst);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "nfqd-gen: bad value '%s' for -%c\n", optarg, c);
	usage(stderr);
	return -1;
}

/*
 * With IP_RECVERR, a datagram the local stack dropped (e.g. a full veth
 * backlog) fails with ENOBUFS instead of counting as sent, and an ICMP
 * error that came back fails the next send once (the datagram of that
 * send is not sent). Both are retried; the second also leaves a message in
 * the error queue, which is emptied here.
 */
static bool transient_error(int err)
{
	switch (err) {
	case ENOBUFS:
	case EAGAIN:
	case ENOMEM:
	case ECONNREFUSED:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EHOSTDOWN:
	case ENETDOWN:
	case EPROTO:
	case EMSGSIZE:
		return true;
	}
	return false;
}

static void drain_errqueue(int fd)
{
	char buf[256], cbuf[512];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh;
	int i;

	for (i = 0; i < 1024; i++) {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
	}
}

/* The messages of one send: names, payloads and the optional probe. */
struct gen_msgs {
	struct mmsghdr msgs[GEN_MAX_BATCH + 1];
	struct sockaddr_storage names[GEN_MAX_BATCH + 1];
	struct iovec iov;		/* the load's payload */
	struct iovec probe_iov;		/* the probe's payload */
	struct gen_probe *probe;
};

/*
 * Send one batch of N datagrams on SRC, datagram numbers FIRST onwards
 * (global numbering, for the destination port cycle), preceded by a probe
 * when PROBE is set. Returns how many of the N were sent (all N), or -1
 * after reporting a hard error or a stall.
 */
static int send_batch(struct gen_src *src, uint64_t first, unsigned int n,
		      struct gen_msgs *m, uint64_t step, bool probe)
{
	unsigned int i, done = 0, lead = probe ? 1 : 0, total = n + lead;
	uint64_t stall_start = 0, backoff = 20000;
	int err;

	for (i = 0; i < total; i++) {
		struct msghdr *h = &m->msgs[i].msg_hdr;

		m->names[i] = opt.dst;
		if (i < lead) {
			set_port(&m->names[i], (uint16_t)opt.probe_port);
			h->msg_iov = &m->probe_iov;
		} else {
			uint64_t k = (first + (i - lead) * step) % opt.nports;

			set_port(&m->names[i], (uint16_t)(opt.dport + k));
			h->msg_iov = &m->iov;
		}
		h->msg_iovlen = 1;
		h->msg_name = &m->names[i];
		h->msg_namelen = opt.dst_len;
	}
	while (done < total) {
		int r;

		/* Stamp the probe as late as possible: it leads the send. */
		if (done < lead)
			m->probe->sent_ns = now_ns();
		r = sendmmsg(src->fd, m->msgs + done, total - done, 0);
		if (r > 0) {
			done += (unsigned int)r;
			stall_start = 0;
			backoff = 20000;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && !transient_error(errno)) {
			perror("nfqd-gen: sendmmsg");
			src->sent += done > lead ? done - lead : 0;
			return -1;
		}
		err = r < 0 ? errno : 0;
		if (r < 0 && err != ENOBUFS && err != EAGAIN && err != ENOMEM)
			drain_errqueue(src->fd);
		/* Transient: back off briefly, give up after a long stall. */
		if (!stall_start)
			stall_start = now_ns();
		else if (now_ns() - stall_start > GEN_STALL_NS) {
			fprintf(stderr, "nfqd-gen: sendmmsg stalled for 5 s: "
				"%s\n", err ? strerror(err) : "sent 0");
			src->sent += done > lead ? done - lead : 0;
			return -1;
		}
		sleep_ns(backoff);
		if (backoff < 10000000)
			backoff *= 2;
	}
	src->sent += n;
	return (int)n;
}

/* Sleep until the absolute CLOCK_MONOTONIC time T (ns). */
static void sleep_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / 1000000000ULL),
		.tv_nsec = (long)(t % 1000000000ULL),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* Time datagram K of a stream of PPS per second is due. */
static uint64_t due_ns(uint64_t start, uint64_t k, uint64_t pps)
{
	return start + (uint64_t)((unsigned __int128)k * 1000000000ULL / pps);
}

/* Index of the slot of a stream of PPS per second that time T falls in. */
static uint64_t slot_at(uint64_t start, uint64_t t, uint64_t pps)
{
	return (uint64_t)((unsigned __int128)(t - start) * pps / 1000000000ULL);
}

/*
 * Wait for the next send and say what it holds: the number of load
 * datagrams (out of LEFT for this source, TOTAL sent so far) and whether a
 * probe (number PROBES) leads it. Unpaced: a full batch, no wait. Paced:
 * sleep until the next datagram or probe is due, then send what is due by
 * now, at least a burst, at most a batch; 0 when only the probe is due.
 */
static unsigned int pace(uint64_t start, uint64_t total, uint64_t left,
			 uint64_t probes, bool *with_probe)
{
	uint64_t n = opt.batch, t, next = UINT64_MAX, t_probe = UINT64_MAX;

	if (opt.probe_port)
		t_probe = due_ns(start, probes, opt.probe_pps);
	if (opt.pps)
		next = due_ns(start, total, opt.pps);
	if (t_probe < next)
		next = t_probe;
	t = now_ns();
	if (opt.pps && t < next) {
		/*
		 * A sleep and its wake-up cost several microseconds here
		 * (a VM): near its limit, a sender that slept before every
		 * 50 us burst fell 20% short of the rate it makes unpaced.
		 */
		if (opt.probe_port && next - t < GEN_SPIN_NS)
			while (now_ns() < next)
				;
		else
			sleep_until(next);
		t = now_ns();
	}
	*with_probe = t >= t_probe;
	if (opt.pps) {
		uint64_t due = slot_at(start, t, opt.pps) + 1;

		if (due <= total)
			n = 0;
		else if ((n = due - total) < opt.burst)
			n = opt.burst;
		if (n > opt.batch)
			n = opt.batch;
	}
	return (unsigned int)(n < left ? n : left);
}

int main(int argc, char **argv)
{
	static struct gen_msgs m;
	struct gen_probe probe = { .magic = { 'n', 'f', 'q', 'P' } };
	struct gen_src *srcs;
	unsigned int nsock, i, cur = 0;
	uint64_t total_sent = 0, probes = 0, probes_sent = 0, start, elapsed;
	char *payload, *probe_payload;
	int rc = 0;

	if (parse_args(argc, argv) < 0)
		return 2;

	payload = calloc(1, opt.size ? opt.size : 1);
	probe_payload = calloc(1, opt.size ? opt.size : 1);
	nsock = opt.nsrc ? opt.nsrc : 1;
	srcs = calloc(nsock, sizeof(*srcs));
	if (!payload || !probe_payload || !srcs) {
		fprintf(stderr, "nfqd-gen: out of memory\n");
		return 1;
	}
	memcpy(payload, "nfqd-gen", opt.size < 8 ? opt.size : 8);
	for (i = 0; i < nsock; i++) {
		srcs[i].fd = open_socket(opt.nsrc ? opt.srcs[i] : NULL);
		if (srcs[i].fd < 0)
			return 1;
		srcs[i].count = opt.count / nsock +
				(i < opt.count % nsock ? 1 : 0);
	}
	m.iov.iov_base = payload;
	m.iov.iov_len = opt.size;
	m.probe = (struct gen_probe *)probe_payload;
	m.probe_iov.iov_base = probe_payload;
	m.probe_iov.iov_len = opt.size;
	if (opt.pps && !opt.burst)
		opt.burst = opt.pps * (opt.probe_port ? GEN_PROBE_BURST_NS :
				       GEN_BURST_NS) / 1000000000ULL;
	if (!opt.burst)
		opt.burst = 1;
	/* Wake on time: the default 50 us timer slack would bunch bursts. */
	if (opt.pps && opt.probe_port)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	start = now_ns();
	while (total_sent < opt.count) {
		struct gen_src *s = &srcs[cur];
		uint64_t left = s->count - s->sent;
		unsigned int n;
		bool with_probe;
		int r;

		if (!left) {
			cur = (cur + 1) % nsock;
			continue;
		}
		n = pace(start, total_sent, left, probes, &with_probe);
		if (!n && !with_probe)
			continue;
		if (with_probe) {
			probe.seq = (uint32_t)probes;
			memcpy(probe_payload, &probe, sizeof(probe));
		}
		/*
		 * Datagram j of source cur has global number cur + j * nsock;
		 * the destination port follows the global number.
		 */
		r = send_batch(s, cur + s->sent * nsock, n, &m, nsock,
			       with_probe);
		if (r < 0) {
			rc = 1;
			break;
		}
		if (with_probe) {
			/* Late probes catch up one per send, but after a
			 * long stall the missed ones are skipped rather
			 * than sent in a burst. */
			uint64_t k = slot_at(start, now_ns(), opt.probe_pps);

			probes_sent++;
			probes++;
			if (k > probes + GEN_PROBE_CATCHUP)
				probes = k - GEN_PROBE_CATCHUP;
		}
		total_sent += (uint64_t)r;
		cur = (cur + 1) % nsock;
	}
	elapsed = now_ns() - start;

	/* Recount from the sources: a failed batch may have sent a part. */
	total_sent = 0;
	for (i = 0; i < nsock; i++) {
		total_sent += srcs[i].sent;
		close(srcs[i].fd);
	}
	if (total_sent != opt.count) {
		fprintf(stderr, "nfqd-gen: sent only %llu of %llu datagrams\n",
			(unsigned long long)total_sent,
			(unsigned long long)opt.count);
		rc = 1;
	}
	if (!opt.quiet) {
		printf("nfqd-gen: sent %llu datagrams in %.3f s (%.0f/s)",
		       (unsigned long long)total_sent, elapsed / 1e9,
		       elapsed ? total_sent * 1e9 / elapsed : 0.0);
		if (opt.probe_port)
			printf(", %llu probes",
			       (unsigned long long)probes_sent);
		printf("\n");
	}
	free(srcs);
	free(payload);
	free(probe_payload);
	return rc;
}
