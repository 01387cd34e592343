// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Rebuilding a fork's block map from the reverse mappings.  On a filesystem
 * with the rmapbt every extent an inode owns is recorded twice: in the
 * inode's block map (extent list or bmbt) and in the rmapbt, with its
 * file offset, fork and unwritten state.  When the block map is lost (a
 * zeroed fork, a destroyed bmbt block) and the rmapbt is intact, the map
 * is rebuilt from the rmap records the inode owns: nothing of the file
 * is lost.  xfs_repair does not use the rmapbt this way: it truncates
 * the fork at the damage or clears the inode.
 *
 * Planning (check_rmap_forks in phase_rmap_forks.c, after the space
 * phase): an inode in use
 * whose data fork maps fewer blocks than the rmapbt gives it, where the
 * extra records collide with no other owner, gets IFIX_RMAP_FORK; the
 * inode phase plans the same for a bmbt that failed its walk.
 *
 * Applying (rmap_fork_rebuild): the records become an extent list in the
 * inode when they fit, else a bmbt bulk loaded into the blocks the
 * rmapbt says were the inode's old bmbt blocks (so no allocation: the
 * destroyed block is simply rewritten).  No rmap records, or a tree
 * that needs more blocks than the old one had: the caller falls back to
 * what xfs_repair would do.
 *
 * An attr fork whose map is damaged (extents out of range, a broken attr
 * bmbt) is rebuilt the same way from the records with the attr-fork
 * flag (IFIX_RMAP_AFORK), inside the attr fork's existing space; failing
 * that, or when the rebuilt map is the one already there, the attr fork
 * is dropped as xfs_repair drops it.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/btree_bulk.h>
#include <xfskit/format/dir.h>

#include "repair.h"
#include "reasm.h"

/*
 * The extents of one fork of the inode (and that fork's old bmbt blocks)
 * from the rmapbt; *otherp gets the blocks of the other fork.
 */
static int
gather(struct repair_ctx *rc, uint64_t ino, int whichfork,
       struct xk_bmbt_rec **recsp, uint64_t *nrecsp, uint64_t **bmbtp,
       uint64_t *nbmbtp, uint64_t *blocksp, uint64_t *otherp)
{
	struct xk_mount *mp = rc->mp;
	struct xk_bmbt_irec *ir = NULL;
	uint64_t n = 0, cap = 0, *bm = NULL, nbm = 0, capbm = 0;

	*blocksp = *otherp = 0;
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		const struct ag_scan *as = &rc->scan.ags[agno];

		for (size_t i = 0; i < as->rmaps.n; i++) {
			const struct claim *r = &as->rmaps.v[i];
			uint64_t fsb = xk_agb_to_fsb(mp, agno, r->agbno);

			if (r->owner != ino)
				continue;
			if (!(r->offset & XK_RMAP_OFF_ATTR_FORK) !=
			    (whichfork == XK_DATA_FORK)) {
				*otherp += r->len;
				continue;
			}
			if (r->offset & XK_RMAP_OFF_BMBT_BLOCK) {
				for (uint32_t b = 0; b < r->len; b++) {
					if (nbm == capbm) {
						uint64_t *nb;

						capbm = capbm ? capbm * 2 : 16;
						nb = xk_realloc(bm, capbm *
								sizeof(*bm));
						if (!nb)
							goto nomem;
						bm = nb;
					}
					bm[nbm++] = fsb + b;
				}
				continue;
			}
			for (uint32_t done = 0; done < r->len;) {
				uint32_t len = r->len - done;

				if (len > XK_MAX_BMBT_EXTLEN)
					len = XK_MAX_BMBT_EXTLEN;
				if (n == cap) {
					struct xk_bmbt_irec *ni;

					cap = cap ? cap * 2 : 16;
					ni = xk_realloc(ir, cap * sizeof(*ir));
					if (!ni)
						goto nomem;
					ir = ni;
				}
				ir[n++] = (struct xk_bmbt_irec){
					.startoff = (r->offset &
						     XK_RMAP_OFF_MASK) + done,
					.startblock = fsb + done,
					.blockcount = len,
					.unwritten = !!(r->offset &
							XK_RMAP_OFF_UNWRITTEN),
				};
				*blocksp += len;
				done += len;
			}
		}
	}
	/* File offset order; the bmbt's key order. */
	for (uint64_t i = 1; i < n; i++) {
		struct xk_bmbt_irec t = ir[i];
		uint64_t j = i;

		while (j && ir[j - 1].startoff > t.startoff) {
			ir[j] = ir[j - 1];
			j--;
		}
		ir[j] = t;
	}
	*recsp = xk_malloc((n ? n : 1) * sizeof(**recsp));
	if (!*recsp)
		goto nomem;
	for (uint64_t i = 0; i < n; i++)
		xk_bmbt_rec_pack(&(*recsp)[i], &ir[i]);
	free(ir);
	*nrecsp = n;
	*bmbtp = bm;
	*nbmbtp = nbm;
	return 0;
nomem:
	free(ir);
	free(bm);
	return -ENOMEM;
}

/*
 * A bmbt for recs in the old bmbt blocks; the root goes into the inode
 * fork (space bytes at root).  Returns the bmbt blocks kept in *used;
 * -EFBIG when the old blocks cannot hold it (a verdict on this inode,
 * unlike memory or I/O errors, which stop the run).
 */
static int
load_bmbt(struct repair_ctx *rc, uint64_t ino, const struct xk_bmbt_rec *recs,
	  uint64_t n, const uint64_t *old, uint64_t nold, uint8_t *root,
	  uint32_t space, uint64_t *used)
{
	struct xk_mount *mp = rc->mp;
	struct xk_btree_bulk bb = { .ops = &xk_bmbt_ops, .agno = -1,
				    .owner = ino };
	uint32_t maxptrs = (space - 4) / 16;
	uint64_t rootbno, *blocks;
	struct xk_buf *bp;
	int err, scratch = 0;

	err = xk_btree_bulk_plan(mp, &bb, n);
	if (err)
		return err;
	/*
	 * The loader needs bb.blocks blocks.  With two levels or more the
	 * block root normally moves into the inode, so it may borrow a
	 * scratch number (the file's first data block: its buffer is
	 * dropped unwritten below); only if it cannot move does it need
	 * an old bmbt block of its own.
	 */
	if (maxptrs < 1 || bb.blocks > nold + (bb.levels >= 2))
		return -EFBIG;
	blocks = xk_malloc(bb.blocks * sizeof(*blocks));
	if (!blocks)
		return -ENOMEM;
	memcpy(blocks, old, (bb.blocks <= nold ? bb.blocks : nold) *
	       sizeof(*blocks));
	if (bb.blocks > nold) {
		struct xk_bmbt_irec first;

		xk_bmbt_rec_unpack(&recs[0], &first);
		blocks[nold] = first.startblock;
		scratch = 1;
	}
	err = xk_btree_bulk_load(mp, &bb, recs, n, blocks, &rootbno);
	free(blocks);
	if (err)
		return err;
	memset(root, 0, space);
	if (bb.levels >= 2) {
		uint32_t nmax = xk_btree_maxrecs(&xk_bmbt_ops,
						 mp->g.blocksize, 0);
		uint16_t nr;

		/* Read back the cached root (xk_buf_get would zero it). */
		err = xk_buf_read(mp, xk_fsb_to_daddr(mp, rootbno),
				  mp->g.blocksize, xk_bmbt_ops.buf_ops,
				  XK_READ_NOVERIFY, &bp);
		if (err)
			return err;
		nr = xk_btree_block_numrecs(bp->data);
		if (nr <= maxptrs) {
			xk_put_be16(root, (uint16_t)(bb.levels - 1));
			xk_put_be16(root + 2, nr);
			for (uint16_t i = 0; i < nr; i++) {
				memcpy(root + 4 + i * 8,
				       xk_btree_key(&xk_bmbt_ops, bp->data, i),
				       8);
				memcpy(root + 4 + maxptrs * 8 + i * 8,
				       xk_btree_ptr(&xk_bmbt_ops, bp->data,
						    nmax, i), 8);
			}
			xk_buf_release(bp);
			/* Never written: its contents now live in the inode. */
			xk_buf_invalidate(mp, xk_fsb_to_daddr(mp, rootbno),
					  mp->g.blocksize);
			*used = bb.blocks - 1;
			return 0;
		}
		xk_buf_release(bp);
	}
	if (scratch) {
		/* The root had to stay a block, and it has none: give up. */
		xk_buf_invalidate(mp, xk_fsb_to_daddr(mp, rootbno),
				  mp->g.blocksize);
		return -EFBIG;
	}
	/* A one-pointer inode root above the block root. */
	xk_put_be16(root, (uint16_t)bb.levels);
	xk_put_be16(root + 2, 1);
	{
		struct xk_bmbt_irec first;

		xk_bmbt_rec_unpack(&recs[0], &first);
		xk_put_be64(root + 4, first.startoff);
	}
	xk_put_be64(root + 4 + maxptrs * 8, rootbno);
	*used = bb.blocks;
	return 0;
}

/* A directory's size from its packed records: where its data ends. */
static uint64_t
recs_dir_data_end(const struct xk_bmbt_rec *recs, uint64_t n,
		  unsigned int blocklog)
{
	uint64_t end = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct xk_bmbt_irec r;
		uint64_t e;

		xk_bmbt_rec_unpack(&recs[i], &r);
		e = xk_dir2_mapping_data_end(r.startoff, r.blockcount,
					     blocklog);
		if (e > end)
			end = e;
	}
	return end;
}

/*
 * Put recs (n of them, by file offset, mapping blocks data blocks) into
 * one fork of dip: an extent list when they fit, else a bmbt in the
 * fork's old bmbt blocks.  other: the other fork's blocks, for
 * di_nblocks.  An attr fork keeps its place (di_forkoff); a rebuild
 * that gives back the same map is no fix (-EEXIST), so the caller falls
 * back rather than try it again.  On an error dip is left as it was.
 */
static int
fork_install(struct repair_ctx *rc, uint64_t ino, struct xk_dinode *dip,
	     int whichfork, const struct xk_bmbt_rec *recs, uint64_t n,
	     const uint64_t *old, uint64_t nold, uint64_t blocks,
	     uint64_t other)
{
	struct xk_mount *mp = rc->mp;
	int attr = whichfork == XK_ATTR_FORK;
	unsigned int space = attr ? xk_dfork_asize(dip, mp->g.inodesize) :
				    xk_dfork_dsize(dip, mp->g.inodesize);
	uint8_t *fork = attr ? xk_dfork_aptr(dip) : xk_dfork_dptr(dip);
	uint8_t *was;
	uint64_t used = 0;
	uint8_t fmt;
	int err = 0;

	if (n == 0 || !space)
		return -ENOENT;
	was = xk_malloc(space);
	if (!was)
		return -ENOMEM;
	memcpy(was, fork, space);
	if (n * sizeof(*recs) <= space) {
		memset(fork, 0, space);
		memcpy(fork, recs, n * sizeof(*recs));
		fmt = XK_DINODE_FMT_EXTENTS;
	} else {
		err = load_bmbt(rc, ino, recs, n, old, nold, fork, space,
				&used);
		fmt = XK_DINODE_FMT_BTREE;
	}
	if (!err && attr && !memcmp(was, fork, space) &&
	    dip->di_aformat == fmt && xk_dinode_anextents(dip) == n)
		err = -EEXIST;
	if (err) {
		memcpy(fork, was, space);	/* leave dip as it was */
		free(was);
		return err;
	}
	free(was);
	if (attr) {
		dip->di_aformat = fmt;
		xk_dinode_set_nextents(dip, xk_dinode_nextents(dip),
				       (uint32_t)n);
	} else {
		dip->di_format = fmt;
		xk_dinode_set_nextents(dip, n, xk_dinode_anextents(dip));
		/* A directory's size is where its data blocks end. */
		if ((xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFDIR)
			xk_be64_set(&dip->di_size,
				    recs_dir_data_end(recs, n, mp->g.blocklog));
	}
	xk_be64_set(&dip->di_nblocks, blocks + used + other);
	return 0;
}

/* Rebuild one fork's map in dip from the rmapbt. */
static int
fork_rebuild(struct repair_ctx *rc, uint64_t ino, struct xk_dinode *dip,
	     int whichfork)
{
	struct xk_bmbt_rec *recs = NULL;
	uint64_t n = 0, *old = NULL, nold = 0, blocks = 0, other = 0;
	int attr = whichfork == XK_ATTR_FORK;
	int err;

	if (!rmaps_usable(rc) || (attr && !dip->di_forkoff))
		return -ENOENT;
	err = gather(rc, ino, whichfork, &recs, &n, &old, &nold, &blocks,
		     &other);
	/* The other fork's blocks as the rmapbt counts them. */
	if (!err)
		err = fork_install(rc, ino, dip, whichfork, recs, n, old,
				   nold, blocks, other);
	if (!err)
		action_report(rc, ACT_FORK_REBUILT, ino, -1, NULL, ": its %s "
			      "map, from the rmapbt: %llu extents, %llu "
			      "blocks", attr ? "attr fork" : "block",
			      (unsigned long long)n,
			      (unsigned long long)blocks);
	free(recs);
	free(old);
	return err;
}

int
rmap_fork_rebuild(struct repair_ctx *rc, uint64_t ino, struct xk_dinode *dip)
{
	return fork_rebuild(rc, ino, dip, XK_DATA_FORK);
}

int
rmap_afork_rebuild(struct repair_ctx *rc, uint64_t ino, struct xk_dinode *dip)
{
	return fork_rebuild(rc, ino, dip, XK_ATTR_FORK);
}

/* One fork's map in dip from the bmbt leaves the device scan found. */
static int
scan_rebuild(struct repair_ctx *rc, uint64_t ino, struct xk_dinode *dip,
	     int whichfork)
{
	const struct reasm_fork *f = reasm_fork_find(rc, ino, whichfork);
	const struct reasm_fork *df = reasm_fork_find(rc, ino, XK_DATA_FORK);
	uint64_t other, nblocks = xk_be64_get(dip->di_nblocks);
	char losses[512];
	int err;

	if (!f)
		return -ENOENT;
	/*
	 * The data fork, when it came from the scan too, was installed just
	 * before (fix.c): its blocks are the count it set less the attr
	 * blocks it counted then.
	 */
	other = f->attr && df && nblocks >= df->other ? nblocks - df->other :
		f->other;
	err = fork_install(rc, ino, dip, whichfork, f->recs, f->n, f->old,
			   f->nold, f->blocks, other);
	if (err)
		return err;
	reasm_fork_losses(f, losses, sizeof(losses));
	action_report(rc, ACT_FORK_REBUILT, ino, -1, NULL, ": its %s, "
		      "from %zu bmbt leaves found by the device scan: %llu "
		      "extents, %llu blocks%s", f->attr ? "attr fork map" :
		      "block map", f->leaves, (unsigned long long)f->n,
		      (unsigned long long)f->blocks, losses);
	return 0;
}

int
scan_fork_rebuild(struct repair_ctx *rc, uint64_t ino, struct xk_dinode *dip)
{
	return scan_rebuild(rc, ino, dip, XK_DATA_FORK);
}

int
scan_afork_rebuild(struct repair_ctx *rc, uint64_t ino, struct xk_dinode *dip)
{
	return scan_rebuild(rc, ino, dip, XK_ATTR_FORK);
}
