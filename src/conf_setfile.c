/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_setfile.c - streaming set-file reading: one element per line,
 * parsed by conf_parse_elem() so a file accepts what an inline element
 * list does; each element goes to the caller, nothing of the file is kept.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

/* Where a set was written; a hand-built conf may leave the file out. */
static struct conf_loc set_loc(const struct conf *c, const struct conf_set *s)
{
	struct conf_loc l = s->loc;

	if (!l.file)
		l.file = c->path ? c->path : "<config>";
	return l;
}

char *conf_set_file_path(const struct conf *c, const struct conf_set *s)
{
	const char *slash = c->path ? strrchr(c->path, '/') : NULL;
	char *r;

	if (s->file[0] == '/' || !slash)
		return strdup(s->file);
	if (asprintf(&r, "%.*s/%s", (int)(slash - c->path), c->path,
		     s->file) < 0)
		return NULL;
	return r;
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

/* Feed every line of F to ADD; errors at their own line and column. */
static int read_lines(FILE *f, const char *path, const struct conf_set *s,
		      conf_elem_fn add, void *arg, struct diags *d,
		      unsigned long *n_elems)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0, bad = 0;
	int err = 0;

	for (;;) {
		unsigned col = 1;
		char *t, *msg = NULL;
		struct conf_elem el;
		const char *why;

		errno = 0;
		if (getline(&line, &cap, f) < 0)
			break;
		t = trim(line, &col);
		lineno++;
		if (!*t)
			continue;
		if (conf_parse_elem(t, s->type, s->interval, &el, &msg) == 0) {
			why = add(arg, &el);
			free(el.str);
			if (!why) {
				(*n_elems)++;
				continue;
			}
			msg = strdup(why);
		}
		diag_add(d, DIAG_ERROR, &(struct conf_loc){ path, lineno, col },
			 "%s", msg ? msg : "out of memory");
		free(msg);
		err = -EINVAL;
		if (++bad >= NFQD_MAX_ERRORS)
			break;
	}
	/* getline() fails for want of memory without ferror(): a set
	 * silently cut short there would let its addresses through. */
	if (!feof(f) && !err && bad < NFQD_MAX_ERRORS)
		err = errno == ENOMEM ? -ENOMEM : -EIO;
	free(line);
	return err;
}

int conf_set_file_read(const struct conf *c, const struct conf_set *s,
		       conf_elem_fn add, void *arg, struct diags *d)
{
	struct conf_loc at = set_loc(c, s);
	char *path = conf_set_file_path(c, s);
	unsigned long n = 0;
	FILE *f;
	int err;

	if (!path)
		return -ENOMEM;
	f = fopen(path, "re");
	err = f ? read_lines(f, path, s, add, arg, d, &n) : -errno;
	if (f && ferror(f) && !err)
		err = -EIO;
	if (f)
		fclose(f);
	if (err && err != -EINVAL)
		diag_add(d, DIAG_ERROR, &at, "set %s: cannot read %s: %s",
			 s->name, path, strerror(-err));
	else if (!err && !n)
		diag_add(d, DIAG_WARNING, &at, "set %s: file %s has no "
			 "elements", s->name, path);
	free(path);
	return err;
}
