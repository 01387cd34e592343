// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Growing the data section offline: the rules are in
 * include/xfskit/grow.h.  Every header that changes is read and verified
 * while the handle still describes the old size (the verifiers check
 * lengths and copies against it), held, and only then is the handle
 * moved to the new size and the first block written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/ag.h>
#include <xfskit/btree.h>
#include <xfskit/format/btree.h>
#include <xfskit/grow.h>
#include <xfskit/init.h>
#include <xfskit/mount.h>
#include <xfskit/needsrepair.h>

#include "grow_priv.h"

/* The kernel's AG number limit (NULLAGNUMBER is reserved). */
#define GROW_MAX_AGCOUNT	((uint64_t)UINT32_MAX)

int
xk_grow_plan(const struct xk_mount *mp, uint64_t want,
	     struct xk_grow_plan *p)
{
	uint32_t agblocks = mp->g.agblocks, last;
	uint64_t nag = want / agblocks, rest = want % agblocks, asked = want;

	memset(p, 0, sizeof(*p));
	p->old_dblocks = mp->g.dblocks;
	p->old_agcount = mp->g.agcount;
	if (want < mp->g.dblocks)
		return -ENOSPC;
	/* Rule 1: a tail too small for an AG is not used. */
	if (rest >= XK_MIN_AG_BLOCKS)
		nag++;
	else
		want -= rest;
	if (nag > GROW_MAX_AGCOUNT) {
		nag = GROW_MAX_AGCOUNT;
		want = nag * agblocks;
	}
	/*
	 * Never below the current size (the last AG has at least 64
	 * blocks, so only a guard).
	 */
	if (want < mp->g.dblocks) {
		want = mp->g.dblocks;
		nag = mp->g.agcount;
	}
	p->unused = asked - want;
	p->new_dblocks = want;
	p->new_agcount = (uint32_t)nag;
	last = p->old_agcount - 1;
	p->last_old_len = xk_ag_blocks(mp, last);
	p->last_new_len = p->new_agcount > p->old_agcount ? agblocks :
			  (uint32_t)(want - (uint64_t)last * agblocks);
	p->new_free = p->last_new_len - p->last_old_len;
	for (uint64_t agno = p->old_agcount; agno < nag; agno++) {
		uint64_t len = agno + 1 < nag ? agblocks :
			       want - agno * agblocks;

		p->new_free += len - xk_ag_prealloc_blocks(mp);
	}
	return 0;
}

void
grow_held_release(struct grow_held *h)
{
	struct xk_buf *bufs[] = { h->primary, h->agf, h->agi };

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		if (bufs[i])
			xk_buf_release(bufs[i]);
	if (h->secondary)
		for (uint32_t agno = 1; agno < h->nsb; agno++)
			if (h->secondary[agno])
				xk_buf_release(h->secondary[agno]);
	free(h->secondary);
	grow_freesp_release(&h->freesp);
	memset(h, 0, sizeof(*h));
}

int
grow_held_read(struct xk_mount *mp, struct grow_held *h, uint32_t nsb,
	       int64_t agno, char *msg, size_t msglen)
{
	const struct xk_agf *agf;
	int err;

	h->secondary = calloc(nsb, sizeof(*h->secondary));
	if (!h->secondary) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	h->nsb = nsb;
	for (uint32_t i = 0; i < nsb; i++) {
		err = xk_sb_read(mp, i, 0, i ? &h->secondary[i] : &h->primary);
		if (err) {
			snprintf(msg, msglen, "the superblock of AG %u cannot "
				 "be read: %s (run xfskit-repair first)", i,
				 xk_strerror(err));
			return err;
		}
	}
	if (agno < 0)
		return 0;
	err = xk_agf_read(mp, (uint32_t)agno, 0, &h->agf);
	if (!err)
		err = xk_agi_read(mp, (uint32_t)agno, 0, &h->agi);
	if (err) {
		snprintf(msg, msglen, "the AG headers of AG %u cannot be read: "
			 "%s (run xfskit-repair first)", (uint32_t)agno,
			 xk_strerror(err));
		return err;
	}
	agf = xk_buf_agf(h->agf);
	h->freesp.mp = mp;
	h->freesp.agno = (uint32_t)agno;
	h->freesp.bno_root = xk_be32_get(agf->agf_roots[XK_AGF_BNO]);
	h->freesp.bno_levels = xk_be32_get(agf->agf_levels[XK_AGF_BNO]);
	h->freesp.cnt_root = xk_be32_get(agf->agf_roots[XK_AGF_CNT]);
	h->freesp.cnt_levels = xk_be32_get(agf->agf_levels[XK_AGF_CNT]);
	return 0;
}

/*
 * Rule 2: the old last AG's headers and free space, edited in memory;
 * grow_held_dirty() has them written once the new AGs are.
 */
static int
grow_last_ag(const struct xk_grow_plan *p, struct grow_held *s, char *msg,
	     size_t msglen)
{
	uint32_t add = p->last_new_len - p->last_old_len, longest;
	int err;

	msg[0] = '\0';
	err = grow_freesp_extend(&s->freesp, p->last_old_len, add, &longest,
				 msg, msglen);
	if (err && !msg[0])
		snprintf(msg, msglen, "the free-space btrees of AG %u cannot "
			 "be read: %s (run xfskit-repair first)",
			 p->old_agcount - 1, xk_strerror(err));
	if (err)
		return err;
	grow_held_set_length(s, p->last_new_len, (int64_t)add, longest);
	return 0;
}

void
grow_held_set_length(struct grow_held *h, uint32_t length, int64_t dfree,
		     uint32_t longest)
{
	struct xk_agf *agf = xk_buf_agf(h->agf);
	struct xk_agi *agi = xk_buf_agi(h->agi);

	xk_be32_set(&agf->agf_length, length);
	xk_be32_set(&agf->agf_freeblks,
		    (uint32_t)(xk_be32_get(agf->agf_freeblks) + dfree));
	xk_be32_set(&agf->agf_longest, longest);
	xk_be32_set(&agi->agi_length, length);
}

int
grow_held_dirty(struct xk_mount *mp, struct grow_held *h)
{
	if (!h->agf)
		return 0;
	xk_buf_dirty(h->agf);
	xk_buf_dirty(h->agi);
	grow_freesp_dirty(&h->freesp);
	return xk_buf_flush(mp);
}

/* Rule 3: fresh headers for every new AG, dirtied. */
static int
init_new_ags(struct xk_mount *mp, const struct xk_grow_plan *p)
{
	for (uint32_t agno = p->old_agcount; agno < p->new_agcount; agno++) {
		struct xk_ag_init ai;
		int err = xk_ag_init_layout(mp, agno, &ai);

		if (!err)
			err = xk_ag_init_write(mp, &ai, &mp->sb);
		/* Write back as we go so huge grows stay small in memory. */
		if (!err && agno % 64 == 63)
			err = xk_buf_flush(mp);
		if (err)
			return err;
	}
	return xk_buf_flush(mp);
}

/* Rule 4 for one secondary: the primary's bytes, its own LSN. */
void
grow_copy_primary(struct xk_buf *bp, const struct xk_buf *primary)
{
	struct xk_dsb *d = (struct xk_dsb *)bp->data;
	xk_be64 lsn = d->sb_lsn;

	memcpy(bp->data, primary->data, bp->len);
	d->sb_lsn = lsn;
	xk_buf_dirty(bp);
}

/*
 * A run stopped half-way is never mounted as it is (xfs_repair finishes
 * or undoes what it finds): the guard marks the primary, still the old
 * size, before the first write, and the last write clears the mark.
 */
int
grow_guard_arm(struct xk_mount *mp, char *msg, size_t msglen)
{
	int err = xk_needsrepair_arm(mp);

	if (err)
		snprintf(msg, msglen, "reading the primary superblock failed: "
			 "%s", xk_strerror(err));
	return err;
}

void
grow_set_size(struct xk_mount *mp, uint64_t dblocks, uint32_t agcount,
	      uint64_t fdblocks)
{
	mp->sb.dblocks = mp->g.dblocks = dblocks;
	mp->sb.agcount = mp->g.agcount = agcount;
	mp->sb.fdblocks = fdblocks;
}

void
grow_write_failed(struct xk_mount *mp, const struct xk_sb *old_sb,
		  const struct xk_geom *old_g, int err, char *msg,
		  size_t msglen)
{
	mp->sb = *old_sb;
	mp->g = *old_g;
	snprintf(msg, msglen, "writing failed: %s (the filesystem is marked as "
		 "needing repair: run xfs_repair, or xfskit-undo with the undo "
		 "file)", xk_strerror(err));
}

int
grow_finish_primary(struct xk_mount *mp, struct xk_buf *primary)
{
	int err = xk_buf_flush(mp);

	if (!err)
		err = xk_dev_sync(mp->dev);
	if (!err)
		err = xk_buf_write(primary);
	if (!err)
		err = xk_dev_sync(mp->dev);
	return err ? err : xk_needsrepair_clear(mp);
}

/* Rule 4: the secondaries from the final primary, then the primary. */
static int
write_superblocks(struct xk_mount *mp, const struct xk_grow_plan *p,
		  struct grow_held *s)
{
	struct xk_dsb *d = (struct xk_dsb *)s->primary->data;
	int err;

	xk_be32_set(&d->sb_features_incompat, mp->sb.features_incompat);
	xk_be64_set(&d->sb_dblocks, p->new_dblocks);
	xk_be32_set(&d->sb_agcount, p->new_agcount);
	xk_be64_set(&d->sb_fdblocks, xk_be64_get(d->sb_fdblocks) +
		    p->new_free);
	xk_dsb_null_quota_inodes(d);
	for (uint32_t agno = 1; agno < p->new_agcount; agno++) {
		struct xk_buf *bp;

		if (agno < p->old_agcount) {
			grow_copy_primary(s->secondary[agno], s->primary);
			continue;
		}
		/* Written by init_new_ags: verifies against the new size. */
		err = xk_sb_read(mp, agno, 0, &bp);
		if (err)
			return err;
		grow_copy_primary(bp, s->primary);
		xk_buf_release(bp);
		if (agno % 64 == 63) {
			err = xk_buf_flush(mp);
			if (err)
				return err;
		}
	}
	return grow_finish_primary(mp, s->primary);
}

int
xk_grow_apply(struct xk_mount *mp, const struct xk_grow_plan *p, char *msg,
	      size_t msglen)
{
	struct grow_held s;
	struct xk_sb old_sb = mp->sb;
	struct xk_geom old_g = mp->g;
	int err;

	msg[0] = '\0';
	memset(&s, 0, sizeof(s));
	if (p->new_dblocks <= p->old_dblocks ||
	    p->old_dblocks != mp->g.dblocks ||
	    p->new_dblocks * mp->g.blocksize > mp->dev->size) {
		snprintf(msg, msglen, "the plan does not fit the filesystem "
			 "and device");
		return -EINVAL;
	}
	err = grow_held_read(mp, &s, p->old_agcount,
			     p->last_new_len != p->last_old_len ?
			     (int64_t)p->old_agcount - 1 : -1, msg, msglen);
	/* Edited in memory while the verifiers still expect the old size. */
	if (!err && p->last_new_len != p->last_old_len)
		err = grow_last_ag(p, &s, msg, msglen);
	if (!err)
		err = grow_guard_arm(mp, msg, msglen);
	if (err)
		goto out;
	/* From here the handle describes the grown filesystem. */
	grow_set_size(mp, p->new_dblocks, p->new_agcount,
		      mp->sb.fdblocks + p->new_free);
	err = init_new_ags(mp, p);
	if (!err)
		err = grow_held_dirty(mp, &s);
	if (!err)
		err = write_superblocks(mp, p, &s);
	if (err)
		grow_write_failed(mp, &old_sb, &old_g, err, msg, msglen);
out:
	grow_held_release(&s);
	return err;
}
