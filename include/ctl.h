/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl.h - the control socket server on the main loop: accepts nfqd-ctl
 * connections, checks the peer, decodes requests (proto.h), answers.
 */
#ifndef NFQD_CTL_H
#define NFQD_CTL_H

struct conf_options;
struct ctl;
struct ctl_ops;
struct ev_loop;

/* Create the socket at O's control-socket (directory created if missing,
 * mode 0600 or 0660 with control-group) and serve it on LOOP; commands
 * reach the daemon only through OPS (ctl_cmd.h), which must outlive the
 * server. Logs the reason and returns a negative errno on failure. */
int ctl_start(struct ev_loop *loop, const struct conf_options *o,
	      const struct ctl_ops *ops, struct ctl **out);

/* Stop serving, close every connection, unlink the socket. */
void ctl_stop(struct ctl *c);

#endif
