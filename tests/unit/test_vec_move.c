// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the spilled inode and entry lists of xfskit-repair rely on in
 * libfs/vec.c beyond test_vec.c: xk_vec_move hands a vector over whole
 * (a heap array or a file mapping, which keeps its file and context);
 * an append into a mapping checks the cap as it copies, so a large
 * append does not pass the cap by its whole size; xk_vec_spill_poll trims
 * over the cap; random advice keeps the elements.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <limits.h>

#include <xfskit/vec.h>

#include "spilldir.h"
#include "unit.h"

static void
fill(struct xk_vec *v, uint64_t from, uint64_t n)
{
	for (uint64_t i = from; i < from + n; i++)
		if (xk_vec_push(v, &i, sizeof(i)))
			ck_abort_msg("push %llu failed", (unsigned long long)i);
}

/* Elements 0..n-1 hold their index. */
static void
check_seq(const struct xk_vec *v, uint64_t n)
{
	const uint64_t *e = v->v;

	ck_assert_uint_eq(v->n, n);
	for (uint64_t i = 0; i < n; i++)
		if (e[i] != i)
			ck_abort_msg("element %llu is %llu",
				     (unsigned long long)i,
				     (unsigned long long)e[i]);
}

START_TEST(move_heap)
{
	struct xk_vec a = { 0 }, b = { 0 };

	fill(&a, 0, 10);
	fill(&b, 0, 3000);
	xk_vec_move(&a, &b);
	check_seq(&a, 3000);
	ck_assert_ptr_null(b.v);
	ck_assert_uint_eq(b.n, 0);
	fill(&a, 3000, 1000);
	check_seq(&a, 4000);
	xk_vec_free(&a);
}
END_TEST

START_TEST(move_mapped)
{
	struct xk_vec_spill sp;
	struct xk_vec dst = { 0 }, src = { 0 };
	int in_memory;

	spill_dir_make("xk-vecmove");
	ck_assert_int_eq(xk_vec_spill_start(&sp, spill_dir, 4096, 0,
					 &in_memory), 0);
	dst.spill = &sp;
	src.spill = &sp;
	fill(&dst, 0, 100);		/* on the heap, freed by the move */
	fill(&src, 0, 20000);
	ck_assert_ptr_nonnull(src.map);
	xk_vec_move(&dst, &src);
	ck_assert_ptr_nonnull(dst.map);
	ck_assert_ptr_eq(dst.spill, &sp);
	ck_assert_ptr_null(src.map);
	ck_assert_ptr_eq(src.spill, &sp);
	/* The moved mapping grows in place of the old owner's. */
	fill(&dst, 20000, 30000);
	check_seq(&dst, 50000);
	ck_assert_uint_eq(sp.files, 1);
	xk_vec_probe_random(&dst);		/* no cap: nothing to do */
	xk_vec_free(&dst);
	xk_vec_free(&src);
	ck_assert_uint_eq(sp.mapped, 0);
	xk_vec_spill_stop(&sp);
	ck_assert_int_eq(spill_dir_entries(), 0);
	rmdir(spill_dir);
}
END_TEST

START_TEST(append_and_poll_under_cap)
{
	struct xk_vec_spill sp;
	struct xk_vec big = { 0 }, dst = { 0 };
	const uint64_t n = (24U << 20) / sizeof(uint64_t);
	int in_memory;
	unsigned long trims;

	spill_dir_make("xk-vecmove");
	/* A cap of one byte: every check that finds mapped pages trims. */
	ck_assert_int_eq(xk_vec_spill_start(&sp, spill_dir, 4096, 1,
					 &in_memory), 0);
	dst.spill = &sp;
	fill(&big, 0, n);		/* the source, on the heap */
	fill(&dst, 0, 1000);
	ck_assert_ptr_nonnull(dst.map);
	trims = sp.trims;
	ck_assert_int_eq(xk_vec_append(&dst, (uint64_t *)big.v + 1000, n - 1000,
				    sizeof(uint64_t)), 0);
	/* 24 MiB copied a MiB at a time, the cap checked after each. */
	ck_assert_uint_ge(sp.trims - trims, 8);
	check_seq(&dst, n);
	xk_vec_probe_random(&dst);
	/*
	 * Reading 24 MiB back puts it over the cap: the trimmer (every
	 * TRIM_MS) or the poll after it must trim.  Which one does is a
	 * race, so count from before the reads.
	 */
	trims = sp.trims;
	check_seq(&dst, n);
	xk_vec_spill_poll(&sp);
	ck_assert_uint_gt(sp.trims, trims);
	xk_vec_spill_poll(NULL);
	check_seq(&dst, n);
	xk_vec_free(&dst);
	xk_vec_free(&big);
	xk_vec_spill_stop(&sp);
	ck_assert_int_eq(spill_dir_entries(), 0);
	rmdir(spill_dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("xk_vec_move");
	TCase *tc = tcase_create("xk_vec_move");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, move_heap);
	tcase_add_test(tc, move_mapped);
	tcase_add_test(tc, append_and_poll_under_cap);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
