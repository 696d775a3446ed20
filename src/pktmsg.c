/* pktmsg.c - being written (core). */
extern int nfqd_placeholder_pktmsg;
