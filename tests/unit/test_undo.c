// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Undo files: overlapping and extending writes through a device with an
 * undo file attached are taken back byte for byte; a damaged undo file
 * or one for another filesystem changes nothing.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/libfs.h>

#include "unit.h"

#define SIZE	(1u << 20)

static char dev_path[] = "/tmp/xk-undo-dev-XXXXXX";
static char undo_path[64];
static uint8_t orig[SIZE];

static void
setup(void)
{
	int fd = mkstemp(dev_path);

	srand(7);
	for (unsigned int i = 0; i < SIZE; i++)
		orig[i] = (uint8_t)rand();
	memcpy(orig + 32, "0123456789abcdef", 16);	/* "fs UUID" */
	ck_assert_int_eq(write(fd, orig, SIZE), SIZE);
	close(fd);
	snprintf(undo_path, sizeof(undo_path), "%s.undo", dev_path);
	unlink(undo_path);
}

static void
teardown(void)
{
	unlink(dev_path);
	unlink(undo_path);
	strcpy(dev_path, "/tmp/xk-undo-dev-XXXXXX");
}

static void
scribble(void)
{
	struct xk_dev *dev;
	struct xk_undo *u;
	uint8_t junk[20000];

	memset(junk, 0xab, sizeof(junk));
	ck_assert_int_eq(xk_dev_open(dev_path, 0, &dev), 0);
	ck_assert_int_eq(xk_undo_create(dev, undo_path, &u), 0);
	ck_assert_int_eq(xk_dev_pwrite(dev, junk, 4096, 8192), 0);
	ck_assert_int_eq(xk_dev_pwrite(dev, junk, 777, 10000), 0);	/* overlaps */
	ck_assert_int_eq(xk_dev_pwrite(dev, junk, 20000, 500000), 0);
	ck_assert_int_eq(xk_dev_pwrite(dev, junk, 100, 0), 0);	/* the UUID too */
	ck_assert_int_eq(xk_dev_pwrite(dev, junk, 3000, SIZE - 1000), 0);
	ck_assert_uint_gt(dev->size, SIZE);			/* grew */
	ck_assert_int_eq(xk_dev_set_size(dev, SIZE / 2), -EPERM);
	ck_assert_int_eq(xk_dev_discard(dev, 0, 4096), 0);	/* skipped */
	ck_assert_int_eq(xk_undo_finish(u), 0);
	xk_dev_close(dev);
}

static int
same_as_orig(void)
{
	uint8_t *now = malloc(SIZE + 1);
	FILE *f = fopen(dev_path, "rb");
	size_t n = fread(now, 1, SIZE + 1, f);
	int same = n == SIZE && memcmp(now, orig, SIZE) == 0;

	fclose(f);
	free(now);
	return same;
}

START_TEST(test_roundtrip)
{
	struct xk_undo_result r;

	scribble();
	ck_assert(!same_as_orig());
	ck_assert_int_eq(xk_undo_apply(undo_path, dev_path, 0, NULL, NULL, &r),
			 0);
	ck_assert(r.complete);
	ck_assert_uint_ge(r.records, 4);
	ck_assert(same_as_orig());
}
END_TEST

START_TEST(test_damaged_changes_nothing)
{
	struct xk_undo_result r;
	uint8_t b;
	int fd;

	scribble();
	/* The UUID is scribbled on the device; force past that check. */
	fd = open(undo_path, O_RDWR);
	ck_assert_int_eq(pread(fd, &b, 1, 4096 + 24 + 100), 1);
	b ^= 1;
	ck_assert_int_eq(pwrite(fd, &b, 1, 4096 + 24 + 100), 1);
	close(fd);
	ck_assert_int_eq(xk_undo_apply(undo_path, dev_path, XK_UNDO_FORCE,
				       NULL, NULL, &r), XK_EBADCRC);
	ck_assert(strstr(r.msg, "checksum"));
	ck_assert(!same_as_orig());
	{
		/* Still scribbled exactly as before: nothing was applied. */
		uint8_t x;
		FILE *f = fopen(dev_path, "rb");

		fseek(f, 8192, SEEK_SET);
		ck_assert_int_eq(fread(&x, 1, 1, f), 1);
		fclose(f);
		ck_assert_uint_eq(x, 0xab);
	}
}
END_TEST

START_TEST(test_wrong_fs)
{
	struct xk_undo_result r;
	struct xk_dev *dev;
	uint8_t other[16];

	scribble();
	memset(other, 0x11, sizeof(other));
	ck_assert_int_eq(xk_dev_open(dev_path, 0, &dev), 0);
	ck_assert_int_eq(xk_dev_pwrite(dev, other, 16, 32), 0);
	xk_dev_close(dev);
	ck_assert_int_eq(xk_undo_apply(undo_path, dev_path, 0, NULL, NULL, &r),
			 XK_UNDO_EMISMATCH);
	ck_assert(strstr(r.msg, "UUID"));
}
END_TEST

START_TEST(test_not_undo)
{
	struct xk_undo_result r;

	ck_assert_int_ne(xk_undo_apply(dev_path, dev_path, 0, NULL, NULL, &r),
			 0);
	ck_assert(strstr(r.msg, "not an xfskit undo file") ||
		  strstr(r.msg, "short"));
	ck_assert(same_as_orig());
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("undo");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_damaged_changes_nothing);
	tcase_add_test(tc, test_wrong_fs);
	tcase_add_test(tc, test_not_undo);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
