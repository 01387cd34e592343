// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Log recovery, in the kernel's order.  The log is walked twice.  Pass 1
 * collects cancelled buffers (a buffer freed in a later transaction must
 * not be replayed by an earlier one), the intents left without their
 * done item, and anything this code cannot replay; if there is such a
 * thing, recovery refuses before writing anything.  Pass 2 applies each
 * committed transaction in commit order, its items sorted as the kernel
 * sorts them (buffers and inode creates, inode buffers, inodes, buffer
 * cancellations):
 *
 *  - buffer items copy their logged chunks over the block, unless the
 *    block was cancelled or (v5 rule) the block's own LSN is not older
 *    than the transaction's; a block of a known type is stamped with the
 *    transaction's LSN and re-checksummed when written, as the kernel's
 *    write verifiers do; an inode buffer replays only di_next_unlinked;
 *  - inode items convert the logged core from the writer's byte order,
 *    stamp the LSN, copy the forks and recompute the inode CRC;
 *  - inode create items initialise the chunk's inodes.
 *
 * The walks check and unpack records on worker threads (trans.c); in
 * pass 2 this thread decides cancellations and takes the buffers from
 * the cache, in log order, and the items are applied to them by
 * apply.c on the workers, a buffer's items in log order on one thread,
 * so the result is the same for any thread count.
 *
 * Then the superblock counters are summed from the AG headers (the
 * kernel does this when mounting a dirty lazy-count filesystem), the
 * log_incompat bits are cleared, and the log is rewritten clean.
 * Damage found anywhere stops recovery before the first write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/attr.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/symlink.h>

#include "log_priv.h"

/* log_incompat bit of mapping-exchange intents (kernels after 6.1). */
#define LOG_INCOMPAT_EXCHMAPS	(1u << 1)

struct cancel {
	uint64_t	blkno;
	uint32_t	len;
	uint32_t	refs;
};

/* A buffer replayed by a buffer item: its LSN is stamped at the end. */
struct touched {
	struct xk_buf	*bp;
	uint64_t	lsn;
	size_t		crc_off;
	size_t		lsn_off;	/* 0: none */
};

/*
 * A small open-addressing map from a non-zero 64-bit key to an index,
 * so that the cancel table and the replayed-buffer list stay linear in
 * the size of the log.
 */
struct hmap {
	uint64_t	*k;
	uint32_t	*v;
	uint32_t	cap;		/* power of two, or 0 */
	uint32_t	n;
};

static uint32_t
hslot(const struct hmap *h, uint64_t key)
{
	uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) &
		     (h->cap - 1);

	while (h->k[i] && h->k[i] != key)
		i = (i + 1) & (h->cap - 1);
	return i;
}

static int
hmap_get(const struct hmap *h, uint64_t key, uint32_t *val)
{
	uint32_t i;

	if (!h->cap)
		return 0;
	i = hslot(h, key);
	if (!h->k[i])
		return 0;
	*val = h->v[i];
	return 1;
}

static int
hmap_put(struct hmap *h, uint64_t key, uint32_t val)
{
	uint32_t i;

	if ((h->n + 1) * 2 > h->cap) {
		struct hmap g = { .cap = h->cap ? h->cap * 2 : 256 };

		g.k = calloc(g.cap, sizeof(*g.k));
		g.v = calloc(g.cap, sizeof(*g.v));
		if (!g.k || !g.v) {
			free(g.k);
			free(g.v);
			return -ENOMEM;
		}
		for (uint32_t j = 0; j < h->cap; j++)
			if (h->k[j]) {
				i = hslot(&g, h->k[j]);
				g.k[i] = h->k[j];
				g.v[i] = h->v[j];
				g.n++;
			}
		free(h->k);
		free(h->v);
		*h = g;
	}
	i = hslot(h, key);
	if (!h->k[i])
		h->n++;
	h->k[i] = key;
	h->v[i] = val;
	return 0;
}

static void
hmap_free(struct hmap *h)
{
	free(h->k);
	free(h->v);
	memset(h, 0, sizeof(*h));
}

/* A buffer pass 2's batch holds, with the ops on it. */
struct bgroup {
	struct xk_buf	*bp;
	int		given;		/* its reference went to touch() */
	uint32_t	next;		/* another length at this address */
};

#define BGROUP_NONE	UINT32_MAX

struct owner_change {
	uint64_t	ino;
	uint32_t	fields;		/* XK_ILOG_DOWNER / AOWNER */
};

struct rctx {
	struct xk_mount	*mp;
	struct xk_log	*log;
	struct xk_log_report *rep;
	struct cancel	*c;
	size_t		nc, capc;
	struct hmap	cmap;		/* (blkno, len) -> index in c */
	struct log_intent *in;
	size_t		nin, capin;
	struct touched	*t;
	size_t		nt, capt;
	struct hmap	tmap;		/* buffer address -> index in t */
	/* Pass 2's batch of ops, and the buffers it holds. */
	struct log_op	*ops;
	size_t		nops, capops;
	struct hmap	bmap;		/* address + 1 -> newest group there */
	struct bgroup	*grp;
	size_t		ngroups, capgrp;
	uint64_t	pinned;		/* bytes held by the batch alone */
	uint64_t	dquots;
	uint64_t	owner_changes;
	/* Inodes whose bmbt blocks take a new owner (swapext). */
	struct owner_change *oc;
	size_t		noc, capoc;
};

static void *
grow(void *p, size_t *cap, size_t n, size_t sz)
{
	size_t c;
	void *q;

	if (n < *cap)
		return p;
	c = *cap ? *cap * 2 : 64;
	q = realloc(p, c * sz);
	if (q)
		*cap = c;
	return q;
}

/* Buffers are inside the filesystem (checked at parse): key is exact. */
static uint64_t
cancel_key(uint64_t blkno, uint32_t len)
{
	return (blkno << 16) | (len & 0xffff);
}

static struct cancel *
cancel_find(struct rctx *rc, uint64_t blkno, uint32_t len)
{
	uint32_t i;

	if (hmap_get(&rc->cmap, cancel_key(blkno, len), &i) && rc->c[i].refs)
		return &rc->c[i];
	return NULL;
}

static int
cancel_add(struct rctx *rc, uint64_t blkno, uint32_t len)
{
	struct cancel *c;
	uint32_t i;

	if (hmap_get(&rc->cmap, cancel_key(blkno, len), &i)) {
		rc->c[i].refs++;
		return 0;
	}
	c = grow(rc->c, &rc->capc, rc->nc, sizeof(*c));
	if (!c)
		return -ENOMEM;
	rc->c = c;
	rc->c[rc->nc] = (struct cancel){ blkno, len, 1 };
	return hmap_put(&rc->cmap, cancel_key(blkno, len),
			(uint32_t)rc->nc++);
}

static int
is_intent(uint16_t t)
{
	return t == XK_LI_EFI || t == XK_LI_RUI || t == XK_LI_CUI ||
	       t == XK_LI_BUI || t == XK_LI_ATTRI || t == XK_LI_XMI ||
	       t == XK_LI_EFI_RT || t == XK_LI_RUI_RT || t == XK_LI_CUI_RT;
}

/* The intent a done item ends, or 0 when t is not a done item. */
static uint16_t
done_of(uint16_t t)
{
	switch (t) {
	case XK_LI_EFD: return XK_LI_EFI;
	case XK_LI_RUD: return XK_LI_RUI;
	case XK_LI_CUD: return XK_LI_CUI;
	case XK_LI_BUD: return XK_LI_BUI;
	case XK_LI_ATTRD: return XK_LI_ATTRI;
	case XK_LI_XMD: return XK_LI_XMI;
	case XK_LI_EFD_RT: return XK_LI_EFI_RT;
	case XK_LI_RUD_RT: return XK_LI_RUI_RT;
	case XK_LI_CUD_RT: return XK_LI_CUI_RT;
	default: return 0;
	}
}

/* Every intent and done format keeps its id at byte 8. */
static uint64_t
item_id(const struct xk_log_item *it)
{
	return xk_get_ne64(it->regions[0].data + 8);
}

static int
pass1_trans(void *priv, const struct xk_log_trans *tr)
{
	struct rctx *rc = priv;

	rc->rep->transactions++;
	for (uint32_t i = 0; i < tr->nitems; i++) {
		const struct xk_log_item *it = &tr->items[i];
		const struct xk_buf_log_format *blf;
		uint16_t d = done_of(it->type);
		int err;

		rc->rep->items++;
		if (it->type == XK_LI_BUF) {
			blf = (const void *)it->regions[0].data;
			if (xk_get_ne16(&blf->blf_flags) &
			    (XK_BLF_UDQUOT_BUF | XK_BLF_PDQUOT_BUF |
			     XK_BLF_GDQUOT_BUF))
				rc->dquots++;
			if (!(xk_get_ne16(&blf->blf_flags) & XK_BLF_CANCEL))
				continue;
			err = cancel_add(rc, xk_get_ne64(&blf->blf_blkno),
					 xk_get_ne16(&blf->blf_len));
			if (err)
				return err;
		} else if (it->type == XK_LI_DQUOT) {
			rc->dquots++;
		} else if (it->type == XK_LI_INODE) {
			uint32_t fields = xk_get_ne32(it->regions[0].data + 4);

			if (fields & (XK_ILOG_DOWNER | XK_ILOG_AOWNER))
				rc->owner_changes++;
		} else if (is_intent(it->type)) {
			struct log_intent *in = grow(rc->in, &rc->capin,
						     rc->nin, sizeof(*in));
			uint32_t len = it->regions[0].len;
			uint8_t *copy = malloc(len ? len : 1);

			if (!in || !copy) {
				free(copy);
				return -ENOMEM;
			}
			memcpy(copy, it->regions[0].data, len);
			rc->in = in;
			rc->in[rc->nin++] = (struct log_intent){
				it->type, item_id(it), copy, len };
		} else if (d) {
			uint64_t id = item_id(it);

			/* Keep log order: intents are finished in it. */
			for (size_t k = 0; k < rc->nin; k++)
				if (rc->in[k].type == d && rc->in[k].id == id) {
					free(rc->in[k].data);
					memmove(&rc->in[k], &rc->in[k + 1],
						(rc->nin - k - 1) *
						sizeof(*rc->in));
					rc->nin--;
					break;
				}
		}
	}
	return 0;
}

static int
rfail(struct rctx *rc, const struct xk_log_trans *tr, uint32_t i,
      const char *what, uint64_t v)
{
	return xk_log_fail(rc->log, XK_ECORRUPT,
		"log transaction 0x%x (LSN %u/%u), item %u: %s (0x%llx)",
		tr->tid, xk_lsn_cycle(tr->lsn), xk_lsn_block(tr->lsn), i,
		what, (unsigned long long)v);
}

static int
read_raw(struct rctx *rc, uint64_t daddr, uint32_t bytes, struct xk_buf **bpp)
{
	int err = xk_buf_read(rc->mp, daddr, bytes, NULL, XK_READ_NOVERIFY,
			      bpp);

	if (err)
		return xk_log_fail(rc->log, err, "cannot read daddr %llu: %s",
				   (unsigned long long)daddr,
				   xk_strerror(err));
	return 0;
}

/* Remember a replayed buffer and the LSN its verifier would stamp. */
static int
touch(struct rctx *rc, struct xk_buf *bp, uint64_t lsn, size_t crc_off,
      size_t lsn_off)
{
	struct touched *t;
	uint32_t i;
	int err;

	if (hmap_get(&rc->tmap, (uint64_t)(uintptr_t)bp, &i)) {
		rc->t[i].lsn = lsn;
		rc->t[i].crc_off = crc_off;
		rc->t[i].lsn_off = lsn_off;
		xk_buf_release(bp);
		return 0;
	}
	t = grow(rc->t, &rc->capt, rc->nt, sizeof(*t));
	if (!t) {
		xk_buf_release(bp);
		return -ENOMEM;
	}
	rc->t = t;
	err = hmap_put(&rc->tmap, (uint64_t)(uintptr_t)bp, (uint32_t)rc->nt);
	if (err) {
		xk_buf_release(bp);
		return err;
	}
	rc->t[rc->nt++] = (struct touched){ bp, lsn, crc_off, lsn_off };
	return 0;
}

/*
 * Pass 2 in batches.  This thread walks the log, decides cancellations
 * in log order and takes each op's buffer from the cache; apply.c then
 * applies a batch on the worker threads; finish_batch() reads the
 * results back in log order.  A batch ends when it pins too many bytes
 * of buffers or of kept transactions, or holds too many ops, and at the
 * end of the log.
 */
#define LOG_BATCH_OPS		(256u << 10)
#define LOG_BATCH_BYTES		(256ull << 20)
/* Kept transactions: small enough that their memory is reused. */
#define LOG_BATCH_KEPT		(16ull << 20)

/*
 * The batch's group of the buffer at daddr: found, or a new one that
 * holds one reference on the buffer for the whole batch, taken from the
 * cache (get: zeroed without a read, *zeroed set, for a chunk an inode
 * create rewrites whole).
 */
static int
batch_group(struct rctx *rc, uint64_t daddr, uint32_t bytes, int get,
	    uint32_t *groupp, int *zeroed)
{
	/* By address (+1: the key 0 is free), then length along a chain. */
	uint64_t key = daddr + 1;
	uint32_t head = BGROUP_NONE;
	struct bgroup *grp;
	struct xk_buf *bp;
	int err;

	if (hmap_get(&rc->bmap, key, &head))
		for (uint32_t g = head; g != BGROUP_NONE; g = rc->grp[g].next)
			if (rc->grp[g].bp->len == bytes) {
				*groupp = g;
				return 0;
			}
	grp = grow(rc->grp, &rc->capgrp, rc->ngroups, sizeof(*grp));
	if (!grp)
		return -ENOMEM;
	rc->grp = grp;
	if (get) {
		err = xk_buf_get(rc->mp, daddr, bytes, NULL, &bp);
		if (err)
			return xk_log_fail(rc->log, err, "cannot get daddr "
					   "%llu: %s",
					   (unsigned long long)daddr,
					   xk_strerror(err));
		*zeroed = 1;
	} else {
		err = read_raw(rc, daddr, bytes, &bp);
		if (err)
			return err;
	}
	err = hmap_put(&rc->bmap, key, (uint32_t)rc->ngroups);
	if (err) {
		xk_buf_release(bp);
		return err;
	}
	/* Only the batch holds it: it stays in memory until applied. */
	if (bp->refs == 1)
		rc->pinned += bp->len;
	rc->grp[rc->ngroups] = (struct bgroup){ bp, 0, head };
	*groupp = (uint32_t)rc->ngroups++;
	return 0;
}

/* Queue an op on the buffer of group. */
static int
add_op(struct rctx *rc, const struct xk_log_trans *tr, uint32_t ii,
       const struct xk_log_item *it, uint32_t group, uint8_t kind,
       uint32_t agino, int last, int zeroed)
{
	struct log_op *ops = grow(rc->ops, &rc->capops, rc->nops,
				  sizeof(*ops));

	if (!ops)
		return -ENOMEM;
	rc->ops = ops;
	ops[rc->nops++] = (struct log_op){
		.it = it, .bp = rc->grp[group].bp, .lsn = tr->lsn,
		.tid = tr->tid, .item = ii, .agino = agino, .group = group,
		.kind = kind, .last = (uint8_t)last,
		.zeroed = (uint8_t)zeroed };
	return 0;
}

static int
collect_buf(struct rctx *rc, const struct xk_log_trans *tr, uint32_t ii,
	    const struct xk_log_item *it)
{
	const struct xk_buf_log_format *blf = (const void *)it->regions[0].data;
	uint16_t flags = xk_get_ne16(&blf->blf_flags);
	uint64_t blkno = xk_get_ne64(&blf->blf_blkno);
	uint32_t len = xk_get_ne16(&blf->blf_len);
	struct cancel *c = cancel_find(rc, blkno, len);
	uint32_t group;
	int err, zeroed = 0;

	if (flags & XK_BLF_CANCEL) {
		/* The cancel record itself retires one reference. */
		if (c)
			c->refs--;
		rc->rep->bufs_cancelled++;
		return 0;
	}
	if (c) {
		rc->rep->bufs_cancelled++;
		return 0;
	}
	err = batch_group(rc, blkno, len << XK_BBSHIFT, 0, &group, &zeroed);
	if (err)
		return err;
	return add_op(rc, tr, ii, it, group, LOG_OP_BUF, 0, 0, 0);
}

static int
collect_inode(struct rctx *rc, const struct xk_log_trans *tr, uint32_t ii,
	      const struct xk_log_item *it)
{
	struct xk_inode_log_format f;
	uint32_t group;
	int err, zeroed = 0;

	xk_log_ilf_decode(&it->regions[0], &f);
	if (cancel_find(rc, (uint64_t)f.ilf_blkno, (uint32_t)f.ilf_len)) {
		rc->rep->inodes_cancelled++;
		return 0;
	}
	err = batch_group(rc, (uint64_t)f.ilf_blkno,
			  (uint32_t)f.ilf_len << XK_BBSHIFT, 0, &group,
			  &zeroed);
	if (err)
		return err;
	return add_op(rc, tr, ii, it, group, LOG_OP_INODE, 0, 0, 0);
}

/*
 * Inode create rules: 1. a 28-byte item of type ICREATE and size 1;
 * 2. AG and first block inside the filesystem, not block 0; 3. inode
 * size the superblock's; 4. a full chunk or a minimal sparse one, whose
 * inode count matches its length.  If any of its cluster buffers was
 * cancelled the chunk is skipped (the kernel warns when only some are).
 * There is no LSN check: the kernel re-initialises the chunk.
 */
static int
collect_icreate(struct rctx *rc, const struct xk_log_trans *tr, uint32_t ii,
		const struct xk_log_item *it)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_geom *g = &mp->g;
	struct xk_icreate_log ic;
	uint32_t agno, agbno, count, length, isize, nbufs, ncancel = 0;
	uint32_t cbytes = g->cluster_blks << g->blocklog;

	if (it->regions[0].len != sizeof(ic))
		return rfail(rc, tr, ii, "inode create item length",
			     it->regions[0].len);
	memcpy(&ic, it->regions[0].data, sizeof(ic));
	agno = xk_be32_get(ic.icl_ag);
	agbno = xk_be32_get(ic.icl_agbno);
	count = xk_be32_get(ic.icl_count);
	length = xk_be32_get(ic.icl_length);
	isize = xk_be32_get(ic.icl_isize);
	if (ic.icl_size != 1)
		return rfail(rc, tr, ii, "inode create item size",
			     ic.icl_size);
	if (agno >= g->agcount || agbno == 0 ||
	    !xk_agbext_valid(mp, agno, agbno, length))
		return rfail(rc, tr, ii, "inode chunk outside the AG, agbno",
			     agbno);
	if (isize != g->inodesize)
		return rfail(rc, tr, ii, "inode create inode size", isize);
	if ((length != g->ialloc_blks && length != g->ialloc_min_blks) ||
	    count == 0 || (count >> g->inopblog) != length ||
	    g->cluster_blks == 0)
		return rfail(rc, tr, ii, "inode create count and length",
			     ((uint64_t)count << 32) | length);
	nbufs = length / g->cluster_blks;
	for (uint32_t b = 0; b < nbufs; b++)
		if (cancel_find(rc, xk_agb_to_daddr(mp, agno,
					agbno + b * g->cluster_blks),
				g->cluster_blks << g->blkbb_log))
			ncancel++;
	/* Like the kernel: any cancelled cluster skips the whole chunk. */
	if (ncancel)
		return 0;
	for (uint32_t b = 0; b < nbufs; b++) {
		uint32_t cb = agbno + b * g->cluster_blks;
		uint64_t daddr = xk_agb_to_daddr(mp, agno, cb);
		uint32_t group;
		int err, zeroed = 0;

		/*
		 * The chunk is rewritten whole, so like the kernel take the
		 * buffer without reading it (the read was most of the time
		 * a log full of creates took); the bytes are the same.  A
		 * buffer with ops still pending in this batch is taken as it
		 * is: the op clears it when its turn comes.
		 */
		err = batch_group(rc, daddr, cbytes, 1, &group, &zeroed);
		if (err)
			return err;
		err = add_op(rc, tr, ii, it, group, LOG_OP_ICREATE,
			     cb << g->inopblog, b + 1 == nbufs, zeroed);
		if (err)
			return err;
	}
	return 0;
}

/* The bmbt owner changes an applied inode item asks for. */
static int
note_owner_change(struct rctx *rc, const struct log_op *op)
{
	struct xk_inode_log_format f;
	struct owner_change *oc;

	/* ilf_fields sits at byte 4 in both layouts. */
	if (!(xk_get_ne32(op->it->regions[0].data + 4) &
	      (XK_ILOG_DOWNER | XK_ILOG_AOWNER)))
		return 0;
	xk_log_ilf_decode(&op->it->regions[0], &f);
	oc = grow(rc->oc, &rc->capoc, rc->noc, sizeof(*oc));
	if (!oc)
		return -ENOMEM;
	rc->oc = oc;
	rc->oc[rc->noc++] = (struct owner_change){
		f.ilf_ino, f.ilf_fields & (XK_ILOG_DOWNER | XK_ILOG_AOWNER) };
	return 0;
}

/*
 * Note a replayed buffer for write-back: the first op applied to it in
 * a batch hands the batch's reference to touch(); later ones only
 * update what the write stamps.
 */
static int
touch_group(struct rctx *rc, const struct log_op *op)
{
	struct bgroup *grp = &rc->grp[op->group];
	uint32_t i;

	if (!grp->given) {
		grp->given = 1;
		return touch(rc, grp->bp, op->lsn, op->crc_off, op->lsn_off);
	}
	if (!hmap_get(&rc->tmap, (uint64_t)(uintptr_t)grp->bp, &i))
		return xk_log_fail(rc->log, XK_ECORRUPT, "replayed buffer "
				   "at daddr %llu lost its entry",
				   (unsigned long long)grp->bp->daddr);
	rc->t[i].lsn = op->lsn;
	rc->t[i].crc_off = op->crc_off;
	rc->t[i].lsn_off = op->lsn_off;
	return 0;
}

/* The results of one applied op, in log order. */
static int
op_result(struct rctx *rc, const struct log_op *op)
{
	struct xk_log_report *rep = rc->rep;
	int err;

	if (op->status == LOG_OP_FAILED)
		return xk_log_fail(rc->log, op->err ? op->err : XK_ECORRUPT,
				   "%s", op->msg ? op->msg :
				   "out of memory for a failure message");
	if (op->status == LOG_OP_SKIPPED_LSN) {
		if (op->kind == LOG_OP_BUF)
			rep->bufs_skipped_lsn++;
		else
			rep->inodes_skipped_lsn++;
		return 0;
	}
	if (op->kind == LOG_OP_BUF) {
		rep->bufs_replayed++;
	} else if (op->kind == LOG_OP_INODE) {
		rep->inodes_replayed++;
		err = note_owner_change(rc, op);
		if (err)
			return err;
	} else if (op->last) {
		rep->icreates_replayed++;
	}
	xk_buf_dirty(op->bp);
	return touch_group(rc, op);
}

/*
 * Apply the batch and take its results in log order.  On a failure the
 * first failing op (in log order) gives the error, and every buffer the
 * batch alone holds is dropped from the cache with its edits (those
 * already replayed and touched are dropped by the caller).
 */
static int
finish_batch(struct rctx *rc)
{
	uint32_t n = (uint32_t)rc->nops;
	int err = log_ops_apply(rc->mp, rc->ops, n, (uint32_t)rc->ngroups,
				rc->log->threads);

	if (err)
		err = xk_log_fail(rc->log, err, "no memory to replay the log");
	for (uint32_t k = 0; k < n && !err; k++)
		err = op_result(rc, &rc->ops[k]);
	for (uint32_t k = 0; k < n; k++)
		free(rc->ops[k].msg);
	for (size_t g = 0; g < rc->ngroups; g++) {
		struct xk_buf *bp = rc->grp[g].bp;
		uint64_t daddr = bp->daddr;
		uint32_t len = bp->len;

		if (rc->grp[g].given)
			continue;
		xk_buf_release(bp);
		if (err)
			xk_buf_invalidate(rc->mp, daddr, len);
	}
	rc->nops = 0;
	rc->ngroups = 0;
	rc->pinned = 0;
	hmap_free(&rc->bmap);
	log_kept_free(rc->log);
	return err;
}

/* The kernel's item order within a transaction (xlog_recover_reorder). */
enum { CLS_BUF, CLS_ITEM, CLS_INODE_BUF, CLS_INODE, CLS_CANCEL, CLS_NR };

static int
item_class(const struct xk_log_item *it)
{
	uint16_t fl;

	switch (it->type) {
	case XK_LI_BUF:
		fl = xk_get_ne16(it->regions[0].data + 4);
		if (fl & XK_BLF_CANCEL)
			return CLS_CANCEL;
		if (fl & XK_BLF_INODE_BUF)
			return CLS_INODE_BUF;
		return CLS_BUF;
	case XK_LI_ICREATE:
		return CLS_BUF;
	case XK_LI_INODE:
	case XK_LI_DQUOT:
		return CLS_INODE;
	default:
		return CLS_ITEM;
	}
}

static int
pass2_trans(void *priv, const struct xk_log_trans *tr)
{
	struct rctx *rc = priv;
	int err = 0;

	for (int cls = 0; cls < CLS_NR && !err; cls++) {
		/* Those lists are built by head insertion: reverse order. */
		int rev = cls == CLS_INODE_BUF || cls == CLS_CANCEL;

		for (uint32_t k = 0; k < tr->nitems && !err; k++) {
			uint32_t i = rev ? tr->nitems - 1 - k : k;
			const struct xk_log_item *it = &tr->items[i];

			if (item_class(it) != cls)
				continue;
			if (it->type == XK_LI_BUF)
				err = collect_buf(rc, tr, i, it);
			else if (it->type == XK_LI_INODE)
				err = collect_inode(rc, tr, i, it);
			else if (it->type == XK_LI_ICREATE)
				err = collect_icreate(rc, tr, i, it);
		}
	}
	if (err) {
		/* The ops before this item come first, and may fail first. */
		char msg[sizeof(rc->log->err)];
		int e;

		memcpy(msg, rc->log->err, sizeof(msg));
		e = finish_batch(rc);
		if (e)
			return e;
		memcpy(rc->log->err, msg, sizeof(msg));
		return err;
	}
	if (rc->nops >= LOG_BATCH_OPS || rc->pinned >= LOG_BATCH_BYTES ||
	    rc->log->kept_bytes >= LOG_BATCH_KEPT)
		err = finish_batch(rc);
	return err;
}

static int
count_records(void *priv, const struct xk_log_rec *rec)
{
	struct rctx *rc = priv;

	(void)rec;
	rc->rep->records++;
	return 0;
}

/* Drop every buffer recovery edited, without writing it. */
static void
discard_touched(struct rctx *rc)
{
	for (size_t i = 0; i < rc->nt; i++) {
		struct xk_buf *bp = rc->t[i].bp;
		uint64_t daddr = bp->daddr;
		uint32_t len = bp->len;

		bp->flags &= ~XK_BUF_DIRTY;
		xk_buf_release(bp);
		xk_buf_invalidate(rc->mp, daddr, len);
	}
	rc->nt = 0;
	hmap_free(&rc->tmap);
}

/*
 * Stamp and checksum what the kernel's write verifiers would, then
 * write everything back.
 */
static int
write_touched(struct rctx *rc, int flush)
{
	for (size_t i = 0; i < rc->nt; i++) {
		struct touched *t = &rc->t[i];

		if (t->crc_off != XK_NO_CRC) {
			if (t->lsn_off)
				xk_put_be64(t->bp->data + t->lsn_off, t->lsn);
			xk_cksum_update(t->bp->data, t->bp->len, t->crc_off);
		}
		xk_buf_release(t->bp);
	}
	rc->rep->blocks_written = rc->nt;
	rc->nt = 0;
	hmap_free(&rc->tmap);
	return flush ? xk_buf_flush(rc->mp) : 0;
}

/* Count the AGI unlinked buckets that are not empty. */
static int
count_unlinked(struct rctx *rc)
{
	struct xk_mount *mp = rc->mp;

	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		const struct xk_agi *agi;
		int err = read_raw(rc, xk_ag_hdr_daddr(mp, agno, XK_AGI_SECTOR),
				   mp->g.sectsize, &bp);

		if (err)
			return err;
		agi = (const struct xk_agi *)bp->data;
		for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++)
			if (xk_be32_get(agi->agi_unlinked[i]) != XK_NULLAGINO)
				rc->rep->unlinked_inodes++;
		xk_buf_release(bp);
	}
	return 0;
}

/*
 * Count the CoW staging extents in the (replayed) refcount btrees.  After
 * a crash during copy-on-write they are left over, and the kernel frees
 * them at every mount; we cannot yet.  The walk reads through the cache
 * (the replayed blocks) without verifiers, so it checks what it uses:
 * root and child pointers inside the AG, levels descending from at most
 * the maximum, record counts within the block, a bound on the blocks
 * visited.
 */
static int
count_cow(struct rctx *rc, uint32_t agno, uint32_t agbno, unsigned int level,
	  uint32_t *budget, uint64_t *cow)
{
	struct xk_mount *mp = rc->mp;
	uint32_t bs = mp->g.blocksize, hdr = sizeof(struct xk_btree_sblock);
	uint32_t n, max;
	struct xk_buf *bp;
	int err;

	if (agbno == 0 || agbno >= xk_ag_blocks(mp, agno) || !*budget)
		return 0;
	(*budget)--;
	err = read_raw(rc, xk_agb_to_daddr(mp, agno, agbno), bs, &bp);
	if (err)
		return err;
	n = xk_get_be16(bp->data + 6);
	if (xk_get_be32(bp->data) != XK_REFC_CRC_MAGIC ||
	    xk_get_be16(bp->data + 4) != level) {
		xk_buf_release(bp);
		return 0;
	}
	if (level == 0) {
		max = (bs - hdr) / sizeof(struct xk_refcount_rec);
		for (uint32_t i = 0; i < n && i < max; i++)
			if (xk_get_be32(bp->data + hdr + i * 12) &
			    XK_REFC_COWFLAG)
				(*cow)++;
	} else {
		max = (bs - hdr) / 8;
		for (uint32_t i = 0; i < n && i < max && !err; i++)
			err = count_cow(rc, agno,
					xk_get_be32(bp->data + hdr + max * 4 +
						    i * 4),
					level - 1, budget, cow);
	}
	xk_buf_release(bp);
	return err;
}

static int
count_cow_staging(struct rctx *rc, uint64_t *cow)
{
	struct xk_mount *mp = rc->mp;

	*cow = 0;
	if (!mp->g.has_reflink)
		return 0;
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		uint32_t budget = 1u << 20, root, level;
		const struct xk_agf *agf;
		struct xk_buf *bp;
		int err = read_raw(rc, xk_ag_hdr_daddr(mp, agno, XK_AGF_SECTOR),
				   mp->g.sectsize, &bp);

		if (err)
			return err;
		agf = (const struct xk_agf *)bp->data;
		root = xk_be32_get(agf->agf_refcount_root);
		level = xk_be32_get(agf->agf_refcount_level);
		xk_buf_release(bp);
		if (level == 0 || level > mp->g.maxlevels[XK_BT_REFC])
			continue;
		err = count_cow(rc, agno, root, level - 1, &budget, cow);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The superblock after a dirty mount: free and inode counters summed
 * from the AG headers (as the kernel does for lazy counters before it
 * writes the superblock at unmount), log_incompat bits cleared.
 */
static int
update_sb(struct rctx *rc, int flush)
{
	struct xk_mount *mp = rc->mp;
	uint64_t icount = 0, ifree = 0, fdblocks = 0;
	struct xk_buf *bp;
	struct xk_dsb *sb;
	int err;

	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		const struct xk_agf *agf;
		const struct xk_agi *agi;

		err = read_raw(rc, xk_ag_hdr_daddr(mp, agno, XK_AGF_SECTOR),
			       mp->g.sectsize, &bp);
		if (err)
			return err;
		agf = (const struct xk_agf *)bp->data;
		fdblocks += (uint64_t)xk_be32_get(agf->agf_freeblks) +
			    xk_be32_get(agf->agf_flcount) +
			    xk_be32_get(agf->agf_btreeblks);
		xk_buf_release(bp);
		err = read_raw(rc, xk_ag_hdr_daddr(mp, agno, XK_AGI_SECTOR),
			       mp->g.sectsize, &bp);
		if (err)
			return err;
		agi = (const struct xk_agi *)bp->data;
		icount += xk_be32_get(agi->agi_count);
		ifree += xk_be32_get(agi->agi_freecount);
		xk_buf_release(bp);
	}
	err = read_raw(rc, 0, mp->g.sectsize, &bp);
	if (err)
		return err;
	sb = (struct xk_dsb *)bp->data;
	if (fdblocks <= mp->g.dblocks && ifree <= icount) {
		xk_be64_set(&sb->sb_icount, icount);
		xk_be64_set(&sb->sb_ifree, ifree);
		xk_be64_set(&sb->sb_fdblocks, fdblocks);
	}
	/* Keep the handle's decoded copy in step with the disk. */
	xk_sb_decode(&mp->sb, sb);
	rc->rep->log_incompat_cleared =
		xk_be32_get(sb->sb_features_log_incompat);
	xk_be32_set(&sb->sb_features_log_incompat, 0);
	mp->sb.features_log_incompat = 0;
	xk_cksum_update(bp->data, bp->len, offsetof(struct xk_dsb, sb_crc));
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return flush ? xk_buf_flush(mp) : 0;
}

/* A bmbt block walked for an owner change: stamp the new owner. */
static int
owner_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	const uint64_t *ino = ctx;

	(void)level;
	(void)bno;
	if (bp->error || bp->len < 72)
		return XK_ECORRUPT;
	xk_put_be64(bp->data + 56, *ino);	/* bb_owner, long form */
	xk_buf_dirty(bp);
	return 0;
}

/*
 * Swapped extents (xfs_fsr on a filesystem without the rmapbt) log the
 * inode with an owner-change flag instead of every bmbt block: as the
 * kernel's recovery does, walk the replayed fork's bmbt and give each
 * block its new owner.
 */
static int
change_owners(struct rctx *rc)
{
	struct xk_mount *mp = rc->mp;

	for (size_t i = 0; i < rc->noc; i++) {
		for (int w = XK_DATA_FORK; w <= XK_ATTR_FORK; w++) {
			uint32_t flag = w == XK_DATA_FORK ? XK_ILOG_DOWNER :
							    XK_ILOG_AOWNER;
			uint64_t ino = rc->oc[i].ino;
			struct xk_btree_walk wk = {
				.ops = &xk_bmbt_ops, .agno = -1,
				.flags = XK_READ_NOVERIFY, .ctx = &ino,
				.block_fn = owner_block,
			};
			struct xk_dinode *dip;
			struct xk_buf *bp;
			int err;

			if (!(rc->oc[i].fields & flag))
				continue;
			err = xk_inode_read(mp, ino, 0, &bp, &dip);
			if (err)
				return xk_log_fail(rc->log, err, "inode %llu "
					"(bmbt owner change): %s",
					(unsigned long long)ino,
					xk_strerror(err));
			if (xk_dfork_format(dip, w) != XK_DINODE_FMT_BTREE) {
				xk_buf_release(bp);
				continue;
			}
			wk.iroot = xk_dfork_ptr(dip, w);
			wk.iroot_size = xk_dfork_size(dip, mp->g.inodesize, w);
			wk.levels = xk_get_be16(wk.iroot) + 1u;
			err = xk_btree_walk(mp, &wk);
			xk_buf_release(bp);
			if (err)
				return xk_log_fail(rc->log, err, "inode %llu: "
					"changing its bmbt owner failed: %s",
					(unsigned long long)ino,
					xk_strerror(err));
		}
	}
	return 0;
}

/* Whether anything is left for the kernel's after-replay work. */
static int
need_finish(const struct rctx *rc, unsigned int flags)
{
	if (rc->nin)
		return 1;
	if (flags & XK_LOG_SKIP_CLEANUP)
		return 0;
	return rc->rep->unlinked_inodes || rc->rep->cow_staging;
}

static void
report_msg(struct xk_log_report *rep, const char *m)
{
	snprintf(rep->msg, sizeof(rep->msg), "%s", m);
}

int
xk_log_recover(struct xk_mount *mp, unsigned int flags, unsigned int threads,
	       struct xk_log_report *rep)
{
	struct xk_log_walk_ops p1 = { .rec = count_records,
				      .trans = pass1_trans };
	struct xk_log_walk_ops p2 = { .trans = pass2_trans };
	struct rctx rc = { .mp = mp, .rep = rep };
	struct xk_log *log = NULL;
	uint32_t unknown;
	int err;

	memset(rep, 0, sizeof(*rep));
	err = xk_log_open(mp, &log);
	if (log)
		rep->state = log->st;
	if (err)
		goto out;
	rc.log = log;
	log->threads = log_threads_default(threads);
	if (log->st.clean)
		goto out;
	if (!(flags & XK_LOG_DRYRUN) && (mp->flags & XK_MOUNT_RDONLY)) {
		err = xk_log_fail(log, XK_ERDONLY, "the log is dirty and the "
				  "filesystem was opened read-only");
		goto out;
	}
	unknown = mp->sb.features_log_incompat &
		  ~(XK_SB_FEAT_LOG_INCOMPAT_KNOWN | LOG_INCOMPAT_EXCHMAPS);
	if (unknown) {
		err = xk_log_fail(log, XK_EUNSUPP,
			"the superblock has unknown log_incompat features "
			"0x%x: this log cannot be replayed safely", unknown);
		goto out;
	}
	err = xk_log_walk(log, &p1, &rc);
	if (err)
		goto out;
	rep->intents_unfinished = rc.nin;
	for (size_t k = 0; k < rc.nin; k++) {
		/* A damaged XMI stops recovery before anything is written. */
		if (rc.in[k].type == XK_LI_XMI) {
			err = log_xmi_check(log, &rc.in[k]);
			if (err)
				goto out;
		}
		if (log_intent_supported(rc.in[k].type))
			continue;
		rep->first_intent_type = rc.in[k].type;
		err = xk_log_fail(log, XK_EUNSUPP,
			"the log holds an unfinished %s intent (id 0x%llx) "
			"xfskit cannot finish offline, so nothing was "
			"written: mount the filesystem to let the kernel "
			"recover it", xk_log_item_name(rc.in[k].type),
			(unsigned long long)rc.in[k].id);
		goto out;
	}
	if (rc.nin)
		rep->first_intent_type = rc.in[0].type;
	log->keep = 1;
	err = xk_log_walk(log, &p2, &rc);
	if (!err)
		err = finish_batch(&rc);
	log->keep = 0;
	if (err) {
		finish_batch(&rc);
		discard_touched(&rc);
		goto out;
	}
	/* Dquot items, after the buffers (recover_dquot.c). */
	if (rc.dquots) {
		err = log_replay_dquots(log, flags, rep);
		if (err) {
			discard_touched(&rc);
			xk_buf_discard_dirty(mp);
			goto out;
		}
	}
	/* The AGIs as replayed (in the cache) tell what the kernel would
	 * do next: free the inodes on the unlinked lists. */
	err = count_unlinked(&rc);
	if (!err)
		err = count_cow_staging(&rc, &rep->cow_staging);
	if (!err && (flags & XK_LOG_DRYRUN) && (flags & XK_LOG_DRYRUN_KEEP)) {
		/*
		 * Leave the replayed state in the cache, unwritten, and
		 * finish there what the kernel would finish at mount.
		 */
		err = write_touched(&rc, 0);
		if (!err)
			err = update_sb(&rc, 0);
		if (!err)
			err = change_owners(&rc);
		if (!err && need_finish(&rc, flags))
			err = log_finish(log, rc.in, rc.nin, flags, rep);
		if (!err && rc.noc)
			err = xk_buf_seal(mp);
		goto out;
	}
	if (err || (flags & XK_LOG_DRYRUN)) {
		/* A dry run counted what replay would do; now forget it. */
		discard_touched(&rc);
		goto out;
	}
	/*
	 * Everything happens in the cache first, the finishing work
	 * included, so a failure anywhere leaves the disk as it was.
	 */
	err = write_touched(&rc, 0);
	if (!err)
		err = update_sb(&rc, 0);
	if (!err)
		err = change_owners(&rc);
	if (!err && need_finish(&rc, flags))
		err = log_finish(log, rc.in, rc.nin, flags, rep);
	if (err) {
		xk_buf_discard_dirty(mp);
		goto out;
	}
	rep->replayed = 1;
	err = xk_buf_flush(mp);
	/* On two devices, the replayed blocks are durable before the log
	 * says they need no replay. */
	if (!err && mp->logdev)
		err = xk_dev_sync(mp->dev);
	if (!err)
		err = xk_log_write_clean(log, log->st.head_blk,
					 log->st.head_cycle, 0);
	if (!err)
		err = xk_dev_sync(xk_mount_log_dev(mp));
	if (err && !log->err[0])
		xk_log_fail(log, err, "writing the recovered filesystem "
			    "failed: %s", xk_strerror(err));
out:
	if (err)
		report_msg(rep, log ? log->err : "no memory for the log");
	discard_touched(&rc);
	hmap_free(&rc.cmap);
	free(rc.c);
	for (size_t k = 0; k < rc.nin; k++)
		free(rc.in[k].data);
	free(rc.in);
	free(rc.oc);
	free(rc.t);
	free(rc.ops);
	free(rc.grp);
	xk_log_close(log);
	return err;
}
