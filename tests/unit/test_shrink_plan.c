// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xk_shrink_plan (libfs/shrink.c) on the scratch filesystem with every
 * AG written as mkfs leaves it (4 AGs of 32768 blocks, finobt, rmapbt,
 * reflink, the log in AG 2, no inodes): the size rounded as the kernel
 * rounds it, empty AGs past the new end removed whole with their free
 * space, AGFL and all, the last AG cut over its free tail, and the
 * refusals: the log in the part cut off (whole AG or not), fewer than 2
 * AGs, the per-AG reservation the AG must keep free.
 */
#include <check.h>
#include <errno.h>

#include <xfskit/init.h>
#include <xfskit/shrink.h>

#include "scratch.h"
#include "unit.h"

#define AGB	32768u
#define AGFL	6u

/* Every AG's headers and roots as mkfs writes them, AGFL filled. */
static void
format(void)
{
	/* The scratch log starts inside AG 2's fixed blocks: after them. */
	mp->sb.logstart = mp->g.logstart = xk_agb_to_fsb(mp, 2, 7);
	for (uint32_t agno = 0; agno < 4; agno++) {
		struct xk_ag_init ai;

		ck_assert_int_eq(xk_ag_init_layout(mp, agno, &ai), 0);
		ck_assert_int_eq(xk_ag_init_agfl(&ai, AGFL), 0);
		ck_assert_int_eq(xk_ag_init_write(mp, &ai, &mp->sb), 0);
	}
	ck_assert_int_eq(xk_buf_flush(mp), 0);
}

START_TEST(test_last_ag_tail)
{
	struct xk_shrink_plan p;
	char msg[300];

	format();
	/* One block off the last AG: its free tail. */
	ck_assert_int_eq(xk_shrink_plan(mp, 4 * AGB - 1, &p, msg, sizeof(msg)),
			 0);
	ck_assert_uint_eq(p.new_agcount, 4);
	ck_assert_uint_eq(p.last_old_len, AGB);
	ck_assert_uint_eq(p.last_new_len, AGB - 1);
	ck_assert_uint_eq(p.removed_free, 1);
	/* 3 AGs and 63 blocks: the 63 go too (the kernel's rounding). */
	ck_assert_int_eq(xk_shrink_plan(mp, 3 * AGB + 63, &p, msg,
					sizeof(msg)), 0);
	ck_assert_uint_eq(p.new_dblocks, 3 * AGB);
	ck_assert_uint_eq(p.new_agcount, 3);
	ck_assert_uint_eq(p.unused, 63);
	/* AG 3 removed whole: every block but its 7 fixed ones. */
	ck_assert_uint_eq(p.removed_free, AGB - 7);
	/* Past the log of AG 2, AG 3 dropped too. */
	ck_assert_int_eq(xk_shrink_plan(mp, 2 * AGB + 20000, &p, msg,
					sizeof(msg)), 0);
	ck_assert_uint_eq(p.new_agcount, 3);
	ck_assert_uint_eq(p.last_new_len, 20000);
	ck_assert_uint_eq(p.removed_free, AGB - 20000 + AGB - 7);
	ck_assert_uint_lt(p.min_dblocks, 2 * AGB + 20000);
	ck_assert_uint_gt(p.min_dblocks, 2 * AGB + 16384);
}
END_TEST

START_TEST(test_refusals)
{
	struct xk_shrink_plan p, q;
	char msg[300];

	format();
	/* Into the log of AG 2. */
	ck_assert_int_eq(xk_shrink_plan(mp, 2 * AGB + 100, &p, msg,
					sizeof(msg)), -ENOSPC);
	ck_assert_uint_eq(p.block.agno, 2);
	ck_assert_uint_eq(p.block.cut, 100);
	ck_assert_int_eq(p.block.log, 1);
	ck_assert_uint_gt(p.block.used, 16384 - 100);
	/* The rmapbt names the owner: the log, past block 100. */
	ck_assert_int_eq(p.block.owners_known, 1);
	ck_assert_uint_eq(p.block.log_blocks, 7 + 16384 - 100);
	ck_assert_uint_eq(p.block.ninodes, 0);
	/* AG 2 removed whole: it holds the log. */
	ck_assert_int_eq(xk_shrink_plan(mp, AGB + 500, &q, msg, sizeof(msg)),
			 -ENOSPC);
	ck_assert_uint_eq(q.block.agno, 2);
	ck_assert_uint_eq(q.block.cut, 0);
	ck_assert_int_eq(q.block.log, 1);
	ck_assert_uint_eq(q.min_dblocks, p.min_dblocks);
	/* The smallest size is accepted, one block less is not. */
	ck_assert_int_eq(xk_shrink_plan(mp, p.min_dblocks, &q, msg,
					sizeof(msg)), 0);
	ck_assert_int_eq(xk_shrink_plan(mp, p.min_dblocks - 1, &q, msg,
					sizeof(msg)), -ENOSPC);
	/* Just past the log the AG lacks free blocks for its reservation. */
	ck_assert_uint_gt(q.block.resv_need, q.block.resv_free);
	/* One AG left. */
	ck_assert_int_eq(xk_shrink_plan(mp, AGB, &q, msg, sizeof(msg)),
			 -ENOSPC);
	ck_assert_int_eq(q.block.too_few_ags, 1);
	/* Not a shrink. */
	ck_assert_int_eq(xk_shrink_plan(mp, 4 * AGB, &q, msg, sizeof(msg)),
			 -EINVAL);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("shrink_plan");
	TCase *tc = tcase_create("plan");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_last_ag_tail);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
