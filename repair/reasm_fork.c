// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A regular file's block map brought back from the device scan.  When
 * a file's bmbt fails its walk (its root in the inode or a node block
 * damaged) and no usable rmapbt can give the map back
 * (phase_rmap_forks.c), the leaves of the old bmbt are usually still on
 * disk: each says, in its header, which inode owns it, where it is, and
 * carries a CRC.  Their records are the file's map.  The scan's index
 * gives the leaves naming the inode, and the map is rebuilt from their
 * records (rebuild_fork.c's builder, as from the rmapbt), in place of
 * clearing the inode as xfs_repair does.
 *
 * What is trusted, and why:
 *  1. a leaf only when the scan accepted it (UUID, own address, CRC,
 *     structure), it verifies again when read here with the inode as
 *     its owner and level 0, no other inode claims its block (the
 *     file's own damaged walk may: it is the same tree), and the bnobt,
 *     when read whole, does not list it as free: a leaf the kernel
 *     freed (a tree that shrank, a file deleted whose inode number was
 *     reused) verifies but lies in free space;
 *  2. a record only when its extent lies inside one AG, its file range
 *     can exist, and its blocks are neither claimed by another inode
 *     (or metadata) nor free; on a reflink filesystem, blocks another
 *     file maps too are taken where the refcountbt (read whole) says
 *     they are shared;
 *  3. conflicts among the records: identical records (the same leaf
 *     seen twice, a stale copy) count once; records whose file ranges
 *     overlap, or whose blocks overlap, are all left out, since which
 *     one is the file's cannot be told (the range reads as a hole; the
 *     blocks become free space);
 *  4. an inode whose attr fork is in btree form too is left alone: the
 *     leaves of the two forks cannot be told apart by their headers.
 *
 * What is lost is said: each sibling pointer of a leaf taken that names
 * a leaf not found is a range of the file whose map is gone (it reads
 * as a hole after the repair), and the records left out are counted.
 * No record at all: the inode is cleared, as before.  The file's size,
 * owner and times are the inode's, kept.
 *
 * The new bmbt goes into the old tree's blocks the scan found (its
 * leaves and nodes): the records are at most what those leaves held, so
 * fully packed leaves fit.  The blocks not reused are neither free nor
 * in use in the next pass, whose AG rebuild frees them.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/btree.h>
#include <xfskit/format/dir.h>
#include <xfskit/init.h>
#include <xfskit/meta.h>
#include <xfskit/scan.h>

#include "repair.h"
#include "reasm.h"

/* A record found, and the leaf it came from. */
struct found_rec {
	struct xk_bmbt_irec	r;
	uint8_t			drop;
};

/* A leaf taken: where it is, its siblings, the file range it maps. */
struct found_leaf {
	uint64_t	daddr;
	uint64_t	left, right;	/* daddr, or UINT64_MAX for none */
	uint64_t	first, end;	/* file offsets; first > end: empty */
};

struct fork_work {
	XK_VEC_OF(struct found_rec)	recs;
	XK_VEC_OF(struct found_leaf)	leaves;
	XK_VEC_OF(uint64_t)		old;	/* fsblock numbers */
};

static void
work_free(struct fork_work *w)
{
	xk_vec_free(&w->recs.vec);
	xk_vec_free(&w->leaves.vec);
	xk_vec_free(&w->old.vec);
}

/* A daddr of the data device as an fsblock number (AG, block). */
static uint64_t
daddr_to_fsb(const struct xk_mount *mp, uint64_t daddr)
{
	uint64_t lin = daddr >> mp->g.blkbb_log;

	return xk_agb_to_fsb(mp, (uint32_t)(lin / mp->g.agblocks),
			     (uint32_t)(lin % mp->g.agblocks));
}

static int
cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

static int
cmp_off(const void *a, const void *b)
{
	const struct found_rec *x = a, *y = b;

	if (x->r.startoff != y->r.startoff)
		return (x->r.startoff > y->r.startoff) -
		       (x->r.startoff < y->r.startoff);
	if (x->r.startblock != y->r.startblock)
		return (x->r.startblock > y->r.startblock) -
		       (x->r.startblock < y->r.startblock);
	if (x->r.blockcount != y->r.blockcount)
		return (x->r.blockcount > y->r.blockcount) -
		       (x->r.blockcount < y->r.blockcount);
	return x->r.unwritten - y->r.unwritten;
}

static int
cmp_block(const void *a, const void *b)
{
	const struct found_rec *const *x = a, *const *y = b;

	return ((*x)->r.startblock > (*y)->r.startblock) -
	       ((*x)->r.startblock < (*y)->r.startblock);
}

static int
cmp_leaf_first(const void *a, const void *b)
{
	const struct found_leaf *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* A record's extent: in one AG, a possible file range, ours to take. */
static int
rec_ok(const struct repair_ctx *rc, uint64_t ino, const struct xk_bmbt_irec *r)
{
	const struct xk_mount *mp = rc->mp;

	return r->blockcount &&
	       xk_fsbext_valid(mp, r->startblock, r->blockcount) &&
	       xk_fileext_valid(mp, r->startoff, r->blockcount) &&
	       reasm_block_takeable(rc, xk_fsb_to_daddr(mp, r->startblock),
				    r->blockcount, ino, 0, 1);
}

/* One leaf the scan found: read, checked, its records listed. */
static int
take_leaf(struct repair_ctx *rc, uint64_t ino, const struct xk_scan_ent *e,
	  struct fork_work *w, size_t *dropped)
{
	struct xk_mount *mp = rc->mp;
	uint64_t nullp = xk_btree_nullptr(&xk_bmbt_ops);
	struct found_leaf leaf = { .daddr = e->daddr, .first = UINT64_MAX };
	struct xk_buf *bp;
	uint64_t sib, fsb = daddr_to_fsb(mp, e->daddr);
	uint16_t nrecs;
	int err;

	err = xk_buf_read_ctx(mp, e->daddr, mp->g.blocksize,
			      xk_bmbt_ops.buf_ops, -1, ino, 0, &bp);
	if (xk_err_operational(err))
		return err;
	if (err)
		return 0;
	if (xk_btree_block_level(bp->data) != 0) {
		xk_buf_release(bp);
		return 0;
	}
	sib = xk_btree_block_sib(&xk_bmbt_ops, bp->data, 0);
	leaf.left = sib == nullp ? UINT64_MAX : xk_fsb_to_daddr(mp, sib);
	sib = xk_btree_block_sib(&xk_bmbt_ops, bp->data, 1);
	leaf.right = sib == nullp ? UINT64_MAX : xk_fsb_to_daddr(mp, sib);
	nrecs = xk_btree_block_numrecs(bp->data);
	for (uint16_t i = 0; i < nrecs; i++) {
		struct found_rec fr = { .drop = 0 };

		xk_bmbt_rec_unpack(xk_btree_rec(&xk_bmbt_ops, bp->data, i),
				   &fr.r);
		if (i == 0)
			leaf.first = fr.r.startoff;
		leaf.end = fr.r.startoff + fr.r.blockcount;
		if (!rec_ok(rc, ino, &fr.r)) {
			(*dropped)++;
			continue;
		}
		if (xk_vec_push(&w->recs.vec, &fr, sizeof(fr))) {
			xk_buf_release(bp);
			return -ENOMEM;
		}
	}
	xk_buf_release(bp);
	if (xk_vec_push(&w->leaves.vec, &leaf, sizeof(leaf)) ||
	    xk_vec_push(&w->old.vec, &fsb, sizeof(fsb)))
		return -ENOMEM;
	return 0;
}

/*
 * Mark every record whose range (file offsets, or blocks) starts inside
 * the furthest-reaching one before it, and that one; v sorted by that
 * range's start.
 */
static void
overlaps(struct found_rec **v, size_t n, int blocks)
{
	struct found_rec *far = NULL;
	uint64_t far_end = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t start = blocks ? v[i]->r.startblock :
					  v[i]->r.startoff;

		if (far && start < far_end)
			far->drop = v[i]->drop = 1;
		if (!far || start + v[i]->r.blockcount > far_end) {
			far = v[i];
			far_end = start + v[i]->r.blockcount;
		}
	}
}

/*
 * Rule 3: identical records once; overlapping file ranges or blocks
 * leave every record involved out.  Returns how many were left out, or
 * -ENOMEM.
 */
static int64_t
settle_records(struct fork_work *w)
{
	struct found_rec **byblock;
	size_t n = 0, out = 0;
	int64_t dropped = 0;

	sort_v(w->recs.v, w->recs.n, sizeof(*w->recs.v), cmp_off);
	for (size_t i = 0; i < w->recs.n; i++)
		if (!n || cmp_off(&w->recs.v[n - 1], &w->recs.v[i]))
			w->recs.v[n++] = w->recs.v[i];
	w->recs.n = n;
	byblock = xk_malloc((n ? n : 1) * sizeof(*byblock));
	if (!byblock)
		return -ENOMEM;
	/* File ranges, in offset order: one starting inside another. */
	for (size_t i = 0; i < n; i++)
		byblock[i] = &w->recs.v[i];
	overlaps(byblock, n, 0);
	/* Then the blocks, in block order. */
	sort_v(byblock, n, sizeof(*byblock), cmp_block);
	overlaps(byblock, n, 1);
	free(byblock);
	for (size_t i = 0; i < n; i++) {
		if (w->recs.v[i].drop)
			dropped++;
		else
			w->recs.v[out++] = w->recs.v[i];
	}
	w->recs.n = out;
	return dropped;
}

/* Whether a leaf at daddr was taken (leaves sorted by daddr). */
static int
leaf_taken(const uint64_t *daddrs, size_t n, uint64_t daddr)
{
	return bsearch(&daddr, daddrs, n, sizeof(*daddrs), cmp_u64) != NULL;
}

/*
 * The ranges whose leaves were not found: after a leaf whose right
 * sibling was not taken, up to the next leaf taken (or the end of the
 * file); before the first leaf when its left sibling was not taken.
 */
static int
find_holes(struct fork_work *w, struct reasm_fork *f)
{
	struct found_leaf *lv = w->leaves.v;
	size_t n = w->leaves.n, nh = 0;
	uint64_t *daddrs;

	daddrs = xk_malloc((n ? n : 1) * sizeof(*daddrs));
	f->holes = xk_malloc((n + 1) * sizeof(*f->holes));
	if (!daddrs || !f->holes) {
		free(daddrs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		daddrs[i] = lv[i].daddr;
	sort_v(daddrs, n, sizeof(*daddrs), cmp_u64);
	sort_v(lv, n, sizeof(*lv), cmp_leaf_first);
	if (n && lv[0].left != UINT64_MAX &&
	    !leaf_taken(daddrs, n, lv[0].left)) {
		f->holes[nh][0] = 0;
		f->holes[nh++][1] = lv[0].first;
	}
	for (size_t i = 0; i < n; i++) {
		if (lv[i].right == UINT64_MAX ||
		    leaf_taken(daddrs, n, lv[i].right))
			continue;
		f->holes[nh][0] = lv[i].first > lv[i].end ? lv[i].first :
				  lv[i].end;
		f->holes[nh++][1] = i + 1 < n ? lv[i + 1].first : UINT64_MAX;
	}
	free(daddrs);
	f->nholes = nh;
	return 0;
}

/* ino's map from the scan's bmbt blocks into f (f->n 0: none found). */
static int
collect_fork(struct repair_ctx *rc, struct reasm_fork *f)
{
	const struct xk_scan *res = &rc->reasm->res;
	struct fork_work w = { .recs = { .vec = { 0 } } };
	size_t first, count, dropped = 0;
	int64_t conflicts;
	int err = 0;

	xk_scan_lookup(res, XK_SCAN_BMBT, f->ino, &first, &count);
	for (size_t i = first; i < first + count && !err; i++) {
		const struct xk_scan_ent *e = &res->ents.v[i];
		uint64_t fsb = daddr_to_fsb(rc->mp, e->daddr);

		if (!reasm_block_takeable(rc, e->daddr, 1, f->ino,
					  XK_RMAP_OFF_BMBT_BLOCK, 0))
			continue;
		if (e->level)	/* a node: its block may hold the new tree */
			err = xk_vec_push(&w.old.vec, &fsb, sizeof(fsb));
		else
			err = take_leaf(rc, f->ino, e, &w, &dropped);
	}
	conflicts = err ? 0 : settle_records(&w);
	if (!err && conflicts < 0)
		err = (int)conflicts;
	if (!err)
		err = find_holes(&w, f);
	if (!err && w.recs.n) {
		f->recs = xk_malloc(w.recs.n * sizeof(*f->recs));
		if (!f->recs)
			err = -ENOMEM;
	}
	if (err) {
		work_free(&w);
		return err;
	}
	for (size_t i = 0; i < w.recs.n; i++) {
		xk_bmbt_rec_pack(&f->recs[i], &w.recs.v[i].r);
		f->blocks += w.recs.v[i].r.blockcount;
	}
	f->n = w.recs.n;
	f->leaves = w.leaves.n;
	f->dropped = dropped + (size_t)conflicts;
	f->other = attr_blocks_claimed(rc, f->ino);
	sort_v(w.old.v, w.old.n, sizeof(*w.old.v), cmp_u64);
	f->nold = 0;
	for (size_t i = 0; i < w.old.n; i++)
		if (!f->nold || w.old.v[f->nold - 1] != w.old.v[i])
			w.old.v[f->nold++] = w.old.v[i];
	/* The heap vector's array is the plan's (freed with it). */
	f->old = w.old.v;
	w.old.v = NULL;
	w.old.n = 0;
	work_free(&w);
	return 0;
}

/* A file whose map to rebuild. */
struct cand {
	uint64_t	ino;
	uint32_t	nlink;
	uint16_t	mode;
	uint8_t		listed;		/* in the pass's inode list */
};

static int
cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return (x->ino > y->ino) - (x->ino < y->ino);
}

/*
 * Whether an inode that failed its verifier fails only by its data fork
 * (a bmbt root that does not fit, a level beyond reason): its CRC is
 * right, and with the data fork emptied the inode verifies.  Such an
 * inode was cleared whole (its core cannot be salvaged around a fork
 * it cannot read); its core is sound, its map is what was lost.
 */
static int
only_fork_bad(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip)
{
	struct xk_mount *mp = rc->mp;
	struct xk_dinode *copy;
	struct xk_fail f;
	int err;

	memset(&f, 0, sizeof(f));
	if (xk_dinode_verify(mp, ino, dip, &f) != XK_ECORRUPT)
		return 0;
	copy = xk_malloc(mp->g.inodesize);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, dip, mp->g.inodesize);
	memset(xk_dfork_dptr(copy), 0, xk_dfork_dsize(copy, mp->g.inodesize));
	copy->di_format = XK_DINODE_FMT_EXTENTS;
	xk_dinode_set_nextents(copy, 0, xk_dinode_anextents(copy));
	xk_inode_init_crc(mp, copy);
	memset(&f, 0, sizeof(f));
	err = xk_dinode_verify(mp, ino, copy, &f);
	free(copy);
	return err == 0;
}

/*
 * Whether ino is a file to rebuild: a regular file (not metadata) whose
 * data fork is in btree form, on the data device, its attr fork not a
 * btree (rule 4), and either in the pass's list with its fork found bad
 * (listed) or cleared for a bad fork alone (only_fork_bad).  c gets its
 * mode and link count.  1, 0, or an operational error.
 */
static int
candidate(struct repair_ctx *rc, uint64_t ino, int listed, struct cand *c)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int err, yes;

	err = xk_inode_read(rc->mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (!bp)
		return xk_err_operational(err) ? err : 0;
	yes = dip->di_format == XK_DINODE_FMT_BTREE &&
	      dip->di_aformat != XK_DINODE_FMT_BTREE &&
	      (xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFREG &&
	      !fork_is_rt(rc->mp, dip, XK_DATA_FORK) &&
	      !xk_dinode_is_metafile(dip);
	if (yes && !listed)
		yes = only_fork_bad(rc, ino, dip);
	*c = (struct cand){
		.ino = ino, .nlink = xk_be32_get(dip->di_nlink),
		.mode = xk_be16_get(dip->di_mode), .listed = (uint8_t)listed,
	};
	xk_buf_release(bp);
	return yes;
}

/* ino onto the list when it is a candidate; 0 or an error. */
static int
consider(struct repair_ctx *rc, uint64_t ino, int listed, struct xk_vec *v)
{
	struct cand c;
	int yes = candidate(rc, ino, listed, &c);

	if (yes <= 0)
		return yes;
	return xk_vec_push(v, &c, sizeof(c));
}

/* The candidates: listed ones first, then those entries name. */
static int
find_candidates(struct repair_ctx *rc, struct cand **vp, size_t *np)
{
	XK_VEC_OF(struct cand) v = { .vec = { 0 } };
	size_t out = 0;
	int err = 0;

	inodes_order(rc);
	for (size_t i = 0; i < rc->scan.ninodes && !err; i++) {
		const struct inode_info *ii = &rc->scan.inodes[i];

		if (ii->fork_lost && !ii->meta &&
		    (ii->mode & XK_S_IFMT) == XK_S_IFREG)
			err = consider(rc, ii->ino, 1, &v.vec);
	}
	for (size_t i = 0; i < rc->scan.nedges && !err; i++) {
		const struct edge *e = &rc->scan.edges[i];

		if ((e->ftype == XK_DIR3_FT_REG_FILE ||
		     e->ftype == EDGE_NO_FTYPE) &&
		    xk_ino_valid(rc->mp, e->child) &&
		    !inode_info_find(rc, e->child) &&
		    inode_info_find(rc, e->parent))
			err = consider(rc, e->child, 0, &v.vec);
	}
	if (err) {
		xk_vec_free(&v.vec);
		return err;
	}
	/* One each (a file with several names is named several times). */
	sort_v(v.v, v.n, sizeof(*v.v), cmp_cand);
	for (size_t i = 0; i < v.n; i++)
		if (!out || v.v[out - 1].ino != v.v[i].ino)
			v.v[out++] = v.v[i];
	*vp = v.v;
	*np = out;
	return 0;
}

/*
 * A file cleared for its fork alone comes back: it joins the pass's
 * inode list (as the repair will leave it, with and without -n).
 */
static int
join_list(struct repair_ctx *rc, const struct cand *c)
{
	const struct inode_info ii = {
		.ino = c->ino, .nlink = c->nlink, .mode = c->mode,
	};

	if (c->listed)
		return 0;
	if (xk_vec_push(&rc->scan.inode_vec, &ii, sizeof(ii)))
		return -ENOMEM;
	if (!rc->opt.no_modify)
		mark_in_use(rc, c->ino);
	return 0;
}

int
reasm_forks(struct repair_ctx *rc)
{
	struct reasm_state *st = rc->reasm;
	struct reasm_fork *nv = NULL;
	struct cand *cand = NULL;
	size_t ncand = 0, joined = 0;
	int err;

	if (st)
		reasm_forks_free(st);
	if (rc->opt.scan == REPAIR_SCAN_NEVER || rmaps_usable(rc))
		return 0;
	err = find_candidates(rc, &cand, &ncand);
	if (!err && ncand && !st) {
		st = xk_calloc(1, sizeof(*st));
		if (!st)
			err = -ENOMEM;
		rc->reasm = st;
	}
	if (!err && ncand) {
		char why[96];

		snprintf(why, sizeof(why), "%zu file%s whose block map is "
			 "lost", ncand, ncand == 1 ? "" : "s");
		err = reasm_scan(rc, why);
		if (err) {
			free(cand);
			return err;
		}
		nv = xk_calloc(ncand, sizeof(*nv));
		if (!nv)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < ncand && !err; i++) {
		struct reasm_fork *f = &nv[st->nforks];
		char path[1024];

		f->ino = cand[i].ino;
		err = collect_fork(rc, f);
		if (err)
			break;
		if (!f->n) {
			action_path(rc, f->ino, path, sizeof(path));
			info(rc, "        - file %llu (%s): no bmbt leaf of it "
			     "found by the device scan\n",
			     (unsigned long long)f->ino, path);
			free(f->holes);
			free(f->old);
			memset(f, 0, sizeof(*f));
			continue;
		}
		st->forks = nv;
		st->nforks++;
		err = join_list(rc, &cand[i]);
		joined += !cand[i].listed;
		if (err || rc->opt.no_modify)
			continue;
		/* A salvaged core (IFIX_CORE) is still rewritten. */
		reasm_unplan(rc, f->ino, IFIX_CLEAR | IFIX_RMAP_FORK);
		plan_inode(rc, f->ino, IFIX_SCAN_FORK, 0);
	}
	if (joined)
		inodes_order(rc);
	for (size_t i = 0; st && rc->opt.no_modify && i < st->nforks && !err;
	     i++) {
		const struct reasm_fork *f = &st->forks[i];
		char path[1024], losses[320];

		action_path(rc, f->ino, path, sizeof(path));
		reasm_fork_losses(f, losses, sizeof(losses));
		info(rc, "        - would rebuild the block map of file %llu "
		     "(%s) from %zu bmbt leaves found by the device scan "
		     "(%llu extents, %llu blocks%s)\n",
		     (unsigned long long)f->ino, path, f->leaves,
		     (unsigned long long)f->n, (unsigned long long)f->blocks,
		     losses);
	}
	if (st && !st->forks)
		free(nv);
	free(cand);
	if (err)
		return rc->found.error ? rc->found.error :
		       repair_error(rc, err, "rebuilding block maps from the "
				    "device scan");
	if (rc->opt.no_modify && st)
		reasm_forks_free(st);
	return rc->found.error;
}
