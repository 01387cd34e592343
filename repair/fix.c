// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Repair plans and their application.  The check phases decide, through
 * fix_problem's verdict, what to fix and record it here as a plan; once
 * a check pass is over the plans are applied in one go: superblocks
 * first, then every planned inode (read once, all its fixes applied,
 * CRC recomputed, written back).  The next check pass then sees the
 * result and plans what follows from it (entries naming a cleared inode,
 * link counts, the AG rebuild).
 *
 * Every fix here needs no allocation: it edits blocks in place.  Every
 * write goes through the buffer cache and so through the undo file when
 * one is attached.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/init.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dir.h>

#include "repair.h"
#include "phase_quota.h"

static int
name_ok(const uint8_t *name, unsigned int len)
{
	if (len == 0)
		return 0;
	for (unsigned int i = 0; i < len; i++)
		if (name[i] == 0 || name[i] == '/')
			return 0;
	return 1;
}

/*
 * Rewrite a short-form directory keeping every entry that can be read
 * (inside di_size and the fork, a valid name, a possible inode number)
 * and does not name `drop` (0: drop none); `parent` (0: keep) replaces
 * ".."; `add` (NULL: none) is appended.  i8count, offsets (kept when
 * they increase, else laid out as in a data block) and di_size are
 * recomputed.  XK_ECORRUPT (nothing changed) when the result would not
 * fit the fork.
 */
int
sf_rewrite(struct repair_ctx *rc, struct xk_dinode *dip, uint64_t drop,
	   uint64_t parent, const struct sf_add *add)
{
	struct xk_mount *mp = rc->mp;
	int ftype = mp->g.has_ftype;
	unsigned int fsize = xk_dfork_dsize(dip, mp->g.inodesize);
	uint64_t size = xk_be64_get(dip->di_size);
	uint8_t *fork = xk_dfork_dptr(dip);
	struct xk_dir2_sf_hdr *h = (struct xk_dir2_sf_hdr *)fork;
	struct {
		uint8_t		name[256];
		uint8_t		namelen, ft;
		uint16_t	off;
		uint64_t	ino;
	} *ents;
	unsigned int n = 0, i8 = 0, pos, offset;
	const uint8_t *end;
	const struct xk_dir2_sf_entry *e;
	uint8_t *out;
	int monotone = 1;

	if (fsize < xk_dir2_sf_hdr_size(0))
		return XK_ECORRUPT;
	if (size > fsize)
		size = fsize;
	ents = xk_calloc(256, sizeof(*ents));
	out = xk_calloc(1, fsize);
	if (!ents || !out) {
		free(ents);
		free(out);
		return -ENOMEM;
	}
	end = fork + size;
	if (!parent) {
		parent = size >= xk_dir2_sf_hdr_size(h->i8count) ?
			 xk_dir2_sf_get_parent(h) : 0;
		if (!xk_ino_valid(mp, parent))
			parent = mp->sb.rootino;
	}
	e = size >= xk_dir2_sf_hdr_size(h->i8count) ?
	    xk_dir2_sf_firstentry(h) : (const void *)end;
	for (unsigned int k = 0; k < h->count && n < 255; k++) {
		const struct inode_info *ii;
		uint64_t child;

		if ((const uint8_t *)e + sizeof(*e) > end ||
		    (const uint8_t *)e + xk_dir2_sf_entsize(h, e->namelen,
							    ftype) > end)
			break;
		child = xk_dir2_sf_get_ino(h, e, ftype);
		if (name_ok(e->name, e->namelen) && xk_ino_valid(mp, child) &&
		    child != drop) {
			memcpy(ents[n].name, e->name, e->namelen);
			ents[n].namelen = e->namelen;
			ents[n].ft = xk_dir2_sf_get_ftype(e, ftype);
			/* The file type is the inode's, when it is known. */
			ii = ftype ? inode_info_find(rc, child) : NULL;
			if (ii)
				ents[n].ft = xk_mode_to_ftype(ii->mode);
			ents[n].off = xk_dir2_sf_get_offset(e);
			ents[n].ino = child;
			if (n && ents[n].off <= ents[n - 1].off)
				monotone = 0;
			if (n == 0 && ents[n].off < XK_DIR3_DATA_FIRST_OFFSET)
				monotone = 0;
			n++;
		}
		e = xk_dir2_sf_nextentry(h, e, ftype);
	}
	if (add && n < 255) {
		memcpy(ents[n].name, add->name, add->namelen);
		ents[n].namelen = add->namelen;
		ents[n].ft = add->ftype;
		ents[n].ino = add->ino;
		ents[n].off = n ? (uint16_t)(ents[n - 1].off +
			xk_dir3_data_entsize(ents[n - 1].namelen, ftype)) :
			XK_DIR3_DATA_FIRST_OFFSET;
		n++;
	} else if (add) {
		free(ents);
		free(out);
		return XK_ECORRUPT;
	}
	if (parent > XK_DIR2_MAX_SHORT_INUM)
		i8++;
	for (unsigned int k = 0; k < n; k++)
		if (ents[k].ino > XK_DIR2_MAX_SHORT_INUM)
			i8++;
	h = (struct xk_dir2_sf_hdr *)out;
	h->count = (uint8_t)n;
	h->i8count = (uint8_t)i8;
	xk_dir2_sf_put_parent(h, parent);
	pos = xk_dir2_sf_hdr_size(i8);
	offset = XK_DIR3_DATA_FIRST_OFFSET;
	for (unsigned int k = 0; k < n; k++) {
		struct xk_dir2_sf_entry *o = (void *)(out + pos);
		unsigned int esz = xk_dir2_sf_entsize(h, ents[k].namelen,
						      ftype);

		if (pos + esz > fsize) {
			free(ents);
			free(out);
			return XK_ECORRUPT;
		}
		o->namelen = ents[k].namelen;
		xk_dir2_sf_put_offset(o, monotone ? ents[k].off :
				      (uint16_t)offset);
		memcpy(o->name, ents[k].name, ents[k].namelen);
		xk_dir2_sf_put_ftype(o, ftype, ents[k].ft);
		xk_dir2_sf_put_ino(h, o, ftype, ents[k].ino);
		offset += xk_dir3_data_entsize(ents[k].namelen, ftype);
		pos += esz;
	}
	memcpy(fork, out, fsize);
	xk_be64_set(&dip->di_size, pos);
	free(ents);
	free(out);
	return 0;
}

/* Keep the extents of a fork that are valid and in order. */
static void
trim_extents(struct repair_ctx *rc, struct xk_dinode *dip, int fork)
{
	struct xk_bmbt_rec *recs = (void *)xk_dfork_ptr(dip, fork);
	uint64_t nex = xk_dinode_fork_nextents(dip, fork), keep = 0, next = 0;
	unsigned int fsize = xk_dfork_size(dip, rc->mp->g.inodesize, fork);

	if (xk_dfork_format(dip, fork) != XK_DINODE_FMT_EXTENTS ||
	    (fork == XK_ATTR_FORK && !dip->di_forkoff))
		return;
	if (nex > fsize / sizeof(*recs))
		nex = fsize / sizeof(*recs);
	for (uint64_t i = 0; i < nex; i++) {
		struct xk_bmbt_irec r;

		xk_bmbt_rec_unpack(&recs[i], &r);
		if (r.blockcount == 0 ||
		    !xk_fsbext_valid(rc->mp, r.startblock, r.blockcount) ||
		    !xk_fileext_valid(rc->mp, r.startoff, r.blockcount) ||
		    r.startoff < next)
			continue;
		next = r.startoff + r.blockcount;
		recs[keep++] = recs[i];
	}
	memset(&recs[keep], 0, (nex - keep) * sizeof(*recs));
	if (fork == XK_DATA_FORK)
		xk_dinode_set_nextents(dip, keep, xk_dinode_anextents(dip));
	else
		xk_dinode_set_nextents(dip, xk_dinode_nextents(dip), keep);
}

/*
 * An attr leaf at daddr whose usedbytes disagrees with its records gets
 * the sum the verifier computes; anything else wrong with it is left to
 * the next pass.
 */
static void
fix_attr_usedbytes(struct repair_ctx *rc, uint64_t ino, uint64_t daddr)
{
	struct xk_buf *bp;
	int err = xk_buf_read_ctx(rc->mp, daddr, rc->mp->g.blocksize,
				  &xk_attr3_leaf_buf_ops, -1, ino,
				  XK_READ_SALVAGE, &bp);

	if (err && bp && !bp->fail.crc_bad && bp->fail.check &&
	    !strcmp(bp->fail.check, "usedbytes") && bp->fail.has_values) {
		struct xk_attr3_leaf_hdr *h = (void *)bp->data;

		xk_be16_set(&h->usedbytes, (uint16_t)bp->fail.expected);
		xk_buf_dirty(bp);
	}
	xk_buf_release(bp);
}

/*
 * The attr node entries of ino planned with a hash (da_hashes): each
 * block read as a node (its CRC then recomputed on write).  0, or an
 * operational error with nothing changed by this call.
 */
/* Whether ino's attr fork is planned for a rewrite (the plan unsorted). */
static int
attr_rewrite_planned(const struct repair_ctx *rc, uint64_t ino)
{
	for (size_t i = 0; i < rc->plan.attrfix.n; i++)
		if (rc->plan.attrfix.v[i] == ino)
			return 1;
	return 0;
}

static int
fix_da_hashes(struct repair_ctx *rc, uint64_t ino)
{
	for (size_t i = 0; i < rc->plan.da_hashes.n; i++) {
		const struct da_hash_fix *f = &rc->plan.da_hashes.v[i];
		struct xk_buf *bp;
		int err;

		if (f->ino != ino)
			continue;
		err = xk_buf_read_ctx(rc->mp, f->daddr, rc->mp->g.blocksize,
				      &xk_da3_node_buf_ops, -1, ino,
				      XK_READ_SALVAGE, &bp);
		if (!bp)
			return xk_err_operational(err) ? err : 0;
		/* Out of hash order is what is being fixed. */
		if (!err || err == XK_EBADCRC ||
		    (bp->fail.check && !strcmp(bp->fail.check, "hashval"))) {
			struct xk_da3_node_hdr *h = (void *)bp->data;

			if (f->entry < xk_be16_get(h->count)) {
				xk_be32_set(&xk_da3_node_entry(h, f->entry)->
					    hashval, f->hash);
				xk_buf_dirty(bp);
			}
		}
		xk_buf_release(bp);
	}
	return 0;
}

/*
 * Unwritten flags off the extent lists in the inode: of the attr fork
 * always, of the data fork unless the file is a regular one.  (A bmbt's
 * records are left: the flag there is reported again, not fixed.)
 */
static void
clear_unwritten(struct repair_ctx *rc, struct xk_dinode *dip)
{
	int reg = (xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFREG;

	for (int fork = reg ? XK_ATTR_FORK : XK_DATA_FORK;
	     fork <= XK_ATTR_FORK; fork++) {
		struct xk_bmbt_rec *recs = (void *)xk_dfork_ptr(dip, fork);
		unsigned int fsize = xk_dfork_size(dip, rc->mp->g.inodesize,
						   fork);
		uint64_t nex = xk_dinode_fork_nextents(dip, fork);

		if (xk_dfork_format(dip, fork) != XK_DINODE_FMT_EXTENTS ||
		    (fork == XK_ATTR_FORK && !dip->di_forkoff))
			continue;
		if (nex > fsize / sizeof(*recs))
			nex = fsize / sizeof(*recs);
		for (uint64_t i = 0; i < nex; i++)
			xk_be64_set(&recs[i].l0, xk_be64_get(recs[i].l0) &
				    ~(1ULL << 63));
	}
}

/*
 * An attr fork that cannot be trusted becomes an empty extent list: the
 * fork offset stays (the data fork's layout depends on it), its blocks
 * are no longer claimed and become free at the next rebuild.
 */
void
drop_attr_fork(struct repair_ctx *rc, struct xk_dinode *dip)
{
	unsigned int asize;

	if (!dip->di_forkoff)
		return;
	asize = xk_dfork_size(dip, rc->mp->g.inodesize, XK_ATTR_FORK);
	memset(xk_dfork_ptr(dip, XK_ATTR_FORK), 0, asize);
	dip->di_aformat = XK_DINODE_FMT_EXTENTS;
	xk_dinode_set_nextents(dip, xk_dinode_nextents(dip), 0);
}

static int
cmp_ifix(const void *a, const void *b)
{
	const struct ifix *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->what > y->what) - (x->what < y->what);
}

/* Whether the sorted plans v[0..n) name ino. */
static int
planned(const struct ifix *v, size_t n, uint64_t ino)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].ino == ino;
}

/*
 * The cluster holding ino was changed and will be written: its slots
 * that no plan names and whose core is no inode's (magic, version: what
 * the cluster's write verifier checks) become valid free inodes, else
 * the write is refused and the repair stops.  They are the free inodes
 * of a zeroed cluster, which the scan does not judge (bench/reasm, 5%
 * of metadata zeroed).  *last is the last cluster settled.
 */
static int
settle_cluster(struct repair_ctx *rc, uint64_t ino, const struct ifix *v,
	       size_t n, uint64_t *last)
{
	struct xk_mount *mp = rc->mp;
	uint32_t isz = mp->g.inodesize;
	struct xk_dinode *dip;
	struct xk_buf *bp;
	uint64_t base;
	int err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
	int changed = 0;

	if (err && !bp)
		return err;
	if (bp->daddr == *last) {
		xk_buf_release(bp);
		return 0;
	}
	*last = bp->daddr;
	base = ino - (uint64_t)((uint8_t *)dip - bp->data) / isz;
	for (uint32_t off = 0; off + isz <= bp->len; off += isz) {
		struct xk_dinode *d = (struct xk_dinode *)(bp->data + off);
		uint64_t slot = base + off / isz;

		if ((xk_be16_get(d->di_magic) == XK_DINODE_MAGIC &&
		     d->di_version == XK_DINODE_VERSION_3) ||
		    planned(v, n, slot))
			continue;
		xk_inode_init_free(mp, d, slot);
		action_report(rc, ACT_INODE_FIXED, slot, -1, NULL, ": made a "
			      "valid free inode, its core being no inode's, "
			      "in a cluster written for another inode");
		changed = 1;
	}
	if (changed)
		xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}

/*
 * Apply the plans v[0..n) of one inode; *changed says whether anything
 * was written.
 */
/*
 * The realtime bitmap or summary inode, made anew as mkfs makes it
 * without a realtime volume: an empty regular file (the bitmap flagged
 * NEWRTBM).  The superblock names it, so leaving it free lets the kernel
 * hand it out as a new file while still treating it as the bitmap
 * ("Allocated a known in-use inode").  With a realtime volume the next
 * pass gives it its blocks and contents (rt_fix.c).
 */
static void
rt_inode_init(struct repair_ctx *rc, struct xk_dinode *dip, uint64_t ino)
{
	int bitmap = ino == rc->mp->sb.rbmino;
	struct xk_inode_init ii = {
		.mode = XK_S_IFREG,
		.nlink = 1,
		.format = XK_DINODE_FMT_EXTENTS,
		.flags = bitmap ? XK_DIFLAG_NEWRTBM : 0,
		.now_sec = repair_now(),
	};

	xk_inode_init_core(rc->mp, dip, ino, &ii);
	action_report(rc, ACT_INODE_FIXED, ino, -1, "", ": made anew as the "
		      "empty realtime %s inode the superblock names",
		      bitmap ? "bitmap" : "summary");
}

static int
fix_one_inode(struct repair_ctx *rc, const struct ifix *v, size_t n,
	      int *changedp)
{
	int changed = 1;
	struct xk_mount *mp = rc->mp;
	uint64_t ino = v[0].ino;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	uint32_t all = 0;
	int err;

	for (size_t i = 0; i < n; i++)
		all |= v[i].what;
	err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp)
		return err;
	if ((all & IFIX_CORE) && !(all & IFIX_CLEAR) &&
	    salvage_core(rc, ino, dip))
		all |= IFIX_CLEAR;
	if (all & IFIX_NEWROOT) {
		root_inode_init(rc, dip, ino);
		goto out;
	}
	if (all & IFIX_NEWMETAROOT) {
		metadir_root_init(rc, dip, ino);
		goto out;
	}
	/* The superblock names it: never freed (rt_check.c remakes it). */
	if ((all & IFIX_NEWRTINO) ||
	    ((all & IFIX_CLEAR) && (ino == mp->sb.rbmino ||
				    ino == mp->sb.rsumino))) {
		rt_inode_init(rc, dip, ino);
		goto out;
	}
	if (all & IFIX_CLEAR) {
		action_report_why(rc, ACT_INODE_CLEARED, ino, -1, NULL,
				  plan_why(&rc->plan, ino, IFIX_CLEAR), ": %s",
				  all & IFIX_CORE ? "its core could not be "
				  "salvaged" : "nothing in it could be kept");
		xk_inode_init_free(mp, dip, ino);
		goto out;
	}
	if (all & IFIX_CORE)
		action_report(rc, ACT_INODE_FIXED, ino, -1, NULL, ": core "
			      "fields reset from what can be derived, so "
			      "that it verifies");
	/*
	 * A rebuild that cannot be done (the rmapbt does not give the map)
	 * falls back to trimming, clearing or dropping; memory or I/O stops
	 * the run with the inode unchanged (its buffer is not dirtied).
	 */
	if (all & (IFIX_RMAP_FORK | IFIX_SCAN_FORK)) {
		err = all & IFIX_SCAN_FORK ? scan_fork_rebuild(rc, ino, dip) :
		      rmap_fork_rebuild(rc, ino, dip);
		if (xk_err_operational(err)) {
			xk_buf_release(bp);
			return err;
		}
		if (err == 0) {
			all &= ~(IFIX_TRIM | IFIX_NBLOCKS);
		} else if (dip->di_format == XK_DINODE_FMT_EXTENTS) {
			all |= IFIX_TRIM;
		} else {
			action_report_why(rc, ACT_INODE_CLEARED, ino, -1, NULL,
					  all & IFIX_SCAN_FORK ?
					  "its block map is unreadable and "
					  "the device scan's bmbt leaves "
					  "could not rebuild it" :
					  "its block map is unreadable and "
					  "the rmapbt could not rebuild it",
					  "%s", "");
			xk_inode_init_free(mp, dip, ino);
			goto out;
		}
	}
	/* Failing that, the attr fork goes (below). */
	if ((all & (IFIX_RMAP_AFORK | IFIX_SCAN_AFORK)) &&
	    !(all & IFIX_NOATTR)) {
		err = all & IFIX_SCAN_AFORK ? scan_afork_rebuild(rc, ino, dip) :
		      rmap_afork_rebuild(rc, ino, dip);
		if (xk_err_operational(err)) {
			xk_buf_release(bp);
			return err;
		}
		if (err) {
			action_report_why(rc, ACT_ATTR_DROPPED, ino, -1, NULL,
					  all & IFIX_SCAN_AFORK ?
					  "their map is bad and the device "
					  "scan's bmbt leaves could not "
					  "rebuild it" :
					  "their map is bad and the rmapbt "
					  "could not rebuild it", "%s", "");
			drop_attr_fork(rc, dip);
		}
	}
	for (size_t i = 0; i < n; i++) {
		switch (v[i].what) {
		case IFIX_NLINK:
			action_report(rc, ACT_NLINK_SET, ino, -1, NULL,
				      ": %llu (was %u)",
				      (unsigned long long)v[i].val,
				      xk_be32_get(dip->di_nlink));
			xk_be32_set(&dip->di_nlink, (uint32_t)v[i].val);
			break;
		case IFIX_NBLOCKS:
			if (!(all & IFIX_NBLOCKS))
				break;
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": block count %llu (was %llu)",
				      (unsigned long long)v[i].val,
				      (unsigned long long)
				      xk_be64_get(dip->di_nblocks));
			xk_be64_set(&dip->di_nblocks, v[i].val);
			break;
		case IFIX_SF_DROP:
		case IFIX_SF_PARENT:
		case IFIX_SF_FTYPE:
			if (dip->di_format != XK_DINODE_FMT_LOCAL ||
			    (xk_be16_get(dip->di_mode) & XK_S_IFMT) !=
			    XK_S_IFDIR)
				break;
			err = sf_rewrite(rc, dip,
					 v[i].what == IFIX_SF_DROP ? v[i].val :
					 0, v[i].what == IFIX_SF_PARENT ?
					 v[i].val : 0, NULL);
			/* Memory or I/O stops the run; nothing was changed. */
			if (xk_err_operational(err)) {
				xk_buf_release(bp);
				return err;
			}
			/*
			 * The fork cannot hold even the header, or the
			 * entries with an 8-byte parent: its entries are
			 * lost either way, and the children are reconnected.
			 */
			if (err) {
				action_report_why(rc, ACT_INODE_CLEARED, ino,
						  -1, NULL, "the short-form "
						  "directory could not be "
						  "rewritten", "%s", "");
				xk_inode_init_free(mp, dip, ino);
				goto out;
			}
			if (v[i].what == IFIX_SF_DROP)
				action_report(rc, ACT_ENTRY_REMOVED, v[i].val,
					      -1, NULL, ", in directory %llu: "
					      "the inode is not in use",
					      (unsigned long long)ino);
			else if (v[i].what == IFIX_SF_FTYPE)
				action_report(rc, ACT_DIR_REWRITTEN, ino, -1,
					      NULL, ": the file types of its "
					      "entries set from their inodes");
			else
				action_report(rc, ACT_DOTDOT_SET, ino, -1,
					      NULL, ": it names %llu",
					      (unsigned long long)v[i].val);
			break;
		case IFIX_NOATTR:
			action_report_why(rc, ACT_ATTR_DROPPED, ino, -1, NULL,
					  plan_why(&rc->plan, ino,
						   IFIX_NOATTR),
					  ": they could not be read");
			drop_attr_fork(rc, dip);
			break;
		case IFIX_FLAGS:
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": flags 0x%llx (were 0x%x)",
				      (unsigned long long)v[i].val,
				      xk_be16_get(dip->di_flags));
			xk_be16_set(&dip->di_flags, (uint16_t)v[i].val);
			break;
		case IFIX_FLAGS2:
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": flags2 0x%llx (were 0x%llx)",
				      (unsigned long long)v[i].val,
				      (unsigned long long)
				      xk_be64_get(dip->di_flags2));
			xk_be64_set(&dip->di_flags2, v[i].val);
			break;
		case IFIX_NSEC: {
			xk_timestamp *ts[4] = { &dip->di_atime, &dip->di_mtime,
						&dip->di_ctime,
						&dip->di_crtime };
			unsigned int bad = bad_nsec_mask(dip);

			/* As xfs_repair: the nanoseconds reset to zero. */
			for (int t = 0; t < 4; t++)
				if (bad & (1u << t))
					xk_be64_set(ts[t], xk_be64_get(*ts[t]) &
						    ~0xffffffffULL);
			if (bad)
				action_report(rc, ACT_INODE_FIXED, ino, -1,
					      NULL, ": nanoseconds of 10^9 or "
					      "more set to 0");
			break;
		}
		case IFIX_AFORMAT:
			if (dip->di_forkoff ||
			    dip->di_aformat == XK_DINODE_FMT_EXTENTS)
				break;	/* another fix gave it a fork */
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": attr fork format %u set to extents "
				      "(it has no attr fork)",
				      dip->di_aformat);
			dip->di_aformat = XK_DINODE_FMT_EXTENTS;
			break;
		case IFIX_PAD:
			/* Rewrites both counters, zeroing the padding. */
			xk_dinode_set_nextents(dip, xk_dinode_nextents(dip),
					       xk_dinode_anextents(dip));
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": the padding beside the extent "
				      "counters zeroed");
			break;
		case IFIX_DOTDOT:
			/*
			 * In the directory's first block, not the inode; a
			 * directory being rewritten gets its ".." then.
			 */
			err = dir_being_rebuilt(rc, ino) ? XK_ECORRUPT :
			      set_block_dotdot(rc, ino, v[i].val);
			if (xk_err_operational(err)) {
				xk_buf_release(bp);
				return err;
			}
			if (err) {
				plan_none(rc);
				if (n == 1)
					changed = 0;
			} else {
				action_report(rc, ACT_DOTDOT_SET, ino, -1,
					      NULL, ": it names %llu",
					      (unsigned long long)v[i].val);
			}
			break;
		case IFIX_TRIM: {
			uint64_t was = xk_dinode_nextents(dip);

			if (!(all & IFIX_TRIM))
				break;
			trim_extents(rc, dip, XK_DATA_FORK);
			if (xk_dinode_nextents(dip) != was)
				action_report(rc, ACT_FORK_TRIMMED, ino, -1,
					      NULL, ": %llu invalid of %llu "
					      "dropped",
					      (unsigned long long)(was -
					      xk_dinode_nextents(dip)),
					      (unsigned long long)was);
			break;
		}
		case IFIX_ATRIM: {
			uint64_t was = xk_dinode_anextents(dip);

			if (all & (IFIX_NOATTR | IFIX_RMAP_AFORK |
				   IFIX_SCAN_AFORK))
				break;
			trim_extents(rc, dip, XK_ATTR_FORK);
			if (xk_dinode_anextents(dip) != was)
				action_report(rc, ACT_FORK_TRIMMED, ino, -1,
					      NULL, ": %llu invalid of %llu "
					      "attr fork extents dropped",
					      (unsigned long long)(was -
					      xk_dinode_anextents(dip)),
					      (unsigned long long)was);
			break;
		}
		case IFIX_DIR_SIZE:
			/* The fork was rebuilt: its own size stands. */
			if (all & (IFIX_RMAP_FORK | IFIX_SCAN_FORK))
				break;
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": directory size %llu, where its data "
				      "blocks end (was %llu)",
				      (unsigned long long)v[i].val,
				      (unsigned long long)
				      xk_be64_get(dip->di_size));
			xk_be64_set(&dip->di_size, v[i].val);
			break;
		case IFIX_NEXTENTS:
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": data fork extent count %llu (was "
				      "%llu)", (unsigned long long)v[i].val,
				      (unsigned long long)
				      xk_dinode_nextents(dip));
			xk_dinode_set_nextents(dip, v[i].val,
					       xk_dinode_anextents(dip));
			break;
		case IFIX_ANEXTENTS:
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": attr fork extent count %llu (was "
				      "%llu)", (unsigned long long)v[i].val,
				      (unsigned long long)
				      xk_dinode_anextents(dip));
			xk_dinode_set_nextents(dip, xk_dinode_nextents(dip),
					       v[i].val);
			break;
		case IFIX_DA_HASH:
			err = fix_da_hashes(rc, ino);
			if (err) {
				xk_buf_release(bp);
				return err;
			}
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": the hashes of its attribute tree's "
				      "nodes corrected, its xattrs kept");
			break;
		case IFIX_ATTR_USED:
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": the used byte count of an attribute "
				      "leaf corrected, its xattrs kept");
			fix_attr_usedbytes(rc, ino, v[i].val);
			break;
		case IFIX_WRITTEN:
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": unwritten flags cleared, the data "
				      "kept");
			clear_unwritten(rc, dip);
			break;
		case IFIX_UNLINKED: {
			action_report(rc, ACT_INODE_FIXED, ino, -1, NULL,
				      ": next_unlinked 0x%x cleared",
				      xk_be32_get(dip->di_next_unlinked));
			xk_be32_set(&dip->di_next_unlinked, XK_NULLAGINO);
			break;
		}
		}
	}
	xk_inode_init_crc(mp, dip);
out:
	if (changed)
		xk_buf_dirty(bp);
	xk_buf_release(bp);
	*changedp = changed;
	return 0;
}

/* The primary from the geometry the handle was opened with. */
static int
write_sb(struct repair_ctx *rc, uint32_t agno)
{
	struct xk_mount *mp = rc->mp;
	struct xk_buf *bp;
	int err;

	err = xk_buf_get(mp, xk_ag_hdr_daddr(mp, agno, XK_SB_SECTOR),
			 mp->g.sectsize, &xk_sb_buf_ops, &bp);
	if (err)
		return err;
	bp->agno = agno;
	memset(bp->data, 0, mp->g.sectsize);
	xk_sb_encode((struct xk_dsb *)bp->data, &mp->sb);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}

/*
 * Test builds: a plan changes only what the check saw, an inode of a
 * chunk the scan read (a plan made from anything else would write to
 * an inode nothing vouched for).
 */
static void
assert_plans_seen(const struct repair_ctx *rc)
{
	const struct repair_plan *p = &rc->plan;

	for (size_t i = 0; i < p->ifix.n; i++)
		REPAIR_ASSERT(scan_saw_inode(rc, p->ifix.v[i].ino),
			      "a fix (%#x) is planned for inode %llu, in no "
			      "chunk the scan read", p->ifix.v[i].what,
			      (unsigned long long)p->ifix.v[i].ino);
	for (size_t i = 0; i < p->dirfix.n; i++)
		REPAIR_ASSERT(scan_saw_inode(rc, p->dirfix.v[i]),
			      "directory %llu is planned for a rewrite, in "
			      "no chunk the scan read",
			      (unsigned long long)p->dirfix.v[i]);
	for (size_t i = 0; i < p->orphans.n; i++)
		REPAIR_ASSERT(inode_info_find(rc, p->orphans.v[i].ino),
			      "inode %llu is planned for /lost+found but is "
			      "not in the scan's inode list",
			      (unsigned long long)p->orphans.v[i].ino);
}

int
apply_fixes(struct repair_ctx *rc, unsigned long *applied)
{
	struct xk_mount *mp = rc->mp;
	struct ifixes *p = &rc->plan.ifix;
	uint64_t last_cluster;
	int err = 0, changed, inode_fixes;

	if (REPAIR_DEBUG)
		assert_plans_seen(rc);
	if (rc->from_secondary || rc->plan.sb_primary_fix) {
		err = write_sb(rc, 0);
		if (err)
			return err;
		action_report(rc, ACT_SB_WRITTEN, 0, 0, NULL, " (the primary)%s",
			      rc->from_secondary ? " from a secondary's copy" :
			      "");
		rc->from_secondary = rc->plan.sb_primary_fix = 0;
		(*applied)++;
	}
	for (uint32_t agno = 1; agno < mp->g.agcount; agno++) {
		if (!rc->plan.sb_bad[agno])
			continue;
		err = write_sb(rc, agno);
		if (err)
			return err;
		action_report(rc, ACT_SB_WRITTEN, 0, agno, NULL, " from the "
			      "primary");
		(*applied)++;
	}
	/*
	 * Orphans wait for a pass with no other inode fix: a directory
	 * fixed in this pass may name them again.  (Not a loop without
	 * end: every pass that defers them applies something.)
	 */
	if (p->n || rc->plan.dirfix.n)
		rc->plan.orphans.n = 0;
	/* Link counts likewise: other fixes may change the references. */
	{
		size_t keep = 0;
		int others = rc->plan.dirfix.n != 0;

		for (size_t i = 0; i < p->n; i++)
			if (p->v[i].what != IFIX_NLINK)
				others = 1;
		for (size_t i = 0; i < p->n; i++)
			if (!others || p->v[i].what != IFIX_NLINK)
				p->v[keep++] = p->v[i];
		p->n = keep;
	}
	/*
	 * An attr fork rewritten from its salvaged entries (attrfix.c) gets
	 * no fix in place first: its tree may reach blocks that are not its
	 * own (another inode's leaf), where a write would fail or harm.
	 */
	{
		size_t keep = 0;

		for (size_t i = 0; i < p->n; i++)
			if ((p->v[i].what != IFIX_DA_HASH &&
			     p->v[i].what != IFIX_ATTR_USED) ||
			    !attr_rewrite_planned(rc, p->v[i].ino))
				p->v[keep++] = p->v[i];
		p->n = keep;
	}
	/* Before any inode fix frees a quota inode the superblock names. */
	if (rc->scan.quota) {
		err = quota_forget_lost(rc, applied);
		if (err)
			return err;
	}
	/* Quota usage follows from every other inode fix: wait for them. */
	if (rc->scan.quota && !p->n && !rc->plan.dirfix.n && !rc->plan.orphans.n) {
		err = quota_apply(rc, applied);
		if (err)
			return err;
	}
	inode_fixes = p->n || rc->plan.dirfix.n || rc->plan.orphans.n;
	last_cluster = XK_NO_DADDR;
	sort_v(p->v, p->n, sizeof(*p->v), cmp_ifix);
	/* Paths as the check saw them, before any entry changes. */
	action_prepare(rc);
	for (size_t i = 0; i < p->n;) {
		size_t j = i;

		while (j < p->n && p->v[j].ino == p->v[i].ino)
			j++;
		err = fix_one_inode(rc, &p->v[i], j - i, &changed);
		if (!err && changed)
			err = settle_cluster(rc, p->v[i].ino, p->v, p->n,
					     &last_cluster);
		if (err)
			return err;
		*applied += changed;
		i = j;
	}
	if (!err && rc->plan.orphans.n)
		err = reconnect_orphans(rc, applied);
	/* The realtime bitmap once the mappings are final (rt_fix.c). */
	if (!err)
		err = rt_apply(rc, inode_fixes, applied);
	/* Planned only in a pass that found nothing else (pptr.c). */
	if (!err)
		err = pptr_apply(rc, applied);
	p->n = 0;
	rc->plan.orphans.n = 0;
	if (err)
		return err;
	return xk_buf_flush(mp);
}
