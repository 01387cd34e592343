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
