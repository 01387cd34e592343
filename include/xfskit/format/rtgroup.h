/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Realtime groups (a METADIR filesystem with a realtime volume, mkfs.xfs
 * 7.2 -m metadir=1 -r rtdev=): the realtime volume is cut into sb_rgcount
 * groups of sb_rgextents realtime extents (the last one may be shorter).
 * Each group has its own bitmap and summary file (/rtgroups/N.bitmap and
 * N.summary in the metadata directory tree, and with rmapbt/reflink its
 * N.rmap and N.refcount btree inodes); every bitmap and summary block
 * starts with a self-describing header (xk_rtbuf_hdr) and keeps its
 * words big-endian.  Block 0 of the realtime device holds the realtime
 * superblock (xk_drtsb), its realtime extent marked in use in group 0.
 *
 * A realtime block number in a file mapping is segmented: the group in
 * the bits above sb_rgblklog, the block within the group below.
 */
#ifndef XFSKIT_FORMAT_RTGROUP_H
#define XFSKIT_FORMAT_RTGROUP_H

#include <stdint.h>

#include <xfskit/endian.h>
#include <xfskit/format/sb.h>

#define XK_RTSB_MAGIC		0x46726f67u	/* "Frog" */
#define XK_RTBITMAP_MAGIC	0x424d505au	/* "BMPZ" */
#define XK_RTSUMMARY_MAGIC	0x53554d59u	/* "SUMY" */

/* Limits on the group geometry (the kernel's). */
#define XK_MAX_RGBLOCKS		0x7fffffffu	/* blocks in one group */
#define XK_MIN_RGEXTENTS	2u

/* The realtime superblock: the first block of the realtime device. */
struct xk_drtsb {
	xk_be32	rsb_magicnum;
	uint8_t	rsb_crc[4];		/* CRC32c of the block, little-endian */
	xk_be32	rsb_pad;		/* zero */
	char	rsb_fname[12];		/* the label, as sb_fname */
	uint8_t	rsb_uuid[16];		/* sb_uuid */
	uint8_t	rsb_meta_uuid[16];	/* the UUID metadata carries */
};

_Static_assert(sizeof(struct xk_drtsb) == 56, "xk_drtsb: on-disk size");

/* Header of every rtgroups bitmap and summary block. */
struct xk_rtbuf_hdr {
	xk_be32	rt_magic;		/* XK_RTBITMAP/RTSUMMARY_MAGIC */
	uint8_t	rt_crc[4];		/* CRC32c of the block, little-endian */
	xk_be64	rt_owner;		/* the bitmap or summary inode */
	xk_be64	rt_blkno;		/* the block's own daddr */
	xk_be64	rt_lsn;
	uint8_t	rt_uuid[16];		/* the metadata UUID */
};

_Static_assert(sizeof(struct xk_rtbuf_hdr) == 48, "xk_rtbuf_hdr: size");

/*
 * Realtime groups exist on every METADIR filesystem (rgcount 0 without
 * a realtime volume).
 */
static inline int xk_sb_has_rtgroups(const struct xk_sb *sb)
{
	return (sb->features_incompat & XK_SB_FEAT_INCOMPAT_METADIR) != 0;
}

/* Payload bytes of one bitmap or summary block. */
static inline uint32_t xk_rtg_block_payload(uint32_t blocksize)
{
	return blocksize - (uint32_t)sizeof(struct xk_rtbuf_hdr);
}

/* Bitmap blocks of each group: rgextents bits (the sb's rbmblocks). */
static inline uint32_t xk_rtg_bitmap_blocks(const struct xk_sb *sb)
{
	uint64_t bits = (uint64_t)xk_rtg_block_payload(sb->blocksize) * 8;

	return (uint32_t)((sb->rgextents + bits - 1) / bits);
}

/* Blocks of each group (the last one may hold fewer). */
static inline uint64_t xk_rtg_blocks(const struct xk_sb *sb)
{
	return (uint64_t)sb->rgextents * sb->rextsize;
}

/* Realtime extents of group rgno (the last group holds the rest). */
static inline uint64_t xk_rtg_extents(const struct xk_sb *sb, uint32_t rgno)
{
	if (rgno + 1 < sb->rgcount)
		return sb->rgextents;
	return sb->rextents - (uint64_t)rgno * sb->rgextents;
}

/* A segmented realtime block number's group, and block in the group. */
static inline uint32_t xk_rtb_to_rgno(const struct xk_sb *sb, uint64_t rtb)
{
	return (uint32_t)(rtb >> sb->rgblklog);
}

static inline uint64_t xk_rtb_to_rgbno(const struct xk_sb *sb, uint64_t rtb)
{
	return rtb & ((1ull << sb->rgblklog) - 1);
}

/*
 * A segmented block number as a linear one: blocks counted from the
 * start of the realtime device (group rgno starts at rgno groups' worth
 * of blocks), where realtime extent x is blocks x * rextsize onwards.
 */
static inline uint64_t xk_rtb_to_linear(const struct xk_sb *sb, uint64_t rtb)
{
	return (uint64_t)xk_rtb_to_rgno(sb, rtb) * xk_rtg_blocks(sb) +
	       xk_rtb_to_rgbno(sb, rtb);
}

/*
 * Whether realtime blocks [rtb, rtb + len) lie inside one group, all of
 * them in realtime extents of the volume.
 */
static inline int xk_rtb_range_valid(const struct xk_sb *sb, uint64_t rtb,
				     uint64_t len)
{
	uint32_t rgno = xk_rtb_to_rgno(sb, rtb);

	if ((rtb >> sb->rgblklog) >= sb->rgcount || !len)
		return 0;
	return xk_rtb_to_rgbno(sb, rtb) + len <=
	       xk_rtg_extents(sb, rgno) * sb->rextsize;
}

#endif /* XFSKIT_FORMAT_RTGROUP_H */
