// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metadump rewriting code (db/metadump_obf.c and db/metadump_log.c,
 * linked from db/libmetadump.la): the name solver keeps length and
 * xk_da_hashname for every length it obfuscates, gives distinct names
 * within one directory, keeps short names and lost+found; stale bytes
 * of a btree leaf are zeroed with a fresh CRC only when the CRC was
 * valid; a directory data block walk stops inside the block; a clean
 * log is rewritten one cycle on with the record's stale padding gone and
 * a CRC that follows the record rule.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/log.h>

#include "metadump.h"
#include "unit.h"

static void
ob_init(struct md_obf *ob, int obf, int zero)
{
	memset(ob, 0, sizeof(*ob));
	ob->obfuscate = obf;
	ob->zero_stale = zero;
	ob->rng.s = 0x1234567887654321ULL;
}

START_TEST(test_names_keep_hash)
{
	struct md_obf ob;
	uint8_t name[256], orig[256];
	struct md_rng r = { 42 };
	unsigned int kept = 0;

	ob_init(&ob, 1, 1);
	for (unsigned int len = 5; len <= 255; len++) {
		for (int t = 0; t < 4; t++) {
			for (unsigned int i = 0; i < len; i++)
				orig[i] = (uint8_t)(0x21 + md_rand(&r) % 94);
			for (unsigned int i = 0; i < len; i++)
				if (orig[i] == '/')
					orig[i] = '_';
			memcpy(name, orig, len);
			md_nameset_reset(&ob.names);
			if (md_obf_name(&ob, name, len)) {
				ck_assert_mem_eq(name, orig, len);
				kept++;
				continue;
			}
			ck_assert_uint_eq(xk_da_hashname(name, (int)len),
					  xk_da_hashname(orig, (int)len));
			ck_assert(memcmp(name, orig, len) != 0);
			for (unsigned int i = 0; i < len; i++)
				ck_assert(name[i] != 0 && name[i] != '/');
		}
	}
	/* Only 5-byte names may lack another name with their hash. */
	ck_assert_uint_le(kept, 2);
	md_nameset_free(&ob.names);
}
END_TEST

START_TEST(test_names_distinct)
{
	struct md_obf ob;
	uint8_t out[64][12];
	const char *src = "report_2024";

	ob_init(&ob, 1, 1);
	for (int i = 0; i < 64; i++) {
		memcpy(out[i], src, 11);
		ck_assert_int_eq(md_obf_name(&ob, out[i], 11), 0);
		for (int j = 0; j < i; j++)
			ck_assert(memcmp(out[i], out[j], 11) != 0);
	}
	md_nameset_free(&ob.names);
}
END_TEST

START_TEST(test_names_kept)
{
	struct md_obf ob;
	uint8_t n[16];

	ob_init(&ob, 1, 1);
	for (unsigned int len = 1; len < 5; len++) {
		memcpy(n, "abcd", 4);
		ck_assert_int_eq(md_obf_name(&ob, n, len), -ENOENT);
		ck_assert_mem_eq(n, "abcd", 4);
	}
	memcpy(n, "lost+found", 10);
	ck_assert_int_eq(md_obf_name(&ob, n, 10), -ENOENT);
	ck_assert_mem_eq(n, "lost+found", 10);
	md_nameset_free(&ob.names);
}
END_TEST

/* A bnobt leaf with 3 records and garbage after them. */
static void
make_leaf(uint8_t *b, uint32_t len)
{
	memset(b, 0xa5, len);
	xk_put_be32(b, xk_bnobt_ops.magic);
	xk_put_be16(b + 4, 0);
	xk_put_be16(b + 6, 3);
	for (int i = 0; i < 3; i++) {
		xk_put_be32(b + 56 + i * 8, 100u * (unsigned int)i + 10);
		xk_put_be32(b + 60 + i * 8, 5);
	}
}

START_TEST(test_btree_zero)
{
	size_t crc = xk_bnobt_ops.buf_ops->crc_off;
	struct md_obf ob;
	uint8_t b[4096], keep[4096];

	ob_init(&ob, 0, 1);
	make_leaf(b, sizeof(b));
	xk_cksum_update(b, sizeof(b), crc);
	memcpy(keep, b, sizeof(b));
	ck_assert_int_eq(md_fix_btree(&ob, &xk_bnobt_ops, b, sizeof(b)), 1);
	ck_assert_mem_eq(b + 56, keep + 56, 24);
	for (size_t i = 56 + 24; i < sizeof(b); i++)
		ck_assert_uint_eq(b[i], 0);
	ck_assert(xk_cksum_ok(b, sizeof(b), crc));

	/* a bad CRC stays bad */
	make_leaf(b, sizeof(b));
	xk_cksum_update(b, sizeof(b), crc);
	b[crc] ^= 1;
	md_fix_btree(&ob, &xk_bnobt_ops, b, sizeof(b));
	ck_assert(!xk_cksum_ok(b, sizeof(b), crc));

	/* more records than fit: untouched */
	make_leaf(b, sizeof(b));
	xk_put_be16(b + 6, 60000);
	memcpy(keep, b, sizeof(b));
	ck_assert_int_eq(md_fix_btree(&ob, &xk_bnobt_ops, b, sizeof(b)), 0);
	ck_assert_mem_eq(b, keep, sizeof(b));

	/* -a: nothing */
	ob_init(&ob, 0, 0);
	make_leaf(b, sizeof(b));
	ck_assert_int_eq(md_fix_btree(&ob, &xk_bnobt_ops, b, sizeof(b)), 0);
}
END_TEST

/*
 * A data block whose walk ends 8 bytes before the end on something that
 * is not a free region: the entry header would run past the block, so
 * the walk must stop there (ASan catches a read past the buffer).  The
 * free region before it is zeroed but for its tag, length and offset.
 */
START_TEST(test_dir_data_tail)
{
	struct xk_mount m;
	struct md_obf ob;
	uint32_t len = 4096;
	uint8_t *b = malloc(len);

	ck_assert_ptr_nonnull(b);
	memset(&m, 0, sizeof(m));
	m.g.has_ftype = 1;
	ob_init(&ob, 1, 1);
	ob.mp = &m;
	memset(b, 0x5a, len);
	xk_put_be32(b, XK_DIR3_DATA_MAGIC);
	xk_put_be16(b + 64, XK_DIR2_DATA_FREE_TAG);
	xk_put_be16(b + 66, (uint16_t)(len - 72));
	xk_put_be16(b + len - 10, 64);
	md_fix_dir(&ob, b, len);
	for (uint32_t i = 68; i < len - 10; i++)
		ck_assert_uint_eq(b[i], 0);
	ck_assert_uint_eq(xk_get_be16(b + len - 10), 64);
	ck_assert_uint_eq(b[len - 1], 0x5a);
	md_nameset_free(&ob.names);
	free(b);
}
END_TEST

#define NBB	1100	/* 2 records of 512 blocks after block 512: 76 left */

static uint32_t
hdr32(const uint8_t *log, uint32_t blk, size_t off)
{
	return xk_get_be32(log + (size_t)blk * 512 + off);
}

static uint64_t
hdr64(const uint8_t *log, uint32_t blk, size_t off)
{
	return xk_get_be64(log + (size_t)blk * 512 + off);
}

/*
 * A clean log emptied as xfs_metadump empties it (the layout its 6.1
 * and 7.2 dumps restore to; metadump_log.sh compares the bytes): cycle
 * C+1 at block 0, cycle C records of 512 blocks from block 512, the
 * last one shorter, zeros between.
 */
START_TEST(test_log_clear)
{
	uint8_t *log = malloc(NBB * 512), uuid[16];
	const size_t lsn = offsetof(struct xk_log_rec_header, h_lsn);
	const size_t tail = offsetof(struct xk_log_rec_header, h_tail_lsn);
	const size_t len = offsetof(struct xk_log_rec_header, h_len);
	const size_t size = offsetof(struct xk_log_rec_header, h_size);

	ck_assert_ptr_nonnull(log);
	memset(log, 0x5a, NBB * 512);
	memset(uuid, 0x11, sizeof(uuid));
	ck_assert_int_eq(md_log_clear(log, NBB, uuid, 1, 7), 0);
	ck_assert_uint_eq(hdr32(log, 0, 0), XK_LOG_HEADER_MAGIC_NUM);
	ck_assert_uint_eq(hdr32(log, 0, 4), 8);
	ck_assert_uint_eq(hdr64(log, 0, lsn), 8ULL << 32);
	ck_assert_uint_eq(hdr64(log, 0, tail), (7ULL << 32) | (NBB - 2));
	ck_assert_uint_eq(hdr32(log, 0, len), 512);
	ck_assert_uint_eq(hdr32(log, 0, size), 32768);
	ck_assert_uint_eq(hdr32(log, 0, xk_log_rec_cycle_slot(0)), 0xb0c0d0d0);
	/* the unmount op, its first word the cycle */
	ck_assert_uint_eq(hdr32(log, 1, 0), 8);
	ck_assert_uint_eq(hdr32(log, 1, 4), 8);
	ck_assert_uint_eq(log[512 + 8], 0xaa);
	ck_assert_uint_eq(log[512 + 9], 0x20);
	for (uint32_t i = 2 * 512; i < 512 * 512; i++)
		ck_assert_uint_eq(log[i], 0);
	/* block 512: 8 header blocks, the op at 520, cycle 7 */
	ck_assert_uint_eq(hdr32(log, 512, 4), 7);
	ck_assert_uint_eq(hdr64(log, 512, lsn), (7ULL << 32) | 512);
	ck_assert_uint_eq(hdr64(log, 512, tail), 7ULL << 32);
	ck_assert_uint_eq(hdr32(log, 512, len), 262144 - 8 * 512);
	ck_assert_uint_eq(hdr32(log, 513, 0), 7);
	ck_assert_uint_eq(hdr32(log, 520, 4), 8);
	ck_assert_uint_eq(hdr32(log, 1023, 0), 7);
	/* the last record: 76 blocks, 2 header blocks */
	ck_assert_uint_eq(hdr64(log, 1024, tail), (7ULL << 32) | (1024 - 76));
	ck_assert_uint_eq(hdr32(log, 1024, size), 76 * 512);
	ck_assert_uint_eq(hdr32(log, 1024, len), 74 * 512);
	ck_assert_uint_eq(hdr32(log, 1026, 4), 8);
	ck_assert_uint_eq(hdr32(log, NBB - 1, 0), 7);
	/* refused, buffer untouched: no cycle, a stripe unit too large */
	memset(log, 0x5a, NBB * 512);
	ck_assert_int_eq(md_log_clear(log, NBB, uuid, 1, 0), -EINVAL);
	ck_assert_int_eq(md_log_clear(log, NBB, uuid, 1 << 20, 3), -EINVAL);
	ck_assert_uint_eq(log[0], 0x5a);
	free(log);
}
END_TEST

/* A dirty log's blocks from head round to tail keep their cycle only. */
START_TEST(test_log_scrub_stale)
{
	uint8_t *log = malloc(64 * 512);

	ck_assert_ptr_nonnull(log);
	memset(log, 0x5a, 64 * 512);
	xk_put_be32(log + 60 * 512, XK_LOG_HEADER_MAGIC_NUM);
	/* live: 10..49; stale: 50..63 and 0..9 */
	ck_assert_uint_eq(md_log_scrub_stale(log, 64, 50, 10), 24);
	for (uint32_t b = 0; b < 64; b++) {
		const uint8_t *p = log + b * 512;
		uint32_t keep = b == 60 ? 8 : 4;

		ck_assert_uint_eq(p[0], b == 60 ? 0xfe : 0x5a);
		ck_assert_uint_eq(p[keep - 1], 0x5a);
		ck_assert_uint_eq(p[keep], b >= 10 && b < 50 ? 0x5a : 0);
		ck_assert_uint_eq(p[511], b >= 10 && b < 50 ? 0x5a : 0);
	}
	/* clean (head == tail) or out of range: nothing */
	ck_assert_uint_eq(md_log_scrub_stale(log, 64, 20, 20), 0);
	ck_assert_uint_eq(md_log_scrub_stale(log, 64, 64, 3), 0);
	free(log);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("metadump");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_names_keep_hash);
	tcase_add_test(tc, test_names_distinct);
	tcase_add_test(tc, test_names_kept);
	tcase_add_test(tc, test_btree_zero);
	tcase_add_test(tc, test_dir_data_tail);
	tcase_add_test(tc, test_log_clear);
	tcase_add_test(tc, test_log_scrub_stale);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
