/* nfqd-ctl.c - STUB until observability lands. */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "nfqd-ctl: not implemented yet\n");
	return 2;
}
