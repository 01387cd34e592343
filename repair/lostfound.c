// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reconnecting orphans: inodes in use that no directory entry names are
 * given an entry in /lost+found named by their inode number, as
 * xfs_repair does.  /lost+found is found by name in the root directory
 * or created: a free inode slot the scan saw (not one any entry still
 * names, so no stale entry can come to name it) becomes an empty
 * short-form directory, and the root gets its entry.  A reconnected
 * directory's ".." is pointed at /lost+found.
 *
 * Everything here edits short-form directories in place (the root and
 * /lost+found), so it needs no block allocation; when an entry would not
 * fit, the orphans left stay as findings.  Link counts, and the inode
 * btrees' view of the new directory inode, are corrected by the next
 * check pass (link counts) and the AG rebuild.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <xfskit/init.h>
#include <xfskit/format/dir.h>

#include "repair.h"

#define LOST_FOUND	"lost+found"

void
plan_orphan(struct repair_ctx *rc, const struct inode_info *ii)
{
	if (rc->no_modify)
		return;
	if (rc->norphans == rc->caporphans) {
		size_t ncap = rc->caporphans ? rc->caporphans * 2 : 16;
		struct orphan *nv = realloc(rc->orphans, ncap * sizeof(*nv));

		if (!nv)
			return;
		rc->orphans = nv;
		rc->caporphans = ncap;
	}
	rc->orphans[rc->norphans++] = (struct orphan){ ii->ino, ii->mode,
						       ii->sfdir };
}

/* The inode of name in a short-form directory, or 0. */
static uint64_t
sf_lookup(struct repair_ctx *rc, const struct xk_dinode *dip,
	  const char *name)
{
	const struct xk_dir2_sf_hdr *h = (const void *)xk_dfork_dptr(dip);
	unsigned int fsize = xk_dfork_dsize(dip, rc->mp->g.inodesize);
	uint64_t size = xk_be64_get(dip->di_size);
	const uint8_t *end = (const uint8_t *)h + (size < fsize ? size : fsize);
	const struct xk_dir2_sf_entry *e;
	size_t len = strlen(name);
	int ftype = rc->mp->g.has_ftype;

	if (size < xk_dir2_sf_hdr_size(h->i8count))
		return 0;
	e = xk_dir2_sf_firstentry(h);
	for (unsigned int k = 0; k < h->count; k++) {
		if ((const uint8_t *)e + sizeof(*e) > end ||
		    (const uint8_t *)e + xk_dir2_sf_entsize(h, e->namelen,
							    ftype) > end)
			break;
		if (e->namelen == len && !memcmp(e->name, name, len))
			return xk_dir2_sf_get_ino(h, e, ftype);
		e = xk_dir2_sf_nextentry(h, e, ftype);
	}
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/*
 * A free inode slot for /lost+found: free as the scan saw it, named by
 * no entry, not touched by this pass's plans.
 */
static uint64_t
pick_free_inode(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	uint64_t *named = malloc((rc->nedges + rc->ifix.n + 1) *
				 sizeof(*named));
	size_t nn = 0;
	uint64_t found = 0;

	if (!named)
		return 0;
	for (size_t i = 0; i < rc->nedges; i++)
		named[nn++] = rc->edges[i].child;
	for (size_t i = 0; i < rc->ifix.n; i++)
		named[nn++] = rc->ifix.v[i].ino;
	sort_v(named, nn, sizeof(*named), cmp_u64);
	for (uint32_t agno = 0; agno < mp->g.agcount && !found; agno++) {
		const struct ag_scan *as = &rc->ags[agno];

		if (!as->seen_free)
			continue;
		for (size_t i = 0; i < as->nchunks && !found; i++) {
			const struct xk_inobt_rec *r = &as->chunks[i];
			uint16_t holes = mp->g.has_sparse ?
				xk_be16_get(r->ir_u.sp.ir_holemask) : 0;

			for (int k = 0; k < XK_INODES_PER_CHUNK; k++) {
				uint64_t ino;

				if (!((as->seen_free[i] >> k) & 1) ||
				    ((holes >> (k / XK_INODES_PER_HOLEMASK_BIT))
				     & 1))
					continue;
				ino = xk_agino_to_ino(mp, agno,
					xk_be32_get(r->ir_startino) +
					(uint32_t)k);
				if (nn && bsearch(&ino, named, nn,
						  sizeof(*named), cmp_u64))
					continue;
				found = ino;
				break;
			}
		}
	}
	free(named);
	return found;
}

/* Add an entry to the short-form directory dir; XK_ECORRUPT if full. */
static int
sf_add_entry(struct repair_ctx *rc, uint64_t dir, const char *name,
	     uint64_t ino, uint8_t ftype)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	struct sf_add add = { (const uint8_t *)name, (uint8_t)strlen(name),
			      ftype, ino };
	int err = xk_inode_read(rc->mp, dir, 0, &bp, &dip);

	if (err)
		return err;
	err = XK_ECORRUPT;
	if (dip->di_format == XK_DINODE_FMT_LOCAL &&
	    (xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFDIR)
		err = sf_rewrite(rc, dip, 0, 0, &add);
	if (!err) {
		xk_inode_init_crc(rc->mp, dip);
		xk_buf_dirty(bp);
	}
	xk_buf_release(bp);
	return err;
}

static int
create_lost_found(struct repair_ctx *rc, uint64_t *lfp)
{
	struct xk_mount *mp = rc->mp;
	struct xk_inode_init ii = {
		.mode = XK_S_IFDIR | 0700,
		.nlink = 2,
		.format = XK_DINODE_FMT_LOCAL,
		.now_sec = (int64_t)time(NULL),
	};
	struct xk_buf *bp;
	struct xk_dinode *dip;
	uint64_t ino = pick_free_inode(rc);
	int err;

	if (!ino)
		return -ENOSPC;
	/* The root's entry first: if it does not fit, nothing is written. */
	err = sf_add_entry(rc, mp->sb.rootino, LOST_FOUND, ino,
			   XK_DIR3_FT_DIR);
	if (err)
		return err;
	err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp)
		return err;
	xk_inode_init_core(mp, dip, ino, &ii);
	xk_inode_init_sfdir(mp, dip, mp->sb.rootino);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	info(rc, "Created /%s (inode %llu).\n", LOST_FOUND,
	     (unsigned long long)ino);
	*lfp = ino;
	return 0;
}

/* Point a block-form directory's ".." (second entry of block 0) at dir. */
int
set_block_dotdot(struct repair_ctx *rc, uint64_t ino, uint64_t parent)
{
	struct xk_mount *mp = rc->mp;
	struct xk_buf *bp, *dbp;
	struct xk_dinode *dip;
	struct xk_bmbt_irec r = { 0 };
	uint32_t at = sizeof(struct xk_dir3_data_hdr) +
		      xk_dir3_data_entsize(1, mp->g.has_ftype);
	const struct xk_buf_ops *ops;
	int err = xk_inode_read(mp, ino, 0, &bp, &dip);

	if (err)
		return err;
	if (dip->di_format == XK_DINODE_FMT_EXTENTS &&
	    xk_dinode_nextents(dip) > 0)
		xk_bmbt_rec_unpack((const void *)xk_dfork_dptr(dip), &r);
	xk_buf_release(bp);
	if (r.startoff != 0 || !r.blockcount ||
	    !xk_fsbext_valid(mp, r.startblock, 1u << mp->g.dirblklog))
		return XK_ECORRUPT;
	ops = xk_be64_get(dip->di_size) == mp->g.dirblksize ?
	      &xk_dir3_block_buf_ops : &xk_dir3_data_buf_ops;
	err = xk_buf_read_ctx(mp, xk_fsb_to_daddr(mp, r.startblock),
			      mp->g.dirblksize, ops, -1, ino, 0, &dbp);
	if (err)
		return err;
	if (dbp->data[at + 8] != 2 || memcmp(dbp->data + at + 9, "..", 2)) {
		xk_buf_release(dbp);
		return XK_ECORRUPT;
	}
	xk_put_be64(dbp->data + at, parent);
	xk_buf_dirty(dbp);
	xk_buf_release(dbp);
	return 0;
}

int
reconnect_orphans(struct repair_ctx *rc, unsigned long *applied)
{
	struct xk_mount *mp = rc->mp;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	uint64_t lf;
	int err;

	/* Edits of this pass's inode fixes must be read back as written. */
	err = xk_buf_flush(mp);
	if (err)
		return err;
	err = xk_inode_read(mp, mp->sb.rootino, 0, &bp, &dip);
	if (err)
		return 0;	/* no usable root: the orphans stay */
	lf = dip->di_format == XK_DINODE_FMT_LOCAL ?
	     sf_lookup(rc, dip, LOST_FOUND) : 0;
	xk_buf_release(bp);
	if (!lf && create_lost_found(rc, &lf))
		return 0;
	for (size_t i = 0; i < rc->norphans; i++) {
		const struct orphan *o = &rc->orphans[i];
		char name[24];

		if (o->ino == lf)
			continue;
		snprintf(name, sizeof(name), "%llu",
			 (unsigned long long)o->ino);
		if (sf_add_entry(rc, lf, name, o->ino,
				 xk_mode_to_ftype(o->mode)))
			break;	/* full: the rest stay as findings */
		if (rc->verbose)
			info(rc, "        - inode %llu moved to /%s\n",
			     (unsigned long long)o->ino, LOST_FOUND);
		(*applied)++;
		if ((o->mode & XK_S_IFMT) != XK_S_IFDIR)
			continue;
		if (o->sfdir) {
			err = xk_inode_read(mp, o->ino, 0, &bp, &dip);
			if (err)
				continue;
			if (!sf_rewrite(rc, dip, 0, lf, NULL)) {
				xk_inode_init_crc(mp, dip);
				xk_buf_dirty(bp);
			}
			xk_buf_release(bp);
		} else {
			set_block_dotdot(rc, o->ino, lf);
		}
	}
	return 0;
}
