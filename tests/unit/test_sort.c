// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xk_sort_by_u32 (libfs/sort.c): on random, sorted, reversed and
 * few-key arrays of several record sizes, with and without room for the
 * radix sort's copy, the result is the order qsort gives by the same
 * comparison (which is total here, so the order is unique).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/sort.h>

#include "unit.h"

struct r8 {
	uint32_t	key, tie;
};
struct r24 {
	uint64_t	a;
	uint32_t	tie;
	uint32_t	key;
	uint64_t	b;
};
struct r12 {
	uint32_t	tie;
	uint32_t	key;
	uint32_t	c;
};

#define CMP(T)								\
static int								\
cmp_##T(const void *x, const void *y)					\
{									\
	const struct T *a = x, *b = y;					\
									\
	if (a->key != b->key)						\
		return a->key < b->key ? -1 : 1;			\
	return (a->tie > b->tie) - (a->tie < b->tie);			\
}
CMP(r8)
CMP(r24)
CMP(r12)

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

enum shape { RANDOM, SORTED, REVERSED, FEW_KEYS, HIGH_BYTES };

static uint32_t
key_for(enum shape s, size_t i, size_t n)
{
	switch (s) {
	case SORTED:
		return (uint32_t)i * 3;
	case REVERSED:
		return (uint32_t)(n - i) * 5;
	case FEW_KEYS:
		return rnd() % 4;
	case HIGH_BYTES:
		return rnd() & 0xff000000u;
	default:
		return rnd();
	}
}

/* Fill, sort both ways, compare; the tie is unique so the order is too. */
#define CHECK(T)							\
static void								\
check_##T(enum shape s, size_t n, size_t max_copy)			\
{									\
	struct T *a = calloc(n ? n : 1, sizeof(*a));			\
	struct T *b = calloc(n ? n : 1, sizeof(*b));			\
									\
	ck_assert_ptr_nonnull(a);					\
	ck_assert_ptr_nonnull(b);					\
	for (size_t i = 0; i < n; i++) {				\
		a[i].key = key_for(s, i, n);				\
		a[i].tie = (uint32_t)i * 2654435761u;			\
	}								\
	memcpy(b, a, n * sizeof(*a));					\
	xk_sort_by_u32(a, n, sizeof(*a), offsetof(struct T, key),	\
		       max_copy, cmp_##T);				\
	if (n > 1)							\
		qsort(b, n, sizeof(*b), cmp_##T);			\
	for (size_t i = 0; i < n; i++)					\
		if (a[i].key != b[i].key || a[i].tie != b[i].tie)	\
			ck_abort_msg(#T " shape %d n %zu max_copy %zu: "	\
				     "record %zu is (%u, %u), qsort "	\
				     "gives (%u, %u)", (int)s, n,	\
				     max_copy, i, a[i].key, a[i].tie,	\
				     b[i].key, b[i].tie);		\
	free(a);							\
	free(b);							\
}
CHECK(r8)
CHECK(r24)
CHECK(r12)

START_TEST(test_matches_qsort)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 17, 256, 1000, 4099 };

	for (int s = RANDOM; s <= HIGH_BYTES; s++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
			check_r8((enum shape)s, sizes[i], 0);
			check_r24((enum shape)s, sizes[i], 0);
			check_r12((enum shape)s, sizes[i], 0);
			/* No room for the copy: the qsort fallback. */
			check_r24((enum shape)s, sizes[i], 64);
		}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sort");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_matches_qsort);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
