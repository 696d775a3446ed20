/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * confenv.c - the checks a config must pass on this system before
 * anything is bound: users and groups exist, the control socket's path
 * fits a socket address, its directory and the stats file's are there
 * or can be made.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
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

/* Can the missing directory DIR (its nearest existing ancestor
 * EXISTING) be made? Make its first missing component and remove it
 * again: only mkdir() knows (a read-only or virtual file system). */
static int can_make_dir(const char *dir, const char *existing)
{
	char first[PATH_MAX];
	size_t len = strlen(existing);
	char *end;

	snprintf(first, sizeof(first), "%s", dir);
	if (strncmp(dir, existing, len) != 0)
		len = 0;		/* "." above a relative path */
	else if (dir[len] == '/')
		len++;
	end = strchr(first + len, '/');
	if (end)
		*end = '\0';
	if (mkdir(first, 0700) < 0)
		return errno == EEXIST ? 0 : -errno;
	rmdir(first);
	return 0;
}

/* nfqd makes the directory of the control socket or the stats file
 * when it is missing (as root, before dropping privileges): it must be
 * possible then. Only root's view counts. OPT_LOC: where option OPT
 * was written, or NULL. */
static int check_dir(const struct conf *c, const char *opt, const char *path,
		     const struct conf_loc *opt_loc, struct diags *dg)
{
	char dir[PATH_MAX], parent[PATH_MAX];
	const struct conf_loc *where;
	struct conf_loc loc;
	struct stat st;
	int rc;

	if (!path || !strchr(path, '/') || geteuid() != 0)
		return 0;
	where = opt_loc ? at(c, opt_loc, &loc) : whole(c, &loc);
	snprintf(parent, sizeof(parent), "%s", path);
	existing_dir(path, dir, sizeof(dir));
	*strrchr(parent, '/') = '\0';
	if (!*parent)
		return 0;
	if (strcmp(dir, parent) != 0 && (rc = can_make_dir(parent, dir)) < 0) {
		diag_add(dg, DIAG_ERROR, where,
			 "%s \"%s\": cannot create its directory %s (%s): create the directory or choose another path",
			 opt, path, parent, strerror(-rc));
		return -EINVAL;
	}
	if (strcmp(dir, parent) == 0 && stat(dir, &st) == 0 &&
	    !S_ISDIR(st.st_mode)) {
		diag_add(dg, DIAG_ERROR, where,
			 "%s \"%s\": %s is not a directory: choose another path",
			 opt, path, dir);
		return -EINVAL;
	}
	return 0;
}

/* A socket's path must fit sun_path with its terminating NUL. */
static int check_socket_len(const struct conf *c, struct diags *dg)
{
	const char *path = c->opts.control_socket;
	struct sockaddr_un sa;
	struct conf_loc loc;

	if (!path || strlen(path) < sizeof(sa.sun_path))
		return 0;
	diag_add(dg, DIAG_ERROR, at(c, &c->opts.control_socket_loc, &loc),
		 "control-socket \"%s\": path too long (%zu bytes, at most %zu): choose a shorter path",
		 path, strlen(path), sizeof(sa.sun_path) - 1);
	return -EINVAL;
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
	if (check_socket_len(c, dg) < 0 ||
	    check_dir(c, "control-socket", o->control_socket,
		      &o->control_socket_loc, dg) < 0)
		rc = -EINVAL;
	if (check_dir(c, "stats-file", o->stats_file, NULL, dg) < 0)
		rc = -EINVAL;
	return rc;
}
