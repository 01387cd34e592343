// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * AGF: the free-space header of an AG, in the AG's second sector.  It
 * roots the bnobt, cntbt, rmapbt and refcountbt and indexes the AGFL.
 */
#include <string.h>

#include <xfskit/libfs.h>

/*
 * Rules: 1. magic; 2. version 1; 3. UUID is the filesystem's metadata
 * UUID; 4. seqno is this AG; 5. length is this AG's size; 6. free list
 * first/last/count inside the AGFL; 7. freeblks, longest and btree block
 * counts within the AG, longest not above freeblks; 8. each root inside
 * the AG (past the headers) and each level from 1 to the tree's maximum,
 * for the trees the features enable.
 */
static int
agf_verify(struct xk_buf *bp, struct xk_fail *f)
{
	const struct xk_agf *agf = (const struct xk_agf *)bp->data;
	struct xk_mount *mp = bp->mp;
	const struct xk_geom *g = &mp->g;
	uint32_t len = xk_be32_get(agf->agf_length);
	uint32_t agblocks = bp->agno >= 0 ?
		xk_ag_blocks(mp, (uint32_t)bp->agno) : g->agblocks;
	static const struct {
		int idx, bt;
		const char *root, *level;
	} trees[] = {
		{ XK_AGF_BNO, XK_BT_BNO, "bnoroot", "bnolevel" },
		{ XK_AGF_CNT, XK_BT_CNT, "cntroot", "cntlevel" },
		{ XK_AGF_RMAP, XK_BT_RMAP, "rmaproot", "rmaplevel" },
	};

	if (xk_be32_get(agf->agf_magicnum) != XK_AGF_MAGIC)
		return xk_fail_val(f, "magic", XK_AGF_MAGIC,
				   xk_be32_get(agf->agf_magicnum));
	if (xk_be32_get(agf->agf_versionnum) != XK_AGF_VERSION)
		return xk_fail_val(f, "versionnum", XK_AGF_VERSION,
				   xk_be32_get(agf->agf_versionnum));
	if (memcmp(agf->agf_uuid, mp->meta_uuid, 16))
		return xk_fail_set(f, "uuid", "does not match the superblock");
	if (bp->agno >= 0 &&
	    xk_be32_get(agf->agf_seqno) != (uint32_t)bp->agno)
		return xk_fail_val(f, "seqno", (uint64_t)bp->agno,
				   xk_be32_get(agf->agf_seqno));
	if (len != agblocks)
		return xk_fail_val(f, "length", agblocks, len);
	if (xk_be32_get(agf->agf_flfirst) >= g->agfl_size)
		return xk_fail_val(f, "flfirst", g->agfl_size - 1,
				   xk_be32_get(agf->agf_flfirst));
	if (xk_be32_get(agf->agf_fllast) >= g->agfl_size)
		return xk_fail_val(f, "fllast", g->agfl_size - 1,
				   xk_be32_get(agf->agf_fllast));
	if (xk_be32_get(agf->agf_flcount) > g->agfl_size)
		return xk_fail_val(f, "flcount", g->agfl_size,
				   xk_be32_get(agf->agf_flcount));
	if (xk_be32_get(agf->agf_freeblks) > len)
		return xk_fail_val(f, "freeblks", len,
				   xk_be32_get(agf->agf_freeblks));
	if (xk_be32_get(agf->agf_longest) > xk_be32_get(agf->agf_freeblks))
		return xk_fail_val(f, "longest",
				   xk_be32_get(agf->agf_freeblks),
				   xk_be32_get(agf->agf_longest));
	if (xk_be32_get(agf->agf_btreeblks) > len)
		return xk_fail_val(f, "btreeblks", len,
				   xk_be32_get(agf->agf_btreeblks));
	for (unsigned int i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		uint32_t root = xk_be32_get(agf->agf_roots[trees[i].idx]);
		uint32_t level = xk_be32_get(agf->agf_levels[trees[i].idx]);

		if (trees[i].bt == XK_BT_RMAP && !g->has_rmapbt)
			continue;
		if (root == 0 || root >= len)
			return xk_fail_val(f, trees[i].root, len - 1, root);
		if (level < 1 || level > g->maxlevels[trees[i].bt])
			return xk_fail_val(f, trees[i].level,
					   g->maxlevels[trees[i].bt], level);
	}
	if (g->has_rmapbt && xk_be32_get(agf->agf_rmap_blocks) > len)
		return xk_fail_val(f, "rmapblocks", len,
				   xk_be32_get(agf->agf_rmap_blocks));
	if (g->has_reflink) {
		uint32_t root = xk_be32_get(agf->agf_refcount_root);
		uint32_t level = xk_be32_get(agf->agf_refcount_level);

		if (root == 0 || root >= len)
			return xk_fail_val(f, "refcntroot", len - 1, root);
		if (level < 1 || level > g->maxlevels[XK_BT_REFC])
			return xk_fail_val(f, "refcntlevel",
					   g->maxlevels[XK_BT_REFC], level);
		if (xk_be32_get(agf->agf_refcount_blocks) > len)
			return xk_fail_val(f, "refcntblocks", len,
				xk_be32_get(agf->agf_refcount_blocks));
	}
	return 0;
}

const struct xk_buf_ops xk_agf_buf_ops = {
	.name = "AGF",
	.crc_off = offsetof(struct xk_agf, agf_crc),
	.lsn_off = offsetof(struct xk_agf, agf_lsn),
	.verify = agf_verify,
};

int
xk_agf_read(struct xk_mount *mp, uint32_t agno, unsigned int flags,
	    struct xk_buf **bpp)
{
	*bpp = NULL;
	if (agno >= mp->g.agcount)
		return -ERANGE;
	return xk_buf_read_ctx(mp, xk_ag_hdr_daddr(mp, agno, XK_AGF_SECTOR),
			       mp->g.sectsize, &xk_agf_buf_ops, agno, 0,
			       flags, bpp);
}
