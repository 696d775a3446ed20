/*
 * ctl.h - the control socket server on the main loop: accepts nfqd-ctl
 * connections, checks the peer, decodes requests (proto.h), answers.
 */
#ifndef NFQD_CTL_H
#define NFQD_CTL_H

struct nfqd;
struct ctl;

/* Create the socket at d->conf->opts.control_socket (directory created if
 * missing, mode 0600 or 0660 with control-group) and serve it on d->loop.
 * Logs the reason and returns a negative errno on failure. */
int ctl_start(struct nfqd *d, struct ctl **out);

/* Stop serving, close every connection, unlink the socket. */
void ctl_stop(struct ctl *c);

#endif
