/* log.h - one-line-per-event logging to stderr, safe from any thread. */
#ifndef NFQD_LOG_H
#define NFQD_LOG_H

enum log_level {
	LOG_LVL_ERROR = 0,
	LOG_LVL_WARNING,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

/* Set the most verbose level that is printed (default LOG_LVL_INFO). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/*
 * Print "nfqd: <level>: <message>\n" with one write(2), so concurrent
 * workers never interleave and no stdio lock is taken on the packet path.
 * Messages follow the subject-first style: "queue 3: bind failed (...)".
 */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)	log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

/* Parse "error", "warning", "info", "debug"; -1 if unknown. */
int log_level_parse(const char *name);

#endif
