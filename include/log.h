/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h - one-line-per-event logging to stderr, safe from any thread.
 * A worker thread attaches a ring of its own: its lines are copied there
 * without a system call or a lock, and the main thread writes them out.
 */
#ifndef NFQD_LOG_H
#define NFQD_LOG_H

enum log_level {
	LOG_LVL_ERROR = 0,
	LOG_LVL_WARNING,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
	LOG_LVL_CRIT,		/* always printed; not a level to choose */
};

/* Set the most verbose level that is printed (default LOG_LVL_INFO). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/*
 * Print "nfqd: <level>: <message>\n" with one write(2), or, when stderr
 * is the journal (JOURNAL_STREAM names its device and inode),
 * "<priority><message>\n" (<2> critical, <3> error, <4> warning, <6> info,
 * <7> debug). Critical lines (packets no longer judged by the policy the
 * operator expects) are printed at every level.
 * From a thread with a ring attached (log_ring_attach()) the line goes to
 * the ring instead. Messages follow the subject-first style:
 * "queue 3: bind failed (...)".
 */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * log_msg() with journal fields: FIELDS is "KEY=VALUE\n" lines (keys in
 * capitals, NFQD_ first). When stderr is the journal the line is sent
 * over the journal's native protocol with those fields (MESSAGE is the
 * line, PRIORITY its level), so they can be searched; otherwise, or if
 * that fails, the plain line is written as log_msg() would.
 */
void log_fields(enum log_level level, const char *fields, const char *fmt,
		...)
	__attribute__((format(printf, 3, 4)));

#define log_err(...)	log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_LVL_DEBUG, __VA_ARGS__)
#define log_crit(...)	log_msg(LOG_LVL_CRIT, __VA_ARGS__)

/* Parse "error", "warning", "info", "debug"; -1 if unknown. */
int log_level_parse(const char *name);

/*
 * A single-producer single-consumer ring of log lines for one worker:
 * the worker writes lines in without a system call or a lock; the main
 * thread writes them out (log_rings_flush()). A full ring drops the line
 * and counts it; the count is reported in a log line.
 */
struct log_ring;

/* A ring whose drop reports name SUBJECT ("queue 3"). Main thread.
 * NULL if out of memory. */
struct log_ring *log_ring_new(const char *subject);

/* Send the calling thread's log lines to R from now on (NULL: direct). */
void log_ring_attach(struct log_ring *r);

/* Write out what R holds. Main thread. */
void log_ring_flush(struct log_ring *r);

/* Write out every ring. Main thread (a timer on its loop). */
void log_rings_flush(void);

/* Flush and free R; its producer must be gone. Main thread. */
void log_ring_free(struct log_ring *r);

#endif
