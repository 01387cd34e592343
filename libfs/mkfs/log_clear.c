// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A clean log for a new filesystem.  The whole log is zeroed (cycle 0
 * everywhere), then block 0 gets one record of cycle 1 holding a single
 * unmount record, laid out like mkfs.xfs lays it out: its length is the
 * log stripe unit (at least header plus one block), with an extended
 * header per further 32 KiB of record, every data block stamped with the
 * cycle and the first word of the unmount block saved in the header.
 * The kernel finds the head right after this record, sees the unmount
 * record, and mounts without recovery.  Unlike mkfs.xfs we also fill in
 * the record CRC (mkfs.xfs leaves it zero, which the kernel tolerates).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/fault.h>
#include <xfskit/init.h>
#include <xfskit/libfs.h>
#include <xfskit/format/log.h>

/* The ticket id mkfs.xfs marks its unmount record with. */
#define MKFS_LOG_TID		0xb0c0d0d0u
#define LOG_INIT_CYCLE		1

/* Zero the log: punch or discard where possible, else write zeroes. */
static int
log_zero(struct xk_mount *mp, uint64_t off, uint64_t len)
{
	struct xk_dev *dev = xk_mount_log_dev(mp);
	const size_t chunk = 1u << 20;
	uint8_t *z;
	int err = 0;

	if (!dev->is_bdev && xk_dev_discard(dev, off, len) == 0)
		return 0;
	z = calloc(1, chunk);
	if (!z)
		return -ENOMEM;
	while (len && !err) {
		size_t n = len < chunk ? (size_t)len : chunk;

		err = xk_dev_pwrite(dev, z, n, off);
		off += n;
		len -= n;
	}
	free(z);
	return err;
}

int
xk_log_init_clean(struct xk_mount *mp, uint64_t log_daddr, uint64_t bblen,
		  uint32_t sunit_bytes)
{
	struct xk_log_rec_header *h;
	struct xk_log_op_header *oh;
	uint32_t rec_bb, hdrs = 1, crc;
	uint64_t lsn = xk_lsn_make(LOG_INIT_CYCLE, 0);
	struct xk_dev *dev = xk_mount_log_dev(mp);
	uint8_t *data, *buf;
	int err;

	if (sunit_bytes > XK_LOG_MAX_RECORD_BSIZE)
		return -EINVAL;
	rec_bb = (sunit_bytes + XK_BBSIZE - 1) >> XK_BBSHIFT;
	if (sunit_bytes > XK_LOG_HEADER_CYCLE_SIZE)
		hdrs = (sunit_bytes + XK_LOG_HEADER_CYCLE_SIZE - 1) /
		       XK_LOG_HEADER_CYCLE_SIZE;
	if (rec_bb < hdrs + 1)
		rec_bb = hdrs + 1;
	if (bblen < (uint64_t)rec_bb + 1)
		return -EINVAL;
	if (!dev)
		return -ENODEV;
	err = log_zero(mp, log_daddr << XK_BBSHIFT, bblen << XK_BBSHIFT);
	if (err)
		return err;
	/* Written straight to the log's device, which may not be mp->dev. */
	buf = xk_calloc(rec_bb, XK_BBSIZE);
	if (!buf)
		return -ENOMEM;
	h = (struct xk_log_rec_header *)buf;
	xk_be32_set(&h->h_magicno, XK_LOG_HEADER_MAGIC_NUM);
	xk_be32_set(&h->h_cycle, LOG_INIT_CYCLE);
	xk_be32_set(&h->h_version, XK_LOG_VERSION_2);
	xk_be32_set(&h->h_len, (rec_bb - hdrs) << XK_BBSHIFT);
	xk_be64_set(&h->h_lsn, lsn);
	xk_be64_set(&h->h_tail_lsn, lsn);
	xk_be32_set(&h->h_prev_block, 0xffffffffu);
	xk_be32_set(&h->h_num_logops, 1);
	xk_be32_set(&h->h_fmt, XK_LOG_FMT_NATIVE);
	memcpy(h->h_fs_uuid, mp->sb.uuid, 16);
	xk_be32_set(&h->h_size, sunit_bytes > XK_LOG_BIG_RECORD_BSIZE ?
		    sunit_bytes : XK_LOG_BIG_RECORD_BSIZE);
	for (uint32_t i = 1; i < hdrs; i++)
		xk_put_be32(buf + (size_t)i * XK_BBSIZE, LOG_INIT_CYCLE);
	/* The unmount op in the first data block. */
	data = buf + (size_t)hdrs * XK_BBSIZE;
	oh = (struct xk_log_op_header *)data;
	xk_be32_set(&oh->oh_tid, MKFS_LOG_TID);
	xk_be32_set(&oh->oh_len, sizeof(struct xk_unmount_log_format));
	oh->oh_clientid = XK_LOG;
	oh->oh_flags = XK_LOG_UNMOUNT_TRANS;
	xk_put_ne16(data + sizeof(*oh), XK_LOG_UNMOUNT_TYPE);
	/* Save each data block's first word, stamp the cycle in its place. */
	for (uint32_t i = 0; i < rec_bb - hdrs; i++) {
		uint8_t *w = data + (size_t)i * XK_BBSIZE;

		memcpy(buf + xk_log_rec_cycle_slot(i), w, 4);
		xk_put_be32(w, LOG_INIT_CYCLE);
	}
	crc = xk_crc32c_update(~0u, buf, XK_LOG_REC_SIZE);
	/* Readers cover the extended headers h_len calls for. */
	for (uint32_t i = 1; i < hdrs &&
	     i < (((rec_bb - hdrs) << XK_BBSHIFT) + XK_LOG_HEADER_CYCLE_SIZE -
		  1) / XK_LOG_HEADER_CYCLE_SIZE; i++)
		crc = xk_crc32c_update(crc, buf + (size_t)i * XK_BBSIZE,
				       XK_LOG_REC_EXT_SIZE);
	crc = xk_crc32c_update(crc, data,
			       (size_t)(rec_bb - hdrs) << XK_BBSHIFT);
	xk_put_le32(h->h_crc, ~crc);
	err = xk_dev_pwrite(dev, buf, (size_t)rec_bb << XK_BBSHIFT,
			    log_daddr << XK_BBSHIFT);
	free(buf);
	return err;
}
