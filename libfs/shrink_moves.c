// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What lies in the part a shrink would cut off, sorted by what a data
 * move could do with it (include/xfskit/shrink.h): the rmapbt records of
 * the removed AGs and of the new last AG's tail, each owner inode read
 * once for its type and flags.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/ag_resv.h>
#include <xfskit/ag.h>
#include <xfskit/btree.h>
#include <xfskit/buf.h>
#include <xfskit/build.h>
#include <xfskit/dev.h>
#include <xfskit/format/log.h>
#include <xfskit/format/sb.h>
#include <xfskit/format/btree.h>
#include <xfskit/format/dinode.h>
#include <xfskit/init.h>
#include <xfskit/meta.h>
#include <xfskit/mount.h>
#include <xfskit/shrink.h>

#include "grow_priv.h"
#include "shrink_priv.h"

struct moves_ctx {
	struct xk_mount		*mp;
	struct xk_shrink_moves	*m;
	uint32_t		from, to;
	int			whole;	/* the AG goes whole */
	/* The last owner read, and what it is. */
	uint64_t		ino;
	uint16_t		mode;
	uint64_t		flags2;
	/* Regular files with movable extents, for counting them. */
	uint64_t		*files;
	size_t			nfiles, cap;
};

/* Inodes a move must leave to other code: realtime and quota files. */
static int
ino_is_metadata(const struct xk_mount *mp, uint64_t ino, uint64_t flags2)
{
	return (flags2 & XK_DIFLAG2_METADATA) || ino == mp->sb.rbmino ||
	       ino == mp->sb.rsumino || ino == mp->sb.uquotino ||
	       ino == mp->sb.gquotino || ino == mp->sb.pquotino;
}

static int
owner_read(struct moves_ctx *c, uint64_t ino)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int err;

	if (c->ino == ino)
		return 0;
	if (!xk_ino_valid(c->mp, ino))
		return XK_ECORRUPT;
	err = xk_inode_read(c->mp, ino, 0, &bp, &dip);
	if (err)
		return err;
	c->ino = ino;
	c->mode = xk_be16_get(dip->di_mode) & XK_S_IFMT;
	c->flags2 = xk_be64_get(dip->di_flags2);
	xk_buf_release(bp);
	return 0;
}

static int
file_add(struct moves_ctx *c, uint64_t ino)
{
	if (c->nfiles && c->files[c->nfiles - 1] == ino)
		return 0;
	return shrink_u64_push(&c->files, &c->nfiles, &c->cap, ino);
}

static int
moves_rec(void *ctx, const void *rec)
{
	struct moves_ctx *c = ctx;
	struct xk_shrink_moves *m = c->m;
	const struct xk_rmap_rec *r = rec;
	uint64_t owner = xk_be64_get(r->rm_owner);
	uint64_t off = xk_be64_get(r->rm_offset);
	uint32_t start, n = shrink_rmap_clip(rec, c->from, c->to, &start);
	int err;

	if (!n)
		return 0;
	if (xk_rmap_owner_is_special(owner)) {
		if (owner == XK_RMAP_OWN_INODES)
			m->chunk_blocks += n;
		else if (owner == XK_RMAP_OWN_LOG)
			m->log_blocks += n;
		else if (owner == XK_RMAP_OWN_AG && c->whole)
			;	/* they go with the AG */
		else if (owner == XK_RMAP_OWN_AG ||
			 owner == XK_RMAP_OWN_INOBT ||
			 owner == XK_RMAP_OWN_REFC)
			m->agtree_blocks += n;
		else
			m->meta_blocks += n;
		return 0;
	}
	if (off & XK_RMAP_OFF_BMBT_BLOCK) {
		m->bmbt_blocks += n;
		return 0;
	}
	if (off & XK_RMAP_OFF_ATTR_FORK) {
		m->attr_blocks += n;
		return 0;
	}
	err = owner_read(c, owner);
	if (err)
		return err;
	if (ino_is_metadata(c->mp, owner, c->flags2)) {
		m->meta_blocks += n;
	} else if (c->mode == XK_S_IFDIR) {
		m->dir_blocks += n;
	} else if (c->mode == XK_S_IFLNK) {
		m->symlink_blocks += n;
	} else if (c->mode != XK_S_IFREG) {
		m->meta_blocks += n;
	} else if (c->flags2 & XK_DIFLAG2_REFLINK) {
		/* May be shared: moving would have to keep it shared. */
		m->shared_blocks += n;
	} else {
		m->file_blocks += n;
		m->file_extents++;
		return file_add(c, owner);
	}
	return 0;
}

/* Free blocks of AG agno below `cut` (the bnobt's records). */
struct below_ctx {
	uint32_t	cut;
	uint64_t	free;
};

static int
below_rec(void *ctx, const void *rec)
{
	struct below_ctx *c = ctx;
	const struct xk_alloc_rec *r = rec;
	uint32_t start = xk_be32_get(r->ar_startblock);
	uint32_t end = start + xk_be32_get(r->ar_blockcount);

	if (end > c->cut)
		end = c->cut;
	if (start < end)
		c->free += end - start;
	return 0;
}



int
xk_shrink_moves_survey(struct xk_mount *mp, const struct xk_shrink_plan *p,
		       struct xk_shrink_moves *m, char *msg, size_t msglen)
{
	struct moves_ctx c = { .mp = mp, .m = m, .ino = 0 };
	uint32_t last = p->new_agcount ? p->new_agcount - 1 : 0;
	const char *what = "AGF";
	int err = 0;

	msg[0] = '\0';
	memset(m, 0, sizeof(*m));
	if (!mp->g.has_rmapbt)
		return -EOPNOTSUPP;
	if (p->new_agcount == 0 || p->new_agcount > mp->g.agcount)
		return -EINVAL;
	for (uint32_t agno = last; agno < mp->g.agcount && !err; agno++) {
		struct xk_buf *agfbp;
		const struct xk_agf *agf;
		uint32_t len = xk_ag_blocks(mp, agno);

		c.whole = agno > last;
		c.from = c.whole ? xk_ag_prealloc_blocks(mp) :
				   p->last_new_len;
		c.to = len;
		if (!c.whole && c.from >= len)
			c.from = len;	/* the last AG keeps its length */
		what = "AGF";
		err = xk_agf_read(mp, agno, 0, &agfbp);
		if (err)
			break;
		agf = xk_buf_agf(agfbp);
		if (c.from < c.to) {
			what = "rmapbt";
			err = shrink_walk_ag_tree(mp, &xk_rmapbt_ops,
				agno, &agf->agf_roots[XK_AGF_RMAP],
				&agf->agf_levels[XK_AGF_RMAP], moves_rec, &c,
				NULL);
		}
		if (!err && !c.whole) {
			struct below_ctx bc = { p->last_new_len, 0 };

			what = "bnobt";
			err = shrink_walk_ag_tree(mp, &xk_bnobt_ops,
				agno, &agf->agf_roots[XK_AGF_BNO],
				&agf->agf_levels[XK_AGF_BNO], below_rec, &bc,
				NULL);
			m->free_below += bc.free;
		}
		xk_buf_release(agfbp);
		if (err)
			snprintf(msg, msglen, "AG %u: the %s cannot be read: %s "
				 "(run xfskit-repair first)", agno, what,
				 xk_strerror(err));
	}
	/* The AGs kept whole: their AGF counts (the plan walked the rest). */
	for (uint32_t agno = 0; agno < last && !err; agno++) {
		struct xk_buf *agfbp;

		err = xk_agf_read(mp, agno, 0, &agfbp);
		if (err) {
			snprintf(msg, msglen, "AG %u: the AGF cannot be read: "
				 "%s (run xfskit-repair first)", agno,
				 xk_strerror(err));
			break;
		}
		m->free_below +=
			xk_be32_get(xk_buf_agf(agfbp)->agf_freeblks);
		xk_buf_release(agfbp);
	}
	if (!err)
		m->nfiles = shrink_u64_distinct(c.files, c.nfiles);
	free(c.files);
	return err;
}

/* --- moving the regular files' data out --- */

/* One extent of a file in the part cut off. */
struct src_ext {
	uint64_t	ino;
	uint64_t	loff;
	uint64_t	fsbno;
	uint32_t	len;
	int		unwritten;
};

struct collect_ctx {
	struct xk_mount	*mp;
	uint32_t	agno, from, to;
	struct src_ext	*v;
	size_t		n, cap;
};

static int
collect_rec(void *ctx, const void *rec)
{
	struct collect_ctx *c = ctx;
	const struct xk_rmap_rec *r = rec;
	uint32_t start = xk_be32_get(r->rm_startblock);
	uint64_t owner = xk_be64_get(r->rm_owner);
	uint64_t off = xk_be64_get(r->rm_offset);
	uint32_t s, n = shrink_rmap_clip(rec, c->from, c->to, &s);

	/* The survey said every owner here is a movable file's data. */
	if (!n || xk_rmap_owner_is_special(owner))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct src_ext *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct src_ext){
		owner, (off & XK_RMAP_OFF_MASK) + (s - start),
		xk_agb_to_fsb(c->mp, c->agno, s), n,
		!!(off & XK_RMAP_OFF_UNWRITTEN),
	};
	return 0;
}

static int
collect(struct xk_mount *mp, const struct xk_shrink_plan *p,
	struct collect_ctx *c, char *msg, size_t msglen)
{
	uint32_t last = p->new_agcount - 1;
	int err = 0;

	c->mp = mp;
	for (uint32_t agno = last; agno < mp->g.agcount && !err; agno++) {
		struct xk_buf *agfbp;
		const struct xk_agf *agf;

		c->agno = agno;
		c->from = agno > last ? 0 : p->last_new_len;
		c->to = xk_ag_blocks(mp, agno);
		if (c->from >= c->to)
			continue;
		err = xk_agf_read(mp, agno, 0, &agfbp);
		if (err)
			break;
		agf = xk_buf_agf(agfbp);
		err = shrink_walk_ag_tree(mp, &xk_rmapbt_ops, agno,
					  &agf->agf_roots[XK_AGF_RMAP],
					  &agf->agf_levels[XK_AGF_RMAP],
					  collect_rec, c, NULL);
		xk_buf_release(agfbp);
	}
	if (err)
		snprintf(msg, msglen, "reading the rmapbt again failed: %s",
			 xk_strerror(err));
	return err;
}

/* Move one extent: new blocks below the end, the file's map follows. */
static int
move_ext(struct xk_bld *b, struct xk_shrink_move *mv,
	 const struct src_ext *x, uint32_t nag)
{
	struct xk_mount *mp = xk_bld_mount(b);
	uint32_t hint = xk_ino_to_agno(mp, x->ino) % nag, done = 0;
	int err;

	err = xk_bld_bmap_update(b, XK_BMAP_UNMAP | XK_BLD_BMAP_REMAP,
				 x->ino, XK_DATA_FORK, x->loff, x->fsbno,
				 x->len, x->unwritten);
	if (!err)
		err = xk_bld_free_extent(b, x->fsbno, x->len);
	while (!err && done < x->len) {
		struct xk_shrink_piece *pc;
		uint64_t dst;
		uint32_t got;

		err = xk_bld_alloc_blocks(b, hint, x->len - done, &dst, &got);
		if (err)
			break;
		if (mv->npieces == mv->cap) {
			size_t cap = mv->cap ? 2 * mv->cap : 64;
			struct xk_shrink_piece *v =
				realloc(mv->piece, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			mv->piece = v;
			mv->cap = cap;
		}
		pc = &mv->piece[mv->npieces++];
		*pc = (struct xk_shrink_piece){ x->fsbno + done, dst, got,
						x->unwritten };
		err = xk_bld_bmap_update(b, XK_BMAP_MAP, x->ino, XK_DATA_FORK,
					 x->loff + done, dst, got,
					 x->unwritten);
		done += got;
	}
	return err;
}

/*
 * After the moves every AG that stays must still keep free what the
 * kernel reserves for its trees at mount (else it warns "ENOSPC
 * reserving per-AG metadata pool" and those trees may fail to grow).
 * The last one is counted at its new length, without the free blocks
 * above its new end, which the shrink takes away.
 */
static int
resv_after_cut(struct xk_mount *mp, const struct xk_shrink_plan *p,
	       uint32_t agno, uint64_t *free, uint64_t *need, char *msg,
	       size_t msglen)
{
	struct xk_ag_resv_held h;
	uint64_t len = xk_ag_blocks(mp, agno);
	int err = xk_ag_resv_state(mp, agno, free, &h);

	if (err) {
		snprintf(msg, msglen, "the headers of AG %u do not read: %s",
			 agno, xk_strerror(err));
		return err;
	}
	if (agno == p->new_agcount - 1 && p->last_new_len < len) {
		uint64_t above = len - p->last_new_len;

		*free = *free > above ? *free - above : 0;
		len = p->last_new_len;
	}
	len -= xk_ag_log_blocks(mp, agno);
	*need = xk_ag_resv_needed(&mp->g, len, len, &h);
	return 0;
}

static int
check_reservations(struct xk_mount *mp, const struct xk_shrink_plan *p,
		   char *msg, size_t msglen)
{
	for (uint32_t agno = 0; agno < p->new_agcount; agno++) {
		uint64_t free, need;
		int err = resv_after_cut(mp, p, agno, &free, &need, msg,
					 msglen);

		if (err)
			return err;
		if (need > free) {
			snprintf(msg, msglen, "with the data moved, AG %u "
				 "would keep %llu blocks free, where the "
				 "kernel's per-AG reservation for its btrees "
				 "needs %llu (%llu more)", agno,
				 (unsigned long long)free,
				 (unsigned long long)need,
				 (unsigned long long)(need - free));
			return -ENOSPC;
		}
	}
	return 0;
}

int
xk_shrink_move_prepare(struct xk_mount *mp, const struct xk_shrink_plan *p,
		       struct xk_shrink_move *mv, char *msg, size_t msglen)
{
	struct xk_shrink_moves m;
	struct collect_ctx c = { 0 };
	struct xk_bld *b = NULL;
	uint32_t last = p->new_agcount - 1;
	int err;

	memset(mv, 0, sizeof(*mv));
	err = xk_shrink_moves_survey(mp, p, &m, msg, msglen);
	if (err == -EOPNOTSUPP)
		snprintf(msg, msglen, "moving data needs the rmapbt");
	if (err)
		return err;
	if (m.shared_blocks || m.bmbt_blocks || m.dir_blocks ||
	    m.attr_blocks || m.symlink_blocks || m.chunk_blocks ||
	    m.log_blocks || m.meta_blocks) {
		snprintf(msg, msglen, "the part cut off holds blocks a move "
			 "cannot take yet");
		return -EOPNOTSUPP;
	}
	mv->blocks = m.file_blocks;
	mv->extents = m.file_extents;
	mv->nfiles = m.nfiles;
	err = collect(mp, p, &c, msg, msglen);
	if (err)
		goto out;
	err = (mp->flags & XK_MOUNT_RDONLY) ? xk_bld_open_cached(mp, &b) :
					      xk_bld_open(mp, &b);
	if (err) {
		snprintf(msg, msglen, "loading the AGs' free space and "
			 "reverse mappings failed: %s (run xfskit-repair "
			 "first)", xk_strerror(err));
		goto out;
	}
	for (uint32_t agno = last; agno < mp->g.agcount; agno++)
		xk_bld_set_alloc_end(b, agno, agno > last ? 1 :
				     p->last_new_len);
	/* The moved data leaves every AG what the kernel reserves in it. */
	for (uint32_t agno = 0; agno <= last && !err; agno++) {
		uint64_t free, need;

		uint32_t len = xk_ag_blocks(mp, agno);

		err = resv_after_cut(mp, p, agno, &free, &need, msg, msglen);
		/* The last AG's free blocks past its new end count too. */
		if (!err)
			xk_bld_set_alloc_keep(b, agno, need +
					      (agno == last &&
					       p->last_new_len < len ?
					       len - p->last_new_len : 0));
	}
	for (size_t i = 0; i < c.n && !err; i++) {
		err = move_ext(b, mv, &c.v[i], p->new_agcount);
		if (err)
			snprintf(msg, msglen, "moving %u blocks of inode %"
				 PRIu64 " (file block %" PRIu64 ") failed: "
				 "%s", c.v[i].len, c.v[i].ino, c.v[i].loff,
				 err == -ENOSPC ? "not enough free space "
				 "below the new end" : xk_strerror(err));
	}
	/* The removed AGs' own trees may go anywhere in them. */
	for (uint32_t agno = last + 1; agno < mp->g.agcount; agno++)
		xk_bld_set_alloc_end(b, agno, 0);
	if (!err) {
		err = xk_bld_commit(b);
		/* CRCs and LSNs now, so the plan that follows reads them. */
		if (!err)
			err = xk_buf_seal(mp);
		if (err == -ENOSPC)
			snprintf(msg, msglen, "the rebuilt AG btrees and free "
				 "lists do not fit below the new end");
		else if (err)
			snprintf(msg, msglen, "rebuilding the AG btrees failed: "
				 "%s", xk_strerror(err));
		else
			err = check_reservations(mp, p, msg, msglen);
	}
out:
	if (b)
		xk_bld_free(b);
	free(c.v);
	return err;
}

int
xk_shrink_move_write(struct xk_mount *mp, const struct xk_shrink_move *mv,
		     char *msg, size_t msglen)
{
	size_t bsize = mp->g.blocksize, chunk = 256;
	uint8_t *buf;
	/* NEEDSREPAIR first: the step-1 shrink clears it last. */
	int err = grow_guard_arm(mp, msg, msglen);

	if (err)
		return err;
	buf = malloc(chunk * bsize);
	if (!buf) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	/* The data to its new blocks, before any map points there. */
	for (size_t i = 0; i < mv->npieces && !err; i++) {
		const struct xk_shrink_piece *pc = &mv->piece[i];

		if (pc->unwritten)
			continue;
		for (uint32_t o = 0; o < pc->len && !err; o += chunk) {
			uint32_t n = pc->len - o < chunk ? pc->len - o :
				     (uint32_t)chunk;

			err = xk_dev_pread(mp->dev, buf, n * bsize,
				xk_fsb_to_daddr(mp, pc->src + o) << 9);
			if (!err)
				err = xk_dev_pwrite(mp->dev, buf, n * bsize,
					xk_fsb_to_daddr(mp, pc->dst + o) << 9);
		}
	}
	free(buf);
	if (!err)
		err = xk_dev_sync(mp->dev);
	if (!err)
		err = xk_buf_flush(mp);
	if (!err)
		err = xk_dev_sync(mp->dev);
	if (err)
		snprintf(msg, msglen, "writing the moved data or the new "
			 "maps failed: %s (the filesystem is marked "
			 "NEEDSREPAIR)", xk_strerror(err));
	return err;
}

void
xk_shrink_move_free(struct xk_shrink_move *mv)
{
	free(mv->piece);
	memset(mv, 0, sizeof(*mv));
}
