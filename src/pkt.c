/* pkt.c - IPv4/IPv6 and transport header parsing, bounded by the copy. */
#include <netinet/in.h>
#include <string.h>

#include "conf.h"
#include "pkt.h"

#define IPV6_MAX_EXT	16	/* longer extension chains are not parsed */

static uint16_t get16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* Ports, flags or type of the transport header at OFF (up to END). */
static void parse_l4(struct pkt *p, uint32_t off, uint32_t end)
{
	const uint8_t *h = p->payload + off;
	uint32_t avail = end > off ? end - off : 0;

	switch (p->l4proto) {
	case IPPROTO_TCP:
		/* Ports and flags; the options need not be in the copy. */
		if (avail < 20 || (h[12] >> 4) < 5)
			return;
		p->tcp_flags = h[13];
		break;
	case IPPROTO_UDP:
		if (avail < 8)
			return;
		break;
	case IPPROTO_SCTP:
		if (avail < 12)
			return;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (avail < 4)
			return;
		p->icmp_type = h[0];
		p->flags |= PKT_HAS_L4;
		return;
	default:
		return;
	}
	p->sport = get16(h);
	p->dport = get16(h + 2);
	p->flags |= PKT_HAS_L4;
}

static void parse_ipv4(struct pkt *p)
{
	const uint8_t *h = p->payload;
	uint32_t hlen, tot, end;

	if (p->payload_len < 20 || (h[0] >> 4) != 4)
		return;
	hlen = (uint32_t)(h[0] & 0x0f) * 4;
	tot = get16(h + 2);
	/*
	 * Options are skipped whole; the header must fit in the copy. A
	 * total length of 0 is a BIG TCP GSO packet: trust the copy.
	 */
	if (!tot)
		tot = p->payload_len;
	if (hlen < 20 || hlen > p->payload_len || tot < hlen)
		return;
	p->l3_family = AF_INET;
	p->l4proto = h[9];
	memcpy(p->saddr, h + 12, 4);
	memcpy(p->daddr, h + 16, 4);
	p->flags |= PKT_HAS_L3;
	if (get16(h + 6) & 0x1fff) {
		p->fragment = true;
		return;
	}
	end = tot < p->payload_len ? tot : p->payload_len;
	parse_l4(p, hlen, end);
}

/*
 * Walk the extension header chain to the transport header. A chain that
 * leaves the copy, or is absurdly long, leaves L3 unset: the transport
 * protocol is then unknown.
 */
static void parse_ipv6(struct pkt *p)
{
	const uint8_t *h = p->payload;
	uint32_t off = 40, end = p->payload_len, plen;
	uint8_t next;

	if (p->payload_len < 40 || (h[0] >> 4) != 6)
		return;
	plen = get16(h + 4);
	/* plen 0 is a jumbogram (or a GSO packet): trust the copy. */
	if (plen && 40 + plen < end)
		end = 40 + plen;
	next = h[6];
	for (int i = 0; i < IPV6_MAX_EXT; i++) {
		const uint8_t *e = h + off;

		switch (next) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
			if (off + 2 > end)
				return;
			next = e[0];
			off += ((uint32_t)e[1] + 1) * 8;
			continue;
		case IPPROTO_AH:
			if (off + 2 > end)
				return;
			next = e[0];
			off += ((uint32_t)e[1] + 2) * 4;
			continue;
		case IPPROTO_FRAGMENT:
			if (off + 8 > end)
				return;
			next = e[0];
			off += 8;
			if (get16(e + 2) & 0xfff8)
				p->fragment = true;
			if (!p->fragment)
				continue;
			break;
		default:
			break;
		}
		p->l3_family = AF_INET6;
		p->l4proto = next;
		memcpy(p->saddr, h + 8, 16);
		memcpy(p->daddr, h + 24, 16);
		p->flags |= PKT_HAS_L3;
		if (!p->fragment && off <= end)
			parse_l4(p, off, end);
		return;
	}
}

void pkt_parse_headers(struct pkt *p)
{
	p->flags &= ~(uint32_t)(PKT_HAS_L3 | PKT_HAS_L4);
	p->l3_family = 0;
	p->l4proto = 0;
	p->fragment = false;
	memset(p->saddr, 0, sizeof(p->saddr));
	memset(p->daddr, 0, sizeof(p->daddr));
	p->sport = p->dport = 0;
	p->tcp_flags = 0;
	p->icmp_type = 0;
	if (!p->payload || !p->payload_len)
		return;
	switch (p->payload[0] >> 4) {
	case 4:
		parse_ipv4(p);
		break;
	case 6:
		parse_ipv6(p);
		break;
	}
}
