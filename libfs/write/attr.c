// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writing an inode's extended attributes (xk_bld_attrs): the layout
 * comes from attr_fmt.c, this file allocates the attr fork's blocks and
 * writes each through the buffer cache with its verifier ops, so the
 * same checks that guard reads guard what the builder writes.  Blocks
 * are written as soon as they are filled (nothing later changes them),
 * which keeps memory bounded however many values a tree holds.
 *
 * Short form lands in the inode (ip->attr becomes a local fork; the
 * inode writer picks di_forkoff from both forks).  Leaf and node forms
 * allocate every block of the fork in one request, so a fork is one
 * extent whenever the AG has the room: blocks 0.. hold the leaf or the
 * dabtree, then the remote values.
 */
#include <errno.h>
#include <stdlib.h>

#include <xfskit/crc32c.h>
#include <xfskit/libfs.h>
#include <xfskit/meta.h>
#include <xfskit/format/sb.h>

#include "attr_fmt.h"

struct attr_wctx {
	struct xk_bld		*b;
	struct xk_mount		*mp;
	struct xk_bld_inode	*ip;
	const struct attr_plan	*pl;
	int			keep;	/* leave blocks dirty in the cache */
};

/* A zeroed buffer for attr-fork block lblk, and the identity to stamp. */
static int
blk_get(struct attr_wctx *wc, uint32_t lblk, const struct xk_buf_ops *ops,
	struct attr_blkid *id, struct xk_buf **bpp)
{
	uint64_t fsbno;
	int err = xk_bld_fork_map(&wc->ip->attr, lblk, &fsbno);

	if (err)
		return err;
	id->ino = wc->ip->ino;
	id->uuid = wc->mp->meta_uuid;
	id->daddr = xk_bld_fsb_daddr(wc->b, fsbno);
	return xk_buf_get(wc->mp, id->daddr, wc->pl->blocksize, ops, bpp);
}

/*
 * Write the block now, through its verifier (structure, then CRC): a
 * bad block fails the call that built it, and a clean buffer can be
 * reclaimed, so a tree of large values never piles up dirty in the cache.
 */
static int
blk_put(struct attr_wctx *wc, struct xk_buf *bp)
{
	int err;

	bp->owner = wc->ip->ino;
	if (wc->keep) {
		/*
		 * Finishing log intents writes nothing before the end (and
		 * a dry run never does): the block stays dirty, its CRC
		 * true for readers of this session; the flush verifies it.
		 */
		if (bp->ops && bp->ops->crc_off != XK_NO_CRC)
			xk_cksum_update(bp->data, bp->len, bp->ops->crc_off);
		xk_buf_dirty(bp);
		xk_buf_release(bp);
		return 0;
	}
	err = xk_buf_write(bp);
	xk_buf_release(bp);
	return err;
}

static int
write_blocks(struct attr_wctx *wc)
{
	const struct attr_plan *pl = wc->pl;
	struct attr_blkid id;
	struct xk_buf *bp;
	int err;

	for (uint32_t l = 0; l < pl->nlevels; l++)
		for (uint32_t i = 0; i < pl->nlevel[l]; i++) {
			err = blk_get(wc, pl->level[l][i].lblk,
				      &xk_da3_node_buf_ops, &id, &bp);
			if (err)
				return err;
			attr_node_fill(pl, l, i, &id, bp->data);
			err = blk_put(wc, bp);
			if (err)
				return err;
		}
	for (uint32_t i = 0; i < pl->nleaves; i++) {
		err = blk_get(wc, pl->leaves[i].lblk, &xk_attr3_leaf_buf_ops,
			      &id, &bp);
		if (err)
			return err;
		attr_leaf_fill(pl, i, &id, bp->data);
		err = blk_put(wc, bp);
		if (err)
			return err;
	}
	for (size_t i = 0; i < pl->n; i++) {
		const struct attr_item *it = &pl->items[i];

		for (uint32_t k = 0; k < it->rmtblks; k++) {
			err = blk_get(wc, it->valueblk + k,
				      &xk_attr3_rmt_buf_ops, &id, &bp);
			if (err)
				return err;
			attr_rmt_fill(pl, it, k, &id, bp->data);
			err = blk_put(wc, bp);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * The kernel marks the superblock (versionnum ATTRBIT) when the first
 * attribute is added to a filesystem; v5 mkfs leaves it clear.  Do the
 * same on the primary superblock, once.
 */
static int
mark_sb_attr(struct xk_mount *mp)
{
	struct xk_buf *bp;
	struct xk_sb sb;
	int err;

	if (mp->sb.versionnum & XK_SB_VERSION_ATTRBIT)
		return 0;
	err = xk_sb_read(mp, 0, 0, &bp);
	if (err)
		return err;
	xk_sb_decode(&sb, (const struct xk_dsb *)bp->data);
	sb.versionnum |= XK_SB_VERSION_ATTRBIT;
	xk_sb_encode((struct xk_dsb *)bp->data, &sb);
	/* Keep the cached copy's CRC true: commit reads it back. */
	if (bp->ops && bp->ops->crc_off != XK_NO_CRC)
		xk_cksum_update(bp->data, bp->len, bp->ops->crc_off);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	mp->sb.versionnum |= XK_SB_VERSION_ATTRBIT;
	return 0;
}

int
xk_bld_attrs(struct xk_bld *b, struct xk_bld_inode *ip,
	     const struct xk_bld_xattr *xa, size_t n)
{
	if (ip->attr.format)
		return -EEXIST;		/* one call per inode */
	return bld_attrs_space(b, ip, xa, n,
			       xk_bld_fork_space(b, ip, XK_ATTR_FORK), 0);
}

int
bld_attrs_space(struct xk_bld *b, struct xk_bld_inode *ip,
		const struct xk_bld_xattr *xa, size_t n, uint32_t sf_space,
		int keep)
{
	struct xk_mount *mp = xk_bld_mount(b);
	struct attr_plan pl;
	int err;

	err = attr_plan_make(&pl, mp->g.blocksize, sf_space, xa, n);
	if (err)
		return err;
	switch (pl.form) {
	case ATTR_FORM_NONE:
		break;
	case ATTR_FORM_SF: {
		uint8_t *buf = malloc(pl.sf_size);

		if (!buf) {
			err = -ENOMEM;
			break;
		}
		attr_sf_fill(xa, n, buf);
		err = xk_bld_fork_local(&ip->attr, buf, pl.sf_size);
		free(buf);
		break;
	}
	case ATTR_FORM_LEAF:
	case ATTR_FORM_NODE: {
		struct attr_wctx wc = { .b = b, .mp = mp, .ip = ip, .pl = &pl,
					.keep = keep };

		err = xk_bld_fork_alloc(b, ip, XK_ATTR_FORK, 0, pl.nblocks, 0);
		if (!err)
			err = write_blocks(&wc);
		break;
	}
	}
	if (!err && pl.form != ATTR_FORM_NONE)
		err = mark_sb_attr(mp);
	attr_plan_free(&pl);
	return err;
}
