// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The bmbt shape model (libfs/write/bmbt_shape.c): the kernel's in-place
 * edits replayed on block entry counts.  One case is a shape the host
 * kernel (6.18) left and xfs_db printed: an 8 MiB file (one extent,
 * 4 KiB blocks, 512-byte inodes) with every other block punched from
 * offset 0 up holds 1024 mappings in leaves of 251, 251, 251, 126 and
 * 145 records.  The others check what must hold after any sequence of
 * inserts and deletes: every level accounts for the one below, no block
 * is empty or over full, the fork turns to extents when it fits again.
 */
#include "unit.h"

#include <stdlib.h>

#include "../../libfs/write/write_priv.h"

#define LMAX	251	/* bmbt entries in a 4 KiB block */
#define FORK	336	/* data fork bytes of a 512-byte v3 inode */

static void
assert_sane(struct bld_bshape *s, uint64_t nrecs)
{
	ck_assert_int_eq(s->lost, 0);
	if (!s->levels) {
		ck_assert_uint_le(nrecs, s->maxext);
		return;
	}
	bld_bshape_check(s, nrecs);
	ck_assert_int_eq(s->lost, 0);
}

START_TEST(punch_every_other_block)
{
	struct bld_bshape s;
	uint64_t n = 1;		/* the one extent [0, 2048) */
	const uint32_t want[] = { 251, 251, 251, 126, 145 };

	bld_bshape_init(&s, LMAX, LMAX, FORK);
	/*
	 * Punching block 0 trims the extent; each later punch cuts the
	 * last extent in two, its right part inserted after it.
	 */
	for (uint64_t o = 2; o < 2048; o += 2) {
		bld_bshape_insert(&s, n, 1);
		n++;
		bld_bshape_settle(&s, n);
		assert_sane(&s, n);
	}
	ck_assert_uint_eq(n, 1024);
	ck_assert_uint_eq(s.levels, 2);
	ck_assert_uint_eq(s.n[0], 5);
	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(s.cnt[0][i], want[i]);
	ck_assert_uint_eq(s.cnt[1][0], 5);
	bld_bshape_free(&s);
}
END_TEST

START_TEST(random_edits_stay_consistent)
{
	struct bld_bshape s;
	uint64_t n = 0;
	unsigned int seed = 7;

	bld_bshape_init(&s, LMAX, LMAX, FORK);
	for (int i = 0; i < 200000; i++) {
		int grow = n < 40 || (rand_r(&seed) % 100) < (n < 30000 ? 55 : 45);

		if (grow) {
			uint64_t g = n ? (uint64_t)rand_r(&seed) % (n + 1) : 0;

			bld_bshape_insert(&s, g, rand_r(&seed) & 1);
			n++;
		} else {
			bld_bshape_delete(&s, (uint64_t)rand_r(&seed) % n);
			n--;
		}
		bld_bshape_settle(&s, n);
		if (i % 97 == 0)
			assert_sane(&s, n);
	}
	assert_sane(&s, n);
	ck_assert_uint_ge(s.levels, 2);
	/* Every record gone again: back to extents format, nothing lost. */
	while (n) {
		bld_bshape_delete(&s, (uint64_t)rand_r(&seed) % n);
		n--;
		bld_bshape_settle(&s, n);
	}
	ck_assert_int_eq(s.lost, 0);
	ck_assert_uint_eq(s.levels, 0);
	bld_bshape_free(&s);
}
END_TEST

START_TEST(root_moves_down_and_back)
{
	struct bld_bshape s;
	uint64_t n = 0;

	/* Appends grow the root in the inode to its limit, then a level. */
	bld_bshape_init(&s, LMAX, LMAX, FORK);
	while (s.levels < 3) {
		bld_bshape_insert(&s, n, 0);
		n++;
		bld_bshape_settle(&s, n);
		assert_sane(&s, n);
		ck_assert_uint_le(n, 20 * LMAX + 1);
	}
	ck_assert_uint_eq(s.cnt[2][0], 1);	/* a one-entry root */
	/* Deleting from the end takes it back into the inode. */
	while (s.levels == 3) {
		bld_bshape_delete(&s, n - 1);
		n--;
		bld_bshape_settle(&s, n);
		assert_sane(&s, n);
	}
	ck_assert_uint_eq(s.levels, 2);
	ck_assert_uint_le(s.cnt[1][0], 20);
	bld_bshape_free(&s);
}
END_TEST

static Suite *
suite(void)
{
	Suite *su = suite_create("bmbt_shape");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, punch_every_other_block);
	tcase_add_test(tc, random_edits_stay_consistent);
	tcase_add_test(tc, root_moves_down_and_back);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	return unit_run(suite());
}
