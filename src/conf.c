/* SPDX-License-Identifier: GPL-2.0-or-later */
/* conf.c - the conf object: defaults, loading a file, freeing, queue list. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "conf_parse.h"
#include "log.h"

/* Far above any sane config; keeps a stray huge file from eating memory. */
#define CONF_MAX_SIZE	(64u << 20)

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
	c->opts.incomplete_verdict = VERDICT_DROP;
	c->opts.orphan_verdict = VERDICT_REPEAT;
	c->opts.flow_table_size = 16384;
	c->opts.flow_timeout = 120;
	c->opts.dns_ports[0] = 53;
	c->opts.n_dns_ports = 1;
	if (!c->opts.stats_file || !c->opts.control_socket) {
		conf_free(c);
		return NULL;
	}
	return c;
}

static struct conf *conf_new(const char *name)
{
	struct conf *c = conf_default();

	if (!c)
		return NULL;
	c->files = calloc(1, sizeof(*c->files));
	if (!c->files) {
		conf_free(c);
		return NULL;
	}
	c->files[0] = strdup(name);
	c->path = strdup(name);
	c->n_files = 1;
	if (!c->files[0] || !c->path) {
		conf_free(c);
		return NULL;
	}
	return c;
}

/* Parse BUF into st->conf; errors in file order on st->diags. */
static int parse(struct pstate *st, const char *buf, size_t len)
{
	unsigned from = st->diags->n;
	int rc = conf_parse_buffer(st, buf, len);

	if (rc != -ENOMEM && !st->nomem)
		conf_pst_finish(st);
	if (rc == -ENOMEM || st->nomem)
		return -ENOMEM;
	if (!st->n_errs && !rc)
		return 0;
	if (!st->n_errs)
		conf_error(st, &(struct conf_loc){ st->file, 1, 1 },
			   "cannot parse");
	diag_sort(st->diags, from);
	return -EINVAL;
}

int conf_load_buffer(const char *name, const char *buf, size_t len,
		     struct conf **out, struct diags *d)
{
	const struct conf_loc whole = { name, 0, 0 };
	struct pstate st = { 0 };
	struct diags mine = { 0 };
	int rc;

	*out = NULL;
	if (len > CONF_MAX_SIZE) {
		diag_add(d, DIAG_ERROR, &whole, "file too large");
		return -EFBIG;
	}
	st.diags = d ? d : &mine;
	st.conf = conf_new(name);
	rc = st.conf ? 0 : -ENOMEM;
	if (rc == 0) {
		st.file = st.conf->files[0];
		rc = parse(&st, buf, len);
	}
	if (rc == 0) {
		*out = st.conf;
		st.conf = NULL;
	}
	if (rc == -ENOMEM)
		diag_add(d, DIAG_ERROR, &whole, "out of memory");
	conf_pst_cleanup(&st);
	conf_free(st.conf);
	diag_free(&mine);
	return rc;
}

static int read_all(int fd, char **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb = cap > CONF_MAX_SIZE ? NULL :
				   realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return cap > CONF_MAX_SIZE ? -EFBIG : -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = b;
	*len = n;
	return 0;
}

int conf_load(const char *path, struct conf **out, struct diags *d)
{
	char *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	rc = conf_read_file(path, &buf, &len, d);
	if (rc < 0)
		return rc;
	rc = conf_load_buffer(path, buf, len, out, d);
	free(buf);
	return rc;
}

int conf_read_file(const char *path, char **buf, size_t *len,
		   struct diags *d)
{
	const struct conf_loc whole = { path, 0, 0 };
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		diag_add(d, DIAG_ERROR, &whole, "cannot open: %s",
			 strerror(-rc));
		return rc;
	}
	rc = read_all(fd, buf, len);
	close(fd);
	if (rc < 0)
		diag_add(d, DIAG_ERROR, &whole, "cannot read: %s",
			 strerror(-rc));
	return rc;
}

void conf_free(struct conf *c)
{
	if (!c)
		return;
	free(c->opts.stats_file);
	free(c->opts.control_socket);
	free(c->opts.set_state_file);
	free(c->opts.user);
	free(c->opts.control_group);
	free(c->opts.queue_list);
	for (unsigned i = 0; i < c->n_sets; i++) {
		free(c->sets[i].name);
		conf_elems_free(c->sets[i].elems, c->sets[i].n_elems);
		free(c->sets[i].file);
	}
	free(c->sets);
	for (unsigned h = 0; h < HOOK_MAX; h++)
		conf_rules_free(c->hooks[h].rules, c->hooks[h].n_rules);
	for (unsigned i = 0; i < c->n_files; i++)
		free(c->files[i]);
	free(c->files);
	free(c->path);
	free(c);
}

static int cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* The explicit list, sorted, duplicates removed. */
static int queue_list(const struct conf_options *o, uint16_t **out)
{
	size_t total = 0, n = 0;
	uint16_t *q;

	for (unsigned i = 0; i < o->n_queue_list; i++) {
		const struct conf_range *r = &o->queue_list[i];

		if (r->lo > r->hi || r->hi > 65535)
			return -ERANGE;
		total += r->hi - r->lo + 1;
	}
	if (total == 0)
		return -EINVAL;
	q = malloc(total * sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (unsigned i = 0; i < o->n_queue_list; i++)
		for (uint32_t v = o->queue_list[i].lo;
		     v <= o->queue_list[i].hi; v++)
			q[n++] = (uint16_t)v;
	qsort(q, n, sizeof(*q), cmp_u16);
	total = n ? 1 : 0;
	for (size_t i = 1; i < n; i++)
		if (q[i] != q[total - 1])
			q[total++] = q[i];
	if (total > NFQD_MAX_QUEUES) {
		free(q);
		return -E2BIG;
	}
	*out = q;
	return (int)total;
}

int conf_queue_numbers(const struct conf_options *o, uint16_t **out)
{
	long n;
	uint16_t *q;

	*out = NULL;
	if (o->queues_mode == QUEUES_LIST)
		return queue_list(o, out);
	if (o->queues_mode == QUEUES_COUNT) {
		n = o->queues_count;
	} else {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n < 1)
			n = 1;
	}
	if (n < 1 || n > NFQD_MAX_QUEUES)
		return -E2BIG;
	if (o->queue_base + n - 1 > 65535)
		return -ERANGE;
	q = calloc((size_t)n, sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (long i = 0; i < n; i++)
		q[i] = (uint16_t)(o->queue_base + i);
	*out = q;
	return (int)n;
}

const char *conf_hook_name(enum conf_hook_id hook)
{
	static const char *const names[] = { "prerouting", "input", "forward",
					     "output", "postrouting" };

	return (unsigned)hook < HOOK_MAX ? names[hook] : "?";
}

const char *conf_verdict_name(enum verdict_kind v)
{
	static const char *const names[] = { "accept", "drop", "repeat",
					     "queue" };

	return (unsigned)v <= VERDICT_QUEUE ? names[v] : "?";
}
