// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metadata walker (walk.h): AG headers, every per-AG btree through
 * the btree engine, the inodes the inobt calls allocated, and the blocks
 * of their forks through the fork reader, each handed to a visitor.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/fork.h>
#include <xfskit/walk.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>

struct wstate {
	struct xk_mount	*mp;
	struct xk_walk	*w;
	/* Allocated-inode records of the AG's inobt, for after its trees. */
	struct xk_inobt_rec *irecs;
	size_t		nirecs, irecs_cap;
};

static int
visit(struct wstate *st, const struct xk_walk_block *b)
{
	st->w->nvisits[b->kind]++;
	return st->w->visit ? st->w->visit(st->w->ctx, b) : 0;
}

static void
fail(struct wstate *st, const struct xk_fail *f)
{
	st->w->nproblems++;
	if (st->w->fail)
		st->w->fail(st->w->ctx, f);
}

/*
 * Read one block through ops, visit it, and report its verifier's
 * failure.  *bpp (when given) gets the buffer; returns the visitor's
 * value.
 */
static int
read_visit(struct wstate *st, struct xk_walk_block *b,
	   const struct xk_buf_ops *ops, struct xk_buf **bpp)
{
	struct xk_buf *bp = NULL;
	int err, ret;

	err = xk_buf_read_ctx(st->mp, b->daddr, b->len, ops, b->agno,
			      b->owner, XK_READ_SALVAGE, &bp);
	b->bp = bp;
	b->data = bp ? bp->data : NULL;
	b->err = bp ? 0 : err;
	ret = visit(st, b);
	if (bp && bp->error)
		fail(st, &bp->fail);
	if (bpp && !ret)
		*bpp = bp;
	else
		xk_buf_release(bp);
	return ret;
}

struct tree_ctx {
	struct wstate	*st;
	const struct xk_btree_ops *ops;
	int64_t		agno;
	uint64_t	owner;
};

static int
tree_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct tree_ctx *tc = ctx;
	struct xk_walk_block b = {
		.kind = XK_WALK_BTREE, .type = tc->ops->name,
		.daddr = bp->daddr, .len = bp->len, .agno = tc->agno,
		.owner = tc->owner, .pos = level, .bp = bp, .data = bp->data,
	};

	(void)bno;
	return visit(tc->st, &b);
}

static void
tree_fail(void *ctx, const struct xk_fail *f)
{
	struct tree_ctx *tc = ctx;

	fail(tc->st, f);
}

/* Keep an inobt record for the inode pass. */
static int
tree_inobt_rec(void *ctx, const void *rec)
{
	struct wstate *st = ((struct tree_ctx *)ctx)->st;

	if (st->nirecs == st->irecs_cap) {
		size_t ncap = st->irecs_cap ? st->irecs_cap * 2 : 64;
		struct xk_inobt_rec *nv = realloc(st->irecs,
						  ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		st->irecs = nv;
		st->irecs_cap = ncap;
	}
	memcpy(&st->irecs[st->nirecs++], rec, sizeof(*st->irecs));
	return 0;
}

/* A whole tree; XK_ECORRUPT (problems, already reported) is no stop. */
static int
walk_tree(struct wstate *st, const struct xk_btree_ops *ops, int64_t agno,
	  uint64_t owner, uint64_t root, unsigned int levels,
	  const void *iroot, unsigned int isize,
	  int (*rec_fn)(void *, const void *))
{
	struct tree_ctx tc = { st, ops, agno, owner };
	struct xk_btree_walk w = {
		.ops = ops, .agno = agno, .owner = owner, .root = root,
		.levels = levels, .iroot = iroot, .iroot_size = isize,
		.flags = XK_READ_SALVAGE, .ctx = &tc, .rec_fn = rec_fn,
		.block_fn = tree_block, .fail_fn = tree_fail,
	};
	int ret = xk_btree_walk(st->mp, &w);

	return ret == XK_ECORRUPT ? 0 : ret;
}

/*
 * The blocks one fork maps, each read through the verifier its kind
 * (and for directory and attribute blocks, its magic) names.  Blocks
 * are dirblksize long in a directory's data fork, one filesystem block
 * elsewhere; the blocks inside a multi-block remote attribute value
 * after its first are value bytes, not metadata.
 */
static int
walk_fork_blocks(struct wstate *st, uint64_t ino, const struct xk_dinode *dip,
		 int whichfork, enum xk_walk_kind kind, const char *type)
{
	struct xk_mount *mp = st->mp;
	struct xk_fork_map map = { 0 };
	uint32_t bsize = kind == XK_WALK_DIR ? mp->g.dirblksize :
			 mp->g.blocksize;
	uint32_t step = bsize >> mp->g.blocklog;
	int ret;

	/* A damaged bmbt was reported by its walk; map what it gave. */
	ret = xk_fork_read(mp, ino, dip, whichfork, XK_FORK_SALVAGE, &map);
	if (ret == XK_ECORRUPT)
		ret = 0;
	for (uint64_t i = 0; i < map.next && !ret; i++) {
		const struct xk_bmbt_irec *e = &map.ext[i];

		for (uint64_t o = 0; o + step <= e->blockcount && !ret;
		     o += step) {
			uint64_t fsb = e->startblock + o;
			uint64_t daddr = xk_fsb_to_daddr(mp, fsb);
			const struct xk_buf_ops *ops;
			struct xk_buf *raw;

			if (!xk_fsbext_valid(mp, fsb, step))
				break;
			if (xk_buf_read(mp, daddr, bsize, NULL,
					XK_READ_NOVERIFY, &raw))
				continue;
			if (kind == XK_WALK_ATTR && e->startoff + o > 0 &&
			    xk_get_be32(raw->data) != XK_ATTR3_RMT_MAGIC &&
			    xk_get_be16(raw->data + 8) != XK_ATTR3_LEAF_MAGIC &&
			    xk_get_be16(raw->data + 8) != XK_DA3_NODE_MAGIC) {
				xk_buf_release(raw);
				continue;
			}
			switch (kind) {
			case XK_WALK_DIR:
				ops = xk_dir3_buf_ops_for(raw->data, raw->len);
				break;
			case XK_WALK_ATTR:
				ops = xk_attr3_buf_ops_for(raw->data,
							   raw->len);
				break;
			case XK_WALK_DQUOT:
				ops = &xk_dquot_buf_ops;
				break;
			default:
				ops = &xk_symlink_buf_ops;
				break;
			}
			xk_buf_release(raw);
			{
				struct xk_walk_block b = {
					.kind = kind, .type = type,
					.daddr = daddr, .len = bsize,
					.agno = -1, .owner = ino,
					.pos = e->startoff + o,
				};

				ret = read_visit(st, &b, ops, NULL);
			}
		}
	}
	xk_fork_map_free(&map);
	return ret;
}

static int
is_quota_inode(const struct xk_mount *mp, uint64_t ino)
{
	const struct xk_sb *sb = &mp->sb;

	return ino == sb->uquotino || ino == sb->gquotino ||
	       ino == sb->pquotino;
}

/* One allocated inode: itself, its bmbt blocks, then its fork blocks. */
static int
walk_inode(struct wstate *st, uint64_t ino)
{
	struct xk_mount *mp = st->mp;
	struct xk_walk_block b = {
		.kind = XK_WALK_INODE, .type = "inode",
		.len = mp->g.inodesize, .agno = -1, .owner = ino,
	};
	struct xk_buf *bp = NULL;
	struct xk_dinode *dip;
	struct xk_fail f;
	uint16_t mode;
	int dfmt, afmt, err, ret;

	st->w->ninodes++;
	err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (!bp) {
		b.err = err ? err : -EIO;
		return visit(st, &b);
	}
	b.daddr = bp->daddr + (uint64_t)((uint8_t *)dip - bp->data) /
			      XK_BBSIZE;
	b.bp = bp;
	b.data = (const uint8_t *)dip;
	ret = visit(st, &b);
	if (ret)
		goto out;
	memset(&f, 0, sizeof(f));
	f.structure = "inode";
	f.daddr = bp->daddr;
	f.agno = -1;
	f.ino = ino;
	if (xk_dinode_verify(mp, ino, dip, &f)) {
		fail(st, &f);
		goto out;
	}
	mode = xk_be16_get(dip->di_mode) & XK_S_IFMT;
	dfmt = dip->di_format;
	afmt = dip->di_forkoff ? dip->di_aformat : -1;
	if (dfmt == XK_DINODE_FMT_BTREE)
		ret = walk_tree(st, &xk_bmbt_ops, -1, ino, 0,
				xk_get_be16(xk_dfork_dptr(dip)) + 1u,
				xk_dfork_dptr(dip),
				xk_dfork_dsize(dip, mp->g.inodesize), NULL);
	if (!ret && afmt == XK_DINODE_FMT_BTREE)
		ret = walk_tree(st, &xk_bmbt_ops, -1, ino, 0,
				xk_get_be16(xk_dfork_aptr(dip)) + 1u,
				xk_dfork_aptr(dip),
				xk_dfork_asize(dip, mp->g.inodesize), NULL);
	if (!ret && mode == XK_S_IFDIR && (dfmt == XK_DINODE_FMT_EXTENTS ||
					   dfmt == XK_DINODE_FMT_BTREE))
		ret = walk_fork_blocks(st, ino, dip, XK_DATA_FORK, XK_WALK_DIR,
				       "dir3");
	if (!ret && mode == XK_S_IFLNK && dfmt == XK_DINODE_FMT_EXTENTS)
		ret = walk_fork_blocks(st, ino, dip, XK_DATA_FORK,
				       XK_WALK_SYMLINK, "symlink");
	if (!ret && (afmt == XK_DINODE_FMT_EXTENTS ||
		     afmt == XK_DINODE_FMT_BTREE))
		ret = walk_fork_blocks(st, ino, dip, XK_ATTR_FORK,
				       XK_WALK_ATTR, "attr3");
	if (!ret && (st->w->flags & XK_WALK_QUOTA) &&
	    is_quota_inode(mp, ino) && mode == XK_S_IFREG &&
	    (dfmt == XK_DINODE_FMT_EXTENTS || dfmt == XK_DINODE_FMT_BTREE))
		ret = walk_fork_blocks(st, ino, dip, XK_DATA_FORK,
				       XK_WALK_DQUOT, "dqblk");
out:
	xk_buf_release(bp);
	return ret;
}

/* The inodes of the AG's inobt records, holes and free ones skipped. */
static int
walk_inodes(struct wstate *st, uint32_t agno)
{
	struct xk_mount *mp = st->mp;
	int ret = 0;

	for (size_t r = 0; r < st->nirecs && !ret; r++) {
		const struct xk_inobt_rec *rec = &st->irecs[r];
		uint64_t freemask = xk_be64_get(rec->ir_free);
		uint16_t holes = mp->g.has_sparse ?
				 xk_be16_get(rec->ir_u.sp.ir_holemask) : 0;

		for (int i = 0; i < XK_INODES_PER_CHUNK && !ret; i++) {
			if ((holes >> (i / XK_INODES_PER_HOLEMASK_BIT)) & 1 ||
			    (freemask >> i) & 1)
				continue;
			ret = walk_inode(st, xk_agino_to_ino(mp, agno,
					 xk_be32_get(rec->ir_startino) +
					 (uint32_t)i));
		}
	}
	return ret;
}

static int
walk_ag(struct wstate *st, uint32_t agno)
{
	struct xk_mount *mp = st->mp;
	uint32_t sect = mp->g.sectsize;
	static const struct {
		enum xk_walk_kind kind;
		const char	*type;
		unsigned int	sector;
		const struct xk_buf_ops *ops;
	} hdr[] = {
		{ XK_WALK_SB, "sb", XK_SB_SECTOR, &xk_sb_buf_ops },
		{ XK_WALK_AGF, "agf", XK_AGF_SECTOR, &xk_agf_buf_ops },
		{ XK_WALK_AGI, "agi", XK_AGI_SECTOR, &xk_agi_buf_ops },
		{ XK_WALK_AGFL, "agfl", XK_AGFL_SECTOR, &xk_agfl_buf_ops },
	};
	struct xk_buf *agf = NULL, *agi = NULL;
	int ret = 0;

	for (size_t i = 0; i < sizeof(hdr) / sizeof(hdr[0]) && !ret; i++) {
		struct xk_walk_block b = {
			.kind = hdr[i].kind, .type = hdr[i].type,
			.daddr = xk_ag_hdr_daddr(mp, agno, hdr[i].sector),
			.len = sect, .agno = agno,
		};

		ret = read_visit(st, &b, hdr[i].ops,
				 hdr[i].kind == XK_WALK_AGF ? &agf :
				 hdr[i].kind == XK_WALK_AGI ? &agi : NULL);
	}
	if (!ret && agf && !agf->error) {
		const struct xk_agf *h = xk_buf_agf(agf);

		ret = walk_tree(st, &xk_bnobt_ops, agno, 0,
				xk_be32_get(h->agf_roots[XK_AGF_BNO]),
				xk_be32_get(h->agf_levels[XK_AGF_BNO]),
				NULL, 0, NULL);
		if (!ret)
			ret = walk_tree(st, &xk_cntbt_ops, agno, 0,
					xk_be32_get(h->agf_roots[XK_AGF_CNT]),
					xk_be32_get(h->agf_levels[XK_AGF_CNT]),
					NULL, 0, NULL);
		if (!ret && mp->g.has_rmapbt)
			ret = walk_tree(st, &xk_rmapbt_ops, agno, 0,
					xk_be32_get(h->agf_roots[XK_AGF_RMAP]),
					xk_be32_get(h->agf_levels[XK_AGF_RMAP]),
					NULL, 0, NULL);
		if (!ret && mp->g.has_reflink)
			ret = walk_tree(st, &xk_refcountbt_ops, agno, 0,
					xk_be32_get(h->agf_refcount_root),
					xk_be32_get(h->agf_refcount_level),
					NULL, 0, NULL);
	}
	st->nirecs = 0;
	if (!ret && agi && !agi->error) {
		const struct xk_agi *h = xk_buf_agi(agi);

		ret = walk_tree(st, &xk_inobt_ops, agno, 0,
				xk_be32_get(h->agi_root),
				xk_be32_get(h->agi_level), NULL, 0,
				tree_inobt_rec);
		if (!ret && mp->g.has_finobt)
			ret = walk_tree(st, &xk_finobt_ops, agno, 0,
					xk_be32_get(h->agi_free_root),
					xk_be32_get(h->agi_free_level),
					NULL, 0, NULL);
	}
	xk_buf_release(agf);
	xk_buf_release(agi);
	if (!ret)
		ret = walk_inodes(st, agno);
	return ret;
}

int
xk_walk_metadata(struct xk_mount *mp, uint32_t first_ag, uint32_t last_ag,
		 struct xk_walk *w)
{
	struct wstate st = { .mp = mp, .w = w };
	int ret = 0;

	memset(w->nvisits, 0, sizeof(w->nvisits));
	w->ninodes = 0;
	w->nproblems = 0;
	if (last_ag >= mp->g.agcount)
		last_ag = mp->g.agcount - 1;
	for (uint64_t ag = first_ag; ag <= last_ag && !ret; ag++)
		ret = walk_ag(&st, (uint32_t)ag);
	if (!ret && (w->flags & XK_WALK_LOG_EXTENT) && mp->sb.logstart) {
		struct xk_walk_block b = {
			.kind = XK_WALK_LOG, .type = "log",
			.daddr = xk_fsb_to_daddr(mp, mp->sb.logstart),
			.len = (uint32_t)mp->sb.logblocks * mp->g.blocksize,
			.agno = xk_fsb_to_agno(mp, mp->sb.logstart),
		};

		ret = visit(&st, &b);
	}
	free(st.irecs);
	if (ret)
		return ret;
	return w->nproblems ? XK_ECORRUPT : 0;
}
