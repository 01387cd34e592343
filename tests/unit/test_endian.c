// SPDX-License-Identifier: GPL-2.0-or-later
/* Big-endian field types and raw accessors: byte order, round trips and
 * unaligned use. */
#include <check.h>
#include <string.h>

#include <xfskit/endian.h>

#include "unit.h"

START_TEST(test_byte_order)
{
	xk_be32 v;
	xk_be64 w;
	xk_be16 h;

	xk_be32_set(&v, 0x58465342);
	ck_assert_mem_eq(v.b, "XFSB", 4);
	ck_assert_uint_eq(xk_be32_get(v), 0x58465342);
	xk_be64_set(&w, 0x0102030405060708ULL);
	ck_assert_mem_eq(w.b, "\1\2\3\4\5\6\7\10", 8);
	ck_assert_uint_eq(xk_be64_get(w), 0x0102030405060708ULL);
	xk_be16_set(&h, 0x494e);
	ck_assert_mem_eq(h.b, "IN", 2);
	ck_assert_uint_eq(xk_be16_get(xk_cpu_to_be16(0xbeef)), 0xbeef);
}
END_TEST

START_TEST(test_unaligned)
{
	uint8_t buf[32];

	memset(buf, 0, sizeof(buf));
	for (int off = 0; off < 8; off++) {
		xk_put_be64(buf + off, 0xfedcba9876543210ULL);
		ck_assert_uint_eq(xk_get_be64(buf + off),
				  0xfedcba9876543210ULL);
		xk_put_be32(buf + off + 9, 0xdeadbeef);
		ck_assert_uint_eq(xk_get_be32(buf + off + 9), 0xdeadbeef);
		xk_put_be16(buf + off + 15, 0xabcd);
		ck_assert_uint_eq(xk_get_be16(buf + off + 15), 0xabcd);
	}
	xk_put_le32(buf, 0x11223344);
	ck_assert_mem_eq(buf, "\x44\x33\x22\x11", 4);
	ck_assert_uint_eq(xk_get_le32(buf), 0x11223344);
}
END_TEST

START_TEST(test_varwidth)
{
	uint8_t buf[8];

	for (unsigned int w = 1; w <= 8; w++) {
		uint64_t x = 0x0123456789abcdefULL >> (64 - 8 * w);

		xk_put_benn(buf, w, x);
		ck_assert_uint_eq(xk_get_benn(buf, w), x);
	}
	xk_put_benn(buf, 4, 0x01020304);
	ck_assert_mem_eq(buf, "\1\2\3\4", 4);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("endian");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_byte_order);
	tcase_add_test(tc, test_unaligned);
	tcase_add_test(tc, test_varwidth);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
