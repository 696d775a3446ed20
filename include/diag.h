/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * diag.h - diagnostics: one record (severity, location, message) for
 * every stage that reads a config - the parser, the policy compiler, set
 * files, a reload - queued on one list and printed either one per line
 * ("FILE:LINE:COL: message", for the journal and nfqd-ctl) or, for
 * nfqd -t, with the source line and a caret under the column.
 */
#ifndef NFQD_DIAG_H
#define NFQD_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#define NFQD_MAX_ERRORS		20	/* kept per list, and as many warnings */

/* Where something was written: for "FILE:LINE:COL: message". */
struct conf_loc {
	const char *file;	/* NULL: no location at all */
	unsigned line;		/* 1-based; 0: the whole file */
	unsigned col;		/* 1-based */
};

enum diag_severity {
	DIAG_ERROR,		/* the config cannot be used */
	DIAG_WARNING,		/* it can, but probably not as meant */
};

struct diag {
	enum diag_severity severity;
	struct conf_loc loc;	/* loc.file is a copy the list owns */
	char *msg;
	bool summary;		/* "too many ...": stays last when sorted */
};

/*
 * A list of diagnostics; zero-initialise it ({ 0 }). Beyond
 * NFQD_MAX_ERRORS errors (or warnings) one "too many errors, stopping"
 * record is queued and the rest are only counted.
 */
struct diags {
	struct diag *v;
	unsigned n, cap;
	unsigned errors, warnings;	/* reported, kept or not */
	bool nomem;			/* a record was lost */
};

/* Queue a diagnostic at LOC (NULL: none). 0, -ENOSPC (only counted) or
 * -ENOMEM (counted, not kept). D may be NULL: nothing is kept. */
int diag_add(struct diags *d, enum diag_severity sev,
	     const struct conf_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int diag_vadd(struct diags *d, enum diag_severity sev,
	      const struct conf_loc *loc, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* No more errors are kept: a stage may stop looking for them. */
bool diag_errors_full(const struct diags *d);

/* Sort the records from index FROM on into line and column order (stable;
 * a summary stays last). For a stage that finds errors out of order. */
void diag_sort(struct diags *d, unsigned from);

/* "FILE:LINE:COL: message", with "warning: " before a warning's message;
 * "FILE: message" without a line, "message" without a file. Malloc'd,
 * NULL on ENOMEM. */
char *diag_line(const struct diag *g);

/* diag_line() of every record of severity SEV, each ending in '\n';
 * NULL if there is none (or on ENOMEM). */
char *diag_join(const struct diags *d, enum diag_severity sev);

/*
 * For nfqd -t: every record as diag_line() gives it, then the line of
 * FILE it points at and a caret under COL, as nft prints its errors. No
 * source line when FILE cannot be read (or the record has no line).
 */
void diag_print(FILE *f, const struct diags *d);

/* Log every record as "FILE:LINE:COL: message": errors at error level
 * after PREFIX, warnings at warning level (which says "warning"). */
void diag_log(const struct diags *d, const char *prefix);

/* Free the records; D is empty again and may be reused. */
void diag_free(struct diags *d);

#endif
