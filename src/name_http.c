/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * name_http.c - the host an HTTP/1.x request names (RFC 9112 3, 3.2):
 * the authority of an absolute-form or CONNECT target, else the Host
 * field of the request head. Strict: whatever two servers might read
 * differently (two Hosts, folded lines, a space before the colon, a
 * Host that disagrees with the target) is malformed.
 *
 * Other protocols speak a first line too (an SSH banner, SMTP's EHLO,
 * IMAP's tagged LOGIN, FTP's USER): a first line is HTTP when a lenient
 * server could read a request in it (classify()), and only then is it
 * parsed; whatever else starts a connection is not HTTP (NOT), so that a
 * blocklist of web hosts leaves other protocols alone, while a request
 * dressed as another (an extension or lower-case method, tabs, leading
 * empty lines) is still read or malformed (BAD).
 */
#include <string.h>
#include <strings.h>

#include "names.h"

/* Longest request head looked at; a longer one is BAD. */
#define HTTP_HEAD_MAX 16384

static bool is_tchar(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/*
 * The host of an authority "host[:port]" or "[v6]:port" (N bytes at A)
 * into OUT; an empty host gives len 0. false if malformed.
 */
static bool authority_host(const uint8_t *a, size_t n, struct name_out *out)
{
	const uint8_t *colon;
	size_t i;

	out->len = 0;
	out->name[0] = '\0';
	if (n && a[0] == '[') {
		const uint8_t *end = memchr(a, ']', n);

		if (!end)
			return false;
		i = (size_t)(end - a) + 1;
		if (i < n && a[i] != ':')
			return false;
		return name_normalize((const char *)a + 1, i - 2, out) == 0;
	}
	colon = memchr(a, ':', n);
	if (colon) {
		for (i = (size_t)(colon - a) + 1; i < n; i++)
			if (a[i] < '0' || a[i] > '9')
				return false;
		n = (size_t)(colon - a);
	}
	if (n == 0)
		return true;
	return name_normalize((const char *)a, n, out) == 0;
}

/* Trim optional whitespace from both ends of [*V, *V + *N). */
static void trim_ows(const uint8_t **v, size_t *n)
{
	while (*n && ((*v)[0] == ' ' || (*v)[0] == '\t')) {
		(*v)++;
		(*n)--;
	}
	while (*n && ((*v)[*n - 1] == ' ' || (*v)[*n - 1] == '\t'))
		(*n)--;
}

/* The request line [P, P + N) (no CRLF): the target's host if any. */
static enum name_result request_line(const uint8_t *p, size_t n,
				     struct name_out *tgt, bool *has_tgt)
{
	const uint8_t *sp1 = memchr(p, ' ', n), *sp2, *t;
	size_t tn;

	*has_tgt = false;
	if (!sp1 || sp1 == p)
		return NAME_BAD;
	for (t = p; t < sp1; t++)
		if (!is_tchar(*t))
			return NAME_BAD;	/* a method is a token */
	sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - p));
	if (!sp2 || (size_t)(p + n - sp2) != 9 ||
	    (memcmp(sp2 + 1, "HTTP/1.1", 8) && memcmp(sp2 + 1, "HTTP/1.0", 8)))
		return NAME_BAD;
	t = sp1 + 1;
	tn = (size_t)(sp2 - t);
	if (tn == 0 || memchr(t, '\t', tn))
		return NAME_BAD;
	if (sp1 - p == 7 && !memcmp(p, "CONNECT", 7)) {
		*has_tgt = true;
		return authority_host(t, tn, tgt) && tgt->len ? NAME_DONE :
								 NAME_BAD;
	}
	if (t[0] == '/' || (tn == 1 && t[0] == '*'))
		return NAME_DONE;
	/* absolute-form: scheme "://" authority [path] */
	{
		const uint8_t *s = memchr(t, ':', tn), *a, *end;

		if (!s || (size_t)(t + tn - s) < 3 || s[1] != '/' || s[2] != '/')
			return NAME_BAD;
		a = s + 3;
		end = a;
		while (end < t + tn && *end != '/' && *end != '?' && *end != '#')
			end++;
		if (memchr(a, '@', (size_t)(end - a)))
			return NAME_BAD;	/* userinfo: refuse */
		*has_tgt = true;
		return authority_host(a, (size_t)(end - a), tgt) ? NAME_DONE :
								  NAME_BAD;
	}
}

/*
 * White space some HTTP/1.x server splits a request line at or skips
 * before it: SP, HTAB, LF, VT, FF, CR (nginx skips empty lines, Apache's
 * lenient parsing takes any of them), and what else Python's
 * http.server splits a Latin-1 line at (str.split(): 0x1c-0x1f, 0x85,
 * 0xa0).
 */
static bool is_ws(uint8_t c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') ||
	       (c >= 0x1c && c <= 0x1f) || c == 0x85 || c == 0xa0;
}

/*
 * Could a line of no version, whose first word is METHOD (MN bytes) and
 * REST (N bytes) what follows it to the line's end, be an HTTP/0.9
 * request? Only GET is (nginx, Apache and Python's http.server refuse
 * any other), of a path, an absolute URI (nginx picks the server by it)
 * or nothing; "GET key" (Redis), "OPTIONS rtsp://..." or "OPTIONS
 * sip:..." are other protocols.
 */
static bool http09(const uint8_t *method, size_t mn, const uint8_t *rest,
		   size_t n)
{
	size_t i = 0, t;

	if (mn != 3 || memcmp(method, "GET", 3))
		return false;
	while (i < n && is_ws(rest[i]))
		i++;
	for (t = i; t < n && !is_ws(rest[t]); t++)
		;
	return i == n || rest[i] == '/' ||
	       memmem(rest + i, t - i, "://", 3) != NULL;
}

/* Does [P, P + N) hold "HTTP/", in any case? */
static bool has_http_version(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 5 <= n; i++)
		if (!strncasecmp((const char *)p + i, "HTTP/", 5))
			return true;
	return false;
}

/*
 * Is P (N bytes) an HTTP request, as far as a lenient server could take
 * it for one? DONE: yes (well-formed or not, the caller's strict parse
 * says); NOT: no server would read a request in it, however it goes on;
 * MORE: cannot tell yet. Past leading white space, the first word is
 * read: a byte in it that cannot be in a method (not a tchar) is NOT;
 * then the line's end is needed. A line that holds "HTTP/" is a
 * request whatever its first word (an extension method, a lower-case
 * one, "SSH-2.0-...", "EHLO": Go, Apache and an nginx proxy pass on any
 * method), and so is one that could be HTTP/0.9 (http09()); any other
 * line is another protocol's, even if its first word is a method (Redis'
 * "GET key", RTSP's and SIP's OPTIONS).
 */
static enum name_result classify(const uint8_t *p, size_t n)
{
	const uint8_t *eol;
	size_t i = 0, word;

	while (i < n && is_ws(p[i]))
		i++;
	for (word = i; i < n && !is_ws(p[i]); i++)
		if (!is_tchar(p[i]))
			return NAME_NOT;
	if (i == n)
		return NAME_MORE;	/* the first word may go on */
	eol = memchr(p + i, '\n', n - i);
	if (!eol)
		return NAME_MORE;
	if (has_http_version(p + word, (size_t)(eol - (p + word))) ||
	    http09(p + word, i - word, p + i, (size_t)(eol - (p + i))))
		return NAME_DONE;
	return NAME_NOT;
}

enum name_result name_http_host(const uint8_t *p, size_t len,
				struct name_out *out)
{
	struct name_out tgt = { 0 }, host = { 0 };
	bool has_tgt, has_host = false;
	const uint8_t *line, *eol;
	size_t left;
	enum name_result r;

	name_out_clear(out);
	if (len > HTTP_HEAD_MAX)
		len = HTTP_HEAD_MAX;
	r = classify(p, len);
	if (r == NAME_NOT)
		return NAME_NOT;
	if (r == NAME_MORE)
		return len == HTTP_HEAD_MAX ? NAME_BAD : NAME_MORE;
	if (is_ws(p[0]))
		return NAME_BAD;	/* leading empty lines or white space */
	eol = memchr(p, '\n', len);
	if (!eol)
		return len == HTTP_HEAD_MAX ? NAME_BAD : NAME_MORE;
	if (eol == p || eol[-1] != '\r')
		return NAME_BAD;
	r = request_line(p, (size_t)(eol - 1 - p), &tgt, &has_tgt);
	if (r != NAME_DONE)
		return r;
	for (line = eol + 1;; line = eol + 1) {
		const uint8_t *colon, *v;
		size_t n, vn;

		left = len - (size_t)(line - p);
		eol = memchr(line, '\n', left);
		if (!eol)
			return len == HTTP_HEAD_MAX ? NAME_BAD : NAME_MORE;
		if (eol == line || eol[-1] != '\r')
			return NAME_BAD;
		n = (size_t)(eol - 1 - line);
		if (n == 0)
			break;			/* the end of the head */
		colon = memchr(line, ':', n);
		if (!colon || colon == line)
			return NAME_BAD;
		for (v = line; v < colon; v++)
			if (!is_tchar(*v))
				return NAME_BAD;	/* folds, spaces */
		if (colon - line != 4 || strncasecmp((const char *)line, "host", 4))
			continue;
		if (has_host)
			return NAME_BAD;
		has_host = true;
		v = colon + 1;
		vn = (size_t)(line + n - v);
		trim_ows(&v, &vn);
		if (!authority_host(v, vn, &host))
			return NAME_BAD;
	}
	if (has_tgt) {
		if (has_host && (host.len != tgt.len ||
				 memcmp(host.name, tgt.name, tgt.len)))
			return NAME_BAD;
		*out = tgt;
	} else if (has_host) {
		*out = host;
	}
	return NAME_DONE;
}
