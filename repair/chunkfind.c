// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Finding inode chunks in an AG whose inode btree and rmapbt are both
 * lost (its AGI and AGF destroyed, say): the directory entries the scan
 * has read name inodes, and every inode it names in such an AG points
 * at a 64-inode chunk that can be checked on disk.  v5 inodes identify
 * themselves (magic, their own number, the filesystem's UUID), so a
 * chunk is taken when one of its clusters holds an inode that says it is
 * the inode at that place; the inodes in the new chunks are scanned like
 * any other, their directories name more inodes, and the search goes on
 * until a round finds nothing new.  The superblock's own inodes (root,
 * realtime, quota) seed it.
 *
 * Inodes that no directory names are not found: a stretch of old inodes
 * looks the same on disk whether it is live or was freed (a freed chunk
 * is never rewritten), so only a reference is trusted.  xfs_repair finds
 * inodes the same way when its inode btree is gone.
 *
 * When the live directories give no more, the directories themselves
 * may be what was lost (the AG's first blocks zeroed take its headers,
 * its btree roots and its first inode chunks, the root directory's
 * among them).  Their data blocks elsewhere still name their owner and
 * their children, so the device scan (-o scan=, once per run) adds the
 * inodes that the entries of every directory block it accepted name,
 * and each block's owner.  Such a reference may come from a stale block
 * (a directory block freed, never rewritten), so it is taken only for
 * an inode that is itself in use and whole on disk: at home (its magic,
 * number and the UUID), its CRC and structure verified, a mode and a
 * link count.  reasm.c then gives the lost directories back from the
 * same blocks and the files found keep their names.
 *
 * Afterwards the AG's chunk list is complete as far as anything can tell
 * and the AG rebuild may go ahead (chunks_lost is cleared).
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/init.h>
#include <xfskit/format/dinode.h>
#include <xfskit/meta.h>
#include <xfskit/scan.h>

#include "repair.h"
#include "reasm.h"

/* A candidate chunk: the AG and the chunk's first agino. */
struct cand {
	uint32_t	agno;
	uint32_t	start;
};

struct cands {
	XK_VEC_OF(struct cand);
};

static int
cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->agno != y->agno)
		return x->agno < y->agno ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* Is ino's chunk in an AG being searched and not yet known? */
static int
wanted(const struct repair_ctx *rc, const uint8_t *lost, uint64_t ino,
       struct cand *out)
{
	const struct xk_mount *mp = rc->mp;
	const struct ag_scan *as;
	struct xk_inobt_rec key;
	uint32_t agno;

	if (ino == 0 || !xk_ino_valid(mp, ino))
		return 0;
	agno = xk_ino_to_agno(mp, ino);
	if (!lost[agno])
		return 0;
	as = &rc->scan.ags[agno];
	out->agno = agno;
	out->start = xk_ino_to_agino(mp, ino) & ~(XK_INODES_PER_CHUNK - 1u);
	xk_be32_set(&key.ir_startino, out->start);
	/* The AG's list is kept sorted between rounds. */
	return !(as->chunks.n && bsearch(&key, as->chunks.v, as->chunks.n,
					sizeof(key), cmp_chunk_start));
}

static int
push_cand(struct cands *c, const struct cand *x)
{
	return xk_vec_push(&c->vec, x, sizeof(*x));
}

/* Does the inode at ino say it is that inode of this filesystem? */
static int
inode_is_home(struct repair_ctx *rc, uint64_t ino)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int ok, err;

	/* An unreadable inode is not at home; memory or I/O stops the run. */
	err = xk_inode_read(rc->mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp)
		return repair_oserr(rc, err, "looking for the inode chunk "
				    "of inode %llu",
				    (unsigned long long)ino);
	ok = xk_be16_get(dip->di_magic) == XK_DINODE_MAGIC &&
	     dip->di_version == 3 && xk_be64_get(dip->di_ino) == ino &&
	     !memcmp(dip->di_uuid, rc->mp->meta_uuid, 16);
	xk_buf_release(bp);
	return ok;
}

/* What the disk says of an inode named only by the scan's blocks. */
enum { INO_GONE, INO_LIVE, INO_LIVE_DIR, INO_STALE };

/*
 * INO_LIVE(_DIR): at home, verified whole (CRC, structure), a mode and a
 * link count (a directory).  INO_STALE: at home but free, or failing.
 * INO_GONE: not at home (its cluster zeroed or overwritten: the damage
 * took it).  Negative for memory or I/O.
 */
static int
inode_state(struct repair_ctx *rc, uint64_t ino)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	struct xk_fail f = { 0 };
	int st = INO_GONE, err;

	err = xk_inode_read(rc->mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp)
		return repair_oserr(rc, err, "reading inode %llu, named by "
				    "a block of the device scan",
				    (unsigned long long)ino);
	if (xk_be16_get(dip->di_magic) == XK_DINODE_MAGIC &&
	    xk_be64_get(dip->di_ino) == ino &&
	    !memcmp(dip->di_uuid, rc->mp->meta_uuid, 16)) {
		st = INO_STALE;
		if (!xk_dinode_verify(rc->mp, ino, dip, &f) &&
		    xk_be16_get(dip->di_mode) && xk_be32_get(dip->di_nlink))
			st = (xk_be16_get(dip->di_mode) & XK_S_IFMT) ==
			     XK_S_IFDIR ? INO_LIVE_DIR : INO_LIVE;
	}
	xk_buf_release(bp);
	return st;
}

static int
cmp_judged(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a >> 2, y = *(const uint64_t *)b >> 2;

	return (x > y) - (x < y);
}

/*
 * inode_state as the first pass found it (reasm_state.judged): the
 * first pass reads the disk and records; later ones look it up.
 */
static int
judge(struct repair_ctx *rc, uint64_t ino)
{
	struct reasm_state *st = rc->reasm;
	uint64_t key = ino << 2, rec;
	const uint64_t *hit;
	int s;

	if (st->judged_sorted) {
		hit = bsearch(&key, st->judged.v, st->judged.n,
			      sizeof(key), cmp_judged);
		if (hit)
			return (int)(*hit & 3);
	}
	s = inode_state(rc, ino);
	if (s < 0 || st->judged_sorted)
		return s;
	rec = key | (uint64_t)s;
	return xk_vec_push(&st->judged.vec, &rec, sizeof(rec)) ? -ENOMEM : s;
}

/* Gathering the inodes the scan's directory blocks name. */
struct scan_names {
	struct repair_ctx	*rc;
	const uint8_t		*lost;
	struct cands		*out;
};

static int
scan_name_one(struct scan_names *s, uint64_t ino)
{
	struct cand c;
	int st;

	if (!wanted(s->rc, s->lost, ino, &c))
		return 0;
	st = judge(s->rc, ino);
	if (st < 0)
		return st;
	return st == INO_LIVE || st == INO_LIVE_DIR ? push_cand(s->out, &c)
						     : 0;
}

static int
scan_name(void *ctx, const uint8_t *name, uint8_t namelen, uint64_t ino,
	  uint8_t ftype)
{
	(void)name;
	(void)namelen;
	(void)ftype;
	return scan_name_one(ctx, ino);
}

/*
 * The inodes in lost AGs that the device scan's directory blocks name,
 * as entries or as their owner, when in use: appended to out.  Each
 * block is read again through its verifier, owner checked.  A block
 * whose owner is on disk but is no directory in use is a stale block of
 * a directory removed or shrunk (the inodes it names may be as stale,
 * in chunks freed whole, which the kernel never writes again): none of
 * its names is taken.  An owner not on disk any more says nothing.
 */
static int
gather_scanned(struct repair_ctx *rc, const uint8_t *lost, struct cands *out)
{
	const struct xk_scan *res;
	struct scan_names s = { rc, lost, out };
	uint64_t owner = 0;
	int ost = INO_GONE;
	int err = reasm_scan_device(rc, "inode chunks of AGs whose inode "
				    "btree is lost");

	if (err)
		return err;
	res = &rc->reasm->res;
	for (size_t i = 0; i < res->ents.n; i++) {
		const struct xk_scan_ent *e = &res->ents.v[i];
		struct xk_buf *bp;

		if (e->type != XK_SCAN_DIR3_BLOCK &&
		    e->type != XK_SCAN_DIR3_DATA)
			continue;
		/* Blocks come sorted by type and owner: judge it once. */
		if (e->owner != owner) {
			struct cand c;

			owner = e->owner;
			ost = judge(rc, owner);
			if (ost < 0)
				return ost;
			if (ost == INO_LIVE_DIR &&
			    wanted(rc, lost, owner, &c)) {
				err = push_cand(out, &c);
				if (err)
					return err;
			}
		}
		if (ost != INO_LIVE_DIR && ost != INO_GONE)
			continue;
		err = xk_buf_read_ctx(rc->mp, e->daddr, e->len,
				      e->type == XK_SCAN_DIR3_BLOCK ?
				      &xk_dir3_block_buf_ops :
				      &xk_dir3_data_buf_ops, -1, e->owner, 0,
				      &bp);
		if (xk_err_operational(err))
			return repair_oserr(rc, err, "reading directory block "
					    "%llu found by the device scan",
					    (unsigned long long)e->daddr);
		if (err)
			continue;
		err = xk_dir3_data_block_entries(bp->data, bp->len,
						 rc->mp->g.has_ftype,
						 scan_name, &s);
		xk_buf_release(bp);
		/* A block that stops parsing gave what it could. */
		if (err && err != XK_ECORRUPT)
			return err;
	}
	if (!rc->reasm->judged_sorted) {
		struct reasm_state *st = rc->reasm;

		sort_v(st->judged.v, st->judged.n, sizeof(*st->judged.v),
		       cmp_judged);
		st->judged_sorted = 1;
	}
	return 0;
}

/*
 * Check the chunk at c on disk and build its record: a cluster is there
 * when any of its inodes is at home; without sparse inodes a chunk is
 * whole or absent.  Every inode is marked in use: the scan decides.
 */
static int
probe_chunk(struct repair_ctx *rc, const struct cand *c,
	    struct xk_inobt_rec *rec)
{
	struct xk_mount *mp = rc->mp;
	uint32_t per = mp->g.cluster_inos;
	uint32_t agbno = xk_agino_to_agbno(mp, c->start);
	uint16_t holes = 0;
	unsigned int present = 0;

	if (!per || per > XK_INODES_PER_CHUNK)
		per = XK_INODES_PER_CHUNK;
	if (!xk_agbext_valid(mp, c->agno, agbno, mp->g.ialloc_blks))
		return 0;
	for (uint32_t i = 0; i < XK_INODES_PER_CHUNK; i += per) {
		int here = 0;

		for (uint32_t k = 0; k < per && !here; k++)
			here = inode_is_home(rc, xk_agino_to_ino(mp, c->agno,
							c->start + i + k));
		if (here < 0)
			return 0;
		if (here) {
			present += per;
			continue;
		}
		for (uint32_t k = i; k < i + per; k += XK_INODES_PER_HOLEMASK_BIT)
			holes |= (uint16_t)(1u << (k / XK_INODES_PER_HOLEMASK_BIT));
	}
	if (!present)
		return 0;
	memset(rec, 0, sizeof(*rec));
	xk_be32_set(&rec->ir_startino, c->start);
	if (mp->g.has_sparse) {
		xk_be16_set(&rec->ir_u.sp.ir_holemask, holes);
		rec->ir_u.sp.ir_count = (uint8_t)present;
	} else if (holes) {
		return 0;	/* a partial chunk needs sparse inodes */
	}
	return 1;
}

static void
cands_unique(struct cands *c)
{
	size_t w = 0;

	sort_v(c->v, c->n, sizeof(*c->v), cmp_cand);
	for (size_t i = 0; i < c->n; i++)
		if (!w || cmp_cand(&c->v[w - 1], &c->v[i]))
			c->v[w++] = c->v[i];
	c->n = w;
}

/* The candidates named since the last round, sorted, unique. */
static int
gather(struct repair_ctx *rc, const uint8_t *lost, size_t from_edge,
       int seed, struct cands *out)
{
	const struct xk_sb *sb = &rc->mp->sb;
	const uint64_t seeds[] = { sb->rootino, sb->rbmino, sb->rsumino,
				   sb->uquotino, sb->gquotino, sb->pquotino };
	struct cand c;

	out->n = 0;
	for (size_t i = 0; seed && i < sizeof(seeds) / sizeof(seeds[0]); i++)
		if (wanted(rc, lost, seeds[i], &c) && push_cand(out, &c))
			return -ENOMEM;
	for (size_t i = from_edge; i < rc->scan.nedges; i++)
		if (wanted(rc, lost, rc->scan.edges[i].child, &c) &&
		    push_cand(out, &c))
			return -ENOMEM;
	/* A directory's ".." may name a parent in a lost AG too. */
	for (size_t i = 0; seed && i < rc->scan.ninodes; i++)
		if (wanted(rc, lost, rc->scan.inodes[i].parent, &c) &&
		    push_cand(out, &c))
			return -ENOMEM;
	cands_unique(out);
	return 0;
}

/* Sort an AG's chunks, keeping each one's seen_free word beside it. */
static int
sort_chunks(struct ag_scan *as)
{
	struct pair {
		struct xk_inobt_rec	rec;
		uint64_t		seen;
	} *p;

	if (as->chunks.n < 2)
		return 0;
	p = xk_malloc(as->chunks.n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < as->chunks.n; i++) {
		p[i].rec = as->chunks.v[i];
		p[i].seen = as->seen_free ? as->seen_free[i] : ~0ULL;
	}
	/* rec is the first member: cmp_chunk_start reads ir_startino there. */
	qsort(p, as->chunks.n, sizeof(*p), cmp_chunk_start);
	for (size_t i = 0; i < as->chunks.n; i++) {
		as->chunks.v[i] = p[i].rec;
		if (as->seen_free)
			as->seen_free[i] = p[i].seen;
	}
	free(p);
	return 0;
}

int
phase_find_chunks(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	uint32_t agcount = mp->g.agcount;
	uint8_t *lost = xk_calloc(agcount, 1);
	size_t *found = xk_calloc(agcount, sizeof(*found));
	struct cands cands = { 0 };
	size_t from_edge = 0;
	/* The scan's names: 0 not yet, 1 this round, 2 taken. */
	int scan = 0, any = 0, err = 0;

	if (!lost || !found) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t agno = 0; agno < agcount; agno++)
		if (rc->scan.ags[agno].chunks_lost)
			lost[agno] = any = 1;
	if (!any)
		goto out;
	for (int round = 0; !err; round++) {
		size_t mark = rc->scan.nedges;
		int added = 0;

		err = gather(rc, lost, from_edge, round == 0, &cands);
		from_edge = mark;
		if (!err && scan == 1) {
			err = gather_scanned(rc, lost, &cands);
			cands_unique(&cands);
			scan = 2;
		}
		for (size_t i = 0; i < cands.n && !err; i++) {
			struct ag_scan *as = &rc->scan.ags[cands.v[i].agno];
			struct xk_inobt_rec rec;
			size_t at = as->chunks.n;

			if (!probe_chunk(rc, &cands.v[i], &rec)) {
				err = rc->found.error;
				continue;
			}
			err = ag_push_chunk(as, &rec);
			if (!err)
				err = scan_chunks_from(rc, cands.v[i].agno, at);
			found[cands.v[i].agno]++;
			added = 1;
		}
		for (uint32_t agno = 0; agno < agcount && !err; agno++)
			if (lost[agno])
				err = sort_chunks(&rc->scan.ags[agno]);
		/* The live tree gives no more: the device scan's blocks. */
		if (!added && !scan && !err &&
		    rc->opt.scan != REPAIR_SCAN_NEVER) {
			scan = 1;
			continue;
		}
		if (!added)
			break;
	}
	for (uint32_t agno = 0; agno < agcount && !err; agno++) {
		if (!lost[agno])
			continue;
		rc->scan.ags[agno].chunks_lost = 0;
		rc->scan.ags[agno].chunks_synth = 1;
		info(rc, "AG %u: found %zu inode chunk%s through the "
		     "directory entries that name them.\n", agno, found[agno],
		     found[agno] == 1 ? "" : "s");
	}
out:
	xk_vec_free(&cands.vec);
	free(found);
	free(lost);
	return err;
}
