/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * confenv.c - the checks a config must pass on this system before
 * anything is bound: users and groups exist, the control socket's
 * directory is there or can be made.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "confenv.h"
#include "diag.h"

static const struct conf_loc *whole(const struct conf *c,
				    struct conf_loc *loc)
{
	loc->file = c->path ? c->path : "<built-in>";
	loc->line = 0;
	loc->col = 0;
	return loc;
}

/* Where an option was written (OPT), or the whole file. */
static const struct conf_loc *at(const struct conf *c,
				 const struct conf_loc *opt,
				 struct conf_loc *loc)
{
	if (!opt->line || !opt->file)
		return whole(c, loc);
	*loc = *opt;
	return loc;
}

/* The nearest existing directory above PATH's directory (or that
 * directory itself) into DIR. */
static void existing_dir(const char *path, char *dir, size_t size)
{
	struct stat st;
	char *slash;

	snprintf(dir, size, "%s", path);
	while ((slash = strrchr(dir, '/')) != NULL) {
		if (slash == dir) {
			dir[1] = '\0';
			return;
		}
		*slash = '\0';
		if (stat(dir, &st) == 0)
			return;
	}
	snprintf(dir, size, ".");
}

/* nfqd makes the control socket's directory when it is missing (as
 * root, before dropping privileges): the nearest existing one must be
 * writable then. Only root's view counts. */
static int check_socket_dir(const struct conf *c, struct diags *dg)
{
	const char *path = c->opts.control_socket;
	char dir[PATH_MAX], sockdir[PATH_MAX];
	const struct conf_loc *where;
	struct conf_loc loc;
	struct stat st;

	if (!path || !strchr(path, '/') || geteuid() != 0)
		return 0;
	snprintf(sockdir, sizeof(sockdir), "%s", path);
	where = at(c, &c->opts.control_socket_loc, &loc);
	existing_dir(path, dir, sizeof(dir));
	*strrchr(sockdir, '/') = '\0';
	if (strcmp(dir, sockdir) != 0 && access(dir, W_OK) < 0) {
		diag_add(dg, DIAG_ERROR, where,
			 "control-socket \"%s\": cannot create its directory: %s is not writable (%s): create the directory or choose another path",
			 path, dir, strerror(errno));
		return -EINVAL;
	}
	if (strcmp(dir, sockdir) == 0 && stat(dir, &st) == 0 &&
	    !S_ISDIR(st.st_mode)) {
		diag_add(dg, DIAG_ERROR, where,
			 "control-socket \"%s\": %s is not a directory: choose another path",
			 path, dir);
		return -EINVAL;
	}
	return 0;
}

int conf_check_env(const struct conf *c, struct diags *dg)
{
	const struct conf_options *o = &c->opts;
	struct conf_loc loc;
	int rc = 0;

	errno = 0;
	if (o->user && !getpwnam(o->user)) {
		diag_add(dg, DIAG_ERROR, at(c, &o->user_loc, &loc),
			 "user \"%s\": no such user%s%s: create it (useradd --system --no-create-home %s) or remove option user",
			 o->user, errno ? ": " : "", errno ? strerror(errno) : "",
			 o->user);
		rc = -EINVAL;
	}
	errno = 0;
	if (o->control_group && !getgrnam(o->control_group)) {
		diag_add(dg, DIAG_ERROR, at(c, &o->control_group_loc, &loc),
			 "control-group \"%s\": no such group%s%s: create it (groupadd --system %s) or remove option control-group",
			 o->control_group, errno ? ": " : "",
			 errno ? strerror(errno) : "", o->control_group);
		rc = -EINVAL;
	}
	if (check_socket_dir(c, dg) < 0)
		rc = -EINVAL;
	return rc;
}
