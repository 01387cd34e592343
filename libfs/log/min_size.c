// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The smallest log the kernel accepts for a geometry, computed exactly
 * as the kernel's mount check and mkfs.xfs 6.1 compute it, so that
 * xfskit-mkfs chooses (for filesystems under 300 MB, and for 32 KiB and
 * 64 KiB blocks whose default log is the minimum) and refuses (an
 * explicit -l size) the very same sizes:
 *  1. take the largest transaction reservation (trans_resv.c) and add
 *     what the log itself needs around it (unit_res below);
 *  2. multiply by its roll count;
 *  3. two such transactions must fit, each padded by two log stripe
 *     units (or, without one, by the historical 2 * 512 basic blocks);
 *  4. take that three times, rounded up to filesystem blocks.
 * The caller then applies the absolute floor of 512 blocks and, for a
 * default-sized log on a filesystem of 1 GiB or more, 10 MiB.
 * The input is the superblock mkfs is building; mkfs.xfs computes the
 * minimum from the same fields (block, sector and inode sizes, AG size,
 * directory block size, features, and the log stripe unit in bytes, or
 * 1 when there is none).
 */
#include <xfskit/libfs.h>
#include <xfskit/log_resv.h>

#define OP_HDR_BYTES		12	/* log operation header */
#define TRANS_HDR_BYTES		16	/* transaction header */
#define LOG_RECORD_SIZE		(256 * 1024)	/* largest log record */
#define LOG_HDR_CYCLE_SIZE	(32 * 1024)	/* data per header sector */
#define MIN_LOG_FACTOR		3

static uint64_t
div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/*
 * What a reservation of unit bytes costs in the log, assuming the
 * worst case the kernel assumes (the largest, 256 KiB, log records):
 * the transaction and start op headers; one op header per record the
 * data spans, and more while those headers push it into further
 * records; a record header per record, each with an extended header
 * sector per 32 KiB of record; the commit record's own header; and
 * padding of both the data and the commit record to the log stripe
 * unit (or to a basic block).
 */
static uint64_t
unit_res(uint64_t unit, uint32_t logsunit)
{
	const uint64_t hdr = (LOG_RECORD_SIZE / LOG_HDR_CYCLE_SIZE) *
			     XK_BBSIZE;
	const uint64_t space = LOG_RECORD_SIZE - hdr;
	uint64_t nhdr;

	unit += OP_HDR_BYTES + TRANS_HDR_BYTES + OP_HDR_BYTES;
	nhdr = div_up(unit, space);
	unit += OP_HDR_BYTES * nhdr;
	while (!nhdr || div_up(unit, space) > nhdr) {
		unit += OP_HDR_BYTES;
		nhdr++;
	}
	unit += hdr * nhdr + hdr;
	if (logsunit > 1)
		unit += 2ULL * logsunit;
	else
		unit += 2 * XK_BBSIZE;
	return unit;
}

uint32_t
xk_log_min_blocks(const struct xk_sb *sb)
{
	unsigned int logcount;
	uint64_t res, bbs, lsunit_bb = 0;
	uint64_t bb_per_fsb = 1ULL << (sb->blocklog - XK_BBSHIFT);

	res = unit_res(xk_trans_max_logres(sb, &logcount), sb->logsunit);
	if (logcount > 1)
		res *= logcount;
	if (sb->logsunit > 1)
		lsunit_bb = div_up(sb->logsunit, XK_BBSIZE);
	/* Step 3: note the unit mix-up of the kernel's formula is kept. */
	bbs = div_up(res, XK_BBSIZE);
	if (lsunit_bb)
		bbs = div_up(bbs, lsunit_bb) * lsunit_bb + 2 * lsunit_bb;
	else
		bbs += 2 * XK_BBSIZE;
	bbs *= MIN_LOG_FACTOR;
	return (uint32_t)div_up(bbs, bb_per_fsb);
}
