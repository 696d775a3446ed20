/* ctl.c - STUB until observability lands. */
#include <stddef.h>

#include "ctl.h"

int ctl_start(struct nfqd *d, struct ctl **out) { *out = NULL; return 0; }
void ctl_stop(struct ctl *c) { }
