// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Dquot items (XK_LI_DQUOT): each holds a whole on-disk dquot as a
 * transaction left it, and recovery copies it over the dquot's record in
 * its buffer, as the kernel's does.  It runs after pass 2, in log order:
 * a dquot buffer is logged as a buffer only when its chunk is allocated,
 * before any of its dquots can be, so buffer items and dquot items never
 * need interleaving (the kernel does not look for cancelled buffers
 * here either).
 *
 * A dquot item is applied when:
 *  1. the superblock accounts some quota (the kernel replays dquots only
 *     when the mount turns quotas on; offline, the filesystem's own
 *     flags say whether they are);
 *  2. the record on disk carries no newer LSN (v5).
 * and first checked (any failure stops replay, nothing written):
 *  3. two regions; the format region whole;
 *  4. a one-block buffer inside the filesystem, the record a whole
 *     136-byte slot of it;
 *  5. the logged dquot 104 bytes or a whole record, with the dquot
 *     magic and version, one quota type and the item's id.
 * The record's CRC is recomputed; its LSN is left as it was (the kernel
 * stamps it when it flushes a dquot, not in recovery).
 */
#include <stddef.h>
#include <string.h>

#include <xfskit/format/dquot.h>
#include <xfskit/format/sb.h>

#include "log_priv.h"

#define LOG_NULLLSN	((uint64_t)-1)

/*
 * Whether the superblock accounts any quota: as replayed (a mount that
 * turned quotas on logged the superblock that says so), in the cache.
 */
static int
dq_accounted(struct xk_mount *mp, int *on)
{
	struct xk_buf *bp;
	int err = xk_buf_read(mp, 0, mp->g.sectsize, NULL, XK_READ_NOVERIFY,
			      &bp);

	if (err)
		return err;
	*on = !!(xk_be16_get(((const struct xk_dsb *)bp->data)->sb_qflags) &
		 (XK_UQUOTA_ACCT | XK_GQUOTA_ACCT | XK_PQUOTA_ACCT));
	xk_buf_release(bp);
	return 0;
}

struct dq_walk {
	struct xk_log	*log;
	int		on;		/* quotas accounted */
	unsigned int	flags;
	struct xk_log_report *rep;
};

static int
dq_fail(struct dq_walk *w, const struct xk_log_trans *tr, uint32_t ii,
	const char *what, unsigned long long v)
{
	return xk_log_fail(w->log, XK_ECORRUPT,
			   "log transaction 0x%x (LSN %u/%u), dquot item %u: "
			   "%s (%llu)", tr->tid, xk_lsn_cycle(tr->lsn),
			   xk_lsn_block(tr->lsn), ii, what, v);
}

static int
dq_item(struct dq_walk *w, const struct xk_log_trans *tr, uint32_t ii,
	const struct xk_log_item *it)
{
	struct xk_mount *mp = w->log->mp;
	const uint8_t *f = it->regions[0].data;
	const uint8_t *ld;
	struct xk_dq_logformat q;
	struct xk_buf *bp;
	uint8_t *rec;
	uint32_t ldlen, bytes;
	unsigned int type;
	uint64_t lsn;
	int err;

	if (it->nregions != 2 || it->regions[0].len < sizeof(q))	/* 3 */
		return dq_fail(w, tr, ii, "regions", it->nregions);
	memcpy(&q, f, sizeof(q));
	ld = it->regions[1].data;
	ldlen = it->regions[1].len;
	bytes = mp->g.blocksize;
	if (q.qlf_len != 1 || q.qlf_blkno < 0 ||			/* 4 */
	    (uint64_t)q.qlf_blkno + (bytes >> XK_BBSHIFT) >
	    (mp->g.dblocks << mp->g.blkbb_log))
		return dq_fail(w, tr, ii, "buffer outside the filesystem, "
			       "daddr", (unsigned long long)q.qlf_blkno);
	if (q.qlf_boffset % sizeof(struct xk_dqblk) ||
	    q.qlf_boffset + sizeof(struct xk_dqblk) > bytes)
		return dq_fail(w, tr, ii, "record offset not a dquot slot",
			       q.qlf_boffset);
	if ((ldlen != sizeof(struct xk_disk_dquot) &&			/* 5 */
	     ldlen != sizeof(struct xk_dqblk)) ||
	    xk_get_be16(ld) != XK_DQUOT_MAGIC ||
	    ld[2] != XK_DQUOT_VERSION)
		return dq_fail(w, tr, ii, "logged dquot has a bad magic, "
			       "version or size, id", q.qlf_id);
	type = ld[3] & XK_DQTYPE_REC_MASK;
	if ((type != XK_DQTYPE_USER && type != XK_DQTYPE_GROUP &&
	     type != XK_DQTYPE_PROJ) || (ld[3] & ~XK_DQTYPE_ANY) ||
	    xk_get_be32(ld + 4) != q.qlf_id)
		return dq_fail(w, tr, ii, "logged dquot has a bad type or "
			       "another id, id", q.qlf_id);
	if (!w->on) {							/* 1 */
		w->rep->dquots_skipped++;
		return 0;
	}
	if ((w->flags & XK_LOG_DRYRUN) && !(w->flags & XK_LOG_DRYRUN_KEEP)) {
		w->rep->dquots_replayed++;
		return 0;
	}
	err = xk_buf_read(mp, (uint64_t)q.qlf_blkno, bytes, NULL,
			  XK_READ_NOVERIFY, &bp);
	if (err)
		return xk_log_fail(w->log, err, "reading the dquot buffer at "
				   "daddr %llu failed: %s",
				   (unsigned long long)q.qlf_blkno,
				   xk_strerror(err));
	rec = bp->data + q.qlf_boffset;
	lsn = xk_get_be64(rec + offsetof(struct xk_dqblk, dd_lsn));	/* 2 */
	if (xk_get_be16(rec) == XK_DQUOT_MAGIC && lsn && lsn != LOG_NULLLSN &&
	    lsn >= tr->lsn) {
		w->rep->dquots_skipped++;
		xk_buf_release(bp);
		return 0;
	}
	memcpy(rec, ld, ldlen);
	xk_cksum_update(rec, sizeof(struct xk_dqblk), XK_DQUOT_CRC_OFF);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	w->rep->dquots_replayed++;
	return 0;
}

static int
dq_trans(void *priv, const struct xk_log_trans *tr)
{
	struct dq_walk *w = priv;

	for (uint32_t i = 0; i < tr->nitems; i++) {
		int err;

		if (tr->items[i].type != XK_LI_DQUOT)
			continue;
		err = dq_item(w, tr, i, &tr->items[i]);
		if (err)
			return err;
	}
	return 0;
}

int
log_replay_dquots(struct xk_log *log, unsigned int flags,
		  struct xk_log_report *rep)
{
	struct xk_log_walk_ops wo = { .trans = dq_trans };
	struct dq_walk w = { log, 0, flags, rep };
	int err = dq_accounted(log->mp, &w.on);

	if (err)
		return xk_log_fail(log, err, "reading the superblock failed: "
				   "%s", xk_strerror(err));

	return xk_log_walk(log, &wo, &w);
}
