// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metadata walker (walk.h): AG headers, every per-AG btree through
 * the btree engine, the inodes the inobt calls allocated (and their
 * cluster buffers, when asked), and the blocks of their forks through
 * the fork reader, each handed to a visitor.  Its visitors: xfskit-db's
 * check and blocktrash, metadump, and xfskit-repair's scan of the AG
 * headers and btrees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/fork.h>
#include <xfskit/vec.h>
#include <xfskit/walk.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>

struct wstate {
	struct xk_mount	*mp;
	struct xk_walk	*w;
	uint32_t	agno;		/* the AG being walked */
	/* The AG's inobt records, for after its trees (not depth first). */
	XK_VEC_OF(struct xk_inobt_rec) irecs;
	uint8_t		*dirbuf;	/* a directory block in pieces */
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
	struct xk_walk_tree t;
	int		chunks;		/* the inobt: its records' inodes */
};

static int
tree_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct tree_ctx *tc = ctx;
	struct xk_walk_block b = {
		.kind = XK_WALK_BTREE, .type = tc->t.ops->name,
		.daddr = bp->daddr, .len = bp->len, .agno = tc->t.agno,
		.owner = tc->t.owner, .pos = level, .ops = tc->t.ops, .bp = bp,
		.data = bp->data, .bno = bno,
	};

	return visit(tc->st, &b);
}

static void
tree_fail(void *ctx, const struct xk_fail *f)
{
	struct tree_ctx *tc = ctx;
	struct xk_walk *w = tc->st->w;

	if (!w->tree_fail) {
		fail(tc->st, f);
		return;
	}
	w->nproblems++;
	w->tree_fail(w->ctx, &tc->t, f);
}

static int walk_chunk(struct wstate *st, const struct xk_inobt_rec *rec);

/*
 * A record: the visitor's; and an inobt record's inodes, now (depth
 * first) or after the trees.
 */
static int
tree_rec(void *ctx, const void *rec)
{
	struct tree_ctx *tc = ctx;
	struct wstate *st = tc->st;
	int ret = 0;

	if (tc->chunks && (st->w->flags & XK_WALK_DEPTH_FIRST))
		ret = walk_chunk(st, rec);
	else if (tc->chunks)
		ret = xk_vec_push(&st->irecs.vec, rec, sizeof(*st->irecs.v));
	if (!ret && st->w->rec)
		ret = st->w->rec(st->w->ctx, &tc->t, rec);
	return ret;
}

/* A whole tree; XK_ECORRUPT (problems, already reported) is no stop. */
static int
walk_tree(struct wstate *st, const struct xk_btree_ops *ops, int64_t agno,
	  uint64_t owner, uint64_t root, unsigned int levels,
	  const void *iroot, unsigned int isize)
{
	struct tree_ctx tc = {
		.st = st, .t = { .ops = ops, .agno = agno, .owner = owner },
		.chunks = ops == &xk_inobt_ops &&
			  !(st->w->flags & XK_WALK_NO_INODES),
	};
	struct xk_btree_walk w = {
		.ops = ops, .agno = agno, .owner = owner, .root = root,
		.levels = levels, .iroot = iroot, .iroot_size = isize,
		.flags = XK_READ_SALVAGE, .ctx = &tc,
		.rec_fn = tc.chunks || st->w->rec ? tree_rec : NULL,
		.block_fn = tree_block, .fail_fn = tree_fail,
	};
	int ret = xk_btree_walk(st->mp, &w);

	tc.t.nblocks = w.nblocks;
	tc.t.nrecs = w.nrecs;
	tc.t.err = ret;
	if (st->w->tree_done)
		st->w->tree_done(st->w->ctx, &tc.t);
	return ret == XK_ECORRUPT ? 0 : ret;
}

/* A problem of an inode's fork the fork reader does not report. */
static void
fork_fail(struct wstate *st, uint64_t ino, uint64_t daddr, const char *check,
	  const char *fmt, uint64_t off)
{
	struct xk_fail f;

	memset(&f, 0, sizeof(f));
	f.structure = "inode fork";
	f.daddr = daddr;
	f.agno = -1;
	f.ino = ino;
	xk_fail_set(&f, check, fmt, (unsigned long long)off);
	fail(st, &f);
}

static int
ext_cmp(const void *a, const void *b)
{
	const struct xk_bmbt_irec *x = a, *y = b;

	return x->startoff < y->startoff ? -1 : x->startoff > y->startoff;
}

/*
 * A fork's mappings as far as they can be read (a damaged bmbt was
 * reported by its walk), those outside the filesystem reported and
 * left out, in file offset order.
 */
static int
read_fork(struct wstate *st, uint64_t ino, const struct xk_dinode *dip,
	  int whichfork, struct xk_fork_map *map)
{
	struct xk_mount *mp = st->mp;
	uint64_t k = 0;
	int ret;

	ret = xk_fork_read(mp, ino, dip, whichfork, XK_FORK_SALVAGE, map);
	if (ret && ret != XK_ECORRUPT)
		return ret;
	for (uint64_t i = 0; i < map->next; i++) {
		const struct xk_bmbt_irec *e = &map->ext[i];

		if (!e->blockcount ||
		    !xk_fsbext_valid(mp, e->startblock, e->blockcount)) {
			fork_fail(st, ino, XK_NO_DADDR, "extent",
				  "the mapping at file block %llu lies outside "
				  "the filesystem", e->startoff);
			continue;
		}
		map->ext[k++] = *e;
	}
	map->next = k;
	if (map->next > 1)
		qsort(map->ext, map->next, sizeof(*map->ext), ext_cmp);
	return 0;
}

/* The verifier for a block of a fork of this kind, by its magic. */
static const struct xk_buf_ops *
fork_block_ops(struct wstate *st, enum xk_walk_kind kind, uint64_t daddr,
	       uint32_t len)
{
	const struct xk_buf_ops *ops = NULL;
	struct xk_buf *raw;

	switch (kind) {
	case XK_WALK_DQUOT:
		return &xk_dquot_buf_ops;
	case XK_WALK_SYMLINK:
		return &xk_symlink_buf_ops;
	case XK_WALK_RTMETA:
		return NULL;
	default:
		break;
	}
	if (xk_buf_read(st->mp, daddr, len, NULL, XK_READ_NOVERIFY, &raw))
		return NULL;
	if (kind == XK_WALK_DIR)
		ops = xk_dir3_buf_ops_for(raw->data, raw->len);
	else
		ops = xk_attr3_buf_ops_for(raw->data, raw->len);
	xk_buf_release(raw);
	return ops;
}

/*
 * One directory block of dbf filesystem blocks at file block start:
 * read whole when contiguous, joined from its pieces when its blocks lie
 * in different extents, and verified either way.  A block with a hole
 * is damage: reported, and each mapped piece visited raw.
 */
static int
walk_dir_block(struct wstate *st, uint64_t ino,
	       const struct xk_fork_map *map, uint64_t start)
{
	struct xk_mount *mp = st->mp;
	uint32_t bs = mp->g.blocksize, dbf = mp->g.dirblksize >> mp->g.blocklog;
	uint64_t pieces[XK_WALK_MAX_DIRBLK];
	struct xk_walk_block b = {
		.kind = XK_WALK_DIR, .type = "dir3", .len = mp->g.dirblksize,
		.agno = -1, .owner = ino, .pos = start, .pieces = pieces,
		.npieces = dbf,
	};
	const struct xk_buf_ops *ops;
	int whole = 1, contig = 1, ret = 0;

	for (uint32_t k = 0; k < dbf; k++) {
		const struct xk_bmbt_irec *e = xk_fork_map_lookup(map,
								 start + k);

		if (!e) {
			whole = 0;
			pieces[k] = XK_NO_DADDR;
			continue;
		}
		pieces[k] = xk_fsb_to_daddr(mp, e->startblock +
					    (start + k - e->startoff));
		if (k && pieces[k] != pieces[0] + ((uint64_t)k << mp->g.blkbb_log))
			contig = 0;
	}
	if (!whole) {
		fork_fail(st, ino, XK_NO_DADDR, "hole", "the directory block "
			  "at file block %llu is partly unmapped", start);
		for (uint32_t k = 0; k < dbf && !ret; k++) {
			struct xk_buf *raw;
			struct xk_walk_block p = b;

			if (pieces[k] == XK_NO_DADDR)
				continue;
			p.daddr = pieces[k];
			p.len = bs;
			p.pos = start + k;
			p.pieces = &pieces[k];
			p.npieces = 1;
			p.err = xk_buf_read(mp, pieces[k], bs, NULL,
					    XK_READ_NOVERIFY, &raw);
			if (!p.err) {
				p.data = raw->data;
				p.err = XK_ECORRUPT;
			}
			ret = visit(st, &p);
			if (!p.data)
				continue;
			xk_buf_release(raw);
		}
		return ret;
	}
	b.daddr = pieces[0];
	if (contig)
		return read_visit(st, &b, fork_block_ops(st, XK_WALK_DIR,
				  b.daddr, b.len), NULL);
	/* Joined from its pieces into a buffer of the walk's own. */
	if (!st->dirbuf) {
		st->dirbuf = malloc(mp->g.dirblksize);
		if (!st->dirbuf)
			return -ENOMEM;
	}
	for (uint32_t k = 0; k < dbf; k++) {
		struct xk_buf *raw;
		int err = xk_buf_read(mp, pieces[k], bs, NULL,
				      XK_READ_NOVERIFY, &raw);

		if (err) {
			b.err = err;
			return visit(st, &b);
		}
		memcpy(st->dirbuf + (size_t)k * bs, raw->data, bs);
		xk_buf_release(raw);
	}
	ops = xk_dir3_buf_ops_for(st->dirbuf, mp->g.dirblksize);
	{
		struct xk_buf joined = {
			.mp = mp, .daddr = b.daddr, .len = b.len,
			.data = st->dirbuf, .ops = ops, .agno = -1,
			.owner = ino,
		};

		xk_buf_verify(&joined);
		b.bp = &joined;
		b.data = joined.data;
		ret = visit(st, &b);
		if (!ret && joined.error)
			fail(st, &joined.fail);
	}
	return ret;
}

/*
 * The blocks one fork maps, each read through the verifier its kind
 * (and for directory and attribute blocks, its magic) names: one
 * filesystem block each, but dirblksize blocks in a directory's data
 * fork, each visited once at its first mapped file block.
 */
static int
walk_fork_blocks(struct wstate *st, uint64_t ino, const struct xk_dinode *dip,
		 int whichfork, enum xk_walk_kind kind, const char *type)
{
	struct xk_mount *mp = st->mp;
	struct xk_fork_map map = { 0 };
	uint32_t dbf = mp->g.dirblksize >> mp->g.blocklog;
	uint64_t last = UINT64_MAX;
	int ret;

	ret = read_fork(st, ino, dip, whichfork, &map);
	for (uint64_t i = 0; i < map.next && !ret; i++) {
		const struct xk_bmbt_irec *e = &map.ext[i];

		for (uint64_t o = 0; o < e->blockcount && !ret; o++) {
			uint64_t off = e->startoff + o, start;
			struct xk_walk_block b = {
				.kind = kind, .type = type, .len = mp->g.blocksize,
				.agno = -1, .owner = ino, .pos = off,
			};

			if (kind != XK_WALK_DIR) {
				b.daddr = xk_fsb_to_daddr(mp,
							  e->startblock + o);
				ret = read_visit(st, &b, fork_block_ops(st,
						 kind, b.daddr, b.len), NULL);
				continue;
			}
			start = off - off % dbf;
			if (start == last)
				continue;
			last = start;
			ret = walk_dir_block(st, ino, &map, start);
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

/* The bmbt of a fork in btree format. */
static int
walk_fork_tree(struct wstate *st, uint64_t ino, const struct xk_dinode *dip,
	       int whichfork)
{
	if (xk_dfork_format(dip, whichfork) != XK_DINODE_FMT_BTREE)
		return 0;
	return walk_tree(st, &xk_bmbt_ops, -1, ino, 0,
			 xk_get_be16(xk_dfork_ptr(dip, whichfork)) + 1u,
			 xk_dfork_ptr(dip, whichfork),
			 xk_dfork_size(dip, st->mp->g.inodesize, whichfork));
}

/* The data fork's blocks, when they are metadata. */
static int
walk_data_blocks(struct wstate *st, uint64_t ino, const struct xk_dinode *dip)
{
	const struct xk_sb *sb = &st->mp->sb;
	uint16_t mode = xk_be16_get(dip->di_mode) & XK_S_IFMT;
	int fmt = dip->di_format;

	if (fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE)
		return 0;
	if (mode == XK_S_IFDIR)
		return walk_fork_blocks(st, ino, dip, XK_DATA_FORK,
					XK_WALK_DIR, "dir3");
	if (mode == XK_S_IFLNK && fmt == XK_DINODE_FMT_EXTENTS)
		return walk_fork_blocks(st, ino, dip, XK_DATA_FORK,
					XK_WALK_SYMLINK, "symlink");
	if (mode != XK_S_IFREG)
		return 0;
	if ((st->w->flags & XK_WALK_QUOTA) && is_quota_inode(st->mp, ino))
		return walk_fork_blocks(st, ino, dip, XK_DATA_FORK,
					XK_WALK_DQUOT, "dqblk");
	if ((st->w->flags & XK_WALK_RT) && (ino == sb->rbmino ||
					     ino == sb->rsumino))
		return walk_fork_blocks(st, ino, dip, XK_DATA_FORK,
					XK_WALK_RTMETA, ino == sb->rbmino ?
					"rtbitmap" : "rtsummary");
	return 0;
}

static int
walk_attr_blocks(struct wstate *st, uint64_t ino, const struct xk_dinode *dip)
{
	int afmt = dip->di_forkoff ? dip->di_aformat : -1;

	if (afmt != XK_DINODE_FMT_EXTENTS && afmt != XK_DINODE_FMT_BTREE)
		return 0;
	return walk_fork_blocks(st, ino, dip, XK_ATTR_FORK, XK_WALK_ATTR,
				"attr3");
}

/*
 * Whether an inode's forks can be followed: it passes its checks, or
 * only its CRC is wrong (a copy with a fresh CRC passes them, so no
 * fork walk meets impossible sizes).  A failure is reported either way.
 */
static int
inode_followable(struct wstate *st, uint64_t ino, uint64_t daddr,
		 const struct xk_dinode *dip)
{
	struct xk_mount *mp = st->mp;
	uint32_t isz = mp->g.inodesize;
	struct xk_fail f, f2;
	uint8_t *copy;
	int err;

	memset(&f, 0, sizeof(f));
	f.structure = "inode";
	f.daddr = daddr;
	f.agno = -1;
	f.ino = ino;
	err = xk_dinode_verify(mp, ino, dip, &f);
	if (!err)
		return 1;
	fail(st, &f);
	if (err != XK_EBADCRC)
		return 0;
	copy = malloc(isz);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, dip, isz);
	xk_cksum_update(copy, isz, XK_DINODE_CRC_OFF);
	f2 = f;
	err = xk_dinode_verify_copy(mp, ino, (const struct xk_dinode *)copy,
				    &f2);
	free(copy);
	return !err;
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
	int err, ret;

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
	ret = inode_followable(st, ino, bp->daddr, dip);
	if (ret <= 0)
		goto out;	/* not followable (0), or no memory */
	if (st->w->flags & XK_WALK_DEPTH_FIRST) {
		ret = walk_fork_tree(st, ino, dip, XK_DATA_FORK);
		if (!ret)
			ret = walk_data_blocks(st, ino, dip);
		if (!ret)
			ret = walk_fork_tree(st, ino, dip, XK_ATTR_FORK);
		if (!ret)
			ret = walk_attr_blocks(st, ino, dip);
	} else {
		ret = walk_fork_tree(st, ino, dip, XK_DATA_FORK);
		if (!ret)
			ret = walk_fork_tree(st, ino, dip, XK_ATTR_FORK);
		if (!ret)
			ret = walk_data_blocks(st, ino, dip);
		if (!ret)
			ret = walk_attr_blocks(st, ino, dip);
	}
out:
	xk_buf_release(bp);
	return ret;
}

/*
 * One inobt record: its clusters (with XK_WALK_CLUSTERS; those wholly in
 * sparse holes skipped), each followed by the inodes in it the record
 * calls allocated.  With more than 64 inodes per block (64 KiB blocks)
 * two records share a block: off0 is where this record's inodes start
 * in it.
 */
static int
walk_chunk(struct wstate *st, const struct xk_inobt_rec *rec)
{
	struct xk_mount *mp = st->mp;
	uint32_t agno = st->agno, ipb = mp->g.inopblock;
	uint32_t startino = xk_be32_get(rec->ir_startino);
	uint64_t freemask = xk_be64_get(rec->ir_free);
	uint16_t holes = mp->g.has_sparse ?
			 xk_be16_get(rec->ir_u.sp.ir_holemask) : 0;
	uint32_t nblk, cs, first, off0, align;
	int ret = 0;

	nblk = 64u >> mp->g.inopblog;
	if (!nblk)
		nblk = 1;
	cs = mp->g.cluster_blks < nblk ? mp->g.cluster_blks : nblk;
	if (!cs)
		cs = 1;
	first = xk_agino_to_agbno(mp, startino);
	off0 = startino % ipb;
	align = ipb < 64 ? ipb : 64;
	if (startino % align || !xk_agbext_valid(mp, agno, first, nblk)) {
		struct xk_fail f;

		memset(&f, 0, sizeof(f));
		f.structure = "inobt";
		f.daddr = XK_NO_DADDR;
		f.agno = agno;
		xk_fail_set(&f, "startino", "the inode chunk at agino %u is "
			    "misaligned or outside the AG", startino);
		fail(st, &f);
		return 0;
	}
	for (uint32_t b = 0; b < nblk && !ret; b += cs) {
		/* record indexes [lo, hi) live in this cluster */
		uint32_t lo = b * ipb >= off0 ? b * ipb - off0 : 0;
		uint32_t hi = (b + cs) * ipb - off0;
		int any = 0;

		if (hi > XK_INODES_PER_CHUNK)
			hi = XK_INODES_PER_CHUNK;
		for (uint32_t k = lo; k < hi; k++)
			if (!((holes >> (k / XK_INODES_PER_HOLEMASK_BIT)) & 1))
				any = 1;
		if (!any)
			continue;
		if (st->w->flags & XK_WALK_CLUSTERS) {
			struct xk_walk_block c = {
				.kind = XK_WALK_ICLUSTER, .type = "icluster",
				.daddr = xk_agb_to_daddr(mp, agno, first + b),
				.len = cs << mp->g.blocklog, .agno = agno,
				.pos = startino + lo,
			};

			ret = read_visit(st, &c, &xk_inode_cluster_buf_ops,
					 NULL);
		}
		for (uint32_t k = lo; k < hi && !ret; k++) {
			if ((holes >> (k / XK_INODES_PER_HOLEMASK_BIT)) & 1 ||
			    (freemask >> k) & 1)
				continue;
			ret = walk_inode(st, xk_agino_to_ino(mp, agno,
							     startino + k));
		}
	}
	return ret;
}

/* The AG headers: indexes into walk_header's table. */
enum { HDR_SB, HDR_AGF, HDR_AGI, HDR_AGFL };

/*
 * Read and visit one AG header; *bpp (when given) gets its buffer and
 * *followp whether to walk what it roots.
 */
static int
walk_header(struct wstate *st, int which, struct xk_buf **bpp, int *followp)
{
	static const struct {
		enum xk_walk_kind kind;
		const char	*type;
		unsigned int	sector;
		const struct xk_buf_ops *ops;
	} hdr[] = {
		[HDR_SB] = { XK_WALK_SB, "sb", XK_SB_SECTOR, &xk_sb_buf_ops },
		[HDR_AGF] = { XK_WALK_AGF, "agf", XK_AGF_SECTOR,
			      &xk_agf_buf_ops },
		[HDR_AGI] = { XK_WALK_AGI, "agi", XK_AGI_SECTOR,
			      &xk_agi_buf_ops },
		[HDR_AGFL] = { XK_WALK_AGFL, "agfl", XK_AGFL_SECTOR,
			       &xk_agfl_buf_ops },
	};
	struct xk_walk_block b = {
		.kind = hdr[which].kind, .type = hdr[which].type,
		.daddr = xk_ag_hdr_daddr(st->mp, st->agno, hdr[which].sector),
		.len = st->mp->g.sectsize, .agno = st->agno,
	};
	struct xk_buf *bp = NULL;
	int ret = read_visit(st, &b, hdr[which].ops, bpp ? &bp : NULL);

	if (followp && !ret)
		*followp = st->w->follow ? st->w->follow(st->w->ctx, &b) :
			   bp && !bp->error;
	if (bpp)
		*bpp = bp;
	return ret;
}

static int
walk_agf_trees(struct wstate *st, const struct xk_agf *h)
{
	struct xk_mount *mp = st->mp;
	uint32_t agno = st->agno;
	int ret;

	ret = walk_tree(st, &xk_bnobt_ops, agno, 0,
			xk_be32_get(h->agf_roots[XK_AGF_BNO]),
			xk_be32_get(h->agf_levels[XK_AGF_BNO]), NULL, 0);
	if (!ret)
		ret = walk_tree(st, &xk_cntbt_ops, agno, 0,
				xk_be32_get(h->agf_roots[XK_AGF_CNT]),
				xk_be32_get(h->agf_levels[XK_AGF_CNT]),
				NULL, 0);
	if (!ret && mp->g.has_rmapbt)
		ret = walk_tree(st, &xk_rmapbt_ops, agno, 0,
				xk_be32_get(h->agf_roots[XK_AGF_RMAP]),
				xk_be32_get(h->agf_levels[XK_AGF_RMAP]),
				NULL, 0);
	if (!ret && mp->g.has_reflink)
		ret = walk_tree(st, &xk_refcountbt_ops, agno, 0,
				xk_be32_get(h->agf_refcount_root),
				xk_be32_get(h->agf_refcount_level), NULL, 0);
	return ret;
}

static int
walk_agi_trees(struct wstate *st, const struct xk_agi *h)
{
	struct xk_mount *mp = st->mp;
	uint32_t agno = st->agno;
	int depth = (st->w->flags & XK_WALK_DEPTH_FIRST) != 0;
	int ret = 0;

	if (depth && mp->g.has_finobt)
		ret = walk_tree(st, &xk_finobt_ops, agno, 0,
				xk_be32_get(h->agi_free_root),
				xk_be32_get(h->agi_free_level), NULL, 0);
	if (!ret)
		ret = walk_tree(st, &xk_inobt_ops, agno, 0,
				xk_be32_get(h->agi_root),
				xk_be32_get(h->agi_level), NULL, 0);
	if (!ret && !depth && mp->g.has_finobt)
		ret = walk_tree(st, &xk_finobt_ops, agno, 0,
				xk_be32_get(h->agi_free_root),
				xk_be32_get(h->agi_free_level), NULL, 0);
	return ret;
}

static int
walk_ag(struct wstate *st, uint32_t agno)
{
	unsigned int flags = st->w->flags;
	struct xk_buf *agf = NULL, *agi = NULL;
	int agf_follow = 0, agi_follow = 0, agfl, ret = 0;

	st->agno = agno;
	st->irecs.n = 0;
	if (!(flags & XK_WALK_NO_SB))
		ret = walk_header(st, HDR_SB, NULL, NULL);
	if (!ret)
		ret = walk_header(st, HDR_AGF, &agf, &agf_follow);
	/* The AGFL, unless the visitor turned its AGF down. */
	agfl = !st->w->follow || agf_follow;
	agf_follow = agf_follow && agf;
	if (flags & XK_WALK_BY_HEADER) {
		if (!ret && agf_follow)
			ret = walk_agf_trees(st, xk_buf_agf(agf));
		if (!ret && agfl)
			ret = walk_header(st, HDR_AGFL, NULL, NULL);
		if (!ret)
			ret = walk_header(st, HDR_AGI, &agi, &agi_follow);
	} else {
		if (!ret)
			ret = walk_header(st, HDR_AGI, &agi, &agi_follow);
		if (!ret && agfl)
			ret = walk_header(st, HDR_AGFL, NULL, NULL);
		if (!ret && agf_follow)
			ret = walk_agf_trees(st, xk_buf_agf(agf));
	}
	if (!ret && agi_follow && agi)
		ret = walk_agi_trees(st, xk_buf_agi(agi));
	xk_buf_release(agf);
	xk_buf_release(agi);
	for (size_t r = 0; r < st->irecs.n && !ret; r++)
		ret = walk_chunk(st, &st->irecs.v[r]);
	return ret;
}

int
xk_walk_metadata(struct xk_mount *mp, uint32_t first_ag, uint32_t last_ag,
		 struct xk_walk *w)
{
	struct wstate st = { .mp = mp, .w = w, .irecs.vec.first = 64 };
	int ret = 0;

	memset(w->nvisits, 0, sizeof(w->nvisits));
	w->ninodes = 0;
	w->nproblems = 0;
	if (!(w->flags & XK_WALK_NO_INODES) &&
	    mp->g.dirblksize >> mp->g.blocklog > XK_WALK_MAX_DIRBLK)
		return -EINVAL;
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
	xk_vec_free(&st.irecs.vec);
	free(st.dirbuf);
	if (ret)
		return ret;
	return w->nproblems ? XK_ECORRUPT : 0;
}
