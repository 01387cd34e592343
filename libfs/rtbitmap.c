// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The classic realtime bitmap and summary (include/xfskit/rtbitmap.h):
 * building them from what is in use, and finding the data-device blocks
 * of their files.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/fork.h>
#include <xfskit/format/rtgroup.h>
#include <xfskit/libfs.h>
#include <xfskit/rtbitmap.h>

#include "libfs_priv.h"

uint8_t
xk_rt_extslog(uint64_t rextents)
{
	uint8_t log = 0;

	while (rextents >> 1) {
		rextents >>= 1;
		log++;
	}
	return log;
}

static void
set_bits(uint8_t *bm, uint64_t rtx, uint64_t len, int value)
{
	for (uint64_t x = rtx; x < rtx + len;) {
		uint64_t word = x / 32;
		uint32_t bit = (uint32_t)(x % 32);
		uint64_t n = 32 - bit < rtx + len - x ? 32 - bit :
			     rtx + len - x;
		uint32_t mask = n == 32 ? 0xffffffffu :
				((1u << n) - 1) << bit;
		uint32_t w = xk_rtword_get(bm, word);

		xk_rtword_set(bm, word, value ? w | mask : w & ~mask);
		x += n;
	}
}

void
xk_rtbitmap_init_free(uint8_t *bm, uint64_t bytes, uint64_t rextents)
{
	memset(bm, 0, bytes);
	if (rextents > bytes * 8)
		rextents = bytes * 8;
	set_bits(bm, 0, rextents, 1);
}

void
xk_rtbitmap_mark_used(uint8_t *bm, uint64_t rtx, uint64_t len)
{
	set_bits(bm, rtx, len, 0);
}

void
xk_rtbitmap_mark_blocks(const struct xk_sb *sb, uint8_t *bm, uint64_t rtbno,
			uint64_t len)
{
	uint64_t x0 = rtbno / sb->rextsize;
	uint64_t x1 = (rtbno + len + sb->rextsize - 1) / sb->rextsize;

	if (x1 > sb->rextents)
		x1 = sb->rextents;
	if (x0 < x1)
		xk_rtbitmap_mark_used(bm, x0, x1 - x0);
}

static int
bit_free(const uint8_t *bm, uint64_t x)
{
	return (xk_rtword_get(bm, x / 32) >> (x % 32)) & 1;
}

void
xk_rtbm_geo_classic(const struct xk_sb *sb, struct xk_rtbm_geo *geo)
{
	geo->extents = sb->rextents;
	geo->block_bytes = sb->blocksize;
	geo->blocks = sb->rbmblocks;
	geo->sum_blocks = xk_rt_sum_blocks(sb);
	geo->maxlog = sb->rextslog;
}

/*
 * Each group has rbmblocks bitmap blocks for rgextents extents, and a
 * summary of log2(rgextents) + 1 levels of rbmblocks counters, both in
 * blocks less their header.
 */
void
xk_rtbm_geo_group(const struct xk_sb *sb, uint32_t rgno,
		  struct xk_rtbm_geo *geo)
{
	uint32_t payload = xk_rtg_block_payload(sb->blocksize);
	uint64_t words = (uint64_t)(xk_rt_extslog(sb->rgextents) + 1) *
			 sb->rbmblocks;

	geo->extents = xk_rtg_extents(sb, rgno);
	geo->block_bytes = payload;
	geo->blocks = sb->rbmblocks;
	geo->sum_blocks = (uint32_t)((words + payload / 4 - 1) /
				     (payload / 4));
	geo->maxlog = xk_rt_extslog(sb->rgextents);
}

/* A free run of len extents starting at extent start, counted. */
static void
count_run(const struct xk_rtbm_geo *geo, uint8_t *sum, uint64_t start,
	  uint64_t len)
{
	uint64_t bits = (uint64_t)geo->block_bytes * 8;
	uint32_t log = xk_rt_extslog(len);
	uint64_t i;

	if (log > geo->maxlog)
		log = geo->maxlog;
	i = (uint64_t)log * geo->blocks + start / bits;
	xk_rtword_set(sum, i, xk_rtword_get(sum, i) + 1);
}

void
xk_rtbitmap_runs(const uint8_t *bm, uint64_t nbits, xk_rtrun_fn fn,
		 void *ctx)
{
	uint64_t x = 0, start = 0;
	int in_run = 0;

	while (x < nbits) {
		uint32_t w = xk_rtword_get(bm, x / 32);

		/* Whole words of one value go at once. */
		if (x % 32 == 0 && x + 32 <= nbits &&
		    (w == 0 || w == 0xffffffffu)) {
			if (w && !in_run) {
				in_run = 1;
				start = x;
			} else if (!w && in_run) {
				in_run = 0;
				fn(ctx, start, x - start);
			}
			x += 32;
			continue;
		}
		if (bit_free(bm, x) && !in_run) {
			in_run = 1;
			start = x;
		} else if (!bit_free(bm, x) && in_run) {
			in_run = 0;
			fn(ctx, start, x - start);
		}
		x++;
	}
	if (in_run)
		fn(ctx, start, x - start);
}

struct sum_ctx {
	const struct xk_rtbm_geo *geo;
	uint8_t		*sum;
	uint64_t	total;
};

static void
sum_run(void *ctx, uint64_t start, uint64_t len)
{
	struct sum_ctx *s = ctx;

	count_run(s->geo, s->sum, start, len);
	s->total += len;
}

void
xk_rtsummary_compute_geo(const struct xk_rtbm_geo *geo, const uint8_t *bm,
			 uint8_t *sum, uint64_t *nfree)
{
	struct sum_ctx s = { geo, sum, 0 };

	memset(sum, 0, (size_t)geo->sum_blocks * geo->block_bytes);
	xk_rtbitmap_runs(bm, (uint64_t)geo->blocks * geo->block_bytes * 8,
			 sum_run, &s);
	*nfree = s.total;
}

void
xk_rtsummary_compute(const struct xk_sb *sb, const uint8_t *bm,
		     uint8_t *sum, uint64_t *nfree)
{
	struct xk_rtbm_geo geo;

	xk_rtbm_geo_classic(sb, &geo);
	xk_rtsummary_compute_geo(&geo, bm, sum, nfree);
}

int
xk_rt_file_map(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	       uint64_t nblocks, uint64_t *fsb, struct xk_fail *f)
{
	struct xk_fork_map map = { 0 };
	int fmt = xk_dfork_format(dip, XK_DATA_FORK);
	int err;

	memset(f, 0, sizeof(*f));
	f->agno = -1;
	f->daddr = XK_NO_DADDR;
	f->structure = "realtime metadata file";
	if (fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE) {
		xk_fail_set(f, "format", "inode %llu's data fork is in "
			    "format %d, not extents or btree",
			    (unsigned long long)ino, fmt);
		return XK_ECORRUPT;
	}
	err = xk_fork_read(mp, ino, dip, XK_DATA_FORK, XK_FORK_CHECK, &map);
	if (err == XK_ECORRUPT) {
		*f = map.first;
		xk_fork_map_free(&map);
		return err;
	}
	if (err) {
		xk_fail_set(f, "read", "inode %llu's data fork cannot be "
			    "read: %s", (unsigned long long)ino,
			    xk_strerror(err));
		return err;
	}
	for (uint64_t i = 0; i < nblocks; i++)
		fsb[i] = 0;
	for (uint64_t i = 0; i < map.next && !err; i++) {
		const struct xk_bmbt_irec *r = &map.ext[i];

		if (r->startoff + r->blockcount > nblocks) {
			err = XK_ECORRUPT;
			xk_fail_set(f, "mapping", "inode %llu maps file block "
				    "%llu, past its %llu blocks",
				    (unsigned long long)ino,
				    (unsigned long long)(r->startoff +
							 r->blockcount - 1),
				    (unsigned long long)nblocks);
			break;
		}
		for (uint64_t b = 0; b < r->blockcount; b++)
			fsb[r->startoff + b] = r->startblock + b;
	}
	for (uint64_t i = 0; i < nblocks && !err; i++) {
		/* Block 0 of the data device is the superblock's. */
		if (fsb[i])
			continue;
		err = XK_ECORRUPT;
		xk_fail_set(f, "mapping", "inode %llu maps no block at file "
			    "block %llu of its %llu", (unsigned long long)ino,
			    (unsigned long long)i,
			    (unsigned long long)nblocks);
	}
	xk_fork_map_free(&map);
	return err;
}
