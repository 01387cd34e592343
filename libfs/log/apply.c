// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 2 of recovery, the part that edits bytes: a buffer, inode or
 * inode-create item applied to the block it targets, on worker threads.
 *
 * recover.c walks the log on one thread and turns every item that is
 * not cancelled into an op: the item, the buffer it edits (already taken
 * from the cache there, since the cache is not thread-safe) and the
 * transaction's LSN.  Here the ops of a batch are grouped by buffer; a
 * buffer's ops run in log order on one thread, different buffers on
 * different threads.  An op depends only on the earlier ops of its own
 * buffer (the v5 LSN test reads the block as the earlier ones left it),
 * so the bytes come out the same for any number of threads.  An op
 * touches nothing but its buffer's data and its own result fields;
 * recover.c then reads the results in log order (counters, dirty marks,
 * failures: the first in log order wins).
 *
 * The rules each item must meet are listed above its function.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/attr.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/symlink.h>

#include "log_priv.h"

#define LOG_NULLLSN	((uint64_t)-1)

/* A failure of op: its sentence, as recover.c's messages read. */
static int
op_fail(struct log_op *op, const char *what, uint64_t v)
{
	char m[320];

	snprintf(m, sizeof(m),
		 "log transaction 0x%x (LSN %u/%u), item %u: %s (0x%llx)",
		 op->tid, xk_lsn_cycle(op->lsn), xk_lsn_block(op->lsn),
		 op->item, what, (unsigned long long)v);
	free(op->msg);
	op->msg = strdup(m);
	op->status = LOG_OP_FAILED;
	op->err = XK_ECORRUPT;
	return XK_ECORRUPT;
}

/*
 * The LSN a block carries, as the kernel reads it before deciding to
 * replay: by the magic of what is on disk now, and only when the block's
 * UUID is this filesystem's.  0 or LOG_NULLLSN means "replay".
 */
static uint64_t
buf_lsn(const struct xk_mount *mp, const uint8_t *b, uint32_t len)
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
	if (memcmp(uuid, mp->meta_uuid, 16) != 0)
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

/*
 * An inode buffer item replays only the di_next_unlinked words it logged
 * (the inode cores go through inode items), then re-checksums each inode
 * it touched.  A logged zero is impossible (it is NULLAGINO or an inode).
 */
static int
apply_inode_buf(const struct xk_mount *mp, struct log_op *op)
{
	const struct xk_log_item *it = op->it;
	const struct xk_buf_log_format *blf = (const void *)it->regions[0].data;
	struct xk_buf *bp = op->bp;
	uint32_t map_size = xk_get_ne32(&blf->blf_map_size);
	uint32_t isize = mp->g.inodesize, n = bp->len / isize;
	uint32_t bit = 0, nbits = 0, ri = 0, roff = 0, rbytes = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t off = i * isize + offsetof(struct xk_dinode,
						    di_next_unlinked);
		uint32_t v;

		while (off >= roff + rbytes) {
			bit += nbits;
			if (!xk_blf_next_run(blf, map_size, &bit, &nbits))
				return 0;
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
			return op_fail(op, "inode buffer logs a zero "
				       "next-unlinked pointer at offset", off);
		xk_put_be32(bp->data + off, v);
		xk_cksum_update(bp->data + i * isize, isize, XK_DINODE_CRC_OFF);
	}
	return 0;
}

/*
 * A buffer item: skipped when the block's own LSN is not older than the
 * transaction (v5 rule); else its logged chunks are copied over the
 * block (an inode buffer: only the next-unlinked words).
 */
static void
apply_buf(const struct xk_mount *mp, struct log_op *op)
{
	const struct xk_log_item *it = op->it;
	const struct xk_buf_log_format *blf = (const void *)it->regions[0].data;
	uint16_t flags = xk_get_ne16(&blf->blf_flags);
	uint32_t map_size = xk_get_ne32(&blf->blf_map_size);
	struct xk_buf *bp = op->bp;
	uint64_t lsn = buf_lsn(mp, bp->data, bp->len);

	if (lsn && lsn != LOG_NULLLSN && lsn >= op->lsn) {
		op->status = LOG_OP_SKIPPED_LSN;
		return;
	}
	if (flags & XK_BLF_INODE_BUF) {
		if (apply_inode_buf(mp, op))
			return;
	} else {
		uint32_t bit = 0, nbits, ri = 1;

		while (xk_blf_next_run(blf, map_size, &bit, &nbits)) {
			if (it->regions[ri].len < nbits << XK_BLF_SHIFT)
				nbits = it->regions[ri].len >> XK_BLF_SHIFT;
			/* Bounds were checked when the item was parsed. */
			memcpy(bp->data + (bit << XK_BLF_SHIFT),
			       it->regions[ri].data, nbits << XK_BLF_SHIFT);
			ri++;
			bit += nbits;
		}
	}
	op->status = LOG_OP_APPLIED;
	op->crc_off = XK_NO_CRC;
	op->lsn_off = 0;
	if (!buf_type_offsets(xk_blft_from_flags(flags), bp->data, bp->len,
			      &op->crc_off, &op->lsn_off)) {
		op->crc_off = XK_NO_CRC;
		op->lsn_off = 0;
	}
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
 * cluster buffer was cancelled (recover.c); 2. the on-disk slot and the
 * logged core both have the inode magic; 3. v5 rule: skipped when the
 * on-disk inode's LSN is not older than the transaction; 4. a regular
 * file's data fork is extents or btree, a directory's extents, btree or
 * local; 5. extent counts do not exceed the block count; 6. the attr
 * fork offset lies inside the literal area; 7. each fork region fits its
 * fork.
 */
static void
apply_inode(const struct xk_mount *mp, struct log_op *op)
{
	const struct xk_log_region *r = op->it->regions;
	struct xk_inode_log_format f;
	struct xk_log_dinode l;
	struct xk_dinode *d;
	uint32_t isize = mp->g.inodesize, lit, dsz, asz, fields;
	uint64_t dlsn, nblocks, next;
	unsigned int fmt;
	uint8_t *fork;

	xk_log_ilf_decode(&r[0], &f);
	fields = f.ilf_fields;
	d = (struct xk_dinode *)(op->bp->data + f.ilf_boffset);
	xk_log_copy_item(&l, sizeof(l), r[1].data, r[1].len);
	if (xk_be16_get(d->di_magic) != XK_DINODE_MAGIC) {
		op_fail(op, "inode slot on disk has a bad magic", f.ilf_ino);
		return;
	}
	if (l.di_magic != XK_DINODE_MAGIC) {
		op_fail(op, "logged inode core has a bad magic", f.ilf_ino);
		return;
	}
	if (l.di_version != 3 || r[1].len != sizeof(l)) {
		op_fail(op, "logged inode core is not a v3 core", f.ilf_ino);
		return;
	}
	dlsn = xk_be64_get(d->di_lsn);
	if (d->di_version >= 3 && dlsn && dlsn != LOG_NULLLSN &&
	    dlsn >= op->lsn) {
		op->status = LOG_OP_SKIPPED_LSN;
		return;
	}
	fmt = (unsigned int)(uint8_t)l.di_format;
	if ((l.di_mode & XK_S_IFMT) == XK_S_IFREG &&
	    fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE) {
		op_fail(op, "regular file with a bad data fork format, inode",
			f.ilf_ino);
		return;
	}
	if ((l.di_mode & XK_S_IFMT) == XK_S_IFDIR &&
	    fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE &&
	    fmt != XK_DINODE_FMT_LOCAL) {
		op_fail(op, "directory with a bad data fork format, inode",
			f.ilf_ino);
		return;
	}
	nblocks = (l.di_flags2 & XK_DIFLAG2_NREXT64) ?
		l.di_big_nextents + l.di_big_anextents :
		(uint64_t)l.di_nextents + l.di_anextents;
	if (nblocks > l.di_nblocks) {
		op_fail(op, "extent counts exceed the block count of inode",
			f.ilf_ino);
		return;
	}
	lit = isize - XK_DINODE_CORE_SIZE;
	if ((uint32_t)l.di_forkoff * 8 >= lit) {
		op_fail(op, "attr fork offset outside the inode, forkoff",
			l.di_forkoff);
		return;
	}
	next = xk_be32_get(d->di_next_unlinked);
	log_dinode_to_disk(&l, d, op->lsn);
	xk_be32_set(&d->di_next_unlinked, (uint32_t)next);
	dsz = l.di_forkoff ? (uint32_t)l.di_forkoff * 8 : lit;
	asz = l.di_forkoff ? lit - dsz : 0;
	fork = (uint8_t *)d + XK_DINODE_CORE_SIZE;
	if (fields & XK_ILOG_DEV)
		xk_put_be32(fork, xk_get_ne32(&f.ilf_u));
	if (fields & XK_ILOG_DFORK) {
		if (fields & XK_ILOG_DBROOT) {
			if (bmbt_to_bmdr(r[2].data, r[2].len, fork, dsz)) {
				op_fail(op, "data fork btree root does not "
					"fit, inode", f.ilf_ino);
				return;
			}
		} else if (r[2].len > dsz) {
			op_fail(op, "data fork region larger than the fork, "
				"inode", f.ilf_ino);
			return;
		} else {
			memcpy(fork, r[2].data, r[2].len);
		}
	}
	if (fields & XK_ILOG_AFORK) {
		const struct xk_log_region *ar =
			&r[(fields & XK_ILOG_DFORK) ? 3 : 2];

		if (fields & XK_ILOG_ABROOT) {
			if (bmbt_to_bmdr(ar->data, ar->len, fork + dsz, asz)) {
				op_fail(op, "attr fork btree root does not "
					"fit, inode", f.ilf_ino);
				return;
			}
		} else if (ar->len > asz) {
			op_fail(op, "attr fork region larger than the fork, "
				"inode", f.ilf_ino);
			return;
		} else {
			memcpy(fork + dsz, ar->data, ar->len);
		}
	}
	xk_cksum_update(d, isize, XK_DINODE_CRC_OFF);
	op->status = LOG_OP_APPLIED;
	op->crc_off = XK_NO_CRC;
	op->lsn_off = 0;
}

/*
 * One cluster of an inode create item: every inode initialised (magic,
 * v3, generation, no next-unlinked, number, UUID) and checksummed.  The
 * buffer was taken zeroed; there is no LSN test.
 */
static void
apply_icreate(const struct xk_mount *mp, struct log_op *op)
{
	const struct xk_log_region *r = &op->it->regions[0];
	uint32_t agno = xk_get_be32(r->data + offsetof(struct xk_icreate_log,
						       icl_ag));
	uint32_t gen = xk_get_be32(r->data + offsetof(struct xk_icreate_log,
						      icl_gen));
	uint32_t isize = mp->g.inodesize;
	struct xk_buf *bp = op->bp;

	if (!op->zeroed)
		memset(bp->data, 0, bp->len);
	for (uint32_t i = 0; i < bp->len / isize; i++) {
		struct xk_dinode *d = (struct xk_dinode *)(bp->data +
							   i * isize);

		xk_be16_set(&d->di_magic, XK_DINODE_MAGIC);
		d->di_version = XK_DINODE_VERSION_3;
		xk_be32_set(&d->di_gen, gen);
		xk_be32_set(&d->di_next_unlinked, XK_NULLAGINO);
		xk_be64_set(&d->di_ino,
			    xk_agino_to_ino(mp, agno, op->agino + i));
		memcpy(d->di_uuid, mp->meta_uuid, 16);
		xk_cksum_update(d, isize, XK_DINODE_CRC_OFF);
	}
	op->status = LOG_OP_APPLIED;
	op->crc_off = XK_NO_CRC;
	op->lsn_off = 0;
}

static void
apply_one(const struct xk_mount *mp, struct log_op *op)
{
	switch (op->kind) {
	case LOG_OP_BUF:
		apply_buf(mp, op);
		break;
	case LOG_OP_INODE:
		apply_inode(mp, op);
		break;
	default:
		apply_icreate(mp, op);
		break;
	}
}

/*
 * The ops of a batch, grouped by buffer.  Buffers are distinct memory
 * even where they overlap on disk (the cache keys them by address and
 * length, and nothing is written before pass 2 ends), so a group is one
 * buffer and its ops in log order.
 */
struct groups {
	const struct xk_mount *mp;
	struct log_op	*ops;
	uint32_t	*order;		/* op indices, group after group */
	/* Group g is order[start[g]] up to order[start[g + 1]]. */
	uint32_t	*start;
};

static void
apply_group(void *ctx, size_t g)
{
	struct groups *gr = ctx;

	for (uint32_t k = gr->start[g]; k < gr->start[g + 1]; k++) {
		struct log_op *op = &gr->ops[gr->order[k]];

		apply_one(gr->mp, op);
		/* A failed op ends its buffer's story: the rest is moot. */
		if (op->status == LOG_OP_FAILED)
			break;
	}
}

int
log_ops_apply(const struct xk_mount *mp, struct log_op *ops, uint32_t n,
	      uint32_t ngroups, unsigned int threads)
{
	struct groups gr = { .mp = mp, .ops = ops };
	uint32_t *fill;

	if (n == 0)
		return 0;
	gr.order = malloc(n * sizeof(*gr.order));
	gr.start = calloc((size_t)ngroups + 1, sizeof(*gr.start));
	fill = calloc((size_t)ngroups + 1, sizeof(*fill));
	if (!gr.order || !gr.start || !fill) {
		free(gr.order);
		free(gr.start);
		free(fill);
		return -ENOMEM;
	}
	/* A counting sort by group keeps log order inside each group. */
	for (uint32_t i = 0; i < n; i++)
		gr.start[ops[i].group + 1]++;
	for (uint32_t g = 0; g < ngroups; g++)
		gr.start[g + 1] += gr.start[g];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t g = ops[i].group;

		gr.order[gr.start[g] + fill[g]++] = i;
	}
	free(fill);
	log_par_for(threads, ngroups, apply_group, &gr);
	free(gr.order);
	free(gr.start);
	return 0;
}
