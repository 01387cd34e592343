// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Quota repair: what the quota check (phase_quota.c) planned, applied
 * between check passes once no other inode fix is pending (those change
 * the usage the check added up).
 *
 * xfs_repair 6.1 counts usage as we do but repairs none of it: on any
 * mismatch it clears every CHKD flag in sb_qflags, so that the kernel
 * runs a quotacheck at the next quota mount, and a dquot record failing
 * its verifier is reset to an empty record (limits, timers and counts
 * lost).  Here the usage is rebuilt in place instead: every dquot gets
 * the counts the inodes add up to, a bad record keeps its limits when
 * it still is recognisably this id's record, and the CHKD flag stays
 * set, so that quotas are enforced from the first mount on.  Ids in
 * use with no dquot (their block is missing from the quota file) get
 * one: the quota file grows through the builder, in a pass that found
 * nothing else (the builder loads its state from the AG btrees).  What
 * cannot be rebuilt follows xfs_repair, for that quota type only:
 *  - when growing the file fails, or other damage keeps it from ever
 *    running, or a dquot block cannot be read: the type's CHKD flag is
 *    cleared, and the kernel recounts at the next quota mount;
 *  - a quota inode that is unreadable, not a regular file, or whose
 *    fork cannot be mapped (the inode scan clears such an inode), that
 *    is plainly a user's file, or that the superblock names for another
 *    use too (the root, a realtime inode, another type's quota inode
 *    holding that type's records): the superblock forgets it and the
 *    type's CHKD flag is cleared, before any inode fix of the pass (one
 *    may free the inode); the kernel makes a new quota file at the next
 *    quota mount, and that type's limits are lost.
 * A quota inode whose only fault is a size other than 0 keeps its
 * records and gets size 0 (xfs_repair clears it and loses them).
 *
 * Every write goes through the buffer cache (and so the undo file).
 */
#include <string.h>
#include <time.h>

#include "phase_quota.h"

#include <xfskit/ag.h>
#include <xfskit/btree.h>
#include <xfskit/build.h>
#include <xfskit/init.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/sb.h>

/* Grace periods when the id 0 record sets none: one week, as the kernel. */
#define QUOTA_GRACE_DEFAULT	((int64_t)7 * 24 * 60 * 60)

/* One limited resource of a record: blocks, inodes or realtime blocks. */
struct qres {
	xk_be64		*count, *soft, *hard;
	xk_be32		*timer;
	int64_t		grace;
};

/*
 * The grace periods of a quota type: id 0's timer fields, if sound.
 * 0, or an operational error (the defaults would change the records).
 */
static int
read_grace(struct repair_ctx *rc, struct qtype *qt, int64_t grace[3])
{
	struct xk_mount *mp = rc->mp;
	uint64_t contig;
	uint64_t fsb = fork_map_lookup(&qt->map, 0, &contig);
	struct xk_buf *bp;
	char why[96];
	int err;

	grace[0] = grace[1] = grace[2] = QUOTA_GRACE_DEFAULT;
	if (fsb == XK_NULLFSBLOCK || !xk_fsbext_valid(mp, fsb, 1))
		return 0;
	err = xk_buf_read(mp, xk_fsb_to_daddr(mp, fsb), mp->g.blocksize, NULL,
			  XK_READ_NOVERIFY, &bp);
	if (err)
		return xk_err_operational(err) ? err : 0;
	{
		const struct xk_dqblk *d = (const void *)bp->data;
		const struct xk_disk_dquot *q = &d->dd_diskdq;

		if (!quota_record_problem(mp, qt, d, 0, why, sizeof(why))) {
			if (xk_be32_get(q->d_btimer))
				grace[0] = xk_be32_get(q->d_btimer);
			if (xk_be32_get(q->d_itimer))
				grace[1] = xk_be32_get(q->d_itimer);
			if (xk_be32_get(q->d_rtbtimer))
				grace[2] = xk_be32_get(q->d_rtbtimer);
		}
	}
	xk_buf_release(bp);
	return 0;
}

/*
 * A limit's timer as the kernel keeps it: running while the count is
 * over the soft (or hard) limit, started now with the grace period when
 * it was not; stopped (0) otherwise.
 */
static void
adjust_timer(const struct qres *r, int bigtime, int64_t now)
{
	uint64_t count = xk_be64_get(*r->count);
	uint64_t soft = xk_be64_get(*r->soft), hard = xk_be64_get(*r->hard);
	int over = (soft && count > soft) || (hard && count > hard);

	if (over && !xk_be32_get(*r->timer))
		xk_be32_set(r->timer,
			    xk_dquot_timer_encode(now + r->grace, bigtime));
	else if (!over)
		xk_be32_set(r->timer, 0);
}

/*
 * Make one record right; returns 1 when it changed (its CRC is then
 * recomputed).  Rules:
 *  1. a record failing a rule whose magic, version, type or id is not
 *     this one's holds nothing to trust: it starts again empty (as
 *     xfs_repair resets it), otherwise its limits and timers are kept;
 *  2. magic, version, id (its position), UUID and quota type (its
 *     file's) are set; the bigtime flag is kept only on bigtime
 *     filesystems and never on id 0, and a new record of another id
 *     gets it there, as the kernel writes them;
 *  3. when usage is counted, the counts are the inodes' sums (not in
 *     the slots past id 2^32-1, whose ids wrap: real is 0 there);
 *  4. for ids other than 0, a record changed by 1-3 gets its timers
 *     as the kernel keeps them (see adjust_timer).
 */
static int
fix_record(struct repair_ctx *rc, struct qtype *qt, struct xk_dqblk *d,
	   uint32_t id, int real, const int64_t grace[3], int64_t now)
{
	struct xk_mount *mp = rc->mp;
	struct xk_disk_dquot *q = &d->dd_diskdq;
	struct xk_dqblk old = *d;
	char why[96];
	const char *bad = quota_record_problem(mp, qt, d, id, why,
					       sizeof(why));
	int mine = xk_be16_get(q->d_magic) == XK_DQUOT_MAGIC &&
		   q->d_version == XK_DQUOT_VERSION &&
		   (q->d_type & XK_DQTYPE_REC_MASK) == qt->dqtype &&
		   !(q->d_type & ~XK_DQTYPE_ANY) &&
		   xk_be32_get(q->d_id) == id;
	uint8_t bigtime = q->d_type & XK_DQTYPE_BIGTIME;

	if (bad && !mine) {
		memset(d, 0, sizeof(*d));
		bigtime = XK_DQTYPE_BIGTIME;
	}
	if (!mp->g.has_bigtime || !id)
		bigtime = 0;
	xk_be16_set(&q->d_magic, XK_DQUOT_MAGIC);
	q->d_version = XK_DQUOT_VERSION;
	q->d_type = qt->dqtype | bigtime;
	xk_be32_set(&q->d_id, id);
	memcpy(d->dd_uuid, mp->meta_uuid, 16);
	if (qt->counting && real) {
		struct qrec *u = quota_tab_get(&qt->tab, id, 0);

		xk_be64_set(&q->d_bcount, u ? u->bcount : 0);
		xk_be64_set(&q->d_icount, u ? u->icount : 0);
		xk_be64_set(&q->d_rtbcount, u ? u->rtbcount : 0);
	}
	if (!bad && !memcmp(&old, d, sizeof(old)))
		return 0;
	if (id) {
		const struct qres res[3] = {
			{ &q->d_bcount, &q->d_blk_softlimit,
			  &q->d_blk_hardlimit, &q->d_btimer, grace[0] },
			{ &q->d_icount, &q->d_ino_softlimit,
			  &q->d_ino_hardlimit, &q->d_itimer, grace[1] },
			{ &q->d_rtbcount, &q->d_rtb_softlimit,
			  &q->d_rtb_hardlimit, &q->d_rtbtimer, grace[2] },
		};

		for (int i = 0; i < 3; i++)
			adjust_timer(&res[i], bigtime != 0, now);
	}
	xk_cksum_update(d, sizeof(*d), XK_DQUOT_CRC_OFF);
	return memcmp(&old, d, sizeof(old)) != 0;
}

/* Every record of a quota file made right; *nrec counts those written. */
static int
fix_records(struct repair_ctx *rc, struct qtype *qt, unsigned long *nrec)
{
	struct xk_mount *mp = rc->mp;
	uint32_t per = xk_dqblk_per_block(mp->g.blocksize);
	int64_t grace[3], now = repair_now();
	int err;

	if (!qt->usable)
		return 0;
	err = read_grace(rc, qt, grace);
	if (err)
		return err;
	for (size_t e = 0; e < qt->map.n; e++) {
		const struct xk_bmbt_irec *r = &qt->map.v[e];

		/* The check stopped at an invalid extent: so do we. */
		if (!xk_fsbext_valid(mp, r->startblock, r->blockcount) ||
		    r->startoff + r->blockcount > (uint64_t)UINT32_MAX / per +
						  1)
			return 0;
		for (uint64_t i = 0; i < r->blockcount; i++) {
			uint64_t fb = r->startoff + i;
			struct xk_buf *bp;
			int dirty = 0;

			err = xk_buf_read(mp, xk_fsb_to_daddr(mp,
						r->startblock + i),
					  mp->g.blocksize, NULL,
					  XK_READ_NOVERIFY, &bp);
			if (xk_err_operational(err))
				return err;
			if (err)
				continue;	/* reported, left alone */
			/* Every slot, as the check (ids wrap past 2^32-1). */
			for (uint32_t j = 0; j < per; j++) {
				uint64_t id = fb * per + j;

				if (fix_record(rc, qt, (struct xk_dqblk *)
					       (bp->data + j *
						sizeof(struct xk_dqblk)),
					       (uint32_t)id, id <= UINT32_MAX,
					       grace, now)) {
					dirty = 1;
					(*nrec)++;
				}
			}
			if (dirty)
				xk_buf_dirty(bp);
			xk_buf_release(bp);
		}
	}
	return 0;
}

/* A quota inode sound but for its size: size 0, as the kernel keeps it. */
static int
fix_size(struct repair_ctx *rc, struct qtype *qt)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int err = xk_inode_read(rc->mp, qt->ino, 0, &bp, &dip);

	if (err)
		return xk_err_operational(err) ? err : 0;
	if ((xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFREG &&
	    xk_be64_get(dip->di_size)) {
		xk_be64_set(&dip->di_size, 0);
		xk_inode_init_crc(rc->mp, dip);
		xk_buf_dirty(bp);
	}
	xk_buf_release(bp);
	return 0;
}

/* --- ids in use with no dquot: the quota file grows --- */

/* What growing one quota file needs; freed by grow_done. */
struct grow {
	uint64_t		*fbs;	/* file blocks to add, sorted */
	size_t			nfb;
	struct xk_bmbt_irec	*ext;	/* the file's extents, sorted */
	size_t			next;
	uint64_t		*bmbt;	/* its bmbt blocks (fsblocks) */
	size_t			nbmbt, capbmbt;
};

static void
grow_done(struct grow *g)
{
	free(g->fbs);
	free(g->ext);
	free(g->bmbt);
}

static int
cmp_startoff(const void *a, const void *b)
{
	const struct xk_bmbt_irec *x = a, *y = b;

	return (x->startoff > y->startoff) - (x->startoff < y->startoff);
}

static int
note_bmbt_block(void *ctx, unsigned int level, uint64_t bno,
		struct xk_buf *bp)
{
	struct grow *g = ctx;

	(void)level;
	(void)bp;
	if (g->nbmbt == g->capbmbt) {
		size_t ncap = g->capbmbt ? g->capbmbt * 2 : 8;
		uint64_t *nv = xk_realloc(g->bmbt, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		g->bmbt = nv;
		g->capbmbt = ncap;
	}
	g->bmbt[g->nbmbt++] = bno;
	return 0;
}

/* Whether file block fb is in the sorted extents of g. */
static int
mapped(const struct grow *g, uint64_t fb)
{
	size_t lo = 0, hi = g->next;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xk_bmbt_irec *r = &g->ext[mid];

		if (fb < r->startoff)
			hi = mid;
		else if (fb >= r->startoff + r->blockcount)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/*
 * The file blocks the ids in use without a dquot need, the file's
 * extents in order (XK_ECORRUPT when they overlap), and its bmbt blocks.
 */
static int
grow_plan(struct repair_ctx *rc, struct qtype *qt,
	  const struct xk_dinode *dip, struct grow *g)
{
	struct xk_mount *mp = rc->mp;
	uint32_t per = xk_dqblk_per_block(mp->g.blocksize);
	size_t n = 0;

	g->fbs = xk_malloc((qt->tab.n ? qt->tab.n : 1) * sizeof(*g->fbs));
	g->ext = xk_malloc((qt->map.n ? qt->map.n : 1) * sizeof(*g->ext));
	if (!g->fbs || !g->ext)
		return -ENOMEM;
	if (qt->map.n)
		memcpy(g->ext, qt->map.v, qt->map.n * sizeof(*g->ext));
	g->next = qt->map.n;
	sort_v(g->ext, g->next, sizeof(*g->ext), cmp_startoff);
	for (size_t i = 1; i < g->next; i++)
		if (g->ext[i].startoff < g->ext[i - 1].startoff +
		    g->ext[i - 1].blockcount)
			return XK_ECORRUPT;
	for (size_t i = 0; i < qt->tab.cap; i++) {
		const struct qrec *u = &qt->tab.v[i];

		if (u->used && !u->ondisk && !mapped(g, u->id / per))
			g->fbs[n++] = u->id / per;
	}
	sort_v(g->fbs, n, sizeof(*g->fbs), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!g->nfb || g->fbs[g->nfb - 1] != g->fbs[i])
			g->fbs[g->nfb++] = g->fbs[i];
	if (dip->di_format == XK_DINODE_FMT_BTREE) {
		unsigned int size = xk_dfork_dsize(dip, mp->g.inodesize);
		const uint8_t *root = xk_dfork_dptr(dip);
		struct xk_btree_walk w = {
			.ops = &xk_bmbt_ops, .agno = -1, .owner = qt->ino,
			.iroot = root, .iroot_size = size, .ctx = g,
			.block_fn = note_bmbt_block,
		};

		if (size < 4)
			return XK_ECORRUPT;
		w.levels = xk_get_be16(root) + 1u;
		return xk_btree_walk(mp, &w);
	}
	return 0;
}

/* An extent the file already has, kept where it is. */
static int
keep_extent(struct xk_bld_fork *fk, const struct xk_bmbt_irec *r)
{
	if (fk->next == fk->ext_alloc) {
		uint64_t n = fk->ext_alloc ? fk->ext_alloc * 2 : 8;
		struct xk_bld_ext *nv = xk_realloc(fk->ext, n * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		fk->ext = nv;
		fk->ext_alloc = n;
	}
	fk->format = XK_BLD_FMT_EXTENTS;
	fk->ext[fk->next++] = (struct xk_bld_ext){
		.loff = r->startoff, .fsbno = r->startblock,
		.len = (uint32_t)r->blockcount,
	};
	fk->nblocks += r->blockcount;
	return 0;
}

/* A new dquot block: every record initialized, usage as counted. */
static int
write_new_block(struct repair_ctx *rc, struct qtype *qt, uint64_t fsbno,
		uint64_t fb)
{
	struct xk_mount *mp = rc->mp;
	uint32_t per = xk_dqblk_per_block(mp->g.blocksize);
	struct xk_buf *bp;
	int err;

	err = xk_buf_get(mp, xk_fsb_to_daddr(mp, fsbno), mp->g.blocksize,
			 NULL, &bp);
	if (err)
		return err;
	memset(bp->data, 0, mp->g.blocksize);
	for (uint32_t j = 0; j < per; j++) {
		struct xk_dqblk *d = (void *)(bp->data + j * sizeof(*d));
		struct xk_disk_dquot *q = &d->dd_diskdq;
		uint64_t id = fb * per + j;
		/* Past 2^32-1 the ids wrap, as the kernel numbers them. */
		uint32_t slot_id = (uint32_t)id;
		struct qrec *u;

		xk_be16_set(&q->d_magic, XK_DQUOT_MAGIC);
		q->d_version = XK_DQUOT_VERSION;
		q->d_type = qt->dqtype;
		if (slot_id && mp->g.has_bigtime)
			q->d_type |= XK_DQTYPE_BIGTIME;
		xk_be32_set(&q->d_id, slot_id);
		memcpy(d->dd_uuid, mp->meta_uuid, 16);
		u = id <= UINT32_MAX ?
		    quota_tab_get(&qt->tab, slot_id, 0) : NULL;
		if (u) {
			xk_be64_set(&q->d_bcount, u->bcount);
			xk_be64_set(&q->d_icount, u->icount);
			xk_be64_set(&q->d_rtbcount, u->rtbcount);
		}
		xk_cksum_update(d, sizeof(*d), XK_DQUOT_CRC_OFF);
	}
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}

/*
 * Put back in the inode the builder rewrote what it does not carry:
 * the generation, and the metafile type in the old link count word
 * (metadir; zero on other filesystems).
 */
static int
restore_core(struct xk_mount *mp, uint64_t ino, uint32_t gen,
	     uint16_t metatype)
{
	struct xk_dinode *dip;
	struct xk_buf *bp;
	void *p;
	int err = xk_inode_init_get(mp, ino, &bp, &p);

	if (err)
		return err;
	dip = p;
	xk_be32_set(&dip->di_gen, gen);
	if (mp->g.has_metadir)
		xk_be16_set(&dip->di_onlink, metatype);
	xk_inode_init_crc(mp, dip);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}

/*
 * Rewrite the quota inode with the extents it has plus a block for
 * each missing one, through the builder: it allocates the new blocks,
 * writes the fork (a new bmbt when the extents do not fit; the old
 * bmbt blocks are freed), and its commit re-indexes free space and
 * reverse mappings.  The builder loads its state from the AG btrees,
 * so this runs only in a pass that found nothing but quota problems.
 * Nothing is written when an allocation fails.
 */
static int
grow_file(struct repair_ctx *rc, struct qtype *qt, unsigned long *nblocks)
{
	struct xk_mount *mp = rc->mp;
	struct grow g = { 0 };
	struct xk_bld *b = NULL;
	struct xk_bld_inode in;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	uint64_t *fsbs = NULL;
	size_t e = 0;
	uint32_t gen;
	uint16_t metatype;
	int err;

	err = xk_inode_read(mp, qt->ino, 0, &bp, &dip);
	if (err)
		return err;
	/*
	 * Quota inodes have no attrs, but in a metadir filesystem with
	 * parent pointers, where one names /quota in a short-form fork:
	 * kept as it is.
	 */
	if (dip->di_forkoff && (dip->di_aformat != XK_DINODE_FMT_LOCAL ||
				xk_dinode_anextents(dip))) {
		xk_buf_release(bp);
		return XK_ECORRUPT;
	}
	err = grow_plan(rc, qt, dip, &g);
	if (!err && !g.nfb)
		goto out;
	if (!err)
		err = xk_bld_open(mp, &b);
	if (err)
		goto out;
	xk_bld_inode_init(b, &in, qt->ino, xk_be16_get(dip->di_mode));
	in.uid = xk_be32_get(dip->di_uid);
	in.gid = xk_be32_get(dip->di_gid);
	in.projid = xk_dinode_projid(dip);
	in.nlink = xk_be32_get(dip->di_nlink);
	in.atime_sec = xk_dinode_time(dip, dip->di_atime).tv_sec;
	in.atime_nsec = xk_dinode_time(dip, dip->di_atime).tv_nsec;
	in.mtime_sec = xk_dinode_time(dip, dip->di_mtime).tv_sec;
	in.mtime_nsec = xk_dinode_time(dip, dip->di_mtime).tv_nsec;
	in.ctime_sec = xk_dinode_time(dip, dip->di_ctime).tv_sec;
	in.ctime_nsec = xk_dinode_time(dip, dip->di_ctime).tv_nsec;
	in.crtime_sec = xk_dinode_time(dip, dip->di_crtime).tv_sec;
	in.crtime_nsec = xk_dinode_time(dip, dip->di_crtime).tv_nsec;
	in.diflags = xk_be16_get(dip->di_flags);
	in.diflags2 = xk_be64_get(dip->di_flags2) &
		      ~(XK_DIFLAG2_BIGTIME | XK_DIFLAG2_NREXT64);
	/* What the builder does not carry: put back after its write. */
	gen = xk_be32_get(dip->di_gen);
	metatype = xk_be16_get(dip->di_onlink);
	if (dip->di_forkoff) {
		const struct xk_attr_sf_hdr *sf = (const void *)xk_dfork_aptr(dip);
		uint32_t len = xk_be16_get(sf->totsize);

		if (len < sizeof(*sf) ||
		    len > xk_dfork_asize(dip, mp->g.inodesize))
			err = XK_ECORRUPT;
		else if (!(in.attr.local = xk_malloc(len)))
			err = -ENOMEM;
		else {
			memcpy(in.attr.local, sf, len);
			in.attr.local_len = len;
			in.attr.format = XK_BLD_FMT_LOCAL;
		}
	}
	/* The builder lays the inode into its cluster anew. */
	xk_buf_release(bp);
	bp = NULL;
	/* Old and new mappings merged in file order. */
	for (size_t i = 0; i <= g.nfb && !err; i++) {
		while (!err && e < g.next &&
		       (i == g.nfb || g.ext[e].startoff < g.fbs[i]))
			err = keep_extent(&in.data, &g.ext[e++]);
		if (!err && i < g.nfb)
			err = xk_bld_fork_alloc(b, &in, XK_DATA_FORK,
						g.fbs[i], 1, 0);
	}
	for (size_t i = 0; i < g.nbmbt && !err; i++)
		err = xk_bld_free_extent(b, g.bmbt[i], 1);
	if (!err) {
		fsbs = xk_malloc(g.nfb * sizeof(*fsbs));
		if (!fsbs)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < g.nfb && !err; i++)
		err = xk_bld_fork_map(&in.data, g.fbs[i], &fsbs[i]);
	/* Everything allocated: now write. */
	for (size_t i = 0; i < g.nfb && !err; i++)
		err = write_new_block(rc, qt, fsbs[i], g.fbs[i]);
	if (!err)
		err = xk_bld_inode_write(b, &in);
	if (!err)
		err = restore_core(mp, qt->ino, gen, metatype);
	free(in.data.ext);	/* what the write did not release */
	free(in.attr.local);
	if (!err)
		err = xk_bld_commit(b);
	/* Out with the CRCs, so that what follows reads them verified. */
	if (!err)
		err = xk_buf_flush(mp);
	if (!err)
		*nblocks = g.nfb;
	xk_bld_free(b);
out:
	xk_buf_release(bp);
	free(fsbs);
	grow_done(&g);
	return err;
}

/* Whether this pass found anything but quota problems. */
static int
other_findings(const struct repair_ctx *rc)
{
	for (int pr = 0; pr < PR_NR; pr++)
		if (rc->found.counts[pr] && pr != PR_QUOTA_INODE &&
		    pr != PR_QUOTA_DQUOT && pr != PR_QUOTA_COUNT &&
		    pr != PR_QUOTA_FLAGS)
			return 1;
	return 0;
}

/*
 * The primary superblock: the CHKD flags in clear dropped, and the
 * quota inodes of the types in lost (XK_DQTYPE_* bits) forgotten.  The
 * handle's copy follows, so that later superblock writes keep it.
 */
static int
fix_sb(struct repair_ctx *rc, uint16_t clear, unsigned int lost)
{
	struct xk_mount *mp = rc->mp;
	struct xk_buf *bp = NULL;
	struct xk_sb sb;
	/* Rewritten earlier in this pass, it may wait for its CRC. */
	int err = xk_sb_read(mp, 0, XK_READ_SALVAGE, &bp);

	if (err && (!bp || err != XK_EBADCRC ||
		    !(bp->flags & XK_BUF_DIRTY))) {
		xk_buf_release(bp);
		return err;
	}
	xk_sb_decode(&sb, (const struct xk_dsb *)bp->data);
	sb.qflags &= (uint16_t)~clear;
	mp->sb.qflags &= (uint16_t)~clear;
	/*
	 * A metadir filesystem names its quota files in /quota (the
	 * entry of a cleared one goes with it) and keeps these words 0.
	 */
	if (mp->g.has_metadir)
		lost = 0;
	if (lost & XK_DQTYPE_USER)
		sb.uquotino = mp->sb.uquotino = XK_NULLFSINO;
	if (lost & XK_DQTYPE_GROUP)
		sb.gquotino = mp->sb.gquotino = XK_NULLFSINO;
	if (lost & XK_DQTYPE_PROJ)
		sb.pquotino = mp->sb.pquotino = XK_NULLFSINO;
	xk_sb_encode((struct xk_dsb *)bp->data, &sb);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}

int
quota_forget_lost(struct repair_ctx *rc, unsigned long *applied)
{
	struct quota_state *qs = rc->scan.quota;
	uint16_t clear = 0;
	unsigned int lost = 0;
	int err;

	for (int t = 0; qs && t < NQTYPES; t++) {
		struct qtype *qt = &qs->qt[t];

		if (!(rc->plan.quota_fix[t] & QFIX_LOST))
			continue;
		rc->plan.quota_fix[t] = 0;
		lost |= qt->dqtype;
		clear |= qt->chkd;
	}
	if (!lost)
		return 0;
	err = fix_sb(rc, clear, lost);
	if (err)
		return err;
	(*applied)++;
	for (int t = 0; t < NQTYPES; t++) {
		struct qtype *qt = &qs->qt[t];

		if (!(lost & qt->dqtype))
			continue;
		action_report_why(rc, ACT_SB_WRITTEN, 0, 0, NULL,
				  qt->lost_why, " (the primary): it no longer "
				  "names inode %llu as the %s inode, and that "
				  "type's usage is marked as not counted",
				  (unsigned long long)qt->ino, qt->name);
		notice(rc, "Warning: %s information was cleared.  Limits must "
		     "be set again; the kernel makes a new quota file and "
		     "counts the usage at the next quota mount.\n",
		     qt->name);
	}
	return 0;
}

int
quota_apply(struct repair_ctx *rc, unsigned long *applied)
{
	struct quota_state *qs = rc->scan.quota;
	uint16_t clear = qs ? rc->plan.quota_flags_clear : 0;
	int err = quota_forget_lost(rc, applied);

	for (int t = 0; qs && t < NQTYPES && !err; t++) {
		struct qtype *qt = &qs->qt[t];
		unsigned int *fix = &rc->plan.quota_fix[t];
		unsigned long nrec = 0;

		if (*fix & QFIX_SIZE) {
			err = fix_size(rc, qt);
			(*applied)++;
			if (!err)
				action_report(rc, ACT_QUOTA_FIXED, 0, -1, NULL,
					      "Set the size of the %s quota "
					      "file (inode %llu)", qt->name,
					      (unsigned long long)qt->ino);
		}
		if (!err && (*fix & QFIX_RECORDS)) {
			err = fix_records(rc, qt, &nrec);
			if (nrec)
				action_report(rc, ACT_QUOTA_FIXED, 0, -1, NULL,
					      "Rewrote %lu %s record%s%s",
					      nrec, qt->name,
					      nrec == 1 ? "" : "s",
					      qt->counting ? " with the usage "
					      "counted" : "");
			*applied += nrec;
		}
		if (!err && (*fix & QFIX_MISSING) && qt->counting &&
		    !(*fix & QFIX_UNCHECK) && !other_findings(rc)) {
			unsigned long nb = 0;
			int gerr = grow_file(rc, qt, &nb);

			/*
			 * -ENOSPC: the filesystem has no room for the new
			 * blocks (grow_file allocates before it writes), a
			 * verdict; the kernel then recounts.
			 */
			if (xk_err_operational(gerr) && gerr != -ENOSPC) {
				err = gerr;
				break;
			}
			if (!gerr) {
				if (nb)
					action_report(rc, ACT_QUOTA_FIXED, 0,
						      -1, NULL, "Added %lu "
						      "block%s of dquots to "
						      "the %s file for the ids "
						      "in use with none", nb,
						      nb == 1 ? "" : "s",
						      qt->name);
				*applied += nb;
				continue;
			}
			*fix |= QFIX_UNCHECK;
		} else if ((*fix & QFIX_MISSING) && qt->counting &&
			   !(*fix & QFIX_UNCHECK) &&
			   (*applied || need_rebuild(rc))) {
			/*
			 * Other repairs go first; once they are done, a
			 * later pass finds only this and grows the file.
			 */
			continue;
		} else if (*fix & QFIX_MISSING) {
			*fix |= QFIX_UNCHECK;
		}
		if (*fix & QFIX_UNCHECK) {
			info(rc, "Note: %s usage cannot be rebuilt here; "
			     "the kernel recounts it at the next quota "
			     "mount.\n", qt->name);
			clear |= qt->chkd;
		}
	}
	if (!err && (rc->mp->sb.qflags & clear)) {
		err = fix_sb(rc, clear, 0);
		(*applied)++;
		if (!err)
			action_report(rc, ACT_SB_WRITTEN, 0, 0, NULL,
				      " (the primary): quota flags 0x%x "
				      "cleared", clear);
	}
	quota_free(rc);
	return err;
}
