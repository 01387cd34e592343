// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Superblock: decode/encode between the on-disk and in-core forms, the
 * sanity rules for hostile values, and the buffer verifier used for the
 * primary and every secondary copy.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xfskit/errors.h>
#include <xfskit/format/ag.h>
#include <xfskit/format/log.h>
#include <xfskit/format/rtgroup.h>
#include <xfskit/rtbitmap.h>
#include <xfskit/format/sb.h>
#include <xfskit/libfs.h>
#include <xfskit/logv.h>

#define DEC16(f) to->f = xk_be16_get(from->sb_##f)
#define DEC32(f) to->f = xk_be32_get(from->sb_##f)
#define DEC64(f) to->f = xk_be64_get(from->sb_##f)
#define ENC16(f) xk_be16_set(&to->sb_##f, from->f)
#define ENC32(f) xk_be32_set(&to->sb_##f, from->f)
#define ENC64(f) xk_be64_set(&to->sb_##f, from->f)
#define COPY8(f) to->f = from->sb_##f

void
xk_sb_decode(struct xk_sb *to, const struct xk_dsb *from)
{
	DEC32(magicnum); DEC32(blocksize); DEC64(dblocks); DEC64(rblocks);
	DEC64(rextents); memcpy(to->uuid, from->sb_uuid, 16);
	DEC64(logstart); DEC64(rootino); DEC64(rbmino); DEC64(rsumino);
	DEC32(rextsize); DEC32(agblocks); DEC32(agcount); DEC32(rbmblocks);
	DEC32(logblocks); DEC16(versionnum); DEC16(sectsize);
	DEC16(inodesize); DEC16(inopblock);
	memcpy(to->fname, from->sb_fname, 12);
	COPY8(blocklog); COPY8(sectlog); COPY8(inodelog); COPY8(inopblog);
	COPY8(agblklog); COPY8(rextslog); COPY8(inprogress); COPY8(imax_pct);
	DEC64(icount); DEC64(ifree); DEC64(fdblocks); DEC64(frextents);
	DEC64(uquotino); DEC64(gquotino); DEC16(qflags); COPY8(flags);
	COPY8(shared_vn); DEC32(inoalignmt); DEC32(unit); DEC32(width);
	COPY8(dirblklog); COPY8(logsectlog); DEC16(logsectsize);
	DEC32(logsunit); DEC32(features2); DEC32(bad_features2);
	DEC32(features_compat); DEC32(features_ro_compat);
	DEC32(features_incompat); DEC32(features_log_incompat);
	to->crc = xk_get_le32(from->sb_crc);
	DEC32(spino_align); DEC64(pquotino); DEC64(lsn);
	memcpy(to->meta_uuid, from->sb_meta_uuid, 16);
	DEC64(metadirino); DEC32(rgcount); DEC32(rgextents);
	COPY8(rgblklog); memcpy(to->pad, from->sb_pad, 7);
}

#define COPYB(f) to->sb_##f = from->f

void
xk_sb_encode(struct xk_dsb *to, const struct xk_sb *from)
{
	ENC32(magicnum); ENC32(blocksize); ENC64(dblocks); ENC64(rblocks);
	ENC64(rextents); memcpy(to->sb_uuid, from->uuid, 16);
	ENC64(logstart); ENC64(rootino); ENC64(rbmino); ENC64(rsumino);
	ENC32(rextsize); ENC32(agblocks); ENC32(agcount); ENC32(rbmblocks);
	ENC32(logblocks); ENC16(versionnum); ENC16(sectsize);
	ENC16(inodesize); ENC16(inopblock);
	memcpy(to->sb_fname, from->fname, 12);
	COPYB(blocklog); COPYB(sectlog); COPYB(inodelog); COPYB(inopblog);
	COPYB(agblklog); COPYB(rextslog); COPYB(inprogress); COPYB(imax_pct);
	ENC64(icount); ENC64(ifree); ENC64(fdblocks); ENC64(frextents);
	ENC64(uquotino); ENC64(gquotino); ENC16(qflags); COPYB(flags);
	COPYB(shared_vn); ENC32(inoalignmt); ENC32(unit); ENC32(width);
	COPYB(dirblklog); COPYB(logsectlog); ENC16(logsectsize);
	ENC32(logsunit); ENC32(features2); ENC32(bad_features2);
	ENC32(features_compat); ENC32(features_ro_compat);
	ENC32(features_incompat); ENC32(features_log_incompat);
	xk_put_le32(to->sb_crc, from->crc);
	ENC32(spino_align); ENC64(pquotino); ENC64(lsn);
	memcpy(to->sb_meta_uuid, from->meta_uuid, 16);
	ENC64(metadirino); ENC32(rgcount); ENC32(rgextents);
	COPYB(rgblklog); memcpy(to->sb_pad, from->pad, 7);
}

static int
is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static unsigned int
log2_ceil(uint64_t x)
{
	unsigned int l = 0;

	while ((1ULL << l) < x)
		l++;
	return l;
}

#define CHECK_VAL(cond, check, exp, got) \
	do { if (!(cond)) return xk_fail_val(f, check, exp, got); } while (0)

/*
 * The realtime group geometry of a METADIR superblock, as the kernel
 * checks it (with or without a realtime volume): the padding zero; a
 * group of at least 2 extents and at most 2^31 - 1 blocks; rgcount the
 * groups that cover rextents; exchange-range on; rgblklog the rounded-up
 * log2 of a group's blocks.  rbmblocks (per group) is checked with the
 * rest of the realtime geometry.
 */
static int
rtgroups_check(const struct xk_sb *sb, struct xk_fail *f)
{
	uint64_t rgblocks = (uint64_t)sb->rgextents * sb->rextsize;
	uint64_t groups;

	for (size_t i = 0; i < sizeof(sb->pad); i++)
		CHECK_VAL(!sb->pad[i], "pad", 0, sb->pad[i]);
	CHECK_VAL(sb->rextsize && sb->rgextents <= XK_MAX_RGBLOCKS /
		  sb->rextsize, "rgextents", XK_MAX_RGBLOCKS /
		  (sb->rextsize ? sb->rextsize : 1), sb->rgextents);
	CHECK_VAL(sb->rgextents >= XK_MIN_RGEXTENTS, "rgextents",
		  XK_MIN_RGEXTENTS, sb->rgextents);
	groups = (sb->rextents + sb->rgextents - 1) / sb->rgextents;
	CHECK_VAL(sb->rgcount == groups, "rgcount", groups, sb->rgcount);
	if (!xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_EXCHRANGE))
		return xk_fail_set(f, "features_incompat", "realtime groups "
				   "(metadir) need the exchange-range feature "
				   "(0x%x), which is off",
				   XK_SB_FEAT_INCOMPAT_EXCHRANGE);
	CHECK_VAL(sb->rgblklog == log2_ceil(rgblocks), "rgblklog",
		  log2_ceil(rgblocks), sb->rgblklog);
	return 0;
}

/*
 * The rules, in order:
 *  1. magic is "XFSB"; 2. version 5 (v4 and older are unsupported);
 *  3. no unknown incompat features; 4. block size a power of two in
 *  512..64k and blocklog agreeing; 5. sector size likewise (512..32k,
 *  not above the block size); 6. inode size 256..2048, a power of two,
 *  dividing the block, with inopblock/inopblog agreeing; 7. AG size at
 *  least 64 blocks and at most 1 TiB, agblklog its rounded-up log;
 *  8. agcount at least 1 and dblocks inside (agcount-1)*agblocks+64 ..
 *  agcount*agblocks; 9. the filesystem fits the device; 10. the internal
 *  log lies inside one AG, its sector and stripe unit fields sane;
 *  11. the root inode is null or a possible inode;
 *  12. imax_pct at most 100, shared_vn 0 (the kernel's "SB sanity check"
 *  refuses any other), and realtime geometry consistent (all
 *  zero without a realtime section); 13. directory blocks at most 64k;
 *  14. alignment fields (inoalignmt, spino_align, unit/width) sane;
 *  15. with the metadata tree (METADIR), its root a possible inode and
 *  the realtime group geometry consistent (rtgroups_check; rbmblocks is
 *  then per group, of blocks less their header).
 */
int
xk_sb_check(const struct xk_sb *sb, uint64_t devsize, struct xk_fail *f)
{
	uint64_t agblocks = sb->agblocks, agcount = sb->agcount;

	f->structure = "superblock";
	if (sb->magicnum != XK_SB_MAGIC) {
		xk_fail_val(f, "magic", XK_SB_MAGIC, sb->magicnum);
		return XK_ENOTXFS;
	}
	if (xk_sb_version(sb) != XK_SB_VERSION_5) {
		if (xk_sb_version(sb) >= 1 && xk_sb_version(sb) <= 4) {
			xk_fail_set(f, "version", "version %d filesystem: "
				    "only v5 (CRC-enabled) XFS is supported",
				    xk_sb_version(sb));
			return XK_EUNSUPP;
		}
		return xk_fail_val(f, "version", XK_SB_VERSION_5,
				   xk_sb_version(sb));
	}
	if (sb->features_incompat & ~XK_SB_FEAT_INCOMPAT_KNOWN) {
		xk_fail_set(f, "features_incompat",
			    "unknown incompatible features 0x%x",
			    sb->features_incompat &
			    ~XK_SB_FEAT_INCOMPAT_KNOWN);
		return XK_EUNSUPP;
	}
	CHECK_VAL(is_pow2(sb->blocksize) && sb->blocksize >= 512 &&
		  sb->blocksize <= 65536, "blocksize", 4096, sb->blocksize);
	CHECK_VAL(sb->blocklog <= 16 && (1u << sb->blocklog) == sb->blocksize,
		  "blocklog", log2_ceil(sb->blocksize), sb->blocklog);
	CHECK_VAL(is_pow2(sb->sectsize) && sb->sectsize >= 512 &&
		  sb->sectsize <= 32768 && sb->sectsize <= sb->blocksize,
		  "sectsize", 512, sb->sectsize);
	CHECK_VAL(sb->sectlog <= 15 && (1u << sb->sectlog) == sb->sectsize,
		  "sectlog", log2_ceil(sb->sectsize), sb->sectlog);
	CHECK_VAL(is_pow2(sb->inodesize) && sb->inodesize >= 512 &&
		  sb->inodesize <= 2048 && sb->inodesize <= sb->blocksize,
		  "inodesize", 512, sb->inodesize);
	CHECK_VAL(sb->inodelog <= 11 && (1u << sb->inodelog) == sb->inodesize,
		  "inodelog", log2_ceil(sb->inodesize), sb->inodelog);
	CHECK_VAL(sb->inopblock == sb->blocksize / sb->inodesize,
		  "inopblock", sb->blocksize / sb->inodesize, sb->inopblock);
	CHECK_VAL(sb->inopblog == sb->blocklog - sb->inodelog, "inopblog",
		  sb->blocklog - sb->inodelog, sb->inopblog);
	CHECK_VAL(agblocks >= XK_MIN_AG_BLOCKS &&
		  agblocks * sb->blocksize <= XK_MAX_AG_BYTES &&
		  agblocks <= 0x7fffffffu, "agblocks", XK_MIN_AG_BLOCKS,
		  agblocks);
	CHECK_VAL(sb->agblklog == log2_ceil(agblocks), "agblklog",
		  log2_ceil(agblocks), sb->agblklog);
	CHECK_VAL(agcount >= 1, "agcount", 1, agcount);
	CHECK_VAL(sb->agblklog + sb->blocklog + log2_ceil(agcount) <= 63 &&
		  sb->agblklog + sb->inopblog <= 32, "agcount",
		  1, agcount);
	CHECK_VAL(sb->dblocks <= agcount * agblocks, "dblocks",
		  agcount * agblocks, sb->dblocks);
	CHECK_VAL(sb->dblocks >= (agcount - 1) * agblocks + XK_MIN_AG_BLOCKS,
		  "dblocks", (agcount - 1) * agblocks + XK_MIN_AG_BLOCKS,
		  sb->dblocks);
	if (devsize && sb->dblocks * sb->blocksize > devsize) {
		xk_fail_set(f, "size", "filesystem needs %llu bytes but the "
			    "device holds only %llu (truncated image?)",
			    (unsigned long long)(sb->dblocks * sb->blocksize),
			    (unsigned long long)devsize);
		return XK_ETRUNC;
	}
	/* logstart 0: the log is on a device of its own (mkfs -l logdev=). */
	if (sb->logstart == 0) {
		if (sb->logblocks < 64)
			return xk_fail_set(f, "log", "external log of %u "
					   "blocks is too small",
					   sb->logblocks);
	} else {
		uint64_t agno = sb->logstart >> sb->agblklog;
		uint64_t agbno = sb->logstart & ((1ULL << sb->agblklog) - 1);

		if (agno >= agcount || agbno >= agblocks ||
		    sb->logblocks < 64 ||
		    agbno + sb->logblocks > agblocks ||
		    agno * agblocks + agbno + sb->logblocks > sb->dblocks)
			return xk_fail_set(f, "log", "log of %u blocks at "
					   "block %llu lies outside the "
					   "filesystem", sb->logblocks,
					   (unsigned long long)sb->logstart);
	}
	/*
	 * Log sector fields only with the sector feature bit (xfs_repair:
	 * "bad log/data device sector size fields"); a log stripe unit of
	 * 0 or 1 (none), or whole blocks up to the largest log record,
	 * 256 KiB (xfs_repair: "inconsistent log geometry").
	 */
	if (!(sb->versionnum & XK_SB_VERSION_SECTORBIT) &&
	    (sb->logsectsize || sb->logsectlog))
		return xk_fail_set(f, "logsectsize", "log sector fields "
				   "%u and %u without the sector feature",
				   sb->logsectsize, sb->logsectlog);
	CHECK_VAL(sb->logsectsize == 0 ||
		  (is_pow2(sb->logsectsize) && sb->logsectsize >= 512 &&
		   sb->logsectsize <= 32768 && sb->logsectlog <= 15 &&
		   (1u << sb->logsectlog) == sb->logsectsize),
		  "logsectsize", 512, sb->logsectsize);
	CHECK_VAL(sb->logsunit <= 1 || (sb->logsunit % sb->blocksize == 0 &&
		  sb->logsunit <= XK_LOG_MAX_RECORD_BSIZE), "logsunit", 1,
		  sb->logsunit);
	{
		uint64_t agno = sb->rootino >> (sb->agblklog + sb->inopblog);
		uint64_t agino = sb->rootino &
			((1ULL << (sb->agblklog + sb->inopblog)) - 1);

		/* Secondaries written by mkfs may carry a null root. */
		CHECK_VAL(sb->rootino == XK_NULLFSINO ||
			  (agno < agcount &&
			   (agino >> sb->inopblog) < agblocks),
			  "rootino", 0, sb->rootino);
	}
	CHECK_VAL(sb->imax_pct <= 100, "imax_pct", 25, sb->imax_pct);
	CHECK_VAL(sb->shared_vn == 0, "shared_vn", 0, sb->shared_vn);
	/* Realtime geometry: all zero without a realtime section. */
	if ((uint64_t)sb->rextsize * sb->blocksize < 4096 ||
	    (uint64_t)sb->rextsize * sb->blocksize > (1ULL << 30))
		return xk_fail_set(f, "rextsize", "realtime extent of %u "
				   "blocks is outside 4 KiB..1 GiB",
				   sb->rextsize);
	if (sb->rblocks == 0) {
		CHECK_VAL(sb->rextents == 0, "rextents", 0, sb->rextents);
		CHECK_VAL(sb->rbmblocks == 0, "rbmblocks", 0, sb->rbmblocks);
		CHECK_VAL(sb->rextslog == 0, "rextslog", 0, sb->rextslog);
		CHECK_VAL(sb->frextents == 0, "frextents", 0, sb->frextents);
	} else {
		uint64_t rext = sb->rblocks / sb->rextsize;
		uint64_t bits = (uint64_t)sb->blocksize * 8;
		/* With realtime groups, each group has a bitmap of its own. */
		uint64_t rbm = xk_sb_has_rtgroups(sb) ?
			       xk_rtg_bitmap_blocks(sb) :
			       (rext + bits - 1) / bits;

		CHECK_VAL(rext && sb->rextents == rext, "rextents", rext,
			  sb->rextents);
		CHECK_VAL(sb->rextslog == xk_rt_extslog(rext), "rextslog",
			  xk_rt_extslog(rext), sb->rextslog);
		CHECK_VAL(sb->rbmblocks == rbm, "rbmblocks", rbm,
			  sb->rbmblocks);
		CHECK_VAL(sb->frextents <= sb->rextents, "frextents",
			  sb->rextents, sb->frextents);
	}
	CHECK_VAL(sb->dirblklog <= 16 - sb->blocklog, "dirblklog", 0,
		  sb->dirblklog);
	CHECK_VAL(sb->inoalignmt < agblocks, "inoalignmt", 0,
		  sb->inoalignmt);
	CHECK_VAL(sb->spino_align < agblocks, "spino_align", 0,
		  sb->spino_align);
	CHECK_VAL(sb->width == 0 || (sb->unit && sb->width % sb->unit == 0),
		  "width", sb->unit, sb->width);
	CHECK_VAL(sb->unit < agblocks, "unit", 0, sb->unit);
	if (xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_METADIR)) {
		uint64_t agno = sb->metadirino >>
				(sb->agblklog + sb->inopblog);
		uint64_t agino = sb->metadirino &
			((1ULL << (sb->agblklog + sb->inopblog)) - 1);

		if (sb->metadirino != XK_NULLFSINO &&
		    (!sb->metadirino || agno >= agcount ||
		     (agino >> sb->inopblog) >= agblocks))
			return xk_fail_set(f, "metadirino", "metadata root "
					   "%llu is not an inode number of "
					   "the filesystem",
					   (unsigned long long)sb->metadirino);
		return rtgroups_check(sb, f);
	}
	return 0;
}

/* Buffer verifier for any superblock copy (primary or secondary). */
static int
sb_verify(struct xk_buf *bp, struct xk_fail *f)
{
	struct xk_sb sb;
	struct xk_mount *mp = bp->mp;
	int err;

	if (bp->len < sizeof(struct xk_dsb))
		return xk_fail_set(f, "size", "superblock buffer too small");
	xk_sb_decode(&sb, (const struct xk_dsb *)bp->data);
	err = xk_sb_check(&sb, 0, f);
	if (err)
		return err == XK_ENOTXFS ? XK_ECORRUPT : err;
	if (bp->agno >= 0 && mp) {
		/* A copy must describe the same filesystem as the handle. */
		if (memcmp(sb.uuid, mp->sb.uuid, 16))
			return xk_fail_set(f, "uuid",
					   "does not match the primary");
		if (sb.agcount != mp->sb.agcount)
			return xk_fail_val(f, "agcount", mp->sb.agcount,
					   sb.agcount);
		if (sb.agblocks != mp->sb.agblocks)
			return xk_fail_val(f, "agblocks", mp->sb.agblocks,
					   sb.agblocks);
		if (sb.blocksize != mp->sb.blocksize)
			return xk_fail_val(f, "blocksize", mp->sb.blocksize,
					   sb.blocksize);
		if (sb.dblocks != mp->sb.dblocks)
			return xk_fail_val(f, "dblocks", mp->sb.dblocks,
					   sb.dblocks);
	}
	return 0;
}

const struct xk_buf_ops xk_sb_buf_ops = {
	.name = "superblock",
	.crc_off = offsetof(struct xk_dsb, sb_crc),
	.lsn_off = offsetof(struct xk_dsb, sb_lsn),
	.verify = sb_verify,
};

int
xk_sb_read(struct xk_mount *mp, uint32_t agno, unsigned int flags,
	   struct xk_buf **bpp)
{
	*bpp = NULL;
	if (agno >= mp->g.agcount)
		return -ERANGE;
	return xk_buf_read_ctx(mp, xk_ag_hdr_daddr(mp, agno, XK_SB_SECTOR),
			       mp->g.sectsize, &xk_sb_buf_ops, agno, 0, flags,
			       bpp);
}

/*
 * Whoever decodes and re-encodes a v5 superblock (the kernel, xfs_db,
 * xfs_mdrestore) writes an unset quota inode as NULLFSINO, not 0.
 */
void
xk_dsb_null_quota_inodes(struct xk_dsb *d)
{
	/* With the metadata tree the quota inodes live there: 0 stays 0. */
	if (xk_be32_get(d->sb_features_incompat) &
	    XK_SB_FEAT_INCOMPAT_METADIR)
		return;
	if (!xk_be64_get(d->sb_uquotino))
		xk_be64_set(&d->sb_uquotino, XK_NULLFSINO);
	if (!xk_be64_get(d->sb_gquotino))
		xk_be64_set(&d->sb_gquotino, XK_NULLFSINO);
	if (!xk_be64_get(d->sb_pquotino))
		xk_be64_set(&d->sb_pquotino, XK_NULLFSINO);
}

/*
 * The label and the UUID live in every superblock copy.  Each copy is
 * read and verified before any is written, so a damaged secondary stops
 * the change before it starts instead of half-way; each copy keeps its
 * own other fields.  The in-core superblock follows.
 */
static int
sb_rewrite_copies(struct xk_mount *mp, const struct xk_sb *want)
{
	struct xk_sb old = mp->sb;
	uint32_t agcount = mp->g.agcount;
	int err = 0;

	for (uint32_t agno = 0; agno < agcount && !err; agno++) {
		struct xk_buf *bp;

		err = xk_sb_read(mp, agno, 0, &bp);
		if (!err)
			xk_buf_release(bp);
	}
	if (err)
		return err;
	/* The copies are verified against the handle's (new) identity. */
	memcpy(mp->sb.fname, want->fname, 12);
	memcpy(mp->sb.uuid, want->uuid, 16);
	memcpy(mp->sb.meta_uuid, want->meta_uuid, 16);
	mp->sb.features_incompat = want->features_incompat;
	for (uint32_t agno = 0; agno < agcount && !err; agno++) {
		struct xk_buf *bp;
		struct xk_dsb *d;

		err = xk_sb_read(mp, agno, XK_READ_NOVERIFY, &bp);
		if (err)
			break;
		d = (struct xk_dsb *)bp->data;
		memcpy(d->sb_fname, want->fname, 12);
		memcpy(d->sb_uuid, want->uuid, 16);
		memcpy(d->sb_meta_uuid, want->meta_uuid, 16);
		xk_be32_set(&d->sb_features_incompat, want->features_incompat);
		xk_dsb_null_quota_inodes(d);
		err = xk_buf_write(bp);
		xk_buf_release(bp);
	}
	if (err)
		mp->sb = old;
	return err;
}

/* A log with transactions in it would be lost by the rewrite. */
int
xk_log_require_clean(struct xk_mount *mp, char *msg, size_t msglen)
{
	struct xk_log *log = NULL;
	const struct xk_log_state *st;
	int err = xk_log_open(mp, &log);

	if (!log) {
		snprintf(msg, msglen, "no memory to read the log");
		return -ENOMEM;
	}
	st = xk_log_get_state(log);
	if (err)
		snprintf(msg, msglen, "the log cannot be read: %s",
			 xk_log_errmsg(log));
	else if (!st->clean && !st->empty) {
		snprintf(msg, msglen, "the log is dirty: it holds changes "
			 "that a mount or xfskit-repair must replay first");
		err = -EBUSY;
	}
	xk_log_close(log);
	return err;
}

int
xk_sb_set_label(struct xk_mount *mp, const char *label)
{
	struct xk_sb want = mp->sb;
	size_t len = strlen(label);

	if (len > sizeof(want.fname))
		return -ENAMETOOLONG;
	memset(want.fname, 0, sizeof(want.fname));
	memcpy(want.fname, label, len);
	return sb_rewrite_copies(mp, &want);
}

/*
 * A v5 filesystem's metadata blocks carry the UUID they were made with,
 * so a new UUID is only the user-visible one: the old one moves to
 * sb_meta_uuid under the META_UUID feature, which goes away again when
 * the UUID returns to the metadata's.  Log records carry the visible
 * UUID, so the log (which must be clean) is rewritten empty under the
 * new one.
 */
int
xk_sb_set_uuid(struct xk_mount *mp, const uint8_t uuid[16], char *msg,
	       size_t msglen)
{
	struct xk_sb want = mp->sb;
	int has_meta = xk_sb_has_incompat(&want,
					  XK_SB_FEAT_INCOMPAT_META_UUID);
	int err;

	msg[0] = 0;
	if (!memcmp(want.uuid, uuid, 16))
		return 0;
	err = xk_log_require_clean(mp, msg, msglen);
	if (err)
		return err;
	if (!has_meta) {
		memcpy(want.meta_uuid, want.uuid, 16);
		want.features_incompat |= XK_SB_FEAT_INCOMPAT_META_UUID;
	} else if (!memcmp(want.meta_uuid, uuid, 16)) {
		memset(want.meta_uuid, 0, 16);
		want.features_incompat &= ~XK_SB_FEAT_INCOMPAT_META_UUID;
	}
	memcpy(want.uuid, uuid, 16);
	err = sb_rewrite_copies(mp, &want);
	if (err) {
		snprintf(msg, msglen, "rewriting the superblocks failed: %s",
			 xk_strerror(err));
		return err;
	}
	return xk_log_zero(mp, msg, msglen);
}
