// SPDX-License-Identifier: MIT
/* Large slow-path buffers (see slow_alloc.h). */
#include <commtap/slow_alloc.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define HUGE_PAGE	(2u << 20)
#define HUGE_PAGES_FROM (4u << 20) /* smaller buffers are malloc's */

/* Whether madvise(MADV_HUGEPAGE) gets this process huge pages. */
static int huge_pages_on(void)
{
	char mode[128];
	ssize_t got;
	int fd;

	if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) > 0)
		return 0;
	fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	got = read(fd, mode, sizeof(mode) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	mode[got] = 0;
	return !strstr(mode, "[never]");
}

void *ct_slow_alloc(size_t size)
{
	void *p;

	if (size < HUGE_PAGES_FROM || size > SIZE_MAX - HUGE_PAGE)
		return malloc(size ? size : 1);
#ifdef MADV_HUGEPAGE
	size = (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	if (posix_memalign(&p, HUGE_PAGE, size))
		return NULL;
	if (huge_pages_on()) {
		(void)madvise(p, size, MADV_HUGEPAGE);
		return p;
	}
#else
	p = malloc(size);
	if (!p)
		return NULL;
#endif
#ifdef MADV_POPULATE_WRITE
	/*
	 * No huge pages: map the buffer in one call rather than a fault a page
	 * (with huge pages the faults are few, and each page is zeroed just
	 * before it is written, while in cache).
	 */
	(void)madvise((void *)((uintptr_t)p & ~(uintptr_t)4095), size, MADV_POPULATE_WRITE);
#endif
	return p;
}

void *ct_slow_calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	if (n * size < HUGE_PAGES_FROM)
		return calloc(n ? n : 1, size ? size : 1);
	p = ct_slow_alloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}
