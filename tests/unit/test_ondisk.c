// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * On-disk sizes and CRC/LSN offsets, checked at run time as well as by
 * the headers' _Static_asserts, so a report lists them.
 */
#include <check.h>
#include <stddef.h>

#include <xfskit/libfs.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/dquot.h>
#include <xfskit/format/log.h>
#include <xfskit/format/symlink.h>

#include "unit.h"

START_TEST(test_sizes)
{
	ck_assert_uint_eq(sizeof(struct xk_dsb), 288);
	ck_assert_uint_eq(sizeof(struct xk_agf), 224);
	ck_assert_uint_eq(sizeof(struct xk_agi), 344);
	ck_assert_uint_eq(sizeof(struct xk_agfl), 36);
	ck_assert_uint_eq(sizeof(struct xk_btree_sblock), 56);
	ck_assert_uint_eq(sizeof(struct xk_btree_lblock), 72);
	ck_assert_uint_eq(sizeof(struct xk_alloc_rec), 8);
	ck_assert_uint_eq(sizeof(struct xk_inobt_rec), 16);
	ck_assert_uint_eq(sizeof(struct xk_rmap_rec), 24);
	ck_assert_uint_eq(sizeof(struct xk_rmap_key), 20);
	ck_assert_uint_eq(sizeof(struct xk_refcount_rec), 12);
}
END_TEST

START_TEST(test_crc_offsets)
{
	ck_assert_uint_eq(offsetof(struct xk_dsb, sb_crc), 224);
	ck_assert_uint_eq(offsetof(struct xk_agf, agf_crc), 216);
	ck_assert_uint_eq(offsetof(struct xk_agi, agi_crc), 312);
	ck_assert_uint_eq(offsetof(struct xk_agfl, agfl_crc), 32);
	ck_assert_uint_eq(offsetof(struct xk_btree_sblock, bb_crc), 52);
	ck_assert_uint_eq(offsetof(struct xk_btree_lblock, bb_crc), 64);
	ck_assert_uint_eq(xk_sb_buf_ops.crc_off, 224);
	ck_assert_uint_eq(xk_agf_buf_ops.crc_off, 216);
	ck_assert_uint_eq(xk_agi_buf_ops.crc_off, 312);
	ck_assert_uint_eq(xk_agfl_buf_ops.crc_off, 32);
}
END_TEST

START_TEST(test_bmbt_pack)
{
	struct xk_bmbt_rec rec;
	struct xk_bmbt_irec in = {
		.startoff = (1ULL << 54) - 1, .startblock = (1ULL << 52) - 1,
		.blockcount = (1ULL << 21) - 1, .unwritten = 1,
	}, out;

	xk_bmbt_rec_pack(&rec, &in);
	xk_bmbt_rec_unpack(&rec, &out);
	ck_assert_uint_eq(out.startoff, in.startoff);
	ck_assert_uint_eq(out.startblock, in.startblock);
	ck_assert_uint_eq(out.blockcount, in.blockcount);
	ck_assert_int_eq(out.unwritten, 1);
	in = (struct xk_bmbt_irec){ 12345, 0x123456789ULL, 77, 0 };
	xk_bmbt_rec_pack(&rec, &in);
	xk_bmbt_rec_unpack(&rec, &out);
	ck_assert_uint_eq(out.startoff, 12345);
	ck_assert_uint_eq(out.startblock, 0x123456789ULL);
	ck_assert_uint_eq(out.blockcount, 77);
	ck_assert_int_eq(out.unwritten, 0);
	/* Known packing: offset 1, block 2, length 3, written. */
	in = (struct xk_bmbt_irec){ 1, 2, 3, 0 };
	xk_bmbt_rec_pack(&rec, &in);
	ck_assert_mem_eq(&rec, "\0\0\0\0\0\0\x02\0\0\0\0\0\0\x40\0\x03", 16);
}
END_TEST

START_TEST(test_other_sizes)
{
	ck_assert_uint_eq(sizeof(struct xk_dinode), 176);
	ck_assert_uint_eq(offsetof(struct xk_dinode, di_crc), 100);
	ck_assert_uint_eq(offsetof(struct xk_dinode, di_lsn), 112);
	ck_assert_uint_eq(sizeof(struct xk_dir3_data_hdr), 64);
	ck_assert_uint_eq(sizeof(struct xk_dir3_leaf_hdr), 64);
	ck_assert_uint_eq(sizeof(struct xk_dir3_free_hdr), 64);
	ck_assert_uint_eq(sizeof(struct xk_da3_node_hdr), 64);
	ck_assert_uint_eq(sizeof(struct xk_attr3_leaf_hdr), 80);
	ck_assert_uint_eq(sizeof(struct xk_attr3_rmt_hdr), 56);
	ck_assert_uint_eq(sizeof(struct xk_dsymlink_hdr), 56);
	ck_assert_uint_eq(sizeof(struct xk_dqblk), 136);
	ck_assert_uint_eq(sizeof(struct xk_log_op_header), 12);
	ck_assert_uint_eq(sizeof(struct xk_inode_log_format), 56);
	ck_assert_uint_eq(sizeof(struct xk_buf_log_format), 88);
	/* Directory name hash known values. */
	ck_assert_uint_eq(xk_da_hashname((const uint8_t *)".", 1), 0x2e);
	ck_assert_uint_eq(xk_da_hashname((const uint8_t *)"..", 2), 0x172e);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ondisk");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_crc_offsets);
	tcase_add_test(tc, test_bmbt_pack);
	tcase_add_test(tc, test_other_sizes);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
