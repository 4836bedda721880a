/* SPDX-License-Identifier: MIT */
/* The slow path's allocator for large buffers (burst arrays, sort room). */
#ifndef COMMTAP_SLOW_ALLOC_H
#define COMMTAP_SLOW_ALLOC_H

#include <stddef.h>

/*
 * A large slow-path buffer; free() it. A fresh buffer is mapped a page at a
 * time as it is first written (20,000 faults for 80 MB, 0.2 s on a VM):
 * from a few MB on it asks for transparent huge pages, 512 times fewer.
 */
void *ct_slow_alloc(size_t size);
/* The same, zeroed; NULL also when n * size overflows. */
void *ct_slow_calloc(size_t n, size_t size);

#endif
