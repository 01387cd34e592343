// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Finishing a file mapping exchange (the work of an XMI log intent) on a
 * loaded filesystem, as the kernel's log recovery does: the remaining
 * range of two files is walked one mapping at a time, and each pair of
 * mappings that differ is exchanged: unmapped from both files and mapped
 * into the other one at the same file offsets.  Blocks never change
 * hands with the free space and refcounts stay as they are (both files
 * keep one reference each); only the block maps, the reverse mappings
 * (with the rmapbt), the block counts and, on request, the file sizes
 * change.
 *
 * The kernel exchanges a mapping per transaction; here both files' maps
 * are read once, the exchange runs on those lists (merging neighbours as
 * the kernel's mapping code merges them, so the extent counts come out
 * the same) and each inode is written once.  Recovery rebuilds the
 * request from the logged ranges and the inodes as they are now, not
 * from everything logged: whether to clear the reflink flags is decided
 * again.  The new sizes are taken the same way, from the files as they
 * are now (each gets the other's size), not from the sizes the XMI
 * logged: after a cut inside an exchange, a file that took mappings past
 * its end has grown since it began, and the other file gets that
 * half-grown size, as the kernel's recovery gives it (seen on the host's
 * 6.18, log_xmi under load: b2 ends at a2's size at the cut, not at the
 * logged 262144).  And
 * once every intent is finished, the mount frees what each file maps
 * past the size it had when recovery took it (xk_bld_trim_eof).  That is
 * copied here, so the result matches a kernel mount.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/log.h>

#include "write_priv.h"

#define XF_HOLE		UINT64_MAX

/* One mapping or hole of a fork, clipped to what a step looks at. */
struct xf_irec {
	uint64_t	loff;
	uint64_t	fsbno;		/* XF_HOLE for a hole */
	uint64_t	len;
	int		unwritten;
};

/* One inode taking part: its data fork in memory and what changes. */
struct xf_inode {
	struct xk_mount	*mp;
	uint64_t	ino;
	uint16_t	mode;
	uint16_t	diflags;
	uint64_t	size;
	uint64_t	vfs_size;	/* the size when recovery took it */
	uint64_t	flags2;
	int64_t		data_delta;	/* data blocks mapped, change */
	struct xk_bld_ext *ext;		/* fork mappings, loff order */
	uint64_t	next, ext_alloc;
	uint64_t	*bmbt;		/* its bmbt blocks (fsb) */
	uint64_t	nbmbt, bmbt_alloc;
	int		upgrade;	/* give it large extent counters */
	struct bld_bshape shape;	/* its bmbt as the kernel keeps it */
	int		err;
	const char	*why;
};

static void
xf_free(struct xf_inode *xi)
{
	free(xi->ext);
	free(xi->bmbt);
	xi->ext = NULL;
	xi->bmbt = NULL;
	bld_bshape_free(&xi->shape);
}

static void
xf_bad(struct xf_inode *xi, int err, const char *why)
{
	if (!xi->err) {
		xi->err = err;
		xi->why = why;
	}
}

/*
 * Stamp the checksum of a bmbt block just built: it is dirty in the
 * cache and gets its checksum when written, so until then only its CRC
 * fails (the reader forgives that with XK_FORK_DIRTY_CRC_OK).
 */
static int
xf_stamp(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	(void)ctx;
	(void)level;
	(void)bno;
	if ((bp->flags & XK_BUF_DIRTY) &&
	    bp->len >= sizeof(struct xk_btree_lblock))
		xk_cksum_update(bp->data, bp->len,
				offsetof(struct xk_btree_lblock, bb_crc));
	return 0;
}

/*
 * Read inode ino and its data fork for the exchange.  Rules: 1. the
 * inode passes the inode verifier; 2. it is in use (recovery looks it up
 * by handle, and a free inode is not found); 3. its generation is the
 * logged one (when given); 4. it is a regular file (the kernel exchanges directories
 * and symlinks only for online repair, and then converts them back to
 * short form afterwards, which is not done here); 5. it is not a
 * realtime file; 6. its data fork is in extents or btree format.
 */
static int
xf_load(struct xk_bld *b, uint64_t ino, const uint32_t *gen,
	struct xf_inode *xi)
{
	struct xk_mount *mp = b->mp;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	struct xk_fail f;
	int err, fmt;

	memset(xi, 0, sizeof(*xi));
	xi->mp = mp;
	xi->ino = ino;
	if (!xk_ino_valid(mp, ino)) {
		xf_bad(xi, XK_ECORRUPT, "no such inode number");
		return xi->err;
	}
	err = xk_inode_read(mp, ino, 0, &bp, &dip);
	if (err) {
		xf_bad(xi, err, "its inode cannot be read or is damaged");
		return xi->err;
	}
	err = xk_dinode_verify(mp, ino, dip, &f);
	fmt = dip->di_format;
	xi->mode = xk_be16_get(dip->di_mode);
	xi->size = xk_be64_get(dip->di_size);
	xi->vfs_size = xi->size;
	xi->diflags = xk_be16_get(dip->di_flags);
	xi->flags2 = dip->di_version >= 3 ? xk_be64_get(dip->di_flags2) : 0;
	if (err)
		xf_bad(xi, err, "its inode fails verification");
	else if (xi->mode == 0)
		xf_bad(xi, XK_ECORRUPT, "the inode is free");
	else if (gen && xk_be32_get(dip->di_gen) != *gen)
		xf_bad(xi, XK_ECORRUPT, "its generation is not the logged "
		       "one (the file was deleted and the inode reused)");
	else if ((xi->mode & XK_S_IFMT) != XK_S_IFREG)
		xf_bad(xi, XK_EUNSUPP, "it is not a regular file (exchanges "
		       "of directories and symlinks come from online repair "
		       "and are not finished offline)");
	else if (xk_be16_get(dip->di_flags) & XK_DIFLAG_REALTIME)
		xf_bad(xi, XK_EUNSUPP, "it is a realtime file");
	else if (fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE)
		xf_bad(xi, XK_ECORRUPT, "its data fork is neither in extents "
		       "nor in btree format");
	if (!xi->err) {
		struct bld_fork_read fr;

		/*
		 * Rules of each mapping: the fork reader's (fork.h); blocks
		 * an earlier edit of this session built may fail their CRC
		 * alone (xf_stamp).
		 */
		err = bld_fork_read(mp, ino, dip, XK_DATA_FORK, XK_FORK_CHECK |
				    XK_FORK_DIRTY_CRC_OK, &fr);
		if (err) {
			xf_bad(xi, err, bld_fork_why(fr.check, err));
			bld_fork_read_free(&fr);
		} else {
			xi->ext = fr.ext;
			xi->next = fr.next;
			xi->ext_alloc = fr.alloc;
			xi->bmbt = fr.bmbt;
			xi->nbmbt = fr.nbmbt;
			xi->bmbt_alloc = fr.bmbt_alloc;
			xi->shape = fr.shape;
		}
	}
	xk_buf_release(bp);
	return xi->err;
}

/* The mapping or hole of xi at off, at most max blocks long. */
static void
xf_lookup(const struct xf_inode *xi, uint64_t off, uint64_t max,
	  struct xf_irec *r)
{
	uint64_t lo = 0, hi = xi->next;

	/* First mapping that ends after off. */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (xi->ext[mid].loff + xi->ext[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	r->loff = off;
	r->unwritten = 0;
	if (lo < xi->next && xi->ext[lo].loff <= off) {
		const struct xk_bld_ext *e = &xi->ext[lo];
		uint64_t skip = off - e->loff;

		r->fsbno = (e->fsbno & ~BLD_EXT_UNWRITTEN) + skip;
		r->unwritten = !!(e->fsbno & BLD_EXT_UNWRITTEN);
		r->len = e->len - skip;
	} else {
		r->fsbno = XF_HOLE;
		r->len = lo < xi->next ? xi->ext[lo].loff - off : max;
	}
	if (r->len > max)
		r->len = max;
}

/*
 * Unmap [off, off + len) of xi, which lies inside one mapping (what
 * xf_lookup returned): the mapping shrinks or splits.
 */
static int
xf_unmap(struct xf_inode *xi, uint64_t off, uint64_t len)
{
	uint64_t i;
	struct xk_bld_ext e;
	int err;

	for (i = 0; i < xi->next; i++)
		if (xi->ext[i].loff <= off &&
		    off < xi->ext[i].loff + xi->ext[i].len)
			break;
	if (i == xi->next)
		return 0;
	e = xi->ext[i];
	if (off + len > e.loff + e.len)
		return XK_ECORRUPT;
	if (off > e.loff && off + len < e.loff + e.len) {
		/* A hole in the middle: the right part becomes a mapping. */
		err = bld_grow((void **)&xi->ext, &xi->ext_alloc,
			       xi->next + 1, sizeof(*xi->ext));
		if (err)
			return err;
		memmove(&xi->ext[i + 2], &xi->ext[i + 1],
			(xi->next - i - 1) * sizeof(*xi->ext));
		xi->next++;
		xi->ext[i].len = (uint32_t)(off - e.loff);
		xi->ext[i + 1] = (struct xk_bld_ext){
			off + len, e.fsbno + (off + len - e.loff),
			(uint32_t)(e.loff + e.len - off - len) };
		/* Inserted where the cursor steps on from the left part. */
		bld_bshape_insert(&xi->shape, i + 1, 1);
	} else if (off > e.loff) {
		xi->ext[i].len = (uint32_t)(off - e.loff);
	} else if (off + len < e.loff + e.len) {
		xi->ext[i].loff += len;
		xi->ext[i].fsbno += len;
		xi->ext[i].len -= (uint32_t)len;
	} else {
		bld_bshape_delete(&xi->shape, i);
		memmove(&xi->ext[i], &xi->ext[i + 1],
			(xi->next - i - 1) * sizeof(*xi->ext));
		xi->next--;
	}
	bld_bshape_settle(&xi->shape, xi->next);
	return 0;
}

/* Whether mapping a is followed on disk and in the file by mapping b. */
static int
xf_contig(const struct xk_bld_ext *a, const struct xk_bld_ext *b)
{
	return a->loff + a->len == b->loff &&
	       (a->fsbno & ~BLD_EXT_UNWRITTEN) + a->len ==
	       (b->fsbno & ~BLD_EXT_UNWRITTEN) &&
	       (a->fsbno & BLD_EXT_UNWRITTEN) ==
	       (b->fsbno & BLD_EXT_UNWRITTEN);
}

/*
 * Map r into the hole at its offset, joining a neighbour it continues
 * (both when the three fit one extent), as the kernel's mapping code
 * does when it fills a hole.
 */
static int
xf_map(struct xf_inode *xi, const struct xf_irec *r)
{
	struct xk_bld_ext e = {
		r->loff, r->fsbno | (r->unwritten ? BLD_EXT_UNWRITTEN : 0),
		(uint32_t)r->len };
	uint64_t i = 0;
	int left, right, err;

	while (i < xi->next && xi->ext[i].loff < e.loff)
		i++;
	if ((i > 0 && xi->ext[i - 1].loff + xi->ext[i - 1].len > e.loff) ||
	    (i < xi->next && e.loff + e.len > xi->ext[i].loff))
		return XK_ECORRUPT;	/* not a hole */
	left = i > 0 && xf_contig(&xi->ext[i - 1], &e) &&
	       (uint64_t)xi->ext[i - 1].len + e.len <= XK_MAX_BMBT_EXTLEN;
	right = i < xi->next && xf_contig(&e, &xi->ext[i]) &&
		(uint64_t)xi->ext[i].len + e.len <= XK_MAX_BMBT_EXTLEN;
	if (left && right && (uint64_t)xi->ext[i - 1].len + e.len +
			     xi->ext[i].len > XK_MAX_BMBT_EXTLEN)
		right = 0;
	if (left && right) {
		/* The right one is looked up and deleted, the left grows. */
		bld_bshape_delete(&xi->shape, i);
		xi->ext[i - 1].len += e.len + xi->ext[i].len;
		memmove(&xi->ext[i], &xi->ext[i + 1],
			(xi->next - i - 1) * sizeof(*xi->ext));
		xi->next--;
		bld_bshape_settle(&xi->shape, xi->next);
		return 0;
	}
	if (left) {
		xi->ext[i - 1].len += e.len;
		return 0;
	}
	if (right) {
		xi->ext[i].loff = e.loff;
		xi->ext[i].fsbno -= e.len;
		xi->ext[i].len += e.len;
		return 0;
	}
	err = bld_grow((void **)&xi->ext, &xi->ext_alloc, xi->next + 1,
		       sizeof(*xi->ext));
	if (err)
		return err;
	bld_bshape_insert(&xi->shape, i, 0);
	memmove(&xi->ext[i + 1], &xi->ext[i],
		(xi->next - i) * sizeof(*xi->ext));
	xi->ext[i] = e;
	xi->next++;
	bld_bshape_settle(&xi->shape, xi->next);
	return 0;
}

/* Move the reverse mapping of r from one owner and offset to another. */
static int
xf_rmap_move(struct xk_bld *b, const struct xf_irec *r, uint64_t from,
	     uint64_t to, uint64_t to_off)
{
	unsigned int fl = r->unwritten ? XK_BLD_UNWRITTEN : 0;
	int err;

	if (!b->mp->g.has_rmapbt || r->fsbno == XF_HOLE)
		return 0;
	err = xk_bld_rmap_update(b, XK_RMAP_EXTENT_UNMAP, from, r->fsbno,
				 r->loff, (uint32_t)r->len, fl);
	if (!err)
		err = xk_bld_rmap_update(b, XK_RMAP_EXTENT_MAP, to, r->fsbno,
					 to_off, (uint32_t)r->len, fl);
	return err;
}

/* A file's size after a step maps blocks up to end (kernel: never past
 * the new size asked for, never down). */
static void
xf_grow_size(struct xk_mount *mp, struct xf_inode *xi, uint64_t end,
	     int64_t new_size)
{
	uint64_t bytes;

	if (new_size < 0)
		return;
	bytes = end << mp->g.blocklog;
	if (bytes > (uint64_t)new_size)
		bytes = (uint64_t)new_size;
	if (bytes > xi->size)
		xi->size = bytes;
}

/*
 * Blocks a truncate takes away, released as the kernel's truncate does:
 * the reverse mapping goes; on a reflink filesystem the refcount drops
 * (what reaches zero is freed), otherwise the blocks are freed.
 */
static int
xf_release(struct xk_bld *b, struct xf_inode *xi, const struct xk_bld_ext *e)
{
	uint64_t fsb = e->fsbno & ~BLD_EXT_UNWRITTEN;
	uint32_t agno = xk_fsb_to_agno(b->mp, fsb);
	int err;

	if (agno >= b->agcount || !xk_fsbext_valid(b->mp, fsb, e->len))
		return XK_ECORRUPT;
	if (b->mp->g.has_rmapbt) {
		err = xk_bld_rmap_update(b, XK_RMAP_EXTENT_UNMAP, xi->ino, fsb,
					 e->loff, e->len, 0);
		if (err)
			return err;
	}
	if (b->mp->g.has_reflink)
		return xk_bld_refcount_update(b, XK_REFCOUNT_DECREASE, fsb,
					      e->len);
	err = bld_free_add(&b->ags[agno], xk_fsb_to_agbno(b->mp, fsb),
			   e->len);
	b->ags[agno].dirty = 1;
	return err == -EEXIST ? XK_ECORRUPT : err;
}

/*
 * What the kernel does next to an inode its recovery took: when recovery
 * lets go of it the mount evicts it, and eviction frees the blocks
 * mapped past its end of file, the end being the size the inode had
 * when it was read (the exchange changes only the on-disk size).  So a
 * file that grew in the exchange loses the mappings past its old size:
 * they become holes below the new size.  Files with preallocated space
 * or append-only, and empty files, are left alone as the kernel leaves
 * them.
 */
static int
xf_trim_eof(struct xk_bld *b, struct xf_inode *xi, int *cut_any)
{
	uint64_t end = (xi->vfs_size + b->mp->g.blocksize - 1) >>
		       b->mp->g.blocklog;
	uint64_t keep = 0, first = UINT64_MAX, left, done = 0;
	int err;

	*cut_any = 0;
	if (xi->vfs_size == 0 ||
	    (xi->diflags & (XK_DIFLAG_PREALLOC | XK_DIFLAG_APPEND)))
		return 0;
	for (uint64_t i = 0; i < xi->next; i++) {
		struct xk_bld_ext *e = &xi->ext[i];
		struct xk_bld_ext cut = *e;

		if (e->loff + e->len <= end) {
			keep = i + 1;
			continue;
		}
		if (first == UINT64_MAX)
			first = i;
		if (e->loff < end) {
			/* The part from the old end of file on goes. */
			cut.loff = end;
			cut.fsbno += end - e->loff;
			cut.len = (uint32_t)(e->loff + e->len - end);
			e->len = (uint32_t)(end - e->loff);
			keep = i + 1;
		}
		err = xf_release(b, xi, &cut);
		if (err)
			return err;
		xi->data_delta -= cut.len;
		*cut_any = 1;
	}
	/*
	 * The kernel's truncate works from the last mapping down, two
	 * mappings a call, each call ending with the format conversions.
	 */
	left = xi->next;
	for (uint64_t k = xi->next; first != UINT64_MAX && k-- > first;) {
		if (k >= keep) {
			bld_bshape_delete(&xi->shape, k);
			left--;
		}
		if (++done % 2 == 0 || k == first)
			bld_bshape_settle(&xi->shape, left);
	}
	xi->next = keep;
	return 0;
}

/* Give back the bmbt blocks of xi's old fork (the writer builds anew). */
static int
xf_release_bmbt(struct xk_bld *b, struct xf_inode *xi)
{
	for (uint64_t i = 0; i < xi->nbmbt; i++) {
		uint32_t agno = xk_fsb_to_agno(b->mp, xi->bmbt[i]);
		uint32_t agbno = xk_fsb_to_agbno(b->mp, xi->bmbt[i]);
		int err;

		if (agno >= b->agcount ||
		    !xk_fsbext_valid(b->mp, xi->bmbt[i], 1))
			return XK_ECORRUPT;
		if (b->mp->g.has_rmapbt) {
			err = xk_bld_rmap_update(b, XK_RMAP_EXTENT_UNMAP,
						 xi->ino, xi->bmbt[i], 0, 1,
						 XK_BLD_BMBT);
			if (err)
				return err;
		}
		err = bld_free_add(&b->ags[agno], agbno, 1);
		if (err)
			return err == -EEXIST ? XK_ECORRUPT : err;
		b->ags[agno].dirty = 1;
	}
	xi->nbmbt = 0;
	return 0;
}

/*
 * Write xi's new data fork, size, flags and block count into its inode.
 * On a filesystem with large extent counters the inode is given them
 * (the kernel upgrades both inodes before it exchanges).
 */
static int
xf_store(struct xk_bld *b, struct xf_inode *xi)
{
	struct xk_mount *mp = b->mp;
	struct xk_bld_inode tmp = { .ino = xi->ino };
	struct xk_buf *bp;
	struct xk_dinode *dip;
	uint64_t nblocks = 0, old_nbmbt = xi->nbmbt, nb;
	uint32_t anext;
	uint8_t fmt;
	int err;

	if (xi->next > xk_max_nextents(mp->g.has_nrext64, XK_DATA_FORK))
		return -EFBIG;
	err = xf_release_bmbt(b, xi);
	if (err)
		return err;
	err = xk_inode_read(mp, xi->ino, 0, &bp, &dip);
	if (err)
		return err;
	anext = xk_dinode_anextents(dip);
	tmp.data.format = XK_BLD_FMT_EXTENTS;
	tmp.data.ext = xi->ext;
	tmp.data.next = xi->next;
	tmp.data.ext_alloc = xi->ext_alloc;
	for (uint64_t i = 0; i < xi->next; i++)
		tmp.data.nblocks += xi->ext[i].len;
	err = bld_write_fork_shaped(b, &tmp, XK_DATA_FORK, xk_dfork_dptr(dip),
				    xk_dfork_dsize(dip, mp->g.inodesize),
				    &fmt, &nblocks, &xi->shape);
	if (!err) {
		nb = xk_be64_get(dip->di_nblocks) - old_nbmbt +
		     (uint64_t)xi->data_delta +
		     (nblocks - tmp.data.nblocks);
		dip->di_format = fmt;
		xk_be64_set(&dip->di_nblocks, nb);
		xk_be64_set(&dip->di_size, xi->size);
		if (mp->g.has_nrext64 && xi->upgrade)
			xi->flags2 |= XK_DIFLAG2_NREXT64;
		xk_be64_set(&dip->di_flags2, xi->flags2);
		xk_dinode_set_nextents(dip, xi->next, anext);
		xk_inode_init_crc(mp, dip);
		xk_buf_dirty(bp);
	}
	if (!err)
		err = bld_bmbt_stamp(b, xi->ino, dip, XK_DATA_FORK);
	xk_buf_release(bp);
	return err;
}

/*
 * Later edits of the same session (the BUIs of the step a crash cut)
 * read a bmbt just built back through the verifiers: checksum its
 * blocks now rather than when they are written.
 */
int
bld_bmbt_stamp(struct xk_bld *b, uint64_t ino, const struct xk_dinode *dip,
	       int whichfork)
{
	int err;
	const uint8_t *p = xk_dfork_ptr(dip, whichfork);
	struct xk_btree_walk w = {
		.ops = &xk_bmbt_ops, .agno = -1, .owner = ino,
		.iroot = p,
		.iroot_size = xk_dfork_size(dip, b->mp->g.inodesize,
					    whichfork),
		.flags = XK_READ_NOVERIFY, .block_fn = xf_stamp,
	};

	if (xk_dfork_format(dip, whichfork) != XK_DINODE_FMT_BTREE)
		return 0;
	w.levels = xk_get_be16(p) + 1u;
	/* The tree was just built: only memory or I/O can stop the walk. */
	err = xk_btree_walk(b->mp, &w);
	return xk_err_operational(err) ? err : 0;
}

/*
 * One step: each file's mapping (or hole) of the pair leaves it and is
 * mapped into the other file at the same offsets.
 */
static int
xf_step(struct xk_bld *b, struct xf_inode *i1, struct xf_inode *i2,
	struct xf_irec r1, struct xf_irec r2, uint64_t s1, uint64_t s2,
	int64_t isize1, int64_t isize2, struct xk_bld_exchange_result *res)
{
	int err;

	err = xf_unmap(i1, s1, r1.len);
	if (!err)
		err = xf_unmap(i2, s2, r1.len);
	if (!err)
		err = xf_rmap_move(b, &r1, i1->ino, i2->ino, s2);
	if (!err)
		err = xf_rmap_move(b, &r2, i2->ino, i1->ino, s1);
	if (err) {
		res->why = "a reverse mapping or fork edit failed";
		return err;
	}
	/* Each takes the other's mapping at its own offset. */
	r1.loff = s2;
	r2.loff = s1;
	if (r2.fsbno != XF_HOLE) {
		err = xf_map(i1, &r2);
		i1->data_delta += (int64_t)r1.len;
		i2->data_delta -= (int64_t)r1.len;
	}
	if (!err && r1.fsbno != XF_HOLE) {
		err = xf_map(i2, &r1);
		i2->data_delta += (int64_t)r1.len;
		i1->data_delta -= (int64_t)r1.len;
	}
	if (err) {
		res->why = "a mapping would land on another one";
		return err;
	}
	xf_grow_size(b->mp, i1, s1 + r1.len, isize1);
	xf_grow_size(b->mp, i2, s2 + r1.len, isize2);
	res->steps++;
	return 0;
}

/*
 * The exchange loop (the kernel's find-mappings and one-step): from the
 * two start offsets on, take file1's mapping or hole, skip it when only
 * written blocks of file1 are exchanged and it is not written, clip it
 * to file2's mapping or hole there, skip the pair when both name the
 * same blocks (both holes, or the same extent: a state mismatch there is
 * corruption), else exchange the pair; then move on past it.
 *
 * In the order the kernel's recovery does it: the first step's mapping
 * updates are queued behind the rest of the exchange, so they land last
 * (after every later step).  The ranges do not overlap, so only the
 * bmbt edits' order (and so the trees' shapes) depends on it.
 */
static int
xf_exchange(struct xk_bld *b, const struct xk_bld_exchange *x,
	    struct xf_inode *i1, struct xf_inode *i2, int64_t isize1,
	    int64_t isize2, struct xk_bld_exchange_result *res)
{
	uint64_t s1 = x->startoff1, s2 = x->startoff2, left = x->blockcount;
	uint64_t f1 = 0, f2 = 0;
	struct xf_irec q1, q2;
	int err, queued = 0;

	while (left > 0) {
		struct xf_irec r1, r2;

		xf_lookup(i1, s1, left, &r1);
		if ((x->flags & XK_EXCHMAPS_INO1_WRITTEN) &&
		    (r1.fsbno == XF_HOLE || r1.unwritten))
			goto next;
		xf_lookup(i2, s2, r1.len, &r2);
		r1.len = r2.len < r1.len ? r2.len : r1.len;
		if (r1.fsbno == r2.fsbno) {
			if (r1.unwritten != r2.unwritten) {
				res->why = "the two files map the same blocks "
					   "in different states";
				return XK_ECORRUPT;
			}
			goto next;
		}
		if (queued++ == 0) {
			q1 = r1;
			q2 = r2;
			f1 = s1;
			f2 = s2;
		} else {
			err = xf_step(b, i1, i2, r1, r2, s1, s2, isize1,
				      isize2, res);
			if (err)
				return err;
		}
next:
		s1 += r1.len;
		s2 += r1.len;
		left -= r1.len;
	}
	if (queued)
		return xf_step(b, i1, i2, q1, q2, f1, f2, isize1, isize2,
			       res);
	return 0;
}

int
xk_bld_exchange_mappings(struct xk_bld *b, const struct xk_bld_exchange *x,
			 struct xk_bld_exchange_result *res)
{
	struct xk_mount *mp = b->mp;
	struct xf_inode i1, i2, *p2 = &i2;
	int64_t isize1 = -1, isize2 = -1;
	uint64_t clear1 = 0, clear2 = 0;
	unsigned int rs = 0;
	int err;

	memset(res, 0, sizeof(*res));
	memset(&i2, 0, sizeof(i2));
	if (x->flags & XK_EXCHMAPS_ATTR_FORK) {
		res->why = "exchanges of attr forks (online repair) are "
			   "not finished offline";
		return XK_EUNSUPP;
	}
	err = xf_load(b, x->ino1, &x->gen1, &i1);
	if (err) {
		res->bad_ino = x->ino1;
		res->why = i1.why;
		xf_free(&i1);
		return err;
	}
	if (x->ino2 == x->ino1) {
		if (x->gen2 != x->gen1) {
			res->bad_ino = x->ino2;
			res->why = "its generation is not the logged one";
			xf_free(&i1);
			return XK_ECORRUPT;
		}
		p2 = &i1;
	} else {
		err = xf_load(b, x->ino2, &x->gen2, &i2);
		if (err) {
			res->bad_ino = x->ino2;
			res->why = i2.why;
			goto out;
		}
	}
	/*
	 * As recovery rebuilds the request: each file's new size is the
	 * other one's size now (the logged sizes are not used), and the
	 * reflink flags are exchanged (each cleared after both were set)
	 * only when exactly one file has it and the whole of both files is
	 * exchanged as they are now.
	 */
	if (x->flags & XK_EXCHMAPS_SET_SIZES) {
		isize1 = (int64_t)p2->size;
		isize2 = (int64_t)i1.size;
	}
	if (i1.flags2 & XK_DIFLAG2_REFLINK)
		rs |= 1;
	if (p2->flags2 & XK_DIFLAG2_REFLINK)
		rs |= 2;
	if ((rs == 1 || rs == 2) && x->startoff1 == 0 && x->startoff2 == 0 &&
	    x->blockcount == (i1.size + mp->g.blocksize - 1) >>
			     mp->g.blocklog &&
	    x->blockcount == (p2->size + mp->g.blocksize - 1) >>
			     mp->g.blocklog) {
		clear1 = (rs & 1) ? XK_DIFLAG2_REFLINK : 0;
		clear2 = (rs & 2) ? XK_DIFLAG2_REFLINK : 0;
	}
	/* Shared blocks may move to the other file: flag both. */
	if (rs) {
		i1.flags2 |= XK_DIFLAG2_REFLINK;
		p2->flags2 |= XK_DIFLAG2_REFLINK;
	}
	err = xf_exchange(b, x, &i1, p2, isize1, isize2, res);
	if (err)
		goto out;
	if (x->flags & XK_EXCHMAPS_SET_SIZES) {
		i1.size = (uint64_t)isize1;
		p2->size = (uint64_t)isize2;
	}
	i1.flags2 &= ~clear1;
	p2->flags2 &= ~clear2;
	i1.upgrade = p2->upgrade = 1;
	res->size1 = i1.vfs_size;
	res->size2 = p2->vfs_size;
	err = xf_store(b, &i1);
	if (err) {
		res->bad_ino = i1.ino;
		res->why = "writing its new block map failed";
		goto out;
	}
	if (p2 != &i1) {
		err = xf_store(b, p2);
		if (err) {
			res->bad_ino = p2->ino;
			res->why = "writing its new block map failed";
		}
	}
out:
	xf_free(&i1);
	xf_free(&i2);
	return err;
}

int
xk_bld_trim_eof(struct xk_bld *b, uint64_t ino, uint64_t size,
		const char **why)
{
	struct xf_inode xi;
	int err, cut = 0;

	*why = NULL;
	err = xf_load(b, ino, NULL, &xi);
	if (!err) {
		xi.vfs_size = size;
		err = xf_trim_eof(b, &xi, &cut);
		if (err)
			xi.why = "freeing its blocks past the end of file failed";
	}
	if (!err && cut) {
		err = xf_store(b, &xi);
		if (err)
			xi.why = "writing its new block map failed";
	}
	*why = xi.why;
	xf_free(&xi);
	return err;
}
