// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Shrinking the data section offline where the part cut off holds no
 * used block: the rules are in include/xfskit/shrink.h.  The plan
 * surveys the AGs from the last one down (AGF and AGI counts, a walk of
 * the bnobt for the free extents, of the inobt for the last inode chunk)
 * until it has both the new last AG and the highest AG that cannot go;
 * the apply step reuses growing's in-place free-space edit and its
 * NEEDSREPAIR-first write order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/ag.h>
#include <xfskit/ag_resv.h>
#include <xfskit/btree.h>
#include <xfskit/format/btree.h>
#include <xfskit/init.h>
#include <xfskit/mount.h>
#include <xfskit/shrink.h>

#include "grow_priv.h"
#include "shrink_priv.h"

/* What the plan needs to know of one AG. */
struct ag_survey {
	uint32_t	length;
	uint32_t	cut;		/* first agbno removed; length: none */
	uint64_t	free;		/* blocks in bnobt records (walked) */
	uint64_t	free_cut;	/* of those, at or past cut */
	uint32_t	tail_start;	/* the free extent ending the AG */
	uint32_t	tail_len;	/* 0: the AG ends in a used block */
	uint32_t	flcount, btreeblks, icount;
	/* Blocks of the trees with a per-AG reservation. */
	uint32_t	refc_blocks, rmap_blocks;
	uint64_t	fino_blocks;
	uint32_t	chunk_end;	/* past the last inode chunk, or 0 */
	uint32_t	log_start, log_end;	/* equal: the log is elsewhere */
};

static int
bno_rec(void *ctx, const void *rec)
{
	struct ag_survey *s = ctx;
	const struct xk_alloc_rec *r = rec;
	uint32_t start = xk_be32_get(r->ar_startblock);
	uint32_t len = xk_be32_get(r->ar_blockcount);

	s->free += len;
	if (start + len > s->cut)
		s->free_cut += start + len - (start > s->cut ? start : s->cut);
	/* Records come in block order: the last one seen is the highest. */
	if (start + len == s->length) {
		s->tail_start = start;
		s->tail_len = len;
	}
	return 0;
}

static int
ino_rec(void *ctx, const void *rec)
{
	struct ag_survey *s = ctx;
	const struct xk_inobt_rec *r = rec;

	/* Records come in order: the last one seen is the highest. */
	s->chunk_end = xk_be32_get(r->ir_startino);
	return 0;
}

int
shrink_walk_ag_tree(struct xk_mount *mp, const struct xk_btree_ops *ops,
		    uint32_t agno, const xk_be32 *root, const xk_be32 *levels,
		    int (*rec_fn)(void *ctx, const void *rec), void *ctx,
		    uint64_t *nblocks)
{
	struct xk_btree_walk w;
	int err;

	memset(&w, 0, sizeof(w));
	w.ops = ops;
	w.agno = agno;
	w.root = xk_be32_get(*root);
	w.levels = xk_be32_get(*levels);
	w.ctx = ctx;
	w.rec_fn = rec_fn;
	err = xk_btree_walk(mp, &w);
	if (nblocks)
		*nblocks = w.nblocks;
	return err;
}

/* The survey of AG agno with `cut` as its first removed block. */
static int
survey_ag(struct xk_mount *mp, uint32_t agno, uint32_t cut,
	  struct ag_survey *s, char *msg, size_t msglen)
{
	struct xk_buf *agfbp = NULL, *agibp = NULL;
	const struct xk_agf *agf;
	const struct xk_agi *agi;
	const char *what = "AG headers";
	int err;

	memset(s, 0, sizeof(*s));
	s->length = xk_ag_blocks(mp, agno);
	s->cut = cut;
	s->tail_start = s->length;
	err = xk_agf_read(mp, agno, 0, &agfbp);
	if (!err)
		err = xk_agi_read(mp, agno, 0, &agibp);
	if (err)
		goto out;
	agf = xk_buf_agf(agfbp);
	agi = xk_buf_agi(agibp);
	s->flcount = xk_be32_get(agf->agf_flcount);
	s->btreeblks = xk_be32_get(agf->agf_btreeblks);
	s->icount = xk_be32_get(agi->agi_count);
	s->refc_blocks = xk_be32_get(agf->agf_refcount_blocks);
	s->rmap_blocks = xk_be32_get(agf->agf_rmap_blocks);
	s->fino_blocks = xk_be32_get(agi->agi_fblocks);
	if (mp->g.has_finobt && !mp->g.has_inobtcnt) {
		what = "finobt";
		err = shrink_walk_ag_tree(mp, &xk_finobt_ops, agno,
					  &agi->agi_free_root,
					  &agi->agi_free_level, NULL, NULL,
					  &s->fino_blocks);
		if (err)
			goto out;
	}
	what = "bnobt";
	err = shrink_walk_ag_tree(mp, &xk_bnobt_ops, agno,
				  &agf->agf_roots[XK_AGF_BNO],
				  &agf->agf_levels[XK_AGF_BNO], bno_rec, s,
				  NULL);
	if (err)
		goto out;
	if (s->free != xk_be32_get(agf->agf_freeblks)) {
		snprintf(msg, msglen, "AG %u: its bnobt holds %llu free blocks, "
			 "its AGF says %u (run xfskit-repair first)", agno,
			 (unsigned long long)s->free,
			 xk_be32_get(agf->agf_freeblks));
		err = XK_ECORRUPT;
		goto out_msg;
	}
	/* The last record's start agino, made a block number below. */
	s->chunk_end = UINT32_MAX;
	what = "inobt";
	err = shrink_walk_ag_tree(mp, &xk_inobt_ops, agno, &agi->agi_root,
				  &agi->agi_level, ino_rec, s, NULL);
	if (err)
		goto out;
	/* The whole chunk, holes included (the kernel's shrink check). */
	s->chunk_end = s->chunk_end == UINT32_MAX ? 0 :
		xk_agino_to_agbno(mp, s->chunk_end) +
		(XK_INODES_PER_CHUNK > mp->g.inopblock ?
		 XK_INODES_PER_CHUNK / mp->g.inopblock : 1);

	if (!xk_log_is_external(mp) &&
	    xk_fsb_to_agno(mp, mp->g.logstart) == agno) {
		s->log_start = xk_fsb_to_agbno(mp, mp->g.logstart);
		s->log_end = s->log_start + mp->g.logblocks;
	}
	if (s->free + s->flcount + xk_ag_prealloc_blocks(mp) > s->length) {
		snprintf(msg, msglen, "AG %u: %llu free blocks and %u on its "
			 "free list do not fit beside its headers in %u blocks "
			 "(run xfskit-repair first)", agno,
			 (unsigned long long)s->free, s->flcount, s->length);
		err = XK_ECORRUPT;
		goto out_msg;
	}
out:
	if (err)
		snprintf(msg, msglen, "AG %u: the %s cannot be read: %s (run "
			 "xfskit-repair first)", agno, what, xk_strerror(err));
out_msg:
	if (agfbp)
		xk_buf_release(agfbp);
	if (agibp)
		xk_buf_release(agibp);
	return err;
}

/* Rule 2: nothing but the AG's own headers, roots and free space. */
static int
ag_empty(const struct xk_mount *mp, const struct ag_survey *s)
{
	return s->icount == 0 && s->log_end == s->log_start &&
	       s->free + s->flcount + xk_ag_prealloc_blocks(mp) == s->length;
}

/*
 * The per-AG reservation the kernel's shrink requires to stay free
 * (its free blocks and AGFL) once the AG is newlen long: refcountbt and
 * rmapbt sized for newlen blocks, the finobt for the AG's length before
 * the shrink (the kernel's per-AG length is only updated afterwards),
 * the log's blocks left out.
 */
static uint64_t
ag_resv_needed(const struct xk_mount *mp, const struct ag_survey *s,
	       uint32_t newlen)
{
	uint32_t logb = s->log_end - s->log_start;
	struct xk_ag_resv_held h = {
		.refc = s->refc_blocks, .fino = s->fino_blocks,
		.rmap = s->rmap_blocks,
	};

	return xk_ag_resv_needed(&mp->g, newlen > logb ? newlen - logb : 0,
				 s->length > logb ? s->length - logb : 0, &h);
}

/* Free blocks (and AGFL) left when the AG, free from newlen on, is cut. */
static uint64_t
ag_free_after(const struct ag_survey *s, uint32_t newlen)
{
	return s->free - (s->length - newlen) + s->flcount;
}

/* Rule 3: the shortest this AG can be made as the last one. */
static uint32_t
ag_min_len(const struct xk_mount *mp, const struct ag_survey *s)
{
	uint32_t m = s->tail_len ? s->tail_start : s->length;
	uint64_t need;

	if (m < XK_MIN_AG_BLOCKS)
		m = XK_MIN_AG_BLOCKS;
	if (s->chunk_end > m)
		m = s->chunk_end;
	if (s->log_end > m)
		m = s->log_end;
	/* Longer until the reservation fits (it grows slower than m). */
	while (m < s->length &&
	       (need = ag_resv_needed(mp, s, m)) > ag_free_after(s, m))
		m = need - ag_free_after(s, m) >= s->length - m ? s->length :
		    m + (uint32_t)(need - ag_free_after(s, m));
	return m;
}

/* Used blocks of the AG at or past its cut (a whole AG: but headers). */
static uint64_t
ag_used_cut(const struct xk_mount *mp, const struct ag_survey *s)
{
	if (s->cut == 0)
		return s->length - xk_ag_prealloc_blocks(mp) - s->free -
		       s->flcount;
	return s->length - s->cut - s->free_cut;
}

/* Who owns the used blocks of [from, to) (rmapbt records). */
struct owners_ctx {
	struct xk_shrink_block *b;
	uint32_t	from, to;
	int		whole;		/* the AG goes: its own btrees too */
	uint64_t	*ino;
	size_t		nino, cap;
};

static int
owners_rec(void *ctx, const void *rec)
{
	struct owners_ctx *c = ctx;
	const struct xk_rmap_rec *r = rec;
	uint64_t owner = xk_be64_get(r->rm_owner);
	uint32_t start, n = shrink_rmap_clip(rec, c->from, c->to, &start);

	if (!n)
		return 0;
	if (!xk_rmap_owner_is_special(owner)) {
		c->b->inode_blocks += n;
		return shrink_u64_push(&c->ino, &c->nino, &c->cap, owner);
	} else if (owner == XK_RMAP_OWN_INODES) {
		c->b->chunk_blocks += n;
	} else if (owner == XK_RMAP_OWN_LOG) {
		c->b->log_blocks += n;
	} else if (!(c->whole && owner == XK_RMAP_OWN_AG)) {
		/* A removed AG's free-space btrees and AGFL go with it. */
		c->b->meta_blocks += n;
	}
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint32_t
shrink_rmap_clip(const void *rec, uint32_t from, uint32_t to,
		 uint32_t *start)
{
	const struct xk_rmap_rec *r = rec;
	uint32_t s = xk_be32_get(r->rm_startblock);
	uint32_t e = s + xk_be32_get(r->rm_blockcount);

	if (s < from)
		s = from;
	if (e > to)
		e = to;
	*start = s;
	return s < e ? e - s : 0;
}

int
shrink_u64_push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		uint64_t *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

uint64_t
shrink_u64_distinct(uint64_t *v, size_t n)
{
	uint64_t d = 0;

	if (n)
		qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!i || v[i] != v[i - 1])
			d++;
	return d;
}

/*
 * Name the owners of the blocks that stop the shrink; a failure only
 * leaves them unnamed (the refusal stands).
 */
static void
name_owners(struct xk_mount *mp, struct xk_shrink_block *b)
{
	struct owners_ctx c = { b, b->cut ? b->cut : xk_ag_prealloc_blocks(mp),
				b->length, b->cut == 0, NULL, 0, 0 };
	struct xk_buf *agfbp;
	const struct xk_agf *agf;
	int err;

	if (!mp->g.has_rmapbt || xk_agf_read(mp, b->agno, 0, &agfbp))
		return;
	agf = xk_buf_agf(agfbp);
	err = shrink_walk_ag_tree(mp, &xk_rmapbt_ops, b->agno,
				  &agf->agf_roots[XK_AGF_RMAP],
				  &agf->agf_levels[XK_AGF_RMAP], owners_rec,
				  &c, NULL);
	xk_buf_release(agfbp);
	if (!err) {
		if (c.nino)
			qsort(c.ino, c.nino, sizeof(*c.ino), cmp_u64);
		for (size_t i = 0; i < c.nino; i++) {
			if (i && c.ino[i] == c.ino[i - 1])
				continue;
			if (b->ninodes < XK_SHRINK_NAMED_INODES)
				b->inodes[b->ninodes] = c.ino[i];
			b->ninodes++;
		}
		b->owners_known = 1;
	} else {
		b->inode_blocks = b->chunk_blocks = b->log_blocks = 0;
		b->meta_blocks = 0;
	}
	free(c.ino);
}

static void
set_block(struct xk_mount *mp, const struct ag_survey *s, uint32_t agno,
	  struct xk_shrink_block *b)
{
	b->agno = agno;
	b->cut = s->cut;
	b->length = s->length;
	b->used = ag_used_cut(mp, s);
	b->log = s->log_end > s->cut;
	b->chunk_end = s->chunk_end > s->cut ? s->chunk_end : 0;
	if (s->cut && s->cut < s->length && s->tail_len &&
	    s->tail_start <= s->cut) {
		b->resv_need = ag_resv_needed(mp, s, s->cut);
		b->resv_free = ag_free_after(s, s->cut);
	}
	if (b->used)
		name_owners(mp, b);
}

int
xk_shrink_plan(struct xk_mount *mp, uint64_t want, struct xk_shrink_plan *p,
	       char *msg, size_t msglen)
{
	uint32_t agb = mp->g.agblocks, last = mp->g.agcount - 1, k, j0 = 0;
	uint64_t nag = want / agb, rest = want % agb, asked = want;
	struct ag_survey *sv;
	int found = 0, err = 0;

	msg[0] = '\0';
	memset(p, 0, sizeof(*p));
	p->old_dblocks = mp->g.dblocks;
	p->old_agcount = mp->g.agcount;
	if (want >= mp->g.dblocks)
		return -EINVAL;
	/* Rule 1. */
	if (rest >= XK_MIN_AG_BLOCKS) {
		nag++;
		p->last_new_len = (uint32_t)rest;
	} else {
		want -= rest;
		p->last_new_len = agb;
	}
	p->unused = asked - want;
	p->new_dblocks = want;
	p->new_agcount = (uint32_t)nag;
	k = nag ? (uint32_t)nag - 1 : 0;

	sv = calloc(mp->g.agcount, sizeof(*sv));
	if (!sv) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	/* From the last AG down to the new last one and the first kept. */
	for (int64_t j = last; j >= 0; j--) {
		uint32_t cut = (uint32_t)j > k ? 0 : (uint32_t)j == k &&
			       nag ? p->last_new_len : xk_ag_blocks(mp, j);

		err = survey_ag(mp, (uint32_t)j, cut, &sv[j], msg, msglen);
		if (err)
			goto out;
		if (!found && !(j >= 2 && ag_empty(mp, &sv[j]))) {
			j0 = (uint32_t)j;
			found = 1;
		}
		if (found && (uint32_t)j <= k)
			break;
	}
	p->min_dblocks = (uint64_t)j0 * agb + ag_min_len(mp, &sv[j0]);

	if (nag < 2) {
		p->block.too_few_ags = 1;
		set_block(mp, &sv[j0], j0, &p->block);
		err = -ENOSPC;
	} else if (k < j0) {
		set_block(mp, &sv[j0], j0, &p->block);
		err = -ENOSPC;
	} else if (p->last_new_len < ag_min_len(mp, &sv[k])) {
		set_block(mp, &sv[k], k, &p->block);
		err = -ENOSPC;
	}
	if (err)
		goto out;
	p->last_old_len = sv[k].length;
	p->removed_free = sv[k].length - p->last_new_len;
	for (uint32_t j = k + 1; j <= last; j++)
		p->removed_free += sv[j].free + sv[j].flcount +
				   sv[j].btreeblks;
out:
	free(sv);
	return err;
}

/* Rule 3, in memory while the verifiers still expect the old size. */
static int
trim_last_ag(struct xk_mount *mp, const struct xk_shrink_plan *p,
	     struct grow_held *h, char *msg, size_t msglen)
{
	uint32_t agno = p->new_agcount - 1, cut = p->last_new_len, longest;
	struct ag_survey sv;
	int err;

	/* The tail extent again, as the blocks held now say. */
	err = survey_ag(mp, agno, cut, &sv, msg, msglen);
	if (err)
		return err;
	if (!sv.tail_len || sv.tail_start > cut) {
		snprintf(msg, msglen, "AG %u changed since it was planned",
			 agno);
		return -ESTALE;
	}
	h->freesp.doing = "removing the free tail of";
	msg[0] = '\0';
	err = grow_freesp_trim(&h->freesp, sv.tail_start, sv.tail_len,
			       cut - sv.tail_start, &longest, msg, msglen);
	if (err && !msg[0])
		snprintf(msg, msglen, "the free-space btrees of AG %u cannot "
			 "be read: %s (run xfskit-repair first)", agno,
			 xk_strerror(err));
	if (err)
		return err;
	grow_held_set_length(h, cut, -(int64_t)(sv.length - cut), longest);
	return 0;
}

/* Rule 4: the secondaries from the final primary, then the primary. */
static int
write_superblocks(struct xk_mount *mp, const struct xk_shrink_plan *p,
		  struct grow_held *h)
{
	struct xk_dsb *d = (struct xk_dsb *)h->primary->data;

	xk_be32_set(&d->sb_features_incompat, mp->sb.features_incompat);
	xk_be64_set(&d->sb_dblocks, p->new_dblocks);
	xk_be32_set(&d->sb_agcount, p->new_agcount);
	xk_be64_set(&d->sb_fdblocks, xk_be64_get(d->sb_fdblocks) -
		    p->removed_free);
	/* As the kernel logs a superblock: null where it has no quota. */
	xk_dsb_null_quota_inodes(d);
	for (uint32_t agno = 1; agno < p->new_agcount; agno++)
		grow_copy_primary(h->secondary[agno], h->primary);
	return grow_finish_primary(mp, h->primary);
}

/* Everything up to the first write: read, verify, edit in memory. */
static int
prepare(struct xk_mount *mp, const struct xk_shrink_plan *p,
	struct grow_held *h, char *msg, size_t msglen)
{
	int trim = p->last_new_len != p->last_old_len, err;

	msg[0] = '\0';
	memset(h, 0, sizeof(*h));
	if (p->new_dblocks >= p->old_dblocks || p->new_agcount < 2 ||
	    p->old_dblocks != mp->g.dblocks ||
	    p->old_agcount != mp->g.agcount ||
	    p->removed_free > mp->sb.fdblocks) {
		snprintf(msg, msglen, "the plan does not fit the filesystem");
		return -EINVAL;
	}
	err = grow_held_read(mp, h, p->new_agcount,
			     trim ? (int64_t)p->new_agcount - 1 : -1, msg,
			     msglen);
	if (!err && trim)
		err = trim_last_ag(mp, p, h, msg, msglen);
	return err;
}

int
xk_shrink_check(struct xk_mount *mp, const struct xk_shrink_plan *p,
		char *msg, size_t msglen)
{
	struct grow_held h;
	int err = prepare(mp, p, &h, msg, msglen);

	grow_held_release(&h);
	return err;
}

int
xk_shrink_apply(struct xk_mount *mp, const struct xk_shrink_plan *p,
		char *msg, size_t msglen)
{
	struct grow_held h;
	struct xk_sb old_sb = mp->sb;
	struct xk_geom old_g = mp->g;
	int err = prepare(mp, p, &h, msg, msglen);

	if (!err)
		err = grow_guard_arm(mp, msg, msglen);
	if (err)
		goto out;
	/* From here the handle describes the shrunk filesystem. */
	grow_set_size(mp, p->new_dblocks, p->new_agcount,
		      mp->sb.fdblocks - p->removed_free);
	err = grow_held_dirty(mp, &h);
	if (!err)
		err = write_superblocks(mp, p, &h);
	if (err)
		grow_write_failed(mp, &old_sb, &old_g, err, msg, msglen);
out:
	grow_held_release(&h);
	return err;
}
