/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.c - one-line-per-event logging to stderr (with syslog priorities
 * when stderr is the journal), and the per-worker rings that keep
 * write(2) off the packet path.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "log.h"

#define LINE_MAX_LEN	1024
#define RING_SLOTS	256	/* lines a worker may log between flushes */
#define RING_TEXT	800	/* a packet's line with a 253-byte name */
#define RING_FIELDS	640	/* "KEY=VALUE\n" lines for the journal */
#define MAX_FIELDS	16

static enum log_level max_level = LOG_LVL_INFO;

static const char *const level_names[] = {
	[LOG_LVL_ERROR] = "error",
	[LOG_LVL_WARNING] = "warning",
	[LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
	[LOG_LVL_CRIT] = "critical",
};

/* syslog(3) priorities: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG,
 * LOG_CRIT. */
static const char level_prio[] = {
	[LOG_LVL_ERROR] = '3',
	[LOG_LVL_WARNING] = '4',
	[LOG_LVL_INFO] = '6',
	[LOG_LVL_DEBUG] = '7',
	[LOG_LVL_CRIT] = '2',	/* LOG_CRIT */
};

void log_set_level(enum log_level level)
{
	__atomic_store_n(&max_level, level, __ATOMIC_RELAXED);
}

enum log_level log_get_level(void)
{
	return __atomic_load_n(&max_level, __ATOMIC_RELAXED);
}

int log_level_parse(const char *name)
{
	for (unsigned i = 0; i < LOG_LVL_CRIT; i++)
		if (strcmp(name, level_names[i]) == 0)
			return (int)i;
	return -1;
}

/*
 * Is stderr the journal? systemd sets JOURNAL_STREAM to "DEV:INO" of the
 * stream it connected; it only counts while stderr is still that stream
 * (a redirect in a script makes it plain text again). Decided once.
 */
static int journal_mode = -1;

static bool to_journal(void)
{
	int mode = __atomic_load_n(&journal_mode, __ATOMIC_RELAXED);
	const char *env;
	unsigned long long dev, ino;
	struct stat st;

	if (mode >= 0)
		return mode;
	env = getenv("JOURNAL_STREAM");
	mode = env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 &&
	       fstat(STDERR_FILENO, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
	__atomic_store_n(&journal_mode, mode, __ATOMIC_RELAXED);
	return mode;
}

/* Put LEVEL's prefix and TEXT (LEN bytes) and '\n' into LINE. */
static size_t format_line(char *line, size_t size, enum log_level level,
			  const char *text, size_t len)
{
	int n;

	if (to_journal())
		n = snprintf(line, size, "<%c>", level_prio[level]);
	else
		n = snprintf(line, size, "nfqd: %s: ", level_names[level]);
	if (len > size - (size_t)n - 1)
		len = size - (size_t)n - 1;
	memcpy(line + n, text, len);
	line[(size_t)n + len] = '\n';
	return (size_t)n + len + 1;
}

/*
 * Send TEXT with the journal fields FIELDS ("KEY=VALUE\n"...) over the
 * journal's native protocol, which keeps each field searchable
 * (journalctl NFQD_VERDICT=drop). false when that fails: the caller
 * writes the plain line instead.
 */
static bool journal_send(enum log_level level, const char *text, size_t len,
			 const char *fields, size_t flen)
{
	static int native = -1;	/* the journal's socket exists */
	char msg[RING_TEXT + 16], prio[16];
	struct iovec iov[MAX_FIELDS + 3];
	int n = 0;
	size_t i = 0;

	/* sd_journal_sendv() reports success when there is no journal. */
	if (native < 0)
		native = access("/run/systemd/journal/socket", W_OK) == 0;
	if (!native)
		return false;
	snprintf(msg, sizeof(msg), "MESSAGE=%.*s", (int)len, text);
	snprintf(prio, sizeof(prio), "PRIORITY=%c", level_prio[level]);
	iov[n++] = (struct iovec){ msg, strlen(msg) };
	iov[n++] = (struct iovec){ prio, strlen(prio) };
	iov[n++] = (struct iovec){ (void *)"SYSLOG_IDENTIFIER=nfqd", 22 };
	while (i < flen && n < MAX_FIELDS + 3) {
		const char *nl = memchr(fields + i, '\n', flen - i);
		size_t l = nl ? (size_t)(nl - (fields + i)) : flen - i;

		if (l)
			iov[n++] = (struct iovec){ (void *)(fields + i), l };
		i += l + 1;
	}
	return sd_journal_sendv(iov, n) == 0;
}

static void write_out(const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(STDERR_FILENO, buf, len);

		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* ------------------------------------------------------------------ */
/* worker rings                                                        */

struct log_slot {
	uint8_t level;
	uint16_t len;
	uint16_t flen;			/* journal fields, 0: none */
	char text[RING_TEXT];
	char fields[RING_FIELDS];
};

struct log_ring {
	/* producer (the worker) */
	unsigned head __attribute__((aligned(64)));
	uint64_t dropped;
	/* consumer (the main thread) */
	unsigned tail __attribute__((aligned(64)));
	uint64_t reported;
	char subject[32];
	struct log_ring *next;	/* every ring, for log_rings_flush() */
	struct log_slot slot[RING_SLOTS];
};

static struct log_ring *rings;		/* main thread */
static __thread struct log_ring *my_ring;

struct log_ring *log_ring_new(const char *subject)
{
	struct log_ring *r;

	if (posix_memalign((void **)&r, 64, sizeof(*r)) != 0)
		return NULL;
	memset(r, 0, sizeof(*r));
	snprintf(r->subject, sizeof(r->subject), "%s", subject);
	r->next = rings;
	rings = r;
	return r;
}

void log_ring_attach(struct log_ring *r)
{
	my_ring = r;
}

/* Producer: copy one line in, or count it dropped. */
static void ring_put(struct log_ring *r, enum log_level level,
		     const char *fields, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static void ring_put(struct log_ring *r, enum log_level level,
		     const char *fields, const char *fmt, va_list ap)
{
	unsigned head = r->head;
	unsigned tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	struct log_slot *s;
	int n;

	if (head - tail >= RING_SLOTS) {
		__atomic_store_n(&r->dropped, r->dropped + 1,
				 __ATOMIC_RELAXED);
		return;
	}
	s = &r->slot[head % RING_SLOTS];
	n = vsnprintf(s->text, sizeof(s->text), fmt, ap);
	if (n < 0)
		n = 0;
	if (n >= (int)sizeof(s->text))
		n = (int)sizeof(s->text) - 1;
	s->level = (uint8_t)level;
	s->len = (uint16_t)n;
	s->flen = 0;
	if (fields) {
		n = snprintf(s->fields, sizeof(s->fields), "%s", fields);
		s->flen = (uint16_t)(n < 0 ? 0 : n >= (int)sizeof(s->fields) ?
				     (int)sizeof(s->fields) - 1 : n);
	}
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
}

void log_ring_flush(struct log_ring *r)
{
	char buf[16384];
	size_t len = 0;
	unsigned head, tail;
	uint64_t dropped;

	if (!r)
		return;
	head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	tail = r->tail;
	while (tail != head) {
		const struct log_slot *s = &r->slot[tail % RING_SLOTS];

		if (sizeof(buf) - len < RING_TEXT + 16 ||
		    (s->flen && to_journal())) {
			write_out(buf, len);
			len = 0;
		}
		if (!s->flen || !to_journal() ||
		    !journal_send(s->level, s->text, s->len, s->fields,
				  s->flen))
			len += format_line(buf + len, sizeof(buf) - len,
					   s->level, s->text, s->len);
		tail++;
	}
	write_out(buf, len);
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	dropped = __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
	if (dropped != r->reported) {
		log_warn("%s: %llu log lines dropped (log ring full)",
			 r->subject, (unsigned long long)(dropped - r->reported));
		r->reported = dropped;
	}
}

void log_rings_flush(void)
{
	for (struct log_ring *r = rings; r; r = r->next)
		log_ring_flush(r);
}

void log_ring_free(struct log_ring *r)
{
	struct log_ring **p;

	if (!r)
		return;
	log_ring_flush(r);
	for (p = &rings; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	free(r);
}

/* ------------------------------------------------------------------ */

static void log_vmsg(enum log_level level, const char *fields,
		     const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void log_vmsg(enum log_level level, const char *fields,
		     const char *fmt, va_list ap)
{
	char text[LINE_MAX_LEN], line[LINE_MAX_LEN + 32];
	int n;

	if (my_ring) {
		ring_put(my_ring, level, fields, fmt, ap);
		return;
	}
	n = vsnprintf(text, sizeof(text), fmt, ap);
	if (n < 0)
		return;
	if (n >= (int)sizeof(text))
		n = (int)sizeof(text) - 1;
	if (fields && to_journal() &&
	    journal_send(level, text, (size_t)n, fields, strlen(fields)))
		return;
	/* One write: a line is never interleaved with another. */
	write_out(line, format_line(line, sizeof(line), level, text,
				    (size_t)n));
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_get_level() && level != LOG_LVL_CRIT)
		return;
	va_start(ap, fmt);
	log_vmsg(level, NULL, fmt, ap);
	va_end(ap);
}

void log_fields(enum log_level level, const char *fields, const char *fmt,
		...)
{
	va_list ap;

	if (level > log_get_level() && level != LOG_LVL_CRIT)
		return;
	va_start(ap, fmt);
	log_vmsg(level, fields, fmt, ap);
	va_end(ap);
}
