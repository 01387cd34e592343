// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Quota blocks: an array of dquot records, each with its own CRC, UUID
 * and LSN; the block as a whole has no header.
 */
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/meta.h>
#include <xfskit/format/dquot.h>

/*
 * Rules, for every record (CRCs are checked by dquot_crc_ok): magic
 * "DQ"; version 1; exactly one quota type, with the bigtime flag only on
 * bigtime filesystems; UUID; ids consecutive through the block.
 */
static int
dquot_verify(struct xk_buf *bp, struct xk_fail *f)
{
	uint32_t n = bp->len / sizeof(struct xk_dqblk);
	uint32_t first_id = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct xk_dqblk *d = (const void *)(bp->data +
						i * sizeof(struct xk_dqblk));
		const struct xk_disk_dquot *q = &d->dd_diskdq;
		uint8_t type = q->d_type & XK_DQTYPE_REC_MASK;

		if (xk_be16_get(q->d_magic) != XK_DQUOT_MAGIC)
			return xk_fail_set(f, "magic", "record %u has magic "
					   "0x%04x", i,
					   xk_be16_get(q->d_magic));
		if (q->d_version != XK_DQUOT_VERSION)
			return xk_fail_set(f, "version", "record %u has "
					   "version %u", i, q->d_version);
		if ((q->d_type & ~XK_DQTYPE_ANY) ||
		    (type != XK_DQTYPE_USER && type != XK_DQTYPE_GROUP &&
		     type != XK_DQTYPE_PROJ))
			return xk_fail_set(f, "type", "record %u has type "
					   "0x%x", i, q->d_type);
		if ((q->d_type & XK_DQTYPE_BIGTIME) && !bp->mp->g.has_bigtime)
			return xk_fail_set(f, "type", "record %u uses bigtime "
					   "timers without the feature", i);
		if (memcmp(d->dd_uuid, bp->mp->meta_uuid, 16))
			return xk_fail_set(f, "uuid", "record %u's UUID does "
					   "not match the superblock", i);
		if (i == 0)
			first_id = xk_be32_get(q->d_id);
		else if (xk_be32_get(q->d_id) != first_id + i)
			return xk_fail_set(f, "id", "record %u has id %u, "
					   "expected %u", i,
					   xk_be32_get(q->d_id), first_id + i);
	}
	return 0;
}

/* Each record carries its own CRC. */
static int
dquot_crc_ok(const struct xk_buf *bp)
{
	uint32_t n = bp->len / sizeof(struct xk_dqblk);

	for (uint32_t i = 0; i < n; i++)
		if (!xk_cksum_ok(bp->data + i * sizeof(struct xk_dqblk),
				 sizeof(struct xk_dqblk), XK_DQUOT_CRC_OFF))
			return 0;
	return 1;
}

static void
dquot_crc_update(struct xk_buf *bp)
{
	uint32_t n = bp->len / sizeof(struct xk_dqblk);

	for (uint32_t i = 0; i < n; i++)
		xk_cksum_update(bp->data + i * sizeof(struct xk_dqblk),
				sizeof(struct xk_dqblk), XK_DQUOT_CRC_OFF);
}

/* No block-level CRC: each record carries its own. */
const struct xk_buf_ops xk_dquot_buf_ops = {
	.name = "dquot block",
	.crc_off = XK_NO_CRC,
	.verify = dquot_verify,
	.crc_ok = dquot_crc_ok,
	.crc_update = dquot_crc_update,
};
