// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writing a clean log.  After recovery the kernel goes on writing at the
 * head in the head's cycle, and at unmount writes an unmount record: one
 * record holding one op (client XK_LOG, flag UNMOUNT) with the 8-byte
 * unmount payload, its length rounded up to the log stripe unit.  Blocks
 * after it that still carry the current cycle (a torn write, iclogs that
 * completed out of order) would later be taken for part of the log, so
 * they are overwritten with one-block headers of the previous cycle, as
 * the kernel clears stale blocks beyond the head.
 *
 * Zeroing the log (repair -L) writes the unmount record at block 0 and
 * fills the rest of the log with previous-cycle blocks, using a cycle
 * past every cycle found in the log so that no metadata LSN is ahead of
 * the log.  Formatting it in a given cycle (repair, when metadata LSNs
 * are ahead of the log; xfskit-db logformat) is the same write in that
 * cycle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_priv.h"

/* Fixed ticket id of the records we write; any value is valid. */
#define LOG_WRITER_TID	0x786b6c67u

/* A one-block filler header of the given cycle at blk. */
static void
fill_block(struct xk_log *log, uint8_t *b, uint32_t cycle, uint32_t blk,
	   uint64_t tail_lsn)
{
	struct xk_log_rec_header *h = (struct xk_log_rec_header *)b;

	memset(b, 0, XK_BBSIZE);
	xk_be32_set(&h->h_magicno, XK_LOG_HEADER_MAGIC_NUM);
	xk_be32_set(&h->h_cycle, cycle);
	xk_be32_set(&h->h_version, XK_LOG_VERSION_2);
	xk_be64_set(&h->h_lsn, xk_lsn_make(cycle, blk));
	xk_be64_set(&h->h_tail_lsn, tail_lsn);
	xk_be32_set(&h->h_fmt, XK_LOG_FMT_NATIVE);
	memcpy(h->h_fs_uuid, log->mp->sb.uuid, 16);
}

static int
write_blocks(struct xk_log *log, uint32_t blk, uint32_t n)
{
	struct xk_dev *dev = xk_mount_log_dev(log->mp);

	while (n) {
		uint32_t run = blk + n > log->nbb ? log->nbb - blk : n;
		int err = xk_dev_pwrite(dev, log_blk(log, blk),
					(size_t)run * XK_BBSIZE,
					(log->daddr + blk) << XK_BBSHIFT);

		if (err)
			return err;
		n -= run;
		blk = (blk + run) % log->nbb;
	}
	return 0;
}

int
xk_log_write_clean(struct xk_log *log, uint32_t blk, uint32_t cycle,
		   int whole)
{
	struct xk_log_rec_header *h;
	struct xk_log_op_header *oh;
	uint32_t sunit = log->mp->sb.logsunit, len, dblks, end, limit, crc;
	uint32_t next, isize, hblks, nblks;
	uint64_t lsn = xk_lsn_make(cycle, blk);
	uint8_t data[XK_BBSIZE];
	uint8_t *rec;
	int err;

	/*
	 * Like the kernel: the iclog is at least 32 KiB and at least the
	 * stripe unit; headers plus data are rounded up to the stripe unit
	 * (else to a basic block), and the padding counts in h_len.
	 */
	if (sunit <= 1 || sunit > XK_LOG_MAX_RECORD_BSIZE || sunit % XK_BBSIZE)
		sunit = XK_BBSIZE;
	isize = sunit > XK_LOG_BIG_RECORD_BSIZE ? sunit
						: XK_LOG_BIG_RECORD_BSIZE;
	hblks = xk_log_rec_hblks(XK_LOG_VERSION_2, isize);
	len = hblks * XK_BBSIZE + sizeof(*oh) +
	      sizeof(struct xk_unmount_log_format);
	len = (len + sunit - 1) / sunit * sunit - hblks * XK_BBSIZE;
	dblks = len >> XK_BBSHIFT;
	nblks = hblks + dblks;
	rec = calloc(nblks, XK_BBSIZE);
	if (!rec)
		return -ENOMEM;
	h = (struct xk_log_rec_header *)rec;
	fill_block(log, rec, cycle, blk, lsn);
	xk_be32_set(&h->h_len, len);
	xk_be32_set(&h->h_prev_block, log->st.last_rec_blk == XK_LOG_NOBLK ?
		    0 : log->st.last_rec_blk);
	xk_be32_set(&h->h_num_logops, 1);
	xk_be32_set(&h->h_size, isize);
	oh = (struct xk_log_op_header *)(rec + hblks * XK_BBSIZE);
	xk_be32_set(&oh->oh_tid, LOG_WRITER_TID);
	xk_be32_set(&oh->oh_len, sizeof(struct xk_unmount_log_format));
	oh->oh_clientid = XK_LOG;
	oh->oh_flags = XK_LOG_UNMOUNT_TRANS;
	xk_put_ne16((uint8_t *)(oh + 1), XK_LOG_UNMOUNT_TYPE);
	/*
	 * Stamp every block after the first with its cycle (extended
	 * headers in xh_cycle, data blocks in their first word, saved in
	 * the cycle slots first); blocks past the physical end belong to
	 * the next cycle.
	 */
	for (uint32_t i = 1; i < nblks; i++) {
		uint8_t *w = rec + (size_t)i * XK_BBSIZE;
		uint32_t c = cycle;

		if ((uint64_t)blk + i >= log->nbb &&
		    ++c == XK_LOG_HEADER_MAGIC_NUM)
			c++;
		if (i >= hblks)
			memcpy(rec + xk_log_rec_cycle_slot(i - hblks), w, 4);
		xk_put_be32(w, c);
	}
	crc = xk_crc32c_update(~0u, rec, XK_LOG_REC_SIZE);
	for (uint32_t i = 1; i < (len + XK_LOG_HEADER_CYCLE_SIZE - 1) /
				 XK_LOG_HEADER_CYCLE_SIZE; i++)
		crc = xk_crc32c_update(crc, rec + i * XK_BBSIZE,
				       XK_LOG_REC_EXT_SIZE);
	crc = xk_crc32c_update(crc, rec + hblks * XK_BBSIZE, len);
	xk_put_le32(h->h_crc, ~crc);
	/* Place it in the in-memory log, then the stale blocks after it. */
	for (uint32_t i = 0; i < nblks; i++)
		memcpy(log_blk(log, (uint64_t)blk + i),
		       rec + (size_t)i * XK_BBSIZE, XK_BBSIZE);
	free(rec);
	end = (uint32_t)(((uint64_t)blk + nblks) % log->nbb);
	/* The cycle the next write at `end` would stamp, and how far a
	 * stale block of that cycle can lie: to the physical end, or, once
	 * the record wrapped, to where it started. */
	next = cycle;
	limit = log->nbb;
	if (end <= blk) {
		if (++next == XK_LOG_HEADER_MAGIC_NUM)
			next++;
		limit = blk;
	}
	if (whole) {
		for (uint32_t b = end; b != blk; b = (b + 1) % log->nbb) {
			fill_block(log, data, cycle - 1, b, lsn);
			memcpy(log_blk(log, b), data, XK_BBSIZE);
		}
		err = write_blocks(log, blk, nblks);
		if (!err && log->nbb > nblks)
			err = write_blocks(log, end, log->nbb - nblks);
		return err;
	}
	err = write_blocks(log, blk, nblks);
	for (uint32_t b = end; !err && b < limit; b++) {
		if (log_cycle(log, b) < next)
			continue;
		fill_block(log, data, next - 1, b, lsn);
		memcpy(log_blk(log, b), data, XK_BBSIZE);
		err = write_blocks(log, b, 1);
	}
	return err;
}

int
xk_log_zero(struct xk_mount *mp, char *msg, size_t msglen)
{
	return xk_log_format(mp, 0, msg, msglen);
}

int
xk_log_format(struct xk_mount *mp, uint32_t cycle, char *msg, size_t msglen)
{
	struct xk_log *log = NULL;
	uint32_t maxc = 0;
	int err = xk_log_open(mp, &log);

	if (!log) {
		snprintf(msg, msglen, "no memory for the log");
		return -ENOMEM;
	}
	if (err && !log->buf) {
		snprintf(msg, msglen, "%s", log->err);
		xk_log_close(log);
		return err;
	}
	/* Damage is why -L is used: go past every cycle the log shows. */
	for (uint32_t b = 0; b < log->nbb; b++) {
		uint32_t c = log_cycle(log, b);

		if (c > maxc && c != XK_LOG_HEADER_MAGIC_NUM)
			maxc = c;
	}
	if (!err && log->st.head_cycle > maxc)
		maxc = log->st.head_cycle;
	/* A cycle asked for is used as it is. */
	if (cycle)
		maxc = cycle - 1;
	log->st.last_rec_blk = XK_LOG_NOBLK;
	err = xk_log_write_clean(log, 0, maxc + 1, 1);
	if (!err)
		err = xk_dev_sync(xk_mount_log_dev(mp));
	if (err)
		snprintf(msg, msglen, "writing the log failed: %s",
			 xk_strerror(err));
	else
		msg[0] = 0;
	xk_log_close(log);
	return err;
}
