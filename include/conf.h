/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf.h - the parsed configuration: options, sets and hook blocks, exactly
 * as the user wrote them (an AST). conf_load() fills a fresh object; nothing
 * here is global. policy.c compiles the hook blocks into a struct policy.
 */
#ifndef NFQD_CONF_H
#define NFQD_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"	/* struct conf_loc: file owned by struct conf */
#include "defaults.h"
#include "pkt.h"	/* TCPF_*, CT_STATE_*: match flags */

enum queues_mode {
	QUEUES_AUTO,		/* one per online CPU, from queue-base */
	QUEUES_COUNT,		/* "queues N": N queues from queue-base */
	QUEUES_LIST,		/* "A-B" or "{ 0, 2, 5-7 }": explicit numbers */
};

struct conf_range {
	uint32_t lo, hi;	/* inclusive; lo == hi for one value */
};

enum verdict_kind {
	VERDICT_ACCEPT,
	VERDICT_DROP,
	VERDICT_REPEAT,
	VERDICT_QUEUE,
};

/* Most ports of the dns-ports option. */
#define CONF_DNS_PORTS_MAX 16

struct conf_options {
	enum queues_mode queues_mode;
	unsigned queues_count;			/* QUEUES_COUNT */
	struct conf_range *queue_list;		/* QUEUES_LIST */
	unsigned n_queue_list;
	uint16_t queue_base;			/* 0 */
	uint32_t queue_maxlen;			/* 4096 */
	uint32_t copy_range;			/* 256, at most 65531 */
	bool fail_open;				/* no */
	bool gso;				/* yes */
	uint32_t batch;				/* 64, 1..1024 */
	uint64_t rcvbuf;			/* 16M */
	bool cpu_pin;				/* yes */
	char *stats_file;			/* NFQD_DEFAULT_STATS */
	uint32_t stats_interval;		/* 1 (seconds, >= 1) */
	char *control_socket;			/* NFQD_DEFAULT_SOCKET */
	int log_level;				/* enum log_level, info */
	char *user;				/* NULL: stay root */
	char *control_group;			/* NULL: socket 0600 */
	/* Where user and control-group were written (line 0: not), for
	 * the checks made on the system after the parse (confenv.h). */
	struct conf_loc user_loc, control_group_loc, control_socket_loc;
	uint32_t bypass_mark;			/* 0x40000000 */
	enum verdict_kind incomplete_verdict;	/* drop (or accept) */
	enum verdict_kind orphan_verdict;	/* repeat, accept or drop */
	uint32_t flow_table_size;		/* 16384 flows per queue (names) */
	uint32_t flow_timeout;			/* 120 s idle */
	char *set_state_file;			/* NULL: sets.state beside
						 * the control socket */
	bool set_state_none;			/* "set-state-file none" */
	uint16_t dns_ports[CONF_DNS_PORTS_MAX];	/* { 53 } */
	unsigned n_dns_ports;
};

enum set_type {
	SET_IPV4_ADDR,
	SET_IPV6_ADDR,
	SET_INET_SERVICE,
	SET_IFNAME,
	SET_MARK,
	SET_DOMAIN,		/* names and name patterns (nfqd.conf(5) NAMES) */
};

/*
 * One value of a match or set. Addresses are always stored as an inclusive
 * range of 16-byte big-endian addresses (a prefix or single address is
 * converted at parse time); IPv4 uses bytes 0..3 and leaves the rest zero.
 */
enum elem_kind {
	ELEM_NUM,		/* lo..hi: ports, protocols, types, marks, lengths, ids */
	ELEM_ADDR,		/* alo..ahi, family AF_INET or AF_INET6 */
	ELEM_STR,		/* interface name; a trailing '*' is a prefix wildcard;
				 * or a domain pattern in normal form */
};

struct conf_elem {
	enum elem_kind kind;
	uint8_t family;			/* ELEM_ADDR: AF_INET / AF_INET6 */
	uint64_t lo, hi;		/* ELEM_NUM */
	uint8_t alo[16], ahi[16];	/* ELEM_ADDR */
	char *str;			/* ELEM_STR */
	struct conf_loc loc;
};

struct conf_set {
	char *name;
	enum set_type type;
	bool interval;			/* "flags interval": prefixes/ranges allowed */
	bool timeout;			/* "flags timeout": elements may expire */
	uint64_t timeout_ms;		/* "timeout D": default; 0: none */
	uint32_t size;			/* "size N": most runtime elements;
					 * 0: not given (DYNSET_DEFAULT_SIZE) */
	struct conf_elem *elems;	/* inline "elements = { ... }" */
	unsigned n_elems;
	char *file;			/* "file PATH": read by policy_build() */
	struct conf_loc loc;
};

enum match_field {
	MATCH_IP_SADDR,
	MATCH_IP_DADDR,
	MATCH_IP6_SADDR,
	MATCH_IP6_DADDR,
	MATCH_IP_PROTOCOL,		/* IPv4 protocol field */
	MATCH_META_L4PROTO,		/* transport protocol, either family */
	MATCH_TCP_SPORT,
	MATCH_TCP_DPORT,
	MATCH_UDP_SPORT,
	MATCH_UDP_DPORT,
	MATCH_TCP_FLAGS,		/* flags: all listed bits set */
	MATCH_ICMP_TYPE,
	MATCH_ICMPV6_TYPE,
	MATCH_IIFNAME,			/* packet's INPUT interface */
	MATCH_OIFNAME,			/* packet's OUTPUT interface */
	MATCH_META_MARK,		/* elems ELEM_NUM; mask below */
	MATCH_META_LENGTH,		/* original packet length */
	MATCH_META_SKUID,
	MATCH_META_SKGID,
	MATCH_CT_STATE,			/* flags: CT_STATE_* bits, any listed */
	MATCH_LIMIT,			/* rate/per_seconds/burst */
	MATCH_DNS_QNAME,		/* names (nfqd.conf(5) NAMES) */
	MATCH_DNS_QTYPE,
	MATCH_TLS_SNI,
	MATCH_TLS_ECH,			/* no value */
	MATCH_HTTP_HOST,
};

struct conf_match {
	enum match_field field;
	bool negate;			/* "field != value"; limit: "over" */
	char *set_name;			/* "@name", or NULL for inline values */
	struct conf_elem *elems;	/* inline value(s); a { list } has several */
	unsigned n_elems;
	uint32_t mask;			/* MATCH_META_MARK: N/MASK; 0xffffffff if none */
	uint32_t flags;			/* MATCH_TCP_FLAGS / MATCH_CT_STATE bits */
	uint32_t rate;			/* MATCH_LIMIT: packets per period */
	uint32_t per_seconds;		/* MATCH_LIMIT: 1, 60, 3600, 86400, 604800 */
	uint32_t burst;			/* MATCH_LIMIT: 0 if not given (5) */
	bool per;			/* MATCH_LIMIT "per KEY": a bucket per */
	enum match_field per_key;	/* value of KEY */
	struct conf_loc loc;
	struct conf_loc set_loc;	/* where "@name" was written */
	char *text;			/* "tcp dport 23", normalised; or NULL */
};

struct conf_rule {
	struct conf_match *matches;
	unsigned n_matches;
	bool counter;
	bool log;
	char *log_prefix;		/* NULL if none */
	bool mark_set;
	uint32_t mark;
	bool bypass;
	char *add_set;			/* "add @NAME { KEY }": NAME, or NULL */
	enum match_field add_key;	/* KEY: ip/ip6 saddr/daddr, ports */
	uint64_t add_timeout_ms;	/* 0: the set's default */
	bool add_update;		/* "update": refresh the timeout */
	struct conf_loc add_loc;
	enum verdict_kind verdict;
	uint16_t queue_num;		/* VERDICT_QUEUE */
	char *text;			/* normalised text, e.g. "tcp dport 23 drop" */
	struct conf_loc loc;
};

/* Netfilter hooks, numbered as the kernel's NF_INET_* (NFQA_PACKET_HDR). */
enum conf_hook_id {
	HOOK_PREROUTING = 0,
	HOOK_INPUT = 1,
	HOOK_FORWARD = 2,
	HOOK_OUTPUT = 3,
	HOOK_POSTROUTING = 4,
	HOOK_MAX = 5,
};

struct conf_hook {
	bool present;			/* a "hook NAME { }" block was written */
	enum verdict_kind policy;	/* ACCEPT (default) or DROP */
	struct conf_rule *rules;
	unsigned n_rules;
	struct conf_loc loc;
};

struct conf {
	char *path;			/* file loaded, or NULL for built-in */
	struct conf_options opts;
	struct conf_set *sets;
	unsigned n_sets;
	struct conf_hook hooks[HOOK_MAX];
	char **files;			/* names referenced by conf_loc.file */
	unsigned n_files;
};

/* A fresh built-in default configuration (nfqd(8)). NULL on ENOMEM. */
struct conf *conf_default(void);

/*
 * Parse and check PATH into a fresh *out. Returns 0, or a negative errno
 * (-ENOENT, -EINVAL for a bad file, ...) with the reasons queued on D
 * (NULL: not wanted), in file order. Set files ("file PATH" inside a set)
 * are read later by policy_build().
 */
int conf_load(const char *path, struct conf **out, struct diags *d);

/*
 * Read the whole file PATH into *BUF (malloc'd) and *LEN, as conf_load()
 * reads it (an error "cannot open" / "cannot read" in D). 0 or a
 * negative errno.
 */
int conf_read_file(const char *path, char **buf, size_t *len,
		   struct diags *d);

/*
 * As conf_load(), but parse LEN bytes of BUF (need not be NUL-terminated);
 * NAME is used in messages and as conf->path.
 */
int conf_load_buffer(const char *name, const char *buf, size_t len,
		     struct conf **out, struct diags *d);

void conf_free(struct conf *c);

/*
 * Parse one set element as written in a set file line (address, prefix,
 * range, port, name, mark) for a set of TYPE. Returns 0 or -EINVAL with a
 * message (no location) in *msg (malloc'd). Used by set-file loading.
 */
int conf_parse_elem(const char *text, enum set_type type, bool interval,
		    struct conf_elem *out, char **msg);

/* Takes one element of a set file: NULL, or why it does not fit. */
typedef const char *(*conf_elem_fn)(void *arg, const struct conf_elem *el);

/*
 * Read the file of set S (its "file PATH"; relative to the directory of
 * C's file) and give ADD every element, in file order. A bad line is an
 * error on D at the file's own FILE:LINE:COL (reading stops at the
 * NFQD_MAX_ERRORS-th), a file that cannot be read an error at S, a file
 * without elements a warning at S. 0, or a negative errno: -ENOMEM is
 * the only one not reported on D.
 */
int conf_set_file_read(const struct conf *c, const struct conf_set *s,
		       conf_elem_fn add, void *arg, struct diags *d);

/*
 * One line T of a domain list, in the formats a domain set's file takes
 * (nfqd.conf(5)): FN(ARG, TEXT, COL, FORCE, ENTRY) for each pattern it
 * holds, TEXT as written at column COL, FORCE the DOM_* flags its format
 * gives it (0: as written), ENTRY for a hosts line's name (a bad one is
 * skipped alone); comments and blank lines hold none. NULL, or why the
 * line is junk with *COL and *TOK where. T is cut up.
 */
typedef void (*conf_dom_token_fn)(void *arg, char *text, unsigned col,
				  unsigned force, bool entry);
const char *conf_domain_line(char *t, conf_dom_token_fn fn, void *arg,
			     unsigned *col, const char **tok);

/* The path conf_set_file_read() opens (malloc'd; NULL on ENOMEM). */
char *conf_set_file_path(const struct conf *c, const struct conf_set *s);

/*
 * A duration as nfqd.conf(5) writes it: digits and a unit, "500ms", "30s",
 * "10m", "1h", "2d". 0 with *MS set, or -EINVAL (no unit, zero, too big).
 */
int conf_parse_duration(const char *text, uint64_t *ms);
/* What a duration may be, for the messages that refuse one. */
#define CONF_DURATION_FORMS "500ms, 30s, 10m, 1h or 2d; at most 366d"

/* Print MS as the largest unit that divides it ("1h", "90s", "500ms")
 * into BUF (at least 24 bytes). */
void conf_format_duration(uint64_t ms, char *buf, size_t size);

/* Names for output: "input", "accept", "ipv4_addr", ... */
const char *conf_hook_name(enum conf_hook_id hook);
const char *conf_verdict_name(enum verdict_kind v);
const char *conf_set_type_name(enum set_type t);

/*
 * Resolve the "queues" option into ascending queue numbers. Returns the
 * count (> 0) or a negative errno; *out is malloc'd.
 */
int conf_queue_numbers(const struct conf_options *o, uint16_t **out);

/*
 * Print C as nfqd understood it, in the syntax it reads (conf_dump.c):
 * every option with its value, each set with its elements (those of its
 * file too) in canonical order, one rule per line with its values in
 * canonical order. Loading the output gives a config that dumps the
 * same. Set-file errors go to D. 0, or a negative errno.
 */
int conf_dump(FILE *f, const struct conf *c, struct diags *d);

#endif
