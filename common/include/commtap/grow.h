/* SPDX-License-Identifier: MIT */
/* Growable arrays of the slow path (flow sets, burst logs, schedules). */
#ifndef COMMTAP_GROW_H
#define COMMTAP_GROW_H

#include <stdint.h>
#include <stdlib.h>

/*
 * The array with twice its capacity (first elements when it has none):
 * *cap is updated and the array may have moved. NULL when out of memory;
 * then the array and *cap are as they were.
 */
static inline void *ct_grow(void *array, size_t *cap, size_t elem, size_t first)
{
	size_t n = *cap ? 2 * *cap : first;
	void *grown;

	if (n < *cap || n > SIZE_MAX / elem)
		return NULL;
	grown = realloc(array, n * elem);
	if (grown)
		*cap = n;
	return grown;
}

#endif
