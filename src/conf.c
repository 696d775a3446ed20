/* conf.c - STUB until the config parser lands: built-in defaults only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"

struct conf *conf_default(void)
{
	struct conf *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->opts.queues_mode = QUEUES_AUTO;
	c->opts.queue_maxlen = 4096;
	c->opts.copy_range = 256;
	c->opts.gso = true;
	c->opts.batch = 64;
	c->opts.rcvbuf = 16u << 20;
	c->opts.cpu_pin = true;
	c->opts.stats_file = strdup(NFQD_DEFAULT_STATS);
	c->opts.stats_interval = 1;
	c->opts.control_socket = strdup(NFQD_DEFAULT_SOCKET);
	c->opts.log_level = LOG_LVL_INFO;
	c->opts.bypass_mark = 0x40000000;
	return c;
}

int conf_load(const char *path, struct conf **out, char **errors)
{
	*errors = strdup("config parser not built yet\n");
	return -EINVAL;
}

void conf_free(struct conf *c)
{
	if (!c)
		return;
	free(c->opts.stats_file);
	free(c->opts.control_socket);
	free(c->opts.queue_list);
	free(c);
}

int conf_queue_numbers(const struct conf_options *o, uint16_t **out)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint16_t *q;

	if (ncpu < 1)
		ncpu = 1;
	q = calloc((size_t)ncpu, sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (long i = 0; i < ncpu; i++)
		q[i] = (uint16_t)(o->queue_base + i);
	*out = q;
	return (int)ncpu;
}

const char *conf_hook_name(enum conf_hook_id hook)
{
	static const char *const names[] = { "prerouting", "input", "forward",
					     "output", "postrouting" };
	return hook < HOOK_MAX ? names[hook] : "?";
}

const char *conf_verdict_name(enum verdict_kind v)
{
	static const char *const names[] = { "accept", "drop", "repeat", "queue" };
	return names[v];
}
