/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bigmem.h - zeroed memory for large tables that the packet path reads at
 * random (a domain set's hash table and names, a queue's flow table). It
 * comes straight from mmap, asked for in transparent huge pages: a lookup
 * in a table of tens of megabytes then costs a cache miss, not also a
 * page-table walk (slow in a virtual machine). Where the kernel gives no
 * huge pages the memory is ordinary pages, nothing else changes. Below
 * a megabyte it is malloc memory (no mapping per small set).
 */
#ifndef NFQD_BIGMEM_H
#define NFQD_BIGMEM_H

#include <stddef.h>

/* A transparent huge page on x86-64. */
#define BIGMEM_HUGE ((size_t)2 << 20)

/* N zeroed bytes (N > 0), or NULL with errno set. */
void *bigmem_alloc(size_t n);

/* Grow or shrink P (OLD bytes from bigmem_alloc()) to NEW bytes, keeping
 * the first min(OLD, NEW); bytes past OLD are zero. NULL with errno set
 * and P untouched on failure. */
void *bigmem_resize(void *p, size_t old, size_t new);

/* Give back P (N bytes from bigmem_alloc() or bigmem_resize(): the size
 * it was given, which tells which kind of memory it is); NULL is
 * nothing. */
void bigmem_free(void *p, size_t n);

/* Fault in every page of P (N bytes) now, so that the packet path never
 * waits for the kernel to zero a page. */
void bigmem_prefault(void *p, size_t n);

/*
 * For a function whose only effect is to ask for such memory
 * (__builtin_prefetch): GCC's mod/ref analysis finds it free of side
 * effects and deletes its calls (GCC 12 did so at -O2 for a static one,
 * and with -flto for domset_prefetch() and flow_ahead_line() in other
 * files); noipa keeps them. tests/unit/prefetch.sh checks the binary.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define BIGMEM_PREFETCH_ONLY __attribute__((noipa))
#else
#define BIGMEM_PREFETCH_ONLY
#endif

/*
 * Addresses a receive batch's lookups will read, gathered and then asked
 * for back to back (bigmem_fetch()). A read of such a table misses the
 * TLB as well as the cache, and a prefetch that misses the TLB holds up
 * the instructions after it until its page-table walk is done (slow in a
 * virtual machine: a random read in 64 MB took 176 ns in the benchmark's
 * VM, in 4 MB 23 ns). With a packet's parsing between two prefetches,
 * one walk at a time is under way; with the prefetches side by side,
 * several are: side by side, the DNS drain of the 1,000,000-name
 * benchmark went from 0.757x to 0.811x the floor (docs/performance.md,
 * "Since f2a2fd1").
 */
#define BIGMEM_WANTS_MAX 1024
struct bigmem_wants {
	unsigned n;
	const void *at[BIGMEM_WANTS_MAX];
};

/* Note P for the next bigmem_fetch(); past BIGMEM_WANTS_MAX it is not
 * asked for (a prefetch is a hint: nothing else changes). */
static inline void bigmem_want(struct bigmem_wants *w, const void *p)
{
	if (w->n < BIGMEM_WANTS_MAX)
		w->at[w->n++] = p;
}

/* Ask for every address of W, without waiting, and empty W. */
void bigmem_fetch(struct bigmem_wants *w);

#endif
