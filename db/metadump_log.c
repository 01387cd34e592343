// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The log in a metadump.  Its blocks hold whole copies of recently
 * logged metadata -- directory blocks and inodes, names included -- so
 * unless the dump keeps everything (-o -a) the log is not carried as it
 * is:
 *
 *  - a clean log is replaced by an empty one a cycle later, laid out
 *    exactly as xfs_metadump (6.1 and 7.2) lays it out, so that a -o
 *    dump restores byte for byte like xfs_metadump's:
 *      block 0       a record of cycle C+1, LSN (C+1, 0), tail LSN
 *                    (C, L - n) for a log of L blocks and a first record
 *                    of n = max(2, logsunit in blocks) blocks, holding
 *                    one unmount record;
 *      from 512      records of 512 blocks (256 KiB, 8 header blocks;
 *                    the last one what is left) of cycle C, LSN (C, b),
 *                    tail LSN (C, b - length), each an unmount record;
 *      all else      zero; every CRC 0, every h_prev_block -1.
 *    C is the cycle at the log head, so every metadata LSN, at most
 *    (C, head), is behind the new log.
 *  - a dirty log must stay replayable, so the records from the tail to
 *    the head are carried as they are (with obfuscation their names
 *    then come back when the log is replayed: the caller warns, as
 *    xfs_metadump does).  The blocks outside that range are stale:
 *    neither the kernel nor xfs_repair reads anything of them but the
 *    cycle number (the first word, or a record header's h_cycle after
 *    its magic), which the head search compares.  They keep those words
 *    and lose the rest.  xfs_metadump carries them unchanged.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <xfskit/format/log.h>

#include "metadump.h"

/* xfs_metadump's records: 256 KiB, the first at block 512. */
#define MD_LOG_FILL_BB		512u
/* Ticket id of the unmount op xfs_metadump writes, as it writes it. */
#define MD_LOG_TID		0xb0c0d0d0u

/*
 * One record of rec_bytes (h_size is at least 32 KiB) at blk, holding
 * an unmount record: its header, extended headers, the op, and every
 * other block stamped with the cycle.  Returns the blocks it fills, or
 * 0 when they do not fit before avail.
 */
static uint32_t
put_record(uint8_t *blk, uint32_t avail, const uint8_t *uuid,
	   uint32_t rec_bytes, uint32_t cycle, uint64_t lsn, uint64_t tail)
{
	uint32_t hblks = 1, nblks, len;
	uint8_t *op;

	if (rec_bytes > XK_LOG_HEADER_CYCLE_SIZE)
		hblks = (rec_bytes + XK_LOG_HEADER_CYCLE_SIZE - 1) /
			XK_LOG_HEADER_CYCLE_SIZE;
	nblks = (rec_bytes + XK_BBSIZE - 1) / XK_BBSIZE;
	if (nblks < hblks + 1)
		nblks = hblks + 1;
	if (nblks > avail)
		return 0;
	len = (rec_bytes > 2 * XK_BBSIZE ? rec_bytes : 2 * XK_BBSIZE) -
	      hblks * XK_BBSIZE;
	memset(blk, 0, (size_t)nblks * XK_BBSIZE);
	xk_put_be32(blk, XK_LOG_HEADER_MAGIC_NUM);
	xk_put_be32(blk + offsetof(struct xk_log_rec_header, h_cycle), cycle);
	xk_put_be32(blk + offsetof(struct xk_log_rec_header, h_version),
		    XK_LOG_VERSION_2);
	xk_put_be32(blk + offsetof(struct xk_log_rec_header, h_len), len);
	xk_put_be64(blk + offsetof(struct xk_log_rec_header, h_lsn), lsn);
	xk_put_be64(blk + offsetof(struct xk_log_rec_header, h_tail_lsn),
		    tail);
	xk_put_be32(blk + offsetof(struct xk_log_rec_header, h_prev_block),
		    0xffffffffu);
	xk_put_be32(blk + offsetof(struct xk_log_rec_header, h_num_logops),
		    1);
	xk_put_be32(blk + offsetof(struct xk_log_rec_header, h_fmt),
		    XK_LOG_FMT_NATIVE);
	memcpy(blk + offsetof(struct xk_log_rec_header, h_fs_uuid), uuid, 16);
	xk_put_be32(blk + offsetof(struct xk_log_rec_header, h_size),
		    rec_bytes > XK_LOG_BIG_RECORD_BSIZE ?
		    rec_bytes : XK_LOG_BIG_RECORD_BSIZE);
	/* The op's first word (its ticket) goes to the header's slot 0. */
	op = blk + (size_t)hblks * XK_BBSIZE;
	xk_put_be32(blk + xk_log_rec_cycle_slot(0), MD_LOG_TID);
	xk_put_be32(op + offsetof(struct xk_log_op_header, oh_len),
		    sizeof(struct xk_unmount_log_format));
	op[offsetof(struct xk_log_op_header, oh_clientid)] = XK_LOG;
	op[offsetof(struct xk_log_op_header, oh_flags)] = XK_LOG_UNMOUNT_TRANS;
	xk_put_ne16(op + sizeof(struct xk_log_op_header), XK_LOG_UNMOUNT_TYPE);
	for (uint32_t i = 1; i < nblks; i++)
		xk_put_be32(blk + (size_t)i * XK_BBSIZE, cycle);
	return nblks;
}

int
md_log_clear(uint8_t *buf, uint32_t nbb, const uint8_t *uuid,
	     uint32_t logsunit, uint32_t head_cycle)
{
	uint32_t cycle = head_cycle + 1, first, len, blk;

	if (!head_cycle || cycle == XK_LOG_HEADER_MAGIC_NUM ||
	    logsunit > XK_LOG_MAX_RECORD_BSIZE)
		return -EINVAL;
	first = (logsunit + XK_BBSIZE - 1) / XK_BBSIZE;
	if (first < 2)
		first = 2;
	if (first > nbb)
		return -EINVAL;
	memset(buf, 0, (size_t)nbb * XK_BBSIZE);
	if (!put_record(buf, nbb, uuid, logsunit, cycle,
			xk_lsn_make(cycle, 0),
			xk_lsn_make(cycle - 1, nbb - first)))
		return -EINVAL;
	cycle--;
	blk = MD_LOG_FILL_BB;
	len = blk < nbb ? (nbb - blk < MD_LOG_FILL_BB ? nbb - blk :
			   MD_LOG_FILL_BB) : 0;
	while (blk < nbb) {
		/* A last record too short for its headers is left zero. */
		if (!put_record(buf + (size_t)blk * XK_BBSIZE, nbb - blk, uuid,
				len * XK_BBSIZE, cycle,
				xk_lsn_make(cycle, blk),
				xk_lsn_make(cycle, blk - len)))
			break;
		blk += len;
		if (nbb - blk < len)
			len = nbb - blk;
	}
	return 0;
}

uint64_t
md_log_scrub_stale(uint8_t *buf, uint32_t nbb, uint32_t head, uint32_t tail)
{
	uint64_t n = 0;

	if (head >= nbb || tail >= nbb)
		return 0;
	for (uint32_t b = head; b != tail; b = (b + 1) % nbb) {
		uint8_t *p = buf + (size_t)b * XK_BBSIZE;
		size_t keep = xk_get_be32(p) == XK_LOG_HEADER_MAGIC_NUM ? 8 : 4;

		memset(p + keep, 0, XK_BBSIZE - keep);
		n++;
	}
	return n;
}

const char *
md_log_warning(const struct md_opts *o, const struct md_stats *st)
{
	if (!o->obfuscate || !st->dirty_log)
		return NULL;
	if (st->log_action == MD_LOG_SCRUBBED)
		return "warning: the log is dirty: its records from tail to "
		       "head are carried as they are, and replaying them "
		       "(mounting the restored image) brings back names that "
		       "are not obfuscated.  Mount and unmount the filesystem "
		       "first to clean its log, or dump with -o.";
	return "warning: the log is dirty or could not be read: it is "
	       "carried as it is, and it holds names that are not "
	       "obfuscated.  Mount and unmount the filesystem first to "
	       "clean its log, or dump with -o.";
}
