/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.h - "nfqd -t": load and compile a config without binding
 * anything, and say what was found.
 */
#ifndef NFQD_CHECK_H
#define NFQD_CHECK_H

#include <stdbool.h>

/*
 * Check the config at PATH (BUILTIN: the built-in one) as a start would:
 * parse, resolve the queues, compile the policy, read the set files.
 * Errors and warnings go to stderr, each with its source line and a caret
 * under the column. Then, if there is no error, "config OK" - or with
 * DUMP the normalised config (conf_dump()) - on stdout. 0 if valid.
 */
int nfqd_check_config(const char *path, bool builtin, bool dump);

#endif
