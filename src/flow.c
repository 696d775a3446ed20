/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * flow.c - the per-queue flow table that gathers first bytes for names.
 * A bucket's key hashes and last-seen times are kept apart from the flows
 * (in the same mapping), 8 of each in one cache line, so that a lookup or
 * an insert reads two lines and the flow it finds, not the 8 flows of
 * the bucket.
 */
#include <errno.h>
#include <netinet/in.h>
#include <linux/netfilter.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bigmem.h"
#include "flow.h"

#define WAYS 8			/* flows a bucket holds */

enum flow_state { FL_FREE, FL_GATHER, FL_DONE };

/* The bytes of a flow that gathers: a stream and its buffers. */
struct gathering {
	struct name_stream st;
	uint8_t mem[];		/* name_stream_bytes(FLOW_GATHER) */
};

/* One cache line holds all a flow is made with (insert(), flow_clear())
 * and all a packet of a settled flow reads (key, state, the answer's
 * head and the first byte of its name): a new flow costs one line. */
struct flow {
	/* The key: client and server address (an IPv4 address is the
	 * first 4 of its 16 bytes, the rest 0: pkt.h), ports_word(), the
	 * protocol: key_is() compares them a word at a time. */
	uint8_t ca[16], sa[16];
	uint32_t ports;
	uint8_t proto;
	uint8_t state;		/* enum flow_state */
	bool dropped : 1;
	/* TCP Fast Open: the SYN carried the first bytes. The flow keeps
	 * its stream (g) once settled, so that later bytes at the same
	 * offsets are compared with them: a server that did not take the
	 * SYN's data gets them again in a segment. */
	bool syn_data : 1;
	/* TCP: the server sent a FIN or RST: a SYN with another sequence
	 * number may start a new connection on these ports. */
	bool closed : 1;
	bool quic : 1;
	/* The marks of the client's first packet (TCP: the SYN's, struct
	 * seg_marks; QUIC: the first Initial's TTL), that its own packets
	 * share and the fakes a server drops do not: its TTL (hop limit),
	 * a timestamp (TSval in syn_tsval), a TCP MD5 or AO signature. */
	bool syn_ts : 1;
	bool syn_sig : 1;
	uint8_t syn_ttl;
	union {
		struct {
			uint32_t isn;	 /* TCP: the client's first data
					  * byte's seq */
			union {
				uint32_t judged;    /* FL_DONE: client
						     * bytes the name
						     * stands for */
				uint32_t syn_tsval; /* before: the SYN's
						     * timestamp */
			};
		};
		uint64_t dcid;	/* QUIC: dcid_hash() of the Destination
				 * Connection ID of the Initials its name
				 * is read from */
	};
	struct gathering *g;	/* FL_GATHER: the stream, once it needs one;
				 * FL_DONE: a syn_data flow's stream */
	struct pkt_names names;	/* FL_DONE: the answer */
};
/* With the flows on a line boundary (after 16 bytes a slot, 8 slots a
 * bucket, from a page boundary) every flow starts a line. */
_Static_assert(sizeof(struct flow) % 64 == 0 &&
	       offsetof(struct flow, names.n.name) < 64,
	       "a flow's first line holds all but its name's bytes");

struct flowtab {
	struct flow *f;
	uint64_t *hs;		/* per flow: its key hash, 0 when free */
	uint64_t *seen;		/* per flow: last seen (monotonic ns) */
	uint8_t *quic_in;	/* per bucket: its QUIC flows (UDP flows) */
	size_t n_quic;		/* QUIC flows in all */
	size_t n_buckets;
	uint64_t seed;		/* hash_flow() */
	uint64_t timeout_ns;
	uint16_t dns_ports[FLOW_DNS_PORTS_MAX];
	unsigned n_dns;
	struct flow_counters c;
};

void flowtab_set_dns_ports(struct flowtab *t, const uint16_t *dns_ports,
			   unsigned n_dns)
{
	if (n_dns > FLOW_DNS_PORTS_MAX)
		n_dns = FLOW_DNS_PORTS_MAX;	/* the config allows no more */
	memcpy(t->dns_ports, dns_ports, n_dns * sizeof(*dns_ports));
	t->n_dns = n_dns;
}

void flowtab_set_timeout(struct flowtab *t, unsigned timeout_s)
{
	t->timeout_ns = (uint64_t)timeout_s * 1000000000ull;
}

void flowtab_set_seed(struct flowtab *t, uint64_t seed)
{
	t->seed = seed;
}

/* Flows the table holds. */
static size_t slots(const struct flowtab *t)
{
	return t->n_buckets * WAYS;
}

/* The flows' hashes, their times, then the flows: one allocation, in
 * whole huge pages (2 MB) when it is bigger than one, so that no part
 * of it is left on small pages. */
static size_t table_bytes(const struct flowtab *t)
{
	size_t n = slots(t) * (sizeof(*t->f) + sizeof(*t->hs) +
			       sizeof(*t->seen));

	return n > BIGMEM_HUGE ?
		(n + BIGMEM_HUGE - 1) / BIGMEM_HUGE * BIGMEM_HUGE : n;
}

static bool dns_port(const struct flowtab *t, uint16_t port)
{
	for (unsigned i = 0; i < t->n_dns; i++)
		if (t->dns_ports[i] == port)
			return true;
	return false;
}

struct flowtab *flowtab_new(size_t size, unsigned timeout_s,
			    const uint16_t *dns_ports, unsigned n_dns)
{
	struct flowtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->n_buckets = size / WAYS ? size / WAYS : 1;
	flowtab_set_timeout(t, timeout_s);
	flowtab_set_dns_ports(t, dns_ports, n_dns);
	if (getrandom(&t->seed, sizeof(t->seed), GRND_NONBLOCK) !=
	    sizeof(t->seed))
		t->seed = (uint64_t)(uintptr_t)t ^ 0x9e3779b97f4a7c15ull;
	/* One mapping, on huge pages when it is big (bigmem.h): the
	 * hashes and times alone (16 bytes a flow) would be small pages,
	 * a TLB entry each, and so would a mapping's last part short of a
	 * whole huge page. */
	t->hs = bigmem_alloc(table_bytes(t));
	t->quic_in = calloc(t->n_buckets, sizeof(*t->quic_in));
	if (!t->hs || !t->quic_in) {
		flowtab_free(t);
		return NULL;
	}
	t->seen = t->hs + slots(t);
	t->f = (struct flow *)(t->seen + slots(t));
	/* The whole bound now: no page fault waits on a packet later. */
	bigmem_prefault(t->hs, table_bytes(t));
	return t;
}

static size_t slot_of(const struct flowtab *t, const struct flow *f)
{
	return (size_t)(f - t->f);
}

static void touch(struct flowtab *t, const struct flow *f, uint64_t now)
{
	t->seen[slot_of(t, f)] = now;
}

/* F's stream buffer freed, if it has one (gather_buf() made it). */
static void free_stream(struct flowtab *t, struct flow *f)
{
	if (!f->g)
		return;
	free(f->g);
	f->g = NULL;
	t->c.pending--;
}

/* The counters of a name settled (or of a DNS query judged): STATE's. */
static void count_name(struct flowtab *t, uint8_t state)
{
	if (state == PKT_PRESENT)
		t->c.names++;
	else if (state == PKT_INCOMPLETE)
		t->c.incomplete++;
}

static void flow_clear(struct flowtab *t, struct flow *f)
{
	free_stream(t, f);
	if (f->state != FL_FREE)
		t->c.flows--;
	if (f->quic) {
		t->quic_in[slot_of(t, f) / WAYS]--;
		t->n_quic--;
	}
	/* All but the name's bytes: they are written with its length. */
	memset(f, 0, offsetof(struct flow, names.n.name));
	f->names.n.name[0] = '\0';
	t->hs[slot_of(t, f)] = 0;
	t->seen[slot_of(t, f)] = 0;
}

void flowtab_free(struct flowtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->f && i < slots(t); i++)
		free(t->f[i].g);
	bigmem_free(t->hs, table_bytes(t));
	free(t->quic_in);
	free(t);
}

const struct flow_counters *flowtab_counters(const struct flowtab *t)
{
	return &t->c;
}

static void set(struct pkt_names *o, uint8_t state, uint8_t proto)
{
	o->state = state;
	o->proto = proto;
	o->n.len = 0;
	o->n.name[0] = '\0';
	o->n.ech = false;
	o->n.qtype = 0;
}

/* A packet's names that cannot be read (PROTO's, or every protocol's):
 * INCOMPLETE, and counted. */
static void unseen(struct flowtab *t, struct pkt_names *o, uint8_t proto)
{
	set(o, PKT_INCOMPLETE, proto);
	t->c.incomplete++;
}

/*
 * A packet F's server discards (a decoy: a bad checksum, data without
 * ACK, another connection's QUIC datagram) or that is not F's to change
 * (a SYN with another sequence number): INCOMPLETE itself, counted, and F
 * not handed back unless already dropped, so that a drop of this packet
 * does not drop the flow (flow_note_drop()): anybody who knows the ports
 * can send one, and the server's connection goes on without it. F may be
 * NULL (no flow of its ports yet).
 */
static void decoy(struct flowtab *t, struct flow *f, struct pkt_names *o,
		  uint8_t proto, struct flow **fp)
{
	unseen(t, o, proto);
	*fp = f && f->dropped ? f : NULL;
}

/* The transport payload in the copy: its start, bytes copied and bytes in
 * the packet; false when the transport header is not all there, or the
 * packet is the first of IP fragments (its payload's rest is in the
 * others: the kernel reassembles only where conntrack or defrag runs).
 * Inlined: every packet of a flow asks, and a call was a fifth of its
 * cost. */
static inline __attribute__((always_inline)) bool
l4_payload(const struct pkt *p, const uint8_t **data, uint32_t *copied,
	   uint32_t *len)
{
	const uint8_t *th;
	uint32_t hl;

	if (p->l4 != PKT_PRESENT || p->fragment || p->first_fragment ||
	    !p->payload)
		return false;
	th = p->payload + (p->payload_len - p->th_copied);
	if (p->l4proto == IPPROTO_UDP)
		hl = 8;
	else if (p->th_copied >= 13)
		hl = (uint32_t)(th[12] >> 4) * 4;
	else
		return false;
	if (hl < (p->l4proto == IPPROTO_UDP ? 8u : 20u) || p->th_copied < hl ||
	    p->th_len < hl)
		return false;
	*data = th + hl;
	*copied = p->th_copied - hl;
	*len = p->th_len - hl;
	return true;
}

static void from_result(struct pkt_names *o, enum name_result r,
			uint8_t proto, const struct name_out *n)
{
	switch (r) {
	case NAME_DONE:
		set(o, PKT_PRESENT, proto);
		o->n.len = n->len;
		o->n.qtype = n->qtype;
		o->n.ech = n->ech;
		memcpy(o->n.name, n->name, (size_t)n->len + 1);
		break;
	case NAME_NOT:
		set(o, PKT_ABSENT, NP_NONE);
		break;
	case NAME_MORE:
		set(o, NAMES_PENDING, proto);
		break;
	case NAME_BAD:
		set(o, PKT_INCOMPLETE, proto);
		break;
	}
}

void flow_packet_names(const struct flowtab *t, const struct pkt *p,
		       struct pkt_names *o)
{
	const uint8_t *d;
	uint32_t copied, len;
	struct name_out n;
	enum name_result r;

	set(o, PKT_ABSENT, NP_NONE);
	if (p->l4 == PKT_INCOMPLETE) {
		set(o, PKT_INCOMPLETE, NP_NONE);
		return;
	}
	if (p->l4proto != IPPROTO_UDP && p->l4proto != IPPROTO_TCP)
		return;
	if (!l4_payload(p, &d, &copied, &len)) {
		set(o, PKT_INCOMPLETE, NP_NONE);
		return;
	}
	if (p->l4proto != IPPROTO_UDP || !dns_port(t, p->dport))
		return;
	r = name_dns_udp(d, copied, &n);
	if (r == NAME_BAD && copied < len)
		r = NAME_BAD;	/* cut by copy-range: unseen, not absent */
	from_result(o, r == NAME_MORE ? NAME_BAD : r, NP_DNS, &n);
}

/* P's two ends in the flow key's order: the client's, then the
 * server's (P is from the client when FROM_CLIENT). */
struct ends {
	const uint8_t *ca, *sa;
	uint16_t cp, sp;
};

static struct ends ends_of(const struct pkt *p, bool from_client)
{
	if (from_client)
		return (struct ends){ p->saddr, p->daddr, p->sport, p->dport };
	return (struct ends){ p->daddr, p->saddr, p->dport, p->sport };
}

/* The two ports of E as one word: the client's, then the server's. */
static uint32_t ports_word(const struct ends *e)
{
	return (uint32_t)e->cp << 16 | e->sp;
}

/* F's key: P's flow (from the client when FROM_CLIENT). */
static void make_key(const struct pkt *p, bool from_client, struct flow *f)
{
	struct ends e = ends_of(p, from_client);

	memcpy(f->ca, e.ca, 16);
	memcpy(f->sa, e.sa, 16);
	f->ports = ports_word(&e);
	f->proto = p->l4proto;
}

static uint64_t word_at(const uint8_t *b)
{
	uint64_t w;

	memcpy(&w, b, sizeof(w));
	return w;
}

static uint64_t hash_step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ h >> 32;
}

/* The hash of P's flow key (make_key(P, FROM_CLIENT)), seeded per table
 * so that flows cannot be chosen from outside to share a bucket; read
 * from P's fields a word at a time (not from the key's bytes, just
 * written one by one). An IPv4 address is the first 4 of its 16 bytes,
 * the rest 0 (pkt.h): both go in one step, the zero words in none (each
 * step waits for the one before; four took a tenth of a TCP segment's
 * user time). Never 0 (a free slot). Inlined, as l4_payload(). */
static inline __attribute__((always_inline)) uint64_t
hash_flow(const struct flowtab *t, const struct pkt *p, bool from_client)
{
	struct ends e = ends_of(p, from_client);
	uint64_t h = t->seed;

	if (p->l3_family == AF_INET) {
		h = hash_step(h, word_at(e.ca) | word_at(e.sa) << 32);
	} else {
		h = hash_step(h, word_at(e.ca));
		h = hash_step(h, word_at(e.ca + 8));
		h = hash_step(h, word_at(e.sa));
		h = hash_step(h, word_at(e.sa + 8));
	}
	h = (h ^ (p->l4proto | (uint64_t)ports_word(&e) << 8)) *
	    0xc4ceb9fe1a85ec53ull;
	/* A product's top bits, which pick the bucket (bucket_of()), move
	 * by a near-whole fraction of the range from one port to the next
	 * (C << 24 is about 0.993 of it): ports a client takes in turn
	 * shared a bucket. Mixed again (SplitMix64's last steps), every
	 * bit of the key moves them. */
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h ? h : 1;
}

/* The hash of a QUIC Destination Connection ID (N <= 20 bytes at D),
 * keyed by the table's seed as the flow keys are: no DCID can be chosen
 * from outside to pass for another. */
static uint64_t dcid_hash(const struct flowtab *t, const uint8_t *d,
			  size_t n)
{
	uint8_t b[24] = { 0 };
	uint64_t h = hash_step(t->seed ^ 0x7175696364636964ull, n);

	memcpy(b, d, n);
	for (size_t i = 0; i < n; i += 8)
		h = hash_step(h, word_at(b + i));
	return h;
}

/* The first slot of H's bucket: H scaled to the bucket count (no
 * division on the packet path; the table's size need not be a power of
 * two). */
static size_t bucket_of(const struct flowtab *t, uint64_t h)
{
#ifdef __SIZEOF_INT128__
	return (size_t)(((unsigned __int128)h * t->n_buckets) >> 64) * WAYS;
#else
	return (size_t)(h % t->n_buckets) * WAYS;
#endif
}

/* The lines of the bucket of hash H, into W (bigmem_fetch() asks for
 * them); without W, nothing. */
static void want_bucket(const struct flowtab *t, uint64_t h,
			struct bigmem_wants *w)
{
	size_t b;

	if (!w)
		return;
	b = bucket_of(t, h);
	bigmem_want(w, &t->hs[b]);
	bigmem_want(w, &t->seen[b]);
}

/* Is F's key P's flow (make_key(P, FROM_CLIENT))? A word at a time,
 * without a branch between them. */
static inline __attribute__((always_inline)) bool
key_is(const struct flow *f, const struct pkt *p, bool from_client)
{
	struct ends e = ends_of(p, from_client);

	return ((uint64_t)((f->ports ^ ports_word(&e)) |
			   (uint32_t)(f->proto ^ p->l4proto)) |
		(word_at(f->ca) ^ word_at(e.ca)) |
		(word_at(f->ca + 8) ^ word_at(e.ca + 8)) |
		(word_at(f->sa) ^ word_at(e.sa)) |
		(word_at(f->sa + 8) ^ word_at(e.sa + 8))) == 0;
}

/* Does slot S hold P's flow, key hash H? */
static inline __attribute__((always_inline)) bool
slot_is(const struct flowtab *t, size_t s, const struct pkt *p,
	bool from_client, uint64_t h)
{
	/* A free slot's hash is 0, never a flow's. */
	return t->hs[s] == h && key_is(&t->f[s], p, from_client);
}

/* The slot of P's flow (key hash H) in bucket B, or -1. */
static ptrdiff_t scan(const struct flowtab *t, size_t b, const struct pkt *p,
		      bool from_client, uint64_t h)
{
	for (size_t i = b; i < b + WAYS; i++)
		if (slot_is(t, i, p, from_client, h))
			return (ptrdiff_t)i;
	return -1;
}

/* The flow of P's key (make_key(P, FROM_CLIENT)), hash H; HINT: the
 * slot flow_ahead_line() found it in + 1, or 0 (the flows judged since
 * may have moved it: the slot is checked, and the bucket scanned if it
 * is not there). */
static inline __attribute__((always_inline)) struct flow *
lookup(struct flowtab *t, const struct pkt *p, bool from_client, uint64_t h,
       uint64_t now, uint32_t hint)
{
	ptrdiff_t s = (ptrdiff_t)hint - 1;
	struct flow *f;

	if (!hint || (size_t)s >= slots(t) ||
	    !slot_is(t, (size_t)s, p, from_client, h))
		s = scan(t, bucket_of(t, h), p, from_client, h);
	if (s < 0)
		return NULL;
	f = &t->f[s];
	if (now - t->seen[s] > t->timeout_ns) {
		flow_clear(t, f);	/* idle too long: forgotten */
		return NULL;
	}
	return f;
}

/* May a new flow take slot S: free, or its flow idle too long? */
static bool slot_open(const struct flowtab *t, size_t s, uint64_t now)
{
	return !t->hs[s] || now - t->seen[s] > t->timeout_ns;
}

/* The slot of bucket B a new flow takes: a free or idle one, else the
 * least recently seen. */
static size_t new_slot(const struct flowtab *t, size_t b, uint64_t now)
{
	size_t v = b;

	for (size_t i = b; i < b + WAYS; i++) {
		if (slot_open(t, i, now))
			return i;
		if (t->seen[i] < t->seen[v])
			v = i;
	}
	return v;
}

/* A new flow's slot in bucket B: FRESH - 1, flow_ahead_line()'s choice,
 * when that slot of B is still open (the packets judged since may have
 * taken it), else new_slot()'s. */
static size_t fresh_slot(const struct flowtab *t, size_t b, uint32_t fresh,
			 uint64_t now)
{
	if (fresh && fresh - 1 - b < WAYS && slot_open(t, fresh - 1, now))
		return fresh - 1;
	return new_slot(t, b, now);
}

/* A new flow for P, hash H, in a free or idle slot, else in the
 * bucket's least recently seen (an eviction); FRESH: flow_ahead.fresh,
 * or 0. */
static struct flow *insert(struct flowtab *t, const struct pkt *p,
			   bool from_client, uint64_t h, uint64_t now,
			   uint32_t fresh)
{
	size_t v = fresh_slot(t, bucket_of(t, h), fresh, now);
	struct flow *f;

	f = &t->f[v];
	/* A free slot's flow is clear already (flow_clear() frees a slot):
	 * its line is written, not first read. */
	if (t->hs[v]) {
		if (now - t->seen[v] <= t->timeout_ns)
			t->c.evictions++;
		flow_clear(t, f);
	}
	t->c.created++;
	t->hs[v] = h;
	t->seen[v] = now;
	make_key(p, from_client, f);
	f->state = FL_GATHER;
	t->c.flows++;
	return f;
}

/* F's name is settled as N; D (LEN bytes) is the start of its stream. */
static void finish(struct flowtab *t, struct flow *f,
		   const struct pkt_names *n, const uint8_t *d, size_t len)
{
	if (!f->quic)		/* TCP: judged was the SYN's timestamp */
		f->judged = n->proto == NP_DNS && n->state == PKT_PRESENT &&
			    len >= 2 ? 2u + (uint32_t)(d[0] << 8 | d[1]) : 0;
	if (!f->syn_data || n->state == PKT_INCOMPLETE)
		free_stream(t, f);
	f->state = FL_DONE;
	names_copy(&f->names, n);
	count_name(t, n->state);
}

/* A gathering buffer for F; false when too many flows gather at once. */
static bool gather_buf(struct flowtab *t, struct flow *f)
{
	if (f->g)
		return true;
	if (t->c.pending >= FLOW_PENDING_MAX)
		return false;
	f->g = malloc(sizeof(*f->g) + name_stream_bytes(FLOW_GATHER));
	if (!f->g)
		return false;
	t->c.pending++;
	name_stream_init(&f->g->st, f->g->mem, FLOW_GATHER);
	return true;
}

static uint16_t server_port(const struct flow *f)
{
	return (uint16_t)f->ports;
}

/* The name in the first LEN bytes D of the client stream of a flow to
 * server port DPORT (QUIC: its CRYPTO stream). */
static enum name_result parse_stream(const struct flowtab *t, bool quic,
				     uint16_t dport, const uint8_t *d,
				     size_t len, struct name_out *n,
				     uint8_t *proto)
{
	if (quic) {
		*proto = NP_TLS;
		return name_tls_handshake(d, len, n);
	}
	if (dns_port(t, dport)) {
		*proto = NP_DNS;
		return name_dns_tcp(d, len, n);
	}
	if (len && d[0] == 0x16) {
		*proto = NP_TLS;
		return name_tls_stream(d, len, n);
	}
	*proto = NP_HTTP;
	return name_http_host(d, len, n);
}

/*
 * The first bytes of a flow that has gathered nothing yet, read where they
 * are: a ClientHello, request head or DNS query in one segment needs no
 * buffer. True when that settled the flow.
 */
static bool settle_at_once(struct flowtab *t, struct flow *f,
			   const uint8_t *d, uint32_t n, bool cut,
			   const struct pkt_names *ahead, struct pkt_names *o)
{
	struct name_out name;
	enum name_result r;
	uint8_t proto = NP_NONE;

	if (ahead && ahead->state == PKT_PRESENT) {
		/* flow_ahead() parsed these very bytes with
		 * parse_stream(), and they were whole. */
		names_copy(o, ahead);
		finish(t, f, o, d, n);
		return true;
	}
	if (n > FLOW_GATHER) {	/* what a buffer would hold, no more */
		n = FLOW_GATHER;
		cut = true;
	}
	r = parse_stream(t, f->quic, server_port(f), d, n, &name, &proto);
	if (r == NAME_MORE && cut)
		r = NAME_BAD;	/* past the copy or the limit: unseen */
	if (r == NAME_MORE)
		return false;
	from_result(o, r, proto, &name);
	finish(t, f, o, d, n);
	return true;
}

/* New bytes at OFF for gathering flow F: settle it if they tell. */
static void gather(struct flowtab *t, struct flow *f, uint64_t off,
		   const uint8_t *d, uint32_t n, bool cut,
		   const struct pkt_names *ahead, struct pkt_names *o)
{
	struct name_out name;
	enum name_result r;
	uint8_t proto = NP_NONE;
	int rc;

	if (!f->g && off == 0 && !f->syn_data &&
	    settle_at_once(t, f, d, n, cut, ahead, o))
		return;
	if (!gather_buf(t, f)) {
		set(o, PKT_INCOMPLETE, NP_NONE);
		finish(t, f, o, NULL, 0);
		return;
	}
	rc = name_stream_put(&f->g->st, off, d, n);
	if (rc < 0) {		/* a retransmission with other bytes */
		set(o, PKT_INCOMPLETE, NP_NONE);
		finish(t, f, o, NULL, 0);
		return;
	}
	r = parse_stream(t, f->quic, server_port(f), f->g->st.buf,
			 f->g->st.contig, &name, &proto);
	/* Past the copy or the limit: unseen. So too bytes past the
	 * buffer (rc 1) while the name is not whole before them (a hole):
	 * INCOMPLETE now, not pending for ever on a hole the client need
	 * never fill (nfqd.conf(5) NAMES: "past the 8192 bytes"). */
	if (r == NAME_MORE && (cut || rc > 0 || f->g->st.contig == f->g->st.cap)) {
		r = NAME_BAD;
		if (!f->g->st.contig)	/* not even the protocol is known */
			proto = NP_NONE;
	}
	from_result(o, r, proto, &name);
	if (r != NAME_MORE)
		finish(t, f, o, f->g->st.buf, f->g->st.contig);
}

/* The sequence number of TCP segment P (l4_payload() said it has one). */
static uint32_t tcp_seq(const struct pkt *p)
{
	const uint8_t *th = p->payload + (p->payload_len - p->th_copied);

	return (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 |
	       (uint32_t)th[6] << 8 | th[7];
}

/* One's complement sum of N bytes at D, 4 at a time in the machine's
 * order (RFC 1071: the words' byte order only swaps the bytes of the
 * folded sum, and a right checksum folds to 0xffff either way). */
static uint64_t sum_native(uint64_t sum, const uint8_t *d, uint32_t n)
{
	uint8_t last[2] = { 0, 0 };
	uint32_t w;
	uint16_t h;

	for (; n >= 4; d += 4, n -= 4) {
		memcpy(&w, d, sizeof(w));
		sum += w;
	}
	if (n >= 2) {
		memcpy(&h, d, sizeof(h));
		sum += h;
		d += 2;
		n -= 2;
	}
	if (n) {
		last[0] = d[0];
		memcpy(&h, last, sizeof(h));
		sum += h;
	}
	return sum;
}

/* Is TCP or UDP packet P's checksum right? False when it is wrong, or
 * cannot be checked (the segment is not all in the copy); an IPv4 UDP
 * checksum of 0 is none. Only for packets whose bytes would be gathered,
 * and the kernel had not verified (pkt.h PKT_CSUM_UNVERIFIED). */
static bool l4_csum_ok(const struct pkt *p)
{
	const uint8_t *th = p->payload + (p->payload_len - p->th_copied);
	uint32_t alen = p->l3_family == AF_INET6 ? 16 : 4;
	uint64_t sum;

	if (p->th_copied != p->th_len || p->th_len > 0xffff)
		return false;
	if (p->l4proto == IPPROTO_UDP && alen == 4 && p->th_len >= 8 &&
	    !th[6] && !th[7])
		return true;
	sum = sum_native(0, p->saddr, alen);
	sum = sum_native(sum, p->daddr, alen);
	sum += htons(p->l4proto) + htons((uint16_t)p->th_len);
	sum = sum_native(sum, th, p->th_len);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* Packet P's IPv4 TTL or IPv6 hop limit. */
static uint8_t ip_ttl(const struct pkt *p)
{
	return p->payload[p->l3_family == AF_INET6 ? 7 : 8];
}

/* What a TCP segment says of its sender (the SYN's, kept in the flow). */
struct seg_marks {
	uint8_t ttl;		/* IPv4 TTL, IPv6 hop limit */
	bool ts;		/* a timestamp option, of TSVAL */
	bool sig;		/* a TCP MD5 (RFC 2385) or AO (RFC 5925) option */
	uint32_t tsval;
};

/* The newest timestamp of pending flow F's SYNs and handshake: M's, if
 * newer. */
static void ts_newer(struct flow *f, const struct seg_marks *m)
{
	if (m->ts && (!f->syn_ts || (int32_t)(m->tsval - f->syn_tsval) > 0)) {
		f->syn_ts = true;
		f->syn_tsval = m->tsval;
	}
}

/* The marks of TCP segment P (l4_payload() said it has one): the TTL,
 * and the options in the copy, read as far as they are well formed. */
static void seg_marks(const struct pkt *p, struct seg_marks *m)
{
	const uint8_t *th = p->payload + (p->payload_len - p->th_copied);
	uint32_t end = (uint32_t)(th[12] >> 4) * 4u, i = 20, len;

	m->ttl = ip_ttl(p);
	m->ts = m->sig = false;
	m->tsval = 0;
	if (end > p->th_copied)
		end = p->th_copied;
	while (i < end && th[i] != 0) {		/* 0: end of options */
		if (th[i] == 1) {			/* NOP */
			i++;
			continue;
		}
		if (i + 1 >= end || (len = th[i + 1]) < 2 || i + len > end)
			break;
		if (th[i] == 8 && len == 10) {
			m->ts = true;
			m->tsval = (uint32_t)th[i + 2] << 24 |
				   (uint32_t)th[i + 3] << 16 |
				   (uint32_t)th[i + 4] << 8 | th[i + 5];
		} else if ((th[i] == 19 && len == 18) || th[i] == 29) {
			m->sig = true;	/* as Linux reads them */
		}
		i += len;
	}
}

/*
 * Does a TTL lower than the flow's first packet's make P a fake? Only
 * where P goes on to another host (the forward and output hooks, and
 * postrouting): a packet at prerouting may be for this host, and one at
 * input is, and this host's stack takes it whatever its TTL.
 */
static bool ttl_tells(const struct pkt *p)
{
	return p->hook != NF_INET_PRE_ROUTING && p->hook != NF_INET_LOCAL_IN;
}

/*
 * Is client segment P of pending flow F a fake, one the server drops
 * while a box on the way (nfqd) sees it, as DPI evasion tools send a
 * decoy ClientHello before the real one? A TTL lower than the SYN's (it
 * dies on the way: the client's own segments come the SYN's way), a
 * signature the SYN had not (a server without the key drops it), a
 * timestamp the server's PAWS check drops (older than the newest of the
 * SYN's and the handshake's by more than 1, RFC 7323 5.3; Linux
 * TCP_PAWS_WINDOW).
 */
static bool marks_fake(const struct flow *f, const struct pkt *p,
		       const struct seg_marks *m)
{
	return (m->ttl < f->syn_ttl && ttl_tells(p)) ||
	       (m->sig && !f->syn_sig) ||
	       (f->syn_ts && m->ts && (int32_t)(f->syn_tsval - m->tsval) > 1);
}

static bool tcp_fake(const struct flow *f, const struct pkt *p)
{
	struct seg_marks m;

	seg_marks(p, &m);
	return marks_fake(f, p, &m);
}

/*
 * SYN P again, for pending flow F: a fake SYN (one that dies on the way,
 * or carries a signature) must not set the marks the client's own
 * segments are told by, so the marks are those of all its SYNs: the
 * highest TTL, a signature only if every one had it, the newest
 * timestamp.
 */
static void syn_again(struct flow *f, const struct pkt *p)
{
	struct seg_marks m;

	seg_marks(p, &m);
	if (m.ttl > f->syn_ttl)
		f->syn_ttl = m.ttl;
	f->syn_sig = f->syn_sig && m.sig;
	ts_newer(f, &m);
}

/* Keep SYN P's marks in its new flow F: those of all its SYNs, so far
 * the one. */
static void syn_marks(struct flow *f, const struct pkt *p)
{
	f->syn_ttl = 0;
	f->syn_sig = true;
	f->syn_ts = false;
	f->syn_tsval = 0;
	syn_again(f, p);
}

/*
 * Bytes *D (*COPIED of *LEN) at *OFF that begin before the stream's
 * start: the server takes those from the start on (zapret's seqovl), and
 * so does nfqd. False when none is past it (an old sequence number: the
 * server drops them all).
 */
static bool trim_start(uint32_t *off, const uint8_t **d, uint32_t *copied,
		       uint32_t *len)
{
	uint32_t skip = -*off;

	if ((int32_t)*off >= 0)
		return true;
	if (*len <= skip)
		return false;
	*d += skip < *copied ? skip : *copied;
	*copied = skip < *copied ? *copied - skip : 0;
	*len -= skip;
	*off = 0;
	return true;
}

/* Bytes D (N) at OFF of settled flow F, whose stream is kept (syn_data):
 * the same bytes again, or other bytes where the name was read (the
 * server did not take the SYN's data, or took other bytes): then the
 * flow's name is INCOMPLETE from now on. */
static void compare_kept(struct flowtab *t, struct flow *f, uint32_t off,
			 const uint8_t *d, uint32_t n, struct pkt_names *o)
{
	if (name_stream_put(&f->g->st, off, d, n) >= 0)
		return;
	set(o, PKT_INCOMPLETE, NP_NONE);
	finish(t, f, o, NULL, 0);
}

static void tcp_names(struct flowtab *t, const struct pkt *p, uint64_t now,
		      const struct flow_ahead *ahead, struct pkt_names *o,
		      struct flow **fp)
{
	const uint8_t *d;
	uint32_t copied, len, seq, off;
	bool syn = (p->tcp_flags & (TCPF_SYN | TCPF_ACK)) == TCPF_SYN;
	bool from_client = true;
	struct flow *f;
	uint64_t h;

	if (ahead && ahead->hash) {	/* flow_ahead() read these */
		d = ahead->data;
		copied = ahead->copied;
		len = ahead->len;
		h = ahead->hash;
	} else if (l4_payload(p, &d, &copied, &len)) {
		h = hash_flow(t, p, true);
	} else {
		set(o, PKT_INCOMPLETE, NP_NONE);
		return;
	}
	f = lookup(t, p, true, h, now, ahead ? ahead->slot : 0);
	if (!f && !syn) {
		h = hash_flow(t, p, false);
		f = lookup(t, p, false, h, now, 0);
		from_client = false;
	}
	if (p->flags & PKT_EXT_DISCARD) {
		/* The server discards it (pkt.h): a fake, SYN or not. */
		decoy(t, f, o, NP_NONE, fp);
		return;
	}
	seq = tcp_seq(p);
	if (syn) {
		/* A retransmitted SYN leaves the flow as it is; another
		 * sequence number is a new connection on the same ports
		 * unless the old one was dropped, or its name is still
		 * coming and the server has not closed it (its FIN or RST
		 * seen): the server may still hold the connection (it
		 * answers such a SYN with an ACK of it, RFC 5961), and a
		 * new start of a stream being gathered would be the
		 * client's say (its bytes sent before, judged pending, and
		 * the rest read from another start). Such a SYN is
		 * INCOMPLETE, the flow kept. A settled name is no longer
		 * the stream's to change: a new flow (a port reused). */
		if (f && f->isn == seq + 1) {
			if (f->state != FL_DONE)
				syn_again(f, p);
			goto known;
		}
		if (f && (f->dropped ||
			  (f->state != FL_DONE && !f->closed))) {
			decoy(t, f, o, NP_NONE, fp);
			return;
		}
		if (f)
			flow_clear(t, f);
		f = insert(t, p, true, h, now, ahead ? ahead->fresh : 0);
		f->isn = seq + 1;
		syn_marks(f, p);
		*fp = f;
		set(o, NAMES_PENDING, NP_NONE);
		if (len == 0)
			return;
		off = 0;	/* TCP Fast Open: the stream's first bytes */
		goto data;
	}
	if (!f) {		/* never seen its SYN: state lost */
		unseen(t, o, NP_NONE);
		return;
	}
known:
	touch(t, f, now);
	*fp = f;
	if (!from_client && (p->tcp_flags & (TCPF_FIN | TCPF_RST)))
		f->closed = true;
	/* Where the bytes go in the client's stream; a SYN's (TCP Fast
	 * Open) are its first. */
	off = seq + (syn ? 1u : 0u) - f->isn;
	if (f->state == FL_DONE) {
		names_copy(o, &f->names);
		if (f->g && from_client && len &&
		    trim_start(&off, &d, &copied, &len))
			compare_kept(t, f, off, d, copied, o);
		/* DNS over TCP: a later query on the connection is not the
		 * one judged; it cannot be read without following every
		 * message, so it is INCOMPLETE (nfqd.conf(5) NAMES). */
		if (o->proto == NP_DNS && from_client && len &&
		    off + len > f->judged)
			set(o, PKT_INCOMPLETE, NP_DNS);
		return;
	}
	set(o, NAMES_PENDING, NP_NONE);
	if (!from_client)
		return;
	if (len == 0) {
		/* The handshake's ACK: the server's PAWS check goes by its
		 * timestamp from now on. Only at the stream's start, so
		 * that nobody who does not know it moves the mark. */
		if (off == 0 && (p->tcp_flags & TCPF_ACK)) {
			struct seg_marks m;

			seg_marks(p, &m);
			if (!marks_fake(f, p, &m))
				ts_newer(f, &m);
		}
		return;
	}
data:
	if (!syn && (p->tcp_flags & (TCPF_ACK | TCPF_RST | TCPF_SYN)) !=
			    TCPF_ACK) {
		/* Data without ACK, or with RST or SYN: the server's TCP
		 * does not take it into the stream (RFC 9293 3.10.7.4: no
		 * ACK, dropped; RFC 5961: an RST or SYN that is not exactly
		 * at the next byte gets a challenge ACK, one that is resets
		 * the connection), so a decoy name in it must not settle the
		 * flow. Not gathered, and unseen for the rules. */
		decoy(t, f, o, NP_NONE, fp);
		return;
	}
	if ((p->flags & PKT_CSUM_UNVERIFIED) && !l4_csum_ok(p)) {
		/* A bad checksum: the server's TCP drops the segment, so a
		 * decoy name in it must not settle the flow either. */
		decoy(t, f, o, NP_NONE, fp);
		return;
	}
	if (!syn && (tcp_fake(f, p) || (int32_t)off >= FLOW_GATHER)) {
		/* A fake, or bytes past what a flow gathers, which
		 * anybody who knows the ports could send: the packet's
		 * own INCOMPLETE, the flow's name still to come. */
		decoy(t, f, o, NP_NONE, fp);
		return;
	}
	if ((int32_t)off < 0) {
		if (!trim_start(&off, &d, &copied, &len)) {
			decoy(t, f, o, NP_NONE, fp);
			return;
		}
		ahead = NULL;	/* its guess read the bytes before */
	}
	if (syn)
		f->syn_data = true;
	if (p->tcp_flags & TCPF_URG) {
		/* Urgent data: the server's kernel takes the urgent byte
		 * out of the stream (unless SO_OOBINLINE), so the stream
		 * the server reads is not the bytes sent: unseen. */
		set(o, PKT_INCOMPLETE, NP_NONE);
		finish(t, f, o, NULL, 0);
		return;
	}
	gather(t, f, off, d, copied, copied < len,
	       ahead ? &ahead->names : NULL, o);
	/* The segment that completes a DNS query and goes on (a second
	 * query behind it) is not judged on the first alone. */
	if (f->state == FL_DONE && o->proto == NP_DNS &&
	    o->state == PKT_PRESENT && off + len > f->judged)
		set(o, PKT_INCOMPLETE, NP_DNS);
}

/* A QUIC long-header packet (an Initial among them): D, COPIED bytes. */
static bool quic_long(const uint8_t *d, uint32_t copied)
{
	return copied >= 1 && (d[0] & 0x80);
}

/*
 * May a UDP packet with key hash H and payload D (COPIED bytes) be QUIC
 * that nfqd follows: a long-header packet (an Initial starts a flow), or
 * one of a bucket that holds a QUIC flow? Every UDP flow is a QUIC flow,
 * so for the others a lookup would find nothing: they are not looked up.
 */
static bool quic_may(const struct flowtab *t, uint64_t h, const uint8_t *d,
		     uint32_t copied)
{
	return quic_long(d, copied) || t->quic_in[bucket_of(t, h) / WAYS];
}

/* What a long-header datagram is to the QUIC flow F of its ports. */
enum quic_fate {
	QF_FLOW,	/* a packet of F's connection */
	QF_NEW,		/* the first Initial of another connection */
	QF_BAD,		/* another connection's, its name unreadable */
};

/*
 * The fate of a long-header datagram whose packets do not all carry F's
 * DCID (ONE_DCID: they all carry one other), name_quic_initial() said R
 * and Q of. A server tells connections apart by their DCID, nfqd flows
 * by their ports: an Initial sealed with its own DCID's keys and another
 * DCID than the one F's name was read from (a client that starts another
 * connection from the same port, after a Retry too) is judged on its own
 * name, never on F's. A client's Initials and Handshakes after the
 * server's first Initial carry the server's connection ID, under the
 * keys of its first DCID: they open with no key of their own, and no
 * server can start a connection with them.
 */
static enum quic_fate quic_other(const struct flowtab *t,
				 const struct flow *f, enum name_result r,
				 const struct quic_initial *q, bool one_dcid)
{
	if (r == NAME_NOT)
		return QF_FLOW;		/* no Initial: Handshake, 0-RTT */
	if (r == NAME_BAD)
		return f->state == FL_DONE && one_dcid && !q->n_opened ?
		       QF_FLOW : QF_BAD;
	if (dcid_hash(t, q->dcid, q->dcid_len) == f->dcid)
		return QF_FLOW;
	for (unsigned i = 0; i < q->n_frames; i++)
		if (q->frames[i].offset == 0)
			return QF_NEW;	/* a ClientHello's start */
	return QF_BAD;
}

/* QUIC flow F gathers again, for a connection of DCID hash DCID, from
 * packet P; a drop stays. */
static void quic_restart(struct flowtab *t, struct flow *f, uint64_t dcid,
			 const struct pkt *p)
{
	free_stream(t, f);
	f->state = FL_GATHER;
	f->dcid = dcid;
	f->syn_ttl = ip_ttl(p);
	set(&f->names, PKT_ABSENT, NP_NONE);
}

/*
 * Would the server's kernel drop UDP datagram P (l4_payload() said it
 * has a header), or read less of it than nfqd? An extension header the
 * host discards it for (pkt.h), a length field other than the datagram's
 * (a shorter one cuts it), an IPv6 checksum of 0 (RFC 8200 8.1), a bad
 * checksum where the kernel has not verified it.
 */
static bool udp_bad(const struct pkt *p)
{
	const uint8_t *th = p->payload + (p->payload_len - p->th_copied);

	if (p->flags & PKT_EXT_DISCARD)
		return true;
	if ((uint32_t)(th[4] << 8 | th[5]) != p->th_len)
		return true;
	if (p->l3_family == AF_INET6 && !th[6] && !th[7])
		return true;
	return (p->flags & PKT_CSUM_UNVERIFIED) && !l4_csum_ok(p);
}

/*
 * A long-header datagram P of QUIC flow F's connection (its DCID) with
 * another TTL than the flow's first Initial: a client's own datagrams
 * share one. A lower one is a fake that dies on the way (DPI evasion
 * tools send one for another name before the real Initial): the
 * packet's own INCOMPLETE. A higher one says the first was such a fake,
 * and the name read from it not the server's: the flow's name is
 * INCOMPLETE from now on. Only a sender who knows the DCID can do either.
 */
static void quic_fake(struct flowtab *t, struct flow *f, const struct pkt *p,
		      struct pkt_names *o, struct flow **fp)
{
	if (ip_ttl(p) < f->syn_ttl) {
		decoy(t, f, o, NP_TLS, fp);
		return;
	}
	*fp = f;
	set(o, PKT_INCOMPLETE, NP_TLS);
	finish(t, f, o, NULL, 0);
}

static void udp_names(struct flowtab *t, const struct pkt *p, uint64_t now,
		      const struct flow_ahead *ahead, struct pkt_names *o,
		      struct flow **fp)
{
	static __thread struct quic_initial q;
	const uint8_t *d, *dc;
	uint32_t copied, len;
	struct flow *f;
	enum name_result r;
	enum quic_fate fate = QF_FLOW;
	uint64_t h;
	bool lng, same = false;
	int n = -1;

	if (ahead)
		names_copy(o, &ahead->names);
	else
		flow_packet_names(t, p, o);
	if (o->proto == NP_DNS) {	/* a query, judged on its own */
		count_name(t, o->state);
		return;
	}
	if (!l4_payload(p, &d, &copied, &len) || dns_port(t, p->dport))
		return;
	if (!t->n_quic &&
	    (!quic_long(d, copied) || name_quic_foreign(d, copied)))
		return;		/* no QUIC flow, nor an Initial to start one */
	h = hash_flow(t, p, true);
	if (!quic_may(t, h, d, copied))
		return;
	f = lookup(t, p, true, h, now, 0);
	lng = quic_long(d, copied);
	if (f && lng) {
		n = name_quic_dcid(d, copied, &dc);
		same = n >= 0 && dcid_hash(t, dc, (size_t)n) == f->dcid;
	}
	if (same && ip_ttl(p) != f->syn_ttl && ttl_tells(p)) {
		touch(t, f, now);
		if (udp_bad(p))
			decoy(t, f, o, NP_TLS, fp);
		else
			quic_fake(t, f, p, o, fp);
		return;
	}
	if (f && f->state == FL_DONE && (!lng || same)) {
		touch(t, f, now);
		*fp = f;
		names_copy(o, &f->names);
		return;
	}
	if (lng && udp_bad(p)) {
		/* The server's kernel drops it: a fake. */
		decoy(t, f, o, NP_TLS, fp);
		return;
	}
	r = lng ? name_quic_initial(d, copied, &q) : NAME_NOT;
	if (f) {
		touch(t, f, now);
		*fp = f;
		if (lng && !same)
			fate = quic_other(t, f, r, &q, n >= 0);
		if (fate == QF_BAD) {
			decoy(t, f, o, NP_TLS, fp);
			return;
		}
		if (fate == QF_NEW)
			quic_restart(t, f, dcid_hash(t, q.dcid, q.dcid_len),
				     p);
		else if (f->state == FL_DONE) {
			names_copy(o, &f->names);
			return;
		}
	}
	if (r == NAME_NOT && f) {	/* other packets of a pending flow */
		/* Its Handshake and 0-RTT packets: a client sends no
		 * short-header packet (nor anything not QUIC) before the
		 * handshake, which needs the whole ClientHello. */
		if (lng && n >= 0)
			set(o, NAMES_PENDING, NP_TLS);
		else
			decoy(t, f, o, NP_TLS, fp);
		return;
	}
	if (r == NAME_NOT)
		return;		/* not a QUIC Initial: no name */
	if (r == NAME_BAD) {
		unseen(t, o, NP_TLS);
		return;
	}
	if (!f) {
		f = insert(t, p, true, h, now, 0);
		f->dcid = dcid_hash(t, q.dcid, q.dcid_len);
		f->syn_ttl = ip_ttl(p);
	}
	if (!f->quic) {
		t->quic_in[slot_of(t, f) / WAYS]++;
		t->n_quic++;
	}
	f->quic = true;
	touch(t, f, now);
	*fp = f;
	set(o, NAMES_PENDING, NP_TLS);
	for (unsigned i = 0; i < q.n_frames && f->state == FL_GATHER; i++)
		gather(t, f, q.frames[i].offset, q.plain + q.frames[i].pos,
		       q.frames[i].len, copied < len, NULL, o);
	if (f->state == FL_DONE)
		names_copy(o, &f->names);
}

/* flow_ahead()'s guess at a ClientHello in segment P's first COPIED of
 * LEN bytes D. Out of line: most segments are no TLS record, and its
 * name buffer made every segment's flow_ahead() pay for a bigger frame. */
static __attribute__((noinline)) void
ahead_hello(const struct flowtab *t, const struct pkt *p, const uint8_t *d,
	    uint32_t copied, uint32_t len, struct flow_ahead *out)
{
	struct name_out n;
	enum name_result r;
	uint8_t proto;

	r = parse_stream(t, false, p->dport, d, copied, &n, &proto);
	if (r == NAME_DONE)
		from_result(&out->names, NAME_DONE, proto, &n);
	out->more = r == NAME_MORE && proto == NP_TLS && copied == len;
}

void flow_ahead(const struct flowtab *t, const struct pkt *p,
		struct flow_ahead *out, struct bigmem_wants *w)
{
	const uint8_t *d;
	uint32_t copied, len;

	out->hash = 0;
	out->slot = 0;
	out->fresh = 0;
	out->more = false;
	if (p->l4proto != IPPROTO_TCP) {
		flow_packet_names(t, p, &out->names);
		return;
	}
	set(&out->names, PKT_ABSENT, NP_NONE);
	if (!l4_payload(p, &d, &copied, &len))
		return;
	out->data = d;
	out->copied = copied;
	out->len = len;
	out->hash = hash_flow(t, p, true);
	want_bucket(t, out->hash, w);
	/* What parse_stream() finds if this is the flow's start; only for
	 * what may be a TLS record (other data is not parsed here). */
	if (copied && copied <= FLOW_GATHER && d[0] == 0x16)
		ahead_hello(t, p, d, copied, len, out);
}

bool flow_ahead_pair(const struct flowtab *t, const struct pkt *a,
		     const struct flow_ahead *fa, const struct pkt *b,
		     const struct flow_ahead *fb, struct name_out *out)
{
	static __thread uint8_t buf[FLOW_GATHER];
	const uint8_t *da, *db;
	uint32_t ca, la, cb, lb;
	uint8_t proto;

	if (!fa->more || !fb->hash || fb->hash != fa->hash ||
	    fb->names.state == PKT_PRESENT ||
	    !l4_payload(a, &da, &ca, &la) || !l4_payload(b, &db, &cb, &lb) ||
	    !lb || cb != lb || la + lb > FLOW_GATHER ||
	    tcp_seq(b) != tcp_seq(a) + la)
		return false;
	memcpy(buf, da, la);
	memcpy(buf + la, db, lb);
	return parse_stream(t, false, b->dport, buf, la + lb, out, &proto) ==
		       NAME_DONE && proto == NP_TLS && out->len;
}

BIGMEM_PREFETCH_ONLY	/* out of line: prefetch.sh reads its body */
void flow_ahead_bucket(const struct flowtab *t, const struct pkt *p,
		       struct flow_ahead *ahead, uint64_t now_ns)
{
	bool syn = (p->tcp_flags & (TCPF_SYN | TCPF_ACK)) == TCPF_SYN;
	uint64_t h = ahead->hash;
	size_t b;

	b = bucket_of(t, h);
	for (size_t i = b; i < b + WAYS; i++) {
		if (t->hs[i] == h) {
			__builtin_prefetch(&t->f[i]);
			ahead->slot = (uint32_t)i + 1;
			return;
		}
	}
	if (syn) {
		size_t v = new_slot(t, b, now_ns);

		__builtin_prefetch(&t->f[v], 1);
		ahead->fresh = (uint32_t)v + 1;
	}
}

/*
 * Most segments of a flow, with less work than tcp_names(): segment P's
 * flow, if it is at the slot flow_ahead_line() noted (AHEAD), its name
 * settled and not DNS (a later query on it is judged by where it is in
 * the stream), not dropped, its stream not kept (syn_data: later bytes
 * are compared), not idle too long, and P no SYN. Such a
 * segment gets from tcp_names() just its flow's names; NULL: ask
 * tcp_names(). A hash in AHEAD means l4_payload() read P's header.
 */
static inline __attribute__((always_inline)) struct flow *
settled(struct flowtab *t, const struct pkt *p, uint64_t now,
	const struct flow_ahead *ahead)
{
	size_t s = (size_t)ahead->slot - 1;	/* no slot: past the end */
	struct flow *f;

	if (!ahead->hash || s >= slots(t) || (p->tcp_flags & TCPF_SYN) ||
	    !slot_is(t, s, p, true, ahead->hash))
		return NULL;
	f = &t->f[s];
	if (f->state != FL_DONE || f->dropped || f->names.proto == NP_DNS ||
	    f->g ||
	    now - t->seen[s] > t->timeout_ns)
		return NULL;
	return f;
}

void *flow_names(struct flowtab *t, const struct pkt *p, uint64_t now_ns,
		 const struct flow_ahead *ahead, struct pkt_names *out,
		 enum flow_fate *fate)
{
	struct flow *f = NULL;
	const uint8_t *d;
	uint32_t copied, len;

	*fate = FLOW_JUDGE;
	if (ahead && p->l4proto == IPPROTO_TCP &&
	    (f = settled(t, p, now_ns, ahead))) {
		touch(t, f, now_ns);
		names_copy(out, &f->names);
		return f;
	}
	set(out, PKT_ABSENT, NP_NONE);
	if (p->l4 == PKT_INCOMPLETE) {
		set(out, PKT_INCOMPLETE, NP_NONE);
		return NULL;
	}
	if (p->l4 != PKT_PRESENT || p->fragment)
		return NULL;
	if (p->l4proto == IPPROTO_TCP)
		tcp_names(t, p, now_ns, ahead, out, &f);
	else if (p->l4proto == IPPROTO_UDP)
		udp_names(t, p, now_ns, ahead, out, &f);
	/* A flow whose name is still coming can be only what its server
	 * port allows: DNS to a DNS port, else TLS or HTTP. The other
	 * protocols' matches find no name (ABSENT), not a pending one. */
	if (out->state == NAMES_PENDING && out->proto == NP_NONE && f)
		out->proto = dns_port(t, server_port(f)) ? NP_DNS :
			     NP_TLS | NP_HTTP;
	if (f && f->dropped) {
		*fate = FLOW_DROP;
		if (p->l4proto == IPPROTO_TCP &&
		    (p->tcp_flags & (TCPF_FIN | TCPF_RST)) &&
		    l4_payload(p, &d, &copied, &len) && len == 0)
			*fate = FLOW_PASS;
	}
	return f;
}

void flow_note_drop(void *f)
{
	if (f)
		((struct flow *)f)->dropped = true;
}

/* Move flow S of FROM into slot V of TO (free). */
static void move_flow(struct flowtab *to, size_t v, struct flowtab *from,
		      size_t s)
{
	to->f[v] = from->f[s];
	to->hs[v] = from->hs[s];
	to->seen[v] = from->seen[s];
	if (to->f[v].quic) {
		to->quic_in[v / WAYS]++;
		to->n_quic++;
	}
	from->f[s].g = NULL;	/* TO's now */
}

size_t flowtab_move(struct flowtab *to, struct flowtab *from)
{
	size_t evicted = 0;
	uint64_t now = 0;

	to->seed = from->seed;	/* the flows' hashes stay right */
	to->c = from->c;
	to->c.flows = to->c.pending = 0;
	/* Idle as seen from the last packet of all: idle now. (From each
	 * flow's own last packet, a flow seen before one already moved
	 * into its bucket found that one idle, its time past "now".) */
	for (size_t s = 0; s < slots(from); s++)
		if (from->hs[s] && from->seen[s] > now)
			now = from->seen[s];
	for (size_t s = 0; s < slots(from); s++) {
		size_t v;

		if (!from->hs[s] || now - from->seen[s] > from->timeout_ns)
			continue;	/* idle: not worth a slot */
		v = new_slot(to, bucket_of(to, from->hs[s]), now);
		if (to->hs[v] && !slot_open(to, v, now)) {
			evicted++;	/* a full bucket: the older goes */
			if (to->seen[v] > from->seen[s])
				continue;
		}
		if (to->hs[v])
			flow_clear(to, &to->f[v]);
		move_flow(to, v, from, s);
		to->c.flows++;
		to->c.pending += to->f[v].g != NULL;
	}
	to->c.evictions += evicted;
	flowtab_free(from);	/* and the streams of flows not moved */
	return evicted;
}

void flowtab_forget_drops(struct flowtab *t)
{
	for (size_t i = 0; i < slots(t); i++)
		t->f[i].dropped = false;
}
