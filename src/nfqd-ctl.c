/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfqd-ctl.c - the control command: parses the command line against a
 * command table, sends one request to nfqd and prints the answer as text,
 * JSON or Prometheus exposition; or hands the repeating commands
 * ("stats -w", "top") to ctl_watch.c / ctl_top.c.
 * Exit status: 0 ok, 1 daemon error, 2 usage, 3 unreachable.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl_client.h"
#include "ctl_setcli.h"
#include "ctl_watch.h"
#include "defaults.h"
#include "proto.h"

#define MIN_INTERVAL	0.1
#define MAX_INTERVAL	86400.0

/* Options given after (or before) the command; each command allows some. */
#define OPT_PROMETHEUS	0x01
#define OPT_OUTPUT	0x02
#define OPT_WATCH	0x04
#define OPT_DELAY	0x08
#define OPT_BATCH	0x10
#define OPT_COUNT	0x20

struct opts {
	const char *socket;
	bool json;
	unsigned cmd_opts;	/* OPT_* given */
	const char *output;	/* -o FILE */
	double interval;	/* -w / -d SECONDS */
	unsigned long count;	/* -n COUNT */
	const char **words;	/* argc of them at most */
	unsigned n_words;
};

/* Print the OK answer J in text form on F. */
typedef int (*render_fn)(FILE *f, json_t *j);

/* Warnings go to stderr (the journal, under systemctl reload); the
 * reload itself succeeded. */
static int render_reload(FILE *f, json_t *j)
{
	json_t *w;
	size_t i;

	fprintf(f, "reloaded: generation %lld\n", (long long)
		json_integer_value(json_object_get(j, "generation")));
	json_array_foreach(json_object_get(j, "warnings"), i, w) {
		const char *s = json_string_value(w);

		/* "FILE:LINE:COL: warning: ..." says it already. */
		fprintf(stderr, "nfqd-ctl: %s%s\n",
			s && strstr(s, ": warning: ") ? "" : "warning: ",
			s ? s : "?");
	}
	return 0;
}

static int render_quiet(FILE *f, json_t *j)
{
	return 0;
}

/* The command table: words typed, options allowed, text renderer. */
static const struct command {
	const char *name;
	const char *sub;	/* required second word, or NULL */
	unsigned opts;		/* OPT_* this command accepts */
	render_fn render;	/* NULL: not a one-request command */
	const char *usage;	/* lines, one per form of the command */
	const char *help;	/* a line for each usage line */
} commands[] = {
	{ "status", NULL, OPT_OUTPUT, ctl_render_status, "status",
	  "version, pid, uptime, config path, policy generation, queues" },
	{ "stats", NULL, OPT_PROMETHEUS | OPT_OUTPUT | OPT_WATCH | OPT_COUNT,
	  ctl_render_stats, "stats [--prometheus]\nstats -w SECONDS [-n COUNT]",
	  "per-queue counters (--prometheus: Prometheus text format)\n"
	  "rates every SECONDS until interrupted (-j: JSON lines)" },
	{ "rules", NULL, OPT_OUTPUT, ctl_render_rules, "rules",
	  "every hook's rules, in order, with packet and byte counters" },
	{ "reload", NULL, 0, render_reload, "reload",
	  "re-read the config file; on error keep the running policy" },
	{ "counters", "reset", 0, render_quiet, "counters reset",
	  "zero nfqd's own counters (not the kernel's)" },
	{ "sets", NULL, OPT_OUTPUT, ctl_render_sets, "sets",
	  "every named set: type, elements, memory, counters, source" },
	{ "set", "*", 0, NULL,
	  "set add NAME ELEMENT... [timeout DURATION]\n"
	  "set delete NAME ELEMENT...\n"
	  "set flush NAME\nset list NAME",
	  "add runtime elements (- reads them from standard input)\n"
	  "delete runtime elements (- as for add)\n"
	  "delete every runtime element\n"
	  "every element, its origin and the time it has left" },
	{ "top", NULL, OPT_DELAY | OPT_BATCH | OPT_COUNT, NULL,
	  "top [-d SECONDS] [-b] [-n COUNT]",
	  "live view: per-queue rates, busiest rules; q quits" },
};
#define N_COMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: nfqd-ctl [-s SOCKET] [-j] COMMAND\n"
		"  -s, --socket PATH   control socket (default %s)\n"
		"  -j, --json          JSON output (one JSON document)\n"
		"  -o, --output FILE   write the output to FILE, atomically\n"
		"                      (status, stats, rules, sets)\n"
		"  -h, --help          this help\n"
		"  -V, --version       print the version\n"
		"commands:\n", NFQD_DEFAULT_SOCKET);
	for (size_t i = 0; i < N_COMMANDS; i++) {
		const char *u = commands[i].usage, *h = commands[i].help;

		while (*u) {
			int nu = (int)strcspn(u, "\n");
			int nh = (int)strcspn(h, "\n");

			if (nu < 30)
				fprintf(f, "  %-30.*s%.*s\n", nu, u, nh, h);
			else
				fprintf(f, "  %.*s\n%32s%.*s\n", nu, u, "",
					nh, h);
			u += nu + !!u[nu];
			h += nh + !!h[nh];
		}
	}
	fprintf(f, "exit status: 0 ok; 1 the daemon answered with an error; "
		"2 usage error;\n"
		"             3 the daemon cannot be reached\n");
}

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "nfqd-ctl: %s%s%s\n", msg, arg ? ": " : "",
		arg ? arg : "");
	fprintf(stderr, "Try 'nfqd-ctl --help'.\n");
	return -1;
}

/*
 * Option SH/LO with a value ("-x V", "-xV", "--long V", "--long=V") at
 * argv[*i]: 1 with *val set, 0 if argv[*i] is another option, -1 if the
 * value is missing.
 */
static int opt_value(int argc, char **argv, int *i, const char *sh,
		     const char *lo, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(lo);

	if (!strcmp(a, sh) || !strcmp(a, lo)) {
		if (++*i >= argc)
			return usage_error("option needs an argument", a);
		*val = argv[*i];
		return 1;
	}
	if (!strncmp(a, lo, n) && a[n] == '=') {
		*val = a + n + 1;
		return 1;
	}
	if (!strncmp(a, sh, 2) && a[2]) {
		*val = a + 2;
		return 1;
	}
	return 0;
}

static int parse_interval(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end ||
	    !(*out >= MIN_INTERVAL && *out <= MAX_INTERVAL))
		return usage_error("SECONDS must be a number from 0.1 to 86400",
				   s);
	return 0;
}

static int parse_count(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *out == 0 || s[0] == '-')
		return usage_error("COUNT must be a positive integer", s);
	return 0;
}

/* A command option with a value: -o, -w, -d, -n. 1 if not one. */
static int parse_value_opt(struct opts *o, int argc, char **argv, int *i)
{
	const char *v;
	int r;

	if ((r = opt_value(argc, argv, i, "-o", "--output", &v))) {
		o->cmd_opts |= OPT_OUTPUT;
		o->output = v;
	} else if ((r = opt_value(argc, argv, i, "-w", "--watch", &v))) {
		o->cmd_opts |= OPT_WATCH;
		r = r < 0 ? r : parse_interval(v, &o->interval);
	} else if ((r = opt_value(argc, argv, i, "-d", "--delay", &v))) {
		o->cmd_opts |= OPT_DELAY;
		r = r < 0 ? r : parse_interval(v, &o->interval);
	} else if ((r = opt_value(argc, argv, i, "-n", "--iterations",
				  &v))) {
		o->cmd_opts |= OPT_COUNT;
		r = r < 0 ? r : parse_count(v, &o->count);
	} else {
		return 1;
	}
	return r < 0 ? -1 : 0;
}

/* One argument: a global option, a command option, or a command word. */
static int parse_arg(struct opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v;
	int r;

	if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
		o->json = true;
	} else if ((r = opt_value(argc, argv, i, "-s", "--socket", &v))) {
		if (r < 0)
			return -1;
		o->socket = v;
	} else if (!strcmp(a, "--prometheus")) {
		o->cmd_opts |= OPT_PROMETHEUS;
	} else if (!strcmp(a, "-b") || !strcmp(a, "--batch")) {
		o->cmd_opts |= OPT_BATCH;
	} else if ((r = parse_value_opt(o, argc, argv, i)) <= 0) {
		return r;
	} else if (a[0] == '-' && a[1]) {
		return usage_error("unknown option", a);
	} else {
		o->words[o->n_words++] = a;
	}
	return 0;
}

/* Parse argv. Returns 0, 1 for -h/-V (done), or -1 for a usage error. */
static int parse_args(struct opts *o, int argc, char **argv)
{
	bool words_only = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (words_only || a[0] != '-' || !a[1]) {
			o->words[o->n_words++] = a;
		} else if (!strcmp(a, "--")) {
			words_only = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 1;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("nfqd-ctl %s\n", PACKAGE_VERSION);
			return 1;
		} else if (parse_arg(o, argc, argv, &i) < 0) {
			return -1;
		}
	}
	if (!o->n_words)
		return usage_error("no command given", NULL);
	if (o->n_words > PROTO_MAX_ARGS && strcmp(o->words[0], "set"))
		return usage_error("too many arguments", NULL);
	if (!*o->socket)
		return usage_error("empty socket path", NULL);
	if ((o->cmd_opts & OPT_OUTPUT) && !*o->output)
		return usage_error("empty output path", NULL);
	return 0;
}

static const struct command *usage_of(const struct command *c)
{
	const char *u = c->usage;

	while (*u) {
		int n = (int)strcspn(u, "\n");

		fprintf(stderr, "nfqd-ctl: usage: nfqd-ctl %.*s\n", n, u);
		u += n + !!u[n];
	}
	return NULL;
}

/* Option combinations the table cannot say. NULL after a message. */
static const struct command *check_combination(const struct opts *o,
					       const struct command *c)
{
	unsigned w = o->cmd_opts;

	if ((w & OPT_PROMETHEUS) && o->json) {
		usage_error("--prometheus and --json exclude each other", NULL);
		return NULL;
	}
	if ((w & OPT_WATCH) && (w & (OPT_PROMETHEUS | OPT_OUTPUT))) {
		usage_error("-w excludes --prometheus and -o", NULL);
		return NULL;
	}
	if (!strcmp(c->name, "stats") && (w & OPT_COUNT) && !(w & OPT_WATCH))
		return usage_of(c);
	if (!strcmp(c->name, "top") && o->json) {
		usage_error("top has no JSON output (try stats -w 1 -j)",
			    NULL);
		return NULL;
	}
	return c;
}

static const struct command *find_command(const struct opts *o)
{
	const struct command *c = NULL;

	for (size_t i = 0; i < N_COMMANDS && !c; i++)
		if (!strcmp(o->words[0], commands[i].name))
			c = &commands[i];
	if (!c) {
		usage_error("unknown command", o->words[0]);
		return NULL;
	}
	if (c->sub && !strcmp(c->sub, "*"))	/* checks its own words */
		return (o->cmd_opts & ~c->opts) ? usage_of(c) : c;
	if (o->n_words != (c->sub ? 2u : 1u) ||
	    (c->sub && strcmp(o->words[1], c->sub)) ||
	    (o->cmd_opts & ~c->opts))
		return usage_of(c);
	return check_combination(o, c);
}

/* Where the output goes: stdout, or a temporary file renamed over
 * o->output when whole, so a reader (node_exporter's textfile
 * collector) never sees half of it. */
struct output {
	FILE *f;
	char *tmp;
};

/* Why FILE cannot be written: its directory, not the temporary name. */
static void output_error(const char *file, int e)
{
	char *dir = strdup(file), *slash = dir ? strrchr(dir, '/') : NULL;

	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	fprintf(stderr, "nfqd-ctl: cannot write %s: directory %s: %s%s\n",
		file, slash ? dir : ".", strerror(e),
		e == ENOENT ? " (create it, or give another file with -o)" : "");
	free(dir);
}

static int output_open(const struct opts *o, struct output *out)
{
	mode_t mask;
	int fd;

	out->f = stdout;
	out->tmp = NULL;
	if (!o->output)
		return 0;
	if (asprintf(&out->tmp, "%s.XXXXXX", o->output) < 0) {
		out->tmp = NULL;
		return -ENOMEM;
	}
	fd = mkstemp(out->tmp);
	if (fd < 0 || !(out->f = fdopen(fd, "w"))) {
		output_error(o->output, errno);
		if (fd >= 0) {
			close(fd);
			unlink(out->tmp);
		}
		free(out->tmp);
		return -1;
	}
	/* mkstemp makes 0600; the file is for other readers. */
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return 0;
}

/* Finish the output; COMMIT false discards a temporary file. Returns
 * RET, or CTL_EXIT_DAEMON if writing failed. */
static int output_close(const struct opts *o, struct output *out, int ret,
			bool commit)
{
	bool bad = ferror(out->f) || fflush(out->f) == EOF;

	if (!out->tmp) {
		if (bad)
			perror("nfqd-ctl: stdout");
		return bad && !ret ? CTL_EXIT_DAEMON : ret;
	}
	bad = bad || fsync(fileno(out->f)) < 0;
	bad = fclose(out->f) == EOF || bad;
	if (commit && !bad && rename(out->tmp, o->output) < 0)
		bad = true;
	if (bad)
		fprintf(stderr, "nfqd-ctl: %s: %s\n", o->output,
			strerror(errno));
	if (bad || !commit)
		unlink(out->tmp);
	free(out->tmp);
	return bad && !ret ? CTL_EXIT_DAEMON : ret;
}

/* Text mode error output: every line of "errors", else "error". */
static void print_error(json_t *j, uint16_t status)
{
	json_t *errors = json_object_get(j, "errors"), *e;
	const char *msg = json_string_value(json_object_get(j, "error"));
	size_t i;

	if (json_array_size(errors)) {
		json_array_foreach(errors, i, e)
			fprintf(stderr, "%s\n", json_string_value(e));
		return;
	}
	fprintf(stderr, "nfqd-ctl: %s\n", msg ? msg : proto_status_str(status));
}

/* Ask for the document of WORDS. Returns 0 with *j, or an exit status
 * (with *j the error document when the daemon answered). */
static int ask(const struct opts *o, const char *const *words, unsigned n,
	       json_t **j, uint16_t *status)
{
	struct proto_request req = { .flags = o->json ? PROTO_REQ_JSON : 0 };

	req.argc = n;
	for (unsigned i = 0; i < n; i++)
		req.argv[i] = words[i];
	return ctl_client_ask(o->socket, &req, j, status);
}

/* One request, its answer printed; returns the exit status. */
static int run_once(const struct opts *o, const struct command *c)
{
	struct output out;
	uint16_t status = 0;
	json_t *j;
	int ret;

	ret = ask(o, o->words, o->n_words, &j, &status);
	if (ret && !j)
		return ret;
	if (output_open(o, &out) < 0) {
		json_decref(j);
		return CTL_EXIT_DAEMON;
	}
	if (o->json) {
		json_dumpf(j, out.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', out.f);
	} else if (ret) {
		print_error(j, status);
	} else if (c->render(out.f, j) < 0) {
		fprintf(stderr, "nfqd-ctl: %s: unexpected answer\n", o->socket);
		ret = CTL_EXIT_DAEMON;
	}
	json_decref(j);
	return output_close(o, &out, ret, !ret || o->json);
}

/* stats --prometheus: the stats and rules documents; with -o, a daemon
 * that cannot be asked leaves a file saying nfqd_up 0, so stale counters
 * are not exported as current. */
static int run_prometheus(const struct opts *o)
{
	static const char *const stats[] = { "stats" }, *const rules[] = {
		"rules" }, *const sets[] = { "sets" };
	json_t *s = NULL, *r = NULL, *st = NULL;
	struct output out;
	uint16_t status;
	int ret;

	ret = ask(o, stats, 1, &s, &status);
	if (!ret)
		ret = ask(o, rules, 1, &r, &status);
	if (!ret)
		ret = ask(o, sets, 1, &st, &status);
	if (ret && (s || r || st))
		print_error(st ? st : r ? r : s, status);
	if (ret && !o->output)
		goto out;
	if (output_open(o, &out) < 0) {
		ret = CTL_EXIT_DAEMON;
		goto out;
	}
	if (ret) {
		ctl_render_prometheus_down(out.f);
	} else if (ctl_render_prometheus(out.f, s, r) < 0) {
		fprintf(stderr, "nfqd-ctl: %s: unexpected answer\n", o->socket);
		ctl_render_prometheus_down(out.f);
		ret = CTL_EXIT_DAEMON;
	} else {
		ctl_render_prometheus_sets(out.f, st);
	}
	ret = output_close(o, &out, ret, true);
out:
	json_decref(s);
	json_decref(r);
	json_decref(st);
	return ret;
}

static int run_repeating(const struct opts *o, const struct command *c)
{
	struct ctl_watch_opts w = {
		.socket = o->socket, .interval = o->interval,
		.count = o->count, .json = o->json,
	};

	if (!strcmp(c->name, "stats"))
		return ctl_watch_stats(&w);
	if (!(o->cmd_opts & OPT_DELAY))
		w.interval = 1;
	if (o->cmd_opts & OPT_BATCH)
		return ctl_top_batch(&w);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "nfqd-ctl: top needs a terminal; "
			"use 'top -b' for plain text\n");
		return CTL_EXIT_USAGE;
	}
	return ctl_top_run(&w);
}

/* The command O names; returns the exit status. */
static int run(struct opts *o, int argc, char **argv)
{
	const struct command *c;
	int ret;

	ret = parse_args(o, argc, argv);
	if (ret)
		return ret > 0 ? 0 : CTL_EXIT_USAGE;
	c = find_command(o);
	if (!c)
		return CTL_EXIT_USAGE;
	if (!strcmp(c->name, "set"))
		return ctl_set_run(o->socket, o->json, o->words, o->n_words);
	if (!c->render || (o->cmd_opts & OPT_WATCH))
		return run_repeating(o, c);
	if (o->cmd_opts & OPT_PROMETHEUS)
		return run_prometheus(o);
	return run_once(o, c);
}

int main(int argc, char **argv)
{
	struct opts o = { .socket = NFQD_DEFAULT_SOCKET };
	int ret;

	o.words = calloc((size_t)argc + 1, sizeof(*o.words));
	if (!o.words)
		return CTL_EXIT_DAEMON;
	ret = run(&o, argc, argv);
	free(o.words);
	return ret;
}
