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
 * Afterwards the AG's chunk list is complete as far as anything can tell
 * and the AG rebuild may go ahead (chunks_lost is cleared).
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/init.h>
#include <xfskit/format/dinode.h>

#include "repair.h"

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

/* The candidates named since the last round, sorted, unique. */
static int
gather(struct repair_ctx *rc, const uint8_t *lost, size_t from_edge,
       int seed, struct cands *out)
{
	const struct xk_sb *sb = &rc->mp->sb;
	const uint64_t seeds[] = { sb->rootino, sb->rbmino, sb->rsumino,
				   sb->uquotino, sb->gquotino, sb->pquotino };
	struct cand c;
	size_t w = 0;

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
	sort_v(out->v, out->n, sizeof(*out->v), cmp_cand);
	for (size_t i = 0; i < out->n; i++)
		if (!w || cmp_cand(&out->v[w - 1], &out->v[i]))
			out->v[w++] = out->v[i];
	out->n = w;
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
	int any = 0, err = 0;

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
