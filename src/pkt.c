/* pkt.c - packet header parsing (being written). */
#include "pkt.h"
void pkt_parse_headers(struct pkt *p) { (void)p; }
