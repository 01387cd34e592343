// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pools of byte strings (libfs/vec_pool.c): every string added keeps its
 * bytes at the address it was given while the pool grows, on the heap
 * and once chunks have moved to spill files, through a trim of the
 * mapped pages; a string larger than the next chunk gets a chunk of its
 * own; freeing leaves no file and no mapping.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/vec.h>

#include "spilldir.h"
#include "unit.h"

#define NSTR	60000

/* String i: its length (0..299) and bytes follow from i. */
static size_t
str_of(uint32_t i, uint8_t *buf)
{
	size_t len = (i * 2654435761u >> 8) % 300;

	for (size_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(i + k * 13);
	return len;
}

/* Add NSTR strings, then check every one at the address it was given. */
static void
add_and_check(struct xk_vec_pool *p, struct xk_vec_spill *sp)
{
	const void **at = calloc(NSTR, sizeof(*at));
	uint8_t buf[300];
	uint32_t bad = UINT32_MAX;

	ck_assert_ptr_nonnull(at);
	/* No ck_assert in loops: each one costs a message to the parent. */
	for (uint32_t i = 0; i < NSTR; i++)
		if (xk_vec_pool_add(p, buf, str_of(i, buf), &at[i]) ||
		    !at[i])
			ck_abort_msg("add %u failed", i);
	if (sp)
		xk_vec_spill_trim(sp);
	for (uint32_t i = 0; i < NSTR && bad == UINT32_MAX; i++) {
		size_t len = str_of(i, buf);

		if (len && memcmp(at[i], buf, len))
			bad = i;
	}
	ck_assert_uint_eq(bad, UINT32_MAX);
	free(at);
}

START_TEST(heap_pool)
{
	struct xk_vec_pool p = { 0 };

	add_and_check(&p, NULL);
	ck_assert_uint_gt(p.chunks.n, 1);
	ck_assert_uint_eq(xk_vec_pool_file_bytes(&p), 0);
	for (size_t i = 0; i < p.chunks.n; i++)
		ck_assert_ptr_null(p.chunks.v[i].map);
	xk_vec_pool_free(&p);
	ck_assert_uint_eq(p.chunks.n, 0);
}
END_TEST

START_TEST(spilled_pool)
{
	struct xk_vec_spill sp;
	struct xk_vec_pool p = { 0 };
	int in_memory;

	spill_dir_make("xk-vec-pool");
	ck_assert_int_eq(xk_vec_spill_start(&sp, spill_dir, 8192, 0,
					    &in_memory), 0);
	p.spill = &sp;
	add_and_check(&p, &sp);
	/* About 9 MB: all but the first chunks (up to 8 KiB) in files. */
	ck_assert_uint_gt(sp.files, 0);
	ck_assert_uint_eq(sp.failed, 0);
	ck_assert_uint_gt(xk_vec_pool_file_bytes(&p), 8U << 20);
	ck_assert_int_eq(spill_dir_entries(), 0);
	xk_vec_pool_free(&p);
	ck_assert_ptr_null(sp.head);
	ck_assert_uint_eq(sp.mapped, 0);
	ck_assert_ptr_eq(p.spill, &sp);
	xk_vec_spill_stop(&sp);
	ck_assert_int_eq(rmdir(spill_dir), 0);
}
END_TEST

START_TEST(large_string)
{
	struct xk_vec_pool p = { 0 };
	size_t big = 100000;
	uint8_t *src = malloc(big);
	const void *a, *b, *c;

	ck_assert_ptr_nonnull(src);
	memset(src, 0x5a, big);
	ck_assert_int_eq(xk_vec_pool_add(&p, "abc", 3, &a), 0);
	ck_assert_int_eq(xk_vec_pool_add(&p, src, big, &b), 0);
	ck_assert_int_eq(xk_vec_pool_add(&p, "", 0, &c), 0);
	ck_assert_ptr_nonnull(c);
	ck_assert_mem_eq(a, "abc", 3);
	ck_assert_mem_eq(b, src, big);
	ck_assert_uint_ge(p.chunks.v[1].cap, big);
	xk_vec_pool_free(&p);
	free(src);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("vec_pool");
	TCase *tc = tcase_create("vec_pool");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, heap_pool);
	tcase_add_test(tc, spilled_pool);
	tcase_add_test(tc, large_string);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
