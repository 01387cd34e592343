// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inodes: every inode of every chunk the inobt records (sparse holes
 * skipped) is read and checked.
 *
 * In: rc->scan.ags[].chunks from the AG phase.  Out: findings for bad inodes,
 * inodes whose allocation state disagrees with the inobt, bad forks,
 * block counts, directories, attributes and symlinks; claims for inode
 * chunks, file extents and bmbt blocks; rc->scan.inodes (one entry per
 * allocated, valid inode) and rc->scan.edges (directory entries) for the
 * link-count phase.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "repair.h"
#include "readahead.h"

#include <xfskit/format/symlink.h>

/*
 * A new, zeroed entry at the end of the inode list.  The pointer is good
 * until the next append to the list (which may move it).
 */
static struct inode_info *
add_inode(struct repair_ctx *rc)
{
	static const struct inode_info zero;

	if (xk_vec_push(&rc->scan.inode_vec, &zero, sizeof(zero)))
		return NULL;
	return &rc->scan.inodes[rc->scan.ninodes - 1];
}

struct extent_sum {
	struct repair_ctx	*rc;
	uint64_t		ino;
	int			fork;
	uint64_t		blocks;
	struct fork_map		*map;
	int			rt;	/* realtime data fork */
};

/* Each mapped extent is space the inode owns. */
static int
claim_extent(void *ctx, const struct xk_bmbt_irec *r)
{
	struct extent_sum *es = ctx;
	uint64_t off = r->startoff;

	if (es->fork == XK_ATTR_FORK)
		off |= XK_RMAP_OFF_ATTR_FORK;
	if (r->unwritten)
		off |= XK_RMAP_OFF_UNWRITTEN;
	/* Realtime extents are the realtime volume's (rt_check.c). */
	if (es->rt)
		rt_claim(es->rc, es->ino, r);
	else
		claim_fsb(es->rc, r->startblock, r->blockcount, es->ino, off);
	if (es->rc->found.error)
		return es->rc->found.error;
	es->blocks += r->blockcount;
	es->map->vec.first = FORK_MAP_FIRST;
	return xk_vec_push(&es->map->vec, r, sizeof(*r));
}

/*
 * Both forks' extents claimed and listed; bad[fork] is 1 when the walk
 * found the fork damaged, -1 when it could not be read at all (no
 * memory, an I/O error), 0 otherwise.
 */
static uint64_t
scan_forks(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	   struct fork_map maps[2], int bad[2])
{
	uint64_t total = 0;

	for (int fork = XK_DATA_FORK; fork <= XK_ATTR_FORK; fork++) {
		struct extent_sum es = { rc, ino, fork, 0, &maps[fork],
					 fork_is_rt(rc->mp, dip, fork) };
		struct fork_extent_fn cb = { &es, claim_extent };
		uint64_t bmbt = 0;
		int ret;

		bad[fork] = 0;
		if (fork == XK_ATTR_FORK && !dip->di_forkoff)
			break;
		/* An error (memory, I/O) says nothing of the fork. */
		ret = walk_fork(rc, ino, dip, fork, &bmbt, &cb);
		if (ret < 0)
			break;
		bad[fork] = ret != 0;
		total += es.blocks + bmbt;
	}
	return total;
}

/*
 * The fix for a fork the walk found bad: an extent list keeps its valid
 * extents; a damaged bmbt is rebuilt from the rmapbt when that is
 * intact, else the inode cannot be trusted; an attr fork's map is
 * rebuilt from the rmapbt too, or the attr fork dropped.
 */
static void
plan_fork_fix(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	      const int bad[2])
{
	if (bad[XK_ATTR_FORK] && rc->mp->g.has_rmapbt &&
	    (dip->di_aformat == XK_DINODE_FMT_EXTENTS ||
	     dip->di_aformat == XK_DINODE_FMT_BTREE))
		plan_inode(rc, ino, IFIX_RMAP_AFORK, 0);
	else if (bad[XK_ATTR_FORK] && dip->di_aformat == XK_DINODE_FMT_EXTENTS)
		plan_inode(rc, ino, IFIX_ATRIM, 0);
	else if (bad[XK_ATTR_FORK])
		plan_inode(rc, ino, IFIX_NOATTR, 0);
	if (!bad[XK_DATA_FORK])
		return;
	if (dip->di_format == XK_DINODE_FMT_EXTENTS)
		plan_inode(rc, ino, IFIX_TRIM, 0);
	else if (rc->mp->g.has_rmapbt)
		plan_inode(rc, ino, IFIX_RMAP_FORK, 0);
	else
		plan_inode(rc, ino, IFIX_CLEAR, 0);
}

/* Symlinks: a local target fills the fork; a remote one its blocks. */
static void
check_symlink(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	      const struct fork_map *map)
{
	uint64_t size = xk_be64_get(dip->di_size);

	if (size > XK_SYMLINK_MAXLEN) {
		report(rc, PR_SYMLINK_BAD, "symlink", -1, ino, XK_NO_DADDR,
		       "size", "target of %llu bytes is longer than %d",
		       (unsigned long long)size, XK_SYMLINK_MAXLEN);
		return;
	}
	if (dip->di_format == XK_DINODE_FMT_LOCAL) {
		const uint8_t *t = xk_dfork_dptr(dip);

		if (memchr(t, 0, size))
			report(rc, PR_SYMLINK_BAD, "symlink", -1, ino,
			       XK_NO_DADDR, "target", "local target holds a "
			       "NUL byte");
		return;
	}
	if (dip->di_format != XK_DINODE_FMT_LOCAL) {
		uint64_t got = 0;

		/*
		 * One header per extent, not per block: the kernel writes and
		 * reads each mapping of a remote target as one buffer.
		 */
		uint32_t maxblks = xk_symlink_blocks(rc->mp->g.blocksize,
						     XK_SYMLINK_MAXLEN);

		for (size_t i = 0; i < map->n; i++) {
			const struct xk_bmbt_irec r = map->v[i];
			struct xk_buf *bp;
			int err;

			if (r.blockcount > maxblks) {
				report(rc, PR_SYMLINK_BAD, "symlink", -1, ino,
				       XK_NO_DADDR, "extent", "a mapping of "
				       "%llu blocks; a target needs at most %u",
				       (unsigned long long)r.blockcount,
				       maxblks);
				continue;
			}
			err = xk_buf_read_ctx(rc->mp,
				xk_fsb_to_daddr(rc->mp, r.startblock),
				(uint32_t)r.blockcount * rc->mp->g.blocksize,
				&xk_symlink_buf_ops, -1, ino,
				XK_READ_SALVAGE, &bp);
			if (!bp && repair_oserr(rc, err, "reading the target "
						"of symlink %llu",
						(unsigned long long)ino))
				return;
			if (err && bp)
				fix_problem(rc, PR_SYMLINK_BAD, &bp->fail);
			else if (err)
				report(rc, PR_SYMLINK_BAD, "symlink", -1, ino,
				       XK_NO_DADDR, "read", "%s",
				       xk_strerror(err));
			if (!err) {
				uint32_t o = xk_get_be32(bp->data + 4);
				uint32_t n = xk_get_be32(bp->data + 8);
				size_t h = sizeof(struct xk_dsymlink_hdr);

				if (o != got)
					report(rc, PR_SYMLINK_BAD,
					       "symlink block", -1, ino,
					       bp->daddr, "offset", "piece "
					       "says offset %u, expected %llu",
					       o, (unsigned long long)got);
				/* xfs_repair's words; the kernel's readlink
				 * would stop there. */
				if (n <= bp->len - h &&
				    memchr(bp->data + h, 0, n))
					report(rc, PR_SYMLINK_BAD,
					       "symlink block", -1, ino,
					       bp->daddr, "target", "found "
					       "illegal null character in "
					       "symlink inode %llu",
					       (unsigned long long)ino);
				got += n;
			}
			xk_buf_release(bp);
		}
		if (got != size)
			report(rc, PR_SYMLINK_BAD, "symlink", -1, ino,
			       XK_NO_DADDR, "size", "remote blocks hold %llu "
			       "bytes of a %llu-byte target",
			       (unsigned long long)got,
			       (unsigned long long)size);
	}
}

/*
 * A directory with findings: a short-form one is rewritten from the
 * entries that can be read; a block-form one is rewritten from its
 * salvaged entries by the builder, in the AG rebuild (dirfix.c).
 */
static void
plan_dir_fix(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip)
{
	if (dip->di_format == XK_DINODE_FMT_LOCAL)
		plan_inode(rc, ino, IFIX_SF_DROP, 0);
	else
		plan_dir_rebuild(rc, ino);
}

/*
 * One inode.  A core that fails its verifier is salvaged in a copy when
 * the failing fields can be derived (salvage_core); the check then goes
 * on with the copy, as the repair will leave it, and the repair rewrites
 * it.  Otherwise the inode is cleared.  An inode in use that the inobt
 * calls free is trusted (its core says it is in use) and checked as in
 * use; the rebuild then corrects the inobt.  Returns whether the inode
 * is in use as far as the repair is concerned.
 */
static int
check_inode(struct repair_ctx *rc, uint64_t ino, int marked_free,
	    struct xk_buf *bp, const struct xk_dinode *ondisk)
{
	struct xk_fail f;
	uint16_t mode;
	struct inode_info *ii;
	struct fork_map maps[2] = { { .vec = { 0 } }, { .vec = { 0 } } };
	const struct xk_dinode *dip = ondisk;
	struct xk_dinode *copy = NULL;
	uint64_t blocks;
	unsigned long before, fixed;
	int bad[2] = { 0, 0 };
	int cleared = 0;	/* xfs_repair's words said it is cleared */
	int err;

	memset(&f, 0, sizeof(f));
	f.structure = "inode";
	f.agno = -1;
	f.ino = ino;
	f.daddr = bp->daddr;
	err = xk_dinode_verify(rc->mp, ino, dip, &f);
	if (err) {
		copy = xk_malloc(rc->mp->g.inodesize);
		if (!copy) {
			/* Not a verdict on the inode: the run stops. */
			repair_error(rc, -ENOMEM, "checking inode %llu",
				     (unsigned long long)ino);
			return 0;
		}
		memcpy(copy, ondisk, rc->mp->g.inodesize);
		if (salvage_core(rc, ino, copy)) {
			free(copy);
			copy = NULL;
		}
		if (fix_problem(rc, PR_INODE_BAD, &f))
			plan_inode(rc, ino, copy ? IFIX_CORE : IFIX_CLEAR, 0);
		if (!rc->found.error)
			cleared = xr_inode_header(rc, ino, ondisk, !copy ||
					!xk_be16_get(copy->di_mode)) ||
				  (!copy && xr_inode_cleared(rc, ino, &f));
		/* An inode in use cleared for a check xfs_repair words
		 * otherwise: ours said why, xfs_repair's line says what. */
		if (!rc->found.error && !copy && !cleared &&
		    xk_be16_get(ondisk->di_mode)) {
			xr_inode_clearing(rc, ino);
			cleared = 1;
		}
		if (!copy)
			return 0;
		dip = copy;
	}
	check_core_policy(rc, ino, dip, bp->daddr);
	mode = xk_be16_get(dip->di_mode);
	/* marked_free < 0: no inobt to compare with (a synthesized chunk). */
	if (marked_free > 0 && mode)
		report(rc, PR_INODE_STATE, "inode", -1, ino, bp->daddr,
		       "free", "the inobt says free, but the inode is in use "
		       "(mode 0%o)", mode);
	if (!mode) {
		if (marked_free == 0) {
			report(rc, PR_INODE_STATE, "inode", -1, ino, bp->daddr,
			       "free", "the inobt says in use, but the inode "
			       "is free");
			/* xfs_repair: "cleared inode N" said it. */
			if (cleared)
				xr_covered(rc);
		}
		free(copy);
		return 0;
	}
	blocks = scan_forks(rc, ino, dip, maps, bad);
	if (rc->found.error)
		goto out;
	if (bad[XK_DATA_FORK] || bad[XK_ATTR_FORK])
		plan_fork_fix(rc, ino, dip, bad);
	/* A fork being fixed is counted again once it is. */
	if (blocks != xk_be64_get(dip->di_nblocks) &&
	    report(rc, PR_INODE_BAD, "inode", -1, ino, bp->daddr, "nblocks",
		   "inode says %llu blocks, its forks map %llu",
		   (unsigned long long)xk_be64_get(dip->di_nblocks),
		   (unsigned long long)blocks) &&
	    !bad[XK_DATA_FORK] && !bad[XK_ATTR_FORK])
		plan_inode(rc, ino, IFIX_NBLOCKS, blocks);
	ii = add_inode(rc);
	if (!ii) {
		repair_error(rc, -ENOMEM, "listing inode %llu",
			     (unsigned long long)ino);
		goto out;
	}
	ii->ino = ino;
	ii->nlink = xk_be32_get(dip->di_nlink);
	ii->mode = mode;
	ii->sfdir = dip->di_format == XK_DINODE_FMT_LOCAL;
	/* The verifier let the flag through only on a metadir filesystem. */
	ii->meta = xk_dinode_is_metafile(dip);
	ii->metatype = ii->meta ? (uint8_t)xk_dinode_metatype(dip) : 0;
	ii->fork_lost = bad[XK_DATA_FORK] != 0;
	ii->afork_lost = bad[XK_ATTR_FORK] != 0;
	/* Findings below are counted to choose the fix. */
	before = rc->found.nproblems;
	switch (mode & XK_S_IFMT) {
	case XK_S_IFDIR:
		check_directory(rc, ino, dip, &maps[XK_DATA_FORK]);
		if (rc->found.nproblems != before)
			plan_dir_fix(rc, ino, dip);
		break;
	case XK_S_IFLNK:
		check_symlink(rc, ino, dip, &maps[XK_DATA_FORK]);
		if (rc->found.nproblems == before)
			break;
		plan_inode(rc, ino, IFIX_CLEAR, 0);
		ii->clearing = 1;
		/* Our words for why, then xfs_repair's for what. */
		if (!rc->found.error)
			xr_inode_clearing(rc, ino);
		break;
	}
	before = rc->found.nproblems;
	fixed = 0;
	if (dip->di_forkoff && !bad[XK_ATTR_FORK])
		fixed = check_attr_fork(rc, ino, dip, &maps[XK_ATTR_FORK]);
	/* The entries that are intact are kept (attrfix.c). */
	if (rc->found.nproblems - before > fixed)
		plan_attr_rewrite(rc, ino);
out:
	xk_vec_free(&maps[0].vec);
	xk_vec_free(&maps[1].vec);
	free(copy);
	return 1;
}

static int
ino_in_hole(const struct xk_mount *mp, const struct xk_inobt_rec *r, int i)
{
	if (!mp->g.has_sparse)
		return 0;
	return (xk_be16_get(r->ir_u.sp.ir_holemask) >>
		(i / XK_INODES_PER_HOLEMASK_BIT)) & 1;
}

/*
 * One chunk; *seen gets the inodes found free (or unreadable, or in a
 * hole) as set bits, for the rebuild of the inode btrees.
 */
static void
scan_chunk(struct repair_ctx *rc, uint32_t agno, const struct xk_inobt_rec *r,
	   int synth, uint32_t *last_claimed, uint64_t *seen)
{
	struct xk_mount *mp = rc->mp;
	uint32_t start = xk_be32_get(r->ir_startino);
	uint64_t freemask = xk_be64_get(r->ir_free);

	/* The chunk's blocks are claimed as runs, not one by one. */
	uint32_t run = 0, nrun = 0;

	*seen = ~0ULL;

	for (int i = 0; i < XK_INODES_PER_CHUNK; i++) {
		uint32_t agino = start + (uint32_t)i;
		uint64_t ino = xk_agino_to_ino(mp, agno, agino);
		uint32_t agbno = xk_agino_to_agbno(mp, agino);
		struct xk_buf *bp;
		struct xk_dinode *dip;
		int err;

		if (ino_in_hole(mp, r, i))
			continue;
		if (agbno != *last_claimed) {
			if (nrun && agbno == run + nrun) {
				nrun++;
			} else {
				if (nrun)
					claim_agb(rc, agno, run, nrun,
						  XK_RMAP_OWN_INODES);
				run = agbno;
				nrun = 1;
			}
			*last_claimed = agbno;
		}
		err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
		if (err && !bp && repair_oserr(rc, err, "reading inode %llu "
					       "in AG %u",
					       (unsigned long long)ino, agno))
			break;
		if (err && !bp) {
			report(rc, PR_INODE_BAD, "inode", agno, ino,
			       XK_NO_DADDR, "read", "%s", xk_strerror(err));
			continue;
		}
		/* A cluster-level failure is reported per inode below. */
		if (check_inode(rc, ino, synth ? -1 : (int)((freemask >> i) & 1),
				bp, dip))
			*seen &= ~(1ULL << i);
		xk_buf_release(bp);
	}
	if (nrun)
		claim_agb(rc, agno, run, nrun, XK_RMAP_OWN_INODES);
}

/*
 * Scan one AG's chunks; chunks come from src (the AG phase's results),
 * which also receives what the scan saw free.
 */
static void
scan_ag(struct repair_ctx *rc, struct ag_scan *src, uint32_t agno)
{
	uint32_t last = XK_NULLAGBLOCK;
	struct ra_plan ra;

	free(src->seen_free);
	src->seen_free = xk_calloc(src->chunks.n ? src->chunks.n : 1,
				sizeof(*src->seen_free));
	/* Without it a rebuild would take every inode for free. */
	if (!src->seen_free) {
		repair_error(rc, -ENOMEM, "scanning inodes in AG %u", agno);
		return;
	}

	if (rc->opt.verbose)
		fprintf(rc->out, "        - agno = %u: %zu inode chunks\n",
			agno, src->chunks.n);
	/* Read ahead the chunks a window ahead of the scan (readahead.c). */
	ra_chunks(&ra, rc->mp, agno, src->chunks.v,
		  rc->opt.no_prefetch ? 0 : src->chunks.n);
	for (size_t i = 0; i < src->chunks.n && !rc->found.error; i++) {
		ra_step(&ra, i);
		if (repair_interrupted()) {
			repair_error(rc, -EINTR, "checking the inodes");
			break;
		}
		scan_chunk(rc, agno, &src->chunks.v[i], src->chunks_synth, &last,
			   &src->seen_free[i]);
		meter_add(rc, 1);
		meter_show(rc, 0);
	}
	ra_free(&ra);
}

int
scan_chunks_from(struct repair_ctx *rc, uint32_t agno, size_t from)
{
	struct ag_scan *as = &rc->scan.ags[agno];
	uint32_t last = XK_NULLAGBLOCK;
	uint64_t *nv = xk_realloc(as->seen_free, (as->chunks.n ? as->chunks.n : 1) *
			       sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	as->seen_free = nv;
	for (size_t i = from; i < as->chunks.n && !rc->found.error; i++)
		scan_chunk(rc, agno, &as->chunks.v[i], 1, &last, &nv[i]);
	return rc->found.error;
}

/*
 * Parallel scan.  Each worker has its own handle (its own descriptor and
 * cache: libfs shares nothing between handles), its own claim lists for
 * every AG (an inode's extents may lie in any AG), its own inode and
 * entry lists, and one output buffer per AG; AGs go to workers round
 * robin.  Afterwards everything is merged and the buffers are printed in
 * AG order, so the output does not depend on the number of threads.
 */
struct worker {
	struct repair_ctx	ctx;
	struct repair_ctx	*parent;
	unsigned int		index, count;
	char			**bufs;		/* per AG, owned by parent */
	size_t			*lens;
	struct workers_done	*done;		/* parent's */
};

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct repair_ctx *rc = &w->ctx;
	struct repair_ctx *parent = w->parent;
	uint32_t agcount = parent->mp->g.agcount;

	for (uint32_t agno = w->index; agno < agcount && !rc->found.error;
	     agno += w->count) {
		FILE *out = open_memstream(&w->bufs[agno], &w->lens[agno]);

		if (!out) {
			repair_error(rc, -ENOMEM, "scanning inodes in AG %u",
				     agno);
			break;
		}
		rc->out = out;
		scan_ag(rc, &parent->scan.ags[agno], agno);
		xr_flush(rc);
		fclose(out);
		rc->out = NULL;
	}
	workers_done_add(w->done);
	return NULL;
}

static int
worker_open(struct worker *w, struct repair_ctx *parent)
{
	struct repair_ctx *rc = &w->ctx;
	struct xk_dev *dev;
	struct xk_fail f;
	int err;

	memset(rc, 0, sizeof(*rc));
	rc->opt.device = parent->opt.device;
	rc->opt.no_modify = parent->opt.no_modify;
	rc->opt.verbose = parent->opt.verbose;
	rc->opt.report = parent->opt.report;
	rc->pass = parent->pass;	/* later passes' findings: --report's */
	rc->meter = parent->meter;	/* counted here, drawn by the parent */
	err = xk_dev_open(parent->opt.device, XK_DEV_RDONLY |
			  (parent->opt.direct ? XK_DEV_DIRECT : 0), &dev);
	if (err)
		return err;
	err = xk_mount_from_sb(dev, &parent->mp->sb, XK_MOUNT_RDONLY, &rc->mp,
			       &f);
	if (err) {
		xk_dev_close(dev);
		return err;
	}
	rc->mp->owns_dev = 1;
	/* The workers share the check's cache budget. */
	xk_mount_set_cache_limit(rc->mp, parent->cache_bytes / w->count);
	rc->scan.ags = xk_calloc(parent->mp->g.agcount, sizeof(*rc->scan.ags));
	if (!rc->scan.ags)
		return -ENOMEM;
	rc->spill = parent->spill;
	ags_attach_spill(rc);
	return 0;
}

/*
 * Move a worker's list into the parent's: taken over whole when the
 * parent's is empty, else appended and freed at once, so at most one
 * worker's list exists twice at any time.  Spilled lists are appended
 * through their mappings (the parent's file grows, nothing is held on
 * the heap).
 */
static int
adopt(struct xk_vec *dst, struct xk_vec *src, size_t size)
{
	int err = 0;

	if (dst->n == 0) {
		xk_vec_move(dst, src);
	} else {
		err = xk_vec_append(dst, src->v, src->n, size);
		xk_vec_free(src);
	}
	return err;
}

/* Fold a worker's findings and lists into the parent. */
static int
worker_merge(struct repair_ctx *parent, struct worker *w)
{
	struct repair_ctx *rc = &w->ctx;
	int err = 0;

	parent->found.nproblems += rc->found.nproblems;
	for (int i = 0; i < PR_NR; i++)
		parent->found.counts[i] += rc->found.counts[i];
	for (uint32_t agno = 0; agno < parent->mp->g.agcount && !err; agno++) {
		struct claims *to = &parent->scan.ags[agno].used;
		struct claims *from = &rc->scan.ags[agno].used;

		err = xk_vec_append(&to->vec, from->v, from->n,
				 sizeof(*from->v));
	}
	if (!err)
		err = adopt(&parent->scan.inode_vec, &rc->scan.inode_vec,
			    sizeof(*rc->scan.inodes));
	if (!err)
		err = adopt(&parent->scan.edge_vec, &rc->scan.edge_vec,
			    sizeof(*rc->scan.edges));
	if (!err)
		err = adopt(&parent->scan.rt_vec, &rc->scan.rt_vec,
			    sizeof(*rc->scan.rt_claims));
	return err;
}

/*
 * Repair: the workers' plans (inode fixes, directory rewrites), put back
 * in the order a single thread would have made them, so the repair does
 * not depend on the thread count.
 */
static int
merge_plans(struct repair_ctx *rc, struct worker *w, unsigned int n)
{
	struct repair_plan **src = xk_calloc(n, sizeof(*src));
	int err;

	if (!src)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++)
		src[i] = &w[i].ctx.plan;
	err = plan_merge(&rc->plan, src, n, rc->mp);
	free(src);
	return err;
}

static void
worker_close(struct worker *w, uint32_t agcount)
{
	struct repair_ctx *rc = &w->ctx;

	if (rc->scan.ags)
		for (uint32_t agno = 0; agno < agcount; agno++)
			claims_free(&rc->scan.ags[agno].used);
	free(rc->scan.ags);
	xk_vec_free(&rc->scan.inode_vec);
	xk_vec_free(&rc->scan.edge_vec);
	xk_vec_free(&rc->scan.rt_vec);
	plan_free(&rc->plan);
	xk_mount_discard(rc->mp);	/* read-only */
}

static int
phase_inodes_parallel(struct repair_ctx *rc, unsigned int n)
{
	uint32_t agcount = rc->mp->g.agcount;
	struct worker *w = xk_calloc(n, sizeof(*w));
	char **bufs = xk_calloc(agcount, sizeof(*bufs));
	size_t *lens = xk_calloc(agcount, sizeof(*lens));
	pthread_t *tids = xk_calloc(n, sizeof(*tids));
	unsigned int started = 0;
	struct workers_done done = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	int err = 0;

	if (!w || !bufs || !lens || !tids) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned int i = 0; i < n && !err; i++) {
		w[i].parent = rc;
		w[i].index = i;
		w[i].count = n;
		w[i].bufs = bufs;
		w[i].lens = lens;
		w[i].done = &done;
		err = worker_open(&w[i], rc);
		if (!err && (xk_fault(XK_FAULT_THREAD) ||
			     pthread_create(&tids[i], NULL, worker_main,
					    &w[i])))
			err = -EAGAIN;
		if (!err)
			started++;
	}
	/* The workers count into rc's meter; this thread draws it. */
	workers_done_wait(&done, started, rc);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	/* A worker's error (its ctx.error) stops the phase. */
	for (unsigned int i = 0; i < started && !err; i++)
		if (w[i].ctx.found.error)
			err = repair_error(rc, w[i].ctx.found.error, "%s",
					   w[i].ctx.found.error_what);
	for (unsigned int i = 0; i < started && !err; i++)
		err = worker_merge(rc, &w[i]);
	if (!err && started == n)
		err = merge_plans(rc, w, n);
	/* Each AG's findings under its line, as xfs_repair lists them. */
	for (uint32_t agno = 0; agno < agcount; agno++) {
		xr_step(rc, "agno = %u", agno);
		if (bufs[agno] && lens[agno]) {
			live_clear(rc);
			fwrite(bufs[agno], 1, lens[agno], rc->out);
		}
	}
out:
	for (unsigned int i = 0; w && i < n; i++)
		if (w[i].ctx.mp)
			worker_close(&w[i], agcount);
	for (uint32_t agno = 0; bufs && agno < agcount; agno++)
		free(bufs[agno]);
	free(bufs);
	free(lens);
	free(tids);
	free(w);
	return err;
}

int
phase_inodes(struct repair_ctx *rc)
{
	unsigned int n = rc->opt.threads;
	struct repair_meter meter;
	uint64_t chunks = 0;
	int err = 0;

	if (n > rc->mp->g.agcount)
		n = rc->mp->g.agcount;
	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++)
		chunks += rc->scan.ags[agno].chunks.n;
	meter_start(rc, &meter, "Phase 3 - inode chunks", "inodes",
		    XK_INODES_PER_CHUNK, chunks);
	/*
	 * JSON keeps one stream of objects: one thread writes it.  In
	 * repair mode the workers' plans are merged back in AG order.
	 */
	if (n > 1 && !rc->opt.json)
		err = phase_inodes_parallel(rc, n);
	else
		for (uint32_t agno = 0; agno < rc->mp->g.agcount &&
		     !rc->found.error; agno++) {
			xr_step(rc, "agno = %u", agno);
			scan_ag(rc, &rc->scan.ags[agno], agno);
		}
	meter_end(rc);
	return err ? err : rc->found.error;
}
