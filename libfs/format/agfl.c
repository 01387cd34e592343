// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * AGFL: the AG free list, in the AG's fourth sector: a header and a ring
 * of AG block numbers that btree splits draw from.  The AGF says which
 * slots (flfirst..fllast, flcount of them) are live.
 */
#include <string.h>

#include <xfskit/libfs.h>

/*
 * Rules: 1. magic; 2. metadata UUID; 3. seqno is this AG; 4. every slot
 * is either null or a block inside the AG.
 */
static int
agfl_verify(struct xk_buf *bp, struct xk_fail *f)
{
	const struct xk_agfl *agfl = (const struct xk_agfl *)bp->data;
	struct xk_mount *mp = bp->mp;
	uint32_t agblocks = bp->agno >= 0 ?
		xk_ag_blocks(mp, (uint32_t)bp->agno) : mp->g.agblocks;

	if (xk_be32_get(agfl->agfl_magicnum) != XK_AGFL_MAGIC)
		return xk_fail_val(f, "magic", XK_AGFL_MAGIC,
				   xk_be32_get(agfl->agfl_magicnum));
	if (memcmp(agfl->agfl_uuid, mp->meta_uuid, 16))
		return xk_fail_set(f, "uuid", "does not match the superblock");
	if (bp->agno >= 0 &&
	    xk_be32_get(agfl->agfl_seqno) != (uint32_t)bp->agno)
		return xk_fail_val(f, "seqno", (uint64_t)bp->agno,
				   xk_be32_get(agfl->agfl_seqno));
	for (uint32_t i = 0; i < mp->g.agfl_size; i++) {
		uint32_t b = xk_be32_get(*xk_agfl_bno(bp->data, i));

		if (b != XK_NULLAGBLOCK && b >= agblocks)
			return xk_fail_set(f, "bno", "slot %u holds block %u "
					   "beyond the AG's %u blocks", i, b,
					   agblocks);
	}
	return 0;
}

const struct xk_buf_ops xk_agfl_buf_ops = {
	.name = "AGFL",
	.crc_off = offsetof(struct xk_agfl, agfl_crc),
	.lsn_off = offsetof(struct xk_agfl, agfl_lsn),
	.verify = agfl_verify,
};

int
xk_agfl_read(struct xk_mount *mp, uint32_t agno, unsigned int flags,
	     struct xk_buf **bpp)
{
	*bpp = NULL;
	if (agno >= mp->g.agcount)
		return -ERANGE;
	return xk_buf_read_ctx(mp, xk_ag_hdr_daddr(mp, agno, XK_AGFL_SECTOR),
			       mp->g.sectsize, &xk_agfl_buf_ops, agno, 0,
			       flags, bpp);
}
