// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Finding the head and tail of the log.  The log is read into memory
 * chunk by chunk as the search touches it (log_priv.h), or on worker
 * threads ahead of a walk (log_load_range()); the head is located like
 * the kernel does at mount:
 * the cycle number stamped in every block drops by one where the writer
 * stopped, in-flight iclogs may have completed out of order (holes of
 * the older cycle among the last few hundred KiB), the last record may
 * be only partly written, and the records nearest the head may carry a
 * bad CRC (a torn write), which moves the head back to the first bad
 * record.  The last record before the head names the tail; if it is a
 * lone unmount record the log is clean and the tail is the head.
 *
 * Also here: the record header rules and the record CRC.  The CRC covers
 * the first 328 bytes of the header (h_crc as zero), the first 260 bytes
 * of each extended header the data needs, then the data exactly as
 * written, i.e. with the cycle numbers stamped over the first word of
 * every data block; the saved words are put back only after the check.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "log_priv.h"

/* Blocks the kernel scans for holes: 8 iclogs of 256 KiB. */
#define LOG_TOTAL_REC_BB \
	((XK_LOG_MAX_ICLOGS * XK_LOG_MAX_RECORD_BSIZE) >> XK_BBSHIFT)
/* Blocks searched back from the head for the last record header. */
#define LOG_REC_BB		((XK_LOG_MAX_RECORD_BSIZE >> XK_BBSHIFT) + 8)

int
xk_log_fail(struct xk_log *log, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(log->err, sizeof(log->err), fmt, ap);
	va_end(ap);
	return err;
}

/*
 * Rules for a record header at blk:
 *  1. magic XK_LOG_HEADER_MAGIC_NUM;
 *  2. h_version non-zero with only known bits;
 *  3. h_cycle non-zero and the LSN names this cycle and this block;
 *  4. for v2 records with h_size over 32 KiB, h_size at most 256 KiB;
 *  5. h_len non-zero, at most 256 KiB, and its data blocks no more than
 *     the header blocks have cycle slots for;
 *  6. headers plus data no longer than the log;
 *  7. h_num_logops no more than h_len allows (12 bytes an op);
 *  8. h_fmt is this machine's byte order (the kernel refuses others);
 *  9. h_fs_uuid is the filesystem's UUID.
 */
int
xk_log_rhdr_check(struct xk_log *log, uint32_t blk, struct log_rhdr *rh)
{
	const struct xk_log_rec_header *h = (const void *)log_blk(log, blk);
	uint32_t cap;

	memset(rh, 0, sizeof(*rh));
	rh->blk = blk;
	if (xk_be32_get(h->h_magicno) != XK_LOG_HEADER_MAGIC_NUM)
		return xk_log_fail(log, XK_ECORRUPT,
			"log record at block %u: bad magic 0x%x", blk,
			xk_be32_get(h->h_magicno));
	rh->version = xk_be32_get(h->h_version);
	rh->cycle = xk_be32_get(h->h_cycle);
	rh->len = xk_be32_get(h->h_len);
	rh->size = xk_be32_get(h->h_size);
	rh->lsn = xk_be64_get(h->h_lsn);
	rh->tail_lsn = xk_be64_get(h->h_tail_lsn);
	rh->num_logops = xk_be32_get(h->h_num_logops);
	if (rh->version == 0 || (rh->version & ~XK_LOG_VERSION_OKBITS))
		return xk_log_fail(log, XK_ECORRUPT,
			"log record at block %u: bad version 0x%x", blk,
			rh->version);
	if (rh->cycle == 0 || xk_lsn_cycle(rh->lsn) != rh->cycle ||
	    xk_lsn_block(rh->lsn) != blk)
		return xk_log_fail(log, XK_ECORRUPT,
			"log record at block %u: LSN %u/%u does not match its "
			"cycle %u and position", blk, xk_lsn_cycle(rh->lsn),
			xk_lsn_block(rh->lsn), rh->cycle);
	if ((rh->version & XK_LOG_VERSION_2) &&
	    rh->size > XK_LOG_HEADER_CYCLE_SIZE &&
	    rh->size > XK_LOG_MAX_RECORD_BSIZE)
		return xk_log_fail(log, XK_ECORRUPT,
			"log record at block %u: iclog size %u is over %u",
			blk, rh->size, XK_LOG_MAX_RECORD_BSIZE);
	rh->hblks = xk_log_rec_hblks(rh->version, rh->size);
	rh->dblks = (rh->len + XK_BBSIZE - 1) >> XK_BBSHIFT;
	cap = rh->hblks * XK_LOG_CYCLE_DATA_SIZE;
	if (rh->len == 0 || rh->len > XK_LOG_MAX_RECORD_BSIZE ||
	    rh->dblks > cap)
		return xk_log_fail(log, XK_ECORRUPT,
			"log record at block %u (LSN %u/%u): impossible length "
			"%u (at most %u bytes with %u header blocks)", blk,
			rh->cycle, blk, rh->len,
			(rh->len > XK_LOG_MAX_RECORD_BSIZE ?
			 XK_LOG_MAX_RECORD_BSIZE : cap * XK_BBSIZE),
			rh->hblks);
	if ((uint64_t)rh->hblks + rh->dblks >= log->nbb)
		return xk_log_fail(log, XK_ECORRUPT,
			"log record at block %u: %u blocks do not fit a log of "
			"%u blocks", blk, rh->hblks + rh->dblks, log->nbb);
	if (rh->num_logops > rh->len / sizeof(struct xk_log_op_header))
		return xk_log_fail(log, XK_ECORRUPT,
			"log record at block %u (LSN %u/%u): %u ops cannot fit "
			"in %u bytes", blk, rh->cycle, blk, rh->num_logops,
			rh->len);
	if (xk_be32_get(h->h_fmt) != XK_LOG_FMT_NATIVE)
		return xk_log_fail(log, XK_EUNSUPP,
			"log record at block %u: written in byte-order format "
			"%u, this machine uses %u", blk,
			xk_be32_get(h->h_fmt), XK_LOG_FMT_NATIVE);
	if (memcmp(h->h_fs_uuid, log->mp->sb.uuid, 16) != 0)
		return xk_log_fail(log, XK_ECORRUPT,
			"log record at block %u: filesystem UUID does not "
			"match the superblock", blk);
	return 0;
}

/* The record CRC over a contiguous copy (headers, then data). */
static uint32_t
rec_crc(const uint8_t *rec, const struct log_rhdr *rh)
{
	static const uint8_t zero[4];
	uint32_t crc = ~0u;
	uint32_t xheads;

	crc = xk_crc32c_update(crc, rec,
			       offsetof(struct xk_log_rec_header, h_crc));
	crc = xk_crc32c_update(crc, zero, 4);
	crc = xk_crc32c_update(crc, rec + offsetof(struct xk_log_rec_header,
						   h_crc) + 4,
			       XK_LOG_REC_SIZE -
			       offsetof(struct xk_log_rec_header, h_crc) - 4);
	if (rh->version & XK_LOG_VERSION_2) {
		xheads = (rh->len + XK_LOG_HEADER_CYCLE_SIZE - 1) /
			 XK_LOG_HEADER_CYCLE_SIZE;
		for (uint32_t i = 1; i < xheads && i < rh->hblks; i++)
			crc = xk_crc32c_update(crc, rec + i * XK_BBSIZE,
					       XK_LOG_REC_EXT_SIZE);
	}
	crc = xk_crc32c_update(crc, rec + rh->hblks * XK_BBSIZE, rh->len);
	return ~crc;
}

/*
 * The cycle stamped in block i of a record (0: its header).  A record
 * that runs past the physical end of the log is written in two pieces,
 * and the writer bumps the stamp of every block that lands at the start
 * of the log to the next cycle (skipping the magic number) before the
 * CRC is computed.
 */
static uint32_t
want_cycle(const struct xk_log *log, const struct log_rhdr *rh, uint32_t i)
{
	uint32_t c = rh->cycle;

	if ((uint64_t)rh->blk + i >= log->nbb && ++c == XK_LOG_HEADER_MAGIC_NUM)
		c++;
	return c;
}

/*
 * The work of xk_log_rec_load() on a caller's buffer, safe to run on
 * several threads at once: it only reads the log (whose chunks must
 * then be loaded already, log_load_range()) and writes dst and msg.
 * Once a whole walk has passed (log->walked), the same bytes are walked
 * again without computing their CRCs a second time.
 */
int
log_rec_unpack(const struct xk_log *log, const struct log_rhdr *rh,
	       uint8_t *dst, uint32_t *crcp, char *msg, size_t msglen)
{
	uint32_t stored, crc, xheads;
	uint8_t *data;

	for (uint32_t i = 0; i < rh->hblks + rh->dblks; i++)
		memcpy(dst + (size_t)i * XK_BBSIZE,
		       log_blk(log, (uint64_t)rh->blk + i), XK_BBSIZE);
	/* Extended headers the data needs must carry the record's cycle. */
	xheads = (rh->dblks + XK_LOG_CYCLE_DATA_SIZE - 1) /
		 XK_LOG_CYCLE_DATA_SIZE;
	for (uint32_t i = 1; i < xheads; i++) {
		uint32_t c = xk_get_be32(dst + i * XK_BBSIZE);

		if (c != want_cycle(log, rh, i)) {
			snprintf(msg, msglen,
				"log record at block %u (LSN %u/%u): extended "
				"header %u has cycle %u, not %u", rh->blk,
				rh->cycle, rh->blk, i, c,
				want_cycle(log, rh, i));
			return XK_ECORRUPT;
		}
	}
	/* Every data block must carry the record's cycle (a block cut off
	 * or never written shows an older one). */
	data = dst + (size_t)rh->hblks * XK_BBSIZE;
	for (uint32_t i = 0; i < rh->dblks; i++) {
		const uint8_t *w = data + (size_t)i * XK_BBSIZE;
		uint32_t want = want_cycle(log, rh, rh->hblks + i);

		if (xk_get_be32(w) != want) {
			snprintf(msg, msglen,
				"log record at block %u (LSN %u/%u): data "
				"block %u has cycle %u, not %u", rh->blk,
				rh->cycle, rh->blk, i, xk_get_be32(w), want);
			return XK_ECORRUPT;
		}
	}
	stored = xk_get_le32(dst + offsetof(struct xk_log_rec_header, h_crc));
	crc = log->walked ? stored : rec_crc(dst, rh);
	if (crcp)
		*crcp = stored;
	/*
	 * mkfs writes its unmount record with no CRC at all, and the kernel
	 * accepts a zero CRC when it looks for the head: do the same for a
	 * record that is nothing but an unmount record.
	 */
	if (crc != stored && stored == 0 && rh->num_logops == 1 &&
	    rh->dblks >= 1 &&
	    (data[offsetof(struct xk_log_op_header, oh_flags)] &
	     XK_LOG_UNMOUNT_TRANS))
		crc = stored;
	if (crc != stored) {
		snprintf(msg, msglen,
			"log record at block %u (LSN %u/%u): CRC mismatch: "
			"stored 0x%08x, computed 0x%08x", rh->blk, rh->cycle,
			rh->blk, stored, crc);
		return XK_EBADCRC;
	}
	/* Put back the words the cycle stamps replaced. */
	for (uint32_t i = 0; i < rh->dblks; i++)
		memcpy(data + (size_t)i * XK_BBSIZE,
		       dst + xk_log_rec_cycle_slot(i), 4);
	return 0;
}

int
xk_log_rec_load(struct xk_log *log, const struct log_rhdr *rh,
		uint32_t *crcp)
{
	size_t n = (size_t)(rh->hblks + rh->dblks) * XK_BBSIZE;

	if (n > log->recsize) {
		uint8_t *p = realloc(log->rec, n);

		if (!p)
			return -ENOMEM;
		log->rec = p;
		log->recsize = n;
	}
	return log_rec_unpack(log, rh, log->rec, crcp, log->err,
			      sizeof(log->err));
}

int
xk_log_rec_is_unmount(const struct xk_log *log, const struct log_rhdr *rh)
{
	return log_rec_is_unmount(log->rec, rh);
}

int
log_rec_is_unmount(const uint8_t *rec, const struct log_rhdr *rh)
{
	const uint8_t *op = rec + (size_t)rh->hblks * XK_BBSIZE;
	const struct xk_log_op_header *oh = (const void *)op;

	return rh->num_logops == 1 && rh->len >= sizeof(*oh) &&
	       (oh->oh_flags & XK_LOG_UNMOUNT_TRANS);
}

/*
 * First block in [first, last] holding cycle, by the kernel's binary
 * search: it assumes blocks before the answer hold another cycle.
 */
static uint32_t
find_cycle_start(const struct xk_log *log, uint32_t first, uint32_t last,
		 uint32_t cycle)
{
	uint32_t end = last, mid = first + (end - first) / 2;

	while (mid != end && mid != first) {
		if (log_cycle(log, mid) == cycle)
			end = mid;
		else
			first = mid;
		mid = first + (end - first) / 2;
	}
	return end;
}

/* First block in [start, start + n) holding cycle, or XK_LOG_NOBLK. */
static uint32_t
find_cycle_in(const struct xk_log *log, uint32_t start, uint32_t n,
	      uint32_t cycle)
{
	for (uint32_t i = 0; i < n; i++)
		if (log_cycle(log, (uint64_t)start + i) == cycle)
			return start + i;
	return XK_LOG_NOBLK;
}

/*
 * The head must not point into a record: search back from *head for the
 * last record header; when that record does not end exactly at the head
 * it was only partly written, and the head moves to its start.
 */
static int
head_back_over_partial(struct xk_log *log, uint32_t *head)
{
	uint32_t window = LOG_REC_BB < log->nbb ? LOG_REC_BB : log->nbb - 1;
	struct log_rhdr rh;
	int err;

	for (uint32_t d = 1; d <= window; d++) {
		uint32_t b = (uint32_t)(((uint64_t)*head + log->nbb - d) %
					log->nbb);

		if (!log_is_header(log, b))
			continue;
		err = xk_log_rhdr_check(log, b, &rh);
		if (err)
			return err;
		if (d != rh.hblks + rh.dblks)
			*head = b;
		return 0;
	}
	return xk_log_fail(log, XK_ECORRUPT,
		"no log record header in the %u blocks before the head at "
		"block %u", window, *head);
}

/*
 * The head, as xlog_find_head computes it.  A log whose last block has
 * cycle 0 was never wrapped: the head is the first zeroed block (or the
 * log is empty).  Otherwise the head is where the cycle drops, moved
 * back to the first hole of the expected older cycle among the blocks
 * the in-flight iclogs could have covered.
 */
static int
find_head(struct xk_log *log, uint32_t *headp, int *emptyp)
{
	uint32_t n = log->nbb, first, last, head, stop, scan, nb;

	*emptyp = 0;
	first = log_cycle(log, 0);
	last = log_cycle(log, n - 1);
	scan = LOG_TOTAL_REC_BB < n ? LOG_TOTAL_REC_BB : n;
	if (first == 0) {
		*emptyp = 1;
		*headp = 0;
		return 0;
	}
	if (last == 0) {
		/* Partly zeroed: the head is the first block of cycle 0. */
		head = find_cycle_start(log, 0, n - 1, 0);
		nb = find_cycle_in(log, head > scan ? head - scan : 0,
				   head > scan ? scan : head, 0);
		if (nb != XK_LOG_NOBLK)
			head = nb;
		goto partial;
	}
	if (first == last) {
		head = n;
		stop = last - 1;
	} else {
		stop = last;
		head = find_cycle_start(log, 0, n - 1, last);
	}
	if (head >= scan) {
		nb = find_cycle_in(log, head - scan, scan, stop);
		if (nb != XK_LOG_NOBLK)
			head = nb;
	} else {
		nb = find_cycle_in(log, n - (scan - head), scan - head,
				   stop - 1);
		if (nb != XK_LOG_NOBLK) {
			head = nb;
		} else {
			nb = find_cycle_in(log, 0, head, stop);
			if (nb != XK_LOG_NOBLK)
				head = nb;
		}
	}
partial:
	if (head == n)
		head = 0;
	*headp = head;
	return head_back_over_partial(log, headp);
}

/*
 * The nth record header going back from blk (n = 1: the last one before
 * it), not crossing stop when stop is not XK_LOG_NOBLK.  Returns the
 * block or XK_LOG_NOBLK.
 */
static uint32_t
rseek_header(const struct xk_log *log, uint32_t blk, uint32_t stop,
	     unsigned int n, unsigned int *found)
{
	uint32_t last = XK_LOG_NOBLK;

	*found = 0;
	for (uint32_t d = 1; d <= log->nbb; d++) {
		uint32_t b = (uint32_t)(((uint64_t)blk + log->nbb - d) %
					log->nbb);

		if (log_is_header(log, b)) {
			last = b;
			if (++*found == n)
				break;
		}
		if (b == stop)
			break;
	}
	return last;
}

/*
 * The kernel's torn-write check: run the CRC over the records among the
 * last XK_LOG_MAX_ICLOGS before the head.  The first that fails (CRC or
 * header) and everything after it were never completely written: the
 * head moves back to it.
 */
static int
verify_head(struct xk_log *log, uint32_t *head, uint32_t tail)
{
	unsigned int found;
	uint32_t b = rseek_header(log, *head, tail, XK_LOG_MAX_ICLOGS, &found);
	struct log_rhdr rh;

	uint32_t left;

	if (b == XK_LOG_NOBLK)
		return 0;
	left = log_dist(log, b, *head);
	while (b != *head) {
		int err = xk_log_rhdr_check(log, b, &rh);

		/* A record running past the head was never completed. */
		if (!err && rh.hblks + rh.dblks > left)
			err = XK_ECORRUPT;
		if (!err)
			err = xk_log_rec_load(log, &rh, NULL);
		if (err == -ENOMEM || err == XK_EUNSUPP)
			return err;
		if (err) {
			log->st.torn_blk = b;
			*head = b;
			return 0;
		}
		left -= rh.hblks + rh.dblks;
		b = (uint32_t)(((uint64_t)b + rh.hblks + rh.dblks) % log->nbb);
	}
	return 0;
}

static int
find_tail(struct xk_log *log)
{
	struct xk_log_state *st = &log->st;
	struct log_rhdr rh;
	unsigned int found;
	uint32_t rblk;
	int err;

	rblk = rseek_header(log, st->head_blk, XK_LOG_NOBLK, 1, &found);
	if (rblk == XK_LOG_NOBLK)
		return xk_log_fail(log, XK_ECORRUPT,
			"the log holds no record header");
	err = xk_log_rhdr_check(log, rblk, &rh);
	if (err)
		return err;
	st->tail_blk = xk_lsn_block(rh.tail_lsn);
	err = verify_head(log, &st->head_blk, st->tail_blk);
	if (err)
		return err;
	if (st->torn_blk != XK_LOG_NOBLK) {
		rblk = rseek_header(log, st->head_blk, XK_LOG_NOBLK, 1,
				    &found);
		if (rblk == XK_LOG_NOBLK || rblk == st->torn_blk)
			return xk_log_fail(log, XK_ECORRUPT,
				"torn write at log block %u and no complete "
				"record before it", st->torn_blk);
		err = xk_log_rhdr_check(log, rblk, &rh);
		if (err)
			return err;
	}
	st->tail_blk = xk_lsn_block(rh.tail_lsn);
	st->tail_lsn = rh.tail_lsn;
	if (st->tail_blk >= log->nbb)
		return xk_log_fail(log, XK_ECORRUPT,
			"log record at block %u: tail block %u is outside "
			"the log of %u blocks", rblk, st->tail_blk, log->nbb);
	st->last_rec_blk = rblk;
	st->hdr_size = rh.size;
	st->version = rh.version;
	st->head_cycle = rh.cycle + (st->head_blk <= rblk ? 1 : 0);
	/* A lone unmount record ending at the head: the log is clean. */
	if ((rblk + rh.hblks + rh.dblks) % log->nbb == st->head_blk &&
	    rh.num_logops == 1) {
		err = xk_log_rec_load(log, &rh, NULL);
		if (err)
			return err;
		if (xk_log_rec_is_unmount(log, &rh)) {
			st->clean = 1;
			st->tail_blk = st->head_blk;
			st->tail_lsn = xk_lsn_make(st->head_cycle,
						   st->head_blk);
		}
	}
	return 0;
}

static int log_analyse(struct xk_log *log);

int
xk_log_open(struct xk_mount *mp, struct xk_log **logp)
{
	struct xk_log *log;
	uint64_t bytes;
	int err;

	*logp = NULL;
	log = calloc(1, sizeof(*log));
	if (!log)
		return -ENOMEM;
	*logp = log;
	log->mp = mp;
	log->threads = 1;
	log->daddr = mp->g.log_daddr;
	bytes = (uint64_t)mp->g.logblocks << mp->g.blocklog;
	log->nbb = (uint32_t)(bytes >> XK_BBSHIFT);
	log->st.size_bb = log->nbb;
	log->st.torn_blk = XK_LOG_NOBLK;
	log->st.last_rec_blk = XK_LOG_NOBLK;
	if (!xk_mount_log_dev(mp))
		return xk_log_fail(log, XK_EUNSUPP,
			"the log is on an external device, which was not "
			"given (-l LOGDEV)");
	if (log->nbb < 64 || bytes > (1ULL << 31) ||
	    (log->daddr << XK_BBSHIFT) + bytes > xk_mount_log_dev(mp)->size)
		return xk_log_fail(log, XK_ECORRUPT,
			"log of %u blocks at daddr %llu does not fit the "
			"device", mp->g.logblocks,
			(unsigned long long)log->daddr);
	/* Address space only; chunks are read as they are touched. */
	log->buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (log->buf == MAP_FAILED) {
		log->buf = NULL;
		return xk_log_fail(log, -ENOMEM, "no memory for the log");
	}
	log->map_len = bytes;
	/*
	 * A walk reads the log whole: in huge pages that is a few dozen
	 * page faults instead of one per 4 KiB (only a hint; ignored where
	 * transparent huge pages are off).
	 */
	madvise(log->buf, bytes, MADV_HUGEPAGE);
	log->loaded = xk_calloc((log->nbb / LOG_CHUNK_BB) / 8 + 1, 1);
	if (!log->loaded)
		return xk_log_fail(log, -ENOMEM, "no memory for the log");
	err = log_analyse(log);
	if (!err && log->io_err)
		err = xk_log_fail(log, log->io_err, "cannot read the log: %s",
				  xk_strerror(log->io_err));
	return err;
}

/* Read chunk c of the log into place; returns 0 or a negative errno. */
static int
chunk_read(const struct xk_log *log, uint32_t c)
{
	uint64_t first = (uint64_t)c * LOG_CHUNK_BB;
	uint64_t n = log->nbb - first < LOG_CHUNK_BB ? log->nbb - first :
						       LOG_CHUNK_BB;

	return xk_dev_pread(xk_mount_log_dev(log->mp),
			    log->buf + first * XK_BBSIZE,
			    n * XK_BBSIZE,
			    (log->daddr + first) << XK_BBSHIFT);
}

static void
chunk_done(struct xk_log *log, uint32_t c, int err)
{
	/* Unreadable blocks stay zero: no record is found there. */
	if (err && !log->io_err)
		log->io_err = err;
	log->loaded[c / 8] |= (uint8_t)(1u << (c % 8));
}

void
xk_log_load_chunk(struct xk_log *log, uint32_t c)
{
	chunk_done(log, c, chunk_read(log, c));
}

struct load_job {
	const struct xk_log *log;
	uint32_t	*chunks;
	int		*errs;
};

static void
load_one(void *ctx, size_t i)
{
	struct load_job *j = ctx;

	j->errs[i] = chunk_read(j->log, j->chunks[i]);
}

/*
 * Make sure the n blocks from blk (around the end) are in memory, the
 * chunks read on up to threads threads.  The loaded bitmap is only
 * touched here, after the reads, so the readers share nothing.  Out of
 * memory for the job list, the chunks are read one by one instead.
 */
void
log_load_range(struct xk_log *log, uint32_t blk, uint32_t n,
	       unsigned int threads)
{
	uint32_t nchunks = (log->nbb + LOG_CHUNK_BB - 1) / LOG_CHUNK_BB;
	struct load_job j = { .log = log };
	uint32_t m = 0, first, count;

	if (!log->loaded || n == 0)
		return;
	if (n > log->nbb)
		n = log->nbb;
	first = (blk % log->nbb) / LOG_CHUNK_BB;
	count = ((blk % log->nbb) % LOG_CHUNK_BB + n + LOG_CHUNK_BB - 1) /
		LOG_CHUNK_BB + 1;
	if (count > nchunks)
		count = nchunks;
	j.chunks = malloc(count * sizeof(*j.chunks));
	j.errs = calloc(count, sizeof(*j.errs));
	for (uint32_t k = 0; k < count; k++) {
		uint32_t c = (first + k) % nchunks;

		if (log->loaded[c / 8] & (1u << (c % 8)))
			continue;
		if (!j.chunks || !j.errs)
			xk_log_load_chunk(log, c);
		else
			j.chunks[m++] = c;
	}
	if (m)
		log_par_for(threads, m, load_one, &j);
	for (uint32_t k = 0; k < m; k++)
		chunk_done(log, j.chunks[k], j.errs[k]);
	free(j.chunks);
	free(j.errs);
}

int
xk_log_open_mem(struct xk_mount *mp, uint8_t *buf, uint32_t nbb,
		struct xk_log **logp)
{
	struct xk_log *log = calloc(1, sizeof(*log));

	*logp = log;
	if (!log) {
		free(buf);
		return -ENOMEM;
	}
	log->mp = mp;
	log->threads = 1;
	log->buf = buf;
	log->nbb = nbb;
	log->st.size_bb = nbb;
	log->st.torn_blk = XK_LOG_NOBLK;
	log->st.last_rec_blk = XK_LOG_NOBLK;
	if (nbb < 64)
		return xk_log_fail(log, XK_ECORRUPT, "log of %u blocks is too "
				   "small", nbb);
	return log_analyse(log);
}

static int
log_analyse(struct xk_log *log)
{
	int err = find_head(log, &log->st.head_blk, &log->st.empty);

	if (err)
		return err;
	if (log->st.empty) {
		log->st.clean = 1;
		log->st.head_cycle = 1;
		return 0;
	}
	err = find_tail(log);
	/* A torn record found on the way is not an error of the log. */
	if (!err)
		log->err[0] = 0;
	return err;
}

void
xk_log_close(struct xk_log *log)
{
	if (!log)
		return;
	if (log->map_len)
		munmap(log->buf, log->map_len);
	else
		free(log->buf);
	free(log->loaded);
	free(log->rec);
	log_kept_free(log);
	free(log);
}

const struct xk_log_state *
xk_log_get_state(const struct xk_log *log)
{
	return &log->st;
}

const char *
xk_log_errmsg(const struct xk_log *log)
{
	return log ? log->err : "no memory";
}
