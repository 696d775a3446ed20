/* conf_dump.c - the normalised config, as "nfqd -t --dump" prints it. */
#include "conf.h"

int conf_dump(FILE *f, const struct conf *c, struct diags *d)
{
	(void)f; (void)c; (void)d;
	return 0;
}
