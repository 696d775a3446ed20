/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tsan_urcu.c - liburcu's grace periods told to ThreadSanitizer. */
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>
#include <stdlib.h>

/*
 * Linked only into a TSan build (configure --enable-tsan). liburcu-qsbr
 * is not instrumented: TSan cannot see that synchronize_rcu() waits
 * until every reader has passed a quiescent state, and reports the free
 * of an old policy or table as a race with the readers' last use of it.
 * These wrappers interpose the library's entry points: a reader releases
 * a sync object as it announces a quiescent state (or goes offline, or
 * unregisters), and synchronize_rcu() acquires it once the grace period
 * is over, which is what the grace period guarantees. The wrapped
 * functions are the real ones (dlsym RTLD_NEXT); nothing else changes.
 */

static char grace;	/* the sync object: only its address is used */

typedef void (*urcu_fn)(void);

/* The library's NAME, looked up by the first thread that needs it
 * (atomic: workers may get there at once). */
static urcu_fn real_fn(urcu_fn *cache, const char *name)
{
	urcu_fn f = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (!f) {
		f = (urcu_fn)dlsym(RTLD_NEXT, name);
		if (!f)
			abort();
		__atomic_store_n(cache, f, __ATOMIC_RELAXED);
	}
	return f;
}

#define REAL(name) \
	static urcu_fn real_##name; \
	urcu_fn real = real_fn(&real_##name, #name)

void urcu_qsbr_quiescent_state(void);
void urcu_qsbr_thread_offline(void);
void urcu_qsbr_unregister_thread(void);
void urcu_qsbr_synchronize_rcu(void);

void urcu_qsbr_quiescent_state(void)
{
	REAL(urcu_qsbr_quiescent_state);

	__tsan_release(&grace);
	real();
}

void urcu_qsbr_thread_offline(void)
{
	REAL(urcu_qsbr_thread_offline);

	__tsan_release(&grace);
	real();
}

void urcu_qsbr_unregister_thread(void)
{
	REAL(urcu_qsbr_unregister_thread);

	__tsan_release(&grace);
	real();
}

void urcu_qsbr_synchronize_rcu(void)
{
	REAL(urcu_qsbr_synchronize_rcu);

	real();
	__tsan_acquire(&grace);
}
