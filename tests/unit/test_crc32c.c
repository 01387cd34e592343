// SPDX-License-Identifier: GPL-2.0-or-later
/* CRC32c known answers (RFC 3720 B.4, the "123456789" check value) and
 * agreement of the hardware and portable paths at every length and
 * alignment; the XFS block rule (CRC field taken as zero, stored LE). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/crc32c.h>
#include <xfskit/endian.h>

#include "unit.h"

START_TEST(test_vectors)
{
	uint8_t buf[32];

	ck_assert_uint_eq(xk_crc32c("123456789", 9), 0xe3069283u);
	memset(buf, 0, 32);
	ck_assert_uint_eq(xk_crc32c(buf, 32), 0x8a9136aau);
	memset(buf, 0xff, 32);
	ck_assert_uint_eq(xk_crc32c(buf, 32), 0x62a8ab43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	ck_assert_uint_eq(xk_crc32c(buf, 32), 0x46dd794eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	ck_assert_uint_eq(xk_crc32c(buf, 32), 0x113fdb5cu);
	ck_assert_uint_eq(xk_crc32c(buf, 0), 0u);
}
END_TEST

START_TEST(test_hw_matches_sw)
{
	uint8_t *buf = malloc(4096 + 16);

	srand(1);
	for (int i = 0; i < 4096 + 16; i++)
		buf[i] = (uint8_t)rand();
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len < 300; len++)
			ck_assert_uint_eq(
				xk_crc32c_update(0x12345678u, buf + off, len),
				xk_crc32c_update_sw(0x12345678u, buf + off,
						    len));
	ck_assert_uint_eq(xk_crc32c_update(~0u, buf, 4096),
			  xk_crc32c_update_sw(~0u, buf, 4096));
	free(buf);
}
END_TEST

START_TEST(test_incremental)
{
	const char *s = "The quick brown fox jumps over the lazy dog";
	size_t n = strlen(s);

	for (size_t cut = 0; cut <= n; cut++) {
		uint32_t c = xk_crc32c_update(~0u, s, cut);

		c = xk_crc32c_update(c, s + cut, n - cut);
		ck_assert_uint_eq(~c, xk_crc32c(s, n));
	}
}
END_TEST

START_TEST(test_block_rule)
{
	uint8_t blk[512];

	for (int i = 0; i < 512; i++)
		blk[i] = (uint8_t)(i * 7);
	xk_cksum_update(blk, sizeof(blk), 224);
	ck_assert(xk_cksum_ok(blk, sizeof(blk), 224));
	/* Whatever the CRC field held, the sum treats it as zero. */
	{
		uint8_t copy[512];

		memcpy(copy, blk, 512);
		memset(copy + 224, 0, 4);
		ck_assert_uint_eq(xk_crc32c(copy, 512),
				  xk_get_le32(blk + 224));
	}
	blk[100] ^= 1;
	ck_assert(!xk_cksum_ok(blk, sizeof(blk), 224));
	blk[100] ^= 1;
	blk[225] ^= 0x80;
	ck_assert(!xk_cksum_ok(blk, sizeof(blk), 224));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("crc32c");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_vectors);
	tcase_add_test(tc, test_hw_matches_sw);
	tcase_add_test(tc, test_incremental);
	tcase_add_test(tc, test_block_rule);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
