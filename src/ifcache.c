/* ifcache.c - STUB until the rule engine lands. */
#include "ifcache.h"

int ifcache_start(struct ev_loop *loop) { return 0; }
void ifcache_stop(void) { }
bool ifcache_name(uint32_t ifindex, char *name) { return false; }
