// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test tool: print the log of an image in the spirit of
 * `xfs_logprint -t`: the head and tail, each record, each committed
 * transaction with its items and what they target.  Usage:
 *   xk_logprint [-r] IMAGE
 * -r also prints one line per record.  Exits 0, 1 when the log is
 * damaged (the message on stderr), 2 on usage or open errors.
 *
 * For the damage tests, `xk_logprint -C BLK IMAGE` instead rewrites the
 * CRC of the record whose header is at log block BLK, so a test can
 * plant damage behind a valid checksum (the CRC rule is restated here,
 * independently of libfs: 328 header bytes with h_crc zero, the extended
 * headers the data needs, the data as stored).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/libfs.h>
#include <xfskit/logv.h>

struct pctx {
	int	records;
	unsigned long ntrans, nitems;
};

static int
print_rec(void *priv, const struct xk_log_rec *r)
{
	struct pctx *p = priv;

	if (p->records)
		printf("LOG REC AT LSN cycle %u block %u (0x%x, 0x%x) len %u "
		       "ops %u%s\n", r->cycle, r->blk, r->cycle, r->blk,
		       r->len, r->num_logops, r->unmount ? " UNMOUNT" : "");
	return 0;
}

static void
print_item(const struct xk_log_item *it)
{
	struct xk_log_target t;

	xk_log_item_target(it, &t);
	switch (it->type) {
	case XK_LI_BUF:
		printf("BUF: #regs:%u start blkno:0x%" PRIx64 " len:%u "
		       "flags:0x%x type:%s%s%s\n", it->nregions, t.daddr,
		       t.len_bb, t.flags, xk_log_blft_name(t.blft),
		       (t.flags & XK_BLF_CANCEL) ? " CANCEL" : "",
		       (t.flags & XK_BLF_INODE_BUF) ? " INODE_BUF" : "");
		break;
	case XK_LI_INODE:
		printf("INODE: #regs:%u ino:0x%" PRIx64 " flags:0x%x "
		       "blkno:0x%" PRIx64 " len:%u boffset:%u\n",
		       it->nregions, t.ino, t.flags, t.daddr, t.len_bb,
		       t.offset);
		break;
	case XK_LI_ICREATE:
		printf("ICR: ag:%u agbno:0x%x len:%u cnt:%u gen:0x%" PRIx64
		       "\n", t.agno, t.agbno, t.len_bb, t.count, t.id);
		break;
	default:
		printf("%s: #regs:%u id:0x%" PRIx64 " count:%u len:%u\n",
		       xk_log_item_name(it->type), it->nregions, t.id,
		       t.count, it->regions[0].len);
		break;
	}
}

static int
print_trans(void *priv, const struct xk_log_trans *tr)
{
	struct pctx *p = priv;

	p->ntrans++;
	p->nitems += tr->nitems;
	printf("TRANS: tid:0x%x #items:%u lsn:%u/%u commit:%u/%u\n",
	       tr->tid, tr->nitems, xk_lsn_cycle(tr->lsn),
	       xk_lsn_block(tr->lsn), xk_lsn_cycle(tr->commit_lsn),
	       xk_lsn_block(tr->commit_lsn));
	for (uint32_t i = 0; i < tr->nitems; i++) {
		printf("  ");
		print_item(&tr->items[i]);
	}
	return 0;
}

static int
fix_crc(struct xk_mount *mp, uint32_t blk)
{
	uint64_t off = (mp->g.log_daddr + blk) << XK_BBSHIFT;
	uint8_t hdr[512], *rec;
	uint32_t len, size, ver, hblks, crc;
	size_t n;
	int err;

	if (blk >= ((uint64_t)mp->g.logblocks << mp->g.blkbb_log) ||
	    xk_dev_pread(mp->dev, hdr, sizeof(hdr), off) ||
	    xk_get_be32(hdr) != XK_LOG_HEADER_MAGIC_NUM)
		return 1;
	ver = xk_get_be32(hdr + 8);
	len = xk_get_be32(hdr + 12);
	size = xk_get_be32(hdr + 320);
	hblks = xk_log_rec_hblks(ver, size);
	if (len > XK_LOG_MAX_RECORD_BSIZE || hblks > 8)
		return 1;
	n = (size_t)hblks * 512 + ((len + 511) & ~511u);
	rec = calloc(1, n);
	if (!rec || xk_dev_pread(mp->dev, rec, n, off)) {
		free(rec);
		return 1;
	}
	memset(rec + 32, 0, 4);
	crc = xk_crc32c_update(~0u, rec, XK_LOG_REC_SIZE);
	for (uint32_t i = 1; i < (len + 32767) / 32768 && i < hblks; i++)
		crc = xk_crc32c_update(crc, rec + i * 512, XK_LOG_REC_EXT_SIZE);
	crc = ~xk_crc32c_update(crc, rec + (size_t)hblks * 512, len);
	xk_put_le32(rec + 32, crc);
	err = xk_dev_pwrite(mp->dev, rec, 512, off);
	free(rec);
	return err ? 1 : 0;
}

int
main(int argc, char **argv)
{
	struct xk_log_walk_ops ops = { .rec = print_rec, .trans = print_trans };
	struct pctx p = { 0 };
	const struct xk_log_state *st;
	struct xk_mount *mp;
	struct xk_log *log;
	struct xk_fail f;
	char msg[256];
	long fixblk = -1;
	int c, err;

	while ((c = getopt(argc, argv, "rC:")) != -1) {
		if (c == 'C') {
			fixblk = strtol(optarg, NULL, 0);
		} else if (c == 'r') {
			p.records = 1;
		} else {
			fprintf(stderr, "usage: xk_logprint [-r] [-C BLK] "
				"IMAGE\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: xk_logprint [-r] IMAGE\n");
		return 2;
	}
	memset(&f, 0, sizeof(f));
	err = xk_mount_open(argv[optind], fixblk >= 0 ? 0 : XK_MOUNT_RDONLY,
			    &mp, &f);
	if (err) {
		xk_open_error_format(err, &f, msg, sizeof(msg));
		fprintf(stderr, "xk_logprint: %s\n", msg);
		return 2;
	}
	if (fixblk >= 0) {
		err = fix_crc(mp, (uint32_t)fixblk);
		if (err)
			fprintf(stderr, "xk_logprint: no record at block %ld\n",
				fixblk);
		/* The fixed record is written at close. */
		if (xk_mount_close(mp) && !err) {
			fprintf(stderr, "xk_logprint: writing block %ld "
				"failed\n", fixblk);
			err = 1;
		}
		return err;
	}
	err = xk_log_open(mp, &log);
	if (err) {
		fprintf(stderr, "xk_logprint: %s\n", xk_log_errmsg(log));
		xk_log_close(log);
		xk_mount_discard(mp);	/* read-only */
		return 1;
	}
	st = xk_log_get_state(log);
	printf("log tail: %u head: %u cycle: %u state: <%s>\n", st->tail_blk,
	       st->head_blk, st->head_cycle, st->clean ? "CLEAN" : "DIRTY");
	if (st->torn_blk != XK_LOG_NOBLK)
		printf("torn write at block %u: head moved back\n",
		       st->torn_blk);
	err = xk_log_walk(log, &ops, &p);
	if (err)
		fprintf(stderr, "xk_logprint: %s\n", xk_log_errmsg(log));
	else
		printf("transactions: %lu items: %lu\n", p.ntrans, p.nitems);
	xk_log_close(log);
	xk_mount_discard(mp);	/* read-only */
	return err ? 1 : 0;
}
