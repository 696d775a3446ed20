/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_setfile.c - streaming set-file reading: one element per line,
 * parsed by conf_parse_elem() so a file accepts what an inline element
 * list does; each element goes to the caller, nothing of the file is kept.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>

#include "conf.h"
#include "domset.h"
#include "names.h"

/* Where a set was written; a hand-built conf may leave the file out. */
static struct conf_loc set_loc(const struct conf *c, const struct conf_set *s)
{
	struct conf_loc l = s->loc;

	if (!l.file)
		l.file = c->path ? c->path : "<config>";
	return l;
}

char *conf_set_file_path(const struct conf *c, const struct conf_set *s)
{
	const char *slash = c->path ? strrchr(c->path, '/') : NULL;
	char *r;

	if (s->file[0] == '/' || !slash)
		return strdup(s->file);
	if (asprintf(&r, "%.*s/%s", (int)(slash - c->path), c->path,
		     s->file) < 0)
		return NULL;
	return r;
}

/* Cut the comment and surrounding blanks off LINE; *COL gets the start. */
static char *trim(char *line, unsigned *col)
{
	char *hash = strchr(line, '#'), *end;

	if (hash)
		*hash = '\0';
	while (*line == ' ' || *line == '\t') {
		line++;
		(*col)++;
	}
	end = line + strlen(line);
	while (end > line && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return line;
}

/*
 * Domain sets read the formats blocklists ship in: one pattern a line
 * ("example.com", ".example.com", "*.example.com"), hosts lines
 * ("0.0.0.0 example.com alias.example.com", the localhost names
 * skipped) and adblock domain rules ("||example.com^": the name and
 * below). '#' at the start or after a blank, '!' and '[' lines are
 * comments. Anything else is a warning, never an error: lists carry junk.
 */
#define DOMAIN_WARNINGS 10	/* per file; then one count for the rest */

struct dom_read {
	const char *path;
	const struct conf_set *s;
	conf_elem_fn add;
	void *arg;
	struct diags *d;
	unsigned long n_elems, n_junk;
	struct conf_loc more;		/* the first junk not shown */
	unsigned last_junk;		/* its line */
	int err;
};

/* An IPv4 or IPv6 address; an IPv6 one may have a zone index, as in
 * macOS's /etc/hosts ("fe80::1%lo0 localhost"). */
static bool is_addr(const char *t)
{
	const char *zone = strchr(t, '%');
	char text[INET6_ADDRSTRLEN];
	uint8_t a[16];

	if (inet_pton(AF_INET, t, a) == 1 || inet_pton(AF_INET6, t, a) == 1)
		return true;
	if (!zone || !zone[1] || (size_t)(zone - t) >= sizeof(text))
		return false;
	memcpy(text, t, (size_t)(zone - t));
	text[zone - t] = '\0';
	return inet_pton(AF_INET6, text, a) == 1;
}

static bool is_localhost(const char *t)
{
	static const char *const names[] = {
		"localhost", "localhost.localdomain", "local", "broadcasthost",
		"ip6-localhost", "ip6-loopback", "ip6-localnet",
		"ip6-mcastprefix", "ip6-allnodes", "ip6-allrouters",
		"ip6-allhosts", "0.0.0.0", NULL,
	};

	for (unsigned i = 0; names[i]; i++)
		if (!strcasecmp(t, names[i]))
			return true;
	return false;
}

/*
 * Junk at LINE:COL: TOK, and WHY. A hosts line's bad name (ENTRY) is
 * ignored alone, its other names kept; anything else ignores its line.
 * Junk is counted a line at a time, with a warning for the first junk of
 * each of the first DOMAIN_WARNINGS lines; the rest are counted
 * (dom_junk_more()).
 */
static void dom_junk(struct dom_read *r, unsigned line, unsigned col,
		     const char *tok, const char *why, bool entry)
{
	struct conf_loc at = { r->path, line, col };

	if (line == r->last_junk)
		return;		/* the line's first junk was told */
	r->last_junk = line;
	if (r->n_junk++ == DOMAIN_WARNINGS)
		r->more = at;
	if (r->n_junk <= DOMAIN_WARNINGS)
		diag_add(r->d, DIAG_WARNING, &at, "\"%.80s\": %s; %s",
			 tok, why, entry ? "this name ignored, the line's "
			 "good names kept" : "line ignored");
}

/* The junk lines not shown one by one: their count, from the first. */
static void dom_junk_more(const struct dom_read *r)
{
	unsigned long n = r->n_junk - DOMAIN_WARNINGS;

	if (r->n_junk <= DOMAIN_WARNINGS)
		return;
	diag_add(r->d, DIAG_WARNING, &r->more, "set %s: %lu more line%s "
		 "with junk, ignored (from this one to line %u; only the "
		 "first %d are shown one by one): fix or remove it, or "
		 "comment it out ('#')", r->s->name, n, n == 1 ? "" : "s",
		 r->last_junk, DOMAIN_WARNINGS);
}

/* One pattern TOK (at COL) of FLAGS_OR (0: as written) to the set. */
static void dom_token(struct dom_read *r, char *tok, unsigned line,
		      unsigned col, unsigned force, bool entry)
{
	char name[NAME_MAX_LEN + 1], text[DOM_PATTERN_MAX + 1];
	struct conf_elem el = { .kind = ELEM_STR };
	const char *why;
	unsigned flags;

	if (domset_pattern(tok, strlen(tok), name, &flags, &why)) {
		dom_junk(r, line, col, tok, why, entry);
		return;
	}
	domset_pattern_text(name, force ? force : flags, text);
	el.str = text;
	el.loc = (struct conf_loc){ r->path, line, col };
	why = r->add(r->arg, &el);
	if (!why) {
		r->n_elems++;
		return;
	}
	diag_add(r->d, DIAG_ERROR, &el.loc, "%s", why);
	r->err = strcmp(why, "out of memory") ? -EINVAL : -ENOMEM;
}

const char *conf_domain_line(char *t, conf_dom_token_fn fn, void *arg,
			     unsigned *col_out, const char **tok_out)
{
	char *tok[64], *p = t, *hash;
	unsigned col[64], n = 0, i;
	size_t len;

	/* A comment: '#' first or after a blank ("x.test # why"). */
	for (hash = strchr(t, '#'); hash; hash = strchr(hash + 1, '#'))
		if (hash == t || hash[-1] == ' ' || hash[-1] == '\t') {
			*hash = '\0';
			break;
		}
	while (n < 64) {
		p += strspn(p, " \t\r\n");
		if (!*p)
			break;
		col[n] = (unsigned)(p - t) + 1;
		tok[n++] = p;
		p += strcspn(p, " \t\r\n");
		if (*p)
			*p++ = '\0';
	}
	if (n == 0 || tok[0][0] == '!' || tok[0][0] == '[')
		return NULL;
	*col_out = col[0];
	*tok_out = tok[0];
	if (n > 1 && is_addr(tok[0])) {		/* hosts */
		for (i = 1; i < n; i++)
			if (!is_localhost(tok[i]))
				fn(arg, tok[i], col[i], DOM_EXACT, true);
		return NULL;
	}
	if (n > 1) {
		*col_out = col[1];
		*tok_out = tok[1];
		return "unexpected after the name";
	}
	len = strlen(tok[0]);
	if (!strncmp(tok[0], "||", 2)) {		/* adblock */
		if (len < 4 || tok[0][len - 1] != '^' ||
		    strpbrk(tok[0] + 2, "/$^*|") != tok[0] + len - 1)
			return "not a plain adblock domain rule (||name^)";
		tok[0][len - 1] = '\0';
		fn(arg, tok[0] + 2, col[0] + 2, DOM_EXACT | DOM_BELOW, false);
		return NULL;
	}
	if (is_addr(tok[0]))
		return "an address without a name";
	fn(arg, tok[0], col[0], 0, false);
	return NULL;
}

/* A line's pattern, for dom_token(). */
struct dom_at {
	struct dom_read *r;
	unsigned line;
};

static void dom_at_token(void *arg, char *text, unsigned col, unsigned force,
			 bool entry)
{
	struct dom_at *a = arg;

	if (!a->r->err)
		dom_token(a->r, text, a->line, col, force, entry);
}

static void dom_line(struct dom_read *r, char *t, unsigned line)
{
	struct dom_at a = { r, line };
	const char *why, *tok = NULL;
	unsigned col = 0;

	why = conf_domain_line(t, dom_at_token, &a, &col, &tok);
	if (why)
		dom_junk(r, line, col, tok, why, false);
}

static int read_domains(FILE *f, const char *path, const struct conf_set *s,
			conf_elem_fn add, void *arg, struct diags *d,
			unsigned long *n_elems)
{
	struct dom_read r = { .path = path, .s = s, .add = add, .arg = arg,
			      .d = d };
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;

	for (;;) {
		errno = 0;
		if (getline(&line, &cap, f) < 0)
			break;
		dom_line(&r, line, ++lineno);
		if (r.err)
			break;
	}
	if (!feof(f) && !r.err)
		r.err = errno == ENOMEM ? -ENOMEM : -EIO;
	dom_junk_more(&r);
	free(line);
	*n_elems = r.n_elems;
	return r.err;
}

/* Feed every line of F to ADD; errors at their own line and column. */
static int read_lines(FILE *f, const char *path, const struct conf_set *s,
		      conf_elem_fn add, void *arg, struct diags *d,
		      unsigned long *n_elems)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0, bad = 0;
	int err = 0;

	for (;;) {
		unsigned col = 1;
		char *t, *msg = NULL;
		struct conf_elem el;
		const char *why;

		errno = 0;
		if (getline(&line, &cap, f) < 0)
			break;
		t = trim(line, &col);
		lineno++;
		if (!*t)
			continue;
		if (conf_parse_elem(t, s->type, s->interval, &el, &msg) == 0) {
			why = add(arg, &el);
			free(el.str);
			if (!why) {
				(*n_elems)++;
				continue;
			}
			msg = strdup(why);
		}
		diag_add(d, DIAG_ERROR, &(struct conf_loc){ path, lineno, col },
			 "%s", msg ? msg : "out of memory");
		free(msg);
		err = -EINVAL;
		if (++bad >= NFQD_MAX_ERRORS)
			break;
	}
	/* getline() fails for want of memory without ferror(): a set
	 * silently cut short there would let its addresses through. */
	if (!feof(f) && !err && bad < NFQD_MAX_ERRORS)
		err = errno == ENOMEM ? -ENOMEM : -EIO;
	free(line);
	return err;
}

int conf_set_file_read(const struct conf *c, const struct conf_set *s,
		       conf_elem_fn add, void *arg, struct diags *d)
{
	struct conf_loc at = set_loc(c, s);
	char *path = conf_set_file_path(c, s);
	unsigned long n = 0;
	FILE *f;
	int err;

	if (!path)
		return -ENOMEM;
	f = fopen(path, "re");
	if (f && s->type == SET_DOMAIN)
		err = read_domains(f, path, s, add, arg, d, &n);
	else
		err = f ? read_lines(f, path, s, add, arg, d, &n) : -errno;
	if (f && ferror(f) && !err)
		err = -EIO;
	if (f)
		fclose(f);
	if (err && err != -EINVAL)
		diag_add(d, DIAG_ERROR, &at, "set %s: cannot read %s: %s",
			 s->name, path, strerror(-err));
	else if (!err && !n)
		diag_add(d, DIAG_WARNING, &at, "set %s: file %s has no "
			 "elements", s->name, path);
	free(path);
	return err;
}
