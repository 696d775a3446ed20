/* SPDX-License-Identifier: GPL-2.0-or-later */
/* diag.c - the diagnostics list: queueing, ordering and printing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "log.h"

static int push(struct diags *d, enum diag_severity sev,
		const struct conf_loc *loc, char *msg, bool summary)
{
	struct diag *g;

	if (!msg) {
		d->nomem = true;
		return -ENOMEM;
	}
	if (d->n == d->cap) {
		unsigned cap = d->cap ? d->cap * 2 : 8;
		struct diag *v = realloc(d->v, cap * sizeof(*v));

		if (!v) {
			free(msg);
			d->nomem = true;
			return -ENOMEM;
		}
		d->v = v;
		d->cap = cap;
	}
	g = &d->v[d->n];
	memset(g, 0, sizeof(*g));
	g->severity = sev;
	g->msg = msg;
	g->summary = summary;
	if (loc && loc->file) {
		g->loc = *loc;
		g->loc.file = strdup(loc->file);
		if (!g->loc.file) {
			free(msg);
			d->nomem = true;
			return -ENOMEM;
		}
	}
	d->n++;
	return 0;
}

int diag_vadd(struct diags *d, enum diag_severity sev,
	      const struct conf_loc *loc, const char *fmt, va_list ap)
{
	unsigned *count;
	char *msg;

	if (!d)
		return 0;
	count = sev == DIAG_ERROR ? &d->errors : &d->warnings;
	if (++*count > NFQD_MAX_ERRORS) {
		/* The first one over says so, where it would have been. */
		if (*count == NFQD_MAX_ERRORS + 1)
			push(d, sev, loc, strdup(sev == DIAG_ERROR ?
				"too many errors, stopping" :
				"too many warnings, the rest are not shown"),
			     true);
		return -ENOSPC;
	}
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	return push(d, sev, loc, msg, false);
}

int diag_add(struct diags *d, enum diag_severity sev,
	     const struct conf_loc *loc, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = diag_vadd(d, sev, loc, fmt, ap);
	va_end(ap);
	return rc;
}

bool diag_errors_full(const struct diags *d)
{
	return d && d->errors > NFQD_MAX_ERRORS;
}

static bool before(const struct diag *a, const struct diag *b)
{
	if (a->summary != b->summary)
		return !a->summary;
	return a->loc.line < b->loc.line ||
	       (a->loc.line == b->loc.line && a->loc.col < b->loc.col);
}

void diag_sort(struct diags *d, unsigned from)
{
	/* Insertion sort: a handful of records, and it is stable. */
	for (unsigned i = from + 1; i < d->n; i++) {
		struct diag t = d->v[i];
		unsigned j = i;

		for (; j > from && before(&t, &d->v[j - 1]); j--)
			d->v[j] = d->v[j - 1];
		d->v[j] = t;
	}
}

/* "FILE:LINE:COL: ", "FILE: " or "" into BUF. */
static void where(const struct diag *g, char *buf, size_t len)
{
	if (!g->loc.file)
		buf[0] = '\0';
	else if (!g->loc.line)
		snprintf(buf, len, "%s: ", g->loc.file);
	else
		snprintf(buf, len, "%s:%u:%u: ", g->loc.file, g->loc.line,
			 g->loc.col);
}

char *diag_line(const struct diag *g)
{
	char loc[4200], *s;

	where(g, loc, sizeof(loc));
	if (asprintf(&s, "%s%s%s", loc, g->severity == DIAG_WARNING ?
		     "warning: " : "", g->msg) < 0)
		return NULL;
	return s;
}

char *diag_join(const struct diags *d, enum diag_severity sev)
{
	char *all = NULL;
	size_t len = 0;

	for (unsigned i = 0; d && i < d->n; i++) {
		char *line, *n;
		size_t l;

		if (d->v[i].severity != sev)
			continue;
		line = diag_line(&d->v[i]);
		l = line ? strlen(line) : 0;
		n = line ? realloc(all, len + l + 2) : NULL;
		if (!n) {
			free(line);
			free(all);
			return NULL;
		}
		all = n;
		memcpy(all + len, line, l);
		all[len + l] = '\n';
		all[len + l + 1] = '\0';
		len += l + 1;
		free(line);
	}
	return all;
}

/* Line LINE of FILE (without its newline) into *OUT; false if none. */
static bool source_line(const char *file, unsigned line, char **out,
			size_t *cap)
{
	FILE *f = fopen(file, "re");
	ssize_t n = -1;

	if (!f)
		return false;
	for (unsigned i = 0; i < line; i++) {
		n = getline(out, cap, f);
		if (n < 0)
			break;
	}
	fclose(f);
	if (n < 0)
		return false;
	(*out)[strcspn(*out, "\r\n")] = '\0';
	return true;
}

/* The caret under column COL: the line's own tabs keep it aligned. */
static void caret(FILE *f, const char *line, unsigned col)
{
	size_t len = strlen(line);

	for (unsigned i = 0; i + 1 < col; i++)
		fputc(i < len && line[i] == '\t' ? '\t' : ' ', f);
	fputs("^\n", f);
}

void diag_print(FILE *f, const struct diags *d)
{
	char *line = NULL;
	size_t cap = 0;

	for (unsigned i = 0; d && i < d->n; i++) {
		const struct diag *g = &d->v[i];
		char *text = diag_line(g);

		fprintf(f, "%s\n", text ? text : g->msg);
		free(text);
		if (g->loc.file && g->loc.line && !g->summary &&
		    source_line(g->loc.file, g->loc.line, &line, &cap)) {
			fprintf(f, "%s\n", line);
			caret(f, line, g->loc.col);
		}
	}
	if (d && d->nomem)
		fprintf(f, "out of memory: some messages are missing\n");
	free(line);
}

void diag_log(const struct diags *d, const char *prefix)
{
	for (unsigned i = 0; d && i < d->n; i++) {
		const struct diag *g = &d->v[i];
		char loc[4200];

		/* The log level says "warning": not twice on one line. */
		where(g, loc, sizeof(loc));
		if (g->severity == DIAG_ERROR)
			log_err("%s%s%s", prefix, loc, g->msg);
		else
			log_warn("%s%s", loc, g->msg);
	}
}

void diag_free(struct diags *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		free((char *)d->v[i].loc.file);
		free(d->v[i].msg);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}
