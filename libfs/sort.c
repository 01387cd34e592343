// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Linear-time sorts of record arrays (sort.h).  A qsort of claims took a
 * few percent of the check, mostly on lists that were sorted already,
 * and two qsorts of directory entries a seventh of it on a tree of large
 * directories: the radix sort below replaced both.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/sort.h>

static inline uint32_t
key_of(const void *rec, size_t key_off)
{
	uint32_t k;

	memcpy(&k, (const char *)rec + key_off, sizeof(k));
	return k;
}

/*
 * One pass: records of from to their place in to by byte shift of the
 * key.  Fixed sizes get their own loop so the copy is a few moves, not
 * a call.
 */
#define SCATTER_LOOP(SZ)						\
	for (size_t i = 0; i < n; i++) {				\
		const char *r = from + i * (SZ);			\
		size_t b = (key_of(r, key_off) >> shift) & 0xff;	\
									\
		memcpy(to + pos[b]++ * (SZ), r, (SZ));			\
	}

static void
scatter(char *to, const char *from, size_t n, size_t size, size_t key_off,
	unsigned int shift, size_t *pos)
{
	switch (size) {
	case 8:
		SCATTER_LOOP(8);
		break;
	case 16:
		SCATTER_LOOP(16);
		break;
	case 24:
		SCATTER_LOOP(24);
		break;
	case 32:
		SCATTER_LOOP(32);
		break;
	default:
		SCATTER_LOOP(size);
		break;
	}
}

void
xk_sort_by_u32(void *v, size_t n, size_t size, size_t key_off,
	       size_t max_copy, int (*cmp)(const void *, const void *))
{
	size_t count[4][256], pos[256], i;
	char *base = v, *tmp, *from = v, *to;
	uint32_t k0;

	for (i = 1; i < n; i++)
		if (cmp(base + (i - 1) * size, base + i * size) > 0)
			break;
	if (i >= n)
		return;
	tmp = !max_copy || n <= max_copy / size ? malloc(n * size) : NULL;
	if (!tmp) {
		qsort(v, n, size, cmp);
		return;
	}
	to = tmp;
	memset(count, 0, sizeof(count));
	for (i = 0; i < n; i++) {
		uint32_t k = key_of(base + i * size, key_off);

		for (int d = 0; d < 4; d++)
			count[d][(k >> (8 * d)) & 0xff]++;
	}
	k0 = key_of(base, key_off);
	for (int d = 0; d < 4; d++) {
		unsigned int shift = 8 * (unsigned int)d;
		size_t sum = 0;

		/* A byte all keys share orders nothing. */
		if (count[d][(k0 >> shift) & 0xff] == n)
			continue;
		for (int b = 0; b < 256; b++) {
			pos[b] = sum;
			sum += count[d][b];
		}
		scatter(to, from, n, size, key_off, shift, pos);
		from = to;
		to = from == base ? tmp : base;
	}
	if (from != base)
		memcpy(base, from, n * size);
	free(tmp);
	for (i = 0; i + 1 < n; i++) {
		size_t j = i + 1;
		uint32_t k = key_of(base + i * size, key_off);

		while (j < n && key_of(base + j * size, key_off) == k)
			j++;
		if (j - i > 1)
			qsort(base + i * size, j - i, size, cmp);
		i = j - 1;
	}
}
