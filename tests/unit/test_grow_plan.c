// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xk_grow_plan (libfs/grow.c): the new size rounded as the kernel's
 * growfs rounds it (a tail under 64 blocks past the last whole AG left
 * unused), the last AG grown first, and the free space each new AG adds
 * (its length less the 7 header and root blocks of the scratch
 * filesystem: 4 AGs of 32768 blocks, finobt, rmapbt, reflink).
 */
#include <check.h>
#include <errno.h>

#include <xfskit/grow.h>

#include "scratch.h"
#include "unit.h"

#define AGB	32768u
#define HDRS	7u

START_TEST(test_shrink_and_same)
{
	struct xk_grow_plan p;

	ck_assert_int_eq(xk_grow_plan(mp, 4 * AGB - 1, &p), -ENOSPC);
	ck_assert_int_eq(xk_grow_plan(mp, 4 * AGB, &p), 0);
	ck_assert_uint_eq(p.new_dblocks, 4 * AGB);
	ck_assert_uint_eq(p.new_free, 0);
	/* 63 blocks are too few for an AG: nothing grows. */
	ck_assert_int_eq(xk_grow_plan(mp, 4 * AGB + 63, &p), 0);
	ck_assert_uint_eq(p.new_dblocks, 4 * AGB);
	ck_assert_uint_eq(p.new_agcount, 4);
	ck_assert_uint_eq(p.unused, 63);
}
END_TEST

START_TEST(test_new_ags)
{
	struct xk_grow_plan p;

	ck_assert_int_eq(xk_grow_plan(mp, 4 * AGB + 64, &p), 0);
	ck_assert_uint_eq(p.new_dblocks, 4 * AGB + 64);
	ck_assert_uint_eq(p.new_agcount, 5);
	ck_assert_uint_eq(p.last_old_len, AGB);
	ck_assert_uint_eq(p.last_new_len, AGB);
	ck_assert_uint_eq(p.new_free, 64 - HDRS);
	ck_assert_int_eq(xk_grow_plan(mp, 8 * AGB + 100, &p), 0);
	ck_assert_uint_eq(p.new_agcount, 9);
	ck_assert_uint_eq(p.new_free, 4 * (AGB - HDRS) + 100 - HDRS);
	ck_assert_uint_eq(p.unused, 0);
}
END_TEST

START_TEST(test_last_ag)
{
	struct xk_grow_plan p;

	/* A partial last AG of AGB - 10000 blocks. */
	mp->g.dblocks = mp->sb.dblocks = 4 * AGB - 10000;
	ck_assert_int_eq(xk_grow_plan(mp, 4 * AGB - 5000, &p), 0);
	ck_assert_uint_eq(p.new_agcount, 4);
	ck_assert_uint_eq(p.last_old_len, AGB - 10000);
	ck_assert_uint_eq(p.last_new_len, AGB - 5000);
	ck_assert_uint_eq(p.new_free, 5000);
	/* Full, and a tail too small for a fifth AG. */
	ck_assert_int_eq(xk_grow_plan(mp, 4 * AGB + 30, &p), 0);
	ck_assert_uint_eq(p.new_dblocks, 4 * AGB);
	ck_assert_uint_eq(p.last_new_len, AGB);
	ck_assert_uint_eq(p.new_free, 10000);
	ck_assert_uint_eq(p.unused, 30);
	mp->g.dblocks = mp->sb.dblocks = 4 * AGB;
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("grow_plan");
	TCase *tc = tcase_create("plan");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_shrink_and_same);
	tcase_add_test(tc, test_new_ags);
	tcase_add_test(tc, test_last_ag);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
