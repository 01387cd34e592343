/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sorting arrays of records in linear time (libfs/sort.c).
 */
#ifndef XFSKIT_SORT_H
#define XFSKIT_SORT_H

#include <stddef.h>

/*
 * Sort n records of size bytes by cmp, where cmp orders first by a
 * uint32_t key (host order) at offset key_off in each record.  Lists
 * that arrive in order or nearly (btree records, a copy of a sorted
 * list, entries in block order) are checked first and left alone;
 * otherwise a stable radix sort on the key bytes that differ orders
 * them, and the runs of one key are then sorted by cmp.  The radix sort
 * needs a copy of the array: when that cannot be had, or would take more
 * than max_copy bytes (0: no limit), the whole array is sorted by qsort
 * instead.  Never fails; v may be NULL when n is 0.
 */
void xk_sort_by_u32(void *v, size_t n, size_t size, size_t key_off,
		    size_t max_copy, int (*cmp)(const void *, const void *));

#endif /* XFSKIT_SORT_H */
