/*
 * nfqd-ctl.c - the control command: parses the command line against a
 * command table, sends one request to nfqd and prints the answer as text
 * or JSON. Exit status: 0 ok, 1 daemon error, 2 usage, 3 unreachable.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conf.h"
#include "ctl_client.h"
#include "proto.h"

#define EXIT_DAEMON	1
#define EXIT_USAGE	2
#define EXIT_UNREACH	3
#define CALL_TIMEOUT_MS	30000

#define OPT_PROMETHEUS	0x1

struct opts {
	const char *socket;
	bool json;
	unsigned cmd_opts;	/* OPT_* given after the command */
	const char *words[PROTO_MAX_ARGS];
	unsigned n_words;
};

/* Print the OK answer J in text form. */
typedef int (*render_fn)(const struct opts *o, json_t *j);

static int render_status(const struct opts *o, json_t *j)
{
	return ctl_render_status(stdout, j);
}

static int render_stats(const struct opts *o, json_t *j)
{
	if (o->cmd_opts & OPT_PROMETHEUS)
		return ctl_render_prometheus(stdout, j);
	return ctl_render_stats(stdout, j);
}

static int render_rules(const struct opts *o, json_t *j)
{
	return ctl_render_rules(stdout, j);
}

static int render_reload(const struct opts *o, json_t *j)
{
	printf("reloaded: generation %lld\n",
	       (long long)json_integer_value(json_object_get(j, "generation")));
	return 0;
}

static int render_quiet(const struct opts *o, json_t *j)
{
	return 0;
}

/* The command table: words typed, options allowed, text renderer. */
static const struct command {
	const char *name;
	const char *sub;	/* required second word, or NULL */
	unsigned opts;		/* OPT_* this command accepts */
	render_fn render;
	const char *usage;
	const char *help;
} commands[] = {
	{ "status", NULL, 0, render_status, "status",
	  "version, pid, uptime, config path, policy generation, queues" },
	{ "stats", NULL, OPT_PROMETHEUS, render_stats, "stats [--prometheus]",
	  "per-queue counters (--prometheus: Prometheus text format)" },
	{ "rules", NULL, 0, render_rules, "rules",
	  "every hook's rules, in order, with packet and byte counters" },
	{ "reload", NULL, 0, render_reload, "reload",
	  "re-read the config file; on error keep the running policy" },
	{ "counters", "reset", 0, render_quiet, "counters reset",
	  "zero nfqd's own counters (not the kernel's)" },
};
#define N_COMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: nfqd-ctl [-s SOCKET] [-j] COMMAND\n"
		"  -s, --socket PATH   control socket (default %s)\n"
		"  -j, --json          JSON output (one JSON document)\n"
		"  -h, --help          this help\n"
		"  -V, --version       print the version\n"
		"commands:\n", NFQD_DEFAULT_SOCKET);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-22s%s\n", commands[i].usage, commands[i].help);
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

/* One argument: a global option, a command option, or a command word. */
static int parse_arg(struct opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
		o->json = true;
	} else if (!strcmp(a, "-s") || !strcmp(a, "--socket")) {
		if (++*i >= argc)
			return usage_error("option needs an argument", a);
		o->socket = argv[*i];
	} else if (!strncmp(a, "--socket=", 9)) {
		o->socket = a + 9;
	} else if (!strncmp(a, "-s", 2)) {
		o->socket = a + 2;
	} else if (!strcmp(a, "--prometheus")) {
		o->cmd_opts |= OPT_PROMETHEUS;
	} else if (a[0] == '-' && a[1]) {
		return usage_error("unknown option", a);
	} else if (o->n_words < PROTO_MAX_ARGS) {
		o->words[o->n_words++] = a;
	} else {
		return usage_error("too many arguments", NULL);
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
			if (o->n_words == PROTO_MAX_ARGS)
				return usage_error("too many arguments", NULL);
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
	if (!*o->socket)
		return usage_error("empty socket path", NULL);
	return 0;
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
	if (o->n_words != (c->sub ? 2u : 1u) ||
	    (c->sub && strcmp(o->words[1], c->sub))) {
		fprintf(stderr, "nfqd-ctl: usage: nfqd-ctl %s\n", c->usage);
		return NULL;
	}
	if (o->cmd_opts & ~c->opts) {
		fprintf(stderr, "nfqd-ctl: usage: nfqd-ctl %s\n", c->usage);
		return NULL;
	}
	if ((o->cmd_opts & OPT_PROMETHEUS) && o->json) {
		usage_error("--prometheus and --json exclude each other", NULL);
		return NULL;
	}
	return c;
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

/* Print the answer; returns the exit status. */
static int show_reply(const struct opts *o, const struct command *c,
		      const struct ctl_reply *reply)
{
	json_error_t jerr;
	json_t *j;
	int ret = reply->status == PROTO_ST_OK ? 0 : EXIT_DAEMON;

	j = json_loadb(reply->payload, reply->len, 0, &jerr);
	if (!j) {
		fprintf(stderr, "nfqd-ctl: %s: malformed answer (%s)\n",
			o->socket, jerr.text);
		return EXIT_UNREACH;
	}
	if (o->json) {
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else if (ret) {
		print_error(j, reply->status);
	} else if (c->render(o, j) < 0) {
		fprintf(stderr, "nfqd-ctl: %s: unexpected answer\n", o->socket);
		ret = EXIT_DAEMON;
	}
	json_decref(j);
	if (fflush(stdout) == EOF) {
		perror("nfqd-ctl: stdout");
		ret = ret ? ret : EXIT_DAEMON;
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = { .socket = NFQD_DEFAULT_SOCKET };
	struct proto_request req = { 0 };
	const struct command *c;
	struct ctl_reply reply;
	char err[512];
	int ret;

	ret = parse_args(&o, argc, argv);
	if (ret)
		return ret > 0 ? 0 : EXIT_USAGE;
	c = find_command(&o);
	if (!c)
		return EXIT_USAGE;
	req.flags = o.json ? PROTO_REQ_JSON : 0;
	req.argc = o.n_words;
	for (unsigned i = 0; i < o.n_words; i++)
		req.argv[i] = o.words[i];
	ret = ctl_client_call(o.socket, &req, CALL_TIMEOUT_MS, &reply, err,
			      sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "nfqd-ctl: %s\n", err);
		return EXIT_UNREACH;
	}
	ret = show_reply(&o, c, &reply);
	free(reply.payload);
	return ret;
}
