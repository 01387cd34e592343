/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The classic realtime volume's free space (no rtgroups): a bitmap file
 * with one bit per realtime extent (1 = free; bit i of 32-bit word w is
 * extent w * 32 + i, from the least significant bit), and a summary file
 * counting the maximal free runs by log2 of their length and by the
 * bitmap block they start in (counter log * rbmblocks + bitmap block).
 * Both live on the data device, in the inodes sb_rbmino and sb_rsumino;
 * the realtime device holds only file data.
 *
 * Without rtgroups the kernel keeps both files' words in host byte order
 * (xfs_rtword_t and xfs_suminfo_t are plain integers): the words are
 * read and written here as the host's, as the kernel does.
 */
#ifndef XFSKIT_RTBITMAP_H
#define XFSKIT_RTBITMAP_H

#include <stdint.h>
#include <string.h>

#include <xfskit/buf.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/sb.h>
#include <xfskit/mount.h>

/* Realtime extents of a volume of rblocks blocks. */
static inline uint64_t xk_rt_extents(uint64_t rblocks, uint32_t rextsize)
{
	return rextsize ? rblocks / rextsize : 0;
}

/* Bitmap blocks for rextents extents (blocksize * 8 bits each). */
static inline uint32_t xk_rt_bitmap_blocks(uint64_t rextents,
					   uint32_t blocksize)
{
	uint64_t bits = (uint64_t)blocksize * 8;

	return (uint32_t)((rextents + bits - 1) / bits);
}

/* sb_rextslog: log2 of rextents rounded down, 0 for none. */
uint8_t xk_rt_extslog(uint64_t rextents);

/* Summary levels (one per log2 length, 0..rextslog). */
static inline uint32_t xk_rt_sum_levels(const struct xk_sb *sb)
{
	return (uint32_t)sb->rextslog + 1;
}

/* Bytes of summary counters, and the summary file's blocks. */
static inline uint64_t xk_rt_sum_bytes(const struct xk_sb *sb)
{
	return (uint64_t)xk_rt_sum_levels(sb) * sb->rbmblocks * 4;
}

static inline uint32_t xk_rt_sum_blocks(const struct xk_sb *sb)
{
	return (uint32_t)((xk_rt_sum_bytes(sb) + sb->blocksize - 1) /
			  sb->blocksize);
}

/* Word i of a bitmap or summary held in memory (host byte order). */
static inline uint32_t xk_rtword_get(const uint8_t *base, uint64_t i)
{
	uint32_t w;

	memcpy(&w, base + i * 4, 4);
	return w;
}

static inline void xk_rtword_set(uint8_t *base, uint64_t i, uint32_t w)
{
	memcpy(base + i * 4, &w, 4);
}

/*
 * A bitmap of bytes (a whole number of blocks) for rextents extents, all
 * free: bits past the last extent are 0, as mkfs leaves them.
 */
void xk_rtbitmap_init_free(uint8_t *bm, uint64_t bytes, uint64_t rextents);

/* Mark extents [rtx, rtx + len) in use (their bits 0). */
void xk_rtbitmap_mark_used(uint8_t *bm, uint64_t rtx, uint64_t len);

/*
 * Mark in use every extent (sb's rextsize) holding a block of realtime
 * blocks [rtbno, rtbno + len); extents past rextents are left out.
 */
void xk_rtbitmap_mark_blocks(const struct xk_sb *sb, uint8_t *bm,
			     uint64_t rtbno, uint64_t len);

/*
 * Compute the summary of bitmap bm (sb's geometry) into sum, which holds
 * xk_rt_sum_blocks(sb) blocks (zeroed here first).  *nfree gets the free
 * extents.  A free run longer than the levels allow (a bitmap with bits
 * set past rextents) is counted at the top level.
 */
void xk_rtsummary_compute(const struct xk_sb *sb, const uint8_t *bm,
			  uint8_t *sum, uint64_t *nfree);

/*
 * One bitmap and its summary: the classic volume's, or one realtime
 * group's (include/xfskit/format/rtgroup.h).  In memory both are held
 * as their blocks' words only (a group's block headers left out), in
 * host byte order.
 */
struct xk_rtbm_geo {
	uint64_t	extents;	/* realtime extents it covers */
	uint32_t	block_bytes;	/* bytes of words per block */
	uint32_t	blocks;		/* bitmap blocks (sb_rbmblocks) */
	uint32_t	sum_blocks;	/* summary blocks */
	uint32_t	maxlog;		/* the summary's top level */
};

/* The classic volume's geometry, or group rgno's. */
void xk_rtbm_geo_classic(const struct xk_sb *sb, struct xk_rtbm_geo *geo);
void xk_rtbm_geo_group(const struct xk_sb *sb, uint32_t rgno,
		       struct xk_rtbm_geo *geo);

/*
 * Call fn(ctx, start, len) for every maximal run of free extents (set
 * bits) among the first nbits bits of bm, in order.
 */
typedef void (*xk_rtrun_fn)(void *ctx, uint64_t start, uint64_t len);
void xk_rtbitmap_runs(const uint8_t *bm, uint64_t nbits, xk_rtrun_fn fn,
		      void *ctx);

/* xk_rtsummary_compute for any geometry. */
void xk_rtsummary_compute_geo(const struct xk_rtbm_geo *geo,
			      const uint8_t *bm, uint8_t *sum,
			      uint64_t *nfree);

/*
 * The data-device block of each of the first nblocks blocks of a
 * realtime metadata file (inode ino, raw inode dip), into fsb[]: 0 when
 * the fork, in extents or btree format, maps all of them inside the data
 * device and nothing else; XK_ECORRUPT with *f naming the problem
 * otherwise (a hole, a block beyond nblocks, a local or damaged fork);
 * -ENOMEM or a read's error.
 */
XK_MUST_CHECK int xk_rt_file_map(struct xk_mount *mp, uint64_t ino,
				 const struct xk_dinode *dip,
				 uint64_t nblocks, uint64_t *fsb,
				 struct xk_fail *f);

#endif /* XFSKIT_RTBITMAP_H */
