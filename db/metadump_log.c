// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The log of an obfuscated metadump.  A clean log still holds the last
 * checkpoints the kernel wrote -- whole directory blocks and inodes,
 * names included -- so when names are obfuscated a clean log is replaced
 * by an empty one, one cycle further on:
 *
 *   block 0..n-1  the filesystem's own unmount record (header, extended
 *                 headers, data), moved to block 0 and restamped with
 *                 cycle C+1 and LSN (C+1, 0), the bytes after its ops
 *                 zeroed (the kernel pads a record with whatever its
 *                 in-memory log buffer held, old names included), its
 *                 CRC recomputed;
 *   the rest      blocks carrying only the old cycle number C in their
 *                 first word, so the head search (first block whose
 *                 cycle differs from block 0's) stops right after the
 *                 unmount record and finds the log clean.
 *
 * Every metadata LSN in the filesystem is at most (C, head), behind the
 * new log's (C+1, 0), so neither the kernel nor xfs_repair sees
 * metadata from the future.  Before anything is rewritten our CRC of the
 * original unmount record must match the stored one; if it does not (or
 * the record wraps the end of the log), the log is carried unchanged.
 * A dirty log is always carried as it is: replaying it needs its
 * contents.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/log.h>

#include "metadump.h"

/* CRC of a record copied contiguously (headers, then data). */
static uint32_t
rec_crc(const uint8_t *rec, uint32_t version, uint32_t len, uint32_t hblks)
{
	static const uint8_t zero[4];
	size_t co = offsetof(struct xk_log_rec_header, h_crc);
	uint32_t crc = ~0u;

	crc = xk_crc32c_update(crc, rec, co);
	crc = xk_crc32c_update(crc, zero, 4);
	crc = xk_crc32c_update(crc, rec + co + 4, XK_LOG_REC_SIZE - co - 4);
	if (version & XK_LOG_VERSION_2) {
		uint32_t xheads = (len + XK_LOG_HEADER_CYCLE_SIZE - 1) /
				  XK_LOG_HEADER_CYCLE_SIZE;

		for (uint32_t i = 1; i < xheads && i < hblks; i++)
			crc = xk_crc32c_update(crc, rec + i * XK_BBSIZE,
					       XK_LOG_REC_EXT_SIZE);
	}
	crc = xk_crc32c_update(crc, rec + (size_t)hblks * XK_BBSIZE, len);
	return ~crc;
}

/*
 * Zero the data of a record (hblks header blocks, dblks data blocks in
 * rec) after its num_logops ops, and the saved cycle words of blocks it
 * does not have.  The first word of each data block is the cycle stamp;
 * the real word sits in the headers, so the data is unpacked first and
 * packed again after.
 */
static void
rec_zero_tail(uint8_t *rec, uint32_t hblks, uint32_t dblks, uint32_t len,
	      uint32_t nops)
{
	uint8_t *data = rec + (size_t)hblks * XK_BBSIZE;
	size_t p = 0, slots = (size_t)hblks * XK_LOG_CYCLE_DATA_SIZE;

	for (uint32_t i = 0; i < dblks && i < slots; i++)
		memcpy(data + (size_t)i * XK_BBSIZE,
		       rec + xk_log_rec_cycle_slot(i), 4);
	for (uint32_t i = 0; i < nops; i++) {
		uint64_t olen;

		if (p + sizeof(struct xk_log_op_header) > len)
			break;
		olen = xk_get_be32(data + p + offsetof(struct xk_log_op_header,
						       oh_len));
		if (olen > len - p - sizeof(struct xk_log_op_header))
			break;
		p += sizeof(struct xk_log_op_header) + olen;
	}
	memset(data + p, 0, (size_t)dblks * XK_BBSIZE - p);
	for (size_t i = 0; i < slots; i++) {
		uint8_t *slot = rec + xk_log_rec_cycle_slot((unsigned int)i);

		if (i < dblks)
			memcpy(slot, data + i * XK_BBSIZE, 4);
		else
			memset(slot, 0, 4);
	}
}

/*
 * Rewrite the nbb-block log in buf whose last record (an unmount record)
 * starts at rec_blk.  Rules checked first: 1. the header has the magic;
 * 2. its length and iclog size are sane and the record lies inside the
 * log without wrapping; 3. our CRC reproduces the stored one (a stored
 * zero, as mkfs writes, is accepted).  Returns 0, or -EINVAL with buf
 * untouched (-ENOMEM when out of memory).
 */
int
md_log_scrub(uint8_t *buf, uint32_t nbb, uint32_t rec_blk)
{
	const uint8_t *h;
	uint32_t cycle, ncycle, version, len, size, hblks, dblks, stored, nops;
	size_t co = offsetof(struct xk_log_rec_header, h_crc);
	uint8_t *rec;
	uint32_t nrec;

	if (rec_blk >= nbb)
		return -EINVAL;
	h = buf + (size_t)rec_blk * XK_BBSIZE;
	if (xk_get_be32(h) != XK_LOG_HEADER_MAGIC_NUM)
		return -EINVAL;
	cycle = xk_get_be32(h + offsetof(struct xk_log_rec_header, h_cycle));
	version = xk_get_be32(h + offsetof(struct xk_log_rec_header,
					   h_version));
	len = xk_get_be32(h + offsetof(struct xk_log_rec_header, h_len));
	size = xk_get_be32(h + offsetof(struct xk_log_rec_header, h_size));
	nops = xk_get_be32(h + offsetof(struct xk_log_rec_header,
					h_num_logops));
	if (!len || len > XK_LOG_MAX_RECORD_BSIZE ||
	    size > XK_LOG_MAX_RECORD_BSIZE || !cycle)
		return -EINVAL;
	hblks = xk_log_rec_hblks(version, size);
	dblks = (len + XK_BBSIZE - 1) / XK_BBSIZE;
	nrec = hblks + dblks;
	if (nrec > nbb - rec_blk || nrec >= nbb)
		return -EINVAL;
	rec = malloc((size_t)nrec * XK_BBSIZE);
	if (!rec)
		return -ENOMEM;
	memcpy(rec, h, (size_t)nrec * XK_BBSIZE);
	stored = xk_get_le32(rec + co);
	if (stored && stored != rec_crc(rec, version, len, hblks)) {
		free(rec);
		return -EINVAL;
	}

	rec_zero_tail(rec, hblks, dblks, len, nops);
	ncycle = cycle + 1;
	if (ncycle == XK_LOG_HEADER_MAGIC_NUM)
		ncycle++;
	xk_put_be32(rec + offsetof(struct xk_log_rec_header, h_cycle),
		    ncycle);
	xk_put_be64(rec + offsetof(struct xk_log_rec_header, h_lsn),
		    (uint64_t)ncycle << 32);
	xk_put_be64(rec + offsetof(struct xk_log_rec_header, h_tail_lsn),
		    (uint64_t)ncycle << 32);
	xk_put_be32(rec + offsetof(struct xk_log_rec_header, h_prev_block),
		    0);
	for (uint32_t i = 1; i < hblks; i++)
		xk_put_be32(rec + (size_t)i * XK_BBSIZE, ncycle);
	for (uint32_t i = 0; i < dblks; i++)
		xk_put_be32(rec + (size_t)(hblks + i) * XK_BBSIZE, ncycle);
	xk_put_le32(rec + co, rec_crc(rec, version, len, hblks));

	memset(buf, 0, (size_t)nbb * XK_BBSIZE);
	memcpy(buf, rec, (size_t)nrec * XK_BBSIZE);
	free(rec);
	for (uint32_t b = nrec; b < nbb; b++)
		xk_put_be32(buf + (size_t)b * XK_BBSIZE, cycle);
	return 0;
}
