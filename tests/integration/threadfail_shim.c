/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * threadfail_shim.c - LD_PRELOAD library for reload_workerfail.sh:
 * pthread_create fails with EAGAIN (as when the process hits its thread
 * limit) while the file named by THREADFAIL_FILE exists.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *,
			 void *(*)(void *), void *);

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	static create_fn real;
	const char *file = getenv("THREADFAIL_FILE");

	if (!real)
		real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (file && access(file, F_OK) == 0)
		return EAGAIN;
	return real(t, attr, fn, arg);
}
