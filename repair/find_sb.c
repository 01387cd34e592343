// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * When the primary superblock is unusable, find a good secondary as
 * xfs_repair does: look where the primary's own geometry puts AG 1, then
 * scan the device sector by sector for a superblock that passes its
 * checks and sits exactly where its own geometry says AG n starts.
 */
#include <stdlib.h>
#include <string.h>

#include "repair.h"

#include <xfskit/format/dir.h>

/* A candidate at byte offset off is believable if it places itself. */
static int
candidate_ok(struct xk_dev *dev, const uint8_t *sector, uint64_t off,
	     struct xk_sb *out)
{
	struct xk_sb sb;
	struct xk_fail f;
	uint64_t agbytes;

	if (xk_get_be32(sector) != XK_SB_MAGIC)
		return 0;
	xk_sb_decode(&sb, (const struct xk_dsb *)sector);
	memset(&f, 0, sizeof(f));
	if (xk_sb_check(&sb, dev->size, &f))
		return 0;
	if (!xk_cksum_ok(sector, sb.sectsize, offsetof(struct xk_dsb, sb_crc)))
		return 0;
	agbytes = (uint64_t)sb.agblocks * sb.blocksize;
	if (off == 0 || off % agbytes || off / agbytes >= sb.agcount)
		return 0;
	*out = sb;
	return 1;
}

/*
 * Returns 0 and fills *sb and *agno with the first good secondary, or
 * -ENOENT.  The scan reads in 1 MiB chunks and stops at limit bytes.
 */
int
find_secondary_sb(struct xk_dev *dev, const struct xk_sb *hint,
		  uint64_t limit, struct xk_sb *sb, uint32_t *agno)
{
	enum { CHUNK = 1 << 20 };
	uint8_t *buf;
	uint8_t sector[32768];

	/* The damaged primary's geometry may still be right. */
	if (hint && hint->agblocks && hint->blocksize &&
	    hint->blocksize <= 65536) {
		uint64_t off = (uint64_t)hint->agblocks * hint->blocksize;

		if (off < dev->size &&
		    !xk_dev_pread(dev, sector, 512, off) &&
		    xk_get_be32(sector) == XK_SB_MAGIC) {
			uint16_t ss = xk_get_be16(sector + 102);

			if (ss >= 512 && ss <= sizeof(sector) &&
			    !xk_dev_pread(dev, sector, ss, off) &&
			    candidate_ok(dev, sector, off, sb)) {
				*agno = (uint32_t)(off / ((uint64_t)sb->agblocks *
							 sb->blocksize));
				return 0;
			}
		}
	}
	buf = malloc(CHUNK);
	if (!buf)
		return -ENOMEM;
	for (uint64_t base = XK_BBSIZE; base < dev->size && base < limit;
	     base += CHUNK) {
		size_t len = CHUNK;

		if (base + len > dev->size)
			len = (size_t)(dev->size - base) & ~(size_t)511;
		if (!len || xk_dev_pread(dev, buf, len, base))
			break;
		for (size_t o = 0; o < len; o += XK_BBSIZE) {
			uint16_t ss;

			if (xk_get_be32(buf + o) != XK_SB_MAGIC)
				continue;
			ss = xk_get_be16(buf + o + 102);
			if (ss < 512 || ss > sizeof(sector) ||
			    xk_dev_pread(dev, sector, ss, base + o))
				continue;
			if (candidate_ok(dev, sector, base + o, sb)) {
				*agno = (uint32_t)((base + o) /
					((uint64_t)sb->agblocks *
					 sb->blocksize));
				free(buf);
				return 0;
			}
		}
	}
	free(buf);
	return -ENOENT;
}

/*
 * A secondary superblock as mkfs left it lacks what only the primary
 * keeps: it is still marked in progress, and carries null root,
 * realtime and quota inode numbers.  Before the secondary's copy is used
 * (and written as the new primary) those are restored: the flag
 * cleared, and the root found where mkfs puts it, the first inode chunk
 * of AG 0, as the first inode of a block that is a directory naming
 * itself as its parent; the realtime inodes follow it.
 */
void
secondary_sb_fixup(struct xk_mount *mp)
{
	struct xk_sb *sb = &mp->sb;
	uint32_t limit = xk_ag_blocks(mp, 0);

	sb->inprogress = 0;
	/* Metadir: quota and realtime inodes are in the metadata tree. */
	if (xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_METADIR))
		return;
	if (!sb->uquotino)
		sb->uquotino = XK_NULLFSINO;
	if (!sb->gquotino)
		sb->gquotino = XK_NULLFSINO;
	if (!sb->pquotino)
		sb->pquotino = XK_NULLFSINO;
	if (sb->rootino != XK_NULLFSINO && sb->rootino) {
		if (sb->rbmino == XK_NULLFSINO || !sb->rbmino)
			sb->rbmino = sb->rootino + 1;
		if (sb->rsumino == XK_NULLFSINO || !sb->rsumino)
			sb->rsumino = sb->rootino + 2;
		return;
	}
	if (limit > 65536)
		limit = 65536;
	for (uint32_t agbno = 1; agbno < limit; agbno++) {
		uint64_t ino = xk_agino_to_ino(mp, 0, agbno << mp->g.inopblog);
		struct xk_buf *bp;
		struct xk_dinode *dip;
		const struct xk_dir2_sf_hdr *h;

		if (xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip) &&
		    !bp)
			continue;
		h = (const void *)xk_dfork_dptr(dip);
		if (xk_be16_get(dip->di_magic) == XK_DINODE_MAGIC &&
		    xk_be64_get(dip->di_ino) == ino &&
		    (xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFDIR &&
		    dip->di_format == XK_DINODE_FMT_LOCAL &&
		    xk_dir2_sf_get_parent(h) == ino) {
			sb->rootino = ino;
			if (sb->rbmino == XK_NULLFSINO || !sb->rbmino)
				sb->rbmino = ino + 1;
			if (sb->rsumino == XK_NULLFSINO || !sb->rsumino)
				sb->rsumino = ino + 2;
			xk_buf_release(bp);
			return;
		}
		xk_buf_release(bp);
	}
}
