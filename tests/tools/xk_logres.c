// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test helper: print xfskit-mkfs's transaction log reservations for the
 * filesystem in FILE, in the format of xfs_db's "logres" command, so a
 * script can compare every reservation type with the kernel's (xfs_db
 * computes them with libxfs):
 *     type N logres BYTES logcount COUNT
 *     minlogsize logres BYTES logcount COUNT
 * (xfs_db also prints each reservation's flags; the script drops them).
 * The reservation code is libxfskit's (libfs/log/trans_resv.c), the
 * same that xfskit-mkfs runs.
 * Usage: xk_logres FILE.  Exits 0, or 2 on a usage, I/O or superblock
 * error (only sane v5 geometries are computed).
 */
#include <stdio.h>

#include <xfskit/libfs.h>
#include <xfskit/log_resv.h>

/* The fields the reservations read, within what a v5 mkfs can make. */
static int
sb_sane(const struct xk_sb *sb)
{
	return sb->magicnum == XK_SB_MAGIC &&
	       sb->blocklog >= 10 && sb->blocklog <= 16 &&
	       sb->blocksize == 1u << sb->blocklog &&
	       sb->sectlog >= 9 && sb->sectlog <= 15 &&
	       sb->sectsize == 1u << sb->sectlog &&
	       sb->inodelog >= 9 && sb->inodelog <= 11 &&
	       sb->inodesize == 1u << sb->inodelog &&
	       sb->inopblog == sb->blocklog - sb->inodelog &&
	       sb->inopblock == 1u << sb->inopblog &&
	       sb->agblklog >= 1 && sb->agblklog <= 31 &&
	       sb->agblocks >= 64 &&
	       sb->blocklog + sb->dirblklog <= 16;
}

int
main(int argc, char **argv)
{
	struct xk_resv r[XK_RESV_NR];
	struct xk_dsb dsb;
	struct xk_sb sb;
	struct xk_dev *dev;
	unsigned int logcount, i;
	uint64_t max;

	if (argc != 2) {
		fprintf(stderr, "usage: xk_logres FILE\n");
		return 2;
	}
	if (xk_dev_open(argv[1], XK_DEV_RDONLY, &dev)) {
		perror(argv[1]);
		return 2;
	}
	if (xk_dev_pread(dev, &dsb, sizeof(dsb), 0)) {
		fprintf(stderr, "xk_logres: cannot read the superblock\n");
		xk_dev_close(dev);
		return 2;
	}
	xk_dev_close(dev);
	xk_sb_decode(&sb, &dsb);
	if (!sb_sane(&sb)) {
		fprintf(stderr, "xk_logres: not a v5 superblock it handles\n");
		return 2;
	}
	xk_trans_resv_table(&sb, r);
	for (i = 0; i < XK_RESV_NR; i++)
		printf("type %u logres %llu logcount %u\n", i,
		       (unsigned long long)r[i].logres, r[i].logcount);
	max = xk_trans_max_logres(&sb, &logcount);
	printf("minlogsize logres %llu logcount %u\n",
	       (unsigned long long)max, logcount);
	return 0;
}
