// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writing a directory (xk_bld_dir): the layout comes from dir_fmt.c,
 * this file allocates the directory blocks of the data fork and writes
 * each through the buffer cache with its verifier ops, so the checks that
 * guard reads also guard what the builder writes.
 *
 * A short-form directory lands in the inode (ip->data becomes a local
 * fork).  Otherwise every directory block is allocated on its own, as
 * one run of filesystem blocks when the space allows (a directory block
 * larger than a filesystem block must be read as one buffer), in the
 * order data blocks, leaf space, free index; consecutive requests land
 * next to each other, so a directory is usually one extent per region.
 * A directory block that could only be had in pieces is still written
 * correctly, piece by piece, with its CRC computed here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/crc32c.h>
#include <xfskit/libfs.h>
#include <xfskit/meta.h>

#include "dir_fmt.h"

struct dir_wctx {
	struct xk_bld		*b;
	struct xk_mount		*mp;
	struct xk_bld_inode	*ip;
	const struct dir_plan	*pl;
	uint32_t		fsb_per_blk;
	uint8_t			*scratch;	/* for a block in pieces */
};

/* Where one directory block is being filled. */
struct dir_out {
	struct xk_buf		*bp;	/* NULL: in pieces, data is scratch */
	uint8_t			*data;
	uint64_t		da;	/* fork offset of its first block */
	struct dir_blkid	id;
};

static int
alloc_range(struct dir_wctx *wc, uint32_t db, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++) {
		int err = xk_bld_fork_alloc(wc->b, wc->ip, XK_DATA_FORK,
				dir_db_to_da(&wc->pl->g, db + i),
				wc->fsb_per_blk, 0);

		if (err)
			return err;
	}
	return 0;
}

static int
blk_get(struct dir_wctx *wc, uint32_t db, const struct xk_buf_ops *ops,
	struct dir_out *o)
{
	uint64_t fsb0, fsb;
	int err, contig = 1;

	memset(o, 0, sizeof(*o));
	o->da = dir_db_to_da(&wc->pl->g, db);
	err = xk_bld_fork_map(&wc->ip->data, o->da, &fsb0);
	if (err)
		return err;
	for (uint32_t k = 1; k < wc->fsb_per_blk; k++) {
		err = xk_bld_fork_map(&wc->ip->data, o->da + k, &fsb);
		if (err)
			return err;
		if (fsb != fsb0 + k)
			contig = 0;
	}
	o->id.ino = wc->ip->ino;
	o->id.uuid = wc->mp->meta_uuid;
	o->id.daddr = xk_bld_fsb_daddr(wc->b, fsb0);
	if (!contig) {
		memset(wc->scratch, 0, wc->pl->g.blksize);
		o->data = wc->scratch;
		return 0;
	}
	err = xk_buf_get(wc->mp, o->id.daddr, wc->pl->g.blksize, ops, &o->bp);
	if (err)
		return err;
	o->data = o->bp->data;
	return 0;
}

/*
 * Check the block's structure now, while the failure still belongs to
 * the directory being built, then leave it dirty for the flush (which
 * checks again and stamps the CRC).  A block in pieces is checked the
 * same way, its CRC computed here, and each piece written as a plain
 * filesystem block.
 */
static int
blk_put(struct dir_wctx *wc, struct dir_out *o, const struct xk_buf_ops *ops)
{
	uint32_t fsbsize = wc->mp->g.blocksize;
	struct xk_buf_site site;
	struct xk_fail f;
	int err;

	memset(&f, 0, sizeof(f));
	if (o->bp) {
		o->bp->owner = wc->ip->ino;
		err = ops->verify(o->bp, &f);
		if (!err)
			xk_buf_dirty(o->bp);
		xk_buf_release(o->bp);
		return err;
	}
	site.daddr = o->id.daddr;
	site.agno = -1;
	site.owner = wc->ip->ino;
	err = xk_buf_verify_mem(wc->mp, ops, o->data, wc->pl->g.blksize, &site,
				&f);
	if (err)
		return err;
	xk_cksum_update(o->data, wc->pl->g.blksize, ops->crc_off);
	for (uint32_t k = 0; k < wc->fsb_per_blk; k++) {
		struct xk_buf *bp;
		uint64_t fsb;

		err = xk_bld_fork_map(&wc->ip->data, o->da + k, &fsb);
		if (!err)
			err = xk_buf_get(wc->mp, xk_bld_fsb_daddr(wc->b, fsb),
					 fsbsize, NULL, &bp);
		if (err)
			return err;
		memcpy(bp->data, o->data + (size_t)k * fsbsize, fsbsize);
		xk_buf_dirty(bp);
		xk_buf_release(bp);
	}
	return 0;
}

/* Fill one directory block of a kind; i and lvl select leaves, nodes. */
enum blk_kind { BK_BLOCK, BK_DATA, BK_LEAF1, BK_LEAFN, BK_NODE, BK_FREE };

static int
write_blk(struct dir_wctx *wc, enum blk_kind kind, uint32_t db, uint32_t lvl,
	  uint32_t i)
{
	static const struct xk_buf_ops *const ops_of[] = {
		[BK_BLOCK] = &xk_dir3_block_buf_ops,
		[BK_DATA] = &xk_dir3_data_buf_ops,
		[BK_LEAF1] = &xk_dir3_leaf1_buf_ops,
		[BK_LEAFN] = &xk_dir3_leafn_buf_ops,
		[BK_NODE] = &xk_da3_node_buf_ops,
		[BK_FREE] = &xk_dir3_free_buf_ops,
	};
	const struct xk_buf_ops *ops = ops_of[kind];
	const struct dir_plan *pl = wc->pl;
	struct dir_out o;
	int err = blk_get(wc, db, ops, &o);

	if (err)
		return err;
	switch (kind) {
	case BK_BLOCK:
		dir_block_fill(pl, &o.id, o.data);
		break;
	case BK_DATA:
		dir_data_fill(pl, i, &o.id, o.data);
		break;
	case BK_LEAF1:
		dir_leaf1_fill(pl, &o.id, o.data);
		break;
	case BK_LEAFN:
		dir_leafn_fill(pl, i, &o.id, o.data);
		break;
	case BK_NODE:
		dir_node_fill(pl, lvl, i, &o.id, o.data);
		break;
	case BK_FREE:
		dir_free_fill(pl, i, &o.id, o.data);
		break;
	}
	return blk_put(wc, &o, ops);
}

static int
write_blocks(struct dir_wctx *wc)
{
	const struct dir_plan *pl = wc->pl;
	unsigned int dblog = pl->g.dblog;
	uint32_t leafdb = xk_dir2_leaf_firstdb(dblog);
	uint32_t freedb = xk_dir2_free_firstdb(dblog);
	int err;

	err = alloc_range(wc, 0, pl->ndata);
	if (!err)
		err = alloc_range(wc, leafdb, pl->nleafblks);
	if (!err)
		err = alloc_range(wc, freedb, pl->nfree);
	if (err)
		return err;
	if (pl->form == DIR_FORM_BLOCK)
		return write_blk(wc, BK_BLOCK, 0, 0, 0);
	for (uint32_t db = 0; db < pl->ndata; db++) {
		err = write_blk(wc, BK_DATA, db, 0, db);
		if (err)
			return err;
	}
	if (pl->form == DIR_FORM_LEAF)
		return write_blk(wc, BK_LEAF1, pl->leaves[0].db, 0, 0);
	for (uint32_t i = 0; i < pl->nleaves; i++) {
		err = write_blk(wc, BK_LEAFN, pl->leaves[i].db, 0, i);
		if (err)
			return err;
	}
	for (uint32_t l = 0; l < pl->nlevels; l++)
		for (uint32_t i = 0; i < pl->nlevel[l]; i++) {
			err = write_blk(wc, BK_NODE, pl->level[l][i].db, l, i);
			if (err)
				return err;
		}
	for (uint32_t i = 0; i < pl->nfree; i++) {
		err = write_blk(wc, BK_FREE, freedb + i, 0, i);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Bytes a short-form directory may take in the inode.  Beside an attr
 * fork the kernel never moves the fork boundary past the point where the
 * attr fork keeps room for a bmbt root of two pointers (its MINABTPTRS),
 * and a short-form directory never moves it at all: the directory
 * converts to block form instead.  So the limit is the smaller of what
 * the attr fork leaves and that bound.
 */
static uint32_t
sf_space(const struct xk_bld *b, const struct xk_bld_inode *ip)
{
	uint32_t space = xk_bld_fork_space(b, ip, XK_DATA_FORK);
	uint32_t lit = xk_bld_literal_size(b);
	uint32_t root2 = 4 + 2 * 16;	/* bmdr header, 2 keys and ptrs */

	if (ip->attr.format != XK_BLD_FMT_NONE) {
		uint32_t cap = lit > root2 ? (lit - root2) & ~7u : 0;

		if (space > cap)
			space = cap;
	}
	return space;
}

/*
 * Rules on the caller's input beyond the plan's (names, types,
 * duplicates): 1. the data fork is still empty; 2. the parent and every
 * entry's inode are possible inode numbers.
 */
int
xk_bld_dir(struct xk_bld *b, struct xk_bld_inode *ip, uint64_t parent,
	   const struct xk_bld_dirent *ents, size_t n)
{
	struct xk_mount *mp = xk_bld_mount(b);
	struct dir_geo g = {
		.blksize = mp->g.dirblksize,
		.dblog = mp->g.blocklog + mp->g.dirblklog,
		.fsblog = mp->g.blocklog,
		.has_ftype = mp->g.has_ftype,
	};
	struct dir_plan pl;
	int err;

	if (ip->data.format != XK_BLD_FMT_NONE)
		return -EEXIST;		/* one call per inode */
	if (!xk_ino_valid(mp, parent))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!xk_ino_valid(mp, ents[i].ino))
			return -EINVAL;
	err = dir_plan_make(&pl, &g, ip->ino, parent, ents, n,
			    sf_space(b, ip));
	if (err)
		goto out;
	if (pl.form == DIR_FORM_SF) {
		uint8_t *buf = calloc(1, pl.sf_size);

		if (!buf) {
			err = -ENOMEM;
			goto out;
		}
		dir_sf_fill(&pl, buf);
		err = xk_bld_fork_local(&ip->data, buf, pl.sf_size);
		free(buf);
	} else {
		struct dir_wctx wc = {
			.b = b, .mp = mp, .ip = ip, .pl = &pl,
			.fsb_per_blk = 1u << mp->g.dirblklog,
		};

		wc.scratch = malloc(g.blksize);
		if (!wc.scratch) {
			err = -ENOMEM;
			goto out;
		}
		err = write_blocks(&wc);
		free(wc.scratch);
	}
	if (!err)
		ip->size = pl.size;
out:
	dir_plan_free(&pl);
	return err;
}
