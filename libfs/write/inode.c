// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inodes in the builder: allocation from inode chunks (new chunks
 * written as free inodes), forks, and laying a finished inode into its
 * cluster buffer.  An extent list too long for its fork becomes a bmbt,
 * bulk loaded; its root goes into the inode when it fits there (the
 * kernel's shape), else the inode root points at a one-block root.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/btree_bulk.h>
#include <xfskit/init.h>

#include "write_priv.h"

/* Smallest bmbt root an inode fork can hold: the kernel's minimum. */
#define BLD_MIN_BMDR_PTRS	3

static uint32_t
bmdr_space(uint32_t nptrs)
{
	return 4 + nptrs * 16;
}

static uint32_t
round8(uint32_t v)
{
	return (v + 7) & ~7u;
}

uint32_t
xk_bld_literal_size(const struct xk_bld *b)
{
	return xk_dinode_litino(b->mp->g.inodesize);
}

/* Bytes a fork needs as it stands (0 for an absent or empty fork). */
static uint32_t
fork_need(const struct xk_bld_fork *fk)
{
	switch (fk->format) {
	case XK_BLD_FMT_DEV:
		return 4;
	case XK_DINODE_FMT_LOCAL:
		return fk->local_len;
	case XK_DINODE_FMT_EXTENTS:
		return (uint32_t)(fk->next * sizeof(struct xk_bmbt_rec));
	default:
		return 0;
	}
}

uint32_t
xk_bld_fork_space(const struct xk_bld *b, const struct xk_bld_inode *ip,
		  int whichfork)
{
	uint32_t lit = xk_bld_literal_size(b);
	uint32_t other;

	if (whichfork == XK_DATA_FORK) {
		uint32_t cap = (lit - bmdr_space(2)) / 8 * 8;

		if (!ip->attr.format)
			return lit;
		/* The inode writer never leaves the attr fork less room. */
		other = round8(fork_need(&ip->attr));
		if (other < round8(bmdr_space(2)))
			other = round8(bmdr_space(2));
		if (other >= lit)
			return 0;
		return lit - other < cap ? lit - other : cap;
	}
	/* The attr fork leaves the data fork what it has or a bmbt root. */
	if (ip->data.format == XK_BLD_FMT_DEV)
		other = 8;
	else {
		other = round8(fork_need(&ip->data));
		if (other < round8(bmdr_space(BLD_MIN_BMDR_PTRS)))
			other = round8(bmdr_space(BLD_MIN_BMDR_PTRS));
	}
	return other >= lit ? 0 : lit - other;
}

int
xk_bld_fork_local(struct xk_bld_fork *fk, const void *bytes, uint32_t len)
{
	uint8_t *p = NULL;

	if (len) {
		p = malloc(len);
		if (!p)
			return -ENOMEM;
		memcpy(p, bytes, len);
	}
	free(fk->local);
	fk->local = p;
	fk->local_len = len;
	fk->format = XK_DINODE_FMT_LOCAL;
	return 0;
}

static int
fork_append(struct xk_bld_fork *fk, uint64_t loff, uint64_t fsbno,
	    uint32_t len)
{
	struct xk_bld_ext *e;

	if (fk->next) {
		e = &fk->ext[fk->next - 1];
		if (e->loff + e->len == loff && e->fsbno + e->len == fsbno &&
		    (uint64_t)e->len + len <= XK_MAX_BMBT_EXTLEN) {
			e->len += len;
			fk->nblocks += len;
			return 0;
		}
		if (loff < e->loff + e->len)
			return -EINVAL;
	}
	if (fk->next == fk->ext_alloc) {
		uint64_t n = fk->ext_alloc ? fk->ext_alloc * 2 : 4;
		struct xk_bld_ext *p = realloc(fk->ext, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		fk->ext = p;
		fk->ext_alloc = n;
	}
	e = &fk->ext[fk->next++];
	e->loff = loff;
	e->fsbno = fsbno;
	e->len = len;
	fk->nblocks += len;
	return 0;
}

int
xk_bld_fork_alloc(struct xk_bld *b, struct xk_bld_inode *ip, int whichfork,
		  uint64_t loff, uint64_t count, uint32_t align)
{
	struct xk_mount *mp = b->mp;
	struct xk_bld_fork *fk = whichfork == XK_DATA_FORK ? &ip->data :
							     &ip->attr;
	uint32_t agno = xk_ino_to_agno(mp, ip->ino);
	uint64_t attr = whichfork == XK_ATTR_FORK ? XK_RMAP_OFF_ATTR_FORK : 0;

	if (fk->format != XK_DINODE_FMT_EXTENTS) {
		if (fk->format == XK_DINODE_FMT_LOCAL ||
		    fk->format == XK_BLD_FMT_DEV)
			return -EINVAL;
		fk->format = XK_BLD_FMT_EXTENTS;
	}
	if (loff + count > XK_MAX_FILEOFF)
		return -EFBIG;
	/* Keep a file in one AG when it can be: continue where it ended. */
	if (fk->next)
		agno = xk_fsb_to_agno(mp, fk->ext[fk->next - 1].fsbno);
	while (count) {
		uint32_t want = count > XK_MAX_BMBT_EXTLEN ?
				XK_MAX_BMBT_EXTLEN : (uint32_t)count;
		uint32_t got, a;
		uint64_t fsbno;
		int err;

		if (want > mp->g.agblocks)
			want = mp->g.agblocks;
		a = want >= align ? align : 1;
		err = bld_alloc(b, agno, want, 1, a, &fsbno, &got);
		if (err)
			return err;
		agno = xk_fsb_to_agno(mp, fsbno);
		err = bld_rmap_add(&b->ags[agno], xk_fsb_to_agbno(mp, fsbno),
				   got, ip->ino, loff | attr);
		if (!err)
			err = fork_append(fk, loff, fsbno, got);
		if (err)
			return err;
		loff += got;
		count -= got;
	}
	return 0;
}

int
xk_bld_fork_map(const struct xk_bld_fork *fk, uint64_t loff, uint64_t *fsbno)
{
	uint64_t lo = 0, hi = fk->next;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct xk_bld_ext *e = &fk->ext[mid];

		if (loff < e->loff)
			hi = mid;
		else if (loff >= e->loff + e->len)
			lo = mid + 1;
		else {
			*fsbno = e->fsbno + (loff - e->loff);
			return 0;
		}
	}
	return -ENOENT;
}

/* --- inode allocation --- */

static int
take_inode(struct bld_ag *ag, uint32_t ci, const struct xk_mount *mp,
	   uint64_t *inop)
{
	struct bld_chunk *c = &ag->chunk[ci];

	for (int k = 0; k < 64; k++) {
		if (c->holemask & (1u << (k / XK_INODES_PER_HOLEMASK_BIT)))
			continue;
		if (c->freemask & (1ULL << k)) {
			c->freemask &= ~(1ULL << k);
			ag->ifree--;
			ag->dirty = 1;
			*inop = xk_agino_to_ino(mp, ag->agno, c->startino + k);
			return 0;
		}
	}
	return -ENOSPC;
}

static int
ialloc_in_ag(struct xk_bld *b, struct bld_ag *ag, uint64_t *inop)
{
	struct xk_mount *mp = b->mp;
	const struct xk_geom *g = &mp->g;
	struct bld_chunk c = { 0 };
	uint32_t agbno, got, align = g->cluster_align;
	int err;

	for (uint32_t i = ag->ichunk_cursor; i < ag->nchunk; i++) {
		if (take_inode(ag, i, mp, inop) == 0) {
			ag->ichunk_cursor = i;
			return 0;
		}
	}
	ag->ichunk_cursor = ag->nchunk;
	if (g->inoalign_mask && g->inoalign_mask + 1 > align)
		align = g->inoalign_mask + 1;
	err = bld_alloc_in_ag(b, ag, g->ialloc_blks, g->ialloc_blks, align,
			      &agbno, &got);
	if (err)
		return err;
	if (align > 1 && (agbno % align)) {
		/* Only an aligned chunk is a valid chunk: give it back. */
		bld_free_add(ag, agbno, got);
		return -ENOSPC;
	}
	err = xk_inode_init_chunk(mp, ag->agno, agbno, g->ialloc_blks);
	if (!err)
		err = bld_rmap_add(ag, agbno, g->ialloc_blks,
				   XK_RMAP_OWN_INODES, 0);
	if (err)
		return err;
	c.startino = agbno << g->inopblog;
	c.count = XK_INODES_PER_CHUNK;
	c.freemask = ~0ULL;
	err = bld_chunk_add(ag, &c);
	if (err)
		return err;
	for (uint32_t i = ag->ichunk_cursor; i < ag->nchunk; i++) {
		if (take_inode(ag, i, mp, inop) == 0) {
			ag->ichunk_cursor = i;
			return 0;
		}
	}
	return -ENOSPC;
}

int
xk_bld_ialloc(struct xk_bld *b, uint64_t parent, int is_dir, uint64_t *inop)
{
	uint32_t agno;

	if (is_dir) {
		/* Spread directories over the AGs, as the kernel does. */
		agno = b->dir_rotor;
		b->dir_rotor = (b->dir_rotor + 1) % b->agcount;
	} else {
		agno = xk_ino_to_agno(b->mp, parent);
		if (agno >= b->agcount)
			agno = 0;
	}
	for (uint32_t n = 0; n < b->agcount; n++) {
		struct bld_ag *ag = &b->ags[(agno + n) % b->agcount];

		if (ialloc_in_ag(b, ag, inop) == 0)
			return 0;
	}
	return -ENOSPC;
}

void
xk_bld_inode_init(struct xk_bld *b, struct xk_bld_inode *ip, uint64_t ino,
		  uint16_t mode)
{
	memset(ip, 0, sizeof(*ip));
	ip->ino = ino;
	ip->mode = mode;
	ip->nlink = 1;
	ip->atime_sec = ip->mtime_sec = ip->ctime_sec = ip->crtime_sec =
		b->now_sec;
	ip->atime_nsec = ip->mtime_nsec = ip->ctime_nsec = ip->crtime_nsec =
		b->now_nsec;
}

/* --- writing the inode --- */

static void
fork_release(struct xk_bld_fork *fk)
{
	free(fk->local);
	free(fk->ext);
	memset(fk, 0, sizeof(*fk));
}

static void
pack_ext(const struct xk_bld_ext *e, struct xk_bmbt_rec *rec)
{
	struct xk_bmbt_irec ir = {
		.startoff = e->loff,
		.startblock = e->fsbno & ~BLD_EXT_UNWRITTEN,
		.blockcount = e->len,
		.unwritten = !!(e->fsbno & BLD_EXT_UNWRITTEN),
	};

	xk_bmbt_rec_pack(rec, &ir);
}

/*
 * Turn a fork's extent list into a bmbt whose inode root takes `space`
 * bytes at `root` in the inode.  Adds the bmbt blocks to *nblocks.
 */
static int
fork_to_btree(struct xk_bld *b, struct xk_bld_inode *ip, int whichfork,
	      uint8_t *root, uint32_t space, uint64_t *nblocks,
	      const struct bld_bshape *shape)
{
	struct xk_mount *mp = b->mp;
	struct xk_bld_fork *fk = whichfork == XK_DATA_FORK ? &ip->data :
							     &ip->attr;
	uint64_t attr = whichfork == XK_ATTR_FORK ? XK_RMAP_OFF_ATTR_FORK : 0;
	struct xk_btree_bulk bb = {
		.ops = &xk_bmbt_ops, .agno = -1, .owner = ip->ino,
	};
	uint32_t maxptrs = (space - 4) / 16;
	struct xk_bmbt_rec *recs = NULL;
	uint64_t *blocks = NULL, rootbno, rootfsb;
	uint32_t agno = xk_ino_to_agno(mp, ip->ino), got;
	uint64_t n = 0;
	int err, moved = 0;

	if (maxptrs < 1)
		return -EFBIG;
	/* A kept shape whose root fits the inode (see bmbt_shape.c). */
	if (shape && !shape->lost && shape->levels >= 2 &&
	    shape->cnt[shape->levels - 1][0] <= maxptrs) {
		bb.counts = shape->cnt;
		bb.levels = shape->levels;
		memcpy(bb.level_blocks, shape->n, sizeof(bb.level_blocks));
		if (xk_btree_bulk_plan(mp, &bb, fk->next)) {
			bb.counts = NULL;	/* it does not hold: packed */
			bb.levels = 0;
		}
	}
	err = xk_btree_bulk_plan(mp, &bb, fk->next);
	if (err)
		return err;
	recs = malloc(fk->next * sizeof(*recs));
	blocks = malloc(bb.blocks * sizeof(*blocks));
	if (!recs || !blocks) {
		err = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < fk->next; i++)
		pack_ext(&fk->ext[i], &recs[i]);
	if (fk->next)
		agno = xk_fsb_to_agno(mp, fk->ext[0].fsbno);
	/* Every block but the root, then the root on its own. */
	while (n < bb.blocks - 1) {
		uint64_t fsb;
		uint32_t want = (uint32_t)(bb.blocks - 1 - n);

		err = bld_alloc(b, agno, want, 1, 1, &fsb, &got);
		if (err)
			goto out;
		err = bld_rmap_add(&b->ags[xk_fsb_to_agno(mp, fsb)],
				   xk_fsb_to_agbno(mp, fsb), got, ip->ino,
				   XK_RMAP_OFF_BMBT_BLOCK | attr);
		if (err)
			goto out;
		for (uint32_t i = 0; i < got; i++)
			blocks[n++] = fsb + i;
	}
	err = bld_alloc(b, agno, 1, 1, 1, &rootfsb, &got);
	if (err)
		goto out;
	blocks[n] = rootfsb;
	err = xk_btree_bulk_load(mp, &bb, recs, fk->next, blocks, &rootbno);
	if (err)
		goto out;
	memset(root, 0, space);
	if (bb.levels >= 2) {
		struct xk_buf *bp;
		uint32_t nmax = xk_btree_maxrecs(&xk_bmbt_ops,
						 mp->g.blocksize, 0);

		/* The bulk load left it dirty in the cache: read it back. */
		err = xk_buf_read(mp, xk_fsb_to_daddr(mp, rootfsb),
				  mp->g.blocksize, xk_bmbt_ops.buf_ops,
				  XK_READ_NOVERIFY, &bp);
		if (err)
			goto out;
		{
			uint16_t nr = xk_btree_block_numrecs(bp->data);

			if (nr <= maxptrs) {
				/* The root moves into the inode. */
				xk_put_be16(root, (uint16_t)(bb.levels - 1));
				xk_put_be16(root + 2, nr);
				for (uint16_t i = 0; i < nr; i++) {
					memcpy(root + 4 + i * 8,
					       xk_btree_key(&xk_bmbt_ops,
							    bp->data, i), 8);
					memcpy(root + 4 + maxptrs * 8 + i * 8,
					       xk_btree_ptr(&xk_bmbt_ops,
							    bp->data, nmax,
							    i), 8);
				}
				moved = 1;
			}
		}
		xk_buf_release(bp);
	}
	if (moved) {
		struct bld_ag *ag = &b->ags[xk_fsb_to_agno(mp, rootfsb)];

		xk_buf_invalidate(mp, xk_fsb_to_daddr(mp, rootfsb),
				  mp->g.blocksize);
		err = bld_free_add(ag, xk_fsb_to_agbno(mp, rootfsb), 1);
		*nblocks += bb.blocks - 1;
	} else {
		/* A one-pointer inode root above the block root. */
		xk_put_be16(root, (uint16_t)bb.levels);
		xk_put_be16(root + 2, 1);
		{
			struct xk_bmbt_irec ir;

			xk_bmbt_rec_unpack(&recs[0], &ir);
			xk_put_be64(root + 4, ir.startoff);
		}
		xk_put_be64(root + 4 + maxptrs * 8, rootfsb);
		err = bld_rmap_add(&b->ags[xk_fsb_to_agno(mp, rootfsb)],
				   xk_fsb_to_agbno(mp, rootfsb), 1, ip->ino,
				   XK_RMAP_OFF_BMBT_BLOCK | attr);
		*nblocks += bb.blocks;
	}
out:
	free(recs);
	free(blocks);
	return err;
}

static void
put_time(xk_timestamp *ts, int64_t sec, uint32_t nsec, int bigtime)
{
	struct xk_timespec t = { sec, nsec };

	*ts = xk_timestamp_encode(t, bigtime);
}

/* Lay one fork at dst (space bytes); returns its format. */
int
bld_write_fork(struct xk_bld *b, struct xk_bld_inode *ip, int whichfork,
	   uint8_t *dst, uint32_t space, uint8_t *format, uint64_t *nblocks)
{
	return bld_write_fork_shaped(b, ip, whichfork, dst, space, format,
				     nblocks, NULL);
}

int
bld_write_fork_shaped(struct xk_bld *b, struct xk_bld_inode *ip,
		      int whichfork, uint8_t *dst, uint32_t space,
		      uint8_t *format, uint64_t *nblocks,
		      const struct bld_bshape *shape)
{
	struct xk_bld_fork *fk = whichfork == XK_DATA_FORK ? &ip->data :
							     &ip->attr;

	switch (fk->format) {
	case XK_BLD_FMT_DEV:
	case XK_DINODE_FMT_LOCAL:
		if (fk->local_len > space)
			return -EFBIG;
		memcpy(dst, fk->local, fk->local_len);
		*format = fk->format == XK_BLD_FMT_DEV ? XK_DINODE_FMT_DEV :
							  XK_DINODE_FMT_LOCAL;
		return 0;
	case XK_BLD_FMT_EXTENTS:
	case XK_BLD_FMT_NONE:
		*nblocks += fk->nblocks;
		if (fk->next * sizeof(struct xk_bmbt_rec) <= space) {
			for (uint64_t i = 0; i < fk->next; i++)
				pack_ext(&fk->ext[i],
					 (struct xk_bmbt_rec *)dst + i);
			*format = XK_DINODE_FMT_EXTENTS;
			return 0;
		}
		*format = XK_DINODE_FMT_BTREE;
		return fork_to_btree(b, ip, whichfork, dst, space, nblocks,
				     shape);
	default:
		return -EINVAL;
	}
}

int
xk_bld_inode_write(struct xk_bld *b, struct xk_bld_inode *ip)
{
	struct xk_mount *mp = b->mp;
	int bigtime = mp->g.has_bigtime;
	uint32_t lit = xk_bld_literal_size(b);
	uint32_t dspace = lit, forkoff = 0;
	struct xk_inode_init ii = {
		.mode = ip->mode, .nlink = ip->nlink, .flags = ip->diflags,
		.size = ip->size,
	};
	struct xk_dinode *dip;
	struct xk_buf *bp;
	uint64_t nblocks = 0;
	uint8_t dfmt = XK_DINODE_FMT_EXTENTS, afmt = XK_DINODE_FMT_EXTENTS;
	void *p;
	int err;

	/* Where the attr fork starts: it gets what it needs, data the rest. */
	if (ip->attr.format) {
		uint32_t aneed = round8(fork_need(&ip->attr));

		if (ip->data.format == XK_BLD_FMT_DEV)
			forkoff = 1;
		else {
			uint32_t dneed = round8(fork_need(&ip->data));

			uint32_t deflt =
				xk_dinode_default_forkoff(mp->g.inodesize);
			uint32_t maxfo = (lit - bmdr_space(2)) / 8;

			if (ip->attr.format != XK_DINODE_FMT_LOCAL &&
			    aneed > lit / 2)
				aneed = round8(bmdr_space(BLD_MIN_BMDR_PTRS));
			if (aneed + (dneed ? 0 : 8) > lit)
				return -EFBIG;
			forkoff = deflt;
			if (lit - forkoff * 8 < aneed)
				forkoff = (lit - aneed) / 8;
			else if (dneed > forkoff * 8 &&
				 lit - round8(dneed) >= aneed)
				forkoff = round8(dneed) / 8;
			if (forkoff > maxfo)
				forkoff = maxfo;
			/* A data fork that needs more pushes a btree out. */
			if (dneed > forkoff * 8 &&
			    ip->data.format == XK_DINODE_FMT_LOCAL)
				return -EFBIG;
		}
		dspace = forkoff * 8;
	}
	err = xk_inode_init_get(mp, ip->ino, &bp, &p);
	if (err)
		return err;
	dip = p;
	xk_inode_init_core(mp, dip, ip->ino, &ii);
	xk_be32_set(&dip->di_uid, ip->uid);
	xk_be32_set(&dip->di_gid, ip->gid);
	xk_be16_set(&dip->di_projid_lo, (uint16_t)ip->projid);
	xk_be16_set(&dip->di_projid_hi, (uint16_t)(ip->projid >> 16));
	put_time(&dip->di_atime, ip->atime_sec, ip->atime_nsec, bigtime);
	put_time(&dip->di_mtime, ip->mtime_sec, ip->mtime_nsec, bigtime);
	put_time(&dip->di_ctime, ip->ctime_sec, ip->ctime_nsec, bigtime);
	put_time(&dip->di_crtime, ip->crtime_sec, ip->crtime_nsec, bigtime);
	if (ip->diflags2)
		xk_be64_set(&dip->di_flags2, xk_be64_get(dip->di_flags2) |
			    ip->diflags2);
	dip->di_forkoff = (uint8_t)forkoff;
	err = bld_write_fork(b, ip, XK_DATA_FORK, xk_dfork_dptr(dip), dspace,
			 &dfmt, &nblocks);
	if (!err && ip->attr.format)
		err = bld_write_fork(b, ip, XK_ATTR_FORK, xk_dfork_aptr(dip),
				 lit - dspace, &afmt, &nblocks);
	if (err) {
		xk_buf_release(bp);
		return err;
	}
	dip->di_format = dfmt;
	dip->di_aformat = afmt;
	xk_be64_set(&dip->di_nblocks, nblocks);
	if (mp->g.has_nrext64) {
		xk_be64_set(&dip->di_big_nextents, ip->data.format ==
			    XK_DINODE_FMT_EXTENTS ? ip->data.next : 0);
		xk_be32_set(&dip->di_big_anextents, ip->attr.format ==
			    XK_DINODE_FMT_EXTENTS ?
			    (uint32_t)ip->attr.next : 0);
	} else {
		xk_be32_set(&dip->di_nextents, ip->data.format ==
			    XK_DINODE_FMT_EXTENTS ?
			    (uint32_t)ip->data.next : 0);
		xk_be16_set(&dip->di_anextents, ip->attr.format ==
			    XK_DINODE_FMT_EXTENTS ?
			    (uint16_t)ip->attr.next : 0);
	}
	xk_inode_init_crc(mp, dip);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	fork_release(&ip->data);
	fork_release(&ip->attr);
	return 0;
}

int
xk_bld_inode_set_nlink(struct xk_bld *b, uint64_t ino, uint32_t nlink)
{
	struct xk_buf *bp;
	void *p;
	int err = xk_inode_init_get(b->mp, ino, &bp, &p);

	if (err)
		return err;
	xk_be32_set(&((struct xk_dinode *)p)->di_nlink, nlink);
	xk_inode_init_crc(b->mp, p);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}
