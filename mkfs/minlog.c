// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The smallest log the kernel accepts for a geometry.  The kernel derives
 * it from its largest transaction reservation: two of them must fit with
 * stripe padding, three times over.  This version does not yet carry the
 * full table of reservations; it uses an upper bound of the result
 * instead, so a log it accepts always mounts, at the price of refusing
 * (or choosing) a slightly larger minimum than mkfs.xfs in the cases
 * where the minimum matters: explicit tiny logs, filesystems under
 * 300 MB with --unsupported, and 32 KiB and 64 KiB blocks, whose default
 * log is the minimum.
 *
 * The bound: with reflink the largest reservation (truncate and write,
 * logged 8 times) costs about 2,600 blocks whatever the block size plus
 * a few MiB of fixed-size items; without reflink it is far smaller.
 * Checked against mkfs.xfs 6.1 for every block size from 1 KiB to
 * 64 KiB, with and without rmapbt and reflink (the bound is 5 % to 30 %
 * above the kernel's value).
 */
#include "mkfs.h"

uint32_t
mkfs_min_log_blocks(const struct mkfs_cfg *cfg)
{
	uint64_t blocks;

	if (cfg->reflink)
		blocks = 2650 + ((5ULL << 20) >> cfg->blocklog);
	else
		blocks = 512 + ((11ULL << 18) >> cfg->blocklog);
	/* Each of the two transactions may be padded by two stripe units. */
	if (cfg->lsunit)
		blocks += 6ULL * cfg->lsunit;
	return (uint32_t)blocks;
}
