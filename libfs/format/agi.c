// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * AGI: the inode header of an AG, in the AG's third sector.  It roots
 * the inobt and finobt and heads the 64 unlinked-inode buckets.
 */
#include <string.h>

#include <xfskit/libfs.h>

static int
agino_ok(const struct xk_mount *mp, uint32_t agblocks, uint32_t agino)
{
	return agino == XK_NULLAGINO ||
	       (xk_agino_to_agbno(mp, agino) < agblocks &&
		agino < (1u << mp->g.agino_log));
}

/*
 * Rules: 1. magic; 2. version 1; 3. metadata UUID; 4. seqno; 5. length;
 * 6. inobt root inside the AG with a level from 1 to the maximum (and
 * the finobt's likewise when enabled); 7. freecount not above count;
 * 8. newino, dirino and every unlinked bucket either null or an inode
 * number inside the AG; 9. with inobtcount, the block counts inside the
 * AG.
 */
static int
agi_verify(struct xk_buf *bp, struct xk_fail *f)
{
	const struct xk_agi *agi = (const struct xk_agi *)bp->data;
	struct xk_mount *mp = bp->mp;
	const struct xk_geom *g = &mp->g;
	uint32_t len = xk_be32_get(agi->agi_length);
	uint32_t agblocks = bp->agno >= 0 ?
		xk_ag_blocks(mp, (uint32_t)bp->agno) : g->agblocks;
	uint32_t v;

	if (xk_be32_get(agi->agi_magicnum) != XK_AGI_MAGIC)
		return xk_fail_val(f, "magic", XK_AGI_MAGIC,
				   xk_be32_get(agi->agi_magicnum));
	if (xk_be32_get(agi->agi_versionnum) != XK_AGI_VERSION)
		return xk_fail_val(f, "versionnum", XK_AGI_VERSION,
				   xk_be32_get(agi->agi_versionnum));
	if (memcmp(agi->agi_uuid, mp->meta_uuid, 16))
		return xk_fail_set(f, "uuid", "does not match the superblock");
	if (bp->agno >= 0 &&
	    xk_be32_get(agi->agi_seqno) != (uint32_t)bp->agno)
		return xk_fail_val(f, "seqno", (uint64_t)bp->agno,
				   xk_be32_get(agi->agi_seqno));
	if (len != agblocks)
		return xk_fail_val(f, "length", agblocks, len);
	v = xk_be32_get(agi->agi_root);
	if (v == 0 || v >= len)
		return xk_fail_val(f, "root", len - 1, v);
	v = xk_be32_get(agi->agi_level);
	if (v < 1 || v > g->maxlevels[XK_BT_INO])
		return xk_fail_val(f, "level", g->maxlevels[XK_BT_INO], v);
	if (g->has_finobt) {
		v = xk_be32_get(agi->agi_free_root);
		if (v == 0 || v >= len)
			return xk_fail_val(f, "free_root", len - 1, v);
		v = xk_be32_get(agi->agi_free_level);
		if (v < 1 || v > g->maxlevels[XK_BT_FINO])
			return xk_fail_val(f, "free_level",
					   g->maxlevels[XK_BT_FINO], v);
	}
	if (xk_be32_get(agi->agi_freecount) > xk_be32_get(agi->agi_count))
		return xk_fail_val(f, "freecount",
				   xk_be32_get(agi->agi_count),
				   xk_be32_get(agi->agi_freecount));
	if (!agino_ok(mp, len, xk_be32_get(agi->agi_newino)))
		return xk_fail_val(f, "newino", XK_NULLAGINO,
				   xk_be32_get(agi->agi_newino));
	if (!agino_ok(mp, len, xk_be32_get(agi->agi_dirino)))
		return xk_fail_val(f, "dirino", XK_NULLAGINO,
				   xk_be32_get(agi->agi_dirino));
	for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++) {
		v = xk_be32_get(agi->agi_unlinked[i]);
		if (!agino_ok(mp, len, v) || v == 0)
			return xk_fail_set(f, "unlinked",
					   "bucket %d holds invalid inode %u",
					   i, v);
	}
	if (g->has_inobtcnt) {
		if (xk_be32_get(agi->agi_iblocks) > len)
			return xk_fail_val(f, "iblocks", len,
					   xk_be32_get(agi->agi_iblocks));
		if (xk_be32_get(agi->agi_fblocks) > len)
			return xk_fail_val(f, "fblocks", len,
					   xk_be32_get(agi->agi_fblocks));
	}
	return 0;
}

const struct xk_buf_ops xk_agi_buf_ops = {
	.name = "AGI",
	.crc_off = offsetof(struct xk_agi, agi_crc),
	.lsn_off = offsetof(struct xk_agi, agi_lsn),
	.verify = agi_verify,
};

int
xk_agi_read(struct xk_mount *mp, uint32_t agno, unsigned int flags,
	    struct xk_buf **bpp)
{
	*bpp = NULL;
	if (agno >= mp->g.agcount)
		return -ERANGE;
	return xk_buf_read_ctx(mp, xk_ag_hdr_daddr(mp, agno, XK_AGI_SECTOR),
			       mp->g.sectsize, &xk_agi_buf_ops, agno, 0,
			       flags, bpp);
}
