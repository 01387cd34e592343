// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * AG headers and per-AG btrees, a visitor of the metadata walker
 * (libfs/walk.c): per AG, the AGF through its verifier, every block of
 * the bnobt, cntbt, rmapbt and refcountbt, the AGFL; the AGI, every
 * block of the inobt and finobt.
 *
 * In: an open handle.  Out: a finding per failed header, block or link;
 * and, per AG in rc->scan.ags: the space the headers, log, AGFL and btree
 * blocks occupy (claims), the records of every tree (for the space and
 * inode phases), the header counters, and the inobt/finobt agreement and
 * the AGI and AGF counters that only need the trees.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/walk.h>

#include "repair.h"

/*
 * One AG's walk (libfs/walk.c, each header before what it roots): the
 * visitor's state.
 */
struct ag_walk {
	struct repair_ctx	*rc;
	uint32_t		agno;
	struct ag_scan		*as;
	int			follow;	/* the header just visited is usable */
	struct xk_agf		agf;	/* the usable AGF, for its AGFL */
};

/* The owner a tree's own blocks are claimed for. */
static uint64_t
tree_owner(enum xk_btnum bt)
{
	switch (bt) {
	case XK_BT_REFC:
		return XK_RMAP_OWN_REFC;
	case XK_BT_INO:
	case XK_BT_FINO:
		return XK_RMAP_OWN_INOBT;
	default:
		return XK_RMAP_OWN_AG;
	}
}

static int
cmp_rmap_start(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;

	return (x->agbno > y->agbno) - (x->agbno < y->agbno);
}

static int
push_chunk(struct xk_vec *v, const struct xk_inobt_rec *rec)
{
	return xk_vec_push(v, rec, sizeof(*rec));
}

/* A tree's record, kept for the space and inode phases. */
static int
walk_rec(void *ctx, const struct xk_walk_tree *t, const void *rec)
{
	struct ag_walk *aw = ctx;
	struct ag_scan *as = aw->as;
	enum xk_btnum bt = t->ops->btnum;

	switch (bt) {
	case XK_BT_BNO:
	case XK_BT_CNT: {
		const struct xk_alloc_rec *r = rec;

		return claims_add(bt == XK_BT_BNO ? &as->freesp : &as->cntsp,
				  xk_be32_get(r->ar_startblock),
				  xk_be32_get(r->ar_blockcount), 0, 0);
	}
	case XK_BT_RMAP: {
		const struct xk_rmap_rec *r = rec;

		return claims_add(&as->rmaps, xk_be32_get(r->rm_startblock),
				  xk_be32_get(r->rm_blockcount),
				  xk_be64_get(r->rm_owner),
				  xk_be64_get(r->rm_offset));
	}
	case XK_BT_REFC: {
		const struct xk_refcount_rec *r = rec;
		uint32_t start = xk_be32_get(r->rc_startblock);
		uint32_t len = xk_be32_get(r->rc_blockcount);

		/* CoW staging extents are space in use, owned by CoW. */
		if (start & XK_REFC_COWFLAG)
			claim_agb(aw->rc, aw->agno, start & ~XK_REFC_COWFLAG,
				  len, XK_RMAP_OWN_COW);
		return claims_add(&as->refcs, start, len,
				  xk_be32_get(r->rc_refcount), 0);
	}
	case XK_BT_INO:
		return push_chunk(&as->chunks.vec, rec);
	case XK_BT_FINO:
		return push_chunk(&as->fchunks.vec, rec);
	default:
		return 0;
	}
}

static void
walk_tree_fail(void *ctx, const struct xk_walk_tree *t,
	       const struct xk_fail *f)
{
	struct ag_walk *aw = ctx;

	(void)t;
	fix_problem(aw->rc, PR_BTREE_BAD, f);
}

/* A tree walked: its block count and whether it walked clean. */
static void
walk_tree_done(void *ctx, const struct xk_walk_tree *t)
{
	struct ag_walk *aw = ctx;
	struct repair_ctx *rc = aw->rc;
	enum xk_btnum bt = t->ops->btnum;

	if (repair_oserr(rc, t->err, "walking the %s of AG %u", t->ops->name,
			 aw->agno))
		return;
	if (t->err && t->err != XK_ECORRUPT)
		report(rc, PR_BTREE_BAD, t->ops->name, aw->agno, 0,
		       XK_NO_DADDR, "walk", "%s", xk_strerror(t->err));
	aw->as->tree_blocks[bt] = t->nblocks;
	aw->as->trees_ok[bt] = (t->err == 0);
	if (rc->opt.verbose)
		fprintf(rc->out, "        - AG %u %s: %llu blocks, %llu "
			"records\n", aw->agno, t->ops->name,
			(unsigned long long)t->nblocks,
			(unsigned long long)t->nrecs);
}

static void
read_fail(struct repair_ctx *rc, enum problem pr, const char *what,
	  uint32_t agno, unsigned int sector, int err)
{
	if (repair_oserr(rc, err, "reading the %s of AG %u", what, agno))
		return;
	report(rc, pr, what, agno, 0, xk_ag_hdr_daddr(rc->mp, agno, sector),
	       "read", "%s", xk_strerror(err));
}

/*
 * The live AGFL slots, flfirst..fllast around the ring, are AG space.
 * Visited only after a usable AGF (aw->agf) and its trees.
 */
static void
visit_agfl(struct ag_walk *aw, const struct xk_walk_block *b)
{
	struct repair_ctx *rc = aw->rc;
	struct xk_mount *mp = rc->mp;
	const struct xk_agf *agf = &aw->agf;
	uint32_t agno = aw->agno;
	struct xk_buf *bp = b->bp;
	uint32_t first = xk_be32_get(agf->agf_flfirst);
	uint32_t count = xk_be32_get(agf->agf_flcount);
	uint32_t size = mp->g.agfl_size;
	int err = bp ? bp->error : b->err;

	if (!bp) {
		read_fail(rc, PR_AGFL_BAD, "AGFL", agno, XK_AGFL_SECTOR, err);
		return;
	}
	if (err)
		fix_problem(rc, PR_AGFL_BAD, &bp->fail);
	if (err && err != XK_EBADCRC && !rc->found.error)
		xr_agfl_slots(rc, agno, agf, bp->data);
	if (err == 0 || err == XK_EBADCRC) {
		uint32_t last = xk_be32_get(agf->agf_fllast);
		uint32_t want = count ? (last + size - first) % size + 1 : 0;

		if (want != count)
			report(rc, PR_AGF_COUNTER, "AGF", agno, 0,
			       xk_ag_hdr_daddr(mp, agno, XK_AGF_SECTOR),
			       "flcount", "free list runs %u..%u (%u slots) "
			       "but flcount is %u", first, last, want, count);
		for (uint32_t i = 0; i < count && i < size; i++) {
			uint32_t bno = xk_be32_get(*xk_agfl_bno(bp->data,
						   (first + i) % size));

			if (bno == XK_NULLAGBLOCK ||
			    bno >= xk_ag_blocks(mp, agno)) {
				report(rc, PR_AGFL_BAD, "AGFL", agno, 0,
				       bp->daddr, "bno", "live slot %u holds "
				       "no valid block (%u)",
				       (first + i) % size, bno);
				continue;
			}
			claim_agb(rc, agno, bno, 1, XK_RMAP_OWN_AG);
			aw->as->agfl_live++;
		}
	}
}

/*
 * A header that failed a counter or root rule is still this AG's
 * header: its tree roots are worth walking (the walker checks each root
 * and height itself).  Only a header that is not this AG's at all (its
 * identity rules failed) is skipped.  Counter cross-checks use only a
 * header that passed.
 */
static int
header_usable(int err, const struct xk_fail *f)
{
	static const char *const identity[] = {
		"magic", "versionnum", "uuid", "seqno", "length", "size",
	};

	if (!err || err == XK_EBADCRC)
		return 1;
	for (size_t i = 0; i < sizeof(identity) / sizeof(identity[0]); i++)
		if (f->check && strcmp(f->check, identity[i]) == 0)
			return 0;
	return 1;
}

/* The AGF: its findings and counters; aw->follow when usable. */
static void
visit_agf(struct ag_walk *aw, const struct xk_walk_block *b)
{
	struct repair_ctx *rc = aw->rc;
	struct ag_scan *as = aw->as;
	uint32_t agno = aw->agno;
	struct xk_buf *bp = b->bp;
	int err = bp ? bp->error : b->err;
	const struct xk_agf *h;

	if (!bp) {
		read_fail(rc, PR_AGF_BAD, "AGF", agno, XK_AGF_SECTOR, err);
		return;
	}
	if (err)
		fix_problem(rc, PR_AGF_BAD, &bp->fail);
	if (err && !rc->found.error) {
		if (err == XK_EBADCRC || bp->fail.crc_bad)
			xr_msg(rc, "agf has bad CRC for ag %u", agno);
		xr_agf_header(rc, agno, xk_buf_agf(bp));
	}
	if (!header_usable(err, &bp->fail))
		return;
	h = xk_buf_agf(bp);
	as->agf_ok = !err || err == XK_EBADCRC;
	as->agf_freeblks = xk_be32_get(h->agf_freeblks);
	as->agf_longest = xk_be32_get(h->agf_longest);
	as->agf_btreeblks = xk_be32_get(h->agf_btreeblks);
	as->agf_rmap_blocks = xk_be32_get(h->agf_rmap_blocks);
	as->agf_refc_blocks = xk_be32_get(h->agf_refcount_blocks);
	as->agf_flcount = xk_be32_get(h->agf_flcount);
	memcpy(&aw->agf, h, sizeof(aw->agf));
	aw->follow = 1;
}

/* The AGI: its findings, counters and unlinked buckets; aw->follow. */
static void
visit_agi(struct ag_walk *aw, const struct xk_walk_block *b)
{
	struct repair_ctx *rc = aw->rc;
	struct xk_mount *mp = rc->mp;
	struct ag_scan *as = aw->as;
	uint32_t agno = aw->agno;
	struct xk_buf *bp = b->bp;
	int err = bp ? bp->error : b->err;
	const struct xk_agi *h;

	if (!bp) {
		read_fail(rc, PR_AGI_BAD, "AGI", agno, XK_AGI_SECTOR, err);
		return;
	}
	if (err)
		fix_problem(rc, PR_AGI_BAD, &bp->fail);
	if (err && !rc->found.error) {
		if (err == XK_EBADCRC || bp->fail.crc_bad)
			xr_msg(rc, "agi has bad CRC for ag %u", agno);
		xr_agi_header(rc, agno, xk_buf_agi(bp));
	}
	if (!header_usable(err, &bp->fail)) {
		as->xr_agi_lost = 1;
		return;
	}
	h = xk_buf_agi(bp);
	as->agi_ok = !err || err == XK_EBADCRC;
	as->agi_count = xk_be32_get(h->agi_count);
	as->agi_freecount = xk_be32_get(h->agi_freecount);
	as->agi_iblocks = xk_be32_get(h->agi_iblocks);
	as->agi_fblocks = xk_be32_get(h->agi_fblocks);
	/*
	 * Open-but-unlinked inodes hang off these buckets until the last
	 * close; after a clean unmount (or log recovery) they are empty.
	 */
	for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++) {
		uint32_t agino = xk_be32_get(h->agi_unlinked[i]);

		if (agino != XK_NULLAGINO)
			report(rc, PR_UNLINKED, "AGI", agno,
			       xk_agino_to_ino(mp, agno, agino), bp->daddr,
			       "unlinked", "bucket %d holds inode %llu", i,
			       (unsigned long long)xk_agino_to_ino(mp, agno,
								   agino));
	}
	aw->follow = 1;
}

/*
 * Each block the walker meets: the headers' findings, and every tree
 * block claimed as its tree's space.  A claim or read that could not be
 * recorded (an operational error) ends the walk.
 */
static int
walk_visit(void *ctx, const struct xk_walk_block *b)
{
	struct ag_walk *aw = ctx;

	switch (b->kind) {
	case XK_WALK_AGF:
		aw->follow = 0;
		visit_agf(aw, b);
		break;
	case XK_WALK_AGI:
		aw->follow = 0;
		visit_agi(aw, b);
		break;
	case XK_WALK_AGFL:
		visit_agfl(aw, b);
		break;
	case XK_WALK_BTREE:
		claim_agb(aw->rc, aw->agno, (uint32_t)b->bno, 1,
			  tree_owner(b->ops->btnum));
		break;
	default:
		break;
	}
	return aw->rc->found.error;
}

/* The trees (and an AGF's AGFL) of a usable AGF or AGI. */
static int
walk_follow(void *ctx, const struct xk_walk_block *b)
{
	(void)b;
	return ((struct ag_walk *)ctx)->follow;
}

/*
 * One AG through the walker: the AGF, its free-space, rmap and refcount
 * trees, the AGFL; then the AGI, its inode trees.
 */
static void
scan_ag(struct repair_ctx *rc, uint32_t agno)
{
	struct ag_walk aw = {
		.rc = rc, .agno = agno, .as = &rc->scan.ags[agno],
	};
	struct xk_walk w = {
		.flags = XK_WALK_BY_HEADER | XK_WALK_NO_SB | XK_WALK_NO_INODES,
		.ctx = &aw, .visit = walk_visit, .follow = walk_follow,
		.rec = walk_rec, .tree_fail = walk_tree_fail,
		.tree_done = walk_tree_done,
	};
	int err = xk_walk_metadata(rc->mp, agno, agno, &w);

	/* Header verdicts are findings already; the rest stops the run. */
	if (err && err != XK_ECORRUPT)
		repair_error(rc, err, "walking the headers and btrees of AG "
			     "%u", agno);
}

/* Free inodes in a record (holes excluded) and inodes it holds. */
static void
chunk_counts(const struct xk_mount *mp, const struct xk_inobt_rec *r,
	     uint32_t *count, uint32_t *nfree)
{
	if (mp->g.has_sparse) {
		*count = r->ir_u.sp.ir_count;
		*nfree = r->ir_u.sp.ir_freecount;
	} else {
		*count = XK_INODES_PER_CHUNK;
		*nfree = xk_be32_get(r->ir_u.f.ir_freecount);
	}
}

/*
 * Counters and trees that agree with each other: the finobt holds exactly
 * the inobt records with a free inode; the AGI counts the inobt's inodes;
 * the AGF counts the free-space and rmap tree blocks.
 */
static void
check_ag_counters(struct repair_ctx *rc, uint32_t agno)
{
	struct xk_mount *mp = rc->mp;
	struct ag_scan *as = &rc->scan.ags[agno];
	uint64_t agi_daddr = xk_ag_hdr_daddr(mp, agno, XK_AGI_SECTOR);
	uint64_t agf_daddr = xk_ag_hdr_daddr(mp, agno, XK_AGF_SECTOR);

	if (as->agi_ok && as->trees_ok[XK_BT_INO]) {
		uint64_t count = 0, nfree = 0;
		size_t j = 0;
		int fino_ok = mp->g.has_finobt && as->trees_ok[XK_BT_FINO];

		for (size_t i = 0; i < as->chunks.n; i++) {
			uint32_t c, fr;
			const struct xk_inobt_rec *r = &as->chunks.v[i];

			chunk_counts(mp, r, &c, &fr);
			count += c;
			nfree += fr;
			if (!fino_ok || fr == 0)
				continue;
			if (j >= as->fchunks.n ||
			    memcmp(&as->fchunks.v[j], r, sizeof(*r))) {
				report(rc, PR_FINOBT_MISMATCH, "finobt", agno,
				       0, XK_NO_DADDR, "records", "inode chunk "
				       "%u has free inodes but no matching "
				       "finobt record",
				       xk_be32_get(r->ir_startino));
				fino_ok = 0;
				continue;
			}
			j++;
		}
		if (fino_ok && j != as->fchunks.n)
			report(rc, PR_FINOBT_MISMATCH, "finobt", agno, 0,
			       XK_NO_DADDR, "records", "the finobt has %zu "
			       "records, the inobt %zu chunks with free "
			       "inodes", as->fchunks.n, j);
		if (count != as->agi_count)
			report(rc, PR_AGI_COUNTER, "AGI", agno, 0, agi_daddr,
			       "count", "AGI says %u inodes, the inobt holds "
			       "%llu", as->agi_count,
			       (unsigned long long)count);
		if (nfree != as->agi_freecount)
			report(rc, PR_AGI_COUNTER, "AGI", agno, 0, agi_daddr,
			       "freecount", "AGI says %u free inodes, the "
			       "inobt holds %llu", as->agi_freecount,
			       (unsigned long long)nfree);
		if (mp->g.has_inobtcnt &&
		    as->tree_blocks[XK_BT_INO] != as->agi_iblocks)
			report(rc, PR_AGI_COUNTER, "AGI", agno, 0, agi_daddr,
			       "iblocks", "AGI says %u inobt blocks, the tree "
			       "has %llu", as->agi_iblocks,
			       (unsigned long long)as->tree_blocks[XK_BT_INO]);
		if (mp->g.has_inobtcnt && mp->g.has_finobt &&
		    as->trees_ok[XK_BT_FINO] &&
		    as->tree_blocks[XK_BT_FINO] != as->agi_fblocks)
			report(rc, PR_AGI_COUNTER, "AGI", agno, 0, agi_daddr,
			       "fblocks", "AGI says %u finobt blocks, the tree "
			       "has %llu", as->agi_fblocks,
			       (unsigned long long)as->tree_blocks[XK_BT_FINO]);
	}
	if (as->agf_ok && as->trees_ok[XK_BT_BNO] && as->trees_ok[XK_BT_CNT] &&
	    (!mp->g.has_rmapbt || as->trees_ok[XK_BT_RMAP])) {
		/* Blocks of the free-space and rmap trees, less their roots. */
		uint64_t want = as->tree_blocks[XK_BT_BNO] - 1 +
				as->tree_blocks[XK_BT_CNT] - 1;

		if (mp->g.has_rmapbt)
			want += as->tree_blocks[XK_BT_RMAP] - 1;
		if (want != as->agf_btreeblks)
			report(rc, PR_AGF_COUNTER, "AGF", agno, 0, agf_daddr,
			       "btreeblks", "AGF says %u, the trees have %llu "
			       "blocks beyond their roots", as->agf_btreeblks,
			       (unsigned long long)want);
		if (mp->g.has_rmapbt &&
		    as->tree_blocks[XK_BT_RMAP] != as->agf_rmap_blocks)
			report(rc, PR_AGF_COUNTER, "AGF", agno, 0, agf_daddr,
			       "rmapblocks", "AGF says %u, the rmapbt has %llu",
			       as->agf_rmap_blocks,
			       (unsigned long long)as->tree_blocks[XK_BT_RMAP]);
	}
	if (as->agf_ok && mp->g.has_reflink && as->trees_ok[XK_BT_REFC] &&
	    as->tree_blocks[XK_BT_REFC] != as->agf_refc_blocks)
		report(rc, PR_AGF_COUNTER, "AGF", agno, 0, agf_daddr,
		       "refcntblocks", "AGF says %u, the refcountbt has %llu",
		       as->agf_refc_blocks,
		       (unsigned long long)as->tree_blocks[XK_BT_REFC]);
}

int
cmp_chunk_start(const void *a, const void *b)
{
	uint32_t x = xk_be32_get(((const struct xk_inobt_rec *)a)->ir_startino);
	uint32_t y = xk_be32_get(((const struct xk_inobt_rec *)b)->ir_startino);

	return (x > y) - (x < y);
}

int
ag_push_chunk(struct ag_scan *as, const struct xk_inobt_rec *rec)
{
	return push_chunk(&as->chunks.vec, rec);
}

/*
 * The inobt could not be read whole: take the inode chunks from the
 * rmapbt's inode-chunk records instead, when it could be read.  Each
 * 64-inode stretch with any chunk block becomes a record; stretches
 * without blocks are holes (sparse chunks), and every inode is marked
 * in use so the inode scan looks at each one and says which are free.
 */
static void
chunks_from_rmap(struct repair_ctx *rc, uint32_t agno)
{
	struct xk_mount *mp = rc->mp;
	struct ag_scan *as = &rc->scan.ags[agno];
	uint32_t per_blk_log = mp->g.inopblog;
	uint32_t last_start = XK_NULLAGINO;
	struct xk_inobt_rec rec;

	if (!mp->g.has_rmapbt || !as->trees_ok[XK_BT_RMAP]) {
		as->chunks_lost = 1;
		return;
	}
	as->chunks.n = 0;
	sort_v(as->rmaps.v, as->rmaps.n, sizeof(*as->rmaps.v), cmp_rmap_start);
	for (size_t i = 0; i < as->rmaps.n; i++) {
		const struct claim *c = &as->rmaps.v[i];

		if (c->owner != XK_RMAP_OWN_INODES)
			continue;
		for (uint64_t b = c->agbno; b < (uint64_t)c->agbno + c->len;
		     b++) {
			uint32_t agino = (uint32_t)(b << per_blk_log);
			uint32_t start = agino & ~(XK_INODES_PER_CHUNK - 1u);
			unsigned int bit = (agino - start) /
					   XK_INODES_PER_HOLEMASK_BIT;
			uint32_t ninos = 1u << per_blk_log;

			if (start != last_start) {
				if (last_start != XK_NULLAGINO &&
				    push_chunk(&as->chunks.vec, &rec)) {
					repair_error(rc, -ENOMEM, "listing "
						     "the inode chunks of AG "
						     "%u from its rmapbt",
						     agno);
					return;
				}
				memset(&rec, 0, sizeof(rec));
				xk_be32_set(&rec.ir_startino, start);
				if (mp->g.has_sparse)
					xk_be16_set(&rec.ir_u.sp.ir_holemask,
						    0xffff);
				last_start = start;
			}
			if (mp->g.has_sparse) {
				uint16_t hm = xk_be16_get(
					rec.ir_u.sp.ir_holemask);
				unsigned int nbits = ninos /
					XK_INODES_PER_HOLEMASK_BIT;

				if (!nbits)
					nbits = 1;
				for (unsigned int k = bit; k < bit + nbits &&
				     k < 16; k++)
					hm &= (uint16_t)~(1u << k);
				xk_be16_set(&rec.ir_u.sp.ir_holemask, hm);
				rec.ir_u.sp.ir_count = (uint8_t)(64 -
					4 * __builtin_popcount(hm));
			}
		}
	}
	if (last_start != XK_NULLAGINO &&
	    push_chunk(&as->chunks.vec, &rec)) {
		repair_error(rc, -ENOMEM, "listing the inode chunks of AG %u "
			     "from its rmapbt", agno);
		return;
	}
	as->chunks_synth = 1;
	info(rc, "AG %u: inode btree unreadable; using the %zu inode chunks "
	     "the rmapbt records.\n", agno, as->chunks.n);
}

int
phase_ag_headers(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	/* AG headers fill the first sectors of every AG. */
	uint32_t hdr_blocks = (uint32_t)((4ULL * mp->g.sectsize +
					  mp->g.blocksize - 1) >>
					 mp->g.blocklog);

	for (uint32_t agno = 0; agno < mp->g.agcount && !rc->found.error; agno++) {
		if (rc->opt.verbose)
			fprintf(rc->out, "        - agno = %u\n", agno);
		claim_agb(rc, agno, 0, hdr_blocks, XK_RMAP_OWN_FS);
		scan_ag(rc, agno);
		check_ag_counters(rc, agno);
		/*
		 * A tree walk stopped by an operational error leaves the
		 * inobt "not read", not unreadable: no fallback then.
		 */
		if (rc->found.error)
			break;
		if (!rc->scan.ags[agno].trees_ok[XK_BT_INO])
			chunks_from_rmap(rc, agno);
		meter_add(rc, 1);
		meter_show(rc, 0);
	}
	/* An external log owns no data-device blocks. */
	if (!xk_log_is_external(mp))
		claim_fsb(rc, mp->g.logstart, mp->g.logblocks,
			  XK_RMAP_OWN_LOG, 0);
	return rc->found.error;
}
