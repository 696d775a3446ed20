/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rxloop_hello.c - nfqd-namegen's ClientHellos for nfqd-rxloop. */
int namegen_main(int argc, char **argv);
#define main namegen_main
#include "namegen.c"
#undef main

size_t rxloop_hello(uint8_t *out, uint32_t flow);
size_t rxloop_dns(uint8_t *out, uint32_t i);

/* Flow FLOW's ClientHello record as nfqd-namegen -m tls -H 10 -S 4 sends
 * it for a 1,000,000-name list; its length. */
size_t rxloop_hello(uint8_t *out, uint32_t flow)
{
	char name[256];

	query_name(flow, 1000000, 10, name, sizeof(name));
	return wire_client_hello(out, name, flow, flow % 4 == 0);
}

/* Query I's DNS message (UDP payload) as nfqd-namegen -m dns -H 10 sends
 * it for a 1,000,000-name list; its length. */
size_t rxloop_dns(uint8_t *out, uint32_t i)
{
	char name[256];

	query_name(i, 1000000, 10, name, sizeof(name));
	return dns_message(out, i, name);
}
