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
#include <unistd.h>

#include "log.h"

#define LINE_MAX_LEN	1024
#define RING_SLOTS	256	/* lines a worker may log between flushes */
#define RING_TEXT	500

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
	char text[RING_TEXT];
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
		     const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void ring_put(struct log_ring *r, enum log_level level,
		     const char *fmt, va_list ap)
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

		if (sizeof(buf) - len < RING_TEXT + 16) {
			write_out(buf, len);
			len = 0;
		}
		len += format_line(buf + len, sizeof(buf) - len, s->level,
				   s->text, s->len);
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

void log_msg(enum log_level level, const char *fmt, ...)
{
	char text[LINE_MAX_LEN], line[LINE_MAX_LEN + 32];
	va_list ap;
	int n;

	if (level > log_get_level() && level != LOG_LVL_CRIT)
		return;
	va_start(ap, fmt);
	if (my_ring) {
		ring_put(my_ring, level, fmt, ap);
		va_end(ap);
		return;
	}
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n >= (int)sizeof(text))
		n = (int)sizeof(text) - 1;
	/* One write: a line is never interleaved with another. */
	write_out(line, format_line(line, sizeof(line), level, text,
				    (size_t)n));
}
