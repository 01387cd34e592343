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

#define LOG_NULLLSN	((uint64_t)-1)
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

/*
 * The LSN a block carries, as the kernel reads it before deciding to
 * replay: by the magic of what is on disk now, and only when the block's
 * UUID is this filesystem's.  0 or LOG_NULLLSN means "replay".
 */
static uint64_t
buf_lsn(struct rctx *rc, const uint8_t *b, uint32_t len)
{
	const uint8_t *uuid = NULL;
	uint64_t lsn = LOG_NULLLSN;

	if (len < 64)
		return LOG_NULLLSN;
	switch (xk_get_be32(b)) {
	case XK_ABTB_CRC_MAGIC: case XK_ABTC_CRC_MAGIC:
	case XK_RMAP_CRC_MAGIC: case XK_REFC_CRC_MAGIC:
	case XK_FIBT_CRC_MAGIC: case XK_IBT_CRC_MAGIC:
		lsn = xk_get_be64(b + 24);
		uuid = b + 32;
		break;
	case XK_BMAP_CRC_MAGIC:
		if (len < 72)
			return LOG_NULLLSN;
		lsn = xk_get_be64(b + 32);
		uuid = b + 40;
		break;
	case XK_AGF_MAGIC:
		lsn = xk_get_be64(b + offsetof(struct xk_agf, agf_lsn));
		uuid = b + offsetof(struct xk_agf, agf_uuid);
		break;
	case XK_AGFL_MAGIC:
		lsn = xk_get_be64(b + offsetof(struct xk_agfl, agfl_lsn));
		uuid = b + offsetof(struct xk_agfl, agfl_uuid);
		break;
	case XK_AGI_MAGIC:
		lsn = xk_get_be64(b + offsetof(struct xk_agi, agi_lsn));
		uuid = b + offsetof(struct xk_agi, agi_uuid);
		break;
	case XK_SYMLINK_MAGIC:
		lsn = xk_get_be64(b + 48);
		uuid = b + 16;
		break;
	case XK_DIR3_BLOCK_MAGIC: case XK_DIR3_DATA_MAGIC:
	case XK_DIR3_FREE_MAGIC:
		lsn = xk_get_be64(b + 16);
		uuid = b + 24;
		break;
	case XK_ATTR3_RMT_MAGIC:
		/* Written synchronously, never logged in place: replay. */
		return LOG_NULLLSN;
	case XK_SB_MAGIC:
		lsn = xk_get_be64(b + offsetof(struct xk_dsb, sb_lsn));
		uuid = (xk_get_be32(b + offsetof(struct xk_dsb,
						 sb_features_incompat)) &
			XK_SB_FEAT_INCOMPAT_META_UUID) ?
			b + offsetof(struct xk_dsb, sb_meta_uuid) :
			b + offsetof(struct xk_dsb, sb_uuid);
		break;
	default:
		break;
	}
	if (!uuid) {
		switch (xk_get_be16(b + 8)) {
		case XK_DIR3_LEAF1_MAGIC: case XK_DIR3_LEAFN_MAGIC:
		case XK_ATTR3_LEAF_MAGIC: case XK_DA3_NODE_MAGIC:
			lsn = xk_get_be64(b + 24);
			uuid = b + 32;
			break;
		default:
			return LOG_NULLLSN;
		}
	}
	if (memcmp(uuid, rc->mp->meta_uuid, 16) != 0)
		return LOG_NULLLSN;
	return lsn;
}

/*
 * Where a buffer of log type blft keeps its CRC and LSN, if the block
 * really is of that type (the kernel checks the magic before attaching
 * the verifier that stamps and checksums it).  Returns 0 when the block
 * is written as is.
 */
static int
buf_type_offsets(unsigned int blft, const uint8_t *b, uint32_t len,
		 size_t *crc_off, size_t *lsn_off)
{
	uint32_t m32 = xk_get_be32(b);
	uint16_t m16 = xk_get_be16(b + 8);
	const struct xk_buf_ops *ops = NULL;

	switch (blft) {
	case XK_BLFT_BTREE_BUF:
		if (m32 == XK_BMAP_CRC_MAGIC) {
			*crc_off = offsetof(struct xk_btree_lblock, bb_crc);
			*lsn_off = offsetof(struct xk_btree_lblock, bb_lsn);
			return len >= sizeof(struct xk_btree_lblock);
		}
		if (m32 == XK_ABTB_CRC_MAGIC || m32 == XK_ABTC_CRC_MAGIC ||
		    m32 == XK_IBT_CRC_MAGIC || m32 == XK_FIBT_CRC_MAGIC ||
		    m32 == XK_RMAP_CRC_MAGIC || m32 == XK_REFC_CRC_MAGIC) {
			*crc_off = offsetof(struct xk_btree_sblock, bb_crc);
			*lsn_off = offsetof(struct xk_btree_sblock, bb_lsn);
			return len >= sizeof(struct xk_btree_sblock);
		}
		break;
	case XK_BLFT_AGF_BUF:
		ops = m32 == XK_AGF_MAGIC ? &xk_agf_buf_ops : NULL;
		break;
	case XK_BLFT_AGFL_BUF:
		ops = m32 == XK_AGFL_MAGIC ? &xk_agfl_buf_ops : NULL;
		break;
	case XK_BLFT_AGI_BUF:
		ops = m32 == XK_AGI_MAGIC ? &xk_agi_buf_ops : NULL;
		break;
	case XK_BLFT_SB_BUF:
		ops = m32 == XK_SB_MAGIC ? &xk_sb_buf_ops : NULL;
		break;
	case XK_BLFT_SYMLINK_BUF:
		ops = m32 == XK_SYMLINK_MAGIC ? &xk_symlink_buf_ops : NULL;
		break;
	case XK_BLFT_DIR_BLOCK_BUF:
		ops = m32 == XK_DIR3_BLOCK_MAGIC ? &xk_dir3_block_buf_ops
						 : NULL;
		break;
	case XK_BLFT_DIR_DATA_BUF:
		ops = m32 == XK_DIR3_DATA_MAGIC ? &xk_dir3_data_buf_ops : NULL;
		break;
	case XK_BLFT_DIR_FREE_BUF:
		ops = m32 == XK_DIR3_FREE_MAGIC ? &xk_dir3_free_buf_ops : NULL;
		break;
	case XK_BLFT_DIR_LEAF1_BUF:
		ops = m16 == XK_DIR3_LEAF1_MAGIC ? &xk_dir3_leaf1_buf_ops
						 : NULL;
		break;
	case XK_BLFT_DIR_LEAFN_BUF:
		ops = m16 == XK_DIR3_LEAFN_MAGIC ? &xk_dir3_leafn_buf_ops
						 : NULL;
		break;
	case XK_BLFT_DA_NODE_BUF:
		ops = m16 == XK_DA3_NODE_MAGIC ? &xk_da3_node_buf_ops : NULL;
		break;
	case XK_BLFT_ATTR_LEAF_BUF:
		ops = m16 == XK_ATTR3_LEAF_MAGIC ? &xk_attr3_leaf_buf_ops
						 : NULL;
		break;
	case XK_BLFT_ATTR_RMT_BUF:
		ops = m32 == XK_ATTR3_RMT_MAGIC ? &xk_attr3_rmt_buf_ops : NULL;
		break;
	default:
		/* Inode clusters: each inode has its own CRC, kept as is. */
		break;
	}
	if (!ops || ops->crc_off == XK_NO_CRC || ops->crc_off + 4 > len ||
	    ops->lsn_off + 8 > len)
		return 0;
	*crc_off = ops->crc_off;
	*lsn_off = ops->lsn_off;
	return 1;
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

/* Release a buffer; after a failure drop the half-edited copy too. */
static void
release_discard(struct xk_buf *bp, int err)
{
	struct xk_mount *mp = bp->mp;
	uint64_t daddr = bp->daddr;
	uint32_t len = bp->len;

	xk_buf_release(bp);
	if (err)
		xk_buf_invalidate(mp, daddr, len);
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
 * An inode buffer item replays only the di_next_unlinked words it logged
 * (the inode cores go through inode items), then re-checksums each inode
 * it touched.  A logged zero is impossible (it is NULLAGINO or an inode).
 */
static int
replay_inode_buf(struct rctx *rc, const struct xk_log_trans *tr, uint32_t ii,
		 const struct xk_log_item *it, struct xk_buf *bp)
{
	const struct xk_buf_log_format *blf = (const void *)it->regions[0].data;
	uint32_t map_size = xk_get_ne32(&blf->blf_map_size);
	uint32_t isize = rc->mp->g.inodesize, n = bp->len / isize;
	uint32_t bit = 0, nbits = 0, ri = 0, roff = 0, rbytes = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t off = i * isize + offsetof(struct xk_dinode,
						    di_next_unlinked);
		uint32_t v;

		while (off >= roff + rbytes) {
			bit += nbits;
			while (bit < map_size * XK_BLF_NBWORD &&
			       !xk_blf_test_bit(blf, bit))
				bit++;
			if (bit >= map_size * XK_BLF_NBWORD)
				return 0;
			nbits = 0;
			while (bit + nbits < map_size * XK_BLF_NBWORD &&
			       xk_blf_test_bit(blf, bit + nbits))
				nbits++;
			ri++;
			if (it->regions[ri].len < nbits << XK_BLF_SHIFT)
				nbits = it->regions[ri].len >> XK_BLF_SHIFT;
			roff = bit << XK_BLF_SHIFT;
			rbytes = nbits << XK_BLF_SHIFT;
		}
		if (off < roff)
			continue;
		v = xk_get_be32(it->regions[ri].data + off - roff);
		if (v == 0)
			return rfail(rc, tr, ii, "inode buffer logs a zero "
				     "next-unlinked pointer at offset", off);
		xk_put_be32(bp->data + off, v);
		xk_cksum_update(bp->data + i * isize, isize, XK_DINODE_CRC_OFF);
	}
	return 0;
}

static int
replay_buf(struct rctx *rc, const struct xk_log_trans *tr, uint32_t ii,
	   const struct xk_log_item *it)
{
	const struct xk_buf_log_format *blf = (const void *)it->regions[0].data;
	uint16_t flags = xk_get_ne16(&blf->blf_flags);
	uint64_t blkno = xk_get_ne64(&blf->blf_blkno);
	uint32_t len = xk_get_ne16(&blf->blf_len);
	uint32_t map_size = xk_get_ne32(&blf->blf_map_size);
	size_t crc_off = 0, lsn_off = 0;
	struct cancel *c = cancel_find(rc, blkno, len);
	struct xk_buf *bp;
	uint64_t lsn;
	int err;

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
	err = read_raw(rc, blkno, len << XK_BBSHIFT, &bp);
	if (err)
		return err;
	lsn = buf_lsn(rc, bp->data, bp->len);
	if (lsn && lsn != LOG_NULLLSN && lsn >= tr->lsn) {
		rc->rep->bufs_skipped_lsn++;
		xk_buf_release(bp);
		return 0;
	}
	if (flags & XK_BLF_INODE_BUF) {
		err = replay_inode_buf(rc, tr, ii, it, bp);
		if (err) {
			release_discard(bp, err);
			return err;
		}
	} else {
		uint32_t bit = 0, nbits, ri = 1;

		for (;;) {
			while (bit < map_size * XK_BLF_NBWORD &&
			       !xk_blf_test_bit(blf, bit))
				bit++;
			if (bit >= map_size * XK_BLF_NBWORD)
				break;
			nbits = 0;
			while (bit + nbits < map_size * XK_BLF_NBWORD &&
			       xk_blf_test_bit(blf, bit + nbits))
				nbits++;
			if (it->regions[ri].len < nbits << XK_BLF_SHIFT)
				nbits = it->regions[ri].len >> XK_BLF_SHIFT;
			/* Bounds were checked when the item was parsed. */
			memcpy(bp->data + (bit << XK_BLF_SHIFT),
			       it->regions[ri].data, nbits << XK_BLF_SHIFT);
			ri++;
			bit += nbits;
		}
	}
	rc->rep->bufs_replayed++;
	xk_buf_dirty(bp);
	if (!buf_type_offsets(xk_blft_from_flags(flags), bp->data, bp->len,
			      &crc_off, &lsn_off))
		crc_off = XK_NO_CRC;
	return touch(rc, bp, tr->lsn, crc_off, lsn_off);
}

/* A logged timestamp, converted to the on-disk big-endian form. */
static void
put_ts(uint8_t *dst, uint64_t raw, int bigtime)
{
	struct xk_log_legacy_timestamp lt;

	if (bigtime) {
		xk_put_be64(dst, raw);
		return;
	}
	memcpy(&lt, &raw, sizeof(lt));
	xk_put_be32(dst, (uint32_t)lt.t_sec);
	xk_put_be32(dst + 4, (uint32_t)lt.t_nsec);
}

/* The kernel's conversion of a logged core to the on-disk dinode. */
static void
log_dinode_to_disk(const struct xk_log_dinode *l, struct xk_dinode *d,
		   uint64_t lsn)
{
	int bigtime = (l->di_flags2 & XK_DIFLAG2_BIGTIME) != 0;

	xk_be16_set(&d->di_magic, l->di_magic);
	xk_be16_set(&d->di_mode, l->di_mode);
	d->di_version = (uint8_t)l->di_version;
	d->di_format = (uint8_t)l->di_format;
	xk_be16_set(&d->di_onlink, l->di_metatype);
	xk_be32_set(&d->di_uid, l->di_uid);
	xk_be32_set(&d->di_gid, l->di_gid);
	xk_be32_set(&d->di_nlink, l->di_nlink);
	xk_be16_set(&d->di_projid_lo, l->di_projid_lo);
	xk_be16_set(&d->di_projid_hi, l->di_projid_hi);
	put_ts((uint8_t *)&d->di_atime, l->di_atime, bigtime);
	put_ts((uint8_t *)&d->di_mtime, l->di_mtime, bigtime);
	put_ts((uint8_t *)&d->di_ctime, l->di_ctime, bigtime);
	xk_be64_set(&d->di_size, (uint64_t)l->di_size);
	xk_be64_set(&d->di_nblocks, l->di_nblocks);
	xk_be32_set(&d->di_extsize, l->di_extsize);
	d->di_forkoff = l->di_forkoff;
	d->di_aformat = (uint8_t)l->di_aformat;
	xk_be32_set(&d->di_dmevmask, l->di_dmevmask);
	xk_be16_set(&d->di_dmstate, l->di_dmstate);
	xk_be16_set(&d->di_flags, l->di_flags);
	xk_be32_set(&d->di_gen, l->di_gen);
	xk_be64_set(&d->di_changecount, l->di_changecount);
	put_ts((uint8_t *)&d->di_crtime, l->di_crtime, bigtime);
	xk_be64_set(&d->di_flags2, l->di_flags2);
	xk_be32_set(&d->di_cowextsize, l->di_cowextsize);
	xk_be64_set(&d->di_ino, l->di_ino);
	xk_be64_set(&d->di_lsn, lsn);
	memset(d->di_pad2, 0, sizeof(d->di_pad2));
	memcpy(d->di_uuid, l->di_uuid, sizeof(d->di_uuid));
	if (l->di_flags2 & XK_DIFLAG2_NREXT64) {
		xk_be64_set(&d->di_big_nextents, l->di_big_nextents);
		xk_be32_set(&d->di_big_anextents, l->di_big_anextents);
		xk_be16_set(&d->di_nrext64_pad, 0);
	} else {
		xk_be64_set(&d->di_v3_pad, 0);
		xk_be32_set(&d->di_nextents, l->di_nextents);
		xk_be16_set(&d->di_anextents, l->di_anextents);
	}
}

/*
 * A logged btree root (long-format block header, keys, pointers laid
 * out for a block of rlen bytes) converted to the on-disk root of dlen
 * bytes.  Returns 0 or -1 when numrecs fits neither.
 */
static int
bmbt_to_bmdr(const uint8_t *r, uint32_t rlen, uint8_t *d, uint32_t dlen)
{
	uint32_t hdr = sizeof(struct xk_btree_lblock);
	uint32_t rmax, dmax, nrec;

	if (rlen < hdr || dlen < 4)
		return -1;
	rmax = (rlen - hdr) / 16;
	dmax = (dlen - 4) / 16;
	nrec = xk_get_be16(r + 6);
	if (nrec > rmax || nrec > dmax)
		return -1;
	xk_put_be16(d, xk_get_be16(r + 4));
	xk_put_be16(d + 2, (uint16_t)nrec);
	memcpy(d + 4, r + hdr, (size_t)nrec * 8);
	memcpy(d + 4 + (size_t)dmax * 8, r + hdr + (size_t)rmax * 8,
	       (size_t)nrec * 8);
	return 0;
}

/*
 * Inode item rules (beyond the parse checks): 1. skipped when its
 * cluster buffer was cancelled; 2. the on-disk slot and the logged core
 * both have the inode magic; 3. v5 rule: skipped when the on-disk inode's
 * LSN is not older than the transaction; 4. a regular file's data fork
 * is extents or btree, a directory's extents, btree or local; 5. extent
 * counts do not exceed the block count; 6. the attr fork offset lies
 * inside the literal area; 7. each fork region fits its fork.
 */
static int
replay_inode(struct rctx *rc, const struct xk_log_trans *tr, uint32_t ii,
	     const struct xk_log_item *it)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_log_region *r = it->regions;
	struct xk_inode_log_format f;
	struct xk_log_dinode l;
	struct xk_dinode *d;
	struct xk_buf *bp;
	uint32_t isize = mp->g.inodesize, lit, dsz, asz, fields;
	uint64_t dlsn, nblocks, next;
	unsigned int fmt;
	uint8_t *fork;
	int err;

	xk_log_ilf_decode(&r[0], &f);
	fields = f.ilf_fields;
	if (cancel_find(rc, (uint64_t)f.ilf_blkno, (uint32_t)f.ilf_len)) {
		rc->rep->inodes_cancelled++;
		return 0;
	}
	err = read_raw(rc, (uint64_t)f.ilf_blkno,
		       (uint32_t)f.ilf_len << XK_BBSHIFT, &bp);
	if (err)
		return err;
	d = (struct xk_dinode *)(bp->data + f.ilf_boffset);
	xk_log_copy_item(&l, sizeof(l), r[1].data, r[1].len);
	err = 0;
	if (xk_be16_get(d->di_magic) != XK_DINODE_MAGIC)
		err = rfail(rc, tr, ii, "inode slot on disk has a bad magic",
			    f.ilf_ino);
	else if (l.di_magic != XK_DINODE_MAGIC)
		err = rfail(rc, tr, ii, "logged inode core has a bad magic",
			    f.ilf_ino);
	else if (l.di_version != 3 || r[1].len != sizeof(l))
		err = rfail(rc, tr, ii, "logged inode core is not a v3 core",
			    f.ilf_ino);
	if (err)
		goto out;
	dlsn = xk_be64_get(d->di_lsn);
	if (d->di_version >= 3 && dlsn && dlsn != LOG_NULLLSN &&
	    dlsn >= tr->lsn) {
		rc->rep->inodes_skipped_lsn++;
		goto out;
	}
	fmt = (unsigned int)(uint8_t)l.di_format;
	if ((l.di_mode & XK_S_IFMT) == XK_S_IFREG &&
	    fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE) {
		err = rfail(rc, tr, ii, "regular file with a bad data fork "
			    "format, inode", f.ilf_ino);
		goto out;
	}
	if ((l.di_mode & XK_S_IFMT) == XK_S_IFDIR &&
	    fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE &&
	    fmt != XK_DINODE_FMT_LOCAL) {
		err = rfail(rc, tr, ii, "directory with a bad data fork "
			    "format, inode", f.ilf_ino);
		goto out;
	}
	nblocks = (l.di_flags2 & XK_DIFLAG2_NREXT64) ?
		l.di_big_nextents + l.di_big_anextents :
		(uint64_t)l.di_nextents + l.di_anextents;
	if (nblocks > l.di_nblocks) {
		err = rfail(rc, tr, ii, "extent counts exceed the block count "
			    "of inode", f.ilf_ino);
		goto out;
	}
	lit = isize - XK_DINODE_CORE_SIZE;
	if ((uint32_t)l.di_forkoff * 8 >= lit) {
		err = rfail(rc, tr, ii, "attr fork offset outside the inode, "
			    "forkoff", l.di_forkoff);
		goto out;
	}
	next = xk_be32_get(d->di_next_unlinked);
	log_dinode_to_disk(&l, d, tr->lsn);
	xk_be32_set(&d->di_next_unlinked, (uint32_t)next);
	dsz = l.di_forkoff ? (uint32_t)l.di_forkoff * 8 : lit;
	asz = l.di_forkoff ? lit - dsz : 0;
	fork = (uint8_t *)d + XK_DINODE_CORE_SIZE;
	if (fields & XK_ILOG_DEV)
		xk_put_be32(fork, xk_get_ne32(&f.ilf_u));
	if (fields & XK_ILOG_DFORK) {
		if (fields & XK_ILOG_DBROOT) {
			if (bmbt_to_bmdr(r[2].data, r[2].len, fork, dsz))
				err = rfail(rc, tr, ii, "data fork btree root "
					    "does not fit, inode", f.ilf_ino);
		} else if (r[2].len > dsz) {
			err = rfail(rc, tr, ii, "data fork region larger than "
				    "the fork, inode", f.ilf_ino);
		} else {
			memcpy(fork, r[2].data, r[2].len);
		}
	}
	if (!err && (fields & XK_ILOG_AFORK)) {
		const struct xk_log_region *ar =
			&r[(fields & XK_ILOG_DFORK) ? 3 : 2];

		if (fields & XK_ILOG_ABROOT) {
			if (bmbt_to_bmdr(ar->data, ar->len, fork + dsz, asz))
				err = rfail(rc, tr, ii, "attr fork btree root "
					    "does not fit, inode", f.ilf_ino);
		} else if (ar->len > asz) {
			err = rfail(rc, tr, ii, "attr fork region larger than "
				    "the fork, inode", f.ilf_ino);
		} else {
			memcpy(fork + dsz, ar->data, ar->len);
		}
	}
	if (err)
		goto out;
	xk_cksum_update(d, isize, XK_DINODE_CRC_OFF);
	xk_buf_dirty(bp);
	rc->rep->inodes_replayed++;
	if (fields & (XK_ILOG_DOWNER | XK_ILOG_AOWNER)) {
		struct owner_change *oc = grow(rc->oc, &rc->capoc, rc->noc,
					       sizeof(*oc));

		if (!oc) {
			release_discard(bp, -ENOMEM);
			return -ENOMEM;
		}
		rc->oc = oc;
		rc->oc[rc->noc++] = (struct owner_change){
			f.ilf_ino, fields & (XK_ILOG_DOWNER | XK_ILOG_AOWNER) };
	}
	return touch(rc, bp, tr->lsn, XK_NO_CRC, 0);
out:
	release_discard(bp, err);
	return err;
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
replay_icreate(struct rctx *rc, const struct xk_log_trans *tr, uint32_t ii,
	       const struct xk_log_item *it)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_geom *g = &mp->g;
	struct xk_icreate_log ic;
	uint32_t agno, agbno, count, length, isize, gen, nbufs, ncancel = 0;
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
	gen = xk_be32_get(ic.icl_gen);
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
		uint32_t agino = cb << g->inopblog;
		struct xk_buf *bp;
		int err = read_raw(rc, xk_agb_to_daddr(mp, agno, cb), cbytes,
				   &bp);

		if (err)
			return err;
		memset(bp->data, 0, bp->len);
		for (uint32_t i = 0; i < cbytes / isize; i++) {
			struct xk_dinode *d =
				(struct xk_dinode *)(bp->data + i * isize);

			xk_be16_set(&d->di_magic, XK_DINODE_MAGIC);
			d->di_version = XK_DINODE_VERSION_3;
			xk_be32_set(&d->di_gen, gen);
			xk_be32_set(&d->di_next_unlinked, XK_NULLAGINO);
			xk_be64_set(&d->di_ino,
				    xk_agino_to_ino(mp, agno, agino + i));
			memcpy(d->di_uuid, mp->meta_uuid, 16);
			xk_cksum_update(d, isize, XK_DINODE_CRC_OFF);
		}
		xk_buf_dirty(bp);
		err = touch(rc, bp, tr->lsn, XK_NO_CRC, 0);
		if (err)
			return err;
	}
	rc->rep->icreates_replayed++;
	return 0;
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
				err = replay_buf(rc, tr, i, it);
			else if (it->type == XK_LI_INODE)
				err = replay_inode(rc, tr, i, it);
			else if (it->type == XK_LI_ICREATE)
				err = replay_icreate(rc, tr, i, it);
		}
	}
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
xk_log_recover(struct xk_mount *mp, unsigned int flags,
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
	err = xk_log_walk(log, &p2, &rc);
	if (err) {
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
	if (!err)
		err = xk_log_write_clean(log, log->st.head_blk,
					 log->st.head_cycle, 0);
	if (!err)
		err = xk_dev_sync(mp->dev);
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
	xk_log_close(log);
	return err;
}
