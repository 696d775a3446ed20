/* log.c - one-line-per-event logging to stderr with a single write(2). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static enum log_level max_level = LOG_LVL_INFO;

static const char *const level_names[] = {
	[LOG_LVL_ERROR] = "error",
	[LOG_LVL_WARNING] = "warning",
	[LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
};

void log_set_level(enum log_level level)
{
	max_level = level;
}

enum log_level log_get_level(void)
{
	return max_level;
}

int log_level_parse(const char *name)
{
	for (unsigned i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcmp(name, level_names[i]) == 0)
			return (int)i;
	return -1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (level > max_level)
		return;
	n = snprintf(line, sizeof(line), "nfqd: %s: ", level_names[level]);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write: lines from different workers never interleave. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
