/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_top.c - "nfqd-ctl top" on a terminal. ncurses rather than raw ANSI
 * sequences: terminfo knows each terminal's alternate screen, cursor and
 * attribute sequences (raw ANSI would assume an xterm), and curses sends
 * only what changed between frames, which matters over a slow ssh link.
 * The frame's text comes from ctl_view.c, like "top -b"; this file owns
 * the screen, the keys and the signals.
 */
#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "ctl_client.h"
#include "ctl_view.h"
#include "ctl_watch.h"

#define KEY_CTRL_L	('L' & 0x1f)

static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t got_winch;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void on_winch(int sig)
{
	got_winch = 1;
}

/* Installed before curses starts, which then leaves these signals to us;
 * no SA_RESTART, so poll() returns at once. */
static void catch_signals(void)
{
	static const int quit[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(quit) / sizeof(quit[0]); i++)
		sigaction(quit[i], &sa, NULL);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
}

struct top {
	const struct ctl_watch_opts *o;
	struct ctl_poller p;
	char *text;		/* the last frame's text */
	size_t len;
	int heading[2];
};

/* Render the current sample into t->text for LINES lines. */
static void compose(struct top *t)
{
	struct ctl_top_frame fr = {
		.socket = t->o->socket, .interval = t->o->interval,
		.status = t->p.cur.status, .stats = t->p.cur.stats,
		.rules = t->p.rules, .height = LINES,
	};
	char clock[16];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	if (!localtime_r(&now, &tm) ||
	    !strftime(clock, sizeof(clock), "%H:%M:%S", &tm))
		snprintf(clock, sizeof(clock), "--:--:--");
	fr.clock = clock;
	if (t->p.exit_status != CTL_EXIT_OK)
		fr.error = t->p.err;
	free(t->text);
	t->text = NULL;
	f = open_memstream(&t->text, &t->len);
	if (!f)
		return;
	ctl_view_top(f, &fr);
	fclose(f);
	t->heading[0] = fr.heading[0];
	t->heading[1] = fr.heading[1];
}

/* Draw t->text, clipped to the screen; headings in reverse video. */
static void draw(const struct top *t)
{
	const char *s = t->text ? t->text : "";

	erase();
	for (int y = 0; y < LINES && *s; y++) {
		size_t n = strcspn(s, "\n");

		mvaddnstr(y, 0, s, (int)n < COLS ? (int)n : COLS);
		if (y == t->heading[0] || y == t->heading[1])
			mvchgat(y, 0, -1, A_REVERSE, 0, NULL);
		s += n + (s[n] == '\n');
	}
	refresh();
}

/* The terminal's new size, told to curses; the frame is made again
 * because the number of rules that fit changed. */
static void resize(struct top *t)
{
	struct winsize ws;

	got_winch = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row &&
	    ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
	clearok(curscr, TRUE);
	compose(t);
	draw(t);
}

enum key_action { ACT_NONE, ACT_QUIT, ACT_REFRESH };

static enum key_action read_keys(void)
{
	enum key_action a = ACT_NONE;
	int ch;

	while ((ch = getch()) != ERR) {
		if (ch == 'q' || ch == 'Q')
			return ACT_QUIT;
		if (ch == ' ')
			a = ACT_REFRESH;
		if (ch == KEY_CTRL_L) {
			clearok(curscr, TRUE);
			a = ACT_REFRESH;
		}
	}
	return a;
}

static void poll_and_draw(struct top *t)
{
	ctl_poll(&t->p);
	compose(t);
	draw(t);
}

/* Frames until q, a signal, or o->count refreshes. */
static void run(struct top *t)
{
	double next = ctl_now() + t->o->interval;
	unsigned long frames = 0;
	struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
	enum key_action a;
	double left;

	compose(t);
	draw(t);
	while (!got_signal) {
		if (got_winch)
			resize(t);
		left = next - ctl_now();
		in.revents = 0;
		if (left > 0 && poll(&in, 1, (int)(left * 1000) + 1) < 0 &&
		    errno == EINTR)
			continue;
		/* A terminal gone without SIGHUP would wake poll forever. */
		if (in.revents & (POLLHUP | POLLERR | POLLNVAL))
			return;
		a = read_keys();
		if (a == ACT_QUIT)
			return;
		if (a != ACT_REFRESH && ctl_now() < next)
			continue;
		poll_and_draw(t);
		if (t->o->count && ++frames >= t->o->count)
			return;
		next = ctl_now() + t->o->interval;
	}
}

int ctl_top_run(const struct ctl_watch_opts *o)
{
	struct top t = {
		.o = o,
		.p = { .socket = o->socket,
		       .what = CTL_DOC_STATUS | CTL_DOC_STATS | CTL_DOC_RULES,
		       .timeout_ms = ctl_watch_timeout_ms(o->interval) },
	};
	SCREEN *scr;
	int sig;

	/* A wrong socket path is told at once, not on a full screen. */
	if (ctl_poll(&t.p) < 0) {
		fprintf(stderr, "nfqd-ctl: %s\n", t.p.err);
		return t.p.exit_status;
	}
	setlocale(LC_CTYPE, "");
	catch_signals();
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		fprintf(stderr, "nfqd-ctl: top: cannot use terminal type "
			"'%s'\n", getenv("TERM") ? getenv("TERM") : "");
		ctl_poller_clear(&t.p);
		return CTL_EXIT_USAGE;
	}
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	run(&t);
	endwin();
	delscreen(scr);
	free(t.text);
	ctl_poller_clear(&t.p);
	sig = got_signal;
	if (sig) {
		/* The terminal is restored: die of the signal, as expected
		 * by a shell waiting for us. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return CTL_EXIT_OK;
}
