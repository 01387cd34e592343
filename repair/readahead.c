// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Readahead that keeps pace with a walk.  Hinting a whole AG's inode
 * chunks before scanning it (as the scan first did) left the CPU idle
 * while thousands of hints were submitted, and hinted far more than the
 * page cache needed at once; hinting nothing leaves every read to wait
 * for the disk.  Here the walk lists its ranges up front and reports its
 * position; the hints stay a window ahead of it, neighbouring ranges
 * (closer than a small gap) merged into requests of up to a few MiB, so
 * the disk always has the next requests queued while the CPU checks
 * what has arrived.
 */
#include <stdlib.h>

#include <xfskit/format/dinode.h>

#include "repair.h"
#include "readahead.h"

/* Bytes hinted ahead of the walk: tens of milliseconds of disk time. */
#define RA_WINDOW	(16ULL << 20)
/* Ranges closer than this are read as one (the gap is read too). */
#define RA_GAP		(64ULL << 10)
/* The largest merged request. */
#define RA_MAXREQ	(4ULL << 20)

void
ra_init(struct ra_plan *ra, struct xk_dev *dev)
{
	*ra = (struct ra_plan){ .dev = dev };
}

void
ra_add(struct ra_plan *ra, uint64_t off, uint64_t len)
{
	if (ra->n == ra->cap) {
		size_t ncap = ra->cap ? ra->cap * 2 : 256;
		struct ra_range *nv = realloc(ra->r, ncap * sizeof(*nv));

		/* A hint: without memory for it the scan reads on demand. */
		if (!nv)
			return;
		ra->r = nv;
		ra->cap = ncap;
	}
	ra->r[ra->n++] = (struct ra_range){ off, len };
}

/* Hint ranges from ra->hinted on, merged while they stay close. */
static void
hint_next(struct ra_plan *ra)
{
	const struct ra_range *r = ra->r;
	size_t h = ra->hinted;
	uint64_t start, end;

	/* Empty ranges (nothing to read there) are passed over. */
	while (h < ra->n && !r[h].len)
		h++;
	if (h == ra->n) {
		ra->hinted = h;
		return;
	}
	start = r[h].off;
	end = start + r[h].len;
	ra->ahead += r[h].len;
	for (h++; h < ra->n; h++) {
		if (!r[h].len)
			continue;
		if (r[h].off < end || r[h].off - end > RA_GAP ||
		    r[h].off + r[h].len - start > RA_MAXREQ)
			break;
		end = r[h].off + r[h].len;
		ra->ahead += r[h].len;
	}
	ra->hinted = h;
	xk_dev_readahead(ra->dev, start, end - start);
}

/* Chunks the peek runs ahead of the scan: a few ms of checking. */
#define RA_PEEK		64
/* Directory bytes hinted per directory at most. */
#define RA_DIR_MAX	(16ULL << 20)

/* Hint the extents of nrecs packed bmbt records at p. */
static void
hint_recs(struct xk_mount *mp, const uint8_t *p, uint64_t nrecs)
{
	uint64_t total = 0;

	for (uint64_t i = 0; i < nrecs && total < RA_DIR_MAX; i++) {
		struct xk_bmbt_irec r;
		uint64_t len;

		xk_bmbt_rec_unpack((const struct xk_bmbt_rec *)
				   (p + i * sizeof(struct xk_bmbt_rec)), &r);
		if (!xk_fsbext_valid(mp, r.startblock, r.blockcount))
			continue;
		len = r.blockcount << mp->g.blocklog;
		if (len > RA_DIR_MAX)
			len = RA_DIR_MAX;
		xk_dev_readahead(mp->dev, xk_fsb_to_daddr(mp, r.startblock) <<
				 XK_BBSHIFT, len);
		total += len;
	}
}

/*
 * A directory: hint its blocks.  In extent format they are listed in
 * the inode; in btree format (a large directory whose blocks lie among
 * the inode chunks) the root's leaves are hinted now and read when the
 * scan is halfway there, to hint the blocks they list.  The inode has
 * not been verified yet (the scan does that when it gets there), so
 * every count is bounded here by what holds it; a wrong guess costs a
 * useless read, nothing else.
 */
static void
peek_dir(struct ra_plan *ra, const struct xk_dinode *dip, size_t due)
{
	struct xk_mount *mp = ra->mp;
	uint64_t nex = xk_dinode_fork_nextents(dip, XK_DATA_FORK);
	unsigned int dsize;
	const struct xk_bmdr_block *bb;
	unsigned int nrecs;

	if (xk_be16_get(dip->di_magic) != XK_DINODE_MAGIC ||
	    (xk_be16_get(dip->di_mode) & XK_S_IFMT) != XK_S_IFDIR ||
	    dip->di_forkoff * 8U > mp->g.inodesize - sizeof(*dip))
		return;
	dsize = xk_dfork_dsize(dip, mp->g.inodesize);
	if (dip->di_format == XK_DINODE_FMT_EXTENTS) {
		if (nex <= dsize / sizeof(struct xk_bmbt_rec))
			hint_recs(mp, xk_dfork_dptr(dip), nex);
		return;
	}
	if (dip->di_format != XK_DINODE_FMT_BTREE ||
	    dsize < sizeof(*bb) + sizeof(struct xk_bmbt_key) +
		    sizeof(xk_bmbt_ptr))
		return;
	bb = (const struct xk_bmdr_block *)xk_dfork_dptr(dip);
	nrecs = xk_be16_get(bb->bb_numrecs);
	/* Deeper trees are rare for directories: left to the walk. */
	if (xk_be16_get(bb->bb_level) != 1 ||
	    nrecs > xk_bmdr_maxrecs(dsize, 0))
		return;
	for (unsigned int i = 0; i < nrecs; i++) {
		uint64_t fsb = xk_be64_get(*xk_bmdr_ptr(bb, dsize, i));

		if (!xk_fsbext_valid(mp, fsb, 1) ||
		    ra->nleaves == sizeof(ra->leaves) / sizeof(ra->leaves[0]))
			continue;
		xk_dev_readahead(mp->dev, xk_fsb_to_daddr(mp, fsb) <<
				 XK_BBSHIFT, mp->g.blocksize);
		ra->leaves[ra->nleaves++] = (struct ra_leaf){ fsb, due };
	}
}

/* Read the bmbt leaves due by now (unverified) and hint their extents. */
static void
peek_leaves(struct ra_plan *ra, size_t i)
{
	struct xk_mount *mp = ra->mp;
	size_t k = 0, out = 0;

	for (; k < ra->nleaves; k++) {
		const struct xk_btree_lblock *h;
		struct xk_buf *bp;
		uint32_t n;

		if (ra->leaves[k].due > i) {
			ra->leaves[out++] = ra->leaves[k];
			continue;
		}
		if (xk_buf_read_ctx(mp, xk_fsb_to_daddr(mp, ra->leaves[k].fsb),
				    mp->g.blocksize, NULL, -1, 0,
				    XK_READ_NOVERIFY, &bp))
			continue;
		h = (const struct xk_btree_lblock *)bp->data;
		n = xk_be16_get(h->bb_numrecs);
		if (mp->g.blocksize > sizeof(*h) &&
		    xk_be32_get(h->bb_magic) == XK_BMAP_CRC_MAGIC &&
		    xk_be16_get(h->bb_level) == 0 &&
		    n <= (mp->g.blocksize - sizeof(*h)) /
			 sizeof(struct xk_bmbt_rec))
			hint_recs(mp, bp->data + sizeof(*h), n);
		xk_buf_release(bp);
	}
	ra->nleaves = out;
}

/*
 * Peek at chunk c: read its clusters into the cache unverified (the
 * scan's own read verifies them when it gets there, as if it had read
 * them itself) and hint the blocks of its directories.  Reading those
 * only when the scan reached each directory waited for the disk once
 * per directory on a cold cache: on the benchmark, most of the waits.
 */
static void
peek_chunk(struct ra_plan *ra, size_t c)
{
	struct xk_mount *mp = ra->mp;
	const struct xk_inobt_rec *r = &ra->chunks[c];
	uint32_t start = xk_be32_get(r->ir_startino);
	unsigned int isize = mp->g.inodesize;
	unsigned int i = 0;

	while (i < XK_INODES_PER_CHUNK) {
		uint64_t ino = xk_agino_to_ino(mp, ra->agno, start + i);
		struct xk_imap im;
		struct xk_buf *bp;
		unsigned int per;

		if (xk_imap(mp, ino, &im) || !im.len || im.len < isize)
			return;
		per = im.len / isize;
		/* The cluster of a sparse hole is not there to read. */
		if (mp->g.has_sparse &&
		    ((xk_be16_get(r->ir_u.sp.ir_holemask) >>
		      (i / XK_INODES_PER_HOLEMASK_BIT)) & 1)) {
			i += per - (im.offset / isize);
			continue;
		}
		if (xk_buf_read_ctx(mp, im.daddr, im.len, NULL, -1, 0,
				    XK_READ_NOVERIFY, &bp))
			return;
		for (unsigned int off = 0; off + isize <= im.len; off += isize)
			peek_dir(ra, (const struct xk_dinode *)(bp->data + off),
				 c > RA_PEEK / 2 ? c - RA_PEEK / 2 : 0);
		xk_buf_release(bp);
		i += per - (im.offset / isize);
	}
}

void
ra_step(struct ra_plan *ra, size_t i)
{
	/* Ranges the walk has reached no longer count as ahead of it. */
	while (ra->done < i && ra->done < ra->n) {
		if (ra->done < ra->hinted)
			ra->ahead -= ra->r[ra->done].len;
		ra->done++;
	}
	/* A walk that overtook its hints skips them. */
	if (ra->hinted < ra->done)
		ra->hinted = ra->done;
	while (ra->hinted < ra->n && (ra->hinted <= i ||
				      ra->ahead < RA_WINDOW))
		hint_next(ra);
	/* Then peek, into what the hints above have asked for. */
	if (ra->peeked < i)
		ra->peeked = i;
	for (; ra->chunks && ra->peeked < ra->n && ra->peeked <= i + RA_PEEK;
	     ra->peeked++)
		if (ra->r[ra->peeked].len)
			peek_chunk(ra, ra->peeked);
	if (ra->nleaves)
		peek_leaves(ra, i);
}

void
ra_free(struct ra_plan *ra)
{
	free(ra->r);
	ra->r = NULL;
	ra->n = ra->cap = 0;
}

void
ra_chunks(struct ra_plan *ra, struct xk_mount *mp, uint32_t agno,
	  const struct xk_inobt_rec *chunks, size_t nchunks)
{
	ra_init(ra, mp->dev);
	ra->mp = mp;
	ra->agno = agno;
	ra->chunks = chunks;
	for (size_t i = 0; i < nchunks; i++) {
		uint32_t agino = xk_be32_get(chunks[i].ir_startino);
		uint32_t agbno = xk_agino_to_agbno(mp, agino);

		/* One range per chunk, so that chunk i is range i. */
		if (xk_agbext_valid(mp, agno, agbno, mp->g.ialloc_blks))
			ra_add(ra, xk_agb_to_daddr(mp, agno, agbno) <<
				   XK_BBSHIFT,
			       (uint64_t)mp->g.ialloc_blks <<
				       mp->g.blocklog);
		else
			ra_add(ra, 0, 0);
	}
}
