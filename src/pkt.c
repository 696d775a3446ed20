/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pkt.c - IPv4/IPv6 and transport header parsing, bounded by the copy: the
 * network and transport headers as nft finds them (nft_set_pktinfo_ipv4 /
 * _ipv6, ipv6_find_hdr), each field PRESENT, ABSENT or INCOMPLETE.
 */
#include <netinet/in.h>
/* after netinet/in.h, which it would otherwise clash with */
#include <linux/netfilter.h>
#include <string.h>

#include "pkt.h"

static uint16_t get16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* Packet length: the copy may not say more than the packet has. */
static uint32_t pkt_len(const struct pkt *p)
{
	return p->orig_len > p->payload_len ? p->orig_len : p->payload_len;
}

/* The transport header starts at THOFF (inside the packet): note how much
 * of it the copy and the packet hold, and read what the copy shows. */
static void set_transport(struct pkt *p, uint32_t thoff)
{
	const uint8_t *h = p->payload + thoff;

	p->l4 = PKT_PRESENT;
	if (p->fragment)
		return;
	p->th_len = pkt_len(p) - thoff;
	p->th_copied = p->payload_len > thoff ? p->payload_len - thoff : 0;
	if (p->th_copied >= PKT_TH_SPORT_END)
		p->sport = get16(h);
	if (p->th_copied >= PKT_TH_DPORT_END)
		p->dport = get16(h + 2);
	if (p->th_copied >= PKT_TH_FLAGS_END && p->l4proto == IPPROTO_TCP)
		p->tcp_flags = h[13];
	if (p->th_copied >= PKT_TH_TYPE_END && (p->l4proto == IPPROTO_ICMP ||
						p->l4proto == IPPROTO_ICMPV6))
		p->icmp_type = h[0];
}

/*
 * As nft_set_pktinfo_ipv4_validate(): ihl >= 5 and tot_len between the
 * header length and the packet length, or no transport protocol; that
 * nft would then match nothing, but nfqd calls it INCOMPLETE (fail
 * closed). The options need not be in the copy.
 */
static void parse_ipv4(struct pkt *p)
{
	const uint8_t *h = p->payload;
	uint32_t hlen, tot;

	if (p->payload_len < 20)
		return;
	p->l3 = PKT_PRESENT;
	p->ip_protocol = h[9];
	memcpy(p->saddr, h + 12, 4);
	memcpy(p->daddr, h + 16, 4);
	hlen = (uint32_t)(h[0] & 0x0f) * 4;
	tot = get16(h + 2);
	/* A total length of 0 is a BIG TCP GSO packet: the whole skb. */
	if (!tot)
		tot = pkt_len(p);
	if (hlen < 20 || tot > pkt_len(p) || tot < hlen)
		return;
	p->l4proto = h[9];
	p->fragment = get16(h + 6) & 0x1fff;
	p->first_fragment = !p->fragment && (get16(h + 6) & 0x2000);
	set_transport(p, hlen);
}

static bool ipv6_ext_hdr(uint8_t next)
{
	return next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING ||
	       next == IPPROTO_FRAGMENT || next == IPPROTO_AH ||
	       next == IPPROTO_NONE || next == IPPROTO_DSTOPTS;
}

/*
 * Does the host that Destination Options header E (HLEN bytes, in the
 * copy) is addressed to discard the packet (RFC 8200 4.2)? It does for
 * an option of a type it does not know whose two high bits are not 00,
 * or one that runs past the header. Linux knows Pad1, PadN and (Mobile
 * IPv6) the Home Address option, 0xc9.
 */
static bool dstopts_discard(const uint8_t *e, uint32_t hlen)
{
	for (uint32_t i = 2; i < hlen;) {
		uint8_t type = e[i];

		if (type == 0) {		/* Pad1 */
			i++;
			continue;
		}
		if (i + 2 > hlen || i + 2 + e[i + 1] > hlen)
			return true;
		if (type != 1 && type != 0xc9 && (type >> 6))
			return true;
		i += 2 + e[i + 1];
	}
	return false;
}

/* The last header of ipv6_find_hdr(): a protocol, ESP or "no next". */
static bool ipv6_last_hdr(uint8_t next)
{
	return !ipv6_ext_hdr(next) || next == IPPROTO_NONE;
}

/*
 * ipv6_find_hdr(skb, &thoff, -1, &frag_off, &flags = IP6_FH_F_AUTH), as
 * nft_set_pktinfo_ipv6() calls it, walked inside the copy. It stops at AH
 * (AH is the transport protocol then) and at a non-first fragment. Leaving
 * the copy, a header running past the packet's end and a chain longer than
 * PKT_MAX_EXTHDRS leave p->l4 INCOMPLETE. Like nft, it walks past a
 * hop-by-hop header that is not the first, or a destination option the
 * host does not know, and marks the packet PKT_EXT_DISCARD: the
 * receiving host discards it.
 */
static void walk_ipv6(struct pkt *p)
{
	const uint8_t *h = p->payload;
	uint32_t off = 40, len = pkt_len(p);
	uint8_t next = h[6];

	for (unsigned n = 0;; n++) {
		const uint8_t *e = h + off;
		uint32_t need, hlen;

		if (ipv6_last_hdr(next))
			break;
		if (n == PKT_MAX_EXTHDRS)
			return;
		if (n && next == IPPROTO_HOPOPTS)
			p->flags |= PKT_EXT_DISCARD;
		/* ipv6_find_hdr reads 4 bytes of these, 2 of the others. */
		need = next == IPPROTO_ROUTING || next == IPPROTO_FRAGMENT ?
		       4 : 2;
		if (off + need > p->payload_len || off + need > len)
			return;
		if (next == IPPROTO_AH)
			break;
		if (next == IPPROTO_FRAGMENT) {
			if (get16(e + 2) & 0xfff8) {
				/* A later fragment: its next header is the
				 * protocol, unless that is another extension
				 * header (nft: no protocol at all). */
				if (!ipv6_last_hdr(e[0])) {
					p->l4 = PKT_ABSENT;
					return;
				}
				p->l4proto = e[0];
				p->fragment = true;
				set_transport(p, off);
				return;
			}
			/* Offset 0: the first fragment if more follow. */
			if (get16(e + 2) & 1)
				p->first_fragment = true;
			hlen = 8;
		} else {
			hlen = ((uint32_t)e[1] + 1) * 8;
			if (next == IPPROTO_DSTOPTS &&
			    off + hlen <= p->payload_len &&
			    dstopts_discard(e, hlen))
				p->flags |= PKT_EXT_DISCARD;
		}
		next = e[0];
		off += hlen;
		if (off > len)
			return;
	}
	p->l4proto = next;
	set_transport(p, off);
}

static void parse_ipv6(struct pkt *p)
{
	const uint8_t *h = p->payload;
	uint32_t plen;

	if (p->payload_len < 40)
		return;
	p->l3 = PKT_PRESENT;
	memcpy(p->saddr, h + 8, 16);
	memcpy(p->daddr, h + 24, 16);
	/* plen 0 is a jumbogram (or a BIG TCP packet): the whole skb. */
	plen = get16(h + 4);
	if (plen && 40 + plen > pkt_len(p))
		return;
	walk_ipv6(p);
}

/*
 * The packet's family: the queue's. A bridge, ARP, netdev or unknown
 * queue family is no IP family, whatever the payload's first nibble says
 * (an ARP frame, a frame with its VLAN tag): 0. Only a packet built by
 * hand (NFPROTO_UNSPEC, which the kernel never sends) goes by the version
 * field.
 */
static uint8_t l3_family(const struct pkt *p)
{
	uint8_t version = p->payload_len ? p->payload[0] >> 4 : 0;

	if (p->family == NFPROTO_IPV4)
		return AF_INET;
	if (p->family == NFPROTO_IPV6)
		return AF_INET6;
	if (p->family != NFPROTO_UNSPEC)
		return 0;
	return version == 4 ? AF_INET : version == 6 ? AF_INET6 : 0;
}

void pkt_parse_headers(struct pkt *p)
{
	bool other = p->family != NFPROTO_UNSPEC &&
		     p->family != NFPROTO_IPV4 && p->family != NFPROTO_IPV6;

	p->l3_family = l3_family(p);
	/* Another family's packet: nfqd cannot say what it has. */
	p->l3 = p->l4 = p->l3_family || other ? PKT_INCOMPLETE : PKT_ABSENT;
	p->l4proto = 0;
	p->ip_protocol = 0;
	p->flags &= ~(uint32_t)PKT_EXT_DISCARD;
	p->fragment = false;
	p->first_fragment = false;
	memset(p->saddr, 0, sizeof(p->saddr));
	memset(p->daddr, 0, sizeof(p->daddr));
	p->th_copied = p->th_len = 0;
	p->sport = p->dport = 0;
	p->tcp_flags = 0;
	p->icmp_type = 0;
	/* A version field other than the family's: malformed, INCOMPLETE. */
	if (!p->l3_family || !p->payload || !p->payload_len ||
	    p->payload[0] >> 4 != (p->l3_family == AF_INET ? 4 : 6))
		return;
	if (p->l3_family == AF_INET)
		parse_ipv4(p);
	else
		parse_ipv6(p);
}
