/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * confenv.h - what a config needs from the system it runs on, checked
 * the same way by "nfqd -t", a start and a reload: the user and the
 * control group it names exist, and the control socket's directory can
 * be made (when checked as root). Set files are read by the policy
 * compiler in all three. A config this accepts starts.
 */
#ifndef NFQD_CONFENV_H
#define NFQD_CONFENV_H

struct conf;
struct diags;

/* 0, or -EINVAL with one error per problem in DG (naming the fix). */
int conf_check_env(const struct conf *c, struct diags *dg);

#endif
