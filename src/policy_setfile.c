/*
 * policy_setfile.c - streaming set-file loading: one element per line,
 * parsed by the config parser's conf_parse_elem() so a file accepts what
 * an inline element list does; nothing of the file is kept.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

void errlist_add(struct errlist *e, const char *file, unsigned line,
		 unsigned col, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;
	char *nb;

	if (e->n >= NFQD_MAX_ERRORS) {
		e->n++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = snprintf(NULL, 0, "%s:%u:%u: %s\n", file ? file : "<config>",
		     line, col, msg);
	nb = realloc(e->buf, e->len + (size_t)n + 1);
	if (!nb)
		return;
	e->buf = nb;
	snprintf(e->buf + e->len, (size_t)n + 1, "%s:%u:%u: %s\n",
		 file ? file : "<config>", line, col, msg);
	e->len += (size_t)n;
	e->n++;
}

/* Cut the comment and surrounding blanks off LINE; *COL gets the start. */
static char *trim(char *line, unsigned *col)
{
	char *hash = strchr(line, '#'), *end;

	if (hash)
		*hash = '\0';
	while (*line == ' ' || *line == '\t') {
		line++;
		(*col)++;
	}
	end = line + strlen(line);
	while (end > line && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return line;
}

int policy_load_set_file(struct set *s, const char *path,
			 enum set_type type, bool interval, struct errlist *e)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0, bad = 0;
	int err = 0;

	if (!f)
		return -errno;
	for (;;) {
		unsigned col = 1;
		char *t, *msg = NULL;
		struct conf_elem el;

		errno = 0;
		if (getline(&line, &cap, f) < 0)
			break;
		t = trim(line, &col);
		lineno++;
		if (!*t)
			continue;
		if (conf_parse_elem(t, type, interval, &el, &msg) == 0) {
			const char *e2 = policy_add_elem(s, &el);

			free(el.str);
			if (!e2)
				continue;
			msg = strdup(e2);
		}
		errlist_add(e, path, lineno, col, "%s",
			    msg ? msg : "out of memory");
		free(msg);
		err = -EINVAL;
		if (++bad >= NFQD_MAX_ERRORS)
			break;
	}
	/* getline() fails for want of memory without ferror(): a set
	 * silently cut short there would let its addresses through. */
	if (!feof(f) && !err)
		err = errno == ENOMEM ? -ENOMEM : -EIO;
	free(line);
	fclose(f);
	return err;
}
