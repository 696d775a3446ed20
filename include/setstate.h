/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * setstate.h - runtime set elements across a restart: saved to a file
 * when nfqd stops, read back (and the file removed) when it starts
 * (nfqd.conf(5), option set-state-file). Main thread.
 */
#ifndef NFQD_SETSTATE_H
#define NFQD_SETSTATE_H

struct conf_options;
struct policy;

/* The file option O names (malloc'd), or NULL for "none" (or ENOMEM). */
char *setstate_path(const struct conf_options *o);

/* Write every runtime element of P to PATH (atomically: a temporary
 * file renamed); no file when there are none. Logs what it did or why
 * it failed. */
void setstate_save(struct policy *p, const char *path);

/* Add the elements saved in PATH to P's sets with the time they had
 * left less the time nfqd was stopped, then remove PATH. Elements of a
 * set P lacks or of another type are dropped and counted in the log
 * line. A missing file is no error. */
void setstate_restore(struct policy *p, const char *path);

#endif
