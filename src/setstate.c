/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * setstate.c - runtime set elements saved at stop, restored at start.
 *
 * The file: a first line "nfqd-set-state 1 SAVED" (SAVED: CLOCK_REALTIME
 * seconds), then one element a line: "SET TYPE ELEMENT ORIGIN LEFT",
 * LEFT the milliseconds it had left, or "-" for no timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "domset.h"
#include "dynset.h"
#include "log.h"
#include "policy.h"
#include "setstate.h"

#define MAGIC	"nfqd-set-state 1"

char *setstate_path(const struct conf_options *o)
{
	const char *sock = o->control_socket, *slash;
	char *p;

	if (o->set_state_none)
		return NULL;
	if (o->set_state_file)
		return strdup(o->set_state_file);
	slash = strrchr(sock, '/');
	if (!slash)
		return strdup("sets.state");
	if (asprintf(&p, "%.*s/sets.state", (int)(slash - sock), sock) < 0)
		return NULL;
	return p;
}

struct saver {
	FILE *f;
	const char *set;
	enum set_type type;
	size_t n;
};

static int save_one(void *arg, const struct dyn_elem *e)
{
	struct saver *s = arg;
	char text[DOM_PATTERN_MAX + 1];

	policy_dyn_text(s->type, e, text, sizeof(text));
	fprintf(s->f, "%s %s %s %s ", s->set, conf_set_type_name(s->type),
		text, e->origin == DYN_RULE ? "rule" : "runtime");
	if (e->left_ns)
		fprintf(s->f, "%llu\n",
			(unsigned long long)(e->left_ns + 999999) / 1000000);
	else
		fputs("-\n", s->f);
	s->n++;
	return 0;
}

static size_t save_sets(struct policy *p, FILE *f)
{
	struct saver s = { .f = f };
	uint64_t now = dynset_now();

	fprintf(f, MAGIC " %lld\n", (long long)time(NULL));
	for (unsigned i = 0; i < policy_set_count(p); i++) {
		struct policy_set_view v;

		policy_set_get(p, i, &v);
		if (!v.dyn)
			continue;
		s.set = v.name;
		s.type = v.type;
		dynset_walk(v.dyn, now, save_one, &s);
	}
	return s.n;
}

/* No runtime elements, no file. */
static size_t count_runtime(struct policy *p)
{
	struct dynset_stats st;
	size_t n = 0;

	for (unsigned i = 0; i < policy_set_count(p); i++) {
		struct policy_set_view v;

		policy_set_get(p, i, &v);
		if (v.dyn) {
			dynset_get_stats(v.dyn, &st);
			n += st.n;
		}
	}
	return n;
}

void setstate_save(struct policy *p, const char *path)
{
	char *tmp = NULL;
	FILE *f = NULL;
	size_t n;
	int fd = -1;

	if (!p || !path || !count_runtime(p))
		return;
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		log_err("set state %s: out of memory; runtime elements lost",
			path);
		return;
	}
	fd = mkstemp(tmp);
	if (fd >= 0)
		f = fdopen(fd, "w");
	if (!f) {
		log_err("set state %s: cannot write (%s); runtime elements "
			"lost: check the directory or option set-state-file",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	n = save_sets(p, f);
	if (fflush(f) || fsync(fd) || ferror(f) || fclose(f) ||
	    rename(tmp, path)) {
		log_err("set state %s: cannot write (%s); runtime elements "
			"lost", path, strerror(errno));
		if (f)
			unlink(tmp);
		goto out;
	}
	log_info("set state %s: saved %zu runtime elements", path, n);
out:
	free(tmp);
}

/* Element TEXT of set V with LEFT_MS (0: none) and ORIGIN: 1 added, 0
 * not (bad, or the set full). */
static int restore_elem(const struct policy_set_view *v, const char *text,
			uint64_t left_ms, enum dyn_origin origin)
{
	char name[DOM_PATTERN_MAX + 1], why[256];
	const char *bad;
	unsigned flags;
	uint8_t k[16];

	if (v->type == SET_DOMAIN) {
		if (domset_pattern(text, strlen(text), name, &flags, &bad))
			return 0;
		return dynset_add_pattern(v->dyn, &(struct dyn_name){
				name, strlen(name), flags },
			left_ms * 1000000ull, origin, true) >= 0;
	}
	if (policy_elem_key(v->type, text, k, why, sizeof(why)))
		return 0;
	return dynset_add(v->dyn, k, left_ms * 1000000ull, origin, true) >= 0;
}

/* One line "SET TYPE ELEMENT ORIGIN LEFT": 1 added, 0 dropped, -1 bad. */
static int restore_line(struct policy *p, char *line, uint64_t gone_ms)
{
	char *set = strtok(line, " \n"), *type = strtok(NULL, " \n");
	char *elem = strtok(NULL, " \n"), *origin = strtok(NULL, " \n");
	char *left = strtok(NULL, " \n");
	struct policy_set_view v;
	uint64_t left_ms = 0;
	int i;

	if (!left)
		return -1;
	i = policy_set_find(p, set);
	if (i < 0)
		return 0;
	policy_set_get(p, (unsigned)i, &v);
	if (!v.dyn || strcmp(type, conf_set_type_name(v.type)))
		return 0;
	if (strcmp(left, "-")) {
		left_ms = strtoull(left, NULL, 10);
		if (left_ms <= gone_ms || !v.timeout)
			return 0;
		left_ms -= gone_ms;
	}
	if (dynset_prepare(v.dyn))
		return 0;
	return restore_elem(&v, elem, left_ms,
			    strcmp(origin, "rule") ? DYN_RUNTIME : DYN_RULE);
}

void setstate_restore(struct policy *p, const char *path)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0, added = 0, dropped = 0, bad = 0;
	long long saved = 0;
	uint64_t gone_ms = 0;
	time_t now = time(NULL);

	if (!p || !path || !(f = fopen(path, "r")))
		return;
	if (getline(&line, &cap, f) < 0 ||
	    sscanf(line, MAGIC " %lld", &saved) != 1) {
		log_err("set state %s: not a set state file; ignored and "
			"removed", path);
		goto out;
	}
	if (now > saved)
		gone_ms = (uint64_t)(now - saved) * 1000;
	while (getline(&line, &cap, f) >= 0) {
		int rc = restore_line(p, line, gone_ms);

		added += rc > 0;
		dropped += rc == 0;
		bad += rc < 0;
	}
	for (unsigned i = 0; i < policy_set_count(p); i++) {
		struct policy_set_view v;

		policy_set_get(p, i, &v);
		if (v.dyn)
			dynset_grow(v.dyn);
	}
	log_info("set state %s: restored %zu runtime elements; %zu dropped "
		 "(expired, set gone or changed), %zu bad lines", path, added,
		 dropped, bad);
out:
	free(line);
	fclose(f);
	unlink(path);
}
