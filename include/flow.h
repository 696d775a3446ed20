/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * flow.h - one queue worker's flow table for names (nfqd.conf(5) NAMES):
 * it gathers a TCP connection's first client bytes, and a QUIC
 * connection's CRYPTO frames across Initial packets, until the DNS query,
 * ClientHello or request head is complete, up to FLOW_GATHER bytes, and
 * remembers the name and a drop. Owned by one worker: no lock. Bounded:
 * a fixed number of flows (the least recently seen of a bucket is evicted)
 * and of gathering buffers.
 */
#ifndef NFQD_FLOW_H
#define NFQD_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"
#include "pkt.h"

#define FLOW_GATHER 8192	/* client bytes gathered for a name at most */
#define FLOW_PENDING_MAX 4096	/* flows gathering at once (buffers) */
#define FLOW_DNS_PORTS_MAX 16	/* ports whose packets are DNS queries */
/* How many packets before its flow_names() a packet's flow_ahead_line()
 * is called (src/queue.c, flows_ahead(); tests/fuzz/fuzz_flow.c judges
 * the same way). */
#define FLOW_AHEAD 2

struct flowtab;
struct bigmem_wants;

/* Counters; the owning worker writes, anyone may read (relaxed). */
struct flow_counters {
	uint64_t flows;		/* in the table now */
	uint64_t created;	/* flows made */
	uint64_t evictions;	/* live flows pushed out by new ones */
	uint64_t pending;	/* gathering now, or keeping the bytes
				 * their SYN carried: buffers */
	uint64_t names;		/* names found */
	uint64_t incomplete;	/* names that could not be found */
};

/* A table of SIZE flows (rounded up to a bucket), idle TIMEOUT_S; packets
 * to the N_DNS (1..FLOW_DNS_PORTS_MAX) ports DNS_PORTS are DNS queries. */
struct flowtab *flowtab_new(size_t size, unsigned timeout_s,
			    const uint16_t *dns_ports, unsigned n_dns);
/* The key hash's seed of an empty table T (flowtab_new() draws one at
 * random): tests/fuzz/fuzz_flow.c gives two tables the same, so that
 * they put the same flows in the same buckets. */
void flowtab_set_seed(struct flowtab *t, uint64_t seed);
/* Other DNS ports (a reload): the flows stay. */
void flowtab_set_dns_ports(struct flowtab *t, const uint16_t *dns_ports,
			   unsigned n_dns);
void flowtab_free(struct flowtab *t);

/* What becomes of a packet before any rule (flow_names()). */
enum flow_fate {
	FLOW_JUDGE,	/* judge it by the rules */
	FLOW_DROP,	/* its flow was dropped on its name: drop it */
	FLOW_PASS,	/* a FIN or RST without data of such a flow: let the
			 * server free the connection */
};

/* What flow_ahead() learnt of a packet, for flow_ahead_line() and
 * flow_names(). */
struct flow_ahead {
	uint64_t hash;		/* a TCP segment's flow key hash, as sent by
				 * the client; 0: no segment whose flow is
				 * looked up (not TCP, or unreadable) */
	const uint8_t *data;	/* with a hash: the segment's payload, */
	uint32_t copied, len;	/* its bytes copied and in the packet */
	uint32_t slot;		/* the slot flow_ahead_line() saw the flow
				 * in + 1; 0: none */
	uint32_t fresh;		/* a SYN of a flow not seen: the slot
				 * flow_ahead_line() chose for it + 1; 0:
				 * none */
	bool more;		/* a whole segment holding the start of a
				 * ClientHello, not all of it */
	/* Last: a packet without a name writes only its first bytes, in
	 * the line of the fields above. */
	struct pkt_names names;	/* what the packet alone shows */
};

/*
 * What PKT's names are (*OUT), gathering its bytes into its flow; NOW_NS a
 * monotonic clock; AHEAD what flow_ahead() said of PKT, or NULL. Returns
 * the flow's handle for flow_note_drop(), or NULL; *FATE says whether to
 * judge the packet at all.
 */
void *flow_names(struct flowtab *t, const struct pkt *pkt, uint64_t now_ns,
		 const struct flow_ahead *ahead, struct pkt_names *out,
		 enum flow_fate *fate);

/* The packet of flow F (from flow_names()) was dropped on its name. */
void flow_note_drop(void *f);

/* A reload's flow-timeout for T. */
void flowtab_set_timeout(struct flowtab *t, unsigned timeout_s);

/*
 * A reload's flow-table-size: the flows of FROM (freed) move into TO, a
 * new empty table, with their names, streams and counters; where TO's
 * bucket is full the least recently seen flow is evicted (counted).
 * Returns the flows evicted.
 */
size_t flowtab_move(struct flowtab *to, struct flowtab *from);

/* A new policy: every flow's packets are judged again (a drop noted by
 * flow_note_drop() was the old policy's). */
void flowtab_forget_drops(struct flowtab *t);

const struct flow_counters *flowtab_counters(const struct flowtab *t);

/*
 * Names of a packet on its own, no flow (a UDP DNS query to one of T's
 * DNS ports; else what one packet shows): used by flow_names().
 */
void flow_packet_names(const struct flowtab *t, const struct pkt *pkt,
		       struct pkt_names *out);

/*
 * A few packets before flow_names() of PKT, changing nothing: OUT->hash
 * gets the hash of a TCP segment's flow key (computed once for the
 * look-ahead and the lookup), OUT->names what PKT alone shows of its
 * names. For a UDP packet that is what flow_packet_names() says, and
 * flow_names() takes it instead of parsing the packet again; for a TCP
 * segment that holds a whole ClientHello (or, to a DNS port, a whole
 * query) it is that name, the guess that the segment starts its flow,
 * which the flow decides on later. Either way a name it finds (PRESENT)
 * is what the rules will likely look up: its memory can be asked for
 * early (policy_prefetch_name()). A TCP segment's flow bucket lines go
 * into W (NULL: nowhere), for the caller's bigmem_fetch().
 */
void flow_ahead(const struct flowtab *t, const struct pkt *pkt,
		struct flow_ahead *out, struct bigmem_wants *w);
/*
 * The name of a ClientHello that starts in TCP segment A and ends in B,
 * the segment that follows it on the same flow (flow_ahead() said FA of
 * A and FB of B), into *OUT: true if they hold one. A guess for the
 * look-ahead alone, made of the two segments as they are: the flow's own
 * name is what flow_names() gathers (a browser's ClientHello with a
 * post-quantum key share is two segments, often received together).
 */
bool flow_ahead_pair(const struct flowtab *t, const struct pkt *a,
		     const struct flow_ahead *fa, const struct pkt *b,
		     const struct flow_ahead *fb, struct name_out *out);
/*
 * A packet or two after flow_ahead() of PKT (AHEAD), its flow bucket's
 * lines asked for (bigmem_fetch()): ask for the line of the flow a TCP
 * segment will find there (and note its slot in AHEAD: flow_names()
 * looks there first), or that a SYN's new flow will take (NOW_NS as
 * flow_names(); noted too: flow_names() takes it if it is still free or
 * idle). PREV: what this said of the packet received just before PKT,
 * or NULL; a segment of the same flow (a burst) takes the slot PREV saw
 * or chose, whose line PREV asked for, without a look at the bucket.
 * Inline, as most segments of a burst end there; flow_ahead_bucket() is
 * the rest.
 */
void flow_ahead_bucket(const struct flowtab *t, const struct pkt *pkt,
		       struct flow_ahead *ahead, uint64_t now_ns);
static inline void flow_ahead_line(const struct flowtab *t,
				   const struct pkt *pkt,
				   struct flow_ahead *ahead,
				   const struct flow_ahead *prev,
				   uint64_t now_ns)
{
	if (!ahead->hash)
		return;		/* no segment flow_names() looks up */
	/* A hint, like any slot noted here: flow_names() checks it. */
	if (prev && prev->hash == ahead->hash &&
	    (pkt->tcp_flags & (TCPF_SYN | TCPF_ACK)) != TCPF_SYN &&
	    (prev->slot || prev->fresh)) {
		ahead->slot = prev->slot ? prev->slot : prev->fresh;
		return;
	}
	flow_ahead_bucket(t, pkt, ahead, now_ns);
}

#endif
