/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nolock_shim.c - LD_PRELOAD library for core_nolock.sh: counts, per
 * worker thread (named "nfqd-q*"), the calls to every pthread lock,
 * semaphore, condition variable and the allocator made between SIGUSR1
 * (start counting) and SIGUSR2 (stop). glibc's malloc takes arena locks,
 * so an allocation on the packet path is a lock on it too. The counts are
 * printed to stderr at exit as "nolock: THREAD name=count ...".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* RECV is the positive control: workers must be seen receiving. */
enum { MUTEX, SPIN, RWLOCK, SEM, COND, ALLOC, RECV, N_KINDS };
static const char *const kind_names[N_KINDS] = {
	"mutex", "spin", "rwlock", "sem", "cond", "alloc", "recvmmsg",
};

#define MAX_THREADS 64
struct tcount {
	char name[16];
	unsigned long n[N_KINDS];
};
static struct tcount counts[MAX_THREADS];
static volatile sig_atomic_t counting;
static __thread int slot = -1;	/* this thread's entry, if a worker */
static int next_slot;

static void count(int kind)
{
	char name[16];

	if (!counting)
		return;
	if (slot < 0) {
		if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0 ||
		    strncmp(name, "nfqd-q", 6) != 0)
			return;
		slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
		if (slot >= MAX_THREADS)
			return;
		memcpy(counts[slot].name, name, sizeof(name));
	}
	if (slot < MAX_THREADS)
		counts[slot].n[kind]++;
}

#define WRAP(ret, fn, kind, proto, args)				\
	ret fn proto							\
	{								\
		static ret (*real) proto;				\
		if (!real)						\
			real = (ret (*) proto)dlsym(RTLD_NEXT, #fn);	\
		count(kind);						\
		return real args;					\
	}

WRAP(int, pthread_mutex_lock, MUTEX, (pthread_mutex_t *m), (m))
WRAP(int, pthread_mutex_trylock, MUTEX, (pthread_mutex_t *m), (m))
WRAP(int, pthread_spin_lock, SPIN, (pthread_spinlock_t *l), (l))
WRAP(int, pthread_spin_trylock, SPIN, (pthread_spinlock_t *l), (l))
WRAP(int, pthread_rwlock_rdlock, RWLOCK, (pthread_rwlock_t *l), (l))
WRAP(int, pthread_rwlock_wrlock, RWLOCK, (pthread_rwlock_t *l), (l))
WRAP(int, sem_wait, SEM, (sem_t *s), (s))
WRAP(int, pthread_cond_wait, COND, (pthread_cond_t *c, pthread_mutex_t *m),
     (c, m))
WRAP(void *, malloc, ALLOC, (size_t n), (n))
WRAP(int, recvmmsg, RECV, (int fd, struct mmsghdr *v, unsigned int n, int f,
			  struct timespec *t), (fd, v, n, f, t))
WRAP(void *, realloc, ALLOC, (void *p, size_t n), (p, n))

/* calloc is called by dlsym itself: count it without recursing. */
extern void *__libc_calloc(size_t n, size_t size);
void *calloc(size_t n, size_t size)
{
	count(ALLOC);
	return __libc_calloc(n, size);
}

static void on_signal(int sig)
{
	counting = sig == SIGUSR1;
}

__attribute__((constructor)) static void shim_init(void)
{
	signal(SIGUSR1, on_signal);
	signal(SIGUSR2, on_signal);
}

__attribute__((destructor)) static void shim_report(void)
{
	char line[256];

	for (int i = 0; i < next_slot && i < MAX_THREADS; i++) {
		int n = snprintf(line, sizeof(line), "nolock: %s",
				 counts[i].name);

		for (int k = 0; k < N_KINDS; k++)
			n += snprintf(line + n, sizeof(line) - (size_t)n,
				      " %s=%lu", kind_names[k], counts[i].n[k]);
		line[n++] = '\n';
		if (write(STDERR_FILENO, line, (size_t)n) < 0)
			break;
	}
}
