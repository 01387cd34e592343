// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * POSIX ACL conversion (include/xfskit/build_acl.h): known-answer bytes
 * for the Linux xattr form and the XFS on-disk form, round trips both
 * ways, the mode an ACL implies, every validity rule refused one at a
 * time, and random mutations of valid values that must never crash and,
 * when accepted, must give a value the checker accepts and that converts
 * back to the same bytes.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build_acl.h>

#include "unit.h"

/* A Linux ACL value from (tag, perm, id) triples. */
static size_t
linux_acl(uint8_t *out, const uint32_t (*e)[3], size_t n)
{
	out[0] = 2;
	out[1] = out[2] = out[3] = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t *q = out + 4 + 8 * i;

		q[0] = (uint8_t)e[i][0];
		q[1] = (uint8_t)(e[i][0] >> 8);
		q[2] = (uint8_t)e[i][1];
		q[3] = (uint8_t)(e[i][1] >> 8);
		q[4] = (uint8_t)e[i][2];
		q[5] = (uint8_t)(e[i][2] >> 8);
		q[6] = (uint8_t)(e[i][2] >> 16);
		q[7] = (uint8_t)(e[i][2] >> 24);
	}
	return 4 + 8 * n;
}

#define U	XK_ACL_UNDEFINED_ID

/* u::rw-, u:1000:r--, g::r--, g:50:rwx, m::r-x, o::--- */
static const uint32_t full[][3] = {
	{ XK_ACL_USER_OBJ, 6, U }, { XK_ACL_USER, 4, 1000 },
	{ XK_ACL_GROUP_OBJ, 4, U }, { XK_ACL_GROUP, 7, 50 },
	{ XK_ACL_MASK, 5, U }, { XK_ACL_OTHER, 0, U },
};

START_TEST(test_known_answer)
{
	static const uint8_t want[] = {
		0, 0, 0, 6,
		0, 0, 0, 0x01, 0xff, 0xff, 0xff, 0xff, 0, 6, 0, 0,
		0, 0, 0, 0x02, 0, 0, 0x03, 0xe8, 0, 4, 0, 0,
		0, 0, 0, 0x04, 0xff, 0xff, 0xff, 0xff, 0, 4, 0, 0,
		0, 0, 0, 0x08, 0, 0, 0, 50, 0, 7, 0, 0,
		0, 0, 0, 0x10, 0xff, 0xff, 0xff, 0xff, 0, 5, 0, 0,
		0, 0, 0, 0x20, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
	};
	uint8_t in[64], out[128], back[64];
	size_t len = linux_acl(in, full, 6), olen, blen;

	ck_assert_uint_eq(len, 52);
	ck_assert_int_eq(xk_acl_linux_to_xfs(in, len, out, sizeof(out),
					     &olen), 0);
	ck_assert_uint_eq(olen, sizeof(want));
	ck_assert_uint_eq(olen, xk_acl_xfs_size(6));
	ck_assert_int_eq(memcmp(out, want, olen), 0);
	ck_assert_int_eq(xk_acl_xfs_check(out, olen), 0);
	ck_assert_int_eq(xk_acl_xfs_to_linux(out, olen, back, sizeof(back),
					     &blen), 0);
	ck_assert_uint_eq(blen, len);
	ck_assert_int_eq(memcmp(back, in, len), 0);
	/* Exactly the size needed is enough, one byte less is not. */
	ck_assert_int_eq(xk_acl_linux_to_xfs(in, len, out, olen, &olen), 0);
	ck_assert_int_eq(xk_acl_linux_to_xfs(in, len, out, olen - 1, &olen),
			 -ENOSPC);
	ck_assert_uint_eq(olen, 0);
}
END_TEST

/* Ids of entries that name nobody are written as the undefined id. */
START_TEST(test_id_normalised)
{
	static const uint32_t e[][3] = {
		{ XK_ACL_USER_OBJ, 7, 0 }, { XK_ACL_GROUP_OBJ, 5, 12 },
		{ XK_ACL_OTHER, 1, 99 },
	};
	uint8_t in[64], out[64], back[64];
	size_t len = linux_acl(in, e, 3), olen, blen;

	ck_assert_int_eq(xk_acl_linux_to_xfs(in, len, out, sizeof(out),
					     &olen), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(out[4 + 12 * i + 4] & out[4 + 12 * i + 7],
				  0xff);
	ck_assert_int_eq(xk_acl_xfs_to_linux(out, olen, back, sizeof(back),
					     &blen), 0);
	ck_assert_uint_eq(back[4 + 4], 0xff);
}
END_TEST

START_TEST(test_mode)
{
	static const uint32_t min[][3] = {
		{ XK_ACL_USER_OBJ, 7, U }, { XK_ACL_GROUP_OBJ, 5, U },
		{ XK_ACL_OTHER, 1, U },
	};
	uint8_t in[64];
	size_t len;
	uint16_t perm = 0;

	len = linux_acl(in, min, 3);
	ck_assert_int_eq(xk_acl_linux_mode(in, len, &perm), 0);
	ck_assert_uint_eq(perm, 0751);
	len = linux_acl(in, full, 6);
	ck_assert_int_eq(xk_acl_linux_mode(in, len, &perm), 1);
	ck_assert_uint_eq(perm, 0650);	/* group bits from the mask */
}
END_TEST

START_TEST(test_names)
{
	ck_assert_int_eq(xk_acl_linux_name_type("system.posix_acl_access",
						23), XK_ACL_TYPE_ACCESS);
	ck_assert_int_eq(xk_acl_linux_name_type("system.posix_acl_default",
						24), XK_ACL_TYPE_DEFAULT);
	ck_assert_int_eq(xk_acl_linux_name_type("system.posix_acl_acces",
						22), XK_ACL_TYPE_NONE);
	ck_assert_int_eq(xk_acl_linux_name_type("system.posix_acl_accessX",
						24), XK_ACL_TYPE_NONE);
	ck_assert_str_eq(xk_acl_xfs_name(XK_ACL_TYPE_ACCESS), "SGI_ACL_FILE");
	ck_assert_str_eq(xk_acl_xfs_name(XK_ACL_TYPE_DEFAULT),
			 "SGI_ACL_DEFAULT");
	ck_assert_ptr_null(xk_acl_xfs_name(XK_ACL_TYPE_NONE));
}
END_TEST

/* Linux xattr names to XFS namespaces. */
START_TEST(test_xattr_names)
{
	struct xk_bld_xattr x;
	uint8_t acl[64], buf[128];
	size_t alen = linux_acl(acl, full, 6);
	char longname[300];

#define MAP(n, v, l) xk_xattr_linux_to_xfs(n, strlen(n), v, l, buf, \
					   sizeof(buf), &x)
	ck_assert_int_eq(MAP("user.foo", "v", 1), 0);
	ck_assert_uint_eq(x.flags, 0);
	ck_assert_uint_eq(x.namelen, 3);
	ck_assert_int_eq(memcmp(x.name, "foo", 3), 0);
	ck_assert_uint_eq(x.valuelen, 1);
	ck_assert_int_eq(MAP("trusted.t", "", 0), 0);
	ck_assert_uint_eq(x.flags, 2);
	ck_assert_int_eq(MAP("security.selinux", "a", 1), 0);
	ck_assert_uint_eq(x.flags, 4);
	ck_assert_uint_eq(x.namelen, 7);
	ck_assert_int_eq(MAP("system.posix_acl_access", acl, alen), 0);
	ck_assert_uint_eq(x.flags, 2);
	ck_assert_uint_eq(x.namelen, 12);
	ck_assert_int_eq(memcmp(x.name, "SGI_ACL_FILE", 12), 0);
	ck_assert_ptr_eq(x.value, buf);
	ck_assert_uint_eq(x.valuelen, xk_acl_xfs_size(6));
	ck_assert_int_eq(MAP("system.posix_acl_default", acl, alen), 0);
	ck_assert_int_eq(memcmp(x.name, "SGI_ACL_DEFAULT", 15), 0);
	ck_assert_int_eq(MAP("system.posix_acl_default", acl, 4), -ENODATA);
	ck_assert_int_eq(MAP("system.posix_acl_access", acl, alen - 1),
			 -EINVAL);
	ck_assert_int_eq(MAP("system.nfs4_acl", "x", 1), -EOPNOTSUPP);
	ck_assert_int_eq(MAP("os2.x", "x", 1), -EOPNOTSUPP);
	ck_assert_int_eq(MAP("user", "x", 1), -EOPNOTSUPP);
	ck_assert_int_eq(MAP("user.", "x", 1), -EINVAL);
	ck_assert_int_eq(xk_xattr_linux_to_xfs("user.a\0b", 8, "x", 1, buf,
					       sizeof(buf), &x), -EINVAL);
	ck_assert_int_eq(MAP("user.big", "x", 65537), -E2BIG);
	memcpy(longname, "user.", 5);
	memset(longname + 5, 'n', 255);
	longname[260] = 0;
	ck_assert_int_eq(MAP(longname, "x", 1), 0);
	ck_assert_uint_eq(x.namelen, 255);
	longname[260] = 'n';
	longname[261] = 0;
	ck_assert_int_eq(MAP(longname, "x", 1), -ENAMETOOLONG);
#undef MAP
}
END_TEST

static int
convert(const uint32_t (*e)[3], size_t n)
{
	uint8_t in[256], out[512];
	size_t len = linux_acl(in, e, n), olen;

	return xk_acl_linux_to_xfs(in, len, out, sizeof(out), &olen);
}

/* One broken rule at a time, each refused. */
START_TEST(test_invalid)
{
	static const uint32_t no_mask[][3] = {
		{ 1, 6, U }, { 2, 4, 5 }, { 4, 4, U }, { 0x20, 0, U } };
	static const uint32_t no_user_obj[][3] = {
		{ 4, 4, U }, { 0x20, 0, U } };
	static const uint32_t two_user_obj[][3] = {
		{ 1, 6, U }, { 1, 6, U }, { 4, 4, U }, { 0x20, 0, U } };
	static const uint32_t no_other[][3] = { { 1, 6, U }, { 4, 4, U } };
	static const uint32_t after_other[][3] = {
		{ 1, 6, U }, { 4, 4, U }, { 0x20, 0, U }, { 0x20, 0, U } };
	static const uint32_t bad_perm[][3] = {
		{ 1, 8, U }, { 4, 4, U }, { 0x20, 0, U } };
	static const uint32_t bad_tag[][3] = {
		{ 1, 6, U }, { 0x40, 4, U }, { 4, 4, U }, { 0x20, 0, U } };
	static const uint32_t unsorted[][3] = {
		{ 1, 6, U }, { 2, 4, 9 }, { 2, 4, 8 }, { 4, 4, U },
		{ 0x10, 4, U }, { 0x20, 0, U } };
	static const uint32_t dup[][3] = {
		{ 1, 6, U }, { 4, 4, U }, { 8, 4, 8 }, { 8, 4, 8 },
		{ 0x10, 4, U }, { 0x20, 0, U } };
	static const uint32_t undef_id[][3] = {
		{ 1, 6, U }, { 2, 4, U }, { 4, 4, U }, { 0x10, 4, U },
		{ 0x20, 0, U } };
	static const uint32_t group_first[][3] = {
		{ 4, 4, U }, { 1, 6, U }, { 0x20, 0, U } };
	static const uint32_t mask_twice[][3] = {
		{ 1, 6, U }, { 4, 4, U }, { 0x10, 4, U }, { 0x10, 4, U },
		{ 0x20, 0, U } };
	uint8_t in[64], out[64];
	size_t olen;

	ck_assert_int_eq(convert(full, 6), 0);
	ck_assert_int_eq(convert(no_mask, 4), -EINVAL);
	ck_assert_int_eq(convert(no_user_obj, 2), -EINVAL);
	ck_assert_int_eq(convert(two_user_obj, 4), -EINVAL);
	ck_assert_int_eq(convert(no_other, 2), -EINVAL);
	ck_assert_int_eq(convert(after_other, 4), -EINVAL);
	ck_assert_int_eq(convert(bad_perm, 3), -EINVAL);
	ck_assert_int_eq(convert(bad_tag, 4), -EINVAL);
	ck_assert_int_eq(convert(unsorted, 6), -EINVAL);
	ck_assert_int_eq(convert(dup, 6), -EINVAL);
	ck_assert_int_eq(convert(undef_id, 5), -EINVAL);
	ck_assert_int_eq(convert(group_first, 3), -EINVAL);
	ck_assert_int_eq(convert(mask_twice, 5), -EINVAL);
	/* Framing: header only, short, ragged, wrong version. */
	ck_assert_int_eq(convert(full, 0), -ENODATA);
	linux_acl(in, full, 6);
	ck_assert_int_eq(xk_acl_linux_to_xfs(in, 3, out, sizeof(out), &olen),
			 -EINVAL);
	ck_assert_int_eq(xk_acl_linux_to_xfs(in, 13, out, sizeof(out), &olen),
			 -EINVAL);
	ck_assert_int_eq(xk_acl_linux_to_xfs(NULL, 12, out, sizeof(out),
					     &olen), -EINVAL);
	in[0] = 1;
	ck_assert_int_eq(xk_acl_linux_to_xfs(in, 52, out, sizeof(out), &olen),
			 -EOPNOTSUPP);
}
END_TEST

/* The XFS form's own framing: count against length. */
START_TEST(test_invalid_xfs)
{
	uint8_t in[64], x[128];
	size_t len = linux_acl(in, full, 6), xlen;

	ck_assert_int_eq(xk_acl_linux_to_xfs(in, len, x, sizeof(x), &xlen), 0);
	ck_assert_int_eq(xk_acl_xfs_check(x, xlen - 1), -EINVAL);
	ck_assert_int_eq(xk_acl_xfs_check(x, 3), -EINVAL);
	x[3] = 7;			/* count 7, six entries */
	ck_assert_int_eq(xk_acl_xfs_check(x, xlen), -EINVAL);
	x[3] = 0;
	ck_assert_int_eq(xk_acl_xfs_check(x, 4), -EINVAL);
	memset(x, 0xff, 4);		/* count 2^32 - 1 */
	ck_assert_int_eq(xk_acl_xfs_check(x, xlen), -E2BIG);
	ck_assert_int_eq(xk_acl_xfs_to_linux(x, xlen, in, sizeof(in), &len),
			 -E2BIG);
}
END_TEST

/* The most entries XFS stores, and one more. */
START_TEST(test_max_entries)
{
	size_t n = XK_ACL_XFS_MAX_ENTRIES, len, olen;
	uint32_t (*e)[3] = calloc(n + 1, sizeof(*e));
	uint8_t *in = malloc(xk_acl_linux_size(n + 1));
	uint8_t *out = malloc(xk_acl_xfs_size(n + 1));

	ck_assert_uint_eq(n, 5461);
	e[0][0] = XK_ACL_USER_OBJ;
	for (size_t i = 1; i < n - 3; i++) {
		e[i][0] = XK_ACL_USER;
		e[i][2] = (uint32_t)i;
	}
	e[n - 3][0] = XK_ACL_GROUP_OBJ;
	e[n - 2][0] = XK_ACL_MASK;
	e[n - 1][0] = XK_ACL_OTHER;
	len = linux_acl(in, (const uint32_t (*)[3])e, n);
	ck_assert_int_eq(xk_acl_linux_to_xfs(in, len, out,
					     xk_acl_xfs_size(n), &olen), 0);
	ck_assert_uint_eq(olen, 65536);
	ck_assert_int_eq(xk_acl_xfs_check(out, olen), 0);
	/* n + 1: another named user before GROUP_OBJ. */
	memmove(&e[n - 2], &e[n - 3], 3 * sizeof(*e));
	e[n - 3][0] = XK_ACL_USER;
	e[n - 3][2] = (uint32_t)(n + 10);
	len = linux_acl(in, (const uint32_t (*)[3])e, n + 1);
	ck_assert_int_eq(xk_acl_linux_to_xfs(in, len, out,
					     xk_acl_xfs_size(n + 1), &olen),
			 -E2BIG);
	free(e);
	free(in);
	free(out);
}
END_TEST

/*
 * Random mutations of a valid value (fixed seed): no crash, and an
 * accepted value converts to one the checker accepts, which converts
 * back to the very bytes accepted (ids of unnamed entries aside).
 */
START_TEST(test_mutations)
{
	uint8_t base[64], in[64], x[128], back[64];
	size_t blen = linux_acl(base, full, 6);
	unsigned int seed = 12345, accepted = 0;

	for (int round = 0; round < 50000; round++) {
		size_t len = blen, xlen, rlen;
		int nflips = 1 + (int)(rand_r(&seed) % 3), err;

		memcpy(in, base, blen);
		for (int k = 0; k < nflips; k++)
			in[rand_r(&seed) % blen] ^=
				(uint8_t)(1u << (rand_r(&seed) % 8));
		if (rand_r(&seed) % 8 == 0)
			len = rand_r(&seed) % (blen + 1);
		err = xk_acl_linux_to_xfs(in, len, x, sizeof(x), &xlen);
		if (err) {
			ck_assert_uint_eq(xlen, 0);
			continue;
		}
		accepted++;
		ck_assert_int_eq(xk_acl_xfs_check(x, xlen), 0);
		ck_assert_int_eq(xk_acl_xfs_to_linux(x, xlen, back,
						     sizeof(back), &rlen), 0);
		ck_assert_uint_eq(rlen, len);
		for (size_t i = 0; i < (len - 4) / 8; i++) {
			const uint8_t *a = in + 4 + 8 * i;
			const uint8_t *b = back + 4 + 8 * i;

			ck_assert_int_eq(memcmp(a, b, 4), 0);
			if (a[0] == XK_ACL_USER || a[0] == XK_ACL_GROUP)
				ck_assert_int_eq(memcmp(a + 4, b + 4, 4), 0);
		}
		/* And XFS-form mutations through the checker. */
		x[rand_r(&seed) % xlen] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
		(void)xk_acl_xfs_check(x, xlen);
	}
	/* Id and some perm flips stay valid: the test saw both outcomes. */
	ck_assert_uint_gt(accepted, 100);
	ck_assert_uint_lt(accepted, 50000);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("build_acl");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_known_answer);
	tcase_add_test(tc, test_id_normalised);
	tcase_add_test(tc, test_mode);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_xattr_names);
	tcase_add_test(tc, test_invalid);
	tcase_add_test(tc, test_invalid_xfs);
	tcase_add_test(tc, test_max_entries);
	tcase_add_test(tc, test_mutations);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
