/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bigmem.c - huge-page backed memory for large tables (bigmem.h). Below
 * BIG_MIN it is plain malloc memory: a policy of thousands of small name
 * lists must not cost thousands of mappings.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bigmem.h"

#define BIG_MIN ((size_t)1 << 20)

/* Under AddressSanitizer every table is malloc memory, so that it checks
 * the tables' bounds too. */
#if defined(__SANITIZE_ADDRESS__)
#define BIG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIG_ASAN 1
#endif
#endif

static bool big(size_t n)
{
#ifdef BIG_ASAN
	(void)n;
	return false;
#else
	return n >= BIG_MIN;
#endif
}

/* Ask for huge pages; an error (no THP in this kernel) changes nothing. */
static void want_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	(void)madvise(p, n, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

static size_t page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	return pg > 0 ? (size_t)pg : 4096;
}

/*
 * N bytes of fresh mapping that start on a huge-page boundary, so that
 * a table of 2 MB is one huge page, not two partial ones of small pages:
 * BIGMEM_HUGE more are mapped and the ends beyond the aligned N given back.
 */
static void *map_aligned(size_t n)
{
	size_t page = page_size();
	size_t over = n >= BIGMEM_HUGE ? BIGMEM_HUGE : 0;
	char *p;
	size_t head;

	n = (n + page - 1) / page * page;
	p = mmap(NULL, n + over, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (!over)
		return p;
	head = (BIGMEM_HUGE - (uintptr_t)p % BIGMEM_HUGE) % BIGMEM_HUGE;
	if (head)
		munmap(p, head);
	if (over - head)
		munmap(p + head + n, over - head);
	return p + head;
}

void *bigmem_alloc(size_t n)
{
	void *p;

	if (!n) {
		errno = EINVAL;
		return NULL;
	}
	if (!big(n))
		return calloc(1, n);
	p = map_aligned(n);
	if (!p)
		return NULL;
	want_huge(p, n);
	return p;
}

void *bigmem_resize(void *p, size_t old, size_t new)
{
	void *np;

	if (!new) {
		errno = EINVAL;
		return NULL;
	}
	if (!p)
		return bigmem_alloc(new);
	if (big(old) && big(new)) {
		np = mremap(p, old, new, MREMAP_MAYMOVE);
		if (np == MAP_FAILED)
			return NULL;
		want_huge(np, new);
		return np;
	}
	if (!big(old) && !big(new)) {
		np = realloc(p, new);
		if (np && new > old)
			memset((char *)np + old, 0, new - old);
		return np;
	}
	np = bigmem_alloc(new);	/* across BIG_MIN: another kind of memory */
	if (!np)
		return NULL;
	memcpy(np, p, old < new ? old : new);
	bigmem_free(p, old);
	return np;
}

void bigmem_free(void *p, size_t n)
{
	if (!p)
		return;
	if (big(n))
		munmap(p, n);
	else
		free(p);
}

void bigmem_prefault(void *p, size_t n)
{
	volatile char *c = p;
	size_t step = page_size();

	for (size_t i = 0; i < n; i += step)
		c[i] = 0;
}

BIGMEM_PREFETCH_ONLY
void bigmem_fetch(struct bigmem_wants *w)
{
	for (unsigned i = 0; i < w->n; i++)
		__builtin_prefetch(w->at[i]);
	w->n = 0;
}
