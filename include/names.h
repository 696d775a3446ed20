/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.h - the names a client puts in its first bytes: the query name and
 * type of a DNS query (UDP, or TCP with its length prefix), the server name
 * of a TLS ClientHello (over a TLS record stream, or as the handshake
 * message a QUIC CRYPTO stream carries) and whether it carries
 * encrypted_client_hello, the Host of an HTTP/1.x request head, and the
 * CRYPTO frames of QUIC v1/v2 Initial packets (decrypted with the Initial
 * secrets of RFC 9001 and RFC 9369, by libcrypto).
 *
 * Pure functions on byte buffers: they never read outside [P, P + LEN),
 * never allocate, keep no state and are safe from any thread. Hostile
 * input is the normal case: every length is checked against what is left,
 * DNS compression pointers are refused (a query's name has none), a
 * ClientHello with two server names or two extensions of one type is
 * malformed.
 */
#ifndef NFQD_NAMES_H
#define NFQD_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Longest name in presentation form, without a trailing dot (RFC 1035). */
#define NAME_MAX_LEN 253

/* Longest TLS handshake message a ClientHello may be (bytes, header too). */
#define NAME_HELLO_MAX 16384

/* What a parser found. */
enum name_result {
	NAME_DONE = 0,	/* complete: out->len > 0 is the name, 0 is none */
	NAME_MORE,	/* a consistent prefix: more bytes are needed */
	NAME_NOT,	/* not this protocol (e.g. not a ClientHello at all) */
	NAME_BAD,	/* this protocol, malformed */
};

/* One name, normalised: ASCII lower case, no trailing dot, NUL-ended.
 * The short fields first: a copy of the used part (names_copy()) then
 * touches one cache line for a short name. */
struct name_out {
	uint16_t len;		/* 0: the message carries no name */
	uint16_t qtype;		/* DNS only */
	bool ech;		/* TLS only: encrypted_client_hello present */
	char name[NAME_MAX_LEN + 1];
};

/* Which protocol a packet's name came from (struct pkt_names); bits, so
 * that a name still coming can say which it may yet be. */
enum name_proto { NP_NONE = 0, NP_DNS = 1, NP_TLS = 2, NP_HTTP = 4 };

/*
 * What is known of the names of one packet (its flow's, for TCP and
 * QUIC), as the name matches see it (nfqd.conf(5) NAMES). STATE is a
 * pkt_state (ABSENT, PRESENT, INCOMPLETE) or NAMES_PENDING; it applies
 * to the matches of the protocols of PROTO (NP_* bits: one for a name
 * PRESENT; a pending TCP flow's the protocols its server port allows),
 * or to all of them when PROTO is NP_NONE; another protocol's matches
 * find it ABSENT.
 */
#define NAMES_PENDING 3	/* the flow's first bytes are still coming */
struct pkt_names {
	uint8_t state;
	uint8_t proto;		/* enum name_proto */
	struct name_out n;
};

/* *DST = *SRC, copying only the name's used bytes. Inline: every
 * packet of a flow gets its flow's names so. */
static inline void names_copy(struct pkt_names *dst,
			      const struct pkt_names *src)
{
	dst->state = src->state;
	dst->proto = src->proto;
	dst->n.len = src->n.len;
	dst->n.qtype = src->n.qtype;
	dst->n.ech = src->n.ech;
	if (src->n.len)
		memcpy(dst->n.name, src->n.name, (size_t)src->n.len + 1);
	else		/* most packets: no call for one byte */
		dst->n.name[0] = '\0';
}

/* OUT with no name: its short fields zero, its name empty (the rest of
 * its name buffer is left as it is: a parser's result is read to len). */
static inline void name_out_clear(struct name_out *out)
{
	out->len = 0;
	out->qtype = 0;
	out->ech = false;
	out->name[0] = '\0';
}

/* Human-readable NAME_* (logs, tests). */
const char *name_result_str(enum name_result r);

/*
 * Normalise the name at S (LEN bytes, presentation form) into OUT:
 * lower case, one trailing dot dropped. Labels of 1-63 bytes of printable
 * ASCII (0x21-0x7e); a name of 1-253 bytes. 0 or -EINVAL.
 */
int name_normalize(const char *s, size_t len, struct name_out *out);

/*
 * Copy the N bytes of one label's text at S to D in lower case; false if
 * one is not printable ASCII (0x21-0x7e) or is a '.' (D is then of no
 * meaning). name_normalize() applies the same rule to a dotted name.
 */
bool name_label_lower(char *d, const uint8_t *s, size_t n);

/*
 * DNS: the first question of the query message at P (LEN bytes; UDP
 * payload). DONE with name and qtype; NOT for a response (QR set);
 * BAD for anything else that is not one question with an uncompressed
 * name. The root name "." is DONE with len 0.
 */
enum name_result name_dns_udp(const uint8_t *p, size_t len,
			      struct name_out *out);
/*
 * DNS over TCP: the first message of the client's stream P (2-byte length
 * prefix, then the message). MORE while the message is not all there.
 */
enum name_result name_dns_tcp(const uint8_t *p, size_t len,
			      struct name_out *out);

/*
 * TLS: the ClientHello at the start of the client's record stream P
 * (LEN bytes from the connection's first byte). Handshake records are
 * joined (a ClientHello may span several records); MORE while the
 * message is not complete, NOT when the stream does not start with a
 * handshake record holding a ClientHello. DONE: out->name is the
 * server_name (len 0 if none), out->ech whether encrypted_client_hello
 * is present.
 */
enum name_result name_tls_stream(const uint8_t *p, size_t len,
				 struct name_out *out);
/*
 * TLS: the handshake messages at P (the bytes of a QUIC CRYPTO stream
 * from offset 0, or the joined records): the first must be a ClientHello.
 */
enum name_result name_tls_handshake(const uint8_t *p, size_t len,
				    struct name_out *out);

/*
 * HTTP/1.x: the Host of the request head at the start of the client's
 * data P. MORE until the head's empty line; NOT when the bytes cannot
 * start an HTTP/1.x request: past leading white space, a first word with
 * a byte no method has, or a first line whose word is none of RFC 9110's
 * methods (or PATCH) and that holds no "HTTP/" (an SSH banner, "EHLO x").
 * A request that is HTTP by that rule and is not one well-formed line
 * and head is BAD. An absolute-form target or a CONNECT
 * authority names the host; a Host that disagrees with it, two Host
 * fields, a folded or malformed field are BAD. DONE with len 0: no Host.
 */
enum name_result name_http_host(const uint8_t *p, size_t len,
				struct name_out *out);

/* QUIC */

#define QUIC_V1 0x00000001u
#define QUIC_V2 0x6b3343cfu
/* Most CRYPTO frames taken from one datagram; more is BAD. */
#define QUIC_MAX_FRAMES 64
/* Largest UDP payload decrypted (bytes); a larger one is BAD. */
#define QUIC_MAX_DGRAM 4096

struct quic_frame {
	uint64_t offset;	/* in the CRYPTO stream */
	uint16_t len;
	uint16_t pos;		/* into struct quic_initial plain[] */
};

/* The client Initial packets of one datagram, decrypted. */
struct quic_initial {
	uint32_t version;
	uint8_t dcid_len;
	uint8_t dcid[20];
	unsigned n_opened;	/* Initials decrypted */
	unsigned n_sealed;	/* Initials whose tag failed with their
				 * DCID's keys (a client's after it took
				 * the server's connection ID) */
	unsigned n_frames;
	struct quic_frame frames[QUIC_MAX_FRAMES];
	uint8_t plain[QUIC_MAX_DGRAM];	/* the frames' data */
};

/*
 * Does the UDP datagram P (LEN bytes) begin with a long-header packet of
 * another version than QUIC v1's and v2's (RTP's first byte has the long
 * header's bit too)? name_quic_initial() says NOT for it without reading
 * further. A datagram too short to show a version is not one (that
 * parser calls it malformed).
 */
bool name_quic_foreign(const uint8_t *p, size_t len);

/*
 * Decrypt every QUIC v1/v2 Initial packet of the UDP datagram P (LEN
 * bytes) and collect their CRYPTO frames. NOT when the datagram holds no
 * long-header Initial of a known version; BAD for a failed tag, lengths
 * that overrun, a frame an Initial may not carry, more than
 * QUIC_MAX_FRAMES frames; DONE otherwise (possibly without frames).
 * out->n_opened and out->n_sealed count the Initials that decrypted and
 * those whose tag failed (the datagram's other Initials are still tried
 * after a failed tag).
 */
enum name_result name_quic_initial(const uint8_t *p, size_t len,
				   struct quic_initial *out);

/*
 * The Destination Connection ID that every long-header packet of the UDP
 * datagram P (LEN bytes) carries: its length (0..20), *DCID pointing into
 * P; -1 when they differ, a header is malformed or cut, or one is of
 * another version than v1's and v2's, or a Retry. Headers only, nothing
 * decrypted.
 */
int name_quic_dcid(const uint8_t *p, size_t len, const uint8_t **dcid);

/*
 * The QUIC client Initial keys of DCID for VERSION (tests and the
 * encrypting side of tests): KEY[16], IV[12], HP[16]. 0 or -EINVAL
 * (unknown version) / -EIO (libcrypto failed).
 */
int name_quic_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len,
		   uint8_t key[16], uint8_t iv[12], uint8_t hp[16]);

/*
 * A byte stream gathered out of order up to a fixed size: the first
 * client bytes of a TCP connection (offsets from the first data byte) or
 * of a QUIC CRYPTO stream. Bytes written twice must agree.
 */
struct name_stream {
	uint8_t *buf;		/* CAP bytes */
	uint8_t *have;		/* CAP bits: byte i is there */
	uint32_t cap;
	uint32_t contig;	/* bytes [0, contig) are all there */
	uint32_t hi;		/* no byte at or past hi is there */
};

/* Bytes of struct name_stream buffers for CAP (buf + bitmap). */
size_t name_stream_bytes(uint32_t cap);
/* Use MEM (name_stream_bytes(CAP) bytes) for S, empty. */
void name_stream_init(struct name_stream *s, void *mem, uint32_t cap);
/*
 * Put LEN bytes of DATA at OFF. Bytes at or past CAP are dropped (the
 * return says so). 0; 1 if some bytes fell past CAP; -EILSEQ if a byte
 * already there differs (a retransmission with other bytes).
 */
int name_stream_put(struct name_stream *s, uint64_t off, const uint8_t *data,
		    size_t len);

#endif
